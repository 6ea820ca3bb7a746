/* Unit tests for the login records of lib/admin/logrecords.c that su and
 * login append (wtmp, btmp, SULOG_FILE): appended whole while another
 * process holds the fcntl lock glibc's updwtmpx() takes (the writer waits
 * for no one and holds nothing), out of the way of that process's write at
 * the end it took before, never created unless asked, never through
 * a symlink, a FIFO or a file that is not root's; FTMP_FILE names btmp;
 * utmp updated in its slot, found and written while another holds the lock.
 * Files live in a mkdtemp directory (root's, 0700). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utmpx.h>

#include "config.h"
#include "logrecords.h"
#include "test_helpers.h"

static char *path_in(const struct tmp_dirs *f, const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof buf, "%s/%s", f->path, name);
	return buf;
}

static off_t size_of(const struct tmp_dirs *f, const char *name)
{
	struct stat st;

	assert_int_equal(fstatat(f->dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_size;
}

static void test_fill(void **state)
{
	struct utmpx ut;

	(void)state;
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "a-user-name-of-more-than-32-bytes-x", "pts/3",
				"3", "192.0.2.7");
	assert_int_equal(ut.ut_type, LOGIN_PROCESS);
	assert_int_equal(ut.ut_pid, getpid());
	/* cut to the field, no NUL needed when full */
	assert_memory_equal(ut.ut_user, "a-user-name-of-more-than-32-bytes-x", sizeof(ut.ut_user));
	assert_string_equal(ut.ut_line, "pts/3");
	assert_string_equal(ut.ut_id, "3");
	assert_string_equal(ut.ut_host, "192.0.2.7");
	assert_memory_equal(ut.ut_addr_v6, "\xc0\x00\x02\x07", 4);
	assert_true(ut.ut_tv.tv_sec > 0);
	hs_logrecords_utmp_fill(&ut, DEAD_PROCESS, NULL, "tty1", NULL, "host.example");
	assert_string_equal(ut.ut_user, "");
	assert_string_equal(ut.ut_id, "");
	assert_int_equal(ut.ut_addr_v6[0], 0);
}

/* Another writer (glibc's updwtmpx(), stopped by whoever could) holds the
 * whole file's write lock: the records still go in, at once, each behind
 * an empty one that the other writer overwrites when it goes on at the end
 * it took before; without the lock, one record alone. */
static void test_append_under_anothers_lock(void **state)
{
	struct tmp_dirs *f = *state;
	struct utmpx ut, got[5];
	int ready[2], done[2], fd;
	char c;

	if (geteuid() != 0)
		skip();
	put_str(f->dfd, "btmp", "", 0, 0, 0660);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		struct utmpx theirs;

		fd = openat(f->dfd, "btmp", O_WRONLY);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		if (read(done[0], &c, 1) != 1)
			_exit(2);
		/* updwtmpx() going on: the end it took before it stopped */
		hs_logrecords_utmp_fill(&theirs, LOGIN_PROCESS, "theirs", "pts/9", "9", NULL);
		_exit(pwrite(fd, &theirs, sizeof(theirs), 0) == sizeof(theirs) ? 0 : 3);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	GUARD_START();
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "alice", "pts/1", "1", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "btmp"), &ut), 0);
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "bob", "pts/2", "2", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "btmp"), &ut), 0);
	GUARD_END();
	assert_int_equal(write(done[1], "x", 1), 1);
	assert_int_equal(wait_status(pid), 0);
	/* the lock is gone: one record */
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "carol", "pts/3", "3", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "btmp"), &ut), 0);
	assert_int_equal(size_of(f, "btmp"), 5 * (off_t)sizeof(ut));
	fd = openat(f->dfd, "btmp", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hs_read_full(fd, got, sizeof(got)), (ssize_t)sizeof(got));
	close(fd);
	assert_string_equal(got[0].ut_user, "theirs");
	assert_string_equal(got[1].ut_user, "alice");
	assert_int_equal(got[2].ut_type, EMPTY);
	assert_string_equal(got[3].ut_user, "bob");
	assert_string_equal(got[4].ut_user, "carol");
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(done[i]);
	}
}

/* utmp while another process holds glibc's lock (a stopped utempter): pid's
 * entry (getty's) is found, login's USER_PROCESS and DEAD_PROCESS go into
 * that slot in place, an entry with no slot is appended (behind zeros for
 * a cut record and an empty record for the lock holder's write at the end
 * it took), nothing waits.  Without the lock, ours is taken and let go. */
