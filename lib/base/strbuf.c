/* Lines of a file held in memory, and a growable buffer to build one. */
#include "strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void hs_strbuf_lines_init(struct hs_line_iter *it, const char *data, size_t len)
{
	it->p = data;
	it->end = data ? data + len : NULL;
	it->lineno = 0;
}

bool hs_strbuf_line_next(struct hs_line_iter *it, const char **line, size_t *len)
{
	if (!it->p || it->p >= it->end)
		return false;
	const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	const char *stop = nl ? nl : it->end;

	*line = it->p;
	*len = (size_t)(stop - it->p);
	it->p = nl ? nl + 1 : it->end;
	it->lineno++;
	return true;
}

int hs_strbuf_append(struct hs_buf *b, const char *s, size_t n)
{
	if (n == 0)
		return 0;
	if (!s)
		return -EINVAL;
	if (n > SIZE_MAX - 1 - b->len)
		return -ENOMEM;
	size_t need = b->len + n + 1;   /* always keep a terminating NUL */
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		/* not realloc: the old block may hold hashes and must be
		 * wiped before it goes back to the allocator */
		char *p = malloc(cap);
		if (!p)
			return -ENOMEM;
		if (b->data) {
			memcpy(p, b->data, b->len);
			hs_wipe(b->data, b->cap);
			free(b->data);
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void hs_strbuf_free(struct hs_buf *b)
{
	if (!b)
		return;
	hs_wipe(b->data, b->cap);
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
