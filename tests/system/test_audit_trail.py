"""The audit trail: the Linux audit events our tools send, compared event by event with
those of Debian's shadow-utils (the package ours replaces) for the same commands.

Two throwaway roots start from the same base: one converted to the tree and running our
tools, one with Debian's shadow-utils (sandbox.CLASSIC_TOOLS_DIR) on the classic files.
The same commands run in both, in the same order (so the same uids and gids), each under
strace; audittrace.py says how the messages are read (every send is refused by fault
injection, so nothing reaches the host's audit log, and the tools must carry on as on a
kernel without audit).  For each command the test compares, in order, each event's
message type and its fields op, id or acct, hostname, addr, terminal and res, and the
program name of exe; it also compares the exit status.  A missing, extra or different
event fails.

Events whose op starts with "PAM:" come from libpam, for both tools alike (their PAM
stacks differ between the two roots, so their grantors= do): they are left out of the
comparison and checked on their own (test_password_change_by_user).

Where ours differs from shadow-utils 4.13 on purpose, `debian_expected` says so:
  - 4.13's usermod logs a successful -L and -U with res=failed (a bug, fixed in
    shadow-utils since): ours says res=success;
  - 4.13's useradd logs its failure event twice when the name exists: ours once;
  - 4.13's passwd sends nothing for root's -l, -u, -d, -e and aging flags: ours sends
    the events of the shadow-utils releases that audit them (PASSWD_ADDED), so that a
    lock is in the trail whichever tool made it.

The tests of passwd's and chage's file capability cap_audit_write (at the end) let the
messages reach the kernel, which is the point: the kernel's answer to each (0, or EPERM
without CAP_AUDIT_WRITE) is read from strace.  With audit off in the kernel, as on this
machine, the kernel answers and drops them; with audit on, they are in the host's audit
log (a user's password change, as on any system).  setcap works in the sandbox: its
overlay over tmpfs keeps the security.capability attribute.
"""

import os
import re
import socket
import struct

import pytest

import audittrace
from ptyproc import Pty
import sandbox

CLASSIC = sandbox.CLASSIC_TOOLS_DIR
DEBIAN_DIR = "/usr/libexec/hs-test/debian"
SBIN = {"useradd", "usermod", "userdel", "groupadd", "groupdel", "groupmod", "chpasswd",
        "newusers"}
HASH = "$6$saltsalt$" + "x" * 86

# (tool, arguments): run in order in both roots.
SCENARIO = [
    ("groupadd", ["g1"]),
    ("groupadd", ["-g", "1500", "g2"]),
    ("useradd", ["-m", "-G", "g1,g2", "-c", "Al", "-s", "/bin/sh", "alice"]),
    ("useradd", ["alice"]),
    ("useradd", ["-N", "-g", "users", "carl"]),
    ("usermod", ["-c", "Bob", "-s", "/bin/bash", "-e", "2030-01-01", "-f", "3", "alice"]),
    ("usermod", ["-p", HASH, "alice"]),
    ("usermod", ["-L", "alice"]),
    ("usermod", ["-L", "alice"]),
    ("usermod", ["-U", "alice"]),
    ("usermod", ["-e", "", "alice"]),
    ("usermod", ["-G", "g1", "alice"]),
    ("usermod", ["-a", "-G", "g2", "alice"]),
    ("usermod", ["-u", "3000", "alice"]),
    ("usermod", ["-g", "g2", "alice"]),
    ("usermod", ["-d", "/home/alice2", "-m", "alice"]),
    ("usermod", ["-l", "alicia", "alice"]),
    ("usermod", ["-c", "x", "nosuch"]),
    ("chage", ["-M", "10", "-m", "2", "-W", "3", "-I", "4", "-E", "2031-01-01", "-d", "0",
               "alicia"]),
    ("chage", ["-E", "-1", "alicia"]),
    ("chage", ["-l", "alicia"]),
    ("userdel", ["carl"]),
    ("userdel", ["-r", "alicia"]),
    ("userdel", ["nosuch"]),
    ("groupadd", ["g3"]),
    ("useradd", ["-m", "bob"]),
    ("groupmod", ["-n", "g4", "g3"]),
    ("groupmod", ["-g", "3100", "-p", HASH, "g4"]),
    ("groupmod", ["-n", "g5", "-g", "3200", "g4"]),
    ("groupmod", ["-U", "bob", "g5"]),
    ("groupmod", ["-n", "x", "nosuch"]),
    ("gpasswd", ["-a", "bob", "g5"]),
    ("gpasswd", ["-d", "bob", "g5"]),
    ("gpasswd", ["-r", "g5"]),
    ("gpasswd", ["-R", "g5"]),
    ("gpasswd", ["-A", "bob", "g5"]),
    ("gpasswd", ["-M", "bob,root", "g5"]),
    ("gpasswd", ["-A", "root", "-M", "bob", "g5"]),
    ("gpasswd", ["-a", "nosuch", "g5"]),
    ("groupdel", ["g1"]),
    ("groupdel", ["g5"]),
    ("chfn", ["-f", "Bob B", "-r", "12", "bob"]),
    ("chsh", ["-s", "/bin/sh", "bob"]),
    ("newusers", [], "nu1:Nu-pw-123456:4000:4000::/home/nu1:/bin/sh\n"),
    ("chpasswd", ["-e"], "bob:" + HASH + "\n"),
    ("passwd", ["-l", "bob"]),
    ("passwd", ["-u", "bob"]),
    ("passwd", ["-e", "bob"]),
    ("passwd", ["-d", "bob"]),
    ("passwd", ["-n", "1", "-x", "90", "bob"]),
]
# Debian's tools that sandbox.CLASSIC_TOOLS does not copy: from the host, where Debian's
# packages are installed.
DEBIAN_EXTRA = {"passwd": 0o4755, "chfn": 0o4755, "chsh": 0o4755}


