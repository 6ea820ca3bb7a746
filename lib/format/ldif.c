/* LDIF (RFC 2849) writer and reader, see ldif.h. */
#include "ldif.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strbuf.h"
#include "util.h"

/* RFC 2849 allows longer lines; 76 is what every LDAP tool writes and what
 * a mail or terminal will not wrap. */
#define LDIF_COLUMNS 76

#define LETTERS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
static const char b64_alphabet[] = LETTERS "0123456789+/";

bool hs_ldif_value_safe(const char *value, size_t len)
{
	if (len == 0)
		return true;
	/* SAFE-INIT-CHAR: no space, ':' or '<' first */
	if (value[0] == ' ' || value[0] == ':' || value[0] == '<')
		return false;
	/* a trailing space would be eaten by many readers (RFC 2849, note 8) */
	if (value[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];

		/* SAFE-CHAR is 0x01-0x7F but CR and LF; control bytes are
		 * encoded too, so nothing a terminal interprets goes out raw */
		if (c < 0x20 || c >= 0x7f)
			return false;
	}
	return true;
}

/* A letter, then letters, digits, '-' and options after ';' */
static bool attr_valid(const char *attr)
{
	size_t len = strlen(attr);

	return len > 0 && strchr(LETTERS, attr[0]) && attr[len - 1] != ';' &&
	       strspn(attr, LETTERS "0123456789-;") == len;
}

static int base64_append(struct hs_buf *out, const unsigned char *in, size_t len)
{
	char quad[4];
	int r;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = len - i;

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		quad[0] = b64_alphabet[(v >> 18) & 63];
		quad[1] = b64_alphabet[(v >> 12) & 63];
		quad[2] = left > 1 ? b64_alphabet[(v >> 6) & 63] : '=';
		quad[3] = left > 2 ? b64_alphabet[v & 63] : '=';
		if ((r = hs_strbuf_append(out, quad, 4)) < 0)
			return r;
	}
	return 0;
}

int hs_ldif_append(struct hs_buf *out, const char *attr, const char *value, size_t len)
{
	_cleanup_strbuf_ struct hs_buf line = { 0 };
	bool safe = hs_ldif_value_safe(value, len);
	size_t width = LDIF_COLUMNS;
	int r;

	if (strcmp(attr, "dn") != 0 && !attr_valid(attr))
		return -EINVAL;
	r = hs_strbuf_append(&line, attr, strlen(attr));
	if (r == 0)
		r = hs_strbuf_append(&line, safe ? ": " : ":: ", safe ? 2 : 3);
	if (r == 0)
		r = safe ? hs_strbuf_append(&line, value, len)
			 : base64_append(&line, (const unsigned char *)value, len);
	/* folded: a newline and a space after every LDIF_COLUMNS bytes (the
	 * continuation's space counts) */
	for (size_t done = 0; r == 0 && done < line.len; done += width, width = LDIF_COLUMNS - 1) {
		if (done > 0)
			r = hs_strbuf_append(out, "\n ", 2);
		if (r == 0)
			r = hs_strbuf_append(out, line.data + done,
					     line.len - done < width ? line.len - done : width);
	}
	if (r == 0)
		r = hs_strbuf_append(out, "\n", 1);
	return r;
}

int hs_ldif_append_str(struct hs_buf *out, const char *attr, const char *value)
{
	return hs_ldif_append(out, attr, value, strlen(value));
}

/* ---- reader ---- */

static int b64_digit(unsigned char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;

	return p ? (int)(p - b64_alphabet) : -1;
}

