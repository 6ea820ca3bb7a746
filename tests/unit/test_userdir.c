/* Unit tests for lib/tree/userdir_*.c: the per-user tree built in a mkdtemp
 * directory standing in for /etc/hardened-shadow.  Exact owners and
 * modes, fail-closed aging, planted hostile files, hostile names, and a
 * non-root owner replacing its own file in the setgid directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "walk.h"
#include "layout.h"
#include "userdir.h"
#include "util.h"
#include "test_helpers.h"

#define UID_ALICE 12345
#define UID_BOB   12346
#define GID_AUTH  12346
#define GID_OTHER 12350

static void assert_stat(int dfd, const char *name, mode_t type, uid_t uid, gid_t gid,
			mode_t mode)
{
	struct stat st;

	assert_int_equal(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & S_IFMT, type);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
	assert_int_equal(st.st_mode & 07777, mode);
	if (type == S_IFREG)
		assert_int_equal(st.st_nlink, 1);
}

static void make_alice(struct tmp_dirs *f)
{
	struct hs_shadow sh = { .hash = "$y$j9T$salt$hash", .lstchg = 19000 };
	struct hs_aging ag = { .min = 0, .max = 99999, .warn = 7, .inact = -1, .expire = -1 };

	assert_int_equal(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, &sh, &ag,
					   "/bin/bash"), 0);
}

static int open_alice(struct tmp_dirs *f)
{
	uid_t owner = 0;
	int fd = hs_userdir_open(f->dfd, "alice", UID_ALICE, &owner);

	assert_true(fd >= 0);
	assert_int_equal(owner, UID_ALICE);
	return fd;
}

/* ---- names and paths ---- */

static void test_names(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shadow sh = { .hash = "x", .lstchg = -1 };
	struct hs_aging ag;
	const char *bad[] = {
		"../x", "..", ".", "/etc/x", "-x", "", "a/b", ".hidden", ":x", "x y", "x\n",
		"abcdefghijklmnopqrstuvwxyz0123456", /* 33 bytes */
		"$", "a$b",
	};

	hs_records_aging_init_unset(&ag);
	/* a real directory with a dangerous name must still not be reached */
	assert_int_equal(mkdirat(f->dfd, ".hidden", 0700), 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		assert_false(hs_userdir_entry_is_user(bad[i]));
		assert_int_equal(hs_userdir_open(f->dfd, bad[i], HS_ANY_UID, NULL), -HS_E_NAME);
		assert_int_equal(hs_userdir_create(f->dfd, bad[i], UID_ALICE, GID_AUTH, &sh,
						   &ag, "/bin/sh"), -HS_E_NAME);
		assert_int_equal(hs_userdir_remove(f->dfd, bad[i]), -HS_E_NAME);
	}
	assert_false(hs_userdir_entry_is_user(NULL));
	assert_int_equal(hs_userdir_open(f->dfd, NULL, HS_ANY_UID, NULL), -HS_E_NAME);
	/* an invalid name never reaches a system call: a bad fd would
	 * otherwise give EBADF */
	assert_int_equal(hs_userdir_open(-1, "../x", HS_ANY_UID, NULL), -HS_E_NAME);

	assert_true(hs_userdir_entry_is_user("alice"));
	assert_true(hs_userdir_entry_is_user("_x.y-z"));
	assert_true(hs_userdir_entry_is_user("machine$"));
	assert_true(hs_userdir_entry_is_user("abcdefghijklmnopqrstuvwxyz012345")); /* 32 */
	/* the hidden dir is untouched */
	assert_stat(f->dfd, ".hidden", S_IFDIR, 0, 0, 0700);
}

static void test_path(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(hs_userdir_path(buf, sizeof buf, "alice", "shadow"),
			    "/etc/hardened-shadow/alice/shadow");
	assert_string_equal(hs_userdir_path(buf, sizeof buf, "alice", NULL),
			    "/etc/hardened-shadow/alice");
	assert_string_equal(hs_userdir_path(buf, sizeof buf, NULL, NULL), "/etc/hardened-shadow");
	/* truncated, but still terminated */
	assert_string_equal(hs_userdir_path(buf, 10, "alice", "shadow"), "/etc/hard");
}

/* ---- create ---- */

static void test_create_layout(void **state)
{
	struct tmp_dirs *f = *state;
	int u;

	make_alice(f);
	assert_entries(f->dfd, 1);
	assert_stat(f->dfd, "alice", S_IFDIR, UID_ALICE, GID_AUTH, 02710);
	u = open_alice(f);
	assert_entries(u, 3);
	assert_stat(u, "shadow", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_stat(u, "shell", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_stat(u, "aging", S_IFREG, 0, GID_AUTH, 0644);
	assert_string_equal(slurp(u, "shadow"), "$y$j9T$salt$hash:19000:\n");
	assert_string_equal(slurp(u, "shell"), "/bin/bash\n");
	assert_string_equal(slurp(u, "aging"), "0:99999:7:-1:-1:\n");

	/* and the readers agree */
	char buf[HS_USERFILE_MAX + 2];
	struct hs_shadow sh;
	struct hs_aging ag;
	const char *shell;
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh), 0);
	assert_string_equal(sh.hash, "$y$j9T$salt$hash");
	assert_int_equal(sh.lstchg, 19000);
	assert_int_equal(hs_userdir_read_aging(u, &ag), 0);
	assert_int_equal(ag.min, 0);
	assert_int_equal(ag.max, 99999);
	assert_int_equal(ag.warn, 7);
	assert_int_equal(ag.inact, -1);
	assert_int_equal(ag.expire, -1);
	assert_int_equal(hs_userdir_aging_or_expired(u, &ag), 0);
	assert_int_equal(ag.expire, -1);
	assert_int_equal(hs_userdir_read_shell(u, UID_ALICE, buf, sizeof buf, &shell), 0);
	assert_string_equal(shell, "/bin/bash");
	close(u);
}

