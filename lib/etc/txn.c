/* All-or-nothing replacement of several files in one directory: txn.h. */
#include "txn.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "globalfile.h"
#include "layout.h"
#include "strbuf.h"
#include "tempname.h"
#include "util.h"

/* The journal: a header, one line per file and one per piece of work
 * (which names a path or two).  A newusers batch has two pieces per user,
 * so it is built in a growing buffer and read back up to a global file's
 * size. */
#define JOURNAL_MAX HS_GLOBALFILE_MAX
#define JOURNAL_HEADER "hardened-shadow transaction 1\n"
/* Work begun, nothing committed: a recovery undoes it. */
#define JOURNAL_PREPARED "hardened-shadow prepared 1\n"

static const struct hs_txn_work_ops *work_ops;

/* The pieces this process's recoveries kept for the next tool, said then
 * with their cause: their journal lines, each after "-" (to undo) or "+".
 * A later recovery in the same run (the one at the tool's own locking,
 * after it confined itself to its job's paths) keeps them as they are,
 * unsaid: tried again it would fail the same way at best, and at worst
 * on its confinement's EACCES, reported as if that were the cause. */
static struct hs_buf kept_here;

void hs_txn_set_work_ops(const struct hs_txn_work_ops *ops)
{
	work_ops = ops;
	hs_strbuf_free(&kept_here);
}

struct identity {
	bool present;
	struct stat st;         /* the journal keeps dev, ino, size, mtime, ctime */
};

__attribute__((format(printf, 3, 4)))
static void msg_set(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Room kept at the end of a message for the tail "; ... and N more". */
#define MSG_MORE_ROOM sizeof("; ... and 18446744073709551615 more")

/* How many pieces msg_add left out of buf[0..used), told by its tail
 * "... and N more" (after "; ", or alone); *at: where that tail starts.
 * Once a piece is left out, every later one is too, so the tail stays
 * last. */
static unsigned long msg_left_out(const char *buf, size_t used, size_t *at)
{
	static const char head[] = "... and ";
	unsigned long n;
	int end = 0;

	for (size_t i = used; i-- > 0;) {
		if (strncmp(buf + i, head, sizeof(head) - 1) != 0)
			continue;
		if (i != 0 && (i < 2 || memcmp(buf + i - 2, "; ", 2) != 0))
			return 0;
		if (sscanf(buf + i + sizeof(head) - 1, "%lu more%n", &n, &end) != 1 ||
		    (size_t)end != used - i - (sizeof(head) - 1) || n == 0)
			return 0;
		*at = i < 2 ? 0 : i - 2;
		return n;
	}
	return 0;
}

/* Append a piece to a message that may already say something.  A piece
 * that does not fit whole (a long recovery: one piece per home of a
 * newusers batch) is not cut mid-word: it and every later one are
 * counted in a last "; ... and N more" (a message stays one line). */
__attribute__((format(printf, 3, 4)))
static void msg_add(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = buf ? strnlen(buf, size) : 0, at = used;
	unsigned long left_out;
	va_list ap;
	int need;

	if (!buf || used + 1 >= size)
		return;
	left_out = msg_left_out(buf, used, &at);
	va_start(ap, fmt);
	need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0)
		return;
	if (!left_out && used + 2 + (size_t)need + MSG_MORE_ROOM <= size) {
		if (used) {
			memcpy(buf + used, "; ", 3);
			used += 2;
		}
		va_start(ap, fmt);
		vsnprintf(buf + used, size - used, fmt, ap);
		va_end(ap);
		return;
	}
	snprintf(buf + at, size - at, "%s... and %lu more", at ? "; " : "", left_out + 1);
}

/* Append one formatted line to the journal being built. */
__attribute__((format(printf, 2, 3)))
static int jprintf(struct hs_buf *j, const char *fmt, ...)
{
	char line[2 * HS_PATHBUF_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	return hs_strbuf_append(j, line, (size_t)n);
}

static int identity_of(int dirfd, const char *base, struct identity *id)
{
	memset(id, 0, sizeof(*id));
	if (fstatat(dirfd, base, &id->st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	id->present = true;
	return 0;
}

/* Is the file still the one the journal found?  The ctime is recorded
 * (the format stays) but not compared (hs_fileio_same_version): a user's
 * hard link to /etc/passwd would make the recovery drop a committed
 * change. */
static bool identity_equal(const struct identity *now, const struct identity *want)
{
	return now->present == want->present &&
	       (!now->present || hs_fileio_same_version(&want->st, &now->st));
}

/* The names below dirfd are ours to choose: a base is one plain component
 * without spaces (the journal is split on them). */
static bool base_ok(const char *base)
{
	return base && hs_fileio_is_single_component(base) && base[0] != '.' &&
	       !strpbrk(base, " \t\n") && strlen(base) < 128;
}

static void staged_name(char *buf, size_t size, const char *base)
{
	snprintf(buf, size, ".%s%s", base, HS_TXN_SUFFIX);
}

/* Replace to with the contents, owner and mode of from. */
static int copy_at(int dirfd, const char *from, const char *to)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;
	/* shadow and gshadow hold hashes: wiped when freed */
	_cleanup_secret_buf_ struct hs_secret_buf data = { NULL, 0 };
	struct stat st;
	int r = hs_fileio_read_alloc_at(dirfd, from, &ex, &data.p, &data.size, &st);

	return r ?: hs_fileio_replace_at(dirfd, to, data.p, data.size, st.st_uid, st.st_gid,
					 st.st_mode & 07777);
}

/* Write the backup BASE- from old contents (same owner and mode as BASE;
 * old_data NULL: what BASE holds now). */
static int write_backup(int dirfd, const char *base, const char *old_data, size_t old_len)
{
	char backup[160];
	struct stat st;

	snprintf(backup, sizeof(backup), "%s-", base);
	if (!old_data)
		return copy_at(dirfd, base, backup);
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return hs_fileio_replace_at(dirfd, backup, old_data, old_len, st.st_uid, st.st_gid,
				  st.st_mode & 07777);
}

/* Put the staged file in place of base.  The old file becomes the backup
 * BASE- by an exchange and a rename, so it is never copied and base never
 * goes missing; where the file system cannot exchange, the backup is
 * written from old_data (NULL: read from base) before a plain rename.  A
 * failure leaves base as it was, with err saying which name failed. */
static int install_one(int dirfd, const char *dir_path, const char *base, const char *old_data,
                       size_t old_len, char *err, size_t err_size)
{
	char staged[160], backup[160];
	const char *failed = backup;
	int r = 0;

	staged_name(staged, sizeof(staged), base);
	snprintf(backup, sizeof(backup), "%s-", base);
	if (renameat2(dirfd, staged, dirfd, base, RENAME_EXCHANGE) == 0) {
		if (renameat(dirfd, staged, dirfd, backup) == 0)
			return 0;
		r = -errno;
		/* back as it was: the new file staged again */
		(void)renameat2(dirfd, staged, dirfd, base, RENAME_EXCHANGE);
	} else if (errno != ENOENT && errno != EINVAL) {
		r = -errno;
		failed = base;
	} else if (errno == EINVAL) {
		r = write_backup(dirfd, base, old_data, old_len);
	}
	if (r == 0 && renameat(dirfd, staged, dirfd, base) < 0) {
		r = -errno;
		failed = base;
	}
	if (r < 0)
		msg_set(err, err_size, "cannot write %s/%s: %s", dir_path, failed, hs_strerror(r));
	return r;
}

/* Remove the staged copies of files[from..to). */
static void unstage(int dirfd, const struct hs_txn_file *files, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		char staged[160];

		staged_name(staged, sizeof(staged), files[i].base);
		(void)unlinkat(dirfd, staged, 0);
	}
}

/* files[0..installed) are in place, the rest staged: put the installed
 * ones back as they were (from BASE-, or removed when they did not
 * exist) and drop the staged ones; the caller then drops the journal
 * (drop_journal).  If a file cannot be put back, everything stays for
 * hs_txn_recover to finish instead: half a change must never be left
 * without its journal.  Returns 0 when all is back, else status. */
static int roll_back(int dirfd, const char *dir_path, const struct hs_txn_file *files,
                     size_t installed, size_t n_files, const struct identity *ids,
                     int status, char *err, size_t err_size)
{
	for (size_t i = 0; i < installed; i++) {
		char backup[160];
		int r;

		if (!ids[i].present) {
			r = unlinkat(dirfd, files[i].base, 0) < 0 ? -errno : 0;
		} else {
			snprintf(backup, sizeof(backup), "%s-", files[i].base);
			r = copy_at(dirfd, backup, files[i].base);
		}
		if (r < 0) {
			msg_add(err, err_size,
				"%s/%s cannot be put back (%s): the next run finishes the change",
				dir_path, files[i].base, hs_strerror(r));
			return status;
		}
	}
	unstage(dirfd, files, installed, n_files);
	(void)fsync(dirfd);
	msg_add(err, err_size, "nothing was changed");
	return 0;
}

/* Is st a target a transaction may replace?  A symlink, a FIFO or another
 * owner's hard-linked file is refused, as a read of it would be. */
static int target_ok(const struct stat *st)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;

	return S_ISLNK(st->st_mode) ? -HS_E_SYMLINK : hs_fileio_check_stat(st, &ex);
}

