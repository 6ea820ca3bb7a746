/* vipw, vigr: edit the account files in the administrator's editor.
 *
 * One program, vipw_main(); vipw.c and vigr.c are two-line mains that
 * name their mode, which chooses the default file and the name in
 * messages (argv[0] chooses nothing):
 *   vipw          /etc/passwd        vigr          /etc/group
 *   vipw -s       /etc/shadow        vigr -s       /etc/gshadow
 *   vipw -s -u USER   USER's entry in /etc/hardened-shadow (shadow, aging
 *                 and shell files, shown as one shadow(5) line and the shell)
 *
 * Every edit works the same way:
 *   1. take the locks and keep them to the end: /etc/.pwd.lock and
 *      FILE.lock (DESIGN §4), or for -u the user's write lock;
 *   2. copy the contents into a private directory (lib/editfile: root,
 *      0700) and run $VISUAL / $EDITOR / vi on it with a scrubbed
 *      environment;
 *   3. read the copy back: unchanged -> "is unchanged", nothing written;
 *      a copy that does not parse is never installed (on a terminal we
 *      offer to edit it again; otherwise we fail);
 *   4. install it atomically with a FILE- backup (lib/globalfile), or
 *      rewrite the user's changed files (lib/userdir), signals blocked.
 * Every way out -- an error, the editor failing or killed, SIGHUP, SIGINT,
 * SIGQUIT or SIGTERM to vipw -- removes the copy and releases the locks.
 *
 * Options, messages and exit codes follow shadow-utils' vipw(8) (Debian
 * 12, shadow 4.13); our differences are in vipw(8) of this package. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "accountdb.h"
#include "cli.h"
#include "editfile.h"
#include "globalfile.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "userdir.h"
#include "util.h"
#include "vipw-common.h"
#include "txn.h"

/* shadow-utils' vipw: 1 for failures, 2 for usage, 5 when the file
 * cannot be locked; an editor that fails passes its own status on. */
#define E_SUCCESS  0
#define E_FAILURE  1
#define E_USAGE    2
#define E_LOCK     5

/* leave(): die by the signal that interrupted us */
#define LEAVE_SIGNAL (-1)

/* ---- the state every exit path cleans up ---- */

static bool quiet;
static struct hs_editor_env editor_env;
static struct hs_editfile copy = HS_EDITFILE_INIT;
static struct hs_locks locks = HS_LOCKS_INIT;
static int userdir_fd = -1;             /* holds the user's flock */
static const char *target;              /* named in "... is unchanged" */

static void release_all(void)
{
	hs_editfile_remove(&copy);
	hs_globalfile_unlock(&locks);
	hs_close(TAKE_FD(userdir_fd));
}

/* Every exit without an install: nothing was written. */
static _Noreturn void leave(int status)
{
	int sig = hs_edit_signal_pending();

	release_all();
	if (!quiet && target)
		printf("%s: %s is unchanged\n", hs_cli_prog(), target);
	fflush(stdout);
	hs_editor_env_free(&editor_env);
	closelog();
	if (status == LEAVE_SIGNAL)
		hs_edit_die_by_signal(sig ? sig : SIGTERM);
	exit(status);
}

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options]",
		     "  -g, --group                   edit group database\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -p, --passwd                  edit passwd database\n"
		     "  -q, --quiet                   quiet mode\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -s, --shadow                  edit shadow or gshadow database\n"
		     "  -u, --user USER               with -s: edit USER's entry in "
		     HS_TREE_DIR "\n",
		     "\n");
}

/* ---- the edit loop, shared by every target ---- */

/* Check an edited copy: 0, or negative after saying what is wrong. */
typedef int (*check_fn)(void *ctx, const char *data, size_t len);

/* Edit orig in a private copy until it is unchanged (leave(0)), fails
 * (leave), or passes check, which keeps a copy of what it needs. */
