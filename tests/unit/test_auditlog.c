/* Unit test of lib/base/auditlog.c: the events it hands the kernel are
 * those libaudit's audit_log_acct_message would hand it for the same
 * arguments, byte for byte, type and text, on hostile names, hosts and
 * terminals.  Both are run in this process, with socket() and sendto()
 * replaced by ours (this executable's definitions come before libc's for
 * libaudit too), so nothing reaches the kernel's audit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <libaudit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auditlog.h"

struct sent {
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
	if (len < NLMSG_HDRLEN || h->nlmsg_len != len || len - NLMSG_HDRLEN > sizeof(last.text))
		return -1;
	last.type = h->nlmsg_type;
	last.len = len - NLMSG_HDRLEN;
	memcpy(last.text, (const char *)buf + NLMSG_HDRLEN, last.len);
	/* what a user namespace answers: libaudit then reads no reply */
	errno = ECONNREFUSED;
	return -1;
}

/* What libaudit sends for the event ours is asked for. */
static struct sent libaudit_sends(int type, const char *op, const char *name, unsigned long id,
                                  const char *host, const char *tty, bool ok)
{
	const char *acct = id == HS_AUDITLOG_NO_ID ? name : NULL;

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
	if (sends == before + 1 && last.type == want.type && last.len == want.len &&
	    memcmp(last.text, want.text, want.len) == 0)
		return true;
	fprintf(stderr, "name=%s host=%s tty=%s:\n ours:     %.*s\n libaudit: %.*s\n",
	        name ? name : "(null)", host ? host : "(null)", tty ? tty : "(null)",
	        (int)last.len, last.text, (int)want.len, want.text);
	return false;
}

static void expect_same(int type, const char *op, const char *name, unsigned long id,
                        const char *host, const char *tty, bool ok)
{
	if (!same_as_libaudit(type, op, name, id, host, tty, ok))
		fail();
}

/* First, in a child whose standard input is a terminal: the terminal
 * libaudit finds by itself (and the host it then names). */
static void own_terminal_is_named_as_libaudit_names_it(void **state)
{
	int master, slave, status;
	pid_t pid;

	(void)state;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		skip();
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
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
	};
	static const char *const ttys[] = {
		NULL, "", "pts/3", "/dev/pts/3", "tty1", "/dev/tty1", "ttyS0", "console",
		"/dev/console", "x y", "ttyname that is longer than thirty-two bytes",
	};

	(void)state;
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
		for (size_t t = 0; t < sizeof(ttys) / sizeof(ttys[0]); t++) {
			expect_same(AUDIT_USER_LOGIN, "login", "alice", HS_AUDITLOG_NO_ID, hosts[h],
			            ttys[t], true);
			expect_same(AUDIT_USER_LOGIN, "login", "UNKNOWN", HS_AUDITLOG_NO_ID,
			            hosts[h], ttys[t], false);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_terminal_is_named_as_libaudit_names_it),
		cmocka_unit_test(account_events_match_libaudit),
		cmocka_unit_test(session_events_match_libaudit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
