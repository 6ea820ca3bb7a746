/* The per-user tree /etc/hardened-shadow/USER/{shadow,aging,shell}
 * (DESIGN.md sections 2 and 3).  This is the only code that knows the
 * layout; every tool, the PAM module and the NSS module go through it. */
#ifndef HS_USERDIR_H
#define HS_USERDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "fileio.h"  /* HS_ANY_UID, HS_ANY_GID */
#include "records.h"
#include "timeouts.h"

/* Open HS_TREE_DIR (O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC).  Returns an fd or
 * a negative error. */
int hs_userdir_open_tree(void);

/* Open the user's directory below treefd after validating the name (an
 * invalid name gives -HS_E_NAME without any system call).  The directory
 * must be a real directory (not a symlink) owned by expected_uid
 * (HS_ANY_UID = take whatever owns it; *owner_out reports it). */
int hs_userdir_open(int treefd, const char *user, uid_t expected_uid, uid_t *owner_out);

/* Read and parse the user's files.  Ownership rules:
 *   shadow, shell: owned by the directory owner (owner), link count 1,
 *                  regular, at most HS_USERFILE_MAX bytes;
 *   aging:         owned by root, same other checks.
 * The string fields of *out point into buf (the caller's storage, at least
 * HS_USERFILE_MAX + 2 bytes).  Errors name nothing; the caller knows the
 * path (hs_userdir_path). */
int hs_userdir_read_shadow(int udirfd, uid_t owner, char *buf, size_t bufsize,
                           struct hs_shadow *out);
int hs_userdir_read_aging(int udirfd, struct hs_aging *out);
int hs_userdir_read_shell(int udirfd, uid_t owner, char *buf, size_t bufsize,
                          const char **shell_out);
/* The readers' check of a file's contents (len bytes in buf, NUL-
 * terminated): one line ending in exactly one '\n' (optional when
 * newline_optional), no other newline and no NUL byte.  The newline is
 * cut; on failure (-HS_E_FORMAT) buf is wiped.  pwck checks with it. */
int hs_userdir_content_to_line(char *buf, size_t len, bool newline_optional);

/* Fail-closed view of aging (DESIGN section 2): on any error reading
 * aging (missing, not root-owned, not regular, link count != 1, bad
 * format) fills *out with an already-expired account (expire = 1, other
 * fields unset) and returns the negative error so the caller can log it;
 * returns 0 with the real values otherwise.  A transient error
 * (hs_err_transient: out of descriptors or memory) is no verdict on the
 * file: *out is filled the same way, but a caller that answers for the
 * account fails instead of calling it expired. */
int hs_userdir_aging_or_expired(int udirfd, struct hs_aging *out);

/* The NSS module's fast path: read USER's shadow and aging by absolute
 * path (hs_fileio_read_trusted_path: one open each, no symlink in any component)
 * without opening the tree or the user's directory.  The owner of shadow
 * is not compared with the directory's: only root can make a file owned
 * by someone else appear in a user's directory (no write access to other
 * directories, protected_hardlinks, and the link-count check).  aging is
 * read fail-closed as in hs_userdir_aging_or_expired; its error, if any,
 * goes to *aging_err (may be NULL).  Returns 0 or the shadow error. */
int hs_userdir_lookup(const char *user, char *buf, size_t bufsize, struct hs_shadow *shadow,
                      struct hs_aging *aging, int *aging_err);

/* Atomically replace one file (hs_fileio_replace_at with the layout's
 * owners and modes).  auth_gid is the hardened-shadow-auth gid, or
 * HS_ANY_GID when the caller is not root (the setgid directory gives
 * new files the right group). */
int hs_userdir_write_shadow(int udirfd, uid_t owner, gid_t auth_gid, const struct hs_shadow *r);
int hs_userdir_write_shell(int udirfd, uid_t owner, gid_t auth_gid, const char *shell);
int hs_userdir_write_aging(int udirfd, gid_t auth_gid, const struct hs_aging *r);

