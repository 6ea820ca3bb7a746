/* Small shared helpers: cleanup attributes, wiping, full reads/writes,
 * project error codes.  Everything here is async-signal-unaware plain C. */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Project-specific error codes.  Functions in this library return 0 or a
 * positive count on success and a negative value on failure: either -errno
 * or -HS_E_*.  hs_strerror() turns both into a phrase that completes
 * "cannot read /etc/hardened-shadow/alice/shadow: <phrase>". */
enum {
	HS_E_BASE = 4096,
	HS_E_NOTREG,   /* not a regular file (FIFO, device, directory, ...) */
	HS_E_NOTDIR,   /* not a directory */
	HS_E_SYMLINK,  /* is a symbolic link */
	HS_E_NLINK,    /* link count is not 1 */
	HS_E_OWNER,    /* wrong owning user */
	HS_E_GROUP,    /* wrong owning group */
	HS_E_MODE,     /* wrong permission bits */
	HS_E_TOOBIG,   /* larger than the size cap for this file */
	HS_E_FORMAT,   /* contents do not parse */
	HS_E_NAME,     /* invalid user or group name */
	HS_E_RANGE,    /* number out of range */
	HS_E_FIELD,    /* forbidden character (':', newline, control) in a field */
	HS_E_TIMEOUT,  /* lock deadline passed */
	HS_E_LOCKED,   /* lock held by another live process */
	HS_E_METHOD,   /* unknown or refused hashing method */
	HS_E_TAKEN,    /* a user's directory taken over by root meanwhile */
	HS_E_CHANGED,  /* a file changed under us by one that ignores the locks */
	HS_E_PARTIAL,  /* a file seen half written: no root line or final newline */
	HS_E_LAST
};

/* Phrase for a negative return value (either -errno or -HS_E_*). */
const char *hs_strerror(int negative_err);

/* A shortage the process or the system gets over (descriptors, memory):
 * it says nothing of the file that could not be read, so it must not be
 * taken for a verdict on it (an unreadable aging file reads as an expired
 * account, DESIGN section 2).  Not EAGAIN or EINTR: the owner of a file
 * can make an open fail with them (a lease held on it fails every
 * O_NONBLOCK open with EAGAIN), and a file in a user's directory may be
 * the user's.  Inline: the NSS and PAM modules use it without a new
 * symbol. */
static inline bool hs_err_transient(int negative_err)
{
	switch (-negative_err) {
	case EMFILE:
	case ENFILE:
	case ENOMEM:
		return true;
	default:
		return false;
	}
}

/* t += ms, normalised (deadlines on CLOCK_MONOTONIC from a timeouts.h
 * value). */
struct timespec;
void hs_timespec_add_ms(struct timespec *t, unsigned ms);

/* Sleep ms milliseconds on the monotonic clock: a signal that interrupts
 * the sleep does not shorten it (failure delays). */
void hs_sleep_whole_ms(unsigned ms);

/* The phrase for a failed lock with a deadline of timeout_ms: "timed out
 * after 15 s" (or "after 200 ms" for a deadline that is not whole seconds)
 * for -HS_E_TIMEOUT, in buf; hs_strerror(r) otherwise. */
const char *hs_lock_strerror(int r, unsigned timeout_ms, char *buf, size_t size);

/* Wipe memory so the compiler cannot elide it (explicit_bzero). */
void hs_wipe(void *p, size_t n);
/* Wipe a NUL-terminated string in place and free it; NULL is fine.  It
 * wipes up to the first NUL only: a copy a hs_records_*_parse cut in
 * place, or input that may hold a NUL byte, goes in a struct
 * hs_secret_buf and is wiped by its size. */
void hs_free_secret(char *s);

/* read()/write() loops retrying on EINTR and short transfers.
 * hs_read_full returns bytes read (< n only at EOF) or -errno.
 * hs_write_full returns 0 or -errno. */
ssize_t hs_read_full(int fd, void *buf, size_t n);
int hs_write_full(int fd, const void *buf, size_t n);

