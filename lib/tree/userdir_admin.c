/* Creating and removing a user's whole directory: root's restructuring,
 * which takes the directory away from the user first. */
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

#include "fileio.h"
#include "tempname.h"
#include "walk.h"
#include "layout.h"
#include "names.h"
#include "selabel.h"
#include "util.h"

/* The three files of a user's directory: shadow and shell are the
 * user's, aging root's. */
static const struct {
	const char *name;
	bool roots;
	mode_t mode;
} user_files[] = {
	{ HS_FILE_SHADOW, false, HS_SHADOW_MODE },
	{ HS_FILE_SHELL, false, HS_SHELL_MODE },
	{ HS_FILE_AGING, true, HS_AGING_MODE },
};

/* The durable end of a change to the tree (a file system that cannot sync
 * a directory says EINVAL). */
static int sync_tree(int treefd)
{
	return fsync(treefd) < 0 && errno != EINVAL ? -errno : 0;
}

/* Is treefd/name (not followed) the file st describes?  0, -ESTALE, or
 * the error of looking. */
static int still_there(int treefd, const char *name, const struct stat *st)
{
	struct stat now;

	if (fstatat(treefd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return now.st_dev == st->st_dev && now.st_ino == st->st_ino ? 0 : -ESTALE;
}

/* Make treefd/.TAG.USER.XXXXXXXXXXXX (tmp; ".TAG.USER" when fixed) and
 * return its fd, root:root 0700 whatever the tree's group, setgid bit or
 * our umask would give: nobody but root sees it half-made.  On failure
 * nothing is left. */
static int make_private_dir(int treefd, const char *tag, const char *user, bool fixed,
			    char *tmp, size_t tmpsize)
{
	_cleanup_close_ int dfd = -1;
	int r;

	for (int tries = 0; ; tries++) {
		r = fixed ? hs_tempname_fixed(tag, user, tmp, tmpsize)
			  : hs_tempname_reserved(tag, user, tmp, tmpsize);
		if (r < 0)
			return r;
		if (hs_selabel_mkdirat(treefd, tmp, user, 0700) == 0)
			break;
		if (errno != EEXIST || fixed || tries >= HS_TEMP_TRIES)
			return -errno;
	}
	dfd = hs_fileio_open_dir_at(treefd, tmp, NULL);
	r = dfd < 0 ? dfd : 0;
	if (r == 0 && (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0700) < 0))
		r = -errno;
	if (r == 0)
		return TAKE_FD(dfd);
	(void)unlinkat(treefd, tmp, AT_REMOVEDIR);
	return r;
}

/* Give a directory built by make_private_dir to its user, durably: chown
 * first, because chown may clear the set-id bits; then 02710 so new files
 * inherit the auth group. */
static int hand_over(int dfd, uid_t uid, gid_t auth_gid)
{
	if (fchown(dfd, uid, auth_gid) < 0 || fchmod(dfd, HS_USERDIR_MODE) < 0 || fsync(dfd) < 0)
		return -errno;
	return 0;
}

/* ---- reserved directories and the tree's mark ----
 *
 * A reserved directory (.new.USER.*, .del.USER.*) outlives a tool killed
 * while it exists.  Finding such leftovers means listing the whole tree,
 * which costs O(users), so the tree carries HS_TREE_RESERVED_MARK while
 * one may exist: it is made before this process's first reserved
 * directory and removed when its last one is gone.  A killed tool leaves
 * the mark behind, and the next holder of the global locks sweeps
 * (hs_userdir_sweep_reserved).  Reserved directories are made only under
 * the global locks, so one process at a time counts them. */
static unsigned reserved_live;          /* this process's, in flight */
static bool mark_stays;                 /* it stands for a leftover too */

static int reserved_begin(int treefd)
{
	int fd;

	if (reserved_live++ > 0)
		return 0;
	fd = hs_selabel_openat(treefd, HS_TREE_RESERVED_MARK, NULL,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EEXIST) {
		reserved_live--;
		return -errno;
	}
	/* a mark already there stands for a leftover the sweep could not
	 * remove: it stays until one can */
	mark_stays = fd < 0;
	if (fd >= 0)
		close(fd);
	/* Not synced on its own: the reserved directory is made after it in
	 * the same directory, and a journaling file system never makes a
	 * later name durable without an earlier one; the builder's own
	 * fsync of the tree covers both.  (A sync per user would cost
	 * pwconv and newusers one disk flush each.) */
	return 0;
}

void hs_userdir_reserved_done(int treefd, bool removed)
{
	if (reserved_live == 0)
		return;         /* another process's, met in recovery */
	mark_stays |= !removed;
	if (--reserved_live > 0 || mark_stays)
		return;
	/* not synced: a mark that comes back after a crash costs one sweep */
	(void)unlinkat(treefd, HS_TREE_RESERVED_MARK, 0);
}

int hs_userdir_drop_reserved(int treefd, const char *tmp)
{
	int r = hs_walk_remove_tree_at(treefd, tmp);

	/* gone already: the commit's own undo removed it, and counted it */
	if (r != -ENOENT)
		hs_userdir_reserved_done(treefd, r == 0);
	return r == -ENOENT ? 0 : r;
}

int hs_userdir_sweep_reserved(int treefd)
{
	struct dirent *de;
	int removed = 0;
	bool left = false;
	DIR *d;

	if (faccessat(treefd, HS_TREE_RESERVED_MARK, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	d = hs_fileio_opendir_at(treefd);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (!hs_tempname_is_reserved(de->d_name))
			continue;
		if (hs_walk_remove_tree_at(treefd, de->d_name) == 0)
			removed++;
		else
			left = true;    /* the mark stays: the next holder tries again */
	}
	closedir(d);
	if (!left && reserved_live == 0) {
		(void)unlinkat(treefd, HS_TREE_RESERVED_MARK, 0);
		mark_stays = false;
	}
	return removed;
}

int hs_userdir_build(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                     const struct hs_shadow *shadow, const struct hs_aging *aging,
                     const char *shell, char *tmp, size_t tmp_size, struct stat *st)
{
	_cleanup_secret_ char *shadow_line = NULL;
	_cleanup_free_ char *aging_line = NULL, *shell_line = NULL;
	_cleanup_close_ int dfd = -1;
	int r;

	if (!hs_userdir_entry_is_user(user))
		return -HS_E_NAME;
	if (!shadow || !aging || !shell || uid == HS_ANY_UID || auth_gid == HS_ANY_GID)
		return -EINVAL;
	if (geteuid() != 0)
		return -EPERM;

	/* validate and format everything before touching the disk */
	r = hs_records_shadow_format(shadow, &shadow_line);
	if (r == 0)
		r = hs_records_aging_format(aging, &aging_line);
	if (r == 0)
		r = hs_records_shell_format(shell, &shell_line);
	if (r < 0)
		return r;
	const char *lines[] = { shadow_line, shell_line, aging_line };
	for (size_t i = 0; i < HS_ARRAY_SIZE(lines); i++)
		if (strlen(lines[i]) > HS_USERFILE_MAX)
			return -HS_E_TOOBIG;

	r = reserved_begin(treefd);
	if (r < 0)
		return r;
	dfd = make_private_dir(treefd, "new", user, false, tmp, tmp_size);
	if (dfd < 0) {
		hs_userdir_reserved_done(treefd, true);
		return dfd;
	}
	r = fstat(dfd, st) < 0 ? -errno : 0;
	for (size_t i = 0; i < HS_ARRAY_SIZE(lines) && r == 0; i++)
		r = hs_fileio_replace_at(dfd, user_files[i].name, lines[i], strlen(lines[i]),
					 user_files[i].roots ? 0 : uid, auth_gid, user_files[i].mode);
	if (r == 0)
		r = hand_over(dfd, uid, auth_gid);
	if (r == 0)
		r = sync_tree(treefd);
	if (r < 0) {
		/* a half-made directory is ours to remove */
		hs_userdir_reserved_done(treefd, hs_walk_remove_tree_at(treefd, tmp) == 0);
		return r;
	}
	return 0;
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
		hs_userdir_reserved_done(treefd, hs_walk_remove_tree_at(treefd, tmp) == 0);
		return r;
	}
	hs_userdir_reserved_done(treefd, true);
	return sync_tree(treefd);
}

int hs_userdir_remove(int treefd, const char *user)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
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

	r = reserved_begin(treefd);
	if (r < 0)
		return r;
	for (int tries = 0; ; tries++) {
		r = hs_tempname_reserved("del", user, tmp, sizeof tmp);
		if (r == 0 && renameat2(treefd, user, treefd, tmp, RENAME_NOREPLACE) == 0)
			break;
		if (r == 0)
			r = -errno;
		if (r != -EEXIST || tries >= HS_TEMP_TRIES) {
			hs_userdir_reserved_done(treefd, true);
			return r;
		}
	}
	/* Only root writes the tree, but make sure what we renamed is the
	 * directory we took away, not something swapped in meanwhile. */
	r = still_there(treefd, tmp, &st);
	/* the user is gone from the tree as soon as this is durable */
	if (r == 0)
		r = sync_tree(treefd);
	if (r == 0)
		r = hs_walk_remove_tree_at(treefd, tmp);
	/* a failure leaves the reserved directory, and the tree's mark with
	 * it, for the next holder of the locks */
	hs_userdir_reserved_done(treefd, r == 0);
	return r < 0 ? r : sync_tree(treefd);
}

