#include "logrecords.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <lastlog.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#include "config.h"
#include "fileio.h"
#include "layout.h"
#include "util.h"

/* faillog(5)'s record, as shadow-utils documents it. */
struct faillog_record {
	short fail_cnt, fail_max;
	char fail_line[12];
	time_t fail_time;
	long fail_locktime;
};

#define RECORD_MAX sizeof(struct lastlog)
_Static_assert(sizeof(struct faillog_record) <= RECORD_MAX, "record sizes");

/* No uid: nothing to move from (a reset). */
#define NO_UID ((uid_t)-1)

struct record_file {
	const char *path;
	size_t size;
	uid_t max_uid;          /* records above it are never written */
};

static bool holds(const struct stat *st, size_t size, uid_t uid)
{
	return uid != NO_UID && st->st_size >= ((off_t)uid + 1) * (off_t)size;
}

/* Write record uid of a file of size-byte records. */
static int put_record(int fd, const void *rec, size_t size, uid_t uid)
{
	ssize_t n = pwrite(fd, rec, size, (off_t)uid * (off_t)size);

	return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
}

/* Copy from's record (zeros when there is none, or from is NO_UID) to to,
 * unless keep_to; zero from's unless keep_from.  A record of zeros is
 * written only where the file already holds one. */
static int move_record(const struct record_file *f, uid_t from, uid_t to, bool keep_from,
		       bool keep_to)
{
	static const char zero[RECORD_MAX];
	char rec[RECORD_MAX] = { 0 };
	_cleanup_close_ int fd = open(f->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
						       O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (holds(&st, f->size, from)) {
		n = pread(fd, rec, f->size, (off_t)from * (off_t)f->size);
		if (n != (ssize_t)f->size)
			return n < 0 ? -errno : -EIO;
	}
	bool empty = memcmp(rec, zero, f->size) == 0;
	bool write_to = !keep_to && to <= f->max_uid && (!empty || holds(&st, f->size, to));
	bool clear_from = !keep_from && !empty;
	int r = 0;

	if (write_to)
		r = put_record(fd, rec, f->size, to);
	if (r == 0 && clear_from)
		r = put_record(fd, zero, f->size, from);
	if (r == 0 && (write_to || clear_from) && fsync(fd) < 0)
		r = -errno;
	return r;
}

static int move_records(const struct hs_config *defs, uid_t from, uid_t to, bool keep_from,
			bool keep_to, struct hs_err *err)
{
	long max = hs_config_get_long(defs, "LASTLOG_UID_MAX", 0, LONG_MAX, LONG_MAX);
	const struct record_file files[] = {
		{ HS_LASTLOG_FILE, sizeof(struct lastlog),
		  (unsigned long)max >= UINT32_MAX ? NO_UID : (uid_t)max },
		{ HS_FAILLOG_FILE, sizeof(struct faillog_record), NO_UID },
	};
	int first = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(files); i++) {
		int r = move_record(&files[i], from, to, keep_from, keep_to);

		if (r >= 0)
			continue;
		if (!first)
			first = r;
		if (from == NO_UID)
			hs_err_add(err, "cannot reset the %s record of UID %lu: %s", files[i].path,
				   (unsigned long)to, hs_strerror(r));
		else
			hs_err_add(err, "cannot move the %s record of UID %lu to UID %lu: %s",
				   files[i].path, (unsigned long)from, (unsigned long)to,
				   hs_strerror(r));
	}
	if (first && err)
		err->code = first;
	return first;
}

int hs_logrecords_reset(const struct hs_config *defs, uid_t uid, struct hs_err *err)
{
	return move_records(defs, NO_UID, uid, true, false, err);
}

int hs_logrecords_move(const struct hs_config *defs, uid_t old_uid, uid_t new_uid,
		       bool old_shared, bool new_shared, struct hs_err *err)
{
	return move_records(defs, old_uid, new_uid, old_shared, new_shared, err);
}

/* ---- wtmp, btmp, sulog: appended without a lock (logrecords.h) ---- */

static void copy_field(char *dst, size_t size, const char *src)
{
	memset(dst, 0, size);
	if (src)
		strncpy(dst, src, size);  /* utmp fields need no NUL when full */
}

void hs_logrecords_utmp_fill(struct utmpx *ut, short type, const char *user, const char *line,
			     const char *id, const char *host)
{
	struct timeval tv;

	memset(ut, 0, sizeof(*ut));
	ut->ut_type = type;
	ut->ut_pid = getpid();
	copy_field(ut->ut_user, sizeof(ut->ut_user), user);
	copy_field(ut->ut_line, sizeof(ut->ut_line), line);
	copy_field(ut->ut_id, sizeof(ut->ut_id), id);
	if (host) {
		copy_field(ut->ut_host, sizeof(ut->ut_host), host);
		if (inet_pton(AF_INET, host, ut->ut_addr_v6) != 1)
			(void)inet_pton(AF_INET6, host, ut->ut_addr_v6);
	}
	gettimeofday(&tv, NULL);
	ut->ut_tv.tv_sec = (int32_t)tv.tv_sec;
	ut->ut_tv.tv_usec = (int32_t)tv.tv_usec;
}