/* close() that preserves errno and ignores fd < 0. */
void hs_close(int fd);

/* Fill buf with n random characters from [A-Za-z0-9] using getrandom().
 * Returns 0 or -errno. buf is not NUL-terminated by this function. */
int hs_random_alnum(char *buf, size_t n);

/* Parse a decimal number with no sign, no whitespace, no leading zeros
 * (except "0" itself), no base prefixes, and value in [min, max].
 * Returns 0, -HS_E_FORMAT or -HS_E_RANGE. */
int hs_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* Today in days since 1970-01-01 UTC (shadow(5) day numbers). */
long hs_today(void);

/* The context of a failure, for a caller that prints it.  Library code
 * neither prints nor exits: a function that can fail in ways the user must
 * read about takes a struct hs_err *, fills it, and returns the same
 * negative code; the program hands it to hs_report() (lib/base/cli.h).
 * msg is the whole message without the "prog: " prefix; a '\n' inside it
 * starts another line, which gets its own prefix.  log_level >= 0 asks the
 * reporter to send the message to syslog at that priority as well. */
#define HS_ERR_MSG_MAX 1024
struct hs_err {
	int code;       /* the negative return value; 0 when nothing failed */
	int log_level;  /* syslog priority, or -1: stderr only */
	char msg[HS_ERR_MSG_MAX];
};
#define HS_ERR_INIT { 0, -1, "" }

/* Set *err to code and the formatted message (cut to fit) and return code,
 * so a failure path reads "return hs_err_set(err, r, "...", ...);".  err
 * may be NULL: then only code is returned.  log_level goes back to -1. */
int hs_err_set(struct hs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* hs_err_set, and ask for a syslog copy at log_level. */
int hs_err_setl(struct hs_err *err, int code, int log_level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Add one more line to *err (for a failure that has several to say);
 * returns err->code.  An empty err gets the line as its message. */
int hs_err_add(struct hs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Back to "nothing failed". */
void hs_err_clear(struct hs_err *err);

/* cleanup helpers in the spirit of systemd's _cleanup_ */
static inline void hs_freep(void *p) { free(*(void **)p); }
static inline void hs_closep(int *fd) { if (*fd >= 0) hs_close(*fd); }
static inline void hs_free_secretp(char **s) { hs_free_secret(*s); }
void hs_fclosep(void *fp);     /* FILE **: fclose, errno kept */
void hs_closedirp(void *dp);   /* DIR **: closedir, errno kept */
#define _cleanup_free_ __attribute__((cleanup(hs_freep)))
#define _cleanup_close_ __attribute__((cleanup(hs_closep)))
#define _cleanup_secret_ __attribute__((cleanup(hs_free_secretp)))
#define _cleanup_fclose_ __attribute__((cleanup(hs_fclosep)))
/* A heap buffer that may hold secrets or hashes: the cleanup wipes all
 * size bytes and frees it, unless TAKE_PTR(b.p) handed it on. */
struct hs_secret_buf {
	char *p;
	size_t size;
};
void hs_secret_buf_freep(struct hs_secret_buf *b);
#define _cleanup_secret_buf_ __attribute__((cleanup(hs_secret_buf_freep)))
#define _cleanup_closedir_ __attribute__((cleanup(hs_closedirp)))

/* Take ownership away from a _cleanup_ variable: the value, leaving -1
 * (TAKE_FD) or NULL (TAKE_PTR) behind, so the cleanup does nothing and a
 * function that hands back what it opened needs no manual close:
 *     _cleanup_close_ int fd = open(...);
 *     if (check(fd) < 0) return -1;       // fd closed here
 *     return TAKE_FD(fd);                 // not here */
#define TAKE_FD(fd) __extension__ ({ int hs_take_fd_ = (fd); (fd) = -1; hs_take_fd_; })
#define TAKE_PTR(p) __extension__ ({ __typeof__(p) hs_take_p_ = (p); (p) = NULL; hs_take_p_; })

#define HS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
