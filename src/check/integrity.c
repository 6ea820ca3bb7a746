/* Integrity checks for pwck and grpck (see integrity.h).
 *
 * The tree is hostile to root (DESIGN §3): every look at it is an
 * fstatat(AT_SYMLINK_NOFOLLOW) relative to a directory fd, every open is
 * O_NOFOLLOW|O_NONBLOCK and is followed by an fstat that must show the
 * inode that was checked, and every repair goes through such an fd or
 * through the library's atomic replace and no-follow removal. */
#include "integrity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "fileio.h"
#include "walk.h"
#include "globalfile.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "strbuf.h"
#include "tempname.h"
#include "timeouts.h"
#include "txn.h"
#include "userdir.h"
#include "util.h"

/* How much of a file line a prompt shows ("delete line '...'? "): a
 * 64 KiB member list is cut, not printed whole. */
#define LINE_SHOW_MAX 512
/* usermod -l renames a directory to this reserved name while it works
 * (src/admin/usermod.c); a leftover is finished by running it again. */
#define USERMOD_L_PREFIX ".usermod-l."
/* a path below a user's directory, with a shown name (the tree may be
 * below another root: --root) */
#define SUBPATH_BUF (HS_PATHBUF_MAX + LINE_SHOW_MAX)
/* appended to the problems the NSS module's fast path does not see */
#define NSS_NOTE " (getspnam() through the NSS module does not check this)"

/* ------------------------------------------------------------------ */
/* output                                                             */

static bool warnings_on(const struct hs_integrity *a)
{
	return !(a->flags & HS_INTEGRITY_NO_WARNINGS);
}

/* One line out, or into the held report (an allocation failure there
 * only costs the line's place: it is said at once). */
static void emit(struct hs_integrity *a, const char *line)
{
	if (a->held && hs_strbuf_append(a->held, line, strlen(line) + 1) == 0)
		return;
	a->io.say(a->io.ctx, line);
}

/* Hold the report of one entry back (its lines and counts). */
static void hold_begin(struct hs_integrity *a, struct hs_buf *b)
{
	*b = (struct hs_buf){ 0 };
	a->held = b;
	a->held_problems = a->problems;
	a->held_failures = a->failures;
	a->held_unreadable = a->unreadable;
	a->held_notes = a->notes;
}

/* Say what was held (confirmed) or drop it with its counts. */
static void hold_end(struct hs_integrity *a, bool say_it)
{
	struct hs_buf *b = a->held;

	a->held = NULL;
	if (!b)
		return;
	if (say_it) {
		for (size_t off = 0; off < b->len; off += strlen(b->data + off) + 1)
			a->io.say(a->io.ctx, b->data + off);
	} else {
		a->problems = a->held_problems;
		a->failures = a->held_failures;
		a->unreadable = a->held_unreadable;
		a->notes = a->held_notes;
	}
	hs_strbuf_free(b);
}

/* Say one line of the report, counted in *count; nothing when !on. */
__attribute__((format(printf, 4, 5)))
static void say(struct hs_integrity *a, unsigned long *count, bool on, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	if (!on)
		return;
	(*count)++;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	emit(a, s ? s : "out of memory");
	free(s);
}

/* An error: always reported, counted. */
#define problem(a, ...) say((a), &(a)->problems, true, __VA_ARGS__)
/* A warning: reported and counted unless -q / -S. */
#define warning(a, ...) say((a), &(a)->problems, warnings_on(a), __VA_ARGS__)
/* A warning that is no bad entry for the exit status (shadow-utils' grpck
 * prints it and exits 0): reported unless -q / -S, counted apart. */
#define note(a, ...) say((a), &(a)->notes, warnings_on(a), __VA_ARGS__)
/* A repair that could not be made. */
#define failed(a, ...) say((a), &(a)->failures, true, __VA_ARGS__)
/* Something that could not be read or examined (EIO, EACCES under an LSM,
 * a FUSE mount, ENOMEM): nothing was to be written, so no failed repair
 * (exit 5).  Nor a bad entry (exit 2): what it holds was not seen, it may
 * be fine.  The tree holds what /etc/shadow holds on a classic system, so
 * this is shadow-utils' "cannot open" (exit 3), which Debian's pwck also
 * exits with for an /etc/shadow it cannot read: the check is incomplete. */
#define unreadable(a, ...) say((a), &(a)->unreadable, true, __VA_ARGS__)

/* The end of a repair: the signals held back since its "yes" go through. */
static void repairs_done(struct hs_integrity *a)
{
	if (a->signals_blocked) {
		a->signals_blocked = false;
		hs_privs_restore_signals(&a->saved_mask);
	}
}

/* Offer a repair.  Read-only: the prompt with "No", as shadow-utils. */
__attribute__((format(printf, 2, 3)))
static bool ask(struct hs_integrity *a, const char *fmt, ...)
{
	_cleanup_free_ char *prompt = NULL, *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&prompt, fmt, ap) < 0)
		prompt = NULL;
	va_end(ap);
	if (!prompt)
		return false;
	if (a->flags & HS_INTEGRITY_READ_ONLY) {
		if (asprintf(&line, "%sNo", prompt) < 0)
			line = NULL;
		else
			emit(a, line);
		return false;
	}
	repairs_done(a);
	if (!a->io.ask(a->io.ctx, prompt))
		return false;
	hs_privs_block_signals(&a->saved_mask);
	a->signals_blocked = true;
	return true;
}

/* Log a repair that was made (the administrator's audit trail). */
__attribute__((format(printf, 2, 3)))
static void logged(struct hs_integrity *a, const char *fmt, ...)
{
	va_list ap;

	if (!(a->flags & HS_INTEGRITY_SYSLOG))
		return;
	va_start(ap, fmt);
	vsyslog(LOG_INFO, fmt, ap);
	va_end(ap);
}

/* Printable copies (hs_printable_len) of a string or a file line (which
 * may hold any byte, NUL included), cut with "..." past LINE_SHOW_MAX. */
#define SHOW_SIZE (LINE_SHOW_MAX + 8)
#define show(s, buf) hs_printable((s), (buf), sizeof(buf))
#define show_line(l, buf) hs_printable_len((l)->text, (l)->len, (buf), sizeof(buf))

static const char *type_noun(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:  return "regular file";
	case S_IFDIR:  return "directory";
	case S_IFLNK:  return "symbolic link";
	case S_IFIFO:  return "FIFO";
	case S_IFSOCK: return "socket";
	case S_IFCHR:  return "character device";
	case S_IFBLK:  return "block device";
	default:       return "file of unknown type";
	}
}

/* "alice (1001)" from /etc/passwd, or "1001". */
static const char *uid_text(struct hs_accountdb *pw, uid_t uid, char *buf, size_t size)
{
	long i = pw ? hs_accountdb_find_id(pw, (unsigned long)uid) : -1;

	if (i >= 0)
		snprintf(buf, size, "%s (%lu)", pw->lines[i].rec.pw.name, (unsigned long)uid);
	else
		snprintf(buf, size, "%lu", (unsigned long)uid);
	return buf;
}

/* "hardened-shadow-auth (998)" through getgrgid_r, or "998". */
static const char *gid_text(gid_t gid, char *buf, size_t size)
{
	_cleanup_free_ char *b = NULL;
	struct group g;

	if (hs_account_getgrgid(gid, &g, &b) == 0 && hs_names_group_valid(g.gr_name))
		snprintf(buf, size, "%s (%lu)", g.gr_name, (unsigned long)gid);
	else
		snprintf(buf, size, "%lu", (unsigned long)gid);
	return buf;
}

/* Is there a kept bad line whose first field is name?  A user or group
 * whose line is broken is not "missing": nothing is added or removed for
 * it while its line is reported. */
static bool bad_line_named(const struct hs_accountdb *db, const char *name)
{
	size_t n = strlen(name);

	if (!db)
		return false;
	for (size_t i = 0; i < db->n_lines; i++) {
		const struct hs_dbline *l = &db->lines[i];

		if (l->deleted || l->entry || l->len <= n)
			continue;
		if (memcmp(l->text, name, n) == 0 && l->text[n] == ':')
			return true;
	}
	return false;
}

/* Does db keep any line that did not parse?  (Lets the callers skip
 * bad_line_named's scan in the common case, so checking every one of
 * 100,000 names stays linear.) */
static bool any_bad_line(const struct hs_accountdb *db)
{
	for (size_t i = 0; db && i < db->n_lines; i++)
		if (!db->lines[i].deleted && !db->lines[i].entry)
			return true;
	return false;
}

/* The outcome r of a change to db: a failure is reported (db's error)
 * and counted; true when the change was made. */
static bool db_changed(struct hs_integrity *a, struct hs_accountdb *db, long r)
{
	if (r < 0) {
		failed(a, "%s", db->error);
		return false;
	}
	a->db_changed = true;
	return true;
}

/* Field n (0 = the name) of the line text[0..len) as the file spells
 * it, or NULL. */
static const char *raw_field(const char *text, size_t len, unsigned n, size_t *flen)
{
	const char *p = text, *end = text + len, *colon;

	for (; n > 0; n--) {
		colon = memchr(p, ':', (size_t)(end - p));
		if (!colon)
			return NULL;
		p = colon + 1;
	}
	colon = memchr(p, ':', (size_t)(end - p));
	*flen = colon ? (size_t)(colon - p) : (size_t)(end - p);
	return p;
}

/* Is the line root's: named root, or (passwd, group) with id 0 however
 * spelled (" 0", "00", "0\r")?  Also for a line that does not parse. */
static bool root_line(const struct hs_accountdb *db, const struct hs_dbline *l)
{
	size_t n, zeros = 0;
	const char *f = raw_field(l->text, l->len, 0, &n);

	while (n > 0 && (f[n - 1] == '\r' || f[n - 1] == ' ' || f[n - 1] == '\t'))
		n--;
	if (n == 4 && memcmp(f, "root", 4) == 0)
		return true;
	if (db->kind != HS_DB_PASSWD && db->kind != HS_DB_GROUP)
		return false;
	f = raw_field(l->text, l->len, 2, &n);
	for (size_t k = 0; f && k < n; k++) {
		if (f[k] == '0')
			zeros++;
		else if (!strchr(" \t\r+", f[k]))
			return false;
	}
	return zeros > 0;
}

/* Offer line i of db for deletion; root's line never is (a "yes" too
 * many would take root's account away): an editor fixes it. */
static void offer_delete_line(struct hs_integrity *a, struct hs_accountdb *db, size_t i)
{
	char buf[SHOW_SIZE];

	if (root_line(db, &db->lines[i])) {
		problem(a, "%s: line %lu: root's entry is not deleted; fix it by hand with %s",
			db->path, db->lines[i].lineno, db->kind == HS_DB_PASSWD ? "vipw"
			: db->kind == HS_DB_SHADOW ? "vipw -s"
			: db->kind == HS_DB_GROUP ? "vigr" : "vigr -s");
		return;
	}
	if (ask(a, "delete line '%s'? ", show_line(&db->lines[i], buf)) &&
	    db_changed(a, db, hs_accountdb_delete(db, i)))
		logged(a, "delete line %lu of %s", db->lines[i].lineno, db->path);
}

/* How the messages name the entries of the four files (shadow-utils'
 * words). */
static const char *const entry_noun[] = {
	[HS_DB_PASSWD] = "password", [HS_DB_SHADOW] = "shadow password",
	[HS_DB_GROUP] = "group", [HS_DB_GSHADOW] = "shadow group",
};

/* A password field that is not "x" while the password lives elsewhere:
 * "user|group NAME", where it lives, the file with the field. */
#define NOT_X "%s %s has an entry in %s, but its password field in %s is not set to 'x'"

/* "invalid ... entry" for a line that does not parse, with why. */
static void report_bad_line(struct hs_integrity *a, struct hs_accountdb *db, size_t i)
{
	const struct hs_dbline *l = &db->lines[i];

	problem(a, "invalid %s file entry (line %lu: %s)", entry_noun[db->kind], l->lineno,
		l->len == 0 ? "empty line" : hs_strerror(l->err ? l->err : -HS_E_FORMAT));
	offer_delete_line(a, db, i);
}

