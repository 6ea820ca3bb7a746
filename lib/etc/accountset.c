/* One transaction over the global account files: see accountset.h. */
#include "accountset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "globalfile.h"
#include "layout.h"
#include "strbuf.h"
#include "util.h"

static const struct {
	const char *path;
	enum hs_db_kind kind;
	const char *cache;
} as_files[HS_AS_COUNT] = {
	[HS_AS_PASSWD]  = { HS_ETC_PASSWD,  HS_DB_PASSWD,  "passwd" },
	[HS_AS_SHADOW]  = { HS_ETC_SHADOW,  HS_DB_SHADOW,  "shadow" },
	[HS_AS_GROUP]   = { HS_ETC_GROUP,   HS_DB_GROUP,   "group" },
	[HS_AS_GSHADOW] = { HS_ETC_GSHADOW, HS_DB_GSHADOW, NULL },
	[HS_AS_SUBUID]  = { HS_ETC_SUBUID,  HS_DB_SUBID,   NULL },
	[HS_AS_SUBGID]  = { HS_ETC_SUBGID,  HS_DB_SUBID,   NULL },
};

/* Referenced files before the files that refer to them: accountset.h. */
static const enum hs_as_file write_order[HS_AS_COUNT] = {
	HS_AS_SUBUID, HS_AS_SUBGID, HS_AS_GSHADOW, HS_AS_GROUP, HS_AS_SHADOW, HS_AS_PASSWD,
};

/* "" in production; a test directory under hs_accountset_use_root. */
static char as_root[256];

void hs_accountset_use_root(const char *dir)
{
	snprintf(as_root, sizeof(as_root), "%s", dir ? dir : "");
}

static void set_paths(struct hs_accountset *s)
{
	for (int k = 0; k < HS_AS_COUNT; k++)
		snprintf(s->path[k], sizeof(s->path[k]), "%s%s", as_root, as_files[k].path);
	snprintf(s->pwd_lock, sizeof(s->pwd_lock), "%s%s", as_root, HS_ETC_PWD_LOCK);
}

const char *hs_accountset_path(enum hs_as_file f)
{
	return f < HS_AS_COUNT ? as_files[f].path : NULL;
}

static void free_dbs(struct hs_accountset *s)
{
	for (int k = 0; k < HS_AS_COUNT; k++) {
		hs_accountdb_free(&s->db[k]);
		s->used[k] = false;
	}
}

int hs_accountset_open(struct hs_accountset *s, unsigned files, unsigned load_flags)
{
	const char *paths[HS_AS_COUNT];
	const char *failed = NULL;
	char why[64];
	size_t n = 0;
	int r;

	*s = (struct hs_accountset)HS_ACCOUNTSET_INIT;
	set_paths(s);
	/* enum order is shadow-utils' lock order */
	for (int k = 0; k < HS_AS_COUNT; k++) {
		struct stat st;

		if (!(files & HS_AS_BIT(k)))
			continue;
		if ((HS_AS_OPTIONAL_FILES & HS_AS_BIT(k)) &&
		    lstat(s->path[k], &st) < 0 && errno == ENOENT)
			continue;
		s->used[k] = true;
		paths[n++] = s->path[k];
	}
	r = hs_globalfile_lock(&s->locks, s->pwd_lock, paths, n, HS_LOCK_TIMEOUT_MS, &failed);
	if (r < 0) {
		s->failed = HS_AS_PASSWD;
		s->lock_failed = true;
		for (int k = 0; k < HS_AS_COUNT; k++)
			if (failed && s->used[k] && strncmp(failed, s->path[k], strlen(s->path[k])) == 0)
				s->failed = (enum hs_as_file)k;
		snprintf(s->error, sizeof(s->error), "cannot lock %s: %s",
			 failed ? failed : s->pwd_lock,
			 hs_lock_strerror(r, HS_LOCK_TIMEOUT_MS, why, sizeof(why)));
		memset(s->used, 0, sizeof(s->used));
		return r;
	}
	/* every file through the directory the locks were taken in */
	for (int k = 0; k < HS_AS_COUNT; k++) {
		unsigned flags = load_flags;
		bool in_lock_dir = hs_globalfile_same_dir(s->path[k], s->pwd_lock);

		if (!s->used[k])
			continue;
		/* an optional file removed since we looked: an empty file */
		if (HS_AS_OPTIONAL_FILES & HS_AS_BIT(k))
			flags |= HS_DB_MISSING_OK;
		r = hs_accountdb_load_at(&s->db[k], as_files[k].kind,
					 in_lock_dir ? s->locks.etc_fd : 0, s->path[k], flags);
		if (r < 0) {
			s->failed = (enum hs_as_file)k;
			snprintf(s->error, sizeof(s->error), "%s", s->db[k].error);
			free_dbs(s);
			hs_globalfile_unlock(&s->locks);
			return r;
		}
	}
	return 0;
}