def debian(tool):
    return (CLASSIC if tool in sandbox.CLASSIC_TOOLS else DEBIAN_DIR) + "/" + tool


def ours(tool):
    return ("/usr/sbin/" if tool in SBIN else "/usr/bin/") + tool


def comparable(event):
    """The parts of an event the comparison looks at."""
    f = dict(event.fields)
    f["exe"] = os.path.basename(f.get("exe", ""))
    return (audittrace.NAMES.get(event.type, event.type), tuple(sorted(f.items())))


# passwd's root changes: Debian's 4.13 sends nothing; ours sends what the shadow-utils
# releases that audit them send (option -> type, op), with id= the account's uid.
PASSWD_ADDED = {"-l": ("AUDIT_ACCT_LOCK", "locked-password"),
                "-u": ("AUDIT_ACCT_UNLOCK", "unlocked-password"),
                "-d": ("AUDIT_USER_CHAUTHTOK", "deleted-password"),
                "-e": ("AUDIT_USER_MGMT", "expired-password")}


def passwd_added(sb, args):
    """The events ours adds for `passwd ARGS` (run as root, successfully)."""
    uid = str(sb.getpwnam(args[-1]).uid)
    added = [(t, op) for a, (t, op) in PASSWD_ADDED.items() if a in args]
    if {"-n", "-x", "-w", "-i"} & set(args):
        # the limits as they are after the change: Debian's /etc/shadow
        line = [l for l in sb.read("/etc/shadow").splitlines()
                if l.startswith(args[-1] + ":")][0].split(":")
        v = [f or "-1" for f in line[3:7]]
        added.append(("AUDIT_USER_MGMT", "changed-password-aging min=%s max=%s warn=%s "
                      "inact=%s" % tuple(v)))
    return [audittrace.Event(audittrace.TYPES[t], {
        "op": op, "id": uid, "exe": DEBIAN_DIR + "/passwd", "hostname": "?", "addr": "?",
        "terminal": "?", "res": "success"}) for t, op in added]


def debian_expected(tool, events):
    """Debian's events as ours must send them (the deliberate differences above)."""
    out = []
    for e in events:
        f = dict(e.fields)
        if tool == "usermod" and f.get("op") in ("updating passwd", "updating password"):
            f["res"] = "success"
        e = audittrace.Event(e.type, f)
        if tool == "useradd" and f.get("res") == "failed" and out and out[-1] == e:
            continue
        out.append(e)
    return out


def own(events):
    return [e for e in events if not e.fields.get("op", "").startswith("PAM:")]


@pytest.fixture(scope="module")
def audit_socket():
    """The test needs the audit socket to exist (the tools make it before they send)."""
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9).close()
    except OSError as e:
        pytest.skip("this kernel has no audit netlink socket (%s): nothing is ever sent" % e)


