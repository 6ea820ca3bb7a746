/* chage: show or change a user's password aging information.
 *
 * Installed setgid hardened-shadow (2711, DESIGN §5).  Root may change
 * anything: the aging limits go to the root-owned USER/aging file, the
 * last-change day (-d) to USER/shadow, each replaced atomically under the
 * user's write lock (hs_userdir_lock); no global file is written and no
 * global lock taken.  Everyone else may only list
 * their own values (-l): the setgid group lets chage traverse the tree and
 * the kernel's owner check on the 02710 user directory does the rest.
 *
 * Options, messages, exit codes and the -l format follow shadow-utils'
 * chage(1); where we differ on purpose, chage(1) of this package says so. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "auditlog.h"
#include "cli.h"
#include "confine.h"
#include "layout.h"
#include "names.h"
#include "policy.h"
#include "privs.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

/* Exit codes of shadow-utils' chage(1). */
#define E_SUCCESS          0
#define E_NOPERM           1   /* permission denied, and every failure */
#define E_USAGE            2   /* invalid command syntax */
#define E_SHADOW_NOTFOUND  15  /* no /etc/hardened-shadow */

/* An invalid date exits 1, like every other usage error here
 * (shadow-utils exits 2). */
#define E_BAD_DATE         E_NOPERM

#define SECONDS_PER_DAY    86400L
/* shadow-utils prints "never" for a password that expires after this many
 * days (its check is maxdays >= 10000). */
#define MAXDAYS_NEVER      10000L
/* Longest answer accepted at an interactive prompt. */
#define ANSWER_MAX         200
/* A file opened just before another writer renames a new one over it has
 * a link count of 0 when we fstat it: the reader sees -HS_E_NLINK for a
 * perfectly good file.  Reading again gets the new file; a real hard link
 * (count >= 2) keeps failing and is refused after these attempts. */
#define NLINK_RETRIES      50
#define NLINK_RETRY_NSEC   1000000L

/* The options that set a value, in the order of the fields they set:
 * struct hs_aging's (-m -M -W -I -E), then the last change day (-d). */
enum { SET_MIN, SET_MAX, SET_WARN, SET_INACT, SET_EXPIRE, SET_LSTCHG, N_SET };
static const char set_letters[] = "mMWIEd";

struct options {
	bool list, iso;
	bool set[N_SET];        /* the option was given */
	long value[N_SET];
};

static _Noreturn void usage(int status)
{
	FILE *f = status == E_SUCCESS ? stdout : stderr;

	fprintf(f,
		"Usage: %s [options] LOGIN\n"
		"\n"
		"Options:\n"
		"  -d, --lastday LAST_DAY        set date of last password change to LAST_DAY\n"
		"  -E, --expiredate EXPIRE_DATE  set account expiration date to EXPIRE_DATE\n"
		"  -h, --help                    display this help message and exit\n"
		"  -i, --iso8601                 use YYYY-MM-DD when printing dates\n"
		"  -I, --inactive INACTIVE       set password inactive after expiration\n"
		"                                to INACTIVE\n"
		"  -l, --list                    show account aging information\n"
		"  -m, --mindays MIN_DAYS        set minimum number of days before password\n"
		"                                change to MIN_DAYS\n"
		"  -M, --maxdays MAX_DAYS        set maximum number of days before password\n"
		"                                change to MAX_DAYS\n"
		"  -W, --warndays WARN_DAYS      set expiration warning days to WARN_DAYS\n"
		"  -V, --version                 display the version and exit\n"
		"\n",
		hs_cli_prog());
	exit(status);
}

/* A day count: "-1" (unset) or decimal digits up to HS_DAYS_MAX.  Leading
 * zeros are accepted, as strtol does for shadow-utils; signs, spaces and
 * other bases are not. */
static int parse_days(const char *s, long *out)
{
	unsigned long v;
	int r;

	if (strcmp(s, "-1") == 0) {
		*out = HS_UNSET;
		return 0;
	}
	while (s[0] == '0' && s[1] != '\0')
		s++;
	r = hs_parse_ulong(s, 0, HS_DAYS_MAX, &v);
	if (r < 0)
		return r;
	*out = (long)v;
	return 0;
}

