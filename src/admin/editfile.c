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

/* A NULL-terminated copy of the n strings of words, or NULL when out of
 * memory.  The copies are made in order, so the vector has no hole before
 * its NULL and the cleanup frees every copy made. */
static char **strv_copy(const char *const *words, size_t n)
{
	__attribute__((cleanup(free_strvp))) char **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		if (!(v[i] = strdup(words[i])))
			return NULL;
	return TAKE_PTR(v);
}

/* Like shadow-utils' vipw, which hands "CMD FILE" to system(), a command of
 * more than one word or with any shell syntax is shell text: it goes
 * through sh -c 'CMD "$@"' CMD FILE, the file name a positional parameter
 * so that it is never parsed as shell text.  A single plain word (the
 * usual "vi") is run directly: the same thing, one process shorter. */
static char **editor_argv(const char *cmd, const char *file)
{
	_cleanup_free_ char *script = NULL;
	const char *words[5];
	size_t n = 0;

	if (cmd[strcspn(cmd, " \t|&;<>()$`\\\"'\n*?[#~=%!{}")] == '\0') {
		words[n++] = cmd;
	} else {
		if (asprintf(&script, "%s \"$@\"", cmd) < 0) {
			script = NULL;    /* asprintf leaves it undefined */
			return NULL;
		}
		words[n++] = "sh";
		words[n++] = "-c";
		words[n++] = script;
		words[n++] = cmd;       /* $0: the name in sh's messages */
	}
	words[n++] = file;
	return strv_copy(words, n);
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
	/* only the shell form has more than the editor and the file */
	bool via_shell = argv[2] != NULL;

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

/* One run of the editor, as the waiting loop sees it. */
struct editor_run {
	pid_t pid;
	bool give_tty;          /* the editor has the terminal while it runs */
	bool forwarded;         /* one of our signals went to the editor */
	bool killed;            /* and the grace period ran out: SIGKILL */
	struct timespec deadline;
};

/* ^Z in the editor: give the terminal back and stop ourselves, so the
 * shell sees the job stopped; go on with the editor when we are
 * continued.  Once we are going, a stop only delays that. */
static void editor_stopped(const struct editor_run *run)
{
	if (!run->forwarded) {
		if (run->give_tty)
			set_foreground(getpgrp());
		kill(getpid(), SIGSTOP);
		if (run->give_tty)
			set_foreground(run->pid);
	}
	kill(-run->pid, SIGCONT);
}

/* A signal of ours goes to the editor's group, which then has
 * HS_EDIT_GRACE_MS to go before SIGKILL. */
static void editor_forward_signals(struct editor_run *run)
{
	int sig = hs_edit_signal_pending();
	struct timespec now;

	if (sig && !run->forwarded) {
		kill(-run->pid, sig);
		kill(-run->pid, SIGCONT);
		clock_gettime(CLOCK_MONOTONIC, &run->deadline);
		hs_timespec_add_ms(&run->deadline, HS_EDIT_GRACE_MS);
		run->forwarded = true;
	}
	if (!run->forwarded || run->killed)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > run->deadline.tv_sec ||
	    (now.tv_sec == run->deadline.tv_sec && now.tv_nsec >= run->deadline.tv_nsec)) {
		kill(-run->pid, SIGKILL);
		run->killed = true;
	}
}

/* Wait for the editor to end, passing on stops and our signals: 0 with
 * its wait status in *status, or a negative error, already reported (the
 * editor is killed then). */
static int editor_wait(struct editor_run *run, const char *shown, int *status)
{
	const struct timespec tick = { 0, 100 * 1000000L };    /* 100 ms */

	for (;;) {
		pid_t w = waitpid(run->pid, status, WNOHANG | WUNTRACED);
		int r;

		if (w == run->pid && WIFSTOPPED(*status)) {
			editor_stopped(run);
			continue;
		}
		if (w == run->pid)
			return 0;
		if (w < 0 && errno != EINTR) {
			r = -errno;
			hs_warn("waiting for %s: %s", shown, strerror(-r));
			kill(-run->pid, SIGKILL);
			(void)waitpid(run->pid, status, 0);
			return r;
		}
		editor_forward_signals(run);
		/* sleep until a signal of ours (or SIGCHLD) arrives; in the
		 * grace period, at most a tick */
		(void)ppoll(NULL, 0, run->forwarded && !run->killed ? &tick : NULL, &wait_mask);
	}
}

/* What the editor's wait status means for us: see hs_editfile_edit. */
static int editor_result(const char *shown, int status)
{
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

int hs_editfile_edit(const struct hs_editfile *ef, const struct hs_editor_env *env)
{
	/* VISUAL, else EDITOR (take() ignored empty values), else "vi" */
	const char *cmd = env->visual ? env->visual : env->editor ? env->editor : "vi";
	char shown[256];
	__attribute__((cleanup(free_strvp))) char **argv = NULL, **envp = NULL;
	struct editor_run run = { .pid = -1 };
	pid_t parent = getpid();
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
	run.give_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	fflush(NULL);
	run.pid = fork();
	if (run.pid < 0) {
		r = -errno;
		hs_warn("cannot run %s: %s", shown, strerror(-r));
		return r;
	}
	if (run.pid == 0)
		run_child(argv, envp, run.give_tty, parent);
	/* also here, so killpg works however the two processes race */
	(void)setpgid(run.pid, run.pid);

	r = editor_wait(&run, shown, &status);
	if (run.give_tty)
		set_foreground(getpgrp());
	if (r < 0)
		return r;
	if (run.forwarded) {
		/* we are going: so is whatever the editor left in its group
		 * (a script's background children ignore SIGINT) */
		kill(-run.pid, SIGKILL);
		return -EINTR;
	}
	return editor_result(shown, status);
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
