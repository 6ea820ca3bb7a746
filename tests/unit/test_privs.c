/* Tests for lib/base/privs.c.  hs_privs_init changes process-wide state
 * (environment, limits, dumpable, umask), so every check runs in a forked
 * child and reports through its exit status: 0 = all good, otherwise the
 * number of the failed check. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privs.h"
#include "util.h"
#include "test_helpers.h"

#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static char *argv_passwd[] = { (char *)"/usr/bin/passwd", NULL };

static bool is_dev_null(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

static int child_closed_stdio(void *arg)
{
	int which = *(int *)arg;   /* bit mask of fds to close */

	for (int fd = 0; fd <= 2; fd++)
		if (which & (1 << fd))
			close(fd);
	hs_privs_init(1, argv_passwd, "passwd");
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0)
			return 10 + fd;
		if ((which & (1 << fd)) && !is_dev_null(fd))
			return 20 + fd;
	}
	/* the next open must not land on 0-2 */
	int fd = open("/dev/null", O_RDONLY);
	if (fd < 3)
		return 30;
	/* fd 0 (closed before) must be readable, 1 and 2 writable */
	if ((which & 2) && write(1, "x", 1) != 1)
		return 31;
	if ((which & 4) && write(2, "x", 1) != 1)
		return 32;
	return 0;
}

static void test_stdio_opened(void **state)
{
	for (int which = 1; which <= 7; which++)
		assert_int_equal(in_child(child_closed_stdio, &which), 0);
}

struct env_case {
	const char *name, *value;
	bool kept;
};

static int child_env(void *arg)
{
	const struct env_case *cases = arg;
	int n = 0;

	clearenv();
	setenv("LD_PRELOAD", "/tmp/evil.so", 1);
	setenv("LD_LIBRARY_PATH", "/tmp", 1);
	setenv("IFS", "/", 1);
	setenv("HOME", "/tmp/evil", 1);
	setenv("PATH", "/tmp/evil:/bin", 1);
	setenv("SHELL", "/tmp/sh", 1);
	setenv("GCONV_PATH", "/tmp", 1);
	setenv("LOCPATH", "/tmp", 1);
	setenv("NLSPATH", "/tmp/%N", 1);
	setenv("TZDIR", "/tmp", 1);
	setenv("MALLOC_CHECK_", "3", 1);
	setenv("BASH_ENV", "/tmp/x", 1);
	for (const struct env_case *c = cases; c->name; c++)
		setenv(c->name, c->value, 1);
	hs_privs_init(1, argv_passwd, "passwd");

	static const char *const gone[] = {
		"LD_PRELOAD", "LD_LIBRARY_PATH", "IFS", "HOME", "SHELL", "GCONV_PATH",
		"LOCPATH", "NLSPATH", "TZDIR", "MALLOC_CHECK_", "BASH_ENV",
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(gone); i++)
		if (getenv(gone[i]))
			return 10 + (int)i;
	const char *path = getenv("PATH");
	if (!path || strcmp(path, SAFE_PATH) != 0)
		return 30;
	for (const struct env_case *c = cases; c->name; c++, n++) {
		const char *v = getenv(c->name);
		if (c->kept && (!v || strcmp(v, c->value) != 0))
			return 40 + n;
		if (!c->kept && v)
			return 100 + n;
	}
	/* nothing but the allowed names is left */
	extern char **environ;
	int count = 0;
	for (char **e = environ; *e; e++)
		count++;
	int want = 1;   /* PATH */
	for (const struct env_case *c = cases; c->name; c++)
		want += c->kept;
	return count == want ? 0 : 200;
}

