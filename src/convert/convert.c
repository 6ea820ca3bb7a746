/* pwconv / pwunconv: classic files <-> the per-user tree.
 *
 * The order of the steps is what makes a crash harmless (see convert.h):
 *
 * pwconv   1. lock, validate every input file completely (in memory)
 *          2. build /etc/.hardened-shadow.XXXXXX (root:root 0700 while
 *             incomplete) holding every user and the pwconv marker
 *          3. create the two groups if missing (/etc/group, /etc/gshadow,
 *             one transaction)
 *          4. give the temp tree its final owner and mode, rename it to
 *             /etc/hardened-shadow                    <- tree + marker
 *          5. add the proxy to /etc/shells and rewrite /etc/passwd (proxy
 *             shells, "x"): one transaction
 *          6. remove /etc/shadow- then /etc/shadow (shadow source only)
 *          7. remove the marker                      <- converted
 *    Until step 4 readers see the old system; from 4 to 7 both the old
 *    hashes (/etc/shadow, still used by pam_unix) and the tree (used by the
 *    proxy) are complete, so logins keep working.  A later run rolls the
 *    steps back (marker + /etc/shadow present, or a tcb source) or finishes
 *    step 7 (marker, /etc/shadow gone).
 *
 * pwunconv 1. lock, read the whole tree and validate it
 *          2. put the pwunconv marker in the tree
 *          3. write /etc/shadow, restore the real shells in /etc/passwd
 *             and drop the proxy from /etc/shells: one transaction
 *          4. take the tree away (root:root 0700, rename to a temp name)
 *             and remove it
 *    A crash between 2 and 4 leaves the marker; the next pwunconv redoes
 *    everything from the tree, which stays authoritative until step 4.
 *
 * The transactions go through the one writer of the global files
 * (lib/etc/globalfile.h): a crash inside one leaves every file it names
 * old or every file new, finished by whichever tool locks next.  The
 * marker is what the journal cannot say: which direction a conversion of
 * the tree, a directory, was going (docs/decisions.md, "Crash recovery").
 *
 * Both hold every catchable signal back from the moment they hold the locks
 * until they have released them: a Ctrl-C takes effect once the run is
 * complete or undone and reported, so only SIGKILL leaves the states above
 * (and a temporary tree or stale locks, which the next run removes). */
#include "convert.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "accountdb.h"
#include "config.h"
#include "fileio.h"
#include "walk.h"
#include "globalfile.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "selabel.h"
#include "shells.h"
#include "userdir.h"
#include "util.h"
#include "txn.h"

#define ETC_DIR          "/etc"
#define TREE_NAME        "hardened-shadow"  /* HS_TREE_DIR inside ETC_DIR */
#define SHADOW_NAME      "shadow"
#define SHADOW_BACKUP    "shadow-"
#define TCB_SHADOW       "shadow"
#define SOURCE_SHADOW    "shadow\n"
#define SOURCE_TCB       "tcb\n"
#define USERBUF_SIZE     (HS_USERFILE_MAX + 2)

/* ---------------------------------------------------------------- */
/* /etc/passwd, through lib/etc/accountdb.c */

/* One passwd entry.  pw is the record as loaded: its strings live in the
 * db until pwdb_free, and stay the original values even after pwdb_render
 * rewrote the line (build_tree needs the real shells and hashes). */
struct pw_ent {
	struct hs_passwd pw;
	size_t line;        /* index in db.lines */
	long sp;            /* index into the shadow records, -1 = none */
	char *new_shell;    /* pwunconv: the restored shell (malloc'd) */
	bool proxy;         /* pwconv: gets the proxy as login shell */
};

struct pwdb {
	struct hs_accountdb db;
	struct pw_ent *ents;    /* the entries in file order */
	size_t n;
	size_t n_before_nis;    /* entries before the first NIS compat line */
	long *ent_at;           /* db line index -> entry index, -1 = none */
};

static void pwdb_free(struct pwdb *db)
{
	for (size_t i = 0; i < db->n; i++)
		free(db->ents[i].new_shell);
	free(db->ents);
	free(db->ent_at);
	hs_accountdb_free(&db->db);
	memset(db, 0, sizeof(*db));
}

