/* Unit tests for lib/format/ldif.c: every value the writer emits is read
 * back byte for byte, hostile values (newlines, CR, NUL, a leading colon,
 * space or '<', a trailing space, UTF-8, control bytes) are base64 and can
 * never start a second attribute or entry, long lines fold, and the reader
 * refuses what it does not support. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldif.h"
#include "strbuf.h"
#include "util.h"

static const struct {
	const char *value;
	size_t len;
	bool safe;
} values[] = {
	{ "plain", 5, true },
	{ "", 0, true },
	{ "{CRYPT}$y$j9T$abc$def", 21, true },
	{ "two\nlines", 9, false },
	{ "cr\rhere", 7, false },
	{ "nul\0inside", 10, false },
	{ ":colon first", 12, false },
	{ " space first", 12, false },
	{ "<file:///etc/shadow", 19, false },
	{ "trailing ", 9, false },
	{ "\xc3\x89rin \xc3\x91o\xc3\xb1o", 12, false },
	{ "esc\x1b[2Jape", 10, false },
	{ "del\x7f", 4, false },
	{ "dn: cn=evil\nuserPassword: x", 27, false },
};

static void test_value_safe(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		assert_int_equal(hs_ldif_value_safe(values[i].value, values[i].len), values[i].safe);
}

/* Write one entry holding every value, read it back: same bytes, one
 * entry, no attribute the input did not write. */
