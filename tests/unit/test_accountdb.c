/* Unit tests for lib/etc/accountdb.c: byte-exact round trips, edits that leave
 * every other line alone, duplicates, bad lines with their line numbers,
 * and a 100,000-line file.  Files live in a mkdtemp directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accountdb.h"
#include "test_helpers.h"

static const char passwd_text[] =
	"root:x:0:0:root:/root:/bin/bash\n"
	"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	"\n"
	"alice:x:1000:1000:Alice Ü,,,:/home/alice:/bin/bash\n"
	"bob:x:1001:1001::/home/bob:\n";

static char *path_in(const struct tmp_dirs *f, const char *name)
{
	static char buf[4][128];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 128, "%s/%s", f->path, name);
	return p;
}

/* The whole file (hs_globalfile_read); caller frees. */
static char *read_all(const char *path, size_t *len)
{
	char *data = NULL;

	assert_int_equal(hs_globalfile_read(path, &data, len), 0);
	return data;
}

static char *serialize(const struct hs_accountdb *db, size_t *len)
{
	struct hs_buf b = { 0 };
	char *s;

	assert_int_equal(hs_accountdb_serialize(db, &b), 0);
	s = malloc(b.len + 1);
	assert_non_null(s);
	if (b.len)
		memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	*len = b.len;
	hs_strbuf_free(&b);
	return s;
}

static void test_round_trip_identical(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	size_t len;
	char *out;

	put_str(f->dfd, "passwd", passwd_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0), 0);
	assert_true(db.present);
	assert_false(db.dirty);
	assert_int_equal(db.n_lines, 5);
	assert_int_equal(db.n_entries, 4);
	assert_false(db.lines[2].entry);      /* the blank line */
	assert_int_equal(db.lines[3].lineno, 4);
	assert_string_equal(db.lines[3].rec.pw.gecos, "Alice Ü,,,");
	out = serialize(&db, &len);
	assert_int_equal(len, strlen(passwd_text));
	assert_memory_equal(out, passwd_text, len);
	free(out);
	/* written back unchanged: same bytes, a backup, owner and mode kept */
	assert_int_equal(hs_accountdb_write(&db), 0);
	out = read_all(path_in(f, "passwd"), &len);
	assert_string_equal(out, passwd_text);
	free(out);
	out = read_all(path_in(f, "passwd-"), &len);
	assert_string_equal(out, passwd_text);
	free(out);
	hs_accountdb_free(&db);
}

static void test_modify_keeps_others(void **state)
{
	struct tmp_dirs *f = *state;
	/* odd but valid spellings the formatter would not produce itself
	 * stay exactly as they are on lines nobody touched */
	static const char shadow_text[] =
		"root:!:19000:0:99999:7:::\n"
		"alice:$y$j9T$abc$def:19001:-1::7:-1::\n"
		"bob:*:19002::::::1\n";
	struct hs_accountdb db;
	struct hs_passwd p;
	struct hs_spwd s;
	struct stat st;
	size_t len;
	long i;
	char *out;

	put_str(f->dfd, "passwd", passwd_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0), 0);
	i = hs_accountdb_find(&db, "alice");
	assert_int_equal(i, 3);
	p = db.lines[i].rec.pw;
	p.shell = (char *)"/bin/zsh";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), 0);
	assert_true(db.dirty);
	assert_string_equal(hs_accountdb_get(&db, (size_t)i)->pw.shell, "/bin/zsh");
	assert_int_equal(hs_accountdb_find(&db, "alice"), 3);
	assert_int_equal(hs_accountdb_find_id(&db, 1000), 3);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "passwd"), &len);
	assert_string_equal(out,
		"root:x:0:0:root:/root:/bin/bash\n"
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
		"\n"
		"alice:x:1000:1000:Alice Ü,,,:/home/alice:/bin/zsh\n"
		"bob:x:1001:1001::/home/bob:\n");
	free(out);

	put_str(f->dfd, "shadow", shadow_text, 0, 42, 0640);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_SHADOW, path_in(f, "shadow"), 0), 0);
	i = hs_accountdb_find(&db, "root");
	assert_int_equal(i, 0);
	s = db.lines[i].rec.sp;
	s.hash = (char *)"$y$new$hash";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &s), 0);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "shadow"), &len);
	assert_string_equal(out,
		"root:$y$new$hash:19000:0:99999:7:::\n"
		"alice:$y$j9T$abc$def:19001:-1::7:-1::\n"
		"bob:*:19002::::::1\n");
	free(out);
	/* the rewrite kept owner and mode */
	assert_int_equal(fstatat(f->dfd, "shadow", &st, 0), 0);
	assert_int_equal(st.st_gid, 42);
	assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_rename_and_conflicts(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	struct hs_passwd p;
	long i;

	put_str(f->dfd, "passwd", passwd_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0), 0);
	i = hs_accountdb_find(&db, "bob");
	p = db.lines[i].rec.pw;
	/* renaming onto a taken name is refused, and nothing changes */
	p.name = (char *)"alice";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), -EEXIST);
	assert_non_null(strstr(db.error, "alice"));
	assert_false(db.dirty);
	p.name = (char *)"robert";
	p.uid = 2000;
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), 0);
	assert_int_equal(hs_accountdb_find(&db, "bob"), -1);
	assert_int_equal(hs_accountdb_find(&db, "robert"), i);
	assert_int_equal(hs_accountdb_find_id(&db, 1001), -1);
	assert_int_equal(hs_accountdb_find_id(&db, 2000), i);
	/* an invalid field is refused by the formatter: nothing stored */
	p.gecos = (char *)"evil\nroot2::0:0::/:/bin/sh";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), -HS_E_FIELD);
	assert_non_null(strstr(db.error, "cannot write the"));
	assert_string_equal(db.lines[i].rec.pw.gecos, "");
	p.gecos = (char *)"a:b";
	assert_int_equal(hs_accountdb_append(&db, &p), -HS_E_FIELD);
	hs_accountdb_free(&db);
}

/* A name a scan found nowhere is remembered only until the next edit: a
 * rename or an add of that name is seen by the next check. */
static void test_absent_name_forgotten_on_edit(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	struct hs_passwd p;
	long i, j;

	put_str(f->dfd, "passwd", passwd_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), HS_DB_LAZY), 0);
	i = hs_accountdb_find(&db, "bob");
	assert_true(i >= 0);
	assert_int_equal(hs_accountdb_find(&db, "carol"), -1);
	p = hs_accountdb_get(&db, (size_t)i)->pw;
	p.name = "carol";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), 0);
	assert_int_equal(hs_accountdb_find(&db, "carol"), i);
	assert_int_equal(hs_accountdb_append(&db, &p), -EEXIST);
	hs_accountdb_free(&db);
	/* an add of the name just found absent, then another (a new load:
	 * the first lookups scan, later ones use the table) */
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), HS_DB_LAZY), 0);
	assert_int_equal(hs_accountdb_find(&db, "dave"), -1);
	p = hs_accountdb_get(&db, (size_t)i)->pw;
	p.name = "dave";
	p.uid = 3000;
	j = hs_accountdb_append(&db, &p);
	assert_true(j >= 0);
	assert_int_equal(hs_accountdb_find(&db, "dave"), j);
	assert_int_equal(hs_accountdb_append(&db, &p), -EEXIST);
	/* and after a delete the name is free again */
	assert_int_equal(hs_accountdb_delete(&db, (size_t)j), 0);
	assert_int_equal(hs_accountdb_find(&db, "dave"), -1);
	assert_true(hs_accountdb_append(&db, &p) >= 0);
	hs_accountdb_free(&db);
}

/* A deleted line that did not parse no longer holds its name, for the
 * name table (built at load without HS_DB_LAZY) as for the scans. */
static void test_deleted_bad_line_frees_name(void **state)
{
	static const char text[] =
		"root:x:0:0::/root:/bin/sh\n"
		"mallory:x:-1:0::/:/bin/sh\n"
		"bob:x:1001:1001::/home/bob:/bin/sh\n";
	const unsigned flags[] = { HS_DB_KEEP_BAD, HS_DB_LAZY };
	struct hs_passwd p = { "mallory", "x", 1002, 1002, "", "/home/mallory", "/bin/sh" };
	struct hs_accountdb db;

	(void)state;
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD, "/nonexistent/passwd",
							text, strlen(text), flags[k]), 0);
		/* lookups enough for the lazy db to build its table */
		for (int n = 0; n < 6; n++)
			assert_int_equal(hs_accountdb_find(&db, "bob"), 2);
		assert_int_equal(hs_accountdb_find(&db, "mallory"), -1);
		assert_int_equal(hs_accountdb_delete(&db, 1), 0);
		assert_int_equal(hs_accountdb_append(&db, &p), 3);
		assert_int_equal(hs_accountdb_find(&db, "mallory"), 3);
		hs_accountdb_free(&db);
	}
}

/* Let this process's address space grow by extra bytes past what it
 * holds now (RLIMIT_AS); false when that cannot be set. */
static bool address_space_room(size_t extra)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	bool ok = f && fscanf(f, "%lu", &pages) == 1;
	struct rlimit as = { 0, 0 };

	if (f)
		fclose(f);
	as.rlim_cur = as.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + extra;
	return ok && setrlimit(RLIMIT_AS, &as) == 0;
}