@pytest.fixture
def roots(base, audit_socket):
    with sandbox.Sandbox(base, size="1g") as mine, sandbox.Sandbox(base, size="1g") as deb:
        mine.set_login_defs("SHELL_PROXY", "yes")      # as before the opt-in
        mine.use_hardened_tree()
        deb.set_nsswitch_shadow("files")
        deb.run(["mkdir", "-p", DEBIAN_DIR])
        for tool, mode in DEBIAN_EXTRA.items():
            with open(ours(tool), "rb") as f:
                deb.write(DEBIAN_DIR + "/" + tool, f.read(), mode=mode)
        yield mine, deb


def test_account_tools_match_shadow_utils(roots):
    mine, deb = roots
    failures = []
    compared = 0
    for tool, args, *text in SCENARIO:
        text = text[0] if text else None
        got, r_ours = audittrace.run(mine, [ours(tool)] + args, input=text)
        want, r_deb = audittrace.run(deb, [debian(tool)] + args, input=text)
        got, want = own(got), debian_expected(tool, own(want))
        if tool == "passwd" and r_deb.returncode == 0:
            want += passwd_added(deb, args)
        cmd = " ".join([tool] + args)
        compared += len(want)
        if r_ours.returncode != r_deb.returncode:
            failures.append("%s: exit %d, shadow-utils %d (%s)" % (
                cmd, r_ours.returncode, r_deb.returncode, r_ours.stderr.strip()))
        if [comparable(e) for e in got] != [comparable(e) for e in want]:
            failures.append("%s:\n ours:\n%s\n shadow-utils:\n%s" % (
                cmd, audittrace.show(got), audittrace.show(want)))
    assert not failures, "\n".join(failures)
    # the reading works: shadow-utils sent what it does for these commands
    assert compared >= 60, compared


def test_every_admin_event_is_sent(roots):
    """The comparison above cannot pass by both sides sending nothing: the scenario's
    first commands send the events ausearch looks for."""
    mine, _ = roots
    events, r = audittrace.run(mine, ["/usr/sbin/useradd", "-m", "bob"])
    assert r.returncode == 0, r.stderr
    assert [(audittrace.NAMES[e.type], e.fields["op"], e.fields["res"]) for e in events] == [
        ("AUDIT_ADD_GROUP", "adding group", "success"),
        ("AUDIT_ADD_USER", "adding user", "success"),
        ("AUDIT_ADD_USER", "adding home directory", "success"),
    ]
    assert events[0].fields["acct"] == "bob"
    assert events[1].fields["id"] == str(mine.getpwnam("bob").uid)
    assert events[1].fields["exe"] == "/usr/sbin/useradd"


def traced_on_terminal(sb, argv):
    """argv on a terminal under strace; its events and the terminal's name."""
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,sendmsg",
           "-e", "inject=sendto,sendmsg:error=ECONNREFUSED", "-xx", "-s", "8192",
           "-o", audittrace.TRACE] + argv
    with Pty(sb, cmd) as p:
        p.wait()
    events = audittrace.parse(sb.read(audittrace.TRACE))
    sb.run(["rm", "-f", audittrace.TRACE])
    return events, p.tty


def test_admin_tools_on_a_terminal_name_it(roots):
    """Run from a terminal, each event names it (terminal=pts/N, and the host, which
    libaudit adds then) as shadow-utils' do, in every event of a change that sends one
    per attribute."""
    mine, deb = roots
    failures = []
    for tool, args in (("groupadd", ["g1"]), ("useradd", ["-G", "g1", "tess"]),
                       ("gpasswd", ["-d", "tess", "g1"]), ("userdel", ["tess"])):
        got, tty_ours = traced_on_terminal(mine, [ours(tool)] + args)
        want, tty_deb = traced_on_terminal(deb, [debian(tool)] + args)
        assert tty_ours == tty_deb
        got, want = own(got), debian_expected(tool, own(want))
        assert want and all(e.fields["terminal"] == tty_deb[len("/dev/"):] for e in want)
        if [comparable(e) for e in got] != [comparable(e) for e in want]:
            failures.append("%s:\n ours:\n%s\n shadow-utils:\n%s" % (
                tool, audittrace.show(got), audittrace.show(want)))
    assert not failures, "\n".join(failures)


