"""groupmems in a throwaway root: root's -a -d -p -l with -g (members and administrators
in /etc/gshadow follow, as in shadow-utils, and /etc/group and /etc/gshadow agree after
every change), its exit codes (1 usage, 3 not root, 5 group name is not the user name,
6 not a member, 7 already a member, 8 no such user, 9 no such group), -l's exact output next
to Debian's, and non-root callers: a user lists their own group (and others with -g), and
is told why they may not change members.

One sandbox per module; every test starts from the same account files."""


import pytest

import grouptools
import sandbox

GROUPMEMS = "/usr/sbin/groupmems"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/groupmems"
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow")


def set_up(sb):
    for u in ("alice", "bob", "carol"):
        sb.add_classic_user(u, password=u + "-pw-1")
    sb.add_classic_user("dave", password="dave-pw-1", group="users")
    sb.run([grouptools.CLASSIC_GROUPADD, "-g", "5000", "proj"])
    sb.run(["gpasswd", "-M", "alice,bob", "-A", "bob", "proj"])
    sb.run(["gpasswd", "-M", "bob,carol", "alice"])


msb, sb = grouptools.fixtures(set_up, FILES)


run = grouptools.runner(GROUPMEMS)


def snapshot(sb):
    return grouptools.snapshot(sb, FILES)


def check_consistent(sb, names=("proj", "alice")):
    group, gshadow = grouptools.table(sb, "/etc/group"), grouptools.table(sb, "/etc/gshadow")
    for n in names:
        assert group[n][1] == "x" and group[n][3] == gshadow[n][3], (group[n], gshadow[n])


def test_root_add_delete_purge(sb):
    r = run(sb, ["-g", "proj", "-a", "carol"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert grouptools.table(sb, "/etc/group")["proj"][3] == "alice,bob,carol"
    check_consistent(sb)
    # -d: a member who also administers the group stops doing both
    assert run(sb, ["--group", "proj", "--delete", "bob"]).returncode == 0
    assert grouptools.table(sb, "/etc/gshadow")["proj"] == ["proj", "!", "", "alice,carol"]
    check_consistent(sb)
    assert run(sb, ["-g", "proj", "-a", "bob"]).returncode == 0
    assert run(sb, ["-g", "proj", "-p"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["proj"][3] == ""
    assert grouptools.table(sb, "/etc/gshadow")["proj"] == ["proj", "!", "", ""]


def test_list_like_debian(sb):
    for args in (["-g", "proj", "-l"], ["-l", "-g", "alice"], ["-l", "-g", "users"]):
        ours, theirs = run(sb, args), run(sb, args, prog=CLASSIC)
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout)
    assert run(sb, ["-g", "proj", "-l"]).stdout == "alice  bob \n"
    assert run(sb, ["-g", "users", "-l"]).stdout == ""


@pytest.mark.parametrize("args,status,message", [
    (["-g", "proj", "-a", "alice"], 7, "groupmems: user 'alice' is already a member of 'proj'\n"),
    (["-g", "proj", "-a", "nosuch"], 8, "groupmems: user 'nosuch' does not exist\n"),
    (["-g", "proj", "-a", "a:b"], 8, "groupmems: user 'a:b' does not exist\n"),
    (["-g", "proj", "-d", "carol"], 6, "groupmems: user 'carol' is not a member of 'proj'\n"),
    (["-g", "proj", "-d", "a\nb"], 6, "groupmems: user 'a\\x0ab' is not a member of 'proj'\n"),
    (["-g", "nosuch", "-a", "carol"], 9, "groupmems: group 'nosuch' does not exist in "
                                         "/etc/group\n"),
    (["-g", "nosuch", "-l"], 9, "groupmems: group 'nosuch' does not exist in /etc/group\n"),
    (["-g", "proj", "-a", "carol", "-d", "bob"], 1, "Usage: groupmems [options] [action]\n"),
    (["-g", "proj", "-l", "-p"], 1, "Usage: groupmems [options] [action]\n"),
    (["-g", "proj", "extra"], 1, "Usage: groupmems [options] [action]\n"),
    (["-R", "/srv", "-l"], 1, "not supported"),
])
def test_refusals(sb, args, status, message):
    before = snapshot(sb)
    r = run(sb, args)
    assert (r.returncode, r.stderr) == (status, message) or \
        (r.returncode == status and message in r.stderr), r
    assert snapshot(sb) == before


@pytest.mark.parametrize("args", [["-g", "proj", "-l"], ["-g", "nosuch", "-l"],
                                  ["-g", "proj", "-a", "nosuch"], ["-a", "x", "-d", "y"]])
def test_messages_like_debian(sb, args):
    ours, theirs = run(sb, args), run(sb, args, prog=CLASSIC)
    assert ours.returncode == theirs.returncode
    assert ours.stderr.splitlines()[:1] == theirs.stderr.splitlines()[:1]


def test_users(sb):
    before = snapshot(sb)
    # alice's own user group
    r = run(sb, ["-l"], user="alice")
    assert (r.returncode, r.stdout) == (0, "bob  carol \n")
    r = run(sb, ["-l", "-g", "proj"], user="carol")
    assert (r.returncode, r.stdout) == (0, "alice  bob \n")
    # changes are root's
    r = run(sb, ["-a", "dave"], user="alice")
    assert r.returncode == 3
    assert r.stderr.startswith("groupmems: Permission denied: only root may change")
    assert "gpasswd" in r.stderr
    r = run(sb, ["-g", "proj", "-a", "dave"], user="bob")
    assert (r.returncode, r.stderr) == (3, "groupmems: only root can use the -g/--group "
                                           "option\n")
    # dave's primary group is users: not a user group
    r = run(sb, ["-l"], user="dave")
    assert (r.returncode, r.stderr) == (5, "groupmems: your groupname does not match your "
                                           "username\n")
    assert snapshot(sb) == before
