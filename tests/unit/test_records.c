/* Unit tests for lib/format/records.c: every parser and formatter, exact round
 * trips, and rejection of hostile lines and bad structs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "util.h"

/* ---- generic round-trip harness ---- */

/* parse a private copy of line, then format; *out gets the formatted
 * line on success.  Returns the parser's (or formatter's) result. */
typedef int (*roundtrip_fn)(const char *line, char **out);

#define ROUNDTRIP(type, parse, format)                                  \
	static int rt_##type(const char *line, char **out)              \
	{                                                               \
		char *copy = strdup(line);                              \
		struct hs_##type rec;                                   \
		assert_non_null(copy);                                  \
		memset(&rec, 0xa5, sizeof rec);                         \
		int r = parse(copy, &rec);                              \
		if (r == 0)                                             \
			r = format(&rec, out);                          \
		free(copy);                                             \
		return r;                                               \
	}

ROUNDTRIP(shadow, hs_records_shadow_parse, hs_records_shadow_format)
ROUNDTRIP(aging, hs_records_aging_parse, hs_records_aging_format)
ROUNDTRIP(passwd, hs_records_passwd_parse, hs_records_passwd_format)
ROUNDTRIP(group, hs_records_group_parse, hs_records_group_format)
ROUNDTRIP(gshadow, hs_records_gshadow_parse, hs_records_gshadow_format)
ROUNDTRIP(spwd, hs_records_spwd_parse, hs_records_spwd_format)
ROUNDTRIP(subid, hs_records_subid_parse, hs_records_subid_format)

static int rt_shell(const char *line, char **out)
{
	char *copy = strdup(line);
	const char *path = NULL;
	assert_non_null(copy);
	int r = hs_records_shell_parse(copy, &path);
	if (r == 0)
		r = hs_records_shell_format(path, out);
	free(copy);
	return r;
}

static void expect_roundtrip(roundtrip_fn fn, const char *what, const char *line)
{
	char *out = NULL;
	int r = fn(line, &out);
	if (r != 0)
		fail_msg("%s: \"%s\" rejected: %d (%s)", what, line, r, hs_strerror(r));
	size_t n = strlen(line);
	if (strlen(out) != n + 1 || memcmp(out, line, n) != 0 || out[n] != '\n')
		fail_msg("%s: round trip of \"%s\" gave \"%s\"", what, line, out);
	free(out);
}

/* expect < 0 and exact error when expect_err != 0 */
static void expect_reject(roundtrip_fn fn, const char *what, const char *line, int expect_err)
{
	char *out = (char *)"untouched";
	int r = fn(line, &out);
	if (r >= 0)
		fail_msg("%s: hostile line \"%s\" accepted as \"%s\"", what, line, out);
	if (expect_err && r != expect_err)
		fail_msg("%s: \"%s\" gave %d (%s), want %d (%s)", what, line, r,
			 hs_strerror(r), expect_err, hs_strerror(expect_err));
}

struct reject_case {
	const char *line;
	int err;   /* 0: any negative error */
};

static void run_accept(roundtrip_fn fn, const char *what, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_roundtrip(fn, what, lines[i]);
}

static void run_reject(roundtrip_fn fn, const char *what, const struct reject_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_reject(fn, what, c[i].line, c[i].err);
}

#define FMT  (-HS_E_FORMAT)
#define RNG  (-HS_E_RANGE)
#define NAM  (-HS_E_NAME)
#define FLD  (-HS_E_FIELD)

/* ---- formatter refusals: a good record with one bad field ---- */

struct bad_field {
	size_t off;         /* the field to replace in the good record */
	size_t size;        /* 0: a string field, else an integer field's size */
	const char *str;    /* new value of a string field */
	long long num;      /* new value of an integer field */
	int err;            /* 0: any negative error */
};

#define BAD_STR(type, field, value, err_) \
	{ .off = offsetof(type, field), .size = 0, .str = (value), .err = (err_) }
#define BAD_NUM(type, field, value, err_) \
	{ .off = offsetof(type, field), .size = sizeof(((type *)0)->field), \
	  .num = (long long)(value), .err = (err_) }

/* Integer fields are stored as their own width; the conversion keeps
 * the bits of (uid_t)-1, ULONG_MAX and negative longs alike. */
static void set_field(void *rec, const struct bad_field *c)
{
	char *at = (char *)rec + c->off;

	if (c->size == 0) {
		memcpy(at, &c->str, sizeof c->str);
	} else if (c->size == sizeof(uint32_t)) {
		uint32_t v = (uint32_t)c->num;
		memcpy(at, &v, sizeof v);
	} else if (c->size == sizeof(uint64_t)) {
		uint64_t v = (uint64_t)c->num;
		memcpy(at, &v, sizeof v);
	} else {
		fail_msg("field of size %zu", c->size);
	}
}

