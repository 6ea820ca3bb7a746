/* Uniform command-line behaviour for every program: messages prefixed
 * with the program name, --help/--version, exit codes. */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdnoreturn.h>

/* Set once from main() (the value hs_privs_init returns, or argv[0]'s
 * basename for unprivileged programs). */
void hs_cli_set_prog(const char *name);
const char *hs_cli_prog(void);

/* "prog: message\n" on stderr. */
void hs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a va_list: for wrappers that must do something first. */
void hs_vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* hs_warn then exit(status). */
noreturn void hs_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PROG: PATH:LINE: MESSAGE" on stderr (ctx = PROG, NULL for the name set
 * by hs_cli_set_prog): the printer programs hand to the parsers that
 * report each bad line through a callback (lib/format/config.h). */
void hs_cli_warn_at(void *ctx, const char *path, unsigned long lineno, const char *message);

/* The caller's side of struct hs_err (lib/base/util.h): each line of
 * err->msg as "prog: line" on stderr, as hs_warn prints it, and the whole
 * message to syslog when err->log_level >= 0.  Nothing when msg is empty. */
struct hs_err;
void hs_report(const struct hs_err *err);
/* hs_report then exit(status). */
noreturn void hs_report_die(int status, const struct hs_err *err);

/* The one report of a failed lock: "prog: cannot lock PATH: timed out
 * after 15 s" or "prog: cannot lock PATH: <hs_strerror(r)>".  Returns r. */
int hs_warn_lock(const char *path, int r, unsigned timeout_ms);

/* Length of the character at s (at most len bytes) when a terminal may
 * be shown it as it is: 1 for printable ASCII, 2 to 4 for well-formed
 * UTF-8 of a printable character when the locale the environment names
 * (LC_ALL, LC_CTYPE, LANG) has the charset UTF-8; 0 when s[0] must go out
 * as \xNN (C0, DEL, C1 as UTF-8 or as a raw byte, bytes that are not
 * well-formed UTF-8, bidirectional controls, and every byte >= 0x80 when
 * the charset is not UTF-8: "C" or 8-bit, where 0x80..0x9F are controls).
 * The one rule of every function below and of hs_warn, hs_die, hs_report
 * and hs_cli_warn_at.  The charset is read once, at the first byte >= 0x80. */
size_t hs_printable_char(const char *s, size_t len);
/* Forget the charset read: the next hs_printable_char reads the
 * environment's locale again (for a caller that changed LANG or LC_*). */
void hs_cli_charset_reset(void);

/* A copy of s fit for a terminal or a log: what hs_printable_char refuses
 * as \xNN, so a hostile argument cannot send escape sequences; cut with
 * "..." (never inside a character) when out is too small.  Returns out. */
const char *hs_printable(const char *s, char *out, size_t size);
/* The same for len bytes at s, which may hold any byte, NUL included. */
const char *hs_printable_len(const char *s, size_t len, char *out, size_t size);
/* s on f by the same rule, uncut: for a field of any length a program
 * prints to the terminal itself (a listing). */
void hs_fputs_printable(const char *s, FILE *f);

/* Progress of a long run (pwconv over 100,000 users): "\rprog: N/TOTAL
 * WHAT" on stderr, at most five times a second and not in the first
 * 200 ms, only when stdout and stderr are both terminals: a script, a
 * pipe or a log sees exactly what it saw before.  Messages printed through
 * this file erase the line first; end erases it for good.  One run at a
 * time; WHAT must outlive it ("users").  Step may be called from several
 * threads at once (hs_parallel_for): one updates the line, others skip. */
void hs_cli_progress_start(unsigned long total, const char *what);
void hs_cli_progress_step(unsigned long done);
void hs_cli_progress_end(void);
/* Erase the line now (if shown), before a program writes to stdout on the
 * same terminal itself; the next step draws it again. */
void hs_cli_progress_erase(void);

/* --help: "Usage: PROG ARGS", "Options:", options (each line ending in
 * "\n"), the common --version line and tail; on stdout and exit 0 when
 * status is 0, else on stderr and exit status. */
noreturn void hs_cli_usage(int status, const char *args, const char *options, const char *tail);

/* Confine the program with hs_confine_paths (confine.h): nothing, silently,
 * on a kernel without Landlock; any other failure ends the program with
 * status before it touches account data. */
struct hs_confine_rule;
void hs_confine_or_die(const struct hs_confine_rule *rules, size_t n, int status);

/* The same with one rule: write beneath /etc (the global files, their
 * locks, the tree), for the tools that touch nothing else. */
void hs_confine_to_etc(int status);

/* "prog (hardened-shadow) VERSION\n" on stdout, exit 0. */
noreturn void hs_print_version(void);

#endif
