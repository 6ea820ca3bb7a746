/* The self-service tools' common steps; see pwedit.h. */
#include "pwedit.h"

#include <errno.h>
#include <signal.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "userdir.h"
#include "util.h"

int hs_pwedit_who(const char *arg, struct passwd *me, char **mebuf, struct passwd *pw,
		  char **pwbuf, struct hs_err *err)
{
	char why[128];
	int r = hs_account_caller(me, mebuf, why, sizeof why);

	*pwbuf = NULL;
	if (r < 0)
		return hs_err_set(err, r, "%s", why);
	if (!arg) {
		*pw = *me;
		return 0;
	}
	if (!hs_names_user_valid(arg))
		return hs_err_set(err, -HS_E_NAME, "Provided user name is not a valid name");
	r = hs_account_getpwnam(arg, pw, pwbuf);
	if (r == -ENOENT)
		return hs_err_set(err, r, "user '%s' does not exist", arg);
	if (r < 0)
		return hs_err_set(err, r, "cannot look up user '%s': %s", arg, hs_strerror(r));
	return 0;
}

int hs_pwedit_begin(struct hs_pwedit *e, const char *name, struct hs_err *err)
{
	static const char *const files[] = { HS_ETC_PASSWD };
	const char *failed = NULL;
	int r = hs_globalfile_lock(&e->locks, NULL, files, HS_ARRAY_SIZE(files),
				HS_LOCK_TIMEOUT_MS, &failed);

	if (r < 0) {
		char why[64];

		return hs_err_set(err, r, "cannot lock %s: %s", failed ? failed : HS_ETC_PWD_LOCK,
				  hs_lock_strerror(r, HS_LOCK_TIMEOUT_MS, why, sizeof(why)));
	}
	r = hs_accountdb_load(&e->db, HS_DB_PASSWD, HS_ETC_PASSWD, 0);
	if (r < 0)
		return hs_err_set(err, r, "%s", e->db.error);
	e->idx = hs_accountdb_find(&e->db, name);
	if (e->idx < 0)
		return hs_err_set(err, -ENOENT, "user '%s' does not exist in %s", name,
				  HS_ETC_PASSWD);
	e->ent = e->db.lines[e->idx].rec.pw;
	return 0;
}

int hs_pwedit_commit(struct hs_pwedit *e, struct hs_err *err)
{
	sigset_t saved;
	int r = hs_accountdb_replace(&e->db, (size_t)e->idx, &e->ent);

	if (r < 0)
		return hs_err_set(err, r, "%s", e->db.error);
	hs_privs_block_signals(&saved);
	r = hs_accountdb_write(&e->db);
	hs_privs_restore_signals(&saved);
	if (r < 0)
		return hs_err_setl(err, r, LOG_ERR, "%s", e->db.error);
	hs_globalfile_flush_caches("passwd");
	return 0;
}

void hs_pwedit_end(struct hs_pwedit *e)
{
	hs_accountdb_free(&e->db);
	hs_globalfile_unlock(&e->locks);
}