/* ------------------------------------------------------------------ */
/* repairs that keep the entry                                        */

/* A defect that glibc's and shadow-utils' parsers read past, so the
 * mended line says what the file said to them (docs/decisions.md): a
 * fix mends the first one it finds in t (in place; the text only
 * shrinks), says what it was and what the repair is, or returns false. */
typedef bool line_fix(enum hs_db_kind kind, char *t, size_t *len, char *what, char *offer,
		      size_t size);

/* a file copied from Windows: shadow-utils reads "/bin/bash\r" */
static bool fix_cr(enum hs_db_kind kind, char *t, size_t *len, char *what, char *offer,
		   size_t size)
{
	(void)kind;
	if (*len == 0 || t[*len - 1] != '\r')
		return false;
	(*len)--;
	snprintf(what, size, "ends with a carriage return");
	snprintf(offer, size, "strip it");
	return true;
}

/* The numeric fields strtol reads for both parsers, by kind and field. */
static const char *const number_names[][8] = {
	[HS_DB_PASSWD] = { [2] = "user ID", [3] = "group ID" },
	[HS_DB_SHADOW] = { [2] = "last change", [3] = "minimum age", [4] = "maximum age",
			   [5] = "warning period", [6] = "inactivity period",
			   [7] = "expiration date" },
	[HS_DB_GROUP] = { [2] = "group ID" },
};

/* " 1000", "+1000", "01000": leading blanks, a plus sign and leading
 * zeros are what strtol skips; trailing bytes make both parsers refuse
 * the line, so they are no mendable defect. */
static bool fix_number(enum hs_db_kind kind, char *t, size_t *len, char *what, char *offer,
		       size_t size)
{
	for (unsigned n = 0; kind < HS_ARRAY_SIZE(number_names) && n < 8; n++) {
		size_t fl, k = 0, d;
		const char *field = raw_field(t, *len, n, &fl);
		char sb[SHOW_SIZE], *f;

		if (!field)
			break;
		f = t + (field - t);    /* t is ours to mend */
		if (!number_names[kind][n])
			continue;
		while (k < fl && (f[k] == ' ' || f[k] == '\t'))
			k++;
		k += k < fl && f[k] == '+';
		for (d = k; d < fl && f[d] >= '0' && f[d] <= '9'; d++)
			;
		while (d == fl && k + 1 < fl && f[k] == '0')
			k++;
		if (d == fl && k < fl && k > 0) {
			hs_printable_len(f, fl, sb, sizeof sb);
			snprintf(what, size, "the %s '%s' is not a plain decimal number",
				 number_names[kind][n], sb);
			snprintf(offer, size, "write it as %.*s", (int)(fl - k), f + k);
			memmove(f, f + k, (size_t)(t + *len - f) - k);
			*len -= k;
			return true;
		}
	}
	return false;
}

/* Parse t as a record of kind; its name, or NULL. */
static const char *parse_record(enum hs_db_kind kind, char *t, union hs_dbrec *rec)
{
	switch (kind) {
	case HS_DB_PASSWD:
		return hs_records_passwd_parse(t, &rec->pw) == 0 ? rec->pw.name : NULL;
	case HS_DB_SHADOW:
		return hs_records_spwd_parse(t, &rec->sp) == 0 ? rec->sp.name : NULL;
	case HS_DB_GROUP:
		return hs_records_group_parse(t, &rec->gr) == 0 ? rec->gr.name : NULL;
	case HS_DB_GSHADOW:
		return hs_records_gshadow_parse(t, &rec->gs) == 0 ? rec->gs.name : NULL;
	default:
		return NULL;
	}
}

/* Line i of db does not parse.  When every defect it has is one of
 * fixes and the mended line is an entry no other line names, each
 * defect is reported and its repair offered (never the deletion of the
 * line); all accepted, the line is replaced by the mended entry.  True
 * when that was so (line i is an entry now if it was repaired); false:
 * the line is the caller's to report. */
#define LINE_FIXES_MAX 16
static bool offer_line_repairs(struct hs_integrity *a, struct hs_accountdb *db, size_t i)
{
	static line_fix *const fixes[] = { fix_cr, fix_number };
	_cleanup_secret_buf_ struct hs_secret_buf w = { 0 };
	const unsigned long lineno = db->lines[i].lineno;
	char what[LINE_FIXES_MAX][SHOW_SIZE], offer[LINE_FIXES_MAX][SHOW_SIZE];
	size_t len = db->lines[i].len, n = 0;
	union hs_dbrec rec;
	const char *name;
	bool yes = true;

	if (memchr(db->lines[i].text, '\0', len) || !(w.p = malloc(len + 1)))
		return false;
	w.size = len + 1;
	memcpy(w.p, db->lines[i].text, len);
	for (size_t f = 0; f < HS_ARRAY_SIZE(fixes) && n < LINE_FIXES_MAX; )
		if (fixes[f](db->kind, w.p, &len, what[n], offer[n], sizeof what[n]))
			n++;
		else
			f++;
	w.p[len] = '\0';
	if (n == 0 || !(name = parse_record(db->kind, w.p, &rec)) ||
	    hs_accountdb_find(db, name) >= 0)
		return false;
	for (size_t k = 0; k < n; k++) {
		problem(a, "%s: line %lu: %s", db->path, lineno, what[k]);
		/* after a "no" the line stays as it is: nothing more to ask */
		if (yes || (a->flags & HS_INTEGRITY_READ_ONLY))
			yes = ask(a, "%s? ", offer[k]) && yes;
	}
	if (yes && db_changed(a, db, hs_accountdb_replace(db, i, &rec)))
		logged(a, "%s: line %lu mended", db->path, lineno);
	return true;
}

/* A passwd or group line that does not parse because of its name:
 * shadow-utils reports the name and offers nothing.  True when l is one
 * (reported). */
static bool report_bad_name(struct hs_integrity *a, const struct hs_accountdb *db,
			    const struct hs_dbline *l)
{
	const bool group = db->kind == HS_DB_GROUP;
	const char *colon = memchr(l->text, ':', l->len);
	size_t n = colon ? (size_t)(colon - l->text) : l->len;
	char buf[SHOW_SIZE], name[2 * HS_NAME_MAX + 2];

	if (l->err != -HS_E_NAME)
		return false;
	/* the first field, cut to fit */
	snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name), l->text);
	if (group ? hs_names_group_valid(name) : hs_names_user_valid(name))
		return false;
	problem(a, "invalid %s name '%s'", group ? "group" : "user", show(name, buf));
	return true;
}

/* A later line with a name already seen is dead (the lookups return the
 * first): it is offered for deletion.  True when line i is one. */
static bool offer_duplicate(struct hs_integrity *a, struct hs_accountdb *db, size_t i)
{
	if (hs_accountdb_dup_name(db, i) < 0)
		return false;
	problem(a, "duplicate %s entry", entry_noun[db->kind]);
	offer_delete_line(a, db, i);
	return true;
}

/* A shadow or gshadow line (i of sh) whose name has no line in main (a
 * main_bad line of that name is reported with main): offered for
 * deletion.  True when line i is one. */
static bool offer_orphan(struct hs_integrity *a, struct hs_accountdb *sh, size_t i,
			 struct hs_accountdb *main, bool main_bad, const char *name)
{
	if (hs_accountdb_find(main, name) >= 0 || (main_bad && bad_line_named(main, name)))
		return false;
	problem(a, "no matching %s file entry in %s", entry_noun[main->kind], main->path);
	offer_delete_line(a, sh, i);
	return true;
}

/* The shadow (gshadow) line of passwd (group) line i of db.  A missing
 * one is offered to be added, as shadow-utils does: the password field
 * moves over ("!" when it was "x": no hash anywhere is no login), with
 * today's date and login.defs' (defs) limits for a user, with the
 * group's members (so the two agree) for a group.  Returns the index of
 * the line that was there, or -1. */
static long check_shadow_line(struct hs_integrity *a, struct hs_accountdb *db, size_t i,
			      struct hs_accountdb *sh, bool sh_bad, const struct hs_config *defs)
{
	const bool group = db->kind == HS_DB_GROUP;
	const char *who = group ? "group" : "user";
	union hs_dbrec rec = db->lines[i].rec, add;
	const char **passwd = group ? &rec.gr.passwd : &rec.pw.passwd;
	const char *name = group ? rec.gr.name : rec.pw.name;
	const bool in_shadow = strcmp(*passwd, "x") == 0;
	long j = hs_accountdb_find(sh, name);

	/* an error for grpck, even with -S; a warning for pwck (-q hides
	 * it), as in shadow-utils */
	if (j >= 0 && !in_shadow)
		say(a, &a->problems, group || warnings_on(a), NOT_X, who, name, sh->path, db->path);
	if (j >= 0)
		return j;
	/* a user of the tree needs no line: hs_integrity_tree judges */
	if (a->flags & HS_INTEGRITY_TREE)
		return -1;
	if (sh_bad && bad_line_named(sh, name))
		return -1;      /* reported with the shadow file */
	problem(a, "no matching %s file entry in %s", entry_noun[db->kind], sh->path);
	if (!ask(a, "add %s '%s' in %s? ", who, name, sh->path))
		return -1;
	if (group)
		add.gs = (struct hs_gshadow){
			.name = name, .passwd = in_shadow ? "!" : *passwd,
			.admins = "", .members = rec.gr.members,
		};
	else
		add.sp = (struct hs_spwd){
			.name = name,
			.hash = in_shadow ? "!" : *passwd,
			.lstchg = hs_today(),
			.min = hs_config_get_long(defs, "PASS_MIN_DAYS", -1, HS_DAYS_MAX, -1),
			.max = hs_config_get_long(defs, "PASS_MAX_DAYS", -1, HS_DAYS_MAX, -1),
			.warn = hs_config_get_long(defs, "PASS_WARN_AGE", -1, HS_DAYS_MAX, -1),
			.inact = HS_UNSET,
			.expire = HS_UNSET,
			.flag = "",
		};
	if (!db_changed(a, sh, hs_accountdb_append(sh, &add)))
		return -1;
	logged(a, "add %s %s to %s", who, name, sh->path);
	if (!in_shadow) {
		*passwd = "x";
		(void)db_changed(a, db, hs_accountdb_replace(db, i, &rec));
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* sorted name lists (member lists of any length in n log n time)    */

struct names {
	struct name_ref {
		const char *p;
		size_t n;
	} *v;
	size_t n;
};

static int cmp_name_refs(const void *x, const void *y)
{
	const struct name_ref *a = x, *b = y;
	int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);

	return c ? c : (a->n > b->n) - (a->n < b->n);
}

static void names_free(struct names *s)
{
	free(s->v);
}
#define _cleanup_names_ __attribute__((cleanup(names_free)))

/* The names of a valid list, sorted for names_has; names_free them. */
static int names_of_list(struct names *s, const char *list)
{
	const char *cur = list, *e;
	size_t n = 0;

	while (cur && hs_records_list_next(&cur, &e) > 0)
		n++;
	s->v = calloc(n ? n : 1, sizeof *s->v);
	if (!s->v)
		return -ENOMEM;
	for (cur = list; cur && (n = hs_records_list_next(&cur, &e)) > 0; )
		s->v[s->n++] = (struct name_ref){ e, n };
	qsort(s->v, s->n, sizeof *s->v, cmp_name_refs);
	return 0;
}

static bool names_has(const struct names *s, const char *p, size_t n)
{
	const struct name_ref key = { p, n };

	return bsearch(&key, s->v, s->n, sizeof *s->v, cmp_name_refs) != NULL;
}

static int list_append(struct hs_buf *b, const char *e, size_t n)
{
	int r = 0;

	if (b->len)
		r = hs_strbuf_append(b, ",", 1);
	if (r == 0)
		r = hs_strbuf_append(b, e, n);
	return r;
}

/* The list in b as a C string ("" when empty); b keeps ownership. */
static const char *buf_str(struct hs_buf *b)
{
	if (hs_strbuf_append(b, "", 1) < 0)
		return NULL;
	b->len--;
	return b->data;
}

/* ------------------------------------------------------------------ */
/* -r next to running writers (integrity.h, hs_integrity_view)        */

/* how often a busy writers' lock is tried again */
#define CONFIRM_POLL_NS (1000 * 1000L)
/* how often an entry is checked again when it, or a file it was checked
 * against, changed meanwhile: more is a user changing their own entry
 * without end, whose report is then left out (and counted) */
#define CONFIRM_TRIES 8

static const char *const view_paths[4] = {
	HS_ETC_PASSWD, HS_ETC_SHADOW, HS_ETC_GROUP, HS_ETC_GSHADOW,
};

/* what a stat() shows of an entry, or why there is none */
struct ident {
	int err;
	struct stat st;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Is an account file still the one read (hs_fileio_same_version), its
 * owner and mode too (root alone changes them)?  Not its link count or
 * ctime: a user linking /etc/passwd without end would make every
 * confirmation fail, every report be left out. */
static bool same_file(const struct stat *x, const struct stat *y)
{
	return hs_fileio_same_version(x, y) && x->st_mode == y->st_mode &&
	       x->st_uid == y->st_uid && x->st_gid == y->st_gid;
}

static bool same_stat(const struct stat *x, const struct stat *y)
{
	return same_file(x, y) && x->st_nlink == y->st_nlink &&
	       x->st_ctim.tv_sec == y->st_ctim.tv_sec && x->st_ctim.tv_nsec == y->st_ctim.tv_nsec;
}

static void ident_at(int dirfd, const char *name, int flags, struct ident *id)
{
	id->err = fstatat(dirfd, name, &id->st, flags) == 0 ? 0 : errno;
	if (id->err)
		memset(&id->st, 0, sizeof id->st);
}

static bool same_ident(const struct ident *x, const struct ident *y)
{
	return x->err == y->err && (x->err || same_stat(&x->st, &y->st));
}

void hs_integrity_view_init(struct hs_integrity_view *v)
{
	memset(v, 0, sizeof *v);
	for (size_t i = 0; i < HS_ARRAY_SIZE(v->own); i++)
		v->own[i] = (struct hs_accountdb)HS_ACCOUNTDB_INIT;
	v->wait_left_ns = (int64_t)HS_CHECK_CONFIRM_WAIT_MS * 1000000;
}

void hs_integrity_ids_read(struct hs_integrity_ids *ids)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(view_paths); i++) {
		ids->err[i] = stat(view_paths[i], &ids->st[i]) == 0 ? 0 : errno;
		if (ids->err[i])
			memset(&ids->st[i], 0, sizeof ids->st[i]);
	}
}

