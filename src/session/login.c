/* login: begin a session on a terminal.
 *
 * Run by root (getty, telnetd) on a real terminal; installed plain 0755
 * (DESIGN §5).  In order:
 *  - take the terminal: check that fd 0 is a terminal device under /dev,
 *    make it root's with mode 0600, make it our controlling terminal and
 *    vhangup() it, so no process that had it open before (a previous
 *    session's leftover reading the keyboard) keeps a usable handle; then
 *    reopen it as fds 0, 1 and 2;
 *  - PAM service "login": pam_authenticate with LOGIN_RETRIES tries and
 *    FAIL_DELAY between them, all within LOGIN_TIMEOUT; pam_acct_mgmt,
 *    with the forced change (pam_chauthtok) of an expired password;
 *  - initgroups, pam_setcred, pam_open_session (silent for a hushed
 *    login), the terminal to the user (TTYGROUP, TTYPERM), utmp and wtmp;
 *  - a child that becomes a session leader with the terminal as its
 *    controlling tty, drops to the user and execs the login shell as
 *    "-NAME" (for converted accounts the shell proxy, which starts the
 *    shell the user chose with chsh);
 *  - the parent stays root, waits, then writes the logout to utmp and
 *    wtmp, gives the terminal back to root, closes the session and deletes
 *    the credentials (lib/session).
 *
 * Options, messages and login.defs keys follow util-linux's and
 * shadow-utils' login(1); login(1) of this package lists the differences. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <paths.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <termios.h>
#include <unistd.h>
#include <utmpx.h>

#include <security/pam_appl.h>

#include "account.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "layout.h"
#include "logrecords.h"
#include "names.h"
#include "session.h"
#include "util.h"

#define PROG_NAME       "login"
#define DEFAULT_SHELL   "/bin/sh"
#define DEFAULT_MAILDIR "/var/mail"
#define E_FAILURE       1

/* util-linux's defaults where login.defs is silent. */
#define DEFAULT_RETRIES 3
#define DEFAULT_TIMEOUT 60
#define DEFAULT_DELAY   3

#define HOST_MAX        255
#define HUSH_FILE_MAX   (64 * 1024)

struct options {
	bool noauth;            /* -f */
	bool preserve;          /* -p */
	bool no_host_prompt;    /* -H */
	const char *host;       /* -h */
	char *user;             /* copied; argv's copy is blanked */
};

struct terminal {
	char path[64];          /* /dev/pts/3 */
	const char *name;       /* pts/3: PAM_TTY, utmp's ut_line, the logs */
	gid_t gid;              /* TTYGROUP, or -1: the user's group */
	mode_t perm;            /* TTYPERM */
	gid_t root_gid;         /* group while no one is logged in */
};

/* ---- the login timeout (SIGALRM) ---- */

static struct termios saved_tt;
static volatile sig_atomic_t have_saved_tt;
static char timeout_msg[96];
static size_t timeout_len;

static void timed_out(int sig)
{
	(void)sig;
	/* the password prompt turned echo off */
	if (have_saved_tt)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tt);
	(void)!write(STDERR_FILENO, timeout_msg, timeout_len);
	_exit(E_FAILURE);
}

