/* su: become another user after authenticating as them (setuid root).
 * The program is su-common.c. */
#include "su-common.h"

int main(int argc, char **argv)
{
	return su_main(argc, argv, SU_MODE);
}
