/* A PAM session module for the system tests only (test_login_records.py):
 * at pam_close_session it reads utmp through glibc, as a site's module may
 * (pam_modutil_getlogin() -> getlogin() falls back to utmp; getutxent()).
 * glibc takes its fcntl() lock on utmp for each read and gives up on a held
 * lock after 10 s through alarm() and a SIGALRM handler of its own: in a
 * process that blocks SIGALRM that wait never ends.  It runs in the calling
 * process (pam_exec would fork and show nothing of the caller's mask). */
#include <security/pam_modules.h>
#include <utmpx.h>

int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh, (void)flags, (void)argc, (void)argv;
	return PAM_SUCCESS;
}

int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh, (void)flags, (void)argc, (void)argv;
	setutxent();
	while (getutxent())
		;
	endutxent();
	return PAM_SUCCESS;
}