/* A load whose line array cannot be had while its bitmap can (a small
 * RLIMIT_AS, a big file) fails with ENOMEM and frees what it had: the
 * bitmap, in memory that held set bits, was left uncleared, and the free
 * followed its bits into the missing line array. */
static int load_out_of_memory_half_way(void *unused)
{
	const size_t n = 300000, bitmap = (n + 16 + 7) / 8;
	struct hs_accountdb db;
	char *data = malloc(2 * n), *old;

	(void)unused;
	/* a crash kills the child, not cmocka's handler in it */
	signal(SIGSEGV, SIG_DFL);
	if (!data)
		return 2;
	for (size_t i = 0; i < n; i++)
		memcpy(data + 2 * i, "a\n", 2);
	/* room for the starts (2.7 MB), not for the lines (36 MB) */
	if (!address_space_room(8u << 20))
		return 3;
	/* memory of the bitmap's size, all bits set, free for the load */
	old = malloc(bitmap);
	if (!old)
		return 4;
	memset(old, 0xff, bitmap);
	free(old);
	return hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", data, 2 * n,
				      HS_DB_LAZY) == -ENOMEM ? 0 : 5;
}

static void test_load_out_of_memory_half_way(void **state)
{
	(void)state;
	assert_int_equal(in_child_capped(load_out_of_memory_half_way, NULL), 0);
}

/* A full load (every line built) whose one parse copy of the file cannot
 * be had: -ENOMEM with a message that says so, not an empty one. */
static int full_load_out_of_memory(void *unused)
{
	const size_t line = 1 << 20, n = 8;
	struct hs_accountdb db;
	char *data = malloc(line * n);
	int r;

	(void)unused;
	if (!data)
		return 2;
	memset(data, 'a', line * n);
	for (size_t i = 1; i <= n; i++)
		data[i * line - 1] = '\n';
	/* room for the load's own copy of data (8 MiB), the starts and the
	 * line array, not for the parse copy (8 MiB more) */
	if (!address_space_room(12u << 20))
		return 3;
	r = hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", data, line * n,
				   HS_DB_KEEP_BAD);
	return r != -ENOMEM ? 4 : strstr(db.error, "cannot read /nonexistent/group") ? 0 : 5;
}

static void test_full_load_out_of_memory_says_so(void **state)
{
	(void)state;
	assert_int_equal(in_child_capped(full_load_out_of_memory, NULL), 0);
}

/* A lookup of a lazily loaded db that ran out of memory answers "no such
 * line", maybe wrongly (usermod -l went on, leaving the old name in a
 * member list it could not parse): once that happened the db is written
 * no more, and neither is an accountset that holds it. */
static int lookup_out_of_memory(void *arg)
{
	const struct tmp_dirs *f = arg;
	struct hs_accountdb db;
	struct hs_passwd p;
	void **fill;
	long i;

	signal(SIGSEGV, SIG_DFL);
	if (hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), HS_DB_LAZY) < 0)
		return 2;
	fill = fill_address_space();
	if (!fill)
		return 3;
	i = hs_accountdb_find(&db, "bob");
	fill_free(fill);
	if (i != -1 || !strstr(db.error, "Cannot allocate memory"))
		return 4;
	/* room again: the caller, told "no bob", goes on with alice (as
	 * usermod -l went on past a member list it could not read) */
	i = hs_accountdb_find(&db, "alice");
	if (i < 0)
		return 5;
	p = hs_accountdb_get(&db, (size_t)i)->pw;
	p.gecos = "no bob";
	if (hs_accountdb_replace(&db, (size_t)i, &p) < 0)
		return 6;
	if (hs_accountdb_write(&db) != -ENOMEM || !strstr(db.error, "cannot write"))
		return 7;
	hs_accountdb_free(&db);
	return 0;
}

static void test_lookup_out_of_memory_writes_nothing(void **state)
{
	struct tmp_dirs *f = *state;
	size_t len;
	_cleanup_free_ char *before = NULL, *after = NULL;

#ifdef UNDER_ASAN
	skip();         /* here, before anything a skip's longjmp would leak */
#endif
	put_str(f->dfd, "passwd", passwd_text, getuid(), getgid(), 0644);
	before = read_all(path_in(f, "passwd"), &len);
	assert_int_equal(in_child(lookup_out_of_memory, f), 0);
	after = read_all(path_in(f, "passwd"), &len);
	assert_string_equal(before, after);
}

/* A file rewritten in place while it is loaded (by a writer that ignores
 * the locks: an editor that keeps the inode), gaining and losing newlines
 * during the split: the load succeeds or fails as changed, and never
 * writes past the line starts (ASan's run sees such a write). */
struct flipper {
	char *map;
	size_t len;
	volatile int stop;
};

static void *flip_newlines(void *arg)
{
	struct flipper *fl = arg;

	while (!fl->stop)
		for (size_t i = 0; i < fl->len; i += 2)
			fl->map[i] = fl->map[i] == 'a' ? '\n' : 'a';
	return NULL;
}

static void test_rewritten_while_split(void **state)
{
	struct tmp_dirs *f = *state;
	struct flipper fl = { .len = 6000 };
	char *text = malloc(fl.len + 1);
	unsigned changed = 0;
	pthread_t t;
	int fd;

	assert_non_null(text);
	for (size_t i = 0; i < fl.len; i += 2)
		memcpy(text + i, "a\n", 2);
	text[fl.len] = '\0';
	put_str(f->dfd, "group", text, 0, 0, 0644);
	free(text);
	fd = openat(f->dfd, "group", O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	fl.map = mmap(NULL, fl.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(fl.map != MAP_FAILED);
	assert_int_equal(pthread_create(&t, NULL, flip_newlines, &fl), 0);
	for (unsigned k = 0; k < 3000; k++) {
		struct hs_accountdb db;
		int r = hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"),
					  HS_DB_LAZY | HS_DB_KEEP_DUPS | HS_DB_KEEP_BAD);

		assert_true(r == 0 || r == -HS_E_CHANGED);
		if (r == 0)
			hs_accountdb_free(&db);
		else
			changed++;
	}
	fl.stop = 1;
	assert_int_equal(pthread_join(t, NULL), 0);
	munmap(fl.map, fl.len);
	print_message("loads that saw the file change: %u of 3000\n", changed);
}

static void test_duplicates_real(void **state)
{
	struct tmp_dirs *f = *state;
	static const char dup_text[] =
		"root:x:0:0::/root:/bin/sh\n"
		"alice:x:1000:1000::/home/alice:/bin/sh\n"
		"toor:x:0:0::/root:/bin/sh\n"
		"alice:x:1002:1002::/home/alice2:/bin/sh\n";
	struct hs_accountdb db;
	struct hs_passwd p;
	char expect[256];

	put_str(f->dfd, "passwd", dup_text, 0, 0, 0644);
	/* strict: the repeated name fails the load, naming both lines */
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0),
			 -HS_E_FORMAT);
	snprintf(expect, sizeof expect, "%s:4: duplicate user name alice (also on line 2)",
		 path_in(f, "passwd"));
	assert_string_equal(db.error, expect);
	assert_null(db.lines);
	/* kept: the first is found, the second is flagged; ids too */
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"),
					   HS_DB_KEEP_DUPS), 0);
	assert_int_equal(db.n_entries, 4);
	assert_int_equal(hs_accountdb_find(&db, "alice"), 1);
	assert_int_equal(hs_accountdb_dup_name(&db, 3), 1);
	assert_int_equal(hs_accountdb_dup_name(&db, 1), -1);
	assert_int_equal(hs_accountdb_dup_id(&db, 2), 0);
	assert_int_equal(hs_accountdb_dup_id(&db, 0), -1);
	assert_int_equal(hs_accountdb_dup_id(&db, 1), -1);
	/* appending a taken name is refused; a taken id is the caller's call */
	p = db.lines[0].rec.pw;
	assert_int_equal(hs_accountdb_append(&db, &p), -EEXIST);
	p.name = (char *)"root2";
	assert_int_equal(hs_accountdb_append(&db, &p), 4);
	assert_int_equal(hs_accountdb_dup_id(&db, 4), 0);
	/* deleting the first alice makes the second one the one found */
	assert_int_equal(hs_accountdb_delete(&db, 1), 0);
	assert_int_equal(hs_accountdb_find(&db, "alice"), 3);
	assert_int_equal(hs_accountdb_dup_name(&db, 3), -1);
	assert_null(hs_accountdb_get(&db, 1));
	assert_int_equal(hs_accountdb_delete(&db, 1), -EINVAL);
	hs_accountdb_free(&db);

	/* group files: same rule, "group" in the message */
	put_str(f->dfd, "group", "users:x:100:\nusers:x:101:alice\n", 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"), 0),
			 -HS_E_FORMAT);
	assert_non_null(strstr(db.error, ":2: duplicate group name users (also on line 1)"));
	/* subuid: several ranges per owner are normal */
	put_str(f->dfd, "subuid", "alice:100000:65536\nalice:200000:65536\n", 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_SUBID, path_in(f, "subuid"), 0), 0);
	assert_int_equal(hs_accountdb_find(&db, "alice"), 0);
	{
		struct hs_subid s = { (char *)"alice", 300000, 65536 };
		assert_int_equal(hs_accountdb_append(&db, &s), 2);
	}
	hs_accountdb_free(&db);
}