/* The per-user write lock: an exclusive flock(2) on the user's directory
 * fd (one from hs_userdir_open; flock works on a read-only directory fd).
 * Every read-modify-write of a user's files takes it -- root's passwd
 * -l/-u/-d/-e and aging flags, chage, the PAM module's password UPDATE
 * and rehash -- and re-reads the file after taking it, so two writers
 * cannot lose each other's update.  It is held only across that
 * read-modify-write, never while prompting for a password.
 *   - Advisory: it orders cooperating writers, it stops nobody else.
 *   - Password verifications take the guess lock instead (below), so a
 *     writer never waits behind a guess.
 *   - The user owns the directory and can hold the lock (stop their own
 *     passwd in its window): root's writers, through hs_userdir_lock_at,
 *     wait HS_TAKE_OVER_MS for it and then take the directory over.
 * Polls LOCK_EX|LOCK_NB with a short sleep until timeout_ms milliseconds
 * have passed (no alarm(): safe in library code and in the PAM module).
 * Once held, it removes the temporary files killed writers left in the
 * directory, so their number stays bounded whatever a user does.
 * timeout_ms 0 tries once; programs pass HS_LOCK_TIMEOUT_MS.  Returns 0,
 * -HS_E_TIMEOUT, or a negative error (-EBADF for
 * an fd that cannot be locked, e.g. O_PATH).  Released by closing every
 * fd sharing this open file description, or by hs_userdir_unlock
 * (returns 0 or -errno). */
int hs_userdir_lock(int udirfd, unsigned timeout_ms);
/* The writers' lock as every program and the PAM module take it: USER's
 * directory *udirfd (from hs_userdir_open on treefd), locked as by
 * hs_userdir_lock and checked to be still the directory at treefd/USER.
 *   - A process no user may signal (real, effective and saved uid 0)
 *     also holds the tree lock, a shared flock on treefd that only root
 *     can take, while it holds the user's lock.  When the user's lock is
 *     not free within HS_TAKE_OVER_MS, it is held by something a user can
 *     stop: the process takes the tree lock exclusively (no root writer
 *     holds any user's lock then) and, if the lock is still taken, takes
 *     the directory over (hs_userdir_take_over); *udirfd is then the new
 *     directory, locked.
 *     A directory replaced meanwhile (taken over, renamed) is opened
 *     again, owned as the one given was, into *udirfd.
 *   - Any other process (the user's own tools, a setuid program a user
 *     started) only waits, up to timeout_ms, and fails with -HS_E_TAKEN
 *     when the directory was replaced meanwhile: what it decided before
 *     root's change must not land after it.  Its writes into a directory
 *     taken over fail with -HS_E_TAKEN too.
 * Returns 0 with the lock(s) held, or a negative error without them.
 * Released by hs_userdir_unlock_at (or by closing both fds). */
int hs_userdir_lock_at(int treefd, const char *user, int *udirfd, unsigned timeout_ms);
int hs_userdir_unlock_at(int treefd, int udirfd);
/* The one lock-and-report of programs: hs_userdir_lock_at, and on failure
 * err holds "cannot lock /etc/hardened-shadow/NAME: timed out after 15 s"
 * (or the error) for the caller's hs_report.  Same returns as
 * hs_userdir_lock_at. */
struct hs_err;
int hs_userdir_lock_err(int treefd, const char *name, int *udirfd, unsigned timeout_ms,
                        struct hs_err *err);
int hs_userdir_unlock(int udirfd);
/* A directory locked by hs_userdir_lock_at, for a cleanup attribute: both
 * locks are released and the fd closed when it goes out of scope.  A batch
 * (chpasswd, newusers) holds the tree's shared lock one user at a time, so
 * another root tool's take-over waits for one user, not the whole batch. */
