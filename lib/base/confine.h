/* Self-confinement of privileged programs, once they know what they need:
 * Landlock for the file system, seccomp for the system calls.  What
 * OpenBSD's unveil(2) and pledge(2) give, on Linux.
 *
 * Both are one-way: nothing the program does later (or anything that
 * subverts it) can lift them, and they pass to children.  Where the
 * kernel lacks Landlock or seccomp, the functions return -ENOSYS and
 * the caller runs as before, silently (DESIGN: older kernels). */
#ifndef HS_CONFINE_H
#define HS_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

/* Landlock: from now on, files may be opened only beneath dirfd (read
 * only), and no file anywhere may be created, removed, renamed, linked,
 * executed or truncated; no TCP socket bound or connected; no signal sent
 * outside the process and no abstract Unix socket reached (where the
 * kernel's Landlock knows those).  Sets no_new_privs.  Files already open
 * are unaffected.  Returns 0, -ENOSYS without Landlock, or -errno. */
int hs_confine_read_beneath(int dirfd);

/* seccomp: from now on, only the system calls in allowed[] (numbers, as
 * SYS_read ...) succeed; any other fails with EPERM.  Sets no_new_privs.
 * Returns 0, -ENOSYS where seccomp or this architecture is not supported,
 * or -errno. */
int hs_confine_syscalls(const long *allowed, size_t n);

/* Both, for the setgid helpers (password-helper, shell-helper): read the
 * caller's directory dirfd and nothing else, and make only the calls a
 * helper makes after opening it (reading, flock, clocks and sleeping,
 * memory, signals, syslog on its open socket, writing its answer,
 * exiting).  Returns 0 when both hold, -ENOSYS when the kernel has
 * neither, or the first error. */
int hs_confine_helper(int dirfd);

#endif
