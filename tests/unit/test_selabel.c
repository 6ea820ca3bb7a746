/* The labels our tools ask for, against the file contexts of Debian's
 * selinux-policy-default with our module (tools/selinux-policy builds
 * them; HS_FILE_CONTEXTS names the file).  No running SELinux is needed:
 * the lookup reads the file.  Covers every kind of path the tools
 * create, and the temporary names, which are labelled as what they
 * become. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "selabel.h"
#include "tempname.h"
#include "test_helpers.h"

static void expect_label(int dirfd, const char *final, mode_t type, const char *want)
{
	char *con = NULL;
	char full[256];

	assert_int_equal(hs_selabel_lookup_at(dirfd, final, type, &con), 0);
	snprintf(full, sizeof full, "system_u:object_r:%s:s0", want);
	if (!con || strcmp(con, full) != 0)
		fail_msg("%s: got %s, want %s", final, con ? con : "(none)", full);
	free(con);
}

/* Each absolute path a tool creates, with the type the policy gives it. */
static void test_paths(void **state)
{
	static const struct {
		const char *path;
		mode_t type;
		const char *want;
	} cases[] = {
		{ "/etc/hardened-shadow", S_IFDIR, "shadow_t" },
		{ "/etc/hardened-shadow/alice", S_IFDIR, "shadow_t" },
		{ "/etc/hardened-shadow/alice/shadow", S_IFREG, "shadow_t" },
		{ "/etc/hardened-shadow/alice/shell", S_IFREG, "shadow_t" },
		{ "/etc/hardened-shadow/alice/aging", S_IFREG, "shadow_t" },
		{ "/etc/passwd", S_IFREG, "etc_t" },
		{ "/etc/passwd-", S_IFREG, "etc_t" },
		{ "/etc/group", S_IFREG, "etc_t" },
		{ "/etc/group-", S_IFREG, "etc_t" },
		{ "/etc/shadow", S_IFREG, "shadow_t" },
		{ "/etc/shadow-", S_IFREG, "shadow_t" },
		{ "/etc/gshadow", S_IFREG, "shadow_t" },
		{ "/etc/gshadow-", S_IFREG, "shadow_t" },
		{ "/etc/subuid", S_IFREG, "etc_t" },
		{ "/etc/passwd.lock", S_IFREG, "shadow_lock_t" },
		{ "/etc/group.lock", S_IFREG, "shadow_lock_t" },
		{ "/etc/.pwd.lock", S_IFREG, "shadow_lock_t" },
		{ "/home", S_IFDIR, "home_root_t" },
		{ "/home/alice", S_IFDIR, "user_home_dir_t" },
		{ "/home/alice/.bashrc", S_IFREG, "user_home_t" },
		{ "/home/alice/.profile", S_IFREG, "user_home_t" },
		{ "/home/alice/.ssh", S_IFDIR, "ssh_home_t" },
		{ "/var/mail/alice", S_IFREG, "mail_spool_t" },
		{ "/usr/libexec/hardened-shadow/password-helper", S_IFREG, "chkpwd_exec_t" },
		{ "/usr/libexec/hardened-shadow/shell-helper", S_IFREG, "chkpwd_exec_t" },
		{ "/usr/bin/passwd", S_IFREG, "passwd_exec_t" },
		{ "/usr/sbin/useradd", S_IFREG, "useradd_exec_t" },
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++)
		expect_label(AT_FDCWD, cases[i].path, cases[i].type, cases[i].want);
}

/* A directory made under a reserved name is labelled as its final name,
 * and so is everything made inside it before the rename. */
static void test_temporary_names(void **state)
{
	struct tmp_dirs *t = *state;
	char tmp[NAME_MAX + 1];
	int dfd;

	assert_int_equal(hs_tempname_reserved("new", "alice", tmp, sizeof tmp), 0);
	assert_int_equal(hs_selabel_mkdirat(t->dfd, tmp, "/home/alice", 0700), 0);
	dfd = openat(t->dfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	expect_label(dfd, ".bashrc", S_IFREG, "user_home_t");
	expect_label(dfd, ".ssh", S_IFDIR, "ssh_home_t");
	assert_int_equal(hs_selabel_mkdirat(dfd, ".ssh", NULL, 0700), 0);
	{
		int sfd = openat(dfd, ".ssh", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		assert_true(sfd >= 0);
		expect_label(sfd, "authorized_keys", S_IFREG, "ssh_home_t");
		close(sfd);
	}
	close(dfd);
}

static int setup(void **state)
{
	const char *fc = getenv("HS_FILE_CONTEXTS");

	if (!fc || hs_selabel_use_file_contexts(fc) < 0) {
		print_error("cannot open file_contexts %s\n", fc ? fc : "(HS_FILE_CONTEXTS unset)");
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test_setup_teardown(test_temporary_names, tmp_dirs_setup,
						tmp_dirs_teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