static void check_refused(const char *what, size_t i, int r, int expect_err, const char *out)
{
	if (r >= 0)
		fail_msg("%s: bad field case %zu accepted: %d", what, i, r);
	if (expect_err && r != expect_err)
		fail_msg("%s: bad field case %zu gave %d (%s), want %d (%s)", what, i, r,
			 hs_strerror(r), expect_err, hs_strerror(expect_err));
	if (strcmp(out, "untouched") != 0)
		fail_msg("%s: bad field case %zu wrote \"%s\"", what, i, out);
}

/* FORMAT(&record, &out) refuses good with each one field of cases
 * replaced, and leaves out alone. */
#define EXPECT_FORMAT_REFUSES(format, good, cases)					\
	for (size_t i_ = 0; i_ < HS_ARRAY_SIZE(cases); i_++) {				\
		__typeof__(good) b_ = (good);						\
		char *out_ = (char *)"untouched";					\
		set_field(&b_, &(cases)[i_]);						\
		check_refused(#format, i_, format(&b_, &out_), (cases)[i_].err, out_);	\
	}

/* A string of n copies of c (static storage, per call site buffer). */
static char *repeat(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* ---- hs_records_field_valid ---- */

static void test_field_valid(void **state)
{
	(void)state;
	assert_true(hs_records_field_valid(""));
	assert_true(hs_records_field_valid("abc def"));
	assert_true(hs_records_field_valid("Ünïcödé ✓"));
	assert_true(hs_records_field_valid("$y$j9T$abc/.def"));
	assert_false(hs_records_field_valid(NULL));
	assert_false(hs_records_field_valid("a:b"));
	assert_false(hs_records_field_valid(":"));
	assert_false(hs_records_field_valid("a\nb"));
	assert_false(hs_records_field_valid("a\rb"));
	assert_false(hs_records_field_valid("a\tb"));
	assert_false(hs_records_field_valid("\x7f"));
	assert_false(hs_records_field_valid("\x1b[31m"));
	for (int c = 1; c < 256; c++) {
		char s[3] = { 'x', (char)c, 0 };
		bool want = !(c < 0x20 || c == 0x7f || c == ':');
		assert_int_equal(hs_records_field_valid(s), want);
	}
}

/* ---- USER/shadow ---- */

static void test_shadow(void **state)
{
	(void)state;
	char big[HS_HASH_MAX + 8], line[HS_HASH_MAX + 64];
	static const char *const ok[] = {
		"::", "!::", "*::", "!!::",
		"$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19000:",
		"!$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7:19000:",
		"$6$salt$hash:0:", "x:99999999:", "!:1:",
	};
	run_accept(rt_shadow, "shadow", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { ":", FMT }, { "hash", FMT }, { "hash:1", FMT },
		{ "hash:1::", FMT }, { "hash:1:x", FMT }, { "ha:sh:1:", FMT },
		{ "hash:-1:", FMT }, { "hash:+1:", FMT }, { "hash: 1:", FMT },
		{ "hash:1 :", FMT }, { "hash:01:", FMT }, { "hash:0x10:", FMT },
		{ "hash:2147483648:", RNG }, { "hash:4294967295:", RNG },
		{ "hash:99999999999999999999:", RNG },
		{ "ha\nsh:1:", FLD }, { "hash:1:\n", FLD }, { "ha\tsh:1:", FLD },
		{ "ha\x7fsh:1:", FLD }, { "ha\x01sh:1:", FLD }, { "hash\r:1:", FLD },
	};
	run_reject(rt_shadow, "shadow", bad, HS_ARRAY_SIZE(bad));

	/* hash length cap */
	snprintf(line, sizeof line, "%s:1:", repeat(big, 'a', HS_HASH_MAX));
	expect_roundtrip(rt_shadow, "shadow", line);
	snprintf(line, sizeof line, "%s:1:", repeat(big, 'a', HS_HASH_MAX + 1));
	expect_reject(rt_shadow, "shadow", line, FMT);

	/* values */
	char l1[] = "!$6$x$y:19500:";
	struct hs_shadow s;
	assert_int_equal(hs_records_shadow_parse(l1, &s), 0);
	assert_string_equal(s.hash, "!$6$x$y");
	assert_int_equal(s.lstchg, 19500);
	char l2[] = "*::";
	assert_int_equal(hs_records_shadow_parse(l2, &s), 0);
	assert_string_equal(s.hash, "*");
	assert_int_equal(s.lstchg, HS_UNSET);

	/* formatter refuses bad structs and leaves *out alone */
	char *out = NULL;
	struct hs_shadow b = { .hash = (char *)"ok", .lstchg = 1 };
	const struct bad_field shadow_bad[] = {
		BAD_STR(struct hs_shadow, hash, "a:b", FLD),
		BAD_STR(struct hs_shadow, hash, "a\nb", FLD),
		BAD_STR(struct hs_shadow, hash, NULL, 0),
		BAD_STR(struct hs_shadow, hash, repeat(big, 'h', HS_HASH_MAX + 1), 0),
		BAD_NUM(struct hs_shadow, lstchg, -2, RNG),
		BAD_NUM(struct hs_shadow, lstchg, HS_DAYS_MAX + 1, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_shadow_format, b, shadow_bad);
	b.lstchg = HS_UNSET;
	assert_int_equal(hs_records_shadow_format(&b, &out), 0);
	assert_string_equal(out, "ok::\n");
	free(out);
}

/* ---- USER/aging ---- */

static void test_aging(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"-1:-1:-1:-1:-1:", "0:99999:7:-1:-1:", "0:0:0:0:0:",
		"99999999:99999999:99999999:99999999:99999999:", "1:2:3:4:19000:",
		/* the reserved field of a classic shadow line, kept by pwconv */
		"-1:-1:-1:-1:-1:0", "1:2:3:4:5:18446744073709551615",
	};
	run_accept(rt_aging, "aging", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "-1:-1:-1:-1:-1", FMT }, { "-1:-1:-1:-1:", FMT },
		{ "-1:-1:-1:-1:-1::", FMT }, { "-1:-1:-1:-1:-1:x", FMT },
		{ "-1:-1:-1:-1:-1:-1", FMT }, { "-1:-1:-1:-1:-1:01", FMT },
		{ "-1:-1:-1:-1:-1:18446744073709551616", RNG },
		{ ":-1:-1:-1:-1:", FMT }, { "-1:-1:-1:-1::", FMT },  /* empty field */
		{ "-2:-1:-1:-1:-1:", FMT }, { "-01:-1:-1:-1:-1:", FMT },
		{ "--1:-1:-1:-1:-1:", FMT }, { "+1:-1:-1:-1:-1:", FMT },
		{ "01:-1:-1:-1:-1:", FMT }, { "0x1:-1:-1:-1:-1:", FMT },
		{ " 1:-1:-1:-1:-1:", FMT }, { "1 :-1:-1:-1:-1:", FMT },
		{ "2147483648:-1:-1:-1:-1:", RNG }, { "-1:4294967295:-1:-1:-1:", RNG },
		{ "-1:-1:99999999999999999999:-1:-1:", RNG },
		{ "-1:-1:-1:-1:-1:\n", FLD }, { "-1:-1\t:-1:-1:-1:", FLD },
		{ "\x7f-1:-1:-1:-1:-1:", FLD },
	};
	run_reject(rt_aging, "aging", bad, HS_ARRAY_SIZE(bad));

	char l[] = "0:99999:7:-1:20000:";
	struct hs_aging a;
	assert_int_equal(hs_records_aging_parse(l, &a), 0);
	assert_int_equal(a.min, 0);
	assert_int_equal(a.max, 99999);
	assert_int_equal(a.warn, 7);
	assert_int_equal(a.inact, HS_UNSET);
	assert_int_equal(a.expire, 20000);

	hs_records_aging_init_unset(&a);
	char *out = NULL;
	assert_int_equal(hs_records_aging_format(&a, &out), 0);
	assert_string_equal(out, "-1:-1:-1:-1:-1:\n");
	free(out);

	static const struct bad_field aging_bad[] = {
		BAD_NUM(struct hs_aging, warn, -5, RNG),
		BAD_NUM(struct hs_aging, expire, HS_DAYS_MAX + 1, RNG),
		BAD_NUM(struct hs_aging, min, -2, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_aging_format, a, aging_bad);
	snprintf(a.flag, sizeof(a.flag), "x1");
	assert_int_equal(hs_records_aging_format(&a, &out), -HS_E_FORMAT);
	memset(a.flag, '7', sizeof(a.flag));  /* not terminated */
	assert_int_equal(hs_records_aging_format(&a, &out), -HS_E_FIELD);
}

/* ---- USER/shell ---- */

static void test_shell(void **state)
{
	(void)state;
	char big[HS_PATH_FIELD_MAX + 8];
	static const char *const ok[] = {
		"/bin/bash", "/", "/usr/bin/zsh", "/opt/my shell/sh", "/usr/bin/fïsh",
	};
	run_accept(rt_shell, "shell", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "bash", FMT }, { "./bash", FMT }, { " /bin/sh", FMT },
		{ "/bin/bash\n", FLD }, { "/bin/bash\n/bin/sh", FLD },
		{ "/bin/ba:sh", FLD }, { "/bin/\tsh", FLD }, { "/bin/sh\x7f", FLD },
		{ "/bin/sh\r", FLD }, { "/bin/\x1b", FLD },
	};
	run_reject(rt_shell, "shell", bad, HS_ARRAY_SIZE(bad));

	big[0] = '/';
	repeat(big + 1, 'a', HS_PATH_FIELD_MAX - 1);
	expect_roundtrip(rt_shell, "shell", big);
	repeat(big + 1, 'a', HS_PATH_FIELD_MAX);
	expect_reject(rt_shell, "shell", big, FMT);

	char *out = (char *)"untouched";
	assert_true(hs_records_shell_format(NULL, &out) < 0);
	assert_true(hs_records_shell_format("sh", &out) < 0);
	assert_true(hs_records_shell_format("/bin/sh\n", &out) < 0);
	assert_true(hs_records_shell_format("/bin:/sh", &out) < 0);
	assert_string_equal(out, "untouched");
}

/* ---- /etc/passwd ---- */

static void test_passwd(void **state)
{
	(void)state;
	char big[HS_PATH_FIELD_MAX + 8], line[2 * HS_PATH_FIELD_MAX];
	static const char *const ok[] = {
		"root:x:0:0:root:/root:/bin/bash",
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
		"alice:x:1000:1000:Alice Ä. Smith,Room 1,,:/home/alice:/usr/libexec/hardened-shadow/shell-proxy",
		"m:x:4294967294:4294967294:::",
		"host$:*:1001:1001:::",
		"e::1:1:::",
		"_apt:!:42:65534::/nonexistent:/usr/sbin/nologin",
	};
	run_accept(rt_passwd, "passwd", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "root:x:0:0:root:/root", FMT },
		{ "root:x:0:0:root:/root:/bin/bash:", FMT },
		{ "root:x:0:0:ro:ot:/root:/bin/bash", FMT },
		{ ":x:0:0:root:/root:/bin/bash", NAM },
		{ "..:x:0:0:root:/root:/bin/bash", NAM },
		{ ".:x:0:0:root:/root:/bin/bash", NAM },
		{ "-x:x:0:0:root:/root:/bin/bash", NAM },
		{ "a/b:x:0:0:root:/root:/bin/bash", NAM },
		{ "+:x:0:0:::", NAM }, { "+@netgroup::::::", NAM },
		{ "abcdefghijklmnopqrstuvwxyzABCDEFG:x:0:0:::", NAM },
		{ "root:x::0:root:/root:/bin/bash", FMT },
		{ "root:x:0::root:/root:/bin/bash", FMT },
		{ "root:x:-1:0:root:/root:/bin/bash", FMT },
		{ "root:x:+1:0:root:/root:/bin/bash", FMT },
		{ "root:x: 0:0:root:/root:/bin/bash", FMT },
		{ "root:x:0 :0:root:/root:/bin/bash", FMT },
		{ "root:x:00:0:root:/root:/bin/bash", FMT },
		{ "root:x:010:0:root:/root:/bin/bash", FMT },
		{ "root:x:0x10:0:root:/root:/bin/bash", FMT },
		{ "root:x:0:4294967295:root:/root:/bin/bash", RNG },
		{ "root:x:4294967295:0:root:/root:/bin/bash", RNG },
		{ "root:x:99999999999999999999:0:root:/root:/bin/bash", RNG },
		{ "root:x:0:0:ro\not:/root:/bin/bash", FLD },
		{ "root:x:0:0:root:/root:/bin/bash\n", FLD },
		{ "root:x:0:0:ro\tot:/root:/bin/bash", FLD },
		{ "root:x:0:0:root:/ro\x7fot:/bin/bash", FLD },
		{ "root:x:0:0:root:/root:/bin/bash\r", FLD },
		{ "root:x\x01:0:0:root:/root:/bin/bash", FLD },
	};
	run_reject(rt_passwd, "passwd", bad, HS_ARRAY_SIZE(bad));

	/* length caps */
	snprintf(line, sizeof line, "u:x:1:1:%s:/:/", repeat(big, 'g', HS_GECOS_MAX));
	expect_roundtrip(rt_passwd, "passwd", line);
	snprintf(line, sizeof line, "u:x:1:1:%s:/:/", repeat(big, 'g', HS_GECOS_MAX + 1));
	expect_reject(rt_passwd, "passwd", line, FMT);
	snprintf(line, sizeof line, "u:x:1:1::%s:/", repeat(big, 'd', HS_PATH_FIELD_MAX));
	expect_roundtrip(rt_passwd, "passwd", line);
	snprintf(line, sizeof line, "u:x:1:1::%s:/", repeat(big, 'd', HS_PATH_FIELD_MAX + 1));
	expect_reject(rt_passwd, "passwd", line, FMT);
	snprintf(line, sizeof line, "u:x:1:1::/:%s", repeat(big, 's', HS_PATH_FIELD_MAX + 1));
	expect_reject(rt_passwd, "passwd", line, FMT);
	snprintf(line, sizeof line, "u:%s:1:1::/:/", repeat(big, 'p', HS_HASH_MAX + 1));
	expect_reject(rt_passwd, "passwd", line, FMT);

	/* values */
	char l[] = "alice:x:1000:100:Alice:/home/alice:/bin/sh";
	struct hs_passwd p;
	assert_int_equal(hs_records_passwd_parse(l, &p), 0);
	assert_string_equal(p.name, "alice");
	assert_string_equal(p.passwd, "x");
	assert_int_equal(p.uid, 1000);
	assert_int_equal(p.gid, 100);
	assert_string_equal(p.gecos, "Alice");
	assert_string_equal(p.dir, "/home/alice");
	assert_string_equal(p.shell, "/bin/sh");

	/* formatter refuses a struct with any bad field */
	char *out = (char *)"untouched";
	struct hs_passwd good = { (char *)"bob", (char *)"x", 1001, 1001,
				  (char *)"Bob", (char *)"/home/bob", (char *)"/bin/sh" };
	const struct bad_field passwd_bad[] = {
		BAD_STR(struct hs_passwd, name, "..", NAM),
		BAD_STR(struct hs_passwd, name, "bo:b", NAM),
		BAD_STR(struct hs_passwd, name, NULL, NAM),
		BAD_STR(struct hs_passwd, passwd, "x:0:0", FLD),
		BAD_STR(struct hs_passwd, gecos, "Bob\nroot::0:0:::", FLD),
		BAD_STR(struct hs_passwd, gecos, "Bob:x", FLD),
		BAD_STR(struct hs_passwd, dir, "/home/\x7f", FLD),
		BAD_STR(struct hs_passwd, shell, "/bin/sh\n", FLD),
		BAD_STR(struct hs_passwd, shell, NULL, 0),
		BAD_STR(struct hs_passwd, gecos, repeat(big, 'g', HS_GECOS_MAX + 1), 0),
		BAD_NUM(struct hs_passwd, uid, (uid_t)-1, RNG),
		BAD_NUM(struct hs_passwd, gid, (gid_t)-1, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_passwd_format, good, passwd_bad);
	assert_int_equal(hs_records_passwd_format(&good, &out), 0);
	assert_string_equal(out, "bob:x:1001:1001:Bob:/home/bob:/bin/sh\n");
	free(out);
}

/* ---- /etc/group ---- */

static void test_group(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"root:x:0:", "sudo:x:27:alice", "users:x:100:alice,bob,carol",
		"g::4294967294:", "grp$:!:5:host$,_x", "a.b-c:x:1:a.b-c",
	};
	run_accept(rt_group, "group", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "root:x:0", FMT }, { "root:x:0::", FMT },
		{ ":x:0:", NAM }, { "..:x:0:", NAM }, { "-g:x:0:", NAM },
		{ "a/b:x:0:", NAM },
		{ "abcdefghijklmnopqrstuvwxyzABCDEFG:x:0:", NAM },
		{ "g:x::", FMT }, { "g:x:-1:", FMT }, { "g:x:+1:", FMT },
		{ "g:x:01:", FMT }, { "g:x:0x1:", FMT }, { "g:x: 1:", FMT },
		{ "g:x:4294967295:", RNG }, { "g:x:99999999999999999999:", RNG },
		{ "g:x:1:a,,b", FMT }, { "g:x:1:a,", FMT }, { "g:x:1:,a", FMT },
		{ "g:x:1:,", FMT },
		{ "g:x:1:a,..", NAM }, { "g:x:1:-x", NAM }, { "g:x:1:a b", NAM },
		{ "g:x:1:a/b", NAM },
		{ "g:x:1:abcdefghijklmnopqrstuvwxyzABCDEFG", NAM },
		{ "g:x:1:alice\n", FLD }, { "g:x:1:al\tice", FLD },
		{ "g:x\x7f:1:", FLD },
	};
	run_reject(rt_group, "group", bad, HS_ARRAY_SIZE(bad));

	char l[] = "users:x:100:alice,bob";
	struct hs_group g;
	assert_int_equal(hs_records_group_parse(l, &g), 0);
	assert_string_equal(g.name, "users");
	assert_string_equal(g.passwd, "x");
	assert_int_equal(g.gid, 100);
	assert_string_equal(g.members, "alice,bob");

	char *out = (char *)"untouched";
	struct hs_group good = { (char *)"staff", (char *)"x", 50, (char *)"alice" };
	struct hs_group b;
	static const struct bad_field group_bad[] = {
		BAD_STR(struct hs_group, name, "st:aff", NAM),
		BAD_STR(struct hs_group, members, "alice,,bob", FMT),
		BAD_STR(struct hs_group, members, "alice,", FMT),
		BAD_STR(struct hs_group, members, "alice:bob", FLD),
		BAD_STR(struct hs_group, members, "alice\nevil:x:0:", FLD),
		BAD_STR(struct hs_group, members, "alice,-rf", NAM),
		BAD_STR(struct hs_group, passwd, "\n", FLD),
		BAD_NUM(struct hs_group, gid, (gid_t)-1, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_group_format, good, group_bad);
	b = good; b.members = NULL;  /* NULL list = empty */
	assert_int_equal(hs_records_group_format(&b, &out), 0);
	assert_string_equal(out, "staff:x:50:\n");
	free(out);
}