/* Write the staged copy of f at its fixed name, owned and moded so.  Under
 * the locks, after the recovery, a file already there is a leftover that
 * no committed journal names (hs_txn_recover installed or removed every
 * one it found; a journal left names none): it is removed, once. */
static int write_staged(int dirfd, const char *staged_path, const struct hs_txn_file *f,
                        uid_t uid, gid_t gid, mode_t mode)
{
	int r = -EEXIST;

	for (int tries = 0; tries < 2 && r == -EEXIST; tries++) {
		if (tries && unlinkat(dirfd, staged_path, 0) < 0)
			return -errno;
		r = hs_fileio_create_iov_at(dirfd, staged_path, f->base, f->iov, f->n_iov, uid,
					    gid, mode, 0);
	}
	return r;
}

/* Stage one file of a transaction: check its target, write the staged
 * copy (install_one makes the FILE- backup) and add its line to the
 * journal.  *staged tells the caller a staged copy was made (to remove on
 * failure; it stays set when a second copy fails).  The staged copy is synced, its name not yet: hs_txn_commit
 * syncs the directory once for all of them, before the journal. */
static int stage_one(int dirfd, const char *dir_path, const struct hs_txn_file *f,
                     struct identity *id, bool *staged, struct hs_buf *journal,
                     char *err, size_t err_size)
{
	char staged_path[160];
	uid_t uid = f->uid;
	gid_t gid = f->gid;
	mode_t mode = f->mode;
	const struct stat *st = &id->st;
	int r = 0;

	if (!base_ok(f->base)) {
		msg_set(err, err_size, "invalid file name in a transaction");
		return -EINVAL;
	}
	staged_name(staged_path, sizeof(staged_path), f->base);
	if (f->expect) {
		/* the file as the caller read it under the locks: one stat
		 * after the copy tells whether it is still that file (the
		 * pieces may come from a mapping of it, rewritten in place,
		 * or cut short: EFAULT, while they were copied) and gives
		 * the journal its identity */
		for (int pass = 0; pass < 2; pass++) {
			const struct stat used = pass ? *st : *f->expect;

			r = target_ok(&used);
			r = r ?: write_staged(dirfd, staged_path, f, used.st_uid, used.st_gid,
					      used.st_mode & 07777);
			if (r == 0)
				*staged = true;
			if (r < 0 && r != -EFAULT)
				break;
			if (identity_of(dirfd, f->base, id) < 0 || !id->present ||
			    !hs_fileio_same_version(f->expect, &id->st)) {
				r = -HS_E_CHANGED;
				break;
			}
			r = r ?: target_ok(st);
			if (r < 0)
				break;
			/* chown'ed or chmod'ed since it was read (by a program
			 * that ignores the locks): staged again as it is now */
			if (st->st_uid == used.st_uid && st->st_gid == used.st_gid &&
			    (st->st_mode & 07777) == (used.st_mode & 07777))
				break;
			r = -HS_E_CHANGED;
		}
	} else {
		r = identity_of(dirfd, f->base, id);
		if (r < 0) {
			msg_set(err, err_size, "cannot stat %s/%s: %s", dir_path, f->base,
				hs_strerror(r));
			return r;
		}
		if (id->present) {
			r = target_ok(st);
			uid = st->st_uid;
			gid = st->st_gid;
			mode = st->st_mode & 07777;
		}
		r = r ?: write_staged(dirfd, staged_path, f, uid, gid, mode);
		if (r == 0)
			*staged = true;
	}
	if (r < 0) {
		/* the administrator knows the file, not our staging name */
		msg_set(err, err_size, "cannot write %s/%s: %s", dir_path, f->base, hs_strerror(r));
		return r;
	}
	if (id->present) {
		r = jprintf(journal, "%s %llu %llu %llu %lld.%09lld %lld.%09lld\n", f->base,
			    (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
			    (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
			    (long long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
			    (long long)st->st_ctim.tv_nsec);
	} else {
		r = jprintf(journal, "%s absent\n", f->base);
	}
	if (r < 0)
		msg_set(err, err_size, "transaction journal: %s", hs_strerror(r));
	return r;
}

/* One piece of work in the journal:
 * "@KIND UID GID MODE PDEV PINO SDEV SINO TMP PATH", TMP "-" for none,
 * PATH last (it may hold spaces; never a newline: the account fields
 * refuse control characters).  A forced HOME_DEL has a word of its own,
 * so that a recovery removes what userdel -f would have. */
static const char *const work_words[] = {
	[HS_TXN_TREE_NEW] = "@tree-new", [HS_TXN_TREE_DEL] = "@tree-del",
	[HS_TXN_HOME_NEW] = "@home-new", [HS_TXN_HOME_DEL] = "@home-del",
};
#define WORD_HOME_DEL_FORCE "@home-del-f"

static bool work_is_new(const struct hs_txn_work *w)
{
	return w->kind == HS_TXN_TREE_NEW || w->kind == HS_TXN_HOME_NEW;
}

static bool work_is_tree(const struct hs_txn_work *w)
{
	return w->kind == HS_TXN_TREE_NEW || w->kind == HS_TXN_TREE_DEL;
}

static int format_work(struct hs_buf *journal, const struct hs_txn_work *w)
{
	if (w->kind < HS_TXN_TREE_NEW || w->kind > HS_TXN_HOME_DEL || !w->path ||
	    w->path[0] != '/' || strchr(w->path, '\n') ||
	    (work_is_new(w) && (!w->tmp || w->tmp[0] != '.' || !base_ok(w->tmp + 1))))
		return -EINVAL;
	return jprintf(journal, "%s %lu %lu %lo %llu %llu %llu %llu %s %s\n",
		       w->kind == HS_TXN_HOME_DEL && w->force ? WORD_HOME_DEL_FORCE
							     : work_words[w->kind],
		       (unsigned long)w->uid, (unsigned long)w->gid, (unsigned long)w->mode,
		       w->parent.dev, w->parent.ino, w->self.dev, w->self.ino,
		       work_is_new(w) ? w->tmp : "-", w->path);
}

/* A work line (after its word) into *w; the strings point into line. */
static int parse_work_line(char *line, struct hs_txn_work *w)
{
	unsigned long uid, gid, mode;
	int kind, path_at = 0, tmp_at = 0, tmp_end = 0;
	char *sp = strchr(line, ' ');

	memset(w, 0, sizeof(*w));
	if (!sp)
		return -HS_E_FORMAT;
	*sp = '\0';
	w->force = strcmp(line, WORD_HOME_DEL_FORCE) == 0;
	for (kind = w->force ? HS_TXN_HOME_DEL : HS_TXN_TREE_NEW; kind <= HS_TXN_HOME_DEL; kind++)
		if (w->force || strcmp(line, work_words[kind]) == 0)
			break;
	if (kind > HS_TXN_HOME_DEL)
		return -HS_E_FORMAT;
	w->kind = (enum hs_txn_work_kind)kind;
	line = sp + 1;
	if (sscanf(line, "%lu %lu %lo %llu %llu %llu %llu %n%*s%n %n", &uid, &gid, &mode,
		   &w->parent.dev, &w->parent.ino, &w->self.dev, &w->self.ino, &tmp_at,
		   &tmp_end, &path_at) != 7 || !path_at || line[path_at] != '/')
		return -HS_E_FORMAT;
	line[tmp_end] = '\0';
	w->uid = (uid_t)uid;
	w->gid = (gid_t)gid;
	w->mode = (mode_t)mode;
	w->tmp = strcmp(line + tmp_at, "-") == 0 ? NULL : line + tmp_at;
	w->path = line + path_at;
	if (work_is_new(w) && (!w->tmp || w->tmp[0] != '.' || !base_ok(w->tmp + 1)))
		return -HS_E_FORMAT;
	return 0;
}

/* The journal: header and lines, atomically, 0600 and owned by whoever
 * may write the directory: root, in /etc.  absent: none is there. */
static int write_journal(int dirfd, const char *header, const struct hs_buf *lines, bool absent)
{
	_cleanup_strbuf_ struct hs_buf journal = { NULL, 0, 0 };
	int r = hs_strbuf_append(&journal, header, strlen(header));

	if (r == 0)
		r = hs_strbuf_append(&journal, lines->data, lines->len);
	if (r < 0)
		return r;
	/* none there (the usual commit): the whole file linked to the name,
	 * one link and no rename; else it replaces the one there */
	if (absent) {
		struct iovec iov = { .iov_base = journal.data, .iov_len = journal.len };

		r = hs_fileio_create_iov_at(dirfd, HS_TXN_JOURNAL, NULL, &iov, 1, geteuid(),
					    getegid(), 0600, HS_FILEIO_WHOLE);
		if (r != -EEXIST)
			return r;
	}
	return hs_fileio_replace_at(dirfd, HS_TXN_JOURNAL, journal.data, journal.len,
				    geteuid(), getegid(), 0600);
}

/* A journal of work only, the pieces undo[i] as "-@..." (undo may be NULL),
 * then the lines carried (may be NULL). */
static int write_work_journal(int dirfd, const char *header, const struct hs_txn_work *work,
                              const bool *undo, size_t n_work, const struct hs_buf *carried)
{
	_cleanup_strbuf_ struct hs_buf lines = { NULL, 0, 0 };
	int r = 0;

	for (size_t i = 0; r == 0 && i < n_work; i++) {
		if (undo && undo[i])
			r = hs_strbuf_append(&lines, "-", 1);
		r = r ?: format_work(&lines, &work[i]);
	}
	if (r == 0 && carried)
		r = hs_strbuf_append(&lines, carried->data, carried->len);
	return r ?: write_journal(dirfd, header, &lines, false);
}

static int read_carried(int dirfd, struct hs_buf *carried, bool *found);

int hs_txn_prepare(int dirfd, const char *dir_path, const struct hs_txn_work *work,
                   size_t n_work, char *err, size_t err_size)
{
	/* the work a recovery left for the next tool goes on */
	_cleanup_strbuf_ struct hs_buf carried = { NULL, 0, 0 };
	int r = read_carried(dirfd, &carried, NULL);

	r = r ?: write_work_journal(dirfd, JOURNAL_PREPARED, work, NULL, n_work, &carried);

	if (r < 0)
		msg_set(err, err_size, "cannot write %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
	return r;
}

/* Undo the NEW pieces of work that was never committed: true if all are. */
static bool undo_work(struct hs_txn_work *work, size_t n_work)
{
	bool all = true;

	for (size_t i = 0; i < n_work; i++) {
		if (!work_is_new(&work[i]) || !work_ops)
			continue;
		work[i].result = work_ops->back(&work[i]);
		all = all && work[i].result >= 0;
	}
	return all;
}

static void unlink_journal(int dirfd)
{
	if (unlinkat(dirfd, HS_TXN_JOURNAL, 0) == 0)
		(void)fsync(dirfd);
}

/* The journal of a change rolled back after its commit point (its files
 * back, its staged files gone).  It first becomes a journal of work
 * alone: the change's own work to undo, the work it carried (from a
 * journal a tool without the work ops left) as it was.  So a kill
 * anywhere from here on loses none of it: not the carried work of an
 * earlier change that is in place (its tree directory would be swept as
 * a leftover, its home left under the reserved name), not the name of a
 * home built beside its place, which only the journal knows.  Then the
 * own work is undone and, with nothing carried and nothing that could
 * not be undone, the journal goes.  If it
 * cannot be rewritten: without own work the old journal stays (its
 * staged files are gone, so a recovery finishes only the carried work),
 * with some it goes, as a journal naming files would finish that work. */
static void drop_journal(int dirfd, struct hs_txn_work *work, size_t n_work,
                         const struct hs_buf *carried)
{
	_cleanup_strbuf_ struct hs_buf lines = { NULL, 0, 0 };
	int r = 0;

	for (size_t i = 0; r == 0 && i < n_work; i++) {
		r = hs_strbuf_append(&lines, "-", 1);
		r = r ?: format_work(&lines, &work[i]);
	}
	if (r == 0 && carried->len)
		r = hs_strbuf_append(&lines, carried->data, carried->len);
	if (r == 0 && lines.len)
		r = write_journal(dirfd, JOURNAL_HEADER, &lines, false);
	if ((r == 0 && !lines.len) || (r < 0 && n_work))
		unlink_journal(dirfd);
	if (undo_work(work, n_work) && r == 0 && n_work && !carried->len)
		unlink_journal(dirfd);
}

/* A piece's line in kept_here into key. */
static int kept_key(struct hs_buf *key, const struct hs_txn_work *w, bool undo)
{
	int r = hs_strbuf_append(key, undo ? "-" : "+", 1);

	return r ?: format_work(key, w);
}

/* Was the piece kept for the next tool by a recovery of this process? */
static bool kept_here_before(const struct hs_txn_work *w, bool undo)
{
	_cleanup_strbuf_ struct hs_buf key = { NULL, 0, 0 };
	struct hs_line_iter it;
	const char *line;
	size_t n;

	if (!kept_here.len || kept_key(&key, w, undo) < 0)
		return false;
	/* n leaves out the newline that ends each line there and the key */
	hs_strbuf_lines_init(&it, kept_here.data, kept_here.len);
	while (hs_strbuf_line_next(&it, &line, &n))
		if (n + 1 == key.len && memcmp(line, key.data, n) == 0)
			return true;
	return false;
}

/* Remember a piece kept for the next tool; if it cannot be, a later
 * recovery of this run tries it again, as before. */
static void kept_here_add(const struct hs_txn_work *w, bool undo)
{
	size_t len = kept_here.len;

	if (kept_key(&kept_here, w, undo) < 0)
		kept_here.len = len;
}

const char *hs_txn_work_kept_because(const struct hs_txn_work *w)
{
	if (w->result == -EXDEV)
		return "a file system is mounted";
	if (w->result == -ENAMETOOLONG)
		return "nested too deeply";
	if (!w->where[0])
		return NULL;
	return w->result == -ESTALE ? "an entry was replaced during the walk" :
				      hs_strerror(w->result);
}

/* Did a piece fail for a cause that may pass?  One found replaced or
 * gone, a home that a mount or what else the user has inside keeps
 * (handed back, where said), or a home that is itself a mount point
 * (EXDEV, left untouched: even a FUSE one whose daemon is dead), is
 * final, as in a run not interrupted. */
static bool work_failed_for_now(const struct hs_txn_work *w)
{
	int r = w->result;

	return r < 0 && r != -ESTALE && r != -EEXIST && r != -ENOENT && r != -EXDEV &&
	       r != -ENAMETOOLONG && !w->where[0];
}

/* The reserved directory a NEW piece built, while it is still there:
 * what a failure to finish or undo it is about (" (built as PATH)"), so
 * that the message names what to fix; else "". */
static const char *built_as(const struct hs_txn_work *w, char *buf, size_t size)
{
	static const char pre[] = " (built as ";
	const char *slash = strrchr(w->path, '/');
	struct stat st;
	int n;

	if (!work_is_new(w) || !w->tmp || !slash)
		return "";
	n = snprintf(buf, size, "%s%.*s/%s)", pre, (int)(slash - w->path), w->path, w->tmp);
	if (n < 0 || (size_t)n >= size)
		return "";
	buf[n - 1] = '\0';
	if (fstatat(AT_FDCWD, buf + strlen(pre), &st, AT_SYMLINK_NOFOLLOW) < 0)
		return "";
	buf[n - 1] = ')';
	return buf;
}

/* Finish the work of a committed change (but the pieces skip[i] says;
 * skip may be NULL): the tree first, then the homes (the account exists
 * before its home is handed over, and the user's directory goes with the
 * passwd line).  Each piece says in msg (may be NULL) what became of it. */
static void run_work(struct hs_txn_work *work, const bool *skip, size_t n_work, char *msg,
                     size_t msg_size)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n_work; i++) {
			struct hs_txn_work *w = &work[i];
			char tmp[PATH_MAX + 16];

			if ((skip && skip[i]) || work_is_tree(w) != (pass == 0))
				continue;
			w->result = work_ops ? work_ops->forward(w) : -ENOSYS;
			if (w->result < 0 && !work_is_new(w) && hs_txn_work_kept_because(w))
				/* as userdel -r says it; where "": the home itself
				 * is a mount point */
				msg_add(msg, msg_size, "not removing %s: %s at %s%s%s; it is left "
					"as it was", w->path, hs_txn_work_kept_because(w),
					w->path, w->where[0] ? "/" : "", w->where);
			else if (w->result < 0)
				msg_add(msg, msg_size, "cannot %s %s%s: %s",
					work_is_new(w) ? "finish creating" : "finish removing",
					w->path, built_as(w, tmp, sizeof(tmp)), w->result == -ESTALE ?
					"it or its directory was replaced since; left alone" :
					w->result == -EEXIST ?
					"something else has that name now; the copy made for "
					"it was removed" : hs_strerror(w->result));
			else
				msg_add(msg, msg_size, "finished %s %s", work_is_new(w) ?
					"creating" : "removing", w->path);
		}
	}
}

/* The journal (NUL-terminated), as write_journal leaves it. */
static int read_journal(int dirfd, char **data, size_t *len)
{
	const struct hs_file_expect ex = {
		.uid = geteuid(), .gid = HS_ANY_GID, .max_size = JOURNAL_MAX,
		.root_links_ok = true,  /* in /etc, as the files it names */
	};

	return hs_fileio_read_alloc_at(dirfd, HS_TXN_JOURNAL, &ex, data, len, NULL);
}

/* The work of a journal that a tool without the work ops left (its
 * recovery keeps it): a commit of such a tool must not lose it when it
 * writes its own journal.  Appends its work lines to carried: a prepared
 * journal's as "-@..." (to undo), a committed one's as "+@...": work of
 * a change whose files are all in place, finished even if the carrying
 * change is dropped. */
static int read_carried(int dirfd, struct hs_buf *carried, bool *found)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	bool prepared;
	char *cur, *nl;
	int r;

	r = read_journal(dirfd, &data, &len);
	if (found)
		*found = r != -ENOENT;
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	prepared = strncmp(data, JOURNAL_PREPARED, strlen(JOURNAL_PREPARED)) == 0;
	for (cur = data; (nl = strchr(cur, '\n')) != NULL; cur = nl + 1) {
		bool undo = cur[0] == '-' || (prepared && cur[0] != '+');
		const char *line = cur[0] == '-' || cur[0] == '+' ? cur + 1 : cur;

		/* with the ops, a prepared journal is the caller's own */
		if (line[0] != '@' || (prepared && work_ops && line == cur))
			continue;
		if (hs_strbuf_append(carried, undo ? "-" : "+", 1) < 0 ||
		    hs_strbuf_append(carried, line, (size_t)(nl + 1 - line)) < 0)
			return -ENOMEM;
	}
	return 0;
}

