/* All-or-nothing replacement of several files in one directory (the
 * global account files in /etc), surviving SIGKILL and power loss.
 *
 * One rename replaces one file atomically; a tool that changes /etc/group
 * and /etc/passwd needs two, and a crash between them used to leave a
 * private group without its user.  So a commit goes:
 *   1. stage: every new file is written whole, with its final owner and
 *      mode, at its fixed name DIR/.BASE.hs-txn (created there with
 *      O_EXCL|O_NOFOLLOW, labelled as BASE; a leftover there is removed
 *      once first) and synced; then the directory is synced once, so
 *      every staged name is durable;
 *   2. commit point: the journal DIR/.hardened-shadow.txn, written and
 *      synced as an unnamed inode, is linked whole to its name (renamed
 *      over it when a journal of work is there), and the directory
 *      synced; it names each staged file and the identity (device,
 *      inode, size, mtime, ctime) of the file it replaces;
 *   3. install: each .BASE.hs-txn is exchanged with BASE (RENAME_EXCHANGE:
 *      BASE is never missing) and the old file, now under the staged name,
 *      is renamed to the backup BASE-: it is never copied.  A file system
 *      that cannot exchange gets the backup written from the old contents
 *      and a plain rename.  Should one of these fail, the files installed
 *      so far are put back from their backups and nothing has changed;
 *   4. the journal is removed.
 * A crash before 2 leaves the old state: a staged file (whole or cut short
 * mid-write) that no committed journal names is removed by the next
 * recovery, and no journal there at the time names one (a prepared one
 * or one of work alone names no file; one naming files was finished by
 * the recovery before the tool staged anything).  From 2 on the change
 * is committed, and hs_txn_recover, run by every tool under the locks
 * before it reads the files (lib/accountset does), finishes it: the next
 * tool sees the new state.  The order makes a journal durable only after
 * every staged name and contents it refers to: each staged file is synced
 * before the directory, the directory before the journal exists, so a
 * journal that survives a crash never names a staged file that did not
 * (the recovery would take a missing one for installed).  A file that
 * another program (one that does not know the journal) replaced after
 * the crash keeps that program's version: its staged file is dropped and
 * the recovery says so.
 *
 * One file needs no journal: it is staged the same way, and its exchange
 * (or rename) is the commit point.  The only caller is hs_globalfile_commit
 * (lib/etc/globalfile.h), the one writer of the global files. */
#ifndef HS_TXN_H
#define HS_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define HS_TXN_JOURNAL ".hardened-shadow.txn"
#define HS_TXN_SUFFIX ".hs-txn"
#define HS_TXN_MAX_FILES 8

struct hs_txn_file {
	const char *base;               /* file name in the directory */
	const struct iovec *iov;        /* new contents, in pieces */
	size_t n_iov;
	const char *old_data;           /* what BASE holds, for the backup BASE-;
	                                 * NULL: read what the file holds */
	size_t old_len;
	const struct stat *expect;      /* BASE as the caller read it (NULL: no
	                                 * check): the staged copy is made only
	                                 * from that file, else -HS_E_CHANGED */
	uid_t uid;                      /* owner and mode when BASE does not exist */
	gid_t gid;                      /* yet; an existing file keeps its own */
	mode_t mode;
};

/* Home and tree work a transaction carries (useradd, useradd -m,
 * userdel -r), so that an interruption leaves the complete old or the
 * complete new state.  The journal names each piece; before the commit
 * point a NEW piece is undone (its reserved directory removed), after it
 * every piece is finished, by the commit itself or by the next recovery
 * that can run work (hs_txn_work_enable).  Paths are absolute; parent is
 * the identity of the directory that holds path as the caller opened and
 * checked it, and a recovery acts on nothing else. */
