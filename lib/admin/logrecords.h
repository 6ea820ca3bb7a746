/* The records others keep per uid in /var/log/lastlog (pam_lastlog) and
 * /var/log/faillog, at uid * record size: a uid of 4,000,000,000 would place
 * a record 1.1 TB (lastlog) or 128 GB (faillog) into the file.  useradd
 * resets a reused uid's records, usermod -u moves them, as shadow-utils'
 * do; neither ever grows a file further than shadow-utils' would, and
 * lastlog is written only up to LASTLOG_UID_MAX (login.defs; unset: no
 * limit, as for pam_lastlog).  A missing file, or one that is not a
 * regular file, is left alone. */
#ifndef HS_LOGRECORDS_H
#define HS_LOGRECORDS_H

#include <stdbool.h>
#include <sys/types.h>

struct hs_config;
struct hs_err;

/* Zero uid's records where the files hold them (a deleted user's last
 * login and failures are not the new account's).  0, or -errno with *err
 * naming each file that could not be written. */
int hs_logrecords_reset(const struct hs_config *defs, uid_t uid, struct hs_err *err);

/* old_uid's records follow the account to new_uid: a record that holds
 * anything is copied there, which may grow the file up to new_uid's record
 * as shadow-utils' usermod grows it (with nothing to copy, new_uid's record
 * is only zeroed where the file holds it), and zeroed at old_uid.
 * old_shared: another account keeps old_uid, and its record stays;
 * new_shared: new_uid is another account's too (-o), and its record stays
 * that account's.  0, or -errno with *err naming each file that could not
 * be written. */
int hs_logrecords_move(const struct hs_config *defs, uid_t old_uid, uid_t new_uid,
		       bool old_shared, bool new_shared, struct hs_err *err);

#endif
