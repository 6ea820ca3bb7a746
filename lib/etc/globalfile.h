/* Locking and rewriting of the global account files (DESIGN.md section 4):
 * /etc/passwd, /etc/group, /etc/gshadow, /etc/shadow, /etc/subuid,
 * /etc/subgid.  Interoperates with shadow-utils and systemd-sysusers. */
#ifndef HS_GLOBALFILE_H
#define HS_GLOBALFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "strbuf.h"

#include "timeouts.h"

/* The locks a tool holds.  Take them with hs_globalfile_lock, in one call,
 * naming every file the operation touches; release with hs_globalfile_unlock
 * (also safe after a failed acquire and on a zeroed struct). */
#define HS_LOCK_MAX_FILES 8
struct hs_locks {
	int pwd_lock_fd;                       /* /etc/.pwd.lock, OFD write lock */
	size_t n;                              /* number of FILE.lock held */
	char *held[HS_LOCK_MAX_FILES];         /* paths of FILE.lock we created */
	int etc_fd;                            /* the locks' directory (O_DIRECTORY), set
	                                        * once nothing is left to finish: the
	                                        * files are read and replaced through it */
	char boot_id[40];                      /* this boot's, for the clean record */
};
#define HS_LOCKS_INIT { .pwd_lock_fd = -1, .etc_fd = -1 }

/* Take /etc/.pwd.lock (an fcntl write lock on the whole file, as lckpwdf()
 * and systemd-sysusers take it) and then, in the order given, shadow-utils'
 * hard-link lock FILE.lock for each of files[] (write FILE.PID containing
 * the PID and a NUL, link it to FILE.lock, break a lock whose PID is dead,
 * verify the link count).  Waits until timeout_ms milliseconds have passed
 * (polling, never alarm()), then fails with -HS_E_TIMEOUT (programs pass
 * HS_LOCK_TIMEOUT_MS and report with hs_warn_lock); on failure
 * nothing is held.  *failed_path (if not NULL) names the lock that failed.
 * The lock paths are built from the file paths, so a caller working on a
 * different root (tests) passes its own paths; pwd_lock_path NULL means
 * HS_ETC_PWD_LOCK.  The .pwd.lock fd is O_CLOEXEC; note that an OFD lock
 * is shared with a child made by fork() until the child execs or closes
 * pwd_lock_fd.
 *
 * Under the locks, before anything is read, what a killed tool left is
 * finished or removed (lib/etc/txn.h).  Finding it takes a listing of the
 * directory (and of the tree), so .pwd.lock records when there can be
 * none: its holder empties it when it takes it and, releasing it with no
 * journal pending and no reserved directory marked in the tree, writes
 * "hardened-shadow: no interrupted update since boot ID".  A holder killed in between leaves it empty, a power loss a
 * record of another boot; either way the next holder looks. */
int hs_globalfile_lock(struct hs_locks *l, const char *pwd_lock_path,
                    const char *const files[], size_t n_files,
                    unsigned timeout_ms, const char **failed_path);
void hs_globalfile_unlock(struct hs_locks *l);

/* A reader's hold on /etc/.pwd.lock: an fcntl read lock on the whole file
 * (OFD), which every writer's write lock (ours, lckpwdf(), sysusers)
 * conflicts with, while other readers share it.  For a read-only check
 * that must tell a writer's work in progress (its journal, staged files,
 * reserved directories) from what a killed one left.  No FILE.lock is
 * taken, nothing is recovered or written; a missing lock file is no
 * writer (nothing is held).  Waits like hs_globalfile_lock (timeout_ms 0:
 * one try), then -HS_E_TIMEOUT; release with hs_globalfile_unlock. */
int hs_globalfile_read_lock(struct hs_locks *l, const char *pwd_lock_path,
			    unsigned timeout_ms);

/* Read a global file whole (regular, not a symlink, at most
 * HS_GLOBALFILE_MAX).  *data is malloc'd and NUL-terminated. */
int hs_globalfile_read(const char *path, char **data, size_t *len);

/* The one writer of the global files: every replacement of /etc/passwd,
 * shadow, group, gshadow, subuid, subgid (and /etc/shells,
 * /etc/default/useradd) goes through here, and nothing else renames over
 * them (tests/lint/one-writer checks).  Each file is written whole to a
 * staged name, then exchanged with PATH, the old file becoming the backup
 * PATH- (written from old_data, or read again, only where the file system
 * cannot exchange): with several files, after the transaction journal
 * names them all (lib/etc/txn.h), so a crash leaves every file old or
 * every file new.  An existing file keeps its owner and
 * mode; a new one gets uid, gid and mode.  All paths must be in one
 * directory: dir_fd (> 2) when the caller has it open (the locks'
 * etc_fd), else 0 and it is opened by name.  The caller holds the locks (hs_globalfile_lock, which also
 * finishes an interrupted commit) and blocks the catchable signals.
 * 0, or negative with err set ("cannot write /etc/group: ...") and
 * *failed (if not NULL) the index of the file that failed, n when no one
 * file did (the journal, the directory; hs_txn_commit); a failure before
 * the commit point changes nothing. */
struct iovec;
struct hs_global_file {
	const char *path;
	const struct iovec *iov;        /* new contents, in pieces */
	size_t n_iov;
	const char *old_data;           /* what PATH holds now, or NULL */
	size_t old_len;
	const struct stat *expect;      /* PATH as it was read (NULL: no check):
	                                 * another one fails with -HS_E_CHANGED */
	uid_t uid;                      /* for a file that does not exist yet */
	gid_t gid;
	mode_t mode;
};
/* Are a and b named in one directory (the same text up to their last
 * '/'): a file the locks' directory fd (struct hs_locks etc_fd) reaches? */
bool hs_globalfile_same_dir(const char *a, const char *b);
int hs_globalfile_commit(int dir_fd, const struct hs_global_file *files, size_t n, char *err,
			 size_t err_size, size_t *failed);

/* Home and tree work (lib/etc/txn.h) that the next hs_globalfile_commit
 * carries in its journal and does after its files are installed, with
 * each piece's result in work[i].result; work must live until then.  A
 * commit with no file to write does the work alone. */
struct hs_txn_work;
void hs_globalfile_set_work(struct hs_txn_work *work, size_t n);

/* Write the journal as prepared for work (hs_txn_prepare) in the
 * directory of the global files, before the work is begun.  0 or
 * negative with err set. */
int hs_globalfile_prepare(const struct hs_txn_work *work, size_t n, char *err, size_t err_size);

/* Run the recovery of the global files now (under the locks), as
 * hs_globalfile_lock does: a tool whose prepared work failed before its
 * commit undoes it so.  0 or negative (said on stderr). */
int hs_globalfile_recover(void);

/* hs_globalfile_commit of one file from one buffer. */
int hs_globalfile_replace(const char *path, const char *data, size_t len,
                      uid_t default_uid, gid_t default_gid, mode_t default_mode);

/* Ask running caches to drop a database ("passwd", "group", "shadow"):
 * nscd -i DB and sss_cache -E, when those programs exist.  Failures are
 * ignored: the caches are an optimisation. */
void hs_globalfile_flush_caches(const char *db);


#endif
