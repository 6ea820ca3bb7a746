/* su and runuser share one program (su-common.c); each has a two-line
 * main that names its mode. */
#ifndef HS_SU_COMMON_H
#define HS_SU_COMMON_H

enum su_mode {
	SU_MODE,        /* setuid root: authenticates a caller who is not root */
	RUNUSER_MODE,   /* root only: no authentication, services runuser(-l), -u */
};

int su_main(int argc, char **argv, enum su_mode mode);

#endif
