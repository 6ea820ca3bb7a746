/* pam_hardened_shadow.so: a drop-in for pam_unix.so lines (DESIGN §7).
 *
 * The hash, LSTCHG and aging data come from /etc/hardened-shadow/USER
 * through the library; account, password and session behave like
 * Linux-PAM 1.5's pam_unix (same messages, same return codes, same
 * prompts: the prompts come from libpam's pam_get_authtok, as pam_unix's
 * do), so existing pam.d files and screen lockers keep working.
 *
 * Who runs us: root processes (login, su, sshd, passwd run by root), the
 * setgid passwd run by a user (uid = the user, egid hardened-shadow: may
 * reach the user's own directory only), and unprivileged processes such
 * as screen lockers, which cannot read anything in the tree and are
 * served by the setgid password helper. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#define PAM_SM_AUTH
#define PAM_SM_ACCOUNT
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include <crypt.h>

#include "cli.h"
#include "config.h"
#include "fileio.h"
#include "guessguard.h"
#include "hash.h"
#include "layout.h"
#include "logrecords.h"
#include "names.h"
#include "policy.h"
#include "pwhelper.h"
#include "records.h"
#include "timeouts.h"
#include "userdir.h"
#include "util.h"

#define FAIL_DELAY_USEC (HS_FAIL_DELAY_MS * 1000u)   /* pam_unix's */
#define MAX_PASSWD_TRIES 3         /* pam_unix's */
/* Not the hash PRELIM verified against but a salted SHA-512-crypt of it
 * (prelim_fingerprint): the stored hash must not stay in memory while
 * the user types the new password. */
#define DATA_PRELIM_HASH "pam_hardened_shadow_prelim_hash"
#define DATA_OLD_AUTHTOK "pam_hardened_shadow_old_authtok"

#define MSG_ACCT_EXPIRED "Your account has expired; please contact your system administrator."
#define MSG_FORCED_ADMIN "You are required to change your password immediately (administrator enforced)."
#define MSG_FORCED_AGED "You are required to change your password immediately (password expired)."
#define MSG_WAIT_LONGER "You must wait longer to change your password."
#define MSG_NO_PASSWORD "No password has been supplied."
#define MSG_UNCHANGED "The password has not been changed."
#define MSG_TOO_LONG "You must choose a shorter password."
#define MSG_MISMATCH "Sorry, passwords do not match."

struct options {
	bool debug, audit, nullok, nodelay, use_authtok, use_first_pass, try_first_pass;
	bool not_set_pass, rehash, allow_legacy, quiet;
	const char *method;       /* last pam_unix method word */
	const char *prefix;       /* prefix= value (may be ""), NULL if not given */
	const char *rounds_arg;   /* rounds= value, NULL if not given */
};

/* pam_unix's method words, and the crypt prefixes
 * hs_hash_policy_from_method produces for them. */
static const struct {
	const char *prefix, *word;
} prefix_words[] = {
	{ "$y$", "yescrypt" }, { "$gy$", "gost_yescrypt" }, { "$6$", "sha512" },
	{ "$5$", "sha256" },   { "$2b$", "blowfish" },      { "$1$", "md5" },
};

/* The method word of a crypt prefix (by_prefix), or s itself when it is
 * a method word; NULL when it is neither. */
static const char *method_word(const char *s, bool by_prefix)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(prefix_words); i++)
		if (strcmp(s, by_prefix ? prefix_words[i].prefix : prefix_words[i].word) == 0)
			return prefix_words[i].word;
	return NULL;
}

/* The field a flag word sets, or NULL when a is not one. */
static bool *flag_option(struct options *o, const char *a)
{
	static const struct {
		const char *word;
		size_t offset;
	} flags[] = {
		{ "debug", offsetof(struct options, debug) },
		{ "audit", offsetof(struct options, audit) },
		{ "nullok", offsetof(struct options, nullok) },
		{ "nodelay", offsetof(struct options, nodelay) },
		{ "use_authtok", offsetof(struct options, use_authtok) },
		{ "use_first_pass", offsetof(struct options, use_first_pass) },
		{ "try_first_pass", offsetof(struct options, try_first_pass) },
		{ "not_set_pass", offsetof(struct options, not_set_pass) },
		{ "rehash", offsetof(struct options, rehash) },
		{ "allow_legacy", offsetof(struct options, allow_legacy) },
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(flags); i++)
		if (strcmp(a, flags[i].word) == 0)
			return (bool *)((char *)o + flags[i].offset);
	return NULL;
}

static void parse_options(pam_handle_t *pamh, int flags, int argc, const char **argv,
                          struct options *o)
{
	memset(o, 0, sizeof *o);
	o->quiet = (flags & PAM_SILENT) != 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool *flag = flag_option(o, a);

		if (flag)
			*flag = true;
		else if (strncmp(a, "prefix=", 7) == 0)
			o->prefix = a + 7;
		else if (strncmp(a, "rounds=", 7) == 0)
			o->rounds_arg = a + 7;
		else if (method_word(a, false))
			o->method = a;
		else
			pam_syslog(pamh, LOG_ERR, "unrecognized option [%s]", a);
	}
	o->debug = o->debug || o->audit;   /* as pam_unix */
	/* The application's word beats the line's: sshd passes this flag
	 * when PermitEmptyPasswords is no, and pam_unix then ignores nullok
	 * too (it applies the flag after the options). */
	if (flags & PAM_DISALLOW_NULL_AUTHTOK)
		o->nullok = false;
}

/* Messages to the user: PAM_SILENT suppresses them, as in pam_unix. */
__attribute__((format(printf, 4, 5)))
static void remark(pam_handle_t *pamh, const struct options *o, int style, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	pam_vprompt(pamh, style, NULL, fmt, ap);
	va_end(ap);
}

/* ---- hashing policy ---- */

/* Method and cost for new hashes: prefix= or a method word, else
 * login.defs, else libxcrypt's preferred method; rounds= overrides the
 * cost.  Returns PAM_SUCCESS or PAM_SERVICE_ERR (logged) for a
 * configuration error: never a silent fallback, never DES. */
