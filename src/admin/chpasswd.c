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
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "ttyconv.h"
#include "privs.h"
#include "records.h"
#include "secretbatch.h"
#include "userdir.h"
#include "util.h"

/* shadow-utils' chpasswd exit codes */
#define E_SUCCESS 0
#define E_FAILURE 1
#define E_USAGE   2

/* Pass 3, direct path: the shadow file as it was, for the rollback. */
struct undo {
	bool written;
	char *old_hash;
	long old_lstchg;
};

/* A line's user: known to NSS and with a directory in the tree (ctx: the
 * tree's fd).  *uid is the one checked again in pass 3. */
static int lookup_user(void *ctx, struct hs_secret_batch *b, const char *name,
		       unsigned long lineno, uid_t *uid)
{
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int udirfd = -1;
	char path[HS_PATHBUF_USER];
	struct passwd pw;
	int r = hs_account_getpwnam(name, &pw, &pwbuf);

	if (r == -ENOENT) {
		hs_secret_line_error(b, lineno, "user '%s' does not exist", name);
		return -1;
	}
	if (r < 0) {
		hs_secret_line_error(b, lineno, "cannot look up user '%s': %s", name,
				     hs_strerror(r));
		return -1;
	}
	udirfd = hs_userdir_open(*(const int *)ctx, name, pw.pw_uid, NULL);
	if (udirfd < 0) {
		hs_userdir_path(path, sizeof(path), name, NULL);
		if (udirfd == -ENOENT)
			hs_secret_line_error(b, lineno, "user '%s' has no directory %s (run pwconv)",
					     name, path);
		else
			hs_secret_line_error(b, lineno, "cannot open %s: %s", path,
					     hs_strerror(udirfd));
		return -1;
	}
	*uid = pw.pw_uid;
	return 0;
}

static struct hs_secret_tool tool = {
	.name = "chpasswd",
	.what = "user",
	.legacy_help = "(legacy: they\n"
		       "                                authenticate only with allow_legacy in PAM)",
	.root_in_help = false,
	.hint_shows_dir = true,
	.sflag_checked_first = false,
	.des_effect = "its hashes would not authenticate",
	.name_valid = hs_names_user_valid,
	.invalid_name_shown = false,
	.empty_always_refused = false,
	.empty_hint = "use passwd -d to remove a password",
	.legacy_where = "where the PAM module has allow_legacy",
	.lookup = lookup_user,
};

/* ---- pass 3: writing ---- */

/* Write sh over the user's shadow file: 0, or -1 with "cannot VERB PATH"
 * logged and printed. */
static int put_shadow(int fd, gid_t auth_gid, const struct hs_secret_entry *e,
		      const struct hs_shadow *sh, const char *path, const char *verb)
{
	int r = hs_userdir_write_shadow(fd, e->uid, auth_gid, sh);

	if (r < 0) {
		syslog(LOG_ERR, "cannot %s %s: %s", verb, path, hs_strerror(r));
		hs_warn("line %lu: cannot %s %s: %s", e->lineno, verb, path, hs_strerror(r));
		return -1;
	}
	return 0;
}

/* Keep the current shadow file in u (for the rollback), then replace it. */
static int write_one(int treefd, gid_t auth_gid, const struct hs_secret_entry *e,
		     struct undo *u)
{
	_cleanup_userdir_release_ struct hs_userdir_held held = { treefd, -1 };
	char path[HS_PATHBUF_USER];
	struct hs_shadow sh = { .hash = e->secret, .lstchg = hs_today() };

	hs_userdir_path(path, sizeof(path), e->name, HS_FILE_SHADOW);
	held.fd = hs_batch_open_locked(treefd, e->name, e->uid, e->lineno);
	if (held.fd < 0 ||
	    hs_batch_keep_shadow(held.fd, e->name, e->uid, e->lineno, &u->old_hash,
				 &u->old_lstchg) < 0 ||
	    put_shadow(held.fd, auth_gid, e, &sh, path, "write") < 0)
		return -1;
	u->written = true;
	return 0;
}

/* Put back the shadow file write_one replaced, unless it changed again
 * since (the user's own passwd, root's passwd -l): that newer change
 * wins and is reported. */
static int restore_one(int treefd, gid_t auth_gid, const struct hs_secret_entry *e,
		       const struct undo *u)
{
	_cleanup_userdir_release_ struct hs_userdir_held held = { treefd, -1 };
	char path[HS_PATHBUF_USER];
	char cur[HS_USERFILE_MAX + 2];
	struct hs_shadow now, old = { .hash = u->old_hash, .lstchg = u->old_lstchg };
	bool ours;
	int r;

	hs_userdir_path(path, sizeof(path), e->name, HS_FILE_SHADOW);
	held.fd = hs_batch_open_locked(treefd, e->name, e->uid, e->lineno);
	if (held.fd < 0)
		return -1;
	r = hs_userdir_read_shadow(held.fd, e->uid, cur, sizeof(cur), &now);
	ours = r == 0 && hs_hash_consttime_streq(now.hash, e->secret);
	hs_wipe(cur, sizeof(cur));
	if (r < 0) {
		hs_warn("line %lu: cannot restore %s: %s", e->lineno, path, hs_strerror(r));
		return -1;
	}
	if (!ours) {
		hs_warn("line %lu: %s changed again meanwhile; not restored", e->lineno, path);
		return -1;
	}
	return put_shadow(held.fd, auth_gid, e, &old, path, "restore");
}

/* Direct path: every user or none.  Signals are blocked for the whole
 * pass, so an interrupt cannot stop it between a write and its rollback. */
