/* Small shared helpers: error phrases, wiping, full reads/writes,
 * random names, strict number parsing. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>

const char *hs_strerror(int negative_err)
{
	static const char *const phrases[HS_E_LAST - HS_E_BASE] = {
		[HS_E_NOTREG - HS_E_BASE] = "is not a regular file",
		[HS_E_NOTDIR - HS_E_BASE] = "is not a directory",
		[HS_E_SYMLINK - HS_E_BASE] = "is a symbolic link",
		[HS_E_NLINK - HS_E_BASE] = "has a link count other than 1",
		[HS_E_OWNER - HS_E_BASE] = "has the wrong owner",
		[HS_E_GROUP - HS_E_BASE] = "has the wrong group",
		[HS_E_MODE - HS_E_BASE] = "has the wrong permissions",
		[HS_E_TOOBIG - HS_E_BASE] = "is larger than allowed",
		[HS_E_FORMAT - HS_E_BASE] = "has an invalid format",
		[HS_E_NAME - HS_E_BASE] = "invalid user or group name",
		[HS_E_RANGE - HS_E_BASE] = "number out of range",
		[HS_E_FIELD - HS_E_BASE] = "forbidden character in a field",
		[HS_E_TIMEOUT - HS_E_BASE] = "timed out",
		[HS_E_LOCKED - HS_E_BASE] = "locked by another process",
		[HS_E_METHOD - HS_E_BASE] = "unknown or refused hashing method",
		[HS_E_TAKEN - HS_E_BASE] = "was taken over by root meanwhile",
		[HS_E_CHANGED - HS_E_BASE] =
			"changed meanwhile, by a program that ignores the locks",
		[HS_E_PARTIAL - HS_E_BASE] = "has no root line or no final newline: half written?",
	};
	/* INT_MIN cannot be negated; it is no valid code anyway */
	int e = negative_err == INT_MIN ? INT_MAX
		: negative_err < 0 ? -negative_err : negative_err;

	if (e == 0)
		return "success";
	if (e > HS_E_BASE && e < HS_E_LAST && phrases[e - HS_E_BASE])
		return phrases[e - HS_E_BASE];
	if (e >= HS_E_BASE)
		return "unknown error";
	/* strerror() returns a static string for valid codes and an
	 * "Unknown error N" buffer otherwise; both are fine for messages. */
	return strerror(e);
}

