/* pwconv: move the accounts from /etc/passwd + /etc/shadow (or an Openwall
 * /etc/tcb tree) into /etc/hardened-shadow.  The work (and the options,
 * shared with pwunconv) is in src/convert/convert.c. */
#include <stdbool.h>

#include "convert.h"

int main(int argc, char **argv)
{
	return hs_convert_main(argc, argv, true);
}
