/* Hygiene for privileged entry points (DESIGN.md section 5). */
#ifndef HS_PRIVS_H
#define HS_PRIVS_H

#include <signal.h>
#include <stdbool.h>

/* First thing a setgid/setuid/root program calls in main():
 *  - argc == 0, or an empty argv[0] -> exit(1) with a message;
 *  - make fds 0, 1 and 2 exist (open /dev/null onto closed ones; abort if
 *    that fails);
 *  - reset the environment to an allow-list (TERM, LANG, LC_*, TZ sanity
 *    checked) plus a safe PATH;
 *  - reset RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_AS, RLIMIT_DATA (soft to
 *    infinity, else to the hard limit), RLIMIT_NOFILE (soft to at least
 *    1024), RLIMIT_STACK (soft to at least 8 MiB) where raisable;
 *    set the soft RLIMIT_CORE to 0 (the hard limit stays); where
 *    RLIMIT_FSIZE stays finite, ignore SIGXFSZ (writes fail with EFBIG);
 *  - a caller who is not root may hold CAP_AUDIT_WRITE (the file
 *    capability of passwd and chage) and nothing else: any other
 *    capability -> exit(1) with a message.  CAP_AUDIT_WRITE is lowered
 *    from the effective set and stays only permitted;
 *  - prctl(PR_SET_DUMPABLE, 0);
 *  - umask(077).
 * Returns the program name to use in messages (basename of argv[0], or
 * fallback when missing). */
const char *hs_privs_init(int argc, char **argv, const char *fallback_name);

/* Give back what hs_privs_init changed of the caller's signal actions
 * (SIGXFSZ), in a child that hands them on to a session (su, runuser). */
void hs_privs_restore_caller_signals(void);

/* Block every catchable signal (saving the old mask) around the commit of
 * a change, then restore it. */
void hs_privs_block_signals(sigset_t *saved);
void hs_privs_restore_signals(const sigset_t *saved);

/* A setuid-root program started by a user, before it takes a lock every
 * account tool needs (/etc/.pwd.lock): make it one that user can neither
 * signal nor stop.  Real and saved uid become 0 as well (kill(2) then
 * needs root), and the terminal's stop signals are ignored (^Z, or a
 * background job reading or writing the terminal, stop a process
 * whatever its uids).  It leaves the caller's cgroup for the root one,
 * whose freezer only root may use.  It stays non-dumpable (hs_privs_init),
 * so it cannot be traced either.  Returns 0 or -errno. */
int hs_privs_unstoppable(void);
/* Its cgroup step alone, for a program that confines itself with Landlock
 * (which refuses the write to /sys) before it becomes unstoppable. */
void hs_privs_leave_callers_cgroup(void);

/* Raise (on) or lower CAP_AUDIT_WRITE in the effective set, around the
 * sends of an audit event: the kernel checks the sender's effective set at
 * each send, not when the socket was made.  A no-op for root and for a
 * caller who has no file capability.  Returns 0 or -errno. */
int hs_privs_audit_write(bool on);

/* Give up CAP_AUDIT_WRITE for good (permitted and effective), after the
 * last event a caller who is not root can cause.  A no-op otherwise. */
void hs_privs_audit_drop(void);

/* Root-only tools: true when the real uid is 0. */
bool hs_privs_caller_is_root(void);

#endif