static bool same_ids(const struct hs_integrity_ids *x, const struct hs_integrity_ids *y)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(view_paths); i++)
		if (x->err[i] != y->err[i] || (!x->err[i] && !same_file(&x->st[i], &y->st[i])))
			return false;
	return true;
}

/* The writers' lock as a reader: tried at once, then polled (a waiter
 * in the kernel's queue is no better: a writer is never made to wait for
 * a reader that only wants in) while the run's wait lasts. */
static bool probe_lock(struct hs_integrity_view *v, struct hs_locks *l)
{
	for (;;) {
		int r = hs_globalfile_read_lock(l, NULL, 0);
		int64_t t0;

		if (r == 0)
			return true;
		if (r != -HS_E_TIMEOUT || v->wait_left_ns <= 0)
			return false;
		t0 = now_ns();
		(void)nanosleep(&(struct timespec){ .tv_nsec = CONFIRM_POLL_NS }, NULL);
		v->wait_left_ns -= now_ns() - t0;
	}
}

enum hs_integrity_confirm hs_integrity_view_confirm(struct hs_integrity_view *v)
{
	struct hs_integrity_ids now;
	struct hs_locks l;

	if (!probe_lock(v, &l)) {
		v->busy = true;
		return HS_INTEGRITY_BUSY;
	}
	hs_integrity_ids_read(&now);
	hs_globalfile_unlock(&l);
	return same_ids(&now, &v->ids) ? HS_INTEGRITY_CONFIRMED : HS_INTEGRITY_CHANGED;
}

void hs_integrity_view_free(struct hs_integrity_view *v)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(v->own); i++)
		hs_accountdb_free(&v->own[i]);
}

/* The files changed since the view's were read: read them again (never
 * under the lock) until they are confirmed.  BUSY (and v->busy) when the
 * lock stays busy, or the files cannot be read or change at every look. */
static enum hs_integrity_confirm view_reload(struct hs_integrity_view *v)
{
	static const enum hs_db_kind kinds[3] = { HS_DB_PASSWD, HS_DB_SHADOW, HS_DB_GROUP };
	enum hs_integrity_confirm c = HS_INTEGRITY_CHANGED;

	for (int tries = 0; tries < CONFIRM_TRIES && c == HS_INTEGRITY_CHANGED; tries++) {
		struct hs_accountdb fresh[3] = { HS_ACCOUNTDB_INIT, HS_ACCOUNTDB_INIT,
						 HS_ACCOUNTDB_INIT };
		struct hs_integrity_ids ids;
		int r = 0;

		hs_integrity_ids_read(&ids);
		for (size_t i = 0; i < 3 && r == 0; i++)
			r = hs_accountdb_load(&fresh[i], kinds[i], view_paths[i],
					      HS_DB_LENIENT | HS_DB_MISSING_OK);
		if (r < 0) {
			for (size_t i = 0; i < 3; i++)
				hs_accountdb_free(&fresh[i]);
			v->busy = true;
			return HS_INTEGRITY_BUSY;
		}
		hs_integrity_view_free(v);
		for (size_t i = 0; i < 3; i++)
			v->own[i] = fresh[i];
		v->pw = &v->own[0];
		v->sp = v->own[1].present ? &v->own[1] : NULL;
		v->gr = &v->own[2];
		v->ids = ids;
		c = hs_integrity_view_confirm(v);
	}
	if (c == HS_INTEGRITY_CHANGED) {
		v->busy = true;         /* changed at every look: a writer at work */
		v->changing = true;
	}
	return c == HS_INTEGRITY_CONFIRMED ? c : HS_INTEGRITY_BUSY;
}

typedef void entry_check(struct hs_integrity *a, void *ctx);
typedef void entry_ident(void *ctx, struct ident *id);

/* Check one entry against the view's files with its report held back,
 * and say the report only when it holds: the entry the same (ident)
 * before the check and before and after a confirmation that the files
 * are the view's with no writer at work.  A changed entry is checked
 * again, against files read again if they changed.  An entry that
 * changes at every look is counted in view->unconfirmed, not reported;
 * when the writers' lock stays busy past the run's wait, or the files
 * change at every look (view->changing), the report is said as it is
 * (view->busy tells). */
static void check_confirmed(struct hs_integrity *a, entry_check *check, entry_ident *ident,
			    void *ctx)
{
	struct hs_integrity_view *v = a->view;

	for (int tries = 0; tries < CONFIRM_TRIES; tries++) {
		enum hs_integrity_confirm c;
		struct ident before, after;
		struct hs_buf held;

		ident(ctx, &before);
		hold_begin(a, &held);
		check(a, ctx);
		if (held.len == 0) {
			hold_end(a, false);
			return;
		}
		ident(ctx, &after);
		if (!same_ident(&before, &after)) {
			hold_end(a, false);
			continue;
		}
		c = v->changing ? HS_INTEGRITY_BUSY : hs_integrity_view_confirm(v);
		if (c == HS_INTEGRITY_CONFIRMED)
			ident(ctx, &after);
		if (c == HS_INTEGRITY_BUSY ||
		    (c == HS_INTEGRITY_CONFIRMED && same_ident(&before, &after))) {
			hold_end(a, true);
			return;
		}
		hold_end(a, false);
		if (c == HS_INTEGRITY_CHANGED)
			(void)view_reload(v);   /* changing: said next time */
	}
	v->unconfirmed++;
}

/* ------------------------------------------------------------------ */
/* /etc/passwd and /etc/shadow                                        */

static void check_home_shell(struct hs_integrity *a, const struct hs_passwd *p,
			     const struct hs_config *defs)
{
	const char *nonexistent = hs_config_get_str(defs, "NONEXISTENT", "/nonexistent");
	char b1[SHOW_SIZE], b2[SHOW_SIZE];

	if (!warnings_on(a))
		return;
	/* -r: the group file read with passwd, then other NSS sources */
	if ((!a->view || !a->view->gr || hs_accountdb_find_id(a->view->gr, p->gid) < 0) &&
	    getgrgid(p->gid) == NULL)
		warning(a, "user '%s': no group %lu", p->name, (unsigned long)p->gid);
	/* shadow-utils' warning, and its status (2); but a home that is
	 * there and cannot be reached (a FUSE mount root may not enter,
	 * EIO) is not called missing */
	if (access(p->dir, F_OK) != 0 && strcmp(p->dir, nonexistent) != 0) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR)
			warning(a, "user '%s': directory '%s' does not exist", p->name,
				show(p->dir, b1));
		else
			warning(a, "user '%s': cannot examine directory '%s': %s", p->name,
				show(p->dir, b1), strerror(e));
	}
	if (p->shell[0] && access(p->shell, F_OK) != 0)
		warning(a, "user '%s': program '%s' does not exist", p->name, show(p->shell, b2));
}

struct home_ctx {
	struct hs_integrity_view *v;
	const char *name;
	const struct hs_config *defs;
};

/* the user's line in the view, or NULL */
static const struct hs_passwd *view_user(struct hs_integrity_view *v, const char *name)
{
	long i = hs_accountdb_find(v->pw, name);

	return i < 0 ? NULL : &v->pw->lines[i].rec.pw;
}

static void home_check(struct hs_integrity *a, void *ctx)
{
	struct home_ctx *h = ctx;
	const struct hs_passwd *p = view_user(h->v, h->name);

	if (p)
		check_home_shell(a, p, h->defs);
}

/* what the home and shell checks see: whether each is there */
static void home_ident(void *ctx, struct ident *id)
{
	struct home_ctx *h = ctx;
	const struct hs_passwd *p = view_user(h->v, h->name);

	memset(id, 0, sizeof *id);
	if (!p)
		return;
	id->err = (access(p->dir, F_OK) == 0 ? 1 : 2) | (access(p->shell, F_OK) == 0 ? 4 : 8);
}

int hs_integrity_passwd(struct hs_integrity *a, struct hs_accountdb *pw, struct hs_accountdb *sp,
			const struct hs_config *defs)
{
	size_t n = pw->n_lines;
	bool sp_bad = any_bad_line(sp);

	for (size_t i = 0; i < n; i++) {
		const struct hs_dbline *l = &pw->lines[i];
		const struct hs_passwd *p = &l->rec.pw;
		long j;

		/* NIS compat lines are someone else's to check, as in shadow-utils */
		if (l->deleted || hs_records_nis_line(l->text, l->len))
			continue;
		if (!l->entry && !offer_line_repairs(a, pw, i) && !report_bad_name(a, pw, l))
			report_bad_line(a, pw, i);
		if (!l->entry)
			continue;       /* reported, or a repair declined */
		if (offer_duplicate(a, pw, i))
			continue;
		j = hs_accountdb_dup_id(pw, i);
		if (j >= 0)
			warning(a, "user '%s': duplicate user ID %lu (also used by user '%s')",
				p->name, (unsigned long)p->uid, pw->lines[j].rec.pw.name);
		if (a->view)
			check_confirmed(a, home_check, home_ident,
					&(struct home_ctx){ .v = a->view, .name = p->name, .defs = defs });
		else
			check_home_shell(a, p, defs);
		if (sp)
			(void)check_shadow_line(a, pw, i, sp, sp_bad, defs);
	}
	repairs_done(a);
	return 0;
}

