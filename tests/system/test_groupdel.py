"""groupdel in a throwaway root: both lines gone and every other line byte for byte, a
user's primary group refused (exit 8) unless -f, the per-user tree's own groups always
refused, a group without a gshadow line, not found / usage / non-root, hostile names, and
the messages next to Debian's groupdel.  Also: a groupdel racing a useradd -g of the same
group never leaves a user whose primary group is gone.

One sandbox per module; every test starts from the same account files."""


import pytest

import grouptools
import sandbox

GROUPDEL = "/usr/sbin/groupdel"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/groupdel"
USERADD = "/usr/sbin/useradd"     # ours: checks the group under the locks
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow")


def set_up(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1", group="users")
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5000", "-U", "alice,bob", "proj"])
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5001", "other"])


msb, sb = grouptools.fixtures(set_up, FILES, tree=True)


run = grouptools.runner(GROUPDEL)


def snapshot(sb):
    return grouptools.snapshot(sb, FILES)


def without(data, name):
    return b"".join(l for l in data.splitlines(True) if not l.startswith(name.encode() + b":"))


def test_delete(sb):
    before = snapshot(sb)
    r = run(sb, ["proj"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    for p in ("/etc/group", "/etc/gshadow"):
        assert sb.read_bytes(p) == without(before[p], "proj"), p
        assert sb.read_bytes(p + "-") == before[p]
    assert sb.read_bytes("/etc/passwd") == before["/etc/passwd"]
    assert sb.getgrnam("proj") is None
    assert any("groupdel" in l and "group 'proj' removed" in l for l in sb.syslog())


def test_primary_group_refused_unless_force(sb):
    before = snapshot(sb)
    r = run(sb, ["alice"])
    assert (r.returncode, r.stderr) == (8, "groupdel: cannot remove the primary group of "
                                           "user 'alice'\n")
    r = run(sb, ["users"])
    assert (r.returncode, r.stderr) == (8, "groupdel: cannot remove the primary group of "
                                           "user 'bob'\n")
    assert snapshot(sb) == before
    r = run(sb, ["-f", "alice"])
    assert (r.returncode, r.stderr) == (0, "")
    assert sb.getgrnam("alice") is None
    # the user keeps the number
    assert sb.getpwnam("alice").gid == int(before["/etc/passwd"].decode().split(
        "\nalice:")[1].split(":")[2])
    assert any("primary group of user 'alice' (-f)" in l for l in sb.syslog())


def test_without_gshadow_line(sb):
    gs = without(sb.read_bytes("/etc/gshadow"), "other")
    sb.write("/etc/gshadow", gs, mode=0o640, gid=sb.getgrnam("shadow")[1])
    assert run(sb, ["other"]).returncode == 0
    assert sb.getgrnam("other") is None
    assert sb.read_bytes("/etc/gshadow") == gs


def test_tree_groups_refused(sb):
    # without a tree they are ordinary groups; with one they carry it
    sb.sh("mkdir -m 0710 /etc/hardened-shadow")
    before = snapshot(sb)
    for g in ("hardened-shadow", "hardened-shadow-auth"):
        for args in ([g], ["-f", g]):
            r = run(sb, args)
            assert r.returncode == 8 and "the per-user tree" in r.stderr
    assert snapshot(sb) == before


def test_refusals(sb):
    before = snapshot(sb)
    r = run(sb, ["nosuch"])
    assert (r.returncode, r.stderr) == (6, "groupdel: group 'nosuch' does not exist\n")
    for bad, shown in (("a:b", "a:b"), ("a\nb", "a\\x0ab"), ("x" * 33, "x" * 33),
                       ("\x1b[2J", "\\x1b[2J")):
        r = run(sb, ["--", bad])
        assert (r.returncode, r.stderr) == (6, "groupdel: group '%s' does not exist\n" % shown)
    for args in ([], ["a", "b"], ["--bogus", "proj"]):
        r = run(sb, args)
        assert r.returncode == 2 and "Usage: groupdel [options] GROUP\n" in r.stderr
    for opt in ("-R", "-P"):
        r = run(sb, [opt, "/srv", "proj"])
        assert r.returncode == 2 and "not supported" in r.stderr
    r = run(sb, ["proj"], user="alice")
    assert (r.returncode, r.stderr) == (10, "groupdel: Permission denied.\n")
    assert snapshot(sb) == before
    r = run(sb, ["--help"])
    assert r.returncode == 0 and "-f, --force" in r.stdout


@pytest.mark.parametrize("args", [["nosuch"], ["alice"], ["users"], []])
def test_messages_like_debian(sb, args):
    ours, theirs = grouptools.ours_and_debians(sb, run, args, CLASSIC, snapshot)
    assert ours.stderr.splitlines()[0] == theirs.stderr.splitlines()[0]


def test_race_with_useradd(sb):
    """groupdel of a group while our useradd -g makes it someone's primary group: either the
    user was added first and groupdel refuses, or the group went first and useradd fails;
    never a user whose primary group is gone.  (Debian's useradd looks the group up
    before it takes the locks, so it can lose this race against any groupdel.)"""
    for i in range(4):
        sb.run([grouptools.CLASSIC_GROUPADD, "race%d" % i])
    script = " ".join("(%s race%d; echo D%d:$?) & (%s -M -g race%d ru%d 2>/dev/null; "
                      "echo U%d:$?) &" % (GROUPDEL, i, i, USERADD, i, i, i)
                      for i in range(4)) + " wait"
    status = dict(x.split(":") for x in sb.sh(script).stdout.split())
    for i in range(4):
        user = sb.getpwnam("ru%d" % i)
        group = sb.getgrnam("race%d" % i)
        if user is not None:
            assert group is not None and group[1] == user.gid, (i, status)
            assert status["D%d" % i] == "8"
        else:
            assert group is None and status["D%d" % i] == "0"
