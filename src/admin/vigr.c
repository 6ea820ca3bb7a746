/* vigr: edit /etc/group or /etc/gshadow.  The program is vipw-common.c. */
#include "vipw-common.h"

int main(int argc, char **argv)
{
	return vipw_main(argc, argv, VIGR_MODE);
}
