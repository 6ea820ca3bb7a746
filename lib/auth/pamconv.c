/* PAM plumbing shared by the programs: see pamconv.h. */
#include "pamconv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "ttyconv.h"

#include "util.h"

void hs_pamconv_free_responses(struct pam_response *resp, int n)
{
	if (!resp)
		return;
	for (int i = 0; i < n; i++)
		hs_free_secret(resp[i].resp);
	free(resp);
}

int hs_pamconv_script(int num_msg, const struct pam_message **msg,
                       struct pam_response **resp, void *appdata)
{
	const struct hs_pam_script *sc = appdata;
	struct pam_response *replies;

	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	replies = calloc((size_t)num_msg, sizeof(*replies));
	if (!replies)
		return PAM_BUF_ERR;
	for (int i = 0; i < num_msg; i++) {
		const char *text = msg[i]->msg ? msg[i]->msg : "";
		const char *answer;

		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			answer = sc->hidden(sc->ctx, text);
			if (!answer)
				goto fail;
			replies[i].resp = strdup(answer);
			if (!replies[i].resp)
				goto fail;
			break;
		case PAM_ERROR_MSG:
			if (sc->error)
				sc->error(sc->ctx, text);
			else
				fprintf(stderr, "%s\n", text);
			break;
		case PAM_TEXT_INFO:
			printf("%s\n", text);
			fflush(stdout);
			break;
		default:
			/* PAM_PROMPT_ECHO_ON and anything else: no script
			 * answers what only a person could */
			goto fail;
		}
	}
	*resp = replies;
	return PAM_SUCCESS;
fail:
	hs_pamconv_free_responses(replies, num_msg);
	return PAM_CONV_ERR;
}

int hs_pamconv_authenticate(const char *service, const char *user, struct hs_err *err)
{
	struct pam_conv conv = { hs_ttyconv, NULL };
	pam_handle_t *pamh = NULL;
	int r;

	r = pam_start(service, user, &conv, &pamh);
	if (r == PAM_SUCCESS)
		r = pam_authenticate(pamh, 0);
	if (r == PAM_SUCCESS)
		r = pam_acct_mgmt(pamh, 0);
	if (r != PAM_SUCCESS) {
		const char *why = pam_strerror(pamh, r);

		hs_err_set(err, -1, "PAM: %s", why);
		syslog(LOG_ERR, "%s", why);
		if (pamh)
			pam_end(pamh, r);
		return -1;
	}
	pam_end(pamh, r);
	return 0;
}
