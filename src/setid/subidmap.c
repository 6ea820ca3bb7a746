/* newuidmap and newgidmap (see subidmap.h).
 *
 * The program runs setuid root because the kernel lets only a process
 * with CAP_SETUID / CAP_SETGID in the parent namespace write a map that
 * names ids other than the writer's own.  Everything it is given is the
 * caller's: the pid, the ranges, fds, the environment.  So it
 *   - pins the target process before looking at it: everything goes
 *     through one /proc/PID directory fd, which stays bound to the process
 *     it was opened for, so a pid reused later cannot redirect the write;
 *   - checks that the caller owns the target, as shadow-utils does;
 *   - checks every range against /etc/subuid or /etc/subgid, and for
 *     overflow and overlap, before anything is written;
 *   - writes with the caller's effective uid and only the one capability
 *     the kernel wants (plus CAP_SETFCAP when parent uid 0 is mapped), so
 *     the open of /proc/PID/uid_map is also the kernel's own owner check;
 *   - for gid_map, writes "deny" to setgroups first unless some range comes
 *     from /etc/subgid: a user who may map only their own gid must not be
 *     able to drop supplementary groups used as negative permissions
 *     (CVE-2018-7169).
 * Messages and exit codes follow shadow-utils 4.13 (Debian 12). */
#include "subidmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "account.h"
#include "cli.h"
#include "confine.h"
#include "layout.h"
#include "privs.h"
#include "records.h"
#include "etc_read.h"
#include "util.h"

/* ---- ranges ---- */

int hs_idmap_parse(char *const *args, size_t n_args, struct hs_idmap_range *out)
{
	size_t n;

	if (n_args == 0 || n_args % 3 != 0)
		return -EINVAL;
	n = n_args / 3;
	if (n > HS_IDMAP_MAX_RANGES)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		unsigned long v[3];

		for (size_t k = 0; k < 3; k++) {
			int r = hs_parse_ulong(args[3 * i + k], 0, HS_IDMAP_LIMIT, &v[k]);
			if (r < 0)
				return r;
		}
		/* both ends must stay below 2^32 - 1; the sums cannot wrap
		 * in 64 bits and the parse capped each term at 2^32 - 1 */
		if ((unsigned long long)v[0] + v[2] > HS_IDMAP_LIMIT ||
		    (unsigned long long)v[1] + v[2] > HS_IDMAP_LIMIT)
			return -HS_E_RANGE;
		out[i] = (struct hs_idmap_range){ .inside = v[0], .outside = v[1], .count = v[2] };
	}
	return (int)n;
}

static bool intervals_meet(unsigned long a, unsigned long an, unsigned long b, unsigned long bn)
{
	/* [a, a+an) and [b, b+bn), both ends <= HS_IDMAP_LIMIT */
	return an > 0 && bn > 0 && a < b + bn && b < a + an;
}

bool hs_idmap_overlap(const struct hs_idmap_range *r, size_t n, size_t *a, size_t *b)
{
	/* n <= 340: the quadratic scan is cheaper than sorting copies */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (intervals_meet(r[i].inside, r[i].count, r[j].inside, r[j].count) ||
			    intervals_meet(r[i].outside, r[i].count, r[j].outside, r[j].count)) {
				*a = i;
				*b = j;
				return true;
			}
	return false;
}

int hs_idmap_format(const struct hs_idmap_range *r, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + len, size - len, "%lu %lu %lu\n", r[i].inside, r[i].outside,
				 r[i].count);
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return len > INT_MAX ? -ENOSPC : (int)len;
}

/* ---- grants ---- */

static int cmp_start(const void *x, const void *y)
{
	const struct hs_idmap_range *a = x, *b = y;

	return a->outside < b->outside ? -1 : a->outside > b->outside;
}

static bool owner_matches(const char *owner, const char *name, unsigned long id)
{
	unsigned long n;

	if (strcmp(owner, name) == 0)
		return true;
	return owner[0] >= '0' && owner[0] <= '9' &&
	       hs_parse_ulong(owner, 0, HS_ID_MAX, &n) == 0 && n == id;
}

struct grants_ctx {
	const char *name;
	unsigned long id;
	struct hs_subid_grants *g;
	size_t cap;
};

