/* Tests for lib/auth/hash.c: method words, policies from login.defs, hashing
 * and verification for every method, legacy/locked hashes, rehash
 * decisions, constant-time comparison and dummy verification timing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "hash.h"
#include "records.h"
#include "util.h"

static struct hs_config *defs(const char *text)
{
	struct hs_config *c = NULL;

	assert_int_equal(hs_config_logindefs_parse(text, strlen(text), "test", NULL, NULL, &c), 0);
	assert_non_null(c);
	return c;
}

static void test_method_words(void **state)
{
	static const struct { const char *word, *prefix; } ok[] = {
		{ "yescrypt", "$y$" }, { "YESCRYPT", "$y$" }, { "YesCrypt", "$y$" },
		{ "sha512", "$6$" }, { "SHA512", "$6$" },
		{ "sha256", "$5$" }, { "SHA256", "$5$" },
		{ "blowfish", "$2b$" }, { "BCRYPT", "$2b$" }, { "bcrypt", "$2b$" },
		{ "md5", "$1$" }, { "MD5", "$1$" },
		{ "gost_yescrypt", "$gy$" }, { "GOST_YESCRYPT", "$gy$" },
	};
	struct hs_hash_policy p;

	for (size_t i = 0; i < HS_ARRAY_SIZE(ok); i++) {
		memset(&p, 0x55, sizeof p);
		assert_int_equal(hs_hash_policy_from_method(ok[i].word, 0, &p), 0);
		assert_string_equal(p.prefix, ok[i].prefix);
		assert_int_equal(p.rounds, 0);
	}
	static const char *const bad[] = {
		"DES", "des", "", "sha1", "yescrypt ", " sha512", "sha5121", "NONE", "$6$",
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++)
		assert_int_equal(hs_hash_policy_from_method(bad[i], 0, &p), -HS_E_METHOD);
	assert_int_equal(hs_hash_policy_from_method(NULL, 0, &p), -HS_E_METHOD);

	/* rounds are clamped to the method's valid range */
	static const struct { const char *word; unsigned long asked, got; } clamp[] = {
		{ "sha512", 10, 1000 }, { "sha512", 20000, 20000 }, { "yescrypt", 99, 11 },
		{ "blowfish", 2, 4 }, { "md5", 5000, 0 },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(clamp); i++) {
		assert_int_equal(hs_hash_policy_from_method(clamp[i].word, clamp[i].asked, &p), 0);
		assert_int_equal(p.rounds, clamp[i].got);
	}
}

static void test_policy_default(void **state)
{
	struct hs_hash_policy p;

	hs_hash_policy_default(&p);
	assert_string_equal(p.prefix, crypt_preferred_method());
	assert_int_equal(p.rounds, 0);
}

