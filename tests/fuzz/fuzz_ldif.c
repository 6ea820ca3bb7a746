/* Fuzz target for LDIF (lib/format/ldif.c): whatever the reader accepts,
 * the writer writes back so that the reader gives the same entries byte
 * for byte (a value can never leak into another attribute or entry), and
 * no line the writer makes is longer than 76 bytes or holds a byte that
 * is not printable ASCII.  Any input the reader refuses leaves nothing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldif.h"
#include "strbuf.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_all(const struct hs_ldif *l, struct hs_buf *out)
{
	for (size_t i = 0; i < l->n; i++) {
		if (hs_ldif_append_str(out, "dn", l->e[i].dn) < 0)
			abort();
		for (size_t k = 0; k < l->e[i].n; k++)
			if (hs_ldif_append(out, l->e[i].v[k].attr, l->e[i].v[k].value,
					   l->e[i].v[k].len) < 0)
				abort();
		if (hs_strbuf_append(out, "\n", 1) < 0)
			abort();
	}
}

static void check_lines(const struct hs_buf *out)
{
	size_t col = 0;

	for (size_t i = 0; i < out->len; i++) {
		unsigned char c = (unsigned char)out->data[i];

		if (c == '\n') {
			col = 0;
			continue;
		}
		if (c < 0x20 || c >= 0x7f || ++col > 76)
			abort();
	}
}

static void check_same(const struct hs_ldif *a, const struct hs_ldif *b)
{
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->e[i].dn, b->e[i].dn) != 0 || a->e[i].n != b->e[i].n)
			abort();
		for (size_t k = 0; k < a->e[i].n; k++) {
			const struct hs_ldif_value *x = &a->e[i].v[k], *y = &b->e[i].v[k];

			if (strcmp(x->attr, y->attr) != 0 || x->len != y->len ||
			    memcmp(x->value, y->value, x->len) != 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_ldif first, again;
	struct hs_err err = HS_ERR_INIT;
	struct hs_buf out = { 0 };

	if (hs_ldif_parse((const char *)data, size, &first, &err) < 0) {
		if (first.n || first.e || !err.msg[0])
			abort();
		return 0;
	}
	write_all(&first, &out);
	check_lines(&out);
	if (hs_ldif_parse(out.data ? out.data : "", out.len, &again, &err) < 0)
		abort();
	check_same(&first, &again);
	hs_ldif_free(&first);
	hs_ldif_free(&again);
	hs_strbuf_free(&out);
	return 0;
}
