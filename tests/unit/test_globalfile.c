/* Tests for lib/etc/globalfile.c: the /etc/.pwd.lock + FILE.lock protocol
 * (contention between processes, stale locks, interplay with glibc's
 * lckpwdf() and classic fcntl locks), atomic replacement with backup,
 * full-disk and file-size-limit failures, cache flushing, line iteration
 * and growable buffers.  Everything runs in temporary directories; the
 * lckpwdf() test bind-mounts a temporary file over /etc/.pwd.lock inside a
 * private mount namespace of a child and never touches the host's file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <shadow.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "globalfile.h"
#include "util.h"
#include "test_helpers.h"

/* snprintf into a path buffer; a truncated path would test the wrong file */
#define PATHF(buf, ...) do { \
		int n_ = snprintf((buf), sizeof(buf), __VA_ARGS__); \
		if (n_ < 0 || (size_t)n_ >= sizeof(buf)) \
			abort(); \
	} while (0)

/* in globalfile.c, deliberately not in the header */
void hs_flush_caches_with(const char *nscd, const char *sss_cache, const char *db);

struct fixture {
	char dir[64];
	char pwdlock[PATH_MAX];
	char passwd[PATH_MAX];
	char group[PATH_MAX];
	char passwd_lock[PATH_MAX];
	char group_lock[PATH_MAX];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/hs-test-globalfile.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	PATHF(f->pwdlock, "%s/.pwd.lock", f->dir);
	PATHF(f->passwd, "%s/passwd", f->dir);
	PATHF(f->group, "%s/group", f->dir);
	PATHF(f->passwd_lock, "%s/passwd.lock", f->dir);
	PATHF(f->group_lock, "%s/group.lock", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree_path(f->dir);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(hs_write_full(fd, data, len), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static char *slurp_path(const char *path, size_t *len)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	ssize_t n = hs_read_full(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Is anyone holding a lock on path that conflicts with a write lock?
 * Asked from a fresh open file description with F_OFD_GETLK. */
static bool pwd_lock_taken(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_OFD_GETLK, &fl), 0);
	close(fd);
	return fl.l_type != F_UNLCK;
}

static int count_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sync_read(int fd)
{
	char c;

	assert_int_equal(read(fd, &c, 1), 1);
}

static void sync_write(int fd)
{
	assert_int_equal(write(fd, "x", 1), 1);
}

/* ---- locking ---------------------------------------------------------- */

static void test_lock_basic(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd, f->group };
	struct hs_locks l = HS_LOCKS_INIT;
	const char *failed = (const char *)1;
	struct stat st;
	char pidfile[PATH_MAX];

	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 5000, &failed), 0);
	assert_null(failed);
	assert_true(l.pwd_lock_fd > 2);
	assert_int_equal(l.n, 2);
	assert_true(pwd_lock_taken(f->pwdlock));

	/* .pwd.lock created 0600, a regular file */
	assert_int_equal(lstat(f->pwdlock, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);

	/* FILE.lock holds "PID\0", FILE.PID is gone */
	size_t len;
	char *c = slurp_path(f->passwd_lock, &len);
	assert_non_null(c);
	char want[32];
	int wl = snprintf(want, sizeof want, "%ld", (long)getpid());
	assert_int_equal(len, (size_t)wl + 1);
	assert_memory_equal(c, want, (size_t)wl + 1);
	assert_int_equal(lstat(f->passwd_lock, &st), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(exists(f->group_lock));
	PATHF(pidfile, "%s.%ld", f->passwd, (long)getpid());
	assert_false(exists(pidfile));
	PATHF(pidfile, "%s.%ld", f->group, (long)getpid());
	assert_false(exists(pidfile));

	hs_globalfile_unlock(&l);
	assert_false(exists(f->passwd_lock));
	assert_false(exists(f->group_lock));
	assert_false(pwd_lock_taken(f->pwdlock));
	assert_int_equal(l.n, 0);
	assert_int_equal(l.pwd_lock_fd, -1);
	/* .pwd.lock itself stays, like lckpwdf leaves it */
	assert_true(exists(f->pwdlock));

	/* release twice and on a zeroed struct is harmless (fd 0 untouched) */
	hs_globalfile_unlock(&l);
	struct hs_locks z;
	memset(&z, 0, sizeof z);
	hs_globalfile_unlock(&z);
	assert_true(fcntl(0, F_GETFD) >= 0 || errno != EBADF);

	/* no files: only .pwd.lock */
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 1000, NULL), 0);
	assert_true(pwd_lock_taken(f->pwdlock));
	hs_globalfile_unlock(&l);
	assert_false(pwd_lock_taken(f->pwdlock));

	/* too many files */
	const char *many[HS_LOCK_MAX_FILES + 1];
	for (size_t i = 0; i < HS_ARRAY_SIZE(many); i++)
		many[i] = f->passwd;
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, many, HS_ARRAY_SIZE(many), 1000, NULL), -EINVAL);
	assert_false(pwd_lock_taken(f->pwdlock));
}