static void test_policy_from_config(void **state)
{
	/* prefix NULL: not checked; rounds -1: not checked */
	const struct {
		const char *defs;
		int err;
		const char *prefix;
		int rounds;
	} cases[] = {
		/* no ENCRYPT_METHOD: the library's preferred method */
		{ "UMASK 022\n", 0, crypt_preferred_method(), 0 },
		{ "ENCRYPT_METHOD YESCRYPT\nYESCRYPT_COST_FACTOR 7\n", 0, "$y$", 7 },
		{ "ENCRYPT_METHOD yescrypt\nYESCRYPT_COST_FACTOR 40\n", 0, NULL, 11 },
		{ "ENCRYPT_METHOD YESCRYPT\nYESCRYPT_COST_FACTOR -3\n", 0, NULL, 1 },
		/* the MAX, see hash.c */
		{ "ENCRYPT_METHOD SHA512\nSHA_CRYPT_MIN_ROUNDS 5000\nSHA_CRYPT_MAX_ROUNDS 0x4e20\n",
		  0, "$6$", 20000 },
		{ "ENCRYPT_METHOD SHA512\nSHA_CRYPT_MIN_ROUNDS 7000\n", 0, NULL, 7000 },
		/* MIN > MAX: MIN, as shadow-utils */
		{ "ENCRYPT_METHOD SHA256\nSHA_CRYPT_MIN_ROUNDS 9000\nSHA_CRYPT_MAX_ROUNDS 6000\n",
		  0, "$5$", 9000 },
		{ "ENCRYPT_METHOD SHA512\nSHA_CRYPT_MAX_ROUNDS 10\n", 0, NULL, 1000 },
		{ "ENCRYPT_METHOD SHA512\n", 0, NULL, 0 },
		{ "ENCRYPT_METHOD BCRYPT\nBCRYPT_MIN_ROUNDS 8\nBCRYPT_MAX_ROUNDS 10\n", 0, "$2b$", 10 },
		/* a cost key for another method does not leak into this one */
		{ "ENCRYPT_METHOD SHA512\nYESCRYPT_COST_FACTOR 9\nBCRYPT_MAX_ROUNDS 12\n", 0, NULL, 0 },
		{ "ENCRYPT_METHOD DES\n", -HS_E_METHOD, NULL, -1 },
		{ "ENCRYPT_METHOD \"\"\n", -HS_E_METHOD, NULL, -1 },
	};
	struct hs_hash_policy p;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		struct hs_config *c = defs(cases[i].defs);

		assert_int_equal(hs_hash_policy_from_config(c, &p), cases[i].err);
		if (cases[i].prefix)
			assert_string_equal(p.prefix, cases[i].prefix);
		if (cases[i].rounds >= 0)
			assert_int_equal(p.rounds, cases[i].rounds);
		hs_config_free(c);
	}

	/* NULL config = empty config */
	assert_int_equal(hs_hash_policy_from_config(NULL, &p), 0);
	assert_string_equal(p.prefix, crypt_preferred_method());
}

static void test_every_method_roundtrip(void **state)
{
	static const char *const words[] = {
		"yescrypt", "gost_yescrypt", "sha512", "sha256", "blowfish", "md5",
	};
	char h[HS_HASH_MAX + 1], h2[HS_HASH_MAX + 1];

	for (size_t i = 0; i < HS_ARRAY_SIZE(words); i++) {
		struct hs_hash_policy p;
		assert_int_equal(hs_hash_policy_from_method(words[i], 0, &p), 0);
		assert_int_equal(hs_hash_password("correct horse", &p, h, sizeof h), 0);
		assert_true(strncmp(h, p.prefix, strlen(p.prefix)) == 0);
		assert_true(strlen(h) > strlen(p.prefix) + 10);

		/* a method libxcrypt calls legacy verifies only when allowed */
		bool strong = crypt_checksalt(h) == CRYPT_SALT_OK;
		assert_int_equal(hs_hash_verify_password("correct horse", h, true), 1);
		assert_int_equal(hs_hash_verify_password("correct horse", h, false), strong ? 1 : 0);
		assert_int_equal(hs_hash_verify_password("correct horsE", h, true), 0);
		assert_int_equal(hs_hash_verify_password("", h, true), 0);
		assert_int_equal(hs_hash_verify_password("correct horse ", h, true), 0);

		/* fresh salt every time */
		assert_int_equal(hs_hash_password("correct horse", &p, h2, sizeof h2), 0);
		assert_string_not_equal(h, h2);

		/* given already hashed (chpasswd -e): whole, or locked with '!',
		 * it is taken; cut short by a character, or a character
		 * outside crypt's alphabet, it is refused (no password could
		 * match it); a legacy method is the caller's opt-in */
		const char *problem;
		char locked[HS_HASH_MAX + 2];

		snprintf(locked, sizeof locked, "!%s", h);
		assert_int_equal(hs_hash_check_given(h, &problem), strong ? 0 : 1);
		assert_int_equal(hs_hash_check_given(locked, &problem), strong ? 0 : 1);
		h[strlen(h) - 1] = '\0';
		assert_int_equal(hs_hash_check_given(h, &problem), strong ? -1 : 1);
		strcpy(h, h2);
		h[strlen(h) - 1] = '%';
		assert_int_equal(hs_hash_check_given(h, &problem), strong ? -1 : 1);
		if (strong)
			assert_string_equal(problem, "the hash is cut short (no password could match it)");
	}
	const char *problem;
	assert_int_equal(hs_hash_check_given("$6$abc", &problem), -1);
	assert_int_equal(hs_hash_check_given("$6$", &problem), -1);
	assert_int_equal(hs_hash_check_given("$y$j9T$abc$", &problem), -1);
	assert_int_equal(hs_hash_check_given("*", &problem), 0);
}

