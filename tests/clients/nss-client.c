/* nss-client: drives libnss_hardened_shadow.so.2 for the system tests
 * (tests/system/test_nss.py), inside the sandbox root.
 *
 *   nss-client direct NAME [BUFLEN]
 *       dlopen the module and call _nss_hardened_shadow_getspnam_r once;
 *       prints "status=S errno=E partial=no|yes" and, on success, the entry
 *       as NAME:HASH:LSTCHG:MIN:MAX:WARN:INACT:EXPIRE:FLAG (raw numbers).
 *   nss-client glibc NAME
 *       glibc getspnam_r with a 4096-byte buffer; prints "ret=E found=yes|no"
 *       and the entry.
 *   nss-client erange NAME
 *       module call with a 10-byte buffer (must be TRYAGAIN/ERANGE, result
 *       untouched), then glibc getspnam_r with a 10-byte buffer (must
 *       return ERANGE), then both with a big buffer; prints the entry.
 *   nss-client enum [BUFLEN]
 *       module setspent/getspent_r/endspent; prints one entry per line.
 *       BUFLEN > 0: every entry is first asked for with a BUFLEN-byte
 *       buffer; on TRYAGAIN/ERANGE the buffer grows and the SAME entry
 *       must come back (prints "retried=N" at the end).
 *   nss-client threads NTHREADS ITERS USER=HASH...
 *       NTHREADS threads each do ITERS glibc getspnam_r lookups cycling
 *       through the users; every answer must match.  Prints "ok LOOKUPS".
 *   nss-client state NAME...
 *       snapshot fds, signal dispositions, signal mask, credentials,
 *       umask and cwd; look every NAME up through glibc and the module,
 *       enumerate through both (also abandoning one enumeration half way
 *       and calling endspent); compare.  Prints "state unchanged" or
 *       every difference (exit 1).
 *
 * Exit status 0 when the command's own expectations hold, 1 otherwise,
 * 2 on usage errors. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <nss.h>
#include <pthread.h>
#include <shadow.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODULE_SONAME "libnss_hardened_shadow.so.2"

typedef enum nss_status (*getspnam_r_fn)(const char *, struct spwd *, char *, size_t, int *);
typedef enum nss_status (*setspent_fn)(int);
typedef enum nss_status (*getspent_r_fn)(struct spwd *, char *, size_t, int *);
typedef enum nss_status (*endspent_fn)(void);

static struct {
	getspnam_r_fn getspnam_r;
	setspent_fn setspent;
	getspent_r_fn getspent_r;
	endspent_fn endspent;
} mod;

static void load_module(void)
{
	void *h = dlopen(MODULE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "nss-client: cannot load %s: %s\n", MODULE_SONAME, dlerror());
		exit(1);
	}
	mod.getspnam_r = (getspnam_r_fn)dlsym(h, "_nss_hardened_shadow_getspnam_r");
	mod.setspent = (setspent_fn)dlsym(h, "_nss_hardened_shadow_setspent");
	mod.getspent_r = (getspent_r_fn)dlsym(h, "_nss_hardened_shadow_getspent_r");
	mod.endspent = (endspent_fn)dlsym(h, "_nss_hardened_shadow_endspent");
	if (!mod.getspnam_r || !mod.setspent || !mod.getspent_r || !mod.endspent) {
		fprintf(stderr, "nss-client: %s lacks an entry point\n", MODULE_SONAME);
		exit(1);
	}
}

static const char *status_name(enum nss_status s)
{
	switch (s) {
	case NSS_STATUS_SUCCESS: return "SUCCESS";
	case NSS_STATUS_NOTFOUND: return "NOTFOUND";
	case NSS_STATUS_UNAVAIL: return "UNAVAIL";
	case NSS_STATUS_TRYAGAIN: return "TRYAGAIN";
	case NSS_STATUS_RETURN: return "RETURN";
	default: return "?";
	}
}

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "0";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ERANGE: return "ERANGE";
	case EIO: return "EIO";
	case EAGAIN: return "EAGAIN";
	case EINVAL: return "EINVAL";
	default: return "OTHER";
	}
}

static void print_spwd(const struct spwd *sp)
{
	printf("%s:%s:%ld:%ld:%ld:%ld:%ld:%ld:%lu\n", sp->sp_namp, sp->sp_pwdp,
	       sp->sp_lstchg, sp->sp_min, sp->sp_max, sp->sp_warn, sp->sp_inact,
	       sp->sp_expire, sp->sp_flag);
}

/* A result struct pre-filled with a pattern: any write the module makes
 * on a failed call shows up as a difference. */
