/* Unit tests for src/check/integrity.c: the pwck and grpck checks on in-memory
 * files (reports, read-only answers, repairs as db edits), the salvage of
 * a group line whose only fault is a member name, member lists far larger
 * than any real group, -s, and (as root) the tree audit on a scratch tree
 * under /tmp: reports, repairs, nothing followed, clean afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <grp.h>
#include <stdio.h>
#include <syslog.h>

#include "integrity.h"
#include "layout.h"
#include "records.h"
#include "userdir.h"
#include "test_helpers.h"

/* ---- a scripted io: the report in a buffer, answers from a string ---- */

struct capture {
	struct hs_buf out;
	const char *answers;    /* 'y' or 'n' per question; NULL: always yes */
	size_t asked;
};

static void cap_say(void *ctx, const char *line)
{
	struct capture *c = ctx;

	assert_int_equal(hs_strbuf_append(&c->out, line, strlen(line)), 0);
	assert_int_equal(hs_strbuf_append(&c->out, "\n", 1), 0);
}

static bool cap_ask(void *ctx, const char *prompt)
{
	struct capture *c = ctx;
	bool yes = !c->answers || c->answers[c->asked] == 'y';

	if (c->answers)
		assert_true(c->answers[c->asked] != '\0');      /* no unplanned question */
	c->asked++;
	assert_int_equal(hs_strbuf_append(&c->out, prompt, strlen(prompt)), 0);
	assert_int_equal(hs_strbuf_append(&c->out, yes ? "Yes\n" : "No\n", yes ? 4 : 3), 0);
	return yes;
}

static void audit_init(struct hs_integrity *a, struct capture *c, unsigned flags,
		       const char *answers)
{
	memset(c, 0, sizeof *c);
	c->answers = answers;
	memset(a, 0, sizeof *a);
	a->flags = flags;
	a->io.say = cap_say;
	a->io.ask = cap_ask;
	a->io.ctx = c;
}

static const char *text(struct capture *c)
{
	assert_int_equal(hs_strbuf_append(&c->out, "", 1), 0);
	c->out.len--;
	return c->out.data;
}

static void load(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
		 const char *data)
{
	if (hs_accountdb_load_data(db, kind, path, data, strlen(data), HS_DB_LENIENT) < 0)
		fail_msg("%s", db->error);
}

static const char *serialized(struct hs_accountdb *db)
{
	static struct hs_buf b;

	hs_strbuf_free(&b);
	assert_int_equal(hs_accountdb_serialize(db, &b), 0);
	assert_int_equal(hs_strbuf_append(&b, "", 1), 0);
	return b.data;
}

/* ---- /etc/passwd and /etc/shadow ---- */

static const char passwd_text[] =
	"alice:x:5001:5001::/:/bin/sh\n"
	"bad line\n"
	"+nisuser\n"
	"alice:x:5009:5001::/:/bin/sh\n"
	"bob:x:5001:5001::/:/bin/sh\n"
	"-carol:x:7:7::/:/bin/sh\n"
	"\x1b[2Jevil:x:1:1::/:/bin/sh\n";
static const char shadow_text[] =
	"alice:$6$s$h:19000:0:99999:7:::\n"
	"ghost:!:19000::::::\n";

static void test_passwd_read_only(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, sp = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;

	load(&pw, HS_DB_PASSWD, "/etc/passwd", passwd_text);
	load(&sp, HS_DB_SHADOW, "/etc/shadow", shadow_text);
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY | HS_INTEGRITY_NO_WARNINGS, NULL);
	assert_int_equal(hs_integrity_passwd(&a, &pw, &sp, NULL), 0);
	assert_int_equal(hs_integrity_shadow(&a, &sp, &pw), 0);
	assert_string_equal(text(&c),
		"invalid password file entry (line 2: has an invalid format)\n"
		"delete line 'bad line'? No\n"
		"duplicate password entry\n"
		"delete line 'alice:x:5009:5001::/:/bin/sh'? No\n"
		"no matching password file entry in /etc/shadow\n"
		"add user 'bob' in /etc/shadow? No\n"
		"invalid password file entry (line 7: forbidden character in a field)\n"
		"delete line '\\x1b[2Jevil:x:1:1::/:/bin/sh'? No\n"
		"no matching password file entry in /etc/passwd\n"
		"delete line 'ghost:!:19000::::::'? No\n");
	assert_int_equal(a.problems, 5);
	assert_false(a.db_changed);
	assert_false(pw.dirty || sp.dirty);
	assert_int_equal(c.asked, 0);   /* read-only never asks */
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&sp);
}

