/* Integrity checks of the account files and of the per-user tree: the
 * work of pwck and grpck, as a library so the unit tests can drive it.
 *
 * Each check walks one file (or the tree), says what is wrong through
 * io.say -- one line per problem, "PATH: what is wrong, what it should
 * be" for the tree, shadow-utils' wording for the classic checks -- and
 * offers a repair through io.ask ("...? ").  In read-only mode every
 * question is printed with the answer "No", as shadow-utils does.
 *
 * Repairs of the global files are edits of the loaded hs_accountdb; the
 * caller writes them (hs_accountset_commit or hs_accountdb_write) when
 * a->db_changed.  Repairs in the tree are made at once, each one atomic,
 * relative to directory fds and without following anything (DESIGN §3):
 * chown/chmod through an fd opened with O_NOFOLLOW on the same inode that
 * was checked, replacement by hs_fileio_replace_at, removal by
 * hs_walk_remove_tree_at.  The rule for every repair: it never gives an
 * account more than its current state does.  A file whose contents
 * someone other than root or its owner may have written (a shadow or
 * shell owned by another user, an aging not owned by root, a file with a
 * second link, a file that does not parse) is never blessed by a chown:
 * it is replaced by a locked password, the default shell, or an aging
 * that keeps the account expired (which is how readers already treat
 * it); the administrator then sets the real value with passwd, chsh or
 * chage. */
#ifndef HS_INTEGRITY_H
#define HS_INTEGRITY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "accountdb.h"
#include "accountset.h"
#include "config.h"
#include "shells.h"

/* The shell a repaired or recreated `shell` file gets (useradd's default). */
#define HS_INTEGRITY_DEFAULT_SHELL "/bin/sh"

struct hs_integrity_io {
	/* Print one line of the report (text has no newline). */
	void (*say)(void *ctx, const char *line);
	/* Print prompt (it ends in "? ") and return the answer.  Never
	 * called in read-only mode. */
	bool (*ask)(void *ctx, const char *prompt);
	void *ctx;
};

enum {
	HS_INTEGRITY_READ_ONLY = 1 << 0,    /* -r: report only, every answer is "No" */
	HS_INTEGRITY_NO_WARNINGS = 1 << 1,  /* pwck -q, grpck -S: errors only */
	HS_INTEGRITY_SYSLOG = 1 << 2,       /* log every repair made (LOG_AUTHPRIV) */
	/* pwck: there is a tree, so a user without a shadow line is
	 * hs_integrity_tree's to judge (its password may live there) */
	HS_INTEGRITY_TREE = 1 << 3,
};

struct hs_integrity_view;

struct hs_integrity {
	unsigned flags;
	struct hs_integrity_io io;
	/* -r on the system's files (hs_integrity_view below): what the
	 * tree and the homes show is reported only once it is confirmed
	 * against the current files with no writer at work; NULL: at once */
	struct hs_integrity_view *view;
	/* results */
	unsigned long problems;         /* errors and warnings reported (exit 2) */
	/* reported, with a repair offered, yet no bad entry by shadow-utils'
	 * exit status (grpck's member lists that disagree): exit 0 */
	unsigned long notes;
	unsigned long failures;         /* repairs that could not be made (exit 5) */
	/* what could not be read or examined (exit 3): the tree, a user's
	 * directory or file that cannot be opened, listed, stat'ed or read */
	unsigned long unreadable;
	bool db_changed;                /* a loaded global file was edited */
	bool tree_changed;              /* a repair was made in the tree */
	/* private: the catchable signals are blocked from a "yes" until the
	 * next question (or the end of the audit), so a ^C never stops a
	 * repair half-way, yet still works at every prompt */
	bool signals_blocked;
	sigset_t saved_mask;
	/* private: the report of one entry held back until it is
	 * confirmed (NULL: said at once), and the counts before it */
	struct hs_buf *held;
	unsigned long held_problems, held_failures, held_notes, held_unreadable;
};

