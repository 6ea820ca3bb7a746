/* Unit tests for lib/admin/groupops.c: the group edits that keep /etc/group and
 * /etc/gshadow telling the same story (a gshadow line made when missing,
 * members healed to /etc/group's, passwords moved out of /etc/group, a
 * stale gshadow line never inherited), user lists, the hash and -K
 * checks, and the commit that puts an already written file back when a
 * later one fails.  The files live under a mkdtemp root
 * (hs_accountset_use_root). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>

#include "globalfile.h"
#include "groupops.h"
#include "test_helpers.h"

static const char passwd_text[] =
	"root:x:0:0:root:/root:/bin/bash\n"
	"alice:x:1000:1000::/home/alice:/bin/sh\n"
	"bob:x:1001:50::/home/bob:/bin/sh\n";
static const char group_text[] =
	"root:x:0:\n"
	"staff:x:50:bob\n"
	"alice:x:1000:\n"
	"legacy:$6$salt$hash:60:alice\n"
	"drift:x:70:alice,bob\n";
static const char gshadow_text[] =
	"root:*::\n"
	"staff:!:alice:bob\n"
	"alice:!::\n"
	"drift:!:bob:alice\n"
	"ghost:$6$old$hash:mallory:\n";

static int setup(void **state)
{
	struct tmp_dirs *f;

	tmp_dirs_setup(state);
	f = *state;
	put_etc_files(f->dfd, passwd_text, group_text, gshadow_text);
	hs_accountset_use_root(f->path);
	return 0;
}

static int teardown(void **state)
{
	hs_accountset_use_root(NULL);
	return tmp_dirs_teardown(state);
}

static void open_set(struct hs_accountset *s, unsigned files)
{
	if (hs_accountset_open(s, files, 0) < 0)
		fail_msg("%s", s->error);
}

static char *file(struct tmp_dirs *f, const char *name)
{
	char path[128], *data = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", f->path, name);
	assert_int_equal(hs_globalfile_read(path, &data, &len), 0);
	return data;
}

/* name holds line as a whole line */
static void assert_has_line(struct tmp_dirs *f, const char *name, const char *line)
{
	_cleanup_free_ char *data = file(f, name);
	_cleanup_free_ char *hay = NULL, *needle = NULL;

	assert_true(asprintf(&hay, "\n%s", data) > 0);
	assert_true(asprintf(&needle, "\n%s\n", line) > 0);
	if (!strstr(hay, needle))
		fail_msg("%s lacks the line %s:\n%s", name, line, data);
}

/* name does not contain text */
static void assert_lacks(struct tmp_dirs *f, const char *name, const char *text)
{
	_cleanup_free_ char *data = file(f, name);

	if (strstr(data, text))
		fail_msg("%s holds %s:\n%s", name, text, data);
}

static long find(struct hs_accountset *s, const char *name)
{
	long gi = hs_groupops_find(s, name);

	assert_true(gi >= 0);
	return gi;
}

static void commit(struct hs_accountset *s)
{
	if (hs_accountset_commit(s) < 0)
		fail_msg("%s", s->error);
	hs_accountset_close(s);
}

static void test_parse_gid(void **state)
{
	gid_t g = 0;

	(void)state;
	assert_int_equal(hs_groupops_parse_gid("0", &g), 0);
	assert_int_equal(hs_groupops_parse_gid("4294967294", &g), 0);
	assert_int_equal(g, 4294967294U);
	static const char *const bad[] = { "-1", "4294967295", "+5", " 5", "5 ", "010", "0x10",
					   "", "99999999999999999999", "1e3" };
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++)
		assert_true(hs_groupops_parse_gid(bad[i], &g) < 0);
}

static void test_members_both_files_and_healing(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	open_set(&s, HS_AS_GROUP_FILES);
	/* drift: gshadow said alice only; any edit heals it to /etc/group's */
	assert_int_equal(hs_groupops_add_member(&s, (size_t)find(&s, "drift"), "carol"), 1);
	assert_int_equal(hs_groupops_add_member(&s, (size_t)find(&s, "staff"), "bob"), 0);
	assert_int_equal(hs_groupops_set_members(&s, (size_t)find(&s, "alice"), "bob,carol"), 1);
	commit(&s);
	assert_has_line(f, "etc/group", "drift:x:70:alice,bob,carol");
	assert_has_line(f, "etc/gshadow", "drift:!:bob:alice,bob,carol");
	assert_has_line(f, "etc/group", "alice:x:1000:bob,carol");
	assert_has_line(f, "etc/gshadow", "alice:!::bob,carol");

	/* remove: members only, or members and administrators */
	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_remove_member(&s, (size_t)find(&s, "drift"), "bob", false), 1);
	assert_int_equal(hs_groupops_remove_member(&s, (size_t)find(&s, "staff"), "alice", true),
			 1);
	commit(&s);
	assert_has_line(f, "etc/gshadow", "drift:!:bob:alice,carol");
	assert_has_line(f, "etc/gshadow", "staff:!::bob");
}

