"""What a program sends to the Linux audit subsystem, read from strace.  A helper of
test_audit_trail.py.

    events, result = audittrace.run(sb, ["/usr/sbin/useradd", "alice"])
    # events: [Event(type=1114, fields={"op": "adding user", "id": "1001", ...}), ...]

The program runs inside the sandbox under `strace -f`, with every sendto() and sendmsg()
failing with ECONNREFUSED (strace's fault injection).  strace decodes a call's arguments
before it runs, so each message the program hands the kernel is seen whole; the kernel
receives none.  That choice, over letting the messages through:

  - the host's audit log (or kernel log) gets nothing from the tests;
  - it works on a kernel or container that refuses the audit socket's messages (a user
    namespace answers ECONNREFUSED, exactly what is injected), as long as the socket
    itself can be made, which the test checks first;
  - it is the failure that libaudit's callers must survive (shadow-utils, Linux-PAM
    and we all treat ECONNREFUSED as "no audit here"), so every command also shows
    that a refused event changes nothing: its exit status and output are compared.

Syslog's send() to /dev/log fails too under this injection; no tool depends on it.
The same function runs Debian's shadow-utils and ours, so both are read the same way.
"""

import re
from collections import namedtuple

TRACE = "/tmp/audit.strace"
Event = namedtuple("Event", "type fields")

# The user-space message types (libaudit.h), by number and by the name a newer strace
# may print instead of the number.
TYPES = {
    "AUDIT_USER_AUTH": 1100, "AUDIT_USER_ACCT": 1101, "AUDIT_USER_MGMT": 1102,
    "AUDIT_CRED_ACQ": 1103, "AUDIT_CRED_DISP": 1104, "AUDIT_USER_START": 1105,
    "AUDIT_USER_END": 1106, "AUDIT_USER_CHAUTHTOK": 1108, "AUDIT_USER_ERR": 1109,
    "AUDIT_CRED_REFR": 1110, "AUDIT_USER_LOGIN": 1112, "AUDIT_USER_LOGOUT": 1113,
    "AUDIT_ADD_USER": 1114, "AUDIT_DEL_USER": 1115, "AUDIT_ADD_GROUP": 1116,
    "AUDIT_DEL_GROUP": 1117, "AUDIT_GRP_MGMT": 1132, "AUDIT_ACCT_LOCK": 1135,
    "AUDIT_ACCT_UNLOCK": 1136, "AUDIT_USER_ROLE_CHANGE": 2300,
}
NAMES = {v: k for k, v in TYPES.items()}

# sendto(FD, [{nlmsg_len=.., nlmsg_type=T, ...}, "\x.."], LEN, ...) as strace -xx shows
# a netlink message; the line may start with a pid (-f).
_DECODED = re.compile(r'send(?:to|msg)\(\d+, .*?\[\{nlmsg_len=\d+, nlmsg_type=([^,]+?)'
                      r'(?: /\*[^*]*\*/)?, .*?\}, "((?:\\x[0-9a-f]{2})*)"\]')
# The fields audit_log_acct_message writes after op= (whose value may hold spaces in
# shadow-utils 4.13, so the split is on the names that follow it).
_FIELD = re.compile(r' (?=(?:grantors|acct|id|exe|hostname|addr|terminal|res)=)')


def _type(text):
    text = text.strip()
    if text in TYPES:
        return TYPES[text]
    return int(text, 0)


def parse_payload(text):
    """'op=adding user id=1001 exe="/x" ... res=success' -> {"op": "adding user", ...},
    quotes removed."""
    fields = {}
    for part in _FIELD.split(text):
        key, _, value = part.partition("=")
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        fields[key] = value
    return fields


def parse(trace_text):
    """The audit messages in an strace -xx log, in the order they were sent."""
    events = []
    for line in trace_text.splitlines():
        m = _DECODED.search(line)
        if not m:
            continue
        payload = bytes.fromhex(m.group(2).replace("\\x", "")).rstrip(b"\0").decode()
        events.append(Event(_type(m.group(1)), parse_payload(payload)))
    return events


def run(sb, argv, user=None, input=None, inject="sendto,sendmsg:error=ECONNREFUSED"):
    """Run argv in the sandbox under strace; (events, CompletedProcess).  user: a name
    strace runs the program as (-u, so set-id bits take effect).  inject: the fault
    strace injects (socket:error=EPROTONOSUPPORT is a kernel without audit)."""
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,sendmsg",
           "-e", "inject=" + inject, "-xx", "-s", "8192", "-o", TRACE]
    if user is not None:
        cmd += ["-u", user]
    r = sb.run(cmd + ["--"] + list(argv), input=input, check=False)
    events = parse(sb.read(TRACE))
    sb.run(["rm", "-f", TRACE])
    return events, r


def show(events):
    """One line per event, for assertion messages."""
    return "\n".join("%s %s" % (NAMES.get(e.type, e.type),
                                " ".join("%s=%s" % kv for kv in e.fields.items()))
                     for e in events) or "(none)"
