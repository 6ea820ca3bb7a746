#include "procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Does /proc/PID/status show uid among its Uid: fields (real, effective,
 * saved, file system)? */
static bool status_has_uid(int piddirfd, uid_t uid)
{
	char buf[4096], *line;
	_cleanup_close_ int fd = openat(piddirfd, "status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return false;
	n = hs_read_full(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	line = strstr(buf, "\nUid:");
	if (!line)
		return false;
	line += 5;
	for (int i = 0; i < 4; i++) {
		char *end;
		unsigned long v;

		while (*line == ' ' || *line == '\t')
			line++;
		errno = 0;
		v = strtoul(line, &end, 10);
		if (end == line || errno)
			return false;
		if ((uid_t)v == uid)
			return true;
		line = end;
	}
	return false;
}

/* shadow-utils' user_busy(): a process (or thread) running with the uid.
 * Under any root directory and in any mount namespace: a process in a
 * chroot or a container that shares our user namespace runs as the same
 * kernel uid, keeps the same files and can race root's walk over the home
 * just the same.  (A container with a user namespace of its own shows its
 * users here under the host uids they map to.)  Only our pid namespace's
 * /proc can be seen: what lives in another pid namespace is that
 * namespace's business. */
pid_t hs_procs_user_busy(uid_t uid)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		unsigned long pid;
		_cleanup_close_ int pfd = -1;

		if (hs_parse_ulong(de->d_name, 1, 0x7fffffffUL, &pid) < 0)
			continue;
		if ((pid_t)pid == getpid())
			continue;
		pfd = openat(dirfd(proc), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			continue;
		if (status_has_uid(pfd, uid)) {
			found = (pid_t)pid;
		} else {
			/* a thread may have changed its credentials alone */
			_cleanup_close_ int tfd = openat(pfd, "task",
							 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			_cleanup_closedir_ DIR *tasks = tfd >= 0 ? fdopendir(tfd) : NULL;
			struct dirent *te;

			if (tasks)
				tfd = -1;   /* the DIR owns it now */
			while (tasks && !found && (te = readdir(tasks))) {
				_cleanup_close_ int thfd = -1;

				if (te->d_name[0] == '.')
					continue;
				thfd = openat(dirfd(tasks), te->d_name,
					      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (thfd >= 0 && status_has_uid(thfd, uid))
					found = (pid_t)pid;
			}
		}
	}
	return found;
}