/* ---- taking a directory over (hs_userdir_take_over) ---- */

#define HS_TAKE_OVER_TAG "swap"

static bool any_name(const char *name, void *ctx)
{
	(void)ctx;
	return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Remove treefd/name, a directory a take-over detached (or built and did
 * not finish): taken away first, then emptied of what our tools can put
 * there (files), then removed.  Best effort: whatever stays is root's,
 * 0700, at a reserved name, and the next take-over tries again.  Not the
 * walker: the self-service programs that link this never walk a tree. */
static bool remove_detached(int treefd, const char *name)
{
	_cleanup_close_ int fd = hs_fileio_open_dir_at(treefd, name, NULL);

	if (fd < 0)
		return false;
	if (fchown(fd, 0, 0) == 0 && fchmod(fd, 0700) == 0) {
		(void)hs_fileio_unlink_matching(fd, any_name, NULL);
		(void)unlinkat(treefd, name, AT_REMOVEDIR);
	}
	return true;
}

bool hs_userdir_sweep_take_over(int treefd, const char *user)
{
	char name[NAME_MAX + 1];

	return hs_tempname_fixed(HS_TAKE_OVER_TAG, user, name, sizeof name) == 0 &&
	       remove_detached(treefd, name);
}

void hs_userdir_thaw(int udirfd)
{
	struct stat st;

	if (fstat(udirfd, &st) == 0 && st.st_uid != 0 && !(st.st_mode & S_IWUSR))
		(void)fchmod(udirfd, (st.st_mode & 07777) | S_IWUSR);
}

/* Copy the three files from one directory of the user's to another, each
 * only if it passes the checks its readers apply (regular, one link, size
 * cap; shadow and shell owned by the user, aging by root): the copy trusts
 * nothing the original did not.  A file that fails is not copied; readers
 * of the original failed on it too (aging fails closed either way). */
static int copy_files(int from, int to, uid_t owner, gid_t auth_gid)
{
	char buf[HS_USERFILE_MAX + 2];
	int r = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(user_files) && r >= 0; i++) {
		uid_t uid = user_files[i].roots ? 0 : owner;
		const struct hs_file_expect ex = {
			.uid = uid, .gid = HS_ANY_GID, .max_size = HS_USERFILE_MAX,
		};
		size_t len;

		if (hs_fileio_read_trusted_at(from, user_files[i].name, &ex, buf, sizeof buf, &len,
					      NULL) < 0)
			continue;
		r = hs_fileio_replace_at(to, user_files[i].name, buf, len, uid, auth_gid,
					 user_files[i].mode);
	}
	hs_wipe(buf, sizeof buf);
	return r;
}

