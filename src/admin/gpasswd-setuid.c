/* gpasswd for -Dsetuid_gpasswd=true: installed setuid root as gpasswd,
 * so group administrators may manage their groups.  The program is
 * gpasswd-common.c. */
#include "gpasswd-common.h"

int main(int argc, char **argv)
{
	return gpasswd_main(argc, argv, GPASSWD_GROUP_ADMINS);
}
