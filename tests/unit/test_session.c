/* Tests for lib/session/session.c: the environment lists handed to a session (name
 * rules, the never-passed names, capture of a hostile environment,
 * duplicates), TERM checks, the PATH from login.defs, and hs_session_run's
 * child/parent contract run as the current user (exit status, 128+signal,
 * 126/127, the working directory, umask, the environment, signal
 * forwarding with the 2 s kill). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "session.h"
#include "util.h"

static void test_names(void **state)
{
	(void)state;
	assert_true(hs_envname_valid("PATH", 4));
	assert_true(hs_envname_valid("_x9", 3));
	assert_false(hs_envname_valid("9x", 2));
	assert_false(hs_envname_valid("", 0));
	assert_false(hs_envname_valid("A B", 3));
	assert_false(hs_envname_valid("BASH_FUNC_f%%", 13));
	assert_false(hs_envname_valid("A-B", 3));

	assert_true(hs_envname_unsafe("LD_PRELOAD", 10));
	assert_true(hs_envname_unsafe("LD_", 3));
	assert_true(hs_envname_unsafe("IFS", 3));
	assert_true(hs_envname_unsafe("BASH_ENV", 8));
	assert_true(hs_envname_unsafe("MALLOC_CHECK_", 13));
	assert_true(hs_envname_unsafe("GLIBC_TUNABLES", 14));
	/* the terminal library's and other loaders' paths, which newgrp
	 * dropped before it shared this list */
	assert_true(hs_envname_unsafe("TERMINFO", 8));
	assert_true(hs_envname_unsafe("TERMINFO_DIRS", 13));
	assert_true(hs_envname_unsafe("TERMCAP", 7));
	assert_true(hs_envname_unsafe("_RLD_LIST", 9));
	assert_true(hs_envname_unsafe("GLIBC_ANYTHING", 14));
	assert_true(hs_envname_unsafe("PYTHONPATH", 10));
	assert_false(hs_envname_unsafe("TERM", 4));
	assert_false(hs_envname_unsafe("LANG", 4));
	assert_false(hs_envname_unsafe("IFSX", 4));
	assert_false(hs_envname_unsafe("PATH", 4));
	assert_false(hs_envname_unsafe("DISPLAY", 7));
	/* the length counts, not a NUL: "LD_PRELOAD=x" cut at the '=' */
	assert_true(hs_envname_unsafe("IFS=x", 3));
}

static void test_set_get(void **state)
{
	struct hs_env e = { 0 };

	(void)state;
	assert_int_equal(hs_session_env_set(&e, "A", "1", true), 0);
	assert_int_equal(hs_session_env_set(&e, "B", "2", true), 0);
	assert_int_equal(hs_session_env_set(&e, "A", "3", false), 0);
	assert_string_equal(hs_session_env_get(&e, "A"), "1");
	assert_int_equal(hs_session_env_set(&e, "A", "3", true), 0);
	assert_string_equal(hs_session_env_get(&e, "A"), "3");
	assert_int_equal(hs_session_env_set(&e, "1A", "x", true), -EINVAL);
	assert_int_equal(hs_session_env_put(&e, "C=a=b", true), 0);
	assert_string_equal(hs_session_env_get(&e, "C"), "a=b");
	assert_int_equal(hs_session_env_put(&e, "NOEQUALS", true), -EINVAL);
	assert_int_equal(hs_session_env_put(&e, "=x", true), -EINVAL);
	assert_null(hs_session_env_get(&e, "AB"));
	assert_int_equal(e.n, 3);
	assert_null(e.v[e.n]);
	hs_session_env_free(&e);
	assert_int_equal(e.n, 0);
}