int hs_integrity_shadow(struct hs_integrity *a, struct hs_accountdb *sp, struct hs_accountdb *pw)
{
	size_t n = sp->n_lines;
	long today = hs_today();
	bool pw_bad = any_bad_line(pw);

	for (size_t i = 0; i < n; i++) {
		const struct hs_dbline *l = &sp->lines[i];
		const struct hs_spwd *s = &l->rec.sp;

		if (l->deleted || hs_records_nis_line(l->text, l->len))
			continue;
		if (!l->entry && !offer_line_repairs(a, sp, i))
			report_bad_line(a, sp, i);
		if (!l->entry)
			continue;
		if (offer_duplicate(a, sp, i) || offer_orphan(a, sp, i, pw, pw_bad, s->name))
			continue;
		if (s->lstchg != HS_UNSET && s->lstchg > today)
			warning(a, "user %s: last password change in the future", s->name);
	}
	repairs_done(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the tree                                                           */

struct tree {
	struct hs_integrity *a;
	const struct hs_integrity_tree *t;
	struct hs_accountdb *pw;
	int fd;
};

struct udir {
	struct tree *tr;
	const struct hs_passwd *pw;     /* the user */
	int fd;
	bool locked, lock_failed;
	char path[HS_PATHBUF_MAX];
};

enum file_kind { K_SHADOW, K_SHELL, K_AGING };

static const struct file_spec {
	const char *name;
	enum file_kind kind;
	bool root_owned;
	mode_t mode;
	const char *missing;    /* what a missing file means */
	const char *expired;    /* appended to the problems that make it count as expired */
	const char *nss_note;   /* appended to the problems the NSS module's fast path misses */
	const char *replacement;        /* what replaces it, for the prompts (shell: formatted) */
} file_specs[] = {
	{ HS_FILE_SHADOW, K_SHADOW, false, HS_SHADOW_MODE, "the user cannot log in with a password",
	  "", NSS_NOTE, "a locked password (set a new one with passwd)" },
	{ HS_FILE_SHELL, K_SHELL, false, HS_SHELL_MODE, "the shell proxy cannot start a shell",
	  "", "", NULL },
	{ HS_FILE_AGING, K_AGING, true, HS_AGING_MODE, "the account counts as expired",
	  "; the account counts as expired", "",
	  "an aging file that keeps the account expired (set it with chage)" },
};

/* The user's flock (hs_userdir_lock_at) around every repair in their
 * directory, so no password change runs in between; taken on the first
 * repair and held until the directory is done.  A directory taken over
 * from a stopped process (or replaced) meanwhile is a new one: what was
 * checked no longer holds, nothing is repaired. */
static bool udir_lock(struct udir *u)
{
	int fd = u->fd, r;

	if (u->locked)
		return true;
	if (u->lock_failed)
		return false;
	r = hs_userdir_lock_at(u->tr->fd, u->pw->name, &u->fd, HS_LOCK_TIMEOUT_MS);
	if (r < 0) {
		char why[64];

		u->lock_failed = true;
		failed(u->tr->a, "cannot lock %s: %s; not repaired", u->path,
		       hs_lock_strerror(r, HS_LOCK_TIMEOUT_MS, why, sizeof(why)));
		return false;
	}
	if (u->fd != fd) {
		(void)hs_userdir_unlock_at(u->tr->fd, u->fd);
		u->lock_failed = true;
		failed(u->tr->a, "%s changed while being checked; not repaired, run the "
		       "check again", u->path);
		return false;
	}
	u->locked = true;
	return true;
}

/* Open dirfd/name again without following it and make sure it is still
 * the inode st describes: the fd every chown/chmod goes through. */
static int open_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd, flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

	if (S_ISDIR(st->st_mode))
		flags |= O_DIRECTORY;
	else if (!S_ISREG(st->st_mode))
		return -HS_E_NOTREG;    /* never open FIFOs, devices, sockets */
	fd = openat(dirfd, name, flags);
	if (fd < 0)
		return errno == ELOOP ? -HS_E_SYMLINK : -errno;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
		hs_close(fd);
		return -ESTALE;
	}
	return fd;
}

static const char *repair_error(int r)
{
	return r == -ESTALE ? "it changed while being checked" : hs_strerror(r);
}

/* The outcome r of a repair in the tree: a failure is reported ("cannot
 * VERB PATH: why") and counted; true when the repair was made. */
static bool tree_repaired(struct hs_integrity *a, int r, const char *verb, const char *path)
{
	if (r < 0) {
		failed(a, "cannot %s %s: %s", verb, path, hs_strerror(r));
		return false;
	}
	a->tree_changed = true;
	return true;
}

/* Owner (when check_uid), group and mode of the object (the tree, a user
 * directory or a user file: st from lstat) against what DESIGN §2 says,
 * one line and one offer each.  objfd: an fd on it, or -1 to open
 * dirfd/name on the first repair.  note: appended to owner and mode
 * problems the NSS module's fast path does not see. */
struct want {
	bool check_uid;
	uid_t uid;
	gid_t gid;              /* HS_ANY_GID: the group does not exist */
	mode_t mode;
	const char *note;
};

static void check_meta(struct tree *tr, struct udir *u, int dirfd, const char *name, int objfd,
		       const char *path, struct stat *st, const struct want *w)
{
	struct hs_integrity *a = tr->a;
	_cleanup_close_ int own = -1;
	char have[128], want[128];
	int fd = objfd, r;

	/* fix = 0 owner, 1 group, 2 mode */
	for (int fix = 0; fix < 3; fix++) {
		bool yes;

		if (fix == 0 && w->check_uid && st->st_uid != w->uid) {
			problem(a, "%s: owner is %s, should be %s%s", path,
				uid_text(tr->pw, st->st_uid, have, sizeof have),
				uid_text(tr->pw, w->uid, want, sizeof want), w->note);
			yes = ask(a, "set owner to %s? ", want);
		} else if (fix == 1 && w->gid != HS_ANY_GID && st->st_gid != w->gid) {
			problem(a, "%s: group is %s, should be %s", path,
				gid_text(st->st_gid, have, sizeof have),
				gid_text(w->gid, want, sizeof want));
			yes = ask(a, "set group to %s? ", want);
		} else if (fix == 2 && (st->st_mode & 07777) != w->mode) {
			problem(a, "%s: mode is %04o, should be %04o%s", path,
				(unsigned)(st->st_mode & 07777), (unsigned)w->mode, w->note);
			yes = ask(a, "set mode to %04o? ", (unsigned)w->mode);
		} else {
			continue;
		}
		if (!yes || (u && !udir_lock(u)))
			continue;
		if (fd < 0) {
			own = open_same(dirfd, name, st);
			if (own < 0) {
				failed(a, "cannot repair %s: %s", path, repair_error(own));
				return;
			}
			fd = own;
		}
		/* chown first: it may clear set-id bits, chmod puts them back */
		if (fix == 0)
			r = fchown(fd, w->uid, (gid_t)-1);
		else if (fix == 1)
			r = fchown(fd, (uid_t)-1, w->gid);
		else
			r = fchmod(fd, w->mode);
		if (r < 0 || fstat(fd, st) < 0) {
			failed(a, "cannot repair %s: %s", path, strerror(errno));
			continue;
		}
		a->tree_changed = true;
		logged(a, "%s: %s repaired", path, fix == 0 ? "owner" : fix == 1 ? "group" : "mode");
	}
}

/* Read the regular file st describes (same inode, at most
 * HS_USERFILE_MAX bytes) into buf (HS_USERFILE_MAX + 2 bytes). */
static int read_same(int dirfd, const char *name, const struct stat *st, char *buf, size_t *len)
{
	_cleanup_close_ int fd = open_same(dirfd, name, st);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = hs_read_full(fd, buf, HS_USERFILE_MAX + 1);
	if (n < 0)
		return (int)n;
	if ((size_t)n > HS_USERFILE_MAX)
		return -HS_E_TOOBIG;
	buf[n] = '\0';
	*len = (size_t)n;
	return 0;
}

/* What a readable file says, for the checks that follow. */
struct content {
	long lstchg;                            /* shadow */
	char shell[HS_USERFILE_MAX + 2];        /* shell */
};

static int parse_content(enum file_kind kind, char *buf, size_t len, struct content *c)
{
	struct hs_shadow s;
	struct hs_aging ag;
	const char *sh;
	/* shell's newline is optional, as the 2012 code wrote it */
	int r = hs_userdir_content_to_line(buf, len, kind == K_SHELL);

	if (r < 0)
		return r;
	switch (kind) {
	case K_SHADOW:
		r = hs_records_shadow_parse(buf, &s);
		if (r == 0)
			c->lstchg = s.lstchg;
		break;
	case K_SHELL:
		r = hs_records_shell_parse(buf, &sh);
		if (r == 0)
			snprintf(c->shell, sizeof c->shell, "%s", sh);
		break;
	case K_AGING:
		r = hs_records_aging_parse(buf, &ag);
		break;
	}
	return r;
}

/* The shell a new or replaced `shell` file gets: the /etc/passwd shell
 * when it is a real one, else useradd's default. */
static const char *fallback_shell(const struct hs_passwd *p)
{
	const char *s = p->shell;

	if (s[0] == '/' && strcmp(s, HS_SHELL_PROXY) != 0 && hs_records_field_valid(s) &&
	    strlen(s) < HS_PATH_FIELD_MAX)
		return s;
	return HS_INTEGRITY_DEFAULT_SHELL;
}

static void expired_aging(struct hs_aging *ag)
{
	/* exactly what readers make of a broken aging (userdir.c) */
	hs_records_aging_init_unset(ag);
	ag->expire = 1;
}

/* Write the fail-closed replacement of a file: a locked password, the
 * fallback shell, an aging that keeps the account expired. */
static int write_replacement(struct udir *u, enum file_kind kind)
{
	gid_t auth = u->tr->t->auth_gid;
	struct hs_shadow s = { .hash = "!", .lstchg = HS_UNSET };
	struct hs_aging ag;

	switch (kind) {
	case K_SHADOW:
		return hs_userdir_write_shadow(u->fd, u->pw->uid, auth, &s);
	case K_SHELL:
		return hs_userdir_write_shell(u->fd, u->pw->uid, auth, fallback_shell(u->pw));
	case K_AGING:
		expired_aging(&ag);
		return hs_userdir_write_aging(u->fd, auth, &ag);
	}
	return -EINVAL;
}

static const char *replacement_text(struct udir *u, const struct file_spec *f, char *buf,
				    size_t size)
{
	if (f->kind != K_SHELL)
		return f->replacement;
	snprintf(buf, size, "the shell %s (change it with chsh)", fallback_shell(u->pw));
	return buf;
}

/* Under the directory's lock: is name still what was checked (st: the
 * file read into a copy or judged untrusted; NULL: missing)?  The
 * question may wait long, and the user's passwd or chsh, or root's
 * chage, may replace the file meanwhile: writing then would undo that
 * change (an old hash back, a new one locked).  Said when not. */