/* ---- /etc/gshadow ---- */

static void test_gshadow(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"root:*::", "sudo:!::alice", "users:!:admin:alice,bob",
		"g:$6$s$h:a,b:c,d", "g:::",
	};
	run_accept(rt_gshadow, "gshadow", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "root:*:", FMT }, { "root:*:::", FMT },
		{ ":*::", NAM }, { "..:*::", NAM }, { "-g:*::", NAM },
		{ "g:*:a,,b:", FMT }, { "g:*::a,", FMT }, { "g:*:,:", FMT },
		{ "g:*:..:", NAM }, { "g:*::a/b", NAM }, { "g:*:-a:", NAM },
		{ "g:*::a\n", FLD }, { "g:*\t::", FLD },
	};
	run_reject(rt_gshadow, "gshadow", bad, HS_ARRAY_SIZE(bad));

	char l[] = "users:!:admin:alice,bob";
	struct hs_gshadow g;
	assert_int_equal(hs_records_gshadow_parse(l, &g), 0);
	assert_string_equal(g.name, "users");
	assert_string_equal(g.passwd, "!");
	assert_string_equal(g.admins, "admin");
	assert_string_equal(g.members, "alice,bob");

	char *out = (char *)"untouched";
	struct hs_gshadow good = { (char *)"g", (char *)"!", (char *)"a", (char *)"b" };
	struct hs_gshadow b;
	static const struct bad_field gshadow_bad[] = {
		BAD_STR(struct hs_gshadow, name, ".", NAM),
		BAD_STR(struct hs_gshadow, admins, "a,", FMT),
		BAD_STR(struct hs_gshadow, admins, "a:b", FLD),
		BAD_STR(struct hs_gshadow, members, "..", NAM),
		BAD_STR(struct hs_gshadow, passwd, "x\ny", FLD),
	};
	EXPECT_FORMAT_REFUSES(hs_records_gshadow_format, good, gshadow_bad);
	b = good; b.admins = NULL; b.members = NULL;
	assert_int_equal(hs_records_gshadow_format(&b, &out), 0);
	assert_string_equal(out, "g:!::\n");
	free(out);
}

