/* Unit tests for lib/base/names.c: shadow-utils name rules. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "names.h"

static const char *const good_names[] = {
	"a", "A", "_", "root", "alice", "Bob", "_apt", "systemd-network",
	"user.name", "a1", "a-", "a.", "a_b-c.d", "host$", "_$", "x.y$",
	"abcdefghijklmnopqrstuvwxyzABCDEF",   /* 32 bytes */
	"abcdefghijklmnopqrstuvwxyzABCDE$",   /* 32 bytes with '$' */
};

static const char *const bad_names[] = {
	"", ".", "..", "-", "-x", "-root", ".hidden", "1abc", "0", "123",
	"a/b", "/", "../etc", "a b", " a", "a ", "a:b", "a,b", "a\nb", "a\tb",
	"a\x7f", "\x7f", "a\x01", "$", "$a", "a$b", "a$$", "a$.", "é", "aé",
	"a\xff", "a@b", "a+b", "a*", "a?", "a\\b", "a'b", "a\"b", "a;b",
	"abcdefghijklmnopqrstuvwxyzABCDEFG",  /* 33 bytes */
	"abcdefghijklmnopqrstuvwxyzABCDEF$",  /* 33 bytes with '$' */
};

static void test_valid_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof good_names / sizeof good_names[0]; i++) {
		if (!hs_names_user_valid(good_names[i]))
			fail_msg("user name \"%s\" rejected", good_names[i]);
		if (!hs_names_group_valid(good_names[i]))
			fail_msg("group name \"%s\" rejected", good_names[i]);
	}
}

static void test_invalid_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
		if (hs_names_user_valid(bad_names[i]))
			fail_msg("user name \"%s\" accepted", bad_names[i]);
		if (hs_names_group_valid(bad_names[i]))
			fail_msg("group name \"%s\" accepted", bad_names[i]);
	}
	assert_false(hs_names_user_valid(NULL));
	assert_false(hs_names_group_valid(NULL));
}

static void test_length_boundary(void **state)
{
	(void)state;
	char buf[200];
	for (size_t len = 1; len < sizeof buf - 1; len++) {
		memset(buf, 'a', len);
		buf[len] = '\0';
		assert_int_equal(hs_names_user_valid(buf), len <= HS_NAME_MAX);
		assert_int_equal(hs_names_group_valid(buf), len <= HS_NAME_MAX);
	}
}

/* Every single byte in the first and in a later position. */
static void test_every_byte(void **state)
{
	(void)state;
	for (int c = 1; c < 256; c++) {
		bool first_ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		bool later_ok = first_ok || (c >= '0' && c <= '9') || c == '.' || c == '-';
		char first[2] = { (char)c, 0 };
		char mid[4] = { 'a', (char)c, 'b', 0 };
		char last[3] = { 'a', (char)c, 0 };

		assert_int_equal(hs_names_user_valid(first), first_ok);
		assert_int_equal(hs_names_user_valid(mid), later_ok);
		assert_int_equal(hs_names_user_valid(last), later_ok || c == '$');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_names),
		cmocka_unit_test(test_invalid_names),
		cmocka_unit_test(test_length_boundary),
		cmocka_unit_test(test_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
