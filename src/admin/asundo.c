/* Undo for one accountset transaction: see asundo.h. */
#include "asundo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fileio.h"
#include "globalfile.h"
#include "util.h"

int hs_asundo_save(struct hs_asundo *u, struct hs_accountset *s)
{
	for (int k = 0; k < HS_AS_COUNT; k++) {
		struct hs_accountdb *db = hs_accountset_db(s, (enum hs_as_file)k);
		int r;

		if (!db || !db->dirty || u->saved[k])
			continue;
		r = hs_globalfile_read(db->path, &u->data[k], &u->len[k]);
		if (r == -ENOENT) {
			u->existed[k] = false;
			u->data[k] = NULL;
			u->len[k] = 0;
		} else if (r < 0) {
			s->failed = (enum hs_as_file)k;
			snprintf(s->error, sizeof(s->error), "cannot read %s: %s", db->path,
				 hs_strerror(r));
			return r;
		} else {
			u->existed[k] = true;
		}
		u->saved[k] = true;
	}
	return 0;
}

/* Does the file still hold what was saved?  1 yes, 0 no, or -errno. */
static int unchanged(const struct hs_asundo *u, const struct hs_accountdb *db, int k)
{
	_cleanup_free_ char *now = NULL;
	size_t now_len = 0;
	int r = hs_globalfile_read(db->path, &now, &now_len);

	if (r == -ENOENT)
		return !u->existed[k];
	if (r < 0)
		return r;
	r = u->existed[k] && now_len == u->len[k] &&
	    memcmp(now, u->data[k] ? u->data[k] : "", now_len) == 0;
	hs_wipe(now, now_len);
	return r;
}

int hs_asundo_restore(struct hs_asundo *u, struct hs_accountset *s)
{
	struct hs_global_file files[HS_AS_COUNT];
	struct iovec iov[HS_AS_COUNT];
	enum hs_as_file which[HS_AS_COUNT];
	size_t n = 0;
	int first = 0;

	for (int k = 0; k < HS_AS_COUNT; k++) {
		struct hs_accountdb *db = hs_accountset_db(s, (enum hs_as_file)k);
		int r;

		if (!db || !u->saved[k])
			continue;
		r = unchanged(u, db, k);
		if (r == 0 && !u->existed[k]) {
			/* a file the commit created: removing it is no write */
			r = unlinkat(AT_FDCWD, db->path, 0) < 0 && errno != ENOENT ? -errno : 1;
		}
		if (r == 0) {
			/* back through the one writer, all files in one transaction */
			iov[n] = (struct iovec){ .iov_base = u->data[k] ? u->data[k] : "",
						 .iov_len = u->len[k] };
			files[n] = (struct hs_global_file){
				.path = db->path, .iov = &iov[n], .n_iov = 1,
				.uid = db->default_uid, .gid = db->default_gid,
				.mode = db->default_mode,
			};
			which[n++] = (enum hs_as_file)k;
		}
		if (r < 0 && first == 0) {
			first = r;
			s->failed = (enum hs_as_file)k;
			snprintf(s->error, sizeof(s->error), "cannot restore %s: %s", db->path,
				 hs_strerror(r));
		}
	}
	if (n) {
		char err[sizeof(s->error)];
		int r = hs_globalfile_commit(files, n, err, sizeof(err));

		if (r < 0 && first == 0) {
			first = r;
			s->failed = which[0];
			snprintf(s->error, sizeof(s->error), "%s", err);
		}
	}
	return first;
}

void hs_asundo_free(struct hs_asundo *u)
{
	for (int k = 0; k < HS_AS_COUNT; k++) {
		if (u->data[k]) {
			hs_wipe(u->data[k], u->len[k]);
			free(u->data[k]);
		}
		u->data[k] = NULL;
		u->len[k] = 0;
		u->saved[k] = u->existed[k] = false;
	}
}
