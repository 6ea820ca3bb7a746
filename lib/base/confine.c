/* Landlock and seccomp self-confinement: see confine.h. */
#include "confine.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* The Landlock ABI, defined here because Debian 12's kernel headers stop
 * at ABI 2 while the running kernel may know more; values are the
 * kernel's UAPI. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE     (1ULL << 0)
#define LL_FS_WRITE_FILE  (1ULL << 1)
#define LL_FS_READ_FILE   (1ULL << 2)
#define LL_FS_READ_DIR    (1ULL << 3)
#define LL_FS_ABI1_ALL    ((1ULL << 13) - 1)   /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER       (1ULL << 13)         /* ABI 2 */
#define LL_FS_TRUNCATE    (1ULL << 14)         /* ABI 3 */
#define LL_FS_IOCTL_DEV   (1ULL << 15)         /* ABI 5 */
#define LL_NET_BIND_TCP   (1ULL << 0)          /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)     /* ABI 6 */
#define LL_SCOPE_SIGNAL   (1ULL << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;   /* ABI 4 */
	uint64_t scoped;               /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_FS_MAKE_CHAR   (1ULL << 6)
#define LL_FS_MAKE_DIR    (1ULL << 7)
#define LL_FS_MAKE_SOCK   (1ULL << 9)
#define LL_FS_MAKE_FIFO   (1ULL << 10)
#define LL_FS_MAKE_BLOCK  (1ULL << 11)
#define LL_FS_REMOVE_DIR  (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
/* the rights that apply to a file (the others only to directories) */
#define LL_FS_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			   LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

#if defined(SYS_landlock_create_ruleset)
/* A ruleset handling every file-system right this kernel knows (an
 * unhandled right would be an allowed one); with confine_all, TCP,
 * signals and abstract sockets too.  *handled gets the file-system
 * rights.  Returns the ruleset's fd, -ENOSYS without Landlock or -errno. */
static int ruleset_create(bool confine_all, uint64_t *handled)
{
	struct ll_ruleset_attr rs = { 0 };
	size_t rs_size = sizeof(uint64_t);
	long abi;
	int fd;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 1)
		return errno == ENOSYS || errno == EOPNOTSUPP ? -ENOSYS : -errno;
	rs.handled_access_fs = LL_FS_ABI1_ALL;
	if (abi >= 2)
		rs.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3)
		rs.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		rs.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (confine_all && abi >= 4) {
		rs.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		rs_size = 2 * sizeof(uint64_t);
	}
	if (confine_all && abi >= 6) {
		rs.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		rs_size = sizeof rs;
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &rs, rs_size, 0);
	if (fd < 0)
		return -errno;
	*handled = rs.handled_access_fs;
	return fd;
}

static int rule_add(int rsfd, int parent_fd, uint64_t access)
{
	struct ll_path_beneath_attr rule = { .allowed_access = access, .parent_fd = parent_fd };

	if (access == 0)
		return 0;
	return syscall(SYS_landlock_add_rule, rsfd, LL_RULE_PATH_BENEATH, &rule, 0) < 0 ? -errno : 0;
}

static int restrict_self(int rsfd)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rsfd, 0) < 0)
		return -errno;
	return 0;
}

int hs_confine_read_beneath(int dirfd)
{
	uint64_t handled;
	_cleanup_close_ int fd = ruleset_create(true, &handled);
	int r;

	if (fd < 0)
		return fd;
	r = rule_add(fd, dirfd, LL_FS_READ_FILE | LL_FS_READ_DIR);
	return r < 0 ? r : restrict_self(fd);
}

