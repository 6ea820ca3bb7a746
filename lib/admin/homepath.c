/* Paths of existing homes: see homepath.h.  (One copy for userdel and
 * usermod, which each had their own.) */
#include "homepath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "util.h"

char *hs_homepath_normalise(const char *dir)
{
	size_t n = strlen(dir);
	_cleanup_free_ char *out = NULL;
	char *o;
	const char *p = dir;

	if (dir[0] != '/')
		return NULL;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	while (*p) {
		const char *start;
		size_t len;

		while (*p == '/')
			p++;
		start = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - start);
		if (len == 0 || (len == 1 && start[0] == '.'))
			continue;
		if (len == 2 && start[0] == '.' && start[1] == '.')
			return NULL;
		*o++ = '/';
		memcpy(o, start, len);
		o += len;
	}
	*o = '\0';
	return TAKE_PTR(out);
}

/* A directory on the way to a home must be safe from everyone but root:
 * not writable by group or others unless sticky (then they cannot rename
 * our entries), and not owned by refused_uid; with root_only, owned by
 * root. */
static bool dir_is_trusted(const struct stat *st, uid_t refused_uid, bool root_only)
{
	return (root_only ? st->st_uid == 0 : st->st_uid != refused_uid) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

int hs_homepath_open_trusted_dir(const char *dir, uid_t refused_uid, bool root_only)
{
	_cleanup_free_ char *resolved = NULL;
	_cleanup_close_ int fd = -1;
	char *comp, *save = NULL;

	/* resolved by the kernel (an administrator's /home -> /srv/home is
	 * fine), then walked again without following anything */
	resolved = realpath(dir[0] ? dir : "/", NULL);
	if (!resolved)
		return -errno;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (comp = strtok_r(resolved, "/", &save); ; comp = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next;

		if (fstat(fd, &st) < 0)
			return -errno;
		if (!dir_is_trusted(&st, refused_uid, root_only))
			return -HS_E_OWNER;
		if (!comp)
			return TAKE_FD(fd);
		next = hs_fileio_open_dir_at(fd, comp, NULL);
		hs_close(fd);
		fd = next;
		if (fd < 0)
			return fd;
	}
}

/* Each directory a component of dir (absolute) is looked up in, as named:
 * "/", "/a", "/a/b", ...  Every symlink among them must be root's: the
 * walk after realpath sees only where links lead, and a user's link in
 * sticky /tmp to a directory of root's (/etc/cron.d, or /) passes every
 * check after it (the kernel refuses to follow it only with
 * fs.protected_symlinks).  With dirs_too, each must also be a directory
 * (stat follows a link as the lookup will) root's and writable by nobody
 * else.  0, -HS_E_OWNER, -ENOTDIR, or another negative error. */
static int check_steps_as_named(const char *dir, bool dirs_too)
{
	_cleanup_free_ char *copy = strdup(dir);

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; ; p++) {
		char c = *p;
		struct stat st;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (p > copy + 1 && lstat(copy, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != 0)
			return -HS_E_OWNER;
		if (dirs_too && stat(p == copy + 1 ? "/" : copy, &st) < 0)
			return -errno;
		*p = c;
		if (dirs_too && !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (dirs_too && !dir_is_trusted(&st, (uid_t)-1, true))
			return -HS_E_OWNER;
		if (!c)
			return 0;
	}
}

int hs_homepath_open_root_dir(const char *dir, char **resolved)
{
	_cleanup_free_ char *real = NULL;
	int fd;

	*resolved = NULL;
	if (dir[0] != '/')
		return -EINVAL;
	fd = check_steps_as_named(dir, true);
	if (fd < 0)
		return fd;
	real = realpath(dir, NULL);
	if (!real)
		return -errno;
	fd = hs_homepath_open_trusted_dir(real, (uid_t)-1, true);
	if (fd >= 0)
		*resolved = TAKE_PTR(real);
	return fd;
}

int hs_homepath_parent_at(const char *path, uid_t uid, const char **last)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *copy = NULL;

	if (!slash || !slash[1])
		return -EINVAL;
	*last = slash + 1;
	copy = strndup(path, (size_t)(slash - path));
	if (!copy)
		return -ENOMEM;
	if (copy[0] == '/') {
		int r = check_steps_as_named(copy, false);

		if (r < 0)
			return r;
	}
	/* root's own home: uid 0 refuses no owner */
	return hs_homepath_open_trusted_dir(copy, uid == 0 ? (uid_t)-1 : uid, false);
}

const char *hs_homepath_parent_error(int r)
{
	return r == -HS_E_OWNER ? "a directory or link above it is not root's or is writable by others"
				: hs_strerror(r);
}
