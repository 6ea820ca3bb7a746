/* Unit tests for the one escaping rule of everything the programs show
 * (hs_printable_char in lib/base/cli.c): hs_printable, hs_printable_len,
 * hs_fputs_printable and the messages of hs_warn / hs_report /
 * hs_cli_warn_at must all keep UTF-8 text readable and let no C0, DEL or
 * C1 control through, in UTF-8 or as a raw byte, nor any byte of a
 * sequence that is not well-formed UTF-8.  UTF-8 stays readable only when
 * the environment's locale has the charset UTF-8: under "C" (or an 8-bit
 * charset, where 0x80..0x9F are C1 controls) every byte >= 0x80 is
 * escaped, the continuation byte 9B of "Û" (C3 9B) being CSI there.
 * main() runs the cases under LC_ALL=C.UTF-8; the tests that need
 * another locale set it and restore it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"
#include "test_helpers.h"

/* Each case: input, what every printer must show. */
static const struct {
	const char *in;
	const char *want;
} cases[] = {
	/* plain ASCII is untouched, C0 and DEL escaped as before */
	{ "alice", "alice" },
	{ "a\tb\x1b[2J\x7f", "a\\x09b\\x1b[2J\\x7f" },
	/* C1 CSI as UTF-8 (U+009B) and as a raw byte */
	{ "x\xc2\x9b" "31mX", "x\\xc2\\x9b31mX" },
	{ "x\x9b" "31mX", "x\\x9b31mX" },
	/* the whole C1 range, both ends, both encodings */
	{ "\xc2\x80\xc2\x9f\x80\x9f", "\\xc2\\x80\\xc2\\x9f\\x80\\x9f" },
	/* U+00A0 and U+00E9 are the first characters past C1: readable */
	{ "\xc2\xa0\xc3\xa9", "\xc2\xa0\xc3\xa9" },
	/* valid multibyte text stays readable: é, CJK, an emoji */
	{ "Jos\xc3\xa9", "Jos\xc3\xa9" },
	{ "\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac" },
	{ "\xf0\x9f\x8e\x89!", "\xf0\x9f\x8e\x89!" },
	/* truncated sequences: at the end, and cut by an ASCII byte */
	{ "a\xe6\x97", "a\\xe6\\x97" },
	{ "\xe6\x97" "A", "\\xe6\\x97A" },
	{ "\xf0\x9f\x8e", "\\xf0\\x9f\\x8e" },
	{ "\xc3", "\\xc3" },
	/* a lone continuation byte, and one past a complete character */
	{ "\xa9", "\\xa9" },
	{ "\xc3\xa9\xa9", "\xc3\xa9\\xa9" },
	/* overlong forms: '/' in two and three bytes, CSI in three, NUL */
	{ "\xc0\xaf", "\\xc0\\xaf" },
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },
	{ "\xe0\x82\x9b", "\\xe0\\x82\\x9b" },
	{ "\xc0\x80", "\\xc0\\x80" },
	{ "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf" },
	/* a surrogate, past U+10FFFF, bytes that never occur in UTF-8 */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },
	{ "\xf5\xfe\xff", "\\xf5\\xfe\\xff" },
	/* Latin-1 text that is not UTF-8 shows escaped, not as mojibake */
	{ "Jos\xe9", "Jos\\xe9" },
	/* bidirectional override and isolate, line separator */
	{ "a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb" },
	{ "a\xe2\x81\xa6" "b", "a\\xe2\\x81\\xa6b" },
	{ "a\xe2\x80\xa8" "b", "a\\xe2\\x80\\xa8b" },
	/* the Arabic letter mark, the one Bidi_Control character outside
	 * U+200E..U+2069; the Arabic semicolon before it stays */
	{ "a\xd8\x9c" "b", "a\\xd8\\x9cb" },
	{ "\xd8\x9b", "\xd8\x9b" },
	/* the characters beside them stay: U+2027, U+2030, U+2070 */
	{ "\xe2\x80\xa7\xe2\x80\xb0\xe2\x81\xb0", "\xe2\x80\xa7\xe2\x80\xb0\xe2\x81\xb0" },
	/* well-formed characters with a continuation byte in 0x80..0x9F:
	 * readable to a UTF-8 terminal ("Û", "À", "ß", "一") */
	{ "\xc3\x9b" "31m", "\xc3\x9b" "31m" },
	{ "\xc3\x80\xc3\x9f\xe4\xb8\x80", "\xc3\x80\xc3\x9f\xe4\xb8\x80" },
};

/* Switch the locale the rule reads to name (LC_ALL), NULL: back to the
 * C.UTF-8 main() set. */
