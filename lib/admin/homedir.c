/* Home directories made by root for a user: see homedir.h.  (Moved here
 * from useradd so useradd -m and newusers share one careful copy.) */
#include "homedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "homepath.h"
#include "selabel.h"
#include "tempname.h"
#include "util.h"
#include "walk.h"

mode_t hs_homedir_mode(const struct hs_config *defs)
{
	long umask_v = hs_config_get_long(defs, "UMASK", 0, 0777, 022);

	return (mode_t)hs_config_get_long(defs, "HOME_MODE", 0, 07777, 0777 & ~umask_v);
}

/* See homedir.h. */
void hs_homedir_confine_rules(const char *home, char *buf, size_t size,
			   struct hs_confine_rule out[HS_HOME_CONFINE_RULES])
{
	struct statx sx;
	struct stat st;
	unsigned parent_access;
	char *slash;
	bool exists;

	out[0] = (struct hs_confine_rule){ NULL, 0 };
	out[1] = (struct hs_confine_rule){ NULL, 0 };
	out[2] = (struct hs_confine_rule){ "/", HS_CONFINE_LIST };
	if (!home || home[0] != '/' || (size_t)snprintf(buf, size, "%s", home) >= size)
		return;
	/* its type from the cache: a FUSE file system the user mounted on
	 * the home with allow_other is asked nothing (a synced stat waits
	 * for its daemon, for ever if it never answers); the tools refuse it
	 * as a mount point next */
	exists = statx(AT_FDCWD, home, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		       STATX_TYPE, &sx) == 0;
	/* a home that is a symlink (or a file) is removed with unlink */
	parent_access = !exists ? HS_CONFINE_WRITE :
			S_ISDIR(sx.stx_mode) ? HS_CONFINE_ENTRIES : HS_CONFINE_ENTRIES | HS_CONFINE_UNLINK;
	out[0] = (struct hs_confine_rule){ home, HS_CONFINE_WRITE | HS_CONFINE_NOFOLLOW };
	do {
		slash = strrchr(buf, '/');
		slash[slash == buf ? 1 : 0] = '\0';
	} while (slash != buf && stat(buf, &st) < 0);
	out[1] = (struct hs_confine_rule){ buf, parent_access };
}

/* Make the missing directories of parent, each below the one opened
 * before it (fd, trusted: root's and not writable by others), never
 * through a symlink, its mode set through its own fd.  Only root can add
 * to a trusted directory, so nobody can swap what we just made. */