static void test_passwd_warnings_and_repairs(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, sp = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;
	char *expect;

	load(&pw, HS_DB_PASSWD, "/etc/passwd", passwd_text);
	load(&sp, HS_DB_SHADOW, "/etc/shadow", shadow_text);
	/* delete the bad line, keep the duplicate, add bob, keep the line
	 * with the escape sequence, delete ghost */
	audit_init(&a, &c, 0, "ynyny");
	assert_int_equal(hs_integrity_passwd(&a, &pw, &sp, NULL), 0);
	assert_int_equal(hs_integrity_shadow(&a, &sp, &pw), 0);
	assert_non_null(strstr(text(&c), "user 'bob': duplicate user ID 5001 (also used by "
				"user 'alice')\n"));
	assert_true(a.db_changed);
	assert_string_equal(serialized(&pw),
		"alice:x:5001:5001::/:/bin/sh\n"
		"+nisuser\n"
		"alice:x:5009:5001::/:/bin/sh\n"
		"bob:x:5001:5001::/:/bin/sh\n"
		"-carol:x:7:7::/:/bin/sh\n"
		"\x1b[2Jevil:x:1:1::/:/bin/sh\n");
	assert_int_equal(asprintf(&expect, "alice:$6$s$h:19000:0:99999:7:::\n"
				  "bob:!:%ld::::::\n", hs_today()) > 0, 1);
	assert_string_equal(serialized(&sp), expect);
	free(expect);
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&sp);
}

/* ---- /etc/group and /etc/gshadow ---- */

static const char users_text[] =
	"alice:x:5001:5001::/:/bin/sh\n"
	"bob:x:5002:5002::/:/bin/sh\n";

static void test_group_checks_and_repairs(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;

	load(&pw, HS_DB_PASSWD, "/etc/passwd", users_text);
	load(&gr, HS_DB_GROUP, "/etc/group",
	     "g1:x:6001:alice,bob\n"
	     "g2:x:6002:alice,zz-nosuch-user\n"
	     "g3:x:6003:ok user,alice,,bob\n"
	     "g4:x:6004:a:b\n"
	     "g5:x:6001:\n"
	     "g1:x:6009:\n"
	     "g6:$1$pw:6006:\n");
	load(&gs, HS_DB_GSHADOW, "/etc/gshadow",
	     "g1:!::alice,zz-only-here\n"
	     "g2:!:zz-nosuch-admin:alice\n"
	     "g3:!::alice,bob\n"
	     "orphan:!::\n");
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	assert_string_equal(text(&c),
		"'zz-only-here' is a member of the 'g1' group in /etc/gshadow but not in /etc/group\n"
		"delete member 'zz-only-here' from 'g1' in /etc/gshadow? No\n"
		"'bob' is a member of the 'g1' group in /etc/group but not in /etc/gshadow\n"
		"add 'bob' to the members of 'g1' in /etc/gshadow? No\n"
		"group g2: no user zz-nosuch-user\n"
		"delete member 'zz-nosuch-user'? No\n"
		"'zz-nosuch-user' is a member of the 'g2' group in /etc/group but not in /etc/gshadow\n"
		"add 'zz-nosuch-user' to the members of 'g2' in /etc/gshadow? No\n"
		"group g3: invalid member name 'ok user'\n"
		"delete member 'ok user'? No\n"
		"group g3: invalid member name ''\n"
		"delete member ''? No\n"
		"invalid group file entry (line 4: has an invalid format)\n"
		"delete line 'g4:x:6004:a:b'? No\n"
		"group g5: duplicate group ID 6001 (also used by group g1)\n"
		"no matching group file entry in /etc/gshadow\n"
		"add group 'g5' in /etc/gshadow? No\n"
		"duplicate group entry\n"
		"delete line 'g1:x:6009:'? No\n"
		"no matching group file entry in /etc/gshadow\n"
		"add group 'g6' in /etc/gshadow? No\n"
		"shadow group g1: no user zz-only-here\n"
		"delete member 'zz-only-here'? No\n"
		"shadow group g2: no administrative user zz-nosuch-admin\n"
		"delete administrative member 'zz-nosuch-admin'? No\n"
		"no matching group file entry in /etc/group\n"
		"delete line 'orphan:!::'? No\n");
	assert_false(gr.dirty || gs.dirty);
	hs_strbuf_free(&c.out);

	/* everything yes: the files agree and are clean afterwards */
	audit_init(&a, &c, 0, NULL);
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	hs_strbuf_free(&c.out);
	assert_string_equal(serialized(&gr),
		"g1:x:6001:alice,bob\n"
		"g2:x:6002:alice\n"
		"g3:x:6003:alice,bob\n"
		"g5:x:6001:\n"
		"g6:x:6006:\n");
	assert_string_equal(serialized(&gs),
		"g1:!::alice,bob\n"
		"g2:!::alice\n"
		"g3:!::alice,bob\n"
		"g5:!::\n"
		"g6:$1$pw::\n");
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY | HS_INTEGRITY_NO_WARNINGS, NULL);
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	assert_string_equal(text(&c), "");
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
}

