/* Password hashing through libxcrypt (DESIGN.md section 6). */
#ifndef HS_HASH_H
#define HS_HASH_H

#include <stdbool.h>
#include <stddef.h>

struct hs_config;

/* A hashing policy: crypt prefix ("$y$", "$6$", "$2b$", "$1$", "$gy$",
 * "$5$") and cost (0 = libxcrypt's default for that method). */
struct hs_hash_policy {
	char prefix[8];
	unsigned long rounds;
};

/* Method word -> policy.  Accepts pam_unix's words (yescrypt, sha512,
 * sha256, blowfish, md5, gost_yescrypt) and login.defs' ENCRYPT_METHOD
 * values (YESCRYPT, SHA512, SHA256, BCRYPT, MD5, GOST_YESCRYPT),
 * case-insensitively.  DES, "" and anything unknown -> -HS_E_METHOD. */
int hs_hash_policy_from_method(const char *method, unsigned long rounds,
                               struct hs_hash_policy *out);

/* Policy from login.defs: ENCRYPT_METHOD with YESCRYPT_COST_FACTOR,
 * SHA_CRYPT_{MIN,MAX}_ROUNDS, BCRYPT_{MIN,MAX}_ROUNDS; no ENCRYPT_METHOD
 * -> crypt_preferred_method() (MD5_CRYPT_ENAB is ignored: legacy). */
int hs_hash_policy_from_config(const struct hs_config *defs, struct hs_hash_policy *out);

/* Default: crypt_preferred_method(), default cost. */
void hs_hash_policy_default(struct hs_hash_policy *out);

/* Hash password with a fresh salt (crypt_gensalt_rn with getrandom
 * entropy, then crypt_rn).  out receives the hash (size >= HS_HASH_MAX+1).
 * All intermediate buffers are wiped. */
int hs_hash_password(const char *password, const struct hs_hash_policy *p,
                     char *out, size_t outsize);

/* Verify password against a stored hash with crypt_rn and a constant-time
 * comparison.  Returns 1 for a match, 0 for a mismatch, negative on error.
 * A hash that is empty, locked ('!'), '*' or that crypt_checksalt calls
 * invalid never matches; one it calls legacy or disabled matches only with
 * allow_legacy. */
int hs_hash_verify_password(const char *password, const char *hash, bool allow_legacy);

/* ---- legacy methods: one policy for every writer (docs/decisions.md) ----
 * libxcrypt's crypt_checksalt() decides what is legacy (on Debian 12: md5,
 * sha256, DES); hs_hash_verify_password refuses those unless allow_legacy, so
 * nothing may write them unless the writer was given the same opt-in (the
 * PAM module's allow_legacy, the --allow-legacy option of chpasswd and
 * newusers). */
enum hs_hash_class {
	HS_HASH_USABLE,   /* a method libxcrypt calls OK (or merely too cheap) */
	HS_HASH_LEGACY,   /* a method it calls legacy or disabled */
	HS_HASH_INVALID,  /* not a hash or setting it recognises */
};
enum hs_hash_class hs_hash_classify(const char *hash);

/* Would hs_hash_verify_password run crypt on this hash with allow_legacy?  False
 * for "", a '!'-locked hash, '*', an invalid hash, and (unless
 * allow_legacy) a legacy one. */
bool hs_hash_verifiable(const char *hash, bool allow_legacy);

/* May hashes made under p be written?  0 when yes; -HS_E_METHOD when p's
 * method is legacy and allow_legacy is false (or when p cannot be used at
 * all).  *name (may be NULL) gets the method's login.defs name ("MD5",
 * "SHA256", ...) or the prefix, for the message. */
int hs_hash_policy_check_legacy(const struct hs_hash_policy *p, bool allow_legacy,
                                const char **name);

/* A value given already hashed (chpasswd -e, -c NONE; newusers -c NONE):
 * "*", "!" or "!*" alone (no password login), or a hash libxcrypt
 * recognises, optionally locked with one leading '!'; at most HS_HASH_MAX
 * bytes, no ':' or control character.  Returns 0 (fine), 1 (fine but a
 * legacy method: the caller needs its opt-in), or -1 with *problem set to
 * a phrase for "user 'NAME': PHRASE". */
int hs_hash_check_given(const char *hash, const char **problem);

/* Burn the same time as hs_hash_verify_password on a real hash of policy p, for
 * unknown users. */
void hs_hash_dummy_verify(const char *password, const struct hs_hash_policy *p);

/* Is hash's method different from p's, or its cost below p's? */
bool hs_hash_needs_rehash(const char *hash, const struct hs_hash_policy *p);

/* Constant-time comparison of two NUL-terminated strings of possibly
 * different lengths (time depends only on the longer length). */
bool hs_hash_consttime_streq(const char *a, const char *b);

#endif