static void poison(struct spwd *sp)
{
	memset(sp, 0xa5, sizeof(*sp));
}

static bool is_poisoned(const struct spwd *sp)
{
	struct spwd ref;

	poison(&ref);
	return memcmp(sp, &ref, sizeof(ref)) == 0;
}

static int cmd_direct(int argc, char **argv)
{
	size_t buflen = 4096;
	struct spwd sp;
	char *buf;
	int err = 0;
	enum nss_status s;

	if (argc < 1)
		return 2;
	if (argc > 1)
		buflen = strtoul(argv[1], NULL, 10);
	load_module();
	buf = malloc(buflen ? buflen : 1);
	if (!buf)
		return 1;
	poison(&sp);
	s = mod.getspnam_r(argv[0], &sp, buf, buflen, &err);
	printf("status=%s errno=%s partial=%s\n", status_name(s),
	       s == NSS_STATUS_SUCCESS ? "0" : errno_name(err),
	       s != NSS_STATUS_SUCCESS && !is_poisoned(&sp) ? "yes" : "no");
	if (s == NSS_STATUS_SUCCESS)
		print_spwd(&sp);
	free(buf);
	return 0;
}

/* What a program sees through glibc: getspnam_r's return value. */
static int cmd_glibc(int argc, char **argv)
{
	char buf[4096];
	struct spwd sp, *res = NULL;
	int r;

	if (argc < 1)
		return 2;
	r = getspnam_r(argv[0], &sp, buf, sizeof(buf), &res);
	printf("ret=%s found=%s\n", errno_name(r), res ? "yes" : "no");
	if (res)
		print_spwd(res);
	return 0;
}

static int cmd_erange(int argc, char **argv)
{
	char small[10], big[4096];
	struct spwd sp, *res = NULL;
	enum nss_status s;
	int err = 0, r;

	if (argc < 1)
		return 2;
	load_module();

	poison(&sp);
	s = mod.getspnam_r(argv[0], &sp, small, sizeof(small), &err);
	if (s != NSS_STATUS_TRYAGAIN || err != ERANGE || !is_poisoned(&sp)) {
		printf("module small buffer: status=%s errno=%s partial=%s\n", status_name(s),
		       errno_name(err), is_poisoned(&sp) ? "no" : "yes");
		return 1;
	}
	s = mod.getspnam_r(argv[0], &sp, big, sizeof(big), &err);
	if (s != NSS_STATUS_SUCCESS) {
		printf("module big buffer: status=%s errno=%s\n", status_name(s), errno_name(err));
		return 1;
	}
	printf("module: ");
	print_spwd(&sp);

	r = getspnam_r(argv[0], &sp, small, sizeof(small), &res);
	if (r != ERANGE || res) {
		printf("glibc small buffer: returned %d (%s)\n", r, errno_name(r));
		return 1;
	}
	r = getspnam_r(argv[0], &sp, big, sizeof(big), &res);
	if (r != 0 || res != &sp) {
		printf("glibc big buffer: returned %d (%s)\n", r, errno_name(r));
		return 1;
	}
	printf("glibc: ");
	print_spwd(&sp);
	return 0;
}

static int cmd_enum(int argc, char **argv)
{
	size_t first_len = argc > 0 ? strtoul(argv[0], NULL, 10) : 0;
	size_t buflen;
	char *buf;
	struct spwd sp;
	enum nss_status s;
	int err = 0, retried = 0, rc = 0;

	load_module();
	s = mod.setspent(0);
	if (s != NSS_STATUS_SUCCESS) {
		printf("setspent: status=%s errno=%s\n", status_name(s), errno_name(errno));
		return 1;
	}
	for (;;) {
		buflen = first_len ? first_len : 4096;
		buf = malloc(buflen);
		if (!buf)
			return 1;
		poison(&sp);
		s = mod.getspent_r(&sp, buf, buflen, &err);
		while (s == NSS_STATUS_TRYAGAIN && err == ERANGE) {
			if (!is_poisoned(&sp)) {
				printf("partial data on ERANGE\n");
				rc = 1;
			}
			retried++;
			buflen *= 2;
			free(buf);
			buf = malloc(buflen);
			if (!buf)
				return 1;
			s = mod.getspent_r(&sp, buf, buflen, &err);
		}
		if (s != NSS_STATUS_SUCCESS) {
			free(buf);
			if (s != NSS_STATUS_NOTFOUND) {
				printf("getspent_r: status=%s errno=%s\n", status_name(s),
				       errno_name(err));
				rc = 1;
			}
			break;
		}
		print_spwd(&sp);
		free(buf);
	}
	mod.endspent();
	if (first_len)
		printf("retried=%d\n", retried);
	return rc;
}