/* The Landlock rights an HS_CONFINE_* set stands for. */
static uint64_t rights_of(unsigned access)
{
	uint64_t a = 0;

	if (access & (HS_CONFINE_READ | HS_CONFINE_WRITE | HS_CONFINE_EXEC))
		a |= LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (access & HS_CONFINE_WRITE)
		a |= (LL_FS_ABI1_ALL & ~(LL_FS_EXECUTE | LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK |
					 LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO)) |
		     LL_FS_REFER | LL_FS_TRUNCATE;
	if (access & HS_CONFINE_EXEC)
		a |= LL_FS_EXECUTE;
	if (access & HS_CONFINE_LIST)
		a |= LL_FS_READ_DIR;
	if (access & HS_CONFINE_UNLINK)
		a |= LL_FS_REMOVE_FILE;
	if (access & HS_CONFINE_DEVICE)
		a |= LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
	if (access & HS_CONFINE_ENTRIES)
		a |= LL_FS_MAKE_DIR | LL_FS_REMOVE_DIR | LL_FS_REFER;
	return a;
}

/* One rule: a path that is not there is skipped (/lib64, a home not made
 * yet); a file gets only the rights that apply to files.  Most rules name
 * directories: an O_DIRECTORY open says which it is without an fstat, and
 * a rule known to name a file (HS_CONFINE_FILE) skips that try.  Returns
 * 1 when the rule was added, 0 when the path is not there, or -errno. */
static int path_rule_add(int rsfd, uint64_t handled, const char *path, unsigned access)
{
	int flags = O_PATH | O_CLOEXEC | (access & HS_CONFINE_NOFOLLOW ? O_NOFOLLOW : 0);
	uint64_t rights = rights_of(access) & handled;
	_cleanup_close_ int fd = -1;
	int r;

	if (!path)
		return 0;
	fd = access & HS_CONFINE_FILE ? -1 : open(path, flags | O_DIRECTORY);
	if (access & HS_CONFINE_FILE || (fd < 0 && errno == ENOTDIR)) {
		fd = open(path, flags);
		rights &= LL_FS_FILE_RIGHTS;
		/* replaced by a directory in between: it gets a file's rights */
	}
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	r = rule_add(rsfd, fd, rights);
	return r < 0 ? r : 1;
}

/* What readlink says of path (/bin, /sbin, /lib*): LINK_INTO_USR when it
 * is merged /usr's symlink to /usr + path, whose rules (/usr to read,
 * /usr/lib to run) then cover where it leads; LINK_ABSENT when nothing is
 * there; LINK_NONE when it is no symlink; LINK_OTHER for any other link
 * or when readlink cannot tell. */
enum usr_link { LINK_OTHER, LINK_INTO_USR, LINK_ABSENT, LINK_NONE };

static enum usr_link usr_link_of(const char *path)
{
	char target[16];
	ssize_t n = readlink(path, target, sizeof target);
	size_t plen = strlen(path);
	const char *t = target;

	if (n < 0)
		return errno == ENOENT ? LINK_ABSENT : errno == EINVAL ? LINK_NONE : LINK_OTHER;
	if ((size_t)n >= sizeof target)
		return LINK_OTHER;
	if (t[0] == '/') {
		t++;
		n--;
	}
	return (size_t)n == 3 + plen && memcmp(t, "usr", 3) == 0 && memcmp(t + 3, path, plen) == 0
		       ? LINK_INTO_USR : LINK_OTHER;
}

bool hs_confine_selinux_may_be_active(void)
{
	static int cached = -1;
	struct statfs fs;

	if (cached < 0)
		cached = (statfs("/sys/fs/selinux", &fs) == 0 &&
			  (unsigned long)fs.f_type == SELINUX_MAGIC) ||
			 dlsym(RTLD_DEFAULT, "is_selinux_enabled") != NULL;
	return cached;
}

/* base rules: how each depends on what this system has */
#define BASE_USR_LINK (1u << 30)  /* skipped where it is merged /usr's link */
#define BASE_LIB      (1u << 29)  /* the loader and libraries (EXEC): with
				   * nothing to run, READ only, and skipped
				   * where /usr's READ covers it */
#define BASE_SELINUX  (1u << 28)  /* only while SELinux may be active */
#define BASE_HELPER   (1u << 27)  /* a program the cache flush runs */

