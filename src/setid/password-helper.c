/* password-helper: verify the caller's own password, or report the
 * caller's own aging data, for a process that cannot read the per-user
 * tree (a screen locker running as the user).  Protocol: lib/auth/pwhelper.h;
 * manual: password-helper(8).
 *
 * Installed setgid hardened-shadow (2711, DESIGN §5): the group lets it
 * traverse /etc/hardened-shadow, and the kernel's owner check on the
 * 02710 user directories limits it to directories the real uid owns.
 * Everything it is given (argv, stdin, signals, the timing of its
 * answer) is the caller's, so it trusts none of it:
 *   - whom it serves is the real uid; USER on the command line must be
 *     that uid's account name, and is only a cross-check;
 *   - the password comes from stdin, bounded, never argv or the
 *     environment;
 *   - guesses are serialized per caller by the guess lock (an exclusive
 *     flock on the caller's aging file, not the writers' lock), held
 *     through the failure delay: the lock su and setgid passwd take for
 *     this caller too (lib/tree/userdir.h). */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "confine.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "pwhelper.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

/* Seconds for everything before the lock is held: reading the password
 * and waiting for other verifications of the same user.  A caller that
 * never closes the pipe, or a queue of guesses, cannot keep helpers
 * around for ever. */
#define HELPER_DEADLINE 60

/* The secrets live in static storage so that the atexit handler wipes
 * them on every exit path, hs_die() included. */
static char password[HS_PASSWORD_MAX + 2];
static char shadowbuf[HS_USERFILE_MAX + 2];

static volatile sig_atomic_t deadline_passed;

static void wipe_secrets(void)
{
	hs_wipe(password, sizeof(password));
	hs_wipe(shadowbuf, sizeof(shadowbuf));
}

static void on_alarm(int sig)
{
	(void)sig;
	deadline_passed = 1;
}

/* SIGALRM interrupts blocking reads and flock (no SA_RESTART). */
static void arm_deadline(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		hs_die(HS_PWHELPER_ERROR, "cannot set up a deadline: %s", strerror(errno));
	alarm(HELPER_DEADLINE);
}

/* Read the password from fd 0: a pipe, socket or regular file, up to EOF,
 * at most HS_PASSWORD_MAX bytes.  Returns its length; refuses (exits)
 * otherwise without keeping what it read. */
static size_t read_password(void)
{
	struct stat st;
	size_t len = 0;

	/* hs_privs_init put /dev/null on a closed stdin, and a
	 * terminal would echo the password: neither is how the client
	 * talks to us */
	if (fstat(STDIN_FILENO, &st) < 0)
		hs_die(HS_PWHELPER_REFUSED, "cannot inspect standard input: %s", strerror(errno));
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) && !S_ISREG(st.st_mode))
		hs_die(HS_PWHELPER_REFUSED,
		       "standard input must be a pipe or a file holding the password");
	/* one byte more than allowed tells "too long" from "exactly max" */
	while (len < HS_PASSWORD_MAX + 1) {
		ssize_t n = read(STDIN_FILENO, password + len, HS_PASSWORD_MAX + 1 - len);

		if (n == 0)
			break;
		if (n < 0) {
			if (errno != EINTR)
				hs_die(HS_PWHELPER_ERROR, "cannot read the password from standard input: %s",
				       strerror(errno));
			if (deadline_passed)
				hs_die(HS_PWHELPER_ERROR,
				       "timed out after %d s reading the password from standard input",
				       HELPER_DEADLINE);
			continue;
		}
		len += (size_t)n;
	}
	if (len > HS_PASSWORD_MAX)
		hs_die(HS_PWHELPER_REFUSED, "the password on standard input is longer than %d bytes",
		       HS_PASSWORD_MAX);
	/* crypt would see only the part before a NUL: a different
	 * password from the one sent */
	if (memchr(password, '\0', len))
		hs_die(HS_PWHELPER_REFUSED, "the password on standard input contains a NUL byte");
	password[len] = '\0';
	return len;
}

