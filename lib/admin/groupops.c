/* Group administration on top of lib/accountset: see groupops.h. */
#include "groupops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "fileio.h"
#include "globalfile.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "util.h"

__attribute__((format(printf, 4, 5)))
static int fail(struct hs_accountset *s, enum hs_as_file f, int r, const char *fmt, ...)
{
	va_list ap;

	s->failed = f;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return r;
}

/* The db's own message when it has one (accountdb functions set it). */
static int db_fail(struct hs_accountset *s, enum hs_as_file f, int r)
{
	if (s->db[f].error[0])
		return fail(s, f, r, "%s", s->db[f].error);
	return fail(s, f, r, "cannot update %s: %s", s->db[f].path ? s->db[f].path :
		    hs_accountset_path(f), hs_strerror(r));
}

int hs_groupops_parse_gid(const char *s, gid_t *out)
{
	unsigned long v;
	int r = hs_parse_ulong(s, 0, HS_ID_MAX, &v);

	if (r == 0)
		*out = (gid_t)v;
	return r;
}

struct hs_accountdb *hs_groupops_gshadow(struct hs_accountset *s)
{
	struct hs_accountdb *gs = hs_accountset_db(s, HS_AS_GSHADOW);

	return gs && gs->present ? gs : NULL;
}

long hs_groupops_find(struct hs_accountset *s, const char *name)
{
	struct hs_accountdb *gr = hs_accountset_db(s, HS_AS_GROUP);

	return gr ? hs_accountdb_find(gr, name) : -1;
}

/* The group at line gi, or NULL with s->error set (no_group): an index
 * that names no line (past the end, or deleted) is the caller's mistake,
 * and every entry point taking one checks it here before it changes
 * anything.  A lazily read line that could not be had for want of memory
 * is no such mistake: the db's own message says so. */
static const struct hs_group *group_at(struct hs_accountset *s, size_t gi)
{
	struct hs_accountdb *gr = &s->db[HS_AS_GROUP];
	const union hs_dbrec *rec = hs_accountdb_get(gr, gi);

	if (!rec && gr->lost)
		fail(s, HS_AS_GROUP, gr->lost, "%s", gr->error);
	else if (!rec)
		fail(s, HS_AS_GROUP, -EINVAL, "no group at line %zu of %s", gi + 1,
		     gr->path ? gr->path : hs_accountset_path(HS_AS_GROUP));
	return rec ? &rec->gr : NULL;
}

/* What an entry point returns when group_at found no group. */
static int no_group(const struct hs_accountset *s)
{
	return s->db[HS_AS_GROUP].lost ? s->db[HS_AS_GROUP].lost : -EINVAL;
}

/* Line idx of file f becomes rec: 1 (changed) or an error. */
static int put(struct hs_accountset *s, enum hs_as_file f, size_t idx, const void *rec)
{
	int r = hs_accountdb_replace(&s->db[f], idx, rec);

	return r < 0 ? db_fail(s, f, r) : 1;
}

long hs_groupops_gshadow_line(struct hs_accountset *s, size_t gi)
{
	struct hs_accountdb *gs = hs_groupops_gshadow(s);
	const struct hs_group *g = group_at(s, gi);
	struct hs_gshadow line;
	struct hs_group ng;
	long si;
	int r;

	if (!g)
		return no_group(s);
	if (!gs)
		return -1;
	si = hs_accountdb_find(gs, g->name);
	if (si >= 0) {
		/* a line whose members drifted from /etc/group's (a hand
		 * edit; shadow-utils' groupadd -U and groupmod -U write only
		 * /etc/group) gets /etc/group's, the list glibc uses */
		struct hs_gshadow ns = hs_accountdb_get(gs, (size_t)si)->gs;

		if (strcmp(ns.members, g->members) == 0)
			return si;
		ns.members = g->members;
		r = hs_accountdb_replace(gs, (size_t)si, &ns);
		return r < 0 ? db_fail(s, HS_AS_GSHADOW, r) : si;
	}
	/* a password still in /etc/group moves to gshadow: only root reads
	 * gshadow, everybody reads group */
	line = (struct hs_gshadow){
		.name = g->name,
		.passwd = strcmp(g->passwd, "x") != 0 ? g->passwd : "!",
		.admins = "",
		.members = g->members,
	};
	si = hs_accountdb_append(gs, &line);
	if (si < 0)
		return db_fail(s, HS_AS_GSHADOW, (int)si);
	if (strcmp(g->passwd, "x") == 0)
		return si;
	ng = *g;
	ng.passwd = "x";
	r = put(s, HS_AS_GROUP, gi, &ng);
	return r < 0 ? r : si;
}

