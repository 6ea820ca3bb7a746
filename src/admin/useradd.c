/* useradd: create a new user or update the default new-user information.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' useradd(8); useradd(8) of this package lists where
 * we differ.
 *
 * Under the global locks (DESIGN §4, shadow-utils' order: passwd, shadow,
 * group, gshadow, subuid, subgid) it appends the passwd line, the private
 * group (USERGROUPS_ENAB, -U, -N) to /etc/group and /etc/gshadow, the
 * supplementary memberships and the subordinate id ranges, and creates the
 * user's directory in the tree (hash, shell, aging).  Everything is loaded,
 * checked and edited in memory first, so a refusal changes nothing; two
 * useradds (ours, shadow-utils', systemd-sysusers) serialise on the locks
 * and the second one sees the first one's entry.
 *
 * Order of the commit, chosen for interruption (SIGKILL, a crash) at any
 * instant: the complete old state or the complete new one (global files,
 * tree directory and home), through the transaction journal of the global
 * files, which carries the directory and the home as its work
 * (lib/etc/txn.h).  The NSS module serves a tree directory by NAME,
 * whether or not /etc/passwd has a line for it, so a directory without a
 * passwd line is not harmless garbage: whatever hash it holds becomes the
 * password of the next account created with that name by a tool that does
 * not know the tree.  So:
 *   1. a leftover directory for the name (there is no passwd line for it,
 *      we hold the locks) is removed first: it must not be inherited;
 *   2. the directory is built complete under a reserved name
 *      (hs_userdir_build) with a LOCKED hash "!";
 *   3. with -m, a journal "prepared" names the home's reserved name, then
 *      the home is built there whole (the skeleton copied, synced), still
 *      root's 0700 -- a kill up to here is undone by the next tool that
 *      takes the locks (the reserved directories removed);
 *   4. the commit point: the journal names the global files, the
 *      directory and the home; then the files are installed, the
 *      directory and the home renamed into place and the home handed
 *      over -- a kill from here on is finished by the next tool;
 *   5. only then the real hash of -p replaces the "!" (a crash between 4
 *      and 5 leaves an account with a locked password: fail closed, the
 *      administrator sets it again);
 *   6. after the locks are released, the mail spool.
 * A home that cannot be made does not stop the account (shadow-utils'
 * way): exit 12 tells.
 * Without a tree (a classic system) the hash goes to /etc/shadow, written
 * before /etc/passwd. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "globalfile.h"
#include "groupops.h"
#include "homedir.h"
#include "ids.h"
#include "logrecords.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "selabel.h"
#include "shells.h"
#include "txn.h"
#include "userdir.h"
#include "usertool-common.h"
#include "util.h"

/* ---- options ---- */

static struct {
	const char *base, *comment, *home, *expire, *inactive, *group, *groups, *skel;
	const char *password, *shell, *uid;
	bool defaults, create_home, no_create_home, no_user_group, user_group;
	bool non_unique, system, subids_for_system, no_log_init;
	int self_service;       /* --self-service-shell 1, --no-self-service-shell -1 */
	char *k_overrides;      /* "KEY VALUE\n" lines from -K, appended to login.defs */
	size_t k_len;
} o;

