/* Tests for lib/format/config.c: login.defs and /etc/default/useradd parsing,
 * number and boolean reading, hostile input, loading from files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "util.h"
#include "test_helpers.h"

struct warnings {
	int n;
	unsigned long last_line;
	char last[256];
};

static void collect(void *ctx, const char *path, unsigned long lineno, const char *message)
{
	struct warnings *w = ctx;

	assert_non_null(path);
	assert_non_null(message);
	w->n++;
	w->last_line = lineno;
	snprintf(w->last, sizeof w->last, "%s", message);
}

typedef int (*parse_fn)(const char *data, size_t len, const char *name,
			hs_config_warn_fn warn, void *ctx, struct hs_config **out);

/* Parse data that must be accepted, collecting the warnings in *w. */
static struct hs_config *parse_ok(parse_fn parse, const char *name, const char *data,
				  size_t len, struct warnings *w)
{
	struct hs_config *c = NULL;

	memset(w, 0, sizeof *w);
	assert_int_equal(parse(data, len, name, collect, w, &c), 0);
	assert_non_null(c);
	return c;
}

static struct hs_config *ld(const char *data, size_t len, struct warnings *w)
{
	return parse_ok(hs_config_logindefs_parse, "login.defs", data, len, w);
}

static struct hs_config *ua(const char *data, size_t len, struct warnings *w)
{
	return parse_ok(hs_config_useradd_defaults_parse, "useradd", data, len, w);
}

