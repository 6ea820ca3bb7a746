/* Unit tests for the one walker (lib/io/walk.c): the depth limit, symlinks
 * never followed, hard links never re-owned, an entry swapped between the
 * check and the open refused, mount points (a same-file-system bind mount
 * too) never entered or removed, and the take-away / hand-back pair. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>

#include "test_helpers.h"

#define UID_A 12345
#define GID_A 12346
#define UID_B 23456

/* What a walk saw. */
struct seen {
	unsigned visited, refused[4], max_depth;
	char refused_path[256];
	bool chown_all;         /* post: hs_walk_chown(e, UID_A, GID_A) */
	int chown_errors, nlink_refusals;
	bool fd_mismatch;       /* an entry's fd was not what e->st says */
};

static int seen_post(const struct hs_walk_entry *e, void *ctx)
{
	struct seen *s = ctx;
	struct stat st;

	s->visited++;
	if (e->depth > s->max_depth)
		s->max_depth = e->depth;
	if (fstatat(e->fd, "", &st, AT_EMPTY_PATH) < 0 || st.st_ino != e->st.st_ino ||
	    st.st_dev != e->st.st_dev || (st.st_mode & S_IFMT) != (e->st.st_mode & S_IFMT))
		s->fd_mismatch = true;
	if (s->chown_all) {
		int r = hs_walk_chown(e, UID_A, GID_A);

		if (r == -HS_E_NLINK)
			s->nlink_refusals++;
		else if (r < 0)
			s->chown_errors++;
	}
	return 0;
}

static int seen_refused(const struct hs_walk_entry *e, enum hs_walk_refusal why, int err,
			void *ctx)
{
	struct seen *s = ctx;

	assert_true(why >= 1 && why <= 4);
	assert_int_equal(e->fd, -1);
	assert_true(err < 0);
	s->refused[why]++;
	snprintf(s->refused_path, sizeof s->refused_path, "%s", e->path);
	return 0;
}

static const struct hs_walk_ops seen_ops = { .post = seen_post, .refused = seen_refused };

static void make_nested(int dfd, const char *name, int depth)
{
	int fd;

	assert_int_equal(mkdirat(dfd, name, 0700), 0);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < depth; i++) {
		int next;

		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	put_str(fd, "bottom", "x", 0, 0, 0600);
	close(fd);
}

static void test_depth_limit(void **state)
{
	struct tmp_dirs *f = *state;
	struct seen s = { 0 };
	static const struct hs_walk_ops strict = { .post = seen_post };
	char expect[256] = "";

	/* the deepest directory allowed: every level visited */
	make_nested(f->dfd, "ok", HS_WALK_MAX_DEPTH - 1);
	assert_int_equal(hs_walk_at(f->dfd, "ok", &seen_ops, &s), 0);
	assert_int_equal(s.visited, HS_WALK_MAX_DEPTH + 1);     /* dirs + bottom */
	assert_int_equal(s.max_depth, HS_WALK_MAX_DEPTH);       /* the file */
	assert_int_equal(s.refused[HS_WALK_TOO_DEEP], 0);

	/* one more level: that directory is refused, nothing below visited */
	memset(&s, 0, sizeof s);
	make_nested(f->dfd, "deep", HS_WALK_MAX_DEPTH + 30);
	assert_int_equal(hs_walk_at(f->dfd, "deep", &seen_ops, &s), 0);
	assert_int_equal(s.refused[HS_WALK_TOO_DEEP], 1);
	assert_int_equal(s.max_depth, HS_WALK_MAX_DEPTH - 1);
	for (int i = 0; i < HS_WALK_MAX_DEPTH; i++)
		strcat(expect, i ? "/d" : "d");
	assert_string_equal(s.refused_path, expect);
	/* without a refused callback the walk stops with the error */
	assert_int_equal(hs_walk_at(f->dfd, "deep", &strict, &s), -ENAMETOOLONG);
	/* and a removal removes nothing */
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "deep"), -ENAMETOOLONG);
	cut_chain(f->dfd, "deep", 40, "lower");
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "deep"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "lower"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "ok"), 0);
	assert_entries(f->dfd, 0);
}

