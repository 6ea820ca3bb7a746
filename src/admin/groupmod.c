/* groupmod: modify a group definition.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' groupmod(8) (Debian 12, shadow 4.13); groupmod(8)
 * of this package lists where we differ.
 *
 * Everything is checked and edited in memory under the global locks
 * (lib/accountset: /etc/passwd with -g, /etc/group, /etc/gshadow), then
 * written as one transaction (lib/accountset, lib/txn), so a full disk
 * leaves the old group, not half of a new one, and a crash is finished by
 * the next tool.  -U and -a -U write the same member list to /etc/group
 * and /etc/gshadow, which shadow-utils 4.13 does not. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "groupops.h"
#include "grouptool-common.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "util.h"
#include "txn.h"

/* shadow-utils' groupmod(8) exit codes (11, 12 and 13 concern its
 * cleanup service and PAM, which this groupmod does not have) */
#define E_SUCCESS     0
#define E_USAGE       2   /* invalid command syntax */
#define E_BAD_ARG     3   /* invalid argument to option */
#define E_GID_IN_USE  4   /* gid already in use (and no -o) */
#define E_NOTFOUND    6   /* specified group doesn't exist */
#define E_NAME_IN_USE 9   /* group name already in use */
#define E_GRP_UPDATE  10  /* can't update group file */

static struct {
	const char *gid, *new_name, *password, *users;
	bool append, non_unique;
} o;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] GROUP",
		     "  -a, --append                  append the users mentioned by -U option to the group \n"
		     "                                without removing existing user members\n"
		     "  -g, --gid GID                 change the group ID to GID\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -n, --new-name NEW_GROUP      change the name to NEW_GROUP\n"
		     "  -o, --non-unique              allow to use a duplicate (non-unique) GID\n"
		     "  -p, --password PASSWORD       change the password to this (encrypted)\n"
		     "                                PASSWORD\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -P, --prefix PREFIX_DIR       prefix directory where are located the /etc/* files\n"
		     "                                (not supported)\n"
		     "  -U, --users USERS             list of user members of this group\n",
		     "\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "append",     no_argument,       NULL, 'a' },
		{ "gid",        required_argument, NULL, 'g' },
		{ "help",       no_argument,       NULL, 'h' },
		{ "new-name",   required_argument, NULL, 'n' },
		{ "non-unique", no_argument,       NULL, 'o' },
		{ "password",   required_argument, NULL, 'p' },
		{ "root",       required_argument, NULL, 'R' },
		{ "prefix",     required_argument, NULL, 'P' },
		{ "users",      required_argument, NULL, 'U' },
		{ "version",    no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ag:hn:op:R:P:U:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.append = true; break;
		case 'g': o.gid = optarg; break;
		case 'h': usage(E_SUCCESS);
		case 'n': o.new_name = optarg; break;
		case 'o': o.non_unique = true; break;
		case 'p': o.password = optarg; break;
		case 'U': o.users = optarg; break;
		case 'R':
		case 'P':
			hs_die(E_USAGE, "option --%s is not supported; run groupmod inside that "
			       "root instead (chroot DIR groupmod ...)",
			       c == 'R' ? "root" : "prefix");
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (optind != argc - 1 || (o.non_unique && !o.gid))
		usage(E_USAGE);
}

/* Every argument, before the locks. */
static void check_arguments(const char *name, gid_t *new_gid)
{
	char shown[160];

	if (!hs_names_group_valid(name))
		hs_die(E_NOTFOUND, "group '%s' does not exist",
		       hs_printable(name, shown, sizeof(shown)));
	if (o.gid && hs_groupops_parse_gid(o.gid, new_gid) < 0)
		hs_die(E_BAD_ARG, "invalid group ID '%s'", hs_printable(o.gid, shown, sizeof(shown)));
	if (o.new_name && !hs_names_group_valid(o.new_name))
		hs_die(E_BAD_ARG, "invalid group name '%s'",
		       hs_printable(o.new_name, shown, sizeof(shown)));
	if (o.password && (!hs_records_field_valid(o.password) || strlen(o.password) > HS_HASH_MAX))
		hs_die(E_BAD_ARG, "invalid password: it contains ':' or a control character, "
		       "or is longer than %d bytes", HS_HASH_MAX);
	if (!hs_privs_caller_is_root())
		hs_die(E_GRP_UPDATE, "Permission denied.");
}

