/* passwd: change a user's password; as root also lock, unlock, delete or
 * expire it, set its aging limits, and report status.
 *
 * Installed setgid hardened-shadow (2711, DESIGN §5).  A password change
 * goes through the PAM service "passwd" (pam_hardened_shadow.so writes the
 * user's own shadow file); the kernel's owner check on the user's 02710
 * directory is what limits an ordinary user to their own account.  Root's
 * flag operations replace USER/shadow and the root-owned USER/aging
 * through the library, atomically, under the user's write lock
 * (hs_userdir_lock); no global file is written and no global lock is
 * taken (DESIGN §4).
 *
 * Options, messages, exit codes and the -S format follow shadow-utils'
 * passwd(1) (Debian 12, shadow 4.13); where we differ on purpose, passwd(1)
 * of this package says so. */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <pwd.h>
#include <shadow.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include "ttyconv.h"

#include "account.h"
#include "auditlog.h"
#include "cli.h"
#include "confine.h"
#include "layout.h"
#include "names.h"
#include "pamconv.h"
#include "policy.h"
#include "privs.h"
#include "pwedit.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

/* Exit codes of shadow-utils' passwd(1). */
#define E_SUCCESS  0
#define E_NOPERM   1   /* permission denied */
#define E_USAGE    2   /* invalid combination of options */
#define E_FAILURE  3   /* unexpected failure, nothing done */
#define E_MISSING  4   /* unexpected failure, passwd file missing */
#define E_PWDBUSY  5   /* passwd file busy, try again: the user's lock timed out */
#define E_BAD_ARG  6   /* invalid argument to option */
/* Not in passwd(1), but what shadow-utils' passwd really exits with when
 * PAM refuses or fails the change; scripts see the same status. */
#define E_PAM      10

/* --stdin: the longest password line accepted (bytes, without the newline). */
#define STDIN_PASSWORD_MAX 512

/* -n -x -w -i, in the order of the struct hs_aging fields they set. */
enum { SET_MIN, SET_MAX, SET_WARN, SET_INACT, N_SET };
static const char set_letters[] = "nxwi";

struct options {
	bool all, delete, expire, keep, lock, quiet, status, unlock, force, use_stdin;
	bool set[N_SET], set_aging;     /* set_aging: any of set[] */
	long value[N_SET];
	bool anyflag;   /* any root-only flag that changes the account */
};

static bool amroot;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [LOGIN]",
		     "  -a, --all                     report password status on all accounts\n"
		     "  -d, --delete                  delete the password for the named account\n"
		     "  -e, --expire                  force expire the password for the named account\n"
		     "  -f, --force                   with -u: unlock even if that leaves the\n"
		     "                                account without a password\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -k, --keep-tokens             change password only if expired\n"
		     "  -i, --inactive INACTIVE       set password inactive after expiration\n"
		     "                                to INACTIVE\n"
		     "  -l, --lock                    lock the password of the named account\n"
		     "  -n, --mindays MIN_DAYS        set minimum number of days before password\n"
		     "                                change to MIN_DAYS\n"
		     "  -q, --quiet                   quiet mode\n"
		     "  -r, --repository REPOSITORY   change password in REPOSITORY repository\n"
		     "  -s, --stdin                   read the password(s) from standard input\n"
		     "  -S, --status                  report password status on the named account\n"
		     "  -u, --unlock                  unlock the password of the named account\n"
		     "  -w, --warndays WARN_DAYS      set expiration warning days to WARN_DAYS\n"
		     "  -x, --maxdays MAX_DAYS        set maximum number of days before password\n"
		     "                                change to MAX_DAYS\n",
		     "\n");
}

/* A day count for -n/-x/-w/-i: "-1" (unset) or 0..HS_DAYS_MAX.
 * shadow-utils' message, then the usage, exit 6. */
