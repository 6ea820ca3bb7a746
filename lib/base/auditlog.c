/* Linux audit events: one socket per process, opened once, never fatal. */
#include "auditlog.h"

#include "hs-build-config.h"
#include "privs.h"

#if HS_WITH_LIBAUDIT
#include <libaudit.h>

/* -1: not tried yet; -2: tried, no audit here (kernel without it). */
static int auditlog_fd = -1;

void hs_auditlog_open(void)
{
	if (auditlog_fd != -1)
		return;
	/* The kernel checks the sender at each send; it would check the
	 * opener too if a send named no destination (libaudit's all do):
	 * open with the capability raised, so both hold. */
	(void)hs_privs_audit_write(true);
	int fd = audit_open();
	(void)hs_privs_audit_write(false);
	/* EPROTONOSUPPORT, EINVAL, EAFNOSUPPORT: the kernel has no audit.
	 * shadow-utils aborts on any other error; a tool of ours that
	 * cannot record is no more dangerous than one of a kernel without
	 * audit, and refusing would turn a full descriptor table into a
	 * denial of service, so every failure is the same silence. */
	auditlog_fd = fd >= 0 ? fd : -2;
}

void hs_auditlog_session(int type, const char *op, const char *name, unsigned long id,
                         const char *host, const char *tty, bool ok)
{
	hs_auditlog_open();
	if (auditlog_fd < 0)
		return;
	/* libaudit writes id= only without a name, as shadow-utils uses it. */
	const char *acct = id == HS_AUDITLOG_NO_ID ? name : NULL;
	unsigned int audit_id = id == HS_AUDITLOG_NO_ID ? (unsigned int)-1 : (unsigned int)id;
	/* A user's passwd or chage holds CAP_AUDIT_WRITE only permitted: it
	 * is effective for this send alone (the kernel checks the sender's
	 * set at each send).  The result is ignored: EPERM (no
	 * CAP_AUDIT_WRITE) and ECONNREFUSED (a user namespace) mean the
	 * kernel will not take it, and nothing a tool could do would change
	 * that. */
	(void)hs_privs_audit_write(true);
	(void)audit_log_acct_message(auditlog_fd, type, NULL, op, acct, audit_id, host, NULL, tty,
	                             ok ? 1 : 0);
	(void)hs_privs_audit_write(false);
}
#else
void hs_auditlog_open(void)
{
}

void hs_auditlog_session(int type, const char *op, const char *name, unsigned long id,
                         const char *host, const char *tty, bool ok)
{
	(void)type, (void)op, (void)name, (void)id, (void)host, (void)tty, (void)ok;
}
#endif

void hs_auditlog_acct(int type, const char *op, const char *name, unsigned long id, bool ok)
{
	hs_auditlog_session(type, op, name, id, NULL, NULL, ok);
}
