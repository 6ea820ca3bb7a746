/* Session plumbing shared by login, su and runuser; see session.h.
 *
 * The parent of a session stays root for its whole life because the PAM
 * session must be closed (and the credentials deleted) by the same
 * privileged process that opened them, after the shell is gone.  It does
 * nothing else meanwhile: every signal but SIGALRM is blocked and read
 * from a signalfd, so no handler of ours runs in the middle of libpam or
 * stdio; SIGALRM is glibc's (session_block_signals). */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ttyconv.h"

#include "cli.h"
#include "config.h"
#include "privs.h"
#include "timeouts.h"
#include "util.h"

#define ENV_ENTRY_MAX    (128u * 1024)   /* the kernel's MAX_ARG_STRLEN */
#define ENV_ENTRIES_MAX  4096
#define TERM_MAX         64

#define DEFAULT_PATH      "/usr/local/bin:/usr/bin:/bin"
#define DEFAULT_ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

extern char **environ;

/* ---------------------------------------------------------------- env */

void hs_session_env_free(struct hs_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	*e = (struct hs_env){ 0 };
}

static ssize_t env_find(const struct hs_env *e, const char *name, size_t len)
{
	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

/* Takes ownership of entry (a malloc'd "NAME=VALUE"). */
static int env_store(struct hs_env *e, char *entry_in, size_t nlen, bool overwrite)
{
	_cleanup_free_ char *entry = entry_in;
	ssize_t at = env_find(e, entry, nlen);

	if (at >= 0) {
		if (!overwrite)
			return 0;
		free(e->v[at]);
		e->v[at] = TAKE_PTR(entry);
		return 0;
	}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		char **nv = realloc(e->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		e->v = nv;
		e->cap = cap;
	}
	e->v[e->n++] = TAKE_PTR(entry);
	e->v[e->n] = NULL;
	return 0;
}

int hs_session_env_set(struct hs_env *e, const char *name, const char *value, bool overwrite)
{
	size_t nlen = strlen(name);
	char *entry;

	if (!hs_envname_valid(name, nlen))
		return -EINVAL;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -ENOMEM;
	return env_store(e, entry, nlen, overwrite);
}

int hs_session_env_put(struct hs_env *e, const char *entry, bool overwrite)
{
	const char *eq = strchr(entry, '=');
	char *copy;

	if (!eq || !hs_envname_valid(entry, (size_t)(eq - entry)))
		return -EINVAL;
	copy = strdup(entry);
	if (!copy)
		return -ENOMEM;
	return env_store(e, copy, (size_t)(eq - entry), overwrite);
}

const char *hs_session_env_get(const struct hs_env *e, const char *name)
{
	ssize_t at = env_find(e, name, strlen(name));

	return at < 0 ? NULL : e->v[at] + strlen(name) + 1;
}

int hs_session_env_capture(struct hs_env *e, char *const *envp)
{
	for (char *const *p = envp; p && *p && e->n < ENV_ENTRIES_MAX; p++) {
		const char *eq = strchr(*p, '=');

		if (!eq || hs_envname_unsafe(*p, (size_t)(eq - *p)) ||
		    strnlen(*p, ENV_ENTRY_MAX) >= ENV_ENTRY_MAX)
			continue;
		/* not overwriting: the first of two same names is the one
		 * getenv() sees; a second one is a classic way to smuggle a
		 * value past a check.  A bad name is put's -EINVAL: skipped. */
		if (hs_session_env_put(e, *p, false) == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

int hs_session_env_add_pam(struct hs_env *e, pam_handle_t *pamh)
{
	char **list = pam_getenvlist(pamh);
	int r = 0;

	if (!list)
		return 0;
	for (char **p = list; *p; p++) {
		if (r == 0 && hs_session_env_put(e, *p, true) == -ENOMEM)
			r = -ENOMEM;
		free(*p);
	}
	free(list);
	return r;
}

bool hs_session_env_term_ok(const char *term)
{
	static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789._+-";
	size_t n = term ? strlen(term) : 0;

	return n > 0 && n <= TERM_MAX && term[0] != '.' && strspn(term, allowed) == n;
}

const char *hs_session_default_path(const struct hs_config *defs, uid_t uid)
{
	const char *v = hs_config_get_str(defs, uid == 0 ? "ENV_SUPATH" : "ENV_PATH", NULL);

	if (!v && uid == 0)
		v = hs_config_get_str(defs, "ENV_ROOTPATH", NULL);
	if (v && strncmp(v, "PATH=", 5) == 0)
		v += 5;
	return v && *v ? v : uid == 0 ? DEFAULT_ROOT_PATH : DEFAULT_PATH;
}

/* ---------------------------------------------------------------- PAM */

static int conversation(int n, const struct pam_message **msg, struct pam_response **resp,
                        void *data)
{
	struct hs_session *s = data;

	/* su -c and su without -l: no "Last login" or motd chatter in the
	 * output of a command (util-linux does the same) */
	if (s->suppress_info && n == 1 && msg && msg[0] && msg[0]->msg_style == PAM_TEXT_INFO) {
		*resp = NULL;
		return PAM_SUCCESS;
	}
	return hs_ttyconv(n, msg, resp, NULL);
}

int hs_session_start(struct hs_session *s, const char *service, const char *user,
                     const char *tty, const char *ruser, const char *rhost)
{
	const struct {
		int type;
		const char *value;
	} items[] = { { PAM_TTY, tty }, { PAM_RUSER, ruser }, { PAM_RHOST, rhost } };
	int r;

	*s = (struct hs_session){ .conv = { .conv = conversation, .appdata_ptr = s } };
	r = pam_start(service, user, &s->conv, &s->pamh);
	if (r != PAM_SUCCESS) {
		s->pamh = NULL;
		return r;
	}
	for (size_t i = 0; r == PAM_SUCCESS && i < HS_ARRAY_SIZE(items); i++)
		if (items[i].value)
			r = pam_set_item(s->pamh, items[i].type, items[i].value);
	if (r != PAM_SUCCESS)
		hs_session_end(s, r);
	return r;
}

int hs_session_open(struct hs_session *s, int flags, struct rlimit *core, mode_t *mask)
{
	struct rlimit parent_core;
	mode_t parent_mask = umask(*mask);
	int r;

	(void)setrlimit(RLIMIT_CORE, core);
	r = pam_setcred(s->pamh, PAM_ESTABLISH_CRED);
	if (r == PAM_SUCCESS) {
		s->have_cred = true;
		r = pam_open_session(s->pamh, flags);
		s->have_session = r == PAM_SUCCESS;
	}
	if (getrlimit(RLIMIT_CORE, core) < 0)
		core->rlim_cur = core->rlim_max = 0;
	parent_core = *core;
	parent_core.rlim_cur = 0;
	(void)setrlimit(RLIMIT_CORE, &parent_core);
	*mask = umask(parent_mask);
	return r;
}

void hs_session_end(struct hs_session *s, int status)
{
	if (!s->pamh)
		return;
	if (s->have_session)
		pam_close_session(s->pamh, 0);
	if (s->have_cred)
		pam_setcred(s->pamh, PAM_DELETE_CRED | PAM_SILENT);
	pam_end(s->pamh, status);
	s->pamh = NULL;
	s->have_cred = s->have_session = false;
}

int hs_session_set_groups(const char *name, gid_t gid, const gid_t *groups, size_t ngroups)
{
	int r = groups ? setgroups(ngroups, groups) : initgroups(name, gid);

	endgrent();
	return r < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------- child */

/* What the parent changed of the caller's signals, for the child to hand
 * on (su, runuser). */
struct caller_signals {
	sigset_t mask;
	struct sigaction chld, alrm;
};

__attribute__((format(printf, 2, 3)))
static noreturn void child_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
	_exit(status);
}

static void child_signals(const struct hs_child *c, const struct caller_signals *caller)
{
	if (c->reset_signals) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigset_t none;

		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		return;
	}
	/* su and runuser hand on what the caller had (nohup su -c ... keeps
	 * SIGHUP ignored); the parent only touched SIGCHLD, SIGALRM (and
	 * SIGXFSZ, hs_privs_init) */
	sigaction(SIGCHLD, &caller->chld, NULL);
	sigaction(SIGALRM, &caller->alrm, NULL);
	hs_privs_restore_caller_signals();
	sigprocmask(SIG_SETMASK, &caller->mask, NULL);
}

static void child_drop_privileges(const struct hs_child *c)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (setgid(c->gid) < 0)
		child_fail(1, "cannot set group id: %s", strerror(errno));
	if (setuid(c->uid) < 0)
		child_fail(1, "cannot set user id: %s", strerror(errno));
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
	    ru != c->uid || eu != c->uid || su != c->uid ||
	    rg != c->gid || eg != c->gid || sg != c->gid)
		child_fail(1, "cannot change identity");
	/* a kernel or LSM that let us keep a way back to root would make
	 * every later check meaningless */
	if (c->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		abort();
}

static void child_chdir(const struct hs_child *c)
{
	if (!c->dir || chdir(c->dir) == 0)
		return;
	if (!c->dir_required) {
		fprintf(stderr, "%s: warning: cannot change directory to %s: %s\n",
			hs_cli_prog(), c->dir, strerror(errno));
		return;
	}
	if (c->dir_fallback_root && chdir("/") == 0) {
		printf("No directory %s!\nLogging in with home = \"/\".\n", c->dir);
		fflush(stdout);
		return;
	}
	child_fail(1, "cannot change directory to %s: %s", c->dir, strerror(errno));
}

static noreturn void child_main(const struct hs_child *c, int slave,
                                const struct caller_signals *caller)
{
	if (c->tty != HS_CHILD_SAME_SESSION && setsid() < 0)
		child_fail(1, "cannot create a new session: %s", strerror(errno));
	if ((c->tty == HS_CHILD_TAKE_TTY && ioctl(STDIN_FILENO, TIOCSCTTY, 1) < 0) ||
	    (c->tty == HS_CHILD_PTY && ioctl(slave, TIOCSCTTY, 0) < 0))
		child_fail(1, "cannot set the controlling terminal: %s", strerror(errno));
	if (c->tty == HS_CHILD_PTY) {
		for (int fd = 0; fd <= 2; fd++)
			if (dup2(slave, fd) < 0)
				child_fail(1, "cannot use the new terminal: %s", strerror(errno));
		if (slave > 2)
			close(slave);
	}
	child_signals(c, caller);
	/* the core limit hs_privs_init() took away was the privileged
	 * parent's protection, not the session's */
	(void)setrlimit(RLIMIT_CORE, &c->core_limit);
	child_drop_privileges(c);
	umask(c->umask);
	child_chdir(c);
	/* only 0, 1 and 2 go to the target: not the caller's other fds, not
	 * the pty master, not the syslog socket */
	if (close_range(3, ~0U, 0) < 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	}
	if (c->search_path) {
		environ = (char **)c->envp;
		execvp(c->path, c->argv);
	} else {
		execve(c->path, c->argv, c->envp);
	}
	child_fail(errno == ENOENT ? 127 : 126, "failed to execute %s: %s", c->path,
		   strerror(errno));
}

/* ---------------------------------------------------------------- pty */

struct relay {
	int master;             /* -1 when closed */
	bool stdin_open;
	bool stdin_tty;         /* only pty_open sets it: pty_raw, pty_restore need it */
	bool eof_pending;       /* stdin ended: send VEOF once inbuf is empty */
	bool stdout_ok;
	struct termios saved;   /* the caller's terminal, restored at the end */
	char inbuf[4096];
	size_t inlen;
};

static int pty_open(const struct hs_child *c, struct relay *rl, int *slave_out)
{
	struct termios tt;
	struct winsize ws;
	_cleanup_close_ int master = -1, slave = -1;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return -errno;
	if (unlockpt(master) < 0)
		return -errno;
	/* TIOCGPTPEER: the peer of this very master, no path lookup */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return -errno;
	/* the target's terminal is the target's, as after a login */
	if (fchown(slave, c->uid, c->pty_gid != (gid_t)-1 ? c->pty_gid : c->gid) < 0 ||
	    fchmod(slave, c->pty_gid != (gid_t)-1 ? 0620 : 0600) < 0)
		return -errno;
	rl->stdin_tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &rl->saved) == 0;
	if (rl->stdin_tty) {
		tcsetattr(slave, TCSANOW, &rl->saved);
		if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
			ioctl(slave, TIOCSWINSZ, &ws);
	} else if (tcgetattr(slave, &tt) == 0) {
		/* input from a pipe would be echoed into the output */
		tt.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(slave, TCSANOW, &tt);
	}
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	rl->master = TAKE_FD(master);
	rl->stdin_open = true;
	rl->stdout_ok = true;
	*slave_out = TAKE_FD(slave);
	return 0;
}

static void pty_raw(struct relay *rl)
{
	struct termios tt;

	if (!rl->stdin_tty)
		return;
	tt = rl->saved;
	cfmakeraw(&tt);   /* echo off too */
	tcsetattr(STDIN_FILENO, TCSANOW, &tt);
}

static void pty_restore(struct relay *rl)
{
	if (rl->stdin_tty)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &rl->saved);
}