static long day_count_arg(const char *arg)
{
	unsigned long v;

	if (strcmp(arg, "-1") == 0)
		return HS_UNSET;
	if (hs_parse_ulong(arg, 0, HS_DAYS_MAX, &v) == 0)
		return (long)v;
	hs_warn("invalid numeric argument '%s'", arg);
	usage(E_BAD_ARG);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "all",         no_argument,       NULL, 'a' },
		{ "delete",      no_argument,       NULL, 'd' },
		{ "expire",      no_argument,       NULL, 'e' },
		{ "force",       no_argument,       NULL, 'f' },
		{ "help",        no_argument,       NULL, 'h' },
		{ "inactive",    required_argument, NULL, 'i' },
		{ "keep-tokens", no_argument,       NULL, 'k' },
		{ "lock",        no_argument,       NULL, 'l' },
		{ "mindays",     required_argument, NULL, 'n' },
		{ "quiet",       no_argument,       NULL, 'q' },
		{ "repository",  required_argument, NULL, 'r' },
		{ "root",        required_argument, NULL, 'R' },
		{ "stdin",       no_argument,       NULL, 's' },
		{ "status",      no_argument,       NULL, 'S' },
		{ "unlock",      no_argument,       NULL, 'u' },
		{ "warndays",    required_argument, NULL, 'w' },
		{ "maxdays",     required_argument, NULL, 'x' },
		{ "version",     no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, k;

	while ((c = getopt_long(argc, argv, "aAdefhi:kln:qr:R:sSuw:x:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
		case 'A':  /* the suite's own spelling; shadow-utils -a */
			o->all = true;
			break;
		case 'd':
			o->delete = o->anyflag = true;
			break;
		case 'e':
			o->expire = o->anyflag = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'i':
		case 'n':
		case 'w':
		case 'x':
			k = (int)(strchr(set_letters, c) - set_letters);
			o->value[k] = day_count_arg(optarg);
			o->set[k] = o->set_aging = o->anyflag = true;
			break;
		case 'k':
			o->keep = true;
			break;
		case 'l':
			o->lock = o->anyflag = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'r':
			/* shadow-utils: only the "files" repository; here the
			 * per-user tree plays that part */
			if (strcmp(optarg, "files") != 0)
				hs_die(E_BAD_ARG, "repository %s not supported", optarg);
			break;
		case 'R':
			hs_die(E_BAD_ARG, "option --root is not supported; run passwd inside "
			       "the root instead (chroot %s passwd)", optarg);
		case 's':
			o->use_stdin = true;
			break;
		case 'S':
			o->status = true;
			break;
		case 'u':
			o->unlock = o->anyflag = true;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_BAD_ARG);
		}
	}
}

/* shadow-utils' status letters. */
static const char *hash_status(const char *hash)
{
	if (hash[0] == '*' || hash[0] == '!')
		return "L";
	if (hash[0] == '\0')
		return "NP";
	return "P";
}

/* A user without a directory in the tree (not converted, or no tree at
 * all): what shadow-utils prints for such an account, from the shadow
 * database if it answers, else from the passwd field. */
static int print_status_unconverted(const struct passwd *pw)
{
	char date[32], shown[HS_NAME_MAX * 4 + 8];
	/* the _r call into a buffer of ours, wiped after use: glibc's static
	 * getspnam buffer would keep the hash until the process ends */
	char spbuf[HS_USERFILE_MAX + HS_NAME_MAX + 64];
	struct spwd spw, *sp = NULL;

	if (getspnam_r(pw->pw_name, &spw, spbuf, sizeof(spbuf), &sp) == 0 && sp) {
		printf("%s %s %s %ld %ld %ld %ld\n", hs_printable(pw->pw_name, shown, sizeof(shown)),
		       hash_status(sp->sp_pwdp),
		       hs_policy_format_day_iso(sp->sp_lstchg, date, sizeof(date)),
		       sp->sp_min, sp->sp_max, sp->sp_warn, sp->sp_inact);
		hs_wipe(spbuf, sizeof(spbuf));
		return E_SUCCESS;
	}
	hs_wipe(spbuf, sizeof(spbuf));
	if (!pw->pw_passwd) {
		hs_warn("malformed password data obtained for user %s", pw->pw_name);
		return E_FAILURE;
	}
	printf("%s %s\n", hs_printable(pw->pw_name, shown, sizeof(shown)), hash_status(pw->pw_passwd));
	return E_SUCCESS;
}

/* One "-S" line, in shadow-utils' format:
 *   NAME STATUS LASTCHANGE MIN MAX WARN INACT
 * with LASTCHANGE as YYYY-MM-DD (or "never") and unset numbers as -1.
 * treefd may be a negative error (no tree): every account is then shown
 * as shadow-utils would. */