/* Decode in (spaces ignored) into a malloc'd, NUL-terminated buffer. */
static int base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
	_cleanup_secret_buf_ struct hs_secret_buf buf = { malloc(len / 4 * 3 + 4), len / 4 * 3 + 4 };
	uint32_t acc = 0;
	size_t n = 0, digits = 0, pad = 0;

	if (!buf.p)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		int d = in[i] == '=' ? 0 : b64_digit((unsigned char)in[i]);

		if (in[i] == ' ')
			continue;
		/* '=' only as the last one or two of a group, nothing after */
		if (in[i] == '=' && digits % 4 >= 2)
			pad++;
		else if (d < 0 || in[i] == '=' || pad)
			return -HS_E_FORMAT;
		acc = acc << 6 | (uint32_t)d;
		if (++digits % 4 == 0) {
			buf.p[n++] = (char)(acc >> 16);
			buf.p[n++] = (char)(acc >> 8);
			buf.p[n++] = (char)acc;
			acc = 0;
		}
	}
	if (digits % 4 != 0)
		return -HS_E_FORMAT;
	n -= pad;
	buf.p[n] = '\0';
	*out = TAKE_PTR(buf.p);
	*out_len = n;
	return 0;
}

struct reader {
	struct hs_line_iter it;         /* it.lineno: of the physical line last read */
	struct hs_err *err;
};

/* The next physical line (CR LF or LF), without its end. */
static bool next_physical(struct reader *rd, const char **line, size_t *len)
{
	if (!hs_strbuf_line_next(&rd->it, line, len))
		return false;
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*len)--;
	return true;
}

/* The next logical line into cur (continuations joined), *blank for an
 * empty line; false at the end.  Comments are skipped. */
static int next_logical(struct reader *rd, struct hs_buf *cur, bool *blank, unsigned long *lineno)
{
	const char *line;
	size_t len;
	int r;

	for (;;) {
		if (!next_physical(rd, &line, &len))
			return 0;
		if (len > 0 && line[0] == ' ')
			return hs_err_set(rd->err, -HS_E_FORMAT,
					  "line %lu: a continuation line with nothing to continue",
					  rd->it.lineno);
		cur->len = 0;
		*lineno = rd->it.lineno;
		*blank = len == 0;
		bool comment = len > 0 && line[0] == '#';

		if (!comment && (r = hs_strbuf_append(cur, line, len)) < 0)
			return r;
		while (rd->it.p < rd->it.end && rd->it.p[0] == ' ') {
			/* the entry has ended: an attribute folded onto the blank
			 * line would otherwise vanish without a word */
			if (*blank)
				return hs_err_set(rd->err, -HS_E_FORMAT,
						  "line %lu: continuation of an empty line",
						  rd->it.lineno + 1);
			next_physical(rd, &line, &len);
			if (!comment && (r = hs_strbuf_append(cur, line + 1, len - 1)) < 0)
				return r;
		}
		if (!comment)
			return 1;
	}
}

/* Split "attr: value", "attr:: base64" into *attr (NUL-terminated in
 * cur) and a malloc'd value. */
static int split_attr(struct reader *rd, unsigned long lineno, struct hs_buf *cur,
		      char **attr, char **value, size_t *vlen)
{
	char *colon = cur->len ? memchr(cur->data, ':', cur->len) : NULL;
	const char *v;
	size_t n;

	if (!colon || colon == cur->data)
		return hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: not an \"attribute: value\" line",
				  lineno);
	*colon = '\0';
	*attr = cur->data;
	if (memchr(cur->data, '\0', (size_t)(colon - cur->data)) ||
	    (strcmp(*attr, "dn") != 0 && !attr_valid(*attr)))
		return hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: invalid attribute name", lineno);
	v = colon + 1;
	n = cur->len - (size_t)(v - cur->data);
	if (n > 0 && v[0] == '<')
		return hs_err_set(rd->err, -HS_E_FORMAT,
				  "line %lu: URL values (\"%s:<\") are not supported", lineno, *attr);
	if (n > 0 && v[0] == ':') {
		if (base64_decode(v + 1, n - 1, value, vlen) < 0)
			return hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: invalid base64 value of %s",
					  lineno, *attr);
		return 0;
	}
	while (n > 0 && v[0] == ' ')
		v++, n--;
	if (memchr(v, '\0', n))
		return hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: a NUL byte in the value of %s",
				  lineno, *attr);
	*value = strndup(v, n);         /* no NUL inside: refused above */
	if (!*value)
		return -ENOMEM;
	*vlen = n;
	return 0;
}

