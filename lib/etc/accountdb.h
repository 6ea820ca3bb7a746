/* In-memory model of one global account file: /etc/passwd, /etc/shadow,
 * /etc/group, /etc/gshadow, /etc/subuid or /etc/subgid.  The one place that
 * turns those files into records and back (parsing and formatting are
 * lib/format/records.c's); every tool that reads or rewrites them goes through it.
 *
 * Model: the file is an array of lines.  Every line keeps its original
 * bytes; a line is re-formatted only when it is replaced, so serializing
 * gives every untouched line back byte for byte.  Indexes into db->lines
 * stay valid for the life of the db (deleted lines stay as tombstones and
 * are skipped on output); pointers into db->lines do NOT survive an
 * append (the array may move).
 *
 * Usage under the locks (lib/etc/globalfile.h):
 *     struct hs_accountdb db = HS_ACCOUNTDB_INIT;
 *     if (hs_accountdb_load(&db, HS_DB_PASSWD, HS_ETC_PASSWD, 0) < 0)
 *             hs_die(1, "%s", db.error);
 *     long i = hs_accountdb_find(&db, "alice");
 *     struct hs_passwd p = db.lines[i].rec.pw;  p.shell = "/bin/zsh";
 *     hs_accountdb_replace(&db, i, &p);
 *     if (hs_accountdb_write(&db) < 0) hs_warn("%s", db.error);
 *     hs_accountdb_free(&db);
 *
 * Every function that fails leaves a one-line message naming the file
 * (and line) in db->error, ready for hs_warn("%s", db->error).
 *
 * Lazy loading (HS_DB_LAZY, for the tools that touch a few entries:
 * useradd, usermod, userdel, the group tools): a line is parsed only when
 * it is asked for, so db->lines[i] is filled in only for a line that
 * hs_accountdb_get, find, find_id, find_next, dup_name, dup_id, replace,
 * delete or append returned or touched.  Lines nobody asks for are not
 * checked: they go back to the file as the bytes they were.  A lookup
 * that meets a line that does not parse finds nothing and leaves
 * "PATH:LINE: invalid entry: REASON" in db->error; replace and append
 * refuse a name such a line has.  A lookup that runs out of memory also
 * finds nothing; the db is then written no more (-ENOMEM), as the
 * caller may have acted on that answer.  Read any other line through
 * hs_accountdb_get (or hs_accountdb_text / hs_accountdb_id, which never
 * build a record), never through db->lines directly. */
#ifndef HS_ACCOUNTDB_H
#define HS_ACCOUNTDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "globalfile.h"
#include "records.h"

enum hs_db_kind {
	HS_DB_PASSWD,   /* struct hs_passwd, key name, id uid */
	HS_DB_SHADOW,   /* struct hs_spwd, key name */
	HS_DB_GROUP,    /* struct hs_group, key name, id gid */
	HS_DB_GSHADOW,  /* struct hs_gshadow, key name */
	HS_DB_SUBID,    /* struct hs_subid (/etc/subuid, /etc/subgid), key owner;
	                 * an owner may have several ranges, so duplicate keys are
	                 * normal here and never an error */
};

/* Load flags. */
enum {
	/* A missing file is an empty db (present = false) instead of -ENOENT;
	 * writing it creates the file with the default owner and mode. */
	HS_DB_MISSING_OK = 1 << 0,
	/* A line that does not parse is kept verbatim (entry = false,
	 * err = the parse error) instead of failing the load: for pwck/grpck,
	 * which must report rather than refuse. */
	HS_DB_KEEP_BAD = 1 << 1,
	/* A second line with a name already seen is kept as an entry (find
	 * returns the first; hs_accountdb_dup_name tells) instead of failing
	 * the load. */
	HS_DB_KEEP_DUPS = 1 << 2,
	HS_DB_LENIENT = HS_DB_KEEP_BAD | HS_DB_KEEP_DUPS,
	/* Parse lines on first access (see the top of this file). */
	HS_DB_LAZY = 1 << 3,
};

union hs_dbrec {
	struct hs_passwd pw;
	struct hs_spwd sp;
	struct hs_group gr;
	struct hs_gshadow gs;
	struct hs_subid sub;
};

struct hs_dbline {
	const char *text;       /* the line without its newline; not NUL-terminated
	                         * (may hold a NUL in a kept bad line) */
	size_t len;
	unsigned long lineno;   /* 1-based line as loaded; 0 for an appended line */
	int err;                /* HS_DB_KEEP_BAD: why this line did not parse; else 0 */
	bool entry;             /* rec holds the parsed record */
	bool deleted;           /* tombstone, not written */
	union hs_dbrec rec;     /* valid when entry; strings owned by the db.  The
	                         * strings of a record parsed from the file (at
	                         * load, or on first access with HS_DB_LAZY) stay
	                         * valid (and unchanged) until hs_accountdb_free,
	                         * even after the line is replaced or deleted;
	                         * those of a replaced or appended record only
	                         * until the line is replaced again */
	char *owned;            /* private: storage of a replaced or appended line */
};

