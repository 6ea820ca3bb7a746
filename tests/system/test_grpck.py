"""grpck in a throwaway root: every option and exit code; the checks side by side with
Debian's grpck; hostile input (a ':' in a member name, invalid member names, duplicate
gids, a gshadow line without a group, a 100,000-member group, a member line over 64 KiB);
/etc/group <-> /etc/gshadow agreement and the repairs that restore it."""

import time

import pytest

GRPCK = "/usr/sbin/grpck"
DEB_GRPCK = "/usr/libexec/hs-test/shadow-utils/grpck"


def grpck(sb, *args, answers=None, user=None):
    return sb.run([GRPCK, *args], input=answers, check=False, user=user)


def deb_grpck(sb, *args):
    return sb.run([DEB_GRPCK, *args], check=False)


def add_users(sb, names, first_uid=2001):
    """Accounts written straight into the files (faster than useradd)."""
    script = ["set -e"]
    for i, n in enumerate(names):
        u = first_uid + i
        script.append(f"echo '{n}:x:{u}:{u}::/:/bin/sh' >> /etc/passwd;"
                      f"echo '{n}:!:19000::::::' >> /etc/shadow;"
                      f"echo '{n}:x:{u}:' >> /etc/group; echo '{n}:!::' >> /etc/gshadow")
    sb.run(["/bin/sh"], input="\n".join(script) + "\n")


def append(sb, path, text):
    st = sb.lstat(path)
    sb.write(path, sb.read(path) + text, mode=st.st_mode & 0o7777, uid=st.st_uid,
             gid=st.st_gid)


@pytest.fixture
def users(sb):
    add_users(sb, ["alice", "bob", "carol"])
    res = grpck(sb, "-r")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    return sb


def lines(sb, path):
    return sb.read(path).splitlines()


def entry(sb, path, name):
    found = [l for l in lines(sb, path) if l.split(":")[0] == name]
    assert len(found) <= 1, found
    return found[0] if found else None


# ---------------------------------------------------------------- options

def test_options_usage_and_exit_codes(users):
    sb = users
    res = grpck(sb, "--help")
    assert res.returncode == 0 and res.stdout.startswith("Usage: grpck [options] [group [gshadow]]")
    for opt in ("-r", "-s", "-S", "-R"):
        assert opt in res.stdout
    res = grpck(sb, "--version")
    assert res.returncode == 0 and "hardened-shadow" in res.stdout
    res = grpck(sb, "-x")
    assert res.returncode == 1 and "Usage:" in res.stderr
    res = grpck(sb, "-s", "-r")
    assert res.returncode == 1 and "grpck: -s and -r are incompatible" in res.stderr
    res = grpck(sb, "-R", "/mnt")
    assert res.returncode == 1 and "not supported" in res.stderr
    res = grpck(sb, "/etc/group", "/etc/gshadow", "/etc/extra")
    assert res.returncode == 1
    res = grpck(sb, "-r", user="alice")
    assert res.returncode == 3 and "Permission denied" in res.stderr
    res = grpck(sb, "-r", "/nonexistent")
    assert res.returncode == deb_grpck(sb, "-r", "/nonexistent").returncode == 3
    # clean: silent and 0, with and without the locks, and -q / -S accepted
    for args in ([], ["-r"], ["-q", "-r"], ["-S"]):
        res = grpck(sb, *args)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), args
    assert deb_grpck(sb, "-r").returncode == 0
    # a lock that cannot be taken: 4, nothing written
    sb.sh("mkdir /etc/group.lock; echo 'bad' >> /etc/group")
    before = sb.read_bytes("/etc/group")
    res = grpck(sb, answers="y\n")
    assert res.returncode == 4 and res.stderr.startswith("grpck: cannot lock /etc/group")
    assert sb.read_bytes("/etc/group") == before


def test_cannot_update_exits_5(users):
    sb = users
    sb.sh("echo 'bad' >> /etc/group; mount --bind -o ro /etc/group /etc/group")
    res = grpck(sb, answers="y\n")
    assert res.returncode == 5 and "/etc/group" in res.stderr
    # the line was not deleted: nothing may say the files were updated
    assert "updated" not in res.stdout and "bad" in sb.read("/etc/group")


# ---------------------------------------------------------------- the checks