enum hs_txn_work_kind {
	HS_TXN_TREE_NEW = 1,    /* tmp, a user's directory built whole beside
				 * path in the tree: renamed to path (never over
				 * anything) and handed to uid:gid mode */
	HS_TXN_TREE_DEL,        /* the user's directory path (self): removed
				 * (hs_userdir_remove) */
	HS_TXN_HOME_NEW,        /* tmp, a home built whole (root's 0700) beside
				 * path: renamed to path and handed over */
	HS_TXN_HOME_DEL,        /* path (self: a home, a mail spool): taken away
				 * and removed through the walker; refused (a
				 * mount inside): handed back to uid:gid mode */
};
struct hs_txn_id {
	unsigned long long dev, ino;    /* 0, 0: not known yet */
};
struct hs_txn_work {
	enum hs_txn_work_kind kind;
	const char *path;
	const char *tmp;                /* NEW: a reserved name in path's directory */
	uid_t uid;
	gid_t gid;
	mode_t mode;
	struct hs_txn_id parent, self;  /* self: tmp (NEW) or path (DEL) */
	bool force;                     /* HOME_DEL of userdel -f: removed even
					 * where a passwd line names it, as the
					 * run not interrupted removes it */
	int result;                     /* out: 0 done, or a negative error */
	char where[256];                /* out (HOME_DEL refused): the offending
					 * entry below path */
};

/* Why a removal left a home as it was, when what it met keeps it (a
 * mount on or in it, a nest too deep, an entry replaced during the walk,
 * what refuses root: where names it), or NULL when the failure is of
 * another kind.  The words of userdel -r and of a recovery alike:
 * "not removing PATH: REASON at PATH[/WHERE]". */
const char *hs_txn_work_kept_because(const struct hs_txn_work *w);

/* What a recovery's check (hs_txn_work_ops.check) says of a piece. */
enum hs_txn_verdict {
	HS_TXN_FINISH = 0,      /* passwd still wants it: finish it */
	HS_TXN_ORPHANED,        /* NEW: passwd no longer names path for uid (the
				 * account was deleted or moved by a tool that
				 * does not know the journal): undo it */
	HS_TXN_CLAIMED,         /* HOME_DEL (not forced): passwd names path as a
				 * home again: leave it */
};

/* The part of the work that walks trees and renames directories, which
 * setid programs must not link: a program that may have to finish it
 * (the root tools) calls hs_txn_work_enable (txnwork.c) once, at its
 * start: it also finishes a journal's pending work there, under the locks,
 * before the tool confines itself to its own job's paths.  Without it a
 * recovery installs the files and leaves the work in the journal. */
struct hs_txn_work_ops {
	int (*forward)(struct hs_txn_work *w);  /* finish one piece: 0 or -errno */
	int (*back)(struct hs_txn_work *w);     /* undo one (before the commit point) */
	int (*sweep)(int dirfd);                /* the stale reserved directories of the
						 * tree below dirfd: how many removed */
	/* A recovery only, for the pieces not to be undone anyway (undo[i]):
	 * dir_path/passwd against each piece, into verdict[i].  0, or a
	 * negative error (passwd unreadable: the recovery fails, the
	 * journal stays). */
	int (*check)(const char *dir_path, const struct hs_txn_work *work, const bool *undo,
		     size_t n_work, enum hs_txn_verdict *verdict);
	/* undo an ORPHANED piece: its reserved build, or what it put at path
	 * (0); 1: left, a home handed over already; or -errno */
	int (*revert)(struct hs_txn_work *w);
};
void hs_txn_set_work_ops(const struct hs_txn_work_ops *ops);
void hs_txn_work_enable(void);

/* A new user's directory as a TREE_NEW piece (useradd, newusers): a
 * directory already at USER (no passwd line names it: the caller holds the
 * locks and checked) is removed first, so it is never inherited -- err
 * says so, to be logged; then USER's directory is built whole under a
 * reserved name below treefd (hs_userdir_build) and *w filled with path
 * (HS_PATHBUF_USER bytes) and tmp (NAME_MAX + 1) as its strings.  0, or
 * negative with err set. */
