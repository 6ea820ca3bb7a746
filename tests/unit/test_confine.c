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

/* hs_confine_paths, as the setid and root tools use it: a directory the
 * rules give for writing (a user's directory, a home), a home that is a
 * symlink (NOFOLLOW), a parent where directories may only be made and
 * removed; the base reads /etc.  What a subverted tool would try is
 * refused by the kernel. */
enum tool_probe {
	T_WRITE_INSIDE, T_CREATE_INSIDE, T_REMOVE_INSIDE, T_READ_ETC, T_WRITE_ETC, T_READ_OUTSIDE,
	T_WRITE_OUTSIDE, T_WRITE_VIA_SYMLINK, T_WRITE_VIA_LINKED_HOME, T_MKDIR_PARENT,
	T_RMDIR_PARENT, T_CREATE_PARENT, T_READ_BIN, T_READ_LOADER, T_RUN_ALLOWED, T_EXEC,
	N_TOOL_PROBES
};

/* the program loader, by the name the kernel uses to run a program */
#if defined(__x86_64__)
#define HS_TEST_LOADER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define HS_TEST_LOADER "/lib/ld-linux-aarch64.so.1"
#else
#define HS_TEST_LOADER "/lib/ld-linux.so.2"
#endif

/* path run in a child: its exit status, or -1 */
static int run_status(const char *path)
{
	char *const argv[] = { (char *)path, NULL };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		execve(path, argv, argv + 1);
		_exit(126);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int try_create_remove(const char *path)
{
	int r = try_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL);

	if (r == 0 && unlink(path) < 0)
		r = errno;
	return r;
}

static void tool_probes(const char *parent, int got[N_TOOL_PROBES])
{
	char home[100], linked[100], via[120], path[160];
	char *const argv[] = { (char *)"false", NULL };

	snprintf(home, sizeof home, "%s/home", parent);
	snprintf(linked, sizeof linked, "%s/linked", parent);
	snprintf(via, sizeof via, "%s/escape", home);
	{
		const struct hs_confine_rule rules[] = {
			{ home, HS_CONFINE_WRITE | HS_CONFINE_NOFOLLOW },
			{ linked, HS_CONFINE_WRITE | HS_CONFINE_NOFOLLOW },
			{ parent, HS_CONFINE_ENTRIES },
			{ "/nonexistent/skipped", HS_CONFINE_WRITE },
			/* a program a rule lets it run (nscd, say): it and its
			 * loader, through whatever link leads there */
			{ "/usr/bin/true", HS_CONFINE_EXEC | HS_CONFINE_FILE },
		};
		int r = hs_confine_paths(rules, sizeof rules / sizeof rules[0]);

		got[N_TOOL_PROBES] = r;
		if (r < 0)
			return;
	}
	snprintf(path, sizeof path, "%s/file", home);
	got[T_WRITE_INSIDE] = try_open(AT_FDCWD, path, O_WRONLY | O_TRUNC);
	snprintf(path, sizeof path, "%s/new", home);
	got[T_CREATE_INSIDE] = try_create_remove(path);
	snprintf(path, sizeof path, "%s/file", home);
	got[T_REMOVE_INSIDE] = unlink(path) < 0 ? errno : 0;
	got[T_READ_ETC] = try_open(AT_FDCWD, "/etc/passwd", O_RDONLY);
	got[T_WRITE_ETC] = try_open(AT_FDCWD, "/etc/passwd", O_WRONLY | O_APPEND);
	got[T_READ_OUTSIDE] = try_open(AT_FDCWD, outside, O_RDONLY);
	got[T_WRITE_OUTSIDE] = try_open(AT_FDCWD, outside, O_WRONLY);
	/* a symlink planted in the home, to a file outside the rules */
	got[T_WRITE_VIA_SYMLINK] = try_open(AT_FDCWD, via, O_WRONLY);
	/* a home that is itself a symlink (to the outside file's directory) */
	/* a name nothing else in that directory (/tmp) has: O_EXCL on an
	 * existing /tmp/x (a checkout, say) fails before Landlock is asked */
	snprintf(path, sizeof path, "%s/hs-confine-probe-%ld", linked, (long)getpid());
	got[T_WRITE_VIA_LINKED_HOME] = try_create_remove(path);
	snprintf(path, sizeof path, "%s/newhome", parent);
	got[T_MKDIR_PARENT] = mkdir(path, 0700) < 0 ? errno : 0;
	got[T_RMDIR_PARENT] = rmdir(path) < 0 ? errno : 0;
	snprintf(path, sizeof path, "%s/file", parent);
	got[T_CREATE_PARENT] = try_create_remove(path);
	/* through the top-level names, which merged /usr makes symlinks that
	 * need no rules of their own */
	got[T_READ_BIN] = try_open(AT_FDCWD, "/bin/sh", O_RDONLY);
	got[T_READ_LOADER] = try_open(AT_FDCWD, HS_TEST_LOADER, O_RDONLY);
	got[T_RUN_ALLOWED] = run_status("/bin/true");
	/* any other program is refused */
	execve("/bin/false", argv, argv + 1);
	got[T_EXEC] = errno;
}

