"""groupmod in a throwaway root: -g (the users whose primary group it is follow in
/etc/passwd), -n (both files, the gshadow line keeps its password and administrators), -o,
-p, -U and -a -U (the same member list in /etc/group and /etc/gshadow, which Debian's
groupmod does not keep), a group without a gshadow line, the per-user tree's own groups,
exit codes and messages next to Debian's groupmod, hostile input, a non-root caller, and a
full disk in the middle of a change: nothing lost, nothing half written, a clear error.

One sandbox per module; every test starts from the same account files."""

import os

import pytest

import grouptools
import sandbox

GROUPMOD = "/usr/sbin/groupmod"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/groupmod"
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow")
H = "$6$saltsalt$" + "B" * 86


def set_up(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.add_classic_user("carol", password="carol-pw-1", group="users")
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5000", "-U", "alice", "proj"])
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5001", "other"])
    sb.run(["gpasswd", "-A", "bob", "proj"])
    sb.run(["gpasswd", "-M", "alice", "proj"])
    sb.run(["chgpasswd", "-e"], input="proj:%s\n" % H)


msb, sb = grouptools.fixtures(set_up, FILES, tree=True)


run = grouptools.runner(GROUPMOD)


def snapshot(sb):
    return grouptools.snapshot(sb, FILES)


def other_lines(sb, path, names):
    return [l for l in sb.read(path).splitlines() if l.split(":")[0] not in names]


def test_set_up_state(sb):
    assert grouptools.table(sb, "/etc/group")["proj"] == ["proj", "x", "5000", "alice"]
    assert grouptools.table(sb, "/etc/gshadow")["proj"] == ["proj", H, "bob", "alice"]


def test_gid_primary_users_follow(sb):
    alice = sb.getpwnam("alice")
    bob = sb.getpwnam("bob")
    passwd_before = sb.read("/etc/passwd")
    r = run(sb, ["-g", "6000", "alice"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert grouptools.table(sb, "/etc/group")["alice"][2] == "6000"
    assert sb.getpwnam("alice").gid == 6000
    assert sb.getpwnam("bob").gid == bob.gid
    # only alice's gid field changed in /etc/passwd
    new = sb.read("/etc/passwd").replace("alice:x:%d:6000:" % alice.uid,
                                         "alice:x:%d:%d:" % (alice.uid, alice.gid))
    assert new == passwd_before
    assert sb.read("/etc/passwd-") == passwd_before
    # carol's primary group is users (100): renumbering it moves carol only
    assert run(sb, ["-g", "6100", "users"]).returncode == 0
    assert sb.getpwnam("carol").gid == 6100
    assert sb.getpwnam("bob").gid == bob.gid


def test_gid_duplicate(sb):
    before = snapshot(sb)
    r = run(sb, ["-g", "5001", "proj"])
    assert (r.returncode, r.stderr) == (4, "groupmod: GID '5001' already exists\n")
    assert snapshot(sb) == before
    assert run(sb, ["-o", "-g", "5001", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"][2] == "5001"
    # the same gid again is nothing to do
    before = snapshot(sb)
    assert run(sb, ["-g", "5001", "proj"]).returncode == 0
    assert snapshot(sb) == before


def test_rename_both_files(sb):
    r = run(sb, ["-n", "project", "proj"])
    assert (r.returncode, r.stderr) == (0, "")
    group, gshadow = grouptools.table(sb, "/etc/group"), grouptools.table(sb, "/etc/gshadow")
    assert "proj" not in group and "proj" not in gshadow
    assert group["project"] == ["project", "x", "5000", "alice"]
    assert gshadow["project"] == ["project", H, "bob", "alice"]
    grouptools.check_consistent(sb, ["project"])
    # the line stays where it was
    names = [l.split(":")[0] for l in sb.read("/etc/group").splitlines()]
    assert names.index("project") == names.index("other") - 1


def test_rename_refusals(sb):
    before = snapshot(sb)
    r = run(sb, ["-n", "other", "proj"])
    assert (r.returncode, r.stderr) == (9, "groupmod: group 'other' already exists\n")
    for bad in ("a:b", "a\nb", "x" * 33, "-x", "..", "a b"):
        r = run(sb, ["-n", bad, "proj"])
        assert r.returncode == 3 and r.stderr.startswith("groupmod: invalid group name '")
        assert "\n" not in r.stderr[:-1]
    assert snapshot(sb) == before


def test_password(sb):
    h2 = "$y$j9T$salt$" + "C" * 43
    assert run(sb, ["-p", h2, "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"][1] == h2
    assert grouptools.table(sb, "/etc/group")["proj"][1] == "x"
    for bad in ("a:b", "x\n", "y" * 513):
        before = snapshot(sb)
        r = run(sb, ["-p", bad, "proj"])
        assert r.returncode == 3 and "invalid password" in r.stderr
        assert snapshot(sb) == before


def test_users_replace_and_append(sb):
    assert run(sb, ["-U", "bob,carol", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"][3] == "bob,carol"
    grouptools.check_consistent(sb, ["proj"])
    assert run(sb, ["-a", "-U", "alice,bob", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"][3] == "bob,carol,alice"
    grouptools.check_consistent(sb, ["proj"])
    # administrators are not members: -U leaves them alone
    assert grouptools.table(sb, "/etc/gshadow")["proj"][2] == "bob"
    assert run(sb, ["-U", "", "proj"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"][3] == ""
    grouptools.check_consistent(sb, ["proj"])
    before = snapshot(sb)
    for bad, shown in (("alice,nosuch", "nosuch"), ("a:b", "a:b"), ("alice\nx", "alice\\x0ax")):
        r = run(sb, ["-U", bad, "proj"])
        assert (r.returncode, r.stderr) == (10, "groupmod: Invalid member username %s\n" % shown)
        assert snapshot(sb) == before


def test_group_without_gshadow_line_gets_one(sb):
    gs = "".join(l + "\n" for l in other_lines(sb, "/etc/gshadow", ["other"]))
    sb.write("/etc/gshadow", gs, mode=0o640, gid=sb.getgrnam("shadow")[1])
    g = sb.read("/etc/group").replace("other:x:5001:", "other:%s:5001:" % H)
    sb.write("/etc/group", g)
    assert run(sb, ["-U", "bob", "other"]).returncode == 0
    # the password moved out of the world-readable /etc/group
    assert grouptools.table(sb, "/etc/group")["other"] == ["other", "x", "5001", "bob"]
    assert grouptools.table(sb, "/etc/gshadow")["other"] == ["other", H, "", "bob"]


def test_several_options_at_once(sb):
    r = run(sb, ["-n", "p2", "-g", "7000", "-a", "-U", "carol", "-p", "!", "proj"])
    assert r.returncode == 0, r.stderr
    assert grouptools.table(sb, "/etc/group")["p2"] == ["p2", "x", "7000", "alice,carol"]
    assert grouptools.table(sb, "/etc/gshadow")["p2"] == ["p2", "!", "bob", "alice,carol"]


def test_not_found_usage_non_root(sb):
    before = snapshot(sb)
    r = run(sb, ["-g", "7000", "nosuch"])
    assert (r.returncode, r.stderr) == (6, "groupmod: group 'nosuch' does not exist\n")
    r = run(sb, ["-g", "7000", "a:b"])
    assert r.returncode == 6
    for args in ([], ["-o", "proj"], ["a", "b"], ["--bogus", "proj"]):
        r = run(sb, args)
        assert r.returncode == 2 and "Usage: groupmod [options] GROUP\n" in r.stderr
    for opt in ("-R", "-P"):
        r = run(sb, [opt, "/srv", "-n", "x", "proj"])
        assert r.returncode == 2 and "not supported" in r.stderr
    r = run(sb, ["-n", "x", "proj"], user="alice")
    assert (r.returncode, r.stderr) == (10, "groupmod: Permission denied.\n")
    for bad in ("-1", "4294967295", "+7000", "0x10", "010", " 7000", "99999999999"):
        r = run(sb, ["-g", bad, "proj"])
        assert (r.returncode, r.stderr) == (3, "groupmod: invalid group ID '%s'\n" % bad)
    assert snapshot(sb) == before


def test_tree_groups_keep_name_and_gid(sb):
    sb.sh("mkdir -m 0710 /etc/hardened-shadow")
    before = snapshot(sb)
    for args in (["-n", "x"], ["-g", "7777"]):
        for g in ("hardened-shadow", "hardened-shadow-auth"):
            r = run(sb, args + [g])
            assert r.returncode == 10 and "belongs to the per-user tree" in r.stderr
    assert snapshot(sb) == before
    # members are still root's decision
    assert run(sb, ["-U", "alice", "hardened-shadow"]).returncode == 0


@pytest.mark.parametrize("args", [["-g", "5001", "proj"], ["-n", "other", "proj"],
                                  ["-n", "a:b", "proj"], ["-g", "x", "proj"],
                                  ["-g", "1", "nosuch"], ["-U", "nosuch", "proj"]])
def test_messages_like_debian(sb, args):
    ours, theirs = grouptools.ours_and_debians(sb, run, args, CLASSIC, snapshot)
    assert ours.stderr.replace("groupmod: Invalid member", "Invalid member") == theirs.stderr


def test_full_disk_changes_nothing(base):
    """/etc/gshadow is staged first and fits; /etc/group does not: the transaction stops
    before its commit point, both files are as before, the error names the file and the
    cause."""
    with sandbox.Sandbox(base, size="24m") as sb:
        sb.add_classic_user("alice", password="alice-pw-1")
        # a big /etc/group (~480 KB of long member lists) next to a small /etc/gshadow
        members = "alice," + ",".join("u%03d" % j for j in range(60))
        big = "".join("big%04d:x:%d:%s\n" % (i, 20000 + i, members) for i in range(1500))
        sb.write("/etc/group", sb.read("/etc/group") + big)
        sb.run([grouptools.CLASSIC_GROUPADD, "proj"])
        before = snapshot(sb)
        listing = sorted(os.listdir(sb.root + "/etc"))
        # fill the disk, then give back 400 KB: enough for the locks and gshadow, not
        # for /etc/group's backup and new copy
        sb.sh("dd if=/dev/zero of=/reserve bs=4k count=100 2>/dev/null; "
              "dd if=/dev/zero of=/fill bs=64k 2>/dev/null; "
              "dd if=/dev/zero of=/fill2 bs=4k 2>/dev/null; rm -f /reserve", check=False)
        r = run(sb, ["-n", "renamed", "proj"])
        assert r.returncode == 10
        assert "cannot write /etc/group" in r.stderr and "No space left on device" in r.stderr
        assert r.stderr.count("\n") == 1
        assert snapshot(sb) == before
        # no staged or temporary file, no journal, no lock left; at most the backups
        # were refreshed
        assert set(listing) <= set(os.listdir(sb.root + "/etc")) <= \
            set(listing) | {"gshadow-", "group-"}
        # with room again the same change goes through
        sb.run(["rm", "-f", "/fill", "/fill2"])
        assert run(sb, ["-n", "renamed", "proj"]).returncode == 0
        grouptools.check_consistent(sb, ["renamed"])