static void edit_copy(const char *copy_name, const char *orig, size_t orig_len, check_fn check,
		      void *ctx)
{
	int r = hs_editfile_create(&copy, hs_cli_prog(), copy_name, orig, orig_len);

	if (r < 0) {
		hs_warn("cannot make a private copy in %s: %s", HS_EDIT_TMPDIR, hs_strerror(r));
		leave(E_FAILURE);
	}
	for (;;) {
		struct hs_secret_buf data = { NULL, 0 };
		bool ok;

		r = hs_editfile_edit(&copy, &editor_env);
		if (r == -EINTR)
			leave(LEAVE_SIGNAL);
		if (r != 0)
			leave(r > 0 ? r : E_FAILURE);
		r = hs_editfile_read(&copy, HS_GLOBALFILE_MAX, &data.p, &data.size);
		if (r < 0) {
			hs_warn("cannot read the edited copy %s: %s", copy.path, hs_strerror(r));
			leave(E_FAILURE);
		}
		if (data.size == orig_len && memcmp(data.p, orig, orig_len) == 0) {
			hs_secret_buf_freep(&data);
			leave(E_SUCCESS);
		}
		/* an empty file parses, and would lock everybody out */
		if (data.size == 0)
			hs_warn("the edited copy is empty");
		ok = data.size > 0 && check(ctx, data.p, data.size) == 0;
		hs_secret_buf_freep(&data);
		if (ok)
			return;
		/* nobody to ask: a script's edit that does not parse fails */
		if (!isatty(STDIN_FILENO))
			leave(E_FAILURE);
		r = hs_edit_ask("Edit it again? [y/n] ");
		if (r < 0)
			leave(LEAVE_SIGNAL);
		if (r == 0)
			leave(E_FAILURE);
	}
}

static bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ---- /etc/passwd, /etc/shadow, /etc/group, /etc/gshadow ---- */

struct global_ctx {
	enum hs_db_kind kind;
	const char *path;
	struct hs_accountdb db;
};

/* The edited copy must load the way every tool loads the file: every
 * line parses, no name twice. */
static int check_global(void *p, const char *data, size_t len)
{
	struct global_ctx *c = p;
	int r;

	hs_accountdb_free(&c->db);
	c->db = (struct hs_accountdb)HS_ACCOUNTDB_INIT;
	r = hs_accountdb_load_data(&c->db, c->kind, c->path, data, len, 0);
	if (r < 0)
		hs_warn("%s", c->db.error);
	return r;
}

static void edit_global(enum hs_db_kind kind, const char *path)
{
	struct global_ctx ctx = { .kind = kind, .path = path, .db = HS_ACCOUNTDB_INIT };
	struct hs_accountdb disk = HS_ACCOUNTDB_INIT;
	struct hs_secret_buf orig = { NULL, 0 };
	const char *now, *failed = NULL;
	size_t now_len = 0;
	sigset_t saved;
	bool same;
	int r;

	target = path;
	r = hs_globalfile_lock(&locks, NULL, &path, 1, HS_LOCK_TIMEOUT_MS, &failed);
	if (r < 0) {
		hs_warn_lock(failed ? failed : HS_ETC_PWD_LOCK, r, HS_LOCK_TIMEOUT_MS);
		leave(E_LOCK);
	}
	r = hs_globalfile_read(path, &orig.p, &orig.size);
	if (r == -ENOENT && kind == HS_DB_SHADOW && file_exists(HS_TREE_DIR)) {
		hs_warn("%s does not exist: this system keeps each user's shadow entry in %s/USER; "
			"edit one with %s -s -u USER", path, HS_TREE_DIR, hs_cli_prog());
		leave(E_FAILURE);
	}
	if (r < 0) {
		hs_warn("cannot read %s: %s", path, hs_strerror(r));
		leave(E_FAILURE);
	}
	edit_copy(basename(path), orig.p, orig.size, check_global, &ctx);

	/* We held the locks throughout; only a program that ignores them
	 * could have changed the file, and its change must not be lost: the
	 * file must hold what we read, and the write below replaces it only
	 * while it is still the version looked at (disk). */
	r = hs_accountdb_load(&disk, kind, path, HS_DB_LENIENT | HS_DB_LAZY);
	now = r == 0 ? hs_accountdb_loaded(&disk, &now_len) : NULL;
	same = r == 0 && now_len == orig.size && (!orig.size || memcmp(now, orig.p, orig.size) == 0);
	hs_secret_buf_freep(&orig);
	hs_accountdb_expect_as(&ctx.db, &disk);
	hs_accountdb_free(&disk);
	if (!same) {
		hs_warn("%s was changed by another program during the edit; not installed", path);
		hs_accountdb_free(&ctx.db);
		leave(E_FAILURE);
	}

	/* The loaded db serialises to the edited bytes as they are (it is
	 * not dirty) and hs_accountdb_write installs them with a PATH-
	 * backup, keeping the file's owner and mode. */
	hs_privs_block_signals(&saved);
	r = hs_accountdb_write(&ctx.db);
	hs_privs_restore_signals(&saved);
	hs_accountdb_free(&ctx.db);     /* keeps its error */
	if (r < 0) {
		hs_warn("%s", ctx.db.error);
		syslog(LOG_ERR, "%s", ctx.db.error);
		leave(E_FAILURE);
	}
	syslog(LOG_INFO, "file %s edited", path);
}

