/* /etc/shells: the list of login shells a user may choose (chsh) and that
 * pwconv puts behind the shell proxy.  Kept as lines so a rewrite changes
 * only the lines it means to.
 *
 * Matching: a line counts when it is exactly the path, as in getusershell(3)
 * lines starting with '#' and blank lines are ignored.  Unlike glibc's
 * getusershell, which also takes "/bin/sh # old" or "x/bin/sh" as /bin/sh,
 * only the exact line counts: a shell has to be listed plainly to be
 * accepted, which is the safe direction for chsh. */
#ifndef HS_SHELLS_H
#define HS_SHELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hs_shells_line {
	const char *text;       /* without the newline, not NUL-terminated */
	size_t len;
	bool deleted;
	bool owned;             /* private: text is malloc'd (an added line) */
};

struct hs_shells {
	char *path;
	bool present;           /* the file existed when loaded */
	bool dirty;             /* changed since loaded */
	struct hs_shells_line *lines;
	size_t n_lines;
	char error[512];        /* the last failure, one line naming the file */
	/* private */
	char *data;             /* as loaded */
	size_t len, cap_lines;
};

/* Read path (hs_fileio_read_alloc_path: regular file, no symlink).  A missing file is
 * an empty list with present = false (getusershell then offers /bin/sh and
 * /bin/csh; writing creates the file, root:root 0644). */
int hs_shells_load(struct hs_shells *s, const char *path);
void hs_shells_free(struct hs_shells *s);

/* Is shell listed?  "" never is. */
bool hs_shells_contains(const struct hs_shells *s, const char *shell);
/* Is shell the shell proxy (HS_SHELL_PROXY), in that spelling or another
 * of the same file? */
bool hs_shells_is_proxy(const char *shell);

/* Append shell (an absolute path with no control character, ':' or
 * newline) unless listed already: 1 added, 0 already there, or < 0. */
int hs_shells_add(struct hs_shells *s, const char *shell);
/* Drop every line that is exactly shell: the number removed (0: none). */
int hs_shells_remove(struct hs_shells *s, const char *shell);

/* The file's new contents, appended to out: the bytes as loaded when
 * nothing changed, else every kept line and a newline after each (for a
 * caller that commits /etc/shells with other files, hs_globalfile_commit). */
struct hs_buf;
int hs_shells_contents(const struct hs_shells *s, struct hs_buf *out);

#endif