static int resolve_policy(pam_handle_t *pamh, const struct options *o, struct hs_hash_policy *p)
{
	unsigned long rounds = 0;
	const char *word = NULL;
	int r;

	if (o->rounds_arg && hs_parse_ulong(o->rounds_arg, 1, 999999999, &rounds) < 0) {
		pam_syslog(pamh, LOG_ERR, "invalid option rounds=%s: configuration error",
		           o->rounds_arg);
		return PAM_SERVICE_ERR;
	}
	if (o->prefix) {
		word = method_word(o->prefix, true);
		if (!word) {
			pam_syslog(pamh, LOG_ERR, "unknown hash prefix \"%s\" in prefix=: configuration error",
			           o->prefix);
			return PAM_SERVICE_ERR;
		}
	} else if (o->method) {
		word = o->method;
	}
	if (word) {
		r = hs_hash_policy_from_method(word, rounds, p);
	} else {
		struct hs_config *defs = NULL;

		r = hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs);
		if (r < 0) {
			pam_syslog(pamh, LOG_ERR, "cannot read %s: %s", HS_ETC_LOGIN_DEFS,
			           hs_strerror(r));
			return PAM_SERVICE_ERR;
		}
		r = hs_hash_policy_from_config(defs, p);
		if (r < 0)
			pam_syslog(pamh, LOG_ERR, "unrecognized ENCRYPT_METHOD value [%s] in %s",
			           hs_config_get_str(defs, "ENCRYPT_METHOD", ""), HS_ETC_LOGIN_DEFS);
		hs_config_free(defs);
		if (r < 0)
			return PAM_SERVICE_ERR;
		if (o->rounds_arg) {
			word = method_word(p->prefix, true);
			if (word)
				r = hs_hash_policy_from_method(word, rounds, p);
		}
	}
	if (r < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot use hash method %s: %s", word ? word : "?",
		           hs_strerror(r));
		return PAM_SERVICE_ERR;
	}
	return PAM_SUCCESS;
}

/* Spend a real verification's time when there is nothing to verify
 * against, so refusals cannot be told apart by timing. */
static void burn_time(pam_handle_t *pamh, const struct options *o, const char *password)
{
	struct hs_hash_policy p;

	/* The method this auth line names, if any; otherwise libxcrypt's
	 * preferred method at its default cost, NOT login.defs: Debian 12
	 * says SHA512 there while its PAM password stack writes yescrypt, so
	 * a login.defs-priced dummy would answer unknown users about six
	 * times faster than a wrong password for a real one
	 * (bench/pam-auth.py measures this). */
	if (!(o->prefix || o->method) || resolve_policy(pamh, o, &p) != PAM_SUCCESS)
		hs_hash_policy_default(&p);
	hs_hash_dummy_verify(password, &p);
}

/* ---- the user's entry ---- */

enum source {
	SRC_DIRECT,    /* we read the files */
	SRC_HELPER,    /* no access: ask the setgid password helper */
	SRC_UNKNOWN,   /* no such user (or an invalid name) */
	SRC_FOREIGN,   /* not in /etc/passwd: another NSS source's (LDAP), not ours */
	SRC_ERROR,     /* in passwd but no entry in the tree, or a hostile or
	                * unreadable one: logged */
};

struct entry {
	const char *name;
	const struct passwd *pw;
	int treefd, udirfd;
	enum source src;
	char buf[HS_USERFILE_MAX + 2];
	struct hs_shadow sh;                /* SRC_DIRECT */
};

#define ENTRY_INIT { .treefd = -1, .udirfd = -1, .src = SRC_UNKNOWN }

/* The stored hash, once the entry's caller has no more use for it. */
static void entry_forget_hash(struct entry *e)
{
	hs_wipe(e->buf, sizeof e->buf);
	e->sh.hash = NULL;
}

static void entry_done(struct entry *e)
{
	hs_close(e->udirfd);
	hs_close(e->treefd);
	entry_forget_hash(e);
	e->treefd = e->udirfd = -1;
}
#define _cleanup_entry_ __attribute__((cleanup(entry_done)))

/* Is name a line of /etc/passwd itself?  A search of the file for "NAME:"
 * (memmem: a 100,000-user file, 6 MB, in about 5 ms on the development
 * VM, where parsing every line with fgetpwent_r took 200), where a hit
 * counts when only white space precedes it on its line: glibc's files
 * source skips leading white space before the name, so " dora:x:..." is
 * the local dora, and must not fall through to the next source's dora.
 * name is valid (entry_load checked it), so it holds no ':' or newline.
 * The file is read, not mapped: a mapping in sshd or a screen locker would
 * raise SIGBUS if root's tooling rewrote the file in place meanwhile.
 * Any doubt (unreadable, not a regular file, too big) says yes: the
 * account is then treated as a broken local one, as before there were
 * other sources. */
static bool in_passwd_file(const char *name)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;
	char key[HS_NAME_MAX + 2];
	size_t len, klen = (size_t)snprintf(key, sizeof key, "%s:", name);
	_cleanup_free_ char *data = NULL;
	bool found = false;

	if (hs_fileio_read_alloc_path(HS_ETC_PASSWD, &ex, &data, &len) < 0)
		return true;
	for (const char *p = data; !found && (p = memmem(p, len - (size_t)(p - data), key, klen));
	     p++) {
		const char *q = p;

		while (q > data && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\v' ||
				    q[-1] == '\f' || q[-1] == '\r'))
			q--;
		found = q == data || q[-1] == '\n';
	}
	return found;
}

/* Find the user and, when this process may, read their shadow file.
 * EACCES anywhere means "this process cannot read it": the helper's
 * case. */
static void entry_load(pam_handle_t *pamh, const struct options *o, const char *name,
                       struct entry *e)
{
	char path[HS_PATH_FIELD_MAX];
	int r;

	e->name = name;
	if (!hs_names_user_valid(name) || !(e->pw = pam_modutil_getpwnam(pamh, name))) {
		e->src = SRC_UNKNOWN;
		return;
	}
	r = hs_userdir_open_tree();
	if (r >= 0) {
		e->treefd = r;
		r = hs_userdir_open(e->treefd, name, e->pw->pw_uid, NULL);
	}
	if (r >= 0) {
		e->udirfd = r;
		r = hs_userdir_read_shadow(e->udirfd, e->pw->pw_uid, e->buf, sizeof e->buf, &e->sh);
	}
	if (r >= 0) {
		e->src = SRC_DIRECT;
		return;
	}
	bool denied = r == -EACCES || r == -EPERM;
	bool no_dir = r == -ENOENT && e->treefd >= 0 && e->udirfd < 0;
	/* a directory's account (passwd: files ldap) is the next module's,
	 * without a log line, a dummy hash or a helper run at its logins.
	 * /etc/passwd is read only where the tree gave no answer: a caller
	 * without access to it (a screen locker: one scan before the helper
	 * runs) or a name without a directory */
	if ((denied || no_dir) && !in_passwd_file(name)) {
		e->src = SRC_FOREIGN;
		if (o->debug)
			pam_syslog(pamh, LOG_DEBUG, "%s is not in %s: left to the next module", name,
			           HS_ETC_PASSWD);
		return;
	}
	if (denied) {
		e->src = SRC_HELPER;
		if (o->debug)
			pam_syslog(pamh, LOG_DEBUG, "no access to the entry of %s, asking %s", name,
			           HS_PASSWORD_HELPER);
		return;
	}
	e->src = SRC_ERROR;
	if (no_dir) {
		pam_syslog(pamh, LOG_ERR, "user %s has no entry in %s", name, HS_TREE_DIR);
		return;
	}
	/* the tree, the user's directory or their shadow file */
	hs_userdir_path(path, sizeof path, e->treefd < 0 ? NULL : name,
	                e->udirfd < 0 ? NULL : HS_FILE_SHADOW);
	pam_syslog(pamh, LOG_ERR, "cannot read %s: %s", path, hs_strerror(r));
}

