/* shell-helper: print the caller's real login shell.
 *
 * Installed setgid hardened-shadow (2711, DESIGN §5) so that it may
 * traverse /etc/hardened-shadow; the kernel's owner check on the user's
 * 02710 directory limits it to the caller's own files.  It takes no
 * arguments and no input: whom it serves is the real uid, never something
 * the caller says.  Output: the shell path and a newline on stdout, exit 0;
 * or one line on stderr naming the file and why, exit 1. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "confine.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "userdir.h"
#include "util.h"

int main(int argc, char **argv)
{
	char shellbuf[HS_USERFILE_MAX + 2];
	char path[HS_PATHBUF_USER];
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int treefd = -1;
	_cleanup_close_ int udirfd = -1;
	struct passwd pw;
	const char *shell;
	uid_t uid;
	int r;

	hs_cli_set_prog(hs_privs_init(argc, argv, "shell-helper"));
	if (argc != 1)
		hs_die(1, "takes no arguments (it is run by %s)", HS_SHELL_PROXY);
	uid = getuid();

	r = hs_account_getpwuid(uid, &pw, &pwbuf);
	if (r < 0)
		hs_die(1, "cannot find the passwd entry of uid %lu: %s", (unsigned long)uid,
		       r == -ENOENT ? "no such user" : hs_strerror(r));

	treefd = hs_userdir_open_tree();
	if (treefd < 0)
		hs_die(1, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
	/* The directory must belong to the caller: a uid shared by two names
	 * still only reaches directories that uid owns. */
	udirfd = hs_userdir_open(treefd, pw.pw_name, uid, NULL);
	if (udirfd < 0)
		hs_die(1, "cannot open %s: %s",
		       hs_userdir_path(path, sizeof(path), pw.pw_name, NULL), hs_strerror(udirfd));
	/* the kernel keeps it to reading this directory from here on */
	r = hs_confine_helper(udirfd);
	if (r < 0 && r != -ENOSYS)
		hs_die(1, "cannot confine itself: %s", hs_strerror(r));
	r = hs_userdir_read_shell(udirfd, uid, shellbuf, sizeof(shellbuf), &shell);
	if (r < 0)
		hs_die(1, "cannot read %s: %s",
		       hs_userdir_path(path, sizeof(path), pw.pw_name, HS_FILE_SHELL), hs_strerror(r));
	if (printf("%s\n", shell) < 0 || fflush(stdout) != 0)
		hs_die(1, "cannot write to standard output: %s", hs_strerror(-errno));
	return 0;
}
