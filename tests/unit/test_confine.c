/* Unit tests for lib/base/confine.c: the helpers' confinement, enforced by
 * the running kernel.  Each case confines a child process exactly as the
 * setgid helpers confine themselves (hs_confine_helper) and then tries
 * what a subverted helper would: open files elsewhere, write in its own
 * directory, run a program, open a network socket.  The kernel, not our
 * code, must refuse.  Skips when the kernel has neither Landlock nor
 * seccomp (the helpers then run unconfined, as documented). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"

static char dir[] = "/tmp/hs-confine-XXXXXX";
static char outside[] = "/tmp/hs-confine-out-XXXXXX";

static int setup(void **state)
{
	char path[256];
	int fd;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/shadow", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "hash:1:\n", 8) != 8)
		return -1;
	close(fd);
	fd = mkstemp(outside);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	char path[256];

	(void)state;
	snprintf(path, sizeof path, "%s/shadow", dir);
	unlink(path);
	rmdir(dir);
	unlink(outside);
	return 0;
}

/* What a probe in the confined child found: its errno (0 = allowed). */
enum probe {
	READ_INSIDE, READ_OUTSIDE, READ_ETC, WRITE_INSIDE, CREATE_INSIDE, EXEC, INET_SOCKET,
	READ_PARENT_VIA_DOTDOT, N_PROBES
};

static int try_open(int at, const char *path, int flags)
{
	int fd = openat(at, path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Fork, confine, probe; the results come back through a pipe.  Returns
 * -1 if the kernel has no confinement at all (the test then skips). */
static int run_probes(int results[N_PROBES])
{
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -2;
	pid = fork();
	if (pid == 0) {
		int got[N_PROBES + 1] = { 0 };
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int r = dfd < 0 ? -errno : hs_confine_helper(dfd);

		got[N_PROBES] = r;
		if (r == 0) {
			char *const argv[] = { (char *)"true", NULL };
			int s;

			got[READ_INSIDE] = try_open(dfd, "shadow", O_RDONLY);
			got[READ_OUTSIDE] = try_open(AT_FDCWD, outside, O_RDONLY);
			got[READ_ETC] = try_open(AT_FDCWD, "/etc/passwd", O_RDONLY);
			got[WRITE_INSIDE] = try_open(dfd, "shadow", O_WRONLY);
			got[CREATE_INSIDE] = try_open(dfd, "planted", O_WRONLY | O_CREAT | O_EXCL);
			got[READ_PARENT_VIA_DOTDOT] = try_open(dfd, "../", O_RDONLY | O_DIRECTORY);
			s = socket(AF_INET, SOCK_STREAM, 0);
			got[INET_SOCKET] = s < 0 ? errno : 0;
			execve("/bin/true", argv, argv + 1);
			got[EXEC] = errno;
		}
		if (write(pfd[1], got, sizeof got) != (ssize_t)sizeof got)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	{
		int got[N_PROBES + 1];
		ssize_t n = read(pfd[0], got, sizeof got);

		close(pfd[0]);
		waitpid(pid, &status, 0);
		if (n != (ssize_t)sizeof got)
			return -2;
		if (got[N_PROBES] == -ENOSYS)
			return -1;
		if (got[N_PROBES] != 0) {
			fprintf(stderr, "hs_confine_helper: %s\n", strerror(-got[N_PROBES]));
			return -2;
		}
		memcpy(results, got, sizeof(int) * N_PROBES);
	}
	return 0;
}

static void test_helper_confinement_is_enforced_by_the_kernel(void **state)
{
	int got[N_PROBES] = { 0 };
	int r;

	(void)state;
	r = run_probes(got);
	if (r == -1)
		skip();
	assert_int_equal(r, 0);
	/* its own directory stays readable: the helper's job */
	assert_int_equal(got[READ_INSIDE], 0);
	/* Landlock: nothing else opens, not even world-readable files */
	assert_int_equal(got[READ_OUTSIDE], EACCES);
	assert_int_equal(got[READ_ETC], EACCES);
	assert_int_equal(got[READ_PARENT_VIA_DOTDOT], EACCES);
	/* and nothing in its own directory may be written or created */
	assert_int_equal(got[WRITE_INSIDE], EACCES);
	assert_true(got[CREATE_INSIDE] == EACCES || got[CREATE_INSIDE] == EPERM);
	/* seccomp: no network, no other program */
	assert_int_equal(got[INET_SOCKET], EPERM);
	assert_int_equal(got[EXEC], EPERM);
}

/* A call off the list fails with EPERM and leaves the process running. */
static void test_syscall_allow_list(void **state)
{
	int pfd[2], status;
	pid_t pid;

	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	/* the sanitizer's runtime needs calls (sigaltstack, mmap) this
	 * four-call list refuses, and then cannot even report it */
	skip();
#endif
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		static const long allowed[] = { SYS_write, SYS_exit_group, SYS_exit, SYS_getpid };
		int got[2];

		if (hs_confine_syscalls(allowed, sizeof allowed / sizeof allowed[0]) < 0)
			_exit(3);
		got[0] = syscall(SYS_getpid) > 0 ? 0 : errno;
		got[1] = syscall(SYS_getppid) >= 0 ? 0 : errno;
		(void)!write(pfd[1], got, sizeof got);
		_exit(0);
	}
	close(pfd[1]);
	{
		int got[2] = { -1, -1 };
		ssize_t n = read(pfd[0], got, sizeof got);

		close(pfd[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			skip();
		assert_int_equal(n, (ssize_t)sizeof got);
		assert_int_equal(got[0], 0);
		assert_int_equal(got[1], EPERM);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helper_confinement_is_enforced_by_the_kernel),
		cmocka_unit_test(test_syscall_allow_list),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