/* ---- one user's entry in the tree (-s -u USER) ---- */

/* One file of the user's entry: what we read (formatted again), or the
 * stand-in shown when it could not be read. */
struct part {
	const char *file;       /* HS_FILE_* */
	char *old_line;         /* formatted, with '\n'; "" for an unread shell */
	char *new_line;         /* after the edit */
};

struct user_ctx {
	const char *name;
	uid_t owner;
	struct part shadow, aging, shell;
	/* as read: old_shell and the hash point into these */
	char rd_shadow[HS_USERFILE_MAX + 2], rd_shell[HS_USERFILE_MAX + 2];
	const char *old_shell;
	char old_flag[HS_FLAG_MAX + 1];  /* aging's reserved field, shown last */
	/* the edited values, pointing into the *_buf copies */
	struct hs_shadow new_shadow;
	struct hs_aging new_aging;
	const char *new_shell;
	struct hs_secret_buf shadow_buf;  /* parsing cuts it with NULs: wiped by size */
	char *shell_buf;
};

/* Forget what check_user made of an edit. */
static void forget_edit(struct user_ctx *c)
{
	hs_free_secret(c->shadow.new_line);
	free(c->aging.new_line);
	free(c->shell.new_line);
	c->shadow.new_line = c->aging.new_line = c->shell.new_line = NULL;
	hs_secret_buf_freep(&c->shadow_buf);
	free(c->shell_buf);
	c->shell_buf = NULL;
}

static void user_ctx_free(struct user_ctx *c)
{
	forget_edit(c);
	hs_free_secret(c->shadow.old_line);
	free(c->aging.old_line);
	free(c->shell.old_line);
	hs_wipe(c->rd_shadow, sizeof(c->rd_shadow));
}

static void warn_unreadable(const struct user_ctx *c, const char *file, int r, const char *shown)
{
	char path[HS_PATHBUF_USER];

	hs_warn("cannot read %s: %s; showing %s instead",
		hs_userdir_path(path, sizeof(path), c->name, file), hs_strerror(r), shown);
}

/* Read the three files after taking the lock.  A file that cannot be read
 * (missing, a planted symlink, the wrong owner ...) is never followed or
 * trusted: a fail-closed stand-in is shown, and only an edit of that part
 * replaces the file. */
