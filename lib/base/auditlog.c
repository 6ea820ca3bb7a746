/* Linux audit events: one netlink socket per process, opened once, never
 * fatal.
 *
 * The records are those of libaudit's audit_log_acct_message (libaudit 3),
 * which shadow-utils and util-linux send, byte for byte:
 * tests/unit/test_auditlog.c runs libaudit and this file over the same
 * inputs and compares what each hands the kernel.  They are written here
 * rather than linked for cost: libaudit and the libcap-ng it pulls in were
 * about 0.3 ms of an account tool's 2 ms (two more libraries to map and
 * relocate, libcap-ng's constructor reading /proc, and a poll and two
 * reads for the kernel's answer to each event).  The kernel takes a user
 * message, and answers it, in the send itself (the audit socket's input
 * runs in the sender's system call), so one read without waiting takes
 * the answer. */
#include "auditlog.h"

#include "hs-build-config.h"
#include "privs.h"

#if HS_WITH_AUDIT
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* libaudit's limits: the longest message, header included (a longer
 * one it does not send), the part of a name it keeps (UT_NAMESIZE), the
 * terminal name it asks ttyname_r for, this machine's name (HOSTLEN). */
#define AUDITLOG_TEXT_MAX 8970
#define AUDITLOG_ACCT_MAX 32
#define AUDITLOG_TTY_MAX 32
#define AUDITLOG_HOST_MAX 64

/* -1: not tried yet; -2: tried, no audit here (kernel without it). */
static int auditlog_fd = -1;
static unsigned int auditlog_seq;

void hs_auditlog_open(void)
{
	if (auditlog_fd != -1)
		return;
	/* The kernel checks the sender at each send; it would check the
	 * opener too if a send named no destination (ours all do): open
	 * with the capability raised, so both hold. */
	(void)hs_privs_audit_write(true);
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	(void)hs_privs_audit_write(false);
	/* EPROTONOSUPPORT, EINVAL, EAFNOSUPPORT: the kernel has no audit.
	 * shadow-utils aborts on any other error; a tool of ours that
	 * cannot record is no more dangerous than one of a kernel without
	 * audit, and refusing would turn a full descriptor table into a
	 * denial of service, so every failure is the same silence. */
	auditlog_fd = fd >= 0 ? fd : -2;
}

/* The audit tools' rule for a value: as it is between quotes, or its bytes
 * in upper-case hex when it holds a quote, a space, a control byte or a
 * byte above 0x7e (libaudit tests a signed char, so 0x80-0xff count). */
static size_t put_value(char *out, size_t size, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0, o = 0;

	while (i < n && s[i] != '"' && (unsigned char)s[i] >= 0x21 && (unsigned char)s[i] <= 0x7e)
		i++;
	if (i == n)
		return (size_t)snprintf(out, size, "\"%.*s\"", (int)n, s);
	for (i = 0; i < n && o + 2 < size; i++) {
		out[o++] = hex[(unsigned char)s[i] >> 4];
		out[o++] = hex[(unsigned char)s[i] & 15];
	}
	out[o] = '\0';
	return o;
}

/* exe=: what /proc/self/exe names, read once (it cannot change). */
static const char *exe_value(void)
{
	static char value[2 * PATH_MAX + 1];
	char path[PATH_MAX];
	ssize_t n;

	if (value[0])
		return value;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n < 0)
		snprintf(value, sizeof(value), "\"?\"");
	else
		put_value(value, sizeof(value), path, (size_t)n);
	return value;
}

/* The terminal libaudit names when the caller names none: the first of
 * stdin, stdout and stderr that is one, without "/dev/"; none when that
 * name is not a character device, or is a second link outside /dev.
 * Looked up at each event, as libaudit does: a process's standard
 * descriptors may change between two events (a caller that detaches, or
 * hands its terminal on), and the record names the one of the event. */
static const char *own_tty(char name[AUDITLOG_TTY_MAX])
{
	struct stat st;
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (ttyname_r(fd, name, AUDITLOG_TTY_MAX) == 0 && name[0])
			break;
	if (fd == 3 || lstat(name, &st) < 0 || !S_ISCHR(st.st_mode) ||
	    (st.st_nlink > 1 && strncmp(name, "/dev/", 5) != 0))
		return NULL;
	return name + (strncmp(name, "/dev/", 5) ? 0 : 5);
}

/* This machine's name as libaudit gives it for a local terminal: at
 * most 63 bytes (its buffer is 64), so a name of the kernel's longest,
 * 64 bytes, loses its last byte there and here alike. */
