/* Writing one per-user file, and the per-user write lock. */
#include "userdir.h"

#include <errno.h>
#include <fcntl.h>
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

/* Replace one file with the line a formatter made (formatted is its
 * result); the line is wiped and freed. */
static int write_line(int udirfd, const char *file, int formatted, char *line, uid_t uid,
		      gid_t gid, mode_t mode)
{
	_cleanup_secret_ char *owned = line;
	struct stat st;
	size_t len;
	int r;

	if (formatted < 0)
		return formatted;
	len = strlen(owned);
	/* what we write must be readable back */
	if (len > HS_USERFILE_MAX)
		return -HS_E_TOOBIG;
	r = hs_fileio_replace_at(udirfd, file, owned, len, uid, gid, mode);
	/* a user's directory that root took over (hs_userdir_take_over)
	 * while we held its lock is root's now and detached, or frozen on
	 * its way there: say so */
	if ((r == -EACCES || r == -ENOENT) && uid != 0 && fstat(udirfd, &st) == 0 &&
	    (st.st_uid == 0 || !(st.st_mode & S_IWUSR)))
		r = -HS_E_TAKEN;
	return r;
}

int hs_userdir_write_shadow(int udirfd, uid_t owner, gid_t auth_gid, const struct hs_shadow *r)
{
	char *line = NULL;
	int e = hs_records_shadow_format(r, &line);

	return write_line(udirfd, HS_FILE_SHADOW, e, line, owner, auth_gid, HS_SHADOW_MODE);
}

int hs_userdir_write_shell(int udirfd, uid_t owner, gid_t auth_gid, const char *shell)
{
	char *line = NULL;
	int e = hs_records_shell_format(shell, &line);

	return write_line(udirfd, HS_FILE_SHELL, e, line, owner, auth_gid, HS_SHELL_MODE);
}