struct expect {
	const char *name;
	const char *hash;
};

static struct expect *expects;
static int n_expects;
static int iterations;

static void *lookup_thread(void *arg)
{
	long id = (long)arg;
	long bad = 0;
	char buf[1024];
	struct spwd sp, *res;
	int i, r;

	for (i = 0; i < iterations; i++) {
		const struct expect *e = &expects[(id * 7 + i) % n_expects];

		res = NULL;
		r = getspnam_r(e->name, &sp, buf, sizeof(buf), &res);
		if (r != 0 || !res || strcmp(sp.sp_namp, e->name) != 0 ||
		    strcmp(sp.sp_pwdp, e->hash) != 0 || sp.sp_flag != (unsigned long)-1) {
			if (bad < 3)
				fprintf(stderr, "thread %ld: %s: r=%d got %s\n", id, e->name, r,
					res ? sp.sp_namp : "(null)");
			bad++;
		}
	}
	return (void *)bad;
}

static int cmd_threads(int argc, char **argv)
{
	int nthreads, i;
	pthread_t *tids;
	long bad = 0;

	if (argc < 3)
		return 2;
	nthreads = atoi(argv[0]);
	iterations = atoi(argv[1]);
	n_expects = argc - 2;
	expects = calloc(n_expects, sizeof(*expects));
	tids = calloc(nthreads, sizeof(*tids));
	if (!expects || !tids)
		return 1;
	for (i = 0; i < n_expects; i++) {
		char *eq = strchr(argv[i + 2], '=');

		if (!eq)
			return 2;
		*eq = '\0';
		expects[i].name = argv[i + 2];
		expects[i].hash = eq + 1;
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, lookup_thread, (void *)(long)i) != 0)
			return 1;
	for (i = 0; i < nthreads; i++) {
		void *ret;

		pthread_join(tids[i], &ret);
		bad += (long)ret;
	}
	if (bad) {
		printf("bad %ld of %ld\n", bad, (long)nthreads * iterations);
		return 1;
	}
	printf("ok %ld\n", (long)nthreads * iterations);
	return 0;
}

/* ---- process state snapshot ---- */

#define MAX_FDS 256

struct snapshot {
	int nfds;
	int fd[MAX_FDS];
	char target[MAX_FDS][128];
	struct sigaction act[NSIG];
	int act_ret[NSIG];
	sigset_t mask;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int ngroups;
	gid_t groups[NGROUPS_MAX];
	mode_t umask;
	char cwd[PATH_MAX];
};

static void take_snapshot(struct snapshot *s)
{
	DIR *d;
	struct dirent *de;
	int sig;

	memset(s, 0, sizeof(*s));
	d = opendir("/proc/self/fd");
	if (!d) {
		perror("nss-client: /proc/self/fd");
		exit(1);
	}
	while ((de = readdir(d)) && s->nfds < MAX_FDS) {
		char path[64];
		int fd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, s->target[s->nfds], sizeof(s->target[0]) - 1);
		if (n < 0)
			n = 0;
		s->target[s->nfds][n] = '\0';
		s->fd[s->nfds++] = fd;
	}
	closedir(d);
	for (sig = 1; sig < NSIG; sig++)
		s->act_ret[sig] = sigaction(sig, NULL, &s->act[sig]);
	pthread_sigmask(SIG_BLOCK, NULL, &s->mask);
	getresuid(&s->ruid, &s->euid, &s->suid);
	getresgid(&s->rgid, &s->egid, &s->sgid);
	s->ngroups = getgroups(NGROUPS_MAX, s->groups);
	s->umask = umask(022);
	umask(s->umask);
	if (!getcwd(s->cwd, sizeof(s->cwd)))
		s->cwd[0] = '\0';
}

/* Compare signal sets signal by signal: glibc copies only the kernel's
 * part of sa_mask, so the bytes beyond it are stack garbage. */
static bool same_signals(const sigset_t *a, const sigset_t *b)
{
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(a, sig) != sigismember(b, sig))
			return false;
	return true;
}