static void local_hostname(char out[AUDITLOG_HOST_MAX])
{
	struct utsname u;

	out[0] = '\0';
	if (uname(&u) == 0)
		snprintf(out, AUDITLOG_HOST_MAX, "%.*s", AUDITLOG_HOST_MAX - 1, u.nodename);
}

/* addr=: the first address the remote host's name resolves to. */
static void host_addr(const char *host, char *out, size_t size)
{
	struct addrinfo hints = { .ai_flags = AI_ADDRCONFIG, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;

	snprintf(out, size, "?");
	if (!host || getaddrinfo(host, NULL, &hints, &ai) != 0)
		return;
	if (ai->ai_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr, out,
			  (socklen_t)size);
	else if (ai->ai_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr,
			  out, (socklen_t)size);
	freeaddrinfo(ai);
}

/* One event to the kernel, and its answer taken off the socket: the
 * kernel has answered when the send returns (above), so one read without
 * waiting finds it.  The answer is not used (see below), but reading it
 * keeps a long-lived sender's socket empty, and shows in a trace whether
 * the kernel took the event. */
static void send_text(int type, const char *text)
{
	struct {
		struct nlmsghdr h;
		char data[NLMSG_ALIGN(AUDITLOG_TEXT_MAX)];
	} m;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	size_t len = strlen(text) + 1;
	ssize_t r;

	/* libaudit's rule: a record that does not fit its message with the
	 * header is not sent at all, rather than cut (only root's long
	 * arguments, login -h or a tool installed deep, can make one) */
	if (NLMSG_SPACE(len) > AUDITLOG_TEXT_MAX)
		return;
	memset(&m.h, 0, sizeof(m.h));
	m.h.nlmsg_len = (unsigned)NLMSG_SPACE(len);
	m.h.nlmsg_type = (unsigned short)type;
	m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m.h.nlmsg_seq = ++auditlog_seq;
	memcpy(m.data, text, len);
	memset(m.data + len, 0, NLMSG_ALIGN(len) - len);
	do
		r = sendto(auditlog_fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&kernel,
			   sizeof(kernel));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return;
	do
		r = recv(auditlog_fd, &m, sizeof(m), MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
}

void hs_auditlog_session(int type, const char *op, const char *name, unsigned long id,
                         const char *host, const char *tty, bool ok)
{
	char text[AUDITLOG_TEXT_MAX], who[2 * AUDITLOG_ACCT_MAX + 8], addr[INET6_ADDRSTRLEN];
	char myhost[AUDITLOG_HOST_MAX], ttybuf[AUDITLOG_TTY_MAX];

	hs_auditlog_open();
	if (auditlog_fd < 0)
		return;
	if (host && !host[0])
		host = NULL;
	host_addr(host, addr, sizeof(addr));
	if (!tty)
		tty = own_tty(ttybuf);
	else if (!tty[0])
		tty = NULL;
	/* libaudit names this machine as the host of a local terminal */
	if (!host && tty && (!strncmp(tty, "pts", 3) || !strncmp(tty, "tty", 3) ||
			     !strncmp(tty, "/dev/tty", 8))) {
		local_hostname(myhost);
		host = myhost;
	}
	/* libaudit writes id= only without a name, as shadow-utils uses it */
	if (id == HS_AUDITLOG_NO_ID && name) {
		strcpy(who, "acct=");
		put_value(who + 5, sizeof(who) - 5, name, strnlen(name, AUDITLOG_ACCT_MAX));
	} else {
		snprintf(who, sizeof(who), "id=%u", (unsigned int)id);
	}
	snprintf(text, sizeof(text), "op=%s %s exe=%s hostname=%s addr=%s terminal=%s res=%s",
		 op, who, exe_value(), host ? host : "?", addr, tty ? tty : "?",
		 ok ? "success" : "failed");
	/* A user's passwd or chage holds CAP_AUDIT_WRITE only permitted: it
	 * is effective for this send alone (the kernel checks the sender's
	 * set at each send).  The result is ignored: EPERM (no
	 * CAP_AUDIT_WRITE) and ECONNREFUSED (a user namespace) mean the
	 * kernel will not take it, and nothing a tool could do would change
	 * that. */
	(void)hs_privs_audit_write(true);
	send_text(type, text);
	(void)hs_privs_audit_write(false);
}
#else
void hs_auditlog_open(void)
{
}

void hs_auditlog_session(int type, const char *op, const char *name, unsigned long id,
                         const char *host, const char *tty, bool ok)
{
	(void)type, (void)op, (void)name, (void)id, (void)host, (void)tty, (void)ok;
}
#endif

void hs_auditlog_acct(int type, const char *op, const char *name, unsigned long id,
                      bool ok)
{
	hs_auditlog_session(type, op, name, id, NULL, NULL, ok);
}