static void arm_timeout(unsigned seconds)
{
	struct sigaction sa = { .sa_handler = timed_out };

	if (seconds == 0)
		return;
	snprintf(timeout_msg, sizeof(timeout_msg), "\nLogin timed out after %u seconds.\n", seconds);
	timeout_len = strlen(timeout_msg);
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

/* ---- options ---- */

static noreturn void usage(int status)
{
	FILE *f = status == 0 ? stdout : stderr;

	fprintf(f,
		"\nUsage:\n"
		" %1$s [-p] [-h <host>] [-H] [[-f] <username>]\n"
		"\nBegin a session on the system.\n"
		"\nOptions:\n"
		" -p             do not destroy the environment\n"
		" -f             skip a login authentication\n"
		" -h <host>      hostname to be used for utmp logging\n"
		" -H             suppress hostname in the login prompt\n"
		"     --help     display this help\n"
		" -V, --version  display version\n"
		"\nFor more details see login(1).\n", PROG_NAME);
	if (status == 0 && (fflush(f) != 0 || ferror(f)))
		exit(E_FAILURE);
	exit(status);
}

/* ASCII letters, digits and the punctuation of names and addresses:
 * a fixed list, not isalnum, which follows the locale login has set
 * (hs_session_tool_init) and in a Latin-1 one takes bytes >= 0x80. */
static bool host_ok(const char *h)
{
	static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789.-_:[]%";
	size_t n = strlen(h);

	return n > 0 && n <= HOST_MAX && strspn(h, allowed) == n;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_HELP = 256 };
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "fHh:pV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->noauth = true;
			break;
		case 'H':
			o->no_host_prompt = true;
			break;
		case 'h':
			o->host = optarg;
			break;
		case 'p':
			o->preserve = true;
			break;
		case OPT_HELP:
			usage(0);
		case 'V':
			hs_print_version();
		default:
			usage(E_FAILURE);
		}
	}
	if (argc - optind > 1)
		usage(E_FAILURE);
	if (optind < argc) {
		char *p = argv[optind];

		/* "login -- -x": a name that looks like an option is never a
		 * user (DESIGN §3) and must not reach PAM or a log as one */
		if (p[0] == '-')
			hs_die(E_FAILURE, "invalid user name: it starts with '-'");
		o->user = strdup(p);
		if (!o->user)
			hs_die(E_FAILURE, "out of memory");
		/* people type their password here by mistake: do not leave it
		 * in the process list for the whole session */
		memset(p, ' ', strlen(p));
	}
	if (o->noauth && !o->user)
		hs_die(E_FAILURE, "-f requires a user name");
	if (o->host && !host_ok(o->host))
		hs_die(E_FAILURE, "invalid host name for -h");
}

/* ---- the terminal ---- */

static noreturn void tty_fatal(const char *what, int err)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s%s%s", what, err ? ": " : "", err ? strerror(err) : "");
	syslog(LOG_ERR, "FATAL: %s", msg);
	hs_die(E_FAILURE, "%s", msg);
}

/* Is the terminal on fd 0 the one at t->path (same device, a real
 * character device under /dev, not a hard link planted elsewhere)? */
static void tty_check(struct terminal *t)
{
	struct stat a, b;
	int r;

	if (!isatty(STDIN_FILENO))
		tty_fatal("standard input is not a terminal", 0);
	r = ttyname_r(STDIN_FILENO, t->path, sizeof(t->path));
	if (r != 0)
		tty_fatal("cannot find the name of the terminal", r);
	if (strncmp(t->path, "/dev/", 5) != 0 || strstr(t->path, "/../") || strlen(t->path) <= 5)
		tty_fatal("bad terminal name", 0);
	if (lstat(t->path, &a) < 0 || fstat(STDIN_FILENO, &b) < 0 || !S_ISCHR(a.st_mode) ||
	    a.st_rdev != b.st_rdev)
		tty_fatal("bad terminal", 0);
	t->name = t->path + 5;
}

