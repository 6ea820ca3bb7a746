/* Linux audit events of the account tools: the records shadow-utils and
 * util-linux send for the same actions, so that ausearch and the rules of
 * a SIEM that watch them keep matching (docs/decisions.md, "Audit trail").
 *
 * The type numbers are the kernel's (<linux/audit.h>).  The op strings are
 * those of the shadow-utils our package replaces (Debian's 4.13), gathered
 * here so that following a newer shadow-utils is an edit of this header:
 * tests/system/test_audit_trail.py compares both, event by event.
 *
 * Sending never fails the caller: without audit in the kernel (the socket
 * cannot be made), or without the right to write to it (an unprivileged
 * caller gets EPERM, a user namespace ECONNREFUSED), the event is dropped
 * silently, as shadow-utils and Linux-PAM drop it.  Built with
 * meson -Daudit=false every function here does nothing. */
#ifndef HS_AUDITLOG_H
#define HS_AUDITLOG_H

#include <linux/audit.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The user-space message types (libaudit.h has them; <linux/audit.h> only
 * their range).  Numbers of the kernel's ABI, the same everywhere. */
#ifndef AUDIT_USER_AUTH
#define AUDIT_USER_AUTH 1100
#define AUDIT_USER_ACCT 1101
#define AUDIT_USER_MGMT 1102
#define AUDIT_USER_CHAUTHTOK 1108
#define AUDIT_USER_LOGIN 1112
#define AUDIT_ADD_USER 1114
#define AUDIT_DEL_USER 1115
#define AUDIT_ADD_GROUP 1116
#define AUDIT_DEL_GROUP 1117
#define AUDIT_GRP_MGMT 1132
#define AUDIT_ACCT_LOCK 1135
#define AUDIT_ACCT_UNLOCK 1136
#endif

/* An id field of none: the event names the account (acct="NAME") instead. */
#define HS_AUDITLOG_NO_ID ((unsigned long)-1)

/* shadow-utils' op strings, by the tool that sends them. */
#define HS_AUDIT_OP_ADD_GROUP       "adding group"
#define HS_AUDIT_OP_ADD_USER        "adding user"
#define HS_AUDIT_OP_ADD_HOME        "adding home directory"
#define HS_AUDIT_OP_ADD_TO_GROUP    "adding user to group"
#define HS_AUDIT_OP_ADD_TO_GSHADOW  "adding user to shadow group"
#define HS_AUDIT_OP_GROUPADD_GROUP  "adding group to /etc/group"
#define HS_AUDIT_OP_GROUPADD_GSHADOW "adding group to /etc/gshadow"
#define HS_AUDIT_OP_GROUPDEL_GROUP  "removing group from /etc/group"
#define HS_AUDIT_OP_GROUPDEL_GSHADOW "removing group from /etc/gshadow"
#define HS_AUDIT_OP_MODIFY_GROUP    "modifying group"
#define HS_AUDIT_OP_DEL_ENTRIES     "deleting user entries"
#define HS_AUDIT_OP_DEL_FROM_GROUP  "deleting user from group"
#define HS_AUDIT_OP_DEL_FROM_GSHADOW "deleting user from shadow group"
#define HS_AUDIT_OP_DEL_GROUP       "deleting group"
#define HS_AUDIT_OP_DEL_GSHADOW_GROUP "deleting shadow group"
#define HS_AUDIT_OP_DEL_HOME        "deleting home directory"
#define HS_AUDIT_OP_DEL_NOT_FOUND   "deleting user not found"
#define HS_AUDIT_OP_CH_NAME         "changing name"
#define HS_AUDIT_OP_CH_UID          "changing uid"
#define HS_AUDIT_OP_CH_GID          "changing primary group"
#define HS_AUDIT_OP_CH_COMMENT      "changing comment"
#define HS_AUDIT_OP_CH_HOME         "changing home directory"
#define HS_AUDIT_OP_CH_SHELL        "changing user shell"
#define HS_AUDIT_OP_CH_INACTIVE     "changing inactive days"
#define HS_AUDIT_OP_CH_EXPIRE       "changing expiration date"
#define HS_AUDIT_OP_CH_PASSWORD     "changing password"
#define HS_AUDIT_OP_LOCK            "updating passwd"
#define HS_AUDIT_OP_UNLOCK          "updating password"
#define HS_AUDIT_OP_RM_MEMBER       "removing group member"
#define HS_AUDIT_OP_RM_GSHADOW_MEMBER "removing user from shadow group"
#define HS_AUDIT_OP_CH_MEMBER       "changing group member"
#define HS_AUDIT_OP_CH_GSHADOW_MEMBER "changing member in shadow group"
#define HS_AUDIT_OP_HOME_OWNER      "changing home directory owner"
#define HS_AUDIT_OP_MOVE_HOME       "moving home directory"
#define HS_AUDIT_OP_AGE_ALL         "change all aging information"
#define HS_AUDIT_OP_AGE_MAX         "change max age"
#define HS_AUDIT_OP_AGE_MIN         "change min age"
#define HS_AUDIT_OP_AGE_LAST        "change last change date"
#define HS_AUDIT_OP_AGE_WARN        "change passwd warning"
#define HS_AUDIT_OP_AGE_INACTIVE    "change inactive days"
#define HS_AUDIT_OP_AGE_EXPIRE      "change passwd expiration"
#define HS_AUDIT_OP_AGE_DISPLAY     "display aging info"
/* passwd's root changes: Debian's 4.13 sends nothing for them; these are
 * the ops of the shadow-utils releases that do. */
#define HS_AUDIT_OP_PW_LOCKED       "locked-password"
#define HS_AUDIT_OP_PW_UNLOCKED     "unlocked-password"
#define HS_AUDIT_OP_PW_DELETED      "deleted-password"
#define HS_AUDIT_OP_PW_EXPIRED      "expired-password"
#define HS_AUDIT_OP_PW_AGING        "changed-password-aging"
#define HS_AUDIT_OP_LOGIN           "login"

/* Opens the audit socket if it is not open yet.  Programs call it at the
 * start, while they still hold the privilege that the kernel checks when
 * the event is sent (CAP_AUDIT_WRITE), as shadow-utils does.  Silent. */
void hs_auditlog_open(void);

/* One account event, as libaudit's audit_log_acct_message formats it:
 * "op=OP acct="NAME"" (or "id=ID" when id is not HS_AUDITLOG_NO_ID),
 * "exe=", "hostname= addr= terminal=" (host and tty, or "?" when NULL),
 * "res=success|failed".  Opens the socket if needed. */
void hs_auditlog_acct(int type, const char *op, const char *name, unsigned long id,
                      bool ok);

/* The same with the remote host and terminal of a login. */
void hs_auditlog_session(int type, const char *op, const char *name, unsigned long id,
                         const char *host, const char *tty, bool ok);

#endif
