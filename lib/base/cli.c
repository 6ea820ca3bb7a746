#include "cli.h"

#include <stdatomic.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "hs-build-config.h"
#include "layout.h"
#include "util.h"

static const char *prog_name = "hardened-shadow";

void hs_cli_set_prog(const char *name)
{
	if (name && *name)
		prog_name = name;
}

const char *hs_cli_prog(void)
{
	return prog_name;
}

#define PROGRESS_INTERVAL_MS 200

static struct {
	bool on;
	bool shown;
	unsigned long total;
	const char *what;
	struct timespec next;
} progress;
/* held by the one thread updating the line; the others skip their step */
static atomic_flag progress_busy = ATOMIC_FLAG_INIT;

static void progress_erase(void)
{
	if (progress.shown)
		fputs("\r\033[K", stderr);
	progress.shown = false;
}

static void progress_schedule(const struct timespec *now)
{
	progress.next = *now;
	hs_timespec_add_ms(&progress.next, PROGRESS_INTERVAL_MS);
}

void hs_cli_progress_start(unsigned long total, const char *what)
{
	struct timespec now;

	progress_erase();
	progress.on = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) &&
		clock_gettime(CLOCK_MONOTONIC, &now) == 0;
	progress.total = total;
	progress.what = what;
	if (progress.on)
		progress_schedule(&now);
}

void hs_cli_progress_step(unsigned long done)
{
	struct timespec now;

	if (!progress.on || atomic_flag_test_and_set(&progress_busy))
		return;
	if (clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
	    (now.tv_sec > progress.next.tv_sec ||
	     (now.tv_sec == progress.next.tv_sec && now.tv_nsec >= progress.next.tv_nsec))) {
		fprintf(stderr, "\r%s: %lu/%lu %s", prog_name, done, progress.total,
			progress.what);
		progress.shown = true;
		progress_schedule(&now);
	}
	atomic_flag_clear(&progress_busy);
}

/* A separate entry for the programs, so that the privileged ones, which
 * only reach progress_erase through hs_warn, link no new symbol. */
void hs_cli_progress_erase(void)
{
	progress_erase();
}

void hs_cli_progress_end(void)
{
	progress_erase();
	progress.on = false;
}

/* Every message is one line: the arguments a message quotes (a user
 * name, a comment, a date) come from the caller, and a newline or an
 * escape sequence in them would forge a second line or drive the
 * terminal.  What is not a printable character goes out as \xNN, by the
 * one rule of hs_printable_char, so UTF-8 names read as they are on a
 * UTF-8 terminal.
 * The line is gathered first and written at once: stderr is unbuffered,
 * and a line written a byte at a time is torn by any other writer of the
 * same terminal or log (only one longer than the buffer goes in parts). */
struct line {
	FILE *f;
	char buf[4096];
	size_t len;
};

static void line_add(struct line *l, const char *s, size_t len, bool escape)
{
	for (size_t i = 0; i < len;) {
		/* a character whole, or one byte to copy or escape */
		size_t n = escape ? hs_printable_char(s + i, len - i) : 1;

		if (l->len + 5 > sizeof l->buf) {
			fwrite(l->buf, 1, l->len, l->f);
			l->len = 0;
		}
		if (n == 0) {
			l->len += (size_t)snprintf(l->buf + l->len, 5, "\\x%02x",
						   (unsigned char)s[i]);
			i++;
		} else {
			memcpy(l->buf + l->len, s + i, n);
			l->len += n;
			i += n;
		}
	}
}

/* "PROG: [WHERE: ]S\n", WHERE's and S's control bytes escaped */
static void put_line(const char *prog, const char *where, const char *s, size_t len)
{
	struct line l = { .f = stderr, .len = 0 };

	line_add(&l, prog, strlen(prog), false);
	line_add(&l, ": ", 2, false);
	if (where) {
		line_add(&l, where, strlen(where), true);
		line_add(&l, ": ", 2, false);
	}
	line_add(&l, s, len, true);
	line_add(&l, "\n", 1, false);
	fwrite(l.buf, 1, l.len, stderr);
}

