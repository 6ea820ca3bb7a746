/* shadow(5) aging policy.  hs_policy_account_state follows pam_unix's
 * check_shadow_expiry (Linux-PAM 1.5) test for test, including its
 * quirks (strict '>' comparisons, "changed in the future" counting as
 * fine), so a pam.d stack behaves the same with our module as with
 * pam_unix. */
#include "policy.h"

#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <time.h>

#include "util.h"

#define SECONDS_PER_DAY 86400L

/* lstchg + max - today, clamped to long: the days a warning names. */
static long days_until(long lstchg, long max, long today)
{
	long long d = (long long)lstchg + max - today;

	return d > LONG_MAX ? LONG_MAX : (long)d;
}

enum hs_acct_state hs_policy_account_state(long lstchg, const struct hs_aging *a, long today,
                                    long *days_left, bool *forced_by_admin)
{
	long since, unused_days;
	bool unused_admin;

	if (!days_left)
		days_left = &unused_days;
	if (!forced_by_admin)
		forced_by_admin = &unused_admin;
	*days_left = -1;
	*forced_by_admin = false;
	if (!a)
		return HS_ACCT_EXPIRED;   /* no aging data: fail closed */

	if (a->expire != HS_UNSET && today >= a->expire)
		return HS_ACCT_EXPIRED;
	if (lstchg == 0) {
		*days_left = 0;
		*forced_by_admin = true;
		return HS_ACCT_NEW_AUTHTOK_REQD;
	}
	if (today < lstchg)
		return HS_ACCT_OK;   /* changed "in the future": pam_unix lets it pass */

	/* Fields go up to 2^31-1 ("never"); sums are taken in long long so
	 * that they cannot wrap where long has 32 bits. */
	since = today - lstchg;
	if (a->max != HS_UNSET && a->inact != HS_UNSET && since > a->max && since > a->inact &&
	    since > (long long)a->max + a->inact) {
		*days_left = days_until(lstchg, a->max, today);
		return HS_ACCT_AUTHTOK_EXPIRED;
	}
	if (a->max != HS_UNSET && since > a->max)
		return HS_ACCT_NEW_AUTHTOK_REQD;
	if (a->max != HS_UNSET && a->warn != HS_UNSET && since > a->max - a->warn) {
		*days_left = days_until(lstchg, a->max, today);
		return HS_ACCT_WARN;
	}
	return HS_ACCT_OK;
}

bool hs_policy_change_too_early(long lstchg, const struct hs_aging *a, long today)
{
	enum hs_acct_state st;

	if (!a || a->min == HS_UNSET || lstchg <= 0)
		return false;
	/* pam_unix reaches its MIN test only when none of the earlier
	 * outcomes applied: a forced change is never "too early" */
	st = hs_policy_account_state(lstchg, a, today, NULL, NULL);
	if (st != HS_ACCT_OK && st != HS_ACCT_WARN)
		return false;
	return today >= lstchg && today - lstchg < a->min;
}

const char *hs_policy_format_day_iso(long day, char *buf, size_t size)
{
	struct tm tm;
	time_t t;

	if (!buf || size == 0)
		return "";
	if (day < 0 || day > HS_DAYS_MAX) {
		snprintf(buf, size, "never");
		return buf;
	}
	t = (time_t)day * SECONDS_PER_DAY;
	if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d", &tm) == 0)
		snprintf(buf, size, "never");
	return buf;
}

static bool is_leap(long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(long y, int m)
{
	static const int len[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && is_leap(y) ? 29 : len[m - 1];
}

/* Days since 1970-01-01 for a valid proleptic Gregorian date >= 1970. */
static long days_from_civil(long y, int m, int d)
{
	long days = 0;

	for (long yy = 1970; yy < y; yy++)
		days += is_leap(yy) ? 366 : 365;
	for (int mm = 1; mm < m; mm++)
		days += days_in_month(y, mm);
	return days + d - 1;
}

/* The value of the n decimal digits at s (leading zeros allowed), or -1
 * when one is not a digit. */
static long number(const char *s, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int hs_policy_parse_day(const char *s, long *day)
{
	unsigned long n;
	long y;
	int m, d, r;

	if (!s || !day)
		return -HS_E_FORMAT;
	/* the empty string clears the field, as in shadow-utils */
	if (s[0] == '\0' || strcmp(s, "-1") == 0) {
		*day = HS_UNSET;
		return 0;
	}
	/* shadow-utils also takes a bare day count */
	if (s[0] >= '0' && s[0] <= '9' && strchr(s, '-') == NULL) {
		r = hs_parse_ulong(s, 0, HS_DAYS_MAX, &n);
		if (r < 0)
			return r;
		*day = (long)n;
		return 0;
	}
	/* exactly YYYY-MM-DD: no signs, blanks, short fields or trailers */
	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -HS_E_FORMAT;
	y = number(s, 4);
	m = (int)number(s + 5, 2);
	d = (int)number(s + 8, 2);
	if (y < 0 || m < 0 || d < 0)
		return -HS_E_FORMAT;
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
		return -HS_E_RANGE;
	*day = days_from_civil(y, m, d);
	return 0;
}
