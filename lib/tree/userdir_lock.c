/* The per-user lock's polling, and the guess locks: what a program that
 * only checks passwords (su, newgrp, the PAM module, the password helper)
 * links of lib/tree besides reading, apart from every writer. */
#include "userdir.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "fileio.h"
#include "layout.h"
#include "util.h"

/* Poll interval of hs_userdir_lock: short next to a password change or a
 * helper's 2 s failure delay, long enough not to spin. */
#define HS_LOCK_POLL_NSEC (20 * 1000 * 1000L)

static bool deadline_passed(const struct timespec *deadline)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return true;
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* One try of a lock: a flock (op LOCK_EX or LOCK_SH) on fd, or, when
 * range is given, an open file description's record lock on it.  0, or
 * -errno (-EWOULDBLOCK when someone else holds it). */
static int try_lock(int fd, int op, const struct flock *range)
{
	if (range) {
		struct flock fl = *range;

		if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		/* a conflicting record lock: POSIX allows either */
		return errno == EACCES || errno == EAGAIN ? -EWOULDBLOCK : -errno;
	}
	return flock(fd, op | LOCK_NB) == 0 ? 0 : -errno;
}

int hs_userdir_lock_until(int fd, int op, const struct flock *range, unsigned timeout_ms)
{
	struct timespec deadline;

	if (clock_gettime(CLOCK_MONOTONIC, &deadline) < 0)
		return -errno;
	hs_timespec_add_ms(&deadline, timeout_ms);
	for (;;) {
		struct timespec pause = { .tv_sec = 0, .tv_nsec = HS_LOCK_POLL_NSEC };
		int r = try_lock(fd, op, range);

		if (r == 0)
			return 0;
		if (r == -EINTR)
			continue;
		if (r != -EWOULDBLOCK)
			return r;
		if (deadline_passed(&deadline))
			return -HS_E_TIMEOUT;
		/* an interrupted sleep only makes the next try earlier */
		(void)nanosleep(&pause, NULL);
	}
}

/* Check opened (an fd, or -1 with errno set by its open): a regular file
 * of uid's, one link; then take the lock on it (range: a record lock, else
 * the whole file's flock).  Returns the fd or an error; closes it on
 * failure. */
static int check_and_lock(int opened, uid_t uid, const struct flock *range, unsigned timeout_ms)
{
	const struct hs_file_expect ex = { .uid = uid, .gid = HS_ANY_GID };
	_cleanup_close_ int fd = opened;
	struct stat st;
	int r;

	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : hs_fileio_check_stat(&st, &ex);
	if (r == 0)
		r = hs_userdir_lock_until(fd, LOCK_EX, range, timeout_ms);
	return r < 0 ? r : TAKE_FD(fd);
}

int hs_userdir_guess_lock(int udirfd, unsigned timeout_ms)
{
	if (udirfd < 0)
		return -EBADF;
	/* root's file, which the user's tools never replace: a caller who
	 * could give the lock a new inode (as passwd gives shadow one) would
	 * run a guess under each */
	return check_and_lock(openat(udirfd, HS_FILE_AGING, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
				     O_CLOEXEC | O_NOCTTY), 0, NULL, timeout_ms);
}

/* The file locked is a regular file (a user's shadow may be anything its
 * owner put there), whoever's. */
int hs_userdir_guess_lock_for(int dirfd, const char *file, uid_t caller, unsigned timeout_ms)
{
	const struct flock range = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)caller, .l_len = 1,
	};
	int fd;

	if (dirfd < 0)
		return -EBADF;
	/* a record lock to write needs a descriptor open to write; it
	 * never writes */
	fd = openat(dirfd, file, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0 || (errno != EROFS && errno != EACCES && errno != EPERM))
		return check_and_lock(fd, HS_ANY_UID, &range, timeout_ms);
	/* a read-only tree, or a policy (SELinux) that lets us only read it:
	 * the whole file, one lock for every such caller */
	fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	return check_and_lock(fd, HS_ANY_UID, NULL, timeout_ms);
}

int hs_userdir_guess_lock_caller(int treefd, const char *name, uid_t caller, int dirfd,
                                 const char *file, unsigned timeout_ms, bool *own)
{
	_cleanup_close_ int udirfd = -1;

	if (treefd >= 0 && name)
		udirfd = hs_userdir_open(treefd, name, caller, NULL);
	*own = udirfd >= 0;
	if (udirfd >= 0)
		return hs_userdir_guess_lock(udirfd, timeout_ms);
	return hs_userdir_guess_lock_for(dirfd, file, caller, timeout_ms);
}
