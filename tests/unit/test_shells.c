/* Unit tests for lib/etc/shells.c: matching as getusershell(3) lists shells
 * (comments and blank lines ignored, exact lines only), add, remove,
 * atomic write keeping owner and mode, restore.  Files live in a mkdtemp
 * directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "globalfile.h"
#include "shells.h"
#include "strbuf.h"
#include "test_helpers.h"

static const char shells_text[] =
	"# /etc/shells: valid login shells\n"
	"\n"
	"/bin/sh\n"
	"/bin/bash\n"
	"#/bin/csh\n"
	"/usr/bin/zsh   \n"
	"  /bin/dash\n"
	"/bin/fish # comment\n"
	"/usr/bin/tmux";

static char *path_in(const struct tmp_dirs *f, const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof buf, "%s/%s", f->path, name);
	return buf;
}

/* What pwconv does with the contents: one replace through the one writer
 * (hs_globalfile_replace: owner and mode kept, root:root 0644 for a new
 * file, the old contents kept as PATH-). */
static int shells_write(const struct hs_shells *s)
{
	struct hs_buf b = { 0 };
	int r = hs_shells_contents(s, &b);

	if (r == 0)
		r = hs_globalfile_replace(s->path, b.data ? b.data : "", b.len, 0, 0, 0644);
	hs_strbuf_free(&b);
	return r;
}

static void test_contains(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shells s;

	put_str(f->dfd, "shells", shells_text, 0, 0, 0644);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	assert_true(s.present);
	assert_true(hs_shells_contains(&s, "/bin/sh"));
	assert_true(hs_shells_contains(&s, "/bin/bash"));
	assert_true(hs_shells_contains(&s, "/usr/bin/tmux"));  /* last line, no newline */
	/* a commented-out shell is not a shell */
	assert_false(hs_shells_contains(&s, "/bin/csh"));
	assert_false(hs_shells_contains(&s, "#/bin/csh"));
	assert_false(hs_shells_contains(&s, "# /etc/shells: valid login shells"));
	/* blank lines never match the empty shell */
	assert_false(hs_shells_contains(&s, ""));
	/* only exact lines count */
	assert_false(hs_shells_contains(&s, "/usr/bin/zsh"));
	assert_false(hs_shells_contains(&s, "/bin/dash"));
	assert_false(hs_shells_contains(&s, "/bin/fish"));
	assert_false(hs_shells_contains(&s, "/bin/ba"));
	assert_false(hs_shells_contains(&s, "/bin/bash/"));
	assert_false(hs_shells_contains(&s, NULL));
	hs_shells_free(&s);

	/* a NUL in a line does not make a prefix match */
	put_file(f->dfd, "shells", "/bin/sh\0x\n", 10, 0, 0, 0644);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	assert_false(hs_shells_contains(&s, "/bin/sh"));
	hs_shells_free(&s);
}

static void test_add_remove_write(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shells s;
	struct stat st;
	const char *out;

	put_str(f->dfd, "shells", shells_text, 0, 42, 0604);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	/* nothing changed: written back byte for byte */
	assert_int_equal(shells_write(&s), 0);
	assert_string_equal(slurp(f->dfd, "shells"), shells_text);

	assert_int_equal(hs_shells_add(&s, "/bin/bash"), 0);  /* already there */
	assert_false(s.dirty);
	assert_int_equal(hs_shells_add(&s, "/usr/libexec/proxy"), 1);
	assert_true(hs_shells_contains(&s, "/usr/libexec/proxy"));
	assert_int_equal(hs_shells_add(&s, "relative"), -EINVAL);
	assert_int_equal(hs_shells_add(&s, "/bin/x\n/bin/y"), -EINVAL);
	assert_int_equal(hs_shells_add(&s, "/bin/\x1b"), -EINVAL);
	assert_int_equal(shells_write(&s), 0);
	out = slurp(f->dfd, "shells");
	assert_non_null(out);
	{
		char expect[512];
		snprintf(expect, sizeof expect, "%s\n/usr/libexec/proxy\n", shells_text);
		assert_string_equal(out, expect);
	}
	/* owner and mode kept; the previous contents kept as shells-, as
	 * for every file the one writer replaces */
	assert_int_equal(fstatat(f->dfd, "shells", &st, 0), 0);
	assert_int_equal(st.st_gid, 42);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_string_equal(slurp(f->dfd, "shells-"), shells_text);
	hs_shells_free(&s);

	/* remove every exact copy, leave everything else alone */
	put_str(f->dfd, "shells",
		"/bin/sh\n/usr/libexec/proxy\n# /usr/libexec/proxy\n\n/usr/libexec/proxy\n/bin/bash",
		0, 0, 0644);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	assert_int_equal(hs_shells_remove(&s, "/usr/libexec/proxy"), 2);
	assert_false(hs_shells_contains(&s, "/usr/libexec/proxy"));
	assert_int_equal(hs_shells_remove(&s, "/usr/libexec/proxy"), 0);
	assert_int_equal(shells_write(&s), 0);
	assert_string_equal(slurp(f->dfd, "shells"),
			    "/bin/sh\n# /usr/libexec/proxy\n\n/bin/bash\n");
	assert_string_equal(slurp(f->dfd, "shells-"),
			    "/bin/sh\n/usr/libexec/proxy\n# /usr/libexec/proxy\n\n/usr/libexec/proxy\n/bin/bash");
	hs_shells_free(&s);
}

static void test_missing_file(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shells s;
	struct stat st;

	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	assert_false(s.present);
	assert_false(hs_shells_contains(&s, "/bin/sh"));
	assert_int_equal(hs_shells_add(&s, "/usr/libexec/proxy"), 1);
	assert_int_equal(shells_write(&s), 0);
	assert_string_equal(slurp(f->dfd, "shells"), "/usr/libexec/proxy\n");
	assert_int_equal(fstatat(f->dfd, "shells", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_uid, 0);
	/* no backup of a file that did not exist */
	assert_int_equal(fstatat(f->dfd, "shells-", &st, 0), -1);
	assert_int_equal(errno, ENOENT);
	hs_shells_free(&s);
}

static void test_hostile_file(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shells s;
	struct stat st;

	/* a symlink is neither read nor written through */
	assert_int_equal(symlinkat("/etc/shells", f->dfd, "shells"), 0);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), -HS_E_SYMLINK);
	assert_non_null(strstr(s.error, "cannot read"));
	assert_int_equal(unlinkat(f->dfd, "shells", 0), 0);

	put_str(f->dfd, "shells", "/bin/sh\n", 0, 0, 0644);
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), 0);
	assert_int_equal(unlinkat(f->dfd, "shells", 0), 0);
	assert_int_equal(symlinkat("/tmp/hs-nonexistent-target", f->dfd, "shells"), 0);
	assert_int_equal(hs_shells_add(&s, "/bin/zsh"), 1);
	assert_int_equal(shells_write(&s), -HS_E_SYMLINK);
	assert_int_equal(fstatat(f->dfd, "shells", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISLNK(st.st_mode));
	hs_shells_free(&s);

	/* a FIFO does not block */
	assert_int_equal(unlinkat(f->dfd, "shells", 0), 0);
	assert_int_equal(mkfifoat(f->dfd, "shells", 0644), 0);
	GUARD_START();
	assert_int_equal(hs_shells_load(&s, path_in(f, "shells")), -HS_E_NOTREG);
	GUARD_END();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_contains, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_add_remove_write, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_file, tmp_dirs_setup, tmp_dirs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
