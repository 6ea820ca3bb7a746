/* The one walker over trees a user may control: see walk.h for the rules. */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

/* How often a directory is read again (ops->rescan) before giving up:
 * a process holding an old fd into the tree could keep adding. */
#define WALK_MAX_PASSES 8

struct walker {
	const struct hs_walk_ops *ops;
	void *ctx;
	dev_t dev;              /* the mount the walk stays on: its device */
	uint64_t mnt_id;        /* ... and its mount id, when the kernel says */
	bool have_mnt_id;
	char path[(HS_WALK_MAX_DEPTH + 2) * (NAME_MAX + 1)];
	size_t len;
};

static void stat_from_statx(struct stat *st, const struct statx *sx)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->st_ino = sx->stx_ino;
	st->st_mode = sx->stx_mode;
	st->st_nlink = sx->stx_nlink;
	st->st_uid = sx->stx_uid;
	st->st_gid = sx->stx_gid;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = (blksize_t)sx->stx_blksize;
	st->st_blocks = (blkcnt_t)sx->stx_blocks;
	st->st_atim.tv_sec = sx->stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
}

#define WALK_STATX_MASK (STATX_BASIC_STATS | STATX_MNT_ID)
#define WALK_STATX_FLAGS (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_AS_STAT)
/* The look at a name before it is opened: from the cache.  A FUSE file
 * system the user mounted there with allow_other is asked nothing (a
 * synced statx waits for its daemon, for ever if it never answers) and
 * is refused as a mount point; type, inode and mount do not go stale,
 * and what a visitor sees comes from the opened entry's own statx. */
#define WALK_CHECK_FLAGS (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC)

/* Is what sx describes outside the walk's mount?  A mount root, another
 * mount id, or a directory on another device.  Only directories are
 * compared by device: on overlayfs, other files report their layer's. */
static bool other_mount(const struct walker *w, const struct statx *sx)
{
	if ((sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (sx->stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return true;
	if (w->have_mnt_id && (sx->stx_mask & STATX_MNT_ID) && sx->stx_mnt_id != w->mnt_id)
		return true;
	return S_ISDIR(sx->stx_mode) && makedev(sx->stx_dev_major, sx->stx_dev_minor) != w->dev;
}

/* The mount root attribute (5.8); before it, a different device from the
 * parent's, for a directory or what the cache gives no type for (FUSE
 * refusing root): on overlayfs, other files report their layer's. */
bool hs_walk_is_mount_point(int dirfd, const char *name)
{
	struct statx sx, parent;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, 0,
		  &sx) < 0)
		return false;
	if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	if ((sx.stx_mask & STATX_TYPE) && !S_ISDIR(sx.stx_mode))
		return false;
	return statx(dirfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &parent) == 0 &&
	       (sx.stx_dev_major != parent.stx_dev_major ||
		sx.stx_dev_minor != parent.stx_dev_minor);
}

/* One line of /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTS
 * [TAGS...] - TYPE SOURCE SUPEROPTS"; the source may hold spaces only
 * escaped (\040), so the super options are the last field. */
static bool mountinfo_users_fuse(char *line)
{
	const char *sep = strstr(line, " - "), *type, *opts, *u;

	line[strcspn(line, "\n")] = '\0';
	opts = strrchr(line, ' ');
	if (!sep || !opts)
		return false;
	type = sep + 3;
	if (strncmp(type, "fuse ", 5) != 0 && strncmp(type, "fuse.", 5) != 0 &&
	    strncmp(type, "fuseblk ", 8) != 0)
		return false;
	for (u = strstr(opts, "user_id="); u; u = strstr(u + 1, "user_id="))
		if (u[-1] == ' ' || u[-1] == ',')
			return strtoul(u + 8, NULL, 10) != 0;
	return false;
}

bool hs_walk_is_users_fuse(int dirfd, const char *name)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	struct statx sx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID) ||
	    !hs_walk_is_mount_point(dirfd, name))
		return false;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && getline(&line, &size, f) > 0)
		if (strtoull(line, NULL, 10) == sx.stx_mnt_id)
			return mountinfo_users_fuse(line);
	return false;
}

