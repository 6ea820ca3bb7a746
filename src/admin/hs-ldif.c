/* hs-ldif: move accounts between the tree and a directory server.
 *
 *     hs-ldif export -b BASE [-o FILE] [--rfc2307bis] (--all | USER...)
 *     hs-ldif import [FILE]
 *
 * Root only, installed plain.  export writes LDIF content records for the
 * posixAccount, shadowAccount and inetOrgPerson classes (one entry per
 * user below ou=People) and posixGroup (below ou=Group): the hash as a
 * {CRYPT} value, which slapd checks with crypt(3), so nobody has to set
 * a new password, and the aging file as the shadow* attributes.  Every
 * value goes through lib/format/ldif.c, which base64-encodes anything
 * that is not plain printable ASCII, so no field can break an entry.
 *
 * The output holds every exported hash: it never goes to a terminal, nor
 * to a file others may read or another user owns, unless --force says so; -o creates its file
 * 0600 and never over an existing one.  Everything is read and checked
 * first; a user that cannot be read stops the export before a byte is
 * written.
 *
 * import is the way back, for the few local accounts a site keeps (root's
 * break-glass admins): each posixAccount entry becomes a line of
 * newusers' batch, with its {CRYPT} hash as it is (-c NONE) and its
 * shadow* attributes (--aging), and newusers creates them all or none
 * (--create-only: a name or uid already here fails the batch), through
 * its locks, its checks and its transaction journal: no second copy of
 * that machinery here. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hs-build-config.h"

#include "accountdb.h"
#include "cli.h"
#include "config.h"
#include "confine.h"
#include "ids.h"
#include "layout.h"
#include "ldif.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "strbuf.h"
#include "userdir.h"
#include "util.h"

#define E_SUCCESS 0
#define E_FAILURE 1
#define E_USAGE   2

static struct {
	const char *base;       /* -b */
	const char *output;     /* -o */
	bool all, force, import;
	/* the long-only flags: getopt_long sets them (int, as its flag is) */
	int rfc2307bis, no_groups, no_containers, allow_legacy;
	int system_users;       /* export: named users outside UID_MIN..UID_MAX */
	int system_groups;      /* import: primary groups outside GID_MIN..GID_MAX */
	int any_home;           /* import: homes outside useradd's HOME */
	char **users;
	int n_users;
} o;

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "export -b BASE [options] (--all | USER...)\n"
		     "       hs-ldif import [options] [FILE]",
		     "  -a, --all                     every regular user (UID_MIN..UID_MAX)\n"
		     "  -b, --base BASE               the directory's base DN (dc=example,dc=org)\n"
		     "  -f, --force                   write to a terminal or to a file others\n"
		     "                                may read (the output holds the hashes)\n"
		     "  -h, --help                    display this help message and exit\n"
		     "      --no-containers           no ou=People and ou=Group entries\n"
		     "      --no-groups               no group entries\n"
		     "  -o, --output FILE             write to FILE, created 0600 (it must not exist)\n"
		     "      --rfc2307bis              groups as groupOfNames with member DNs\n"
		     "      --system-users            export: allow named users outside\n"
		     "                                UID_MIN..UID_MAX (root included)\n"
		     "      --allow-legacy            import: allow MD5 and SHA256 hashes\n"
		     "      --system-groups           import: allow an existing primary group\n"
		     "                                outside GID_MIN..GID_MAX\n"
		     "      --any-home                import: allow homes outside useradd's\n"
		     "                                HOME (/home)\n",
		     "\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256 };
	static const struct option longopts[] = {
		{ "all",           no_argument,       NULL, 'a' },
		{ "allow-legacy",  no_argument,       &o.allow_legacy, 1 },
		{ "any-home",      no_argument,       &o.any_home, 1 },
		{ "base",          required_argument, NULL, 'b' },
		{ "force",         no_argument,       NULL, 'f' },
		{ "help",          no_argument,       NULL, 'h' },
		{ "no-containers", no_argument,       &o.no_containers, 1 },
		{ "no-groups",     no_argument,       &o.no_groups, 1 },
		{ "output",        required_argument, NULL, 'o' },
		{ "rfc2307bis",    no_argument,       &o.rfc2307bis, 1 },
		{ "system-groups", no_argument,       &o.system_groups, 1 },
		{ "system-users",  no_argument,       &o.system_users, 1 },
		{ "version",       no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ab:fho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.all = true; break;
		case 'b': o.base = optarg; break;
		case 'f': o.force = true; break;
		case 'h': usage(E_SUCCESS);
		case 'o': o.output = optarg; break;
		case 0: break;  /* a long-only flag, set */
		case OPT_VERSION: hs_print_version();
		default: usage(E_USAGE);
		}
	}
	if (optind >= argc)
		usage(E_USAGE);
	o.import = strcmp(argv[optind], "import") == 0;
	if (!o.import && strcmp(argv[optind], "export") != 0)
		usage(E_USAGE);
	o.users = argv + optind + 1;
	o.n_users = argc - optind - 1;
	if (o.import) {
		if (o.base || o.output || o.all || o.force || o.rfc2307bis || o.no_groups ||
		    o.no_containers || o.system_users || o.n_users > 1)
			usage(E_USAGE);
		return;
	}
	if (o.allow_legacy || o.system_groups || o.any_home)
		usage(E_USAGE);
	if (!o.base)
		hs_die(E_USAGE, "export needs the base DN (-b dc=example,dc=org)");
	if (o.all == (o.n_users > 0))
		hs_die(E_USAGE, "name the users to export, or give --all");
}

