/* usermod: modify a user account.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' usermod(8); where we differ on purpose, usermod(8)
 * of this package says so.
 *
 * Everything is decided first: the global files are locked (DESIGN §4) and
 * loaded, every option is checked and applied in memory, and a refusal
 * changes nothing.  Then the commit, in this order:
 *
 *   1. the user's own files in the tree (-L -U -p -e -f, and the shell file
 *      for a listed -s), each replaced atomically under the user's write
 *      lock, still owned by the old uid;
 *   2. with -d -m, the home is renamed (same file system only);
 *   3. with -l or -u, the user's directory is restructured (DESIGN §3): it
 *      is taken away from the user (root:root 0700); with -u shadow and
 *      shell get the new uid; with -l it is renamed to the reserved name
 *      ".usermod-l.NEW" (RENAME_NOREPLACE); with -u (or -g) the home is
 *      taken away too, and marked (TAKEN_XATTR);
 *   4. the global files (lib/accountset: one transaction, /etc/passwd
 *      last);
 *   5. with -l the reserved name is renamed to NEW (RENAME_NOREPLACE);
 *      then the directory is handed back (uid:auth 02710);
 *   6. with -u, the home's files and the mail spool owned by the old uid are
 *      re-owned, and the home handed back (signals wait meanwhile; a rerun
 *      finishes a run killed from step 4 on, see TAKEN_XATTR).
 *
 * Why this order for -l: at no instant is there a directory under a user
 * name that /etc/passwd does not have.  Until step 4 /etc/passwd has OLD
 * and the directory is OLD (or reserved); after step 4 it has NEW and the
 * directory is reserved (or NEW).  A reserved name is never served by the
 * NSS module, and a passwd line without a directory fails closed (no hash,
 * expired).  Renaming OLD straight to NEW before /etc/passwd changed would
 * leave, after a crash, a directory NEW that passwd does not know: the NSS
 * module would serve its hash to whoever is created as NEW next.  A rerun
 * of the same command after an interruption finds the reserved directory
 * and finishes the job (recover_rename_after_passwd()).  The user's
 * subordinate ranges are renamed in step 4, in the same transaction as
 * /etc/passwd. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "fileio.h"
#include "homepath.h"
#include "logrecords.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "shells.h"
#include "userdir.h"
#include "usertool-common.h"
#include "util.h"
#include "walk.h"
#include "txn.h"

#define RESERVED_PREFIX ".usermod-l."

static struct {
	bool append, remove, move_home, non_unique, lock, unlock;
	const char *comment, *home, *expire, *inactive, *group, *groups;
	const char *login, *password, *shell, *uid;
	int self_service;       /* --self-service-shell 1, --no-self-service-shell -1 */
} o;

/* parsed values */
static long new_expire, new_inactive;
static uid_t new_uid;

/* What the audit events report, noted while the change is staged: the
 * membership changes in the group file's order ('a' added, 'r' removed,
 * 'n' renamed; NULL with n set: n renames, which -l alone notes without
 * allocating, so that no allocation failure can drop their events), and
 * whether the hash changes. */
static struct {
	char *groups;
	size_t n;
	bool hash;
} changed;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] LOGIN",
		"  -a, --append                  append the user to the supplemental GROUPS\n"
		"                                mentioned by the -G option without removing\n"
		"                                the user from other groups\n"
		"  -b, --badname                 allow bad names (not supported)\n"
		"  -c, --comment COMMENT         new value of the GECOS field\n"
		"  -d, --home HOME_DIR           new home directory for the user account\n"
		"  -e, --expiredate EXPIRE_DATE  set account expiration date to EXPIRE_DATE\n"
		"  -f, --inactive INACTIVE       set password inactive after expiration\n"
		"                                to INACTIVE\n"
		"  -g, --gid GROUP               force use GROUP as new primary group\n"
		"  -G, --groups GROUPS           new list of supplementary GROUPS\n"
		"  -h, --help                    display this help message and exit\n"
		"  -l, --login NEW_LOGIN         new value of the login name\n"
		"  -L, --lock                    lock the user account\n"
		"  -m, --move-home               move contents of the home directory to the\n"
		"                                new location (use only with -d)\n"
		"  -o, --non-unique              allow using duplicate (non-unique) UID\n"
		"  -p, --password PASSWORD       use encrypted password for the new password\n"
		"  -P, --prefix PREFIX_DIR       prefix directory (not supported)\n"
		"  -r, --remove                  remove the user from only the supplemental GROUPS\n"
		"                                mentioned by the -G option without removing\n"
		"                                the user from other groups\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -s, --shell SHELL             new login shell for the user account\n"
		"      --self-service-shell      let the user change their shell with chsh\n"
		"                                (/etc/passwd names the shell proxy)\n"
		"      --no-self-service-shell   keep the real shell in /etc/passwd\n"
		"  -u, --uid UID                 new UID for the user account\n"
		"  -U, --unlock                  unlock the user account\n"
		"  -v, --add-subuids FIRST-LAST  add range of subordinate uids\n"
		"  -V, --del-subuids FIRST-LAST  remove range of subordinate uids\n"
		"  -w, --add-subgids FIRST-LAST  add range of subordinate gids\n"
		"  -W, --del-subgids FIRST-LAST  remove range of subordinate gids\n"
		"  -Z, --selinux-user SEUSER     new SELinux user mapping (not supported)\n"
		"      --selinux-range SERANGE   new SELinux MLS range (not supported)\n",
		"\n");
}

/* ---- subordinate id options (-v -V -w -W) ---- */

struct subid_range {
	unsigned long first, last;
};

/* The ranges of -v, -V, -w, -W, in the order given: [0] /etc/subuid,
 * [1] /etc/subgid; then [0] -V/-W (removed), [1] -v/-w (added). */
static struct subid_ops {
	struct subid_range *r;
	size_t n;
} subid_ops[2][2];

/* FIRST-LAST: decimal without sign, blank or leading zero, FIRST <= LAST,
 * and a range /etc/subuid can hold (start and count in 0..4294967294,
 * start + count <= 2^32). */
static int parse_subid_range(const char *arg, struct subid_range *out)
{
	const char *dash = strchr(arg, '-');
	char first[24];
	size_t flen;

	if (!dash || (flen = (size_t)(dash - arg)) >= sizeof(first))
		return -HS_E_FORMAT;
	memcpy(first, arg, flen);
	first[flen] = '\0';
	if (hs_parse_ulong(first, 0, HS_ID_MAX, &out->first) < 0 ||
	    hs_parse_ulong(dash + 1, 0, HS_ID_MAX + 1, &out->last) < 0 ||
	    out->first > out->last || out->last - out->first + 1 > HS_ID_MAX)
		return -HS_E_RANGE;
	return 0;
}

static void add_subid_op(int c, const char *arg)
{
	struct subid_ops *ops = &subid_ops[c == 'w' || c == 'W'][c == 'v' || c == 'w'];
	struct subid_range *grown = realloc(ops->r, (ops->n + 1) * sizeof(*grown));

	if (!grown)
		hs_die(E_PW_UPDATE, "out of memory");
	ops->r = grown;
	if (parse_subid_range(arg, &grown[ops->n]) < 0)
		hs_die(E_BAD_ARG, "invalid subordinate %s range '%s'", c == 'v' || c == 'V' ?
		       "uid" : "gid", arg);
	ops->n++;
}

static bool changes_subids(void)
{
	return subid_ops[0][0].n || subid_ops[0][1].n || subid_ops[1][0].n || subid_ops[1][1].n;
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_SELF_SERVICE, OPT_NO_SELF_SERVICE };
	static const struct option longopts[] = {
		{ "append",       no_argument,       NULL, 'a' },
		{ "badname",      no_argument,       NULL, 'b' },
		{ "comment",      required_argument, NULL, 'c' },
		{ "home",         required_argument, NULL, 'd' },
		{ "expiredate",   required_argument, NULL, 'e' },
		{ "inactive",     required_argument, NULL, 'f' },
		{ "gid",          required_argument, NULL, 'g' },
		{ "groups",       required_argument, NULL, 'G' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "login",        required_argument, NULL, 'l' },
		{ "lock",         no_argument,       NULL, 'L' },
		{ "move-home",    no_argument,       NULL, 'm' },
		{ "non-unique",   no_argument,       NULL, 'o' },
		{ "password",     required_argument, NULL, 'p' },
		{ "prefix",       required_argument, NULL, 'P' },
		{ "remove",       no_argument,       NULL, 'r' },
		{ "root",         required_argument, NULL, 'R' },
		{ "shell",        required_argument, NULL, 's' },
		{ "self-service-shell", no_argument, NULL, OPT_SELF_SERVICE },
		{ "no-self-service-shell", no_argument, NULL, OPT_NO_SELF_SERVICE },
		{ "uid",          required_argument, NULL, 'u' },
		{ "unlock",       no_argument,       NULL, 'U' },
		{ "add-subuids",  required_argument, NULL, 'v' },
		{ "del-subuids",  required_argument, NULL, 'V' },
		{ "add-subgids",  required_argument, NULL, 'w' },
		{ "del-subgids",  required_argument, NULL, 'W' },
		{ "selinux-user", required_argument, NULL, 'Z' },
		{ "selinux-range", required_argument, NULL, 'Z' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "abc:d:e:f:g:G:hl:Lmop:P:rR:s:u:Uv:V:w:W:Z:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.append = true; break;
		case 'b':
			hs_die(E_USAGE, "option --badname is not supported");
		case 'c': o.comment = optarg; break;
		case 'd': o.home = optarg; break;
		case 'e': o.expire = optarg; break;
		case 'f': o.inactive = optarg; break;
		case 'g': o.group = optarg; break;
		case 'G': o.groups = optarg; break;
		case 'h': usage(E_SUCCESS);
		case 'l': o.login = optarg; break;
		case 'L': o.lock = true; break;
		case 'm': o.move_home = true; break;
		case 'o': o.non_unique = true; break;
		case 'p': o.password = optarg; break;
		case 'r': o.remove = true; break;
		case 's': o.shell = optarg; break;
		case 'u': o.uid = optarg; break;
		case 'U': o.unlock = true; break;
		case 'P':
		case 'R':
		case 'Z':
			usertool_die_unsupported(c, optarg);
		case 'v': case 'V': case 'w': case 'W':
			add_subid_op(c, optarg);
			break;
		case OPT_SELF_SERVICE: o.self_service = 1; break;
		case OPT_NO_SELF_SERVICE: o.self_service = -1; break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (argc != optind + 1)
		usage(E_USAGE);
	/* the combinations shadow-utils refuses, in its order */
	const struct { bool when; const char *why; } misuses[] = {
		{ o.append && !o.groups, "-a flag is only allowed with the -G flag" },
		{ o.remove && !o.groups, "-r flag is only allowed with the -G flag" },
		{ o.append && o.remove, "-a and -r are mutually exclusive" },
		{ o.non_unique && !o.uid, "-o flag is only allowed with the -u flag" },
		{ o.move_home && !o.home, "-m flag is only allowed with the -d flag" },
		{ o.lock + o.unlock + !!o.password > 1, "the -L, -p, and -U flags are exclusive" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(misuses); i++) {
		if (misuses[i].when) {
			hs_warn("%s", misuses[i].why);
			usage(E_USAGE);
		}
	}
}

/* Every value given, checked before anything is opened. */
static void check_arguments(void)
{
	if (o.comment && !hs_records_field_valid(o.comment))
		hs_die(E_BAD_ARG, "invalid field '%s'", o.comment);
	if (o.home && (!hs_records_field_valid(o.home) || o.home[0] != '/'))
		hs_die(E_BAD_ARG, "invalid field '%s'", o.home);
	if (o.shell && (!hs_records_field_valid(o.shell) || (o.shell[0] && o.shell[0] != '/')))
		hs_die(E_BAD_ARG, "invalid field '%s'", o.shell);
	if (o.password)
		usertool_check_hash(o.password);
	if (o.login && !hs_names_user_valid(o.login))
		hs_die(E_BAD_ARG, "invalid user name '%s'", o.login);
	if (o.expire)
		new_expire = usertool_parse_expire(o.expire);
	if (o.inactive)
		new_inactive = usertool_parse_inactive(o.inactive);
	if (o.uid)
		new_uid = (uid_t)usertool_parse_uid(o.uid);
}

/* ---- the global files (lib/accountset: locks, load, ordered commit) ---- */

static struct hs_accountset set = HS_ACCOUNTSET_INIT;

static _Noreturn void fail(int status)
{
	hs_accountset_close(&set);
	exit(status);
}

/* Say why ("prog: MESSAGE"), then fail. */
static _Noreturn __attribute__((format(printf, 2, 3))) void fail_with(int status,
									const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
	fail(status);
}

static struct hs_accountdb *db(enum hs_as_file f)
{
	return hs_accountset_db(&set, f);
}

/* Is line `line`, named name, one of the requested groups (their lines
 * idx[0..n-1])?  Another line of a requested name (a hand edit) is
 * refused, as a full load refuses it: the member would join both
 * groups, one of which nobody asked for. */
static bool requested(struct hs_accountdb *gr, const size_t *idx, size_t n, size_t line,
		      const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(hs_accountdb_get(gr, idx[i])->gr.name, name) != 0)
			continue;
		if (idx[i] != line)
			fail_with(E_GRP_UPDATE, "%s:%zu: duplicate group name %s (also on line "
				  "%zu)", HS_ETC_GROUP, line + 1, name, idx[i] + 1);
		return true;
	}
	return false;
}