/* A line salvaged for its bad member names that ends in a CR (a file
 * copied from Windows): the salvage copies the line without the CR and
 * must wipe only what it copied (ASan's run sees a wipe past it). */
static void test_salvage_line_ending_in_cr(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;

	(void)state;
	load(&pw, HS_DB_PASSWD, "/etc/passwd", users_text);
	load(&gr, HS_DB_GROUP, "/etc/group", "g7:x:6007:bad name,alice\r\n");
	load(&gs, HS_DB_GSHADOW, "/etc/gshadow", "g7:!::bad name,alice\r\n");
	audit_init(&a, &c, 0, NULL);
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	assert_non_null(strstr(text(&c), "invalid member name 'bad name'"));
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
}

/* The exit status shadow-utils' grpck gives: a group password field that
 * is not 'x' beside a gshadow line is a bad entry even with -S; member
 * lists that disagree are reported (unless -S) but leave it 0. */
static void test_group_status_counts(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;

	load(&pw, HS_DB_PASSWD, "/etc/passwd", users_text);
	load(&gr, HS_DB_GROUP, "/etc/group", "g1:x:6001:alice\n" "g2:secret:6002:\n");
	load(&gs, HS_DB_GSHADOW, "/etc/gshadow", "g1:!::bob\n" "g2:!::\n");
	for (int quiet = 0; quiet < 2; quiet++) {
		audit_init(&a, &c, HS_INTEGRITY_READ_ONLY | (quiet ? HS_INTEGRITY_NO_WARNINGS : 0),
			   NULL);
		assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
		assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
		assert_string_equal(text(&c), quiet ?
			"group g2 has an entry in /etc/gshadow, but its password field in "
			"/etc/group is not set to 'x'\n" :
			"'bob' is a member of the 'g1' group in /etc/gshadow but not in /etc/group\n"
			"delete member 'bob' from 'g1' in /etc/gshadow? No\n"
			"'alice' is a member of the 'g1' group in /etc/group but not in /etc/gshadow\n"
			"add 'alice' to the members of 'g1' in /etc/gshadow? No\n"
			"group g2 has an entry in /etc/gshadow, but its password field in "
			"/etc/group is not set to 'x'\n");
		assert_int_equal(a.problems, 1);
		assert_int_equal(a.notes, quiet ? 0 : 2);
		hs_strbuf_free(&c.out);
	}
	hs_accountdb_free(&pw);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
}

/* What logged() sends to syslog (the repairs' audit trail), caught here
 * instead: the fortified vsyslog calls __vsyslog_chk. */
static char syslog_text[4096];

__attribute__((format(printf, 1, 0)))
static void syslog_capture(const char *fmt, va_list ap)
{
	size_t n = strlen(syslog_text);

	vsnprintf(syslog_text + n, sizeof syslog_text - n, fmt, ap);
	n = strlen(syslog_text);
	if (n + 1 < sizeof syslog_text)
		strcpy(syslog_text + n, "\n");
}

#if defined(__USE_FORTIFY_LEVEL) && __USE_FORTIFY_LEVEL > 0
void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	(void)pri;
	(void)flag;
	syslog_capture(fmt, ap);
}
#else
void vsyslog(int pri, const char *fmt, va_list ap)
{
	(void)pri;
	syslog_capture(fmt, ap);
}
#endif

