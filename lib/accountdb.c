/* The line-file model of the global account files (see accountdb.h).
 *
 * Memory: data is the file as read (the original bytes every untouched
 * line is written back from), copy is a second image that the records.c
 * parsers cut up in place, so a record's strings point into copy.  A
 * replaced or appended line gets its own buffer (owned) holding its text
 * and its parse copy.  Everything is wiped on free: shadow and gshadow
 * hold hashes, and wiping the others too costs nothing worth saving.
 *
 * Lookups go through two open-addressing hash tables (name, id) whose
 * slots hold line indexes, so no key is stored twice.  A delete or a
 * rename only marks them stale; the next lookup rebuilds them in O(n).
 * That keeps every edit O(1) and the tables always exact, which matters
 * more than the rebuild for tools that make a handful of edits. */
#include "accountdb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---------------------------------------------------------------- */
/* per-kind dispatch */

static int rec_parse(enum hs_db_kind kind, char *line, union hs_dbrec *rec)
{
	switch (kind) {
	case HS_DB_PASSWD:  return hs_passwd_parse(line, &rec->pw);
	case HS_DB_SHADOW:  return hs_spwd_parse(line, &rec->sp);
	case HS_DB_GROUP:   return hs_group_parse(line, &rec->gr);
	case HS_DB_GSHADOW: return hs_gshadow_parse(line, &rec->gs);
	case HS_DB_SUBID:   return hs_subid_parse(line, &rec->sub);
	}
	return -EINVAL;
}

