/* One transaction over the global account files: the locks, the loaded
 * files, the edits and the ordered write.  Every root tool that changes
 * /etc/passwd, /etc/shadow, /etc/group, /etc/gshadow, /etc/subuid or
 * /etc/subgid goes through this, so the lock order (DESIGN section 4),
 * the write order and the cache flush exist once.
 *
 *     struct hs_accountset s = HS_ACCOUNTSET_INIT;
 *     if (hs_accountset_open(&s, HS_AS_GROUP_FILES, 0) < 0)
 *             hs_die(E_GRP_UPDATE, "%s", s.error);
 *     ... edit hs_accountset_db(&s, HS_AS_GROUP) (lib/etc/accountdb.h) ...
 *     if (hs_accountset_commit(&s) < 0) { hs_warn("%s", s.error); ... }
 *     hs_accountset_close(&s);    (flushes the caches after a commit)
 *
 * Lock order: passwd, shadow, group, gshadow, subuid, subgid, the order
 * shadow-utils takes them in.  Write order: subuid, subgid, gshadow,
 * group, shadow, passwd: the files that other files refer to (a passwd
 * line names a primary group) are written before the files that refer to
 * them, so a crash between two writes leaves at worst an unused group or
 * subordinate range, never a user whose group is missing.  A tool that
 * removes things (userdel) does its tree work first and lets the same
 * order leave at worst a passwd line whose group membership is gone. */
#ifndef HS_ACCOUNTSET_H
#define HS_ACCOUNTSET_H

#include <stdbool.h>

#include "accountdb.h"
#include "layout.h"

enum hs_as_file {
	HS_AS_PASSWD,
	HS_AS_SHADOW,
	HS_AS_GROUP,
	HS_AS_GSHADOW,
	HS_AS_SUBUID,
	HS_AS_SUBGID,
	HS_AS_COUNT
};
#define HS_AS_BIT(f) (1u << (f))
/* The files that exist only on some systems: locked and loaded only when
 * present (a tree system has no /etc/shadow; gshadow and the subordinate
 * id files are optional in shadow-utils too). */
#define HS_AS_OPTIONAL_FILES \
	(HS_AS_BIT(HS_AS_SHADOW) | HS_AS_BIT(HS_AS_GSHADOW) | \
	 HS_AS_BIT(HS_AS_SUBUID) | HS_AS_BIT(HS_AS_SUBGID))
#define HS_AS_USER_FILES \
	(HS_AS_BIT(HS_AS_PASSWD) | HS_AS_BIT(HS_AS_SHADOW) | HS_AS_BIT(HS_AS_GROUP) | \
	 HS_AS_BIT(HS_AS_GSHADOW))
#define HS_AS_GROUP_FILES (HS_AS_BIT(HS_AS_GROUP) | HS_AS_BIT(HS_AS_GSHADOW))
#define HS_AS_SUBID_FILES (HS_AS_BIT(HS_AS_SUBUID) | HS_AS_BIT(HS_AS_SUBGID))
#define HS_AS_ALL_FILES ((1u << HS_AS_COUNT) - 1)

struct hs_accountset {
	struct hs_accountdb db[HS_AS_COUNT];
	bool used[HS_AS_COUNT];         /* locked and loaded */
	bool committed;                 /* something was written: flush caches */
	enum hs_as_file failed;         /* the file the last failure concerns */
	bool lock_failed;               /* hs_accountset_open failed taking a lock
	                                 * (not loading a file) */
	struct hs_locks locks;
	char error[600];
	/* private */
	char path[HS_AS_COUNT][HS_PATHBUF_ETC];
	char pwd_lock[HS_PATHBUF_ETC];
};
#define HS_ACCOUNTSET_INIT { .locks = HS_LOCKS_INIT }

/* Look for every file (and /etc/.pwd.lock) below dir instead of /, for
 * the sets opened afterwards (NULL or "" restores /): the unit tests, and
 * groupadd --prefix (packaging/post-install.sh into a DESTDIR). */
void hs_accountset_use_root(const char *dir);
/* The path of each file (HS_ETC_*). */
const char *hs_accountset_path(enum hs_as_file f);

/* Lock every file in `files` (a mask of HS_AS_BIT) that exists (the
 * HS_AS_OPTIONAL_FILES only when present; /etc/passwd and /etc/group must
 * exist), then load each with hs_accountdb_load(load_flags, plus
 * HS_DB_MISSING_OK for the optional ones).  Waits up to
 * HS_LOCK_TIMEOUT_MS for the locks.  On failure nothing is held,
 * s->failed names the file and s->error holds a one-line message such as
 * "cannot lock /etc/group: timed out after 15 s"; returns -HS_E_TIMEOUT,
 * another lock error, or the load error. */
int hs_accountset_open(struct hs_accountset *s, unsigned files, unsigned load_flags);

/* The loaded file, or NULL when it is not part of the set (not asked for,
 * or an optional file that does not exist). */
struct hs_accountdb *hs_accountset_db(struct hs_accountset *s, enum hs_as_file f);

/* Write every changed file, in the write order above, as one transaction
 * (hs_accountdb_write_set, hs_globalfile_commit: backups FILE-, the journal,
 * the renames).  On failure nothing was written; s->failed and s->error
 * say which file.
 * Signals are the caller's business (hs_privs_block_signals around the commit
 * when the tool also changes the tree). */
int hs_accountset_commit(struct hs_accountset *s);

/* Flush the caches of the files written (when something was committed),
 * release the locks and free (and wipe) everything.  Safe to call twice
 * and after a failed open. */
void hs_accountset_close(struct hs_accountset *s);
/* Release the locks but keep the loaded files (a tool that goes on with
 * slow work, e.g. removing a home, after the account change is done).
 * Flushes the caches first, like close. */
void hs_accountset_unlock(struct hs_accountset *s);

/* ---- group membership, kept the same in /etc/group and /etc/gshadow ----
 * Each returns 1 when something changed, 0 when there was nothing to do,
 * or a negative error with s->error set.  A group without a gshadow line
 * (or a system without gshadow) changes only /etc/group. */

/* Add user to the member list of the group at index gi in /etc/group, and
 * of its gshadow line. */
int hs_accountset_add_member(struct hs_accountset *s, size_t gi, const char *user);
/* Remove user from the member list of the group at gi (and its gshadow
 * members; administrators are kept). */
int hs_accountset_remove_member(struct hs_accountset *s, size_t gi, const char *user);
/* Remove user from every member list and every gshadow administrator
 * list (userdel). */
int hs_accountset_forget_user(struct hs_accountset *s, const char *user);
/* Rename user in every member and administrator list (usermod -l). */
int hs_accountset_rename_user(struct hs_accountset *s, const char *old_name,
                              const char *new_name);

#endif
