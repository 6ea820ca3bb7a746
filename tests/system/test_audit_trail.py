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
"""

import os
import socket

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
