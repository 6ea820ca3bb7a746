/* libnss_hardened_shadow.so.2: the glibc "shadow" database served from
 * the per-user tree /etc/hardened-shadow/USER/{shadow,aging}
 * (DESIGN.md section 8).
 *
 * This code runs inside every process that calls getspnam(): login
 * managers, screen lockers, sshd, multi-threaded daemons.  So it
 *   - keeps no state between calls except the enumeration cursor (under a
 *     mutex), and no file descriptor once a call returns (except the
 *     enumeration directory between setspent and endspent);
 *   - never logs (syslog would open a socket in the host), never touches
 *     signals or credentials, never allocates on the lookup path;
 *   - validates the name before it reaches any path, and leaves parsing and
 *     the trust checks (owner, type, link count, size) to lib/tree/userdir_*.c,
 *     which is the only code that knows the layout.  getspnam_r takes
 *     hs_userdir_lookup's fast path (one open per file, for the 10 us
 *     target); enumeration, which is not speed-critical, also checks the
 *     tree's mode and the shadow file's owner.
 *
 * Status mapping (documented in nss_hardened_shadow(8)):
 *   invalid name, no such user directory,
 *   no shadow file in it                   NOTFOUND, errno ENOENT
 *   caller may not reach the tree/entry    UNAVAIL,  errno EACCES
 *   tree missing                           UNAVAIL,  errno ENOENT
 *   entry fails the trust checks or does
 *   not parse (hostile or broken)          UNAVAIL,  errno EIO
 *   out of fds/memory, also while reading
 *   the aging file                         TRYAGAIN, errno EAGAIN
 *   buffer too small                       TRYAGAIN, errno ERANGE
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nss.h>
#include <pthread.h>
#include <shadow.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "names.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

/* glibc resolves these by name; declare them to keep
 * -Wmissing-prototypes quiet and the signatures checked. */
enum nss_status _nss_hardened_shadow_getspnam_r(const char *name, struct spwd *result,
						char *buffer, size_t buflen, int *errnop);
enum nss_status _nss_hardened_shadow_setspent(int stayopen);
enum nss_status _nss_hardened_shadow_getspent_r(struct spwd *result, char *buffer,
						size_t buflen, int *errnop);
enum nss_status _nss_hardened_shadow_endspent(void);

/* The raw shadow file lands here before its two strings are copied into
 * the caller's buffer; the userdir reader wants room for the size cap plus
 * a newline and a NUL.  Wiped after every use: it held a hash. */
#define SHADOW_SCRATCH_SIZE (HS_USERFILE_MAX + 2)

static enum nss_status status_from_error(int err, int *errnop)
{
	/* out of fds or memory; or a shadow file that could not be opened
	 * now (an aging file's EAGAIN is a verdict: hs_err_transient) */
	if (hs_err_transient(err) || err == -EAGAIN || err == -EINTR) {
		*errnop = EAGAIN;
		return NSS_STATUS_TRYAGAIN;
	}
	switch (-err) {
	case ENOENT:
		*errnop = ENOENT;
		return NSS_STATUS_NOTFOUND;
	case EACCES:
	case EPERM:
		*errnop = EACCES;
		return NSS_STATUS_UNAVAIL;
	default:
		/* Everything else is an entry that fails a trust check
		 * (symlink, FIFO, wrong owner, hard link, oversized) or does
		 * not parse: report it as unreadable, never as data. */
		*errnop = EIO;
		return NSS_STATUS_UNAVAIL;
	}
}

/* Copy the name and hash into buffer and fill result.  Nothing is written
 * to result unless everything fits, so a TRYAGAIN leaves no partial data. */
static enum nss_status fill_spwd(const char *name, const struct hs_shadow *sh,
				 const struct hs_aging *ag, struct spwd *result,
				 char *buffer, size_t buflen, int *errnop)
{
	size_t name_size = strlen(name) + 1;
	size_t hash_size = strlen(sh->hash) + 1;

	if (buflen < name_size || buflen - name_size < hash_size) {
		*errnop = ERANGE;
		return NSS_STATUS_TRYAGAIN;
	}
	memcpy(buffer, name, name_size);
	memcpy(buffer + name_size, sh->hash, hash_size);

	result->sp_namp = buffer;
	result->sp_pwdp = buffer + name_size;
	result->sp_lstchg = sh->lstchg;
	result->sp_min = ag->min;
	result->sp_max = ag->max;
	result->sp_warn = ag->warn;
	result->sp_inact = ag->inact;
	result->sp_expire = ag->expire;
	result->sp_flag = (unsigned long)-1;
	return NSS_STATUS_SUCCESS;
}