static int read_user(struct user_ctx *c, int udirfd, struct hs_spwd *sp)
{
	struct hs_shadow sh;
	struct hs_aging ag;
	const char *shell = "";
	int r;

	r = hs_userdir_read_shadow(udirfd, c->owner, c->rd_shadow, sizeof(c->rd_shadow), &sh);
	if (r < 0) {
		sh = (struct hs_shadow){ .hash = "!", .lstchg = HS_UNSET };
		warn_unreadable(c, HS_FILE_SHADOW, r, "a locked password");
	}
	r = hs_userdir_aging_or_expired(udirfd, &ag);
	if (r < 0)
		warn_unreadable(c, HS_FILE_AGING, r, "an expired account");
	r = hs_userdir_read_shell(udirfd, c->owner, c->rd_shell, sizeof(c->rd_shell), &shell);
	if (r < 0) {
		shell = "";
		warn_unreadable(c, HS_FILE_SHELL, r, "an empty shell");
	}
	if ((r = hs_records_shadow_format(&sh, &c->shadow.old_line)) < 0 ||
	    (r = hs_records_aging_format(&ag, &c->aging.old_line)) < 0)
		return r;
	if (shell[0])
		r = hs_records_shell_format(shell, &c->shell.old_line);
	else if (!(c->shell.old_line = strdup("")))
		r = -ENOMEM;
	if (r < 0)
		return r;
	c->old_shell = shell;
	memcpy(c->old_flag, ag.flag, sizeof(c->old_flag));
	*sp = (struct hs_spwd){
		.name = c->name, .hash = sh.hash, .lstchg = sh.lstchg,
		.min = ag.min, .max = ag.max, .warn = ag.warn, .inact = ag.inact,
		.expire = ag.expire, .flag = c->old_flag, .minus_one = 0,
	};
	return 0;
}

/* The text the editor shows: a comment, the shadow(5) line, the shell. */
static int user_text(struct user_ctx *c, const struct hs_spwd *sp, const char *passwd_shell,
		     char **out, size_t *out_len)
{
	char shown[256], path[HS_PATHBUF_USER], note[400];
	_cleanup_secret_ char *line = NULL;
	int n, r;

	r = hs_records_spwd_format(sp, &line);
	if (r < 0)
		return r;
	if (strcmp(passwd_shell, HS_SHELL_PROXY) == 0)
		snprintf(note, sizeof(note),
			 "# /etc/passwd names the shell proxy for %s: this shell is in use.\n",
			 c->name);
	else
		snprintf(note, sizeof(note),
			 "# Not in use while /etc/passwd gives %s the shell %s.\n", c->name,
			 hs_printable(passwd_shell, shown, sizeof(shown)));
	n = asprintf(out,
		     "# %s -s -u %s: the entry in %s.\n"
		     "# The shadow(5) line (name:password:lastchange:min:max:warn:inactive:expire:)\n"
		     "# and the login shell behind the shell proxy (shell:PATH).  The name stays;\n"
		     "# lines starting with '#' are ignored.\n"
		     "%s"
		     "%s"
		     "shell:%s\n",
		     hs_cli_prog(), c->name, hs_userdir_path(path, sizeof(path), c->name, NULL),
		     note, line, c->old_shell);
	if (n < 0)
		return -ENOMEM;
	*out_len = (size_t)n;
	return 0;
}

/* "PATH:LINE: message" for the edited entry. */
__attribute__((format(printf, 3, 4)))
static int user_refuse(const struct user_ctx *c, unsigned long lineno, const char *fmt, ...)
{
	char path[HS_PATHBUF_USER], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hs_userdir_path(path, sizeof(path), c->name, NULL);
	if (lineno)
		hs_warn("%s:%lu: %s", path, lineno, msg);
	else
		hs_warn("%s: %s", path, msg);
	return -HS_E_FORMAT;
}

