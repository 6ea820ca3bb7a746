/* Unit tests for lib/base/util.c: error phrases, strict number parsing,
 * random names, full reads/writes, wiping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "strbuf.h"
#include "util.h"

static void test_strerror_project_codes(void **state)
{
	(void)state;
	assert_string_equal(hs_strerror(-HS_E_SYMLINK), "is a symbolic link");
	assert_string_equal(hs_strerror(-HS_E_NOTREG), "is not a regular file");
	assert_string_equal(hs_strerror(-HS_E_NLINK), "has a link count other than 1");
	assert_string_equal(hs_strerror(-HS_E_OWNER), "has the wrong owner");
	assert_string_equal(hs_strerror(-HS_E_NOTDIR), "is not a directory");
	assert_string_equal(hs_strerror(-HS_E_TIMEOUT), "timed out");

	/* every code has its own, non-empty phrase */
	for (int a = HS_E_BASE + 1; a < HS_E_LAST; a++) {
		const char *pa = hs_strerror(-a);
		assert_non_null(pa);
		assert_true(strlen(pa) > 3);
		assert_null(strstr(pa, "nknown error"));
		for (int b = a + 1; b < HS_E_LAST; b++)
			assert_string_not_equal(pa, hs_strerror(-b));
	}
}

static void test_strerror_errno(void **state)
{
	(void)state;
	assert_string_equal(hs_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(hs_strerror(-EACCES), strerror(EACCES));
	assert_string_equal(hs_strerror(-ENOMEM), strerror(ENOMEM));
	/* out-of-range values still give some phrase, never NULL */
	assert_non_null(hs_strerror(-HS_E_LAST));
	assert_non_null(hs_strerror(-HS_E_BASE));
	assert_non_null(hs_strerror(INT_MIN + 1));
	assert_non_null(hs_strerror(INT_MIN));
	assert_non_null(hs_strerror(0));
}

struct num_case {
	const char *s;
	unsigned long min, max;
	int expect;            /* 0, -HS_E_FORMAT, -HS_E_RANGE */
	unsigned long value;
};

/* Lock errors keep the "timed out after 15 s" form, whatever the unit of
 * the deadline; a deadline that is not whole seconds says so. */
static void test_lock_strerror(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(hs_lock_strerror(-HS_E_TIMEOUT, 15000, buf, sizeof(buf)),
			    "timed out after 15 s");
	assert_string_equal(hs_lock_strerror(-HS_E_TIMEOUT, 200, buf, sizeof(buf)),
			    "timed out after 200 ms");
	assert_string_equal(hs_lock_strerror(-HS_E_TIMEOUT, 0, buf, sizeof(buf)),
			    "timed out after 0 s");
	assert_string_equal(hs_lock_strerror(-EACCES, 15000, buf, sizeof(buf)),
			    hs_strerror(-EACCES));
	assert_string_equal(hs_lock_strerror(-HS_E_SYMLINK, 15000, buf, sizeof(buf)),
			    "is a symbolic link");
	/* a short buffer is cut, never overrun */
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	assert_int_equal(strlen(hs_lock_strerror(-HS_E_TIMEOUT, 15000, tiny, sizeof(tiny))), 7);
}

static void test_timespec_add_ms(void **state)
{
	struct timespec t = { .tv_sec = 10, .tv_nsec = 999999999L };

	(void)state;
	hs_timespec_add_ms(&t, 1);
	assert_int_equal(t.tv_sec, 11);
	assert_int_equal(t.tv_nsec, 999999L);
	hs_timespec_add_ms(&t, 15000);
	assert_int_equal(t.tv_sec, 26);
	assert_int_equal(t.tv_nsec, 999999L);
	hs_timespec_add_ms(&t, 999);
	assert_int_equal(t.tv_sec, 26);
	assert_int_equal(t.tv_nsec, 999999999L);
	hs_timespec_add_ms(&t, 2);
	assert_int_equal(t.tv_sec, 27);
	assert_int_equal(t.tv_nsec, 1999999L);
	hs_timespec_add_ms(&t, 0);
	assert_int_equal(t.tv_sec, 27);
}

static void test_parse_ulong(void **state)
{
	(void)state;
	static const struct num_case cases[] = {
		{ "0", 0, 10, 0, 0 },
		{ "7", 0, 10, 0, 7 },
		{ "10", 0, 10, 0, 10 },
		{ "11", 0, 10, -HS_E_RANGE, 0 },
		{ "0", 1, 10, -HS_E_RANGE, 0 },
		{ "4294967294", 0, 4294967294UL, 0, 4294967294UL },
		{ "4294967295", 0, 4294967294UL, -HS_E_RANGE, 0 },
		{ "18446744073709551615", 0, ULONG_MAX, 0, ULONG_MAX },
		{ "18446744073709551616", 0, ULONG_MAX, -HS_E_RANGE, 0 },
		{ "99999999999999999999", 0, ULONG_MAX, -HS_E_RANGE, 0 },
		{ "999999999999999999999999999999", 0, ULONG_MAX, -HS_E_RANGE, 0 },
		{ "", 0, 10, -HS_E_FORMAT, 0 },
		{ "+1", 0, 10, -HS_E_FORMAT, 0 },
		{ "-1", 0, 10, -HS_E_FORMAT, 0 },
		{ "-0", 0, 10, -HS_E_FORMAT, 0 },
		{ " 1", 0, 10, -HS_E_FORMAT, 0 },
		{ "1 ", 0, 10, -HS_E_FORMAT, 0 },
		{ "1\n", 0, 10, -HS_E_FORMAT, 0 },
		{ "\t1", 0, 10, -HS_E_FORMAT, 0 },
		{ "01", 0, 10, -HS_E_FORMAT, 0 },
		{ "00", 0, 10, -HS_E_FORMAT, 0 },
		{ "007", 0, 10, -HS_E_FORMAT, 0 },
		{ "0x1", 0, 10, -HS_E_FORMAT, 0 },
		{ "0X1", 0, 10, -HS_E_FORMAT, 0 },
		{ "1a", 0, 100, -HS_E_FORMAT, 0 },
		{ "a", 0, 100, -HS_E_FORMAT, 0 },
		{ "1.0", 0, 100, -HS_E_FORMAT, 0 },
		{ "1e3", 0, 10000, -HS_E_FORMAT, 0 },
		/* overflow digits followed by junk: still rejected */
		{ "99999999999999999999x", 0, ULONG_MAX, -HS_E_FORMAT, 0 },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		unsigned long v = 12345;
		int r = hs_parse_ulong(cases[i].s, cases[i].min, cases[i].max, &v);
		if (r != cases[i].expect)
			fail_msg("hs_parse_ulong(\"%s\") = %d, want %d", cases[i].s, r,
				 cases[i].expect);
		if (r == 0)
			assert_int_equal(v, cases[i].value);
		else
			assert_int_equal(v, 12345);  /* untouched on error */
	}
	unsigned long v;
	assert_int_equal(hs_parse_ulong(NULL, 0, 10, &v), -HS_E_FORMAT);
}

static void test_random_alnum(void **state)
{
	(void)state;
	char a[65], b[65];
	int seen[256] = { 0 };

	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	assert_int_equal(hs_random_alnum(a, 64), 0);
	assert_int_equal(hs_random_alnum(b, 64), 0);
	assert_int_equal(strlen(a), 64);
	assert_string_not_equal(a, b);

	char big[4096];
	assert_int_equal(hs_random_alnum(big, sizeof big), 0);
	for (size_t i = 0; i < sizeof big; i++) {
		unsigned char c = (unsigned char)big[i];
		assert_true((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9'));
		seen[c]++;
	}
	/* 4096 draws over 62 symbols: every symbol appears (p(miss) ~ 1e-26) */
	int distinct = 0;
	for (int c = 0; c < 256; c++)
		distinct += seen[c] > 0;
	assert_int_equal(distinct, 62);

	/* n = 0 writes nothing */
	char one[1] = { '#' };
	assert_int_equal(hs_random_alnum(one, 0), 0);
	assert_int_equal(one[0], '#');
}

static void test_today(void **state)
{
	(void)state;
	long t = hs_today();
	long expect = (long)(time(NULL) / 86400);
	assert_true(t == expect || t == expect - 1);
	assert_true(t > 19000);  /* after 2022 */
}

static void test_read_write_full(void **state)
{
	(void)state;
	int p[2];
	char buf[100000];
	char in[100000];

	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (char)(i * 7);
	assert_int_equal(pipe(p), 0);

	/* the pipe holds less than 100000 bytes: the writer must loop over
	 * short writes while we read in a forked child */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(hs_write_full(p[1], buf, sizeof buf) == 0 ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = hs_read_full(p[0], in, sizeof in);
	assert_int_equal(n, sizeof in);
	assert_memory_equal(in, buf, sizeof buf);
	/* EOF: short count, then 0 */
	assert_int_equal(hs_read_full(p[0], in, 10), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[0]);

	/* errors come back as -errno */
	assert_int_equal(hs_read_full(-1, in, 10), -EBADF);
	assert_int_equal(hs_write_full(-1, buf, 10), -EBADF);

	/* writing to a pipe without readers: -EPIPE (SIGPIPE ignored) */
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	assert_int_equal(hs_write_full(p[1], "x", 1), -EPIPE);
	signal(SIGPIPE, old);
	close(p[1]);
}

static void test_close_keeps_errno(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	errno = EXDEV;
	hs_close(fd);
	assert_int_equal(errno, EXDEV);
	errno = ENOSPC;
	hs_close(-1);
	assert_int_equal(errno, ENOSPC);
	/* fd really closed */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
}

static void test_wipe(void **state)
{
	(void)state;
	char buf[16];
	memcpy(buf, "secretsecret123", 16);
	hs_wipe(buf, sizeof buf);
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], 0);
	hs_wipe(NULL, 10);
	hs_free_secret(NULL);
	hs_free_secret(strdup("hunter2"));  /* ASan checks the free */

	/* empty or held, the buffers end empty (ASan checks the frees) */
	struct hs_secret_buf none = { NULL, 8 }, held = { strdup("hunter2"), 8 };
	struct hs_buf sb = { 0 };

	hs_secret_buf_freep(&none);
	assert_null(none.p);
	assert_non_null(held.p);
	hs_secret_buf_freep(&held);
	assert_null(held.p);
	hs_strbuf_free(&sb);
	assert_int_equal(hs_strbuf_append(&sb, "x", 1), 0);
	hs_strbuf_free(&sb);
	assert_null(sb.data);
	assert_int_equal(sb.cap, 0);
}

static void test_cleanup_macros(void **state)
{
	(void)state;
	int fd;
	{
		_cleanup_close_ int f = open("/dev/null", O_RDONLY | O_CLOEXEC);
		_cleanup_free_ char *p = strdup("x");
		_cleanup_secret_ char *s = strdup("pw");
		fd = f;
		assert_true(f >= 0);
		assert_non_null(p);
		assert_non_null(s);
	}
	assert_int_equal(fcntl(fd, F_GETFD), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror_project_codes),
		cmocka_unit_test(test_strerror_errno),
		cmocka_unit_test(test_lock_strerror),
		cmocka_unit_test(test_timespec_add_ms),
		cmocka_unit_test(test_parse_ulong),
		cmocka_unit_test(test_random_alnum),
		cmocka_unit_test(test_today),
		cmocka_unit_test(test_read_write_full),
		cmocka_unit_test(test_close_keeps_errno),
		cmocka_unit_test(test_wipe),
		cmocka_unit_test(test_cleanup_macros),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