static const struct hs_confine_rule base_rules[] = {
	/* the cache flush after a commit (hs_globalfile_flush_caches):
	 * first, as whether they are there decides the library rules */
	{ "/usr/sbin/nscd", HS_CONFINE_EXEC | HS_CONFINE_FILE | BASE_HELPER },
	{ "/usr/sbin/sss_cache", HS_CONFINE_EXEC | HS_CONFINE_FILE | BASE_HELPER },
	{ "/var/lib/sss", HS_CONFINE_WRITE },
	{ "/usr", HS_CONFINE_READ }, { "/etc", HS_CONFINE_READ },
	{ "/bin", HS_CONFINE_READ | BASE_USR_LINK },
	{ "/sbin", HS_CONFINE_READ | BASE_USR_LINK },
	/* the loader (/lib64/ld-linux-x86-64.so.2 ...) is run with the
	 * program; libraries are only read (dlopen: libselinux, NSS, PAM) */
	{ "/lib", HS_CONFINE_EXEC | BASE_USR_LINK | BASE_LIB },
	{ "/lib64", HS_CONFINE_EXEC | BASE_LIB }, { "/lib32", HS_CONFINE_EXEC | BASE_LIB },
	{ "/usr/lib", HS_CONFINE_EXEC | BASE_LIB },
	{ "/proc", HS_CONFINE_READ }, { "/sys", HS_CONFINE_READ },
	{ "/dev/null", HS_CONFINE_DEVICE | HS_CONFINE_FILE },
	{ "/dev/zero", HS_CONFINE_READ | HS_CONFINE_FILE },
	{ "/dev/urandom", HS_CONFINE_READ | HS_CONFINE_FILE },
	{ "/dev/random", HS_CONFINE_READ | HS_CONFINE_FILE },
	{ "/dev/tty", HS_CONFINE_DEVICE | HS_CONFINE_FILE },
	/* the process's own security attributes (SELinux file contexts):
	 * libselinux's setfscreatecon writes the calling thread's, a
	 * directory of its own (/proc/PID/task/TID/attr), not /proc/PID/attr */
	{ "/proc/self/attr", HS_CONFINE_WRITE | BASE_SELINUX },
	{ "/proc/thread-self/attr", HS_CONFINE_WRITE | BASE_SELINUX },
};

#define BASE_FLAGS (BASE_USR_LINK | BASE_LIB | BASE_SELINUX | BASE_HELPER)

/* Does one of the caller's rules give all a base rule's rights on the
 * same path, the same way (a directory, followed): /etc, to write? */
static bool covered_by(const struct hs_confine_rule *rules, size_t n, const char *path,
		       unsigned access)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].path && strcmp(rules[i].path, path) == 0 &&
		    !(rules[i].access & (HS_CONFINE_NOFOLLOW | HS_CONFINE_FILE)) &&
		    (rights_of(access) & ~rights_of(rules[i].access)) == 0)
			return true;
	return false;
}

/* One base rule, as this system needs it; *run is whether anything may
 * be run (a helper is there, or a caller's rule runs a program). */
static int base_rule_add(int rsfd, uint64_t handled, const struct hs_confine_rule *b, bool *run)
{
	unsigned access = b->access & ~BASE_FLAGS;
	int r;

	if (b->access & BASE_SELINUX && !hs_confine_selinux_may_be_active())
		return 0;
	if (b->access & BASE_LIB && !*run) {
		/* nothing can be run, so no loader either: the libraries
		 * are only read, and what is read beneath /usr the /usr
		 * rule covers (unless a symlink leads out of it) */
		enum usr_link link = usr_link_of(b->path);

		if (link == LINK_ABSENT || link == (strncmp(b->path, "/usr/", 5) == 0
						     ? LINK_NONE : LINK_INTO_USR))
			return 0;
		access = HS_CONFINE_READ;
	} else if (b->access & BASE_USR_LINK) {
		enum usr_link link = usr_link_of(b->path);

		if (link == LINK_ABSENT || link == LINK_INTO_USR)
			return 0;
	}
	r = path_rule_add(rsfd, handled, b->path, access);
	if (r > 0 && b->access & BASE_HELPER)
		*run = true;
	return r < 0 ? r : 0;
}

