/* Unit tests for lib/etc/txn.c: a commit replaces every file and writes the
 * backups; each state a crash can leave (staged files without a journal,
 * a journal with some files installed, a file changed by someone else
 * after the crash) is recovered to the old or the new state; a failure
 * before the commit point changes nothing.  A real SIGKILL at every
 * system call of a commit (kill_at_every_syscall; tests/system/test_interrupt
 * for the tools), and the order of its syncs, which no kill can show
 * (test_syncs_come_in_the_order_a_power_loss_needs). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "globalfile.h"
#include "layout.h"
#include "strbuf.h"
#include "txn.h"
#include "userdir.h"
#include "test_helpers.h"

static const char *const bases[] = { "passwd", "group" };

static int setup(void **state)
{
	struct tmp_dirs *f;

	tmp_dirs_setup(state);
	f = *state;
	put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\n", getuid(), getgid(), 0644);
	put_str(f->dfd, "group", "root:x:0:\n", getuid(), getgid(), 0640);
	return 0;
}

struct two_files {
	struct iovec iov[2][2];
	struct hs_txn_file files[2];
};

static void prepare(struct two_files *t)
{
	static const char p1[] = "root:x:0:0::/root:/bin/sh\n", p2[] = "bob:x:1000:1000::/home/bob:/bin/sh\n";
	static const char g1[] = "root:x:0:\n", g2[] = "bob:x:1000:\n";

	t->iov[0][0] = (struct iovec){ .iov_base = (void *)g1, .iov_len = strlen(g1) };
	t->iov[0][1] = (struct iovec){ .iov_base = (void *)g2, .iov_len = strlen(g2) };
	t->iov[1][0] = (struct iovec){ .iov_base = (void *)p1, .iov_len = strlen(p1) };
	t->iov[1][1] = (struct iovec){ .iov_base = (void *)p2, .iov_len = strlen(p2) };
	/* write order: group, then passwd */
	t->files[0] = (struct hs_txn_file){
		.base = "group", .iov = t->iov[0], .n_iov = 2, .old_data = g1,
		.old_len = strlen(g1), .mode = 0644,
	};
	t->files[1] = (struct hs_txn_file){
		.base = "passwd", .iov = t->iov[1], .n_iov = 2, .old_data = p1,
		.old_len = strlen(p1), .mode = 0644,
	};
}

static void assert_old(int dfd)
{
	assert_string_equal(slurp(dfd, "passwd"), "root:x:0:0::/root:/bin/sh\n");
	assert_string_equal(slurp(dfd, "group"), "root:x:0:\n");
}

static void assert_new(int dfd)
{
	assert_string_equal(slurp(dfd, "passwd"),
			    "root:x:0:0::/root:/bin/sh\nbob:x:1000:1000::/home/bob:/bin/sh\n");
	assert_string_equal(slurp(dfd, "group"), "root:x:0:\nbob:x:1000:\n");
}

static void assert_clean(int dfd)
{
	struct stat st;

	assert_int_not_equal(fstatat(dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(dfd, ".passwd" HS_TXN_SUFFIX, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(dfd, ".group" HS_TXN_SUFFIX, &st, AT_SYMLINK_NOFOLLOW), 0);
}

/* hs_txn_commit, where the test does not ask which file failed. */
static int txn_commit(int dfd, const char *path, const struct hs_txn_file *files, size_t n,
		      struct hs_txn_work *work, size_t n_work, char *err, size_t err_size)
{
	return hs_txn_commit(dfd, path, files, n, work, n_work, err, err_size, NULL);
}

static void test_commit_replaces_all_and_backs_up(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	char err[256] = "";
	struct stat st;

	prepare(&t);
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err), 0);
	assert_new(f->dfd);
	assert_clean(f->dfd);
	assert_string_equal(slurp(f->dfd, "passwd-"), "root:x:0:0::/root:/bin/sh\n");
	assert_string_equal(slurp(f->dfd, "group-"), "root:x:0:\n");
	/* an existing file keeps its own mode */
	assert_int_equal(fstatat(f->dfd, "group", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* nothing left to recover */
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, err, sizeof err), 0);
}

