/* The guess guard (lib/auth/guessguard.c): it keeps the guess lock through
 * the delay after a wrong guess, and after the checker dies without a
 * verdict; a right guess ends it at once; it is in a session of its own.
 * Needs root (the guard sets every uid to 0). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/file.h>
#include <time.h>

#include "test_helpers.h"
#include "guessguard.h"

#define DELAY_MS 300u

static char lockpath[] = "/tmp/hs-test-guessguard-XXXXXX";
static char markpath[] = "/tmp/hs-test-guessguard-mark-XXXXXX";

/* The application's handler: it leaves a mark wherever it runs. */
static void app_handler(int sig)
{
	int fd = open(markpath, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	(void)sig;
	if (fd >= 0)
		close(fd);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

/* The lock file, opened anew and flocked (the guess lock). */
static int take_lock(void)
{
	int fd = open(lockpath, O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

static bool lock_is_free(void)
{
	int fd = open(lockpath, O_RDWR | O_CLOEXEC);
	bool free_now;

	assert_true(fd >= 0);
	free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return free_now;
}

static void test_right_guess_ends_it_at_once(void **state)
{
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	int fd = take_lock();
	double t;

	(void)state;
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	assert_true(g.pid > 0);
	assert_int_equal(getsid(g.pid), g.pid);   /* out of our terminal's reach */
	/* waited for by its pidfd, not a pid another child may get later */
	assert_true(g.pidfd >= 0);
	t = now_ms();
	hs_guessguard_end(&g, true);
	assert_true(now_ms() - t < DELAY_MS / 2);
	assert_int_equal(g.pid, -1);
	assert_int_equal(g.pidfd, -1);
	close(fd);
	assert_true(lock_is_free());
	hs_guessguard_end(&g, false);            /* a second end does nothing */
}

static void test_wrong_guess_costs_the_delay(void **state)
{
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	int fd = take_lock();
	double t, took;

	(void)state;
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	t = now_ms();
	hs_guessguard_end(&g, false);
	took = now_ms() - t;
	close(fd);
	assert_true(took >= DELAY_MS - 10);
	/* and once only: the guard's delay and ours both run from the
	 * verdict, not one after the other (su's caller waits no longer) */
	assert_true(took < 2 * DELAY_MS - 50);
	assert_true(lock_is_free());
}

static void test_killed_checker_still_costs_the_delay(void **state)
{
	pid_t pid;
	int status;
	double t;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct hs_guessguard g = HS_GUESSGUARD_INIT;
		int fd = open(lockpath, O_RDWR | O_CLOEXEC);

		if (fd < 0 || flock(fd, LOCK_EX) < 0 || hs_guessguard_start(&g, fd, DELAY_MS) < 0)
			_exit(1);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	t = now_ms();
	assert_false(lock_is_free());            /* the guard keeps it */
	while (!lock_is_free()) {
		assert_true(now_ms() - t < 10 * DELAY_MS);
		usleep(5000);
	}
	assert_true(now_ms() - t >= DELAY_MS - 50);
}

static void test_no_handler_of_the_application_runs_in_the_guard(void **state)
{
	struct sigaction sa = { .sa_handler = app_handler }, old;
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	int fd = take_lock();

	(void)state;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	/* root's signal (a shutdown, a pkill of the application's name) */
	assert_int_equal(kill(g.pid, SIGUSR1), 0);
	hs_guessguard_end(&g, false);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	close(fd);
	assert_int_equal(access(markpath, F_OK), -1);
}

/* An application that reaps every child of its own: a SIGCHLD handler
 * that waits for any pid. */
static void reap_all(int sig)
{
	int e = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = e;
}

/* A wrong guess costs the delay, a right one ends at once, whoever
 * reaps the guard; the application's SIGCHLD disposition is its own
 * afterwards. */
static void guesses_under(const struct sigaction *sa)
{
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	struct sigaction old, now;
	int fd = take_lock();
	double t, took;

	assert_int_equal(sigaction(SIGCHLD, sa, &old), 0);
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	t = now_ms();
	hs_guessguard_end(&g, false);
	took = now_ms() - t;
	assert_true(took >= DELAY_MS - 10);
	assert_true(lock_is_free() == false);    /* ours until we close it */
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	t = now_ms();
	hs_guessguard_end(&g, true);
	assert_true(now_ms() - t < DELAY_MS / 2);
	assert_int_equal(sigaction(SIGCHLD, &old, &now), 0);
	assert_true(now.sa_handler == sa->sa_handler);
	close(fd);
	assert_true(lock_is_free());
	assert_true(took < 2 * DELAY_MS - 50);  /* once only */
}

static void test_a_reaping_handler_does_not_shorten_the_delay(void **state)
{
	struct sigaction sa = { .sa_handler = reap_all, .sa_flags = SA_RESTART };

	(void)state;
	guesses_under(&sa);
}

static void test_sigchld_ignored_does_not_shorten_the_delay(void **state)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	(void)state;
	guesses_under(&sa);
}

static void *reaper_thread(void *arg)
{
	(void)arg;
	while (waitpid(-1, NULL, 0) > 0)
		;
	return NULL;
}

/* Another thread of the application waits for any child: it may win the
 * guard's exit status, the delay stays whole. */
static void test_a_reaping_thread_does_not_shorten_the_delay(void **state)
{
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	int fd = take_lock();
	pthread_t th;
	double t;

	(void)state;
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	assert_int_equal(pthread_create(&th, NULL, reaper_thread, NULL), 0);
	t = now_ms();
	hs_guessguard_end(&g, false);
	assert_true(now_ms() - t >= DELAY_MS - 10);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(fd);
}

/* A guard that ends early (root's kill, the OOM killer), reaped by the
 * application's handler: the failure still costs this process the delay
 * from the verdict on, and the guess lock stays held meanwhile. */
static void test_a_guard_ended_early_still_costs_the_delay(void **state)
{
	struct sigaction sa = { .sa_handler = reap_all, .sa_flags = SA_RESTART }, old;
	struct hs_guessguard g = HS_GUESSGUARD_INIT;
	int fd = take_lock();
	pid_t killer;
	double t;

	(void)state;
	assert_int_equal(sigaction(SIGCHLD, &sa, &old), 0);
	assert_int_equal(hs_guessguard_start(&g, fd, DELAY_MS), 0);
	killer = fork();
	assert_true(killer >= 0);
	if (killer == 0) {
		usleep(DELAY_MS * 1000 / 6);
		_exit(kill(g.pid, SIGKILL) == 0 ? 0 : 1);
	}
	t = now_ms();
	hs_guessguard_end(&g, false);
	assert_true(now_ms() - t >= DELAY_MS - 10);
	assert_int_equal(sigaction(SIGCHLD, &old, NULL), 0);
	assert_false(lock_is_free());
	close(fd);
	assert_true(lock_is_free());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_right_guess_ends_it_at_once),
		cmocka_unit_test(test_wrong_guess_costs_the_delay),
		cmocka_unit_test(test_killed_checker_still_costs_the_delay),
		cmocka_unit_test(test_no_handler_of_the_application_runs_in_the_guard),
		cmocka_unit_test(test_a_reaping_handler_does_not_shorten_the_delay),
		cmocka_unit_test(test_sigchld_ignored_does_not_shorten_the_delay),
		cmocka_unit_test(test_a_reaping_thread_does_not_shorten_the_delay),
		cmocka_unit_test(test_a_guard_ended_early_still_costs_the_delay),
	};
	int fd, r;

	if (geteuid() != 0) {
		struct hs_guessguard g = HS_GUESSGUARD_INIT;

		/* without root there is no guard, and the caller is told */
		if (hs_guessguard_start(&g, 0, DELAY_MS) != -EPERM || g.pid != -1)
			return 1;
		fprintf(stderr, "test_guessguard: needs root (the guard's uids)\n");
		return 77;
	}
	fd = mkstemp(lockpath);
	if (fd < 0)
		return 1;
	close(fd);
	/* a name of our own; the file itself is the handler's to make */
	fd = mkstemp(markpath);
	if (fd < 0)
		return 1;
	close(fd);
	unlink(markpath);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(lockpath);
	unlink(markpath);
	return r;
}