struct hs_accountdb *hs_accountset_db(struct hs_accountset *s, enum hs_as_file f)
{
	if (f >= HS_AS_COUNT || !s->used[f])
		return NULL;
	return &s->db[f];
}

int hs_accountset_commit(struct hs_accountset *s)
{
	struct hs_accountdb *dbs[HS_AS_COUNT];
	enum hs_as_file which[HS_AS_COUNT];
	size_t n = 0, failed = 0;
	int r;

	for (size_t i = 0; i < HS_ARRAY_SIZE(write_order); i++) {
		enum hs_as_file k = write_order[i];

		if (s->used[k] && s->db[k].dirty) {
			which[n] = k;
			dbs[n++] = &s->db[k];
		}
	}
	if (n == 0)
		return 0;
	/* a lookup in any file of the set that ran out of memory may have
	 * answered "none" wrongly, and the change may rest on it */
	for (size_t k = 0; k < HS_AS_COUNT; k++)
		if (s->used[k] && s->db[k].lost) {
			snprintf(s->error, sizeof(s->error), "cannot read %s: %s", s->path[k],
				 hs_strerror(s->db[k].lost));
			s->failed = (enum hs_as_file)k;
			return s->db[k].lost;
		}
	s->committed = true;
	/* one transaction (lib/etc/txn.h): a crash between two renames can
	 * no longer leave a group without its user */
	r = hs_accountdb_write_set(dbs, n, &failed);
	if (r < 0) {
		/* a failure of no one file (the journal, syncing /etc) is the
		 * password file's, as shadow-utils' exit codes have no other */
		s->failed = failed < n ? which[failed] : HS_AS_PASSWD;
		snprintf(s->error, sizeof(s->error), "%s", dbs[failed < n ? failed : 0]->error);
	}
	return r;
}

static void flush_written(struct hs_accountset *s)
{
	if (!s->committed)
		return;
	for (int k = 0; k < HS_AS_COUNT; k++) {
		const char *cache = as_files[k].cache;

		/* nscd keeps no gshadow cache; the group cache covers both */
		if (k == HS_AS_GSHADOW && !s->used[HS_AS_GROUP])
			cache = "group";
		if (s->used[k] && cache)
			hs_globalfile_flush_caches(cache);
	}
	s->committed = false;
}

void hs_accountset_unlock(struct hs_accountset *s)
{
	flush_written(s);
	hs_globalfile_unlock(&s->locks);
	/* the dbs borrowed the locks' directory fd, now closed: a number
	 * the next open may reuse must never be written through */
	for (int k = 0; k < HS_AS_COUNT; k++)
		s->db[k].dir_fd = 0;
}

void hs_accountset_close(struct hs_accountset *s)
{
	hs_accountset_unlock(s);
	free_dbs(s);
}

/* ---- group membership ---- */

static int set_error(struct hs_accountset *s, enum hs_as_file f, int r)
{
	s->failed = f;
	if (s->db[f].error[0])
		snprintf(s->error, sizeof(s->error), "%s", s->db[f].error);
	else
		snprintf(s->error, sizeof(s->error), "cannot update %s: %s", s->path[f],
			 hs_strerror(r));
	return r;
}

/* A copy of list with every old replaced by new in place (a list that
 * already holds new loses the duplicate), in *out; 1 when old was there,
 * 0 (and *out NULL) when not. */
static int list_rename(const char *list, const char *old_name, const char *new_name,
                       char **out)
{
	_cleanup_strbuf_ struct hs_buf b = { 0 };
	const char *cur = list, *elem;
	size_t len, new_len = strlen(new_name), old_len = strlen(old_name);
	bool found = false, have_new = false;

	*out = NULL;
	if (!list || !hs_records_list_contains(list, old_name))
		return 0;
	while ((len = hs_records_list_next(&cur, &elem)) > 0) {
		bool is_old = len == old_len && memcmp(elem, old_name, len) == 0;
		bool is_new = len == new_len && memcmp(elem, new_name, len) == 0;

		if (is_old || is_new) {
			found |= is_old;
			if (have_new)
				continue;
			have_new = true;
			elem = new_name;
			len = new_len;
		}
		if ((b.len > 0 && hs_strbuf_append(&b, ",", 1) < 0) || hs_strbuf_append(&b, elem, len) < 0)
			return -ENOMEM;
	}
	if (hs_strbuf_append(&b, "", 1) < 0)
		return -ENOMEM;
	*out = TAKE_PTR(b.data);
	return found ? 1 : 0;
}

enum list_op { LIST_ADD, LIST_REMOVE, LIST_RENAME };

/* Apply op to *field: 1 and a new malloc'd list in *owned when it
 * changed, 0 when not. */