static void test_logindefs_basic(void **state)
{
	static const char text[] =
		"# comment\n"
		"\n"
		"   # indented comment\n"
		"MAIL_DIR        /var/mail\n"
		"\tUMASK\t\t022   \n"
		"ENV_PATH PATH=/usr/local/bin:/usr/bin:/bin\n"
		"ENV_SUPATH \"PATH=/usr/sbin:/usr/bin\"  \n"
		"TTYTYPE_FILE \"/etc/ttytype\"\t \r\n"
		"TTYGROUP tty\r\n"
		"TTYPERM 0620\n"
		"LOGIN_RETRIES 5\n"
		"CHFN_RESTRICT rwh\n"
		"SU_NAME su with spaces\n"
		"FAKE_SHELL \"\"\n"
		"HUSHLOGIN_FILE\n"
		"USERGROUPS_ENAB yes\n"
		"LOG_OK_LOGINS no\n"
		"LOG_UNKFAIL_ENAB No\n"
		"DEFAULT_HOME YES\n"
		"SULOG_FILE /var/log/sulog # not a comment\n"
		"FAIL_DELAY 3";   /* no final newline */
	struct warnings w;
	struct hs_config *c = ld(text, sizeof text - 1, &w);

	assert_int_equal(w.n, 0);
	assert_string_equal(hs_config_get_str(c, "MAIL_DIR", NULL), "/var/mail");
	assert_string_equal(hs_config_get_str(c, "UMASK", NULL), "022");
	assert_int_equal(hs_config_get_long(c, "UMASK", 0, 0777, -1), 022);
	assert_string_equal(hs_config_get_str(c, "ENV_PATH", NULL),
	                    "PATH=/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(hs_config_get_str(c, "ENV_SUPATH", NULL), "PATH=/usr/sbin:/usr/bin");
	assert_string_equal(hs_config_get_str(c, "TTYTYPE_FILE", NULL), "/etc/ttytype");
	assert_string_equal(hs_config_get_str(c, "TTYGROUP", NULL), "tty");
	assert_int_equal(hs_config_get_long(c, "TTYPERM", 0, 07777, -1), 0620);
	assert_int_equal(hs_config_get_long(c, "LOGIN_RETRIES", 0, 100, -1), 5);
	assert_string_equal(hs_config_get_str(c, "CHFN_RESTRICT", NULL), "rwh");
	assert_string_equal(hs_config_get_str(c, "SU_NAME", NULL), "su with spaces");
	assert_string_equal(hs_config_get_str(c, "FAKE_SHELL", "x"), "");
	assert_true(hs_config_has(c, "HUSHLOGIN_FILE"));
	assert_string_equal(hs_config_get_str(c, "HUSHLOGIN_FILE", "x"), "");
	assert_true(hs_config_get_bool(c, "USERGROUPS_ENAB", false));
	assert_false(hs_config_get_bool(c, "LOG_OK_LOGINS", true));
	assert_false(hs_config_get_bool(c, "LOG_UNKFAIL_ENAB", true));
	assert_true(hs_config_get_bool(c, "DEFAULT_HOME", false));
	assert_string_equal(hs_config_get_str(c, "SULOG_FILE", NULL), "/var/log/sulog # not a comment");
	assert_int_equal(hs_config_get_long(c, "FAIL_DELAY", 0, 100, -1), 3);

	/* missing keys give the defaults */
	assert_false(hs_config_has(c, "UID_MIN"));
	assert_null(hs_config_get_str(c, "UID_MIN", NULL));
	assert_string_equal(hs_config_get_str(c, "UID_MIN", "dflt"), "dflt");
	assert_int_equal(hs_config_get_long(c, "UID_MIN", 0, 100000, 1000), 1000);
	assert_true(hs_config_get_bool(c, "CREATE_HOME", true));
	assert_false(hs_config_get_bool(c, "CREATE_HOME", false));
	/* keys are case-sensitive, as in shadow-utils */
	assert_false(hs_config_has(c, "mail_dir"));
	hs_config_free(c);
}

static void test_logindefs_unknown_and_duplicates(void **state)
{
	static const char text[] =
		"UID_MIN 1000\n"
		"NOT_A_KEY 17\n"
		"UID_MIN 2000\n"
		"uid_min 5\n"
		"UID_MIN 0x1388\n";
	struct warnings w;
	struct hs_config *c = ld(text, sizeof text - 1, &w);

	assert_int_equal(w.n, 2);
	assert_int_equal(w.last_line, 4);
	assert_non_null(strstr(w.last, "uid_min"));
	assert_false(hs_config_has(c, "NOT_A_KEY"));
	/* the last one wins */
	assert_int_equal(hs_config_get_long(c, "UID_MIN", 0, 100000, -1), 5000);
	hs_config_free(c);
}

static void test_logindefs_hostile(void **state)
{
	struct warnings w;
	struct hs_config *c;

	/* NUL bytes: that line is dropped, the rest is read */
	static const char nul[] = "UID_MIN 1000\nUID_MAX 6\0000000\nGID_MIN 500\n";
	c = ld(nul, sizeof nul - 1, &w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.last_line, 2);
	assert_false(hs_config_has(c, "UID_MAX"));
	assert_int_equal(hs_config_get_long(c, "UID_MIN", 0, LONG_MAX, -1), 1000);
	assert_int_equal(hs_config_get_long(c, "GID_MIN", 0, LONG_MAX, -1), 500);
	hs_config_free(c);

	/* control characters (escape sequences, vertical tab, DEL) */
	static const char ctl[] = "MAIL_DIR /var/\x1b[31mmail\nTTYGROUP t\vty\nSU_NAME s\x7fu\nUMASK 077\n"
				  "# a comment with \x1b[31m in it is only a comment\n";
	c = ld(ctl, sizeof ctl - 1, &w);
	assert_int_equal(w.n, 3);
	assert_false(hs_config_has(c, "MAIL_DIR"));
	assert_false(hs_config_has(c, "TTYGROUP"));
	assert_false(hs_config_has(c, "SU_NAME"));
	assert_int_equal(hs_config_get_long(c, "UMASK", 0, 0777, -1), 077);
	hs_config_free(c);

	/* a huge line is skipped entirely, not split into pieces */
	size_t big = 100000;
	static const char tail[] = "\nUMASK 027\n";
	char *huge = malloc(big + 64);
	assert_non_null(huge);
	memset(huge, 'A', big + 64);
	memcpy(huge, "ENV_PATH ", 9);
	memcpy(huge + 9 + big, tail, sizeof tail);
	c = ld(huge, strlen(huge), &w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.last_line, 1);
	assert_false(hs_config_has(c, "ENV_PATH"));
	assert_int_equal(hs_config_get_long(c, "UMASK", 0, 0777, -1), 027);
	hs_config_free(c);
	/* ... and so is a huge line that is only a comment or blanks */
	memset(huge, ' ', big);
	huge[big] = '\0';
	c = ld(huge, strlen(huge), &w);
	assert_int_equal(w.n, 1);
	hs_config_free(c);
	free(huge);

	/* bad quoting and bad keys */
	static const char q[] =
		"ENV_PATH \"PATH=/bin\n"
		"ENV_SUPATH \"PATH=/sbin\" junk\n"
		"ENV_HZ \"HZ=100\"  x\t\n"
		"TTY-GROUP tty\n"
		"=x\n"
		"\"UMASK\" 022\n"
		"SU_NAME \"su\"\n";
	c = ld(q, sizeof q - 1, &w);
	assert_int_equal(w.n, 6);
	assert_false(hs_config_has(c, "ENV_PATH"));
	assert_false(hs_config_has(c, "ENV_SUPATH"));
	assert_false(hs_config_has(c, "ENV_HZ"));
	assert_false(hs_config_has(c, "UMASK"));
	assert_string_equal(hs_config_get_str(c, "SU_NAME", NULL), "su");
	hs_config_free(c);

	/* empty input, input without newline, lone newlines, a CR alone */
	c = ld("", 0, &w);
	assert_int_equal(w.n, 0);
	hs_config_free(c);
	c = ld(NULL, 0, &w);
	hs_config_free(c);
	c = ld("\n\n\n\r\n", 4, &w);
	assert_int_equal(w.n, 0);
	hs_config_free(c);
	c = ld("UMASK", 5, &w);
	assert_true(hs_config_has(c, "UMASK"));
	assert_int_equal(hs_config_get_long(c, "UMASK", 0, 0777, 022), 022);
	hs_config_free(c);

	/* a NULL callback is fine */
	c = NULL;
	assert_int_equal(hs_config_logindefs_parse("JUNK\n\x01\n", 7, "x", NULL, NULL, &c), 0);
	hs_config_free(c);
	hs_config_free(NULL);

	/* UTF-8 in values is not a control character */
	static const char utf8[] = "SU_NAME s\xc3\xbc\n";
	c = ld(utf8, sizeof utf8 - 1, &w);
	assert_int_equal(w.n, 0);
	assert_string_equal(hs_config_get_str(c, "SU_NAME", NULL), "s\xc3\xbc");
	hs_config_free(c);
}

static long num(const char *value, long min, long max, long def)
{
	char text[256];
	struct warnings w;

	snprintf(text, sizeof text, "UID_MIN %s\n", value);
	struct hs_config *c = ld(text, strlen(text), &w);
	long v = hs_config_get_long(c, "UID_MIN", min, max, def);
	hs_config_free(c);
	return v;
}

static void test_numbers(void **state)
{
	assert_int_equal(num("1000", 0, LONG_MAX, -7), 1000);
	assert_int_equal(num("0", 0, LONG_MAX, -7), 0);
	assert_int_equal(num("0x10", 0, LONG_MAX, -7), 16);
	assert_int_equal(num("0XfF", 0, LONG_MAX, -7), 255);
	assert_int_equal(num("010", 0, LONG_MAX, -7), 8);
	assert_int_equal(num("0777", 0, LONG_MAX, -7), 511);
	assert_int_equal(num("-1", LONG_MIN, LONG_MAX, -7), -1);
	assert_int_equal(num("+5", LONG_MIN, LONG_MAX, -7), 5);
	assert_int_equal(num("-0x10", LONG_MIN, LONG_MAX, -7), -16);
	assert_int_equal(num("\"42\"", 0, LONG_MAX, -7), 42);
	assert_int_equal(num("9223372036854775807", 0, LONG_MAX, -7), LONG_MAX);
	/* errors give the default */
	assert_int_equal(num("9223372036854775808", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("-9223372036854775809", LONG_MIN, LONG_MAX, -7), -7);
	assert_int_equal(num("0x", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("08", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("09", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("0x1g", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("12abc", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("1 2", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("\" 12\"", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("\"12 \"", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("-", LONG_MIN, LONG_MAX, -7), -7);
	assert_int_equal(num("+", LONG_MIN, LONG_MAX, -7), -7);
	assert_int_equal(num("--1", LONG_MIN, LONG_MAX, -7), -7);
	assert_int_equal(num("+-1", LONG_MIN, LONG_MAX, -7), -7);
	assert_int_equal(num("\"\"", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("1e3", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("1.5", 0, LONG_MAX, -7), -7);
	assert_int_equal(num("\"\t1\"", 0, LONG_MAX, -7), -7);
	/* range */
	assert_int_equal(num("60000", 1000, 60000, -7), 60000);
	assert_int_equal(num("60001", 1000, 60000, -7), -7);
	assert_int_equal(num("999", 1000, 60000, -7), -7);
	assert_int_equal(num("-1", 0, 10, -7), -7);
	assert_int_equal(num("0x7fffffffffffffff", LONG_MIN, LONG_MAX, -7), LONG_MAX);
	assert_int_equal(num("0x8000000000000000", LONG_MIN, LONG_MAX, -7), -7);
	/* NULL config = all defaults */
	assert_int_equal(hs_config_get_long(NULL, "UID_MIN", 0, 10, 3), 3);
	assert_null(hs_config_get_str(NULL, "UID_MIN", NULL));
	assert_true(hs_config_get_bool(NULL, "X", true));
	assert_false(hs_config_has(NULL, "X"));
}

static void test_bools(void **state)
{
	static const char text[] =
		"CREATE_HOME yes\nUSERGROUPS_ENAB YeS\nLOG_OK_LOGINS no\n"
		"SYSLOG_SU_ENAB maybe\nSYSLOG_SG_ENAB 1\nFAILLOG_ENAB \"yes\"\nLASTLOG_ENAB yess\n";
	struct warnings w;
	struct hs_config *c = ld(text, sizeof text - 1, &w);

	assert_int_equal(w.n, 0);
	assert_true(hs_config_get_bool(c, "CREATE_HOME", false));
	assert_true(hs_config_get_bool(c, "USERGROUPS_ENAB", false));
	assert_false(hs_config_get_bool(c, "LOG_OK_LOGINS", true));
	/* login.defs(5): anything other than yes is no */
	assert_false(hs_config_get_bool(c, "SYSLOG_SU_ENAB", true));
	assert_false(hs_config_get_bool(c, "SYSLOG_SG_ENAB", true));
	assert_true(hs_config_get_bool(c, "FAILLOG_ENAB", false));
	assert_false(hs_config_get_bool(c, "LASTLOG_ENAB", true));
	assert_true(hs_config_get_bool(c, "MISSING_KEY", true));
	hs_config_free(c);
}

static void test_known_keys(void **state)
{
	static const char *const known[] = {
		"ENCRYPT_METHOD", "YESCRYPT_COST_FACTOR", "SHA_CRYPT_MIN_ROUNDS",
		"SHA_CRYPT_MAX_ROUNDS", "BCRYPT_MIN_ROUNDS", "BCRYPT_MAX_ROUNDS",
		"UID_MIN", "UID_MAX", "SYS_UID_MIN", "SYS_UID_MAX", "GID_MIN", "GID_MAX",
		"SYS_GID_MIN", "SYS_GID_MAX", "SUB_UID_MIN", "SUB_UID_MAX", "SUB_UID_COUNT",
		"SUB_GID_MIN", "SUB_GID_MAX", "SUB_GID_COUNT", "USERGROUPS_ENAB",
		"LOGIN_RETRIES", "LOGIN_TIMEOUT", "FAIL_DELAY", "ENV_PATH", "ENV_SUPATH",
		"HUSHLOGIN_FILE", "DEFAULT_HOME", "LOG_OK_LOGINS", "LOG_UNKFAIL_ENAB",
		"TTYGROUP", "TTYPERM", "SULOG_FILE", "CHFN_RESTRICT", "PASS_MAX_DAYS",
		"PASS_MIN_DAYS", "PASS_WARN_AGE", "UMASK", "HOME_MODE", "MAIL_DIR",
		"MAIL_FILE", "MD5_CRYPT_ENAB", "CREATE_HOME", "USERDEL_CMD",
		"MAX_MEMBERS_PER_GROUP", "NONEXISTENT", "PREVENT_NO_AUTH", "FAKE_SHELL",
		"SU_NAME", "SYSLOG_SU_ENAB", "SYSLOG_SG_ENAB", "ERASECHAR", "KILLCHAR",
		"CONSOLE_GROUPS", "TTYTYPE_FILE", "LASTLOG_UID_MAX", "ENV_HZ",
		"FAILLOG_ENAB", "FTMP_FILE", "MOTD_FILE", "ISSUE_FILE", "PASS_MIN_LEN",
		"OBSCURE_CHECKS_ENAB", "CONSOLE", "ENV_TZ", "SU_WHEEL_ONLY",
		"FORCE_SHADOW", "GRANT_AUX_GROUP_PRIVS", "USE_TCB", "TCB_AUTH_GROUP",
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(known); i++) {
		if (!hs_config_logindefs_key_known(known[i]))
			fail_msg("%s should be known", known[i]);
	}
	assert_false(hs_config_logindefs_key_known("encrypt_method"));
	assert_false(hs_config_logindefs_key_known("ENCRYPT_METHOD "));
	assert_false(hs_config_logindefs_key_known(""));
	assert_false(hs_config_logindefs_key_known("FOO"));
	assert_false(hs_config_logindefs_key_known(NULL));

	/* the distribution's own login.defs loads without a warning */
	struct hs_config *c = NULL;
	struct warnings w = { 0 };
	if (access("/etc/login.defs", R_OK) == 0) {
		assert_int_equal(hs_config_logindefs_load("/etc/login.defs", collect, &w, &c), 0);
		if (w.n)
			fail_msg("/etc/login.defs:%lu: %s", w.last_line, w.last);
		hs_config_free(c);
	}
}

static void test_useradd(void **state)
{
	static const char text[] =
		"# useradd defaults\n"
		"GROUP=100\n"
		"HOME=/home\n"
		"INACTIVE=-1\n"
		"EXPIRE=\n"
		"SHELL=/bin/sh\n"
		"SKEL=/etc/skel\n"
		"CREATE_MAIL_SPOOL=no\n"
		"SHELL=/bin/bash\n"
		"GROUPS=users,audio\n"
		"LOG_INIT=yes\n"
		"USRSKEL=/usr/etc/skel\n"
		"FOO=bar\n"
		"HOME /home\n"
		"SHELL\n"
		"=x\n"
		"  # SKEL=/nowhere\n"
		"SKEL=/etc/sk el  \n";
	struct warnings w;
	struct hs_config *c = ua(text, sizeof text - 1, &w);

	assert_int_equal(w.n, 4);
	assert_int_equal(hs_config_get_long(c, "GROUP", 0, LONG_MAX, -7), 100);
	assert_string_equal(hs_config_get_str(c, "HOME", NULL), "/home");
	assert_int_equal(hs_config_get_long(c, "INACTIVE", -1, LONG_MAX, -7), -1);
	assert_true(hs_config_has(c, "EXPIRE"));
	assert_string_equal(hs_config_get_str(c, "EXPIRE", NULL), "");
	assert_string_equal(hs_config_get_str(c, "SHELL", NULL), "/bin/bash");
	assert_string_equal(hs_config_get_str(c, "SKEL", NULL), "/etc/sk el");
	assert_false(hs_config_get_bool(c, "CREATE_MAIL_SPOOL", true));
	assert_string_equal(hs_config_get_str(c, "GROUPS", NULL), "users,audio");
	assert_true(hs_config_get_bool(c, "LOG_INIT", false));
	assert_string_equal(hs_config_get_str(c, "USRSKEL", NULL), "/usr/etc/skel");
	assert_false(hs_config_has(c, "FOO"));
	hs_config_free(c);

	/* hostile input */
	static const char bad[] = "SHELL=/bin/\0sh\nHOME=/h\x1bome\nSKEL=/etc/skel\n";
	c = ua(bad, sizeof bad - 1, &w);
	assert_int_equal(w.n, 2);
	assert_false(hs_config_has(c, "SHELL"));
	assert_false(hs_config_has(c, "HOME"));
	assert_string_equal(hs_config_get_str(c, "SKEL", NULL), "/etc/skel");
	hs_config_free(c);
}

/* ---- loading from files ------------------------------------------ */

static char *make_tmpdir(void)
{
	char *d = strdup("/tmp/hs-test-config.XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void remove_tmpdir(char *d)
{
	remove_tree_path(d);
	free(d);
}

static void write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(hs_write_full(fd, data, len), 0);
	close(fd);
}

/* hs_config_logindefs_load() refuses path with err (0: any negative error)
 * and hands back no config. */
static void expect_load_refused(const char *path, int err)
{
	struct hs_config *c = NULL;
	struct warnings w = { 0 };
	int r = hs_config_logindefs_load(path, collect, &w, &c);

	if (err)
		assert_int_equal(r, err);
	else
		assert_true(r < 0);
	assert_null(c);
}

static void test_load_files(void **state)
{
	char *dir = make_tmpdir();
	char path[PATH_MAX], other[PATH_MAX];
	struct hs_config *c = NULL;
	struct warnings w = { 0 };

	/* missing file or directory: empty config */
	snprintf(path, sizeof path, "%s/login.defs", dir);
	assert_int_equal(hs_config_logindefs_load(path, collect, &w, &c), 0);
	assert_non_null(c);
	assert_false(hs_config_has(c, "UMASK"));
	hs_config_free(c);
	snprintf(other, sizeof other, "%s/nodir/useradd", dir);
	c = NULL;
	assert_int_equal(hs_config_useradd_defaults_load(other, collect, &w, &c), 0);
	assert_non_null(c);
	hs_config_free(c);

	/* a real file */
	static const char defs[] = "UMASK 027\nBOGUS 1\nENCRYPT_METHOD SHA512\n";
	write_file(path, defs, sizeof defs - 1);
	c = NULL;
	assert_int_equal(hs_config_logindefs_load(path, collect, &w, &c), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.last_line, 2);
	assert_int_equal(hs_config_get_long(c, "UMASK", 0, 0777, -1), 027);
	assert_string_equal(hs_config_get_str(c, "ENCRYPT_METHOD", NULL), "SHA512");
	hs_config_free(c);

	snprintf(other, sizeof other, "%s/useradd", dir);
	write_file(other, "SHELL=/bin/zsh\n", 15);
	c = NULL;
	assert_int_equal(hs_config_useradd_defaults_load(other, collect, &w, &c), 0);
	assert_string_equal(hs_config_get_str(c, "SHELL", NULL), "/bin/zsh");
	hs_config_free(c);

	/* a symlink as the last component is refused, not followed */
	snprintf(other, sizeof other, "%s/link.defs", dir);
	assert_int_equal(symlink(path, other), 0);
	expect_load_refused(other, -HS_E_SYMLINK);

	/* a FIFO does not block and is refused */
	snprintf(other, sizeof other, "%s/fifo.defs", dir);
	assert_int_equal(mkfifo(other, 0600), 0);
	expect_load_refused(other, -HS_E_NOTREG);

	/* a directory is refused */
	snprintf(other, sizeof other, "%s/dir.defs", dir);
	assert_int_equal(mkdir(other, 0700), 0);
	expect_load_refused(other, 0);

	/* a huge file is refused (the cap is 1 MiB) */
	snprintf(other, sizeof other, "%s/huge.defs", dir);
	int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4 * 1024 * 1024), 0);
	close(fd);
	expect_load_refused(other, -HS_E_TOOBIG);

	remove_tmpdir(dir);
}

static void test_warn_stderr(void **state)
{
	int fds[2];
	char buf[256] = { 0 };

	assert_int_equal(pipe(fds), 0);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fds[1], 2), 2);
	hs_cli_warn_at((void *)"useradd", "/etc/login.defs", 12, "unknown key FOO, ignored");
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	close(fds[1]);
	assert_true(read(fds[0], buf, sizeof buf - 1) > 0);
	close(fds[0]);
	assert_string_equal(buf, "useradd: /etc/login.defs:12: unknown key FOO, ignored\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logindefs_basic),
		cmocka_unit_test(test_logindefs_unknown_and_duplicates),
		cmocka_unit_test(test_logindefs_hostile),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_bools),
		cmocka_unit_test(test_known_keys),
		cmocka_unit_test(test_useradd),
		cmocka_unit_test(test_load_files),
		cmocka_unit_test(test_warn_stderr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
