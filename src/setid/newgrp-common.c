/* newgrp and sg: run a shell (or, for sg, a command) with another group.
 *
 * One program, newgrp_main(); newgrp.c and sg.c are two-line mains that
 * name their mode (argv[0] chooses nothing).  Installed setuid root (DESIGN §5): the
 * kernel lets only root change the real and effective gid to a group the
 * caller may not already use.
 *
 * Who may switch (shadow-utils' rules): root always; a member of the group
 * (its gid is among the caller's groups or is their login group, or their
 * name is in the member list of /etc/group or /etc/gshadow) without a
 * password; anyone else only with the group password of /etc/gshadow (or
 * of /etc/group when gshadow has no entry), verified with libxcrypt, one
 * guess of the caller's at a time, a wrong one costing a delay that a
 * kill does not shorten (check_group_password).  A
 * group without a usable password refuses non-members.  The supplementary
 * groups are kept and the new group is added to them.
 *
 * Privileged work is short: look up the caller and the group, read
 * /etc/gshadow, verify the password, set the groups.  Then every uid and
 * gid (real, effective, saved) is set, checked, and the caller's own
 * resource limits and umask come back before the shell is executed.  The
 * shell replaces this process: no root process waits behind the session
 * (shadow-utils' parent that logs "returned to group" is left out on
 * purpose; a password check's guard (guessguard.h) has ended before).
 *
 * Messages and exit codes follow shadow-utils 4.13's newgrp(1); where we
 * differ, newgrp(1) of this package says so. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "config.h"
#include "envname.h"
#include "etc_read.h"
#include "guessguard.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "newgrp-common.h"
#include "timeouts.h"
#include "ttyconv.h"
#include "userdir.h"
#include "util.h"

#define E_SUCCESS     0
#define E_FAILURE     1
#define E_CMD_NOEXEC  126
#define E_CMD_NOTFOUND 127

#define SHELL_DEFAULT "/bin/sh"

/* Longest password read; the rest of a longer line is read and dropped
 * (and the password then cannot match). */
#define PASS_MAX 512

/* Set once by newgrp_main() from the caller's mode. */
static bool is_sg;

extern char **environ;

/* ---- the caller's own state, given back to the shell ---- */

/* hs_privs_init raises soft limits and zeroes RLIMIT_CORE for our
 * own safety; the user's shell gets the limits the user had. */
static const int saved_resources[] = {
	RLIMIT_FSIZE, RLIMIT_CPU, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_NOFILE, RLIMIT_CORE,
};
static struct rlimit saved_limits[HS_ARRAY_SIZE(saved_resources)];
static bool saved_limit_ok[HS_ARRAY_SIZE(saved_resources)];
static mode_t saved_umask;

static void save_caller_state(void)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(saved_resources); i++)
		saved_limit_ok[i] = getrlimit(saved_resources[i], &saved_limits[i]) == 0;
	saved_umask = umask(077);
	umask(saved_umask);
}

/* Still as root (the core limit's hard value may have to go back up).
 * SIGXFSZ too: under a `ulimit -f` hs_privs_init ignores it for us, and
 * an ignored signal survives execve, so the shell and everything it runs
 * would get EFBIG where the caller's programs are killed. */
static void restore_caller_state(void)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(saved_resources); i++)
		if (saved_limit_ok[i])
			(void)setrlimit(saved_resources[i], &saved_limits[i]);
	umask(saved_umask);
	hs_privs_restore_caller_signals();
}

static _Noreturn void usage(int status)
{
	FILE *f = status == E_SUCCESS ? stdout : stderr;

	fputs(is_sg ? "Usage: sg group [[-c] command]\n" : "Usage: newgrp [-] [group]\n", f);
	if (status == E_SUCCESS)
		fputs("\n"
		      "  -, -l                         start a login shell\n"
		      "      --help                    display this help message and exit\n"
		      "      --version                 display the version and exit\n", f);
	closelog();
	exit(status);
}

/* ---- group lookups ---- */

static bool in_member_list(char **mem, const char *name)
{
	for (; mem && *mem; mem++)
		if (strcmp(*mem, name) == 0)
			return true;
	return false;
}