static void test_commit_creates_missing_file(void **state)
{
	struct tmp_dirs *f = *state;
	struct iovec iov = { .iov_base = (void *)"alice:100000:65536\n", .iov_len = 19 };
	struct hs_txn_file file = {
		.base = "subuid", .iov = &iov, .n_iov = 1, .uid = getuid(), .gid = getgid(),
		.mode = 0644,
	};
	char err[256] = "";
	struct stat st;

	assert_int_equal(txn_commit(f->dfd, f->path, &file, 1, NULL, 0, err, sizeof err), 0);
	assert_string_equal(slurp(f->dfd, "subuid"), "alice:100000:65536\n");
	assert_int_equal(fstatat(f->dfd, "subuid", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* no backup of a file that did not exist */
	assert_int_not_equal(fstatat(f->dfd, "subuid-", &st, 0), 0);
}

/* A crash after staging, before the journal: the old state, and the
 * recovery removes the staged files. */
static void test_crash_before_commit_point_is_old_state(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	put_str(f->dfd, ".group" HS_TXN_SUFFIX, "root:x:0:\nbob:x:1000:\n", getuid(), getgid(),
		0644);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_non_null(strstr(msg, ".group.hs-txn"));
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

/* Staged copies are written at their fixed names: a leftover there (cut
 * short, or a symlink planted to be followed) is removed and the commit
 * made, the symlink's target untouched; what cannot be removed (a
 * directory) fails the commit before its point, nothing changed. */
static void test_commit_over_stale_staged_files(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	char err[256] = "";
	struct stat st;

	put_str(f->dfd, ".group" HS_TXN_SUFFIX, "root:x:0:\nbo", getuid(), getgid(), 0644);
	put_str(f->dfd, "elsewhere", "keep\n", getuid(), getgid(), 0644);
	assert_int_equal(symlinkat("elsewhere", f->dfd, ".passwd" HS_TXN_SUFFIX), 0);
	prepare(&t);
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err), 0);
	assert_new(f->dfd);
	assert_clean(f->dfd);
	assert_string_equal(slurp(f->dfd, "elsewhere"), "keep\n");
	assert_int_equal(fstatat(f->dfd, "passwd", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));

	/* the old files again */
	put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\n", getuid(), getgid(), 0644);
	put_str(f->dfd, "group", "root:x:0:\n", getuid(), getgid(), 0640);
	assert_int_equal(mkdirat(f->dfd, ".passwd" HS_TXN_SUFFIX, 0700), 0);
	err[0] = '\0';
	assert_true(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err) < 0);
	assert_non_null(strstr(err, "/passwd"));
	assert_old(f->dfd);
	assert_int_not_equal(fstatat(f->dfd, ".group" HS_TXN_SUFFIX, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(unlinkat(f->dfd, ".passwd" HS_TXN_SUFFIX, AT_REMOVEDIR), 0);
}

/* A command killed while it wrote a staged copy at its fixed name leaves
 * it cut short; no journal names it (a prepared one names no file): the
 * recovery drops it and the old state holds. */
static void test_staged_copy_cut_short_is_not_committed(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	put_str(f->dfd, ".passwd" HS_TXN_SUFFIX, "root:x:0:0::/root:/bin/sh\nbob:x:10", getuid(),
		getgid(), 0600);
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow prepared 1\n", geteuid(), getegid(),
		0600);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_non_null(strstr(msg, ".passwd.hs-txn"));
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

/* The stat that checks a file the caller read is taken after its staged
 * copy: an owner or mode changed since the read (by a program that
 * ignores the locks: the contents, and so the version, are the same) is
 * what the staged copy gets, staged again. */
static void test_staged_copy_takes_a_mode_changed_since_the_read(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct stat read_as[2], st;
	char err[256] = "";

	prepare(&t);
	assert_int_equal(fstatat(f->dfd, "group", &read_as[0], AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(f->dfd, "passwd", &read_as[1], AT_SYMLINK_NOFOLLOW), 0);
	t.files[0].expect = &read_as[0];
	t.files[1].expect = &read_as[1];
	assert_int_equal(fchmodat(f->dfd, "group", 0600, 0), 0);
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err), 0);
	assert_new(f->dfd);
	assert_clean(f->dfd);
	assert_int_equal(fstatat(f->dfd, "group", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(fstatat(f->dfd, "passwd", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
}

/* Stage and journal by hand as hs_txn_commit would, then "crash" after
 * installing the first k files. */
static void crash_after(struct tmp_dirs *f, size_t installed)
{
	struct two_files t;
	char err[256] = "";

	prepare(&t);
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err), 0);
	/* undo what the crash would not have done: put the old files back
	 * under their names for the files not installed yet, keeping the new
	 * contents staged, and restore the journal */
	for (size_t i = installed; i < 2; i++) {
		char staged[64], backup[64];

		snprintf(staged, sizeof staged, ".%s%s", t.files[i].base, HS_TXN_SUFFIX);
		snprintf(backup, sizeof backup, "%s-", t.files[i].base);
		assert_int_equal(renameat(f->dfd, t.files[i].base, f->dfd, staged), 0);
		put_str(f->dfd, t.files[i].base, t.files[i].old_data, getuid(), getgid(), 0644);
	}
	/* the journal names the identity of the files as they are now */
	{
		char journal[1024];
		int n = snprintf(journal, sizeof journal, "hardened-shadow transaction 1\n");

		for (size_t i = 0; i < 2; i++) {
			struct stat st;

			assert_int_equal(fstatat(f->dfd, t.files[i].base, &st, AT_SYMLINK_NOFOLLOW), 0);
			n += snprintf(journal + n, sizeof journal - (size_t)n,
				      "%s %llu %llu %llu %lld.%09lld %lld.%09lld\n", t.files[i].base,
				      (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				      (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
				      (long long)st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
				      (long long)st.st_ctim.tv_nsec);
		}
		put_str(f->dfd, HS_TXN_JOURNAL, journal, geteuid(), getegid(), 0600);
	}
}

static void test_crash_after_commit_point_is_finished(void **state)
{
	struct tmp_dirs *f = *state;

	for (size_t installed = 0; installed <= 2; installed++) {
		char msg[512] = "";

		crash_after(f, installed);
		assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
		assert_new(f->dfd);
		assert_clean(f->dfd);
		/* back to the old state for the next round */
		put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\n", getuid(), getgid(), 0644);
		put_str(f->dfd, "group", "root:x:0:\n", getuid(), getgid(), 0640);
	}
}

/* After the crash, a tool that knows nothing of the journal (sysusers,
 * shadow-utils) replaced /etc/group: its version stays. */
static void test_file_changed_since_crash_keeps_the_newer_version(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	crash_after(f, 0);
	(void)unlinkat(f->dfd, "group", 0);
	put_str(f->dfd, "group", "root:x:0:\nsysusers:x:999:\n", getuid(), getgid(), 0644);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_non_null(strstr(msg, "/group: the file was changed since"));
	assert_string_equal(slurp(f->dfd, "group"), "root:x:0:\nsysusers:x:999:\n");
	/* and the rest of the change is dropped with it: no user without
	 * its group */
	assert_non_null(strstr(msg, "/passwd: "));
	assert_non_null(strstr(msg, "/group was changed since"));
	assert_string_equal(slurp(f->dfd, "passwd"), "root:x:0:0::/root:/bin/sh\n");
	assert_clean(f->dfd);
}

/* A file installed before the crash cannot be taken back: it stays. */
static void test_file_changed_since_keeps_what_was_installed(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	crash_after(f, 1);
	(void)unlinkat(f->dfd, "group", 0);
	put_str(f->dfd, "group", "root:x:0:\nsysusers:x:999:\n", getuid(), getgid(), 0644);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_string_equal(slurp(f->dfd, "group"), "root:x:0:\nsysusers:x:999:\n");
	assert_string_equal(slurp(f->dfd, "passwd"),
			    "root:x:0:0::/root:/bin/sh\nbob:x:1000:1000::/home/bob:/bin/sh\n");
	assert_clean(f->dfd);
}

static void test_hostile_journal_is_left_alone(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	put_str(f->dfd, HS_TXN_JOURNAL, "something else\n", geteuid(), getegid(), 0600);
	assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg) < 0);
	assert_non_null(strstr(msg, "not a transaction journal"));
	assert_old(f->dfd);

	/* a journal line naming a path outside the directory is skipped */
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow transaction 1\n../x absent\n",
		geteuid(), getegid(), 0600);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_non_null(strstr(msg, "bad line"));
	assert_old(f->dfd);
	assert_clean(f->dfd);

	/* a symlink as the journal is refused, not followed */
	assert_int_equal(symlinkat("/etc/hostname", f->dfd, HS_TXN_JOURNAL), 0);
	assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg) < 0);
	assert_old(f->dfd);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
}

/* The two questions about a journal (txn.h), for every kind of one a
 * crash or a stranger may leave: the sweep and pwck keep reserved
 * directories while journal_left; usermod and pwck -r take files_pending
 * as a change that will be made, and an unreadable journal may be one. */
static void journal_answers(int dfd, bool left, bool pending)
{
	assert_int_equal(hs_txn_journal_left(dfd), left);
	assert_int_equal(hs_txn_files_pending(dfd), pending);
}

