/* Lines of a file held in memory, and a growable buffer. */
#ifndef HS_STRBUF_H
#define HS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

/* Iterate over the lines of a file held in memory.  *line is set to the
 * start of the next line and its length excludes the newline; returns
 * false at the end.  A final line without a newline is still returned. */
struct hs_line_iter { const char *p, *end; unsigned long lineno; };
void hs_strbuf_lines_init(struct hs_line_iter *it, const char *data, size_t len);
bool hs_strbuf_line_next(struct hs_line_iter *it, const char **line, size_t *len);

/* A growable buffer for building a new file. */
struct hs_buf { char *data; size_t len, cap; };
int hs_strbuf_append(struct hs_buf *b, const char *s, size_t n);
void hs_strbuf_free(struct hs_buf *b);
#define _cleanup_strbuf_ __attribute__((cleanup(hs_strbuf_free)))

#endif
