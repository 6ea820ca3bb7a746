"""usermod in a throwaway root: each option, exit codes, strict numbers, -l (the tree
directory renamed, memberships renamed, the password still works under the new name), -u
(tree files and home files re-owned, a planted symlink not followed), -L/-U, -G/-a/-r,
-d -m, a running process refusing -l/-u, subordinate id ranges (-v -V -w -W, strict ranges,
-l renaming them)."""

import datetime
import os
import signal
import socket
import subprocess
import time

import pytest

import audittrace
from homemounts import HOME_MOUNTS, mount_on_home

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

USERMOD = "/usr/sbin/usermod"
HELPER = "/usr/libexec/hardened-shadow/password-helper"
TREE = "/etc/hardened-shadow"
CLASSIC_GROUPADD = "/usr/libexec/hs-test/shadow-utils/groupadd"
CLASSIC_USERMOD = "/usr/libexec/hs-test/shadow-utils/usermod"


def run(sb, args, **kw):
    kw.setdefault("check", False)
    return sb.run([USERMOD] + args, **kw)


def lines(sb, path):
    return sb.read(path).splitlines() if sb.exists(path) else []


def entry(sb, path, name):
    for l in lines(sb, path):
        f = l.split(":")
        if f[0] == name:
            return f
    return None


def members(sb, group):
    f = entry(sb, "/etc/group", group)
    return [m for m in f[3].split(",") if m] if f else None


def tree_hash(sb, user):
    return sb.read(TREE + "/%s/shadow" % user).split(":")[0]


def aging(sb, user):
    return sb.read(TREE + "/%s/aging" % user).strip().split(":")


@pytest.fixture
def two(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.run([CLASSIC_GROUPADD, "-g", "5000", "proj"])
    sb.run([CLASSIC_GROUPADD, "-g", "5001", "ops"])
    sb.run([CLASSIC_USERMOD, "-a", "-G", "proj", "alice"])
    sb.run([CLASSIC_USERMOD, "-a", "-G", "proj", "bob"])
    sb.write("/etc/gshadow", "".join(
        "proj:!:alice:alice,bob\n" if l.startswith("proj:") else l + "\n"
        for l in lines(sb, "/etc/gshadow")), mode=0o640,
        gid=sb.getgrnam("shadow")[1])
    sb.use_hardened_tree()
    assert sb.exists(TREE + "/alice/shadow")
    return sb


def verify(sb, user, password):
    return sb.run([HELPER, "verify", user], user=user, input=password, check=False)


# ---------------------------------------------------------------- basics

def test_usage_and_exit_codes(two):
    sb = two
    before = sb.read_bytes("/etc/passwd")
    assert run(sb, []).returncode == 2
    assert run(sb, ["--bogus", "alice"]).returncode == 2
    assert run(sb, ["-a", "alice"]).returncode == 2          # -a without -G
    assert run(sb, ["-m", "alice"]).returncode == 2          # -m without -d
    assert run(sb, ["-o", "alice"]).returncode == 2          # -o without -u
    assert run(sb, ["-L", "-U", "alice"]).returncode == 2
    assert run(sb, ["-L", "-p", "x", "alice"]).returncode == 2
    assert run(sb, ["-R", "/mnt", "-c", "x", "alice"]).returncode == 2
    assert run(sb, ["-c", "x", "nosuch"]).returncode == 6
    assert run(sb, ["-c", "x", "../etc"]).returncode == 6
    assert run(sb, ["-g", "nosuchgroup", "alice"]).returncode == 6
    assert run(sb, ["-G", "proj,nosuchgroup", "alice"]).returncode == 6
    assert run(sb, ["-l", "bob", "alice"]).returncode == 9
    assert run(sb, ["-l", "-bad", "alice"]).returncode == 3
    assert run(sb, ["-l", "bad/name", "alice"]).returncode == 3
    assert run(sb, ["-c", "a:b", "alice"]).returncode == 3
    assert run(sb, ["-c", "a\nb", "alice"]).returncode == 3
    assert run(sb, ["-d", "relative", "alice"]).returncode == 3
    assert run(sb, ["-s", "bin/sh", "alice"]).returncode == 3
    bob_uid = sb.getpwnam("bob").uid
    assert run(sb, ["-u", str(bob_uid), "alice"]).returncode == 4
    res = run(sb, ["-h"])
    assert res.returncode == 0 and "--login" in res.stdout
    assert sb.read_bytes("/etc/passwd") == before
    res = run(sb, ["alice"])
    assert res.returncode == 0 and "no changes" in res.stderr
    res = sb.run([USERMOD, "-c", "x", "alice"], user="bob", check=False)
    assert res.returncode == 1
    assert sb.read_bytes("/etc/passwd") == before


@pytest.mark.parametrize("bad", ["-1", "4294967295", "4294967296", "+5", "0x10", "010",
                                 " 5", "5 ", "", "99999999999999999999999", "1e3"])
def test_strict_uid(two, bad):
    before = two.read_bytes("/etc/passwd")
    res = run(two, ["-u", bad, "alice"])
    assert res.returncode == 3, (bad, res.stderr)
    assert two.read_bytes("/etc/passwd") == before


@pytest.mark.parametrize("bad", ["-2", "+5", "0x10", "010", "x", " 1"])
def test_strict_inactive(two, bad):
    assert run(two, ["-f", bad, "alice"]).returncode == 3


@pytest.mark.parametrize("bad", ["2024-13-01", "2024-02-30", "24-01-01", "+5", "0x10",
                                 "2024-1-1", "tomorrow"])
def test_strict_expire(two, bad):
    assert run(two, ["-e", bad, "alice"]).returncode == 3


@pytest.mark.parametrize("opt", [["-Z", "user_u"], ["--selinux-range", "s0"]])
def test_selinux_mappings_refused(two, opt):
    before = two.read_bytes("/etc/passwd")
    res = run(two, opt + ["alice"])
    assert res.returncode == 2 and "--selinux-range) are not supported" in res.stderr
    assert two.read_bytes("/etc/passwd") == before


def test_comment_home_gid(two):
    sb = two
    res = run(sb, ["-c", "Alice A", "-d", "/srv/alice", "-g", "proj", "alice"])
    assert res.returncode == 0, res.stderr
    p = sb.getpwnam("alice")
    assert p.gecos == "Alice A" and p.home == "/srv/alice" and p.gid == 5000
    assert run(sb, ["-g", "5001", "alice"]).returncode == 0
    assert sb.getpwnam("alice").gid == 5001
    # the rest of the file untouched
    assert entry(sb, "/etc/passwd", "bob") is not None


def test_only_options_that_change_shadow_lock_it(sb):
    """On classic files, usermod -c neither locks nor reads /etc/shadow; -L, which
    changes the account's shadow line, locks and reads it."""
    sb.add_classic_user("carol", password="carol-pw-1")
    for args, locks_shadow in ((["-c", "Carol C"], False), (["-L"], True)):
        sb.run(["strace", "-f", "-qq", "-o", "/tmp/trace", "-e", "trace=link,linkat,openat",
                USERMOD] + args + ["carol"])
        trace = sb.read("/tmp/trace")
        assert ('shadow.lock"' in trace) == locks_shadow, (args, trace)
        assert ('"shadow"' in trace) == locks_shadow, (args, trace)


def test_expire_and_inactive_in_aging(two):
    sb = two
    res = run(sb, ["-e", "2030-01-02", "-f", "7", "alice"])
    assert res.returncode == 0, res.stderr
    a = aging(sb, "alice")
    assert a[4] == "21916" and a[3] == "7"
    st = sb.lstat(TREE + "/alice/aging")
    assert st.st_uid == 0
    assert run(sb, ["-e", "", "-f", "-1", "alice"]).returncode == 0
    a = aging(sb, "alice")
    assert a[4] == "-1" and a[3] == "-1"
    assert run(sb, ["-e", "12345", "alice"]).returncode == 0
    assert aging(sb, "alice")[4] == "12345"


@pytest.mark.parametrize("args", [["-f", "30"], ["-e", "2030-01-02"]])
def test_out_of_descriptors_reading_aging_writes_nothing(two, args):
    """EMFILE opening aging says nothing of the file: usermod fails, and does not write the
    fail-closed "expired on day 1" of an untrusted aging file around the field it sets."""
    sb = two
    before = sb.read(TREE + "/alice/aging")
    # below alice's directory: the lock's sweep of ".", then aging
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat",
              "-P", TREE + "/alice", "-e", "inject=openat:error=EMFILE:when=2"]
    res = sb.run(inject + [USERMOD] + args + ["alice"], check=False)
    assert res.returncode == 1, res
    assert "usermod: cannot read %s/alice/aging: Too many open files\n" % TREE in res.stderr
    assert sb.read(TREE + "/alice/aging") == before
    # the same without the fault
    assert sb.run(inject[:-2] + [USERMOD] + args + ["alice"], check=False).returncode == 0
    assert aging(sb, "alice")[1:3] == before.split(":")[1:3]


