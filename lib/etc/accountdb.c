/* The line-file model of the global account files (see accountdb.h).
 *
 * Memory: data is the file as read; every untouched line is written back
 * from it.  The records.c parsers cut a line up in place, so a record built
 * from a line of the file points into a parse copy of that line, taken from
 * chunks: an arena freed only with the db, which is what keeps those
 * strings valid after a replace or a delete.  A replaced or appended line
 * has its own buffer (owned) holding its text and its parse copy.  What may
 * hold a hash (data, chunks, owned buffers, the load's scratch copy) is
 * wiped before it is freed; the line array, the spans and the indexes hold
 * only pointers, lengths, hashes of names and ids.
 *
 * HS_DB_LAZY: the load parses every line into one reused scratch buffer
 * (the same parser, the same errors: a file with a bad line is refused as
 * before) but keeps only where the line lies (spans, 8 bytes a line).  The
 * line array is calloc'd and left alone until a line is asked for; the
 * kernel maps an untouched large calloc as zero pages it never has to
 * fault in, and with 10,000 users that array alone is over a megabyte per
 * file.  The bitmap `built` says which lines are filled in.  Without the
 * flag every line is built at load, as the other tools expect.
 *
 * Lookups go through two open-addressing tables (name, id) with linear
 * probing.  A slot holds the key's 32-bit hash (in the id table the id
 * itself) and the line index + 1, so a probe reads the line's text only
 * when the hash matches, and a table grows without looking at any line.
 * Names are keyed by the text up to the first ':' (an entry's name is its
 * first field), so a lazy line is indexed without parsing it again.  The
 * name table is built at load (that is where duplicates are found); the id
 * table on the first lookup by id.  A delete, a rename or a renumbering
 * marks a table stale and the next lookup rebuilds it in O(n): edits stay
 * O(1) and the tables exact, which matters more than the rebuild for tools
 * that make a handful of edits.  The first lookup by id (useradd: is gid =
 * uid free?) is a scan of the id fields instead, cheaper than a table.
 *
 * Output: lines that lie one after the other in data (the untouched ones)
 * go out as one piece, so writing a file with one appended line is two
 * pieces handed to writev, no copy of the file; the backup is written from
 * data while data is what the file holds (hs_globalfile_commit), not read
 * again.  (useradd with 10,000 users: about 3x less CPU than parsing and
 * indexing every line, copying the file twice and reading it twice.) */
#include "accountdb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "globalfile.h"
#include "util.h"

/* ---------------------------------------------------------------- */
/* per-kind dispatch */

static int rec_parse(enum hs_db_kind kind, char *line, union hs_dbrec *rec)
{
	switch (kind) {
	case HS_DB_PASSWD:  return hs_records_passwd_parse(line, &rec->pw);
	case HS_DB_SHADOW:  return hs_records_spwd_parse(line, &rec->sp);
	case HS_DB_GROUP:   return hs_records_group_parse(line, &rec->gr);
	case HS_DB_GSHADOW: return hs_records_gshadow_parse(line, &rec->gs);
	case HS_DB_SUBID:   return hs_records_subid_parse(line, &rec->sub);
	}
	return -EINVAL;
}

static int rec_format(enum hs_db_kind kind, const void *rec, char **out)
{
	switch (kind) {
	case HS_DB_PASSWD:  return hs_records_passwd_format(rec, out);
	case HS_DB_SHADOW:  return hs_records_spwd_format(rec, out);
	case HS_DB_GROUP:   return hs_records_group_format(rec, out);
	case HS_DB_GSHADOW: return hs_records_gshadow_format(rec, out);
	case HS_DB_SUBID:   return hs_records_subid_format(rec, out);
	}
	return -EINVAL;
}

static const char *rec_name(enum hs_db_kind kind, const union hs_dbrec *rec)
{
	switch (kind) {
	case HS_DB_PASSWD:  return rec->pw.name;
	case HS_DB_SHADOW:  return rec->sp.name;
	case HS_DB_GROUP:   return rec->gr.name;
	case HS_DB_GSHADOW: return rec->gs.name;
	case HS_DB_SUBID:   return rec->sub.owner;
	}
	return "";
}

static bool rec_id(enum hs_db_kind kind, const union hs_dbrec *rec, unsigned long *id)
{
	if (kind == HS_DB_PASSWD) {
		*id = rec->pw.uid;
		return true;
	}
	if (kind == HS_DB_GROUP) {
		*id = rec->gr.gid;
		return true;
	}
	return false;
}

static bool has_id(enum hs_db_kind kind)
{
	return kind == HS_DB_PASSWD || kind == HS_DB_GROUP;
}

static const char *name_noun(enum hs_db_kind kind)
{
	return kind == HS_DB_GROUP || kind == HS_DB_GSHADOW ? "group" : "user";
}

static void set_error(struct hs_accountdb *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct hs_accountdb *db, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(db->error, sizeof(db->error), fmt, ap);
	va_end(ap);
}

static const char *db_path(const struct hs_accountdb *db)
{
	return db->path ? db->path : "(memory)";
}

