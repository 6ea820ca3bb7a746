/* Parsers and formatters for every record type the suite reads or writes.
 *
 * Parsers work IN PLACE on a mutable, NUL-terminated line WITHOUT its
 * trailing newline: ':' separators are overwritten with NUL and the string
 * fields of the result point into the line.  They allocate nothing, so the
 * NSS module can parse inside the caller's buffer.  On failure they return
 * -HS_E_FORMAT, -HS_E_RANGE, -HS_E_NAME or -HS_E_FIELD and the line
 * contents are unspecified.
 *
 * Formatters validate every field (no ':', newline or control character in
 * any field, names valid, numbers in range) and return a malloc'd line that
 * ends in '\n' through *out, or a negative error and *out untouched.
 *
 * Round trip: format(parse(line)) == line + "\n" for every accepted line.
 *
 * Numbers: decimal, no sign, no leading zeros, no whitespace.  Day fields
 * (shadow(5)) are in [0, HS_DAYS_MAX]; an unset day field is HS_UNSET (-1). */
#ifndef HS_RECORDS_H
#define HS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HS_UNSET     (-1L)
#define HS_DAYS_MAX  2147483647L   /* 2^31-1, as shadow-utils and admins write "never" */
#define HS_ID_MAX    4294967294UL  /* (uid_t)-1 is reserved */
#define HS_HASH_MAX  512           /* bytes of a password hash field */
#define HS_PATH_FIELD_MAX 4096     /* home directory / shell path */
#define HS_GECOS_MAX 1024

/* A field is acceptable when it has no ':', '\n' or other ASCII control
 * byte (< 0x20, 0x7f).  Bytes >= 0x80 (UTF-8) are allowed. */
bool hs_records_field_valid(const char *s);

/* ---- per-user files (DESIGN section 2) ---- */

/* USER/shadow: "HASH:LSTCHG:"  LSTCHG may be empty (unset, shadow(5)). */
struct hs_shadow {
	const char *hash;   /* may be "" (no password), "!..." (locked), "*" */
	long lstchg;  /* HS_UNSET or [0, HS_DAYS_MAX] */
};
int hs_records_shadow_parse(char *line, struct hs_shadow *out);
int hs_records_shadow_format(const struct hs_shadow *r, char **out);

/* USER/aging: "MIN:MAX:WARN:INACT:EXPIRE:FLAG", each "-1" (unset) or a
 * day count.  The canonical unset spelling in this file is "-1"; an empty
 * field is rejected.  FLAG is the reserved ninth field of a classic
 * /etc/shadow line, which pwconv keeps here and pwunconv gives back:
 * empty (almost always) or a decimal number; no tool reads it. */
#define HS_FLAG_MAX 20  /* digits of ULONG_MAX */
struct hs_aging {
	long min, max, warn, inact, expire;
	char flag[HS_FLAG_MAX + 1];  /* "" unless pwconv found one */
};
void hs_records_aging_init_unset(struct hs_aging *a);
int hs_records_aging_parse(char *line, struct hs_aging *out);
int hs_records_aging_format(const struct hs_aging *r, char **out);

/* USER/shell: an absolute path.  The parser takes the file contents with
 * at most one trailing newline already stripped by the caller (readers
 * accept a file without the newline, as the 2012 code wrote it). */
int hs_records_shell_parse(char *line, const char **path_out);
int hs_records_shell_format(const char *path, char **out);

/* ---- global files ---- */

/* A NIS compat line of /etc/passwd, group, shadow or gshadow ("+", "-",
 * "+name", "-name", "+@netgroup", "-@netgroup", with or without the other
 * fields): the text starts with '+' or '-', which no valid name does.  It
 * is no entry: readers skip it, writers keep its bytes where they are
 * (glibc's `compat` source reads it; shadow-utils keeps it the same way). */
static inline bool hs_records_nis_line(const char *text, size_t len)
{
	/* inline: the account-file scans ask it for every line */
	return text && len > 0 && (text[0] == '+' || text[0] == '-');
}

/* /etc/passwd: name:passwd:uid:gid:gecos:dir:shell */
struct hs_passwd {
	const char *name, *passwd;
	uid_t uid;
	gid_t gid;
	const char *gecos, *dir, *shell;
};
int hs_records_passwd_parse(char *line, struct hs_passwd *out);
int hs_records_passwd_format(const struct hs_passwd *r, char **out);

/* /etc/group: name:passwd:gid:member,member,...
 * members is the raw comma-separated list (may be ""); every member is
 * validated as a user name by the parser.  Use hs_records_list_* to work on it. */
struct hs_group {
	const char *name, *passwd;
	gid_t gid;
	const char *members;
};
int hs_records_group_parse(char *line, struct hs_group *out);
int hs_records_group_format(const struct hs_group *r, char **out);

/* /etc/gshadow: name:passwd:admins:members (lists as in hs_group) */
struct hs_gshadow {
	const char *name, *passwd;
	const char *admins, *members;
};
int hs_records_gshadow_parse(char *line, struct hs_gshadow *out);
int hs_records_gshadow_format(const struct hs_gshadow *r, char **out);

/* classic /etc/shadow: name:hash:lstchg:min:max:warn:inact:expire:flag
 * Day fields may be empty or "-1" (both unset); minus_one records which
 * were spelled "-1" (bit i for field i, lstchg = bit 0 ... expire = bit 5)
 * so the round trip is exact.  flag is the reserved field, kept verbatim
 * (must be empty or a decimal number).  A line of 8 fields (no flag
 * field, as glibc and shadow-utils accept) parses with flag "" and
 * short_line set, and is written back with 8 while flag stays empty. */
struct hs_spwd {
	const char *name, *hash;
	long lstchg, min, max, warn, inact, expire;
	const char *flag;
	unsigned minus_one;
	bool short_line;
};
int hs_records_spwd_parse(char *line, struct hs_spwd *out);
int hs_records_spwd_format(const struct hs_spwd *r, char **out);

/* /etc/subuid, /etc/subgid: owner:start:count.  owner is a user/group name
 * or a numeric id; start and count are in [0, HS_ID_MAX] (count >= 1) and
 * start + count must not exceed 2^32. */
struct hs_subid {
	const char *owner;
	unsigned long start, count;
};
int hs_records_subid_parse(char *line, struct hs_subid *out);
int hs_records_subid_format(const struct hs_subid *r, char **out);

/* ---- comma-separated name lists (group members, admins) ---- */

/* Is name an element of list?  list may be "" or NULL. */
bool hs_records_list_contains(const char *list, const char *name);
/* New malloc'd list with name appended (unchanged copy if present). */
int hs_records_list_add(const char *list, const char *name, char **out);
/* New malloc'd list without name. */
int hs_records_list_remove(const char *list, const char *name, char **out);
/* Iterate: returns the length of the element starting at *cursor and
 * advances *cursor past it and its comma; 0 at the end. */
size_t hs_records_list_next(const char **cursor, const char **elem);

#endif
