/* The line-file model of the global account files (see accountdb.h).
 *
 * data is the file as it is on disk (a read-only mapping, so loading copies
 * nothing; cut short under us by a program that ignores the locks, it reads
 * as zeros instead of raising SIGBUS, and the load or the commit refuses
 * it: fileio.h, txn.h's expect) and starts say where each line begins in
 * it: 4 bytes a line, since every page a tool touches for the first time
 * costs it a page fault.  A line
 * becomes a record only when it is asked for (build): its bytes are copied
 * into the arena `chunks` (freed, wiped, only with the db, which keeps a
 * record's strings valid after a replace or a delete) and parsed there.  A
 * replaced or appended line has its own buffer (owned).  Every line nobody
 * asked for goes back to the file as the bytes it was: lines that lie one
 * after the other in data make one piece of the writev, so a file with one
 * changed line is written in two or three pieces, with no copy.
 *
 * Without HS_DB_LAZY every line is built at load (the checking tools want
 * every error) and the names are indexed to find duplicates.
 *
 * Lookups: the first few by name or by id scan the lines (names are the text
 * up to the first ':', ids the digits of the third field, neither parsed);
 * past that, a table (open addressing: the key's hash or the id, and the
 * line) is built once and kept exact: a delete, a rename or a renumbering
 * marks it stale, the next lookup rebuilds it. */
#include "accountdb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "fileio.h"
#include "globalfile.h"
#include "layout.h"
#include "util.h"

/* lookups answered by a scan before a table is built */
#define SCANS_BEFORE_TABLE 4

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

static bool has_id(enum hs_db_kind kind)
{
	return kind == HS_DB_PASSWD || kind == HS_DB_GROUP;
}

static unsigned long rec_id(enum hs_db_kind kind, const union hs_dbrec *rec)
{
	return kind == HS_DB_PASSWD ? rec->pw.uid : rec->gr.gid;
}

static const char *name_noun(enum hs_db_kind kind)
{
	return kind == HS_DB_GROUP || kind == HS_DB_GSHADOW ? "group" : "user";
}

__attribute__((format(printf, 2, 3)))
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

/* A line that does not parse: "PATH:LINE: invalid entry: REASON"; returns err. */
static int bad_line(struct hs_accountdb *db, unsigned long lineno, int err)
{
	set_error(db, "%s:%lu: invalid entry: %s", db_path(db), lineno, hs_strerror(err));
	return err;
}

/* ---------------------------------------------------------------- */
/* lines */

static bool is_built(const struct hs_accountdb *db, size_t i)
{
	return db->built[i >> 3] & (1u << (i & 7));
}

/* Line i < n_loaded as loaded: where it starts in data, and its length
 * without the newline (the next line starts one byte after its end). */
static const char *loaded_text(const struct hs_accountdb *db, size_t i, size_t *len)
{
	*len = db->starts[i + 1] - db->starts[i] - 1;
	return db->data + db->starts[i];
}

/* The current text of line i, built or not. */
static const char *text_of(const struct hs_accountdb *db, size_t i, size_t *len)
{
	if (is_built(db, i)) {
		*len = db->lines[i].len;
		return db->lines[i].text;
	}
	return loaded_text(db, i, len);
}

/* A NIS compat line, which is no entry (/etc/subuid and subgid have none). */
static bool is_nis(enum hs_db_kind kind, const char *text, size_t len)
{
	return kind != HS_DB_SUBID && hs_records_nis_line(text, len);
}

/* A line of the file as loaded that is neither blank nor a NIS line. */
static bool loaded_keyed(const struct hs_accountdb *db, size_t i)
{
	size_t len;
	const char *t = loaded_text(db, i, &len);

	return len > 0 && !is_nis(db->kind, t, len);
}

/* A line that may be an entry: built and parsed, or not built and not
 * blank (whether it parses is known once it is built). */
static bool maybe_live(const struct hs_accountdb *db, size_t i)
{
	if (is_built(db, i))
		return db->lines[i].entry && !db->lines[i].deleted;
	return loaded_keyed(db, i);
}

static bool is_deleted(const struct hs_accountdb *db, size_t i)
{
	return is_built(db, i) && db->lines[i].deleted;
}

/* A line whose first field the lookups by name consider: an entry, or a
 * line that does not parse (its name is taken all the same). */
static bool has_key(const struct hs_accountdb *db, size_t i)
{
	if (is_built(db, i))
		return !db->lines[i].deleted && (db->lines[i].entry || db->lines[i].err);
	return loaded_keyed(db, i);
}

/* Where the field that starts at t ends: a byte loop (fields are short,
 * a memchr call costs more). */
static const char *field_end(const char *t, const char *end)
{
	while (t < end && *t != ':')
		t++;
	return t;
}

static size_t key_len(const char *text, size_t len)
{
	return (size_t)(field_end(text, text + len) - text);
}

static bool key_is(const char *text, size_t len, const char *name, size_t nlen)
{
	return len > nlen && text[nlen] == ':' && memcmp(text, name, nlen) == 0;
}

/* The uid/gid of a line as loaded, t..end (no newline; the file's bytes
 * are readable up to lim): its third field when it is plain decimal, as
 * the parser wants it.  Inline: every line of the file comes through here
 * when an id is picked. */
