/* User and group name validation (DESIGN.md section 3).  Names end up in
 * paths under /etc/hardened-shadow and in colon-separated files, so the
 * rules are strict byte checks in the C locale, never locale classes. */
#include "names.h"

#include <stddef.h>

static bool is_first_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_next_char(char c)
{
	return is_first_char(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

/* shadow-utils' rule: [A-Za-z_][A-Za-z0-9_.-]*[$]?  The first-character
 * class already excludes '-' and '.', hence "-x", "." and "..". */
bool hs_names_user_valid(const char *name)
{
	size_t i;

	if (!name || !is_first_char(name[0]))
		return false;
	for (i = 1; name[i]; i++) {
		if (i >= HS_NAME_MAX)
			return false;
		if (is_next_char(name[i]))
			continue;
		/* a single '$' is allowed only as the last byte (Samba
		 * machine accounts) */
		if (name[i] == '$' && name[i + 1] == '\0')
			continue;
		return false;
	}
	return true;
}

bool hs_names_group_valid(const char *name)
{
	return hs_names_user_valid(name);
}
