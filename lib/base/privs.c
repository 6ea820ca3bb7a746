/* Hygiene for privileged entry points (DESIGN.md section 5).
 *
 * Whoever runs a setgid/setuid program controls everything it inherits:
 * argv (possibly empty), the environment, closed or odd fds 0-2, resource
 * limits, the umask.  hs_privs_init puts all of that into a known
 * state before the program does anything else. */
#include "privs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define HS_SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Caps on kept environment values: nothing legitimate is longer. */
#define HS_ENV_VALUE_MAX 256

extern char **environ;

/* CAP_AUDIT_WRITE came from the file (passwd, chage) to a caller who is
 * not root: hs_privs_audit_write() may raise it. */
static bool audit_cap_held;

static void make_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free fd is the one we just found closed */
		int nfd = open("/dev/null", O_RDWR | O_NOCTTY);
		if (nfd != fd)
			abort();
	}
}

static bool all_chars_in(const char *s, const char *extra)
{
	for (; *s; s++) {
		char ch = *s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9'))
			continue;
		if (!strchr(extra, ch))
			return false;
	}
	return true;
}

static bool term_ok(const char *v)
{
	return *v && all_chars_in(v, "._+-");
}

/* Locale names: a locale that contains '/' or starts with '.' is a path
 * and would make setlocale() load attacker files. */
static bool locale_ok(const char *v)
{
	return *v && v[0] != '.' && !strchr(v, '/') && all_chars_in(v, "._@-:=,+");
}

/* TZ: POSIX rules ("EST5EDT,M3.2.0,M11.1.0", "<+03>-3") or a zoneinfo
 * name ("Europe/Berlin", ":Europe/Berlin"); an absolute path only below
 * /usr/share/zoneinfo; never "..". */
static bool tz_ok(const char *v)
{
	const char *name = v[0] == ':' ? v + 1 : v;

	if (!*name || strstr(name, ".."))
		return false;
	if (name[0] == '/' && strncmp(name, "/usr/share/zoneinfo/", 20) != 0)
		return false;
	return all_chars_in(name, "._+-/,<>:");
}

static bool digits_ok(const char *v)
{
	size_t n = strlen(v);

	return n > 0 && n <= 5 && strspn(v, "0123456789") == n;
}

static bool lc_name_ok(const char *name, size_t len)
{
	if (len <= 3 || strncmp(name, "LC_", 3) != 0)
		return false;
	for (size_t i = 3; i < len; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_'))
			return false;
	return true;
}

/* Is NAME=VALUE one we keep? */
static bool env_entry_ok(const char *entry)
{
	const char *eq = strchr(entry, '=');

	if (!eq || eq == entry)
		return false;
	size_t nlen = (size_t)(eq - entry);
	const char *v = eq + 1;
	if (strlen(v) > HS_ENV_VALUE_MAX)
		return false;
#define IS(lit) (nlen == sizeof(lit) - 1 && memcmp(entry, lit, nlen) == 0)
	if (IS("TERM"))
		return term_ok(v);
	if (IS("LANG") || IS("LANGUAGE") || lc_name_ok(entry, nlen))
		return locale_ok(v);
	if (IS("TZ"))
		return tz_ok(v);
	if (IS("COLUMNS") || IS("LINES"))
		return digits_ok(v);
#undef IS
	return false;
}

static void sanitize_env(void)
{
	char **keep = NULL;
	size_t n = 0;

	for (char **e = environ; e && *e; e++)
		n++;
	keep = calloc(n + 1, sizeof *keep);
	if (!keep)
		abort();
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		if (!env_entry_ok(*e))
			continue;
		/* the first occurrence of a name wins, as getenv() sees it */
		size_t nlen = (size_t)(strchr(*e, '=') - *e);
		bool dup = false;
		for (size_t i = 0; i < k; i++)
			if (strncmp(keep[i], *e, nlen + 1) == 0)
				dup = true;
		if (dup)
			continue;
		keep[k] = strdup(*e);
		if (!keep[k])
			abort();
		k++;
	}
	if (clearenv() != 0)
		abort();
	for (size_t i = 0; i < k; i++) {
		char *eq = strchr(keep[i], '=');
		*eq = '\0';
		if (setenv(keep[i], eq + 1, 1) != 0)
			abort();
		free(keep[i]);
	}
	free(keep);
	if (setenv("PATH", HS_SAFE_PATH, 1) != 0)
		abort();
}