void hs_timespec_add_ms(struct timespec *t, unsigned ms)
{
	t->tv_sec += (time_t)(ms / 1000);
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

void hs_sleep_whole_ms(unsigned ms)
{
	struct timespec until;

	if (clock_gettime(CLOCK_MONOTONIC, &until) < 0)
		return;
	hs_timespec_add_ms(&until, ms);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

const char *hs_lock_strerror(int r, unsigned timeout_ms, char *buf, size_t size)
{
	if (r != -HS_E_TIMEOUT)
		return hs_strerror(r);
	if (timeout_ms % 1000 == 0)
		snprintf(buf, size, "timed out after %u s", timeout_ms / 1000);
	else
		snprintf(buf, size, "timed out after %u ms", timeout_ms);
	return buf;
}

#if defined(__SANITIZE_ADDRESS__)   /* GCC */
#define WIPE_UNDER_ASAN 1
#elif defined(__has_feature)        /* clang: the fuzzers */
#if __has_feature(address_sanitizer)
#define WIPE_UNDER_ASAN 1
#endif
#endif

void hs_wipe(void *p, size_t n)
{
	if (!p || !n)
		return;
#if defined(WIPE_UNDER_ASAN)
	/* ASan does not see explicit_bzero's stores: a memset it checks,
	 * kept by the barrier, so a wipe past a buffer fails the ASan run */
	memset(p, 0, n);
	__asm__ __volatile__("" : : "r"(p) : "memory");
#else
	explicit_bzero(p, n);
#endif
}

void hs_free_secret(char *s)
{
	if (!s)
		return;
	hs_wipe(s, strlen(s));
	free(s);
}

ssize_t hs_read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	size_t done = 0;

	if (n > SSIZE_MAX)
		return -EINVAL;
	while (done < n) {
		ssize_t r = read(fd, p + done, n - done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int hs_write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* write() returning 0 for n > 0 would loop forever */
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void hs_close(int fd)
{
	if (fd < 0)
		return;
	int saved = errno;
	close(fd);
	errno = saved;
}

int hs_random_alnum(char *buf, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	/* 62 symbols: reject bytes >= 248 (= 4 * 62) to avoid modulo bias */
	const unsigned limit = 4 * 62;
	size_t i = 0;

	while (i < n) {
		unsigned char rnd[64];
		size_t want = n - i < sizeof rnd ? n - i : sizeof rnd;
		ssize_t r = getrandom(rnd, want, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t k = 0; k < r && i < n; k++) {
			if (rnd[k] >= limit)
				continue;
			buf[i++] = alphabet[rnd[k] % 62];
		}
		hs_wipe(rnd, sizeof rnd);
	}
	return 0;
}

int hs_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	bool too_big = false;

	if (!s || !*s)
		return -HS_E_FORMAT;
	/* only "0" may start with a zero: rejects octal-looking and 0x forms */
	if (s[0] == '0' && s[1] != '\0')
		return -HS_E_FORMAT;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -HS_E_FORMAT;
		unsigned d = (unsigned)(*p - '0');
		/* keep scanning after overflow so a trailing junk byte is
		 * still reported as a format error.  The bound is a constant
		 * comparison, not a division per digit: this runs for every
		 * number of every line of /etc/passwd, group and subuid. */
		if (!too_big) {
			if (v > ULONG_MAX / 10 || (v == ULONG_MAX / 10 && d > ULONG_MAX % 10))
				too_big = true;
			else
				v = v * 10 + d;
		}
	}
	if (too_big || v < min || v > max)
		return -HS_E_RANGE;
	*out = v;
	return 0;
}

long hs_today(void)
{
	time_t now = time(NULL);

	return now < 0 ? 0 : (long)(now / 86400);
}

__attribute__((format(printf, 3, 0)))
static void err_vset(struct hs_err *err, size_t at, const char *fmt, va_list ap)
{
	int saved = errno;

	if (at < sizeof err->msg) {
		int n = vsnprintf(err->msg + at, sizeof err->msg - at, fmt, ap);
		if (n < 0)
			err->msg[at] = '\0';
	}
	errno = saved;
}

int hs_err_set(struct hs_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->log_level = -1;
	va_start(ap, fmt);
	err_vset(err, 0, fmt, ap);
	va_end(ap);
	return code;
}

int hs_err_setl(struct hs_err *err, int code, int log_level, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->log_level = log_level;
	va_start(ap, fmt);
	err_vset(err, 0, fmt, ap);
	va_end(ap);
	return code;
}

int hs_err_add(struct hs_err *err, const char *fmt, ...)
{
	va_list ap;
	size_t at;

	if (!err)
		return 0;
	at = strnlen(err->msg, sizeof err->msg);
	/* a full buffer keeps what it has: the first lines matter most */
	if (at > 0) {
		if (at + 2 >= sizeof err->msg)
			return err->code;
		err->msg[at++] = '\n';
		err->msg[at] = '\0';
	}
	va_start(ap, fmt);
	err_vset(err, at, fmt, ap);
	va_end(ap);
	return err->code;
}

void hs_err_clear(struct hs_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->log_level = -1;
	err->msg[0] = '\0';
}

void hs_fclosep(void *fp)
{
	FILE *f = *(FILE **)fp;

	if (f) {
		int saved = errno;
		fclose(f);
		errno = saved;
	}
}

void hs_closedirp(void *dp)
{
	DIR *d = *(DIR **)dp;

	if (d) {
		int saved = errno;
		closedir(d);
		errno = saved;
	}
}

void hs_secret_buf_freep(struct hs_secret_buf *b)
{
	hs_wipe(b->p, b->size);
	free(b->p);
	b->p = NULL;
}
