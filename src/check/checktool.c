/* pwck's and grpck's common main; see checktool.h. */
#include "checktool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "cli.h"
#include "confine.h"
#include "txn.h"
#include "layout.h"
#include "privs.h"
#include "timeouts.h"
#include "util.h"

/* -r: how often the files are read again when a writer changed them
 * while they were read (then the last reading is checked, unconfirmed) */
#define CONFIRM_READS 10

/* t->usage exits; a noreturn function pointer type is spelled differently
 * by gcc, clang and cppcheck, so this wrapper says it once. */
static _Noreturn void show_usage(const struct hs_check_tool *t, int status)
{
	t->usage(status);
	exit(status);
}

static void parse_options(const struct hs_check_tool *t, int argc, char **argv,
			  struct hs_check_opts *o)
{
	enum { OPT_VERSION = 256 };
	static const struct option pw_longopts[] = {
		{ "badname",   no_argument,       NULL, 'b' },
		{ "help",      no_argument,       NULL, 'h' },
		{ "quiet",     no_argument,       NULL, 'q' },
		{ "read-only", no_argument,       NULL, 'r' },
		{ "root",      required_argument, NULL, 'R' },
		{ "sort",      no_argument,       NULL, 's' },
		{ "version",   no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option gr_longopts[] = {
		{ "help",             no_argument,       NULL, 'h' },
		{ "quiet",            no_argument,       NULL, 'q' },
		{ "read-only",        no_argument,       NULL, 'r' },
		{ "root",             required_argument, NULL, 'R' },
		{ "sort",             no_argument,       NULL, 's' },
		{ "silence-warnings", no_argument,       NULL, 'S' },
		{ "version",          no_argument,       NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, t->group ? "hqrR:sS" : "bhqrR:s",
				t->group ? gr_longopts : pw_longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			hs_die(HS_CHECK_USAGE, "option --badname is not supported: names must be "
			       "valid (they become paths in %s)", HS_TREE_DIR);
		case 'h': show_usage(t, HS_CHECK_OKAY);
		/* Debian's grpck takes -q without a word in its help; it
		 * means what pwck -q means: errors only */
		case 'q':
		case 'S': o->quiet = true; break;
		case 'r': o->read_only = true; break;
		case 'R':
			hs_die(HS_CHECK_USAGE, "option --root is not supported; run %s inside that "
			       "root instead (chroot %s %s ...)", t->name, optarg, t->name);
		case 's': o->sort = true; break;
		case OPT_VERSION: hs_print_version();
		default: show_usage(t, HS_CHECK_USAGE);
		}
	}
	if (o->sort && o->read_only)
		hs_die(HS_CHECK_USAGE, "-s and -r are incompatible");
	if (argc - optind > 2)
		show_usage(t, HS_CHECK_USAGE);
	if (optind < argc)
		o->file = argv[optind];
	if (optind + 1 < argc)
		o->shadow = argv[optind + 1];
}

/* The directory of a file argument, where its lock and temporaries go;
 * NULL for none. */
static const char *dir_of(const char *file, char *buf, size_t size)
{
	char *slash;

	if (!file || (size_t)snprintf(buf, size, "%s", file) >= size)
		return NULL;
	slash = strrchr(buf, '/');
	if (!slash)
		return ".";
	slash[slash == buf ? 1 : 0] = '\0';
	return buf;
}

/* From here the kernel holds the tool to its job (Landlock): /etc and the
 * directories of its file arguments, written unless -r. */
static void confine(const struct hs_check_opts *o)
{
	char file_dir[HS_PATHBUF_MAX], shadow_dir[HS_PATHBUF_MAX];
	unsigned access = o->read_only ? HS_CONFINE_READ : HS_CONFINE_WRITE;
	const struct hs_confine_rule rules[] = {
		{ HS_ETC_DIR, access },
		{ dir_of(o->file, file_dir, sizeof file_dir), access },
		{ dir_of(o->shadow, shadow_dir, sizeof shadow_dir), access },
	};

	hs_confine_or_die(rules, sizeof rules / sizeof rules[0], HS_CHECK_CANTOPEN);
}

/* The two files and the companion (not for -s).  -r on the system's
 * files reads them again until no writer changed any of them meanwhile
 * (src/check/integrity.h, hs_integrity_view): files read while a writer
 * replaced them one by one are half of its change.  Returns 0, or
 * -HS_E_LOCKED / another negative error after saying why. */
static int open_files(const struct hs_check_tool *t, const struct hs_check_opts *o,
		      struct hs_integrity_files *f, struct hs_accountdb *companion,
		      struct hs_integrity_view *v)
{
	for (int tries = 0;; tries++) {
		int r;

		hs_integrity_ids_read(&v->ids);
		r = hs_integrity_files_open(f, t->group, o->file, o->file ? o->shadow : NULL,
					    !o->read_only);
		if (r < 0) {
			hs_warn("%s", f->error);
			if (f->lock_failed)
				syslog(LOG_WARNING, "%s", f->error);
			return f->lock_failed ? -HS_E_LOCKED : -EIO;
		}
		if (o->sort)
			return 0;
		/* without -r: read, not locked: a name that appears meanwhile
		 * is only a stale report */
		r = hs_accountdb_load(companion, t->companion_kind, t->companion,
				      HS_DB_LENIENT | HS_DB_MISSING_OK);
		if (r < 0) {
			hs_warn("%s", companion->error);
			hs_accountdb_free(companion);
			hs_integrity_files_close(f);
			return r;
		}
		v->pw = t->group ? companion : f->db;
		v->sp = t->group ? NULL : f->shadow;
		v->gr = t->group ? f->db : companion;
		if (!o->read_only || o->file || hs_integrity_view_confirm(v) != HS_INTEGRITY_CHANGED)
			return 0;
		if (tries == CONFIRM_READS) {
			v->busy = true;
			v->changing = true;
			return 0;
		}
		hs_accountdb_free(companion);
		hs_integrity_files_close(f);
	}
}

/* What the confirmation of -r's reports (the view) could not settle. */
static void report_view(const struct hs_check_tool *t, const struct hs_integrity_view *view,
			struct hs_integrity *a)
{
	if (view->busy)
		hs_warn("the writers' lock %s stayed busy, or the account files kept changing: "
			"what a writer was changing may be misreported; run %s -r again",
			HS_ETC_PWD_LOCK, t->name);
	/* each had a problem at every look: a bad entry left in place,
	 * only not confirmed, so the status says it (a user changing their
	 * own entry without end would otherwise make -r exit 0) */
	if (view->unconfirmed) {
		hs_warn("%lu %s changed at every look and %s not reported; run %s -r again",
			view->unconfirmed, view->unconfirmed == 1 ? "entry" : "entries",
			view->unconfirmed == 1 ? "is" : "are", t->name);
		a->problems += view->unconfirmed;
	}
}

/* -r on the system's files: a transaction left pending, said as a
 * problem. */
static void report_pending_journal(const struct hs_check_tool *t, struct hs_integrity *a)
{
	/* without the writers' locks (-r) nothing finishes an interrupted
	 * transaction of the global files (lib/etc/txn.h): what was read may
	 * be half of it.  A running writer's journal is its work in progress;
	 * one there with no writer was left by a killed one. */
	_cleanup_close_ int etcfd = open(HS_ETC_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (etcfd < 0 || !hs_integrity_left_by_no_writer(etcfd, HS_TXN_JOURNAL))
		return;
	/* work alone: the files are whole, and the tools that retry it say
	 * why it cannot be done */
	if (hs_txn_files_pending(etcfd))
		printf("/etc/%s: an interrupted update of the account files is pending; run %s "
		       "without -r (or any tool that changes accounts) to finish it\n",
		       HS_TXN_JOURNAL, t->name);
	else
		printf("/etc/%s: work on homes or the tree that an interrupted command left is "
		       "pending; the next root tool that changes accounts retries it and says "
		       "what stops it\n", HS_TXN_JOURNAL);
	a->problems++;
}

/* The summary line and the exit status, from what the run found and the
 * status of its commit. */
static int final_status(const struct hs_integrity *a, const struct hs_check_opts *o,
			int status)
{
	/* as shadow-utils: a failed write ends with its message, not with a
	 * summary that would call the files updated; notes alone have none
	 * unless a repair was made */
	if ((a->problems || a->db_changed || a->tree_changed) && status == HS_CHECK_OKAY)
		printf("%s: %s\n", hs_cli_prog(),
		       a->db_changed || a->tree_changed ? "the files have been updated" : "no changes");
	/* the gravest first: a repair answered yes and not made (never
	 * with -r, which makes none), then what could not be read (the
	 * check is incomplete: whatever else it found is in the report),
	 * then bad entries */
	if (status == HS_CHECK_OKAY && a->failures)
		status = HS_CHECK_CANTUPDATE;
	if (status == HS_CHECK_OKAY && a->unreadable)
		status = HS_CHECK_CANTOPEN;
	if (status == HS_CHECK_OKAY && a->problems)
		status = HS_CHECK_BADENTRY;
	/* a report that could not be written: -r updates nothing (its
	 * report is all it does), so not "cannot update" there.  stdout is
	 * line buffered: a failed line left its error flag, not a failed
	 * flush. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		hs_warn("cannot write the report to standard output");
		if (status == HS_CHECK_OKAY)
			status = o->read_only ? HS_CHECK_CANTOPEN : HS_CHECK_CANTUPDATE;
	}
	return status;
}

int hs_check_main(const struct hs_check_tool *t, int argc, char **argv)
{
	struct hs_integrity a = { .io = hs_integrity_stdio };
	struct hs_accountdb companion = HS_ACCOUNTDB_INIT;
	struct hs_integrity_view view;
	struct hs_check_opts o = { 0 };
	struct hs_integrity_files f;
	sigset_t saved;
	int r, status;

	hs_cli_set_prog(hs_privs_init(argc, argv, t->name));
	parse_options(t, argc, argv, &o);
	if (!hs_privs_caller_is_root())
		hs_die(HS_CHECK_CANTOPEN, "Permission denied.");
	/* A run that locks may have to finish an interrupted command's home
	 * and tree work (and does so at once, before it confines itself);
	 * -r takes no lock and only reports a pending journal. */
	if (!o.read_only)
		hs_txn_work_enable();
	openlog(t->name, LOG_PID, LOG_AUTHPRIV);
	/* prompts and report lines in order, also into a pipe */
	setvbuf(stdout, NULL, _IOLBF, 0);
	confine(&o);

	hs_integrity_view_init(&view);
	r = open_files(t, &o, &f, &companion, &view);
	if (r < 0)
		return r == -HS_E_LOCKED ? HS_CHECK_CANTLOCK : HS_CHECK_CANTOPEN;
	/* -r on the system's files: confirmed against running writers */
	if (o.read_only && !o.file)
		a.view = &view;

	if (o.sort) {
		r = hs_integrity_sort(f.db, f.shadow);
		if (r < 0) {
			hs_warn("cannot sort entries in %s", f.db->path);
			hs_integrity_files_close(&f);
			return HS_CHECK_CANTSORT;
		}
	} else {
		a.flags = (o.read_only ? HS_INTEGRITY_READ_ONLY : 0) |
			  (o.quiet ? HS_INTEGRITY_NO_WARNINGS : 0) | HS_INTEGRITY_SYSLOG;
		r = t->run(&a, &f, &companion, &o);
	}
	hs_accountdb_free(&companion);
	hs_integrity_view_free(&view);
	if (r < 0) {
		hs_warn("%s", hs_strerror(r));
		hs_integrity_files_close(&f);
		/* the repairs made in the loaded files are not written; -r
		 * had none to write, only a check it could not finish */
		return o.read_only ? HS_CHECK_CANTOPEN : HS_CHECK_CANTUPDATE;
	}
	report_view(t, &view, &a);

	if (o.read_only && !o.file)
		report_pending_journal(t, &a);

	status = HS_CHECK_OKAY;
	if (o.sort || a.db_changed) {
		hs_privs_block_signals(&saved);
		r = hs_integrity_files_commit(&f);
		hs_privs_restore_signals(&saved);
		if (r < 0) {
			hs_warn("%s", f.error);
			syslog(LOG_WARNING, "%s", f.error);
			status = HS_CHECK_CANTUPDATE;
		}
	}
	hs_integrity_files_close(&f);

	status = final_status(&a, &o, status);
	closelog();
	return status;
}