static void test_round_trip_hostile(void **state)
{
	struct hs_buf b = { 0 };
	struct hs_ldif l;
	struct hs_err err = HS_ERR_INIT;
	size_t n = sizeof(values) / sizeof(values[0]);

	(void)state;
	assert_int_equal(hs_ldif_append_str(&b, "dn", "uid=a,ou=People,dc=x"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hs_ldif_append(&b, "description", values[i].value, values[i].len), 0);
	assert_int_equal(hs_strbuf_append(&b, "\n", 1), 0);
	/* no physical line but the first starts an attribute of its own
	 * except "description" */
	for (char *p = strchr(b.data, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
		assert_true(p[1] == ' ' || p[1] == '\n' || strncmp(p + 1, "description:", 12) == 0);
	assert_int_equal(hs_ldif_parse(b.data, b.len, &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.e[0].dn, "uid=a,ou=People,dc=x");
	assert_int_equal(l.e[0].n, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(l.e[0].v[i].attr, "description");
		assert_int_equal(l.e[0].v[i].len, values[i].len);
		assert_memory_equal(l.e[0].v[i].value, values[i].value, values[i].len);
	}
	hs_ldif_free(&l);
	hs_strbuf_free(&b);
}

static void test_fold(void **state)
{
	struct hs_buf b = { 0 };
	char value[300];
	struct hs_ldif l;

	(void)state;
	memset(value, 'x', sizeof(value));
	assert_int_equal(hs_ldif_append_str(&b, "dn", "cn=x"), 0);
	assert_int_equal(hs_ldif_append(&b, "description", value, sizeof(value)), 0);
	for (char *line = b.data; *line; ) {
		char *nl = strchr(line, '\n');

		assert_non_null(nl);
		assert_true(nl - line <= 76);
		line = nl + 1;
	}
	assert_int_equal(hs_ldif_parse(b.data, b.len, &l, NULL), 0);
	assert_int_equal(l.e[0].v[0].len, sizeof(value));
	assert_memory_equal(l.e[0].v[0].value, value, sizeof(value));
	hs_ldif_free(&l);
	hs_strbuf_free(&b);
}

static void test_bad_attribute_names(void **state)
{
	struct hs_buf b = { 0 };

	(void)state;
	assert_int_equal(hs_ldif_append_str(&b, "bad name", "x"), -EINVAL);
	assert_int_equal(hs_ldif_append_str(&b, "x:y", "x"), -EINVAL);
	assert_int_equal(hs_ldif_append_str(&b, "1st", "x"), -EINVAL);
	assert_int_equal(hs_ldif_append_str(&b, "cn;", "x"), -EINVAL);
	assert_int_equal(hs_ldif_append_str(&b, "cn;lang-de", "x"), 0);
	hs_strbuf_free(&b);
}

static void test_parse_forms(void **state)
{
	static const char text[] =
		"version: 1\r\n"
		"# a comment\r\n"
		"#  continued\r\n"
		"dn: uid=a,dc=x\r\n"
		"objectClass: top\r\n"
		"objectClass: posixAccount\r\n"
		"cn:  two spaces\r\n"
		"de\r\n"
		" scription:: aGVs\r\n"
		" bG8=\r\n"
		"\r\n"
		"\r\n"
		"dn:: Y249w6k=\n"
		"cn: last without newline";
	struct hs_ldif l;
	size_t i = 0;

	(void)state;
	assert_int_equal(hs_ldif_parse(text, sizeof(text) - 1, &l, NULL), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.e[0].lineno, 4);
	assert_true(hs_ldif_has_class(&l.e[0], "POSIXACCOUNT"));
	assert_false(hs_ldif_has_class(&l.e[0], "shadowAccount"));
	assert_string_equal(hs_ldif_next(&l.e[0], "CN", &i)->value, "two spaces");
	assert_null(hs_ldif_next(&l.e[0], "cn", &i));
	i = 0;
	assert_string_equal(hs_ldif_next(&l.e[0], "description", &i)->value, "hello");
	assert_string_equal(l.e[1].dn, "cn=\xc3\xa9");
	assert_string_equal(l.e[1].v[0].value, "last without newline");
	hs_ldif_free(&l);
}

/* No input is no entry; the last physical line may end a folded value
 * with no newline after it, and line numbers go on across a comment's
 * continuation. */
static void test_parse_edges(void **state)
{
	static const char text[] = "# c\n more\ndn: cn=a\ncn: fol\n ded";
	struct hs_ldif l;

	(void)state;
	assert_int_equal(hs_ldif_parse(NULL, 0, &l, NULL), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(hs_ldif_parse("", 0, &l, NULL), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(hs_ldif_parse(text, sizeof(text) - 1, &l, NULL), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.e[0].lineno, 3);
	assert_int_equal(l.e[0].n, 1);
	assert_string_equal(l.e[0].v[0].value, "folded");
	assert_int_equal(l.e[0].v[0].len, 6);
	hs_ldif_free(&l);
}

static void expect_error(const char *text, const char *msg)
{
	struct hs_ldif l;
	struct hs_err err = HS_ERR_INIT;

	assert_int_equal(hs_ldif_parse(text, strlen(text), &l, &err), -HS_E_FORMAT);
	if (!strstr(err.msg, msg))
		fail_msg("for %s: got \"%s\", want \"%s\"", text, err.msg, msg);
	assert_int_equal(l.n, 0);
	assert_null(l.e);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	expect_error("dn: cn=a\nchangetype: delete\n", "line 2: change records are not supported");
	expect_error("dn: cn=a\nuserPassword:< file:///etc/shadow\n", "line 2: URL values");
	expect_error("dn: cn=a\ncn:: !!!!\n", "line 2: invalid base64 value of cn");
	expect_error("dn: cn=a\ncn:: YQ=\n", "invalid base64");
	expect_error("dn: cn=a\ncn:: YQ==YQ==\n", "invalid base64");
	expect_error(" continued\n", "line 1: a continuation line with nothing to continue");
	/* the blank line ends the entry: the attribute must not vanish */
	expect_error("dn: cn=a\ncn: a\n\n uidNumber: 0\n", "line 4: continuation of an empty line");
	expect_error("dn: cn=a\n\r\n x\n", "line 3: continuation of an empty line");
	expect_error("cn: a\n", "line 1: an entry must start with dn:");
	expect_error("dn:: Y249YQBi\n", "an entry must start with dn:");
	expect_error("dn: cn=a\nno colon here\n", "line 2: not an \"attribute: value\" line");
	expect_error("dn: cn=a\nb@d: x\n", "line 2: invalid attribute name");
	expect_error("version: 2\n", "line 1: unknown LDIF version");
	expect_error("dn: cn=a\n\nversion: 1\n", "line 3: an entry must start with dn:");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_safe),
		cmocka_unit_test(test_round_trip_hostile),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_bad_attribute_names),
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_edges),
		cmocka_unit_test(test_parse_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