/* -G [-a|-r]: decide per group, then make group and gshadow say it. */
static void edit_groups(const char *user)
{
	struct hs_accountdb *gr = db(HS_AS_GROUP);
	_cleanup_free_ size_t *idx = NULL;
	size_t n;
	int status = usertool_find_groups(gr, o.groups, &idx, &n);

	if (status != E_SUCCESS)
		fail(status);
	changed.groups = calloc(gr->n_lines + 1, 1);
	if (!changed.groups)
		fail_with(E_PW_UPDATE, "out of memory");
	for (size_t i = 0; i < gr->n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(gr, i);
		bool named, member, want;
		int r;

		if (!rec)
			continue;
		named = requested(gr, idx, n, i, rec->gr.name);
		member = hs_records_list_contains(rec->gr.members, user);
		want = o.append ? named || member : o.remove ? !named && member : named;
		if (want != member)
			changed.groups[changed.n++] = want ? 'a' : 'r';
		r = want ? hs_accountset_add_member(&set, i, user)
			 : hs_accountset_remove_member(&set, i, user);
		if (r < 0)
			fail_with(E_GRP_UPDATE, "%s", set.error);
	}
}

/* ---- subordinate ids (-v -V -w -W, and -l) ---- */

/* Take [r->first, r->last] out of owner's ranges, as shadow-utils does:
 * a range inside it goes, one that overlaps an end is cut, one that holds
 * it is split in two (the upper part appended). */
static int subid_remove(struct hs_accountdb *sub, const char *owner,
			const struct subid_range *r)
{
	for (long i = hs_accountdb_find_next(sub, owner, 0); i >= 0;
	     i = hs_accountdb_find_next(sub, owner, (size_t)i + 1)) {
		struct hs_subid e = hs_accountdb_get(sub, (size_t)i)->sub;
		/* the owner from our argument: the record's own string goes
		 * when the line is replaced, if it was replaced before */
		struct hs_subid tail = { .owner = owner };
		unsigned long last = e.start + e.count - 1;
		long ri;

		if (r->first > last || r->last < e.start)
			continue;
		if (r->first <= e.start && r->last >= last) {
			ri = hs_accountdb_delete(sub, (size_t)i);
		} else if (r->first <= e.start) {
			e.start = r->last + 1;
			e.count = last - r->last;
			ri = hs_accountdb_replace(sub, (size_t)i, &e);
		} else {
			e.count = r->first - e.start;
			ri = hs_accountdb_replace(sub, (size_t)i, &e);
			if (ri == 0 && r->last < last) {
				tail.start = r->last + 1;
				tail.count = last - r->last;
				ri = hs_accountdb_append(sub, &tail);
			}
		}
		if (ri < 0)
			return (int)ri;
	}
	return 0;
}

/* The range of owner that holds id, or NULL. */
static const struct hs_subid *subid_holding(struct hs_accountdb *sub, const char *owner,
					    unsigned long id)
{
	for (long i = hs_accountdb_find_next(sub, owner, 0); i >= 0;
	     i = hs_accountdb_find_next(sub, owner, (size_t)i + 1)) {
		const struct hs_subid *e = &hs_accountdb_get(sub, (size_t)i)->sub;

		if (id >= e->start && id - e->start < e->count)
			return e;
	}
	return NULL;
}

/* Give owner [r->first, r->last] unless their ranges hold all of it
 * already (shadow-utils: no check against other owners or SUB_*_MIN/MAX). */
static int subid_add(struct hs_accountdb *sub, const char *owner, const struct subid_range *r)
{
	struct hs_subid e = { .owner = owner, .start = r->first,
			      .count = r->last - r->first + 1 };
	unsigned long id = r->first;
	const struct hs_subid *have;

	while ((have = subid_holding(sub, owner, id))) {
		if (have->start + have->count - 1 >= r->last)
			return 0;
		id = have->start + have->count;
	}
	return hs_accountdb_append(sub, &e) < 0 ? -EIO : 0;
}

/* -V/-W, then -v/-w (shadow-utils' order), then -l: the user's ranges
 * follow the new name. */
static void edit_subids(const char *user, const char *new_name)
{
	static const enum hs_as_file files[2] = { HS_AS_SUBUID, HS_AS_SUBGID };

	for (int k = 0; k < 2; k++) {
		struct hs_accountdb *sub = db(files[k]);
		const struct subid_ops *ops = subid_ops[k];
		const char *what = k ? "gid" : "uid";
		int status = usertool_file_status(files[k]);

		if (!sub && (ops[0].n || ops[1].n))
			fail_with(E_USAGE, "%s does not exist, you cannot use the flags %s or %s",
				  hs_accountset_path(files[k]), k ? "-w" : "-v", k ? "-W" : "-V");
		for (int add = 0; add < 2; add++)
			for (size_t i = 0; i < ops[add].n; i++) {
				const struct subid_range *r = &ops[add].r[i];

				if ((add ? subid_add : subid_remove)(sub, user, r) < 0)
					fail_with(status, "failed to %s %s range %lu-%lu %s "
						  "'%s': %s", add ? "add" : "remove", what,
						  r->first, r->last, add ? "to" : "from",
						  sub->path, sub->error);
			}
		for (long i = sub && new_name ? hs_accountdb_find_next(sub, user, 0) : -1; i >= 0;
		     i = hs_accountdb_find_next(sub, user, (size_t)i + 1)) {
			struct hs_subid e = hs_accountdb_get(sub, (size_t)i)->sub;

			e.owner = new_name;
			if (hs_accountdb_replace(sub, (size_t)i, &e) < 0)
				fail_with(status, "%s", sub->error);
		}
	}
}

/* ---- the password fields (-L -U -p) on a hash string ---- */

/* -L/-U/-p (exclusive): put the new hash in *hash (and, for -p, today
 * in *lstchg unless NULL); false when unchanged.  Exits on refusal. */
static bool new_hash(const char *user, const char **hash, long *lstchg, char *buf, size_t size)
{
	const char *h = NULL;

	if (o.password) {
		h = o.password;
	} else if (o.lock && (*hash)[0] != '!') {
		if (snprintf(buf, size, "!%s", *hash) >= (int)size)
			fail_with(E_PW_UPDATE, "password hash of user %s is too long", user);
		h = buf;
	} else if (o.unlock && (*hash)[0] == '!') {
		if ((*hash)[1] == '\0') {
			/* shadow-utils: refusing is better than an account
			 * without a password */
			fail_with(E_PW_UPDATE, "unlocking the user's password would result in "
				  "a passwordless account.\nYou should set a password with usermod "
				  "-p to unlock this user's password.");
		}
		h = *hash + 1;
	}
	if (!h)
		return false;
	*hash = h;
	if (o.password && lstchg)
		*lstchg = hs_today();
	changed.hash = true;
	return true;
}

static bool changes_secrets(void)
{
	return o.lock || o.unlock || o.password || o.expire || o.inactive;
}

/* ---- the user's directory in the tree ---- */

/* "cannot VERB TREE/USER/FILE: ERROR"; returns E_PW_UPDATE. */
static int userfile_error(const char *verb, const char *user, const char *file, int r)
{
	char path[HS_PATHBUF_USER];

	hs_warn("cannot %s %s: %s", verb, hs_userdir_path(path, sizeof(path), user, file),
		hs_strerror(r));
	return E_PW_UPDATE;
}

/* -L -U -p -e -f and -s, in the user's files; the caller holds
 * the user's lock (everything is read after taking it).  owner is the current owner of the
 * files. */
