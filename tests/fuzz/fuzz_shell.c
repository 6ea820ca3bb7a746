/* Fuzz target for per-user shell files (hs_shell_parse / hs_shell_format).
 *
 * The first line of the input (cut at the first newline or NUL) is parsed;
 * an accepted path must be absolute and control-free, must format back to
 * exactly itself plus '\n', and must parse again to the same path.  Any
 * violation abort()s. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	const char *path = NULL, *again = NULL;
	char *work, *out = NULL;

	if (!line)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	line[strcspn(line, "\n")] = '\0';
	work = strdup(line);
	if (!work)
		abort();

	if (hs_shell_parse(work, &path) == 0) {
		if (!path || path[0] != '/' || !hs_field_valid(path) ||
		    strlen(path) > HS_PATH_FIELD_MAX)
			abort();
		if (hs_shell_format(path, &out) != 0)
			abort();
		size_t n = strlen(line);
		if (strlen(out) != n + 1 || memcmp(out, line, n) != 0 || out[n] != '\n')
			abort();
		out[n] = '\0';
		if (hs_shell_parse(out, &again) != 0 || strcmp(again, path) != 0)
			abort();
		free(out);
	}
	free(work);
	free(line);
	return 0;
}