/* A gshadow line edited twice (its members made equal to group's, then a
 * bad admin deleted): the second edit frees the text of the first, and the
 * log line must still name the group, not read the freed text. */
static void test_gshadow_line_edited_twice(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;

	(void)state;
	load(&pw, HS_DB_PASSWD, "/etc/passwd", users_text);
	load(&gr, HS_DB_GROUP, "/etc/group", "grp7:x:6007:zz-nosuch-member\n");
	load(&gs, HS_DB_GSHADOW, "/etc/gshadow",
	     "grp7:!:zz-nosuch-admin:zz-nosuch-member,zz-only-here\n");
	/* keep the member in group, delete zz-only-here from gshadow,
	 * delete the admin, keep the member in gshadow */
	audit_init(&a, &c, HS_INTEGRITY_SYSLOG, "nyyn");
	syslog_text[0] = '\0';
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	assert_int_equal(c.asked, 4);
	assert_string_equal(serialized(&gs), "grp7:!::zz-nosuch-member\n");
	assert_non_null(strstr(syslog_text,
			       "shadow group grp7: members deleted in /etc/gshadow\n"));
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
}

/* 200,000 members, one missing on each side: two reports, in linear time. */
static void test_huge_member_lists(void **state)
{
	const size_t n = 200000;
	struct hs_buf users = { 0 }, group = { 0 }, gshadow = { 0 };
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, gr = HS_ACCOUNTDB_INIT, gs = HS_ACCOUNTDB_INIT;
	struct hs_integrity a;
	struct capture c;
	char line[128];

	assert_int_equal(hs_strbuf_append(&group, "big:x:7000:", 11), 0);
	assert_int_equal(hs_strbuf_append(&gshadow, "big:!::", 7), 0);
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(line, sizeof line, "u%07zu:x:%zu:100::/:/bin/sh\n", i, 100000 + i);

		assert_int_equal(hs_strbuf_append(&users, line, (size_t)len), 0);
		if (i != n - 1) {
			assert_int_equal(hs_strbuf_append(&group, line, 8), 0);
			assert_int_equal(hs_strbuf_append(&group, i == n - 2 ? "\n" : ",", 1), 0);
		}
		if (i != 0) {
			assert_int_equal(hs_strbuf_append(&gshadow, line, 8), 0);
			assert_int_equal(hs_strbuf_append(&gshadow, i == n - 1 ? "\n" : ",", 1), 0);
		}
	}
	assert_int_equal(hs_accountdb_load_data(&pw, HS_DB_PASSWD, "/etc/passwd", users.data,
						users.len, 0), 0);
	assert_int_equal(hs_accountdb_load_data(&gr, HS_DB_GROUP, "/etc/group", group.data,
						group.len, 0), 0);
	assert_int_equal(hs_accountdb_load_data(&gs, HS_DB_GSHADOW, "/etc/gshadow", gshadow.data,
						gshadow.len, 0), 0);
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	assert_int_equal(hs_integrity_group(&a, &gr, &gs, &pw), 0);
	assert_int_equal(hs_integrity_gshadow(&a, &gs, &gr, &pw), 0);
	assert_string_equal(text(&c),
		"'u0199999' is a member of the 'big' group in /etc/gshadow but not in /etc/group\n"
		"delete member 'u0199999' from 'big' in /etc/gshadow? No\n"
		"'u0000000' is a member of the 'big' group in /etc/group but not in /etc/gshadow\n"
		"add 'u0000000' to the members of 'big' in /etc/gshadow? No\n");
	hs_strbuf_free(&c.out);
	hs_strbuf_free(&users);
	hs_strbuf_free(&group);
	hs_strbuf_free(&gshadow);
	hs_accountdb_free(&pw);
	hs_accountdb_free(&gr);
	hs_accountdb_free(&gs);
}

/* ---- -s ---- */