static void tty_take(struct terminal *t)
{
	struct termios tt, nohup;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct stat st;
	int fd;

	if (fchown(STDIN_FILENO, 0, t->root_gid) < 0 || fchmod(STDIN_FILENO, 0600) < 0)
		tty_fatal("cannot change the owner and mode of the terminal", errno);
	if (tcgetattr(STDIN_FILENO, &tt) < 0)
		tty_fatal("cannot read the terminal settings", errno);
	saved_tt = tt;
	have_saved_tt = 1;
	/* vhangup() must not drop the line (a serial modem) */
	nohup = tt;
	nohup.c_cflag &= ~(tcflag_t)HUPCL;
	tcsetattr(STDIN_FILENO, TCSANOW, &nohup);

	/* vhangup() acts on the controlling terminal: make it ours when it
	 * is not (started by a daemon without one) */
	if (tcgetsid(STDIN_FILENO) != getsid(0)) {
		if (getsid(0) != getpid())
			(void)setsid();
		if (ioctl(STDIN_FILENO, TIOCSCTTY, 1) < 0)
			tty_fatal("cannot make the terminal the controlling terminal", errno);
	}
	sigaction(SIGHUP, &ign, &old);
	if (vhangup() < 0)
		tty_fatal("cannot hang up the terminal", errno);
	sigaction(SIGHUP, &old, NULL);

	/* our own fds were hung up too: open it anew, without making it our
	 * controlling terminal (that is for the session's child) */
	fd = open(t->path, O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		tty_fatal("cannot reopen the terminal", errno);
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || !isatty(fd))
		tty_fatal("bad terminal", 0);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (int i = 0; i <= 2; i++)
		if (fd != i && dup2(fd, i) < 0)
			tty_fatal("cannot reopen the terminal", errno);
	if (fd > 2)
		close(fd);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &tt);
}

/* TTYGROUP (a name or a number) and TTYPERM (octal). */
static void tty_policy(const struct hs_config *defs, struct terminal *t)
{
	const char *g = hs_config_get_str(defs, "TTYGROUP", NULL);
	const char *p = hs_config_get_str(defs, "TTYPERM", NULL);
	unsigned long v;
	char *end;

	t->gid = (gid_t)-1;
	t->perm = 0600;
	if (g && *g) {
		struct group *gr = getgrnam(g);
		if (gr)
			t->gid = gr->gr_gid;
		else if (hs_parse_ulong(g, 0, (gid_t)-2, &v) == 0)
			t->gid = (gid_t)v;
		else
			syslog(LOG_WARNING, "TTYGROUP %s: no such group", g);
	}
	t->root_gid = t->gid != (gid_t)-1 ? t->gid : 0;
	if (p && *p) {
		errno = 0;
		v = strtoul(p, &end, 8);
		if (errno == 0 && *end == '\0' && v <= 0777)
			t->perm = (mode_t)v;
		else
			syslog(LOG_WARNING, "TTYPERM %s: not an octal mode", p);
	}
}

/* ---- utmp, wtmp, btmp ---- */

static void utmp_fill(struct utmpx *ut, const struct terminal *t, short type, const char *user,
                      const char *host)
{
	struct utmpx u;
	char id[sizeof(ut->ut_id) + 1] = "";
	size_t n = strlen(t->name), k = n < sizeof(ut->ut_id) ? n : sizeof(ut->ut_id);

	/* the entry getty (or whoever started us) made for this process
	 * gives the id (a USER_PROCESS one only on this line: logrecords.h);
	 * otherwise the last four characters of the line, as sshd and
	 * systemd spell it.  Read without glibc's lock, which a stopped
	 * utempter may hold (logrecords.h). */
	if (hs_logrecords_utmp_find(_PATH_UTMP, getpid(), t->name, &u) == 0)
		memcpy(id, u.ut_id, sizeof(ut->ut_id));
	else
		memcpy(id, t->name + n - k, k);
	hs_logrecords_utmp_fill(ut, type, user, t->name, id, host);
}

/* The login of user, or with user NULL the logout, in utmp and wtmp:
 * utmp in place, wtmp appended, neither waiting for a lock (logrecords.h). */
static void utmp_write(const struct terminal *t, const char *user, const char *host)
{
	struct utmpx ut;
	int r;

	utmp_fill(&ut, t, user ? USER_PROCESS : DEAD_PROCESS, user, host);
	r = hs_logrecords_put_utmp(_PATH_UTMP, &ut);
	if (r < 0 && user)
		syslog(LOG_WARNING, "cannot write %s: %s", _PATH_UTMP, hs_strerror(r));
	r = hs_logrecords_append_utmp(_PATH_WTMP, &ut);
	if (r < 0 && r != -ENOENT)
		syslog(LOG_WARNING, "cannot append to %s: %s", _PATH_WTMP, hs_strerror(r));
}

