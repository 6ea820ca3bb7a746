/* Paranoid file I/O relative to directory fds (DESIGN.md section 3).
 *
 * Everything below a user's directory is hostile to root: the user may
 * have planted symlinks, hard links, FIFOs, sockets, huge or sparse files,
 * and may keep changing them while we look.  So every open is relative to
 * a directory fd, never follows a symlink, never blocks, and every check
 * is made on the opened fd (fstat), not on the name. */
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util.h"

/* Flags for opening a file we are about to trust: no symlink (ELOOP),
 * no blocking on a FIFO, no controlling terminal, no fd leak into
 * children. */
#define HS_OPEN_TRUSTED (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)


bool hs_fileio_same_version(const struct stat *then, const struct stat *now)
{
	return then->st_dev == now->st_dev && then->st_ino == now->st_ino &&
	       then->st_size == now->st_size && then->st_mtim.tv_sec == now->st_mtim.tv_sec &&
	       then->st_mtim.tv_nsec == now->st_mtim.tv_nsec;
}

bool hs_fileio_is_single_component(const char *name)
{
	return name && name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

int hs_fileio_open_parent(const char *path, const char **base)
{
	_cleanup_free_ char *dir = NULL;
	const char *slash;
	int fd;

	if (!path || !base)
		return -EINVAL;
	slash = strrchr(path, '/');
	*base = slash ? slash + 1 : path;
	if (!hs_fileio_is_single_component(*base))
		return -EINVAL;
	/* "DIR/NAME" needs a copy of DIR; "NAME" and "/NAME" do not */
	if (slash && slash != path && !(dir = strndup(path, (size_t)(slash - path))))
		return -ENOMEM;
	fd = open(dir ? dir : slash ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int hs_fileio_check_stat(const struct stat *st, const struct hs_file_expect *ex)
{
	if (!st || !ex)
		return -EINVAL;
	if (!S_ISREG(st->st_mode))
		return -HS_E_NOTREG;
	/* a hard link the user made to some other file (or to ours, to
	 * keep an old copy around); a root-owned file's other names are
	 * harmless to a reader that allows them */
	if (st->st_nlink != 1 && !(ex->root_links_ok && st->st_nlink > 1 && st->st_uid == 0))
		return -HS_E_NLINK;
	if (ex->uid != HS_ANY_UID && st->st_uid != ex->uid)
		return -HS_E_OWNER;
	if (ex->gid != HS_ANY_GID && st->st_gid != ex->gid)
		return -HS_E_GROUP;
	if (st->st_size < 0 || (ex->max_size && (uintmax_t)st->st_size > (uintmax_t)ex->max_size))
		return -HS_E_TOOBIG;
	return 0;
}

/* Turn a failed open of dirfd/name into the error the caller should see.
 * open() itself reports some hostile file types in ways that do not say
 * what happened (a socket gives ENXIO, a device on a nodev mount EACCES,
 * a symlink with O_DIRECTORY ENOTDIR), so look at the entry without
 * following it and name the real problem. */
static int classify_open_error(int dirfd, const char *name, int err, bool want_dir)
{
	struct stat st;

	if (err == ELOOP)
		return -HS_E_SYMLINK;
	if (err == ENOENT || err == ENOMEM || err == EMFILE || err == ENFILE)
		return -err;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -err;
	if (S_ISLNK(st.st_mode))
		return -HS_E_SYMLINK;
	if (want_dir && !S_ISDIR(st.st_mode))
		return -HS_E_NOTDIR;
	if (!want_dir && !S_ISREG(st.st_mode))
		return -HS_E_NOTREG;
	return -err;
}

/* openat2() without a glibc wrapper (glibc 2.36 has none). */
static int openat2_no_symlinks(const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

/* A writer may rename a new file over the one we just opened: the
 * opened inode then has no links left.  That is an ordinary race with
 * hs_fileio_replace_at, not a hostile file, so the open is retried (a few
 * times; a directory where that keeps happening is being hammered). */
#define HS_REPLACED_RETRIES 16
#define HS_E_REPLACED (-HS_E_LAST - 1)  /* internal: retry the open */

/* fstat an opened fd and apply the checks; takes fd, closes it on
 * failure. */
static int check_opened(int opened, const struct hs_file_expect *ex, struct stat *st)
{
	_cleanup_close_ int fd = opened;
	int r;

	if (fstat(fd, st) < 0)
		return -errno;
	if (S_ISREG(st->st_mode) && st->st_nlink == 0)
		return HS_E_REPLACED;
	r = hs_fileio_check_stat(st, ex);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/* One open of an absolute path (hs_fileio_read_trusted_path): the fd, or
 * the error, with the real problem of the last component named as
 * hs_fileio_read_trusted_at does. */
static int open_path(const char *path)
{
	int fd = openat2_no_symlinks(path, HS_OPEN_TRUSTED);
	const char *slash = strrchr(path, '/');
	_cleanup_close_ int parent = -1;
	char dir[PATH_MAX];
	int err;

	/* A seccomp filter that predates openat2 (an older container
	 * runtime's, a service's SystemCallFilter=) may answer EPERM rather
	 * than ENOSYS: this code runs in any process that calls getspnam.
	 * A real EPERM of the file comes back from open() as well. */
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = open(path, HS_OPEN_TRUSTED);
	if (fd >= 0)
		return fd;
	err = errno;
	if (err != ENOENT && err != EACCES && (size_t)(slash - path) < sizeof dir) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		parent = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (parent >= 0)
			return classify_open_error(parent, slash + 1, err, false);
	}
	return err == ELOOP ? -HS_E_SYMLINK : -err;
}

/* Open dirfd/name (or path, when given) for reading and check it;
 * returns the fd or an error. */
static int open_trusted(int dirfd, const char *name, const char *path,
			const struct hs_file_expect *ex, struct stat *st)
{
	if (!path && !hs_fileio_is_single_component(name))
		return -EINVAL;
	for (int tries = 0; tries < HS_REPLACED_RETRIES; tries++) {
		int fd = path ? open_path(path) : openat(dirfd, name, HS_OPEN_TRUSTED);

		if (fd < 0)
			return path ? fd : classify_open_error(dirfd, name, errno, false);
		fd = check_opened(fd, ex, st);
		if (fd != HS_E_REPLACED)
			return fd;
	}
	return -HS_E_NLINK;
}

/* Read an opened, checked file of st->st_size bytes into buf (cap bytes
 * at most, NUL-terminated).  A regular file returns a short read only at
 * its end, so one read() that returns exactly st_size (< cap) bytes is the
 * whole file; anything else (a file that changed since fstat, /proc files
 * reporting size 0) takes the careful loop that also catches growth.
 * Takes the fd (or the error of its open) and closes it.  On success *st
 * goes to st_out (if not NULL). */
static int read_checked(int opened, const struct stat *st, char *buf, size_t cap, size_t *len,
			struct stat *st_out)
{
	_cleanup_close_ int fd = opened;
	ssize_t n;
	char extra;

	if (fd < 0)
		return fd;
	if ((uintmax_t)st->st_size > (uintmax_t)cap)
		return -HS_E_TOOBIG;
	do
		n = read(fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < cap && (off_t)n != st->st_size) {
		ssize_t rest = hs_read_full(fd, buf + n, cap - (size_t)n);
		if (rest < 0) {
			hs_wipe(buf, (size_t)n);
			return (int)rest;
		}
		n += rest;
	}
	if ((size_t)n == cap) {
		/* The file may have grown since fstat: one more byte means
		 * it is now over the cap.  Never trust st_size alone. */
		ssize_t more = hs_read_full(fd, &extra, 1);
		if (more != 0) {
			hs_wipe(buf, (size_t)n);
			hs_wipe(&extra, sizeof extra);
			return more < 0 ? (int)more : -HS_E_TOOBIG;
		}
	}
	buf[n] = '\0';
	*len = (size_t)n;
	if (st_out)
		*st_out = *st;
	return 0;
}

/* The cap a read into buf, bufsize bytes, may use: the content plus its
 * NUL must fit, and the caller's cap must leave room for that. */
static int read_cap(const struct hs_file_expect *ex, const char *buf, size_t bufsize,
		    const size_t *len, size_t *cap)
{
	if (!buf || !len || bufsize < 1 || !ex)
		return -EINVAL;
	*cap = ex->max_size ? ex->max_size : bufsize - 1;
	if (*cap > bufsize - 1)
		return -EINVAL;
	return 0;
}

int hs_fileio_read_trusted_at(int dirfd, const char *name, const struct hs_file_expect *ex,
		       char *buf, size_t bufsize, size_t *len, struct stat *st_out)
{
	struct stat st;
	size_t cap;
	int r = read_cap(ex, buf, bufsize, len, &cap);

	if (r < 0)
		return r;
	return read_checked(open_trusted(dirfd, name, NULL, ex, &st), &st, buf, cap, len, st_out);
}

int hs_fileio_read_trusted_path(const char *path, const struct hs_file_expect *ex,
			 char *buf, size_t bufsize, size_t *len, struct stat *st_out)
{
	struct stat st;
	size_t cap;
	int r = read_cap(ex, buf, bufsize, len, &cap);

	if (r < 0)
		return r;
	if (!path || path[0] != '/')
		return -EINVAL;
	return read_checked(open_trusted(AT_FDCWD, NULL, path, ex, &st), &st, buf, cap, len,
			    st_out);
}

int hs_fileio_read_alloc_at(int dirfd, const char *name, const struct hs_file_expect *ex,
			  char **data, size_t *len, struct stat *st_out)
{
	_cleanup_close_ int fd = -1;
	_cleanup_secret_buf_ struct hs_secret_buf buf = { NULL, 0 };
	struct stat st;
	size_t cap, used = 0;

	if (!data || !len || !ex)
		return -EINVAL;
	/* "no cap" still has to fit in memory and in ssize_t */
	cap = ex->max_size ? ex->max_size : (size_t)SSIZE_MAX - 2;
	if (cap > (size_t)SSIZE_MAX - 2)
		cap = (size_t)SSIZE_MAX - 2;

	fd = open_trusted(dirfd, name, NULL, ex, &st);
	if (fd < 0)
		return fd;
	if ((uintmax_t)st.st_size > (uintmax_t)cap)
		return -HS_E_TOOBIG;

	/* room for the expected content, one byte to notice growth, and
	 * the NUL; files in /proc report size 0, so start somewhere sane */
	buf.size = (size_t)st.st_size + 2;
	if (buf.size < 4096)
		buf.size = 4096;
	if (buf.size > cap + 2)
		buf.size = cap + 2;
	buf.p = malloc(buf.size);
	if (!buf.p)
		return -ENOMEM;

	for (;;) {
		ssize_t n = hs_read_full(fd, buf.p + used, buf.size - 1 - used);
		if (n < 0)
			return (int)n;
		used += (size_t)n;
		if (used > cap)
			return -HS_E_TOOBIG;
		if (used < buf.size - 1)
			break;  /* short read: end of file */

		/* The buffer is full: the file grew (or lied about its
		 * size).  Grow up to cap + 1 bytes of content.  The old
		 * buffer is wiped, not realloc'd, because global files such
		 * as /etc/shadow hold hashes. */
		size_t next = buf.size > (SIZE_MAX - 2) / 2 ? SIZE_MAX : buf.size * 2;
		if (next > cap + 2)
			next = cap + 2;
		struct hs_secret_buf bigger = { malloc(next), next };
		if (!bigger.p)
			return -ENOMEM;
		memcpy(bigger.p, buf.p, used);
		hs_secret_buf_freep(&buf);
		buf = bigger;
	}
	buf.p[used] = '\0';
	*data = TAKE_PTR(buf.p);
	*len = used;
	if (st_out)
		*st_out = st;
	return 0;
}

int hs_fileio_open_dir_at(int dirfd, const char *name, struct stat *st_out)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!hs_fileio_is_single_component(name))
		return -EINVAL;
	/* O_DIRECTORY never opens a FIFO or device; O_NOFOLLOW together
	 * with it makes Linux report a symlink as ENOTDIR, which
	 * classify_open_error tells apart. */
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return classify_open_error(dirfd, name, errno, true);
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -HS_E_NOTDIR;
	if (st_out)
		*st_out = st;
	return TAKE_FD(fd);
}

int hs_fileio_read_alloc_path(const char *path, const struct hs_file_expect *ex,
                            char **data, size_t *len)
{
	_cleanup_close_ int dirfd = -1;
	const char *base;

	if (!data || !len || !ex)
		return -EINVAL;
	dirfd = hs_fileio_open_parent(path, &base);
	if (dirfd < 0)
		return dirfd;
	return hs_fileio_read_alloc_at(dirfd, base, ex, data, len, NULL);
}

DIR *hs_fileio_opendir_at(int dirfd)
{
	_cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (d)
		fd = -1;        /* d owns it now */
	return d;
}

int hs_fileio_unlink_matching(int dirfd, bool (*match)(const char *name, void *ctx), void *ctx)
{
	DIR *d = hs_fileio_opendir_at(dirfd);
	struct dirent *de;
	int removed = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL)
		if (match(de->d_name, ctx) && unlinkat(dirfd, de->d_name, 0) == 0)
			removed++;
	closedir(d);
	return removed;
}

/* The mappings of hs_fileio_map_path.  Our writers replace the global
 * files by rename, never in place, but a program that ignores our locks
 * (": > /etc/group", an editor saving in place) may cut one short under
 * us, and a mapped page past the new end raises SIGBUS when touched.  The
 * handler puts zero pages in place of the whole mapping and marks it torn:
 * the access goes on, the loader refuses a torn mapping, and the commit
 * refuses a file whose identity changed since it was mapped (the zeros
 * are never written).  The kernel's own reads of such a page (writev)
 * fail with EFAULT, without a signal. */
#define MAP_GUARDS 32
static struct map_guard {
	uintptr_t start, end;           /* whole pages */
	volatile sig_atomic_t used, torn;
} guards[MAP_GUARDS];
static struct sigaction prior_bus;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	(void)uctx;
	for (size_t i = 0; si->si_code > 0 && i < MAP_GUARDS; i++) {
		struct map_guard *g = &guards[i];

		if (!g->used || a < g->start || a >= g->end)
			continue;
		if (mmap((void *)g->start, g->end - g->start, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		g->torn = 1;
		errno = saved;
		return;         /* the access is made again, on a zero page */
	}
	/* not ours: what it would have been (the fault comes again; a sent
	 * signal is sent again) */
	sigaction(sig, &prior_bus, NULL);
	if (si->si_code <= 0)
		raise(sig);
	errno = saved;
}

static struct map_guard *guard_of(const char *data)
{
	for (size_t i = 0; data && i < MAP_GUARDS; i++)
		if (guards[i].used && guards[i].start == (uintptr_t)data)
			return &guards[i];
	return NULL;
}

static int guard_add(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO }, prior;

	/* at every map: whoever set another handler meanwhile is the one
	 * a SIGBUS that is not ours goes to */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &prior) < 0)
		return -errno;
	if (!(prior.sa_flags & SA_SIGINFO) || prior.sa_sigaction != on_sigbus)
		prior_bus = prior;
	for (size_t i = 0; i < MAP_GUARDS; i++) {
		struct map_guard *g = &guards[i];

		if (g->used)
			continue;
		g->torn = 0;
		g->start = (uintptr_t)p;
		g->end = (uintptr_t)p + (len + page - 1) / page * page;
		/* the handler must not see used before start and end */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		g->used = 1;
		return 0;
	}
	return -ENOMEM;
}

