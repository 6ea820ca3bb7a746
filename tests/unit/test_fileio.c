/* Unit tests for lib/io/fileio.c: every trust check against planted hostile
 * files (symlinks, hard links, FIFOs, sockets, devices, directories, huge
 * and sparse files, wrong owners), atomic replace including write
 * failures (EFBIG, ENOSPC), and tree removal that must never follow
 * anything.  Runs as root in mkdtemp directories under /tmp. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "tempname.h"
#include "walk.h"
#include "util.h"
#include "test_helpers.h"

#define UID_A 12345
#define UID_B 12346
#define GID_A 12346
#define GID_B 12347

static const struct hs_file_expect expect_a = { .uid = UID_A, .gid = GID_A, .max_size = 4096 };

static int read_a(int dfd, const char *name)
{
	char buf[4097];
	size_t len = 0;

	return hs_fileio_read_trusted_at(dfd, name, &expect_a, buf, sizeof buf, &len, NULL);
}

static int alloc_a(int dfd, const char *name)
{
	char *data = NULL;
	size_t len = 0;
	int r = hs_fileio_read_alloc_at(dfd, name, &expect_a, &data, &len, NULL);

	if (r == 0)
		free(data);
	else
		assert_null(data);
	return r;
}

/* Both readers refuse dfd/name as not a regular file, without blocking. */
static void assert_not_regular(int dfd, const char *name)
{
	GUARD_START();
	assert_int_equal(read_a(dfd, name), -HS_E_NOTREG);
	assert_int_equal(alloc_a(dfd, name), -HS_E_NOTREG);
	GUARD_END();
}

/* ---- names and stat checks ---- */

static void test_single_component(void **state)
{
	(void)state;
	assert_true(hs_fileio_is_single_component("shadow"));
	assert_true(hs_fileio_is_single_component(".shadow.X"));
	assert_true(hs_fileio_is_single_component("..."));
	assert_false(hs_fileio_is_single_component(NULL));
	assert_false(hs_fileio_is_single_component(""));
	assert_false(hs_fileio_is_single_component("."));
	assert_false(hs_fileio_is_single_component(".."));
	assert_false(hs_fileio_is_single_component("a/b"));
	assert_false(hs_fileio_is_single_component("/etc"));
	assert_false(hs_fileio_is_single_component("x/"));
}

static void test_check_file_stat(void **state)
{
	struct stat st;
	struct hs_file_expect ex = { .uid = UID_A, .gid = GID_A, .max_size = 100 };
	struct hs_file_expect any = { .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 0 };

	(void)state;
	memset(&st, 0, sizeof st);
	st.st_mode = S_IFREG | 0640;
	st.st_nlink = 1;
	st.st_uid = UID_A;
	st.st_gid = GID_A;
	st.st_size = 100;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), 0);
	st.st_size = 101;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), -HS_E_TOOBIG);
	assert_int_equal(hs_fileio_check_stat(&st, &any), 0);
	st.st_size = 1;
	st.st_uid = UID_B;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), -HS_E_OWNER);
	assert_int_equal(hs_fileio_check_stat(&st, &any), 0);
	st.st_uid = UID_A;
	st.st_gid = GID_B;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), -HS_E_GROUP);
	st.st_gid = GID_A;
	st.st_nlink = 2;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), -HS_E_NLINK);
	assert_int_equal(hs_fileio_check_stat(&st, &any), -HS_E_NLINK);
	/* a file of /etc may have other names when it is root's, never
	 * another owner's (a user's file linked into /etc); a strict
	 * expectation (the per-user tree) takes none */
	const struct hs_file_expect glob = HS_FILE_EXPECT_GLOBAL;
	assert_int_equal(hs_fileio_check_stat(&st, &glob), -HS_E_NLINK);
	st.st_uid = 0;
	assert_int_equal(hs_fileio_check_stat(&st, &glob), 0);
	assert_int_equal(hs_fileio_check_stat(&st, &any), -HS_E_NLINK);
	st.st_nlink = 0;
	assert_int_equal(hs_fileio_check_stat(&st, &glob), -HS_E_NLINK);
	st.st_uid = UID_A;
	st.st_nlink = 1;
	st.st_mode = S_IFIFO | 0640;
	assert_int_equal(hs_fileio_check_stat(&st, &ex), -HS_E_NOTREG);
	st.st_mode = S_IFDIR | 0755;
	assert_int_equal(hs_fileio_check_stat(&st, &any), -HS_E_NOTREG);
	st.st_mode = S_IFLNK | 0777;
	assert_int_equal(hs_fileio_check_stat(&st, &any), -HS_E_NOTREG);
}

/* ---- hs_fileio_read_trusted_at / hs_fileio_read_alloc_at ---- */