/* The caller's supplementary groups, with room for one more. */
static gid_t *caller_groups(size_t *n)
{
	int count = getgroups(0, NULL);
	_cleanup_free_ gid_t *g = count < 0 ? NULL : calloc((size_t)count + 1, sizeof *g);

	if (!g || (count = getgroups(count, g)) < 0)
		return NULL;
	*n = (size_t)count;
	return TAKE_PTR(g);
}

static bool gid_in(const gid_t *g, size_t n, gid_t gid)
{
	for (size_t i = 0; i < n; i++)
		if (g[i] == gid)
			return true;
	return false;
}

/* ---- the group password ---- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Catch, while the echo is off, every signal that would end us there
 * (the set su's and login's prompt catches: SIGALRM of a timer the
 * caller left running, SIGUSR1, SIGPIPE, SIGXCPU ... as well as ^C and a
 * hang-up) and the terminal's stop signals, unless the caller ignores it:
 * uncaught, one of them ended newgrp with the caller's terminal still
 * silent.  caught[sig] says which, old[sig] what to put back. */
static void catch_prompt_signals(struct sigaction *old, bool *caught)
{
	/* no SA_RESTART: a signal must end the read */
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;

	hs_ttyconv_ending_signals(&set);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTTOU);
	for (int sig = 1; sig < NSIG; sig++)
		caught[sig] = sigismember(&set, sig) == 1 && sigaction(sig, NULL, &old[sig]) == 0 &&
			      old[sig].sa_handler != SIG_IGN && sigaction(sig, &sa, NULL) == 0;
}

static void release_prompt_signals(const struct sigaction *old, const bool *caught)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (caught[sig])
			sigaction(sig, &old[sig], NULL);
}

/* Read a password with echo off from /dev/tty (or, without a terminal,
 * from standard input, as getpass(3) does).  A signal while the echo is
 * off restores the terminal before giving up.  NULL on end of input or
 * interruption; the caller wipes the result. */
static char *read_password(const char *prompt)
{
	static struct sigaction old_sa[NSIG];
	static bool caught[NSIG];
	struct termios saved, quiet;
	bool restore = false, too_long = false, got_line = false;
	size_t len = 0;
	int in = STDIN_FILENO, out = STDERR_FILENO;
	_cleanup_close_ int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	_cleanup_secret_buf_ struct hs_secret_buf secret = { malloc(PASS_MAX + 1), PASS_MAX + 1 };
	char *buf = secret.p;

	if (!buf)
		return NULL;
	if (tty >= 0)
		in = out = tty;
	catch_prompt_signals(old_sa, caught);

	if (tcgetattr(in, &saved) == 0) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
		restore = tcsetattr(in, TCSAFLUSH, &quiet) == 0;
	}
	(void)hs_write_full(out, prompt, strlen(prompt));
	while (!interrupted) {
		char ch;
		ssize_t r = read(in, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		/* end of input without a newline still counts as a line */
		got_line = true;
		if (ch == '\n')
			break;
		if (len < PASS_MAX)
			buf[len++] = ch;
		else
			too_long = true;
	}
	buf[len] = '\0';
	if (restore) {
		(void)tcsetattr(in, TCSAFLUSH, &saved);
		(void)hs_write_full(out, "\n", 1);
	}
	release_prompt_signals(old_sa, caught);
	if (interrupted || !got_line)
		return NULL;
	if (too_long)   /* cannot match; still verified for the time it costs */
		hs_wipe(buf, PASS_MAX + 1);
	return TAKE_PTR(secret.p);
}

/* ---- one guess at a time per caller ---- */

/* The caller's guess lock (docs/decisions.md, "Guesses are serialized per
 * caller, not per target"), the one the password helper and the PAM
 * module take: the flock on the aging file of the caller's own directory
 * in the tree, so one guess of this caller at a time, whether at a group
 * password or a user's.  A caller without a directory (no tree, or none
 * of theirs) locks the byte numbered by their uid of /etc/gshadow: root's
 * file, opened by us (root) to lock and never written; only root and the
 * shadow group can open it to hold bytes of it, nothing is created, and
 * no other caller's newgrp waits for it.  -ENOENT when there is no
 * /etc/gshadow: every group password is then in the world-readable
 * /etc/group, open to guessing offline; nothing to serialize.  The locked
 * fd (O_CLOEXEC: the shell does not inherit it), or dies. */
