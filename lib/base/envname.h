/* Environment variable names: which are well-formed, and which must not
 * pass from a caller into a process of another user or a new shell. */
#ifndef HS_ENVNAME_H
#define HS_ENVNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Shell-style names only: [A-Za-z_][A-Za-z0-9_]*, at most 256 bytes. */
bool hs_envname_valid(const char *name, size_t len);

/* Names that change how the dynamic linker, libc, a shell, the terminal
 * library or an interpreter behaves (LD_*, MALLOC_*, GCONV_PATH, IFS, ENV,
 * BASH_ENV, TERMINFO, PYTHONPATH, ...): never passed from a caller to
 * another user's process (su, runuser) or into newgrp's shell. */
bool hs_envname_unsafe(const char *name, size_t len);

#endif
