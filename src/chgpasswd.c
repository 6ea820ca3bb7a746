/* chgpasswd: set many groups' passwords from "group:password" lines on
 * standard input.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' chgpasswd(8) (Debian 12, shadow 4.13); chgpasswd(8)
 * of this package lists where we differ.
 *
 * All or nothing.  Every group password lives in /etc/gshadow (or, on a
 * system without it, /etc/group), so the whole batch is one commit:
 *   1. read and check every line (format, length, duplicates, with -e a
 *      usable hash) and look every group up in /etc/group; any error is
 *      reported with its line number and nothing is written;
 *   2. hash every password (per -c/-s, -m, or login.defs' ENCRYPT_METHOD),
 *      on every CPU, without holding the locks;
 *   3. under the locks, check every group again (one deleted meanwhile is
 *      an error naming its line, and nothing is written), set all the
 *      passwords in memory and write once (hs_groupops_commit puts an
 *      already written file back when a later one fails).
 * Legacy methods (MD5, SHA256: libxcrypt's verdict) follow lib/hash.h's one
 * rule, as chpasswd and newusers: refused unless --allow-legacy, DES always.
 * Line reading and per-line errors are lib/batchio's, as theirs.
 *
 * Every password is wiped as soon as it has been hashed, and the stdio
 * buffer of standard input is ours so it can be wiped too. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "batchio.h"
#include "cli.h"
#include "config.h"
#include "groupops.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "util.h"

/* shadow-utils' chgpasswd exit codes */
#define E_SUCCESS 0
#define E_FAILURE 1
#define E_USAGE   2

/* Longest input line (bytes, without the newline). */
#define LINE_MAX_BYTES 4096
/* Longest clear-text password: PAM's own limit (PAM_MAX_RESP_SIZE). */
#define PASSWORD_MAX 512
/* What the whole batch may hold in memory (passwords and hashes). */
#define BATCH_BYTES_MAX (64u * 1024 * 1024)

enum mode {
	MODE_HASH,       /* hash here: -c METHOD, -m, or login.defs */
	MODE_ENCRYPTED,  /* -e, -c NONE: the hashes are given */
};

struct options {
	enum mode mode;
	bool eflg, mflg, cflg, sflg;
	bool allow_legacy;      /* --allow-legacy: MD5/SHA256 (lib/hash.h's rule) */
	const char *method;
	unsigned long rounds;
	struct hs_hash_policy policy;
};

struct entry {
	char name[HS_NAME_MAX + 1];
	unsigned long lineno;
	char *secret;   /* clear-text password, or the hash once computed/given */
	size_t secret_size;
};

struct batch {
	struct entry *v;
	size_t n, alloc;
	size_t bytes;
};

static char stdin_buffer[8192];
static unsigned long errors;

#define line_error(lineno, ...) hs_batch_line_error(&errors, lineno, __VA_ARGS__)

static _Noreturn void usage(int status)
{
	FILE *f = status == E_SUCCESS ? stdout : stderr;

	fprintf(f,
		"Usage: %s [options]\n"
		"\n"
		"Options:\n"
		"      --allow-legacy            allow MD5 and SHA256 hashes (legacy: newgrp\n"
		"                                refuses them)\n"
		"  -c, --crypt-method METHOD     the crypt method (one of NONE MD5 SHA256 SHA512\n"
		"                                BCRYPT YESCRYPT)\n"
		"  -e, --encrypted               supplied passwords are encrypted\n"
		"  -h, --help                    display this help message and exit\n"
		"  -m, --md5                     encrypt the clear text password using\n"
		"                                the MD5 algorithm\n"
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		"  -s, --sha-rounds              number of rounds for the SHA, BCRYPT\n"
		"                                or YESCRYPT crypt algorithms\n"
		"      --version                 display the version and exit\n"
		"\n",
		hs_cli_prog());
	exit(status);
}

/* lib/hash.h's one rule for writers: a method libxcrypt calls legacy only
 * with --allow-legacy.  Our newgrp never accepts such a hash (it verifies
 * without allow_legacy), so even then it is said. */
