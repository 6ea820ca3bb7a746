/* chgpasswd: set many groups' passwords from "group:password" lines on
 * standard input.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit codes
 * follow shadow-utils' chgpasswd(8) (Debian 12, shadow 4.13); chgpasswd(8)
 * of this package lists where we differ.
 *
 * All or nothing.  Every group password lives in /etc/gshadow (or, on a
 * system without it, /etc/group), so the whole batch is one commit:
 *   1. read and check every line (format, length, duplicates, with -e a
 *      usable hash) and look every group up in /etc/group; any error is
 *      reported with its line number and nothing is written;
 *   2. hash every password (per -c/-s, -m, or login.defs' ENCRYPT_METHOD),
 *      on every CPU, without holding the locks;
 *   3. under the locks, check every group again (one deleted meanwhile is
 *      an error naming its line, and nothing is written), set all the
 *      passwords in memory and write once (hs_accountset_commit puts an
 *      already written file back when a later one fails).
 * Legacy methods (MD5, SHA256: libxcrypt's verdict) follow lib/auth/hash.h's one
 * rule, as chpasswd and newusers: refused unless --allow-legacy, DES always.
 * Options, line reading and checking and the hashing are src/admin/secretbatch's,
 * shared with chpasswd.
 *
 * Every password is wiped as soon as it has been hashed, and the stdio
 * buffer of standard input is ours so it can be wiped too. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "cli.h"
#include "config.h"
#include "groupops.h"
#include "hash.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "secretbatch.h"
#include "util.h"
#include "txn.h"

/* shadow-utils' chgpasswd exit codes */
#define E_SUCCESS 0
#define E_FAILURE 1
#define E_USAGE   2

/* A line's group, looked up in /etc/group as read now (ctx). */
static int lookup_group(void *ctx, struct hs_secret_batch *b, const char *name,
			unsigned long lineno, uid_t *uid)
{
	(void)uid;
	if (hs_accountdb_find(ctx, name) < 0) {
		hs_secret_line_error(b, lineno, "group '%s' does not exist", name);
		return -1;
	}
	return 0;
}

static struct hs_secret_tool tool = {
	.name = "chgpasswd",
	.what = "group",
	.legacy_help = "(legacy: newgrp\n"
		       "                                refuses them)",
	.root_in_help = true,
	.hint_shows_dir = false,
	.sflag_checked_first = true,
	.des_effect = "its hashes would not be accepted by newgrp",
	.name_valid = hs_names_group_valid,
	.invalid_name_shown = true,
	.empty_always_refused = true,
	.empty_hint = "use gpasswd -r to remove a group password",
	.legacy_where = "where allowed explicitly, and newgrp never does",
	.lookup = lookup_group,
};

/* lib/auth/hash.h's one rule for writers: a method libxcrypt calls legacy only
 * with --allow-legacy.  Our newgrp never accepts such a hash (it verifies
 * without allow_legacy), so even then it is said. */
static void check_legacy_method(const struct hs_secret_options *o, int status)
{
	const char *name = hs_secret_check_legacy(&o->policy, o->allow_legacy,
						  tool.legacy_where, status);

	if (hs_hash_policy_check_legacy(&o->policy, false, NULL) < 0)
		hs_warn("warning: libxcrypt calls %s legacy: newgrp will not accept these "
			"passwords", name);
}

/* ---- pass 1: reading and checking ---- */

static int read_batch(const struct hs_secret_options *o, struct hs_secret_batch *b)
{
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT;
	int r;

	/* a first look, without the locks: pass 3 looks again under them */
	if (hs_accountdb_load(&gr, HS_DB_GROUP, HS_ETC_GROUP, 0) < 0)
		hs_die(E_FAILURE, "%s", gr.error);
	tool.ctx = &gr;
	r = hs_secret_read(stdin, &tool, o, b);
	tool.ctx = NULL;
	hs_accountdb_free(&gr);
	if (r < 0)
		return -1;
	if (b->legacy)
		hs_warn("warning: some hashes use a method libxcrypt calls legacy: newgrp will "
			"not accept them");
	return 0;
}

/* ---- pass 3: one commit ---- */

static int write_batch(struct hs_secret_batch *b)
{
	struct hs_accountset s = HS_ACCOUNTSET_INIT;
	struct hs_err err = HS_ERR_INIT;

	if (hs_accountset_open(&s, HS_AS_GROUP_FILES, 0) < 0) {
		hs_warn("%s", s.error);
		return -1;
	}
	for (size_t i = 0; i < b->n; i++) {
		long gi = hs_groupops_find(&s, b->v[i].name);

		if (gi < 0) {
			hs_secret_line_error(b, b->v[i].lineno,
					     "group '%s' does not exist (removed meanwhile)",
					     b->v[i].name);
			continue;
		}
		if (b->errors == 0 && hs_groupops_set_password(&s, (size_t)gi, b->v[i].secret) < 0)
			hs_secret_line_error(b, b->v[i].lineno, "%s", s.error);
	}
	if (b->errors > 0) {
		hs_warn("error detected, changes ignored");
		hs_accountset_close(&s);
		return -1;
	}
	if (!hs_groupops_gshadow(&s))
		hs_warn("warning: %s does not exist: the hashes go into %s, which every user "
			"can read", HS_ETC_GSHADOW, HS_ETC_GROUP);
	if (hs_groupops_finish(&s, 0, &err, NULL, NULL) < 0) {
		hs_report(&err);
		hs_warn("no password changed");
		return -1;
	}
	for (size_t i = 0; i < b->n; i++)
		syslog(LOG_INFO, "password of group '%s' changed by chgpasswd", b->v[i].name);
	return 0;
}

int main(int argc, char **argv)
{
	struct hs_secret_options o = { .mode = HS_SECRET_DEFAULT };
	struct hs_secret_batch b = { .v = NULL };
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "chgpasswd"));
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	hs_secret_parse_options(argc, argv, &tool, &o);
	if (o.mode == HS_SECRET_HASH)
		check_legacy_method(&o, E_USAGE);
	if (!hs_privs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog("chgpasswd", LOG_PID, LOG_AUTHPRIV);
	hs_confine_to_etc(E_FAILURE);
	if (o.mode == HS_SECRET_DEFAULT) {
		struct hs_config *defs = NULL;

		r = hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, hs_cli_warn_at,
				      (void *)hs_cli_prog(), &defs);
		if (r < 0)
			hs_die(E_FAILURE, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
		r = hs_hash_policy_from_config(defs, &o.policy);
		if (r < 0)
			hs_die(E_FAILURE, "ENCRYPT_METHOD %s in %s: %s",
			       hs_config_get_str(defs, "ENCRYPT_METHOD", ""), HS_ETC_LOGIN_DEFS,
			       hs_strerror(r));
		hs_config_free(defs);
		/* as newusers: login.defs' method is held to the same rule
		 * (a configuration problem, not bad usage) */
		check_legacy_method(&o, E_FAILURE);
	}

	r = read_batch(&o, &b);
	if (r < 0)
		return E_FAILURE;
	if (o.mode != HS_SECRET_ENCRYPTED && hs_secret_hash(&tool, &o.policy, &b) < 0) {
		hs_secret_wipe(&b);
		return E_FAILURE;
	}
	r = write_batch(&b);
	hs_secret_wipe(&b);
	return r < 0 ? E_FAILURE : E_SUCCESS;
}
