/* Allocation of new user and group ids from login.defs' ranges, and of
 * subordinate id ranges (/etc/subuid, /etc/subgid), as shadow-utils'
 * useradd, groupadd and newusers do it.  Shared by useradd and newusers. */
#ifndef HS_IDS_H
#define HS_IDS_H

#include <stdbool.h>
#include <stddef.h>

#include "accountdb.h"
#include "config.h"

/* An inclusive id range. */
struct hs_id_range {
	unsigned long min, max;
};

/* The range a new id comes from, from login.defs (defs may be NULL: the
 * shadow-utils defaults).  user: UID_MIN/UID_MAX/SYS_UID_MIN/SYS_UID_MAX,
 * else the GID_* keys.  Defaults: normal 1000..60000, system 101..MIN-1.
 * Fails with -HS_E_RANGE when the configured range is empty. */
int hs_ids_range(const struct hs_config *defs, bool user, bool system, struct hs_id_range *out);

/* A sorted set of ids in use. */
struct hs_idset {
	unsigned long *ids;
	size_t n, cap;
};
#define HS_IDSET_INIT { .ids = NULL }

/* Add every id of a passwd (uids) or group (gids) db; other kinds add
 * nothing.  Keeps the set sorted and unique. */
int hs_idset_add_db(struct hs_idset *set, struct hs_accountdb *db);
int hs_idset_add(struct hs_idset *set, unsigned long id);
bool hs_idset_contains(const struct hs_idset *set, unsigned long id);
void hs_idset_free(struct hs_idset *set);

/* The uid reuse rule (docs/decisions.md) of useradd and newusers: a uid
 * picked without -u must not still own a deleted user's files, or the new
 * account inherits them.  hs_ids_add_leftover_owners adds to owners the
 * owners of the entries of home's parent directory (not "/") and of
 * maildir (either NULL: skipped); -ENOMEM only.  hs_ids_pick_unowned: when
 * owners holds *id (a pick from used), those uids join used and the pick
 * is made again. */
int hs_ids_add_leftover_owners(struct hs_idset *owners, const char *home, const char *maildir);
int hs_ids_pick_unowned(struct hs_idset *used, const struct hs_idset *owners,
                        const struct hs_id_range *range, bool system, unsigned long *id);

/* Pick a free id in r, as shadow-utils does: for a normal account one
 * more than the highest id in use inside the range (or the lowest free
 * id when that is past the top); for a system account the highest free
 * id of the range.  preferred (or HS_IDS_NO_PREFERENCE) is taken first
 * when it is inside the range and free (a private group's gid = uid).
 * -EUSERS when the range is full. */
#define HS_IDS_NO_PREFERENCE ((unsigned long)-1)
int hs_ids_pick(const struct hs_idset *used, const struct hs_id_range *r, bool system,
                unsigned long preferred, unsigned long *out);
/* The same pick from the ids of a passwd or group db: for a normal
 * account one pass over the ids (no set, no sort) unless the top of the
 * range is taken. */
int hs_ids_pick_db(struct hs_accountdb *db, const struct hs_id_range *r, bool system,
                   unsigned long preferred, unsigned long *out);

/* Subordinate ids: SUB_UID_MIN/MAX/COUNT (uid) or SUB_GID_* from
 * login.defs; defaults 100000, 600100000, 65536.  count 0 means "do not
 * allocate". */
struct hs_ids_subid_conf {
	unsigned long min, max, count;
};
void hs_ids_subid_conf(const struct hs_config *defs, bool uid, struct hs_ids_subid_conf *out);

/* The lowest start >= c->min such that [start, start + count) overlaps no
 * range of db (an HS_DB_SUBID db) and start + count - 1 <= c->max.
 * -EUSERS when there is no room, -EINVAL when count is 0. */
int hs_ids_subid_pick(struct hs_accountdb *db, const struct hs_ids_subid_conf *c, unsigned long *start);

/* The same picks for many new users at once (newusers): the ranges are
 * sorted once and each pick goes on from where the previous one stopped,
 * instead of a sort of the whole file per user (1,000 new users next to
 * 10,000 ranges: 1,000 sorts of 11,000 spans).  Each pick is the one
 * hs_ids_subid_pick would make with the earlier picks appended to db, so
 * the caller changes db only by appending the ranges picked here.
 * init: 0 or -ENOMEM; next: as hs_ids_subid_pick. */
struct hs_ids_subid_batch {
	struct hs_ids_subid_span *spans;        /* the file's ranges, by start */
	size_t n, next;                         /* next: where the scan goes on */
	unsigned long long cand;                /* the lowest start still possible */
	struct hs_ids_subid_conf conf;
};
int hs_ids_subid_batch_init(struct hs_ids_subid_batch *b, struct hs_accountdb *db,
			    const struct hs_ids_subid_conf *c);
int hs_ids_subid_batch_next(struct hs_ids_subid_batch *b, unsigned long *start);
void hs_ids_subid_batch_free(struct hs_ids_subid_batch *b);

#endif
