/* Unit tests for the error context (struct hs_err, hs_report) and the
 * ownership macros TAKE_FD / TAKE_PTR of lib/base/util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

static void test_err_set_returns_code(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;

	assert_int_equal(e.code, 0);
	assert_int_equal(e.log_level, -1);
	assert_string_equal(e.msg, "");
	assert_int_equal(hs_err_set(&e, -ENOENT, "cannot open %s: %s", "/x",
	                            hs_strerror(-ENOENT)), -ENOENT);
	assert_int_equal(e.code, -ENOENT);
	assert_string_equal(e.msg, "cannot open /x: No such file or directory");
	assert_int_equal(e.log_level, -1);

	/* a second failure replaces the first, log level included */
	assert_int_equal(hs_err_setl(&e, -HS_E_TIMEOUT, 3, "late"), -HS_E_TIMEOUT);
	assert_int_equal(e.log_level, 3);
	assert_int_equal(hs_err_set(&e, -EIO, "io"), -EIO);
	assert_int_equal(e.log_level, -1);
	assert_string_equal(e.msg, "io");

	hs_err_clear(&e);
	assert_int_equal(e.code, 0);
	assert_string_equal(e.msg, "");

	/* NULL is allowed and keeps the code flowing */
	assert_int_equal(hs_err_set(NULL, -EPERM, "x %d", 1), -EPERM);
	assert_int_equal(hs_err_setl(NULL, -EPERM, 3, "x"), -EPERM);
	assert_int_equal(hs_err_add(NULL, "x"), 0);
	hs_err_clear(NULL);
}

static void test_err_set_keeps_errno(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;

	errno = EACCES;
	hs_err_set(&e, -EACCES, "%s", "x");
	assert_int_equal(errno, EACCES);
}

static void test_err_overlong_is_cut(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;
	char big[3 * HS_ERR_MSG_MAX];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	hs_err_set(&e, -E2BIG, "%s", big);
	assert_int_equal(strlen(e.msg), HS_ERR_MSG_MAX - 1);
	/* adding to a full message changes nothing and does not overflow */
	assert_int_equal(hs_err_add(&e, "more %s", big), -E2BIG);
	assert_int_equal(strlen(e.msg), HS_ERR_MSG_MAX - 1);
	assert_null(strchr(e.msg, '\n'));
}

static void test_err_add_lines(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;

	hs_err_add(&e, "first");
	assert_string_equal(e.msg, "first");
	hs_err_add(&e, "second %d", 2);
	assert_string_equal(e.msg, "first\nsecond 2");
}

/* Run hs_report in a child whose stderr is a pipe; return what it wrote. */
static void report_output(const struct hs_err *e, char *out, size_t size)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		hs_cli_set_prog("progname");
		hs_report(e);
		fflush(stderr);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = hs_read_full(p[0], out, size - 1);
	assert_true(n >= 0);
	out[n] = '\0';
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_report_prefixes_each_line(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;
	char out[4096];

	report_output(&e, out, sizeof out);
	assert_string_equal(out, "");

	hs_err_set(&e, -ENOENT, "user '%s' does not exist", "bob");
	report_output(&e, out, sizeof out);
	assert_string_equal(out, "progname: user 'bob' does not exist\n");

	hs_err_add(&e, "second line");
	report_output(&e, out, sizeof out);
	assert_string_equal(out, "progname: user 'bob' does not exist\n"
	                         "progname: second line\n");
	/* a quoted argument cannot add a line of its own or drive the
	 * terminal: its control bytes show as \xNN */
	hs_err_set(&e, -EINVAL, "invalid name '%s'", "a\tb\x1b[2J\x7f");
	report_output(&e, out, sizeof out);
	assert_string_equal(out, "progname: invalid name 'a\\x09b\\x1b[2J\\x7f'\n");
}

/* Each message goes out in one write: stderr is unbuffered, and a line
 * written a byte at a time is torn apart by another writer of the same
 * terminal or log (tools run in parallel, a child's output).  A datagram
 * socket as stderr keeps each write(2) as one datagram. */