static void edit_userdir_files(int udirfd, const char *user, uid_t owner, gid_t auth_gid,
			       const char *shell_file)
{
	char buf[HS_USERFILE_MAX + 2], hbuf[HS_HASH_MAX + 2];
	struct hs_shadow sh;
	struct hs_aging ag;
	int r;

	if (!changes_secrets() && !shell_file)
		return;
	if (o.lock || o.unlock || o.password) {
		r = hs_userdir_read_shadow(udirfd, owner, buf, sizeof(buf), &sh);
		if (r < 0)
			fail(userfile_error("read", user, HS_FILE_SHADOW, r));
		if (new_hash(user, &sh.hash, &sh.lstchg, hbuf, sizeof(hbuf)))
			r = hs_userdir_write_shadow(udirfd, owner, auth_gid, &sh);
		hs_wipe(buf, sizeof(buf));
		hs_wipe(hbuf, sizeof(hbuf));
		if (r < 0)
			fail(userfile_error("write", user, HS_FILE_SHADOW, r));
	}
	if (o.expire || o.inactive) {
		/* an untrusted aging file keeps its fail-closed values for
		 * the fields we do not set (as chage); out of descriptors
		 * or memory nothing was learnt of it, and nothing is written */
		r = hs_userdir_aging_or_expired(udirfd, &ag);
		if (hs_err_transient(r))
			fail(userfile_error("read", user, HS_FILE_AGING, r));
		if (o.expire)
			ag.expire = new_expire;
		if (o.inactive)
			ag.inact = new_inactive;
		r = hs_userdir_write_aging(udirfd, auth_gid, &ag);
		if (r < 0)
			fail(userfile_error("write", user, HS_FILE_AGING, r));
	}
	if (shell_file) {
		r = hs_userdir_write_shell(udirfd, owner, auth_gid, shell_file);
		if (r < 0)
			fail(userfile_error("write", user, HS_FILE_SHELL, r));
	}
}

/* -u: give shadow and shell (regular, one link, owned by the old or the new
 * uid, or by anyone when old_uid is HS_ANY_UID) to the new uid.  The
 * directory is root's at this point, so nobody else changes it while we
 * look; everything is relative to its fd and nothing is followed.  Any
 * other entry but aging is left alone with a warning (pwck reports
 * strays). */
