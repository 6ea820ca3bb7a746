/* Unit tests for lib/etc/accountset.c: which files a set locks and loads, the
 * membership edits kept the same in /etc/group and /etc/gshadow, the
 * write order's result on disk, and the locks released on close.  The
 * files live under a mkdtemp root (hs_accountset_use_root). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/syscall.h>

#include "accountset.h"
#include "test_helpers.h"

static const char group_text[] =
	"root:x:0:\n"
	"wheel:x:10:alice,bob\n"
	"staff:x:50:bob\n"
	"alice:x:1000:\n";
static const char gshadow_text[] =
	"root:*::\n"
	"wheel:!:bob:alice,bob\n"
	"staff:!:alice:bob\n";

static int setup(void **state)
{
	struct tmp_dirs *f;

	tmp_dirs_setup(state);
	f = *state;
	put_etc_files(f->dfd, "root:x:0:0:root:/root:/bin/bash\n"
		      "alice:x:1000:1000::/home/alice:/bin/sh\n", group_text, gshadow_text);
	hs_accountset_use_root(f->path);
	return 0;
}

static int teardown(void **state)
{
	hs_accountset_use_root(NULL);
	return tmp_dirs_teardown(state);
}

static void open_set_flags(struct hs_accountset *s, unsigned files, unsigned flags)
{
	int r = hs_accountset_open(s, files, flags);

	if (r < 0)
		fail_msg("%s", s->error);
}

static void open_set(struct hs_accountset *s, unsigned files)
{
	int r = hs_accountset_open(s, files, 0);

	if (r < 0)
		fail_msg("%s", s->error);
}

static void test_open_uses_existing_files_only(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct stat st;

	open_set(&s, HS_AS_ALL_FILES);
	assert_non_null(hs_accountset_db(&s, HS_AS_PASSWD));
	assert_non_null(hs_accountset_db(&s, HS_AS_GROUP));
	assert_non_null(hs_accountset_db(&s, HS_AS_GSHADOW));
	/* optional files that do not exist are not part of the set */
	assert_null(hs_accountset_db(&s, HS_AS_SHADOW));
	assert_null(hs_accountset_db(&s, HS_AS_SUBUID));
	assert_int_equal(fstatat(f->dfd, "etc/group.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->dfd, "etc/subuid.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
	hs_accountset_close(&s);
	assert_int_not_equal(fstatat(f->dfd, "etc/group.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_not_equal(fstatat(f->dfd, "etc/passwd.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
	/* closing twice is harmless */
	hs_accountset_close(&s);
}

static void test_open_missing_passwd_fails_and_names_it(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct stat st;

	assert_int_equal(unlinkat(f->dfd, "etc/passwd", 0), 0);
	assert_true(hs_accountset_open(&s, HS_AS_USER_FILES, 0) < 0);
	assert_int_equal(s.failed, HS_AS_PASSWD);
	assert_false(s.lock_failed);
	assert_non_null(strstr(s.error, "/etc/passwd"));
	/* nothing stays locked */
	assert_int_not_equal(fstatat(f->dfd, "etc/group.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
	hs_accountset_close(&s);
}

static void test_open_bad_line_fails(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	put_str(f->dfd, "etc/group", "root:x:0:\nbroken\n", getuid(), getgid(), 0644);
	assert_true(hs_accountset_open(&s, HS_AS_GROUP_FILES, 0) < 0);
	assert_int_equal(s.failed, HS_AS_GROUP);
	assert_non_null(strstr(s.error, "/etc/group:2"));
	/* the lenient load (pwck, grpck) keeps it */
	assert_int_equal(hs_accountset_open(&s, HS_AS_GROUP_FILES, HS_DB_LENIENT), 0);
	assert_int_equal(hs_accountset_db(&s, HS_AS_GROUP)->n_entries, 1);
	hs_accountset_close(&s);
}

static void test_lock_failure_is_told_apart(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	/* /etc/.pwd.lock cannot be opened: fails at once, as a lock */
	assert_int_equal(mkdirat(f->dfd, "etc/.pwd.lock", 0700), 0);
	assert_true(hs_accountset_open(&s, HS_AS_USER_FILES, 0) < 0);
	assert_true(s.lock_failed);
	assert_non_null(strstr(s.error, "cannot lock"));
	hs_accountset_close(&s);
}

static void membership_edits(void **state, unsigned flags)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *gr;
	long staff, alice;

	open_set_flags(&s, HS_AS_USER_FILES, flags);
	gr = hs_accountset_db(&s, HS_AS_GROUP);
	staff = hs_accountdb_find(gr, "staff");
	alice = hs_accountdb_find(gr, "alice");
	assert_true(staff > 0 && alice > 0);

	assert_int_equal(hs_accountset_add_member(&s, (size_t)staff, "carol"), 1);
	assert_int_equal(hs_accountset_add_member(&s, (size_t)staff, "carol"), 0);
	/* a group without a gshadow line changes /etc/group only */
	assert_int_equal(hs_accountset_add_member(&s, (size_t)alice, "bob"), 1);
	assert_int_equal(hs_accountset_remove_member(&s, (size_t)staff, "bob"), 1);
	assert_int_equal(hs_accountset_remove_member(&s, (size_t)staff, "nobody"), 0);
	/* bob: member of wheel, admin of wheel, member of alice */
	assert_int_equal(hs_accountset_rename_user(&s, "bob", "robert"), 1);
	/* alice: member of wheel, admin of staff */
	assert_int_equal(hs_accountset_forget_user(&s, "alice"), 1);
	assert_int_equal(hs_accountset_forget_user(&s, "alice"), 0);
	assert_int_equal(hs_accountset_commit(&s), 0);
	hs_accountset_close(&s);

	assert_string_equal(slurp(f->dfd, "etc/group"),
			    "root:x:0:\n"
			    "wheel:x:10:robert\n"
			    "staff:x:50:carol\n"
			    "alice:x:1000:robert\n");
	assert_string_equal(slurp(f->dfd, "etc/gshadow"),
			    "root:*::\n"
			    "wheel:!:robert:robert\n"
			    "staff:!::carol\n");
	/* the backups hold what was there before */
	assert_string_equal(slurp(f->dfd, "etc/group-"), group_text);
	assert_string_equal(slurp(f->dfd, "etc/gshadow-"), gshadow_text);
}

static void test_membership_edits(void **state)
{
	membership_edits(state, 0);
}

static void test_membership_edits_lazy(void **state)
{
	membership_edits(state, HS_DB_LAZY);
}

/* forget_user and rename_user look at a line's text first: a name that is
 * only part of another, or the group's own name, changes nothing, and on a
 * lazy set the lines that cannot name the user are never parsed. */
static void test_list_edits_match_whole_names(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *gr, *gs;

	put_str(f->dfd, "etc/group", "al:x:1:\nalice:x:2:xal,alx,al\nbig:x:3:\n"
		"ops:x:4:alx\n", getuid(), getgid(), 0644);
	put_str(f->dfd, "etc/gshadow", "al:!::\nalice:al::xal,alx\nbig:$6$al$al::\n",
		getuid(), getgid(), 0640);
	open_set_flags(&s, HS_AS_GROUP_FILES, HS_DB_LAZY);
	gr = hs_accountset_db(&s, HS_AS_GROUP);
	gs = hs_accountset_db(&s, HS_AS_GSHADOW);
	assert_int_equal(hs_accountset_forget_user(&s, "al"), 1);
	/* "ops:x:4:alx" holds "al" as text, so it was looked at; "al:x:1:"
	 * only as its own name, so it was not */
	assert_null(gr->lines[0].text);
	assert_null(gs->lines[0].text);
	assert_int_equal(hs_accountset_rename_user(&s, "alx", "bob"), 1);
	assert_int_equal(hs_accountset_forget_user(&s, "nobody"), 0);
	assert_int_equal(hs_accountset_commit(&s), 0);
	hs_accountset_close(&s);
	assert_string_equal(slurp(f->dfd, "etc/group"),
			    "al:x:1:\nalice:x:2:xal,bob\nbig:x:3:\nops:x:4:bob\n");
	assert_string_equal(slurp(f->dfd, "etc/gshadow"),
			    "al:!::\nalice:al::xal,bob\nbig:$6$al$al::\n");
}

static void test_rename_onto_existing_member_keeps_one(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	open_set(&s, HS_AS_GROUP_FILES);
	/* wheel has alice,bob: renaming alice to bob must not list bob twice */
	assert_int_equal(hs_accountset_rename_user(&s, "alice", "bob"), 1);
	assert_int_equal(hs_accountset_commit(&s), 0);
	hs_accountset_close(&s);
	assert_string_equal(slurp(f->dfd, "etc/group"),
			    "root:x:0:\n"
			    "wheel:x:10:bob\n"
			    "staff:x:50:bob\n"
			    "alice:x:1000:\n");
}

static void test_commit_without_changes_writes_nothing(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct stat st;

	open_set(&s, HS_AS_ALL_FILES);
	assert_int_equal(hs_accountset_commit(&s), 0);
	assert_false(s.committed);
	hs_accountset_close(&s);
	assert_int_not_equal(fstatat(f->dfd, "etc/group-", &st, AT_SYMLINK_NOFOLLOW), 0);
}

static void test_commit_failure_names_the_file(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *gr;

	open_set(&s, HS_AS_GROUP_FILES);
	gr = hs_accountset_db(&s, HS_AS_GROUP);
	assert_int_equal(hs_accountset_add_member(&s, (size_t)hs_accountdb_find(gr, "root"),
						  "alice"), 1);
	/* the gshadow backup cannot be written (a non-empty directory is in
	 * its place, which stops root too): gshadow is written before group,
	 * so neither changes */
	assert_int_equal(mkdirat(f->dfd, "etc/gshadow-", 0755), 0);
	put_str(f->dfd, "etc/gshadow-/x", "x", getuid(), getgid(), 0644);
	assert_true(hs_accountset_commit(&s) < 0);
	assert_int_equal(s.failed, HS_AS_GSHADOW);
	assert_non_null(strstr(s.error, "/etc/gshadow"));
	hs_accountset_close(&s);
	assert_string_equal(slurp(f->dfd, "etc/group"), group_text);
	assert_string_equal(slurp(f->dfd, "etc/gshadow"), gshadow_text);
}

/* renameat, for this program: the library's calls come here.  A rename
 * onto fail_rename_to fails with EIO (a disk that stops writing), so a
 * test can break the putting back of a file after a failed commit. */
static const char *fail_rename_to;

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	if (fail_rename_to && strcmp(newpath, fail_rename_to) == 0) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, 0);
}

/* The file that failed is the one the commit reports, whatever else its
 * message names: here /etc/passwd cannot be installed, and /etc/subuid,
 * installed before it, cannot be put back.  The message names both; the
 * exit code (useradd's 1, not 16) follows /etc/passwd. */
static void test_commit_failure_names_the_failed_file_not_another(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *pw, *su;

	put_str(f->dfd, "etc/subuid", "alice:100000:65536\n", getuid(), getgid(), 0644);
	open_set(&s, HS_AS_BIT(HS_AS_PASSWD) | HS_AS_BIT(HS_AS_SUBUID));
	pw = hs_accountset_db(&s, HS_AS_PASSWD);
	su = hs_accountset_db(&s, HS_AS_SUBUID);
	assert_true(hs_accountdb_append(pw, &(struct hs_passwd){ "bob", "x", 1001, 1001, "",
								"/home/bob", "/bin/sh" }) >= 0);
	assert_true(hs_accountdb_append(su, &(struct hs_subid){ "bob", 165536, 65536 }) >= 0);
	/* the passwd backup's name is a non-empty directory */
	assert_int_equal(mkdirat(f->dfd, "etc/passwd-", 0755), 0);
	put_str(f->dfd, "etc/passwd-/x", "x", getuid(), getgid(), 0644);
	fail_rename_to = "subuid";
	assert_true(hs_accountset_commit(&s) < 0);
	fail_rename_to = NULL;
	assert_non_null(strstr(s.error, "/etc/passwd-: "));
	assert_non_null(strstr(s.error, "/etc/subuid cannot be put back"));
	assert_int_equal(s.failed, HS_AS_PASSWD);
	hs_accountset_close(&s);
}

/* A set reads and replaces its files in the directory it locked: an
 * /etc swapped for another after the locks (a restore from a backup, a
 * root that moves it aside) is not written unlocked, and the locked one
 * gets the change with its lock files. */
static void test_commit_goes_to_the_locked_directory(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *gr;
	struct stat st;

	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(renameat(f->dfd, "etc", f->dfd, "etc-locked"), 0);
	assert_int_equal(mkdirat(f->dfd, "etc", 0755), 0);
	put_str(f->dfd, "etc/group", group_text, getuid(), getgid(), 0644);
	put_str(f->dfd, "etc/gshadow", gshadow_text, getuid(), getgid(), 0640);
	gr = hs_accountset_db(&s, HS_AS_GROUP);
	assert_int_equal(hs_accountset_add_member(&s, (size_t)hs_accountdb_find(gr, "root"),
						  "alice"), 1);
	assert_int_equal(hs_accountset_commit(&s), 0);
	hs_accountset_close(&s);
	assert_string_equal(slurp(f->dfd, "etc/group"), group_text);
	assert_string_equal(slurp(f->dfd, "etc/gshadow"), gshadow_text);
	assert_non_null(strstr(slurp(f->dfd, "etc-locked/group"), "root:x:0:alice\n"));
	assert_non_null(strstr(slurp(f->dfd, "etc-locked/gshadow"), "root:*::alice\n"));
	assert_int_not_equal(fstatat(f->dfd, "etc/group-", &st, AT_SYMLINK_NOFOLLOW), 0);
}

/* After the release the locks' directory fd is closed and its number
 * free for the next open: nothing may be written through it then. */
static void test_no_write_through_a_released_directory_fd(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	struct hs_accountdb *gr;
	struct stat st;
	int other, freed;

	open_set(&s, HS_AS_GROUP_FILES);
	gr = hs_accountset_db(&s, HS_AS_GROUP);
	assert_int_equal(hs_accountset_add_member(&s, (size_t)hs_accountdb_find(gr, "root"),
						  "alice"), 1);
	freed = s.locks.etc_fd;
	assert_true(freed > 2);
	hs_accountset_unlock(&s);
	assert_int_equal(mkdirat(f->dfd, "other", 0755), 0);
	/* the same files (hard links), so that only the directory differs */
	assert_int_equal(linkat(f->dfd, "etc/group", f->dfd, "other/group", 0), 0);
	assert_int_equal(linkat(f->dfd, "etc/gshadow", f->dfd, "other/gshadow", 0), 0);
	other = openat(f->dfd, "other", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(other >= 0);
	/* the number the next open would take */
	if (other != freed) {
		assert_int_equal(dup2(other, freed), freed);
		close(other);
		other = freed;
	}
	(void)hs_accountset_commit(&s);
	hs_accountset_close(&s);
	assert_int_not_equal(fstatat(other, "group-", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_string_equal(slurp(f->dfd, "other/group"), group_text);
	close(other);
}

/* A lookup in a file of the set that ran out of memory ("no staff",
 * maybe wrongly) stops the commit of any file of the set: passwd is not
 * written on a decision that rests on it, though group is unchanged. */
static int commit_after_lookup_out_of_memory(void *arg)
{
	struct hs_accountset s;
	struct hs_passwd p;
	void **fill;
	long i;

	(void)arg;
	signal(SIGSEGV, SIG_DFL);
	if (hs_accountset_open(&s, HS_AS_BIT(HS_AS_PASSWD) | HS_AS_GROUP_FILES, HS_DB_LAZY) < 0)
		return 2;
	fill = fill_address_space();
	if (!fill)
		return 3;
	i = hs_accountdb_find(&s.db[HS_AS_GROUP], "staff");
	fill_free(fill);
	if (i != -1)
		return 4;
	i = hs_accountdb_find(&s.db[HS_AS_PASSWD], "alice");
	if (i < 0)
		return 5;
	p = hs_accountdb_get(&s.db[HS_AS_PASSWD], (size_t)i)->pw;
	p.gecos = "no staff";
	if (hs_accountdb_replace(&s.db[HS_AS_PASSWD], (size_t)i, &p) < 0)
		return 6;
	if (hs_accountset_commit(&s) != -ENOMEM || s.failed != HS_AS_GROUP ||
	    !strstr(s.error, "cannot read") || !strstr(s.error, "/etc/group"))
		return 7;
	hs_accountset_close(&s);
	return 0;
}

static void test_commit_after_lookup_out_of_memory(void **state)
{
	struct tmp_dirs *f = *state;

	assert_int_equal(in_child_capped(commit_after_lookup_out_of_memory, NULL), 0);
	assert_null(strstr(slurp(f->dfd, "etc/passwd"), "no staff"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_uses_existing_files_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing_passwd_fails_and_names_it, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_bad_line_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_failure_is_told_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_membership_edits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_membership_edits_lazy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_after_lookup_out_of_memory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_list_edits_match_whole_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_onto_existing_member_keeps_one, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_commit_without_changes_writes_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_commit_failure_names_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_failure_names_the_failed_file_not_another,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_goes_to_the_locked_directory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_write_through_a_released_directory_fd,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