static int add_grant(const struct hs_subid *rec, void *ctx)
{
	struct grants_ctx *c = ctx;
	struct hs_subid_grants *g = c->g;

	if (!owner_matches(rec->owner, c->name, c->id))
		return 0;
	if (g->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 8;
		struct hs_idmap_range *nr = reallocarray(g->r, ncap, sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		g->r = nr;
		c->cap = ncap;
	}
	g->r[g->n++] = (struct hs_idmap_range){ .outside = rec->start, .count = rec->count };
	return 0;
}

int hs_subid_grants_load(const char *path, const char *name, unsigned long id,
                         struct hs_subid_grants *g, char *err, size_t errsize)
{
	struct grants_ctx c = { .name = name, .id = id, .g = g };
	int r;

	*g = (struct hs_subid_grants)HS_SUBID_GRANTS_INIT;
	r = hs_etc_read_subid(path, add_grant, &c);
	if (r < 0) {
		snprintf(err, errsize, "cannot read %s: %s", path, hs_strerror(r));
		hs_subid_grants_free(g);
		return r;
	}

	/* merge overlapping and adjacent lines: a request may span them, as
	 * shadow-utils' have_range() allows */
	if (g->n > 1) {
		size_t k = 0;

		qsort(g->r, g->n, sizeof *g->r, cmp_start);
		for (size_t i = 1; i < g->n; i++) {
			unsigned long end = g->r[k].outside + g->r[k].count;   /* <= 2^32 */
			if (g->r[i].outside <= end) {
				unsigned long iend = g->r[i].outside + g->r[i].count;
				if (iend > end)
					g->r[k].count = iend - g->r[k].outside;
			} else {
				g->r[++k] = g->r[i];
			}
		}
		g->n = k + 1;
	}
	return 0;
}

void hs_subid_grants_free(struct hs_subid_grants *g)
{
	free(g->r);
	*g = (struct hs_subid_grants)HS_SUBID_GRANTS_INIT;
}

bool hs_subid_grants_cover(const struct hs_subid_grants *g, unsigned long start,
                           unsigned long count)
{
	if (count == 0)
		return false;
	for (size_t i = 0; i < g->n; i++) {
		unsigned long s = g->r[i].outside, e = s + g->r[i].count;
		if (start >= s && start < e)
			return count <= e - start;
	}
	return false;
}

/* ---- the target process ---- */

int hs_idmap_open_target(const char *arg, pid_t *pid)
{
	unsigned long v;
	int fd;

	*pid = 0;
	if (strncmp(arg, "fd:", 3) == 0) {
		struct stat st;
		struct statfs sfs;

		if (hs_parse_ulong(arg + 3, 0, INT_MAX, &v) < 0)
			return -EINVAL;
		fd = (int)v;
		if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode) || sfs.f_type != PROC_SUPER_MAGIC)
			return -ENOTDIR;
		/* our own copy, close-on-exec, so the caller's fd number
		 * cannot matter later */
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}

	if (hs_parse_ulong(arg, 1, INT_MAX, &v) < 0)
		return -EINVAL;
	*pid = (pid_t)v;

	/* /proc/PID is the process that has the pid now, as a pidfd taken
	 * now would be: what the caller meant is theirs to know, and the
	 * owner checks below hold whichever it is.  The directory fd then
	 * stays bound to that process (once it is reaped, lookups under the
	 * fd fail with ESRCH; a later process with the same number gets a
	 * new directory).  A thread id names its thread, whose user
	 * namespace is its process's, as in shadow-utils; no pidfd, so no
	 * dependence on pidfd_open, which a thread id or a seccomp filter
	 * refuses. */
	char path[32];
	snprintf(path, sizeof path, "/proc/%lu", v);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/* ---- privileges for the write ---- */

/* Keep only what the kernel asks of a map writer: the effective uid of the
 * caller (the owner of the target's namespace, which gives CAP_SYS_ADMIN
 * over it, and makes opening /proc/PID/{uid,gid}_map the kernel's owner
 * check) and cap in the effective set.  Not installed setuid root: nothing
 * to drop, the kernel decides alone. */
