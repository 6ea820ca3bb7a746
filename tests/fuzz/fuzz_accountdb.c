/* Fuzz target for whole account files as the tools load them
 * (lib/etc/accountdb.c): the split into lines and its counts, the id pass,
 * name lookups before and after an add, and the bytes written back.  The
 * first input byte picks the kind and the load flags; the rest is the
 * file.  Any violation abort()s, so libFuzzer and the replay test report
 * it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accountdb.h"
#include "strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* The file as hs_accountdb_serialize writes a changed db: every line with
 * a newline, the new one before line at (the first NIS line). */
static void check_written(const struct hs_accountdb *db, const char *text, size_t len,
			  size_t at, const char *added)
{
	struct hs_buf out = { 0 }, want = { 0 };
	size_t line = 0, start = 0;

	for (size_t k = 0; k <= len; k++) {
		if (k < len && text[k] != '\n')
			continue;
		if (k == len && start == len)
			break;
		if (line++ == at)
			CHECK(hs_strbuf_append(&want, added, strlen(added)) == 0);
		CHECK(hs_strbuf_append(&want, text + start, k - start) == 0);
		CHECK(hs_strbuf_append(&want, "\n", 1) == 0);
		start = k + 1;
	}
	if (line == at)
		CHECK(hs_strbuf_append(&want, added, strlen(added)) == 0);
	CHECK(hs_accountdb_serialize(db, &out) == 0);
	CHECK(out.len == want.len && memcmp(out.data, want.data, out.len) == 0);
	hs_strbuf_free(&out);
	hs_strbuf_free(&want);
}

/* An unchanged db writes back the bytes as loaded. */
static void check_unchanged(const struct hs_accountdb *db, const char *text, size_t len)
{
	struct hs_buf out = { 0 };

	CHECK(hs_accountdb_serialize(db, &out) == 0);
	CHECK(out.len == len && (len == 0 || memcmp(out.data, text, len) == 0));
	hs_strbuf_free(&out);
}

/* The id pass gives, in order, the ids the lines give one by one. */
static void check_ids(const struct hs_accountdb *db)
{
	unsigned long ids[7], id;
	size_t from = 0, line = 0, n;

	while ((n = hs_accountdb_ids(db, &from, ids, 7)) > 0)
		for (size_t k = 0; k < n; k++, line++) {
			while (line < db->n_lines && !hs_accountdb_id(db, line, &id))
				line++;
			CHECK(line < db->n_lines && id == ids[k]);
		}
	while (line < db->n_lines)
		CHECK(!hs_accountdb_id(db, line++, &id));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned flag_sets[] = {
		0, HS_DB_LAZY, HS_DB_LAZY | HS_DB_LENIENT, HS_DB_LENIENT,
	};
	const struct hs_group added = { .name = "fz0", .passwd = "x", .gid = 4242, .members = "" };
	struct hs_accountdb db;
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0, lines = 0, start = 0, nis_first;
	long found, at;

	if (size == 0)
		return 0;
	if (hs_accountdb_load_data(&db, (enum hs_db_kind)(data[0] % 5), "/fuzz/file", text, len,
				   flag_sets[data[0] / 5 % 4]) < 0)
		return 0;
	/* the lines are the input's, in order */
	for (size_t k = 0; k <= len; k++) {
		size_t tl;
		const char *t;

		if (k < len && text[k] != '\n')
			continue;
		if (k == len && start == len)
			break;
		t = hs_accountdb_text(&db, lines++, &tl);
		CHECK(t && tl == k - start && memcmp(t, text + start, tl) == 0);
		start = k + 1;
	}
	CHECK(db.n_lines == lines && db.n_entries <= lines);
	nis_first = db.nis_first;
	CHECK(nis_first <= lines);
	check_ids(&db);
	check_unchanged(&db, text, len);
	/* a lookup gives a line of that name, and the same answer twice */
	found = hs_accountdb_find(&db, added.name);
	CHECK(hs_accountdb_find(&db, added.name) == found);
	if (found >= 0) {
		size_t tl;
		const char *t = hs_accountdb_text(&db, (size_t)found, &tl);

		CHECK(tl > 3 && memcmp(t, "fz0:", 4) == 0);
	}
	/* an add of that name: refused when it is there, else found at once
	 * and written before the first NIS line */
	if (db.kind == HS_DB_GROUP) {
		at = hs_accountdb_append(&db, &added);
		CHECK(found < 0 || at < 0);
		if (at >= 0) {
			CHECK(hs_accountdb_find(&db, added.name) == at);
			CHECK(hs_accountdb_append(&db, &added) < 0);
			check_written(&db, text, len, nis_first, "fz0:x:4242:\n");
		} else {
			check_unchanged(&db, text, len);
		}
		check_ids(&db);
	}
	hs_accountdb_free(&db);
	return 0;
}
