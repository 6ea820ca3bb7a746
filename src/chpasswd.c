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
 *   3. direct path: for each user in turn, under that user's write lock,
 *      keep the current shadow file's contents and replace it
 *      (hs_userdir_write_shadow, last change = today).  If one user fails
 *      (I/O error, lock timeout, the directory replaced meanwhile), the
 *      users already changed get their previous shadow back -- unless it
 *      changed again since we wrote it; an unreadable one (which let
 *      nobody in) comes back as a locked "!" -- and the exit status is 1:
 *      the batch happened entirely or not at all.
 *      PAM path: pam_chauthtok (service "chpasswd") for one user after the
 *      other.  A PAM module writes where and how it likes, so a change
 *      cannot be taken back: at the first refusal chpasswd stops, names
 *      the line, lists the users already changed and exits 1.
 *      Both paths hold back SIGINT, SIGTERM, SIGHUP and SIGQUIT until pass
 *      3 is over: an interrupt takes effect before the first user or after
 *      the last, never in between.
 *
 * Every password is wiped as soon as it has been used, and the stdio
 * buffer of standard input is ours so it can be wiped too. */
#include <crypt.h>
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "account.h"
#include "batchio.h"
#include "cli.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "pamconv.h"
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
	bool allow_legacy;      /* --allow-legacy: MD5/SHA256 (lib/hash.h's rule) */
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
	/* pass 3, direct path: the shadow file as it was, for the rollback */
	bool written;
	char *old_hash;
	long old_lstchg;
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
		"      --allow-legacy            allow MD5 and SHA256 hashes (legacy: they\n"
		"                                authenticate only with allow_legacy in PAM)\n"
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
		/* the PAM module's rule: nothing writes what hs_verify_password
		 * would refuse, unless given the same explicit opt-in */
		const char *name;
		if (hs_hash_policy_check_legacy(&o->policy, o->allow_legacy, &name) < 0)
			hs_die(E_USAGE, "crypt method %s is legacy: libxcrypt verifies its hashes "
			       "only where the PAM module has allow_legacy; give --allow-legacy "
			       "to write them anyway", name);
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
		hs_free_secret(b->v[i].old_hash);
		b->v[i].old_hash = NULL;
	}
	free(b->v);
	b->v = NULL;
	b->n = b->alloc = 0;
}

static unsigned long errors;

#define line_error(lineno, ...) hs_batch_line_error(&errors, lineno, __VA_ARGS__)

static struct entry *find_entry(const struct batch *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].name, name) == 0)
			return &b->v[i];
	return NULL;
}

/* Check one "name:password" line and add it to the batch. */
static void check_line(int treefd, const struct options *o, struct batch *b, char *line,
		       unsigned long lineno)
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
		r = hs_hash_check_given(password, &problem);
		if (r < 0) {
			line_error(lineno, "user '%s': %s", line, problem);
			return;
		}
		if (r == 1 && !o->allow_legacy) {
			line_error(lineno, "user '%s': the hash uses a legacy method (libxcrypt "
				   "verifies it only where the PAM module has allow_legacy); give "
				   "--allow-legacy to store it anyway", line);
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
	size_t len;
	int r;

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
			check_line(treefd, o, b, line, lineno);
		hs_wipe(line, sizeof(line));
	}
	hs_wipe(line, sizeof(line));
	hs_batch_errors_done(errors);
	if (errors > 0) {
		wipe_batch(b);
		hs_warn("error detected, changes ignored");
		return -1;
	}
	return 0;
}

/* ---- pass 2: hashing ---- */

struct hash_job {
	const struct options *o;
	struct batch *b;
};

/* One entry: the password in e->secret becomes its hash (the buffer has
 * room for either).  Runs on several threads, one entry each. */
static int hash_one(void *ctx, size_t i)
{
	struct hash_job *j = ctx;
	struct entry *e = &j->b->v[i];
	char hash[HS_HASH_MAX + 1];
	int r = hs_hash_password(e->secret, &j->o->policy, hash, sizeof(hash));

	if (r == 0) {
		hs_wipe(e->secret, e->secret_size);
		memcpy(e->secret, hash, strlen(hash) + 1);
	}
	hs_wipe(hash, sizeof(hash));
	return r;
}

/* Hashing is the slow part (yescrypt's default costs tens of
 * milliseconds): every CPU takes its share. */
static int hash_batch(const struct options *o, struct batch *b)
{
	struct hash_job j = { .o = o, .b = b };
	size_t failed = 0;
	int r = hs_parallel_for(b->n, hash_one, &j, &failed);

	if (r < 0) {
		hs_warn("line %lu: cannot hash the password of user '%s': %s",
			b->v[failed].lineno, b->v[failed].name, hs_strerror(r));
		hs_warn("error detected, changes ignored");
		return -1;
	}
	return 0;
}

