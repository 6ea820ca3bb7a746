/* Unit test of lib/base/auditlog.c: the events it hands the kernel are
 * those libaudit's audit_log_acct_message would hand it for the same
 * arguments, byte for byte, type and text, on hostile names, hosts and
 * terminals.  Both are run in this process, with socket() and sendto()
 * replaced by ours (this executable's definitions come before libc's for
 * libaudit too), so nothing reaches the kernel's audit; getaddrinfo()
 * too, so nothing asks a name server. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libaudit.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auditlog.h"

struct sent {
	bool sent;
	int type;
	size_t len;
	char text[MAX_AUDIT_MESSAGE_LENGTH];
};
static struct sent last;
static int sends;

int socket(int domain, int type, int protocol)
{
	(void)type, (void)protocol;
	if (domain != AF_NETLINK) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	return open("/dev/null", O_RDWR | O_CLOEXEC);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
               socklen_t tolen)
{
	const struct nlmsghdr *h = buf;

	(void)fd, (void)flags, (void)to, (void)tolen;
	sends++;
	memset(&last, 0, sizeof(last));
	last.sent = true;
	if (len < NLMSG_HDRLEN || h->nlmsg_len != len || len - NLMSG_HDRLEN > sizeof(last.text))
		return -1;
	last.type = h->nlmsg_type;
	last.len = len - NLMSG_HDRLEN;
	memcpy(last.text, (const char *)buf + NLMSG_HDRLEN, last.len);
	/* what a user namespace answers: libaudit then reads no reply */
	errno = ECONNREFUSED;
	return -1;
}

/* Name lookups of both sides, answered here, so that the test needs no
 * DNS (a host without a reachable resolver would wait seconds a name):
 * numeric addresses, localhost and ip6-localhost resolve, nothing else. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
	struct {
		struct addrinfo ai;
		struct sockaddr_in6 sa;
	} *r;
	struct sockaddr_in *v4;

	(void)service, (void)hints;
	if (!node)
		return EAI_NONAME;
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	r->ai.ai_addr = (struct sockaddr *)&r->sa;
	v4 = (struct sockaddr_in *)(void *)&r->sa;
	if (strcmp(node, "localhost") == 0)
		node = "127.0.0.1";
	else if (strcmp(node, "ip6-localhost") == 0)
		node = "::1";
	if (inet_pton(AF_INET, node, &v4->sin_addr) == 1) {
		r->ai.ai_family = v4->sin_family = AF_INET;
		r->ai.ai_addrlen = sizeof(*v4);
	} else if (inet_pton(AF_INET6, node, &r->sa.sin6_addr) == 1) {
		r->ai.ai_family = r->sa.sin6_family = AF_INET6;
		r->ai.ai_addrlen = sizeof(r->sa);
	} else {
		free(r);
		return EAI_NONAME;
	}
	*res = &r->ai;
	return 0;
}

void freeaddrinfo(struct addrinfo *ai)
{
	free(ai);
}

/* What libaudit sends for the event ours is asked for. */
static struct sent libaudit_sends(int type, const char *op, const char *name, unsigned long id,
                                  const char *host, const char *tty, bool ok)
{
	const char *acct = id == HS_AUDITLOG_NO_ID ? name : NULL;

	/* nothing, if libaudit sends nothing (a record it finds too long) */
	memset(&last, 0, sizeof(last));
	audit_log_acct_message(3, type, NULL, op, acct,
	                       id == HS_AUDITLOG_NO_ID ? (unsigned int)-1 : (unsigned int)id,
	                       host, NULL, tty, ok ? 1 : 0);
	return last;
}

/* Ours against libaudit's for one event; false (and both shown) if they
 * differ. */