/* What UPDATE compares the hash under the lock with: a SHA-512-crypt of
 * the hash at the cheapest cost, under a fresh salt.  It tells a changed
 * hash from the same one, and is worth nothing to whoever reads memory
 * (the stored hash's own salt is hidden in it).  A field too long to be
 * anything crypt made (or to be a passphrase for it) hides no password:
 * it is kept as "=FIELD".  *out is malloc'd. */
static int prelim_fingerprint(const char *hash, char **out)
{
	struct hs_hash_policy p;
	_cleanup_secret_buf_ struct hs_secret_buf fp = { malloc(HS_HASH_MAX + 2), HS_HASH_MAX + 2 };
	int r;

	if (!fp.p)
		return -ENOMEM;
	if (strlen(hash) >= CRYPT_OUTPUT_SIZE) {
		snprintf(fp.p, fp.size, "=%s", hash);
		r = 0;
	} else {
		r = hs_hash_policy_from_method("sha512", 1000, &p);
		if (r == 0)
			r = hs_hash_password(hash, &p, fp.p, fp.size);
	}
	if (r < 0)
		return r;
	*out = TAKE_PTR(fp.p);
	return 0;
}

/* Is hash the one prelim_fingerprint made fp of? */
static bool prelim_unchanged(const char *fp, const char *hash)
{
	if (fp[0] == '=')
		return hs_hash_consttime_streq(fp + 1, hash);
	return strlen(hash) < CRYPT_OUTPUT_SIZE && hs_hash_verify_password(hash, fp, false) == 1;
}

/* Store newhash as the user's hash under their write lock
 * (lib/tree/userdir.h), after reading the shadow file again: what is
 * replaced must be what is on disk now, not what was read before the
 * lock, and only while it is still the hash that was checked, so that a
 * change made meanwhile (root's passwd -l or chage -d, another change) is
 * never undone.  A password change (rehash false) compares with PRELIM's
 * fingerprint, waits HS_LOCK_TIMEOUT_MS for the lock and sets LSTCHG to
 * today.  A rehash compares with the hash itself, keeps LSTCHG and gives
 * up after HS_REHASH_LOCK_TIMEOUT_MS: a login must not hang for an
 * optimisation, the next one will rehash.  Returns 0, 1 when someone
 * changed the hash meanwhile, or a negative error (logged). */
static int store_hash(pam_handle_t *pamh, const struct options *o, struct entry *e, gid_t gid,
                      const char *newhash, const char *seen, bool rehash)
{
	unsigned timeout_ms = rehash ? HS_REHASH_LOCK_TIMEOUT_MS : HS_LOCK_TIMEOUT_MS;
	char path[HS_PATHBUF_USER], why[64], curbuf[HS_USERFILE_MAX + 2];
	struct hs_shadow cur;
	int r;

	r = hs_userdir_lock_at(e->treefd, e->name, &e->udirfd, timeout_ms);
	if (r < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot lock %s: %s",
		           hs_userdir_path(path, sizeof path, e->name, NULL),
		           hs_lock_strerror(r, timeout_ms, why, sizeof why));
		return r;
	}
	hs_userdir_path(path, sizeof path, e->name, HS_FILE_SHADOW);
	r = hs_userdir_read_shadow(e->udirfd, e->pw->pw_uid, curbuf, sizeof curbuf, &cur);
	if (r < 0) {
		pam_syslog(pamh, LOG_ERR, "cannot read %s: %s", path, hs_strerror(r));
	} else if (rehash ? !hs_hash_consttime_streq(seen, cur.hash)
	                  : !prelim_unchanged(seen, cur.hash)) {
		r = 1;
	} else {
		struct hs_shadow ns = { .hash = newhash,
		                        .lstchg = rehash ? cur.lstchg : hs_today() };

		r = hs_userdir_write_shadow(e->udirfd, e->pw->pw_uid, gid, &ns);
		if (rehash && (r == -EACCES || r == -EPERM)) {
			if (o->debug)
				pam_syslog(pamh, LOG_DEBUG, "rehash of %s skipped: %s", e->name,
				           hs_strerror(r));
		} else if (r < 0) {
			pam_syslog(pamh, LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
			/* The user sees the cause too (a full or read-only /etc
			 * is theirs to report), not only libpam's "Authentication
			 * token manipulation error"; an error, so even PAM_SILENT
			 * shows it. */
			if (!rehash)
				pam_error(pamh, "cannot write %s: %s", path, hs_strerror(r));
		}
	}
	(void)hs_userdir_unlock_at(e->treefd, e->udirfd);
	hs_wipe(curbuf, sizeof curbuf);
	return r;
}

/* The group new files get: the auth group when root (it can set any
 * group), otherwise the setgid directory hands it down. */
