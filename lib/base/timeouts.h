/* Every timeout and delay of the suite, in milliseconds, named here and
 * nowhere else.  Milliseconds so that tests can pass short deadlines and
 * never wait out whole seconds; messages still print whole seconds
 * ("cannot lock /etc/passwd: timed out after 15 s", hs_lock_strerror). */
#ifndef HS_TIMEOUTS_H
#define HS_TIMEOUTS_H

/* The global-file locks (/etc/.pwd.lock and FILE.lock, as shadow-utils'
 * 15 s) and a user's directory lock.  The password helper holds the
 * latter through a failed guess's delay, so writers must outwait that. */
#define HS_LOCK_TIMEOUT_MS         15000u

/* Root's writers wait this long for a user's directory lock, then take
 * the directory over (hs_userdir_take_over): nothing a user holds may
 * delay root's change to their account by more than this. */
#define HS_TAKE_OVER_MS            1000u

/* pwck -r and grpck -r take the writers' lock as readers only to confirm
 * what they read (src/check/integrity.h): they poll for it while a writer
 * holds it, at most this long in all in one run, then report what they
 * can without it. */
#define HS_CHECK_CONFIRM_WAIT_MS   3000u

/* The PAM module's opportunistic re-hash after a login: optional work,
 * so it gives up sooner than a password change would. */
#define HS_REHASH_LOCK_TIMEOUT_MS  5000u

/* A failed password verification costs this long (pam_unix's 2 s), in the
 * password helper and in the PAM module. */
#define HS_FAIL_DELAY_MS           2000u

/* newgrp and sg: a wrong group password costs this long (shadow-utils'
 * sleep(1)), under the caller's guess lock. */
#define HS_NEWGRP_FAIL_DELAY_MS    1000u

/* The session parent: a child still there this long after the first
 * forwarded signal is killed; a closing pseudo-terminal is drained this
 * long. */
#define HS_SESSION_KILL_GRACE_MS   2000u
#define HS_SESSION_PTY_DRAIN_MS    100u

/* vipw/vigr: an editor still running this long after the signal passed
 * on to it is killed. */
#define HS_EDIT_GRACE_MS           3000u

#endif