static void test_read_ok(void **state)
{
	struct tmp_dirs *f = *state;
	char buf[4097];
	size_t len = 99;
	struct stat st;
	char *data = NULL;

	put_str(f->dfd, "shadow", "hash:1:\n", UID_A, GID_A, 0640);
	memset(buf, 'x', sizeof buf);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "shadow", &expect_a, buf, sizeof buf,
					    &len, &st), 0);
	assert_int_equal(len, 8);
	assert_string_equal(buf, "hash:1:\n");
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(st.st_size, 8);

	assert_int_equal(hs_fileio_read_alloc_at(f->dfd, "shadow", &expect_a, &data, &len, &st), 0);
	assert_int_equal(len, 8);
	assert_string_equal(data, "hash:1:\n");
	free(data);

	/* empty file */
	put_str(f->dfd, "empty", "", UID_A, GID_A, 0640);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "empty", &expect_a, buf, sizeof buf,
					    &len, NULL), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	assert_int_equal(hs_fileio_read_alloc_at(f->dfd, "empty", &expect_a, &data, &len, NULL), 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
}

static void test_read_bad_args(void **state)
{
	struct tmp_dirs *f = *state;
	char buf[4097];
	size_t len;

	put_str(f->dfd, "f", "x", UID_A, GID_A, 0640);
	/* a buffer that cannot hold cap + NUL is refused, not overrun */
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "f", &expect_a, buf, 4096, &len, NULL),
			 -EINVAL);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "../f", &expect_a, buf, sizeof buf, &len,
					    NULL), -EINVAL);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "..", &expect_a, buf, sizeof buf, &len,
					    NULL), -EINVAL);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "", &expect_a, buf, sizeof buf, &len,
					    NULL), -EINVAL);
	assert_int_equal(read_a(f->dfd, "missing"), -ENOENT);
	assert_int_equal(alloc_a(f->dfd, "missing"), -ENOENT);
}

static void test_read_symlinks(void **state)
{
	struct tmp_dirs *f = *state;

	/* the targets themselves pass every other check */
	put_str(f->dfd, "real", "ok\n", UID_A, GID_A, 0640);
	put_str(f->ofd, "outside", "ok\n", UID_A, GID_A, 0640);
	assert_int_equal(read_a(f->dfd, "real"), 0);

	assert_int_equal(symlinkat("real", f->dfd, "to-file"), 0);
	assert_int_equal(symlinkat("/etc/passwd", f->dfd, "to-passwd"), 0);
	assert_int_equal(symlinkat("/nonexistent/x", f->dfd, "dangling"), 0);
	char target[128];
	snprintf(target, sizeof target, "%s/outside", f->outside);
	assert_int_equal(symlinkat(target, f->dfd, "to-outside"), 0);
	assert_int_equal(symlinkat(f->outside, f->dfd, "to-dir"), 0);

	const char *links[] = { "to-file", "to-passwd", "dangling", "to-outside", "to-dir" };
	const struct hs_file_expect any = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 1 << 20,
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(links); i++) {
		char buf[1 << 12];
		size_t len;
		char *data = NULL;
		const struct hs_file_expect small = {
			.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 4000,
		};

		assert_int_equal(read_a(f->dfd, links[i]), -HS_E_SYMLINK);
		assert_int_equal(alloc_a(f->dfd, links[i]), -HS_E_SYMLINK);
		assert_int_equal(hs_fileio_read_trusted_at(f->dfd, links[i], &small, buf, sizeof buf,
						    &len, NULL), -HS_E_SYMLINK);
		assert_int_equal(hs_fileio_read_alloc_at(f->dfd, links[i], &any, &data, &len,
						       NULL), -HS_E_SYMLINK);
		assert_null(data);
	}
}

static void test_read_hardlink(void **state)
{
	struct tmp_dirs *f = *state;

	put_str(f->dfd, "shadow", "hash::\n", UID_A, GID_A, 0640);
	assert_int_equal(linkat(f->dfd, "shadow", f->dfd, "keep", 0), 0);
	assert_int_equal(read_a(f->dfd, "shadow"), -HS_E_NLINK);
	assert_int_equal(read_a(f->dfd, "keep"), -HS_E_NLINK);
	assert_int_equal(alloc_a(f->dfd, "shadow"), -HS_E_NLINK);
	/* a hard link from another directory counts the same */
	put_str(f->ofd, "victim", "x\n", UID_A, GID_A, 0640);
	assert_int_equal(linkat(f->ofd, "victim", f->dfd, "planted", 0), 0);
	assert_int_equal(read_a(f->dfd, "planted"), -HS_E_NLINK);
}

/* hs_fileio_map_path opens as the readers do: the contents of a regular file
 * (an empty one maps to ""), and a symlink, a hard link, a FIFO or a file
 * over the size cap refused. */