static void test_bad_lines(void **state)
{
	struct tmp_dirs *f = *state;
	static const char bad_text[] =
		"root:x:0:0::/root:/bin/sh\n"
		"alice:x:1000:1000::/home/alice:/bin/sh\n"
		"mallory:x:-1:0::/:/bin/sh\n"
		"+::::::\n"
		"bob:x:1001:1001::/home/bob:/bin/sh\n";
	struct hs_accountdb db;
	struct hs_passwd p;
	char expect[256];
	size_t len;
	char *out;

	put_str(f->dfd, "passwd", bad_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0),
			 -HS_E_FORMAT);
	snprintf(expect, sizeof expect, "%s:3: invalid entry: ", path_in(f, "passwd"));
	assert_memory_equal(db.error, expect, strlen(expect));

	/* kept: reported with their numbers, written back verbatim */
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"),
					   HS_DB_KEEP_BAD), 0);
	assert_int_equal(db.n_lines, 5);
	assert_int_equal(db.n_entries, 3);
	assert_false(db.lines[2].entry);
	assert_true(db.lines[2].err < 0);
	assert_int_equal(db.lines[2].lineno, 3);
	assert_false(db.lines[3].entry);
	assert_int_equal(db.lines[3].lineno, 4);
	assert_int_equal(hs_accountdb_find(&db, "bob"), 4);
	p = db.lines[4].rec.pw;
	p.gecos = (char *)"Bob";
	assert_int_equal(hs_accountdb_replace(&db, 4, &p), 0);
	out = serialize(&db, &len);
	assert_string_equal(out,
		"root:x:0:0::/root:/bin/sh\n"
		"alice:x:1000:1000::/home/alice:/bin/sh\n"
		"mallory:x:-1:0::/:/bin/sh\n"
		"+::::::\n"
		"bob:x:1001:1001:Bob:/home/bob:/bin/sh\n");
	free(out);
	/* a repair: pwck deletes one bad line and fixes the other */
	assert_int_equal(hs_accountdb_delete(&db, 3), 0);
	p.name = (char *)"mallory";
	p.uid = 1002;
	p.gid = 1002;
	p.gecos = (char *)"";
	p.dir = (char *)"/";
	assert_int_equal(hs_accountdb_replace(&db, 2, &p), 0);
	assert_int_equal(db.n_entries, 4);
	assert_int_equal(hs_accountdb_find(&db, "mallory"), 2);
	out = serialize(&db, &len);
	assert_string_equal(out,
		"root:x:0:0::/root:/bin/sh\n"
		"alice:x:1000:1000::/home/alice:/bin/sh\n"
		"mallory:x:1002:1002::/:/bin/sh\n"
		"bob:x:1001:1001:Bob:/home/bob:/bin/sh\n");
	free(out);
	hs_accountdb_free(&db);

	/* a NUL inside a line hides nothing from the parser */
	{
		static const char nul_text[] = "root:x:0:0::/root:/bin/sh\0evil\n";
		put_file(f->dfd, "passwd", nul_text, sizeof nul_text - 1, 0, 0, 0644);
	}
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), 0),
			 -HS_E_FIELD);
	assert_non_null(strstr(db.error, ":1: invalid entry"));

	/* a missing file */
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GSHADOW, path_in(f, "gshadow"), 0), -ENOENT);
	assert_non_null(strstr(db.error, "cannot read"));
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GSHADOW, path_in(f, "gshadow"),
					   HS_DB_MISSING_OK), 0);
	assert_false(db.present);
	assert_int_equal(db.n_lines, 0);
	{
		struct hs_gshadow gs = { (char *)"staff", (char *)"!", (char *)"", (char *)"alice" };
		assert_int_equal(hs_accountdb_append(&db, &gs), 0);
	}
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "gshadow"), &len);
	assert_string_equal(out, "staff:!::alice\n");
	free(out);
	{
		struct stat st;
		assert_int_equal(fstatat(f->dfd, "gshadow", &st, 0), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
	}
	/* a symlink is never read */
	assert_int_equal(symlinkat("/etc/passwd", f->dfd, "link"), 0);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "link"), 0),
			 -HS_E_SYMLINK);
}

static void test_append_delete(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	struct hs_group g = { (char *)"staff", (char *)"x", 50, (char *)"alice,bob" };
	size_t len;
	char *out;

	put_str(f->dfd, "group", "root:x:0:\nusers:x:100:alice\n", 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"), 0), 0);
	assert_int_equal(hs_accountdb_append(&db, &g), 2);
	assert_int_equal(hs_accountdb_find(&db, "staff"), 2);
	assert_int_equal(hs_accountdb_find_id(&db, 50), 2);
	assert_string_equal(hs_accountdb_get(&db, 2)->gr.members, "alice,bob");
	assert_int_equal(db.lines[2].lineno, 0);
	assert_int_equal(hs_accountdb_delete(&db, 1), 0);
	assert_int_equal(hs_accountdb_find(&db, "users"), -1);
	assert_int_equal(hs_accountdb_find_id(&db, 100), -1);
	assert_int_equal(db.n_entries, 2);
	/* the name is free again */
	g.name = (char *)"users";
	g.gid = 100;
	g.members = (char *)"";
	assert_int_equal(hs_accountdb_append(&db, &g), 3);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "group"), &len);
	assert_string_equal(out, "root:x:0:\nstaff:x:50:alice,bob\nusers:x:100:\n");
	free(out);
}

/* NIS compat lines are no entries, keep their bytes and place, and new
 * entries go before the first of them (strict, lenient and lazy loads). */
static void test_nis_lines(void **state)
{
	static const char text[] =
		"root:x:0:0:root:/root:/bin/bash\n"
		"-bob\n"
		"+@admins:::::::\n"
		"alice:x:1000:1000::/home/alice:/bin/sh\n"
		"+\n"
		"-:x:5:5::/:\n";
	struct tmp_dirs *f = *state;
	struct hs_passwd p = { "carol", "x", 1001, 1001, "", "/home/carol", "/bin/sh" };
	const unsigned flags[] = { 0, HS_DB_LENIENT, HS_DB_LAZY };
	struct hs_accountdb db;
	size_t len;
	char *out;

	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		put_str(f->dfd, "passwd", text, 0, 0, 0644);
		assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"),
						   flags[k]), 0);
		assert_int_equal(hs_accountdb_find(&db, "alice"), 3);
		assert_int_equal(hs_accountdb_find(&db, "+"), -1);
		assert_int_equal(hs_accountdb_find(&db, "-bob"), -1);
		assert_int_equal(hs_accountdb_find_id(&db, 5), -1);
		assert_null(hs_accountdb_get(&db, 4));
		assert_int_equal(db.lines[4].err, 0);
		assert_int_equal(hs_accountdb_append(&db, &p), 6);
		out = serialize(&db, &len);
		assert_string_equal(out,
			"root:x:0:0:root:/root:/bin/bash\n"
			"carol:x:1001:1001::/home/carol:/bin/sh\n"
			"-bob\n+@admins:::::::\nalice:x:1000:1000::/home/alice:/bin/sh\n"
			"+\n-:x:5:5::/:\n");
		free(out);
		hs_accountdb_free(&db);
	}
	/* subid files know no NIS lines: such a line is a bad entry */
	put_str(f->dfd, "subuid", "+:1:1\n", 0, 0, 0644);
	assert_true(hs_accountdb_load(&db, HS_DB_SUBID, path_in(f, "subuid"), 0) < 0);
}

static void test_no_trailing_newline(void **state)
{
	struct tmp_dirs *f = *state;
	static const char text[] = "root:x:0:\nusers:x:100:alice";
	struct hs_accountdb db;
	struct hs_group g = { (char *)"staff", (char *)"x", 50, (char *)"" };
	size_t len;
	char *out;

	put_str(f->dfd, "group", text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"), 0), 0);
	assert_int_equal(db.n_entries, 2);
	assert_string_equal(db.lines[1].rec.gr.members, "alice");
	/* unchanged: not a byte added */
	out = serialize(&db, &len);
	assert_int_equal(len, strlen(text));
	assert_string_equal(out, text);
	free(out);
	/* appended: the old last line is ended first */
	assert_int_equal(hs_accountdb_append(&db, &g), 2);
	out = serialize(&db, &len);
	assert_string_equal(out, "root:x:0:\nusers:x:100:alice\nstaff:x:50:\n");
	free(out);
	hs_accountdb_free(&db);

	/* from memory, and the empty file */
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/x/group", "", 0, 0), 0);
	assert_int_equal(db.n_lines, 0);
	out = serialize(&db, &len);
	assert_int_equal(len, 0);
	free(out);
	hs_accountdb_free(&db);
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/x/group", "a:x:1:\n\n\n", 9, 0), 0);
	assert_int_equal(db.n_lines, 3);
	assert_int_equal(hs_accountdb_delete(&db, 0), 0);
	out = serialize(&db, &len);
	assert_string_equal(out, "\n\n");
	free(out);
	hs_accountdb_free(&db);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void large_file(void **state, unsigned flags)
{
	struct tmp_dirs *f = *state;
	enum { N = 100000 };
	struct hs_buf b = { 0 };
	struct hs_accountdb db;
	struct hs_passwd p;
	char line[128];
	double t0, t1;
	size_t len;
	char *out;
	long i;

	for (int k = 0; k < N; k++) {
		int n = snprintf(line, sizeof line, "user%d:x:%d:%d:User %d:/home/user%d:/bin/sh\n",
				 k, 10000 + k, 10000 + k, k, k);
		assert_int_equal(hs_strbuf_append(&b, line, (size_t)n), 0);
	}
	put_file(f->dfd, "passwd", b.data, b.len, 0, 0, 0644);

	t0 = now_sec();
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), flags), 0);
	assert_int_equal(db.n_entries, N);
	for (int k = 0; k < N; k += 997) {
		snprintf(line, sizeof line, "user%d", k);
		assert_int_equal(hs_accountdb_find(&db, line), k);
		assert_int_equal(hs_accountdb_find_id(&db, 10000 + (unsigned long)k), k);
	}
	/* newusers-style: many appends, each checked first */
	for (int k = 0; k < 1000; k++) {
		snprintf(line, sizeof line, "new%d", k);
		assert_int_equal(hs_accountdb_find(&db, line), -1);
		p = (struct hs_passwd){ line, (char *)"x", (uid_t)(200000 + k), 100, (char *)"",
					(char *)"/nonexistent", (char *)"/usr/sbin/nologin" };
		assert_int_equal(hs_accountdb_append(&db, &p), N + k);
	}
	i = hs_accountdb_find(&db, "user50000");
	assert_int_equal(hs_accountdb_delete(&db, (size_t)i), 0);
	assert_int_equal(hs_accountdb_find(&db, "new999"), N + 999);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	t1 = now_sec();
	print_message("100,000 lines%s: load, 1,000 appends, delete, write in %.3f s\n",
		      flags & HS_DB_LAZY ? " (lazy)" : "", t1 - t0);
	/* no bound on the time: on a busy machine any bound fails now and
	 * then; bench/newusers.py and bench/useradd.py measure it */

	out = read_all(path_in(f, "passwd"), &len);
	/* the first 50,000 lines are byte-identical */
	{
		const char *cut = strstr(b.data, "user50000:");
		assert_non_null(cut);
		assert_memory_equal(out, b.data, (size_t)(cut - b.data));
		assert_null(strstr(out, "\nuser50000:"));
		assert_non_null(strstr(out, "\nnew999:x:200999:100::/nonexistent:/usr/sbin/nologin\n"));
	}
	free(out);
	hs_strbuf_free(&b);
}