static void test_message_is_one_write(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;
	char out[256];
	int sv[2], st;

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	hs_err_set(&e, -EINVAL, "first\nsecond \x1b");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(sv[1], STDERR_FILENO);
		hs_cli_set_prog("progname");
		hs_warn("bad name '%s'", "a\tb");
		hs_report(&e);
		hs_cli_warn_at(NULL, "/etc/x", 7, "odd\x7f");
		_exit(0);
	}
	close(sv[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	static const char *const want[] = {
		"progname: bad name 'a\\x09b'\n",
		"progname: first\n",
		"progname: second \\x1b\n",
		"progname: /etc/x:7: odd\\x7f\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		ssize_t n = recv(sv[0], out, sizeof out - 1, MSG_DONTWAIT);

		assert_true(n > 0);
		out[n] = '\0';
		assert_string_equal(out, want[i]);
	}
	assert_true(recv(sv[0], out, sizeof out, MSG_DONTWAIT) < 0);
	close(sv[0]);
}

static void test_report_die_status(void **state)
{
	(void)state;
	struct hs_err e = HS_ERR_INIT;
	hs_err_set(&e, -EIO, "gone");

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, STDERR_FILENO);
		hs_report_die(42, &e);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 42);
}

/* TAKE_FD hands the descriptor out and leaves -1, so the cleanup on the
 * way out does not close what the caller now owns. */
static int open_owned(const char *path, int fail)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fail)
		return -EINVAL;   /* fd closed by the cleanup */
	return TAKE_FD(fd);
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_take_fd(void **state)
{
	(void)state;
	int fd = open_owned("/dev/null", 0);

	assert_true(fd >= 0);
	assert_true(fd_is_open(fd));
	close(fd);

	/* the failure path closed it: the next open reuses the same number */
	int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(probe >= 0);
	close(probe);
	assert_int_equal(open_owned("/dev/null", 1), -EINVAL);
	assert_false(fd_is_open(probe));

	int x = 7;
	int y = TAKE_FD(x);
	assert_int_equal(y, 7);
	assert_int_equal(x, -1);
	assert_int_equal(open_owned("/nonexistent/hs-test", 0), -ENOENT);
}

static char *dup_owned(const char *s, int fail)
{
	_cleanup_free_ char *p = strdup(s);

	if (!p || fail)
		return NULL;
	return TAKE_PTR(p);
}

static void test_take_ptr(void **state)
{
	(void)state;
	char *p = dup_owned("hello", 0);

	assert_non_null(p);
	assert_string_equal(p, "hello");   /* still alive: not freed */
	free(p);
	assert_null(dup_owned("hello", 1));

	const char *c = "x";
	const char *d = TAKE_PTR(c);
	assert_null(c);
	assert_string_equal(d, "x");
}

static void test_cleanup_fclose_closedir(void **state)
{
	(void)state;
	int fdn;
	{
		_cleanup_fclose_ FILE *f = fopen("/dev/null", "re");
		assert_non_null(f);
		fdn = fileno(f);
		assert_true(fd_is_open(fdn));
		errno = ENOSPC;
	}
	assert_int_equal(errno, ENOSPC);   /* the cleanup keeps errno */
	assert_false(fd_is_open(fdn));
	{
		_cleanup_fclose_ FILE *none = NULL;   /* NULL is fine */
		_cleanup_closedir_ DIR *nod = NULL;
		(void)none;
		(void)nod;
	}
	{
		_cleanup_closedir_ DIR *d = opendir("/");
		assert_non_null(d);
		fdn = dirfd(d);
		assert_true(fd_is_open(fdn));
	}
	assert_false(fd_is_open(fdn));
	{
		_cleanup_closedir_ DIR *d = opendir("/");
		DIR *kept = TAKE_PTR(d);
		assert_null(d);
		fdn = dirfd(kept);
		(void)fdn;
		assert_int_equal(closedir(kept), 0);
	}
}

static void test_cleanup_secret_wipes(void **state)
{
	(void)state;
	char *out;
	{
		_cleanup_secret_ char *s = strdup("hunter2");
		assert_non_null(s);
		out = TAKE_PTR(s);
	}
	/* taken: not wiped, not freed */
	assert_string_equal(out, "hunter2");
	hs_free_secret(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_set_returns_code),
		cmocka_unit_test(test_err_set_keeps_errno),
		cmocka_unit_test(test_err_overlong_is_cut),
		cmocka_unit_test(test_err_add_lines),
		cmocka_unit_test(test_report_prefixes_each_line),
		cmocka_unit_test(test_message_is_one_write),
		cmocka_unit_test(test_report_die_status),
		cmocka_unit_test(test_take_fd),
		cmocka_unit_test(test_take_ptr),
		cmocka_unit_test(test_cleanup_fclose_closedir),
		cmocka_unit_test(test_cleanup_secret_wipes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
