/* gpasswd's two builds share one program (gpasswd-common.c): gpasswd.c
 * is the root tool, gpasswd-setuid.c the one for group administrators
 * that -Dsetuid_gpasswd=true installs setuid root under the name
 * gpasswd. */
#ifndef HS_GPASSWD_COMMON_H
#define HS_GPASSWD_COMMON_H

enum gpasswd_mode {
	GPASSWD_ROOT_ONLY,      /* refuses every caller but root */
	GPASSWD_GROUP_ADMINS,   /* a group's administrators may manage it */
};

int gpasswd_main(int argc, char **argv, enum gpasswd_mode mode);

#endif
