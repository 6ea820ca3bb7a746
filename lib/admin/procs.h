/* Running processes of an account (userdel, usermod refuse while the user
 * is logged in, as shadow-utils does). */
#ifndef HS_PROCS_H
#define HS_PROCS_H

#include <sys/types.h>

/* shadow-utils' user_busy(): the pid of a process (or of a process one of
 * whose threads) runs with uid as its real, effective, saved or file-system
 * uid, under any root directory or mount namespace (a chroot or a container
 * sharing our user namespace runs as the same uid); 0 when there is none.
 * The caller itself is skipped. */
pid_t hs_procs_user_busy(uid_t uid);

#endif