struct hs_db_slot {             /* private */
	unsigned int key;       /* the name's hash, or the id itself */
	unsigned int line;      /* line index + 1; 0 = empty */
};
struct hs_db_index {            /* private: open addressing, linear probing */
	struct hs_db_slot *slots;
	size_t cap;
	bool stale;             /* rebuild before the next lookup */
};
struct hs_db_chunk;

struct hs_accountdb {
	enum hs_db_kind kind;
	char *path;             /* where it was read from and is written to */
	bool present;           /* the file existed when loaded */
	bool dirty;             /* changed since loaded (or since the last write) */
	struct hs_dbline *lines;
	size_t n_lines;         /* including blank, bad and deleted lines */
	size_t n_entries;       /* live records (HS_DB_LAZY: lines not known bad) */
	/* owner and mode for a file that does not exist yet (an existing
	 * file keeps its own); set from the kind at load, callers may change
	 * them before hs_accountdb_write */
	uid_t default_uid;
	gid_t default_gid;
	mode_t default_mode;
	char error[512];
	/* private */
	char *data;             /* the file as read: mapped, or malloc'd (load_data) */
	size_t len, cap_lines;
	size_t n_loaded;        /* lines of the file as loaded; appended lines follow */
	size_t nis_first;       /* the first NIS compat line as loaded, else n_loaded:
	                         * appended lines are written before it */
	bool mapped;
	bool data_on_disk;      /* data is what the file holds (loaded, not written since) */
	bool expect_on_disk;    /* the write goes ahead only while path is still on_disk
	                         * (loaded, or hs_accountdb_expect_as; not written since) */
	struct stat on_disk;    /* the file as mapped (hs_fileio_map_path) */
	int dir_fd;             /* 0, or the directory (fd >= 3, the locks', not
	                         * ours to close) it was loaded and is written
	                         * through: hs_accountdb_load_at */
	size_t starts_size;     /* bytes mapped for starts (0: malloc'd) */
	uint32_t *starts;       /* where each line as loaded starts in data, and
	                         * one past the end of the last (see loaded_text) */
	unsigned char *built;           /* bitmap of filled-in lines */
	struct hs_db_index by_name, by_id;
	unsigned name_scans, id_scans;  /* lookups answered by a scan */
	/* the last name a scan found on no line, with no edit since (0:
	 * none): a check before an add (find, then append) scans once */
	size_t absent_len;
	char absent[64];
	struct hs_db_chunk *chunks;     /* parse copies of loaded lines */
	/* -ENOMEM once a lazy parse or an index could not be had: a lookup
	 * then answered "no such line", maybe wrongly, and a decision made
	 * on it must not reach the file, so the db is written no more */
	int lost;
};
#define HS_ACCOUNTDB_INIT { .n_lines = 0 }

/* Read path with hs_globalfile_read and parse every line.  A blank line and,
 * except in /etc/subuid and subgid, a NIS compat line (hs_records_nis_line)
 * are kept verbatim and are no entry.  Unless the flags say otherwise, a line that
 * does not parse (or holds a NUL byte) fails with its parse error and
 * "PATH:LINE: invalid entry: REASON", and a repeated name fails with
 * -HS_E_FORMAT and "PATH:LINE: duplicate user name NAME (also on line N)".
 * On failure the db is freed except for error. */
int hs_accountdb_load(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
                      unsigned flags);
/* Same, with path's directory already open as dir_fd (>= 3), which must
 * stay open until the db is written or freed: the lock holder's
 * (struct hs_locks etc_fd), so that every file of a transaction is read
 * and replaced in the one directory the locks were taken in. */
int hs_accountdb_load_at(struct hs_accountdb *db, enum hs_db_kind kind, int dir_fd,
			 const char *path, unsigned flags);
/* Same, from a buffer (copied): an edited temp copy (vipw), a test.  path
 * only names the file in messages and is where hs_accountdb_write goes. */
int hs_accountdb_load_data(struct hs_accountdb *db, enum hs_db_kind kind, const char *path,
                           const char *data, size_t len, unsigned flags);
/* db's lines were made from what `read` loaded from the file (a reorder, a
 * checked edit): its write, like read's, replaces the file only while it
 * is still the one read was loaded from, else -HS_E_CHANGED.  Nothing is
 * checked when read was not loaded from a file or was written since. */
void hs_accountdb_expect_as(struct hs_accountdb *db, const struct hs_accountdb *read);
/* Wipes (the files may hold hashes) and frees everything; safe on a
 * zeroed or failed db. */
void hs_accountdb_free(struct hs_accountdb *db);
/* The file's bytes as loaded (*len of them, not NUL-terminated; none for
 * a missing file), whatever was changed or written since. */