static void test_create_refuses_existing(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shadow sh = { .hash = "other", .lstchg = 1 };
	struct hs_aging ag;
	int u;

	hs_records_aging_init_unset(&ag);
	make_alice(f);
	assert_int_equal(hs_userdir_create(f->dfd, "alice", UID_BOB, GID_AUTH, &sh, &ag,
					   "/bin/sh"), -EEXIST);
	/* untouched, and no leftover temporary directory */
	assert_entries(f->dfd, 1);
	assert_stat(f->dfd, "alice", S_IFDIR, UID_ALICE, GID_AUTH, 02710);
	u = open_alice(f);
	assert_string_equal(slurp(u, "shadow"), "$y$j9T$salt$hash:19000:\n");
	close(u);

	/* a planted symlink or file with the user's name is not replaced */
	assert_int_equal(symlinkat(f->outside, f->dfd, "bob"), 0);
	assert_int_equal(hs_userdir_create(f->dfd, "bob", UID_BOB, GID_AUTH, &sh, &ag,
					   "/bin/sh"), -EEXIST);
	assert_entries(f->dfd, 2);
	assert_stat(f->dfd, "bob", S_IFLNK, 0, 0, 0777);
	assert_entries(f->ofd, 0);
}

static void test_create_invalid_records(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shadow sh = { .hash = "ok", .lstchg = 1 };
	struct hs_shadow bad_sh = { .hash = "a:b", .lstchg = 1 };
	struct hs_aging ag, bad_ag;

	hs_records_aging_init_unset(&ag);
	hs_records_aging_init_unset(&bad_ag);
	bad_ag.max = -5;
	assert_true(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, &sh, &ag,
				      "bin/sh") < 0);
	assert_true(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, &sh, &ag,
				      "/bin/sh\n") < 0);
	assert_true(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, &bad_sh, &ag,
				      "/bin/sh") < 0);
	assert_true(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, &sh, &bad_ag,
				      "/bin/sh") < 0);
	assert_int_equal(hs_userdir_create(f->dfd, "alice", UID_ALICE, GID_AUTH, NULL, &ag,
					   "/bin/sh"), -EINVAL);
	assert_entries(f->dfd, 0);
}

/* A failure after the temporary directory was built (here the final
 * RENAME_NOREPLACE collides with a non-empty directory) removes the
 * temporary directory and leaves the existing one alone. */