static void test_hash_costs_in_output(void **state)
{
	struct hs_hash_policy p;
	char h[HS_HASH_MAX + 1];

	assert_int_equal(hs_hash_policy_from_method("sha512", 1234, &p), 0);
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), 0);
	assert_true(strncmp(h, "$6$rounds=1234$", 15) == 0);
	assert_int_equal(hs_hash_verify_password("pw", h, false), 1);

	assert_int_equal(hs_hash_policy_from_method("blowfish", 6, &p), 0);
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), 0);
	assert_true(strncmp(h, "$2b$06$", 7) == 0);

	assert_int_equal(hs_hash_policy_from_method("yescrypt", 3, &p), 0);
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), 0);
	/* the yescrypt parameters are those libxcrypt encodes for cost 3 */
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	static const char rb[32] = "0123456789abcdef0123456789abcdef";
	assert_non_null(crypt_gensalt_rn("$y$", 3, rb, (int)sizeof rb, setting, (int)sizeof setting));
	size_t plen = (size_t)(strchr(setting + 3, '$') - setting) + 1;
	assert_memory_equal(h, setting, plen);
	assert_true(strncmp(h, "$y$j9T$", 7) != 0);   /* not the default cost */
	assert_int_equal(hs_hash_verify_password("pw", h, false), 1);
}

static void test_hash_errors(void **state)
{
	struct hs_hash_policy p;
	char small[10];
	char h[HS_HASH_MAX + 1];

	assert_int_equal(hs_hash_policy_from_method("yescrypt", 0, &p), 0);
	assert_int_equal(hs_hash_password("pw", &p, small, sizeof small), -ERANGE);

	/* a hand-made policy libxcrypt cannot produce */
	memset(&p, 0, sizeof p);
	strcpy(p.prefix, "$9$");
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), -HS_E_METHOD);
	strcpy(p.prefix, "");
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), -HS_E_METHOD);
	/* an out-of-range cost set directly in the struct */
	strcpy(p.prefix, "$y$");
	p.rounds = 40;
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), -HS_E_METHOD);
	/* prefix not NUL-terminated */
	memset(p.prefix, 'x', sizeof p.prefix);
	p.rounds = 0;
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), -HS_E_METHOD);
}

static void test_legacy_and_locked(void **state)
{
	/* crypt("password", "ab") */
	const char *des = "abJnggxhB/yWI";
	struct hs_hash_policy p;
	char h[HS_HASH_MAX + 1], locked[HS_HASH_MAX + 2];

	assert_int_equal(hs_hash_verify_password("password", des, false), 0);
	assert_int_equal(hs_hash_verify_password("password", des, true), 1);
	assert_int_equal(hs_hash_verify_password("passwore", des, true), 0);

	assert_int_equal(hs_hash_policy_from_method("sha512", 0, &p), 0);
	assert_int_equal(hs_hash_password("pw", &p, h, sizeof h), 0);
	snprintf(locked, sizeof locked, "!%s", h);
	assert_int_equal(hs_hash_verify_password("pw", h, false), 1);
	assert_int_equal(hs_hash_verify_password("pw", locked, false), 0);
	assert_int_equal(hs_hash_verify_password("pw", locked, true), 0);

	static const char *const never[] = { "", "!", "*", "!!", "*LK*", "x", "$6$", "$6$$",
		"$y$", "$y$j9T$", "$2b$05$short", "abJnggxhB/yW", "abJnggxhB/yWI ",
		"!abJnggxhB/yWI" };
	for (size_t i = 0; i < HS_ARRAY_SIZE(never); i++) {
		assert_int_equal(hs_hash_verify_password("password", never[i], true), 0);
		assert_int_equal(hs_hash_verify_password("", never[i], true), 0);
	}
	/* "*" must not match what crypt_rn returns for failures either */
	assert_int_equal(hs_hash_verify_password("*0", "*0", true), 0);
	assert_int_equal(hs_hash_verify_password("*1", "*1", true), 0);
	assert_int_equal(hs_hash_verify_password(NULL, h, true), 0);
	assert_int_equal(hs_hash_verify_password("pw", NULL, true), 0);
}

