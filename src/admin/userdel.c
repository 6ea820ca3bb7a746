/* userdel: delete a user account and the files that belong to it.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' userdel(8); where we differ on purpose, userdel(8)
 * of this package says so.
 *
 * Under the global locks (DESIGN §4) it removes the user's line from
 * /etc/passwd and /etc/shadow, the user from every member and
 * administrator list of /etc/group and /etc/gshadow, the private group
 * (USERGROUPS_ENAB) unless someone still needs it, and the user's ranges
 * in /etc/subuid and /etc/subgid; it removes the user's directory in the
 * tree, and with -r the home directory and the mail spool.
 *
 * Order of the commit, chosen for interruption (SIGKILL, a crash) at any
 * instant: the complete old state or the complete new one, through the
 * transaction journal of the global files (lib/etc/txn.h), which carries
 * the removals as its work:
 *   1. everything is loaded, checked and edited in memory first, and the
 *      user's directory, the mail spool and the home are checked and named
 *      (device and inode); a refusal changes nothing;
 *   2. the commit point: the journal names the global files and what is
 *      to be removed; then the files are installed, the user's directory
 *      removed (taken away and renamed to a reserved name in one step, so
 *      the name vanishes atomically), then the spool and the home (taken
 *      away, then removed through the one walker);
 *   3. a kill before the commit point leaves the old state; from it on,
 *      the next tool that takes the locks (or a rerun) finishes the
 *      removals, and a rerun then says the user does not exist.
 * The home is removed under the global locks, as shadow-utils' userdel
 * does.  A home that cannot be removed (a mount inside, not the user's)
 * does not keep the account: exit 12 tells, and the home is left as it
 * was; an account must never be left
 * half-deleted because a home directory could not be removed. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "groupops.h"
#include "homepath.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "txn.h"
#include "userdir.h"
#include "usertool-common.h"
#include "util.h"
#include "walk.h"

static bool opt_force, opt_remove;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] LOGIN",
		"  -f, --force                   force some actions that would fail otherwise\n"
		"                                e.g. removal of user still logged in\n"
		"                                or files, even if not owned by the user\n"
		"  -h, --help                    display this help message and exit\n"
		"  -r, --remove                  remove home directory and mail spool\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -P, --prefix PREFIX_DIR       prefix directory (not supported)\n"
		"  -Z, --selinux-user            remove any SELinux user mapping (not supported)\n"
		"      --selinux-range           remove any SELinux MLS range (not supported)\n",
		"\n");
}

/* The options; returns the login name (not checked yet). */
static const char *parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "force",        no_argument,       NULL, 'f' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "remove",       no_argument,       NULL, 'r' },
		{ "root",         required_argument, NULL, 'R' },
		{ "prefix",       required_argument, NULL, 'P' },
		{ "selinux-user", no_argument,       NULL, 'Z' },
		{ "selinux-range", no_argument,       NULL, 'Z' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "fhrR:P:Z", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			opt_force = true;
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'r':
			opt_remove = true;
			break;
		case 'Z':
		case 'R':
		case 'P':
			usertool_die_unsupported(c, optarg);
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (argc != optind + 1)
		usage(E_USAGE);
	return argv[optind];
}

/* ---- USERDEL_CMD ---- */

static _Noreturn void die_not_found(const char *name)
{
	hs_auditlog_acct(AUDIT_DEL_USER, HS_AUDIT_OP_DEL_NOT_FOUND, name, HS_AUDITLOG_NO_ID,
			 false);
	hs_die(E_NOTFOUND, "user '%s' does not exist", name);
}

/* A cheap early answer for a name that is not there, before USERDEL_CMD
 * runs (only then: without it the answer under the locks is the same);
 * the real decision is taken under the locks. */
static void die_if_not_in_passwd(const char *name)
{
	struct hs_accountdb pre = HS_ACCOUNTDB_INIT;
	bool absent = hs_accountdb_load(&pre, HS_DB_PASSWD, HS_ETC_PASSWD, HS_DB_LAZY) == 0 &&
		      hs_accountdb_find(&pre, name) < 0 && !pre.error[0];

	hs_accountdb_free(&pre);
	if (absent)
		die_not_found(name);
}

/* shadow-utils runs login.defs' USERDEL_CMD with the login name before
 * deleting the account (to remove at jobs, print jobs ...).  Run before
 * any lock is taken, so the command may use account tools itself. */
