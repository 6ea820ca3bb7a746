/* Atomic replacement of a file below a directory fd (DESIGN.md section 3):
 * a temporary file with an unpredictable name, written whole, owned and
 * moded, synced, then renamed over the target and the directory synced. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "selabel.h"
#include "tempname.h"
#include "util.h"

/* A new file at a name: O_EXCL|O_NOFOLLOW, so nothing planted there is
 * reused or followed. */
#define HS_OPEN_NEW (O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC | O_NOCTTY)

/* linkat with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH (before Linux
 * 6.10); a setgid tool goes through /proc/self/fd instead. */
int hs_fileio_link_unnamed(int fd, int dirfd, const char *name)
{
	char proc[64];

	if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOENT && errno != EPERM)
		return -errno;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

/* Give a new file a temporary name ".NAME.XXXXXXXXXXXX" in dirfd: link
 * fd, an O_TMPFILE inode, there (0), or, when fd is -1, create a new,
 * empty file there for writing (its fd).  The name is unpredictable and
 * made with O_EXCL|O_NOFOLLOW (or linkat, which never replaces), so a
 * planted file or symlink can neither be reused nor followed. */
static int name_temp_file(int fd, int dirfd, const char *name, const char *label_as, char *tmp,
			  size_t tmpsize)
{
	for (int tries = 0; tries < HS_TEMP_TRIES; tries++) {
		int r = hs_tempname_for_file(name, tmp, tmpsize);

		if (r < 0)
			return r;
		r = fd >= 0 ? hs_fileio_link_unnamed(fd, dirfd, tmp)
			    : hs_selabel_openat(dirfd, tmp, label_as, HS_OPEN_NEW, 0600);
		if (fd < 0 && r < 0)
			r = -errno;
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

/* fsync a directory so a rename in it is durable.  Some file systems do
 * not support fsync on directories (EINVAL); there is nothing more we
 * can do there, and the rename itself already happened. */
static int fsync_dir(int dirfd)
{
	if (fsync(dirfd) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

/* Write every piece in order, whatever the partial writes (writev in
 * batches, so a file in many pieces costs few system calls). */
static int write_pieces(int fd, const struct iovec *iov, size_t n)
{
	struct iovec cur[64];
	size_t i = 0, off = 0;  /* the next byte is iov[i] at off */

	while (i < n) {
		size_t k = 0, want = 0, left;
		ssize_t w;

		for (size_t j = i; j < n && k < HS_ARRAY_SIZE(cur); j++, k++) {
			size_t skip = j == i ? off : 0;

			cur[k].iov_base = (char *)iov[j].iov_base + skip;
			cur[k].iov_len = iov[j].iov_len - skip;
			want += cur[k].iov_len;
		}
		w = want ? writev(fd, cur, (int)k) : 0;
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0 && want)
			return -EIO;
		for (left = (size_t)w; i < n; i++, off = 0) {
			if (left < iov[i].iov_len - off) {
				off += left;
				break;
			}
			left -= iov[i].iov_len - off;
		}
	}
	return 0;
}

/* Write the pieces into fd, give it its owner and mode, and sync it. */
static int fill(int fd, const struct iovec *iov, size_t n, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;
	bool chowned;
	int r = write_pieces(fd, iov, n);

	if (r < 0)
		return r;
	/* Change ownership only where the new file did not already get the
	 * right one.  Root passes explicit ids; a non-root setgid tool
	 * passes HS_ANY_* and relies on owning the file it created and on
	 * the setgid directory for the group, so it never needs (and would
	 * not be allowed) to chown. */
	if (fstat(fd, &st) < 0)
		return -errno;
	/* HS_ANY_* is fchown's own "leave it" value */
	uid = st.st_uid != uid ? uid : HS_ANY_UID;
	gid = st.st_gid != gid ? gid : HS_ANY_GID;
	chowned = uid != HS_ANY_UID || gid != HS_ANY_GID;
	if (chowned && fchown(fd, uid, gid) < 0)
		return -errno;
	/* after fchown, which clears set-id bits on regular files; a file
	 * made at its mode (a journal: 0600 under umask 077) needs none */
	if ((chowned || (st.st_mode & 07777) != (mode & 07777)) && fchmod(fd, mode & 07777) < 0)
		return -errno;
	if (fsync(fd) < 0)
		return -errno;
	return 0;
}

/* A new file to write in dirfd, labelled as label_as: an unnamed
 * O_TMPFILE inode (*anonymous), or, on a file system without O_TMPFILE,
 * a named temporary whose name goes in tmp.  The fd, or -errno. */
static int open_new_file(int dirfd, const char *name, const char *label_as, char *tmp,
			 size_t tmpsize, bool *anonymous)
{
	int fd = hs_selabel_openat(dirfd, ".", label_as, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	*anonymous = fd >= 0;
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return name_temp_file(-1, dirfd, name, label_as, tmp, tmpsize);
}

/* Check what both writers take. */
static int check_args(const char *name, const struct iovec *iov, size_t n)
{
	if (!hs_fileio_is_single_component(name) || (!iov && n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!iov[i].iov_base && iov[i].iov_len)
			return -EINVAL;
	return 0;
}

int hs_fileio_replace_at(int dirfd, const char *name, const void *data, size_t len,
		       uid_t uid, gid_t gid, mode_t mode)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };

	return hs_fileio_replace_iov_at(dirfd, name, NULL, &iov, 1, uid, gid, mode);
}

int hs_fileio_replace_iov_at(int dirfd, const char *name, const char *label_as,
			     const struct iovec *iov, size_t n, uid_t uid, gid_t gid, mode_t mode)
{
	char tmp[NAME_MAX + 1] = "";
	_cleanup_close_ int fd = -1;
	bool anonymous;
	int r;

	r = check_args(name, iov, n);
	if (r < 0)
		return r;

	/* Write into an unnamed O_TMPFILE inode and give it a name only
	 * once it is complete, so a SIGKILL (which no cleanup handler sees)
	 * during the write, chown or fsync leaves nothing behind; the only
	 * window for a stray temporary name is between linkat and renameat.
	 * File systems without O_TMPFILE get a named temporary file.  The
	 * inode is labelled when it is made, as the file it will become. */
	if (!label_as)
		label_as = name;
	fd = open_new_file(dirfd, name, label_as, tmp, sizeof tmp, &anonymous);
	if (fd < 0)
		return fd;

	r = fill(fd, iov, n, uid, gid, mode);
	if (r == 0 && anonymous) {
		/* Rename at once, before close(): the named temporary
		 * exists only for these two system calls.  fsync already
		 * reported any write error of a local file system. */
		r = name_temp_file(fd, dirfd, name, NULL, tmp, sizeof tmp);
		if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
			r = -errno;
		else
			tmp[0] = '\0';  /* no name was made, or it is the file's now */
	}
	/* close() can report a delayed write error (NFS): a named temporary
	 * is checked before the new file becomes visible */
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && !anonymous && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		/* the fd closes on the way out; a named temporary must go too */
		if (tmp[0])
			(void)unlinkat(dirfd, tmp, 0);
		return r;
	}
	/* The new file is in place; a failure from here on cannot restore
	 * the old one, but the caller still learns that durability is not
	 * guaranteed. */
	return fsync_dir(dirfd);
}

/* HS_FILEIO_WHOLE: the complete, synced file gets its name by one link,
 * which never replaces anything. */
static int create_whole(int dirfd, const char *name, const char *label_as,
			const struct iovec *iov, size_t n, uid_t uid, gid_t gid, mode_t mode)
{
	char tmp[NAME_MAX + 1] = "";
	bool anonymous, made = false;
	_cleanup_close_ int fd = open_new_file(dirfd, name, label_as, tmp, sizeof tmp,
					       &anonymous);
	int r;

	if (fd < 0)
		return fd;
	r = fill(fd, iov, n, uid, gid, mode);
	if (r == 0 && anonymous) {
		r = hs_fileio_link_unnamed(fd, dirfd, name);
		made = r == 0;
	}
	/* close() can report a delayed write error (NFS) */
	if (close(TAKE_FD(fd)) < 0 && r == 0)
		r = -errno;
	if (r == 0 && !anonymous) {
		r = linkat(dirfd, tmp, dirfd, name, 0) < 0 ? -errno : 0;
		made = r == 0;
	}
	if (!anonymous)
		(void)unlinkat(dirfd, tmp, 0);
	if (r == 0)
		r = fsync_dir(dirfd);
	if (r < 0 && made) {
		/* taken back, and that synced as far as the directory lets
		 * it: a failure leaves nothing of ours at name even after a
		 * power loss (a journal that came back would be finished by
		 * the next tool: a change its caller was told failed) */
		(void)unlinkat(dirfd, name, 0);
		(void)fsync_dir(dirfd);
	}
	return r;
}

int hs_fileio_create_iov_at(int dirfd, const char *name, const char *label_as,
			    const struct iovec *iov, size_t n, uid_t uid, gid_t gid, mode_t mode,
			    unsigned flags)
{
	_cleanup_close_ int fd = -1;
	int r = check_args(name, iov, n);

	if (r < 0)
		return r;
	if (!label_as)
		label_as = name;
	if (flags & HS_FILEIO_WHOLE)
		return create_whole(dirfd, name, label_as, iov, n, uid, gid, mode);
	/* written at its name (HS_OPEN_NEW), labelled as label_as when made */
	fd = hs_selabel_openat(dirfd, name, label_as, HS_OPEN_NEW, 0600);
	if (fd < 0)
		return -errno;
	r = fill(fd, iov, n, uid, gid, mode);
	if (close(TAKE_FD(fd)) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dirfd, name, 0);
	return r;
}