# alice's own aging file in her directory, with a write lease held on it: every open of it
# with O_NONBLOCK (the readers') then fails with EAGAIN
LEASE_HOLDER = r"""
import fcntl, os, signal, sys
signal.signal(signal.SIGIO, signal.SIG_IGN)
path = sys.argv[1]
os.unlink(path)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"-1:-1:-1:-1:-1:\n")
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)    # F_SETLEASE
print("held", flush=True)
sys.stdin.read()
"""


def test_a_lease_on_aging_is_no_shortage(two):
    """A user owns her directory: through a subverted setgid tool (DESIGN section 2) she can
    put an aging file of her own there and hold a lease on it, which makes the readers'
    opens fail with EAGAIN.  EAGAIN was taken for a
    shortage that says nothing of the file: getspnam failed (TRYAGAIN) instead of giving
    the fail-closed expired entry, and root's usermod -e failed instead of replacing the
    file.  It is the user's doing to a file not root's: read as expired, and replaced."""
    sb = two
    # alice with the group of the setgid tools: what one of them, subverted, can do
    holder = sb.popen(["/usr/bin/setpriv", "--reuid=alice", "--regid=alice",
                       "--groups=hardened-shadow", "/usr/bin/python3", "-c", LEASE_HOLDER,
                       TREE + "/alice/aging"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n", holder.stderr.read()
        res = sb.run(["getent", "shadow", "alice"], check=False)
        assert res.returncode == 0 and res.stdout.split(":")[7] == "1", res
        res = run(sb, ["-e", "2030-01-02", "alice"])
        assert res.returncode == 0, res.stderr
    finally:
        holder.stdin.close()
        holder.wait()
    assert sb.lstat(TREE + "/alice/aging").st_uid == 0
    assert aging(sb, "alice")[4] == str((datetime.date(2030, 1, 2) -
                                         datetime.date(1970, 1, 1)).days)


def test_lock_unlock_password(two):
    sb = two
    h = tree_hash(sb, "alice")
    assert run(sb, ["-L", "alice"]).returncode == 0
    assert tree_hash(sb, "alice") == "!" + h
    assert run(sb, ["-L", "alice"]).returncode == 0
    assert tree_hash(sb, "alice") == "!" + h          # not doubled
    assert verify(sb, "alice", "alice-pw-1").returncode != 0
    assert run(sb, ["-U", "alice"]).returncode == 0
    assert tree_hash(sb, "alice") == h
    assert verify(sb, "alice", "alice-pw-1").returncode == 0
    st = sb.lstat(TREE + "/alice/shadow")
    assert st.st_uid == sb.getpwnam("alice").uid and st.st_mode & 0o777 == 0o640
    # "!" alone would become no password: refused
    assert run(sb, ["-p", "!", "alice"]).returncode == 0
    assert tree_hash(sb, "alice") == "!"
    assert run(sb, ["-U", "alice"]).returncode == 1
    assert tree_hash(sb, "alice") == "!"
    assert run(sb, ["-p", h, "alice"]).returncode == 0
    assert tree_hash(sb, "alice") == h
    assert run(sb, ["-p", "a:b", "alice"]).returncode == 3
    assert entry(sb, "/etc/passwd", "alice")[1] == "x"


def test_hash_never_goes_into_passwd_for_an_account_whose_password_is_elsewhere(two):
    """An account whose passwd field is "x" with neither a shadow line nor a directory
    (its directory under an interrupted usermod -l's reserved name, here): -p used to
    write the hash into the world-readable /etc/passwd.  Refused now, as -e and -f are;
    a foreign account whose password is in its passwd field keeps it there."""
    sb = two
    sb.sh("mv %s/alice %s/.usermod-l.alicia" % (TREE, TREE))
    before = sb.read("/etc/passwd")
    h = tree_hash(sb, "bob")
    r = run(sb, ["-p", h, "alice"])
    assert (r.returncode, r.stderr) == (
        1, "usermod: user alice has no /etc/shadow entry and no directory in %s\n" % TREE)
    assert sb.read("/etc/passwd") == before and h not in sb.read("/etc/passwd")
    sb.sh("printf 'legacy:%s:4321:4321::/:/bin/sh\\n' >>/etc/passwd" % "oldpw")
    assert run(sb, ["-p", h, "legacy"]).returncode == 0
    assert entry(sb, "/etc/passwd", "legacy")[1] == h


def test_l_finishing_an_interrupted_l_u_gives_the_files_back(sb):
    """A usermod -l -u killed after it took the directory away (root's, under the reserved
    name, its files given the new uid) but before its commit; then usermod -l alone
    finishes the rename.  It handed alice2 her directory with shadow still 4242's: no
    login.  The files now go back to the uid /etc/passwd has."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.use_hardened_tree()
    uid = sb.getpwnam("alice").uid
    sb.sh("chown 4242 {t}/alice/shadow && chown root:root {t}/alice && "
          "chmod 700 {t}/alice && mv {t}/alice {t}/.usermod-l.alice2".format(t=TREE))
    res = run(sb, ["-l", "alice2", "alice"])
    assert res.returncode == 0, res
    assert sb.lstat(TREE + "/alice2").st_uid == uid
    assert sb.lstat(TREE + "/alice2/shadow").st_uid == uid
    assert verify(sb, "alice2", "alice-pw-1").returncode == 0


def test_l_u_failing_on_an_interrupted_l_gives_the_directory_back_under_the_old_name(sb):
    """A usermod -l alice2 alice killed once her directory was under the reserved name
    (root's), then the same -l with -u, which fails before its commit: a file of hers
    cannot be given the new uid (her shell file has a second link).  The directory was
    handed back to alice under the reserved name: hers, at a name nothing looks up, so
    she could not log in and no later usermod on alice found it.  /etc/passwd still names
    alice: it now goes back to her name, and the same command, the link gone, does the
    rename."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.use_hardened_tree()
    uid = sb.getpwnam("alice").uid
    sb.sh("ln {t}/alice/shell {t}/alice/shell.link && chown root:root {t}/alice && "
          "chmod 700 {t}/alice && mv {t}/alice {t}/.usermod-l.alice2".format(t=TREE))
    res = run(sb, ["-l", "alice2", "-u", "4242", "alice"])
    assert res.returncode == 1, res
    assert "cannot change the owner of the files in %s/alice" % TREE in res.stderr, res
    assert sb.getpwnam("alice").uid == uid and sb.getpwnam("alice2") is None
    assert not sb.exists(TREE + "/.usermod-l.alice2"), res.stderr
    st = sb.lstat(TREE + "/alice")
    assert (st.st_uid, st.st_mode & 0o7777) == (uid, 0o2710)
    assert verify(sb, "alice", "alice-pw-1").returncode == 0
    sb.run(["rm", TREE + "/alice/shell.link"])
    res = run(sb, ["-l", "alice2", "-u", "4242", "alice"])
    assert res.returncode == 0, res
    assert sb.lstat(TREE + "/alice2").st_uid == 4242
    assert verify(sb, "alice2", "alice-pw-1").returncode == 0


def test_l_finishing_an_interrupted_l_refuses_a_directory_at_the_new_name(two):
    """A usermod -l alicia alice killed once her directory was under the reserved name;
    meanwhile a directory alicia came into the tree without a passwd line (here bob's
    copy: what shadow-utils' userdel leaves of a deleted account).  The rerun skipped the
    check that the new name is free in the tree, as the directory was reserved already:
    /etc/passwd got alicia, her directory stayed reserved (the rename met alicia), and
    the NSS module served the stray directory's hash for alicia.  Refused now, as when
    the directory is not reserved yet, and nothing changes."""
    sb = two
    sb.sh("chown root:root {t}/alice && chmod 700 {t}/alice && "
          "mv {t}/alice {t}/.usermod-l.alicia && cp -a {t}/bob {t}/alicia".format(t=TREE))
    before = sb.read("/etc/passwd")
    res = run(sb, ["-l", "alicia", "alice"])
    assert (res.returncode, res.stderr) == (
        9, "usermod: %s/alicia already exists\n" % TREE), res
    assert sb.read("/etc/passwd") == before
    assert sb.exists(TREE + "/.usermod-l.alicia")
    # so is an account without a directory (its password in /etc/shadow)
    sb.add_classic_user("carol", password="carol-pw-1")
    assert not sb.exists(TREE + "/carol")
    sb.sh("cp -a {t}/bob {t}/carola".format(t=TREE))
    before = sb.read("/etc/passwd")
    res = run(sb, ["-l", "carola", "carol"])
    assert (res.returncode, res.stderr) == (
        9, "usermod: %s/carola already exists\n" % TREE), res
    assert sb.read("/etc/passwd") == before


@pytest.mark.parametrize("args", [["-a", "-G", "ops"], ["-G", "ops"], ["-G", "proj,ops"]])
def test_G_refuses_a_group_name_on_two_lines(two, args):
    """/etc/group names ops twice (a hand edit; 5001 and 779).  usermod -G ops bob added
    bob to both lines, so to gid 779 too, which nobody asked for.  Refused now in one line
    naming the lines, as groupmod, groupdel and chgpasswd refuse that file, and nothing
    changes."""
    sb = two
    sb.sh("printf 'ops:x:779:alice\\n' >> /etc/group")
    before = {f: sb.read_bytes(f) for f in ("/etc/group", "/etc/gshadow")}
    names = [l.split(":")[0] for l in sb.read("/etc/group").splitlines()]
    first = names.index("ops") + 1
    res = run(sb, args + ["bob"])
    assert (res.returncode, res.stderr) == (
        10, "usermod: /etc/group:%d: duplicate group name ops (also on line %d)\n"
        % (len(names), first)), res
    assert {f: sb.read_bytes(f) for f in before} == before


@pytest.mark.parametrize("argv", [["/usr/sbin/usermod", "-c", "x", "bob"],
                                  ["/usr/sbin/userdel", "bob"]], ids=["usermod", "userdel"])
def test_a_line_that_does_not_parse_is_named_not_missing(two, argv):
    """bob's /etc/passwd line ends in a CR (a file edited on another system).  usermod and
    userdel on bob said "user 'bob' does not exist" (exit 6), while useradd bob refuses
    the name for that very line: the administrator was sent looking for a missing
    account.  Both now name the line and what is wrong with it, and change nothing."""
    sb = two
    sb.sh("sed -i 's/^bob:.*/&\\r/' /etc/passwd")
    before = sb.read_bytes("/etc/passwd")
    n = [l.split(b":")[0] for l in before.splitlines()].index(b"bob") + 1
    res = sb.run(argv, check=False)
    assert (res.returncode, res.stderr) == (
        1, "%s: /etc/passwd:%d: invalid entry: forbidden character in a field\n"
        % (argv[0].rsplit("/", 1)[1], n)), res
    assert sb.read_bytes("/etc/passwd") == before
    assert sb.exists(TREE + "/bob")


def test_shell_follows_chsh_rules(two):
    sb = two
    proxy = "/usr/libexec/hardened-shadow/shell-proxy"
    # root's new shell takes alice out of the proxy; --self-service-shell keeps her
    res = run(sb, ["-s", "/bin/sh", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").shell == "/bin/sh"
    assert sb.read(TREE + "/alice/shell").strip() == "/bin/sh"
    res = run(sb, ["-s", "/bin/bash", "--self-service-shell", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").shell == proxy
    assert sb.read(TREE + "/alice/shell").strip() == "/bin/bash"
    res = run(sb, ["-s", "/usr/sbin/nologin", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").shell == "/usr/sbin/nologin"
    assert run(sb, ["-s", proxy, "alice"]).returncode == 3


# ---------------------------------------------------------------- groups

def test_groups_replace_append_remove(two):
    sb = two
    res = run(sb, ["-G", "ops", "alice"])
    assert res.returncode == 0, res.stderr
    assert members(sb, "ops") == ["alice"]
    assert members(sb, "proj") == ["bob"]
    # gshadow members follow, administrators stay
    assert entry(sb, "/etc/gshadow", "proj")[2:] == ["alice", "bob"]
    assert run(sb, ["-a", "-G", "proj", "alice"]).returncode == 0
    assert members(sb, "ops") == ["alice"] and "alice" in members(sb, "proj")
    assert run(sb, ["-r", "-G", "ops", "alice"]).returncode == 0
    assert members(sb, "ops") == [] and "alice" in members(sb, "proj")
    assert run(sb, ["-G", "", "alice"]).returncode == 0
    assert "alice" not in members(sb, "proj")
    assert members(sb, "proj") == ["bob"]


# ---------------------------------------------------------------- rename

def test_rename(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    res = run(sb, ["-l", "alicia", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice") is None
    assert sb.getpwnam("alicia").uid == uid
    assert not sb.exists(TREE + "/alice")
    st = sb.lstat(TREE + "/alicia")
    assert st.st_uid == uid and st.st_mode & 0o7777 == 0o2710
    assert st.st_gid == sb.getgrnam("hardened-shadow-auth")[1]
    assert not [e for e in os.listdir(sb.root + TREE) if e.startswith(".")]
    assert members(sb, "proj") == ["alicia", "bob"]
    assert entry(sb, "/etc/gshadow", "proj")[2:] == ["alicia", "alicia,bob"]
    # the private group keeps its name, as in shadow-utils
    assert sb.getgrnam("alice") is not None
    # the password works under the new name
    assert verify(sb, "alicia", "alice-pw-1").returncode == 0
    assert sb.run(["getent", "shadow", "alicia"]).returncode == 0
    assert sb.run(["getent", "shadow", "alice"], check=False).returncode != 0


def test_rename_member_events_sent_at_the_edge_of_memory(two):
    """-l alone sends a member-rename event per group (and gshadow line) naming the
    user.  It noted them in an array of one byte per group line, and when that calloc
    failed it sent none of them yet renamed the user: with 300000 groups and an address
    space (RLIMIT_AS) just large enough for usermod -l to succeed (found by bisection),
    the events were missing.  Below that limit it fails, and changes nothing; at it,
    every member list has the new name."""
    sb = two
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9).close()
    except OSError as e:
        pytest.skip("this kernel has no audit netlink socket (%s)" % e)
    sb.write("/etc/group", sb.read("/etc/group") +
             "".join("g%d:x:%d:\n" % (i, 100000 + i) for i in range(300000)))
    before = {f: sb.read(f) for f in ("/etc/passwd", "/etc/group", "/etc/gshadow")}

    def rename(limit):
        r = sb.run(["prlimit", "--as=%d" % limit, USERMOD, "-l", "alicia", "alice"],
                   check=False)
        if r.returncode == 0:
            sb.run([USERMOD, "-l", "alice", "alicia"])
        else:
            assert {f: sb.read(f) for f in before} == before, r.stderr
        return r.returncode == 0

    lo, hi = 1 << 24, 1 << 29
    assert not rename(lo) and rename(hi)
    while hi - lo > 16384:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if rename(mid) else (mid, hi)
    # every group line was read: none kept the old name (a lookup that ran out of
    # memory once answered "not a member" and the rename went on)
    sb.run(["prlimit", "--as=%d" % hi, USERMOD, "-l", "alicia", "alice"])
    assert members(sb, "proj") == ["alicia", "bob"]
    assert entry(sb, "/etc/gshadow", "proj")[2:] == ["alicia", "alicia,bob"]
    sb.run([USERMOD, "-l", "alice", "alicia"])
    events, r = audittrace.run(sb, ["prlimit", "--as=%d" % hi, USERMOD, "-l", "alicia",
                                    "alice"])
    assert r.returncode == 0, r.stderr
    ops = [e.fields.get("op") for e in events]
    assert "changing group member" in ops and "changing member in shadow group" in ops, \
        audittrace.show(events)


def test_rename_refused_when_directory_name_taken(two):
    sb = two
    sb.sh("mkdir -m 700 %s/carol" % TREE)
    res = run(sb, ["-l", "carol", "alice"])
    assert res.returncode == 9
    assert sb.getpwnam("alice") is not None and sb.exists(TREE + "/alice/shadow")


# ---------------------------------------------------------------- renumber

def test_renumber(two):
    sb = two
    old = sb.getpwnam("alice").uid
    home = sb.getpwnam("alice").home
    sb.sh("touch %s/f && mkdir %s/d && touch %s/d/g && chown -R alice %s" %
          ((home,) * 4))
    passwd_before = sb.lstat("/etc/passwd")
    sb.sh("ln -s /etc/passwd %s/link && chown -h alice %s/link" % (home, home))
    sb.sh("touch %s/foreign && chown bob %s/foreign" % (home, home))
    res = run(sb, ["-u", "4242", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").uid == 4242
    d = sb.lstat(TREE + "/alice")
    assert d.st_uid == 4242 and d.st_mode & 0o7777 == 0o2710
    assert sb.lstat(TREE + "/alice/shadow").st_uid == 4242
    assert sb.lstat(TREE + "/alice/shell").st_uid == 4242
    assert sb.lstat(TREE + "/alice/aging").st_uid == 0
    for p in ("", "/f", "/d", "/d/g", "/link"):
        assert sb.lstat(home + p).st_uid == 4242, p
    assert sb.lstat(home + "/foreign").st_uid == sb.getpwnam("bob").uid
    after = sb.lstat("/etc/passwd")
    assert after.st_uid == passwd_before.st_uid == 0
    assert verify(sb, "alice", "alice-pw-1").returncode == 0
    assert old != 4242


def test_renumber_duplicate_with_o(two):
    sb = two
    bob = sb.getpwnam("bob").uid
    res = run(sb, ["-o", "-u", str(bob), "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").uid == bob


def start_sleep(sb, user):
    sb.sh("setsid sleep 600 </dev/null >/dev/null 2>&1 &", user=user)
    # the shell is gone before its background child has exec()ed sleep
    deadline = time.monotonic() + 10
    res = sb.run(["pgrep", "-u", user, "sleep"], check=False)
    while res.returncode != 0 and time.monotonic() < deadline:
        time.sleep(0.01)
        res = sb.run(["pgrep", "-u", user, "sleep"], check=False)
    assert res.returncode == 0, "sleep did not start"
    return int(res.stdout.split()[0])


def test_running_process_refuses_rename_and_renumber(two):
    sb = two
    pid = start_sleep(sb, "alice")
    before = sb.read_bytes("/etc/passwd")
    for args in (["-l", "alicia"], ["-u", "4242"]):
        res = run(sb, args + ["alice"])
        assert res.returncode == 8, res.stderr
        assert str(pid) in res.stderr
    assert sb.read_bytes("/etc/passwd") == before
    assert sb.exists(TREE + "/alice/shadow")
    # other changes are fine
    assert run(sb, ["-c", "busy", "alice"]).returncode == 0


# ---------------------------------------------------------------- home move

def test_move_home(two):
    sb = two
    home = sb.getpwnam("alice").home
    sb.sh("touch %s/keep" % home)
    res = run(sb, ["-d", "/home/alice2", "-m", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").home == "/home/alice2"
    assert sb.exists("/home/alice2/keep") and not sb.exists(home)
    # onto an existing directory: refused, nothing changed
    res = run(sb, ["-d", "/home/bob", "-m", "alice"])
    assert res.returncode == 12
    assert sb.getpwnam("alice").home == "/home/alice2"


@pytest.mark.parametrize("how", HOME_MOUNTS)
def test_move_home_that_is_a_mount_point_refused(two, how):
    """alice's home is itself a mount point (her FUSE file system, an administrator's bind
    mount): -m refuses it, untouched, said as userdel -r and the recovery say it, exit 12,
    nothing changed.  It used to say "cannot rename directory ...: Device or resource
    busy", or, FUSE refusing root the stat of it, "cannot move home directory
    /home/alice: Permission denied" (or "Transport endpoint is not connected").
    shadow-utils exits 12 too, after writing the new home into /etc/passwd, unmoved."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("echo under >/home/alice/under")
    under = sb.lstat("/home/alice")
    mount_on_home(sb, how, "/home/alice", uid)
    try:
        before = None if how.startswith("fuse") else sb.lstat("/home/alice")
        res = run(sb, ["-d", "/home/alice2", "-m", "alice"])
        assert res.returncode == 12, res
        assert res.stderr.splitlines() == [
            "usermod: cannot move home directory /home/alice: a file system is mounted at "
            "/home/alice"], res
        assert sb.getpwnam("alice").home == "/home/alice"
        assert not sb.exists("/home/alice2")
        if before:
            st = sb.lstat("/home/alice")
            assert (st.st_uid, st.st_gid, st.st_mode, st.st_ctime_ns) == \
                (before.st_uid, before.st_gid, before.st_mode, before.st_ctime_ns)
    finally:
        sb.sh("umount /home/alice", check=False)
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_gid, st.st_mode, st.st_ctime_ns) == \
        (under.st_uid, under.st_gid, under.st_mode, under.st_ctime_ns)
    assert sb.read("/home/alice/under") == "under\n"


def test_move_home_symlink_refused(two):
    sb = two
    sb.sh("mv /home/alice /home/alice.real && ln -s /etc /home/alice")
    res = run(sb, ["-d", "/home/alice3", "-m", "alice"])
    assert res.returncode == 12
    assert sb.lstat("/etc").st_uid == 0 and sb.exists("/etc/passwd")
    assert sb.getpwnam("alice").home == "/home/alice"


def test_move_home_through_the_users_link_refused(two):
    """usermod -d -m checks the new home's parent as the kernel resolves it, with no step
    the user's: alice's own symlink in sticky /tmp (/tmp/alice-homes -> /etc/cron.d) is no
    step of the resolved path, so -d /tmp/alice-homes/alice -m moved her home into
    /etc/cron.d (the kernel refuses the link only with fs.protected_symlinks).  A link
    on the way must be root's."""
    sb = two
    sb.sh("mkdir -p /etc/cron.d; rm -f /tmp/alice-homes; ln -s /etc/cron.d /tmp/alice-homes; "
          "chown -h alice: /tmp/alice-homes")
    res = run(sb, ["-d", "/tmp/alice-homes/alice", "-m", "alice"])
    assert res.returncode == 12, res.stderr
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert not sb.exists("/etc/cron.d/alice")
    assert sb.exists("/home/alice")
    assert sb.getpwnam("alice").home == "/home/alice"


# ---------------------------------------------------------------- hostile tree, interruption

def test_renumber_with_planted_links_in_tree(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    # a stray symlink is left alone (and not followed)
    # planted as root on the user's behalf (the user needs the setgid tools' group to
    # reach the tree; a subverted setgid tool has it)
    sb.sh("ln -s /etc/passwd {t}/alice/evil && chown -h alice {t}/alice/evil".format(t=TREE))
    res = run(sb, ["-u", "4242", "alice"])
    assert res.returncode == 0, res.stderr
    assert "unexpected entry" in res.stderr
    assert sb.lstat("/etc/passwd").st_uid == 0
    assert sb.lstat(TREE + "/alice/evil").st_uid == uid
    assert sb.lstat(TREE + "/alice/shadow").st_uid == 4242


def test_renumber_refused_when_shell_file_is_a_symlink(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    before = sb.read_bytes("/etc/passwd")
    sb.sh("rm -f {t}/alice/shell && ln -s /etc/passwd {t}/alice/shell && "
          "chown -h alice {t}/alice/shell".format(t=TREE))
    res = run(sb, ["-u", "4242", "alice"])
    assert res.returncode == 1
    assert sb.lstat("/etc/passwd").st_uid == 0
    assert sb.read_bytes("/etc/passwd") == before
    # handed back unchanged
    d = sb.lstat(TREE + "/alice")
    assert d.st_uid == uid and d.st_mode & 0o7777 == 0o2710
    assert sb.lstat(TREE + "/alice/shadow").st_uid == uid


def test_interrupted_rename_before_passwd_is_finished_by_a_rerun(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    # the state after step 3: taken away and under the reserved name
    sb.sh("chown root:root {t}/alice && chmod 700 {t}/alice && "
          "mv {t}/alice {t}/.usermod-l.alicia".format(t=TREE))
    res = run(sb, ["-l", "alicia", "alice"])
    assert res.returncode == 0, res.stderr
    st = sb.lstat(TREE + "/alicia")
    assert st.st_uid == uid and st.st_mode & 0o7777 == 0o2710
    assert not sb.exists(TREE + "/.usermod-l.alicia")
    assert verify(sb, "alicia", "alice-pw-1").returncode == 0


def test_interrupted_rename_after_passwd_is_finished_by_any_usermod(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("chown root:root {t}/alice && chmod 700 {t}/alice && "
          "mv {t}/alice {t}/.usermod-l.alicia && "
          "sed -i 's/^alice:x:/alicia:x:/' /etc/passwd".format(t=TREE))
    res = run(sb, ["-c", "again", "alicia"])
    assert res.returncode == 0, res.stderr
    st = sb.lstat(TREE + "/alicia")
    assert st.st_uid == uid and st.st_mode & 0o7777 == 0o2710
    assert verify(sb, "alicia", "alice-pw-1").returncode == 0


def test_interrupted_rename_after_passwd_is_finished_by_the_same_usermod(two):
    """The same `usermod -l alicia alice` again, once /etc/passwd says alicia: the directory
    reserved (a kill before the last rename) or renamed but still root's (a kill before it
    was handed back, mode already set) is finished; without such a leftover, alice is
    simply missing (exit 6)."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("chown root:root {t}/alice && chmod 700 {t}/alice && "
          "mv {t}/alice {t}/.usermod-l.alicia && "
          "sed -i 's/^alice:x:/alicia:x:/' /etc/passwd".format(t=TREE))
    res = run(sb, ["-l", "alicia", "alice"])
    assert res.returncode == 0, res.stderr
    assert "finished the interrupted rename" in res.stderr
    st = sb.lstat(TREE + "/alicia")
    assert st.st_uid == uid and st.st_mode & 0o7777 == 0o2710
    assert not sb.exists(TREE + "/.usermod-l.alicia")
    sb.sh("chown root:root {t}/alicia".format(t=TREE))
    assert run(sb, ["-l", "alicia", "alice"]).returncode == 0
    st = sb.lstat(TREE + "/alicia")
    assert st.st_uid == uid and st.st_mode & 0o7777 == 0o2710
    assert verify(sb, "alicia", "alice-pw-1").returncode == 0
    res = run(sb, ["-l", "alicia", "alice"])
    assert res.returncode == 6 and "user 'alice' does not exist" in res.stderr


def test_classic_account_lock_in_etc_shadow(sb):
    sb.add_classic_user("carol", password="carol-pw")
    h = [l for l in sb.read("/etc/shadow").splitlines() if l.startswith("carol:")][0]
    h = h.split(":")[1]
    res = run(sb, ["-L", "-e", "2030-01-02", "carol"])
    assert res.returncode == 0, res.stderr
    f = [l for l in sb.read("/etc/shadow").splitlines() if l.startswith("carol:")][0]
    f = f.split(":")
    assert f[1] == "!" + h and f[7] == "21916"
    res = run(sb, ["-l", "caroline", "carol"])
    assert res.returncode == 0, res.stderr
    assert any(l.startswith("caroline:!") for l in sb.read("/etc/shadow").splitlines())


def test_renumber_does_not_cross_mounts(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    res = sb.sh("mkdir /home/alice/mnt && mount -t tmpfs tmpfs /home/alice/mnt && "
                "touch /home/alice/mnt/other && chown -R alice /home/alice/mnt", check=False)
    if res.returncode != 0:
        pytest.skip("cannot mount in the sandbox: %s" % res.stderr)
    try:
        res = run(sb, ["-u", "4242", "alice"])
        assert res.returncode == 0, res.stderr
        assert sb.lstat("/home/alice/mnt/other").st_uid == uid
        assert sb.lstat("/home/alice").st_uid == 4242
    finally:
        sb.sh("umount /home/alice/mnt", check=False)


def reown_caught_mid_walk(sb):
    """usermod -u 4242 alice, running, with her home taken away (root's) for the walk:
    /etc/passwd already has the new uid (the home is taken away before the commit)."""
    p = sb.popen([USERMOD, "-u", "4242", "alice"], stdout=-1, stderr=-1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None and \
            (sb.lstat("/home/alice").st_uid != 0 or sb.getpwnam("alice").uid != 4242):
        time.sleep(0.0005)
    if p.poll() is not None:
        pytest.skip("usermod finished before the home was seen taken away")
    return p


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_reown_leaves_the_home_handed_back(two, sig):
    """usermod -u takes the home away (root:root 0700) while it re-owns the files, after
    the global files are written.  A Ctrl-C (or a SIGTERM) during that walk used to kill
    it there: the home stayed root's 0700 for good, and the same usermod again (the uid
    already the new one) exited 0 without looking at it.  The walk now finishes first."""
    sb = two
    sb.sh("mkdir /home/alice/d && cd /home/alice/d && seq 1 20000 | xargs touch && "
          "chown -R alice:alice /home/alice && chmod 750 /home/alice")
    p = reown_caught_mid_walk(sb)
    os.killpg(p.pid, sig)
    p.communicate(timeout=60)
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_mode & 0o7777) == (4242, 0o750), (st.st_uid, oct(st.st_mode))
    assert sb.lstat("/home/alice/d").st_uid == 4242
    assert sb.lstat("/home/alice/d/20000").st_uid == 4242
    assert sb.getpwnam("alice").uid == 4242


def test_signal_during_the_commit_still_reowns_the_home(two):
    """A Ctrl-C (here a SIGTERM strace sends as usermod -u enters a rename of the commit)
    waits while the global files are written, and was delivered as soon as the signals
    were given back: after the commit, before the home's files were re-owned.  They kept
    the old uid, and the same usermod again (the uid already the new one) found nothing
    to finish.  The signal now waits for the re-own too."""
    sb = two
    old = sb.getpwnam("alice").uid
    sb.sh("mkdir /home/alice/d && touch /home/alice/d/f && chown -R alice:alice /home/alice")
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=renameat2",
                  "-e", "inject=renameat2:signal=SIGTERM:when=1", "--",
                  USERMOD, "-u", "4242", "alice"], check=False)
    assert sb.getpwnam("alice").uid == 4242, res
    assert sb.lstat("/home/alice").st_uid == 4242, res
    assert sb.lstat("/home/alice/d/f").st_uid == 4242, (old, res)
    assert res.returncode == -signal.SIGTERM, res       # then it ends as asked


def test_kill_during_reown_is_finished_by_a_rerun(two):
    """SIGKILL while usermod -u re-owns the home (taken away: root:root 0700), after the
    global files have the new uid.  The same usermod again found the uid already 4242,
    did nothing and exited 0: the home stayed root's 0700 for good and half its files
    kept the old uid.  Now the rerun finishes the walk and hands the home back."""
    sb = two
    old = sb.getpwnam("alice").uid
    sb.sh("mkdir /home/alice/d && cd /home/alice/d && seq 1 20000 | xargs touch && "
          "chown -R alice:alice /home/alice && chmod 750 /home/alice && "
          ": >/var/mail/alice && chown alice:mail /var/mail/alice")
    p = reown_caught_mid_walk(sb)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    assert sb.getpwnam("alice").uid == 4242
    assert sb.lstat("/home/alice").st_uid == 0
    res = run(sb, ["-u", "4242", "alice"])
    assert res.returncode == 0, res.stderr
    assert "finishing the interrupted change of owner of /home/alice" in res.stderr
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (4242, sb.getpwnam("alice").gid,
                                                          0o750)
    left = [n for n in os.listdir(sb.root + "/home/alice/d")
            if sb.lstat("/home/alice/d/" + n).st_uid == old]
    assert left == []
    assert sb.lstat("/var/mail/alice").st_uid == 4242
    # and a rerun with nothing left to do says nothing
    res = run(sb, ["-u", "4242", "alice"])
    assert (res.returncode, res.stderr) == (0, "")


def test_kill_during_reown_then_another_uid(two):
    """SIGKILL while usermod -u 4242 re-owns the home, then usermod -u 5555 (not the same
    command again).  The record of the killed run named only the files' old uid: the
    second run re-owned those to 5555 and left every file the killed run had already
    given 4242 with 4242, a uid no account has any more, whose next owner would get
    alice's files.  The interrupted run's uid (the account's before this run) is
    re-owned as well."""
    sb = two
    old = sb.getpwnam("alice").uid
    sb.sh("mkdir /home/alice/d && cd /home/alice/d && seq 1 20000 | xargs touch && "
          "chown -R alice:alice /home/alice && chmod 750 /home/alice")
    p = reown_caught_mid_walk(sb)
    # let the walk give some files 4242 before it is killed
    time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    if sb.lstat("/home/alice").st_uid != 0:
        pytest.skip("usermod finished before it was killed")
    owners = {sb.lstat("/home/alice/d/" + n).st_uid
              for n in os.listdir(sb.root + "/home/alice/d")}
    if 4242 not in owners:
        pytest.skip("killed before the walk re-owned any file")
    res = run(sb, ["-u", "5555", "alice"])
    assert res.returncode == 0, res.stderr
    assert "finishing the interrupted change of owner of /home/alice" in res.stderr
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_mode & 0o7777) == (5555, 0o750)
    left = sorted({sb.lstat("/home/alice/d/" + n).st_uid
                   for n in os.listdir(sb.root + "/home/alice/d")})
    assert left == [5555], "files left with uids %s (was %d)" % (left, old)


def kill_at_rename(sb, args, when):
    """usermod ARGS killed (SIGKILL) on entering its WHEN-th renameat2."""
    return sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=renameat2",
                   "-e", "inject=renameat2:signal=SIGKILL:when=%d" % when, "--",
                   USERMOD] + args, check=False)


def test_left_taken_home_is_not_finished_for_another_account(two):
    """bob shares alice's home.  usermod -u 4242 alice killed in its commit left the home
    root's 0700 with its record (alice's old uid).  A usermod that works on bob's home
    (-g) found the record, took its old uid for bob's and "finished" it: every file of
    alice's, and the home itself, went to bob.  The record now names the uid it gives
    too, and only the account that has one of the two finishes it; another account's
    usermod leaves the home alone, and alice's own hands it back."""
    sb = two
    alice, bob = sb.getpwnam("alice"), sb.getpwnam("bob")
    sb.sh("touch /home/alice/f && chown -R alice:alice /home/alice && chmod 750 /home/alice")
    assert run(sb, ["-d", "/home/alice", "bob"]).returncode == 0
    res = kill_at_rename(sb, ["-u", "4242", "alice"], 1)
    assert res.returncode != 0, res
    assert sb.lstat("/home/alice").st_uid == 0
    res = run(sb, ["-g", str(bob.gid), "bob"])
    assert sb.lstat("/home/alice").st_uid != bob.uid, res.stderr
    assert sb.lstat("/home/alice/f").st_uid != bob.uid, res.stderr
    uid = sb.getpwnam("alice").uid
    res = run(sb, ["-u", "4242", "alice"])
    assert res.returncode == 0, res.stderr
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_mode & 0o7777) == (4242, 0o750), (uid, res.stderr)
    assert sb.lstat("/home/alice/f").st_uid == 4242


def test_d_m_rerun_after_a_killed_u_d_m_hands_the_home_back(two):
    """usermod -u 4242 -d /home/alice2 -m alice killed in its commit (after the rename):
    the home at /home/alice2, root's 0700 and marked, /etc/passwd as before.  The rerun
    `usermod -d /home/alice2 -m alice` said it finished the move and named the new home,
    but only looked for a mark at the old path: the home stayed root's 0700, alice locked
    out of it.  It now finishes the interrupted change of owner too (here: hands the
    home back as it was)."""
    sb = two
    alice = sb.getpwnam("alice")
    sb.sh("touch /home/alice/f && chown -R alice:alice /home/alice && chmod 750 /home/alice")
    res = kill_at_rename(sb, ["-u", "4242", "-d", "/home/alice2", "-m", "alice"], 2)
    assert res.returncode != 0, res
    if sb.getpwnam("alice").home != "/home/alice":
        pytest.skip("killed after the commit")
    assert sb.lstat("/home/alice2").st_uid == 0
    res = run(sb, ["-d", "/home/alice2", "-m", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").home == "/home/alice2"
    st = sb.lstat("/home/alice2")
    assert (st.st_uid, st.st_mode & 0o7777) == (alice.uid, 0o750), res.stderr
    assert sb.lstat("/home/alice2/f").st_uid == alice.uid


def test_reown_without_a_record_says_so(two):
    """usermod -u marks the home it takes away (trusted.hardened-shadow.home-taken), so
    that a run killed half-way is finished by the next one.  On a file system without
    trusted attributes (here: fsetxattr fails as there) the mark failed without a word,
    and a kill then left the home root's 0700 with nothing to finish it.  usermod still
    re-owns the home (shadow-utils does, and refusing would make -u impossible for homes
    on NFS), and says in one line what a kill would leave."""
    sb = two
    sb.sh("touch /home/alice/f && chown -R alice:alice /home/alice")
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsetxattr",
                  "-e", "inject=fsetxattr:error=EOPNOTSUPP", "--",
                  USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "usermod: warning: cannot record the change of owner on /home/alice: Operation not "
        "supported; if usermod is killed before it ends, the home stays root's 0700 and "
        "running it again does not finish it"], res.stderr
    assert sb.lstat("/home/alice").st_uid == 4242
    assert sb.lstat("/home/alice/f").st_uid == 4242


# ---------------------------------------------------------------- -u: the mail spool

VICTIM = "/var/lib/hs-victim"


def plant_spool(sb, kind):
    """/var/mail/alice as whoever can write the mail directory leaves it (group mail on
    Debian): a hard link to a root file (root makes it: the host keeps
    fs.protected_hardlinks=1), a symlink to it, or a second link to a file of alice's."""
    sb.write(VICTIM, "secret\n", mode=0o600)
    if kind == "hardlink":
        sb.sh("ln %s /var/mail/alice" % VICTIM)
    elif kind == "symlink":
        sb.sh("ln -s %s /var/mail/alice" % VICTIM)
    else:
        sb.write("/var/mail/alice", "From x\n", mode=0o600, uid=sb.getpwnam("alice").uid)
        sb.sh("ln /var/mail/alice /var/lib/hs-second-link")


@pytest.mark.parametrize("args", [["-u", "4242"], ["-l", "alice2"]])
@pytest.mark.parametrize("kind", ["hardlink", "symlink", "two-links"])
def test_planted_spool_left_alone(two, kind, args):
    """usermod -u checked /var/mail/alice with fstatat, then changed the owner by name
    with no link count check: a file of alice's with a second link elsewhere was given
    away, and a symlink or another file was left without a word.  Now the spool is
    opened (O_PATH|O_NOFOLLOW), checked (regular, the user's, one link) and re-owned or
    linked under the new name through that fd; anything else is left, in one line
    naming it."""
    sb = two
    old = sb.getpwnam("alice").uid
    plant_spool(sb, kind)
    before = sb.lstat("/var/mail/alice")
    res = run(sb, args + ["alice"])
    assert res.returncode == 0, res.stderr
    st = sb.lstat(VICTIM)
    assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o600)
    assert sb.read(VICTIM) == "secret\n"
    after = sb.lstat("/var/mail/alice")
    assert (after.st_ino, after.st_uid) == (before.st_ino, before.st_uid)
    assert not sb.exists("/var/mail/alice2")
    if kind == "two-links":
        assert after.st_uid == old
    said = [l for l in res.stderr.splitlines() if "/var/mail/alice" in l]
    assert len(said) == 1 and said[0].startswith("usermod: leaving mail spool "
                                                 "/var/mail/alice as it is: "), res.stderr


def test_login_renames_the_spool(two):
    """usermod -l renames MAIL_DIR/USER as Debian's shadow-utils usermod does (it links
    the new name and unlinks the old); with -u as well the spool gets the new owner."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.write("/var/mail/alice", "From x\n", mode=0o660, uid=uid,
             gid=sb.getgrnam("mail")[1])
    ino = sb.lstat("/var/mail/alice").st_ino
    res = run(sb, ["-l", "alice2", "-u", "4242", "alice"])
    assert (res.returncode, res.stderr) == (0, "")
    assert not sb.exists("/var/mail/alice")
    st = sb.lstat("/var/mail/alice2")
    assert (st.st_ino, st.st_uid, st.st_nlink, st.st_mode & 0o7777) == (ino, 4242, 1, 0o660)
    # a spool under the new name already: both stay, and it is said
    sb.write("/var/mail/alice3", "other\n", mode=0o600)
    res = run(sb, ["-l", "alice3", "alice2"])
    assert res.returncode == 0, res.stderr
    assert res.stderr == ("usermod: failed to rename mailbox /var/mail/alice2 to alice3: "
                          "File exists\n")
    assert sb.read("/var/mail/alice3") == "other\n"
    assert sb.lstat("/var/mail/alice2").st_ino == ino


SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = b"/var/mail/alice", b"/var/mail/.decoy"
os.write(1, b"go\\n")
while True:
    libc.renameat2(-100, a, -100, b, 2)     # RENAME_EXCHANGE
"""


def test_uid_spool_swapped_under_usermod(two):
    """The name swapped between the check and the change of owner: a process that can
    write the mail directory exchanges /var/mail/alice (alice's own spool) with a hard
    link to a root file, again and again.  Checked by name and chowned by name, the root
    file was given to alice within some 30 runs; through the opened fd it never is."""
    sb = two
    sb.write(VICTIM, "secret\n", mode=0o600)
    sb.write("/var/mail/alice", "", mode=0o660, uid=sb.getpwnam("alice").uid)
    sb.sh("ln %s /var/mail/.decoy" % VICTIM)
    uids = [4242, sb.getpwnam("alice").uid]
    swapper = sb.popen(["/usr/bin/python3", "-c", SWAPPER], stdout=-1)
    try:
        assert swapper.stdout.readline() == b"go\n"
        for i in range(200):
            res = run(sb, ["-u", str(uids[i % 2]), "alice"])
            assert res.returncode == 0, res.stderr
            assert sb.lstat(VICTIM).st_uid == 0, "run %d gave the root file away" % i
    finally:
        os.killpg(swapper.pid, signal.SIGKILL)
        swapper.wait()


def test_home_without_move(two):
    sb = two
    res = run(sb, ["-d", "/home/elsewhere", "alice"])
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("alice").home == "/home/elsewhere"
    assert sb.exists("/home/alice") and not sb.exists("/home/elsewhere")


# ---------------------------------------------------------------- subordinate ids

SUB = "alice:100000:65536\nbob:165536:65536\n1000:500000:10\n"


def with_subids(sb):
    sb.write("/etc/subuid", SUB)
    sb.write("/etc/subgid", SUB)


def test_subid_ranges_added_and_removed(two):
    """-v/-w add a range unless the user's ranges hold it already; -V/-W cut it out of
    them (a range inside goes, an end is cut, a range around it is split, the upper part
    appended); removals come before additions; other owners are never touched."""
    sb = two
    with_subids(sb)
    res = run(sb, ["-v", "300000-300009", "-w", "400000-400000", "alice"])
    assert res.returncode == 0, res.stderr
    assert lines(sb, "/etc/subuid") == SUB.splitlines() + ["alice:300000:10"]
    assert lines(sb, "/etc/subgid") == SUB.splitlines() + ["alice:400000:1"]
    # held already (by one range, and by two adjacent ones): nothing changes
    before = sb.read_bytes("/etc/subuid")
    assert run(sb, ["-v", "100005-100010", "alice"]).returncode == 0
    assert run(sb, ["-v", "165535-165535", "alice"]).returncode == 0
    assert sb.read_bytes("/etc/subuid") == before
    # the start, the end, then the middle of 100000..165535
    assert run(sb, ["-V", "99990-100009", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid")[0] == "alice:100010:65526"
    assert run(sb, ["-V", "165000-170000", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid")[0] == "alice:100010:64990"
    assert run(sb, ["-V", "120000-120009", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid") == [
        "alice:100010:19990", "bob:165536:65536", "1000:500000:10", "alice:300000:10",
        "alice:120010:44990"]
    # two cuts in one call, the second in the part the first appended
    assert run(sb, ["-V", "130000-130009", "-V", "140000-140009", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid")[-3:] == [
        "alice:120010:9990", "alice:130010:9990", "alice:140010:24990"]
    # removed first, then added again: the range stays (at the end)
    assert run(sb, ["-V", "300000-300009", "-v", "300000-300009", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid")[-1] == "alice:300000:10"
    # a whole range, and one that matches nothing
    assert run(sb, ["-W", "400000-400000", "-W", "1-5", "alice"]).returncode == 0
    assert lines(sb, "/etc/subgid") == SUB.splitlines()
    # the largest range the file can hold, at the very top
    assert run(sb, ["-w", "4294967294-4294967295", "bob"]).returncode == 0
    assert lines(sb, "/etc/subgid")[-1] == "bob:4294967294:2"
    assert run(sb, ["-v", "1-2", "nosuch"]).returncode == 6
    assert "alice:100010:19990" in lines(sb, "/etc/subuid")


BAD_RANGES = ["10-5", "abc", "5", "-5-10", "5-10x", "0x10-0x20", " 5-10", "5-10 ", "+5-10",
              "05-10", "5-010", "5--10", "5-", "-", "", "5-10-15", "4294967295-4294967295",
              "1-4294967295", "0-4294967296", "100-18446744073709551616",
              "18446744073709551615-18446744073709551615", "5\n-10"]


def test_subid_bad_ranges_refused(two):
    sb = two
    with_subids(sb)
    before = (sb.read_bytes("/etc/subuid"), sb.read_bytes("/etc/subgid"))
    for opt, what in (("-v", "uid"), ("-V", "uid"), ("-w", "gid"), ("-W", "gid")):
        for bad in BAD_RANGES:
            res = run(sb, [opt, bad, "alice"])
            assert res.returncode == 3, (opt, bad, res.stderr)
            assert "invalid subordinate %s range" % what in res.stderr, res.stderr
    # one bad range among good ones: nothing is done
    assert run(sb, ["-v", "1-2", "-v", "3-1", "alice"]).returncode == 3
    assert (sb.read_bytes("/etc/subuid"), sb.read_bytes("/etc/subgid")) == before


def test_subid_options_need_the_file(two):
    sb = two
    sb.write("/etc/subuid", SUB)
    sb.sh("rm -f /etc/subgid")
    res = run(sb, ["-w", "1-2", "alice"])
    assert res.returncode == 2 and "/etc/subgid does not exist" in res.stderr, res.stderr
    assert not sb.exists("/etc/subgid")
    assert run(sb, ["-v", "1-2", "alice"]).returncode == 0
    assert lines(sb, "/etc/subuid")[-1] == "alice:1:2"


def test_rename_moves_subids(two):
    """-l: the user's ranges follow the new name (shadow-utils leaves them under the old
    one); ranges owned by the uid as a number, and other users' ranges, stay.  A range added
    in the same call ends up under the new name."""
    sb = two
    with_subids(sb)
    sb.write("/etc/subuid", SUB + "alice:700000:5\n")
    res = run(sb, ["-l", "alicia", "-v", "800000-800001", "alice"])
    assert res.returncode == 0, res.stderr
    assert lines(sb, "/etc/subuid") == [
        "alicia:100000:65536", "bob:165536:65536", "1000:500000:10", "alicia:700000:5",
        "alicia:800000:2"]
    assert lines(sb, "/etc/subgid") == ["alicia:100000:65536", "bob:165536:65536",
                                        "1000:500000:10"]
    # backups hold the previous state
    assert sb.read("/etc/subgid-") == SUB


@pytest.mark.parametrize("how", ["fuse-EACCES", "fuse-ENOTCONN"])
def test_uid_home_that_refuses_root_is_said(two, how):
    """alice's home is her own FUSE file system, which refuses root the stat of it (no
    allow_other: EACCES; its daemon dead: ENOTCONN).  usermod -u changed the uid and
    exited 12 without a word: open_home() gave the stat's error no reason to say.  It
    says, in one line, that the files were not re-owned and why (a home mounted on and
    readable, an administrator's, is re-owned, as shadow-utils does).  With allow_other
    the kernel's cache shows whose mount it is, and it is named as hers, unasked."""
    sb = two
    uid = sb.getpwnam("alice").uid
    mount_on_home(sb, how, "/home/alice", uid)
    try:
        res = run(sb, ["-u", "4242", "alice"])
    finally:
        sb.sh("umount /home/alice", check=False)
    assert sb.getpwnam("alice").uid == 4242
    assert res.returncode == 12, res
    why = ("it is a mount point that cannot be examined" if how == "fuse-EACCES"
           else "a file system its user mounted is there")
    assert res.stderr.splitlines() == [
        "usermod: not changing the owner of files in /home/alice: " + why], res


def test_uid_home_that_is_the_root_directory_is_not_reowned(two):
    """alice's home is / (a service account's habit).  usermod -u refuses to re-own
    every file of her uid on the system, as before, but said that / is "not an
    absolute path without '..'"; it now says what it is."""
    sb = two
    sb.sh("echo mine >/srv-alice && chown alice /srv-alice")
    run(sb, ["-d", "/", "alice"])
    res = run(sb, ["-u", "4242", "alice"])
    assert sb.getpwnam("alice").uid == 4242
    assert res.returncode == 12, res
    assert res.stderr.splitlines() == [
        "usermod: not changing the owner of files in /: it is the root directory"], res
    assert sb.lstat("/srv-alice").st_uid != 4242