/* -n and -g against the files: a layout group keeps its name and gid, a
 * new name or gid is free. */
static void check_rename_and_renumber(struct hs_accountset *s, const char *name, gid_t new_gid)
{
	if ((o.new_name || o.gid) && hs_groupops_layout_group(NULL, name))
		grouptool_die_closing(s, E_GRP_UPDATE, "group '%s' belongs to the per-user tree "
				      "%s: its files and the setgid programs carry its name and "
				      "GID, so it cannot be renamed or renumbered", name,
				      "/etc/hardened-shadow");
	if (o.new_name && hs_groupops_find(s, o.new_name) >= 0)
		grouptool_die_closing(s, E_NAME_IN_USE, "group '%s' already exists", o.new_name);
	if (o.gid && !o.non_unique &&
	    hs_accountdb_find_id(hs_accountset_db(s, HS_AS_GROUP), new_gid) >= 0)
		grouptool_die_closing(s, E_GID_IN_USE, "GID '%lu' already exists",
				      (unsigned long)new_gid);
}

/* -a -U: the current members base, then the new ones; NULL when out of
 * memory. */
static char *append_members(const char *base, const char *members)
{
	char *joined = strdup(base);
	const char *cur = members, *elem;
	size_t len;
	int r;

	while (joined && (len = hs_records_list_next(&cur, &elem)) > 0) {
		char one[HS_NAME_MAX + 1], *grown = NULL;

		snprintf(one, sizeof(one), "%.*s", (int)len, elem);
		r = hs_records_list_add(joined, one, &grown);
		free(joined);
		joined = r < 0 ? NULL : grown;
	}
	return joined;
}

/* -U [-a]: the new member list, every user checked. */
static char *new_member_list(struct hs_accountset *s, long gi)
{
	char shown[160], bad[HS_NAME_MAX * 4 + 8];
	char *members = NULL, *joined;
	int r = hs_groupops_user_list(s, o.users, true, &members, bad, sizeof(bad));

	if (r == -ENOMEM)
		grouptool_die_closing(s, E_GRP_UPDATE, "out of memory");
	if (r < 0)
		grouptool_die_closing(s, E_GRP_UPDATE, "Invalid member username %s",
				      hs_printable(bad, shown, sizeof(shown)));
	if (!o.append)
		return members;
	joined = append_members(hs_accountset_db(s, HS_AS_GROUP)->lines[gi].rec.gr.members,
				members);
	free(members);
	if (!joined)
		grouptool_die_closing(s, E_GRP_UPDATE, "out of memory");
	return joined;
}

/* Append to the syslog line's list of changes. */
__attribute__((format(printf, 3, 4)))
static void note_change(char *changes, size_t size, const char *fmt, ...)
{
	size_t used = strlen(changes);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(changes + used, size - used, fmt, ap);
	va_end(ap);
}

/* The edits, in memory, noted in changes; what hs_groupops_finish() takes:
 * 0 or a negative error. */
static int stage_edits(struct hs_accountset *s, size_t gi, const char *members, gid_t old_gid,
		       gid_t new_gid, char *changes, size_t size, long *moved)
{
	bool stale = false;
	int r = 0;

	if (members) {
		r = hs_groupops_set_members(s, gi, members);
		note_change(changes, size, ", new members: %s", members);
	}
	if (r >= 0 && o.password) {
		r = hs_groupops_set_password(s, gi, o.password);
		note_change(changes, size, ", new password");
	}
	if (r >= 0 && o.gid) {
		r = hs_groupops_set_gid(s, gi, new_gid);
		/* the users whose primary group this is follow it */
		if (r >= 0)
			r = (int)(*moved = hs_groupops_move_primary(s, old_gid, new_gid));
		note_change(changes, size, ", new gid: %lu", (unsigned long)new_gid);
	}
	if (r >= 0 && o.new_name) {
		r = hs_groupops_rename(s, gi, o.new_name, &stale);
		note_change(changes, size, ", new name: %s", o.new_name);
		if (r >= 0 && stale)
			hs_warn("warning: removed a stale %s entry for '%s' (no such group in %s)",
				"/etc/gshadow", o.new_name, "/etc/group");
	}
	return r;
}