static bool same_as_libaudit(int type, const char *op, const char *name, unsigned long id,
                             const char *host, const char *tty, bool ok)
{
	struct sent want = libaudit_sends(type, op, name, id, host, tty, ok);
	int before = sends;

	hs_auditlog_session(type, op, name, id, host, tty, ok);
	if (!want.sent && sends == before)
		return true;
	if (want.sent && sends == before + 1 && last.type == want.type && last.len == want.len &&
	    memcmp(last.text, want.text, want.len) == 0)
		return true;
	fprintf(stderr, "name=%.80s host=%.80s tty=%.80s:\n ours (%s):     %.*s\n libaudit (%s): %.*s\n",
	        name ? name : "(null)", host ? host : "(null)", tty ? tty : "(null)",
	        sends == before ? "not sent" : "sent", (int)last.len, last.text,
	        want.sent ? "sent" : "not sent", (int)want.len, want.text);
	return false;
}

static void expect_same(int type, const char *op, const char *name, unsigned long id,
                        const char *host, const char *tty, bool ok)
{
	if (!same_as_libaudit(type, op, name, id, host, tty, ok))
		fail();
}

/* A pseudo-terminal: its master and its slave (the test is skipped
 * where none can be made). */
static void open_pty(int *master, int *slave)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0)
		skip();
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
	assert_true(*slave >= 0);
}

/* First, in a child whose standard input is a terminal: the terminal
 * libaudit finds by itself (and the host it then names). */
static void own_terminal_is_named_as_libaudit_names_it(void **state)
{
	int master, slave, status;
	pid_t pid;

	(void)state;
	open_pty(&master, &slave);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		bool same;

		dup2(slave, STDIN_FILENO);
		same = same_as_libaudit(AUDIT_ADD_GROUP, "adding group", NULL, 1000, NULL, NULL,
		                        true);
		/* the case is one only if libaudit did name the terminal */
		same = same && strstr(last.text, " terminal=pts/");
		same = same && same_as_libaudit(AUDIT_USER_LOGIN, "login", "alice",
		                                HS_AUDITLOG_NO_ID, "localhost", NULL, false);
		_exit(same ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(slave);
	close(master);
}

static void account_events_match_libaudit(void **state)
{
	static const char *const names[] = {
		"alice", "", "a b", "quo\"te", "tab\there", "new\nline", "del\x7f",
		"caf\xc3\xa9", "\x80\x9b", "0123456789012345678901234567890",
		"01234567890123456789012345678901", "012345678901234567890123456789012",
		"0123456789012345678901234567890123456789012345678901234567890123456789",
		"012345678901234567890123456789\xc3\xa9", "x=y acct=\"root\"",
		/* a character cut at byte 32, and bytes past the cut that
		 * would need hex if libaudit looked at them */
		"0123456789012345678901234567890\xc3\xa9",
		"01234567890123456789012345678901\xc3\xa9", "01234567890123456789012345678901\"",
		"01234567890123456789012345678901 x", "\xff", " ", "\x01", "~", "!",
	};
	static const unsigned long ids[] = { 0, 1000, 4294967294ul, HS_AUDITLOG_NO_ID };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		expect_same(AUDIT_ADD_USER, "adding user", names[i], HS_AUDITLOG_NO_ID, NULL, NULL,
		            true);
		expect_same(AUDIT_DEL_USER, "deleting user", names[i], HS_AUDITLOG_NO_ID, NULL,
		            NULL, false);
	}
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		expect_same(AUDIT_ADD_GROUP, "adding group to /etc/group", NULL, ids[i], NULL, NULL,
		            true);
		expect_same(AUDIT_ADD_GROUP, "", "ignored when there is an id", ids[i], NULL, NULL,
		            true);
	}
}

