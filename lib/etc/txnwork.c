/* The home and tree work of a transaction (txn.h): renaming a directory
 * built whole into place and handing it over, removing a home or a user's
 * directory.  Only the tools that call hs_txn_work_enable link it: it
 * walks trees (lib/io/walk.c) and removes users' directories (lib/tree),
 * which the setid programs must not carry. */
#include "txn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "fileio.h"
#include "globalfile.h"
#include "layout.h"
#include "timeouts.h"
#include "userdir.h"
#include "util.h"
#include "walk.h"

static bool same_id(const struct stat *st, const struct hs_txn_id *id)
{
	return id->dev == (unsigned long long)st->st_dev &&
	       id->ino == (unsigned long long)st->st_ino;
}

/* The directory that holds w->path, only if it is still the one the
 * journal names (it was checked when the work was recorded: a home's
 * parent is root's and not writable by others). */
static int open_parent(const struct hs_txn_work *w, const char **last)
{
	const char *slash = strrchr(w->path, '/');
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!slash || !hs_fileio_is_single_component(slash + 1))
		return -EINVAL;
	*last = slash + 1;
	dir = slash == w->path ? strdup("/") : strndup(w->path, (size_t)(slash - w->path));
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || !same_id(&st, &w->parent))
		return -ESTALE;
	return TAKE_FD(fd);
}

/* NEW: rename tmp to path (never over anything), then hand path over.
 * Either step may have been done by an interrupted run already. */
static int forward_new(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int fd = -1;
	const char *last;
	struct stat st;
	int r;

	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd;
	if (fstatat(parentfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) || !same_id(&st, &w->self))
			return -ESTALE;
		bool gone;

		r = renameat2(parentfd, w->tmp, parentfd, last, RENAME_NOREPLACE) < 0 ? -errno : 0;
		gone = r == 0;
		/* the name was taken meanwhile: our copy goes */
		if (r == -EEXIST)
			gone = hs_walk_remove_tree_at(parentfd, w->tmp) == 0;
		if (w->kind == HS_TXN_TREE_NEW)
			hs_userdir_reserved_done(parentfd, gone);
		if (r < 0)
			return r;
	} else if (errno != ENOENT) {
		return -errno;
	}
	fd = hs_fileio_open_dir_at(parentfd, last, &st);
	if (fd < 0)
		return fd;
	if (!same_id(&st, &w->self))
		return -ESTALE;         /* not what we built */
	r = hs_walk_hand_back(fd, w->uid, w->gid, w->mode);
	if (r == 0) {
		(void)fsync(fd);
		(void)fsync(parentfd);
	}
	return r;
}

/* DEL: remove path, if it is still what the journal names (gone already:
 * removed by an interrupted run).  A user's directory goes through
 * lib/tree; a file or a symlink loses its name only; a home directory
 * is taken away, then removed through the one walker: a mount inside (or
 * a too deep nest) refuses before anything goes, and it is handed back as
 * it was. */
