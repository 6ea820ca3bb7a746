/* Unit tests for lib/admin/ids.c: id ranges from login.defs, picking a new
 * uid/gid (normal: one past the highest in range, then the lowest gap;
 * system: highest free), a preferred id, full ranges, and subordinate
 * range allocation (first fit around existing, unsorted, overlapping
 * ranges; no room). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "accountdb.h"
#include "config.h"
#include "ids.h"
#include "util.h"

static struct hs_config *defs(const char *text)
{
	struct hs_config *c = NULL;

	assert_int_equal(hs_config_logindefs_parse(text, strlen(text), "login.defs", NULL, NULL, &c), 0);
	return c;
}

static void test_ranges(void **state)
{
	struct hs_id_range r;
	struct hs_config *c;

	(void)state;
	assert_int_equal(hs_ids_range(NULL, true, false, &r), 0);
	assert_int_equal(r.min, 1000);
	assert_int_equal(r.max, 60000);
	assert_int_equal(hs_ids_range(NULL, true, true, &r), 0);
	assert_int_equal(r.min, 101);
	assert_int_equal(r.max, 999);

	c = defs("UID_MIN 2000\nUID_MAX 3000\nGID_MIN 500\nSYS_GID_MIN 10\nSYS_GID_MAX 20\n");
	assert_int_equal(hs_ids_range(c, true, false, &r), 0);
	assert_int_equal(r.min, 2000);
	assert_int_equal(r.max, 3000);
	assert_int_equal(hs_ids_range(c, true, true, &r), 0);
	assert_int_equal(r.min, 101);
	assert_int_equal(r.max, 1999);
	assert_int_equal(hs_ids_range(c, false, true, &r), 0);
	assert_int_equal(r.min, 10);
	assert_int_equal(r.max, 20);
	hs_config_free(c);

	c = defs("UID_MIN 5000\nUID_MAX 4000\n");
	assert_int_equal(hs_ids_range(c, true, false, &r), -HS_E_RANGE);
	hs_config_free(c);
}

static void load(struct hs_accountdb *db, enum hs_db_kind kind, const char *text)
{
	assert_int_equal(hs_accountdb_load_data(db, kind, "/nonexistent/f", text, strlen(text), 0),
			 0);
}

static void test_pick(void **state)
{
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	struct hs_idset set = HS_IDSET_INIT;
	struct hs_id_range normal = { 1000, 1005 }, sys = { 101, 999 };
	unsigned long id;

	(void)state;
	/* empty: the bottom of the range (normal), the top (system) */
	assert_int_equal(hs_ids_pick(&set, &normal, false, HS_IDS_NO_PREFERENCE, &id), 0);
	assert_int_equal(id, 1000);
	assert_int_equal(hs_ids_pick(&set, &sys, true, HS_IDS_NO_PREFERENCE, &id), 0);
	assert_int_equal(id, 999);

	load(&db, HS_DB_PASSWD,
	     "root:x:0:0::/root:/bin/sh\n"
	     "a:x:1002:1002::/:/bin/sh\n"
	     "b:x:1000:1000::/:/bin/sh\n"
	     "nobody:x:65534:65534::/:/bin/sh\n"
	     "c:x:1002:1002::/:/bin/sh\n"      /* shared uid (-o) */
	     "s:x:999:999::/:/bin/sh\n"
	     "t:x:998:998::/:/bin/sh\n");
	assert_int_equal(hs_idset_add_db(&set, &db), 0);
	assert_true(hs_idset_contains(&set, 1002));
	assert_false(hs_idset_contains(&set, 1001));
	/* one past the highest in range, not the gap at 1001 */
	assert_int_equal(hs_ids_pick(&set, &normal, false, HS_IDS_NO_PREFERENCE, &id), 0);
	assert_int_equal(id, 1003);
	/* system: highest free, walking down over 999 and 998 */
	assert_int_equal(hs_ids_pick(&set, &sys, true, HS_IDS_NO_PREFERENCE, &id), 0);
	assert_int_equal(id, 997);
	/* a free preferred id wins; a used or out-of-range one does not */
	assert_int_equal(hs_ids_pick(&set, &normal, false, 1001, &id), 0);
	assert_int_equal(id, 1001);
	assert_int_equal(hs_ids_pick(&set, &normal, false, 1000, &id), 0);
	assert_int_equal(id, 1003);
	assert_int_equal(hs_ids_pick(&set, &normal, false, 7, &id), 0);
	assert_int_equal(id, 1003);

	/* the top taken: the lowest gap */
	assert_int_equal(hs_idset_add(&set, 1005), 0);
	assert_int_equal(hs_ids_pick(&set, &normal, false, HS_IDS_NO_PREFERENCE, &id), 0);
	assert_int_equal(id, 1001);
	/* full */
	for (unsigned long u = 1000; u <= 1005; u++)
		assert_int_equal(hs_idset_add(&set, u), 0);
	assert_int_equal(hs_ids_pick(&set, &normal, false, HS_IDS_NO_PREFERENCE, &id), -EUSERS);
	{
		struct hs_id_range tiny = { 998, 999 };

		assert_int_equal(hs_ids_pick(&set, &tiny, true, HS_IDS_NO_PREFERENCE, &id),
				 -EUSERS);
	}
	/* ids at the top of the id space */
	{
		struct hs_idset s2 = HS_IDSET_INIT;
		struct hs_id_range top = { 4294967290UL, 4294967294UL };

		assert_int_equal(hs_idset_add(&s2, 4294967294UL), 0);
		assert_int_equal(hs_ids_pick(&s2, &top, false, HS_IDS_NO_PREFERENCE, &id), 0);
		assert_int_equal(id, 4294967290UL);
		assert_int_equal(hs_ids_pick(&s2, &top, true, HS_IDS_NO_PREFERENCE, &id), 0);
		assert_int_equal(id, 4294967293UL);
		hs_idset_free(&s2);
	}
	hs_idset_free(&set);
	hs_accountdb_free(&db);
}