static int parse_shadow_line(struct user_ctx *c, const char *line, size_t n, unsigned long no)
{
	struct hs_spwd sp;
	int r;

	c->shadow_buf.p = strndup(line, n);
	if (!c->shadow_buf.p)
		return -ENOMEM;
	c->shadow_buf.size = strlen(c->shadow_buf.p) + 1;
	r = hs_records_spwd_parse(c->shadow_buf.p, &sp);
	if (r < 0)
		return user_refuse(c, no, "invalid shadow(5) line: %s", hs_strerror(r));
	if (strcmp(sp.name, c->name) != 0)
		return user_refuse(c, no, "the name must stay %s (rename with usermod -l)", c->name);
	c->new_shadow = (struct hs_shadow){ .hash = sp.hash, .lstchg = sp.lstchg };
	c->new_aging = (struct hs_aging){
		.min = sp.min, .max = sp.max, .warn = sp.warn, .inact = sp.inact,
		.expire = sp.expire,
	};
	/* the reserved field lives in aging (checked by the parser) */
	snprintf(c->new_aging.flag, sizeof(c->new_aging.flag), "%s", sp.flag);
	if ((r = hs_records_shadow_format(&c->new_shadow, &c->shadow.new_line)) < 0 ||
	    (r = hs_records_aging_format(&c->new_aging, &c->aging.new_line)) < 0)
		return user_refuse(c, no, "invalid shadow(5) line: %s", hs_strerror(r));
	return 0;
}

static int parse_shell_line(struct user_ctx *c, const char *line, size_t n, unsigned long no)
{
	static const char key[] = "shell:";
	char shown[256];
	int r;

	if (n < sizeof(key) - 1 || memcmp(line, key, sizeof(key) - 1) != 0)
		return user_refuse(c, no, "expected shell:PATH");
	c->shell_buf = strndup(line + sizeof(key) - 1, n - (sizeof(key) - 1));
	if (!c->shell_buf)
		return -ENOMEM;
	hs_printable(c->shell_buf, shown, sizeof(shown));
	if (!c->shell_buf[0] && !c->shell.old_line[0]) {
		/* still the stand-in for a shell file we could not read */
		c->new_shell = NULL;
		c->shell.new_line = strdup("");
		return c->shell.new_line ? 0 : -ENOMEM;
	}
	r = hs_records_shell_format(c->shell_buf, &c->shell.new_line);
	if (r < 0)
		return user_refuse(c, no, "invalid shell '%s': %s", shown, hs_strerror(r));
	/* the proxy would exec itself for ever */
	if (strcmp(c->shell_buf, HS_SHELL_PROXY) == 0)
		return user_refuse(c, no, "the shell cannot be the shell proxy itself");
	c->new_shell = c->shell_buf;
	return 0;
}

static int check_user(void *p, const char *data, size_t len)
{
	struct user_ctx *c = p;
	struct hs_line_iter it;
	const char *line;
	size_t n;
	unsigned content = 0;
	int r = 0;

	forget_edit(c);     /* the previous attempt */
	hs_strbuf_lines_init(&it, data, len);
	while (hs_strbuf_line_next(&it, &line, &n)) {
		if (memchr(line, '\0', n))
			return user_refuse(c, it.lineno, "NUL byte");
		/* blank: the line holds no NUL, and data ends in one
		 * (hs_editfile_read), so strspn stops at its end */
		if (strspn(line, " \t\r") >= n || line[0] == '#')
			continue;
		if (content == 0)
			r = parse_shadow_line(c, line, n, it.lineno);
		else if (content == 1)
			r = parse_shell_line(c, line, n, it.lineno);
		else
			r = user_refuse(c, it.lineno,
					"only the shadow(5) line and the shell line belong here");
		if (r < 0)
			return r;
		content++;
	}
	if (content == 0)
		return user_refuse(c, 0, "the shadow(5) line of %s is missing", c->name);
	if (content == 1)
		return user_refuse(c, 0, "the shell:PATH line is missing");
	return 0;
}

/* usermod -l and userdel take a directory away without the user's lock;
 * write only while it is still this user's entry. */