static void test_lock_pwd_lock_hostile(void **state)
{
	struct fixture *f = *state;
	struct hs_locks l = HS_LOCKS_INIT;
	const char *failed = NULL;

	/* a symlink at .pwd.lock is not followed */
	assert_int_equal(symlink(f->passwd, f->pwdlock), 0);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 1000, &failed), -HS_E_SYMLINK);
	assert_ptr_equal(failed, f->pwdlock);
	assert_false(exists(f->passwd));
	unlink(f->pwdlock);

	/* a FIFO does not block */
	assert_int_equal(mkfifo(f->pwdlock, 0600), 0);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 1000, &failed), -HS_E_NOTREG);
	unlink(f->pwdlock);

	/* missing directory */
	char bad[PATH_MAX];
	PATHF(bad, "%s/nodir/.pwd.lock", f->dir);
	assert_int_equal(hs_globalfile_lock(&l, bad, NULL, 0, 1000, &failed), -ENOENT);
	assert_int_equal(l.pwd_lock_fd, -1);
}

static void test_lock_contention(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd };
	int to_child[2], to_parent[2];

	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct hs_locks cl = HS_LOCKS_INIT;
		if (hs_globalfile_lock(&cl, f->pwdlock, files, 1, 5000, NULL) != 0)
			_exit(1);
		sync_write(to_parent[1]);
		sync_read(to_child[0]);
		hs_globalfile_unlock(&cl);
		sync_write(to_parent[1]);
		_exit(0);
	}
	sync_read(to_parent[0]);

	struct hs_locks l = HS_LOCKS_INIT;
	const char *failed = NULL;
	double t0 = now_s();
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 200, &failed), -HS_E_TIMEOUT);
	double took = now_s() - t0;
	assert_true(took >= 0.19);
	assert_true(took < 2.0);
	assert_ptr_equal(failed, f->pwdlock);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.pwd_lock_fd, -1);
	/* the holder's lock is intact */
	assert_true(exists(f->passwd_lock));

	/* timeout 0: one attempt only */
	t0 = now_s();
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 0, NULL), -HS_E_TIMEOUT);
	assert_true(now_s() - t0 < 0.5);

	/* released while we wait: we get it */
	sync_write(to_child[1]);
	t0 = now_s();
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 10000, &failed), 0);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(wait_status(pid), 0);
	hs_globalfile_unlock(&l);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* The waiter starts first and gets the lock as soon as it is released. */
static void test_lock_waits_for_release(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd, f->group };
	struct hs_locks l = HS_LOCKS_INIT;
	int to_parent[2];

	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 1000, NULL), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct hs_locks cl = HS_LOCKS_INIT;
		/* an OFD lock belongs to the open file description, which
		 * fork() shares: drop our copy or it keeps the lock alive */
		close(l.pwd_lock_fd);
		sync_write(to_parent[1]);
		int r = hs_globalfile_lock(&cl, f->pwdlock, files, 2, 10000, NULL);
		if (r != 0)
			_exit(1);
		/* the lock files now carry the child's PID */
		char want[32];
		PATHF(want, "%ld", (long)getpid());
		char *c = slurp_path(f->group_lock, NULL);
		if (!c || strcmp(c, want) != 0)
			_exit(2);
		hs_globalfile_unlock(&cl);
		_exit(0);
	}
	sync_read(to_parent[0]);
	usleep(300 * 1000);
	hs_globalfile_unlock(&l);
	assert_int_equal(wait_status(pid), 0);
	assert_false(exists(f->passwd_lock));
	assert_false(exists(f->group_lock));
	close(to_parent[0]);
	close(to_parent[1]);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork_child();

	if (pid == 0)
		_exit(0);
	assert_int_equal(wait_status(pid), 0);
	/* reaped: kill(pid, 0) now fails with ESRCH (unless reused, which a
	 * freshly reaped PID practically is not) */
	assert_int_equal(kill(pid, 0), -1);
	return pid;
}