int hs_confine_paths(const struct hs_confine_rule *rules, size_t n)
{
	uint64_t handled;
	_cleanup_close_ int fd = ruleset_create(false, &handled);
	bool run = false;
	int r = 0;

	if (fd < 0)
		return fd;
	for (size_t i = 0; i < n; i++)
		if (rules[i].path && rules[i].access & HS_CONFINE_EXEC)
			run = true;
	for (size_t i = 0; r == 0 && i < HS_ARRAY_SIZE(base_rules); i++) {
		const struct hs_confine_rule *b = &base_rules[i];

		if (b->access & HS_CONFINE_FILE ||
		    !covered_by(rules, n, b->path, b->access & ~BASE_FLAGS))
			r = base_rule_add(fd, handled, b, &run);
	}
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = path_rule_add(fd, handled, rules[i].path, rules[i].access);
	return r < 0 ? r : restrict_self(fd);
}
#else
int hs_confine_read_beneath(int dirfd)
{
	(void)dirfd;
	return -ENOSYS;
}

int hs_confine_paths(const struct hs_confine_rule *rules, size_t n)
{
	(void)rules;
	(void)n;
	return -ENOSYS;
}
#endif

#if defined(__x86_64__)
#define HS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define HS_AUDIT_ARCH AUDIT_ARCH_I386
#endif

#ifdef HS_AUDIT_ARCH
/* At most this many calls in one allow-list: BPF jump offsets are 8 bits. */
#define MAX_ALLOWED 200

int hs_confine_syscalls(const long *allowed, size_t n)
{
	struct sock_filter prog[MAX_ALLOWED + 8];
	struct sock_fprog fprog;
	size_t k = 0;

	if (n > MAX_ALLOWED)
		return -E2BIG;
	/* another architecture's calls (x32, i386 on x86_64) have other
	 * numbers: refuse them outright */
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HS_AUDIT_ARCH, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* the x32 ABI shares the architecture value; its calls have bit 30 */
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U,
						 (uint8_t)n, 0);
#endif
	for (size_t i = 0; i < n; i++)
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							 (uint32_t)allowed[i],
							 (uint8_t)(n - i), 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						 SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fprog.len = (unsigned short)k;
	fprog.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0)
		return errno == EINVAL ? -ENOSYS : -errno;
	return 0;
}
#else
int hs_confine_syscalls(const long *allowed, size_t n)
{
	(void)allowed;
	(void)n;
	return -ENOSYS;
}
#endif

/* What a helper does after it has opened the caller's directory. */
static const long helper_syscalls[] = {
	SYS_read, SYS_write, SYS_writev, SYS_close, SYS_openat, SYS_fstat, SYS_newfstatat,
#ifdef SYS_statx
	SYS_statx,
#endif
	SYS_lseek, SYS_fcntl, SYS_flock, SYS_getdents64,
	SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_madvise, SYS_futex,
	SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_restart_syscall,
	SYS_setitimer, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
#ifdef SYS_alarm
	SYS_alarm,
#endif
	SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_getpid, SYS_gettid,
	SYS_tgkill, SYS_sendto, SYS_getrandom, SYS_exit, SYS_exit_group,
};

int hs_confine_helper(int dirfd)
{
	int fs = hs_confine_read_beneath(dirfd);
	int sc;

	if (fs < 0 && fs != -ENOSYS)
		return fs;
	sc = hs_confine_syscalls(helper_syscalls, HS_ARRAY_SIZE(helper_syscalls));
	if (sc < 0 && sc != -ENOSYS)
		return sc;
	return fs == -ENOSYS && sc == -ENOSYS ? -ENOSYS : 0;
}
