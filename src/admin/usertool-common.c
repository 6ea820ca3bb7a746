/* What the user tools share; see usertool-common.h. */
#include "usertool-common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "accountdb.h"
#include "accountset.h"
#include "auditlog.h"
#include "cli.h"
#include "config.h"
#include "globalfile.h"
#include "homedir.h"
#include "layout.h"
#include "names.h"
#include "policy.h"
#include "privs.h"
#include "procs.h"
#include "records.h"
#include "txn.h"
#include "util.h"

static const char *tool_name;

void usertool_init(int argc, char **argv, const char *tool)
{
	tool_name = tool;
	hs_cli_set_prog(hs_privs_init(argc, argv, tool));
	hs_txn_work_enable();
}

void usertool_start(void)
{
	if (!hs_privs_caller_is_root())
		hs_die(E_PW_UPDATE, "Permission denied.");
	openlog(tool_name, LOG_PID, LOG_AUTHPRIV);
	hs_auditlog_open();
}

noreturn void usertool_die_unsupported(int opt, const char *arg)
{
	if (opt == 'Z')
		hs_die(E_USAGE, "SELinux user mappings (--selinux-user, "
		       "--selinux-range) are not supported");
	/* the other root has its own login.defs, groups and tree; only
	 * running inside it gets them right */
	hs_die(E_USAGE, "option --%s is not supported; run %s inside that root instead "
	       "(chroot %s %s ...)", opt == 'R' ? "root" : "prefix", tool_name, arg, tool_name);
}

int usertool_warn(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_vwarn(fmt, ap);
	va_end(ap);
	return status;
}

int usertool_file_status(enum hs_as_file f)
{
	if (f == HS_AS_SUBUID || f == HS_AS_SUBGID)
		return f == HS_AS_SUBUID ? E_SUB_UID_UPDATE : E_SUB_GID_UPDATE;
	return f == HS_AS_GROUP || f == HS_AS_GSHADOW ? E_GRP_UPDATE : E_PW_UPDATE;
}

struct hs_config *usertool_load_logindefs(void)
{
	struct hs_config *cfg = NULL;
	int r = hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, hs_cli_warn_at, NULL, &cfg);

	if (r < 0)
		hs_die(E_PW_UPDATE, "cannot read %s: %s", HS_ETC_LOGIN_DEFS, hs_strerror(r));
	return cfg;
}

const char *usertool_mail_dir(const struct hs_config *cfg)
{
	return hs_config_get_str(cfg, "MAIL_DIR", "/var/mail");
}

long usertool_parse_inactive(const char *s)
{
	unsigned long v;

	if (strcmp(s, "-1") == 0)
		return HS_UNSET;
	if (hs_parse_ulong(s, 0, HS_DAYS_MAX, &v) < 0)
		hs_die(E_BAD_ARG, "invalid numeric argument '%s'", s);
	return (long)v;
}

long usertool_parse_expire(const char *s)
{
	long day;

	if (hs_policy_parse_day(s, &day) < 0)
		hs_die(E_BAD_ARG, "invalid date '%s'", s);
	return day;
}

unsigned long usertool_parse_uid(const char *s)
{
	unsigned long uid;

	if (hs_parse_ulong(s, 0, HS_ID_MAX, &uid) < 0)
		hs_die(E_BAD_ARG, "invalid user ID '%s'", s);
	return uid;
}

void usertool_check_hash(const char *hash)
{
	if (!hs_records_field_valid(hash) || strlen(hash) > HS_HASH_MAX)
		hs_die(E_BAD_ARG, "invalid field '%s'", hash);
}

long usertool_find_group(struct hs_accountdb *gr, const char *spec)
{
	unsigned long gid;

	if (spec[0] && strchr("0123456789+- \t", spec[0])) {
		if (hs_parse_ulong(spec, 0, HS_ID_MAX, &gid) < 0)
			return -2;
		return hs_accountdb_find_id(gr, gid);
	}
	if (!hs_names_group_valid(spec))
		return -2;
	return hs_accountdb_find(gr, spec);
}

int usertool_find_groups(struct hs_accountdb *gr, const char *list, size_t **idx, size_t *n)
{
	_cleanup_free_ char *copy = strdup(list);
	char *save = NULL;

	*n = 0;
	/* a list of k names has at least 2k - 1 bytes */
	*idx = calloc(strlen(list) / 2 + 1, sizeof(**idx));
	if (!copy || !*idx)
		return usertool_warn(E_PW_UPDATE, "out of memory");
	for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		long gi = usertool_find_group(gr, g);

		if (gi < 0)
			return usertool_warn(E_NOTFOUND, "group '%s' does not exist", g);
		(*idx)[(*n)++] = (size_t)gi;
	}
	return E_SUCCESS;
}

int usertool_commit(struct hs_accountset *s, struct hs_txn_work *work, size_t n)
{
	int r;

	hs_globalfile_set_work(work, n);
	r = hs_accountset_commit(s);
	if (r < 0) {
		syslog(LOG_ERR, "%s", s->error);
		hs_warn("%s", s->error);
		hs_globalfile_set_work(NULL, 0);
	}
	return r;
}

void usertool_die_if_busy(struct hs_accountset *s, const char *user, uid_t uid)
{
	pid_t busy = hs_procs_user_busy(uid);

	if (busy) {
		hs_accountset_close(s);
		hs_die(E_USER_BUSY, "user %s is currently used by process %ld", user, (long)busy);
	}
}

void usertool_confine(const char *maildir, const char *skel, bool login_records,
		      const char *home, const char *new_home)
{
	char parent[2][HS_PATHBUF_MAX];
	struct hs_confine_rule rules[5 + 2 * HS_HOME_CONFINE_RULES] = {
		{ HS_ETC_DIR, HS_CONFINE_WRITE },
		{ maildir, HS_CONFINE_WRITE },
		{ login_records ? HS_LASTLOG_FILE : NULL, HS_CONFINE_WRITE | HS_CONFINE_NOFOLLOW },
		{ login_records ? HS_FAILLOG_FILE : NULL, HS_CONFINE_WRITE | HS_CONFINE_NOFOLLOW },
		{ skel, HS_CONFINE_READ },
	};

	/* no home, no rules (not even the listing from /) */
	if (home)
		hs_homedir_confine_rules(home, parent[0], sizeof parent[0], rules + 5);
	if (new_home)
		hs_homedir_confine_rules(new_home, parent[1], sizeof parent[1],
					 rules + 5 + HS_HOME_CONFINE_RULES);
	hs_confine_or_die(rules, HS_ARRAY_SIZE(rules), E_PW_UPDATE);
}