static long days_arg(const char *arg)
{
	long v;

	if (parse_days(arg, &v) < 0) {
		hs_warn("invalid numeric argument '%s'", arg);
		usage(E_USAGE);
	}
	return v;
}

static long date_arg(const char *arg)
{
	long v;

	if (hs_policy_parse_day(arg, &v) < 0)
		hs_die(E_BAD_DATE, "invalid date '%s' (use YYYY-MM-DD, a day number, or -1)", arg);
	return v;
}

static bool any_change_option(const struct options *o)
{
	for (int k = 0; k < N_SET; k++)
		if (o->set[k])
			return true;
	return false;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "lastday", required_argument, NULL, 'd' },
		{ "expiredate", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "iso8601", no_argument, NULL, 'i' },
		{ "inactive", required_argument, NULL, 'I' },
		{ "list", no_argument, NULL, 'l' },
		{ "mindays", required_argument, NULL, 'm' },
		{ "maxdays", required_argument, NULL, 'M' },
		{ "root", required_argument, NULL, 'R' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "warndays", required_argument, NULL, 'W' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, k;

	while ((c = getopt_long(argc, argv, "d:E:hiI:lm:M:R:P:W:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
		case 'E':
		case 'I':
		case 'm':
		case 'M':
		case 'W':
			k = (int)(strchr(set_letters, c) - set_letters);
			o->set[k] = true;
			o->value[k] = c == 'd' || c == 'E' ? date_arg(optarg) : days_arg(optarg);
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'i':
			o->iso = true;
			break;
		case 'l':
			o->list = true;
			break;
		case 'R':
		case 'P':
			/* The tree of another root has its own groups and NSS
			 * configuration; running chage inside it is the only way
			 * to get them right. */
			hs_die(E_USAGE, "option --%s is not supported; run chage inside that root "
			       "instead (chroot %s chage ...)", c == 'R' ? "root" : "prefix", optarg);
		case 'V':
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (argc != optind + 1)
		usage(E_USAGE);
	if (o->list && any_change_option(o)) {
		hs_warn("do not include \"l\" with other flags");
		usage(E_USAGE);
	}
}

/* A day number as shadow-utils prints it: "Jan 02, 2025" (C locale month
 * names, like its untranslated output) or "2025-01-02" with -i. */
static void print_day(long day, bool iso)
{
	char buf[64];
	time_t t;
	struct tm tm;

	if (day < 0) {
		puts("never");
		return;
	}
	t = (time_t)day * SECONDS_PER_DAY;
	if (!gmtime_r(&t, &tm) ||
	    strftime(buf, sizeof(buf), iso ? "%Y-%m-%d" : "%b %d, %Y", &tm) == 0) {
		puts("future");
		return;
	}
	puts(buf);
}

/* shadow-utils' list format, byte for byte (tabs included). */
static void list_fields(long lstchg, const struct hs_aging *a, bool iso)
{
	fputs("Last password change\t\t\t\t\t: ", stdout);
	if (lstchg == 0)
		puts("password must be changed");
	else
		print_day(lstchg, iso);

	fputs("Password expires\t\t\t\t\t: ", stdout);
	if (lstchg == 0)
		puts("password must be changed");
	else if (lstchg < 0 || a->max < 0 || a->max >= MAXDAYS_NEVER)
		puts("never");
	else
		print_day(lstchg + a->max, iso);

	fputs("Password inactive\t\t\t\t\t: ", stdout);
	if (lstchg == 0)
		puts("password must be changed");
	else if (lstchg < 0 || a->inact < 0 || a->max < 0 || a->max >= MAXDAYS_NEVER)
		puts("never");
	else
		print_day(lstchg + a->max + a->inact, iso);

	fputs("Account expires\t\t\t\t\t\t: ", stdout);
	print_day(a->expire, iso);

	printf("Minimum number of days between password change\t\t: %ld\n", a->min);
	printf("Maximum number of days between password change\t\t: %ld\n", a->max);
	printf("Number of days of warning before password expires\t: %ld\n", a->warn);
}

/* One interactive prompt, as shadow-utils' change_field: "\tPROMPT [DEFAULT]: ".
 * Returns the trimmed answer in answer (the default when the line is empty
 * or stdin is at its end). */
static void prompt_field(const char *prompt, const char *def, char *answer, size_t size)
{
	char line[ANSWER_MAX + 2];
	char *start, *end;
	size_t len;

	snprintf(answer, size, "%s", def);
	printf("\t%s [%s]: ", prompt, def);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return;
	len = strlen(line);
	if (len == 0 || line[len - 1] != '\n') {
		if (feof(stdin) && len <= ANSWER_MAX)
			line[len] = '\0';  /* last line without newline */
		else
			hs_die(E_NOPERM, "error changing fields: answer longer than %d bytes",
			       ANSWER_MAX);
	} else {
		line[len - 1] = '\0';
	}
	if (!line[0])
		return;
	start = line;
	while (*start && isspace((unsigned char)*start))
		start++;
	end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		*--end = '\0';
	snprintf(answer, size, "%s", start);
}

/* A day count, or a date (shown as YYYY-MM-DD, unset as -1). */
static long prompt_value(const char *prompt, long current, bool date)
{
	char def[32], answer[ANSWER_MAX + 1];
	long v;

	if (date && current >= 0)
		hs_policy_format_day_iso(current, def, sizeof(def));
	else
		snprintf(def, sizeof(def), "%ld", current);
	prompt_field(prompt, def, answer, sizeof(answer));
	/* a date of only blanks: Debian's chage refuses it here */
	if (date ? !answer[0] || hs_policy_parse_day(answer, &v) < 0 : parse_days(answer, &v) < 0)
		hs_die(E_NOPERM, "error changing fields: invalid %s '%s'", date ? "date" : "number",
		       answer);
	return v;
}

/* shadow-utils' interactive mode: every field, the current value as the
 * default, in its order. */
static void ask_fields(const char *user, long *lstchg, struct hs_aging *a)
{
	char shown[HS_NAME_MAX * 4 + 8];

	printf("Changing the aging information for %s\n", hs_printable(user, shown, sizeof(shown)));
	puts("Enter the new value, or press ENTER for the default");
	puts("");
	a->min = prompt_value("Minimum Password Age", a->min, false);
	a->max = prompt_value("Maximum Password Age", a->max, false);
	*lstchg = prompt_value("Last Password Change (YYYY-MM-DD)", *lstchg, true);
	a->warn = prompt_value("Password Expiration Warning", a->warn, false);
	a->inact = prompt_value("Password Inactive", a->inact, false);
	a->expire = prompt_value("Account Expiration Date (YYYY-MM-DD)", a->expire, true);
}

/* After a read that returned r: true, after a short pause, when the file
 * was caught mid-rename (-HS_E_NLINK) and tries (counted here) remain. */
static bool retry_nlink(int r, int *tries)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = NLINK_RETRY_NSEC };

	if (r != -HS_E_NLINK || (*tries)++ == NLINK_RETRIES)
		return false;
	nanosleep(&ts, NULL);
	return true;
}

/* Read the user's shadow file into buf.  Dies naming the file. */
static void read_shadow(int udirfd, const struct passwd *pw, char *buf, size_t size,
			struct hs_shadow *sh)
{
	char path[HS_PATHBUF_USER];
	int r, tries = 0;

	do
		r = hs_userdir_read_shadow(udirfd, pw->pw_uid, buf, size, sh);
	while (retry_nlink(r, &tries));
	if (r < 0)
		hs_die(E_NOPERM, "cannot read %s: %s",
		       hs_userdir_path(path, sizeof(path), pw->pw_name, HS_FILE_SHADOW),
		       hs_strerror(r));
}

/* aging, fail closed (DESIGN §2): a file that cannot be trusted counts as
 * an expired account, and that is what we show and what root's rewrite
 * keeps unless -E says otherwise -- a user who deleted their aging file
 * must not get rid of an expiry date that way.  Out of descriptors or
 * memory nothing was learnt of the file: that is no expiry to show or to
 * write, so it dies as for shadow. */
static void read_aging(int udirfd, const char *user, struct hs_aging *a)
{
	char path[HS_PATHBUF_USER];
	int r, tries = 0;

	do
		r = hs_userdir_aging_or_expired(udirfd, a);
	while (retry_nlink(r, &tries));
	hs_userdir_path(path, sizeof(path), user, HS_FILE_AGING);
	if (hs_err_transient(r))
		hs_die(E_NOPERM, "cannot read %s: %s", path, hs_strerror(r));
	if (r < 0)
		hs_warn("cannot read %s: %s; the account counts as expired until root "
			"rewrites it", path, hs_strerror(r));
}

/* Replace USER/shadow with a new LSTCHG.  Called with the user's lock
 * held: the hash is read again here, so a password change made before
 * the lock was taken is kept, and none can land before our rename. */
static int write_lstchg(int udirfd, const struct passwd *pw, gid_t auth_gid, long lstchg)
{
	char buf[HS_USERFILE_MAX + 2];
	struct hs_shadow sh;
	int r;

	read_shadow(udirfd, pw, buf, sizeof(buf), &sh);
	if (sh.lstchg == lstchg) {
		r = 0;
	} else {
		sh.lstchg = lstchg;
		r = hs_userdir_write_shadow(udirfd, pw->pw_uid, auth_gid, &sh);
	}
	hs_wipe(buf, sizeof(buf));
	return r;
}

/* Take the user's write lock; dies naming the directory on failure. */
static void lock_user(int treefd, int *udirfd, const char *user)
{
	struct hs_err err = HS_ERR_INIT;

	if (hs_userdir_lock_err(treefd, user, udirfd, HS_LOCK_TIMEOUT_MS, &err) < 0)
		hs_report_die(E_NOPERM, &err);
}

/* shadow-utils' audit events of a change, one per option, in its order
 * (AUDIT_USER_CHAUTHTOK in 4.13); one for the interactive mode's answers. */
static void audit_changes(const struct options *o, bool interactive, uid_t uid)
{
	const struct {
		bool when;
		const char *op;
	} fields[] = {
		{ interactive, HS_AUDIT_OP_AGE_ALL },
		{ !interactive && o->set[SET_MAX], HS_AUDIT_OP_AGE_MAX },
		{ !interactive && o->set[SET_MIN], HS_AUDIT_OP_AGE_MIN },
		{ !interactive && o->set[SET_LSTCHG], HS_AUDIT_OP_AGE_LAST },
		{ !interactive && o->set[SET_WARN], HS_AUDIT_OP_AGE_WARN },
		{ !interactive && o->set[SET_INACT], HS_AUDIT_OP_AGE_INACTIVE },
		{ !interactive && o->set[SET_EXPIRE], HS_AUDIT_OP_AGE_EXPIRE },
	};

	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (fields[i].when)
			hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, fields[i].op, NULL, uid, true);
}

