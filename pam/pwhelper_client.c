/* Client side of the password helper (protocol: pwhelper.h).
 *
 * The caller is usually a PAM module inside someone else's process (a
 * screen locker, possibly multithreaded, with its own SIGCHLD and SIGPIPE
 * handling).  So running the helper must change nothing the host can
 * see, and the host's child handling must not steal our answer:
 *   - the host creates, with clone() and an exit signal of 0, an
 *     intermediate process that never execs.  Its death sends the host
 *     no SIGCHLD, it is never auto-reaped when the host ignores SIGCHLD,
 *     and the host's own waitpid(-1, ...) loops do not see it (they lack
 *     __WALL/__WCLONE); only our waitpid on its pid collects it.  (The
 *     helper itself cannot be that child: execve resets the exit signal
 *     to SIGCHLD.)
 *   - the intermediate resets every signal to its default, starts the
 *     helper (clone with CLONE_VM|CLONE_VFORK: no atfork handlers, no
 *     malloc in a copy of a multithreaded process), waits for it and
 *     exits with its status;
 *   - all signals are blocked in the host around clone(), so no host
 *     handler ever runs in the intermediate;
 *   - the password goes over a socketpair with send(MSG_NOSIGNAL): a
 *     helper that died early costs an EPIPE, never a SIGPIPE.
 * The helper gets an empty environment, fds 0-2 only, and an empty
 * signal mask. */
#include "hs-build-config.h"
#include "pwhelper.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "names.h"
#include "util.h"

#define CHILD_STACK_SIZE (64 * 1024)
/* "LSTCHG:MIN:MAX:WARN:INACT:EXPIRE:\n" with six 8-digit fields fits in
 * well under this; anything longer is not the helper talking. */
#define ACCOUNT_ANSWER_MAX 128

struct child_args {
	char *argv[4];
	int fds[3];          /* become the helper's 0, 1, 2; all are >= 3 */
	unsigned int fd_max; /* for the close() fallback of close_range */
	char *exec_stack;    /* top of the stack for exec_main */
};

/* Runs in the intermediate, sharing its memory until execve. */
static int exec_main(void *opaque)
{
	struct child_args *a = opaque;
	static char *const envp[] = { NULL };

	execve(HS_PASSWORD_HELPER, a->argv, envp);
	_exit(127);
}

/* The intermediate process: system calls only (it is a copy of a
 * possibly multithreaded host, so no locks, no malloc, no stdio). */
static int intermediate_main(void *opaque)
{
	struct child_args *a = opaque;
	struct sigaction dfl;
	sigset_t none;
	pid_t pid;
	int status;

	/* the sources are all >= 3, so no dup2 overwrites a later source */
	for (int i = 0; i < 3; i++)
		if (dup2(a->fds[i], i) < 0)
			_exit(HS_PWHELPER_ERROR);
	if (close_range(3, ~0U, 0) < 0)
		for (unsigned int fd = 3; fd < a->fd_max; fd++)
			close((int)fd);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);  /* fails harmlessly for KILL, STOP */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	pid = clone(exec_main, a->exec_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
	if (pid < 0)
		_exit(HS_PWHELPER_ERROR);
	/* the helper alone holds the other ends now: EOF and EPIPE are its */
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(HS_PWHELPER_ERROR);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : HS_PWHELPER_ERROR);
}

/* Move fd out of the 0-2 range (a host with closed standard fds gets
 * those numbers from socketpair/pipe/open). */
static int above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	hs_close(fd);
	return nfd;
}

static unsigned int fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > 65536)
		return 65536;
	return (unsigned int)rl.rlim_cur;
}

/* Start the helper (through the intermediate) with end[1], one end of a
 * new pipe or socketpair, as its standard fd number slot and /dev/null as
 * the other two.  end[1] is closed here; end[0] is left open for the
 * caller, unless this fails.  Returns the intermediate's pid, or -1. */
static pid_t spawn_helper(const char *mode, const char *user, int end[2], int slot)
{
	_cleanup_close_ int null = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY));
	struct child_args args = {
		.argv = { "password-helper", (char *)mode, (char *)user, NULL },
		.fds = { null, null, null },
		.fd_max = fd_limit(),
	};
	sigset_t all, saved;
	char *stacks = NULL;
	pid_t pid = -1;

	end[0] = above_stdio(end[0]);
	end[1] = above_stdio(end[1]);
	args.fds[slot] = end[1];
	/* two stacks, allocated here because the intermediate must not
	 * malloc; both are in its own copy of memory */
	if (null >= 0 && end[0] >= 0 && end[1] >= 0)
		stacks = malloc(2 * CHILD_STACK_SIZE);
	if (stacks) {
		args.exec_stack = stacks + 2 * CHILD_STACK_SIZE;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		/* no CLONE_VM: a copy of memory, like fork; exit signal 0 */
		pid = clone(intermediate_main, stacks + CHILD_STACK_SIZE, 0, &args);
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
		free(stacks);
	}
	/* the intermediate has its copy; ours would keep EOF from our end */
	hs_close(end[1]);
	if (pid < 0)
		hs_close(end[0]);
	return pid;
}

