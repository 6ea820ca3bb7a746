/* /etc/login.defs and /etc/default/useradd. */
#ifndef HS_CONFIG_H
#define HS_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

struct hs_config;

/* Called for each problem found while loading (unknown key, bad line);
 * ctx is passed through.  Loading never fails on an unknown key.  A
 * program passes hs_cli_warn_at (lib/base/cli.h) to print them. */
typedef void (*hs_config_warn_fn)(void *ctx, const char *path, unsigned long lineno,
                                  const char *message);

/* login.defs syntax: "KEY VALUE" separated by blanks, '#' comments, values
 * optionally in double quotes.  Keys not in shadow-utils' set get a
 * warning.  A missing file gives an empty config (everything default).
 * Returns 0 or a negative error (unreadable file, out of memory). */
int hs_config_logindefs_load(const char *path, hs_config_warn_fn warn, void *ctx, struct hs_config **out);
/* Same parser over a memory buffer (fuzzing, tests). */
int hs_config_logindefs_parse(const char *data, size_t len, const char *name,
                       hs_config_warn_fn warn, void *ctx, struct hs_config **out);

/* /etc/default/useradd syntax: "KEY=VALUE" lines. Known keys: GROUP,
 * GROUPS, HOME, INACTIVE, EXPIRE, SHELL, SKEL, CREATE_MAIL_SPOOL,
 * LOG_INIT, USRSKEL. */
int hs_config_useradd_defaults_load(const char *path, hs_config_warn_fn warn, void *ctx,
                             struct hs_config **out);
int hs_config_useradd_defaults_parse(const char *data, size_t len, const char *name,
                              hs_config_warn_fn warn, void *ctx, struct hs_config **out);

void hs_config_free(struct hs_config *c);

/* Lookups (c may be NULL: every key is missing).  The string is owned by
 * the config. */
const char *hs_config_get_str(const struct hs_config *c, const char *key, const char *def);
/* Decimal (or 0x hex / 0 octal as shadow-utils accepts for login.defs
 * numbers), range [min, max]; def when missing or invalid. */
long hs_config_get_long(const struct hs_config *c, const char *key, long min, long max, long def);
/* "yes"/"no" (case-insensitive) as shadow-utils reads them; def when missing. */
bool hs_config_get_bool(const struct hs_config *c, const char *key, bool def);
bool hs_config_has(const struct hs_config *c, const char *key);

/* Is key one of the login.defs keys shadow-utils knows? */
bool hs_config_logindefs_key_known(const char *key);

#endif
