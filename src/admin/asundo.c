/* Undo for one accountset transaction: see asundo.h. */
#include "asundo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
		r = hs_global_read(db->path, &u->data[k], &u->len[k]);
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

/* The file's directory, opened, and its last component in *base. */
static int open_dir_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL;
	int fd;

	if (!slash)
		return -EINVAL;
	*base = slash + 1;
	dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int restore_one(struct hs_asundo *u, struct hs_accountdb *db, int k)
{
	_cleanup_free_ char *now = NULL;
	_cleanup_close_ int dirfd = -1;
	const char *base;
	size_t now_len = 0;
	struct stat st;
	int r;

	r = hs_global_read(db->path, &now, &now_len);
	if (r == -ENOENT) {
		if (!u->existed[k])
			return 0;
	} else if (r < 0) {
		return r;
	} else {
		bool same = u->existed[k] && now_len == u->len[k] &&
			    memcmp(now, u->data[k] ? u->data[k] : "", now_len) == 0;

		hs_wipe(now, now_len);
		if (same)
			return 0;
	}
	dirfd = open_dir_of(db->path, &base);
	if (dirfd < 0)
		return dirfd;
	if (!u->existed[k])
		return unlinkat(dirfd, base, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		st.st_uid = db->default_uid;
		st.st_gid = db->default_gid;
		st.st_mode = db->default_mode;
	}
	return hs_replace_file_at(dirfd, base, u->data[k] ? u->data[k] : "", u->len[k],
				  st.st_uid, st.st_gid, st.st_mode & 07777);
}

int hs_asundo_restore(struct hs_asundo *u, struct hs_accountset *s)
{
	int first = 0;

	for (int k = 0; k < HS_AS_COUNT; k++) {
		struct hs_accountdb *db = hs_accountset_db(s, (enum hs_as_file)k);
		int r;

		if (!db || !u->saved[k])
			continue;
		r = restore_one(u, db, k);
		if (r < 0 && first == 0) {
			first = r;
			s->failed = (enum hs_as_file)k;
			snprintf(s->error, sizeof(s->error), "cannot restore %s: %s", db->path,
				 hs_strerror(r));
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
