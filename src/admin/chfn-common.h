/* chfn's two builds share one program (chfn-common.c): chfn.c is the
 * root tool, chfn-setuid.c the self-service one that -Dsetuid_chfn=true
 * installs setuid root under the name chfn. */
#ifndef HS_CHFN_COMMON_H
#define HS_CHFN_COMMON_H

enum chfn_mode {
	CHFN_ROOT_ONLY,         /* refuses every caller but root */
	CHFN_SELF_SERVICE,      /* a user may change their own CHFN_RESTRICT fields */
};

int chfn_main(int argc, char **argv, enum chfn_mode mode);

#endif
