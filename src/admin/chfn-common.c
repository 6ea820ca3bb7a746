/* chfn: change a user's finger (GECOS) information in /etc/passwd.
 *
 * GECOS lives in the global /etc/passwd, so every change is a rewrite of
 * that file under the global locks (DESIGN §4).  Two programs share this
 * file's chfn_main(): chfn.c, the default, is a root tool (plain 0755)
 * that refuses anyone else; chfn-setuid.c, which the meson option
 * setuid_chfn installs as chfn, setuid root (DESIGN §5), lets a user
 * change their own entry only, the fields CHFN_RESTRICT of login.defs
 * allows, after authenticating through the PAM service "chfn".
 *
 * Options, prompts, messages and exit codes follow shadow-utils' chfn(1)
 * (Debian 12, shadow 4.13); where we differ on purpose, chfn(1) of this
 * package says so. */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "layout.h"
#include "pamconv.h"
#include "privs.h"
#include "pwedit.h"
#include "records.h"
#include "chfn-common.h"
#include "util.h"

/* shadow-utils' chfn: 1 for every refusal and failure, 2 for usage. */
#define E_SUCCESS  0
#define E_NOPERM   1
#define E_USAGE    2

/* shadow-utils refuses a field given on the command line longer than 80
 * bytes ("fields too long"); we apply it to every new value, prompted or
 * not.  The whole GECOS is bounded by the record formatter's limit. */
#define FIELD_MAX 80

enum field { F_FULL, F_ROOM, F_WORK, F_HOME, F_OTHER, F_COUNT };

static const struct {
	char letter;            /* CHFN_RESTRICT's letter; 0: root only */
	const char *prompt;     /* shadow-utils' prompt label */
	const char *what;       /* names the field in messages */
	const char *forbidden;  /* printable ASCII bytes refused in the field */
} fields[F_COUNT] = {
	[F_FULL]  = { 'f', "Full Name",   "name",              ":,=" },
	[F_ROOM]  = { 'r', "Room Number", "room number",       ":,=" },
	[F_WORK]  = { 'w', "Work Phone",  "work phone",        ":,=" },
	[F_HOME]  = { 'h', "Home Phone",  "home phone",        ":,=" },
	/* the rest of the GECOS: comma-separated, "key=value" by custom
	 * (shadow-utils refuses only ':' there) */
	[F_OTHER] = { 0,   "Other",       "other information", ":" },
};

static bool amroot;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [LOGIN]",
		     "  -f, --full-name FULL_NAME     change user's full name\n"
		     "  -h, --home-phone HOME_PHONE   change user's home phone number\n"
		     "  -o, --other OTHER_INFO        change user's other GECOS information\n"
		     "  -r, --room ROOM_NUMBER        change user's room number\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -u, --help                    display this help message and exit\n"
		     "  -w, --work-phone WORK_PHONE   change user's office phone number\n",
		     "\n");
}

/* Length of the well-formed UTF-8 sequence at s (no overlong form, no
 * surrogate, at most U+10FFFF) and its code point, or 0 when s does not
 * start one. */
static size_t utf8_sequence(const unsigned char *s, unsigned long *cp)
{
	size_t n, i;
	unsigned long v, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2; v = s[0] & 0x1f; min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3; v = s[0] & 0x0f; min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4; v = s[0] & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)      /* also stops at the NUL */
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* shadow-utils' rule (the field's separators and newline refused) made
 * strict: no control character at all, C0, DEL or C1 -- as a UTF-8
 * sequence (U+0080..U+009F) or as a stray byte 0x80..0x9f, which some
 * terminals take as C1 controls.  Other non-ASCII bytes (UTF-8 names,
 * legacy Latin-1 entries) are accepted. */
static bool field_valid(enum field f, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	unsigned long cp;
	size_t n;

	while (*s) {
		if (*s < 0x80) {
			if (*s < 0x20 || *s == 0x7f || strchr(fields[f].forbidden, *s))
				return false;
			s++;
			continue;
		}
		n = utf8_sequence(s, &cp);
		if (n == 0) {
			if (*s <= 0x9f)
				return false;
			n = 1;
		} else if (cp <= 0x9f) {
			return false;
		}
		s += n;
	}
	return true;
}

