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
int hs_verify_password(const char *password, const char *hash, bool allow_legacy);

/* Burn the same time as hs_verify_password on a real hash of policy p, for
 * unknown users. */
void hs_dummy_verify(const char *password, const struct hs_hash_policy *p);

/* Is hash's method different from p's, or its cost below p's? */
bool hs_hash_needs_rehash(const char *hash, const struct hs_hash_policy *p);

/* Constant-time comparison of two NUL-terminated strings of possibly
 * different lengths (time depends only on the longer length). */
bool hs_consttime_streq(const char *a, const char *b);

#endif
