/* su and runuser: run a shell or a command as another user (util-linux
 * semantics).  su.c and runuser.c are two-line mains that call su_main()
 * with their mode, as util-linux shares su-common.c.
 *
 * su is installed setuid root (DESIGN §5): a caller who is not root must
 * authenticate as the target through the PAM service "su" ("su-l" with
 * --login).  runuser is plain 0755 and refuses anyone but root; it skips
 * authentication and uses the services "runuser" and "runuser-l".
 *
 * The parent stays root, waits for the shell, forwards SIGTERM, SIGHUP,
 * SIGINT and SIGQUIT to it, and closes the PAM session afterwards as root
 * (lib/session).  The caller's environment is handed on (su's
 * compatibility default) only without the variables that change how a
 * program starts (LD_*, IFS, BASH_ENV, ...): hs_envname_unsafe().
 *
 * Exit status (su(1)): the command's; 128 + N when it was killed by signal
 * N; 1 for an error of su itself before the command ran (authentication
 * included); 126 when the command cannot be executed; 127 when it is not
 * found. */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#include <security/pam_appl.h>

#include "account.h"
#include "cli.h"
#include "config.h"
#include "layout.h"
#include "logrecords.h"
#include "names.h"
#include "session.h"
#include "shells.h"
#include "su-common.h"
#include "util.h"

/* Set once by su_main() from the caller's mode, never from argv[0]: the
 * name of a setuid program (its syslog tag, its PAM service) is not the
 * caller's to choose. */
static bool runuser;

#define PROG_NAME      (runuser ? "runuser" : "su")
#define DEFAULT_SHELL  "/bin/sh"
#define DEFAULT_USER   "root"

#define E_FAILURE      1

/* -G may be given this many times. */
#define MAX_SUPP_GROUPS 64

extern char **environ;

struct options {
	const char *command;
	bool session_command;   /* --session-command: no new session */
	bool fast, login, preserve, pty;
	const char *shell;
	const char *user;       /* runuser -u */
	const char *group;      /* -g */
	const char *supp[MAX_SUPP_GROUPS];
	size_t nsupp;
	const char *whitelist[64];
	size_t nwhitelist;
};