int hs_fileio_map_path(const char *path, const struct hs_file_expect *ex, const char **data,
                     size_t *len, struct stat *st_out)
{
	_cleanup_close_ int dirfd = -1;
	const char *base;

	dirfd = hs_fileio_open_parent(path, &base);
	if (dirfd < 0)
		return dirfd;
	return hs_fileio_map_at(dirfd, base, ex, data, len, st_out);
}

int hs_fileio_map_at(int dirfd, const char *name, const struct hs_file_expect *ex,
		     const char **data, size_t *len, struct stat *st_out)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	void *p;
	int r;

	if (!data || !len || !ex)
		return -EINVAL;
	fd = open_trusted(dirfd, name, NULL, ex, &st);
	if (fd < 0)
		return fd;
	if (st_out)
		*st_out = st;
	*len = (size_t)st.st_size;   /* within ex->max_size: check_opened */
	if (*len == 0) {
		*data = "";
		return 0;
	}
	/* every caller reads all of it: its pages mapped now, not a fault
	 * at a time */
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r = guard_add(p, *len);
	if (r < 0) {
		munmap(p, *len);
		return r;
	}
	*data = p;
	return 0;
}

bool hs_fileio_map_torn(const char *data)
{
	const struct map_guard *g = guard_of(data);

	return g && g->torn;
}

void hs_fileio_unmap(const char *data, size_t len)
{
	struct map_guard *g = guard_of(data);

	if (!data || !len)
		return;
	if (g)
		g->used = 0;
	munmap((void *)data, len);
}