/* pwck: /etc/passwd (pw) line by line: syntax, duplicate names (a later
 * line with a name already seen is offered for deletion) and user ids,
 * invalid names, missing groups, homes and shells (warnings), and, when
 * sp is not NULL, a matching /etc/shadow line (offered to be added; with
 * HS_INTEGRITY_TREE a missing one is left to hs_integrity_tree).
 * defs (login.defs, may be NULL) gives NONEXISTENT and the PASS_* values
 * of an added shadow line.  Returns 0 or a negative error (ENOMEM).
 * Each hs_integrity_* that may repair gives the signals back before it
 * returns. */
int hs_integrity_passwd(struct hs_integrity *a, struct hs_accountdb *pw, struct hs_accountdb *sp,
                    const struct hs_config *defs);
/* pwck: a classic /etc/shadow: syntax, duplicates, lines without a
 * passwd entry, last change in the future (warning). */
int hs_integrity_shadow(struct hs_integrity *a, struct hs_accountdb *sp, struct hs_accountdb *pw);

/* The tree to check (DESIGN §2). */
struct hs_integrity_tree {
	const char *path;               /* HS_TREE_DIR: opened with O_NOFOLLOW */
	uid_t admin_uid;                /* 0: owner of the tree and of every aging */
	gid_t tree_gid, auth_gid;       /* HS_ANY_GID: the group does not exist */
	const struct hs_shells *shells; /* /etc/shells for the shell files, or NULL */
	/* /etc/shadow, or NULL: a user with a line there (or a hash in
	 * passwd's field) needs no directory, and one with both is reported */
	struct hs_accountdb *shadow;
};

/* pwck: the tree against /etc/passwd: the tree directory, one directory
 * per user and nothing else (directories without a user, users without
 * a directory, reserved and temporary names left over), and in each
 * directory exactly shadow, shell and aging, each checked for type,
 * owner, group, mode, link count, size and contents.  Never follows a
 * link.  Returns 0 (also when the tree has problems) or a negative error
 * (-ENOENT: there is no tree; nothing was said). */
int hs_integrity_tree(struct hs_integrity *a, struct hs_accountdb *pw, const struct hs_integrity_tree *t);

/* grpck: /etc/group (gr): syntax, duplicate names and group ids, invalid
 * names, members that do not exist (checked in pw, then getpwnam), and
 * when gs is not NULL its agreement with /etc/gshadow (a missing line,
 * members listed in one file only: gshadow is made to follow group). */
int hs_integrity_group(struct hs_integrity *a, struct hs_accountdb *gr, struct hs_accountdb *gs,
                   struct hs_accountdb *pw);
/* grpck: /etc/gshadow: syntax, duplicates, lines without a group,
 * administrators and members that do not exist. */
int hs_integrity_gshadow(struct hs_integrity *a, struct hs_accountdb *gs, struct hs_accountdb *gr,
                     struct hs_accountdb *pw);

/* -s: put the entries of db (passwd or group) in id order (stable),
 * and those of the shadow file (may be NULL) in the order of db.
 * Refuses (-HS_E_FORMAT, nothing changed) a file with a line that is not
 * an entry.  Marks both dirty. */
int hs_integrity_sort(struct hs_accountdb *db, struct hs_accountdb *shadow);

/* A run without the writers' locks (-r) next to running writers.  A
 * writer (ours, a shadow-utils tool, sysusers) holds /etc/.pwd.lock
 * while it replaces the global files one by one and then renames,
 * creates or removes what goes with them (a user's directory, a home),
 * so files read without the lock may be half of its change: a passwd
 * from before a useradd and a tree from after it show a directory
 * without a user, a group from before a userdel and a passwd from after
 * it a member who does not exist.  So -r reads the four files, then
 * takes the lock as a reader (polling, never waiting in the queue) only
 * to see that none of them changed: then what it read is one state, the
 * files as no writer was changing them.  Each report about an entry
 * outside them (a tree entry, a home) is confirmed the same way, the
 * entry seen the same before and after the look; a changed file is read
 * again and the entry checked again against it.  The lock is held for
 * a few stat()s of /etc, never while anything a user controls is
 * looked at, so a writer waits microseconds at most. */
struct hs_integrity_ids {
	struct stat st[4];      /* passwd, shadow, group, gshadow */
	int err[4];             /* 0 or the errno of their stat() */
};

