/* Helpers shared by the cmocka unit tests: a pair of mkdtemp directories
 * under /tmp as the test fixture, planting and reading files, counting
 * what a directory holds, and waiting for forked children.  Include after
 * <cmocka.h>.  Everything is static inline so a test that uses only part
 * of it still compiles with -Werror. */
#ifndef HS_TEST_HELPERS_H
#define HS_TEST_HELPERS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "walk.h"
#include "util.h"

/* Tests of running out of memory skip under ASan: its allocator aborts
 * instead of returning NULL, and its shadow memory makes an address-space
 * limit meaningless.  The plain unit run covers them. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Guard for anything that could block (a FIFO opened without
 * O_NONBLOCK): SIGALRM's default action kills the test, which then
 * fails instead of hanging until the meson timeout. */
#define GUARD_START() alarm(10)
#define GUARD_END() alarm(0)

/* The fixture: a directory the test works in, and a second one outside
 * it for symlink and hard-link targets. */
struct tmp_dirs {
	char path[64];
	int dfd;
	char outside[64];
	int ofd;
};

/* mkdtemp /tmp/hs-test-PROGRAM-XXXXXX into buf and open it. */
static inline int mkdtemp_fd(char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/hs-test-%s-XXXXXX", program_invocation_short_name);
	if (!mkdtemp(buf))
		return -1;
	return open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* cmocka setup and teardown functions for the struct tmp_dirs fixture. */
static inline int tmp_dirs_setup(void **state)
{
	struct tmp_dirs *f = calloc(1, sizeof *f);

	assert_non_null(f);
	f->dfd = mkdtemp_fd(f->path, sizeof f->path);
	assert_true(f->dfd >= 0);
	f->ofd = mkdtemp_fd(f->outside, sizeof f->outside);
	assert_true(f->ofd >= 0);
	*state = f;
	return 0;
}

/* Removes a directory under /tmp with the library's own no-follow tree
 * removal (itself under test in test_fileio). */
static inline void rm_rf(const char *path)
{
	int tmpfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(tmpfd >= 0);
	assert_int_equal(hs_walk_remove_tree_at(tmpfd, path + strlen("/tmp/")), 0);
	close(tmpfd);
}

static inline int tmp_dirs_teardown(void **state)
{
	struct tmp_dirs *f = *state;

	close(f->dfd);
	close(f->ofd);
	rm_rf(f->path);
	rm_rf(f->outside);
	free(f);
	return 0;
}

static inline int remove_entry(const char *path, const struct stat *st, int flag,
			       struct FTW *ftw)
{
	return remove(path);
}

/* Best-effort removal of a scratch tree by path, for teardowns that must
 * not fail (rm_rf() asserts, and is the code under test in test_fileio). */
static inline void remove_tree_path(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Plant dfd/name (replacing a file already there) with exact content,
 * owner and mode. */
static inline void put_file(int dfd, const char *name, const char *content, size_t len,
			    uid_t uid, gid_t gid, mode_t mode)
{
	int fd;

	(void)unlinkat(dfd, name, 0);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(hs_write_full(fd, content, len), 0);
	assert_int_equal(fchown(fd, uid, gid), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static inline void put_str(int dfd, const char *name, const char *content, uid_t uid,
			   gid_t gid, mode_t mode)
{
	put_file(dfd, name, content, strlen(content), uid, gid, mode);
}

/* An etc/ below the fixture with the three files a set of global files
 * needs (lib/accountset's tests and its users' point hs_accountset_use_root
 * at f->path). */
static inline void put_etc_files(int dfd, const char *passwd, const char *group,
				 const char *gshadow)
{
	assert_int_equal(mkdirat(dfd, "etc", 0755), 0);
	put_str(dfd, "etc/passwd", passwd, getuid(), getgid(), 0644);
	put_str(dfd, "etc/group", group, getuid(), getgid(), 0644);
	put_str(dfd, "etc/gshadow", gshadow, getuid(), getgid(), 0640);
}

/* The whole content of dfd/name as a string (static buffer), NULL if it
 * cannot be opened without following a symlink or read. */
static inline const char *slurp(int dfd, const char *name)
{
	static char buf[8192];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = hs_read_full(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* Number of entries (excluding . and ..) in dfd; names starting with
 * '.' or ':' (temporary files, reserved names) are also counted in
 * *hidden to catch leftovers. */
static inline int count_entries(int dfd, int *hidden)
{
	int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fdopendir(dup);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	rewinddir(d);
	*hidden = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		if (de->d_name[0] == '.' || de->d_name[0] == ':')
			(*hidden)++;
	}
	closedir(d);
	return n;
}

/* dfd holds exactly expected entries, none of them a leftover. */
static inline void assert_entries(int dfd, int expected)
{
	int hidden;

	assert_int_equal(count_entries(dfd, &hidden), expected);
	assert_int_equal(hidden, 0);
}

/* Make a directory chain too deep for the tree remover removable: walk
 * depth levels of "d" below dfd/top and move what hangs below there up
 * to dfd/lower, leaving two chains of about half the depth. */
static inline void cut_chain(int dfd, const char *top, int depth, const char *lower)
{
	int fd = openat(dfd, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	for (int i = 0; i < depth; i++) {
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	assert_int_equal(renameat(fd, "d", dfd, lower), 0);
	close(fd);
}

/* Exit status of the child pid, or 1000 + the signal that killed it (so
 * a killed child never looks like a clean exit). */
static inline int wait_status(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* fork() for a test that talks to its child: the child dies with the
 * parent and never outlives a failed test by more than a minute (a failed
 * assertion in the parent leaves its children waiting on pipes).  Returns
 * 0 in the child, the child's pid in the parent. */
static inline pid_t fork_child(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
	}
	return pid;
}

/* Run fn(arg) in a forked child; its exit status as wait_status(). */
static inline int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	return wait_status(pid);
}

/* in_child for a child that caps its address space (RLIMIT_AS), which
 * ASan's shadow memory cannot live under: the test is skipped there (a
 * skip is a longjmp, so call it before the test allocates anything). */
static inline int in_child_capped(int (*fn)(void *), void *arg)
{
#ifdef UNDER_ASAN
	skip();
#endif
	return in_child(fn, arg);
}

/* Take the whole address space: a soft RLIMIT_AS at what the process
 * holds now (the hard one stays, for fill_free), then the heap filled;
 * the blocks in a list for fill_free. */
static inline void **fill_address_space(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	bool ok = f && fscanf(f, "%lu", &pages) == 1;
	struct rlimit as;
	void **head = NULL, **b;

	if (f)
		fclose(f);
	if (!ok || getrlimit(RLIMIT_AS, &as) < 0)
		return NULL;
	as.rlim_cur = pages * (rlim_t)sysconf(_SC_PAGESIZE);
	if (setrlimit(RLIMIT_AS, &as) < 0)
		return NULL;
	while ((b = malloc(64))) {
		*b = head;
		head = b;
	}
	return head;
}

static inline void fill_free(void **head)
{
	struct rlimit as;

	if (getrlimit(RLIMIT_AS, &as) == 0) {
		as.rlim_cur = as.rlim_max;
		setrlimit(RLIMIT_AS, &as);
	}
	while (head) {
		void **next = *head;

		free(head);
		head = next;
	}
}

#endif