static int restrict_privileges(uid_t ruid, int cap, bool setfcap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (geteuid() != 0)
		return 0;
	/* euid 0 -> ruid clears the effective set; the saved uid stays 0,
	 * so the permitted set survives for the capset below */
	if (ruid != 0 && setresuid((uid_t)-1, ruid, (uid_t)-1) < 0)
		return -errno;
	data[0].effective = CAP_TO_MASK(cap);
	if (setfcap)
		data[0].effective |= CAP_TO_MASK(CAP_SETFCAP);
	data[0].permitted = data[0].effective;
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/* ---- the program ---- */

#define RANGE_FMT "[%lu-%lu) -> [%lu-%lu)"
#define RANGE_ARGS(m) (m).inside, (m).inside + (m).count, (m).outside, (m).outside + (m).count

struct prog {
	const char *name;       /* newuidmap / newgidmap */
	const char *what;       /* uid / gid */
	const char *map_file;   /* uid_map / gid_map */
	const char *subid_path;
};

static _Noreturn void usage(const struct prog *p, int status)
{
	FILE *f = status == 0 ? stdout : stderr;

	fprintf(f, "usage: %s <pid> <%s> <lower%s> <count> [ <%s> <lower%s> <count> ] ... \n",
		p->name, p->what, p->what, p->what, p->what);
	if (status == 0)
		fprintf(f,
			"\n"
			"<pid> may also be fd:N, an open file descriptor on /proc/<pid>.\n"
			"      --help                    display this help message and exit\n"
			"      --version                 display the version and exit\n");
	closelog();
	exit(status);
}

static int write_setgroups_deny(int procfd)
{
	static const char deny[] = "deny\n";
	char cur[64];
	ssize_t got;
	_cleanup_close_ int fd = openat(procfd, "setgroups", O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		if (errno == ENOENT) {
			/* kernels before 3.19: no setgroups to restrict */
			hs_warn("kernel doesn't support setgroups restrictions");
			return 0;
		}
		hs_warn("couldn't open process setgroups: %s", strerror(errno));
		return -1;
	}
	got = read(fd, cur, sizeof cur - 1);
	if (got < 0) {
		hs_warn("failed to read setgroups: %s", strerror(errno));
		return -1;
	}
	cur[got] = '\0';
	/* the file takes one write; "deny" already there is what we want */
	if (strcmp(cur, deny) == 0)
		return 0;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		hs_warn("failed to seek setgroups: %s", strerror(errno));
		return -1;
	}
	if (write(fd, deny, sizeof deny - 1) != (ssize_t)(sizeof deny - 1)) {
		hs_warn("failed to setgroups %s policy: %s", "deny", strerror(errno));
		return -1;
	}
	return 0;
}

static int write_map(const struct prog *p, int procfd, const char *text, size_t len)
{
	_cleanup_close_ int fd = openat(procfd, p->map_file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		hs_warn("open of %s failed: %s", p->map_file, strerror(errno));
		return -1;
	}
	/* the kernel takes the whole map in one write */
	ssize_t w = write(fd, text, len);
	if (w != (ssize_t)len) {
		hs_warn("write to %s failed: %s", p->map_file,
			w < 0 ? strerror(errno) : "short write");
		return -1;
	}
	return 0;
}

/* Once the target is known, the kernel holds the program to its job
 * (Landlock): it may write the target's map file and setgroups, and read
 * the base (/etc/subuid, /etc/subgid), nothing else. */
static void confine(const struct prog *p, int procfd)
{
	char map[64], setgroups[64];
	const struct hs_confine_rule rules[] = {
		{ map, HS_CONFINE_WRITE },
		{ setgroups, HS_CONFINE_WRITE },
	};

	/* through the directory pinned at the start, not its pid */
	snprintf(map, sizeof map, "/proc/self/fd/%d/%s", procfd, p->map_file);
	snprintf(setgroups, sizeof setgroups, "/proc/self/fd/%d/setgroups", procfd);
	hs_confine_or_die(rules, HS_ARRAY_SIZE(rules), 1);
}

