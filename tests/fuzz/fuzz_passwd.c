/* Fuzz target for /etc/passwd lines (hs_records_passwd_parse / hs_records_passwd_format);
 * the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

static void check_same(const struct hs_passwd *a, const struct hs_passwd *b)
{
	if (!fuzz_str_eq(a->name, b->name) || !fuzz_str_eq(a->passwd, b->passwd) ||
	    a->uid != b->uid || a->gid != b->gid || !fuzz_str_eq(a->gecos, b->gecos) ||
	    !fuzz_str_eq(a->dir, b->dir) || !fuzz_str_eq(a->shell, b->shell))
		abort();
}

FUZZ_LINE_TARGET(struct hs_passwd, hs_records_passwd_parse, hs_records_passwd_format, FUZZ_ACCEPT_ANY,
		 check_same)