static void test_journal_questions_for_every_kind(void **state)
{
	struct tmp_dirs *f = *state;
	uid_t other = geteuid() == 0 ? 1 : geteuid();
	char big[64 * 1024];

	journal_answers(f->dfd, false, false);
	/* work alone (left for the next tool): no files */
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow transaction 1\n@x\n", geteuid(),
		getegid(), 0600);
	journal_answers(f->dfd, true, false);
	/* a prepared one was never committed */
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow prepared 1\npasswd absent\n",
		geteuid(), getegid(), 0600);
	journal_answers(f->dfd, true, false);
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow transaction 1\npasswd absent\n",
		geteuid(), getegid(), 0600);
	journal_answers(f->dfd, true, true);
	/* unreadable ones: a symlink, a FIFO (no wait for a writer), a
	 * directory, an oversized file, another owner's */
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
	assert_int_equal(symlinkat("/nonexistent", f->dfd, HS_TXN_JOURNAL), 0);
	journal_answers(f->dfd, true, true);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
	assert_int_equal(mkfifoat(f->dfd, HS_TXN_JOURNAL, 0600), 0);
	journal_answers(f->dfd, true, true);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
	assert_int_equal(mkdirat(f->dfd, HS_TXN_JOURNAL, 0700), 0);
	journal_answers(f->dfd, true, true);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, AT_REMOVEDIR), 0);
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (size_t i = 63; i < sizeof big - 1; i += 64)
		big[i] = '\n';
	{
		int fd = openat(f->dfd, HS_TXN_JOURNAL, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				0600);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "hardened-shadow transaction 1\n", 30), 30);
		for (size_t i = 0; i < HS_GLOBALFILE_MAX / (sizeof big - 1) + 1; i++)
			assert_int_equal(write(fd, big, sizeof big - 1), (ssize_t)(sizeof big - 1));
		close(fd);
	}
	journal_answers(f->dfd, true, true);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
	if (geteuid() == 0) {
		put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow transaction 1\n@x\n", other,
			getegid(), 0600);
		journal_answers(f->dfd, true, true);
		assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
	}
	journal_answers(f->dfd, false, false);
}

static void test_failure_before_commit_point_changes_nothing(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	char err[256] = "";
	size_t failed = 0;

	prepare(&t);
	/* the second staged name is taken by a non-empty directory: staging
	 * fails, the first staged file is removed again */
	assert_int_equal(mkdirat(f->dfd, ".passwd" HS_TXN_SUFFIX, 0700), 0);
	put_str(f->dfd, ".passwd" HS_TXN_SUFFIX "/x", "x", getuid(), getgid(), 0600);
	assert_true(hs_txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err,
				  &failed) < 0);
	assert_non_null(strstr(err, "/passwd: "));
	assert_int_equal(failed, 1);
	assert_old(f->dfd);
	{
		struct stat st;

		assert_int_not_equal(fstatat(f->dfd, ".group" HS_TXN_SUFFIX, &st, 0), 0);
		assert_int_not_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, 0), 0);
	}
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, ".passwd" HS_TXN_SUFFIX), 0);

	/* a journal that cannot be read is no one file's failure */
	assert_int_equal(symlinkat("/etc/hostname", f->dfd, HS_TXN_JOURNAL), 0);
	assert_true(hs_txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err,
				  &failed) < 0);
	assert_non_null(strstr(err, HS_TXN_JOURNAL));
	assert_int_equal(failed, 2);
	assert_old(f->dfd);
	assert_int_equal(unlinkat(f->dfd, HS_TXN_JOURNAL, 0), 0);
}

/* A target that cannot be replaced (chattr +i here; a bind mount on a
 * real system): the files already installed are put back, nothing
 * changes, no journal stays. */
static void test_install_failure_rolls_back(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	char err[512] = "";
	size_t failed = 0;
	int fd, flags = 0, immutable;

	fd = openat(f->dfd, "passwd", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		close(fd);
		skip();
	}
	immutable = flags | FS_IMMUTABLE_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &immutable) < 0) {
		close(fd);
		skip();         /* not root, or a file system without the flag */
	}
	prepare(&t);
	assert_true(hs_txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err,
				  &failed) < 0);
	assert_int_equal(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
	close(fd);
	assert_non_null(strstr(err, "cannot write"));
	assert_non_null(strstr(err, "/passwd"));
	assert_int_equal(failed, 1);
	assert_non_null(strstr(err, "nothing was changed"));
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

/* ---- one file: no journal, the rename is the commit point ---- */

static void test_single_file_commit(void **state)
{
	struct tmp_dirs *f = *state;
	char path[PATH_MAX], err[256] = "";
	static const char newp[] = "root:x:0:0::/root:/bin/bash\n";
	struct iovec iov = { .iov_base = (void *)newp, .iov_len = strlen(newp) };
	struct hs_global_file g = { .path = path, .iov = &iov, .n_iov = 1, .mode = 0644 };
	struct stat st;

	snprintf(path, sizeof path, "%s/passwd", f->path);
	assert_int_equal(hs_globalfile_commit(0, &g, 1, err, sizeof err, NULL), 0);
	assert_string_equal(slurp(f->dfd, "passwd"), newp);
	assert_string_equal(slurp(f->dfd, "passwd-"), "root:x:0:0::/root:/bin/sh\n");
	assert_clean(f->dfd);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, err, sizeof err), 0);

	/* files in two directories are not one commit */
	struct hs_global_file two[2] = { g, g };
	char other[PATH_MAX];
	size_t failed = 0;
	snprintf(other, sizeof other, "%s/sub/group", f->path);
	two[1].path = other;
	assert_int_equal(hs_globalfile_commit(0, two, 2, err, sizeof err, &failed), -EXDEV);
	assert_int_equal(failed, 1);
	assert_string_equal(slurp(f->dfd, "passwd"), newp);
	assert_int_not_equal(fstatat(f->dfd, "passwd", &st, 0) == 0 && st.st_nlink != 1, 1);
}

/* Killed after the backup was written, before the rename: no journal, so
 * the staged file was never committed; the recovery drops it. */