static void use_locale(const char *name)
{
	assert_int_equal(setenv("LC_ALL", name ? name : "C.UTF-8", 1), 0);
	hs_cli_charset_reset();
}

/* What a terminal outside UTF-8 must be shown for in: every byte that is
 * not printable ASCII as \xNN. */
static void escape_all(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (const unsigned char *u = (const unsigned char *)in; *u; u++) {
		assert_true(o + 5 < size);
		if (*u >= 0x20 && *u < 0x7f)
			out[o++] = (char)*u;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02x", *u);
	}
	out[o] = '\0';
}

static void test_printable_cases(void **state)
{
	(void)state;
	char out[256];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_string_equal(hs_printable(cases[i].in, out, sizeof out), cases[i].want);
		assert_string_equal(hs_printable_len(cases[i].in, strlen(cases[i].in), out,
						     sizeof out), cases[i].want);
	}
}

static void test_printable_char(void **state)
{
	(void)state;

	assert_int_equal(hs_printable_char("a", 1), 1);
	assert_int_equal(hs_printable_char("\x1b", 1), 0);
	assert_int_equal(hs_printable_char("\xc3\xa9", 2), 2);
	assert_int_equal(hs_printable_char("\xe6\x97\xa5", 3), 3);
	assert_int_equal(hs_printable_char("\xf0\x9f\x8e\x89", 4), 4);
	assert_int_equal(hs_printable_char("\xc2\x9b", 2), 0);
	assert_int_equal(hs_printable_char("\x9b", 1), 0);
	/* the length given bounds the look: no read past it */
	assert_int_equal(hs_printable_char("\xc3\xa9", 1), 0);
	assert_int_equal(hs_printable_char("\xf0\x9f\x8e\x89", 3), 0);
	assert_int_equal(hs_printable_char("a", 0), 0);
}

/* NUL and bytes past it are shown when a length is given (a file line) */
static void test_printable_len_nul(void **state)
{
	(void)state;
	char out[64];

	assert_string_equal(hs_printable_len("a\0\xc2\x9b\xc3\xa9", 6, out, sizeof out),
			    "a\\x00\\xc2\\x9b\xc3\xa9");
}

/* Cutting never splits a character, escaped or not, and always ends with
 * "..." and the NUL inside the buffer. */
static void test_printable_cut(void **state)
{
	(void)state;
	char out[16];

	memset(out, 'Z', sizeof out);
	/* 3 x "日" = 9 bytes; a 4th would leave no room for "..." */
	hs_printable("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5", out, 15);
	assert_string_equal(out, "\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5...");
	assert_int_equal(out[15], 'Z');
	/* escaped bytes are cut whole too */
	hs_printable("\x9b\x9b\x9b\x9b", out, 11);
	assert_string_equal(out, "\\x9b...");
	for (size_t size = 4; size <= sizeof out; size++) {
		char buf[sizeof out];

		hs_printable("\xc3\xa9\xc2\x9b\xe6\x97\xa5\xf0\x9f\x8e\x89", buf, size);
		assert_true(strlen(buf) < size);
	}
}

static void test_fputs_printable(void **state)
{
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);

		assert_non_null(f);
		hs_fputs_printable(cases[i].in, f);
		assert_int_equal(fclose(f), 0);
		assert_string_equal(buf, cases[i].want);
		free(buf);
	}
}

/* A string whose escaped form is longer than the buffer the line is
 * gathered in: written in parts, every byte still there once. */