__attribute__((always_inline))
static inline bool loaded_id(const char *t, const char *end, const char *lim, unsigned long *id)
{
	unsigned long v = 0;
	size_t digits = 0;

	if (t == end || hs_records_nis_line(t, 1))
		return false;
#if defined(__SSE2__)
	/* SSE2: the field ends (and the line's, bit len) among the first 32
	 * bytes as bits, where byte loops would stop on every byte of the
	 * name; the loops below take any other line */
	if (lim - t >= 32) {
		const __m128i colon = _mm_set1_epi8(':');
		uint64_t len = (uint64_t)(end - t), m = 0, m2, m3;

		for (int k = 0; k < 2; k++) {
			__m128i v16 = _mm_loadu_si128((const __m128i *)(const void *)(t + 16 * k));

			m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v16, colon)) << (16 * k);
		}
		if (len <= 32)
			m = (m & ((1ull << len) - 1)) | 1ull << len;
		m2 = m & (m - 1);       /* from the end of the second field */
		m3 = m2 & (m2 - 1);     /* from the end of the third */
		if (m3) {
			size_t from = (size_t)__builtin_ctzll(m2) + 1;
			uint64_t x, n = (uint64_t)__builtin_ctzll(m3) - from;

			if (n == 0 || n > 10)
				return false;
			if (n <= 8 && lim - t - from >= 8) {
				/* up to 8 digits at once (x86: little-endian): each
				 * byte's value less '0', the field's n bytes on top;
				 * a byte above 9 gets its top bit set by + 0x76 (or
				 * had it), then the value of each pair of digits and
				 * of each four */
				memcpy(&x, t + from, sizeof(x));
				x = (x ^ 0x3030303030303030ull) << (8 * (8 - n));
				if (((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull)
					return false;
				x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffull;
				x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffull;
				*id = (unsigned long)((x * 10000 + (x >> 32)) & 0xffffffffull);
				return true;
			}
		} else if (len <= 32) {
			return false;   /* fewer than two ':' */
		}
	}
#endif
	for (unsigned n = 0; n < 2; n++) {
		t = field_end(t, end);
		if (t == end)
			return false;
		t++;
	}
	for (; t < end && *t != ':'; t++, digits++) {
		if (*t < '0' || *t > '9' || digits == 10)
			return false;
		v = v * 10 + (unsigned long)(*t - '0');
	}
	if (digits == 0 || v > UINT32_MAX)
		return false;
	*id = v;
	return true;
}

/* The uid/gid of line i (third field of passwd and group). */
static bool line_id(const struct hs_accountdb *db, size_t i, unsigned long *id)
{
	const char *t;
	size_t len;

	if (!has_id(db->kind))
		return false;
	if (is_built(db, i)) {
		if (!maybe_live(db, i))
			return false;
		*id = rec_id(db->kind, &db->lines[i].rec);
		return true;
	}
	t = loaded_text(db, i, &len);
	return loaded_id(t, t + len, db->data + db->len, id);
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

/* Fill in line i from its span: text, line number and the record, parsed
 * from a copy of the line (copy: room for it, NULL: a new one in the
 * arena); a line that does not parse (or holds a NUL, which would hide
 * the rest of it from the parser) gets err instead.  NULL on ENOMEM. */
static struct hs_dbline *build_in(struct hs_accountdb *db, size_t i, char *copy)
{
	struct hs_dbline *l = &db->lines[i];

	if (is_built(db, i))
		return l;
	/* *l is zero: the line array is calloc'd or cleared when it grows */
	l->text = loaded_text(db, i, &l->len);
	l->lineno = i + 1;
	if (loaded_keyed(db, i)) {
		if (!copy)
			copy = chunk_alloc(db, l->len + 1);
		if (!copy) {
			set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(-ENOMEM));
			db->lost = -ENOMEM;
			return NULL;
		}
		memcpy(copy, l->text, l->len);
		copy[l->len] = '\0';
		l->err = memchr(copy, '\0', l->len) ? -HS_E_FIELD : rec_parse(db->kind, copy, &l->rec);
		if (l->err < 0) {
			memset(&l->rec, 0, sizeof(l->rec));
			db->n_entries--;
		} else {
			l->err = 0;
			l->entry = true;
		}
	}
	db->built[i >> 3] |= (unsigned char)(1u << (i & 7));
	return l;
}

static struct hs_dbline *build(struct hs_accountdb *db, size_t i)
{
	return build_in(db, i, NULL);
}

/* The line at idx built, when it is an entry; else -1, with db->error
 * naming a line that does not parse. */
static long entry_at(struct hs_accountdb *db, long idx)
{
	const struct hs_dbline *l;

	if (idx < 0)
		return -1;
	l = build(db, (size_t)idx);
	if (!l)
		return -1;
	if (l->err) {
		bad_line(db, l->lineno, l->err);
		return -1;
	}
	return l->entry && !l->deleted ? idx : -1;
}

/* The next built line at an index >= i, or to (<= n_lines) when none is
 * before it: whole bytes of the bitmap at a time. */
static size_t next_built(const struct hs_accountdb *db, size_t i, size_t to)
{
	uint64_t bits;

	while (i < to && !is_built(db, i)) {
		/* a run of the file as loaded is thousands of lines long:
		 * 64 at a time where their bits are in the bitmap */
		if ((i & 63) == 0 && to - i >= 64 &&
		    (memcpy(&bits, db->built + (i >> 3), sizeof(bits)), bits == 0))
			i += 64;
		else if ((i & 7) == 0 && db->built[i >> 3] == 0)
			i += 8;
		else
			i++;
	}
	return i < to ? i : to;
}

/* memmem for short patterns in big files.  glibc's memmem and a memchr on
 * the first byte are both slow here: every line of an account file has
 * the same few bytes (':', digits, lowercase letters), so a first-byte
 * filter stops on every line.  This one compares two bytes of s, the first
 * and the last that are not ':', against 64 positions at a time (GCC's
 * vector extension: SSE2 or NEON where there is one, plain code where
 * not) and checks the whole of s only where both match, byte by byte in a
 * block of 64 that has a candidate. */
