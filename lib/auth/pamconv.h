/* PAM plumbing shared by the programs that talk to libpam (chsh, chfn,
 * passwd, chpasswd).  A library of its own, linked with libpam and
 * nothing else, so the core library (which the NSS module links) never
 * depends on PAM. */
#ifndef HS_PAMCONV_H
#define HS_PAMCONV_H

#include <security/pam_appl.h>

#include "util.h"

/* A conversation without a terminal (passwd --stdin, chpasswd): hidden
 * prompts are answered from the caller's secrets, information goes to
 * stdout, anything that would need a human (a visible prompt) fails the
 * conversation.  Pass a struct hs_pam_script as the pam_conv's
 * appdata_ptr and hs_ttyconv (ttyconv.h) as its conv. */
struct hs_pam_script {
	/* The answer to a hidden prompt (PAM_PROMPT_ECHO_OFF), copied by the
	 * conversation; NULL refuses the prompt and fails the conversation
	 * (say why first).  Modules' prompts are told apart by pam_unix's
	 * English wording, which pam_hardened_shadow.so shares. */
	const char *(*hidden)(void *ctx, const char *prompt);
	/* A module's error message (PAM_ERROR_MSG); NULL: "TEXT" on stderr. */
	void (*error)(void *ctx, const char *text);
	void *ctx;
};

/* Authenticate the caller for a self-service tool, as shadow-utils does:
 * pam_start(service, user) with our terminal conversation (ttyconv.h), then
 * pam_authenticate and pam_acct_mgmt (root passes through pam_rootok in
 * Debian's stacks).  On failure logs REASON (LOG_ERR, the caller's
 * openlog: the record of a refused authentication), puts "PAM: REASON"
 * into *err for the caller to print, and returns -1; the caller exits with
 * its own status.  Returns 0 on success. */
int hs_pamconv_authenticate(const char *service, const char *user, struct hs_err *err);

#endif