/* Look up one user: hs_userdir_lookup reads shadow and aging by absolute
 * path with one open each, so a lookup costs the same at any tree size
 * and stays within a handful of system calls.  The name is validated
 * there before any system call. */
static enum nss_status lookup(const char *name, struct spwd *result, char *buffer,
			      size_t buflen, int *errnop)
{
	char scratch[SHADOW_SCRATCH_SIZE];
	struct hs_shadow sh;
	struct hs_aging ag;
	enum nss_status status;
	int r, aging_err;

	/* Cheap early answer for a buffer that cannot even hold the name
	 * and an empty hash: no filesystem work needed. */
	if (buflen < strlen(name) + 2) {
		*errnop = ERANGE;
		return NSS_STATUS_TRYAGAIN;
	}
	/* Fail closed: a missing, foreign-owned or garbled aging file
	 * yields an expired account (expire = 1), never "no limits".  The
	 * error itself is not logged: a library inside someone else's
	 * process must not open a syslog socket.  Out of descriptors or
	 * memory, though, nothing was learnt of the file: TRYAGAIN, not an
	 * account that expired in 1970. */
	r = hs_userdir_lookup(name, scratch, sizeof scratch, &sh, &ag, &aging_err);
	if (r < 0)
		return status_from_error(r, errnop);  /* the reader wiped scratch */
	if (hs_err_transient(aging_err))
		status = status_from_error(aging_err, errnop);
	else
		status = fill_spwd(name, &sh, &ag, result, buffer, buflen, errnop);
	/* A line that parsed is at most "HASH:LSTCHG:" long; wiping just that
	 * keeps 4 KiB of memset out of every lookup. */
	hs_wipe(scratch, HS_HASH_MAX + 32);
	return status;
}

/* Enumeration's lookup, relative to the tree it is listing: speed does
 * not matter there, so it also checks what the fast path leaves to pwck
 * (shadow owned by the directory's owner). */
static enum nss_status lookup_at(int treefd, const char *name, struct spwd *result,
				 char *buffer, size_t buflen, int *errnop)
{
	char scratch[SHADOW_SCRATCH_SIZE];
	struct hs_shadow sh;
	struct hs_aging ag;
	enum nss_status status;
	uid_t owner;
	int udirfd, r;

	if (buflen < strlen(name) + 2) {
		*errnop = ERANGE;
		return NSS_STATUS_TRYAGAIN;
	}
	udirfd = hs_userdir_open(treefd, name, HS_ANY_UID, &owner);
	if (udirfd < 0)
		return status_from_error(udirfd, errnop);
	r = hs_userdir_read_shadow(udirfd, owner, scratch, sizeof(scratch), &sh);
	if (r == 0) {
		/* as in lookup: the fail-closed aging stands, a shortage
		 * does not */
		int aging_err = hs_userdir_aging_or_expired(udirfd, &ag);

		r = hs_err_transient(aging_err) ? aging_err : 0;
	}
	if (r < 0)
		status = status_from_error(r, errnop);
	else
		status = fill_spwd(name, &sh, &ag, result, buffer, buflen, errnop);
	hs_wipe(scratch, sizeof(scratch));
	hs_close(udirfd);
	return status;
}

enum nss_status _nss_hardened_shadow_getspnam_r(const char *name, struct spwd *result,
						char *buffer, size_t buflen, int *errnop)
{
	enum nss_status status;

	/* First, before any system call: "..", "a/b", "-x", "" and
	 * overlong names never reach a path. */
	if (!hs_names_user_valid(name)) {
		*errnop = ENOENT;
		return NSS_STATUS_NOTFOUND;
	}
	status = lookup(name, result, buffer, buflen, errnop);
	/* A missing entry costs one failed open; only then is it worth a
	 * stat to tell "no such user" from "no tree at all": UNAVAIL lets
	 * "hardened_shadow files" fall through during a migration and
	 * tells callers the database itself is missing. */
	if (status == NSS_STATUS_NOTFOUND && access(HS_TREE_DIR, F_OK) < 0 && errno == ENOENT)
		status = NSS_STATUS_UNAVAIL;
	return status;
}

/* ---- enumeration ---- */

/* One cursor per process, as with every glibc backend: setspent,
 * getspent_r and endspent serialise on this mutex.  pending_name holds an
 * entry that did not fit the caller's buffer, so the retry with a bigger
 * buffer returns the same entry instead of skipping it. */