static void session_events_match_libaudit(void **state)
{
	static const char *const hosts[] = {
		NULL, "", "localhost", "127.0.0.1", "::1", "a b", "x res=success",
		"ip6-localhost", "::ffff:127.0.0.1", "1.2.3.4.5", "[::1]", "%",
		"\xc3\xa9", "quo\"te",
	};
	static const char *const ttys[] = {
		NULL, "", "pts/3", "/dev/pts/3", "tty1", "/dev/tty1", "ttyS0", "console",
		"/dev/console", "x y", "ttyname that is longer than thirty-two bytes",
		"pts", "tty", "/dev/tty", "/dev/pts", "\xc3\xa9", "quo\"te",
	};

	(void)state;
	/* every terminal with the first hosts (none, empty, one that
	 * resolves: what decides the hostname libaudit fills in); the other
	 * hosts, each a name lookup, with the first terminals */
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
		for (size_t t = 0; t < sizeof(ttys) / sizeof(ttys[0]) && (h < 3 || t < 5); t++) {
			expect_same(AUDIT_USER_LOGIN, "login", "alice", HS_AUDITLOG_NO_ID, hosts[h],
			            ttys[t], true);
			expect_same(AUDIT_USER_LOGIN, "login", "UNKNOWN", HS_AUDITLOG_NO_ID,
			            hosts[h], ttys[t], false);
		}
}

/* A record longer than libaudit's netlink message (MAX_AUDIT_MESSAGE_LENGTH
 * with its header) is one libaudit does not send: every length around
 * that edge, made by the remote host's name. */
static void long_records_are_sent_as_libaudit_sends_them(void **state)
{
	static char host[9100];

	(void)state;
	memset(host, 'h', sizeof(host) - 1);
	for (size_t n = 8850; n < sizeof(host) - 1; n += n < 9000 ? 1 : 50) {
		host[n] = '\0';
		expect_same(AUDIT_USER_LOGIN, "login", "alice", HS_AUDITLOG_NO_ID, host, "x", true);
		host[n] = 'h';
	}
}

/* In a child of its own terminal state: an event, then the standard
 * descriptors change, then another event; libaudit looks the terminal
 * up for each event. */
