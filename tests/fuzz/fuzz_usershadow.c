/* Fuzz target for per-user shadow files "HASH:LSTCHG:" (hs_shadow_parse / hs_shadow_format).
 *
 * The first line of the input (cut at the first newline or NUL) is parsed;
 * an accepted line must format back to exactly itself plus '\n', and the
 * formatted line must parse again to the same values.  Any violation
 * abort()s so libFuzzer and the replay test report it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* A NUL-terminated copy of the input's first line. */
static char *first_line(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	if (!line)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/* out must be line + "\n"; strip the newline in place for re-parsing. */
static void check_round_trip(const char *line, char *out)
{
	size_t n = strlen(line);
	if (strlen(out) != n + 1 || memcmp(out, line, n) != 0 || out[n] != '\n')
		abort();
	out[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = first_line(data, size);
	char *work = strdup(line);
	struct hs_shadow a, b;
	char *out = NULL;

	if (!work)
		abort();
	if (hs_shadow_parse(work, &a) == 0) {
		if (hs_shadow_format(&a, &out) != 0)
			abort();
		check_round_trip(line, out);
		if (hs_shadow_parse(out, &b) != 0)
			abort();
		if (!str_eq(a.hash, b.hash) || a.lstchg != b.lstchg)
			abort();
		if (a.lstchg != HS_UNSET && (a.lstchg < 0 || a.lstchg > HS_DAYS_MAX))
			abort();
		free(out);
	}
	free(work);
	free(line);
	return 0;
}
