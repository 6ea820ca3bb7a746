/* Landlock and seccomp self-confinement: see confine.h. */
#include "confine.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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

#if defined(SYS_landlock_create_ruleset)
int hs_confine_read_beneath(int dirfd)
{
	struct ll_ruleset_attr rs = { 0 };
	struct ll_path_beneath_attr rule;
	size_t rs_size = sizeof(uint64_t);
	long abi;
	int fd, r = 0;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 1)
		return errno == ENOSYS || errno == EOPNOTSUPP ? -ENOSYS : -errno;
	/* Handle every right this kernel knows: an unhandled right would be
	 * an allowed one. */
	rs.handled_access_fs = LL_FS_ABI1_ALL;
	if (abi >= 2)
		rs.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3)
		rs.handled_access_fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		rs.handled_access_fs |= LL_FS_IOCTL_DEV;
	if (abi >= 4) {
		rs.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		rs_size = 2 * sizeof(uint64_t);
	}
	if (abi >= 6) {
		rs.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		rs_size = sizeof rs;
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &rs, rs_size, 0);
	if (fd < 0)
		return -errno;
	rule.allowed_access = LL_FS_READ_FILE | LL_FS_READ_DIR;
	rule.parent_fd = dirfd;
	if (syscall(SYS_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &rule, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, fd, 0) < 0)
		r = -errno;
	close(fd);
	return r;
}
#else
int hs_confine_read_beneath(int dirfd)
{
	(void)dirfd;
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
	sc = hs_confine_syscalls(helper_syscalls, sizeof helper_syscalls / sizeof helper_syscalls[0]);
	if (sc < 0 && sc != -ENOSYS)
		return sc;
	return fs == -ENOSYS && sc == -ENOSYS ? -ENOSYS : 0;
}