static void test_single_file_crash_before_rename(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[512] = "";

	put_str(f->dfd, ".passwd" HS_TXN_SUFFIX, "root:x:0:0::/root:/bin/bash\n", getuid(),
		getgid(), 0644);
	put_str(f->dfd, "passwd-", "root:x:0:0::/root:/bin/sh\n", getuid(), getgid(), 0644);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

/* Temp files of our writers killed inside a replace (of the file, its
 * backup or its staged copy) are swept; other dot files are not ours. */
static void test_recover_sweeps_temp_files(void **state)
{
	struct tmp_dirs *f = *state;
	static const char *const ours[] = {
		".passwd.Ab3dEf9hIj0k", ".group-.abcdefghijkl", "..passwd.hs-txn.ABCDEFGHIJKL",
	};
	static const char *const theirs[] = {
		".passwd.short", ".shadow.abcdefghijkl", "passwd+", ".pwd.lock",
	};
	char msg[1024] = "";
	struct stat st;

	for (size_t i = 0; i < HS_ARRAY_SIZE(ours); i++)
		put_str(f->dfd, ours[i], "half", getuid(), getgid(), 0600);
	for (size_t i = 0; i < HS_ARRAY_SIZE(theirs); i++)
		put_str(f->dfd, theirs[i], "x", getuid(), getgid(), 0600);
	/* a directory with a temp name is not a file we left */
	assert_int_equal(mkdirat(f->dfd, ".group.ABCDEFGHIJKL", 0700), 0);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg), 1);
	for (size_t i = 0; i < HS_ARRAY_SIZE(ours); i++)
		assert_int_not_equal(fstatat(f->dfd, ours[i], &st, AT_SYMLINK_NOFOLLOW), 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(theirs); i++)
		assert_int_equal(fstatat(f->dfd, theirs[i], &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(f->dfd, ".group.ABCDEFGHIJKL", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_old(f->dfd);
}

/* The litter matcher rides on the recovery's one listing: what it matches
 * goes (a file or a symlink, never what the link names, never a
 * directory), quietly; it is asked about every name once and never about a
 * dot name (the temp and transaction names are the recovery's own); the
 * staged file without a journal is still dropped. */
struct litter_seen {
	unsigned calls, dot_calls, group_calls;
};

static bool litter_match(const char *name, void *ctx)
{
	struct litter_seen *seen = ctx;

	seen->calls++;
	seen->dot_calls += name[0] == '.';
	seen->group_calls += strcmp(name, "group") == 0;
	return strncmp(name, "litter.", 7) == 0;
}

static void test_recover_sweeps_litter_in_its_listing(void **state)
{
	struct tmp_dirs *f = *state;
	struct litter_seen seen = { 0 };
	const struct hs_txn_litter litter = { litter_match, &seen };
	char msg[512] = "";
	struct stat st;

	put_str(f->dfd, "litter.1", "1", getuid(), getgid(), 0600);
	put_str(f->dfd, "keep", "k", getuid(), getgid(), 0600);
	assert_int_equal(symlinkat("keep", f->dfd, "litter.2"), 0);
	assert_int_equal(mkdirat(f->dfd, "litter.3", 0700), 0);
	put_str(f->dfd, ".litter.4", "4", getuid(), getgid(), 0600);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, &litter, msg, sizeof msg), 0);
	assert_string_equal(msg, "");
	assert_int_not_equal(fstatat(f->dfd, "litter.1", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->dfd, "litter.2", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_string_equal(slurp(f->dfd, "keep"), "k");
	assert_int_equal(fstatat(f->dfd, "litter.3", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fstatat(f->dfd, ".litter.4", &st, AT_SYMLINK_NOFOLLOW), 0);
	/* passwd group keep litter.1 litter.2 litter.3 */
	assert_int_equal(seen.calls, 6);
	assert_int_equal(seen.dot_calls, 0);
	assert_int_equal(seen.group_calls, 1);
	assert_old(f->dfd);

	/* with a staged file left: dropped, and said so, litter or not */
	put_str(f->dfd, "litter.5", "5", getuid(), getgid(), 0600);
	put_str(f->dfd, ".group" HS_TXN_SUFFIX, "root:x:0:\nbob:x:1000:\n", getuid(), getgid(),
		0644);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, &litter, msg, sizeof msg), 1);
	assert_non_null(strstr(msg, ".group.hs-txn"));
	assert_null(strstr(msg, "litter"));
	assert_int_not_equal(fstatat(f->dfd, "litter.5", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

/* ---- a real SIGKILL at every system call of a commit ---- */

static void reset_dir(struct tmp_dirs *f)
{
	int fd = openat(f->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			assert_int_equal(unlinkat(f->dfd, de->d_name, 0), 0);
	closedir(d);
	put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\n", getuid(), getgid(), 0644);
	put_str(f->dfd, "group", "root:x:0:\n", getuid(), getgid(), 0640);
}

static void commit_child(const char *dir, size_t n_files)
{
	static const char p1[] = "root:x:0:0::/root:/bin/sh\n", p2[] = "bob:x:1000:1000::/home/bob:/bin/sh\n";
	static const char g1[] = "root:x:0:\n", g2[] = "bob:x:1000:\n";
	struct iovec gi[2] = { { (void *)g1, strlen(g1) }, { (void *)g2, strlen(g2) } };
	struct iovec pi[2] = { { (void *)p1, strlen(p1) }, { (void *)p2, strlen(p2) } };
	char gpath[PATH_MAX], ppath[PATH_MAX];
	struct hs_global_file files[2] = {
		{ .path = gpath, .iov = gi, .n_iov = 2, .mode = 0644 },
		{ .path = ppath, .iov = pi, .n_iov = 2, .mode = 0644 },
	};

	snprintf(gpath, sizeof gpath, "%s/group", dir);
	snprintf(ppath, sizeof ppath, "%s/passwd", dir);
	/* one file: passwd only */
	_exit(hs_globalfile_commit(0, n_files == 1 ? &files[1] : files, n_files, NULL, 0, NULL) == 0
	      ? 0 : 3);
}

/* Run the commit in a traced child and kill it at syscall stop number
 * `at` (entry and exit stops both count).  Returns true when the child
 * finished before reaching it. */
static bool run_killed_at(struct tmp_dirs *f, size_t n_files, unsigned at)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(77);
		raise(SIGSTOP);
		commit_child(f->path, n_files);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return true;
	for (unsigned stop = 0;; stop++) {
		if (stop == at) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) == pid && !WIFSIGNALED(status) &&
			       !WIFEXITED(status))
				;
			return false;
		}
		assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status)) {
			assert_int_equal(WEXITSTATUS(status), 0);
			return true;
		}
	}
}

/* leftovers: each run meets a cut-short staged copy of group (removed and
 * created again) and a prepared journal (replaced, not linked over). */
static void kill_at_every_syscall(struct tmp_dirs *f, size_t n_files, bool leftovers)
{
	const char *const all[] = { "passwd", "group", "passwd-", "group-" };
	unsigned at;

	for (at = 1; at < 5000; at++) {
		char msg[1024] = "";
		_cleanup_free_ char *p = NULL;
		const char *g;
		bool done;
		DIR *d;
		struct dirent *de;
		int fd;

		reset_dir(f);
		if (leftovers) {
			put_str(f->dfd, ".group" HS_TXN_SUFFIX, "root:x:0:\nbo", getuid(), getgid(),
				0644);
			put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow prepared 1\n", geteuid(),
				getegid(), 0600);
		}
		done = run_killed_at(f, n_files, at);
		assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg) >= 0);
		p = strdup(slurp(f->dfd, "passwd"));    /* slurp's buffer is reused */
		g = slurp(f->dfd, "group");
		assert_non_null(p);
		assert_non_null(g);
		if (strcmp(p, "root:x:0:0::/root:/bin/sh\n") == 0) {
			/* the old state: every file old */
			assert_string_equal(g, "root:x:0:\n");
		} else {
			assert_string_equal(p, "root:x:0:0::/root:/bin/sh\n"
					    "bob:x:1000:1000::/home/bob:/bin/sh\n");
			assert_string_equal(g, n_files == 1 ? "root:x:0:\n"
							    : "root:x:0:\nbob:x:1000:\n");
			/* journaled: the old files are the backups, also when the
			 * kill fell between an exchange and the backup's rename */
			if (n_files == 2) {
				assert_string_equal(slurp(f->dfd, "passwd-"),
						    "root:x:0:0::/root:/bin/sh\n");
				assert_string_equal(slurp(f->dfd, "group-"), "root:x:0:\n");
			}
		}
		/* nothing left beside the files and their backups */
		fd = openat(f->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = fdopendir(fd);
		assert_non_null(d);
		while ((de = readdir(d))) {
			bool known = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");

			for (size_t i = 0; i < HS_ARRAY_SIZE(all); i++)
				known |= strcmp(de->d_name, all[i]) == 0;
			if (!known)
				fail_msg("kill at stop %u left %s (recovery: %s)", at, de->d_name, msg);
		}
		closedir(d);
		if (done)
			break;
	}
	assert_true(at > 10);           /* the child did run under the tracer */
	assert_true(at < 5000);
}

