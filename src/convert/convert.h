/* Conversion between the classic files (/etc/passwd + /etc/shadow, or an
 * Openwall /etc/tcb tree) and the hardened tree.  pwconv and pwunconv are
 * thin mains over these.
 *
 * Both directions take the global locks, validate everything before
 * changing anything, and order their steps so that a crash at any instant
 * leaves a system that works as before.  The tree is built under
 * /etc/.hardened-shadow.XXXXXX (a dot name no reader looks at) and renamed
 * into place only when complete.  While a conversion is between its first
 * and its last change, the tree holds a marker file (HS_CONVERT_MARK_*)
 * naming the direction, so the next run can tell an interrupted
 * conversion (which it finishes or rolls back) from a state nobody can
 * explain (which it refuses).
 *
 * Messages ("pwconv: /etc/shadow:12: invalid entry: ...") go to stderr
 * through hs_warn; the next-steps text goes to stdout.  Must run as root
 * (the caller checks). */
#ifndef HS_CONVERT_H
#define HS_CONVERT_H

#include "layout.h"

#include <stdbool.h>

/* The conversion markers and temporary prefix: layout.h. */

struct hs_convert_opts {
	bool from_tcb;   /* pwconv: read /etc/tcb/USER/shadow, not /etc/shadow */
};

/* Outcome, for the exit status and the final message. */
enum hs_convert_result {
	HS_CONVERT_DONE = 0,       /* converted */
	HS_CONVERT_NOTHING = 1,    /* already in the requested state */
	HS_CONVERT_ROLLED_BACK = 2 /* pwunconv undid an interrupted pwconv */
};

/* classic -> tree.  Returns an hs_convert_result (>= 0) or a negative
 * error after printing a message; on error nothing is changed, except that
 * the two groups may have been created. */
int hs_convert_to_tree(const struct hs_convert_opts *opts);

/* tree -> classic.  Same conventions. */
int hs_convert_to_classic(const struct hs_convert_opts *opts);

/* The whole of pwconv (to_tree) and pwunconv (!to_tree): options, the
 * root check, the conversion.  Returns the exit status: 0 success, 1
 * failure (nothing changed); bad usage exits 2. */
int hs_convert_main(int argc, char **argv, bool to_tree);

#endif
