/* Tests for lib/base/account.c: passwd and group lookups by name and id with a
 * buffer that grows.  They run on the host, whose passwd and group
 * databases always have root (uid and gid 0) and never the made-up names
 * below. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"

static void test_root_by_name(void **state)
{
	struct passwd pw;
	char *buf = (char *)1;

	(void)state;
	assert_int_equal(hs_account_getpwnam("root", &pw, &buf), 0);
	assert_non_null(buf);
	assert_string_equal(pw.pw_name, "root");
	assert_int_equal(pw.pw_uid, 0);
	assert_int_equal(pw.pw_gid, 0);
	/* the strings live in the buffer the caller frees */
	assert_true(pw.pw_name >= buf && pw.pw_dir >= buf && pw.pw_shell >= buf);
	assert_true(pw.pw_dir[0] == '/');
	free(buf);
}

static void test_root_by_uid(void **state)
{
	struct passwd pw;
	char *buf = NULL;

	(void)state;
	assert_int_equal(hs_account_getpwuid(0, &pw, &buf), 0);
	assert_non_null(buf);
	assert_string_equal(pw.pw_name, "root");
	assert_int_equal(pw.pw_uid, 0);
	free(buf);
}

static void test_missing_name(void **state)
{
	struct passwd pw;
	char *buf = (char *)1;

	(void)state;
	assert_int_equal(hs_account_getpwnam("hs-no-such-user-xq", &pw, &buf), -ENOENT);
	assert_null(buf);
	/* names that could never be in the database are simply not found */
	buf = (char *)1;
	assert_int_equal(hs_account_getpwnam("", &pw, &buf), -ENOENT);
	assert_null(buf);
}

static void test_missing_uid(void **state)
{
	struct passwd pw;
	char *buf = (char *)1;

	(void)state;
	/* (uid_t)-2: far outside any allocation range, not the reserved -1 */
	assert_int_equal(hs_account_getpwuid((uid_t)-2, &pw, &buf), -ENOENT);
	assert_null(buf);
}

static void test_bad_arguments(void **state)
{
	struct passwd pw;
	char *buf = (char *)1;

	(void)state;
	assert_int_equal(hs_account_getpwnam(NULL, &pw, &buf), -EINVAL);
	assert_null(buf);
	assert_int_equal(hs_account_getpwnam("root", NULL, &buf), -EINVAL);
	assert_int_equal(hs_account_getpwuid(0, &pw, NULL), -EINVAL);
}

/* Repeated lookups give independent buffers: one entry stays valid after
 * the next lookup (unlike getpwnam's static storage). */
static void test_independent_buffers(void **state)
{
	struct passwd a, b;
	char *abuf = NULL, *bbuf = NULL;

	(void)state;
	assert_int_equal(hs_account_getpwnam("root", &a, &abuf), 0);
	assert_int_equal(hs_account_getpwuid(0, &b, &bbuf), 0);
	assert_ptr_not_equal(abuf, bbuf);
	memset(bbuf, 'x', 4);
	assert_string_equal(a.pw_name, "root");
	free(abuf);
	free(bbuf);
}

static void test_group_lookups(void **state)
{
	struct group gr;
	char *buf = (char *)1, *buf2 = NULL;

	(void)state;
	assert_int_equal(hs_account_getgrnam("root", &gr, &buf), 0);
	assert_non_null(buf);
	assert_string_equal(gr.gr_name, "root");
	assert_int_equal(gr.gr_gid, 0);
	assert_true(gr.gr_name >= buf);
	assert_int_equal(hs_account_getgrgid(0, &gr, &buf2), 0);
	assert_ptr_not_equal(buf, buf2);
	assert_string_equal(gr.gr_name, "root");
	free(buf);
	free(buf2);

	buf = (char *)1;
	assert_int_equal(hs_account_getgrnam("hs-no-such-group-xq", &gr, &buf), -ENOENT);
	assert_null(buf);
	buf = (char *)1;
	assert_int_equal(hs_account_getgrgid((gid_t)-2, &gr, &buf), -ENOENT);
	assert_null(buf);
	buf = (char *)1;
	assert_int_equal(hs_account_getgrnam(NULL, &gr, &buf), -EINVAL);
	assert_null(buf);
	assert_int_equal(hs_account_getgrgid(0, NULL, &buf), -EINVAL);
	assert_int_equal(hs_account_getgrgid(0, &gr, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_by_name),
		cmocka_unit_test(test_root_by_uid),
		cmocka_unit_test(test_missing_name),
		cmocka_unit_test(test_missing_uid),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_independent_buffers),
		cmocka_unit_test(test_group_lookups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
