/* What the group tools (groupadd, groupmod, groupdel, groupmems, gpasswd)
 * share beyond lib/admin/groupops: the way out once the files are locked. */
#ifndef HS_GROUPTOOL_COMMON_H
#define HS_GROUPTOOL_COMMON_H

#include <stdnoreturn.h>

struct hs_accountset;

/* Close s (its locks released, nothing written), then say "prog: MESSAGE"
 * on stderr as hs_die does and exit with status. */
noreturn void grouptool_die_closing(struct hs_accountset *s, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
