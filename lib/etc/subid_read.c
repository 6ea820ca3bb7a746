/* /etc/subuid and /etc/subgid, read only (see subid_read.h). */
#include "subid_read.h"

#include <errno.h>
#include <string.h>

#include "fileio.h"
#include "layout.h"
#include "strbuf.h"
#include "util.h"

int hs_subid_read(const char *path, hs_subid_read_fn fn, void *ctx)
{
	const struct hs_file_expect ex = {
		.uid = HS_ANY_UID, .gid = HS_ANY_GID, .max_size = HS_GLOBALFILE_MAX,
	};
	_cleanup_free_ char *data = NULL;
	struct hs_line_iter it;
	const char *line;
	size_t len, llen;
	int r;

	if (!path || !fn)
		return -EINVAL;
	r = hs_fileio_read_alloc_path(path, &ex, &data, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	hs_strbuf_lines_init(&it, data, len);
	while (hs_strbuf_line_next(&it, &line, &llen)) {
		/* the line is ours (data is a private copy): end it in place,
		 * where its newline (or the final NUL) was */
		char *l = (char *)line;
		struct hs_subid rec;

		if (memchr(l, '\0', llen))
			continue;
		l[llen] = '\0';
		if (hs_records_subid_parse(l, &rec) < 0)
			continue;
		r = fn(&rec, ctx);
		if (r != 0)
			return r;
	}
	return 0;
}
