/* /etc/gshadow, one group, read only (see gshadow_read.h). */
#include "gshadow_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "layout.h"
#include "strbuf.h"
#include "util.h"

void hs_gshadow_read_entry_free(struct hs_gshadow_entry *e)
{
	if (!e)
		return;
	if (e->data) {
		hs_wipe(e->data, e->len);
		free(e->data);
	}
	memset(e, 0, sizeof(*e));
}

int hs_gshadow_read_group(const char *path, const char *group, struct hs_gshadow_entry *e)
{
	const struct hs_file_expect ex = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = HS_GLOBALFILE_MAX,
	};
	struct hs_line_iter it;
	const char *line;
	size_t glen, llen;
	int r;

	if (!e)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	if (!path || !group || !group[0])
		return -EINVAL;
	r = hs_fileio_read_alloc_path(path, &ex, &e->data, &e->len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	glen = strlen(group);
	hs_strbuf_lines_init(&it, e->data, e->len);
	while (hs_strbuf_line_next(&it, &line, &llen)) {
		/* data is a private copy: end the line in place, where its
		 * newline (or the final NUL) was */
		char *l = (char *)line;

		/* cheap name test first; parse only the candidate */
		if (llen <= glen || l[glen] != ':' || memcmp(l, group, glen) != 0)
			continue;
		if (memchr(l, '\0', llen))
			continue;
		l[llen] = '\0';
		if (hs_records_gshadow_parse(l, &e->gs) < 0)
			continue;
		e->found = true;
		return 0;
	}
	return 0;
}
