/* Fuzz target for /etc/group lines (hs_records_group_parse / hs_records_group_format);
 * the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

static void check_accepted(const struct hs_group *a)
{
	fuzz_check_list(a->members);
}

static void check_same(const struct hs_group *a, const struct hs_group *b)
{
	if (!fuzz_str_eq(a->name, b->name) || !fuzz_str_eq(a->passwd, b->passwd) ||
	    a->gid != b->gid || !fuzz_str_eq(a->members, b->members))
		abort();
}

FUZZ_LINE_TARGET(struct hs_group, hs_records_group_parse, hs_records_group_format, check_accepted, check_same)
