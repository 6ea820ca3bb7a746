/* Uniform command-line behaviour for every program: messages prefixed
 * with the program name, --help/--version, exit codes. */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdnoreturn.h>

/* Set once from main() (the value hs_privileged_init returns, or argv[0]'s
 * basename for unprivileged programs). */
void hs_cli_set_prog(const char *name);
const char *hs_cli_prog(void);

/* "prog: message\n" on stderr. */
void hs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* hs_warn then exit(status). */
noreturn void hs_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one report of a failed lock: "prog: cannot lock PATH: timed out
 * after 15 s" or "prog: cannot lock PATH: <hs_strerror(r)>".  Returns r. */
int hs_warn_lock(const char *path, int r, unsigned timeout_ms);

/* A copy of s fit for a terminal or a log: bytes outside printable ASCII
 * as \xNN, so a hostile argument cannot send escape sequences; cut with
 * "..." when out is too small.  Returns out. */
const char *hs_printable(const char *s, char *out, size_t size);
/* The same for len bytes at s, which may hold any byte, NUL included. */
const char *hs_printable_len(const char *s, size_t len, char *out, size_t size);

/* "prog (hardened-shadow) VERSION\n" on stdout, exit 0. */
noreturn void hs_print_version(void);

#endif
