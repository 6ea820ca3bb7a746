/* LDIF (RFC 2849) content records: the one writer and the one reader of
 * the directory export and import (src/admin/hs-ldif.c).
 *
 * Writer: every value goes out either as "attr: value" when it is a
 * SAFE-STRING (printable ASCII, not starting with a space, ':' or '<',
 * not ending with a space) or as "attr:: BASE64" otherwise, so no byte a
 * user put into a field (a newline, a CR, UTF-8, a leading colon) can end
 * a line, start another attribute or turn into a URL reference.  Lines
 * are folded at 76 columns.
 *
 * Reader: content records only ("dn:" then "attr: value" lines; no
 * changetype, no "attr:< URL"), continuation lines unfolded, comments
 * skipped, base64 values decoded.  Values may hold any byte, NUL
 * included: each carries its length and is also NUL-terminated. */
#ifndef HS_LDIF_H
#define HS_LDIF_H

#include <stdbool.h>
#include <stddef.h>

struct hs_buf;
struct hs_err;

/* Can len bytes at value be written as they are after "attr: "? */
bool hs_ldif_value_safe(const char *value, size_t len);

/* Append "attr: value\n" or "attr:: BASE64\n" (folded) to out.  attr is an
 * attribute description ([A-Za-z][A-Za-z0-9-]*, options after ';', or
 * "dn"); anything else is -EINVAL.  Returns 0 or a negative error. */
int hs_ldif_append(struct hs_buf *out, const char *attr, const char *value, size_t len);
/* The same for a NUL-terminated value. */
int hs_ldif_append_str(struct hs_buf *out, const char *attr, const char *value);

struct hs_ldif_value {
	char *attr;             /* as written (case kept, options included) */
	char *value;            /* len bytes, NUL-terminated */
	size_t len;
};
struct hs_ldif_entry {
	unsigned long lineno;   /* of its "dn:" line */
	char *dn;               /* NUL-terminated; refused if it holds a NUL */
	struct hs_ldif_value *v;
	size_t n;
};
struct hs_ldif {
	struct hs_ldif_entry *e;
	size_t n;
};

/* Parse the LDIF in data.  On failure returns -HS_E_FORMAT (or -ENOMEM)
 * with err saying "LINE N: what is wrong", and *out empty.  The strings
 * may hold hashes: hs_ldif_free wipes them. */
int hs_ldif_parse(const char *data, size_t len, struct hs_ldif *out, struct hs_err *err);
void hs_ldif_free(struct hs_ldif *l);

/* The values of attr (compared without case, options included) in e, one
 * at a time: the first at an index >= *i, *i moved past it; NULL at the
 * end. */
const struct hs_ldif_value *hs_ldif_next(const struct hs_ldif_entry *e, const char *attr,
                                         size_t *i);
/* Does e carry objectClass oc (without case)? */
bool hs_ldif_has_class(const struct hs_ldif_entry *e, const char *oc);

#endif
