/* Subordinate id ranges for many new users: see subidbatch.h. */
#include "subidbatch.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_span(const void *a, const void *b)
{
	const struct hs_subid_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int hs_subid_batch_init(struct hs_subid_batch *b, struct hs_accountdb *db,
                        const struct hs_ids_subid_conf *c)
{
	*b = (struct hs_subid_batch){ .conf = *c, .cand = c->min };
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

int hs_subid_batch_next(struct hs_subid_batch *b, unsigned long *start)
{
	const struct hs_ids_subid_conf *c = &b->conf;
	unsigned long long last = (unsigned long long)c->max + 1;   /* exclusive */

	if (c->count == 0)
		return -EINVAL;
	if (c->min > c->max || c->max - c->min + 1 < c->count)
		return -EUSERS;
	/* hs_ids_subid_pick's scan, resumed: every span before next ends at or
	 * below the previous pick, which ends at cand */
	for (; b->next < b->n; b->next++) {
		const struct hs_subid_span *s = &b->spans[b->next];

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

void hs_subid_batch_free(struct hs_subid_batch *b)
{
	free(b->spans);
	b->spans = NULL;
	b->n = b->next = 0;
}