static void test_rehash(void **state)
{
	struct hs_hash_policy y3, y5, y7, y0, s0, s1000, s5000, s10000, b0, b5, b10, m0, g0;
	char hy5[HS_HASH_MAX + 1], hs[HS_HASH_MAX + 1], hb4[HS_HASH_MAX + 1], hm[HS_HASH_MAX + 1];
	char hs_r[HS_HASH_MAX + 1];

	const struct { const char *word; unsigned long rounds; struct hs_hash_policy *p; } pols[] = {
		{ "yescrypt", 3, &y3 }, { "yescrypt", 5, &y5 }, { "yescrypt", 7, &y7 },
		{ "yescrypt", 0, &y0 }, { "gost_yescrypt", 0, &g0 }, { "sha512", 0, &s0 },
		{ "sha512", 1000, &s1000 }, { "sha512", 5000, &s5000 },
		{ "sha512", 10000, &s10000 }, { "blowfish", 0, &b0 }, { "blowfish", 5, &b5 },
		{ "blowfish", 10, &b10 }, { "md5", 0, &m0 },
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(pols); i++)
		assert_int_equal(hs_hash_policy_from_method(pols[i].word, pols[i].rounds,
							    pols[i].p), 0);

	assert_int_equal(hs_hash_password("pw", &y5, hy5, sizeof hy5), 0);
	assert_false(hs_hash_needs_rehash(hy5, &y5));
	assert_false(hs_hash_needs_rehash(hy5, &y0));   /* default cost is 5 */
	assert_false(hs_hash_needs_rehash(hy5, &y3));   /* above policy is fine */
	assert_true(hs_hash_needs_rehash(hy5, &y7));
	assert_true(hs_hash_needs_rehash(hy5, &s0));    /* other method */
	assert_true(hs_hash_needs_rehash(hy5, &g0));    /* $gy$ is not $y$ */

	assert_int_equal(hs_hash_password("pw", &s0, hs, sizeof hs), 0);   /* rounds 5000 */
	assert_false(hs_hash_needs_rehash(hs, &s0));
	assert_false(hs_hash_needs_rehash(hs, &s5000));
	assert_false(hs_hash_needs_rehash(hs, &s1000));
	assert_true(hs_hash_needs_rehash(hs, &s10000));
	assert_true(hs_hash_needs_rehash(hs, &y0));
	assert_int_equal(hs_hash_password("pw", &s10000, hs_r, sizeof hs_r), 0);
	assert_false(hs_hash_needs_rehash(hs_r, &s10000));
	assert_false(hs_hash_needs_rehash(hs_r, &s0));
	assert_true(hs_hash_needs_rehash("$6$rounds=999999999999999999999$x$y", &s0));
	assert_true(hs_hash_needs_rehash("$6$rounds=abc$x$y", &s0));

	struct hs_hash_policy b4;
	assert_int_equal(hs_hash_policy_from_method("blowfish", 4, &b4), 0);
	assert_int_equal(hs_hash_password("pw", &b4, hb4, sizeof hb4), 0);
	assert_true(hs_hash_needs_rehash(hb4, &b0));    /* default is above 4 */
	assert_true(hs_hash_needs_rehash(hb4, &b5));
	assert_false(hs_hash_needs_rehash(hb4, &b4));
	assert_true(hs_hash_needs_rehash(hb4, &b10));
	/* $2a$/$2y$ are not the policy's $2b$ */
	assert_true(hs_hash_needs_rehash("$2y$10$abcdefghijklmnopqrstuuCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", &b5));

	assert_int_equal(hs_hash_password("pw", &m0, hm, sizeof hm), 0);
	assert_false(hs_hash_needs_rehash(hm, &m0));
	assert_true(hs_hash_needs_rehash(hm, &y0));
	assert_true(hs_hash_needs_rehash("abJnggxhB/yWI", &y0));

	/* yescrypt params we cannot decode: rehash */
	assert_true(hs_hash_needs_rehash("$y$~~~$abc$def", &y0));

	/* nothing to rehash */
	assert_false(hs_hash_needs_rehash("", &y0));
	assert_false(hs_hash_needs_rehash("!", &y0));
	assert_false(hs_hash_needs_rehash("*", &y0));
	assert_false(hs_hash_needs_rehash("!$6$abc$def", &y0));
	assert_false(hs_hash_needs_rehash(NULL, &y0));

	/* a policy that cannot produce hashes never asks for a rehash */
	struct hs_hash_policy bogus = { .prefix = "$9$", .rounds = 0 };
	assert_false(hs_hash_needs_rehash(hs, &bogus));
}

