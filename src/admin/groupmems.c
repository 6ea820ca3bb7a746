/* groupmems: administer the members of a user's primary group.
 *
 * Options, messages and exit codes follow shadow-utils' groupmems(8)
 * (Debian 12, shadow 4.13); groupmems(8) of this package lists where we
 * differ.  Without -g the group is the caller's own user group (the
 * primary group whose name is the caller's user name).
 *
 * Installed plain: changing members is root's (as Debian's groupmems,
 * which is neither setuid nor setgid); any user may list the members of
 * their own group (or, with -g, of any group): /etc/group is world-readable
 * and the list is read from it alone.  Group administrators manage members
 * with gpasswd when it is built setuid (DESIGN §5). */
#include <getopt.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "accountdb.h"
#include "accountset.h"
#include "cli.h"
#include "groupops.h"
#include "grouptool-common.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "util.h"
#include "txn.h"

/* shadow-utils' groupmems exit codes */
#define EXIT_SUCCESS_      0
#define EXIT_USAGE         1   /* invalid command syntax */
#define EXIT_GROUP_FILE    2   /* group file access problems */
#define EXIT_NOT_ROOT      3   /* not superuser */
#define EXIT_NOT_EROOT     4   /* not effective superuser (unused: we are never setuid) */
#define EXIT_NOT_PRIMARY   5   /* not primary owner of group */
#define EXIT_NOT_MEMBER    6   /* member of group does not exist */
#define EXIT_MEMBER_EXISTS 7   /* member of group already exists */
#define EXIT_INVALID_USER  8   /* specified user does not exist */
#define EXIT_INVALID_GROUP 9   /* specified group does not exist */