/* Raise the soft limit to want (or as far as the hard limit allows);
 * returns the soft limit now in force (0 when getrlimit fails).
 * RLIM_INFINITY is rlim_t's largest value, so plain comparisons order it. */
_Static_assert(RLIM_INFINITY == (rlim_t)-1, "RLIM_INFINITY is the largest rlim_t");
static rlim_t raise_limit(int resource, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0)
		return 0;
	if (rl.rlim_cur >= want || rl.rlim_cur == rl.rlim_max)
		return rl.rlim_cur;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	return setrlimit(resource, &rl) == 0 ? rl.rlim_cur : 0;
}

/* SIGXFSZ as the caller left it, when reset_limits had to change it */
static struct sigaction caller_xfsz;
static bool xfsz_changed;

static void reset_limits(void)
{
	/* a small RLIMIT_FSIZE would truncate a rewrite of /etc/passwd;
	 * CPU/AS/DATA could kill us halfway through a change.
	 * A hard limit below it (ulimit -f sets both) cannot be lifted
	 * without CAP_SYS_RESOURCE: a write past it then fails with EFBIG,
	 * which the tool reports with nothing replaced, where SIGXFSZ would
	 * kill it halfway, mute. */
	if (raise_limit(RLIMIT_FSIZE, RLIM_INFINITY) != RLIM_INFINITY) {
		const struct sigaction ign = { .sa_handler = SIG_IGN };

		xfsz_changed = sigaction(SIGXFSZ, &ign, &caller_xfsz) == 0;
	}
	raise_limit(RLIMIT_CPU, RLIM_INFINITY);
	raise_limit(RLIMIT_AS, RLIM_INFINITY);
	raise_limit(RLIMIT_DATA, RLIM_INFINITY);
	/* only make sure there is room; not unlimited, which would switch
	 * later execs to the legacy (less random) mmap layout */
	raise_limit(RLIMIT_STACK, 8 * 1024 * 1024);
	/* enough fds for PAM and NSS modules, without raising the soft
	 * limit to a huge hard limit that select()-based code chokes on */
	raise_limit(RLIMIT_NOFILE, 1024);

	/* no core file of ours: the soft limit decides that.  The hard limit
	 * stays, so that the caller's (or pam_limits') limit can be handed
	 * back to a session or shell without CAP_SYS_RESOURCE, which a
	 * container's root may lack */
	struct rlimit core;
	if (getrlimit(RLIMIT_CORE, &core) < 0)
		core = (struct rlimit){ 1, 0 };   /* unknown: both to 0 */
	if (core.rlim_cur != 0) {
		core.rlim_cur = 0;
		setrlimit(RLIMIT_CORE, &core);
	}
}

static const char *program_name(const char *argv0, const char *fallback)
{
	const char *fb = fallback && *fallback ? fallback : "hardened-shadow";

	if (!argv0)
		return fb;
	const char *slash = strrchr(argv0, '/');
	const char *base = slash ? slash + 1 : argv0;
	/* the name goes into messages and syslog: keep it plain */
	size_t n = strlen(base);
	if (n == 0 || n > 64 || base[0] == '-' || !all_chars_in(base, "._+-"))
		return fb;
	return base;
}

/* capget or capset (nr) of this thread's capabilities */
static int caps(long nr, struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(nr, &head, data) < 0 ? -errno : 0;
}

/* A caller who is not root gets capabilities only from the file (setgid
 * drops the ambient set), and the only one we ship is CAP_AUDIT_WRITE.
 * Anything else is a mistake of whoever set it (setcap, a container's
 * ambient set on a plain tool) that no code here was written for: refuse.
 * CAP_AUDIT_WRITE stays permitted, not effective, until a send. */