static void test_create_cleans_up(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shadow sh = { .hash = "ok", .lstchg = 1 };
	struct hs_aging ag;

	hs_records_aging_init_unset(&ag);
	/* an existing non-empty directory by that name (not a user dir) */
	assert_int_equal(mkdirat(f->dfd, "carol", 0755), 0);
	int c = openat(f->dfd, "carol", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put_str(c, "keep", "keep\n", 0, 0, 0644);
	assert_int_equal(hs_userdir_create(f->dfd, "carol", UID_ALICE, GID_AUTH, &sh, &ag,
					   "/bin/sh"), -EEXIST);
	assert_string_equal(slurp(c, "keep"), "keep\n");
	close(c);
	assert_entries(f->dfd, 1);
}

/* ---- read checks on planted files ---- */

static void test_read_planted(void **state)
{
	struct tmp_dirs *f = *state;
	char buf[HS_USERFILE_MAX + 2];
	char target[128];
	struct hs_shadow sh;
	const char *shell;
	int u;

	make_alice(f);
	u = open_alice(f);

	/* symlink to root's real file, to a file elsewhere, dangling */
	put_str(f->ofd, "shadow", "stolen::\n", UID_ALICE, GID_AUTH, 0640);
	snprintf(target, sizeof target, "%s/shadow", f->outside);
	const char *targets[] = { target, "/etc/shadow", "/etc/passwd", "/nonexistent" };
	for (size_t i = 0; i < HS_ARRAY_SIZE(targets); i++) {
		assert_int_equal(unlinkat(u, "shadow", 0), 0);
		assert_int_equal(symlinkat(targets[i], u, "shadow"), 0);
		assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
				 -HS_E_SYMLINK);
	}

	/* hard link: nlink 2 */
	assert_int_equal(unlinkat(u, "shadow", 0), 0);
	assert_int_equal(linkat(f->ofd, "shadow", u, "shadow", 0), 0);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
			 -HS_E_NLINK);

	/* FIFO: refused, never blocks */
	assert_int_equal(unlinkat(u, "shell", 0), 0);
	assert_int_equal(mkfifoat(u, "shell", 0666), 0);
	assert_int_equal(fchownat(u, "shell", UID_ALICE, GID_AUTH, 0), 0);
	GUARD_START();
	assert_int_equal(hs_userdir_read_shell(u, UID_ALICE, buf, sizeof buf, &shell),
			 -HS_E_NOTREG);
	GUARD_END();

	/* directory */
	assert_int_equal(unlinkat(u, "shell", 0), 0);
	assert_int_equal(mkdirat(u, "shell", 0700), 0);
	assert_int_equal(fchownat(u, "shell", UID_ALICE, GID_AUTH, 0), 0);
	assert_int_equal(hs_userdir_read_shell(u, UID_ALICE, buf, sizeof buf, &shell),
			 -HS_E_NOTREG);
	assert_int_equal(unlinkat(u, "shell", AT_REMOVEDIR), 0);

	/* wrong owner: root's, bob's */
	put_str(u, "shadow", "x::\n", 0, GID_AUTH, 0640);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
			 -HS_E_OWNER);
	put_str(u, "shadow", "x::\n", UID_BOB, GID_AUTH, 0640);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
			 -HS_E_OWNER);

	/* oversized and sparse */
	static char big[HS_USERFILE_MAX + 1];
	memset(big, 'a', sizeof big);
	put_file(u, "shadow", big, sizeof big, UID_ALICE, GID_AUTH, 0640);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
			 -HS_E_TOOBIG);
	put_str(u, "shadow", "", UID_ALICE, GID_AUTH, 0640);
	int fd = openat(u, "shadow", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	GUARD_START();
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh),
			 -HS_E_TOOBIG);
	GUARD_END();

	/* buffer too small for the contract */
	put_str(u, "shadow", "x::\n", UID_ALICE, GID_AUTH, 0640);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, HS_USERFILE_MAX + 1, &sh),
			 -EINVAL);
	assert_int_equal(hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh), 0);
	assert_string_equal(sh.hash, "x");
	assert_int_equal(sh.lstchg, -1);

	/* the outside file was never touched */
	assert_string_equal(slurp(f->ofd, "shadow"), "stolen::\n");
	close(u);
}

static void test_read_formats(void **state)
{
	struct tmp_dirs *f = *state;
	char buf[HS_USERFILE_MAX + 2];
	struct hs_shadow sh;
	const char *shell;
	int u;

	make_alice(f);
	u = open_alice(f);

	/* ANY_ERR: any negative error; a literal's length keeps embedded NULs */
#define ANY_ERR 1
#define CONTENT(lit, err) { lit, sizeof lit - 1, err }
	static const struct { const char *content; size_t len; int err; } shells[] = {
		/* shell: with or without one trailing newline */
		CONTENT("/bin/zsh", 0), CONTENT("/bin/zsh\n", 0),
		CONTENT("/bin/zsh\n\n", -HS_E_FORMAT), CONTENT("/bin/zsh\n/bin/sh\n", -HS_E_FORMAT),
		CONTENT("/bin/sh\0/evil\n", -HS_E_FORMAT),
		CONTENT("", ANY_ERR), CONTENT("bin/sh\n", ANY_ERR),
	}, shadows[] = {
		/* shadow: exactly one line with its newline */
		CONTENT("h:5:", -HS_E_FORMAT), CONTENT("h:5:\nh2:6:\n", -HS_E_FORMAT),
		CONTENT("h:5:\0x\n", -HS_E_FORMAT), CONTENT("h:x:\n", ANY_ERR),
		CONTENT("!h::\n", 0),
	};
#undef CONTENT
	int r;

	for (size_t i = 0; i < HS_ARRAY_SIZE(shells); i++) {
		put_file(u, "shell", shells[i].content, shells[i].len, UID_ALICE, GID_AUTH, 0640);
		r = hs_userdir_read_shell(u, UID_ALICE, buf, sizeof buf, &shell);
		if (shells[i].err == ANY_ERR) {
			assert_true(r < 0);
			continue;
		}
		assert_int_equal(r, shells[i].err);
		if (r == 0)
			assert_string_equal(shell, "/bin/zsh");
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(shadows); i++) {
		put_file(u, "shadow", shadows[i].content, shadows[i].len, UID_ALICE, GID_AUTH, 0640);
		r = hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &sh);
		if (shadows[i].err == ANY_ERR)
			assert_true(r < 0);
		else
			assert_int_equal(r, shadows[i].err);
	}
#undef ANY_ERR
	/* the last one was accepted */
	assert_string_equal(sh.hash, "!h");
	assert_int_equal(sh.lstchg, -1);
	close(u);
}

/* ---- aging fails closed ---- */