static void test_map_file(void **state)
{
	struct tmp_dirs *f = *state;
	const struct hs_file_expect any = { .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 64 };
	char path[256];
	const char *data;
	size_t len;

	put_str(f->dfd, "passwd", "root:x:0:0::/root:/bin/sh\n", UID_A, GID_A, 0644);
	snprintf(path, sizeof path, "%s/passwd", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, NULL), 0);
	assert_int_equal(len, strlen("root:x:0:0::/root:/bin/sh\n"));
	assert_memory_equal(data, "root:x:0:0::/root:/bin/sh\n", len);
	hs_fileio_unmap(data, len);

	put_str(f->dfd, "empty", "", UID_A, GID_A, 0644);
	snprintf(path, sizeof path, "%s/empty", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, NULL), 0);
	assert_int_equal(len, 0);

	put_str(f->dfd, "big", "0123456789012345678901234567890123456789012345678901234567890123"
		"4\n", UID_A, GID_A, 0644);
	snprintf(path, sizeof path, "%s/big", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, NULL), -HS_E_TOOBIG);

	assert_int_equal(symlinkat("passwd", f->dfd, "link"), 0);
	snprintf(path, sizeof path, "%s/link", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, NULL), -HS_E_SYMLINK);

	assert_int_equal(linkat(f->dfd, "passwd", f->dfd, "second", 0), 0);
	snprintf(path, sizeof path, "%s/passwd", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, NULL), -HS_E_NLINK);

	assert_int_equal(mkfifoat(f->dfd, "fifo", 0600), 0);
	snprintf(path, sizeof path, "%s/fifo", f->path);
	assert_true(hs_fileio_map_path(path, &any, &data, &len, NULL) < 0);
}

/* A mapped file cut short by a program that ignores our locks: no SIGBUS;
 * the mapping reads as zeros and says it is torn.  The others are not. */
static void test_map_cut_short(void **state)
{
	struct tmp_dirs *f = *state;
	const struct hs_file_expect any = { .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 1 << 20 };
	char path[256], *text = malloc(20000);
	const char *data, *other;
	size_t len, other_len, sum = 0;
	struct stat st;
	int fd;

	assert_non_null(text);
	memset(text, 'a', 19999);
	text[19999] = '\0';
	put_str(f->dfd, "group", text, UID_A, GID_A, 0644);
	put_str(f->dfd, "gshadow", text, UID_A, GID_A, 0644);
	snprintf(path, sizeof path, "%s/group", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &data, &len, &st), 0);
	assert_int_equal(st.st_size, 19999);
	snprintf(path, sizeof path, "%s/gshadow", f->path);
	assert_int_equal(hs_fileio_map_path(path, &any, &other, &other_len, NULL), 0);
	assert_false(hs_fileio_map_torn(data));

	fd = openat(f->dfd, "group", O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < len; i++)
		sum += (unsigned char)((volatile const char *)data)[i];
	assert_int_equal(sum, 0);
	assert_true(hs_fileio_map_torn(data));
	assert_false(hs_fileio_map_torn(other));
	assert_memory_equal(other, text, other_len);
	hs_fileio_unmap(data, len);
	hs_fileio_unmap(other, other_len);
	free(text);
}

static void test_read_fifo(void **state)
{
	struct tmp_dirs *f = *state;

	assert_int_equal(mkfifoat(f->dfd, "fifo", 0666), 0);
	assert_int_equal(fchownat(f->dfd, "fifo", UID_A, GID_A, AT_SYMLINK_NOFOLLOW), 0);
	assert_not_regular(f->dfd, "fifo");
}

static void test_read_directory(void **state)
{
	struct tmp_dirs *f = *state;

	assert_int_equal(mkdirat(f->dfd, "dir", 0700), 0);
	assert_int_equal(fchownat(f->dfd, "dir", UID_A, GID_A, 0), 0);
	assert_not_regular(f->dfd, "dir");
}

static void test_read_socket(void **state)
{
	struct tmp_dirs *f = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/sock", f->path);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(s, 1), 0);
	assert_int_equal(fchownat(f->dfd, "sock", UID_A, GID_A, 0), 0);
	assert_not_regular(f->dfd, "sock");
	close(s);
}

static void test_read_device(void **state)
{
	struct tmp_dirs *f = *state;

	/* /dev/zero: reading it would never end, so it must be refused
	 * before any read */
	if (mknodat(f->dfd, "zero", S_IFCHR | 0666, makedev(1, 5)) < 0)
		skip();
	assert_int_equal(fchownat(f->dfd, "zero", UID_A, GID_A, 0), 0);
	assert_not_regular(f->dfd, "zero");
}

/* A file's owner can take a write lease on it; a blocking open by root
 * would then hang until the lease-break timeout (45 s by default).  The
 * non-blocking open must fail at once instead. */