static void run_userdel_cmd(const char *cmd, const char *user)
{
	pid_t pid;
	int status;

	if (!cmd || !cmd[0])
		return;
	die_if_not_in_passwd(user);
	if (cmd[0] != '/') {
		hs_warn("USERDEL_CMD %s is not an absolute path, not running it", cmd);
		return;
	}
	pid = fork();
	if (pid < 0) {
		hs_warn("cannot run USERDEL_CMD %s: %s", cmd, strerror(errno));
		return;
	}
	if (pid == 0) {
		execl(cmd, cmd, user, (char *)NULL);
		fprintf(stderr, "%s: cannot run USERDEL_CMD %s: %s\n", hs_cli_prog(), cmd,
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		hs_warn("USERDEL_CMD %s failed for user %s", cmd, user);
}

/* ---- the global files (lib/accountset: locks, load, ordered commit) ---- */

/* shadow-utils' remove_usergroup(): the group named like the user goes
 * when it is the user's primary group, has no other members and is nobody
 * else's primary group.  Unlike shadow-utils, -f does not remove a group
 * that is still another user's primary group: that would leave the other
 * account with a gid that names nothing (or, once reused, a new group). */
static int drop_private_group(struct hs_accountset *s, const char *user, gid_t gid)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	struct hs_accountdb *gr = hs_accountset_db(s, HS_AS_GROUP);
	const union hs_dbrec *rec;
	long gi = hs_accountdb_find(gr, user);
	char gidstr[24];
	size_t glen;
	int r;

	if (gi < 0)
		return 0;
	rec = hs_accountdb_get(gr, (size_t)gi);
	if (rec->gr.gid != gid) {
		hs_warn("group %s not removed because it is not the primary group of user %s.",
			rec->gr.name, user);
		return 0;
	}
	/* the user has been dropped from the list already */
	if (rec->gr.members && rec->gr.members[0]) {
		hs_warn("group %s not removed because it has other members.", rec->gr.name);
		return 0;
	}
	/* the gid field as the file spells it (decimal, checked at load):
	 * ":GID:" found as text, then the field compared; no record built */
	glen = (size_t)snprintf(gidstr, sizeof(gidstr), ":%lu:", (unsigned long)gid);
	for (long i = 0; (i = hs_accountdb_find_text(pw, (size_t)i, gidstr, glen)) >= 0; i++) {
		size_t len;
		const char *f = hs_accountdb_field(pw, (size_t)i, 3, &len);

		if (f && len == glen - 2 && memcmp(f, gidstr + 1, len) == 0) {
			hs_warn("group %s is the primary group of another user and is not removed.",
				rec->gr.name);
			return 0;
		}
	}
	r = hs_groupops_delete(s, (size_t)gi);
	return r < 0 ? usertool_warn(r, "%s", s->error) : 0;
}

/* Every range of file f owned by the user, by name or by number (the
 * number only when no other account shares the uid). */
static int drop_subids(struct hs_accountset *s, enum hs_as_file f, const char *user,
		       const char *uidstr)
{
	struct hs_accountdb *db = hs_accountset_db(s, f);
	const char *owners[2] = { user, uidstr };

	for (size_t k = 0; db && k < HS_ARRAY_SIZE(owners) && owners[k]; k++) {
		for (long i = hs_accountdb_find_next(db, owners[k], 0); i >= 0;
		     i = hs_accountdb_find_next(db, owners[k], (size_t)i + 1)) {
			if (hs_accountdb_delete(db, (size_t)i) < 0)
				return usertool_warn(-EIO, "%s", db->error);
		}
	}
	return 0;
}

/* ---- the commit's work (lib/etc/txn.h) ---- */

/* What goes with the account: the user's directory, and with -r the mail
 * spool and the home.  Each is checked and named before the commit; the
 * commit removes them after the global files are written, and a kill
 * from its commit point on is finished by the next tool's recovery. */
struct userdel_work {
	struct hs_txn_work w[3];
	size_t n;
	char tree_path[HS_PATHBUF_USER];
	char spool_path[HS_PATHBUF_MAX];
	struct hs_txn_work *home, *spool;
};

static struct hs_txn_work *add_removal(struct userdel_work *uw, enum hs_txn_work_kind kind,
				       const char *path, int parentfd, const struct stat *st)
{
	struct hs_txn_work *w = &uw->w[uw->n];
	struct stat parent;

	if (fstat(parentfd, &parent) < 0)
		return NULL;
	*w = (struct hs_txn_work){
		.kind = kind, .path = path, .uid = st->st_uid, .gid = st->st_gid,
		.mode = st->st_mode & 07777,
		.parent = { parent.st_dev, parent.st_ino }, .self = { st->st_dev, st->st_ino },
		/* a recovery removes what this run would: a home others name */
		.force = opt_force && kind == HS_TXN_HOME_DEL,
	};
	uw->n++;
	return w;
}

/* The user's directory in the tree, if there is one.  0, or a negative
 * error (said). */
static int plan_tree_dir(const char *user, struct userdel_work *uw)
{
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	struct stat st;

	if (treefd == -ENOENT)
		return 0;       /* no tree: a classic system */
	hs_userdir_path(uw->tree_path, sizeof(uw->tree_path), user, NULL);
	if (treefd < 0)
		return usertool_warn(treefd, "cannot open %s: %s", HS_TREE_DIR,
				     hs_strerror(treefd));
	if (fstatat(treefd, user, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;       /* gone already: a rerun */
	if (!add_removal(uw, HS_TXN_TREE_DEL, uw->tree_path, treefd, &st))
		return usertool_warn(-errno, "cannot open %s: %s", HS_TREE_DIR, strerror(errno));
	return 0;
}

/* ---- the home directory and the mail spool ---- */

/* The account, from its /etc/passwd line: our own copies of the strings
 * (the db's stay valid, but be plain). */
struct userdel_account {
	size_t idx;             /* the line */
	char *user, *home;
	char *norm_home;        /* hs_homepath_normalise(home) */
	uid_t uid;
	gid_t gid;
};

/* Is the home also another account's home? */
static const char *home_shared_with(struct hs_accountdb *pw, const char *user, const char *home)
{
	/* the user's own line is deleted already: every live line is
	 * someone else */
	for (size_t i = 0; i < pw->n_lines; i++) {
		const union hs_dbrec *p = hs_accountdb_get(pw, i);
		_cleanup_free_ char *other = NULL;

		if (!p || strcmp(p->pw.name, user) == 0)
			continue;
		other = hs_homepath_normalise(p->pw.dir);
		if (other && strcmp(other, home) == 0)
			return p->pw.name;
	}
	return NULL;
}

/* The home is the user's, and hostile: the commit's walk (lib/etc
 * txnwork.c) removes it relative to directory fds and follows nothing
 * the user could have planted; a home that is a symlink loses the link
 * only.  The home is taken away from the user (root:root 0700) before it
 * is emptied, so a process of the user's (with -f) cannot add to it or
 * move things around in it; the removal never crosses into another mount,
 * and a mount inside refuses it.  Here: the checks, before the commit. */
static int plan_home(struct hs_accountdb *pw, const struct userdel_account *a,
		     struct userdel_work *uw)
{
	const char *home = a->norm_home, *dir = a->home, *user = a->user;
	_cleanup_close_ int parentfd = -1;
	const char *last, *other;
	struct stat st;
	int r;

	if (!home)
		return usertool_warn(E_HOMEDIR, "not removing directory %s: not an absolute path "
				     "without '..'", dir);
	if (!home[0])
		return usertool_warn(E_HOMEDIR, "not removing directory %s (would remove the "
				     "root directory)", dir);
	other = home_shared_with(pw, user, home);
	if (other && !opt_force)
		return usertool_warn(E_HOMEDIR, "not removing directory %s (would remove home of "
				     "user %s)", dir, other);
	parentfd = hs_homepath_parent_at(home, a->uid, &last);
	/* a file system mounted on the home itself: never touched, said as
	 * the commit's walk and the recovery say it (looked at first: a FUSE
	 * mount there refuses root the stat below, EACCES or ENOTCONN) */
	if (parentfd >= 0 && hs_walk_is_mount_point(parentfd, last))
		return usertool_warn(E_HOMEDIR, "not removing directory %s: a file system is "
				     "mounted at %s", dir, dir);
	r = parentfd;
	if (parentfd >= 0)
		r = fstatat(parentfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (r == -ENOENT)
		return usertool_warn(E_SUCCESS, "%s home directory (%s) not found", user, dir);
	if (parentfd < 0)
		return usertool_warn(E_HOMEDIR, "not removing directory %s: %s", dir,
				     hs_homepath_parent_error(r));
	if (r < 0)
		return usertool_warn(E_HOMEDIR, "cannot remove %s: %s", dir, hs_strerror(r));
	if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode))
		return usertool_warn(E_HOMEDIR, "not removing %s: %s", dir,
				     hs_strerror(-HS_E_NOTDIR));
	if (S_ISDIR(st.st_mode) && st.st_uid != a->uid && !opt_force)
		return usertool_warn(E_HOMEDIR, "%s not owned by %s, not removing", dir, user);
	uw->home = add_removal(uw, HS_TXN_HOME_DEL, home, parentfd, &st);
	if (!uw->home)
		return usertool_warn(E_HOMEDIR, "cannot remove %s: %s", dir, strerror(errno));
	return E_SUCCESS;
}

/* After the commit: what became of the home. */
static int report_home(const char *user, const char *dir, const struct hs_txn_work *w)
{
	if (!w || w->result == 0) {
		if (w)
			syslog(LOG_INFO, "removed home directory '%s' of user '%s'", dir, user);
		return E_SUCCESS;
	}
	/* a mount or what else the user has inside (where) keeps it */
	if (hs_txn_work_kept_because(w))
		return usertool_warn(E_HOMEDIR, "not removing directory %s: %s at %s%s%s", dir,
				     hs_txn_work_kept_because(w), dir, w->where[0] ? "/" : "",
				     w->where);
	/* its name holds another directory now (whoever owns its parent
	 * renamed them): nothing removed there, the home left where it went */
	if (w->result == -ESTALE)
		return usertool_warn(E_HOMEDIR, "not removing directory %s: it was replaced by "
				     "another directory during the removal; left alone", dir);
	return usertool_warn(E_HOMEDIR, "error removing directory %s: %s", dir,
			     hs_strerror(w->result));
}

/* MAIL_DIR/USER: a regular file of the user's (or, with -f, anyone's);
 * a symlink there loses the link only. */
static void plan_mail_spool(const struct hs_config *cfg, const char *user, uid_t uid,
			    struct userdel_work *uw)
{
	const char *maildir = usertool_mail_dir(cfg);
	_cleanup_close_ int dirfd = -1;
	char *path = uw->spool_path;
	struct stat st;

	snprintf(path, sizeof(uw->spool_path), "%s/%s", maildir, user);
	if (maildir[0] != '/') {
		/* the journal names absolute paths only */
		hs_warn("not removing %s: MAIL_DIR is not an absolute path", path);
		return;
	}
	dirfd = open(maildir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0 && hs_walk_is_mount_point(dirfd, user)) {
		/* as the home: never touched */
		hs_warn("not removing %s: a file system is mounted at %s", path, path);
		return;
	}
	if (dirfd < 0 || fstatat(dirfd, user, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			hs_warn("%s mail spool (%s) not found", user, path);
		else
			hs_warn("cannot remove %s: %s", path, strerror(errno));
		return;
	}
	if (!S_ISLNK(st.st_mode)) {
		if (!S_ISREG(st.st_mode)) {
			hs_warn("%s is not a regular file, not removing", path);
			return;
		}
		if (st.st_uid != uid && !opt_force) {
			hs_warn("%s not owned by %s, not removing", path, user);
			return;
		}
	}
	uw->spool = add_removal(uw, HS_TXN_HOME_DEL, path, dirfd, &st);
	if (!uw->spool)
		hs_warn("cannot remove %s: %s", path, strerror(errno));
}

/* Under the locks: every edit, in memory.  E_SUCCESS, or the exit status
 * after saying why. */
static int edit_files(struct hs_accountset *s, const struct hs_config *cfg,
		      const struct userdel_account *a)
{
	const char *user = a->user;
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	struct hs_accountdb *sp = hs_accountset_db(s, HS_AS_SHADOW);
	char uidstr[24];
	bool uid_shared;

	if (hs_accountdb_delete(pw, a->idx) < 0)
		return usertool_warn(E_PW_UPDATE, "%s", pw->error);
	if (sp) {
		long si = hs_accountdb_find(sp, user);

		if (si >= 0 && hs_accountdb_delete(sp, (size_t)si) < 0)
			return usertool_warn(E_PW_UPDATE, "%s", sp->error);
	}
	if (hs_accountset_forget_user(s, user) < 0)
		return usertool_warn(E_GRP_UPDATE, "%s", s->error);
	if (hs_config_get_bool(cfg, "USERGROUPS_ENAB", false) &&
	    drop_private_group(s, user, a->gid) < 0)
		return E_GRP_UPDATE;
	uid_shared = hs_accountdb_find_id(pw, a->uid) >= 0;
	snprintf(uidstr, sizeof(uidstr), "%lu", (unsigned long)a->uid);
	if (drop_subids(s, HS_AS_SUBUID, user, uid_shared ? NULL : uidstr) < 0 ||
	    drop_subids(s, HS_AS_SUBGID, user, uid_shared ? NULL : uidstr) < 0)
		return E_PW_UPDATE;
	return E_SUCCESS;
}

/* The memberships of user in the group file db (members only, as
 * shadow-utils counts them for its audit events). */
static size_t count_memberships(struct hs_accountdb *db, const char *user)
{
	size_t n = 0, ulen = strlen(user);

	/* only the lines that hold the name are parsed */
	for (long i = 0; db && (i = hs_accountdb_find_text(db, (size_t)i, user, ulen)) >= 0; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(db, (size_t)i);
		const char *members = !rec ? NULL : db->kind == HS_DB_GROUP ? rec->gr.members
									     : rec->gs.members;

		if (members && hs_records_list_contains(members, user))
			n++;
	}
	return n;
}

/* The audit events of shadow-utils' userdel, in its order: the entries,
 * each membership in group, the private group, each in gshadow, the home. */
struct userdel_audit {
	size_t in_group, in_gshadow;
	bool private_group, gshadow;
};

static void audit_deleted(const struct userdel_audit *a, const char *user, uid_t uid,
			  bool home_removed)
{
	hs_auditlog_acct(AUDIT_DEL_USER, HS_AUDIT_OP_DEL_ENTRIES, NULL, uid, true);
	for (size_t i = 0; i < a->in_group; i++)
		hs_auditlog_acct(AUDIT_DEL_USER, HS_AUDIT_OP_DEL_FROM_GROUP, NULL, uid, true);
	if (a->private_group) {
		hs_auditlog_acct(AUDIT_DEL_GROUP, HS_AUDIT_OP_DEL_GROUP, user, HS_AUDITLOG_NO_ID,
				 true);
		if (a->gshadow)
			hs_auditlog_acct(AUDIT_DEL_GROUP, HS_AUDIT_OP_DEL_GSHADOW_GROUP, user,
					 HS_AUDITLOG_NO_ID, true);
	}
	for (size_t i = 0; i < a->in_gshadow; i++)
		hs_auditlog_acct(AUDIT_DEL_USER, HS_AUDIT_OP_DEL_FROM_GSHADOW, NULL, uid, true);
	if (home_removed)
		hs_auditlog_acct(AUDIT_DEL_USER, HS_AUDIT_OP_DEL_HOME, NULL, uid, true);
}

/* Under the locks: the account named, or exit 6. */
static void find_account(struct hs_accountset *s, const char *name, struct userdel_account *a)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	long idx;
	const struct hs_passwd *ent;

	pw->error[0] = '\0';
	idx = hs_accountdb_find(pw, name);
	/* the line of that name does not parse: said, as useradd says it */
	if (idx < 0 && pw->error[0]) {
		char why[sizeof(pw->error)];

		memcpy(why, pw->error, sizeof(why));
		hs_accountset_close(s);
		hs_die(E_PW_UPDATE, "%s", why);
	}
	if (idx < 0) {
		hs_accountset_close(s);
		die_not_found(name);
	}
	ent = &hs_accountdb_get(pw, (size_t)idx)->pw;
	a->idx = (size_t)idx;
	a->user = strdup(ent->name);
	a->home = strdup(ent->dir);
	a->uid = ent->uid;
	a->gid = ent->gid;
	a->norm_home = a->home ? hs_homepath_normalise(a->home) : NULL;
	if (!a->user || !a->home) {
		hs_accountset_close(s);
		hs_die(E_PW_UPDATE, "out of memory");
	}
}

/* Every edit, in memory, and what the audit events will say of them. */
static int plan_edits(struct hs_accountset *s, const struct hs_config *cfg,
		      const struct userdel_account *a, struct userdel_audit *audit)
{
	struct hs_accountdb *gr = hs_accountset_db(s, HS_AS_GROUP);
	struct hs_accountdb *gs = hs_accountset_db(s, HS_AS_GSHADOW);
	bool had_group = hs_accountdb_find(gr, a->user) >= 0;
	int status;

	audit->in_group = count_memberships(gr, a->user);
	audit->in_gshadow = count_memberships(gs, a->user);
	audit->gshadow = gs != NULL;
	status = edit_files(s, cfg, a);
	audit->private_group = had_group && hs_accountdb_find(gr, a->user) < 0;
	return status;
}

/* The commit (see the top of the file for the order), then what became
 * of the removals. */
static int commit(struct hs_accountset *s, const struct userdel_account *a,
		  struct userdel_work *uw, const struct userdel_audit *audit,
		  int home_status)
{
	int r, status = E_SUCCESS;
	sigset_t saved;

	hs_privs_block_signals(&saved);
	r = usertool_commit(s, uw->w, uw->n);
	hs_privs_restore_signals(&saved);
	if (r < 0)
		return usertool_file_status(s->failed);
	syslog(LOG_INFO, "delete user '%s'", a->user);
	audit_deleted(audit, a->user, a->uid, opt_remove && home_status == E_SUCCESS && uw->home);
	if (uw->n && uw->w[0].kind == HS_TXN_TREE_DEL && uw->w[0].result < 0)
		status = usertool_warn(E_PW_UPDATE, "cannot remove %s: %s", uw->tree_path,
				       hs_strerror(uw->w[0].result));
	if (uw->spool && uw->spool->result == -EXDEV)
		hs_warn("not removing %s: a file system is mounted at %s", uw->spool_path,
			uw->spool_path);
	else if (uw->spool && uw->spool->result < 0)
		hs_warn("cannot remove %s: %s", uw->spool_path, hs_strerror(uw->spool->result));
	if (opt_remove && home_status == E_SUCCESS)
		home_status = report_home(a->user, a->home, uw->home);
	if (opt_remove && home_status != E_SUCCESS)
		status = home_status;
	return status;
}

int main(int argc, char **argv)
{
	struct hs_accountset set = HS_ACCOUNTSET_INIT;
	struct userdel_account a = { .user = NULL };
	struct userdel_work uw = { .n = 0 };
	struct userdel_audit audit = { .in_group = 0 };
	int status, home_status = E_SUCCESS;
	struct hs_config *cfg;
	const char *name;

	usertool_init(argc, argv, "userdel");
	name = parse_options(argc, argv);
	usertool_start();
	/* an invalid name names no account, and never reaches a path */
	if (!hs_names_user_valid(name))
		die_not_found(name);
	cfg = usertool_load_logindefs();
	run_userdel_cmd(hs_config_get_str(cfg, "USERDEL_CMD", NULL), name);

	if (hs_accountset_open(&set, HS_AS_ALL_FILES, HS_DB_LAZY) < 0)
		hs_die(usertool_file_status(set.failed), "%s", set.error);
	find_account(&set, name, &a);
	if (!opt_force)
		usertool_die_if_busy(&set, a.user, a.uid);
	/* after the busy check: confined, it could not follow the
	 * /proc/PID/root of processes outside its domain.  With -r, the home
	 * and the right to remove it from its parent. */
	usertool_confine(usertool_mail_dir(cfg), NULL, false, opt_remove ? a.home : NULL, NULL);

	status = plan_edits(&set, cfg, &a, &audit);
	/* what goes with the account, checked and named */
	if (status == E_SUCCESS && plan_tree_dir(a.user, &uw) < 0)
		status = E_PW_UPDATE;
	if (status == E_SUCCESS && opt_remove) {
		plan_mail_spool(cfg, a.user, a.uid, &uw);
		home_status = plan_home(hs_accountset_db(&set, HS_AS_PASSWD), &a, &uw);
	}
	if (status == E_SUCCESS)
		status = commit(&set, &a, &uw, &audit, home_status);
	hs_accountset_close(&set);
	hs_config_free(cfg);
	closelog();
	free(a.user);
	free(a.home);
	free(a.norm_home);
	return status;
}
