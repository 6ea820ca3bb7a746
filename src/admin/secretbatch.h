/* The "NAME:SECRET" batch of chpasswd and chgpasswd: their common options
 * (-c -e -m -s --allow-legacy), and pass 1 (read and check every line,
 * keep the secrets) and pass 2 (hash them on every CPU) of their
 * all-or-nothing runs.  What differs between the two (users in the tree,
 * groups in /etc/group; the words of a few messages) comes in a
 * struct hs_secret_tool. */
#ifndef HS_SECRETBATCH_H
#define HS_SECRETBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "batchio.h"
#include "hash.h"
#include "names.h"
#include "records.h"

enum hs_secret_mode {
	HS_SECRET_DEFAULT,    /* no -c, -e, -m: the program's own way */
	HS_SECRET_HASH,       /* -c METHOD / -m: hash here */
	HS_SECRET_ENCRYPTED,  /* -e, -c NONE: the hashes are given */
};

struct hs_secret_options {
	enum hs_secret_mode mode;
	bool allow_legacy;      /* --allow-legacy: MD5/SHA256 (lib/auth/hash.h's rule) */
	const char *method;     /* -c METHOD, "MD5" for -m, else NULL */
	unsigned long rounds;   /* -s, 0 = the method's default */
	struct hs_hash_policy policy;   /* HS_SECRET_HASH: from method and rounds */
};

struct hs_secret_entry {
	char name[HS_NAME_MAX + 1];
	unsigned long lineno;
	uid_t uid;      /* what tool->lookup says (chpasswd: the user's uid) */
	char *secret;   /* clear-text password, or the hash once computed/given */
	size_t secret_size;
};

struct hs_secret_batch {
	struct hs_secret_entry *v;
	size_t n, alloc;
	size_t bytes;
	unsigned long errors;   /* per-line errors reported so far */
	bool legacy;            /* a given hash uses a legacy method */
	void *seen;             /* the names so far (hs_batch_seen_add) */
};

struct hs_secret_tool {
	const char *name;       /* "chpasswd": the -R/-P messages */
	const char *what;       /* "user" or "group" */
	/* --help's words on --allow-legacy, after "allow MD5 and SHA256
	 * hashes ": "(legacy: ...)", wrapped as the help text is */
	const char *legacy_help;
	bool root_in_help;      /* --help lists -R (as shadow-utils' does) */
	/* -R/-P's hint names the given directory (else the word DIR) */
	bool hint_shows_dir;
	/* -s without -c is reported before the exclusive -c/-e/-m */
	bool sflag_checked_first;
	/* why -c DES is refused: "its hashes would not authenticate" */
	const char *des_effect;
	bool (*name_valid)(const char *name);
	bool invalid_name_shown;        /* "invalid group name 'X'" */
	/* an empty password is refused with -e too; the hint: "use passwd -d
	 * to remove a password" */
	bool empty_always_refused;
	const char *empty_hint;
	/* where a legacy hash is verified: "where the PAM module has
	 * allow_legacy" */
	const char *legacy_where;
	/* Does name exist?  0 (with *uid set if it means anything), or -1
	 * after hs_secret_line_error. */
	int (*lookup)(void *ctx, struct hs_secret_batch *b, const char *name,
		      unsigned long lineno, uid_t *uid);
	void *ctx;
};

/* The options; a usage error exits 2. */
void hs_secret_parse_options(int argc, char **argv, const struct hs_secret_tool *tool,
			     struct hs_secret_options *o);

/* lib/auth/hash.h's one rule for writers (chpasswd, chgpasswd, newusers):
 * a method libxcrypt calls legacy only with --allow-legacy, else "crypt
 * method X is legacy: libxcrypt verifies its hashes only WHERE; ..." and
 * exit status.  Returns the method's name. */
const char *hs_secret_check_legacy(const struct hs_hash_policy *policy, bool allow_legacy,
				   const char *where, int status);

/* "PROG: line N: MESSAGE", counted in b->errors (batchio.h). */
#define hs_secret_line_error(b, lineno, ...) \
	hs_batch_line_error(&(b)->errors, lineno, __VA_ARGS__)

/* The checks of a secret alone (o->mode: a password, or a hash given):
 * 0, 1 for a legacy hash --allow-legacy lets through, or -1 after
 * "line N: WHAT 'NAME': what is wrong", counted in *errors. */
int hs_secret_check(const struct hs_secret_tool *tool, const struct hs_secret_options *o,
		    unsigned long *errors, unsigned long lineno, const char *name,
		    const char *secret);

/* Pass 1: every line of in, checked; 0, or -1 when any line was wrong
 * (each reported, then "error detected, changes ignored"; b is wiped). */
int hs_secret_read(FILE *in, const struct hs_secret_tool *tool,
		   const struct hs_secret_options *o, struct hs_secret_batch *b);

/* Pass 2: every secret becomes its hash per policy, on every CPU; 0, or
 * -1 reported. */
int hs_secret_hash(const struct hs_secret_tool *tool, const struct hs_hash_policy *policy,
		   struct hs_secret_batch *b);

/* Wipe and free every secret and the batch. */
void hs_secret_wipe(struct hs_secret_batch *b);

#endif