static noreturn void usage(int status)
{
	if (status != 0) {
		fprintf(stderr, "Try '%s --help' for more information.\n", PROG_NAME);
		exit(status);
	}
	printf("\nUsage:\n");
	if (runuser)
		printf(" %1$s [options] -u <user> [[--] <command>]\n"
		       " %1$s [options] [-] [<user> [<argument>...]]\n\n"
		       "Run <command> with the effective user ID and group ID of <user>.  If -u is\n"
		       "not given, fall back to su(1)-compatible semantics and execute standard shell.\n"
		       "The options -c, -f, -l, and -s are mutually exclusive with -u.\n",
		       PROG_NAME);
	else
		printf(" %s [options] [-] [<user> [<argument>...]]\n\n"
		       "Change the effective user ID and group ID to that of <user>.\n"
		       "A mere - implies -l.  If <user> is not given, root is assumed.\n",
		       PROG_NAME);
	printf("\nOptions:\n");
	if (runuser)
		printf(" -u, --user <user>               username\n");
	printf(
		" -m, -p, --preserve-environment      do not reset environment variables\n"
		" -w, --whitelist-environment <list>  don't reset specified variables\n"
		"\n"
		" -g, --group <group>             specify the primary group\n"
		" -G, --supp-group <group>        specify a supplemental group\n"
		"\n"
		" -, -l, --login                  make the shell a login shell\n"
		" -c, --command <command>         pass a single command to the shell with -c\n"
		" --session-command <command>     pass a single command to the shell with -c\n"
		"                                   and do not create a new session\n"
		" -f, --fast                      pass -f to the shell (for csh or tcsh)\n"
		" -s, --shell <shell>             run <shell> if /etc/shells allows it\n"
		" -P, --pty                       create a new pseudo-terminal\n"
		"\n"
		" -h, --help                      display this help\n"
		" -V, --version                   display version\n"
		"\nFor more details see %s(1).\n", PROG_NAME);
	if (fflush(stdout) != 0 || ferror(stdout))
		exit(E_FAILURE);
	exit(0);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_SESSION_COMMAND = 256 };
	static const struct option longopts[] = {
		{ "command",               required_argument, NULL, 'c' },
		{ "session-command",       required_argument, NULL, OPT_SESSION_COMMAND },
		{ "fast",                  no_argument,       NULL, 'f' },
		{ "login",                 no_argument,       NULL, 'l' },
		{ "preserve-environment",  no_argument,       NULL, 'p' },
		{ "pty",                   no_argument,       NULL, 'P' },
		{ "shell",                 required_argument, NULL, 's' },
		{ "group",                 required_argument, NULL, 'g' },
		{ "supp-group",            required_argument, NULL, 'G' },
		{ "user",                  required_argument, NULL, 'u' },
		{ "whitelist-environment", required_argument, NULL, 'w' },
		{ "help",                  no_argument,       NULL, 'h' },
		{ "version",               no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:fg:G:lmpPs:u:hVw:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case OPT_SESSION_COMMAND:
			o->command = optarg;
			o->session_command = c == OPT_SESSION_COMMAND;
			break;
		case 'f':
			o->fast = true;
			break;
		case 'g':
			o->group = optarg;
			break;
		case 'G':
			if (o->nsupp == MAX_SUPP_GROUPS)
				hs_die(E_FAILURE, "specifying more than %d supplemental groups is not "
				       "possible", MAX_SUPP_GROUPS);
			o->supp[o->nsupp++] = optarg;
			break;
		case 'l':
			o->login = true;
			break;
		case 'm':
		case 'p':
			o->preserve = true;
			break;
		case 'P':
			o->pty = true;
			break;
		case 's':
			o->shell = optarg;
			break;
		case 'u':
			if (!runuser)
				usage(E_FAILURE);
			o->user = optarg;
			break;
		case 'w':
			if (o->nwhitelist == HS_ARRAY_SIZE(o->whitelist))
				hs_die(E_FAILURE, "too many --whitelist-environment options");
			o->whitelist[o->nwhitelist++] = optarg;
			break;
		case 'h':
			usage(0);
		case 'V':
			hs_print_version();
		default:
			usage(E_FAILURE);
		}
	}
	if (o->preserve && o->nwhitelist > 0)
		hs_die(E_FAILURE, "mutually exclusive arguments: --preserve-environment "
		       "--whitelist-environment");
}

/* The terminal of the caller, for PAM_TTY and the logs ("pts/3"), or NULL. */
static const char *caller_tty(void)
{
	static char path[64];

	for (int fd = 0; fd <= 2; fd++) {
		if (isatty(fd) && ttyname_r(fd, path, sizeof(path)) == 0)
			return strncmp(path, "/dev/", 5) == 0 ? path + 5 : path;
	}
	return NULL;
}

static gid_t group_gid(const char *name)
{
	char shown[64];
	struct group *gr = hs_names_group_valid(name) ? getgrnam(name) : NULL;

	if (!gr)
		hs_die(E_FAILURE, "group %s does not exist", hs_printable(name, shown, sizeof(shown)));
	return gr->gr_gid;
}

/* A failed append to one of the logs, in the system log. */
static void log_unwritten(const char *path, int r)
{
	if (r == -HS_E_NOTREG || r == -HS_E_NLINK || r == -HS_E_OWNER)
		syslog(LOG_WARNING, "%s is not a regular file of root's: not written", path);
	else
		syslog(LOG_WARNING, "cannot append to %s: %s", path, hs_strerror(r));
}

/* shadow-utils' sulog line: "SU MM/DD HH:MM + TTY CALLER-TARGET". */
static void sulog(const struct hs_config *defs, bool ok, const char *tty, const char *from,
                  const char *to)
{
	const char *path = hs_config_get_str(defs, "SULOG_FILE", NULL);
	char line[256];
	struct tm tm;
	time_t now = time(NULL);
	int n, r;

	if (!path || path[0] != '/')
		return;
	localtime_r(&now, &tm);
	n = snprintf(line, sizeof(line), "SU %02d/%02d %02d:%02d %c %s %s-%s\n", tm.tm_mon + 1,
		     tm.tm_mday, tm.tm_hour, tm.tm_min, ok ? '+' : '-', tty ? tty : "???",
		     from ? from : "???", to);
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	r = hs_logrecords_append_line(path, line, (size_t)n, true);
	if (r < 0)
		log_unwritten(path, r);
}