static struct {
	const char *add, *del, *group;
	bool purge, list;
} o;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [action]",
		     "  -g, --group groupname         change groupname instead of the user's group\n"
		     "                                (root only)\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "\n"
		     "Actions:\n"
		     "  -a, --add username            add username to the members of the group\n"
		     "  -d, --delete username         remove username from the members of the group\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -p, --purge                   purge all members from the group\n"
		     "  -l, --list                    list the members of the group\n",
		     "");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "add",     required_argument, NULL, 'a' },
		{ "delete",  required_argument, NULL, 'd' },
		{ "group",   required_argument, NULL, 'g' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "list",    no_argument,       NULL, 'l' },
		{ "purge",   no_argument,       NULL, 'p' },
		{ "root",    required_argument, NULL, 'R' },
		{ "prefix",  required_argument, NULL, 'P' },
		{ "version", no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, exclusive = 0;

	while ((c = getopt_long(argc, argv, "a:d:g:hlpR:P:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.add = optarg; exclusive++; break;
		case 'd': o.del = optarg; exclusive++; break;
		case 'g': o.group = optarg; break;
		case 'h': usage(EXIT_SUCCESS_);
		case 'l': o.list = true; exclusive++; break;
		case 'p': o.purge = true; exclusive++; break;
		case 'R':
		case 'P':
			hs_die(EXIT_USAGE, "option --%s is not supported; run groupmems inside "
			       "that root instead (chroot DIR groupmems ...)",
			       c == 'R' ? "root" : "prefix");
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	if (exclusive > 1 || optind < argc)
		usage(EXIT_USAGE);
}

/* shadow-utils' format: each member followed by a blank, two between. */
static void print_members(const char *list)
{
	const char *cur = list, *elem;
	size_t len;
	bool first = true;

	while ((len = hs_records_list_next(&cur, &elem)) > 0) {
		char shown[HS_NAME_MAX * 4 + 8];

		printf("%s%s ", first ? "" : " ", hs_printable_len(elem, len, shown, sizeof(shown)));
		first = false;
	}
	if (!first)
		putchar('\n');
}

/* -l: read /etc/group (world-readable) without any lock. */
static int list_members(const char *group)
{
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT;
	long gi;

	if (hs_accountdb_load(&gr, HS_DB_GROUP, HS_ETC_GROUP, 0) < 0)
		hs_die(EXIT_GROUP_FILE, "%s", gr.error);
	gi = hs_accountdb_find(&gr, group);
	if (gi < 0) {
		hs_accountdb_free(&gr);
		hs_die(EXIT_INVALID_GROUP, "group '%s' does not exist in %s", group, HS_ETC_GROUP);
	}
	print_members(gr.lines[gi].rec.gr.members);
	hs_accountdb_free(&gr);
	return EXIT_SUCCESS_;
}

int main(int argc, char **argv)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;
	_cleanup_free_ char *mebuf = NULL;
	char shown[160], what[300];
	const char *group, *members;
	struct passwd me;
	bool amroot;
	long gi;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "groupmems"));
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	parse_options(argc, argv);
	openlog("groupmems", LOG_PID, LOG_AUTHPRIV);
	amroot = hs_privs_caller_is_root();

	if (o.group) {
		group = o.group;
		if (!o.list && !amroot)
			hs_die(EXIT_NOT_ROOT, "only root can use the -g/--group option");
	} else {
		/* the caller's user group: the primary group, named as the user */
		struct group *g;

		r = hs_account_getpwuid(getuid(), &me, &mebuf);
		g = r == 0 ? getgrgid(getgid()) : NULL;
		if (!g || strcmp(g->gr_name, me.pw_name) != 0)
			hs_die(EXIT_NOT_PRIMARY, "your groupname does not match your username");
		group = me.pw_name;     /* the same name, kept in mebuf (not NSS's buffer) */
	}
	if (!hs_names_group_valid(group))
		hs_die(EXIT_INVALID_GROUP, "group '%s' does not exist in %s",
		       hs_printable(group, shown, sizeof(shown)), HS_ETC_GROUP);
	if (o.add && !hs_groupops_user_exists(&s, o.add, true))
		hs_die(EXIT_INVALID_USER, "user '%s' does not exist",
		       hs_printable(o.add, shown, sizeof(shown)));
	if (o.del && !hs_names_user_valid(o.del))
		hs_die(EXIT_NOT_MEMBER, "user '%s' is not a member of '%s'",
		       hs_printable(o.del, shown, sizeof(shown)), group);
	if (o.list || (!o.add && !o.del && !o.purge))
		return o.list ? list_members(group) : EXIT_SUCCESS_;
	if (!amroot)
		hs_die(EXIT_NOT_ROOT, "Permission denied: only root may change the members of a "
		       "group (groupmems is not installed setuid or setgid; group administrators "
		       "use gpasswd -a/-d where gpasswd is installed setuid)");
	hs_confine_to_etc(EXIT_GROUP_FILE);

	/* ---- under the locks ---- */
	if (hs_accountset_open(&s, HS_AS_GROUP_FILES, 0) < 0)
		hs_die(EXIT_GROUP_FILE, "%s", s.error);
	gi = hs_groupops_find(&s, group);
	if (gi < 0)
		grouptool_die_closing(&s, EXIT_INVALID_GROUP, "group '%s' does not exist in %s",
				      group, HS_ETC_GROUP);
	members = hs_accountset_db(&s, HS_AS_GROUP)->lines[gi].rec.gr.members;
	if (o.add && hs_records_list_contains(members, o.add))
		grouptool_die_closing(&s, EXIT_MEMBER_EXISTS,
				      "user '%s' is already a member of '%s'", o.add, group);
	if (o.del && !hs_records_list_contains(members, o.del))
		grouptool_die_closing(&s, EXIT_NOT_MEMBER, "user '%s' is not a member of '%s'",
				      o.del, group);
	if (o.add) {
		/* again, under the group lock userdel needs too (see gpasswd) */
		if (!hs_groupops_user_exists(&s, o.add, true))
			grouptool_die_closing(&s, EXIT_INVALID_USER, "user '%s' does not exist",
					      o.add);
		r = hs_groupops_add_member(&s, (size_t)gi, o.add);
		snprintf(what, sizeof(what), "user %s added to group %s", o.add, group);
	} else if (o.del) {
		/* as shadow-utils: the user stops administering the group too */
		r = hs_groupops_remove_member(&s, (size_t)gi, o.del, true);
		snprintf(what, sizeof(what), "user %s removed from group %s", o.del, group);
	} else {
		/* -p: members and administrators, as shadow-utils */
		r = hs_groupops_set_members(&s, (size_t)gi, "");
		if (r >= 0 && hs_groupops_gshadow(&s))
			r = hs_groupops_set_admins(&s, (size_t)gi, "");
		snprintf(what, sizeof(what), "members of group %s purged", group);
	}
	if (hs_groupops_finish(&s, r, &err, what, "%s", what) < 0)
		hs_report_die(EXIT_GROUP_FILE, &err);
	closelog();
	return EXIT_SUCCESS_;
}