static int list_apply(enum list_op op, const char **field, const char *name, const char *new_name,
                      char **owned)
{
	int r = 0;

	*owned = NULL;
	switch (op) {
	case LIST_ADD:
		if (hs_records_list_contains(*field, name))
			return 0;
		r = hs_records_list_add(*field, name, owned);
		break;
	case LIST_REMOVE:
		if (!hs_records_list_contains(*field, name))
			return 0;
		r = hs_records_list_remove(*field, name, owned);
		break;
	case LIST_RENAME:
		r = list_rename(*field, name, new_name, owned);
		if (r <= 0)
			return r;
		break;
	}
	if (r < 0)
		return r;
	*field = *owned;
	return 1;
}

/* op on the member list of line i of the group or the gshadow db f, and
 * with admins_too on its admin list: 1 when the line changed, 0 when not. */
static int list_line_apply(struct hs_accountset *s, enum hs_as_file f, size_t i, enum list_op op,
                           const char *name, const char *new_name, bool admins_too)
{
	const union hs_dbrec *rec = hs_accountdb_get(&s->db[f], i);
	_cleanup_free_ char *members = NULL, *admins = NULL;
	union hs_dbrec g;
	int rm, ra = 0, r;

	if (!rec)
		return 0;
	g = *rec;
	rm = list_apply(op, f == HS_AS_GROUP ? &g.gr.members : &g.gs.members, name, new_name,
			&members);
	if (rm >= 0 && admins_too)
		ra = list_apply(op, &g.gs.admins, name, new_name, &admins);
	if (rm < 0 || ra < 0)
		return set_error(s, f, rm < 0 ? rm : ra);
	if (rm == 0 && ra == 0)
		return 0;
	r = hs_accountdb_replace(&s->db[f], i, &g);
	return r < 0 ? set_error(s, f, r) : 1;
}

/* op on the member list of group gi and of its gshadow line. */
static int member_op(struct hs_accountset *s, size_t gi, enum list_op op, const char *user)
{
	const union hs_dbrec *rec;
	int rg, rs = 0;

	if (!s->used[HS_AS_GROUP] || !(rec = hs_accountdb_get(&s->db[HS_AS_GROUP], gi)))
		return 0;
	if (s->used[HS_AS_GSHADOW]) {
		long si = hs_accountdb_find(&s->db[HS_AS_GSHADOW], rec->gr.name);

		if (si >= 0) {
			rs = list_line_apply(s, HS_AS_GSHADOW, (size_t)si, op, user, NULL, false);
			if (rs < 0)
				return rs;
		}
	}
	/* rec may move once the group db changes: it is not used below */
	rg = list_line_apply(s, HS_AS_GROUP, gi, op, user, NULL, false);
	if (rg < 0)
		return rg;
	return rg || rs;
}

int hs_accountset_add_member(struct hs_accountset *s, size_t gi, const char *user)
{
	return member_op(s, gi, LIST_ADD, user);
}

int hs_accountset_remove_member(struct hs_accountset *s, size_t gi, const char *user)
{
	return member_op(s, gi, LIST_REMOVE, user);
}

/* Does line i (found holding name's bytes) hold them past its own name,
 * where a member list may name the user?  Else it is not even parsed
 * (with HS_DB_LAZY, userdel then parses a handful of lines, not all). */
static bool may_name(const struct hs_accountdb *db, size_t i, const char *name, size_t nlen)
{
	size_t len, flen;
	const char *t = hs_accountdb_text(db, i, &len);
	const char *f = t ? hs_accountdb_field(db, i, 1, &flen) : NULL;

	return f && memmem(f, len - (size_t)(f - t), name, nlen) != NULL;
}

/* op on every group and gshadow line that may name the user: one that
 * holds the name's bytes past its own name (the lines apply the op to the
 * member lists, and change nothing when they do not name the user). */
static int every_list_op(struct hs_accountset *s, enum list_op op, const char *name,
                         const char *new_name)
{
	static const enum hs_as_file lists[] = { HS_AS_GROUP, HS_AS_GSHADOW };
	size_t nlen = strlen(name);
	int changed = 0, r;

	for (size_t k = 0; k < HS_ARRAY_SIZE(lists); k++) {
		const struct hs_accountdb *db = &s->db[lists[k]];

		if (!s->used[lists[k]])
			continue;
		for (long i = 0; (i = hs_accountdb_find_text(db, (size_t)i, name, nlen)) >= 0; i++) {
			if (!may_name(db, (size_t)i, name, nlen))
				continue;
			r = list_line_apply(s, lists[k], (size_t)i, op, name, new_name,
					    lists[k] == HS_AS_GSHADOW);
			if (r < 0)
				return r;
			changed |= r;
		}
	}
	return changed;
}

int hs_accountset_forget_user(struct hs_accountset *s, const char *user)
{
	return every_list_op(s, LIST_REMOVE, user, NULL);
}

int hs_accountset_rename_user(struct hs_accountset *s, const char *old_name,
                              const char *new_name)
{
	return every_list_op(s, LIST_RENAME, old_name, new_name);
}
