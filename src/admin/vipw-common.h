/* vipw and vigr share one program (vipw-common.c); each has a two-line
 * main that names its mode. */
#ifndef HS_VIPW_COMMON_H
#define HS_VIPW_COMMON_H

enum vipw_mode {
	VIPW_MODE,      /* /etc/passwd, -s /etc/shadow, -s -u USER the tree */
	VIGR_MODE,      /* /etc/group, -s /etc/gshadow */
};

int vipw_main(int argc, char **argv, enum vipw_mode mode);

#endif