static void test_sort(void **state)
{
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT, sp = HS_ACCOUNTDB_INIT;

	load(&pw, HS_DB_PASSWD, "/etc/passwd",
	     "c:x:30:1::/:/bin/sh\n"
	     "a:x:10:1::/:/bin/sh\n"
	     "b:x:20:1::/:/bin/sh\n"
	     "a2:x:10:1::/:/bin/sh\n");
	load(&sp, HS_DB_SHADOW, "/etc/shadow",
	     "zz:!:::::::\n"
	     "b:!:::::::\n"
	     "c:!:::::::\n"
	     "a:!:::::::\n");
	assert_int_equal(hs_integrity_sort(&pw, &sp), 0);
	assert_string_equal(serialized(&pw),
		"a:x:10:1::/:/bin/sh\n"
		"a2:x:10:1::/:/bin/sh\n"
		"b:x:20:1::/:/bin/sh\n"
		"c:x:30:1::/:/bin/sh\n");
	assert_string_equal(serialized(&sp), "a:!:::::::\nb:!:::::::\nc:!:::::::\nzz:!:::::::\n");
	assert_true(pw.dirty && sp.dirty);
	hs_accountdb_free(&sp);
	load(&sp, HS_DB_SHADOW, "/etc/shadow", "a:!:::::::\nbroken\n");
	assert_int_equal(hs_integrity_sort(&pw, &sp), -HS_E_FORMAT);
	assert_string_equal(serialized(&sp), "a:!:::::::\nbroken\n");
	hs_accountdb_free(&pw);
	hs_accountdb_free(&sp);
}

/* ---- the tree (root only: owners) ---- */

#define T_GID 4243
#define A_GID 4244
#define ALICE 5001
#define BOB 5002

static void make_user(int treefd, const char *name, uid_t uid, const char *hash)
{
	struct hs_shadow s = { .hash = (char *)hash, .lstchg = 19000 };
	struct hs_aging ag;

	hs_records_aging_init_unset(&ag);
	assert_int_equal(hs_userdir_create(treefd, name, uid, A_GID, &s, &ag, "/bin/sh"), 0);
}

static void run_tree(struct hs_integrity *a, struct hs_accountdb *pw, const char *path)
{
	const struct hs_integrity_tree t = {
		.path = path, .admin_uid = 0, .tree_gid = T_GID, .auth_gid = A_GID,
	};

	assert_int_equal(hs_integrity_tree(a, pw, &t), 0);
}