static void test_capture(void **state)
{
	char *big = malloc(200 * 1024);
	char *envp[] = { (char *)"PATH=/usr/bin", (char *)"LD_PRELOAD=/tmp/x.so",
			 (char *)"IFS= ", (char *)"NOEQUALS", (char *)"=empty",
			 (char *)"A B=space", (char *)"DUP=first", (char *)"DUP=second",
			 (char *)"BASH_FUNC_f%%=() { id; }", (char *)"DISPLAY=:0", big, NULL };
	struct hs_env e = { 0 };

	(void)state;
	assert_non_null(big);
	memset(big, 'x', 200 * 1024 - 1);
	memcpy(big, "BIG=", 4);
	big[200 * 1024 - 1] = '\0';
	assert_int_equal(hs_session_env_capture(&e, envp), 0);
	assert_int_equal(e.n, 3);
	assert_string_equal(hs_session_env_get(&e, "PATH"), "/usr/bin");
	assert_string_equal(hs_session_env_get(&e, "DUP"), "first");
	assert_string_equal(hs_session_env_get(&e, "DISPLAY"), ":0");
	assert_null(hs_session_env_get(&e, "LD_PRELOAD"));
	assert_null(hs_session_env_get(&e, "IFS"));
	assert_null(hs_session_env_get(&e, "BIG"));
	hs_session_env_free(&e);
	free(big);

	/* many entries: at most 4096 kept, no failure */
	char **many = calloc(5001, sizeof(*many));
	assert_non_null(many);
	for (int i = 0; i < 5000; i++) {
		many[i] = malloc(16);
		snprintf(many[i], 16, "V%d=x", i);
	}
	assert_int_equal(hs_session_env_capture(&e, many), 0);
	assert_int_equal(e.n, 4096);
	hs_session_env_free(&e);
	for (int i = 0; i < 5000; i++)
		free(many[i]);
	free(many);
}

static void test_term_and_path(void **state)
{
	static const char defs_text[] = "ENV_PATH PATH=/a:/b\nENV_SUPATH /s\n";
	struct hs_config *c = NULL;

	(void)state;
	assert_true(hs_session_env_term_ok("xterm-256color"));
	assert_true(hs_session_env_term_ok("vt100"));
	assert_false(hs_session_env_term_ok("../../tmp/x"));
	assert_false(hs_session_env_term_ok(".hidden"));
	assert_false(hs_session_env_term_ok(""));
	assert_false(hs_session_env_term_ok(NULL));
	assert_false(hs_session_env_term_ok("a\x1b"));

	assert_string_equal(hs_session_default_path(NULL, 1000), "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(hs_session_default_path(NULL, 0),
			    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	assert_int_equal(hs_config_logindefs_parse(defs_text, sizeof(defs_text) - 1, "t", NULL, NULL, &c),
			 0);
	assert_string_equal(hs_session_default_path(c, 1000), "/a:/b");
	assert_string_equal(hs_session_default_path(c, 0), "/s");
	hs_config_free(c);
}

/* hs_session_run as the current user: no privilege change, the rest real. */
static int run_sh(const char *script, const char *dir, char **envp, bool forward, long *ms)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
	char *noenv[] = { NULL };
	struct hs_child c;
	struct timespec a, b;
	int status = -1;

	sigset_t none;

	/* hs_session_run leaves every signal but SIGALRM blocked (its caller
	 * only closes the PAM session and exits); a test calls it again and
	 * again */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&c, 0, sizeof(c));
	c.uid = getuid();
	c.gid = getgid();
	c.path = "/bin/sh";
	c.argv = argv;
	c.envp = envp ? envp : noenv;
	c.umask = 027;
	c.dir = dir;
	c.tty = HS_CHILD_NEW_SESSION;
	c.forward_int_quit = forward;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(hs_session_run(&c, &status), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (ms)
		*ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	return status;
}

static void test_run_status(void **state)
{
	char *argv[] = { (char *)"x", NULL };
	char *noenv[] = { NULL };
	struct hs_child c;
	int status;

	(void)state;
	assert_int_equal(run_sh("exit 0", NULL, NULL, false, NULL), 0);
	assert_int_equal(run_sh("exit 42", NULL, NULL, false, NULL), 42);
	assert_int_equal(run_sh("kill -TERM $$", NULL, NULL, false, NULL), 128 + SIGTERM);
	assert_int_equal(run_sh("kill -KILL $$", NULL, NULL, false, NULL), 128 + SIGKILL);

	memset(&c, 0, sizeof(c));
	c.uid = getuid();
	c.gid = getgid();
	c.argv = argv;
	c.envp = noenv;
	c.path = "/nonexistent/program";
	assert_int_equal(hs_session_run(&c, &status), 0);
	assert_int_equal(status, 127);
	c.path = "/etc/hostname";      /* not executable */
	assert_int_equal(hs_session_run(&c, &status), 0);
	assert_int_equal(status, 126);
}

