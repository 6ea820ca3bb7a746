/* The setgid password helper (DESIGN §5, §7): verifies the CALLER'S OWN
 * password for a process that cannot read its hash (a screen locker
 * running as the user), and reports the caller's own aging data.
 *
 * Protocol (the PAM module is the client; nothing else needs it):
 *   argv:   password-helper verify USER
 *           password-helper account USER
 *           USER must be the name of the real uid's account (like
 *           unix_chkpwd); anything else is refused with exit 2.
 *   verify: the password arrives on stdin (a pipe), at most HS_PASSWORD_MAX
 *           bytes, terminated by EOF (no newline processing: the bytes are
 *           the password).  Never argv or the environment.
 *   account: stdout gets "LSTCHG:MIN:MAX:WARN:INACT:EXPIRE:\n" with
 *           aging read fail-closed (hs_userdir_aging_or_expired).
 *   exit:   HS_PWHELPER_OK, _MISMATCH, _REFUSED, _ERROR.
 * Rate limit: at most one verification per caller at a time (the guess
 * lock, hs_userdir_guess_lock: an exclusive flock on the caller's aging
 * file, not the writers' lock on the directory) and a failure costs
 * HS_FAIL_DELAY_MS (timeouts.h) before the answer.  The caller may kill its
 * own helper once the hash is done and so skip the delay
 * (docs/decisions.md): what stays is one hash at a time per caller, however
 * many helpers are started. */
#ifndef HS_PWHELPER_H
#define HS_PWHELPER_H

#include <stdbool.h>

#include "layout.h"
#include "records.h"
#include "timeouts.h"

#define HS_PASSWORD_HELPER     HS_LIBEXECDIR "/password-helper"
#define HS_PASSWORD_MAX        512   /* bytes; longer input is refused */

enum {
	HS_PWHELPER_OK = 0,
	HS_PWHELPER_MISMATCH = 1,
	HS_PWHELPER_REFUSED = 2,   /* not the caller's own account, bad usage */
	HS_PWHELPER_ERROR = 3,     /* unreadable or hostile entry, I/O error */
};

/* Client side (used by the PAM module): run the helper with a clean
 * environment, write the password to its stdin, wait.  Returns the exit
 * code above, or HS_PWHELPER_ERROR if it could not run.  The child never
 * inherits other fds (close_range). */
int hs_pwhelper_verify(const char *user, const char *password);
/* Fills *lstchg and *aging from the helper's answer. */
int hs_pwhelper_account(const char *user, long *lstchg, struct hs_aging *aging);

#endif