static void test_missing_gshadow_line_made_password_moved(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_set_admins(&s, (size_t)find(&s, "legacy"), "bob"), 1);
	commit(&s);
	assert_has_line(f, "etc/group", "legacy:x:60:alice");
	assert_has_line(f, "etc/gshadow", "legacy:$6$salt$hash:bob:alice");

	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_set_password(&s, (size_t)find(&s, "legacy"), "!"), 1);
	commit(&s);
	assert_has_line(f, "etc/gshadow", "legacy:!:bob:alice");
}

static void test_without_gshadow(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;

	assert_int_equal(unlinkat(f->dfd, "etc/gshadow", 0), 0);
	open_set(&s, HS_AS_GROUP_FILES);
	assert_null(hs_groupops_gshadow(&s));
	assert_int_equal(hs_groupops_gshadow_line(&s, (size_t)find(&s, "staff")), -1);
	assert_int_equal(hs_groupops_set_password(&s, (size_t)find(&s, "staff"), "!"), 1);
	assert_true(hs_groupops_set_admins(&s, (size_t)find(&s, "staff"), "bob") < 0);
	assert_true(hs_groupops_add(&s, "new", 80, NULL, "bob", NULL) >= 0);
	commit(&s);
	assert_has_line(f, "etc/group", "staff:!:50:bob");
	assert_has_line(f, "etc/group", "new:x:80:bob");
	assert_int_equal(faccessat(f->dfd, "etc/gshadow", F_OK, 0), -1);
}

/* Every entry point taking a group index refuses one that names no line
 * (past the end, or a deleted line) with -EINVAL and s->error, changing
 * nothing: rename without gshadow read the missing line through NULL. */
static void check_bad_index(struct hs_accountset *s, size_t gi)
{
	bool stale = true;

	assert_int_equal(hs_groupops_rename(s, gi, "renamed", &stale), -EINVAL);
	assert_false(stale);
	assert_non_null(strstr(s->error, "no group at line"));
	assert_int_equal(hs_groupops_gshadow_line(s, gi), -EINVAL);
	assert_int_equal(hs_groupops_set_members(s, gi, "alice"), -EINVAL);
	assert_int_equal(hs_groupops_add_member(s, gi, "alice"), -EINVAL);
	assert_int_equal(hs_groupops_remove_member(s, gi, "bob", true), -EINVAL);
	assert_int_equal(hs_groupops_set_admins(s, gi, "alice"), -EINVAL);
	assert_int_equal(hs_groupops_set_password(s, gi, "!"), -EINVAL);
	assert_int_equal(hs_groupops_set_gid(s, gi, 99), -EINVAL);
	assert_int_equal(hs_groupops_delete(s, gi), -EINVAL);
}

/* A lazily read group line that cannot be had for want of memory is no
 * bad index: the caller hears "out of memory", not "no group at line N"
 * (which reads as a broken file), and nothing is written after it. */
static int index_out_of_memory(void *arg)
{
	struct hs_accountset s;
	void **fill;
	int r;

	(void)arg;
	signal(SIGSEGV, SIG_DFL);
	if (hs_accountset_open(&s, HS_AS_GROUP_FILES, HS_DB_LAZY) < 0)
		return 2;
	fill = fill_address_space();
	if (!fill)
		return 3;
	r = hs_groupops_set_members(&s, 3, "alice");   /* legacy: not read yet */
	fill_free(fill);
	if (r != -ENOMEM)
		return 4;
	if (!strstr(s.error, "Cannot allocate memory") || s.failed != HS_AS_GROUP)
		return 5;
	hs_accountset_close(&s);
	return 0;
}

static void test_index_out_of_memory_says_so(void **state)
{
	(void)state;
	assert_int_equal(in_child_capped(index_out_of_memory, NULL), 0);
}

static void test_bad_index_refused(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	const size_t bad[] = { 5, 6, 1000, (size_t)-1 };    /* group has 5 lines */
	size_t drift;

	for (int with_gshadow = 1; with_gshadow >= 0; with_gshadow--) {
		if (!with_gshadow)
			assert_int_equal(unlinkat(f->dfd, "etc/gshadow", 0), 0);
		open_set(&s, HS_AS_GROUP_FILES);
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
			check_bad_index(&s, bad[i]);
		commit(&s);
		assert_string_equal(slurp(f->dfd, "etc/group"), group_text);
		if (with_gshadow)
			assert_string_equal(slurp(f->dfd, "etc/gshadow"), gshadow_text);
	}
	/* a deleted line */
	open_set(&s, HS_AS_GROUP_FILES);
	drift = (size_t)find(&s, "drift");
	assert_int_equal(hs_groupops_delete(&s, drift), 1);
	check_bad_index(&s, drift);
	commit(&s);
	assert_lacks(f, "etc/group", "drift");
	assert_lacks(f, "etc/group", "renamed");
	assert_has_line(f, "etc/group", "staff:x:50:bob");
}

