/* gpasswd: administer /etc/group and /etc/gshadow.
 *
 * Options, messages and exit codes follow shadow-utils' gpasswd(1)
 * (Debian 12, shadow 4.13); gpasswd(1) of this package lists where we
 * differ.
 *
 * Who may do what (DESIGN §5).  Two programs share this file's
 * gpasswd_main().  gpasswd.c, the default, is a root tool, installed
 * plain, and refuses everybody else with an explanation.
 * gpasswd-setuid.c, which the meson option setuid_gpasswd installs as
 * gpasswd, setuid root, serves group administrators too: a user listed as an
 * administrator of the group in /etc/gshadow may then add and remove
 * members (-a, -d), remove or restrict the group password (-r, -R) and
 * set it; -A and -M stay root's.  The administrator check is made on the
 * files as they are under the locks, right before the change.
 *
 * Setting the password prompts twice on the terminal (never while the
 * locks are held), hashes with libxcrypt per login.defs (ENCRYPT_METHOD
 * and its cost), then takes the locks, checks again and writes.
 * Passwords are wiped as soon as they are hashed. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <termios.h>
#include <unistd.h>

#include "account.h"
#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "groupops.h"
#include "grouptool-common.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "gpasswd-common.h"
#include "util.h"

/* shadow-utils' exit codes (lib/exitcodes.h) */
#define E_SUCCESS          0
#define E_NOPERM           1   /* permission denied, and every other failure */
#define E_USAGE            2   /* invalid command syntax */
#define E_BAD_ARG          3   /* invalid argument to option */
#define E_GSHADOW_NOTFOUND 17  /* -A without /etc/gshadow */

#define RETRIES 3
/* longest password read from the terminal, as PAM's PAM_MAX_RESP_SIZE */
#define PASSWORD_MAX 512

static struct {
	const char *add, *del, *admins, *members;
	bool remove_pw, restrict_pw, set_pw;     /* set_pw: none of the others */
} o;