static int refuse(struct walker *w, struct hs_walk_entry *e, enum hs_walk_refusal why, int err)
{
	if (!w->ops->refused)
		return err;
	return w->ops->refused(e, why, err, w->ctx);
}

static int visit(struct walker *w, int parentfd, const char *name, unsigned depth);

/* An error of an entry below the top that a file system of the user's
 * there can cause (HS_WALK_DENIED): refused, as a mount point is. */
static bool denied(int err, unsigned depth)
{
	return depth > 0 && (err == EACCES || err == EPERM || err == ENOTCONN || err == ELOOP);
}

/* The entries of the opened directory e; with rescan, again until a pass
 * finds nothing it did not refuse. */
static int walk_entries(struct walker *w, const struct hs_walk_entry *e)
{
	_cleanup_close_ int dupfd = fcntl(e->fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);
	int r = 0;

	if (!d)
		return -errno;
	dupfd = -1;     /* d owns it now */
	for (int pass = 0; pass < WALK_MAX_PASSES; pass++) {
		bool found = false;

		if (pass > 0)
			rewinddir(d);
		for (;;) {
			struct dirent *de;

			errno = 0;
			de = readdir(d);
			if (!de) {
				r = errno ? -errno : 0;
				break;
			}
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			r = visit(w, e->fd, de->d_name, e->depth + 1);
			if (r < 0)
				break;
			if (r > 0)
				found = true;
			r = 0;
		}
		if (r < 0 || !w->ops->rescan || !found)
			break;
		if (pass == WALK_MAX_PASSES - 1)
			r = -ENOTEMPTY;
	}
	closedir(d);
	return r;
}

/* Check, open and hand on the entry e names (its path already in
 * w->path).  Returns as visit() does. */
static int visit_entry(struct walker *w, struct hs_walk_entry *e)
{
	_cleanup_close_ int fd = -1;
	struct statx checked, opened;
	bool top = e->depth == 0;
	int r = 0;

	if (statx(e->parentfd, e->name, WALK_CHECK_FLAGS, WALK_STATX_MASK, &checked) < 0) {
		if (denied(errno, e->depth))
			return refuse(w, e, HS_WALK_DENIED, -errno);
		return errno == ENOENT && !top ? 0 : -errno;  /* gone meanwhile: nothing to do */
	}
	stat_from_statx(&e->st, &checked);
	if (other_mount(w, &checked))
		return refuse(w, e, HS_WALK_MOUNT, -EXDEV);
	if (S_ISDIR(checked.stx_mode) && e->depth >= HS_WALK_MAX_DEPTH)
		return refuse(w, e, HS_WALK_TOO_DEEP, -ENAMETOOLONG);
	if (S_ISDIR(checked.stx_mode))
		fd = openat(e->parentfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |
			    O_NONBLOCK | O_NOCTTY);
	else
		fd = openat(e->parentfd, e->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !top)
			return 0;
		if (errno == ELOOP || errno == ENOTDIR)
			return refuse(w, e, HS_WALK_SWAPPED, -ESTALE);
		if (denied(errno, e->depth))
			return refuse(w, e, HS_WALK_DENIED, -errno);
		return -errno;
	}
	/* act only on what was opened, and only if it is what was checked */
	if (statx(fd, "", AT_EMPTY_PATH | WALK_STATX_FLAGS, WALK_STATX_MASK, &opened) < 0)
		return denied(errno, e->depth) ? refuse(w, e, HS_WALK_DENIED, -errno) : -errno;
	if (opened.stx_ino != checked.stx_ino ||
	    opened.stx_dev_major != checked.stx_dev_major ||
	    opened.stx_dev_minor != checked.stx_dev_minor ||
	    (opened.stx_mode & S_IFMT) != (checked.stx_mode & S_IFMT))
		return refuse(w, e, HS_WALK_SWAPPED, -ESTALE);
	if (other_mount(w, &opened))
		return refuse(w, e, HS_WALK_MOUNT, -EXDEV);
	e->fd = fd;
	stat_from_statx(&e->st, &opened);
	if (S_ISDIR(e->st.st_mode)) {
		r = w->ops->pre ? w->ops->pre(e, w->ctx) : HS_WALK_CONTINUE;
		if (r == HS_WALK_CONTINUE)
			r = walk_entries(w, e);
		else if (r == HS_WALK_SKIP)
			r = 0;
	}
	if (r == 0 && w->ops->post)
		r = w->ops->post(e, w->ctx);
	return r == 0 ? 1 : r;
}

