/* Fuzz target for /etc/gshadow lines (hs_gshadow_parse / hs_gshadow_format).
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

/* Every element of an accepted list is non-empty, and the list helpers
 * agree with it: contains() finds it, remove() + add() keep the set. */
static void check_list(const char *list)
{
	const char *cur = list, *elem;
	size_t len;

	while ((len = hs_list_next(&cur, &elem)) > 0) {
		char name[64];
		if (len >= sizeof name)
			abort();
		memcpy(name, elem, len);
		name[len] = '\0';
		if (!hs_list_contains(list, name))
			abort();
		char *without = NULL, *with = NULL;
		if (hs_list_remove(list, name, &without) != 0)
			abort();
		if (hs_list_contains(without, name))
			abort();
		if (hs_list_add(without, name, &with) != 0)
			abort();
		if (!hs_list_contains(with, name) || strlen(with) > strlen(list))
			abort();
		free(without);
		free(with);
	}
	if (*cur != '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = first_line(data, size);
	char *work = strdup(line);
	struct hs_gshadow a, b;
	char *out = NULL;

	if (!work)
		abort();
	if (hs_gshadow_parse(work, &a) == 0) {
		if (hs_gshadow_format(&a, &out) != 0)
			abort();
		check_round_trip(line, out);
		if (hs_gshadow_parse(out, &b) != 0)
			abort();
		if (!str_eq(a.name, b.name) || !str_eq(a.passwd, b.passwd) ||
		    !str_eq(a.admins, b.admins) || !str_eq(a.members, b.members))
			abort();
		check_list(a.admins);
		check_list(a.members);
		free(out);
	}
	free(work);
	free(line);
	return 0;
}