static pthread_mutex_t ent_lock = PTHREAD_MUTEX_INITIALIZER;
static DIR *ent_dir;
static char pending_name[HS_NAME_MAX + 1];
static bool have_pending;

/* Called with ent_lock held: open the cursor, or rewind it.  A missing
 * tree is UNAVAIL, not NOTFOUND: the database itself is missing. */
static enum nss_status ent_open_locked(int *errnop)
{
	enum nss_status status;
	int treefd, fd = -1, r;

	if (ent_dir) {
		rewinddir(ent_dir);
		return NSS_STATUS_SUCCESS;
	}
	r = treefd = hs_userdir_open_tree();
	if (treefd >= 0) {
		/* Listing needs a readable descriptor; the lookup descriptor
		 * only needs search permission (the self-service tools may
		 * traverse the tree but not list it) and may be an O_PATH one. */
		fd = openat(treefd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = fd < 0 ? -errno : 0;
		hs_close(treefd);
	}
	if (r >= 0 && !(ent_dir = fdopendir(fd))) {
		r = -errno;
		hs_close(fd);
	}
	if (r >= 0)
		return NSS_STATUS_SUCCESS;
	status = status_from_error(r, errnop);
	return r == -ENOENT ? NSS_STATUS_UNAVAIL : status;
}

enum nss_status _nss_hardened_shadow_setspent(int stayopen)
{
	enum nss_status status;
	int err;

	pthread_mutex_lock(&ent_lock);
	have_pending = false;
	status = ent_open_locked(&err);
	if (status != NSS_STATUS_SUCCESS)
		errno = err;
	pthread_mutex_unlock(&ent_lock);
	return status;
}

enum nss_status _nss_hardened_shadow_endspent(void)
{
	pthread_mutex_lock(&ent_lock);
	if (ent_dir) {
		int saved = errno;

		closedir(ent_dir);
		errno = saved;
		ent_dir = NULL;
	}
	have_pending = false;
	pthread_mutex_unlock(&ent_lock);
	return NSS_STATUS_SUCCESS;
}

/* Try one entry; remember it when the buffer is too small. */
static enum nss_status ent_try_locked(const char *name, struct spwd *result,
				      char *buffer, size_t buflen, int *errnop)
{
	enum nss_status status;

	status = lookup_at(dirfd(ent_dir), name, result, buffer, buflen, errnop);
	/* ERANGE (or a transient EAGAIN): the caller retries, and must get
	 * this same entry, not the next one. */
	if (status == NSS_STATUS_TRYAGAIN) {
		if (name != pending_name)
			memcpy(pending_name, name, strlen(name) + 1);
		have_pending = true;
	}
	return status;
}

enum nss_status _nss_hardened_shadow_getspent_r(struct spwd *result, char *buffer,
						size_t buflen, int *errnop)
{
	enum nss_status status;
	struct dirent *de;

	pthread_mutex_lock(&ent_lock);
	if (!ent_dir) {
		/* getspent without setspent: start from the beginning, as
		 * glibc's files backend does. */
		status = ent_open_locked(errnop);
		if (status != NSS_STATUS_SUCCESS)
			goto out;
	}

	if (have_pending) {
		status = ent_try_locked(pending_name, result, buffer, buflen, errnop);
		if (status == NSS_STATUS_SUCCESS || status == NSS_STATUS_TRYAGAIN)
			goto out;
		/* The entry vanished or broke meanwhile: move on. */
		have_pending = false;
	}

	for (;;) {
		errno = 0;
		de = readdir(ent_dir);
		if (!de) {
			*errnop = errno ? errno : ENOENT;
			status = errno ? NSS_STATUS_UNAVAIL : NSS_STATUS_NOTFOUND;
			break;
		}
		/* ".", "..", reserved names ('.x', ':x', temporaries) and
		 * anything that is not a valid user name. */
		if (!hs_userdir_entry_is_user(de->d_name))
			continue;
		status = ent_try_locked(de->d_name, result, buffer, buflen, errnop);
		if (status == NSS_STATUS_SUCCESS || status == NSS_STATUS_TRYAGAIN)
			break;
		/* Unreadable, hostile or vanished entry: skip it so one
		 * bad directory cannot hide every account after it. */
	}
out:
	if (status == NSS_STATUS_SUCCESS)
		have_pending = false;
	pthread_mutex_unlock(&ent_lock);
	return status;
}
