/* /etc/login.defs and /etc/default/useradd.
 *
 * Both files are read whole (size-capped, never through a symlink as the
 * last component) and parsed line by line.  A bad line is reported through
 * the warning callback and skipped; it never makes loading fail, so a typo
 * in login.defs cannot lock administrators out of the account tools.
 *
 * Compatibility decisions (shadow-utils' getdef.c and useradd.c):
 *  - '#' starts a comment only as the first non-blank character of a line;
 *    "KEY value # text" has the value "value # text", as in shadow-utils.
 *  - trailing blanks (including a CR from a CRLF file) are ignored.
 *  - a key given twice: the last one wins.
 *  - login.defs keys shadow-utils does not know are warned about and
 *    dropped; so are unknown /etc/default/useradd keys.
 * Stricter than shadow-utils: lines longer than HS_CONFIG_LINE_MAX or with
 * control characters (including NUL) are skipped with a warning instead of
 * being split or truncated, and a quoted value must be closed. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "fileio.h"
#include "strbuf.h"
#include "util.h"

#define HS_CONFIG_LINE_MAX 4096
#define HS_CONFIG_FILE_MAX (1024 * 1024)

struct hs_config_entry {
	char *key;
	char *value;
};

struct hs_config {
	struct hs_config_entry *v;
	size_t n, cap;
};

/* Every key shadow-utils' getdef.c knows, including the ones it only
 * accepts (and ignores) when built with PAM and the TCB/syslog options,
 * so a stock login.defs from any distribution loads without warnings. */
static const char *const logindefs_keys[] = {
	"BCRYPT_MAX_ROUNDS", "BCRYPT_MIN_ROUNDS",
	"CHFN_AUTH", "CHFN_RESTRICT", "CHSH_AUTH", "CLOSE_SESSIONS",
	"CONSOLE", "CONSOLE_GROUPS", "CRACKLIB_DICTPATH", "CREATE_HOME",
	"DEFAULT_HOME",
	"ENCRYPT_METHOD", "ENVIRON_FILE", "ENV_HZ", "ENV_PATH", "ENV_SUPATH",
	"ENV_TZ", "ERASECHAR",
	"FAILLOG_ENAB", "FAIL_DELAY", "FAKE_SHELL", "FORCE_SHADOW", "FTMP_FILE",
	"GID_MAX", "GID_MIN", "GRANT_AUX_GROUP_PRIVS",
	"HMAC_CRYPTO_ALGO", "HOME_MODE", "HUSHLOGIN_FILE",
	"ISSUE_FILE",
	"KILLCHAR",
	"LASTLOG_ENAB", "LASTLOG_UID_MAX", "LOGIN_RETRIES", "LOGIN_STRING",
	"LOGIN_TIMEOUT", "LOG_OK_LOGINS", "LOG_UNKFAIL_ENAB",
	"MAIL_CHECK_ENAB", "MAIL_DIR", "MAIL_FILE", "MAX_MEMBERS_PER_GROUP",
	"MD5_CRYPT_ENAB", "MOTD_FILE",
	"NOLOGINS_FILE", "NONEXISTENT", "NO_PASSWORD_CONSOLE",
	"OBSCURE_CHECKS_ENAB",
	"PASS_ALWAYS_WARN", "PASS_CHANGE_TRIES", "PASS_MAX_DAYS", "PASS_MAX_LEN",
	"PASS_MIN_DAYS", "PASS_MIN_LEN", "PASS_WARN_AGE", "PORTTIME_CHECKS_ENAB",
	"PREVENT_NO_AUTH",
	"QMAIL_DIR", "QUOTAS_ENAB",
	"SHA_CRYPT_MAX_ROUNDS", "SHA_CRYPT_MIN_ROUNDS",
	"SHELL_PROXY",          /* ours: a listed shell goes behind the shell proxy */
	"SUB_GID_COUNT", "SUB_GID_MAX", "SUB_GID_MIN",
	"SUB_UID_COUNT", "SUB_UID_MAX", "SUB_UID_MIN",
	"SULOG_FILE", "SU_NAME", "SU_WHEEL_ONLY",
	"SYSLOG_SG_ENAB", "SYSLOG_SU_ENAB",
	"SYS_GID_MAX", "SYS_GID_MIN", "SYS_UID_MAX", "SYS_UID_MIN",
	"TCB_AUTH_GROUP", "TCB_SYMLINKS", "TTYGROUP", "TTYPERM", "TTYTYPE_FILE",
	"UID_MAX", "UID_MIN", "ULIMIT", "UMASK", "USERDEL_CMD", "USERGROUPS_ENAB",
	"USE_TCB",
	"YESCRYPT_COST_FACTOR",
};