/* master -> stdout.  Returns false once the master reports that every
 * slave fd is closed. */
static bool pty_pump_out(struct relay *rl)
{
	char buf[4096];

	/* a bounded number of reads, so a flood of output cannot starve
	 * the signals and the input */
	for (int i = 0; i < 16; i++) {
		ssize_t n = read(rl->master, buf, sizeof(buf));
		if (n > 0) {
			if (rl->stdout_ok && hs_write_full(STDOUT_FILENO, buf, (size_t)n) < 0)
				rl->stdout_ok = false;  /* keep draining the master regardless */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		return false;           /* EIO or EOF */
	}
	return true;
}

static void pty_pump_in(struct relay *rl)
{
	while (rl->inlen > 0) {
		ssize_t n = write(rl->master, rl->inbuf, rl->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		memmove(rl->inbuf, rl->inbuf + n, rl->inlen - (size_t)n);
		rl->inlen -= (size_t)n;
	}
	if (rl->inlen == 0 && rl->eof_pending) {
		struct termios tt;
		char eof = 4;           /* ^D */

		if (tcgetattr(rl->master, &tt) == 0 && tt.c_cc[VEOF])
			eof = (char)tt.c_cc[VEOF];
		if (write(rl->master, &eof, 1) == 1)
			rl->eof_pending = false;
	}
}

static void pty_read_stdin(struct relay *rl)
{
	ssize_t n;

	do
		n = read(STDIN_FILENO, rl->inbuf, sizeof(rl->inbuf));
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		rl->inlen = (size_t)n;
		return;
	}
	if (n < 0 && errno == EAGAIN)
		return;
	rl->stdin_open = false;
	rl->eof_pending = true;
}

/* ---------------------------------------------------------------- parent */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const struct hs_child *c, const char *text)
{
	if (c->verbose)
		(void)!write(STDERR_FILENO, text, strlen(text));
}