static void test_env_scrubbed(void **state)
{
	static const struct env_case set1[] = {
		{ "TERM", "xterm-256color", true },
		{ "LANG", "C.UTF-8", true },
		{ "LANGUAGE", "de_DE:en", true },
		{ "LC_CTYPE", "en_US.UTF-8", true },
		{ "LC_MESSAGES", "de_DE.utf8@euro", true },
		{ "LC_ALL", "../../tmp/evil", false },
		{ "LC_TIME", "/tmp/evil", false },
		{ "LC_NUMERIC", ".hidden", false },
		{ "LC_", "C", false },
		{ "LC_lower", "C", false },
		{ "TZ", "Europe/Berlin", true },
		{ "COLUMNS", "80", true },
		{ "LINES", "24x", false },
		{ "TERMCAP", "xx", false },
		{ "TERMINFO", "/tmp/terminfo", false },
		{ NULL, NULL, false },
	};
	static const struct env_case set2[] = {
		{ "TERM", "xterm;rm -rf /", false },
		{ "LANG", "C.UTF-8\x1b[2J", false },
		{ "TZ", "/etc/shadow", false },
		{ "COLUMNS", "123456", false },
		{ "LINES", "", false },
		{ NULL, NULL, false },
	};
	static const struct env_case set3[] = {
		{ "TERM", "", false },
		{ "TZ", ":/usr/share/zoneinfo/UTC", true },
		{ NULL, NULL, false },
	};
	static const struct env_case set4[] = {
		{ "TZ", "/usr/share/zoneinfo/../../../tmp/x", false },
		{ NULL, NULL, false },
	};
	static const struct env_case set5[] = {
		{ "TZ", "EST5EDT,M3.2.0,M11.1.0", true },
		{ "LANG", "", false },
		{ NULL, NULL, false },
	};
	static const struct env_case set6[] = {
		{ "TZ", "../x", false },
		{ NULL, NULL, false },
	};
	static const struct env_case *const sets[] = { set1, set2, set3, set4, set5, set6 };

	for (size_t i = 0; i < HS_ARRAY_SIZE(sets); i++)
		assert_int_equal(in_child(child_env, (void *)sets[i]), 0);
}

static int child_env_long(void *arg)
{
	char big[2048];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	clearenv();
	setenv("TERM", big, 1);
	setenv("LANG", "C", 1);
	/* a duplicate name in environ: the first one (what getenv saw) wins */
	static char d1[] = "COLUMNS=80", d2[] = "COLUMNS=999";
	putenv(d1);
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return 99;
	memcpy(env, environ, n * sizeof *env);
	env[n] = d2;
	environ = env;
	hs_privs_init(1, argv_passwd, "passwd");
	if (getenv("TERM"))
		return 1;
	if (!getenv("LANG"))
		return 2;
	if (!getenv("COLUMNS") || strcmp(getenv("COLUMNS"), "80") != 0)
		return 3;
	return 0;
}

static void test_env_long_and_duplicates(void **state)
{
	assert_int_equal(in_child(child_env_long, NULL), 0);
}

static int child_limits(void *arg)
{
	struct rlimit rl;

	/* soft FSIZE tiny, hard unlimited: raised to unlimited */
	rl.rlim_cur = 1024;
	rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 90;
	/* CPU: soft 1 s, hard 100 s: raised to the hard limit */
	rl.rlim_cur = 1;
	rl.rlim_max = 100;
	if (setrlimit(RLIMIT_CPU, &rl) < 0)
		return 91;
	rl.rlim_cur = 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 92;
	rlim_t nofile_hard = rl.rlim_max;
	rl.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 93;
	rl.rlim_cur = RLIM_INFINITY;
	rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	umask(0);

	hs_privs_init(1, argv_passwd, "passwd");

	if (getrlimit(RLIMIT_FSIZE, &rl) < 0 || rl.rlim_cur != RLIM_INFINITY)
		return 1;
	if (getrlimit(RLIMIT_CPU, &rl) < 0 || rl.rlim_cur != 100)
		return 2;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 3;
	if (rl.rlim_cur < (nofile_hard < 1024 ? nofile_hard : 1024))
		return 4;
	if (getrlimit(RLIMIT_CORE, &rl) < 0 || rl.rlim_cur != 0 || rl.rlim_max != RLIM_INFINITY)
		return 5;
	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur != rl.rlim_max)
		return 6;
	if (getrlimit(RLIMIT_DATA, &rl) < 0 || rl.rlim_cur != rl.rlim_max)
		return 7;
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		return 8;
	mode_t old = umask(0);
	if (old != 077)
		return 9;
	/* a write beyond the old 1 KiB limit now works */
	FILE *f = tmpfile();
	if (!f)
		return 10;
	char buf[8192] = { 0 };
	if (fwrite(buf, 1, sizeof buf, f) != sizeof buf || fflush(f) != 0)
		return 11;
	fclose(f);
	return 0;
}

static void test_limits_dumpable_umask(void **state)
{
	assert_int_equal(in_child(child_limits, NULL), 0);
}

/* Without privilege to raise a hard limit, the soft one goes to the hard. */
static int child_limits_hard(void *arg)
{
	struct rlimit rl = { .rlim_cur = 1024, .rlim_max = 1 << 20 };

	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 90;
	hs_privs_init(1, argv_passwd, "passwd");
	if (getrlimit(RLIMIT_FSIZE, &rl) < 0 || rl.rlim_cur != (1 << 20))
		return 1;
	return 0;
}