static void test_large_file(void **state)
{
	large_file(state, 0);
}

static void test_large_file_lazy(void **state)
{
	large_file(state, HS_DB_LAZY);
}

/* ---- HS_DB_LAZY ---- */

/* A lazy load does not parse what nobody asks for: a line the tool does not
 * touch goes back as its bytes; a bad line it does touch is refused with the
 * full load's message. */
static void test_lazy_passes_bad_lines_through(void **state)
{
	struct tmp_dirs *f = *state;
	static const struct {
		enum hs_db_kind kind; const char *text; size_t len; const char *bad_name;
	} bad[] = {
		{ HS_DB_PASSWD, "root:x:0:0::/root:/bin/sh\nmallory:x:-1:0::/:/bin/sh\n", 0,
		  "mallory" },
		{ HS_DB_PASSWD, "root:x:0:0::/root:/bin/sh\0evil\n", 31, "root" },
		{ HS_DB_GROUP, "users:x:100:\nstaff:x:50:alice,,bob\n", 0, "staff" },
		{ HS_DB_SHADOW, "root:!:19000:0:99999:7:::\nbob:*:x::::::\n", 0, "bob" },
	};

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		size_t len = bad[k].len ? bad[k].len : strlen(bad[k].text);
		struct hs_accountdb full, lazy;
		struct hs_buf out = { 0 };
		union hs_dbrec rec;
		int rf;

		put_file(f->dfd, "file", bad[k].text, len, 0, 0, 0644);
		rf = hs_accountdb_load(&full, bad[k].kind, path_in(f, "file"), 0);
		assert_true(rf < 0);
		assert_int_equal(hs_accountdb_load(&lazy, bad[k].kind, path_in(f, "file"),
						   HS_DB_LAZY), 0);
		/* untouched: the same bytes back */
		assert_int_equal(hs_accountdb_serialize(&lazy, &out), 0);
		assert_int_equal(out.len, len + (bad[k].text[len - 1] != '\n'));
		assert_memory_equal(out.data, bad[k].text, len);
		hs_strbuf_free(&out);
		/* touched: found as nothing, with the full load's message */
		assert_int_equal(hs_accountdb_find(&lazy, bad[k].bad_name), -1);
		assert_string_equal(lazy.error, full.error);
		/* and its name is not free for a new entry */
		memset(&rec, 0, sizeof(rec));
		if (bad[k].kind == HS_DB_PASSWD) {
			rec.pw = (struct hs_passwd){ .name = (char *)bad[k].bad_name,
						     .passwd = (char *)"x", .uid = 5, .gid = 5,
						     .gecos = (char *)"", .dir = (char *)"/",
						     .shell = (char *)"/bin/sh" };
			assert_true(hs_accountdb_append(&lazy, &rec) < 0);
			assert_string_equal(lazy.error, full.error);
		}
		hs_accountdb_free(&full);
		hs_accountdb_free(&lazy);
	}
}

/* Records are built when asked for; the cheap readers build nothing. */
static void test_lazy_builds_on_access(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	unsigned long id;
	const char *t;
	size_t len;

	put_str(f->dfd, "passwd", passwd_text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), HS_DB_LAZY),
			 0);
	assert_int_equal(db.n_lines, 5);
	assert_int_equal(db.n_entries, 4);
	t = hs_accountdb_text(&db, 0, &len);
	assert_int_equal(len, strlen("root:x:0:0:root:/root:/bin/bash"));
	assert_memory_equal(t, "root:x:0:0:root:/root:/bin/bash", len);
	t = hs_accountdb_field(&db, 3, 4, &len);
	assert_int_equal(len, strlen("Alice Ü,,,"));
	assert_memory_equal(t, "Alice Ü,,,", len);
	t = hs_accountdb_field(&db, 4, 6, &len);
	assert_int_equal(len, 0);                       /* bob's empty shell */
	assert_null(hs_accountdb_field(&db, 4, 7, &len));
	assert_null(hs_accountdb_field(&db, 2, 0, &len)); /* the blank line */
	assert_true(hs_accountdb_id(&db, 3, &id));
	assert_int_equal(id, 1000);
	assert_false(hs_accountdb_id(&db, 2, &id));
	assert_false(hs_accountdb_id(&db, 9, &id));
	/* none of that built a record */
	for (size_t i = 0; i < db.n_lines; i++)
		assert_null(db.lines[i].text);
	/* find builds the line it returns (chsh and chfn read db.lines[i]) */
	assert_int_equal(hs_accountdb_find(&db, "bob"), 4);
	assert_string_equal(db.lines[4].rec.pw.dir, "/home/bob");
	assert_int_equal(db.lines[4].lineno, 5);
	assert_null(db.lines[3].text);
	assert_string_equal(hs_accountdb_get(&db, 3)->pw.gecos, "Alice Ü,,,");
	assert_int_equal(db.lines[3].lineno, 4);
	assert_null(hs_accountdb_get(&db, 2));
	/* by id: the first question scans, the second builds the table */
	assert_int_equal(hs_accountdb_find_id(&db, 1), 1);
	assert_int_equal(hs_accountdb_find_id(&db, 1001), 4);
	assert_int_equal(hs_accountdb_find_id(&db, 4242), -1);
	assert_int_equal(hs_accountdb_find_id(&db, 0), 0);
	assert_int_equal(hs_accountdb_dup_id(&db, 4), -1);
	assert_int_equal(hs_accountdb_dup_name(&db, 4), -1);
	/* names that cannot be keys */
	assert_int_equal(hs_accountdb_find(&db, "root:x"), -1);
	assert_int_equal(hs_accountdb_find(&db, ""), -1);
	assert_int_equal(hs_accountdb_find(&db, "ro"), -1);
	hs_accountdb_free(&db);
}

/* The same edits give the same file, lazy or not, and every untouched
 * line keeps its bytes. */
