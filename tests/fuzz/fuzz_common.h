/* Shared driver for the fuzz targets.
 *
 * Line targets: the first line of the input (cut at the first newline or
 * NUL) is parsed; an accepted record must pass the target's own checks,
 * must format back to exactly the line plus '\n', and the formatted line
 * must parse again to the same values.  FUZZ_LINE_TARGET() writes that
 * LLVMFuzzerTestOneInput once; each target supplies only what differs
 * (record type, parser, formatter, per-record checks).
 *
 * Config targets: the whole input is handed over with its length (not
 * NUL-terminated, may contain NUL bytes).  Every warning must be one
 * printable line; every lookup must be consistent and parsing the same
 * bytes twice must give the same answers.  FUZZ_CONFIG_TARGET() writes
 * that driver; each target supplies its parser and the keys to look up.
 *
 * Any violation abort()s, so libFuzzer and the replay test report it. */
#ifndef HS_FUZZ_COMMON_H
#define HS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Both set and equal: a field the parser left NULL is a bug too. */
static inline bool fuzz_str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static inline char *fuzz_strdup(const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		abort();
	return copy;
}

/* A NUL-terminated copy of the input's first line. */
static inline char *fuzz_first_line(const uint8_t *data, size_t size)
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
static inline void fuzz_check_round_trip(const char *line, char *out)
{
	size_t n = strlen(line);

	if (strlen(out) != n + 1 || memcmp(out, line, n) != 0 || out[n] != '\n')
		abort();
	out[n] = '\0';
}

/* A day count is either unset or inside shadow(5)'s range. */
static inline void fuzz_check_days(long days)
{
	if (days != HS_UNSET && (days < 0 || days > HS_DAYS_MAX))
		abort();
}

/* Every element of an accepted list is non-empty, and the list helpers
 * agree with it: contains() finds it, remove() + add() keep the set. */
static inline void fuzz_check_list(const char *list)
{
	const char *cur = list, *elem;
	size_t len;

	while ((len = hs_records_list_next(&cur, &elem)) > 0) {
		char name[64];
		if (len >= sizeof name)
			abort();
		memcpy(name, elem, len);
		name[len] = '\0';
		if (!hs_records_list_contains(list, name))
			abort();
		char *without = NULL, *with = NULL;
		if (hs_records_list_remove(list, name, &without) != 0)
			abort();
		if (hs_records_list_contains(without, name))
			abort();
		if (hs_records_list_add(without, name, &with) != 0)
			abort();
		if (!hs_records_list_contains(with, name) || strlen(with) > strlen(list))
			abort();
		free(without);
		free(with);
	}
	if (*cur != '\0')
		abort();
}

/* CHECK_ACCEPTED for a record type with nothing to check beyond the
 * round trip. */
#define FUZZ_ACCEPT_ANY(rec) ((void)(rec))

/* The line driver.  TYPE is the parsed record; PARSE(char *, TYPE *) and
 * FORMAT(const TYPE *, char **) follow lib/format/records.h; CHECK_ACCEPTED(const
 * TYPE *) aborts on a record no parser should accept; CHECK_SAME(const
 * TYPE *, const TYPE *) aborts unless the re-parsed record equals the
 * first one.  A macro rather than a function taking callbacks: the
 * callbacks would need void * signatures, and calling through a cast
 * function pointer is what -fsanitize=function reports. */
#define FUZZ_LINE_TARGET(TYPE, PARSE, FORMAT, CHECK_ACCEPTED, CHECK_SAME)	\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)			\
{										\
	char *line = fuzz_first_line(data, size);				\
	char *work = fuzz_strdup(line);						\
	TYPE a;		/* separate: TYPE may be a pointer type */	\
	TYPE b;								\
	char *out = NULL;							\
										\
	if (PARSE(work, &a) == 0) {						\
		CHECK_ACCEPTED(&a);						\
		if (FORMAT(&a, &out) != 0)					\
			abort();						\
		fuzz_check_round_trip(line, out);				\
		if (PARSE(out, &b) != 0)					\
			abort();						\
		CHECK_SAME(&a, &b);						\
		free(out);							\
	}									\
	free(work);								\
	free(line);								\
	return 0;								\
}

/* Warnings end up on a terminal or in syslog: no line breaks or escape
 * sequences smuggled in from the file. */
static inline void fuzz_check_warning(void *ctx, const char *path, unsigned long lineno,
				      const char *message)
{
	(void)ctx;
	if (!path || strcmp(path, "fuzz") != 0 || !message || lineno == 0)
		abort();
	for (const unsigned char *p = (const unsigned char *)message; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
}

/* Every lookup of every key is consistent within c, and agrees with
 * again (the same bytes parsed a second time).  No value can be longer
 * than the input it came from. */
static inline void fuzz_check_config(const struct hs_config *c, const struct hs_config *again,
				     const char *const *keys, size_t nkeys, size_t size_limit)
{
	for (size_t i = 0; i < nkeys; i++) {
		const char *k = keys[i];
		const char *v = hs_config_get_str(c, k, NULL);
		const char *w = hs_config_get_str(again, k, NULL);

		if (hs_config_has(c, k) != (v != NULL))
			abort();
		if ((v == NULL) != (w == NULL) || (v && strcmp(v, w) != 0))
			abort();
		if (v && strlen(v) > size_limit)
			abort();
		if (hs_config_get_str(c, k, "default-value") == NULL)
			abort();

		long n = hs_config_get_long(c, k, -5, 1000000, 77);
		if (n != 77 && (n < -5 || n > 1000000))
			abort();
		if (n != hs_config_get_long(again, k, -5, 1000000, 77))
			abort();
		if (!v && n != 77)
			abort();
		long m = hs_config_get_long(c, k, 0, 0, 0);
		if (m != 0)
			abort();

		bool b1 = hs_config_get_bool(c, k, true);
		bool b2 = hs_config_get_bool(c, k, false);
		if (!v && (!b1 || b2))
			abort();
		if (b1 != hs_config_get_bool(again, k, true))
			abort();
	}
}

/* The config driver.  PARSE has the signature of hs_config_logindefs_parse();
 * KEYS is a static array of the keys to look up. */
#define FUZZ_CONFIG_TARGET(PARSE, KEYS)						\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)			\
{										\
	struct hs_config *c = NULL, *again = NULL;				\
										\
	if (PARSE((const char *)data, size, "fuzz", fuzz_check_warning, NULL, &c) != 0) \
		return 0;							\
	if (!c)									\
		abort();							\
	if (PARSE((const char *)data, size, "fuzz", fuzz_check_warning, NULL, &again) != 0 || \
	    !again)								\
		abort();							\
	fuzz_check_config(c, again, KEYS, sizeof KEYS / sizeof KEYS[0], size);	\
	hs_config_free(c);							\
	hs_config_free(again);							\
	return 0;								\
}

#endif