static int pwdb_load(struct pwdb *db)
{
	int r = hs_accountdb_load(&db->db, HS_DB_PASSWD, HS_ETC_PASSWD, 0);

	if (r < 0) {
		hs_warn("%s", db->db.error);
		return r;
	}
	db->ents = calloc(db->db.n_entries ? db->db.n_entries : 1, sizeof(*db->ents));
	db->ent_at = calloc(db->db.n_lines ? db->db.n_lines : 1, sizeof(*db->ent_at));
	if (!db->ents || !db->ent_at) {
		hs_warn("cannot read %s: %s", HS_ETC_PASSWD, hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	db->n_before_nis = SIZE_MAX;
	for (size_t i = 0; i < db->db.n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(&db->db, i);
		struct pw_ent *e = &db->ents[db->n];

		db->ent_at[i] = -1;
		if (!rec && db->n_before_nis == SIZE_MAX &&
		    hs_records_nis_line(db->db.lines[i].text, db->db.lines[i].len))
			db->n_before_nis = db->n;
		if (!rec)
			continue;  /* blank or NIS line, kept verbatim */
		e->pw = rec->pw;
		e->line = i;
		e->sp = -1;
		db->ent_at[i] = (long)db->n++;
	}
	return 0;
}

/* The entry of a user name, or NULL. */
static struct pw_ent *pwdb_find(struct pwdb *db, const char *name)
{
	long line = hs_accountdb_find(&db->db, name);

	return line < 0 || db->ent_at[line] < 0 ? NULL : &db->ents[db->ent_at[line]];
}

/* New /etc/passwd text: every entry reformatted with pw_passwd "x" and the
 * chosen shell (to_tree), or with the restored shell (!to_tree); other
 * lines verbatim.  *changed tells whether anything differs. */
static int pwdb_render(struct pwdb *db, bool to_tree, struct hs_buf *out, bool *changed)
{
	int r;

	*changed = false;
	for (size_t i = 0; i < db->n; i++) {
		const struct pw_ent *e = &db->ents[i];
		struct hs_passwd p = e->pw;

		if (to_tree) {
			p.passwd = "x";
			if (e->proxy)
				p.shell = HS_SHELL_PROXY;
		} else if (e->new_shell) {
			p.shell = e->new_shell;
		}
		if (strcmp(p.passwd, e->pw.passwd) == 0 && strcmp(p.shell, e->pw.shell) == 0)
			continue;   /* the line stays as it is */
		r = hs_accountdb_replace(&db->db, e->line, &p);
		if (r < 0) {
			hs_warn("%s", db->db.error);
			return r;
		}
	}
	r = hs_accountdb_serialize(&db->db, out);
	if (r < 0)
		return r;
	*changed = db->db.dirty;
	return 0;
}

/* ---------------------------------------------------------------- */
/* The source of the hashes: /etc/shadow or /etc/tcb/USER/shadow */

struct sp_ent {
	struct hs_spwd sp;
	unsigned long lineno;   /* 0 for tcb */
	/* tcb: the file sp points into, wiped by size (parsing cuts it
	 * with NULs) */
	struct hs_secret_buf copy;
};

struct spdb {
	struct hs_accountdb file;   /* /etc/shadow */
	struct hs_buf nis;          /* its NIS compat lines, each with its newline */
	struct sp_ent *ents;
	size_t n;
};

static void spdb_free(struct spdb *db)
{
	hs_accountdb_free(&db->file);
	hs_strbuf_free(&db->nis);
	for (size_t i = 0; i < db->n; i++)
		hs_secret_buf_freep(&db->ents[i].copy);
	free(db->ents);
	memset(db, 0, sizeof(*db));
}

/* Attach a parsed shadow record to its passwd entry. */
static int spdb_attach(struct spdb *sp, struct pwdb *pw, size_t spidx, const char *where)
{
	const struct hs_spwd *s = &sp->ents[spidx].sp;
	struct pw_ent *e = pwdb_find(pw, s->name);

	if (!e) {
		hs_warn("%s: user %s is not in %s", where, s->name, HS_ETC_PASSWD);
		return -HS_E_FORMAT;
	}
	/* only /etc/shadow can repeat a name: a tcb entry holds the user
	 * its directory is named after */
	if (e->sp >= 0) {
		hs_warn("%s: duplicate user name %s (also on line %lu)", where, s->name,
			sp->ents[e->sp].lineno);
		return -HS_E_FORMAT;
	}
	e->sp = (long)spidx;
	return 0;
}

static int spdb_load_shadow(struct spdb *db, struct pwdb *pw)
{
	char where[64];
	/* Lenient: the checks below go line by line, so the first problem in
	 * the file is the one reported, whatever its kind. */
	int r = hs_accountdb_load(&db->file, HS_DB_SHADOW, HS_ETC_SHADOW, HS_DB_LENIENT);

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		hs_warn("%s", db->file.error);
		return r;
	}
	db->ents = calloc(db->file.n_lines ? db->file.n_lines : 1, sizeof(*db->ents));
	if (!db->ents) {
		hs_warn("cannot read %s: %s", HS_ETC_SHADOW, hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; i < db->file.n_lines; i++) {
		const struct hs_dbline *l = &db->file.lines[i];
		struct sp_ent *e = &db->ents[db->n];

		if (l->len == 0)
			continue;
		if (hs_records_nis_line(l->text, l->len)) {
			/* no account of ours: kept for pwunconv, byte for byte */
			if ((r = hs_strbuf_append(&db->nis, l->text, l->len)) < 0 ||
			    (r = hs_strbuf_append(&db->nis, "\n", 1)) < 0)
				return r;
			continue;
		}
		snprintf(where, sizeof(where), "%s:%lu", HS_ETC_SHADOW, l->lineno);
		if (!l->entry) {
			hs_warn("%s: invalid entry: %s", where, hs_strerror(l->err));
			return l->err;
		}
		e->sp = l->rec.sp;
		e->lineno = l->lineno;
		db->n++;
		if ((r = spdb_attach(db, pw, db->n - 1, where)) < 0)
			return r;
	}
	return 0;
}

/* A directory of /etc, never through a symlink: the one open that tells
 * a symlink (ENOTDIR under O_NOFOLLOW) from a file. */
static int open_dir_ro(int dirfd, const char *name)
{
	return hs_fileio_open_dir_at(dirfd, name, NULL);
}

/* A listing of the directory dirfd (shown in messages as path), on a
 * descriptor of its own; NULL with *err set (and reported) on failure. */
static DIR *list_dir(int dirfd, const char *path, int *err)
{
	DIR *d = hs_fileio_opendir_at(dirfd);

	if (!d) {
		*err = -errno;
		hs_warn("cannot read %s: %s", path, hs_strerror(*err));
	}
	return d;
}

/* One Openwall tcb entry: /etc/tcb/USER/shadow, a single classic shadow
 * line owned by USER (as tcb writes it) or by root. */
static int spdb_load_tcb_user(struct spdb *db, struct pwdb *pw, int tcbfd, const char *name)
{
	char path[NAME_MAX + 64];
	struct hs_file_expect ex = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = HS_USERFILE_MAX,
	};
	_cleanup_close_ int ufd = -1;
	struct stat st;
	const struct pw_ent *e;
	struct sp_ent *se;
	char *data;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", HS_ETC_TCB, name, TCB_SHADOW);
	if (!hs_names_user_valid(name)) {
		hs_warn("%s/%s: not a valid user name", HS_ETC_TCB, name);
		return -HS_E_NAME;
	}
	if (!(e = pwdb_find(pw, name))) {
		hs_warn("%s/%s: user %s is not in %s", HS_ETC_TCB, name, name, HS_ETC_PASSWD);
		return -HS_E_FORMAT;
	}
	ufd = open_dir_ro(tcbfd, name);
	if (ufd < 0) {
		hs_warn("cannot open %s/%s: %s", HS_ETC_TCB, name, hs_strerror(ufd));
		return ufd;
	}
	r = hs_fileio_read_alloc_at(ufd, TCB_SHADOW, &ex, &data, &len, &st);
	if (r < 0) {
		hs_warn("cannot read %s: %s", path, hs_strerror(r));
		return r;
	}
	/* counted at once, so that spdb_free wipes the copy whatever follows */
	se = &db->ents[db->n++];
	*se = (struct sp_ent){ .copy = { data, len + 1 } };
	if (st.st_uid != e->pw.uid && st.st_uid != 0) {
		hs_warn("cannot read %s: %s", path, hs_strerror(-HS_E_OWNER));
		return -HS_E_OWNER;
	}
	if (len > 0 && data[len - 1] == '\n')
		data[--len] = '\0';
	if (len == 0 || memchr(data, '\n', len)) {
		hs_warn("%s: invalid entry: %s", path, len ? "more than one line" : "empty file");
		return -HS_E_FORMAT;
	}
	/* the parser reads up to a NUL: what follows would be dropped
	 * unseen, where /etc/shadow's reader refuses the line */
	if (strlen(data) != len) {
		hs_warn("%s: invalid entry: %s", path, hs_strerror(-HS_E_FIELD));
		return -HS_E_FIELD;
	}
	r = hs_records_spwd_parse(data, &se->sp);
	if (r < 0) {
		hs_warn("%s: invalid entry: %s", path, hs_strerror(r));
		return r;
	}
	if (strcmp(se->sp.name, name) != 0) {
		hs_warn("%s: holds the entry of %s, not %s", path, se->sp.name, name);
		return -HS_E_FORMAT;
	}
	return spdb_attach(db, pw, db->n - 1, path);
}

static int spdb_load_tcb(struct spdb *db, struct pwdb *pw, int etcfd)
{
	_cleanup_close_ int tcbfd = open_dir_ro(etcfd, "tcb");
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	if (tcbfd < 0) {
		hs_warn("cannot open %s: %s", HS_ETC_TCB, hs_strerror(tcbfd));
		return tcbfd;
	}
	/* one entry per passwd user (the directory names differ), and the
	 * one that is refused */
	db->ents = calloc(pw->n + 1, sizeof(*db->ents));
	if (!db->ents) {
		hs_warn("cannot read %s: %s", HS_ETC_TCB, hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	if (!(d = list_dir(tcbfd, HS_ETC_TCB, &r)))
		return r;
	errno = 0;
	while (r == 0 && (de = readdir(d))) {
		/* tcb keeps its own housekeeping under dot names */
		if (de->d_name[0] != '.')
			r = spdb_load_tcb_user(db, pw, tcbfd, de->d_name);
		errno = 0;
	}
	if (r == 0 && errno) {
		r = -errno;
		hs_warn("cannot read %s: %s", HS_ETC_TCB, hs_strerror(r));
	}
	return r;
}

/* ---------------------------------------------------------------- */
/* /etc/shells, through lib/etc/shells.c */

static int shells_load(struct hs_shells *s)
{
	int r = hs_shells_load(s, HS_ETC_SHELLS);

	if (r < 0)
		hs_warn("%s", s->error);
	return r;
}

/* ---------------------------------------------------------------- */
/* /etc/shadow, /etc/shells, /etc/passwd: one transaction through the one
 * writer (lib/etc/globalfile.h), so a crash leaves all of them old or all
 * new, and a failure changes none of them. */

struct etc_commit {
	struct hs_global_file f[3];
	struct iovec iov[3];
	size_t n;
};

static void etc_commit_add(struct etc_commit *c, const char *path, const struct hs_buf *data,
			   gid_t gid, mode_t mode)
{
	c->iov[c->n] = (struct iovec){ .iov_base = data->data ? data->data : "",
				       .iov_len = data->len };
	c->f[c->n] = (struct hs_global_file){
		.path = path, .iov = &c->iov[c->n], .n_iov = 1, .uid = 0, .gid = gid, .mode = mode,
	};
	c->n++;
}

/* Commit /etc/shadow when given (pwunconv), /etc/shells with the proxy
 * added (to_tree) or removed when that changes it, and /etc/passwd when
 * passwd_changed, in that order. */
static int etc_commit(const struct hs_buf *shadow, gid_t shadow_gid, struct hs_shells *sh,
		      bool to_tree, const struct hs_buf *passwd, bool passwd_changed)
{
	_cleanup_strbuf_ struct hs_buf shells = { 0 };
	struct etc_commit c = { .n = 0 };
	char err[600];
	int r;

	if (shadow)
		etc_commit_add(&c, HS_ETC_SHADOW, shadow, shadow_gid, 0640);
	if (hs_shells_contains(sh, HS_SHELL_PROXY) != to_tree) {
		r = to_tree ? hs_shells_add(sh, HS_SHELL_PROXY) : hs_shells_remove(sh, HS_SHELL_PROXY);
		if (r >= 0)
			r = hs_shells_contents(sh, &shells);
		if (r < 0) {
			hs_warn("cannot write %s: %s", HS_ETC_SHELLS, hs_strerror(r));
			return r;
		}
		etc_commit_add(&c, HS_ETC_SHELLS, &shells, 0, 0644);
	}
	if (passwd_changed)
		etc_commit_add(&c, HS_ETC_PASSWD, passwd, 0, 0644);
	r = hs_globalfile_commit(0, c.f, c.n, err, sizeof(err), NULL);
	if (r < 0)
		hs_warn("%s", err[0] ? err : hs_strerror(r));
	return r;
}

/* ---------------------------------------------------------------- */
/* Groups */

/* The two groups of the layout, in the order they are created. */
enum { G_TREE, G_AUTH, N_LAYOUT_GROUPS };
static const char *const layout_groups[N_LAYOUT_GROUPS] = { HS_GROUP_TREE, HS_GROUP_AUTH };

struct group_plan {
	gid_t gid[N_LAYOUT_GROUPS];
	bool create[N_LAYOUT_GROUPS];
	gid_t shadow_gid;           /* 0 without a "shadow" group */
};

static struct hs_config *load_logindefs(void)
{
	struct hs_config *cfg = NULL;

	/* Problems in login.defs are pwck's and the administrator's business;
	 * a missing or odd file just gives the defaults here (no warn
	 * function: nothing is said). */
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &cfg) < 0)
		cfg = NULL;
	return cfg;
}

/* Find the two groups and "shadow" in /etc/group; plan system gids for the
 * missing ones the way groupadd --system does (the highest free gid in
 * [SYS_GID_MIN, SYS_GID_MAX]). */
static int plan_groups(struct group_plan *g, bool need_layout_groups)
{
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	_cleanup_free_ unsigned char *used = NULL;
	struct hs_config *cfg;
	long gmin, gmax, idx;
	int r;

	memset(g, 0, sizeof(*g));
	/* A repeated group name is grpck's business; the first one counts,
	 * as for getgrnam(). */
	r = hs_accountdb_load(&db, HS_DB_GROUP, HS_ETC_GROUP, HS_DB_KEEP_DUPS);
	if (r < 0) {
		hs_warn("%s", db.error);
		return r;
	}
	cfg = load_logindefs();
	gmin = hs_config_get_long(cfg, "SYS_GID_MIN", 1, 60000, 101);
	gmax = hs_config_get_long(cfg, "SYS_GID_MAX", 1, 60000, 999);
	hs_config_free(cfg);
	if (gmax < gmin)
		gmax = gmin;
	used = calloc((size_t)(gmax - gmin + 1), 1);
	if (!used) {
		hs_accountdb_free(&db);
		return -ENOMEM;
	}
	for (size_t i = 0; i < db.n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(&db, i);

		if (rec && (long)rec->gr.gid >= gmin && (long)rec->gr.gid <= gmax)
			used[rec->gr.gid - (gid_t)gmin] = 1;
	}
	for (int k = 0; k < N_LAYOUT_GROUPS; k++) {
		if ((idx = hs_accountdb_find(&db, layout_groups[k])) >= 0)
			g->gid[k] = db.lines[idx].rec.gr.gid;
		else
			g->create[k] = need_layout_groups;
	}
	if ((idx = hs_accountdb_find(&db, "shadow")) >= 0)
		g->shadow_gid = db.lines[idx].rec.gr.gid;
	hs_accountdb_free(&db);
	for (int k = 0; k < N_LAYOUT_GROUPS; k++) {
		long gid;

		if (!g->create[k])
			continue;
		for (gid = gmax; gid >= gmin && used[gid - gmin]; gid--)
			;
		if (gid < gmin) {
			hs_warn("cannot create group %s: no free gid in [%ld, %ld] (SYS_GID_MIN, SYS_GID_MAX in %s)",
				layout_groups[k], gmin, gmax, HS_ETC_LOGIN_DEFS);
			return -ENOSPC;
		}
		used[gid - gmin] = 1;
		g->gid[k] = (gid_t)gid;
	}
	return 0;
}

/* Append the planned groups to /etc/group and (when it exists) /etc/gshadow.
 * Called with the locks held.  Both are loaded leniently: lines we do not
 * touch are not ours to judge here, and they are written back verbatim. */
static int create_groups(const struct group_plan *g)
{
	struct hs_accountdb grp = HS_ACCOUNTDB_INIT, gsh = HS_ACCOUNTDB_INIT;
	struct hs_accountdb *const dbs[2] = { &grp, &gsh };
	const char *path = HS_ETC_GROUP;
	size_t failed = 0;
	long r;

	if (!g->create[G_TREE] && !g->create[G_AUTH])
		return 0;
	r = hs_accountdb_load(&grp, HS_DB_GROUP, path, HS_DB_LENIENT);
	for (int k = 0; r >= 0 && k < N_LAYOUT_GROUPS; k++)
		if (g->create[k])
			r = hs_accountdb_append(&grp, &(struct hs_group){ layout_groups[k], "x",
									  g->gid[k], "" });
	if (r >= 0) {
		path = HS_ETC_GSHADOW;
		r = hs_accountdb_load(&gsh, HS_DB_GSHADOW, path, HS_DB_LENIENT | HS_DB_MISSING_OK);
	}
	/* without a gshadow on this system there is nothing to add; a stale
	 * gshadow entry of that name stays the one */
	for (int k = 0; r >= 0 && gsh.present && k < N_LAYOUT_GROUPS; k++)
		if (g->create[k] && hs_accountdb_find(&gsh, layout_groups[k]) < 0)
			r = hs_accountdb_append(&gsh, &(struct hs_gshadow){ layout_groups[k], "!",
									    "", "" });
	/* both files in one transaction: never a group without its gshadow
	 * line after a crash */
	if (r >= 0) {
		size_t n = gsh.dirty ? 2 : 1;

		r = hs_accountdb_write_set(dbs, n, &failed);
		/* the journal's failure is the change's: said of /etc/group */
		if (r < 0)
			path = dbs[failed < n ? failed : 0]->path;
	}
	hs_accountdb_free(&grp);
	hs_accountdb_free(&gsh);
	if (r < 0) {
		hs_warn("cannot add groups %s and %s to %s: %s", HS_GROUP_TREE, HS_GROUP_AUTH,
			path, hs_strerror((int)r));
		return (int)r;
	}
	for (int k = 0; k < N_LAYOUT_GROUPS; k++)
		if (g->create[k])
			printf("%s: created group %s (gid %lu)\n", hs_cli_prog(), layout_groups[k],
			       (unsigned long)g->gid[k]);
	hs_globalfile_flush_caches("group");
	return 0;
}
/* ---------------------------------------------------------------- */
/* The tree as a whole */

static int fsync_dir(int fd)
{
	return fsync(fd) < 0 ? -errno : 0;
}

/* Remove every leftover /etc/.hardened-shadow.XXXXXX directory (only a
 * crashed pwconv or pwunconv makes them).  The temp files of the global
 * files are the lock's business: hs_globalfile_lock's recovery (lib/etc/txn)
 * removed them. */
static int cleanup_leftovers(int etcfd)
{
	size_t plen = strlen(HS_CONVERT_TMP_PREFIX);
	int r = 0;
	_cleanup_closedir_ DIR *d = list_dir(etcfd, ETC_DIR, &r);
	struct dirent *de;

	if (!d)
		return r;
	while ((de = readdir(d))) {
		struct stat st;
		int e;

		if (strncmp(de->d_name, HS_CONVERT_TMP_PREFIX, plen) != 0 ||
		    strlen(de->d_name) != plen + 6)
			continue;
		if (fstatat(etcfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		e = hs_walk_remove_tree_at(etcfd, de->d_name);
		if (e < 0) {
			hs_warn("cannot remove the leftover %s/%s: %s", ETC_DIR, de->d_name,
				hs_strerror(e));
			r = e;
		} else {
			hs_warn("removed %s/%s, left over by an interrupted run", ETC_DIR, de->d_name);
		}
	}
	return r;
}

/* Take the tree (or a temp tree) away from everyone, move it out of the
 * way under a temp name, and remove it without following anything. */
static int remove_tree(int etcfd, const char *name)
{
	char tmp[sizeof(HS_CONVERT_TMP_PREFIX) + 8] = HS_CONVERT_TMP_PREFIX;
	size_t plen = strlen(HS_CONVERT_TMP_PREFIX);
	_cleanup_close_ int fd = open_dir_ro(etcfd, name);
	int r = 0;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	/* No user may traverse into it while it is emptied. */
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0700) < 0)
		return -errno;
	if (strncmp(name, HS_CONVERT_TMP_PREFIX, plen) != 0) {
		/* new random characters after the prefix; tmp's tail stays NUL */
		for (int tries = 0;; tries++) {
			r = hs_random_alnum(tmp + plen, 6);
			if (r < 0)
				return r;
			if (renameat2(etcfd, name, etcfd, tmp, RENAME_NOREPLACE) == 0)
				break;
			if (errno != EEXIST || tries > 100)
				return -errno;
		}
		fsync_dir(etcfd);
		name = tmp;
	}
	r = hs_walk_remove_tree_at(etcfd, name);
	fsync_dir(etcfd);
	return r;
}

/* Read a marker; *source_tcb for a "tcb" pwconv marker.  0 = present,
 * -ENOENT = absent. */
static int read_marker(int treefd, const char *name, bool *source_tcb)
{
	char buf[64];
	struct hs_file_expect ex = { .uid = 0, .gid = HS_ANY_GID, .max_size = 32 };
	size_t len;
	int r = hs_fileio_read_trusted_at(treefd, name, &ex, buf, sizeof(buf), &len, NULL);

	if (r < 0)
		return r;
	if (source_tcb)
		*source_tcb = strcmp(buf, SOURCE_TCB) == 0;
	return 0;
}

static int write_marker(int treefd, const char *name, const char *content)
{
	return hs_fileio_replace_at(treefd, name, content, strlen(content), 0, 0, 0600);
}

/* Remove a marker (treefd < 0: the error opening the tree); a failure
 * is reported, followed by tail, unless tail is NULL. */
static int remove_marker(int treefd, const char *name, const char *tail)
{
	int r = treefd < 0 ? treefd : 0;

	if (r == 0 && unlinkat(treefd, name, 0) < 0 && errno != ENOENT)
		r = -errno;
	if (r == 0)
		r = fsync_dir(treefd);
	if (r < 0 && tail)
		hs_warn("cannot remove %s/%s: %s%s", HS_TREE_DIR, name, hs_strerror(r), tail);
	return r;
}

static bool file_exists_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

enum tree_state {
	TREE_ABSENT,
	TREE_CLEAN,          /* no marker */
	TREE_PWCONV,         /* pwconv marker */
	TREE_PWUNCONV,       /* pwunconv marker */
};

static int tree_state(int etcfd, int *treefd_out, enum tree_state *state, bool *source_tcb)
{
	struct stat st;
	int treefd, r;

	*treefd_out = -1;
	*source_tcb = false;
	*state = TREE_ABSENT;
	treefd = open_dir_ro(etcfd, TREE_NAME);
	if (treefd == -ENOENT)
		return 0;
	if (treefd >= 0 && (fstat(treefd, &st) < 0 || st.st_uid != 0)) {
		hs_close(treefd);
		treefd = -HS_E_OWNER;
	}
	if (treefd < 0) {
		hs_warn("cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
		return treefd;
	}
	*treefd_out = treefd;
	*state = TREE_PWCONV;
	r = read_marker(treefd, HS_CONVERT_MARK_PWCONV, source_tcb);
	if (r == -ENOENT) {
		*state = TREE_PWUNCONV;
		r = read_marker(treefd, HS_CONVERT_MARK_PWUNCONV, NULL);
	}
	if (r == -ENOENT) {
		*state = TREE_CLEAN;
		r = 0;
	}
	if (r < 0)
		hs_warn("cannot read the conversion marker in %s: %s", HS_TREE_DIR, hs_strerror(r));
	return r;
}

/* ---------------------------------------------------------------- */
/* Reading the real shells back out of the tree */

/* The real login shell of a proxy user, from the shell file in its
 * directory ufd, into e->new_shell: a valid field, and not the proxy. */
static int restore_shell(int ufd, struct pw_ent *e)
{
	char buf[USERBUF_SIZE];
	const char *shell;
	int r = hs_userdir_read_shell(ufd, e->pw.uid, buf, sizeof(buf), &shell);

	if (r == 0 && (!hs_records_field_valid(shell) || strcmp(shell, HS_SHELL_PROXY) == 0))
		r = -HS_E_FORMAT;
	if (r == 0 && !(e->new_shell = strdup(shell)))
		r = -ENOMEM;
	return r;
}

/* For every passwd entry whose shell is the proxy, read the user's shell
 * file into new_shell.  Entries without a directory are an error: we could
 * not tell what their shell was. */
static int collect_real_shells(int treefd, struct pwdb *pw, size_t *n_restored)
{
	char path[HS_PATHBUF_MAX];

	*n_restored = 0;
	for (size_t i = 0; i < pw->n; i++) {
		struct pw_ent *e = &pw->ents[i];
		_cleanup_close_ int ufd = -1;
		int r;

		if (strcmp(e->pw.shell, HS_SHELL_PROXY) != 0)
			continue;
		ufd = hs_userdir_open(treefd, e->pw.name, e->pw.uid, NULL);
		r = ufd < 0 ? ufd : restore_shell(ufd, e);
		if (r < 0) {
			hs_warn("cannot restore the login shell of %s: %s: %s", e->pw.name,
				hs_userdir_path(path, sizeof(path), e->pw.name,
						ufd < 0 ? NULL : HS_FILE_SHELL),
				hs_strerror(r));
			return r;
		}
		(*n_restored)++;
	}
	return 0;
}

/* Undo an interrupted pwconv: real shells back into /etc/passwd, the proxy
 * out of /etc/shells, the tree removed.  /etc/shadow (or /etc/tcb) was never
 * touched, so the classic system is whole again. */
/* Before the tree goes: does /etc/shadow still hold every user the tree
 * holds?  pwconv removes it only at its end, but a tool may write a new
 * one between an interrupted pwconv and the next run (systemd-sysusers,
 * for the accounts it creates): removing the tree then would lose every
 * hash it alone holds. */
static int shadow_still_whole(int treefd, struct pwdb *pw)
{
	struct spdb sp = { 0 };
	int r = spdb_load_shadow(&sp, pw);

	for (size_t i = 0; r == 0 && i < pw->n; i++)
		if (pw->ents[i].sp < 0 && file_exists_at(treefd, pw->ents[i].pw.name)) {
			hs_warn("cannot roll back the interrupted pwconv: %s has no line for %s, "
				"whose hash only %s holds (another program wrote %s since); "
				"move %s away and run pwconv again", HS_ETC_SHADOW,
				pw->ents[i].pw.name, HS_TREE_DIR, HS_ETC_SHADOW, HS_ETC_SHADOW);
			r = -EEXIST;
		}
	spdb_free(&sp);
	for (size_t i = 0; i < pw->n; i++)
		pw->ents[i].sp = -1;
	return r;
}

static int rollback_pwconv(int etcfd, int treefd, bool from_tcb)
{
	struct pwdb pw = { 0 };
	struct hs_shells sh = { 0 };
	struct hs_buf b = { 0 };
	bool changed = false;
	size_t n;
	int r;

	r = pwdb_load(&pw);
	if (r == 0 && !from_tcb)
		r = shadow_still_whole(treefd, &pw);
	if (r == 0)
		r = collect_real_shells(treefd, &pw, &n);
	if (r == 0)
		r = pwdb_render(&pw, false, &b, &changed);
	if (r == 0)
		r = shells_load(&sh);
	if (r == 0)
		r = etc_commit(NULL, 0, &sh, false, &b, changed);
	if (r == 0) {
		r = remove_tree(etcfd, TREE_NAME);
		if (r < 0)
			hs_warn("cannot remove %s: %s", HS_TREE_DIR, hs_strerror(r));
	}
	if (r == 0)
		hs_warn("rolled back an interrupted pwconv (%zu login shells restored)", n);
	hs_strbuf_free(&b);
	hs_shells_free(&sh);
	pwdb_free(&pw);
	if (r == 0)
		hs_globalfile_flush_caches("passwd");
	return r;
}

/* ---------------------------------------------------------------- */
/* pwconv */

/* pwconv locks them all; pwunconv only the first two (it adds no group) */
static const char *const lock_files[] = {
	HS_ETC_PASSWD, HS_ETC_SHADOW, HS_ETC_GROUP, HS_ETC_GSHADOW,
};

/* The per-user records pwconv writes for one passwd entry. */
static void records_for(const struct pw_ent *e, const struct spdb *sp, long today,
			const long defaults[3], struct hs_shadow *sh, struct hs_aging *ag)
{
	if (e->sp >= 0) {
		const struct hs_spwd *s = &sp->ents[e->sp].sp;

		sh->hash = s->hash;
		sh->lstchg = s->lstchg;
		*ag = (struct hs_aging){ .min = s->min, .max = s->max, .warn = s->warn,
					 .inact = s->inact, .expire = s->expire };
		/* the reserved field, kept for pwunconv (checked by the parser) */
		snprintf(ag->flag, sizeof(ag->flag), "%s", s->flag);
		/* As shadow-utils' pwconv: a real password still in /etc/passwd
		 * wins over the shadow entry and counts as changed today. */
		if (strcmp(e->pw.passwd, "x") != 0) {
			sh->hash = e->pw.passwd;
			sh->lstchg = today;
		}
		return;
	}
	/* No shadow entry: as shadow-utils' pwconv, the passwd field is the
	 * hash and the aging defaults come from login.defs; "x" (which points
	 * at a shadow entry that does not exist, so nobody could log in)
	 * becomes the locked "!". */
	sh->hash = strcmp(e->pw.passwd, "x") == 0 ? "!" : e->pw.passwd;
	sh->lstchg = today;
	*ag = (struct hs_aging){ .min = defaults[0], .max = defaults[1], .warn = defaults[2],
				 .inact = HS_UNSET, .expire = HS_UNSET };
}

/* The shell file of a user: the passwd shell, or what an empty (or
 * unusable, relative) field means to login(1): /bin/sh. */
static const char *shell_file_for(const struct pw_ent *e)
{
	return e->pw.shell[0] == '/' ? e->pw.shell : "/bin/sh";
}

static int build_tree(int etcfd, const struct pwdb *pw, const struct spdb *sp,
		      const struct group_plan *g, bool from_tcb, char *tmpname, size_t tmpsize)
{
	char templ[] = ETC_DIR "/" HS_CONVERT_TMP_PREFIX "XXXXXX";
	const char *name = templ + strlen(ETC_DIR) + 1;
	_cleanup_close_ int tmpfd = -1;
	struct hs_config *cfg = load_logindefs();
	long defaults[3], today = hs_today();
	int r;

	defaults[0] = hs_config_get_long(cfg, "PASS_MIN_DAYS", -1, HS_DAYS_MAX, -1);
	defaults[1] = hs_config_get_long(cfg, "PASS_MAX_DAYS", -1, HS_DAYS_MAX, -1);
	defaults[2] = hs_config_get_long(cfg, "PASS_WARN_AGE", -1, HS_DAYS_MAX, -1);
	hs_config_free(cfg);

	/* mkdtemp makes it root:root 0700: nobody sees it while it grows.
	 * It and all inside are labelled as the tree it becomes. */
	r = hs_selabel_begin_at(etcfd, TREE_NAME, S_IFDIR);
	if (r < 0 || !mkdtemp(templ)) {
		r = r < 0 ? r : -errno;
		hs_selabel_end();
		hs_warn("cannot create %s: %s", templ, hs_strerror(r));
		return r;
	}
	hs_selabel_end();
	hs_selabel_alias_at(etcfd, name, TREE_NAME);
	snprintf(tmpname, tmpsize, "%s", name);
	tmpfd = open_dir_ro(etcfd, name);
	if (tmpfd < 0) {
		hs_warn("cannot open %s: %s", templ, hs_strerror(tmpfd));
		return tmpfd;
	}
	hs_cli_progress_start(pw->n, "users");
	for (size_t i = 0; i < pw->n; i++) {
		const struct pw_ent *e = &pw->ents[i];
		struct hs_shadow sh;
		struct hs_aging ag;

		hs_cli_progress_step(i);
		records_for(e, sp, today, defaults, &sh, &ag);
		r = hs_userdir_create(tmpfd, e->pw.name, e->pw.uid, g->gid[G_AUTH], &sh, &ag,
				      shell_file_for(e));
		if (r < 0) {
			hs_warn("cannot create the directory of %s in %s: %s", e->pw.name, templ,
				hs_strerror(r));
			return r;
		}
	}
	hs_cli_progress_end();
	r = sp->nis.len ? hs_fileio_replace_at(tmpfd, HS_CONVERT_NIS_SHADOW, sp->nis.data,
					      sp->nis.len, 0, 0, 0600) : 0;
	if (r == 0)
		r = write_marker(tmpfd, HS_CONVERT_MARK_PWCONV,
				 from_tcb ? SOURCE_TCB : SOURCE_SHADOW);
	if (r == 0 && (fchown(tmpfd, 0, g->gid[G_TREE]) < 0 || fchmod(tmpfd, HS_TREE_MODE) < 0))
		r = -errno;
	if (r == 0)
		r = fsync_dir(tmpfd);
	if (r < 0)
		hs_warn("cannot finish %s: %s", templ, hs_strerror(r));
	return r;
}

static void print_next_steps(size_t n_users, size_t n_proxy, bool from_tcb)
{
	printf("%s: converted %zu users into %s (%zu now log in through %s).\n",
	       hs_cli_prog(), n_users, HS_TREE_DIR, n_proxy, HS_SHELL_PROXY);
	if (from_tcb)
		printf("%s is left in place; remove it once logins work.\n", HS_ETC_TCB);
	else
		printf("%s and %s (the backup, which held hashes too) have been removed.\n",
		       HS_ETC_SHADOW, HS_ETC_SHADOW "-");
	printf("Next steps:\n"
	       "  1. In /etc/nsswitch.conf, set:   shadow: hardened_shadow\n"
	       "     pam_unix.so then reads the hashes through NSS in services that run\n"
	       "     as root (login, su, sshd).  Its setgid helper unix_chkpwd cannot\n"
	       "     reach the tree, so screen lockers running as the user need:\n"
	       "  2. pam_hardened_shadow.so (when installed) in place of pam_unix.so in\n"
	       "     /etc/pam.d (common-auth, common-account, common-password and\n"
	       "     common-session on Debian), keeping the options, e.g.\n"
	       "       auth     [success=1 default=ignore]  pam_hardened_shadow.so nullok\n"
	       "       account  [success=1 new_authtok_reqd=done default=ignore]  pam_hardened_shadow.so\n"
	       "       password [success=1 default=ignore]  pam_hardened_shadow.so yescrypt\n"
	       "       session  required  pam_hardened_shadow.so\n"
	       "  3. Keep a root shell open and test a login before logging out.\n");
}

/* The end of both directions, whatever happened: the locks released, our
 * output out, then the signals that waited (a pending SIGINT ends us
 * here). */
static void convert_end(struct hs_locks *locks, sigset_t *saved)
{
	hs_globalfile_unlock(locks);
	fflush(stdout);
	fflush(stderr);
	/* a SIGPIPE from the report is dropped there (141 would tell a
	 * script the conversion was not made) */
	hs_privs_restore_signals(saved);
}

/* The start of both directions: /etc opened, the locks taken, the
 * signals blocked, leftovers of a crashed run removed, the tree's state.
 * 0, or negative with nothing left held (reported). */
static int convert_begin(int *etcfd, struct hs_locks *locks, bool to_tree, sigset_t *saved,
			 int *treefd, enum tree_state *state, bool *source_tcb)
{
	const char *failed = NULL;
	int r;

	*etcfd = open(ETC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*etcfd < 0) {
		*etcfd = -errno;
		hs_warn("cannot open %s: %s", ETC_DIR, hs_strerror(*etcfd));
		return *etcfd;
	}
	r = hs_globalfile_lock(locks, NULL, lock_files, to_tree ? HS_ARRAY_SIZE(lock_files) : 2,
			       HS_LOCK_TIMEOUT_MS, &failed);
	if (r < 0)
		return hs_warn_lock(failed ? failed : HS_ETC_PWD_LOCK, r, HS_LOCK_TIMEOUT_MS);
	/* Signals wait from here to the end, after the locks are released
	 * (waiting for them stays interruptible): a Ctrl-C in the middle
	 * would leave a temporary tree (a root-only copy of every hash), a
	 * half-done commit or rollback, and stale locks behind.  Only
	 * SIGKILL remains; the next run cleans up after it. */
	hs_privs_block_signals(saved);
	cleanup_leftovers(*etcfd);
	r = tree_state(*etcfd, treefd, state, source_tcb);
	if (r < 0)
		convert_end(locks, saved);
	return r;
}

/* Only the last step of an interrupted pwconv (dropping the marker) was
 * missing. */
static int pwconv_finish_interrupted(int etcfd, int treefd)
{
	int r;

	if (unlinkat(etcfd, SHADOW_BACKUP, 0) < 0 && errno != ENOENT) {
		r = -errno;
		hs_warn("cannot remove %s-: %s", HS_ETC_SHADOW, hs_strerror(r));
		return r;
	}
	r = remove_marker(treefd, HS_CONVERT_MARK_PWCONV, "");
	if (r < 0)
		return r;
	hs_warn("finished an interrupted conversion");
	return 0;
}

/* pwconv over an existing tree: a refusal, nothing to do, or an
 * interrupted run to finish or roll back.  1 when the conversion starts
 * (from scratch), otherwise what pwconv ends with. */
static int pwconv_handle_tree_state(int etcfd, int *treefd, enum tree_state state,
				    bool source_tcb)
{
	int r;

	switch (state) {
	case TREE_ABSENT:
		break;
	case TREE_CLEAN:
		if (file_exists_at(etcfd, SHADOW_NAME)) {
			hs_warn("both %s and %s exist: the system is half converted; "
				"move one of them away by hand (pwunconv does not guess either)",
				HS_TREE_DIR, HS_ETC_SHADOW);
			return -EEXIST;
		}
		hs_warn("nothing to do: %s already holds the accounts", HS_TREE_DIR);
		return 0;
	case TREE_PWUNCONV:
		hs_warn("%s is left over by an interrupted pwunconv: run pwunconv again to finish it",
			HS_TREE_DIR);
		return -EEXIST;
	case TREE_PWCONV:
		if (!source_tcb && !file_exists_at(etcfd, SHADOW_NAME))
			return pwconv_finish_interrupted(etcfd, *treefd);
		r = rollback_pwconv(etcfd, *treefd, source_tcb);
		if (r < 0)
			return r;
		hs_close(TAKE_FD(*treefd));
		break;
	}
	return 1;
}

/* passwd, the hashes (from /etc/shadow or /etc/tcb) and /etc/shells, read
 * and checked; nothing has changed so far. */
static int pwconv_read_sources(bool from_tcb, int etcfd, struct pwdb *pw,
			       struct spdb *sp, struct hs_shells *sh)
{
	int r;

	if (from_tcb && file_exists_at(etcfd, SHADOW_NAME)) {
		hs_warn("%s exists next to %s: convert from one source only "
			"(move %s away, or run pwconv without --from-tcb)",
			HS_ETC_SHADOW, HS_ETC_TCB, HS_ETC_SHADOW);
		return -EEXIST;
	}
	if ((r = pwdb_load(pw)) < 0)
		return r;
	r = from_tcb ? spdb_load_tcb(sp, pw, etcfd) : spdb_load_shadow(sp, pw);
	if (r < 0)
		return r;
	return shells_load(sh);
}

/* Which accounts get the shell proxy: none unless login.defs'
 * SHELL_PROXY says yes (docs/decisions.md "chsh"); then a listed shell,
 * not uid 0 (root keeps its real shell in /etc/passwd, to log in and
 * repair a damaged tree; it changes its shell with root's tools anyway).
 * A passwd that names the proxy already, without a tree, is refused. */
static int pwconv_choose_proxies(struct pwdb *pw, const struct hs_shells *sh, size_t *n_proxy)
{
	struct hs_config *cfg = load_logindefs();
	bool wanted = hs_config_get_bool(cfg, "SHELL_PROXY", false);

	hs_config_free(cfg);
	for (size_t i = 0; i < pw->n; i++) {
		struct pw_ent *e = &pw->ents[i];

		if (strcmp(e->pw.shell, HS_SHELL_PROXY) == 0) {
			hs_warn("%s:%lu: %s already has %s as login shell, but %s does not exist; "
				"set the real shell first", HS_ETC_PASSWD,
				pw->db.lines[e->line].lineno, e->pw.name, HS_SHELL_PROXY, HS_TREE_DIR);
			return -HS_E_FORMAT;
		}
		/* the shell is not the proxy: refused above */
		e->proxy = wanted && e->pw.uid != 0 && hs_shells_contains(sh, e->pw.shell);
		*n_proxy += e->proxy;
	}
	return 0;
}

/* classic -> tree: 0 (converted, or nothing to do) or a negative error
 * after printing a message; on error nothing is changed, except that the
 * two groups may have been created. */
static int convert_to_tree(bool from_tcb)
{
	struct hs_locks locks = HS_LOCKS_INIT;
	struct pwdb pw = { 0 };
	struct spdb sp = { 0 };
	struct hs_shells sh = { 0 };
	struct group_plan g;
	struct hs_buf out = { 0 };
	_cleanup_close_ int etcfd = -1;
	_cleanup_close_ int treefd = -1;
	char tmpname[64] = "";
	enum tree_state state;
	bool source_tcb, changed;
	size_t n_proxy = 0;
	sigset_t saved;
	int r, e;

	r = convert_begin(&etcfd, &locks, true, &saved, &treefd, &state, &source_tcb);
	if (r < 0)
		return r;
	r = pwconv_handle_tree_state(etcfd, &treefd, state, source_tcb);
	if (r <= 0)
		goto out;

	/* 1. Read and validate everything; nothing has changed so far. */
	if ((r = pwconv_read_sources(from_tcb, etcfd, &pw, &sp, &sh)) < 0 ||
	    (r = pwconv_choose_proxies(&pw, &sh, &n_proxy)) < 0 ||
	    (r = plan_groups(&g, true)) < 0 ||
	    (r = pwdb_render(&pw, true, &out, &changed)) < 0)
		goto out;

	/* 2. The whole new tree, under a name nobody reads. */
	r = build_tree(etcfd, &pw, &sp, &g, from_tcb, tmpname, sizeof(tmpname));
	if (r < 0)
		goto out;

	/* 3. Groups (kept even if a later step fails: harmless, and the
	 * package's post-install creates them anyway). */
	if ((r = create_groups(&g)) < 0)
		goto out;

	/* 4. Into place. */
	if (renameat2(etcfd, tmpname, etcfd, TREE_NAME, RENAME_NOREPLACE) < 0) {
		r = -errno;
		hs_warn("cannot rename %s/%s to %s: %s", ETC_DIR, tmpname, HS_TREE_DIR,
			hs_strerror(r));
		goto out;   /* which removes the temporary tree */
	}
	tmpname[0] = '\0';
	if ((r = fsync_dir(etcfd)) < 0) {
		hs_warn("cannot sync %s: %s", ETC_DIR, hs_strerror(r));
		goto commit_failed;
	}
	/* 5. /etc/shells and /etc/passwd, one transaction.  The proxy is
	 * listed even when no account uses it yet: usermod
	 * --self-service-shell may, and pam_shells wants it listed. */
	if ((r = etc_commit(NULL, 0, &sh, true, &out, changed)) < 0)
		goto commit_failed;
	/* 6. The old hashes.  From here on we only move forward. */
	treefd = open_dir_ro(etcfd, TREE_NAME);
	if (!from_tcb) {
		if ((unlinkat(etcfd, SHADOW_BACKUP, 0) < 0 && errno != ENOENT) ||
		    (unlinkat(etcfd, SHADOW_NAME, 0) < 0 && errno != ENOENT)) {
			r = -errno;
			hs_warn("cannot remove %s: %s; run pwconv again to finish", HS_ETC_SHADOW,
				hs_strerror(r));
			goto out;
		}
		fsync_dir(etcfd);
	}
	/* 7. Done. */
	r = remove_marker(treefd, HS_CONVERT_MARK_PWCONV, "; run pwconv again to finish");
	if (r < 0)
		goto out;
	hs_globalfile_flush_caches("passwd");
	hs_globalfile_flush_caches("shadow");
	print_next_steps(pw.n, n_proxy, from_tcb);
	goto out;   /* r is 0 */

commit_failed:
	/* /etc/passwd and /etc/shells are unchanged here (one transaction,
	 * the last step that can fail), so undoing means the tree. */
	e = remove_tree(etcfd, TREE_NAME);
	if (e < 0)
		hs_warn("cannot remove %s again: %s; run pwconv again to clean up", HS_TREE_DIR,
			hs_strerror(e));
out:
	if (tmpname[0] && (e = remove_tree(etcfd, tmpname)) < 0)
		hs_warn("cannot remove %s/%s: %s", ETC_DIR, tmpname, hs_strerror(e));
	hs_strbuf_free(&out);
	hs_shells_free(&sh);
	spdb_free(&sp);
	pwdb_free(&pw);
	convert_end(&locks, &saved);
	return r;
}

/* ---------------------------------------------------------------- */
/* pwunconv */

/* Every directory in the tree must belong to a passwd user: removing the
 * tree would otherwise silently drop an account's password. */
static int check_tree_entries(int treefd, struct pwdb *pw)
{
	int r = 0;
	_cleanup_closedir_ DIR *d = list_dir(treefd, HS_TREE_DIR, &r);
	struct dirent *de;

	if (!d)
		return r;
	errno = 0;
	while (r == 0 && (de = readdir(d))) {
		if (hs_userdir_entry_is_user(de->d_name) && !pwdb_find(pw, de->d_name)) {
			hs_warn("%s/%s: user %s is not in %s; remove the directory or add the user first",
				HS_TREE_DIR, de->d_name, de->d_name, HS_ETC_PASSWD);
			r = -HS_E_FORMAT;
		}
		errno = 0;
	}
	if (r == 0 && errno) {
		r = -errno;
		hs_warn("cannot read %s: %s", HS_TREE_DIR, hs_strerror(r));
	}
	return r;
}

/* /etc/shadow next to the tree.  On a converted system systemd-sysusers
 * (and shadow-utils' useradd) write the accounts they create there, mode
 * 0000 and locked: those users have no directory in the tree, and their
 * lines go into the new /etc/shadow as they are (without them the system
 * could not be converted back, nor the package removed).  In a tree
 * without a marker, a line for a name the tree also holds, or a NIS line,
 * is a state we cannot explain (which hash is the real one?): refused.
 * After an interrupted pwunconv the file may be the one it wrote; the tree
 * stays authoritative for the users it holds. */
static int load_foreign_shadow(int treefd, struct pwdb *pw, struct spdb *sp, bool clean)
{
	int r = spdb_load_shadow(sp, pw);
	const char *both = NULL;        /* what both hold */

	if (r < 0 || !clean)
		return r;
	for (size_t i = 0; !both && i < pw->n; i++)
		if (pw->ents[i].sp >= 0 && file_exists_at(treefd, pw->ents[i].pw.name))
			both = pw->ents[i].pw.name;
	if (!both && sp->nis.len)
		both = "NIS lines";
	if (!both)
		return 0;
	hs_warn("both %s and %s hold %s: the system is half converted; "
		"move one of them away by hand (pwconv does not guess either)",
		HS_TREE_DIR, HS_ETC_SHADOW, both);
	return -EEXIST;
}

/* The commit keeps an existing file's owner and mode, and systemd-sysusers
 * makes /etc/shadow root's 0000: unix_chkpwd (setgid shadow, a screen
 * locker's check) could not read the result.  Give that file what a new
 * /etc/shadow gets (root:shadow 0640, as on Debian) before it is
 * replaced; it holds only the accounts of those tools. */
static int foreign_shadow_mode(int etcfd, gid_t shadow_gid)
{
	_cleanup_close_ int fd = openat(etcfd, SHADOW_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r = 0;

	if (fd < 0 || fstat(fd, &st) < 0 ||
	    (S_ISREG(st.st_mode) &&
	     (((st.st_uid != 0 || st.st_gid != shadow_gid) && fchown(fd, 0, shadow_gid) < 0) ||
	      ((st.st_mode & 07777) != 0640 && fchmod(fd, 0640) < 0))))
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -HS_E_FORMAT;
	if (r < 0)
		hs_warn("cannot give %s root:shadow 0640: %s", HS_ETC_SHADOW, hs_strerror(r));
	return r;
}

/* Append the /etc/shadow line of sp to out, counted in *n_users. */
static int append_spwd(struct hs_buf *out, const struct hs_spwd *sp, size_t *n_users)
{
	char *line = NULL;
	int r = hs_records_spwd_format(sp, &line);

	if (r == 0)
		r = hs_strbuf_append(out, line, strlen(line));
	hs_free_secret(line);
	if (r == 0)
		(*n_users)++;
	return r;
}

/* Build the new /etc/shadow (in passwd order, unset fields empty as
 * shadow-utils writes them) and collect the real shells of the proxy
 * users.  Any unreadable file is an error naming it: the tree is the only
 * copy of those hashes. */
static int render_shadow(int treefd, struct pwdb *pw, const struct spdb *foreign,
			 const struct hs_buf *nis, struct hs_buf *out, size_t *n_users)
{
	char path[HS_PATHBUF_MAX];
	char buf[USERBUF_SIZE];
	const char *file = NULL;
	size_t i;
	int r = 0;

	*n_users = 0;
	hs_cli_progress_start(pw->n, "users");
	for (i = 0; i <= pw->n; i++) {
		/* /etc/shadow's NIS lines where /etc/passwd has its first one */
		if (i == (pw->n_before_nis < pw->n ? pw->n_before_nis : pw->n) && nis->len &&
		    (r = hs_strbuf_append(out, nis->data, nis->len)) < 0)
			return r;
		if (i == pw->n)
			break;
		struct pw_ent *e = &pw->ents[i];
		_cleanup_close_ int ufd = -1;
		struct hs_shadow sh;
		struct hs_aging ag;
		struct hs_spwd sp;
		bool proxy = strcmp(e->pw.shell, HS_SHELL_PROXY) == 0;

		file = NULL;
		ufd = hs_userdir_open(treefd, e->pw.name, e->pw.uid, NULL);
		/* a user without a directory: the line foreign (/etc/shadow next
		 * to the tree) has for them, or none (a warning says so) */
		if (ufd == -ENOENT && !proxy && e->sp < 0) {
			hs_warn("%s has no directory in %s: no %s entry written", e->pw.name,
				HS_TREE_DIR, HS_ETC_SHADOW);
			continue;
		}
		if (ufd == -ENOENT && !proxy) {
			if ((r = append_spwd(out, &foreign->ents[e->sp].sp, n_users)) < 0)
				return r;
			continue;
		}
		if (ufd < 0) {
			r = ufd;
			goto fail;
		}
		file = HS_FILE_SHADOW;
		if ((r = hs_userdir_read_shadow(ufd, e->pw.uid, buf, sizeof(buf), &sh)) < 0)
			goto fail;
		file = HS_FILE_AGING;
		if ((r = hs_userdir_read_aging(ufd, &ag)) < 0)
			goto fail;
		file = HS_FILE_SHELL;
		if (proxy && (r = restore_shell(ufd, e)) < 0)
			goto fail;
		file = HS_FILE_SHADOW;
		sp = (struct hs_spwd){
			.name = e->pw.name, .hash = sh.hash, .lstchg = sh.lstchg,
			.min = ag.min, .max = ag.max, .warn = ag.warn, .inact = ag.inact,
			.expire = ag.expire, .flag = ag.flag, .minus_one = 0,
		};
		r = append_spwd(out, &sp, n_users);
		hs_wipe(buf, sizeof(buf));
		if (r < 0)
			goto fail;
		hs_cli_progress_step(i + 1);
	}
	hs_cli_progress_end();
	return 0;
fail:
	hs_wipe(buf, sizeof(buf));
	hs_warn("cannot read %s: %s",
		hs_userdir_path(path, sizeof(path), pw->ents[i].pw.name, file), hs_strerror(r));
	return r;
}

/* The NIS lines pwconv kept (none when the file is absent); root's file,
 * or an error naming it. */
static int read_nis_shadow(int treefd, struct hs_buf *nis)
{
	const struct hs_file_expect ex = { .uid = 0, .gid = 0, .max_size = HS_GLOBALFILE_MAX };
	char *data = NULL;
	size_t len;
	int r = hs_fileio_read_alloc_at(treefd, HS_CONVERT_NIS_SHADOW, &ex, &data, &len, NULL);

	struct hs_line_iter it;
	const char *line;
	size_t llen;

	if (r == -ENOENT)
		return 0;
	/* only whole NIS lines: anything else would land in /etc/shadow */
	if (r == 0 && (len == 0 || data[len - 1] != '\n' || memchr(data, '\0', len)))
		r = -HS_E_FORMAT;
	hs_strbuf_lines_init(&it, data, len);
	while (r == 0 && hs_strbuf_line_next(&it, &line, &llen))
		if (!hs_records_nis_line(line, llen))
			r = -HS_E_FORMAT;
	if (r == 0)
		r = hs_strbuf_append(nis, data, len);
	hs_free_secret(data);
	if (r < 0)
		hs_warn("cannot read %s/%s: %s", HS_TREE_DIR, HS_CONVERT_NIS_SHADOW,
			hs_strerror(r));
	return r;
}

/* tree -> classic.  Same conventions. */
static int convert_to_classic(void)
{
	struct hs_locks locks = HS_LOCKS_INIT;
	struct pwdb pw = { 0 };
	struct hs_shells sh = { 0 };
	struct group_plan g;
	struct hs_buf shadow = { 0 }, passwd = { 0 }, nis = { 0 };
	struct spdb foreign = { 0 };
	_cleanup_close_ int etcfd = -1;
	_cleanup_close_ int treefd = -1;
	enum tree_state state;
	bool source_tcb, changed, shadow_existed;
	size_t n_users = 0;
	sigset_t saved;
	int r;

	r = convert_begin(&etcfd, &locks, false, &saved, &treefd, &state, &source_tcb);
	if (r < 0)
		return r;
	shadow_existed = file_exists_at(etcfd, SHADOW_NAME);
	switch (state) {
	case TREE_ABSENT:
		hs_warn("nothing to do: %s does not exist", HS_TREE_DIR);
		r = 0;
		goto out;
	case TREE_CLEAN:
		/* an /etc/shadow beside it is checked once both are read */
		break;
	case TREE_PWUNCONV:
		/* Redo everything from the tree, which is still authoritative. */
		hs_warn("finishing an interrupted pwunconv");
		break;
	case TREE_PWCONV:
		if (source_tcb || shadow_existed) {
			r = rollback_pwconv(etcfd, treefd, source_tcb);
			goto out;
		}
		/* pwconv had finished all but dropping its marker. */
		if ((r = remove_marker(treefd, HS_CONVERT_MARK_PWCONV, "")) < 0)
			goto out;
		break;
	}

	/* 1. Read everything. */
	if ((r = pwdb_load(&pw)) < 0 ||
	    (r = check_tree_entries(treefd, &pw)) < 0)
		goto out;
	/* after an interrupted run the file may be anything we wrote or
	 * found: what it has that we cannot read is not carried over */
	if (shadow_existed &&
	    (r = load_foreign_shadow(treefd, &pw, &foreign, state == TREE_CLEAN)) < 0) {
		if (state == TREE_CLEAN)
			goto out;
		spdb_free(&foreign);
		for (size_t i = 0; i < pw.n; i++)
			pw.ents[i].sp = -1;
	}
	if ((r = read_nis_shadow(treefd, &nis)) < 0 ||
	    (r = render_shadow(treefd, &pw, &foreign, &nis, &shadow, &n_users)) < 0 ||
	    (r = pwdb_render(&pw, false, &passwd, &changed)) < 0 ||
	    (r = plan_groups(&g, false)) < 0 ||
	    (r = shells_load(&sh)) < 0)
		goto out;

	/* 2. Marker: from here on, a crash is finished by the next pwunconv. */
	if (state != TREE_PWUNCONV) {
		r = write_marker(treefd, HS_CONVERT_MARK_PWUNCONV, SOURCE_SHADOW);
		if (r < 0) {
			hs_warn("cannot write %s/%s: %s", HS_TREE_DIR, HS_CONVERT_MARK_PWUNCONV,
				hs_strerror(r));
			goto out;
		}
	}
	/* 3. /etc/shadow (root:shadow 0640 as Debian ships it), /etc/shells
	 * without the proxy and /etc/passwd with the real shells: one
	 * transaction, so a failure leaves none of them changed. */
	if ((shadow_existed && (r = foreign_shadow_mode(etcfd, g.shadow_gid)) < 0) ||
	    (r = etc_commit(&shadow, g.shadow_gid, &sh, false, &passwd, changed)) < 0) {
		if (state != TREE_PWUNCONV)
			remove_marker(treefd, HS_CONVERT_MARK_PWUNCONV, NULL);
		goto out;
	}
	/* 4. The tree goes, marker and all. */
	hs_close(TAKE_FD(treefd));
	r = remove_tree(etcfd, TREE_NAME);
	if (r < 0) {
		/* The classic files are complete; only a directory is left. */
		hs_warn("cannot remove %s: %s; run pwunconv again to finish", HS_TREE_DIR,
			hs_strerror(r));
		goto out;
	}
	hs_globalfile_flush_caches("passwd");
	hs_globalfile_flush_caches("shadow");
	printf("%s: wrote %zu entries to %s and removed %s.\n"
	       "Put pam_unix.so back in /etc/pam.d and \"shadow: files\" in /etc/nsswitch.conf.\n",
	       hs_cli_prog(), n_users, HS_ETC_SHADOW, HS_TREE_DIR);
	r = 0;
out:
	hs_strbuf_free(&passwd);
	hs_strbuf_free(&shadow);    /* wipes the hashes */
	hs_strbuf_free(&nis);
	spdb_free(&foreign);
	hs_shells_free(&sh);
	pwdb_free(&pw);
	convert_end(&locks, &saved);
	return r;
}

/* ---------------------------------------------------------------- */
/* pwconv and pwunconv: one main, two directions. */

/* Exit codes: shadow-utils' pwconv(8) and pwunconv(8) document none; we
 * use 0 success, 1 failure (nothing changed) and 2 for bad usage, as its
 * other tools do. */
#define CONVERT_EXIT_USAGE 2

static _Noreturn void convert_usage(FILE *f, int status, bool to_tree)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"\n"
		"Move the password hashes, aging data and login shells from%s\n"
		"%s.\n"
		"\n"
		"Options:\n"
		"%s"
		"  -h, --help                    display this help message and exit\n"
		"  -V, --version                 display the version and exit\n",
		hs_cli_prog(), to_tree ? " /etc/shadow" : "",
		to_tree ? "(or /etc/tcb) into /etc/hardened-shadow"
			: "/etc/hardened-shadow back into /etc/shadow and /etc/passwd",
		to_tree ? "      --from-tcb                import /etc/tcb/USER/shadow instead of "
			  "/etc/shadow\n" : "");
	exit(status);
}

int hs_convert_main(int argc, char **argv, bool to_tree)
{
	static const struct option longopts[] = {
		{ "from-tcb", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "root", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog = to_tree ? "pwconv" : "pwunconv";
	bool from_tcb = false;
	int c, r;

	hs_cli_set_prog(hs_privs_init(argc, argv, prog));
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	/* pwunconv has no --from-tcb: skip its entry */
	while ((c = getopt_long(argc, argv, "hVR:", longopts + !to_tree, NULL)) != -1) {
		switch (c) {
		case 't':
			from_tcb = true;
			break;
		case 'h':
			convert_usage(stdout, 0, to_tree);
		case 'V':
			hs_print_version();
		case 'R':
			hs_die(CONVERT_EXIT_USAGE, "option --root is not supported; run %s inside "
			       "the root instead (chroot %s %s)", prog, optarg, prog);
		default:
			convert_usage(stderr, CONVERT_EXIT_USAGE, to_tree);
		}
	}
	if (optind < argc) {
		hs_warn("unexpected argument: %s", argv[optind]);
		convert_usage(stderr, CONVERT_EXIT_USAGE, to_tree);
	}
	if (!hs_privs_caller_is_root())
		hs_die(1, "permission denied: only root may convert the account files");
	/* from here the kernel lets the conversion write /etc only */
	hs_confine_to_etc(1);
	r = to_tree ? convert_to_tree(from_tcb) : convert_to_classic();
	return r < 0 ? 1 : 0;
}