static void lazy_edits(void **state, unsigned flags, char **out, size_t *len)
{
	struct tmp_dirs *f = *state;
	static const char text[] =
		"root:x:0:0::/root:/bin/sh\n"
		"a:x:1:1::/:/bin/sh\n"
		"\n"
		"b:x:2:2::/:/bin/sh\n"
		"c:x:3:3::/:/bin/sh\n"
		"d:x:4:4::/:/bin/sh\n"
		"e:x:5:5::/:/bin/sh";
	struct hs_accountdb db;
	struct hs_passwd p;
	long i;

	put_str(f->dfd, "passwd", text, 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"), flags), 0);
	i = hs_accountdb_find(&db, "b");
	assert_int_equal(i, 3);
	p = hs_accountdb_get(&db, (size_t)i)->pw;
	p.shell = (char *)"/bin/zsh";
	assert_int_equal(hs_accountdb_replace(&db, (size_t)i, &p), 0);
	assert_int_equal(hs_accountdb_delete(&db, 5), 0);               /* d */
	assert_int_equal(hs_accountdb_delete(&db, 2), 0);               /* the blank line */
	assert_int_equal(hs_accountdb_find(&db, "d"), -1);
	p.name = (char *)"f";
	p.uid = 6;
	assert_int_equal(hs_accountdb_append(&db, &p), 7);
	assert_int_equal(hs_accountdb_find(&db, "f"), 7);
	assert_int_equal(hs_accountdb_find_id(&db, 6), 7);
	assert_int_equal(hs_accountdb_find_id(&db, 4), -1);
	assert_int_equal(hs_accountdb_find_id(&db, 5), 6);
	/* a renamed line is found by its new name only */
	p = hs_accountdb_get(&db, 4)->pw;
	p.name = (char *)"cc";
	assert_int_equal(hs_accountdb_replace(&db, 4, &p), 0);
	assert_int_equal(hs_accountdb_find(&db, "c"), -1);
	assert_int_equal(hs_accountdb_find(&db, "cc"), 4);
	*out = serialize(&db, len);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	/* written as serialized (in pieces), the backup is the file as it was */
	{
		size_t n;
		char *now = read_all(path_in(f, "passwd"), &n), *backup;

		assert_int_equal(n, *len);
		assert_memory_equal(now, *out, n);
		free(now);
		backup = read_all(path_in(f, "passwd-"), &n);
		assert_int_equal(n, strlen(text));
		assert_memory_equal(backup, text, n);
		free(backup);
	}
}

static void test_lazy_edits_same_file(void **state)
{
	char *full, *lazy;
	size_t flen, llen;

	lazy_edits(state, 0, &full, &flen);
	lazy_edits(state, HS_DB_LAZY, &lazy, &llen);
	assert_string_equal(full,
		"root:x:0:0::/root:/bin/sh\n"
		"a:x:1:1::/:/bin/sh\n"
		"b:x:2:2::/:/bin/zsh\n"
		"cc:x:3:3::/:/bin/sh\n"
		"e:x:5:5::/:/bin/sh\n"
		"f:x:6:2::/:/bin/zsh\n");
	assert_string_equal(lazy, full);
	free(full);
	free(lazy);
}

/* hs_accountdb_write writes the backup from the loaded data only while
 * that is what the file holds. */
static void test_write_backup_source(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	struct hs_group g = { (char *)"staff", (char *)"x", 50, (char *)"" };
	char *out;
	size_t len;

	put_str(f->dfd, "group", "root:x:0:\n", 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"), HS_DB_LAZY),
			 0);
	assert_int_equal(hs_accountdb_append(&db, &g), 1);
	assert_int_equal(hs_accountdb_write(&db), 0);
	g.name = (char *)"users";
	g.gid = 100;
	assert_int_equal(hs_accountdb_append(&db, &g), 2);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "group-"), &len);
	assert_string_equal(out, "root:x:0:\nstaff:x:50:\n");
	free(out);
	out = read_all(path_in(f, "group"), &len);
	assert_string_equal(out, "root:x:0:\nstaff:x:50:\nusers:x:100:\n");
	free(out);
	/* an edited copy (vipw): the backup is the file, not the copy */
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, path_in(f, "group"),
						"wheel:x:10:\n", 12, HS_DB_LAZY), 0);
	assert_int_equal(hs_accountdb_write(&db), 0);
	hs_accountdb_free(&db);
	out = read_all(path_in(f, "group-"), &len);
	assert_string_equal(out, "root:x:0:\nstaff:x:50:\nusers:x:100:\n");
	free(out);
	out = read_all(path_in(f, "group"), &len);
	assert_string_equal(out, "wheel:x:10:\n");
	free(out);
}

/* The byte searches behind find_text, find and find_id (16 positions at a
 * time, two bytes compared) against a plain line-by-line search, on
 * random files of similar lines, with lines edited and deleted so that
 * both the bytes as loaded and the built lines are searched. */
static const char *naive_text(const struct hs_accountdb *db, size_t i, size_t *len)
{
	const union hs_dbrec *r = hs_accountdb_get(db, i);

	return r ? hs_accountdb_text(db, i, len) : NULL;
}

static bool naive_holds(const char *t, size_t len, const char *s, size_t slen)
{
	for (size_t k = 0; k + slen <= len; k++)
		if (memcmp(t + k, s, slen) == 0)
			return true;
	return false;
}

/* The block-at-a-time line split against a byte loop: every length up to
 * 200 (so every alignment of the 16- and 64-byte blocks and of the tail),
 * with and without a last newline, blank lines, NIS lines and NUL bytes. */
static void test_split_matches_naive(void **state)
{
	/* and bytes with the top bit set, one of them 0x0a | 0x80: the word
	 * scan must not take it (or a neighbour) for a newline */
	static const char alphabet[] = "ab:\n\n+-\0" "\x8a" "\xff" "\x0b" "\xc3";
	unsigned seed = 777;
	char data[210];

	(void)state;
	for (size_t len = 0; len <= 200; len++) {
		for (unsigned round = 0; round < 20; round++) {
			/* every other round a subid file, where '+' and '-' start
			 * no NIS line */
			enum hs_db_kind kind = round % 2 ? HS_DB_SUBID : HS_DB_GROUP;
			struct hs_accountdb db;
			size_t start = 0, n = 0, entries = 0, nis_first = SIZE_MAX;

			for (size_t k = 0; k < len; k++) {
				seed = seed * 1103515245u + 12345u;
				data[k] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
			}
			assert_int_equal(hs_accountdb_load_data(&db, kind, "/nonexistent/file",
								data, len,
								HS_DB_LAZY | HS_DB_KEEP_DUPS), 0);
			for (size_t k = 0; k <= len; k++) {
				size_t got_len;
				const char *got;

				if (k < len && data[k] != '\n')
					continue;
				if (k == len && start == len)
					break;          /* ends with a newline: no last line */
				assert_true(n < db.n_lines);
				got = hs_accountdb_text(&db, n, &got_len);
				assert_non_null(got);
				assert_int_equal(got_len, k - start);
				assert_memory_equal(got, data + start, got_len);
				if (got_len > 0 && kind != HS_DB_SUBID &&
				    (got[0] == '+' || got[0] == '-'))
					nis_first = nis_first == SIZE_MAX ? n : nis_first;
				else if (got_len > 0)
					entries++;
				n++;
				start = k + 1;
			}
			assert_int_equal(db.n_lines, n);
			assert_int_equal(db.n_entries, entries);
			assert_int_equal(db.nis_first, nis_first == SIZE_MAX ? n : nis_first);
			hs_accountdb_free(&db);
		}
	}
	/* enough lines for the starts to get a mapping of their own */
	struct hs_buf big = { 0 };
	struct hs_accountdb db;
	char line[32];

	for (unsigned i = 0; i < 6000; i++) {
		snprintf(line, sizeof(line), "g%u:x:%u:\n", i, 1000 + i);
		assert_int_equal(hs_strbuf_append(&big, line, strlen(line)), 0);
	}
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", big.data,
						big.len, HS_DB_LAZY), 0);
	assert_int_equal(db.n_lines, 6000);
	for (unsigned i = 0; i < 6000; i += 7) {
		size_t len;
		const char *t = hs_accountdb_text(&db, i, &len);

		snprintf(line, sizeof(line), "g%u:x:%u:", i, 1000 + i);
		assert_int_equal(len, strlen(line));
		assert_memory_equal(t, line, len);
	}
	hs_accountdb_free(&db);
	hs_strbuf_free(&big);
	/* nothing but newlines; then a first KiB of long lines and a great
	 * many short ones after it, so that the starts outgrow the room the
	 * first KiB suggests: in the heap, and in a mapping of their own */
	for (size_t len = 4070; len <= 4100; len += 5) {
		char *nl = malloc(len);

		assert_non_null(nl);
		memset(nl, '\n', len);
		assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", nl,
							len, HS_DB_LAZY), 0);
		assert_int_equal(db.n_lines, len);
		assert_int_equal(db.n_entries, 0);
		hs_accountdb_free(&db);
		free(nl);
	}
	for (size_t shorts = 3000; shorts <= 300000; shorts *= 100) {
		struct hs_buf mixed = { 0 };

		for (unsigned i = 0; i < 11; i++) {
			snprintf(line, sizeof(line), "long%02u:x:%u:", i, i);
			assert_int_equal(hs_strbuf_append(&mixed, line, strlen(line)), 0);
			for (unsigned k = 0; k < 90; k++)
				assert_int_equal(hs_strbuf_append(&mixed, "m", 1), 0);
			assert_int_equal(hs_strbuf_append(&mixed, "\n", 1), 0);
		}
		for (size_t i = 0; i < shorts; i++)
			assert_int_equal(hs_strbuf_append(&mixed, i % 2 ? "a\n" : "\n", 1 + i % 2), 0);
		assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group",
							mixed.data, mixed.len, HS_DB_LAZY | HS_DB_KEEP_BAD), 0);
		assert_int_equal(db.n_lines, 11 + shorts);
		assert_int_equal(db.n_entries, 11 + shorts / 2);
		for (size_t i = 11; i < 11 + shorts; i += 997) {
			size_t tlen;
			const char *t = hs_accountdb_text(&db, i, &tlen);

			assert_int_equal(tlen, (i - 11) % 2);
			if (tlen)
				assert_int_equal(t[0], 'a');
		}
		hs_accountdb_free(&db);
		hs_strbuf_free(&mixed);
	}
	/* a first KiB of blank lines, then 4 MiB of long ones: the room made
	 * at first is not four times the file (as a line a byte would have
	 * it), and the lines are all there */
	{
		const size_t n = 4u << 20;
		char *odd = malloc(n);

		assert_non_null(odd);
		memset(odd, '\n', 1024);
		memset(odd + 1024, 'x', n - 1024);
		for (size_t i = 1024 + 999; i < n; i += 1000)
			odd[i] = '\n';
		assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", odd,
							n, HS_DB_LAZY | HS_DB_KEEP_BAD), 0);
		assert_int_equal(db.n_lines, 1024 + (n - 1024) / 1000 + 1);
		assert_true(db.starts_size < n);
		hs_accountdb_free(&db);
		free(odd);
	}
}

