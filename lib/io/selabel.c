/* SELinux creation contexts (see selabel.h). */
#include "selabel.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "util.h"

/* A directory made under a temporary name: what is inside tmp is
 * labelled as if below final.  tmp is itself written with the aliases
 * made before it applied (a user's directory inside pwconv's new tree),
 * so they are applied oldest first; real is where it is, to drop the
 * pair once it is renamed.  Tools build a few at a time (a tree
 * directory, a home); the oldest pair goes if the table is full. */
struct alias {
	char *tmp;
	char *final;
	char *real;
};
static struct alias aliases[8];
static size_t n_aliases;

static struct selabel_handle *handle;
static int active = -1;          /* unknown until first asked */
static bool context_set;

/* libselinux, loaded the first time it is needed.  Linked, it cost every
 * administration tool the loading of it and of libpcre2 at each start
 * (about a tenth of a useradd), on the many systems that run no SELinux.
 * Its functions are looked up in the global scope, so a preloaded
 * library that stands in for them (the tests' shim) comes first, as it
 * would over a linked libselinux. */
static struct {
	bool loaded;
	int (*is_selinux_enabled)(void);
	int (*security_getenforce)(void);
	struct selabel_handle *(*selabel_open)(unsigned int, const struct selinux_opt *,
					       unsigned int);
	void (*selabel_close)(struct selabel_handle *);
	int (*selabel_lookup)(struct selabel_handle *, char **, const char *, int);
	int (*setfscreatecon)(const char *);
	void (*freecon)(char *);
} se;

static bool resolve(void *fn_ptr, const char *name)
{
	void *sym = dlsym(RTLD_DEFAULT, name);

	memcpy(fn_ptr, &sym, sizeof(sym));      /* POSIX: object to function pointer */
	return sym != NULL;
}

static int selinux_load(void)
{
	if (se.loaded)
		return 0;
	/* the installed library, by its soname: a setuid program's loader
	 * searches only the system directories */
	if (!dlopen("libselinux.so.1", RTLD_NOW | RTLD_GLOBAL))
		return -ENOSYS;
	if (!resolve(&se.is_selinux_enabled, "is_selinux_enabled") ||
	    !resolve(&se.security_getenforce, "security_getenforce") ||
	    !resolve(&se.selabel_open, "selabel_open") ||
	    !resolve(&se.selabel_close, "selabel_close") ||
	    !resolve(&se.selabel_lookup, "selabel_lookup") ||
	    !resolve(&se.setfscreatecon, "setfscreatecon") || !resolve(&se.freecon, "freecon"))
		return -ENOSYS;
	se.loaded = true;
	return 0;
}

/* SELinux runs only where hs_confine_selinux_may_be_active says it may
 * (without loading the library), and then where the library says so. */
static bool selabel_active(void)
{
	if (active < 0)
		active = hs_confine_selinux_may_be_active() && selinux_load() == 0 &&
			 se.is_selinux_enabled() > 0;
	return active > 0;
}

/* The path dirfd stands for, with pending directories' temporary names
 * replaced by their final ones (map) or as it is. */
