/* sg: a command with another group (setuid root).  The program is
 * newgrp-common.c. */
#include "newgrp-common.h"

int main(int argc, char **argv)
{
	return newgrp_main(argc, argv, SG_MODE);
}