/* A failed try in FTMP_FILE (btmp), when that file exists. */
static void btmp_failure(const struct hs_config *defs, const struct terminal *t,
                         const char *user, const char *host)
{
	struct utmpx ut;
	int r;

	utmp_fill(&ut, t, LOGIN_PROCESS, user, host);
	r = hs_logrecords_failure(defs, &ut);
	if (r < 0 && r != -ENOENT)
		syslog(LOG_WARNING, "cannot append to %s: %s",
		       hs_config_get_str(defs, "FTMP_FILE", HS_BTMP_FILE), hs_strerror(r));
}

/* ---- logging ---- */

static void syslog_warn(void *ctx, const char *path, unsigned long lineno, const char *message)
{
	(void)ctx;
	syslog(LOG_WARNING, "%s:%lu: %s", path, lineno, message);
}

/* What a failure log line may call the user: a name typed at the prompt
 * that is no account is often a password typed one line too early, so
 * it is "UNKNOWN" unless LOG_UNKFAIL_ENAB says otherwise. */
static const char *log_name(const struct hs_config *defs, const char *user, char *buf, size_t size)
{
	bool known = false;

	if (!user || !*user)
		return "UNKNOWN";
	if (hs_names_user_valid(user)) {
		_cleanup_free_ char *pwbuf = NULL;
		struct passwd pw;
		known = hs_account_getpwnam(user, &pw, &pwbuf) == 0;
	}
	if (!known && !hs_config_get_bool(defs, "LOG_UNKFAIL_ENAB", false))
		return "UNKNOWN";
	return hs_printable(user, buf, size);
}

static const char *pam_user(struct hs_session *s)
{
	const void *item = NULL;

	return pam_get_item(s->pamh, PAM_USER, &item) == PAM_SUCCESS ? item : NULL;
}

/* ---- hushed logins ---- */

static bool hushed(const struct hs_config *defs, const struct passwd *pw)
{
	const char *file = hs_config_get_str(defs, "HUSHLOGIN_FILE", NULL);
	char path[4096], buf[HUSH_FILE_MAX + 1];
	struct stat st;
	ssize_t n;
	_cleanup_close_ int fd = -1;

	if (!file || !*file)
		return false;
	if (file[0] != '/') {
		/* ~/.hushlogin: only its presence counts, not where it leads */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", pw->pw_dir, file) >= sizeof(path))
			return false;
		return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	/* /etc/hushlogins: a line with the user's name or shell */
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	n = hs_read_full(fd, buf, HUSH_FILE_MAX);
	if (n < 0)
		return false;
	buf[n] = '\0';
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strcmp(line, pw->pw_name) == 0 || strcmp(line, pw->pw_shell) == 0)
			return true;
	return false;
}

/* ---- the session's environment ---- */

static void build_env(struct hs_env *env, const struct options *o, const struct passwd *pw,
                      const char *shell, const struct hs_config *defs)
{
	extern char **environ;
	const char *maildir = hs_config_get_str(defs, "MAIL_DIR", NULL);
	const char *mailfile = hs_config_get_str(defs, "MAIL_FILE", NULL);
	const char *term = getenv("TERM");
	char mail[4096];
	int r = 0;

	/* -p keeps the allow-list hs_privs_init() left (TERM, LANG,
	 * LANGUAGE, LC_*, TZ, COLUMNS, LINES); nothing else ever reaches us */
	if (o->preserve)
		for (char **e = environ; e && *e; e++)
			r |= hs_session_env_put(env, *e, true);
	if (term && hs_session_env_term_ok(term))
		r |= hs_session_env_set(env, "TERM", term, true);
	if (mailfile && *mailfile)
		snprintf(mail, sizeof(mail), "%s/%s", pw->pw_dir, mailfile);
	else
		snprintf(mail, sizeof(mail), "%s/%s", maildir && *maildir ? maildir : DEFAULT_MAILDIR,
			 pw->pw_name);
	r |= hs_session_env_set(env, "HOME", pw->pw_dir, true);
	r |= hs_session_env_set(env, "SHELL", shell, true);
	r |= hs_session_env_set(env, "USER", pw->pw_name, true);
	r |= hs_session_env_set(env, "LOGNAME", pw->pw_name, true);
	r |= hs_session_env_set(env, "PATH", hs_session_default_path(defs, pw->pw_uid), true);
	r |= hs_session_env_set(env, "MAIL", mail, true);
	if (r)
		hs_die(E_FAILURE, "failed to set up the environment");
}