static void assert_expired(int u, int expected_err)
{
	struct hs_aging ag = { 5, 5, 5, 5, 5, "" };

	assert_int_equal(hs_userdir_aging_or_expired(u, &ag), expected_err);
	assert_int_equal(ag.expire, 1);
	assert_int_equal(ag.min, -1);
	assert_int_equal(ag.max, -1);
	assert_int_equal(ag.warn, -1);
	assert_int_equal(ag.inact, -1);
}

static void test_aging_fail_closed(void **state)
{
	struct tmp_dirs *f = *state;
	char target[128];
	int u;

	make_alice(f);
	u = open_alice(f);

	/* missing: the user can delete it, so it counts as expired */
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_expired(u, -ENOENT);

	/* owned by the user (who can always write one) */
	put_str(u, "aging", "-1:-1:-1:-1:-1:\n", UID_ALICE, GID_AUTH, 0644);
	assert_expired(u, -HS_E_OWNER);

	/* a symlink to a perfectly good root-owned file elsewhere */
	put_str(f->ofd, "aging", "-1:-1:-1:-1:-1:\n", 0, GID_AUTH, 0644);
	snprintf(target, sizeof target, "%s/aging", f->outside);
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_int_equal(symlinkat(target, u, "aging"), 0);
	assert_expired(u, -HS_E_SYMLINK);
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_int_equal(symlinkat("/nonexistent", u, "aging"), 0);
	assert_expired(u, -HS_E_SYMLINK);

	/* a hard link to root's file */
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_int_equal(linkat(f->ofd, "aging", u, "aging", 0), 0);
	assert_expired(u, -HS_E_NLINK);

	/* FIFO, directory */
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_int_equal(mkfifoat(u, "aging", 0644), 0);
	GUARD_START();
	assert_expired(u, -HS_E_NOTREG);
	GUARD_END();
	assert_int_equal(unlinkat(u, "aging", 0), 0);
	assert_int_equal(mkdirat(u, "aging", 0755), 0);
	assert_expired(u, -HS_E_NOTREG);
	assert_int_equal(unlinkat(u, "aging", AT_REMOVEDIR), 0);

	/* bad format, empty, missing newline, too big */
	put_str(u, "aging", "-1:-1:-1:-1:\n", 0, GID_AUTH, 0644);
	assert_expired(u, -HS_E_FORMAT);
	put_str(u, "aging", "", 0, GID_AUTH, 0644);
	assert_expired(u, -HS_E_FORMAT);
	put_str(u, "aging", "-1:-1:-1:-1:-1:", 0, GID_AUTH, 0644);
	assert_expired(u, -HS_E_FORMAT);
	put_str(u, "aging", "x:-1:-1:-1:-1:\n", 0, GID_AUTH, 0644);
	struct hs_aging ag;
	assert_true(hs_userdir_aging_or_expired(u, &ag) < 0);
	assert_int_equal(ag.expire, 1);
	static char big[HS_USERFILE_MAX + 10];
	memset(big, '1', sizeof big);
	put_file(u, "aging", big, sizeof big, 0, GID_AUTH, 0644);
	assert_expired(u, -HS_E_TOOBIG);

	/* and a good one gives the real values */
	put_str(u, "aging", "1:2:3:4:5:\n", 0, GID_AUTH, 0644);
	assert_int_equal(hs_userdir_aging_or_expired(u, &ag), 0);
	assert_int_equal(ag.min, 1);
	assert_int_equal(ag.max, 2);
	assert_int_equal(ag.warn, 3);
	assert_int_equal(ag.inact, 4);
	assert_int_equal(ag.expire, 5);
	close(u);
}

/* ---- writes ---- */