typedef unsigned char hs_bytes16 __attribute__((vector_size(16)));

static const char *find_bytes(const char *hay, size_t len, const char *s, size_t slen)
{
	size_t a = 0, b = slen - 1;
	const char *p = hay, *last;
	hs_bytes16 want_a, want_b;

	if (slen == 0 || len < slen)
		return NULL;
	if (slen == 1)
		return memchr(hay, s[0], len);
	while (a + 1 < slen && s[a] == ':')
		a++;
	while (b > a && s[b] == ':')
		b--;
	if (b == a)
		b = a + 1 < slen ? slen - 1 : a;
	for (size_t k = 0; k < sizeof(want_a); k++) {
		want_a[k] = (unsigned char)s[a];
		want_b[k] = (unsigned char)s[b];
	}
	last = hay + len - slen;        /* the last place s can start */
	while (last - p >= 63) {
		const char *block_end = p + 64;
		hs_bytes16 any = { 0 };
		uint64_t w[2];

#pragma GCC unroll 4
		for (size_t q = 0; q < 64; q += 16) {
			hs_bytes16 at_a, at_b;

			memcpy(&at_a, p + q + a, sizeof(at_a));
			memcpy(&at_b, p + q + b, sizeof(at_b));
			any |= (hs_bytes16)(at_a == want_a) & (hs_bytes16)(at_b == want_b);
		}
		memcpy(w, &any, sizeof(w));
		if (!(w[0] | w[1]))
			p = block_end;
		for (; p < block_end; p++)
			if (p[a] == s[a] && p[b] == s[b] && memcmp(p, s, slen) == 0)
				return p;
	}
	for (; p <= last; p++)
		if (p[a] == s[a] && p[b] == s[b] && memcmp(p, s, slen) == 0)
			return p;
	return NULL;
}

/* The first line at an index >= from whose text holds the bytes s, among
 * the lines as loaded (whatever they are: the caller checks its hit) and
 * the built lines that pass ok. */
static long text_scan(const struct hs_accountdb *db, size_t from, const char *s, size_t slen,
		      bool (*ok)(const struct hs_accountdb *, size_t))
{
	size_t i = from;

	while (i < db->n_lines) {
		size_t b, lo, hi, off, len;
		const char *t, *hit;

		if (is_built(db, i)) {
			t = ok(db, i) ? text_of(db, i, &len) : NULL;
			if (t && find_bytes(t, len, s, slen))
				return (long)i;
			i++;
			continue;
		}
		/* lines i..b-1 are as loaded: their bytes lie in order in data */
		b = next_built(db, i, db->n_lines);
		off = db->starts[i];
		len = (b < db->n_loaded ? db->starts[b] : db->len) - off;
		hit = find_bytes(db->data + off, len, s, slen);
		if (!hit) {
			i = b;
			continue;
		}
		off = (size_t)(hit - db->data);
		for (lo = i, hi = b; hi - lo > 1; ) {   /* the last line starting <= off */
			size_t mid = lo + (hi - lo) / 2;

			if (db->starts[mid] <= off)
				lo = mid;
			else
				hi = mid;
		}
		return (long)lo;
	}
	return -1;
}

/* ---------------------------------------------------------------- */
/* lookup tables */

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;       /* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static size_t slot_of(uint32_t key, size_t mask)
{
	return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* The line holding key, or -1; with insert >= 0 that line goes in when
 * the key is absent.  In the name table (name not NULL) a slot with the
 * same hash is the name's only when the line's text starts with it; in
 * the id table the key is the id. */
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

/* (Re)build a table from every line that may be an entry (room for every
 * line, so appends fit without growing).  With dup, *dup gets the first
 * line whose name an earlier line has, and *first that line. */
static int table_build(struct hs_accountdb *db, bool ids, long *dup, long *first)
{
	struct hs_db_index *ix = ids ? &db->by_id : &db->by_name;
	size_t cap = 64;

	while (cap < 2 * (db->cap_lines + 1))
		cap *= 2;
	free(ix->slots);
	/* cleared by hand: a calloc'd page would fault twice, read then written */
	ix->slots = malloc(cap * sizeof(*ix->slots));
	if (ix->slots)
		memset(ix->slots, 0, cap * sizeof(*ix->slots));
	ix->cap = ix->slots ? cap : 0;
	ix->stale = !ix->slots;
	if (!ix->slots) {
		set_error(db, "cannot index %s: %s", db_path(db), hs_strerror(-ENOMEM));
		db->lost = -ENOMEM;
		return -ENOMEM;
	}
	for (size_t i = 0; i < db->n_lines; i++) {
		unsigned long id;
		const char *t;
		size_t len, klen;
		long other;

		if (ids) {
			if (line_id(db, i, &id))
				probe(db, ix, (uint32_t)id, NULL, 0, (long)i);
			continue;
		}
		if (!has_key(db, i))
			continue;
		t = text_of(db, i, &len);
		klen = key_len(t, len);
		other = probe(db, ix, hash_name(t, klen), t, klen, (long)i);
		if (other >= 0 && dup && *dup < 0) {
			*dup = (long)i;
			*first = other;
		}
	}
	return 0;
}

/* The first line keyed name, by a search of the file's bytes for the name
 * (a hit is a line that holds it somewhere; its first field decides). */
static long scan_name(const struct hs_accountdb *db, const char *name, size_t nlen)
{
	const char *t;
	size_t len;

	for (long i = 0; (i = text_scan(db, (size_t)i, name, nlen, has_key)) >= 0; i++) {
		t = text_of(db, i, &len);
		if (has_key(db, i) && key_is(t, len, name, nlen))
			return i;
	}
	return -1;
}