LOGIN_PW = "Alice-login-pw-1"


@pytest.fixture
def login_roots(base, audit_socket):
    """alice in both roots; ours on the tree and our PAM module, Debian's login (copied
    from the host, where Debian's package is installed) on pam_unix; no failure delays,
    one try."""
    with sandbox.Sandbox(base, size="1g") as mine, sandbox.Sandbox(base, size="1g") as deb:
        for s in (mine, deb):
            s.add_classic_user("alice", password=LOGIN_PW)
            pam_login = s.read("/etc/pam.d/login")
            s.write("/etc/pam.d/login", pam_login.replace("delay=3000000", "delay=0"))
            s.write("/etc/login.defs", s.read("/etc/login.defs") +
                    "\nFAIL_DELAY 0\nLOGIN_RETRIES 1\n")
        mine.set_login_defs("SHELL_PROXY", "yes")      # as before the opt-in
        mine.use_hardened_tree()
        mine.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        deb.set_nsswitch_shadow("files")
        with open("/usr/bin/login", "rb") as f:
            deb.run(["mkdir", "-p", DEBIAN_DIR])
            deb.write(DEBIAN_DIR + "/login", f.read(), mode=0o755)
        yield mine, deb


def traced_login(sb, login, name, password):
    """login NAME on a terminal under strace; the events and whether a shell started."""
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,sendmsg",
           "-e", "inject=sendto,sendmsg:error=ECONNREFUSED", "-xx", "-s", "8192",
           "-o", audittrace.TRACE, login, name]
    with Pty(sb, cmd) as p:
        p.expect("Password: ")
        p.send(password + "\n")
        i = p.expect(r"(\$ $|Login incorrect)")
        shell = "incorrect" not in i.group(0)
        if shell:
            p.send("exit\n")
        p.wait()
    events = audittrace.parse(sb.read(audittrace.TRACE))
    sb.run(["rm", "-f", audittrace.TRACE])
    return events, shell, p.tty


def test_login_matches_shadow_utils(login_roots):
    """AUDIT_USER_LOGIN, as shadow-utils' login (the one ours replaces) sends it: once
    the session is open, and for each refused try, an unknown name as UNKNOWN.  Both
    logins use PAM, whose own events (libpam's) are not compared: our PAM_TTY is
    "pts/0", as util-linux's login sets it, where shadow-utils' sets "/dev/pts/0"."""
    mine, deb = login_roots
    failures = []
    for name, password in (("alice", LOGIN_PW), ("alice", "wrong"), ("nosuch", "wrong")):
        got, shell_ours, tty_ours = traced_login(mine, "/usr/bin/login", name, password)
        want, shell_deb, tty_deb = traced_login(deb, DEBIAN_DIR + "/login", name, password)
        assert shell_ours == shell_deb == (password == LOGIN_PW)
        # the same terminal name in both roots (each has its own devpts)
        assert tty_ours == tty_deb
        got, want = own(got), own(want)
        if not want or [comparable(e) for e in got] != [comparable(e) for e in want]:
            failures.append("login %s (%s):\n ours:\n%s\n shadow-utils:\n%s" % (
                name, "right" if shell_ours else "wrong", audittrace.show(got),
                audittrace.show(want)))
    assert not failures, "\n".join(failures)


OLD_PW, NEW_PW = "Alice-old-pw-1", "Tulip-7-harbour-audit"


@pytest.fixture
def password_roots(base, audit_socket):
    """alice in both roots; ours on the tree and our PAM module, Debian's passwd (from
    the host, setuid root as Debian installs it) on pam_unix; no dictionary check."""
    with sandbox.Sandbox(base, size="1g") as mine, sandbox.Sandbox(base, size="1g") as deb:
        for s in (mine, deb):
            s.add_classic_user("alice", password=OLD_PW)
            s.use_pwquality()
            conf = "/etc/security/pwquality.conf"
            s.write(conf, (s.read(conf) if s.exists(conf) else "") + "dictcheck = 0\n")
        mine.set_login_defs("SHELL_PROXY", "yes")      # as before the opt-in
        mine.use_hardened_tree()
        mine.use_pam_module()
        deb.set_nsswitch_shadow("files")
        deb.run(["mkdir", "-p", DEBIAN_DIR])
        for tool in ("passwd", "chpasswd"):
            path = ours(tool)
            with open(path, "rb") as f:
                deb.write(DEBIAN_DIR + "/" + tool, f.read(),
                          mode=0o4755 if tool == "passwd" else 0o755)
        yield mine, deb