struct hs_integrity_view {
	/* the files as last confirmed (or as read, when busy) */
	struct hs_accountdb *pw, *sp, *gr;      /* sp, gr: NULL if none */
	struct hs_integrity_ids ids;
	/* how long the confirmations may still wait for the lock in all */
	int64_t wait_left_ns;
	/* the lock could not be had in time: the files read were not
	 * confirmed, or entries were left unreported */
	bool busy;
	/* the files changed at every look: a writer at work, as with a lock
	 * that stays busy; the reports are said as found from then on, and
	 * the files not read again (a writer without end must neither hide
	 * them nor make the run read the files without end) */
	bool changing;
	unsigned long unconfirmed;      /* entries not reported for it */
	/* private: the files read again by a confirmation */
	struct hs_accountdb own[3];
	bool own_loaded;
};

enum hs_integrity_confirm {
	HS_INTEGRITY_CONFIRMED,         /* nothing changed, no writer at work */
	HS_INTEGRITY_CHANGED,           /* a file changed since its ids were read */
	HS_INTEGRITY_BUSY,              /* the lock could not be had in time */
};

/* Fill v's defaults: no file read, the whole wait (HS_CHECK_CONFIRM_WAIT_MS) left. */
void hs_integrity_view_init(struct hs_integrity_view *v);
/* The ids of the four files now (read them before the files). */
void hs_integrity_ids_read(struct hs_integrity_ids *ids);
/* Are the files still those of v->ids, with no writer at work?  Takes
 * the writers' lock as a reader for the look; sets v->busy on BUSY. */
enum hs_integrity_confirm hs_integrity_view_confirm(struct hs_integrity_view *v);
/* Free the files the view read itself. */
void hs_integrity_view_free(struct hs_integrity_view *v);

/* For a run without the writers' locks (-r): is dirfd/name there with no
 * writer at work?  A writer (useradd, usermod, a shadow-utils tool) holds
 * /etc/.pwd.lock from before its journal, staged files and reserved
 * directories exist until after they are gone, so what it has in progress
 * is no left-over.  The read lock is tried once, never waited for, and
 * held only for the look: a long -r run must not hold the writers off. */
bool hs_integrity_left_by_no_writer(int dirfd, const char *name);

/* The io of the programs: say prints the line on stdout; ask prints the
 * prompt, reads a line from stdin (an answer starting with y or Y is yes;
 * end of file is no) and, when stdin is not a terminal, prints the
 * answer, so a piped or logged run reads like a terminal session. */
extern const struct hs_integrity_io hs_integrity_stdio;

/* The two files a checker works on: /etc/passwd and /etc/shadow, or
 * /etc/group and /etc/gshadow (or the files named on its command line),
 * loaded with HS_DB_LENIENT so every bad line can be reported. */
struct hs_integrity_files {
	struct hs_accountdb *db;        /* passwd or group */
	struct hs_accountdb *shadow;    /* shadow or gshadow; NULL: not checked */
	bool lock_failed;               /* the open failed on a lock (exit 4) */
	char error[600];                /* why the open or the commit failed */
	/* private */
	bool use_set;
	struct hs_accountset set;
	struct hs_accountdb own[2];
	struct hs_locks locks;
};

/* group: false for passwd+shadow, true for group+gshadow.  path NULL:
 * the system files, the shadow file only when it exists (through
 * lib/accountset when locking).  Otherwise the files given (shadow_path
 * NULL: no shadow file is checked), both of which must exist.  lock:
 * take the locks (DESIGN §4); read-only runs take none.  Returns 0 or a
 * negative error with f->error (and f->lock_failed) set. */
int hs_integrity_files_open(struct hs_integrity_files *f, bool group, const char *path,
                        const char *shadow_path, bool lock);
/* Write what changed, the shadow file first (a passwd or group line is
 * never left pointing at nothing); f->error names the file on failure. */
int hs_integrity_files_commit(struct hs_integrity_files *f);
/* Flush the caches after a commit of the system files, release the
 * locks, free. */
void hs_integrity_files_close(struct hs_integrity_files *f);

#endif