/* Every new value given (NULL: unchanged), in field order. */
static void check_fields(char *newv[F_COUNT])
{
	char shown[256];

	for (int f = F_FULL; f < F_COUNT; f++) {
		if (newv[f] && !field_valid(f, newv[f]))
			hs_die(E_NOPERM, "invalid %s: '%s'", fields[f].what,
			       hs_printable(newv[f], shown, sizeof(shown)));
		if (newv[f] && strlen(newv[f]) > FIELD_MAX)
			hs_die(E_NOPERM, "fields too long: the %s is longer than %d bytes",
			       fields[f].what, FIELD_MAX);
	}
}

/* ---- the GECOS fields ---- */

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		hs_die(E_NOPERM, "out of memory");
	return p;
}

static void free_fields(char *v[F_COUNT])
{
	for (int i = 0; i < F_COUNT; i++)
		free(v[i]);
}

/* Split GECOS as shadow-utils does: the first four comma-separated
 * subfields are name, room, work and home phone, everything after them is
 * "other".  A subfield holding '=' is a "key=value" of other's, not one of
 * the four: it moves to other and the next subfield takes its place.
 * 0, or -ENOMEM with what was made in out (free_fields frees it): it runs
 * under the global locks too, where chfn must not die. */
static int split_gecos(const char *gecos, char *out[F_COUNT])
{
	_cleanup_free_ char *work = strdup(gecos);
	_cleanup_free_ char *other = malloc(strlen(gecos) + 2);
	char *cur, *next;
	bool other_started = false;     /* set even by an empty subfield */
	int f = F_FULL;

	if (!work || !other)
		return -ENOMEM;
	other[0] = '\0';
	for (cur = work; cur; cur = next) {
		next = strchr(cur, ',');
		if (next)
			*next++ = '\0';
		if (f < F_OTHER && !strchr(cur, '=')) {
			out[f] = strdup(cur);
			if (!out[f++])
				return -ENOMEM;
			continue;
		}
		if (other_started)
			strcat(other, ",");
		strcat(other, cur);
		other_started = true;
	}
	for (; f < F_OTHER; f++) {
		out[f] = strdup("");
		if (!out[f])
			return -ENOMEM;
	}
	out[F_OTHER] = strdup(other);
	return out[F_OTHER] ? 0 : -ENOMEM;
}

/* "full,room,work,home[,other]" without trailing commas, as shadow-utils
 * writes it, into *out; 0, -HS_E_TOOBIG when longer than HS_GECOS_MAX, or
 * -ENOMEM. */
static int join_gecos(char *v[F_COUNT], char **out)
{
	char *gecos;
	size_t len;

	if (asprintf(&gecos, "%s,%s,%s,%s%s%s", v[F_FULL], v[F_ROOM], v[F_WORK], v[F_HOME],
		     v[F_OTHER][0] ? "," : "", v[F_OTHER]) < 0)
		return -ENOMEM;
	len = strlen(gecos);
	while (len > 0 && gecos[len - 1] == ',')
		gecos[--len] = '\0';
	if (len > HS_GECOS_MAX) {
		free(gecos);
		return -HS_E_TOOBIG;
	}
	*out = gecos;
	return 0;
}

/* ---- who may change what ---- */

/* CHFN_RESTRICT, for a non-root caller of the setuid build: the letters of
 * the fields a user may change ("yes" = rwh, "no" or unset = none); other
 * information is root's only. */
static bool may_change(const struct hs_config *defs, enum field f)
{
	const char *allowed;

	if (amroot)
		return true;
	if (!fields[f].letter || !defs)
		return false;
	allowed = hs_config_get_str(defs, "CHFN_RESTRICT", "");
	if (strcmp(allowed, "yes") == 0)
		allowed = "rwh";
	return strchr(allowed, fields[f].letter) != NULL;
}

/* ---- the interactive prompt ---- */

/* isspace() in the C locale but '\n', whatever the user's locale says */
#define BLANKS " \t\r\v\f"

