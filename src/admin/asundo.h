/* Undo for one lib/accountset transaction: every file the set is about to
 * write is read back under the locks first, so that a failure later in the
 * same transaction -- a global file that cannot be written after others
 * were, or a tree step after the commit -- can put all of them back as
 * they were.  For the batch tools (newusers), whose promise is all or
 * nothing.
 *
 *     struct hs_asundo u = HS_ASUNDO_INIT;
 *     hs_asundo_save(&u, &s);              (after the edits, before the commit)
 *     if (hs_accountset_commit(&s) < 0 || later_step() < 0)
 *             hs_asundo_restore(&u, &s);
 *     hs_asundo_free(&u);
 *
 * The restore is one transaction through the one writer of the global
 * files (hs_globalfile_commit): a crash during it leaves every file as the
 * commit made it or every file as it was, never a mix.  FILE- then holds
 * what the commit wrote. */
#ifndef HS_ASUNDO_H
#define HS_ASUNDO_H

#include <stdbool.h>
#include <stddef.h>

#include "accountset.h"

struct hs_asundo {
	char *data[HS_AS_COUNT];
	size_t len[HS_AS_COUNT];
	bool saved[HS_AS_COUNT];        /* data holds the file as it was */
	bool existed[HS_AS_COUNT];      /* the file was there */
};
#define HS_ASUNDO_INIT { .len = { 0 } }

/* Read every file of s that has changes (dirty) as it is on disk now.
 * Call under the set's locks, before hs_accountset_commit.  0, or a
 * negative error with s->error set. */
int hs_asundo_save(struct hs_asundo *u, struct hs_accountset *s);

/* Put back every saved file whose contents differ from the saved bytes,
 * as one transaction (a file that did not exist is removed again).
 * Returns 0 or the first error, with s->error naming the file. */
int hs_asundo_restore(struct hs_asundo *u, struct hs_accountset *s);

/* Wipe (the files may hold hashes) and free.  Safe to call twice. */
void hs_asundo_free(struct hs_asundo *u);

#endif
