/* Fuzz target for classic /etc/shadow lines (hs_records_spwd_parse / hs_records_spwd_format);
 * the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

static void check_accepted(const struct hs_spwd *a)
{
	fuzz_check_days(a->lstchg);
	fuzz_check_days(a->min);
	fuzz_check_days(a->max);
	fuzz_check_days(a->warn);
	fuzz_check_days(a->inact);
	fuzz_check_days(a->expire);
}

static void check_same(const struct hs_spwd *a, const struct hs_spwd *b)
{
	if (!fuzz_str_eq(a->name, b->name) || !fuzz_str_eq(a->hash, b->hash) ||
	    a->lstchg != b->lstchg || a->min != b->min || a->max != b->max ||
	    a->warn != b->warn || a->inact != b->inact || a->expire != b->expire ||
	    !fuzz_str_eq(a->flag, b->flag) || a->minus_one != b->minus_one)
		abort();
}

FUZZ_LINE_TARGET(struct hs_spwd, hs_records_spwd_parse, hs_records_spwd_format, check_accepted, check_same)