/* ---- NIS compat lines ---- */

static void test_nis_line(void **state)
{
	(void)state;
	static const char *const nis[] = { "+", "-", "+alice", "-bob::::::", "+@ng:::", "-@ng" };
	static const char *const not_nis[] = { "", "alice:x:1:1::/:", " +", "#+", "a+" };

	for (size_t i = 0; i < HS_ARRAY_SIZE(nis); i++)
		assert_true(hs_records_nis_line(nis[i], strlen(nis[i])));
	for (size_t i = 0; i < HS_ARRAY_SIZE(not_nis); i++)
		assert_false(hs_records_nis_line(not_nis[i], strlen(not_nis[i])));
	assert_false(hs_records_nis_line(NULL, 1));
	assert_false(hs_records_nis_line("+", 0));
}

/* ---- classic /etc/shadow ---- */

static void test_spwd(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"root:*:19000:0:99999:7:::",
		"alice:$y$j9T$abc$def:19500:0:99999:7:-1:-1:",
		"bob:!:::::::",
		"c:::-1:-1:-1:-1:-1:",
		"d:x:-1::-1::-1::",
		"e:x:0:0:0:0:0:0:0",
		"f:x:99999999:99999999:99999999:99999999:99999999:99999999:12345",
		"host$:!!:1::::::",
		/* the classic 8-field line, written back as it was */
		"root:*:19000:0:99999:7::", "g:x:1:-1:::-1:",
	};
	run_accept(rt_spwd, "spwd", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "root:*:19000:0:99999:7:", FMT },
		{ "root:*:19000:0:99999:7::::", FMT },
		{ ":*:19000:0:99999:7:::", NAM }, { "..:*:::::::", NAM },
		{ "-r:*:::::::", NAM }, { "a/b:*:::::::", NAM },
		{ "r:*:-2::::::", FMT }, { "r:*:--1::::::", FMT },
		{ "r:*:+1::::::", FMT }, { "r:*:01::::::", FMT },
		{ "r:*:0x1::::::", FMT }, { "r:*: 1::::::", FMT },
		{ "r:*:-01::::::", FMT }, { "r:*:-0::::::", FMT },
		{ "r:*:2147483648::::::", RNG }, { "r:*::4294967295:::::", RNG },
		{ "r:*::::::99999999999999999999:", RNG },
		{ "r:*:::::::-1", FMT }, { "r:*:::::::x", FMT },
		{ "r:*:::::::01", FMT }, { "r:*:::::::99999999999999999999", RNG },
		{ "r:*\n:::::::", FLD }, { "r:*:::::::\t", FLD },
		{ "r:\x7f:::::::", FLD },
	};
	run_reject(rt_spwd, "spwd", bad, HS_ARRAY_SIZE(bad));

	char l[] = "alice:!h:19500::99999:-1::-1:";
	struct hs_spwd s;
	assert_int_equal(hs_records_spwd_parse(l, &s), 0);
	assert_string_equal(s.name, "alice");
	assert_string_equal(s.hash, "!h");
	assert_int_equal(s.lstchg, 19500);
	assert_int_equal(s.min, HS_UNSET);
	assert_int_equal(s.max, 99999);
	assert_int_equal(s.warn, HS_UNSET);
	assert_int_equal(s.inact, HS_UNSET);
	assert_int_equal(s.expire, HS_UNSET);
	assert_string_equal(s.flag, "");
	assert_int_equal(s.minus_one, (1u << 3) | (1u << 5));

	/* setting a field spelled "-1" to a value ignores its bit */
	char *out = NULL;
	s.expire = 20000;
	assert_int_equal(hs_records_spwd_format(&s, &out), 0);
	assert_string_equal(out, "alice:!h:19500::99999:-1::20000:\n");
	free(out);

	out = (char *)"untouched";
	struct hs_spwd good = { .name = (char *)"u", .hash = (char *)"*",
		.lstchg = 1, .min = HS_UNSET, .max = HS_UNSET, .warn = HS_UNSET,
		.inact = HS_UNSET, .expire = HS_UNSET, .flag = NULL, .minus_one = 0 };
	struct hs_spwd b;
	static const struct bad_field spwd_bad[] = {
		BAD_STR(struct hs_spwd, name, "a b", NAM),
		BAD_STR(struct hs_spwd, hash, "a:b", FLD),
		BAD_STR(struct hs_spwd, flag, "x", FMT),
		BAD_STR(struct hs_spwd, flag, "1\n", FLD),
		BAD_NUM(struct hs_spwd, max, -2, RNG),
		BAD_NUM(struct hs_spwd, inact, HS_DAYS_MAX + 1, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_spwd_format, good, spwd_bad);
	b = good; b.minus_one = 1u << 5;
	assert_int_equal(hs_records_spwd_format(&b, &out), 0);
	assert_string_equal(out, "u:*:1:::::-1:\n");
	free(out);
}