static int print_status(int treefd, const struct passwd *pw)
{
	char buf[HS_USERFILE_MAX + 2];
	char path[HS_PATHBUF_USER];
	char date[32], shown[HS_NAME_MAX * 4 + 8];
	_cleanup_close_ int udirfd = -1;
	struct hs_shadow sh;
	struct hs_aging ag;
	const char *status;
	int r;

	udirfd = treefd < 0 ? treefd : hs_userdir_open(treefd, pw->pw_name, pw->pw_uid, NULL);
	if (udirfd == -ENOENT)
		return print_status_unconverted(pw);
	if (udirfd < 0) {
		/* the tree's path (no user) when it was the tree that failed */
		hs_warn("cannot open %s: %s", hs_userdir_path(path, sizeof(path),
			treefd < 0 ? NULL : pw->pw_name, NULL), hs_strerror(udirfd));
		return E_FAILURE;
	}
	r = hs_userdir_read_shadow(udirfd, pw->pw_uid, buf, sizeof(buf), &sh);
	if (r < 0) {
		hs_warn("cannot read %s: %s",
			hs_userdir_path(path, sizeof(path), pw->pw_name, HS_FILE_SHADOW),
			hs_strerror(r));
		return E_FAILURE;
	}
	status = hash_status(sh.hash);
	hs_wipe(buf, sizeof(buf));
	r = hs_userdir_read_aging(udirfd, &ag);
	if (r < 0) {
		hs_warn("cannot read %s: %s",
			hs_userdir_path(path, sizeof(path), pw->pw_name, HS_FILE_AGING),
			hs_strerror(r));
		return E_FAILURE;
	}
	printf("%s %s %s %ld %ld %ld %ld\n", hs_printable(pw->pw_name, shown, sizeof(shown)), status,
	       hs_policy_format_day_iso(sh.lstchg, date, sizeof(date)),
	       ag.min, ag.max, ag.warn, ag.inact);
	return E_SUCCESS;
}

static int finish_output(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		hs_warn("cannot write to standard output: %s", hs_strerror(-errno));
		return E_FAILURE;
	}
	return status;
}

/* -a -S: every account of the passwd database, in its order. */
static int print_all_status(void)
{
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	struct passwd *pw;
	int status = E_SUCCESS;

	setpwent();
	while ((errno = 0, pw = getpwent()) != NULL) {
		if (print_status(treefd, pw) != E_SUCCESS)
			status = E_FAILURE;
	}
	if (errno != 0 && errno != ENOENT) {
		hs_warn("cannot read the passwd database: %s", hs_strerror(-errno));
		status = E_FAILURE;
	}
	endpwent();
	return finish_output(status);
}

/* ---- password change through PAM ---- */

/* What --stdin read: the new password, and the current one when the
 * caller has to prove it (two lines: current, then new). */
struct stdin_secrets {
	char current[STDIN_PASSWORD_MAX + 1];
	char new_password[STDIN_PASSWORD_MAX + 1];
	bool have_current;
};

static struct stdin_secrets secrets;

static void wipe_secrets(void)
{
	hs_wipe(&secrets, sizeof(secrets));
}

/* Read one line of at most STDIN_PASSWORD_MAX bytes from fd 0, one byte
 * at a time so nothing past the line is consumed.  Returns 1 for a line,
 * 0 at EOF before any byte, negative on error (message printed). */
static int read_stdin_line(char *out)
{
	size_t len = 0;

	for (;;) {
		char ch;
		ssize_t n = read(STDIN_FILENO, &ch, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			hs_warn("cannot read the password from standard input: %s",
				hs_strerror(-errno));
			return -EIO;
		}
		if (n == 0) {
			/* a last line without its newline still counts */
			out[len] = '\0';
			return len > 0 ? 1 : 0;
		}
		if (ch == '\n') {
			out[len] = '\0';
			return 1;
		}
		if (ch == '\0') {
			hs_warn("the password on standard input contains a NUL byte");
			return -EINVAL;
		}
		if (len == STDIN_PASSWORD_MAX) {
			hs_warn("the password on standard input is longer than %d bytes",
				STDIN_PASSWORD_MAX);
			return -E2BIG;
		}
		out[len++] = ch;
	}
}

/* Root (without -k) is never asked for the current password: one line,
 * the new password.  Anyone else gives the current password first and the
 * new one on the second line; a single line is the new password (for an
 * account that has none to prove). */
static int read_stdin_secrets(bool may_need_current)
{
	int r;

	r = read_stdin_line(secrets.current);
	if (r == 0) {
		hs_warn("no password on standard input");
		return -ENODATA;
	}
	if (r > 0 && may_need_current)
		r = read_stdin_line(secrets.new_password);      /* 0: there is one line */
	if (r < 0)
		return r;
	secrets.have_current = may_need_current && r == 1;
	if (!secrets.have_current) {
		/* one line: the new password */
		memcpy(secrets.new_password, secrets.current, sizeof(secrets.current));
		hs_wipe(secrets.current, sizeof(secrets.current));
	}
	return 0;
}