static void test_read_leased(void **state)
{
	struct tmp_dirs *f = *state;
	int fd;

	put_str(f->dfd, "shadow", "hash::\n", UID_A, GID_A, 0640);
	fd = openat(f->dfd, "shadow", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* the lease break would otherwise kill us with SIGIO */
	signal(SIGIO, SIG_IGN);
	if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0) {
		close(fd);
		skip();
	}
	GUARD_START();
	assert_int_equal(read_a(f->dfd, "shadow"), -EWOULDBLOCK);
	assert_int_equal(alloc_a(f->dfd, "shadow"), -EWOULDBLOCK);
	GUARD_END();
	assert_int_equal(fcntl(fd, F_SETLEASE, F_UNLCK), 0);
	close(fd);
	assert_int_equal(read_a(f->dfd, "shadow"), 0);
}

static void test_read_owner_group(void **state)
{
	struct tmp_dirs *f = *state;

	put_str(f->dfd, "wrong-owner", "x\n", UID_B, GID_A, 0640);
	put_str(f->dfd, "wrong-group", "x\n", UID_A, GID_B, 0640);
	put_str(f->dfd, "root", "x\n", 0, 0, 0640);
	assert_int_equal(read_a(f->dfd, "wrong-owner"), -HS_E_OWNER);
	assert_int_equal(alloc_a(f->dfd, "wrong-owner"), -HS_E_OWNER);
	assert_int_equal(read_a(f->dfd, "wrong-group"), -HS_E_GROUP);
	assert_int_equal(alloc_a(f->dfd, "wrong-group"), -HS_E_GROUP);
	assert_int_equal(read_a(f->dfd, "root"), -HS_E_OWNER);
}

static void test_read_sizes(void **state)
{
	struct tmp_dirs *f = *state;
	char big[4098];
	char buf[4097];
	size_t len;

	memset(big, 'a', sizeof big);
	big[4096] = '\0';
	put_str(f->dfd, "exact", big, UID_A, GID_A, 0640);
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "exact", &expect_a, buf, sizeof buf, &len,
					    NULL), 0);
	assert_int_equal(len, 4096);
	assert_int_equal(buf[4096], '\0');
	assert_int_equal(alloc_a(f->dfd, "exact"), 0);

	big[4096] = 'a';
	big[4097] = '\0';
	put_str(f->dfd, "over", big, UID_A, GID_A, 0640);
	assert_int_equal(read_a(f->dfd, "over"), -HS_E_TOOBIG);
	assert_int_equal(alloc_a(f->dfd, "over"), -HS_E_TOOBIG);

	/* with no explicit cap, the buffer is the cap */
	const struct hs_file_expect nocap = { .uid = UID_A, .gid = GID_A, .max_size = 0 };
	char small[16];
	assert_int_equal(hs_fileio_read_trusted_at(f->dfd, "over", &nocap, small, sizeof small, &len,
					    NULL), -HS_E_TOOBIG);
}

static void test_read_sparse_huge(void **state)
{
	struct tmp_dirs *f = *state;
	const struct hs_file_expect global = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 256u << 20,
	};
	char *data = NULL;
	size_t len;
	int fd;

	fd = openat(f->dfd, "sparse", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	assert_int_equal(fchown(fd, UID_A, GID_A), 0);
	close(fd);
	/* refused by st_size: must be instant, no 1 GiB read */
	GUARD_START();
	assert_int_equal(read_a(f->dfd, "sparse"), -HS_E_TOOBIG);
	assert_int_equal(alloc_a(f->dfd, "sparse"), -HS_E_TOOBIG);
	assert_int_equal(hs_fileio_read_alloc_at(f->dfd, "sparse", &global, &data, &len, NULL),
			 -HS_E_TOOBIG);
	GUARD_END();
	assert_null(data);
}

/* /proc files report st_size 0 but have content: the same situation as
 * a file that grows between fstat and read.  The cap must still hold. */
