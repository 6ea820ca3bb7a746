/* Unit tests for the batch tools' library pieces: lib/admin/ids.c's subid
 * batch (the same ranges as hs_ids_subid_pick, one after the other), src/admin/batchio.c
 * (line limits, parallel work and its first failure), lib/admin/homedir.c
 * (reserved and built root's, never through a symlink) and the legacy-method rule
 * of lib/auth/hash.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>

#include "accountset.h"
#include "batchio.h"
#include "hash.h"
#include "homedir.h"
#include "ids.h"
#include "test_helpers.h"

/* ---- subid batch ---- */

static void load_subids(struct hs_accountdb *db, const char *text)
{
	assert_int_equal(hs_accountdb_load_data(db, HS_DB_SUBID, "/nonexistent/subuid", text,
						strlen(text), 0), 0);
}

/* n picks both ways: hs_ids_subid_pick with each range appended before the
 * next pick, and one batch. */
static void compare_picks(const char *text, const struct hs_ids_subid_conf *c, int n)
{
	struct hs_accountdb a = HS_ACCOUNTDB_INIT, bdb = HS_ACCOUNTDB_INIT;
	struct hs_ids_subid_batch b;

	load_subids(&a, text);
	load_subids(&bdb, text);
	assert_int_equal(hs_ids_subid_batch_init(&b, &bdb, c), 0);
	for (int i = 0; i < n; i++) {
		unsigned long one = 0, many = 0;
		char owner[16];
		struct hs_subid s = { .owner = owner, .count = c->count };
		int r1 = hs_ids_subid_pick(&a, c, &one), r2 = hs_ids_subid_batch_next(&b, &many);

		assert_int_equal(r1, r2);
		if (r1 < 0)
			break;
		assert_int_equal(one, many);
		snprintf(owner, sizeof owner, "u%d", i);
		s.start = one;
		assert_true(hs_accountdb_append(&a, &s) >= 0);
	}
	hs_ids_subid_batch_free(&b);
	hs_accountdb_free(&a);
	hs_accountdb_free(&bdb);
}

static void test_subid_batch_same_as_pick(void **state)
{
	struct hs_ids_subid_conf c = { .min = 100000, .max = 600100000, .count = 65536 };
	struct hs_ids_subid_conf small = { .min = 100, .max = 1000, .count = 100 };
	char text[8192];
	size_t len = 0;

	(void)state;
	compare_picks("", &c, 20);
	/* unsorted, overlapping, with gaps too small and one just right */
	compare_picks("a:300000:65536\nb:100000:65536\nc:165536:1000\nd:330000:10\n"
		      "e:500000:65536\nf:231072:65536\n", &c, 30);
	/* running out of room: both say -EUSERS at the same pick */
	compare_picks("a:250:100\nb:600:50\n", &small, 20);
	/* a pseudo-random layout */
	srand(7);
	for (int i = 0; i < 200; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "o%d:%d:%d\n", i,
					100 + rand() % 5000, 1 + rand() % 150);
	compare_picks(text, &small, 40);
	small.max = 100000;
	compare_picks(text, &small, 40);
	/* no count, no range */
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	struct hs_ids_subid_batch b;
	unsigned long s;
	struct hs_ids_subid_conf zero = { .min = 1, .max = 10, .count = 0 };

	load_subids(&db, "");
	assert_int_equal(hs_ids_subid_batch_init(&b, &db, &zero), 0);
	assert_int_equal(hs_ids_subid_batch_next(&b, &s), -EINVAL);
	hs_ids_subid_batch_free(&b);
	hs_accountdb_free(&db);
}

/* ---- batchio ---- */