/* ---------------------------------------------------------------- */
/* lines: built or not */

static inline bool is_built(const struct hs_accountdb *db, size_t i)
{
	return !db->built || (db->built[i >> 3] & (1u << (i & 7)));
}

static void mark_built(struct hs_accountdb *db, size_t i)
{
	if (db->built)
		db->built[i >> 3] |= (unsigned char)(1u << (i & 7));
}

/* The current text of line i, built or not. */
static inline const char *text_of(const struct hs_accountdb *db, size_t i, size_t *len)
{
	if (is_built(db, i)) {
		*len = db->lines[i].len;
		return db->lines[i].text;
	}
	*len = db->spans[i].len;
	return db->data + db->spans[i].off;
}

/* A live entry?  A line that is not built is blank or an entry that
 * parsed at load (bad lines are built at load, deleted ones on delete). */
static inline bool is_live(const struct hs_accountdb *db, size_t i)
{
	if (is_built(db, i))
		return db->lines[i].entry && !db->lines[i].deleted;
	return db->spans[i].len > 0;
}

static bool is_deleted(const struct hs_accountdb *db, size_t i)
{
	return is_built(db, i) && db->lines[i].deleted;
}

/* The name of an entry: its text up to the first ':' (a short scan: a
 * memchr call costs more for a name). */
static inline size_t key_len(const char *text, size_t len)
{
	size_t k = 0;

	while (k < len && text[k] != ':')
		k++;
	return k;
}

static bool key_is(const char *text, size_t len, const char *name, size_t nlen)
{
	return len > nlen && text[nlen] == ':' && memcmp(text, name, nlen) == 0;
}

/* Field n (0-based) of the text of live line i, or NULL. */
static const char *field_of(const struct hs_accountdb *db, size_t i, unsigned n, size_t *flen)
{
	const char *t, *end, *colon;
	size_t len;

	if (!is_live(db, i))
		return NULL;
	t = text_of(db, i, &len);
	end = t + len;
	for (; n > 0; n--) {
		while (t < end && *t != ':')
			t++;
		if (t == end)
			return NULL;
		t++;
	}
	colon = memchr(t, ':', (size_t)(end - t));
	*flen = (size_t)((colon ? colon : end) - t);
	return t;
}

/* The uid/gid of a live entry of a passwd or group db (third field of
 * both).  A line that is not built parsed at load, so its digits are
 * plain decimal. */
static bool line_id(const struct hs_accountdb *db, size_t i, unsigned long *id)
{
	const char *f;
	size_t len;
	unsigned long v = 0;

	if (!has_id(db->kind) || !is_live(db, i))
		return false;
	if (is_built(db, i))
		return rec_id(db->kind, &db->lines[i].rec, id);
	f = field_of(db, i, 2, &len);
	if (!f)
		return false;
	for (size_t k = 0; k < len; k++)
		v = v * 10 + (unsigned long)(f[k] - '0');
	*id = v;
	return true;
}

/* Arena for the parse copies of lines of the file. */
struct hs_db_chunk {
	struct hs_db_chunk *next;
	size_t size, used;
	char mem[];
};

static char *chunk_alloc(struct hs_accountdb *db, size_t n)
{
	struct hs_db_chunk *c = db->chunks;

	if (!c || c->size - c->used < n) {
		size_t size = n > 4000 ? n : 4000;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = db->chunks;
		db->chunks = c;
	}
	c->used += n;
	return c->mem + c->used - n;
}

/* Fill in line i of a lazy db from its span: text, line number and the
 * record, parsed from a copy in the arena.  NULL on ENOMEM. */
static struct hs_dbline *build(struct hs_accountdb *db, size_t i)
{
	struct hs_dbline *l = &db->lines[i];
	char *copy;
	int r;

	if (is_built(db, i))
		return l;
	memset(l, 0, sizeof(*l));
	l->text = db->data + db->spans[i].off;
	l->len = db->spans[i].len;
	l->lineno = i + 1;
	if (l->len > 0) {
		copy = chunk_alloc(db, l->len + 1);
		if (!copy) {
			l->text = NULL;
			set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(-ENOMEM));
			return NULL;
		}
		memcpy(copy, l->text, l->len);
		copy[l->len] = '\0';
		r = rec_parse(db->kind, copy, &l->rec);
		if (r < 0) {
			/* cannot happen: the same bytes parsed at load */
			memset(&l->rec, 0, sizeof(l->rec));
			l->err = r;
			db->n_entries--;
		} else {
			l->entry = true;
		}
	}
	mark_built(db, i);
	return l;
}

/* ---------------------------------------------------------------- */
/* indexes */

/* Names are short: eight bytes at a time, multiplied and folded. */
static uint32_t hash_name(const char *s, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	for (w = 0; n > 0; n--)
		w = (w << 8) | (unsigned char)s[n - 1];
	h = (h ^ w) * 0x94d049bb133111ebULL;
	h ^= h >> 29;
	return (uint32_t)(h ^ (h >> 32));
}