/* ---- /etc/subuid, /etc/subgid ---- */

static void test_subid(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"alice:100000:65536", "1000:165536:65536", "0:0:1",
		"u:0:4294967294", "u:4294967294:1", "u:1:4294967294",
		"u:2147483648:2147483648", "4294967294:1:1",
	};
	run_accept(rt_subid, "subid", ok, HS_ARRAY_SIZE(ok));

	static const struct reject_case bad[] = {
		{ "", FMT }, { "alice:100000", FMT }, { "alice:100000:65536:", FMT },
		{ ":100000:65536", NAM }, { "..:1:1", NAM }, { "-a:1:1", NAM },
		{ "a/b:1:1", NAM }, { "01000:1:1", FMT }, { "4294967295:1:1", RNG },
		{ "-1:1:1", NAM }, { "a:1:0", RNG }, { "a::1", FMT }, { "a:1:", FMT },
		{ "a:-1:1", FMT }, { "a:+1:1", FMT }, { "a:01:1", FMT },
		{ "a:0x10:1", FMT }, { "a: 1:1", FMT },
		{ "a:4294967295:1", RNG }, { "a:1:4294967295", RNG },
		{ "a:4294967294:3", RNG }, { "a:4294967295:1", RNG }, { "a:2147483648:2147483649", RNG },
		{ "a:99999999999999999999:1", RNG },
		{ "a:1:1\n", FLD }, { "a\t:1:1", FLD },
	};
	run_reject(rt_subid, "subid", bad, HS_ARRAY_SIZE(bad));

	char l[] = "alice:100000:65536";
	struct hs_subid s;
	assert_int_equal(hs_records_subid_parse(l, &s), 0);
	assert_string_equal(s.owner, "alice");
	assert_int_equal(s.start, 100000);
	assert_int_equal(s.count, 65536);

	char *out = (char *)"untouched";
	struct hs_subid b = { (char *)"a", 1, 1 };
	static const struct bad_field subid_bad[] = {
		BAD_STR(struct hs_subid, owner, "a:b", NAM),
		BAD_STR(struct hs_subid, owner, "007", FMT),
		BAD_NUM(struct hs_subid, count, 0, RNG),
		BAD_NUM(struct hs_subid, start, 4294967295UL, RNG),
	};
	EXPECT_FORMAT_REFUSES(hs_records_subid_format, b, subid_bad);
	/* ranges that run past the id space: two fields at once */
	b.start = 4294967294UL;
	b.count = 3;
	assert_int_equal(hs_records_subid_format(&b, &out), RNG);
	b.start = 0;
	b.count = ULONG_MAX;
	assert_int_equal(hs_records_subid_format(&b, &out), RNG);
	assert_string_equal(out, "untouched");
}