int hs_subidmap_main(int argc, char **argv, enum hs_idmap_kind kind)
{
	const bool uids = kind == HS_IDMAP_UID;
	const struct prog p = {
		.name = uids ? "newuidmap" : "newgidmap",
		.what = uids ? "uid" : "gid",
		.map_file = uids ? "uid_map" : "gid_map",
		.subid_path = uids ? HS_ETC_SUBUID : HS_ETC_SUBGID,
	};
	static struct hs_idmap_range ranges[HS_IDMAP_MAX_RANGES];
	/* 3 numbers of at most 10 digits, 2 blanks and a newline per range */
	static char text[HS_IDMAP_MAX_RANGES * 34 + 1];
	struct hs_subid_grants grants = HS_SUBID_GRANTS_INIT;
	_cleanup_free_ char *pwbuf = NULL;
	_cleanup_close_ int procfd = -1;
	char why[128], err[600], shown[64];
	struct passwd pw;
	struct stat st;
	pid_t pid;
	bool allow_setgroups = false, maps_root = false;
	int n, r;

	/* the names are fixed: argv[0] is the caller's choice (an empty one,
	 * Linux 5.18+'s form of argc 0, hs_privs_init refuses) */
	(void)hs_privs_init(argc, argv, p.name);
	hs_cli_set_prog(p.name);
	openlog(p.name, LOG_PID, LOG_AUTHPRIV);

	if (argc == 2 && strcmp(argv[1], "--help") == 0)
		usage(&p, 0);
	if (argc == 2 && strcmp(argv[1], "--version") == 0)
		hs_print_version();
	if (argc < 2)
		usage(&p, 1);

	hs_printable(argv[1], shown, sizeof shown);
	procfd = hs_idmap_open_target(argv[1], &pid);
	if (procfd < 0) {
		if (procfd != -EINVAL)
			hs_warn("Could not open proc directory for target %s: %s", shown,
				procfd == -ENOTDIR ? "not a /proc/<pid> directory"
						   : hs_strerror(procfd));
		usage(&p, 1);
	}

	if (hs_account_caller(&pw, &pwbuf, why, sizeof why) < 0)
		hs_die(1, "%s", why);

	/* /proc/PID belongs to the target's effective uid and gid (root when
	 * it is not dumpable, e.g. while it runs a set-id program) */
	if (fstat(procfd, &st) < 0)
		hs_die(1, "Could not stat directory for target %s", shown);
	if (getuid() != pw.pw_uid || getgid() != pw.pw_gid || st.st_uid != pw.pw_uid ||
	    st.st_gid != pw.pw_gid) {
		syslog(LOG_WARNING, "refused: uid %lu (%s) asked to set the %s of target %s "
		       "owned by uid %lu gid %lu", (unsigned long)getuid(), pw.pw_name, p.map_file,
		       shown, (unsigned long)st.st_uid, (unsigned long)st.st_gid);
		hs_die(1, "Target %s is owned by a different user: uid:%lu pw_uid:%lu st_uid:%lu, "
		       "gid:%lu pw_gid:%lu st_gid:%lu", shown,
		       (unsigned long)getuid(), (unsigned long)pw.pw_uid, (unsigned long)st.st_uid,
		       (unsigned long)getgid(), (unsigned long)pw.pw_gid, (unsigned long)st.st_gid);
	}

	confine(&p, procfd);
	n = hs_idmap_parse(argv + 2, (size_t)argc - 2, ranges);
	if (n == -HS_E_RANGE)
		hs_die(1, "subuid overflow detected.");
	if (n == -E2BIG)
		hs_die(1, "too many ranges: the kernel takes at most %d", HS_IDMAP_MAX_RANGES);
	if (n < 0)
		usage(&p, 1);

	size_t a, b;
	if (hs_idmap_overlap(ranges, (size_t)n, &a, &b))
		hs_die(1, "%s range " RANGE_FMT " overlaps " RANGE_FMT, p.what, RANGE_ARGS(ranges[b]),
		       RANGE_ARGS(ranges[a]));

	/* the owner field of both files names a user (or a uid) */
	if (hs_subid_grants_load(p.subid_path, pw.pw_name, pw.pw_uid, &grants, err, sizeof err) < 0)
		hs_die(1, "%s", err);
	const unsigned long own = uids ? pw.pw_uid : pw.pw_gid;
	for (int i = 0; i < n; i++) {
		const struct hs_idmap_range *m = &ranges[i];

		if (hs_subid_grants_cover(&grants, m->outside, m->count)) {
			allow_setgroups = true;
		} else if (!(m->count == 1 && m->outside == own)) {
			syslog(LOG_WARNING, "refused: %s (uid %lu) asked for %s range " RANGE_FMT,
			       pw.pw_name, (unsigned long)pw.pw_uid, p.what, RANGE_ARGS(*m));
			hs_subid_grants_free(&grants);
			hs_die(1, "%s range " RANGE_FMT " not allowed", p.what, RANGE_ARGS(*m));
		}
		if (m->outside == 0)
			maps_root = true;
	}
	hs_subid_grants_free(&grants);

	r = hs_idmap_format(ranges, (size_t)n, text, sizeof text);
	if (r < 0)
		hs_die(1, "cannot format the map: %s", hs_strerror(r));
	size_t len = (size_t)r;
	/* the kernel takes the map in one write of less than a page */
	long page = sysconf(_SC_PAGESIZE);
	if (page > 0 && len >= (size_t)page)
		hs_die(1, "the map is too long: %zu bytes, the kernel takes less than %ld", len, page);

	/* the kernel wants CAP_SETFCAP from whoever maps parent uid 0 */
	r = restrict_privileges(pw.pw_uid, uids ? CAP_SETUID : CAP_SETGID, uids && maps_root);
	if (r < 0)
		hs_die(1, "Could not set caps: %s", hs_strerror(r));
	/* gid_map only once setgroups is denied, when it must be */
	bool ok = (uids || allow_setgroups || write_setgroups_deny(procfd) == 0) &&
		  write_map(&p, procfd, text, len) == 0;
	closelog();
	return ok ? 0 : 1;
}