def traced_passwd(sb, passwd, current, new):
    """alice runs passwd on a terminal under strace; the events and the exit status."""
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,sendmsg",
           "-e", "inject=sendto,sendmsg:error=ECONNREFUSED", "-xx", "-s", "8192",
           "-o", audittrace.TRACE, "-u", "alice", passwd]
    script = [(r"Current password: ", current + "\n")]
    if current == OLD_PW and new == "short":
        # pam_pwquality asks again (retry=3 in Debian's common-password), then refuses
        script += [(r"New password: ", new + "\n")] * 3
    elif current == OLD_PW:
        script += [(r"New password: ", new + "\n"), (r"Retype new password: ", new + "\n")]
    status, out = sb.pty_run(cmd, script)
    events = audittrace.parse(sb.read(audittrace.TRACE))
    sb.run(["rm", "-f", audittrace.TRACE])
    return events, status, out


def chauthtok(events):
    """The password-change events, without grantors= (our module against pam_unix)."""
    out = []
    for e in events:
        if e.type == audittrace.TYPES["AUDIT_USER_CHAUTHTOK"]:
            f = {k: v for k, v in e.fields.items() if k != "grantors"}
            out.append(comparable(audittrace.Event(e.type, f)))
    return out


def test_password_change_events(password_roots):
    """AUDIT_USER_CHAUTHTOK for a password change by the user (passwd, through PAM:
    libpam sends op=PAM:chauthtok, with the result) and by root (chpasswd through PAM;
    chpasswd -e sends nothing, as Debian's does; usermod -p is in the scenario above).
    Failures too: a wrong current password, a refused new one."""
    mine, deb = password_roots
    failures = []
    cases = [(OLD_PW, "short"), ("wrong-current", NEW_PW), (OLD_PW, NEW_PW)]
    for current, new in cases:
        got, st_ours, out_ours = traced_passwd(mine, "/usr/bin/passwd", current, new)
        want, st_deb, out_deb = traced_passwd(deb, DEBIAN_DIR + "/passwd", current, new)
        res = [dict(f)["res"] for _, f in chauthtok(got)]
        if res[-1:] != ["success" if new == NEW_PW and current == OLD_PW else "failed"]:
            failures.append("passwd (%s, %s): the change's result is not the last event: "
                            "%s" % (current, new, res))
        if (st_ours == 0) != (st_deb == 0) or chauthtok(got) != chauthtok(want):
            failures.append("passwd (%s, %s): exit %s/%s\n ours:\n%s\n shadow-utils:\n%s" % (
                current, new, st_ours, st_deb, audittrace.show(got), audittrace.show(want)))
    for args, text in ((["-e"], "alice:" + HASH + "\n"), ([], "alice:Root-set-pw-42\n")):
        got, r_ours = audittrace.run(mine, [ours("chpasswd")] + args, input=text)
        want, r_deb = audittrace.run(deb, [DEBIAN_DIR + "/chpasswd"] + args, input=text)
        if r_ours.returncode != r_deb.returncode or chauthtok(got) != chauthtok(want):
            failures.append("chpasswd %s: exit %s/%s\n ours:\n%s\n shadow-utils:\n%s" % (
                args, r_ours.returncode, r_deb.returncode, audittrace.show(got),
                audittrace.show(want)))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("inject", ["socket:error=EPROTONOSUPPORT", "socket:error=EAFNOSUPPORT",
                                    "socket:error=EACCES", "sendto,sendmsg:error=EPERM"])
