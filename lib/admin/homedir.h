/* Home directories made by root for a user (useradd -m, newusers): never
 * through a symlink, relative to directory fds, on a parent path that only
 * root can change, built while still root's and handed over at the end.
 * Root only.  Nothing is printed: hs_homedir_create hands its messages back in
 * a struct hs_err for the tool to print. */
#ifndef HS_HOMEDIR_H
#define HS_HOMEDIR_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "confine.h"
#include "util.h"

struct hs_config;

/* Confinement rules (confine.h) for a tool that works on home: the home
 * itself (a symlink there gets the rule, its target nothing), its parent
 * -- the nearest directory of that path that exists, since missing ones
 * are made -- where the home is made, removed or moved, and listing
 * directories from / (the walks that open each step without following
 * links).  A home that does not exist yet has no inode to hold a rule:
 * the parent then gets the whole of it (write); a home that is a symlink
 * lets the parent remove files.  buf holds the parent's
 * path (size HS_PATHBUF_MAX).  A NULL or relative home gives rules that
 * are skipped. */
#define HS_HOME_CONFINE_RULES 3
void hs_homedir_confine_rules(const char *home, char *buf, size_t size,
			   struct hs_confine_rule out[HS_HOME_CONFINE_RULES]);

/* The mode of a new home: HOME_MODE from login.defs, else 0777 & ~UMASK
 * (default UMASK 022), as shadow-utils computes it. */
mode_t hs_homedir_mode(const struct hs_config *defs);

/* Create the missing directories of home's parent path (root, 0755: an
 * administrator's path such as /home or useradd -b's base, as shadow-utils
 * does), then open that parent: resolved by the kernel (administrators'
 * symlinks such as /home -> /srv/home are fine), then walked again from /
 * without following anything, each step root's and not writable by
 * others (sticky directories excepted).  home must be absolute and end in
 * a plain name (not "/", ".", ".."; else -EINVAL, nothing made).  Returns
 * an fd and *last = home's last component, or -HS_E_OWNER for an untrusted
 * step, or another negative error. */
int hs_homedir_open_parent(const char *home, const char **last);

/* useradd -m, in two steps around the transaction journal (lib/etc/txn.h),
 * so that a kill leaves no home or the whole home.  Every problem and
 * warning goes into *err, a line each, in order: report it whatever the
 * result (err->msg is empty when there is nothing to say).
 *   hs_homedir_reserve: open home's parent (hs_homedir_open_parent; the caller
 *     closes b->parentfd); a symlink or a non-directory at home is an
 *     error (-1); a directory there is left alone (HS_HOME_EXISTED, "Not
 *     copying any file from skel directory into it." said); else 0 with
 *     b->tmp, a reserved name beside home, and b->parent, the parent's
 *     stat, for the journal.
 *   hs_homedir_build: make b->tmp root:root 0700, copy the skeleton skel
 *     into it (NULL or "": none; a missing skel is fine) -- symlinks
 *     copied as symlinks, FIFOs/devices/sockets skipped with a warning,
 *     every entry given to uid:gid as it is made -- sync it all and fill
 *     b->built.  0; HS_HOME_INCOMPLETE when built but an entry was not
 *     copied; -1 when nothing was built.  The journal's work renames it
 *     to home and hands it over. */
#define HS_HOME_EXISTED 1
#define HS_HOME_INCOMPLETE 2
struct hs_homedir_build {
	int parentfd;
	char tmp[256];
	struct stat parent, built;
};
int hs_homedir_reserve(const char *home, struct hs_homedir_build *b, struct hs_err *err);
int hs_homedir_build(struct hs_homedir_build *b, const char *home, const char *skel, uid_t uid,
		  gid_t gid, struct hs_err *err);

#endif
