/* Looking up accounts for the programs: passwd entries with the buffer
 * sized for them, and the caller's identity. */
#ifndef HS_ACCOUNT_H
#define HS_ACCOUNT_H

#include <grp.h>
#include <pwd.h>
#include <sys/types.h>

/* getpwnam_r / getpwuid_r with a growing buffer (*buf is malloc'd; free
 * it).  Returns 0, -ENOENT for no such user, or another negative error. */
int hs_getpwnam_alloc(const char *name, struct passwd *pw, char **buf);
int hs_getpwuid_alloc(uid_t uid, struct passwd *pw, char **buf);
/* The same for getgrnam_r / getgrgid_r. */
int hs_getgrnam_alloc(const char *name, struct group *gr, char **buf);
int hs_getgrgid_alloc(gid_t gid, struct group *gr, char **buf);

#endif