static _Noreturn void usage(int status)
{
	char args[2 * NAME_MAX + 64];

	snprintf(args, sizeof args, "[options] LOGIN\n       %s -D\n       %s -D [options]",
		 hs_cli_prog(), hs_cli_prog());
	hs_cli_usage(status, args,
		"      --badname                 do not check for bad names (not supported)\n"
		"  -b, --base-dir BASE_DIR       base directory for the home directory of the\n"
		"                                new account\n"
		"      --btrfs-subvolume-home    use BTRFS subvolume for home directory (not supported)\n"
		"  -c, --comment COMMENT         GECOS field of the new account\n"
		"  -d, --home-dir HOME_DIR       home directory of the new account\n"
		"  -D, --defaults                print or change default useradd configuration\n"
		"  -e, --expiredate EXPIRE_DATE  expiration date of the new account\n"
		"  -f, --inactive INACTIVE       password inactivity period of the new account\n"
		"  -F, --add-subids-for-system   add entries to sub[ud]id even when adding a system user\n"
		"  -g, --gid GROUP               name or ID of the primary group of the new\n"
		"                                account\n"
		"  -G, --groups GROUPS           list of supplementary groups of the new\n"
		"                                account\n"
		"  -h, --help                    display this help message and exit\n"
		"  -k, --skel SKEL_DIR           use this alternative skeleton directory\n"
		"  -K, --key KEY=VALUE           override /etc/login.defs defaults\n"
		"  -l, --no-log-init             do not add the user to the lastlog and\n"
		"                                faillog databases\n"
		"  -m, --create-home             create the user's home directory\n"
		"  -M, --no-create-home          do not create the user's home directory\n"
		"  -N, --no-user-group           do not create a group with the same name as\n"
		"                                the user\n"
		"  -o, --non-unique              allow to create users with duplicate\n"
		"                                (non-unique) UID\n"
		"  -p, --password PASSWORD       encrypted password of the new account\n"
		"  -r, --system                  create a system account\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -P, --prefix PREFIX_DIR       prefix directory (not supported)\n"
		"  -s, --shell SHELL             login shell of the new account\n"
		"      --self-service-shell      let the user change their shell with chsh\n"
		"                                (/etc/passwd names the shell proxy)\n"
		"      --no-self-service-shell   keep the real shell in /etc/passwd\n"
		"                                (default: login.defs' SHELL_PROXY)\n"
		"  -u, --uid UID                 user ID of the new account\n"
		"  -U, --user-group              create a group with the same name as the user\n"
		"  -Z, --selinux-user SEUSER     use a specific SEUSER for the SELinux user mapping\n"
		"      --selinux-range SERANGE   use a specific MLS range for the SELinux user mapping\n"
		"                                (not supported)\n",
		"\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_BTRFS, OPT_BADNAME, OPT_SELF_SERVICE, OPT_NO_SELF_SERVICE };
	static const struct option longopts[] = {
		{ "base-dir",              required_argument, NULL, 'b' },
		{ "badname",               no_argument,       NULL, OPT_BADNAME },
		{ "btrfs-subvolume-home",  no_argument,       NULL, OPT_BTRFS },
		{ "comment",               required_argument, NULL, 'c' },
		{ "home-dir",              required_argument, NULL, 'd' },
		{ "defaults",              no_argument,       NULL, 'D' },
		{ "expiredate",            required_argument, NULL, 'e' },
		{ "inactive",              required_argument, NULL, 'f' },
		{ "add-subids-for-system", no_argument,       NULL, 'F' },
		{ "gid",                   required_argument, NULL, 'g' },
		{ "groups",                required_argument, NULL, 'G' },
		{ "help",                  no_argument,       NULL, 'h' },
		{ "skel",                  required_argument, NULL, 'k' },
		{ "key",                   required_argument, NULL, 'K' },
		{ "no-log-init",           no_argument,       NULL, 'l' },
		{ "create-home",           no_argument,       NULL, 'm' },
		{ "no-create-home",        no_argument,       NULL, 'M' },
		{ "no-user-group",         no_argument,       NULL, 'N' },
		{ "non-unique",            no_argument,       NULL, 'o' },
		{ "password",              required_argument, NULL, 'p' },
		{ "system",                no_argument,       NULL, 'r' },
		{ "root",                  required_argument, NULL, 'R' },
		{ "prefix",                required_argument, NULL, 'P' },
		{ "shell",                 required_argument, NULL, 's' },
		{ "self-service-shell",    no_argument,       NULL, OPT_SELF_SERVICE },
		{ "no-self-service-shell", no_argument,       NULL, OPT_NO_SELF_SERVICE },
		{ "uid",                   required_argument, NULL, 'u' },
		{ "user-group",            no_argument,       NULL, 'U' },
		{ "selinux-user",          required_argument, NULL, 'Z' },
		{ "selinux-range",         required_argument, NULL, 'Z' },
		{ "version",               no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	bool other_than_d = false;      /* an option -D does not take */
	int c, r;

	while ((c = getopt_long(argc, argv, "b:c:d:De:f:Fg:G:hk:K:lmMNop:rR:P:s:u:UZ:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'b': o.base = optarg; break;
		case 'c': o.comment = optarg; other_than_d = true; break;
		case 'd': o.home = optarg; other_than_d = true; break;
		case 'D': o.defaults = true; break;
		case 'e': o.expire = optarg; break;
		case 'f': o.inactive = optarg; break;
		case 'F': o.subids_for_system = true; other_than_d = true; break;
		case 'g': o.group = optarg; break;
		case 'G': o.groups = optarg; other_than_d = true; break;
		case 'h': usage(E_SUCCESS);
		case 'k': o.skel = optarg; other_than_d = true; break;
		case 'K':
			r = hs_groupops_add_override(&o.k_overrides, &o.k_len, optarg);
			if (r == -ENOMEM)
				hs_die(E_PW_UPDATE, "out of memory");
			if (r < 0)
				hs_die(E_BAD_ARG, "-K requires KEY=VALUE");
			other_than_d = true;
			break;
		case 'l': o.no_log_init = true; break;
		case 'm': o.create_home = true; other_than_d = true; break;
		case 'M': o.no_create_home = true; other_than_d = true; break;
		case 'N': o.no_user_group = true; other_than_d = true; break;
		case 'o': o.non_unique = true; other_than_d = true; break;
		case 'p': o.password = optarg; other_than_d = true; break;
		case 'r': o.system = true; other_than_d = true; break;
		case 's': o.shell = optarg; break;
		case 'u': o.uid = optarg; other_than_d = true; break;
		case 'U': o.user_group = true; other_than_d = true; break;
		case 'R':
		case 'P':
		case 'Z':
			usertool_die_unsupported(c, optarg);
		case OPT_BTRFS:
			hs_die(E_USAGE, "option --btrfs-subvolume-home is not supported");
		case OPT_BADNAME:
			hs_die(E_USAGE, "option --badname is not supported: names must be valid "
			       "(they become paths in %s)", HS_TREE_DIR);
		case OPT_SELF_SERVICE:
		case OPT_NO_SELF_SERVICE:
			o.self_service = c == OPT_SELF_SERVICE ? 1 : -1;
			other_than_d = true;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (o.defaults) {
		if (other_than_d || optind != argc)
			usage(E_USAGE);
		return;
	}
	if (optind != argc - 1)
		usage(E_USAGE);
	/* the combinations shadow-utils refuses, in its order */
	const struct { bool when; const char *why; } misuses[] = {
		{ o.non_unique && !o.uid, "-o flag is only allowed with the -u flag" },
		{ o.skel && !o.create_home, "-k flag is only allowed with the -m flag" },
		{ o.user_group && o.group, "options -U and -g conflict" },
		{ o.user_group && o.no_user_group, "options -U and -N conflict" },
		{ o.create_home && o.no_create_home, "options -m and -M conflict" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(misuses); i++) {
		if (misuses[i].when) {
			hs_warn("%s", misuses[i].why);
			usage(E_USAGE);
		}
	}
}

/* ---- argument checks ---- */

/* A shell must be empty or an absolute path without ':', ',' or control
 * characters (it goes into /etc/passwd and the shell file). */
static bool shell_valid(const char *s)
{
	if (!s[0])
		return true;
	return s[0] == '/' && hs_records_field_valid(s) && !strchr(s, ',');
}

static bool path_valid(const char *s)
{
	return s[0] == '/' && hs_records_field_valid(s) && strlen(s) < HS_PATH_FIELD_MAX;
}

/* ---- login.defs and /etc/default/useradd ---- */

/* login.defs (none: the built-in defaults) and after it the -K lines:
 * later lines win in the parser. */
static struct hs_config *load_logindefs(void)
{
	struct hs_config *cfg = NULL;
	int r = hs_groupops_logindefs(NULL, o.k_overrides, o.k_len,
				      hs_cli_warn_at, NULL, &cfg);

	if (r < 0)
		hs_die(E_PW_UPDATE, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
	return cfg;
}

/* shadow-utils' built-in values when /etc/default/useradd lacks a key */
struct defaults {
	unsigned long group;
	const char *home, *expire, *shell, *skel, *mail_spool, *log_init;
	long inactive;
};

static void load_defaults(struct hs_config **cfg, struct defaults *d)
{
	int r = hs_config_useradd_defaults_load(HS_ETC_USERADD, hs_cli_warn_at,
					 (void *)hs_cli_prog(), cfg);
	unsigned long days;
	const char *s;

	if (r < 0)
		hs_die(E_PW_UPDATE, "cannot read %s: %s", HS_ETC_USERADD, hs_strerror(r));
	d->group = 100;
	s = hs_config_get_str(*cfg, "GROUP", NULL);
	if (s && hs_parse_ulong(s, 0, HS_ID_MAX, &d->group) < 0) {
		struct group *g = getgrnam(s);

		d->group = g ? g->gr_gid : 100;
	}
	d->home = hs_config_get_str(*cfg, "HOME", "/home");
	/* "-1" or anything but a day count: none */
	s = hs_config_get_str(*cfg, "INACTIVE", "-1");
	d->inactive = hs_parse_ulong(s, 0, HS_DAYS_MAX, &days) == 0 ? (long)days : HS_UNSET;
	d->expire = hs_config_get_str(*cfg, "EXPIRE", "");
	d->shell = hs_config_get_str(*cfg, "SHELL", "/bin/sh");
	d->skel = hs_config_get_str(*cfg, "SKEL", "/etc/skel");
	d->mail_spool = hs_config_get_str(*cfg, "CREATE_MAIL_SPOOL", "no");
	d->log_init = hs_config_get_str(*cfg, "LOG_INIT", "yes");
}

static void show_defaults(const struct defaults *d)
{
	printf("GROUP=%lu\nHOME=%s\nINACTIVE=%ld\nEXPIRE=%s\nSHELL=%s\nSKEL=%s\n"
	       "CREATE_MAIL_SPOOL=%s\nLOG_INIT=%s\n", d->group, d->home, d->inactive, d->expire,
	       d->shell, d->skel, d->mail_spool, d->log_init);
}

/* One key of /etc/default/useradd that -D may set. */
struct default_kv {
	const char *key;
	char value[HS_PATH_FIELD_MAX + 32];
	bool set, done;
};

/* -D -g: the group's gid, as /etc/group has it. */
static void defaults_resolve_group(struct default_kv *kv)
{
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT;
	long gi;
	int r = hs_accountdb_load(&gr, HS_DB_GROUP, HS_ETC_GROUP, HS_DB_LAZY);

	if (r < 0)
		hs_die(E_GRP_UPDATE, "%s", gr.error);
	gi = usertool_find_group(&gr, o.group);
	if (gi >= 0)
		snprintf(kv->value, sizeof(kv->value), "%lu",
			 (unsigned long)hs_accountdb_get(&gr, (size_t)gi)->gr.gid);
	hs_accountdb_free(&gr);
	if (gi == -2)
		hs_die(E_BAD_ARG, "invalid group '%s'", o.group);
	if (gi < 0)
		hs_die(E_NOTFOUND, "group '%s' does not exist", o.group);
}

/* -D with -g -b -f -e -s: every value checked, before the lock; kv[i].set
 * says which were given. */
static void defaults_check_values(struct default_kv kv[5])
{
	if (o.group)
		defaults_resolve_group(&kv[0]);
	if (o.base) {
		if (!path_valid(o.base))
			hs_die(E_BAD_ARG, "invalid base directory '%s'", o.base);
		snprintf(kv[1].value, sizeof(kv[1].value), "%s", o.base);
	}
	if (o.inactive)
		snprintf(kv[2].value, sizeof(kv[2].value), "%ld",
			 usertool_parse_inactive(o.inactive));
	if (o.expire) {
		/* a date that parses is digits and '-': fit for the file */
		(void)usertool_parse_expire(o.expire);
		snprintf(kv[3].value, sizeof(kv[3].value), "%s", o.expire);
	}
	if (o.shell) {
		if (!shell_valid(o.shell))
			hs_die(E_BAD_ARG, "invalid shell '%s'", o.shell);
		snprintf(kv[4].value, sizeof(kv[4].value), "%s", o.shell);
	}
}

/* The first key given that line sets, or NULL. */
static struct default_kv *defaults_key_of(const char *line, size_t llen, struct default_kv *kv,
					  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(kv[i].key);

		if (kv[i].set && llen > kl && memcmp(line, kv[i].key, kl) == 0 && line[kl] == '=')
			return &kv[i];
	}
	return NULL;
}

static int defaults_append_kv(struct hs_buf *out, const struct default_kv *kv)
{
	int r = hs_strbuf_append(out, kv->key, strlen(kv->key));

	r = r ?: hs_strbuf_append(out, "=", 1);
	r = r ?: hs_strbuf_append(out, kv->value, strlen(kv->value));
	return r ?: hs_strbuf_append(out, "\n", 1);
}

/* Every line as it was, but a key given gets its new value (a repeated
 * key is dropped: ours is the value), and the keys missing are appended. */
static int defaults_rewrite(const char *data, size_t len, struct default_kv *kv, size_t n,
			    struct hs_buf *out)
{
	struct hs_line_iter it;
	const char *line;
	size_t llen;
	int r = 0;

	hs_strbuf_lines_init(&it, data, len);
	while (r == 0 && hs_strbuf_line_next(&it, &line, &llen)) {
		struct default_kv *k = defaults_key_of(line, llen, kv, n);

		if (!k) {
			r = hs_strbuf_append(out, line, llen);
			r = r ?: hs_strbuf_append(out, "\n", 1);
		} else if (!k->done) {
			k->done = true;
			r = defaults_append_kv(out, k);
		}
	}
	for (size_t i = 0; r == 0 && i < n; i++)
		if (kv[i].set && !kv[i].done)
			r = defaults_append_kv(out, &kv[i]);
	return r;
}

/* -D with options: rewrite the keys given in /etc/default/useradd, keep
 * every other line byte for byte, append keys that were missing.  Atomic
 * (hs_globalfile_replace: temp file, rename, backup useradd-), under the
 * file's own shadow-utils-style lock. */
static int change_defaults(void)
{
	struct default_kv kv[5] = {
		{ .key = "GROUP", .set = o.group }, { .key = "HOME", .set = o.base },
		{ .key = "INACTIVE", .set = o.inactive }, { .key = "EXPIRE", .set = o.expire },
		{ .key = "SHELL", .set = o.shell },
	};
	const char *files[] = { HS_ETC_USERADD };
	struct hs_locks locks = HS_LOCKS_INIT;
	struct hs_buf out = { 0 };
	_cleanup_free_ char *data = NULL;
	const char *failed = NULL;
	size_t len = 0;
	int r;

	defaults_check_values(kv);
	r = hs_globalfile_lock(&locks, NULL, files, 1, HS_LOCK_TIMEOUT_MS, &failed);
	if (r < 0) {
		hs_warn_lock(failed ? failed : HS_ETC_PWD_LOCK, r, HS_LOCK_TIMEOUT_MS);
		exit(E_PW_UPDATE);
	}
	/* a missing file reads as empty (data stays NULL, len 0) */
	r = hs_globalfile_read(HS_ETC_USERADD, &data, &len);
	if (r < 0 && r != -ENOENT) {
		hs_globalfile_unlock(&locks);
		hs_die(E_PW_UPDATE, "cannot read %s: %s", HS_ETC_USERADD, hs_strerror(r));
	}
	r = defaults_rewrite(data, len, kv, HS_ARRAY_SIZE(kv), &out);
	if (r == 0)
		r = hs_globalfile_replace(HS_ETC_USERADD, out.data ? out.data : "", out.len, 0, 0, 0644);
	hs_strbuf_free(&out);
	hs_globalfile_unlock(&locks);
	if (r < 0)
		hs_die(E_PW_UPDATE, "cannot write %s: %s", HS_ETC_USERADD, hs_strerror(r));
	return E_SUCCESS;
}

/* ---- after the locks: the mail spool ---- */

/* MAIL_DIR/USER, as shadow-utils with CREATE_MAIL_SPOOL=yes: an empty
 * file of the user's, group mail, 0660; never through a symlink. */
static void create_mail_spool(const struct hs_config *defs, const char *user, uid_t uid,
			      gid_t gid)
{
	/* the group first: its lookup may set errno, which the message
	 * below takes from the open */
	struct group *mail = getgrnam("mail");
	gid_t g = mail ? mail->gr_gid : gid;
	const char *maildir = usertool_mail_dir(defs);
	_cleanup_close_ int dfd = open(maildir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;

	fd = dfd < 0 ? -1 : hs_selabel_openat(dfd, user, NULL, O_WRONLY | O_CREAT | O_EXCL |
					      O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0 || fchown(fd, uid, g) < 0 || fchmod(fd, mail ? 0660 : 0600) < 0)
		hs_warn("cannot create mail spool %s/%s: %s", maildir, user, strerror(errno));
}

/* The commit's work (lib/etc/txn.h): the user's directory and the home,
 * built whole under reserved names before the commit, put in place by
 * it (or by the next tool's recovery, if we are killed). */
struct useradd_work {
	struct hs_txn_work w[2];
	size_t n;
	char tree_path[HS_PATHBUF_USER];
	char tree_tmp[NAME_MAX + 1];
	struct hs_txn_work *tree, *home;
	struct hs_homedir_build hb;
	struct hs_err home_err;
	bool prepared;                  /* a prepared journal names the home */
};

/* The account being added: decided from the options and the defaults
 * before the locks, completed (ids, groups) under them. */
struct useradd_plan {
	const char *name, *comment, *home, *shell, *hash;
	bool classic, user_group, proxy, create_home;
	bool uid_shared;        /* -o with a uid an account has */
	size_t *groups, n_groups;       /* -G: the groups' lines */
	unsigned long uid, gid;
	struct hs_aging aging;
	char *home_buf;         /* home, when built from the base directory */
	int treefd;
	gid_t auth_gid;
};

/* ---- the plan, under the locks: every check against the files and
 * every edit, in memory.  Each step returns E_SUCCESS, or the exit status
 * after saying why. ---- */

static int plan_check_against_accounts(struct hs_accountset *s, struct useradd_plan *u)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	struct hs_accountdb *gr = hs_accountset_db(s, HS_AS_GROUP);
	long gi;

	if (hs_accountdb_find(pw, u->name) >= 0)
		return usertool_warn(E_NAME_IN_USE, "user '%s' already exists", u->name);
	u->uid_shared = o.uid && hs_accountdb_find_id(pw, u->uid) >= 0;
	if (u->uid_shared && !o.non_unique)
		return usertool_warn(E_UID_IN_USE, "UID %lu is not unique", u->uid);
	if (u->user_group && hs_accountdb_find(gr, u->name) >= 0)
		return usertool_warn(E_NAME_IN_USE, "group %s exists - if you want to add this "
				     "user to that group, use -g.", u->name);
	/* -g: a group name or gid that /etc/group has */
	if (o.group) {
		gi = usertool_find_group(gr, o.group);
		if (gi == -2)
			return usertool_warn(E_BAD_ARG, "invalid group ID '%s'", o.group);
		if (gi < 0)
			return usertool_warn(E_NOTFOUND, "group '%s' does not exist", o.group);
		u->gid = hs_accountdb_get(gr, (size_t)gi)->gr.gid;
	}
	/* -G: every supplementary group exists, checked before any edit */
	if (o.groups)
		return usertool_find_groups(gr, o.groups, &u->groups, &u->n_groups);
	return E_SUCCESS;
}

/* Without -u: the first free uid of the range that owns nothing a deleted
 * user left in the new home's parent or the mail spool (lib/admin/ids.h);
 * only when the quick pick hit such a uid is the whole set built. */
static int plan_pick_uid(struct hs_accountset *s, const struct hs_config *defs,
			 struct useradd_plan *u)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	struct hs_idset owners = HS_IDSET_INIT, used = HS_IDSET_INIT;
	struct hs_id_range range;
	int r;

	if (o.uid)
		return E_SUCCESS;
	r = hs_ids_range(defs, true, o.system, &range);
	r = r ?: hs_ids_pick_db(pw, &range, o.system, HS_IDS_NO_PREFERENCE, &u->uid);
	r = r ?: hs_ids_add_leftover_owners(&owners, u->home, usertool_mail_dir(defs));
	if (r == 0 && hs_idset_contains(&owners, u->uid)) {
		r = hs_idset_add_db(&used, pw);
		r = r ?: hs_ids_pick_unowned(&used, &owners, &range, o.system, &u->uid);
	}
	hs_idset_free(&owners);
	hs_idset_free(&used);
	if (r < 0)
		return usertool_warn(E_UID_IN_USE, "Can't get unique %sUID (%s)",
				     o.system ? "system " : "",
				     r == -EUSERS ? "no more available UIDs" : hs_strerror(r));
	return E_SUCCESS;
}

/* USERGROUPS_ENAB, -U: the private group, in group and gshadow, as groupadd
 * makes a group (lib/admin/groupops.h): a gshadow line left over for the
 * name without a group line is replaced, never inherited with its
 * password, administrators and members. */
static int plan_stage_user_group(struct hs_accountset *s, const struct hs_config *defs,
				 struct useradd_plan *u)
{
	struct hs_accountdb *gr = hs_accountset_db(s, HS_AS_GROUP);
	struct hs_id_range range;
	bool stale;
	int r;

	if (!u->user_group)
		return E_SUCCESS;
	/* its gid: the uid when that gid is free */
	r = hs_ids_range(defs, false, o.system, &range);
	if (r == 0 && hs_accountdb_find_id(gr, u->uid) < 0)
		u->gid = u->uid;
	else
		r = r ?: hs_ids_pick_db(gr, &range, o.system, u->uid, &u->gid);
	if (r < 0)
		return usertool_warn(E_GRP_UPDATE, "Can't get unique %sGID (%s)",
				     o.system ? "system " : "",
				     r == -EUSERS ? "no more available GIDs" : hs_strerror(r));
	if (hs_groupops_add(s, u->name, (gid_t)u->gid, NULL, NULL, &stale) < 0)
		return usertool_warn(E_GRP_UPDATE, "%s", s->error);
	if (stale)
		hs_warn("warning: replaced a stale %s entry for '%s' (no such group in %s)",
			hs_accountset_path(HS_AS_GSHADOW), u->name,
			hs_accountset_path(HS_AS_GROUP));
	return E_SUCCESS;
}

/* -G: the memberships (every group was found by plan_check_against_accounts). */
static int plan_stage_supplementary_groups(struct hs_accountset *s, struct useradd_plan *u)
{
	for (size_t i = 0; i < u->n_groups; i++) {
		if (hs_accountset_add_member(s, u->groups[i], u->name) < 0)
			return usertool_warn(E_GRP_UPDATE, "%s", s->error);
	}
	return E_SUCCESS;
}

/* One subordinate id file: a range for the user unless the file is absent,
 * the count is 0, or the user has one already. */
static int plan_stage_subid_range(struct hs_accountset *s, const struct hs_config *defs,
				  const struct useradd_plan *u, enum hs_as_file k)
{
	struct hs_accountdb *db = hs_accountset_db(s, k);
	struct hs_ids_subid_conf sc;
	struct hs_subid sub = { .owner = u->name };
	int status = usertool_file_status(k);
	int r;

	if (!db || !db->present)
		return E_SUCCESS;
	hs_ids_subid_conf(defs, k == HS_AS_SUBUID, &sc);
	if (sc.count == 0 || hs_accountdb_find(db, u->name) >= 0)
		return E_SUCCESS;
	r = hs_ids_subid_pick(db, &sc, &sub.start);
	if (r == -EUSERS)
		return usertool_warn(status, "Can't get unique subordinate %s range",
				     k == HS_AS_SUBUID ? "UID" : "GID");
	if (r < 0)
		return usertool_warn(status, "can't create subordinate %s IDs: %s",
				     k == HS_AS_SUBUID ? "user" : "group", hs_strerror(r));
	sub.count = sc.count;
	if (hs_accountdb_append(db, &sub) < 0)
		return usertool_warn(status, "%s", db->error);
	return E_SUCCESS;
}

/* Subordinate ids: normal accounts (system ones with -F). */
static int plan_stage_subids(struct hs_accountset *s, const struct hs_config *defs,
			     const struct useradd_plan *u)
{
	int status = E_SUCCESS;

	if (o.system && !o.subids_for_system)
		return E_SUCCESS;
	for (enum hs_as_file k = HS_AS_SUBUID; status == E_SUCCESS && k <= HS_AS_SUBGID; k++)
		status = plan_stage_subid_range(s, defs, u, k);
	return status;
}

/* The shadow line (a classic system) and the passwd line. */
static int plan_stage_passwd_line(struct hs_accountset *s, const struct useradd_plan *u)
{
	struct hs_accountdb *pw = hs_accountset_db(s, HS_AS_PASSWD);
	struct hs_accountdb *sp = hs_accountset_db(s, HS_AS_SHADOW);
	struct hs_passwd p = {
		.name = u->name,
		.passwd = (u->classic && !sp ? u->hash : "x"),
		.uid = (uid_t)u->uid, .gid = (gid_t)u->gid, .gecos = u->comment,
		.dir = u->home,
		.shell = (u->proxy ? HS_SHELL_PROXY : u->shell),
	};

	if (u->classic && sp) {
		struct hs_spwd e = {
			.name = u->name, .hash = u->hash, .lstchg = hs_today(),
			.min = u->aging.min, .max = u->aging.max, .warn = u->aging.warn,
			.inact = u->aging.inact, .expire = u->aging.expire, .flag = "",
		};

		if (hs_accountdb_append(sp, &e) < 0)
			return usertool_warn(E_PW_UPDATE, "%s", sp->error);
	}
	if (hs_accountdb_append(pw, &p) < 0)
		return usertool_warn(E_BAD_ARG, "%s", pw->error);
	return E_SUCCESS;
}

static int plan_stage_account(struct hs_accountset *s, const struct hs_config *defs,
			      struct useradd_plan *u)
{
	int status = plan_check_against_accounts(s, u);

	status = status ?: plan_pick_uid(s, defs, u);
	status = status ?: plan_stage_user_group(s, defs, u);
	status = status ?: plan_stage_supplementary_groups(s, u);
	status = status ?: plan_stage_subids(s, defs, u);
	return status ?: plan_stage_passwd_line(s, u);
}

/* ---- the plan, before the locks: every argument checked ---- */

/* -d, or the base directory (-b or HOME) and the name. */
static void plan_choose_home(struct useradd_plan *u, const struct defaults *d)
{
	const char *base = o.base ? o.base : d->home;

	u->home = o.home;
	if (o.home)
		return;
	if (asprintf(&u->home_buf, "%s%s%s", base,
		     base[0] && base[strlen(base) - 1] == '/' ? "" : "/", u->name) < 0)
		hs_die(E_PW_UPDATE, "out of memory");
	if (!path_valid(u->home_buf))
		hs_die(E_BAD_ARG, "invalid home directory '%s'", u->home_buf);
	u->home = u->home_buf;
}

static void plan_check_arguments(struct useradd_plan *u, const struct defaults *d,
				 const char *name)
{
	u->name = name;
	if (!hs_names_user_valid(u->name))
		hs_die(E_BAD_ARG, "invalid user name '%s'", u->name);
	if (o.uid)
		u->uid = usertool_parse_uid(o.uid);
	u->comment = o.comment ? o.comment : "";
	if (!hs_records_field_valid(u->comment) || strlen(u->comment) > HS_GECOS_MAX)
		hs_die(E_BAD_ARG, "invalid comment '%s'", u->comment);
	if (o.home && !path_valid(o.home))
		hs_die(E_BAD_ARG, "invalid home directory '%s'", o.home);
	if (o.base && !path_valid(o.base))
		hs_die(E_BAD_ARG, "invalid base directory '%s'", o.base);
	plan_choose_home(u, d);
	u->shell = o.shell ? o.shell : d->shell;
	if (!shell_valid(u->shell))
		hs_die(E_BAD_ARG, "invalid shell '%s'", u->shell);
	if (u->shell[0] && access(u->shell, X_OK) < 0)
		hs_warn("Warning: missing or non-executable shell '%s'", u->shell);
	hs_records_aging_init_unset(&u->aging);
	/* -e -f, or EXPIRE and INACTIVE */
	u->aging.expire = usertool_parse_expire(o.expire ? o.expire : d->expire);
	u->aging.inact = o.inactive ? usertool_parse_inactive(o.inactive) : d->inactive;
	u->hash = o.password ? o.password : "!";
	usertool_check_hash(u->hash);
}

/* The private group, the primary group, the home, the aging limits, from
 * the options and login.defs. */
static void plan_apply_logindefs(struct useradd_plan *u, const struct hs_config *defs,
				 const struct defaults *d)
{
	u->user_group = o.user_group ||
			(!o.no_user_group && !o.group &&
			 hs_config_get_bool(defs, "USERGROUPS_ENAB", false));
	if (!o.group && !u->user_group)
		u->gid = d->group;
	u->create_home = o.create_home ||
			 (!o.no_create_home && !o.system &&
			  hs_config_get_bool(defs, "CREATE_HOME", false));
	if (!o.system) {
		u->aging.min = hs_config_get_long(defs, "PASS_MIN_DAYS", -1, HS_DAYS_MAX, -1);
		u->aging.max = hs_config_get_long(defs, "PASS_MAX_DAYS", -1, HS_DAYS_MAX, -1);
		u->aging.warn = hs_config_get_long(defs, "PASS_WARN_AGE", -1, HS_DAYS_MAX, -1);
	}
}

/* The tree, or a classic system without one; with a tree, whether the
 * shell goes behind the proxy: a listed shell does when the option or
 * login.defs' SHELL_PROXY (default no) asks for it. */
static void plan_open_tree(struct useradd_plan *u, const struct hs_config *defs)
{
	bool wanted = o.self_service ? o.self_service > 0
				     : hs_config_get_bool(defs, "SHELL_PROXY", false);

	struct hs_shells shells = { 0 };
	gid_t tree_gid = 0;
	int r;

	u->treefd = hs_userdir_open_tree();
	u->classic = u->treefd == -ENOENT;
	if (u->treefd < 0 && !u->classic)
		hs_die(E_PW_UPDATE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(u->treefd));
	if (u->classic) {
		if (o.self_service > 0)
			hs_die(E_BAD_ARG, "--self-service-shell needs the tree %s (run pwconv)",
			       HS_TREE_DIR);
		return;
	}
	r = hs_userdir_layout_gids(&tree_gid, &u->auth_gid);
	if (r < 0)
		hs_die(E_PW_UPDATE, "cannot find the groups %s and %s: %s", HS_GROUP_TREE,
		       HS_GROUP_AUTH, hs_strerror(r));
	/* DESIGN §2 as docs/decisions.md "chsh" reads it: behind the proxy
	 * the user can change the shell with chsh; root keeps its shell
	 * (pwconv's rule) */
	r = hs_shells_load(&shells, HS_ETC_SHELLS);
	if (r < 0)
		hs_die(E_PW_UPDATE, "%s", shells.error);
	u->proxy = u->shell[0] && hs_shells_contains(&shells, u->shell) &&
		   strcmp(u->shell, HS_SHELL_PROXY) != 0 && !(o.uid && u->uid == 0);
	hs_shells_free(&shells);
	if (o.self_service > 0 && !u->proxy)
		hs_die(E_BAD_ARG, "shell '%s' cannot be self-service: it needs a shell listed "
		       "in %s and a uid other than 0", u->shell, HS_ETC_SHELLS);
	u->proxy = u->proxy && wanted;
}

/* /etc/shadow only on a classic system: with a tree, useradd never
 * writes it. */
static int plan_lock_and_stage(struct hs_accountset *set, const struct hs_config *defs,
			       struct useradd_plan *u)
{
	unsigned files = HS_AS_ALL_FILES & ~(u->classic ? 0u : HS_AS_BIT(HS_AS_SHADOW));
	int status;

	if (hs_accountset_open(set, files, HS_DB_LAZY) < 0)
		hs_die(usertool_file_status(set->failed), "%s", set->error);
	status = plan_stage_account(set, defs, u);
	if (status != E_SUCCESS)
		hs_accountset_close(set);
	return status;
}

/* ---- the commit: see the top of the file for the order ---- */

/* The user's directory in the tree, with a locked hash, under a reserved
 * name for the commit to rename into place (its shell file holds the real
 * shell; "" means /bin/sh, passwd(5)). */
static int build_tree_dir(const struct useradd_plan *u, struct useradd_work *uw)
{
	struct hs_shadow locked = { .hash = "!", .lstchg = hs_today() };
	struct hs_err err = HS_ERR_INIT;
	int r = hs_txn_work_tree_new(u->treefd, u->name, (uid_t)u->uid, u->auth_gid, &locked,
				     &u->aging, u->shell[0] ? u->shell : "/bin/sh", &uw->w[uw->n],
				     uw->tree_path, uw->tree_tmp, &err);

	hs_report(&err);
	if (r == 0)
		uw->tree = &uw->w[uw->n++];
	return r;
}

/* -m: the home, built whole under a reserved name beside it, after a
 * prepared journal names that name (a kill while it is built is undone by
 * the next tool).  E_SUCCESS, or E_HOMEDIR (the account is made anyway,
 * as shadow-utils makes it; err says why). */
static int build_home(const struct useradd_plan *u, const struct hs_config *defs,
		      const char *skel, struct useradd_work *uw)
{
	struct hs_txn_work *h = &uw->w[uw->n];
	char err[512];
	int r;

	r = hs_homedir_reserve(u->home, &uw->hb, &uw->home_err);
	if (r == HS_HOME_EXISTED)
		return E_SUCCESS;
	if (r < 0)
		return E_HOMEDIR;
	*h = (struct hs_txn_work){
		.kind = HS_TXN_HOME_NEW, .path = u->home, .tmp = uw->hb.tmp,
		.uid = (uid_t)u->uid, .gid = (gid_t)u->gid, .mode = hs_homedir_mode(defs),
		.parent = { uw->hb.parent.st_dev, uw->hb.parent.st_ino },
	};
	if (hs_globalfile_prepare(uw->w, uw->n + 1, err, sizeof(err)) < 0) {
		hs_err_add(&uw->home_err, "cannot create directory %s: %s", u->home, err);
		return E_HOMEDIR;
	}
	uw->prepared = true;
	r = hs_homedir_build(&uw->hb, u->home, skel, (uid_t)u->uid, (gid_t)u->gid, &uw->home_err);
	if (r < 0)
		return E_HOMEDIR;
	h->self = (struct hs_txn_id){ uw->hb.built.st_dev, uw->hb.built.st_ino };
	uw->home = h;
	uw->n++;
	return r == HS_HOME_INCOMPLETE ? E_HOMEDIR : E_SUCCESS;
}

/* The user's directory and the home are built, then the global files are
 * committed with them as the journal's work: the directory and the home
 * are renamed into place after /etc/passwd, all or nothing.  *home_status
 * gets E_HOMEDIR when the home could not be made whole. */
static int apply_tree_dir_and_global_files(struct hs_accountset *set,
					   const struct useradd_plan *u,
					   const struct hs_config *defs, const char *skel,
					   struct useradd_work *uw, int *home_status)
{
	if (!u->classic && build_tree_dir(u, uw) < 0)
		return E_PW_UPDATE;
	if (u->create_home)
		*home_status = build_home(u, defs, skel, uw);
	if (usertool_commit(set, uw->w, uw->n) < 0) {
		/* nothing was committed: no directory may stay (the commit
		 * undid its work, unless it failed before it began) */
		if (uw->tree)
			(void)hs_userdir_drop_reserved(u->treefd, uw->tree_tmp);
		if (uw->prepared)
			(void)hs_globalfile_recover();
		return usertool_file_status(set->failed);
	}
	if (uw->tree && uw->tree->result < 0)
		hs_warn("cannot create %s: %s", uw->tree_path, hs_strerror(uw->tree->result));
	if (uw->home && uw->home->result < 0) {
		hs_err_add(&uw->home_err, "cannot create directory %s: %s", u->home,
			   hs_strerror(uw->home->result));
		*home_status = E_HOMEDIR;
	}
	return uw->tree && uw->tree->result < 0 ? E_PW_UPDATE : E_SUCCESS;
}

/* -p with a tree: the hash replaces the locked one once the account
 * exists. */
static int apply_password(const struct useradd_plan *u)
{
	struct hs_shadow sh = { .hash = u->hash, .lstchg = hs_today() };
	_cleanup_close_ int udir = -1;
	int r;

	if (u->classic || strcmp(u->hash, "!") == 0)
		return E_SUCCESS;
	udir = hs_userdir_open(u->treefd, u->name, (uid_t)u->uid, NULL);
	r = udir < 0 ? udir : hs_userdir_write_shadow(udir, (uid_t)u->uid, u->auth_gid, &sh);
	if (r < 0)
		return usertool_warn(E_PW_UPDATE, "cannot write %s/%s/shadow: %s (the password "
				     "stays locked)", HS_TREE_DIR, u->name, hs_strerror(r));
	return E_SUCCESS;
}

/* A uid a deleted user had must not show the new account that user's last
 * login or failures: shadow-utils' reset, unless -l or the uid is shared. */
static void reset_login_records(const struct useradd_plan *u, const struct hs_config *defs)
{
	struct hs_err err = HS_ERR_INIT;

	if (o.no_log_init || u->uid_shared)
		return;
	if (hs_logrecords_reset(defs, (uid_t)u->uid, &err) < 0)
		hs_report(&err);
}

/* The audit events of shadow-utils' useradd, in its order: the private
 * group, the user, each membership in group then in gshadow, the home. */
static void audit_new_account(const struct useradd_plan *u, bool gshadow)
{
	if (u->user_group)
		hs_auditlog_acct(AUDIT_ADD_GROUP, HS_AUDIT_OP_ADD_GROUP, u->name, HS_AUDITLOG_NO_ID,
				 true);
	hs_auditlog_acct(AUDIT_ADD_USER, HS_AUDIT_OP_ADD_USER, NULL, u->uid, true);
	for (size_t i = 0; i < u->n_groups; i++)
		hs_auditlog_acct(AUDIT_ADD_USER, HS_AUDIT_OP_ADD_TO_GROUP, u->name,
				 HS_AUDITLOG_NO_ID, true);
	for (size_t i = 0; gshadow && i < u->n_groups; i++)
		hs_auditlog_acct(AUDIT_ADD_USER, HS_AUDIT_OP_ADD_TO_GSHADOW, u->name,
				 HS_AUDITLOG_NO_ID, true);
	if (u->create_home)
		hs_auditlog_acct(AUDIT_ADD_USER, HS_AUDIT_OP_ADD_HOME, NULL, u->uid, true);
}

/* A useradd that failed once it knew the name: shadow-utils' failure
 * event (on_exit, so that every way out records it). */
static void audit_failure(int status, void *name)
{
	if (status != E_SUCCESS)
		hs_auditlog_acct(AUDIT_ADD_USER, HS_AUDIT_OP_ADD_USER, name, HS_AUDITLOG_NO_ID,
				 false);
}

static void log_new_account(const struct useradd_plan *u)
{
	syslog(LOG_INFO, "new user: name=%s, UID=%lu, GID=%lu, home=%s, shell=%s, from=%s",
	       u->name, u->uid, u->gid, u->home, u->shell, isatty(0) ? ttyname(0) : "none");
	if (u->user_group)
		syslog(LOG_INFO, "new group: name=%s, GID=%lu", u->name, u->gid);
}

int main(int argc, char **argv)
{
	struct hs_accountset set = HS_ACCOUNTSET_INIT;
	struct hs_config *defs = NULL, *ucfg = NULL;
	struct defaults d;
	struct useradd_plan u = { .treefd = -1 };
	struct useradd_work uw = { .hb.parentfd = -1, .home_err = HS_ERR_INIT };
	const char *skel;
	int status, home_status = E_SUCCESS;
	sigset_t saved;

	usertool_init(argc, argv, "useradd");
	parse_options(argc, argv);
	usertool_start();
	load_defaults(&ucfg, &d);
	if (o.defaults) {
		if (!o.base && !o.expire && !o.inactive && !o.group && !o.shell) {
			show_defaults(&d);
			return E_SUCCESS;
		}
		usertool_confine(NULL, NULL, false, NULL, NULL);
		return change_defaults();
	}
	defs = load_logindefs();
	plan_check_arguments(&u, &d, argv[optind]);
	(void)on_exit(audit_failure, argv[optind]);
	plan_apply_logindefs(&u, defs, &d);
	skel = o.skel ? o.skel : d.skel;
	/* the new home has no inode yet: its parent gets the rule */
	usertool_confine(usertool_mail_dir(defs), skel, true, u.create_home ? u.home : NULL, NULL);
	plan_open_tree(&u, defs);
	status = plan_lock_and_stage(&set, defs, &u);
	if (status != E_SUCCESS)
		return status;

	hs_privs_block_signals(&saved);
	status = apply_tree_dir_and_global_files(&set, &u, defs, skel, &uw, &home_status);
	hs_close(uw.hb.parentfd);
	hs_report(&uw.home_err);
	if (status != E_SUCCESS) {
		hs_privs_restore_signals(&saved);
		hs_accountset_close(&set);
		return status;
	}
	status = apply_password(&u);
	hs_privs_restore_signals(&saved);
	reset_login_records(&u, defs);
	log_new_account(&u);
	audit_new_account(&u, hs_accountset_db(&set, HS_AS_GSHADOW) != NULL);
	hs_accountset_close(&set);
	/* after the locks: the mail spool */
	if (hs_config_get_bool(ucfg, "CREATE_MAIL_SPOOL", false))
		create_mail_spool(defs, u.name, (uid_t)u.uid, (gid_t)u.gid);
	status = status ?: home_status;

	free(o.k_overrides);
	hs_config_free(defs);
	hs_config_free(ucfg);
	closelog();
	free(u.home_buf);
	free(u.groups);
	hs_close(u.treefd);
	return status;
}
