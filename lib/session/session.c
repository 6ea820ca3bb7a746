/* Session plumbing shared by login, su and runuser; see session.h.
 *
 * The parent of a session stays root for its whole life because the PAM
 * session must be closed (and the credentials deleted) by the same
 * privileged process that opened them, after the shell is gone.  It does
 * nothing else meanwhile: every signal is blocked and read from a
 * signalfd, so no handler runs in the middle of libpam or stdio. */
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

/* How long a child may take to die after the first forwarded signal
 * before it is killed (util-linux su's 2 s). */
#define KILL_GRACE_MS    HS_SESSION_KILL_GRACE_MS
/* su --pty: after the child is gone, how long to wait for the rest of
 * its output (a background job may still hold the terminal). */
#define PTY_DRAIN_MS     HS_SESSION_PTY_DRAIN_MS

#define DEFAULT_PATH      "/usr/local/bin:/usr/bin:/bin"
#define DEFAULT_ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

extern char **environ;

/* ---------------------------------------------------------------- env */

void hs_env_init(struct hs_env *e)
{
	e->v = NULL;
	e->n = e->cap = 0;
}

void hs_env_free(struct hs_env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	hs_env_init(e);
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

int hs_env_set(struct hs_env *e, const char *name, const char *value, bool overwrite)
{
	size_t nlen = strlen(name), vlen = strlen(value);
	char *entry;

	if (!hs_env_name_valid(name, nlen))
		return -EINVAL;
	entry = malloc(nlen + vlen + 2);
	if (!entry)
		return -ENOMEM;
	memcpy(entry, name, nlen);
	entry[nlen] = '=';
	memcpy(entry + nlen + 1, value, vlen + 1);
	return env_store(e, entry, nlen, overwrite);
}

int hs_env_put(struct hs_env *e, const char *entry, bool overwrite)
{
	const char *eq = strchr(entry, '=');
	char *copy;

	if (!eq || !hs_env_name_valid(entry, (size_t)(eq - entry)))
		return -EINVAL;
	copy = strdup(entry);
	if (!copy)
		return -ENOMEM;
	return env_store(e, copy, (size_t)(eq - entry), overwrite);
}

const char *hs_env_get(const struct hs_env *e, const char *name)
{
	ssize_t at = env_find(e, name, strlen(name));

	return at < 0 ? NULL : e->v[at] + strlen(name) + 1;
}

void hs_env_unset(struct hs_env *e, const char *name)
{
	ssize_t at = env_find(e, name, strlen(name));

	if (at < 0)
		return;
	free(e->v[at]);
	memmove(e->v + at, e->v + at + 1, (e->n - (size_t)at) * sizeof(*e->v));
	e->n--;
}

int hs_env_capture(struct hs_env *e, char *const *envp)
{
	for (char *const *p = envp; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		size_t nlen;

		if (e->n >= ENV_ENTRIES_MAX)
			break;
		if (!eq)
			continue;
		nlen = (size_t)(eq - *p);
		if (!hs_env_name_valid(*p, nlen) || hs_env_name_unsafe(*p, nlen))
			continue;
		if (strnlen(*p, ENV_ENTRY_MAX) >= ENV_ENTRY_MAX)
			continue;
		/* the first of two same names is the one getenv() sees; a
		 * second one is a classic way to smuggle a value past a check */
		if (env_find(e, *p, nlen) >= 0)
			continue;
		char *copy = strdup(*p);
		if (!copy || env_store(e, copy, nlen, false) < 0)
			return -ENOMEM;
	}
	return 0;
}

int hs_env_add_pam(struct hs_env *e, pam_handle_t *pamh)
{
	char **list = pam_getenvlist(pamh);
	int r = 0;

	if (!list)
		return 0;
	for (char **p = list; *p; p++) {
		if (r == 0 && hs_env_put(e, *p, true) == -ENOMEM)
			r = -ENOMEM;
		free(*p);
	}
	free(list);
	return r;
}

bool hs_env_term_ok(const char *term)
{
	size_t n = term ? strlen(term) : 0;

	if (n == 0 || n > TERM_MAX || term[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = term[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

static const char *strip_path_prefix(const char *v)
{
	return strncmp(v, "PATH=", 5) == 0 ? v + 5 : v;
}

const char *hs_session_default_path(const struct hs_config *defs, uid_t uid)
{
	const char *v = NULL;

	if (uid == 0) {
		if (defs)
			v = hs_config_get_str(defs, "ENV_SUPATH", NULL);
		if (!v && defs)
			v = hs_config_get_str(defs, "ENV_ROOTPATH", NULL);
		return v && *strip_path_prefix(v) ? strip_path_prefix(v) : DEFAULT_ROOT_PATH;
	}
	if (defs)
		v = hs_config_get_str(defs, "ENV_PATH", NULL);
	return v && *strip_path_prefix(v) ? strip_path_prefix(v) : DEFAULT_PATH;
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
	int r;

	s->pamh = NULL;
	s->have_cred = s->have_session = false;
	s->suppress_info = false;
	s->conv.conv = conversation;
	s->conv.appdata_ptr = s;
	r = pam_start(service, user, &s->conv, &s->pamh);
	if (r != PAM_SUCCESS) {
		s->pamh = NULL;
		return r;
	}
	if (tty && (r = pam_set_item(s->pamh, PAM_TTY, tty)) != PAM_SUCCESS)
		goto fail;
	if (ruser && (r = pam_set_item(s->pamh, PAM_RUSER, ruser)) != PAM_SUCCESS)
		goto fail;
	if (rhost && (r = pam_set_item(s->pamh, PAM_RHOST, rhost)) != PAM_SUCCESS)
		goto fail;
	return PAM_SUCCESS;
fail:
	pam_end(s->pamh, r);
	s->pamh = NULL;
	return r;
}

int hs_session_open(struct hs_session *s, int flags)
{
	int r = pam_setcred(s->pamh, PAM_ESTABLISH_CRED);

	if (r != PAM_SUCCESS)
		return r;
	s->have_cred = true;
	r = pam_open_session(s->pamh, flags);
	if (r != PAM_SUCCESS)
		return r;
	s->have_session = true;
	return PAM_SUCCESS;
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

const char *hs_session_strerror(const struct hs_session *s, int pam_status)
{
	const char *m = pam_strerror(s->pamh, pam_status);

	return m ? m : "unknown PAM error";
}

int hs_session_set_groups(const char *name, gid_t gid, const gid_t *groups, size_t ngroups)
{
	int r = groups ? setgroups(ngroups, groups) : initgroups(name, gid);

	endgrent();
	return r < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------- child */

static noreturn void child_fail(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static noreturn void child_fail(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", hs_cli_prog());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(status);
}

static void child_signals(const struct hs_child *c, const sigset_t *caller_mask,
                          const struct sigaction *caller_chld)
{
	if (c->reset_signals) {
		struct sigaction dfl;
		sigset_t none;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		return;
	}
	/* su and runuser hand on what the caller had (nohup su -c ... keeps
	 * SIGHUP ignored); the parent only touched SIGCHLD */
	sigaction(SIGCHLD, caller_chld, NULL);
	sigprocmask(SIG_SETMASK, caller_mask, NULL);
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

static noreturn void child_main(const struct hs_child *c, int slave, const sigset_t *caller_mask,
                                const struct sigaction *caller_chld)
{
	if (c->tty != HS_CHILD_SAME_SESSION && setsid() < 0)
		child_fail(1, "cannot create a new session: %s", strerror(errno));
	if (c->tty == HS_CHILD_TAKE_TTY && ioctl(STDIN_FILENO, TIOCSCTTY, 1) < 0)
		child_fail(1, "cannot set the controlling terminal: %s", strerror(errno));
	if (c->tty == HS_CHILD_PTY) {
		if (ioctl(slave, TIOCSCTTY, 0) < 0)
			child_fail(1, "cannot set the controlling terminal: %s", strerror(errno));
		for (int fd = 0; fd <= 2; fd++)
			if (dup2(slave, fd) < 0)
				child_fail(1, "cannot use the new terminal: %s", strerror(errno));
		if (slave > 2)
			close(slave);
	}
	child_signals(c, caller_mask, caller_chld);
	/* the core limit hs_privileged_init() took away was the privileged
	 * parent's protection, not the session's */
	if (c->restore_core)
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
	bool stdin_tty;
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
		tt = rl->saved;
		tcsetattr(slave, TCSANOW, &tt);
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
	cfmakeraw(&tt);
	tt.c_lflag &= ~(tcflag_t)ECHO;
	tcsetattr(STDIN_FILENO, TCSANOW, &tt);
}

static void pty_restore(struct relay *rl)
{
	if (rl->stdin_tty)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &rl->saved);
}

static void write_stdout(struct relay *rl, const char *buf, size_t n)
{
	if (rl->stdout_ok && hs_write_full(STDOUT_FILENO, buf, n) < 0)
		rl->stdout_ok = false;      /* keep draining the master regardless */
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
			write_stdout(rl, buf, (size_t)n);
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

int hs_session_run(const struct hs_child *c, int *status)
{
	struct relay rl = { .master = -1 };
	struct sigaction dfl, caller_chld;
	sigset_t all, caller_mask, watch;
	int sfd, slave = -1, wstatus = 0, r;
	bool done = false, killed = false, caught = false;
	long long kill_at = -1, drain_until = -1;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &caller_mask);
	/* a caller that ignores SIGCHLD would have the child reaped by the
	 * kernel and its status lost */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl, &caller_chld);

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
	if (sfd < 0) {
		r = -errno;
		goto restore;
	}
	if (c->tty == HS_CHILD_PTY && (r = pty_open(c, &rl, &slave)) < 0) {
		close(sfd);
		goto restore;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sfd);
		if (slave >= 0)
			close(slave);
		if (rl.master >= 0)
			close(rl.master);
		goto restore;
	}
	if (pid == 0) {
		close(sfd);
		if (rl.master >= 0)
			close(rl.master);
		child_main(c, slave, &caller_mask, &caller_chld);
	}
	if (slave >= 0)
		close(slave);
	/* not keeping the caller's directory (or a mount) busy */
	if (chdir("/") < 0) {
		/* nothing depends on it */
	}
	if (c->tty == HS_CHILD_PTY)
		pty_raw(&rl);

	for (;;) {
		struct pollfd pfd[3];
		int nfd = 0, timeout = -1, i_sig, i_master = -1, i_in = -1;
		long long t;

		if (done && (rl.master < 0 || (drain_until >= 0 && now_ms() >= drain_until)))
			break;
		pfd[nfd] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		i_sig = nfd++;
		if (rl.master >= 0) {
			pfd[nfd] = (struct pollfd){ .fd = rl.master, .events = POLLIN };
			if (rl.inlen > 0 || rl.eof_pending)
				pfd[nfd].events |= POLLOUT;
			i_master = nfd++;
			if (rl.stdin_open && rl.inlen == 0 && !done) {
				pfd[nfd] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
				i_in = nfd++;
			}
		}
		t = now_ms();
		if (kill_at >= 0 && !done)
			timeout = kill_at > t ? (int)(kill_at - t) : 0;
		if (done && drain_until >= 0)
			timeout = drain_until > t ? (int)(drain_until - t) : 0;

		int n = poll(pfd, (nfds_t)nfd, timeout);
		if (n < 0 && errno != EINTR) {
			/* cannot wait the normal way: end the child, then reap */
			if (!done) {
				kill(pid, SIGKILL);
				while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
					;
				done = true;
			}
			break;
		}
		t = now_ms();
		if (kill_at >= 0 && !done && t >= kill_at) {
			kill(pid, SIGKILL);
			killed = true;
			kill_at = -1;
		}
		if (n <= 0)
			continue;
		if (pfd[i_sig].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				int sig = (int)si.ssi_signo;

				if (sig == SIGCHLD) {
					int st;
					pid_t w;

					while (!done && (w = waitpid(pid, &st, WNOHANG | WUNTRACED)) > 0) {
						if (WIFSTOPPED(st)) {
							/* the shell was suspended: so are we, and
							 * both continue together */
							pty_restore(&rl);
							kill(getpid(), SIGSTOP);
							if (c->tty == HS_CHILD_PTY)
								pty_raw(&rl);
							kill(pid, SIGCONT);
							continue;
						}
						wstatus = st;
						done = true;
						drain_until = now_ms() + PTY_DRAIN_MS;
					}
				} else if (sig == SIGWINCH) {
					struct winsize ws;

					if (rl.stdin_tty && rl.master >= 0 &&
					    ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
						ioctl(rl.master, TIOCSWINSZ, &ws);
				} else if (!done) {
					if (!caught) {
						caught = true;
						say(c, "\r\nSession terminated, killing shell...");
						kill_at = now_ms() + KILL_GRACE_MS;
					}
					kill(pid, sig);
				}
			}
		}
		if (i_master >= 0 && (pfd[i_master].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (!pty_pump_out(&rl)) {
				close(rl.master);
				rl.master = -1;
			}
		}
		if (rl.master >= 0 && i_master >= 0 && (pfd[i_master].revents & POLLOUT))
			pty_pump_in(&rl);
		if (i_in >= 0 && (pfd[i_in].revents & (POLLIN | POLLHUP | POLLERR))) {
			pty_read_stdin(&rl);
			if (rl.master >= 0)
				pty_pump_in(&rl);
		}
	}
	if (rl.master >= 0) {
		pty_pump_out(&rl);
		close(rl.master);
	}
	if (c->tty == HS_CHILD_PTY)
		pty_restore(&rl);
	close(sfd);
	if (killed)
		say(c, " ...killed.\n");
	else if (caught)
		say(c, "\n");
	if (WIFSIGNALED(wstatus)) {
		if (c->verbose && !killed)
			fprintf(stderr, "%s%s\n", strsignal(WTERMSIG(wstatus)),
				WCOREDUMP(wstatus) ? " (core dumped)" : "");
		*status = 128 + WTERMSIG(wstatus);
	} else {
		*status = WEXITSTATUS(wstatus);
	}
	r = 0;
restore:
	sigaction(SIGCHLD, &caller_chld, NULL);
	/* the parent keeps every signal blocked: what is left to do (closing
	 * the PAM session) must not be cut short, and a caught signal has
	 * been handed to the child already */
	return r;
}

/* ---- the start of login, su and runuser ---- */

void hs_session_tool_init(int argc, char **argv, const char *prog,
			  struct rlimit *caller_core)
{
	getrlimit(RLIMIT_CORE, caller_core);
	(void)hs_privileged_init(argc, argv, prog);
	/* an empty argv (or Linux >= 5.18's { "" } for it) never gets here:
	 * hs_privileged_init refused it */
	hs_cli_set_prog(prog);
	setlocale(LC_ALL, "");
}