/* ---- lists ---- */

static void test_list(void **state)
{
	(void)state;
	assert_true(hs_records_list_contains("alice,bob", "alice"));
	assert_true(hs_records_list_contains("alice,bob", "bob"));
	assert_false(hs_records_list_contains("alice,bob", "ali"));
	assert_false(hs_records_list_contains("alice,bob", "alice,bob"));
	assert_false(hs_records_list_contains("alice,bob", "bo"));
	assert_false(hs_records_list_contains("", "alice"));
	assert_false(hs_records_list_contains(NULL, "alice"));
	assert_false(hs_records_list_contains("alice", ""));

	char *out = NULL;
	assert_int_equal(hs_records_list_add("", "alice", &out), 0);
	assert_string_equal(out, "alice");
	free(out);
	assert_int_equal(hs_records_list_add(NULL, "alice", &out), 0);
	assert_string_equal(out, "alice");
	free(out);
	assert_int_equal(hs_records_list_add("alice", "bob", &out), 0);
	assert_string_equal(out, "alice,bob");
	free(out);
	assert_int_equal(hs_records_list_add("alice,bob", "alice", &out), 0);
	assert_string_equal(out, "alice,bob");
	free(out);
	out = (char *)"untouched";
	assert_int_equal(hs_records_list_add("alice", "a,b", &out), NAM);
	assert_int_equal(hs_records_list_add("alice", "", &out), NAM);
	assert_int_equal(hs_records_list_add("alice", "x:y", &out), NAM);
	assert_string_equal(out, "untouched");

	assert_int_equal(hs_records_list_remove("alice,bob,carol", "bob", &out), 0);
	assert_string_equal(out, "alice,carol");
	free(out);
	assert_int_equal(hs_records_list_remove("alice,bob,carol", "alice", &out), 0);
	assert_string_equal(out, "bob,carol");
	free(out);
	assert_int_equal(hs_records_list_remove("alice,bob,carol", "carol", &out), 0);
	assert_string_equal(out, "alice,bob");
	free(out);
	assert_int_equal(hs_records_list_remove("alice", "alice", &out), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(hs_records_list_remove("alice,bob", "ali", &out), 0);
	assert_string_equal(out, "alice,bob");
	free(out);
	assert_int_equal(hs_records_list_remove("", "alice", &out), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(hs_records_list_remove("a,b,a", "a", &out), 0);
	assert_string_equal(out, "b");
	free(out);

	const char *cur = "alice,bob,c", *elem = NULL;
	assert_int_equal(hs_records_list_next(&cur, &elem), 5);
	assert_memory_equal(elem, "alice", 5);
	assert_int_equal(hs_records_list_next(&cur, &elem), 3);
	assert_memory_equal(elem, "bob", 3);
	assert_int_equal(hs_records_list_next(&cur, &elem), 1);
	assert_memory_equal(elem, "c", 1);
	assert_int_equal(hs_records_list_next(&cur, &elem), 0);
	assert_int_equal(hs_records_list_next(&cur, &elem), 0);
	cur = "";
	assert_int_equal(hs_records_list_next(&cur, &elem), 0);
	cur = NULL;
	assert_int_equal(hs_records_list_next(&cur, &elem), 0);
	/* empty elements (never produced by the parser) are skipped so 0
	 * always means the end */
	cur = ",,a,,";
	assert_int_equal(hs_records_list_next(&cur, &elem), 1);
	assert_memory_equal(elem, "a", 1);
	assert_int_equal(hs_records_list_next(&cur, &elem), 0);
}

/* The formatted line of every parsed record re-parses to equal values. */
static void test_reparse_values(void **state)
{
	(void)state;
	char l[] = "x:$1$a$b:0:-1:5::-1:19000:7";
	struct hs_spwd a, b;
	char *out = NULL;
	assert_int_equal(hs_records_spwd_parse(l, &a), 0);
	assert_int_equal(hs_records_spwd_format(&a, &out), 0);
	out[strlen(out) - 1] = '\0';
	assert_int_equal(hs_records_spwd_parse(out, &b), 0);
	assert_string_equal(a.name, b.name);
	assert_string_equal(a.hash, b.hash);
	assert_int_equal(a.lstchg, b.lstchg);
	assert_int_equal(a.min, b.min);
	assert_int_equal(a.max, b.max);
	assert_int_equal(a.warn, b.warn);
	assert_int_equal(a.inact, b.inact);
	assert_int_equal(a.expire, b.expire);
	assert_string_equal(a.flag, b.flag);
	assert_int_equal(a.minus_one, b.minus_one);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_valid),
		cmocka_unit_test(test_shadow),
		cmocka_unit_test(test_aging),
		cmocka_unit_test(test_shell),
		cmocka_unit_test(test_passwd),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_gshadow),
		cmocka_unit_test(test_nis_line),
		cmocka_unit_test(test_spwd),
		cmocka_unit_test(test_subid),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_reparse_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
