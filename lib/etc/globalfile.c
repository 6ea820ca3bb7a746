/* Locking and rewriting of the global account files (DESIGN.md section 4).
 *
 * Lock order, shared with shadow-utils and systemd-sysusers:
 *   1. an fcntl write lock on the whole of /etc/.pwd.lock (what lckpwdf()
 *      takes).  We take it as an OFD lock: it conflicts with the classic
 *      per-process POSIX lock the others take, and unlike a POSIX lock it is
 *      not silently dropped when some library closes another fd of the same
 *      file (e.g. an NSS module reading it).
 *   2. shadow-utils' hard-link lock FILE.lock for every file touched.
 * Both are polled with a deadline; library code never uses alarm(). */
#include "globalfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "fileio.h"
#include "layout.h"
#include "selabel.h"
#include "txn.h"
#include "userdir.h"
#include "util.h"

/* A lock fd is always moved above the standard streams, so a zeroed
 * struct hs_locks (pwd_lock_fd == 0) is recognisably "not held" and
 * release never closes stdin. */
#define HS_LOCK_FD_MIN 3

/* Backoff between lock attempts: short at first so an uncontended
 * retry is quick, capped so a long wait does not spin. */
#define HS_LOCK_POLL_MIN_NS (5 * 1000 * 1000L)
#define HS_LOCK_POLL_MAX_NS (200 * 1000 * 1000L)

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleep for the current backoff (never past the deadline) and grow it.
 * Returns false when the deadline has already passed. */
static bool lock_backoff(int64_t deadline, long *step_ns)
{
	int64_t now = monotonic_ns();

	if (now >= deadline)
		return false;
	int64_t wait = *step_ns;
	if (wait > deadline - now)
		wait = deadline - now;
	struct timespec ts = { .tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	*step_ns *= 2;
	if (*step_ns > HS_LOCK_POLL_MAX_NS)
		*step_ns = HS_LOCK_POLL_MAX_NS;
	return true;
}

/* fd (closed in any case) moved above the standard streams, where a
 * zeroed hs_locks never mistakes it for one it holds; the new fd or
 * -errno. */
static int above_std_streams(int fd)
{
	int high;

	if (fd < 0 || fd >= HS_LOCK_FD_MIN)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, HS_LOCK_FD_MIN);
	if (high < 0)
		high = -errno;
	hs_close(fd);
	return high;
}

/* An OFD lock of type (F_WRLCK, F_RDLCK) on the whole of fd, as
 * lckpwdf() locks it, polled until the deadline. */
static int poll_ofd_lock(int fd, short type, int64_t deadline)
{
	long step = HS_LOCK_POLL_MIN_NS;

	for (;;) {
		struct flock fl = {
			.l_type = type,
			.l_whence = SEEK_SET,
			.l_start = 0,
			.l_len = 0,      /* whole file, as lckpwdf() locks it */
			.l_pid = 0,      /* must be 0 for OFD locks */
		};
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			return -errno;
		if (!lock_backoff(deadline, &step))
			return -HS_E_TIMEOUT;
	}
}

/* The lock file just opened (opened, or -1 with errno from the open): a
 * regular file, moved above the standard streams and locked (type) until
 * the deadline.  The fd goes to *fd_out. */
static int lock_pwd_fd(int opened, short type, int64_t deadline, int *fd_out)
{
	_cleanup_close_ int fd = opened;
	struct stat st;
	int r;

	if (fd < 0)
		return errno == ELOOP ? -HS_E_SYMLINK : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -HS_E_NOTREG;
	fd = above_std_streams(TAKE_FD(fd));
	if (fd < 0)
		return fd;
	r = poll_ofd_lock(fd, type, deadline);
	if (r == 0)
		*fd_out = TAKE_FD(fd);
	return r;
}

