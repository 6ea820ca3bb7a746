/* groupadd: create a new group.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' groupadd(8) (Debian 12, shadow 4.13); groupadd(8)
 * of this package lists where we differ.
 *
 * Under the global locks (lib/accountset: /etc/group, /etc/gshadow) the
 * name, the gid and -U's users are checked against the files as they are
 * now, so two groupadds for one name -- ours,
 * shadow-utils', systemd-sysusers' -- serialise and the second one finds
 * the first one's group.  The gshadow line is written before the group
 * line (lib/accountset's order): an interruption leaves at worst a
 * gshadow line without a group, which the next groupadd of that name
 * replaces rather than inherits. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "confine.h"
#include "config.h"
#include "fileio.h"
#include "groupops.h"
#include "homepath.h"
#include "grouptool-common.h"
#include "ids.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "util.h"
#include "txn.h"

/* shadow-utils' groupadd(8) exit codes */
#define E_SUCCESS     0
#define E_USAGE       2   /* invalid command syntax */
#define E_BAD_ARG     3   /* invalid argument to option */
#define E_GID_IN_USE  4   /* gid not unique (when -o not used) */
#define E_NAME_IN_USE 9   /* group name not unique */
#define E_GRP_UPDATE  10  /* can't update group file */

/* the longest --prefix: lib/accountset builds its paths below it */
#define PREFIX_MAX 200