def test_tools_carry_on_without_audit(roots, inject):
    """A kernel without audit (the socket cannot be made) or one that refuses the caller
    (EPERM: no CAP_AUDIT_WRITE) changes nothing: every command does its job, silently.
    Any other failure to make the socket (EACCES: an LSM or seccomp said no) too, where
    shadow-utils aborts (docs/decisions.md says why).
    (libpam itself fails root's PAM calls on EPERM, for every PAM program alike: the
    tools that go through PAM are not run here under EPERM.)"""
    mine, _ = roots
    steps = [["/usr/sbin/groupadd", "g1"], ["/usr/sbin/useradd", "-m", "-G", "g1", "bob"],
             ["/usr/sbin/usermod", "-c", "Bob", "-L", "bob"],
             ["/usr/bin/chage", "-M", "9", "bob"],
             ["/usr/sbin/groupmod", "-n", "g2", "g1"], ["/usr/bin/gpasswd", "-d", "bob", "g2"],
             ["/usr/sbin/userdel", "-r", "bob"], ["/usr/sbin/groupdel", "g2"]]
    for argv in steps:
        _, r = audittrace.run(mine, argv, inject=inject)
        # nothing said but userdel's usual word on a missing mail spool
        said = [l for l in r.stderr.splitlines() if "mail spool" not in l]
        assert (r.returncode, said) == (0, []), (argv, r.stderr)
    assert mine.getpwnam("bob") is None and mine.getgrnam("g2") is None
    # a user's own chage -l: the setgid chage has no audit privilege
    mine.run(["/usr/sbin/useradd", "carol"])
    _, r = audittrace.run(mine, ["/usr/bin/chage", "-l", "carol"], user="carol", inject=inject)
    assert r.returncode == 0 and "Maximum number of days" in r.stdout, r.stderr


@pytest.fixture
def su_roots(base, audit_socket):
    """alice and bob in both roots; ours on the tree and our PAM module, util-linux's su
    (the one ours replaces, from the host) on pam_unix."""
    with sandbox.Sandbox(base, size="1g") as mine, sandbox.Sandbox(base, size="1g") as deb:
        for s in (mine, deb):
            s.add_classic_user("alice", password=OLD_PW)
            s.add_classic_user("bob", password="Bob-pw-12345")
        mine.set_login_defs("SHELL_PROXY", "yes")      # as before the opt-in
        mine.use_hardened_tree()
        mine.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        deb.set_nsswitch_shadow("files")
        deb.run(["mkdir", "-p", DEBIAN_DIR])
        with open("/usr/bin/su", "rb") as f:
            deb.write(DEBIAN_DIR + "/su", f.read(), mode=0o4755)
        yield mine, deb


def traced_su(sb, su, password):
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,sendmsg",
           "-e", "inject=sendto,sendmsg:error=ECONNREFUSED", "-xx", "-s", "8192",
           "-o", audittrace.TRACE, "-u", "bob", su, "alice", "-c", "echo I-am-$(id -un)"]
    status, out = sb.pty_run(cmd, [("Password:", password + "\n")], timeout=30)
    events = audittrace.parse(sb.read(audittrace.TRACE))
    sb.run(["rm", "-f", audittrace.TRACE])
    return events, status, out


def test_su_sends_what_util_linux_su_sends(su_roots):
    """util-linux's su sends no event of its own: its trail is libpam's (USER_AUTH,
    USER_ACCT, CRED_ACQ, USER_START, ... with the result).  Ours the same, in the same
    order, for the right password and a wrong one."""
    mine, deb = su_roots
    for password in (OLD_PW, "wrong-password"):
        got, st_ours, out = traced_su(mine, "/usr/bin/su", password)
        want, st_deb, _ = traced_su(deb, DEBIAN_DIR + "/su", password)
        assert (st_ours == 0) == (st_deb == 0) == (password == OLD_PW), out
        assert own(got) == own(want) == []
        shape = [(audittrace.NAMES.get(e.type), e.fields.get("op"), e.fields.get("acct"),
                  e.fields.get("res")) for e in got]
        assert shape == [(audittrace.NAMES.get(e.type), e.fields.get("op"),
                          e.fields.get("acct"), e.fields.get("res")) for e in want], (
            audittrace.show(got), audittrace.show(want))
        assert shape, "libpam sent nothing"


# ---- the capability that lets a user's own change reach the kernel

CAP_AUDIT_WRITE = 1 << 29
# strace -xx's line for the kernel's answer to one message: NLMSG_ERROR with the error
# (0: accepted) and the type of the message it answers
_ACK = re.compile(r'recvfrom\(\d+, \[\{nlmsg_len=\d+, nlmsg_type=NLMSG_ERROR, .*?\}, '
                  r'\{error=(-?\w+), msg=\[?\{nlmsg_len=\d+, nlmsg_type=([^,]+?)'
                  r'(?: /\*[^*]*\*/)?, ')