static void test_put_utmp_under_anothers_lock(void **state)
{
	struct tmp_dirs *f = *state;
	struct utmpx ut, got[6], init[2];
	int ready[2], done[2], fd;
	char c;

	if (geteuid() != 0)
		skip();
	hs_logrecords_utmp_fill(&init[0], USER_PROCESS, "bob", "pts/2", "ts/2", NULL);
	hs_logrecords_utmp_fill(&init[1], LOGIN_PROCESS, "LOGIN", "pts/1", "ts/1", NULL);
	init[0].ut_pid = 1;
	init[1].ut_pid = 4242;
	put_str(f->dfd, "utmp", "", 0, 0, 0664);
	fd = openat(f->dfd, "utmp", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, init, sizeof(init)), (ssize_t)sizeof(init));
	assert_int_equal(write(fd, "cut", 3), 3);
	close(fd);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		fd = openat(f->dfd, "utmp", O_RDWR);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		_exit(read(done[0], &c, 1) == 1 ? 0 : 2);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	GUARD_START();
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 4242, NULL, &ut), 0);
	assert_memory_equal(ut.ut_id, "ts/1", 4);
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 4242, "pts/1", &ut), 0);
	assert_memory_equal(ut.ut_id, "ts/1", 4);
	/* getty's (LOGIN_PROCESS) counts on any line: getty may name it by a link */
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 4242, "ttyS0", &ut), 0);
	assert_memory_equal(ut.ut_id, "ts/1", 4);
	/* a stale USER_PROCESS entry of pid 1 (bob's) on another line is not pid 1's */
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 1, "pts/1", &ut), -ENOENT);
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 1, "pts/2", &ut), 0);
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 4243, NULL, &ut), -ENOENT);
	assert_int_equal(hs_logrecords_utmp_find(path_in(f, "utmp"), 0, "pts/2", &ut), 0);
	assert_string_equal(ut.ut_user, "bob");
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "alice", "pts/1", "ts/1", NULL);
	assert_int_equal(hs_logrecords_put_utmp(path_in(f, "utmp"), &ut), 0);
	assert_int_equal(size_of(f, "utmp"), 2 * (off_t)sizeof(ut) + 3);
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "carol", "pts/3", "ts/3", NULL);
	assert_int_equal(hs_logrecords_put_utmp(path_in(f, "utmp"), &ut), 0);
	hs_logrecords_utmp_fill(&ut, DEAD_PROCESS, NULL, "pts/1", "ts/1", NULL);
	assert_int_equal(hs_logrecords_put_utmp(path_in(f, "utmp"), &ut), 0);
	hs_logrecords_utmp_fill(&ut, BOOT_TIME, NULL, NULL, NULL, NULL);
	assert_int_equal(hs_logrecords_put_utmp(path_in(f, "utmp"), &ut), -EINVAL);
	GUARD_END();
	assert_int_equal(write(done[1], "x", 1), 1);
	assert_int_equal(wait_status(pid), 0);
	/* the lock free: the slot found again, nothing appended */
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "dave", "pts/3", "ts/3", NULL);
	assert_int_equal(hs_logrecords_put_utmp(path_in(f, "utmp"), &ut), 0);
	assert_int_equal(size_of(f, "utmp"), 5 * (off_t)sizeof(ut));
	fd = openat(f->dfd, "utmp", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hs_read_full(fd, got, sizeof(got)), 5 * (ssize_t)sizeof(ut));
	close(fd);
	assert_string_equal(got[0].ut_user, "bob");
	assert_int_equal(got[1].ut_type, DEAD_PROCESS);
	assert_memory_equal(got[1].ut_id, "ts/1", 4);
	assert_int_equal(got[1].ut_pid, getpid());
	assert_memory_equal(&got[2], "cut", 3);
	assert_int_equal(got[3].ut_type, EMPTY);
	assert_string_equal(got[4].ut_user, "dave");
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(done[i]);
	}
}

/* A record cut short before (a full disk, a crash): ours goes in at the
 * record size, behind zeros that complete the cut one, so last(1) reads it
 * and glibc's next writer, which cuts the file back to the record size,
 * does not cut through it. */
