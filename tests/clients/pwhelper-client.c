/* pwhelper-client: drives the password helper's client library
 * (pam/pwhelper_client.c) for the system tests (tests/system/
 * test_password_helper.py), inside the sandbox root, as a real user.
 *
 *   pwhelper-client verify USER PASSWORD
 *       prints "verify=N" (N = hs_pwhelper_verify's answer).
 *   pwhelper-client account USER
 *       prints "account=N" and, when N is 0, "LSTCHG:MIN:MAX:WARN:INACT:EXPIRE:".
 *   pwhelper-client hostile USER PASSWORD
 *       calls hs_pwhelper_verify in a host process that is awkward the way
 *       real screen lockers are: SIGCHLD ignored (children auto-reaped),
 *       then a SIGCHLD handler that reaps every child with waitpid(-1),
 *       then SIGPIPE at its default action and fd 0 closed.  Prints
 *       "ignored=N reaper=N closed-stdin=N sigchld-seen=N" and
 *       "state unchanged" when the signal mask and the SIGCHLD disposition
 *       are what they were before each call.
 *
 * The password is on the command line because this is a test program;
 * the library itself never passes it there. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pwhelper.h"

static volatile sig_atomic_t sigchld_seen;

static void reaper(int sig)
{
	int saved = errno;

	(void)sig;
	sigchld_seen++;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

/* Did the call leave the signal mask and SIGCHLD's disposition alone? */
struct host_state {
	sigset_t mask;
	struct sigaction chld;
};

static void snapshot(struct host_state *s)
{
	sigprocmask(SIG_SETMASK, NULL, &s->mask);
	sigaction(SIGCHLD, NULL, &s->chld);
}

static int same_state(const struct host_state *a)
{
	struct host_state b;

	snapshot(&b);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&a->mask, sig) != sigismember(&b.mask, sig))
			return 0;
	return a->chld.sa_handler == b.chld.sa_handler && a->chld.sa_flags == b.chld.sa_flags;
}

static int hostile(const char *user, const char *password)
{
	struct host_state st;
	struct sigaction sa;
	int ignored, reaped, closed, ok = 1;

	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_IGN);
	snapshot(&st);
	ignored = hs_pwhelper_verify(user, password);
	ok &= same_state(&st);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reaper;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	snapshot(&st);
	reaped = hs_pwhelper_verify(user, password);
	ok &= same_state(&st);

	close(STDIN_FILENO);
	snapshot(&st);
	closed = hs_pwhelper_verify(user, password);
	ok &= same_state(&st);

	printf("ignored=%d reaper=%d closed-stdin=%d sigchld-seen=%d\n", ignored, reaped, closed,
	       (int)sigchld_seen);
	printf("%s\n", ok ? "state unchanged" : "state CHANGED");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "verify") == 0) {
		printf("verify=%d\n", hs_pwhelper_verify(argv[2], argv[3]));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "account") == 0) {
		struct hs_aging a;
		long lstchg;
		int r = hs_pwhelper_account(argv[2], &lstchg, &a);

		printf("account=%d\n", r);
		if (r == HS_PWHELPER_OK)
			printf("%ld:%ld:%ld:%ld:%ld:%ld:\n", lstchg, a.min, a.max, a.warn, a.inact,
			       a.expire);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "hostile") == 0)
		return hostile(argv[2], argv[3]);
	fprintf(stderr, "usage: pwhelper-client verify|hostile USER PASSWORD | account USER\n");
	return 2;
}
