/* chpasswd: set many users' passwords from "user:password" lines on
 * standard input.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' chpasswd(8) (Debian 12, shadow 4.13); chpasswd(8) of
 * this package lists where we differ.
 *
 * All or nothing, in three passes:
 *   1. read and check every line (format, length, user exists and has a
 *      directory in the tree, no duplicate, with -e a usable hash); any
 *      error is reported with its line number and nothing is written;
 *   2. hash every password (direct path) -- still nothing written;
 *   3. write each user's shadow file (hs_userdir_write_shadow, last change
 *      = today) under that user's write lock, or, on the PAM path, let
 *      pam_chauthtok (service "chpasswd") do it, one user after the other.
 * Pass 3 can still fail for one user (I/O error, lock timeout, a PAM
 * module refusing the password); it then goes on with the others, names
 * the ones that failed and exits 1.
 *
 * Every password is wiped as soon as it has been used, and the stdio
 * buffer of standard input is ours so it can be wiped too. */
#include <crypt.h>
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "account.h"
#include "cli.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

/* shadow-utils' chpasswd exit codes */
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
/* Errors reported before the rest are only counted. */
#define ERRORS_SHOWN_MAX 100
/* As passwd: a verification by the password helper holds a user's lock
 * through a 2 s failure delay. */
#define LOCK_TIMEOUT_SEC 15u

#define PATH_BUF (sizeof(HS_TREE_DIR) + HS_NAME_MAX + 16)

enum mode {
	MODE_PAM,        /* no -c, -e, -m: pam_chauthtok per user */
	MODE_HASH,       /* -c METHOD / -m: hash here */
	MODE_ENCRYPTED,  /* -e, -c NONE: the hashes are given */
};

struct options {
	enum mode mode;
	bool eflg, mflg, cflg, sflg;
	const char *method;
	unsigned long rounds;
	struct hs_hash_policy policy;
};

