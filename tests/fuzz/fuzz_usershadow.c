/* Fuzz target for per-user shadow files "HASH:LSTCHG:" (hs_records_shadow_parse /
 * hs_records_shadow_format); the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

static void check_accepted(const struct hs_shadow *a)
{
	fuzz_check_days(a->lstchg);
}

static void check_same(const struct hs_shadow *a, const struct hs_shadow *b)
{
	if (!fuzz_str_eq(a->hash, b->hash) || a->lstchg != b->lstchg)
		abort();
}

FUZZ_LINE_TARGET(struct hs_shadow, hs_records_shadow_parse, hs_records_shadow_format, check_accepted,
		 check_same)