struct hs_userdir_held {
	int treefd, fd;
};
void hs_userdir_releasep(struct hs_userdir_held *held);
#define _cleanup_userdir_release_ __attribute__((cleanup(hs_userdir_releasep)))

/* Take USER's directory (the open *udirfd, at treefd/USER) over from
 * whatever holds its lock, for root's writers; the caller holds the tree
 * lock exclusively.  A fresh copy is built beside it under a reserved
 * name (".swap.USER": the files that pass the readers' checks, the
 * user's owner, group and mode), locked, the old directory is frozen
 * (its owner's write permission removed), what was renamed into it before
 * is copied again, and the copy is exchanged with it (RENAME_EXCHANGE:
 * the path always holds one complete directory).  The old directory is
 * then taken away (root:root 0700): a process that kept an fd to it, or
 * its lock, can write nothing there any more and nothing at the user's
 * path; from the freeze on, its writes fail with -HS_E_TAKEN, also when
 * the take-over is killed before the take-away.  It is copied once more
 * and removed.  On success *udirfd is the new directory, locked, and the
 * old fd is closed.  The leftover of an interrupted take-over is removed
 * by the next root writer of USER (hs_userdir_lock_at), which also thaws
 * a directory frozen by a take-over killed before its exchange.  Root
 * only. */
int hs_userdir_take_over(int treefd, const char *user, int *udirfd);
/* Remove the leftover of USER's interrupted take-over, if any (one
 * lookup: ".swap.USER" is a fixed name); true when there was one.  The
 * caller holds the tree lock and USER's lock, so no take-over of USER is
 * under way.  Best effort. */
bool hs_userdir_sweep_take_over(int treefd, const char *user);
/* Give a user's directory its owner's write permission back, if a
 * take-over that was killed before its exchange left it frozen. */
void hs_userdir_thaw(int udirfd);

/* Lock fd by polling until timeout_ms pass (no alarm(): safe in the PAM
 * module, whose process's signal handlers and timers are not ours): a
 * flock (op LOCK_EX or LOCK_SH) or, when range is given, an open file
 * description's record lock on that range.  0, -HS_E_TIMEOUT or -errno.
 * (userdir_lock.c, with the guess locks: the writers' lock and the
 * checkers' locks share it, the checkers link none of the writers.) */
struct flock;
int hs_userdir_lock_until(int fd, int op, const struct flock *range, unsigned timeout_ms);

/* The guess locks: password verifications in a process a user drives (the
 * password helper; setgid passwd and chsh, setuid su through the PAM
 * module; setuid newgrp and sg for a group password) run one at a time
 * per caller, through the failure delay, so a
 * caller cannot run guesses in parallel and kill each once its answer
 * shows.  The lock is the caller's, not the target's: a caller who stops
 * a process that holds it delays only their own guesses, never another
 * caller's (su TARGET, or TARGET's own passwd), and never root's writers
 * (they never take it).  All poll like hs_userdir_lock and return the
 * locked fd (close it to release), -HS_E_TIMEOUT, or a negative error.
 *
 * hs_userdir_guess_lock: the caller's own, on udirfd, the caller's
 * directory: an exclusive flock on its aging file, checked to be root's
 * (regular, one link).  Not shadow: the caller's passwd gives that a new
 * inode at each change, and a guess under each inode would run beside the
 * others. */
int hs_userdir_guess_lock(int udirfd, unsigned timeout_ms);
/* hs_userdir_guess_lock_for: for a caller without a directory of their
 * own (a directory's account, a system account without one, a uid without
 * a name): byte number caller of dirfd/file, record-locked (an open file
 * description lock, F_OFD_SETLK, for writing: the descriptor is opened to
 * write, and never written).  Per caller and file: no file to create,
 * nothing another caller holds.  The file is one only root and few others
 * can open: the PAM module passes the target's shadow (only the target
 * opens it besides root, to hold bytes of it: their own account); newgrp
 * passes /etc/gshadow (root's; the shadow group may read it).  Where an
 * LSM policy (SELinux) or a read-only file system lets the process only
 * read the file, nothing opens to write: an exclusive flock on the file
 * then, one lock for every such caller of that file. */