/* hs_ids_pick_db (one pass over the ids of a lazily loaded db) picks what
 * hs_ids_pick picks from the full set, for every range and preference. */
static void test_pick_db_same_as_set(void **state)
{
	static char many[700 * 24];
	const char *texts[] = {
		many,
		"",
		"root:x:0:0::/root:/bin/sh\na:x:1002:1002::/:/bin/sh\nb:x:1000:1000::/:/bin/sh\n"
		"c:x:1002:1002::/:/bin/sh\ns:x:999:999::/:/bin/sh\nt:x:1005:998::/:/bin/sh\n",
		"a:x:1000:1:::\nb:x:1001:1:::\nc:x:1002:1:::\nd:x:1003:1:::\ne:x:1004:1:::\n"
		"f:x:1005:1:::\n",
	};
	static const unsigned long mins[] = { 0, 998, 1000, 1001, 1003, 1006 };
	static const unsigned long maxs[] = { 999, 1002, 1003, 1005, 65534 };
	static const unsigned long prefs[] = { HS_IDS_NO_PREFERENCE, 1001, 1002, 7, 1004, 1006 };

	(void)state;
	/* more ids than one call of hs_accountdb_ids gives: 650 to 1350 but 1250 */
	for (size_t i = 0, len = 0; i < 700; i++)
		len += (size_t)sprintf(many + len, "u%zu:x:%zu:1:::\n", i, 650 + i + (i >= 600));
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
		struct hs_accountdb db = HS_ACCOUNTDB_INIT;
		struct hs_idset set = HS_IDSET_INIT;

		assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD, "/nonexistent/f",
							texts[t], strlen(texts[t]), HS_DB_LAZY), 0);
		assert_int_equal(hs_idset_add_db(&set, &db), 0);
		for (size_t a = 0; a < sizeof mins / sizeof mins[0]; a++)
		for (size_t b = 0; b < sizeof maxs / sizeof maxs[0]; b++)
		for (size_t p = 0; p < sizeof prefs / sizeof prefs[0]; p++)
		for (int sys = 0; sys < 2; sys++) {
			struct hs_id_range r = { mins[a], maxs[b] };
			unsigned long x = 0, y = 0;
			int rx = hs_ids_pick(&set, &r, sys, prefs[p], &x);
			int ry = hs_ids_pick_db(&db, &r, sys, prefs[p], &y);

			assert_int_equal(ry, rx);
			if (rx == 0)
				assert_int_equal(y, x);
		}
		/* the common case built no record */
		for (size_t i = 0; i < db.n_lines; i++)
			assert_null(db.lines[i].text);
		hs_idset_free(&set);
		hs_accountdb_free(&db);
	}
}

static void test_subid(void **state)
{
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	struct hs_ids_subid_conf c;
	unsigned long start;
	struct hs_config *cfg;

	(void)state;
	hs_ids_subid_conf(NULL, true, &c);
	assert_int_equal(c.min, 100000);
	assert_int_equal(c.max, 600100000);
	assert_int_equal(c.count, 65536);
	cfg = defs("SUB_GID_MIN 200000\nSUB_GID_COUNT 1000\n");
	hs_ids_subid_conf(cfg, false, &c);
	assert_int_equal(c.min, 200000);
	assert_int_equal(c.count, 1000);
	hs_config_free(cfg);

	load(&db, HS_DB_SUBID, "");
	c = (struct hs_ids_subid_conf){ 100000, 600100000, 65536 };
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), 0);
	assert_int_equal(start, 100000);
	hs_accountdb_free(&db);

	/* unsorted, with a gap too small for a range and one big enough */
	load(&db, HS_DB_SUBID,
	     "b:231072:65536\n"
	     "a:100000:65536\n"
	     "c:165537:100\n"      /* leaves a gap of 1 at 165536 */
	     "d:400000:1\n");
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), 0);
	assert_int_equal(start, 296608);
	c.count = 1;
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), 0);
	assert_int_equal(start, 165536);
	c.count = 0;
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), -EINVAL);
	/* no room below max */
	c = (struct hs_ids_subid_conf){ 100000, 300000, 65536 };
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), -EUSERS);
	/* a range that reaches exactly max fits */
	c = (struct hs_ids_subid_conf){ 100000, 296608 + 65535, 65536 };
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), 0);
	assert_int_equal(start, 296608);
	/* a range that ends at 2^32 */
	hs_accountdb_free(&db);
	load(&db, HS_DB_SUBID, "z:100000:4294867296\n");
	c = (struct hs_ids_subid_conf){ 100000, 4294967294UL, 1 };
	assert_int_equal(hs_ids_subid_pick(&db, &c, &start), -EUSERS);
	hs_accountdb_free(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_pick_db_same_as_set),
		cmocka_unit_test(test_subid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
