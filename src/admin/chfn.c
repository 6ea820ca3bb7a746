/* chfn, the default build: a root tool.  The program is chfn-common.c. */
#include "chfn-common.h"

int main(int argc, char **argv)
{
	return chfn_main(argc, argv, CHFN_ROOT_ONLY);
}
