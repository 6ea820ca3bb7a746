/* Fuzz target for /etc/subuid and /etc/subgid lines (hs_records_subid_parse /
 * hs_records_subid_format); the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

/* A range is non-empty and ends inside the 32-bit id space. */
static void check_accepted(const struct hs_subid *a)
{
	if (a->count < 1 || a->start > HS_ID_MAX ||
	    (uint64_t)a->start + a->count > (UINT64_C(1) << 32))
		abort();
}

static void check_same(const struct hs_subid *a, const struct hs_subid *b)
{
	if (!fuzz_str_eq(a->owner, b->owner) || a->start != b->start || a->count != b->count)
		abort();
}

FUZZ_LINE_TARGET(struct hs_subid, hs_records_subid_parse, hs_records_subid_format, check_accepted, check_same)