/* The first line with id: a search for ":ID" (the id's field follows a
 * ':'), each hit checked by line_id. */
static long scan_id(const struct hs_accountdb *db, unsigned long id)
{
	char pat[16];
	unsigned long other;
	int n = snprintf(pat, sizeof(pat), ":%lu", id);

	for (long i = 0; (i = text_scan(db, (size_t)i, pat, (size_t)n, maybe_live)) >= 0; i++)
		if (line_id(db, (size_t)i, &other) && other == id)
			return i;
	return -1;
}

/* The line of the name table or the id table that has key, by a scan for
 * the first lookups and by the table afterwards; -1 when none (or on
 * ENOMEM, with db->error set). */
static long lookup(struct hs_accountdb *db, bool ids, const char *name, size_t nlen,
		   unsigned long id)
{
	struct hs_db_index *ix = ids ? &db->by_id : &db->by_name;
	unsigned *scans = ids ? &db->id_scans : &db->name_scans;
	long i;

	if (!ids && nlen > 0 && nlen == db->absent_len && memcmp(name, db->absent, nlen) == 0)
		return -1;
	if ((!ix->slots || ix->stale) && ++*scans <= SCANS_BEFORE_TABLE) {
		if (ids)
			return scan_id(db, id);
		i = scan_name(db, name, nlen);
		if (i < 0 && nlen < sizeof(db->absent)) {
			memcpy(db->absent, name, nlen);
			db->absent_len = nlen;
		}
		return i;
	}
	if ((!ix->slots || ix->stale) && table_build(db, ids, NULL, NULL) < 0)
		return -1;
	return ids ? probe(db, ix, (uint32_t)id, NULL, 0, -1)
		   : probe(db, ix, hash_name(name, nlen), name, nlen, -1);
}

/* A new entry at line i: into the tables that are exact. */
static void tables_add(struct hs_accountdb *db, size_t i)
{
	const char *t;
	size_t len, klen;
	unsigned long id;

	if (db->by_name.slots && !db->by_name.stale) {
		t = text_of(db, i, &len);
		klen = key_len(t, len);
		probe(db, &db->by_name, hash_name(t, klen), t, klen, (long)i);
	}
	if (db->by_id.slots && !db->by_id.stale && line_id(db, i, &id))
		probe(db, &db->by_id, (uint32_t)id, NULL, 0, (long)i);
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

const char *hs_accountdb_loaded(const struct hs_accountdb *db, size_t *len)
{
	*len = db->len;
	return db->data;
}

void hs_accountdb_free(struct hs_accountdb *db)
{
	char error[sizeof(db->error)];

	if (!db)
		return;
	for (size_t i = 0; db->built && (i = next_built(db, i, db->n_lines)) < db->n_lines; i++)
		line_free(&db->lines[i]);
	if (db->mapped && db->len) {
		hs_fileio_unmap(db->data, db->len);
	} else if (!db->mapped && db->data) {
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
	if (db->starts_size)
		munmap(db->starts, db->starts_size);
	else
		free(db->starts);
	free(db->built);
	free(db->by_name.slots);
	free(db->by_id.slots);
	free(db->path);
	memcpy(error, db->error, sizeof(error));
	memset(db, 0, sizeof(*db));
	memcpy(db->error, error, sizeof(error));
}

/* Room for n lines in every per-line array.  The line array is calloc'd
 * and stays mostly untouched (only built lines are written): the kernel
 * maps a large calloc as zero pages it faults in only when touched. */
static int lines_room(struct hs_accountdb *db, size_t n)
{
	size_t cap = db->cap_lines ? db->cap_lines : n, old = db->cap_lines;
	struct hs_dbline *lines;
	unsigned char *built;

	if (n <= old)
		return 0;
	while (cap < n)
		cap *= 2;
	/* the first time calloc: untouched zero pages cost nothing */
	lines = old ? realloc(db->lines, cap * sizeof(*lines)) : calloc(cap, sizeof(*lines));
	if (lines)
		db->lines = lines;
	built = realloc(db->built, (cap + 7) / 8);
	if (built) {
		/* cleared even when lines failed: hs_accountdb_free reads
		 * the bitmap up to n_lines, which may already be past old */
		memset(built + (old + 7) / 8, 0, (cap + 7) / 8 - (old + 7) / 8);
		db->built = built;
	}
	if (!lines || !built)
		return -ENOMEM;
	if (old)
		memset(db->lines + old, 0, (cap - old) * sizeof(*lines));
	db->cap_lines = cap;
	return 0;
}

#if defined(__SSE2__)
/* Bit k set where byte k of the 64 at p is a newline: SSE2 (every x86-64)
 * packs a comparison into bits, where the vector extension alone leaves a
 * byte per position to step through. */
static inline uint64_t newlines64(const char *p)
{
	const __m128i nl = _mm_set1_epi8('\n');
	uint64_t m = 0;

	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));

		m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
	}
	return m;
}
#endif

/* 1 when a line whose first byte is c may be blank (c is its newline) or
 * a NIS line (hs_records_nis_line: '+' or '-'), else 0: the three bytes
 * are below 64, a bit each in a word. */
static inline size_t odd_first(unsigned char c)
{
	const uint64_t odd = 1ull << '\n' | 1ull << '+' | 1ull << '-';

	return (size_t)((odd >> (c & 63)) & (c < 64));
}

/* Room for the starts of n lines.  Every one of them is written at once,
 * so a big array is mapped with its pages in place: one mmap instead of
 * a page fault per page, which costs more (a lot more in a VM that
 * shadows page tables). */
