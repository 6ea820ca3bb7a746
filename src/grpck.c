/* grpck: verify the integrity of the group files.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit
 * codes follow shadow-utils' grpck(8); grpck(8) of this package lists
 * where we differ.  The checks are lib/audit.c's: /etc/group, its
 * agreement with /etc/gshadow (which is made to follow /etc/group), then
 * /etc/gshadow.  Members are looked up in /etc/passwd (then getpwnam), so
 * a group of any size is checked in linear time.
 *
 * Without -r the two files are locked for the whole run, every problem
 * with a repair is offered as a question, and the files are written at
 * the end, /etc/gshadow before /etc/group. */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "accountdb.h"
#include "audit.h"
#include "cli.h"
#include "layout.h"
#include "privs.h"
#include "util.h"

/* shadow-utils' grpck(8) exit codes */
#define E_OKAY       0
#define E_USAGE      1   /* invalid command syntax */
#define E_BADENTRY   2   /* one or more bad group entries */
#define E_CANTOPEN   3   /* cannot open group files */
#define E_CANTLOCK   4   /* cannot lock group files */
#define E_CANTUPDATE 5   /* cannot update group files */
#define E_CANTSORT   6   /* cannot sort group files */

static struct {
	bool silence, read_only, sort;
	const char *group, *gshadow;
} o;

static _Noreturn void usage(int status)
{
	FILE *f = status == E_OKAY ? stdout : stderr;

	fprintf(f,
		"Usage: %s [options] [group [gshadow]]\n"
		"\n"
		"Options:\n"
		"  -h, --help                    display this help message and exit\n"
		"  -r, --read-only               display errors and warnings\n"
		"                                but do not change files\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -s, --sort                    sort entries by GID\n"
		"  -S, --silence-warnings        silence controversial/paranoid warnings\n"
		"      --version                 display the version and exit\n"
		"\n",
		hs_cli_prog());
	exit(status);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "help",             no_argument,       NULL, 'h' },
		{ "quiet",            no_argument,       NULL, 'q' },
		{ "read-only",        no_argument,       NULL, 'r' },
		{ "root",             required_argument, NULL, 'R' },
		{ "sort",             no_argument,       NULL, 's' },
		{ "silence-warnings", no_argument,       NULL, 'S' },
		{ "version",          no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hqrR:sS", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(E_OKAY);
		/* Debian's grpck takes -q without a word in its help; it
		 * means what pwck -q means: errors only */
		case 'q':
		case 'S': o.silence = true; break;
		case 'r': o.read_only = true; break;
		case 'R':
			hs_die(E_USAGE, "option --root is not supported; run grpck inside that root "
			       "instead (chroot %s grpck ...)", optarg);
		case 's': o.sort = true; break;
		case OPT_VERSION: hs_print_version();
		default: usage(E_USAGE);
		}
	}
	if (o.sort && o.read_only)
		hs_die(E_USAGE, "-s and -r are incompatible");
	if (argc - optind > 2)
		usage(E_USAGE);
	if (optind < argc)
		o.group = argv[optind];
	if (optind + 1 < argc)
		o.gshadow = argv[optind + 1];
}

int main(int argc, char **argv)
{
	struct hs_audit a = { .io = hs_audit_stdio };
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT;
	struct hs_audit_files f;
	bool have_pw;
	sigset_t saved;
	int r, status;

	hs_cli_set_prog(hs_privileged_init(argc, argv, "grpck"));
	parse_options(argc, argv);
	if (!hs_caller_is_root())
		hs_die(E_CANTOPEN, "Permission denied.");
	openlog("grpck", LOG_PID, LOG_AUTHPRIV);
	setvbuf(stdout, NULL, _IOLBF, 0);

	r = hs_audit_files_open(&f, true, o.group, o.group ? o.gshadow : NULL, !o.read_only);
	if (r < 0) {
		hs_warn("%s", f.error);
		if (f.lock_failed)
			syslog(LOG_WARNING, "%s", f.error);
		return f.lock_failed ? E_CANTLOCK : E_CANTOPEN;
	}

	if (o.sort) {
		r = hs_audit_sort(f.db, f.shadow);
		if (r < 0) {
			hs_warn("cannot sort entries in %s", f.db->path);
			hs_audit_files_close(&f);
			return E_CANTSORT;
		}
	} else {
		/* the users, for the member checks: read, not locked (a
		 * member that appears meanwhile is only a stale report) */
		have_pw = hs_accountdb_load(&pw, HS_DB_PASSWD, HS_ETC_PASSWD,
					    HS_DB_LENIENT | HS_DB_MISSING_OK) == 0;
		a.flags = (o.read_only ? HS_AUDIT_READ_ONLY : 0) |
			  (o.silence ? HS_AUDIT_NO_WARNINGS : 0) | HS_AUDIT_SYSLOG;
		r = hs_audit_group(&a, f.db, f.shadow, have_pw ? &pw : NULL);
		if (r == 0 && f.shadow)
			r = hs_audit_gshadow(&a, f.shadow, f.db, have_pw ? &pw : NULL);
		hs_accountdb_free(&pw);
		if (r < 0) {
			hs_warn("%s", hs_strerror(r));
			hs_audit_files_close(&f);
			return E_CANTUPDATE;
		}
	}

	status = E_OKAY;
	if (o.sort || a.db_changed) {
		hs_signals_block(&saved);
		r = hs_audit_files_commit(&f);
		hs_signals_restore(&saved);
		if (r < 0) {
			hs_warn("%s", f.error);
			syslog(LOG_WARNING, "%s", f.error);
			status = E_CANTUPDATE;
		}
	}
	hs_audit_files_close(&f);

	if (a.problems)
		printf("%s: %s\n", hs_cli_prog(), a.db_changed ? "the files have been updated"
							       : "no changes");
	if (status == E_OKAY && a.failures)
		status = E_CANTUPDATE;
	if (status == E_OKAY && a.problems)
		status = E_BADENTRY;
	if (fflush(stdout) != 0 && status == E_OKAY)
		status = E_CANTUPDATE;
	closelog();
	return status;
}