static void test_read_line_limits(void **state)
{
	static const char input[] = "short\nabcdefghij\n\nnul\0byte\nlast";
	FILE *in = fmemopen((void *)input, sizeof input - 1, "r");
	char line[9];
	size_t len;

	(void)state;
	assert_non_null(in);
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), 1);
	assert_string_equal(line, "short");
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), -E2BIG);
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), 1);
	assert_int_equal(len, 0);
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), -EINVAL);
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), 1);
	assert_string_equal(line, "last");
	assert_int_equal(hs_batch_read_line(in, line, 8, &len), 0);
	fclose(in);
}

struct seen_lines {
	char text[4][16];
	unsigned long lineno[4];
	int n;
};

static void keep_line(void *ctx, char *line, unsigned long lineno)
{
	struct seen_lines *got = ctx;

	snprintf(got->text[got->n], sizeof(got->text[0]), "%s", line);
	got->lineno[got->n++] = lineno;
}

/* The good lines reach fn with their numbers; the bad ones are counted. */
static void test_read_lines(void **state)
{
	static const char input[] = "a:1\nabcdefghij\nnul\0byte\n\nlast";
	FILE *in = fmemopen((void *)input, sizeof input - 1, "r");
	struct seen_lines got = { .n = 0 };
	unsigned long errors = 0;

	(void)state;
	assert_non_null(in);
	hs_batch_read_lines(in, "test input", 8, &errors, keep_line, &got);
	fclose(in);
	assert_int_equal(errors, 2);
	assert_int_equal(got.n, 3);
	assert_string_equal(got.text[0], "a:1");
	assert_int_equal(got.lineno[0], 1);
	assert_string_equal(got.text[1], "");
	assert_int_equal(got.lineno[1], 4);
	assert_string_equal(got.text[2], "last");
	assert_int_equal(got.lineno[2], 5);
}

static void test_seen_names(void **state)
{
	void *set = NULL;

	(void)state;
	assert_int_equal(hs_batch_seen_find(&set, "alice"), 0);
	assert_int_equal(hs_batch_seen_add(&set, "alice", 3), 0);
	assert_int_equal(hs_batch_seen_add(&set, "bob", 4), 0);
	assert_int_equal(hs_batch_seen_add(&set, "alice", 9), 3);
	assert_int_equal(hs_batch_seen_find(&set, "bob"), 4);
	assert_int_equal(hs_batch_seen_find(&set, "carol"), 0);
	hs_batch_seen_free(&set);
	assert_null(set);
}

static atomic_int done[1000];

static int mark(void *ctx, size_t i)
{
	(void)ctx;
	atomic_fetch_add(&done[i], 1);
	return 0;
}

static int fail_from_500(void *ctx, size_t i)
{
	(void)ctx;
	return i >= 500 && i % 100 == 0 ? -EIO : 0;
}