static int lock_guesses(const struct passwd *pw)
{
	const char *base;
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	_cleanup_close_ int etcfd = hs_fileio_open_parent(HS_ETC_GSHADOW, &base);
	bool own = false;
	char why[64];
	int fd;

	if (etcfd < 0)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_ETC_GSHADOW, hs_strerror(etcfd));
	fd = hs_userdir_guess_lock_caller(treefd, pw->pw_name, pw->pw_uid, etcfd, base,
					  HS_LOCK_TIMEOUT_MS, &own);
	if (fd == -ENOENT && !own)
		return fd;
	if (fd < 0) {
		char path[HS_PATHBUF_USER];

		hs_die(E_FAILURE, "cannot lock %s for a password check: %s",
		       own ? hs_userdir_path(path, sizeof path, pw->pw_name, HS_FILE_AGING) :
			     HS_ETC_GSHADOW,
		       hs_lock_strerror(fd, HS_LOCK_TIMEOUT_MS, why, sizeof why));
	}
	return fd;
}

/* A non-member: ask for the group password and return only when it is
 * right.  One guess of this caller at a time (lock_guesses), and a
 * failure holds the lock through the delay, in a guard the caller cannot
 * kill (guessguard.h). */
static void check_group_password(const struct passwd *pw, const char *group, const char *hash)
{
	/* wiped whole: a typed NUL byte would stop a strlen() */
	_cleanup_secret_buf_ struct hs_secret_buf secret = { read_password("Password: "),
							     PASS_MAX + 1 };
	const char *pass = secret.p;
	bool ok = false;
	struct hs_guessguard guard = HS_GUESSGUARD_INIT;
	int lockfd, r;

	if (!pass)
		exit(E_FAILURE);
	lockfd = lock_guesses(pw);
	if (lockfd >= 0) {
		r = hs_guessguard_start(&guard, lockfd, HS_NEWGRP_FAIL_DELAY_MS);
		if (r < 0)
			hs_die(E_FAILURE, "cannot start the failure delay: %s", hs_strerror(r));
	}
	/* empty, '!' (locked) and '*' mean no password: nobody gets in */
	if (hash[0] != '\0' && hash[0] != '!' && hash[0] != '*') {
		ok = hs_hash_verify_password(pass, hash, false) == 1;
	} else {
		/* no usable password: spend the same time, so the prompt does
		 * not tell whether the group has one */
		struct hs_hash_policy def;
		hs_hash_policy_default(&def);
		hs_hash_dummy_verify(pass, &def);
	}
	if (lockfd >= 0)
		hs_guessguard_end(&guard, ok);
	else if (!ok)
		hs_sleep_whole_ms(HS_NEWGRP_FAIL_DELAY_MS);
	if (lockfd >= 0)
		close(lockfd);
	if (!ok) {
		hs_secret_buf_freep(&secret);   /* exit() runs no cleanup */
		syslog(LOG_INFO, "Invalid password for group '%s' from '%s'", group, pw->pw_name);
		fputs("Invalid password.\n", stderr);
		exit(E_FAILURE);
	}
}

/* ---- the new process ---- */

/* What the caller's environment may not pass into the shell: a malformed
 * entry and hs_envname_unsafe()'s names (the loader's, libc's, the
 * shells' and interpreters' start-up variables, as su filters them).  The
 * shell runs as the caller, so this is hygiene, not a privilege
 * boundary. */
static bool env_dropped(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return !eq || eq == entry || hs_envname_unsafe(entry, (size_t)(eq - entry));
}

static bool env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The shell's environment from the caller's original one: everything but
 * env_dropped() names; for a login (-) only PATH, HOME, SHELL and TERM, as
 * shadow-utils keeps them. */
static char **child_environment(char **envp, bool login)
{
	size_t n = 0, k = 0;
	char **out;

	for (char **e = envp; e && *e; e++)
		n++;
	out = calloc(n + 1, sizeof *out);
	if (!out)
		return NULL;
	for (char **e = envp; e && *e; e++) {
		if (env_dropped(*e))
			continue;
		if (login && !env_is(*e, "PATH") && !env_is(*e, "HOME") && !env_is(*e, "SHELL") &&
		    !env_is(*e, "TERM"))
			continue;
		out[k++] = *e;
	}
	out[k] = NULL;
	return out;
}

static const char *original_env(char **envp, const char *name)
{
	for (char **e = envp; e && *e; e++)
		if (env_is(*e, name))
			return *e + strlen(name) + 1;
	return NULL;
}

