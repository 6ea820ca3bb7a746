/* The home and tree work of a transaction (txn.h): renaming a directory
 * built whole into place and handing it over, removing a home or a user's
 * directory.  Only the tools that call hs_txn_work_enable link it: it
 * walks trees (lib/io/walk.c) and removes users' directories (lib/tree),
 * which the setid programs must not carry. */
#include "txn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "fileio.h"
#include "globalfile.h"
#include "layout.h"
#include "timeouts.h"
#include "userdir.h"
#include "util.h"
#include "walk.h"

static bool same_id(const struct stat *st, const struct hs_txn_id *id)
{
	return id->dev == (unsigned long long)st->st_dev &&
	       id->ino == (unsigned long long)st->st_ino;
}

/* The directory that holds w->path, only if it is still the one the
 * journal names (it was checked when the work was recorded: a home's
 * parent is root's and not writable by others). */
static int open_parent(const struct hs_txn_work *w, const char **last)
{
	const char *slash = strrchr(w->path, '/');
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!slash || !hs_fileio_is_single_component(slash + 1))
		return -EINVAL;
	*last = slash + 1;
	dir = slash == w->path ? strdup("/") : strndup(w->path, (size_t)(slash - w->path));
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || !same_id(&st, &w->parent))
		return -ESTALE;
	return TAKE_FD(fd);
}

/* NEW: rename tmp to path (never over anything), then hand path over.
 * Either step may have been done by an interrupted run already. */
static int forward_new(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	_cleanup_close_ int fd = -1;
	const char *last;
	struct stat st;
	int r;

	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd;
	if (fstatat(parentfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) || !same_id(&st, &w->self))
			return -ESTALE;
		r = renameat2(parentfd, w->tmp, parentfd, last, RENAME_NOREPLACE) < 0 ? -errno : 0;
		/* the name was taken meanwhile: our copy goes */
		bool gone = r == 0 ||
			    (r == -EEXIST && hs_walk_remove_tree_at(parentfd, w->tmp) == 0);

		if (w->kind == HS_TXN_TREE_NEW)
			hs_userdir_reserved_done(parentfd, gone);
		if (r < 0)
			return r;
	} else if (errno != ENOENT) {
		return -errno;
	}
	fd = hs_fileio_open_dir_at(parentfd, last, &st);
	if (fd < 0)
		return fd;
	if (!same_id(&st, &w->self))
		return -ESTALE;         /* not what we built */
	r = hs_walk_hand_back(fd, w->uid, w->gid, w->mode);
	if (r == 0) {
		(void)fsync(fd);
		(void)fsync(parentfd);
	}
	return r;
}

/* Remove path (parentfd/last) if it is still the journal's w->self (gone
 * already: removed by an interrupted run).  A user's directory goes
 * through lib/tree; a home directory is taken away, then removed through
 * the one walker: a mount inside (or a too deep nest) refuses before
 * anything goes; a DEL one is handed back then, as when an entry inside
 * refuses root (HS_WALK_DENIED: a user's FUSE mount) or is found replaced
 * during the walk (HS_WALK_SWAPPED), said in w->where.
 * undo: a NEW piece reverted (work_revert), else a DEL one finished
 * (work_forward); they differ where marked. */
