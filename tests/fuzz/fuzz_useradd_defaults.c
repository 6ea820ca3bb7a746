/* Fuzz target for /etc/default/useradd (hs_useradd_defaults_parse).
 *
 * The whole input is handed over with its length (it is not NUL-terminated
 * and may contain NUL bytes).  Every warning must be one printable line;
 * every lookup must be consistent: hs_config_has() agrees with
 * hs_config_get_str(), numbers come back inside the requested range,
 * and parsing the same bytes twice gives the same answers.  Any
 * violation abort()s. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {
	"GROUP",
	"GROUPS",
	"HOME",
	"INACTIVE",
	"EXPIRE",
	"SHELL",
	"SKEL",
	"CREATE_MAIL_SPOOL",
	"LOG_INIT",
	"USRSKEL",
	"NONEXISTENT_KEY",
	"",
	"shell",
};

/* Warnings end up on a terminal or in syslog: no line breaks or escape
 * sequences smuggled in from the file. */
static void check_warning(void *ctx, const char *path, unsigned long lineno,
			  const char *message)
{
	(void)ctx;
	if (!path || strcmp(path, "fuzz") != 0 || !message || lineno == 0)
		abort();
	for (const unsigned char *p = (const unsigned char *)message; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
}

static size_t size_limit;

static void check_config(const struct hs_config *c, const struct hs_config *again)
{
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_config *c = NULL, *again = NULL;

	size_limit = size;
	if (hs_useradd_defaults_parse((const char *)data, size, "fuzz", check_warning, NULL, &c) != 0)
		return 0;
	if (!c)
		abort();
	if (hs_useradd_defaults_parse((const char *)data, size, "fuzz", check_warning, NULL, &again) != 0 ||
	    !again)
		abort();
	check_config(c, again);
	hs_config_free(c);
	hs_config_free(again);
	return 0;
}
