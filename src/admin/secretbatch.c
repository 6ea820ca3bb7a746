#include "secretbatch.h"

#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "util.h"

/* chpasswd's and chgpasswd's exit codes (shadow-utils') */
#define E_SUCCESS 0
#define E_FAILURE 1
#define E_USAGE   2

/* Longest input line (bytes, without the newline).  A line is a name of at
 * most 32 bytes, ':' and a password or hash; anything longer is refused. */
#define LINE_MAX_BYTES 4096
/* Longest clear-text password: PAM's own limit (PAM_MAX_RESP_SIZE). */
#define PASSWORD_MAX 512
/* What the whole batch may hold in memory (passwords and hashes). */
#define BATCH_BYTES_MAX (64u * 1024 * 1024)

/* --help's text on stdout and exit 0, or on stderr and exit status. */
static _Noreturn void usage(const struct hs_secret_tool *tool, int status)
{
	char options[2048];

	snprintf(options, sizeof(options),
		"      --allow-legacy            allow MD5 and SHA256 hashes %s\n"
		"  -c, --crypt-method METHOD     the crypt method (one of NONE MD5 SHA256 SHA512\n"
		"                                BCRYPT YESCRYPT)\n"
		"  -e, --encrypted               supplied passwords are encrypted\n"
		"  -h, --help                    display this help message and exit\n"
		"  -m, --md5                     encrypt the clear text password using\n"
		"                                the MD5 algorithm\n"
		"%s"
		"  -s, --sha-rounds              number of rounds for the SHA, BCRYPT\n"
		"                                or YESCRYPT crypt algorithms\n",
		tool->legacy_help, tool->root_in_help ?
		"  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n" : "");
	hs_cli_usage(status, "[options]", options, "\n");
}

/* Of the two errors, the one the tool reports first (sflag_checked_first). */
static void check_flags(const struct hs_secret_tool *tool, bool eflg, bool mflg, bool cflg,
			bool sflg)
{
	bool exclusive = (eflg && (mflg || cflg)) || (mflg && cflg);

	if (sflg && !cflg && (tool->sflag_checked_first || !exclusive)) {
		hs_warn("-s flag is only allowed with the -c flag");
		usage(tool, E_USAGE);
	}
	if (exclusive) {
		hs_warn("the -c, -e, and -m flags are exclusive");
		usage(tool, E_USAGE);
	}
}

void hs_secret_parse_options(int argc, char **argv, const struct hs_secret_tool *tool,
			     struct hs_secret_options *o)
{
	enum { OPT_VERSION = 256, OPT_ALLOW_LEGACY };
	static const struct option longopts[] = {
		{ "allow-legacy", no_argument,       NULL, OPT_ALLOW_LEGACY },
		{ "crypt-method", required_argument, NULL, 'c' },
		{ "encrypted",    no_argument,       NULL, 'e' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "md5",          no_argument,       NULL, 'm' },
		{ "prefix",       required_argument, NULL, 'P' },
		{ "root",         required_argument, NULL, 'R' },
		{ "sha-rounds",   required_argument, NULL, 's' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	bool eflg = false, mflg = false, cflg = false;
	const char *rounds_arg = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "c:ehmP:R:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cflg = true;
			o->method = optarg;
			break;
		case 'e':
			eflg = true;
			break;
		case 'h':
			usage(tool, E_SUCCESS);
		case 'm':
			mflg = true;
			break;
		case 'P':
		case 'R':
			hs_die(E_USAGE, "option --%s is not supported; run %s inside the root "
			       "instead (chroot %s %s)", c == 'P' ? "prefix" : "root", tool->name,
			       tool->hint_shows_dir ? optarg : "DIR", tool->name);
		case 's':
			rounds_arg = optarg;
			break;
		case OPT_ALLOW_LEGACY:
			o->allow_legacy = true;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(tool, E_USAGE);
		}
	}
	if (optind < argc)
		usage(tool, E_USAGE);
	check_flags(tool, eflg, mflg, cflg, rounds_arg != NULL);
	if (rounds_arg && hs_parse_ulong(rounds_arg, 1, 999999999UL, &o->rounds) < 0) {
		hs_warn("invalid numeric argument '%s'", rounds_arg);
		usage(tool, E_USAGE);
	}

