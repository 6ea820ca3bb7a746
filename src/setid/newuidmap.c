/* newuidmap: set the uid_map of a user namespace within the ranges
 * /etc/subuid grants the caller.  Installed setuid root (DESIGN §5); the
 * whole program is src/setid/subidmap.c, shared with newgidmap. */
#include "subidmap.h"

int main(int argc, char **argv)
{
	return hs_subidmap_main(argc, argv, HS_IDMAP_UID);
}
