/* Tests for lib/auth/policy.c: shadow(5) aging evaluated exactly as pam_unix's
 * check_shadow_expiry (order of the checks, strict comparisons, its
 * quirks), the minimum-age test, and strict YYYY-MM-DD dates. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "records.h"
#include "util.h"

#define TODAY 20000L   /* 2024-10-04 */

static struct hs_aging aging(long min, long max, long warn, long inact, long expire)
{
	struct hs_aging a = { .min = min, .max = max, .warn = warn, .inact = inact, .expire = expire };
	return a;
}

static enum hs_acct_state state(long lstchg, struct hs_aging a, long *left, bool *admin)
{
	return hs_policy_account_state(lstchg, &a, TODAY, left, admin);
}

static void test_expire_date(void **unused)
{
	long left;
	bool admin;

	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, TODAY), &left, &admin), HS_ACCT_EXPIRED);
	assert_int_equal(left, -1);
	assert_false(admin);
	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, TODAY - 1), NULL, NULL),
	                 HS_ACCT_EXPIRED);
	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, TODAY + 1), NULL, NULL), HS_ACCT_OK);
	/* expire 0 is "expired" for pam_unix (and the fail-closed marker is 1) */
	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, 0), NULL, NULL), HS_ACCT_EXPIRED);
	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, 1), NULL, NULL), HS_ACCT_EXPIRED);
	assert_int_equal(state(TODAY - 1, aging(-1, -1, -1, -1, -1), NULL, NULL), HS_ACCT_OK);
	/* account expiry wins over everything, including lstchg 0 */
	assert_int_equal(state(0, aging(-1, 10, 5, 3, TODAY), NULL, NULL), HS_ACCT_EXPIRED);
	/* no aging data at all fails closed */
	assert_int_equal(hs_policy_account_state(TODAY - 1, NULL, TODAY, NULL, NULL), HS_ACCT_EXPIRED);
}

static void test_forced_by_admin(void **unused)
{
	long left = 99;
	bool admin = false;

	assert_int_equal(state(0, aging(-1, -1, -1, -1, -1), &left, &admin), HS_ACCT_NEW_AUTHTOK_REQD);
	assert_int_equal(left, 0);
	assert_true(admin);
	/* lstchg 0 beats the inactive period */
	assert_int_equal(state(0, aging(-1, 10, 5, 0, -1), &left, &admin), HS_ACCT_NEW_AUTHTOK_REQD);
	assert_true(admin);
}

static void test_future_change(void **unused)
{
	long left;

	/* pam_unix logs and lets it pass, even with max and inact long gone */
	assert_int_equal(state(TODAY + 5, aging(-1, 1, 1, 0, -1), &left, NULL), HS_ACCT_OK);
	assert_int_equal(left, -1);
}

static void test_max_and_inactive(void **unused)
{
	long left;
	bool admin = true;

	/* since = 36 > max 30, > inact 5, > 35: expired for good */
	assert_int_equal(state(TODAY - 36, aging(-1, 30, 7, 5, -1), &left, &admin),
	                 HS_ACCT_AUTHTOK_EXPIRED);
	assert_int_equal(left, -6);
	/* since = 35: not beyond max + inact yet, only a forced change */
	assert_int_equal(state(TODAY - 35, aging(-1, 30, 7, 5, -1), &left, &admin),
	                 HS_ACCT_NEW_AUTHTOK_REQD);
	assert_false(admin);
	/* inact 0: expired as soon as max is exceeded */
	assert_int_equal(state(TODAY - 31, aging(-1, 30, -1, 0, -1), NULL, NULL),
	                 HS_ACCT_AUTHTOK_EXPIRED);
	assert_int_equal(state(TODAY - 30, aging(-1, 30, -1, 0, -1), NULL, NULL), HS_ACCT_OK);
	/* no inactive period: forced change however old */
	assert_int_equal(state(TODAY - 1000, aging(-1, 30, -1, -1, -1), NULL, NULL),
	                 HS_ACCT_NEW_AUTHTOK_REQD);
	/* pam_unix's "since > inact" test: an inactive period longer than
	 * the time since the change keeps it a forced change */
	assert_int_equal(state(TODAY - 40, aging(-1, 0, -1, 45, -1), NULL, NULL),
	                 HS_ACCT_NEW_AUTHTOK_REQD);
	/* no max: nothing ages */
	assert_int_equal(state(1, aging(-1, -1, 7, 0, -1), NULL, NULL), HS_ACCT_OK);
	/* unset lstchg counts as day -1, as pam_unix does with sp_lstchg -1 */
	assert_int_equal(state(HS_UNSET, aging(-1, 30, -1, -1, -1), NULL, NULL),
	                 HS_ACCT_NEW_AUTHTOK_REQD);
	assert_int_equal(state(HS_UNSET, aging(-1, 99999, 7, -1, -1), NULL, NULL), HS_ACCT_OK);
}

static void test_warning(void **unused)
{
	long left;

	/* max 30, warn 7: warn when since > 23 */
	assert_int_equal(state(TODAY - 23, aging(-1, 30, 7, -1, -1), &left, NULL), HS_ACCT_OK);
	assert_int_equal(left, -1);
	assert_int_equal(state(TODAY - 24, aging(-1, 30, 7, -1, -1), &left, NULL), HS_ACCT_WARN);
	assert_int_equal(left, 6);
	assert_int_equal(state(TODAY - 29, aging(-1, 30, 7, -1, -1), &left, NULL), HS_ACCT_WARN);
	assert_int_equal(left, 1);
	assert_int_equal(state(TODAY - 30, aging(-1, 30, 7, -1, -1), &left, NULL), HS_ACCT_WARN);
	assert_int_equal(left, 0);
	assert_int_equal(state(TODAY - 31, aging(-1, 30, 7, -1, -1), &left, NULL),
	                 HS_ACCT_NEW_AUTHTOK_REQD);
	/* no warn period: no warning */
	assert_int_equal(state(TODAY - 30, aging(-1, 30, -1, -1, -1), &left, NULL), HS_ACCT_OK);
	/* expiry within the warning period still wins */
	assert_int_equal(state(TODAY - 29, aging(-1, 30, 7, -1, TODAY), NULL, NULL), HS_ACCT_EXPIRED);
}