int hs_userdir_guess_lock_for(int dirfd, const char *file, uid_t caller, unsigned timeout_ms);
/* hs_userdir_guess_lock_caller: the one choice of the caller's lock.  The
 * caller's own directory's lock (hs_userdir_guess_lock on the directory
 * of name, below treefd, owned by caller; *own true), whoever the target:
 * one guess of this caller at a time, in every program.  A caller without
 * one (no tree: treefd < 0; no name; no directory) takes
 * hs_userdir_guess_lock_for(dirfd, file, caller) instead (*own false). */
int hs_userdir_guess_lock_caller(int treefd, const char *name, uid_t caller, int dirfd,
                                 const char *file, unsigned timeout_ms, bool *own);

/* Create USER's directory complete with all three files, atomically: it is
 * built as root:root 0700 under a reserved temporary name, then given to
 * uid:auth_gid 02710 and renamed into place with RENAME_NOREPLACE (-EEXIST
 * if the user already has one).  Root only. */
int hs_userdir_create(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                      const struct hs_shadow *shadow, const struct hs_aging *aging,
                      const char *shell);

/* hs_userdir_create's first half, for a caller that journals the rename
 * (lib/etc/txn.h): build USER's directory whole under a reserved name,
 * put in tmp (tmp_size at least NAME_MAX + 1), handed over and synced,
 * its stat in *st.  The caller renames it to USER (RENAME_NOREPLACE) or
 * removes it.  Root only. */
struct stat;
int hs_userdir_build(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                     const struct hs_shadow *shadow, const struct hs_aging *aging,
                     const char *shell, char *tmp, size_t tmp_size, struct stat *st);

/* Name, in the tree, of the mark that says a reserved directory of a
 * killed tool may be left (userdir_admin.c explains the protocol). */
#define HS_TREE_RESERVED_MARK ".reserved"

/* The caller is done with a reserved directory that hs_userdir_build
 * made: renamed into place or removed (REMOVED), or left behind for the
 * sweep (!REMOVED).  The tree's mark goes with this process's last one,
 * unless one was left. */
void hs_userdir_reserved_done(int treefd, bool removed);

/* Remove the reserved directory tmp that hs_userdir_build made, for a
 * caller whose change failed: hs_walk_remove_tree_at, then
 * hs_userdir_reserved_done.  0 when it is gone (also when it was). */
int hs_userdir_drop_reserved(int treefd, const char *tmp);

/* Under the global locks: when the tree carries the mark, remove every
 * reserved directory left in it (listing the whole tree) and then the
 * mark.  Returns the number removed, or a negative error. */
int hs_userdir_sweep_reserved(int treefd);

/* Remove USER's directory: take it away from the user (root:root 0700),
 * rename it to a reserved name, then empty and remove it without following
 * anything the user planted.  Root only. */
int hs_userdir_remove(int treefd, const char *user);

/* Is this directory entry name a possible user (valid name, not starting
 * with '.' or ':')?  Enumeration skips everything else. */
bool hs_userdir_entry_is_user(const char *name);

/* Fill buf with "/etc/hardened-shadow/USER[/FILE]" for messages. */
const char *hs_userdir_path(char *buf, size_t size, const char *user, const char *file);

/* The directory a writer of USER's files is confined to (confine.h): the
 * user's own, or for root, who may take it over, the tree; NULL, which adds
 * no rule, for a name that is not a user's (".." would be all of /etc). */
const char *hs_userdir_confine_path(char *buf, size_t size, const char *user);

/* Look up the numeric ids of the two groups (getgrnam_r); negative error
 * -ENOENT when missing. */
int hs_userdir_layout_gids(gid_t *tree_gid, gid_t *auth_gid);

#endif
