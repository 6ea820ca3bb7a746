/* Shared plumbing of the batch tools that read account lines on standard
 * input (chpasswd and chgpasswd through src/admin/secretbatch, newusers): line
 * reading with hostile-input limits, per-line error reports, the names
 * seen, a user's directory opened and locked, and running the slow
 * per-line work (password hashing) on every CPU. */
#ifndef HS_BATCHIO_H
#define HS_BATCHIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Errors reported before the rest are only counted. */
#define HS_BATCH_ERRORS_SHOWN 100

/* Read one line into line (max + 1 bytes), without its newline.  Returns 1
 * for a line, 0 at the end of input, -E2BIG for a line longer than max
 * bytes (the rest of it is consumed), -EINVAL for a line holding a NUL
 * byte, -EIO for a read error.  A last line without a newline counts. */
int hs_batch_read_line(FILE *in, char *line, size_t max, size_t *len_out);

/* Every line of in (at most max bytes) handed to fn with its number; one
 * too long or holding a NUL byte is "line N: line too long" or "... contains
 * a NUL byte" instead, counted in *errors, and a read error ("cannot read
 * WHAT: ...") is counted and ends the input.  The line and in's stdio
 * buffer are ours, wiped after each line and at the end (passwords). */
void hs_batch_read_lines(FILE *in, const char *what, size_t max, unsigned long *errors,
			 void (*fn)(void *ctx, char *line, unsigned long lineno), void *ctx);

/* The names a batch has seen, for "already appears on line N": copies in
 * a tsearch(3) tree (*set, NULL when empty), so that a large batch is not
 * checked in quadratic time.  find: the line that had name, or 0.  add:
 * the same, or 0 after recording name for lineno. */
unsigned long hs_batch_seen_find(void *const *set, const char *name);
unsigned long hs_batch_seen_add(void **set, const char *name, unsigned long lineno);
void hs_batch_seen_free(void **set);

/* "PROG: line N: MESSAGE" on stderr and one more in *count; only the
 * first HS_BATCH_ERRORS_SHOWN are printed. */
void hs_batch_line_error(unsigned long *count, unsigned long lineno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* After the last line, when count errors were reported: "PROG: N more
 * errors not shown" when some were only counted, then "PROG: error
 * detected, changes ignored", and -1; 0 when there was none. */
int hs_batch_errors_done(unsigned long count);

/* USER's directory, opened again (a batch may name more users than it may
 * hold fds for; the owner must still be uid) and write-locked: an fd, or
 * -1 with "line N: cannot open|lock ..." printed. */
int hs_batch_open_locked(int treefd, const char *user, uid_t uid, unsigned long lineno);
/* Before a batch replaces USER's shadow file (fd: the directory, locked),
 * what it holds, for the undo: *old_hash (malloc'd) and *old_lstchg.  One
 * that cannot be read (a planted symlink or FIFO, a broken line) never let
 * anyone in: it is logged and replaced, and an undo writes that meaning
 * back as a locked "!".  0, or -1 reported. */
int hs_batch_keep_shadow(int fd, const char *user, uid_t uid, unsigned long lineno,
			 char **old_hash, long *old_lstchg);

/* Run fn(ctx, i) for every i in [0, n) on up to one thread per online CPU
 * (at most 16; inline when that is one).  fn must be safe to run
 * concurrently for different i.  After the first failure no new i is
 * started.  Returns 0, or the failure with the lowest index started, whose
 * index goes to *failed. */
int hs_parallel_for(size_t n, int (*fn)(void *ctx, size_t i), void *ctx, size_t *failed);

#endif