static void check_caps(const char *prog)
{
	struct __user_cap_data_struct data[2];
	const uint64_t audit = (uint64_t)1 << CAP_AUDIT_WRITE;

	if (geteuid() == 0)
		return;
	if (caps(SYS_capget, data) < 0)
		abort();
	/* the effective set is always within the permitted one */
	uint64_t held = data[0].permitted | (uint64_t)data[1].permitted << 32;
	if (held & ~audit) {
		char msg[160];
		int n = snprintf(msg, sizeof msg, "%s: refusing to run with capabilities %#llx "
				 "(only cap_audit_write is expected)\n", prog,
				 (unsigned long long)held);
		(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
		exit(1);
	}
	if (!(held & audit))
		return;
	data[0].effective = data[1].effective = 0;
	if (caps(SYS_capset, data) < 0)
		abort();
	audit_cap_held = true;
}

const char *hs_privs_init(int argc, char **argv, const char *fallback_name)
{
	/* first, so our own messages (and everything after) cannot land in
	 * a file that happens to get fd 1 or 2 */
	make_std_fds();
	/* Linux 5.18+ turns an execve with argc == 0 into one empty
	 * argument; treat that the same, so the tools that choose their mode
	 * by argv[0] (sg, vigr) never guess */
	if (argc < 1 || !argv || !argv[0] || !argv[0][0]) {
		static const char msg[] = "hardened-shadow: called without argv[0]\n";
		(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
		exit(1);
	}
	const char *prog = program_name(argv[0], fallback_name);
	check_caps(prog);
	sanitize_env();
	reset_limits();
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	umask(077);
	return prog;
}

int hs_privs_audit_write(bool on)
{
	struct __user_cap_data_struct data[2];
	int r;

	if (!audit_cap_held)
		return 0;
	r = caps(SYS_capget, data);
	if (r < 0)
		return r;
	data[CAP_TO_INDEX(CAP_AUDIT_WRITE)].effective = on ? CAP_TO_MASK(CAP_AUDIT_WRITE) : 0;
	r = caps(SYS_capset, data);
	/* never go on with it raised by mistake */
	if (r < 0 && !on)
		abort();
	return r;
}

void hs_privs_audit_drop(void)
{
	struct __user_cap_data_struct data[2];

	if (!audit_cap_held)
		return;
	/* Permitted and effective emptied (the inheritable set is the
	 * caller's and grants nothing here); nothing can raise it again.
	 * capset acts on the calling thread only: a thread a PAM module
	 * started inside pam_chauthtok would keep the capability.  No
	 * module of the stacks we ship starts one, and none runs code a
	 * user chooses; a review noted it, so it is said here. */
	if (caps(SYS_capget, data) < 0)
		abort();
	data[0].permitted = data[1].permitted = 0;
	data[0].effective = data[1].effective = 0;
	if (caps(SYS_capset, data) < 0)
		abort();
	audit_cap_held = false;
}

void hs_privs_restore_caller_signals(void)
{
	if (xfsz_changed)
		sigaction(SIGXFSZ, &caller_xfsz, NULL);
}

void hs_privs_block_signals(sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, saved);
}

void hs_privs_restore_signals(const sigset_t *saved)
{
	const struct timespec now = { 0, 0 };
	sigset_t pipe;

	/* A report written meanwhile to a pipe nobody reads already failed
	 * with EPIPE; its SIGPIPE, pending, would end the tool (141) after
	 * its change was made, before its own status. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (!sigismember(saved, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &now) == SIGPIPE)
			;
	sigprocmask(SIG_SETMASK, saved, NULL);
}

/* The cgroup v2 freezer stops every process of a cgroup without a signal,
 * and systemd delegates cgroups to users (a desktop terminal's scope,
 * systemd-run --user): a caller could freeze us in theirs.  Move to the
 * root cgroup, which only root may freeze (Debian's unified hierarchy, or
 * the hybrid one's unified part).  Best effort: where neither can be
 * written (no cgroup v2; a container whose root cgroup is not ours) we
 * stay where we are. */
void hs_privs_leave_callers_cgroup(void)
{
	static const char *const procs[] = { "/sys/fs/cgroup/cgroup.procs",
					     "/sys/fs/cgroup/unified/cgroup.procs" };

	for (size_t i = 0; i < HS_ARRAY_SIZE(procs); i++) {
		int fd = open(procs[i], O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			continue;
		/* "0": the writing process */
		(void)!write(fd, "0", 1);
		close(fd);
		return;
	}
}

int hs_privs_unstoppable(void)
{
	static const int stops[] = { SIGTSTP, SIGTTIN, SIGTTOU };

	if (setresuid(0, 0, 0) < 0)
		return -errno;
	hs_privs_leave_callers_cgroup();
	for (size_t i = 0; i < HS_ARRAY_SIZE(stops); i++)
		if (signal(stops[i], SIG_IGN) == SIG_ERR)
			return -errno;
	return 0;
}

bool hs_privs_caller_is_root(void)
{
	return getuid() == 0;
}