/* Every id of the process to the caller's uid and the new gid, checked. */
static void drop_to(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (setresgid(gid, gid, gid) < 0)
		hs_die(E_FAILURE, "setgid: %s", strerror(errno));
	if (setresuid(uid, uid, uid) < 0)
		hs_die(E_FAILURE, "setuid: %s", strerror(errno));
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
	    eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		hs_die(E_FAILURE, "cannot drop privileges");
}

static _Noreturn void exec_shell(const char *path, const char *argv0, const char *command,
                                 char **env)
{
	int e;

	if (command) {
		char *const argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
		execve(SHELL_DEFAULT, argv, env);
		e = errno;
		hs_warn("%s: %s", SHELL_DEFAULT, strerror(e));
	} else {
		char *const argv[] = { (char *)argv0, NULL };
		execve(path, argv, env);
		e = errno;
		char shown[256];
		hs_warn("Cannot execute %s: %s", hs_printable(path, shown, sizeof shown),
			strerror(e));
	}
	exit(e == ENOENT ? E_CMD_NOTFOUND : E_CMD_NOEXEC);
}

/* ---- logging ---- */

static void log_switch(const char *user, const char *group)
{
	char login[64], tty[64];
	const char *l = getlogin();
	const char *t = ttyname(STDIN_FILENO);

	if (t && strncmp(t, "/dev/", 5) == 0)
		t += 5;
	hs_printable(l ? l : "???", login, sizeof login);
	hs_printable(t ? t : "???", tty, sizeof tty);
	syslog(LOG_INFO, "user '%s' (login '%s' on %s) switched to group '%s'", user, login, tty,
	       group);
}

static bool syslog_enabled(void)
{
	struct hs_config *defs = NULL;
	bool on;

	/* the switch is logged unless login.defs says SYSLOG_SG_ENAB no */
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs) < 0)
		return true;
	on = hs_config_get_bool(defs, "SYSLOG_SG_ENAB", true);
	hs_config_free(defs);
	return on;
}

/* newgrp [-|-l] [group]
 * sg [-|-l] group [[-c] command] */
static void parse_args(int argc, char **argv, bool *login, const char **group,
                       const char **command)
{
	char **args = argv + 1;
	int n = argc - 1;

	if (n > 0 && (strcmp(args[0], "-") == 0 || strcmp(args[0], "-l") == 0)) {
		*login = true;
		args++;
		n--;
	}
	/* newgrp alone is the login group; sg needs a group */
	if (n == 0 && !is_sg)
		return;
	if (n == 0 || args[0][0] == '-')
		usage(E_FAILURE);
	*group = args[0];
	if (!is_sg || n == 1)
		return;
	/* "sg group -c command" (the man page) and "sg group command" (the
	 * usage line) both work */
	if (strcmp(args[1], "-c") == 0) {
		if (n < 3)
			usage(E_FAILURE);
		*command = args[2];
	} else {
		*command = args[1];
	}
}

/* The group asked for, or newgrp alone: the login group, which must exist. */
static void lookup_group(const char *group, const struct passwd *pw, struct group *gr,
                         char **grbuf)
{
	int r;

	if (group) {
		if (!hs_names_group_valid(group))
			hs_die(E_FAILURE, "provided group is not a valid group name");
		r = hs_account_getgrnam(group, gr, grbuf);
		if (r == -ENOENT)
			hs_die(E_FAILURE, "group '%s' does not exist", group);
	} else {
		r = hs_account_getgrgid(pw->pw_gid, gr, grbuf);
		if (r == -ENOENT) {
			syslog(LOG_CRIT, "GID '%lu' does not exist", (unsigned long)pw->pw_gid);
			hs_die(E_FAILURE, "GID '%lu' does not exist", (unsigned long)pw->pw_gid);
		}
	}
	if (r < 0)
		hs_die(E_FAILURE, "cannot look up group: %s", hs_strerror(r));
}

/* A member needs no password; with pam_group the group is only in the
 * process's list, which counts too.  Anyone else gives the group password
 * or does not come back. */