static int remove_self(struct hs_txn_work *w, int parentfd, const char *last, bool undo)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *where = NULL;
	struct stat st, saved;
	int r;

	/* A home (or spool) that is itself a mount point: refused before
	 * anything of it is touched, as the walk refuses it in a run not
	 * interrupted (-EXDEV, where ""; final: docs/decisions.md, "A home
	 * that is a mount point").  Looked at first: a FUSE mount there
	 * refuses root the stat and the open below (EACCES, ENOTCONN), which
	 * would be taken for causes that may pass and retried by every tool,
	 * and a bind mount's root would be taken away (root's 0700). */
	if ((w->kind == HS_TXN_HOME_DEL || w->kind == HS_TXN_HOME_NEW) &&
	    hs_walk_is_mount_point(parentfd, last))
		return -EXDEV;
	if (fstatat(parentfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	/* a self never recorded (all zero: work_back's case) matches nothing */
	if ((!w->self.dev && !w->self.ino) || !same_id(&st, &w->self))
		return -ESTALE;
	if (w->kind == HS_TXN_TREE_DEL || w->kind == HS_TXN_TREE_NEW) {
		r = hs_userdir_remove(parentfd, last);
		return r == -ENOENT ? 0 : r;
	}
	if (!undo && !S_ISDIR(st.st_mode)) {
		/* a file or a symlink (a spool, a home that is a link): the
		 * name alone goes, never a tree swapped in under it since the
		 * check (EISDIR); an undo never finds one: it built a directory */
		if (unlinkat(parentfd, last, 0) < 0)
			return errno == ENOENT ? 0 : -errno;
		(void)fsync(parentfd);
		return 0;
	}
	fd = hs_fileio_open_dir_at(parentfd, last, &st);
	if (fd < 0)
		return fd;
	if (!same_id(&st, &w->self))
		return -ESTALE;
	/* undo: a home handed over already is the account's (work_revert) */
	if (undo && st.st_uid == w->uid && w->uid != 0)
		return 1;
	r = hs_walk_take_away(fd, &saved);
	if (r < 0)
		return r;
	r = hs_walk_remove_at(parentfd, last, &st, &where);
	/* refused by what the user has inside (where: below last) or a mount
	 * there: final, as for a run not interrupted.  So is an entry below
	 * last found replaced during the walk (-ESTALE): a process that kept
	 * an fd to a directory in the home can still rename there, and the
	 * home must not stay root's 0700, out of its user's reach.  At last
	 * itself (where ""), the owner of its parent renamed another
	 * directory to its name: nothing removed, and the home we opened,
	 * wherever it is now, goes back to its user too */
	if (!undo && (r == -EXDEV || r == -ENAMETOOLONG || r == -ESTALE || (where && where[0]))) {
		(void)hs_walk_hand_back(fd, w->uid, w->gid, w->mode);
		snprintf(w->where, sizeof(w->where), "%s", where ? where : "");
	}
	if (r == 0)
		(void)fsync(parentfd);
	return r;
}

/* NEW: forward_new.  DEL: remove path, if it is still what the journal
 * names; a file or a symlink loses its name only; a home refused by a
 * mount inside is handed back as it was. */
static int work_forward(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	const char *last;

	if (w->kind == HS_TXN_TREE_NEW || w->kind == HS_TXN_HOME_NEW)
		return forward_new(w);
	if (w->kind != HS_TXN_TREE_DEL && w->kind != HS_TXN_HOME_DEL)
		return -EINVAL;
	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd == -ENOENT ? 0 : parentfd;
	return remove_self(w, parentfd, last, false);
}

/* Before the commit point: the reserved directory of a NEW piece goes
 * (self unknown: the journal was prepared before it was made; the
 * random name is ours alone). */
static int work_back(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	const char *last;
	struct stat st;
	int r;

	if (w->kind != HS_TXN_TREE_NEW && w->kind != HS_TXN_HOME_NEW)
		return 0;
	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd == -ENOENT ? 0 : parentfd;
	if (fstatat(parentfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode) || ((w->self.dev || w->self.ino) && !same_id(&st, &w->self)))
		return -ESTALE;
	r = hs_walk_remove_tree_at(parentfd, w->tmp);
	if (w->kind == HS_TXN_TREE_NEW)
		hs_userdir_reserved_done(parentfd, r == 0);
	return r;
}

/* A committed NEW piece whose account is gone (work_check): the build
 * still under its reserved name goes as before the commit point; one put
 * at path goes if it is still the one the journal built (self).  The
 * user's directory in the tree goes even when handed over (userdel
 * removes it with the account: it holds the account's hash, no files of
 * the user's).  A home handed over already is the account's, maybe with
 * its files: it stays, as a userdel without -r leaves it (1).  One still
 * root's is taken away (root's 0700) first and stays so if a mount inside
 * refuses its removal. */
static int work_revert(struct hs_txn_work *w)
{
	_cleanup_close_ int parentfd = -1;
	const char *last;
	struct stat st;

	parentfd = open_parent(w, &last);
	if (parentfd < 0)
		return parentfd == -ENOENT ? 0 : parentfd;
	if (fstatat(parentfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return work_back(w);
	return remove_self(w, parentfd, last, true);
}

/* Is the passwd line idx (-1: none) one of uid? */
static bool line_of_uid(const struct hs_accountdb *db, long idx, uid_t uid)
{
	unsigned long id;

	return idx >= 0 && hs_accountdb_id(db, (size_t)idx, &id) && id == (unsigned long)uid;
}

/* The next component of p[0..len) from *pos on, skipping '/' and '.'
 * (hs_homepath_normalise's rule, in lib/admin above this layer); false
 * at the end. */
static bool next_component(const char *p, size_t len, size_t *pos, const char **c, size_t *clen)
{
	for (;;) {
		size_t start;

		while (*pos < len && p[*pos] == '/')
			(*pos)++;
		if (*pos == len)
			return false;
		start = *pos;
		while (*pos < len && p[*pos] != '/')
			(*pos)++;
		if (*pos - start == 1 && p[start] == '.')
			continue;
		*c = p + start;
		*clen = *pos - start;
		return true;
	}
}

/* Do the absolute paths a and b name the same directory however spelt
 * ("/home/x", "/home/x/", "/home//./x")?  A ".." matches nothing. */
static bool same_home_path(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;

	if (!alen || !blen || a[0] != '/' || b[0] != '/')
		return false;
	for (;;) {
		const char *ca = NULL, *cb = NULL;
		size_t la = 0, lb = 0;
		bool ma = next_component(a, alen, &i, &ca, &la);
		bool mb = next_component(b, blen, &j, &cb, &lb);

		if (!ma || !mb)
			return ma == mb;
		if (la != lb || memcmp(ca, cb, la) != 0 || (la == 2 && ca[0] == '.' && ca[1] == '.'))
			return false;
	}
}

/* Does a live passwd line name path as its home, however spelt (useradd
 * and newusers journal the field as written, userdel the normalised
 * path, and userdel's own check of a shared home compares them
 * normalised)?  uid (uid_t)-1: any user's.  Only the lines that hold the
 * path's last component are looked at. */
static bool home_named(const struct hs_accountdb *db, const char *path, uid_t uid)
{
	size_t plen = strlen(path), pos = 0, klen = plen, len;
	const char *key = path, *c;

	while (next_component(path, plen, &pos, &c, &len)) {
		key = c;
		klen = len;
	}
	for (long i = hs_accountdb_find_text(db, 0, key, klen); i >= 0;
	     i = hs_accountdb_find_text(db, (size_t)i + 1, key, klen)) {
		const char *dir = hs_accountdb_field(db, (size_t)i, 5, &len);

		if (dir && same_home_path(dir, len, path, plen) &&
		    (uid == (uid_t)-1 || line_of_uid(db, i, uid)))
			return true;
	}
	return false;
}

static enum hs_txn_verdict verdict_of(struct hs_accountdb *db, const struct hs_txn_work *w)
{
	switch (w->kind) {
	case HS_TXN_TREE_NEW:
		return line_of_uid(db, hs_accountdb_find(db, strrchr(w->path, '/') + 1), w->uid) ?
		       HS_TXN_FINISH : HS_TXN_ORPHANED;
	case HS_TXN_HOME_NEW:
		return home_named(db, w->path, w->uid) ? HS_TXN_FINISH : HS_TXN_ORPHANED;
	case HS_TXN_HOME_DEL:
		/* userdel -f removes a home other lines name too */
		return !w->force && home_named(db, w->path, (uid_t)-1) ? HS_TXN_CLAIMED
									: HS_TXN_FINISH;
	case HS_TXN_TREE_DEL:
		/* it holds the old account's hash: a user made since under
		 * that name must not inherit it */
		break;
	}
	return HS_TXN_FINISH;
}

/* A journal's work waits, committed, for the next tool that locks; a tool
 * that does not know the journal (shadow-utils, vipw by hand) may have
 * changed /etc/passwd meanwhile.  The work names no account, only paths
 * and a uid, so passwd as it is now decides: a new user's directory is
 * put in place only while passwd has that user with that uid, a home only
 * while passwd names it as the home of that uid; else the account was
 * deleted (its uid perhaps given to someone else since) or its home moved,
 * and the piece is undone.  A home passwd names again is not removed.
 * A line that does not parse where a name is looked up confirms nothing:
 * its piece is undone too.  A passwd that cannot be read (or a lookup
 * in it that ran out of memory) fails the recovery (every tool would
 * fail on it anyway), the work unfinished;
 * so does one without a line of uid 0 or without a final newline: an
 * editor that saves in place cuts it short first and writes it in pieces,
 * and what it has not written yet would have its pieces undone. */
static int work_check(const char *dir_path, const struct hs_txn_work *work, const bool *undo,
                      size_t n_work, enum hs_txn_verdict *verdict)
{
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	char path[PATH_MAX];
	const char *data;
	size_t i, len;
	int r;

	for (i = 0; i < n_work && undo[i]; i++)
		;
	if (i == n_work)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/passwd", dir_path) >= sizeof(path))
		return -ENAMETOOLONG;
	r = hs_accountdb_load(&db, HS_DB_PASSWD, path, HS_DB_LAZY);
	if (r < 0)
		return r;
	data = hs_accountdb_loaded(&db, &len);
	if (hs_accountdb_find_id(&db, 0) < 0 || len == 0 || data[len - 1] != '\n')
		r = -HS_E_PARTIAL;
	for (i = 0; r == 0 && i < n_work; i++)
		verdict[i] = undo[i] ? HS_TXN_FINISH : verdict_of(&db, &work[i]);
	/* a lookup that ran out of memory answered "no such user", maybe
	 * wrongly: no verdict rests on it */
	if (db.lost)
		r = db.lost;
	hs_accountdb_free(&db);
	return r;
}

/* The tree's reserved directories (.new.USER.*, .del.USER.*) are made
 * only under the global locks, which the caller holds, and a committed
 * journal's were put in place before this runs: every one left is a
 * killed tool's, never a live user's directory (that is always at the
 * user's name).  The tree's mark says whether there can be any, so that
 * the common case costs one lookup, not a listing of every user. */
static int work_sweep(int dirfd)
{
	const char *tree = strrchr(HS_TREE_DIR, '/') + 1;
	_cleanup_close_ int treefd = -1;
	int r;

	treefd = openat(dirfd, tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (treefd < 0)
		return 0;
	r = hs_userdir_sweep_reserved(treefd);
	return r < 0 ? 0 : r;
}

int hs_txn_work_tree_new(int treefd, const char *user, uid_t uid, gid_t auth_gid,
                         const struct hs_shadow *shadow, const struct hs_aging *aging,
                         const char *shell, struct hs_txn_work *w, char *path, char *tmp,
                         struct hs_err *err)
{
	struct stat st, tree;
	int r;

	hs_userdir_path(path, HS_PATHBUF_USER, user, NULL);
	if (fstatat(treefd, user, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		hs_err_setl(err, 0, LOG_WARNING, "removing %s, left over without a passwd line",
			    path);
		r = hs_userdir_remove(treefd, user);
		if (r < 0 && r != -ENOENT) {
			hs_err_add(err, "cannot remove %s: %s", path, hs_strerror(r));
			return r;
		}
	}
	r = fstat(treefd, &tree) < 0 ? -errno : 0;
	if (r == 0)
		r = hs_userdir_build(treefd, user, uid, auth_gid, shadow, aging, shell, tmp,
				     NAME_MAX + 1, &st);
	if (r < 0) {
		hs_err_add(err, "cannot create %s: %s", path, hs_strerror(r));
		return r;
	}
	*w = (struct hs_txn_work){
		.kind = HS_TXN_TREE_NEW, .path = path, .tmp = tmp, .uid = uid, .gid = auth_gid,
		.mode = HS_USERDIR_MODE, .parent = { tree.st_dev, tree.st_ino },
		.self = { st.st_dev, st.st_ino },
	};
	return 0;
}

/* A journal left with work pending is finished now, under the locks as
 * always, while the tool can still reach every path: once it confines
 * itself (Landlock) to its own job's paths, a home the journal names
 * elsewhere would be out of its reach.  A journal written after this look
 * (a tool killed meanwhile) is met at the tool's own locking; what its
 * confinement refuses there is said and left for the next tool. */
void hs_txn_work_enable(void)
{
	static const struct hs_txn_work_ops ops = {
		.forward = work_forward, .back = work_back, .sweep = work_sweep,
		.check = work_check, .revert = work_revert,
	};
	static const char *const files[] = {
		HS_ETC_PASSWD, HS_ETC_SHADOW, HS_ETC_GROUP, HS_ETC_GSHADOW, HS_ETC_SUBUID,
		HS_ETC_SUBGID,
	};
	struct hs_locks l;

	hs_txn_set_work_ops(&ops);
	/* every root tool starts here: one lookup, no open of /etc */
	if (geteuid() != 0 || !hs_txn_journal_left(AT_FDCWD))
		return;
	if (hs_globalfile_lock(&l, NULL, files, HS_ARRAY_SIZE(files), HS_LOCK_TIMEOUT_MS, NULL) == 0)
		hs_globalfile_unlock(&l);
}
