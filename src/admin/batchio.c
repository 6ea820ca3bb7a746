/* Batch tool plumbing: see batchio.h. */
#include "batchio.h"

#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "layout.h"
#include "userdir.h"
#include "util.h"

#define MAX_THREADS 16
/* every batch tool's (shadow-utils') */
#define E_FAILURE 1

int hs_batch_read_line(FILE *in, char *line, size_t max, size_t *len_out)
{
	size_t len = 0;
	bool too_long = false, nul = false;
	int ch;

	for (;;) {
		ch = getc_unlocked(in);
		if (ch == EOF) {
			if (ferror(in))
				return -EIO;
			if (len == 0 && !too_long && !nul)
				return 0;
			break;
		}
		if (ch == '\n')
			break;
		if (ch == '\0')
			nul = true;
		if (len == max) {
			too_long = true;
			continue;
		}
		line[len++] = (char)ch;
	}
	line[len] = '\0';
	*len_out = len;
	return too_long ? -E2BIG : nul ? -EINVAL : 1;
}

void hs_batch_read_lines(FILE *in, const char *what, size_t max, unsigned long *errors,
			 void (*fn)(void *ctx, char *line, unsigned long lineno), void *ctx)
{
	static char stdio_buffer[8192];
	_cleanup_secret_buf_ struct hs_secret_buf line = { malloc(max + 1), max + 1 };
	unsigned long lineno = 0;
	size_t len;
	int r;

	if (!line.p)
		hs_die(E_FAILURE, "out of memory");
	if (setvbuf(in, stdio_buffer, _IOFBF, sizeof(stdio_buffer)) != 0)
		hs_die(E_FAILURE, "cannot set up %s", what);
	while ((r = hs_batch_read_line(in, line.p, max, &len)) != 0) {
		lineno++;
		if (r == -EIO) {
			hs_warn("cannot read %s: %s", what, hs_strerror(-errno));
			++*errors;
			break;
		}
		if (r == -E2BIG)
			hs_batch_line_error(errors, lineno, "line too long");
		else if (r == -EINVAL)
			hs_batch_line_error(errors, lineno, "line contains a NUL byte");
		else
			fn(ctx, line.p, lineno);
		hs_wipe(line.p, len);
	}
	hs_wipe(stdio_buffer, sizeof(stdio_buffer));
}

struct seen_name {
	const char *name;       /* the bytes after this struct */
	unsigned long lineno;
};

static int seen_name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct seen_name *)x)->name, ((const struct seen_name *)y)->name);
}

unsigned long hs_batch_seen_find(void *const *set, const char *name)
{
	const struct seen_name key = { .name = name };
	struct seen_name *const *found = tfind(&key, set, seen_name_cmp);

	return found ? (*found)->lineno : 0;
}

unsigned long hs_batch_seen_add(void **set, const char *name, unsigned long lineno)
{
	size_t len = strlen(name) + 1;
	struct seen_name *s = malloc(sizeof(*s) + len), *const *found;

	if (!s)
		hs_die(E_FAILURE, "out of memory");
	*s = (struct seen_name){ .name = memcpy(s + 1, name, len), .lineno = lineno };
	found = tsearch(s, set, seen_name_cmp);
	if (!found)
		hs_die(E_FAILURE, "out of memory");
	if (*found == s)
		return 0;
	free(s);
	return (*found)->lineno;
}

void hs_batch_seen_free(void **set)
{
	tdestroy(*set, free);
	*set = NULL;
}

void hs_batch_line_error(unsigned long *count, unsigned long lineno, const char *fmt, ...)
{
	va_list ap;

	if (++*count > HS_BATCH_ERRORS_SHOWN)
		return;
	char *msg = NULL;

	/* the message quotes the line's fields, which came from whoever
	 * wrote the batch: hs_warn's escaping, not a raw vfprintf */
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	hs_warn("line %lu: %s", lineno, msg ? msg : "out of memory");
	free(msg);
}

int hs_batch_errors_done(unsigned long count)
{
	if (count == 0)
		return 0;
	if (count > HS_BATCH_ERRORS_SHOWN)
		hs_warn("%lu more errors not shown", count - HS_BATCH_ERRORS_SHOWN);
	hs_warn("error detected, changes ignored");
	return -1;
}

int hs_batch_open_locked(int treefd, const char *user, uid_t uid, unsigned long lineno)
{
	_cleanup_close_ int fd = hs_userdir_open(treefd, user, uid, NULL);
	struct hs_err err = HS_ERR_INIT;
	char path[HS_PATHBUF_USER];

	if (fd < 0) {
		hs_warn("line %lu: cannot open %s: %s", lineno,
			hs_userdir_path(path, sizeof(path), user, NULL), hs_strerror(fd));
		return -1;
	}
	if (hs_userdir_lock_err(treefd, user, &fd, HS_LOCK_TIMEOUT_MS, &err) < 0) {
		hs_warn("line %lu: %s", lineno, err.msg);
		return -1;
	}
	return TAKE_FD(fd);
}

int hs_batch_keep_shadow(int fd, const char *user, uid_t uid, unsigned long lineno,
			 char **old_hash, long *old_lstchg)
{
	char path[HS_PATHBUF_USER], cur[HS_USERFILE_MAX + 2];
	struct hs_shadow old;
	int r = hs_userdir_read_shadow(fd, uid, cur, sizeof(cur), &old);

	if (r < 0) {
		syslog(LOG_WARNING, "replacing unreadable %s: %s",
		       hs_userdir_path(path, sizeof(path), user, HS_FILE_SHADOW), hs_strerror(r));
		old = (struct hs_shadow){ .hash = "!", .lstchg = HS_UNSET };
	}
	*old_hash = strdup(old.hash);
	*old_lstchg = old.lstchg;
	hs_wipe(cur, sizeof(cur));
	if (!*old_hash) {
		hs_warn("line %lu: %s", lineno, hs_strerror(-ENOMEM));
		return -1;
	}
	return 0;
}

struct pool {
	size_t n, next;
	int (*fn)(void *ctx, size_t i);
	void *ctx;
	pthread_mutex_t mu;
	bool stop;
	int err;
	size_t failed;
};

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;
		int r;

		pthread_mutex_lock(&p->mu);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		r = p->fn(p->ctx, i);
		if (r < 0) {
			pthread_mutex_lock(&p->mu);
			if (!p->err || i < p->failed) {
				p->err = r;
				p->failed = i;
			}
			p->stop = true;
			pthread_mutex_unlock(&p->mu);
		}
	}
}

int hs_parallel_for(size_t n, int (*fn)(void *ctx, size_t i), void *ctx, size_t *failed)
{
	struct pool p = { .n = n, .fn = fn, .ctx = ctx, .mu = PTHREAD_MUTEX_INITIALIZER };
	pthread_t tids[MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = cpus > 1 ? (size_t)cpus : 1, started = 0;

	if (want > MAX_THREADS)
		want = MAX_THREADS;
	if (want > n)
		want = n;
	/* the calling thread is one of the workers; after a failed
	 * pthread_create, fewer threads still get the work done */
	while (started + 1 < want && pthread_create(&tids[started], NULL, worker, &p) == 0)
		started++;
	worker(&p);
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	pthread_mutex_destroy(&p.mu);
	if (p.err && failed)
		*failed = p.failed;
	return p.err;
}
