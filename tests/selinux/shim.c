/* A stand-in for a kernel that runs SELinux, for the system tests
 * (tests/system/test_selinux.py); preloaded through the sandbox root's
 * /etc/ld.so.preload, so the setgid programs load it too.
 *
 * It reports SELinux as enabled and enforcing, answers label lookups
 * from SHIM_DIR/file_contexts (the reference policy's with our module),
 * and appends to SHIM_DIR/log, one line per event, in order:
 *   PROG PID fscreate CONTEXT|-           a setfscreatecon request
 *   PROG PID create PATH DEV:INO CONTEXT|-  an object made, with the
 *                                           creation context in force
 *   PROG PID tmpfile FD DEV:INO CONTEXT|-   an O_TMPFILE inode
 * The test matches each object still there at the end (by inode) with
 * the context in force when it was made. */
/* open and open64 are both defined here: no redirection, no fortify */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <selinux/label.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* below /etc, which confined programs may read, like /etc/selinux */
#define SHIM_DIR "/etc/hs-selinux-shim"

static __thread char fscreate[256];
/* The log, opened before the program confines itself (Landlock) and
 * checked before each write: a program may close or reuse the fd. */
static int log_fd = -1;
static struct stat log_st;

static int log_open(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, SHIM_DIR "/log",
			      O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	int high = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 900);

	if (fd >= 0)
		close(fd);
	if (high >= 0 && fstat(high, &log_st) < 0) {
		close(high);
		high = -1;
	}
	return high;
}

__attribute__((constructor)) static void shim_init(void)
{
	log_fd = log_open();
}

static int log_get(void)
{
	struct stat st;

	if (log_fd >= 0 && fstat(log_fd, &st) == 0 && st.st_dev == log_st.st_dev &&
	    st.st_ino == log_st.st_ino)
		return log_fd;
	log_fd = log_open();
	return log_fd;
}

__attribute__((format(printf, 1, 2))) static void shim_log(const char *fmt, ...)
{
	char line[4096];
	int n, fd;
	va_list ap;

	n = snprintf(line, sizeof line, "%s %d ", program_invocation_short_name, (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof line - 1)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	fd = log_get();
	if (fd >= 0)
		(void)!write(fd, line, (size_t)n);
}

static const char *current(void)
{
	return fscreate[0] ? fscreate : "-";
}

/* Log a creation at dirfd/name (by path: the object is there now). */
static void created(int dirfd, const char *name)
{
	char dir[4096] = "", proc[64];
	struct stat st;
	ssize_t n;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (name[0] != '/') {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
		n = dirfd == AT_FDCWD ? (getcwd(dir, sizeof dir) ? (ssize_t)strlen(dir) : -1)
				      : readlink(proc, dir, sizeof dir - 1);
		if (n < 0)
			return;
		dir[n] = '\0';
	}
	shim_log("create %s%s%s %lu:%lu %s", dir, name[0] == '/' ? "" : "/", name,
		 (unsigned long)st.st_dev, (unsigned long)st.st_ino, current());
}

int is_selinux_enabled(void)
{
	return 1;
}

int security_getenforce(void)
{
	return 1;
}

/* What libselinux writes to: opening it is what a confined program
 * must still be allowed (the write itself needs a SELinux kernel). */
int setfscreatecon(const char *con)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/attr/fscreate",
			      O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		shim_log("fscreate-denied %s %s", con ? con : "-", strerror(e));
		errno = e;
		return -1;
	}
	close(fd);
	snprintf(fscreate, sizeof fscreate, "%s", con ? con : "");
	shim_log("fscreate %s", current());
	return 0;
}

struct selabel_handle *selabel_open(unsigned int backend, const struct selinux_opt *opts,
				    unsigned int nopts)
{
	typedef struct selabel_handle *(*open_fn)(unsigned int, const struct selinux_opt *,
						  unsigned int);
	open_fn real = (open_fn)dlsym(RTLD_NEXT, "selabel_open");
	const struct selinux_opt path = { SELABEL_OPT_PATH, SHIM_DIR "/file_contexts" };

	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return real(backend, &path, 1);
}

static int shim_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = (int)syscall(SYS_openat, dirfd, name, flags, mode);
	struct stat st;

	if (fd >= 0 && (flags & O_TMPFILE) == O_TMPFILE) {
		if (fstat(fd, &st) == 0)
			shim_log("tmpfile %d %lu:%lu %s", fd, (unsigned long)st.st_dev,
				 (unsigned long)st.st_ino, current());
	} else if (fd >= 0 && (flags & O_CREAT)) {
		/* O_CREAT without O_EXCL may have opened what was there */
		created(dirfd, name);
	}
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

#define SHIM_OPEN(fn, dirfd_expr, ...)                                   \
	int fn(__VA_ARGS__, int flags, ...)                              \
	{                                                                \
		va_list ap;                                              \
		mode_t mode;                                             \
		va_start(ap, flags);                                     \
		mode = mode_arg(flags, ap);                              \
		va_end(ap);                                              \
		return shim_openat(dirfd_expr, name, flags, mode);       \
	}

SHIM_OPEN(openat, dirfd, int dirfd, const char *name)
SHIM_OPEN(openat64, dirfd, int dirfd, const char *name)
SHIM_OPEN(open, AT_FDCWD, const char *name)
SHIM_OPEN(open64, AT_FDCWD, const char *name)

int mkdirat(int dirfd, const char *name, mode_t mode)
{
	int r = (int)syscall(SYS_mkdirat, dirfd, name, mode);

	if (r == 0)
		created(dirfd, name);
	return r;
}

int mkdir(const char *name, mode_t mode)
{
	return mkdirat(AT_FDCWD, name, mode);
}

int symlinkat(const char *target, int dirfd, const char *name)
{
	int r = (int)syscall(SYS_symlinkat, target, dirfd, name);

	if (r == 0)
		created(dirfd, name);
	return r;
}

char *mkdtemp(char *templ)
{
	char *(*real)(char *) = (char *(*)(char *))dlsym(RTLD_NEXT, "mkdtemp");
	char *r = real ? real(templ) : NULL;

	if (r)
		created(AT_FDCWD, r);
	return r;
}
