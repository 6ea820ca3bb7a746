/* Creating and removing a user's whole directory: root's restructuring,
 * which takes the directory away from the user first. */
#include "userdir.h"

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

#include "fileio.h"
#include "tempname.h"
#include "walk.h"
#include "layout.h"
#include "names.h"
#include "util.h"

static int write_new_files(int dfd, uid_t uid, gid_t auth_gid, char *shadow_line,
			   char *aging_line, char *shell_line)
{
	int r;

	r = hs_fileio_replace_at(dfd, HS_FILE_SHADOW, shadow_line, strlen(shadow_line),
			       uid, auth_gid, HS_SHADOW_MODE);
	if (r < 0)
		return r;
	r = hs_fileio_replace_at(dfd, HS_FILE_SHELL, shell_line, strlen(shell_line),
			       uid, auth_gid, HS_SHELL_MODE);
	if (r < 0)
		return r;
	return hs_fileio_replace_at(dfd, HS_FILE_AGING, aging_line, strlen(aging_line),
				  0, auth_gid, HS_AGING_MODE);
}

int hs_userdir_build(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                     const struct hs_shadow *shadow, const struct hs_aging *aging,
                     const char *shell, char *tmp, size_t tmp_size, struct stat *st)
{
	_cleanup_secret_ char *shadow_line = NULL;
	_cleanup_free_ char *aging_line = NULL, *shell_line = NULL;
	_cleanup_close_ int dfd = -1;
	bool made = false;
	int r;

	if (!hs_userdir_entry_is_user(user))
		return -HS_E_NAME;
	if (!shadow || !aging || !shell || uid == HS_ANY_UID || auth_gid == HS_ANY_GID)
		return -EINVAL;
	if (geteuid() != 0)
		return -EPERM;

	/* validate and format everything before touching the disk */
	r = hs_records_shadow_format(shadow, &shadow_line);
	if (r < 0)
		goto out;
	r = hs_records_aging_format(aging, &aging_line);
	if (r < 0)
		goto out;
	r = hs_records_shell_format(shell, &shell_line);
	if (r < 0)
		goto out;
	if (strlen(shadow_line) > HS_USERFILE_MAX || strlen(shell_line) > HS_USERFILE_MAX ||
	    strlen(aging_line) > HS_USERFILE_MAX) {
		r = -HS_E_TOOBIG;
		goto out;
	}

	for (int tries = 0; ; tries++) {
		r = hs_tempname_reserved("new", user, tmp, tmp_size);
		if (r < 0)
			goto out;
		if (mkdirat(treefd, tmp, 0700) == 0)
			break;
		if (errno != EEXIST || tries >= HS_TEMP_TRIES) {
			r = -errno;
			goto out;
		}
	}
	made = true;

	dfd = hs_fileio_open_dir_at(treefd, tmp, st);
	if (dfd < 0) {
		r = dfd;
		goto out;
	}
	/* Built as root:root 0700 whatever the tree's group, setgid bit or
	 * our umask would give: nobody but root sees it half-made. */
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0700) < 0) {
		r = -errno;
		goto out;
	}

	r = write_new_files(dfd, uid, auth_gid, shadow_line, aging_line, shell_line);
	if (r < 0)
		goto out;

	/* Hand it over: chown first, because chown may clear the set-id
	 * bits; then 02710 so new files inherit the auth group. */
	if (fchown(dfd, uid, auth_gid) < 0 || fchmod(dfd, HS_USERDIR_MODE) < 0) {
		r = -errno;
		goto out;
	}
	if (fsync(dfd) < 0 || fsync(treefd) < 0) {
		r = errno == EINVAL ? 0 : -errno;
		if (r < 0)
			goto out;
	}
	made = false;
	r = 0;

out:
	/* the cleanups free the lines and close dfd; a half-made
	 * directory is ours to remove */
	if (made)
		(void)hs_walk_remove_tree_at(treefd, tmp);
	return r;
}

int hs_userdir_create(int treefd, const char *user, uid_t uid, gid_t auth_gid,
		      const struct hs_shadow *shadow, const struct hs_aging *aging,
		      const char *shell)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	int r;

	r = hs_userdir_build(treefd, user, uid, auth_gid, shadow, aging, shell, tmp, sizeof(tmp),
			     &st);
	if (r < 0)
		return r;
	/* RENAME_NOREPLACE: an existing directory for this user (or
	 * anything else by that name) is never replaced */
	if (renameat2(treefd, tmp, treefd, user, RENAME_NOREPLACE) < 0) {
		r = -errno;
		(void)hs_walk_remove_tree_at(treefd, tmp);
		return r;
	}
	if (fsync(treefd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int hs_userdir_remove(int treefd, const char *user)
{
	char tmp[NAME_MAX + 1];
	struct stat st, moved;
	_cleanup_close_ int dfd = -1;
	int r;

	if (!hs_userdir_entry_is_user(user))
		return -HS_E_NAME;
	if (geteuid() != 0)
		return -EPERM;

	dfd = hs_fileio_open_dir_at(treefd, user, &st);
	if (dfd < 0)
		return dfd;
	/* Take it away from the user before working on it: from now on
	 * no process of theirs can add, swap or rename anything in it
	 * (except through an fd to a subdirectory opened earlier, which
	 * hs_walk_remove_tree_at copes with). */
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0700) < 0)
		return -errno;

	for (int tries = 0; ; tries++) {
		r = hs_tempname_reserved("del", user, tmp, sizeof tmp);
		if (r < 0)
			return r;
		if (renameat2(treefd, user, treefd, tmp, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST || tries >= HS_TEMP_TRIES)
			return -errno;
	}
	/* Only root writes the tree, but make sure what we renamed is the
	 * directory we took away, not something swapped in meanwhile. */
	if (fstatat(treefd, tmp, &moved, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (moved.st_dev != st.st_dev || moved.st_ino != st.st_ino)
		return -ESTALE;
	/* the user is gone from the tree as soon as this is durable */
	if (fsync(treefd) < 0 && errno != EINVAL)
		return -errno;

	r = hs_walk_remove_tree_at(treefd, tmp);
	if (r < 0)
		return r;
	if (fsync(treefd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}