int hs_globalfile_read_lock(struct hs_locks *l, const char *pwd_lock_path,
			    unsigned timeout_ms)
{
	int64_t deadline = monotonic_ns() + (int64_t)timeout_ms * 1000000;
	int fd;

	*l = (struct hs_locks)HS_LOCKS_INIT;
	/* read access is enough for a read lock, and a reader creates nothing */
	fd = open(pwd_lock_path ? pwd_lock_path : HS_ETC_PWD_LOCK,
		  O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 0;
	return lock_pwd_fd(fd, F_RDLCK, deadline, &l->pwd_lock_fd);
}

static char *path_with_suffix(const char *path, const char *suffix)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s", path, suffix) < 0)
		return NULL;
	return s;
}

/* Read the PID from an existing FILE.lock.  shadow-utils writes the PID
 * in decimal followed by a NUL; older writers may end it with a newline.
 * Returns the PID, 0 when the content is not a PID, or -errno. */
static long read_lock_pid(const char *lockpath)
{
	char buf[32];
	_cleanup_close_ int fd = open(lockpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
				      O_NOCTTY);

	if (fd < 0)
		return -errno;
	ssize_t n = hs_read_full(fd, buf, sizeof buf - 1);
	if (n < 0)
		return n;
	buf[n] = '\0';
	/* the content ends at the first NUL or newline */
	buf[strcspn(buf, "\n")] = '\0';
	unsigned long pid;
	if (hs_parse_ulong(buf, 1, INT_MAX, &pid) < 0)
		return 0;
	return (long)pid;
}

/* Write FILE.PID ("PID\0", O_EXCL), labelled as lockpath, the name it
 * is linked to, and return 0 or -errno. */