int hs_userdir_write_aging(int udirfd, gid_t auth_gid, const struct hs_aging *r)
{
	char *line = NULL;
	int e = hs_records_aging_format(r, &line);

	return write_line(udirfd, HS_FILE_AGING, e, line, 0, auth_gid, HS_AGING_MODE);
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

int hs_userdir_lock(int udirfd, unsigned timeout_ms)
{
	int r;

	if (udirfd < 0)
		return -EBADF;
	r = hs_userdir_lock_until(udirfd, LOCK_EX, NULL, timeout_ms);
	if (r == 0)
		(void)hs_fileio_unlink_matching(udirfd, is_leftover, NULL);
	return r;
}

/* Can no user signal this process?  Only then may it hold the tree lock:
 * a setuid-root program a user started (su) has their real uid, and they
 * could stop it while it holds the lock. */
static bool no_user_can_stop_us(void)
{
	uid_t ruid, euid, suid;

	return getresuid(&ruid, &euid, &suid) == 0 && ruid == 0 && euid == 0 && suid == 0;
}

const char *hs_userdir_confine_path(char *buf, size_t size, const char *user)
{
	if (!hs_userdir_entry_is_user(user))
		return NULL;
	/* root may take the directory over (hs_userdir_take_over): a copy
	 * built beside it and exchanged with it in the tree */
	if (no_user_can_stop_us())
		return hs_userdir_path(buf, size, NULL, NULL);
	return hs_userdir_path(buf, size, user, NULL);
}

/* Is fd the directory at treefd/user?  1, 0, or a negative error. */
static int still_at_path(int treefd, const char *user, int fd)
{
	struct stat have, there;

	if (fstat(fd, &have) < 0)
		return -errno;
	if (fstatat(treefd, user, &there, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return have.st_dev == there.st_dev && have.st_ino == there.st_ino;
}

/* The user's lock was not free within HS_TAKE_OVER_MS: with the tree lock
 * held exclusively no root writer holds it, so whoever does is a process
 * a user can stop.  Returns 0 with the user's lock held (or, when the
 * directory is no longer the one at the path, without it, for the caller
 * to open the new one), or a negative error. */
static int take_over_if_held(int treefd, const char *user, int *udirfd, unsigned timeout_ms)
{
	int r = hs_userdir_lock_until(treefd, LOCK_EX, NULL, timeout_ms);

	if (r < 0)
		return r;
	r = hs_userdir_lock_until(*udirfd, LOCK_EX, NULL, 0);
	if (r == -HS_E_TIMEOUT) {
		r = still_at_path(treefd, user, *udirfd);
		if (r > 0)
			r = hs_userdir_take_over(treefd, user, udirfd);
	}
	/* back to sharing the tree with the other root writers */
	if (r >= 0 && flock(treefd, LOCK_SH) < 0)
		r = -errno;
	return r < 0 ? r : 0;
}

/* Replace *udirfd with the directory now at treefd/user, owned by
 * owner. */
static int reopen(int treefd, const char *user, uid_t owner, int *udirfd)
{
	int fd = hs_userdir_open(treefd, user, owner, NULL);

	if (fd < 0)
		return fd;
	hs_close(*udirfd);
	*udirfd = fd;
	return 0;
}

int hs_userdir_lock_at(int treefd, const char *user, int *udirfd, unsigned timeout_ms)
{
	bool root = no_user_can_stop_us();
	struct stat st;
	int r = 0;

	if (treefd < 0 || !udirfd || *udirfd < 0)
		return -EBADF;
	if (fstat(*udirfd, &st) < 0)
		return -errno;
	/* Root's writers open a directory replaced meanwhile again; a few
	 * times is plenty, only root replaces them. */
	for (int tries = 0; tries < 4; tries++) {
		if (root) {
			r = hs_userdir_lock_until(treefd, LOCK_SH, NULL, timeout_ms);
			if (r < 0)
				return r;
		}
		if (root && timeout_ms > HS_TAKE_OVER_MS) {
			r = hs_userdir_lock_until(*udirfd, LOCK_EX, NULL, HS_TAKE_OVER_MS);
			if (r == -HS_E_TIMEOUT)
				r = take_over_if_held(treefd, user, udirfd, timeout_ms);
		} else {
			r = hs_userdir_lock_until(*udirfd, LOCK_EX, NULL, timeout_ms);
		}
		if (r == 0)
			r = still_at_path(treefd, user, *udirfd);
		if (r > 0) {
			(void)hs_fileio_unlink_matching(*udirfd, is_leftover, NULL);
			if (root && hs_userdir_sweep_take_over(treefd, user))
				hs_userdir_thaw(*udirfd);
			return 0;
		}
		(void)hs_userdir_unlock_at(treefd, *udirfd);
		/* A user's process that waited while root replaced the
		 * directory must not write what it decided before root's
		 * change: it fails.  Root's writers read after locking. */
		if (r == 0)
			r = root ? reopen(treefd, user, st.st_uid, udirfd) : -HS_E_TAKEN;
		if (r < 0)
			return r;
		r = -ESTALE;
	}
	return r;
}

int hs_userdir_unlock_at(int treefd, int udirfd)
{
	int r = hs_userdir_unlock(udirfd);

	/* the tree lock, if this process took it (an O_PATH fd cannot be
	 * locked: EBADF) */
	if (flock(treefd, LOCK_UN) < 0 && errno != EBADF && r == 0)
		r = -errno;
	return r;
}

void hs_userdir_releasep(struct hs_userdir_held *held)
{
	if (held->fd < 0)
		return;
	(void)hs_userdir_unlock_at(held->treefd, held->fd);
	hs_close(held->fd);
	held->fd = -1;
}

int hs_userdir_lock_err(int treefd, const char *name, int *udirfd, unsigned timeout_ms,
			struct hs_err *err)
{
	char path[HS_PATHBUF_USER], why[64];
	int r = hs_userdir_lock_at(treefd, name, udirfd, timeout_ms);

	if (r < 0)
		hs_err_set(err, r, "cannot lock %s: %s", hs_userdir_path(path, sizeof(path), name, NULL),
			   hs_lock_strerror(r, timeout_ms, why, sizeof(why)));
	return r;
}

int hs_userdir_unlock(int udirfd)
{
	return flock(udirfd, LOCK_UN) < 0 ? -errno : 0;
}