struct entry {
	char name[HS_NAME_MAX + 1];
	uid_t uid;
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

static _Noreturn void usage(int status)
{
	FILE *f = status == E_SUCCESS ? stdout : stderr;

	fprintf(f,
		"Usage: %s [options]\n"
		"\n"
		"Options:\n"
		"  -c, --crypt-method METHOD     the crypt method (one of NONE MD5 SHA256 SHA512\n"
		"                                BCRYPT YESCRYPT)\n"
		"  -e, --encrypted               supplied passwords are encrypted\n"
		"  -h, --help                    display this help message and exit\n"
		"  -m, --md5                     encrypt the clear text password using\n"
		"                                the MD5 algorithm\n"
		"  -s, --sha-rounds              number of rounds for the SHA, BCRYPT\n"
		"                                or YESCRYPT crypt algorithms\n"
		"      --version                 display the version and exit\n"
		"\n",
		hs_cli_prog());
	exit(status);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
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
			hs_die(E_USAGE, "option --prefix is not supported; run chpasswd inside "
			       "the root instead (chroot %s chpasswd)", optarg);
		case 'R':
			hs_die(E_USAGE, "option --root is not supported; run chpasswd inside "
			       "the root instead (chroot %s chpasswd)", optarg);
		case 's':
			o->sflg = true;
			rounds_arg = optarg;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (optind < argc)
		usage(E_USAGE);
	if ((o->eflg && (o->mflg || o->cflg)) || (o->mflg && o->cflg)) {
		hs_warn("the -c, -e, and -m flags are exclusive");
		usage(E_USAGE);
	}
	if (o->sflg && !o->cflg) {
		hs_warn("-s flag is only allowed with the -c flag");
		usage(E_USAGE);
	}
	if (rounds_arg && hs_parse_ulong(rounds_arg, 1, 999999999UL, &o->rounds) < 0) {
		hs_warn("invalid numeric argument '%s'", rounds_arg);
		usage(E_USAGE);
	}

	if (o->eflg) {
		o->mode = MODE_ENCRYPTED;
	} else if (o->mflg) {
		o->mode = MODE_HASH;
		o->method = "MD5";
	} else if (o->cflg) {
		o->mode = MODE_HASH;
		/* shadow-utils stores the input unchanged with NONE; so do
		 * we, with -e's checks, so clear text never becomes a "hash" */
		if (strcasecmp(o->method, "NONE") == 0)
			o->mode = MODE_ENCRYPTED;
		else if (strcasecmp(o->method, "DES") == 0)
			hs_die(E_USAGE, "crypt method DES is not supported: libxcrypt calls it "
			       "legacy and its hashes would not authenticate");
	} else {
		o->mode = MODE_PAM;
	}
	if (o->mode == MODE_HASH) {
		/* -s is shadow-utils' cost for SHA (rounds), BCRYPT (log2
		 * rounds) and YESCRYPT (cost factor), clamped to the method's
		 * range as shadow-utils does; 0 = the library's default */
		if (hs_hash_policy_from_method(o->method, o->rounds, &o->policy) < 0) {
			hs_warn("unsupported crypt method: %s", o->method);
			usage(E_USAGE);
		}
		if (strcmp(o->policy.prefix, "$1$") == 0 || strcmp(o->policy.prefix, "$5$") == 0)
			hs_warn("warning: libxcrypt calls %s legacy: these passwords authenticate "
				"only where the PAM module has allow_legacy",
				strcmp(o->policy.prefix, "$1$") == 0 ? "MD5" : "SHA256");
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

static unsigned long errors;

static void line_error(unsigned long lineno, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line_error(unsigned long lineno, const char *fmt, ...)
{
	va_list ap;

	if (++errors > ERRORS_SHOWN_MAX)
		return;
	fprintf(stderr, "%s: line %lu: ", hs_cli_prog(), lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Read one line into line (LINE_MAX_BYTES + 1 bytes).  Returns 1 for a
 * line, 0 at the end of input, -E2BIG for a line too long (the rest of it
 * is consumed), -EINVAL for a NUL byte, -EIO for a read error. */
static int read_line(char *line, size_t *len_out)
{
	size_t len = 0;
	bool too_long = false, nul = false;
	int ch;

	for (;;) {
		ch = getc_unlocked(stdin);
		if (ch == EOF) {
			if (ferror(stdin))
				return -EIO;
			if (len == 0 && !too_long && !nul)
				return 0;
			break;
		}
		if (ch == '\n')
			break;
		if (ch == '\0')
			nul = true;
		if (len == LINE_MAX_BYTES) {
			too_long = true;
			continue;
		}
		line[len++] = (char)ch;
	}
	line[len] = '\0';
	*len_out = len;
	if (too_long)
		return -E2BIG;
	if (nul)
		return -EINVAL;
	return 1;
}

/* -e: is this something we may store as a hash?  "*" and "!" alone (no
 * password login), or a hash libxcrypt recognises, optionally locked with
 * a leading '!'.  *legacy is set for a method libxcrypt calls legacy. */
static const char *hash_problem(const char *hash, bool *legacy)
{
	const char *h = hash;

	if (hash[0] == '\0')
		return "empty password (use passwd -d to remove a password)";
	if (strlen(hash) > HS_HASH_MAX)
		return "the hash is longer than the 512 bytes a shadow field may hold";
	if (!hs_field_valid(hash))
		return "the hash contains ':' or a control character";
	if (strcmp(hash, "*") == 0 || strcmp(hash, "!") == 0 || strcmp(hash, "!*") == 0)
		return NULL;
	if (h[0] == '!')
		h++;
	if (h[0] != '$')
		return "not a hash libxcrypt recognises (clear text? drop -e)";
	switch (crypt_checksalt(h)) {
	case CRYPT_SALT_OK:
	case CRYPT_SALT_TOO_CHEAP:
		return NULL;
	case CRYPT_SALT_METHOD_LEGACY:
		*legacy = true;
		return NULL;
	case CRYPT_SALT_METHOD_DISABLED:
		return "the hash method is disabled in libxcrypt";
	default:
		return "not a hash libxcrypt recognises (clear text? drop -e)";
	}
}

static struct entry *find_entry(const struct batch *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0)
			return &b->v[i];
	return NULL;
}

/* Check one "name:password" line and add it to the batch. */
static void check_line(int treefd, const struct options *o, struct batch *b, char *line,
		       unsigned long lineno, bool *legacy)
{
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int udirfd = -1;
	char path[PATH_BUF];
	struct passwd pw;
	struct entry *e;
	char *password = strchr(line, ':');
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
		line_error(lineno, "missing user name");
		return;
	}
	if (!hs_user_name_valid(line)) {
		line_error(lineno, "invalid user name");
		return;
	}
	if (o->mode == MODE_ENCRYPTED) {
		problem = hash_problem(password, legacy);
		if (problem) {
			line_error(lineno, "user '%s': %s", line, problem);
			return;
		}
	} else {
		if (plen == 0) {
			line_error(lineno, "user '%s': empty password (use passwd -d to remove "
				   "a password)", line);
			return;
		}
		if (plen > PASSWORD_MAX) {
			line_error(lineno, "user '%s': the password is longer than %d bytes",
				   line, PASSWORD_MAX);
			return;
		}
	}
	e = find_entry(b, line);
	if (e) {
		line_error(lineno, "user '%s' already appears on line %lu", line, e->lineno);
		return;
	}
	r = hs_getpwnam_alloc(line, &pw, &pwbuf);
	if (r == -ENOENT) {
		line_error(lineno, "user '%s' does not exist", line);
		return;
	}
	if (r < 0) {
		line_error(lineno, "cannot look up user '%s': %s", line, hs_strerror(r));
		return;
	}
	udirfd = hs_userdir_open(treefd, line, pw.pw_uid, NULL);
	if (udirfd < 0) {
		hs_userdir_path(path, sizeof(path), line, NULL);
		if (udirfd == -ENOENT)
			line_error(lineno, "user '%s' has no directory %s (run pwconv)", line, path);
		else
			line_error(lineno, "cannot open %s: %s", path, hs_strerror(udirfd));
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
	e = &b->v[b->n];
	memset(e, 0, sizeof(*e));
	strcpy(e->name, line);
	e->uid = pw.pw_uid;
	e->lineno = lineno;
	b->n++;
	if (errors > 0)
		return;   /* nothing will be written: keep the name, not the secret */
	/* room for the hash that replaces the password in pass 2 */
	e->secret_size = (plen > HS_HASH_MAX ? plen : HS_HASH_MAX) + 1;
	e->secret = calloc(1, e->secret_size);
	if (!e->secret)
		hs_die(E_FAILURE, "out of memory");
	memcpy(e->secret, password, plen + 1);
	b->bytes += e->secret_size;
}

static int read_batch(int treefd, const struct options *o, struct batch *b)
{
	char line[LINE_MAX_BYTES + 1];
	unsigned long lineno = 0;
	bool legacy = false;
	size_t len;
	int r;

	while ((r = read_line(line, &len)) != 0) {
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
			check_line(treefd, o, b, line, lineno, &legacy);
		hs_wipe(line, sizeof(line));
	}
	hs_wipe(line, sizeof(line));
	if (errors > ERRORS_SHOWN_MAX)
		hs_warn("%lu more errors not shown", errors - ERRORS_SHOWN_MAX);
	if (errors > 0) {
		wipe_batch(b);
		hs_warn("error detected, changes ignored");
		return -1;
	}
	if (legacy)
		hs_warn("warning: some hashes use a method libxcrypt calls legacy: they "
			"authenticate only where the PAM module has allow_legacy");
	return 0;
}

/* ---- pass 2: hashing ---- */

static int hash_batch(const struct options *o, struct batch *b)
{
	char hash[HS_HASH_MAX + 1];

	for (size_t i = 0; i < b->n; i++) {
		struct entry *e = &b->v[i];
		int r = hs_hash_password(e->secret, &o->policy, hash, sizeof(hash));

		if (r < 0) {
			hs_wipe(hash, sizeof(hash));
			hs_warn("line %lu: cannot hash the password of user '%s': %s",
				e->lineno, e->name, hs_strerror(r));
			hs_warn("error detected, changes ignored");
			return -1;
		}
		hs_wipe(e->secret, e->secret_size);
		memcpy(e->secret, hash, strlen(hash) + 1);
	}
	hs_wipe(hash, sizeof(hash));
	return 0;
}

/* ---- pass 3: writing ---- */

static int write_one(int treefd, gid_t auth_gid, const struct entry *e)
{
	_cleanup_close_ int udirfd = -1;
	char path[PATH_BUF];
	struct hs_shadow sh = { .hash = e->secret, .lstchg = hs_today() };
	sigset_t saved;
	int r;

	/* opened again: a batch may name more users than we may hold fds
	 * for; the owner must still be the uid checked in pass 1 */
	udirfd = hs_userdir_open(treefd, e->name, e->uid, NULL);
	if (udirfd < 0) {
		hs_warn("line %lu: cannot open %s: %s", e->lineno,
			hs_userdir_path(path, sizeof(path), e->name, NULL), hs_strerror(udirfd));
		return -1;
	}
	r = hs_userdir_lock(udirfd, LOCK_TIMEOUT_SEC);
	if (r < 0) {
		hs_userdir_path(path, sizeof(path), e->name, NULL);
		if (r == -HS_E_TIMEOUT)
			hs_warn("line %lu: cannot lock %s: timed out after %u s", e->lineno, path,
				LOCK_TIMEOUT_SEC);
		else
			hs_warn("line %lu: cannot lock %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	hs_signals_block(&saved);
	r = hs_userdir_write_shadow(udirfd, e->uid, auth_gid, &sh);
	hs_signals_restore(&saved);
	if (r < 0) {
		hs_userdir_path(path, sizeof(path), e->name, HS_FILE_SHADOW);
		syslog(LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
		hs_warn("line %lu: cannot write %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	syslog(LOG_INFO, "password of '%s' changed by chpasswd", e->name);
	return 0;
}

static void free_responses(struct pam_response *resp, int n)
{
	if (!resp)
		return;
	for (int i = 0; i < n; i++)
		hs_free_secret(resp[i].resp);
	free(resp);
}

/* Answers every hidden prompt ("New password:", "Retype new password:")
 * with the line's password.  Root is not asked for the current one; a
 * prompt for it (or any visible prompt) is refused rather than answered
 * with the new password. */
static int batch_conv(int num_msg, const struct pam_message **msg,
		      struct pam_response **resp, void *appdata)
{
	const struct entry *e = appdata;
	struct pam_response *replies;

	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	replies = calloc((size_t)num_msg, sizeof(*replies));
	if (!replies)
		return PAM_BUF_ERR;
	for (int i = 0; i < num_msg; i++) {
		const char *text = msg[i]->msg ? msg[i]->msg : "";

		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			if (strcasestr(text, "current") || strcasestr(text, "old")) {
				hs_warn("line %lu: PAM asked for the current password of user "
					"'%s'", e->lineno, e->name);
				goto fail;
			}
			replies[i].resp = strdup(e->secret);
			if (!replies[i].resp)
				goto fail;
			break;
		case PAM_ERROR_MSG:
			hs_warn("line %lu: %s", e->lineno, text);
			break;
		case PAM_TEXT_INFO:
			printf("%s\n", text);
			fflush(stdout);
			break;
		default:
			goto fail;
		}
	}
	*resp = replies;
	return PAM_SUCCESS;
fail:
	free_responses(replies, num_msg);
	return PAM_CONV_ERR;
}

static int change_with_pam(const struct entry *e)
{
	struct pam_conv conv = { batch_conv, (void *)e };
	pam_handle_t *pamh = NULL;
	int r;

	r = pam_start("chpasswd", e->name, &conv, &pamh);
	if (r != PAM_SUCCESS) {
		hs_warn("line %lu: pam_start() failed, error %d", e->lineno, r);
		return -1;
	}
	r = pam_chauthtok(pamh, 0);
	if (r != PAM_SUCCESS) {
		hs_warn("line %lu: user '%s': %s; password not changed", e->lineno, e->name,
			pam_strerror(pamh, r));
		pam_end(pamh, r);
		return -1;
	}
	pam_end(pamh, PAM_SUCCESS);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = MODE_PAM };
	struct batch b = { .v = NULL };
	_cleanup_close_ int treefd = -1;
	gid_t tree_gid, auth_gid = 0;
	unsigned long failed = 0;
	int r;

	hs_cli_set_prog(hs_privileged_init(argc, argv, "chpasswd"));
	parse_options(argc, argv, &o);
	if (!hs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog("chpasswd", LOG_PID, LOG_AUTHPRIV);
	if (setvbuf(stdin, stdin_buffer, _IOFBF, sizeof(stdin_buffer)) != 0)
		hs_die(E_FAILURE, "cannot set up standard input");

	if (o.mode != MODE_PAM) {
		r = hs_layout_gids(&tree_gid, &auth_gid);
		if (r < 0)
			hs_die(E_FAILURE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
	}
	treefd = hs_tree_open();
	if (treefd < 0)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));

	r = read_batch(treefd, &o, &b);
	hs_wipe(stdin_buffer, sizeof(stdin_buffer));
	if (r < 0)
		return E_FAILURE;
	if (o.mode == MODE_HASH && hash_batch(&o, &b) < 0) {
		wipe_batch(&b);
		return E_FAILURE;
	}

	for (size_t i = 0; i < b.n; i++) {
		struct entry *e = &b.v[i];

		r = o.mode == MODE_PAM ? change_with_pam(e) : write_one(treefd, auth_gid, e);
		if (r < 0)
			failed++;
		hs_wipe(e->secret, e->secret_size);
	}
	wipe_batch(&b);
	if (failed) {
		hs_warn("%lu password%s not changed (the lines named above); the others were "
			"changed", failed, failed == 1 ? "" : "s");
		return E_FAILURE;
	}
	return E_SUCCESS;
}
