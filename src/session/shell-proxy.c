/* shell-proxy: the login shell /etc/passwd names for every account whose
 * shell the user may change (DESIGN §2).
 *
 * Runs as the user, unprivileged.  It asks the setgid shell-helper for the
 * caller's real shell (the helper reads /etc/hardened-shadow/USER/shell),
 * checks the answer and execs it with the caller's arguments:
 *   "-shell-proxy" (a login shell)  ->  argv[0] "-" + basename(real shell)
 *   anything else                    ->  argv[0] basename(real shell)
 * There is no fallback shell: a missing or bad shell file is a one-line
 * error and exit status 1, so a broken account is visible, not silently
 * given /bin/sh. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "layout.h"
#include "records.h"
#include "util.h"

/* Exit 1 with the message, prefixed with the path of the caller's shell
 * file. */
__attribute__((format(printf, 1, 2)))
static noreturn void shell_die(const char *fmt, ...)
{
	struct passwd *pw = getpwuid(getuid());
	char fname[HS_PATHBUF_USER], msg[HS_PATH_FIELD_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pw && pw->pw_name)
		snprintf(fname, sizeof(fname), "%s/%s/%s", HS_TREE_DIR, pw->pw_name, HS_FILE_SHELL);
	else
		snprintf(fname, sizeof(fname), "%s/(uid %lu)/%s", HS_TREE_DIR,
			 (unsigned long)getuid(), HS_FILE_SHELL);
	hs_die(1, "%s: %s", fname, msg);
}

/* Run the helper with its stdout on a pipe; return what it printed (at
 * most size - 1 bytes, NUL-terminated) or exit with a message. */
static size_t ask_helper(char *buf, size_t size)
{
	int pfd[2], status;
	char sink[256];
	ssize_t len;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		hs_die(1, "cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		hs_die(1, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		char *const hargv[] = { "shell-helper", NULL };
		/* The helper is setgid and needs nothing from the caller's
		 * environment: an empty one leaves the caller no lever on it
		 * (locale, TZ, EDITOR, PAGER, INPUTRC, SHELL), whatever its own
		 * allow-list would keep. */
		char *const henvp[] = { NULL };

		if (dup2(pfd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execve(HS_SHELL_HELPER, hargv, henvp);
		hs_warn("cannot run %s: %s", HS_SHELL_HELPER, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	/* size bytes are longer than any valid path: drain the rest; len
	 * stays size, which the caller refuses */
	len = hs_read_full(pfd[0], buf, size);
	while (len == (ssize_t)size && hs_read_full(pfd[0], sink, sizeof(sink)) > 0)
		;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			hs_die(1, "cannot wait for %s: %s", HS_SHELL_HELPER, strerror(errno));
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (len < 0 || (size_t)len == size)
			return size;   /* unreadable or too long: refused */
		buf[len] = '\0';
		return (size_t)len;
	}
	/* The helper has already said what is wrong, in one line. */
	if (WIFEXITED(status))
		exit(1);
	hs_die(1, "%s was killed by signal %d", HS_SHELL_HELPER, WTERMSIG(status));
}

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

int main(int argc, char **argv)
{
	char buf[HS_PATH_FIELD_MAX + 2];
	const char *called = argc > 0 && argv[0] ? argv[0] : "";
	bool login = called[0] == '-';
	const char *base, *env_shell;
	char **nargv;
	struct stat st;
	size_t len;

	hs_cli_set_prog("shell-proxy");
	len = ask_helper(buf, sizeof(buf));
	if (len == sizeof(buf) || len == 0 || buf[len - 1] != '\n')
		shell_die("invalid login shell: not a single path");
	buf[--len] = '\0';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c < 0x20 || c == 0x7f)
			shell_die("invalid login shell: control character in the path");
	}
	if (buf[0] != '/')
		shell_die("invalid login shell %s: not an absolute path", buf);
	if (stat(buf, &st) < 0)
		shell_die("login shell %s: %s", buf, strerror(errno));
	/* Exec'ing ourselves would loop forever. */
	if (strcmp(buf, HS_SHELL_PROXY) == 0 || same_file(&st, HS_SHELL_PROXY) ||
	    same_file(&st, "/proc/self/exe"))
		shell_die("invalid login shell %s: it is the shell proxy itself", buf);
	if (!S_ISREG(st.st_mode))
		shell_die("login shell %s: not a regular file", buf);
	if (access(buf, X_OK) < 0)
		shell_die("login shell %s: %s", buf, strerror(errno));

	base = strrchr(buf, '/') + 1;
	if (!*base)
		shell_die("invalid login shell %s", buf);
	nargv = calloc((size_t)(argc > 0 ? argc : 1) + 1, sizeof(*nargv));
	if (!nargv)
		hs_die(1, "out of memory");
	nargv[0] = (char *)base;
	if (login && asprintf(&nargv[0], "-%s", base) < 0)
		hs_die(1, "out of memory");
	for (int i = 1; i < argc; i++)
		nargv[i] = argv[i];
	/* Programs that start "$SHELL" (editors, screen) should get the real
	 * shell, not another round trip through the helper. */
	env_shell = getenv("SHELL");
	if (env_shell && strcmp(env_shell, HS_SHELL_PROXY) == 0)
		setenv("SHELL", buf, 1);
	execv(buf, nargv);
	shell_die("cannot execute login shell %s: %s", buf, strerror(errno));
}