static bool still_in_tree(int treefd, int udirfd, const char *name, uid_t owner)
{
	struct stat a, b;

	return fstat(udirfd, &a) == 0 && fstatat(treefd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino && S_ISDIR(b.st_mode) &&
	       b.st_uid == owner;
}

static bool changed(const struct part *p)
{
	return p->new_line && strcmp(p->old_line, p->new_line) != 0;
}

static int write_part(const struct user_ctx *c, const struct part *p, int r)
{
	char path[HS_PATHBUF_USER];

	if (r < 0) {
		hs_userdir_path(path, sizeof(path), c->name, p->file);
		hs_warn("cannot write %s: %s", path, hs_strerror(r));
		syslog(LOG_ERR, "cannot write %s: %s", path, hs_strerror(r));
	}
	return r;
}

static void edit_user(const char *name)
{
	static char path[HS_PATHBUF_USER];     /* target points here */
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int treefd = -1;
	struct hs_secret_buf text = { NULL, 0 };
	struct user_ctx ctx = {
		.name = name,
		.shadow = { .file = HS_FILE_SHADOW },
		.aging = { .file = HS_FILE_AGING },
		.shell = { .file = HS_FILE_SHELL },
	};
	struct hs_err err = HS_ERR_INIT;
	struct passwd pw;
	struct hs_spwd sp;
	gid_t tree_gid, auth_gid;
	sigset_t saved;
	int r, failed = 0;

	if (!hs_names_user_valid(name))
		hs_die(E_FAILURE, "invalid user name '%s'", hs_printable(name, path, sizeof(path)));
	r = hs_account_getpwnam(name, &pw, &pwbuf);
	if (r == -ENOENT)
		hs_die(E_FAILURE, "user '%s' does not exist", name);
	if (r < 0)
		hs_die(E_FAILURE, "cannot look up user '%s': %s", name, hs_strerror(r));
	treefd = hs_userdir_open_tree();
	if (treefd == -ENOENT)
		hs_die(E_FAILURE, "%s does not exist: this system keeps shadow entries in %s "
		       "(edit it with %s -s)", HS_TREE_DIR, HS_ETC_SHADOW, hs_cli_prog());
	if (treefd < 0)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(treefd));
	r = hs_userdir_layout_gids(&tree_gid, &auth_gid);
	if (r < 0)
		hs_die(E_FAILURE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));

	target = hs_userdir_path(path, sizeof(path), name, NULL);
	ctx.owner = pw.pw_uid;
	userdir_fd = hs_userdir_open(treefd, name, pw.pw_uid, NULL);
	if (userdir_fd < 0) {
		hs_warn("cannot open %s: %s", path, hs_strerror(userdir_fd));
		leave(E_FAILURE);
	}
	/* held until we leave: every other writer of this user's files
	 * (passwd, chage, chsh, the PAM module) waits for the edit */
	if (hs_userdir_lock_err(treefd, name, &userdir_fd, HS_LOCK_TIMEOUT_MS, &err) < 0) {
		hs_report(&err);
		leave(E_LOCK);
	}
	r = read_user(&ctx, userdir_fd, &sp);
	if (r == 0)
		r = user_text(&ctx, &sp, pw.pw_shell ? pw.pw_shell : "", &text.p, &text.size);
	if (r < 0) {
		hs_warn("cannot show %s: %s", path, hs_strerror(r));
		leave(E_FAILURE);
	}
	edit_copy(name, text.p, text.size, check_user, &ctx);
	hs_secret_buf_freep(&text);

	if (!changed(&ctx.shadow) && !changed(&ctx.aging) && !changed(&ctx.shell)) {
		user_ctx_free(&ctx);
		leave(E_SUCCESS);   /* only comments or blanks changed */
	}
	if (!still_in_tree(treefd, userdir_fd, name, pw.pw_uid)) {
		hs_warn("%s was renamed or removed during the edit; nothing written", path);
		leave(E_FAILURE);
	}
	/* each file is replaced atomically (a new file renamed over the old
	 * one: a planted symlink is replaced, never followed) */
	hs_privs_block_signals(&saved);
	if (changed(&ctx.shadow) &&
	    write_part(&ctx, &ctx.shadow,
		       hs_userdir_write_shadow(userdir_fd, pw.pw_uid, auth_gid, &ctx.new_shadow)) < 0)
		failed++;
	if (changed(&ctx.aging) &&
	    write_part(&ctx, &ctx.aging,
		       hs_userdir_write_aging(userdir_fd, auth_gid, &ctx.new_aging)) < 0)
		failed++;
	if (changed(&ctx.shell) && ctx.new_shell &&
	    write_part(&ctx, &ctx.shell,
		       hs_userdir_write_shell(userdir_fd, pw.pw_uid, auth_gid, ctx.new_shell)) < 0)
		failed++;
	hs_privs_restore_signals(&saved);
	user_ctx_free(&ctx);
	if (failed) {
		target = NULL;  /* some files may be written: not "unchanged" */
		leave(E_FAILURE);
	}
	syslog(LOG_INFO, "file %s edited", path);
}

