/* The temporary-name format (see tempname.h). */
#include "tempname.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int hs_tempname_for_file(const char *name, char *tmp, size_t tmpsize)
{
	size_t namelen = strlen(name);
	int r;

	/* '.' + NAME + '.' + random + NUL */
	if (namelen + 2 + HS_TEMP_RANDOM_LEN >= NAME_MAX + 1 ||
	    namelen + 3 + HS_TEMP_RANDOM_LEN > tmpsize)
		return -ENAMETOOLONG;
	tmp[0] = '.';
	memcpy(tmp + 1, name, namelen);
	tmp[1 + namelen] = '.';
	r = hs_random_alnum(tmp + 2 + namelen, HS_TEMP_RANDOM_LEN);
	if (r < 0)
		return r;
	tmp[2 + namelen + HS_TEMP_RANDOM_LEN] = '\0';
	return 0;
}

int hs_tempname_reserved(const char *tag, const char *name, char *tmp, size_t tmpsize)
{
	char rnd[HS_TEMP_RANDOM_LEN + 1];
	int n, r;

	r = hs_random_alnum(rnd, HS_TEMP_RANDOM_LEN);
	if (r < 0)
		return r;
	rnd[HS_TEMP_RANDOM_LEN] = '\0';
	n = snprintf(tmp, tmpsize, ".%s.%s.%s", tag, name, rnd);
	if (n < 0 || (size_t)n >= tmpsize)
		return -ENAMETOOLONG;
	return 0;
}

int hs_tempname_fixed(const char *tag, const char *name, char *tmp, size_t tmpsize)
{
	int n = snprintf(tmp, tmpsize, ".%s.%s", tag, name);

	if (n < 0 || (size_t)n >= tmpsize || n > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* Does s (len bytes, NUL-terminated) end in ".XXXXXXXXXXXX", the random
 * tail, after at least one character? */
static bool ends_in_random(const char *s, size_t len)
{
	return len >= HS_TEMP_RANDOM_LEN + 2 && s[len - HS_TEMP_RANDOM_LEN - 1] == '.' &&
	       strspn(s + len - HS_TEMP_RANDOM_LEN,
		      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ==
		       HS_TEMP_RANDOM_LEN;
}

bool hs_tempname_is_for_file(const char *entry, const char *name)
{
	size_t namelen = strlen(name), len = strlen(entry);

	return len == namelen + 2 + HS_TEMP_RANDOM_LEN && entry[0] == '.' &&
	       memcmp(entry + 1, name, namelen) == 0 && ends_in_random(entry, len);
}

bool hs_tempname_is_reserved(const char *entry)
{
	size_t len = strlen(entry);

	return (strncmp(entry, ".new.", 5) == 0 || strncmp(entry, ".del.", 5) == 0) &&
	       len > 5 + 1 + HS_TEMP_RANDOM_LEN && ends_in_random(entry, len);
}
