/* acct-check SERVICE USER...: pam_acct_mgmt for each USER through
 * SERVICE, one line each: "USER CODE" and then every message the module
 * sent, as " | TEXT".  The system tests run it on the same accounts
 * through pam_unix (the oracle) and through our module and compare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

static const struct {
	int code;
	const char *name;
} codes[] = {
	{ PAM_SUCCESS, "PAM_SUCCESS" },
	{ PAM_ACCT_EXPIRED, "PAM_ACCT_EXPIRED" },
	{ PAM_NEW_AUTHTOK_REQD, "PAM_NEW_AUTHTOK_REQD" },
	{ PAM_AUTHTOK_EXPIRED, "PAM_AUTHTOK_EXPIRED" },
	{ PAM_USER_UNKNOWN, "PAM_USER_UNKNOWN" },
	{ PAM_AUTHINFO_UNAVAIL, "PAM_AUTHINFO_UNAVAIL" },
	{ PAM_PERM_DENIED, "PAM_PERM_DENIED" },
	{ PAM_SERVICE_ERR, "PAM_SERVICE_ERR" },
	{ PAM_SYSTEM_ERR, "PAM_SYSTEM_ERR" },
	{ PAM_AUTH_ERR, "PAM_AUTH_ERR" },
};

static const char *code_name(int code)
{
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "PAM_OTHER";
}

/* Messages are printed as they come; no prompt is answered. */
static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof *r);

	(void)data;
	if (!r)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			free(r);
			return PAM_CONV_ERR;
		}
		printf(" | %s", msg[i]->msg);
	}
	*resp = r;
	return PAM_SUCCESS;
}

int main(int argc, char **argv)
{
	struct pam_conv c = { conv, NULL };

	if (argc < 3) {
		fprintf(stderr, "usage: acct-check SERVICE USER...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		pam_handle_t *pamh = NULL;
		int r;

		printf("%s", argv[i]);
		r = pam_start(argv[1], argv[i], &c, &pamh);
		if (r != PAM_SUCCESS) {
			printf(" pam_start:%s\n", code_name(r));
			continue;
		}
		r = pam_acct_mgmt(pamh, 0);
		printf(" => %s\n", code_name(r));
		pam_end(pamh, r);
	}
	return 0;
}
