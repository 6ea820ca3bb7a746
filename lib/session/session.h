/* Session plumbing shared by login, su and runuser: the
 * environment handed to the new shell, the PAM conversation and session,
 * the privilege drop, and the parent that stays root, waits for the shell,
 * forwards signals to it (and relays a private pseudo-terminal for
 * su --pty), then closes the session.
 *
 * Order of use in a program:
 *   hs_session_env_capture()            before hs_privs_init(), if the caller's
 *                               environment may pass to the target (su)
 *   hs_session_start()          pam_start + PAM_TTY/PAM_RUSER/PAM_RHOST
 *   ... pam_authenticate, pam_acct_mgmt (the program's own policy) ...
 *   hs_session_set_groups()     initgroups or the -g/-G list, as root
 *   hs_session_open()           pam_setcred(ESTABLISH), pam_open_session
 *   hs_session_env_add_pam()            the PAM environment over the program's own
 *   hs_session_run()            fork; child drops to the target and execs;
 *                               the parent waits and returns its status
 *   hs_session_end()            pam_close_session, pam_setcred(DELETE),
 *                               pam_end, still as root */
#ifndef HS_SESSION_H
#define HS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <security/pam_appl.h>

#include "envname.h"

struct hs_config;

/* ---- environments ---- */

/* A list of "NAME=VALUE" strings owned by the list; { 0 } is empty. */
struct hs_env {
	char **v;       /* NULL-terminated */
	size_t n, cap;
};

void hs_session_env_free(struct hs_env *e);

/* hs_envname_valid() and hs_envname_unsafe() are in envname.h (the
 * core library: newgrp, which links no PAM, filters with them too). */

/* Set (or, with overwrite false, keep an existing) NAME.  0, -EINVAL for a
 * bad name, -ENOMEM. */
int hs_session_env_set(struct hs_env *e, const char *name, const char *value, bool overwrite);
/* "NAME=VALUE" form of hs_session_env_set. */
int hs_session_env_put(struct hs_env *e, const char *entry, bool overwrite);
const char *hs_session_env_get(const struct hs_env *e, const char *name);

/* Copy envp (the caller's environment, taken before hs_privs_init()
 * clears it) keeping only entries with a valid name, not unsafe, at most
 * 128 KiB each, the first of duplicated names, and at most 4096 entries.
 * Returns 0 or -ENOMEM. */
int hs_session_env_capture(struct hs_env *e, char *const *envp);

/* Add pam_getenvlist(), overriding what is there (the PAM environment is
 * the administrator's and wins, as in util-linux).  0 or -ENOMEM. */
int hs_session_env_add_pam(struct hs_env *e, pam_handle_t *pamh);

/* TERM values we pass on: [A-Za-z0-9._+-], 1..64 bytes (a terminfo name,
 * never a path). */
bool hs_session_env_term_ok(const char *term);

/* The PATH for a target: ENV_SUPATH, then ENV_ROOTPATH, for uid 0,
 * ENV_PATH otherwise, without a leading "PATH=" (login.defs(5)); the
 * built-in defaults when unset.  defs may be NULL. */
const char *hs_session_default_path(const struct hs_config *defs, uid_t uid);

/* ---- the start of login, su and runuser ---- */

/* Keep the caller's RLIMIT_CORE in *caller_core (hs_privs_init() zeroes
 * the soft limit; hs_session_open hands it to PAM), hs_privs_init(), the
 * program name prog, refuse an empty argv[0] (exit 1), the user's locale. */
void hs_session_tool_init(int argc, char **argv, const char *prog,
			  struct rlimit *caller_core);

/* ---- PAM ---- */

struct hs_session {
	pam_handle_t *pamh;
	struct pam_conv conv;
	bool suppress_info;     /* drop lone PAM_TEXT_INFO messages (su -c) */
	bool have_cred, have_session;
};

/* pam_start(service, user) with our terminal conversation (hs_ttyconv), then
 * PAM_TTY, PAM_RUSER and PAM_RHOST where given.  Returns a PAM status;
 * on failure nothing is left to end. */