/* ---- main ---- */

/* Options into *user, *shadow and *group (which starts as the mode's). */
static void parse_options(int argc, char **argv, const char **user, bool *shadow, bool *group)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "group",   no_argument,       NULL, 'g' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "passwd",  no_argument,       NULL, 'p' },
		{ "quiet",   no_argument,       NULL, 'q' },
		{ "root",    required_argument, NULL, 'R' },
		{ "shadow",  no_argument,       NULL, 's' },
		{ "user",    required_argument, NULL, 'u' },
		{ "version", no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ghpqR:su:", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			*group = true;
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'p':
			*group = false;
			break;
		case 'q':
			quiet = true;
			break;
		case 'R':
			/* the other root has its own locks, groups and tree;
			 * only running inside it gets them right */
			hs_die(E_USAGE, "option --root is not supported; run %s inside that root "
			       "instead (chroot DIR %s ...)", hs_cli_prog(), hs_cli_prog());
		case 's':
			*shadow = true;
			break;
		case 'u':
			*user = optarg;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_USAGE);
		}
	}
	if (optind != argc)
		usage(E_USAGE);
	if (*user && *group)
		hs_die(E_USAGE, "option --user edits a user's shadow entry; it does not go with "
		       "the group files");
	if (*user)
		*shadow = true;
}

/* The global files, by [group][shadow], with the companion an edit may
 * have to be followed by and the command that edits it. */
static const struct {
	enum hs_db_kind kind;
	const char *path, *other, *other_cmd;
} global_files[2][2] = {
	{ { HS_DB_PASSWD, HS_ETC_PASSWD, HS_ETC_SHADOW, "vipw -s" },
	  { HS_DB_SHADOW, HS_ETC_SHADOW, HS_ETC_PASSWD, "vipw" } },
	{ { HS_DB_GROUP, HS_ETC_GROUP, HS_ETC_GSHADOW, "vigr -s" },
	  { HS_DB_GSHADOW, HS_ETC_GSHADOW, HS_ETC_GROUP, "vigr" } },
};

int vipw_main(int argc, char **argv, enum vipw_mode mode)
{
	const char *user = NULL, *other = NULL;
	bool shadow = false, group = mode == VIGR_MODE;

	/* before hs_privs_init, which drops them */
	hs_editor_env_capture(&editor_env);
	hs_privs_init(argc, argv, group ? "vigr" : "vipw");
	/* it may have to finish an interrupted command's home and tree work */
	hs_txn_work_enable();
	hs_cli_set_prog(group ? "vigr" : "vipw");
	setlocale(LC_ALL, "");
	parse_options(argc, argv, &user, &shadow, &group);

	if (!hs_privs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog(hs_cli_prog(), LOG_PID, LOG_AUTH);
	hs_edit_signals_init();

	if (user) {
		edit_user(user);
	} else {
		edit_global(global_files[group][shadow].kind, global_files[group][shadow].path);
		/* as shadow-utils: the companion of a plain file only when
		 * the system has one */
		if (shadow || file_exists(global_files[group][shadow].other))
			other = global_files[group][shadow].other;
	}

	release_all();
	hs_globalfile_flush_caches("passwd");
	hs_globalfile_flush_caches("group");
	if (!quiet && other)
		printf("You have modified %s.\n"
		       "You may need to modify %s for consistency.\n"
		       "Please use the command '%s' to do so.\n",
		       target, other, global_files[group][shadow].other_cmd);
	hs_editor_env_free(&editor_env);
	closelog();
	return E_SUCCESS;
}