static void test_lock_stale_broken(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd };
	struct hs_locks l = HS_LOCKS_INIT;
	char buf[32];

	pid_t dead = dead_pid();
	int n = snprintf(buf, sizeof buf, "%ld", (long)dead);
	write_file(f->passwd_lock, buf, (size_t)n + 1, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 2000, NULL), 0);
	n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	assert_memory_equal(slurp_path(f->passwd_lock, NULL), buf, (size_t)n + 1);
	hs_globalfile_unlock(&l);
	assert_false(exists(f->passwd_lock));

	/* an older writer's "PID\n" form is read too */
	n = snprintf(buf, sizeof buf, "%ld\n", (long)dead);
	write_file(f->passwd_lock, buf, (size_t)n, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 2000, NULL), 0);
	hs_globalfile_unlock(&l);

	/* a leftover FILE.lock carrying our own PID is stale (we do not
	 * hold it: a dead process had our PID) */
	n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	write_file(f->passwd_lock, buf, (size_t)n + 1, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 2000, NULL), 0);
	hs_globalfile_unlock(&l);

	/* a leftover FILE.PID of our own PID does not stop the lock (the
	 * one-step lock makes no FILE.PID; the recovery's sweep removes
	 * those of dead processes) */
	char pidfile[PATH_MAX];
	PATHF(pidfile, "%s.%ld", f->passwd, (long)getpid());
	write_file(pidfile, "junk", 4, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 2000, NULL), 0);
	n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	assert_memory_equal(slurp_path(f->passwd_lock, NULL), buf, (size_t)n + 1);
	hs_globalfile_unlock(&l);
}

/* Files outside .pwd.lock's directory get shadow-utils' own protocol
 * (FILE.PID linked to FILE.lock), as every file does where the file
 * system has no O_TMPFILE: a dead holder's lock is broken, a leftover
 * FILE.PID of our own PID removed, and no FILE.PID is left. */
static void test_lock_classic_protocol(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd };
	struct hs_locks l = HS_LOCKS_INIT;
	char pwdlock[PATH_MAX], pidfile[PATH_MAX], buf[32];
	int n;

	PATHF(pwdlock, "%s/locks", f->dir);
	assert_int_equal(mkdir(pwdlock, 0700), 0);
	PATHF(pwdlock, "%s/locks/.pwd.lock", f->dir);
	n = snprintf(buf, sizeof buf, "%ld", (long)dead_pid());
	write_file(f->passwd_lock, buf, (size_t)n + 1, 0600);
	PATHF(pidfile, "%s.%ld", f->passwd, (long)getpid());
	write_file(pidfile, "junk", 4, 0600);
	assert_int_equal(hs_globalfile_lock(&l, pwdlock, files, 1, 2000, NULL), 0);
	assert_false(exists(pidfile));
	n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
	assert_memory_equal(slurp_path(f->passwd_lock, NULL), buf, (size_t)n + 1);
	hs_globalfile_unlock(&l);
	assert_false(exists(f->passwd_lock));
}

/* Where the one-step FILE.lock cannot name its file (here linkat fails
 * with EPERM, as without CAP_DAC_READ_SEARCH on an old kernel with no
 * /proc), the classic FILE.PID and link() take the lock instead of the
 * tool failing. */