/* A file big enough for the starts' own mapping, loaded from disk (the
 * data a mapping too), whose last line has no newline and whose lines hold
 * UTF-8 and 0x8a bytes: the last line is found by name and by a text scan
 * to the end of the data, and after an edit in the middle, a delete and an
 * append every untouched byte is written back as it was. */
static void test_big_file_without_last_newline(void **state)
{
	struct tmp_dirs *f = *state;
	enum { N = 5000 };
	struct hs_buf in = { 0 }, want = { 0 };
	struct hs_accountdb db;
	struct hs_passwd p;
	char line[128];
	size_t len;
	char *out;

	for (int k = 0; k < N; k++) {
		int n = snprintf(line, sizeof line, "u%d:x:%d:100:J\xc3\xa9r\xc3\xb4me \x8a%d:/home/u%d:/bin/sh%s",
				 k, 10000 + k, k, k, k + 1 < N ? "\n" : "");
		assert_int_equal(hs_strbuf_append(&in, line, (size_t)n), 0);
		if (k == 10)
			continue;       /* deleted below */
		if (k == 2500)
			n = snprintf(line, sizeof line, "u2500:x:77777:100:J\xc3\xa9r\xc3\xb4me \x8a%d:/home/u%d:/bin/sh\n",
				     k, k);
		else if (k + 1 == N)
			n = snprintf(line, sizeof line, "u%d:x:%d:100:J\xc3\xa9r\xc3\xb4me \x8a%d:/home/u%d:/bin/sh\n",
				     k, 10000 + k, k, k);
		assert_int_equal(hs_strbuf_append(&want, line, (size_t)n), 0);
	}
	assert_int_equal(hs_strbuf_append(&want, "new:x:99999:100::/nonexistent:/bin/false\n", 41), 0);
	put_file(f->dfd, "passwd", in.data, in.len, 0, 0, 0644);

	assert_int_equal(hs_accountdb_load(&db, HS_DB_PASSWD, path_in(f, "passwd"),
					   HS_DB_LAZY), 0);
	assert_true(db.starts_size > 0);        /* the mapped starts */
	assert_int_equal(db.n_lines, N);
	snprintf(line, sizeof line, "u%d", N - 1);
	assert_int_equal(hs_accountdb_find(&db, line), N - 1);
	assert_int_equal(hs_accountdb_find_id(&db, 10000 + N - 1), N - 1);
	assert_int_equal(hs_accountdb_find_text(&db, N - 2, "/bin/sh", 7), N - 2);
	assert_int_equal(hs_accountdb_find_text(&db, N - 1, "/bin/sh", 7), N - 1);
	{
		const char *t = hs_accountdb_text(&db, N - 1, &len);

		snprintf(line, sizeof line, "u%d:x:%d:100:J\xc3\xa9r\xc3\xb4me \x8a%d:/home/u%d:/bin/sh",
			 N - 1, 10000 + N - 1, N - 1, N - 1);
		assert_int_equal(len, strlen(line));
		assert_memory_equal(t, line, len);
	}
	/* unchanged: the bytes as they are, no newline added */
	out = serialize(&db, &len);
	assert_int_equal(len, in.len);
	assert_memory_equal(out, in.data, len);
	free(out);

	p = hs_accountdb_get(&db, 2500)->pw;
	p.uid = 77777;
	assert_int_equal(hs_accountdb_replace(&db, 2500, &p), 0);
	assert_int_equal(hs_accountdb_delete(&db, 10), 0);
	p = (struct hs_passwd){ (char *)"new", (char *)"x", 99999, 100, (char *)"",
				(char *)"/nonexistent", (char *)"/bin/false" };
	assert_int_equal(hs_accountdb_append(&db, &p), N);
	assert_int_equal(hs_accountdb_find_text(&db, N - 1, "/bin/false", 10), N);
	out = serialize(&db, &len);
	assert_int_equal(len, want.len);
	assert_memory_equal(out, want.data, len);
	free(out);
	hs_accountdb_free(&db);
	hs_strbuf_free(&in);
	hs_strbuf_free(&want);
}

/* The id rules the slow way: the third field of a line neither blank nor
 * NIS, 1 to 10 decimal digits, at most UINT32_MAX. */
static bool naive_id(const char *t, size_t len, unsigned long *id)
{
	unsigned long long v = 0;
	size_t k = 0, start;

	if (len == 0 || t[0] == '+' || t[0] == '-')
		return false;
	for (unsigned colons = 0; colons < 2; k++) {
		if (k == len)
			return false;
		colons += t[k] == ':';
	}
	for (start = k; k < len && t[k] != ':'; k++)
		if (t[k] < '0' || t[k] > '9' || k - start == 10)
			return false;
		else
			v = v * 10 + (unsigned)(t[k] - '0');
	if (k == start || v > UINT32_MAX)
		return false;
	*id = (unsigned long)v;
	return true;
}

/* The ids of every line, by hs_accountdb_ids n at a time into *out; checks
 * that each line's hs_accountdb_id and the naive rules agree with it. */
static size_t ids_checked(const struct hs_accountdb *db, size_t n, unsigned long *out)
{
	size_t from = 0, got = 0, k, want = 0;

	while ((k = hs_accountdb_ids(db, &from, out + got, n)) > 0) {
		assert_true(k <= n);
		got += k;
	}
	assert_int_equal(from, db->n_lines);
	for (size_t i = 0; i < db->n_lines; i++) {
		const union hs_dbrec *r;
		unsigned long id = 0, naive = 0;
		bool has = hs_accountdb_id(db, i, &id), built = db->built[i >> 3] & (1u << (i & 7));
		size_t len;
		const char *t = hs_accountdb_text(db, i, &len);

		if (built) {
			r = db->lines[i].entry && !db->lines[i].deleted ? &db->lines[i].rec : NULL;
			assert_int_equal(has, r != NULL);
			naive = r ? r->gr.gid : 0;
		} else {
			assert_int_equal(has, naive_id(t, len, &naive));
		}
		if (!has)
			continue;
		assert_true(want < got);
		assert_int_equal(id, naive);
		assert_int_equal(out[want++], id);
	}
	assert_int_equal(want, got);
	return got;
}

/* hs_accountdb_ids on hostile lines, built, replaced, deleted and
 * appended ones, n ids at a time for every n. */
static void test_ids_pass(void **state)
{
	struct tmp_dirs *f = *state;
	size_t from = 0;
	char *guard;
	static const char text[] =
		"root:x:0:\n+\n-nis:x:5:\n+@netgroup:x:6:\n\neleven:x:12345678901:\n"
		"big:x:4294967296:\nmax:x:4294967295:\nzeros:x:0000000042:\nnine:x:123456789:\n"
		"eight:x:12345678:m1,m2\nplus:x:+5:\nminus:x:-5:\nspace:x: 7:\nspace2:x:7 :\n"
		"nofield:x\nnothird:x:\ntwo\nempty:x::\nhex:x:0x10:\nnul:x:1\0002:\n"
		"averyveryverylongnamethatislongerthanthirtytwo:x:77:\n"
		"a:x:1234567890123456789012345678901:\nend:x:3\nlast:x:99";
	static const unsigned long want[] = { 0, 4294967295, 42, 123456789, 12345678, 77, 3, 99 };
	static const unsigned long edited[] = { 0, 42, 500, 12345678, 77, 3, 99, 600 };
	struct hs_accountdb db;
	struct hs_group g;
	unsigned long ids[40];

	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_GROUP, "/nonexistent/group", text,
						sizeof(text) - 1, HS_DB_LAZY), 0);
	for (size_t n = 1; n <= 10; n++) {
		assert_int_equal(ids_checked(&db, n, ids), sizeof(want) / sizeof(want[0]));
		assert_memory_equal(ids, want, sizeof(want));
	}
	assert_null(hs_accountdb_get(&db, 5));          /* built: no entry */
	assert_non_null(hs_accountdb_get(&db, 0));
	assert_int_equal(hs_accountdb_delete(&db, 7), 0);
	g = hs_accountdb_get(&db, 9)->gr;
	g.gid = 500;
	assert_int_equal(hs_accountdb_replace(&db, 9, &g), 0);
	g = (struct hs_group){ .name = "app", .passwd = "x", .gid = 600, .members = "" };
	assert_true(hs_accountdb_append(&db, &g) > 0);
	for (size_t n = 1; n <= 10; n++) {
		assert_int_equal(ids_checked(&db, n, ids), sizeof(edited) / sizeof(edited[0]));
		assert_memory_equal(ids, edited, sizeof(edited));
	}
	hs_accountdb_free(&db);
	/* a last line that ends a page of the mapping: nothing read past it */
	for (unsigned k = 0; k < 2; k++) {
		const char *last = k ? "abcdefghijklmnopqrstuvwxyzab:x:5" : "abcdefghijklmnop:x:7";
		char page[4097];
		int pad = 4096 - (int)strlen(last) - (int)strlen("p:x:1:\n");

		snprintf(page, sizeof(page), "p:x:1:%0*d\n%s", pad, 0, last);
		put_str(f->dfd, "group", page, 0, 0, 0644);
		/* the mapping goes where the hole is (Linux maps top down): an
		 * inaccessible page after it */
		guard = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(guard != MAP_FAILED);
		munmap(guard, 4096);
		assert_int_equal(hs_accountdb_load(&db, HS_DB_GROUP, path_in(f, "group"), HS_DB_LAZY),
				 0);
		assert_int_equal(db.len, 4096);
		assert_int_equal(ids_checked(&db, 4, ids), 2);
		assert_int_equal(ids[1], k ? 5 : 7);
		hs_accountdb_free(&db);
		munmap(guard + 4096, 4096);
	}
	/* no ids in the other files */
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_SHADOW, "/nonexistent/shadow", text,
						sizeof(text) - 1, HS_DB_LAZY), 0);
	assert_int_equal(hs_accountdb_ids(&db, &from, ids, 10), 0);
	hs_accountdb_free(&db);
}