static void test_fputs_printable_long(void **state)
{
	char in[3001];
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	(void)state;
	assert_non_null(f);
	for (size_t i = 0; i < 3000; i++)
		in[i] = i % 2 ? 'a' : '\x01';
	in[3000] = '\0';
	hs_fputs_printable(in, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(size, 1500 * 4 + 1500);
	for (size_t i = 0, o = 0; i < 3000; i++) {
		if (i % 2) {
			assert_int_equal(buf[o], 'a');
			o++;
		} else {
			assert_memory_equal(buf + o, "\\x01", 4);
			o += 4;
		}
	}
	free(buf);
}

/* What hs_warn, hs_report and hs_cli_warn_at write for a message quoting
 * s, from a child whose stderr is a pipe. */
static void message_output(int how, const char *s, char *out, size_t size)
{
	int p[2], st;

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct hs_err e = HS_ERR_INIT;

		dup2(p[1], STDERR_FILENO);
		hs_cli_set_prog("prog");
		if (how == 0) {
			hs_warn("bad '%s'", s);
		} else if (how == 1) {
			hs_err_set(&e, -EINVAL, "bad '%s'", s);
			hs_report(&e);
		} else if (how == 3) {
			/* LOG_PERROR: glibc copies the record to stderr */
			openlog("log", LOG_PERROR, LOG_USER);
			hs_err_setl(&e, -EINVAL, LOG_ERR, "bad '%s'", s);
			hs_report(&e);
		} else {
			hs_cli_warn_at(NULL, s, 3, s);
		}
		_exit(0);
	}
	close(p[1]);
	ssize_t n = hs_read_full(p[0], out, size - 1);
	assert_true(n >= 0);
	out[n] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_messages_share_the_rule(void **state)
{
	(void)state;
	char out[1024], want[1024];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		message_output(0, cases[i].in, out, sizeof out);
		snprintf(want, sizeof want, "prog: bad '%s'\n", cases[i].want);
		assert_string_equal(out, want);
		message_output(1, cases[i].in, out, sizeof out);
		assert_string_equal(out, want);
		/* the syslog record of a logged report, the same */
		message_output(3, cases[i].in, out, sizeof out);
		snprintf(want, sizeof want, "prog: bad '%s'\nlog: bad '%s'\n", cases[i].want,
			 cases[i].want);
		assert_string_equal(out, want);
		snprintf(want, sizeof want, "prog: bad '%s'\n", cases[i].want);
		/* the file name of a line report is escaped too */
		message_output(2, cases[i].in, out, sizeof out);
		snprintf(want, sizeof want, "prog: %s:3: %s\n", cases[i].want, cases[i].want);
		assert_string_equal(out, want);
	}
}

/* A message longer than the line buffer goes out in parts, and a
 * character on the seam is still written whole and unescaped. */
static void test_long_message_keeps_characters(void **state)
{
	(void)state;
	static char in[3 * 3000 + 1], out[16384], want[16384];

	for (size_t i = 0; i < 3000; i++)
		memcpy(in + 3 * i, "\xe6\x97\xa5", 3);
	message_output(0, in, out, sizeof out);
	snprintf(want, sizeof want, "prog: bad '%s'\n", in);
	assert_string_equal(out, want);
}

/* Out of memory (vasprintf fails: a small RLIMIT_AS, a huge argument),
 * the message still goes out by the rule, cut, never raw. */
static void test_message_out_of_memory(void **state)
{
	(void)state;
#ifdef UNDER_ASAN
	skip();
#endif
	const size_t big = 32u << 20;
	char path[] = "/tmp/hs-test-printable-XXXXXX", head[8192];
	int fd = mkstemp(path), st;

	assert_true(fd >= 0);
	unlink(path);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *s = malloc(big + 1);
		unsigned long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");

		if (!s || !f || fscanf(f, "%lu", &pages) != 1)
			_exit(2);
		fclose(f);
		for (size_t i = 0; i + 4 <= big; i += 4)
			memcpy(s + i, "\x1b[2J", 4);
		s[big] = '\0';
		/* room for stdio, not for another copy of s */
		struct rlimit as = { 0, 0 };
		as.rlim_cur = as.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + (4u << 20);
		if (setrlimit(RLIMIT_AS, &as) < 0 || malloc(big) != NULL)
			_exit(3);
		dup2(fd, STDERR_FILENO);
		hs_cli_set_prog("prog");
		hs_warn("bad '%s'", s);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ssize_t n = pread(fd, head, sizeof head - 1, 0);
	close(fd);
	assert_true(n > 20);
	head[n] = '\0';
	assert_null(memchr(head, 0x1b, (size_t)n));
	assert_memory_equal(head, "prog: bad '\\x1b[2J\\x1b[2J", 25);
}

/* Under "C" (no locale set: a cron job, an environment that names none)
 * every byte >= 0x80 goes out escaped, through every printer and
 * message: the terminal's charset is not known to be UTF-8. */
static void test_c_locale_escapes_every_high_byte(void **state)
{
	(void)state;
	char out[1024], want[1024], line[1100];

	use_locale("C");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);

		escape_all(cases[i].in, want, sizeof want);
		assert_string_equal(hs_printable(cases[i].in, out, sizeof out), want);
		assert_string_equal(hs_printable_len(cases[i].in, strlen(cases[i].in), out,
						     sizeof out), want);
		assert_non_null(f);
		hs_fputs_printable(cases[i].in, f);
		assert_int_equal(fclose(f), 0);
		assert_string_equal(buf, want);
		free(buf);
		message_output(0, cases[i].in, out, sizeof out);
		snprintf(line, sizeof line, "prog: bad '%s'\n", want);
		assert_string_equal(out, line);
		message_output(1, cases[i].in, out, sizeof out);
		assert_string_equal(out, line);
	}
	/* "Û": its second byte is CSI to an 8-bit terminal */
	assert_int_equal(hs_printable_char("\xc3\x9b", 2), 0);
	assert_int_equal(hs_printable_char("\xc3\xa9", 2), 0);
	assert_int_equal(hs_printable_char("a", 1), 1);
	assert_string_equal(hs_printable("\xc3\x9b" "2J", out, sizeof out), "\\xc3\\x9b2J");
	use_locale(NULL);
	assert_string_equal(hs_printable("\xc3\x9b" "2J", out, sizeof out), "\xc3\x9b" "2J");
}

