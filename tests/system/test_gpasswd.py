"""gpasswd in a throwaway root.  Root: -a -d -r -R -M -A (and -A with -M), the group
password prompted twice on a real pty and hashed per login.defs' ENCRYPT_METHOD, the
mismatch and no-tty paths, /etc/group and /etc/gshadow telling the same story after every
operation, hostile input, exit codes and messages next to Debian's gpasswd, and ten
concurrent -a calls losing nothing.

Group administrators: the default build refuses every non-root caller with an explanation
(also tested: the installed binary is plain 0755).  The setuid build's program
(gpasswd-setuid.c, which -Dsetuid_gpasswd=true installs as gpasswd; every build makes it
for the tests as src/admin/gpasswd-setuid-test) is installed 4755 in the root and run by real unprivileged users: an administrator may use
-a -d -r -R and set the password, never -A or -M; anybody else is refused and nothing
changes."""

import os
import stat
import termios
import time
import warnings

import pytest

import grouptools
import sandbox
from ptyproc import write_blocked

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

GPASSWD = "/usr/bin/gpasswd"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/gpasswd"
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/login.defs",
         GPASSWD)


def set_up(sb):
    for u in ("alice", "bob", "carol", "dave"):
        sb.add_classic_user(u, password=u + "-pw-1")
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5000", "-U", "bob", "proj"])
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5001", "other"])


msb, sb = grouptools.fixtures(set_up, FILES)


@pytest.fixture
def suid(sb, build_dir):
    """The setuid build's gpasswd installed 4755 root:root in place of the default one."""
    with open(os.path.join(build_dir, "src", "admin", "gpasswd-setuid-test"), "rb") as f:
        sb.write(GPASSWD, f.read(), mode=0o4755)
    st = sb.lstat(GPASSWD)
    assert stat.S_IMODE(st.st_mode) == 0o4755 and st.st_uid == 0
    sb.run([GPASSWD, "-A", "alice", "proj"])
    return sb


run = grouptools.runner(GPASSWD)


def snapshot(sb):
    return grouptools.snapshot(sb, ("/etc/group", "/etc/gshadow", "/etc/passwd"))


def check_consistent(sb, names=("proj", "other")):
    group, gshadow = grouptools.table(sb, "/etc/group"), grouptools.table(sb, "/etc/gshadow")
    for n in names:
        assert n in group and n in gshadow, n
        assert group[n][1] == "x", group[n]
        assert group[n][3] == gshadow[n][3], (group[n], gshadow[n])


def members(sb, group="proj"):
    return grouptools.table(sb, "/etc/group")[group][3]


# ---------------------------------------------------------------- root