void hs_vwarn(const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list again;

	progress_erase();
	va_copy(again, ap);
	if (vasprintf(&msg, fmt, again) < 0) {
		/* out of memory (a caller's small RLIMIT_AS, a huge
		 * argument): the message cut to a buffer of the stack beats
		 * none, and goes out by the same rule, never raw */
		char cut[1024];
		int n = vsnprintf(cut, sizeof cut, fmt, ap);

		put_line(prog_name, NULL, cut, n < 0 ? 0 : strlen(cut));
	} else {
		put_line(prog_name, NULL, msg, strlen(msg));
		free(msg);
	}
	va_end(again);
}

void hs_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
}

int hs_warn_lock(const char *path, int r, unsigned timeout_ms)
{
	char buf[64];

	hs_warn("cannot lock %s: %s", path, hs_lock_strerror(r, timeout_ms, buf, sizeof(buf)));
	return r;
}

void hs_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void hs_confine_or_die(const struct hs_confine_rule *rules, size_t n, int status)
{
	int r = hs_confine_paths(rules, n);

	if (r < 0 && r != -ENOSYS)
		hs_die(status, "cannot confine itself: %s", hs_strerror(r));
}

void hs_confine_to_etc(int status)
{
	const struct hs_confine_rule etc = { HS_ETC_DIR, HS_CONFINE_WRITE };

	hs_confine_or_die(&etc, 1, status);
}

void hs_cli_warn_at(void *ctx, const char *path, unsigned long lineno, const char *message)
{
	const char *prog = ctx ? (const char *)ctx : prog_name;
	char where[4096];

	progress_erase();
	snprintf(where, sizeof where, "%s:%lu", path ? path : "(config)", lineno);
	put_line(prog, where, message, strlen(message));
}

void hs_report(const struct hs_err *err)
{
	const char *line = err->msg;

	if (!*line)
		return;
	progress_erase();
	for (;;) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);
		put_line(prog_name, NULL, line, (size_t)len);
		/* one log record per line, as each was one message before,
		 * escaped as on the terminal: the admin reads the log there */
		if (err->log_level >= 0) {
			char shown[4 * HS_ERR_MSG_MAX + 4];

			syslog(err->log_level, "%s",
			       hs_printable_len(line, (size_t)len, shown, sizeof shown));
		}
		if (!nl)
			break;
		line = nl + 1;
	}
}

void hs_report_die(int status, const struct hs_err *err)
{
	hs_report(err);
	exit(status);
}

void hs_cli_usage(int status, const char *args, const char *options, const char *tail)
{
	FILE *f = status == 0 ? stdout : stderr;

	fprintf(f, "Usage: %s %s\n\nOptions:\n%s"
		"      --version                 display the version and exit\n%s",
		prog_name, args, options, tail);
	exit(status);
}

void hs_print_version(void)
{
	printf("%s (hardened-shadow) %s\n", prog_name, HS_VERSION);
	exit(fflush(stdout) != 0 || ferror(stdout) ? 1 : 0);
}

const char *hs_printable(const char *s, char *out, size_t size)
{
	return hs_printable_len(s, strlen(s), out, size);
}