static int reown_userdir_pass(int udirfd, const char *user, uid_t old_uid, uid_t uid,
			      bool apply)
{
	_cleanup_closedir_ DIR *d = hs_fileio_opendir_at(udirfd);
	char path[HS_PATHBUF_USER];
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;
		bool mine = strcmp(de->d_name, HS_FILE_SHADOW) == 0 ||
			    strcmp(de->d_name, HS_FILE_SHELL) == 0;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, HS_FILE_AGING) == 0)
			continue;
		hs_userdir_path(path, sizeof(path), user, de->d_name);
		if (!mine) {
			if (apply)
				hs_warn("leaving unexpected entry %s alone", path);
			continue;
		}
		if (fstatat(udirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
		    (old_uid != HS_ANY_UID && st.st_uid != old_uid && st.st_uid != uid)) {
			hs_warn("%s is not a regular file of the user's with one link", path);
			return -HS_E_NOTREG;
		}
		if (apply &&
		    fchownat(udirfd, de->d_name, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	return 0;
}

/* Check every entry first, so a refusal re-owns nothing. */
static int reown_userdir(int udirfd, const char *user, uid_t old_uid, uid_t uid)
{
	int r = reown_userdir_pass(udirfd, user, old_uid, uid, false);

	return r < 0 ? r : reown_userdir_pass(udirfd, user, old_uid, uid, true);
}

/* ---- the home directory ---- */

static bool home_at(const char *dir, uid_t uid, bool owned_too);

/* -d -m: rename the home, on the same file system only.  A copy across
 * file systems would have to recreate every file of a hostile tree
 * without following anything; we refuse it and say so instead. */
static int move_home(const char *old_dir, const char *new_dir, uid_t uid, bool *moved)
{
	_cleanup_free_ char *from = hs_homepath_normalise(old_dir);
	_cleanup_free_ char *to = hs_homepath_normalise(new_dir);
	_cleanup_close_ int ofd = -1;
	_cleanup_close_ int nfd = -1;
	const char *olast, *nlast;
	struct stat st;
	int r;

	if (!from || !to || !from[0] || !to[0])
		return usertool_warn(E_HOMEDIR, "cannot move home directory %s to %s: not an "
				     "absolute path without '..'", old_dir, new_dir);
	if (strcmp(from, to) == 0)
		return E_SUCCESS;
	if (strncmp(to, from, strlen(from)) == 0 && to[strlen(from)] == '/')
		return usertool_warn(E_HOMEDIR, "cannot move home directory %s into itself (%s)",
				     old_dir, new_dir);
	ofd = hs_homepath_parent_at(from, uid, &olast);
	/* a file system mounted on the home itself: never touched, as
	 * userdel -r says it (looked at first: a FUSE mount there refuses
	 * root the stat below, EACCES or ENOTCONN) */
	if (ofd >= 0 && hs_walk_is_mount_point(ofd, olast))
		return usertool_warn(E_HOMEDIR, "cannot move home directory %s: a file system "
				     "is mounted at %s", old_dir, old_dir);
	r = ofd;
	if (ofd >= 0)
		r = fstatat(ofd, olast, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	/* a run killed between the rename and the commit left the home at
	 * new_dir, /etc/passwd naming old_dir: this one finishes it */
	if (r == -ENOENT && home_at(to, uid, true)) {
		hs_warn("finishing the interrupted move of the home directory %s to %s", old_dir,
			new_dir);
		return E_SUCCESS;
	}
	/* shadow-utils: nothing to move, and no new home is made */
	if (r == -ENOENT)
		return usertool_warn(E_SUCCESS, "The previous home directory (%s) does not exist; "
				     "not moving it", old_dir);
	if (r < 0)
		return usertool_warn(E_HOMEDIR, "cannot move home directory %s: %s", old_dir,
				     hs_homepath_parent_error(r));
	if (!S_ISDIR(st.st_mode))
		return usertool_warn(E_HOMEDIR, "The previous home directory (%s) was not a "
				     "directory. It is not removed and no home directories are "
				     "created.", old_dir);
	nfd = hs_homepath_parent_at(to, uid, &nlast);
	if (nfd < 0)
		return usertool_warn(E_HOMEDIR, "cannot move home directory to %s: %s", new_dir,
				     hs_homepath_parent_error(nfd));
	if (renameat2(ofd, olast, nfd, nlast, RENAME_NOREPLACE) == 0) {
		struct stat now;

		/* the rename goes by name: whoever owns the old parent may
		 * have put something else there since the look above (a
		 * symlink to /etc, another user's directory); that goes back */
		if (fstatat(nfd, nlast, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (now.st_dev != st.st_dev || now.st_ino != st.st_ino)) {
			if (renameat2(nfd, nlast, ofd, olast, RENAME_NOREPLACE) < 0)
				hs_warn("cannot rename %s back to %s: %s", new_dir, old_dir,
					strerror(errno));
			return usertool_warn(E_HOMEDIR, "cannot move home directory %s: it was "
					     "replaced during the move; left where it was", old_dir);
		}
		*moved = true;
		return E_SUCCESS;
	}
	if (errno == EEXIST)
		return usertool_warn(E_HOMEDIR, "directory %s exists", new_dir);
	if (errno == EXDEV)
		return usertool_warn(E_HOMEDIR, "cannot move home directory %s to %s: they are "
				     "on different file systems, and usermod does not copy homes; "
				     "copy it yourself, then run usermod -d without -m", old_dir,
				     new_dir);
	return usertool_warn(E_HOMEDIR, "cannot rename directory %s to %s: %s", old_dir, new_dir,
			     strerror(errno));
}

struct reown {
	uid_t old_uid, uid;
	gid_t old_gid, gid;     /* gid == old_gid: groups stay */
	/* finishing an interrupted run (TAKEN_XATTR): the ids it was giving
	 * the files, which follow too; (uid_t)-1 and (gid_t)-1 otherwise */
	uid_t mid_uid;
	gid_t mid_gid;
	const char *home;       /* for messages */
	unsigned errors;
	/* entries found replaced during this pass (HS_WALK_SWAPPED), said
	 * and counted in errors only on the last pass (REOWN_PASSES) */
	unsigned swapped;
	unsigned pass;          /* 1 .. REOWN_PASSES */
	/* the entries found replaced so far (paths below the home): a later
	 * pass says, and counts, only what it meets at or below one of them,
	 * which no pass before it saw; the rest it says again otherwise.
	 * say_all: one could not be kept (out of memory): say everything */
	char **swapped_at;
	size_t n_swapped_at;
	bool say_all;
};

/* Passes over the home while entries are found replaced during the walk:
 * a later pass re-owns what is still the old uid's below them. */
#define REOWN_PASSES 3

static uid_t reown_uid(const struct reown *ro, const struct stat *st)
{
	return st->st_uid == ro->old_uid || (ro->mid_uid != (uid_t)-1 && st->st_uid == ro->mid_uid)
	       ? ro->uid : (uid_t)-1;
}

static gid_t reown_gid(const struct reown *ro, const struct stat *st)
{
	if (ro->mid_gid != (gid_t)-1 && st->st_gid == ro->mid_gid && st->st_gid != ro->gid)
		return ro->gid;
	return (ro->gid != ro->old_gid && st->st_gid == ro->old_gid) ? ro->gid : (gid_t)-1;
}

/* Was path (below the home) out of every earlier pass's sight: the first
 * pass, or at or below an entry an earlier pass found replaced?  Costs
 * nothing without a swap: a home of many hard links says each once. */
static bool first_seen(const struct reown *ro, const char *path)
{
	if (ro->pass == 1 || ro->say_all)
		return true;
	for (size_t i = 0; i < ro->n_swapped_at; i++) {
		size_t n = strlen(ro->swapped_at[i]);

		if (strncmp(path, ro->swapped_at[i], n) == 0 && (!path[n] || path[n] == '/'))
			return true;
	}
	return false;
}

static void note_swapped(struct reown *ro, const char *path)
{
	char **at = realloc(ro->swapped_at, (ro->n_swapped_at + 1) * sizeof(*at));
	char *copy = strdup(path);

	if (at)
		ro->swapped_at = at;
	if (!at || !copy) {
		free(copy);
		ro->say_all = true;
		return;
	}
	ro->swapped_at[ro->n_swapped_at++] = copy;
}

/* Every entry the walker opened (directories after their contents). */
static int reown_visit(const struct hs_walk_entry *e, void *ctx)
{
	struct reown *ro = ctx;
	int r = hs_walk_chown(e, reown_uid(ro, &e->st), reown_gid(ro, &e->st));

	if (r == 0 || !first_seen(ro, e->path))
		return 0;
	if (r == -HS_E_NLINK) {
		hs_warn("warning: not changing the owner of %s/%s: it has more than one link",
			ro->home, e->path);
	} else {
		hs_warn("cannot change the owner of %s/%s: %s", ro->home, e->path, hs_strerror(r));
		ro->errors++;
	}
	return 0;
}

static int reown_refused(const struct hs_walk_entry *e, enum hs_walk_refusal why, int err,
			 void *ctx)
{
	struct reown *ro = ctx;

	if (why == HS_WALK_SWAPPED) {
		/* another pass may find it settled: said on the last only */
		ro->swapped++;
		note_swapped(ro, e->path);
		if (ro->pass < REOWN_PASSES)
			return 0;
	} else if (!first_seen(ro, e->path)) {
		return 0;
	}
	if (why == HS_WALK_MOUNT) {
		hs_warn("warning: not changing the owner of files in %s/%s: it is a mount point",
			ro->home, e->path);
		return 0;
	}
	hs_warn("cannot change the owner of %s/%s: %s", ro->home, e->path,
		why == HS_WALK_TOO_DEEP ? "nested too deeply" :
		why == HS_WALK_SWAPPED ? "it was replaced during the walk" : hs_strerror(err));
	ro->errors++;
	return 0;
}

/* While the home is taken away it carries what it was and whose files
 * are re-owned, in an attribute only root can set.  It is set, and the
 * home taken away, before the global files are committed: a run killed
 * (SIGKILL, a crash) after /etc/passwd has the new uid, whether before
 * the walk or half-way through it, left the home root's 0700 with this
 * record, and the same usermod again, which finds the uid already the new
 * one, finishes the walk and hands it back from it (were it set only
 * after the commit, a kill in between left every file with the old uid,
 * free for the next account, and nothing to say so).  A run killed
 * before the commit left the record too: /etc/passwd still has the old
 * uid, and the next usermod on the account hands the home back as it
 * was (usermod -u again re-owns it).  A file system without such
 * attributes goes without the record, and says so. */
#define TAKEN_XATTR "trusted.hardened-shadow.home-taken"

struct taken {
	unsigned long old_uid, old_gid, uid, gid, mode;
	unsigned long new_uid;  /* the uid the run gave */
};

static void taken_record(int fd, const char *dir, const struct reown *ro,
			 const struct stat *st)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "%lu %lu %lu %lu %lo %lu", (unsigned long)ro->old_uid,
			 (unsigned long)ro->old_gid, (unsigned long)st->st_uid,
			 (unsigned long)st->st_gid, (unsigned long)(st->st_mode & 07777),
			 (unsigned long)ro->uid);

	/* Not refused: homes on file systems without trusted attributes
	 * (NFS, CIFS, most FUSE) could not be re-owned at all, where
	 * shadow-utils does; the walk runs with the catchable signals
	 * blocked, so only a SIGKILL or a crash is not finished, and this
	 * line says what an administrator then finds. */
	if (fsetxattr(fd, TAKEN_XATTR, buf, (size_t)n, 0) < 0)
		hs_warn("warning: cannot record the change of owner on %s: %s; if usermod is "
			"killed before it ends, the home stays root's 0700 and running it again "
			"does not finish it", dir, strerror(errno));
}

/* The record of an interrupted run on the account whose uid in
 * /etc/passwd is now uid, on a home that is still root's.  A home two
 * accounts share carries the record of a run on either: only the one
 * that has the uid the run took (killed before its commit) or gave
 * (after it) finishes it, or the files of one would go to the other.  A
 * record without the uid given (written before it was recorded) is taken
 * only by the uid it took. */
static bool taken_read(int fd, const struct stat *st, uid_t uid, struct taken *t)
{
	char buf[128], extra;
	ssize_t n;
	int fields;

	if (st->st_uid != 0)
		return false;
	n = fgetxattr(fd, TAKEN_XATTR, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	t->new_uid = (unsigned long)-1;
	fields = sscanf(buf, "%lu %lu %lu %lu %lo %lu%c", &t->old_uid, &t->old_gid, &t->uid,
			&t->gid, &t->mode, &t->new_uid, &extra);
	if ((fields != 5 && fields != 6) || t->mode > 07777)
		return false;
	return t->old_uid == (unsigned long)uid || t->new_uid == (unsigned long)uid;
}

/* The home at dir, below a parent trusted for uid, opened without
 * following anything: its fd and *st, or a negative error and *why to
 * say (NULL: nothing, as for a home that does not exist). */
static int open_home(const char *dir, uid_t uid, struct stat *st, const char **why)
{
	_cleanup_free_ char *home = hs_homepath_normalise(dir);
	_cleanup_close_ int pfd = -1;
	const char *last;
	int r;

	*why = NULL;
	if (!home || !home[0]) {
		/* "/": every file of the uid on the system, never re-owned */
		*why = home ? "it is the root directory" : "not an absolute path without '..'";
		return -EINVAL;
	}
	pfd = hs_homepath_parent_at(home, uid, &last);
	if (pfd < 0) {
		if (pfd != -ENOENT)
			*why = hs_homepath_parent_error(pfd);
		return pfd;
	}
	/* a FUSE file system its user mounted on the home is theirs (its
	 * daemon answers a chown as it likes) and may never answer: the
	 * stat below would wait for it, holding the lock of /etc/passwd */
	if (hs_walk_is_users_fuse(pfd, last)) {
		*why = "a file system its user mounted is there";
		return -EXDEV;
	}
	if (fstatat(pfd, last, st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		/* said, or -u exits 12 without a word: a FUSE file system
		 * its user mounted there refuses root (EACCES, ENOTCONN) */
		if (r != -ENOENT)
			*why = hs_walk_is_mount_point(pfd, last) ?
			       "it is a mount point that cannot be examined" : hs_strerror(r);
		return r;
	}
	if (!S_ISDIR(st->st_mode)) {
		*why = "not a directory";
		return -ENOTDIR;
	}
	r = hs_fileio_open_dir_at(pfd, last, st);
	if (r < 0)
		*why = hs_strerror(r);
	return r;
}

/* Is the home at dir left taken away, with a record, by an interrupted
 * run, or (owned_too) a directory of uid's?  Asked of the account's home
 * before usermod confines itself, so that a usermod that works on the
 * home (-g, -m) finishes it; and, owned_too, of where -d -m moves it: an
 * interrupted -u -d -m may have left it there. */
static bool home_at(const char *dir, uid_t uid, bool owned_too)
{
	_cleanup_close_ int hfd = -1;
	const char *why;
	struct stat st;
	struct taken t;

	hfd = open_home(dir, uid, &st, &why);
	return hfd >= 0 && ((owned_too && st.st_uid == uid) || taken_read(hfd, &st, uid, &t));
}

/* A home whose files are not re-owned: said, unless this is a rerun that
 * only looks for an interrupted one's record. */
static int not_reowning(bool rerun, const char *dir, const char *why)
{
	if (rerun)
		return E_SUCCESS;
	return usertool_warn(E_HOMEDIR, "not changing the owner of files in %s: %s", dir, why);
}

/* The home, between its taking away (before the commit) and its walk
 * (after it). */
struct home_taken {
	int hfd;                /* -1: no walk */
	bool fresh;             /* taken away by this run (given back if the
				 * commit fails) */
	struct stat saved;      /* its owner and mode before */
	int status;             /* a refusal, said already */
};

/* -u (and -g), before the commit: the home is taken away from the user
 * (root:root 0700) with its record (TAKEN_XATTR), or found left so by an
 * interrupted run, whose record then says which files are re-owned. */
static void reown_home_take(const char *dir, struct reown *ro, struct home_taken *ht)
{
	_cleanup_close_ int hfd = -1;
	const char *why;
	struct stat st;
	struct taken t;
	/* a rerun of -u with the uid it has: only a record is looked for */
	bool rerun = ro->old_uid == ro->uid && ro->old_gid == ro->gid;
	int r;

	*ht = (struct home_taken){ .hfd = -1, .status = E_SUCCESS };
	hfd = open_home(dir, ro->uid, &st, &why);
	if (hfd < 0) {
		ht->status = why ? not_reowning(rerun, dir, why) :
			     hfd == -ENOENT || rerun ? E_SUCCESS : E_HOMEDIR;
		return;
	}
	/* the account's uid in /etc/passwd, before this run */
	if (taken_read(hfd, &st, ro->old_uid, &t)) {
		/* left taken away by an interrupted run: its files are the
		 * old uid's of then, and it goes back as it was */
		hs_warn("finishing the interrupted change of owner of %s", dir);
		/* what it gave some files already is what /etc/passwd held
		 * before this run (written before its walk): those follow too
		 * when this run asks for yet another id, or they would keep an
		 * id no account has, whose next owner would get them */
		if (ro->old_uid != (uid_t)t.old_uid && ro->old_uid != ro->uid)
			ro->mid_uid = ro->old_uid;
		if (ro->old_gid != (gid_t)t.old_gid && ro->old_gid != ro->gid)
			ro->mid_gid = ro->old_gid;
		ro->old_uid = (uid_t)t.old_uid;
		ro->old_gid = (gid_t)t.old_gid;
		ht->saved = st;
		ht->saved.st_uid = (uid_t)t.uid;
		ht->saved.st_gid = (gid_t)t.gid;
		ht->saved.st_mode = (mode_t)t.mode | S_IFDIR;
		ht->hfd = TAKE_FD(hfd);
		return;
	}
	if (rerun)
		return;         /* nothing left to do */
	if (st.st_uid != ro->old_uid && st.st_uid != ro->uid) {
		ht->status = usertool_warn(E_HOMEDIR, "%s is not owned by the user, not changing "
					   "the owner of its files", dir);
		return;
	}
	/* the caller blocks the signals: a Ctrl-C or a SIGTERM half-way
	 * would leave the home root's 0700 for good */
	taken_record(hfd, dir, ro, &st);
	r = hs_walk_take_away(hfd, &ht->saved);
	if (r < 0) {
		(void)fremovexattr(hfd, TAKEN_XATTR);
		ht->status = not_reowning(false, dir, hs_strerror(r));
		return;
	}
	ht->fresh = true;
	ht->hfd = TAKE_FD(hfd);
}

/* Hand the home back (the mode first, then the owner) and drop its
 * record; said when it fails. */
static int home_hand_back(const char *dir, int hfd, uid_t uid, gid_t gid, mode_t mode)
{
	int r = hs_walk_hand_back(hfd, uid, gid, mode);

	if (r < 0)
		hs_warn("cannot hand %s back to its owner: %s", dir, hs_strerror(r));
	else
		(void)fremovexattr(hfd, TAKEN_XATTR);
	return r;
}

/* -u (and -g), after the commit: the home's files owned by the old uid
 * (old gid) get the new one, as shadow-utils does, through the one walker
 * (lib/io/walk.h): the home is taken away from the user for the whole
 * walk, nothing is followed, mount points and files with more than one
 * link are left alone with a warning each. */
static int reown_home(const char *dir, struct reown *ro, struct home_taken *ht)
{
	static const struct hs_walk_ops ops = { .post = reown_visit, .refused = reown_refused };
	const struct stat *saved = &ht->saved;
	uid_t top_uid;
	gid_t top_gid;
	int r;

	if (ht->hfd < 0)
		return ht->status;
	ro->home = dir;
	/* an entry found replaced during the walk (a process that kept an fd
	 * to a directory of the home renames there) may hide files of the old
	 * uid, which is free from now on: walked again, up to REOWN_PASSES
	 * times.  If some are still found replaced, or the walk failed, the
	 * home stays taken away with its record, for usermod -u to finish
	 * (docs/decisions.md) */
	for (ro->pass = 1; ro->pass <= REOWN_PASSES; ro->pass++) {
		ro->swapped = 0;
		r = hs_walk_below(ht->hfd, &ops, ro);
		if (r < 0) {
			hs_warn("cannot change the owner of files in %s: %s", dir, hs_strerror(r));
			ro->errors++;
			break;
		}
		if (!ro->swapped)
			break;
	}
	for (size_t i = 0; i < ro->n_swapped_at; i++)
		free(ro->swapped_at[i]);
	free(TAKE_PTR(ro->swapped_at));
	ro->n_swapped_at = 0;
	/* without the record (no trusted attributes) a rerun could not find
	 * it: handed back then, as before, with the entries said */
	if ((r < 0 || ro->swapped) && fgetxattr(ht->hfd, TAKEN_XATTR, NULL, 0) > 0) {
		hs_close(TAKE_FD(ht->hfd));
		return usertool_warn(E_HOMEDIR, "%s stays root's: run usermod -u again on the "
				     "account%s", dir, ro->swapped ? " once whatever renames "
				     "entries in it is stopped" : "");
	}
	/* handed back last, to the new owner */
	top_uid = reown_uid(ro, saved) != (uid_t)-1 ? ro->uid : saved->st_uid;
	top_gid = reown_gid(ro, saved) != (gid_t)-1 ? ro->gid : saved->st_gid;
	if (home_hand_back(dir, ht->hfd, top_uid, top_gid, saved->st_mode) < 0)
		ro->errors++;
	hs_close(TAKE_FD(ht->hfd));
	if (ro->errors)
		return usertool_warn(E_HOMEDIR, "failed to change ownership of %u entries in the "
				     "home directory %s", ro->errors, dir);
	return E_SUCCESS;
}

/* -u, -l: MAIL_DIR/USER follows, as shadow-utils' usermod moves it: a new
 * owner with -u, the new name with -l.  Only a regular file of the old
 * uid's with one link.  Whoever can write MAIL_DIR (group mail on Debian)
 * can swap the name or plant a hard link to another file there, so the
 * entry is opened (O_PATH: a planted device or FIFO is not opened for
 * I/O), checked, then re-owned and linked under the new name through that
 * fd, never through the name again; the old name goes only while it still
 * is that file.  Anything else is left, and said. */
static void move_mail_spool(const struct hs_config *cfg, const char *user, uid_t old_uid,
			    uid_t uid, const char *new_name)
{
	const char *maildir = usertool_mail_dir(cfg);
	_cleanup_close_ int dfd = open(maildir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	const char *why = NULL;
	struct stat st, now;

	if (dfd >= 0)
		fd = openat(dfd, user, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (errno != ENOENT)
			hs_warn("cannot open mail spool %s/%s: %s", maildir, user, strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	/* the new uid's already: a run killed after it, finished now */
	else if (st.st_uid != old_uid && st.st_uid != uid)
		why = "not owned by the user";
	else if (st.st_nlink != 1)
		why = "more than one link";
	if (why) {
		hs_warn("leaving mail spool %s/%s as it is: %s", maildir, user, why);
		return;
	}
	if (st.st_uid != uid && fchownat(fd, "", uid, (gid_t)-1, AT_EMPTY_PATH) < 0)
		hs_warn("failed to change mailbox owner of %s/%s: %s", maildir, user,
			strerror(errno));
	if (!new_name)
		return;
	if (linkat(fd, "", dfd, new_name, AT_EMPTY_PATH) < 0) {
		hs_warn("failed to rename mailbox %s/%s to %s: %s", maildir, user, new_name,
			strerror(errno));
		return;
	}
	if (fstatat(dfd, user, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
	    now.st_ino == st.st_ino && unlinkat(dfd, user, 0) < 0)
		hs_warn("cannot remove %s/%s: %s", maildir, user, strerror(errno));
}

/* ---- main ---- */

/* Did a usermod -l to new_name (uid in /etc/passwd) stop after
 * /etc/passwd had the new name?  Its directory then waits under the
 * reserved name, or is new_name's but still taken away (root's). */
static bool rename_unfinished(int treefd, const char *new_name, const char *reserved, uid_t uid)
{
	struct stat st;

	if (fstatat(treefd, reserved, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	return uid != 0 && fstatat(treefd, new_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_uid == 0;
}

/* ---- the plan: everything is decided, and staged in memory, before
 * anything is written ---- */

struct usermod_plan {
	struct hs_config *cfg;
	const char *name;       /* the account named on the command line */
	const char *final_name; /* its name once the change is done */
	char reserved[sizeof(RESERVED_PREFIX) + HS_NAME_MAX + 1];
	long idx;               /* its line in /etc/passwd */
	struct hs_passwd ent;   /* that line as it will be */
	char *user, *old_home;
	uid_t old_uid;
	gid_t old_gid;
	bool restructure;       /* -l or -u: the user's directory is taken away */
	bool old_uid_shared;    /* -u: another account keeps the old uid */
	bool new_uid_shared;    /* -u with -o: another account has the new uid */
	bool uid_asked;         /* -u was given, perhaps with the uid it has (a rerun) */
	int treefd, udirfd;
	bool have_dir, dir_is_reserved;
	bool home_moved;        /* -m renamed the home (before the commit) */
	bool home_left_taken;   /* an interrupted -u left the home taken away */
	bool reowning;          /* -u, -g, or the above: the home's files follow */
	struct reown ro;        /* whose files they are and whose they become */
	struct home_taken ht;   /* the home, taken away before the commit */
	struct stat passwd_before;      /* /etc/passwd as it was before the commit */
	uid_t dir_owner;
	gid_t auth_gid;
	const char *shell_file; /* the new contents of the user's shell file */
	bool shell_file_late;   /* out of the proxy: written after /etc/passwd */
	char shell_buf[HS_USERFILE_MAX + 2];    /* the shell file as it was */
	char hbuf[HS_HASH_MAX + 2];
};

static bool plan_changes_other_than_shell(void)
{
	return changes_secrets() || o.uid || o.move_home || o.login || o.groups || o.group ||
	       o.home || o.comment || changes_subids();
}

static bool plan_changes_anything(void)
{
	return o.shell || o.self_service || plan_changes_other_than_shell();
}

/* The files this change reads or edits: /etc/shadow for -L -U -p -e -f
 * and -l (a classic account's secrets, the line's name), the group files
 * for -g, -G and -l (member lists), the subordinate id files for -v -V -w
 * -W and -l (their owner).  A file no option changes is neither locked
 * nor read: usermod -c does not load every shadow line to keep them. */
static void plan_lock_global_files(void)
{
	unsigned files = HS_AS_BIT(HS_AS_PASSWD);

	if (changes_secrets() || o.login)
		files |= HS_AS_BIT(HS_AS_SHADOW);

	if (o.group || o.groups || o.login)
		files |= HS_AS_GROUP_FILES;
	if (o.login || changes_subids())
		files |= HS_AS_SUBID_FILES;
	if (hs_accountset_open(&set, files, HS_DB_LAZY) < 0)
		hs_die(usertool_file_status(set.failed), "%s", set.error);
}

/* The same usermod -l NEW OLD again after it stopped once /etc/passwd
 * said NEW: finish it as any usermod on NEW does. */
static void plan_resume_rename_to_new_name(struct usermod_plan *p)
{
	struct hs_accountdb *pw = db(HS_AS_PASSWD);
	long ni = hs_accountdb_find(pw, o.login);

	if (ni >= 0 && rename_unfinished(p->treefd, o.login, p->reserved,
					 hs_accountdb_get(pw, (size_t)ni)->pw.uid)) {
		p->name = o.login;
		o.login = NULL;
		p->final_name = p->name;
		p->idx = ni;
	}
}

/* An interrupted usermod -l left the directory under RESERVED_PREFIX+NEW
 * (see the top of the file) after it wrote /etc/passwd: the name given is
 * the new one, and its directory is missing.  Finish the rename. */
static void recover_rename_after_passwd(struct usermod_plan *p)
{
	_cleanup_close_ int fd = -1;
	char path[HS_PATHBUF_USER];
	struct stat st;

	/* p->reserved is p->name's: without -l, p->name is the final name */
	if (fstatat(p->treefd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return;
	fd = hs_fileio_open_dir_at(p->treefd, p->reserved, &st);
	if (fd >= 0 && renameat2(p->treefd, p->reserved, p->treefd, p->name, RENAME_NOREPLACE) == 0)
		hs_warn("finished the interrupted rename of %s",
			hs_userdir_path(path, sizeof(path), p->name, NULL));
}

/* The account as /etc/passwd has it now; -l to the same name and -u to
 * the same uid are no change (shadow-utils). */
static void plan_take_current_account(struct usermod_plan *p)
{
	p->ent = hs_accountdb_get(db(HS_AS_PASSWD), (size_t)p->idx)->pw;
	p->user = strdup(p->ent.name);
	p->old_home = strdup(p->ent.dir);
	if (!p->user || !p->old_home)
		fail_with(E_PW_UPDATE, "out of memory");
	p->old_uid = p->ent.uid;
	p->old_gid = p->ent.gid;
	if (o.login && strcmp(o.login, p->name) == 0)
		o.login = NULL;
	if (o.uid && new_uid == p->old_uid)
		o.uid = NULL;
	p->restructure = o.login || o.uid;
}

static void plan_find_account(struct usermod_plan *p)
{
	struct hs_accountdb *pw = db(HS_AS_PASSWD);

	pw->error[0] = '\0';
	p->idx = hs_accountdb_find(pw, p->name);
	/* the line of that name does not parse (a CR, a NUL): said, not
	 * "does not exist", as useradd refuses the name for that line */
	if (p->idx < 0 && pw->error[0])
		fail_with(E_PW_UPDATE, "%s", pw->error);
	p->final_name = o.login ? o.login : p->name;
	snprintf(p->reserved, sizeof(p->reserved), RESERVED_PREFIX "%s", p->final_name);
	p->treefd = hs_userdir_open_tree();
	if (p->treefd < 0 && p->treefd != -ENOENT)
		fail_with(E_PW_UPDATE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(p->treefd));
	if (p->idx < 0 && o.login && p->treefd >= 0)
		plan_resume_rename_to_new_name(p);
	if (p->idx >= 0 && p->treefd >= 0 && !o.login)
		recover_rename_after_passwd(p);
	if (p->idx < 0)
		fail_with(E_NOTFOUND, "user '%s' does not exist", p->name);
	plan_take_current_account(p);
}

static void plan_validate_against_accounts(struct usermod_plan *p)
{
	struct hs_accountdb *pw = db(HS_AS_PASSWD);

	if (o.login && hs_accountdb_find(pw, o.login) >= 0)
		fail_with(E_NAME_IN_USE, "user '%s' already exists", o.login);
	p->new_uid_shared = o.uid && hs_accountdb_find_id(pw, new_uid) >= 0;
	if (p->new_uid_shared && !o.non_unique)
		fail_with(E_UID_IN_USE, "UID '%lu' already exists", (unsigned long)new_uid);
	if (o.group) {
		/* a spelling that is no valid name or number names none */
		long gi = usertool_find_group(db(HS_AS_GROUP), o.group);

		if (gi < 0)
			fail_with(E_NOTFOUND, "group '%s' does not exist", o.group);
		p->ent.gid = hs_accountdb_get(db(HS_AS_GROUP), (size_t)gi)->gr.gid;
	}
	if (o.login || o.uid || o.move_home)
		usertool_die_if_busy(&set, p->user, p->old_uid);
}

/* The user's directory, or OLD's under the reserved name when a rename
 * stopped before /etc/passwd was written; -ENOENT when there is none. */
static int plan_open_userdir_fd(struct usermod_plan *p)
{
	int fd = hs_userdir_open(p->treefd, p->user, HS_ANY_UID, &p->dir_owner);
	struct stat st;

	if (fd != -ENOENT || !o.login)
		return fd;
	fd = hs_fileio_open_dir_at(p->treefd, p->reserved, &st);
	if (fd < 0)
		return -ENOENT;
	p->dir_is_reserved = true;
	p->dir_owner = st.st_uid;
	return fd;
}

/* The user's directory, if the account is in the tree. */
static void plan_open_userdir(struct usermod_plan *p)
{
	char path[HS_PATHBUF_USER];
	gid_t tree_gid;
	int r;

	if (p->treefd < 0)
		return;
	p->udirfd = plan_open_userdir_fd(p);
	if (p->udirfd == -ENOENT)
		return;
	if (p->udirfd < 0)
		fail(userfile_error("open", p->user, NULL, p->udirfd));
	p->have_dir = true;
	/* root's: taken away by an interrupted usermod */
	if (p->dir_owner != p->old_uid && p->dir_owner != 0 &&
	    !(o.uid && p->dir_owner == new_uid)) {
		fail_with(E_PW_UPDATE, "%s is owned by uid %lu, not by the user",
				       hs_userdir_path(path, sizeof(path), p->user, NULL),
				       (unsigned long)p->dir_owner);
	}
	r = hs_userdir_layout_gids(&tree_gid, &p->auth_gid);
	if (r < 0)
		fail_with(E_PW_UPDATE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
}

/* -l: neither NEW nor its reserved name may be in the tree already (the
 * reserved one may: the directory, when this run finishes an interrupted
 * -l).  NEW never, also for an account without a directory: the NSS
 * module would serve the hash found there for the renamed account. */
static void plan_check_new_userdir_free(const struct usermod_plan *p)
{
	char path[HS_PATHBUF_USER];
	struct stat st;

	if (!o.login || p->treefd < 0)
		return;
	if (fstatat(p->treefd, o.login, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    (!p->dir_is_reserved &&
	     fstatat(p->treefd, p->reserved, &st, AT_SYMLINK_NOFOLLOW) == 0))
		fail_with(E_NAME_IN_USE, "%s already exists",
			  hs_userdir_path(path, sizeof(path), o.login, NULL));
}

/* The shell the account has now: its shell file's behind the proxy, else
 * /etc/passwd's; fills file_buf and *file_shell with the shell file's
 * (NULL when there is none or it cannot be read). */
static const char *current_shell(const struct usermod_plan *p, char *file_buf, size_t size,
				 const char **file_shell)
{
	bool proxied = strcmp(p->ent.shell, HS_SHELL_PROXY) == 0;
	int r = -ENOENT;

	*file_shell = NULL;
	if (p->have_dir)
		r = hs_userdir_read_shell(p->udirfd, p->dir_owner ? p->dir_owner : p->old_uid,
					  file_buf, size, file_shell);
	if (!proxied)
		return p->ent.shell;
	if (r < 0 && !o.shell)
		fail(userfile_error("read", p->user, HS_FILE_SHELL, r));
	return *file_shell ? *file_shell : "";
}

/* Is the account to be behind the proxy (docs/decisions.md "chsh")?  The
 * option decides; else only an account behind it whose shell stays the
 * same stays there: a different shell from root is root's choice, which
 * the user must not change back (SHELL_PROXY is for new accounts only). */
static bool wants_proxy(const struct usermod_plan *p, const char *current)
{
	if (o.self_service)
		return o.self_service > 0;
	return strcmp(p->ent.shell, HS_SHELL_PROXY) == 0 &&
	       (!o.shell || strcmp(o.shell, current) == 0);
}

/* -s and --[no-]self-service-shell: a listed shell goes behind the proxy
 * when the account wants it (it needs a directory in the tree and a uid
 * other than 0), anything else into /etc/passwd; the shell file holds the
 * real shell either way.  Nothing that is already so is written: a
 * request that changes nothing drops out of the plan. */
static void plan_choose_shell(struct usermod_plan *p)
{
	const char *file_shell, *current, *shell, *passwd_shell;
	struct hs_shells shells;
	bool listed, behind;

	current = current_shell(p, p->shell_buf, sizeof(p->shell_buf), &file_shell);
	shell = o.shell ? o.shell : current;
	if (hs_shells_is_proxy(shell) && shell[0])
		fail_with(E_BAD_ARG, "%s is the shell proxy, not a login shell", shell);
	if (hs_shells_load(&shells, HS_ETC_SHELLS) < 0)
		fail_with(E_PW_UPDATE, "%s", shells.error);
	listed = shell[0] && hs_shells_contains(&shells, shell);
	behind = listed && p->have_dir && (o.uid ? new_uid : p->old_uid) != 0 &&
		 wants_proxy(p, current);
	hs_shells_free(&shells);
	if (o.self_service > 0 && !behind)
		fail_with(E_BAD_ARG, "shell '%s' cannot be self-service: it needs a shell listed "
			  "in %s, a directory in %s and a uid other than 0", shell, HS_ETC_SHELLS,
			  HS_TREE_DIR);
	passwd_shell = behind ? HS_SHELL_PROXY : shell;
	p->shell_file_late = !behind && strcmp(p->ent.shell, HS_SHELL_PROXY) == 0;
	if (p->have_dir) {
		p->shell_file = shell[0] ? shell : "/bin/sh";
		if (file_shell && strcmp(file_shell, p->shell_file) == 0)
			p->shell_file = NULL;
	}
	if (strcmp(p->ent.shell, passwd_shell) != 0) {
		p->ent.shell = passwd_shell;
	} else if (!p->shell_file) {
		o.shell = NULL;         /* already so */
		o.self_service = 0;
	}
}

/* usermod -s with the shell the account has, decided before any lock: then
 * nothing is written at all, not even a lock file in /etc.  What the
 * files say without the lock is what they said at some moment, so the
 * answer "already so" stays right; anything a lock would change first (a
 * journal to finish, a replaced file's leftover to put away, a directory
 * taken away or renamed half-way) goes the locked way. */
static bool shell_already_set(struct usermod_plan *p)
{
	/* what the lock would finish or clean up first */
	static const char *const leftovers[] = {
		HS_ETC_DIR "/" HS_TXN_JOURNAL,
		HS_ETC_DIR "/.passwd" HS_TXN_SUFFIX,
		HS_ETC_DIR "/.shadow" HS_TXN_SUFFIX,
	};
	const char *shell = o.shell;
	int self_service = o.self_service;
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT;
	struct stat st;
	bool same = false;
	long idx;

	/* a request for nothing but the shell (-s, --[no-]self-service-shell)? */
	if ((!shell && !self_service) || plan_changes_other_than_shell())
		goto out;
	for (size_t i = 0; i < HS_ARRAY_SIZE(leftovers); i++)
		if (fstatat(AT_FDCWD, leftovers[i], &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		    errno != ENOENT)
			goto out;
	if (hs_accountdb_load(&pw, HS_DB_PASSWD, HS_ETC_PASSWD, HS_DB_LAZY) < 0)
		goto out;
	idx = hs_accountdb_find(&pw, p->name);
	p->treefd = hs_userdir_open_tree();
	if (idx < 0 || (p->treefd < 0 && p->treefd != -ENOENT))
		goto out;
	p->ent = hs_accountdb_get(&pw, (size_t)idx)->pw;
	p->user = (char *)p->name;
	p->old_uid = p->ent.uid;
	if (p->treefd >= 0)
		p->udirfd = hs_userdir_open(p->treefd, p->name, p->old_uid, &p->dir_owner);
	p->have_dir = p->udirfd >= 0;
	if (p->udirfd < 0 && p->udirfd != -ENOENT)
		goto out;
	plan_choose_shell(p);
	same = !plan_changes_anything();
out:
	hs_accountdb_free(&pw);
	hs_close(p->udirfd);
	hs_close(p->treefd);
	*p = (struct usermod_plan){ .name = p->name, .cfg = p->cfg, .treefd = -1, .udirfd = -1,
				    .auth_gid = HS_ANY_GID };
	o.shell = shell;
	o.self_service = self_service;
	return same;
}

/* -L -U -p -e -f on a classic account: the secrets are in /etc/shadow
 * (or, without a shadow line, the hash in passwd). */
static void plan_stage_classic_secrets(struct usermod_plan *p)
{
	struct hs_accountdb *shadow = db(HS_AS_SHADOW);
	long si = shadow ? hs_accountdb_find(shadow, p->user) : -1;

	if (si < 0) {
		/* the fields stay where another tool put them (a passwd field
		 * other than "x"), but a hash never goes into the world-readable
		 * /etc/passwd of an account whose password is elsewhere: one
		 * whose directory is missing, say, or under an interrupted
		 * usermod -l's reserved name */
		if (o.expire || o.inactive || (o.password && strcmp(p->ent.passwd, "x") == 0))
			fail_with(E_PW_UPDATE, "user %s has no %s entry and no directory in %s",
					       p->user, HS_ETC_SHADOW, HS_TREE_DIR);
		new_hash(p->user, &p->ent.passwd, NULL, p->hbuf, sizeof(p->hbuf));
		return;
	}
	struct hs_spwd sp = hs_accountdb_get(shadow, (size_t)si)->sp;

	new_hash(p->user, &sp.hash, &sp.lstchg, p->hbuf, sizeof(p->hbuf));
	if (o.expire)
		sp.expire = new_expire;
	if (o.inactive)
		sp.inact = new_inactive;
	if (hs_accountdb_replace(shadow, (size_t)si, &sp) < 0)
		fail_with(E_PW_UPDATE, "%s", shadow->error);
}

static void plan_stage_passwd_line(struct usermod_plan *p)
{
	struct hs_accountdb *pw = db(HS_AS_PASSWD);

	if (o.comment)
		p->ent.gecos = o.comment;
	if (o.home)
		p->ent.dir = o.home;
	if (o.uid)
		p->ent.uid = new_uid;
	if (o.login)
		p->ent.name = o.login;
	if (!p->have_dir && changes_secrets())
		plan_stage_classic_secrets(p);
	if (hs_accountdb_replace(pw, (size_t)p->idx, &p->ent) < 0)
		fail_with(E_BAD_ARG, "%s", pw->error);
	/* the account has its new uid now: any other line with the old one
	 * is another account's */
	p->old_uid_shared = o.uid && hs_accountdb_find_id(pw, p->old_uid) >= 0;
}

/* -l: the shadow line, the member lists and the subordinate ranges follow
 * the new name; -G and -v -V -w -W are staged here too. */
static void plan_stage_other_files(const struct usermod_plan *p)
{
	struct hs_accountdb *shadow = db(HS_AS_SHADOW);
	long si = o.login && shadow ? hs_accountdb_find(shadow, p->user) : -1;

	if (si >= 0) {
		struct hs_spwd sp = hs_accountdb_get(shadow, (size_t)si)->sp;

		sp.name = o.login;
		if (hs_accountdb_replace(shadow, (size_t)si, &sp) < 0)
			fail_with(E_PW_UPDATE, "%s", shadow->error);
	}
	if (o.groups)
		edit_groups(p->user);
	if (o.login && !o.groups) {
		struct hs_accountdb *gr = db(HS_AS_GROUP);

		for (size_t i = 0; i < gr->n_lines; i++) {
			const union hs_dbrec *rec = hs_accountdb_get(gr, i);

			if (rec && hs_records_list_contains(rec->gr.members, p->user))
				changed.n++;
		}
	}
	if (o.login && hs_accountset_rename_user(&set, p->user, o.login) < 0)
		fail_with(E_GRP_UPDATE, "%s", set.error);
	edit_subids(p->user, o.login);
}

/* The audit events of shadow-utils' usermod for a committed change, in its
 * order: the passwd fields, the shadow fields, the memberships in group
 * then in gshadow.  shadow-utils 4.13 sends them all as
 * AUDIT_USER_CHAUTHTOK, a successful lock or unlock included (with
 * res=failed there, a bug fixed since: ours says success). */
static const char *member_op(char kind, bool in_gshadow)
{
	switch (kind) {
	case 'a': return in_gshadow ? HS_AUDIT_OP_ADD_TO_GSHADOW : HS_AUDIT_OP_ADD_TO_GROUP;
	case 'r': return in_gshadow ? HS_AUDIT_OP_RM_GSHADOW_MEMBER : HS_AUDIT_OP_RM_MEMBER;
	default: return in_gshadow ? HS_AUDIT_OP_CH_GSHADOW_MEMBER : HS_AUDIT_OP_CH_MEMBER;
	}
}

static void audit_changes(const struct usermod_plan *p, bool gshadow)
{
	const struct {
		bool when;
		const char *op;
	} fields[] = {
		{ o.login, HS_AUDIT_OP_CH_NAME },
		{ o.uid, HS_AUDIT_OP_CH_UID },
		{ o.group, HS_AUDIT_OP_CH_GID },
		{ o.comment, HS_AUDIT_OP_CH_COMMENT },
		{ o.home, HS_AUDIT_OP_CH_HOME },
		{ o.shell || o.self_service, HS_AUDIT_OP_CH_SHELL },
		{ o.inactive, HS_AUDIT_OP_CH_INACTIVE },
		{ o.expire, HS_AUDIT_OP_CH_EXPIRE },
		{ changed.hash, o.lock ? HS_AUDIT_OP_LOCK
			      : o.unlock ? HS_AUDIT_OP_UNLOCK : HS_AUDIT_OP_CH_PASSWORD },
	};
	const char *name = o.login ? o.login : p->user;

	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (fields[i].when)
			hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, fields[i].op, NULL, p->ent.uid, true);
	for (int pass = 0; pass < 1 + gshadow; pass++)
		for (size_t i = 0; i < changed.n; i++) {
			char kind = changed.groups ? changed.groups[i] : 'n';

			/* the gshadow rename names the old name */
			hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, member_op(kind, pass),
					 pass && kind == 'n' ? p->user : name, HS_AUDITLOG_NO_ID,
					 true);
		}
}

/* ---- the commit: see the top of the file for the order ---- */

static _Noreturn void fail_unblocking(const sigset_t *saved, int status)
{
	hs_privs_restore_signals(saved);
	fail(status);
}

/* The user's lock, before signals are blocked (it may take a while), held
 * to the end: no PAM update or chsh writes into the directory while it is
 * edited, renamed or re-owned. */
static void apply_lock_userdir(struct usermod_plan *p)
{
	struct hs_err err = HS_ERR_INIT;

	/* a rerun of an interrupted -l finds the directory at its
	 * reserved name */
	if (p->have_dir && (changes_secrets() || p->shell_file || p->restructure) &&
	    hs_userdir_lock_err(p->treefd, p->dir_is_reserved ? p->reserved : p->user,
				&p->udirfd, HS_LOCK_TIMEOUT_MS, &err) < 0) {
		hs_report(&err);
		fail(E_PW_UPDATE);
	}
}

static void apply_userdir_files(const struct usermod_plan *p)
{
	if (p->have_dir)
		edit_userdir_files(p->udirfd, p->user, p->dir_owner ? p->dir_owner : p->old_uid,
				   p->auth_gid, p->shell_file_late ? NULL : p->shell_file);
}

/* Out of the proxy, the shell file follows /etc/passwd: written before, an
 * interruption would leave root's new shell behind the proxy, where the
 * user could change it back (and a rerun would find it already so). */
static int apply_late_shell_file(const struct usermod_plan *p)
{
	uid_t owner = o.uid ? new_uid : p->dir_owner ? p->dir_owner : p->old_uid;
	int r;

	if (!p->have_dir || !p->shell_file || !p->shell_file_late)
		return E_SUCCESS;
	r = hs_userdir_write_shell(p->udirfd, owner, p->auth_gid, p->shell_file);
	return r < 0 ? userfile_error("write", p->user, HS_FILE_SHELL, r) : E_SUCCESS;
}

static void apply_move_home(struct usermod_plan *p, const sigset_t *saved)
{
	int status;

	if (!o.move_home)
		return;
	status = move_home(p->old_home, o.home, p->old_uid, &p->home_moved);
	if (status != E_SUCCESS)
		fail_unblocking(saved, status);
}

/* Did a failed commit pass its point (hs_txn_files_pending, or
 * /etc/passwd replaced)?  Then /etc/passwd will have the change. */
static bool commit_passed_its_point(const struct usermod_plan *p)
{
	_cleanup_close_ int etcfd = open(HS_ETC_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	return etcfd < 0 || hs_txn_files_pending(etcfd) || stat(HS_ETC_PASSWD, &st) < 0 ||
	       st.st_dev != p->passwd_before.st_dev || st.st_ino != p->passwd_before.st_ino;
}

/* A failure before the commit point (a full /etc): /etc/passwd still
 * names the old home, so the home goes back there.  A commit that failed
 * after its point keeps it moved, as /etc/passwd will name the new one. */
static void undo_move_home(struct usermod_plan *p)
{
	bool moved_back = false;

	if (!p->home_moved || commit_passed_its_point(p))
		return;
	if (move_home(o.home, p->old_home, p->old_uid, &moved_back) == E_SUCCESS && moved_back)
		p->home_moved = false;
	else
		hs_warn("the home directory is left at %s; /etc/passwd names %s", o.home,
			p->old_home);
}

/* Before the commit point /etc/passwd names the account p->user: its
 * directory goes back to that name (from the reserved one, when renamed:
 * by this run, or by an interrupted -l that this one was finishing) and
 * then to its owner.  Handed back under the reserved name, the user
 * would own a directory that nothing finds by name: no login.  If the
 * name cannot be had back it stays reserved and root's, as the
 * interrupted -l left it, for the next -l to finish.  0 or -errno. */
static int give_back_under_old_name(const struct usermod_plan *p, bool renamed)
{
	if (renamed && renameat2(p->treefd, p->reserved, p->treefd, p->user, RENAME_NOREPLACE) < 0)
		return -errno;
	return hs_walk_hand_back(p->udirfd, p->old_uid, p->auth_gid, HS_USERDIR_MODE);
}

/* -l -u: take the directory away from the user, give its files the new
 * uid, put it under the reserved name. */
static void apply_take_away_userdir(struct usermod_plan *p, const sigset_t *saved)
{
	char path[HS_PATHBUF_USER];
	int r = 0;

	if (!p->have_dir || !p->restructure)
		return;
	hs_userdir_path(path, sizeof(path), p->user, NULL);
	if (fchown(p->udirfd, 0, 0) < 0 || fchmod(p->udirfd, 0700) < 0) {
		hs_warn("cannot take %s away from the user: %s", path, strerror(errno));
		undo_move_home(p);
		fail_unblocking(saved, E_PW_UPDATE);
	}
	if (o.uid)
		r = reown_userdir(p->udirfd, p->user, p->old_uid, new_uid);
	if (r < 0) {
		hs_warn("cannot change the owner of the files in %s: %s", path, hs_strerror(r));
	} else if (o.login && !p->dir_is_reserved &&
		   renameat2(p->treefd, p->user, p->treefd, p->reserved, RENAME_NOREPLACE) < 0) {
		r = -errno;
		hs_warn("cannot rename %s: %s", path, strerror(-r));
	}
	if (r < 0) {
		/* undone: the files are as they were (a failed re-own may have
		 * re-owned some of them already; the user's own files stay
		 * readable to the user either way) */
		r = give_back_under_old_name(p, p->dir_is_reserved);
		if (r < 0)
			hs_warn("cannot hand the directory back to uid %lu: %s",
				(unsigned long)p->old_uid, hs_strerror(r));
		undo_move_home(p);
		fail_unblocking(saved, E_PW_UPDATE);
	}
}

static int hand_back_failed(const char *name, int r)
{
	char path[HS_PATHBUF_USER];

	hs_warn("cannot hand %s back to the user: %s",
		hs_userdir_path(path, sizeof(path), name, NULL), hs_strerror(r));
	return E_PW_UPDATE;
}

/* A commit that failed before its point (a full /etc): /etc/passwd still
 * names the account as it was, so its directory goes back as it was, as
 * the home does: its files to the old uid, its own name, handed back
 * (left taken away, the user could not log in until the next usermod).
 * So does one an interrupted -l left under the reserved name. */
static void undo_take_away_userdir(const struct usermod_plan *p)
{
	int r = 0;

	if (!p->have_dir || !p->restructure || commit_passed_its_point(p))
		return;
	if (o.uid)
		r = reown_userdir(p->udirfd, p->user, new_uid, p->old_uid);
	if (r == 0)
		r = give_back_under_old_name(p, o.login != NULL);
	if (r < 0)
		(void)hand_back_failed(p->user, r);
}

/* -l: the reserved name becomes NEW; then the directory goes back to the
 * user, as it does when an interrupted run left it taken away
 * (hs_walk_hand_back: the mode first, while it is still root's, then the
 * owner; an interruption in between leaves it root's, which any usermod
 * on the account hands back, never the user's without its setgid mode). */
static int apply_hand_back_userdir(const struct usermod_plan *p)
{
	char path[HS_PATHBUF_USER], path2[HS_PATHBUF_USER];
	int r = 0, status = E_SUCCESS;

	if (!p->have_dir)
		return E_SUCCESS;
	if (!p->restructure) {
		/* left taken away by an interrupted run: hand it back, with
		 * shadow and shell the account's (a -u killed before its
		 * commit gave them the uid it did not get); the directory is
		 * root's, so nobody else put them there */
		if (p->dir_owner == 0 && p->old_uid != 0) {
			(void)reown_userdir(p->udirfd, p->user, HS_ANY_UID, p->old_uid);
			r = hs_walk_hand_back(p->udirfd, p->old_uid, p->auth_gid, HS_USERDIR_MODE);
		}
		return r < 0 ? hand_back_failed(p->user, r) : E_SUCCESS;
	}
	/* left root's by an interrupted -l -u, killed before its commit:
	 * shadow and shell go back to the account's uid, as above */
	if (p->dir_owner == 0 && p->old_uid != 0 && !o.uid)
		(void)reown_userdir(p->udirfd, p->final_name, HS_ANY_UID, p->old_uid);
	if (o.login && renameat2(p->treefd, p->reserved, p->treefd, o.login, RENAME_NOREPLACE) < 0) {
		hs_warn("cannot rename %s to %s: %s",
			hs_userdir_path(path, sizeof(path), p->reserved, NULL),
			hs_userdir_path(path2, sizeof(path2), o.login, NULL), strerror(errno));
		status = E_PW_UPDATE;
	}
	r = hs_walk_hand_back(p->udirfd, o.uid ? new_uid : p->old_uid, p->auth_gid,
			      HS_USERDIR_MODE);
	return r < 0 ? hand_back_failed(p->final_name, r) : status;
}

/* The home whose files are re-owned: where it is once -m moved it. */
static const char *reown_home_dir(const struct usermod_plan *p)
{
	return o.home && o.move_home ? o.home : p->old_home;
}

/* -u, or -g to another group, before the commit: the home is taken away
 * and marked (see TAKEN_XATTR), so that a kill from the commit on is
 * finished by the next usermod on the account.  So is a home an
 * interrupted run left taken away, whatever this run changes. */
static void apply_take_away_home(struct usermod_plan *p)
{
	p->ro = (struct reown){
		.old_uid = p->old_uid, .uid = o.uid ? new_uid : p->old_uid,
		.old_gid = p->old_gid, .gid = p->ent.gid,
		.mid_uid = (uid_t)-1, .mid_gid = (gid_t)-1,
	};
	p->ht = (struct home_taken){ .hfd = -1, .status = E_SUCCESS };
	/* -u with the uid it has already: a rerun, which finishes what an
	 * interrupted one left (see TAKEN_XATTR) */
	p->reowning = p->uid_asked || (o.group && p->ent.gid != p->old_gid) ||
		      p->home_left_taken;
	if (p->reowning)
		reown_home_take(reown_home_dir(p), &p->ro, &p->ht);
}

/* The commit failed: before its point a home this run took away goes
 * back as it was (one left by an interrupted run keeps its record);
 * after it /etc/passwd will have the new uid, and the home stays taken
 * away and marked for the next usermod to finish. */
static void undo_take_away_home(struct usermod_plan *p)
{
	const struct stat *saved = &p->ht.saved;

	if (!p->reowning || p->ht.hfd < 0)
		return;
	if (commit_passed_its_point(p))
		hs_warn("%s stays root's until usermod runs again on the account",
			reown_home_dir(p));
	else if (p->ht.fresh)
		(void)home_hand_back(reown_home_dir(p), p->ht.hfd, saved->st_uid, saved->st_gid,
				     saved->st_mode);
}

/* -u, or -g to another group: the home's files and the mail spool follow,
 * after the locks are released; the audit event says so.  -l renames the
 * spool. */
static int apply_reown_home(struct usermod_plan *p, int status)
{
	struct reown *ro = &p->ro;
	int hs;

	if (!p->reowning) {
		if (o.login)
			move_mail_spool(p->cfg, p->user, ro->old_uid, ro->old_uid, o.login);
		return status;
	}
	/* while the home is still marked, so that a kill after it is
	 * finished too; a rerun's old uid is the interrupted run's */
	if (ro->old_uid != ro->uid || o.login)
		move_mail_spool(p->cfg, p->user, ro->old_uid, ro->uid, o.login);
	hs = reown_home(reown_home_dir(p), ro, &p->ht);
	if (hs != E_SUCCESS && status == E_SUCCESS)
		status = hs;
	/* a rerun with nothing left to finish changed no owner */
	if (ro->old_uid != ro->uid || ro->old_gid != ro->gid)
		hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, HS_AUDIT_OP_HOME_OWNER, NULL, p->ent.uid,
				 true);
	return status;
}

/* -u: the lastlog and faillog records follow the uid, as shadow-utils'
 * usermod moves them; a record another account's uid keeps stays. */
static void apply_move_login_records(const struct usermod_plan *p)
{
	struct hs_err err = HS_ERR_INIT;

	if (o.uid && hs_logrecords_move(p->cfg, p->old_uid, new_uid, p->old_uid_shared,
					p->new_uid_shared, &err) < 0)
		hs_report(&err);
}

int main(int argc, char **argv)
{
	struct usermod_plan p = { .treefd = -1, .udirfd = -1, .auth_gid = HS_ANY_GID };
	sigset_t saved;
	int status;

	usertool_init(argc, argv, "usermod");
	parse_options(argc, argv);
	check_arguments();
	usertool_start();
	p.name = argv[optind];
	if (!hs_names_user_valid(p.name))
		hs_die(E_NOTFOUND, "user '%s' does not exist", p.name);
	if (!plan_changes_anything()) {
		fprintf(stderr, "%s: no changes\n", hs_cli_prog());
		return E_SUCCESS;
	}
	p.cfg = usertool_load_logindefs();
	if (shell_already_set(&p))
		return E_SUCCESS;
	plan_lock_global_files();
	/* before plan_find_account drops a -u that changes nothing */
	p.uid_asked = o.uid != NULL;
	plan_find_account(&p);
	plan_validate_against_accounts(&p);
	/* a usermod that works on the home (-u, -g, -m) finishes what an
	 * interrupted -u left (see TAKEN_XATTR).  The others never look at
	 * it: -c or -aG must not hang on a dead NFS home or mount an
	 * automounted one, and they stay confined to /etc.  With -d NEW -m
	 * the home may be at NEW already: a -u -d NEW -m killed in its
	 * commit moved it there and marked it. */
	p.home_left_taken = !p.uid_asked && (o.group || o.move_home) &&
			    (home_at(p.old_home, p.old_uid, false) ||
			     (o.move_home && o.home && home_at(o.home, p.old_uid, false)));
	/* after the busy check: confined, it could not follow the
	 * /proc/PID/root of processes outside its domain.  The current home
	 * is re-owned with -u or -g, moved with -m; -u re-owns the mail spool
	 * (-l renames it) and moves the lastlog and faillog records.  Without
	 * those options usermod may write only /etc (and the tree below it). */
	usertool_confine(p.uid_asked || o.login || p.home_left_taken ?
			 usertool_mail_dir(p.cfg) : NULL, NULL, o.uid != NULL,
			 p.uid_asked || o.group || o.move_home || p.home_left_taken ?
			 p.old_home : NULL,
			 o.move_home ? o.home : NULL);
	plan_open_userdir(&p);
	plan_check_new_userdir_free(&p);
	/* uid 0 leaves the proxy as well (see plan_choose_shell) */
	if (o.shell || o.self_service || (o.uid && new_uid == 0)) {
		plan_choose_shell(&p);
		if (!plan_changes_anything()) {
			/* usermod -s with the shell it has: no write at all */
			hs_accountset_unlock(&set);
			hs_accountset_close(&set);
			return E_SUCCESS;
		}
	}
	plan_stage_passwd_line(&p);
	plan_stage_other_files(&p);

	apply_lock_userdir(&p);
	hs_privs_block_signals(&saved);
	/* to tell a failed commit before its point from one after it */
	if (stat(HS_ETC_PASSWD, &p.passwd_before) < 0)
		memset(&p.passwd_before, 0, sizeof(p.passwd_before));
	apply_userdir_files(&p);
	apply_move_home(&p, &saved);
	apply_take_away_userdir(&p, &saved);
	apply_take_away_home(&p);
	if (usertool_commit(&set, NULL, 0) < 0) {
		undo_take_away_home(&p);
		undo_take_away_userdir(&p);
		undo_move_home(&p);
		fail_unblocking(&saved, usertool_file_status(set.failed));
	}
	status = apply_late_shell_file(&p);
	if (apply_hand_back_userdir(&p) != E_SUCCESS)
		status = E_PW_UPDATE;
	hs_wipe(p.hbuf, sizeof(p.hbuf));
	syslog(LOG_INFO, "change user '%s'%s%s", p.user, o.login ? " to " : "",
	       o.login ? o.login : "");
	audit_changes(&p, db(HS_AS_GSHADOW) != NULL);
	hs_accountset_unlock(&set);
	/* still with the signals waiting: one that came during the commit
	 * would end us here, with /etc/passwd naming the new uid and the
	 * home's files keeping the old one, which a rerun cannot tell */
	status = apply_reown_home(&p, status);
	apply_move_login_records(&p);
	if (o.move_home)
		hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, HS_AUDIT_OP_MOVE_HOME, NULL, p.ent.uid, true);
	hs_privs_restore_signals(&saved);

	hs_accountset_close(&set);
	hs_config_free(p.cfg);
	closelog();
	hs_close(p.udirfd);
	hs_close(p.treefd);
	free(p.user);
	free(p.old_home);
	return status;
}