static bool still_as_read(struct udir *u, const char *name, const struct stat *st,
			  const char *path)
{
	struct stat now;
	int there = fstatat(u->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;

	if (st ? there == 0 && hs_fileio_same_version(st, &now) : there == ENOENT)
		return true;
	failed(u->tr->a, "%s changed while being checked; not repaired, run the check again",
	       path);
	return false;
}

static void replace_file(struct udir *u, const struct file_spec *f, const struct stat *st,
			 const char *path)
{
	struct hs_integrity *a = u->tr->a;
	int r = 0;

	if (!udir_lock(u) || !still_as_read(u, f->name, st, path))
		return;
	/* a directory (or anything the rename cannot replace) goes first */
	if (st && !S_ISREG(st->st_mode))
		r = hs_walk_remove_tree_at(u->fd, f->name);
	if (r == 0 || r == -ENOENT)
		r = write_replacement(u, f->kind);
	if (tree_repaired(a, r, "replace", path))
		logged(a, "%s: replaced by its fail-closed default", path);
}

/* A line ended by hand the way readers refuse: what is wrong, the offer,
 * and what the log says once it is mended. */
struct line_mend {
	const char *problem, *offer, *done;
};

static const struct line_mend mend_cr = {
	"ends with a carriage return", "strip it? ", "carriage return stripped",
};
static const struct line_mend mend_newline = {
	"has no newline at its end", "add it? ", "newline added",
};

/* What check_file() concluded about one file's inode. */
struct file_verdict {
	bool untrusted;         /* replace it, never read or chown it */
	bool relink;            /* trusted, but another name reaches it */
	bool root_held;         /* root's single-named copy: a chown will do */
	const struct line_mend *mend;   /* trusted, valid once its line's end is mended */
};

/* Owner, mode, size and link count of a regular file. */
static void check_file_inode(struct udir *u, const struct file_spec *f, const struct stat *st,
			     const char *path, struct file_verdict *v)
{
	struct tree *tr = u->tr;
	struct hs_integrity *a = tr->a;
	const uid_t admin = tr->t->admin_uid;
	const uid_t want_uid = f->root_owned ? admin : u->pw->uid;
	char have[128], want[128];

	if (st->st_uid != want_uid) {
		/* root's own copy (cp as root) holds what root wrote: a chown
		 * will do.  Anyone else may have written anything.  A root
		 * file with another name may be any root file the user linked
		 * here (without protected_hardlinks): never chown or copy it. */
		v->root_held = !f->root_owned && st->st_uid == admin && st->st_nlink == 1;
		if (!v->root_held) {
			problem(a, "%s: owner is %s, should be %s%s%s%s", path,
				uid_text(tr->pw, st->st_uid, have, sizeof have),
				uid_text(tr->pw, want_uid, want, sizeof want),
				f->kind == K_AGING ? "" : "; its contents cannot be trusted",
				f->expired, f->nss_note);
			v->untrusted = true;
		}
	}
	if (f->kind == K_AGING && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		/* the user reaches it: group or other write lets them edit
		 * their own limits */
		problem(a, "%s: mode is %04o, should be %04o; others may have written it%s",
			path, (unsigned)(st->st_mode & 07777), (unsigned)f->mode, f->expired);
		v->untrusted = true;
	}
	if (st->st_size > HS_USERFILE_MAX) {
		problem(a, "%s: size is %lld bytes, should be at most %d%s", path,
			(long long)st->st_size, HS_USERFILE_MAX, f->expired);
		v->untrusted = true;
	}
	if (st->st_nlink != 1) {
		problem(a, "%s: link count is %lu, should be 1%s", path,
			(unsigned long)st->st_nlink, f->expired);
		/* a second name for aging is how an older copy comes back;
		 * for the user's own shadow and shell the other name reaches
		 * nothing the owner could not write anyway */
		if (f->kind == K_AGING || st->st_uid != want_uid)
			v->untrusted = true;
		else
			v->relink = true;
	}
}

/* A file edited by hand: a Windows editor's "...\r\n", or an editor or
 * printf that left out the final newline.  Read it again into buf with
 * the line ended as readers want it ("...\n"); the mend when that parses
 * (into c), with buf holding the mended contents, else NULL. */
static const struct line_mend *mend_line_end(struct udir *u, const struct file_spec *f,
					     const struct stat *st, char *buf, size_t *len,
					     struct content *c)
{
	char copy[HS_USERFILE_MAX + 2];
	const struct line_mend *m;
	size_t n;
	bool ok;

	if (read_same(u->fd, f->name, st, buf, len) < 0)
		return NULL;
	n = *len;
	m = n > 0 && buf[n - 1] == '\n' ? NULL : &mend_newline;
	if (!m)
		n--;
	if (n > 0 && buf[n - 1] == '\r') {
		m = &mend_cr;
		n--;
	}
	/* the newline must still fit the size readers accept */
	if (!m || n == 0 || n + 1 > HS_USERFILE_MAX)
		return NULL;
	buf[n] = '\n';
	buf[n + 1] = '\0';
	*len = n + 1;
	memcpy(copy, buf, *len + 1);
	ok = parse_content(f->kind, copy, *len, c) == 0;
	hs_wipe(copy, sizeof copy);
	return ok ? m : NULL;
}

/* A trusted file's contents, parsed into c; buf keeps them whole for a
 * relink.  false when it cannot be read (reported). */
static bool read_file_content(struct udir *u, const struct file_spec *f, const struct stat *st,
			      const char *path, char *buf, size_t *len, struct content *c,
			      struct file_verdict *v)
{
	struct hs_integrity *a = u->tr->a;
	int r = read_same(u->fd, f->name, st, buf, len);

	if (r < 0) {
		unreadable(a, "cannot read %s: %s", path, repair_error(r));
		return false;
	}
	r = parse_content(f->kind, buf, *len, c);
	if (r < 0 && (v->mend = mend_line_end(u, f, st, buf, len, c))) {
		problem(a, "%s: line 1: %s", path, v->mend->problem);
		return true;
	}
	if (r < 0) {
		problem(a, "%s: invalid contents (%s)%s", path, hs_strerror(r), f->expired);
		v->untrusted = true;
		return true;
	}
	/* parse_content cut the buffer: read it again for a copy */
	if (v->relink && read_same(u->fd, f->name, st, buf, len) < 0)
		v->relink = false;
	return true;
}

/* Offer to replace an untrusted file, or to copy a relinked one; true
 * when the file was replaced (nothing is left to check). */
static bool offer_replacement(struct udir *u, const struct file_spec *f, struct stat *st,
			      const char *path, const char *buf, size_t len,
			      const struct file_verdict *v)
{
	struct tree *tr = u->tr;
	struct hs_integrity *a = tr->a;
	const uid_t want_uid = f->root_owned ? tr->t->admin_uid : u->pw->uid;
	char rbuf[HS_PATHBUF_MAX];
	int r;

	if (v->untrusted) {
		/* only root writes root's directory: an administrator's
		 * mistake, not an attack, and a locked password or an expired
		 * aging would lock root out */
		if (u->pw->uid == 0) {
			problem(a, "%s: root's file is not replaced; fix it by hand", path);
			return false;
		}
		if (!ask(a, "replace it with %s? ",
			 replacement_text(u, f, rbuf, sizeof rbuf)))
			return false;
		replace_file(u, f, st, path);
		return true;
	}
	/* the mended copy ends another link too */
	if (!(v->mend ? ask(a, "%s", v->mend->offer) : v->relink &&
	      ask(a, "replace it with a copy of itself (ends the other link)? ")) || !udir_lock(u) ||
	    !still_as_read(u, f->name, st, path))
		return false;
	r = hs_fileio_replace_at(u->fd, f->name, buf, len, want_uid, tr->t->auth_gid, f->mode);
	if (!tree_repaired(a, r, "replace", path))
		return false;
	logged(a, "%s: %s", path,
	       v->mend ? v->mend->done : "copied to end its other link");
	return true;
}

/* What a valid shadow or shell file says. */
static void check_file_values(struct udir *u, const struct file_spec *f, const char *path,
			      const struct content *c)
{
	struct tree *tr = u->tr;
	struct hs_integrity *a = tr->a;
	char sb[SHOW_SIZE];

	if (f->kind == K_SHADOW && c->lstchg != HS_UNSET && c->lstchg > hs_today())
		warning(a, "user %s: last password change in the future", u->pw->name);
	if (f->kind != K_SHELL)
		return;
	if (access(c->shell, F_OK) != 0)
		warning(a, "user '%s': program '%s' does not exist", u->pw->name,
			show(c->shell, sb));
	else if (tr->t->shells && strcmp(u->pw->shell, HS_SHELL_PROXY) == 0 &&
		 !hs_shells_contains(tr->t->shells, c->shell))
		/* what the proxy starts must be a shell chsh would accept;
		 * for anyone else the file is not used */
		warning(a, "%s: the shell '%s' is not listed in %s", path, show(c->shell, sb),
			tr->t->shells->path);
}

static void check_file(struct udir *u, const struct file_spec *f, struct stat *st)
{
	struct tree *tr = u->tr;
	char path[SUBPATH_BUF];
	char buf[HS_USERFILE_MAX + 2];
	struct content c = { .lstchg = HS_UNSET };
	struct file_verdict v = { .untrusted = false };
	size_t len = 0;

	snprintf(path, sizeof path, "%s/%s", u->path, f->name);
	if (!S_ISREG(st->st_mode)) {
		problem(tr->a, "%s: is a %s, should be a regular file%s", path,
			type_noun(st->st_mode), f->expired);
		v.untrusted = true;
	} else {
		check_file_inode(u, f, st, path, &v);
	}
	if (!v.untrusted && !read_file_content(u, f, st, path, buf, &len, &c, &v))
		goto out;
	if (offer_replacement(u, f, st, path, buf, len, &v))
		goto out;
	/* declined: no chown or chmod on an inode that is not plainly the
	 * user's (or root's) own single-named file.  Past this, the file
	 * was read and parsed into c. */
	if (!S_ISREG(st->st_mode) || v.untrusted || st->st_nlink != 1)
		goto out;
	check_meta(tr, u, u->fd, f->name, -1, path, st, &(struct want){
		.check_uid = v.root_held, .uid = f->root_owned ? tr->t->admin_uid : u->pw->uid,
		.gid = tr->t->auth_gid, .mode = f->mode, .note = f->nss_note,
	});
	check_file_values(u, f, path, &c);
out:
	hs_wipe(buf, sizeof buf);
}

static int not_dots(const struct dirent *de)
{
	return strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
}

static int cmp_names(const struct dirent **x, const struct dirent **y)
{
	return strcmp((*x)->d_name, (*y)->d_name);
}

/* The entries of the directory open at dirfd, sorted (a stable report),
 * without "." and "..": how many, or -errno.  Never follows: scandirat
 * reads a fresh fd on "." of it. */
static int list_dir(int dirfd, struct dirent ***names)
{
	int n = scandirat(dirfd, ".", names, not_dots, cmp_names);

	return n < 0 ? -errno : n;
}

static void free_names(struct dirent **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int spec_index(const char *name)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(file_specs); i++)
		if (strcmp(name, file_specs[i].name) == 0)
			return (int)i;
	return -1;
}

/* Offer to remove dirfd/name (shown as path) and everything below it,
 * under the user's lock when it is in u's directory; true when it was
 * removed. */
static bool offer_remove(struct hs_integrity *a, struct udir *u, int dirfd, const char *name,
			 const char *path)
{
	int r;

	if (!ask(a, "remove it? ") || (u && !udir_lock(u)))
		return false;
	r = hs_walk_remove_tree_at(dirfd, name);
	if (!tree_repaired(a, r == -ENOENT ? 0 : r, "remove", path))
		return false;
	logged(a, "removed %s", path);
	return true;
}

/* Is the temporary name still there with no writer at work?  Every
 * writer of the directory holds its lock (an exclusive flock) from before
 * it creates a temporary until after its rename: a shared hold that
 * cannot be had now means a writer (root's or the user's own passwd or
 * chsh) is in that window, and its temporary is not a left-over.  Never
 * waits: a user who holds the lock on purpose only hides their own
 * temporaries, which their next writer sweeps (DESIGN section 11). */
static bool temp_is_left_over(struct udir *u, const char *name, struct stat *st)
{
	bool there;

	if (flock(u->fd, LOCK_SH | LOCK_NB) < 0)
		return false;
	there = fstatat(u->fd, name, st, AT_SYMLINK_NOFOLLOW) == 0;
	(void)flock(u->fd, LOCK_UN);
	return there;
}

bool hs_integrity_left_by_no_writer(int dirfd, const char *name)
{
	struct hs_locks l;
	struct stat st;
	bool there;

	if (hs_globalfile_read_lock(&l, NULL, 0) < 0)
		return false;
	there = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	hs_globalfile_unlock(&l);
	return there;
}