/* Differential: random files of id-like lines (every alignment of the
 * 32-byte window, fields past it, the end of the data close by), some
 * lines built, replaced, deleted or appended, against the naive rules. */
static void test_ids_match_naive(void **state)
{
	static const char *const bits[] = {
		":", ":", ":", "x", "bu0001", "averylongname", "1", "7", "42", "1000", "99999999",
		"123456789", "4294967295", "4294967296", "12345678901", "0000000000", "+", "-",
		" ", "\n", "\n", "\n", ",", "\0", "\xb0",
	};
	unsigned seed = 4242;
	unsigned long *ids = NULL;

	(void)state;
	for (unsigned round = 0; round < 3000; round++) {
		struct hs_buf text = { 0 };
		struct hs_accountdb db;
		size_t pieces;

		seed = seed * 1103515245u + 12345u;
		pieces = (seed >> 16) % (round < 1000 ? 12 : 300);
		for (size_t k = 0; k < pieces; k++) {
			const char *b;

			seed = seed * 1103515245u + 12345u;
			b = bits[(seed >> 16) % (sizeof(bits) / sizeof(bits[0]))];
			assert_int_equal(hs_strbuf_append(&text, b, b[0] ? strlen(b) : 1), 0);
		}
		assert_int_equal(hs_accountdb_load_data(&db, round % 2 ? HS_DB_GROUP : HS_DB_PASSWD,
							"/nonexistent/f", text.data ? text.data : "",
							text.len, HS_DB_LAZY | HS_DB_KEEP_DUPS), 0);
		ids = realloc(ids, (db.n_lines + 8) * sizeof(*ids));
		assert_non_null(ids);
		ids_checked(&db, 1 + round % 300, ids);
		for (size_t i = round % 5; i < db.n_lines; i += 3 + round % 7) {
			const union hs_dbrec *r = hs_accountdb_get(&db, i);
			union hs_dbrec nr;

			if (!r || i % 3 == 0)
				continue;
			if (i % 3 == 2) {
				assert_int_equal(hs_accountdb_delete(&db, i), 0);
				continue;
			}
			nr = *r;
			if (db.kind == HS_DB_GROUP)
				nr.gr.gid = (gid_t)(i + 7);
			else
				nr.pw.uid = (uid_t)(i + 7);
			if (hs_accountdb_replace(&db, i, &nr) == 0 && i % 2 == 0)
				(void)hs_accountdb_append(&db, &nr);    /* a duplicate name fails */
		}
		ids = realloc(ids, (db.n_lines + 8) * sizeof(*ids));
		assert_non_null(ids);
		ids_checked(&db, 1 + round % 257, ids);
		hs_accountdb_free(&db);
		hs_strbuf_free(&text);
	}
	free(ids);
}

static void test_scans_match_naive(void **state)
{
	struct hs_accountdb db;
	struct hs_buf text = { 0 };
	char line[128], pat[32];
	unsigned seed = 12345;

	(void)state;
	for (unsigned i = 0; i < 700; i++) {
		seed = seed * 1103515245u + 12345u;
		snprintf(line, sizeof(line), "u%u%s:x:%u:%u:%s:/home/u%u:/bin/sh\n", i % 97,
			 i % 7 ? "" : "x", 1000 + (seed >> 8) % 300,
			 (seed >> 4) % 50 + (i % 5 ? 0 : 1000), i % 11 ? "" : "u1 1000", i);
		if (i % 13 == 0)
			snprintf(line, sizeof(line), "%s", i % 26 ? "\n" : "+@nis\n");
		assert_int_equal(hs_strbuf_append(&text, line, strlen(line)), 0);
	}
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD, "/nonexistent/passwd",
						text.data, text.len, HS_DB_LAZY | HS_DB_KEEP_DUPS), 0);
	/* some lines built as they are, some replaced, some deleted */
	for (size_t i = 3; i < db.n_lines; i += 17) {
		const union hs_dbrec *r = hs_accountdb_get(&db, i);
		struct hs_passwd p;
		char name[32];

		if (!r)
			continue;
		p = r->pw;
		if (i % 3 == 0) {
			snprintf(name, sizeof(name), "r%zu", i);
			p.uid = 1299;
			p.name = name;
			assert_int_equal(hs_accountdb_replace(&db, i, &p), 0);
		} else if (i % 3 == 1) {
			assert_int_equal(hs_accountdb_delete(&db, i), 0);
		}
	}
	for (unsigned k = 0; k < 400; k++) {
		size_t plen;
		long want = -1, got;

		seed = seed * 1103515245u + 12345u;
		switch (k % 4) {
		case 0: snprintf(pat, sizeof(pat), ":%u", 1000 + (seed >> 8) % 320); break;
		case 1: snprintf(pat, sizeof(pat), "u%u", (seed >> 8) % 120); break;
		case 2: snprintf(pat, sizeof(pat), ":%u:", (seed >> 8) % 60); break;
		default: snprintf(pat, sizeof(pat), "/home/u%u:", (seed >> 8) % 800); break;
		}
		plen = strlen(pat);
		for (size_t from = 0; from < db.n_lines; from = (size_t)want + 1) {
			want = -1;
			for (size_t i = from; i < db.n_lines && want < 0; i++) {
				size_t len;
				const char *t = naive_text(&db, i, &len);

				if (t && naive_holds(t, len, pat, plen))
					want = (long)i;
			}
			/* find_text may also stop at a line that is no entry */
			got = hs_accountdb_find_text(&db, from, pat, plen);
			while (got >= 0 && !hs_accountdb_get(&db, (size_t)got))
				got = hs_accountdb_find_text(&db, (size_t)got + 1, pat, plen);
			assert_int_equal(got, want);
			if (want < 0)
				break;
		}
		/* a name and an id by search, as the first lookups do */
		if (k % 4 == 1 || k % 4 == 0) {
			unsigned long id = strtoul(pat + 1, NULL, 10);

			want = -1;
			for (size_t i = 0; i < db.n_lines && want < 0; i++) {
				const union hs_dbrec *r = hs_accountdb_get(&db, i);

				if (r && (k % 4 == 1 ? strcmp(r->pw.name, pat) == 0 : r->pw.uid == id))
					want = (long)i;
			}
			got = k % 4 == 1 ? hs_accountdb_find(&db, pat) : hs_accountdb_find_id(&db, id);
			assert_int_equal(got, want);
		}
	}
	hs_accountdb_free(&db);
	free(text.data);
}

/* A model of a lazy db's lines for test_edits_match_naive: the text of
 * each line, whether it is an entry, a line that does not parse (its
 * name is taken all the same) or neither, and whether it is deleted. */
enum { M_NONE, M_ENTRY, M_BAD };
struct model_line {
	char text[64];
	int kind;
	bool deleted;
};
struct model {
	struct model_line l[4096];
	size_t n, loaded, nis_first;
	unsigned seed;
};

static unsigned model_rand(struct model *m)
{
	m->seed = m->seed * 1103515245u + 12345u;
	return m->seed >> 8;
}

/* The first line that holds name as its key (an entry or a bad line), or -1. */
static long model_first(const struct model *m, const char *name)
{
	size_t nlen = strlen(name);

	for (size_t i = 0; i < m->n; i++) {
		const struct model_line *l = &m->l[i];

		if (!l->deleted && l->kind != M_NONE && strncmp(l->text, name, nlen) == 0 &&
		    l->text[nlen] == ':')
			return (long)i;
	}
	return -1;
}

/* Names that repeat: entries, bad lines, NIS lines, names never there. */
static void model_name(struct model *m, char *out, size_t size)
{
	unsigned r = model_rand(m) % 10;

	if (r < 4)
		snprintf(out, size, "n%u", model_rand(m) % 40);
	else if (r < 6)
		snprintf(out, size, "b%u", model_rand(m) % 5);
	else if (r < 7)
		snprintf(out, size, "+nis%u", model_rand(m) % 3);
	else
		snprintf(out, size, "u%u", model_rand(m) % 200);
}

