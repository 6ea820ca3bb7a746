/* What the self-service tools (chfn, chsh, passwd) share: who the caller
 * and the target account are, and one /etc/passwd entry edited under the
 * lock. */
#ifndef HS_PWEDIT_H
#define HS_PWEDIT_H

#include <pwd.h>

#include "accountdb.h"
#include "globalfile.h"
#include "util.h"

/* The caller (from the real uid, never the environment) into *me, and
 * the account to act on: arg (a user name from the command line) or, when
 * arg is NULL, the caller again.  0, or negative with the message in *err
 * when either cannot be found (an unknown caller is logged too).  The
 * buffers are malloc'd; free them. */
int hs_pwedit_who(const char *arg, struct passwd *me, char **mebuf, struct passwd *pw,
		  char **pwbuf, struct hs_err *err);

/* One /etc/passwd entry changed under the lock.  The entry is taken from
 * the file as it is under the lock (not as NSS said before), so a
 * concurrent change of its other fields is not undone. */
struct hs_pwedit {
	struct hs_accountdb db;
	struct hs_locks locks;
	long idx;
	struct hs_passwd ent;   /* the entry; change fields, then commit */
};
#define HS_PWEDIT_INIT { .db = HS_ACCOUNTDB_INIT, .locks = HS_LOCKS_INIT, .idx = -1 }

/* Lock /etc/passwd, load it, find name.  0, or negative (the message in
 * *err). */
int hs_pwedit_begin(struct hs_pwedit *e, const char *name, struct hs_err *err);
/* Write e->ent back (signals blocked), flush the caches.  0, or negative
 * (the message in *err, marked for syslog too when the write fails). */
int hs_pwedit_commit(struct hs_pwedit *e, struct hs_err *err);
/* Free, release the lock; after begin, whatever it returned. */
void hs_pwedit_end(struct hs_pwedit *e);

#endif