static int compare_snapshots(const struct snapshot *a, const struct snapshot *b)
{
	int diffs = 0, i, j, sig;

	for (i = 0; i < b->nfds; i++) {
		for (j = 0; j < a->nfds; j++)
			if (a->fd[j] == b->fd[i] && strcmp(a->target[j], b->target[i]) == 0)
				break;
		if (j == a->nfds) {
			printf("new fd %d -> %s\n", b->fd[i], b->target[i]);
			diffs++;
		}
	}
	for (i = 0; i < a->nfds; i++) {
		for (j = 0; j < b->nfds; j++)
			if (b->fd[j] == a->fd[i])
				break;
		if (j == b->nfds) {
			printf("fd %d closed\n", a->fd[i]);
			diffs++;
		}
	}
	for (sig = 1; sig < NSIG; sig++) {
		if (a->act_ret[sig] != b->act_ret[sig] ||
		    a->act[sig].sa_handler != b->act[sig].sa_handler ||
		    a->act[sig].sa_flags != b->act[sig].sa_flags ||
		    !same_signals(&a->act[sig].sa_mask, &b->act[sig].sa_mask)) {
			printf("signal %d disposition changed (handler %p -> %p, flags %#x -> %#x)\n", sig,
			       (void *)a->act[sig].sa_handler, (void *)b->act[sig].sa_handler,
			       (unsigned)a->act[sig].sa_flags, (unsigned)b->act[sig].sa_flags);
			diffs++;
		}
	}
	if (!same_signals(&a->mask, &b->mask)) {
		printf("signal mask changed\n");
		diffs++;
	}
	if (a->ruid != b->ruid || a->euid != b->euid || a->suid != b->suid) {
		printf("uids changed\n");
		diffs++;
	}
	if (a->rgid != b->rgid || a->egid != b->egid || a->sgid != b->sgid) {
		printf("gids changed\n");
		diffs++;
	}
	if (a->ngroups != b->ngroups ||
	    (a->ngroups > 0 && memcmp(a->groups, b->groups, a->ngroups * sizeof(gid_t)) != 0)) {
		printf("supplementary groups changed\n");
		diffs++;
	}
	if (a->umask != b->umask) {
		printf("umask changed\n");
		diffs++;
	}
	if (strcmp(a->cwd, b->cwd) != 0) {
		printf("cwd changed\n");
		diffs++;
	}
	return diffs;
}

static struct snapshot before, after;

static int cmd_state(int argc, char **argv)
{
	char buf[4096];
	struct spwd sp, *res;
	int i, err, n, r;

	take_snapshot(&before);

	/* Through glibc: the way real programs get here. */
	for (i = 0; i < argc; i++) {
		res = NULL;
		r = getspnam_r(argv[i], &sp, buf, sizeof(buf), &res);
		printf("glibc getspnam_r %s: %s\n", argv[i], res ? "found" : errno_name(r));
		res = NULL;
		r = getspnam_r(argv[i], &sp, buf, 10, &res);
	}
	setspent();
	n = 0;
	while (getspent())
		n++;
	endspent();
	printf("glibc getspent: %d entries\n", n);
	/* An enumeration abandoned half way, then a fresh one. */
	setspent();
	(void)getspent();
	endspent();

	/* Straight into the module. */
	load_module();
	for (i = 0; i < argc; i++) {
		err = 0;
		(void)mod.getspnam_r(argv[i], &sp, buf, sizeof(buf), &err);
		(void)mod.getspnam_r(argv[i], &sp, buf, 10, &err);
	}
	mod.setspent(0);
	n = 0;
	while (mod.getspent_r(&sp, buf, sizeof(buf), &err) == NSS_STATUS_SUCCESS)
		n++;
	mod.endspent();
	printf("module getspent_r: %d entries\n", n);
	mod.setspent(0);
	(void)mod.getspent_r(&sp, buf, 10, &err);
	(void)mod.getspent_r(&sp, buf, sizeof(buf), &err);
	mod.endspent();
	/* dlclose is not called: glibc never unloads NSS modules either,
	 * and the module's own fds are what we are after. */

	take_snapshot(&after);
	if (compare_snapshots(&before, &after)) {
		printf("state changed\n");
		return 1;
	}
	printf("state unchanged\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nss-client direct|glibc|erange|enum|threads|state ARGS...\n");
		return 2;
	}
	if (strcmp(argv[1], "direct") == 0)
		return cmd_direct(argc - 2, argv + 2);
	if (strcmp(argv[1], "glibc") == 0)
		return cmd_glibc(argc - 2, argv + 2);
	if (strcmp(argv[1], "erange") == 0)
		return cmd_erange(argc - 2, argv + 2);
	if (strcmp(argv[1], "enum") == 0)
		return cmd_enum(argc - 2, argv + 2);
	if (strcmp(argv[1], "threads") == 0)
		return cmd_threads(argc - 2, argv + 2);
	if (strcmp(argv[1], "state") == 0)
		return cmd_state(argc - 2, argv + 2);
	fprintf(stderr, "nss-client: unknown command %s\n", argv[1]);
	return 2;
}