long hs_groupops_add(struct hs_accountset *s, const char *name, gid_t gid, const char *hash,
		     const char *members, bool *replaced_stale)
{
	struct hs_accountdb *gr = &s->db[HS_AS_GROUP];
	struct hs_accountdb *gs = hs_groupops_gshadow(s);
	struct hs_group g = {
		.name = name, .gid = gid, .members = (members ? members : ""),
	};
	long gi, si;
	int r;

	if (replaced_stale)
		*replaced_stale = false;
	if (hs_accountdb_find(gr, name) >= 0)
		return fail(s, HS_AS_GROUP, -EEXIST, "group '%s' already exists", name);
	g.passwd = (gs || !hash ? "x" : hash);
	if (gs) {
		struct hs_gshadow line = {
			.name = name, .passwd = (hash ? hash : "!"),
			.admins = "", .members = g.members,
		};

		si = hs_accountdb_find(gs, name);
		if (si >= 0) {
			r = hs_accountdb_replace(gs, (size_t)si, &line);
			if (r < 0)
				return db_fail(s, HS_AS_GSHADOW, r);
			if (replaced_stale)
				*replaced_stale = true;
		} else if ((si = hs_accountdb_append(gs, &line)) < 0) {
			return db_fail(s, HS_AS_GSHADOW, (int)si);
		}
	}
	gi = hs_accountdb_append(gr, &g);
	return gi < 0 ? db_fail(s, HS_AS_GROUP, (int)gi) : gi;
}

/* gi's gshadow line (made when missing) copied into *ns: its index, -1
 * without /etc/gshadow, or an error. */
static long gshadow_copy(struct hs_accountset *s, size_t gi, struct hs_gshadow *ns)
{
	long si = hs_groupops_gshadow_line(s, gi);

	if (si >= 0)
		*ns = hs_accountdb_get(&s->db[HS_AS_GSHADOW], (size_t)si)->gs;
	return si;
}

int hs_groupops_set_members(struct hs_accountset *s, size_t gi, const char *members)
{
	const struct hs_group *g = group_at(s, gi);
	struct hs_group ng;
	struct hs_gshadow ns;
	long si;
	int changed = 0;

	if (!g)
		return no_group(s);
	si = gshadow_copy(s, gi, &ns);
	if (si < -1)
		return (int)si;
	if (si >= 0 && strcmp(ns.members, members) != 0) {
		ns.members = members;
		changed = put(s, HS_AS_GSHADOW, (size_t)si, &ns);
		if (changed < 0)
			return changed;
	}
	g = group_at(s, gi);
	if (strcmp(g->members, members) == 0)
		return changed;
	ng = *g;
	ng.members = members;
	return put(s, HS_AS_GROUP, gi, &ng);
}

int hs_groupops_add_member(struct hs_accountset *s, size_t gi, const char *user)
{
	const struct hs_group *g = group_at(s, gi);
	_cleanup_free_ char *list = NULL;
	int r;

	if (!g)
		return no_group(s);
	r = hs_records_list_add(g->members, user, &list);
	if (r < 0)
		return fail(s, HS_AS_GROUP, r, "cannot add '%s' to the members of '%s': %s", user,
			    g->name, hs_strerror(r));
	return hs_groupops_set_members(s, gi, list);
}

int hs_groupops_remove_member(struct hs_accountset *s, size_t gi, const char *user,
			      bool admins_too)
{
	const struct hs_group *g = group_at(s, gi);
	_cleanup_free_ char *list = NULL, *admins = NULL;
	struct hs_gshadow ns;
	int r, changed;
	long si;

	if (!g)
		return no_group(s);
	r = hs_records_list_remove(g->members, user, &list);
	if (r < 0)
		return fail(s, HS_AS_GROUP, r, "cannot remove '%s' from the members of '%s': %s",
			    user, g->name, hs_strerror(r));
	changed = hs_groupops_set_members(s, gi, list);
	if (changed < 0 || !admins_too || !hs_groupops_gshadow(s))
		return changed;
	si = gshadow_copy(s, gi, &ns);
	if (si < 0)
		return (int)si;
	if (!hs_records_list_contains(ns.admins, user))
		return changed;
	r = hs_records_list_remove(ns.admins, user, &admins);
	if (r < 0)
		return fail(s, HS_AS_GSHADOW, r, "cannot update %s: %s",
			    s->db[HS_AS_GSHADOW].path, hs_strerror(r));
	ns.admins = admins;
	return put(s, HS_AS_GSHADOW, (size_t)si, &ns);
}