static void test_lock_falls_back_when_linkat_fails(void **state)
{
	struct fixture *f = *state;
#ifndef SYS_link
	(void)f;
	skip();     /* link() is linkat here: the classic way would fail too */
#else
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter prog[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_linkat, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog fprog = { .len = 4, .filter = prog };
		const char *files[] = { f->passwd };
		struct hs_locks l = HS_LOCKS_INIT;
		char buf[32], *c;
		int n;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
			_exit(2);
		if (hs_globalfile_lock(&l, f->pwdlock, files, 1, 2000, NULL) != 0)
			_exit(3);
		n = snprintf(buf, sizeof buf, "%ld", (long)getpid());
		c = slurp_path(f->passwd_lock, NULL);
		if (!c || memcmp(c, buf, (size_t)n + 1) != 0)
			_exit(4);
		hs_globalfile_unlock(&l);
		_exit(exists(f->passwd_lock) ? 5 : 0);
	}
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

static void test_lock_live_holder_and_cleanup(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd, f->group };
	struct hs_locks l = HS_LOCKS_INIT;
	const char *failed = NULL;
	char buf[32];
	int to_child[2];

	/* a live process (no .pwd.lock, only group.lock: e.g. a crashed-in-
	 * the-middle tool that is still running) */
	assert_int_equal(pipe(to_child), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		sync_read(to_child[0]);
		_exit(0);
	}
	int n = snprintf(buf, sizeof buf, "%ld", (long)pid);
	write_file(f->group_lock, buf, (size_t)n + 1, 0600);

	double t0 = now_s();
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 200, &failed), -HS_E_TIMEOUT);
	assert_true(now_s() - t0 >= 0.19);
	assert_ptr_equal(failed, f->group);
	/* nothing held after the failure: passwd.lock was taken and is
	 * gone again, .pwd.lock is free, the live holder's lock intact */
	assert_false(exists(f->passwd_lock));
	assert_false(pwd_lock_taken(f->pwdlock));
	assert_memory_equal(slurp_path(f->group_lock, NULL), buf, (size_t)n + 1);
	assert_int_equal(count_dir_entries(f->dir), 2);   /* .pwd.lock, group.lock */

	/* the holder dies: its lock is now stale and broken */
	sync_write(to_child[1]);
	assert_int_equal(wait_status(pid), 0);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 2000, &failed), 0);
	hs_globalfile_unlock(&l);

	/* garbage in FILE.lock counts as held (as in shadow-utils) */
	write_file(f->group_lock, "garbage", 7, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 200, &failed), -HS_E_TIMEOUT);
	assert_ptr_equal(failed, f->group);
	assert_false(exists(f->passwd_lock));
	write_file(f->group_lock, "", 0, 0600);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 2, 0, &failed), -HS_E_TIMEOUT);
	unlink(f->group_lock);

	/* a lock file in a missing directory fails at once, not after the
	 * timeout */
	char bad[PATH_MAX];
	PATHF(bad, "%s/nodir/passwd", f->dir);
	const char *badfiles[] = { f->passwd, bad };
	t0 = now_s();
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, badfiles, 2, 5000, &failed), -ENOENT);
	assert_true(now_s() - t0 < 1.0);
	assert_ptr_equal(failed, bad);
	assert_false(exists(f->passwd_lock));
	assert_false(pwd_lock_taken(f->pwdlock));
	close(to_child[0]);
	close(to_child[1]);
}

/* Our OFD lock and a classic POSIX (per-process) fcntl lock, as
 * lckpwdf() and systemd-sysusers take it, exclude each other. */
static void test_lock_vs_classic_fcntl(void **state)
{
	struct fixture *f = *state;
	struct hs_locks l = HS_LOCKS_INIT;
	int to_child[2], to_parent[2];

	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);

	/* we hold it: the classic lock fails */
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 1000, NULL), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		close(l.pwd_lock_fd);   /* see test_lock_waits_for_release */
		int fd = open(f->pwdlock, O_WRONLY | O_CLOEXEC);
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		if (fd < 0)
			_exit(2);
		if (fcntl(fd, F_SETLK, &fl) == 0)
			_exit(1);
		/* now wait for the release and take it */
		sync_write(to_parent[1]);
		if (fcntl(fd, F_SETLKW, &fl) != 0)
			_exit(3);
		sync_write(to_parent[1]);
		sync_read(to_child[0]);
		_exit(0);
	}
	sync_read(to_parent[0]);
	/* another fd of the same file closed in our process must not drop
	 * our lock (it would with a classic POSIX lock) */
	int other = open(f->pwdlock, O_RDONLY | O_CLOEXEC);
	assert_true(other >= 0);
	close(other);
	usleep(200 * 1000);
	struct pollfd pfd = { .fd = to_parent[0], .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);   /* the child is still waiting */
	hs_globalfile_unlock(&l);
	sync_read(to_parent[0]);   /* child holds the classic lock now */
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 200, NULL), -HS_E_TIMEOUT);
	sync_write(to_child[1]);
	assert_int_equal(wait_status(pid), 0);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, NULL, 0, 2000, NULL), 0);
	hs_globalfile_unlock(&l);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* Child: private mount namespace with our temp file bind-mounted over
 * /etc/.pwd.lock, then glibc's lckpwdf().  Exit codes: 0 ok, 77 cannot
 * set up the namespace (test skipped), others = failures. */
static int lckpwdf_child(const char *tmp_lock, int rfd, int wfd)
{
	struct stat want, got;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount(tmp_lock, "/etc/.pwd.lock", NULL, MS_BIND, NULL) < 0)
		return 77;
	/* never lock the host's real file: make sure the bind mount is what
	 * lckpwdf() will open */
	if (stat(tmp_lock, &want) < 0 || stat("/etc/.pwd.lock", &got) < 0 ||
	    want.st_dev != got.st_dev || want.st_ino != got.st_ino)
		return 76;
	sync_write(wfd);

	/* phase 1: we take lckpwdf(), the parent must time out */
	if (lckpwdf() != 0)
		return 10;
	sync_write(wfd);
	sync_read(rfd);
	if (ulckpwdf() != 0)
		return 11;
	sync_write(wfd);

	/* phase 2: the parent holds our lock.  lckpwdf() would give up only
	 * after glibc's fixed 15 s, so ask what it asks, without waiting: a
	 * whole-file POSIX write lock on the same file (glibc's lckpwdf
	 * takes it with F_SETLKW under alarm) must be refused. */
	sync_read(rfd);
	int fd = open("/etc/.pwd.lock", O_WRONLY | O_CLOEXEC);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	if (fd < 0)
		return 13;
	if (fcntl(fd, F_SETLK, &fl) == 0 || (errno != EAGAIN && errno != EACCES))
		return 12;
	close(fd);
	sync_write(wfd);
	return 0;
}

