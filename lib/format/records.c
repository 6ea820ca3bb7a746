/* Parsers and formatters for every record type (see records.h).
 *
 * The parsers are deliberately strict: a line is accepted only when
 * formatting the parsed result gives back exactly the same bytes, so a
 * read-modify-write cycle by any tool of the suite never changes a record
 * it did not mean to change, and a field can never smuggle in a ':' or a
 * newline that would split into a second record. */
#include "records.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "util.h"

/* Field counts (number of ':'-separated pieces, including the empty piece
 * after a trailing colon). */
#define PASSWD_FIELDS   7
#define GROUP_FIELDS    4
#define GSHADOW_FIELDS  4
#define SPWD_FIELDS     9
#define SUBID_FIELDS    3
#define USHADOW_FIELDS  3  /* HASH:LSTCHG: */
#define AGING_FIELDS    6  /* MIN:MAX:WARN:INACT:EXPIRE: */

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

bool hs_records_field_valid(const char *s)
{
	if (!s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == ':' || is_control(*p))
			return false;
	return true;
}

/* A field that is valid and at most max bytes long. */
static int check_field(const char *s, size_t max)
{
	if (!s || !hs_records_field_valid(s))
		return -HS_E_FIELD;
	if (strlen(s) > max)
		return -HS_E_FORMAT;
	return 0;
}

/* Reject control bytes anywhere in the line, then split it in place into
 * min to n fields (*got of them).  A different number of ':' is a format
 * error. */
static int split_fields(char *line, char **fields, size_t min, size_t n, size_t *got)
{
	size_t colons = 0;

	if (!line)
		return -HS_E_FORMAT;
	/* one pass (useradd validates every line of /etc/passwd with it):
	 * a control byte anywhere wins over a wrong field count, so after
	 * too many colons the scan goes on without cutting */
	static const unsigned char stop[256] = {
		[0 ... 0x1f] = 1, [':'] = 1, [0x7f] = 1,
	};

	fields[0] = line;
	for (unsigned char *p = (unsigned char *)line;; p++) {
		while (!stop[*p])
			p++;
		if (*p == ':') {
			if (++colons < n) {
				*p = '\0';
				fields[colons] = (char *)p + 1;
			}
		} else if (*p) {
			return -HS_E_FIELD;
		} else {
			break;
		}
	}
	if (colons + 1 < min || colons + 1 > n)
		return -HS_E_FORMAT;
	*got = colons + 1;
	return 0;
}

/* Exactly n fields. */
static int split_line(char *line, char **fields, size_t n)
{
	size_t got;

	return split_fields(line, fields, n, n, &got);
}

static int parse_id(const char *s, unsigned long *out)
{
	return hs_parse_ulong(s, 0, HS_ID_MAX, out);
}

/* A day count in [0, HS_DAYS_MAX] (never empty, never "-1"). */
static int parse_day(const char *s, long *out)
{
	unsigned long v;
	int r = hs_parse_ulong(s, 0, (unsigned long)HS_DAYS_MAX, &v);
	if (r < 0)
		return r;
	*out = (long)v;
	return 0;
}

/* A day field that may be unset: "-1", or also "" where empty_ok (classic
 * /etc/shadow); the "-1" spelling sets bit in *minus_one. */
static int parse_unset_day(const char *s, bool empty_ok, unsigned bit, unsigned *minus_one,
			   long *out)
{
	if ((empty_ok && s[0] == '\0') || strcmp(s, "-1") == 0) {
		*out = HS_UNSET;
		*minus_one |= s[0] ? bit : 0;
		return 0;
	}
	return parse_day(s, out);  /* "" is a format error there */
}

static bool day_or_unset_ok(long v)
{
	return v == HS_UNSET || (v >= 0 && v <= HS_DAYS_MAX);
}

/* Validate a comma-separated list of user names: "" or name(,name)*.
 * Works on a const string, so names are copied to a bounded buffer for
 * the check. */
