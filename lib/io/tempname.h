/* The one owner of the temporary-name format.  Every name our tools
 * create beside a file they are about to replace, or beside a tree
 * directory they are building or removing, starts with '.' and carries
 * an unpredictable tail, so it is never a user name, never guessable,
 * and recognisable by the sweep that removes leftovers. */
#ifndef HS_TEMPNAME_H
#define HS_TEMPNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Random part of temporary names: 12 of [A-Za-z0-9] = about 71 bits. */
#define HS_TEMP_RANDOM_LEN 12
/* A name already taken by someone else is retried a few times; with 71
 * random bits a second collision means something is wrong. */
#define HS_TEMP_TRIES 16

/* Fill tmp with ".NAME.XXXXXXXXXXXX", the temporary name of a file
 * that will replace NAME.  -ENAMETOOLONG when it would not fit. */
int hs_tempname_for_file(const char *name, char *tmp, size_t tmpsize);

/* Fill tmp with ".TAG.NAME.XXXXXXXXXXXX", a reserved name for a
 * directory being built (TAG "new") or removed (TAG "del"). */
int hs_tempname_reserved(const char *tag, const char *name, char *tmp, size_t tmpsize);

/* Fill tmp with ".TAG.NAME", without a random tail: for a directory
 * only root writes, where one name per NAME is wanted, so that the next
 * holder of the lock that owns it finds a leftover with one lookup (TAG
 * "swap": a take-over of USER's tree directory). */
int hs_tempname_fixed(const char *tag, const char *name, char *tmp, size_t tmpsize);

/* Is ENTRY a temporary name made by hs_tempname_for_file for NAME? */
bool hs_tempname_is_for_file(const char *entry, const char *name);

/* Is ENTRY a reserved name made by hs_tempname_reserved with TAG "new"
 * or "del" (for any NAME)? */
bool hs_tempname_is_reserved(const char *entry);

#endif
