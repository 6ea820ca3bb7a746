/* runuser: su without authentication, for root only (util-linux's
 * runuser).  The same program as su, built with HS_RUNUSER: PAM services
 * "runuser" and "runuser-l", the -u option, no setuid bit (DESIGN §5). */
#define HS_RUNUSER 1
#include "su.c"