static void test_write_as_root(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_shadow sh = { .hash = "!locked", .lstchg = 20000 };
	struct hs_aging ag = { 1, 2, 3, 4, 5, "" };
	int u;

	make_alice(f);
	u = open_alice(f);
	/* make the existing files wrong: the replacement fixes them */
	assert_int_equal(fchownat(u, "shadow", UID_BOB, 0, 0), 0);
	assert_int_equal(fchmodat(u, "shadow", 0777, 0), 0);
	assert_int_equal(hs_userdir_write_shadow(u, UID_ALICE, GID_AUTH, &sh), 0);
	assert_stat(u, "shadow", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_string_equal(slurp(u, "shadow"), "!locked:20000:\n");

	assert_int_equal(hs_userdir_write_shell(u, UID_ALICE, GID_AUTH, "/bin/dash"), 0);
	assert_stat(u, "shell", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_string_equal(slurp(u, "shell"), "/bin/dash\n");

	assert_int_equal(hs_userdir_write_aging(u, GID_AUTH, &ag), 0);
	assert_stat(u, "aging", S_IFREG, 0, GID_AUTH, 0644);
	assert_string_equal(slurp(u, "aging"), "1:2:3:4:5:\n");

	/* invalid input writes nothing */
	struct hs_shadow bad = { .hash = "a\nb", .lstchg = 1 };
	assert_true(hs_userdir_write_shadow(u, UID_ALICE, GID_AUTH, &bad) < 0);
	assert_true(hs_userdir_write_shell(u, UID_ALICE, GID_AUTH, "relative") < 0);
	assert_string_equal(slurp(u, "shadow"), "!locked:20000:\n");
	assert_entries(u, 3);

	/* a planted symlink at the name is replaced, its target untouched */
	put_str(f->ofd, "victim", "precious\n", 0, 0, 0644);
	char target[128];
	snprintf(target, sizeof target, "%s/victim", f->outside);
	assert_int_equal(unlinkat(u, "shell", 0), 0);
	assert_int_equal(symlinkat(target, u, "shell"), 0);
	assert_int_equal(hs_userdir_write_shell(u, UID_ALICE, GID_AUTH, "/bin/sh"), 0);
	assert_stat(u, "shell", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_string_equal(slurp(f->ofd, "victim"), "precious\n");
	assert_stat(f->ofd, "victim", S_IFREG, 0, 0, 0644);
	close(u);
}

/* Child: become alice (not root, no auth group) and use the library as a
 * setgid tool would.  Exit codes say what went wrong. */
static int as_alice(void *arg)
{
	const int u = *(const int *)arg;
	struct hs_shadow sh = { .hash = "$y$new", .lstchg = 20001 };
	struct hs_aging ag = { -1, -1, -1, -1, -1, "" };
	char buf[HS_USERFILE_MAX + 2];
	struct hs_shadow got;
	gid_t g = GID_OTHER;

	if (setgroups(1, &g) < 0 || setresgid(GID_OTHER, GID_OTHER, GID_OTHER) < 0 ||
	    setresuid(UID_ALICE, UID_ALICE, UID_ALICE) < 0)
		return 90;
	if (geteuid() != UID_ALICE)
		return 91;
	if (hs_userdir_write_shadow(u, UID_ALICE, HS_ANY_GID, &sh) != 0)
		return 92;
	if (hs_userdir_read_shadow(u, UID_ALICE, buf, sizeof buf, &got) != 0)
		return 93;
	if (strcmp(got.hash, "$y$new") != 0)
		return 94;
	if (hs_userdir_write_shell(u, UID_ALICE, HS_ANY_GID, "/bin/zsh") != 0)
		return 95;
	/* aging must be root's: the user cannot produce a valid one */
	if (hs_userdir_write_aging(u, HS_ANY_GID, &ag) != -EPERM)
		return 96;
	return 0;
}

static void test_write_as_owner(void **state)
{
	struct tmp_dirs *f = *state;
	int u;

	make_alice(f);
	u = open_alice(f);
	assert_int_equal(in_child(as_alice, &u), 0);

	/* the new file got the directory's group, not the child's */
	assert_stat(u, "shadow", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_string_equal(slurp(u, "shadow"), "$y$new:20001:\n");
	assert_stat(u, "shell", S_IFREG, UID_ALICE, GID_AUTH, 0640);
	assert_string_equal(slurp(u, "shell"), "/bin/zsh\n");
	/* aging unchanged, no leftover temporary files */
	assert_stat(u, "aging", S_IFREG, 0, GID_AUTH, 0644);
	assert_string_equal(slurp(u, "aging"), "0:99999:7:-1:-1:\n");
	assert_entries(u, 3);
	close(u);
}

/* ---- open ---- */

static void test_open_checks(void **state)
{
	struct tmp_dirs *f = *state;
	uid_t owner = 99;
	int u;

	make_alice(f);
	assert_int_equal(hs_userdir_open(f->dfd, "alice", UID_BOB, &owner), -HS_E_OWNER);
	u = hs_userdir_open(f->dfd, "alice", HS_ANY_UID, &owner);
	assert_true(u >= 0);
	assert_int_equal(owner, UID_ALICE);
	close(u);
	assert_int_equal(hs_userdir_open(f->dfd, "nobody", HS_ANY_UID, NULL), -ENOENT);

	/* a symlink in the tree pointing at another user's dir or outside */
	assert_int_equal(symlinkat("alice", f->dfd, "mallory"), 0);
	assert_int_equal(hs_userdir_open(f->dfd, "mallory", HS_ANY_UID, NULL),
			 -HS_E_SYMLINK);
	assert_int_equal(symlinkat("/etc", f->dfd, "eve"), 0);
	assert_int_equal(hs_userdir_open(f->dfd, "eve", HS_ANY_UID, NULL), -HS_E_SYMLINK);
	put_str(f->dfd, "trent", "", 0, 0, 0600);
	assert_int_equal(hs_userdir_open(f->dfd, "trent", HS_ANY_UID, NULL), -HS_E_NOTDIR);
}

/* ---- remove ---- */

static void test_remove_hostile(void **state)
{
	struct tmp_dirs *f = *state;
	char target[128];
	int u, sub;

	put_str(f->ofd, "precious", "keep me\n", 0, 0, 0644);
	assert_int_equal(mkdirat(f->ofd, "odir", 0755), 0);
	int odir = openat(f->ofd, "odir", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put_str(odir, "inner", "keep too\n", UID_ALICE, 0, 0600);

	make_alice(f);
	u = open_alice(f);
	/* everything the user could plant */
	snprintf(target, sizeof target, "%s/precious", f->outside);
	assert_int_equal(symlinkat(target, u, "link-file"), 0);
	snprintf(target, sizeof target, "%s/odir", f->outside);
	assert_int_equal(symlinkat(target, u, "link-dir"), 0);
	assert_int_equal(symlinkat("/etc/passwd", u, "link-passwd"), 0);
	assert_int_equal(symlinkat("/", u, "link-root"), 0);
	assert_int_equal(symlinkat("..", u, "link-up"), 0);
	assert_int_equal(symlinkat("/nonexistent", u, "dangling"), 0);
	assert_int_equal(linkat(f->ofd, "precious", u, "hardlink", 0), 0);
	assert_int_equal(mkfifoat(u, "fifo", 0600), 0);
	put_str(u, "mode000", "x", UID_ALICE, GID_AUTH, 0);
	assert_int_equal(mkdirat(u, "a", 0700), 0);
	sub = openat(u, "a", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(mkdirat(sub, "b", 0700), 0);
		int next = openat(sub, "b", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		put_str(sub, "f", "x", UID_ALICE, GID_AUTH, 0);
		assert_int_equal(symlinkat(f->outside, sub, "out"), 0);
		assert_int_equal(fchmod(sub, 0), 0);
		close(sub);
		sub = next;
	}
	close(sub);
	close(u);

	GUARD_START();
	assert_int_equal(hs_userdir_remove(f->dfd, "alice"), 0);
	GUARD_END();
	assert_entries(f->dfd, 0);

	/* outside survived, untouched */
	assert_string_equal(slurp(f->ofd, "precious"), "keep me\n");
	assert_stat(f->ofd, "precious", S_IFREG, 0, 0, 0644);
	assert_string_equal(slurp(odir, "inner"), "keep too\n");
	assert_stat(odir, "inner", S_IFREG, UID_ALICE, 0, 0600);
	assert_stat(f->ofd, "odir", S_IFDIR, 0, 0, 0755);
	close(odir);

	/* and again: gone */
	assert_int_equal(hs_userdir_remove(f->dfd, "alice"), -ENOENT);
}

/* A removal that fails half-way (a directory chain deeper than the
 * remover accepts) must already have taken the directory away from the
 * user: the user's name is gone from the tree and what is left is a
 * reserved-name directory root:root 0700. */
static void test_remove_takes_away_first(void **state)
{
	struct tmp_dirs *f = *state;
	struct dirent *de;
	char left[256] = "";
	int u, fd, hidden;

	make_alice(f);
	u = open_alice(f);
	assert_int_equal(mkdirat(u, "d", 0700), 0);
	fd = openat(u, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	close(u);

	assert_true(hs_userdir_remove(f->dfd, "alice") < 0);
	assert_int_equal(hs_userdir_open(f->dfd, "alice", HS_ANY_UID, NULL), -ENOENT);
	assert_int_equal(count_entries(f->dfd, &hidden), 2);
	assert_int_equal(hidden, 2);
	DIR *d = fdopendir(fcntl(f->dfd, F_DUPFD_CLOEXEC, 3));
	assert_non_null(d);
	rewinddir(d);  /* the dup shares the offset count_entries moved */
	while ((de = readdir(d)))
		if (strncmp(de->d_name, ".del.", 5) == 0)
			snprintf(left, sizeof left, "%s", de->d_name);
	closedir(d);
	assert_true(strncmp(left, ".del.alice.", 11) == 0);
	assert_int_equal(strlen(left), 11 + 12);
	assert_stat(f->dfd, left, S_IFDIR, 0, 0, 0700);
	/* the leftover keeps the tree's mark, so the next locker sweeps */
	assert_stat(f->dfd, HS_TREE_RESERVED_MARK, S_IFREG, 0, 0, 0600);
	assert_int_equal(hs_userdir_sweep_reserved(f->dfd), 0);    /* still too deep */
	assert_stat(f->dfd, HS_TREE_RESERVED_MARK, S_IFREG, 0, 0, 0600);

	/* cut the chain so the remover can cope: the sweep takes the
	 * leftover and the mark */
	cut_chain(f->dfd, left, 50, "lower");
	assert_int_equal(hs_userdir_sweep_reserved(f->dfd), 1);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "lower"), 0);
	assert_entries(f->dfd, 0);
}

static void test_remove_refuses_symlink(void **state)
{
	struct tmp_dirs *f = *state;

	/* a symlink where the user's dir should be: neither followed nor
	 * chowned through */
	assert_int_equal(mkdirat(f->ofd, "victim", 0755), 0);
	assert_int_equal(fchownat(f->ofd, "victim", UID_BOB, UID_BOB, 0), 0);
	int v = openat(f->ofd, "victim", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put_str(v, "data", "keep\n", UID_BOB, UID_BOB, 0600);
	char target[128];
	snprintf(target, sizeof target, "%s/victim", f->outside);
	assert_int_equal(symlinkat(target, f->dfd, "alice"), 0);
	assert_int_equal(hs_userdir_remove(f->dfd, "alice"), -HS_E_SYMLINK);
	assert_stat(f->ofd, "victim", S_IFDIR, UID_BOB, UID_BOB, 0755);
	assert_string_equal(slurp(v, "data"), "keep\n");
	close(v);
	assert_entries(f->dfd, 1);

	put_str(f->dfd, "bob", "", 0, 0, 0600);
	assert_int_equal(hs_userdir_remove(f->dfd, "bob"), -HS_E_NOTDIR);
}

/* ---- the per-user lock ---- */

static double now_sec(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child that opens alice's directory itself (its own open file
 * description, as another process would), takes the lock, reports 'L'
 * on the pipe, then holds the lock for hold_ms (or until killed) and
 * releases it with hs_userdir_unlock before saying 'U'. */
static pid_t lock_holder(struct tmp_dirs *f, int hold_ms, int *rfd)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork_child();
	if (pid == 0) {
		int u = hs_userdir_open(f->dfd, "alice", UID_ALICE, NULL);
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

		close(p[0]);
		if (u < 0 || hs_userdir_lock(u, 0) != 0)
			_exit(2);
		if (write(p[1], "L", 1) != 1)
			_exit(3);
		nanosleep(&ts, NULL);
		if (hs_userdir_unlock(u) != 0)
			_exit(4);
		if (write(p[1], "U", 1) != 1)
			_exit(5);
		/* stay alive (fd open) so only the unlock can have released it */
		ts.tv_sec = 2;
		ts.tv_nsec = 0;
		nanosleep(&ts, NULL);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'L');
	*rfd = p[0];
	return pid;
}

static void test_lock_times_out(void **state)
{
	struct tmp_dirs *f = *state;
	int u, rfd;
	double t0, dt;
	pid_t pid;

	make_alice(f);
	u = open_alice(f);
	pid = lock_holder(f, 60000, &rfd);

	/* timeout 0: one try, no wait */
	t0 = now_sec();
	assert_int_equal(hs_userdir_lock(u, 0), -HS_E_TIMEOUT);
	assert_true(now_sec() - t0 < 0.5);
	/* a deadline of 200 ms: waits all of it, then gives up */
	t0 = now_sec();
	assert_int_equal(hs_userdir_lock(u, 200), -HS_E_TIMEOUT);
	dt = now_sec() - t0;
	assert_true(dt >= 0.199);
	assert_true(dt < 2.0);
	/* the helper's blocking flock sees the same lock */
	assert_int_equal(flock(u, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);

	/* the holder dies: its lock goes with it, ours is taken at once */
	kill(pid, SIGKILL);
	assert_int_equal(wait_status(pid), 1000 + SIGKILL);
	t0 = now_sec();
	assert_int_equal(hs_userdir_lock(u, 5000), 0);
	assert_true(now_sec() - t0 < 1.0);
	close(rfd);

	/* and now we hold it: another open of the directory cannot */
	int u2 = open_alice(f);
	assert_int_equal(hs_userdir_lock(u2, 0), -HS_E_TIMEOUT);
	assert_int_equal(hs_userdir_unlock(u), 0);
	assert_int_equal(hs_userdir_lock(u2, 0), 0);
	/* closing the only fd of the holder releases it too */
	close(u2);
	assert_int_equal(hs_userdir_lock(u, 0), 0);
	close(u);
}

static void test_lock_waits_for_release(void **state)
{
	struct tmp_dirs *f = *state;
	int u, rfd;
	double t0, dt;
	pid_t pid;
	char c;

	make_alice(f);
	u = open_alice(f);
	pid = lock_holder(f, 400, &rfd);
	t0 = now_sec();
	assert_int_equal(hs_userdir_lock(u, 10000), 0);
	dt = now_sec() - t0;
	/* taken only after the holder's hs_userdir_unlock, while it is
	 * still alive with its fd open */
	assert_int_equal(read(rfd, &c, 1), 1);
	assert_int_equal(c, 'U');
	assert_true(dt >= 0.2);
	assert_true(dt < 5.0);
	assert_int_equal(wait_status(pid), 0);
	close(rfd);
	close(u);
}

static void test_lock_bad_fd(void **state)
{
	struct tmp_dirs *f = *state;
	int p;

	make_alice(f);
	assert_int_equal(hs_userdir_lock(-1, 0), -EBADF);
	/* an O_PATH descriptor (what hs_userdir_open_tree falls back to) cannot
	 * carry a flock: an error, not a silent "locked" */
	p = openat(f->dfd, "alice", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(p >= 0);
	assert_int_equal(hs_userdir_lock(p, 1), -EBADF);
	close(p);
}

/* The guess locks: the caller's own (a flock on its root-owned aging
 * file) and, for a caller without a directory, one byte of the target's
 * shadow per caller uid; neither is the writers' lock. */
static void test_guess_locks(void **state)
{
	struct tmp_dirs *f = *state;
	int u, g1, g2, b1, b2, c1;

	make_alice(f);
	u = open_alice(f);
	g1 = hs_userdir_guess_lock(u, 0);
	assert_true(g1 >= 0);
	assert_int_equal(hs_userdir_guess_lock(u, 0), -HS_E_TIMEOUT);
	/* writers never wait for a guess */
	assert_int_equal(hs_userdir_lock(u, 0), 0);
	assert_int_equal(hs_userdir_unlock(u), 0);

	/* one byte per caller: the same caller waits, another does not, and
	 * neither waits for the owner's own lock */
	b1 = hs_userdir_guess_lock_for(u, HS_FILE_SHADOW, UID_BOB, 0);
	assert_true(b1 >= 0);
	assert_int_equal(hs_userdir_guess_lock_for(u, HS_FILE_SHADOW, UID_BOB, 0), -HS_E_TIMEOUT);
	c1 = hs_userdir_guess_lock_for(u, HS_FILE_SHADOW, UID_BOB + 1, 0);
	assert_true(c1 >= 0);
	close(b1);
	b2 = hs_userdir_guess_lock_for(u, HS_FILE_SHADOW, UID_BOB, 0);
	assert_true(b2 >= 0);
	close(b2);
	close(c1);
	close(g1);
	g2 = hs_userdir_guess_lock(u, 0);
	assert_true(g2 >= 0);
	close(g2);

	/* an aging file the user could replace is no lock: a new inode
	 * would be a second one */
	assert_int_equal(fchownat(u, HS_FILE_AGING, UID_ALICE, GID_AUTH, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(hs_userdir_guess_lock(u, 0), -HS_E_OWNER);
	assert_int_equal(unlinkat(u, HS_FILE_AGING, 0), 0);
	assert_int_equal(hs_userdir_guess_lock(u, 0), -ENOENT);
	assert_int_equal(hs_userdir_guess_lock(-1, 0), -EBADF);
	assert_int_equal(hs_userdir_guess_lock_for(-1, HS_FILE_SHADOW, UID_BOB, 0), -EBADF);
	close(u);
}

/* The caller's lock as every program chooses it: their directory's when
 * they have one (whatever file the fallback names), else the byte. */
static void test_guess_lock_caller(void **state)
{
	struct tmp_dirs *f = *state;
	bool own = false;
	int u, g, b;

	make_alice(f);
	u = open_alice(f);
	g = hs_userdir_guess_lock_caller(f->dfd, "alice", UID_ALICE, u, HS_FILE_SHADOW, 0, &own);
	assert_true(g >= 0);
	assert_true(own);
	assert_int_equal(hs_userdir_guess_lock(u, 0), -HS_E_TIMEOUT);
	assert_int_equal(hs_userdir_guess_lock_caller(f->dfd, "alice", UID_ALICE, -1, NULL, 0,
	                                              &own), -HS_E_TIMEOUT);
	close(g);

	/* no directory (bob has none, no name, no tree): one byte per uid */
	b = hs_userdir_guess_lock_caller(f->dfd, "bob", UID_BOB, u, HS_FILE_SHADOW, 0, &own);
	assert_true(b >= 0);
	assert_false(own);
	assert_int_equal(hs_userdir_guess_lock_caller(-1, NULL, UID_BOB, u, HS_FILE_SHADOW, 0, &own),
	                 -HS_E_TIMEOUT);
	assert_false(own);
	/* a directory owned by someone else is not the caller's */
	assert_int_equal(hs_userdir_guess_lock_caller(f->dfd, "alice", UID_BOB, u, HS_FILE_SHADOW, 0,
	                                              &own), -HS_E_TIMEOUT);
	assert_false(own);
	close(b);
	close(u);
}

/* ---- groups ---- */

static void test_layout_gids(void **state)
{
	gid_t tree = 77, auth = 77;
	int r;

	(void)state;
	r = hs_userdir_layout_gids(&tree, &auth);
	if (r == 0) {
		struct group *g = getgrnam(HS_GROUP_TREE);
		assert_non_null(g);
		assert_int_equal(tree, g->gr_gid);
		g = getgrnam(HS_GROUP_AUTH);
		assert_non_null(g);
		assert_int_equal(auth, g->gr_gid);
	} else {
		/* not installed on this host: both lookups must agree */
		assert_int_equal(r, -ENOENT);
		assert_true(getgrnam(HS_GROUP_TREE) == NULL || getgrnam(HS_GROUP_AUTH) == NULL);
	}
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, tmp_dirs_setup, tmp_dirs_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_names),
		cmocka_unit_test(test_path),
		T(test_create_layout),
		T(test_create_refuses_existing),
		T(test_create_invalid_records),
		T(test_create_cleans_up),
		T(test_read_planted),
		T(test_read_formats),
		T(test_aging_fail_closed),
		T(test_write_as_root),
		T(test_write_as_owner),
		T(test_open_checks),
		T(test_remove_hostile),
		T(test_remove_takes_away_first),
		T(test_remove_refuses_symlink),
		T(test_lock_times_out),
		T(test_lock_waits_for_release),
		T(test_lock_bad_fd),
		T(test_guess_locks),
		T(test_guess_lock_caller),
		cmocka_unit_test(test_layout_gids),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_userdir: needs root (chown to test uids)\n");
		return 77;
	}
	/* the temporary directories must be reachable by the unprivileged
	 * child only through the fds it inherits */
	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