static void test_run_child_state(void **state)
{
	char tmpl[] = "/tmp/hs-test-session-XXXXXX";
	char script[1024], out[128], buf[1024], want[1024];
	char *envp[] = { (char *)"HS_A=1", (char *)"PATH=/usr/bin:/bin", NULL };
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(out, sizeof(out), "%s/out", tmpl);
	/* cwd, umask, the environment given and nothing else, no fd above 2
	 * (ls itself holds one for the directory it lists) */
	snprintf(script, sizeof(script),
		 "{ pwd; umask; printenv HS_A; printenv HOME || echo no-home; "
		 "ls /proc/self/fd | wc -l; } > %s", out);
	assert_int_equal(run_sh(script, tmpl, envp, false, NULL), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	snprintf(want, sizeof(want), "%s\n0027\n1\nno-home\n4\n", tmpl);
	assert_string_equal(buf, want);
	unlink(out);
	rmdir(tmpl);
}

static void test_run_forwards_signals(void **state)
{
	char script[128];
	long ms;
	pid_t helper;

	(void)state;
	/* a child that ignores SIGTERM is killed 2 s after the forwarded one */
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		usleep(300 * 1000);
		kill(getppid(), SIGTERM);
		_exit(0);
	}
	snprintf(script, sizeof(script), "trap '' TERM; exec sleep 10");
	assert_int_equal(run_sh(script, NULL, NULL, false, &ms), 128 + SIGKILL);
	waitpid(helper, NULL, 0);
	assert_true(ms >= 2000 && ms < 6000);

	/* a child that handles it ends with its own status */
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		usleep(300 * 1000);
		kill(getppid(), SIGHUP);
		_exit(0);
	}
	snprintf(script, sizeof(script), "trap 'exit 9' HUP; while :; do sleep 0.05; done");
	assert_int_equal(run_sh(script, NULL, NULL, false, &ms), 9);
	waitpid(helper, NULL, 0);
	assert_true(ms < 2000);

	/* SIGINT is forwarded only when asked (forward_int_quit) */
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		usleep(300 * 1000);
		kill(getppid(), SIGINT);
		_exit(0);
	}
	snprintf(script, sizeof(script), "trap 'exit 7' INT; while :; do sleep 0.05; done");
	assert_int_equal(run_sh(script, NULL, NULL, true, &ms), 7);
	waitpid(helper, NULL, 0);

	/* the test process itself gets every signal back */
	sigset_t none, cur;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	assert_false(sigismember(&cur, SIGTERM));
}

/* glibc's utmp functions wait for their lock under alarm(10) and a handler
 * of their own: a PAM module closing the session after hs_session_run must
 * get its SIGALRM, and a stray one must not end the parent. */
static void test_run_leaves_sigalrm_to_glibc(void **state)
{
	struct sigaction sa;
	sigset_t cur;

	(void)state;
	assert_int_equal(run_sh("exit 0", NULL, NULL, false, NULL), 0);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	assert_false(sigismember(&cur, SIGALRM));
	assert_true(sigismember(&cur, SIGTERM));
	sigaction(SIGALRM, NULL, &sa);
	assert_true(sa.sa_handler == SIG_IGN);
	/* ignored: not delivered, not left pending */
	raise(SIGALRM);
	sigpending(&cur);
	assert_false(sigismember(&cur, SIGALRM));

	sa.sa_handler = SIG_DFL;
	sigaction(SIGALRM, &sa, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_set_get),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_term_and_path),
		cmocka_unit_test(test_run_status),
		cmocka_unit_test(test_run_child_state),
		cmocka_unit_test(test_run_forwards_signals),
		cmocka_unit_test(test_run_leaves_sigalrm_to_glibc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