static bool amroot;
static char *myname;            /* the caller's user name */

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[option] GROUP",
		     "  -a, --add USER                add USER to GROUP\n"
		     "  -d, --delete USER             remove USER from GROUP\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -Q, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -r, --remove-password         remove the GROUP's password\n"
		     "  -R, --restrict                restrict access to GROUP to its members\n"
		     "  -M, --members USER,...        set the list of members of GROUP\n"
		     "  -A, --administrators ADMIN,...\n"
		     "                                set the list of administrators for GROUP\n",
		     "Except for the -A and -M options, the options cannot be combined.\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "add",             required_argument, NULL, 'a' },
		{ "administrators",  required_argument, NULL, 'A' },
		{ "delete",          required_argument, NULL, 'd' },
		{ "help",            no_argument,       NULL, 'h' },
		{ "members",         required_argument, NULL, 'M' },
		{ "root",            required_argument, NULL, 'Q' },
		{ "remove-password", no_argument,       NULL, 'r' },
		{ "restrict",        no_argument,       NULL, 'R' },
		{ "version",         no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, exclusive = 0;

	while ((c = getopt_long(argc, argv, "a:A:d:ghM:Q:rR", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.add = optarg; break;
		case 'A': o.admins = optarg; break;
		case 'd': o.del = optarg; break;
		case 'g': break;        /* shadow-utils: a no-op */
		case 'h': usage(E_SUCCESS);
		case 'M': o.members = optarg; break;
		case 'r': o.remove_pw = true; break;
		case 'R': o.restrict_pw = true; break;
		case 'Q':
			hs_die(E_USAGE, "option --root is not supported; run gpasswd inside that "
			       "root instead (chroot DIR gpasswd ...)");
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	exclusive = !!o.add + !!o.del + o.remove_pw + o.restrict_pw + !!(o.admins || o.members);
	if (exclusive > 1 || optind != argc - 1)
		usage(E_USAGE);
	o.set_pw = exclusive == 0;
}

static _Noreturn void permission_denied(const char *group)
{
	fprintf(stderr, "%s: Permission denied.\n", hs_cli_prog());
	syslog(LOG_ERR, "%s failed to change group %s: Permission denied",
	       myname ? myname : "?", group);
	exit(E_NOPERM);
}

/* ---- reading the password on the terminal ---- */

static struct termios saved_tty;
static volatile sig_atomic_t tty_changed;

/* A signal while echo is off: give the terminal back, then die. */
static void restore_tty_and_exit(int sig)
{
	if (tty_changed)
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	(void)!write(STDOUT_FILENO, "\n", 1);
	_exit(128 + sig);
}

/* Prompt on stdout and read one line from the terminal on stdin with echo
 * off into buf (size bytes).  0, or -1 at the end of input, on a read
 * error or for a line too long (the rest is consumed). */
static int read_password(const char *prompt, char *buf, size_t size)
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP };
	struct sigaction sa = { .sa_handler = restore_tty_and_exit }, old[5];
	struct termios raw;
	size_t len = 0;
	bool too_long = false;
	int r = 0;

	if (tcgetattr(STDIN_FILENO, &saved_tty) < 0)
		return -1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < HS_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, &old[i]);
	raw = saved_tty;
	raw.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
	/* echo off before the prompt: what is typed after it is never
	 * shown; what was typed before it is dropped, as getpass() does */
	tty_changed = 1;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0)
		r = -1;
	fputs(prompt, stdout);
	fflush(stdout);
	while (r == 0) {
		char ch;
		ssize_t n = read(STDIN_FILENO, &ch, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = -1;
			break;
		}
		if (ch == '\n' || ch == '\r')
			break;
		if (len + 1 >= size) {
			too_long = true;
			continue;
		}
		buf[len++] = ch;
	}
	buf[len] = '\0';
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tty);
	tty_changed = 0;
	for (size_t i = 0; i < HS_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
	fputs("\n", stdout);
	fflush(stdout);
	if (too_long) {
		hs_warn("the password is longer than %d bytes", PASSWORD_MAX);
		r = -1;
	}
	if (r < 0)
		hs_wipe(buf, size);
	return r;
}

/* Ask twice (RETRIES times at most) and hash per login.defs into hash. */
static void new_password(const char *group, char *hash, size_t hsize)
{
	_cleanup_free_ char *pass = malloc(PASSWORD_MAX + 1);
	_cleanup_free_ char *again = malloc(PASSWORD_MAX + 1);
	struct hs_config *defs = NULL;
	struct hs_hash_policy policy;
	int retries, r;

	if (!pass || !again)
		hs_die(E_NOPERM, "out of memory");
	r = hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs);
	if (r < 0)
		hs_die(E_NOPERM, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
	r = hs_hash_policy_from_config(defs, &policy);
	if (r < 0)
		hs_die(E_NOPERM, "ENCRYPT_METHOD %s in %s: %s", hs_config_get_str(defs,
		       "ENCRYPT_METHOD", ""), HS_ETC_LOGIN_DEFS, hs_strerror(r));
	hs_config_free(defs);

	char shown[HS_NAME_MAX * 4 + 8];

	printf("Changing the password for group %s\n", hs_printable(group, shown, sizeof(shown)));
	for (retries = 0; retries < RETRIES; retries++) {
		bool same;

		if (read_password("New Password: ", pass, PASSWORD_MAX + 1) < 0)
			exit(E_NOPERM);
		if (read_password("Re-enter new password: ", again, PASSWORD_MAX + 1) < 0) {
			hs_wipe(pass, PASSWORD_MAX + 1);
			exit(E_NOPERM);
		}
		same = strcmp(pass, again) == 0;
		hs_wipe(again, PASSWORD_MAX + 1);
		if (same && pass[0] == '\0') {
			/* a hash of the empty password would let anybody in
			 * with newgrp; -r says "no password" explicitly */
			hs_die(E_NOPERM, "empty password refused (gpasswd -r removes the group "
			       "password)");
		}
		if (same)
			break;
		hs_wipe(pass, PASSWORD_MAX + 1);
		if (retries + 1 < RETRIES)
			puts("They don't match; try again");
	}
	if (retries == RETRIES)
		hs_die(E_NOPERM, "Try again later");
	r = hs_hash_password(pass, &policy, hash, hsize);
	hs_wipe(pass, PASSWORD_MAX + 1);
	if (r < 0)
		hs_die(E_NOPERM, "cannot hash the password: %s", hs_strerror(r));
}