/* The locale is the one setlocale(LC_CTYPE, "") would choose: LC_ALL,
 * then LC_CTYPE, then LANG; one that is not installed is not UTF-8. */
static void test_locale_variables(void **state)
{
	(void)state;
	static const struct {
		const char *all, *ctype, *lang;
		size_t want;
	} env[] = {
		{ NULL, NULL, NULL, 0 },
		{ NULL, NULL, "C.UTF-8", 2 },
		{ NULL, "C.UTF-8", "C", 2 },
		{ NULL, "C", "C.UTF-8", 0 },
		{ "C", NULL, "C.UTF-8", 0 },
		{ "C.UTF-8", "C", "C", 2 },
		{ "POSIX", NULL, NULL, 0 },
		{ NULL, NULL, "xx_NOPE.UTF-8", 0 },
	};

	for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
		const char *vals[] = { env[i].all, env[i].ctype, env[i].lang };
		const char *names[] = { "LC_ALL", "LC_CTYPE", "LANG" };

		for (size_t k = 0; k < 3; k++)
			assert_int_equal(vals[k] ? setenv(names[k], vals[k], 1) : unsetenv(names[k]), 0);
		hs_cli_charset_reset();
		assert_int_equal(hs_printable_char("\xc3\x9b", 2), env[i].want);
	}
	unsetenv("LC_CTYPE");
	unsetenv("LANG");
	use_locale(NULL);
}

/* An 8-bit charset (Latin-1, made with localedef when it is there): the
 * same escapes as "C", where 0x9B is CSI. */
static void test_latin1_locale_escapes(void **state)
{
	(void)state;
	char dir[] = "/tmp/hs-test-printable-XXXXXX", cmd[256];

	if (access("/usr/bin/localedef", X_OK) != 0 || !mkdtemp(dir))
		skip();
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/localedef -i en_US -f ISO-8859-1 %s/en_US.ISO-8859-1 >/dev/null 2>&1",
		 dir);
	int made = system(cmd) == 0;
	char codeset[32] = "", shown[64] = "";

	/* what the checks need is gathered before the directory goes, so a
	 * failing check leaves nothing behind; in a child that ends by _exit:
	 * glibc's newlocale keeps the LOCPATH list it built (a leak to
	 * LeakSanitizer, glibc's, not ours) */
	if (made) {
		int fds[2], status;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			locale_t loc;

			close(fds[0]);
			setenv("LOCPATH", dir, 1);
			loc = newlocale(LC_CTYPE_MASK, "en_US.ISO-8859-1", (locale_t)0);
			if (loc != (locale_t)0) {
				snprintf(codeset, sizeof codeset, "%s", nl_langinfo_l(CODESET, loc));
				freelocale(loc);
			}
			use_locale("en_US.ISO-8859-1");
			hs_printable("\xc3\x9b" "2J \xe9", shown, sizeof shown);
			(void)!write(fds[1], codeset, sizeof codeset);
			(void)!write(fds[1], shown, sizeof shown);
			_exit(0);
		}
		close(fds[1]);
		assert_int_equal(read(fds[0], codeset, sizeof codeset), (ssize_t)sizeof codeset);
		assert_int_equal(read(fds[0], shown, sizeof shown), (ssize_t)sizeof shown);
		close(fds[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if (!made)
		skip();
	/* the locale was there and 8-bit: the check below tests that */
	assert_string_equal(codeset, "ISO-8859-1");
	assert_string_equal(shown, "\\xc3\\x9b2J \\xe9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printable_cases),
		cmocka_unit_test(test_printable_char),
		cmocka_unit_test(test_printable_len_nul),
		cmocka_unit_test(test_printable_cut),
		cmocka_unit_test(test_fputs_printable),
		cmocka_unit_test(test_fputs_printable_long),
		cmocka_unit_test(test_messages_share_the_rule),
		cmocka_unit_test(test_long_message_keeps_characters),
		cmocka_unit_test(test_message_out_of_memory),
		cmocka_unit_test(test_c_locale_escapes_every_high_byte),
		cmocka_unit_test(test_locale_variables),
		cmocka_unit_test(test_latin1_locale_escapes),
	};

	/* the cases are what a UTF-8 terminal is shown, whatever the
	 * environment that runs the test */
	unsetenv("LC_CTYPE");
	unsetenv("LANG");
	use_locale(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
