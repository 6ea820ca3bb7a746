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
#include <stddef.h>
#include <sys/types.h>

struct hs_config;
struct hs_err;
struct utmpx;

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

/* The login records that su and login append to logs others append to as
 * well (wtmp, btmp, su's SULOG_FILE).  glibc's updwtmpx() holds an fcntl
 * lock on the whole file while it writes, and every other writer waits
 * for that lock up to 10 s, then drops its record.  su runs with the
 * caller's real uid, so the caller may stop it (SIGSTOP, or a cgroup
 * freezer the caller owns) at any instant, that lock held: every other
 * user's login and su failures would be lost meanwhile.  These writers
 * hold no lock: one write(2) of the whole record to an O_APPEND descriptor,
 * which the kernel places at the end as one piece, as OpenSSH writes btmp.
 * Stopped anywhere, they hold nothing another writer waits for, and they
 * wait for no one (a stopped updwtmpx() elsewhere cannot hold them up). */

/* Fill *ut: type, user, the terminal line ("pts/3", NULL: none), its id
 * (NULL: none), the remote host (NULL: none; a numeric one also goes into
 * ut_addr_v6, no name is looked up), this process and the time now.  A
 * string is cut to its field (utmp needs no NUL in a full field). */
void hs_logrecords_utmp_fill(struct utmpx *ut, short type, const char *user, const char *line,
			     const char *id, const char *host);

/* Append size bytes to path (an absolute path, its last component never
 * followed) in one write(2), without a lock.  The file must be a regular
 * file of root's, with one link unless its directory is root's alone
 * (/var/log).  create: make it (0600) when missing; otherwise a missing file
 * is -ENOENT and nothing is written, as updwtmpx() never creates wtmp or
 * btmp.  The caller's RLIMIT_FSIZE is lifted for the write; where it
 * cannot be, a write it would cut is not made (-EFBIG).  0, -errno (-EIO:
 * a short write), or hs_fileio_check_stat's -HS_E_*. */
int hs_logrecords_append(const char *path, const void *rec, size_t size, bool create);

/* The same for one line of text (su's SULOG_FILE): line holds len bytes,
 * the last of them its only newline (else -EINVAL), at most 1024.  After
 * a line cut short, a newline ends it first, in the same write, so ours
 * starts a line. */
int hs_logrecords_append_line(const char *path, const char *line, size_t len, bool create);

/* The same for a utmp record (wtmp, btmp; never created).  While a glibc
 * writer holds its lock, which it may have been stopped with between
 * taking the end of the file and writing there, an empty record goes
 * first in the same write, for that writer to overwrite instead of ours
 * (otherwise left: last(1) skips it, lastb(1) shows a blank line).  After a
 * record cut short (a full disk, a crash), zeros complete it first, so ours
 * starts at a multiple of the record size. */
int hs_logrecords_append_utmp(const char *path, const struct utmpx *ut);

/* utmp (path: _PATH_UTMP) is a file of slots, updated in place, and glibc's
 * getutxent() and pututxline() wait up to 10 s for its fcntl lock, then
 * give up.  utempter (setgid utmp, started by a user's terminal emulator)
 * and util-linux's su hold that lock with a user's real uid: stopped, they
 * made login wait 10 s for each read and write of utmp and lose its entry.
 * These read and write it without waiting for any lock. */

/* pid > 0: pid's live entry in utmp (INIT_ or LOGIN_PROCESS, init's or the
 * one getty made for login, on any line: getty may name the terminal by
 * a link; USER_PROCESS only on line, "tty3", unless line is NULL: the stale
 * entry of a user's utempter for another pty, its process gone and its pid
 * reused by getty, is not login's).  pid 0: line's
 * ("pts/3": LOGIN_ or USER_PROCESS, as getutxline() finds it, the name
 * pam_modutil_getlogin() gives).  The first, into *found: 0, -ENOENT
 * (none), or as hs_logrecords_append. */
int hs_logrecords_utmp_find(const char *path, pid_t pid, const char *line, struct utmpx *found);

/* *ut (INIT_, LOGIN_, USER_ or DEAD_PROCESS, else -EINVAL) into its slot,
 * which pututxline() would have chosen: the first whole record of a
 * process of the same ut_id (ut_line where an id is empty), in one
 * pwrite(2); with none, appended as by hs_logrecords_append_utmp.  glibc's
 * lock is taken when free, never waited for.  0, or as
 * hs_logrecords_append (never created). */
int hs_logrecords_put_utmp(const char *path, const struct utmpx *ut);

/* A refused login or su appended to login.defs' FTMP_FILE (default
 * /var/log/btmp, lastb's), when that file exists.  As
 * hs_logrecords_append; -EINVAL for an FTMP_FILE that is not absolute. */
int hs_logrecords_failure(const struct hs_config *defs, const struct utmpx *ut);

#endif