/* Whether the terminal takes UTF-8, as the locale the environment names
 * for LC_CTYPE says (LC_ALL, LC_CTYPE, LANG, as setlocale(LC_CTYPE, "")
 * would choose it); -1 until first asked.  Outside UTF-8 (no locale set:
 * "C", or an 8-bit charset such as Latin-1) the second byte of "Û"
 * (C3 9B) is CSI to the terminal, and 0x80..0x9F occur as continuation
 * bytes of much well-formed text ("À".."ß", CJK), so every byte >= 0x80
 * is escaped there.
 * The locale is only looked at (newlocale, nl_langinfo_l), never made the
 * program's: LC_CTYPE also steers isalpha, isspace and toupper, and in a
 * Latin-1 locale they would take bytes >= 0x80 for letters and spaces in
 * the parsers.  Safe in a setid program: it is setlocale's loader, which
 * without LOCPATH (ld.so drops it from an AT_SECURE process) reads only
 * /usr/lib/locale, its archive and its directories, an absolute name
 * included ("/tmp/x" is looked up as /usr/lib/locale//tmp/x), and
 * refuses "../" and relative names with a '/'; the codeset is read from
 * the locale data, no gconv module is loaded (a codeset in the name is
 * compared through the system's gconv alias list); and hs_privs_init has
 * already dropped every LANG/LC_* value with a '/' or a leading '.'.  A
 * locale that is not installed fails newlocale: escaped, as for "C". */
static atomic_int charset_utf8 = -1;

static bool terminal_utf8(void)
{
	int v = atomic_load_explicit(&charset_utf8, memory_order_relaxed);

	if (v < 0) {
		locale_t loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
		const char *cs = loc != (locale_t)0 ? nl_langinfo_l(CODESET, loc) : NULL;

		v = cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "UTF8") == 0);
		if (loc != (locale_t)0)
			freelocale(loc);
		atomic_store_explicit(&charset_utf8, v, memory_order_relaxed);
	}
	return v;
}

void hs_cli_charset_reset(void)
{
	atomic_store_explicit(&charset_utf8, -1, memory_order_relaxed);
}

/* One rule for everything the programs show: printable ASCII, and UTF-8
 * that decodes to a printable character when the terminal takes UTF-8
 * (terminal_utf8), stay as they are; the rest is escaped byte by byte:
 * every byte >= 0x80 on any other terminal.  On a UTF-8 terminal escaped
 * are C0 and DEL; C1 (U+0080..U+009F) both as UTF-8 (C2 80..C2 9F: C2 9B
 * is CSI to a UTF-8 terminal) and as a raw byte 0x80..0x9F (CSI to the
 * Linux console outside UTF-8 mode and to an xterm with 8-bit controls);
 * every byte that does not begin a well-formed
 * sequence (a stray continuation byte, a truncated sequence, an overlong
 * form, a surrogate, past U+10FFFF), since a terminal in another charset
 * may take it for a control; and the characters that move or reorder the
 * text around them on a terminal that honours them: the bidirectional
 * marks, embeddings, overrides and isolates (Unicode's Bidi_Control:
 * U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line
 * and paragraph separators (U+2028, U+2029), which would let a name show
 * as another or the message look like two. */
size_t hs_printable_char(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned long v, min;
	size_t n;

	if (len == 0)
		return 0;
	if (u[0] < 0x80)
		return u[0] >= 0x20 && u[0] != 0x7f;
	if (!terminal_utf8())
		return 0;
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		n = 2; v = u[0] & 0x1f; min = 0xa0;     /* below: C1 */
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		n = 3; v = u[0] & 0x0f; min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		n = 4; v = u[0] & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (u[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	if (v == 0x061c || v == 0x200e || v == 0x200f || (v >= 0x2028 && v <= 0x202e) ||
	    (v >= 0x2066 && v <= 0x2069))
		return 0;
	return n;
}

const char *hs_printable_len(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		size_t n = hs_printable_char(s + i, len - i);

		/* keep room for "..." and the NUL; a character is never cut */
		if (o + (n ? n : 4) + 4 > size) {
			memcpy(out + o, "...", 4);
			return out;
		}
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			snprintf(out + o, 5, "\\x%02x", (unsigned char)s[i]);
			o += 4;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

void hs_fputs_printable(const char *s, FILE *f)
{
	struct line l = { .f = f, .len = 0 };

	line_add(&l, s, strlen(s), true);
	fwrite(l.buf, 1, l.len, f);
}