void hs_ldif_free(struct hs_ldif *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct hs_ldif_entry *e = &l->e[i];

		for (size_t j = 0; j < e->n; j++) {
			hs_free_secret(e->v[j].attr);
			hs_wipe(e->v[j].value, e->v[j].len);
			free(e->v[j].value);
		}
		free(e->v);
		hs_free_secret(e->dn);
	}
	free(l->e);
	*l = (struct hs_ldif){ 0 };
}

static int grow(void **array, size_t n, size_t size)
{
	/* the capacity is 8, 16, 32, ...: full when n is one of them */
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return 0;
	size_t cap = n ? 2 * n : 8;
	void *p = realloc(*array, cap * size);

	if (!p)
		return -ENOMEM;
	*array = p;
	return 0;
}

/* One "attr: value" line into the current entry, or its dn. */
static int add_line(struct reader *rd, unsigned long lineno, struct hs_buf *cur,
		    struct hs_ldif *out, bool *in_entry, bool *version_ok)
{
	_cleanup_secret_buf_ struct hs_secret_buf value = { NULL, 0 };
	_cleanup_free_ char *name = NULL;
	struct hs_ldif_entry *e;
	char *attr = NULL;
	int r = split_attr(rd, lineno, cur, &attr, &value.p, &value.size);

	if (r < 0)
		return r;
	if (!*in_entry && *version_ok && strcasecmp(attr, "version") == 0) {
		*version_ok = false;
		return strcmp(value.p, "1") == 0 ? 0
			: hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: unknown LDIF version", lineno);
	}
	*version_ok = false;
	if (!*in_entry) {
		if (strcasecmp(attr, "dn") != 0 || memchr(value.p, '\0', value.size))
			return hs_err_set(rd->err, -HS_E_FORMAT, "line %lu: an entry must start with dn:",
					  lineno);
		if ((r = grow((void **)&out->e, out->n, sizeof(*out->e))) < 0)
			return r;
		out->e[out->n] = (struct hs_ldif_entry){ .lineno = lineno };
		out->e[out->n++].dn = TAKE_PTR(value.p);
		*in_entry = true;
		return 0;
	}
	if (strcasecmp(attr, "changetype") == 0 || strcasecmp(attr, "control") == 0)
		return hs_err_set(rd->err, -HS_E_FORMAT,
				  "line %lu: change records are not supported (content records only)",
				  lineno);
	e = &out->e[out->n - 1];
	name = strdup(attr);
	if (!name || grow((void **)&e->v, e->n, sizeof(*e->v)) < 0)
		return -ENOMEM;
	e->v[e->n] = (struct hs_ldif_value){ .attr = TAKE_PTR(name), .len = value.size };
	e->v[e->n++].value = TAKE_PTR(value.p);
	return 0;
}

int hs_ldif_parse(const char *data, size_t len, struct hs_ldif *out, struct hs_err *err)
{
	struct reader rd = { .err = err };
	_cleanup_strbuf_ struct hs_buf cur = { 0 };
	bool in_entry = false, version_ok = true, blank = false;
	unsigned long lineno = 0;
	int r;

	*out = (struct hs_ldif){ 0 };
	hs_strbuf_lines_init(&rd.it, data, len);
	while ((r = next_logical(&rd, &cur, &blank, &lineno)) > 0) {
		if (blank) {
			in_entry = false;
			continue;
		}
		if ((r = add_line(&rd, lineno, &cur, out, &in_entry, &version_ok)) < 0)
			break;
	}
	/* r: 0 at the end of data, else the failure */
	if (r == -ENOMEM)
		hs_err_set(err, r, "out of memory");
	if (r < 0)
		hs_ldif_free(out);
	return r;
}

const struct hs_ldif_value *hs_ldif_next(const struct hs_ldif_entry *e, const char *attr,
                                         size_t *i)
{
	for (; *i < e->n; (*i)++) {
		if (strcasecmp(e->v[*i].attr, attr) == 0)
			return &e->v[(*i)++];
	}
	return NULL;
}

bool hs_ldif_has_class(const struct hs_ldif_entry *e, const char *oc)
{
	const struct hs_ldif_value *v;
	size_t i = 0;

	while ((v = hs_ldif_next(e, "objectClass", &i)))
		if (strcasecmp(v->value, oc) == 0)
			return true;
	return false;
}
