/* User and group name validation (DESIGN.md section 3). */
#ifndef HS_NAMES_H
#define HS_NAMES_H

#include <stdbool.h>

#define HS_NAME_MAX 32  /* bytes, excluding the NUL */

/* [A-Za-z_][A-Za-z0-9_.-]*[$]?, 1..32 bytes, not "." or "..", no leading
 * '-'.  Safe to call on any NUL-terminated string, including NULL (false).
 * These never touch the filesystem. */
bool hs_names_user_valid(const char *name);
bool hs_names_group_valid(const char *name);

#endif