/* The parent's side of a session while the child runs. */
struct session_wait {
	const struct hs_child *c;
	struct relay rl;
	int sfd;                /* the signalfd of the signals watched */
	pid_t pid;
	int wstatus;
	bool done;              /* the child is reaped */
	bool caught;            /* a signal was forwarded: the grace runs */
	bool killed;            /* the grace ran out: SIGKILL was sent */
	long long kill_at, drain_until;
};

/* What one poll() waits on; an fd of -1 is skipped. */
enum { POLL_SIG, POLL_MASTER, POLL_STDIN, POLL_N };

/* Block every signal but SIGALRM, keeping the caller's mask and actions
 * for the child, and give SIGCHLD its default action: a caller that
 * ignores SIGCHLD would have the child reaped by the kernel and its status
 * lost.
 *
 * SIGALRM is glibc's: its utmp functions wait for their fcntl() lock on
 * utmp (F_SETLKW) under alarm(10) and a handler of their own, installed
 * and taken back around each wait.  A PAM module that reads or writes
 * utmp when the session closes (pam_modutil_getlogin() -> getlogin(),
 * getutxent(), pututxline()) waits so in this process; with SIGALRM
 * blocked that wait never ended, and a user's stopped utempter (setgid
 * utmp, stopped inside pututline() with the lock held) hung every logout
 * for good instead of 10 s.
 *
 * Outside those waits SIGALRM is ignored, neither its default action
 * (the end of the parent before the PAM session is closed) nor login's
 * timeout handler (an _exit in the middle of libpam).  An ignored signal
 * is dropped when sent and never interrupts a call.  Who can send it:
 * to login's parent, whose real and saved uids are 0, only root and the
 * kernel (an alarm() of this process); a user's timer or F_SETOWN/F_SETSIG
 * needs the same permission as kill(), and the child's exit signal is
 * SIGCHLD.  su's parent keeps the caller's real uid, so the caller could
 * cut glibc's 10 s wait short (the module's utmp step then fails, as it
 * would after the 10 s) but can kill that parent outright anyway. */
