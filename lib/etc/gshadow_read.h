/* A read-only lookup of one group in /etc/gshadow for newgrp and sg.
 * They run setuid root and need one group's password and members, so
 * they read the file here instead of loading it through accountdb, the
 * editor the administration tools use: the setuid binary then links no
 * lock, no writer and no transaction code. */
#ifndef HS_GSHADOW_READ_H
#define HS_GSHADOW_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "records.h"

/* The group found.  gs's strings point into data, which holds the whole
 * file (every group's hash): hs_gshadow_read_entry_free wipes it. */
struct hs_gshadow_entry {
	bool found;
	struct hs_gshadow gs;
	/* private */
	char *data;
	size_t len;
};
#define HS_GSHADOW_ENTRY_INIT { .found = false }

/* Read path (regular file, last component not a symlink, at most
 * HS_GLOBALFILE_MAX bytes) and find group: the first line that parses
 * (hs_records_gshadow_parse) and has that name, as glibc's getsgnam and
 * shadow-utils find it; lines that do not parse are skipped.  A missing
 * file, or no such line, is found = false and returns 0.  Returns 0 or
 * -errno / -HS_E_*; e is always safe to free. */
int hs_gshadow_read_group(const char *path, const char *group, struct hs_gshadow_entry *e);
void hs_gshadow_read_entry_free(struct hs_gshadow_entry *e);

#endif
