/* passwd lookups with a buffer that grows until the entry fits. */
#include "account.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

/* Bigger than any sane passwd line (GECOS and paths are capped far
 * below this); a module that keeps asking for more is broken. */
#define HS_PWBUF_MAX (1u << 20)

static size_t initial_size(void)
{
	long n = sysconf(_SC_GETPW_R_SIZE_MAX);

	return n >= 256 && n <= 65536 ? (size_t)n : 1024;
}

/* One lookup loop for both keys: name != NULL selects getpwnam_r. */
static int lookup(const char *name, uid_t uid, struct passwd *pw, char **buf)
{
	struct passwd *result = NULL;
	size_t size = initial_size();
	char *b = NULL;
	int r;

	if (!pw || !buf)
		return -EINVAL;
	*buf = NULL;
	for (;;) {
		char *nb = realloc(b, size);

		if (!nb) {
			free(b);
			return -ENOMEM;
		}
		b = nb;
		result = NULL;
		if (name)
			r = getpwnam_r(name, pw, b, size, &result);
		else
			r = getpwuid_r(uid, pw, b, size, &result);
		if (r != ERANGE)
			break;
		if (size >= HS_PWBUF_MAX) {
			free(b);
			return -ERANGE;
		}
		size *= 2;
	}
	if (r == 0 && result) {
		*buf = b;
		return 0;
	}
	free(b);
	/* glibc returns 0 with a NULL result for "no such entry", but
	 * getpwnam_r(3) allows ENOENT and ESRCH for the same answer */
	if (r == 0 || r == ENOENT || r == ESRCH)
		return -ENOENT;
	return -r;
}

int hs_getpwnam_alloc(const char *name, struct passwd *pw, char **buf)
{
	if (!name) {
		if (buf)
			*buf = NULL;
		return -EINVAL;
	}
	return lookup(name, 0, pw, buf);
}

int hs_getpwuid_alloc(uid_t uid, struct passwd *pw, char **buf)
{
	return lookup(NULL, uid, pw, buf);
}