/* The recovery of a change one of whose files was changed since, killed
 * at every syscall stop (entry and exit) and then run again: the end
 * state is the one an uninterrupted recovery reaches, the other tool's
 * file stays and nothing is left.  Returns true when the child recovery
 * finished before stop `at`. */
static bool recover_killed_at(struct tmp_dirs *f, unsigned at)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char msg[1024];

		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(77);
		raise(SIGSTOP);
		_exit(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof msg) >= 0 ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return true;
	for (unsigned stop = 0;; stop++) {
		if (stop == at) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) == pid && !WIFSIGNALED(status) &&
			       !WIFEXITED(status))
				;
			return false;
		}
		assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status)) {
			assert_int_equal(WEXITSTATUS(status), 0);
			return true;
		}
	}
}

static void test_killed_recovery_of_a_changed_file(void **state)
{
	struct tmp_dirs *f = *state;
	static const char theirs[] = "sysusers:x:999:\n";

	/* installed 0: group was changed since, passwd stays old;
	 * installed 1: group is in place, passwd was changed since */
	for (size_t installed = 0; installed <= 1; installed++) {
		const char *other = installed ? "passwd" : "group";
		unsigned at;

		for (at = 1; at < 5000; at++) {
			char msg[1024] = "";
			bool done;

			reset_dir(f);
			crash_after(f, installed);
			assert_int_equal(unlinkat(f->dfd, other, 0), 0);
			put_str(f->dfd, other, theirs, getuid(), getgid(), 0644);
			done = recover_killed_at(f, at);
			assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg,
						   sizeof msg) >= 0);
			assert_string_equal(slurp(f->dfd, other), theirs);
			if (installed)
				assert_string_equal(slurp(f->dfd, "group"),
						    "root:x:0:\nbob:x:1000:\n");
			else
				assert_string_equal(slurp(f->dfd, "passwd"),
						    "root:x:0:0::/root:/bin/sh\n");
			assert_clean(f->dfd);
			if (done)
				break;
		}
		assert_true(at > 10);
		assert_true(at < 5000);
	}
}

/* ---- the order of the syncs: what a power loss may keep ----
 *
 * A SIGKILL keeps every system call made; a power loss keeps what was
 * synced, and more only in the order the file system chose.  The kill
 * tests cannot see a missing sync, so the commit's system calls are
 * followed here and the ordering argument of txn.h checked at each step:
 * the journal gets its name only once every staged copy was synced and
 * the directory after their names; the journal's contents are synced
 * before its link; the directory after the link before the first
 * exchange; a one-file exchange after the staged name's sync; the
 * directory after the last rename before the journal goes. */
struct sync_order {
	int mem;                        /* /proc/PID/mem of the traced commit */
	int dirfd;                      /* the directory the copies are staged in */
	bool staged[1024], synced[1024];
	bool names_unsynced;            /* a staged name made since the last dir sync */
	bool journal_linked, journal_unsynced;
	bool renames_unsynced;          /* an exchange or rename since the last dir sync */
	unsigned exchanges, journal_links, dir_syncs;
	char failure[256];
};

static void order_fail(struct sync_order *o, const char *what)
{
	if (!o->failure[0])
		snprintf(o->failure, sizeof o->failure, "%s", what);
}

static void child_string(struct sync_order *o, uint64_t addr, char *buf, size_t size)
{
	ssize_t n = addr ? pread(o->mem, buf, size - 1, (off_t)addr) : -1;

	buf[n > 0 ? (size_t)n : 0] = '\0';     /* the string ends at its first NUL */
}

static bool is_staged_name(const char *name)
{
	size_t n = strlen(name), s = strlen(HS_TXN_SUFFIX);

	return name[0] == '.' && n > s && strcmp(name + n - s, HS_TXN_SUFFIX) == 0;
}

static bool fd_ok(uint64_t fd)
{
	return fd < 1024;
}

/* The fd whose inode linkat names: (fd, "", AT_EMPTY_PATH) or
 * /proc/self/fd/N; -1 for a named file. */
static int linked_fd(struct sync_order *o, const uint64_t *a)
{
	char from[64];
	int n;

	child_string(o, a[1], from, sizeof from);
	if (!from[0])
		return (int)a[0];
	return sscanf(from, "/proc/self/fd/%d", &n) == 1 ? n : -1;
}

/* One system call entered, and what it returned. */
static void order_step(struct sync_order *o, const uint64_t *a, uint64_t nr, int64_t ret)
{
	char name[PATH_MAX];

	if (nr == SYS_openat && ret >= 0 && fd_ok((uint64_t)ret)) {
		child_string(o, a[1], name, sizeof name);
		if (o->staged[ret] && !o->synced[ret])
			order_fail(o, "a staged copy was closed unsynced");
		o->staged[ret] = (a[2] & O_CREAT) && is_staged_name(name);
		o->synced[ret] = false;
		if (o->staged[ret]) {
			o->dirfd = (int)a[0];
			o->names_unsynced = true;
		}
	} else if ((nr == SYS_fsync || nr == SYS_fdatasync) && ret == 0 && fd_ok(a[0])) {
		o->synced[a[0]] = true;
		if ((int)a[0] == o->dirfd) {
			o->names_unsynced = o->journal_unsynced = o->renames_unsynced = false;
			o->dir_syncs++;
		}
	} else if (nr == SYS_linkat && ret == 0) {
		int fd = linked_fd(o, a);

		child_string(o, a[3], name, sizeof name);
		if (strcmp(name, HS_TXN_JOURNAL) != 0)
			return;
		o->journal_links++;
		if (o->names_unsynced)
			order_fail(o, "the journal was linked before the staged names were synced");
		for (size_t i = 0; i < HS_ARRAY_SIZE(o->staged); i++)
			if (o->staged[i] && !o->synced[i])
				order_fail(o, "the journal was linked before a staged copy was synced");
		if (fd >= 0 && fd_ok((uint64_t)fd) && !o->synced[fd])
			order_fail(o, "the journal was linked before its contents were synced");
		o->journal_linked = o->journal_unsynced = true;
	} else if ((nr == SYS_renameat || nr == SYS_renameat2) && ret == 0) {
		child_string(o, a[3], name, sizeof name);
		if (strcmp(name, HS_TXN_JOURNAL) == 0) {
			o->journal_links++;
			if (o->names_unsynced)
				order_fail(o, "the journal was renamed before the staged names were "
					   "synced");
			o->journal_linked = o->journal_unsynced = true;
			return;
		}
		if (name[0] == '.')
			return;         /* a temporary of a replace */
		if (o->names_unsynced)
			order_fail(o, "a file was exchanged before the staged names were synced");
		if (o->journal_unsynced)
			order_fail(o, "a file was exchanged before the journal's name was synced");
		o->exchanges += nr == SYS_renameat2 && (a[4] & RENAME_EXCHANGE);
		o->renames_unsynced = true;
	} else if (nr == SYS_unlinkat && ret == 0) {
		child_string(o, a[1], name, sizeof name);
		if (strcmp(name, HS_TXN_JOURNAL) == 0 && o->renames_unsynced)
			order_fail(o, "the journal was removed before the renames were synced");
	}
}