static void test_read_grows_after_fstat(void **state)
{
	int procfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const struct hs_file_expect tiny = { .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 16 };
	const struct hs_file_expect nocap = { .uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = 0 };
	struct stat st;
	char buf[17];
	char *data = NULL;
	size_t len;

	(void)state;
	if (procfd < 0)
		skip();
	assert_int_equal(fstatat(procfd, "status", &st, 0), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(hs_fileio_read_trusted_at(procfd, "status", &tiny, buf, sizeof buf, &len,
					    NULL), -HS_E_TOOBIG);
	assert_int_equal(hs_fileio_read_alloc_at(procfd, "status", &tiny, &data, &len, NULL),
			 -HS_E_TOOBIG);
	assert_null(data);
	/* without a cap the whole thing is read, growing the buffer past
	 * the initial guess (maps is long, more so under ASan) */
	assert_int_equal(hs_fileio_read_alloc_at(procfd, "maps", &nocap, &data, &len, NULL), 0);
	assert_true(len > 0);
	assert_int_equal(strlen(data), len);
	free(data);
	close(procfd);
}

/* ---- hs_fileio_replace_at ---- */

/* Plant the file the replace tests replace; its inode number. */
static ino_t put_old_shadow(int dfd)
{
	struct stat st;

	put_str(dfd, "shadow", "old:1:\n", UID_A, GID_A, 0640);
	assert_int_equal(fstatat(dfd, "shadow", &st, 0), 0);
	return st.st_ino;
}

static void test_replace_basic(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;

	ino_t old_ino = put_old_shadow(f->dfd);

	assert_int_equal(hs_fileio_replace_at(f->dfd, "shadow", "new:2:\n", 7, UID_A, GID_A, 0640),
			 0);
	assert_string_equal(slurp(f->dfd, "shadow"), "new:2:\n");
	assert_int_equal(fstatat(f->dfd, "shadow", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(st.st_gid, GID_A);
	assert_int_equal(st.st_nlink, 1);
	/* a new inode, never an in-place truncate */
	assert_true(st.st_ino != old_ino);
	assert_entries(f->dfd, 1);

	/* creating a file that did not exist; root-owned, other modes */
	assert_int_equal(hs_fileio_replace_at(f->dfd, "aging", "-1:-1:-1:-1:-1:\n", 16, 0, GID_A,
					    0644), 0);
	assert_int_equal(fstatat(f->dfd, "aging", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, GID_A);

	/* set-id bits survive because chmod comes after chown */
	assert_int_equal(hs_fileio_replace_at(f->dfd, "prog", "#!/bin/sh\n", 10, UID_A, GID_A,
					    06755), 0);
	assert_int_equal(fstatat(f->dfd, "prog", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 06755);

	/* HS_ANY_*: whatever the creator got (root here) */
	assert_int_equal(hs_fileio_replace_at(f->dfd, "any", "", 0, HS_ANY_UID, HS_ANY_GID, 0600),
			 0);
	assert_int_equal(fstatat(f->dfd, "any", &st, 0), 0);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_size, 0);
	assert_entries(f->dfd, 4);
}

static void test_replace_over_planted(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;
	char target[128];

	/* a symlink at the target name is replaced, never written through */
	put_str(f->ofd, "victim", "precious\n", 0, 0, 0644);
	snprintf(target, sizeof target, "%s/victim", f->outside);
	assert_int_equal(symlinkat(target, f->dfd, "shadow"), 0);
	assert_int_equal(hs_fileio_replace_at(f->dfd, "shadow", "new\n", 4, UID_A, GID_A, 0640), 0);
	assert_string_equal(slurp(f->ofd, "victim"), "precious\n");
	assert_int_equal(fstatat(f->dfd, "shadow", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(f->dfd, "shadow"), "new\n");

	/* a hard link at the target name: the other name keeps the old
	 * inode and content */
	assert_int_equal(linkat(f->ofd, "victim", f->dfd, "shell", 0), 0);
	assert_int_equal(hs_fileio_replace_at(f->dfd, "shell", "/bin/sh\n", 8, UID_A, GID_A, 0640),
			 0);
	assert_string_equal(slurp(f->ofd, "victim"), "precious\n");
	assert_int_equal(fstatat(f->ofd, "victim", &st, 0), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_uid, 0);

	/* a FIFO at the target name is replaced without opening it */
	assert_int_equal(mkfifoat(f->dfd, "aging", 0666), 0);
	GUARD_START();
	assert_int_equal(hs_fileio_replace_at(f->dfd, "aging", "x\n", 2, 0, GID_A, 0644), 0);
	GUARD_END();
	assert_string_equal(slurp(f->dfd, "aging"), "x\n");

	/* a directory at the target name cannot be replaced: error, and
	 * the temp file is gone */
	assert_int_equal(mkdirat(f->dfd, "dir", 0700), 0);
	assert_true(hs_fileio_replace_at(f->dfd, "dir", "x", 1, 0, 0, 0600) < 0);
	assert_entries(f->dfd, 4);
}

static void test_replace_bad_args(void **state)
{
	struct tmp_dirs *f = *state;
	char longname[300];

	assert_int_equal(hs_fileio_replace_at(f->dfd, "a/b", "x", 1, 0, 0, 0600), -EINVAL);
	assert_int_equal(hs_fileio_replace_at(f->dfd, "..", "x", 1, 0, 0, 0600), -EINVAL);
	assert_int_equal(hs_fileio_replace_at(f->dfd, "", "x", 1, 0, 0, 0600), -EINVAL);
	assert_int_equal(hs_fileio_replace_at(f->dfd, "x", NULL, 1, 0, 0, 0600), -EINVAL);
	/* the temp name would not fit in NAME_MAX */
	memset(longname, 'n', 250);
	longname[250] = '\0';
	assert_int_equal(hs_fileio_replace_at(f->dfd, longname, "x", 1, 0, 0, 0600), -ENAMETOOLONG);
	assert_entries(f->dfd, 0);
}

/* Child side of the EFBIG test: the file size limit makes the write of
 * the new content fail half-way. */
static int replace_with_fsize_limit(void *arg)
{
	const struct tmp_dirs *f = arg;
	const int dfd = f->dfd;
	const size_t len = 5000;
	struct rlimit rl = { 1000, 1000 };
	char *data = malloc(len);

	if (!data)
		return 90;
	memset(data, 'N', len);
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 91;
	int r = hs_fileio_replace_at(dfd, "shadow", data, len, UID_A, GID_A, 0640);
	free(data);
	return r == -EFBIG ? 0 : 92;
}

static void test_replace_efbig_keeps_old(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;

	ino_t ino = put_old_shadow(f->dfd);

	assert_int_equal(in_child(replace_with_fsize_limit, f), 0);

	assert_string_equal(slurp(f->dfd, "shadow"), "old:1:\n");
	assert_int_equal(fstatat(f->dfd, "shadow", &st, 0), 0);
	assert_int_equal(st.st_ino, ino);
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_entries(f->dfd, 1);
}

/* Child side of the ENOSPC test, in its own mount namespace with a
 * 64 KiB tmpfs. Exit 0 = as expected, 77 = cannot set up (skip). */
static int enospc_child(void *arg)
{
	const char *mnt = arg;
	static char data[256 * 1024];
	int dfd, r, hidden;
	char buf[64];
	ssize_t n;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("hs-test", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") < 0)
		return 77;
	dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 80;
	r = hs_fileio_replace_at(dfd, "shadow", "old:1:\n", 7, UID_A, GID_A, 0640);
	if (r < 0)
		return 81;
	memset(data, 'N', sizeof data);
	r = hs_fileio_replace_at(dfd, "shadow", data, sizeof data, UID_A, GID_A, 0640);
	if (r != -ENOSPC)
		return 82;
	int fd = openat(dfd, "shadow", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 83;
	n = hs_read_full(fd, buf, sizeof buf - 1);
	close(fd);
	if (n != 7 || memcmp(buf, "old:1:\n", 7) != 0)
		return 84;
	if (count_entries(dfd, &hidden) != 1 || hidden != 0)
		return 85;
	/* and the space was given back: a normal replace works again */
	if (hs_fileio_replace_at(dfd, "shadow", "new:2:\n", 7, UID_A, GID_A, 0640) < 0)
		return 86;
	return 0;
}

static void test_replace_enospc_keeps_old(void **state)
{
	struct tmp_dirs *f = *state;
	char mnt[128];
	int rc;

	snprintf(mnt, sizeof mnt, "%s/mnt", f->path);
	assert_int_equal(mkdir(mnt, 0700), 0);
	rc = in_child(enospc_child, mnt);
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

/* ---- hs_fileio_open_dir_at ---- */

static void test_open_dir(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;
	int fd;

	assert_int_equal(mkdirat(f->dfd, "dir", 0700), 0);
	fd = hs_fileio_open_dir_at(f->dfd, "dir", &st);
	assert_true(fd >= 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);

	assert_int_equal(symlinkat(f->outside, f->dfd, "link-dir"), 0);
	assert_int_equal(symlinkat("dir", f->dfd, "link-rel"), 0);
	assert_int_equal(symlinkat("/nonexistent", f->dfd, "dangling"), 0);
	assert_int_equal(symlinkat("/etc/passwd", f->dfd, "link-file"), 0);
	put_str(f->dfd, "file", "x", 0, 0, 0600);
	assert_int_equal(mkfifoat(f->dfd, "fifo", 0600), 0);

	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "link-dir", NULL), -HS_E_SYMLINK);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "link-rel", NULL), -HS_E_SYMLINK);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "dangling", NULL), -HS_E_SYMLINK);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "link-file", NULL), -HS_E_SYMLINK);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "file", NULL), -HS_E_NOTDIR);
	GUARD_START();
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "fifo", NULL), -HS_E_NOTDIR);
	GUARD_END();
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "missing", NULL), -ENOENT);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "..", NULL), -EINVAL);
	assert_int_equal(hs_fileio_open_dir_at(f->dfd, "dir/", NULL), -EINVAL);
}