static int write_pid_file(const char *pidpath, const char *lockpath)
{
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	int fd = -1;

	for (int attempt = 0; attempt < 2; attempt++) {
		fd = hs_selabel_openat(AT_FDCWD, pidpath, lockpath, O_WRONLY | O_CREAT | O_EXCL |
				       O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* A FILE.PID carrying our own PID can only be left over by a
		 * dead process that had the same PID: we always unlink ours. */
		if (unlink(pidpath) < 0 && errno != ENOENT)
			return -errno;
	}
	if (fd < 0)
		return -errno;
	int r = hs_write_full(fd, buf, (size_t)len + 1);   /* with the NUL */
	if (r == 0 && close(fd) < 0)
		r = -errno;
	else if (r < 0)
		hs_close(fd);
	if (r < 0)
		unlink(pidpath);
	return r;
}

static int check_link_count(const char *pidpath)
{
	struct stat st;

	if (lstat(pidpath, &st) < 0)
		return -errno;
	return st.st_nlink == 2 ? 0 : -HS_E_LOCKED;
}

/* Is a FILE.lock that exists (EEXIST) held?  -HS_E_LOCKED when a live
 * process holds it (retry later); 0 when it was stale and is removed. */
static int check_existing_lock(const char *lockpath)
{
	long pid = read_lock_pid(lockpath);

	/* -ENOENT: released meanwhile: just retry */
	if (pid == -ENOENT)
		return -HS_E_LOCKED;
	if (pid < 0)
		return (int)pid;
	/* Unparsable content: shadow-utils treats that as held, and so do
	 * we (the failure names the lock file for the administrator). */
	if (pid == 0)
		return -HS_E_LOCKED;
	/* Our own PID in a lock we do not hold can only come from a dead
	 * process that had the same PID (common in containers); a second
	 * acquire in this process would already have failed on .pwd.lock. */
	if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
		return -HS_E_LOCKED;
	/* stale: the holder is gone */
	if (unlink(lockpath) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Link FILE.PID (written) to FILE.lock.  0 = we hold it, -HS_E_LOCKED = a
 * live process holds it (retry later), other negatives are hard errors. */
static int link_file_lock(const char *pidpath, const char *lockpath)
{
	int r;

	if (link(pidpath, lockpath) == 0)
		return check_link_count(pidpath);
	if (errno != EEXIST)
		return -errno;
	r = check_existing_lock(lockpath);
	if (r < 0)
		return r;
	if (link(pidpath, lockpath) == 0)
		return check_link_count(pidpath);
	return errno == EEXIST ? -HS_E_LOCKED : -errno;
}

/* FILE.lock made whole in one step: an unnamed file holding "PID\0",
 * labelled as the lock, linked in as lock_name in dirfd.  What
 * shadow-utils reads there is what its own FILE.PID and link() make, but
 * the directory changes once instead of three times (FILE.PID made,
 * linked, removed) and no FILE.PID is ever left.  -EEXIST when a
 * FILE.lock is there; any other failure sends the caller the classic way,
 * whose link count check is for file systems without O_TMPFILE (NFS). */
static int link_unnamed_lock(int dirfd, const char *lock_name)
{
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	_cleanup_close_ int fd = hs_selabel_openat(dirfd, ".", lock_name,
						   O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	int r;

	if (fd < 0)
		return -errno;
	r = hs_write_full(fd, buf, (size_t)len + 1);    /* with the NUL */
	return r < 0 ? r : hs_fileio_link_unnamed(fd, dirfd, lock_name);
}

/* One attempt at FILE.lock: in one step when dirfd (the lock's
 * directory, or -1) and the file system allow, else through a FILE.PID
 * that is always removed. */
static int try_file_lock(int dirfd, const char *pidpath, const char *lockpath)
{
	const char *slash = strrchr(lockpath, '/');
	const char *lock_name = slash ? slash + 1 : lockpath;
	int r = -EOPNOTSUPP;

	for (int tries = 0; dirfd >= 0 && tries < 2; tries++) {
		r = link_unnamed_lock(dirfd, lock_name);
		if (r != -EEXIST)
			break;
		r = check_existing_lock(lockpath);
		if (r < 0)
			return r;
		r = -HS_E_LOCKED;       /* stale and removed: once more */
	}
	/* taken, or held: done.  What the one step could not do (no
	 * O_TMPFILE: NFS; no way to name an unnamed file: an old kernel,
	 * no CAP_DAC_READ_SEARCH and no /proc) the classic way tries, and
	 * reports its own failure */
	if (r == 0 || r == -HS_E_LOCKED)
		return r;
	r = write_pid_file(pidpath, lockpath);
	if (r < 0)
		return r;
	r = link_file_lock(pidpath, lockpath);
	unlink(pidpath);
	return r;
}

static int take_file_lock(int dirfd, const char *file, int64_t deadline, char **held)
{
	_cleanup_free_ char *pidpath = NULL, *lockpath = NULL;
	char suffix[32];
	long step = HS_LOCK_POLL_MIN_NS;

	snprintf(suffix, sizeof suffix, ".%ld", (long)getpid());
	pidpath = path_with_suffix(file, suffix);
	lockpath = path_with_suffix(file, ".lock");
	if (!pidpath || !lockpath)
		return -ENOMEM;
	for (;;) {
		int r = try_file_lock(dirfd, pidpath, lockpath);
		if (r == 0) {
			*held = TAKE_PTR(lockpath);
			return 0;
		}
		if (r != -HS_E_LOCKED || !lock_backoff(deadline, &step)) {
			/* if the link count check failed after we linked,
			 * the lock may carry our PID: do not leave it */
			if (r == -HS_E_LOCKED && read_lock_pid(lockpath) == (long)getpid())
				unlink(lockpath);
			return r == -HS_E_LOCKED ? -HS_E_TIMEOUT : r;
		}
	}
}

/* The directory of path and its last component; every file of one
 * commit must be in the same directory (one journal per directory). */
static int split_dir(const char *path, char *dir, size_t dir_size, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	/* a bare name (pwck passwd) is in the current directory */
	if (!slash) {
		if (dir_size < 2)
			return -ENAMETOOLONG;
		strcpy(dir, ".");
		*base = path;
		return hs_fileio_is_single_component(path) ? 0 : -EINVAL;
	}
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= dir_size)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	*base = slash + 1;
	return hs_fileio_is_single_component(*base) ? 0 : -EINVAL;
}

/* Remove the FILE.PID files of the lock protocol that dead processes
 * left (killed between creating and unlinking theirs, or by SIGXFSZ while
 * writing it): without this each such kill leaves one more file in /etc.
 * A file whose PID is alive may be a concurrent shadow-utils tool's and
 * stays.  Runs under the locks, so none of ours is in flight. */
struct lock_bases {
	const char *const *bases;
	size_t n;
};

static bool is_stale_pid_file(const char *name, void *ctx)
{
	const struct lock_bases *lb = ctx;
	const char *dot = strrchr(name, '.');
	unsigned long pid;

	if (!dot || dot == name || hs_parse_ulong(dot + 1, 1, INT_MAX, &pid) < 0)
		return false;
	for (size_t i = 0; i < lb->n; i++) {
		size_t len = strlen(lb->bases[i]);

		if ((size_t)(dot - name) == len && memcmp(name, lb->bases[i], len) == 0)
			return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
	}
	return false;
}

/* Under the locks, before anything reads the files: finish (or drop) what
 * a tool killed in the middle of a multi-file commit left (lib/etc/txn.h).
 * Every tool that locks the global files comes through here, so no tool
 * reads a half-installed transaction or replaces a file it names. */
static int finish_interrupted_update(const char *pwd_lock_path, const char **failed_path)
{
	static const char *const bases[] = {
		"passwd", "shadow", "group", "gshadow", "subuid", "subgid", "shells",
	};
	static char journal[PATH_MAX + 32];
	struct lock_bases lb = { bases, HS_ARRAY_SIZE(bases) };
	const struct hs_txn_litter stale_pid_files = { is_stale_pid_file, &lb };
	char dir[PATH_MAX], msg[1024];
	/* msg names what users chose (a home's path, a name inside it that
	 * a walk stopped at): the log record is escaped as the terminal's
	 * line is (hs_warn), each byte at most "\\xNN" */
	char shown[4 * sizeof(msg)];
	const char *base;
	_cleanup_close_ int dirfd = -1;
	int r = split_dir(pwd_lock_path, dir, sizeof(dir), &base);

	if (r < 0)
		return r;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	/* one listing of the directory for both kinds of leftovers */
	r = hs_txn_recover(dirfd, dir, bases, HS_ARRAY_SIZE(bases), &stale_pid_files, msg,
			   sizeof(msg));
	/* nothing to say: a recovery that kept only what an earlier one of
	 * this run said it keeps */
	if (r < 0 || (r > 0 && msg[0])) {
		hs_warn("%s", msg);
		syslog(r < 0 ? LOG_ERR : LOG_WARNING, "%s",
		       hs_printable(msg, shown, sizeof(shown)));
	}
	if (r >= 0)
		return 0;
	snprintf(journal, sizeof(journal), "%s/%s", dir, HS_TXN_JOURNAL);
	if (failed_path)
		*failed_path = journal;
	return r;
}

/* This boot's id (the kernel makes a new one at each boot), or "" when
 * /proc cannot tell. */
static void read_boot_id(char *id, size_t size)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id",
				      O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n = fd < 0 ? -1 : read(fd, id, size - 1);

	if (n < 2 || id[n - 1] != '\n') {
		id[0] = '\0';
		return;
	}
	id[n - 1] = '\0';
	if (strspn(id, "0123456789abcdef-") != (size_t)(n - 1))
		id[0] = '\0';
}

static int clean_record(const char *boot_id, char *buf, size_t size)
{
	return snprintf(buf, size, "hardened-shadow: no interrupted update since boot %s\n",
			boot_id);
}

/* Does .pwd.lock say that no tool of ours was interrupted since this
 * boot?  *empty: it holds nothing (no need to empty it). */
static bool lock_says_clean(int fd, const char *boot_id, bool *empty)
{
	char want[128], got[128];
	int len = clean_record(boot_id, want, sizeof(want));
	ssize_t n = pread(fd, got, sizeof(got), 0);

	*empty = n == 0;
	return boot_id[0] && n == len && memcmp(got, want, (size_t)len) == 0;
}

/* May the release record "clean"?  Not while a journal is left (its work
 * waits for a tool that can do it), nor while the tree's mark says a
 * reserved directory may be left: a tool without the tree work (chfn,
 * gpasswd) recovers /etc but cannot sweep the tree, and a record written
 * then would spare every later tool that can its sweep. */
static bool nothing_left(int dirfd)
{
	char mark[PATH_MAX];
	const char *const left[] = { HS_TXN_JOURNAL, mark };
	struct stat st;

	snprintf(mark, sizeof(mark), "%s/%s", strrchr(HS_TREE_DIR, '/') + 1,
		 HS_TREE_RESERVED_MARK);
	if (dirfd < 0)
		return false;
	for (size_t i = 0; i < HS_ARRAY_SIZE(left); i++)
		if (fstatat(dirfd, left[i], &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return false;
	return true;
}

/* The locks' directory, opened once: -1 when it cannot be opened, which
 * only makes nothing_left say no. */
static int open_lock_dir(const char *dir)
{
	int fd = above_std_streams(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));

	return fd < 0 ? -1 : fd;
}

bool hs_globalfile_same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');

	return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

int hs_globalfile_lock(struct hs_locks *l, const char *pwd_lock_path,
                    const char *const files[], size_t n_files,
                    unsigned timeout_ms, const char **failed_path)
{
	int64_t deadline = monotonic_ns() + (int64_t)timeout_ms * 1000000;
	const char *ignored;
	bool clean, empty;
	char dir[PATH_MAX];
	const char *base;
	_cleanup_close_ int etc_fd = -1;
	int r;

	*l = (struct hs_locks)HS_LOCKS_INIT;
	if (!pwd_lock_path)
		pwd_lock_path = HS_ETC_PWD_LOCK;
	if (!failed_path)
		failed_path = &ignored;
	*failed_path = pwd_lock_path;
	if (n_files > HS_LOCK_MAX_FILES || (n_files > 0 && !files))
		return -EINVAL;

	r = split_dir(pwd_lock_path, dir, sizeof(dir), &base);
	if (r < 0)
		return r;
	r = lock_pwd_fd(hs_selabel_openat(AT_FDCWD, pwd_lock_path, NULL, O_RDWR | O_CREAT |
					  O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600),
			F_WRLCK, deadline, &l->pwd_lock_fd);
	if (r < 0) {
		l->pwd_lock_fd = -1;
		return r;
	}
	/* from here until the release, a kill leaves the record out */
	read_boot_id(l->boot_id, sizeof(l->boot_id));
	etc_fd = open_lock_dir(dir);
	/* a journal or the tree's mark is dealt with whatever the record
	 * says (an /etc copied back from a backup in the same boot, a tool
	 * from before the record killed meanwhile): lookups, no listing */
	clean = lock_says_clean(l->pwd_lock_fd, l->boot_id, &empty) && nothing_left(etc_fd);
	if (!empty && ftruncate(l->pwd_lock_fd, 0) < 0) {
		r = -errno;
		goto fail;
	}
	for (size_t i = 0; i < n_files; i++) {
		*failed_path = files[i];
		if (!files[i] || !*files[i]) {
			r = -EINVAL;
			goto fail;
		}
		r = take_file_lock(hs_globalfile_same_dir(files[i], pwd_lock_path) ? etc_fd : -1,
				   files[i], deadline,
				   &l->held[l->n]);
		if (r < 0)
			goto fail;
		l->n++;
	}
	r = clean ? 0 : finish_interrupted_update(pwd_lock_path, failed_path);
	if (r < 0)
		goto fail;
	/* the release may write the record if nothing is left then */
	l->etc_fd = TAKE_FD(etc_fd);
	*failed_path = NULL;
	return 0;
fail:
	hs_globalfile_unlock(l);
	return r;
}

void hs_globalfile_unlock(struct hs_locks *l)
{
	if (!l)
		return;
	if (l->n > HS_LOCK_MAX_FILES)
		l->n = HS_LOCK_MAX_FILES;
	while (l->n > 0) {
		l->n--;
		if (l->held[l->n]) {
			unlink(l->held[l->n]);
			free(l->held[l->n]);
			l->held[l->n] = NULL;
		}
	}
	if (l->etc_fd >= HS_LOCK_FD_MIN && l->boot_id[0] && l->pwd_lock_fd >= HS_LOCK_FD_MIN &&
	    nothing_left(l->etc_fd)) {
		char rec[128];
		int len = clean_record(l->boot_id, rec, sizeof(rec));

		(void)!pwrite(l->pwd_lock_fd, rec, (size_t)len, 0);
	}
	if (l->etc_fd >= HS_LOCK_FD_MIN)
		hs_close(l->etc_fd);
	l->etc_fd = -1;
	/* closing the last fd of the open file description drops the OFD lock */
	if (l->pwd_lock_fd >= HS_LOCK_FD_MIN)
		hs_close(l->pwd_lock_fd);
	l->pwd_lock_fd = -1;
}

int hs_globalfile_read(const char *path, char **data, size_t *len)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;

	if (!path)
		return -EINVAL;
	return hs_fileio_read_alloc_path(path, &ex, data, len);
}

/* The work the next commit carries (hs_globalfile_set_work). */
static struct hs_txn_work *next_work;
static size_t next_n_work;

void hs_globalfile_set_work(struct hs_txn_work *work, size_t n)
{
	next_work = work;
	next_n_work = work ? n : 0;
}

/* The directory of the global files, for a journal without files. */
static int open_etc(char *dir, size_t dir_size)
{
	const char *base;
	int r = split_dir(HS_ETC_PASSWD, dir, dir_size, &base);

	if (r < 0)
		return r;
	r = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int hs_globalfile_prepare(const struct hs_txn_work *work, size_t n, char *err, size_t err_size)
{
	char dir[PATH_MAX];
	_cleanup_close_ int dirfd = open_etc(dir, sizeof(dir));

	if (dirfd < 0) {
		if (err && err_size)
			snprintf(err, err_size, "cannot open the directory of %s: %s",
				 HS_ETC_PASSWD, hs_strerror(dirfd));
		return dirfd;
	}
	return hs_txn_prepare(dirfd, dir, work, n, err, err_size);
}

int hs_globalfile_recover(void)
{
	return finish_interrupted_update(HS_ETC_PWD_LOCK, NULL);
}

int hs_globalfile_commit(int dir_fd, const struct hs_global_file *files, size_t n, char *err,
			 size_t err_size, size_t *failed)
{
	struct hs_txn_file tf[HS_TXN_MAX_FILES];
	char dir[PATH_MAX] = "", other[PATH_MAX] = "";
	_cleanup_close_ int dirfd = -1;
	struct hs_txn_work *work = next_work;
	size_t n_work = next_n_work, ignored;
	int r;

	if (!failed)
		failed = &ignored;
	*failed = n;
	hs_globalfile_set_work(NULL, 0);    /* carried by this commit only */
	if (err && err_size)
		err[0] = '\0';
	if (n == 0 && n_work == 0)
		return 0;
	if (n == 0) {
		dirfd = open_etc(dir, sizeof(dir));
		if (dirfd < 0)
			return dirfd;
		return hs_txn_commit(dirfd, dir, NULL, 0, work, n_work, err, err_size, failed);
	}
	if (!files || n > HS_TXN_MAX_FILES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct hs_global_file *f = &files[i];
		size_t len = 0;

		if (!f->path || (!f->iov && f->n_iov) || (!f->old_data && f->old_len))
			return -EINVAL;
		for (size_t k = 0; k < f->n_iov; k++)
			len += f->iov[k].iov_len;
		r = split_dir(f->path, i ? other : dir, sizeof(dir), &tf[i].base);
		if (r == 0 && i && strcmp(dir, other) != 0)
			r = -EXDEV;
		if (r == 0 && len > HS_GLOBALFILE_MAX)
			r = -HS_E_TOOBIG;
		if (r < 0) {
			if (err && err_size)
				snprintf(err, err_size, "cannot write %s: %s", f->path, hs_strerror(r));
			*failed = i;
			return r;
		}
		tf[i].iov = f->iov;
		tf[i].n_iov = f->n_iov;
		tf[i].old_data = f->old_data;
		tf[i].old_len = f->old_len;
		tf[i].expect = f->expect;
		tf[i].uid = f->uid;
		tf[i].gid = f->gid;
		tf[i].mode = f->mode & 07777;
	}
	/* without the caller's fd: the directory part may hold symlinks (a
	 * test root); the last components never are followed */
	if (dir_fd <= 2)
		dir_fd = dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		r = -errno;
		if (err && err_size)
			snprintf(err, err_size, "cannot open %s: %s", dir, hs_strerror(r));
		return r;
	}
	return hs_txn_commit(dir_fd, dir, tf, n, work, n_work, err, err_size, failed);
}

int hs_globalfile_replace(const char *path, const char *data, size_t len,
                      uid_t default_uid, gid_t default_gid, mode_t default_mode)
{
	struct iovec iov = { .iov_base = (void *)(data ? data : ""), .iov_len = len };
	struct hs_global_file f = {
		.path = path, .iov = &iov, .n_iov = 1,
		.uid = default_uid, .gid = default_gid, .mode = default_mode,
	};

	if (!path || (!data && len))
		return -EINVAL;
	return hs_globalfile_commit(0, &f, 1, NULL, 0, NULL);
}

/* Not in the header: hs_globalfile_flush_caches with the program paths as
 * parameters, so the tests can run stand-ins. */
void hs_flush_caches_with(const char *nscd, const char *sss_cache, const char *db);

/* The cache program starts with no signal blocked and every one at its
 * default action, whatever the tool holds at that moment (signals waiting
 * out a commit, SIGXFSZ or SIGPIPE ignored: hs_privs_init). */
static int spawn_attr_clean_signals(posix_spawnattr_t *at)
{
	sigset_t none, all;

	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if (posix_spawnattr_init(at) != 0)
		return -1;
	if (posix_spawnattr_setsigmask(at, &none) != 0 ||
	    posix_spawnattr_setsigdefault(at, &all) != 0 ||
	    posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) != 0) {
		posix_spawnattr_destroy(at);
		return -1;
	}
	return 0;
}

static void run_quietly(const char *prog, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char *const envp[] = { NULL };
	pid_t pid;

	if (access(prog, X_OK) < 0 || spawn_attr_clean_signals(&at) < 0)
		return;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		posix_spawnattr_destroy(&at);
		return;
	}
	/* the first failure (an error number) ends the chain: no spawn */
	int r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ?:
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ?:
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) ?:
		posix_spawn(&pid, prog, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r != 0)
		return;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void hs_flush_caches_with(const char *nscd, const char *sss_cache, const char *db)
{
	int saved = errno;

	/* db comes from our own code; refuse anything that nscd could
	 * parse as an option */
	if (!db || !*db || db[0] == '-')
		return;
	if (nscd) {
		char *const argv[] = { (char *)"nscd", (char *)"-i", (char *)db, NULL };
		run_quietly(nscd, argv);
	}
	if (sss_cache) {
		char *const argv[] = { "sss_cache", "-E", NULL };
		run_quietly(sss_cache, argv);
	}
	errno = saved;
}

void hs_globalfile_flush_caches(const char *db)
{
	hs_flush_caches_with("/usr/sbin/nscd", "/usr/sbin/sss_cache", db);
}
