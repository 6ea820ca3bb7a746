/* The one main of pwck and grpck: options, the root check, opening (and
 * without -r locking) the files, sorting or auditing, writing the repairs
 * and the report.  The programs give their usage text and their checks. */
#ifndef HS_CHECKTOOL_H
#define HS_CHECKTOOL_H

#include <stdbool.h>

#include "integrity.h"

/* shadow-utils' pwck(8) and grpck(8) exit codes */
#define HS_CHECK_OKAY       0
#define HS_CHECK_USAGE      1   /* invalid command syntax */
#define HS_CHECK_BADENTRY   2   /* one or more bad entries */
#define HS_CHECK_CANTOPEN   3   /* cannot open the files */
#define HS_CHECK_CANTLOCK   4   /* cannot lock the files */
#define HS_CHECK_CANTUPDATE 5   /* cannot update the files */
#define HS_CHECK_CANTSORT   6   /* cannot sort the files */

struct hs_check_opts {
	bool quiet, read_only, sort;
	const char *file, *shadow;      /* the file arguments, or NULL */
};

struct hs_check_tool {
	const char *name;               /* "pwck" or "grpck" */
	bool group;                     /* group files, grpck's options */
	/* prints the usage to stdout (status 0) or stderr and exits
	 * (called through show_usage, which tells the compiler) */
	void (*usage)(int status);
	/* The other account file the checks look names or ids up in
	 * (grpck: members in /etc/passwd; pwck: primary groups in
	 * /etc/group, through getgrgid).  It is loaded before the checks,
	 * leniently; a missing one is empty, but one that cannot be read
	 * (a FIFO, a directory, too large) stops the run with exit 3:
	 * glibc's files source would block on a FIFO for ever, and an
	 * unreadable file would make every name in it look missing. */
	const char *companion;
	enum hs_db_kind companion_kind;
	/* The checks (a->flags set), when not sorting, with the companion
	 * loaded: 0, or negative to stop with exit 5, 3 with -r (the error
	 * is reported by the caller). */
	int (*run)(struct hs_integrity *a, struct hs_integrity_files *f,
		   struct hs_accountdb *companion, const struct hs_check_opts *o);
};

/* Returns the exit status; bad usage and a caller who is not root exit. */
int hs_check_main(const struct hs_check_tool *t, int argc, char **argv);

#endif