static void test_lock_vs_lckpwdf(void **state)
{
	struct fixture *f = *state;
	const char *files[] = { f->passwd };
	struct hs_locks l = HS_LOCKS_INIT;
	int to_child[2], to_parent[2];
	char c;

	if (getuid() != 0)
		skip();
	write_file(f->pwdlock, "", 0, 0600);
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		close(to_parent[0]);
		_exit(lckpwdf_child(f->pwdlock, to_child[0], to_parent[1]));
	}
	close(to_parent[1]);
	if (read(to_parent[0], &c, 1) != 1) {
		int st = wait_status(pid);
		close(to_parent[0]);
		close(to_child[0]);
		close(to_child[1]);
		if (st == 77)
			skip();
		fail_msg("lckpwdf child failed to start: %d", st);
	}
	/* phase 1 */
	sync_read(to_parent[0]);
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 200, NULL), -HS_E_TIMEOUT);
	assert_false(exists(f->passwd_lock));
	sync_write(to_child[1]);
	sync_read(to_parent[0]);
	/* phase 2 */
	assert_int_equal(hs_globalfile_lock(&l, f->pwdlock, files, 1, 1000, NULL), 0);
	sync_write(to_child[1]);
	if (read(to_parent[0], &c, 1) != 1)
		fail_msg("lckpwdf child: %d", wait_status(pid));
	hs_globalfile_unlock(&l);
	assert_int_equal(wait_status(pid), 0);
	close(to_parent[0]);
	close(to_child[0]);
	close(to_child[1]);
}

/* ---- reading and replacing -------------------------------------------- */