int hs_groupops_set_admins(struct hs_accountset *s, size_t gi, const char *admins)
{
	struct hs_accountdb *gs = hs_groupops_gshadow(s);
	struct hs_gshadow ns;
	long si;

	if (!group_at(s, gi))
		return no_group(s);
	if (!gs)
		return fail(s, HS_AS_GSHADOW, -ENOENT, "%s does not exist: group administrators "
			    "are kept there", hs_accountset_path(HS_AS_GSHADOW));
	si = gshadow_copy(s, gi, &ns);
	if (si < 0)
		return (int)si;
	if (strcmp(ns.admins, admins) == 0)
		return 0;
	ns.admins = admins;
	return put(s, HS_AS_GSHADOW, (size_t)si, &ns);
}

int hs_groupops_set_password(struct hs_accountset *s, size_t gi, const char *hash)
{
	struct hs_group ng;
	struct hs_gshadow ns;
	long si;

	if (!group_at(s, gi))
		return no_group(s);
	si = gshadow_copy(s, gi, &ns);
	if (si < -1)
		return (int)si;
	if (si >= 0) {
		/* gshadow_line moved any password out of /etc/group already */
		ns.passwd = hash;
		return put(s, HS_AS_GSHADOW, (size_t)si, &ns);
	}
	ng = *group_at(s, gi);
	ng.passwd = hash;
	return put(s, HS_AS_GROUP, gi, &ng);
}

int hs_groupops_rename(struct hs_accountset *s, size_t gi, const char *new_name,
		       bool *replaced_stale)
{
	struct hs_accountdb *gr = &s->db[HS_AS_GROUP];
	struct hs_accountdb *gs = hs_groupops_gshadow(s);
	struct hs_group ng;
	long si = -1;
	int r;

	if (replaced_stale)
		*replaced_stale = false;
	if (!group_at(s, gi))
		return no_group(s);
	if (hs_accountdb_find(gr, new_name) >= 0)
		return fail(s, HS_AS_GROUP, -EEXIST, "group '%s' already exists", new_name);
	if (gs) {
		long stale = hs_accountdb_find(gs, new_name);
		struct hs_gshadow ns;

		if (stale >= 0) {
			r = hs_accountdb_delete(gs, (size_t)stale);
			if (r < 0)
				return db_fail(s, HS_AS_GSHADOW, r);
			if (replaced_stale)
				*replaced_stale = true;
		}
		si = gshadow_copy(s, gi, &ns);
		if (si < 0)
			return (int)si;
		ns.name = new_name;
		r = put(s, HS_AS_GSHADOW, (size_t)si, &ns);
		if (r < 0)
			return r;
	}
	ng = *group_at(s, gi);
	ng.name = new_name;
	return put(s, HS_AS_GROUP, gi, &ng);
}

int hs_groupops_set_gid(struct hs_accountset *s, size_t gi, gid_t gid)
{
	struct hs_group ng;
	long si;

	if (!group_at(s, gi))
		return no_group(s);
	si = hs_groupops_gshadow_line(s, gi);
	if (si < -1)
		return (int)si;
	ng = *group_at(s, gi);
	if (ng.gid == gid)
		return 0;
	ng.gid = gid;
	return put(s, HS_AS_GROUP, gi, &ng);
}

int hs_groupops_delete(struct hs_accountset *s, size_t gi)
{
	struct hs_accountdb *gs = hs_groupops_gshadow(s);
	const struct hs_group *g = group_at(s, gi);
	int r;

	if (!g)
		return no_group(s);
	if (gs) {
		long si = hs_accountdb_find(gs, g->name);

		if (si >= 0 && (r = hs_accountdb_delete(gs, (size_t)si)) < 0)
			return db_fail(s, HS_AS_GSHADOW, r);
	}
	r = hs_accountdb_delete(&s->db[HS_AS_GROUP], gi);
	return r < 0 ? db_fail(s, HS_AS_GROUP, r) : 1;
}

long hs_groupops_primary_user(struct hs_accountset *s, gid_t gid)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);

	if (!pw)
		return -1;
	for (size_t i = 0; i < pw->n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(pw, i);

		if (rec && rec->pw.gid == gid)
			return (long)i;
	}
	return -1;
}

long hs_groupops_move_primary(struct hs_accountset *s, gid_t old_gid, gid_t new_gid)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	long moved = 0;

	if (!pw)
		return fail(s, HS_AS_PASSWD, -EINVAL, "%s is not loaded",
			    hs_accountset_path(HS_AS_PASSWD));
	for (size_t i = 0; i < pw->n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(pw, i);
		struct hs_passwd np;
		int r;

		if (!rec || rec->pw.gid != old_gid)
			continue;
		np = rec->pw;
		np.gid = new_gid;
		r = hs_accountdb_replace(pw, i, &np);
		if (r < 0)
			return db_fail(s, HS_AS_PASSWD, r);
		moved++;
	}
	return moved;
}