	o->mode = HS_SECRET_DEFAULT;
	if (eflg) {
		o->mode = HS_SECRET_ENCRYPTED;
	} else if (mflg) {
		o->mode = HS_SECRET_HASH;
		o->method = "MD5";
	} else if (cflg) {
		o->mode = HS_SECRET_HASH;
		/* shadow-utils stores the input unchanged with NONE; so do
		 * we, with -e's checks, so clear text never becomes a "hash" */
		if (strcasecmp(o->method, "NONE") == 0)
			o->mode = HS_SECRET_ENCRYPTED;
		else if (strcasecmp(o->method, "DES") == 0)
			hs_die(E_USAGE, "crypt method DES is not supported: libxcrypt calls it "
			       "legacy and %s", tool->des_effect);
	}
	if (o->mode == HS_SECRET_HASH) {
		/* -s is shadow-utils' cost for SHA (rounds), BCRYPT (log2
		 * rounds) and YESCRYPT (cost factor), clamped to the method's
		 * range as shadow-utils does; 0 = the library's default */
		if (hs_hash_policy_from_method(o->method, o->rounds, &o->policy) < 0) {
			hs_warn("unsupported crypt method: %s", o->method);
			usage(tool, E_USAGE);
		}
	}
}

const char *hs_secret_check_legacy(const struct hs_hash_policy *policy, bool allow_legacy,
				   const char *where, int status)
{
	const char *name;

	if (hs_hash_policy_check_legacy(policy, allow_legacy, &name) < 0)
		hs_die(status, "crypt method %s is legacy: libxcrypt verifies its hashes only %s; "
		       "give --allow-legacy to write them anyway", name, where);
	return name;
}

/* ---- pass 1: reading and checking ---- */

void hs_secret_wipe(struct hs_secret_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		hs_secret_buf_freep(&(struct hs_secret_buf){ b->v[i].secret, b->v[i].secret_size });
	free(b->v);
	b->v = NULL;
	b->n = b->alloc = 0;
	hs_batch_seen_free(&b->seen);
}

int hs_secret_check(const struct hs_secret_tool *tool, const struct hs_secret_options *o,
		    unsigned long *errors, unsigned long lineno, const char *name,
		    const char *secret)
{
	const char *what = tool->what;
	size_t len = strlen(secret);
	const char *problem;
	int r;

	if (len == 0 && (tool->empty_always_refused || o->mode != HS_SECRET_ENCRYPTED)) {
		hs_batch_line_error(errors, lineno, "%s '%s': empty password (%s)", what, name,
				    tool->empty_hint);
		return -1;
	}
	if (o->mode != HS_SECRET_ENCRYPTED) {
		if (len <= PASSWORD_MAX)
			return 0;
		hs_batch_line_error(errors, lineno, "%s '%s': the password is longer than %d bytes",
				    what, name, PASSWORD_MAX);
		return -1;
	}
	r = hs_hash_check_given(secret, &problem);
	if (r < 0) {
		hs_batch_line_error(errors, lineno, "%s '%s': %s", what, name, problem);
		return -1;
	}
	if (r == 1 && !o->allow_legacy) {
		hs_batch_line_error(errors, lineno, "%s '%s': the hash uses a legacy method "
				    "(libxcrypt verifies it only %s); give --allow-legacy to store "
				    "it anyway", what, name, tool->legacy_where);
		return -1;
	}
	return r;
}

/* Room for one more entry, zeroed. */
static struct hs_secret_entry *append_entry(struct hs_secret_batch *b)
{
	struct hs_secret_entry *e;

