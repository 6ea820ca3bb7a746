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

/* What a rule of hs_confine_paths allows beneath its path (for a file, on
 * the file itself). */
#define HS_CONFINE_READ     (1u << 0)  /* open files to read, list directories */
#define HS_CONFINE_WRITE    (1u << 1)  /* READ, and write, truncate, create,
                                        * remove and move files, directories
                                        * and symlinks (no device nodes) */
#define HS_CONFINE_EXEC     (1u << 2)  /* READ, and run programs */
#define HS_CONFINE_DEVICE   (1u << 3)  /* read, write and ioctl a device */
#define HS_CONFINE_ENTRIES  (1u << 4)  /* make, remove and move directories
                                        * right inside (a home's parent) */
#define HS_CONFINE_NOFOLLOW (1u << 5)  /* a symlink as the last component is
                                        * not followed: it gets the rule, its
                                        * target nothing (a home) */
#define HS_CONFINE_LIST     (1u << 6)  /* open directories to list them, no
                                        * file (a walk from / to a home) */
#define HS_CONFINE_UNLINK   (1u << 7)  /* remove files and symlinks (a home
                                        * that is a symlink) */
#define HS_CONFINE_FILE     (1u << 8)  /* the path is a file, not a directory
                                        * (saves a system call) */

struct hs_confine_rule {
	const char *path;   /* absolute; NULL or missing: the rule is skipped */
	unsigned access;    /* HS_CONFINE_* */
};

/* Landlock for the setid and root tools: from now on, files may be opened,
 * created, removed, renamed or run only as rules[] and the base every
 * program needs allow.  The base: read /usr, /lib*, /bin, /sbin, /etc,
 * /proc, /sys, /dev/zero, /dev/random and /dev/urandom; use /dev/null and
 * /dev/tty; run nscd and sss_cache, which may write /var/lib/sss (the
 * cache flush after a commit).  The loader and libraries under /usr/lib
 * and /lib* may be run only where nscd or sss_cache is there or a rule
 * runs a program; otherwise they are only read, through /usr's rule where
 * merged /usr makes /lib* links to it.  Writing the thread's
 * /proc/.../attr (SELinux's creation contexts) only while SELinux may be
 * active: its file system is mounted, or something in the process defines
 * is_selinux_enabled (the signs lib/io/selabel.c goes by).  A base rule a
 * rule of the caller's covers (/etc, to write) is not added twice.
 * Network, signals and Unix sockets stay as they were (NSS and syslog need
 * them).  Sets no_new_privs.  Returns 0, -ENOSYS without Landlock, or
 * -errno. */
int hs_confine_paths(const struct hs_confine_rule *rules, size_t n);

/* May SELinux be active, so that a creation context will be set (and
 * the thread's attr directory written)?  Its file system is mounted, or
 * a stand-in already in the process (the tests' preloaded shim) defines
 * is_selinux_enabled.  One statfs, asked once a process: the one test
 * lib/io/selabel.c and the Landlock base rules both go by. */
bool hs_confine_selinux_may_be_active(void);

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
