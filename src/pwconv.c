/* pwconv: move the accounts from /etc/passwd + /etc/shadow (or an Openwall
 * /etc/tcb tree) into /etc/hardened-shadow.  The work is in lib/convert.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "convert.h"
#include "privs.h"

/* Exit codes: shadow-utils' pwconv(8) documents none; we use 0 success,
 * 1 failure (nothing changed) and 2 for bad usage, as its other tools do. */
#define EXIT_USAGE 2

static _Noreturn void usage(FILE *f, int status)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"\n"
		"Move the password hashes, aging data and login shells from /etc/shadow\n"
		"(or /etc/tcb) into /etc/hardened-shadow.\n"
		"\n"
		"Options:\n"
		"      --from-tcb                import /etc/tcb/USER/shadow instead of /etc/shadow\n"
		"  -h, --help                    display this help message and exit\n"
		"  -V, --version                 display the version and exit\n",
		hs_cli_prog());
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "from-tcb", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "root", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct hs_convert_opts opts = { .from_tcb = false };
	int c, r;

	hs_cli_set_prog(hs_privileged_init(argc, argv, "pwconv"));
	while ((c = getopt_long(argc, argv, "hVR:", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			opts.from_tcb = true;
			break;
		case 'h':
			usage(stdout, 0);
		case 'V':
			hs_print_version();
		case 'R':
			hs_die(EXIT_USAGE, "option --root is not supported; run pwconv inside the "
			       "root instead (chroot %s pwconv)", optarg);
		default:
			usage(stderr, EXIT_USAGE);
		}
	}
	if (optind < argc) {
		hs_warn("unexpected argument: %s", argv[optind]);
		usage(stderr, EXIT_USAGE);
	}
	if (!hs_caller_is_root())
		hs_die(1, "permission denied: only root may convert the account files");
	r = hs_convert_to_tree(&opts);
	return r < 0 ? 1 : 0;
}