static void check_legacy_method(const struct options *o, int status)
{
	const char *name;

	if (hs_hash_policy_check_legacy(&o->policy, o->allow_legacy, &name) < 0)
		hs_die(status, "crypt method %s is legacy: libxcrypt verifies its hashes only "
		       "where allowed explicitly, and newgrp never does; give --allow-legacy to "
		       "write them anyway", name);
	if (hs_hash_policy_check_legacy(&o->policy, false, NULL) < 0)
		hs_warn("warning: libxcrypt calls %s legacy: newgrp will not accept these "
			"passwords", name);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_VERSION = 256, OPT_ALLOW_LEGACY };
	static const struct option longopts[] = {
		{ "allow-legacy", no_argument,       NULL, OPT_ALLOW_LEGACY },
		{ "crypt-method", required_argument, NULL, 'c' },
		{ "encrypted",    no_argument,       NULL, 'e' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "md5",          no_argument,       NULL, 'm' },
		{ "root",         required_argument, NULL, 'R' },
		{ "prefix",       required_argument, NULL, 'P' },
		{ "sha-rounds",   required_argument, NULL, 's' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *rounds_arg = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "c:ehmP:R:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cflg = true;
			o->method = optarg;
			break;
		case 'e':
			o->eflg = true;
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'm':
			o->mflg = true;
			break;
		case 'P':
			hs_die(E_USAGE, "option --prefix is not supported; run chgpasswd inside "
			       "the root instead (chroot DIR chgpasswd)");
		case 'R':
			hs_die(E_USAGE, "option --root is not supported; run chgpasswd inside "
			       "the root instead (chroot DIR chgpasswd)");
		case 's':
			o->sflg = true;
			rounds_arg = optarg;
			break;
		case OPT_ALLOW_LEGACY:
			o->allow_legacy = true;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (optind < argc)
		usage(E_USAGE);
	if (o->sflg && !o->cflg) {
		hs_warn("-s flag is only allowed with the -c flag");
		usage(E_USAGE);
	}
	if ((o->eflg && (o->mflg || o->cflg)) || (o->mflg && o->cflg)) {
		hs_warn("the -c, -e, and -m flags are exclusive");
		usage(E_USAGE);
	}
	if (rounds_arg && hs_parse_ulong(rounds_arg, 1, 999999999UL, &o->rounds) < 0) {
		hs_warn("invalid numeric argument '%s'", rounds_arg);
		usage(E_USAGE);
	}

	o->mode = MODE_HASH;
	if (o->eflg) {
		o->mode = MODE_ENCRYPTED;
	} else if (o->mflg) {
		o->method = "MD5";
	} else if (o->cflg) {
		/* shadow-utils stores the input unchanged with NONE; so do
		 * we, with -e's checks, so clear text never becomes a "hash" */
		if (strcasecmp(o->method, "NONE") == 0)
			o->mode = MODE_ENCRYPTED;
		else if (strcasecmp(o->method, "DES") == 0)
			hs_die(E_USAGE, "crypt method DES is not supported: libxcrypt calls it "
			       "legacy and its hashes would not be accepted by newgrp");
	}
	if (o->mode == MODE_HASH && o->method) {
		/* -s is shadow-utils' cost for SHA (rounds), BCRYPT (log2
		 * rounds) and YESCRYPT (cost factor); 0 = the default */
		if (hs_hash_policy_from_method(o->method, o->rounds, &o->policy) < 0) {
			hs_warn("unsupported crypt method: %s", o->method);
			usage(E_USAGE);
		}
		check_legacy_method(o, E_USAGE);
	}
}

/* ---- pass 1: reading and checking ---- */

static void wipe_batch(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->v[i].secret) {
			hs_wipe(b->v[i].secret, b->v[i].secret_size);
			free(b->v[i].secret);
			b->v[i].secret = NULL;
		}
	}
	free(b->v);
	b->v = NULL;
	b->n = b->alloc = 0;
}

static struct entry *find_entry(const struct batch *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0)
			return &b->v[i];
	return NULL;
}

/* Check one "group:password" line against gr (/etc/group as read now) and
 * add it to the batch. */