def kernel_answers(trace):
    """[(type, error)] of the audit messages the kernel answered, in order; error is
    "0" for a message it took, "-EPERM" for one it refused."""
    out = []
    for line in trace.splitlines():
        m = _ACK.search(line)
        if m and "MSG_PEEK" not in line:
            out.append((audittrace._type(m.group(2)), m.group(1)))
    return out


def passwd_to_the_kernel(sb, passwd, current, new):
    """alice runs passwd on a terminal under strace, whose messages reach the kernel
    (nothing injected); (the events sent, the kernel's answers, exit status, output).
    The kernel of this machine runs with audit off (audit_enabled 0): it checks the
    sender's capability, answers, and drops the message; with audit on, the event is
    in the audit log."""
    cmd = ["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,recvfrom",
           "-xx", "-s", "8192", "-o", audittrace.TRACE, "-u", "alice", passwd]
    script = [(r"Current password: ", current + "\n")]
    if current != "wrong-current":
        script += [(r"New password: ", new + "\n"), (r"Retype new password: ", new + "\n")]
    status, out = sb.pty_run(cmd, script)
    trace = sb.read(audittrace.TRACE)
    sb.run(["rm", "-f", audittrace.TRACE])
    return audittrace.parse(trace), kernel_answers(trace), status, out


def chauthtok_results(events, answers):
    chauthtok = audittrace.TYPES["AUDIT_USER_CHAUTHTOK"]
    return ([e.fields.get("res") for e in events if e.type == chauthtok],
            [err for t, err in answers if t == chauthtok])


def test_own_password_change_reaches_the_kernel(password_roots):
    """A user's own password change, by the setgid passwd with its file capability
    cap_audit_write, is taken by the kernel (answer 0), the success and a failure
    (wrong current password) alike.  The same binary without the capability, as before
    it had one, is refused (EPERM): the capability is what makes the trail."""
    mine, _ = password_roots
    assert "cap_audit_write=p" in mine.run(["getcap", "/usr/bin/passwd"]).stdout
    events, answers, status, out = passwd_to_the_kernel(mine, "/usr/bin/passwd",
                                                        "wrong-current", NEW_PW)
    assert status != 0, out
    assert chauthtok_results(events, answers) == (["failed"], ["0"]), (
        audittrace.show(events), answers)
    events, answers, status, out = passwd_to_the_kernel(mine, "/usr/bin/passwd", OLD_PW,
                                                        NEW_PW)
    assert status == 0, out
    assert chauthtok_results(events, answers) == (["success"], ["0"]), (
        audittrace.show(events), answers)
    # chage -l of one's own account: its "display aging info" event
    assert "cap_audit_write=p" in mine.run(["getcap", "/usr/bin/chage"]).stdout
    r = mine.run(["strace", "-f", "-qq", "-e", "signal=none", "-e", "trace=sendto,recvfrom",
                  "-xx", "-s", "8192", "-o", audittrace.TRACE, "-u", "alice",
                  "/usr/bin/chage", "-l", "alice"], check=False)
    trace = mine.read(audittrace.TRACE)
    mine.run(["rm", "-f", audittrace.TRACE])
    events = audittrace.parse(trace)
    assert r.returncode == 0 and [e.fields.get("op") for e in events] == [
        "display aging info"], (r, audittrace.show(events))
    assert chauthtok_results(events, kernel_answers(trace)) == (["success"], ["0"])
    # cp keeps the owner and the setgid mode (as root), not the capability
    mine.run(["cp", "-p", "/usr/bin/passwd", "/usr/bin/passwd-nocap"])
    assert mine.run(["getcap", "/usr/bin/passwd-nocap"]).stdout.strip() == ""
    events, answers, status, out = passwd_to_the_kernel(mine, "/usr/bin/passwd-nocap",
                                                        NEW_PW, "Harbour-9-tulip-ctl")
    assert status == 0, out
    assert chauthtok_results(events, answers) == (["success"], ["-EPERM"]), (
        audittrace.show(events), answers)