/* Run the commit of n_files traced to its end, checking each step. */
static void commit_in_sync_order(struct tmp_dirs *f, size_t n_files, struct sync_order *o)
{
	struct __ptrace_syscall_info info;
	uint64_t args[6] = { 0 }, nr = 0;
	char mem[64];
	int status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(77);
		raise(SIGSTOP);
		commit_child(f->path, n_files);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_TRACESYSGOOD), 0);
	snprintf(mem, sizeof mem, "/proc/%d/mem", (int)pid);
	o->mem = open(mem, O_RDONLY | O_CLOEXEC);
	assert_true(o->mem >= 0);
	for (;;) {
		assert_int_equal(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status)) {
			assert_int_equal(WEXITSTATUS(status), 0);
			break;
		}
		assert_true(WIFSTOPPED(status));
		if (WSTOPSIG(status) != (SIGTRAP | 0x80))
			continue;
		assert_true(ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) > 0);
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			nr = info.entry.nr;
			memcpy(args, info.entry.args, sizeof(args));
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
			order_step(o, args, nr, info.exit.rval);
		}
	}
	close(o->mem);
}

static void test_syncs_come_in_the_order_a_power_loss_needs(void **state)
{
	struct tmp_dirs *f = *state;
	struct sync_order o;

	for (size_t n_files = 1; n_files <= 2; n_files++) {
		reset_dir(f);
		commit_in_sync_order(f, n_files, &o);
		if (o.failure[0])
			fail_msg("%zu file(s): %s", n_files, o.failure);
		/* the steps were seen: the staged directory, the exchanges,
		 * the journal of a two-file commit only */
		assert_true(o.dirfd >= 0);
		assert_int_equal(o.exchanges, n_files);
		assert_int_equal(o.journal_links, n_files == 2 ? 1 : 0);
		assert_true(o.dir_syncs >= (n_files == 2 ? 3u : 2u));
		if (n_files == 2)
			assert_new(f->dfd);
	}
	/* a journal left for its work is renamed over, in the same order */
	reset_dir(f);
	put_str(f->dfd, HS_TXN_JOURNAL, "hardened-shadow prepared 1\n", geteuid(), getegid(),
		0600);
	commit_in_sync_order(f, 2, &o);
	if (o.failure[0])
		fail_msg("over a journal: %s", o.failure);
	assert_int_equal(o.journal_links, 1);
	assert_new(f->dfd);
}

static void test_kill_at_every_syscall_one_file(void **state)
{
	kill_at_every_syscall(*state, 1, false);
}

static void test_kill_at_every_syscall_two_files(void **state)
{
	kill_at_every_syscall(*state, 2, false);
}

static void test_kill_at_every_syscall_over_leftovers(void **state)
{
	kill_at_every_syscall(*state, 1, true);
	kill_at_every_syscall(*state, 2, true);
}

/* ---- home and tree work (txnwork.c) ---- */

#define HOME_TMP ".new.bob.AbCdEfGhIjKl"

/* A home built whole beside where it goes, as useradd -m builds it. */
static void home_work(struct tmp_dirs *f, struct hs_txn_work *w, char *path, size_t size)
{
	struct stat parent, self;

	snprintf(path, size, "%s/bob", f->outside);
	assert_int_equal(mkdirat(f->ofd, HOME_TMP, 0700), 0);
	put_str(f->ofd, HOME_TMP "/.profile", "x\n", getuid(), getgid(), 0644);
	assert_int_equal(fstat(f->ofd, &parent), 0);
	assert_int_equal(fstatat(f->ofd, HOME_TMP, &self, AT_SYMLINK_NOFOLLOW), 0);
	*w = (struct hs_txn_work){
		.kind = HS_TXN_HOME_NEW, .path = path, .tmp = HOME_TMP, .uid = getuid(),
		.gid = getgid(), .mode = 0750,
		.parent = { parent.st_dev, parent.st_ino }, .self = { self.st_dev, self.st_ino },
	};
}

/* passwd with a line of the work's uid (home_work) naming home */
static void put_passwd_home(struct tmp_dirs *f, const char *home)
{
	char line[512];

	snprintf(line, sizeof(line), "root:x:0:0::/root:/bin/sh\nbob:x:%lu:%lu::%s:/bin/sh\n",
		 (unsigned long)getuid(), (unsigned long)getgid(), home);
	put_str(f->dfd, "passwd", line, getuid(), getgid(), 0644);
}

static void assert_home_made(struct tmp_dirs *f)
{
	struct stat st;

	assert_int_equal(fstatat(f->ofd, "bob", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_string_equal(slurp(f->ofd, "bob/.profile"), "x\n");
	assert_int_not_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
}

static void test_prepared_work_is_undone(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_txn_work w;
	char path[128], msg[1024];
	struct stat st;

	hs_txn_work_enable();
	home_work(f, &w, path, sizeof(path));
	w.self = (struct hs_txn_id){ 0, 0 };    /* prepared before it was made */
	assert_int_equal(hs_txn_prepare(f->dfd, f->path, &w, 1, msg, sizeof(msg)), 0);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "undid the unfinished creation of"));
	assert_int_not_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->ofd, "bob", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_old(f->dfd);
	assert_clean(f->dfd);
}

static void test_commit_does_the_work(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256];

	hs_txn_work_enable();
	prepare(&t);
	home_work(f, &w, path, sizeof(path));
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, &w, 1, err, sizeof err), 0);
	assert_int_equal(w.result, 0);
	assert_new(f->dfd);
	assert_home_made(f);
	assert_clean(f->dfd);
}

/* A tool without the work (a setid one) installs the files and keeps the
 * work in the journal; the next tool with it finishes it. */
static void test_work_left_for_a_root_tool(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256], msg[1024];
	struct stat st;

	hs_txn_set_work_ops(NULL);
	prepare(&t);
	home_work(f, &w, path, sizeof(path));
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, &w, 1, err, sizeof err), 0);
	assert_new(f->dfd);
	assert_int_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_int_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	/* the home the journal names is bob's in passwd */
	put_passwd_home(f, path);
	hs_txn_work_enable();
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "finished creating"));
	assert_home_made(f);
	assert_clean(f->dfd);
}

/* A piece's finishing fails as a full disk makes it fail; counts its calls. */
static int n_forward;

static int forward_no_space(struct hs_txn_work *w)
{
	(void)w;
	n_forward++;
	return -ENOSPC;
}

/* A piece a recovery cannot do is kept and said with its cause once in a
 * run: a later recovery of the same run (a tool's own locking, confined
 * by then to its job's paths, where it would fail on EACCES) neither
 * tries it again nor says it again, and keeps the journal.  The next run
 * finishes it. */
