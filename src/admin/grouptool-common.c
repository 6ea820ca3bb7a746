/* What the group tools share; see grouptool-common.h. */
#include "grouptool-common.h"

#include <stdarg.h>
#include <stdlib.h>

#include "accountset.h"
#include "cli.h"

noreturn void grouptool_die_closing(struct hs_accountset *s, int status, const char *fmt, ...)
{
	va_list ap;

	hs_accountset_close(s);
	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}
