/* Password hashing through libxcrypt (DESIGN.md section 6).
 *
 * Only the reentrant interfaces: crypt_gensalt_rn with entropy we fetch
 * from getrandom(), and crypt_rn with a heap struct crypt_data that is
 * wiped before it is freed on every path.  Never crypt()/crypt_r() with
 * static state.
 *
 * Decisions:
 *  - SHA_CRYPT_MIN_ROUNDS..SHA_CRYPT_MAX_ROUNDS (and the BCRYPT pair): we
 *    use the MAX (shadow-utils picks a random value in the range).  A fixed
 *    value keeps hs_hash_needs_rehash stable: with a random cost a hash
 *    made at the low end would be "below policy" on every check.  Missing
 *    or inverted bounds follow shadow-utils (one bound alone is used for
 *    both; MIN > MAX means MIN), and the result is clamped to the method's
 *    valid range like shadow-utils does.
 *  - A hash crypt_checksalt() calls CRYPT_SALT_TOO_CHEAP is still verified
 *    (the method is enabled; "rehash" raises its cost).  On Debian 12's
 *    libxcrypt, $5$ (sha256) and $1$ (md5) are LEGACY: they only verify
 *    with allow_legacy, and hs_hash_policy_check_legacy is the one rule
 *    every writer asks before producing them (refused without the same
 *    opt-in). */
#include "hash.h"

#include <crypt.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "config.h"
#include "records.h"
#include "util.h"

struct method {
	const char *pam_word;      /* pam_unix option */
	const char *defs_word;     /* login.defs ENCRYPT_METHOD */
	const char *prefix;
	unsigned long min_rounds, max_rounds;   /* 0, 0: no cost parameter */
};

static const struct method methods[] = {
	{ "yescrypt",      "YESCRYPT",      "$y$",  1, 11 },
	{ "gost_yescrypt", "GOST_YESCRYPT", "$gy$", 1, 11 },
	{ "sha512",        "SHA512",        "$6$",  1000, 999999999 },
	{ "sha256",        "SHA256",        "$5$",  1000, 999999999 },
	{ "blowfish",      "BCRYPT",        "$2b$", 4, 31 },
	{ "md5",           "MD5",           "$1$",  0, 0 },
};

/* Enough entropy for every method's salt (yescrypt takes up to 32 bytes
 * and needs at least 16; bcrypt needs 16). */
#define HS_SALT_BYTES 32

static const struct method *method_by_prefix(const char *prefix)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(methods); i++)
		if (strcmp(methods[i].prefix, prefix) == 0)
			return &methods[i];
	return NULL;
}

static unsigned long clamp_rounds(const struct method *m, unsigned long rounds)
{
	if (m->max_rounds == 0 || rounds == 0)
		return 0;
	if (rounds < m->min_rounds)
		return m->min_rounds;
	if (rounds > m->max_rounds)
		return m->max_rounds;
	return rounds;
}

int hs_hash_policy_from_method(const char *method, unsigned long rounds,
                               struct hs_hash_policy *out)
{
	if (!method || !out)
		return -HS_E_METHOD;
	for (size_t i = 0; i < HS_ARRAY_SIZE(methods); i++) {
		const struct method *m = &methods[i];
		if (strcasecmp(method, m->pam_word) == 0 || strcasecmp(method, m->defs_word) == 0) {
			memset(out, 0, sizeof *out);
			strcpy(out->prefix, m->prefix);
			out->rounds = clamp_rounds(m, rounds);
			return 0;
		}
	}
	return -HS_E_METHOD;
}

void hs_hash_policy_default(struct hs_hash_policy *out)
{
	const char *pref = crypt_preferred_method();

	memset(out, 0, sizeof *out);
	if (!pref || strlen(pref) >= sizeof out->prefix)
		pref = "$y$";
	strcpy(out->prefix, pref);
}

/* shadow-utils' reading of a MIN/MAX rounds pair (-1 = not set); we take
 * the upper end, see the comment at the top. */
