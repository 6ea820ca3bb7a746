/* newgidmap: set the gid_map of a user namespace within the ranges
 * /etc/subgid grants the caller, and deny setgroups unless a range comes
 * from /etc/subgid.  Installed setuid root (DESIGN §5); the whole program
 * is src/setid/subidmap.c, shared with newuidmap. */
#include "subidmap.h"

int main(int argc, char **argv)
{
	return hs_subidmap_main(argc, argv, HS_IDMAP_GID);
}
