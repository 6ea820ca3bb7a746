/* shadow(5) aging policy: what an account's dates mean today.  The one
 * place that interprets LSTCHG/MIN/MAX/WARN/INACT/EXPIRE, shared by the PAM
 * module (account, password), passwd -S and chage -l. */
#ifndef HS_POLICY_H
#define HS_POLICY_H

#include <stdbool.h>

#include "records.h"

enum hs_acct_state {
	HS_ACCT_OK,
	HS_ACCT_WARN,               /* password expires in *days_left days */
	HS_ACCT_NEW_AUTHTOK_REQD,   /* lstchg 0 (administrator) or max exceeded */
	HS_ACCT_AUTHTOK_EXPIRED,    /* max + inact exceeded: password login refused */
	HS_ACCT_EXPIRED,            /* expire date reached */
};

/* Evaluate exactly as pam_unix does for shadow entries (the order of the
 * checks matters: account expiry first, then lstchg == 0, then the
 * inactive period, then max, then the warning).  *forced_by_admin is true
 * for NEW_AUTHTOK_REQD caused by lstchg == 0 (pam_unix's "administrator
 * enforced" message).  days_left and forced_by_admin may be NULL. */
enum hs_acct_state hs_policy_account_state(long lstchg, const struct hs_aging *a, long today,
                                    long *days_left, bool *forced_by_admin);

/* MIN not yet reached since the last change (pam_unix's "You must wait
 * longer to change your password").  lstchg 0 or unset never blocks. */
bool hs_policy_change_too_early(long lstchg, const struct hs_aging *a, long today);

/* "YYYY-MM-DD" (UTC) for a day number, or "never" for HS_UNSET; buf >= 16. */
const char *hs_policy_format_day_iso(long day, char *buf, size_t size);

/* Parse "YYYY-MM-DD" strictly (valid calendar date, 1970..9999), or "-1"
 * or "" (HS_UNSET, as shadow-utils' chage -d '' and -E ''), into a day
 * number.  Also accepts a plain non-negative day
 * number as shadow-utils does.  Returns 0 or -HS_E_FORMAT/-HS_E_RANGE. */
int hs_policy_parse_day(const char *s, long *day);

#endif