static unsigned long rounds_from_range(const struct hs_config *defs, const char *min_key,
                                       const char *max_key)
{
	long lo = hs_config_get_long(defs, min_key, -1, LONG_MAX, -1);
	long hi = hs_config_get_long(defs, max_key, -1, LONG_MAX, -1);

	if (lo == -1 && hi == -1)
		return 0;
	if (lo == -1)
		lo = hi;
	if (hi == -1)
		hi = lo;
	if (lo > hi)
		hi = lo;
	/* 0 would mean "library default": an explicit tiny value clamps to
	 * the method's minimum instead */
	return hi < 1 ? 1 : (unsigned long)hi;
}

int hs_hash_policy_from_config(const struct hs_config *defs, struct hs_hash_policy *out)
{
	const char *word = hs_config_get_str(defs, "ENCRYPT_METHOD", NULL);
	int r;

	if (!out)
		return -EINVAL;
	if (word) {
		r = hs_hash_policy_from_method(word, 0, out);
		if (r < 0)
			return r;
	} else {
		hs_hash_policy_default(out);
	}

	const struct method *m = method_by_prefix(out->prefix);
	if (!m)
		return 0;   /* preferred method we do not know costs for */
	unsigned long rounds = 0;
	if (strcmp(m->prefix, "$y$") == 0 || strcmp(m->prefix, "$gy$") == 0) {
		long cost = hs_config_get_long(defs, "YESCRYPT_COST_FACTOR", LONG_MIN, LONG_MAX, 0);
		rounds = cost < 1 ? (cost == 0 ? 0 : 1) : (unsigned long)cost;
	} else if (strcmp(m->prefix, "$6$") == 0 || strcmp(m->prefix, "$5$") == 0) {
		rounds = rounds_from_range(defs, "SHA_CRYPT_MIN_ROUNDS", "SHA_CRYPT_MAX_ROUNDS");
	} else if (strcmp(m->prefix, "$2b$") == 0) {
		rounds = rounds_from_range(defs, "BCRYPT_MIN_ROUNDS", "BCRYPT_MAX_ROUNDS");
	}
	out->rounds = clamp_rounds(m, rounds);
	return 0;
}

/* crypt_gensalt_rn with the given entropy; setting must hold
 * CRYPT_GENSALT_OUTPUT_SIZE bytes. */
static int make_setting(const struct hs_hash_policy *p, const char *rbytes, int nrbytes,
                        char *setting, int size)
{
	if (!p || !memchr(p->prefix, '\0', sizeof p->prefix) || p->prefix[0] != '$')
		return -HS_E_METHOD;
	errno = 0;
	if (!crypt_gensalt_rn(p->prefix, p->rounds, rbytes, nrbytes, setting, size) ||
	    setting[0] == '*')
		return -HS_E_METHOD;
	return 0;
}

/* A setting of policy p made from fixed bytes: for asking libxcrypt
 * about the policy (its verdict, its cost) and for the dummy hash. */
static int fixed_setting(const struct hs_hash_policy *p, char setting[CRYPT_GENSALT_OUTPUT_SIZE])
{
	static const char fixed[HS_SALT_BYTES] = "hardened-shadow fixed salt bytes";

	return make_setting(p, fixed, (int)sizeof fixed, setting, CRYPT_GENSALT_OUTPUT_SIZE);
}

/* Run crypt_rn into a heap crypt_data put in *cd, which the caller
 * declares _cleanup_secret_buf_: it holds the password's hash, and is
 * wiped on every path.  Returns the hash, or NULL with *err set. */
static const char *run_crypt(const char *password, const char *setting,
                             struct hs_secret_buf *cd, int *err)
{
	cd->size = sizeof(struct crypt_data);
	cd->p = calloc(1, cd->size);
	if (!cd->p) {
		*err = -ENOMEM;
		return NULL;
	}
	errno = 0;
	const char *h = crypt_rn(password, setting, cd->p, (int)cd->size);
	if (!h || h[0] == '*') {
		*err = errno == ENOMEM ? -ENOMEM : -HS_E_METHOD;
		return NULL;
	}
	return h;
}

