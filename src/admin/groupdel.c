/* groupdel: delete a group.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' groupdel(8) (Debian 12, shadow 4.13); groupdel(8)
 * of this package lists where we differ.
 *
 * The check that the group is nobody's primary group reads /etc/passwd
 * under its lock (lib/accountset takes passwd, group and gshadow), so a
 * useradd -g GROUP running at the same moment cannot slip a new primary
 * user in between the check and the delete.  Users of other sources
 * (NSS, e.g. LDAP) are not looked at: their groups live there too. */
#include <getopt.h>
#include <stdbool.h>
#include <syslog.h>
#include <unistd.h>

#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "groupops.h"
#include "grouptool-common.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "util.h"
#include "txn.h"

/* shadow-utils' groupdel(8) exit codes */
#define E_SUCCESS    0
#define E_USAGE      2   /* invalid command syntax */
#define E_NOTFOUND   6   /* specified group doesn't exist */
#define E_GROUP_BUSY 8   /* can't remove user's primary group */
#define E_GRP_UPDATE 10  /* can't update group file */

static bool force;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] GROUP",
		     "  -h, --help                    display this help message and exit\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -P, --prefix PREFIX_DIR       prefix directory where are located the /etc/* files\n"
		     "                                (not supported)\n"
		     "  -f, --force                   delete group even if it is the primary group of a user\n",
		     "\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "help",    no_argument,       NULL, 'h' },
		{ "root",    required_argument, NULL, 'R' },
		{ "prefix",  required_argument, NULL, 'P' },
		{ "force",   no_argument,       NULL, 'f' },
		{ "version", no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hR:P:f", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(E_SUCCESS);
		case 'f': force = true; break;
		case 'R':
		case 'P':
			hs_die(E_USAGE, "option --%s is not supported; run groupdel inside that "
			       "root instead (chroot DIR groupdel ...)",
			       c == 'R' ? "root" : "prefix");
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (optind != argc - 1)
		usage(E_USAGE);
}

int main(int argc, char **argv)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;
	char shown[160];
	const char *name;
	gid_t gid;
	long gi, ui;

	hs_cli_set_prog(hs_privs_init(argc, argv, "groupdel"));
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	parse_options(argc, argv);
	openlog("groupdel", LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();

	name = argv[optind];
	if (!hs_names_group_valid(name))
		hs_die(E_NOTFOUND, "group '%s' does not exist",
		       hs_printable(name, shown, sizeof(shown)));
	if (!hs_privs_caller_is_root())
		hs_die(E_GRP_UPDATE, "Permission denied.");
	hs_confine_to_etc(E_GRP_UPDATE);

	if (hs_accountset_open(&s, HS_AS_BIT(HS_AS_PASSWD) | HS_AS_GROUP_FILES, 0) < 0)
		hs_die(E_GRP_UPDATE, "%s", s.error);
	gi = hs_groupops_find(&s, name);
	if (gi < 0)
		grouptool_die_closing(&s, E_NOTFOUND, "group '%s' does not exist", name);
	gid = hs_accountset_db(&s, HS_AS_GROUP)->lines[gi].rec.gr.gid;
	if (hs_groupops_layout_group(NULL, name))
		grouptool_die_closing(&s, E_GROUP_BUSY, "cannot remove group '%s': the per-user "
				      "tree %s and the setgid programs use it", name, HS_TREE_DIR);
	ui = hs_groupops_primary_user(&s, gid);
	if (ui >= 0) {
		const char *user = hs_accountset_db(&s, HS_AS_PASSWD)->lines[ui].rec.pw.name;

		if (!force) {
			hs_warn("cannot remove the primary group of user '%s'", user);
			hs_accountset_close(&s);
			return E_GROUP_BUSY;
		}
		syslog(LOG_WARNING, "removing group '%s', the primary group of user '%s' (-f)",
		       name, user);
	}
	bool gshadow = hs_accountset_db(&s, HS_AS_GSHADOW) != NULL;

	if (hs_groupops_finish(&s, hs_groupops_delete(&s, (size_t)gi), &err, NULL,
			       "group '%s' removed (GID %lu)", name, (unsigned long)gid) < 0)
		hs_report_die(E_GRP_UPDATE, &err);
	/* shadow-utils' three events, the last with an empty op */
	hs_auditlog_acct(AUDIT_DEL_GROUP, HS_AUDIT_OP_GROUPDEL_GROUP, NULL, gid, true);
	if (gshadow)
		hs_auditlog_acct(AUDIT_DEL_GROUP, HS_AUDIT_OP_GROUPDEL_GSHADOW, NULL, gid, true);
	hs_auditlog_acct(AUDIT_DEL_GROUP, "", NULL, gid, true);
	closelog();
	return E_SUCCESS;
}
