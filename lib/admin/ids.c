/* New ids and subordinate id ranges; see ids.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "records.h"
#include "util.h"

int hs_ids_range(const struct hs_config *defs, bool user, bool system, struct hs_id_range *out)
{
	long lim = (long)HS_ID_MAX;
	long min = hs_config_get_long(defs, user ? "UID_MIN" : "GID_MIN", 0, lim, 1000);
	long lo = system ? hs_config_get_long(defs, user ? "SYS_UID_MIN" : "SYS_GID_MIN", 0, lim, 101)
			 : min;
	long hi = system ? hs_config_get_long(defs, user ? "SYS_UID_MAX" : "SYS_GID_MAX", 0, lim,
					      min - 1)
			 : hs_config_get_long(defs, user ? "UID_MAX" : "GID_MAX", 0, lim, 60000);

	/* a system range ends below UID_MIN, which may be 0 */
	if (hi < 0 || lo > hi)
		return -HS_E_RANGE;
	out->min = (unsigned long)lo;
	out->max = (unsigned long)hi;
	return 0;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* Index of the first element >= id. */
static size_t lower_bound(const struct hs_idset *s, unsigned long id)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool hs_idset_contains(const struct hs_idset *set, unsigned long id)
{
	size_t i = lower_bound(set, id);

	return i < set->n && set->ids[i] == id;
}