static size_t slot_of(uint32_t key, size_t mask)
{
	return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* Full at 3/4: short probes still, and a table half the size of a 1/2
 * one (10,000 names: 128 KiB, one page fault in 32 slots' worth). */
static bool index_full(const struct hs_db_index *ix, size_t more)
{
	return 4 * (ix->used + more) > 3 * ix->cap;
}

static int index_alloc(struct hs_db_index *ix, size_t n)
{
	size_t cap = 64;

	while (4 * (n + 16) > 3 * cap)
		cap *= 2;
	free(ix->slots);
	ix->slots = calloc(cap, sizeof(*ix->slots));
	ix->cap = ix->slots ? cap : 0;
	ix->used = 0;
	ix->stale = false;
	return ix->slots ? 0 : -ENOMEM;
}

static void index_free(struct hs_db_index *ix)
{
	free(ix->slots);
	*ix = (struct hs_db_index){ 0 };
}

/* Room for one more key: double the table (from the slots alone). */
static int index_room(struct hs_db_index *ix)
{
	struct hs_db_slot *old = ix->slots;
	size_t old_cap = ix->cap, cap = 2 * ix->cap;

	if (!index_full(ix, 1))
		return 0;
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots) {
		ix->slots = old;
		return -ENOMEM;
	}
	ix->cap = cap;
	for (size_t k = 0; k < old_cap; k++) {
		size_t i;

		if (!old[k].line)
			continue;
		for (i = slot_of(old[k].key, cap - 1); ix->slots[i].line; i = (i + 1) & (cap - 1))
			;
		ix->slots[i] = old[k];
	}
	free(old);
	return 0;
}

/* The line holding key in a table, or -1; with insert >= 0 that line goes
 * in when the key is absent (the table has room).  In the name table
 * (name not NULL) a slot with the same hash is the name's only when the
 * line's text starts with it; in the id table the key is the id. */
static long probe(struct hs_accountdb *db, struct hs_db_index *ix, uint32_t key,
		  const char *name, size_t nlen, long insert)
{
	size_t mask = ix->cap - 1;

	for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
		struct hs_db_slot *s = &ix->slots[i];
		const char *t;
		size_t len;

		if (!s->line) {
			if (insert >= 0) {
				s->key = key;
				s->line = (unsigned)insert + 1;
				ix->used++;
			}
			return -1;
		}
		if (s->key != key)
			continue;
		if (!name)
			return (long)s->line - 1;
		t = text_of(db, s->line - 1, &len);
		if (key_is(t, len, name, nlen))
			return (long)s->line - 1;
	}
}

static long name_probe_key(struct hs_accountdb *db, const char *name, size_t nlen,
			   uint32_t key, long insert)
{
	return probe(db, &db->by_name, key, name, nlen, insert);
}

static long name_probe(struct hs_accountdb *db, const char *name, size_t nlen, long insert)
{
	return probe(db, &db->by_name, hash_name(name, nlen), name, nlen, insert);
}

static long id_probe(struct hs_accountdb *db, unsigned long id, long insert)
{
	return probe(db, &db->by_id, (uint32_t)id, NULL, 0, insert);
}

/* Put live line i into the name table; the earlier line with the same
 * name, or -1. */
static long name_add(struct hs_accountdb *db, size_t i)
{
	size_t len;
	const char *t = text_of(db, i, &len);

	return name_probe(db, t, key_len(t, len), (long)i);
}

/* Make a table exact: (re)build it from every live line when it is stale
 * or not built yet. */
static int table_ready(struct hs_accountdb *db, bool ids)
{
	struct hs_db_index *ix = ids ? &db->by_id : &db->by_name;
	unsigned long id;
	int r;

	if (ix->slots && !ix->stale)
		return 0;
	r = index_alloc(ix, db->n_lines);
	if (r < 0) {
		set_error(db, "cannot index %s: %s", db_path(db), hs_strerror(r));
		return r;
	}
	for (size_t i = 0; i < db->n_lines; i++) {
		if (!ids && is_live(db, i))
			name_add(db, i);
		else if (ids && line_id(db, i, &id))
			id_probe(db, id, (long)i);
	}
	return 0;
}

static int name_table_ready(struct hs_accountdb *db)
{
	return table_ready(db, false);
}

/* ---------------------------------------------------------------- */
/* load and free */

static void line_free(struct hs_dbline *l)
{
	if (l->owned) {
		/* text and parse copy: "TEXT\n" then "TEXT\0" */
		hs_wipe(l->owned, 2 * l->len + 2);
		free(l->owned);
		l->owned = NULL;
	}
}

void hs_accountdb_free(struct hs_accountdb *db)
{
	char error[sizeof(db->error)];

	if (!db)
		return;
	for (size_t i = 0; db->lines && i < db->n_lines; i++) {
		if (db->built && !db->built[i >> 3]) {
			i |= 7;         /* none of these eight is built */
			continue;
		}
		if (is_built(db, i))
			line_free(&db->lines[i]);
	}
	if (db->data) {
		hs_wipe(db->data, db->len);
		free(db->data);
	}
	while (db->chunks) {
		struct hs_db_chunk *c = db->chunks;

		db->chunks = c->next;
		hs_wipe(c->mem, c->used);
		free(c);
	}
	free(db->lines);
	free(db->spans);
	free(db->built);
	index_free(&db->by_name);
	index_free(&db->by_id);
	free(db->path);
	memcpy(error, db->error, sizeof(error));
	memset(db, 0, sizeof(*db));
	memcpy(db->error, error, sizeof(error));
}

