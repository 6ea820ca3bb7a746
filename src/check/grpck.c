/* grpck: verify the integrity of the group files.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit
 * codes follow shadow-utils' grpck(8); grpck(8) of this package lists
 * where we differ.  The checks are src/check/integrity.c's: /etc/group, its
 * agreement with /etc/gshadow (which is made to follow /etc/group), then
 * /etc/gshadow.  Members are looked up in /etc/passwd (then getpwnam), so
 * a group of any size is checked in linear time.
 *
 * Without -r the two files are locked for the whole run, every problem
 * with a repair is offered as a question, and the files are written at
 * the end, /etc/gshadow before /etc/group. */
#include <stdbool.h>

#include "accountdb.h"
#include "integrity.h"
#include "checktool.h"
#include "cli.h"
#include "layout.h"
#include "util.h"

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [group [gshadow]]",
		     "  -h, --help                    display this help message and exit\n"
		     "  -r, --read-only               display errors and warnings\n"
		     "                                but do not change files\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -s, --sort                    sort entries by GID\n"
		     "  -S, --silence-warnings        silence controversial/paranoid warnings\n",
		     "\n");
}

/* /etc/group, then /etc/gshadow; members are looked up in /etc/passwd */
static int run_checks(struct hs_integrity *a, struct hs_integrity_files *f,
		      struct hs_accountdb *pw, const struct hs_check_opts *o)
{
	int r;

	(void)o;
	r = hs_integrity_group(a, f->db, f->shadow, pw);
	if (r == 0 && f->shadow)
		r = hs_integrity_gshadow(a, f->shadow, f->db, pw);
	return r;
}

int main(int argc, char **argv)
{
	static const struct hs_check_tool tool = {
		.name = "grpck", .group = true, .usage = usage, .run = run_checks,
		.companion = HS_ETC_PASSWD, .companion_kind = HS_DB_PASSWD,
	};

	return hs_check_main(&tool, argc, argv);
}
