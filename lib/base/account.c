/* passwd and group lookups with a buffer that grows until the entry fits. */
#include "account.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "layout.h"
#include "util.h"

/* Bigger than any sane passwd line (GECOS and paths are capped far
 * below this); a module that keeps asking for more is broken.  A group
 * line lists its members (100,000 of them make about 1 MiB). */
#define HS_PWBUF_MAX (1u << 20)
#define HS_GRBUF_MAX (16u << 20)

enum key { PW_NAM, PW_UID, GR_NAM, GR_GID };

/* glibc's files backend opens /etc/passwd and /etc/group without
 * O_NONBLOCK: one that is a FIFO (or a device) blocks the lookup for
 * good, in a root tool that holds the account locks meanwhile.  Refused
 * first, as the tools' own reading refuses it; missing is the backend's
 * answer to give, and a symlink to a file it follows. */
static int files_db_unusable(bool pw)
{
	struct stat st;

	if (stat(pw ? HS_ETC_PASSWD : HS_ETC_GROUP, &st) < 0)
		return 0;
	return S_ISREG(st.st_mode) ? 0 : -HS_E_NOTREG;
}

/* One lookup loop for the four keys: name for *_NAM, id for the others;
 * ent is a struct passwd or a struct group. */
static int lookup(enum key k, const char *name, unsigned long id, void *ent, char **buf)
{
	struct passwd *pwres = NULL;
	struct group *grres = NULL;
	bool pw = k == PW_NAM || k == PW_UID;
	long hint = sysconf(pw ? _SC_GETPW_R_SIZE_MAX : _SC_GETGR_R_SIZE_MAX);
	size_t size = hint >= 256 && hint <= 65536 ? (size_t)hint : 1024;
	size_t max = pw ? HS_PWBUF_MAX : HS_GRBUF_MAX;
	_cleanup_free_ char *b = NULL;
	int r;

	if (!buf)
		return -EINVAL;
	*buf = NULL;
	if (!ent || ((k == PW_NAM || k == GR_NAM) && !name))
		return -EINVAL;
	r = files_db_unusable(pw);
	if (r < 0)
		return r;
	for (;;) {
		char *nb = realloc(b, size);

		if (!nb)
			return -ENOMEM;
		b = nb;
		pwres = NULL;
		grres = NULL;
		switch (k) {
		case PW_NAM: r = getpwnam_r(name, ent, b, size, &pwres); break;
		case PW_UID: r = getpwuid_r((uid_t)id, ent, b, size, &pwres); break;
		case GR_NAM: r = getgrnam_r(name, ent, b, size, &grres); break;
		default:     r = getgrgid_r((gid_t)id, ent, b, size, &grres); break;
		}
		if (r != ERANGE)
			break;
		if (size >= max)
			return -ERANGE;
		size *= 2;
	}
	if (r == 0 && (pwres || grres)) {
		*buf = TAKE_PTR(b);
		return 0;
	}
	/* glibc returns 0 with a NULL result for "no such entry", but
	 * getpwnam_r(3) allows ENOENT and ESRCH for the same answer */
	if (r == 0 || r == ENOENT || r == ESRCH)
		return -ENOENT;
	return -r;
}

int hs_account_getpwnam(const char *name, struct passwd *pw, char **buf)
{
	return lookup(PW_NAM, name, 0, pw, buf);
}

int hs_account_getpwuid(uid_t uid, struct passwd *pw, char **buf)
{
	return lookup(PW_UID, NULL, uid, pw, buf);
}

int hs_account_caller(struct passwd *pw, char **buf, char *msg, size_t size)
{
	char why[64];
	int r = hs_account_getpwuid(getuid(), pw, buf);

	if (r == 0)
		return 0;
	syslog(LOG_WARNING, "Cannot determine the user name of the caller (UID %lu)",
	       (unsigned long)getuid());
	/* shadow-utils' words; the cause too, unless it is "no such user" */
	snprintf(why, sizeof why, " (%s)", hs_strerror(r));
	snprintf(msg, size, "Cannot determine your user name.%s", r == -ENOENT ? "" : why);
	return r;
}

int hs_account_getgrnam(const char *name, struct group *gr, char **buf)
{
	return lookup(GR_NAM, name, 0, gr, buf);
}

int hs_account_getgrgid(gid_t gid, struct group *gr, char **buf)
{
	return lookup(GR_GID, NULL, gid, gr, buf);
}
