/* chsh: change a user's login shell.
 *
 * Installed setgid hardened-shadow (2711, DESIGN §5).  An account whose
 * /etc/passwd shell is the shell proxy keeps its real shell in
 * /etc/hardened-shadow/USER/shell (DESIGN §2), so a user's own change
 * replaces that one file, under the user's write lock, and never touches
 * /etc/passwd or a global lock: the kernel's owner check on the user's
 * 02710 directory is what confines an ordinary user to their own account.
 *
 * Root's shell is root's choice: it goes into /etc/passwd, under the
 * global locks, and takes the account out of the proxy, so the user cannot
 * change it back (usermod --self-service-shell puts it behind again); a
 * listed one also into the shell file of an account with a directory in
 * the tree (not uid 0), which keeps it equal.  The shell an account behind
 * the proxy runs already changes nothing.
 *
 * Options, messages and exit codes follow shadow-utils' chsh(1) (Debian 12,
 * shadow 4.13); where we differ on purpose, chsh(1) of this package says
 * so. */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "confine.h"
#include "layout.h"
#include "names.h"
#include "pamconv.h"
#include "privs.h"
#include "pwedit.h"
#include "records.h"
#include "shells.h"
#include "userdir.h"
#include "util.h"

/* shadow-utils' chsh exits 1 for every refusal and failure, 2 for a usage
 * error. */
#define E_SUCCESS  0
#define E_FAILURE  1
#define E_USAGE    2

static bool amroot;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [LOGIN]",
		     "  -h, --help                    display this help message and exit\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -s, --shell SHELL             new login shell for the user account\n",
		     "\n");
}

/* shadow-utils' rule for the field: no ':', ',', '=' or newline, nothing
 * unprintable.  Bytes outside printable ASCII are refused too: the shell
 * proxy and the shell file take no control characters, and no shell worth
 * listing has a C1 or non-ASCII byte in its path. */
static bool shell_field_valid(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == ':' || c == ',' || c == '=')
			return false;
	}
	return true;
}

/* ---- the user's directory and shell file ---- */

/* Open USER's directory in the tree.  -ENOENT (no tree, or no directory for
 * this user) is returned silently when missing_ok; every other error is
 * printed. */
static int open_userdir(const char *name, uid_t uid, bool missing_ok)
{
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	int fd = treefd < 0 ? treefd : hs_userdir_open(treefd, name, uid, NULL);

	/* the tree's path (no user) when it was the tree that failed */
	if (fd < 0 && !(fd == -ENOENT && missing_ok))
		hs_warn("cannot open %s: %s", hs_userdir_path(path, sizeof(path),
			treefd < 0 ? NULL : name, NULL), hs_strerror(fd));
	return fd;
}

/* The shell behind the proxy, for the interactive prompt. */
static int read_shell_file(const struct passwd *pw, char *buf, size_t size, const char **shell)
{
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int udirfd = open_userdir(pw->pw_name, pw->pw_uid, false);
	int r;

	if (udirfd < 0)
		return udirfd;
	r = hs_userdir_read_shell(udirfd, pw->pw_uid, buf, size, shell);
	if (r < 0)
		hs_warn("cannot read %s: %s",
			hs_userdir_path(path, sizeof(path), pw->pw_name, HS_FILE_SHELL),
			hs_strerror(r));
	return r;
}

/* Replace USER/shell under the user's write lock.  auth_gid is HS_ANY_GID
 * for a user (the setgid directory gives the new file its group). */