/* The --stdin conversation's answers.  Prompts are told apart by pam_unix's
 * wording ("Current password: "), which pam_hardened_shadow.so shares;
 * passwd does not call setlocale() in this mode, so the modules speak
 * English. */
static const char *stdin_answer(void *ctx, const char *prompt)
{
	struct stdin_secrets *s = ctx;

	if (!strcasestr(prompt, "current"))
		return s->new_password;
	if (!s->have_current) {
		hs_warn("the current password is needed: give it on the first line of standard "
			"input, the new one on the second");
		return NULL;
	}
	return s->current;
}

/* The kernel holds passwd's -S and root's flags to their job (Landlock):
 * write only beneath the directory of user (NULL: nothing).  The PAM
 * change is not confined: its stack may run any program (pam_exec). */
static void confine(const char *user)
{
	char udir[HS_PATHBUF_USER];
	const struct hs_confine_rule rules[] = {
		{ user ? hs_userdir_confine_path(udir, sizeof udir, user) : NULL, HS_CONFINE_WRITE },
	};

	hs_confine_or_die(rules, sizeof rules / sizeof rules[0], E_FAILURE);
	/* a user's -S sends no event */
	hs_privs_audit_drop();
}

static int change_password(const char *user, const struct options *o)
{
	struct pam_conv conv = { hs_ttyconv, NULL };
	struct hs_pam_script script = { .hidden = stdin_answer, .ctx = &secrets };
	pam_handle_t *pamh = NULL;
	int flags = 0, r;

	if (o->use_stdin) {
		/* root answers no "current password" prompt unless -k asks
		 * the modules to treat it as a user's expired change */
		if (read_stdin_secrets(!amroot || o->keep) < 0) {
			wipe_secrets();
			return E_FAILURE;
		}
		conv.appdata_ptr = &script;
	} else {
		/* prompts in the user's language (the environment was
		 * reduced to a checked allow-list by hs_privs_init) */
		setlocale(LC_ALL, "");
	}
	if (o->quiet)
		flags |= PAM_SILENT;
	if (o->keep)
		flags |= PAM_CHANGE_EXPIRED_AUTHTOK;

	r = pam_start("passwd", user, &conv, &pamh);
	if (r != PAM_SUCCESS) {
		wipe_secrets();
		fprintf(stderr, "passwd: pam_start() failed, error %d\n", r);
		return E_PAM;
	}
	/* libpam sends the user's AUDIT_USER_CHAUTHTOK itself, at the end
	 * of pam_chauthtok, on a socket of its own: the capability has to be
	 * effective for the whole call (docs/decisions.md, "Audit"). */
	(void)hs_privs_audit_write(true);
	r = pam_chauthtok(pamh, flags);
	hs_privs_audit_drop();
	wipe_secrets();
	if (r != PAM_SUCCESS) {
		fprintf(stderr, "passwd: %s\n", pam_strerror(pamh, r));
		fputs("passwd: password unchanged\n", stderr);
		pam_end(pamh, r);
		return E_PAM;
	}
	pam_end(pamh, PAM_SUCCESS);
	/* changed: a pipe nobody reads must not make it exit 141 */
	signal(SIGPIPE, SIG_IGN);
	if (!o->quiet)
		fputs("passwd: password updated successfully\n", stderr);
	return E_SUCCESS;
}

/* ---- root: lock, unlock, delete, expire, aging ---- */

/* shadow-utils' order: -d empties, -u removes one '!', -l adds one (only
 * when not already locked).  Returns 0, or E_FAILURE with the message
 * printed when unlocking would leave an empty password without -f. */
static int new_hash(const char *old, const struct options *o, char *out, size_t size)
{
	const char *cp = old;

	if (o->delete)
		cp = "";
	if (o->unlock && cp[0] == '!') {
		if (cp[1] == '\0' && !o->force) {
			fprintf(stderr,
				"%s: unlocking the password would result in a passwordless "
				"account.\n"
				"You should set a password with usermod -p to unlock the password "
				"of this account.\n", hs_cli_prog());
			return E_FAILURE;
		}
		cp++;
	}
	if (snprintf(out, size, "%s%s", o->lock && cp[0] != '!' ? "!" : "", cp) >= (int)size) {
		hs_warn("the locked password would be longer than %d bytes", HS_HASH_MAX);
		return E_FAILURE;
	}
	return E_SUCCESS;
}

