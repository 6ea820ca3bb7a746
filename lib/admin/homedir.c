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

#include "cli.h"
#include "config.h"
#include "fileio.h"
#include "homepath.h"
#include "util.h"

/* How deep a skeleton may nest before copying stops there. */
#define SKEL_MAX_DEPTH 64

mode_t hs_home_mode(const struct hs_config *defs)
{
	long umask_v = hs_config_get_long(defs, "UMASK", 0, 0777, 022);

	return (mode_t)hs_config_get_long(defs, "HOME_MODE", 0, 07777, 0777 & ~umask_v);
}

/* See homedir.h. */
int hs_home_open_parent(const char *home, const char **last)
{
	const char *slash = home ? strrchr(home, '/') : NULL;
	_cleanup_free_ char *parent = NULL;

	/* the home itself must be one plain name below its parent: not "",
	 * "." or "..", checked before any parent is made */
	if (!slash || home[0] != '/' || !hs_is_single_component(slash + 1))
		return -EINVAL;
	*last = slash + 1;
	parent = strndup(home, (size_t)(slash - home));
	if (!parent)
		return -ENOMEM;
	if (!parent[0]) {
		free(parent);
		parent = strdup("/");
		if (!parent)
			return -ENOMEM;
	}
	for (char *p = parent + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;

			*p = '\0';
			/* our umask is 077 (hs_privileged_init): set the mode */
			if (mkdir(parent, 0755) == 0) {
				if (chmod(parent, 0755) < 0)
					return -errno;
			} else if (errno != EEXIST) {
				return -errno;
			}
			*p = saved;
			if (!saved)
				break;
		}
	}
	/* new homes go below directories only root controls */
	return hs_home_open_trusted_dir(parent, (uid_t)-1, true);
}

struct copy_ctx {
	uid_t uid;
	gid_t gid;
	const char *skel;
	bool failed;            /* something was not copied */
};

static void copy_warn(struct copy_ctx *c, const char *rel, const char *name, const char *what)
{
	hs_warn("%s/%s%s%s: %s", c->skel, rel, rel[0] ? "/" : "", name, what);
}