/* A refused su in FTMP_FILE (btmp, lastb's), when that file exists, as
 * util-linux's su writes it to btmp: the target's name, the terminal
 * ("pts/3") and its number ("3") as the id.  Appended without a lock
 * (logrecords.h): the caller may stop su at any instant. */
static void btmp_failure(const struct hs_config *defs, const char *tty, const char *to)
{
	struct utmpx ut;
	const char *id = NULL;
	int r;

	if (tty) {
		size_t n = strlen(tty), digits = 0;

		while (digits < n && tty[n - digits - 1] >= '0' && tty[n - digits - 1] <= '9')
			digits++;
		id = tty + n - digits;
	}
	hs_logrecords_utmp_fill(&ut, LOGIN_PROCESS, to, tty, id, NULL);
	r = hs_logrecords_failure(defs, &ut);
	if (r < 0 && r != -ENOENT)
		log_unwritten(hs_config_get_str(defs, "FTMP_FILE", HS_BTMP_FILE), r);
}

static void log_attempt(const struct hs_config *defs, bool ok, const char *tty,
                        const char *from, const char *to)
{
	syslog(LOG_NOTICE, "%s(to %s) %s on %s", ok ? "" : (runuser ? "FAILED RUNUSER " :
	       "FAILED SU "), to, from ? from : "", tty ? tty : "none");
	if (!runuser)
		sulog(defs, ok, tty, from, to);
}

static void set_env(struct hs_env *env, const char *name, const char *value)
{
	if (hs_session_env_set(env, name, value, true) < 0)
		hs_die(E_FAILURE, "failed to modify environment");
}

/* util-linux's rules: --login starts from nothing but TERM and the
 * whitelist; otherwise the caller's environment with HOME and SHELL (and
 * USER, LOGNAME for a target other than root) replaced, unless -p. */
static void build_env(struct hs_env *env, const struct hs_env *caller, const struct options *o,
                      const struct passwd *pw, const char *shell, const struct hs_config *defs)
{
	if (o->login) {
		const char *term = hs_session_env_get(caller, "TERM");

		if (term && hs_session_env_term_ok(term))
			set_env(env, "TERM", term);
		if (shell)
			set_env(env, "SHELL", shell);
		set_env(env, "PATH", hs_session_default_path(defs, pw->pw_uid));
		set_env(env, "HOME", pw->pw_dir);
		set_env(env, "USER", pw->pw_name);
		set_env(env, "LOGNAME", pw->pw_name);
		for (size_t i = 0; i < o->nwhitelist; i++) {
			_cleanup_free_ char *list = strdup(o->whitelist[i]);
			char *save = NULL;

			if (!list)
				hs_die(E_FAILURE, "out of memory");
			for (char *name = strtok_r(list, ",", &save); name;
			     name = strtok_r(NULL, ",", &save)) {
				const char *v = hs_session_env_get(caller, name);
				if (v && hs_session_env_set(env, name, v, false) == -ENOMEM)
					hs_die(E_FAILURE, "out of memory");
			}
		}
		return;
	}
	for (size_t i = 0; i < caller->n; i++)
		if (hs_session_env_put(env, caller->v[i], true) == -ENOMEM)
			hs_die(E_FAILURE, "out of memory");
	if (o->preserve)
		return;
	set_env(env, "HOME", pw->pw_dir);
	if (shell)
		set_env(env, "SHELL", shell);
	if (hs_config_get_bool(defs, "ALWAYS_SET_PATH", false))
		set_env(env, "PATH", hs_session_default_path(defs, pw->pw_uid));
	if (pw->pw_uid != 0) {
		set_env(env, "USER", pw->pw_name);
		set_env(env, "LOGNAME", pw->pw_name);
	}
}

