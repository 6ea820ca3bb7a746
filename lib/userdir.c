/* The per-user tree /etc/hardened-shadow/USER/{shadow,aging,shell}
 * (DESIGN.md sections 2 and 3).  The directory and everything in it
 * belong to the user, who may have planted anything there; every read
 * goes through hs_read_trusted_at, every write through hs_replace_file_at,
 * and restructuring first takes the directory away from the user. */
#include "userdir.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "layout.h"
#include "names.h"
#include "util.h"

#define HS_TEMP_RANDOM_LEN 12
#define HS_TEMP_TRIES 16
/* Poll interval of hs_userdir_lock: short next to a password change or a
 * helper's 2 s failure delay, long enough not to spin. */
#define HS_LOCK_POLL_NSEC (20 * 1000 * 1000L)

bool hs_tree_entry_is_user(const char *name)
{
	/* '.' and ':' start reserved names (temporary directories); the
	 * name rules already exclude both, the explicit test keeps that
	 * true if the rules are ever relaxed */
	if (!name || name[0] == '.' || name[0] == ':')
		return false;
	return hs_user_name_valid(name);
}

const char *hs_userdir_path(char *buf, size_t size, const char *user, const char *file)
{
	if (!buf || size == 0)
		return "";
	if (!user)
		snprintf(buf, size, "%s", HS_TREE_DIR);
	else if (!file)
		snprintf(buf, size, "%s/%s", HS_TREE_DIR, user);
	else
		snprintf(buf, size, "%s/%s/%s", HS_TREE_DIR, user, file);
	return buf;
}

