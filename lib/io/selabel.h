/* SELinux labels for what our tools create: the one place that asks the
 * loaded policy for a context and sets it before the object is made
 * (setfscreatecon), so nothing is ever relabelled afterwards.
 *
 * Every object is labelled as its FINAL path: a temporary file as the
 * file it will replace, a directory built under a reserved name as the
 * name it will be renamed to, and everything made inside such a
 * directory as if it were already there (hs_selabel_mkdirat remembers
 * the pair).  When SELinux is disabled all of this does nothing: no
 * handle is opened, nothing is logged, creation is the plain syscall.
 *
 * Programs that only write below /etc/hardened-shadow (the setgid
 * helpers, passwd, chsh, chage, the PAM module) link selabel-none.c
 * instead: a file made in a shadow_t directory inherits shadow_t from
 * it, so they need no policy lookups and do not link libselinux. */
#ifndef HS_SELABEL_H
#define HS_SELABEL_H

#include <sys/types.h>

/* Set the creation context for an object of type (S_IFREG, S_IFDIR,
 * S_IFLNK) that will end up as dirfd/final (final absolute: dirfd is
 * ignored).  0 when done or nothing to do; -errno when the label cannot
 * be set and the policy is enforcing (permissive carries on, as the
 * kernel would). */
int hs_selabel_begin_at(int dirfd, const char *final, mode_t type);
/* Back to the default creation context (after the create, success or
 * not); errno is kept. */
void hs_selabel_end(void);

/* openat, mkdirat and symlinkat with the context of dirfd/final
 * (final NULL: name).  hs_selabel_mkdirat also remembers that what is
 * made inside dirfd/name belongs below dirfd/final.  They return what
 * the syscall returns, with errno set. */
int hs_selabel_openat(int dirfd, const char *name, const char *final, int flags, mode_t mode);
int hs_selabel_mkdirat(int dirfd, const char *name, const char *final, mode_t mode);
int hs_selabel_symlinkat(const char *target, int dirfd, const char *name);
/* Remember dirfd/name as a directory that will become dirfd/final, when
 * it was made otherwise (mkdtemp after hs_selabel_begin_at). */
void hs_selabel_alias_at(int dirfd, const char *name, const char *final);

/* Tests: label from this file_contexts instead of the loaded policy's,
 * whether or not SELinux is enabled. */
int hs_selabel_use_file_contexts(const char *path);
/* The context for dirfd/final as hs_selabel_begin_at would ask for it
 * (*con to free; NULL when the policy has none), or -errno. */
int hs_selabel_lookup_at(int dirfd, const char *final, mode_t type, char **con);

#endif