/* shadow-utils' change_field: an empty line (or end of input) keeps the
 * value (NULL), a line of blanks empties it, anything else is trimmed of
 * surrounding blanks.  Returns a malloc'd string or NULL. */
static char *prompt_field(enum field f, const char *current)
{
	char shown[256];
	char line[HS_GECOS_MAX + 2];
	char *start, *end, *nl;

	printf("\t%s [%s]: ", fields[f].prompt, hs_printable(current, shown, sizeof(shown)));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return NULL;
	nl = strchr(line, '\n');
	if (!nl && strlen(line) == sizeof(line) - 1)
		hs_die(E_NOPERM, "fields too long: the %s is longer than %d bytes",
		       fields[f].what, FIELD_MAX);
	if (!nl || nl == line)
		return NULL;
	*nl = '\0';
	start = line + strspn(line, BLANKS);
	for (end = nl; end > start && strchr(BLANKS, end[-1]); end--)
		;
	*end = '\0';
	return xstrdup(start);
}

static void prompt_fields(const char *name, const char *gecos, const struct hs_config *defs,
			  char *newv[F_COUNT])
{
	char *cur[F_COUNT] = { NULL };
	char shown[256];

	if (split_gecos(gecos, cur) < 0)
		hs_die(E_NOPERM, "out of memory");
	printf("Changing the user information for %s\n", hs_printable(name, shown, sizeof(shown)));
	puts("Enter the new value, or press ENTER for the default");
	for (int f = F_FULL; f < F_COUNT; f++) {
		if (may_change(defs, f))
			newv[f] = prompt_field(f, cur[f]);
		else if (f != F_OTHER)
			printf("\t%s: %s\n", fields[f].prompt,
			       hs_printable(cur[f], shown, sizeof(shown)));
	}
	free_fields(cur);
}

/* ---- the change ---- */

/* Apply the new values to the entry as it is in /etc/passwd under the
 * lock (see hs_pwedit_begin).  Nothing is said to the caller until the
 * locks are released: a setuid chfn's stderr is the caller's, who can
 * leave it full (a pipe) or stopped (a terminal), and a message waiting
 * there must not keep every account tool out of /etc/passwd. */
static int update_gecos(const char *name, char *newv[F_COUNT])
{
	struct hs_pwedit e = HS_PWEDIT_INIT;
	struct hs_err err = HS_ERR_INIT;
	char *v[F_COUNT] = { NULL };
	_cleanup_free_ char *gecos = NULL;
	int r, status = E_NOPERM;

	if (hs_pwedit_begin(&e, name, &err) < 0)
		goto out;
	r = split_gecos(e.ent.gecos, v);
	for (int f = F_FULL; f < F_COUNT && r == 0; f++) {
		if (newv[f]) {
			free(v[f]);
			v[f] = strdup(newv[f]);
			r = v[f] ? 0 : -ENOMEM;
		}
	}
	if (r == 0)
		r = join_gecos(v, &gecos);
	if (r == -HS_E_TOOBIG)
		hs_err_set(&err, r, "fields too long: the GECOS field would be longer than %d "
			   "bytes", HS_GECOS_MAX);
	else if (r < 0)
		hs_err_set(&err, r, "out of memory");
	if (r < 0)
		goto out;
	if (strcmp(gecos, e.ent.gecos) != 0) {
		e.ent.gecos = gecos;
		if (hs_pwedit_commit(&e, &err) < 0)
			goto out;
	}
	status = E_SUCCESS;
out:
	free_fields(v);
	hs_pwedit_end(&e);
	hs_report(&err);
	return status;
}

