/* Paranoid file I/O relative to directory fds (DESIGN.md section 3).
 * Used for the per-user tree (hostile to root) and for the global files. */
#ifndef HS_FILEIO_H
#define HS_FILEIO_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "layout.h"  /* HS_GLOBALFILE_MAX */

#define HS_ANY_UID ((uid_t)-1)
#define HS_ANY_GID ((gid_t)-1)

/* What a trusted file must look like.  Fields set to HS_ANY_* are not
 * checked; max_size 0 means no cap. */
struct hs_file_expect {
	uid_t uid;
	gid_t gid;
	size_t max_size;
	/* A root-owned file may have other names: only for a file in a
	 * directory no user can write (/etc, /var/log). */
	bool root_links_ok;
};

/* How a global account file (/etc/passwd and friends, /etc/shells) is read
 * and replaced: any owner, capped at HS_GLOBALFILE_MAX, and a root-owned
 * file may have other names.  Where fs.protected_hardlinks is 0 any user
 * can hard-link it into a directory of theirs; that name changes nothing
 * the one in /etc holds (a replace gives /etc a new inode), so it must not
 * stop root's tools or refuse every user their ranges, groups or shells
 * (DESIGN §11).  An initializer, so it adds no symbol. */
#define HS_FILE_EXPECT_GLOBAL \
	{ .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = HS_GLOBALFILE_MAX, \
	  .root_links_ok = true }

/* Check an fstat result: regular file, link count 1 (or more, for a
 * root-owned file, with root_links_ok), owner/group, size cap.  Returns 0
 * or -HS_E_NOTREG/-HS_E_NLINK/-HS_E_OWNER/-HS_E_GROUP/-HS_E_TOOBIG. */
int hs_fileio_check_stat(const struct stat *st, const struct hs_file_expect *ex);

/* Open dirfd/name with O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOCTTY
 * (a FIFO therefore never blocks, a symlink gives -HS_E_SYMLINK), fstat,
 * apply hs_fileio_check_stat, and read the whole file into buf (bufsize must
 * exceed the size cap so a file that grows between fstat and read is
 * caught).  The content is NUL-terminated; *len excludes the NUL.
 * On success returns 0 and, if st_out is not NULL, the stat.
 * name must be a single path component. */
int hs_fileio_read_trusted_at(int dirfd, const char *name, const struct hs_file_expect *ex,
                       char *buf, size_t bufsize, size_t *len, struct stat *st_out);

/* Same for an absolute path, opened with openat2(RESOLVE_NO_SYMLINKS) so
 * that no component at all may be a symlink (falls back to O_NOFOLLOW on
 * the last component on kernels without openat2, or where a seccomp
 * filter refuses it with EPERM).  One open, one fstat,
 * usually one read: the NSS module's fast path. */
int hs_fileio_read_trusted_path(const char *path, const struct hs_file_expect *ex,
                         char *buf, size_t bufsize, size_t *len, struct stat *st_out);

/* Same, for global files of unknown size: *data is malloc'd (NUL-terminated),
 * capped at max_size.  Used for /etc/passwd and friends. */
int hs_fileio_read_alloc_at(int dirfd, const char *name, const struct hs_file_expect *ex,
                          char **data, size_t *len, struct stat *st_out);

/* Split path into an fd of its directory (O_DIRECTORY|O_CLOEXEC) and its
 * last component (*base points into path).  The directory part may hold
 * symlinks (a test root, /etc on some systems); the last component is
 * never followed by the callers, which open it with *_at().  Returns the
 * fd, or -EINVAL when the last component is empty, "." or "..". */
int hs_fileio_open_parent(const char *path, const char **base);

/* hs_fileio_read_alloc_at on path's last component, relative to
 * hs_fileio_open_parent(path): the read-only way to load /etc/shells, /etc/subuid,
 * /etc/gshadow and the like without the global-file writer. */
int hs_fileio_read_alloc_path(const char *path, const struct hs_file_expect *ex,
                            char **data, size_t *len);

/* Map path's last component (opened as hs_fileio_read_alloc_path opens it)
 * read-only, without copying it: *data (not NUL-terminated) is *len bytes,
 * to give back with hs_fileio_unmap(*data, *len); *st_out (may be NULL) is
 * the file as it was opened.  For files that our writers only ever replace
 * by rename, never rewrite in place: the global account files, read under
 * their locks.  A program that ignores the locks and cuts the file short
 * meanwhile raises no SIGBUS here: the mapping becomes zeros and
 * hs_fileio_map_torn(*data) true (check it, and the file's identity
 * against *st_out, before trusting what was read). */