/* ---- hs_walk_remove_tree_at ---- */

static void make_nested(int dfd, const char *name, int depth)
{
	int fd;

	assert_int_equal(mkdirat(dfd, name, 0700), 0);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < depth; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	put_str(fd, "bottom", "x", 0, 0, 0600);
	close(fd);
}

static void test_remove_hostile_tree(void **state)
{
	struct tmp_dirs *f = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char target[128];
	struct stat st;
	int u, sub, s;

	/* the outside world that must survive */
	put_str(f->ofd, "precious", "keep me\n", 0, 0, 0644);
	assert_int_equal(mkdirat(f->ofd, "odir", 0755), 0);
	int odir = openat(f->ofd, "odir", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(odir >= 0);
	put_str(odir, "inner", "keep me too\n", 0, 0, 0644);

	assert_int_equal(mkdirat(f->dfd, "user", 0700), 0);
	u = openat(f->dfd, "user", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(u >= 0);
	snprintf(target, sizeof target, "%s/precious", f->outside);
	assert_int_equal(symlinkat(target, u, "shadow"), 0);
	snprintf(target, sizeof target, "%s/odir", f->outside);
	assert_int_equal(symlinkat(target, u, "to-dir"), 0);
	assert_int_equal(symlinkat(f->outside, u, "to-outside"), 0);
	assert_int_equal(symlinkat("/", u, "to-root"), 0);
	assert_int_equal(symlinkat("/nonexistent", u, "dangling"), 0);
	assert_int_equal(linkat(f->ofd, "precious", u, "hardlink", 0), 0);
	assert_int_equal(mkfifoat(u, "fifo", 0600), 0);
	put_str(u, "mode000", "x", UID_A, GID_A, 0);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/user/sock", f->path);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	close(s);
	assert_int_equal(mkdirat(u, "sub", 0700), 0);
	sub = openat(u, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(sub >= 0);
	put_str(sub, "f", "x", UID_A, GID_A, 0);
	assert_int_equal(symlinkat(f->outside, sub, "up"), 0);
	make_nested(sub, "deep", 20);
	assert_int_equal(mkdirat(sub, "locked", 0), 0);
	int locked = openat(sub, "locked", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(locked >= 0);
	put_str(locked, "inside", "x", UID_A, GID_A, 0);
	close(locked);
	assert_int_equal(fchmod(sub, 0), 0);
	close(sub);
	close(u);

	GUARD_START();
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "user"), 0);
	GUARD_END();
	assert_int_equal(fstatat(f->dfd, "user", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(errno, ENOENT);

	assert_string_equal(slurp(f->ofd, "precious"), "keep me\n");
	assert_int_equal(fstatat(f->ofd, "precious", &st, 0), 0);
	assert_int_equal(st.st_nlink, 1);
	assert_string_equal(slurp(odir, "inner"), "keep me too\n");
	assert_int_equal(fstatat(f->ofd, "odir", &st, 0), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(odir);
	assert_entries(f->dfd, 0);
}

static void test_remove_single(void **state)
{
	struct tmp_dirs *f = *state;
	char target[128];

	put_str(f->ofd, "precious", "keep\n", 0, 0, 0644);
	snprintf(target, sizeof target, "%s/precious", f->outside);
	/* a symlink at the top is removed itself, the target stays */
	assert_int_equal(symlinkat(target, f->dfd, "link"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "link"), 0);
	assert_string_equal(slurp(f->ofd, "precious"), "keep\n");
	assert_int_equal(symlinkat(f->outside, f->dfd, "dirlink"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "dirlink"), 0);
	assert_string_equal(slurp(f->ofd, "precious"), "keep\n");

	put_str(f->dfd, "file", "x", 0, 0, 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "file"), 0);
	assert_int_equal(mkdirat(f->dfd, "empty", 0), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "empty"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "missing"), -ENOENT);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, ".."), -EINVAL);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "a/b"), -EINVAL);
	assert_entries(f->dfd, 0);
}