static void test_add_replaces_stale_gshadow_line(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	bool stale = false;

	open_set(&s, HS_AS_GROUP_FILES);
	assert_true(hs_groupops_add(&s, "ghost", 90, NULL, "", &stale) >= 0);
	assert_true(stale);
	assert_true(hs_groupops_add(&s, "staff", 91, NULL, "", NULL) == -EEXIST);
	assert_non_null(strstr(s.error, "already exists"));
	commit(&s);
	assert_has_line(f, "etc/group", "ghost:x:90:");
	assert_has_line(f, "etc/gshadow", "ghost:!::");
	assert_lacks(f, "etc/gshadow", "mallory");
}

static void test_rename_and_delete(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	bool stale = false;

	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_rename(&s, (size_t)find(&s, "staff"), "alice", NULL),
			 -EEXIST);
	/* a stale gshadow line of the new name goes first */
	assert_int_equal(hs_groupops_rename(&s, (size_t)find(&s, "staff"), "ghost", &stale), 1);
	assert_true(stale);
	assert_int_equal(hs_groupops_delete(&s, (size_t)find(&s, "drift")), 1);
	commit(&s);
	assert_has_line(f, "etc/group", "ghost:x:50:bob");
	assert_has_line(f, "etc/gshadow", "ghost:!:alice:bob");
	assert_lacks(f, "etc/gshadow", "mallory");
	assert_lacks(f, "etc/group", "drift");
	assert_lacks(f, "etc/gshadow", "drift");
}

static void test_gid_and_primary_users(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	long ui;

	open_set(&s, HS_AS_BIT(HS_AS_PASSWD) | HS_AS_GROUP_FILES);
	ui = hs_groupops_primary_user(&s, 50);
	assert_true(ui >= 0);
	assert_string_equal(hs_accountset_db(&s, HS_AS_PASSWD)->lines[ui].rec.pw.name, "bob");
	assert_int_equal(hs_groupops_primary_user(&s, 70), -1);
	assert_int_equal(hs_groupops_set_gid(&s, (size_t)find(&s, "staff"), 55), 1);
	assert_int_equal(hs_groupops_move_primary(&s, 50, 55), 1);
	commit(&s);
	assert_has_line(f, "etc/group", "staff:x:55:bob");
	assert_has_line(f, "etc/passwd", "bob:x:1001:55::/home/bob:/bin/sh");
	assert_has_line(f, "etc/passwd", "alice:x:1000:1000::/home/alice:/bin/sh");
}

