/* Fuzz target for /etc/gshadow lines (hs_records_gshadow_parse / hs_records_gshadow_format);
 * the round-trip driver is in fuzz_common.h. */
#include "fuzz_common.h"

static void check_accepted(const struct hs_gshadow *a)
{
	fuzz_check_list(a->admins);
	fuzz_check_list(a->members);
}

static void check_same(const struct hs_gshadow *a, const struct hs_gshadow *b)
{
	if (!fuzz_str_eq(a->name, b->name) || !fuzz_str_eq(a->passwd, b->passwd) ||
	    !fuzz_str_eq(a->admins, b->admins) || !fuzz_str_eq(a->members, b->members))
		abort();
}

FUZZ_LINE_TARGET(struct hs_gshadow, hs_records_gshadow_parse, hs_records_gshadow_format, check_accepted,
		 check_same)