static void test_work_kept_by_a_recovery_is_said_once_per_run(void **state)
{
	static const struct hs_txn_work_ops failing = { .forward = forward_no_space };
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256], msg[1024];
	struct stat st;

	hs_txn_set_work_ops(NULL);
	prepare(&t);
	home_work(f, &w, path, sizeof(path));
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, &w, 1, err, sizeof err), 0);
	hs_txn_set_work_ops(&failing);
	n_forward = 0;
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_int_equal(n_forward, 1);
	assert_non_null(strstr(msg, ": No space left on device; what failed is left in "));
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 0);
	assert_int_equal(n_forward, 1);
	assert_string_equal(msg, "");
	assert_int_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	/* the next run, its ops set anew, with the home bob's in passwd */
	put_passwd_home(f, path);
	hs_txn_work_enable();
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "finished creating"));
	assert_home_made(f);
	assert_clean(f->dfd);
}

/* The same, but passwd was changed meanwhile by a tool that knows no
 * journal (the account deleted, its uid given to another, its home
 * moved): no line of that uid names the home, so the recovery undoes the
 * work instead of handing the home to the uid. */
static void test_work_of_a_home_passwd_no_longer_names_is_undone(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256], msg[1024];
	struct stat st;

	hs_txn_set_work_ops(NULL);
	prepare(&t);
	home_work(f, &w, path, sizeof(path));
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, &w, 1, err, sizeof err), 0);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	hs_txn_work_enable();
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_null(strstr(msg, "finished creating"));
	assert_non_null(strstr(msg, "undid the creation of"));
	assert_int_not_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->ofd, "bob", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_clean(f->dfd);
}

/* A passwd without root's line is one an editor is saving in place (cut
 * short first): it names nobody, and would have every committed piece
 * undone.  The recovery waits instead, the journal as it was, and
 * finishes the work once passwd is whole again. */
static void test_work_is_not_judged_by_a_passwd_cut_short(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256], msg[1024];
	struct stat st;

	hs_txn_set_work_ops(NULL);
	prepare(&t);
	home_work(f, &w, path, sizeof(path));
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, &w, 1, err, sizeof err), 0);
	put_passwd_home(f, path);
	assert_int_equal(renameat(f->dfd, "passwd", f->dfd, "passwd.whole"), 0);
	hs_txn_work_enable();
	/* cut short, then written up to the middle of bob's line */
	put_str(f->dfd, "passwd", "", getuid(), getgid(), 0644);
	assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)) < 0);
	assert_non_null(strstr(msg, "cannot check the work"));
	assert_non_null(strstr(msg, "no root line or no final newline"));
	put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\nbob:x:", getuid(), getgid(), 0644);
	assert_true(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)) < 0);
	assert_int_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(renameat(f->dfd, "passwd.whole", f->dfd, "passwd"), 0);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "finished creating"));
	assert_home_made(f);
}

/* A killed useradd -m left a prepared journal; a setid tool (no work)
 * commits before any root tool runs: its journal must keep the undo. */
static void test_prepared_work_survives_a_setid_commit(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w;
	char path[128], err[256], msg[1024];
	struct stat st;

	home_work(f, &w, path, sizeof(path));
	assert_int_equal(hs_txn_prepare(f->dfd, f->path, &w, 1, msg, sizeof(msg)), 0);
	hs_txn_set_work_ops(NULL);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 0);
	prepare(&t);
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, NULL, 0, err, sizeof err), 0);
	assert_new(f->dfd);
	assert_int_equal(fstatat(f->dfd, HS_TXN_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	hs_txn_work_enable();
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "undid the unfinished creation of"));
	assert_int_not_equal(fstatat(f->ofd, HOME_TMP, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->ofd, "bob", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_new(f->dfd);
	assert_clean(f->dfd);
}

/* A recovery with more to say than its message holds (a newusers batch
 * killed after its commit: one piece per home): every piece said is said
 * whole, and the rest is counted in a last "... and N more", not cut
 * mid-word at the buffer's end. */
#define N_HOMES 60
static void test_long_recovery_message_is_cut_between_pieces(void **state)
{
	struct tmp_dirs *f = *state;
	struct two_files t;
	struct hs_txn_work w[N_HOMES];
	char paths[N_HOMES][128], tmps[N_HOMES][32], err[256], msg[1024];
	struct stat parent;
	unsigned long more = 0;
	size_t said = 0, len;
	char *piece, *next, *tail;

	hs_txn_set_work_ops(NULL);
	prepare(&t);
	assert_int_equal(fstat(f->ofd, &parent), 0);
	for (size_t i = 0; i < N_HOMES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/user%02zu", f->outside, i);
		snprintf(tmps[i], sizeof(tmps[i]), ".new.user%02zu.AbCdEfGhIjKl", i);
		w[i] = (struct hs_txn_work){
			.kind = HS_TXN_HOME_NEW, .path = paths[i], .tmp = tmps[i],
			.uid = 4242, .gid = 4242, .mode = 0750,
			.parent = { parent.st_dev, parent.st_ino }, .self = { 1, 1 },
		};
	}
	assert_int_equal(txn_commit(f->dfd, f->path, t.files, 2, w, N_HOMES, err,
				       sizeof err), 0);
	hs_txn_work_enable();
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	len = strlen(msg);
	assert_true(len < sizeof(msg) - 1);
	tail = strrchr(msg, ';');
	assert_non_null(tail);
	assert_int_equal(sscanf(tail, "; ... and %lu more", &more), 1);
	assert_true(more > 0);
	*tail = '\0';
	for (piece = msg; piece; piece = next) {
		next = strstr(piece, "; ");
		if (next) {
			*next = '\0';
			next += 2;
		}
		/* whole: "undid the creation of PATH: DIR/passwd no longer names it
		 * for uid 4242" */
		assert_non_null(strstr(piece, "undid the creation of "));
		assert_non_null(strstr(piece, " for uid 4242"));
		said++;
	}
	assert_int_equal(said + more, N_HOMES);
	assert_clean(f->dfd);
}

static int plant_reserved_dirs(struct tmp_dirs *f)
{
	const char *tree = strrchr(HS_TREE_DIR, '/') + 1;
	int tfd;

	assert_int_equal(mkdirat(f->dfd, tree, 0710), 0);
	tfd = openat(f->dfd, tree, O_RDONLY | O_DIRECTORY);
	assert_true(tfd >= 0);
	assert_int_equal(mkdirat(tfd, ".new.carol.AbCdEfGhIjKl", 0700), 0);
	put_str(tfd, ".new.carol.AbCdEfGhIjKl/shadow", "x\n", getuid(), getgid(), 0640);
	assert_int_equal(mkdirat(tfd, ".del.dave.AbCdEfGhIjKl", 0700), 0);
	assert_int_equal(mkdirat(tfd, "alice", 0700), 0);
	assert_int_equal(mkdirat(tfd, ".new.short", 0700), 0);     /* not ours */
	return tfd;
}

/* Under the locks a reserved directory in the tree that no journal names
 * is a killed tool's, when the tree's mark says one may be left; a user's
 * directory is never touched. */
static void test_stale_reserved_dirs_are_swept(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[1024];
	struct stat st;
	int tfd;

	hs_txn_work_enable();
	tfd = plant_reserved_dirs(f);
	put_str(tfd, HS_TREE_RESERVED_MARK, "", 0, 0, 0600);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "removed 2 reserved directories"));
	assert_int_not_equal(fstatat(tfd, ".new.carol.AbCdEfGhIjKl", &st, 0), 0);
	assert_int_not_equal(fstatat(tfd, ".del.dave.AbCdEfGhIjKl", &st, 0), 0);
	assert_int_equal(fstatat(tfd, "alice", &st, 0), 0);
	assert_int_equal(fstatat(tfd, ".new.short", &st, 0), 0);
	/* swept: the mark goes, and the next holder of the locks looks no more */
	assert_int_not_equal(fstatat(tfd, HS_TREE_RESERVED_MARK, &st, 0), 0);
	close(tfd);
}