static void test_user_list(void **state)
{
	struct hs_accountset s;
	char *out = NULL, bad[64];

	(void)state;
	open_set(&s, HS_AS_BIT(HS_AS_PASSWD) | HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_user_list(&s, "alice,bob,alice", false, &out, bad,
					       sizeof(bad)), 0);
	assert_string_equal(out, "alice,bob");
	free(out);
	assert_int_equal(hs_groupops_user_list(&s, "", false, &out, bad, sizeof(bad)), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(hs_groupops_user_list(&s, "alice,nosuch", false, &out, bad, sizeof(bad)),
			 -ENOENT);
	assert_null(out);
	assert_string_equal(bad, "nosuch");
	assert_int_equal(hs_groupops_user_list(&s, "alice,,bob", false, &out, bad, sizeof(bad)),
			 -HS_E_NAME);
	assert_string_equal(bad, "");
	assert_int_equal(hs_groupops_user_list(&s, "a:b", false, &out, bad, sizeof(bad)),
			 -HS_E_NAME);
	assert_int_equal(hs_groupops_user_list(&s, "alice\nroot", false, &out, bad, sizeof(bad)),
			 -HS_E_NAME);
	hs_accountset_close(&s);
}

static void test_overrides(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(hs_groupops_add_override(&buf, &len, "GID_MIN=7000"), 0);
	assert_int_equal(hs_groupops_add_override(&buf, &len, "SYS_GID_MAX=900"), 0);
	assert_int_equal(len, strlen("GID_MIN 7000\nSYS_GID_MAX 900\n"));
	assert_memory_equal(buf, "GID_MIN 7000\nSYS_GID_MAX 900\n", len);
	assert_int_equal(hs_groupops_add_override(&buf, &len, "GID_MIN"), -EINVAL);
	assert_int_equal(hs_groupops_add_override(&buf, &len, "=5"), -EINVAL);
	assert_int_equal(hs_groupops_add_override(&buf, &len, "A=1\nUID_MIN=0"), -EINVAL);
	assert_int_equal(hs_groupops_add_override(&buf, &len, "A=a b"), -EINVAL);
	free(buf);
}

static void test_failed_commit_puts_back(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountset s;
	_cleanup_free_ char *before_gs = file(f, "etc/gshadow");
	_cleanup_free_ char *before_gr = file(f, "etc/group");
	_cleanup_free_ char *after_gs = NULL, *after_gr = NULL;

	/* /etc/group's backup cannot be written (a directory in its place):
	 * the transaction stops before its commit point, nothing changes */
	assert_int_equal(mkdirat(f->dfd, "etc/group-", 0755), 0);
	assert_int_equal(mkdirat(f->dfd, "etc/group-/x", 0755), 0);
	open_set(&s, HS_AS_GROUP_FILES);
	assert_int_equal(hs_groupops_rename(&s, (size_t)find(&s, "staff"), "team", NULL), 1);
	assert_true(hs_accountset_commit(&s) < 0);
	assert_int_equal(s.failed, HS_AS_GROUP);
	assert_non_null(strstr(s.error, "cannot write"));
	assert_non_null(strstr(s.error, "/etc/group-"));
	hs_accountset_close(&s);
	after_gs = file(f, "etc/gshadow");
	after_gr = file(f, "etc/group");
	assert_string_equal(after_gs, before_gs);
	assert_string_equal(after_gr, before_gr);
}

/* stderr into a temporary file while fn runs; returns how many bytes
 * were written there */
static long stderr_bytes_during(void (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved;
	long n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(tmp), STDERR_FILENO), STDERR_FILENO);
	fn(arg);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = (long)lseek(fileno(tmp), 0, SEEK_END);
	fclose(tmp);
	return n;
}

struct finish_case {
	struct tmp_dirs *f;
	int edit_r;             /* the edits' result handed to finish */
	int r;
	struct hs_err err;
};

static void run_finish(void *arg)
{
	struct finish_case *c = arg;
	struct hs_accountset s;

	open_set(&s, HS_AS_GROUP_FILES);
	if (c->edit_r >= 0)
		assert_int_equal(hs_groupops_rename(&s, (size_t)find(&s, "staff"), "team", NULL), 1);
	else
		snprintf(s.error, sizeof(s.error), "group 'x' does not exist");
	c->r = hs_groupops_finish(&s, c->edit_r, &c->err, "rename", "renamed %s", "staff");
}

/* The library prints nothing: a failed commit, and an edit that failed
 * before it, come back in the error context, for the program to print. */
static void test_finish_hands_error_back(void **state)
{
	struct tmp_dirs *f = *state;
	struct finish_case c = { .f = f, .edit_r = 0, .err = HS_ERR_INIT };

	assert_int_equal(mkdirat(f->dfd, "etc/group-", 0755), 0);
	assert_int_equal(mkdirat(f->dfd, "etc/group-/x", 0755), 0);
	assert_int_equal(stderr_bytes_during(run_finish, &c), 0);
	assert_true(c.r < 0);
	assert_true(c.err.code < 0);
	assert_non_null(strstr(c.err.msg, "cannot write"));
	assert_non_null(strstr(c.err.msg, "/etc/group-"));
	assert_lacks(f, "etc/group", "team");

	struct finish_case e = { .f = f, .edit_r = -ENOENT, .err = HS_ERR_INIT };
	assert_int_equal(stderr_bytes_during(run_finish, &e), 0);
	assert_true(e.r < 0);
	assert_int_equal(e.err.code, -ENOENT);
	assert_string_equal(e.err.msg, "group 'x' does not exist");
}

/* A good commit leaves the context empty: nothing for the program to say. */
static void test_finish_success_says_nothing(void **state)
{
	struct tmp_dirs *f = *state;
	struct finish_case c = { .f = f, .edit_r = 0, .err = HS_ERR_INIT };

	assert_int_equal(stderr_bytes_during(run_finish, &c), 0);
	assert_int_equal(c.r, 0);
	assert_string_equal(c.err.msg, "");
	assert_has_line(f, "etc/group", "team:x:50:bob");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_gid),
		cmocka_unit_test_setup_teardown(test_members_both_files_and_healing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_gshadow_line_made_password_moved, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_without_gshadow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_index_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_out_of_memory_says_so, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_replaces_stale_gshadow_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_and_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gid_and_primary_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_list, setup, teardown),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test_setup_teardown(test_failed_commit_puts_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_hands_error_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_success_says_nothing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
