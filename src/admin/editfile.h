/* Editing a private copy of an account file in the administrator's editor
 * (vipw, vigr).
 *
 *  - The copy lives in a fresh directory HS_EDIT_TMPDIR/PREFIX.XXXXXX made
 *    by mkdtemp (root, 0700), the file itself 0600: nobody else can read
 *    it, nor anything the editor writes next to it (swap and backup files),
 *    and removing the directory removes all of that.
 *  - The editor ($VISUAL, then $EDITOR, then vi) gets a scrubbed
 *    environment: what hs_privs_init keeps (TERM, LANG, LANGUAGE,
 *    LC_*, TZ, COLUMNS, LINES), plus the caller's HOME, PATH (when every
 *    component is absolute), VISUAL and EDITOR.  Nothing else of root's
 *    environment (agent sockets, database passwords, tokens) reaches it.
 *  - It runs in a process group of its own that is made the terminal's
 *    foreground group, so a ^C typed in the editor stays in the editor; a
 *    suspended editor suspends the caller, as shadow-utils' vipw does.
 *  - SIGHUP, SIGINT, SIGQUIT and SIGTERM sent to the caller are recorded by
 *    handlers that do nothing else and are kept blocked except while
 *    waiting (for the editor, for an answer), where ppoll() unblocks them
 *    atomically.  A signal therefore surfaces as -EINTR at a known point:
 *    the caller removes the copy, releases its locks and then dies by the
 *    signal (hs_edit_die_by_signal).  The editor gets the same signal and,
 *    if still running HS_EDIT_GRACE_MS (timeouts.h) later, SIGKILL.
 *
 * Messages go to stderr through hs_warn. */
#ifndef HS_EDITFILE_H
#define HS_EDITFILE_H

#include <stddef.h>
#include <stdnoreturn.h>

#include "layout.h"

#ifndef HS_EDIT_TMPDIR
#define HS_EDIT_TMPDIR "/tmp"
#endif

/* The parts of the caller's environment the editor keeps.  Capture them
 * before hs_privs_init, which drops them. */
struct hs_editor_env {
	char *visual, *editor, *home, *path;
};
void hs_editor_env_capture(struct hs_editor_env *e);
void hs_editor_env_free(struct hs_editor_env *e);

/* Install the recording handlers and block the signals (see above):
 * once, before any other hs_edit* call. */
void hs_edit_signals_init(void);
/* The first of SIGHUP/SIGINT/SIGQUIT/SIGTERM received (or pending while
 * blocked), or 0. */
int hs_edit_signal_pending(void);
/* Restore the default action and die by sig (exit 128 + sig if that
 * does not kill us). */
noreturn void hs_edit_die_by_signal(int sig);

struct hs_editfile {
	int parentfd;      /* HS_EDIT_TMPDIR */
	int dirfd;         /* the private directory */
	char dir[256];     /* its path */
	char path[HS_PATHBUF_ETC];    /* dir/name, what the editor gets */
	const char *name;  /* points into path */
};
#define HS_EDITFILE_INIT { .parentfd = -1, .dirfd = -1 }

/* Make the private directory PREFIX.XXXXXX and in it NAME (a single
 * component) holding data.  On failure nothing is left behind. */
int hs_editfile_create(struct hs_editfile *ef, const char *prefix, const char *name,
                       const void *data, size_t len);
/* Read the copy back (regular, not a symlink, owned by us, at most max
 * bytes); *data is malloc'd and NUL-terminated.  The editor may have
 * replaced the file: it is opened again by name. */
int hs_editfile_read(const struct hs_editfile *ef, size_t max, char **data, size_t *len);
/* Remove the directory and everything in it.  Safe to call twice and on an
 * initialised, never created struct. */
void hs_editfile_remove(struct hs_editfile *ef);

/* Run the editor on ef->path and wait for it.  Returns 0 when it exited
 * with status 0.  Otherwise it says why ("vipw: vi returned with status
 * 2", "vipw: vi killed by signal 9") and returns the exit status to use
 * (the editor's own status, as shadow-utils does, or 1); or -EINTR when
 * one of our signals arrived (the editor is gone by then); or another
 * negative error, already reported. */
int hs_editfile_edit(const struct hs_editfile *ef, const struct hs_editor_env *env);

/* Print question on stdout and read a line from stdin: 1 for an answer
 * starting with y/Y, 0 for n/N or end of input (other answers repeat the
 * question), -EINTR when one of our signals arrived. */
int hs_edit_ask(const char *question);

#endif
