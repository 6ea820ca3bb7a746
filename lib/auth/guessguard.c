/* The guess guard (guessguard.h).  It may start inside any setuid-root
 * application that loaded the PAM module, threads and all: the child
 * calls nothing but system calls and never returns into the
 * application's code (_exit). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "guessguard.h"
#include "privs.h"
#include "util.h"

/* Close every fd but keep1 and keep2 (keep1 < keep2); one by one where
 * close_range fails (a kernel before 5.9, an application's seccomp
 * filter), up to the hard fd limit, at most 65536. */
static void close_all_but(int keep1, int keep2)
{
	struct rlimit rl;
	unsigned max = 65536;

	if ((keep1 == 0 || close_range(0, (unsigned)keep1 - 1, 0) == 0) &&
	    (keep2 == keep1 + 1 || close_range((unsigned)keep1 + 1, (unsigned)keep2 - 1, 0) == 0) &&
	    close_range((unsigned)keep2 + 1, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < max)
		max = (unsigned)rl.rlim_max;
	for (unsigned fd = 0; fd < max; fd++)
		if ((int)fd != keep1 && (int)fd != keep2)
			(void)close((int)fd);
}

/* Not the first victim of a memory shortage the caller brings about: su
 * inherits their oom_score_adj (up to 1000, which they may set), and the
 * kernel's OOM killer would end the guard, and the delay, before
 * anything of theirs.  The guard is root's: the default. */
static void reset_oom_score(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return;
	(void)!write(fd, "0", 1);
	close(fd);
}

/* No handler of the application's runs in the guard (a signal from root:
 * shutdown, pkill): every disposition back to the default.  glibc refuses
 * its own internal signals; that is harmless. */
static void default_signals(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &dfl, NULL);
}

/* The guard's life: out of reach, 'R' to say so, then one byte of
 * verdict; 'S' ends it at once, anything else (or the checker gone
 * without a word) costs the delay. */
static _Noreturn void guard_main(int sock, int lockfd, unsigned delay_ms)
{
	char c = 0;

	default_signals();
	if (setresuid(0, 0, 0) < 0 || setsid() < 0)
		_exit(1);
	hs_privs_leave_callers_cgroup();
	reset_oom_score();
	/* nothing of the caller's or the application's stays open: their
	 * terminal, sockets and files close when they are done with them */
	close_all_but(sock < lockfd ? sock : lockfd, sock < lockfd ? lockfd : sock);
	/* MSG_NOSIGNAL: a peer gone is an answer, not a SIGPIPE */
	if (send(sock, "R", 1, MSG_NOSIGNAL) != 1)
		_exit(1);
	while (read(sock, &c, 1) < 0 && errno == EINTR)
		;
	if (c != 'S')
		hs_sleep_whole_ms(delay_ms);
	/* the lock goes with the guard's copy of its fd */
	_exit(0);
}

int hs_guessguard_start(struct hs_guessguard *g, int lockfd, unsigned delay_ms)
{
	int sv[2];
	char c = 0;
	ssize_t n;

	g->pid = -1;
	g->sock = -1;
	g->pidfd = -1;
	g->delay_ms = delay_ms;
	if (geteuid() != 0)
		return -EPERM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (g->pid == 0)
		guard_main(sv[1], lockfd, delay_ms);
	close(sv[1]);
	g->sock = sv[0];
	/* held before anyone can reap the guard (it waits for its verdict):
	 * the wait below then names this guard, never a later child of the
	 * application that was given its pid once the application reaped it.
	 * Without pidfd_open (Linux before 5.3), the pid. */
	g->pidfd = pidfd_open(g->pid, 0);
	while ((n = read(g->sock, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && c == 'R')
		return 0;
	/* it could not get out of reach: it has ended (or ends now) */
	hs_guessguard_end(g, true);
	return -ECHILD;
}

/* The application's SIGCHLD is left alone.  A handler of its that reaps
 * every child (waitpid(-1, ..., WNOHANG)), or SIGCHLD ignored (the
 * kernel reaps), may take the guard's exit status, and the waitpid below
 * then fails with ECHILD; but no one can reap the guard before it has
 * ended, which after a wrong guess is after its delay, and the verdict is
 * ours, not the guard's exit status.  pam_unix sets SIGCHLD to SIG_DFL
 * around its helper because it needs the helper's status; here that
 * would only hurt: sigaction is process-wide, so for the hash time and
 * the delay another thread's children would end unseen (a SIGCHLD under
 * SIG_DFL is discarded), and an application that ignores SIGCHLD would
 * be left with zombies.  What the wait must not do is end the delay
 * early: whatever ends it (the application reaped the guard, root or the
 * OOM killer ended it), a failure then sleeps out the rest of the delay
 * from the verdict on, on the monotonic clock.  The guess lock stays
 * held meanwhile: the caller's fd shares it with the guard's. */
void hs_guessguard_end(struct hs_guessguard *g, bool right)
{
	struct timespec until;
	siginfo_t info;
	bool timed;
	int r;

	if (g->pid <= 0)
		return;
	timed = clock_gettime(CLOCK_MONOTONIC, &until) == 0;
	(void)send(g->sock, right ? "S" : "F", 1, MSG_NOSIGNAL);
	close(g->sock);
	do
		r = g->pidfd >= 0 ? waitid(P_PIDFD, (id_t)g->pidfd, &info, WEXITED)
				  : waitid(P_PID, (id_t)g->pid, &info, WEXITED);
	while (r < 0 && errno == EINTR);
	/* Linux 5.3 has pidfd_open but not P_PIDFD (5.4): by pid, as without */
	if (r < 0 && errno == EINVAL && g->pidfd >= 0)
		do
			r = waitid(P_PID, (id_t)g->pid, &info, WEXITED);
		while (r < 0 && errno == EINTR);
	if (g->pidfd >= 0)
		close(g->pidfd);
	if (!right && timed) {
		hs_timespec_add_ms(&until, g->delay_ms);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
	}
	g->pid = -1;
	g->sock = -1;
	g->pidfd = -1;
}