static int make_missing(int fd, const char *rest)
{
	_cleanup_close_ int cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	_cleanup_free_ char *names = strdup(rest);     /* strtok_r cuts it */
	char *comp, *save = NULL;

	if (cur < 0)
		return -errno;
	if (!names)
		return -ENOMEM;
	for (comp = strtok_r(names, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		struct stat st;
		bool made = hs_selabel_mkdirat(cur, comp, NULL, 0755) == 0;
		int next;

		if (!made && errno != EEXIST)
			return -errno;
		next = hs_fileio_open_dir_at(cur, comp, &st);
		if (next < 0)
			return next;
		hs_close(cur);
		cur = next;
		/* our umask is 077 (hs_privs_init): set the mode */
		if (made && st.st_uid == 0 && fchmod(cur, 0755) < 0)
			return -errno;
	}
	return 0;
}

/* dir, root's as named and as resolved (hs_homepath_open_root_dir) */
static int open_root_dir(const char *dir)
{
	_cleanup_free_ char *resolved = NULL;

	return hs_homepath_open_root_dir(dir, &resolved);
}

int hs_homedir_open_parent(const char *home, const char **last)
{
	const char *slash = home ? strrchr(home, '/') : NULL;
	_cleanup_free_ char *parent = NULL;
	_cleanup_free_ char *have = NULL;
	struct stat st;

	/* the home itself must be one plain name below its parent: not "",
	 * "." or "..", checked before any parent is made */
	if (!slash || home[0] != '/' || !hs_fileio_is_single_component(slash + 1))
		return -EINVAL;
	*last = slash + 1;
	/* the parent of "/x" is "/" */
	parent = strndup(home, slash == home ? 1 : (size_t)(slash - home));
	have = parent ? strdup(parent) : NULL;
	if (!have)
		return -ENOMEM;
	/* the part of the path that exists must be root's before anything
	 * is made below it: made by path below a user's directory, a new
	 * directory could be swapped for a symlink before its chmod.  Root's
	 * as named too, not only as resolved (hs_homepath_open_root_dir): a
	 * user's link in sticky /tmp to /etc/cron.d leads to root's
	 * directories, and the home would be made there */
	while (stat(have, &st) < 0) {
		char *cut = strrchr(have, '/');

		if ((errno != ENOENT && errno != ENOTDIR) || strcmp(have, "/") == 0)
			return -errno;
		cut[cut == have ? 1 : 0] = '\0';
	}
	if (strcmp(have, parent) != 0) {
		_cleanup_close_ int fd = open_root_dir(have);
		int r;

		if (fd < 0)
			return fd;
		r = make_missing(fd, parent + (strcmp(have, "/") == 0 ? 1 : strlen(have)));
		if (r < 0)
			return r;
	}
	/* new homes go below directories only root controls */
	return open_root_dir(parent);
}

struct copy_ctx {
	uid_t uid;
	gid_t gid;
	const char *skel;
	bool failed;            /* something was not copied */
	/* dst[d]: the copy of the skeleton's directory at depth d (dst[0]
	 * is the home), -1 where it could not be made */
	int dst[HS_WALK_MAX_DEPTH + 1];
	struct hs_err *err;     /* every warning, a line each */
};

static void copy_warn(struct copy_ctx *c, const struct hs_walk_entry *e, const char *what)
{
	hs_err_add(c->err, "%s/%s: %s", c->skel, e->path, what);
}

static int copy_file(struct copy_ctx *c, int dstdir, const struct hs_walk_entry *e)
{
	_cleanup_close_ int in = openat(e->parentfd, e->name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	_cleanup_close_ int out = -1;
	struct stat ist;
	struct timespec times[2];
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -errno;
	/* read only what the walker checked */
	if (fstat(in, &ist) < 0)
		return -errno;
	if (!S_ISREG(ist.st_mode) || ist.st_ino != e->st.st_ino || ist.st_dev != e->st.st_dev)
		return -ESTALE;
	out = hs_selabel_openat(dstdir, e->name, NULL,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	while ((n = hs_read_full(in, buf, sizeof(buf))) > 0) {
		int r = hs_write_full(out, buf, (size_t)n);

		if (r < 0)
			return r;
		if ((size_t)n < sizeof(buf))
			break;
	}
	if (n < 0)
		return (int)n;
	if (fchown(out, c->uid, c->gid) < 0 ||
	    fchmod(out, ist.st_mode & 01777) < 0)
		return -errno;
	times[0] = ist.st_atim;
	times[1] = ist.st_mtim;
	(void)futimens(out, times);
	/* durable before the journal says the home is complete */
	return fsync(out) < 0 ? -errno : 0;
}

static int copy_symlink(struct copy_ctx *c, int dstdir, const struct hs_walk_entry *e)
{
	struct timespec times[2] = { e->st.st_atim, e->st.st_mtim };
	char target[4096];
	/* the opened link itself (O_PATH), never a name looked up again */
	ssize_t n = readlinkat(e->fd, "", target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target) - 1)
		return -ENAMETOOLONG;
	target[n] = '\0';
	if (hs_selabel_symlinkat(target, dstdir, e->name) < 0 ||
	    fchownat(dstdir, e->name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	(void)utimensat(dstdir, e->name, times, AT_SYMLINK_NOFOLLOW);
	return 0;
}

/* A skeleton directory, before its entries: make its copy, root's 0700
 * until its entries are in. */
static int copy_pre(const struct hs_walk_entry *e, void *ctx)
{
	struct copy_ctx *c = ctx;
	int parent = c->dst[e->depth - 1];
	int fd;

	c->dst[e->depth] = -1;
	if (parent < 0)
		return HS_WALK_SKIP;
	if (hs_selabel_mkdirat(parent, e->name, NULL, 0700) < 0)
		fd = -errno;
	else
		fd = hs_fileio_open_dir_at(parent, e->name, NULL);
	if (fd < 0) {
		copy_warn(c, e, hs_strerror(fd));
		c->failed = true;
		return HS_WALK_SKIP;
	}
	c->dst[e->depth] = fd;
	return HS_WALK_CONTINUE;
}

/* Each skeleton entry (directories after theirs): copied into the copy
 * of its directory and given to the user by fd or AT_SYMLINK_NOFOLLOW. */
static int copy_post(const struct hs_walk_entry *e, void *ctx)
{
	struct copy_ctx *c = ctx;
	int dstdir = c->dst[e->depth - 1];
	int r = 0;

	if (S_ISDIR(e->st.st_mode)) {
		int fd = c->dst[e->depth];
		struct timespec times[2] = { e->st.st_atim, e->st.st_mtim };

		if (fd < 0)
			return 0;
		c->dst[e->depth] = -1;
		if (fchown(fd, c->uid, c->gid) < 0 || fchmod(fd, e->st.st_mode & 07777) < 0 ||
		    fsync(fd) < 0)
			r = -errno;
		else
			(void)futimens(fd, times);
		hs_close(fd);
	} else if (dstdir < 0) {
		return 0;
	} else if (S_ISREG(e->st.st_mode)) {
		r = copy_file(c, dstdir, e);
	} else if (S_ISLNK(e->st.st_mode)) {
		r = copy_symlink(c, dstdir, e);
	} else {
		copy_warn(c, e, "not a regular file, directory or symbolic link, not copied");
		return 0;
	}
	if (r < 0) {
		copy_warn(c, e, hs_strerror(r));
		c->failed = true;
	}
	return 0;
}

static int copy_refused(const struct hs_walk_entry *e, enum hs_walk_refusal why, int err,
			void *ctx)
{
	struct copy_ctx *c = ctx;

	copy_warn(c, e, why == HS_WALK_MOUNT ? "a mount point, not copied" :
		  why == HS_WALK_TOO_DEEP ? "nested too deeply, not copied" : hs_strerror(err));
	c->failed = true;
	return 0;
}

/* Copy the skeleton directory skelfd into homefd (ours, still root's)
 * through the one walker: a symlink is copied as a symlink, FIFOs,
 * devices and sockets are skipped with a warning, mounts inside the
 * skeleton are not entered. */
static void copy_skel(struct copy_ctx *c, int skelfd, int homefd)
{
	static const struct hs_walk_ops ops = { .pre = copy_pre, .post = copy_post,
						.refused = copy_refused };
	int r;

	c->dst[0] = homefd;
	r = hs_walk_below(skelfd, &ops, c);
	if (r < 0) {
		hs_err_add(c->err, "cannot read %s: %s", c->skel, hs_strerror(r));
		c->failed = true;
	}
	/* directories left open by a walk that stopped early */
	for (int d = 1; d <= HS_WALK_MAX_DEPTH; d++)
		if (c->dst[d] >= 0)
			hs_close(c->dst[d]);
}

/* "cannot create directory HOME: WHY" in *err; returns -1. */
static int create_failed(struct hs_err *err, const char *home, const char *why)
{
	return hs_err_set(err, -1, "cannot create directory %s: %s", home, why);
}

int hs_homedir_reserve(const char *home, struct hs_homedir_build *b, struct hs_err *err)
{
	const char *last;
	struct stat st;
	int r;

	b->parentfd = hs_homedir_open_parent(home, &last);
	if (b->parentfd < 0)
		return create_failed(err, home, b->parentfd == -HS_E_OWNER ? "a directory above "
				     "it is not root's or is writable by others" :
				     hs_strerror(b->parentfd));
	if (fstatat(b->parentfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return create_failed(err, home, "it exists as a symbolic link");
		if (!S_ISDIR(st.st_mode))
			return create_failed(err, home, "it exists and is not a directory");
		hs_err_set(err, 0, "warning: the home directory %s already exists.", home);
		hs_err_add(err, "Not copying any file from skel directory into it.");
		return HS_HOME_EXISTED;
	}
	if (fstat(b->parentfd, &b->parent) < 0)
		return create_failed(err, home, strerror(errno));
	r = hs_tempname_reserved("new", last, b->tmp, sizeof(b->tmp));
	if (r < 0)
		return create_failed(err, home, hs_strerror(r));
	return 0;
}

/* Build the home under its reserved name (nothing else may be there),
 * copy the skeleton into it while it is still root's 0700, and sync it
 * all; the journal's work renames it into place and hands it over. */
int hs_homedir_build(struct hs_homedir_build *b, const char *home, const char *skel, uid_t uid,
		  gid_t gid, struct hs_err *err)
{
	_cleanup_close_ int homefd = -1;
	int r = 0;

	if (hs_selabel_mkdirat(b->parentfd, b->tmp, home, 0700) < 0)
		return create_failed(err, home, strerror(errno));
	homefd = hs_fileio_open_dir_at(b->parentfd, b->tmp, &b->built);
	if (homefd < 0 || b->built.st_uid != 0) {
		(void)hs_walk_remove_tree_at(b->parentfd, b->tmp);
		return create_failed(err, home, homefd < 0 ? hs_strerror(homefd) :
				     "replaced while being created");
	}
	if (skel && skel[0]) {
		_cleanup_close_ int skelfd = open(skel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct copy_ctx c = { .uid = uid, .gid = gid, .skel = skel, .err = err };

		for (int d = 0; d <= HS_WALK_MAX_DEPTH; d++)
			c.dst[d] = -1;
		if (skelfd >= 0) {
			copy_skel(&c, skelfd, homefd);
			r = c.failed ? HS_HOME_INCOMPLETE : 0;
		} else if (errno != ENOENT) {
			hs_err_add(err, "cannot open skeleton directory %s: %s", skel,
				   strerror(errno));
			r = HS_HOME_INCOMPLETE;
		}
	}
	if (fsync(homefd) < 0 || fsync(b->parentfd) < 0) {
		hs_err_add(err, "cannot create directory %s: %s", home, strerror(errno));
		(void)hs_walk_remove_tree_at(b->parentfd, b->tmp);
		return -1;
	}
	return r;
}
