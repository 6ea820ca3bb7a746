/* Unit tests for the read-only readers the setuid programs use instead of
 * accountdb: lib/etc/etc_read.c (newuidmap, newgidmap, newgrp, sg), and
 * hs_fileio_read_alloc_path under them: bad lines and lines with a NUL skipped, a name that is only a
 * prefix never matches, the first valid line wins, a planted symlink, FIFO
 * or directory is refused, a missing file is empty, the hashes are wiped. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_helpers.h"

#include "etc_read.h"
#include "layout.h"

static char *path_in(const struct tmp_dirs *f, const char *name)
{
	static char buf[4][128];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, sizeof buf[0], "%s/%s", f->path, name);
	return p;
}

struct seen {
	char owners[8][32];
	unsigned long start[8], count[8];
	size_t n;
	size_t stop_after;      /* 0: never stop */
};

static int collect(const struct hs_subid *rec, void *ctx)
{
	struct seen *s = ctx;

	assert_true(s->n < 8);
	snprintf(s->owners[s->n], sizeof s->owners[0], "%s", rec->owner);
	s->start[s->n] = rec->start;
	s->count[s->n] = rec->count;
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static void test_subid_read(void **state)
{
	struct tmp_dirs *f = *state;
	static const char text[] =
		"alice:100000:65536\n"
		"not a line\n"
		"bob:1:0\n"                     /* count 0 does not parse */
		"mallory:5:5\0alice:1:1\n"      /* a NUL inside: skipped whole */
		"\n"
		"# comment:1:1\n"
		"1000:200000:100\n"
		"carol:4294967290:5";           /* no final newline */
	struct seen s = { .n = 0 };

	put_file(f->dfd, "subuid", text, sizeof text - 1, getuid(), getgid(), 0644);
	assert_int_equal(hs_etc_read_subid(path_in(f, "subuid"), collect, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.owners[0], "alice");
	assert_int_equal(s.start[0], 100000);
	assert_int_equal(s.count[0], 65536);
	assert_string_equal(s.owners[1], "1000");
	assert_string_equal(s.owners[2], "carol");
	assert_int_equal(s.start[2], 4294967290UL);

	/* the callback's non-zero value stops the walk and comes back */
	memset(&s, 0, sizeof s);
	s.stop_after = 2;
	assert_int_equal(hs_etc_read_subid(path_in(f, "subuid"), collect, &s), 42);
	assert_int_equal(s.n, 2);

	/* missing: no lines */
	memset(&s, 0, sizeof s);
	assert_int_equal(hs_etc_read_subid(path_in(f, "missing"), collect, &s), 0);
	assert_int_equal(s.n, 0);

	/* a planted symlink, a FIFO and a directory are refused, not read */
	assert_int_equal(symlinkat("subuid", f->dfd, "link"), 0);
	assert_int_equal(hs_etc_read_subid(path_in(f, "link"), collect, &s), -HS_E_SYMLINK);
	assert_int_equal(mkfifoat(f->dfd, "fifo", 0644), 0);
	GUARD_START();
	assert_int_equal(hs_etc_read_subid(path_in(f, "fifo"), collect, &s), -HS_E_NOTREG);
	GUARD_END();
	assert_true(hs_etc_read_subid(f->path, collect, &s) < 0);
	assert_int_equal(s.n, 0);

	assert_int_equal(hs_etc_read_subid(NULL, collect, &s), -EINVAL);
	assert_int_equal(hs_etc_read_subid(path_in(f, "subuid"), NULL, &s), -EINVAL);
	assert_int_equal(hs_etc_read_subid(path_in(f, ".."), collect, &s), -EINVAL);
}

static void test_gshadow_read(void **state)
{
	struct tmp_dirs *f = *state;
	static const char text[] =
		"ali:!:admin:ali\n"             /* a prefix of the name looked up */
		"alice:broken\n"                /* the name, but not a valid line */
		"alice:$6$first:root:bob,carol\n"
		"alice:$6$second::dave\n"       /* a duplicate: the first wins */
		"staff:\0hidden:x:y\n"
		"wheel:!::";
	struct hs_gshadow_entry e = HS_GSHADOW_ENTRY_INIT;

	put_file(f->dfd, "gshadow", text, sizeof text - 1, getuid(), getgid(), 0640);
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "alice", &e), 0);
	assert_true(e.found);
	assert_string_equal(e.gs.name, "alice");
	assert_string_equal(e.gs.passwd, "$6$first");
	assert_string_equal(e.gs.admins, "root");
	assert_string_equal(e.gs.members, "bob,carol");
	hs_etc_read_gshadow_free(&e);
	assert_false(e.found);
	assert_null(e.data);

	/* the last line, without its newline */
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "wheel", &e), 0);
	assert_true(e.found);
	assert_string_equal(e.gs.passwd, "!");
	assert_string_equal(e.gs.members, "");
	hs_etc_read_gshadow_free(&e);

	/* a line with a NUL is skipped, not cut short at it */
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "staff", &e), 0);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);

	/* neither a prefix nor an extension of a listed name matches */
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "al", &e), 0);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "alice2", &e), 0);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);
	/* a name with a ':' (only another NSS source has one) is no
	 * prefix of a line: it names no entry */
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "alice:$6$first", &e), 0);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);

	/* missing file: not found, no error */
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "missing"), "alice", &e), 0);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);

	/* a planted symlink is refused */
	assert_int_equal(symlinkat("gshadow", f->dfd, "glink"), 0);
	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "glink"), "alice", &e), -HS_E_SYMLINK);
	assert_false(e.found);
	hs_etc_read_gshadow_free(&e);

	assert_int_equal(hs_etc_read_gshadow_group(path_in(f, "gshadow"), "", &e), -EINVAL);
	hs_etc_read_gshadow_free(&e);
	assert_int_equal(hs_etc_read_gshadow_group(NULL, "alice", &e), -EINVAL);
	hs_etc_read_gshadow_free(&e);
	hs_etc_read_gshadow_free(NULL);
}

static void test_open_parent(void **state)
{
	struct tmp_dirs *f = *state;
	const char *base;
	struct stat a, b;
	int fd;

	fd = hs_fileio_open_parent(path_in(f, "x"), &base);
	assert_true(fd >= 0);
	assert_string_equal(base, "x");
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(f->dfd, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);

	fd = hs_fileio_open_parent("/etc", &base);
	assert_true(fd >= 0);
	assert_string_equal(base, "etc");
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat("/", &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);

	/* a bare name: the working directory */
	fd = hs_fileio_open_parent("x", &base);
	assert_true(fd >= 0);
	assert_string_equal(base, "x");
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(".", &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);

	assert_int_equal(hs_fileio_open_parent("/", &base), -EINVAL);
	assert_int_equal(hs_fileio_open_parent("/tmp/", &base), -EINVAL);
	assert_int_equal(hs_fileio_open_parent("/tmp/..", &base), -EINVAL);
	assert_int_equal(hs_fileio_open_parent(NULL, &base), -EINVAL);
	assert_int_equal(hs_fileio_open_parent(path_in(f, "nodir/x"), &base), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_subid_read, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_gshadow_read, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_open_parent, tmp_dirs_setup, tmp_dirs_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
