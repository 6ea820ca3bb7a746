/* Removal of a directory tree that a user may still be changing: never
 * follows a symlink, never leaves the file system it started on, and
 * bounds its depth. */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

/* Directories nested deeper than this are refused by hs_remove_tree_at:
 * each level costs a stack frame and an fd, and the user controls the
 * depth. */
#define HS_REMOVE_MAX_DEPTH 64

static int remove_entry_at(int parentfd, dev_t parent_dev, const char *name, unsigned depth,
			   bool top);

/* Remove everything inside the directory d (which stays open). */
static int empty_dir(DIR *d, dev_t dev, unsigned depth)
{
	/* Deleting while reading a directory is allowed but may make
	 * readdir skip entries on some file systems; repeat until a pass
	 * finds nothing.  The directory was taken away from its user
	 * before we got here, but a process holding an old fd to a
	 * subdirectory could still add entries, hence the bound. */
	for (int pass = 0; pass < 8; pass++) {
		bool found = false;
		struct dirent *de;

		rewinddir(d);
		for (;;) {
			int r;

			errno = 0;
			de = readdir(d);
			if (!de) {
				if (errno)
					return -errno;
				break;
			}
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			found = true;
			r = remove_entry_at(dirfd(d), dev, de->d_name, depth, false);
			if (r < 0)
				return r;
		}
		if (!found)
			return 0;
	}
	return -ENOTEMPTY;
}

static int remove_entry_at(int parentfd, dev_t parent_dev, const char *name, unsigned depth,
			   bool top)
{
	/* The entry can only change type under us if someone still holds
	 * an fd to its parent; give such a race a few tries, then report. */
	for (int tries = 0; tries < 4; tries++) {
		struct stat st;
		DIR *d;
		int dfd, r, unlink_err;

		/* Anything but a directory (file, symlink, FIFO, socket,
		 * device) goes with a plain unlinkat, which never follows a
		 * symlink. */
		if (unlinkat(parentfd, name, 0) == 0)
			return 0;
		unlink_err = errno;
		if (unlink_err == ENOENT)
			return top ? -ENOENT : 0;  /* vanished under us: fine inside */
		/* Linux says EISDIR for a directory; POSIX allows EPERM */
		if (unlink_err != EISDIR && unlink_err != EPERM)
			return -unlink_err;

		if (depth >= HS_REMOVE_MAX_DEPTH)
			/* refused instead of recursing without bound;
			 * "file name too long" is what a path this deep
			 * would be */
			return -ENAMETOOLONG;

		dfd = hs_open_dir_at(parentfd, name, &st);
		if (dfd == -HS_E_SYMLINK || dfd == -HS_E_NOTDIR) {
			/* not a directory after all: a real EPERM
			 * (immutable file) is the answer; after EISDIR
			 * it was swapped for a non-directory, unlink it */
			if (unlink_err == EPERM)
				return -EPERM;
			continue;
		}
		if (dfd == -ENOENT)
			return top ? -ENOENT : 0;
		if (dfd < 0)
			return dfd;
		/* Never descend into another file system mounted below the
		 * tree: that would delete someone else's files. */
		if (st.st_dev != parent_dev) {
			hs_close(dfd);
			return -EXDEV;
		}
		d = fdopendir(dfd);
		if (!d) {
			r = -errno;
			hs_close(dfd);
			return r;
		}
		r = empty_dir(d, st.st_dev, depth + 1);
		closedir(d);
		if (r < 0)
			return r;
		if (unlinkat(parentfd, name, AT_REMOVEDIR) < 0) {
			if (errno == ENOENT && !top)
				return 0;
			return -errno;
		}
		return 0;
	}
	return -EAGAIN;
}

int hs_remove_tree_at(int dirfd, const char *name)
{
	struct stat st;

	if (!hs_is_single_component(name))
		return -EINVAL;
	/* "." rather than fstat so AT_FDCWD works too */
	if (fstatat(dirfd, ".", &st, 0) < 0)
		return -errno;
	return remove_entry_at(dirfd, st.st_dev, name, 0, true);
}