static void test_consttime_streq(void **state)
{
	static const struct { const char *a, *b; bool equal; } cases[] = {
		{ "", "", true }, { "abc", "abc", true },
		{ "abc", "abd", false }, { "abc", "ab", false }, { "ab", "abc", false },
		{ "", "a", false }, { "a", "", false }, { "\x80", "\x00", false },
		/* differences in high bits and at the very end are seen */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xff",
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\x7f", false },
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++)
		assert_int_equal(hs_hash_consttime_streq(cases[i].a, cases[i].b), cases[i].equal);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median5(double v[5])
{
	qsort(v, 5, sizeof v[0], cmp_double);
	return v[2];
}

static void test_dummy_verify_timing(void **state)
{
	static const char *const words[] = { "yescrypt", "sha512" };
	char h[HS_HASH_MAX + 1];

	for (size_t w = 0; w < HS_ARRAY_SIZE(words); w++) {
		struct hs_hash_policy p;
		unsigned long rounds = strcmp(words[w], "sha512") == 0 ? 50000 : 0;
		assert_int_equal(hs_hash_policy_from_method(words[w], rounds, &p), 0);
		assert_int_equal(hs_hash_password("secret", &p, h, sizeof h), 0);

		double real[5], dummy[5];
		for (int i = 0; i < 5; i++) {
			double t0 = now_s();
			assert_int_equal(hs_hash_verify_password("wrong", h, false), 0);
			double t1 = now_s();
			hs_hash_dummy_verify("wrong", &p);
			double t2 = now_s();
			real[i] = t1 - t0;
			dummy[i] = t2 - t1;
		}
		double r = median5(real);
		double d = median5(dummy);
		print_message("%s: verify %.4f s, dummy %.4f s\n", words[w], r, d);
		assert_true(d > r / 2);
		assert_true(d < r * 2);
	}
	/* NULL policy and NULL password must not crash */
	hs_hash_dummy_verify(NULL, NULL);
	struct hs_hash_policy bogus = { .prefix = "$9$", .rounds = 0 };
	hs_hash_dummy_verify("x", &bogus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_words),
		cmocka_unit_test(test_policy_default),
		cmocka_unit_test(test_policy_from_config),
		cmocka_unit_test(test_every_method_roundtrip),
		cmocka_unit_test(test_hash_costs_in_output),
		cmocka_unit_test(test_hash_errors),
		cmocka_unit_test(test_legacy_and_locked),
		cmocka_unit_test(test_rehash),
		cmocka_unit_test(test_consttime_streq),
		cmocka_unit_test(test_dummy_verify_timing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