int hs_session_start(struct hs_session *s, const char *service, const char *user,
                     const char *tty, const char *ruser, const char *rhost);

/* pam_setcred(PAM_ESTABLISH_CRED), then pam_open_session(flags).  Returns
 * a PAM status; hs_session_end() undoes whatever was done.
 * *core: the caller's RLIMIT_CORE in (hs_session_tool_init's), which PAM's
 * session modules start from, as they would without hs_privs_init's 0;
 * the session's out, after pam_limits had the last word, for the child
 * (hs_child.core_limit).  On return this process's own soft limit is 0
 * again: the root parent writes no core file.
 * *mask: the umask the session starts with in (the caller's for su, UMASK
 * for login), the one PAM's session modules left out (pam_umask has the
 * last word, as under util-linux su and shadow-utils' login), for
 * hs_child.umask; this process's own umask is given back. */
int hs_session_open(struct hs_session *s, int flags, struct rlimit *core, mode_t *mask);

/* pam_close_session and pam_setcred(PAM_DELETE_CRED) for what was opened,
 * then pam_end(status).  Safe to call twice. */
void hs_session_end(struct hs_session *s, int status);

/* initgroups(name, gid), or setgroups(groups) when groups is not NULL.
 * 0 or -errno. */
int hs_session_set_groups(const char *name, gid_t gid, const gid_t *groups, size_t ngroups);

/* ---- the child and the parent that waits for it ---- */

enum hs_child_tty {
	HS_CHILD_SAME_SESSION,  /* stays in the caller's session and terminal */
	HS_CHILD_NEW_SESSION,   /* setsid(): no controlling terminal (su -c) */
	HS_CHILD_TAKE_TTY,      /* setsid() and fd 0 becomes its controlling tty (login) */
	HS_CHILD_PTY,           /* setsid() on a new pseudo-terminal relayed by the parent */
};

struct hs_child {
	uid_t uid;
	gid_t gid;
	const char *path;       /* what to execute */
	char *const *argv;
	bool search_path;       /* execvp() with the child's PATH (runuser -u) */
	char *const *envp;
	mode_t umask;
	const char *dir;        /* chdir() here as the target; NULL: stay */
	bool dir_required;      /* a failed chdir ends the child (login) ... */
	bool dir_fallback_root; /* ... unless this (DEFAULT_HOME): "/" with a message */
	enum hs_child_tty tty;
	bool forward_int_quit;  /* forward SIGINT/SIGQUIT too (the child is not in
	                         * our terminal's foreground, so it cannot get them
	                         * from the keyboard) */
	bool reset_signals;     /* child: every signal default, nothing blocked
	                         * (login); else the caller's mask and dispositions */
	bool verbose;           /* su/runuser: util-linux's messages when a signal
	                         * ends the session or the child dies of one */
	gid_t pty_gid;          /* group of the new pty (HS_CHILD_PTY); (gid_t)-1: gid */
	struct rlimit core_limit;       /* the child's RLIMIT_CORE (the session's, from
	                                 * hs_session_open) */
};

/* Run c and wait for it.  The parent keeps its root privileges, blocks
 * every signal but SIGALRM and forwards SIGTERM, SIGHUP (and SIGINT,
 * SIGQUIT if forward_int_quit) to the child; a child still alive 2 s after
 * the first forwarded signal is killed.  A stopped child stops the parent (job
 * control through su).  *status is util-linux's: the child's exit status,
 * or 128 + the signal that killed it.  The child exits 126 when the
 * program cannot be executed, 127 when it does not exist, 1 when the
 * privilege drop or a required chdir fails.
 * The child starts with the signal mask the caller had on entry (or none,
 * with reset_signals).  On return every signal but SIGALRM stays blocked:
 * what is left to the caller (closing the PAM session as root, exiting)
 * must not be cut short, and a signal caught meanwhile has been handed to
 * the child.  SIGALRM is unblocked and ignored, for glibc's utmp lock
 * waits (alarm(10) and a handler of their own) in the PAM modules that
 * close the session.
 * Returns 0, or -errno when no child could be started. */
int hs_session_run(const struct hs_child *c, int *status);

#endif
