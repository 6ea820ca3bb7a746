/* The one walker over trees a user may control. */
#ifndef HS_WALK_H
#define HS_WALK_H

/* Remove dirfd/name and, if it is a directory, everything below it, never
 * following a symlink and never leaving the starting directory (every step
 * is openat/unlinkat relative to an fd opened with O_NOFOLLOW). */
int hs_remove_tree_at(int dirfd, const char *name);

#endif