/* Root's account changes, as shadow-utils' passwd sends them since it
 * audits them (Debian's 4.13 sends none): lock and unlock as account
 * events, a deleted password, a forced change, the aging limits. */
static void audit_root_update(const struct passwd *pw, const struct options *o,
			      const struct hs_aging *ag, bool ok)
{
	char aging_op[160];

	if (o->lock)
		hs_auditlog_acct(AUDIT_ACCT_LOCK, HS_AUDIT_OP_PW_LOCKED, NULL, pw->pw_uid, ok);
	if (o->unlock)
		hs_auditlog_acct(AUDIT_ACCT_UNLOCK, HS_AUDIT_OP_PW_UNLOCKED, NULL, pw->pw_uid, ok);
	if (o->delete)
		hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, HS_AUDIT_OP_PW_DELETED, NULL, pw->pw_uid, ok);
	if (o->expire)
		hs_auditlog_acct(AUDIT_USER_MGMT, HS_AUDIT_OP_PW_EXPIRED, NULL, pw->pw_uid, ok);
	if (o->set_aging) {
		snprintf(aging_op, sizeof aging_op, "%s min=%ld max=%ld warn=%ld inact=%ld",
			 HS_AUDIT_OP_PW_AGING, ag->min, ag->max, ag->warn, ag->inact);
		hs_auditlog_acct(AUDIT_USER_MGMT, aging_op, NULL, pw->pw_uid, ok);
	}
}

