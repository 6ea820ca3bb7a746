/* vipw: edit /etc/passwd, /etc/shadow or a user's entry in the tree.
 * The program is vipw-common.c. */
#include "vipw-common.h"

int main(int argc, char **argv)
{
	return vipw_main(argc, argv, VIPW_MODE);
}