/* Build the copy of olddir, USER's directory, as treefd/tmp, locked and
 * handed over.  Returns its fd; on failure nothing is left. */
static int build_copy(int treefd, const char *user, int olddir, const struct stat *old,
		      gid_t auth_gid, char *tmp, size_t tmpsize)
{
	_cleanup_close_ int dfd = -1;
	int r;

	dfd = make_private_dir(treefd, HS_TAKE_OVER_TAG, user, true, tmp, tmpsize);
	if (dfd < 0)
		return dfd;
	r = copy_files(olddir, dfd, old->st_uid, auth_gid);
	if (r == 0)
		r = hand_over(dfd, old->st_uid, auth_gid);
	/* nobody else can have it yet: this cannot wait */
	if (r == 0 && flock(dfd, LOCK_EX | LOCK_NB) < 0)
		r = -errno;
	if (r < 0) {
		hs_close(TAKE_FD(dfd));
		remove_detached(treefd, tmp);
		return r;
	}
	return TAKE_FD(dfd);
}

int hs_userdir_take_over(int treefd, const char *user, int *udirfd)
{
	char tmp[NAME_MAX + 1];
	_cleanup_close_ int newfd = -1;
	struct stat old;
	gid_t auth_gid;
	int r;

	if (!hs_userdir_entry_is_user(user))
		return -HS_E_NAME;
	if (!udirfd || *udirfd < 0)
		return -EBADF;
	if (geteuid() != 0)
		return -EPERM;
	/* the leftover of a take-over killed before its exchange, and the
	 * freeze it left */
	if (hs_userdir_sweep_take_over(treefd, user))
		hs_userdir_thaw(*udirfd);
	if (fstat(*udirfd, &old) < 0)
		return -errno;
	r = hs_userdir_layout_gids(NULL, &auth_gid);
	if (r < 0)
		return r;

	newfd = build_copy(treefd, user, *udirfd, &old, auth_gid, tmp, sizeof tmp);
	if (newfd < 0)
		return newfd;
	/* Freeze the old directory before it leaves the path: its owner may
	 * add or replace nothing in it any more, so a process of theirs that
	 * resumes fails ("taken over") rather than write where nobody reads,
	 * also when this process is killed before the take-away below.  What
	 * one renamed into it before is copied again.  (An owner who makes it
	 * writable again fools only their own tool.) */
	r = fchmod(*udirfd, (old.st_mode & 07777) & ~(mode_t)S_IWUSR) < 0 ? -errno : 0;
	if (r == 0)
		r = copy_files(*udirfd, newfd, old.st_uid, auth_gid);
	/* one atomic step: the path holds the old directory or the new one,
	 * whenever this process is killed */
	if (r == 0 && renameat2(treefd, tmp, treefd, user, RENAME_EXCHANGE) < 0)
		r = -errno;
	if (r < 0) {
		(void)fchmod(*udirfd, old.st_mode & 07777);
		remove_detached(treefd, tmp);
		return r;
	}
	r = sync_tree(treefd);
	/* Only root renames in the tree and the caller holds the tree lock;
	 * make sure what went out is the directory we copied all the same. */
	if (r == 0)
		r = still_there(treefd, tmp, &old);
	if (r < 0)
		return r;
	/* From now on no process of the user's can change the old directory,
	 * whatever fd or lock it kept, not even after making it writable
	 * again.  A rename one made all the same is copied again, under our
	 * lock, before root's write; later ones fail. */
	if (fchown(*udirfd, 0, 0) < 0 || fchmod(*udirfd, 0700) < 0)
		return -errno;
	r = copy_files(*udirfd, newfd, old.st_uid, auth_gid);
	if (r < 0)
		return r;
	remove_detached(treefd, tmp);
	hs_close(*udirfd);
	*udirfd = TAKE_FD(newfd);
	return 0;
}
