/* A read-only reader of /etc/subuid and /etc/subgid for newuidmap and
 * newgidmap.  They run setuid root and only look up the caller's ranges,
 * so they read the file and parse its lines here instead of loading it
 * through accountdb, the editor the administration tools use: the setuid
 * binaries then link no lock, no writer and no transaction code. */
#ifndef HS_SUBID_READ_H
#define HS_SUBID_READ_H

#include "records.h"

/* Called once per line of the file that parses (hs_records_subid_parse), in file
 * order.  rec's strings live until the callback returns.  A non-zero
 * return stops the walk and is what hs_subid_read returns. */
typedef int (*hs_subid_read_fn)(const struct hs_subid *rec, void *ctx);

/* Read path (regular file, last component not a symlink, at most
 * HS_GLOBALFILE_MAX bytes) and call fn for each valid line.  A missing
 * file has no lines (returns 0).  A line that does not parse, or that
 * holds a NUL, is skipped: one bad line must not cost the other users
 * their ranges, and shadow-utils skips it too.  Returns 0, fn's non-zero
 * value, or -errno / -HS_E_* from the read. */
int hs_subid_read(const char *path, hs_subid_read_fn fn, void *ctx);

#endif
