/* What useradd, usermod and userdel share: shadow-utils' exit codes, the
 * start of a run, the options none of them supports, the account fields
 * they parse in the same words, the busy check and the confinement.
 * newusers uses the start and login.defs' loading. */
#ifndef HS_USERTOOL_COMMON_H
#define HS_USERTOOL_COMMON_H

#include <stdbool.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include "accountset.h"

struct hs_config;
struct hs_txn_work;

/* shadow-utils' exit codes, the same in useradd(8), usermod(8), userdel(8) */
#define E_SUCCESS        0
#define E_PW_UPDATE      1   /* can't update password file */
#define E_USAGE          2   /* invalid command syntax */
#define E_BAD_ARG        3   /* invalid argument to option */
#define E_UID_IN_USE     4   /* UID already in use (and no -o) */
#define E_NOTFOUND       6   /* specified user or group doesn't exist */
#define E_USER_BUSY      8   /* user to modify or delete is logged in */
#define E_NAME_IN_USE    9   /* username or group name already in use */
#define E_GRP_UPDATE     10  /* can't update group file */
#define E_HOMEDIR        12  /* can't create, move or remove the home directory */
#define E_SUB_UID_UPDATE 16  /* can't update the subordinate uid file */
#define E_SUB_GID_UPDATE 18  /* can't update the subordinate gid file */

/* First thing in main: the privileged start (hs_privs_init) as tool, and
 * the journal's work enabled -- any of these tools may have to finish (or
 * undo) an interrupted command's home and tree work, its own or
 * another's. */
void usertool_init(int argc, char **argv, const char *tool);
/* Once the options are read: root only ("Permission denied.", exit 1),
 * then syslog and the audit socket opened. */
void usertool_start(void);

/* -R/--root, -P/--prefix, -Z/--selinux-user, --selinux-range: refused
 * with exit 2, in the same words by each tool. */
noreturn void usertool_die_unsupported(int opt, const char *arg);

/* "prog: MESSAGE" on stderr; returns status. */
int usertool_warn(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* useradd's and usermod's status for a failure concerning file f
 * (userdel has no codes of its own for the subordinate id files). */
int usertool_file_status(enum hs_as_file f);

/* login.defs, or exit 1 saying why it cannot be read. */
struct hs_config *usertool_load_logindefs(void);
/* login.defs' MAIL_DIR (default /var/mail). */
const char *usertool_mail_dir(const struct hs_config *cfg);

/* -f: "-1" (HS_UNSET) or a day count, else exit 3 "invalid numeric
 * argument". */
long usertool_parse_inactive(const char *s);
/* -e: a day number ("" and "-1": never), else exit 3 "invalid date". */
long usertool_parse_expire(const char *s);
/* -u: a uid, else exit 3 "invalid user ID". */
unsigned long usertool_parse_uid(const char *s);
/* -p: a hash that fits a field, else exit 3 "invalid field". */
void usertool_check_hash(const char *hash);

/* -g, -G: GROUP as a gid when it is spelled like a number (a digit, a
 * sign or a blank first: it must then parse strictly), else as a name.
 * Its index in gr, -1 when there is no such group, -2 when GROUP is no
 * valid name or number. */
long usertool_find_group(struct hs_accountdb *gr, const char *spec);

/* -G: the index in gr of each group of the comma-separated list, in its
 * order, in *idx (malloc'd, *n of them).  E_SUCCESS, or the exit status
 * after saying why: E_NOTFOUND "group 'G' does not exist" for the first
 * that gr does not have, E_PW_UPDATE "out of memory". */
int usertool_find_groups(struct hs_accountdb *gr, const char *list, size_t **idx, size_t *n);

/* hs_accountset_commit with work (lib/etc/txn.h; NULL: none) done by its
 * journal: 0, or a negative error said and logged, the work dropped. */
int usertool_commit(struct hs_accountset *s, struct hs_txn_work *work, size_t n);

/* shadow-utils' user_busy() refusal: with a process running as uid, s is
 * closed and the tool exits 8 saying which process. */
void usertool_die_if_busy(struct hs_accountset *s, const char *user, uid_t uid);

/* Once the account is known, the kernel holds the tool to its job
 * (Landlock): write /etc (the global files, their locks, the tree) and
 * maildir; with login_records, lastlog and faillog (a uid's records);
 * read skel; home and new_home as hs_homedir_confine_rules gives them.
 * A NULL path gets no rule.  A failure ends the tool with exit 1. */
void usertool_confine(const char *maildir, const char *skel, bool login_records,
		      const char *home, const char *new_home);

#endif