/* Without the mark, the tree is not listed: what is left there was not
 * left by our tools (pwck reports it), and every lock would otherwise
 * cost a listing of every user. */
static void test_unmarked_tree_is_not_listed(void **state)
{
	struct tmp_dirs *f = *state;
	char msg[1024];
	struct stat st;
	int tfd;

	hs_txn_work_enable();
	tfd = plant_reserved_dirs(f);
	assert_int_equal(hs_txn_recover(f->dfd, f->path, bases, 2, NULL, msg, sizeof(msg)), 0);
	assert_int_equal(fstatat(tfd, ".new.carol.AbCdEfGhIjKl", &st, 0), 0);
	assert_int_equal(fstatat(tfd, ".del.dave.AbCdEfGhIjKl", &st, 0), 0);
	close(tfd);
}

/* ---- a recovery's check out of memory ---- */

/* The ops hs_txn_work_enable installs, caught on their way to txn.c (this
 * test links with --wrap=hs_txn_set_work_ops), to run the check alone. */
void __real_hs_txn_set_work_ops(const struct hs_txn_work_ops *ops);
void __wrap_hs_txn_set_work_ops(const struct hs_txn_work_ops *ops);
static const struct hs_txn_work_ops *enabled_ops;

void __wrap_hs_txn_set_work_ops(const struct hs_txn_work_ops *ops)
{
	if (ops)
		enabled_ops = ops;
	__real_hs_txn_set_work_ops(ops);
}

#define OOM_LINES 50000
#define OOM_PIECES 8    /* more lookups than a scan answers: the 5th builds an index */

struct oom_check {
	const char *dir;
	struct hs_txn_work *work;
	rlim_t room;    /* address space beyond what the child holds */
};

/* In a child: the check with room bytes of address space left.  0: every
 * piece FINISH; 1: the check failed (no verdict, the journal stays); 3: a
 * verdict other than FINISH, though passwd has every piece's user. */
static int check_with_room(void *arg)
{
	const struct oom_check *c = arg;
	enum hs_txn_verdict verdict[OOM_PIECES];
	bool undo[OOM_PIECES] = { false };
	unsigned long pages = 0;
	FILE *fp = fopen("/proc/self/statm", "r");
	bool ok = fp && fscanf(fp, "%lu", &pages) == 1;
	struct rlimit as;

	if (fp)
		fclose(fp);
	if (!ok || getrlimit(RLIMIT_AS, &as) < 0)
		return 2;
	as.rlim_cur = pages * (rlim_t)sysconf(_SC_PAGESIZE) + c->room;
	if (setrlimit(RLIMIT_AS, &as) < 0)
		return 2;
	if (enabled_ops->check(c->dir, c->work, undo, OOM_PIECES, verdict) < 0)
		return 1;
	for (size_t i = 0; i < OOM_PIECES; i++)
		if (verdict[i] != HS_TXN_FINISH)
			return 3;
	return 0;
}

/* A lookup in passwd that ran out of memory answers "no such user": the
 * check took that for a deleted account and undid the new user's
 * directory.  At every address space, the check either fails or finds
 * every user passwd has; the bisection for the smallest one in which it
 * succeeds probes where the index of the fifth lookup cannot be had. */
static void test_work_check_out_of_memory_judges_nothing(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_txn_work work[OOM_PIECES];
	char paths[OOM_PIECES][32], line[128];
	_cleanup_strbuf_ struct hs_buf text = { NULL, 0, 0 };
	struct oom_check c = { .dir = f->path, .work = work };
	rlim_t lo = 0, hi = (rlim_t)1 << 28;
	int st;

#ifdef UNDER_ASAN
	skip();
#endif
	assert_int_equal(hs_strbuf_append(&text, "root:x:0:0::/root:/bin/sh\n", 26), 0);
	for (unsigned i = 0; i < OOM_LINES; i++) {
		int n = snprintf(line, sizeof(line), "u%u:x:%u:100::/home/u%u:/bin/sh\n", i,
				 10000 + i, i);
		assert_int_equal(hs_strbuf_append(&text, line, (size_t)n), 0);
	}
	assert_int_equal(hs_strbuf_append(&text, "", 1), 0);
	put_str(f->dfd, "passwd", text.data, getuid(), getgid(), 0644);
	for (unsigned i = 0; i < OOM_PIECES; i++) {
		unsigned u = OOM_LINES - 1 - i;

		snprintf(paths[i], sizeof(paths[i]), "/tree/u%u", u);
		work[i] = (struct hs_txn_work){
			.kind = HS_TXN_TREE_NEW, .path = paths[i], .uid = 10000 + u,
		};
	}
	hs_txn_work_enable();
	assert_non_null(enabled_ops);
	c.room = hi;
	assert_int_equal(in_child(check_with_room, &c), 0);
	while (hi - lo > 4096) {
		c.room = lo + (hi - lo) / 2;
		st = in_child(check_with_room, &c);
		assert_int_not_equal(st, 3);
		if (st == 0)
			hi = c.room;
		else
			lo = c.room;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_replaces_all_and_backs_up, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_commit_creates_missing_file, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_crash_before_commit_point_is_old_state, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_commit_over_stale_staged_files, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_staged_copy_cut_short_is_not_committed, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_staged_copy_takes_a_mode_changed_since_the_read,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_crash_after_commit_point_is_finished, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_file_changed_since_crash_keeps_the_newer_version,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_file_changed_since_keeps_what_was_installed,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_journal_is_left_alone, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_journal_questions_for_every_kind, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_failure_before_commit_point_changes_nothing,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_install_failure_rolls_back, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_single_file_commit, setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_single_file_crash_before_rename, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_prepared_work_is_undone, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_commit_does_the_work, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_work_left_for_a_root_tool, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_work_kept_by_a_recovery_is_said_once_per_run,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_work_of_a_home_passwd_no_longer_names_is_undone,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_work_is_not_judged_by_a_passwd_cut_short,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_long_recovery_message_is_cut_between_pieces,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_prepared_work_survives_a_setid_commit, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_unmarked_tree_is_not_listed, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_stale_reserved_dirs_are_swept, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_recover_sweeps_temp_files, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_recover_sweeps_litter_in_its_listing, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_kill_at_every_syscall_one_file, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_kill_at_every_syscall_two_files, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_kill_at_every_syscall_over_leftovers, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_killed_recovery_of_a_changed_file, setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_syncs_come_in_the_order_a_power_loss_needs,
						setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_work_check_out_of_memory_judges_nothing,
						setup, tmp_dirs_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