def caps_of(pid):
    with open("/proc/%d/status" % pid) as f:
        st = dict(l.split(":\t", 1) for l in f.read().splitlines() if ":\t" in l)
    return {k: int(st[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")}


def at_secure(pid):
    """The AT_SECURE entry (type 23) of the process's auxiliary vector."""
    with open("/proc/%d/auxv" % pid, "rb") as f:
        data = f.read()
    for i in range(0, len(data), 16):
        key, value = struct.unpack("QQ", data[i:i + 16])
        if key == 23:
            return value
    return None


# Leaves /tmp/preloaded-COMM behind in every program it is loaded into.
EVIL_SO = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	char comm[32] = "", path[64];
	int fd = open("/proc/self/comm", O_RDONLY);
	if (fd >= 0) {
		(void)!read(fd, comm, sizeof comm - 1);
		close(fd);
	}
	comm[strcspn(comm, "\n")] = 0;
	snprintf(path, sizeof path, "/tmp/preloaded-%s", comm);
	fd = open(path, O_WRONLY | O_CREAT, 0666);
	if (fd >= 0)
		close(fd);
}
"""


def test_audit_capability_serves_nothing_else(password_roots):
    """What a user could do with passwd's cap_audit_write:
    - at the password prompt the process holds CAP_AUDIT_WRITE and nothing else, none of
      it inheritable or ambient, so no program it runs gets it;
    - the kernel ran it as a secure exec (AT_SECURE): the user's LD_PRELOAD is ignored,
      and the user can neither read its memory nor trace it;
    - a copy given any other capability (a wrong setcap) refuses to run at all."""
    mine, _ = password_roots
    alice = mine.getpwnam("alice")
    with Pty(mine, ["/usr/bin/passwd"], user="alice") as p:
        p.expect(r"Current password: ")
        caps = caps_of(p.pid)
        assert caps["CapPrm"] == CAP_AUDIT_WRITE, caps
        assert caps["CapEff"] & ~CAP_AUDIT_WRITE == 0, caps
        assert caps["CapInh"] == 0 and caps["CapAmb"] == 0, caps
        assert at_secure(p.pid) == 1
        for attack in ("open('/proc/%d/mem', 'rb').read(1)" % p.nspid,
                       "open('/proc/%d/environ', 'rb').read()" % p.nspid):
            r = mine.run(["/usr/bin/python3", "-c", attack], user="alice", check=False)
            assert r.returncode != 0 and "Permission denied" in r.stderr, (attack, r)
        r = mine.run(["strace", "-p", str(p.nspid)], user="alice", check=False, timeout=10)
        assert r.returncode != 0 and "Operation not permitted" in r.stderr, r
        p.kill()

    # LD_PRELOAD: the library loads into a plain program, not into passwd
    mine.write("/tmp/evil.c", EVIL_SO)
    mine.run(["gcc", "-shared", "-fPIC", "-o", "/tmp/evil.so", "/tmp/evil.c"])
    mine.run(["chmod", "755", "/tmp/evil.so"])
    env = {"LD_PRELOAD": "/tmp/evil.so"}
    mine.run(["/bin/true"], user="alice", env=env)
    assert mine.exists("/tmp/preloaded-true")
    r = mine.run(["/usr/bin/passwd", "-S"], user="alice", env=env, check=False)
    assert r.returncode == 0 and r.stdout.startswith("alice "), r
    assert not mine.exists("/tmp/preloaded-passwd")

    # any capability beyond cap_audit_write: refused before anything else is done
    for extra in ("cap_audit_write,cap_dac_override=p", "cap_dac_read_search=ep",
                  "cap_audit_write,cap_setuid=ep"):
        mine.run(["cp", "-p", "/usr/bin/passwd", "/usr/bin/passwd-extra"])
        mine.run(["setcap", extra, "/usr/bin/passwd-extra"])
        r = mine.run(["/usr/bin/passwd-extra", "-S"], user="alice", check=False)
        assert r.returncode == 1 and r.stdout == "", (extra, r)
        assert "refusing to run with capabilities" in r.stderr, (extra, r.stderr)
    # cap_audit_write with the effective bit (+ep) is accepted and lowered at once
    mine.run(["setcap", "cap_audit_write=ep", "/usr/bin/passwd-extra"])
    r = mine.run(["/usr/bin/passwd-extra", "-S"], user="alice", check=False)
    assert r.returncode == 0 and r.stdout.startswith("alice "), r
    assert alice.uid != 0