static int check_name_list(const char *list)
{
	const char *p = list;

	if (!list)
		return -HS_E_FORMAT;
	if (*p == '\0')
		return 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[HS_NAME_MAX + 1];

		if (len == 0)
			return -HS_E_FORMAT;  /* "a,,b", ",a" or "a," */
		if (len > HS_NAME_MAX)
			return -HS_E_NAME;
		memcpy(name, p, len);
		name[len] = '\0';
		if (!hs_names_user_valid(name))
			return -HS_E_NAME;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* A list field in a formatter: NULL means empty. */
static int check_list_field(const char *list)
{
	if (!list)
		return 0;
	return hs_records_field_valid(list) ? check_name_list(list) : -HS_E_FIELD;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* asprintf() into *out with the formatters' error convention. */
__attribute__((format(printf, 2, 3)))
static int format_into(char **out, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	*out = s;
	return 0;
}

/* ---- USER/shadow: HASH:LSTCHG: ---- */

int hs_records_shadow_parse(char *line, struct hs_shadow *out)
{
	char *f[USHADOW_FIELDS];
	int r = split_line(line, f, USHADOW_FIELDS);
	if (r < 0)
		return r;
	if (f[2][0] != '\0' || strlen(f[0]) > HS_HASH_MAX)
		return -HS_E_FORMAT;

	long lstchg = HS_UNSET;
	/* only the empty spelling of "unset" round-trips here */
	if (f[1][0] != '\0') {
		r = parse_day(f[1], &lstchg);
		if (r < 0)
			return r;
	}
	out->hash = f[0];
	out->lstchg = lstchg;
	return 0;
}

int hs_records_shadow_format(const struct hs_shadow *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if ((e = check_field(r->hash, HS_HASH_MAX)) < 0)
		return e;
	if (!day_or_unset_ok(r->lstchg))
		return -HS_E_RANGE;
	if (r->lstchg == HS_UNSET)
		return format_into(out, "%s::\n", r->hash);
	return format_into(out, "%s:%ld:\n", r->hash, r->lstchg);
}

/* ---- USER/aging: MIN:MAX:WARN:INACT:EXPIRE: ---- */

void hs_records_aging_init_unset(struct hs_aging *a)
{
	a->min = a->max = a->warn = a->inact = a->expire = HS_UNSET;
	a->flag[0] = '\0';
}

static int check_flag(const char *flag)
{
	unsigned long v;

	if (!flag || flag[0] == '\0')
		return 0;
	return hs_parse_ulong(flag, 0, ULONG_MAX, &v);
}

int hs_records_aging_parse(char *line, struct hs_aging *out)
{
	char *f[AGING_FIELDS];
	struct hs_aging a;
	unsigned minus_one = 0;  /* "-1" is the only unset spelling here */
	int r = split_line(line, f, AGING_FIELDS);
	if (r < 0)
		return r;
	if ((r = parse_unset_day(f[0], false, 0, &minus_one, &a.min)) < 0 ||
	    (r = parse_unset_day(f[1], false, 0, &minus_one, &a.max)) < 0 ||
	    (r = parse_unset_day(f[2], false, 0, &minus_one, &a.warn)) < 0 ||
	    (r = parse_unset_day(f[3], false, 0, &minus_one, &a.inact)) < 0 ||
	    (r = parse_unset_day(f[4], false, 0, &minus_one, &a.expire)) < 0 ||
	    (r = check_flag(f[5])) < 0)
		return r;
	/* canonical decimal up to ULONG_MAX: it fits */
	snprintf(a.flag, sizeof(a.flag), "%s", f[5]);
	*out = a;
	return 0;
}

int hs_records_aging_format(const struct hs_aging *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if (!day_or_unset_ok(r->min) || !day_or_unset_ok(r->max) ||
	    !day_or_unset_ok(r->warn) || !day_or_unset_ok(r->inact) ||
	    !day_or_unset_ok(r->expire))
		return -HS_E_RANGE;
	if (!memchr(r->flag, '\0', sizeof(r->flag)) || !hs_records_field_valid(r->flag))
		return -HS_E_FIELD;
	if ((e = check_flag(r->flag)) < 0)
		return e;
	return format_into(out, "%ld:%ld:%ld:%ld:%ld:%s\n",
			   r->min, r->max, r->warn, r->inact, r->expire, r->flag);
}

/* ---- USER/shell ---- */

static int check_shell_path(const char *path)
{
	int r = check_field(path, HS_PATH_FIELD_MAX);
	if (r < 0)
		return r;
	if (path[0] != '/')
		return -HS_E_FORMAT;
	return 0;
}

int hs_records_shell_parse(char *line, const char **path_out)
{
	int r = line ? check_shell_path(line) : -HS_E_FORMAT;

	if (r < 0)
		return r;
	*path_out = line;
	return 0;
}

int hs_records_shell_format(const char *path, char **out)
{
	int r;

	if (!out)
		return -EINVAL;
	if (!path)
		return -HS_E_FORMAT;
	if ((r = check_shell_path(path)) < 0)
		return r;
	return format_into(out, "%s\n", path);
}

/* ---- /etc/passwd ---- */

int hs_records_passwd_parse(char *line, struct hs_passwd *out)
{
	char *f[PASSWD_FIELDS];
	unsigned long uid, gid;
	int r = split_line(line, f, PASSWD_FIELDS);
	if (r < 0)
		return r;
	if (!hs_names_user_valid(f[0]))
		return -HS_E_NAME;
	if (strlen(f[1]) > HS_HASH_MAX || strlen(f[4]) > HS_GECOS_MAX ||
	    strlen(f[5]) > HS_PATH_FIELD_MAX || strlen(f[6]) > HS_PATH_FIELD_MAX)
		return -HS_E_FORMAT;
	if ((r = parse_id(f[2], &uid)) < 0 || (r = parse_id(f[3], &gid)) < 0)
		return r;
	*out = (struct hs_passwd){
		.name = f[0], .passwd = f[1], .uid = (uid_t)uid, .gid = (gid_t)gid,
		.gecos = f[4], .dir = f[5], .shell = f[6],
	};
	return 0;
}

int hs_records_passwd_format(const struct hs_passwd *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if (!hs_names_user_valid(r->name))
		return -HS_E_NAME;
	if ((e = check_field(r->passwd, HS_HASH_MAX)) < 0 ||
	    (e = check_field(r->gecos, HS_GECOS_MAX)) < 0 ||
	    (e = check_field(r->dir, HS_PATH_FIELD_MAX)) < 0 ||
	    (e = check_field(r->shell, HS_PATH_FIELD_MAX)) < 0)
		return e;
	if ((unsigned long)r->uid > HS_ID_MAX || (unsigned long)r->gid > HS_ID_MAX)
		return -HS_E_RANGE;
	return format_into(out, "%s:%s:%lu:%lu:%s:%s:%s\n", r->name, r->passwd,
			   (unsigned long)r->uid, (unsigned long)r->gid,
			   r->gecos, r->dir, r->shell);
}

/* ---- /etc/group ---- */

int hs_records_group_parse(char *line, struct hs_group *out)
{
	char *f[GROUP_FIELDS];
	unsigned long gid;
	int r = split_line(line, f, GROUP_FIELDS);
	if (r < 0)
		return r;
	if (!hs_names_group_valid(f[0]))
		return -HS_E_NAME;
	if (strlen(f[1]) > HS_HASH_MAX)
		return -HS_E_FORMAT;
	if ((r = parse_id(f[2], &gid)) < 0 || (r = check_name_list(f[3])) < 0)
		return r;
	*out = (struct hs_group){
		.name = f[0], .passwd = f[1], .gid = (gid_t)gid, .members = f[3],
	};
	return 0;
}

int hs_records_group_format(const struct hs_group *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if (!hs_names_group_valid(r->name))
		return -HS_E_NAME;
	if ((e = check_field(r->passwd, HS_HASH_MAX)) < 0 ||
	    (e = check_list_field(r->members)) < 0)
		return e;
	if ((unsigned long)r->gid > HS_ID_MAX)
		return -HS_E_RANGE;
	return format_into(out, "%s:%s:%lu:%s\n", r->name, r->passwd,
			   (unsigned long)r->gid, str_or_empty(r->members));
}

/* ---- /etc/gshadow ---- */

int hs_records_gshadow_parse(char *line, struct hs_gshadow *out)
{
	char *f[GSHADOW_FIELDS];
	int r = split_line(line, f, GSHADOW_FIELDS);
	if (r < 0)
		return r;
	if (!hs_names_group_valid(f[0]))
		return -HS_E_NAME;
	if (strlen(f[1]) > HS_HASH_MAX)
		return -HS_E_FORMAT;
	if ((r = check_name_list(f[2])) < 0 || (r = check_name_list(f[3])) < 0)
		return r;
	*out = (struct hs_gshadow){
		.name = f[0], .passwd = f[1], .admins = f[2], .members = f[3],
	};
	return 0;
}

int hs_records_gshadow_format(const struct hs_gshadow *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if (!hs_names_group_valid(r->name))
		return -HS_E_NAME;
	if ((e = check_field(r->passwd, HS_HASH_MAX)) < 0 ||
	    (e = check_list_field(r->admins)) < 0 ||
	    (e = check_list_field(r->members)) < 0)
		return e;
	return format_into(out, "%s:%s:%s:%s\n", r->name, r->passwd,
			   str_or_empty(r->admins), str_or_empty(r->members));
}

/* ---- classic /etc/shadow ---- */

int hs_records_spwd_parse(char *line, struct hs_spwd *out)
{
	char *f[SPWD_FIELDS];
	struct hs_spwd s;
	size_t got;
	/* shadow-utils and glibc also read the classic 8-field line */
	int r = split_fields(line, f, SPWD_FIELDS - 1, SPWD_FIELDS, &got);
	if (r < 0)
		return r;
	s.short_line = got < SPWD_FIELDS;
	if (s.short_line)
		f[8] = f[7] + strlen(f[7]);  /* the empty string at the line's end */
	if (!hs_names_user_valid(f[0]))
		return -HS_E_NAME;
	if (strlen(f[1]) > HS_HASH_MAX)
		return -HS_E_FORMAT;
	/* "" and "-1" are both unset; minus_one remembers the spelling */
	s.minus_one = 0;
	long *days[6] = { &s.lstchg, &s.min, &s.max, &s.warn, &s.inact, &s.expire };
	for (unsigned i = 0; i < 6; i++)
		if ((r = parse_unset_day(f[2 + i], true, 1u << i, &s.minus_one, days[i])) < 0)
			return r;
	if ((r = check_flag(f[8])) < 0)
		return r;
	s.name = f[0];
	s.hash = f[1];
	s.flag = f[8];
	*out = s;
	return 0;
}

/* Spell one day field: a number, or for unset "" / "-1" as recorded in
 * minus_one.  A set value ignores its minus_one bit, so a tool may change
 * a field from unset to a value without touching the bitmask. */
static void spell_day(char buf[32], long v, unsigned bit, unsigned minus_one)
{
	if (v == HS_UNSET)
		snprintf(buf, 32, "%s", (minus_one & bit) ? "-1" : "");
	else
		snprintf(buf, 32, "%ld", v);
}

int hs_records_spwd_format(const struct hs_spwd *r, char **out)
{
	char d[6][32];
	int e;

	if (!r || !out)
		return -EINVAL;
	if (!hs_names_user_valid(r->name))
		return -HS_E_NAME;
	if ((e = check_field(r->hash, HS_HASH_MAX)) < 0)
		return e;
	if (r->flag && !hs_records_field_valid(r->flag))
		return -HS_E_FIELD;
	if ((e = check_flag(r->flag)) < 0)
		return e;
	const long v[6] = { r->lstchg, r->min, r->max, r->warn, r->inact, r->expire };
	for (unsigned i = 0; i < 6; i++) {
		if (!day_or_unset_ok(v[i]))
			return -HS_E_RANGE;
		spell_day(d[i], v[i], 1u << i, r->minus_one);
	}
	if (r->short_line && (!r->flag || !r->flag[0]))
		return format_into(out, "%s:%s:%s:%s:%s:%s:%s:%s\n", r->name, r->hash,
				   d[0], d[1], d[2], d[3], d[4], d[5]);
	return format_into(out, "%s:%s:%s:%s:%s:%s:%s:%s:%s\n", r->name, r->hash,
			   d[0], d[1], d[2], d[3], d[4], d[5], str_or_empty(r->flag));
}

/* ---- /etc/subuid, /etc/subgid ---- */

/* A name, or a numeric id spelled canonically (so it round-trips). */
static int check_subid_owner(const char *owner)
{
	unsigned long id;

	if (!owner || owner[0] == '\0')
		return -HS_E_NAME;
	if (owner[0] >= '0' && owner[0] <= '9')
		return parse_id(owner, &id);
	return hs_names_user_valid(owner) ? 0 : -HS_E_NAME;
}

static int check_subid_range(unsigned long start, unsigned long count)
{
	if (start > HS_ID_MAX || count < 1 || count > HS_ID_MAX)
		return -HS_E_RANGE;
	/* 64-bit sum: cannot wrap even where unsigned long is 32 bits */
	if ((uint64_t)start + count > (UINT64_C(1) << 32))
		return -HS_E_RANGE;
	return 0;
}

int hs_records_subid_parse(char *line, struct hs_subid *out)
{
	char *f[SUBID_FIELDS];
	unsigned long start, count;
	int r = split_line(line, f, SUBID_FIELDS);
	if (r < 0)
		return r;
	if ((r = check_subid_owner(f[0])) < 0 ||
	    (r = hs_parse_ulong(f[1], 0, HS_ID_MAX, &start)) < 0 ||
	    (r = hs_parse_ulong(f[2], 1, HS_ID_MAX, &count)) < 0 ||
	    (r = check_subid_range(start, count)) < 0)
		return r;
	*out = (struct hs_subid){ .owner = f[0], .start = start, .count = count };
	return 0;
}

int hs_records_subid_format(const struct hs_subid *r, char **out)
{
	int e;

	if (!r || !out)
		return -EINVAL;
	if ((e = check_subid_owner(r->owner)) < 0 ||
	    (e = check_subid_range(r->start, r->count)) < 0)
		return e;
	return format_into(out, "%s:%lu:%lu\n", r->owner, r->start, r->count);
}

/* ---- comma-separated lists ---- */

size_t hs_records_list_next(const char **cursor, const char **elem)
{
	const char *p;

	if (!cursor || !*cursor)
		return 0;
	p = *cursor;
	/* skip empty elements so 0 always means "end" */
	while (*p == ',')
		p++;
	if (*p == '\0') {
		*cursor = p;
		return 0;
	}
	size_t len = strcspn(p, ",");
	*elem = p;
	p += len;
	if (*p == ',')
		p++;
	*cursor = p;
	return len;
}

bool hs_records_list_contains(const char *list, const char *name)
{
	const char *cur = list, *elem;
	size_t len, nlen;

	if (!list || !name)
		return false;
	nlen = strlen(name);
	while ((len = hs_records_list_next(&cur, &elem)) > 0)
		if (len == nlen && memcmp(elem, name, len) == 0)
			return true;
	return false;
}

/* Build a new list from list's elements, skipping `skip` (may be NULL) and
 * appending `add` (may be NULL). */
static int list_rebuild(const char *list, const char *skip, const char *add, char **out)
{
	size_t cap = (list ? strlen(list) : 0) + (add ? strlen(add) : 0) + 2;
	size_t used = 0, slen = skip ? strlen(skip) : 0;
	const char *cur = list, *elem;
	size_t len;
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	while ((len = hs_records_list_next(&cur, &elem)) > 0) {
		if (skip && len == slen && memcmp(elem, skip, len) == 0)
			continue;
		if (used)
			s[used++] = ',';
		memcpy(s + used, elem, len);
		used += len;
	}
	if (add) {
		size_t alen = strlen(add);
		if (used)
			s[used++] = ',';
		memcpy(s + used, add, alen);
		used += alen;
	}
	s[used] = '\0';
	*out = s;
	return 0;
}

int hs_records_list_add(const char *list, const char *name, char **out)
{
	if (!out)
		return -EINVAL;
	if (!hs_names_user_valid(name))
		return -HS_E_NAME;
	/* a copy either way; name appended only when missing */
	return list_rebuild(list, NULL, hs_records_list_contains(list, name) ? NULL : name, out);
}

int hs_records_list_remove(const char *list, const char *name, char **out)
{
	if (!out || !name)
		return -EINVAL;
	return list_rebuild(list, name, NULL, out);
}