static void session_block_signals(struct caller_signals *caller)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };
	sigset_t all, alrm;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &caller->mask);
	sigaction(SIGCHLD, &dfl, &caller->chld);
	/* ignored before it is unblocked: a pending one is dropped */
	sigaction(SIGALRM, &ign, &caller->alrm);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
}

/* A signalfd for what the parent waits for or forwards; -errno. */
static int session_open_signalfd(const struct hs_child *c)
{
	sigset_t watch;
	int sfd;

	sigemptyset(&watch);
	sigaddset(&watch, SIGCHLD);
	sigaddset(&watch, SIGTERM);
	sigaddset(&watch, SIGHUP);
	if (c->forward_int_quit) {
		sigaddset(&watch, SIGINT);
		sigaddset(&watch, SIGQUIT);
	}
	if (c->tty == HS_CHILD_PTY)
		sigaddset(&watch, SIGWINCH);
	sfd = signalfd(-1, &watch, SFD_CLOEXEC | SFD_NONBLOCK);
	return sfd < 0 ? -errno : sfd;
}

/* Fork the child (which never returns here); 0, or -errno with every
 * descriptor of the session closed. */
static int session_fork_child(struct session_wait *w, int slave,
			      const struct caller_signals *caller)
{
	fflush(stdout);
	fflush(stderr);
	w->pid = fork();
	if (w->pid == 0) {
		close(w->sfd);
		hs_close(w->rl.master);
		child_main(w->c, slave, caller);
	}
	hs_close(slave);
	if (w->pid > 0)
		return 0;
	/* hs_close() keeps fork()'s errno */
	hs_close(w->sfd);
	hs_close(w->rl.master);
	return -errno;
}