const char *hs_accountdb_loaded(const struct hs_accountdb *db, size_t *len);

/* Index of the first live entry with this name (owner for HS_DB_SUBID) or
 * with this uid/gid (HS_DB_PASSWD, HS_DB_GROUP only), or -1. */
long hs_accountdb_find(struct hs_accountdb *db, const char *name);
long hs_accountdb_find_id(struct hs_accountdb *db, unsigned long id);
/* For the entry at idx: the index of an earlier live entry with the same
 * name / the same id, or -1 (pwck, grpck, useradd without -o). */
long hs_accountdb_dup_name(struct hs_accountdb *db, size_t idx);
long hs_accountdb_dup_id(struct hs_accountdb *db, size_t idx);

/* The record at idx when it is a live entry, else NULL.  With HS_DB_LAZY
 * the first call for a line parses it (the db is changed underneath, so a
 * db is never shared between threads). */
const union hs_dbrec *hs_accountdb_get(const struct hs_accountdb *db, size_t idx);

/* Without building a record (cheap on a HS_DB_LAZY db):
 * text: the current text of line idx (no newline, not NUL-terminated) and
 * its length, or NULL for a deleted line or an idx out of range.
 * field: field n (0 = the name) of the live entry at idx, as the file
 * spells it (not NUL-terminated; numbers are plain decimal, since every
 * entry parsed), or NULL.  A scan with it compares text, e.g. the gid
 * field of every passwd line against "1000".
 * id: the uid/gid of the live entry at idx (HS_DB_PASSWD, HS_DB_GROUP);
 * false for anything else.
 * find_next: the first live entry at an index >= from whose name (owner
 * for HS_DB_SUBID) is name, or -1: every range of an owner, every
 * duplicate.  A scan, O(lines). */
const char *hs_accountdb_text(const struct hs_accountdb *db, size_t idx, size_t *len);
const char *hs_accountdb_field(const struct hs_accountdb *db, size_t idx, unsigned n,
                               size_t *len);
bool hs_accountdb_id(const struct hs_accountdb *db, size_t idx, unsigned long *id);
long hs_accountdb_find_next(struct hs_accountdb *db, const char *name, size_t from);

/* The ids hs_accountdb_id gives for lines *from on, in order: up to n of
 * them into ids, *from moved past the lines read; returns how many (0 at
 * the end).  One pass over the file's bytes, without a call a line: the
 * way to walk every id (picking a new one). */
size_t hs_accountdb_ids(const struct hs_accountdb *db, size_t *from, unsigned long *ids,
			size_t n);

/* The first live line at an index >= from whose text holds the bytes s
 * (no newline among them), or -1.  Lines as loaded are searched in the
 * file's bytes, one memmem to the next hit, not line by line: finding
 * the few group lines that name a user costs about one pass of memchr. */
long hs_accountdb_find_text(const struct hs_accountdb *db, size_t from, const char *s,
                            size_t slen);

/* rec points to the struct of db->kind (struct hs_passwd for HS_DB_PASSWD
 * ...).  It is validated and formatted by records.c and copied: it may
 * point into the db's own strings.
 *
 * replace: the line at idx (an entry, a kept bad line or a blank line)
 * becomes rec.  append: a new line, written at the end or, when the file
 * holds NIS compat lines, before the first of them (as shadow-utils does:
 * a trailing "+" stays last); returns its index, which is past every
 * loaded line's.  Both
 * refuse (-EEXIST) a name another live entry has, except for HS_DB_SUBID.
 * Duplicate ids are the caller's decision (-o): check hs_accountdb_find_id.
 * delete: the line at idx is dropped from the output. */
int hs_accountdb_replace(struct hs_accountdb *db, size_t idx, const void *rec);
long hs_accountdb_append(struct hs_accountdb *db, const void *rec);
int hs_accountdb_delete(struct hs_accountdb *db, size_t idx);

/* The file's new contents, appended to out: unchanged, the bytes as
 * loaded; otherwise every line (original bytes for untouched lines) and a
 * newline after each, so a last line that had none gets one. */
int hs_accountdb_serialize(const struct hs_accountdb *db, struct hs_buf *out);
/* Write the file (hs_globalfile_commit: backup PATH-, owner and mode kept,
 * an atomic rename).  The caller holds the locks and flushes the caches
 * (hs_globalfile_flush_caches).  On failure db->error says why. */
int hs_accountdb_write(struct hs_accountdb *db);
/* Write n files (all in one directory) as one transaction
 * (hs_globalfile_commit): every file new or every file old after a crash.
 * On failure nothing was written and *failed is the index of the db that
 * failed, its error saying why; or n when no one file failed (the
 * journal, the directory: hs_globalfile_commit), dbs[0]'s error saying
 * why. */
#define HS_ACCOUNTDB_SET_MAX 8
int hs_accountdb_write_set(struct hs_accountdb *const dbs[], size_t n, size_t *failed);

#endif