static const char *const useradd_keys[] = {
	"CREATE_MAIL_SPOOL", "EXPIRE", "GROUP", "GROUPS", "HOME", "INACTIVE",
	"LOG_INIT", "SHELL", "SKEL", "USRSKEL",
};

static bool key_in(const char *const *keys, size_t n, const char *key)
{
	/* the first byte inline: most keys are passed over with no call */
	for (size_t i = 0; i < n; i++)
		if (keys[i][0] == key[0] && strcmp(keys[i], key) == 0)
			return true;
	return false;
}

bool hs_config_logindefs_key_known(const char *key)
{
	return key && key_in(logindefs_keys, HS_ARRAY_SIZE(logindefs_keys), key);
}

void hs_config_free(struct hs_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
	}
	free(c->v);
	free(c);
}

static struct hs_config_entry *find_entry(const struct hs_config *c, const char *key)
{
	if (!c || !key)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].key, key) == 0)
			return &c->v[i];
	return NULL;
}

/* Store key=value, replacing an earlier value: the last one wins. */
static int config_set(struct hs_config *c, const char *key, size_t keylen,
                      const char *value, size_t valuelen)
{
	_cleanup_free_ char *k = strndup(key, keylen);
	_cleanup_free_ char *v = strndup(value, valuelen);

	if (!k || !v)
		return -ENOMEM;
	struct hs_config_entry *e = find_entry(c, k);
	if (e) {
		free(e->value);
		e->value = TAKE_PTR(v);
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct hs_config_entry *nv = reallocarray(c->v, cap, sizeof *nv);
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = cap;
	}
	c->v[c->n].key = TAKE_PTR(k);
	c->v[c->n].value = TAKE_PTR(v);
	c->n++;
	return 0;
}

__attribute__((format(printf, 5, 6)))
static void warnf(hs_config_warn_fn warn, void *ctx, const char *name,
                  unsigned long lineno, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	warn(ctx, name, lineno, msg);
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static bool is_key_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

enum syntax { SYNTAX_LOGINDEFS, SYNTAX_USERADD };

/* Parse one line that has passed the length and control-character checks
 * and is neither blank nor a comment.  Returns 0 (stored or warned about)
 * or -ENOMEM. */
static int parse_line(struct hs_config *c, enum syntax syn, const char *s, size_t len,
                      const char *name, unsigned long lineno,
                      hs_config_warn_fn warn, void *ctx)
{
	const char *end = s + len;
	const char *key = s, *p = s;

	while (p < end && is_key_char(*p))
		p++;
	size_t keylen = (size_t)(p - key);
	/* useradd's KEY=VALUE needs its '='; login.defs takes a bare KEY */
	if (keylen == 0 || keylen > 64 ||
	    (syn == SYNTAX_USERADD ? p == end || *p != '=' : p < end && !is_blank(*p))) {
		warnf(warn, ctx, name, lineno, "%s, line ignored",
		      syn == SYNTAX_USERADD ? "expected KEY=VALUE" : "invalid key");
		return 0;
	}
	if (p < end)
		p++;   /* the '=' or the first blank */

	const char *value = p;
	size_t valuelen;
	if (syn == SYNTAX_LOGINDEFS) {
		while (p < end && is_blank(*p))
			p++;
		value = p;
		if (p < end && *p == '"') {
			const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
			if (!close) {
				warnf(warn, ctx, name, lineno, "unterminated quote, line ignored");
				return 0;
			}
			/* parse_config cut the trailing blanks: what follows is text */
			if (close + 1 < end) {
				warnf(warn, ctx, name, lineno,
				      "text after closing quote, line ignored");
				return 0;
			}
			value = p + 1;
			end = close;
		}
	}
	valuelen = (size_t)(end - value);

	char keybuf[65];
	memcpy(keybuf, key, keylen);
	keybuf[keylen] = '\0';
	bool known = syn == SYNTAX_LOGINDEFS
		? hs_config_logindefs_key_known(keybuf)
		: key_in(useradd_keys, HS_ARRAY_SIZE(useradd_keys), keybuf);
	if (!known) {
		warnf(warn, ctx, name, lineno, "unknown key %s, ignored", keybuf);
		return 0;
	}
	return config_set(c, key, keylen, value, valuelen);
}

static int parse_config(const char *data, size_t len, const char *name, enum syntax syn,
                        hs_config_warn_fn warn, void *ctx, struct hs_config **out)
{
	struct hs_config *c;
	struct hs_line_iter it;
	const char *line;
	size_t n;

	if (!out)
		return -EINVAL;
	c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	if (!name)
		name = "(config)";
	hs_strbuf_lines_init(&it, data, data ? len : 0);
	while (hs_strbuf_line_next(&it, &line, &n)) {
		if (n > HS_CONFIG_LINE_MAX) {
			warnf(warn, ctx, name, it.lineno, "line too long, ignored");
			continue;
		}
		while (n > 0 && (is_blank(line[n - 1]) || line[n - 1] == '\r'))
			n--;
		while (n > 0 && is_blank(*line)) {
			line++;
			n--;
		}
		/* a comment says nothing: its bytes are not even looked at
		 * (most of Debian's login.defs) */
		if (n == 0 || line[0] == '#')
			continue;
		/* the length of the prefix without a control character but tab */
		size_t clean = 0;
		while (clean < n && ((unsigned char)line[clean] >= 0x20 || line[clean] == '\t') &&
		       line[clean] != 0x7f)
			clean++;
		if (clean < n) {
			warnf(warn, ctx, name, it.lineno, "control character, line ignored");
			continue;
		}
		int r = parse_line(c, syn, line, n, name, it.lineno, warn, ctx);
		if (r < 0) {
			hs_config_free(c);
			return r;
		}
	}
	*out = c;
	return 0;
}

int hs_config_logindefs_parse(const char *data, size_t len, const char *name,
                       hs_config_warn_fn warn, void *ctx, struct hs_config **out)
{
	return parse_config(data, len, name, SYNTAX_LOGINDEFS, warn, ctx, out);
}

int hs_config_useradd_defaults_parse(const char *data, size_t len, const char *name,
                              hs_config_warn_fn warn, void *ctx, struct hs_config **out)
{
	return parse_config(data, len, name, SYNTAX_USERADD, warn, ctx, out);
}

/* Read path whole; a missing file (or directory) is an empty config. */
static int load_config(const char *path, enum syntax syn, hs_config_warn_fn warn,
                       void *ctx, struct hs_config **out)
{
	/* a root-owned file's other names as for the account files
	 * (HS_FILE_EXPECT_GLOBAL): login.defs lives in /etc */
	const struct hs_file_expect ex = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = HS_CONFIG_FILE_MAX,
		.root_links_ok = true,
	};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r;

	if (!path)
		return -EINVAL;
	r = hs_fileio_read_alloc_path(path, &ex, &data, &len);
	if (r < 0 && r != -ENOENT)
		return r;
	return parse_config(data, len, path, syn, warn, ctx, out);
}

