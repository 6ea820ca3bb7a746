/* runuser: su without authentication, for root only (util-linux's
 * runuser): PAM services "runuser" and "runuser-l", the -u option, no
 * setuid bit (DESIGN §5).  The program is su-common.c. */
#include "su-common.h"

int main(int argc, char **argv)
{
	return su_main(argc, argv, RUNUSER_MODE);
}