static int write_gid(pam_handle_t *pamh, gid_t *gid)
{
	gid_t tree_gid;
	int r;

	if (geteuid() != 0) {
		*gid = HS_ANY_GID;
		return 0;
	}
	r = hs_userdir_layout_gids(&tree_gid, gid);
	if (r < 0)
		pam_syslog(pamh, LOG_ERR, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
	return r;
}

/* The name logged in on the terminal (PAM_TTY, else stdin's) in utmp, as
 * pam_modutil_getlogin() finds it, but without glibc's lock on utmp, which
 * a user's stopped utempter may hold: getutxline() waited 10 s for it, in
 * every login's session and every refused login and su (logrecords.h).
 * NULL: none. */
static const char *tty_login(pam_handle_t *pamh, char *buf, size_t size)
{
	const void *item = NULL;
	const char *tty;
	struct utmpx ut;

	if (pam_get_item(pamh, PAM_TTY, &item) != PAM_SUCCESS || !item)
		item = ttyname(STDIN_FILENO);
	tty = item;
	if (!tty)
		return NULL;
	if (strncmp(tty, "/dev/", 5) == 0)
		tty += 5;
	if (hs_logrecords_utmp_find(_PATH_UTMP, 0, tty, &ut) < 0)
		return NULL;
	snprintf(buf, size, "%.*s", (int)sizeof(ut.ut_user), ut.ut_user);
	return buf;
}

/* ---- auth ---- */

/* PAM item it, escaped for the log (hs_printable): the application, or
 * a user through it, chose it; "" when unset. */
static const char *item_shown(pam_handle_t *pamh, int it, char *buf, size_t size)
{
	const void *v = NULL;

	if (pam_get_item(pamh, it, &v) != PAM_SUCCESS || !v)
		return "";
	return hs_printable(v, buf, size);
}

static void log_auth_failure(pam_handle_t *pamh, const char *name)
{
	char buf[sizeof(((struct utmpx *)0)->ut_user) + 1];
	char login[4 * sizeof(buf)], tty[128], ruser[128], rhost[256], user[128];
	const char *who = tty_login(pamh, buf, sizeof(buf));

	/* utmp's name is what a member of group utmp wrote there */
	hs_printable(who ? who : "", login, sizeof(login));
	pam_syslog(pamh, LOG_NOTICE,
	           "authentication failure; logname=%s uid=%u euid=%u tty=%s ruser=%s rhost=%s  user=%s",
	           login, (unsigned)getuid(), (unsigned)geteuid(),
	           item_shown(pamh, PAM_TTY, tty, sizeof(tty)),
	           item_shown(pamh, PAM_RUSER, ruser, sizeof(ruser)),
	           item_shown(pamh, PAM_RHOST, rhost, sizeof(rhost)),
	           hs_printable(name, user, sizeof(user)));
}

/* Read one password with our own prompt, for not_set_pass (which must
 * leave the PAM items alone).  *out is a malloc'd copy to wipe. */
static int prompt_secret(pam_handle_t *pamh, const char *prompt, char **out)
{
	_cleanup_secret_ char *resp = NULL;
	int r = pam_prompt(pamh, PAM_PROMPT_ECHO_OFF, &resp, "%s", prompt);

	if (r != PAM_SUCCESS)
		return r;
	if (!resp)
		return PAM_CONV_ERR;
	*out = TAKE_PTR(resp);
	return PAM_SUCCESS;
}

/* The password for item (PAM_AUTHTOK or PAM_OLDAUTHTOK).  Without
 * not_set_pass this is libpam's pam_get_authtok (pam_unix's prompts, and
 * it honours use_first_pass/try_first_pass/use_authtok itself); *owned
 * stays NULL.  With not_set_pass the items are only read, never set, and
 * *owned holds our copy. */
static int get_password(pam_handle_t *pamh, const struct options *o, int item, bool chauthtok,
                        const char **tok, char **owned)
{
	const void *prev = NULL;
	int r;

	*owned = NULL;
	if (!o->not_set_pass)
		return pam_get_authtok(pamh, item, tok, NULL);

	if ((o->use_first_pass || o->try_first_pass || (o->use_authtok && item == PAM_AUTHTOK)) &&
	    pam_get_item(pamh, item, &prev) == PAM_SUCCESS && prev) {
		*tok = prev;
		return PAM_SUCCESS;
	}
	if (o->use_first_pass || (o->use_authtok && item == PAM_AUTHTOK))
		return PAM_AUTHTOK_ERR;

	if (item == PAM_OLDAUTHTOK)
		r = prompt_secret(pamh, "Current password: ", owned);
	else if (!chauthtok)
		r = prompt_secret(pamh, "Password: ", owned);
	else {
		_cleanup_secret_ char *new = NULL, *again = NULL;

		r = prompt_secret(pamh, "New password: ", &new);
		if (r == PAM_SUCCESS)
			r = prompt_secret(pamh, "Retype new password: ", &again);
		if (r == PAM_SUCCESS && strcmp(new, again) != 0) {
			pam_error(pamh, "%s", MSG_MISMATCH);
			r = PAM_TRY_AGAIN;
		}
		if (r == PAM_SUCCESS)
			*owned = TAKE_PTR(new);
	}
	if (r == PAM_SUCCESS)
		*tok = *owned;
	return r;
}

/* Re-hash a password that verified against a hash below the policy.
 * Only root or the owner (setgid tool) can write; others skip. */
static void maybe_rehash(pam_handle_t *pamh, const struct options *o, struct entry *e,
                         const char *password)
{
	struct hs_hash_policy p;
	char newhash[HS_HASH_MAX + 1];
	gid_t gid;
	int r;

	if (resolve_policy(pamh, o, &p) != PAM_SUCCESS)
		return;
	if (!hs_hash_needs_rehash(e->sh.hash, &p))
		return;
	if (geteuid() != 0 && geteuid() != e->pw->pw_uid) {
		if (o->debug)
			pam_syslog(pamh, LOG_DEBUG, "rehash of %s skipped: no write access", e->name);
		return;
	}
	if (write_gid(pamh, &gid) < 0)
		return;
	/* the policy names a method we would refuse to verify (a rehash is
	 * never a reason to write a legacy method, even with allow_legacy) */
	const char *method;
	if (hs_hash_policy_check_legacy(&p, false, &method) < 0) {
		pam_syslog(pamh, LOG_ERR, "rehash of %s skipped: policy method %s is legacy",
		           e->name, method);
		return;
	}
	r = hs_hash_password(password, &p, newhash, sizeof newhash);
	if (r < 0) {
		pam_syslog(pamh, LOG_ERR, "rehash of %s failed: %s", e->name, hs_strerror(r));
		return;
	}
	/* only if the hash is still the one the password was verified
	 * against: a new password or root's lock must not be undone */
	r = store_hash(pamh, o, e, gid, newhash, e->sh.hash, true);
	hs_wipe(newhash, sizeof newhash);
	if (r == 1)
		pam_syslog(pamh, LOG_NOTICE,
		           "rehash of %s skipped: password changed by another process", e->name);
	else if (r == 0)
		pam_syslog(pamh, LOG_NOTICE, "password of %s re-hashed to the current policy (%s)",
		           e->name, p.prefix);
}

/* pam_get_user(), or the status to return (logged with prio, msg). */
static int get_user(pam_handle_t *pamh, const char **name, int prio, const char *msg)
{
	int r = pam_get_user(pamh, name, NULL);

	if (r == PAM_SUCCESS && *name)
		return PAM_SUCCESS;
	if (r == PAM_CONV_AGAIN)
		return PAM_INCOMPLETE;
	pam_syslog(pamh, prio, "%s", msg);
	return r == PAM_SUCCESS ? PAM_USER_UNKNOWN : r;
}

/* A process the user drives: a setgid passwd or chsh they started.  They
 * could run guesses in parallel there and kill each one as soon as its
 * answer shows (libpam's delay comes after the module returns), so the
 * module serializes such guesses itself. */
static bool user_driven(void)
{
	return getuid() != 0;
}

/* The guess lock of this process's caller (the real uid), never the
 * target's: su runs with its caller's real uid, so the caller may stop
 * it while it holds the lock, and that must delay only the caller's own
 * guesses, not another user's su of the same target, nor the target's
 * own passwd.  The caller's own directory's lock (the one the password
 * helper and the caller's setgid passwd and chsh take: one guess of this
 * caller at a time, whoever the target), or, for a caller without a
 * directory, one per caller on the target's shadow file.  path names the
 * file, for the log.  Returns the locked fd or a negative error. */
static int lock_caller_guesses(pam_handle_t *pamh, const struct entry *e, char *path,
                               size_t size)
{
	uid_t caller = getuid();
	const struct passwd *pw;
	bool own;
	int fd;

	if (e->pw->pw_uid == caller) {
		hs_userdir_path(path, size, e->name, HS_FILE_AGING);
		return hs_userdir_guess_lock(e->udirfd, HS_LOCK_TIMEOUT_MS);
	}
	pw = pam_modutil_getpwuid(pamh, caller);
	fd = hs_userdir_guess_lock_caller(e->treefd, pw ? pw->pw_name : NULL, caller, e->udirfd,
	                                  HS_FILE_SHADOW, HS_LOCK_TIMEOUT_MS, &own);
	if (own)
		hs_userdir_path(path, size, pw->pw_name, HS_FILE_AGING);
	else
		hs_userdir_path(path, size, e->name, HS_FILE_SHADOW);
	return fd;
}

/* The password against the entry's hash (SRC_DIRECT), or, when it cannot
 * match (an overlong password, a locked or unverifiable hash), a
 * verification's time spent for nothing.  In a user-driven process, one
 * guess of this caller at a time (lock_caller_guesses), and a failure
 * holds the lock through the failure delay, whether the hash could match
 * or not: a locked account must not answer su's caller sooner than a
 * wrong password (pam_fail_delay is not set there).  In a setuid-root
 * process a guard the caller cannot kill holds it (guessguard.h); in a
 * setgid one (passwd, chsh) the caller can end the delay with the
 * process, but guesses only their own password there.  The guess lock is
 * not the writers' lock: stopping this process delays only the caller's
 * own guesses.  Returns 1, 0, or a negative error (logged). */
static int check_password(pam_handle_t *pamh, const struct options *o, const struct entry *e,
                          const char *password)
{
	char path[HS_PATH_FIELD_MAX];
	struct hs_guessguard guard = HS_GUESSGUARD_INIT;
	bool can_match = strlen(password) <= HS_PASSWORD_MAX &&
	                 hs_hash_verifiable(e->sh.hash, o->allow_legacy);
	int fd, r;

	if (!user_driven()) {
		if (can_match)
			return hs_hash_verify_password(password, e->sh.hash, o->allow_legacy);
		burn_time(pamh, o, password);
		return 0;
	}
	fd = lock_caller_guesses(pamh, e, path, sizeof path);
	if (fd < 0) {
		char why[64];

		pam_syslog(pamh, LOG_ERR, "cannot lock %s for a password check: %s%s", path,
		           hs_lock_strerror(fd, HS_LOCK_TIMEOUT_MS, why, sizeof why),
		           fd == -HS_E_TIMEOUT ? " (another password check by this caller holds it)" :
		                                 "");
		return fd;
	}
	/* a setuid-root process (su, chfn, sudo): the delay outlives a kill.
	 * Without its guard no hash is checked: a caller who made the fork
	 * fail would otherwise be back to one guess per hash time. */
	if (!o->nodelay && geteuid() == 0) {
		r = hs_guessguard_start(&guard, fd, HS_FAIL_DELAY_MS);
		if (r < 0) {
			pam_syslog(pamh, LOG_ERR, "cannot start the failure delay: %s", hs_strerror(r));
			close(fd);
			return r;
		}
	}
	if (can_match) {
		r = hs_hash_verify_password(password, e->sh.hash, o->allow_legacy);
	} else {
		burn_time(pamh, o, password);
		r = 0;
	}
	if (guard.pid > 0)
		hs_guessguard_end(&guard, r == 1);
	else if (r != 1 && !o->nodelay)
		hs_sleep_whole_ms(HS_FAIL_DELAY_MS);
	close(fd);
	return r;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;
	_cleanup_entry_ struct entry e = ENTRY_INIT;
	const char *name = NULL, *password = NULL;
	_cleanup_secret_ char *owned = NULL;
	int r;

	parse_options(pamh, flags, argc, argv, &o);
	r = get_user(pamh, &name, LOG_NOTICE, "could not obtain username");
	if (r != PAM_SUCCESS)
		return r;
	entry_load(pamh, &o, name, &e);
	/* a user-driven process's direct check delays under the guess lock
	 * instead (check_password) */
	if (!o.nodelay && !(e.src == SRC_DIRECT && user_driven()))
		pam_fail_delay(pamh, FAIL_DELAY_USEC);

	/* an empty hash with nullok logs in without a prompt, as pam_unix */
	if (e.src == SRC_DIRECT && e.sh.hash[0] == '\0' && o.nullok) {
		if (o.debug)
			pam_syslog(pamh, LOG_DEBUG, "user [%s] has blank password; authenticated without it",
			           name);
		return PAM_SUCCESS;
	}

	r = get_password(pamh, &o, PAM_AUTHTOK, false, &password, &owned);
	if (r != PAM_SUCCESS) {
		if (r == PAM_CONV_AGAIN)
			r = PAM_INCOMPLETE;
		else
			pam_syslog(pamh, LOG_CRIT, "auth could not identify password for [%s]", name);
		return r;
	}

	switch (e.src) {
	case SRC_DIRECT:
		if (e.sh.hash[0] != '\0' && e.sh.hash[0] != '!' && e.sh.hash[0] != '*' &&
		    !hs_hash_verifiable(e.sh.hash, o.allow_legacy))
			pam_syslog(pamh, LOG_NOTICE,
			           "the password hash \"%.6s\" of %s is legacy or unknown to libcrypt",
			           e.sh.hash, name);
		r = check_password(pamh, &o, &e, password);
		if (r == 1) {
			r = PAM_SUCCESS;
			if (o.rehash)
				maybe_rehash(pamh, &o, &e, password);
		} else {
			r = r < 0 ? PAM_AUTHINFO_UNAVAIL : PAM_AUTH_ERR;
		}
		break;
	case SRC_HELPER:
		/* an overlong password is refused without starting the helper */
		r = hs_pwhelper_verify(name, password);
		if (r == HS_PWHELPER_ERROR)
			pam_syslog(pamh, LOG_ERR, "%s could not verify the password of %s",
			           HS_PASSWORD_HELPER, name);
		r = r == HS_PWHELPER_OK ? PAM_SUCCESS :
		    r == HS_PWHELPER_ERROR ? PAM_AUTHINFO_UNAVAIL : PAM_AUTH_ERR;
		break;
	case SRC_UNKNOWN:
		burn_time(pamh, &o, password);
		if (o.audit)
			pam_syslog(pamh, LOG_NOTICE, "check pass; user (%s) unknown", name);
		else
			pam_syslog(pamh, LOG_NOTICE, "check pass; user unknown");
		r = PAM_USER_UNKNOWN;
		break;
	case SRC_FOREIGN:
		r = PAM_USER_UNKNOWN;
		break;
	case SRC_ERROR:
	default:
		burn_time(pamh, &o, password);
		r = PAM_AUTHINFO_UNAVAIL;
		break;
	}
	if (r != PAM_SUCCESS && r != PAM_USER_UNKNOWN)
		log_auth_failure(pamh, name);
	return r;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	return PAM_SUCCESS;
}

/* ---- account ---- */

/* LSTCHG and aging (fail closed) for the user.  Out of descriptors or
 * memory nothing was learnt of the aging file: an error, not an expired
 * account (the user would be told to call their administrator). */
static int load_aging(pam_handle_t *pamh, const struct entry *e, long *lstchg,
                      struct hs_aging *aging)
{
	char path[HS_PATH_FIELD_MAX];
	int r;

	switch (e->src) {
	case SRC_DIRECT:
		*lstchg = e->sh.lstchg;
		r = hs_userdir_aging_or_expired(e->udirfd, aging);
		if (r < 0)
			pam_syslog(pamh, LOG_ERR, "cannot read %s: %s%s",
			           hs_userdir_path(path, sizeof path, e->name, HS_FILE_AGING),
			           hs_strerror(r),
			           hs_err_transient(r) ? "" : "; account treated as expired");
		return hs_err_transient(r) ? PAM_AUTHINFO_UNAVAIL : PAM_SUCCESS;
	case SRC_HELPER:
		r = hs_pwhelper_account(e->name, lstchg, aging);
		if (r != HS_PWHELPER_OK) {
			pam_syslog(pamh, LOG_ERR, "%s could not read the aging data of %s",
			           HS_PASSWORD_HELPER, e->name);
			return PAM_AUTHINFO_UNAVAIL;
		}
		return PAM_SUCCESS;
	case SRC_UNKNOWN:
	case SRC_FOREIGN:
		return PAM_USER_UNKNOWN;
	default:
		return PAM_AUTHINFO_UNAVAIL;
	}
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;
	struct entry e = ENTRY_INIT;
	struct hs_aging aging;
	const void *item = NULL;
	const char *name;
	long lstchg, days_left, today = hs_today();
	bool by_admin;
	int r;

	parse_options(pamh, flags, argc, argv, &o);
	r = pam_get_item(pamh, PAM_USER, &item);
	name = item;
	if (r != PAM_SUCCESS || !name) {
		pam_syslog(pamh, LOG_ALERT, "could not identify user (from uid=%lu)",
		           (unsigned long)getuid());
		return PAM_USER_UNKNOWN;
	}
	entry_load(pamh, &o, name, &e);
	r = load_aging(pamh, &e, &lstchg, &aging);
	entry_done(&e);   /* closes and wipes; e.src stays */
	if (r == PAM_USER_UNKNOWN) {
		if (e.src != SRC_FOREIGN)
			pam_syslog(pamh, LOG_ALERT, "could not identify user (from getpwnam(%s))",
			           name);
		return r;
	}
	if (r != PAM_SUCCESS)
		return r;

	if (lstchg > 0 && today < lstchg)
		pam_syslog(pamh, LOG_DEBUG, "account %s has password changed in future", name);
	switch (hs_policy_account_state(lstchg, &aging, today, &days_left, &by_admin)) {
	case HS_ACCT_EXPIRED:
		pam_syslog(pamh, LOG_NOTICE, "account %s has expired (account expired)", name);
		remark(pamh, &o, PAM_ERROR_MSG, "%s", MSG_ACCT_EXPIRED);
		return PAM_ACCT_EXPIRED;
	case HS_ACCT_NEW_AUTHTOK_REQD:
		if (by_admin) {
			pam_syslog(pamh, LOG_NOTICE, "expired password for user %s (root enforced)", name);
			remark(pamh, &o, PAM_ERROR_MSG, "%s", MSG_FORCED_ADMIN);
		} else {
			pam_syslog(pamh, LOG_DEBUG, "expired password for user %s (password aged)", name);
			remark(pamh, &o, PAM_ERROR_MSG, "%s", MSG_FORCED_AGED);
		}
		return PAM_NEW_AUTHTOK_REQD;
	case HS_ACCT_AUTHTOK_EXPIRED:
		pam_syslog(pamh, LOG_NOTICE, "account %s has expired (failed to change password)", name);
		remark(pamh, &o, PAM_ERROR_MSG, "%s", MSG_ACCT_EXPIRED);
		return PAM_AUTHTOK_EXPIRED;
	case HS_ACCT_WARN:
		pam_syslog(pamh, LOG_DEBUG, "password for user %s will expire in %ld days", name,
		           days_left);
		remark(pamh, &o, PAM_TEXT_INFO, "Warning: your password will expire in %ld day%s.",
		       days_left, days_left == 1 ? "" : "s");
		return PAM_SUCCESS;
	case HS_ACCT_OK:
	default:
		return PAM_SUCCESS;
	}
}

/* ---- password ---- */

static void cleanup_secret_data(pam_handle_t *pamh, void *data, int error_status)
{
	hs_free_secret(data);
}

/* The change is over (done or failed): what PRELIM left for UPDATE goes,
 * wiped by cleanup_secret_data. */
static void drop_change_data(pam_handle_t *pamh)
{
	(void)pam_set_data(pamh, DATA_PRELIM_HASH, NULL, NULL);
	(void)pam_set_data(pamh, DATA_OLD_AUTHTOK, NULL, NULL);
}

/* What both chauthtok phases check first: the policy (a configuration
 * error shows before anyone types anything) and that this module can
 * write the account's hash itself. */
static int change_allowed(pam_handle_t *pamh, const struct options *o, const struct entry *e,
                          struct hs_hash_policy *policy)
{
	int r = resolve_policy(pamh, o, policy);

	if (r != PAM_SUCCESS)
		return r;
	if (e->src == SRC_HELPER) {
		pam_syslog(pamh, LOG_ERR, "cannot change the password of %s: no access to %s",
		           e->name, HS_TREE_DIR);
		return PAM_AUTHTOK_ERR;
	}
	if (e->src != SRC_DIRECT)
		return e->src == SRC_UNKNOWN || e->src == SRC_FOREIGN ? PAM_USER_UNKNOWN
		                                                      : PAM_AUTHINFO_UNAVAIL;
	return PAM_SUCCESS;
}

static int chauthtok_prelim(pam_handle_t *pamh, const struct options *o, struct entry *e,
                            bool iamroot)
{
	struct hs_hash_policy policy;
	struct hs_aging aging;
	const char *old = NULL;
	_cleanup_secret_ char *owned = NULL, *seen = NULL;
	long lstchg, today = hs_today();
	int r;

	/* what an earlier pam_chauthtok on this handle left (its PRELIM
	 * passed, another module's failed) must not vouch for this one */
	drop_change_data(pamh);
	/* a configuration error shows before anyone types anything */
	r = change_allowed(pamh, o, e, &policy);
	if (r != PAM_SUCCESS)
		return r;

	if (e->sh.hash[0] == '\0' && o->nullok) {
		/* blank password: nothing to ask, as pam_unix */
	} else if (!iamroot) {
		remark(pamh, o, PAM_TEXT_INFO, "Changing password for %s.", e->name);
		if (!o->nodelay && !user_driven())
			pam_fail_delay(pamh, FAIL_DELAY_USEC);
		r = get_password(pamh, o, PAM_OLDAUTHTOK, true, &old, &owned);
		if (r != PAM_SUCCESS) {
			pam_syslog(pamh, LOG_NOTICE, "password - (old) token not obtained");
			return r;
		}
		r = check_password(pamh, o, e, old);
		if (r != 1) {
			log_auth_failure(pamh, e->name);
			return r < 0 ? PAM_AUTHINFO_UNAVAIL : PAM_AUTH_ERR;
		}
		if (owned) {
			/* not_set_pass: keep the old password for UPDATE in
			 * module data, not in PAM_OLDAUTHTOK */
			r = pam_set_data(pamh, DATA_OLD_AUTHTOK, owned, cleanup_secret_data);
			if (r != PAM_SUCCESS)
				return r;
			owned = NULL;
		}
	}
	/* remember what we verified against: UPDATE refuses to overwrite a
	 * hash someone else changed in between */
	if (prelim_fingerprint(e->sh.hash, &seen) < 0)
		return PAM_BUF_ERR;
	entry_forget_hash(e);

	r = load_aging(pamh, e, &lstchg, &aging);   /* SRC_DIRECT: change_allowed */
	if (r != PAM_SUCCESS)
		return r;
	if (!iamroot) {
		enum hs_acct_state state = hs_policy_account_state(lstchg, &aging, today, NULL, NULL);

		if (state == HS_ACCT_EXPIRED || state == HS_ACCT_AUTHTOK_EXPIRED) {
			pam_syslog(pamh, LOG_NOTICE, "user shadow entry expired");
			return state == HS_ACCT_EXPIRED ? PAM_ACCT_EXPIRED : PAM_AUTHTOK_EXPIRED;
		}
		if (hs_policy_change_too_early(lstchg, &aging, today)) {
			remark(pamh, o, PAM_ERROR_MSG, "%s", MSG_WAIT_LONGER);
			return PAM_AUTHTOK_ERR;
		}
	}
	/* Only now, every check passed: the fingerprint is also UPDATE's
	 * proof that this PRELIM let the change through.  libpam runs UPDATE
	 * whenever the PRELIM stack as a whole passed, so a line whose
	 * PRELIM failed (optional, or [default=ignore] made up for by a
	 * later module) still gets UPDATE. */
	r = pam_set_data(pamh, DATA_PRELIM_HASH, seen, cleanup_secret_data);
	if (r != PAM_SUCCESS)
		return r;
	seen = NULL;   /* libpam's now: cleanup_secret_data wipes it */
	return PAM_SUCCESS;
}

/* pam_unix's acceptance test for a new password (quality is for modules
 * stacked above: pam_pwquality). */
static bool new_password_acceptable(pam_handle_t *pamh, const struct options *o,
                                    const char *old, const char *new)
{
	if (!new || new[0] == '\0') {
		remark(pamh, o, PAM_ERROR_MSG, "%s", MSG_NO_PASSWORD);
		return false;
	}
	if (strlen(new) > HS_PASSWORD_MAX) {
		remark(pamh, o, PAM_ERROR_MSG, "%s", MSG_TOO_LONG);
		return false;
	}
	if (old && strcmp(old, new) == 0) {
		remark(pamh, o, PAM_ERROR_MSG, "%s", MSG_UNCHANGED);
		return false;
	}
	return true;
}

static int chauthtok_update(pam_handle_t *pamh, const struct options *o, struct entry *e,
                            bool iamroot)
{
	struct hs_hash_policy policy;
	const void *old = NULL, *seen = NULL;
	const char *new = NULL;
	_cleanup_secret_ char *owned = NULL, *own_seen = NULL;
	char newhash[HS_HASH_MAX + 1];
	gid_t gid;
	int r, tries;

	r = change_allowed(pamh, o, e, &policy);
	if (r != PAM_SUCCESS)
		return r;
	/* Without PRELIM's fingerprint our PRELIM refused the change (wrong
	 * current password, too early, expired) and libpam went on with the
	 * rest of the stack: only root, who needs no current password, may
	 * change it then, and the hash read now is the one a change must not
	 * overwrite.  pam_unix refuses the same way (it checks the current
	 * password and the aging again in UPDATE). */
	if (pam_get_data(pamh, DATA_PRELIM_HASH, &seen) != PAM_SUCCESS || !seen) {
		if (!iamroot) {
			pam_syslog(pamh, LOG_NOTICE, "user %s not authenticated: password not changed",
			           e->name);
			return PAM_AUTH_ERR;
		}
		if (prelim_fingerprint(e->sh.hash, &own_seen) < 0)
			return PAM_BUF_ERR;
		seen = own_seen;
	}
	/* the new password may be typed for a long time: the check that
	 * counts re-reads the hash under the lock */
	entry_forget_hash(e);

	if (o->not_set_pass) {
		if (pam_get_data(pamh, DATA_OLD_AUTHTOK, &old) != PAM_SUCCESS)
			old = NULL;
	} else {
		pam_get_item(pamh, PAM_OLDAUTHTOK, &old);
	}

	r = PAM_AUTHTOK_ERR;
	for (tries = 0; r != PAM_SUCCESS && tries < MAX_PASSWD_TRIES; tries++) {
		hs_free_secret(owned);
		owned = NULL;
		r = get_password(pamh, o, PAM_AUTHTOK, true, &new, &owned);
		if (r == PAM_TRY_AGAIN)
			continue;   /* the retype did not match; libpam said so */
		if (r != PAM_SUCCESS) {
			if (o->debug)
				pam_syslog(pamh, LOG_ALERT, "password - new password not obtained");
			return r;
		}
		if (!new_password_acceptable(pamh, o, old, new)) {
			r = PAM_AUTHTOK_ERR;
			if (!o->not_set_pass)
				pam_set_item(pamh, PAM_AUTHTOK, NULL);
			if (o->use_authtok)
				break;   /* the same token would come back */
		}
	}
	if (r != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_NOTICE, "new password not acceptable");
		return r == PAM_TRY_AGAIN ? PAM_AUTHTOK_ERR : r;
	}

	r = write_gid(pamh, &gid);
	if (r < 0)
		return PAM_AUTHTOK_ERR;
	/* never write what our own verifier would refuse: the one legacy
	 * rule shared with chpasswd and newusers (lib/auth/hash.h) */
	const char *method;
	if (hs_hash_policy_check_legacy(&policy, o->allow_legacy, &method) < 0) {
		pam_syslog(pamh, LOG_ERR,
		           "refusing to write a %s hash: libcrypt calls the method legacy (configuration error; see allow_legacy)",
		           method);
		return PAM_SERVICE_ERR;
	}
	r = hs_hash_password(new, &policy, newhash, sizeof newhash);
	if (r < 0) {
		pam_syslog(pamh, LOG_CRIT, "crypt() failure or out of memory for password: %s",
		           hs_strerror(r));
		return PAM_AUTHTOK_ERR;
	}
	/* Hashing is done before the lock (it is the slow part); the lock
	 * is held from the re-read to the rename, so root's passwd -l or
	 * chage -d cannot slip in between and be overwritten, and if they
	 * came first the re-read sees their change.  A hash changed since
	 * PRELIM checked it (root locked the account, another change won)
	 * is not overwritten with one checked against the previous
	 * password. */
	r = store_hash(pamh, o, e, gid, newhash, seen, false);
	hs_wipe(newhash, sizeof newhash);
	if (r == 1)
		pam_syslog(pamh, LOG_NOTICE, "user password changed by another process");
	if (r != 0)
		return r == -HS_E_TIMEOUT ? PAM_AUTHTOK_LOCK_BUSY : PAM_AUTHTOK_ERR;
	pam_syslog(pamh, LOG_NOTICE, "password changed for %s", e->name);
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct options o;
	_cleanup_entry_ struct entry e = ENTRY_INIT;
	const char *name = NULL;
	bool iamroot;
	int r;

	parse_options(pamh, flags, argc, argv, &o);
	r = get_user(pamh, &name, LOG_ERR, "password - could not identify user");
	if (r != PAM_SUCCESS)
		return r;
	entry_load(pamh, &o, name, &e);
	if (e.src == SRC_UNKNOWN || e.src == SRC_FOREIGN) {
		pam_syslog(pamh, LOG_DEBUG, "user \"%s\" does not exist in /etc/passwd", name);
		return PAM_USER_UNKNOWN;
	}
	/* root changes anyone's password without the old one, except when
	 * an expired password is being changed at login (pam_unix) */
	iamroot = getuid() == 0 && !(flags & PAM_CHANGE_EXPIRED_AUTHTOK);

	if (flags & PAM_PRELIM_CHECK)
		return chauthtok_prelim(pamh, &o, &e, iamroot);
	if (!(flags & PAM_UPDATE_AUTHTOK)) {
		pam_syslog(pamh, LOG_ALERT, "password received unknown request");
		return PAM_ABORT;
	}
	r = chauthtok_update(pamh, &o, &e, iamroot);
	drop_change_data(pamh);
	return r;
}

