/* /etc/gshadow, /etc/subuid and /etc/subgid, read only (see etc_read.h). */
#include "etc_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "layout.h"
#include "strbuf.h"
#include "util.h"

/* Read path into *data (the caller frees it) and start it on its lines;
 * a missing file has none. */
static int read_file(const char *path, char **data, size_t *len, struct hs_line_iter *it)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;
	int r = hs_fileio_read_alloc_path(path, &ex, data, len);

	hs_strbuf_lines_init(it, *data, r < 0 ? 0 : *len);
	return r == -ENOENT ? 0 : r;
}

/* The next line that holds no NUL, or NULL at the end.  The data is a
 * private copy: the line is ended in place, where its newline (or the
 * final NUL) was. */
static char *next_line(struct hs_line_iter *it)
{
	const char *line;
	size_t len;

	while (hs_strbuf_line_next(it, &line, &len)) {
		char *l = (char *)line;

		if (memchr(l, '\0', len))
			continue;
		l[len] = '\0';
		return l;
	}
	return NULL;
}

int hs_etc_read_subid(const char *path, hs_etc_read_subid_fn fn, void *ctx)
{
	_cleanup_free_ char *data = NULL;
	struct hs_line_iter it;
	struct hs_subid rec;
	size_t len;
	char *line;
	int r;

	if (!path || !fn)
		return -EINVAL;
	r = read_file(path, &data, &len, &it);
	while (r == 0 && (line = next_line(&it)))
		if (hs_records_subid_parse(line, &rec) == 0)
			r = fn(&rec, ctx);
	return r;
}

void hs_etc_read_gshadow_free(struct hs_gshadow_entry *e)
{
	if (!e)
		return;
	if (e->data) {
		hs_wipe(e->data, e->len);
		free(e->data);
	}
	memset(e, 0, sizeof(*e));
}

int hs_etc_read_gshadow_group(const char *path, const char *group, struct hs_gshadow_entry *e)
{
	struct hs_line_iter it;
	size_t glen;
	char *line;
	int r;

	if (!e)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	if (!path || !group || !group[0])
		return -EINVAL;
	glen = strlen(group);
	r = read_file(path, &e->data, &e->len, &it);
	while (r == 0 && !e->found && (line = next_line(&it)))
		/* cheap name test first; parse only the candidate, and take it
		 * only under its parsed name: a name from another NSS source
		 * may hold a ':' ("alice:!" is no prefix of alice's line) */
		e->found = strncmp(line, group, glen) == 0 && line[glen] == ':' &&
			   hs_records_gshadow_parse(line, &e->gs) == 0 &&
			   strcmp(e->gs.name, group) == 0;
	return r;
}
