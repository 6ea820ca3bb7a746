/* newusers: create or update many accounts from lines of the form
 *
 *     pw_name:pw_passwd:pw_uid:pw_gid:pw_gecos:pw_dir:pw_shell
 *
 * Root only, installed plain (DESIGN §5).  Fields, options, messages and
 * exit codes (0, 1) follow shadow-utils' newusers(8) (Debian 12, shadow
 * 4.13); newusers(8) of this package lists where we differ.
 *
 * All or nothing:
 *   1. every line is read and checked on its own (seven fields, a valid
 *      name, numbers, paths, lengths, no name twice); each error names its
 *      line; any error and nothing is written;
 *   2. the passwords are hashed (every CPU takes a share) -- before any
 *      lock, because hashing is the slow part and a useradd waiting on
 *      our locks gives up after 15 s;
 *   3. under the global locks (lib/accountset, shadow-utils' order) every
 *      line is resolved in order against the files as the earlier lines
 *      left them: create or update, uid and gid (allocated in memory from
 *      login.defs' ranges, lib/ids), the group to create, the subordinate
 *      ranges, where the shell goes (DESIGN §2: a listed shell behind the
 *      proxy).  Again any error names its line and nothing is written;
 *   4. the commit, signals blocked, still under the locks, through the
 *      transaction journal of the global files, which carries the new
 *      users' directories and the new homes as its work (lib/etc/txn.h,
 *      useradd's scheme):
 *        a. each new user's directory, complete but with a LOCKED hash,
 *           is built under a reserved name in the tree (a leftover
 *           directory without a passwd line is removed first);
 *        b. a journal "prepared" names each new home's reserved name,
 *           then the homes are built there, root's 0700 (never through a
 *           symlink; anything already at a home's path is left alone);
 *        c. each updated user's shadow or shell file, under that user's
 *           lock, the previous contents kept;
 *        d. the commit point: the journal names the global files and the
 *           work; the files are installed, the directories and homes
 *           renamed into place and handed over;
 *        e. the new users' real hashes replace the locked ones.
 *      A failure before d undoes every step before it (the prepared
 *      journal's recovery removes the reserved homes) and exits 1; a kill
 *      there is undone by the next root tool that takes the locks, and a
 *      kill after d is finished by it.  After d nothing is undone: a
 *      failure is said (a hash that stays locked fails closed), exit 1.
 * The order is useradd's, for the same reason: the NSS module serves a
 * tree directory by name, so a crash may leave at worst accounts whose
 * hash is still locked; never a real hash under a name /etc/passwd does
 * not know.
 *
 * On a classic system (no /etc/hardened-shadow) the hashes go to
 * /etc/shadow, or into /etc/passwd when there is no /etc/shadow. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "accountdb.h"
#include "accountset.h"
#include "groupops.h"
#include "batchio.h"
#include "cli.h"
#include "config.h"
#include "hash.h"
#include "homedir.h"
#include "homepath.h"
#include "ids.h"
#include "layout.h"
#include "names.h"
#include "privs.h"
#include "records.h"
#include "secretbatch.h"
#include "shells.h"
#include "globalfile.h"
#include "txn.h"
#include "userdir.h"
#include "usertool-common.h"
#include "util.h"

#define E_FAILURE 1

/* Longest input line: the fields' own limits (name 32, password 512,
 * GECOS 1024, two paths of 4096) and the colons fit. */
#define LINE_MAX_BYTES 16384
/* What the input may hold in memory, all lines together. */
#define BATCH_BYTES_MAX (256u * 1024 * 1024)
enum { F_NAME, F_PASSWD, F_UID, F_GID, F_GECOS, F_DIR, F_SHELL, F_COUNT,
       /* --aging: shadow(5)'s day fields after the seven */
       F_LSTCHG = F_COUNT, F_MIN, F_MAX, F_WARN, F_INACT, F_EXPIRE, F_ALL };

static struct {
	bool system, allow_legacy, none;
	bool create_only;       /* --create-only: no line names an existing user or uid */
	bool aging;             /* --aging: each line carries its aging fields */
	const char *method;     /* -c */
	const char *rounds;     /* -s */
	const char *file;
	struct hs_hash_policy policy;
} o;

struct line {
	unsigned long lineno;
	char *text;             /* the line, split in place; wiped (passwords) */
	size_t size;
	char *f[F_ALL];
	long lstchg;            /* the new account's, from --aging or today */
	struct hs_aging aging;  /* --aging: the line's; else login.defs' */
	char *hash;             /* the hash to store, NULL: the field was empty */
	bool hash_owned;        /* hash is malloc'd (not the given field) */
	/* resolved under the locks */
	bool exists;            /* an existing user, updated */
	uid_t uid;
	gid_t gid;
	const char *real_shell; /* tree: the shell file's contents to write */
	bool write_shell;       /* existing user: shell file rewritten */
	const char *new_group;  /* the group this line creates, or NULL */
	/* commit state, for the undo */
	bool shadow_written, shell_written;
	struct hs_txn_work *tree_work;  /* a new user's directory, in ctx.work */
	char *old_hash, *old_shell;
	long old_lstchg;
};

struct batch {
	struct line *v;
	size_t n, alloc, bytes;
	unsigned long errors;
};

static struct batch b;
/* The password field is checked as chpasswd checks its lines. */
static const struct hs_secret_tool secret_tool = {
	.what = "user",
	.legacy_where = "where the PAM module has allow_legacy",
};

#define line_error(l, ...) hs_batch_line_error(&b.errors, (l)->lineno, __VA_ARGS__)

