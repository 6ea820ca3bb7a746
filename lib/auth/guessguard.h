/* The guess guard: a failed password guess costs its delay even when the
 * caller kills the process that checked it.
 *
 * A setuid-root program runs with its caller's real uid (su, newgrp, sg,
 * chfn, and any setuid PAM application), so the caller may kill it, or
 * let their terminal or cgroup do it, the moment the hash is checked: a
 * success shows at once, so no answer soon means a wrong guess.  The
 * failure delay that follows would then free the guess lock at once.
 *
 * The guard is a child that shares the guess lock (fork shares the open
 * file description, and with it the flock or the record lock) and that
 * is out of the caller's reach before the hash is checked: every uid root
 * (no signal of theirs), a session of its own (none of their terminal's),
 * the root cgroup (no cgroup.kill or freezer of theirs).  It keeps the
 * lock through the delay unless told the guess was right; the caller's
 * next guess waits for the lock.  Setgid programs cannot have one (the
 * caller can signal any process with their uids): there the delay runs
 * in the process itself (docs/decisions.md). */
#ifndef HS_GUESSGUARD_H
#define HS_GUESSGUARD_H

#include <stdbool.h>
#include <sys/types.h>

struct hs_guessguard {
	pid_t pid;      /* -1: none */
	int sock;       /* our end of the guard's socket */
	int pidfd;      /* the guard's, to wait for it; -1: by pid */
	unsigned delay_ms;
};

#define HS_GUESSGUARD_INIT { -1, -1, -1, 0 }

/* Start a guard that keeps lockfd (the guess lock, held) through
 * delay_ms after a failure, or after this process ends without a
 * verdict.  Every other fd is closed in the guard.  Needs an effective
 * uid of 0.  Returns 0 once the guard is out of the caller's reach, or a
 * negative errno (no guard: delay in this process instead). */
int hs_guessguard_start(struct hs_guessguard *g, int lockfd, unsigned delay_ms);

/* The verdict: the guard ends at once after a right guess, after its
 * delay otherwise; wait for it (so a failure costs this process the
 * delay too, from the verdict on, even when the application reaped the
 * guard or the guard ended early).  Does nothing for a guard that did not
 * start. */
void hs_guessguard_end(struct hs_guessguard *g, bool right);

#endif