int hs_hash_password(const char *password, const struct hs_hash_policy *p,
                     char *out, size_t outsize)
{
	char rbytes[HS_SALT_BYTES];
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	int r;

	if (!password || !p || !out || outsize == 0)
		return -EINVAL;
	out[0] = '\0';
	for (size_t got = 0; got < sizeof rbytes;) {
		ssize_t n = getrandom(rbytes + got, sizeof rbytes - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			hs_wipe(rbytes, sizeof rbytes);
			return r;
		}
		got += (size_t)n;
	}
	r = make_setting(p, rbytes, (int)sizeof rbytes, setting, (int)sizeof setting);
	hs_wipe(rbytes, sizeof rbytes);
	if (r < 0)
		return r;

	_cleanup_secret_buf_ struct hs_secret_buf cd = { NULL, 0 };
	const char *h = run_crypt(password, setting, &cd, &r);
	if (!h)
		return r;
	size_t len = strlen(h);
	if (len >= outsize || len > HS_HASH_MAX)
		return -ERANGE;
	memcpy(out, h, len + 1);
	return 0;
}

bool hs_hash_consttime_streq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t n = la > lb ? la : lb;
	volatile unsigned char diff = (unsigned char)(la != lb);

	/* the loop runs over the longer string; the shorter one reads as
	 * NULs past its end, without reading past its terminator */
	for (size_t i = 0; i < n; i++) {
		unsigned char ca = i < la ? (unsigned char)a[i] : 0;
		unsigned char cb = i < lb ? (unsigned char)b[i] : 0;
		diff |= ca ^ cb;
	}
	return diff == 0;
}

enum hs_hash_class hs_hash_classify(const char *hash)
{
	if (!hash)
		return HS_HASH_INVALID;
	switch (crypt_checksalt(hash)) {
	case CRYPT_SALT_OK:
	case CRYPT_SALT_TOO_CHEAP:
		return HS_HASH_USABLE;
	case CRYPT_SALT_METHOD_LEGACY:
	case CRYPT_SALT_METHOD_DISABLED:
		return HS_HASH_LEGACY;
	default:
		return HS_HASH_INVALID;
	}
}

/* Usable, or legacy and allowed. */
static bool class_allowed(enum hs_hash_class c, bool allow_legacy)
{
	return c == HS_HASH_USABLE || (c == HS_HASH_LEGACY && allow_legacy);
}

bool hs_hash_verifiable(const char *hash, bool allow_legacy)
{
	/* empty = no password (the caller decides about nullok), '!' =
	 * locked, '*' = no password login: none of them ever matches */
	if (!hash || hash[0] == '\0' || hash[0] == '!' || hash[0] == '*')
		return false;
	return class_allowed(hs_hash_classify(hash), allow_legacy);
}

int hs_hash_policy_check_legacy(const struct hs_hash_policy *p, bool allow_legacy,
                                const char **name)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	const struct method *m;

	if (name)
		*name = "?";
	if (!p || !memchr(p->prefix, '\0', sizeof p->prefix))
		return -HS_E_METHOD;
	m = method_by_prefix(p->prefix);
	if (name)
		*name = m ? m->defs_word : p->prefix;
	/* libxcrypt's own verdict on a setting of this policy, so the rule
	 * follows the library (and whatever it is built to call legacy) */
	if (fixed_setting(p, setting) < 0 ||
	    !class_allowed(hs_hash_classify(setting), allow_legacy))
		return -HS_E_METHOD;
	return 0;
}

/* Is the hash part of h complete?  crypt_checksalt judges only the prefix
 * and the setting: "$6$abc", or a hash cut short in a copy, passes it, and
 * then no password ever matches.  For the methods whose hash part has a
 * fixed length (crypt(5)), that many characters of crypt's alphabet must
 * follow the last '$'; other methods are left to libxcrypt. */