int hs_tree_open(void)
{
	struct stat st;
	int fd, r;

	fd = open(HS_TREE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* The self-service tools hold the tree group, which may traverse
	 * (0710) but not list: an O_PATH descriptor is all openat needs. */
	if (fd < 0 && errno == EACCES)
		fd = open(HS_TREE_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR || errno == ELOOP ? -HS_E_NOTDIR : -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		hs_close(fd);
		return r;
	}
	/* Whoever can write the tree can plant or swap user directories
	 * (including for root): it must be root's and writable by root
	 * only. */
	if (st.st_uid != 0) {
		hs_close(fd);
		return -HS_E_OWNER;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		hs_close(fd);
		return -HS_E_MODE;
	}
	return fd;
}

int hs_userdir_open(int treefd, const char *user, uid_t expected_uid, uid_t *owner_out)
{
	struct stat st;
	int fd;

	/* before any system call: "..", "a/b", "-x", "" and reserved
	 * names never reach openat */
	if (!hs_tree_entry_is_user(user))
		return -HS_E_NAME;
	fd = hs_open_dir_at(treefd, user, &st);
	if (fd < 0)
		return fd;
	if (expected_uid != HS_ANY_UID && st.st_uid != expected_uid) {
		hs_close(fd);
		return -HS_E_OWNER;
	}
	if (owner_out)
		*owner_out = st.st_uid;
	return fd;
}

/* Turn the content of a per-user file into a single line: it must be one
 * line ending in exactly one '\n' (optional when newline_optional), with
 * no other newline and no NUL byte (a NUL would silently cut the line
 * short for the parser). */
static int content_to_line(char *buf, size_t len, bool newline_optional)
{
	int r = 0;

	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if (!newline_optional)
		r = -HS_E_FORMAT;
	if (r == 0 && (memchr(buf, '\n', len) || strlen(buf) != len))
		r = -HS_E_FORMAT;
	if (r < 0)
		hs_wipe(buf, len);
	return r;
}

/* Read one per-user file (udirfd/file, or the absolute path when udirfd
 * is -1) into buf as a single line. */
static int read_line(int udirfd, const char *file, uid_t owner, bool newline_optional,
		     char *buf, size_t bufsize)
{
	const struct hs_file_expect ex = {
		.uid = owner, .gid = HS_ANY_GID, .max_size = HS_USERFILE_MAX,
	};
	size_t len;
	int r;

	if (!buf || bufsize < HS_USERFILE_MAX + 2)
		return -EINVAL;
	if (udirfd == -1)
		r = hs_read_trusted_path(file, &ex, buf, bufsize, &len, NULL);
	else
		r = hs_read_trusted_at(udirfd, file, &ex, buf, bufsize, &len, NULL);
	if (r < 0)
		return r;
	return content_to_line(buf, len, newline_optional);
}

/* aging is root-owned: limits and expiry are the administrator's
 * decision, a file the user made (or could rewrite) is worthless.  On any
 * error fail closed: the user owns the directory and can delete (or
 * replace) aging at will, so "no aging file = no limits" would let anyone
 * escape an expiry date. */
static int aging_or_expired(int udirfd, const char *file, struct hs_aging *out)
{
	char buf[HS_USERFILE_MAX + 2];
	struct hs_aging a;
	int r;

	r = read_line(udirfd, file, 0, false, buf, sizeof buf);
	if (r == 0)
		r = hs_aging_parse(buf, &a);
	if (r < 0) {
		hs_aging_init_unset(out);
		out->expire = 1;
		return r;
	}
	*out = a;
	return 0;
}

int hs_userdir_lookup(const char *user, char *buf, size_t bufsize, struct hs_shadow *shadow,
		      struct hs_aging *aging, int *aging_err)
{
	/* "/etc/hardened-shadow/" + name + "/shadow": built with memcpy, not
	 * snprintf, because this is the NSS module's hot path. */
	char path[sizeof(HS_TREE_DIR) + HS_NAME_MAX + sizeof("/" HS_FILE_SHADOW) + 1];
	size_t ulen, dlen;
	int r;

	if (!hs_tree_entry_is_user(user))
		return -HS_E_NAME;
	if (!shadow || !aging)
		return -EINVAL;
	ulen = strlen(user);  /* <= HS_NAME_MAX: the name is valid */
	memcpy(path, HS_TREE_DIR "/", sizeof(HS_TREE_DIR));
	memcpy(path + sizeof(HS_TREE_DIR), user, ulen);
	dlen = sizeof(HS_TREE_DIR) + ulen;
	memcpy(path + dlen, "/" HS_FILE_SHADOW, sizeof("/" HS_FILE_SHADOW));
	r = read_line(-1, path, HS_ANY_UID, false, buf, bufsize);
	if (r < 0)
		return r;
	r = hs_shadow_parse(buf, shadow);
	if (r < 0) {
		hs_wipe(buf, bufsize);
		return r;
	}
	memcpy(path + dlen, "/" HS_FILE_AGING, sizeof("/" HS_FILE_AGING));
	r = aging_or_expired(-1, path, aging);
	if (aging_err)
		*aging_err = r;
	return 0;
}

int hs_userdir_read_shadow(int udirfd, uid_t owner, char *buf, size_t bufsize,
			   struct hs_shadow *out)
{
	int r;

	if (!out || owner == HS_ANY_UID)
		return -EINVAL;
	r = read_line(udirfd, HS_FILE_SHADOW, owner, false, buf, bufsize);
	if (r < 0)
		return r;
	r = hs_shadow_parse(buf, out);
	if (r < 0)
		hs_wipe(buf, bufsize);
	return r;
}

int hs_userdir_read_aging(int udirfd, struct hs_aging *out)
{
	struct hs_aging a;
	int r;

	if (!out || udirfd < 0)
		return -EINVAL;
	r = aging_or_expired(udirfd, HS_FILE_AGING, &a);
	if (r == 0)
		*out = a;
	return r;
}

int hs_userdir_aging_or_expired(int udirfd, struct hs_aging *out)
{
	if (!out || udirfd < 0)
		return -EINVAL;
	return aging_or_expired(udirfd, HS_FILE_AGING, out);
}

int hs_userdir_read_shell(int udirfd, uid_t owner, char *buf, size_t bufsize,
			  const char **shell_out)
{
	int r;

	if (!shell_out || owner == HS_ANY_UID)
		return -EINVAL;
	/* the 2012 code wrote shell without a trailing newline */
	r = read_line(udirfd, HS_FILE_SHELL, owner, true, buf, bufsize);
	if (r < 0)
		return r;
	return hs_shell_parse(buf, shell_out);
}

/* Replace one file with a formatted line; the line is wiped and freed. */
static int write_line(int udirfd, const char *file, char *line, uid_t uid, gid_t gid,
		      mode_t mode)
{
	size_t len = strlen(line);
	int r;

	/* what we write must be readable back */
	if (len > HS_USERFILE_MAX)
		r = -HS_E_TOOBIG;
	else
		r = hs_replace_file_at(udirfd, file, line, len, uid, gid, mode);
	hs_wipe(line, len);
	free(line);
	return r;
}

int hs_userdir_write_shadow(int udirfd, uid_t owner, gid_t auth_gid, const struct hs_shadow *r)
{
	char *line = NULL;
	int e;

	e = hs_shadow_format(r, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHADOW, line, owner, auth_gid, HS_SHADOW_MODE);
}

int hs_userdir_write_shell(int udirfd, uid_t owner, gid_t auth_gid, const char *shell)
{
	char *line = NULL;
	int e;

	e = hs_shell_format(shell, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_SHELL, line, owner, auth_gid, HS_SHELL_MODE);
}

int hs_userdir_write_aging(int udirfd, gid_t auth_gid, const struct hs_aging *r)
{
	char *line = NULL;
	int e;

	e = hs_aging_format(r, &line);
	if (e < 0)
		return e;
	return write_line(udirfd, HS_FILE_AGING, line, 0, auth_gid, HS_AGING_MODE);
}

static bool deadline_passed(const struct timespec *deadline)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return true;
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

int hs_userdir_lock(int udirfd, unsigned timeout_sec)
{
	struct timespec deadline;

	if (udirfd < 0)
		return -EBADF;
	if (clock_gettime(CLOCK_MONOTONIC, &deadline) < 0)
		return -errno;
	deadline.tv_sec += timeout_sec;
	/* Polling, not a blocking flock under alarm(): this runs inside the
	 * PAM module, in processes whose signal handlers and timers are not
	 * ours to touch. */
	for (;;) {
		struct timespec pause = { .tv_sec = 0, .tv_nsec = HS_LOCK_POLL_NSEC };

		if (flock(udirfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (deadline_passed(&deadline))
			return -HS_E_TIMEOUT;
		/* an interrupted sleep only makes the next try earlier */
		(void)nanosleep(&pause, NULL);
	}
}

int hs_userdir_unlock(int udirfd)
{
	if (flock(udirfd, LOCK_UN) < 0)
		return -errno;
	return 0;
}

/* Fill tmp with the reserved name ".TAG.USER.XXXXXXXXXXXX".  The leading
 * '.' keeps it out of enumeration and out of reach of any name a tool
 * accepts; the user name tells an administrator what a leftover was. */
static int reserved_name(char *tmp, size_t size, const char *tag, const char *user)
{
	char rnd[HS_TEMP_RANDOM_LEN + 1];
	int n, r;

	r = hs_random_alnum(rnd, HS_TEMP_RANDOM_LEN);
	if (r < 0)
		return r;
	rnd[HS_TEMP_RANDOM_LEN] = '\0';
	n = snprintf(tmp, size, ".%s.%s.%s", tag, user, rnd);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int write_new_files(int dfd, uid_t uid, gid_t auth_gid, char *shadow_line,
			   char *aging_line, char *shell_line)
{
	int r;

	r = hs_replace_file_at(dfd, HS_FILE_SHADOW, shadow_line, strlen(shadow_line),
			       uid, auth_gid, HS_SHADOW_MODE);
	if (r < 0)
		return r;
	r = hs_replace_file_at(dfd, HS_FILE_SHELL, shell_line, strlen(shell_line),
			       uid, auth_gid, HS_SHELL_MODE);
	if (r < 0)
		return r;
	return hs_replace_file_at(dfd, HS_FILE_AGING, aging_line, strlen(aging_line),
				  0, auth_gid, HS_AGING_MODE);
}

int hs_userdir_create(int treefd, const char *user, uid_t uid, gid_t auth_gid,
		      const struct hs_shadow *shadow, const struct hs_aging *aging,
		      const char *shell)
{
	char *shadow_line = NULL, *aging_line = NULL, *shell_line = NULL;
	char tmp[NAME_MAX + 1];
	struct stat st;
	int dfd = -1, r;
	bool made = false;

	if (!hs_tree_entry_is_user(user))
		return -HS_E_NAME;
	if (!shadow || !aging || !shell || uid == HS_ANY_UID || auth_gid == HS_ANY_GID)
		return -EINVAL;
	if (geteuid() != 0)
		return -EPERM;

	/* validate and format everything before touching the disk */
	r = hs_shadow_format(shadow, &shadow_line);
	if (r < 0)
		goto out;
	r = hs_aging_format(aging, &aging_line);
	if (r < 0)
		goto out;
	r = hs_shell_format(shell, &shell_line);
	if (r < 0)
		goto out;
	if (strlen(shadow_line) > HS_USERFILE_MAX || strlen(shell_line) > HS_USERFILE_MAX ||
	    strlen(aging_line) > HS_USERFILE_MAX) {
		r = -HS_E_TOOBIG;
		goto out;
	}

	for (int tries = 0; ; tries++) {
		r = reserved_name(tmp, sizeof tmp, "new", user);
		if (r < 0)
			goto out;
		if (mkdirat(treefd, tmp, 0700) == 0)
			break;
		if (errno != EEXIST || tries >= HS_TEMP_TRIES) {
			r = -errno;
			goto out;
		}
	}
	made = true;

	dfd = hs_open_dir_at(treefd, tmp, &st);
	if (dfd < 0) {
		r = dfd;
		goto out;
	}
	/* Built as root:root 0700 whatever the tree's group, setgid bit or
	 * our umask would give: nobody but root sees it half-made. */
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0700) < 0) {
		r = -errno;
		goto out;
	}

	r = write_new_files(dfd, uid, auth_gid, shadow_line, aging_line, shell_line);
	if (r < 0)
		goto out;

	/* Hand it over: chown first, because chown may clear the set-id
	 * bits; then 02710 so new files inherit the auth group. */
	if (fchown(dfd, uid, auth_gid) < 0 || fchmod(dfd, HS_USERDIR_MODE) < 0) {
		r = -errno;
		goto out;
	}
	if (fsync(dfd) < 0) {
		r = -errno;
		goto out;
	}
	/* RENAME_NOREPLACE: an existing directory for this user (or
	 * anything else by that name) is never replaced */
	if (renameat2(treefd, tmp, treefd, user, RENAME_NOREPLACE) < 0) {
		r = -errno;
		goto out;
	}
	made = false;
	if (fsync(treefd) < 0 && errno != EINVAL) {
		r = -errno;
		goto out;
	}
	r = 0;

out:
	hs_close(dfd);
	if (made)
		(void)hs_remove_tree_at(treefd, tmp);
	hs_free_secret(shadow_line);
	free(aging_line);
	free(shell_line);
	return r;
}

int hs_userdir_remove(int treefd, const char *user)
{
	char tmp[NAME_MAX + 1];
	struct stat st, moved;
	_cleanup_close_ int dfd = -1;
	int r;

	if (!hs_tree_entry_is_user(user))
		return -HS_E_NAME;
	if (geteuid() != 0)
		return -EPERM;

	dfd = hs_open_dir_at(treefd, user, &st);
	if (dfd < 0)
		return dfd;
	/* Take it away from the user before working on it: from now on
	 * no process of theirs can add, swap or rename anything in it
	 * (except through an fd to a subdirectory opened earlier, which
	 * hs_remove_tree_at copes with). */
	if (fchown(dfd, 0, 0) < 0 || fchmod(dfd, 0700) < 0)
		return -errno;

	for (int tries = 0; ; tries++) {
		r = reserved_name(tmp, sizeof tmp, "del", user);
		if (r < 0)
			return r;
		if (renameat2(treefd, user, treefd, tmp, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST || tries >= HS_TEMP_TRIES)
			return -errno;
	}
	/* Only root writes the tree, but make sure what we renamed is the
	 * directory we took away, not something swapped in meanwhile. */
	if (fstatat(treefd, tmp, &moved, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (moved.st_dev != st.st_dev || moved.st_ino != st.st_ino)
		return -ESTALE;
	/* the user is gone from the tree as soon as this is durable */
	if (fsync(treefd) < 0 && errno != EINVAL)
		return -errno;

	r = hs_remove_tree_at(treefd, tmp);
	if (r < 0)
		return r;
	if (fsync(treefd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int hs_layout_gids(gid_t *tree_gid, gid_t *auth_gid)
{
	const char *names[2] = { HS_GROUP_TREE, HS_GROUP_AUTH };
	gid_t *outs[2] = { tree_gid, auth_gid };
	size_t bufsize = 4096;
	char *buf = NULL;
	int r = 0;

	for (int i = 0; i < 2 && r == 0; i++) {
		struct group grp, *res = NULL;
		int e;

		if (!outs[i])
			continue;
		for (;;) {
			if (!buf) {
				buf = malloc(bufsize);
				if (!buf)
					return -ENOMEM;
			}
			e = getgrnam_r(names[i], &grp, buf, bufsize, &res);
			if (e != ERANGE)
				break;
			/* a group with many members: grow, within reason */
			free(buf);
			buf = NULL;
			if (bufsize > 16u * 1024 * 1024) {
				e = ERANGE;
				break;
			}
			bufsize *= 2;
		}
		if (e != 0)
			r = -e;
		else if (!res)
			r = -ENOENT;
		else
			*outs[i] = res->gr_gid;
	}
	free(buf);
	return r;
}