static void set_defaults(struct hs_accountdb *db)
{
	db->default_uid = 0;
	db->default_gid = 0;
	/* the files holding hashes are never created world-readable */
	db->default_mode = db->kind == HS_DB_SHADOW || db->kind == HS_DB_GSHADOW ? 0640 : 0644;
}

/* Where every line of data lies, in db->spans (room for 16 more), in one
 * pass; the number of lines, or -ENOMEM. */
static long split_spans(struct hs_accountdb *db)
{
	size_t cap = db->len / 32 + 16, n = 0, pos = 0;

	db->spans = malloc(cap * sizeof(*db->spans));
	while (db->spans && pos < db->len) {
		const char *nl = memchr(db->data + pos, '\n', db->len - pos);
		size_t len = nl ? (size_t)(nl - (db->data + pos)) : db->len - pos;

		if (n + 16 >= cap) {
			struct hs_db_span *more = realloc(db->spans, 2 * cap * sizeof(*more));

			if (!more)
				break;
			db->spans = more;
			cap *= 2;
		}
		db->spans[n++] = (struct hs_db_span){ .off = (unsigned)pos, .len = (unsigned)len };
		pos += len + 1;
	}
	return db->spans && pos >= db->len ? (long)n : -ENOMEM;
}

/* The scratch copy a lazy load parses each line in (and wipes). */
struct scratch {
	char *buf;
	size_t cap;
};

static char *scratch_copy(struct scratch *s, const char *text, size_t len)
{
	if (len + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;

		while (cap < len + 1)
			cap *= 2;
		if (s->buf) {
			hs_wipe(s->buf, s->cap);
			free(s->buf);
		}
		s->buf = malloc(cap);
		s->cap = s->buf ? cap : 0;
		if (!s->buf)
			return NULL;
	}
	memcpy(s->buf, text, len);
	s->buf[len] = '\0';
	return s->buf;
}

/* Parse (lazy: validate) every line of db->data and index the names. */
static int parse_all(struct hs_accountdb *db, unsigned flags)
{
	bool lazy = flags & HS_DB_LAZY;
	/* one look for a NUL byte in the whole file instead of one a line */
	bool has_nul = memchr(db->data, '\0', db->len) != NULL;
	struct scratch sc = { 0 };
	char *copy = NULL;
	long n = split_spans(db);
	int r = 0;

	/* room for a few appends before anything moves (the spans have it) */
	db->cap_lines = n >= 0 ? (size_t)n + 16 : 0;
	db->lines = n >= 0 ? calloc(db->cap_lines, sizeof(*db->lines)) : NULL;
	if (lazy)
		db->built = calloc((db->cap_lines + 7) / 8, 1);
	else    /* one parse copy of the whole file */
		copy = chunk_alloc(db, db->len + 1);
	if (!db->lines || (lazy && !db->built) || (!lazy && !copy) ||
	    index_alloc(&db->by_name, (size_t)n) < 0) {
		r = -ENOMEM;
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
		return r;
	}
	if (copy) {
		memcpy(copy, db->data, db->len);
		copy[db->len] = '\0';
	}

	while (db->n_lines < (size_t)n) {
		size_t i = db->n_lines++, off = db->spans[i].off, llen = db->spans[i].len;
		const char *text = db->data + off;
		struct hs_dbline *l = &db->lines[i];
		union hs_dbrec scratch_rec;
		size_t klen = key_len(text, llen);
		uint32_t key = hash_name(text, klen);
		long first;

		if (!lazy) {
			l->text = text;
			l->len = llen;
			l->lineno = i + 1;
		}
		if (llen == 0)
			continue;  /* blank: kept verbatim, no entry */
		/* the name's slot, fetched while the line is parsed (a cache
		 * miss per line otherwise: the file streams the table out) */
		__builtin_prefetch(&db->by_name.slots[slot_of(key, db->by_name.cap - 1)], 1);
		/* a NUL would hide the rest of the line from the parser while
		 * the original bytes, NUL and all, went back to the file */
		if (has_nul && memchr(text, '\0', llen)) {
			r = -HS_E_FIELD;
		} else if (lazy) {
			char *s = scratch_copy(&sc, text, llen);

			r = s ? rec_parse(db->kind, s, &scratch_rec) : -ENOMEM;
		} else {
			copy[off + llen] = '\0';
			r = rec_parse(db->kind, copy + off, &l->rec);
		}
		if (r == -ENOMEM) {
			set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
			break;
		}
		if (r < 0) {
			if (flags & HS_DB_KEEP_BAD) {
				/* built now: a bad line is never parsed again */
				memset(l, 0, sizeof(*l));
				l->text = text;
				l->len = llen;
				l->lineno = i + 1;
				l->err = r;
				mark_built(db, i);
				r = 0;
				continue;
			}
			set_error(db, "%s:%lu: invalid entry: %s", db_path(db), (unsigned long)i + 1,
				  hs_strerror(r));
			break;
		}
		if (!lazy)
			l->entry = true;
		db->n_entries++;
		first = name_probe_key(db, text, klen, key, (long)i);
		if (first >= 0 && db->kind != HS_DB_SUBID && !(flags & HS_DB_KEEP_DUPS)) {
			set_error(db, "%s:%lu: duplicate %s name %.*s (also on line %lu)", db_path(db),
				  (unsigned long)i + 1, name_noun(db->kind), (int)klen, text,
				  (unsigned long)first + 1);
			r = -HS_E_FORMAT;
			break;
		}
	}
	if (sc.buf) {
		hs_wipe(sc.buf, sc.cap);
		free(sc.buf);
	}
	if (!lazy) {
		/* every line is built: db->lines says where it lies */
		free(db->spans);
		db->spans = NULL;
	}
	return r;
}