static void parse_options(int argc, char **argv, char *newv[F_COUNT])
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "full-name",  required_argument, NULL, 'f' },
		{ "home-phone", required_argument, NULL, 'h' },
		{ "other",      required_argument, NULL, 'o' },
		{ "room",       required_argument, NULL, 'r' },
		{ "root",       required_argument, NULL, 'R' },
		{ "help",       no_argument,       NULL, 'u' },
		{ "work-phone", required_argument, NULL, 'w' },
		{ "version",    no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, f;

	while ((c = getopt_long(argc, argv, "f:h:o:r:R:uw:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': f = F_FULL;  break;
		case 'r': f = F_ROOM;  break;
		case 'w': f = F_WORK;  break;
		case 'h': f = F_HOME;  break;
		case 'o': f = F_OTHER; break;
		case 'u':
			usage(E_SUCCESS);
		case 'R':
			/* The other root has its own login.defs, PAM and locks;
			 * only running inside it gets them right. */
			hs_die(E_USAGE, "option --root is not supported; run chfn inside that "
			       "root instead (chroot %s chfn ...)", optarg);
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
		free(newv[f]);
		newv[f] = xstrdup(optarg);
	}
	if (argc > optind + 1)
		usage(E_USAGE);
}

int chfn_main(int argc, char **argv, enum chfn_mode mode)
{
	char *newv[F_COUNT] = { NULL };
	struct hs_config *defs = NULL;
	_cleanup_free_ char *mebuf = NULL;
	_cleanup_free_ char *pwbuf = NULL;
	struct passwd me, pw;
	struct hs_err err = HS_ERR_INIT;
	bool any_option = false;
	const char *name;
	int r, status;

	hs_privs_init(argc, argv, "chfn");
	hs_cli_set_prog("chfn");
	amroot = hs_privs_caller_is_root();
	parse_options(argc, argv, newv);
	openlog("chfn", LOG_PID, LOG_AUTHPRIV);
	setlocale(LC_ALL, "");

	/* The root tool, or the self-service one installed without its
	 * bit: only root can write /etc/passwd; say so before asking for
	 * anything. */
	if (!amroot && (mode != CHFN_SELF_SERVICE || geteuid() != 0)) {
		fprintf(stderr, "%s: Permission denied.\n", hs_cli_prog());
		return E_NOPERM;
	}

	if (hs_pwedit_who(optind < argc ? argv[optind] : NULL, &me, &mebuf, &pw, &pwbuf,
			  &err) < 0)
		hs_report_die(E_NOPERM, &err);
	name = pw.pw_name;

	if (!amroot) {
		if (pw.pw_uid != getuid()) {
			char shown[HS_NAME_MAX * 4 + 8];

			hs_printable(name, shown, sizeof(shown));
			syslog(LOG_WARNING, "can't change gecos for '%s'", shown);
			fprintf(stderr, "You may not change the user information for %s.\n", shown);
			return E_NOPERM;
		}
		r = hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs);
		if (r < 0)
			hs_die(E_NOPERM, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
	}
	for (int f = F_FULL; f < F_COUNT; f++) {
		if (!newv[f])
			continue;
		any_option = true;
		if (!may_change(defs, f)) {
			fprintf(stderr, "%s: Permission denied.\n", hs_cli_prog());
			return E_NOPERM;
		}
	}
	check_fields(newv);     /* before asking for a password */

	/* as shadow-utils: the PAM service "chfn" authenticates the caller
	 * (root passes through pam_rootok) */
	if (hs_pamconv_authenticate("chfn", me.pw_name, &err) < 0)
		hs_report_die(E_NOPERM, &err);
	/* out of a cgroup the caller may freeze (hs_privs_unstoppable) now:
	 * once confined, chfn may not write to /sys */
	if (!amroot)
		hs_privs_leave_callers_cgroup();
	/* authenticated: from here the kernel lets chfn write /etc only */
	hs_confine_to_etc(E_NOPERM);

	if (!any_option) {
		prompt_fields(name, pw.pw_gecos ? pw.pw_gecos : "", defs, newv);
		check_fields(newv);
	}
	hs_config_free(defs);

	/* From here on the caller cannot stop us while we hold the locks
	 * that every account tool needs (useradd, systemd-sysusers). */
	if (!amroot && hs_privs_unstoppable() < 0) {
		syslog(LOG_ERR, "can't setuid(0)");
		hs_die(E_NOPERM, "Cannot change ID to root.");
	}
	status = update_gecos(name, newv);
	if (status == E_SUCCESS)
		syslog(LOG_INFO, "changed user '%s' information", name);
	free_fields(newv);
	closelog();
	return status;
}
