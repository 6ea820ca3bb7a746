/* Read-only readers of /etc/gshadow (newgrp, sg) and /etc/subuid and
 * /etc/subgid (newuidmap, newgidmap).  Those run setuid root and only look
 * up one group, or the caller's ranges, so they read the file and parse its
 * lines here instead of loading it through accountdb, the editor the
 * administration tools use: the setuid binaries then link no lock, no
 * writer and no transaction code.
 *
 * Both read path as a regular file, last component not a symlink, at most
 * HS_GLOBALFILE_MAX bytes; a missing file has no lines.  A root-owned file
 * may have other names (HS_FILE_EXPECT_GLOBAL).  A line that does
 * not parse, or that holds a NUL, is skipped: one bad line must not cost
 * the other users their ranges or their group, and shadow-utils skips it
 * too. */
#ifndef HS_ETC_READ_H
#define HS_ETC_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "records.h"

/* Called once per line of the file that parses (hs_records_subid_parse), in file
 * order.  rec's strings live until the callback returns.  A non-zero
 * return stops the walk and is what hs_etc_read_subid returns. */
typedef int (*hs_etc_read_subid_fn)(const struct hs_subid *rec, void *ctx);

/* Call fn for each valid line.  Returns 0, fn's non-zero value, or
 * -errno / -HS_E_* from the read. */
int hs_etc_read_subid(const char *path, hs_etc_read_subid_fn fn, void *ctx);

/* The group found.  gs's strings point into data, which holds the whole
 * file (every group's hash): hs_etc_read_gshadow_free wipes it. */
struct hs_gshadow_entry {
	bool found;
	struct hs_gshadow gs;
	/* private */
	char *data;
	size_t len;
};
#define HS_GSHADOW_ENTRY_INIT { .found = false }

/* Find group: the first line that parses (hs_records_gshadow_parse) and
 * has that name, as glibc's getsgnam and shadow-utils find it.  A missing
 * file, or no such line, is found = false and returns 0.  Returns 0 or
 * -errno / -HS_E_*; e is always safe to free. */
int hs_etc_read_gshadow_group(const char *path, const char *group, struct hs_gshadow_entry *e);
void hs_etc_read_gshadow_free(struct hs_gshadow_entry *e);

#endif