def test_add_delete(sb):
    r = run(sb, ["-a", "alice", "proj"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "Adding user alice to group proj\n", "")
    assert members(sb) == "bob,alice"
    check_consistent(sb)
    # again: nothing to do, same output, as Debian
    r = run(sb, ["-a", "alice", "proj"])
    assert (r.returncode, r.stdout) == (0, "Adding user alice to group proj\n")
    assert members(sb) == "bob,alice"
    r = run(sb, ["--delete", "bob", "proj"])
    assert (r.returncode, r.stdout) == (0, "Removing user bob from group proj\n")
    assert members(sb) == "alice"
    check_consistent(sb)
    r = run(sb, ["-d", "bob", "proj"])
    assert r.returncode == 3
    assert r.stderr == "gpasswd: user 'bob' is not a member of 'proj'\n"
    assert any("user alice added by root to group proj" in l for l in sb.syslog())


def test_members_and_admins(sb):
    assert run(sb, ["-M", "carol,alice,carol", "proj"]).returncode == 0
    assert members(sb) == "carol,alice"
    assert run(sb, ["-A", "dave", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"] == ["proj", "!", "dave", "carol,alice"]
    assert run(sb, ["-A", "alice,bob", "-M", "", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"] == ["proj", "!", "alice,bob", ""]
    check_consistent(sb)
    # -d removes a member, never an administrator
    assert run(sb, ["-a", "bob", "proj"]).returncode == 0
    assert run(sb, ["-d", "bob", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][2] == "alice,bob"


def test_remove_and_restrict_password(sb):
    assert run(sb, ["-r", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][1] == ""
    assert run(sb, ["-R", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][1] == "!"
    assert grouptools.table(sb, "/etc/group")["proj"][1] == "x"


def test_without_gshadow(sb):
    os.unlink(sb.root + "/etc/gshadow")
    r = run(sb, ["-A", "alice", "proj"])
    assert (r.returncode, r.stderr) == (17, "gpasswd: shadow group passwords required for "
                                            "-A\n")
    assert run(sb, ["-a", "alice", "proj"]).returncode == 0
    assert run(sb, ["-R", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"] == ["proj", "!", "5000", "bob,alice"]
    assert not sb.exists("/etc/gshadow")


def set_password(sb, first, second=None, user=None, group="proj", tries=1):
    script = [(r"Changing the password for group %s\n" % group, None)]
    for _ in range(tries):
        script += [(r"New Password: ", first + "\n"),
                   (r"Re-enter new password: ", (second or first) + "\n")]
    return sb.pty_run([GPASSWD, group], script, user=user)


def test_password_on_a_tty(sb):
    status, out = set_password(sb, "Group-pw-42")
    assert status == 0, out
    assert "Group-pw-42" not in out           # echo off
    h = grouptools.table(sb, "/etc/gshadow")["proj"][1]
    assert h.startswith("$6$")                 # Debian's login.defs: SHA512
    assert crypt.crypt("Group-pw-42", h) == h
    assert grouptools.table(sb, "/etc/group")["proj"][1] == "x"
    check_consistent(sb)
    # the method follows login.defs
    defs = sb.read("/etc/login.defs").replace("ENCRYPT_METHOD SHA512", "ENCRYPT_METHOD YESCRYPT")
    sb.write("/etc/login.defs", defs)
    assert set_password(sb, "Other-pw-7")[0] == 0
    h = grouptools.table(sb, "/etc/gshadow")["proj"][1]
    assert h.startswith("$y$") and crypt.crypt("Other-pw-7", h) == h


def test_password_mismatch_and_no_tty(sb):
    before = snapshot(sb)
    status, out = set_password(sb, "one-pw-1", "two-pw-2", tries=3)
    assert status == 1
    assert out.count("They don't match; try again") == 2
    assert "gpasswd: Try again later" in out
    assert snapshot(sb) == before
    r = run(sb, ["proj"], input="x\nx\n")
    assert (r.returncode, r.stderr) == (1, "gpasswd: Not a tty\n")
    # an empty password is refused: -r says "no password"
    status, out = set_password(sb, "")
    assert status == 1 and "empty password refused" in out
    assert snapshot(sb) == before


@pytest.mark.parametrize("args,status,message", [
    (["-a", "nosuch", "proj"], 3, "gpasswd: user 'nosuch' does not exist\n"),
    (["-a", "a:b", "proj"], 3, "gpasswd: user 'a:b' does not exist\n"),
    (["-a", "a\nb", "proj"], 3, "gpasswd: user 'a\\x0ab' does not exist\n"),
    (["-a", "alice", "nosuch"], 3, "gpasswd: group 'nosuch' does not exist in /etc/group\n"),
    (["-a", "alice", "a\nb"], 3, "gpasswd: group 'a\\x0ab' does not exist in /etc/group\n"),
    (["-M", "alice,nosuch", "proj"], 3, "gpasswd: user 'nosuch' does not exist\n"),
    (["-M", "alice,,bob", "proj"], 3, "gpasswd: user '' does not exist\n"),
    (["-A", "alice:x", "proj"], 3, "gpasswd: user 'alice:x' does not exist\n"),
    (["-d", "x" * 33, "proj"], 3, "is not a member of 'proj'\n"),
    (["-a", "alice", "-d", "bob", "proj"], 2, "Usage: gpasswd [option] GROUP\n"),
    (["-r", "-R", "proj"], 2, "Usage: gpasswd [option] GROUP\n"),
    (["-M", "alice", "-a", "bob", "proj"], 2, "Usage: gpasswd [option] GROUP\n"),
    ([], 2, "Usage: gpasswd [option] GROUP\n"),
    (["proj", "other"], 2, "Usage: gpasswd [option] GROUP\n"),
    (["-Q", "/srv", "-r", "proj"], 2, "not supported"),
])
def test_refusals(sb, args, status, message):
    before = snapshot(sb)
    r = run(sb, args)
    assert r.returncode == status, r.stderr
    assert message in r.stderr
    assert snapshot(sb) == before


@pytest.mark.parametrize("args", [["-a", "nosuch", "proj"], ["-a", "alice", "nosuch"],
                                  ["-d", "alice", "proj"], ["-M", "alice,nosuch", "proj"],
                                  ["-a", "alice", "proj"], ["-d", "bob", "proj"]])
def test_messages_like_debian(sb, args):
    ours = run(sb, args)
    sb.write("/etc/group", sb._hs_saved["/etc/group"][0])
    st = sb._hs_saved["/etc/gshadow"][1]
    sb.write("/etc/gshadow", sb._hs_saved["/etc/gshadow"][0], mode=0o640, gid=st.st_gid)
    theirs = run(sb, args, prog=CLASSIC)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)
    assert ours.stderr.splitlines()[:1] == theirs.stderr.splitlines()[:1]


def test_concurrent_adds_lose_nothing(sb):
    sb.sh("for i in 0 1 2 3 4 5 6 7 8 9; do useradd -M u$i; done")
    sb.sh(" ".join("%s -a u%d proj >/dev/null &" % (GPASSWD, i) for i in range(10)) + " wait")
    got = set(members(sb).split(","))
    assert got == {"bob"} | {"u%d" % i for i in range(10)}
    check_consistent(sb)


# ---------------------------------------------------------------- non-root callers

def setuid_build(sb):
    return bool(sb._hs_saved[GPASSWD][1].st_mode & stat.S_ISUID)


def test_default_build_refuses_users(sb):
    if setuid_build(sb):
        pytest.skip("gpasswd is installed setuid (-Dsetuid_gpasswd=true)")
    st = sb.lstat(GPASSWD)
    assert stat.S_IMODE(st.st_mode) == 0o755 and not st.st_mode & stat.S_ISUID
    sb.run([GPASSWD, "-A", "alice", "proj"])
    before = snapshot(sb)
    for args in (["-a", "carol", "proj"], ["-r", "proj"], ["proj"]):
        r = run(sb, args, user="alice")
        assert r.returncode == 1
        assert r.stderr.startswith("gpasswd: Permission denied.\n")
        assert "-Dsetuid_gpasswd=true" in r.stderr and "ask root" in r.stderr
    assert snapshot(sb) == before


def test_setuid_build_installed(sb):
    """A -Dsetuid_gpasswd=true build: installed 4755 root:root, and it is the
    administrators' code (the tests below use the test variant in every build)."""
    if not setuid_build(sb):
        pytest.skip("default build: gpasswd is not setuid")
    st = sb.lstat(GPASSWD)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o4755, 0, 0)
    sb.run([GPASSWD, "-A", "alice", "proj"])
    r = run(sb, ["-a", "carol", "proj"], user="alice")
    assert r.returncode == 0 and members(sb) == "bob,carol"
    assert run(sb, ["-a", "dave", "proj"], user="carol").returncode == 1


def test_admin_manages_members(suid):
    sb = suid
    r = run(sb, ["-a", "carol", "proj"], user="alice")
    assert (r.returncode, r.stdout, r.stderr) == (0, "Adding user carol to group proj\n", "")
    assert members(sb) == "bob,carol"
    r = run(sb, ["-d", "bob", "proj"], user="alice")
    assert r.returncode == 0 and members(sb) == "carol"
    assert run(sb, ["-r", "proj"], user="alice").returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][1] == ""
    assert run(sb, ["-R", "proj"], user="alice").returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][1] == "!"
    check_consistent(sb)
    # the files keep root's owner and mode
    st = sb.lstat("/etc/gshadow")
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o640)
    assert any("user carol added by alice to group proj" in l for l in sb.syslog())


@pytest.mark.parametrize("args,said", [
    (["-a", "carol", "proj"], b"Adding user carol to group proj\r\n"),
    (["-d", "dave", "proj"], b"Removing user dave from group proj\r\n"),
])
def test_admin_cannot_hold_the_locks_with_a_stopped_terminal(suid, args, said):
    # gpasswd is unstoppable once it is root, but its stdout is alice's terminal,
    # which she can stop (^S, tcflow): the line saying what it does used to wait there
    # with /etc/group and /etc/gshadow locked, every account tool of root's timing out
    # for as long as she liked.  The change, or the refusal (dave is no member), is
    # made first; the line waits with no lock held.
    sb = suid
    master, slave = os.openpty()
    termios.tcflow(slave, termios.TCOOFF)
    proc = sb.popen([GPASSWD] + args, user="alice", stdout=slave, pass_fds=(slave,))
    try:
        deadline = time.monotonic() + 30
        while not write_blocked(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        assert not sb.exists("/etc/group.lock") and not sb.exists("/etc/gshadow.lock")
        r = sb.run([GPASSWD, "-a", "bob", "other"], check=False, timeout=40)
        assert r.returncode == 0, r
    finally:
        termios.tcflow(slave, termios.TCOON)
        os.close(slave)
        proc.wait(timeout=30)
        out = os.read(master, 4096)
        os.close(master)
    assert (proc.returncode, out) == (0 if args[0] == "-a" else 3, said)
    assert members(sb, "other") == "bob"
    assert members(sb) == ("bob,carol" if args[0] == "-a" else "bob")


def test_admin_sets_password(suid):
    sb = suid
    status, out = set_password(sb, "Admin-set-9", user="alice")
    assert status == 0, out
    h = grouptools.table(sb, "/etc/gshadow")["proj"][1]
    assert crypt.crypt("Admin-set-9", h) == h


def test_admin_limits(suid):
    sb = suid
    before = snapshot(sb)
    # -A and -M stay root's
    for args in (["-A", "alice,carol", "proj"], ["-M", "carol", "proj"]):
        r = run(sb, args, user="alice")
        assert (r.returncode, r.stderr) == (1, "gpasswd: Permission denied.\n")
    # not an administrator of that group, or of any
    for user, args in (("alice", ["-a", "carol", "other"]), ("carol", ["-a", "carol", "proj"]),
                       ("bob", ["-r", "proj"]), ("bob", ["proj"])):
        r = run(sb, args, user=user)
        assert (r.returncode, r.stderr) == (1, "gpasswd: Permission denied.\n"), (user, args)
    assert snapshot(sb) == before
    # a user with no passwd entry
    r = run(sb, ["-a", "carol", "proj"], user=4242)
    assert (r.returncode, r.stderr) == (1, "gpasswd: Cannot determine your user name.\n")
    # an administrator removed by root loses the right at once
    sb.run([GPASSWD, "-A", "", "proj"])
    r = run(sb, ["-a", "carol", "proj"], user="alice")
    assert r.returncode == 1
    assert "carol" not in members(sb)
