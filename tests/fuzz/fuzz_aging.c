/* Fuzz target for per-user aging files "MIN:MAX:WARN:INACT:EXPIRE:"
 * (hs_records_aging_parse / hs_records_aging_format); the round-trip driver is in
 * fuzz_common.h. */
#include "fuzz_common.h"

static void check_same(const struct hs_aging *a, const struct hs_aging *b)
{
	if (a->min != b->min || a->max != b->max || a->warn != b->warn ||
	    a->inact != b->inact || a->expire != b->expire)
		abort();
}

FUZZ_LINE_TARGET(struct hs_aging, hs_records_aging_parse, hs_records_aging_format, FUZZ_ACCEPT_ANY, check_same)