static void test_remove_depth_limit(void **state)
{
	struct tmp_dirs *f = *state;
	struct stat st;

	/* 60 levels: fine */
	make_nested(f->dfd, "ok", 60);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "ok"), 0);
	assert_int_equal(fstatat(f->dfd, "ok", &st, 0), -1);

	/* 100 levels: refused with an error, no crash */
	make_nested(f->dfd, "deep", 100);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "deep"), -ENAMETOOLONG);
	assert_int_equal(fstatat(f->dfd, "deep", &st, 0), 0);

	/* clean up by cutting the chain in the middle */
	cut_chain(f->dfd, "deep", 49, "lower");
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "deep"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "lower"), 0);
	assert_entries(f->dfd, 0);
}

/* A file system mounted inside the tree is never descended into. */
static int mount_child(void *arg)
{
	struct tmp_dirs *f = arg;
	char mnt[160];
	int mfd;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mkdirat(f->dfd, "tree", 0700) < 0 || mkdirat(f->dfd, "tree/mnt", 0700) < 0)
		return 80;
	snprintf(mnt, sizeof mnt, "%s/tree/mnt", f->path);
	if (mount("hs-test", mnt, "tmpfs", 0, "size=64k") < 0)
		return 77;
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return 81;
	if (mkdirat(mfd, "other", 0700) < 0)
		return 82;
	/* the kernel refuses to unlink a mount point (EBUSY) and the
	 * library refuses to cross into it (EXDEV): either way, an error
	 * and nothing below the mount touched */
	int r = hs_walk_remove_tree_at(f->dfd, "tree");
	if (r != -EXDEV && r != -EBUSY) {
		fprintf(stderr, "hs_walk_remove_tree_at over a mount point: %s\n", hs_strerror(r));
		return 83;
	}
	struct stat st;
	if (fstatat(mfd, "other", &st, 0) < 0)
		return 84;
	return 0;
}