static int load_start(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
		      unsigned flags)
{
	memset(db, 0, sizeof(*db));
	db->kind = kind;
	db->flags = flags;
	set_defaults(db);
	if (kind > HS_DB_SUBID || !path) {
		set_error(db, "cannot read %s: %s", path ? path : "(null)", hs_strerror(-EINVAL));
		return -EINVAL;
	}
	db->path = strdup(path);
	if (!db->path) {
		set_error(db, "cannot read %s: %s", path, hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/* The end of both loads: r is the result of getting db->data; parse it,
 * or free the db (keeping the message) on any failure. */
static int load_finish(struct hs_accountdb *db, unsigned flags, int r)
{
	if (r == 0 && db->len > UINT32_MAX)
		r = -HS_E_TOOBIG;       /* the spans hold 32-bit offsets */
	if (r < 0)
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
	else
		r = parse_all(db, flags);
	if (r < 0)
		hs_accountdb_free(db);
	return r;
}

int hs_accountdb_load(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
		      unsigned flags)
{
	int r = load_start(db, kind, path, flags);

	if (r < 0)
		return r;
	r = hs_globalfile_read(path, &db->data, &db->len);
	if (r == -ENOENT && (flags & HS_DB_MISSING_OK)) {
		db->data = strdup("");
		db->len = 0;
		r = db->data ? 0 : -ENOMEM;
	} else if (r == 0) {
		db->present = true;
		db->data_on_disk = true;
	}
	return load_finish(db, flags, r);
}

int hs_accountdb_load_data(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
			   const char *data, size_t len, unsigned flags)
{
	int r = load_start(db, kind, path, flags);

	if (r < 0)
		return r;
	if ((!data && len) || len > UINT32_MAX)
		return load_finish(db, flags, !data ? -EINVAL : -HS_E_TOOBIG);
	db->data = malloc(len + 1);
	if (db->data) {
		if (len)
			memcpy(db->data, data, len);
		db->data[len] = '\0';
		db->len = len;
		db->present = true;
	}
	return load_finish(db, flags, db->data ? 0 : -ENOMEM);
}

/* ---------------------------------------------------------------- */
/* lookups */

/* A name with a ':' (or nothing) names no entry. */
static bool name_usable(const char *name, size_t *nlen)
{
	*nlen = strlen(name);
	return *nlen > 0 && !memchr(name, ':', *nlen);
}

/* The built line at idx, or -1 (ENOMEM). */
static long built_index(struct hs_accountdb *db, long idx)
{
	if (idx >= 0 && !build(db, (size_t)idx))
		return -1;
	return idx;
}

long hs_accountdb_find(struct hs_accountdb *db, const char *name)
{
	size_t nlen;

	if (!db || !name || !db->lines || !name_usable(name, &nlen) || name_table_ready(db) < 0)
		return -1;
	return built_index(db, name_probe(db, name, nlen, -1));
}

long hs_accountdb_find_id(struct hs_accountdb *db, unsigned long id)
{
	unsigned long other;

	if (!db || !has_id(db->kind) || !db->lines || id > UINT32_MAX)
		return -1;
	/* A tool that asks once (useradd: is gid = uid free?) is served by
	 * one pass over the ids, cheaper than building the table; the
	 * second question builds it. */
	if ((!db->by_id.slots || db->by_id.stale) && db->id_scans++ == 0) {
		for (size_t i = 0; i < db->n_lines; i++)
			if (line_id(db, i, &other) && other == id)
				return built_index(db, (long)i);
		return -1;
	}
	if (table_ready(db, true) < 0)
		return -1;
	return built_index(db, id_probe(db, id, -1));
}

long hs_accountdb_find_next(struct hs_accountdb *db, const char *name, size_t from)
{
	size_t nlen, len;

	if (!db || !name || !db->lines || !name_usable(name, &nlen))
		return -1;
	for (size_t i = from; i < db->n_lines; i++) {
		const char *t = text_of(db, i, &len);

		if (is_live(db, i) && key_is(t, len, name, nlen))
			return built_index(db, (long)i);
	}
	return -1;
}

long hs_accountdb_dup_name(struct hs_accountdb *db, size_t idx)
{
	const char *t;
	size_t len;
	long first;

	if (!db || !db->lines || idx >= db->n_lines || !is_live(db, idx) ||
	    name_table_ready(db) < 0)
		return -1;
	t = text_of(db, idx, &len);
	first = built_index(db, name_probe(db, t, key_len(t, len), -1));
	return first >= 0 && (size_t)first != idx ? first : -1;
}

long hs_accountdb_dup_id(struct hs_accountdb *db, size_t idx)
{
	unsigned long id;
	long first;

	if (!db || idx >= db->n_lines || !line_id(db, idx, &id))
		return -1;
	first = hs_accountdb_find_id(db, id);
	return first >= 0 && (size_t)first != idx ? first : -1;
}

const union hs_dbrec *hs_accountdb_get(const struct hs_accountdb *cdb, size_t idx)
{
	/* building a lazy line changes the db underneath (see the header) */
	struct hs_accountdb *db = (struct hs_accountdb *)cdb;
	struct hs_dbline *l;

	if (!db || !db->lines || idx >= db->n_lines || !is_live(db, idx))
		return NULL;
	l = build(db, idx);
	return l && l->entry ? &l->rec : NULL;
}

const char *hs_accountdb_text(const struct hs_accountdb *db, size_t idx, size_t *len)
{
	if (!db || !db->lines || !len || idx >= db->n_lines || is_deleted(db, idx))
		return NULL;
	return text_of(db, idx, len);
}

const char *hs_accountdb_field(const struct hs_accountdb *db, size_t idx, unsigned n,
			       size_t *len)
{
	if (!db || !db->lines || !len || idx >= db->n_lines)
		return NULL;
	return field_of(db, idx, n, len);
}

bool hs_accountdb_id(const struct hs_accountdb *db, size_t idx, unsigned long *id)
{
	if (!db || !db->lines || !id || idx >= db->n_lines)
		return false;
	return line_id(db, idx, id);
}

/* ---------------------------------------------------------------- */
/* edits */

/* Format rec into a new line: l gets text, len, owned and the parsed rec. */
static int make_line(struct hs_accountdb *db, const void *rec, struct hs_dbline *l,
		     const char *what)
{
	char *fmt = NULL, *buf;
	size_t len;
	int r = rec_format(db->kind, rec, &fmt);

	if (r < 0) {
		set_error(db, "cannot write the %s entry of %s: %s", db_path(db),
			  rec_name(db->kind, rec), hs_strerror(r));
		return r;
	}
	len = strlen(fmt) - 1;  /* formatters end the line in '\n' */
	buf = malloc(2 * len + 2);
	if (!buf) {
		hs_free_secret(fmt);
		set_error(db, "cannot %s %s: %s", what, db_path(db), hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	memcpy(buf, fmt, len + 1);
	memcpy(buf + len + 1, fmt, len);
	buf[2 * len + 1] = '\0';
	hs_free_secret(fmt);
	memset(l, 0, sizeof(*l));
	l->text = buf;
	l->len = len;
	l->owned = buf;
	r = rec_parse(db->kind, buf + len + 1, &l->rec);
	if (r < 0) {
		/* the formatter produced what its own parser refuses */
		line_free(l);
		set_error(db, "cannot write the %s entry of %s: %s", db_path(db),
			  rec_name(db->kind, rec), hs_strerror(r));
		return r;
	}
	l->entry = true;
	return 0;
}

/* -EEXIST when a live entry other than idx (-1: any) has this name. */
static int check_name_free(struct hs_accountdb *db, const char *name, long idx, const char *what)
{
	long other;

	if (db->kind == HS_DB_SUBID)
		return 0;
	if (name_table_ready(db) < 0)
		return -ENOMEM;
	other = name_probe(db, name, strlen(name), -1);
	if (other < 0 || other == idx)
		return 0;
	set_error(db, "cannot %s %s: %s name %s already exists", what, db_path(db),
		  name_noun(db->kind), name);
	return -EEXIST;
}

int hs_accountdb_replace(struct hs_accountdb *db, size_t idx, const void *rec)
{
	struct hs_dbline nl;
	struct hs_dbline *l;
	unsigned long old_id = 0, new_id = 0;
	bool was_live;
	int r;

	if (!db || !rec || !db->lines || idx >= db->n_lines || is_deleted(db, idx))
		return -EINVAL;
	r = make_line(db, rec, &nl, "update");
	if (r < 0)
		return r;
	l = build(db, idx);
	if (!l) {
		line_free(&nl);
		return -ENOMEM;
	}
	was_live = l->entry;
	/* renaming to a taken name, or reviving a bad line with one */
	if (!was_live || strcmp(rec_name(db->kind, &l->rec), rec_name(db->kind, &nl.rec)) != 0) {
		r = check_name_free(db, rec_name(db->kind, &nl.rec), (long)idx, "update");
		if (r < 0) {
			line_free(&nl);
			return r;
		}
		db->by_name.stale = true;
	}
	if (!was_live || (rec_id(db->kind, &l->rec, &old_id) && rec_id(db->kind, &nl.rec, &new_id) &&
			  old_id != new_id))
		db->by_id.stale = true;
	nl.lineno = l->lineno;
	line_free(l);
	*l = nl;
	if (!was_live)
		db->n_entries++;
	db->dirty = true;
	return 0;
}

/* Room for one more line in every per-line array (realloc is fine: they
 * hold pointers and lengths, no hash). */
static int grow_lines(struct hs_accountdb *db)
{
	size_t ncap = 2 * db->cap_lines, old_bytes = (db->cap_lines + 7) / 8;
	struct hs_dbline *nls;

	if (db->n_lines < db->cap_lines)
		return 0;
	nls = realloc(db->lines, ncap * sizeof(*nls));
	if (!nls)
		return -ENOMEM;
	memset(nls + db->cap_lines, 0, (ncap - db->cap_lines) * sizeof(*nls));
	db->lines = nls;
	if (db->spans) {
		struct hs_db_span *ns = realloc(db->spans, ncap * sizeof(*ns));
		unsigned char *nb;

		if (!ns)
			return -ENOMEM;
		db->spans = ns;
		nb = realloc(db->built, (ncap + 7) / 8);
		if (!nb)
			return -ENOMEM;
		memset(nb + old_bytes, 0, (ncap + 7) / 8 - old_bytes);
		db->built = nb;
	}
	db->cap_lines = ncap;
	return 0;
}

long hs_accountdb_append(struct hs_accountdb *db, const void *rec)
{
	struct hs_dbline nl;
	unsigned long id;
	size_t i;
	int r;

	if (!db || !rec || !db->lines)
		return -EINVAL;
	r = make_line(db, rec, &nl, "add to");
	if (r < 0)
		return r;
	r = check_name_free(db, rec_name(db->kind, &nl.rec), -1, "add to");
	if (r == 0)
		r = grow_lines(db);
	if (r == 0)
		r = name_table_ready(db);
	if (r == 0)
		r = index_room(&db->by_name);
	if (r == 0 && db->by_id.slots && !db->by_id.stale)
		r = index_room(&db->by_id);
	if (r < 0) {
		line_free(&nl);
		if (r == -ENOMEM)
			set_error(db, "cannot add to %s: %s", db_path(db), hs_strerror(r));
		return r;
	}
	i = db->n_lines++;
	db->lines[i] = nl;
	mark_built(db, i);
	db->n_entries++;
	db->dirty = true;
	name_add(db, i);
	if (db->by_id.slots && !db->by_id.stale && rec_id(db->kind, &nl.rec, &id))
		id_probe(db, id, (long)i);
	return (long)i;
}

int hs_accountdb_delete(struct hs_accountdb *db, size_t idx)
{
	struct hs_dbline *l;

	if (!db || !db->lines || idx >= db->n_lines || is_deleted(db, idx))
		return -EINVAL;
	l = build(db, idx);
	if (!l)
		return -ENOMEM;
	if (l->entry) {
		db->n_entries--;
		db->by_name.stale = true;
		db->by_id.stale = true;
	}
	l->deleted = true;
	db->dirty = true;
	return 0;
}

/* ---------------------------------------------------------------- */
/* output */

static bool in_data(const struct hs_accountdb *db, const char *t)
{
	return (uintptr_t)t >= (uintptr_t)db->data && (uintptr_t)t < (uintptr_t)(db->data + db->len);
}

/* The file's new contents as pieces to write one after the other, each
 * line with its newline.  Lines that lie one after the other in data (the
 * untouched lines of the file) make one piece; a replaced or appended
 * line is "TEXT\n" in its own buffer (make_line).  Fills iov when not
 * NULL; returns the number of pieces and *total the bytes. */
static size_t pieces(const struct hs_accountdb *db, struct iovec *iov, size_t *total)
{
	const char *data_end = db->data + db->len, *run = NULL, *run_end = NULL;
	size_t n = 0, len = 0;

	*total = 0;
#define PIECE(p, l) do {                                                        \
		if (iov)                                                        \
			iov[n] = (struct iovec){ .iov_base = (void *)(p), .iov_len = (l) }; \
		n++;                                                            \
		*total += (l);                                                  \
	} while (0)
	for (size_t i = 0; i <= db->n_lines; i++) {
		const char *t = NULL;

		if (i < db->n_lines) {
			if (is_deleted(db, i))
				continue;
			t = text_of(db, i, &len);
		}
		if (run && t == run_end + 1 && run_end < data_end) {
			run_end = t + len;
			continue;
		}
		if (run && run_end < data_end) {
			PIECE(run, (size_t)(run_end + 1 - run));  /* its newline too */
		} else if (run) {
			/* the last line of a file without a final newline */
			PIECE(run, (size_t)(run_end - run));
			PIECE("\n", 1);
		}
		run = NULL;
		if (!t)
			break;
		if (in_data(db, t)) {
			run = t;
			run_end = t + len;
		} else {
			PIECE(t, len + 1);
		}
	}
#undef PIECE
	return n;
}

/* The pieces of a dirty db in a malloc'd array (*iov NULL and 0 pieces
 * for an empty file), or -ENOMEM. */
static int pieces_alloc(const struct hs_accountdb *db, struct iovec **iov, size_t *n,
			size_t *total)
{
	*n = pieces(db, NULL, total);
	*iov = NULL;
	if (*n == 0)
		return 0;
	*iov = malloc(*n * sizeof(**iov));
	if (!*iov)
		return -ENOMEM;
	pieces(db, *iov, total);
	return 0;
}

/* out has room for n more bytes and a NUL (hs_buf's rule: the old block
 * is wiped, not realloc'd). */
static int buf_reserve(struct hs_buf *out, size_t n)
{
	char *p;

	if (out->cap > out->len + n)
		return 0;
	p = malloc(out->len + n + 1);
	if (!p)
		return -ENOMEM;
	if (out->data) {
		memcpy(p, out->data, out->len);
		hs_wipe(out->data, out->cap);
		free(out->data);
	}
	out->data = p;
	out->cap = out->len + n + 1;
	return 0;
}

int hs_accountdb_serialize(const struct hs_accountdb *db, struct hs_buf *out)
{
	_cleanup_free_ struct iovec *iov = NULL;
	size_t n, total;
	int r;

	if (!db || !out)
		return -EINVAL;
	if (!db->dirty)
		return db->len ? hs_strbuf_append(out, db->data, db->len) : 0;
	r = pieces_alloc(db, &iov, &n, &total);
	if (r == 0 && total)
		r = buf_reserve(out, total);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		memcpy(out->data + out->len, iov[i].iov_base, iov[i].iov_len);
		out->len += iov[i].iov_len;
	}
	if (out->data)
		out->data[out->len] = '\0';
	return 0;
}

static int contents(const struct hs_accountdb *db, struct iovec **iov, size_t *n,
                         const char **old, size_t *old_len)
{
	size_t total;
	int r;

	if (!db || !iov || !n)
		return -EINVAL;
	if (db->dirty) {
		r = pieces_alloc(db, iov, n, &total);
		if (r < 0)
			return r;
	} else {
		*n = db->len ? 1 : 0;
		*iov = NULL;
		if (*n) {
			*iov = malloc(sizeof(**iov));
			if (!*iov)
				return -ENOMEM;
			**iov = (struct iovec){ .iov_base = db->data, .iov_len = db->len };
		}
	}
	if (old && old_len) {
		*old = db->data_on_disk ? db->data : NULL;
		*old_len = db->data_on_disk ? db->len : 0;
	}
	return 0;
}

static void written(struct hs_accountdb *db)
{
	db->present = true;
	db->data_on_disk = false;
}

int hs_accountdb_write_set(struct hs_accountdb *const dbs[], size_t n, size_t *failed)
{
	struct hs_global_file files[HS_ACCOUNTDB_SET_MAX] = { { 0 } };
	struct iovec *iovs[HS_ACCOUNTDB_SET_MAX] = { NULL };
	char err[sizeof(dbs[0]->error)];
	size_t i;
	int r = 0;

	if (failed)
		*failed = 0;
	if (n > HS_ACCOUNTDB_SET_MAX || (n && !dbs))
		return -EINVAL;
	/* straight from the loaded data and the new lines: no copy of the
	 * file into one buffer, and the backup (PATH-) from data instead of
	 * a second read when data is what the file holds */
	for (i = 0; i < n; i++) {
		struct hs_accountdb *db = dbs[i];

		if (!db || !db->path) {
			r = -EINVAL;
			break;
		}
		files[i] = (struct hs_global_file){
			.path = db->path, .uid = db->default_uid, .gid = db->default_gid,
			.mode = db->default_mode,
		};
		r = contents(db, &iovs[i], &files[i].n_iov, &files[i].old_data, &files[i].old_len);
		if (r < 0) {
			set_error(db, "cannot write %s: %s", db->path, hs_strerror(r));
			if (failed)
				*failed = i;
			goto out;
		}
		files[i].iov = iovs[i];
	}
	if (r < 0)
		goto out;
	r = hs_globalfile_commit(files, n, err, sizeof(err));
	if (r < 0) {
		/* the message names the file; point failed at it */
		size_t at = 0;

		for (i = n; i-- > 0;)
			if (strstr(err, dbs[i]->path))
				at = i;
		snprintf(dbs[at]->error, sizeof(dbs[at]->error), "%s", err);
		if (failed)
			*failed = at;
		goto out;
	}
	for (i = 0; i < n; i++)
		written(dbs[i]);
out:
	for (i = 0; i < n; i++)
		free(iovs[i]);
	return r;
}

int hs_accountdb_write(struct hs_accountdb *db)
{
	return hs_accountdb_write_set(&db, 1, NULL);
}