HOSTILE_GROUP = ("g1:x:3001:alice,bob\n"          # bob missing from gshadow
                 "g2:x:3002:alice\n"              # gshadow lists bob too, and a ghost admin
                 "g3:x:3003:\n"                   # no gshadow line
                 "g4:x:3004:alice,nosuch\n"       # a member that is no user
                 "colon:x:3005:alice:bob\n"       # a ':' inside the member list
                 "g1:x:3006:\n")                  # duplicate name
HOSTILE_GSHADOW = ("g1:!::alice\n"
                   "g2:!:ghostadmin:alice,bob\n"
                   "g4:!::alice,nosuch\n"
                   "orphan:!::\n")                # a gshadow line without a group


def test_checks_match_debian(users):
    sb = users
    append(sb, "/etc/group", HOSTILE_GROUP)
    append(sb, "/etc/gshadow", HOSTILE_GSHADOW)
    ours, deb = grpck(sb, "-r"), deb_grpck(sb, "-r")
    assert ours.returncode == deb.returncode == 2
    common = [
        "'bob' is a member of the 'g1' group in /etc/group but not in /etc/gshadow",
        "'bob' is a member of the 'g2' group in /etc/gshadow but not in /etc/group",
        "no matching group file entry in /etc/gshadow",
        "add group 'g3' in /etc/gshadow? No",
        "group g4: no user nosuch",
        "delete member 'nosuch'? No",
        "delete line 'colon:x:3005:alice:bob'? No",
        "duplicate group entry",
        "delete line 'g1:x:3006:'? No",
        "shadow group g2: no administrative user ghostadmin",
        "delete administrative member 'ghostadmin'? No",
        "shadow group g4: no user nosuch",
        "no matching group file entry in /etc/group",
        "delete line 'orphan:!::'? No",
        "grpck: no changes",
    ]
    for line in common:
        assert line in deb.stdout.splitlines(), ("debian", line, deb.stdout)
        assert line in ours.stdout.splitlines(), ("ours", line, ours.stdout)
    # the ':' line: Debian's words, plus where and why
    assert any(l.startswith("invalid group file entry (line ") for l in
               ours.stdout.splitlines())
    # ours offers to repair the disagreement (a warning in both)
    assert "add 'bob' to the members of 'g1' in /etc/gshadow? No" in ours.stdout
    assert "delete member 'bob' from 'g2' in /etc/gshadow? No" in ours.stdout
    # -S silences the disagreement warnings, as Debian's
    s_ours, s_deb = grpck(sb, "-r", "-S"), deb_grpck(sb, "-r", "-S")
    for out in (s_ours.stdout, s_deb.stdout):
        assert "is a member of the" not in out
        assert "group g4: no user nosuch" in out