static void check_line(const struct options *o, struct hs_accountdb *gr, struct batch *b,
		       char *line, unsigned long lineno, bool *legacy)
{
	char *password = strchr(line, ':');
	char shown[160];
	struct entry *e;
	const char *problem;
	size_t plen;
	int r;

	if (!password) {
		line_error(lineno, "missing new password");
		return;
	}
	*password++ = '\0';
	plen = strlen(password);
	if (line[0] == '\0') {
		line_error(lineno, "missing group name");
		return;
	}
	if (!hs_group_name_valid(line)) {
		line_error(lineno, "invalid group name '%s'", hs_printable(line, shown,
			   sizeof(shown)));
		return;
	}
	if (plen == 0) {
		line_error(lineno, "group '%s': empty password (use gpasswd -r to remove "
			   "a group password)", line);
		return;
	}
	if (o->mode == MODE_ENCRYPTED) {
		r = hs_hash_check_given(password, &problem);
		if (r < 0) {
			line_error(lineno, "group '%s': %s", line, problem);
			return;
		}
		if (r == 1 && !o->allow_legacy) {
			line_error(lineno, "group '%s': the hash uses a legacy method (libxcrypt "
				   "verifies it only where allowed explicitly, and newgrp never "
				   "does); give --allow-legacy to store it anyway", line);
			return;
		}
		if (r == 1)
			*legacy = true;
	} else {
		if (plen > PASSWORD_MAX) {
			line_error(lineno, "group '%s': the password is longer than %d bytes",
				   line, PASSWORD_MAX);
			return;
		}
	}
	e = find_entry(b, line);
	if (e) {
		line_error(lineno, "group '%s' already appears on line %lu", line, e->lineno);
		return;
	}
	if (hs_accountdb_find(gr, line) < 0) {
		line_error(lineno, "group '%s' does not exist", line);
		return;
	}
	if (b->bytes + plen + HS_HASH_MAX + 2 > BATCH_BYTES_MAX) {
		line_error(lineno, "the input holds more than %u MiB of passwords",
			   BATCH_BYTES_MAX >> 20);
		return;
	}
	if (b->n == b->alloc) {
		size_t alloc = b->alloc ? b->alloc * 2 : 64;
		struct entry *v = reallocarray(NULL, alloc, sizeof(*v));

		if (!v)
			hs_die(E_FAILURE, "out of memory");
		if (b->n)
			memcpy(v, b->v, b->n * sizeof(*v));
		hs_wipe(b->v, b->alloc * sizeof(*b->v));
		free(b->v);
		b->v = v;
		b->alloc = alloc;
	}
	e = &b->v[b->n];
	memset(e, 0, sizeof(*e));
	strcpy(e->name, line);
	e->lineno = lineno;
	b->n++;
	if (errors > 0)
		return;   /* nothing will be written: keep the name, not the secret */
	e->secret_size = (plen > HS_HASH_MAX ? plen : HS_HASH_MAX) + 1;
	e->secret = calloc(1, e->secret_size);
	if (!e->secret)
		hs_die(E_FAILURE, "out of memory");
	memcpy(e->secret, password, plen + 1);
	b->bytes += e->secret_size;
}

static int read_batch(const struct options *o, struct batch *b)
{
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT;
	char line[LINE_MAX_BYTES + 1];
	unsigned long lineno = 0;
	bool legacy = false;
	size_t len;
	int r;

	/* a first look, without the locks: pass 3 looks again under them */
	if (hs_accountdb_load(&gr, HS_DB_GROUP, HS_ETC_GROUP, 0) < 0)
		hs_die(E_FAILURE, "%s", gr.error);
	while ((r = hs_batch_read_line(stdin, line, LINE_MAX_BYTES, &len)) != 0) {
		lineno++;
		if (r == -EIO) {
			hs_warn("cannot read standard input: %s", hs_strerror(-errno));
			errors++;
			break;
		}
		if (r == -E2BIG)
			line_error(lineno, "line too long");
		else if (r == -EINVAL)
			line_error(lineno, "line contains a NUL byte");
		else
			check_line(o, &gr, b, line, lineno, &legacy);
		hs_wipe(line, sizeof(line));
	}
	hs_wipe(line, sizeof(line));
	hs_accountdb_free(&gr);
	hs_batch_errors_done(errors);
	if (errors > 0) {
		wipe_batch(b);
		hs_warn("error detected, changes ignored");
		return -1;
	}
	if (legacy)
		hs_warn("warning: some hashes use a method libxcrypt calls legacy: newgrp will "
			"not accept them");
	return 0;
}

/* ---- pass 2: hashing ---- */

struct hash_job {
	const struct hs_hash_policy *policy;
	struct batch *b;
};

/* One entry: the password in e->secret becomes its hash (the buffer has
 * room for either).  Runs on several threads, one entry each. */
