/* Writing one per-user file, and the per-user write lock. */
#include "userdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "layout.h"
#include "names.h"
#include "tempname.h"
#include "util.h"

/* Poll interval of hs_userdir_lock: short next to a password change or a
 * helper's 2 s failure delay, long enough not to spin. */
#define HS_LOCK_POLL_NSEC (20 * 1000 * 1000L)

/* Replace one file with a formatted line; the line is wiped and freed. */
static int write_line(int udirfd, const char *file, char *line, uid_t uid, gid_t gid,
		      mode_t mode)
{
	_cleanup_secret_ char *owned = line;
	size_t len = strlen(owned);

	/* what we write must be readable back */
	if (len > HS_USERFILE_MAX)
		return -HS_E_TOOBIG;
	return hs_fileio_replace_at(udirfd, file, owned, len, uid, gid, mode);
}

int hs_userdir_write_shadow(int udirfd, uid_t owner, gid_t auth_gid, const struct hs_shadow *r)
{
	char *line = NULL;
	int e;

	e = hs_records_shadow_format(r, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHADOW, line, owner, auth_gid, HS_SHADOW_MODE);
}

int hs_userdir_write_shell(int udirfd, uid_t owner, gid_t auth_gid, const char *shell)
{
	char *line = NULL;
	int e;

	e = hs_records_shell_format(shell, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHELL, line, owner, auth_gid, HS_SHELL_MODE);
}

int hs_userdir_write_aging(int udirfd, gid_t auth_gid, const struct hs_aging *r)
{
	char *line = NULL;
	int e;

	e = hs_records_aging_format(r, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_AGING, line, 0, auth_gid, HS_AGING_MODE);
}

static bool deadline_passed(const struct timespec *deadline)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return true;
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* Remove what writers killed between placing a temporary file and
 * renaming it left behind (".shadow.XXXXXXXXXXXX" ...).  Every writer of
 * the directory holds the lock from its temporary file to its rename, so
 * whoever holds the lock now owns no temporary there: they are all
 * leftovers.  Best effort: a leftover that cannot go now goes next time.
 * This bounds what a user can pile up by killing their own tools. */
static bool is_leftover(const char *name, void *ctx)
{
	static const char *const files[] = { HS_FILE_SHADOW, HS_FILE_SHELL, HS_FILE_AGING };

	(void)ctx;
	if (name[0] != '.')
		return false;
	for (size_t i = 0; i < HS_ARRAY_SIZE(files); i++)
		if (hs_tempname_is_for_file(name, files[i]))
			return true;
	return false;
}

static void sweep_leftovers(int udirfd)
{
	(void)hs_fileio_unlink_matching(udirfd, is_leftover, NULL);
}

/* Take an exclusive flock on fd by polling LOCK_NB until the deadline:
 * no alarm(), so it is safe in the PAM module, whose process's signal
 * handlers and timers are not ours to touch. */
static int flock_until(int fd, unsigned timeout_ms)
{
	struct timespec deadline;

	if (clock_gettime(CLOCK_MONOTONIC, &deadline) < 0)
		return -errno;
	hs_timespec_add_ms(&deadline, timeout_ms);
	for (;;) {
		struct timespec pause = { .tv_sec = 0, .tv_nsec = HS_LOCK_POLL_NSEC };

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (deadline_passed(&deadline))
			return -HS_E_TIMEOUT;
		/* an interrupted sleep only makes the next try earlier */
		(void)nanosleep(&pause, NULL);
	}
}

int hs_userdir_lock(int udirfd, unsigned timeout_ms)
{
	int r;

	if (udirfd < 0)
		return -EBADF;
	r = flock_until(udirfd, timeout_ms);
	if (r == 0)
		sweep_leftovers(udirfd);
	return r;
}

int hs_userdir_guess_lock(int udirfd, unsigned timeout_ms)
{
	int fd, r;

	if (udirfd < 0)
		return -EBADF;
	fd = openat(udirfd, HS_FILE_SHADOW, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = flock_until(fd, timeout_ms);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int hs_userdir_lock_err(int udirfd, const char *name, unsigned timeout_ms, struct hs_err *err)
{
	char path[HS_PATHBUF_USER], why[64];
	int r = hs_userdir_lock(udirfd, timeout_ms);

	if (r < 0)
		hs_err_set(err, r, "cannot lock %s: %s", hs_userdir_path(path, sizeof(path), name, NULL),
			   hs_lock_strerror(r, timeout_ms, why, sizeof(why)));
	return r;
}

int hs_userdir_unlock(int udirfd)
{
	if (flock(udirfd, LOCK_UN) < 0)
		return -errno;
	return 0;
}