static void authorize(const struct passwd *pw, const struct group *gr, const gid_t *groups,
                      size_t n_groups)
{
	struct hs_gshadow_entry gshadow = HS_GSHADOW_ENTRY_INIT;
	const struct hs_gshadow *gs;
	int r;

	if (getuid() == 0 || gr->gr_gid == pw->pw_gid || gid_in(groups, n_groups, gr->gr_gid) ||
	    in_member_list(gr->gr_mem, pw->pw_name))
		return;
	r = hs_etc_read_gshadow_group(HS_ETC_GSHADOW, gr->gr_name, &gshadow);
	if (r < 0) {
		hs_etc_read_gshadow_free(&gshadow);
		hs_die(E_FAILURE, "cannot read %s: %s", HS_ETC_GSHADOW, hs_strerror(r));
	}
	gs = gshadow.found ? &gshadow.gs : NULL;
	if (!gs || !hs_records_list_contains(gs->members, pw->pw_name))
		check_group_password(pw, gr->gr_name,
				     gs ? gs->passwd : (gr->gr_passwd ? gr->gr_passwd : ""));
	/* wipes the hashes */
	hs_etc_read_gshadow_free(&gshadow);
}

/* The shell: $SHELL unless a login shell, else the account's, else
 * /bin/sh; argv0 is its basename, with "-" for a login shell. */
static const char *choose_shell(char **envp, const struct passwd *pw, bool login, char **argv0)
{
	const char *shell;
	const char *env_shell = original_env(envp, "SHELL");
	const char *base;

	if (!login && env_shell && *env_shell)
		shell = env_shell;
	else if (pw->pw_shell && *pw->pw_shell)
		shell = pw->pw_shell;
	else
		shell = SHELL_DEFAULT;
	base = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
	if (asprintf(argv0, "%s%s", login ? "-" : "", base) < 0) {
		*argv0 = NULL;
		hs_die(E_FAILURE, "out of memory");
	}
	return shell;
}

int newgrp_main(int argc, char **argv, enum newgrp_mode mode)
{
	/* the caller's environment as exec gave it, before
	 * hs_privs_init replaces environ */
	char **envp = environ;
	_cleanup_free_ char *pwbuf = NULL, *grbuf = NULL, *argv0 = NULL;
	_cleanup_free_ gid_t *groups = NULL;
	char why[128];
	struct passwd pw;
	struct group gr;
	bool login = false;
	const char *group = NULL, *command = NULL, *shell;
	size_t n_groups = 0;

	is_sg = mode == SG_MODE;
	/* before hs_privs_init changes them */
	save_caller_state();
	/* refuses an empty argv[0] too (how Linux 5.18 and later deliver
	 * argc == 0); the names in messages and the log are fixed */
	hs_privs_init(argc, argv, is_sg ? "sg" : "newgrp");
	hs_cli_set_prog(is_sg ? "sg" : "newgrp");
	openlog(is_sg ? "sg" : "newgrp", LOG_PID, LOG_AUTHPRIV);

	if (argc == 2 && strcmp(argv[1], "--help") == 0)
		usage(E_SUCCESS);
	if (argc == 2 && strcmp(argv[1], "--version") == 0)
		hs_print_version();

	if (hs_account_caller(&pw, &pwbuf, why, sizeof why) < 0)
		hs_die(E_FAILURE, "%s", why);

	parse_args(argc, argv, &login, &group, &command);
	lookup_group(group, &pw, &gr, &grbuf);

	groups = caller_groups(&n_groups);
	if (!groups)
		hs_die(E_FAILURE, "getgroups: %s", strerror(errno ? errno : ENOMEM));
	authorize(&pw, &gr, groups, n_groups);

	if (syslog_enabled())
		log_switch(pw.pw_name, gr.gr_name);

	/* keep the supplementary groups and add the new one */
	if (!gid_in(groups, n_groups, gr.gr_gid))
		groups[n_groups++] = gr.gr_gid;
	if (setgroups(n_groups, groups) < 0)
		hs_warn("setgroups: %s", strerror(errno));

	/* everything the shell needs, read while we still may */
	shell = choose_shell(envp, &pw, login, &argv0);
	_cleanup_free_ char **env = child_environment(envp, login);
	if (!env)
		hs_die(E_FAILURE, "out of memory");

	closelog();
	restore_caller_state();
	drop_to(getuid(), gr.gr_gid);

	/* as the caller now: their home may be anywhere they can reach */
	if (login && chdir(pw.pw_dir) != 0)
		hs_warn("chdir: %s", strerror(errno));
	exec_shell(shell, argv0, command, env);
}
