/* Editing a private copy of an account file in the administrator's editor
 * (vipw, vigr); see editfile.h for the rules. */
#include "editfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "timeouts.h"
#include "walk.h"
#include "util.h"

extern char **environ;

/* Longest environment value we pass on; nothing legitimate is longer. */
#define ENV_VALUE_MAX 4096

/* ---- the editor's environment ---- */

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static char *take(const char *name, bool absolute)
{
	const char *v = getenv(name);

	if (!v || !*v || strlen(v) > ENV_VALUE_MAX || has_control(v) || (absolute && v[0] != '/'))
		return NULL;
	return strdup(v);
}

/* A PATH whose every component is absolute: an empty component or "."
 * would run programs from the current directory. */
static bool path_ok(const char *v)
{
	for (const char *p = v; *p == '/'; p++)
		if (!(p = strchr(p, ':')))
			return true;
	return false;
}

void hs_editor_env_capture(struct hs_editor_env *e)
{
	e->visual = take("VISUAL", false);
	e->editor = take("EDITOR", false);
	e->home = take("HOME", true);
	e->path = take("PATH", true);
	if (e->path && !path_ok(e->path)) {
		free(e->path);
		e->path = NULL;
	}
}

void hs_editor_env_free(struct hs_editor_env *e)
{
	free(e->visual);
	free(e->editor);
	free(e->home);
	free(e->path);
	memset(e, 0, sizeof(*e));
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}
static void free_strvp(char ***v) { free_strv(*v); }

/* The current (already sanitised) environment, with the captured PATH in
 * place of the safe one, plus HOME, VISUAL and EDITOR. */
static char **editor_envp(const struct hs_editor_env *e)
{
	const struct { const char *name, *value; } extra[] = {
		{ "PATH", e->path }, { "HOME", e->home },
		{ "VISUAL", e->visual }, { "EDITOR", e->editor },
	};
	size_t n = 0, k = 0;
	char **v;

	for (char **p = environ; p && *p; p++)
		n++;
	v = calloc(n + HS_ARRAY_SIZE(extra) + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (char **p = environ; p && *p; p++) {
		bool replaced = false;

		for (size_t i = 0; i < HS_ARRAY_SIZE(extra); i++) {
			size_t len = strlen(extra[i].name);

			if (extra[i].value && strncmp(*p, extra[i].name, len) == 0 &&
			    (*p)[len] == '=')
				replaced = true;
		}
		if (replaced)
			continue;
		if (!(v[k++] = strdup(*p)))
			goto fail;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(extra); i++) {
		if (!extra[i].value)
			continue;
		if (asprintf(&v[k], "%s=%s", extra[i].name, extra[i].value) < 0) {
			v[k] = NULL;    /* asprintf leaves it undefined */
			goto fail;
		}
		k++;
	}
	return v;
fail:
	free_strv(v);
	return NULL;
}

/* ---- signals ---- */

static volatile sig_atomic_t pending_sig;
static sigset_t orig_mask, wait_mask;
static const int term_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };

static void record_signal(int sig)
{
	if (!pending_sig)
		pending_sig = sig;
}

/* Only there so that SIGCHLD interrupts ppoll (its default action is to
 * be discarded). */
static void note_child(int sig)
{
	(void)sig;
}