/* The target account: runuser -u USER, else the first operand, else root. */
static void resolve_target(int argc, char **argv, struct options *o, struct passwd *pw,
                           char **pwbuf)
{
	const char *target = DEFAULT_USER;
	char shown[64];
	int r;

	if (optind < argc && strcmp(argv[optind], "-") == 0) {
		o->login = true;
		optind++;
	}
	if (o->login && o->preserve) {
		hs_warn("ignoring --preserve-environment, it's mutually exclusive with --login");
		o->preserve = false;
	}
	if (o->user) {
		if (o->shell || o->fast || o->command || o->login)
			hs_die(E_FAILURE, "options --{shell,fast,command,session-command,login} and "
			       "--user are mutually exclusive");
		if (optind == argc)
			hs_die(E_FAILURE, "no command was specified");
		target = o->user;
	} else if (optind < argc) {
		target = argv[optind++];
	}

	r = hs_names_user_valid(target) ? hs_account_getpwnam(target, pw, pwbuf) : -ENOENT;
	if (r < 0 || !pw->pw_name || !*pw->pw_name || !pw->pw_dir || !*pw->pw_dir)
		hs_die(E_FAILURE, "user %s does not exist", hs_printable(target, shown, sizeof(shown)));
	if (!pw->pw_shell || !*pw->pw_shell)
		pw->pw_shell = DEFAULT_SHELL;
}

/* -g and -G replace the whole group list (util-linux): the -g group is
 * primary, else the first -G one.  Returns the primary group. */
static gid_t choose_groups(const struct options *o, const struct passwd *pw, gid_t *groups,
                           size_t *ngroups)
{
	*ngroups = 0;
	if (o->group)
		groups[(*ngroups)++] = group_gid(o->group);
	for (size_t i = 0; i < o->nsupp; i++)
		groups[(*ngroups)++] = group_gid(o->supp[i]);
	return *ngroups ? groups[0] : pw->pw_gid;
}

/* su only: the caller proves they may become the target.  An expired
 * password is changed here, as util-linux does. */
static void authenticate(struct hs_session *s, const struct hs_config *defs, const char *tty,
                         const char *from, const char *to)
{
	int r = pam_authenticate(s->pamh, 0);

	if (r == PAM_SUCCESS) {
		r = pam_acct_mgmt(s->pamh, 0);
		if (r == PAM_NEW_AUTHTOK_REQD)
			r = pam_chauthtok(s->pamh, PAM_CHANGE_EXPIRED_AUTHTOK);
	}
	log_attempt(defs, r == PAM_SUCCESS, tty, from, to);
	if (r != PAM_SUCCESS) {
		char msg[128];

		btmp_failure(defs, tty, to);

		snprintf(msg, sizeof(msg), "%s", pam_strerror(s->pamh, r));
		hs_session_end(s, r);
		sleep((unsigned)hs_config_get_long(defs, "FAIL_DELAY", 0, 60, 1));
		hs_die(E_FAILURE, "%s", msg);
	}
}

/* The shell to run: -s, or $SHELL with -p, unless the target's own shell
 * is not in /etc/shells and the caller is not root. */
static char *choose_shell(const struct options *o, const struct hs_env *caller_env,
                          const struct passwd *pw, bool caller_root)
{
	const char *want = o->shell;
	struct hs_shells sh = { 0 };
	char *shell;

	if (!want && o->preserve)
		want = hs_session_env_get(caller_env, "SHELL");
	/* a restricted account (uucp, git-shell), one whose shell is not in
	 * /etc/shells: a standard shell would open it up.  An unreadable
	 * file lists nothing: the account stays restricted. */
	if (want && !caller_root &&
	    !(hs_shells_load(&sh, HS_ETC_SHELLS) == 0 && hs_shells_contains(&sh, pw->pw_shell))) {
		hs_warn("using restricted shell %s", pw->pw_shell);
		want = NULL;
	}
	hs_shells_free(&sh);
	shell = strdup(want ? want : pw->pw_shell);
	if (!shell)
		hs_die(E_FAILURE, "out of memory");
	return shell;
}

