/* Unit tests for src/setid/subidmap.c: parsing map arguments (strict decimal,
 * triples, overflow at 2^32 - 1, the 340-line cap), overlap inside and
 * outside, the map text, the grants of /etc/subuid (by name and by uid,
 * merged across adjacent and overlapping lines, bad lines skipped, a
 * missing file), coverage, and opening the target (pid, fd:N, dead and
 * invalid targets). */
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
#include <sys/wait.h>
#include <unistd.h>

#include "subidmap.h"
#include "util.h"

static int parse(struct hs_idmap_range *out, size_t n, ...)
{
	char *args[1100];
	va_list ap;

	assert_true(n <= 1100);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		args[i] = va_arg(ap, char *);
	va_end(ap);
	return hs_idmap_parse(args, n, out);
}

static void test_parse(void **state)
{
	static struct hs_idmap_range r[HS_IDMAP_MAX_RANGES];

	(void)state;
	assert_int_equal(parse(r, 6, "0", "1000", "1", "1", "100000", "65536"), 2);
	assert_int_equal(r[0].inside, 0);
	assert_int_equal(r[0].outside, 1000);
	assert_int_equal(r[0].count, 1);
	assert_int_equal(r[1].inside, 1);
	assert_int_equal(r[1].outside, 100000);
	assert_int_equal(r[1].count, 65536);
	/* count 0 parses (refused later as "not allowed") */
	assert_int_equal(parse(r, 3, "0", "1", "0"), 1);

	assert_int_equal(parse(r, 0), -EINVAL);
	assert_int_equal(parse(r, 2, "0", "1"), -EINVAL);
	assert_int_equal(parse(r, 4, "0", "1", "1", "2"), -EINVAL);
	assert_int_equal(parse(r, 3, "0", "0x10", "1"), -HS_E_FORMAT);
	assert_int_equal(parse(r, 3, "0", "010", "1"), -HS_E_FORMAT);
	assert_int_equal(parse(r, 3, "0", "-1", "1"), -HS_E_FORMAT);
	assert_int_equal(parse(r, 3, "0", " 1", "1"), -HS_E_FORMAT);
	assert_int_equal(parse(r, 3, "0", "", "1"), -HS_E_FORMAT);

	/* the last id a map may reach is 2^32 - 2 */
	assert_int_equal(parse(r, 3, "0", "4294967294", "1"), 1);
	assert_int_equal(parse(r, 3, "4294967294", "0", "1"), 1);
	assert_int_equal(parse(r, 3, "0", "4294967295", "1"), -HS_E_RANGE);
	assert_int_equal(parse(r, 3, "4294967290", "0", "6"), -HS_E_RANGE);
	assert_int_equal(parse(r, 3, "0", "1", "4294967295"), -HS_E_RANGE);
	assert_int_equal(parse(r, 3, "0", "18446744073709551615", "1"), -HS_E_RANGE);
	assert_int_equal(parse(r, 3, "0", "99999999999999999999999", "1"), -HS_E_RANGE);
}

static void test_parse_many(void **state)
{
	static struct hs_idmap_range r[HS_IDMAP_MAX_RANGES];
	static char num[3 * (HS_IDMAP_MAX_RANGES + 1)][12];
	char *args[3 * (HS_IDMAP_MAX_RANGES + 1)];

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(args); i++) {
		snprintf(num[i], sizeof num[i], "%zu", i % 3 == 2 ? (size_t)1 : i);
		args[i] = num[i];
	}
	assert_int_equal(hs_idmap_parse(args, 3 * HS_IDMAP_MAX_RANGES, r), HS_IDMAP_MAX_RANGES);
	assert_int_equal(hs_idmap_parse(args, 3 * (HS_IDMAP_MAX_RANGES + 1), r), -E2BIG);
}

static void test_overlap(void **state)
{
	struct hs_idmap_range r[3] = {
		{ 0, 1000, 1 }, { 1, 100000, 65536 }, { 65537, 200000, 10 },
	};
	size_t a = 99, b = 99;

	(void)state;
	assert_false(hs_idmap_overlap(r, 3, &a, &b));
	/* inside */
	r[2].inside = 65536;
	assert_true(hs_idmap_overlap(r, 3, &a, &b));
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	/* outside */
	r[2].inside = 65537;
	r[2].outside = 165535;
	assert_true(hs_idmap_overlap(r, 3, &a, &b));
	/* touching is fine */
	r[2].outside = 165537;
	assert_false(hs_idmap_overlap(r, 3, &a, &b));
	/* a count of 0 overlaps nothing */
	struct hs_idmap_range z[2] = { { 5, 5, 0 }, { 0, 0, 10 } };
	assert_false(hs_idmap_overlap(z, 2, &a, &b));
	/* at the top of the id space */
	struct hs_idmap_range t[2] = { { 4294967284, 0, 10 }, { 4294967293, 10, 1 } };
	assert_true(hs_idmap_overlap(t, 2, &a, &b));
}