static void test_too_early(void **unused)
{
	struct hs_aging a = aging(5, 30, 7, -1, -1);

	assert_true(hs_policy_change_too_early(TODAY, &a, TODAY));
	assert_true(hs_policy_change_too_early(TODAY - 4, &a, TODAY));
	assert_false(hs_policy_change_too_early(TODAY - 5, &a, TODAY));
	assert_false(hs_policy_change_too_early(0, &a, TODAY));
	assert_false(hs_policy_change_too_early(HS_UNSET, &a, TODAY));
	assert_false(hs_policy_change_too_early(TODAY + 3, &a, TODAY));
	assert_false(hs_policy_change_too_early(TODAY, NULL, TODAY));
	a.min = -1;
	assert_false(hs_policy_change_too_early(TODAY, &a, TODAY));
	a.min = 0;
	assert_false(hs_policy_change_too_early(TODAY, &a, TODAY));
	/* a forced change (max exceeded) is never too early */
	a = aging(100, 30, -1, -1, -1);
	assert_false(hs_policy_change_too_early(TODAY - 31, &a, TODAY));
	assert_true(hs_policy_change_too_early(TODAY - 30, &a, TODAY));
	/* an expired account is not "too early" either (it is refused) */
	a = aging(100, -1, -1, -1, TODAY);
	assert_false(hs_policy_change_too_early(TODAY - 1, &a, TODAY));
}

static void test_format_day(void **unused)
{
	char buf[16];

	assert_string_equal(hs_policy_format_day_iso(0, buf, sizeof buf), "1970-01-01");
	assert_string_equal(hs_policy_format_day_iso(TODAY, buf, sizeof buf), "2024-10-04");
	assert_string_equal(hs_policy_format_day_iso(19782, buf, sizeof buf), "2024-02-29");
	assert_string_equal(hs_policy_format_day_iso(HS_UNSET, buf, sizeof buf), "never");
	assert_string_equal(hs_policy_format_day_iso(-7, buf, sizeof buf), "never");
	/* the largest day number fits the documented 16 bytes */
	assert_true(strlen(hs_policy_format_day_iso(HS_DAYS_MAX, buf, sizeof buf)) < sizeof buf);
}

static void test_parse_day_valid(void **unused)
{
	static const struct { const char *s; long day; } ok[] = {
		{ "1970-01-01", 0 },   { "2024-10-04", TODAY }, { "2024-02-29", 19782 },
		{ "2000-02-29", 11016 }, { "2025-03-01", 20148 }, { "9999-12-31", 2932896 },
		{ "-1", HS_UNSET },    { "", HS_UNSET },       { "0", 0 },
		{ "12345", 12345 },
		{ "99999999", 99999999 }, { "2147483647", HS_DAYS_MAX },
	};
	long day;

	for (size_t i = 0; i < HS_ARRAY_SIZE(ok); i++) {
		day = -42;
		assert_int_equal(hs_policy_parse_day(ok[i].s, &day), 0);
		assert_int_equal(day, ok[i].day);
	}
}

static void test_parse_day_invalid(void **unused)
{
	static const char *const bad_format[] = {
		" ", "today", "now", "garbage", "2025-1-01", "2025-01-1", "25-01-01",
		" 2025-01-01", "2025-01-01 ", "2025-01-01x", "2025/01/01", "+2025-01-01",
		"2025-01-+1", "2025--1-01", "-2", "--1", "-1 ", "012", "1e5", "0x10",
		"20250101-", "2025-01-01\n", "１２",
	};
	static const char *const bad_range[] = {
		"2025-01-32", "2025-02-30", "2023-02-29", "1900-02-29", "2025-00-10",
		"2025-13-01", "2025-04-31", "2025-01-00", "1969-12-31", "0000-01-01",
		"2147483648",
	};
	long day;

	for (size_t i = 0; i < HS_ARRAY_SIZE(bad_format); i++) {
		day = 7;
		assert_int_equal(hs_policy_parse_day(bad_format[i], &day), -HS_E_FORMAT);
		assert_int_equal(day, 7);
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad_range); i++) {
		day = 7;
		assert_int_equal(hs_policy_parse_day(bad_range[i], &day), -HS_E_RANGE);
		assert_int_equal(day, 7);
	}
	assert_int_equal(hs_policy_parse_day(NULL, &day), -HS_E_FORMAT);
}

static void test_round_trip(void **unused)
{
	char buf[16];
	long day;

	/* every day from 1970 to past 2100 (leap years, centuries) */
	for (long d = 0; d < 50000; d++) {
		assert_int_equal(hs_policy_parse_day(hs_policy_format_day_iso(d, buf, sizeof buf), &day), 0);
		assert_int_equal(day, d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expire_date),
		cmocka_unit_test(test_forced_by_admin),
		cmocka_unit_test(test_future_change),
		cmocka_unit_test(test_max_and_inactive),
		cmocka_unit_test(test_warning),
		cmocka_unit_test(test_too_early),
		cmocka_unit_test(test_format_day),
		cmocka_unit_test(test_parse_day_valid),
		cmocka_unit_test(test_parse_day_invalid),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