/* The limits util-linux's su and runuser (2.38) give every session
 * before PAM's session modules (pam_limits) set theirs: no nice or
 * realtime priority, no file size or address space cap, and a soft
 * RLIMIT_NOFILE of 1024 (select()'s FD_SETSIZE) under the hard limit the
 * caller had.  What the caller raised or capped does not reach the
 * target's session; failures are ignored, as there.  RLIMIT_CORE is the
 * caller's again for pam_limits to start from (hs_session_open). */
static void reset_session_limits(void)
{
	static const struct {
		int resource;
		struct rlimit limit;
	} fixed[] = {
		{ RLIMIT_NICE, { 0, 0 } },
		{ RLIMIT_RTPRIO, { 0, 0 } },
		{ RLIMIT_FSIZE, { RLIM_INFINITY, RLIM_INFINITY } },
		{ RLIMIT_AS, { RLIM_INFINITY, RLIM_INFINITY } },
	};
	struct rlimit nofile;

	for (size_t i = 0; i < HS_ARRAY_SIZE(fixed); i++)
		(void)setrlimit(fixed[i].resource, &fixed[i].limit);
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != FD_SETSIZE) {
		nofile.rlim_cur = FD_SETSIZE;
		(void)setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* Groups, the limits, then the PAM session (with its messages only for
 * an interactive login shell); *core and *mask as for hs_session_open. */
static void open_session(struct hs_session *s, const struct options *o, const struct passwd *pw,
                         gid_t gid, const gid_t *groups, size_t ngroups, struct rlimit *core,
                         mode_t *mask)
{
	int r = hs_session_set_groups(pw->pw_name, gid, ngroups ? groups : NULL, ngroups);

	if (r < 0) {
		hs_session_end(s, PAM_ABORT);
		hs_die(E_FAILURE, "cannot set groups: %s", hs_strerror(r));
	}
	s->suppress_info = !o->login || o->command;
	reset_session_limits();
	r = hs_session_open(s, 0, core, mask);
	if (r != PAM_SUCCESS) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s", pam_strerror(s->pamh, r));
		hs_session_end(s, r);
		hs_die(E_FAILURE, "cannot open session: %s", msg);
	}
}

/* The shell's argv: "-sh" for a login shell, then -f, -c COMMAND and the
 * remaining operands.  NULL when out of memory. */
static char **shell_argv(const struct options *o, const char *shell, int argc, char **argv,
                         char **arg0)
{
	const char *base = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
	char **cargv = calloc((size_t)(argc - optind) + 5, sizeof(*cargv));
	size_t nc = 0;

	if (!cargv || asprintf(arg0, "%s%s", o->login ? "-" : "", base) < 0) {
		*arg0 = NULL;
		free(cargv);
		return NULL;
	}
	cargv[nc++] = *arg0;
	if (o->fast)
		cargv[nc++] = "-f";
	if (o->command) {
		cargv[nc++] = "-c";
		cargv[nc++] = (char *)o->command;
	}
	for (int i = optind; i < argc; i++)
		cargv[nc++] = argv[i];
	cargv[nc] = NULL;
	return cargv;
}