static int write_batch(int treefd, gid_t auth_gid, struct hs_secret_batch *b)
{
	struct undo *undo = calloc(b->n ? b->n : 1, sizeof(*undo));
	unsigned long not_restored = 0;
	sigset_t saved;
	size_t i;

	if (!undo)
		hs_die(E_FAILURE, "out of memory");
	hs_privs_block_signals(&saved);
	for (i = 0; i < b->n; i++)
		if (write_one(treefd, auth_gid, &b->v[i], &undo[i]) < 0)
			break;
	/* if line b->v[i] failed: take the earlier ones back, newest first */
	for (size_t k = i < b->n ? i : 0; k-- > 0;) {
		if (undo[k].written && restore_one(treefd, auth_gid, &b->v[k], &undo[k]) < 0)
			not_restored++;
	}
	hs_privs_restore_signals(&saved);
	for (size_t k = 0; k < b->n; k++)
		hs_free_secret(undo[k].old_hash);
	free(undo);
	if (i == b->n) {
		for (i = 0; i < b->n; i++)
			syslog(LOG_INFO, "password of '%s' changed by chpasswd", b->v[i].name);
		return 0;
	}
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

/* Does prompt hold word as a whole word (letters on neither side), in any
 * case? */
static bool has_word(const char *prompt, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = prompt; (p = strcasestr(p, word)); p++)
		if ((p == prompt || !isalpha((unsigned char)p[-1])) &&
		    !isalpha((unsigned char)p[len]))
			return true;
	return false;
}

/* Answers every hidden prompt ("New password:", "Retype new password:")
 * with the line's password, as shadow-utils' chpasswd does.  Root is not
 * asked for the current one; a module that asks all the same is refused
 * rather than handed the new password as the old (a wrong password, which
 * the module may count against the account).  Such prompts name it with
 * the word "current" or "old": "Current password: " (pam_unix,
 * pam_hardened_shadow), "(current) UNIX password: ", "Enter current
 * password: ", "Old password: ".  Whole words: "New Bold password: "
 * (authtok_type=Bold) is a new-password prompt.  chpasswd calls no
 * setlocale(), so the modules' prompts are in English. */
static const char *batch_answer(void *ctx, const char *prompt)
{
	const struct hs_secret_entry *e = ctx;

	if (has_word(prompt, "current") || has_word(prompt, "old")) {
		hs_warn("line %lu: PAM asked for the current password of user '%s'", e->lineno,
			e->name);
		return NULL;
	}
	return e->secret;
}

static void batch_error(void *ctx, const char *text)
{
	const struct hs_secret_entry *e = ctx;

	hs_warn("line %lu: %s", e->lineno, text);
}

static int change_with_pam(const struct hs_secret_entry *e)
{
	struct hs_pam_script script = { .hidden = batch_answer, .error = batch_error,
					.ctx = (void *)e };
	struct pam_conv conv = { hs_ttyconv, &script };
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

/* One user after the other, stopping at the first refusal (the modules'
 * changes cannot be taken back, so at least nothing after the failure
 * happens, and the report says exactly what did). */
static int pam_batch_run(struct hs_secret_batch *b)
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

/* PAM path: the interrupting signals (Ctrl-C, kill's default, a hang-up,
 * Ctrl-\) wait until the batch and its report are over, as every signal
 * does on the direct path: otherwise one between two users would leave the
 * first changed and the others not, with no report.  Only these four: the
 * modules may run helpers (unix_chkpwd, pam_exec), which inherit the mask
 * and may need SIGCHLD or SIGALRM.  Nothing here talks to a terminal, so no
 * prompt is left uninterruptible. */
static int pam_batch(struct hs_secret_batch *b)
{
	static const int interrupts[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	sigset_t set, saved;
	int r;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(interrupts) / sizeof(interrupts[0]); i++)
		sigaddset(&set, interrupts[i]);
	sigprocmask(SIG_BLOCK, &set, &saved);
	r = pam_batch_run(b);
	fflush(stderr);
	hs_privs_restore_signals(&saved);
	return r;
}

int main(int argc, char **argv)
{
	struct hs_secret_options o = { .mode = HS_SECRET_DEFAULT };
	struct hs_secret_batch b = { .v = NULL };
	_cleanup_close_ int treefd = -1;
	gid_t tree_gid, auth_gid = 0;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "chpasswd"));
	hs_secret_parse_options(argc, argv, &tool, &o);
	/* the PAM module's rule: nothing writes what hs_hash_verify_password
	 * would refuse, unless given the same explicit opt-in */
	if (o.mode == HS_SECRET_HASH)
		hs_secret_check_legacy(&o.policy, o.allow_legacy, tool.legacy_where, E_USAGE);
	if (!hs_privs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog("chpasswd", LOG_PID, LOG_AUTHPRIV);
	/* -e and -c: from here the kernel lets chpasswd write /etc only.
	 * The PAM path is not confined: its stack may run any program
	 * (pam_exec) for each line. */
	if (o.mode != HS_SECRET_DEFAULT) {
		hs_confine_to_etc(E_FAILURE);
		r = hs_userdir_layout_gids(&tree_gid, &auth_gid);
		if (r < 0)
			hs_die(E_FAILURE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
	}
	treefd = hs_userdir_open_tree();
	if (treefd < 0)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));

	tool.ctx = &treefd;
	r = hs_secret_read(stdin, &tool, &o, &b);
	if (r < 0)
		return E_FAILURE;
	if (o.mode == HS_SECRET_HASH && hs_secret_hash(&tool, &o.policy, &b) < 0) {
		hs_secret_wipe(&b);
		return E_FAILURE;
	}

	r = o.mode == HS_SECRET_DEFAULT ? pam_batch(&b) : write_batch(treefd, auth_gid, &b);
	hs_secret_wipe(&b);
	return r < 0 ? E_FAILURE : E_SUCCESS;
}