/* A DN as an administrator types it: attr=value pairs, no control bytes. */
static bool base_valid(const char *dn)
{
	if (!strchr(dn, '=') || dn[0] == '=' || dn[0] == ',' || strlen(dn) > 1024)
		return false;
	for (const char *p = dn; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* ---- where the output goes ---- */

/* The LDIF holds hashes: refuse a terminal (a scrollback, a screen
 * share) and a regular file others may read (`> file` with umask 022)
 * or that is not ours alone, before anything is read. */
static void check_stdout(void)
{
	struct stat st;

	if (o.force || o.output)
		return;
	if (isatty(STDOUT_FILENO))
		hs_die(E_FAILURE, "refusing to write password hashes to a terminal; "
		       "use -o FILE or a pipe (or --force)");
	if (fstat(STDOUT_FILENO, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if (st.st_mode & 077)
		hs_die(E_FAILURE, "refusing to write password hashes to a file others may read "
		       "(mode %04o); use -o FILE, which creates it 0600 (or --force)",
		       (unsigned)(st.st_mode & 07777));
	/* a 0600 file another user made (and can read), or one with a second
	 * name elsewhere, gives the hashes away as well */
	if (st.st_uid != geteuid() || st.st_nlink != 1)
		hs_die(E_FAILURE, "refusing to write password hashes to a file that is not ours "
		       "alone (owner UID %u, %lu links); use -o FILE (or --force)",
		       (unsigned)st.st_uid, (unsigned long)st.st_nlink);
}

/* Reading needs /etc only (the base of every confined tool); writing,
 * the directory of -o at most, so a flaw in reading the users' files can
 * write nowhere else.  stdout is open already: Landlock leaves it be. */
static void confine(void)
{
	struct hs_confine_rule rule = { NULL, HS_CONFINE_WRITE };
	char dir[PATH_MAX], resolved[PATH_MAX];
	const char *slash = o.output ? strrchr(o.output, '/') : NULL;

	if (o.output) {
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else    /* "/x" is in "/" */
			snprintf(dir, sizeof(dir), "%.*s",
				 slash == o.output ? 1 : (int)(slash - o.output), o.output);
		if (!realpath(dir, resolved))
			hs_die(E_FAILURE, "cannot create %s: %s", o.output, strerror(errno));
		rule.path = resolved;
	}
	hs_confine_or_die(&rule, 1, E_FAILURE);
}

static void write_output(const struct hs_buf *ldif)
{
	int fd = STDOUT_FILENO, r;

	if (o.output)
		fd = open(o.output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		hs_die(E_FAILURE, "cannot create %s: %s", o.output, strerror(errno));
	r = hs_write_full(fd, ldif->data, ldif->len);

	if (r == 0 && o.output && (fsync(fd) < 0 || close(fd) < 0))
		r = -errno;
	if (r < 0) {
		if (o.output)
			unlink(o.output);
		hs_die(E_FAILURE, "cannot write %s: %s", o.output ? o.output : "the output",
		       hs_strerror(r));
	}
}

/* ---- the entries ---- */

struct export {
	struct hs_accountdb pw, gr;
	struct hs_accountdb sp;         /* a classic system's /etc/shadow (no tree) */
	int treefd;                     /* -1 on a classic system */
	size_t *users;          /* indexes into pw of the users to export */
	size_t n;
	bool *marked;           /* by index into pw: exported */
	struct hs_idset primary;        /* the exported users' primary groups */
	struct hs_buf out;
};

static void append(struct hs_buf *b, const char *s, size_t n)
{
	if (hs_strbuf_append(b, s, n) < 0)
		hs_die(E_FAILURE, "out of memory");
}

static void add(struct export *x, const char *attr, const char *value)
{
	if (hs_ldif_append_str(&x->out, attr, value) < 0)
		hs_die(E_FAILURE, "out of memory");
}

static void add_num(struct export *x, const char *attr, long value)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", value);
	add(x, attr, num);
}

/* attr: the DN "RDN=NAME,ou=OU,BASE" */
static void add_dn(struct export *x, const char *attr, const char *rdn, const char *name,
		   const char *ou)
{
	char dn[1400];

	/* names are [A-Za-z0-9_.-$]: nothing to escape in a DN value */
	snprintf(dn, sizeof(dn), "%s=%s,ou=%s,%s", rdn, name, ou, o.base);
	add(x, attr, dn);
}

static void add_containers(struct export *x)
{
	static const char *const ous[] = { "People", "Group" };

	for (size_t i = 0; i < (o.no_groups ? 1 : 2); i++) {
		char dn[1100];

		snprintf(dn, sizeof(dn), "ou=%s,%s", ous[i], o.base);
		add(x, "dn", dn);
		add(x, "objectClass", "top");
		add(x, "objectClass", "organizationalUnit");
		add(x, "ou", ous[i]);
		append(&x->out, "\n", 1);
	}
}

static bool ascii_only(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* cn and sn from the GECOS full name (its first comma field): inetOrgPerson
 * needs both; the login name stands in for an empty one. */
static void add_names(struct export *x, const struct hs_passwd *pw)
{
	size_t full_len = strcspn(pw->gecos, ",");
	char full[HS_GECOS_MAX + 1];
	const char *sn;

	snprintf(full, sizeof(full), "%.*s", (int)full_len, pw->gecos);
	while (full_len > 0 && full[full_len - 1] == ' ')
		full[--full_len] = '\0';
	if (!full[0])
		snprintf(full, sizeof(full), "%s", pw->name);
	sn = strrchr(full, ' ');
	sn = sn ? sn + 1 : full;
	add(x, "cn", full);
	add(x, "sn", sn);
	/* gecos is an IA5String (ASCII) in the nis schema: a UTF-8 one is
	 * only in cn, which takes any text */
	if (pw->gecos[0] && ascii_only(pw->gecos))
		add(x, "gecos", pw->gecos);
}

/* shadow(5)'s day fields after the hash, as shadowAccount names them:
 * written by export, read back by import in this order */
static const char *const shadow_attrs[] = { "shadowLastChange", "shadowMin", "shadowMax",
					    "shadowWarning", "shadowInactive", "shadowExpire" };

static void add_aging(struct export *x, const struct hs_shadow *sh, const struct hs_aging *ag)
{
	const long days[] = { sh->lstchg, ag->min, ag->max, ag->warn, ag->inact, ag->expire };

	for (size_t i = 0; i < HS_ARRAY_SIZE(shadow_attrs); i++)
		if (days[i] != HS_UNSET)
			add_num(x, shadow_attrs[i], days[i]);
	if (ag->flag[0])
		add(x, "shadowFlag", ag->flag);
}

/* A classic system: USER's /etc/shadow line, or the hash in /etc/passwd
 * when there is none (no aging then). */
static void read_classic(struct export *x, const struct hs_passwd *pw, struct hs_shadow *sh,
			 struct hs_aging *ag)
{
	long i = x->sp.present ? hs_accountdb_find(&x->sp, pw->name) : -1;
	const struct hs_spwd *sp = i >= 0 ? &hs_accountdb_get(&x->sp, (size_t)i)->sp : NULL;

	hs_records_aging_init_unset(ag);
	*sh = (struct hs_shadow){ .hash = strcmp(pw->passwd, "x") ? pw->passwd : "!",
				  .lstchg = HS_UNSET };
	if (!sp)
		return;
	*sh = (struct hs_shadow){ .hash = sp->hash, .lstchg = sp->lstchg };
	*ag = (struct hs_aging){ .min = sp->min, .max = sp->max, .warn = sp->warn,
				 .inact = sp->inact, .expire = sp->expire };
	snprintf(ag->flag, sizeof(ag->flag), "%s", sp->flag);
}

/* Read USER's three files; dies naming the file that cannot be read. */
static void read_user(struct export *x, const struct hs_passwd *pw, char *buf, size_t size,
		      struct hs_shadow *sh, struct hs_aging *ag, const char **shell)
{
	char path[HS_PATHBUF_USER];
	_cleanup_close_ int ufd = x->treefd < 0 ? -1
				 : hs_userdir_open(x->treefd, pw->name, pw->uid, NULL);
	const char *file = NULL;
	int r = ufd;

	*shell = pw->shell;
	if (x->treefd < 0) {
		read_classic(x, pw, sh, ag);
		return;
	}
	/* shadow's strings point into the first half, shell's into the second */
	if (r >= 0 && (r = hs_userdir_read_shadow(ufd, pw->uid, buf, size / 2, sh)) < 0)
		file = "shadow";
	if (r >= 0 && (r = hs_userdir_read_aging(ufd, ag)) < 0)
		file = "aging";
	if (r >= 0 && strcmp(pw->shell, HS_SHELL_PROXY) == 0 &&
	    (r = hs_userdir_read_shell(ufd, pw->uid, buf + size / 2, size / 2, shell)) < 0)
		file = "shell";
	if (r < 0)
		hs_die(E_FAILURE, "cannot read %s: %s",
		       hs_userdir_path(path, sizeof(path), pw->name, file), hs_strerror(r));
}

static void add_user(struct export *x, const struct hs_passwd *pw)
{
	char buf[2 * (HS_USERFILE_MAX + 2)];
	char password[HS_HASH_MAX + 16];
	struct hs_shadow sh;
	struct hs_aging ag;
	const char *shell;

	read_user(x, pw, buf, sizeof(buf), &sh, &ag, &shell);
	add_dn(x, "dn", "uid", pw->name, "People");
	add(x, "objectClass", "top");
	add(x, "objectClass", "inetOrgPerson");
	add(x, "objectClass", "posixAccount");
	add(x, "objectClass", "shadowAccount");
	add(x, "uid", pw->name);
	add_names(x, pw);
	add_num(x, "uidNumber", (long)pw->uid);
	add_num(x, "gidNumber", (long)pw->gid);
	add(x, "homeDirectory", pw->dir[0] ? pw->dir : "/");
	if (shell[0])
		add(x, "loginShell", shell);
	/* A locked hash ("!...") stays locked: crypt(3) matches no password
	 * against it, and removing the "!" in the directory unlocks it as
	 * usermod -U does here.  An empty hash (no password) has no LDAP
	 * equivalent: such a user gets no userPassword, and no bind. */
	if (sh.hash[0]) {
		snprintf(password, sizeof(password), "{CRYPT}%s", sh.hash);
		add(x, "userPassword", password);
		hs_wipe(password, sizeof(password));
	}
	add_aging(x, &sh, &ag);
	append(&x->out, "\n", 1);
	hs_wipe(buf, sizeof(buf));
}

/* The next member in a group's list (at *cursor) that is exported, into
 * name; false at the end. */
static bool next_exported(struct export *x, const char **cursor, char (*name)[HS_NAME_MAX + 1])
{
	const char *m;
	size_t len;

	while ((len = hs_records_list_next(cursor, &m)) > 0) {
		long idx;

		snprintf(*name, sizeof(*name), "%.*s", (int)len, m);
		idx = hs_accountdb_find(&x->pw, *name);
		if (idx >= 0 && x->marked[idx])
			return true;
	}
	return false;
}

static void mark(struct export *x, size_t idx)
{
	if (x->marked[idx])
		return;
	x->marked[idx] = true;
	x->users[x->n++] = idx;
	if (hs_idset_add(&x->primary, x->pw.lines[idx].rec.pw.gid) < 0)
		hs_die(E_FAILURE, "out of memory");
}

/* A group goes out when it is an exported user's primary group, or when
 * it is a regular group (GID_MIN..GID_MAX) with an exported member: a
 * system group (sudo, adm) never becomes a directory-wide grant by way
 * of a member.  Members are the exported users only. */
static bool group_wanted(struct export *x, const struct hs_group *g,
			 const struct hs_id_range *regular)
{
	const char *cursor = g->members;
	char name[HS_NAME_MAX + 1];

	if (hs_idset_contains(&x->primary, g->gid))
		return true;
	if (g->gid < regular->min || g->gid > regular->max)
		return false;
	return next_exported(x, &cursor, &name);
}

static void add_group(struct export *x, const struct hs_group *g)
{
	const char *cursor = g->members;
	char name[HS_NAME_MAX + 1];
	bool any = false;

	add_dn(x, "dn", "cn", g->name, "Group");
	add(x, "objectClass", "top");
	if (o.rfc2307bis)
		add(x, "objectClass", "groupOfNames");
	add(x, "objectClass", "posixGroup");
	add(x, "cn", g->name);
	add_num(x, "gidNumber", (long)g->gid);
	while (next_exported(x, &cursor, &name)) {
		add(x, "memberUid", name);
		if (o.rfc2307bis)
			add_dn(x, "member", "uid", name, "People");
		any = true;
	}
	/* groupOfNames must have a member: the empty DN says "nobody" */
	if (o.rfc2307bis && !any)
		add(x, "member", "");
	append(&x->out, "\n", 1);
}

static void load_db(struct hs_accountdb *db, enum hs_db_kind kind, const char *path, unsigned flags)
{
	if (hs_accountdb_load(db, kind, path, flags) < 0)
		hs_die(E_FAILURE, "%s", db->error);
}

static void select_users(struct export *x, const struct hs_id_range *regular)
{
	x->users = calloc(x->pw.n_lines + 1, sizeof(*x->users));
	x->marked = calloc(x->pw.n_lines + 1, sizeof(*x->marked));
	if (!x->users || !x->marked)
		hs_die(E_FAILURE, "out of memory");
	for (int i = 0; i < o.n_users; i++) {
		char shown[160];
		long idx = hs_names_user_valid(o.users[i]) ? hs_accountdb_find(&x->pw, o.users[i]) : -1;
		uid_t uid;

		if (idx < 0)
			hs_die(E_FAILURE, "user '%s' does not exist",
			       hs_printable(o.users[i], shown, sizeof(shown)));
		/* root's hash in a directory is a network-wide root password */
		uid = x->pw.lines[idx].rec.pw.uid;
		if (!o.system_users && (uid == 0 || uid < regular->min || uid > regular->max))
			hs_die(E_FAILURE, "user '%s' (UID %lu) is outside UID_MIN..UID_MAX; "
			       "give --system-users to export it", o.users[i], (unsigned long)uid);
		mark(x, (size_t)idx);
	}
	for (size_t i = 0; o.all && i < x->pw.n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(&x->pw, i);

		if (rec && rec->pw.uid >= regular->min && rec->pw.uid <= regular->max)
			mark(x, i);
	}
}

static int export_main(void)
{
	struct export x = { .pw = HS_ACCOUNTDB_INIT, .gr = HS_ACCOUNTDB_INIT,
			    .sp = HS_ACCOUNTDB_INIT, .treefd = -1,
			    .primary = HS_IDSET_INIT };
	struct hs_id_range users_range, groups_range;
	struct hs_config *defs = NULL;

	if (!base_valid(o.base)) {
		char shown[160];

		hs_die(E_USAGE, "invalid base DN '%s'", hs_printable(o.base, shown, sizeof(shown)));
	}
	check_stdout();
	confine();
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, hs_cli_warn_at, NULL, &defs) < 0)
		defs = NULL;
	if (hs_ids_range(defs, true, false, &users_range) < 0 ||
	    hs_ids_range(defs, false, false, &groups_range) < 0)
		hs_die(E_FAILURE, "%s: empty UID_MIN..UID_MAX or GID_MIN..GID_MAX range",
		       HS_ETC_LOGIN_DEFS);
	hs_config_free(defs);
	load_db(&x.pw, HS_DB_PASSWD, HS_ETC_PASSWD, 0);
	load_db(&x.gr, HS_DB_GROUP, HS_ETC_GROUP, 0);
	/* a tree system is one with /etc/hardened-shadow, as for useradd */
	x.treefd = hs_userdir_open_tree();
	if (x.treefd == -ENOENT)
		load_db(&x.sp, HS_DB_SHADOW, HS_ETC_SHADOW, HS_DB_MISSING_OK);
	if (x.treefd < 0 && x.treefd != -ENOENT)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(x.treefd));
	select_users(&x, &users_range);

	if (!o.no_containers)
		add_containers(&x);
	for (size_t i = 0; i < x.n; i++)
		add_user(&x, &x.pw.lines[x.users[i]].rec.pw);
	for (size_t i = 0; !o.no_groups && i < x.gr.n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(&x.gr, i);

		if (rec && group_wanted(&x, &rec->gr, &groups_range))
			add_group(&x, &rec->gr);
	}
	write_output(&x.out);
	hs_strbuf_free(&x.out);
	hs_close(x.treefd);
	free(x.users);
	free(x.marked);
	hs_idset_free(&x.primary);
	hs_accountdb_free(&x.pw);
	hs_accountdb_free(&x.gr);
	hs_accountdb_free(&x.sp);
	return E_SUCCESS;
}

/* ---- import ---- */

/* What an import may read: far more than any break-glass set. */
#define IMPORT_BYTES_MAX (64u << 20)
/* newusers' fields, then --aging's */
enum { N_NAME, N_HASH, N_UID, N_GID, N_GECOS, N_DIR, N_SHELL, N_LSTCHG, N_MIN, N_MAX,
       N_WARN, N_INACT, N_EXPIRE, N_FIELDS };
_Static_assert(N_FIELDS - N_LSTCHG == HS_ARRAY_SIZE(shadow_attrs), "one field per attribute");

static void read_all(int fd, const char *what, struct hs_buf *in)
{
	char chunk[8192];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			hs_die(E_FAILURE, "cannot read %s: %s", what, strerror(errno));
		if (in->len + (size_t)n > IMPORT_BYTES_MAX)
			hs_die(E_FAILURE, "%s holds more than %u MiB", what, IMPORT_BYTES_MAX >> 20);
		append(in, chunk, (size_t)n);
	}
	hs_wipe(chunk, sizeof(chunk));
}

/* "PROG: line N: WHO: MESSAGE" and exit 1, WHO being "user 'USER'" once
 * the user is known, else the entry's DN made printable. */
static _Noreturn __attribute__((format(printf, 3, 4)))
void entry_die(const struct hs_ldif_entry *e, const char *user, const char *fmt, ...)
{
	char shown[160];
	char *msg = NULL;
	va_list ap;

	/* the message may quote the entry's values, which the directory's
	 * users may have written: hs_warn's escaping, not a raw vfprintf */
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (user)
		hs_warn("line %lu: user '%s': %s", e->lineno, user, msg ? msg : "out of memory");
	else
		hs_warn("line %lu: %s: %s", e->lineno, hs_printable(e->dn, shown, sizeof(shown)),
			msg ? msg : "out of memory");
	free(msg);
	exit(E_FAILURE);
}

/* The entry's one value of attr (NULL when it has none); a second value
 * is an error, as is one that cannot go into a field of /etc/passwd. */
static const char *single(const struct hs_ldif_entry *e, const char *attr)
{
	size_t i = 0;
	const struct hs_ldif_value *v = hs_ldif_next(e, attr, &i);
	char value[160];

	if (!v)
		return NULL;
	if (hs_ldif_next(e, attr, &i))
		entry_die(e, NULL, "more than one %s", attr);
	if (strlen(v->value) != v->len)
		entry_die(e, NULL, "%s holds a NUL byte", attr);
	if (!hs_records_field_valid(v->value))
		entry_die(e, NULL, "%s holds a ':', a newline or a control character: '%s'", attr,
			  hs_printable_len(v->value, v->len, value, sizeof(value)));
	return v->value;
}

static const char *required(const struct hs_ldif_entry *e, const char *attr)
{
	const char *v = single(e, attr);

	if (!v)
		entry_die(e, NULL, "no %s", attr);
	return v;
}

static const char *number(const struct hs_ldif_entry *e, const char *attr, bool need,
			  unsigned long max)
{
	const char *v = need ? required(e, attr) : single(e, attr);

	/* "-1" is how some directories spell an unset shadow field */
	if (!v || (!need && strcmp(v, "-1") == 0))
		return "";
	if (hs_parse_ulong(v, 0, max, &(unsigned long){ 0 }) < 0)
		entry_die(e, NULL, "invalid %s '%s'", attr, v);
	return v;
}

/* The hash of userPassword: only {CRYPT} values become a local hash. */
static const char *crypt_hash(const struct hs_ldif_entry *e)
{
	const char *v = single(e, "userPassword");

	if (!v)
		return "";      /* newusers leaves the account locked */
	if (strncasecmp(v, "{CRYPT}", 7) != 0 || !v[7])
		entry_die(e, NULL, "userPassword is not a {CRYPT} hash; only a crypt(3) hash can "
			  "serve a local account (set a password afterwards)");
	return v + 7;
}

/* What an imported account may get without an option saying so. */
struct import_limits {
	struct hs_id_range groups;      /* GID_MIN..GID_MAX */
	const char *home;               /* useradd's HOME: the homes go below it */
};

/* gidNumber: a group that exists here under another name than the LDIF
 * gives it is a collision; a group the LDIF names that does not exist here
 * is made by newusers only when it is named after the user.  An existing
 * system group (root, shadow, sudo) is no primary group an LDIF hands out,
 * even when the LDIF has a posixGroup of the same name. */
static void check_group(const struct hs_ldif *l, const struct hs_ldif_entry *e,
			struct hs_accountdb *gr, const struct import_limits *lim,
			const char *user, const char *gid)
{
	const char *ldif_name = NULL;
	unsigned long id = strtoul(gid, NULL, 10);
	long here = hs_accountdb_find_id(gr, id);

	for (size_t i = 0; i < l->n && !ldif_name; i++)
		if (hs_ldif_has_class(&l->e[i], "posixGroup") &&
		    strcmp(number(&l->e[i], "gidNumber", true, HS_ID_MAX), gid) == 0)
			ldif_name = required(&l->e[i], "cn");
	const char *here_name = here >= 0 ? hs_accountdb_get(gr, (size_t)here)->gr.name : NULL;

	if (here_name && !o.system_groups &&
	    (id == 0 || id < lim->groups.min || id > lim->groups.max))
		entry_die(e, user, "GID %s is the system group '%s' here (outside "
			  "GID_MIN..GID_MAX); give --system-groups to allow it", gid, here_name);
	if (here_name && ldif_name && strcmp(here_name, ldif_name) != 0)
		entry_die(e, user, "GID %s is group '%s' here, not '%s'", gid, here_name, ldif_name);
	if (!here_name && ldif_name && strcmp(ldif_name, user) != 0)
		entry_die(e, user, "the primary group '%s' (GID %s) does not exist here; create "
			  "it first (groupadd -g %s %s)", ldif_name, gid, gid, ldif_name);
}

/* The home below the home base (newusers refuses "." and ".."), not
 * /etc/x nor /root/x, which newusers would make and hand to the user. */
static void check_home(const struct hs_ldif_entry *e, const struct import_limits *lim,
		       const char *user, const char *home)
{
	size_t len = strlen(lim->home);

	while (len > 0 && lim->home[len - 1] == '/')
		len--;
	if (o.any_home || (strncmp(home, lim->home, len) == 0 && home[len] == '/' &&
			   home[len + 1] != '\0'))
		return;
	entry_die(e, user, "home '%s' is not below %s; give --any-home to allow it", home,
		  lim->home);
}

/* One posixAccount entry as a line of newusers --aging. */
static void account_line(const struct hs_ldif *l, const struct hs_ldif_entry *e,
			 struct hs_accountdb *gr, const struct import_limits *lim,
			 struct hs_buf *batch)
{
	const char *f[N_FIELDS];
	const char *gecos;
	size_t i = 0;
	char shown[160];

	f[N_NAME] = required(e, "uid");
	if (!hs_names_user_valid(f[N_NAME]))
		hs_die(E_FAILURE, "line %lu: invalid user name '%s'", e->lineno,
		       hs_printable(f[N_NAME], shown, sizeof(shown)));
	f[N_HASH] = crypt_hash(e);
	f[N_UID] = number(e, "uidNumber", true, HS_ID_MAX);
	f[N_GID] = number(e, "gidNumber", true, HS_ID_MAX);
	gecos = single(e, "gecos");
	if (!gecos && hs_ldif_next(e, "cn", &i)) {
		gecos = e->v[i - 1].value;      /* the first cn; fields checked below */
		if (strlen(gecos) != e->v[i - 1].len)
			entry_die(e, f[N_NAME], "a NUL byte in cn");
	}
	f[N_GECOS] = gecos ? gecos : "";
	f[N_DIR] = required(e, "homeDirectory");
	check_home(e, lim, f[N_NAME], f[N_DIR]);
	f[N_SHELL] = single(e, "loginShell") ?: "";
	for (size_t k = 0; k < HS_ARRAY_SIZE(shadow_attrs); k++)
		f[N_LSTCHG + k] = number(e, shadow_attrs[k], false, HS_DAYS_MAX);
	check_group(l, e, gr, lim, f[N_NAME], f[N_GID]);
	for (int k = 0; k < N_FIELDS; k++) {
		/* the one check that keeps every value inside its field */
		if (!hs_records_field_valid(f[k]))
			entry_die(e, f[N_NAME], "a ':', newline or control character in a value");
		if (k > 0)
			append(batch, ":", 1);
		append(batch, f[k], strlen(f[k]));
	}
	append(batch, "\n", 1);
}

/* newusers -c NONE --create-only --aging, the batch on its stdin. */
static int run_newusers(const struct hs_buf *batch)
{
	const char *argv[] = { "newusers", "-c", "NONE", "--create-only", "--aging",
			       o.allow_legacy ? "--allow-legacy" : NULL, NULL };
	int pipefd[2], status;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		hs_die(E_FAILURE, "cannot run %s: %s", HS_NEWUSERS, strerror(errno));
	if (pid == 0) {
		if (dup2(pipefd[0], STDIN_FILENO) < 0)
			_exit(E_FAILURE);
		execv(HS_NEWUSERS, (char *const *)argv);
		hs_warn("cannot run %s: %s", HS_NEWUSERS, strerror(errno));
		_exit(E_FAILURE);
	}
	hs_close(pipefd[0]);
	/* a newusers that stopped reading (it failed) ends the write: its
	 * message says why */
	signal(SIGPIPE, SIG_IGN);
	(void)hs_write_full(pipefd[1], batch->data, batch->len);
	hs_close(pipefd[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			hs_die(E_FAILURE, "cannot wait for newusers: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : E_FAILURE;
}

static int import_main(void)
{
	struct hs_buf in = { 0 }, batch = { 0 };
	struct hs_accountdb gr = HS_ACCOUNTDB_INIT;
	struct hs_err err = HS_ERR_INIT;
	struct hs_config *defs = NULL, *useradd = NULL;
	struct import_limits lim;
	struct hs_ldif l;
	const char *what = o.n_users ? o.users[0] : "standard input";
	size_t n = 0;
	int fd = STDIN_FILENO, status;

	if (o.n_users && (fd = open(o.users[0], O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		hs_die(E_FAILURE, "cannot open %s: %s", what, strerror(errno));
	read_all(fd, what, &in);
	if (hs_ldif_parse(in.data ? in.data : "", in.len, &l, &err) < 0)
		hs_die(E_FAILURE, "%s: %s", what, err.msg);
	hs_strbuf_free(&in);
	load_db(&gr, HS_DB_GROUP, HS_ETC_GROUP, 0);
	if (hs_config_logindefs_load(HS_ETC_LOGIN_DEFS, hs_cli_warn_at, NULL, &defs) < 0)
		defs = NULL;
	if (hs_ids_range(defs, false, false, &lim.groups) < 0)
		hs_die(E_FAILURE, "%s: empty GID_MIN..GID_MAX range", HS_ETC_LOGIN_DEFS);
	status = hs_config_useradd_defaults_load(HS_ETC_USERADD, hs_cli_warn_at,
						 (void *)hs_cli_prog(), &useradd);
	if (status < 0)
		hs_die(E_FAILURE, "cannot read %s: %s", HS_ETC_USERADD, hs_strerror(status));
	lim.home = hs_config_get_str(useradd, "HOME", "/home");
	for (size_t i = 0; i < l.n; i++) {
		if (!hs_ldif_has_class(&l.e[i], "posixAccount"))
			continue;
		account_line(&l, &l.e[i], &gr, &lim, &batch);
		n++;
	}
	hs_config_free(defs);
	hs_config_free(useradd);
	hs_ldif_free(&l);
	hs_accountdb_free(&gr);
	if (n == 0)
		hs_die(E_FAILURE, "%s: no posixAccount entry", what);
	status = run_newusers(&batch);
	hs_strbuf_free(&batch);
	return status;
}

int main(int argc, char **argv)
{
	hs_cli_set_prog(hs_privs_init(argc, argv, "hs-ldif"));
	parse_options(argc, argv);
	if (!hs_privs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	return o.import ? import_main() : export_main();
}