static _Noreturn void usage(int status)
{
	hs_cli_usage(status, "[options] [FILE]",
		     "      --allow-legacy            allow MD5 and SHA256 hashes (legacy: they\n"
		     "                                authenticate only with allow_legacy in PAM)\n"
		     "  -b, --badname                 allow bad names (not supported)\n"
		     "  -c, --crypt-method METHOD     the crypt method (one of NONE MD5 SHA256 SHA512\n"
		     "                                BCRYPT YESCRYPT)\n"
		     "      --aging                   six more fields per line: LASTCHG:MIN:MAX:\n"
		     "                                WARN:INACT:EXPIRE (shadow(5) days; empty:\n"
		     "                                unset); needs --create-only\n"
		     "      --create-only             refuse a line that names an existing user\n"
		     "                                or a UID already used\n"
		     "  -h, --help                    display this help message and exit\n"
		     "  -r, --system                  create system accounts\n"
		     "  -R, --root CHROOT_DIR         directory to chroot into (not supported)\n"
		     "  -s, --sha-rounds              number of rounds for the SHA, BCRYPT\n"
		     "                                or YESCRYPT crypt algorithms\n",
		     "\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_ALLOW_LEGACY, OPT_CREATE_ONLY, OPT_AGING };
	static const struct option longopts[] = {
		{ "aging",        no_argument,       NULL, OPT_AGING },
		{ "allow-legacy", no_argument,       NULL, OPT_ALLOW_LEGACY },
		{ "create-only",  no_argument,       NULL, OPT_CREATE_ONLY },
		{ "badname",      no_argument,       NULL, 'b' },
		{ "crypt-method", required_argument, NULL, 'c' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "system",       no_argument,       NULL, 'r' },
		{ "root",         required_argument, NULL, 'R' },
		{ "prefix",       required_argument, NULL, 'P' },
		{ "sha-rounds",   required_argument, NULL, 's' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "bc:hrR:P:s:", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			hs_die(E_FAILURE, "option --badname is not supported: names must be valid "
			       "(they become paths in %s)", HS_TREE_DIR);
		case 'c':
			o.method = optarg;
			break;
		case 'h':
			usage(E_SUCCESS);
		case 'r':
			o.system = true;
			break;
		case 'R':
		case 'P':
			hs_die(E_FAILURE, "option --%s is not supported; run newusers inside the "
			       "root instead (chroot %s newusers)", c == 'P' ? "prefix" : "root", optarg);
		case 's':
			o.rounds = optarg;
			break;
		case OPT_ALLOW_LEGACY:
			o.allow_legacy = true;
			break;
		case OPT_CREATE_ONLY:
			o.create_only = true;
			break;
		case OPT_AGING:
			o.aging = true;
			break;
		case OPT_VERSION:
			hs_print_version();
		default:
			usage(E_FAILURE);
		}
	}
	if (optind < argc - 1)
		usage(E_FAILURE);
	if (optind == argc - 1)
		o.file = argv[optind];
	if (o.aging && !o.create_only) {
		hs_warn("--aging is only allowed with --create-only");
		usage(E_FAILURE);
	}
	if (o.rounds && !o.method) {
		hs_warn("-s flag is only allowed with the -c flag");
		usage(E_FAILURE);
	}
}

/* The hashing policy: -c/-s, else login.defs (ENCRYPT_METHOD and its
 * cost), as shadow-utils' newusers built without PAM.  A legacy method
 * is refused without --allow-legacy (lib/auth/hash.h's one rule). */
static void choose_policy(const struct hs_config *defs)
{
	unsigned long rounds = 0;

	if (o.method && strcasecmp(o.method, "NONE") == 0) {
		o.none = true;
		return;
	}
	if (o.method && strcasecmp(o.method, "DES") == 0)
		hs_die(E_FAILURE, "crypt method DES is not supported: libxcrypt calls it legacy "
		       "and its hashes would not authenticate");
	if (o.rounds && hs_parse_ulong(o.rounds, 1, 999999999UL, &rounds) < 0) {
		hs_warn("invalid numeric argument '%s'", o.rounds);
		usage(E_FAILURE);
	}
	if (o.method) {
		/* -s is the cost of SHA (rounds), BCRYPT (log2 rounds) and
		 * YESCRYPT (cost factor), clamped to the method's range as
		 * shadow-utils does */
		if (hs_hash_policy_from_method(o.method, rounds, &o.policy) < 0) {
			hs_warn("unsupported crypt method: %s", o.method);
			usage(E_FAILURE);
		}
	} else if (hs_hash_policy_from_config(defs, &o.policy) < 0) {
		hs_die(E_FAILURE, "%s: unsupported ENCRYPT_METHOD %s", HS_ETC_LOGIN_DEFS,
		       hs_config_get_str(defs, "ENCRYPT_METHOD", "?"));
	}
	hs_secret_check_legacy(&o.policy, o.allow_legacy, secret_tool.legacy_where, E_FAILURE);
}

/* ---- pass 1: reading and checking each line alone ---- */

static bool all_digits(const char *s)
{
	return s[0] && s[strspn(s, "0123456789")] == '\0';
}

/* A uid or gid field: empty, a number strictly decimal (no sign, blank or
 * leading zero) and never (uid_t)-1, or else a name. */
static bool id_field_valid(const char *s, bool (*name_valid)(const char *name))
{
	if (!s[0])
		return true;
	return all_digits(s) ? hs_parse_ulong(s, 0, HS_ID_MAX, &(unsigned long){ 0 }) == 0
			     : name_valid(s);
}

/* An absolute path in its plain spelling: no "." or ".." (a home that
 * reads as /home/x but is made in /root), no "//", no trailing "/". */
static bool home_valid(const char *s)
{
	_cleanup_free_ char *plain = NULL;

	if (s[0] != '/' || !hs_records_field_valid(s) || strlen(s) >= HS_PATH_FIELD_MAX)
		return false;
	plain = hs_homepath_normalise(s);
	return plain && strcmp(plain, s) == 0;
}

/* Empty (passwd(5): /bin/sh) or an absolute path without ':', ',' or
 * control characters, and not the proxy itself (it would exec itself). */
static bool shell_valid(const char *s)
{
	if (!s[0])
		return true;
	return s[0] == '/' && hs_records_field_valid(s) && !strchr(s, ',') &&
	       strlen(s) < HS_PATH_FIELD_MAX && strcmp(s, HS_SHELL_PROXY) != 0;
}

/* Names seen so far, for the duplicate check, and homes (made once per
 * batch). */
static void *seen, *homes_seen;

/* Split at ':' into exactly want fields. */
static bool split_fields(char *text, char *f[F_ALL], int want)
{
	int n = 0;

	f[n++] = text;
	for (char *p = text; *p; p++) {
		if (*p != ':')
			continue;
		if (n == want)
			return false;
		*p = '\0';
		f[n++] = p + 1;
	}
	return n == want;
}

/* --aging's six fields: "" (unset) or a day number. */
static bool parse_aging(struct line *l)
{
	long *const days[] = { &l->lstchg, &l->aging.min, &l->aging.max, &l->aging.warn,
			       &l->aging.inact, &l->aging.expire };
	char buf[160];

	hs_records_aging_init_unset(&l->aging);
	for (int i = 0; i < F_ALL - F_LSTCHG; i++) {
		const char *s = l->f[F_LSTCHG + i];
		unsigned long v;

		*days[i] = HS_UNSET;
		if (!s[0])
			continue;
		if (hs_parse_ulong(s, 0, HS_DAYS_MAX, &v) < 0) {
			line_error(l, "invalid day count '%s'", hs_printable(s, buf, sizeof(buf)));
			return false;
		}
		*days[i] = (long)v;
	}
	return true;
}

/* Everything a line can be checked for without the account files. */
static bool check_alone(struct line *l)
{
	const struct hs_secret_options secret = {
		.mode = o.none ? HS_SECRET_ENCRYPTED : HS_SECRET_HASH, .allow_legacy = o.allow_legacy,
	};
	char buf[160];

	if (!split_fields(l->text, l->f, o.aging ? F_ALL : F_COUNT)) {
		line_error(l, "invalid line (expected %d fields separated by ':')",
			   o.aging ? F_ALL : F_COUNT);
		return false;
	}
	if (o.aging && !parse_aging(l))
		return false;
	if (!hs_names_user_valid(l->f[F_NAME])) {
		line_error(l, "invalid user name '%s'", hs_printable(l->f[F_NAME], buf, sizeof(buf)));
		return false;
	}
	if (l->f[F_PASSWD][0] && hs_secret_check(&secret_tool, &secret, &b.errors, l->lineno,
						 l->f[F_NAME], l->f[F_PASSWD]) < 0)
		return false;
	const struct { int field; bool valid; const char *what, *hint; } fields[] = {
		{ F_UID, id_field_valid(l->f[F_UID], hs_names_user_valid), "user ID", "" },
		{ F_GID, id_field_valid(l->f[F_GID], hs_names_group_valid), "group ID", "" },
		{ F_GECOS, hs_records_field_valid(l->f[F_GECOS]) &&
			   strlen(l->f[F_GECOS]) <= HS_GECOS_MAX, "comment", "" },
		{ F_DIR, !l->f[F_DIR][0] || home_valid(l->f[F_DIR]), "home directory",
		  " (an absolute path without '.', '..' or '//')" },
		{ F_SHELL, shell_valid(l->f[F_SHELL]), "shell", "" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(fields); i++) {
		if (!fields[i].valid) {
			line_error(l, "invalid %s '%s'%s", fields[i].what,
				   hs_printable(l->f[fields[i].field], buf, sizeof(buf)), fields[i].hint);
			return false;
		}
	}
	return true;
}

/* One line of the input, kept and checked alone. */
static void add_line(void *ctx, char *text, unsigned long lineno)
{
	size_t size = strlen(text) + 1;         /* no NUL inside: refused before */
	unsigned long other;
	struct line *l;

	(void)ctx;
	if (b.n == b.alloc) {
		size_t alloc = b.alloc ? 2 * b.alloc : 256;
		struct line *v = reallocarray(b.v, alloc, sizeof(*v));

		if (!v)
			hs_die(E_FAILURE, "out of memory");
		b.v = v;
		b.alloc = alloc;
	}
	if (b.bytes + size > BATCH_BYTES_MAX)
		hs_die(E_FAILURE, "line %lu: the input holds more than %u MiB", lineno,
		       BATCH_BYTES_MAX >> 20);
	l = &b.v[b.n++];
	*l = (struct line){ .lineno = lineno, .size = size, .text = strdup(text) };
	if (!l->text)
		hs_die(E_FAILURE, "out of memory");
	b.bytes += size;
	if (!check_alone(l))
		return;
	other = hs_batch_seen_add(&seen, l->f[F_NAME], lineno);
	if (other)
		line_error(l, "user '%s' already appears on line %lu", l->f[F_NAME], other);
}

/* ---- pass 2: hashing ---- */

static atomic_ulong n_hashed;   /* for the progress line */

static int hash_one(void *ctx, size_t i)
{
	struct line *l = &b.v[i];
	char *pw = l->f[F_PASSWD];
	int r;

	(void)ctx;
	if (!pw[0])
		return 0;
	if (o.none) {
		l->hash = pw;
		return 0;
	}
	l->hash = calloc(1, HS_HASH_MAX + 1);
	if (!l->hash)
		return -ENOMEM;
	l->hash_owned = true;
	r = hs_hash_password(pw, &o.policy, l->hash, HS_HASH_MAX + 1);
	/* the clear text is not needed any more (the field reads as empty) */
	hs_wipe(pw, strlen(pw));
	hs_cli_progress_step(atomic_fetch_add(&n_hashed, 1) + 1);
	return r;
}

/* ---- pass 3: resolving every line against the files ---- */

struct ctx {
	struct hs_accountset s;
	struct hs_accountdb *pw, *gr, *gs, *sp;
	struct hs_idset uids, gids;
	struct hs_idset owners;         /* uids that own a deleted user's files */
	const char *owners_home;        /* whose parent owners has read last */
	struct hs_id_range urange, grange;
	struct hs_config *defs;
	bool classic;
	int treefd;
	gid_t auth_gid;
	struct hs_shells shells;
	struct hs_aging aging;  /* for new accounts */
	long today;
	struct hs_ids_subid_batch subids[2];        /* /etc/subuid, /etc/subgid */
	bool subids_ready[2];
	/* the commit's work (lib/etc/txn.h): new users' directories and new
	 * homes, built whole under reserved names before the commit point,
	 * renamed into place by it (or, after a kill, by the next root tool) */
	struct hs_txn_work *work;
	size_t n_work;
	struct work_names {
		char tree_path[HS_PATHBUF_USER], tree_tmp[NAME_MAX + 1];
		char home_tmp[sizeof(((struct hs_homedir_build *)0)->tmp)];
	} *names;               /* per line: the work's strings */
	bool prepared;          /* a prepared journal names the homes */
};

static bool same_parent(const char *x, const char *y)
{
	const char *sx = strrchr(x, '/'), *sy = strrchr(y, '/');

	if (!sx || !sy)
		return !sx && !sy;
	return sx - x == sy - y && memcmp(x, y, (size_t)(sx - x)) == 0;
}

/* useradd's uid reuse rule (lib/admin/ids.h): the owners of what deleted
 * users left in the parent of this line's home (read once for lines in a
 * row that share it) and, for the first line, in the mail spool. */
static int add_leftover_owners(struct ctx *c, const struct line *l)
{
	const char *home = l->f[F_DIR];
	int r;

	if (c->owners_home && same_parent(c->owners_home, home))
		return 0;
	r = hs_ids_add_leftover_owners(&c->owners, home, c->owners_home ? NULL :
				       usertool_mail_dir(c->defs));
	c->owners_home = home;
	return r;
}

/* The id a checked uid or gid field names: its number, or the id of the
 * account of that name in db; -ENOENT when there is none. */
static int field_id(struct hs_accountdb *db, const char *field, unsigned long *id)
{
	long i;

	if (all_digits(field))
		return hs_parse_ulong(field, 0, HS_ID_MAX, id);
	i = hs_accountdb_find(db, field);
	return i >= 0 && hs_accountdb_id(db, (size_t)i, id) ? 0 : -ENOENT;
}

/* A line's uid field, for a new user: "" = a new id, a number, or the
 * name of a user (an existing one or one of an earlier line). */
static int resolve_uid(struct ctx *c, struct line *l, unsigned long *uid)
{
	const char *u = l->f[F_UID];
	int r;

	if (!u[0]) {
		r = hs_ids_pick(&c->uids, &c->urange, o.system, HS_IDS_NO_PREFERENCE, uid);
		r = r ?: add_leftover_owners(c, l);
		r = r ?: hs_ids_pick_unowned(&c->uids, &c->owners, &c->urange, o.system, uid);
		if (r < 0) {
			line_error(l, "can't get unique %sUID (%s)", o.system ? "system " : "",
				   r == -EUSERS ? "no more available UIDs" : hs_strerror(r));
			return -1;
		}
		return 0;
	}
	if (field_id(c->pw, u, uid) < 0) {
		line_error(l, "user '%s' does not exist", u);
		return -1;
	}
	return 0;
}

/* A line's gid field, for a new user (newusers(8)): the name of a group
 * (existing or made by an earlier line), a gid (existing, or a new group
 * named after the user with that gid), "" (a new group named after the
 * user), or a new name (a new group of that name).  New groups get the
 * uid as gid when it is free in the range. */
static int resolve_gid(struct ctx *c, struct line *l, unsigned long uid, unsigned long *gid,
		       const char **new_name)
{
	const char *g = l->f[F_GID];
	bool numeric = all_digits(g), named = g[0] && !numeric;
	int r;

	*new_name = NULL;
	if (g[0] && field_id(c->gr, g, gid) == 0 &&
	    (named || hs_accountdb_find_id(c->gr, *gid) >= 0))
		return 0;
	*new_name = named ? g : l->f[F_NAME];
	if (!named && hs_accountdb_find(c->gr, *new_name) >= 0) {
		line_error(l, "group '%s' already exists (name it in the group field to "
			   "make it the primary group)", *new_name);
		return -1;
	}
	if (!numeric) {
		r = hs_ids_pick(&c->gids, &c->grange, o.system, uid, gid);
		if (r < 0) {
			line_error(l, "can't get unique %sGID (%s)", o.system ? "system " : "",
				   r == -EUSERS ? "no more available GIDs" : hs_strerror(r));
			return -1;
		}
	}
	if (c->gs && hs_accountdb_find(c->gs, *new_name) >= 0) {
		line_error(l, "group '%s' is a shadow group, but does not exist in /etc/group",
			   *new_name);
		return -1;
	}
	return 0;
}

/* -1 with the error printed when an edit of the files fails. */
static int db_error(struct line *l, struct hs_accountdb *db)
{
	line_error(l, "%s", db->error);
	return -1;
}

/* Subordinate uid and gid ranges for a new user, as useradd. */
static int add_subids(struct ctx *c, struct line *l)
{
	static const enum hs_as_file files[2] = { HS_AS_SUBUID, HS_AS_SUBGID };

	for (int k = 0; k < 2; k++) {
		struct hs_accountdb *db = hs_accountset_db(&c->s, files[k]);
		struct hs_ids_subid_conf sc;
		struct hs_subid sub = { .owner = l->f[F_NAME] };
		int r;

		if (!db || !db->present)
			continue;
		hs_ids_subid_conf(c->defs, k == 0, &sc);
		if (sc.count == 0 || hs_accountdb_find(db, sub.owner) >= 0)
			continue;
		/* sorted once for the whole batch (hs_ids_subid_batch_init) */
		if (!c->subids_ready[k]) {
			if (hs_ids_subid_batch_init(&c->subids[k], db, &sc) < 0)
				hs_die(E_FAILURE, "out of memory");
			c->subids_ready[k] = true;
		}
		r = hs_ids_subid_batch_next(&c->subids[k], &sub.start);
		if (r < 0) {
			line_error(l, "can't find subordinate %s range: %s", k == 0 ? "user" : "group",
				   r == -EUSERS ? "no more available ranges" : hs_strerror(r));
			return -1;
		}
		sub.count = sc.count;
		if (hs_accountdb_append(db, &sub) < 0)
			return db_error(l, db);
	}
	return 0;
}

static int add_user(struct ctx *c, struct line *l)
{
	unsigned long uid, gid;
	const char *group = NULL;
	const char *shell = l->f[F_SHELL];
	bool proxy = false;
	struct hs_passwd p;

	if (!o.aging) {
		l->lstchg = c->today;
		l->aging = c->aging;
	}
	if (resolve_uid(c, l, &uid) < 0)
		return -1;
	if (o.create_only && hs_idset_contains(&c->uids, uid)) {
		line_error(l, "UID %lu is already used (--create-only)", uid);
		return -1;
	}
	if (resolve_gid(c, l, uid, &gid, &group) < 0)
		return -1;
	if (hs_idset_add(&c->uids, uid) < 0)
		hs_die(E_FAILURE, "out of memory");
	if (group) {
		/* as groupadd makes it (resolve_gid refused a gshadow line
		 * left over for the name, as shadow-utils' newusers does) */
		if (hs_groupops_add(&c->s, group, (gid_t)gid, NULL, NULL, NULL) < 0) {
			line_error(l, "%s", c->s.error);
			return -1;
		}
		if (hs_idset_add(&c->gids, gid) < 0)
			hs_die(E_FAILURE, "out of memory");
		l->new_group = group;
	}
	if (!o.system && add_subids(c, l) < 0)
		return -1;
	if (!c->classic) {
		/* DESIGN §2: a listed shell may go behind the proxy; root
		 * keeps its own in /etc/passwd (pwconv's rule); "" means
		 * /bin/sh */
		proxy = shell[0] && hs_shells_contains(&c->shells, shell) && uid != 0 &&
			hs_config_get_bool(c->defs, "SHELL_PROXY", false);
		l->real_shell = shell[0] ? shell : "/bin/sh";
	} else if (c->sp) {
		struct hs_spwd sp = {
			.name = l->f[F_NAME], .hash = l->hash ? l->hash : "!",
			.lstchg = l->lstchg, .min = l->aging.min, .max = l->aging.max,
			.warn = l->aging.warn, .inact = l->aging.inact, .expire = l->aging.expire,
			.flag = "",
		};

		if (hs_accountdb_append(c->sp, &sp) < 0)
			return db_error(l, c->sp);
	}
	p = (struct hs_passwd){
		.name = l->f[F_NAME],
		.passwd = (c->classic && !c->sp ? (l->hash ? l->hash : "!") : "x"),
		.uid = (uid_t)uid, .gid = (gid_t)gid, .gecos = l->f[F_GECOS],
		.dir = l->f[F_DIR], .shell = proxy ? HS_SHELL_PROXY : shell,
	};
	if (hs_accountdb_append(c->pw, &p) < 0)
		return db_error(l, c->pw);
	l->uid = (uid_t)uid;
	l->gid = (gid_t)gid;
	return 0;
}

/* An existing user whose tree files this line rewrites needs a directory,
 * and a readable shell file (the undo puts back what it read; an
 * unreadable shadow file let nobody in and comes back as "!"). */
static int check_tree_files(struct ctx *c, struct line *l, bool has_dir, bool *same_shell)
{
	_cleanup_close_ int udirfd = -1;
	char path[HS_PATHBUF_USER], buf[HS_USERFILE_MAX + 2];
	const char *shell;
	int r = 0;

	*same_shell = false;
	if (!l->hash && !l->write_shell)
		return 0;
	if (!has_dir) {
		line_error(l, "user '%s' has no directory %s (run pwconv)", l->f[F_NAME],
			   hs_userdir_path(path, sizeof(path), l->f[F_NAME], NULL));
		return -1;
	}
	udirfd = hs_userdir_open(c->treefd, l->f[F_NAME], l->uid, NULL);
	if (udirfd < 0) {
		line_error(l, "cannot open %s: %s",
			   hs_userdir_path(path, sizeof(path), l->f[F_NAME], NULL),
			   hs_strerror(udirfd));
		return -1;
	}
	if (l->write_shell) {
		r = hs_userdir_read_shell(udirfd, l->uid, buf, sizeof(buf), &shell);
		if (r < 0) {
			line_error(l, "cannot read %s: %s",
				   hs_userdir_path(path, sizeof(path), l->f[F_NAME], HS_FILE_SHELL),
				   hs_strerror(r));
			return -1;
		}
		*same_shell = strcmp(shell, l->real_shell) == 0;
	}
	return 0;
}

/* An existing user: the password, GECOS, home and shell fields that are
 * not empty replace the account's.  The uid and gid fields must be empty
 * or name what the account has (newusers never renumbers: usermod -u/-g
 * does that, with the ownership work it needs). */
static int update_user(struct ctx *c, struct line *l, long pi)
{
	struct hs_passwd p = hs_accountdb_get(c->pw, (size_t)pi)->pw;
	const char *shell = l->f[F_SHELL];
	unsigned long id;
	bool has_dir = false, same_shell;

	l->exists = true;
	l->uid = p.uid;
	l->gid = p.gid;
	if (l->f[F_UID][0] && (field_id(c->pw, l->f[F_UID], &id) < 0 || id != p.uid)) {
		line_error(l, "user '%s' exists with UID %lu; newusers does not change it "
			   "(use usermod -u)", p.name, (unsigned long)p.uid);
		return -1;
	}
	if (l->f[F_GID][0] && (field_id(c->gr, l->f[F_GID], &id) < 0 || id != p.gid)) {
		line_error(l, "user '%s' exists with GID %lu; newusers does not change it "
			   "(use usermod -g)", p.name, (unsigned long)p.gid);
		return -1;
	}
	if (!c->classic) {
		struct stat st;

		has_dir = fstatat(c->treefd, p.name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		/* usermod's rule (docs/decisions.md "chsh"): a listed shell
		 * goes into the user's shell file too; an account behind the
		 * proxy stays there only with the shell it runs already, as
		 * a different one is root's choice; uid 0 and users without
		 * a directory keep it in /etc/passwd alone */
		if (shell[0] && hs_shells_contains(&c->shells, shell) && p.uid != 0 && has_dir) {
			l->write_shell = true;
			l->real_shell = shell;
		}
		if (check_tree_files(c, l, has_dir, &same_shell) < 0)
			return -1;
		if (same_shell && strcmp(p.shell, HS_SHELL_PROXY) == 0)
			shell = HS_SHELL_PROXY;
	} else if (l->hash) {
		long si = c->sp ? hs_accountdb_find(c->sp, p.name) : -1;
		struct hs_spwd sp;

		if (si >= 0) {
			sp = hs_accountdb_get(c->sp, (size_t)si)->sp;
			sp.hash = l->hash;
			sp.lstchg = c->today;
			sp.minus_one &= ~1u;
			if (hs_accountdb_replace(c->sp, (size_t)si, &sp) < 0)
				return db_error(l, c->sp);
		} else if (!c->sp || strcmp(p.passwd, "x") != 0) {
			p.passwd = l->hash;     /* the hash lives in /etc/passwd */
		} else {
			sp = (struct hs_spwd){
				.name = p.name, .hash = l->hash, .lstchg = c->today,
				.min = HS_UNSET, .max = HS_UNSET, .warn = HS_UNSET,
				.inact = HS_UNSET, .expire = HS_UNSET, .flag = "",
			};
			if (hs_accountdb_append(c->sp, &sp) < 0)
				return db_error(l, c->sp);
		}
	}
	if (l->f[F_GECOS][0])
		p.gecos = l->f[F_GECOS];
	if (l->f[F_DIR][0])
		p.dir = l->f[F_DIR];
	if (l->f[F_SHELL][0])
		p.shell = shell;
	/* a line that changes nothing in /etc/passwd leaves it unwritten */
	const struct hs_passwd *cur = &hs_accountdb_get(c->pw, (size_t)pi)->pw;
	if (strcmp(p.passwd, cur->passwd) == 0 && strcmp(p.gecos, cur->gecos) == 0 &&
	    strcmp(p.dir, cur->dir) == 0 && strcmp(p.shell, cur->shell) == 0)
		return 0;
	return hs_accountdb_replace(c->pw, (size_t)pi, &p) < 0 ? db_error(l, c->pw) : 0;
}

static int resolve_all(struct ctx *c)
{
	int r;

	c->pw = hs_accountset_db(&c->s, HS_AS_PASSWD);
	c->gr = hs_accountset_db(&c->s, HS_AS_GROUP);
	c->gs = hs_accountset_db(&c->s, HS_AS_GSHADOW);
	c->sp = c->classic ? hs_accountset_db(&c->s, HS_AS_SHADOW) : NULL;
	r = hs_ids_range(c->defs, true, o.system, &c->urange);
	r = r ?: hs_ids_range(c->defs, false, o.system, &c->grange);
	if (r < 0) {
		hs_warn("%s: the %s range is empty", HS_ETC_LOGIN_DEFS,
			o.system ? "system UID or GID" : "UID or GID");
		return hs_batch_errors_done(1);
	}
	if (hs_idset_add_db(&c->uids, c->pw) < 0 || hs_idset_add_db(&c->gids, c->gr) < 0)
		hs_die(E_FAILURE, "out of memory");
	for (size_t i = 0; i < b.n; i++) {
		struct line *l = &b.v[i];
		long pi = hs_accountdb_find(c->pw, l->f[F_NAME]);

		if (pi >= 0 && o.create_only)
			line_error(l, "user '%s' already exists (--create-only)", l->f[F_NAME]);
		else if (pi >= 0)
			update_user(c, l, pi);
		else
			add_user(c, l);
	}
	return hs_batch_errors_done(b.errors);
}

/* ---- pass 4: the commit, and its undo ---- */

static int tree_write_shadow(struct ctx *c, struct line *l, int fd, const struct hs_shadow *sh)
{
	char path[HS_PATHBUF_USER];
	int r = hs_userdir_write_shadow(fd, l->uid, c->auth_gid, sh);

	if (r < 0)
		hs_warn("line %lu: cannot write %s: %s", l->lineno,
			hs_userdir_path(path, sizeof(path), l->f[F_NAME], HS_FILE_SHADOW),
			hs_strerror(r));
	return r;
}

/* An existing user's shadow and shell files: the current contents kept
 * in l, then replaced. */
static int tree_update(struct ctx *c, struct line *l)
{
	_cleanup_userdir_release_ struct hs_userdir_held held = { c->treefd, -1 };
	char path[HS_PATHBUF_USER], buf[HS_USERFILE_MAX + 2];
	struct hs_shadow sh = { .hash = l->hash, .lstchg = c->today };
	const char *shell;
	int r;

	if (!l->hash && !l->write_shell)
		return 0;
	held.fd = hs_batch_open_locked(c->treefd, l->f[F_NAME], l->uid, l->lineno);
	if (held.fd < 0)
		return -1;
	if (l->hash) {
		if (hs_batch_keep_shadow(held.fd, l->f[F_NAME], l->uid, l->lineno, &l->old_hash,
					 &l->old_lstchg) < 0 ||
		    tree_write_shadow(c, l, held.fd, &sh) < 0)
			return -1;
		l->shadow_written = true;
	}
	if (l->write_shell) {
		r = hs_userdir_read_shell(held.fd, l->uid, buf, sizeof(buf), &shell);
		if (r == 0 && !(l->old_shell = strdup(shell)))
			r = -ENOMEM;
		r = r ?: hs_userdir_write_shell(held.fd, l->uid, c->auth_gid, l->real_shell);
		if (r < 0) {
			hs_warn("line %lu: cannot update %s: %s", l->lineno,
				hs_userdir_path(path, sizeof(path), l->f[F_NAME], HS_FILE_SHELL),
				hs_strerror(r));
			return -1;
		}
		l->shell_written = true;
	}
	return 0;
}

/* Undo tree_update: put back what it replaced, unless the file changed
 * again since (that newer change wins and is reported). */
static int tree_restore(struct ctx *c, struct line *l)
{
	_cleanup_userdir_release_ struct hs_userdir_held held = { c->treefd, -1 };
	char path[HS_PATHBUF_USER], buf[HS_USERFILE_MAX + 2];
	struct hs_shadow now;
	const char *shell;
	int bad = 0;

	held.fd = hs_batch_open_locked(c->treefd, l->f[F_NAME], l->uid, l->lineno);
	if (held.fd < 0)
		return -1;
	if (l->shadow_written) {
		struct hs_shadow old = { .hash = l->old_hash, .lstchg = l->old_lstchg };
		bool ours = hs_userdir_read_shadow(held.fd, l->uid, buf, sizeof(buf), &now) == 0 &&
			    hs_hash_consttime_streq(now.hash, l->hash);

		hs_wipe(buf, sizeof(buf));
		if (!ours || tree_write_shadow(c, l, held.fd, &old) < 0) {
			hs_warn("line %lu: %s not restored", l->lineno,
				hs_userdir_path(path, sizeof(path), l->f[F_NAME], HS_FILE_SHADOW));
			bad = -1;
		}
	}
	if (l->shell_written) {
		bool ours = hs_userdir_read_shell(held.fd, l->uid, buf, sizeof(buf), &shell) == 0 &&
			    strcmp(shell, l->real_shell) == 0;

		if (!ours || hs_userdir_write_shell(held.fd, l->uid, c->auth_gid, l->old_shell) < 0) {
			hs_warn("line %lu: %s not restored", l->lineno,
				hs_userdir_path(path, sizeof(path), l->f[F_NAME], HS_FILE_SHELL));
			bad = -1;
		}
	}
	return bad;
}

/* A new user's directory, complete, with a locked hash (see the top),
 * under a reserved name. */
static int tree_create(struct ctx *c, struct line *l)
{
	struct hs_shadow locked = { .hash = "!", .lstchg = l->lstchg };
	struct work_names *names = &c->names[l - b.v];
	struct hs_err err = HS_ERR_INIT;
	int r = hs_txn_work_tree_new(c->treefd, l->f[F_NAME], l->uid, c->auth_gid, &locked,
				     &l->aging, l->real_shell, &c->work[c->n_work], names->tree_path,
				     names->tree_tmp, &err);

	hs_report(&err);
	if (r < 0)
		return -1;
	l->tree_work = &c->work[c->n_work++];
	return 0;
}

/* The real hash of a new user, over the locked one. */
static int tree_set_hash(struct ctx *c, struct line *l)
{
	_cleanup_userdir_release_ struct hs_userdir_held held = { c->treefd, -1 };
	struct hs_shadow sh = { .hash = l->hash, .lstchg = l->lstchg };

	if (!l->hash || l->tree_work->result < 0)
		return 0;
	held.fd = hs_batch_open_locked(c->treefd, l->f[F_NAME], l->uid, l->lineno);
	if (held.fd < 0 || tree_write_shadow(c, l, held.fd, &sh) < 0) {
		hs_warn("line %lu: the password of '%s' stays locked", l->lineno, l->f[F_NAME]);
		return -1;
	}
	return 0;
}

/* A home that nothing has the name of yet (anything there, a symlink
 * included, is left alone and not followed; a home of an earlier line is
 * made once): reserved beside it, for the prepared journal to name. */
static int home_reserve(struct ctx *c, struct line *l, mode_t mode)
{
	struct hs_homedir_build hb = { .parentfd = -1 };
	char *tmp = c->names[l - b.v].home_tmp;
	struct hs_err err = HS_ERR_INIT;
	struct stat st;
	int r;

	if (!l->f[F_DIR][0] || lstat(l->f[F_DIR], &st) == 0 ||
	    hs_batch_seen_add(&homes_seen, l->f[F_DIR], l->lineno))
		return 0;
	r = hs_homedir_reserve(l->f[F_DIR], &hb, &err);
	hs_close(hb.parentfd);
	if (r < 0) {
		hs_warn("line %lu: %s", l->lineno, err.msg);
		return -1;
	}
	if (r == HS_HOME_EXISTED)
		return 0;
	memcpy(tmp, hb.tmp, sizeof(hb.tmp));
	c->work[c->n_work++] = (struct hs_txn_work){
		.kind = HS_TXN_HOME_NEW, .path = l->f[F_DIR], .tmp = tmp, .uid = l->uid,
		.gid = l->gid, .mode = mode, .parent = { hb.parent.st_dev, hb.parent.st_ino },
	};
	return 0;
}

/* Build a reserved home (root's 0700, empty: newusers copies no
 * skeleton) in the parent the journal names, opened again. */
static int home_build(struct hs_txn_work *w)
{
	struct hs_homedir_build hb = { .parentfd = -1 };
	struct hs_err err = HS_ERR_INIT;
	const char *last;
	int r;

	hb.parentfd = hs_homedir_open_parent(w->path, &last);
	r = hb.parentfd < 0 ? hb.parentfd : fstat(hb.parentfd, &hb.parent) < 0 ? -errno : 0;
	if (r == 0 && (hb.parent.st_dev != w->parent.dev || hb.parent.st_ino != w->parent.ino))
		r = -ESTALE;
	if (r < 0) {
		hs_err_set(&err, r, "cannot create directory %s: %s", w->path, hs_strerror(r));
	} else {
		snprintf(hb.tmp, sizeof(hb.tmp), "%s", w->tmp);
		r = hs_homedir_build(&hb, w->path, NULL, w->uid, w->gid, &err);
	}
	hs_close(hb.parentfd);
	hs_report(&err);
	if (r < 0)
		return -1;
	w->self = (struct hs_txn_id){ hb.built.st_dev, hb.built.st_ino };
	return 0;
}

/* Before the commit point: the new users' directories, then the homes
 * (reserved, named by a prepared journal, built), then the existing
 * users' files. */
static int build_all(struct ctx *c)
{
	mode_t mode = hs_homedir_mode(c->defs);
	char err[512];
	size_t i, first_home;

	for (i = 0; !c->classic && i < b.n; i++)
		if (!b.v[i].exists && tree_create(c, &b.v[i]) < 0)
			return -1;
	first_home = c->n_work;
	for (i = 0; i < b.n; i++)
		if (home_reserve(c, &b.v[i], mode) < 0)
			return -1;
	if (c->n_work > first_home) {
		if (hs_globalfile_prepare(c->work, c->n_work, err, sizeof(err)) < 0) {
			hs_warn("%s", err);
			return -1;
		}
		c->prepared = true;
	}
	for (i = first_home; i < c->n_work; i++)
		if (home_build(&c->work[i]) < 0)
			return -1;
	for (i = 0; !c->classic && i < b.n; i++)
		if (b.v[i].exists && tree_update(c, &b.v[i]) < 0)
			return -1;
	return 0;
}

/* Before the commit point: take back every step done so far. */
static void undo(struct ctx *c)
{
	unsigned long left = 0;

	for (size_t i = b.n; i-- > 0;) {
		struct line *l = &b.v[i];

		if ((l->shadow_written || l->shell_written) && tree_restore(c, l) < 0)
			left++;
		if (l->tree_work)
			(void)hs_userdir_drop_reserved(c->treefd, l->tree_work->tmp);
	}
	/* the reserved homes go with the prepared journal */
	if (c->prepared)
		(void)hs_globalfile_recover();
	if (left) {
		syslog(LOG_ERR, "batch failed; %lu changes could not be undone", left);
		hs_warn("error detected; %lu of the changes made could not be undone (named "
			"above)", left);
	} else {
		syslog(LOG_ERR, "batch failed; every change undone");
		hs_warn("error detected, changes undone: nothing was changed");
	}
}

/* Signals blocked, under the locks: build, commit the global files with
 * the work, then the new users' real hashes.  After the commit point
 * nothing is undone: a piece of work or a hash that fails is said (an
 * account whose hash stays locked fails closed) and the exit is 1. */
static int commit(struct ctx *c)
{
	sigset_t saved;
	int r = 0;

	c->work = calloc(2 * b.n, sizeof(*c->work));
	c->names = calloc(b.n, sizeof(*c->names));
	if (!c->work || !c->names)
		hs_die(E_FAILURE, "out of memory");
	hs_privs_block_signals(&saved);
	if (build_all(c) < 0 || usertool_commit(&c->s, c->work, c->n_work) < 0) {
		undo(c);
		hs_privs_restore_signals(&saved);
		return -1;
	}
	hs_globalfile_set_work(NULL, 0);
	for (size_t i = 0; i < c->n_work; i++) {
		if (c->work[i].result < 0) {
			hs_warn("cannot create %s: %s", c->work[i].path,
				hs_strerror(c->work[i].result));
			r = -1;
		}
	}
	for (size_t i = 0; !c->classic && i < b.n; i++)
		if (!b.v[i].exists && tree_set_hash(c, &b.v[i]) < 0)
			r = -1;
	hs_privs_restore_signals(&saved);
	if (r < 0)
		syslog(LOG_ERR, "batch written, but not every part of it (said above)");
	return r;
}

/* Once the batch is read, the kernel holds newusers to its job (Landlock):
 * write /etc (the global files, their locks, the tree, the journal); for
 * each home not there yet, the nearest directory of its path that exists
 * (where it and its missing parents are made); read the parent of every
 * other home and the mail spool (the uid reuse rule lists them). */
static void confine(const struct hs_config *defs)
{
	struct hs_confine_rule *rules = calloc(b.n + 3, sizeof(*rules));
	char parent[HS_PATHBUF_MAX];
	size_t n = 3;

	if (!rules)
		hs_die(E_FAILURE, "out of memory");
	rules[0] = (struct hs_confine_rule){ HS_ETC_DIR, HS_CONFINE_WRITE };
	rules[1] = (struct hs_confine_rule){ usertool_mail_dir(defs), HS_CONFINE_READ };
	rules[2] = (struct hs_confine_rule){ "/", HS_CONFINE_LIST };
	for (size_t i = 0; i < b.n; i++) {
		struct hs_confine_rule home[HS_HOME_CONFINE_RULES];
		unsigned access;

		hs_homedir_confine_rules(b.v[i].f[F_DIR], parent, sizeof(parent), home);
		if (!home[1].path)
			continue;
		access = home[1].access == HS_CONFINE_WRITE ? HS_CONFINE_WRITE : HS_CONFINE_READ;
		if (rules[n - 1].access == access && strcmp(rules[n - 1].path, parent) == 0)
			continue;
		rules[n] = (struct hs_confine_rule){ strdup(parent), access };
		if (!rules[n++].path)
			hs_die(E_FAILURE, "out of memory");
	}
	hs_confine_or_die(rules, n, E_FAILURE);
	for (size_t i = 3; i < n; i++)
		free((char *)rules[i].path);
	free(rules);
}

static void log_success(void)
{
	for (size_t i = 0; i < b.n; i++) {
		const struct line *l = &b.v[i];

		if (l->exists) {
			syslog(LOG_INFO, "account of '%s' updated by newusers", l->f[F_NAME]);
			continue;
		}
		if (l->new_group)
			syslog(LOG_INFO, "new group: name=%s, GID=%lu", l->new_group,
			       (unsigned long)l->gid);
		syslog(LOG_INFO, "new user: name=%s, UID=%lu, GID=%lu, home=%s, shell=%s, "
		       "from=newusers", l->f[F_NAME], (unsigned long)l->uid, (unsigned long)l->gid,
		       l->f[F_DIR], l->f[F_SHELL]);
	}
}

static void free_batch(void)
{
	for (size_t i = 0; i < b.n; i++) {
		struct line *l = &b.v[i];

		if (l->hash_owned)
			hs_free_secret(l->hash);
		hs_free_secret(l->old_hash);
		free(l->old_shell);
		hs_secret_buf_freep(&(struct hs_secret_buf){ l->text, l->size });
	}
	free(b.v);
	hs_batch_seen_free(&seen);
	hs_batch_seen_free(&homes_seen);
}

/* Everything the passes need from login.defs and the tree, before any
 * input is read. */
static void setup(struct ctx *c)
{
	int r;

	c->defs = usertool_load_logindefs();
	choose_policy(c->defs);
	hs_records_aging_init_unset(&c->aging);
	if (!o.system) {
		c->aging.min = hs_config_get_long(c->defs, "PASS_MIN_DAYS", -1, HS_DAYS_MAX, -1);
		c->aging.max = hs_config_get_long(c->defs, "PASS_MAX_DAYS", -1, HS_DAYS_MAX, -1);
		c->aging.warn = hs_config_get_long(c->defs, "PASS_WARN_AGE", -1, HS_DAYS_MAX, -1);
	}
	c->today = hs_today();

	/* a tree system is one with /etc/hardened-shadow, as for useradd */
	c->treefd = hs_userdir_open_tree();
	c->classic = c->treefd == -ENOENT;
	if (c->treefd < 0 && !c->classic)
		hs_die(E_FAILURE, "cannot open %s: %s", HS_TREE_DIR, hs_strerror(c->treefd));
	if (!c->classic) {
		r = hs_userdir_layout_gids(NULL, &c->auth_gid);
		if (r < 0)
			hs_die(E_FAILURE, "cannot find group %s: %s", HS_GROUP_AUTH, hs_strerror(r));
		if (hs_shells_load(&c->shells, HS_ETC_SHELLS) < 0)
			hs_die(E_FAILURE, "%s", c->shells.error);
	}
}

/* The four passes (see the top): the exit status. */
static int run(struct ctx *c, FILE *input)
{
	/* /etc/shadow only on a classic system, sub[ug]id only for normal accounts */
	unsigned files = HS_AS_BIT(HS_AS_PASSWD) | HS_AS_BIT(HS_AS_GROUP) |
			 HS_AS_BIT(HS_AS_GSHADOW) | (c->classic ? HS_AS_BIT(HS_AS_SHADOW) : 0) |
			 (o.system ? 0 : HS_AS_SUBID_FILES);
	size_t failed = 0, n_to_hash = 0;
	int r;

	/* 1. every line alone */
	hs_batch_read_lines(input, o.file ? o.file : "standard input", LINE_MAX_BYTES, &b.errors,
			    add_line, NULL);
	if (hs_batch_errors_done(b.errors) < 0)
		return E_FAILURE;
	if (b.n == 0)
		return E_SUCCESS;       /* nothing to do: no lock taken */
	confine(c->defs);
	/* 2. the passwords: the progress line counts those hashed */
	for (size_t i = 0; i < b.n && !o.none; i++)
		n_to_hash += b.v[i].f[F_PASSWD][0] != '\0';
	hs_cli_progress_start(n_to_hash, "passwords");
	r = hs_parallel_for(b.n, hash_one, NULL, &failed);
	hs_cli_progress_end();
	if (r < 0) {
		hs_warn("line %lu: cannot hash the password of user '%s': %s", b.v[failed].lineno,
			b.v[failed].f[F_NAME], hs_strerror(r));
		return E_FAILURE;
	}
	/* 3. every line against the files, under the locks */
	if (hs_accountset_open(&c->s, files, 0) < 0) {
		hs_warn("%s", c->s.error);
		return E_FAILURE;
	}
	if (resolve_all(c) < 0)
		return E_FAILURE;
	/* 4. the commit */
	if (commit(c) < 0)
		return E_FAILURE;
	log_success();
	return E_SUCCESS;
}

int main(int argc, char **argv)
{
	struct ctx c = { .s = HS_ACCOUNTSET_INIT, .treefd = -1, .uids = HS_IDSET_INIT,
			 .gids = HS_IDSET_INIT, .owners = HS_IDSET_INIT };
	FILE *input = stdin;
	int status;

	/* it may have to finish an interrupted command's home and tree work */
	usertool_init(argc, argv, "newusers");
	parse_options(argc, argv);
	if (!hs_privs_caller_is_root())
		hs_die(E_FAILURE, "Permission denied.");
	openlog("newusers", LOG_PID, LOG_AUTHPRIV);
	setup(&c);
	if (o.file) {
		int fd = open(o.file, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		input = fd < 0 ? NULL : fdopen(fd, "r");
		if (!input)
			hs_die(E_FAILURE, "cannot open %s: %s", o.file, strerror(errno));
	}
	status = run(&c, input);
	hs_accountset_close(&c.s);
	hs_idset_free(&c.uids);
	hs_idset_free(&c.gids);
	hs_idset_free(&c.owners);
	hs_ids_subid_batch_free(&c.subids[0]);
	hs_ids_subid_batch_free(&c.subids[1]);
	hs_shells_free(&c.shells);
	hs_config_free(c.defs);
	hs_close(c.treefd);
	free(c.work);
	free(c.names);
	free_batch();
	closelog();
	return status;
}