static void test_global_read(void **state)
{
	struct fixture *f = *state;
	char *data = NULL;
	size_t len = 0;
	char lnk[PATH_MAX];

	write_file(f->passwd, "root:x:0:0::/root:/bin/sh\n", 26, 0644);
	assert_int_equal(hs_globalfile_read(f->passwd, &data, &len), 0);
	assert_int_equal(len, 26);
	assert_string_equal(data, "root:x:0:0::/root:/bin/sh\n");
	free(data);
	data = NULL;

	assert_int_equal(hs_globalfile_read(f->group, &data, &len), -ENOENT);
	assert_null(data);

	PATHF(lnk, "%s/link", f->dir);
	assert_int_equal(symlink(f->passwd, lnk), 0);
	assert_int_equal(hs_globalfile_read(lnk, &data, &len), -HS_E_SYMLINK);
	assert_null(data);

	write_file(f->group, "", 0, 0644);
	assert_int_equal(hs_globalfile_read(f->group, &data, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
}

static void test_global_replace(void **state)
{
	struct fixture *f = *state;
	static const char old[] = "root:x:0:0:root:/root:/bin/bash\n";
	static const char new1[] = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n";
	static const char new2[] = "root:x:0:0:root:/root:/bin/zsh\n";
	char backup[PATH_MAX];
	struct stat st;
	size_t len;

	PATHF(backup, "%s-", f->passwd);
	write_file(f->passwd, old, sizeof old - 1, 0640);
	assert_int_equal(chown(f->passwd, 12345, 54321), 0);

	assert_int_equal(hs_globalfile_replace(f->passwd, new1, sizeof new1 - 1, 0, 0, 0644), 0);
	char *c = slurp_path(f->passwd, &len);
	assert_int_equal(len, sizeof new1 - 1);
	assert_memory_equal(c, new1, len);
	assert_int_equal(lstat(f->passwd, &st), 0);
	assert_int_equal(st.st_uid, 12345);
	assert_int_equal(st.st_gid, 54321);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_nlink, 1);

	c = slurp_path(backup, &len);
	assert_non_null(c);
	assert_int_equal(len, sizeof old - 1);
	assert_memory_equal(c, old, len);
	assert_int_equal(lstat(backup, &st), 0);
	assert_int_equal(st.st_uid, 12345);
	assert_int_equal(st.st_gid, 54321);
	assert_int_equal(st.st_mode & 07777, 0640);

	/* again: the backup is now the previous version */
	assert_int_equal(hs_globalfile_replace(f->passwd, new2, sizeof new2 - 1, 0, 0, 0644), 0);
	c = slurp_path(backup, &len);
	assert_int_equal(len, sizeof new1 - 1);
	assert_memory_equal(c, new1, len);
	c = slurp_path(f->passwd, &len);
	assert_memory_equal(c, new2, len);

	/* no temporary files left behind */
	assert_int_equal(count_dir_entries(f->dir), 2);

	/* a file that does not exist yet: defaults, no backup */
	char gbackup[PATH_MAX];
	PATHF(gbackup, "%s-", f->group);
	assert_int_equal(hs_globalfile_replace(f->group, "root:x:0:\n", 10, 0, 42, 0604), 0);
	assert_int_equal(lstat(f->group, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 42);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_false(exists(gbackup));

	/* empty content is a valid file */
	assert_int_equal(hs_globalfile_replace(f->group, "", 0, 0, 0, 0644), 0);
	assert_int_equal(lstat(f->group, &st), 0);
	assert_int_equal(st.st_size, 0);
	c = slurp_path(gbackup, &len);
	assert_int_equal(len, 10);
}

static void test_global_replace_refuses_symlink(void **state)
{
	struct fixture *f = *state;
	char target[PATH_MAX];
	size_t len;
	struct stat st;

	PATHF(target, "%s/target", f->dir);
	write_file(target, "precious\n", 9, 0600);
	assert_int_equal(symlink(target, f->passwd), 0);
	assert_int_equal(hs_globalfile_replace(f->passwd, "x\n", 2, 0, 0, 0644), -HS_E_SYMLINK);
	assert_int_equal(lstat(f->passwd, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char *c = slurp_path(target, &len);
	assert_string_equal(c, "precious\n");
	unlink(f->passwd);

	/* a FIFO at the path: refused without blocking */
	assert_int_equal(mkfifo(f->passwd, 0600), 0);
	assert_int_equal(hs_globalfile_replace(f->passwd, "x\n", 2, 0, 0, 0644), -HS_E_NOTREG);
	unlink(f->passwd);

	/* a hard-linked file (link count 2) of another owner than root is
	 * refused (a user's file linked in) */
	write_file(f->passwd, "a\n", 2, 0644);
	char hard[PATH_MAX];
	PATHF(hard, "%s/hard", f->dir);
	assert_int_equal(link(f->passwd, hard), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(f->passwd, 1, (gid_t)-1), 0);
	assert_int_equal(hs_globalfile_replace(f->passwd, "x\n", 2, 0, 0, 0644), -HS_E_NLINK);
	c = slurp_path(hard, &len);
	assert_string_equal(c, "a\n");
	if (geteuid() != 0)
		return;
	/* root's is replaced: the other name (a user's link, where
	 * fs.protected_hardlinks is 0) keeps the old inode, the path gets
	 * a new one of its own */
	assert_int_equal(chown(f->passwd, 0, (gid_t)-1), 0);
	assert_int_equal(hs_globalfile_replace(f->passwd, "x\n", 2, 0, 0, 0644), 0);
	c = slurp_path(hard, &len);
	assert_string_equal(c, "a\n");
	c = slurp_path(f->passwd, &len);
	assert_string_equal(c, "x\n");
	assert_int_equal(stat(f->passwd, &st), 0);
	assert_int_equal(st.st_nlink, 1);
}

/* Child: RLIMIT_FSIZE far below the new contents. */
static int efbig_child(const char *path, const char *old, size_t oldlen)
{
	struct rlimit rl = { .rlim_cur = 4096, .rlim_max = 4096 };
	char *big = malloc(64 * 1024);

	if (!big)
		return 90;
	memset(big, 'x', 64 * 1024);
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 91;
	int r = hs_globalfile_replace(path, big, 64 * 1024, 0, 0, 0644);
	free(big);
	if (r != -EFBIG)
		return 1;
	size_t len;
	char *c = slurp_path(path, &len);
	if (!c || len != oldlen || memcmp(c, old, len) != 0)
		return 2;
	return 0;
}

static void test_global_replace_efbig(void **state)
{
	struct fixture *f = *state;
	static const char old[] = "root:x:0:0:root:/root:/bin/bash\n";

	write_file(f->passwd, old, sizeof old - 1, 0644);
	pid_t pid = fork_child();
	if (pid == 0)
		_exit(efbig_child(f->passwd, old, sizeof old - 1));
	assert_int_equal(wait_status(pid), 0);
	size_t len;
	char *c = slurp_path(f->passwd, &len);
	assert_memory_equal(c, old, sizeof old - 1);
	/* only passwd: the failed temp file was removed, and the backup is
	 * written only once the new contents are staged */
	assert_int_equal(count_dir_entries(f->dir), 1);
}

/* Child: a 64 KiB tmpfs in a private mount namespace. */
static int enospc_child(const char *mnt)
{
	char path[PATH_MAX], old[16 * 1024];
	size_t len;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("hs-test", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") < 0)
		return 77;
	PATHF(path, "%s/passwd", mnt);
	memset(old, 'o', sizeof old);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || hs_write_full(fd, old, sizeof old) < 0)
		return 90;
	close(fd);

	size_t biglen = 128 * 1024;
	char *big = malloc(biglen);
	if (!big)
		return 91;
	memset(big, 'n', biglen);
	int r = hs_globalfile_replace(path, big, biglen, 0, 0, 0644);
	free(big);
	if (r != -ENOSPC)
		return 1;
	char *c = slurp_path(path, &len);
	if (!c || len != sizeof old || memcmp(c, old, len) != 0)
		return 2;
	/* passwd plus at most its backup: no temp file left */
	DIR *d = opendir(mnt);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")))
			n++;
	if (d)
		closedir(d);
	if (n > 2)
		return 3;
	/* the backup, if written, equals the old contents */
	PATHF(path, "%s/passwd-", mnt);
	c = slurp_path(path, &len);
	if (c && (len != sizeof old || memcmp(c, old, len) != 0))
		return 4;
	return 0;
}

static void test_global_replace_enospc(void **state)
{
	struct fixture *f = *state;
	char mnt[PATH_MAX];

	if (getuid() != 0)
		skip();
	PATHF(mnt, "%s/mnt", f->dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	pid_t pid = fork_child();
	if (pid == 0)
		_exit(enospc_child(mnt));
	int st = wait_status(pid);
	if (st == 77)
		skip();
	assert_int_equal(st, 0);
	/* the mount lived only in the child's namespace */
	assert_int_equal(count_dir_entries(mnt), 0);
}

/* ---- cache flushing ---------------------------------------------------- */

/* The cache programs start with no signal blocked or ignored, although
 * the tool runs them with its signals waiting and SIGXFSZ/SIGPIPE ignored.
 * (grep reads its own status: the shell blocks everything while it waits
 * for a child.) */
static void test_flush_caches_child_signals(void **state)
{
	struct fixture *f = *state;
	char script[PATH_MAX], out[PATH_MAX], text[2 * PATH_MAX + 256];
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_xfsz, old_pipe;
	sigset_t all, saved;

	PATHF(out, "%s/sigs", f->dir);
	PATHF(script, "%s/fake-nscd", f->dir);
	int n = snprintf(text, sizeof text,
		"#!/bin/sh\nexec /bin/grep -E '^Sig(Blk|Ign):' /proc/self/status > '%s'\n", out);
	write_file(script, text, (size_t)n, 0755);
	sigfillset(&all);
	sigaction(SIGXFSZ, &ign, &old_xfsz);
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigprocmask(SIG_BLOCK, &all, &saved);
	hs_flush_caches_with(script, NULL, "passwd");
	sigprocmask(SIG_SETMASK, &saved, NULL);
	sigaction(SIGXFSZ, &old_xfsz, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	char *c = slurp_path(out, NULL);
	unsigned long long blk = 1, ignored = 1;
	assert_non_null(c);
	assert_int_equal(sscanf(c, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ignored), 2);
	assert_int_equal(blk, 0);
	/* glibc's own real-time signals (32, 33) may show as ignored */
	assert_int_equal(ignored & ((1ULL << (SIGXFSZ - 1)) | (1ULL << (SIGPIPE - 1))), 0);
}

static void test_flush_caches(void **state)
{
	struct fixture *f = *state;
	char script[PATH_MAX], out[PATH_MAX], missing[PATH_MAX];
	char text[2 * PATH_MAX + 512];

	PATHF(out, "%s/out", f->dir);
	PATHF(script, "%s/fake-cache", f->dir);
	PATHF(missing, "%s/does-not-exist", f->dir);
	/* records its arguments, its initial environment and its stdin */
	int n = snprintf(text, sizeof text,
		"#!/bin/sh\n"
		"echo \"args:$*\" >> '%s'\n"
		"/usr/bin/tr '\\0' '\\n' < /proc/$$/environ | /usr/bin/wc -l >> '%s'\n"
		"/bin/readlink /proc/$$/fd/0 >> '%s'\n"
		"echo noise\n"
		"echo noise >&2\n"
		"exit 3\n", out, out, out);
	write_file(script, text, (size_t)n, 0755);

	setenv("HS_TEST_SECRET", "leak", 1);
	hs_flush_caches_with(script, script, "passwd");
	unsetenv("HS_TEST_SECRET");
	char *c = slurp_path(out, NULL);
	assert_non_null(c);
	assert_string_equal(c, "args:-i passwd\n0\n/dev/null\nargs:-E\n0\n/dev/null\n");

	/* missing programs are skipped silently, errno untouched */
	unlink(out);
	errno = 1234;
	hs_flush_caches_with(missing, missing, "group");
	assert_int_equal(errno, 1234);
	assert_false(exists(out));

	/* a database word that looks like an option is refused */
	hs_flush_caches_with(script, script, "-x");
	hs_flush_caches_with(script, script, "");
	hs_flush_caches_with(script, script, NULL);
	assert_false(exists(out));

	/* only nscd */
	hs_flush_caches_with(script, NULL, "group");
	c = slurp_path(out, NULL);
	assert_string_equal(c, "args:-i group\n0\n/dev/null\n");

	/* the real entry point must not fail on a system without them */
	hs_globalfile_flush_caches("passwd");
	/* no child left unreaped */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* ---- line iterator and buffer ------------------------------------------ */

static void test_line_iter(void **state)
{
	struct hs_line_iter it;
	const char *line;
	size_t len;

	static const char text[] = "a:b\n\nlast";
	hs_strbuf_lines_init(&it, text, sizeof text - 1);
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 3);
	assert_memory_equal(line, "a:b", 3);
	assert_int_equal(it.lineno, 1);
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 0);
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 4);
	assert_memory_equal(line, "last", 4);
	assert_int_equal(it.lineno, 3);
	assert_false(hs_strbuf_line_next(&it, &line, &len));
	assert_false(hs_strbuf_line_next(&it, &line, &len));

	/* a final newline does not produce an extra empty line */
	hs_strbuf_lines_init(&it, "x\ny\n", 4);
	int n = 0;
	while (hs_strbuf_line_next(&it, &line, &len))
		n++;
	assert_int_equal(n, 2);

	/* empty and NULL input */
	hs_strbuf_lines_init(&it, "", 0);
	assert_false(hs_strbuf_line_next(&it, &line, &len));
	hs_strbuf_lines_init(&it, NULL, 0);
	assert_false(hs_strbuf_line_next(&it, &line, &len));

	/* NUL bytes are ordinary bytes; len bounds everything */
	static const char nul[] = "a\0b\nc\0";
	hs_strbuf_lines_init(&it, nul, 5);   /* "a\0b\nc" */
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 3);
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 1);
	assert_memory_equal(line, "c", 1);
	assert_false(hs_strbuf_line_next(&it, &line, &len));

	/* a lone newline: one empty line */
	hs_strbuf_lines_init(&it, "\n", 1);
	assert_true(hs_strbuf_line_next(&it, &line, &len));
	assert_int_equal(len, 0);
	assert_false(hs_strbuf_line_next(&it, &line, &len));
}

static void test_buf(void **state)
{
	struct hs_buf b = { 0 };

	assert_int_equal(hs_strbuf_append(&b, "", 0), 0);
	assert_int_equal(hs_strbuf_append(&b, "abc", 3), 0);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.data, "abc");
	assert_true(b.cap > b.len);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(hs_strbuf_append(&b, "0123456789", 10), 0);
	assert_int_equal(b.len, 3 + 100000);
	assert_true(b.cap > b.len);
	assert_int_equal(b.data[b.len], '\0');
	assert_memory_equal(b.data + 3 + 99990, "0123456789", 10);
	/* embedded NULs are kept */
	assert_int_equal(hs_strbuf_append(&b, "x\0y", 3), 0);
	assert_int_equal(b.len, 100006);
	assert_memory_equal(b.data + 100003, "x\0y", 3);
	/* absurd sizes fail cleanly */
	assert_int_equal(hs_strbuf_append(&b, "x", SIZE_MAX), -ENOMEM);
	assert_int_equal(hs_strbuf_append(&b, NULL, 1), -EINVAL);
	assert_int_equal(b.len, 100006);
	hs_strbuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	hs_strbuf_free(&b);
	hs_strbuf_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lock_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_pwd_lock_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_contention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_waits_for_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_stale_broken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_classic_protocol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_falls_back_when_linkat_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lock_live_holder_and_cleanup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_vs_classic_fcntl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_vs_lckpwdf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_replace_refuses_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_replace_efbig, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_replace_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_caches_child_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_caches, setup, teardown),
		cmocka_unit_test(test_line_iter),
		cmocka_unit_test(test_buf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