static bool hash_part_complete(const char *h)
{
	static const struct { const char *prefix; size_t len; } parts[] = {
		{ "$y$", 43 }, { "$gy$", 43 }, { "$7$", 43 }, { "$6$", 86 }, { "$5$", 43 },
		{ "$1$", 22 }, { "$2b$", 53 }, { "$2a$", 53 }, { "$2y$", 53 },
	};
	const char *last = strrchr(h, '$');

	for (size_t i = 0; i < HS_ARRAY_SIZE(parts); i++) {
		if (strncmp(h, parts[i].prefix, strlen(parts[i].prefix)) != 0)
			continue;
		/* bcrypt: "$2b$NN$" then 22 characters of salt and 31 of hash */
		return strlen(last + 1) == parts[i].len &&
		       strspn(last + 1, "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "abcdefghijklmnopqrstuvwxyz") == parts[i].len;
	}
	return true;
}

int hs_hash_check_given(const char *hash, const char **problem)
{
	const char *h = hash;

	*problem = NULL;
	if (!hash || hash[0] == '\0') {
		*problem = "empty password (use passwd -d to remove a password)";
		return -1;
	}
	if (strlen(hash) > HS_HASH_MAX) {
		*problem = "the hash is longer than the 512 bytes a shadow field may hold";
		return -1;
	}
	if (!hs_records_field_valid(hash)) {
		*problem = "the hash contains ':' or a control character";
		return -1;
	}
	if (strcmp(hash, "*") == 0 || strcmp(hash, "!") == 0 || strcmp(hash, "!*") == 0)
		return 0;
	if (h[0] == '!')
		h++;
	/* without '$' (clear text, or a DES hash) it is no method of ours */
	switch (h[0] == '$' ? crypt_checksalt(h) : CRYPT_SALT_INVALID) {
	case CRYPT_SALT_OK:
	case CRYPT_SALT_TOO_CHEAP:
		if (!hash_part_complete(h)) {
			*problem = "the hash is cut short (no password could match it)";
			return -1;
		}
		return 0;
	case CRYPT_SALT_METHOD_LEGACY:
		return 1;
	case CRYPT_SALT_METHOD_DISABLED:
		*problem = "the hash method is disabled in libxcrypt";
		return -1;
	default:
		*problem = "not a hash libxcrypt recognises (clear text?)";
		return -1;
	}
}

int hs_hash_verify_password(const char *password, const char *hash, bool allow_legacy)
{
	_cleanup_secret_buf_ struct hs_secret_buf cd = { NULL, 0 };
	int r;

	if (!password || !hs_hash_verifiable(hash, allow_legacy))
		return 0;
	const char *h = run_crypt(password, hash, &cd, &r);
	if (!h)
		return r == -ENOMEM ? r : 0;
	return hs_hash_consttime_streq(h, hash) ? 1 : 0;
}

void hs_hash_dummy_verify(const char *password, const struct hs_hash_policy *p)
{
	/* A fixed salt: the point is only to spend the same work as a
	 * real verification of a hash made under policy p. */
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	_cleanup_secret_buf_ struct hs_secret_buf cd = { NULL, 0 };
	struct hs_hash_policy def;
	int r;

	/* no policy, or one libxcrypt cannot set up: its preferred method */
	if (!p || fixed_setting(p, setting) < 0) {
		hs_hash_policy_default(&def);
		if (fixed_setting(&def, setting) < 0)
			return;
	}
	const char *h = run_crypt(password ? password : "", setting, &cd, &r);
	if (!h)
		return;
	/* compare like the real path does; the result is meaningless */
	volatile bool same = hs_hash_consttime_streq(h, setting);
	(void)same;
}

static int itoa64_index(char ch)
{
	static const char itoa64[] =
		"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const char *p = ch ? strchr(itoa64, ch) : NULL;

	return p ? (int)(p - itoa64) : -1;
}

/* Decode one of yescrypt's variable-length unsigned fields (the inverse
 * of yescrypt's encode64_uint32).  Returns the number of characters used
 * or -1. */
static int yescrypt_decode_uint32(const char *s, uint32_t min, uint64_t *out)
{
	int c = itoa64_index(s[0]);
	uint64_t start = 0, end = 47, chars = 1, bits = 0, base = 0;

	if (c < 0)
		return -1;
	while ((uint64_t)c > end) {
		base += (end + 1 - start) << bits;
		start = end + 1;
		end = start + (62 - end) / 2;
		chars++;
		bits += 6;
		if (start > 63 || chars > 6)
			return -1;
	}
	uint64_t v = base + (((uint64_t)c - start) << bits);
	for (uint64_t i = 1; i < chars; i++) {
		int d = itoa64_index(s[i]);
		if (d < 0)
			return -1;
		bits -= 6;
		v += (uint64_t)d << bits;
	}
	*out = v + min;
	return (int)chars;
}

/* A comparable cost for a hash or setting of the given method, larger =
 * more expensive.  yescrypt: N * r (its memory cost, which the cost
 * factor scales); SHA-crypt: rounds (5000 when absent); bcrypt: the log2
 * cost.  Returns false when the cost cannot be parsed. */
static bool parse_cost(const char *h, const char *prefix, uint64_t *cost)
{
	const char *s = h + strlen(prefix);

	if (strcmp(prefix, "$y$") == 0 || strcmp(prefix, "$gy$") == 0) {
		uint64_t flavor, nlog2, r;
		int k = yescrypt_decode_uint32(s, 0, &flavor);
		if (k < 0)
			return false;
		s += k;
		/* nlog2 + 31 <= 63: N * r, r at most 2^30, fits in 64 bits */
		if ((k = yescrypt_decode_uint32(s, 1, &nlog2)) < 0 || nlog2 + 31 > 63)
			return false;
		s += k;
		if ((k = yescrypt_decode_uint32(s, 1, &r)) < 0 || r > (1u << 30))
			return false;
		*cost = ((uint64_t)1 << nlog2) * r;
		return true;
	}
	if (strcmp(prefix, "$6$") == 0 || strcmp(prefix, "$5$") == 0) {
		if (strncmp(s, "rounds=", 7) != 0) {
			*cost = 5000;
			return true;
		}
		s += 7;
		char buf[16];
		size_t n = strcspn(s, "$");
		if (n == 0 || n >= sizeof buf || s[n] != '$')
			return false;
		memcpy(buf, s, n);
		buf[n] = '\0';
		unsigned long v;
		if (hs_parse_ulong(buf, 0, ULONG_MAX, &v) < 0)
			return false;
		*cost = v;
		return true;
	}
	if (strcmp(prefix, "$2b$") == 0) {
		if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] != '$')
			return false;
		*cost = (uint64_t)(s[0] - '0') * 10 + (uint64_t)(s[1] - '0');
		return true;
	}
	*cost = 0;   /* no cost parameter (md5) */
	return true;
}

bool hs_hash_needs_rehash(const char *hash, const struct hs_hash_policy *p)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	uint64_t have, want;

	if (!hash || !p || !memchr(p->prefix, '\0', sizeof p->prefix))
		return false;
	/* nothing to rehash: no password, locked, or no password login */
	if (hash[0] == '\0' || hash[0] == '!' || hash[0] == '*')
		return false;
	/* a policy we cannot produce must not trigger a rehash */
	if (fixed_setting(p, setting) < 0)
		return false;
	if (strncmp(hash, p->prefix, strlen(p->prefix)) != 0)
		return true;
	/* the policy's cost as libxcrypt encodes it (this also turns
	 * rounds 0 into the library's default for the method) */
	if (!parse_cost(setting, p->prefix, &want))
		return false;
	if (!parse_cost(hash, p->prefix, &have))
		return true;
	return have < want;
}
