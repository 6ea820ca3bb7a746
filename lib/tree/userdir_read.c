/* The per-user tree /etc/hardened-shadow/USER/{shadow,aging,shell}
 * (DESIGN.md sections 2 and 3).  The directory and everything in it
 * belong to the user, who may have planted anything there; every read
 * goes through hs_fileio_read_trusted_at, every write through hs_fileio_replace_at,
 * and restructuring first takes the directory away from the user. */
#include "userdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account.h"
#include "fileio.h"
#include "layout.h"
#include "names.h"
#include "util.h"


bool hs_userdir_entry_is_user(const char *name)
{
	/* '.' and ':' start reserved names (temporary directories); the
	 * name rules already exclude both, the explicit test keeps that
	 * true if the rules are ever relaxed */
	if (!name || name[0] == '.' || name[0] == ':')
		return false;
	return hs_names_user_valid(name);
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

int hs_userdir_open_tree(void)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(HS_TREE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* The self-service tools hold the tree group, which may traverse
	 * (0710) but not list: an O_PATH descriptor is all openat needs. */
	if (fd < 0 && errno == EACCES)
		fd = open(HS_TREE_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR || errno == ELOOP ? -HS_E_NOTDIR : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* Whoever can write the tree can plant or swap user directories
	 * (including for root): it must be root's and writable by root
	 * only. */
	if (st.st_uid != 0)
		return -HS_E_OWNER;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return -HS_E_MODE;
	return TAKE_FD(fd);
}

int hs_userdir_open(int treefd, const char *user, uid_t expected_uid, uid_t *owner_out)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* before any system call: "..", "a/b", "-x", "" and reserved
	 * names never reach openat */
	if (!hs_userdir_entry_is_user(user))
		return -HS_E_NAME;
	fd = hs_fileio_open_dir_at(treefd, user, &st);
	if (fd < 0)
		return fd;
	if (expected_uid != HS_ANY_UID && st.st_uid != expected_uid)
		return -HS_E_OWNER;
	if (owner_out)
		*owner_out = st.st_uid;
	return TAKE_FD(fd);
}

/* A NUL would silently cut the line short for the parser. */
int hs_userdir_content_to_line(char *buf, size_t len, bool newline_optional)
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
		r = hs_fileio_read_trusted_path(file, &ex, buf, bufsize, &len, NULL);
	else
		r = hs_fileio_read_trusted_at(udirfd, file, &ex, buf, bufsize, &len, NULL);
	if (r < 0)
		return r;
	return hs_userdir_content_to_line(buf, len, newline_optional);
}

/* aging is root-owned: limits and expiry are the administrator's
 * decision, a file the user made (or could rewrite) is worthless.  On any
 * error fail closed: the user owns the directory and can delete (or
 * replace) aging at will, so "no aging file = no limits" would let anyone
 * escape an expiry date. */
static int aging_or_expired(int udirfd, const char *file, struct hs_aging *out)
{
	char buf[HS_USERFILE_MAX + 2];
	int r;

	r = read_line(udirfd, file, 0, false, buf, sizeof buf);
	if (r == 0)
		r = hs_records_aging_parse(buf, out);
	if (r < 0) {
		hs_records_aging_init_unset(out);
		out->expire = 1;
	}
	return r;
}

int hs_userdir_lookup(const char *user, char *buf, size_t bufsize, struct hs_shadow *shadow,
		      struct hs_aging *aging, int *aging_err)
{
	/* "/etc/hardened-shadow/" + name + "/shadow": built with memcpy, not
	 * snprintf, because this is the NSS module's hot path. */
	char path[HS_PATHBUF_USER];
	size_t ulen, dlen;
	int r;

	if (!hs_userdir_entry_is_user(user))
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
	r = hs_records_shadow_parse(buf, shadow);
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
	r = hs_records_shadow_parse(buf, out);
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
	return hs_records_shell_parse(buf, shell_out);
}

int hs_userdir_layout_gids(gid_t *tree_gid, gid_t *auth_gid)
{
	const char *names[2] = { HS_GROUP_TREE, HS_GROUP_AUTH };
	gid_t *outs[2] = { tree_gid, auth_gid };

	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *buf = NULL;
		struct group grp;
		int r;

		if (!outs[i])
			continue;
		r = hs_account_getgrnam(names[i], &grp, &buf);
		if (r < 0)
			return r;
		*outs[i] = grp.gr_gid;
	}
	return 0;
}