static void test_format(void **state)
{
	struct hs_idmap_range r[2] = { { 0, 1000, 1 }, { 1, 100000, 65536 } };
	char buf[64], tiny[10];

	(void)state;
	assert_int_equal(hs_idmap_format(r, 2, buf, sizeof buf), 24);
	assert_string_equal(buf, "0 1000 1\n1 100000 65536\n");
	assert_int_equal(hs_idmap_format(r, 2, tiny, sizeof tiny), -ENOSPC);
	assert_int_equal(hs_idmap_format(r, 0, buf, sizeof buf), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_grants(void **state)
{
	char dir[] = "/tmp/hs-test-subidmap-XXXXXX", path[64], err[600];
	struct hs_subid_grants g = HS_SUBID_GRANTS_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/subuid", dir);
	write_file(path,
		   "alice:100000:65536\n"
		   "bob:300000:10\n"
		   "this is not a line\n"
		   "1000:200000:100\n"      /* alice by uid */
		   "alice:165536:10\n"      /* adjacent to the first */
		   "alice:100010:5\n"       /* inside the first */
		   "\n"
		   "alice:4294967290:5\n"); /* the very top */
	assert_int_equal(hs_subid_grants_load(path, "alice", 1000, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 3);
	assert_true(hs_subid_grants_cover(&g, 100000, 65536));
	assert_true(hs_subid_grants_cover(&g, 100000, 65546));    /* spans two lines */
	assert_false(hs_subid_grants_cover(&g, 100000, 65547));
	assert_true(hs_subid_grants_cover(&g, 165545, 1));
	assert_false(hs_subid_grants_cover(&g, 99999, 2));
	assert_true(hs_subid_grants_cover(&g, 200000, 100));
	assert_false(hs_subid_grants_cover(&g, 200000, 101));
	assert_false(hs_subid_grants_cover(&g, 300000, 1));        /* bob's */
	assert_false(hs_subid_grants_cover(&g, 100000, 0));
	assert_true(hs_subid_grants_cover(&g, 4294967290, 5));
	assert_false(hs_subid_grants_cover(&g, 4294967290, 6));
	hs_subid_grants_free(&g);

	/* someone with no lines, a different uid */
	assert_int_equal(hs_subid_grants_load(path, "carol", 1002, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 0);
	assert_false(hs_subid_grants_cover(&g, 100000, 1));
	hs_subid_grants_free(&g);

	/* a missing file grants nothing */
	snprintf(path, sizeof path, "%s/missing", dir);
	assert_int_equal(hs_subid_grants_load(path, "alice", 1000, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 0);

	/* a directory is an error that names the file */
	assert_true(hs_subid_grants_load(dir, "alice", 1000, &g, err, sizeof err) < 0);
	assert_non_null(strstr(err, dir));

	snprintf(path, sizeof path, "%s/subuid", dir);
	unlink(path);
	rmdir(dir);
}

static void test_open_target(void **state)
{
	char arg[32];
	pid_t pid, child;
	int fd, pfd;

	(void)state;
	snprintf(arg, sizeof arg, "%ld", (long)getpid());
	fd = hs_idmap_open_target(arg, &pid);
	assert_true(fd >= 0);
	assert_int_equal(pid, getpid());
	assert_true(faccessat(fd, "uid_map", F_OK, 0) == 0);
	hs_close(fd);

	pfd = open("/proc/self", O_RDONLY | O_DIRECTORY);
	assert_true(pfd >= 0);
	snprintf(arg, sizeof arg, "fd:%d", pfd);
	fd = hs_idmap_open_target(arg, &pid);
	assert_true(fd >= 0 && fd != pfd);
	assert_int_equal(pid, 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	hs_close(fd);
	hs_close(pfd);

	pfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	snprintf(arg, sizeof arg, "fd:%d", pfd);
	assert_int_equal(hs_idmap_open_target(arg, &pid), -ENOTDIR);
	hs_close(pfd);
	assert_int_equal(hs_idmap_open_target("fd:1000000", &pid), -EBADF);

	/* a process that is gone (reaped) */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	snprintf(arg, sizeof arg, "%ld", (long)child);
	assert_int_equal(hs_idmap_open_target(arg, &pid), -ESRCH);

	for (const char *const *bad = (const char *const[]){ "", "0", "-1", "01", "+5", "1x",
	     "4294967296", "fd:", "fd:-1", "fd:x", "FD:3", NULL }; *bad; bad++)
		assert_int_equal(hs_idmap_open_target(*bad, &pid), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_many),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_open_target),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