/* ---- main ---- */

static noreturn void fail_session(struct hs_session *s, int r, const char *what)
{
	const char *msg = pam_strerror(s->pamh, r);

	syslog(LOG_ERR, "%s: %s", what, msg);
	fprintf(stderr, "%s: %s\n", PROG_NAME, msg);
	hs_session_end(s, r);
	exit(E_FAILURE);
}

/* "HOST login: " (or "login: " with -H), a hostname that cannot move the
 * cursor. */
static void set_user_prompt(struct hs_session *s, const struct options *o)
{
	char hostname[256], prompt[300];
	int r;

	if (o->no_host_prompt || gethostname(hostname, sizeof(hostname)) != 0)
		hostname[0] = '\0';
	hostname[sizeof(hostname) - 1] = '\0';
	/* printable ASCII only, whatever the locale (see host_ok) */
	for (char *p = hostname; *p; p++)
		if (*p <= ' ' || *p > '~')
			*p = '?';
	snprintf(prompt, sizeof(prompt), "%s%slogin: ", hostname, hostname[0] ? " " : "");
	r = pam_set_item(s->pamh, PAM_USER_PROMPT, prompt);
	if (r != PAM_SUCCESS)
		fail_session(s, r, "pam_set_item");
}

/* Authentication, with retries; false (the session ended, the failure
 * logged) when the login is refused. */