/* ---- the group ---- */

/* May the caller change group (as gshadow says, gs may be NULL)?  -A and
 * -M are root's; the rest is also the group's administrators'. */
static bool may_change(struct hs_accountdb *gs, const char *group)
{
	long si;

	if (amroot)
		return true;
	if (o.admins || o.members || !gs)
		return false;
	si = hs_accountdb_find(gs, group);
	return si >= 0 && hs_records_list_contains(gs->lines[si].rec.gs.admins, myname);
}

/* Before asking for a password: the group exists and the caller may
 * change it, read without taking any lock (the files are replaced
 * atomically), so a caller cannot hold the locks by stopping us. */
static void precheck(const char *group)
{
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	bool exists, allowed;

	if (hs_accountdb_load(&gr, HS_DB_GROUP, HS_ETC_GROUP, HS_DB_LAZY) < 0)
		hs_die(E_NOPERM, "%s", gr.error);
	if (hs_accountdb_load(&gs, HS_DB_GSHADOW, HS_ETC_GSHADOW,
			      HS_DB_MISSING_OK | HS_DB_LAZY) < 0) {
		hs_accountdb_free(&gr);
		hs_die(E_NOPERM, "%s", gs.error);
	}
	exists = hs_accountdb_find(&gr, group) >= 0;
	allowed = may_change(gs.present ? &gs : NULL, group);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
	if (!exists)
		hs_die(E_BAD_ARG, "group '%s' does not exist in %s", group, HS_ETC_GROUP);
	if (!allowed)
		permission_denied(group);
}

/* Lock and load the group files; the group's index in /etc/group, or
 * exit after the caller's permission check (made again, on the files as
 * they are under the locks) failed.  Users named by -a, -A and -M are
 * looked up through NSS while the group lock is held: userdel takes that
 * lock too to drop the user's memberships, so a user deleted meanwhile is
 * either gone when we look or dropped after us. */
static long open_group(struct hs_accountset *s, const char *group)
{
	long gi;

	if (hs_accountset_open(s, HS_AS_GROUP_FILES, HS_DB_LAZY) < 0)
		hs_die(E_NOPERM, "%s", s->error);
	gi = hs_groupops_find(s, group);
	if (gi < 0)
		grouptool_die_closing(s, E_BAD_ARG, "group '%s' does not exist in %s", group,
				      HS_ETC_GROUP);
	if (!may_change(hs_groupops_gshadow(s), group)) {
		hs_accountset_close(s);
		permission_denied(group);
	}
	return gi;
}

static void check_user_list(struct hs_accountset *s, const char *arg, char **out)
{
	char bad[HS_NAME_MAX * 4 + 8], shown[160];
	int r = hs_groupops_user_list(s, arg, true, out, bad, sizeof(bad));

	if (r == -ENOMEM)
		grouptool_die_closing(s, E_NOPERM, "out of memory");
	if (r < 0)
		grouptool_die_closing(s, E_BAD_ARG, "user '%s' does not exist",
				      hs_printable(bad, shown, sizeof(shown)));
}

/* Under the locks: check (again) and make the one change asked for.
 * Returns what hs_groupops_* returned; what says what was done, for the
 * log; said is the line for stdout, printed only once the locks are
 * released: a setuid gpasswd's stdout is the caller's, who can stop it (a
 * terminal) or leave it full, and a line waiting there must not keep every
 * account tool out of /etc/group. */
