/* chfn for -Dsetuid_chfn=true: installed setuid root as chfn, so users
 * may change their own GECOS fields.  The program is chfn-common.c. */
#include "chfn-common.h"

int main(int argc, char **argv)
{
	return chfn_main(argc, argv, CHFN_SELF_SERVICE);
}