/* Everything in a user's directory. */
static void check_udir_contents(struct udir *u)
{
	struct hs_integrity *a = u->tr->a;
	bool seen[HS_ARRAY_SIZE(file_specs)] = { false };
	struct dirent **names = NULL;
	int n = list_dir(u->fd, &names);

	if (n < 0) {
		unreadable(a, "cannot read %s: %s", u->path, hs_strerror(n));
		return;
	}
	for (int i = 0; i < n; i++) {
		char path[SUBPATH_BUF], sbuf[SHOW_SIZE];
		const char *name = names[i]->d_name;
		int k = spec_index(name);
		struct stat st;

		if (fstatat(u->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = errno;

			/* ENOENT: gone since readdir (then missing).  Any
			 * other error: there, unseen; never reported
			 * missing, never replaced. */
			if (e == ENOENT)
				continue;
			unreadable(a, "cannot examine %s/%s: %s", u->path, show(name, sbuf),
				   strerror(e));
			if (k >= 0)
				seen[k] = true;
			continue;
		}
		if (k >= 0) {
			seen[k] = true;
			check_file(u, &file_specs[k], &st);
			continue;
		}
		if (name[0] == '.' && !u->locked && !temp_is_left_over(u, name, &st))
			continue;
		snprintf(path, sizeof path, "%s/%s", u->path, show(name, sbuf));
		if (name[0] == '.')
			problem(a, "%s: left-over temporary %s", path, type_noun(st.st_mode));
		else
			problem(a, "%s: stray %s; only shadow, shell and aging belong in a user's "
				"directory", path, type_noun(st.st_mode));
		(void)offer_remove(a, u, u->fd, name, path);
	}
	free_names(names, n);
	for (size_t k = 0; k < HS_ARRAY_SIZE(file_specs); k++) {
		char path[SUBPATH_BUF], rbuf[HS_PATHBUF_MAX];

		if (seen[k])
			continue;
		snprintf(path, sizeof path, "%s/%s", u->path, file_specs[k].name);
		problem(a, "%s: missing; %s", path, file_specs[k].missing);
		if (ask(a, "create it with %s? ",
			replacement_text(u, &file_specs[k], rbuf, sizeof rbuf)))
			replace_file(u, &file_specs[k], NULL, path);
	}
}

/* Create a missing directory as useradd would, but closed: a locked
 * password and an expired aging (the account could not log in before,
 * by any method; it still cannot until root says so). */
static void create_udir(struct tree *tr, const struct hs_passwd *p, const char *path)
{
	struct hs_integrity *a = tr->a;
	struct hs_shadow s = { .hash = "!", .lstchg = HS_UNSET };
	struct hs_aging ag;
	int r;

	if (tr->t->auth_gid == HS_ANY_GID) {
		failed(a, "cannot create %s: group %s does not exist", path, HS_GROUP_AUTH);
		return;
	}
	/* root's never expired: that would refuse its key logins too (the
	 * account stage), where a locked password refuses only the password */
	if (p->uid == 0)
		hs_records_aging_init_unset(&ag);
	else
		expired_aging(&ag);
	r = hs_userdir_create(tr->fd, p->name, p->uid, tr->t->auth_gid, &s, &ag,
			      fallback_shell(p));
	if (tree_repaired(a, r, "create", path))
		logged(a, "created %s (locked%s)", path, p->uid == 0 ? "" : ", expired");
}

static void check_user(struct tree *tr, size_t pi)
{
	struct hs_integrity *a = tr->a;
	const struct hs_passwd *p = &tr->pw->lines[pi].rec.pw;
	struct udir u = { .tr = tr, .pw = p, .fd = -1 };
	struct stat st, dst;
	const bool in_shadow = tr->t->shadow && hs_accountdb_find(tr->t->shadow, p->name) >= 0;
	int there = fstatat(tr->fd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;

	snprintf(u.path, sizeof u.path, "%s/%s", tr->t->path, p->name);
	/* the password lives in one place: the tree, or where another tool
	 * (shadow-utils' useradd, systemd-sysusers) put it, /etc/shadow or
	 * /etc/passwd's field.  Such an account needs no directory. */
	if (there == ENOENT && (in_shadow || strcmp(p->passwd, "x") != 0))
		return;
	if (there == 0 && in_shadow)
		problem(a, "user %s has both a line in %s and the directory %s; getspnam() "
			"returns the one nsswitch.conf names first: remove the other by hand",
			p->name, tr->t->shadow->path, u.path);
	if (strcmp(p->passwd, "x") != 0) {
		struct hs_passwd np = *p;

		problem(a, NOT_X, "user", p->name, tr->t->path, tr->pw->path);
		if (ask(a, "set it to 'x'? ")) {
			np.passwd = "x";
			if (db_changed(a, tr->pw, hs_accountdb_replace(tr->pw, pi, &np)))
				logged(a, "user %s: password field in %s set to 'x'", np.name,
				       tr->pw->path);
			/* replace may move the record: look again */
			p = &tr->pw->lines[pi].rec.pw;
			u.pw = p;
		}
	}
	if (there != 0) {
		if (there != ENOENT) {
			unreadable(a, "cannot examine %s: %s", u.path, strerror(there));
			return;
		}
		problem(a, "%s: missing; user '%s' in %s has no directory and cannot log in",
			u.path, p->name, tr->pw->path);
		goto create;
	}
	if (!S_ISDIR(st.st_mode)) {
		problem(a, "%s: is a %s, should be a directory", u.path, type_noun(st.st_mode));
		/* a locked root is one "y" too many away: root fixes its own */
		if (p->uid == 0) {
			problem(a, "%s: root's directory is not removed; fix it by hand", u.path);
			return;
		}
		if (!offer_remove(a, NULL, tr->fd, p->name, u.path))
			return;
		goto create;    /* the user has no directory now */
	}
	u.fd = hs_fileio_open_dir_at(tr->fd, p->name, &dst);
	if (u.fd < 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino) {
		unreadable(a, "cannot open %s: %s", u.path,
		       u.fd < 0 ? hs_strerror(u.fd) : "it changed while being checked");
		hs_close(u.fd);
		return;
	}
	check_meta(tr, &u, tr->fd, p->name, u.fd, u.path, &dst, &(struct want){
		.check_uid = true, .uid = p->uid, .gid = tr->t->auth_gid,
		.mode = HS_USERDIR_MODE, .note = NSS_NOTE,
	});
	check_udir_contents(&u);
	if (u.locked)
		(void)hs_userdir_unlock_at(tr->fd, u.fd);
	hs_close(u.fd);
	return;
create:
	if (ask(a, p->uid == 0 ? "create it with a locked password? "
		: "create it with a locked password and an expired aging? "))
		create_udir(tr, p, u.path);
}

/* A top-level entry that is not the directory of a user in /etc/passwd. */
static void check_other_entry(struct tree *tr, const char *name)
{
	struct hs_integrity *a = tr->a;
	const bool pwconv = strcmp(name, HS_CONVERT_MARK_PWCONV) == 0;
	const bool usermod_l = strncmp(name, USERMOD_L_PREFIX, strlen(USERMOD_L_PREFIX)) == 0;
	char path[SUBPATH_BUF], sbuf[SHOW_SIZE];
	struct stat st;

	snprintf(path, sizeof path, "%s/%s", tr->t->path, show(name, sbuf));
	if (fstatat(tr->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)    /* ENOENT: gone since readdir */
			unreadable(a, "cannot examine %s: %s", path, strerror(errno));
		return;
	}
	if (pwconv || strcmp(name, HS_CONVERT_MARK_PWUNCONV) == 0) {
		const char *tool = pwconv ? "pwconv" : "pwunconv";

		problem(a, "%s: %s was interrupted; run %s again to finish it", path, tool, tool);
		return;
	}
	/* the tree's mark of reserved directories (lib/tree/userdir_admin.c):
	 * a running tool's, or a killed one's that the next locking tool
	 * sweeps; the directories it stands for are reported themselves */
	if (strcmp(name, HS_TREE_RESERVED_MARK) == 0 && S_ISREG(st.st_mode))
		return;
	/* /etc/shadow's NIS lines, root's, for pwunconv (which checks them) */
	if (strcmp(name, HS_CONVERT_NIS_SHADOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == 0 && st.st_nlink == 1 && !(st.st_mode & 077))
		return;
	/* a running useradd's or usermod's directory under a reserved name */
	if ((name[0] == '.' || name[0] == ':' || usermod_l) &&
	    (a->flags & HS_INTEGRITY_READ_ONLY) && !hs_integrity_left_by_no_writer(tr->fd, name))
		return;
	if (usermod_l) {
		problem(a, "%s: left over by an interrupted usermod -l; run the same usermod -l "
			"again to finish it", path);
		return;
	}
	if (name[0] == '.' || name[0] == ':') {
		/* a reserved directory, kept as the tree's sweep keeps it
		 * (hs_txn_journal_left); no other temporary is a journal's,
		 * and one kept would be kept as long as it is */
		if (S_ISDIR(st.st_mode) && hs_tempname_is_reserved(name) &&
		    hs_txn_journal_left(AT_FDCWD)) {
			problem(a, "%s: temporary %s, kept while /etc/%s holds the work of an "
				"interrupted command", path, type_noun(st.st_mode), HS_TXN_JOURNAL);
			return;
		}
		problem(a, "%s: left-over temporary %s", path, type_noun(st.st_mode));
		(void)offer_remove(a, NULL, tr->fd, name, path);
		return;
	}
	if (!hs_userdir_entry_is_user(name)) {
		problem(a, "%s: stray %s; not a valid user name", path, type_noun(st.st_mode));
		(void)offer_remove(a, NULL, tr->fd, name, path);
		return;
	}
	if (bad_line_named(tr->pw, name)) {
		/* its passwd line is reported as invalid: leave it alone */
		problem(a, "%s: its user's line in %s is invalid; not checked", path,
			tr->pw->path);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		problem(a, "%s: stray %s without a user in %s", path, type_noun(st.st_mode),
			tr->pw->path);
		(void)offer_remove(a, NULL, tr->fd, name, path);
		return;
	}
	/* the NSS module serves it by name: the next account created with
	 * this name by a tool that does not know the tree would get its
	 * password */
	problem(a, "%s: directory without a user in %s; its password would pass to the next "
		"account named %s", path, tr->pw->path, name);
	if (ask(a, "remove it? ") && tree_repaired(a, hs_userdir_remove(tr->fd, name), "remove", path))
		logged(a, "removed %s (no such user)", path);
}

struct entry_ctx {
	struct tree *tr;
	const char *name;
	bool from_passwd;       /* a user of the passwd read first */
};

/* One entry of the tree, by name, against the view's files. */
static void entry_check_view(struct hs_integrity *a, void *ctx)
{
	struct entry_ctx *e = ctx;
	struct hs_integrity_tree t = *e->tr->t;
	struct tree cur = *e->tr;
	long i;

	t.shadow = a->view->sp;
	cur.t = &t;
	cur.pw = a->view->pw;
	i = hs_accountdb_find(cur.pw, e->name);
	if (i >= 0 && (e->from_passwd || hs_userdir_entry_is_user(e->name)))
		check_user(&cur, (size_t)i);
	else
		check_other_entry(&cur, e->name);
}

static void entry_ident_view(void *ctx, struct ident *id)
{
	struct entry_ctx *e = ctx;

	ident_at(e->tr->fd, e->name, AT_SYMLINK_NOFOLLOW, id);
}

/* One entry of the tree: at once, or confirmed (-r). */
static void check_entry(struct tree *tr, const char *name, long pi)
{
	if (!tr->a->view) {
		if (pi >= 0)
			check_user(tr, (size_t)pi);
		else
			check_other_entry(tr, name);
		return;
	}
	check_confirmed(tr->a, entry_check_view, entry_ident_view,
			&(struct entry_ctx){ .tr = tr, .name = name, .from_passwd = pi >= 0 });
}

/* Nothing is offered before check_meta: the early returns need no repairs_done(). */
int hs_integrity_tree(struct hs_integrity *a, struct hs_accountdb *pw, const struct hs_integrity_tree *t)
{
	struct tree tr = { .a = a, .t = t, .pw = pw };
	_cleanup_close_ int fd = -1;
	struct dirent **names = NULL;
	struct stat st;
	int n;

	if (lstat(t->path, &st) < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		unreadable(a, "cannot examine %s: %s", t->path, strerror(errno));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* root's own path: no repair guesses what was meant */
		problem(a, "%s: is a %s, should be a directory", t->path, type_noun(st.st_mode));
		return 0;
	}
	tr.fd = fd = open(t->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		unreadable(a, "cannot open %s: %s", t->path, strerror(errno));
		return 0;
	}
	if (t->tree_gid == HS_ANY_GID)
		problem(a, "group %s does not exist; %s cannot be reached by the self-service "
			"tools", HS_GROUP_TREE, t->path);
	if (t->auth_gid == HS_ANY_GID)
		problem(a, "group %s does not exist; the groups of the files in %s are not "
			"checked", HS_GROUP_AUTH, t->path);
	check_meta(&tr, NULL, -1, NULL, tr.fd, t->path, &st, &(struct want){
		.check_uid = true, .uid = t->admin_uid, .gid = t->tree_gid,
		.mode = HS_TREE_MODE, .note = NSS_NOTE,
	});

	/* every user, in /etc/passwd order (the first line of a name); a big
	 * tree takes a while, so a terminal sees how far it is */
	hs_cli_progress_start(pw->n_lines, "users");
	for (size_t i = 0; i < pw->n_lines; i++) {
		const struct hs_dbline *l = &pw->lines[i];

		hs_cli_progress_step(i + 1);
		if (l->deleted || !l->entry || hs_accountdb_dup_name(pw, i) >= 0)
			continue;
		check_entry(&tr, l->rec.pw.name, (long)i);
	}
	hs_cli_progress_end();
	/* then everything else in the tree */
	n = list_dir(fd, &names);
	if (n < 0)
		unreadable(a, "cannot read %s: %s", t->path, hs_strerror(n));
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (hs_userdir_entry_is_user(name) && hs_accountdb_find(pw, name) >= 0)
			continue;       /* checked with its user */
		check_entry(&tr, name, -1);
	}
	free_names(names, n);
	repairs_done(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/* /etc/group and /etc/gshadow                                        */

/* A group or gshadow line whose only fault is in its name lists ("a
 * b" or "a,,b" as a member): the fixed fields parse when the lists are
 * cut off, so the bad names can be offered for deletion one by one
 * instead of the whole line.  The lists of rec point into storage, its
 * other fields into fixed (both freed by salvage_free). */
struct salvaged {
	bool ok;
	union hs_dbrec rec;
	struct hs_secret_buf storage, fixed;    /* parsing cuts both with NULs */
};

static void salvage(enum hs_db_kind kind, const struct hs_dbline *l, struct salvaged *s)
{
	size_t colons = 0, cut[3] = { 0 }, kept;
	char *t;

	memset(s, 0, sizeof *s);
	if (memchr(l->text, '\0', l->len))
		return;
	for (size_t i = 0; i < l->len; i++)
		if (l->text[i] == ':') {
			if (colons == 3)
				return;
			cut[colons++] = i;
		}
	if (colons != 3)
		return;
	/* a CR that ends the line is no part of the last name */
	kept = l->len - (l->text[l->len - 1] == '\r');
	s->storage.p = strndup(l->text, kept);
	s->storage.size = kept + 1;     /* what is copied is what is wiped */
	/* the fixed fields with empty lists: "name:pw:gid:" / "name:pw::" */
	if (asprintf(&s->fixed.p, "%.*s%s", (int)(kind == HS_DB_GROUP ? cut[2] : cut[1]) + 1,
		     l->text, kind == HS_DB_GROUP ? "" : ":") < 0)
		s->fixed.p = NULL;
	else
		s->fixed.size = strlen(s->fixed.p) + 1;
	if (!s->storage.p || !s->fixed.p)
		return;
	t = s->storage.p;
	t[cut[0]] = t[cut[1]] = t[cut[2]] = '\0';
	if (kind == HS_DB_GROUP) {
		s->ok = hs_records_group_parse(s->fixed.p, &s->rec.gr) == 0;
		s->rec.gr.members = t + cut[2] + 1;
	} else {
		s->ok = hs_records_gshadow_parse(s->fixed.p, &s->rec.gs) == 0;
		s->rec.gs.admins = t + cut[1] + 1;
		s->rec.gs.members = t + cut[2] + 1;
	}
}

static void salvage_free(struct salvaged *s)
{
	/* gshadow's second field is a group's password hash */
	hs_secret_buf_freep(&s->storage);
	hs_secret_buf_freep(&s->fixed);
}

/* Split list on ',' without hs_records_list_next's assumption of a valid list:
 * returns the next element (possibly empty) or false at the end. */
static bool raw_next(const char **cur, const char **e, size_t *n)
{
	const char *p = *cur, *comma;

	if (!p)
		return false;
	comma = strchr(p, ',');
	*e = p;
	*n = comma ? (size_t)(comma - p) : strlen(p);
	*cur = comma ? comma + 1 : NULL;
	return true;
}

/* The name lists of a group and a gshadow line (admins first), as the
 * messages name them (shadow-utils' words where it has them). */
struct list_kind {
	const char *file;       /* "group %s: ..." */
	const char *role;       /* "no %suser", "delete %smember" */
};
static const struct list_kind list_kinds[][2] = {
	[HS_DB_GROUP] = { { "group", "" } },
	[HS_DB_GSHADOW] = { { "shadow group", "administrative " }, { "shadow group", "" } },
};

/* Check one name list: every element must be a valid name and an
 * existing user; each one that is not is reported and offered for
 * deletion.  The kept names go to out.  *unfixed counts invalid names
 * the administrator kept (the line then stays invalid).  Returns true
 * when out differs from list. */
static bool check_list(struct hs_integrity *a, struct hs_accountdb *pw, const struct list_kind *k,
		       const char *group, const char *list, struct hs_buf *out, size_t *unfixed)
{
	const char *cur = list && *list ? list : NULL, *e;
	bool changed = false;
	size_t n;

	while (raw_next(&cur, &e, &n)) {
		char name[HS_NAME_MAX + 1], sbuf[SHOW_SIZE];
		bool valid;

		snprintf(name, sizeof name, "%.*s", (int)n, e);
		valid = n > 0 && n <= HS_NAME_MAX && hs_names_user_valid(name);
		/* pw, then other NSS sources (shadow-utils asks getpwnam) */
		if (valid && ((pw && hs_accountdb_find(pw, name) >= 0) || getpwnam(name))) {
			(void)list_append(out, e, n);
			continue;
		}
		/* a valid name is shown as it is */
		hs_printable_len(e, n, sbuf, sizeof sbuf);
		problem(a, valid ? "%s %s: no %suser %s" : "%s %s: invalid %smember name '%s'",
			k->file, group, k->role, sbuf);
		if (ask(a, "delete %smember '%s'? ", k->role, sbuf)) {
			changed = true;
			continue;
		}
		if (!valid)
			(*unfixed)++;
		(void)list_append(out, e, n);
	}
	return changed;
}

/* Make the gshadow member list of group g (of gr, at line si of gs)
 * follow its group list, name by name, as notes: grpck -S silences them,
 * and they leave the exit status 0, as in shadow-utils. */
static int compare_members(struct hs_integrity *a, const struct hs_accountdb *gr,
			   const struct hs_group *g, struct hs_accountdb *gs, size_t si)
{
	struct hs_gshadow s = gs->lines[si].rec.gs;
	_cleanup_names_ struct names in_group = { 0 }, in_gshadow = { 0 };
	_cleanup_strbuf_ struct hs_buf out = { 0 };
	const char *cur, *e;
	char m[SHOW_SIZE];      /* a member (valid names: shown as they are) */
	bool changed = false;
	size_t n;
	int r;

	if (!warnings_on(a))
		return 0;
	r = names_of_list(&in_group, g->members);
	if (r == 0)
		r = names_of_list(&in_gshadow, s.members);
	if (r < 0)
		return r;
	/* gshadow's own members, in its order, minus those group lacks */
	for (cur = s.members; cur && (n = hs_records_list_next(&cur, &e)) > 0; ) {
		if (!names_has(&in_group, e, n)) {
			hs_printable_len(e, n, m, sizeof m);
			note(a, "'%s' is a member of the '%s' group in %s but not in %s",
			     m, g->name, gs->path, gr->path);
			if (ask(a, "delete member '%s' from '%s' in %s? ", m, g->name, gs->path)) {
				changed = true;
				continue;
			}
		}
		if ((r = list_append(&out, e, n)) < 0)
			return r;
	}
	/* then those only group has, in group's order */
	for (cur = g->members; cur && (n = hs_records_list_next(&cur, &e)) > 0; ) {
		if (names_has(&in_gshadow, e, n))
			continue;
		hs_printable_len(e, n, m, sizeof m);
		note(a, "'%s' is a member of the '%s' group in %s but not in %s",
		     m, g->name, gr->path, gs->path);
		if (ask(a, "add '%s' to the members of '%s' in %s? ", m, g->name, gs->path)) {
			changed = true;
			if ((r = list_append(&out, e, n)) < 0)
				return r;
		}
	}
	if (!changed)
		return 0;
	s.members = buf_str(&out);
	if (!s.members)
		return -ENOMEM;
	if (db_changed(a, gs, hs_accountdb_replace(gs, si, &s)))
		logged(a, "group %s: members in %s made equal to %s", g->name, gs->path,
		       gr->path);
	return 0;
}

/* The record of group or gshadow line i, salvaged into sv when the line
 * is invalid; false when there is nothing more to check (reported, or
 * offered for deletion). */
static bool list_line_record(struct hs_integrity *a, struct hs_accountdb *db, size_t i,
			     struct salvaged *sv, union hs_dbrec *rec)
{
	const struct hs_dbline *l = &db->lines[i];
	const bool group = db->kind == HS_DB_GROUP;

	if (!l->entry && offer_line_repairs(a, db, i)) {
		*rec = l->rec;
		return l->entry;
	}
	if (l->entry) {
		*rec = l->rec;
		return !offer_duplicate(a, db, i);
	}
	salvage(db->kind, l, sv);
	if (!sv->ok && group && report_bad_name(a, db, l))
		return false;
	if (!sv->ok || hs_accountdb_find(db, group ? sv->rec.gr.name : sv->rec.gs.name) >= 0) {
		report_bad_line(a, db, i);
		return false;
	}
	if (l->text[l->len - 1] == '\r')
		problem(a, "%s: line %lu: ends with a carriage return, which a repair of its "
			"names strips", db->path, l->lineno);
	*rec = sv->rec;
	return true;
}

/* The name lists of group or gshadow line i (rec: its record, salvaged
 * or not): each bad name is offered for deletion, and the line is
 * written back without those deleted unless an invalid one was kept.
 * True when the line is an entry (now), for the checks that follow. */
static bool check_lists(struct hs_integrity *a, struct hs_accountdb *db, size_t i,
			struct hs_accountdb *pw, union hs_dbrec *rec)
{
	const bool group = db->kind == HS_DB_GROUP;
	const struct list_kind *kinds = list_kinds[db->kind];
	const char **lists[2] = { &rec->gs.admins, &rec->gs.members };
	const char *name = group ? rec->gr.name : rec->gs.name;
	const size_t n = group ? 1 : 2;
	struct hs_buf out[2] = { { 0 }, { 0 } };
	size_t unfixed = 0;
	bool changed = false, built = true;

	if (group)
		lists[0] = &rec->gr.members;
	for (size_t k = 0; k < n; k++)
		changed |= check_list(a, pw, &kinds[k], name, *lists[k], &out[k], &unfixed);
	if (changed && !unfixed) {
		for (size_t k = 0; k < n; k++)
			built = built && (*lists[k] = buf_str(&out[k])) != NULL;
		/* the name from the new line: name may point into the text
		 * the replace has just freed (a line edited before) */
		if (built && db_changed(a, db, hs_accountdb_replace(db, i, rec)))
			logged(a, "%s %s: members deleted in %s", kinds[0].file,
			       group ? db->lines[i].rec.gr.name : db->lines[i].rec.gs.name, db->path);
	}
	for (size_t k = 0; k < n; k++)
		hs_strbuf_free(&out[k]);
	/* still invalid: an invalid name was kept (reported), or the fault
	 * lies elsewhere */
	if (!db->lines[i].entry && !unfixed && !changed)
		report_bad_line(a, db, i);
	return db->lines[i].entry;
}

static int check_group_line(struct hs_integrity *a, struct hs_accountdb *gr,
			    struct hs_accountdb *gs, struct hs_accountdb *pw, size_t i,
			    bool gs_bad)
{
	const struct hs_dbline *l = &gr->lines[i];
	struct salvaged sv = { .ok = false };
	union hs_dbrec rec;
	const struct hs_group *g;
	bool entry;
	long j;

	if (l->deleted || hs_records_nis_line(l->text, l->len))
		return 0;
	entry = list_line_record(a, gr, i, &sv, &rec) && check_lists(a, gr, i, pw, &rec);
	salvage_free(&sv);
	if (!entry)
		return 0;
	g = &gr->lines[i].rec.gr;
	j = hs_accountdb_dup_id(gr, i);
	if (j >= 0)
		warning(a, "group %s: duplicate group ID %lu (also used by group %s)",
			g->name, (unsigned long)g->gid, gr->lines[j].rec.gr.name);
	/* a line it finds (j) leaves the group's line as it is */
	j = gs ? check_shadow_line(a, gr, i, gs, gs_bad, NULL) : -1;
	if (j >= 0 && compare_members(a, gr, g, gs, (size_t)j) < 0)
		return -ENOMEM;
	return 0;
}

int hs_integrity_group(struct hs_integrity *a, struct hs_accountdb *gr, struct hs_accountdb *gs,
		       struct hs_accountdb *pw)
{
	size_t n_lines = gr->n_lines;
	bool gs_bad = any_bad_line(gs);
	int r = 0;

	for (size_t i = 0; r == 0 && i < n_lines; i++)
		r = check_group_line(a, gr, gs, pw, i, gs_bad);
	repairs_done(a);
	return r;
}

int hs_integrity_gshadow(struct hs_integrity *a, struct hs_accountdb *gs, struct hs_accountdb *gr,
			 struct hs_accountdb *pw)
{
	size_t n_lines = gs->n_lines;
	bool gr_bad = any_bad_line(gr);

	for (size_t i = 0; i < n_lines; i++) {
		const struct hs_dbline *l = &gs->lines[i];
		struct salvaged sv = { .ok = false };
		union hs_dbrec rec;

		if (l->deleted || hs_records_nis_line(l->text, l->len))
			continue;
		if (list_line_record(a, gs, i, &sv, &rec) &&
		    !offer_orphan(a, gs, i, gr, gr_bad, rec.gs.name))
			(void)check_lists(a, gs, i, pw, &rec);
		salvage_free(&sv);
	}
	repairs_done(a);
	return 0;
}

/* ------------------------------------------------------------------ */
/* -s                                                                 */

struct sort_item {
	size_t line;
	unsigned long key;
};

static int cmp_items(const void *x, const void *y)
{
	const struct sort_item *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;     /* stable */
}

/* Reload db from its lines in the given order (plus a newline each). */
static int reorder(struct hs_accountdb *db, const struct sort_item *items, size_t n)
{
	struct hs_accountdb fresh = HS_ACCOUNTDB_INIT;
	_cleanup_strbuf_ struct hs_buf b = { 0 };
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct hs_dbline *l = &db->lines[items[i].line];

		r = hs_strbuf_append(&b, l->text, l->len);
		if (r == 0)
			r = hs_strbuf_append(&b, "\n", 1);
	}
	if (r == 0)
		r = hs_accountdb_load_data(&fresh, db->kind, db->path, b.data ? b.data : "",
					   b.len, HS_DB_LENIENT);
	if (b.data)
		hs_wipe(b.data, b.len);
	if (r < 0) {
		snprintf(db->error, sizeof db->error, "%s", fresh.error);
		return r;
	}
	fresh.present = db->present;
	/* an in-place edit since db was loaded is not overwritten */
	hs_accountdb_expect_as(&fresh, db);
	fresh.default_uid = db->default_uid;
	fresh.default_gid = db->default_gid;
	fresh.default_mode = db->default_mode;
	fresh.dirty = true;
	hs_accountdb_free(db);
	*db = fresh;
	return 0;
}

/* The live lines of db, or -HS_E_FORMAT when one is not an entry.  As in
 * shadow-utils, the first NIS line and every line after it stay last, in
 * their order (key ULONG_MAX): only the lines before it are sorted. */
static int live_items(struct hs_accountdb *db, struct sort_item **out, size_t *n_out)
{
	_cleanup_free_ struct sort_item *items = calloc(db->n_lines ? db->n_lines : 1,
							sizeof *items);
	bool nis_tail = false;
	size_t n = 0;

	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < db->n_lines; i++) {
		const struct hs_dbline *l = &db->lines[i];

		if (l->deleted)
			continue;
		if (nis_tail || hs_records_nis_line(l->text, l->len)) {
			nis_tail = true;
			items[n++] = (struct sort_item){ .line = i, .key = ULONG_MAX };
			continue;
		}
		if (!l->entry) {
			snprintf(db->error, sizeof db->error, "%s:%lu: not an entry", db->path,
				 l->lineno);
			return -HS_E_FORMAT;
		}
		/* the uid or gid; 0 in the shadow files */
		items[n] = (struct sort_item){ .line = i, .key = 0 };
		(void)hs_accountdb_id(db, i, &items[n++].key);
	}
	*out = TAKE_PTR(items);
	*n_out = n;
	return 0;
}

int hs_integrity_sort(struct hs_accountdb *db, struct hs_accountdb *shadow)
{
	_cleanup_free_ struct sort_item *mi = NULL, *si = NULL;
	_cleanup_free_ size_t *pos = NULL;
	size_t mn = 0, sn = 0;
	int r;

	r = live_items(db, &mi, &mn);
	if (r == 0 && shadow)
		r = live_items(shadow, &si, &sn);
	if (r < 0)
		return r;
	qsort(mi, mn, sizeof *mi, cmp_items);
	if (shadow) {
		/* the shadow file follows db; names db lacks go last, before NIS lines */
		pos = calloc(db->n_lines ? db->n_lines : 1, sizeof *pos);
		if (!pos)
			return -ENOMEM;
		for (size_t k = 0; k < mn; k++)
			pos[mi[k].line] = k;
		for (size_t i = 0; i < sn; i++) {
			const struct hs_dbline *l = &shadow->lines[si[i].line];
			const char *name = shadow->kind == HS_DB_SHADOW ? l->rec.sp.name
					   : l->rec.gs.name;
			long m;

			if (si[i].key == ULONG_MAX)
				continue;  /* from the first NIS line on */
			m = hs_accountdb_find(db, name);
			si[i].key = m >= 0 ? (unsigned long)pos[m] : ULONG_MAX - 1;
		}
		qsort(si, sn, sizeof *si, cmp_items);
	}
	r = reorder(db, mi, mn);
	if (r == 0 && shadow)
		r = reorder(shadow, si, sn);
	return r;
}

/* ------------------------------------------------------------------ */
/* the programs' io and files                                         */

/* Each value a report quotes is already shown through hs_printable; the
 * line goes out by the same rule once more (which leaves escaped text as
 * it is), so that no argument a check forgot to show reaches the
 * terminal raw. */
static void stdio_say(void *ctx, const char *line)
{
	hs_cli_progress_erase();
	hs_fputs_printable(line, stdout);
	fputc('\n', stdout);
}

static bool stdio_ask(void *ctx, const char *prompt)
{
	_cleanup_free_ char *answer = NULL;
	size_t size = 0;
	ssize_t n;
	bool yes;

	hs_cli_progress_erase();
	hs_fputs_printable(prompt, stdout);
	fflush(stdout);
	n = getline(&answer, &size, stdin);
	yes = n > 0 && (answer[0] == 'y' || answer[0] == 'Y');
	if (!isatty(STDIN_FILENO))
		fputs(yes ? "Yes\n" : "No\n", stdout);
	else if (n <= 0)
		fputc('\n', stdout);
	return yes;
}

const struct hs_integrity_io hs_integrity_stdio = { .say = stdio_say, .ask = stdio_ask, .ctx = NULL };

int hs_integrity_files_open(struct hs_integrity_files *f, bool group, const char *path,
			const char *shadow_path, bool lock)
{
	const enum hs_as_file k_main = group ? HS_AS_GROUP : HS_AS_PASSWD;
	const enum hs_as_file k_shadow = group ? HS_AS_GSHADOW : HS_AS_SHADOW;
	const char *paths[2];
	const char *lock_failed = NULL;
	size_t n;
	int r;

	memset(f, 0, sizeof *f);
	f->locks = (struct hs_locks)HS_LOCKS_INIT;
	if (!path && lock) {
		/* the system files: lib/accountset's lock order and commit */
		f->use_set = true;
		r = hs_accountset_open(&f->set, HS_AS_BIT(k_main) | HS_AS_BIT(k_shadow),
				       HS_DB_LENIENT);
		if (r < 0) {
			snprintf(f->error, sizeof f->error, "%s", f->set.error);
			f->lock_failed = f->set.lock_failed;
			return r;
		}
		f->db = hs_accountset_db(&f->set, k_main);
		f->shadow = hs_accountset_db(&f->set, k_shadow);
		return 0;
	}
	paths[0] = path ? path : hs_accountset_path(k_main);
	paths[1] = path ? shadow_path : hs_accountset_path(k_shadow);
	n = paths[1] ? 2 : 1;
	if (!path && access(paths[1], F_OK) < 0 && errno == ENOENT)
		n = 1;          /* a system without the shadow file */
	if (lock) {
		r = hs_globalfile_lock(&f->locks, NULL, paths, n, HS_LOCK_TIMEOUT_MS, &lock_failed);
		if (r < 0) {
			char why[64];

			snprintf(f->error, sizeof f->error, "cannot lock %s: %s",
				 lock_failed ? lock_failed : HS_ETC_PWD_LOCK,
				 hs_lock_strerror(r, HS_LOCK_TIMEOUT_MS, why, sizeof(why)));
			f->lock_failed = true;
			return r;
		}
	}
	for (size_t i = 0; i < n; i++) {
		enum hs_db_kind kind = group ? (i ? HS_DB_GSHADOW : HS_DB_GROUP)
					     : (i ? HS_DB_SHADOW : HS_DB_PASSWD);

		r = hs_accountdb_load(&f->own[i], kind, paths[i], HS_DB_LENIENT);
		if (r < 0) {
			snprintf(f->error, sizeof f->error, "%s", f->own[i].error);
			hs_integrity_files_close(f);
			return r;
		}
	}
	f->db = &f->own[0];
	f->shadow = n == 2 ? &f->own[1] : NULL;
	return 0;
}

int hs_integrity_files_commit(struct hs_integrity_files *f)
{
	struct hs_accountdb *order[2] = { f->shadow, f->db };
	int r;

	if (f->use_set) {
		r = hs_accountset_commit(&f->set);
		if (r < 0)
			snprintf(f->error, sizeof f->error, "%s", f->set.error);
		return r;
	}
	struct hs_accountdb *dirty[2];
	size_t n = 0, failed = 0;

	for (size_t i = 0; i < 2; i++)
		if (order[i] && order[i]->dirty)
			dirty[n++] = order[i];
	if (n == 0)
		return 0;
	/* both files in one transaction (the one writer, lib/etc); files
	 * named on the command line in two directories cannot share a
	 * journal and are written one after the other, shadow first */
	r = hs_accountdb_write_set(dirty, n, &failed);
	if (r == -EXDEV) {
		for (failed = 0; failed < n; failed++)
			if ((r = hs_accountdb_write(dirty[failed])) < 0)
				break;
	}
	if (r < 0)
		snprintf(f->error, sizeof f->error, "%s", dirty[failed < n ? failed : 0]->error);
	return r < 0 ? r : 0;
}

void hs_integrity_files_close(struct hs_integrity_files *f)
{
	if (f->use_set) {
		hs_accountset_close(&f->set);   /* flushes the caches */
	} else {
		hs_accountdb_free(&f->own[0]);
		hs_accountdb_free(&f->own[1]);
		hs_globalfile_unlock(&f->locks);
	}
	f->db = f->shadow = NULL;
}