static int reserve(struct hs_idset *set, size_t more)
{
	unsigned long *p;
	size_t cap;

	if (set->n + more <= set->cap)
		return 0;
	cap = set->cap ? set->cap : 64;
	while (cap < set->n + more)
		cap *= 2;
	p = realloc(set->ids, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	set->ids = p;
	set->cap = cap;
	return 0;
}

int hs_idset_add(struct hs_idset *set, unsigned long id)
{
	size_t i;
	int r;

	if (hs_idset_contains(set, id))
		return 0;
	r = reserve(set, 1);
	if (r < 0)
		return r;
	i = lower_bound(set, id);
	memmove(set->ids + i + 1, set->ids + i, (set->n - i) * sizeof(*set->ids));
	set->ids[i] = id;
	set->n++;
	return 0;
}

/* Bulk: append all, then sort and drop duplicates once (10,000 users must
 * not cost 10,000 memmoves). */
int hs_idset_add_db(struct hs_idset *set, struct hs_accountdb *db)
{
	size_t w, from = 0;
	int r;

	if (db->kind != HS_DB_PASSWD && db->kind != HS_DB_GROUP)
		return 0;
	r = reserve(set, db->n_lines);
	if (r < 0)
		return r;
	/* without building records: cheap on a HS_DB_LAZY db */
	set->n += hs_accountdb_ids(db, &from, set->ids + set->n, db->n_lines);
	if (set->n == 0)
		return 0;
	qsort(set->ids, set->n, sizeof(*set->ids), cmp_ulong);
	w = 1;
	for (size_t i = 1; i < set->n; i++)
		if (set->ids[i] != set->ids[w - 1])
			set->ids[w++] = set->ids[i];
	set->n = w;
	return 0;
}

/* Add the owner of every entry of directory dir (not following links): the
 * uids that still own something there, such as a deleted user's home or
 * mail spool.  A missing or unreadable dir adds nothing and returns 0;
 * -ENOMEM only. */
static int add_owners(struct hs_idset *set, const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	while (d && r == 0 && (de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != 0)
			r = hs_idset_add(set, st.st_uid);
	}
	return r;
}

int hs_ids_add_leftover_owners(struct hs_idset *owners, const char *home, const char *maildir)
{
	_cleanup_free_ char *parent = home ? strdup(home) : NULL;
	char *slash = parent ? strrchr(parent, '/') : NULL;
	int r = 0;

	if (home && !parent)
		return -ENOMEM;
	if (slash && slash != parent) {
		*slash = '\0';
		r = add_owners(owners, parent);
	}
	return r == 0 && maildir ? add_owners(owners, maildir) : r;
}

int hs_ids_pick_unowned(struct hs_idset *used, const struct hs_idset *owners,
                        const struct hs_id_range *range, bool system, unsigned long *id)
{
	int r = 0;

	if (!hs_idset_contains(owners, *id))
		return 0;
	for (size_t i = 0; r == 0 && i < owners->n; i++)
		r = hs_idset_add(used, owners->ids[i]);
	return r ?: hs_ids_pick(used, range, system, HS_IDS_NO_PREFERENCE, id);
}

void hs_idset_free(struct hs_idset *set)
{
	free(set->ids);
	set->ids = NULL;
	set->n = set->cap = 0;
}

int hs_ids_pick(const struct hs_idset *used, const struct hs_id_range *r, bool system,
                unsigned long preferred, unsigned long *out)
{
	unsigned long id;
	size_t i;

	if (r->min > r->max)
		return -HS_E_RANGE;
	if (preferred != HS_IDS_NO_PREFERENCE && preferred >= r->min && preferred <= r->max &&
	    !hs_idset_contains(used, preferred)) {
		*out = preferred;
		return 0;
	}
	if (system) {
		/* highest free id, walking down through the used ids */
		id = r->max;
		for (i = lower_bound(used, r->max + 1); i > 0 && used->ids[i - 1] >= id; i--, id--)
			if (id == r->min)
				return -EUSERS;
		*out = id;
		return 0;
	}
	/* one past the highest id in use inside the range */
	i = lower_bound(used, r->max + 1);
	if (i == 0 || used->ids[i - 1] < r->min) {
		*out = r->min;
		return 0;
	}
	if (used->ids[i - 1] < r->max) {
		*out = used->ids[i - 1] + 1;
		return 0;
	}
	/* the top is taken: the lowest gap */
	id = r->min;
	for (i = lower_bound(used, r->min); i < used->n && used->ids[i] == id; i++, id++)
		if (id == r->max)
			return -EUSERS;
	*out = id;
	return 0;
}

int hs_ids_pick_db(struct hs_accountdb *db, const struct hs_id_range *r, bool system,
                   unsigned long preferred, unsigned long *out)
{
	struct hs_idset used = HS_IDSET_INIT;
	unsigned long ids[256], span = r->max - r->min, above = 0;
	size_t from = 0, n;
	bool preferred_used = false;
	int ret;

	if (r->min > r->max)
		return -HS_E_RANGE;
	if (!system) {
		/* the common case in one pass over the ids, no set; above is
		 * one past the highest id in the range less its min (0: none),
		 * a max with no branch that mispredicts */
		while ((n = hs_accountdb_ids(db, &from, ids, 256)) > 0)
			for (size_t k = 0; k < n; k++) {
				unsigned long off = ids[k] - r->min;

				preferred_used |= ids[k] == preferred;
				above = off <= span && off + 1 > above ? off + 1 : above;
			}
		if (preferred != HS_IDS_NO_PREFERENCE && preferred >= r->min &&
		    preferred <= r->max && !preferred_used) {
			*out = preferred;
			return 0;
		}
		if (above <= span) {
			*out = r->min + above;
			return 0;
		}
	}
	/* a system id, or the top of the range is taken: the whole set */
	ret = hs_idset_add_db(&used, db);
	if (ret == 0)
		ret = hs_ids_pick(&used, r, system, preferred, out);
	hs_idset_free(&used);
	return ret;
}

void hs_ids_subid_conf(const struct hs_config *defs, bool uid, struct hs_ids_subid_conf *out)
{
	long lim = (long)HS_ID_MAX;

	out->min = (unsigned long)hs_config_get_long(defs, uid ? "SUB_UID_MIN" : "SUB_GID_MIN",
	                                             0, lim, 100000);
	out->max = (unsigned long)hs_config_get_long(defs, uid ? "SUB_UID_MAX" : "SUB_GID_MAX",
	                                             0, lim, 600100000);
	out->count = (unsigned long)hs_config_get_long(defs,
	                                               uid ? "SUB_UID_COUNT" : "SUB_GID_COUNT",
	                                               0, lim, 65536);
}

/* [start, end) of one range of the file, 64-bit so start + count cannot wrap */
struct hs_ids_subid_span {
	unsigned long long start, end;
};

static int cmp_span(const void *a, const void *b)
{
	const struct hs_ids_subid_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int hs_ids_subid_batch_init(struct hs_ids_subid_batch *b, struct hs_accountdb *db,
			    const struct hs_ids_subid_conf *c)
{
	*b = (struct hs_ids_subid_batch){ .conf = *c, .cand = c->min };
	b->spans = calloc(db->n_lines ? db->n_lines : 1, sizeof(*b->spans));
	if (!b->spans)
		return -ENOMEM;
	for (size_t i = 0; i < db->n_lines; i++) {
		const union hs_dbrec *rec = hs_accountdb_get(db, i);

		if (!rec || db->kind != HS_DB_SUBID)
			continue;
		b->spans[b->n].start = rec->sub.start;
		b->spans[b->n].end = (unsigned long long)rec->sub.start + rec->sub.count;
		b->n++;
	}
	qsort(b->spans, b->n, sizeof(*b->spans), cmp_span);
	return 0;
}

int hs_ids_subid_batch_next(struct hs_ids_subid_batch *b, unsigned long *start)
{
	const struct hs_ids_subid_conf *c = &b->conf;
	unsigned long long last = (unsigned long long)c->max + 1;   /* exclusive */

	if (c->count == 0)
		return -EINVAL;
	if (c->min > c->max || c->max - c->min + 1 < c->count)
		return -EUSERS;
	/* the scan goes on where the previous pick stopped: every span before
	 * next ends at or below that pick, which ends at cand */
	for (; b->next < b->n; b->next++) {
		const struct hs_ids_subid_span *s = &b->spans[b->next];

		if (s->end <= b->cand)
			continue;
		if (s->start >= b->cand + c->count)
			break;
		b->cand = s->end;
	}
	if (b->cand + c->count > last)
		return -EUSERS;
	*start = (unsigned long)b->cand;
	b->cand += c->count;
	return 0;
}

void hs_ids_subid_batch_free(struct hs_ids_subid_batch *b)
{
	free(b->spans);
	b->spans = NULL;
	b->n = b->next = 0;
}

int hs_ids_subid_pick(struct hs_accountdb *db, const struct hs_ids_subid_conf *c, unsigned long *start)
{
	struct hs_ids_subid_batch b;
	int r = hs_ids_subid_batch_init(&b, db, c);

	if (r == 0)
		r = hs_ids_subid_batch_next(&b, start);
	hs_ids_subid_batch_free(&b);
	return r;
}