static struct {
	const char *gid, *password, *users, *prefix;
	bool force, non_unique, system;
	char *k_overrides;      /* "KEY VALUE\n" lines from -K */
	size_t k_len;
} o;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] GROUP",
		     "  -f, --force                   exit successfully if the group already exists,\n"
		     "                                and cancel -g if the GID is already used\n"
		     "  -g, --gid GID                 use GID for the new group\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -K, --key KEY=VALUE           override /etc/login.defs defaults\n"
		     "  -o, --non-unique              allow to create groups with duplicate\n"
		     "                                (non-unique) GID\n"
		     "  -p, --password PASSWORD       use this encrypted password for the new group\n"
		     "  -r, --system                  create a system account\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -P, --prefix PREFIX_DIR       directory prefix\n"
		     "  -U, --users USERS             list of user members of this group\n",
		     "\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "force",      no_argument,       NULL, 'f' },
		{ "gid",        required_argument, NULL, 'g' },
		{ "help",       no_argument,       NULL, 'h' },
		{ "key",        required_argument, NULL, 'K' },
		{ "non-unique", no_argument,       NULL, 'o' },
		{ "password",   required_argument, NULL, 'p' },
		{ "system",     no_argument,       NULL, 'r' },
		{ "users",      required_argument, NULL, 'U' },
		{ "root",       required_argument, NULL, 'R' },
		{ "prefix",     required_argument, NULL, 'P' },
		{ "version",    no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	while ((c = getopt_long(argc, argv, "fg:hK:op:rR:P:U:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': o.force = true; break;
		case 'g': o.gid = optarg; break;
		case 'h': usage(E_SUCCESS);
		case 'K':
			r = hs_groupops_add_override(&o.k_overrides, &o.k_len, optarg);
			if (r == -ENOMEM)
				hs_die(E_GRP_UPDATE, "out of memory");
			if (r < 0)
				hs_die(E_BAD_ARG, "-K requires KEY=VALUE");
			break;
		case 'o': o.non_unique = true; break;
		case 'p': o.password = optarg; break;
		case 'r': o.system = true; break;
		case 'P': o.prefix = optarg; break;
		case 'U': o.users = optarg; break;
		case 'R':
			/* the other root has its own login.defs and NSS; only
			 * running inside it gets them right */
			hs_die(E_USAGE, "option --root is not supported; run groupadd inside that "
			       "root instead (chroot DIR groupadd ...)");
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if ((o.non_unique && !o.gid) || optind != argc - 1)
		usage(E_USAGE);
}

/* --prefix DIR: the files below DIR/etc (packaging: a root being built).
 * "/" is no prefix.  Returns the prefix without trailing slashes, "" for
 * none. */
static const char *check_prefix(const char *p, char *buf, size_t size)
{
	size_t len;

	if (!p)
		return "";
	if (p[0] != '/' || strlen(p) > PREFIX_MAX || !hs_records_field_valid(p))
		hs_die(E_BAD_ARG, "invalid prefix directory '%s' (an absolute path of at most "
		       "%d bytes)", p, PREFIX_MAX);
	snprintf(buf, size, "%s", p);
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == '/')
		buf[--len] = '\0';
	return buf;
}

/* The prefix is the administrator's choice, but what lies below it may be
 * a user's (a root she owns) or an untrusted image's (its symlinks and
 * files unpacked by root): DIR, every directory on the way to it (as named
 * and as resolved) and DIR/etc must be root's and writable by nobody else,
 * and DIR/etc must be a directory, not a symlink.  Then nobody but root can
 * change what the paths below name while we work.  Returns the resolved
 * prefix ("" for "/"). */
static const char *trust_prefix(const char *p, char *buf, size_t size)
{
	_cleanup_free_ char *resolved = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_close_ int etcfd = -1;
	struct stat st;

	fd = hs_homepath_open_root_dir(p, &resolved);
	if (fd == -HS_E_OWNER)
		hs_die(E_GRP_UPDATE, "refusing prefix %s: it or a directory on the way to it is "
		       "not root's or is writable by others than root", p);
	if (fd < 0)
		hs_die(E_GRP_UPDATE, "cannot use prefix %s: %s", p, hs_strerror(fd));
	if (strcmp(resolved, "/") == 0)
		return "";
	if (strlen(resolved) > PREFIX_MAX || !hs_records_field_valid(resolved))
		hs_die(E_BAD_ARG, "invalid prefix directory '%s' (resolved, longer than %d bytes "
		       "or with a control character or ':')", p, PREFIX_MAX);
	etcfd = hs_fileio_open_dir_at(fd, "etc", &st);
	if (etcfd < 0)
		hs_die(E_GRP_UPDATE, "refusing prefix %s: %s%s: %s", p, resolved, HS_ETC_DIR,
		       hs_strerror(etcfd));
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		hs_die(E_GRP_UPDATE, "refusing prefix %s: %s%s is not root's or is writable by "
		       "others than root", p, resolved, HS_ETC_DIR);
	snprintf(buf, size, "%s", resolved);
	return buf;
}

int main(int argc, char **argv)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;
	struct hs_config *defs = NULL;
	_cleanup_free_ char *members = NULL;
	char shown[160], bad[HS_NAME_MAX * 4 + 8], prefix_buf[PREFIX_MAX + 1];
	const char *name, *prefix;
	bool stale = false;
	gid_t gid = 0;
	unsigned files;
	long gi;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "groupadd"));
	parse_options(argc, argv);
	openlog("groupadd", LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();

	/* ---- every argument checked before any lock ---- */
	name = argv[optind];
	if (!hs_names_group_valid(name))
		hs_die(E_BAD_ARG, "'%s' is not a valid group name",
		       hs_printable(name, shown, sizeof(shown)));
	if (o.gid && hs_groupops_parse_gid(o.gid, &gid) < 0)
		hs_die(E_BAD_ARG, "invalid group ID '%s'", hs_printable(o.gid, shown, sizeof(shown)));
	if (o.password && (!hs_records_field_valid(o.password) || strlen(o.password) > HS_HASH_MAX))
		hs_die(E_BAD_ARG, "invalid password: it contains ':' or a control character, "
		       "or is longer than %d bytes", HS_HASH_MAX);
	prefix = check_prefix(o.prefix, prefix_buf, sizeof(prefix_buf));
	if (!hs_privs_caller_is_root())
		hs_die(E_GRP_UPDATE, "Permission denied.");
	if (prefix[0])
		prefix = trust_prefix(prefix, prefix_buf, sizeof(prefix_buf));
	/* An interrupted command's home and tree work is finished here, but
	 * never a prefix's: its journal names paths of that root, which are
	 * this system's paths to us (an image's root-owned journal could hand
	 * /etc/sudoers.d to anyone), and the prefix's own tree is not ours to
	 * sweep either.  There the work is kept for a tool run inside it. */
	if (!prefix[0])
		hs_txn_work_enable();
	r = hs_groupops_logindefs(prefix, o.k_overrides, o.k_len, hs_cli_warn_at, NULL,
				  &defs);
	if (r < 0)
		hs_die(E_GRP_UPDATE, "cannot read %s/etc/login.defs: %s", prefix, hs_strerror(r));

	/* from here the kernel lets groupadd write /etc, or the prefix's */
	{
		char prefix_etc[PREFIX_MAX + sizeof(HS_ETC_DIR)];
		const struct hs_confine_rule rules[] = {
			{ HS_ETC_DIR, HS_CONFINE_WRITE },
			{ prefix[0] ? prefix_etc : NULL, HS_CONFINE_WRITE },
		};

		snprintf(prefix_etc, sizeof prefix_etc, "%s%s", prefix, HS_ETC_DIR);
		hs_confine_or_die(rules, sizeof rules / sizeof rules[0], E_GRP_UPDATE);
	}

	/* ---- under the locks ---- */
	hs_accountset_use_root(prefix);
	/* -U's users: through NSS under the group lock (see gpasswd), or, in
	 * a prefix, whose NSS we do not have, in its /etc/passwd */
	files = HS_AS_GROUP_FILES | (o.users && prefix[0] ? HS_AS_BIT(HS_AS_PASSWD) : 0);
	if (hs_accountset_open(&s, files, HS_DB_LAZY) < 0)
		hs_die(E_GRP_UPDATE, "%s", s.error);
	if (hs_groupops_find(&s, name) >= 0) {
		hs_accountset_close(&s);
		if (o.force) {
			hs_config_free(defs);
			free(o.k_overrides);
			return E_SUCCESS;
		}
		hs_die(E_NAME_IN_USE, "group '%s' already exists", name);
	}
	if (o.gid && hs_accountdb_find_id(hs_accountset_db(&s, HS_AS_GROUP), gid) >= 0 &&
	    !o.non_unique) {
		if (!o.force)
			grouptool_die_closing(&s, E_GID_IN_USE, "GID '%lu' already exists",
					      (unsigned long)gid);
		o.gid = NULL;   /* -f: any free gid will do */
	}
	if (o.users) {
		r = hs_groupops_user_list(&s, o.users, !prefix[0], &members, bad, sizeof(bad));
		if (r == -ENOMEM)
			grouptool_die_closing(&s, E_GRP_UPDATE, "out of memory");
		if (r < 0)
			grouptool_die_closing(&s, E_GRP_UPDATE, "Invalid member username %s",
					      hs_printable(bad, shown, sizeof(shown)));
	}
	if (!o.gid) {
		struct hs_id_range range;
		unsigned long id = 0;

		r = hs_ids_range(defs, false, o.system, &range);
		r = r ?: hs_ids_pick_db(hs_accountset_db(&s, HS_AS_GROUP), &range, o.system,
				       HS_IDS_NO_PREFERENCE, &id);
		if (r < 0)
			grouptool_die_closing(&s, E_GID_IN_USE, "Can't get unique %sGID (%s)",
					      o.system ? "system " : "",
					      r == -EUSERS ? "no more available GIDs" : hs_strerror(r));
		gid = (gid_t)id;
	}
	gi = hs_groupops_add(&s, name, gid, o.password, members, &stale);
	if (gi < 0)
		grouptool_die_closing(&s, E_GRP_UPDATE, "%s", s.error);
	if (stale)
		hs_warn("warning: replaced a stale %s%s entry for '%s' (no such group in "
			"%s%s)", prefix, hs_accountset_path(HS_AS_GSHADOW), name, prefix,
			hs_accountset_path(HS_AS_GROUP));

	bool gshadow = hs_accountset_db(&s, HS_AS_GSHADOW) != NULL;

	if (hs_groupops_finish(&s, 0, &err, NULL, "new group: name=%s, GID=%lu", name,
			       (unsigned long)gid) < 0)
		hs_report_die(E_GRP_UPDATE, &err);
	/* shadow-utils' three events, the last with an empty op */
	hs_auditlog_acct(AUDIT_ADD_GROUP, HS_AUDIT_OP_GROUPADD_GROUP, NULL, gid, true);
	if (gshadow)
		hs_auditlog_acct(AUDIT_ADD_GROUP, HS_AUDIT_OP_GROUPADD_GSHADOW, NULL, gid, true);
	hs_auditlog_acct(AUDIT_ADD_GROUP, "", NULL, gid, true);
	hs_config_free(defs);
	free(o.k_overrides);
	closelog();
	return E_SUCCESS;
}
