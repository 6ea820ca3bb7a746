/* nologin: politely refuse a login.
 *
 * The login shell of accounts that must not log in.  It prints
 * /etc/nologin.txt (or a default message), logs the attempt and exits 1.
 * Options follow util-linux's nologin(8): -h/--help and -V/--version; the
 * shell options a caller may pass (sshd's "-c COMMAND", -i, -l, -r, --norc
 * ...) and anything else are ignored.  The log line follows the nologin
 * Debian ships (shadow-utils'), including sshd's SSH_ORIGINAL_COMMAND.
 *
 * Not set-id: it runs with the refused user's own rights.  It still takes
 * the privileged-entry hygiene (fds 0-2 exist before syslog opens its
 * socket, so the message cannot land in the log socket; argc == 0). */
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "privs.h"
#include "util.h"

#define NOLOGIN_TXT "/etc/nologin.txt"
#define DEFAULT_MESSAGE "This account is currently not available.\n"
/* More than any sane notice; a bigger file is shown cut. */
#define NOLOGIN_TXT_MAX (64u * 1024)
/* Longest SSH_ORIGINAL_COMMAND kept for the log. */
#define COMMAND_LOG_MAX 256

static _Noreturn void usage(void)
{
	printf("\n"
	       "Usage:\n"
	       " %s [options]\n"
	       "\n"
	       "Politely refuse a login.\n"
	       "\n"
	       "Options:\n"
	       " -h, --help     display this help\n"
	       " -V, --version  display version\n"
	       "\n"
	       "For more details see nologin(8).\n",
	       hs_cli_prog());
	exit(0);
}

/* /etc/nologin.txt when it is a regular file we can read; else false. */
static bool show_nologin_txt(void)
{
	static char buf[NOLOGIN_TXT_MAX];
	struct stat st;
	ssize_t n;
	_cleanup_close_ int fd = open(NOLOGIN_TXT, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	n = hs_read_full(fd, buf, sizeof buf);
	if (n < 0)
		return false;
	(void)hs_write_full(STDOUT_FILENO, buf, (size_t)n);
	return true;
}

static void log_attempt(const char *command)
{
	_cleanup_free_ char *pwbuf = NULL;
	char who[2 * 32 + 8], tty[64], cmd[COMMAND_LOG_MAX];
	const char *t = ttyname(STDIN_FILENO);
	struct passwd pw;

	if (hs_account_getpwuid(getuid(), &pw, &pwbuf) == 0)
		hs_printable(pw.pw_name, who, sizeof who);
	else
		snprintf(who, sizeof who, "UNKNOWN");
	hs_printable(t ? t : "UNKNOWN", tty, sizeof tty);
	if (command)
		hs_printable(command, cmd, sizeof cmd);
	openlog("nologin", LOG_PID, LOG_AUTH);
	syslog(LOG_CRIT, "Attempted login by %s (UID: %lu) on %s%s%s", who,
	       (unsigned long)getuid(), tty, command ? " SSH_ORIGINAL_COMMAND=" : "",
	       command ? cmd : "");
	closelog();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "command", required_argument, NULL, 'c' },
		{ "init-file", required_argument, NULL, 'I' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "login", no_argument, NULL, 'l' },
		{ "noprofile", no_argument, NULL, 'P' },
		{ "norc", no_argument, NULL, 'N' },
		{ "posix", no_argument, NULL, 'X' },
		{ "rcfile", required_argument, NULL, 'R' },
		{ "restricted", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* sshd passes the refused command here; keep a bounded copy before
	 * the environment is reset */
	const char *env_cmd = getenv("SSH_ORIGINAL_COMMAND");
	char *command = env_cmd ? strndup(env_cmd, COMMAND_LOG_MAX) : NULL;
	int c;

	(void)hs_privs_init(argc, argv, "nologin");
	hs_cli_set_prog("nologin");

	/* unknown options are ignored silently, like the shell options */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:ilrhV", longopts, NULL)) != -1) {
		if (c == 'h')
			usage();
		if (c == 'V')
			hs_print_version();
	}

	if (!show_nologin_txt())
		(void)hs_write_full(STDOUT_FILENO, DEFAULT_MESSAGE, sizeof DEFAULT_MESSAGE - 1);
	log_attempt(command);
	free(command);
	return 1;
}
