/* Fuzz target for per-user shell files (hs_records_shell_parse / hs_records_shell_format);
 * the round-trip driver is in fuzz_common.h.  The "record" is the path
 * pointer itself. */
#include "fuzz_common.h"

/* hs_records_shell_format() takes the path, not a pointer to it: adapt it to the
 * driver's FORMAT(const TYPE *, char **). */
static int format_shell(const char *const *path, char **out)
{
	return hs_records_shell_format(*path, out);
}

/* An accepted path is absolute, control-free and not over-long. */
static void check_accepted(const char *const *path)
{
	if (!*path || (*path)[0] != '/' || !hs_records_field_valid(*path) ||
	    strlen(*path) > HS_PATH_FIELD_MAX)
		abort();
}

static void check_same(const char *const *path, const char *const *again)
{
	if (strcmp(*again, *path) != 0)
		abort();
}

FUZZ_LINE_TARGET(const char *, hs_records_shell_parse, format_shell, check_accepted, check_same)
