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
	size_t len = strlen(line);
	int r;

	/* what we write must be readable back */
	if (len > HS_USERFILE_MAX)
		r = -HS_E_TOOBIG;
	else
		r = hs_replace_file_at(udirfd, file, line, len, uid, gid, mode);
	hs_wipe(line, len);
	free(line);
	return r;
}

int hs_userdir_write_shadow(int udirfd, uid_t owner, gid_t auth_gid, const struct hs_shadow *r)
{
	char *line = NULL;
	int e;

	e = hs_shadow_format(r, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHADOW, line, owner, auth_gid, HS_SHADOW_MODE);
}

int hs_userdir_write_shell(int udirfd, uid_t owner, gid_t auth_gid, const char *shell)
{
	char *line = NULL;
	int e;

	e = hs_shell_format(shell, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHELL, line, owner, auth_gid, HS_SHELL_MODE);
}

int hs_userdir_write_aging(int udirfd, gid_t auth_gid, const struct hs_aging *r)
{
	char *line = NULL;
	int e;

	e = hs_aging_format(r, &line);
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
static void sweep_leftovers(int udirfd)
{
	static const char *const files[] = { HS_FILE_SHADOW, HS_FILE_SHELL, HS_FILE_AGING };
	int fd = openat(udirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			continue;
		for (size_t i = 0; i < HS_ARRAY_SIZE(files); i++)
			if (hs_tempname_is_for_file(de->d_name, files[i]))
				(void)unlinkat(udirfd, de->d_name, 0);
	}
	closedir(d);
}

int hs_userdir_lock(int udirfd, unsigned timeout_ms)
{
	struct timespec deadline;

	if (udirfd < 0)
		return -EBADF;
	if (clock_gettime(CLOCK_MONOTONIC, &deadline) < 0)
		return -errno;
	hs_timespec_add_ms(&deadline, timeout_ms);
	/* Polling, not a blocking flock under alarm(): this runs inside the
	 * PAM module, in processes whose signal handlers and timers are not
	 * ours to touch. */
	for (;;) {
		struct timespec pause = { .tv_sec = 0, .tv_nsec = HS_LOCK_POLL_NSEC };

		if (flock(udirfd, LOCK_EX | LOCK_NB) == 0) {
			sweep_leftovers(udirfd);
			return 0;
		}
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

int hs_userdir_lock_report(int udirfd, const char *name, unsigned timeout_ms)
{
	char path[HS_PATHBUF_USER];
	int r = hs_userdir_lock(udirfd, timeout_ms);

	if (r < 0)
		hs_warn_lock(hs_userdir_path(path, sizeof(path), name, NULL), r, timeout_ms);
	return r;
}

int hs_userdir_unlock(int udirfd)
{
	if (flock(udirfd, LOCK_UN) < 0)
		return -errno;
	return 0;
}