static void test_remove_stays_on_fs(void **state)
{
	struct tmp_dirs *f = *state;
	int rc = in_child(mount_child, f);

	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
	/* the mount died with the child's namespace */
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "tree"), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, tmp_dirs_setup, tmp_dirs_teardown)

/* Readers racing a writer that keeps renaming new files over the one
 * being read must see the old or the new content, never an error: an
 * opened file that a rename just unlinked (link count 0) is retried, not
 * reported as a hard-link attack. */
static void test_read_races_replace(void **state)
{
	struct tmp_dirs *f = *state;
	const char *a = "aaaa:1:\n", *b = "bbbb:2:\n";
	char buf[4097];
	size_t len;
	pid_t writer;
	int status;

	put_str(f->dfd, "shadow", a, UID_A, GID_A, 0640);
	writer = fork_child();
	if (writer == 0) {
		for (int i = 0; i < 3000; i++) {
			const char *c = i % 2 ? a : b;

			if (hs_fileio_replace_at(f->dfd, "shadow", c, strlen(c), UID_A, GID_A,
					       0640) < 0)
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < 3000; i++) {
		int r = hs_fileio_read_trusted_at(f->dfd, "shadow", &expect_a, buf, sizeof buf, &len,
					   NULL);

		assert_int_equal(r, 0);
		assert_true(strcmp(buf, a) == 0 || strcmp(buf, b) == 0);
	}
	status = wait_status(writer);
	assert_int_equal(status, 0);
}

/* What the sweeps take for leftovers: exactly ".NAME." or ".new."/".del."
 * and a name, then twelve letters or digits. */
static void test_tempname_match(void **state)
{
	char tmp[NAME_MAX + 1];

	(void)state;
	assert_int_equal(hs_tempname_for_file("shadow", tmp, sizeof tmp), 0);
	assert_true(hs_tempname_is_for_file(tmp, "shadow"));
	assert_false(hs_tempname_is_for_file(tmp, "shell"));
	assert_true(hs_tempname_is_for_file(".shadow.aZ09aZ09aZ09", "shadow"));
	assert_false(hs_tempname_is_for_file(".shadow.aZ09aZ09aZ0", "shadow"));
	assert_false(hs_tempname_is_for_file(".shadow.aZ09aZ09aZ0-", "shadow"));
	assert_false(hs_tempname_is_for_file(".shadow.aZ09aZ09aZ0.", "shadow"));
	assert_false(hs_tempname_is_for_file(".shadow-aZ09aZ09aZ09", "shadow"));
	assert_false(hs_tempname_is_for_file("xshadow.aZ09aZ09aZ09", "shadow"));
	assert_false(hs_tempname_is_for_file(".shadow.aZ09aZ09aZ0\xe9", "shadow"));
	assert_int_equal(hs_tempname_reserved("del", "alice", tmp, sizeof tmp), 0);
	assert_true(hs_tempname_is_reserved(tmp));
	assert_true(hs_tempname_is_reserved(".new.a.000000000000"));
	assert_false(hs_tempname_is_reserved(".new..000000000000"));
	assert_false(hs_tempname_is_reserved(".old.a.000000000000"));
	assert_false(hs_tempname_is_reserved(".new.a.00000000000_"));
	assert_false(hs_tempname_is_reserved(".new.a-000000000000"));
	assert_false(hs_tempname_is_reserved(".new.a.00000000000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_component),
		cmocka_unit_test(test_check_file_stat),
		cmocka_unit_test(test_tempname_match),
		T(test_read_ok),
		T(test_read_races_replace),
		T(test_read_bad_args),
		T(test_read_symlinks),
		T(test_read_hardlink),
		T(test_map_file),
		T(test_map_cut_short),
		T(test_read_fifo),
		T(test_read_directory),
		T(test_read_socket),
		T(test_read_device),
		T(test_read_leased),
		T(test_read_owner_group),
		T(test_read_sizes),
		T(test_read_sparse_huge),
		cmocka_unit_test(test_read_grows_after_fstat),
		T(test_replace_basic),
		T(test_replace_over_planted),
		T(test_replace_bad_args),
		T(test_replace_efbig_keeps_old),
		T(test_replace_enospc_keeps_old),
		T(test_open_dir),
		T(test_remove_hostile_tree),
		T(test_remove_single),
		T(test_remove_depth_limit),
		T(test_remove_stays_on_fs),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_fileio: needs root (chown to test uids)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
