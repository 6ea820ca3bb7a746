/* pwunconv: move the accounts from /etc/hardened-shadow back into
 * /etc/shadow and /etc/passwd.  The work (and the options, shared with
 * pwconv) is in src/convert/convert.c. */
#include <stdbool.h>

#include "convert.h"

int main(int argc, char **argv)
{
	return hs_convert_main(argc, argv, false);
}