/* ---- pass 3: writing ---- */

/* The user's directory, opened again (a batch may name more users than we
 * may hold fds for; the owner must still be the uid checked in pass 1) and
 * write-locked.  An fd or -1 with the message printed. */
static int open_locked(int treefd, const struct entry *e)
{
	char path[PATH_BUF];
	int udirfd, r;

	hs_userdir_path(path, sizeof(path), e->name, NULL);
	udirfd = hs_userdir_open(treefd, e->name, e->uid, NULL);
	if (udirfd < 0) {
		hs_warn("line %lu: cannot open %s: %s", e->lineno, path, hs_strerror(udirfd));
		return -1;
	}
	r = hs_userdir_lock(udirfd, LOCK_TIMEOUT_SEC);
	if (r < 0) {
		if (r == -HS_E_TIMEOUT)
			hs_warn("line %lu: cannot lock %s: timed out after %u s", e->lineno, path,
				LOCK_TIMEOUT_SEC);
		else
			hs_warn("line %lu: cannot lock %s: %s", e->lineno, path, hs_strerror(r));
		hs_close(udirfd);
		return -1;
	}
	return udirfd;
}

/* Keep the current shadow file in e (for the rollback), then replace it. */
static int write_one(int treefd, gid_t auth_gid, struct entry *e)
{
	_cleanup_close_ int udirfd = -1;
	char path[PATH_BUF];
	char cur[HS_USERFILE_MAX + 2];
	struct hs_shadow sh = { .hash = e->secret, .lstchg = hs_today() };
	struct hs_shadow old;
	int r;

	hs_userdir_path(path, sizeof(path), e->name, HS_FILE_SHADOW);
	udirfd = open_locked(treefd, e);
	if (udirfd < 0)
		return -1;
	r = hs_userdir_read_shadow(udirfd, e->uid, cur, sizeof(cur), &old);
	if (r < 0) {
		/* a shadow file that cannot be read (a planted symlink or
		 * FIFO, a broken line) never let anyone in: it is replaced,
		 * and a rollback writes that meaning back as a locked hash */
		syslog(LOG_WARNING, "replacing unreadable %s: %s", path, hs_strerror(r));
		old = (struct hs_shadow){ .hash = (char *)"!", .lstchg = HS_UNSET };
	}
	e->old_hash = strdup(old.hash);
	e->old_lstchg = old.lstchg;
	hs_wipe(cur, sizeof(cur));
	if (!e->old_hash) {
		hs_warn("line %lu: %s", e->lineno, hs_strerror(-ENOMEM));
		return -1;
	}
	r = hs_userdir_write_shadow(udirfd, e->uid, auth_gid, &sh);
	if (r < 0) {
		syslog(LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
		hs_warn("line %lu: cannot write %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	e->written = true;
	return 0;
}

/* Put back the shadow file write_one replaced, unless it changed again
 * since (the user's own passwd, root's passwd -l): that newer change
 * wins and is reported. */
static int restore_one(int treefd, gid_t auth_gid, const struct entry *e)
{
	_cleanup_close_ int udirfd = -1;
	char path[PATH_BUF];
	char cur[HS_USERFILE_MAX + 2];
	struct hs_shadow now, old = { .hash = e->old_hash, .lstchg = e->old_lstchg };
	bool ours;
	int r;

	hs_userdir_path(path, sizeof(path), e->name, HS_FILE_SHADOW);
	udirfd = open_locked(treefd, e);
	if (udirfd < 0)
		return -1;
	r = hs_userdir_read_shadow(udirfd, e->uid, cur, sizeof(cur), &now);
	ours = r == 0 && hs_consttime_streq(now.hash, e->secret);
	hs_wipe(cur, sizeof(cur));
	if (r < 0) {
		hs_warn("line %lu: cannot restore %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	if (!ours) {
		hs_warn("line %lu: %s changed again meanwhile; not restored", e->lineno, path);
		return -1;
	}
	r = hs_userdir_write_shadow(udirfd, e->uid, auth_gid, &old);
	if (r < 0) {
		syslog(LOG_ERR, "cannot restore %s: %s", path, hs_strerror(r));
		hs_warn("line %lu: cannot restore %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	return 0;
}

/* Direct path: every user or none.  Signals are blocked for the whole
 * pass, so an interrupt cannot stop it between a write and its rollback. */
static int write_batch(int treefd, gid_t auth_gid, struct batch *b)
{
	unsigned long not_restored = 0;
	sigset_t saved;
	size_t i;

	hs_signals_block(&saved);
	for (i = 0; i < b->n; i++)
		if (write_one(treefd, auth_gid, &b->v[i]) < 0)
			break;
	if (i == b->n) {
		hs_signals_restore(&saved);
		for (i = 0; i < b->n; i++)
			syslog(LOG_INFO, "password of '%s' changed by chpasswd", b->v[i].name);
		return 0;
	}
	/* line b->v[i] failed: take the earlier ones back, newest first */
	for (size_t k = i; k-- > 0;) {
		if (b->v[k].written && restore_one(treefd, auth_gid, &b->v[k]) < 0)
			not_restored++;
	}
	hs_signals_restore(&saved);
	if (not_restored) {
		syslog(LOG_ERR, "batch failed at line %lu; %lu earlier change%s not undone",
		       b->v[i].lineno, not_restored, not_restored == 1 ? "" : "s");
		hs_warn("error detected at line %lu; %lu of the %zu passwords changed before "
			"it could not be restored (the lines named above)", b->v[i].lineno,
			not_restored, i);
	} else {
		syslog(LOG_ERR, "batch failed at line %lu; nothing changed", b->v[i].lineno);
		hs_warn("error detected at line %lu, changes undone: no password was changed",
			b->v[i].lineno);
	}
	return -1;
}

/* Answers every hidden prompt ("New password:", "Retype new password:")
 * with the line's password.  Root is not asked for the current one; a
 * prompt for it is refused rather than answered with the new password. */
static const char *batch_answer(void *ctx, const char *prompt)
{
	const struct entry *e = ctx;

	if (strcasestr(prompt, "current") || strcasestr(prompt, "old")) {
		hs_warn("line %lu: PAM asked for the current password of user '%s'", e->lineno,
			e->name);
		return NULL;
	}
	return e->secret;
}

static void batch_error(void *ctx, const char *text)
{
	const struct entry *e = ctx;

	hs_warn("line %lu: %s", e->lineno, text);
}

static int change_with_pam(const struct entry *e)
{
	struct hs_pam_script script = { .hidden = batch_answer, .error = batch_error,
					.ctx = (void *)e };
	struct pam_conv conv = { hs_pam_script_conv, &script };
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
	syslog(LOG_INFO, "password of '%s' changed by chpasswd through PAM", e->name);
	return 0;
}

/* PAM path: the interrupting signals (Ctrl-C, kill's default, a hang-up,
 * Ctrl-\) wait until the batch and its report are over, as every signal
 * does on the direct path: otherwise one between two users would leave the
 * first changed and the others not, with no report.  Only these four: the
 * modules may run helpers (unix_chkpwd, pam_exec), which inherit the mask
 * and may need SIGCHLD or SIGALRM.  Nothing here talks to a terminal, so no
 * prompt is left uninterruptible. */
static void block_interrupts(sigset_t *saved)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, saved);
}

/* One user after the other, stopping at the first refusal (the modules'
 * changes cannot be taken back, so at least nothing after the failure
 * happens, and the report says exactly what did). */
static int pam_batch_run(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		int r = change_with_pam(&b->v[i]);

		hs_wipe(b->v[i].secret, b->v[i].secret_size);
		if (r < 0)
			break;
	}
	if (i == b->n)
		return 0;
	if (i == 0) {
		hs_warn("stopped at line %lu: no password was changed", b->v[i].lineno);
		return -1;
	}
	hs_warn("stopped at line %lu: the passwords on the lines before it were changed "
		"(PAM changes cannot be undone), the lines after it were not processed",
		b->v[i].lineno);
	for (size_t k = 0; k < i; k++) {
		if (k == HS_BATCH_ERRORS_SHOWN) {
			hs_warn("changed: %zu more (up to line %lu)", i - k, b->v[i - 1].lineno);
			break;
		}
		hs_warn("changed: line %lu: user '%s'", b->v[k].lineno, b->v[k].name);
	}
	return -1;
}

static int pam_batch(struct batch *b)
{
	sigset_t saved;
	int r;

	block_interrupts(&saved);
	r = pam_batch_run(b);
	fflush(stderr);
	hs_signals_restore(&saved);
	return r;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = MODE_PAM };
	struct batch b = { .v = NULL };
	_cleanup_close_ int treefd = -1;
	gid_t tree_gid, auth_gid = 0;
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

	r = o.mode == MODE_PAM ? pam_batch(&b) : write_batch(treefd, auth_gid, &b);
	wipe_batch(&b);
	return r < 0 ? E_FAILURE : E_SUCCESS;
}