/* Visit parentfd/name.  Returns 1 when it was visited, 0 when it was
 * left alone (vanished, refused and skipped), or a negative error. */
static int visit(struct walker *w, int parentfd, const char *name, unsigned depth)
{
	struct hs_walk_entry e = { .parentfd = parentfd, .name = name, .fd = -1,
				   .depth = depth, .path = w->path };
	size_t saved_len = w->len;
	size_t nlen = strlen(name);
	int r;

	if (depth > 0) {
		if (w->len + nlen + 2 > sizeof(w->path))
			return -ENAMETOOLONG;
		if (w->len)
			w->path[w->len++] = '/';
		memcpy(w->path + w->len, name, nlen + 1);
		w->len += nlen;
	}
	r = visit_entry(w, &e);
	w->len = saved_len;
	w->path[w->len] = '\0';
	return r;
}

/* Start a walk of the mount reffd is on (*out, for the caller to free). */
static int walker_new(struct walker **out, int reffd, const struct hs_walk_ops *ops, void *ctx)
{
	struct walker *w = *out = calloc(1, sizeof(struct walker));
	struct statx sx;

	if (!w)
		return -ENOMEM;
	/* "." rather than AT_EMPTY_PATH so that AT_FDCWD works too */
	if (statx(reffd, ".", AT_STATX_SYNC_AS_STAT, WALK_STATX_MASK, &sx) < 0)
		return -errno;
	w->ops = ops;
	w->ctx = ctx;
	w->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	w->have_mnt_id = (sx.stx_mask & STATX_MNT_ID) != 0;
	w->mnt_id = sx.stx_mnt_id;
	return 0;
}

int hs_walk_at(int dirfd, const char *name, const struct hs_walk_ops *ops, void *ctx)
{
	_cleanup_free_ struct walker *w = NULL;
	int r;

	if (!hs_fileio_is_single_component(name))
		return -EINVAL;
	r = walker_new(&w, dirfd, ops, ctx);
	if (r == 0)
		r = visit(w, dirfd, name, 0);
	return r < 0 ? r : 0;
}

int hs_walk_below(int fd, const struct hs_walk_ops *ops, void *ctx)
{
	struct hs_walk_entry top = { .parentfd = -1, .name = ".", .path = "", .fd = fd };
	_cleanup_free_ struct walker *w = NULL;
	int r;

	if (fstat(fd, &top.st) < 0)
		return -errno;
	if (!S_ISDIR(top.st.st_mode))
		return -ENOTDIR;
	r = walker_new(&w, fd, ops, ctx);
	/* its listing starts at the beginning: the walk reads through a
	 * dup of fd, which shares its offset, left at the end by a walk
	 * before (usermod -u walks a home again after a swap) */
	if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
	if (r == 0)
		r = walk_entries(w, &top);
	return r < 0 ? r : 0;
}

