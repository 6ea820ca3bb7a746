/* Looking up accounts for the programs: passwd entries with the buffer
 * sized for them, and the caller's identity. */
#ifndef HS_ACCOUNT_H
#define HS_ACCOUNT_H

#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

/* getpwnam_r / getpwuid_r with a growing buffer (*buf is malloc'd; free
 * it).  Returns 0, -ENOENT for no such user, or another negative error. */
int hs_account_getpwnam(const char *name, struct passwd *pw, char **buf);
int hs_account_getpwuid(uid_t uid, struct passwd *pw, char **buf);
/* The caller's account, by the real uid (never $USER).  On failure it is
 * logged and msg gets "Cannot determine your user name." (shadow-utils'
 * words) with the cause, unless that is "no such user". */
int hs_account_caller(struct passwd *pw, char **buf, char *msg, size_t size);
/* The same for getgrnam_r / getgrgid_r. */
int hs_account_getgrnam(const char *name, struct group *gr, char **buf);
int hs_account_getgrgid(gid_t gid, struct group *gr, char **buf);

#endif