static void test_append_after_a_cut_record(void **state)
{
	struct tmp_dirs *f = *state;
	struct utmpx ut, got[2];
	int fd;

	if (geteuid() != 0)
		skip();
	put_str(f->dfd, "wtmp", "cut record", 0, 0, 0664);
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "alice", "pts/1", "1", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "wtmp"), &ut), 0);
	assert_int_equal(size_of(f, "wtmp"), 2 * (off_t)sizeof(ut));
	fd = openat(f->dfd, "wtmp", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hs_read_full(fd, got, sizeof(got)), (ssize_t)sizeof(got));
	close(fd);
	assert_memory_equal(&got[0], "cut record", 10);
	assert_string_equal(got[1].ut_user, "alice");
	assert_int_equal(got[1].ut_type, USER_PROCESS);
}

/* The caller's RLIMIT_FSIZE, soft and hard (ulimit -f), a few bytes past
 * the logs' size: each record or line goes in whole (the limit lifted for
 * the write, where the process may: CAP_SYS_RESOURCE) or not at all
 * (-EFBIG), never cut, and the caller's limit is left as it was.  One that
 * it does not cut needs no lifting. */
static int append_under_fsize(void *arg)
{
	const struct tmp_dirs *f = arg;
	const struct rlimit small = { 10, 10 }, fits = { 4096, 4096 };
	const struct sigaction ign = { .sa_handler = SIG_IGN };
	struct rlimit now;
	struct utmpx ut;
	int r;

	/* as hs_privs_init does for a limit it cannot lift */
	if (sigaction(SIGXFSZ, &ign, NULL) < 0 || setrlimit(RLIMIT_FSIZE, &fits) < 0)
		return 10;
	r = hs_logrecords_append(path_in(f, "sulog"), "SU 12/06 12:00 - pts/2 bob-carol\n", 33,
				 true);
	if (r != 0 || size_of(f, "sulog") != 33)
		return 11;
	if (setrlimit(RLIMIT_FSIZE, &small) < 0)
		return 12;
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "alice", "pts/1", "1", NULL);
	r = hs_logrecords_append_utmp(path_in(f, "btmp"), &ut);
	if (r != 0 && r != -EFBIG)
		return 13;
	if (size_of(f, "btmp") != (r == 0 ? (off_t)sizeof(ut) : 0))
		return 14;
	r = hs_logrecords_append(path_in(f, "sulog"), "SU 12/06 12:01 - pts/1 alice-bob\n", 33,
				 true);
	if (r != 0 && r != -EFBIG)
		return 15;
	if (size_of(f, "sulog") != (r == 0 ? 66 : 33))
		return 16;
	/* utmp in place: its slot, past the limit too, written whole or not at all */
	hs_logrecords_utmp_fill(&ut, DEAD_PROCESS, NULL, "pts/1", "ts/1", NULL);
	r = hs_logrecords_put_utmp(path_in(f, "utmp"), &ut);
	if ((r != 0 && r != -EFBIG) || size_of(f, "utmp") != 2 * (off_t)sizeof(ut))
		return 18;
	if (getrlimit(RLIMIT_FSIZE, &now) < 0 || now.rlim_cur != 10 || now.rlim_max != 10)
		return 17;
	return 0;
}

static void test_append_under_callers_fsize(void **state)
{
	struct tmp_dirs *f = *state;
	struct utmpx ut, got[2];
	int fd;

	if (geteuid() != 0)
		skip();
	put_str(f->dfd, "btmp", "", 0, 0, 0660);
	put_str(f->dfd, "sulog", "", 0, 0, 0600);
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "bob", "pts/2", "ts/2", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "utmp"), &ut), -ENOENT);
	put_str(f->dfd, "utmp", "", 0, 0, 0664);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "utmp"), &ut), 0);
	hs_logrecords_utmp_fill(&ut, USER_PROCESS, "alice", "pts/1", "ts/1", NULL);
	assert_int_equal(hs_logrecords_append_utmp(path_in(f, "utmp"), &ut), 0);
	assert_int_equal(in_child(append_under_fsize, f), 0);
	fd = openat(f->dfd, "utmp", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hs_read_full(fd, got, sizeof(got)), (ssize_t)sizeof(got));
	close(fd);
	assert_true(got[1].ut_type == DEAD_PROCESS ||
		    (got[1].ut_type == USER_PROCESS && !strcmp(got[1].ut_user, "alice")));
}

/* su's log: a line cut short before is ended by a newline in the same
 * write, so the next caller's line starts a line; a line with another
 * newline inside (a forged second line) is refused. */