	if (b->n == b->alloc) {
		size_t alloc = b->alloc ? b->alloc * 2 : 64;
		struct hs_secret_entry *v = reallocarray(NULL, alloc, sizeof(*v));

		if (!v)
			hs_die(E_FAILURE, "out of memory");
		/* copy by hand rather than realloc: a moved block would leave
		 * the old pointers (not the secrets) behind unwiped -- harmless,
		 * but this keeps one owner per secret pointer */
		if (b->n)
			memcpy(v, b->v, b->n * sizeof(*v));
		hs_wipe(b->v, b->alloc * sizeof(*b->v));
		free(b->v);
		b->v = v;
		b->alloc = alloc;
	}
	e = &b->v[b->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

struct reading {
	const struct hs_secret_tool *tool;
	const struct hs_secret_options *o;
	struct hs_secret_batch *b;
};

/* Check one "name:secret" line and add it to the batch. */
static void check_line(void *ctx, char *line, unsigned long lineno)
{
	const struct reading *rd = ctx;
	const struct hs_secret_tool *tool = rd->tool;
	struct hs_secret_batch *b = rd->b;
	char *secret = strchr(line, ':');
	char shown[160];
	struct hs_secret_entry *e;
	unsigned long seen;
	size_t len;
	uid_t uid = 0;
	int r;

	if (!secret) {
		hs_secret_line_error(b, lineno, "missing new password");
		return;
	}
	*secret++ = '\0';
	len = strlen(secret);
	if (line[0] == '\0') {
		hs_secret_line_error(b, lineno, "missing %s name", tool->what);
		return;
	}
	if (!tool->name_valid(line)) {
		if (tool->invalid_name_shown)
			hs_secret_line_error(b, lineno, "invalid %s name '%s'", tool->what,
					     hs_printable(line, shown, sizeof(shown)));
		else
			hs_secret_line_error(b, lineno, "invalid %s name", tool->what);
		return;
	}
	r = hs_secret_check(tool, rd->o, &b->errors, lineno, line, secret);
	if (r < 0)
		return;
	if (r == 1)
		b->legacy = true;
	seen = hs_batch_seen_find(&b->seen, line);
	if (seen) {
		hs_secret_line_error(b, lineno, "%s '%s' already appears on line %lu", tool->what,
				     line, seen);
		return;
	}
	if (tool->lookup(tool->ctx, b, line, lineno, &uid) < 0)
		return;
	if (b->bytes + len + HS_HASH_MAX + 2 > BATCH_BYTES_MAX) {
		hs_secret_line_error(b, lineno, "the input holds more than %u MiB of passwords",
				     BATCH_BYTES_MAX >> 20);
		return;
	}
	e = append_entry(b);
	hs_batch_seen_add(&b->seen, line, lineno);
	strcpy(e->name, line);
	e->uid = uid;
	e->lineno = lineno;
	if (b->errors > 0)
		return;   /* nothing will be written: keep the name, not the secret */
	/* room for the hash that replaces the password in pass 2 */
	e->secret_size = (len > HS_HASH_MAX ? len : HS_HASH_MAX) + 1;
	e->secret = calloc(1, e->secret_size);
	if (!e->secret)
		hs_die(E_FAILURE, "out of memory");
	memcpy(e->secret, secret, len + 1);
	b->bytes += e->secret_size;
}

int hs_secret_read(FILE *in, const struct hs_secret_tool *tool,
		   const struct hs_secret_options *o, struct hs_secret_batch *b)
{
	struct reading rd = { tool, o, b };

	hs_batch_read_lines(in, "standard input", LINE_MAX_BYTES, &b->errors, check_line, &rd);
	if (hs_batch_errors_done(b->errors) < 0) {
		hs_secret_wipe(b);
		return -1;
	}
	return 0;
}

/* ---- pass 2: hashing ---- */

struct hash_job {
	const struct hs_hash_policy *policy;
	struct hs_secret_batch *b;
	atomic_ulong hashed;    /* for the progress line */
};

/* One entry: the password in e->secret becomes its hash (the buffer has
 * room for either).  Runs on several threads, one entry each. */
static int hash_one(void *ctx, size_t i)
{
	struct hash_job *j = ctx;
	struct hs_secret_entry *e = &j->b->v[i];
	char hash[HS_HASH_MAX + 1];
	int r = hs_hash_password(e->secret, j->policy, hash, sizeof(hash));

	if (r == 0) {
		hs_wipe(e->secret, e->secret_size);
		memcpy(e->secret, hash, strlen(hash) + 1);
	}
	hs_wipe(hash, sizeof(hash));
	hs_cli_progress_step(atomic_fetch_add(&j->hashed, 1) + 1);
	return r;
}

/* Hashing is the slow part (yescrypt's default costs tens of
 * milliseconds): every CPU takes its share. */
int hs_secret_hash(const struct hs_secret_tool *tool, const struct hs_hash_policy *policy,
		   struct hs_secret_batch *b)
{
	struct hash_job j = { .policy = policy, .b = b };
	size_t failed = 0;
	int r;

	hs_cli_progress_start(b->n, "passwords");
	r = hs_parallel_for(b->n, hash_one, &j, &failed);
	hs_cli_progress_end();

	if (r < 0) {
		hs_warn("line %lu: cannot hash the password of %s '%s': %s",
			b->v[failed].lineno, tool->what, b->v[failed].name, hs_strerror(r));
		hs_warn("error detected, changes ignored");
		return -1;
	}
	return 0;
}
