/* bench-floor FILE...: the least I/O a tool that changes these files must do,
 * linked statically.  For each file: read it whole with read(2), write the same
 * bytes to a temp file in its directory, give the temp the file's owner and mode,
 * fsync it, rename it over the file, fsync the directory.  No parsing, no locks,
 * no backup, no journal.  The benchmarks time it (fork+exec included) next to the
 * tools, so "close to the limit" is a number.  The bytes go back unchanged, so
 * running it leaves the files as they were (new inodes, same contents). */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path)
{
	perror(path);
	fprintf(stderr, "bench-floor: %s %s failed\n", what, path);
	return 1;
}

static int rewrite(const char *path)
{
	char tmp[4096], dir[4096];
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, out, dfd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return fail("open", path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return fail("malloc for", path);
	while ((n = read(fd, buf + got, (size_t)st.st_size + 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (n < 0)
		return fail("read", path);
	snprintf(tmp, sizeof(tmp), "%s.floor-tmp", path);
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return fail("create", tmp);
	if (write(out, buf, got) != (ssize_t)got || fchown(out, st.st_uid, st.st_gid) < 0 ||
	    fchmod(out, st.st_mode & 07777) < 0 || fsync(out) < 0 || close(out) < 0)
		return fail("write", tmp);
	free(buf);
	if (rename(tmp, path) < 0)
		return fail("rename", tmp);
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		return fail("fsync the directory of", path);
	close(dfd);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (rewrite(argv[i]) != 0)
			return 1;
	return 0;
}