/* The child is reaped and what the pty had to say is drained (or the
 * drain time is over). */
static bool session_over(const struct session_wait *w)
{
	return w->done &&
	       (w->rl.master < 0 || (w->drain_until >= 0 && now_ms() >= w->drain_until));
}

/* The signals; with a pty its master, and stdin when the relay has room
 * for more input. */
static void session_poll_fds(const struct session_wait *w, struct pollfd pfd[POLL_N])
{
	bool want_in = w->rl.master >= 0 && w->rl.stdin_open && w->rl.inlen == 0 && !w->done;

	pfd[POLL_SIG] = (struct pollfd){ .fd = w->sfd, .events = POLLIN };
	pfd[POLL_MASTER] = (struct pollfd){ .fd = w->rl.master, .events = POLLIN };
	if (w->rl.inlen > 0 || w->rl.eof_pending)
		pfd[POLL_MASTER].events |= POLLOUT;
	pfd[POLL_STDIN] = (struct pollfd){ .fd = want_in ? STDIN_FILENO : -1, .events = POLLIN };
}

/* Until the grace runs out, or the drain time is over; else forever. */
static int session_poll_timeout(const struct session_wait *w)
{
	long long t = now_ms();
	int timeout = -1;

	if (w->kill_at >= 0 && !w->done)
		timeout = w->kill_at > t ? (int)(w->kill_at - t) : 0;
	if (w->done && w->drain_until >= 0)
		timeout = w->drain_until > t ? (int)(w->drain_until - t) : 0;
	return timeout;
}

static void session_kill_after_grace(struct session_wait *w)
{
	if (w->kill_at >= 0 && !w->done && now_ms() >= w->kill_at) {
		kill(w->pid, SIGKILL);
		w->killed = true;
		w->kill_at = -1;
	}
}

static void session_reap_child(struct session_wait *w)
{
	int st;

	while (!w->done && waitpid(w->pid, &st, WNOHANG | WUNTRACED) > 0) {
		if (WIFSTOPPED(st)) {
			/* the shell was suspended: so are we, and both continue together */
			pty_restore(&w->rl);
			kill(getpid(), SIGSTOP);
			pty_raw(&w->rl);
			kill(w->pid, SIGCONT);
			continue;
		}
		w->wstatus = st;
		w->done = true;
		/* su --pty: a background job may still hold the terminal */
		w->drain_until = now_ms() + HS_SESSION_PTY_DRAIN_MS;
	}
}

