/* The creation-context calls without SELinux (see selabel.h): for builds
 * without libselinux, and linked ahead of the io library into the
 * programs that only write below /etc/hardened-shadow, whose files
 * inherit the tree's label from their directory. */
#include "selabel.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int hs_selabel_begin_at(int dirfd, const char *final, mode_t type)
{
	return 0;
}

void hs_selabel_end(void)
{
}

int hs_selabel_openat(int dirfd, const char *name, const char *final, int flags, mode_t mode)
{
	return openat(dirfd, name, flags, mode);
}

int hs_selabel_mkdirat(int dirfd, const char *name, const char *final, mode_t mode)
{
	return mkdirat(dirfd, name, mode);
}

int hs_selabel_symlinkat(const char *target, int dirfd, const char *name)
{
	return symlinkat(target, dirfd, name);
}

void hs_selabel_alias_at(int dirfd, const char *name, const char *final)
{
}

int hs_selabel_use_file_contexts(const char *path)
{
	return -ENOTSUP;
}

int hs_selabel_lookup_at(int dirfd, const char *final, mode_t type, char **con)
{
	*con = NULL;
	return -ENOTSUP;
}