static void test_tree_audit(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT;
	char tree[128], buf[256];
	struct hs_integrity a;
	struct capture c;
	struct stat st;
	int treefd, afd;

	if (geteuid() != 0)
		skip();
	load(&pw, HS_DB_PASSWD, "/etc/passwd",
	     "alice:x:5001:5001::/:/bin/sh\n"
	     "bob:x:5002:5002::/:/bin/sh\n"
	     "carol:x:5003:5003::/:/bin/sh\n");
	snprintf(tree, sizeof tree, "%s/tree", f->path);
	assert_int_equal(mkdirat(f->dfd, "tree", 0700), 0);
	treefd = openat(f->dfd, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(treefd >= 0);
	assert_int_equal(fchown(treefd, 0, T_GID), 0);
	assert_int_equal(fchmod(treefd, HS_TREE_MODE), 0);
	make_user(treefd, "alice", ALICE, "$6$s$alicehash");
	make_user(treefd, "bob", BOB, "$6$s$bobhash");
	make_user(treefd, "ghost", 5999, "$6$s$ghosthash");
	afd = openat(treefd, "alice", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(afd >= 0);

	/* clean: nothing said */
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	assert_int_equal(unlinkat(treefd, "ghost", 0) < 0, 1);  /* a directory */
	assert_int_equal(hs_userdir_remove(treefd, "ghost"), 0);
	make_user(treefd, "carol", 5003, "$6$s$carolhash");
	run_tree(&a, &pw, tree);
	assert_string_equal(text(&c), "");
	hs_strbuf_free(&c.out);

	/* break it: a mode, a symlink out of the tree, a stray, a temp, an
	 * aging owned by the user, a missing directory, a ghost */
	put_str(f->ofd, "target", "outside\n", 0, 0, 0600);
	assert_int_equal(fchmodat(afd, "shadow", 0644, 0), 0);
	assert_int_equal(unlinkat(afd, "shell", 0), 0);
	snprintf(buf, sizeof buf, "%s/target", f->outside);
	assert_int_equal(symlinkat(buf, afd, "shell"), 0);
	put_str(afd, "aging.old", "-1:-1:-1:-1:-1:\n", 0, A_GID, 0644);
	put_str(afd, ".shadow.AbCdEfGhIjKl", "x\n", ALICE, A_GID, 0600);
	{
		int bfd = openat(treefd, "bob", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		assert_true(bfd >= 0);
		assert_int_equal(fchownat(bfd, "aging", BOB, A_GID, 0), 0);
		close(bfd);
	}
	assert_int_equal(hs_userdir_remove(treefd, "carol"), 0);
	make_user(treefd, "ghost", 5999, "$6$s$ghosthash");

	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	run_tree(&a, &pw, tree);
	{
		char *expect = NULL;

		assert_true(asprintf(&expect,
			"%1$s/alice/.shadow.AbCdEfGhIjKl: left-over temporary regular file\n"
			"remove it? No\n"
			"%1$s/alice/aging.old: stray regular file; only shadow, shell and aging "
			"belong in a user's directory\n"
			"remove it? No\n"
			"%1$s/alice/shadow: mode is 0644, should be 0640 (getspnam() through the "
			"NSS module does not check this)\n"
			"set mode to 0640? No\n"
			"%1$s/alice/shell: is a symbolic link, should be a regular file\n"
			"replace it with the shell /bin/sh (change it with chsh)? No\n"
			"%1$s/bob/aging: owner is bob (5002), should be 0; the account counts as "
			"expired\n"
			"replace it with an aging file that keeps the account expired (set it "
			"with chage)? No\n"
			"%1$s/carol: missing; user 'carol' in /etc/passwd has no directory and "
			"cannot log in\n"
			"create it with a locked password and an expired aging? No\n"
			"%1$s/ghost: directory without a user in /etc/passwd; its password would "
			"pass to the next account named ghost\n"
			"remove it? No\n", tree) > 0);
		assert_string_equal(text(&c), expect);
		free(expect);
	}
	hs_strbuf_free(&c.out);

	/* repair everything */
	audit_init(&a, &c, 0, NULL);
	run_tree(&a, &pw, tree);
	assert_int_equal(a.failures, 0);
	assert_true(a.tree_changed);
	hs_strbuf_free(&c.out);
	assert_string_equal(slurp(f->ofd, "target"), "outside\n");      /* not followed */
	assert_int_equal(fstatat(f->ofd, "target", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_string_equal(slurp(afd, "shadow"), "$6$s$alicehash:19000:\n");
	assert_int_equal(fstatat(afd, "shadow", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_string_equal(slurp(afd, "shell"), "/bin/sh\n");
	assert_entries(afd, 3);
	assert_string_equal(slurp(treefd, "bob/aging"), "-1:-1:-1:-1:1:\n");
	assert_string_equal(slurp(treefd, "carol/shadow"), "!::\n");
	assert_int_equal(fstatat(treefd, "carol", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_uid, 5003);
	assert_int_not_equal(fstatat(treefd, "ghost", &st, AT_SYMLINK_NOFOLLOW), 0);

	/* clean again */
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	run_tree(&a, &pw, tree);
	assert_string_equal(text(&c), "");
	assert_int_equal(a.problems, 0);
	hs_strbuf_free(&c.out);

	close(afd);
	close(treefd);
	hs_accountdb_free(&pw);
}

static void test_no_tree(void **state)
{
	struct tmp_dirs *f = *state;
	struct hs_accountdb pw = HS_ACCOUNTDB_INIT;
	const struct hs_integrity_tree t = { .path = "/nonexistent/tree", .tree_gid = HS_ANY_GID,
					 .auth_gid = HS_ANY_GID };
	struct hs_integrity a;
	struct capture c;

	(void)f;
	load(&pw, HS_DB_PASSWD, "/etc/passwd", users_text);
	audit_init(&a, &c, HS_INTEGRITY_READ_ONLY, NULL);
	assert_int_equal(hs_integrity_tree(&a, &pw, &t), -ENOENT);
	assert_int_equal(a.problems, 0);
	hs_strbuf_free(&c.out);
	hs_accountdb_free(&pw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passwd_read_only),
		cmocka_unit_test(test_passwd_warnings_and_repairs),
		cmocka_unit_test(test_group_checks_and_repairs),
		cmocka_unit_test(test_salvage_line_ending_in_cr),
		cmocka_unit_test(test_group_status_counts),
		cmocka_unit_test(test_gshadow_line_edited_twice),
		cmocka_unit_test(test_huge_member_lists),
		cmocka_unit_test(test_sort),
		cmocka_unit_test_setup_teardown(test_tree_audit, tmp_dirs_setup, tmp_dirs_teardown),
		cmocka_unit_test_setup_teardown(test_no_tree, tmp_dirs_setup, tmp_dirs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