static void terminal_is_looked_up_for_each_event(void **state)
{
	int master, slave, status;
	pid_t pid;

	(void)state;
	open_pty(&master, &slave);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		bool same;

		/* none of the three a terminal */
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		same = same_as_libaudit(AUDIT_ADD_USER, "adding user", "a", HS_AUDITLOG_NO_ID, NULL,
		                        NULL, true);
		/* stdout one */
		dup2(slave, 1);
		same = same_as_libaudit(AUDIT_ADD_USER, "adding user", "b", HS_AUDITLOG_NO_ID, NULL,
		                        NULL, true) && same;
		same = same && strstr(last.text, " terminal=pts/");
		/* none again */
		dup2(null, 1);
		same = same_as_libaudit(AUDIT_ADD_USER, "adding user", "c", HS_AUDITLOG_NO_ID, NULL,
		                        NULL, true) && same;
		_exit(same ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(slave);
	close(master);
}

/* Terminals as the standard descriptors may hold them: opened by a
 * symlink, by a device node of a name longer than libaudit's 32 bytes,
 * by a second link outside /dev, a pty master, or none of them; each in
 * a child whose fds 0, 1 and 2 are set up for the case.  The device nodes
 * only where the test may make and open them (root, a /tmp without
 * nodev, a device cgroup that allows it; a pty's slave opens only in its
 * devpts, so the nodes are /dev/tty1's, a virtual console, if it is here). */
static void terminal_names_match_libaudit(void **state)
{
	char dir[] = "/tmp/hs-auditlog-tty-XXXXXX", link_path[64], long_path[128], node[64],
	     node2[64];
	int master, slave;
	struct stat st;
	bool nodes;

	(void)state;
	open_pty(&master, &slave);
	assert_non_null(mkdtemp(dir));
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	assert_int_equal(symlink(ptsname(master), link_path), 0);
	snprintf(long_path, sizeof(long_path), "%s/a-terminal-name-past-32-bytes", dir);
	snprintf(node, sizeof(node), "%s/tty9", dir);
	snprintf(node2, sizeof(node2), "%s/tty9-again", dir);
	nodes = stat("/dev/tty1", &st) == 0 && S_ISCHR(st.st_mode) &&
	        mknod(long_path, S_IFCHR | 0600, st.st_rdev) == 0 &&
	        mknod(node, S_IFCHR | 0600, st.st_rdev) == 0 && link(node, node2) == 0;
	/* and a /tmp that is not mounted nodev */
	if (nodes) {
		int f = open(node, O_RDWR | O_NOCTTY);

		nodes = f >= 0;
		if (f >= 0)
			close(f);
	}
	/* fd 0, 1, 2 of each case: a path, or NULL for /dev/null */
	const char *const cases[][3] = {
		{ link_path, NULL, NULL },
		{ NULL, link_path, NULL },
		{ NULL, NULL, NULL },
		{ long_path, NULL, NULL },
		{ long_path, link_path, NULL },
		{ long_path, long_path, long_path },
		{ node, NULL, NULL },
		{ node2, link_path, NULL },
		{ NULL, NULL, node },
		{ "/dev/ptmx", link_path, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status;
		bool needs_nodes = false;

		for (int fd = 0; fd < 3; fd++)
			needs_nodes = needs_nodes || (cases[i][fd] && cases[i][fd] != link_path &&
			                              !strncmp(cases[i][fd], dir, strlen(dir)));
		if (needs_nodes && !nodes)
			continue;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			for (int fd = 0; fd < 3; fd++) {
				int f = open(cases[i][fd] ? cases[i][fd] : "/dev/null",
				             O_RDWR | O_NOCTTY);

				if (f < 0 || dup2(f, fd) < 0)
					_exit(2);
				if (f > 2)
					close(f);
			}
			_exit(same_as_libaudit(AUDIT_ADD_USER, "adding user", "a", HS_AUDITLOG_NO_ID,
			                       NULL, NULL, true) ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fprintf(stderr, "terminal case %zu: %d\n", i, status);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	unlink(link_path), unlink(long_path), unlink(node), unlink(node2), rmdir(dir);
	close(slave);
	close(master);
}

/* The name of this machine that libaudit gives as the host of a local
 * terminal, at its longest (64 bytes, the kernel's limit), in a UTS
 * namespace of its own; run in this test executed again, since libaudit
 * keeps the first name it finds for the life of the process. */
static int hostname_case(void)
{
	return same_as_libaudit(AUDIT_USER_LOGIN, "login", "alice", HS_AUDITLOG_NO_ID, NULL,
	                        "tty1", true) ? 0 : 1;
}

static void local_hostname_is_written_as_libaudit_writes_it(void **state)
{
	static const char *const names[] = {
		"h", "", "0123456789012345678901234567890123456789012345678901234567890123",
		"012345678901234567890123456789012345678901234567890123456789012",
		"with space", "caf\xc3\xa9",
	};
	int status;
	pid_t pid;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (unshare(CLONE_NEWUTS) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWUTS) < 0)
				_exit(77);
			if (sethostname(names[i], strlen(names[i])) < 0)
				_exit(2);
			execl("/proc/self/exe", "test_auditlog", "--hostname-case", (char *)NULL);
			_exit(3);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status) == 77)
			skip();
		if (WEXITSTATUS(status))
			fprintf(stderr, "hostname %s: %d\n", names[i], WEXITSTATUS(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

/* exe=: this test run again from a copy at paths with spaces, quotes,
 * non-ASCII bytes, near and past PATH_MAX, and deleted once started. */
static int exe_case(bool unlink_self)
{
	char self[PATH_MAX + 1];
	ssize_t n;

	if (unlink_self) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			return 2;
		self[n] = '\0';
		if (unlink(self) < 0)
			return 2;
	}
	return same_as_libaudit(AUDIT_ADD_USER, "adding user", "alice", HS_AUDITLOG_NO_ID, NULL,
	                        NULL, true) ? 0 : 1;
}

static bool copy_self(int dirfd, const char *name)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	ssize_t n;
	bool ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		ok = false;
	return ok;
}

/* Runs the copy DIR/NAME (DIR made below base, one component at a time)
 * with the argument MODE; its exit status. */
static int run_copy(const char *base, const char *const *dirs, const char *name,
                    const char *mode)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(base, O_RDONLY | O_DIRECTORY);

		for (size_t i = 0; dirs[i] && fd >= 0; i++) {
			(void)mkdirat(fd, dirs[i], 0700);
			int next = openat(fd, dirs[i], O_RDONLY | O_DIRECTORY);

			close(fd);
			fd = next;
		}
		if (fd < 0 || fchdir(fd) < 0 || !copy_self(fd, name))
			_exit(3);
		char rel[NAME_MAX + 3];

		snprintf(rel, sizeof(rel), "./%s", name);
		execl(rel, rel, mode, (char *)NULL);
		_exit(3);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void exe_is_written_as_libaudit_writes_it(void **state)
{
	char base[] = "/tmp/hs-auditlog-XXXXXX";
	static const char *const none[] = { NULL };
	static const char *const odd[] = { "dir with space", "caf\xc3\xa9", "quo\"te", NULL };
	static char comp[20][201];
	const char *deep[21];
	char name[NAME_MAX + 1];
	int r;

	(void)state;
	assert_non_null(mkdtemp(base));
	assert_int_equal(run_copy(base, none, "plain", "--exe-case"), 0);
	assert_int_equal(run_copy(base, none, "with space", "--exe-case"), 0);
	assert_int_equal(run_copy(base, none, "tab\there", "--exe-case"), 0);
	assert_int_equal(run_copy(base, none, "\xff\x80", "--exe-case"), 0);
	assert_int_equal(run_copy(base, odd, "x", "--exe-case"), 0);
	assert_int_equal(run_copy(base, none, "deleted", "--exe-case-unlink"), 0);
	/* paths of PATH_MAX - 3 to PATH_MAX + 2 bytes: 20 directories of
	 * 200 bytes, then a name that makes up the rest */
	for (size_t i = 0; i < 20; i++) {
		memset(comp[i], 'a' + (int)i, 200);
		deep[i] = comp[i];
	}
	deep[20] = NULL;
	for (int total = PATH_MAX - 3; total <= PATH_MAX + 2; total++) {
		size_t used = strlen(base) + 20 * 201 + 1;
		size_t n = (size_t)total - used;

		assert_true(n > 0 && n <= NAME_MAX);
		memset(name, 'z', n);
		name[n] = '\0';
		name[0] = (char)('0' + total - (PATH_MAX - 3));
		r = run_copy(base, deep, name, "--exe-case");
		if (r != 0)
			fprintf(stderr, "exe path of %d bytes: %d\n", total, r);
		assert_int_equal(r, 0);
	}
	/* the copies go; rm for a tree deeper than PATH_MAX */
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("rm", "rm", "-rf", "--", base, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_terminal_is_named_as_libaudit_names_it),
		cmocka_unit_test(account_events_match_libaudit),
		cmocka_unit_test(session_events_match_libaudit),
		cmocka_unit_test(long_records_are_sent_as_libaudit_sends_them),
		cmocka_unit_test(terminal_is_looked_up_for_each_event),
		cmocka_unit_test(terminal_names_match_libaudit),
		cmocka_unit_test(local_hostname_is_written_as_libaudit_writes_it),
		cmocka_unit_test(exe_is_written_as_libaudit_writes_it),
	};

	if (argc == 2 && strcmp(argv[1], "--hostname-case") == 0)
		return hostname_case();
	if (argc == 2 && strcmp(argv[1], "--exe-case") == 0)
		return exe_case(false);
	if (argc == 2 && strcmp(argv[1], "--exe-case-unlink") == 0)
		return exe_case(true);

	return cmocka_run_group_tests(tests, NULL, NULL);
}
