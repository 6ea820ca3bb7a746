/* Group administration shared by groupadd, groupmod, groupdel, gpasswd,
 * groupmems and chgpasswd: the edits of one group that keep /etc/group
 * and /etc/gshadow telling the same story, on top of lib/accountset.
 *
 * The invariants every edit here keeps, for the group it touches:
 *  - when /etc/gshadow exists, the group has exactly one gshadow line
 *    (one is made when missing; a stale gshadow line of a name that
 *    /etc/group does not have is never inherited by a new group);
 *  - the member list in /etc/gshadow equals the one in /etc/group (a
 *    change of members writes the same list to both; /etc/group's list,
 *    the one glibc uses, is the base);
 *  - with /etc/gshadow the group's password lives there and /etc/group
 *    says "x" (a password found in /etc/group moves to gshadow); without
 *    gshadow it lives in /etc/group.
 *
 * Every function takes the accountset opened with HS_AS_GROUP_FILES (and
 * HS_AS_PASSWD where it says so), returns 0 or 1 (changed) or a negative
 * error with s->error set, and edits memory only: hs_accountset_commit
 * writes (all the group files as one transaction, lib/etc/txn.h). */
#ifndef HS_GROUPOPS_H
#define HS_GROUPOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "accountset.h"
#include "config.h"
#include "util.h"

/* A gid argument: strictly decimal, 0..HS_ID_MAX (no sign, blank, hex,
 * octal or leading zero; (gid_t)-1 is no gid).  0 or -HS_E_FORMAT /
 * -HS_E_RANGE. */
int hs_groupops_parse_gid(const char *s, gid_t *out);

/* The loaded /etc/gshadow, or NULL when the system has none. */
struct hs_accountdb *hs_groupops_gshadow(struct hs_accountset *s);

/* Index of the /etc/group line of name, or -1. */
long hs_groupops_find(struct hs_accountset *s, const char *name);

/* Index of the gshadow line of the group at gi, making it when gshadow
 * exists and has none (password moved from /etc/group unless "x", else
 * "!"; no administrators; /etc/group's members).  An existing line whose
 * members differ from /etc/group's gets /etc/group's.  Every edit below
 * but delete goes through here, so a group any tool touches ends
 * consistent.
 * -1 (no error) when there is no gshadow; negative error otherwise. */
long hs_groupops_gshadow_line(struct hs_accountset *s, size_t gi);

/* A new group: an /etc/group line name:x:gid:members and, with gshadow, a
 * gshadow line name:hash::members (hash "!" when NULL).  Without gshadow
 * the hash goes into /etc/group ("x" when NULL).  A gshadow line left
 * over for the name without a group line is replaced (its password and
 * administrators must not pass to a new group); *replaced_stale tells.
 * -EEXIST (s->error set) when /etc/group has the name. */
long hs_groupops_add(struct hs_accountset *s, const char *name, gid_t gid, const char *hash,
                     const char *members, bool *replaced_stale);

/* Every function below that takes gi fails with -EINVAL (s->error set),
 * having changed nothing, when gi names no line of /etc/group (past the
 * end, or deleted), as does hs_groupops_gshadow_line above; with -ENOMEM
 * and the file's "cannot read" when the line could not be read for want
 * of memory (HS_DB_LAZY). */

/* Replace the member list (a valid list, "" for none) in both files. */
int hs_groupops_set_members(struct hs_accountset *s, size_t gi, const char *members);
/* Add / remove one member in both files (the result is /etc/group's list
 * with the change, written to both).  remove also drops the user from
 * the administrators when admins_too. */
int hs_groupops_add_member(struct hs_accountset *s, size_t gi, const char *user);
int hs_groupops_remove_member(struct hs_accountset *s, size_t gi, const char *user,
                              bool admins_too);
/* Replace the administrators (needs gshadow: -ENOENT without it). */
int hs_groupops_set_admins(struct hs_accountset *s, size_t gi, const char *admins);
/* Set the password field: a hash, "" (none) or "!" (locked). */
int hs_groupops_set_password(struct hs_accountset *s, size_t gi, const char *hash);
/* Rename the group in both files (a stale gshadow line of new_name is
 * dropped first; *replaced_stale tells).  -EEXIST when /etc/group has
 * new_name. */
int hs_groupops_rename(struct hs_accountset *s, size_t gi, const char *new_name,
                       bool *replaced_stale);
/* Change the gid in /etc/group. */
int hs_groupops_set_gid(struct hs_accountset *s, size_t gi, gid_t gid);
/* Delete the group's line from both files. */
int hs_groupops_delete(struct hs_accountset *s, size_t gi);

/* The passwd index of the first user of /etc/passwd (the set must hold
 * HS_AS_PASSWD) whose primary group is gid, or -1. */
long hs_groupops_primary_user(struct hs_accountset *s, gid_t gid);
/* Move every /etc/passwd user whose primary group is old_gid to new_gid;
 * returns how many moved, or a negative error. */
long hs_groupops_move_primary(struct hs_accountset *s, gid_t old_gid, gid_t new_gid);

/* Does user exist?  In the set's /etc/passwd when it holds one, then,
 * when use_nss, through NSS (users of other sources, e.g. LDAP, may be
 * members of local groups, as with shadow-utils). */
bool hs_groupops_user_exists(struct hs_accountset *s, const char *user, bool use_nss);

/* Parse a comma-separated user list (-U, -M, -A): every element a valid
 * user name that exists (hs_groupops_user_exists); duplicates dropped;
 * "" is the empty list.  *out is the normalised list (malloc'd).  On
 * failure bad (size badsize) holds the offending element as given and
 * the return is -HS_E_NAME (not a valid name, or an empty element) or
 * -ENOENT (no such user). */
int hs_groupops_user_list(struct hs_accountset *s, const char *arg, bool use_nss, char **out,
                          char *bad, size_t badsize);

/* Is name one of the per-user tree's own groups (hardened-shadow,
 * hardened-shadow-auth) while root/etc/hardened-shadow exists?  Their
 * gids are on every tree file and setgid binary: renaming, renumbering
 * or deleting them breaks the tree.  root NULL or "" = "/". */
bool hs_groupops_layout_group(const char *root, const char *name);

/* login.defs (below root: ROOT/etc/login.defs) with "KEY VALUE\n" override lines
 * appended (later lines win), each bad line passed to warn(ctx, ...).  A
 * missing file is empty. */
int hs_groupops_logindefs(const char *root, const char *overrides, size_t len,
                          hs_config_warn_fn warn, void *ctx, struct hs_config **out);
/* Append -K KEY=VALUE to *buf (length *len) as a "KEY VALUE\n" line; -EINVAL when
 * the argument is not KEY=VALUE or holds blanks, '#', '"' or a newline. */
int hs_groupops_add_override(char **buf, size_t *len, const char *arg);

/* The end of a group tool's change, r being its edits' result: with r < 0
 * s->error goes into *err; else hs_accountset_commit (all the group files
 * as one transaction, lib/etc/txn.h) runs with the signals held back, so
 * none stops it half way; a failure goes to syslog ("WHAT failed: ERROR",
 * the error alone when what is NULL) and into *err for the program to
 * print, a success to syslog at LOG_INFO as fmt says (nothing when fmt is
 * NULL).  s is closed either way.  0 (written) or negative. */
int hs_groupops_finish(struct hs_accountset *s, int r, struct hs_err *err, const char *what,
		       const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