/* ---- session ---- */

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const void *item = NULL;
	const struct passwd *pw;
	char buf[sizeof(((struct utmpx *)0)->ut_user) + 1];
	const char *login;
	struct options o;

	parse_options(pamh, flags, argc, argv, &o);
	if (pam_get_item(pamh, PAM_USER, &item) != PAM_SUCCESS || !item || !*(const char *)item ||
	    !(pw = pam_modutil_getpwnam(pamh, item))) {
		pam_syslog(pamh, LOG_CRIT, "open_session - error recovering username");
		return PAM_SESSION_ERR;
	}
	login = tty_login(pamh, buf, sizeof(buf));
	pam_syslog(pamh, LOG_INFO, "session opened for user %s(uid=%u) by %s(uid=%u)",
	           (const char *)item, (unsigned)pw->pw_uid, login ? login : "",
	           (unsigned)getuid());
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const void *item = NULL;
	struct options o;

	parse_options(pamh, flags, argc, argv, &o);
	if (pam_get_item(pamh, PAM_USER, &item) != PAM_SUCCESS || !item || !*(const char *)item) {
		pam_syslog(pamh, LOG_CRIT, "close_session - error recovering username");
		return PAM_SESSION_ERR;
	}
	pam_syslog(pamh, LOG_INFO, "session closed for user %s", (const char *)item);
	return PAM_SUCCESS;
}