static int dir_path(int dirfd, bool map, char **out)
{
	char proc[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
	n = dirfd == AT_FDCWD ? (getcwd(buf, sizeof buf) ? (ssize_t)strlen(buf) : -1)
			      : readlink(proc, buf, sizeof buf - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof buf - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	for (size_t i = 0; map && i < n_aliases; i++) {
		size_t len = strlen(aliases[i].tmp);
		char rest[PATH_MAX];

		if (strncmp(buf, aliases[i].tmp, len) != 0 || (buf[len] && buf[len] != '/'))
			continue;
		snprintf(rest, sizeof rest, "%s", buf + len);
		if ((size_t)snprintf(buf, sizeof buf, "%s%s", aliases[i].final, rest) >= sizeof buf)
			return -ENAMETOOLONG;
	}
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

static int final_path(int dirfd, const char *final, bool map, char **out)
{
	_cleanup_free_ char *dir = NULL;
	int r;

	if (final[0] == '/') {
		*out = strdup(final);
		return *out ? 0 : -ENOMEM;
	}
	r = dir_path(dirfd, map, &dir);
	if (r < 0)
		return r;
	r = asprintf(out, "%s%s%s", dir, strcmp(dir, "/") != 0 ? "/" : "", final);
	return r < 0 ? -ENOMEM : 0;
}

int hs_selabel_use_file_contexts(const char *path)
{
	const struct selinux_opt opt = { SELABEL_OPT_PATH, path };
	struct selabel_handle *h;
	int r = selinux_load();

	if (r < 0)
		return r;
	h = se.selabel_open(SELABEL_CTX_FILE, &opt, 1);
	if (!h)
		return -errno;
	if (handle)
		se.selabel_close(handle);
	handle = h;
	active = 1;
	return 0;
}

int hs_selabel_lookup_at(int dirfd, const char *final, mode_t type, char **con)
{
	_cleanup_free_ char *path = NULL;
	int r = final_path(dirfd, final, true, &path);

	*con = NULL;
	if (r < 0)
		return r;
	if (!handle && (r = selinux_load()) < 0)
		return r;
	if (!handle)
		handle = se.selabel_open(SELABEL_CTX_FILE, NULL, 0);
	if (!handle)
		return -errno;
	/* ENOENT: the policy names no context, the kernel's default applies */
	if (se.selabel_lookup(handle, con, path, (int)type) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int hs_selabel_begin_at(int dirfd, const char *final, mode_t type)
{
	char *con = NULL;
	int r;

	if (!selabel_active())
		return 0;
	r = hs_selabel_lookup_at(dirfd, final, type, &con);
	if (r == 0 && se.setfscreatecon(con) < 0)
		r = -errno;
	context_set = r == 0 && con;
	se.freecon(con);
	/* permissive: the kernel would allow the default label, so do we */
	return r < 0 && se.security_getenforce() == 1 ? r : 0;
}

void hs_selabel_end(void)
{
	int saved = errno;

	if (context_set)
		(void)se.setfscreatecon(NULL);
	context_set = false;
	errno = saved;
}

static void alias_drop(size_t i)
{
	free(aliases[i].tmp);
	free(aliases[i].final);
	free(aliases[i].real);
	memmove(aliases + i, aliases + i + 1, (n_aliases - i - 1) * sizeof(aliases[0]));
	n_aliases--;
}

void hs_selabel_alias_at(int dirfd, const char *name, const char *final)
{
	struct alias a = { NULL, NULL, NULL };
	struct stat st;

	if (!selabel_active() || final_path(dirfd, name, true, &a.tmp) < 0 ||
	    final_path(dirfd, final, true, &a.final) < 0 ||
	    final_path(dirfd, name, false, &a.real) < 0) {
		free(a.tmp);
		free(a.final);
		return;
	}
	/* pairs whose directory has been renamed into place are done */
	for (size_t i = n_aliases; i-- > 0;)
		if (lstat(aliases[i].real, &st) < 0 && errno == ENOENT)
			alias_drop(i);
	if (n_aliases == HS_ARRAY_SIZE(aliases))
		alias_drop(0);
	aliases[n_aliases++] = a;
}

int hs_selabel_openat(int dirfd, const char *name, const char *final, int flags, mode_t mode)
{
	int r = hs_selabel_begin_at(dirfd, final ? final : name, S_IFREG);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = openat(dirfd, name, flags, mode);
	hs_selabel_end();
	return r;
}

int hs_selabel_mkdirat(int dirfd, const char *name, const char *final, mode_t mode)
{
	int r = hs_selabel_begin_at(dirfd, final ? final : name, S_IFDIR);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = mkdirat(dirfd, name, mode);
	hs_selabel_end();
	if (r == 0 && final && strcmp(final, name) != 0)
		hs_selabel_alias_at(dirfd, name, final);
	return r;
}

int hs_selabel_symlinkat(const char *target, int dirfd, const char *name)
{
	int r = hs_selabel_begin_at(dirfd, name, S_IFLNK);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	r = symlinkat(target, dirfd, name);
	hs_selabel_end();
	return r;
}