static int edit_group(struct hs_accountset *s, long gi, const char *group, const char *hash,
                      char *what, size_t what_size, char *said, size_t said_size)
{
	_cleanup_free_ char *admins = NULL, *members = NULL;
	char su[HS_NAME_MAX * 4 + 8], sg[HS_NAME_MAX * 4 + 8];
	int r;

	if (o.add) {
		if (!hs_groupops_user_exists(s, o.add, true))
			grouptool_die_closing(s, E_BAD_ARG, "user '%s' does not exist", o.add);
		snprintf(said, said_size, "Adding user %s to group %s\n",
			 hs_printable(o.add, su, sizeof(su)), hs_printable(group, sg, sizeof(sg)));
		r = hs_groupops_add_member(s, (size_t)gi, o.add);
		snprintf(what, what_size, "user %s added by %s to group %s", o.add, myname,
			 group);
	} else if (o.del) {
		struct hs_accountdb *gs = hs_groupops_gshadow(s);
		long si = gs ? hs_accountdb_find(gs, group) : -1;
		bool member = hs_records_list_contains(
			hs_accountset_db(s, HS_AS_GROUP)->lines[gi].rec.gr.members, o.del) ||
			(si >= 0 && hs_records_list_contains(gs->lines[si].rec.gs.members, o.del));

		snprintf(said, said_size, "Removing user %s from group %s\n",
			 hs_printable(o.del, su, sizeof(su)), hs_printable(group, sg, sizeof(sg)));
		if (!member) {
			hs_accountset_close(s);
			fputs(said, stdout);
			fflush(stdout);
			hs_die(E_BAD_ARG, "user '%s' is not a member of '%s'", o.del, group);
		}
		r = hs_groupops_remove_member(s, (size_t)gi, o.del, false);
		snprintf(what, what_size, "user %s removed by %s from group %s", o.del, myname,
			 group);
	} else if (o.remove_pw) {
		r = hs_groupops_set_password(s, (size_t)gi, "");
		snprintf(what, what_size, "password of group %s removed by %s", group, myname);
	} else if (o.restrict_pw) {
		r = hs_groupops_set_password(s, (size_t)gi, "!");
		snprintf(what, what_size, "access to group %s restricted by %s", group, myname);
	} else if (o.admins || o.members) {
		if (o.admins && !hs_groupops_gshadow(s))
			grouptool_die_closing(s, E_GSHADOW_NOTFOUND,
					      "shadow group passwords required for -A");
		if (o.admins)
			check_user_list(s, o.admins, &admins);
		if (o.members)
			check_user_list(s, o.members, &members);
		r = admins ? hs_groupops_set_admins(s, (size_t)gi, admins) : 0;
		if (r >= 0 && members)
			r = hs_groupops_set_members(s, (size_t)gi, members);
		snprintf(what, what_size, "%s%s%s%s of group %s set by %s",
			 admins ? "administrators " : "", admins ? admins : "",
			 admins && members ? ", members " : (members ? "members " : ""),
			 members ? members : "", group, myname);
	} else {
		r = hs_groupops_set_password(s, (size_t)gi, hash);
		snprintf(what, what_size, "password of group %s changed by %s", group, myname);
	}
	return r;
}

/* shadow-utils' audit event of the change: its syslog text as the op (for
 * -A and -M in its own words, one event each, administrators first), named
 * by the group.  A password set, removed or restricted is
 * AUDIT_USER_CHAUTHTOK, a membership AUDIT_USER_ACCT (shadow-utils 4.13). */
