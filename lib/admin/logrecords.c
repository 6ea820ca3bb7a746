#include "logrecords.h"

#include <errno.h>
#include <fcntl.h>
#include <lastlog.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
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