int hs_walk_chown(const struct hs_walk_entry *e, uid_t uid, gid_t gid)
{
	if (uid == (uid_t)-1 && gid == (gid_t)-1)
		return 0;
	/* a second name may be another user's (or root's) file linked in:
	 * changing it would change theirs */
	if (!S_ISDIR(e->st.st_mode) && e->st.st_nlink > 1)
		return -HS_E_NLINK;
	/* through the fd: the entry itself, even a symlink (O_PATH) */
	if (fchownat(e->fd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

int hs_walk_take_away(int fd, struct stat *saved)
{
	if (fstat(fd, saved) < 0)
		return -errno;
	if (!S_ISDIR(saved->st_mode))
		return -ENOTDIR;
	/* owner first: from then on only root can change the mode */
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0700) < 0)
		return -errno;
	return 0;
}

int hs_walk_hand_back(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	if (fchmod(fd, mode & 07777) < 0 || fchown(fd, uid, gid) < 0)
		return -errno;
	return 0;
}

/* ---- removal ---- */

struct remove_ctx {
	char *where;
	const struct stat *top; /* what name must still be, or NULL */
};

/* Is e, the top (name), no longer what the caller opened and took away
 * (c->top)?  Whoever owns the directory holding it may have renamed
 * another directory to its name since: the walk goes by name. */
static bool top_replaced(const struct hs_walk_entry *e, const struct remove_ctx *c)
{
	return e->depth == 0 && c->top &&
	       (e->st.st_dev != c->top->st_dev || e->st.st_ino != c->top->st_ino);
}

/* pre of both walks; the check's post tests the top again, also when it
 * is not a directory (no pre). */
static int remove_check(const struct hs_walk_entry *e, void *ctx)
{
	return top_replaced(e, ctx) ? -ESTALE : HS_WALK_CONTINUE;
}

static int remove_refused(const struct hs_walk_entry *e, enum hs_walk_refusal why, int err,
			  void *ctx)
{
	struct remove_ctx *c = ctx;

	(void)why;
	free(c->where);
	c->where = strdup(e->path);
	return err;
}

/* post of the check: an entry that is immutable or append-only (chattr
 * +i, +a: an administrator's) cannot be unlinked, nor can what is in a
 * directory so marked; refused here, the removal never starts, rather
 * than stopping half-way at it with the rest of the home gone. */
static int remove_check_post(const struct hs_walk_entry *e, void *ctx)
{
	struct statx sx;

	if (top_replaced(e, ctx))
		return -ESTALE;
	if (statx(e->fd, "", AT_EMPTY_PATH | WALK_CHECK_FLAGS, 0, &sx) == 0 &&
	    (sx.stx_attributes & sx.stx_attributes_mask &
	     (STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND)))
		return remove_refused(e, HS_WALK_DENIED, -EPERM, ctx);
	return 0;
}

static int remove_post(const struct hs_walk_entry *e, void *ctx)
{
	if (top_replaced(e, ctx))
		return -ESTALE;
	/* by name, relative to the opened parent: an unlink only ever
	 * takes an entry out of that directory, whatever it names now */
	if (unlinkat(e->parentfd, e->name, S_ISDIR(e->st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
		if (errno == ENOENT && e->depth > 0)
			return 0;
		if (denied(errno, e->depth))
			return remove_refused(e, HS_WALK_DENIED, -errno, ctx);
		return -errno;
	}
	return 0;
}

int hs_walk_remove_at(int dirfd, const char *name, const struct stat *top, char **where)
{
	static const struct hs_walk_ops check = { .pre = remove_check, .post = remove_check_post,
						  .refused = remove_refused };
	static const struct hs_walk_ops rm = { .pre = remove_check, .post = remove_post,
					       .refused = remove_refused, .rescan = true };
	struct remove_ctx c = { .where = NULL, .top = top };
	int r;

	if (where)
		*where = NULL;
	/* first the whole tree is checked, so that a mount point or a too
	 * deep nest refuses the removal before anything is gone */
	r = hs_walk_at(dirfd, name, &check, &c);
	if (r == 0)
		r = hs_walk_at(dirfd, name, &rm, &c);
	if (where && r < 0)
		*where = c.where;
	else
		free(c.where);
	return r;
}

int hs_walk_remove_tree_at(int dirfd, const char *name)
{
	return hs_walk_remove_at(dirfd, name, NULL, NULL);
}