static void test_tool_confinement_is_enforced_by_the_kernel(void **state)
{
	char parent[] = "/tmp/hs-confine-tool-XXXXXX";
	char path[400], target[400];
	int got[N_TOOL_PROBES + 1];
	int pfd[2], status, fd;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(parent));
	snprintf(path, sizeof path, "%s/home", parent);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/home/file", parent);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof path, "%s/home/escape", parent);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(path, sizeof path, "%s/linked", parent);
	snprintf(target, sizeof target, "%s", outside);
	*strrchr(target, '/') = '\0';
	assert_int_equal(symlink(target, path), 0);

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		memset(got, 0, sizeof got);
		tool_probes(parent, got);
		(void)!write(pfd[1], got, sizeof got);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], got, sizeof got);
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	snprintf(path, sizeof path, "%s/home/escape", parent);
	unlink(path);
	snprintf(path, sizeof path, "%s/home/file", parent);
	unlink(path);
	snprintf(path, sizeof path, "%s/home", parent);
	rmdir(path);
	snprintf(path, sizeof path, "%s/linked", parent);
	unlink(path);
	rmdir(parent);
	assert_int_equal(n, (ssize_t)sizeof got);
	if (got[N_TOOL_PROBES] == -ENOSYS)
		skip();
	assert_int_equal(got[N_TOOL_PROBES], 0);
	/* the job: the home's files, reading /etc, making and removing the
	 * home itself in its parent */
	assert_int_equal(got[T_WRITE_INSIDE], 0);
	assert_int_equal(got[T_CREATE_INSIDE], 0);
	assert_int_equal(got[T_REMOVE_INSIDE], 0);
	assert_int_equal(got[T_READ_ETC], 0);
	assert_int_equal(got[T_MKDIR_PARENT], 0);
	assert_int_equal(got[T_RMDIR_PARENT], 0);
	assert_int_equal(got[T_READ_BIN], 0);
	assert_int_equal(got[T_READ_LOADER], 0);
	assert_int_equal(got[T_RUN_ALLOWED], 0);
	/* and nothing else, whatever path leads there */
	assert_int_equal(got[T_WRITE_ETC], EACCES);
	assert_int_equal(got[T_READ_OUTSIDE], EACCES);
	assert_int_equal(got[T_WRITE_OUTSIDE], EACCES);
	assert_int_equal(got[T_WRITE_VIA_SYMLINK], EACCES);
	assert_int_equal(got[T_WRITE_VIA_LINKED_HOME], EACCES);
	assert_int_equal(got[T_CREATE_PARENT], EACCES);
	assert_int_equal(got[T_EXEC], EACCES);
}

/* With no program to run (no nscd, no sss_cache, no caller's rule that
 * runs one), the base rules leave out the right to run the loader; the
 * libraries may still be read (dlopen: libselinux, NSS and PAM modules). */
static void test_nothing_to_run_means_no_loader(void **state)
{
	bool helper = access("/usr/sbin/nscd", F_OK) == 0 || access("/usr/sbin/sss_cache", F_OK) == 0;
	int got[4], pfd[2], status;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		const struct hs_confine_rule rules[] = { { dir, HS_CONFINE_WRITE } };

		got[0] = hs_confine_paths(rules, 1);
		if (got[0] == 0) {
			got[1] = try_open(AT_FDCWD, HS_TEST_LOADER, O_RDONLY);
			got[2] = try_open(AT_FDCWD, "/usr/lib", O_RDONLY | O_DIRECTORY);
			/* the loader runs programs by itself: refused, as
			 * its child's execve (exit 126) */
			got[3] = run_status(HS_TEST_LOADER);
		}
		(void)!write(pfd[1], got, sizeof got);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], got, sizeof got);
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(n, (ssize_t)sizeof got);
	if (got[0] == -ENOSYS)
		skip();
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 0);
	if (helper)
		assert_int_not_equal(got[3], 126);
	else
		assert_int_equal(got[3], 126);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helper_confinement_is_enforced_by_the_kernel),
		cmocka_unit_test(test_syscall_allow_list),
		cmocka_unit_test(test_tool_confinement_is_enforced_by_the_kernel),
		cmocka_unit_test(test_nothing_to_run_means_no_loader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