/* path opened for appending (see hs_logrecords_append), O_WRONLY or, to
 * read its end too, O_RDWR (mode): the fd, or -errno or -HS_E_*. */
static int open_log(const char *path, bool create, int mode)
{
	const char *base;
	struct stat st, dst;
	_cleanup_close_ int dirfd = -1, fd = -1;
	int r;

	if (!path || path[0] != '/')
		return -EINVAL;
	dirfd = hs_fileio_open_parent(path, &base);
	if (dirfd < 0)
		return dirfd;
	fd = openat(dirfd, base, mode | O_APPEND | (create ? O_CREAT : 0) | O_NOFOLLOW |
		    O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* Another name of the log counts against it only where a user could
	 * have planted the log's name as a link to some file of root's: in a
	 * directory only root writes (/var/log), a user's link elsewhere
	 * (fs.protected_hardlinks 0) must not silence the log. */
	if (fstat(fd, &st) < 0)
		return -errno;
	r = hs_fileio_check_stat(&st, &(const struct hs_file_expect){
		.uid = 0, .gid = HS_ANY_GID,
		.root_links_ok = fstat(dirfd, &dst) == 0 && dst.st_uid == 0 &&
				 !(dst.st_mode & 022) });
	return r < 0 ? r : TAKE_FD(fd);
}

/* One write(2) of the whole (at < 0: at the end of fd, O_APPEND; else one
 * pwrite(2) there): a second one after a short write could land
 * after another writer's record.  RLIMIT_FSIZE is the caller's (su's),
 * soft and hard (ulimit -f sets both; hs_privs_init lifts only the soft
 * one): set just past the log's size, which anyone may stat, it would cut
 * the write short, and a cut record shifts every record other writers
 * append after it (sshd pads nothing) off the record size, a cut line
 * swallows the next one.  It is lifted around the write, or where it
 * cannot be (no CAP_SYS_RESOURCE), nothing is written that it would cut:
 * -EFBIG. */
static int write_once(int fd, const void *data, size_t size, off_t at)
{
	const struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct rlimit caller;
	bool lifted = false;
	struct stat st;
	off_t start = at;
	ssize_t n;

	if (getrlimit(RLIMIT_FSIZE, &caller) < 0)
		return -errno;
	if (caller.rlim_cur != RLIM_INFINITY) {
		lifted = setrlimit(RLIMIT_FSIZE, &unlimited) == 0;
		if (!lifted && at < 0)
			start = fstat(fd, &st) < 0 ? -1 : st.st_size;
		if (!lifted && (start < 0 || (rlim_t)start + size > caller.rlim_cur))
			return -EFBIG;
	}
	n = at < 0 ? write(fd, data, size) : pwrite(fd, data, size, at);
	int r = n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;

	if (lifted)
		(void)setrlimit(RLIMIT_FSIZE, &caller);
	return r;
}

int hs_logrecords_append(const char *path, const void *rec, size_t size, bool create)
{
	_cleanup_close_ int fd = open_log(path, create, O_WRONLY);

	return fd < 0 ? fd : write_once(fd, rec, size, -1);
}

/* su's line is shorter (shadow-utils' format, two names of at most 32) */
#define APPEND_LINE_MAX 1024

int hs_logrecords_append_line(const char *path, const char *line, size_t len, bool create)
{
	char buf[APPEND_LINE_MAX + 1];
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t n = 0;
	char last;

	if (!line || len == 0 || len > APPEND_LINE_MAX || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1))
		return -EINVAL;
	fd = open_log(path, create, O_RDWR);
	if (fd < 0)
		return fd;
	/* A line cut short before (a crash, a full disk, a writer killed
	 * inside its write) would run on into ours: a reader of lines
	 * would take the next caller's su for part of the cut one.  A
	 * newline ends the cut line first, in the same write. */
	if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 &&
	    last != '\n')
		buf[n++] = '\n';
	memcpy(buf + n, line, len);
	return write_once(fd, buf, n + len, -1);
}