static int write_shell_file(int *udirfd, const char *name, uid_t uid, gid_t auth_gid,
			    const char *shell)
{
	struct hs_err err = HS_ERR_INIT;
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int treefd = hs_userdir_open_tree();
	sigset_t saved;
	int r;

	if (treefd < 0) {
		hs_warn("cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
		return treefd;
	}
	/* Held until udirfd is closed: a root tool rewriting this user's
	 * files, or a second chsh, cannot interleave with us. */
	r = hs_userdir_lock_err(treefd, name, udirfd, HS_LOCK_TIMEOUT_MS, &err);
	if (r < 0) {
		hs_report(&err);
		return r;
	}
	hs_privs_block_signals(&saved);
	r = hs_userdir_write_shell(*udirfd, uid, auth_gid, shell);
	hs_privs_restore_signals(&saved);
	if (r < 0) {
		hs_userdir_path(path, sizeof(path), name, HS_FILE_SHELL);
		syslog(LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
		hs_warn("cannot write %s: %s", path, hs_strerror(r));
	}
	return r;
}

/* ---- the interactive prompt ---- */

/* isspace() in the C locale but '\n', whatever the user's locale says */
#define BLANKS " \t\r\v\f"

/* shadow-utils' prompt: an empty line keeps current, a line of blanks
 * means "" (the default shell), anything else is trimmed of surrounding
 * blanks.  End of input before a newline also keeps current.  Returns a
 * malloc'd string. */
static char *prompt_shell(const char *name, const char *current)
{
	char shown[256];
	char line[HS_PATH_FIELD_MAX + 2];
	char *start, *end, *nl;

	printf("Changing the login shell for %s\n", hs_printable(name, shown, sizeof(shown)));
	puts("Enter the new value, or press ENTER for the default");
	printf("\tLogin Shell [%s]: ", hs_printable(current, shown, sizeof(shown)));
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return strdup(current);
	nl = strchr(line, '\n');
	if (!nl && strlen(line) == sizeof(line) - 1)
		hs_die(E_FAILURE, "the login shell is longer than %d bytes", HS_PATH_FIELD_MAX);
	if (!nl || nl == line)
		return strdup(current);
	*nl = '\0';
	start = line + strspn(line, BLANKS);
	for (end = nl; end > start && strchr(BLANKS, end[-1]); end--)
		;
	*end = '\0';
	return strdup(start);
}

/* ---- checking the new shell ---- */

/* Refuse (exit) or warn, as shadow-utils does: a user gets an error for
 * any problem, root a warning for a shell that is unlisted, missing or not
 * executable.  Both get an error for a relative path (root: our addition;
 * nothing could run it) and for the proxy itself (it would exec itself). */
static void check_shell(const char *shell, const struct hs_shells *shells)
{
	char shown[256];
	struct stat st;
	bool exists, regular, executable, listed;

	hs_printable(shell, shown, sizeof(shown));
	if (!shell_field_valid(shell))
		hs_die(E_FAILURE, "Invalid entry: %s", shown);
	if (strlen(shell) > HS_PATH_FIELD_MAX)
		hs_die(E_FAILURE, "the login shell is longer than %d bytes", HS_PATH_FIELD_MAX);
	if (shell[0] == '\0') {
		/* "" is the system's default shell in /etc/passwd; it is not
		 * listed, so only root may set it (it is a restriction: the
		 * user cannot change it back) */
		if (!amroot)
			hs_die(E_FAILURE, "%s is an invalid shell", shown);
		return;
	}
	if (shell[0] != '/')
		hs_die(E_FAILURE, "%s is an invalid shell%s", shown,
		       amroot ? ": not an absolute path" : "");
	if (hs_shells_is_proxy(shell))
		hs_die(E_FAILURE, "%s is an invalid shell%s", shown,
		       amroot ? ": it is the shell proxy itself" : "");

	/* access() and stat() here answer for the real uid: the caller
	 * (this program's setgid bit does not count for access()). */
	exists = stat(shell, &st) == 0;
	regular = exists && S_ISREG(st.st_mode);
	executable = regular && access(shell, X_OK) == 0;
	listed = hs_shells_contains(shells, shell);
	if (listed && executable)
		return;
	if (!amroot)
		hs_die(E_FAILURE, "%s is an invalid shell", shown);
	hs_warn("Warning: %s is an invalid shell", shown);
	if (!exists)
		hs_warn("Warning: %s does not exist", shown);
	else if (!regular)
		hs_warn("Warning: %s is not a regular file", shown);
	else if (!executable)
		hs_warn("Warning: %s is not executable", shown);
}

/* ---- the changes ---- */

/* A user: their own shell file, nothing else. */
static int user_update(const struct passwd *pw, const char *shell)
{
	_cleanup_close_ int udirfd = open_userdir(pw->pw_name, pw->pw_uid, false);

	if (udirfd < 0 || write_shell_file(&udirfd, pw->pw_name, pw->pw_uid, HS_ANY_GID, shell) < 0)
		return E_FAILURE;
	return E_SUCCESS;
}

/* Is shell what the account behind the proxy runs already?  Then root's
 * chsh changes nothing. */
static bool proxied_shell_is(const struct passwd *pw, const char *shell)
{
	char buf[HS_USERFILE_MAX + 2];
	const char *current;

	return strcmp(pw->pw_shell, HS_SHELL_PROXY) == 0 &&
	       read_shell_file(pw, buf, sizeof(buf), &current) >= 0 &&
	       strcmp(current, shell) == 0;
}

/* Root: the shell goes into /etc/passwd, and a listed one also into the
 * shell file of an account with a directory in the tree (not uid 0).  A
 * different shell takes an account out of the proxy: it is root's choice,
 * which the user must not change back (docs/decisions.md "chsh"); the
 * shell it runs already changes nothing.  /etc/passwd is written first,
 * so an interruption never leaves root's shell behind the proxy. */
static int root_update(const struct passwd *pw, const char *shell,
		       const struct hs_shells *shells)
{
	struct hs_pwedit e = HS_PWEDIT_INIT;
	struct hs_err err = HS_ERR_INIT;
	_cleanup_close_ int udirfd = -1;
	bool in_tree = hs_shells_contains(shells, shell) && pw->pw_uid != 0;
	gid_t tree_gid, auth_gid = HS_ANY_GID;
	sigset_t saved;
	int r, status = E_FAILURE;

	if (in_tree) {
		r = hs_userdir_layout_gids(&tree_gid, &auth_gid);
		if (r < 0) {
			hs_warn("cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
			return E_FAILURE;
		}
		/* no global lock when nothing changes */
		if (proxied_shell_is(pw, shell))
			return E_SUCCESS;
	}

	/* Decide from the file as it is under the lock, not from what NSS
	 * said before. */
	if (hs_pwedit_begin(&e, pw->pw_name, &err) < 0)
		goto out;
	if (e.ent.uid == 0)
		in_tree = false;
	if (in_tree) {
		udirfd = open_userdir(e.ent.name, e.ent.uid, true);
		if (udirfd == -ENOENT)
			in_tree = false;    /* not converted: the classic way */
		else if (udirfd < 0)
			goto out;
	}
	/* the two writes go together: a ^C between them would leave the
	 * shell file behind */
	hs_privs_block_signals(&saved);
	if (strcmp(e.ent.shell, shell) != 0) {
		e.ent.shell = shell;
		if (hs_pwedit_commit(&e, &err) < 0) {
			hs_privs_restore_signals(&saved);
			goto out;
		}
	}
	if (!in_tree || write_shell_file(&udirfd, e.ent.name, e.ent.uid, auth_gid, shell) >= 0)
		status = E_SUCCESS;
	hs_privs_restore_signals(&saved);
out:
	hs_report(&err);
	hs_pwedit_end(&e);
	return status;
}

/* Once authenticated, the kernel holds chsh to its job (Landlock): root
 * may write /etc (/etc/passwd, its locks, the tree), a user only their
 * own directory in the tree. */
static void confine(const char *name)
{
	char udir[HS_PATHBUF_USER];
	const struct hs_confine_rule rules[] = {
		{ amroot ? HS_ETC_DIR : hs_userdir_confine_path(udir, sizeof udir, name),
		  HS_CONFINE_WRITE },
	};

	hs_confine_or_die(rules, sizeof rules / sizeof rules[0], E_FAILURE);
}

static void parse_options(int argc, char **argv, const char **new_shell)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "help",    no_argument,       NULL, 'h' },
		{ "root",    required_argument, NULL, 'R' },
		{ "shell",   required_argument, NULL, 's' },
		{ "version", no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hR:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(E_SUCCESS);
		case 'R':
			/* The other root has its own /etc/shells, groups and
			 * tree; only running inside it gets them right. */
			hs_die(E_USAGE, "option --root is not supported; run chsh inside that "
			       "root instead (chroot %s chsh ...)", optarg);
		case 's':
			*new_shell = optarg;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (argc > optind + 1)
		usage(E_USAGE);
}

int main(int argc, char **argv)
{
	char shellbuf[HS_USERFILE_MAX + 2];
	char shown[256];
	struct hs_shells shells;
	_cleanup_free_ char *mebuf = NULL;
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_free_ char *entered = NULL;
	const char *arg_shell = NULL, *shell, *current;
	bool proxied;
	struct passwd me, pw;
	struct hs_err err = HS_ERR_INIT;
	const char *name;
	int status;

	hs_cli_set_prog(hs_privs_init(argc, argv, "chsh"));
	amroot = hs_privs_caller_is_root();
	parse_options(argc, argv, &arg_shell);
	openlog("chsh", LOG_PID, LOG_AUTHPRIV);
	/* prompts (ours and PAM's) in the user's language; the environment
	 * was reduced to a checked allow-list by hs_privs_init */
	setlocale(LC_ALL, "");

	/* Who the caller is comes from the real uid, never the environment. */
	if (hs_pwedit_who(optind < argc ? argv[optind] : NULL, &me, &mebuf, &pw, &pwbuf,
			  &err) < 0)
		hs_report_die(E_FAILURE, &err);
	name = pw.pw_name;
	proxied = pw.pw_shell && strcmp(pw.pw_shell, HS_SHELL_PROXY) == 0;

	/* A user changes only their own shell, and only one kept behind the
	 * proxy: anything else in /etc/passwd is root's restriction (and a
	 * setgid program could not write /etc/passwd anyway). */
	if (!amroot && (pw.pw_uid != getuid() || !proxied)) {
		char who[HS_NAME_MAX * 4 + 8];

		hs_printable(name, who, sizeof(who));
		syslog(LOG_WARNING, "can't change shell for '%s'", who);
		if (pw.pw_uid == getuid())
			/* one line that says why, where shadow-utils' says
			 * only that */
			fprintf(stderr, "You may not change the shell for '%s': root sets it "
				"(it is not self-service).\n", who);
		else
			fprintf(stderr, "You may not change the shell for '%s'.\n", who);
		return E_FAILURE;
	}
	/* As shadow-utils: the PAM service "chsh" authenticates the caller
	 * (root passes through pam_rootok; Debian's stack also refuses, with
	 * pam_shells, a caller whose /etc/passwd shell is not in /etc/shells). */
	if (hs_pamconv_authenticate("chsh", me.pw_name, &err) < 0)
		hs_report_die(E_FAILURE, &err);
	confine(name);

	if (hs_shells_load(&shells, HS_ETC_SHELLS) < 0)
		hs_die(E_FAILURE, "%s", shells.error);

	if (arg_shell) {
		shell = arg_shell;
	} else {
		current = pw.pw_shell ? pw.pw_shell : "";
		if (proxied && read_shell_file(&pw, shellbuf, sizeof(shellbuf), &current) < 0)
			current = "";   /* a new one repairs it */
		entered = prompt_shell(name, current);
		if (!entered)
			hs_die(E_FAILURE, "out of memory");
		shell = entered;
	}
	check_shell(shell, &shells);

	status = amroot ? root_update(&pw, shell, &shells) : user_update(&pw, shell);
	hs_shells_free(&shells);
	if (status == E_SUCCESS)
		syslog(LOG_INFO, "changed user '%s' shell to '%s'", name,
		       hs_printable(shell, shown, sizeof(shown)));
	closelog();
	return status;
}