static void test_append_line_after_a_cut_one(void **state)
{
	struct tmp_dirs *f = *state;

	if (geteuid() != 0)
		skip();
	put_str(f->dfd, "sulog", "SU 12/06 12:00 - pts/1 alice-b", 0, 0, 0600);
	assert_int_equal(hs_logrecords_append_line(path_in(f, "sulog"), "two\n", 4, false), 0);
	assert_int_equal(hs_logrecords_append_line(path_in(f, "sulog"), "three\n", 6, false), 0);
	assert_string_equal(slurp(f->dfd, "sulog"), "SU 12/06 12:00 - pts/1 alice-b\ntwo\nthree\n");
	assert_int_equal(hs_logrecords_append_line(path_in(f, "sulog"), "a\nb\n", 4, false),
			 -EINVAL);
	assert_int_equal(hs_logrecords_append_line(path_in(f, "sulog"), "no newline", 10, false),
			 -EINVAL);
	/* an empty file, made when asked */
	assert_int_equal(hs_logrecords_append_line(path_in(f, "new"), "one\n", 4, true), 0);
	assert_string_equal(slurp(f->dfd, "new"), "one\n");
}

static void test_missing_and_created(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;

	if (geteuid() != 0)
		skip();
	/* btmp and wtmp are never made: no file, no record */
	assert_int_equal(hs_logrecords_append(path_in(f, "btmp"), "rec", 3, false), -ENOENT);
	assert_int_equal(faccessat(f->dfd, "btmp", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* the su log is, root's and 0600 */
	assert_int_equal(hs_logrecords_append(path_in(f, "sulog"), "line\n", 5, true), 0);
	assert_int_equal(hs_logrecords_append(path_in(f, "sulog"), "two\n", 4, true), 0);
	assert_string_equal(slurp(f->dfd, "sulog"), "line\ntwo\n");
	assert_int_equal(fstatat(f->dfd, "sulog", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(hs_logrecords_append("relative/btmp", "rec", 3, false), -EINVAL);
}

static void test_hostile_files(void **state)
{
	struct tmp_dirs *f = *state;

	if (geteuid() != 0)
		skip();
	/* a symlink is not followed, even to a file of root's */
	put_str(f->ofd, "target", "", 0, 0, 0600);
	char target[128];
	snprintf(target, sizeof target, "%s/target", f->outside);
	assert_int_equal(symlinkat(target, f->dfd, "btmp"), 0);
	assert_true(hs_logrecords_append(path_in(f, "btmp"), "rec", 3, true) < 0);
	assert_int_equal(size_of(f, "btmp"), (off_t)strlen(target));
	assert_int_equal(unlinkat(f->dfd, "btmp", 0), 0);
	/* a FIFO neither blocks nor is written */
	assert_int_equal(mkfifoat(f->dfd, "btmp", 0600), 0);
	GUARD_START();
	assert_int_equal(hs_logrecords_append(path_in(f, "btmp"), "rec", 3, false), -ENXIO);
	GUARD_END();
	assert_int_equal(unlinkat(f->dfd, "btmp", 0), 0);
	/* a user's file */
	put_str(f->dfd, "btmp", "", 1000, 1000, 0666);
	assert_int_equal(hs_logrecords_append(path_in(f, "btmp"), "rec", 3, false), -HS_E_OWNER);
	assert_int_equal(size_of(f, "btmp"), 0);
	/* a directory */
	assert_int_equal(unlinkat(f->dfd, "btmp", 0), 0);
	assert_int_equal(mkdirat(f->dfd, "btmp", 0700), 0);
	assert_true(hs_logrecords_append(path_in(f, "btmp"), "rec", 3, false) < 0);
	assert_int_equal(unlinkat(f->dfd, "btmp", AT_REMOVEDIR), 0);
}

static void test_ftmp_file(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_config *defs = NULL;
	struct utmpx ut;
	char text[256];

	if (geteuid() != 0)
		skip();
	snprintf(text, sizeof text, "FTMP_FILE %s\n", path_in(f, "failures"));
	assert_int_equal(hs_config_logindefs_parse(text, strlen(text), "login.defs", NULL, NULL,
						   &defs), 0);
	put_str(f->dfd, "failures", "", 0, 0, 0660);
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, "carol", "tty2", "2", NULL);
	assert_int_equal(hs_logrecords_failure(defs, &ut), 0);
	assert_int_equal(size_of(f, "failures"), (off_t)sizeof(ut));
	hs_config_free(defs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill),
		cmocka_unit_test_setup_teardown(test_append_under_anothers_lock, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_put_utmp_under_anothers_lock, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_append_after_a_cut_record, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_append_under_callers_fsize, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_append_line_after_a_cut_one, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_created, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_files, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_ftmp_file, tmp_dirs_setup, tmp_dirs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