int main(int argc, char **argv)
{
	char path[HS_PATHBUF_USER];
	char shadowbuf[HS_USERFILE_MAX + 2];
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int treefd = -1;
	_cleanup_close_ int udirfd = -1;
	struct options o = { .list = false };
	struct hs_aging aging;
	struct hs_shadow sh;
	struct passwd pw;
	gid_t tree_gid, auth_gid;
	const char *user;
	sigset_t saved;
	long lstchg = HS_UNSET;
	bool root, interactive;
	int r, r2;

	hs_cli_set_prog(hs_privs_init(argc, argv, "chage"));
	parse_options(argc, argv, &o);
	/* A user's chage -l sends one event, with the file's CAP_AUDIT_WRITE
	 * (hs_privs_init keeps it permitted only, the send raises it). */
	hs_auditlog_open();
	user = argv[optind];
	root = hs_privs_caller_is_root();
	interactive = !o.list && !any_change_option(&o);

	if (!root && !o.list)
		hs_die(E_NOPERM, "Permission denied.");

	r = hs_account_getpwnam(user, &pw, &pwbuf);
	if (r == -ENOENT)
		hs_die(E_NOPERM, "user '%s' does not exist in %s", user, HS_ETC_PASSWD);
	if (r < 0)
		hs_die(E_NOPERM, "cannot look up user '%s': %s", user, hs_strerror(r));
	if (!root && pw.pw_uid != getuid())
		hs_die(E_NOPERM, "Permission denied.");

	/* From here the kernel holds chage to its job (Landlock): root
	 * writes the account's directory in the tree, a user writes
	 * nothing. */
	{
		const struct hs_confine_rule rules[] = {
			{ root ? hs_userdir_confine_path(path, sizeof path, pw.pw_name) : NULL,
			  HS_CONFINE_WRITE },
		};

		hs_confine_or_die(rules, sizeof rules / sizeof rules[0], E_NOPERM);
	}
	treefd = hs_userdir_open_tree();
	if (treefd == -ENOENT)
		hs_die(E_SHADOW_NOTFOUND, "cannot open %s: %s (run pwconv first)", HS_TREE_DIR,
		       hs_strerror(treefd));
	if (treefd < 0)
		hs_die(E_NOPERM, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
	/* The directory must belong to the account's uid: the same check the
	 * kernel makes for a non-root caller, made explicitly for root. */
	udirfd = hs_userdir_open(treefd, pw.pw_name, pw.pw_uid, NULL);
	if (udirfd < 0)
		hs_die(E_NOPERM, "cannot open %s: %s",
		       hs_userdir_path(path, sizeof(path), pw.pw_name, NULL), hs_strerror(udirfd));

	/* Root's option-driven change is a read-modify-write of aging: lock
	 * before reading it.  The interactive one locks after the prompts
	 * (never hold the lock while a person types) and then writes the
	 * values they answered. */
	if (!o.list && !interactive)
		lock_user(treefd, &udirfd, pw.pw_name);
	read_aging(udirfd, pw.pw_name, &aging);

	if (o.list) {
		read_shadow(udirfd, &pw, shadowbuf, sizeof(shadowbuf), &sh);
		lstchg = sh.lstchg;
		hs_wipe(shadowbuf, sizeof(shadowbuf));
		/* Everything is read: give up the setgid group before output. */
		if (setresgid(getgid(), getgid(), getgid()) != 0)
			hs_die(E_NOPERM, "failed to drop privileges (%s)", hs_strerror(-errno));
		hs_auditlog_acct(AUDIT_USER_CHAUTHTOK, HS_AUDIT_OP_AGE_DISPLAY, NULL, pw.pw_uid,
				 true);
		hs_privs_audit_drop();
		list_fields(lstchg, &aging, o.iso);
		if (fflush(stdout) != 0 || ferror(stdout))
			hs_die(E_NOPERM, "cannot write to standard output: %s", hs_strerror(-errno));
		return E_SUCCESS;
	}

	/* root from here on */
	r = hs_userdir_layout_gids(&tree_gid, &auth_gid);
	if (r < 0)
		hs_die(E_NOPERM, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));

	if (interactive) {
		read_shadow(udirfd, &pw, shadowbuf, sizeof(shadowbuf), &sh);
		lstchg = sh.lstchg;
		hs_wipe(shadowbuf, sizeof(shadowbuf));
		ask_fields(pw.pw_name, &lstchg, &aging);
		lock_user(treefd, &udirfd, pw.pw_name);
	} else {
		long *fields[N_SET] = { &aging.min, &aging.max, &aging.warn, &aging.inact,
					&aging.expire, &lstchg };

		for (int k = 0; k < N_SET; k++)
			if (o.set[k])
				*fields[k] = o.value[k];
	}

	openlog("chage", LOG_PID, LOG_AUTHPRIV);
	hs_privs_block_signals(&saved);
	/* aging is always rewritten, even with unchanged values: that is how
	 * root repairs an aging file that is missing or not trusted. */
	r = hs_userdir_write_aging(udirfd, auth_gid, &aging);
	r2 = 0;
	if (r == 0 && (interactive || o.set[SET_LSTCHG]))
		r2 = write_lstchg(udirfd, &pw, auth_gid, lstchg);
	hs_privs_restore_signals(&saved);
	if (r < 0) {
		syslog(LOG_ERR, "failed to change password expiry for %s: %s", pw.pw_name,
		       hs_strerror(r));
		hs_die(E_NOPERM, "cannot write %s: %s",
		       hs_userdir_path(path, sizeof(path), pw.pw_name, HS_FILE_AGING),
		       hs_strerror(r));
	}
	if (r2 < 0) {
		syslog(LOG_ERR, "changed aging but not the last change day of %s: %s",
		       pw.pw_name, hs_strerror(r2));
		hs_die(E_NOPERM, "cannot write %s: %s (the aging limits were changed)",
		       hs_userdir_path(path, sizeof(path), pw.pw_name, HS_FILE_SHADOW),
		       hs_strerror(r2));
	}
	syslog(LOG_INFO, "changed password expiry for %s", pw.pw_name);
	audit_changes(&o, interactive, pw.pw_uid);
	closelog();
	return E_SUCCESS;
}