int su_main(int argc, char **argv, enum su_mode mode)
{
	static const char *const services[2][2] = { { "su", "su-l" }, { "runuser", "runuser-l" } };
	struct options o = { 0 };
	struct hs_env caller_env = { 0 }, env = { 0 };
	struct hs_session s;
	struct hs_child child = { 0 };
	struct hs_config *defs = NULL;
	struct passwd pw, me;
	_cleanup_free_ char *pwbuf = NULL, *mebuf = NULL, *shell = NULL, *arg0 = NULL;
	gid_t groups[MAX_SUPP_GROUPS + 1], gid;
	size_t ngroups = 0;
	const char *from = NULL, *tty;
	char **cargv;
	mode_t caller_umask;
	struct rlimit caller_core;
	bool caller_root, same_session;
	int r, status;

	runuser = mode == RUNUSER_MODE;
	/* Taken before hs_privs_init() replaces the environment: what
	 * su hands on to the target (filtered, see hs_session_env_capture). */
	if (hs_session_env_capture(&caller_env, environ) < 0)
		hs_session_env_free(&caller_env);
	caller_umask = umask(077);
	umask(caller_umask);
	hs_session_tool_init(argc, argv, PROG_NAME, &caller_core);

	parse_options(argc, argv, &o);
	caller_root = getuid() == 0 && geteuid() == 0;
	if (runuser && !caller_root)
		hs_die(E_FAILURE, "may not be used by non-root users");
	if (geteuid() != 0)
		hs_die(E_FAILURE, "cannot change identity: %s is not installed setuid root",
		       PROG_NAME);
	if ((o.group || o.nsupp) && !caller_root)
		hs_die(E_FAILURE, "only root can specify alternative groups");

	resolve_target(argc, argv, &o, &pw, &pwbuf);
	gid = choose_groups(&o, &pw, groups, &ngroups);

	if (hs_account_getpwuid(getuid(), &me, &mebuf) == 0)
		from = me.pw_name;
	tty = caller_tty();
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs) < 0)
		defs = NULL;
	openlog(PROG_NAME, LOG_PID, LOG_AUTH);

	r = hs_session_start(&s, services[runuser][o.login], pw.pw_name, tty, from, NULL);
	if (r != PAM_SUCCESS) {
		log_attempt(defs, false, tty, from, pw.pw_name);
		hs_die(E_FAILURE, "%s", pam_strerror(s.pamh, r));
	}
	if (!runuser)
		authenticate(&s, defs, tty, from, pw.pw_name);

	/* A command run as another user gets a session of its own, with no
	 * controlling terminal, so it cannot push keystrokes into the
	 * caller's (TIOCSTI): su -c, and runuser -u USER -- CMD, where
	 * util-linux keeps the caller's session.  An interactive shell keeps
	 * it (job control needs the terminal). */
	same_session = o.session_command || (!o.command && !(o.user && optind < argc)) ||
		       pw.pw_uid == 0;
	if (!o.user)
		shell = choose_shell(&o, &caller_env, &pw, caller_root);

	/* the session's umask: the caller's, unless pam_umask sets one */
	open_session(&s, &o, &pw, gid, groups, ngroups, &caller_core, &caller_umask);

	build_env(&env, &caller_env, &o, &pw, shell, defs);
	cargv = o.user ? argv + optind : shell_argv(&o, shell, argc, argv, &arg0);
	if (hs_session_env_add_pam(&env, s.pamh) < 0 || !cargv) {
		hs_session_end(&s, PAM_BUF_ERR);
		hs_die(E_FAILURE, "out of memory");
	}

	/* runuser -u runs the command itself, found on the target's PATH */
	child.path = o.user ? argv[optind] : shell;
	child.search_path = o.user != NULL;
	child.uid = pw.pw_uid;
	child.gid = gid;
	child.argv = cargv;
	child.envp = env.v ? env.v : (char *[]){ NULL };
	child.umask = caller_umask;      /* the caller's, or pam_umask's */
	child.dir = o.login ? pw.pw_dir : NULL;
	child.tty = o.pty ? HS_CHILD_PTY : same_session ? HS_CHILD_SAME_SESSION :
		    HS_CHILD_NEW_SESSION;
	child.forward_int_quit = o.pty || !same_session;
	child.verbose = true;
	child.core_limit = caller_core;   /* the session's, after pam_limits */
	const struct group *tty_group = getgrnam("tty");
	child.pty_gid = tty_group ? tty_group->gr_gid : (gid_t)-1;
	hs_config_free(defs);

	r = hs_session_run(&child, &status);
	if (r < 0) {
		hs_session_end(&s, PAM_ABORT);
		hs_die(E_FAILURE, "cannot start the session: %s", hs_strerror(r));
	}
	hs_session_end(&s, PAM_SUCCESS);
	hs_session_env_free(&env);
	hs_session_env_free(&caller_env);
	if (!o.user)
		free(cargv);
	closelog();
	return status;
}
