/* The one walker over trees a user may control (homes, the user's tree
 * directory).  Every tool that removes, re-owns or copies a tree goes
 * through hs_walk_at, so one set of rules holds everywhere:
 *
 *  - nothing is followed: every step is statx/openat relative to the fd of
 *    the directory opened one level up, with AT_SYMLINK_NOFOLLOW and
 *    O_NOFOLLOW (O_PATH for non-directories, O_DIRECTORY for directories);
 *  - the walk stays on the mount it started on: an entry that is a mount
 *    root (STATX_ATTR_MOUNT_ROOT), that has another mount id
 *    (STATX_MNT_ID), or that is a directory with another st_dev is a mount
 *    point and is never entered or changed;
 *  - one depth limit, HS_WALK_MAX_DEPTH;
 *  - a visitor sees the fd of what was opened and its fstat, and the
 *    walker has checked that its device and inode equal what statx saw
 *    under that name (-ESTALE otherwise): visitors act on e->fd, or on
 *    e->name relative to e->parentfd only where an unlink is meant;
 *  - hs_walk_chown never changes a regular file with more than one link.
 *
 * Callers over a user's tree take it away first (hs_walk_take_away) and
 * hand it back last (hs_walk_hand_back), so the user cannot rearrange it
 * while root works; the per-entry checks above hold regardless, for the
 * processes that kept an fd into it.
 *
 * Library code: nothing is printed; errors are -errno or -HS_E_*. */
#ifndef HS_WALK_H
#define HS_WALK_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Directories nested deeper than this below the top are refused: each
 * level costs an fd and a stack frame, and the user controls the depth. */
#define HS_WALK_MAX_DEPTH 64

/* One entry, as the walker opened it. */
struct hs_walk_entry {
	int parentfd;           /* the opened directory that holds it (-1 for the top
				   when walked by fd) */
	const char *name;       /* its name in parentfd */
	const char *path;       /* its path below the top ("" for the top) */
	int fd;                 /* directories: O_RDONLY|O_DIRECTORY; others: O_PATH */
	struct stat st;         /* fstat(fd), equal in dev/ino to what was checked */
	unsigned depth;         /* 0 for the top */
};

/* Why an entry is refused (the refused callback's why). */
enum hs_walk_refusal {
	HS_WALK_MOUNT = 1,      /* a mount point: -EXDEV */
	HS_WALK_TOO_DEEP,       /* a directory below HS_WALK_MAX_DEPTH: -ENAMETOOLONG */
	HS_WALK_SWAPPED,        /* replaced between the check and the open: -ESTALE */
	HS_WALK_DENIED,         /* below the top, an entry root may not stat, open or
				 * remove (a user's FUSE mount: -EACCES, or -ENOTCONN
				 * once its daemon died; -EPERM, -ELOOP): its error */
};

/* Return values of the pre callback. */
#define HS_WALK_CONTINUE 0
#define HS_WALK_SKIP     1      /* do not descend into this directory */

struct hs_walk_ops {
	/* A directory, before its entries.  <0 stops the walk. */
	int (*pre)(const struct hs_walk_entry *e, void *ctx);
	/* Every entry that is not a directory, and each directory after its
	 * entries (post-order).  <0 stops the walk. */
	int (*post)(const struct hs_walk_entry *e, void *ctx);
	/* An entry refused for why, with err its error; e->fd is -1 and
	 * e->st what statx saw.  Return 0 to leave it alone and go on, <0 to
	 * stop.  NULL: every refusal stops the walk with err. */
	int (*refused)(const struct hs_walk_entry *e, enum hs_walk_refusal why, int err,
		       void *ctx);
	/* After a directory's entries, read it again, up to a few times,
	 * until a pass finds nothing: for removals (readdir may skip entries
	 * while the directory changes). */
	bool rescan;
};

/* Is dirfd/name itself a mount point (a home or spool with a file system
 * mounted on it: a FUSE one its user mounted, as users may on what they
 * own, or an administrator's bind mount)?  The one rule of every tool and
 * of the recovery: such a home is never touched (docs/decisions.md, "A
 * home that is a mount point").  Asked for nothing and from the cache, so
 * that FUSE answers it even to root when it refuses root everything else
 * (no allow_other: EACCES) or its daemon is dead (ENOTCONN).  Not known
 * (name not there): false. */
bool hs_walk_is_mount_point(int dirfd, const char *name);

/* Is dirfd/name the root of a FUSE file system a user other than root
 * mounted (its user_id= in /proc/self/mountinfo)?  Its daemon is that
 * user's and may never answer: root's tools that would only chown in it
 * leave it alone rather than wait.  Told from the cache and mountinfo,
 * asking the file system nothing. */
bool hs_walk_is_users_fuse(int dirfd, const char *name);

/* Walk dirfd/name (a single path component; a symlink there is visited as
 * itself, never followed).  Returns 0, the first negative value from a
 * callback, or a negative error of the walk (-ENOENT when name is not
 * there). */
int hs_walk_at(int dirfd, const char *name, const struct hs_walk_ops *ops, void *ctx);

/* Walk what is below the directory fd (the top itself is not visited;
 * its mount is the one the walk stays on).  fd's offset is reset first:
 * it may be walked again. */
int hs_walk_below(int fd, const struct hs_walk_ops *ops, void *ctx);

/* Change the owner of the opened entry (uid or gid -1: unchanged), through
 * its fd.  A regular file with more than one link is refused with
 * -HS_E_NLINK: it may be another user's file linked in. */
int hs_walk_chown(const struct hs_walk_entry *e, uid_t uid, gid_t gid);

/* Take the directory fd away from its user: root:root 0700, after saving
 * its owner and mode in *saved. */
int hs_walk_take_away(int fd, struct stat *saved);

/* Hand it back last: mode first while it is still root's, then owner
 * (a chown keeps a directory's setgid bit). */
int hs_walk_hand_back(int fd, uid_t uid, gid_t gid, mode_t mode);

/* Remove dirfd/name and, if it is a directory, everything below it.  The
 * tree is checked first and nothing is removed when it holds a mount
 * point (-EXDEV), nests too deeply (-ENAMETOOLONG) or holds an entry
 * that is immutable or append-only (-EPERM, where set); a name that is a
 * symlink loses the link only.  Where the offending entry is, is put in
 * *where (malloc'd path below name, may be NULL): it is set only for a
 * refusal (hs_walk_refusal), also for an entry below name that cannot be
 * removed for a reason of HS_WALK_DENIED's.  top (may be NULL): what name
 * must still be (its st_dev, st_ino), else -ESTALE and nothing removed
 * below it: the walk goes by name, and whoever owns dirfd may have
 * renamed another directory to it since the caller opened it. */
int hs_walk_remove_tree_at(int dirfd, const char *name);
int hs_walk_remove_at(int dirfd, const char *name, const struct stat *top, char **where);

#endif
