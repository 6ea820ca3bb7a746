/* pwck: verify the integrity of the password files and of the per-user
 * tree.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit
 * codes follow shadow-utils' pwck(8); pwck(8) of this package lists where
 * we differ.  The checks are lib/audit.c's: /etc/passwd (and a classic
 * /etc/shadow when there is one), then the tree against /etc/passwd.
 *
 * Without -r the global files are locked for the whole run (so no
 * useradd, usermod or userdel restructures the tree under us), every
 * problem with a repair is offered as a question, the tree repairs are
 * made at once (each atomic), and the global files are written at the
 * end, /etc/shadow before /etc/passwd. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "audit.h"
#include "cli.h"
#include "config.h"
#include "fileio.h"
#include "layout.h"
#include "privs.h"
#include "shells.h"
#include "userdir.h"
#include "util.h"

/* shadow-utils' pwck(8) exit codes */
#define E_OKAY       0
#define E_USAGE      1   /* invalid command syntax */
#define E_BADENTRY   2   /* one or more bad password entries */
#define E_CANTOPEN   3   /* cannot open password files */
#define E_CANTLOCK   4   /* cannot lock password files */
#define E_CANTUPDATE 5   /* cannot update password files */
#define E_CANTSORT   6   /* cannot sort password files */

static struct {
	bool quiet, read_only, sort;
	const char *passwd, *shadow;
} o;

static _Noreturn void usage(int status)
{
	FILE *f = status == E_OKAY ? stdout : stderr;

	fprintf(f,
		"Usage: %s [options] [passwd [shadow]]\n"
		"\n"
		"Options:\n"
		"  -b, --badname                 allow bad names (not supported)\n"
		"  -h, --help                    display this help message and exit\n"
		"  -q, --quiet                   report errors only\n"
		"  -r, --read-only               display errors and warnings\n"
		"                                but do not change files\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -s, --sort                    sort entries by UID\n"
		"      --version                 display the version and exit\n"
		"\n"
		"Without file arguments, the per-user tree %s is checked too.\n",
		hs_cli_prog(), HS_TREE_DIR);
	exit(status);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "badname",   no_argument,       NULL, 'b' },
		{ "help",      no_argument,       NULL, 'h' },
		{ "quiet",     no_argument,       NULL, 'q' },
		{ "read-only", no_argument,       NULL, 'r' },
		{ "root",      required_argument, NULL, 'R' },
		{ "sort",      no_argument,       NULL, 's' },
		{ "version",   no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "bhqrR:s", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			hs_die(E_USAGE, "option --badname is not supported: names must be valid "
			       "(they become paths in %s)", HS_TREE_DIR);
		case 'h': usage(E_OKAY);
		case 'q': o.quiet = true; break;
		case 'r': o.read_only = true; break;
		case 'R':
			hs_die(E_USAGE, "option --root is not supported; run pwck inside that root "
			       "instead (chroot %s pwck ...)", optarg);
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
		o.passwd = argv[optind];
	if (optind + 1 < argc)
		o.shadow = argv[optind + 1];
}

/* The tree's parameters: its groups (each may be missing, which the
 * audit reports) and /etc/shells. */
static void tree_params(struct hs_audit_tree *t, struct hs_shells *shells)
{
	t->path = HS_TREE_DIR;
	t->admin_uid = 0;
	if (hs_layout_gids(&t->tree_gid, NULL) < 0)
		t->tree_gid = HS_ANY_GID;
	if (hs_layout_gids(NULL, &t->auth_gid) < 0)
		t->auth_gid = HS_ANY_GID;
	t->shells = NULL;
	if (hs_shells_load(shells, HS_ETC_SHELLS) == 0 && shells->present)
		t->shells = shells;
}

int main(int argc, char **argv)
{
	struct hs_audit a = { .io = hs_audit_stdio };
	struct hs_audit_files f;
	struct hs_config *defs = NULL;
	struct hs_shells shells = { 0 };
	struct hs_audit_tree t;
	sigset_t saved;
	int r, status;

	hs_cli_set_prog(hs_privileged_init(argc, argv, "pwck"));
	parse_options(argc, argv);
	if (!hs_caller_is_root())
		hs_die(E_CANTOPEN, "Permission denied.");
	openlog("pwck", LOG_PID, LOG_AUTHPRIV);
	/* prompts and report lines in order, also into a pipe */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hs_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs) < 0)
		defs = NULL;

	r = hs_audit_files_open(&f, false, o.passwd, o.passwd ? o.shadow : NULL, !o.read_only);
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
		a.flags = (o.read_only ? HS_AUDIT_READ_ONLY : 0) |
			  (o.quiet ? HS_AUDIT_NO_WARNINGS : 0) | HS_AUDIT_SYSLOG;
		r = hs_audit_passwd(&a, f.db, f.shadow, defs);
		if (r == 0 && f.shadow)
			r = hs_audit_shadow(&a, f.shadow, f.db);
		/* the tree belongs to the system's /etc/passwd, not to a copy */
		if (r == 0 && !o.passwd) {
			tree_params(&t, &shells);
			r = hs_audit_tree(&a, f.db, &t);
			if (r == -ENOENT)
				r = 0;          /* not converted: a classic system */
		}
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
	hs_shells_free(&shells);
	hs_config_free(defs);

	if (a.problems)
		printf("%s: %s\n", hs_cli_prog(),
		       a.db_changed || a.tree_changed ? "the files have been updated" : "no changes");
	if (status == E_OKAY && a.failures)
		status = E_CANTUPDATE;
	if (status == E_OKAY && a.problems)
		status = E_BADENTRY;
	if (fflush(stdout) != 0 && status == E_OKAY)
		status = E_CANTUPDATE;
	closelog();
	return status;
}