bool hs_groupops_user_exists(struct hs_accountset *s, const char *user, bool use_nss)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	_cleanup_free_ char *buf = NULL;
	struct passwd p;

	if (!hs_names_user_valid(user))
		return false;
	if (pw && hs_accountdb_find(pw, user) >= 0)
		return true;
	return use_nss && hs_account_getpwnam(user, &p, &buf) == 0;
}

int hs_groupops_user_list(struct hs_accountset *s, const char *arg, bool use_nss, char **out,
			  char *bad, size_t badsize)
{
	_cleanup_free_ char *copy = strdup(arg);
	_cleanup_free_ char *list = strdup("");
	char *cur, *next;
	int r = 0;

	*out = NULL;
	if (badsize)
		bad[0] = '\0';
	if (!copy || !list)
		return -ENOMEM;
	/* an empty arg is the empty list, not one empty name */
	for (cur = arg[0] ? copy : NULL; cur; cur = next) {
		char *grown = NULL;

		next = strchr(cur, ',');
		if (next)
			*next++ = '\0';
		if (!hs_names_user_valid(cur))
			r = -HS_E_NAME;
		else if (!hs_groupops_user_exists(s, cur, use_nss))
			r = -ENOENT;
		else if (!hs_records_list_contains(list, cur))
			r = hs_records_list_add(list, cur, &grown);
		if (r < 0) {
			if (badsize)
				snprintf(bad, badsize, "%s", cur);
			return r;
		}
		if (grown) {
			free(list);
			list = grown;
		}
	}
	*out = TAKE_PTR(list);
	return 0;
}

bool hs_groupops_layout_group(const char *root, const char *name)
{
	char path[HS_PATHBUF_ETC];
	struct stat st;

	if (strcmp(name, HS_GROUP_TREE) != 0 && strcmp(name, HS_GROUP_AUTH) != 0)
		return false;
	snprintf(path, sizeof(path), "%s%s", root ? root : "", HS_TREE_DIR);
	return lstat(path, &st) == 0;
}

int hs_groupops_add_override(char **buf, size_t *len, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen, vlen;
	char *p;

	if (!eq || eq == arg || strpbrk(arg, " \t\n\r#\""))
		return -EINVAL;
	klen = (size_t)(eq - arg);
	vlen = strlen(eq + 1);
	p = realloc(*buf, *len + klen + vlen + 3);
	if (!p)
		return -ENOMEM;
	*buf = p;
	/* "KEY VALUE\n"; the NUL after it is not counted in *len */
	snprintf(p + *len, klen + vlen + 3, "%.*s %s\n", (int)klen, arg, eq + 1);
	*len += klen + vlen + 2;
	return 0;
}

int hs_groupops_logindefs(const char *root, const char *overrides, size_t olen,
			  hs_config_warn_fn warn, void *ctx, struct hs_config **out)
{
	_cleanup_free_ char *data = NULL;
	char path[HS_PATHBUF_ETC], *grown;
	size_t len = 0;
	int r;

	snprintf(path, sizeof(path), "%s%s", root ? root : "", HS_ETC_LOGIN_DEFS);
	r = hs_globalfile_read(path, &data, &len);
	if (r < 0 && r != -ENOENT)
		return r;
	if (olen > 0) {
		/* -K's lines after the file's, so that they win; without
		 * them the file is parsed where it was read, not copied */
		grown = realloc(data, len + olen + 2);
		if (!grown)
			return -ENOMEM;
		data = grown;
		data[len++] = '\n';
		memcpy(data + len, overrides, olen);
		len += olen;
	}
	return hs_config_logindefs_parse(data, len, path, warn, ctx, out);
}

int hs_groupops_finish(struct hs_accountset *s, int r, struct hs_err *err, const char *what,
		       const char *fmt, ...)
{
	sigset_t saved;
	va_list ap;

	if (r >= 0) {
		hs_privs_block_signals(&saved);
		r = hs_accountset_commit(s);
		hs_privs_restore_signals(&saved);
		if (r < 0 && what)
			syslog(LOG_ERR, "%s failed: %s", what, s->error);
		else if (r < 0)
			syslog(LOG_ERR, "%s", s->error);
	}
	if (r < 0)
		hs_err_set(err, r, "%s", s->error);
	if (r >= 0 && fmt) {
		va_start(ap, fmt);
		vsyslog(LOG_INFO, fmt, ap);
		va_end(ap);
	}
	hs_accountset_close(s);
	return r < 0 ? -1 : 0;
}
