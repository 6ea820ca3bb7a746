/* /etc/shells as lines (see shells.h). */
#include "shells.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "layout.h"
#include "records.h"
#include "strbuf.h"
#include "util.h"

__attribute__((format(printf, 2, 3)))
static void set_error(struct hs_shells *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

void hs_shells_free(struct hs_shells *s)
{
	char error[sizeof(s->error)];

	if (!s)
		return;
	for (size_t i = 0; i < s->n_lines; i++)
		if (s->lines[i].owned)
			free((char *)s->lines[i].text);
	free(s->lines);
	free(s->data);
	free(s->path);
	memcpy(error, s->error, sizeof(error));
	memset(s, 0, sizeof(*s));
	memcpy(s->error, error, sizeof(error));
}

static int grow(struct hs_shells *s)
{
	size_t ncap;
	struct hs_shells_line *nl;

	if (s->n_lines < s->cap_lines)
		return 0;
	ncap = s->cap_lines ? 2 * s->cap_lines : 16;
	nl = realloc(s->lines, ncap * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	s->lines = nl;
	s->cap_lines = ncap;
	return 0;
}

int hs_shells_load(struct hs_shells *s, const char *path)
{
	/* a read, not a global-file operation: su and chsh need no lock
	 * and no writer to check a shell */
	const struct hs_file_expect ex = HS_FILE_EXPECT_GLOBAL;
	struct hs_line_iter it;
	const char *line;
	size_t llen;
	int r;

	memset(s, 0, sizeof(*s));
	if (!path) {
		set_error(s, "cannot read (null): %s", hs_strerror(-EINVAL));
		return -EINVAL;
	}
	s->path = strdup(path);
	r = s->path ? hs_fileio_read_alloc_path(path, &ex, &s->data, &s->len) : -ENOMEM;
	if (r == -ENOENT)
		return 0;       /* no lines, data NULL */
	if (r < 0)
		goto fail;
	s->present = true;
	hs_strbuf_lines_init(&it, s->data, s->len);
	while (hs_strbuf_line_next(&it, &line, &llen)) {
		if ((r = grow(s)) < 0)
			goto fail;
		s->lines[s->n_lines++] = (struct hs_shells_line){ .text = line, .len = llen };
	}
	return 0;
fail:
	set_error(s, "cannot read %s: %s", path, hs_strerror(r));
	hs_shells_free(s);
	return r;
}

static bool line_is(const struct hs_shells_line *l, const char *shell, size_t n)
{
	return !l->deleted && l->len == n && memcmp(l->text, shell, n) == 0;
}

bool hs_shells_contains(const struct hs_shells *s, const char *shell)
{
	size_t n;

	if (!s || !shell || !shell[0] || shell[0] == '#')
		return false;
	n = strlen(shell);
	for (size_t i = 0; i < s->n_lines; i++)
		if (line_is(&s->lines[i], shell, n))
			return true;
	return false;
}

bool hs_shells_is_proxy(const char *shell)
{
	struct stat st, proxy;

	if (strcmp(shell, HS_SHELL_PROXY) == 0)
		return true;
	/* another spelling of the same file ("//", a symlink, a hard link)
	 * would make the proxy exec itself forever */
	return stat(shell, &st) == 0 && stat(HS_SHELL_PROXY, &proxy) == 0 &&
	       st.st_dev == proxy.st_dev && st.st_ino == proxy.st_ino;
}

int hs_shells_add(struct hs_shells *s, const char *shell)
{
	_cleanup_free_ char *copy = NULL;

	if (!s || !shell || shell[0] != '/' || !hs_records_field_valid(shell)) {
		set_error(s, "cannot add to %s: not an absolute path without control characters",
			  s && s->path ? s->path : "(null)");
		return -EINVAL;
	}
	if (hs_shells_contains(s, shell))
		return 0;
	copy = strdup(shell);
	if (!copy || grow(s) < 0) {
		set_error(s, "cannot add to %s: %s", s->path, hs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	size_t len = strlen(copy);
	s->lines[s->n_lines++] = (struct hs_shells_line){
		.text = TAKE_PTR(copy), .len = len, .owned = true,
	};
	s->dirty = true;
	return 1;
}

int hs_shells_remove(struct hs_shells *s, const char *shell)
{
	int n = 0;
	size_t len;

	if (!s || !shell || !shell[0])
		return -EINVAL;
	len = strlen(shell);
	for (size_t i = 0; i < s->n_lines; i++) {
		if (line_is(&s->lines[i], shell, len)) {
			s->lines[i].deleted = true;
			n++;
		}
	}
	if (n)
		s->dirty = true;
	return n;
}

int hs_shells_contents(const struct hs_shells *s, struct hs_buf *out)
{
	int r = 0;

	if (!s || !out)
		return -EINVAL;
	if (!s->dirty)
		return hs_strbuf_append(out, s->data, s->len);
	for (size_t i = 0; r == 0 && i < s->n_lines; i++) {
		if (s->lines[i].deleted)
			continue;
		r = hs_strbuf_append(out, s->lines[i].text, s->lines[i].len);
		if (r == 0)
			r = hs_strbuf_append(out, "\n", 1);
	}
	return r;
}