static bool authenticate(struct hs_session *s, const struct options *o,
			 const struct hs_config *defs, const struct terminal *t, const char *from,
			 long retries, long delay)
{
	char shown[64];
	const char *name;
	int r, failcount = 0;

	for (;;) {
		if (delay > 0)
			pam_fail_delay(s->pamh, (unsigned)delay * 1000000u);
		r = o->noauth ? PAM_SUCCESS : pam_authenticate(s->pamh, 0);
		if (r == PAM_SUCCESS)
			return true;
		failcount++;
		name = log_name(defs, pam_user(s), shown, sizeof(shown));
		btmp_failure(defs, t, name, o->host);
		/* each refused try, named as in the log (UNKNOWN for a name
		 * that may be a password), as shadow-utils' login sends it */
		hs_auditlog_session(AUDIT_USER_LOGIN, HS_AUDIT_OP_LOGIN, name, HS_AUDITLOG_NO_ID,
				    o->host, t->path, false);
		/* another try only after a wrong name or password, while tries are left */
		if ((r != PAM_AUTH_ERR && r != PAM_USER_UNKNOWN && r != PAM_CRED_INSUFFICIENT &&
		     r != PAM_AUTHINFO_UNAVAIL) || failcount >= retries)
			break;
		syslog(LOG_NOTICE, "FAILED LOGIN %d ON %s%s FOR %s, %s", failcount, t->name, from,
		       name, pam_strerror(s->pamh, r));
		fprintf(stderr, "Login incorrect\n\n");
		/* the next try asks for the name again */
		pam_set_item(s->pamh, PAM_USER, NULL);
	}
	if (r == PAM_MAXTRIES || failcount >= retries)
		syslog(LOG_NOTICE, "TOO MANY LOGIN TRIES (%d) ON %s%s FOR %s, %s", failcount,
		       t->name, from, name, pam_strerror(s->pamh, r));
	else
		syslog(LOG_NOTICE, "FAILED LOGIN SESSION ON %s%s FOR %s, %s", t->name, from,
		       name, pam_strerror(s->pamh, r));
	fprintf(stderr, "\nLogin incorrect\n");
	hs_session_end(s, r);
	return false;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct terminal t;
	struct hs_session s;
	struct hs_config *defs = NULL;
	struct hs_child child = { 0 };
	struct hs_env env = { 0 };
	struct passwd pw;
	_cleanup_free_ char *pwbuf = NULL, *arg0 = NULL, *user = NULL;
	char shown[64], from[HOST_MAX + 8];
	const char *shell, *base;
	long retries, delay, timeout;
	int r, status;
	bool quiet;
	struct rlimit caller_core;
	mode_t session_umask;

	hs_session_tool_init(argc, argv, PROG_NAME, &caller_core);

	parse_options(argc, argv, &o);
	if ((o.noauth || o.host) && getuid() != 0)
		hs_die(E_FAILURE, "-%c is for the superuser only", o.noauth ? 'f' : 'h');
	if (getuid() != 0 || geteuid() != 0)
		hs_die(E_FAILURE, "Cannot possibly work without effective root");
	if (o.user && !hs_names_user_valid(o.user))
		hs_die(E_FAILURE, "invalid user name '%s'", hs_printable(o.user, shown, sizeof(shown)));

	openlog(PROG_NAME, LOG_PID | LOG_ODELAY, LOG_AUTHPRIV);
	hs_auditlog_open();
	/* the keyboard's signals are not for us while we ask questions */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);

	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, syslog_warn, NULL, &defs) < 0)
		defs = NULL;
	retries = hs_config_get_long(defs, "LOGIN_RETRIES", 1, 1000, DEFAULT_RETRIES);
	timeout = hs_config_get_long(defs, "LOGIN_TIMEOUT", 0, 24 * 3600, DEFAULT_TIMEOUT);
	delay = hs_config_get_long(defs, "FAIL_DELAY", 0, 3600, DEFAULT_DELAY);
	tty_policy(defs, &t);

	tty_check(&t);
	arm_timeout((unsigned)timeout);
	tty_take(&t);
	snprintf(from, sizeof(from), "%s%s", o.host ? " FROM " : "", o.host ? o.host : "");

	r = hs_session_start(&s, "login", o.user, t.name, NULL, o.host);
	if (r != PAM_SUCCESS) {
		syslog(LOG_ERR, "Couldn't initialize PAM: %s", pam_strerror(s.pamh, r));
		hs_die(E_FAILURE, "PAM failure, aborting: %s", pam_strerror(s.pamh, r));
	}
	set_user_prompt(&s, &o);
	if (!authenticate(&s, &o, defs, &t, from, retries, delay))
		return E_FAILURE;

	/* the account: expired, locked, or a password that must change now */
	r = pam_acct_mgmt(s.pamh, 0);
	if (r == PAM_NEW_AUTHTOK_REQD)
		r = pam_chauthtok(s.pamh, PAM_CHANGE_EXPIRED_AUTHTOK);
	if (r != PAM_SUCCESS) {
		const char *name = log_name(defs, pam_user(&s), shown, sizeof(shown));
		syslog(LOG_NOTICE, "FAILED LOGIN ON %s%s FOR %s, %s", t.name, from, name,
		       pam_strerror(s.pamh, r));
		fail_session(&s, r, "account");
	}
	alarm(0);

	/* PAM may have changed the name; it must be a valid one */
	user = pam_user(&s) ? strdup(pam_user(&s)) : NULL;
	if (!user || !hs_names_user_valid(user))
		fail_session(&s, PAM_USER_UNKNOWN, "invalid user name from PAM");
	if (hs_account_getpwnam(user, &pw, &pwbuf) < 0 || !pw.pw_dir || !*pw.pw_dir)
		fail_session(&s, PAM_USER_UNKNOWN, "no passwd entry");
	shell = pw.pw_shell && *pw.pw_shell ? pw.pw_shell : DEFAULT_SHELL;
	quiet = hushed(defs, &pw);

	r = hs_session_set_groups(pw.pw_name, pw.pw_gid, NULL, 0);
	if (r < 0) {
		syslog(LOG_ERR, "groups initialization failed: %s", hs_strerror(r));
		hs_session_end(&s, PAM_ABORT);
		hs_die(E_FAILURE, "groups initialization failed: %s", hs_strerror(r));
	}
	/* pam_limits sets the session's core limit, from the caller's as
	 * under util-linux; the child gets what it set.  UMASK is the
	 * session's umask unless pam_umask sets one: shadow-utils' login
	 * sets UMASK before PAM, so pam_umask has the last word */
	session_umask = (mode_t)hs_config_get_long(defs, "UMASK", 0, 0777, 022);
	r = hs_session_open(&s, quiet ? PAM_SILENT : 0, &caller_core, &session_umask);
	if (r != PAM_SUCCESS)
		fail_session(&s, r, "session");

	if (fchown(STDIN_FILENO, pw.pw_uid, t.gid != (gid_t)-1 ? t.gid : pw.pw_gid) < 0 ||
	    fchmod(STDIN_FILENO, t.perm) < 0) {
		int e = errno;
		syslog(LOG_ERR, "%s: change permissions failed: %s", t.path, strerror(e));
		hs_session_end(&s, PAM_ABORT);
		hs_die(E_FAILURE, "%s: change permissions failed: %s", t.path, strerror(e));
	}
	hs_auditlog_session(AUDIT_USER_LOGIN, HS_AUDIT_OP_LOGIN, pw.pw_name, HS_AUDITLOG_NO_ID,
			    o.host, t.path, true);
	utmp_write(&t, pw.pw_name, o.host);
	if (pw.pw_uid == 0)
		syslog(LOG_NOTICE, "ROOT LOGIN ON %s%s", t.name, from);
	else if (hs_config_get_bool(defs, "LOG_OK_LOGINS", false))
		syslog(LOG_INFO, "LOGIN ON %s BY %s%s", t.name, pw.pw_name, from);

	build_env(&env, &o, &pw, shell, defs);
	base = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
	if (hs_session_env_add_pam(&env, s.pamh) < 0 || asprintf(&arg0, "-%s", base) < 0) {
		hs_session_end(&s, PAM_BUF_ERR);
		hs_die(E_FAILURE, "out of memory");
	}
	char *cargv[] = { arg0, NULL };

	child.uid = pw.pw_uid;
	child.gid = pw.pw_gid;
	child.path = shell;
	child.argv = cargv;
	child.envp = env.v;
	child.umask = session_umask;   /* UMASK, or pam_umask's */
	child.dir = pw.pw_dir;
	child.dir_required = true;
	child.dir_fallback_root = hs_config_get_bool(defs, "DEFAULT_HOME", false);
	child.tty = HS_CHILD_TAKE_TTY;
	child.reset_signals = true;
	child.core_limit = caller_core;   /* the session's, after pam_limits */
	hs_config_free(defs);

	r = hs_session_run(&child, &status);
	if (r < 0) {
		syslog(LOG_ERR, "cannot fork: %s", hs_strerror(r));
		utmp_write(&t, NULL, NULL);
		hs_session_end(&s, PAM_ABORT);
		hs_die(E_FAILURE, "cannot fork: %s", hs_strerror(r));
	}
	utmp_write(&t, NULL, NULL);
	/* the terminal is root's again until the next login takes it */
	if (fchown(STDIN_FILENO, 0, t.root_gid) < 0 || fchmod(STDIN_FILENO, 0600) < 0)
		syslog(LOG_WARNING, "%s: cannot give the terminal back to root: %m", t.path);
	hs_session_end(&s, PAM_SUCCESS);
	hs_session_env_free(&env);
	free(o.user);
	closelog();
	return status;
}