int hs_config_logindefs_load(const char *path, hs_config_warn_fn warn, void *ctx, struct hs_config **out)
{
	return load_config(path, SYNTAX_LOGINDEFS, warn, ctx, out);
}

int hs_config_useradd_defaults_load(const char *path, hs_config_warn_fn warn, void *ctx,
                             struct hs_config **out)
{
	return load_config(path, SYNTAX_USERADD, warn, ctx, out);
}

const char *hs_config_get_str(const struct hs_config *c, const char *key, const char *def)
{
	const struct hs_config_entry *e = find_entry(c, key);

	return e ? e->value : def;
}

bool hs_config_has(const struct hs_config *c, const char *key)
{
	return find_entry(c, key) != NULL;
}

/* strtol with base 0, as shadow-utils reads login.defs numbers (decimal,
 * 0x hex, leading-0 octal), but with every error checked: no leading
 * blanks, no empty digits ("0x", "-"), no trailing junk, no overflow. */
static int parse_long_base0(const char *s, long *out)
{
	const char *digits = s;
	char *end;

	if (*digits == '+' || *digits == '-')
		digits++;
	if (*digits < '0' || *digits > '9')
		return -HS_E_FORMAT;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno == ERANGE)
		return -HS_E_RANGE;
	if (errno != 0 || end == s || *end != '\0')
		return -HS_E_FORMAT;
	*out = v;
	return 0;
}

long hs_config_get_long(const struct hs_config *c, const char *key, long min, long max, long def)
{
	const char *s = hs_config_get_str(c, key, NULL);
	long v;

	if (!s || parse_long_base0(s, &v) < 0 || v < min || v > max)
		return def;
	return v;
}

bool hs_config_get_bool(const struct hs_config *c, const char *key, bool def)
{
	const char *s = hs_config_get_str(c, key, NULL);

	if (!s)
		return def;
	/* login.defs(5): a value other than "yes" or "no" means no */
	return strcasecmp(s, "yes") == 0;
}