int hs_fileio_map_path(const char *path, const struct hs_file_expect *ex, const char **data,
                     size_t *len, struct stat *st_out);
/* Same, for name (one component) in the directory dirfd. */
int hs_fileio_map_at(int dirfd, const char *name, const struct hs_file_expect *ex,
		     const char **data, size_t *len, struct stat *st_out);
bool hs_fileio_map_torn(const char *data);
void hs_fileio_unmap(const char *data, size_t len);
/* A DIR listing dirfd's directory through a descriptor of its own ("."
 * opened again): a dup would share, and move, the caller's offset.  NULL
 * with errno set; nothing is left open then. */
DIR *hs_fileio_opendir_at(int dirfd);

/* Unlink (never rmdir) every entry of dirfd whose name match() accepts:
 * the sweep of leftovers that tools killed mid-write leave.  Best effort:
 * an entry that cannot go stays for the next sweep.  Returns how many
 * were removed, or -errno if dirfd cannot be read. */
int hs_fileio_unlink_matching(int dirfd, bool (*match)(const char *name, void *ctx), void *ctx);

/* Atomically replace dirfd/name with data (DESIGN section 3): temp file
 * ".NAME.XXXXXXXXXXXX" (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), write all,
 * fchown to uid:gid when they differ from what the file got (HS_ANY_* =
 * leave), fchmod(mode), fsync, renameat over name, fsync(dirfd).
 * On any failure the temp file is removed and the old file is untouched. */
int hs_fileio_replace_at(int dirfd, const char *name, const void *data, size_t len,
                       uid_t uid, gid_t gid, mode_t mode);
/* The same with the contents in n pieces written one after the other
 * (struct iovec, <sys/uio.h>), so a caller that has them in several places
 * copies nothing into one buffer first.  The new file gets the SELinux
 * label of dirfd/label_as (NULL: name), for a copy staged under another
 * name that is renamed into place later (selabel.h). */
struct iovec;
int hs_fileio_replace_iov_at(int dirfd, const char *name, const char *label_as,
                           const struct iovec *iov, size_t n, uid_t uid, gid_t gid,
                           mode_t mode);

/* Give the unnamed (O_TMPFILE) file fd the name name in dirfd, never
 * replacing anything (-EEXIST).  0 or -errno. */
int hs_fileio_link_unnamed(int fd, int dirfd, const char *name);

/* Create dirfd/name, which must not exist yet (-EEXIST, and it is left
 * alone), with the pieces, owner and mode as hs_fileio_replace_iov_at
 * gives them (labelled as dirfd/label_as, NULL: name), synced.  flags:
 *   HS_FILEIO_WHOLE  the name appears only once the file is complete and
 *                    synced (an O_TMPFILE inode linked to it; a named
 *                    temporary linked where there is none), and the
 *                    directory is synced: atomic, as a replace;
 *   0                the file is made at its name (O_CREAT|O_EXCL|
 *                    O_NOFOLLOW) and written there; the directory is not
 *                    synced.  A crash may leave it partly written: only
 *                    for a caller whose own protocol discards such a file
 *                    and syncs the directory (lib/etc/txn.c's staged
 *                    copies, which no journal names until they are whole).
 * On a failure nothing of ours is left at name. */
#define HS_FILEIO_WHOLE 1u
int hs_fileio_create_iov_at(int dirfd, const char *name, const char *label_as,
                            const struct iovec *iov, size_t n, uid_t uid, gid_t gid,
                            mode_t mode, unsigned flags);

/* Open a directory component with O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC
 * and fstat it; -HS_E_SYMLINK for a symlink, -HS_E_NOTDIR for others. */
int hs_fileio_open_dir_at(int dirfd, const char *name, struct stat *st_out);

/* Is name a single, non-empty path component (no '/', not "." or "..")? */
bool hs_fileio_is_single_component(const char *name);

/* Is now the file then was, unchanged: the same inode, size and mtime?  A
 * writer that replaces a file gives the name a new inode; one that writes
 * in place changes its mtime (and mostly its size); only root could set
 * the mtime back.  The ctime (and the link count) is not compared: where
 * fs.protected_hardlinks is 0 any user may link /etc/passwd into a
 * directory of theirs, which changes it, as often as they like. */
bool hs_fileio_same_version(const struct stat *then, const struct stat *now);

#endif