static void test_symlinks_not_followed(void **state)
{
	struct tmp_dirs *f = *state;
	struct seen s = { .chown_all = true };
	char target[160];
	struct stat st;
	int t;

	put_str(f->ofd, "precious", "keep\n", 0, 0, 0644);
	assert_int_equal(mkdirat(f->ofd, "odir", 0755), 0);
	put_str(f->ofd, "odir/inner", "keep\n", 0, 0, 0644);

	assert_int_equal(mkdirat(f->dfd, "tree", 0700), 0);
	t = openat(f->dfd, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	snprintf(target, sizeof target, "%s/precious", f->outside);
	assert_int_equal(symlinkat(target, t, "to-file"), 0);
	snprintf(target, sizeof target, "%s/odir", f->outside);
	assert_int_equal(symlinkat(target, t, "to-dir"), 0);
	assert_int_equal(symlinkat("/", t, "to-root"), 0);
	put_str(t, "own", "x", 0, 0, 0600);

	assert_int_equal(hs_walk_at(f->dfd, "tree", &seen_ops, &s), 0);
	/* tree, three links, own: nothing behind a link */
	assert_int_equal(s.visited, 5);
	assert_int_equal(s.chown_errors, 0);
	assert_false(s.fd_mismatch);
	/* the links themselves were re-owned, never their targets */
	assert_int_equal(fstatat(t, "to-file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(fstatat(t, "to-dir", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(fstatat(f->ofd, "precious", &st, 0), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(fstatat(f->ofd, "odir", &st, 0), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(fstatat(f->ofd, "odir/inner", &st, 0), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(stat("/", &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(fstatat(t, "own", &st, 0), 0);
	assert_int_equal(st.st_uid, UID_A);

	/* a symlink as the top is visited as itself */
	memset(&s, 0, sizeof s);
	assert_int_equal(hs_walk_at(t, "to-dir", &seen_ops, &s), 0);
	assert_int_equal(s.visited, 1);
	close(t);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "tree"), 0);
	assert_string_equal(slurp(f->ofd, "precious"), "keep\n");
	assert_string_equal(slurp(f->ofd, "odir/inner"), "keep\n");
}

static void test_hard_link_not_chowned(void **state)
{
	struct tmp_dirs *f = *state;
	struct seen s = { .chown_all = true };
	struct stat st;
	int t;

	/* another user's file, linked into the tree */
	put_str(f->ofd, "theirs", "theirs\n", UID_B, UID_B, 0640);
	assert_int_equal(mkdirat(f->dfd, "tree", 0700), 0);
	t = openat(f->dfd, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	assert_int_equal(linkat(f->ofd, "theirs", t, "link", 0), 0);
	/* two names for one file of the tree's own: also left alone */
	put_str(t, "twice", "x", 0, 0, 0600);
	assert_int_equal(linkat(t, "twice", t, "twice2", 0), 0);
	put_str(t, "once", "x", 0, 0, 0600);

	assert_int_equal(hs_walk_at(f->dfd, "tree", &seen_ops, &s), 0);
	assert_int_equal(s.nlink_refusals, 3);
	assert_int_equal(s.chown_errors, 0);
	assert_int_equal(fstatat(f->ofd, "theirs", &st, 0), 0);
	assert_int_equal(st.st_uid, UID_B);
	assert_int_equal(st.st_gid, UID_B);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(fstatat(t, "twice", &st, 0), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(fstatat(t, "once", &st, 0), 0);
	assert_int_equal(st.st_uid, UID_A);
	/* directories have several links by nature and are re-owned */
	assert_int_equal(fstat(t, &st), 0);
	assert_int_equal(st.st_uid, UID_A);
	close(t);
	/* removal takes the link only */
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "tree"), 0);
	assert_string_equal(slurp(f->ofd, "theirs"), "theirs\n");
	assert_int_equal(fstatat(f->ofd, "theirs", &st, 0), 0);
	assert_int_equal(st.st_nlink, 1);
}

/* A swapper that keeps exchanging a file and a directory, and two files,
 * as a user with an fd into the tree could. */
struct swapper {
	int fd;
	atomic_bool stop;
};

static void *swap_loop(void *arg)
{
	struct swapper *sw = arg;

	while (!atomic_load(&sw->stop)) {
		(void)syscall(SYS_renameat2, sw->fd, "a", sw->fd, "b", RENAME_EXCHANGE);
		(void)syscall(SYS_renameat2, sw->fd, "c", sw->fd, "a", RENAME_EXCHANGE);
	}
	return NULL;
}

static void test_swap_refused(void **state)
{
	struct tmp_dirs *f = *state;
	struct swapper sw;
	struct seen s = { 0 };
	struct timespec t0, now;
	pthread_t th;
	unsigned walks = 0;
	int t;

	assert_int_equal(mkdirat(f->dfd, "tree", 0700), 0);
	t = openat(f->dfd, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	put_str(t, "a", "a", 0, 0, 0600);
	assert_int_equal(mkdirat(t, "b", 0700), 0);
	put_str(t, "c", "c", 0, 0, 0600);
	sw.fd = t;
	atomic_init(&sw.stop, false);
	assert_int_equal(pthread_create(&th, NULL, swap_loop, &sw), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		assert_int_equal(hs_walk_at(f->dfd, "tree", &seen_ops, &s), 0);
		walks++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (s.refused[HS_WALK_SWAPPED] < 5 && now.tv_sec - t0.tv_sec < 20);
	atomic_store(&sw.stop, true);
	pthread_join(th, NULL);
	close(t);
	/* whatever a visitor got was what had been checked */
	assert_false(s.fd_mismatch);
	if (s.refused[HS_WALK_SWAPPED] == 0)
		fprintf(stderr, "no swap caught in %u walks\n", walks);
	assert_true(s.refused[HS_WALK_SWAPPED] > 0);
	assert_int_equal(s.refused[HS_WALK_MOUNT], 0);
}

/* Same-file-system bind mounts inside the tree (a directory and a file),
 * made in a private mount namespace of a child. */
static int bind_child(void *arg)
{
	struct tmp_dirs *f = arg;
	static const struct hs_walk_ops strict = { .post = seen_post };
	struct seen s = { .chown_all = true };
	char src[160], dst[160];
	struct stat st;
	char *where = NULL;
	int r;

	if (unshare(CLONE_NEWNS) < 0)
		return 77;
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	/* fds opened before the unshare look up names in the old
	 * namespace's mounts, which never see ours: open again */
	f->dfd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f->ofd = open(f->outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dfd < 0 || f->ofd < 0)
		return 79;
	if (mkdirat(f->ofd, "data", 0755) < 0 || mkdirat(f->dfd, "tree", 0700) < 0 ||
	    mkdirat(f->dfd, "tree/mnt", 0700) < 0)
		return 80;
	put_str(f->ofd, "data/keep", "keep\n", 0, 0, 0644);
	put_str(f->ofd, "file", "keep\n", 0, 0, 0644);
	put_str(f->dfd, "tree/own", "x", 0, 0, 0600);
	put_str(f->dfd, "tree/bf", "", 0, 0, 0600);
	snprintf(src, sizeof src, "%s/data", f->outside);
	snprintf(dst, sizeof dst, "%s/tree/mnt", f->path);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return 77;
	snprintf(src, sizeof src, "%s/file", f->outside);
	snprintf(dst, sizeof dst, "%s/tree/bf", f->path);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return 77;

	r = hs_walk_at(f->dfd, "tree", &seen_ops, &s);
	if (r != 0 || s.refused[HS_WALK_MOUNT] != 2 || s.chown_errors) {
		fprintf(stderr, "walk %d, %u mount points, %d chown errors\n", r,
			s.refused[HS_WALK_MOUNT], s.chown_errors);
		return 81;
	}
	/* nothing behind the mounts was re-owned; the rest was */
	if (fstatat(f->ofd, "data/keep", &st, 0) < 0 || st.st_uid != 0)
		return 82;
	if (fstatat(f->ofd, "data", &st, 0) < 0 || st.st_uid != 0)
		return 83;
	if (fstatat(f->ofd, "file", &st, 0) < 0 || st.st_uid != 0)
		return 84;
	if (fstatat(f->dfd, "tree/own", &st, 0) < 0 || st.st_uid != UID_A)
		return 85;
	if (hs_walk_at(f->dfd, "tree", &strict, &s) != -EXDEV)
		return 86;
	/* the removal is refused before anything goes */
	r = hs_walk_remove_at(f->dfd, "tree", NULL, &where);
	if (r != -EXDEV || !where || (strcmp(where, "mnt") != 0 && strcmp(where, "bf") != 0))
		return 87;
	free(where);
	if (fstatat(f->dfd, "tree/own", &st, 0) < 0 || fstatat(f->ofd, "data/keep", &st, 0) < 0 ||
	    fstatat(f->ofd, "file", &st, 0) < 0)
		return 88;
	/* the top itself a mount point: refused as well */
	snprintf(src, sizeof src, "%s/data", f->outside);
	snprintf(dst, sizeof dst, "%s/tree/mnt", f->path);
	if (umount(dst) < 0)
		return 89;
	if (hs_walk_at(f->ofd, "data", &strict, &s) != 0)
		return 90;
	if (mkdirat(f->dfd, "top", 0700) < 0)
		return 91;
	snprintf(dst, sizeof dst, "%s/top", f->path);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return 92;
	if (hs_walk_remove_tree_at(f->dfd, "top") != -EXDEV)
		return 93;
	if (fstatat(f->ofd, "data/keep", &st, 0) < 0)
		return 94;
	return 0;
}

static void test_bind_mount_not_entered(void **state)
{
	struct tmp_dirs *f = *state;
	int rc = in_child(bind_child, f);

	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
	/* the mounts died with the child's namespace */
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "tree"), 0);
	assert_int_equal(hs_walk_remove_tree_at(f->dfd, "top"), 0);
	assert_string_equal(slurp(f->ofd, "data/keep"), "keep\n");
}

static void test_below_and_hand_back(void **state)
{
	struct tmp_dirs *f = *state;
	struct seen s = { .chown_all = true };
	struct stat saved, st;
	int t;

	assert_int_equal(mkdirat(f->dfd, "home", 0700), 0);
	t = openat(f->dfd, "home", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(t >= 0);
	assert_int_equal(fchown(t, UID_B, UID_B), 0);
	assert_int_equal(fchmod(t, 02750), 0);
	put_str(t, "f", "x", UID_B, UID_B, 0600);

	assert_int_equal(hs_walk_take_away(t, &saved), 0);
	assert_int_equal(fstat(t, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* below: the top itself is not visited */
	assert_int_equal(hs_walk_below(t, &seen_ops, &s), 0);
	assert_int_equal(s.visited, 1);
	assert_int_equal(fstat(t, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(hs_walk_hand_back(t, UID_A, saved.st_gid, saved.st_mode), 0);
	assert_int_equal(fstat(t, &st), 0);
	assert_int_equal(st.st_uid, UID_A);
	assert_int_equal(st.st_gid, UID_B);
	assert_int_equal(st.st_mode & 07777, 02750);
	assert_int_equal(fstatat(t, "f", &st, 0), 0);
	assert_int_equal(st.st_uid, UID_A);
	close(t);
	assert_int_equal(hs_walk_at(f->dfd, "missing", &seen_ops, &s), -ENOENT);
	assert_int_equal(hs_walk_at(f->dfd, "a/b", &seen_ops, &s), -EINVAL);
	assert_int_equal(hs_walk_at(f->dfd, "..", &seen_ops, &s), -EINVAL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, tmp_dirs_setup, tmp_dirs_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_depth_limit),
		T(test_symlinks_not_followed),
		T(test_hard_link_not_chowned),
		T(test_swap_refused),
		T(test_bind_mount_not_entered),
		T(test_below_and_hand_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