/* Wait for our child only, through EINTR; map its end to an answer. */
static int wait_helper(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, __WALL) < 0)
		if (errno != EINTR)
			return HS_PWHELPER_ERROR;
	/* the answers are 0 (OK) to 2 (REFUSED); HS_PWHELPER_ERROR, 127
	 * (could not exec) and anything else are an error */
	if (!WIFEXITED(status) || WEXITSTATUS(status) > HS_PWHELPER_REFUSED)
		return HS_PWHELPER_ERROR;
	return WEXITSTATUS(status);
}

/* Send all of buf, or stop at the first real error: a helper that went
 * away (EPIPE, ECONNRESET) answers through its exit status. */
static void send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

int hs_pwhelper_verify(const char *user, const char *password)
{
	int sv[2];
	size_t len;
	pid_t pid;

	if (!user || !password || !hs_names_user_valid(user))
		return HS_PWHELPER_REFUSED;
	len = strlen(password);
	/* the helper would refuse it too; no need to start it */
	if (len > HS_PASSWORD_MAX)
		return HS_PWHELPER_REFUSED;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return HS_PWHELPER_ERROR;
	pid = spawn_helper("verify", user, sv, STDIN_FILENO);
	if (pid < 0)
		return HS_PWHELPER_ERROR;
	/* at most HS_PASSWORD_MAX bytes: fits in the socket buffer, so this
	 * never blocks on a helper that does not read */
	send_all(sv[0], password, len);
	hs_close(sv[0]);  /* EOF ends the password */
	return wait_helper(pid);
}

/* "LSTCHG:" ("-1" or a day number in [0, HS_DAYS_MAX]), then an aging
 * line (records.h: five such days) with an empty FLAG, and a newline.
 * Nothing is written unless all of it parses. */
static int parse_account(char *answer, long *lstchg, struct hs_aging *aging)
{
	size_t len = strlen(answer);
	char *rest = strchr(answer, ':');
	unsigned long day = 0;
	struct hs_aging a;

	if (len == 0 || answer[len - 1] != '\n' || !rest)
		return -HS_E_FORMAT;
	answer[len - 1] = '\0';
	*rest++ = '\0';
	if (strcmp(answer, "-1") != 0 &&
	    hs_parse_ulong(answer, 0, (unsigned long)HS_DAYS_MAX, &day) < 0)
		return -HS_E_FORMAT;
	if (hs_records_aging_parse(rest, &a) < 0 || a.flag[0] != '\0')
		return -HS_E_FORMAT;
	*lstchg = strcmp(answer, "-1") == 0 ? HS_UNSET : (long)day;
	*aging = a;
	return 0;
}

int hs_pwhelper_account(const char *user, long *lstchg, struct hs_aging *aging)
{
	char answer[ACCOUNT_ANSWER_MAX + 2], sink[256];
	int pfd[2];
	ssize_t len;
	pid_t pid;
	int r;

	if (!user || !lstchg || !aging || !hs_names_user_valid(user))
		return HS_PWHELPER_REFUSED;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return HS_PWHELPER_ERROR;
	pid = spawn_helper("account", user, pfd, STDOUT_FILENO);
	if (pid < 0)
		return HS_PWHELPER_ERROR;
	/* read to EOF: a byte past ACCOUNT_ANSWER_MAX says the answer is too
	 * long, and the rest is drained, not cut off */
	len = hs_read_full(pfd[0], answer, ACCOUNT_ANSWER_MAX + 1);
	while (len > ACCOUNT_ANSWER_MAX && hs_read_full(pfd[0], sink, sizeof sink) > 0)
		;
	hs_close(pfd[0]);
	r = wait_helper(pid);
	if (r != HS_PWHELPER_OK)
		return r;
	if (len < 0 || len > ACCOUNT_ANSWER_MAX)
		return HS_PWHELPER_ERROR;
	answer[len] = '\0';
	if (memchr(answer, '\0', (size_t)len) || parse_account(answer, lstchg, aging) < 0)
		return HS_PWHELPER_ERROR;
	return HS_PWHELPER_OK;
}