/* shadow-utils' audit events of a groupmod (AUDIT_USER_ACCT in 4.13, named
 * by the old name): one per file changed, saying what changed in it, then
 * one for the whole change. */
static void audit_changes(const char *old_name, gid_t old_gid, gid_t new_gid, bool gshadow)
{
	char group_op[400], gshadow_op[400], passwd_op[400];
	const char *new_name = o.new_name ? o.new_name : "";
	const char *name_part = o.new_name ? ", new name: " : "";
	const char *password_part = o.password ? ", new password" : "";
	char gid_part[40] = "";

	if (o.gid)
		snprintf(gid_part, sizeof gid_part, ", new gid: %lu", (unsigned long)new_gid);
	snprintf(group_op, sizeof group_op, "changing %s; group %s/%lu%s%s%s%s", HS_ETC_GROUP,
		 old_name, (unsigned long)old_gid, name_part, new_name, password_part, gid_part);
	snprintf(gshadow_op, sizeof gshadow_op, "changing %s; group %s%s%s%s", HS_ETC_GSHADOW,
		 old_name, name_part, new_name, password_part);
	snprintf(passwd_op, sizeof passwd_op, "changing %s; group %s/%lu%s%s%s", HS_ETC_PASSWD,
		 old_name, (unsigned long)old_gid, name_part, new_name, gid_part);
	hs_auditlog_acct(AUDIT_USER_ACCT, group_op, old_name, HS_AUDITLOG_NO_ID, true);
	if (gshadow && (o.new_name || o.password))
		hs_auditlog_acct(AUDIT_USER_ACCT, gshadow_op, old_name, HS_AUDITLOG_NO_ID, true);
	if (o.gid)
		hs_auditlog_acct(AUDIT_USER_ACCT, passwd_op, old_name, HS_AUDITLOG_NO_ID, true);
	hs_auditlog_acct(AUDIT_USER_ACCT, HS_AUDIT_OP_MODIFY_GROUP, old_name, HS_AUDITLOG_NO_ID,
			 true);
}

int main(int argc, char **argv)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;
	_cleanup_free_ char *members = NULL;
	char changes[512] = "";
	const char *name;
	gid_t new_gid = 0, old_gid;
	unsigned files;
	long gi, moved = 0;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "groupmod"));
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	parse_options(argc, argv);
	openlog("groupmod", LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();

	name = argv[optind];
	check_arguments(name, &new_gid);
	hs_confine_to_etc(E_GRP_UPDATE);

	/* ---- under the locks ---- */
	/* -U's users are looked up through NSS under the group lock (see
	 * gpasswd); /etc/passwd itself only changes with -g */
	files = HS_AS_GROUP_FILES | (o.gid ? HS_AS_BIT(HS_AS_PASSWD) : 0);
	if (hs_accountset_open(&s, files, 0) < 0)
		hs_die(E_GRP_UPDATE, "%s", s.error);
	gi = hs_groupops_find(&s, name);
	if (gi < 0)
		grouptool_die_closing(&s, E_NOTFOUND, "group '%s' does not exist", name);
	old_gid = hs_accountset_db(&s, HS_AS_GROUP)->lines[gi].rec.gr.gid;
	if (o.new_name && strcmp(o.new_name, name) == 0)
		o.new_name = NULL;
	if (o.gid && new_gid == old_gid)
		o.gid = NULL;
	check_rename_and_renumber(&s, name, new_gid);
	if (o.users)
		members = new_member_list(&s, gi);

	/* ---- the edits, in memory ---- */
	r = stage_edits(&s, (size_t)gi, members, old_gid, new_gid, changes, sizeof(changes),
			&moved);
	bool gshadow = hs_accountset_db(&s, HS_AS_GSHADOW) != NULL;

	if (hs_groupops_finish(&s, r, &err, NULL, NULL) < 0)
		hs_report_die(E_GRP_UPDATE, &err);
	if (changes[0]) {
		audit_changes(name, old_gid, new_gid, gshadow);
		syslog(LOG_INFO, "group changed: group %s/%lu%s%s", name,
		       (unsigned long)old_gid, changes,
		       moved > 0 ? " (and the primary group of its users)" : "");
	}
	closelog();
	return E_SUCCESS;
}
