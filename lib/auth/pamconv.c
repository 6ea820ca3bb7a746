/* PAM plumbing shared by the programs: see pamconv.h. */
#include "pamconv.h"

#include <syslog.h>

#include "ttyconv.h"

#include "util.h"

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
	}
	if (pamh)
		pam_end(pamh, r);
	return r == PAM_SUCCESS ? 0 : -1;
}