static int copy_file(struct copy_ctx *c, int srcdir, int dstdir, const char *name,
		     const struct stat *st)
{
	_cleanup_close_ int in = openat(srcdir, name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	_cleanup_close_ int out = -1;
	struct stat ist;
	struct timespec times[2];
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -errno;
	/* the entry may have been swapped since the lstat */
	if (fstat(in, &ist) < 0)
		return -errno;
	if (!S_ISREG(ist.st_mode) || ist.st_ino != st->st_ino || ist.st_dev != st->st_dev)
		return -HS_E_NOTREG;
	out = openat(dstdir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
	return 0;
}

/* Copy the skeleton directory srcdir into dstdir (both fds; dstdir is ours
 * and still root's), never following a symlink of the skeleton: a symlink
 * is copied as a symlink, FIFOs, devices and sockets are skipped with a
 * warning.  Everything created is given to the user by fd or with
 * AT_SYMLINK_NOFOLLOW. */
static void copy_tree(struct copy_ctx *c, int srcdir, int dstdir, const char *rel, int depth)
{
	int dupfd = fcntl(srcdir, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	struct dirent *de;

	if (!d) {
		hs_close(dupfd);
		hs_warn("cannot read %s/%s: %s", c->skel, rel, strerror(errno));
		c->failed = true;
		return;
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		struct stat st;
		int r = 0;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (fstatat(srcdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			copy_warn(c, rel, name, strerror(errno));
			c->failed = true;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub_src = -1;
			_cleanup_close_ int sub_dst = -1;
			_cleanup_free_ char *subrel = NULL;
			struct timespec times[2] = { st.st_atim, st.st_mtim };

			if (depth >= SKEL_MAX_DEPTH) {
				copy_warn(c, rel, name, "nested too deeply, not copied");
				c->failed = true;
				continue;
			}
			sub_src = hs_open_dir_at(srcdir, name, NULL);
			if (sub_src < 0 || mkdirat(dstdir, name, 0700) < 0 ||
			    (sub_dst = hs_open_dir_at(dstdir, name, NULL)) < 0) {
				copy_warn(c, rel, name, sub_src < 0 ? hs_strerror(sub_src)
						       : strerror(errno));
				c->failed = true;
				continue;
			}
			if (asprintf(&subrel, "%s%s%s", rel, rel[0] ? "/" : "", name) < 0) {
				subrel = NULL;
				c->failed = true;
				continue;
			}
			copy_tree(c, sub_src, sub_dst, subrel, depth + 1);
			if (fchown(sub_dst, c->uid, c->gid) < 0 ||
			    fchmod(sub_dst, st.st_mode & 07777) < 0) {
				copy_warn(c, rel, name, strerror(errno));
				c->failed = true;
			}
			(void)futimens(sub_dst, times);
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file(c, srcdir, dstdir, name, &st);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(srcdir, name, target, sizeof(target) - 1);
			struct timespec times[2] = { st.st_atim, st.st_mtim };

			if (n < 0) {
				r = -errno;
			} else if ((size_t)n >= sizeof(target) - 1) {
				r = -ENAMETOOLONG;
			} else {
				target[n] = '\0';
				if (symlinkat(target, dstdir, name) < 0 ||
				    fchownat(dstdir, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
					r = -errno;
				else
					(void)utimensat(dstdir, name, times, AT_SYMLINK_NOFOLLOW);
			}
		} else {
			copy_warn(c, rel, name, "not a regular file, directory or symbolic link, "
				  "not copied");
			continue;
		}
		if (r < 0) {
			copy_warn(c, rel, name, hs_strerror(r));
			c->failed = true;
		}
	}
	closedir(d);
}

/* Create the home (its parent path is an administrator's; the home itself
 * must not exist, and never as a symlink), copy the skeleton into it while
 * it is still root's 0700, then give it to the user. */
int hs_home_create(const char *home, const char *skel, uid_t uid, gid_t gid, mode_t mode)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int homefd = -1;
	const char *last;
	struct stat st;
	int r;

	parentfd = hs_home_open_parent(home, &last);
	if (parentfd < 0) {
		hs_warn("cannot create directory %s: %s", home,
			parentfd == -HS_E_OWNER ? "a directory above it is not root's or is "
			"writable by others" : hs_strerror(parentfd));
		return -1;
	}
	if (fstatat(parentfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			hs_warn("cannot create directory %s: it exists as a symbolic link", home);
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			hs_warn("cannot create directory %s: it exists and is not a directory",
				home);
			return -1;
		}
		hs_warn("warning: the home directory %s already exists.", home);
		hs_warn("Not copying any file from skel directory into it.");
		return HS_HOME_EXISTED;
	}
	if (mkdirat(parentfd, last, 0700) < 0) {
		hs_warn("cannot create directory %s: %s", home, strerror(errno));
		return -1;
	}
	homefd = hs_open_dir_at(parentfd, last, &st);
	if (homefd < 0 || st.st_uid != 0) {
		hs_warn("cannot create directory %s: %s", home,
			homefd < 0 ? hs_strerror(homefd) : "replaced while being created");
		return -1;
	}
	r = 0;
	if (skel && skel[0]) {
		_cleanup_close_ int skelfd = open(skel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct copy_ctx c = { .uid = uid, .gid = gid, .skel = skel, .failed = false };

		if (skelfd >= 0) {
			copy_tree(&c, skelfd, homefd, "", 0);
			r = c.failed ? -1 : 0;
		} else if (errno != ENOENT) {
			hs_warn("cannot open skeleton directory %s: %s", skel, strerror(errno));
			r = -1;
		}
	}
	if (fchown(homefd, uid, gid) < 0 || fchmod(homefd, mode) < 0) {
		hs_warn("cannot set owner and mode of %s: %s", home, strerror(errno));
		return -1;
	}
	return r;
}

int hs_home_make(const char *home, uid_t uid, gid_t gid, mode_t mode, struct stat *made)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int homefd = -1;
	const char *last;
	struct stat st;

	parentfd = hs_home_open_parent(home, &last);
	if (parentfd < 0)
		return parentfd;
	if (fstatat(parentfd, last, made, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* built as root's 0700 and handed over by fd: nothing the user
	 * could swap in between is ever chowned */
	if (mkdirat(parentfd, last, 0700) < 0)
		return errno == EEXIST ? -EAGAIN : -errno;
	homefd = hs_open_dir_at(parentfd, last, &st);
	if (homefd < 0)
		return homefd;
	if (st.st_uid != 0)
		return -ESTALE;
	if (fchown(homefd, uid, gid) < 0 || fchmod(homefd, mode) < 0) {
		int r = -errno;

		(void)unlinkat(parentfd, last, AT_REMOVEDIR);
		return r;
	}
	*made = st;
	return 1;
}

int hs_home_unmake(const char *home, const struct stat *made)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int homefd = -1;
	const char *last;
	struct stat st;

	parentfd = hs_home_open_parent(home, &last);
	if (parentfd < 0)
		return parentfd;
	homefd = hs_open_dir_at(parentfd, last, &st);
	if (homefd < 0)
		return homefd == -ENOENT ? 0 : homefd;
	if (st.st_dev != made->st_dev || st.st_ino != made->st_ino)
		return -ESTALE;
	/* taken back first: the owner can add nothing while it goes */
	if (fchown(homefd, 0, 0) < 0 || fchmod(homefd, 0700) < 0)
		return -errno;
	if (unlinkat(parentfd, last, AT_REMOVEDIR) < 0)
		return errno == EEXIST ? -ENOTEMPTY : -errno;
	return 0;
}