static void test_parallel_for(void **state)
{
	size_t failed = 12345;

	(void)state;
	assert_int_equal(hs_parallel_for(1000, mark, NULL, &failed), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(atomic_load(&done[i]), 1);
	assert_int_equal(failed, 12345);
	assert_int_equal(hs_parallel_for(0, mark, NULL, &failed), 0);
	assert_int_equal(hs_parallel_for(1000, fail_from_500, NULL, &failed), -EIO);
	assert_true(failed >= 500 && failed % 100 == 0);
}

/* ---- homedir ---- */

static void test_home_reserve_and_build(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_homedir_build hb = { .parentfd = -1 };
	struct hs_err err = HS_ERR_INIT;
	char home[128], link[128];
	struct stat st;

	if (geteuid() != 0)
		skip();
	/* mkdtemp's directory is root's 0700 below /tmp (sticky): trusted */
	snprintf(home, sizeof home, "%s/a/b/home", f->path);
	assert_int_equal(hs_homedir_reserve(home, &hb, &err), 0);
	assert_int_equal(hs_homedir_build(&hb, home, NULL, 4242, 4343, &err), 0);
	/* built root's 0700 under the reserved name; the journal hands it over */
	assert_int_equal(fstatat(hb.parentfd, hb.tmp, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_not_equal(lstat(home, &st), 0);
	hs_close(hb.parentfd);
	/* the parents it made are root's 0755 */
	snprintf(link, sizeof link, "%s/a/b", f->path);
	assert_int_equal(stat(link, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* a symlink at the home path is never followed */
	snprintf(link, sizeof link, "%s/a/b/link", f->path);
	assert_int_equal(symlink(f->outside, link), 0);
	assert_int_equal(hs_homedir_reserve(link, &hb, &err), -1);
	hs_close(hb.parentfd);
	assert_non_null(strstr(err.msg, "symbolic link"));
	/* a parent someone else owns is refused */
	assert_int_equal(fchown(f->ofd, 4242, 4242), 0);
	snprintf(home, sizeof home, "%s/x", f->outside);
	assert_int_equal(hs_homedir_reserve(home, &hb, &err), -1);
	assert_non_null(strstr(err.msg, "not root's"));
	assert_int_equal(fchown(f->ofd, 0, 0), 0);
}

/* ---- the legacy rule ---- */

static void test_legacy_rule(void **state)
{
	struct hs_hash_policy p;
	const char *name = NULL, *problem = NULL;

	(void)state;
	assert_int_equal(hs_hash_policy_from_method("MD5", 0, &p), 0);
	assert_int_equal(hs_hash_policy_check_legacy(&p, false, &name), -HS_E_METHOD);
	assert_string_equal(name, "MD5");
	assert_int_equal(hs_hash_policy_check_legacy(&p, true, NULL), 0);
	assert_int_equal(hs_hash_policy_from_method("sha256", 5000, &p), 0);
	assert_int_equal(hs_hash_policy_check_legacy(&p, false, &name), -HS_E_METHOD);
	assert_string_equal(name, "SHA256");
	for (const char *const *m = (const char *const[]){ "SHA512", "YESCRYPT", "BCRYPT", NULL };
	     *m; m++) {
		assert_int_equal(hs_hash_policy_from_method(*m, 0, &p), 0);
		assert_int_equal(hs_hash_policy_check_legacy(&p, false, &name), 0);
	}
	/* given hashes */
	assert_int_equal(hs_hash_check_given("*", &problem), 0);
	assert_int_equal(hs_hash_check_given("!*", &problem), 0);
	assert_int_equal(hs_hash_check_given("$1$abcdefgh$0123456789abcdefghijkl", &problem), 1);
	assert_int_equal(hs_hash_check_given("!$1$abcdefgh$0123456789abcdefghijkl", &problem), 1);
	assert_int_equal(hs_hash_check_given("clear-text", &problem), -1);
	assert_non_null(strstr(problem, "clear text"));
	assert_int_equal(hs_hash_check_given("", &problem), -1);
	assert_int_equal(hs_hash_check_given("$6$a:b", &problem), -1);
	assert_non_null(strstr(problem, "':'"));
	/* verifiable: what hs_hash_verify_password would run crypt on */
	assert_false(hs_hash_verifiable("!$6$salt$hash", true));
	assert_false(hs_hash_verifiable("", true));
	assert_false(hs_hash_verifiable("$1$abcdefgh$0123456789abcdefghijkl", false));
	assert_true(hs_hash_verifiable("$1$abcdefgh$0123456789abcdefghijkl", true));
	assert_int_equal(hs_hash_classify("$5$abc$def"), HS_HASH_LEGACY);
	assert_int_equal(hs_hash_classify("$9$x"), HS_HASH_INVALID);
	/* two characters of a DES salt: legacy to libxcrypt */
	assert_int_equal(hs_hash_classify("ab01234567890"), HS_HASH_LEGACY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subid_batch_same_as_pick),
		cmocka_unit_test(test_read_line_limits),
		cmocka_unit_test(test_read_lines),
		cmocka_unit_test(test_seen_names),
		cmocka_unit_test(test_parallel_for),
		cmocka_unit_test_setup_teardown(test_home_reserve_and_build, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test(test_legacy_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
