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
 * through hs_warn; the next-steps text goes to stdout.  Runs for root
 * only (hs_convert_main checks). */
#ifndef HS_CONVERT_H
#define HS_CONVERT_H

#include <stdbool.h>

/* The conversion markers and temporary prefix: layout.h. */

/* The whole of pwconv (to_tree) and pwunconv (!to_tree): options, the
 * root check, the conversion.  Returns the exit status: 0 success, 1
 * failure (nothing changed); bad usage exits 2. */
int hs_convert_main(int argc, char **argv, bool to_tree);

#endif
