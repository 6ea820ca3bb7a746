/* pwck: verify the integrity of the password files and of the per-user
 * tree.
 *
 * Root only, installed plain (DESIGN §5).  Options, messages and exit
 * codes follow shadow-utils' pwck(8); pwck(8) of this package lists where
 * we differ.  The checks are src/check/integrity.c's: /etc/passwd (and a classic
 * /etc/shadow when there is one), then the tree against /etc/passwd.
 *
 * Without -r the global files are locked for the whole run (so no
 * useradd, usermod or userdel restructures the tree under us), every
 * problem with a repair is offered as a question, the tree repairs are
 * made at once (each atomic), and the global files are written at the
 * end, /etc/shadow before /etc/passwd. */
#include <errno.h>
#include <sys/stat.h>

#include "integrity.h"
#include "checktool.h"
#include "cli.h"
#include "config.h"
#include "layout.h"
#include "shells.h"
#include "userdir.h"
#include "util.h"

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [passwd [shadow]]",
		     "  -b, --badname                 allow bad names (not supported)\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -q, --quiet                   report errors only\n"
		     "  -r, --read-only               display errors and warnings\n"
		     "                                but do not change files\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -s, --sort                    sort entries by UID\n",
		     "\nWithout file arguments, the per-user tree " HS_TREE_DIR " is checked too.\n");
}

/* The tree's parameters: its groups (each may be missing, which the
 * audit reports) and /etc/shells. */
static void tree_params(struct hs_integrity_tree *t, struct hs_shells *shells)
{
	t->path = HS_TREE_DIR;
	t->admin_uid = 0;
	if (hs_userdir_layout_gids(&t->tree_gid, NULL) < 0)
		t->tree_gid = HS_ANY_GID;
	if (hs_userdir_layout_gids(NULL, &t->auth_gid) < 0)
		t->auth_gid = HS_ANY_GID;
	t->shells = NULL;
	if (hs_shells_load(shells, HS_ETC_SHELLS) == 0 && shells->present)
		t->shells = shells;
}

/* /etc/passwd, /etc/shadow, then (for the system's files) the tree */
static int run_checks(struct hs_integrity *a, struct hs_integrity_files *f,
		      struct hs_accountdb *groups, const struct hs_check_opts *o)
{
	struct hs_config *defs = NULL;
	struct hs_shells shells = { 0 };
	struct hs_integrity_tree t;
	struct stat st;
	int r;

	/* loaded only to know that getgrgid() will read a regular file */
	(void)groups;
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, NULL, NULL, &defs) < 0)
		defs = NULL;
	/* the tree belongs to the system's /etc/passwd, not to a copy */
	if (!o->file && (lstat(HS_TREE_DIR, &st) == 0 || errno != ENOENT))
		a->flags |= HS_INTEGRITY_TREE;
	r = hs_integrity_passwd(a, f->db, f->shadow, defs);
	if (r == 0 && f->shadow)
		r = hs_integrity_shadow(a, f->shadow, f->db);
	if (r == 0 && (a->flags & HS_INTEGRITY_TREE)) {
		tree_params(&t, &shells);
		t.shadow = f->shadow;
		r = hs_integrity_tree(a, f->db, &t);
		if (r == -ENOENT)
			r = 0;          /* not converted: a classic system */
	}
	hs_shells_free(&shells);
	hs_config_free(defs);
	return r;
}

int main(int argc, char **argv)
{
	static const struct hs_check_tool tool = {
		.name = "pwck", .group = false, .usage = usage, .run = run_checks,
		.companion = HS_ETC_GROUP, .companion_kind = HS_DB_GROUP,
	};

	return hs_check_main(&tool, argc, argv);
}