static int forward_del(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *where = NULL;
	const char *last;
	struct stat st, saved;
	int r;

	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd == -ENOENT ? 0 : parentfd;
	if (fstatat(parentfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!same_id(&st, &w->self))
		return -ESTALE;
	if (w->kind == HS_TXN_TREE_DEL) {
		r = hs_userdir_remove(parentfd, last);
		return r == -ENOENT ? 0 : r;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* a file or a symlink (a spool, a home that is a link): the
		 * name alone goes, never a tree swapped in under it since the
		 * check (EISDIR) */
		if (unlinkat(parentfd, last, 0) < 0)
			return errno == ENOENT ? 0 : -errno;
		(void)fsync(parentfd);
		return 0;
	}
	fd = hs_fileio_open_dir_at(parentfd, last, &st);
	if (fd < 0)
		return fd;
	if (!same_id(&st, &w->self))
		return -ESTALE;
	r = hs_walk_take_away(fd, &saved);
	if (r < 0)
		return r;
	r = hs_walk_remove_at(parentfd, last, &where);
	if (r == -EXDEV || r == -ENAMETOOLONG) {
		(void)hs_walk_hand_back(fd, w->uid, w->gid, w->mode);
		snprintf(w->where, sizeof(w->where), "%s", where ? where : "");
	}
	if (r == 0)
		(void)fsync(parentfd);
	return r;
}

static int work_forward(struct hs_txn_work *w)
{
	switch (w->kind) {
	case HS_TXN_TREE_NEW:
	case HS_TXN_HOME_NEW:
		return forward_new(w);
	case HS_TXN_TREE_DEL:
	case HS_TXN_HOME_DEL:
		return forward_del(w);
	}
	return -EINVAL;
}

/* Before the commit point: the reserved directory of a NEW piece goes
 * (self unknown: the journal was prepared before it was made; the
 * random name is ours alone). */
static int work_back(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	const char *last;
	struct stat st;
	int r;

	if (w->kind != HS_TXN_TREE_NEW && w->kind != HS_TXN_HOME_NEW)
		return 0;
	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd == -ENOENT ? 0 : parentfd;
	if (fstatat(parentfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode) || ((w->self.dev || w->self.ino) && !same_id(&st, &w->self)))
		return -ESTALE;
	r = hs_walk_remove_tree_at(parentfd, w->tmp);
	if (w->kind == HS_TXN_TREE_NEW)
		hs_userdir_reserved_done(parentfd, r == 0);
	return r;
}

/* The tree's reserved directories (.new.USER.*, .del.USER.*) are made
 * only under the global locks, which the caller holds, and a committed
 * journal's were put in place before this runs: every one left is a
 * killed tool's, never a live user's directory (that is always at the
 * user's name).  The tree's mark says whether there can be any, so that
 * the common case costs one lookup, not a listing of every user. */
static int work_sweep(int dirfd)
{
	const char *tree = strrchr(HS_TREE_DIR, '/') + 1;
	_cleanup_close_ int treefd = -1;
	int r;

	treefd = openat(dirfd, tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (treefd < 0)
		return 0;
	r = hs_userdir_sweep_reserved(treefd);
	return r < 0 ? 0 : r;
}

int hs_txn_work_tree_new(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                         const struct hs_shadow *shadow, const struct hs_aging *aging,
                         const char *shell, struct hs_txn_work *w, char *path, char *tmp,
                         struct hs_err *err)
{
	struct stat st, tree;
	int r;

	hs_userdir_path(path, HS_PATHBUF_USER, user, NULL);
	if (fstatat(treefd, user, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		hs_err_setl(err, 0, LOG_WARNING, "removing %s, left over without a passwd line",
			    path);
		r = hs_userdir_remove(treefd, user);
		if (r < 0 && r != -ENOENT) {
			hs_err_add(err, "cannot remove %s: %s", path, hs_strerror(r));
			return r;
		}
	}
	r = fstat(treefd, &tree) < 0 ? -errno : 0;
	if (r == 0)
		r = hs_userdir_build(treefd, user, uid, auth_gid, shadow, aging, shell, tmp,
				     NAME_MAX + 1, &st);
	if (r < 0) {
		hs_err_add(err, "cannot create %s: %s", path, hs_strerror(r));
		return r;
	}
	*w = (struct hs_txn_work){
		.kind = HS_TXN_TREE_NEW, .path = path, .tmp = tmp, .uid = uid, .gid = auth_gid,
		.mode = HS_USERDIR_MODE, .parent = { tree.st_dev, tree.st_ino },
		.self = { st.st_dev, st.st_ino },
	};
	return 0;
}

/* A journal left with work pending is finished now, under the locks as
 * always, while the tool can still reach every path: once it confines
 * itself (Landlock) to its own job's paths, a home the journal names
 * elsewhere would be out of its reach.  A journal written after this look
 * (a tool killed meanwhile) is met at the tool's own locking; what its
 * confinement refuses there is said and left for the next tool. */
static void finish_pending_work(void)
{
	static const char *const files[] = {
		HS_ETC_PASSWD, HS_ETC_SHADOW, HS_ETC_GROUP, HS_ETC_GSHADOW, HS_ETC_SUBUID,
		HS_ETC_SUBGID,
	};
	struct hs_locks l;

	if (geteuid() != 0 ||
	    faccessat(AT_FDCWD, HS_ETC_DIR "/" HS_TXN_JOURNAL, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (hs_globalfile_lock(&l, NULL, files, HS_ARRAY_SIZE(files), HS_LOCK_TIMEOUT_MS, NULL) == 0)
		hs_globalfile_unlock(&l);
}

void hs_txn_work_enable(void)
{
	static const struct hs_txn_work_ops ops = {
		.forward = work_forward, .back = work_back, .sweep = work_sweep,
	};

	hs_txn_set_work_ops(&ops);
	finish_pending_work();
}