static void session_resize_pty(const struct session_wait *w)
{
	struct winsize ws;

	if (w->rl.stdin_tty && w->rl.master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(w->rl.master, TIOCSWINSZ, &ws);
}

/* SIGTERM, SIGHUP (SIGINT, SIGQUIT) go to the child; the first one starts
 * the grace after which it is killed. */
static void session_forward_signal(struct session_wait *w, int sig)
{
	if (w->done)
		return;
	if (!w->caught) {
		w->caught = true;
		say(w->c, "\r\nSession terminated, killing shell...");
		w->kill_at = now_ms() + HS_SESSION_KILL_GRACE_MS;   /* util-linux su's 2 s */
	}
	kill(w->pid, sig);
}

static void session_handle_signals(struct session_wait *w)
{
	struct signalfd_siginfo si;

	while (read(w->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD)
			session_reap_child(w);
		else if (sig == SIGWINCH)
			session_resize_pty(w);
		else
			session_forward_signal(w, sig);
	}
}

/* su --pty: the child's output to stdout, stdin to the child. */
static void session_relay_pty(struct session_wait *w, const struct pollfd pfd[POLL_N])
{
	short master_ev = pfd[POLL_MASTER].revents;

	if ((master_ev & (POLLIN | POLLHUP | POLLERR)) && !pty_pump_out(&w->rl)) {
		close(w->rl.master);
		w->rl.master = -1;
	}
	if (w->rl.master >= 0 && (master_ev & POLLOUT))
		pty_pump_in(&w->rl);
	if (pfd[POLL_STDIN].revents & (POLLIN | POLLHUP | POLLERR)) {
		pty_read_stdin(&w->rl);
		if (w->rl.master >= 0)
			pty_pump_in(&w->rl);
	}
}

static void session_wait_child(struct session_wait *w)
{
	while (!session_over(w)) {
		struct pollfd pfd[POLL_N];
		int n;

		session_poll_fds(w, pfd);
		n = poll(pfd, POLL_N, session_poll_timeout(w));
		if (n < 0 && errno != EINTR) {
			/* cannot wait the normal way: end the child, then reap */
			if (!w->done) {
				kill(w->pid, SIGKILL);
				while (waitpid(w->pid, &w->wstatus, 0) < 0 && errno == EINTR)
					;
				w->done = true;
			}
			break;
		}
		session_kill_after_grace(w);
		if (n <= 0)
			continue;
		if (pfd[POLL_SIG].revents & POLLIN)
			session_handle_signals(w);
		session_relay_pty(w, pfd);
	}
}

/* Close the relay and the signalfd; util-linux's status and messages. */
static void session_finish(struct session_wait *w, int *status)
{
	if (w->rl.master >= 0) {
		pty_pump_out(&w->rl);
		close(w->rl.master);
	}
	pty_restore(&w->rl);
	close(w->sfd);
	if (w->killed)
		say(w->c, " ...killed.\n");
	else if (w->caught)
		say(w->c, "\n");
	if (WIFSIGNALED(w->wstatus)) {
		if (w->c->verbose && !w->killed)
			fprintf(stderr, "%s%s\n", strsignal(WTERMSIG(w->wstatus)),
				WCOREDUMP(w->wstatus) ? " (core dumped)" : "");
		*status = 128 + WTERMSIG(w->wstatus);
	} else {
		*status = WEXITSTATUS(w->wstatus);
	}
}

int hs_session_run(const struct hs_child *c, int *status)
{
	struct session_wait w = { .c = c, .rl = { .master = -1 }, .kill_at = -1,
				  .drain_until = -1 };
	struct caller_signals caller;
	int slave = -1, r;

	session_block_signals(&caller);
	w.sfd = session_open_signalfd(c);
	r = w.sfd < 0 ? w.sfd : 0;
	if (r == 0 && c->tty == HS_CHILD_PTY) {
		r = pty_open(c, &w.rl, &slave);
		if (r < 0)
			close(w.sfd);
	}
	if (r == 0)
		r = session_fork_child(&w, slave, &caller);
	if (r == 0) {
		/* not keeping the caller's directory (or a mount) busy;
		 * nothing depends on it */
		(void)!chdir("/");
		pty_raw(&w.rl);
		session_wait_child(&w);
		session_finish(&w, status);
	}
	sigaction(SIGCHLD, &caller.chld, NULL);
	/* every signal but SIGALRM stays blocked, for the reasons in session.h */
	return r;
}

/* ---- the start of login, su and runuser ---- */

void hs_session_tool_init(int argc, char **argv, const char *prog,
			  struct rlimit *caller_core)
{
	getrlimit(RLIMIT_CORE, caller_core);
	(void)hs_privs_init(argc, argv, prog);
	/* an empty argv (or Linux >= 5.18's { "" } for it) never gets here:
	 * hs_privs_init refused it */
	hs_cli_set_prog(prog);
	setlocale(LC_ALL, "");
}