bool hs_txn_journal_left(int dirfd)
{
	/* AT_FDCWD: the journal of /etc itself */
	return faccessat(dirfd, dirfd == AT_FDCWD ? HS_ETC_DIR "/" HS_TXN_JOURNAL : HS_TXN_JOURNAL,
			 F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool hs_txn_files_pending(int dirfd)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	char *cur, *nl;
	int r = read_journal(dirfd, &data, &len);

	if (r == -ENOENT)
		return false;
	/* unreadable: it may name files, as before it was carried */
	if (r < 0 || strncmp(data, JOURNAL_HEADER, strlen(JOURNAL_HEADER)) != 0)
		return r < 0;
	for (cur = data + strlen(JOURNAL_HEADER); (nl = strchr(cur, '\n')) != NULL; cur = nl + 1)
		if (cur[0] != '@' && cur[0] != '+' && cur[0] != '-')
			return true;
	return false;
}

int hs_txn_commit(int dirfd, const char *dir_path, const struct hs_txn_file *files,
                  size_t n_files, struct hs_txn_work *work, size_t n_work, char *err,
                  size_t err_size, size_t *failed)
{
	/* the journal's lines, and the work carried from an earlier one */
	_cleanup_strbuf_ struct hs_buf journal = { NULL, 0, 0 }, carried = { NULL, 0, 0 };
	struct identity ids[HS_TXN_MAX_FILES];
	size_t staged_count = 0, ignored;
	bool one, carried_read = false, journal_found = true;
	int r;

	if (!failed)
		failed = &ignored;
	*failed = n_files;
	if (n_files > HS_TXN_MAX_FILES) {
		msg_set(err, err_size, "too many files in one transaction");
		return -EINVAL;
	}
	if (n_files == 0 && n_work == 0)
		return 0;
	/* 1. stage; a journal left for the work (by a tool without it, or a
	 * recovery that could not do it) goes on */
	r = read_carried(dirfd, &carried, &journal_found);
	if (r < 0) {
		msg_set(err, err_size, "cannot read %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
		goto unstage;
	}
	carried_read = true;
	for (size_t i = 0; i < n_files; i++) {
		bool staged = false;

		r = stage_one(dirfd, dir_path, &files[i], &ids[i], &staged, &journal, err,
			      err_size);
		if (staged)
			staged_count = i + 1;
		if (r < 0) {
			*failed = i;
			goto unstage;
		}
	}
	for (size_t i = 0; i < n_work; i++) {
		r = format_work(&journal, &work[i]);
		if (r < 0) {
			msg_set(err, err_size, "transaction journal: %s", hs_strerror(r));
			goto unstage;
		}
	}
	r = hs_strbuf_append(&journal, carried.data, carried.len);
	if (r < 0) {
		msg_set(err, err_size, "transaction journal: %s", hs_strerror(r));
		goto unstage;
	}

	/* Every staged copy is synced (its data, owner and mode); one sync
	 * of the directory now makes their names durable before the journal
	 * (or a single file's exchange) can be: a journal that survived a
	 * crash its staged names did not would look installed. */
	if (n_files && fsync(dirfd) < 0 && errno != EINVAL && errno != EROFS) {
		r = -errno;
		msg_set(err, err_size, "cannot sync %s: %s", dir_path, hs_strerror(r));
		goto unstage;
	}

	/* 2. the commit point.  One file needs no journal: its exchange is
	 * the commit point, and a crash before it leaves a staged file that
	 * the recovery removes as never committed.  Else the journal is
	 * linked whole to its name, or renamed over the one a recovery left
	 * for its work, then the directory synced. */
	one = n_files == 1 && n_work == 0 && carried.len == 0;
	if (!one)
		r = write_journal(dirfd, JOURNAL_HEADER, &journal, !journal_found);
	if (r < 0) {
		msg_set(err, err_size, "cannot write %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
		goto unstage;
	}

	/* 3. install.  A rename in one directory fails only for a target
	 * that cannot be replaced (a mount point, chattr +i): then the files
	 * already installed are put back from their backups and the whole
	 * change is abandoned (one file: nothing was installed).  A crash
	 * from here on is finished by hs_txn_recover. */
	for (size_t i = 0; i < n_files; i++) {
		r = install_one(dirfd, dir_path, files[i].base, files[i].old_data,
				files[i].old_len, err, err_size);
		if (r < 0)
			*failed = i;
		if (r < 0 && one)
			goto unstage;
		if (r < 0) {
			/* the work too, unless the journal stays to finish it;
			 * the work carried from before stays */
			if (roll_back(dirfd, dir_path, files, i, n_files, ids, r, err,
				      err_size) == 0)
				drop_journal(dirfd, work, n_work, &carried);
			return r;
		}
	}
	if (fsync(dirfd) < 0) {
		r = -errno;
		msg_set(err, err_size, "cannot sync %s: %s", dir_path, hs_strerror(r));
		return r;
	}
	if (one)
		return 0;
	/* the work: each piece that cannot be finished says so in its
	 * result and is dropped (the change is committed); without the ops
	 * the journal stays for a tool that has them */
	run_work(work, NULL, n_work, NULL, 0);
	if ((n_work || carried.len) && !work_ops)
		return 0;

	/* 4. done; the journal keeps the work carried (if it cannot, all of
	 * it stays: its own work done again changes nothing) */
	if (carried.len) {
		(void)write_journal(dirfd, JOURNAL_HEADER, &carried, false);
		return 0;
	}
	if (unlinkat(dirfd, HS_TXN_JOURNAL, 0) < 0 || fsync(dirfd) < 0) {
		r = -errno;
		msg_set(err, err_size, "cannot remove %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
		return r;
	}
	return 0;

unstage:
	unstage(dirfd, files, 0, staged_count);
	/* never committed: the work is undone and the prepared journal goes
	 * (but for the work carried), unless a piece could not be undone or
	 * the journal could not be read (it may carry work: it stays, and the
	 * next recovery undoes the pieces undone here again, to no effect) */
	if (n_work && undo_work(work, n_work) && carried_read) {
		if (carried.len)
			(void)write_journal(dirfd, JOURNAL_HEADER, &carried, false);
		else
			unlink_journal(dirfd);
	}
	return r;
}

/* One journal line: "BASE absent" or "BASE DEV INO SIZE MS.MNS CS.CNS". */
static int parse_journal_line(char *line, char **base, struct identity *id)
{
	char *sp = strchr(line, ' ');
	unsigned long long dev, ino, size;
	long long msec, mnsec, csec, cnsec;
	char extra;

	memset(id, 0, sizeof(*id));
	if (!sp)
		return -HS_E_FORMAT;
	*sp = '\0';
	*base = line;
	if (!base_ok(*base))
		return -HS_E_FORMAT;
	if (strcmp(sp + 1, "absent") == 0)
		return 0;
	id->present = true;
	if (sscanf(sp + 1, "%llu %llu %llu %lld.%lld %lld.%lld%c", &dev, &ino, &size, &msec,
		   &mnsec, &csec, &cnsec, &extra) != 7)
		return -HS_E_FORMAT;
	id->st.st_dev = (dev_t)dev;
	id->st.st_ino = (ino_t)ino;
	id->st.st_size = (off_t)size;
	id->st.st_mtim = (struct timespec){ (time_t)msec, (long)mnsec };
	id->st.st_ctim = (struct timespec){ (time_t)csec, (long)cnsec };
	return 0;
}

/* What the recovery finds of one file of a committed journal. */
enum file_state {
	FILE_INSTALLED,         /* the staged file is gone: in place */
	FILE_BACKUP_PENDING,    /* exchanged: the old file is under the staged name */
	FILE_INSTALLABLE,       /* the file is as the journal found it */
	FILE_CHANGED,           /* changed since by a tool that does not know the journal */
};

/* Classify base without changing anything: an enum file_state or -errno. */
static int classify_one(int dirfd, const char *dir_path, const char *base,
                        const struct identity *want, char *msg, size_t msg_size)
{
	char staged[160];
	struct identity now;
	struct stat st;
	int r;

	staged_name(staged, sizeof(staged), base);
	if (fstatat(dirfd, staged, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? FILE_INSTALLED : -errno;
	if (!S_ISREG(st.st_mode)) {
		msg_add(msg, msg_size, "%s/%s is not a regular file; left alone", dir_path,
			staged);
		return -HS_E_NOTREG;
	}
	r = identity_of(dirfd, base, &now);
	if (r < 0)
		return r;
	/* killed between the exchange and the rename of the old file to
	 * its backup: the new file is in place */
	if (want->present && st.st_dev == want->st.st_dev && st.st_ino == want->st.st_ino)
		return FILE_BACKUP_PENDING;
	return identity_equal(&now, want) ? FILE_INSTALLABLE : FILE_CHANGED;
}

/* Act on a file classified so, or say why its update cannot be finished.
 * changed: NULL, or a file of the journal that was changed since, which
 * drops an installable update too. */
static int recover_one(int dirfd, const char *dir_path, const char *base, int state,
                       const char *changed, char *msg, size_t msg_size)
{
	char staged[160], backup[160];
	int r;

	staged_name(staged, sizeof(staged), base);
	if (state == FILE_INSTALLED)
		return 0;
	if (state == FILE_BACKUP_PENDING) {
		snprintf(backup, sizeof(backup), "%s-", base);
		r = renameat(dirfd, staged, dirfd, backup) < 0 ? -errno : 0;
	} else if (changed) {
		/* theirs is the newer state, and half of ours must not join it */
		(void)unlinkat(dirfd, staged, 0);
		if (state == FILE_CHANGED)
			msg_add(msg, msg_size, "dropped an interrupted update of %s/%s: the "
				"file was changed since", dir_path, base);
		else
			msg_add(msg, msg_size, "dropped an interrupted update of %s/%s: %s/%s "
				"was changed since", dir_path, base, dir_path, changed);
		return 1;
	} else if ((r = install_one(dirfd, dir_path, base, NULL, 0, msg, msg_size)) == 0) {
		msg_add(msg, msg_size, "finished an interrupted update of %s/%s", dir_path, base);
		return 1;
	}
	if (r < 0)
		msg_add(msg, msg_size, "cannot finish the update of %s/%s: %s", dir_path, base,
			hs_strerror(r));
	return r;
}

/* Is entry a temporary file of one of our writes: the temp name of the
 * journal, or of BASE, its backup BASE- or its staged .BASE.hs-txn? */
static bool is_temp_of(const char *entry, const char *const bases[], size_t n_bases)
{
	if (hs_tempname_is_for_file(entry, HS_TXN_JOURNAL))
		return true;
	for (size_t i = 0; i < n_bases; i++) {
		char name[160];

		if (!base_ok(bases[i]))
			continue;
		if (hs_tempname_is_for_file(entry, bases[i]))
			return true;
		snprintf(name, sizeof(name), "%s-", bases[i]);
		if (hs_tempname_is_for_file(entry, name))
			return true;
		staged_name(name, sizeof(name), bases[i]);
		if (hs_tempname_is_for_file(entry, name))
			return true;
	}
	return false;
}

/* Is entry the journal or a staged file? */
static bool is_txn_name(const char *entry, const char *const bases[], size_t n_bases)
{
	char staged[160];

	if (strcmp(entry, HS_TXN_JOURNAL) == 0)
		return true;
	for (size_t i = 0; i < n_bases; i++) {
		staged_name(staged, sizeof(staged), bases[i]);
		if (strcmp(entry, staged) == 0)
			return true;
	}
	return false;
}

/* Remove the temp files a writer killed inside hs_fileio_replace_at left
 * (never renamed, so never part of any state).  Under the locks nobody
 * else of ours is writing them, and other suites use other names.
 * *txn_seen: the journal or a staged file is there (else there is
 * nothing for recover_journal to do). */
static int sweep_temps(int dirfd, const char *dir_path, const char *const bases[],
                       size_t n_bases, const struct hs_txn_litter *litter, bool *txn_seen,
                       char *msg, size_t msg_size)
{
	DIR *d = hs_fileio_opendir_at(dirfd);
	struct dirent *de;
	int changed = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] != '.') {
			if (litter && litter->match(de->d_name, litter->ctx))
				(void)unlinkat(dirfd, de->d_name, 0);
			continue;
		}
		*txn_seen |= is_txn_name(de->d_name, bases, n_bases);
		if (!is_temp_of(de->d_name, bases, n_bases))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && unlinkat(dirfd, de->d_name, 0) == 0) {
			msg_add(msg, msg_size, "removed %s/%s left by an interrupted update",
				dir_path, de->d_name);
			changed = 1;
		}
	}
	closedir(d);
	return changed;
}

/* Never committed: the staged files are garbage. */
static int remove_staged(int dirfd, const char *dir_path, const char *const bases[],
                         size_t n_bases, char *msg, size_t msg_size)
{
	int changed = 0;

	for (size_t i = 0; i < n_bases; i++) {
		char staged[160];

		if (!base_ok(bases[i]))
			continue;
		staged_name(staged, sizeof(staged), bases[i]);
		if (unlinkat(dirfd, staged, 0) == 0) {
			msg_add(msg, msg_size, "removed %s/%s left by an interrupted update", dir_path,
				staged);
			changed = 1;
		}
	}
	return changed;
}

/* Why keep_work keeps the work: no run here can do it (a tool without
 * the ops), some failed now (said, with its cause), or all that failed
 * was said by a recovery before in this run (nothing more to say). */
enum keep_why { KEEP_NO_OPS, KEEP_FAILED, KEEP_SAID };

/* A committed journal whose work no run here can do (or drop_the_rest's,
 * said already): keep only the work (the files are in place) for a tool
 * that can. */
static int keep_work(int dirfd, const char *dir_path, const struct hs_txn_work *work,
                     const bool *undo, size_t n_work, enum keep_why why, char *msg,
                     size_t msg_size)
{
	int r = write_work_journal(dirfd, JOURNAL_HEADER, work, undo, n_work, NULL);

	if (r < 0)
		msg_add(msg, msg_size, "cannot write %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
	else if (why == KEEP_FAILED)
		msg_add(msg, msg_size, "what failed is left in %s/%s: once its cause is fixed, "
			"the next root account tool finishes it", dir_path, HS_TXN_JOURNAL);
	else if (why == KEEP_NO_OPS)
		msg_add(msg, msg_size, "the home and tree work of an interrupted command is "
			"left in %s/%s for the next root account tool", dir_path,
			HS_TXN_JOURNAL);
	return r < 0 ? r : 1;
}

/* A piece of a committed journal that passwd no longer wants (the
 * account gone or its home moved since): undone, or left (a home passwd
 * names again), and said. */
static void revert_one(struct hs_txn_work *w, enum hs_txn_verdict v, const char *dir_path,
                       char *msg, size_t msg_size)
{
	if (v == HS_TXN_CLAIMED) {
		msg_add(msg, msg_size, "left %s: %s/passwd names it as a home again", w->path,
			dir_path);
		return;
	}
	w->result = work_ops->revert ? work_ops->revert(w) : -ENOSYS;
	if (w->result == -EXDEV)
		msg_add(msg, msg_size, "not undoing the creation of %s: a file system is "
			"mounted at %s; it is left as it is", w->path, w->path);
	else if (w->result < 0)
		msg_add(msg, msg_size, "cannot undo the creation of %s: %s", w->path,
			w->result == -ESTALE ? "it or its directory was replaced since; left alone"
					     : hs_strerror(w->result));
	else if (w->result > 0)
		msg_add(msg, msg_size, "left %s as it is: it was handed to uid %lu before %s/"
			"passwd stopped naming it", w->path, (unsigned long)w->uid, dir_path);
	else
		msg_add(msg, msg_size, "undid the creation of %s: %s/passwd no longer names it "
			"for uid %lu", w->path, dir_path, (unsigned long)w->uid);
}

/* The journal's work, parsed: each piece undone (undo[i]: prepared, or
 * carried from a prepared journal) or finished, and said.  What a
 * committed journal would finish is checked against passwd first
 * (work_ops->check): a tool that does not know the journal may have
 * deleted the account meanwhile and given its uid to another.  0, or a
 * negative error when passwd cannot be read: the journal stays as it is
 * (its files are in place), as for any recovery that fails, and no
 * piece is finished without the check.  A piece before[i] (kept for the
 * next tool by a recovery before in this run) is left as it is, unsaid. */
static int recover_work(const char *dir_path, struct hs_txn_work *work, const bool *undo,
                        const bool *before, size_t n_work, char *msg, size_t msg_size)
{
	_cleanup_free_ enum hs_txn_verdict *verdict = NULL;
	_cleanup_free_ bool *skip = NULL;
	int r = 0;

	if (n_work == 0)
		return 0;
	verdict = calloc(n_work, sizeof(*verdict));
	skip = calloc(n_work, sizeof(*skip));
	if (!verdict || !skip)
		r = -ENOMEM;
	/* what is not finished now needs no verdict */
	for (size_t i = 0; r == 0 && i < n_work; i++)
		skip[i] = undo[i] || before[i];
	if (r == 0 && work_ops->check)
		r = work_ops->check(dir_path, work, skip, n_work, verdict);
	if (r < 0) {
		msg_add(msg, msg_size, "cannot check the work of an interrupted command against "
			"%s/passwd: %s", dir_path, hs_strerror(r));
		return r;
	}
	for (size_t i = 0; i < n_work; i++) {
		if (before[i])
			continue;
		skip[i] = undo[i] || verdict[i] != HS_TXN_FINISH;
		if (undo[i]) {
			char tmp[PATH_MAX + 16];

			undo_work(&work[i], 1);
			if (work[i].result < 0)
				msg_add(msg, msg_size, "cannot undo the unfinished creation of %s%s: %s",
					work[i].path, built_as(&work[i], tmp, sizeof(tmp)),
					hs_strerror(work[i].result));
			else if (work_is_new(&work[i]))
				msg_add(msg, msg_size, "undid the unfinished creation of %s",
					work[i].path);
		} else if (skip[i]) {
			revert_one(&work[i], verdict[i], dir_path, msg, msg_size);
		}
	}
	run_work(work, skip, n_work, msg, msg_size);
	return 0;
}

/* A file of the journal's change was changed since (changed_file): the
 * rest of the change is dropped where it still can be, and its work
 * undone (not the work it carried: that change is in place).  The
 * exchanges finished, the journal says so first (the work alone, each
 * piece to undo or finish) before a staged file goes: killed after that,
 * this run's drops would look like installs to the next, which would
 * finish the work (remove a home whose passwd line stays).  1, or a
 * negative error. */
static int drop_the_rest(int dirfd, const char *dir_path, char **base, int *state,
                         size_t n_files, const char *changed_file, struct hs_txn_work *work,
                         bool *undo, const bool *carried, size_t n_work, char *msg,
                         size_t msg_size)
{
	int r;

	for (size_t i = 0; i < n_work; i++)
		undo[i] = undo[i] || !carried[i];
	for (size_t i = 0; i < n_files; i++) {
		if (state[i] != FILE_BACKUP_PENDING)
			continue;
		r = recover_one(dirfd, dir_path, base[i], state[i], changed_file, msg, msg_size);
		if (r < 0)
			return r;
		state[i] = FILE_INSTALLED;
	}
	return keep_work(dirfd, dir_path, work, undo, n_work, KEEP_SAID, msg, msg_size);
}

/* The work of a journal whose files recover_journal has dealt with
 * (changed: whether it changed any): done, undone, or kept for the next
 * tool.  work_only: the journal names no file (a journal of work alone,
 * committed).  Returns as recover_journal. */
static int recover_journal_work(int dirfd, const char *dir_path, struct hs_txn_work *work,
				bool *undo, bool *before, size_t n_work, bool prepared,
				bool work_only, int changed, char *msg, size_t msg_size)
{
	size_t n_left = 0, n_said = 0;
	int r;

	if (!work_ops && n_work)
		return prepared ? changed : keep_work(dirfd, dir_path, work, undo, n_work,
						      KEEP_NO_OPS, msg, msg_size);
	for (size_t i = 0; i < n_work; i++) {
		before[i] = kept_here_before(&work[i], undo[i]);
		if (before[i])
			work[i].result = -EAGAIN;       /* still to do, as it was */
	}
	r = recover_work(dir_path, work, undo, before, n_work, msg, msg_size);
	if (r < 0)
		return r;
	/* a piece that could not be done (no space, the tool's confinement)
	 * stays for the next tool, said once in this run; the ones done are
	 * not redone */
	for (size_t i = 0; i < n_work; i++) {
		if (work_failed_for_now(&work[i])) {
			if (!before[i]) {
				kept_here_add(&work[i], undo[i]);
				n_said++;
			}
			undo[n_left] = undo[i];
			work[n_left++] = work[i];
		}
	}
	/* all as this run's earlier recovery left it: the journal too */
	if (n_left && n_left == n_work && n_said == 0 && work_only)
		return changed;
	if (n_left)
		return keep_work(dirfd, dir_path, work, undo, n_left,
				 n_said ? KEEP_FAILED : KEEP_SAID, msg, msg_size);
	if (fsync(dirfd) < 0 || unlinkat(dirfd, HS_TXN_JOURNAL, 0) < 0 || fsync(dirfd) < 0) {
		r = -errno;
		msg_add(msg, msg_size, "cannot remove %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
		return r;
	}
	return 1;
}

/* Finish or drop what the journal names.  A committed journal is rolled
 * forward: every staged file installed, its work finished.  But if a tool
 * that does not know the journal changed one of its files since, the
 * change goes back where it still can: files already exchanged stay
 * (their backup renames are finished), every other staged file is dropped
 * and all the work is undone, as for a prepared journal, so no half of
 * the change (a gshadow line, a tree directory) joins the other tool's
 * state.  A first pass classifies every file before anything changes. */
static int recover_journal(int dirfd, const char *dir_path, const char *const bases[],
                           size_t n_bases, char *msg, size_t msg_size)
{
	/* its own and some carried from a journal before it: one per line at most */
	_cleanup_free_ struct hs_txn_work *work = NULL;
	_cleanup_free_ bool *undo = NULL;
	/* before[i]: kept for the next tool by a recovery before in this run */
	_cleanup_free_ bool *before = NULL;
	/* carried[i]: work of an earlier change, whose files are in place */
	_cleanup_free_ bool *carried = NULL;
	_cleanup_free_ char *data = NULL;
	/* the files, classified in a first pass that changes nothing */
	_cleanup_free_ char **base = NULL;
	_cleanup_free_ int *state = NULL;
	const char *changed_file = NULL;
	size_t len = 0, n_work = 0, n_files = 0, hlen, n_lines = 1;
	bool prepared;
	char *cur, *nl;
	int r, changed = 0;

	r = read_journal(dirfd, &data, &len);
	if (r == -ENOENT)
		return remove_staged(dirfd, dir_path, bases, n_bases, msg, msg_size);
	if (r < 0) {
		msg_set(msg, msg_size, "cannot read %s/%s: %s", dir_path, HS_TXN_JOURNAL,
			hs_strerror(r));
		return r;
	}
	/* data is NUL-terminated: a short one differs */
	prepared = strncmp(data, JOURNAL_PREPARED, strlen(JOURNAL_PREPARED)) == 0;
	hlen = strlen(prepared ? JOURNAL_PREPARED : JOURNAL_HEADER);
	if (strncmp(data, prepared ? JOURNAL_PREPARED : JOURNAL_HEADER, hlen) != 0 ||
	    memchr(data, '\0', len)) {
		msg_set(msg, msg_size, "%s/%s: not a transaction journal; left alone", dir_path,
			HS_TXN_JOURNAL);
		return -HS_E_FORMAT;
	}
	for (cur = data; (cur = memchr(cur, '\n', len - (size_t)(cur - data))); cur++)
		n_lines++;
	work = calloc(n_lines, sizeof(*work));
	undo = calloc(n_lines, sizeof(*undo));
	before = calloc(n_lines, sizeof(*before));
	carried = calloc(n_lines, sizeof(*carried));
	base = calloc(n_lines, sizeof(*base));
	state = calloc(n_lines, sizeof(*state));
	if (!work || !undo || !before || !carried || !base || !state)
		return -ENOMEM;
	for (cur = data + hlen; *cur; cur = nl + 1) {
		struct identity want;

		nl = strchr(cur, '\n');
		if (!nl)
			break;          /* written whole or not at all: cannot happen */
		*nl = '\0';
		undo[n_work] = cur[0] == '-' || (prepared && cur[0] != '+');
		carried[n_work] = cur[0] == '+';
		if (cur[0] == '-' || (cur[0] == '+' && cur[1] == '@'))
			cur++;
		if (cur[0] == '@' ? parse_work_line(cur, &work[n_work]) < 0
				  : prepared || parse_journal_line(cur, &base[n_files], &want) < 0) {
			msg_add(msg, msg_size, "%s/%s: bad line skipped", dir_path,
				HS_TXN_JOURNAL);
			continue;
		}
		if (cur[0] == '@') {
			n_work++;
			continue;
		}
		r = classify_one(dirfd, dir_path, base[n_files], &want, msg, msg_size);
		if (r < 0) {
			msg_add(msg, msg_size, "cannot finish the update of %s/%s: %s", dir_path,
				base[n_files], hs_strerror(r));
			return r;
		}
		if (r == FILE_CHANGED && !changed_file)
			changed_file = base[n_files];
		state[n_files++] = r;
	}
	if (changed_file) {
		r = drop_the_rest(dirfd, dir_path, base, state, n_files, changed_file, work, undo,
				  carried, n_work, msg, msg_size);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < n_files; i++) {
		r = recover_one(dirfd, dir_path, base[i], state[i], changed_file, msg, msg_size);
		if (r < 0)
			return r;
		changed |= r;
	}
	/* a journal of work alone names no staged file: any left is a
	 * dropped one of a run killed after rewriting it */
	if (prepared || n_files == 0)
		changed |= remove_staged(dirfd, dir_path, bases, n_bases, msg, msg_size);
	return recover_journal_work(dirfd, dir_path, work, undo, before, n_work, prepared,
				    n_files == 0 && !prepared && !changed_file, changed, msg,
				    msg_size);
}

int hs_txn_recover(int dirfd, const char *dir_path, const char *const bases[], size_t n_bases,
                   const struct hs_txn_litter *litter, char *msg, size_t msg_size)
{
	bool txn_seen = false;
	int swept, r;

	if (msg && msg_size)
		msg[0] = '\0';
	swept = sweep_temps(dirfd, dir_path, bases, n_bases, litter, &txn_seen, msg, msg_size);
	if (swept < 0) {
		msg_set(msg, msg_size, "cannot read %s: %s", dir_path, hs_strerror(swept));
		return swept;
	}
	/* without the journal or a staged file there is nothing to finish
	 * or drop */
	r = txn_seen ? recover_journal(dirfd, dir_path, bases, n_bases, msg, msg_size) : 0;
	if (r < 0)
		return r;
	/* after the journal: a reserved directory it named is in place now
	 * (unless it is left for the next tool) */
	if (work_ops && work_ops->sweep && !hs_txn_journal_left(dirfd)) {
		int n = work_ops->sweep(dirfd);

		if (n > 0)
			msg_add(msg, msg_size, "removed %d reserved director%s left in the tree "
				"by interrupted commands", n, n == 1 ? "y" : "ies");
		swept |= n > 0;
	}
	return r | swept;
}