static int starts_alloc(struct hs_accountdb *db, size_t n)
{
	size_t size = n * sizeof(*db->starts);
	void *p;

	if (n > SIZE_MAX / sizeof(*db->starts))
		return -ENOMEM;         /* a 32-bit size_t and a file of a GiB */
	if (size < 16 * 1024) {
		db->starts = malloc(size);
		return db->starts ? 0 : -ENOMEM;
	}
	/* the kernel rounds the length up to whole pages, here and in munmap */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	db->starts = p;
	db->starts_size = size;
	return 0;
}

/* More room for starts: for need of them, and at least twice the room
 * there is (a file whose lines are shorter than its first KiB's). */
static int starts_grow(struct hs_accountdb *db, size_t *room, size_t need)
{
	size_t n = need > 2 * *room ? need : 2 * *room, size = n * sizeof(*db->starts);
	void *p;

	if (n > SIZE_MAX / sizeof(*db->starts))
		return -ENOMEM;
	if (db->starts_size) {
		p = mremap(db->starts, db->starts_size, size, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			return -ENOMEM;
		db->starts_size = size;
	} else if (!(p = realloc(db->starts, size))) {
		return -ENOMEM;
	}
	db->starts = p;
	*room = n;
	return 0;
}

/* Line starts to make room for at first: the file's size over the mean
 * length of the lines of its first KiB, and an eighth more, so that one
 * pass finds them (account files are alike from line to line; the others
 * get more room as they go).  Taken as 8 bytes at least (no account line
 * is shorter than "a:x:1:"): a first KiB of blank lines would otherwise
 * have a file of long lines mapped at four times its size. */
static size_t starts_estimate(const char *data, size_t len)
{
	size_t sample = len < 1024 ? len : 1024, lines = 1, per_line;

	for (size_t i = 0; i < sample; i++)
		lines += data[i] == '\n';
	per_line = sample / lines > 8 ? sample / lines : 8;
	return len / per_line + len / per_line / 8 + 66;
}

/* Line n starts at start (room for it is the caller's). */
static inline void note_start(uint32_t *starts, size_t *n, const char *data, size_t start,
			      size_t *odd)
{
	starts[(*n)++] = (uint32_t)start;
	*odd += odd_first((unsigned char)data[start]);
}

/* Where every line of data starts, in one pass.  Every line of the file
 * goes through it, so it keeps its counts in locals and only notes
 * whether a line may be blank or NIS; the few files that have such lines
 * are looked at again.  The room is checked once a block of 64 bytes, not
 * once a line: a block starts at most 64 lines.  A file rewritten in place
 * meanwhile (by a writer that ignores the locks) may give other lines than
 * it had, never a write past the array. */
static int split_lines(struct hs_accountdb *db)
{
	const char *data = db->data;
	size_t start = 0, i = 0, len = db->len, n = 0, odd = 0;
	size_t room = starts_estimate(data, len);
	uint32_t *starts;
	int r = starts_alloc(db, room);

	if (r < 0)
		return r;
	starts = db->starts;
	/* data[start]: the line's first byte, or its newline when blank */
	while (i < len) {
		/* a block's 64 starts, then the last line's and the end */
		if (room - n < 66) {
			r = starts_grow(db, &room, n + 66);
			if (r < 0)
				return r;
			starts = db->starts;
		}
#if defined(__SSE2__)
		/* 64 bytes hold one or two lines: one short loop per
		 * block.  Other machines take the byte loop below. */
		if (len - i >= 64) {
			for (uint64_t m = newlines64(data + i); m; m &= m - 1) {
				note_start(starts, &n, data, start, &odd);
				start = i + (size_t)__builtin_ctzll(m) + 1;
			}
			i += 64;
			continue;
		}
#endif
		for (size_t block_end = len - i > 64 ? i + 64 : len; i < block_end; i++)
			if (data[i] == '\n') {
				note_start(starts, &n, data, start, &odd);
				start = i + 1;
			}
	}
	if (start < len)
		note_start(starts, &n, data, start, &odd);
	/* as if the last line had a newline: loaded_text's length works for it */
	starts[n] = (uint32_t)(start < len ? len + 1 : len);
	db->n_lines = db->n_loaded = db->n_entries = db->nis_first = n;
	/* blank and NIS lines are no entry; appends go before the first NIS
	 * line (backwards, so the last one found is the first) */
	for (size_t k = n; odd > 0 && k-- > 0; ) {
		size_t llen = starts[k + 1] - starts[k] - 1;

		if (llen == 0 || is_nis(db->kind, data + starts[k], llen)) {
			db->n_entries--;
			if (llen > 0)
				db->nis_first = k;
		}
	}
	/* room for a few appends before anything moves */
	db->cap_lines = 0;
	return lines_room(db, db->n_lines + 16);
}

/* Without HS_DB_LAZY: build every line, refuse a bad line or a duplicate
 * name unless the flags keep them. */
static int check_all(struct hs_accountdb *db, unsigned flags)
{
	/* one parse copy of the whole file */
	char *copy = chunk_alloc(db, db->len + 1);
	long dup = -1, first = -1;
	int r;

	if (!copy) {
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; i < db->n_lines; i++) {
		const struct hs_dbline *l = build_in(db, i, copy + db->starts[i]);

		if (!l)
			return -ENOMEM;
		if (l->err && !(flags & HS_DB_KEEP_BAD))
			return bad_line(db, l->lineno, l->err);
	}
	r = table_build(db, false, &dup, &first);
	if (r < 0 || dup < 0 || db->kind == HS_DB_SUBID || (flags & HS_DB_KEEP_DUPS))
		return r;
	set_error(db, "%s:%lu: duplicate %s name %s (also on line %lu)", db_path(db),
		  (unsigned long)dup + 1, name_noun(db->kind), rec_name(db->kind, &db->lines[dup].rec),
		  (unsigned long)first + 1);
	return -HS_E_FORMAT;
}

static int load_start(struct hs_accountdb *db, enum hs_db_kind kind, const char *path)
{
	memset(db, 0, sizeof(*db));
	db->kind = kind;
	db->default_mode = kind == HS_DB_SHADOW || kind == HS_DB_GSHADOW ? 0640 : 0644;
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

/* The end of both loads: r is the result of getting db->data; split and
 * check it, or free the db (keeping the message) on any failure. */
static int load_finish(struct hs_accountdb *db, unsigned flags, int r)
{
	if (r == 0 && db->len >= UINT32_MAX)
		r = -HS_E_TOOBIG;       /* starts are 32-bit offsets */
	if (r == 0)
		r = split_lines(db);
	if (r < 0)
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
	else if (!(flags & HS_DB_LAZY))
		r = check_all(db, flags);
	/* cut short under us after all (fileio.h): what was read is zeros */
	if (r >= 0 && db->mapped && hs_fileio_map_torn(db->data)) {
		r = -HS_E_CHANGED;
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
	}
	if (r < 0)
		hs_accountdb_free(db);
	return r;
}

int hs_accountdb_load_at(struct hs_accountdb *db, enum hs_db_kind kind, int dir_fd,
			 const char *path, unsigned flags)
{
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;
	const char *data = NULL, *slash;
	int r = load_start(db, kind, path);

	if (r < 0)
		return r;
	slash = strrchr(path, '/');
	if (dir_fd > 2 && slash) {
		r = hs_fileio_map_at(dir_fd, slash + 1, &ex, &data, &db->len, &db->on_disk);
		db->dir_fd = dir_fd;
	} else {
		r = hs_fileio_map_path(path, &ex, &data, &db->len, &db->on_disk);
	}
	db->data = (char *)data;
	if (r == -ENOENT && (flags & HS_DB_MISSING_OK)) {
		db->data = (char *)"";
		r = 0;
	} else if (r == 0) {
		db->present = db->data_on_disk = db->expect_on_disk = true;
	}
	db->mapped = r == 0;
	return load_finish(db, flags, r);
}

int hs_accountdb_load(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
		      unsigned flags)
{
	return hs_accountdb_load_at(db, kind, 0, path, flags);
}

int hs_accountdb_load_data(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
			   const char *data, size_t len, unsigned flags)
{
	int r = load_start(db, kind, path);

	if (r < 0)
		return r;
	if ((!data && len) || len >= UINT32_MAX)
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

void hs_accountdb_expect_as(struct hs_accountdb *db, const struct hs_accountdb *read)
{
	db->expect_on_disk = read->expect_on_disk;
	db->on_disk = read->on_disk;
}

/* ---------------------------------------------------------------- */
/* lookups */

/* A name with a ':' (or nothing) names no entry. */
static bool name_usable(const char *name, size_t *nlen)
{
	*nlen = strlen(name);
	return *nlen > 0 && !memchr(name, ':', *nlen);
}

long hs_accountdb_find(struct hs_accountdb *db, const char *name)
{
	size_t nlen;

	if (!db || !name || !db->lines || !name_usable(name, &nlen))
		return -1;
	return entry_at(db, lookup(db, false, name, nlen, 0));
}

long hs_accountdb_find_id(struct hs_accountdb *db, unsigned long id)
{
	if (!db || !has_id(db->kind) || !db->lines || id > UINT32_MAX)
		return -1;
	return entry_at(db, lookup(db, true, NULL, 0, id));
}

long hs_accountdb_find_next(struct hs_accountdb *db, const char *name, size_t from)
{
	size_t nlen, len;

	if (!db || !name || !db->lines || !name_usable(name, &nlen))
		return -1;
	for (size_t i = from; i < db->n_lines; i++) {
		const char *t = text_of(db, i, &len);

		if (has_key(db, i) && key_is(t, len, name, nlen) && entry_at(db, (long)i) >= 0)
			return (long)i;
	}
	return -1;
}

long hs_accountdb_dup_name(struct hs_accountdb *db, size_t idx)
{
	const char *t;
	size_t len;
	long first;

	if (!db || !db->lines || idx >= db->n_lines || !maybe_live(db, idx))
		return -1;
	t = text_of(db, idx, &len);
	first = entry_at(db, lookup(db, false, t, key_len(t, len), 0));
	return first >= 0 && (size_t)first != idx ? first : -1;
}

long hs_accountdb_dup_id(struct hs_accountdb *db, size_t idx)
{
	unsigned long id;
	long first;

	if (!db || !db->lines || idx >= db->n_lines || !line_id(db, idx, &id))
		return -1;
	first = hs_accountdb_find_id(db, id);
	return first >= 0 && (size_t)first != idx ? first : -1;
}

const union hs_dbrec *hs_accountdb_get(const struct hs_accountdb *cdb, size_t idx)
{
	/* building a line changes the db underneath (see the header) */
	struct hs_accountdb *db = (struct hs_accountdb *)cdb;
	struct hs_dbline *l;

	if (!db || !db->lines || idx >= db->n_lines || !maybe_live(db, idx))
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
			       size_t *flen)
{
	const char *t, *end;
	size_t len;

	if (!db || !db->lines || !flen || idx >= db->n_lines || !maybe_live(db, idx))
		return NULL;
	t = text_of(db, idx, &len);
	end = t + len;
	for (; n > 0; n--) {
		t = field_end(t, end);
		if (t == end)
			return NULL;
		t++;
	}
	*flen = (size_t)(field_end(t, end) - t);
	return t;
}

bool hs_accountdb_id(const struct hs_accountdb *db, size_t idx, unsigned long *id)
{
	if (!db || !db->lines || !id || idx >= db->n_lines)
		return false;
	return line_id(db, idx, id);
}

size_t hs_accountdb_ids(const struct hs_accountdb *db, size_t *from, unsigned long *ids,
			size_t n)
{
	size_t i = *from, got = 0;

	if (!db || !db->lines || !has_id(db->kind))
		return 0;
	while (i < db->n_lines && got < n) {
		if (is_built(db, i)) {
			got += line_id(db, i, &ids[got]);
			i++;
			continue;
		}
		/* lines i..b-1 as loaded, read in place with no call or bitmap
		 * check a line; at most n - got of them (the rest: next call) */
		size_t b = next_built(db, i, db->n_lines - i > n - got ? i + n - got : db->n_lines);

		for (; i < b; i++)
			got += loaded_id(db->data + db->starts[i], db->data + db->starts[i + 1] - 1,
					 db->data + db->len, &ids[got]);
	}
	*from = i;
	return got;
}

long hs_accountdb_find_text(const struct hs_accountdb *db, size_t from, const char *s,
                            size_t slen)
{
	if (!db || !db->lines || !s || slen == 0)
		return -1;
	return text_scan(db, from, s, slen, maybe_live);
}

/* ---------------------------------------------------------------- */
/* edits */

/* Format rec into a new line: l gets text, len, owned and the parsed rec. */
static int make_line(struct hs_accountdb *db, const void *rec, struct hs_dbline *l,
		     const char *what)
{
	_cleanup_secret_ char *fmt = NULL;
	char *buf;
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
		set_error(db, "cannot %s %s: %s", what, db_path(db), hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	memcpy(buf, fmt, len + 1);
	memcpy(buf + len + 1, fmt, len);
	buf[2 * len + 1] = '\0';
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

/* -EEXIST when a live entry other than idx (-1: any) has this name; the
 * parse error when a line with this name does not parse. */
static int check_name_free(struct hs_accountdb *db, const char *name, long idx, const char *what)
{
	long other;

	if (db->kind == HS_DB_SUBID)
		return 0;
	other = lookup(db, false, name, strlen(name), 0);
	if (other < 0 || other == idx)
		return 0;
	if (!build(db, (size_t)other))
		return -ENOMEM;
	if (db->lines[other].err)
		return bad_line(db, (unsigned long)other + 1, db->lines[other].err);
	set_error(db, "cannot %s %s: %s name %s already exists", what, db_path(db),
		  name_noun(db->kind), name);
	return -EEXIST;
}

int hs_accountdb_replace(struct hs_accountdb *db, size_t idx, const void *rec)
{
	struct hs_dbline nl;
	struct hs_dbline *l;
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
	if (!was_live || (has_id(db->kind) &&
			  rec_id(db->kind, &l->rec) != rec_id(db->kind, &nl.rec)))
		db->by_id.stale = true;
	nl.lineno = l->lineno;
	line_free(l);
	*l = nl;
	db->absent_len = 0;
	if (!was_live)
		db->n_entries++;
	db->dirty = true;
	return 0;
}

long hs_accountdb_append(struct hs_accountdb *db, const void *rec)
{
	struct hs_dbline nl;
	size_t i;
	int r;

	if (!db || !rec || !db->lines)
		return -EINVAL;
	r = make_line(db, rec, &nl, "add to");
	if (r < 0)
		return r;
	r = check_name_free(db, rec_name(db->kind, &nl.rec), -1, "add to");
	if (r == 0 && db->n_lines + 1 > db->cap_lines) {
		r = lines_room(db, db->n_lines + 1);
		/* the tables have room for cap_lines */
		db->by_name.stale = db->by_id.stale = true;
		if (r < 0)
			set_error(db, "cannot add to %s: %s", db_path(db), hs_strerror(r));
	}
	if (r < 0) {
		line_free(&nl);
		return r;
	}
	i = db->n_lines++;
	db->lines[i] = nl;
	db->absent_len = 0;
	db->built[i >> 3] |= (unsigned char)(1u << (i & 7));
	db->n_entries++;
	db->dirty = true;
	tables_add(db, i);
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
		db->by_id.stale = true;
	}
	/* a line that does not parse has its name in the name table too */
	if (l->entry || l->err)
		db->by_name.stale = true;
	l->deleted = true;
	db->dirty = true;
	db->absent_len = 0;
	return 0;
}

/* ---------------------------------------------------------------- */
/* output */

/* The pieces being gathered: a run is bytes of data not yet emitted. */
struct piece_list {
	const struct hs_accountdb *db;
	struct iovec *iov;      /* NULL: only count */
	size_t n, total;
	const char *run, *run_end;
};

static void piece_add(struct piece_list *pl, const char *p, size_t len)
{
	if (pl->iov)
		pl->iov[pl->n] = (struct iovec){ .iov_base = (void *)p, .iov_len = len };
	pl->n++;
	pl->total += len;
}

/* End the current run: with its newline, or with one added for the last
 * line of a file that has none. */
static void piece_flush(struct piece_list *pl)
{
	const char *data_end = pl->db->data + pl->db->len;

	if (pl->run && pl->run_end < data_end) {
		piece_add(pl, pl->run, (size_t)(pl->run_end + 1 - pl->run));
	} else if (pl->run) {
		piece_add(pl, pl->run, (size_t)(pl->run_end - pl->run));
		piece_add(pl, "\n", 1);
	}
	pl->run = NULL;
}

/* Text t (one line, or several as loaded, without the last newline) goes
 * next: it extends the run when it follows it in data. */
static void piece_text(struct piece_list *pl, const char *t, size_t len)
{
	if (pl->run && t == pl->run_end + 1 && pl->run_end < pl->db->data + pl->db->len) {
		pl->run_end = t + len;
		return;
	}
	piece_flush(pl);
	/* t lies in data (an unsigned difference: one compare for both ends) */
	if ((uintptr_t)t - (uintptr_t)pl->db->data < pl->db->len) {
		pl->run = t;
		pl->run_end = t + len;
	} else {
		piece_add(pl, t, len + 1);      /* "TEXT\n" in its own buffer */
	}
}

/* Lines [from, to) in order.  Lines nobody built lie one after the other in
 * data: a stretch of them is one text, found a bitmap byte at a time, so an
 * untouched file costs a pass over the bitmap, not over its lines. */
static void piece_lines(struct piece_list *pl, size_t from, size_t to)
{
	const struct hs_accountdb *db = pl->db;
	size_t i = from, len;

	while (i < to) {
		if (is_built(db, i)) {
			const char *t = is_deleted(db, i) ? NULL : text_of(db, i, &len);

			if (t)
				piece_text(pl, t, len);
			i++;
			continue;
		}
		size_t b = next_built(db, i, to);
		/* up to the newline of line b - 1 */
		piece_text(pl, db->data + db->starts[i], db->starts[b] - 1 - db->starts[i]);
		i = b;
	}
}

/* The file's new contents as pieces to write one after the other: when
 * unchanged, the bytes as loaded; else each line with its newline: the
 * loaded lines before the first NIS line, the appended lines, then the
 * rest of the loaded lines.  Fills iov when not NULL; returns the number
 * of pieces and *total the bytes. */
static size_t pieces(const struct hs_accountdb *db, struct iovec *iov, size_t *total)
{
	struct piece_list pl = { .db = db, .iov = iov };

	if (db->dirty) {
		piece_lines(&pl, 0, db->nis_first);
		piece_lines(&pl, db->n_loaded, db->n_lines);
		piece_lines(&pl, db->nis_first, db->n_loaded);
		piece_flush(&pl);
	} else if (db->len) {
		piece_add(&pl, db->data, db->len);
	}
	*total = pl.total;
	return pl.n;
}

/* The new contents as a malloc'd array of pieces (*iov NULL and 0 pieces
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

int hs_accountdb_serialize(const struct hs_accountdb *db, struct hs_buf *out)
{
	_cleanup_free_ struct iovec *iov = NULL;
	size_t n, total;
	int r;

	if (!db || !out)
		return -EINVAL;
	if (db->lost)
		return db->lost;
	r = pieces_alloc(db, &iov, &n, &total);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = hs_strbuf_append(out, iov[i].iov_base, iov[i].iov_len);
	return r;
}

int hs_accountdb_write_set(struct hs_accountdb *const dbs[], size_t n, size_t *failed)
{
	struct hs_global_file files[HS_ACCOUNTDB_SET_MAX] = { { 0 } };
	struct iovec *iovs[HS_ACCOUNTDB_SET_MAX] = { NULL };
	char err[sizeof(dbs[0]->error)];
	size_t i, total, ignored;
	int r = 0;

	if (!failed)
		failed = &ignored;
	*failed = 0;
	if (n > HS_ACCOUNTDB_SET_MAX || (n && !dbs))
		return -EINVAL;
	/* straight from the mapping and the new lines, and the backup
	 * (PATH-) from the mapping while it is what the file holds */
	for (i = 0; i < n; i++) {
		struct hs_accountdb *db = dbs[i];

		if (!db || !db->path) {
			r = -EINVAL;
			goto out;
		}
		files[i] = (struct hs_global_file){
			.path = db->path, .uid = db->default_uid, .gid = db->default_gid,
			.mode = db->default_mode,
			.old_data = db->data_on_disk ? db->data : NULL,
			.old_len = db->data_on_disk ? db->len : 0,
			/* the file must still be the one the lines came from
			 * (mapped, or hs_accountdb_expect_as): nobody rewrote
			 * it in place under the lines we pass on */
			.expect = db->expect_on_disk ? &db->on_disk : NULL,
		};
		/* a mapping cut short (fileio.h) holds zeros, not the file */
		if (db->lost)
			r = db->lost;
		else if (db->mapped && hs_fileio_map_torn(db->data))
			r = -HS_E_CHANGED;
		else
			r = pieces_alloc(db, &iovs[i], &files[i].n_iov, &total);
		files[i].iov = iovs[i];
		if (r < 0) {
			set_error(db, "cannot write %s: %s", db->path, hs_strerror(r));
			*failed = i;
			goto out;
		}
	}
	/* through the directory the dbs were loaded through, when they share one */
	for (i = 0; i < n; i++)
		if (dbs[i]->dir_fd != dbs[0]->dir_fd)
			break;
	r = hs_globalfile_commit(n && i == n ? dbs[0]->dir_fd : 0, files, n, err, sizeof(err),
				 failed);
	if (r < 0) {
		/* no one file's failure (the journal): told in the first one */
		i = *failed < n ? *failed : 0;
		snprintf(dbs[i]->error, sizeof(dbs[i]->error), "%s", err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		dbs[i]->present = true;
		dbs[i]->data_on_disk = false;
		dbs[i]->expect_on_disk = false;
	}
out:
	for (i = 0; i < n; i++)
		free(iovs[i]);
	return r;
}

int hs_accountdb_write(struct hs_accountdb *db)
{
	return hs_accountdb_write_set(&db, 1, NULL);
}