static void test_limits_capped_by_hard(void **state)
{
	assert_int_equal(in_child(child_limits_hard, NULL), 0);
}

static int child_argc0(void *arg)
{
	int *pipefd = arg;
	char *empty[] = { NULL };

	dup2(pipefd[1], 2);
	hs_privs_init(0, empty, "passwd");
	return 42;   /* must not be reached */
}

static void test_argc_zero(void **state)
{
	int p[2];
	char buf[256] = { 0 };

	assert_int_equal(pipe(p), 0);
	assert_int_equal(in_child(child_argc0, p), 1);
	close(p[1]);
	assert_true(read(p[0], buf, sizeof buf - 1) > 0);
	close(p[0]);
	assert_string_equal(buf, "hardened-shadow: called without argv[0]\n");
}

/* argc 0 with fd 2 closed: still exit(1), no crash */
static int child_argc0_closed(void *arg)
{
	char *empty[] = { NULL };

	close(2);
	hs_privs_init(0, empty, "passwd");
	return 42;
}

static void test_argc_zero_closed_stderr(void **state)
{
	assert_int_equal(in_child(child_argc0_closed, NULL), 1);
}

/* Linux 5.18+ delivers an execve with argc 0 as one empty argument: the
 * same refusal */
static int child_empty_argv0(void *arg)
{
	char *argv[] = { (char *)"", NULL };

	hs_privs_init(1, argv, "sg");
	return 42;
}

static void test_empty_argv0(void **state)
{
	assert_int_equal(in_child(child_empty_argv0, NULL), 1);
}

struct name_case { const char *argv0, *fallback, *want; };

static int child_name(void *arg)
{
	const struct name_case *c = arg;
	char *argv[] = { (char *)c->argv0, NULL };
	const char *name = hs_privs_init(1, argv, c->fallback);

	return name && strcmp(name, c->want) == 0 ? 0 : 1;
}

static void test_program_name(void **state)
{
	static const struct name_case cases[] = {
		{ "/usr/bin/passwd", "x", "passwd" },
		{ "chsh", "x", "chsh" },
		{ "./bin/chage", "x", "chage" },
		{ "/usr/bin/", "passwd", "passwd" },
		{ "evil\x1b[2Jname", "passwd", "passwd" },
		{ "/tmp/a\nb", "passwd", "passwd" },
		{ "-rf", "passwd", "passwd" },
		{ "/", NULL, "hardened-shadow" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++)
		if (in_child(child_name, (void *)&cases[i]) != 0)
			fail_msg("program name for \"%s\"", cases[i].argv0);
}

static void test_signals(void **state)
{
	sigset_t saved, now, before;

	sigemptyset(&before);
	sigaddset(&before, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_SETMASK, &before, NULL), 0);

	hs_privs_block_signals(&saved);
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &now), 0);
	assert_true(sigismember(&now, SIGINT));
	assert_true(sigismember(&now, SIGTERM));
	assert_true(sigismember(&now, SIGHUP));
	assert_true(sigismember(&now, SIGTSTP));
	assert_true(sigismember(&now, SIGQUIT));
	assert_true(sigismember(&saved, SIGUSR2));
	assert_false(sigismember(&saved, SIGINT));

	/* a signal sent now is held until restore */
	raise(SIGUSR1);
	sigset_t pend;
	sigpending(&pend);
	assert_true(sigismember(&pend, SIGUSR1));
	signal(SIGUSR1, SIG_IGN);

	hs_privs_restore_signals(&saved);
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &now), 0);
	assert_false(sigismember(&now, SIGINT));
	assert_true(sigismember(&now, SIGUSR2));
	signal(SIGUSR1, SIG_DFL);
	sigemptyset(&before);
	sigprocmask(SIG_SETMASK, &before, NULL);
}

static int child_not_root(void *arg)
{
	if (!hs_privs_caller_is_root())
		return 1;
	if (setresuid(12345, 12345, 12345) < 0)
		return 2;
	return hs_privs_caller_is_root() ? 3 : 0;
}

static void test_caller_is_root(void **state)
{
	if (getuid() != 0)
		skip();
	assert_int_equal(in_child(child_not_root, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdio_opened),
		cmocka_unit_test(test_env_scrubbed),
		cmocka_unit_test(test_env_long_and_duplicates),
		cmocka_unit_test(test_limits_dumpable_umask),
		cmocka_unit_test(test_limits_capped_by_hard),
		cmocka_unit_test(test_argc_zero),
		cmocka_unit_test(test_argc_zero_closed_stderr),
		cmocka_unit_test(test_empty_argv0),
		cmocka_unit_test(test_program_name),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_caller_is_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