static int append_utmp(int fd, const struct utmpx *ut)
{
	/* at most: the rest of a partial record, an empty one, ours */
	char buf[3 * sizeof(struct utmpx)] = { 0 };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	size_t n = 0;

	/* A record cut short (a full disk, a crash) leaves the file off the
	 * record size: ours would be misread, and glibc's next writer cuts
	 * the file back to the record size, through ours.  Zeros complete
	 * the cut record instead. */
	if (fstat(fd, &st) == 0 && st.st_size % (off_t)sizeof(*ut))
		n = sizeof(*ut) - (size_t)(st.st_size % (off_t)sizeof(*ut));
	/* A glibc writer holding its lock may have taken the end of the file
	 * already and write there when it goes on (someone may have stopped
	 * it between the two): an empty record goes first, for it to
	 * overwrite instead of ours.  last(1) skips an empty record. */
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_WRLCK)
		n += sizeof(*ut);
	memcpy(buf + n, ut, sizeof(*ut));
	return write_once(fd, buf, n + sizeof(*ut), -1);
}

int hs_logrecords_append_utmp(const char *path, const struct utmpx *ut)
{
	_cleanup_close_ int fd = open_log(path, false, O_WRONLY);

	return fd < 0 ? fd : append_utmp(fd, ut);
}

/* ---- utmp: updated in place without waiting for a lock ---- */

static bool is_process(short type)
{
	return type == INIT_PROCESS || type == LOGIN_PROCESS || type == USER_PROCESS ||
	       type == DEAD_PROCESS;
}

/* The offset of the first whole record of fd (up to its size now) that
 * matches: ut's slot as glibc's pututxline() finds it (ut non-NULL: a
 * process entry of the same ut_id, or ut_line where either id is empty),
 * else pid's live entry (pid > 0; a USER_PROCESS one only on line, unless
 * line is NULL) or line's (as getutxline() finds it), copied to *found.
 * -ENOENT: none. */
static off_t find_utmp(int fd, const struct utmpx *ut, pid_t pid, const char *line,
		       struct utmpx *found)
{
	struct utmpx recs[32];
	struct stat st;
	off_t end, off = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	end = st.st_size - st.st_size % (off_t)sizeof(recs[0]);
	while (off < end) {
		size_t want = (size_t)(end - off) < sizeof(recs) ? (size_t)(end - off) : sizeof(recs);
		ssize_t n = pread(fd, recs, want, off);

		if (n < (ssize_t)sizeof(recs[0]))
			return n < 0 ? -errno : -ENOENT;   /* cut meanwhile */
		for (size_t i = 0; i < (size_t)n / sizeof(recs[0]); i++, off += sizeof(recs[0])) {
			const struct utmpx *u = &recs[i];
			bool match;

			if (ut)
				match = is_process(u->ut_type) &&
					(u->ut_id[0] && ut->ut_id[0] ?
					 !strncmp(u->ut_id, ut->ut_id, sizeof(u->ut_id)) :
					 !strncmp(u->ut_line, ut->ut_line, sizeof(u->ut_line)));
			else if (pid > 0)
				match = u->ut_pid == pid && is_process(u->ut_type) &&
					u->ut_type != DEAD_PROCESS &&
					(!line || u->ut_type != USER_PROCESS ||
					 !strncmp(u->ut_line, line, sizeof(u->ut_line)));
			else
				match = line && (u->ut_type == LOGIN_PROCESS ||
						 u->ut_type == USER_PROCESS) &&
					!strncmp(u->ut_line, line, sizeof(u->ut_line));
			if (match) {
				*found = *u;
				return off;
			}
		}
	}
	return -ENOENT;
}

int hs_logrecords_utmp_find(const char *path, pid_t pid, const char *line, struct utmpx *found)
{
	_cleanup_close_ int fd = open_log(path, false, O_RDONLY);
	off_t off = fd < 0 ? fd : find_utmp(fd, NULL, pid, line, found);

	return off < 0 ? (int)off : 0;
}

int hs_logrecords_put_utmp(const char *path, const struct utmpx *ut)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	_cleanup_close_ int fd = -1;
	struct utmpx old;
	off_t off;
	int flags;

	if (!is_process(ut->ut_type))
		return -EINVAL;
	fd = open_log(path, false, O_RDWR);
	if (fd < 0)
		return fd;
	/* Polite to glibc's readers and writers while no one holds a lock
	 * (they then never see ours half written, nor take the end we
	 * append at); never waited for.  Closing fd lets it go. */
	(void)fcntl(fd, F_SETLK, &fl);
	off = find_utmp(fd, ut, 0, NULL, &old);
	if (off == -ENOENT)
		return append_utmp(fd, ut);
	if (off < 0)
		return (int)off;
	/* pwrite(2) on an O_APPEND descriptor writes at the end */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_APPEND) < 0)
		return -errno;
	return write_once(fd, ut, sizeof(*ut), off);
}

int hs_logrecords_failure(const struct hs_config *defs, const struct utmpx *ut)
{
	return hs_logrecords_append_utmp(hs_config_get_str(defs, "FTMP_FILE", HS_BTMP_FILE), ut);
}