static void audit_change(const char *group, const char *what)
{
	const char *lists[][2] = { { "administrators", o.admins }, { "members", o.members } };
	char op[600];
	int type = o.admins || o.members || o.add || o.del ? AUDIT_USER_ACCT
							   : AUDIT_USER_CHAUTHTOK;

	for (size_t i = 0; i < HS_ARRAY_SIZE(lists); i++) {
		if (!lists[i][1])
			continue;
		snprintf(op, sizeof op, "%s of group %s set by %s to %s", lists[i][0], group,
			 myname, lists[i][1]);
		hs_auditlog_acct(type, op, group, HS_AUDITLOG_NO_ID, true);
	}
	if (!o.admins && !o.members)
		hs_auditlog_acct(type, what, group, HS_AUDITLOG_NO_ID, true);
}

int gpasswd_main(int argc, char **argv, enum gpasswd_mode mode)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;
	_cleanup_free_ char *mebuf = NULL;
	char why[128], hash[HS_HASH_MAX + 1] = "", shown[160], what[600];
	char said[2 * (HS_NAME_MAX * 4 + 8) + 32] = "";   /* two names shown escaped */
	struct passwd me;
	const char *group;
	long gi;
	int r;

	hs_privs_init(argc, argv, "gpasswd");
	hs_cli_set_prog("gpasswd");
	parse_options(argc, argv);
	openlog("gpasswd", LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();
	amroot = hs_privs_caller_is_root();
	group = argv[optind];

	if (!amroot && (mode != GPASSWD_GROUP_ADMINS || geteuid() != 0)) {
		fprintf(stderr, "%s: Permission denied.\n", hs_cli_prog());
		hs_die(E_NOPERM, "%s: ask root to make the change", mode != GPASSWD_GROUP_ADMINS
		       ? "this gpasswd is for root only; group administrators can use it only "
			 "when it is built with -Dsetuid_gpasswd=true and installed setuid root"
		       : "this gpasswd is built for group administrators but is not installed "
			 "setuid root");
	}
	if (hs_account_caller(&me, &mebuf, why, sizeof why) < 0)
		hs_die(E_NOPERM, "%s", why);
	myname = me.pw_name;
	if (!hs_names_group_valid(group))
		hs_die(E_BAD_ARG, "group '%s' does not exist in %s",
		       hs_printable(group, shown, sizeof(shown)), HS_ETC_GROUP);
	if (o.add && !hs_names_user_valid(o.add))
		hs_die(E_BAD_ARG, "user '%s' does not exist",
		       hs_printable(o.add, shown, sizeof(shown)));
	if (o.del && !hs_names_user_valid(o.del))
		hs_die(E_BAD_ARG, "user '%s' is not a member of '%s'",
		       hs_printable(o.del, shown, sizeof(shown)), group);

	/* who may, and a terminal, before asking anything */
	/* root may change any group and, without a password to ask for, gets
	 * the same answer under the locks: no need to read the files twice */
	if (!amroot || o.set_pw)
		precheck(group);
	if (o.set_pw) {
		if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
			hs_die(E_NOPERM, "Not a tty");
		new_password(group, hash, sizeof(hash));
	}
	/* From here on the caller cannot signal us (stop us while we hold
	 * the locks that every account tool needs): all ids become root's,
	 * as shadow-utils' gpasswd does before it writes, and the terminal
	 * cannot stop us either. */
	if (!amroot && hs_privs_unstoppable() < 0) {
		syslog(LOG_ERR, "can't setuid(0)");
		hs_die(E_NOPERM, "Cannot change ID to root.");
	}

	/* from here the kernel lets gpasswd write /etc only */
	hs_confine_to_etc(E_NOPERM);

	/* ---- under the locks: check (again) and edit ---- */
	gi = open_group(&s, group);
	r = edit_group(&s, gi, group, hash, what, sizeof(what), said, sizeof(said));
	hs_wipe(hash, sizeof(hash));
	r = hs_groupops_finish(&s, r, &err, what, "%s", what);
	fputs(said, stdout);
	if (r < 0) {
		fflush(stdout);
		hs_report(&err);
		return E_NOPERM;
	}
	audit_change(group, what);
	closelog();
	return E_SUCCESS;
}