/* Root's flags on pw's account; the exit status (hs_die for most failures). */
static int root_update(const struct passwd *pw, const char *caller, const struct options *o)
{
	char buf[HS_USERFILE_MAX + 2];
	char hash[HS_HASH_MAX + 2];
	struct hs_err err = HS_ERR_INIT;
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int treefd = -1;
	_cleanup_close_ int udirfd = -1;
	bool touch_shadow = o->delete || o->expire || o->lock || o->unlock;
	const char *name = pw->pw_name, *failed;
	struct hs_shadow sh = { .hash = NULL, .lstchg = HS_UNSET };
	struct hs_aging ag = { .min = HS_UNSET };
	gid_t tree_gid, auth_gid;
	sigset_t saved;
	int r, status;

	r = hs_userdir_layout_gids(&tree_gid, &auth_gid);
	if (r < 0)
		hs_die(E_FAILURE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
	treefd = hs_userdir_open_tree();
	udirfd = treefd < 0 ? treefd : hs_userdir_open(treefd, name, pw->pw_uid, NULL);
	if (udirfd < 0)
		hs_die(udirfd == -ENOENT ? E_MISSING : E_FAILURE, "cannot open %s: %s",
		       hs_userdir_path(path, sizeof(path), treefd < 0 ? NULL : name, NULL),
		       hs_strerror(udirfd));
	/* Held from the first read to the last rename (released when udirfd
	 * is closed): a password change by the user or another root tool
	 * cannot land between our read and our write and be lost. */
	r = hs_userdir_lock_err(treefd, name, &udirfd, HS_LOCK_TIMEOUT_MS, &err);
	if (r < 0) {
		hs_report(&err);
		return r == -HS_E_TIMEOUT ? E_PWDBUSY : E_FAILURE;
	}

	/* Everything is read and checked before anything is written:
	 * a file the user planted (symlink, hard link, FIFO) stops us here. */
	if (touch_shadow) {
		r = hs_userdir_read_shadow(udirfd, pw->pw_uid, buf, sizeof(buf), &sh);
		if (r < 0)
			hs_die(E_FAILURE, "cannot read %s: %s",
			       hs_userdir_path(path, sizeof(path), name, HS_FILE_SHADOW),
			       hs_strerror(r));
		status = new_hash(sh.hash, o, hash, sizeof(hash));
		hs_wipe(buf, sizeof(buf));
		if (status != E_SUCCESS) {
			hs_wipe(hash, sizeof(hash));
			return status;
		}
		sh.hash = hash;
		if (o->expire)
			sh.lstchg = 0;  /* force a change at the next login */
	}
	if (o->set_aging) {
		r = hs_userdir_read_aging(udirfd, &ag);
		if (r < 0) {
			hs_warn("cannot read %s: %s (chage rewrites it)",
				hs_userdir_path(path, sizeof(path), name, HS_FILE_AGING),
				hs_strerror(r));
			hs_wipe(hash, sizeof(hash));
			return E_FAILURE;
		}
		long *fields[N_SET] = { &ag.min, &ag.max, &ag.warn, &ag.inact };

		for (int k = 0; k < N_SET; k++)
			if (o->set[k])
				*fields[k] = o->value[k];
	}

	hs_privs_block_signals(&saved);
	r = touch_shadow ? hs_userdir_write_shadow(udirfd, pw->pw_uid, auth_gid, &sh) : 0;
	failed = HS_FILE_SHADOW;
	if (r == 0 && o->set_aging) {
		r = hs_userdir_write_aging(udirfd, auth_gid, &ag);
		failed = HS_FILE_AGING;
	}
	hs_privs_restore_signals(&saved);
	hs_wipe(hash, sizeof(hash));
	audit_root_update(pw, o, &ag, r == 0);
	if (r < 0) {
		hs_userdir_path(path, sizeof(path), name, failed);
		syslog(LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
		hs_die(E_FAILURE, "cannot write %s: %s%s", path, hs_strerror(r),
		       touch_shadow && strcmp(failed, HS_FILE_AGING) == 0 ?
		       " (the password itself was changed)" : "");
	}
	syslog(LOG_INFO, "password for '%s' changed by '%s'", name, caller);
	/* The change is on disk: a status line that cannot be written
	 * (stdout closed, a full disk, a pipe nobody reads: no SIGPIPE
	 * then) is worth a warning, not exit 3 or 141, which tell a script
	 * that nothing was done. */
	signal(SIGPIPE, SIG_IGN);
	if (!o->quiet)
		printf("%s: password changed.\n", hs_cli_prog());
	if (fflush(stdout) != 0 || ferror(stdout))
		hs_warn("cannot write to standard output: %s (the change was made)",
			hs_strerror(-errno));
	return E_SUCCESS;
}

int main(int argc, char **argv)
{
	struct options o = { .all = false };
	_cleanup_free_ char *mebuf = NULL;
	char why[128];
	_cleanup_free_ char *pwbuf = NULL;
	struct passwd me, pw;
	const char *name;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "passwd"));
	amroot = hs_privs_caller_is_root();
	parse_options(argc, argv, &o);
	openlog("passwd", LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();

	/* Who the caller is comes from the real uid, never from $USER or
	 * $LOGNAME (hs_privs_init dropped them anyway). */
	r = hs_account_caller(&me, &mebuf, why, sizeof why);
	if (r < 0) {
		hs_warn("%s", why);
		return E_NOPERM;
	}
	name = optind < argc ? argv[optind] : me.pw_name;
	if (argc > optind + 1)
		usage(E_USAGE);

	/* -a: only with -S, no other flag, no name, root only. */
	if (o.all) {
		if (o.anyflag || !o.status || optind < argc || o.use_stdin || o.keep)
			usage(E_USAGE);
		if (!amroot)
			hs_die(E_NOPERM, "Permission denied.");
		confine(NULL);
		return print_all_status();
	}
	/* The account-changing flags need a name; -S and -k stand alone. */
	if (o.anyflag && optind >= argc)
		usage(E_USAGE);
	if ((o.status && o.keep) || (o.anyflag && (o.status || o.keep)))
		usage(E_USAGE);
	/* our additions: --stdin is for a password change, -f for -u */
	if (o.use_stdin && (o.status || o.anyflag))
		usage(E_USAGE);
	if (o.force && !o.unlock)
		usage(E_USAGE);
	if (o.anyflag && !amroot)
		hs_die(E_NOPERM, "Permission denied.");

	r = hs_account_getpwnam(name, &pw, &pwbuf);
	if (r == -ENOENT)
		hs_die(E_NOPERM, "user '%s' does not exist", name);
	if (r < 0)
		hs_die(E_FAILURE, "cannot look up user '%s': %s", name, hs_strerror(r));
	if (!amroot && pw.pw_uid != getuid()) {
		hs_warn("You may not view or modify password information for %s.", name);
		syslog(LOG_WARNING, "%s: can't view or modify password information for %s",
		       hs_cli_prog(), name);
		return E_NOPERM;
	}

	if (o.status) {
		_cleanup_close_ int treefd = -1;

		confine(NULL);
		treefd = hs_userdir_open_tree();
		return finish_output(print_status(treefd, &pw));
	}
	if (!o.anyflag) {
		/* the PAM module logs the change itself */
		return change_password(pw.pw_name, &o);
	}
	confine(pw.pw_name);
	return root_update(&pw, me.pw_name, &o);
}