static int hash_one(void *ctx, size_t i)
{
	struct hash_job *j = ctx;
	struct entry *e = &j->b->v[i];
	char hash[HS_HASH_MAX + 1];
	int r = hs_hash_password(e->secret, j->policy, hash, sizeof(hash));

	if (r == 0) {
		hs_wipe(e->secret, e->secret_size);
		memcpy(e->secret, hash, strlen(hash) + 1);
	}
	hs_wipe(hash, sizeof(hash));
	return r;
}

/* Hashing is the slow part (yescrypt's default costs tens of
 * milliseconds): every CPU takes its share. */
static int hash_batch(const struct hs_hash_policy *policy, struct batch *b)
{
	struct hash_job j = { .policy = policy, .b = b };
	size_t failed = 0;
	int r = hs_parallel_for(b->n, hash_one, &j, &failed);

	if (r < 0) {
		hs_warn("line %lu: cannot hash the password of group '%s': %s",
			b->v[failed].lineno, b->v[failed].name, hs_strerror(r));
		hs_warn("error detected, changes ignored");
		return -1;
	}
	return 0;
}

/* ---- pass 3: one commit ---- */

static int write_batch(struct batch *b)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	sigset_t saved;
	int r = 0;

	if (hs_accountset_open(&s, HS_AS_GROUP_FILES, 0) < 0) {
		hs_warn("%s", s.error);
		return -1;
	}
	for (size_t i = 0; i < b->n; i++) {
		long gi = hs_groupops_find(&s, b->v[i].name);

		if (gi < 0) {
			line_error(b->v[i].lineno, "group '%s' does not exist (removed meanwhile)",
				   b->v[i].name);
			continue;
		}
		if (errors == 0 && hs_groupops_set_password(&s, (size_t)gi, b->v[i].secret) < 0) {
			line_error(b->v[i].lineno, "%s", s.error);
		}
	}
	if (errors > 0) {
		hs_warn("error detected, changes ignored");
		hs_accountset_close(&s);
		return -1;
	}
	if (!hs_groupops_gshadow(&s))
		hs_warn("warning: %s does not exist: the hashes go into %s, which every user "
			"can read", HS_ETC_GSHADOW, HS_ETC_GROUP);
	hs_signals_block(&saved);
	r = hs_groupops_commit(&s);
	hs_signals_restore(&saved);
	if (r < 0) {
		syslog(LOG_ERR, "%s", s.error);
		hs_warn("%s", s.error);
		hs_warn("no password changed");
	} else {
		for (size_t i = 0; i < b->n; i++)
			syslog(LOG_INFO, "password of group '%s' changed by chgpasswd",
			       b->v[i].name);
	}
	hs_accountset_close(&s);
	return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = MODE_HASH };
	struct batch b = { .v = NULL };
	int r;

	hs_cli_set_prog(hs_privileged_init(argc, argv, "chgpasswd"));
	parse_options(argc, argv, &o);
	if (!hs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog("chgpasswd", LOG_PID, LOG_AUTHPRIV);
	if (setvbuf(stdin, stdin_buffer, _IOFBF, sizeof(stdin_buffer)) != 0)
		hs_die(E_FAILURE, "cannot set up standard input");
	if (o.mode == MODE_HASH && !o.method) {
		struct hs_config *defs = NULL;

		r = hs_logindefs_load(HS_ETC_LOGIN_DEFS, hs_config_warn_stderr,
				      (void *)hs_cli_prog(), &defs);
		if (r < 0)
			hs_die(E_FAILURE, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
		r = hs_hash_policy_from_config(defs, &o.policy);
		if (r < 0)
			hs_die(E_FAILURE, "ENCRYPT_METHOD %s in %s: %s",
			       hs_config_get_str(defs, "ENCRYPT_METHOD", ""), HS_ETC_LOGIN_DEFS,
			       hs_strerror(r));
		hs_config_free(defs);
		/* as newusers: login.defs' method is held to the same rule
		 * (a configuration problem, not bad usage) */
		check_legacy_method(&o, E_FAILURE);
	}

	r = read_batch(&o, &b);
	hs_wipe(stdin_buffer, sizeof(stdin_buffer));
	if (r < 0)
		return E_FAILURE;
	if (o.mode == MODE_HASH && hash_batch(&o.policy, &b) < 0) {
		wipe_batch(&b);
		return E_FAILURE;
	}
	r = write_batch(&b);
	wipe_batch(&b);
	return r < 0 ? E_FAILURE : E_SUCCESS;
}