struct hs_shadow;
struct hs_aging;
struct hs_err;
int hs_txn_work_tree_new(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                         const struct hs_shadow *shadow, const struct hs_aging *aging,
                         const char *shell, struct hs_txn_work *w, char *path, char *tmp,
                         struct hs_err *err);

/* Before the work is begun: write the journal as "prepared" (work[i],
 * nothing committed), so that a crash while the home is being built is
 * undone by the next recovery.  0 or negative with err set. */
int hs_txn_prepare(int dirfd, const char *dir_path, const struct hs_txn_work *work,
                   size_t n_work, char *err, size_t err_size);

/* Replace every files[i] (in the order given) below dirfd as described
 * above, then do work[i] (the tree pieces, then the homes; each one's
 * result in work[i].result: a piece that fails is reported there and
 * dropped, the change stays committed).  On a failure before the commit
 * point the work is undone too and a prepared journal removed.  The caller holds the locks and blocks the catchable signals.
 * On failure before the commit point nothing has changed (the staged
 * files are removed) and the return is negative with err set ("cannot
 * write /etc/.group.hs-txn: No space left on device"); on a failure after
 * it (only renames and backups remain) it goes on with the other files,
 * leaves the journal for the next recovery and returns negative.
 * dir_path names the directory in messages.  On failure *failed (if not
 * NULL) is the index of the file that failed, n_files when no one file
 * did (the journal, the directory): the message may name others too (one
 * that could not be put back). */
int hs_txn_commit(int dirfd, const char *dir_path, const struct hs_txn_file *files,
                  size_t n_files, struct hs_txn_work *work, size_t n_work, char *err,
                  size_t err_size, size_t *failed);

/* Two questions about dirfd's journal, which differ for one of work
 * alone (left by a recovery for the next tool, carried by every commit,
 * or the work of a change rolled back).  journal_left: is there one at
 * all, whatever it holds (a running commit's, one that cannot be read)?
 * Then a reserved directory of the tree may be its work still to be put
 * in place: the sweep (hs_txn_recover) and pwck keep them, and
 * hs_txn_work_enable finishes the work.  files_pending: does it name
 * files a recovery installs (a change past its commit point; an
 * unreadable one may: true)?  Then that change will be made: usermod's
 * failed commit passed its point, pwck -r may have read half of it. */
/* (journal_left with AT_FDCWD: the journal of HS_ETC_DIR.) */
bool hs_txn_journal_left(int dirfd);
bool hs_txn_files_pending(int dirfd);

/* Finish or discard what an interrupted commit left below dirfd: with a
 * journal, install every staged file whose target is still the one the
 * journal names (else drop it), finish its work (when enabled, each
 * piece checked against dir_path/passwd first: hs_txn_work_ops.check;
 * else keep the journal for it), then remove the journal; a prepared
 * journal: undo its work and remove the staged files; without one,
 * remove staged files of the given base names (never committed).  Either
 * way, remove the temp files (lib/io/tempname.h) of a replace that was
 * killed before its rename: of each base, its backup BASE-, its staged
 * file and the journal.
 * With the work enabled, then remove the tree's reserved directories
 * that no journal names any more (hs_txn_work_enable says which).
 * Returns 0 when there was nothing to do, 1 when something was completed
 * or dropped (msg then says what, for the tool to print as a warning),
 * or a negative error with msg set.  The caller holds the locks.
 * litter (may be NULL): other names the same listing of dirfd removes,
 * quietly, so that a tool lists the directory once. */
struct hs_txn_litter {
	bool (*match)(const char *name, void *ctx);
	void *ctx;
};
int hs_txn_recover(int dirfd, const char *dir_path, const char *const bases[], size_t n_bases,
                   const struct hs_txn_litter *litter, char *msg, size_t msg_size);

#endif
