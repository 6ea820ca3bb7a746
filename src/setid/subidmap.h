/* newuidmap and newgidmap: the setuid helpers that write a user
 * namespace's uid_map / gid_map within the subordinate ranges that
 * /etc/subuid and /etc/subgid grant the caller (shadow-utils' newuidmap(1)
 * semantics).  The pieces are separate so the unit tests can reach them;
 * hs_subidmap_main is the whole program, src/setid/newuidmap.c and
 * src/setid/newgidmap.c only choose the kind. */
#ifndef HS_SUBIDMAP_H
#define HS_SUBIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum hs_idmap_kind { HS_IDMAP_UID, HS_IDMAP_GID };

/* The kernel takes at most this many lines in one map
 * (UID_GID_MAP_MAX_EXTENTS). */
#define HS_IDMAP_MAX_RANGES 340
/* Largest id + 1 a map may reach: ids are 32 bits, (u32)-1 is invalid. */
#define HS_IDMAP_LIMIT 4294967295UL

/* One map line: ids [inside, inside + count) of the namespace are ids
 * [outside, outside + count) of the parent. */
struct hs_idmap_range {
	unsigned long inside, outside, count;
};

/* Parse n_args arguments as triples INSIDE OUTSIDE COUNT (strict
 * decimal).  out has room for HS_IDMAP_MAX_RANGES.  Returns the number of
 * ranges, or -EINVAL (no argument, or not a multiple of three),
 * -HS_E_FORMAT (not a number), -HS_E_RANGE (a number, or a range's end,
 * beyond HS_IDMAP_LIMIT: shadow-utils' "overflow"), -E2BIG (more than
 * HS_IDMAP_MAX_RANGES).  A count of 0 parses; hs_subid_grants_cover
 * refuses it. */
int hs_idmap_parse(char *const *args, size_t n_args, struct hs_idmap_range *out);

/* Do two ranges overlap inside the namespace or in the parent?  Returns
 * true and the first such pair (*a < *b). */
bool hs_idmap_overlap(const struct hs_idmap_range *r, size_t n, size_t *a, size_t *b);

/* The ranges one user may map: every /etc/subuid (or /etc/subgid) line
 * whose owner is the user's name or, spelled as a number, the user's id
 * (as shadow-utils matches them), sorted and merged so a request may span
 * adjacent lines. */
struct hs_subid_grants {
	struct hs_idmap_range *r;       /* outside = start, count; inside unused */
	size_t n;
};
#define HS_SUBID_GRANTS_INIT { .r = NULL }

/* Load from path (HS_ETC_SUBUID / HS_ETC_SUBGID).  A missing file grants
 * nothing; a line that does not parse is skipped (it must not cost the
 * other users their grants).  On failure err holds "cannot read PATH: ...". */
int hs_subid_grants_load(const char *path, const char *name, unsigned long id,
                         struct hs_subid_grants *g, char *err, size_t errsize);
void hs_subid_grants_free(struct hs_subid_grants *g);
/* Is [start, start + count) inside the grants?  count 0 never is. */
bool hs_subid_grants_cover(const struct hs_subid_grants *g, unsigned long start,
                           unsigned long count);

/* The map text the kernel takes: "INSIDE OUTSIDE COUNT\n" per range.
 * Returns its length, or -ENOSPC. */
int hs_idmap_format(const struct hs_idmap_range *r, size_t n, char *buf, size_t size);

/* Open the target: "PID" (decimal) or "fd:N" (an fd the caller passes,
 * open on a /proc/PID directory).  The directory fd stays bound to the
 * process that had the pid when it was opened, never a later one that
 * reuses the number.  *pid is 0 for "fd:N".  Returns the directory fd, or
 * -EINVAL (not a pid / fd spelling), -ENOTDIR (the fd is not a /proc
 * directory), -ESRCH (no such process), or -errno. */
int hs_idmap_open_target(const char *arg, pid_t *pid);

/* The whole newuidmap / newgidmap program. */
int hs_subidmap_main(int argc, char **argv, enum hs_idmap_kind kind);

#endif