def test_repairs_make_the_files_agree(users):
    sb = users
    append(sb, "/etc/group", HOSTILE_GROUP)
    append(sb, "/etc/gshadow", HOSTILE_GSHADOW)
    untouched = [l for l in lines(sb, "/etc/group") if l.split(":")[0] in
                 ("root", "alice", "bob", "carol")]
    res = grpck(sb, answers="y\n" * 30)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1] == "grpck: the files have been updated"
    assert entry(sb, "/etc/group", "g1") == "g1:x:3001:alice,bob"     # first line kept
    assert entry(sb, "/etc/gshadow", "g1") == "g1:!::alice,bob"
    assert entry(sb, "/etc/gshadow", "g2") == "g2:!::alice"
    assert entry(sb, "/etc/gshadow", "g3") == "g3:!::"
    assert entry(sb, "/etc/group", "g4") == "g4:x:3004:alice"
    assert entry(sb, "/etc/gshadow", "g4") == "g4:!::alice"
    assert entry(sb, "/etc/group", "colon") is None
    assert entry(sb, "/etc/gshadow", "orphan") is None
    for l in untouched:
        assert l in lines(sb, "/etc/group")
    assert "colon:x:3005:alice:bob" in sb.read("/etc/group-")        # the backup
    res = grpck(sb, "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_read_only_report_not_written_never_exits_5(users):
    """-r writes nothing but its report: one that cannot be written (stdout on a full
    disk) is no "cannot update the group files" (5), but a check that did not reach
    anyone (3).  It used to go unnoticed (stdout is line buffered): exit 0."""
    sb = users
    append(sb, "/etc/group", "team:x:3010:alice\n")
    append(sb, "/etc/gshadow", "team:!::alice,bob\n")
    res = grpck(sb, "-r")
    assert res.returncode == 0 and "bob" in res.stdout, res     # a note only: exit 0
    res = sb.sh(f"{GRPCK} -r >/dev/full", check=False)
    assert res.returncode == 3, res
    assert res.stderr == "grpck: cannot write the report to standard output\n"


def test_invalid_member_names_are_offered_one_by_one(users):
    sb = users
    append(sb, "/etc/group", "g6:x:3006:ok user,alice,,bob\n")
    append(sb, "/etc/gshadow", "g6:!:bad\x1badmin:alice,bob\n")
    res = grpck(sb, "-r")
    out = res.stdout.splitlines()
    assert "group g6: invalid member name 'ok user'" in out
    assert "group g6: invalid member name ''" in out
    assert "shadow group g6: invalid administrative member name 'bad\\x1badmin'" in out
    assert not any(l.startswith("invalid group file entry") for l in out), out
    assert "\x1b" not in res.stdout
    res = grpck(sb, answers="y\n" * 10)
    assert res.returncode == 2
    assert entry(sb, "/etc/group", "g6") == "g6:x:3006:alice,bob"
    assert entry(sb, "/etc/gshadow", "g6") == "g6:!::alice,bob"
    assert grpck(sb, "-r").returncode == 0


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_unreadable_passwd_stops_before_any_member_check(users, kind):
    """The members are looked up in /etc/passwd: one that is a FIFO blocked grpck for ever
    (glibc's getpwnam opened it), and one that is a directory made every member look
    missing, so a "y" deleted them all.  Now: exit 3, the reason, nothing changed."""
    sb = users
    append(sb, "/etc/group", "team:x:3010:alice,bob\n")
    append(sb, "/etc/gshadow", "team:!::alice,bob\n")
    before = (sb.read_bytes("/etc/group"), sb.read_bytes("/etc/gshadow"))
    sb.sh("mv /etc/passwd /etc/passwd.real; "
          + ("mkfifo -m 644 /etc/passwd" if kind == "fifo" else "mkdir /etc/passwd"))
    for args, answers in ((["-r"], None), ([], "y\n" * 10)):
        res = sb.run([GRPCK, *args], input=answers, check=False, timeout=20)
        assert res.returncode == 3, res
        assert res.stderr == "grpck: cannot read /etc/passwd: is not a regular file\n"
        assert res.stdout == ""
    assert (sb.read_bytes("/etc/group"), sb.read_bytes("/etc/gshadow")) == before
    sb.sh("rmdir /etc/passwd || rm /etc/passwd; mv /etc/passwd.real /etc/passwd")
    assert grpck(sb, "-r").returncode == 0


def test_duplicate_gids_are_warnings(users):
    sb = users
    append(sb, "/etc/group", "twin:x:2001:\n")          # alice's private gid
    append(sb, "/etc/gshadow", "twin:!::\n")
    res = grpck(sb, "-r")
    assert res.returncode == 2
    assert res.stdout.splitlines() == [
        "group twin: duplicate group ID 2001 (also used by group alice)", "grpck: no changes"]
    res = grpck(sb, "-r", "-S")
    assert (res.returncode, res.stdout) == (0, "")


def test_no_gshadow_file(users):
    sb = users
    sb.sh("rm /etc/gshadow")
    append(sb, "/etc/group", "g4:x:3004:nosuch\n")
    res = grpck(sb, "-r")
    assert res.returncode == 2
    assert res.stdout.splitlines() == ["group g4: no user nosuch", "delete member 'nosuch'? No",
                                       "grpck: no changes"]
    assert grpck(sb, answers="y\n").returncode == 2
    assert not sb.exists("/etc/gshadow")
    assert entry(sb, "/etc/group", "g4") == "g4:x:3004:"


def test_file_arguments(users):
    sb = users
    sb.sh("cp /etc/group /tmp/group; cp /etc/gshadow /tmp/gshadow;"
          "echo 'g4:x:3004:nosuch' >> /tmp/group; echo 'g4:!::' >> /tmp/gshadow")
    before = sb.read_bytes("/etc/group")
    res = grpck(sb, "-r", "/tmp/group", "/tmp/gshadow")
    assert res.returncode == 2 and "group g4: no user nosuch" in res.stdout
    res = grpck(sb, "/tmp/group", "/tmp/gshadow", answers="y\n")
    assert res.returncode == 2
    assert "g4:x:3004:" in sb.read("/tmp/group").splitlines()
    assert sb.read_bytes("/etc/group") == before
    # the member lists' messages name the files checked, not /etc/group
    sb.sh("echo 'g5:x:3005:root' >> /tmp/group; echo 'g5:!::' >> /tmp/gshadow")
    res = grpck(sb, "-r", "/tmp/group", "/tmp/gshadow")
    assert "'root' is a member of the 'g5' group in /tmp/group but not in /tmp/gshadow" \
        in res.stdout, res
    # and so does the log of the repair
    sb.syslog(clear=True)
    res = grpck(sb, "/tmp/group", "/tmp/gshadow", answers="y\n")
    assert "g5:!::root" in lines(sb, "/tmp/gshadow"), res
    logged = [l for l in sb.syslog() if "made equal to" in l]
    assert logged and all("group g5: members in /tmp/gshadow made equal to /tmp/group" in l
                          and "/etc/group" not in l for l in logged), logged


def test_sort(users):
    sb = users
    append(sb, "/etc/group", "late:x:50:\n")
    append(sb, "/etc/gshadow", "late:!::\n")
    res = grpck(sb, "-s")
    assert (res.returncode, res.stdout) == (0, "")
    gids = [int(l.split(":")[2]) for l in lines(sb, "/etc/group")]
    assert gids == sorted(gids)
    gnames = [l.split(":")[0] for l in lines(sb, "/etc/group")]
    snames = [l.split(":")[0] for l in lines(sb, "/etc/gshadow")]
    assert [n for n in gnames if n in snames] == [n for n in snames if n in gnames]
    sb.sh("echo 'bad' >> /etc/gshadow")
    before = sb.read_bytes("/etc/group"), sb.read_bytes("/etc/gshadow")
    res = grpck(sb, "-s")
    assert res.returncode == 6 and "cannot sort entries in /etc/group" in res.stderr
    assert (sb.read_bytes("/etc/group"), sb.read_bytes("/etc/gshadow")) == before


# ---------------------------------------------------------------- size

def test_100000_member_group(sb):
    n = 100000
    names = ["m%06d" % i for i in range(n)]
    append(sb, "/etc/passwd", "".join("%s:x:%d:100::/:/usr/sbin/nologin\n" % (m, 100000 + i)
                                      for i, m in enumerate(names)))
    # group: everyone plus one name that is no user; gshadow: everyone but the last
    append(sb, "/etc/group", "big:x:5000:%s,ghost1\n" % ",".join(names))
    append(sb, "/etc/gshadow", "big:!::%s\n" % ",".join(names[:-1]))
    t = time.monotonic()
    res = grpck(sb, "-r")
    elapsed = time.monotonic() - t
    assert res.returncode == 2
    assert res.stdout.splitlines() == [
        "group big: no user ghost1",
        "delete member 'ghost1'? No",
        "'%s' is a member of the 'big' group in /etc/group but not in /etc/gshadow" % names[-1],
        "add '%s' to the members of 'big' in /etc/gshadow? No" % names[-1],
        "'ghost1' is a member of the 'big' group in /etc/group but not in /etc/gshadow",
        "add 'ghost1' to the members of 'big' in /etc/gshadow? No",
        "grpck: no changes"]
    assert elapsed < 10, elapsed        # linear: well under a second on a laptop
    res = grpck(sb, answers="y\ny\n")
    assert res.returncode == 2
    assert entry(sb, "/etc/group", "big") == "big:x:5000:" + ",".join(names)
    assert entry(sb, "/etc/gshadow", "big") == "big:!::" + ",".join(names)
    assert grpck(sb, "-r").returncode == 0


def test_member_line_over_64k(sb):
    # 2,100 names of 32 bytes: a 69 KB line (Debian's grpck takes seconds on it: it looks
    # every member up with getpwnam; ours uses the loaded /etc/passwd)
    n = 2100
    names = ["member%026d" % i for i in range(n)]
    members = names[:n // 2] + ["gone"] + names[n // 2:]
    add_users(sb, members, first_uid=20000)
    line = "wide:x:5001:" + ",".join(members)
    assert len(line) > 64 * 1024
    append(sb, "/etc/group", line + "\n")
    append(sb, "/etc/gshadow", "wide:!::" + ",".join(members) + "\n")
    res = grpck(sb, "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout[:2000]
    # the member in the middle stops being a user: reported once in each file
    sb.sh("sed -i '/^gone:/d' /etc/passwd")
    res = grpck(sb, "-r")
    assert res.stdout.splitlines() == [
        "group wide: no user gone", "delete member 'gone'? No",
        "shadow group wide: no user gone", "delete member 'gone'? No", "grpck: no changes"]
    before = [l for l in lines(sb, "/etc/group") if not l.startswith("wide:")]
    res = grpck(sb, answers="y\ny\n")
    assert res.returncode == 2
    assert entry(sb, "/etc/group", "wide") == "wide:x:5001:" + ",".join(names)
    assert entry(sb, "/etc/gshadow", "wide") == "wide:!::" + ",".join(names)
    assert [l for l in lines(sb, "/etc/group") if not l.startswith("wide:")] == before
    assert grpck(sb, "-r").returncode == 0


# ---------------------------------------------------------------- repairs that keep the entry

def test_crlf_files_are_mended_never_deleted(users):
    """CRLF /etc/group and /etc/gshadow: every line reported ("ends with a carriage
    return"), the repair offered is to strip it; no line and no member ("alice\\r") is
    offered for deletion."""
    sb = users
    append(sb, "/etc/group", "g1:x:3001:alice,bob\n")
    append(sb, "/etc/gshadow", "g1:!:carol:alice,bob\n")
    paths = ("/etc/group", "/etc/gshadow")
    before = {p: sb.read_bytes(p) for p in paths}
    n = {p: len(before[p].splitlines()) for p in paths}
    sb.sh("sed -i 's/$/\\r/' /etc/group /etc/gshadow")
    crlf = {p: sb.read_bytes(p) for p in paths}
    res = grpck(sb, "-r")
    assert res.returncode == 2
    out = res.stdout.splitlines()
    for p in paths:
        for i in range(1, n[p] + 1):
            assert f"{p}: line {i}: ends with a carriage return" in out, (p, i, res.stdout)
    assert out.count("strip it? No") == n["/etc/group"] + n["/etc/gshadow"]
    assert "delete" not in res.stdout and "invalid" not in res.stdout, res.stdout
    res = grpck(sb, answers="n\n" * 200)
    assert res.returncode == 2 and "delete" not in res.stdout and "add " not in res.stdout
    assert {p: sb.read_bytes(p) for p in paths} == crlf
    res = grpck(sb, answers="y\n" * 200)
    assert res.returncode == 2 and "delete" not in res.stdout, res.stdout
    assert res.stdout.splitlines()[-1] == "grpck: the files have been updated"
    assert {p: sb.read_bytes(p) for p in paths} == before
    res = grpck(sb, "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_crlf_on_one_line_with_a_missing_member(users):
    """The mended line is then checked like any other: its unknown member is offered."""
    sb = users
    append(sb, "/etc/group", "g1:x:3001:alice,nosuch\r\n")
    append(sb, "/etc/gshadow", "g1:!::alice,nosuch\n")
    res = grpck(sb, answers="y\n" * 10)
    assert res.returncode == 2
    assert "/etc/group: line" in res.stdout and "strip it? Yes" in res.stdout
    assert entry(sb, "/etc/group", "g1") == "g1:x:3001:alice"
    assert entry(sb, "/etc/gshadow", "g1") == "g1:!::alice"
    assert b"\r" not in sb.read_bytes("/etc/group")


def test_crlf_with_an_invalid_member_name(users):
    """Not mendable as a whole (a blank in a name): the names are offered one by one, and
    the last one is "alice", not "alice\\r"."""
    sb = users
    append(sb, "/etc/group", "g2:x:3002:bad name,alice\r\n")
    append(sb, "/etc/gshadow", "g2:!::alice\n")
    res = grpck(sb, "-r")
    out = res.stdout.splitlines()
    n = len(lines(sb, "/etc/group"))
    assert (f"/etc/group: line {n}: ends with a carriage return, which a repair of its "
            "names strips") in out, res.stdout
    assert "delete member 'bad name'? No" in out
    assert "alice" not in res.stdout
    res = grpck(sb, answers="y\n" * 5)
    assert res.returncode == 2
    assert sb.read_bytes("/etc/group").endswith(b"\ng2:x:3002:alice\n")
    assert grpck(sb, "-r").returncode == 0


def test_roots_group_line_is_never_offered_for_deletion(users):
    sb = users
    sb.sh("sed -i 's/^root:x:0:.*/root:x:0::extra/' /etc/group;"
          "sed -i 's/^root:.*/root:x/' /etc/gshadow;"
          "echo 'wheel0:x: 0 :' >> /etc/group; echo 'bad' >> /etc/group")
    before = {p: sb.read_bytes(p) for p in ("/etc/group", "/etc/gshadow")}
    res = grpck(sb, "-r")
    out = res.stdout.splitlines()
    assert res.returncode == 2
    assert "/etc/group: line 1: root's entry is not deleted; fix it by hand with vigr" in out
    assert "/etc/gshadow: line 1: root's entry is not deleted; fix it by hand with vigr -s" \
        in out
    assert [l for l in out if l.startswith("delete line")] == ["delete line 'bad'? No"], out
    res = grpck(sb, answers="y\n" * 20)
    assert sb.read_bytes("/etc/group") == before["/etc/group"].replace(b"bad\n", b"")
    assert sb.read_bytes("/etc/gshadow") == before["/etc/gshadow"]


# ---------------------------------------------------------------- exit status

# One finding each, on the users fixture (alice, bob, carol): (group lines to add,
# gshadow lines to add, a sed script for /etc/group, one for /etc/gshadow).
STATUS_CASES = {
    "clean": ("", "", None, None),
    "duplicate-name": ("alice:x:3001:\n", "", None, None),
    "too-few-fields": ("short:x:3002\n", "", None, None),
    "no-gshadow-entry": ("nogs:x:3003:\n", "", None, None),
    "gshadow-without-group": ("", "ghost:!::\n", None, None),
    "bad-gid": ("badgid:x:abc:\n", "badgid:!::\n", None, None),
    "member-not-a-user": ("g:x:3004:nosuch\n", "g:!::nosuch\n", None, None),
    "admin-not-a-user": ("g:x:3004:\n", "g:!:nosuch:\n", None, None),
    "password-not-x": ("", "", "s/^alice:x:/alice:secret:/", None),
    "member-only-in-group": ("", "", "s/^alice:x:2001:$/alice:x:2001:bob/", None),
    "member-only-in-gshadow": ("", "", None, "s/^alice:!::$/alice:!::bob/"),
}
# Debian's grpck's status for each, in every mode: 2 for a bad entry left in place
# (read-only, or each question answered "n"), whether -S silences warnings or not;
# member lists that disagree are printed (not with -S) but leave it 0.
STATUS_EXPECTED = {
    "clean": 0, "member-only-in-group": 0, "member-only-in-gshadow": 0,
}
STATUS_MODES = {"r": ["-r"], "r-S": ["-r", "-S"], "n": [], "n-S": ["-S"]}


@pytest.mark.parametrize("mode", list(STATUS_MODES))
@pytest.mark.parametrize("case", list(STATUS_CASES))
def test_exit_status_matches_debian(users, case, mode):
    """The status Debian's grpck returns for one finding, also when -r (or an answer
    "n") leaves it in place: a password field in /etc/group that is not 'x' beside a
    gshadow line is a bad entry even with -S (ours exited 0 with -S and -q, silent);
    member lists that disagree are not (ours exited 2)."""
    sb = users
    group, gshadow, sed_group, sed_gshadow = STATUS_CASES[case]
    append(sb, "/etc/group", group)
    append(sb, "/etc/gshadow", gshadow)
    for path, script in (("/etc/group", sed_group), ("/etc/gshadow", sed_gshadow)):
        if script:
            sb.run(["/bin/sed", "-i", script, path])
    args = STATUS_MODES[mode]
    answers = None if "-r" in args else "n\n" * 20
    before = (sb.read("/etc/group"), sb.read("/etc/gshadow"))
    deb = sb.run([DEB_GRPCK, *args], input=answers, check=False)
    ours = grpck(sb, *args, answers=answers)
    want = STATUS_EXPECTED.get(case, 2)
    assert deb.returncode == want, ("debian", deb)
    assert ours.returncode == want, ("ours", ours)
    assert (sb.read("/etc/group"), sb.read("/etc/gshadow")) == before
    # -q is ours' spelling of -S
    if "-S" in args:
        q = grpck(sb, *["-q" if a == "-S" else a for a in args], answers=answers)
        assert (q.returncode, q.stdout) == (ours.returncode, ours.stdout)
    # a summary only where there is a bad entry, as Debian's
    assert ("grpck: no changes" in ours.stdout) == (want == 2), ours.stdout
