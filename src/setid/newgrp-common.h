/* newgrp and sg share one program (newgrp-common.c); each has a
 * two-line main that names its mode. */
#ifndef HS_NEWGRP_COMMON_H
#define HS_NEWGRP_COMMON_H

enum newgrp_mode {
	NEWGRP_MODE,    /* newgrp [-] [group]: a shell */
	SG_MODE,        /* sg [-] group [[-c] command] */
};

int newgrp_main(int argc, char **argv, enum newgrp_mode mode);

#endif
