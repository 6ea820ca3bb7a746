/* Subordinate id ranges for many new users at once (newusers).  The
 * ranges of /etc/subuid or /etc/subgid are sorted once and each pick goes
 * on from where the previous one stopped, instead of hs_ids_subid_pick's
 * sort of the whole file per user (1,000 new users next to 10,000 ranges:
 * 1,000 sorts of 11,000 spans).  The picks are exactly the ones
 * hs_ids_subid_pick would make one after the other, each range appended to
 * the file before the next pick: the lowest start >= min where count ids
 * overlap nothing, up to max. */
#ifndef HS_SUBIDBATCH_H
#define HS_SUBIDBATCH_H

#include <stddef.h>

#include "accountdb.h"
#include "ids.h"

struct hs_subid_span {
	unsigned long long start, end;          /* [start, end) */
};

struct hs_subid_batch {
	struct hs_subid_span *spans;            /* the file's ranges, by start */
	size_t n, next;                         /* next: where the scan goes on */
	unsigned long long cand;                /* the lowest start still possible */
	struct hs_ids_subid_conf conf;
};

/* Take the ranges of db (an HS_DB_SUBID db) as they are now.  The caller
 * then changes db only by appending the ranges picked here.  0 or -ENOMEM. */
int hs_subid_batch_init(struct hs_subid_batch *b, struct hs_accountdb *db,
                        const struct hs_ids_subid_conf *c);
/* The next range's start: 0, -EUSERS when there is no room, -EINVAL when
 * the count is 0. */
int hs_subid_batch_next(struct hs_subid_batch *b, unsigned long *start);
void hs_subid_batch_free(struct hs_subid_batch *b);

#endif