void hs_edit_signals_init(void)
{
	struct sigaction sa;
	sigset_t block;

	sigemptyset(&block);
	memset(&sa, 0, sizeof(sa));
	sigfillset(&sa.sa_mask);
	sa.sa_handler = record_signal;     /* no SA_RESTART: ppoll returns */
	for (size_t i = 0; i < HS_ARRAY_SIZE(term_signals); i++) {
		struct sigaction old;

		sigaddset(&block, term_signals[i]);
		/* a signal ignored by whoever started us (nohup) stays ignored */
		if (sigaction(term_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(term_signals[i], &sa, NULL);
	}
	/* no SA_NOCLDSTOP: a suspended editor has to wake us up too */
	sa.sa_handler = note_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &orig_mask);
	wait_mask = orig_mask;
	for (size_t i = 0; i < HS_ARRAY_SIZE(term_signals); i++)
		sigdelset(&wait_mask, term_signals[i]);
	sigdelset(&wait_mask, SIGCHLD);
}

int hs_edit_signal_pending(void)
{
	sigset_t set;

	if (pending_sig)
		return pending_sig;
	/* one that arrived while blocked (during a lock wait, say) and has
	 * not reached its handler yet: no point starting an editor */
	if (sigpending(&set) == 0)
		for (size_t i = 0; i < HS_ARRAY_SIZE(term_signals); i++)
			if (sigismember(&set, term_signals[i]))
				return term_signals[i];
	return 0;
}

noreturn void hs_edit_die_by_signal(int sig)
{
	sigset_t s;

	signal(sig, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* ---- the private copy ---- */

int hs_editfile_create(struct hs_editfile *ef, const char *prefix, const char *name,
                       const void *data, size_t len)
{
	struct stat st;
	int fd, r;

	if (!hs_fileio_is_single_component(name) || !hs_fileio_is_single_component(prefix))
		return -EINVAL;
	*ef = (struct hs_editfile)HS_EDITFILE_INIT;
	if ((size_t)snprintf(ef->dir, sizeof(ef->dir), "%s/%s.XXXXXX", HS_EDIT_TMPDIR,
			     prefix) >= sizeof(ef->dir) ||
	    (size_t)snprintf(ef->path, sizeof(ef->path), "%s/%s", ef->dir, name) >=
		    sizeof(ef->path))
		return -ENAMETOOLONG;
	ef->parentfd = open(HS_EDIT_TMPDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ef->parentfd < 0)
		return -errno;
	if (!mkdtemp(ef->dir)) {
		r = -errno;
		ef->dir[0] = '\0';        /* nothing made, nothing to remove */
		goto fail;
	}
	/* mkdtemp rewrote the X's in dir; path still has them */
	snprintf(ef->path, sizeof(ef->path), "%s/%s", ef->dir, name);
	ef->name = ef->path + strlen(ef->dir) + 1;
	/* In a sticky /tmp nobody else can rename or remove our directory;
	 * check anyway that what we open is the one mkdtemp made. */
	ef->dirfd = hs_fileio_open_dir_at(ef->parentfd, strrchr(ef->dir, '/') + 1, &st);
	if (ef->dirfd < 0) {
		r = ef->dirfd;
		goto fail;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		r = -HS_E_MODE;
		goto fail;
	}
	fd = openat(ef->dirfd, ef->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	r = hs_write_full(fd, data, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0)
		return 0;
fail:
	hs_editfile_remove(ef);
	return r;
}

int hs_editfile_read(const struct hs_editfile *ef, size_t max, char **data, size_t *len)
{
	const struct hs_file_expect ex = { .uid = geteuid(), .gid = HS_ANY_GID, .max_size = max };

	if (ef->dirfd < 0)
		return -EBADF;
	return hs_fileio_read_alloc_at(ef->dirfd, ef->name, &ex, data, len, NULL);
}

void hs_editfile_remove(struct hs_editfile *ef)
{
	if (ef->parentfd >= 0 && ef->dir[0]) {
		const char *base = strrchr(ef->dir, '/');
		/* hs_walk_remove_tree_at also takes whatever the editor left
		 * (swap and backup files), without following links */
		int r = base ? hs_walk_remove_tree_at(ef->parentfd, base + 1) : -EINVAL;

		if (r < 0 && r != -ENOENT)
			hs_warn("failed to remove %s: %s", ef->dir, hs_strerror(r));
	}
	hs_close(ef->dirfd);
	hs_close(ef->parentfd);
	*ef = (struct hs_editfile)HS_EDITFILE_INIT;
}

/* ---- running the editor ---- */

/* Like git: a command without shell syntax is split on blanks and run
 * directly; anything else goes through sh -c 'CMD "$@"', with the file
 * name as a positional parameter so it is never parsed as shell text. */
static char **editor_argv(const char *cmd, const char *file)
{
	size_t n = 0;
	char **argv, *copy = NULL, *save = NULL;

	/* any shell syntax */
	if (cmd[strcspn(cmd, "|&;<>()$`\\\"'\n*?[#~=%")] != '\0') {
		argv = calloc(6, sizeof(*argv));
		if (!argv)
			return NULL;
		argv[0] = strdup("sh");
		argv[1] = strdup("-c");
		if (asprintf(&argv[2], "%s \"$@\"", cmd) < 0)
			argv[2] = NULL;
		argv[3] = strdup(cmd);
		argv[4] = strdup(file);
		for (int i = 0; i < 5; i++)
			if (!argv[i])
				goto fail;
		return argv;
	}
	/* every word (at most one per two bytes), the file and NULL */
	argv = calloc(strlen(cmd) / 2 + 3, sizeof(*argv));
	copy = strdup(cmd);
	if (!argv || !copy)
		goto fail;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		if (!(argv[n++] = strdup(w)))
			goto fail;
	if (n == 0 || !(argv[n++] = strdup(file)))
		goto fail;
	free(copy);
	return argv;
fail:
	free(copy);
	free_strv(argv);
	return NULL;
}

/* Hand the terminal to pgrp (we may be in the background by then, hence
 * SIGTTOU blocked). */
static void set_foreground(pid_t pgrp)
{
	sigset_t s, old;

	sigemptyset(&s);
	sigaddset(&s, SIGTTOU);
	sigprocmask(SIG_BLOCK, &s, &old);
	(void)tcsetpgrp(STDIN_FILENO, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static noreturn void run_child(char **argv, char **envp, bool give_tty, pid_t parent)
{
	bool via_shell = strcmp(argv[0], "sh") == 0 && argv[1] && strcmp(argv[1], "-c") == 0;

	setpgid(0, 0);
	if (give_tty)
		set_foreground(getpid());
	/* the editor goes when we go, even by SIGKILL */
	prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0);
	if (getppid() != parent)
		_exit(1);
	sigprocmask(SIG_SETMASK, &orig_mask, NULL);
	/* nothing of ours (lock files, the tree) is inherited, even an fd
	 * some library forgot to mark close-on-exec */
	(void)close_range(3, ~0U, 0);
	environ = envp;
	if (via_shell)
		execve("/bin/sh", argv, envp);
	else
		execvp(argv[0], argv);
	fprintf(stderr, "%s: cannot execute %s: %s\n", hs_cli_prog(), argv[via_shell ? 3 : 0],
		strerror(errno));
	_exit(127);
}

int hs_editfile_edit(const struct hs_editfile *ef, const struct hs_editor_env *env)
{
	/* VISUAL, else EDITOR (take() ignored empty values), else "vi" */
	const char *cmd = env->visual ? env->visual : env->editor ? env->editor : "vi";
	char shown[256];
	__attribute__((cleanup(free_strvp))) char **argv = NULL, **envp = NULL;
	bool give_tty, forwarded = false, killed = false;
	struct timespec deadline = { 0, 0 };
	const struct timespec tick = { 0, 100 * 1000000L };    /* 100 ms */
	pid_t pid, parent = getpid();
	int status = 0, r;

	hs_printable(cmd, shown, sizeof(shown));
	if (hs_edit_signal_pending())
		return -EINTR;
	argv = editor_argv(cmd, ef->path);
	envp = editor_envp(env);
	if (!argv || !envp) {
		hs_warn("out of memory");
		return -ENOMEM;
	}
	give_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		hs_warn("cannot run %s: %s", shown, strerror(-r));
		return r;
	}
	if (pid == 0)
		run_child(argv, envp, give_tty, parent);
	/* also here, so killpg works however the two processes race */
	(void)setpgid(pid, pid);

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG | WUNTRACED);
		int sig;

		if (w == pid && WIFSTOPPED(status)) {
			if (forwarded) {
				kill(-pid, SIGCONT);
				continue;
			}
			/* ^Z in the editor: give the terminal back and stop
			 * ourselves, so the shell sees the job stopped; go on
			 * with the editor when we are continued */
			if (give_tty)
				set_foreground(getpgrp());
			kill(getpid(), SIGSTOP);
			if (give_tty)
				set_foreground(pid);
			kill(-pid, SIGCONT);
			continue;
		}
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r = -errno;
			hs_warn("waiting for %s: %s", shown, strerror(-r));
			kill(-pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			if (give_tty)
				set_foreground(getpgrp());
			return r;
		}
		sig = hs_edit_signal_pending();
		if (sig && !forwarded) {
			kill(-pid, sig);
			kill(-pid, SIGCONT);
			clock_gettime(CLOCK_MONOTONIC, &deadline);
			hs_timespec_add_ms(&deadline, HS_EDIT_GRACE_MS);
			forwarded = true;
		}
		if (forwarded && !killed) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > deadline.tv_sec ||
			    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
				kill(-pid, SIGKILL);
				killed = true;
			}
		}
		/* sleep until a signal of ours (or SIGCHLD) arrives; in the
		 * grace period, at most a tick */
		(void)ppoll(NULL, 0, forwarded && !killed ? &tick : NULL, &wait_mask);
	}
	if (give_tty)
		set_foreground(getpgrp());
	if (forwarded) {
		/* we are going: so is whatever the editor left in its group
		 * (a script's background children ignore SIGINT) */
		kill(-pid, SIGKILL);
		return -EINTR;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		hs_warn("%s returned with status %d", shown, WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		hs_warn("%s killed by signal %d", shown, WTERMSIG(status));
		return 1;
	}
	return 0;
}

/* ---- asking ---- */

int hs_edit_ask(const char *question)
{
	for (;;) {
		char line[64];
		size_t n = 0;
		bool eof = false;

		fputs(question, stdout);
		fflush(stdout);
		for (;;) {
			struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
			char c;
			ssize_t got;

			if (hs_edit_signal_pending())
				return -EINTR;
			if (ppoll(&pfd, 1, NULL, &wait_mask) < 0) {
				if (errno == EINTR)
					continue;
				return 0;
			}
			got = read(STDIN_FILENO, &c, 1);
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				eof = true;
				break;
			}
			if (c == '\n')
				break;
			if (n < sizeof(line) - 1)
				line[n++] = c;
		}
		line[n] = '\0';
		if (eof && n == 0) {
			fputc('\n', stdout);
			return 0;
		}
		size_t skip = strspn(line, " \t");

		if (line[skip] == 'y' || line[skip] == 'Y')
			return 1;
		if (line[skip] == 'n' || line[skip] == 'N' || eof)
			return 0;
	}
}