static void model_load(struct model *m, struct hs_buf *text)
{
	/* now and then long enough for runs of 64 unbuilt lines */
	size_t lines = 1 + model_rand(m) % (m->seed % 4 ? 400 : 3000);

	m->n = 0;
	m->nis_first = SIZE_MAX;
	for (size_t i = 0; i < lines; i++) {
		struct model_line *l = &m->l[m->n++];
		unsigned r = model_rand(m) % 20;

		memset(l, 0, sizeof(*l));
		if (r == 0) {
			l->kind = M_NONE;       /* blank */
		} else if (r == 1) {
			snprintf(l->text, sizeof(l->text), "+nis%u:x:::::", model_rand(m) % 3);
			l->kind = M_NONE;
			if (m->nis_first == SIZE_MAX)
				m->nis_first = i;
		} else if (r == 2) {
			snprintf(l->text, sizeof(l->text), "b%u:x:zz:1::/:/bin/sh", model_rand(m) % 5);
			l->kind = M_BAD;
		} else {
			snprintf(l->text, sizeof(l->text), "u%u:x:%u:100::/home/u:/bin/sh",
				 model_rand(m) % 200, model_rand(m) % 5000);
			l->kind = M_ENTRY;
		}
		assert_int_equal(hs_strbuf_append(text, l->text, strlen(l->text)), 0);
		assert_int_equal(hs_strbuf_append(text, "\n", 1), 0);
	}
	/* now and then no newline at the end */
	if (model_rand(m) % 3 == 0 && m->l[m->n - 1].text[0])
		text->len--;
	m->loaded = m->n;
	if (m->nis_first == SIZE_MAX)
		m->nis_first = m->n;
}

/* One random edit or lookup on db and the model, checked against it. */
static void model_step(struct model *m, struct hs_accountdb *db, unsigned op)
{
	char name[32], text[64];
	struct hs_passwd p = { name, "x", 4000 + op, 100, "", "/home/a", "/bin/sh" };
	unsigned r = model_rand(m) % 10;
	size_t i = model_rand(m) % m->n;
	long first, got;

	model_name(m, name, sizeof(name));
	snprintf(text, sizeof(text), "%s:x:%u:100::/home/a:/bin/sh", name, 4000 + op);
	first = model_first(m, name);
	if (r < 4) {
		got = hs_accountdb_find(db, name);
		assert_int_equal(got, first >= 0 && m->l[first].kind == M_ENTRY ? first : -1);
	} else if (r < 6) {
		got = hs_accountdb_append(db, &p);
		if (name[0] == '+' || first >= 0) {
			/* taken: -EEXIST, or the error of the bad line that has it */
			assert_true(got < 0);
			assert_true(name[0] == '+' || (got == -EEXIST) == (m->l[first].kind == M_ENTRY));
			return;
		}
		assert_int_equal(got, (long)m->n);
		m->l[m->n++] = (struct model_line){ .kind = M_ENTRY };
		snprintf(m->l[m->n - 1].text, sizeof(m->l[0].text), "%s", text);
	} else if (r < 8) {
		/* an entry that keeps its name is not checked: it may be a
		 * duplicate (HS_DB_LAZY reads no line it is not asked for) */
		size_t nlen = strlen(name);
		bool same = m->l[i].kind == M_ENTRY && strncmp(m->l[i].text, name, nlen) == 0 &&
			    m->l[i].text[nlen] == ':';

		if (m->l[i].deleted || name[0] == '+')
			return;
		got = hs_accountdb_replace(db, i, &p);
		if (!same && first >= 0 && first != (long)i) {
			assert_true(got < 0);
			return;
		}
		assert_int_equal(got, 0);
		snprintf(m->l[i].text, sizeof(m->l[0].text), "%s", text);
		m->l[i].kind = M_ENTRY;
	} else if (r < 9) {
		if (m->l[i].deleted)
			return;
		assert_int_equal(hs_accountdb_delete(db, i), 0);
		m->l[i].deleted = true;
	} else {
		got = hs_accountdb_dup_name(db, i);
		if (got >= 0)
			assert_true(m->l[got].kind == M_ENTRY && !m->l[got].deleted);
	}
}

/* The lines the model writes: before the first NIS line, the appended
 * ones, then the rest. */
static void model_text(const struct model *m, struct hs_buf *out)
{
	const size_t from[3] = { 0, m->loaded, m->nis_first };
	const size_t to[3] = { m->nis_first, m->n, m->loaded };

	for (size_t k = 0; k < 3; k++)
		for (size_t i = from[k]; i < to[k]; i++)
			if (!m->l[i].deleted) {
				assert_int_equal(hs_strbuf_append(out, m->l[i].text,
								  strlen(m->l[i].text)), 0);
				assert_int_equal(hs_strbuf_append(out, "\n", 1), 0);
			}
}

/* Lookups by name (the first ones scan, and a name found nowhere is
 * remembered until an edit; later ones use the table), appends, renames
 * and deletes in random order, each checked against a plain model, and
 * the file written at the end. */
static void test_edits_match_naive(void **state)
{
	static struct model m;
	const unsigned flags[] = { HS_DB_LAZY, HS_DB_LENIENT };

	(void)state;
	for (unsigned round = 1; round <= 400; round++) {
		for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
			struct hs_buf text = { 0 }, want = { 0 }, got = { 0 };
			struct hs_accountdb db;

			m.seed = round;
			model_load(&m, &text);
			assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD,
								"/nonexistent/passwd", text.data,
								text.len, flags[k]), 0);
			assert_int_equal(db.n_lines, m.n);
			assert_int_equal(db.nis_first, m.nis_first);
			for (unsigned op = 0; op < 300; op++)
				model_step(&m, &db, op);
			if (db.dirty)
				model_text(&m, &want);
			else
				assert_int_equal(hs_strbuf_append(&want, text.data, text.len), 0);
			assert_int_equal(hs_accountdb_serialize(&db, &got), 0);
			assert_int_equal(got.len, want.len);
			assert_memory_equal(got.data, want.data, want.len);
			hs_strbuf_free(&text);
			hs_strbuf_free(&want);
			hs_strbuf_free(&got);
			hs_accountdb_free(&db);
		}
	}
}

static void test_lazy_subid_owners(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb db;
	struct hs_subid s;

	put_str(f->dfd, "subuid", "alice:100000:65536\nbob:165536:65536\nalice:300000:10\n"
		"1000:400000:5\n", 0, 0, 0644);
	assert_int_equal(hs_accountdb_load(&db, HS_DB_SUBID, path_in(f, "subuid"), HS_DB_LAZY),
			 0);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 0), 0);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 1), 2);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 3), -1);
	assert_int_equal(hs_accountdb_find_next(&db, "1000", 0), 3);
	assert_int_equal(hs_accountdb_find_next(&db, "al", 0), -1);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 99), -1);
	s = hs_accountdb_get(&db, 2)->sub;
	s.owner = (char *)"bob";
	assert_int_equal(hs_accountdb_replace(&db, 2, &s), 0);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 1), -1);
	assert_int_equal(hs_accountdb_find_next(&db, "bob", 2), 2);
	assert_int_equal(hs_accountdb_delete(&db, 0), 0);
	assert_int_equal(hs_accountdb_find_next(&db, "alice", 0), -1);
	assert_int_equal(hs_accountdb_find(&db, "bob"), 1);
	hs_accountdb_free(&db);
}

static void test_bad_arguments(void **state)
{
	struct hs_accountdb db = HS_ACCOUNTDB_INIT;
	struct hs_passwd p = { 0 };

	(void)state;
	hs_accountdb_free(&db);  /* zeroed: fine */
	hs_accountdb_free(NULL);
	assert_int_equal(hs_accountdb_find(&db, "x"), -1);
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD, "/x/passwd",
						"a:x:1:1::/:/bin/sh\n", 19, 0), 0);
	assert_int_equal(hs_accountdb_replace(&db, 5, &p), -EINVAL);
	assert_int_equal(hs_accountdb_delete(&db, 1), -EINVAL);
	assert_null(hs_accountdb_get(&db, 1));
	/* an invalid name is refused by the formatter */
	p = db.lines[0].rec.pw;
	p.name = (char *)"-rf";
	assert_true(hs_accountdb_append(&db, &p) < 0);
	p.name = (char *)"a";
	p.uid = (uid_t)-1;
	assert_int_equal(hs_accountdb_replace(&db, 0, &p), -HS_E_RANGE);
	assert_false(db.dirty);
	hs_accountdb_free(&db);
	/* 32-bit line starts: the one past a last line without a newline is
	 * len + 1, so len must stay below UINT32_MAX (refused before any byte
	 * of data is read: the buffer here is small) */
	assert_int_equal(hs_accountdb_load_data(&db, HS_DB_PASSWD, "/x/passwd", "a", UINT32_MAX,
						0), -HS_E_TOOBIG);
	hs_accountdb_free(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_identical, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_modify_keeps_others, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_rename_and_conflicts, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_duplicates_real, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_append_delete, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_nis_lines, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_no_trailing_newline, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_large_file, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_large_file_lazy, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_lazy_passes_bad_lines_through, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_lazy_builds_on_access, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_lazy_edits_same_file, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_write_backup_source, tmp_dirs_setup,
						tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_lazy_subid_owners, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_split_matches_naive),
		cmocka_unit_test(test_scans_match_naive),
		cmocka_unit_test(test_load_out_of_memory_half_way),
		cmocka_unit_test(test_full_load_out_of_memory_says_so),
		cmocka_unit_test_setup_teardown(test_lookup_out_of_memory_writes_nothing,
						tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_rewritten_while_split, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test(test_deleted_bad_line_frees_name),
		cmocka_unit_test(test_edits_match_naive),
		cmocka_unit_test_setup_teardown(test_absent_name_forgotten_on_edit, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_ids_pass, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test(test_ids_match_naive),
		cmocka_unit_test_setup_teardown(test_big_file_without_last_newline, tmp_dirs_setup,
						tmp_dirs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