/* The caller's directory: owned by the real uid, or nothing. */
static int open_own_dir(const char *user, uid_t uid)
{
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	int fd;

	if (treefd < 0)
		hs_die(HS_PWHELPER_ERROR, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
	fd = hs_userdir_open(treefd, user, uid, NULL);
	if (fd < 0) {
		hs_userdir_path(path, sizeof(path), user, NULL);
		syslog(LOG_ERR, "cannot open %s: %s", path, hs_strerror(fd));
		hs_die(HS_PWHELPER_ERROR, "cannot open %s: %s", path, hs_strerror(fd));
	}
	return fd;
}

/* From here on the kernel, not only our checks, keeps the helper to
 * reading the caller's directory, with a short list of system calls:
 * whatever the input does to it, it can reach nothing else.  Runs before
 * any input is read. */
static void confine_to(int udirfd)
{
	int r = hs_confine_helper(udirfd);

	if (r < 0 && r != -ENOSYS)
		hs_die(HS_PWHELPER_ERROR, "cannot confine itself: %s", hs_strerror(r));
}

static void read_own_shadow(int udirfd, const char *user, uid_t uid, struct hs_shadow *sh)
{
	char path[HS_PATHBUF_USER];
	int r;

	r = hs_userdir_read_shadow(udirfd, uid, shadowbuf, sizeof(shadowbuf), sh);
	if (r < 0) {
		hs_userdir_path(path, sizeof(path), user, HS_FILE_SHADOW);
		syslog(LOG_ERR, "cannot read %s: %s", path, hs_strerror(r));
		hs_die(HS_PWHELPER_ERROR, "cannot read %s: %s", path, hs_strerror(r));
	}
}

/* Hold the caller's guess lock: one verification of this caller at a
 * time, across every helper, su and passwd they run.  It is not the
 * writers' lock, so a caller who stops the helper here delays only their
 * own guesses. */
static int lock_guesses(int udirfd, const char *user)
{
	char path[HS_PATHBUF_USER], why[64];
	int fd = hs_userdir_guess_lock(udirfd, HELPER_DEADLINE * 1000u);

	if (fd < 0)
		hs_die(HS_PWHELPER_ERROR, "cannot lock %s: %s",
		       hs_userdir_path(path, sizeof(path), user, HS_FILE_AGING),
		       hs_lock_strerror(fd, HELPER_DEADLINE * 1000u, why, sizeof why));
	/* from here on, nothing the caller does may shorten the delay */
	alarm(0);
	return fd;
}

static int do_verify(const char *user, uid_t uid)
{
	_cleanup_close_ int udirfd = -1;
	_cleanup_close_ int guessfd = -1;
	struct hs_shadow sh;
	int r;

	udirfd = open_own_dir(user, uid);
	confine_to(udirfd);
	read_password();
	guessfd = lock_guesses(udirfd, user);
	read_own_shadow(udirfd, user, uid, &sh);
	r = hs_hash_verify_password(password, sh.hash, false);
	wipe_secrets();
	if (r < 0)
		hs_die(HS_PWHELPER_ERROR, "cannot verify the password: %s", hs_strerror(r));
	if (r == 1)
		return HS_PWHELPER_OK;
	syslog(LOG_NOTICE, "authentication failure for %s (uid %lu)", user, (unsigned long)uid);
	/* still holding the lock: the next guess waits for this delay too */
	hs_sleep_whole_ms(HS_FAIL_DELAY_MS);
	return HS_PWHELPER_MISMATCH;
}

static int do_account(const char *user, uid_t uid)
{
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int udirfd = -1;
	struct hs_aging aging;
	struct hs_shadow sh;
	long lstchg;
	int r;

	udirfd = open_own_dir(user, uid);
	confine_to(udirfd);
	read_own_shadow(udirfd, user, uid, &sh);
	lstchg = sh.lstchg;
	wipe_secrets();
	/* fail closed: an unusable aging file reads as an expired account;
	 * out of descriptors or memory nothing was learnt of it: an error */
	r = hs_userdir_aging_or_expired(udirfd, &aging);
	hs_userdir_path(path, sizeof(path), user, HS_FILE_AGING);
	if (hs_err_transient(r)) {
		syslog(LOG_ERR, "cannot read %s: %s", path, hs_strerror(r));
		hs_die(HS_PWHELPER_ERROR, "cannot read %s: %s", path, hs_strerror(r));
	}
	if (r < 0)
		syslog(LOG_ERR, "%s: %s: account treated as expired", path, hs_strerror(r));
	if (printf("%ld:%ld:%ld:%ld:%ld:%ld:\n", lstchg, aging.min, aging.max, aging.warn,
		   aging.inact, aging.expire) < 0 || fflush(stdout) != 0)
		hs_die(HS_PWHELPER_ERROR, "cannot write to standard output: %s", strerror(errno));
	return HS_PWHELPER_OK;
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *pwbuf = NULL;
	struct passwd pw;
	const char *user;
	bool verify;
	uid_t uid;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "password-helper"));
	if (atexit(wipe_secrets) != 0)
		hs_die(HS_PWHELPER_ERROR, "cannot register the exit handler");
	/* a fixed tag: argv[0] is the caller's choice */
	/* connected now (NDELAY), and the time zone loaded: once confined
	 * the helper can open neither /dev/log nor /etc/localtime */
	openlog("password-helper", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
	tzset();
	arm_deadline();

	if (argc != 3 || (strcmp(argv[1], "verify") != 0 && strcmp(argv[1], "account") != 0))
		hs_die(HS_PWHELPER_REFUSED,
		       "usage: password-helper verify|account USER (password on standard input; "
		       "it is run by pam_hardened_shadow.so)");
	verify = strcmp(argv[1], "verify") == 0;
	user = argv[2];
	if (!hs_names_user_valid(user))
		hs_die(HS_PWHELPER_REFUSED, "invalid user name");

	uid = getuid();
	/* root reads the tree itself; serving it here would only put root's
	 * logins behind another user's guessing lock for nothing */
	if (uid == 0)
		hs_die(HS_PWHELPER_REFUSED, "refusing to run for root (root reads %s itself)",
		       HS_TREE_DIR);
	r = hs_account_getpwuid(uid, &pw, &pwbuf);
	if (r == -ENOENT)
		hs_die(HS_PWHELPER_REFUSED, "uid %lu has no passwd entry", (unsigned long)uid);
	if (r < 0)
		hs_die(HS_PWHELPER_ERROR, "cannot look up uid %lu: %s", (unsigned long)uid,
		       hs_strerror(r));
	if (strcmp(pw.pw_name, user) != 0) {
		syslog(LOG_WARNING, "refused: uid %lu (%s) asked about %s", (unsigned long)uid,
		       pw.pw_name, user);
		hs_die(HS_PWHELPER_REFUSED, "uid %lu (%s) may only ask about its own account, not %s",
		       (unsigned long)uid, pw.pw_name, user);
	}

	r = verify ? do_verify(user, uid) : do_account(user, uid);
	closelog();
	return r;
}