static int rec_format(enum hs_db_kind kind, const void *rec, char **out)
{
	switch (kind) {
	case HS_DB_PASSWD:  return hs_passwd_format(rec, out);
	case HS_DB_SHADOW:  return hs_spwd_format(rec, out);
	case HS_DB_GROUP:   return hs_group_format(rec, out);
	case HS_DB_GSHADOW: return hs_gshadow_format(rec, out);
	case HS_DB_SUBID:   return hs_subid_format(rec, out);
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
/* indexes */

static uint64_t hash_bytes(const char *s)
{
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t hash_id(unsigned long id)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;

	return h ^ (h >> 29);
}

static bool line_live(const struct hs_dbline *l)
{
	return l->entry && !l->deleted;
}

/* Find key in the table (by_id when id_table); with insert_idx >= 0 put
 * that line in when the key is absent.  Returns the line already holding
 * the key, or -1. */
static long index_probe(struct hs_accountdb *db, bool id_table, const char *name,
			unsigned long id, long insert_idx)
{
	struct hs_db_index *ix = id_table ? &db->by_id : &db->by_name;
	size_t mask = ix->cap - 1;
	size_t i = (size_t)(id_table ? hash_id(id) : hash_bytes(name)) & mask;

	for (;; i = (i + 1) & mask) {
		size_t slot = ix->slots[i];
		const union hs_dbrec *rec;
		unsigned long other;

		if (slot == 0) {
			if (insert_idx >= 0) {
				ix->slots[i] = (size_t)insert_idx + 1;
				ix->used++;
			}
			return -1;
		}
		rec = &db->lines[slot - 1].rec;
		if (id_table ? (rec_id(db->kind, rec, &other) && other == id)
			     : strcmp(rec_name(db->kind, rec), name) == 0)
			return (long)(slot - 1);
	}
}

static int index_alloc(struct hs_db_index *ix, size_t n)
{
	size_t cap = 64;

	while (cap < 4 * n + 16)
		cap *= 2;
	free(ix->slots);
	ix->slots = calloc(cap, sizeof(*ix->slots));
	ix->cap = ix->slots ? cap : 0;
	ix->used = 0;
	return ix->slots ? 0 : -ENOMEM;
}

/* Insert line idx into both tables; returns the earlier line with the
 * same name (or -1).  Tables must have room. */
static long index_add(struct hs_accountdb *db, size_t idx)
{
	const union hs_dbrec *rec = &db->lines[idx].rec;
	unsigned long id;

	if (rec_id(db->kind, rec, &id))
		index_probe(db, true, NULL, id, (long)idx);
	return index_probe(db, false, rec_name(db->kind, rec), 0, (long)idx);
}

static int index_rebuild(struct hs_accountdb *db)
{
	int r = index_alloc(&db->by_name, db->n_lines);

	if (r == 0 && has_id(db->kind))
		r = index_alloc(&db->by_id, db->n_lines);
	if (r < 0) {
		set_error(db, "cannot index %s: %s", db_path(db), hs_strerror(r));
		return r;
	}
	for (size_t i = 0; i < db->n_lines; i++)
		if (line_live(&db->lines[i]))
			index_add(db, i);
	db->index_stale = false;
	return 0;
}

static bool index_full(const struct hs_db_index *ix)
{
	return 2 * (ix->used + 1) > ix->cap;
}

static int index_ready(struct hs_accountdb *db)
{
	if (!db->index_stale && db->by_name.cap && !index_full(&db->by_name) &&
	    (!has_id(db->kind) || !index_full(&db->by_id)))
		return 0;
	return index_rebuild(db);
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
	for (size_t i = 0; i < db->n_lines; i++)
		line_free(&db->lines[i]);
	if (db->data) {
		hs_wipe(db->data, db->len);
		free(db->data);
	}
	if (db->copy) {
		hs_wipe(db->copy, db->len + 1);
		free(db->copy);
	}
	if (db->lines) {
		hs_wipe(db->lines, db->cap_lines * sizeof(*db->lines));
		free(db->lines);
	}
	free(db->by_name.slots);
	free(db->by_id.slots);
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

/* Parse the lines of db->data (already set); db->path set. */
static int parse_all(struct hs_accountdb *db, unsigned flags)
{
	struct hs_line_iter it;
	const char *line;
	size_t llen, n = 0;
	int r;

	hs_line_iter_init(&it, db->data, db->len);
	while (hs_line_next(&it, &line, &llen))
		n++;
	db->copy = malloc(db->len + 1);
	db->lines = calloc(n ? n : 1, sizeof(*db->lines));
	db->cap_lines = n ? n : 1;
	if (!db->copy || !db->lines) {
		r = -ENOMEM;
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
		return r;
	}
	memcpy(db->copy, db->data, db->len);
	db->copy[db->len] = '\0';
	if ((r = index_alloc(&db->by_name, n)) < 0 ||
	    (has_id(db->kind) && (r = index_alloc(&db->by_id, n)) < 0)) {
		set_error(db, "cannot read %s: %s", db_path(db), hs_strerror(r));
		return r;
	}

	hs_line_iter_init(&it, db->data, db->len);
	while (db->n_lines < n && hs_line_next(&it, &line, &llen)) {
		size_t off = (size_t)(line - db->data);
		struct hs_dbline *l = &db->lines[db->n_lines];
		long first;

		l->text = line;
		l->len = llen;
		l->lineno = db->n_lines + 1;
		db->n_lines++;
		db->copy[off + llen] = '\0';
		if (llen == 0)
			continue;  /* blank: kept verbatim, no entry */
		/* a NUL would hide the rest of the line from the parser while
		 * the original bytes, NUL and all, went back to the file */
		r = memchr(line, '\0', llen) ? -HS_E_FIELD : rec_parse(db->kind, db->copy + off, &l->rec);
		if (r < 0) {
			if (flags & HS_DB_KEEP_BAD) {
				memset(&l->rec, 0, sizeof(l->rec));
				l->err = r;
				continue;
			}
			set_error(db, "%s:%lu: invalid entry: %s", db_path(db), l->lineno,
				  hs_strerror(r));
			return r;
		}
		l->entry = true;
		db->n_entries++;
		first = index_add(db, db->n_lines - 1);
		if (first >= 0 && db->kind != HS_DB_SUBID && !(flags & HS_DB_KEEP_DUPS)) {
			set_error(db, "%s:%lu: duplicate %s name %s (also on line %lu)", db_path(db),
				  l->lineno, name_noun(db->kind), rec_name(db->kind, &l->rec),
				  db->lines[first].lineno);
			return -HS_E_FORMAT;
		}
	}
	return 0;
}

static int load_start(struct hs_accountdb *db, enum hs_db_kind kind, const char *path)
{
	memset(db, 0, sizeof(*db));
	db->kind = kind;
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

int hs_accountdb_load(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
		      unsigned flags)
{
	int r = load_start(db, kind, path);

	if (r < 0)
		return r;
	r = hs_global_read(path, &db->data, &db->len);
	if (r == -ENOENT && (flags & HS_DB_MISSING_OK)) {
		db->data = strdup("");
		db->len = 0;
		r = db->data ? 0 : -ENOMEM;
	} else if (r == 0) {
		db->present = true;
	}
	if (r < 0) {
		set_error(db, "cannot read %s: %s", path, hs_strerror(r));
		goto fail;
	}
	if ((r = parse_all(db, flags)) < 0)
		goto fail;
	return 0;
fail:
	hs_accountdb_free(db);
	return r;
}

int hs_accountdb_load_data(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
			   const char *data, size_t len, unsigned flags)
{
	int r = load_start(db, kind, path);

	if (r < 0)
		return r;
	if (!data && len) {
		r = -EINVAL;
		set_error(db, "cannot read %s: %s", path, hs_strerror(r));
		goto fail;
	}
	db->data = malloc(len + 1);
	if (!db->data) {
		r = -ENOMEM;
		set_error(db, "cannot read %s: %s", path, hs_strerror(r));
		goto fail;
	}
	if (len)
		memcpy(db->data, data, len);
	db->data[len] = '\0';
	db->len = len;
	db->present = true;
	if ((r = parse_all(db, flags)) < 0)
		goto fail;
	return 0;
fail:
	hs_accountdb_free(db);
	return r;
}

/* ---------------------------------------------------------------- */
/* lookups */

long hs_accountdb_find(struct hs_accountdb *db, const char *name)
{
	if (!db || !name || !db->lines || index_ready(db) < 0)
		return -1;
	return index_probe(db, false, name, 0, -1);
}

long hs_accountdb_find_id(struct hs_accountdb *db, unsigned long id)
{
	if (!db || !has_id(db->kind) || !db->lines || index_ready(db) < 0)
		return -1;
	return index_probe(db, true, NULL, id, -1);
}

long hs_accountdb_dup_name(struct hs_accountdb *db, size_t idx)
{
	long first;

	if (!db || idx >= db->n_lines || !line_live(&db->lines[idx]))
		return -1;
	first = hs_accountdb_find(db, rec_name(db->kind, &db->lines[idx].rec));
	return first >= 0 && (size_t)first != idx ? first : -1;
}

long hs_accountdb_dup_id(struct hs_accountdb *db, size_t idx)
{
	unsigned long id;
	long first;

	if (!db || idx >= db->n_lines || !line_live(&db->lines[idx]) ||
	    !rec_id(db->kind, &db->lines[idx].rec, &id))
		return -1;
	first = hs_accountdb_find_id(db, id);
	return first >= 0 && (size_t)first != idx ? first : -1;
}

const union hs_dbrec *hs_accountdb_get(const struct hs_accountdb *db, size_t idx)
{
	if (!db || idx >= db->n_lines || !line_live(&db->lines[idx]))
		return NULL;
	return &db->lines[idx].rec;
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
	if (index_ready(db) < 0)
		return -ENOMEM;
	other = index_probe(db, false, name, 0, -1);
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

	if (!db || !rec || idx >= db->n_lines || db->lines[idx].deleted)
		return -EINVAL;
	r = make_line(db, rec, &nl, "update");
	if (r < 0)
		return r;
	l = &db->lines[idx];
	was_live = line_live(l);
	/* renaming to a taken name, or reviving a bad line with one */
	if (!was_live || strcmp(rec_name(db->kind, &l->rec), rec_name(db->kind, &nl.rec)) != 0) {
		r = check_name_free(db, rec_name(db->kind, &nl.rec), (long)idx, "update");
		if (r < 0) {
			line_free(&nl);
			return r;
		}
		db->index_stale = true;
	}
	if (was_live && rec_id(db->kind, &l->rec, &old_id) && rec_id(db->kind, &nl.rec, &new_id) &&
	    old_id != new_id)
		db->index_stale = true;
	nl.lineno = l->lineno;
	line_free(l);
	*l = nl;
	if (!was_live)
		db->n_entries++;
	db->dirty = true;
	return 0;
}

long hs_accountdb_append(struct hs_accountdb *db, const void *rec)
{
	struct hs_dbline nl;
	int r;

	if (!db || !rec || !db->lines)
		return -EINVAL;
	r = make_line(db, rec, &nl, "add to");
	if (r < 0)
		return r;
	r = check_name_free(db, rec_name(db->kind, &nl.rec), -1, "add to");
	if (r < 0) {
		line_free(&nl);
		return r;
	}
	if (db->n_lines == db->cap_lines) {
		size_t ncap = 2 * db->cap_lines;
		/* not realloc: lines of a shadow file point at hashes only,
		 * but wiping the old array is as cheap as not thinking about it */
		struct hs_dbline *nls = calloc(ncap, sizeof(*nls));

		if (!nls) {
			line_free(&nl);
			set_error(db, "cannot add to %s: %s", db_path(db), hs_strerror(-ENOMEM));
			return -ENOMEM;
		}
		memcpy(nls, db->lines, db->n_lines * sizeof(*nls));
		hs_wipe(db->lines, db->cap_lines * sizeof(*db->lines));
		free(db->lines);
		db->lines = nls;
		db->cap_lines = ncap;
	}
	db->lines[db->n_lines++] = nl;
	db->n_entries++;
	db->dirty = true;
	if (!db->index_stale && !index_full(&db->by_name) &&
	    (!has_id(db->kind) || !index_full(&db->by_id)))
		index_add(db, db->n_lines - 1);
	else
		db->index_stale = true;
	return (long)(db->n_lines - 1);
}

int hs_accountdb_delete(struct hs_accountdb *db, size_t idx)
{
	struct hs_dbline *l;

	if (!db || idx >= db->n_lines || db->lines[idx].deleted)
		return -EINVAL;
	l = &db->lines[idx];
	if (line_live(l)) {
		db->n_entries--;
		db->index_stale = true;
	}
	l->deleted = true;
	db->dirty = true;
	return 0;
}

/* ---------------------------------------------------------------- */
/* output */

int hs_accountdb_serialize(const struct hs_accountdb *db, struct hs_buf *out)
{
	int r = 0;

	if (!db || !out)
		return -EINVAL;
	if (!db->dirty)
		return db->len ? hs_buf_append(out, db->data, db->len) : 0;
	for (size_t i = 0; r == 0 && i < db->n_lines; i++) {
		const struct hs_dbline *l = &db->lines[i];

		if (l->deleted)
			continue;
		r = hs_buf_append(out, l->text, l->len);
		if (r == 0)
			r = hs_buf_append(out, "\n", 1);
	}
	return r;
}

int hs_accountdb_write(struct hs_accountdb *db)
{
	struct hs_buf b = { 0 };
	int r;

	if (!db || !db->path)
		return -EINVAL;
	r = hs_accountdb_serialize(db, &b);
	if (r == 0)
		r = hs_global_replace(db->path, b.data ? b.data : "", b.len, db->default_uid,
				      db->default_gid, db->default_mode);
	if (r < 0)
		set_error(db, "cannot write %s: %s", db->path, hs_strerror(r));
	else
		db->present = true;
	hs_buf_free(&b);
	return r;
}
