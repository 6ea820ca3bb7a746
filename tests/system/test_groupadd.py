"""groupadd in a throwaway root: the new group in /etc/group and /etc/gshadow (one line
each, every other line byte for byte), every option (-f -g -K -o -p -r -U, -P into another
root, -R refused), the gid rules (range, system range, duplicates, strict numbers), hostile
names and passwords, a stale gshadow line that must not be inherited, exit codes and
messages next to Debian's groupadd, non-root callers, and two groupadds of one name at once
(ours twice, ours and Debian's): exactly one wins.

One sandbox per module; every test starts from the same account files."""

import os

import pytest

import grouptools
import sandbox

GROUPADD = "/usr/sbin/groupadd"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/groupadd"
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/login.defs")


# ---------------------------------------------------------------- fixtures and helpers

def set_up(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.run([CLASSIC, "-g", "5000", "proj"])


msb, sb = grouptools.fixtures(set_up, FILES)


run = grouptools.runner(GROUPADD)


def snapshot(sb):
    return grouptools.snapshot(sb, ("/etc/group", "/etc/gshadow", "/etc/passwd"))


def appended_one_line(before, after):
    return after.startswith(before) and after[len(before):].count(b"\n") == 1


# ---------------------------------------------------------------- the plain add

def test_plain_add(sb):
    before = snapshot(sb)
    r = run(sb, ["web"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    g = grouptools.table(sb, "/etc/group")["web"]
    # the next gid after the highest in GID_MIN..GID_MAX (proj has 5000)
    assert g == ["web", "x", "5001", ""]
    assert grouptools.table(sb, "/etc/gshadow")["web"] == ["web", "!", "", ""]
    for p in ("/etc/group", "/etc/gshadow"):
        assert appended_one_line(before[p], sb.read_bytes(p)), p
        assert sb.read_bytes(p + "-") == before[p]       # shadow-utils' backup
    assert sb.read_bytes("/etc/passwd") == before["/etc/passwd"]
    st = sb.lstat("/etc/gshadow")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (0, sb.getgrnam("shadow")[1], 0o640)
    assert not sb.exists("/etc/group.lock") and not sb.exists("/etc/gshadow.lock")
    grouptools.check_consistent(sb, ["web"])
    assert sb.getgrnam("web") == ("web", 5001, [])
    assert any("groupadd" in l and "new group: name=web, GID=5001" in l for l in sb.syslog())


def test_options(sb):
    h = "$6$saltsalt$" + "A" * 86
    assert run(sb, ["-g", "6000", "-p", h, "-U", "alice,bob,alice", "g1"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["g1"] == ["g1", "x", "6000", "alice,bob"]
    assert grouptools.table(sb, "/etc/gshadow")["g1"] == ["g1", h, "", "alice,bob"]
    # -o: a duplicate gid on purpose
    assert run(sb, ["-g", "6000", "-o", "g2"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["g2"][2] == "6000"
    # -r: the highest free gid of SYS_GID_MIN..SYS_GID_MAX
    used = {int(f[2]) for f in grouptools.table(sb, "/etc/group").values()}
    assert run(sb, ["-r", "sys1"]).returncode == 0
    gid = int(grouptools.table(sb, "/etc/group")["sys1"][2])
    assert gid == max(i for i in range(101, 1000) if i not in used)
    # -K overrides login.defs for this call only
    assert run(sb, ["-K", "GID_MIN=7000", "-K", "GID_MAX=7010", "g3"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["g3"][2] == "7000"
    # -f: an existing name is success, nothing changes
    before = snapshot(sb)
    r = run(sb, ["-f", "g1"])
    assert (r.returncode, r.stderr) == (0, "")
    assert snapshot(sb) == before
    # -f with a taken gid: another gid instead
    assert run(sb, ["-f", "-g", "6000", "g4"]).returncode == 0
    assert grouptools.table(sb, "/etc/group")["g4"][2] == "7001"
    grouptools.check_consistent(sb, ["g1", "g2", "sys1", "g3", "g4"])


def test_long_options(sb):
    r = run(sb, ["--gid", "6100", "--users", "bob", "--password", "!", "--system", "g5"])
    assert r.returncode == 0, r.stderr
    assert grouptools.table(sb, "/etc/group")["g5"] == ["g5", "x", "6100", "bob"]
    assert grouptools.table(sb, "/etc/gshadow")["g5"] == ["g5", "!", "", "bob"]


def test_gid_range_full(sb):
    before = snapshot(sb)
    r = run(sb, ["-r", "-K", "SYS_GID_MIN=5000", "-K", "SYS_GID_MAX=5000", "g6"])
    assert r.returncode == 4
    assert r.stderr == "groupadd: Can't get unique system GID (no more available GIDs)\n"
    assert snapshot(sb) == before


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize("gid", ["-1", "4294967295", "99999999999999999999", "+5", " 5",
                                 "5 ", "0x10", "010", "1e3", "", "abc", "5000abc"])
def test_bad_gid_refused(sb, gid):
    before = snapshot(sb)
    r = run(sb, ["-g", gid, "g7"])
    assert r.returncode == 3
    assert r.stderr == "groupadd: invalid group ID '%s'\n" % gid
    assert snapshot(sb) == before


def test_duplicates_refused(sb):
    before = snapshot(sb)
    r = run(sb, ["proj"])
    assert (r.returncode, r.stderr) == (9, "groupadd: group 'proj' already exists\n")
    r = run(sb, ["-g", "5000", "g8"])
    assert (r.returncode, r.stderr) == (4, "groupadd: GID '5000' already exists\n")
    assert snapshot(sb) == before


@pytest.mark.parametrize("name", ["a:b", "a\nb", "a,b", "a b", "-x", ".", "..", "x" * 33,
                                  "\u00e9t\u00e9", "a/b", "\x1b[31m", ""])
def test_hostile_names_refused(sb, name):
    before = snapshot(sb)
    r = run(sb, ["--", name])
    assert r.returncode == 3
    assert r.stderr.startswith("groupadd: '") and r.stderr.endswith(
        "' is not a valid group name\n")
    assert "\x1b" not in r.stderr and r.stderr.count("\n") == 1
    assert snapshot(sb) == before


@pytest.mark.parametrize("args,status,message", [
    (["-p", "a:b"], 3, "invalid password"),
    (["-p", "a\nb:0:0"], 3, "invalid password"),
    (["-p", "x" * 513], 3, "invalid password"),
    (["-U", "alice,nosuch"], 10, "Invalid member username nosuch"),
    (["-U", "alice:x"], 10, "Invalid member username alice:x"),
    (["-U", "alice\nroot"], 10, "Invalid member username alice\\x0aroot"),
    (["-U", "alice,,bob"], 10, "Invalid member username \n"),
    (["-K", "GID_MIN"], 3, "-K requires KEY=VALUE"),
    (["-K", "GID_MIN=1\nUID_MIN=0"], 3, "-K requires KEY=VALUE"),
])
def test_hostile_arguments_refused(sb, args, status, message):
    before = snapshot(sb)
    r = run(sb, args + ["g9"])
    assert r.returncode == status, r.stderr
    assert message in r.stderr
    assert snapshot(sb) == before


def test_stale_gshadow_line_not_inherited(sb):
    """A gshadow line without a group (an interrupted tool, a hand edit) must not hand its
    password and administrators to a new group of that name."""
    gs = sb.read("/etc/gshadow") + "ghost:$6$old$hash:mallory:mallory\n"
    sb.write("/etc/gshadow", gs, mode=0o640, gid=sb.getgrnam("shadow")[1])
    r = run(sb, ["ghost"])
    assert r.returncode == 0
    assert "stale /etc/gshadow entry for 'ghost'" in r.stderr
    assert grouptools.table(sb, "/etc/gshadow")["ghost"] == ["ghost", "!", "", ""]
    assert sb.read("/etc/gshadow").count("ghost:") == 1
    grouptools.check_consistent(sb, ["ghost"])


def test_usage(sb):
    before = snapshot(sb)
    for args in ([], ["a", "b"], ["-o", "g10"], ["--bogus", "g10"]):
        r = run(sb, args)
        assert r.returncode == 2 and "Usage: groupadd [options] GROUP\n" in r.stderr
    r = run(sb, ["-R", "/srv", "g10"])
    assert r.returncode == 2 and "--root is not supported" in r.stderr
    r = run(sb, ["--help"])
    assert r.returncode == 0 and "  -U, --users USERS" in r.stdout and r.stderr == ""
    r = run(sb, ["--version"])
    assert r.returncode == 0 and "(hardened-shadow)" in r.stdout
    assert snapshot(sb) == before


def test_non_root_refused(sb):
    before = snapshot(sb)
    r = run(sb, ["g11"], user="alice")
    assert (r.returncode, r.stderr) == (10, "groupadd: Permission denied.\n")
    assert snapshot(sb) == before


@pytest.mark.parametrize("args", [["proj"], ["-g", "5000", "g12"], ["-g", "x", "g12"],
                                  ["-g", "-1", "g12"], ["a:b"], ["-K", "X", "g12"],
                                  ["-U", "alice,nosuch", "g12"], ["-o", "g12"]])
def test_messages_like_debian(sb, args):
    ours, theirs = grouptools.ours_and_debians(sb, run, args, CLASSIC, snapshot)
    if ours.returncode == 2:
        assert ours.stderr.splitlines()[0] == theirs.stderr.splitlines()[0]
    else:
        # Debian prints the member message without the program's name
        assert ours.stderr.replace("groupadd: Invalid member", "Invalid member") == \
            theirs.stderr


# ---------------------------------------------------------------- --prefix

def test_prefix_writes_the_other_root(sb):
    sb.sh("set -e; rm -rf /srv/newroot; mkdir -p /srv/newroot/etc; cd /etc; "
          "cp -p passwd group gshadow login.defs /srv/newroot/etc/")
    before = snapshot(sb)
    r = run(sb, ["--system", "--prefix", "/srv/newroot/", "-U", "alice", "hs-test"])
    assert r.returncode == 0, r.stderr
    assert snapshot(sb) == before
    g = grouptools.table(sb, "/srv/newroot/etc/group")["hs-test"]
    assert 101 <= int(g[2]) <= 999 and g[3] == "alice"
    assert grouptools.table(sb, "/srv/newroot/etc/gshadow")["hs-test"] == ["hs-test", "!", "", "alice"]
    # a user the prefix's passwd lacks is refused, even if this system has one
    sb.sh("sed -i '/^bob:/d' /srv/newroot/etc/passwd")
    r = run(sb, ["-P", "/srv/newroot", "-U", "bob", "g13"])
    assert r.returncode == 10 and "Invalid member username bob" in r.stderr
    r = run(sb, ["-P", "relative/dir", "g13"])
    assert r.returncode == 3


# ---------------------------------------------------------------- --prefix of a hostile root
# The prefix may be an image unpacked from an untrusted source (its files root's, their
# content and symlinks the image's) or a directory a user owns.  groupadd must neither
# write through it outside the prefix nor act on what it says about the host.

def make_root(sb, root, owner="root"):
    sb.sh("set -e; rm -rf %s; mkdir -p %s/etc; cd /etc; cp -p passwd group gshadow "
          "login.defs %s/etc/; chown %s: %s %s/etc" % (root, root, root, owner, root, root))


HOST = ("/etc/group", "/etc/gshadow", "/etc/passwd", "/etc/shadow")


@pytest.mark.parametrize("target", ["/etc", "../../../etc", "/"])
def test_prefix_etc_symlink_out_is_refused(sb, target):
    sb.sh("set -e; rm -rf /srv/img; mkdir -p /srv/img; ln -s %s /srv/img/etc" % target)
    before = grouptools.snapshot(sb, HOST)
    r = run(sb, ["-P", "/srv/img", "hs-esc"])
    assert r.returncode == 10, r.stderr
    assert "/srv/img/etc" in r.stderr and "symbolic link" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert grouptools.snapshot(sb, HOST) == before


def test_prefix_a_user_controls_is_refused(sb):
    # alice owns the root (or only its etc): she could swap either for a symlink to /etc
    # at any moment, so groupadd refuses to write there at all
    before = grouptools.snapshot(sb, HOST)
    sb.sh("mkdir -p /home/alice && chown alice: /home/alice")
    for root, owner in (("/home/alice/rootfs", "alice"), ("/srv/img", "root")):
        make_root(sb, root, owner)
    sb.sh("chown alice: /srv/img/etc")
    for prefix in ("/home/alice/rootfs", "/srv/img"):
        r = run(sb, ["-P", prefix, "hs-esc"])
        assert r.returncode == 10, r.stderr
        assert "refusing prefix" in r.stderr and "root" in r.stderr, r.stderr
        assert "hs-esc" not in sb.read(prefix + "/etc/group")
    # her own directory as a symlink to / (or her rootfs to /): not this system's /etc
    sb.sh("rm -rf /home/alice/rootfs; ln -s / /home/alice/rootfs; "
          "chown -h alice: /home/alice/rootfs")
    r = run(sb, ["-P", "/home/alice/rootfs", "hs-esc"])
    assert r.returncode == 10 and "refusing prefix" in r.stderr, r.stderr
    # her link in sticky /tmp (the kernel's protected_symlinks aside, which may be off)
    sb.sh("rm -f /tmp/alice-root; ln -s / /tmp/alice-root; chown -h alice: /tmp/alice-root")
    r = run(sb, ["-P", "/tmp/alice-root", "hs-esc"])
    assert r.returncode == 10 and "refusing prefix" in r.stderr, r.stderr
    assert grouptools.snapshot(sb, HOST) == before


def test_prefix_through_an_administrators_symlink_works(sb):
    make_root(sb, "/srv/newroot")
    sb.sh("ln -sfn /srv/newroot /srv/link")
    before = grouptools.snapshot(sb, HOST)
    r = run(sb, ["-P", "/srv/link", "hs-ok"])
    assert r.returncode == 0, r.stderr
    assert "hs-ok" in grouptools.table(sb, "/srv/newroot/etc/group")
    assert grouptools.snapshot(sb, HOST) == before


def test_prefix_journal_does_no_work_on_this_system(sb):
    """A committed journal in the image (root's, as an unpacked image's files are) names
    this system's paths: finishing its work would hand /etc/victim-new to uid 4242 mode
    0777 and remove /etc/victim-del.  Only the image's own files are groupadd's."""
    make_root(sb, "/srv/img")
    sb.sh("set -e; rm -rf /etc/victim-new /etc/victim-del; mkdir -p /etc/victim-new "
          "/etc/victim-del/sub; echo keep > /etc/victim-del/sub/f; "
          "E=$(stat -c '%d %i' /etc); N=$(stat -c '%d %i' /etc/victim-new); "
          "D=$(stat -c '%d %i' /etc/victim-del); "
          "printf 'hardened-shadow transaction 1\\n@home-new 4242 4242 777 %s %s .hs-x "
          "/etc/victim-new\\n@home-del 0 0 755 %s %s - /etc/victim-del\\n' "
          "\"$E\" \"$N\" \"$E\" \"$D\" > /srv/img/etc/.hardened-shadow.txn; "
          "chmod 600 /srv/img/etc/.hardened-shadow.txn")
    before = grouptools.snapshot(sb, HOST)
    r = run(sb, ["-P", "/srv/img", "hs-j"])
    assert r.returncode == 0, r.stderr
    st = sb.lstat("/etc/victim-new")
    assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o755)
    assert sb.read("/etc/victim-del/sub/f") == "keep\n"
    assert "hs-j" in grouptools.table(sb, "/srv/img/etc/group")
    assert grouptools.snapshot(sb, HOST) == before
    sb.sh("rm -rf /etc/victim-new /etc/victim-del")


def test_prefix_hostile_files_inside(sb):
    """The image's etc is root's but its files are hostile: symlinks out, a FIFO."""
    make_root(sb, "/srv/img")
    before = grouptools.snapshot(sb, HOST)
    sb.sh("cd /srv/img/etc && rm group && ln -s /etc/group group")
    r = run(sb, ["-P", "/srv/img", "hs-h1"], timeout=30)
    assert r.returncode == 10 and "/srv/img/etc/group" in r.stderr, r.stderr
    make_root(sb, "/srv/img")
    sb.sh("cd /srv/img/etc && rm login.defs && mkfifo login.defs")
    r = run(sb, ["-P", "/srv/img", "hs-h2"], timeout=30)
    assert r.returncode == 10 and "login.defs" in r.stderr, r.stderr
    assert grouptools.snapshot(sb, HOST) == before


# ---------------------------------------------------------------- concurrency

def test_same_name_at_once_exactly_one_wins(sb):
    script = ("for i in 1 2 3 4 5 6; do "
              "  (%s race$i; echo A$i:$?) & (%s race$i; echo B$i:$?) & "
              "done; wait" % (GROUPADD, GROUPADD))
    out = sb.sh(script).stdout.split()
    status = dict(x.split(":") for x in out)
    group = sb.read("/etc/group")
    for i in range(1, 7):
        assert sorted([status["A%d" % i], status["B%d" % i]]) == ["0", "9"], out
        assert group.count("\nrace%d:" % i) == 1
    grouptools.check_consistent(sb, ["race%d" % i for i in range(1, 7)])
    gids = [grouptools.table(sb, "/etc/group")["race%d" % i][2] for i in range(1, 7)]
    assert len(set(gids)) == 6


def test_ours_and_debians_at_once(sb):
    """Ours next to Debian's: they share the locks, so the files end with one line per
    name in each file.  (Debian's groupadd looks the name up before it locks, so it may
    report success for a name ours just created, and then rewrites that line: never two.)"""
    script = ("for i in 1 2 3 4; do "
              "  (%s mix$i 2>/dev/null; echo A$i:$?) & (%s mix$i 2>/dev/null; echo B$i:$?) & "
              "done; wait" % (GROUPADD, CLASSIC))
    status = dict(x.split(":") for x in sb.sh(script).stdout.split())
    for i in range(1, 5):
        assert status["A%d" % i] in ("0", "9") and status["B%d" % i] in ("0", "9"), status
        assert "0" in (status["A%d" % i], status["B%d" % i]), status
        assert sb.read("/etc/group").count("\nmix%d:" % i) == 1
        assert sb.read("/etc/gshadow").count("\nmix%d:" % i) == 1
    grouptools.check_consistent(sb, ["mix%d" % i for i in range(1, 5)])
    assert not [f for f in os.listdir(sb.root + "/etc") if f.endswith(".lock") and f != ".pwd.lock"]
