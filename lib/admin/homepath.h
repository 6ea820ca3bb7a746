/* Home directories of existing accounts that root acts on: removes
 * (userdel -r), moves (usermod -d -m) or re-owns (usermod -u, -g).  The
 * home itself is the user's and hostile; the path above it is an
 * administrator's, and is walked without following anything.  (Homes made
 * by root for a new user: lib/admin/homedir.h.) */
#ifndef HS_HOMEPATH_H
#define HS_HOMEPATH_H

#include <stdbool.h>
#include <sys/types.h>

/* An absolute path with no empty or "." components and no "..": a
 * malloc'd copy, "" for "/", or NULL when dir is not absolute or has a
 * ".." (or out of memory). */
char *hs_homepath_normalise(const char *dir);

/* Open the directory holding the last component of path (normalised, not
 * "/"): resolved by the kernel (an administrator's /home -> /srv/home is
 * fine; a symlink on the way as named must be root's), then walked
 * again from / without following anything, no step
 * owned by uid (unless uid is 0) or writable by group or others unless
 * sticky.  Returns the fd and *last (inside path), -HS_E_OWNER for an
 * untrusted step, or another negative error. */
int hs_homepath_parent_at(const char *path, uid_t uid, const char **last);

/* The walk both use (and lib/homedir for new homes): open dir after
 * resolving it with realpath, then walking it again from / with
 * O_NOFOLLOW, every step not writable by group or others unless sticky,
 * and not owned by refused_uid ((uid_t)-1: any owner) or, with
 * root_only, owned by root.  Returns the fd, -HS_E_OWNER for an untrusted
 * step, or another negative error. */
int hs_homepath_open_trusted_dir(const char *dir, uid_t refused_uid, bool root_only);

/* A directory an administrator names for root to write below (groupadd
 * --prefix, a root being built): hs_homepath_open_trusted_dir with
 * root_only on its resolved path, and also every directory the name itself
 * goes through (as the kernel's lookup follows it) root's and not writable
 * by group or others unless sticky, so that a symlink a user planted on the
 * way (her ~/rootfs -> /, or her /tmp/x -> / in sticky /tmp: a link on the
 * way must be root's) is refused even though it leads to root's
 * directories.  Returns the fd and *resolved (malloc'd, the path without
 * symlinks: nobody but root can change what it names), -HS_E_OWNER for an
 * untrusted step, or another negative error. */
int hs_homepath_open_root_dir(const char *dir, char **resolved);

/* The message for a failure of hs_homepath_parent_at. */
const char *hs_homepath_parent_error(int r);

#endif
