/* gpasswd, the default build: a root tool.  The program is
 * gpasswd-common.c. */
#include "gpasswd-common.h"

int main(int argc, char **argv)
{
	return gpasswd_main(argc, argv, GPASSWD_ROOT_ONLY);
}
