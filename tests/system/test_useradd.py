"""useradd in a throwaway root: the new account in every file (passwd with the shell proxy,
the private group in group and gshadow, memberships, subordinate ids, the tree directory
with its modes), every option, exit codes and their messages, strict number parsing, the
exact `useradd -D` output (compared with Debian's) and -D changes, home creation with a
hostile skeleton (symlinks, a FIFO) and a home that is a symlink, a leftover tree
directory, and concurrency (the same name twice at once; ours next to Debian's)."""

import datetime
import os
import stat

import pytest

import grouptools

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

USERADD = "/usr/sbin/useradd"
CLASSIC_USERADD = "/usr/libexec/hs-test/shadow-utils/useradd"
CLASSIC_GROUPADD = "/usr/libexec/hs-test/shadow-utils/groupadd"
TREE = "/etc/hardened-shadow"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"


def run(sb, args, **kw):
    kw.setdefault("check", False)
    return sb.run([USERADD] + args, **kw)


def lines(sb, path):
    return sb.read(path).splitlines() if sb.exists(path) else []


def entry(sb, path, name):
    for l in lines(sb, path):
        if l.split(":")[0] == name:
            return l.split(":")
    return None


def today():
    return (datetime.date.today() - datetime.date(1970, 1, 1)).days


def days(iso):
    return (datetime.date.fromisoformat(iso) - datetime.date(1970, 1, 1)).days


@pytest.fixture
def tsb(sb):
    """alice (classic, then converted by pwconv) and a group proj; the tree exists."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.run([CLASSIC_GROUPADD, "-g", "5000", "proj"])
    sb.run([CLASSIC_GROUPADD, "-g", "5001", "proj2"])
    sb.use_hardened_tree()
    assert sb.exists(TREE + "/alice/shadow")
    return sb


def mode(sb, path):
    return sb.lstat(path)


def check_tree_dir(sb, name, uid, hash_, shell, aging):
    auth = sb.getgrnam("hardened-shadow-auth")[1]
    st = sb.lstat(TREE + "/" + name)
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o2710
    assert (st.st_uid, st.st_gid) == (uid, auth)
    for f, owner, m in (("shadow", uid, 0o640), ("shell", uid, 0o640), ("aging", 0, 0o644)):
        st = sb.lstat(TREE + "/" + name + "/" + f)
        assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1, f
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (owner, auth, m), f
    assert sb.read(TREE + "/" + name + "/shadow") == "%s:%d:\n" % (hash_, today())
    assert sb.read(TREE + "/" + name + "/shell") == shell + "\n"
    assert sb.read(TREE + "/" + name + "/aging") == aging
    assert sorted(os.listdir(sb.root + TREE + "/" + name)) == ["aging", "shadow", "shell"]


# ---------------------------------------------------------------- the plain add

def test_plain_add_writes_every_file(tsb):
    sb = tsb
    before = {p: sb.read_bytes(p) for p in ("/etc/passwd", "/etc/group", "/etc/gshadow")}
    r = run(sb, ["bob"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    pw = entry(sb, "/etc/passwd", "bob")
    alice = sb.getpwnam("alice")
    uid = int(pw[2])
    assert uid == alice.uid + 1
    # Debian's SHELL=/bin/sh is in /etc/shells: behind the proxy, real shell in the tree
    assert pw == ["bob", "x", str(uid), str(uid), "", "/home/bob", PROXY]
    assert entry(sb, "/etc/group", "bob") == ["bob", "x", str(uid), ""]
    assert entry(sb, "/etc/gshadow", "bob") == ["bob", "!", "", ""]
    # every earlier line byte for byte, one line appended
    for p, old in before.items():
        new = sb.read_bytes(p)
        assert new.startswith(old) and new[len(old):].count(b"\n") == 1, p
    check_tree_dir(sb, "bob", uid, "!", "/bin/sh", "0:99999:7:-1:-1:\n")
    # Debian's login.defs has no CREATE_HOME: no home without -m
    assert not sb.exists("/home/bob")
    # subordinate ids after alice's
    sub = entry(sb, "/etc/subuid", "bob")
    assert sub is not None and int(sub[2]) == 65536
    assert entry(sb, "/etc/subgid", "bob") is not None
    # the NSS module serves it
    r = sb.run(["getent", "shadow", "bob"])
    assert r.stdout.startswith("bob:!:%d:0:99999:7:::" % today())
    assert any("useradd" in l and "new user: name=bob," in l for l in sb.syslog())


def test_options(tsb):
    sb = tsb
    h = "$6$saltsalt$" + "A" * 86
    r = run(sb, ["-u", "2345", "-g", "proj", "-G", "proj2,users", "-c", "Bob B,,,",
                 "-d", "/srv/bobhome", "-e", "2030-01-02", "-f", "5", "-p", h,
                 "-s", "/usr/sbin/nologin", "bob"])
    assert r.returncode == 0, r.stderr
    # nologin is not in /etc/shells: straight into /etc/passwd
    assert entry(sb, "/etc/passwd", "bob") == ["bob", "x", "2345", "5000", "Bob B,,,",
                                               "/srv/bobhome", "/usr/sbin/nologin"]
    # -g: no private group
    assert entry(sb, "/etc/group", "bob") is None
    assert entry(sb, "/etc/group", "proj2")[3] == "bob"
    assert "bob" in entry(sb, "/etc/group", "users")[3].split(",")
    check_tree_dir(sb, "bob", 2345, h, "/usr/sbin/nologin",
                   "0:99999:7:5:%d:\n" % days("2030-01-02"))
    r = sb.run(["getent", "shadow", "bob"])
    assert r.stdout.split(":")[1] == h


def test_dash_b_base_and_dash_m_home(tsb):
    sb = tsb
    r = run(sb, ["-b", "/srv/homes", "-m", "bob"])
    assert r.returncode == 0, r.stderr
    uid = sb.getpwnam("bob").uid
    assert sb.getpwnam("bob").home == "/srv/homes/bob"
    st = sb.lstat("/srv/homes/bob")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, uid, 0o755)
    st = sb.lstat("/srv/homes")
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o755)
    # Debian's skeleton, owned by the user
    for f in (".bashrc", ".profile", ".bash_logout"):
        st = sb.lstat("/srv/homes/bob/" + f)
        assert (st.st_uid, st.st_gid) == (uid, uid)
        assert sb.read_bytes("/srv/homes/bob/" + f) == sb.read_bytes("/etc/skel/" + f)


def test_system_account(tsb):
    sb = tsb
    r = run(sb, ["-r", "sysd"])
    assert r.returncode == 0, r.stderr
    pw = sb.getpwnam("sysd")
    assert 100 <= pw.uid < 1000
    assert entry(sb, "/etc/group", "sysd")[2] == str(pw.gid)
    assert pw.gid < 1000
    assert entry(sb, "/etc/subuid", "sysd") is None
    assert not sb.exists("/home/sysd")
    check_tree_dir(sb, "sysd", pw.uid, "!", "/bin/sh", "-1:-1:-1:-1:-1:\n")
    # -F: subordinate ids for a system account too
    assert run(sb, ["-r", "-F", "sysf"]).returncode == 0
    assert entry(sb, "/etc/subuid", "sysf") is not None
    assert entry(sb, "/etc/subgid", "sysf") is not None


def test_user_group_options_and_k(tsb):
    sb = tsb
    # -N: the default group (GROUP=100)
    assert run(sb, ["-N", "nina"]).returncode == 0
    assert sb.getpwnam("nina").gid == 100
    assert entry(sb, "/etc/group", "nina") is None
    # -K USERGROUPS_ENAB=no then -U forces the private group anyway
    assert run(sb, ["-K", "USERGROUPS_ENAB=no", "kay"]).returncode == 0
    assert sb.getpwnam("kay").gid == 100
    assert run(sb, ["-K", "USERGROUPS_ENAB=no", "-U", "uma"]).returncode == 0
    assert entry(sb, "/etc/group", "uma") is not None
    # -K UID_MIN / GID_MIN
    assert run(sb, ["-K", "UID_MIN=7000", "-K", "GID_MIN=7000", "kim"]).returncode == 0
    assert sb.getpwnam("kim").uid == 7000
    # the private group takes gid = uid when free; -o shares a uid
    r = run(sb, ["-o", "-u", "7000", "kim2"])
    assert r.returncode == 0, r.stderr
    assert sb.getpwnam("kim2").uid == 7000
    assert entry(sb, "/etc/group", "kim2")[2] != "7000"
    # -K PASS_MAX_DAYS in the aging file
    assert run(sb, ["-K", "PASS_MAX_DAYS=30", "max"]).returncode == 0
    assert sb.read(TREE + "/max/aging") == "0:30:7:-1:-1:\n"


def test_gid_numeric_and_expire_forms(tsb):
    sb = tsb
    assert run(sb, ["-g", "5001", "-e", "20000", "g1"]).returncode == 0
    assert sb.getpwnam("g1").gid == 5001
    assert sb.read(TREE + "/g1/aging") == "0:99999:7:-1:20000:\n"
    assert run(sb, ["-e", "", "-f", "-1", "g2"]).returncode == 0
    assert sb.read(TREE + "/g2/aging") == "0:99999:7:-1:-1:\n"


# ---------------------------------------------------------------- exit codes

@pytest.mark.parametrize("args, status, message", [
    (["-u", "-1", "x"], 3, "useradd: invalid user ID '-1'\n"),
    (["-u", "4294967295", "x"], 3, "useradd: invalid user ID '4294967295'\n"),
    (["-u", "4294967296", "x"], 3, "useradd: invalid user ID '4294967296'\n"),
    (["-u", "99999999999999999999999", "x"], 3, None),
    (["-u", "+5", "x"], 3, "useradd: invalid user ID '+5'\n"),
    (["-u", " 5", "x"], 3, None),
    (["-u", "5 ", "x"], 3, None),
    (["-u", "0x10", "x"], 3, None),
    (["-u", "010", "x"], 3, None),
    (["-u", "", "x"], 3, None),
    (["-g", "-1", "x"], 3, None),
    (["-g", "0x10", "x"], 3, None),
    (["-g", "4294967295", "x"], 3, None),
    (["-G", "proj,nosuch", "x"], 6, "useradd: group 'nosuch' does not exist\n"),
    (["-g", "nosuch", "x"], 6, "useradd: group 'nosuch' does not exist\n"),
    (["-g", "4242", "x"], 6, "useradd: group '4242' does not exist\n"),
    (["bad:name"], 3, "useradd: invalid user name 'bad:name'\n"),
    (["../etc"], 3, None),
    (["-bad"], 2, None),
    ([".hidden"], 3, None),
    (["-K", "FOO", "x"], 3, "useradd: -K requires KEY=VALUE\n"),
    (["-e", "junk", "x"], 3, "useradd: invalid date 'junk'\n"),
    (["-e", "2030-02-30", "x"], 3, None),
    (["-f", "-2", "x"], 3, "useradd: invalid numeric argument '-2'\n"),
    (["-f", "0x1", "x"], 3, None),
    (["alice"], 9, "useradd: user 'alice' already exists\n"),
    (["proj"], 9, "useradd: group proj exists - if you want to add this user to that "
                  "group, use -g.\n"),
    (["-u", "0", "x"], 4, "useradd: UID 0 is not unique\n"),
    (["-U", "-N", "x"], 2, None),
    (["-U", "-g", "proj", "x"], 2, None),
    (["-o", "x"], 2, None),
    (["-k", "/etc/skel", "x"], 2, None),
    ([], 2, None),
    (["a", "b"], 2, None),
    (["-s", "bin/sh", "x"], 3, "useradd: invalid shell 'bin/sh'\n"),
    (["-s", "/bin/sh\n", "x"], 3, None),
    (["-p", "a:b", "x"], 3, "useradd: invalid field 'a:b'\n"),
    (["-p", "a\nb", "x"], 3, None),
    (["-c", "a:b", "x"], 3, None),
    (["-d", "rel/home", "x"], 3, None),
    (["-R", "/srv", "x"], 2, None),
    (["--btrfs-subvolume-home", "x"], 2, None),
    (["--selinux-range", "s0", "x"], 2,
     "useradd: SELinux user mappings (--selinux-user, --selinux-range) are not supported\n"),
])
def test_refusals_change_nothing(tsb, args, status, message):
    sb = tsb
    files = ("/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid")
    before = {p: sb.read_bytes(p) for p in files if sb.exists(p)}
    tree = sorted(os.listdir(sb.root + TREE))
    r = run(sb, args)
    assert r.returncode == status, r.stderr
    if message is not None:
        assert r.stderr == message
    assert r.stderr.startswith(("useradd: ", "Usage: useradd"))
    for p, old in before.items():
        assert sb.read_bytes(p) == old, p
    assert sorted(os.listdir(sb.root + TREE)) == tree


def test_missing_shell_only_warns(tsb):
    r = run(tsb, ["-s", "/bin/no-such-shell", "w"])
    assert r.returncode == 0
    assert r.stderr == "useradd: Warning: missing or non-executable shell '/bin/no-such-shell'\n"
    assert tsb.getpwnam("w").shell == "/bin/no-such-shell"


def test_hard_link_to_etc_shells_elsewhere(tsb):
    """Where fs.protected_hardlinks is 0 (the kernel's own default), any user may hard-link
    /etc/shells into a directory of theirs on the same file system.  That name changes
    nothing in /etc, so it must not refuse root's useradd (DESIGN §11), nor chsh and su
    their list.  Root makes the link a user could make there."""
    tsb.run(["/bin/ln", "/etc/shells", "/var/tmp/alice-shells"])
    r = run(tsb, ["-s", "/bin/bash", "w"])
    assert (r.returncode, r.stderr) == (0, "")
    assert tsb.getpwnam("w").shell in (PROXY, "/bin/bash")


def test_non_root_refused(tsb):
    r = tsb.run([USERADD, "zed"], user="alice", check=False)
    assert r.returncode == 1
    assert entry(tsb, "/etc/passwd", "zed") is None


# ---------------------------------------------------------------- -D

def test_defaults_output_is_debians(tsb):
    sb = tsb
    ours = run(sb, ["-D"])
    theirs = sb.run([CLASSIC_USERADD, "-D"])
    assert ours.returncode == 0
    assert ours.stdout == theirs.stdout
    assert ours.stdout == ("GROUP=100\nHOME=/home\nINACTIVE=-1\nEXPIRE=\nSHELL=/bin/sh\n"
                           "SKEL=/etc/skel\nCREATE_MAIL_SPOOL=no\nLOG_INIT=yes\n")


def test_defaults_change(tsb):
    sb = tsb
    old = sb.read("/etc/default/useradd")
    r = run(sb, ["-D", "-s", "/bin/bash", "-b", "/srv/h", "-e", "2031-01-01", "-f", "9",
                 "-g", "proj"])
    assert r.returncode == 0, r.stderr
    new = sb.read("/etc/default/useradd")
    # comments kept, SHELL replaced in place, missing keys appended
    assert [l for l in new.splitlines() if l.startswith("#")] == \
        [l for l in old.splitlines() if l.startswith("#")]
    assert "SHELL=/bin/bash" in new.splitlines() and "SHELL=/bin/sh" not in new
    st = sb.lstat("/etc/default/useradd")
    assert stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == 0
    expect = ("GROUP=5000\nHOME=/srv/h\nINACTIVE=9\nEXPIRE=2031-01-01\nSHELL=/bin/bash\n"
              "SKEL=/etc/skel\nCREATE_MAIL_SPOOL=no\nLOG_INIT=yes\n")
    assert run(sb, ["-D"]).stdout == expect
    assert sb.run([CLASSIC_USERADD, "-D"]).stdout == expect
    # and new accounts use them
    assert run(sb, ["-N", "dee"]).returncode == 0
    assert entry(sb, "/etc/passwd", "dee") == ["dee", "x", entry(sb, "/etc/passwd", "dee")[2],
                                               "5000", "", "/srv/h/dee", PROXY]
    assert sb.read(TREE + "/dee/aging") == "0:99999:7:9:%d:\n" % days("2031-01-01")
    assert sb.read(TREE + "/dee/shell") == "/bin/bash\n"


def test_defaults_change_without_the_file(tsb):
    """-D with options and no /etc/default/useradd: the file is made with the keys given."""
    tsb.sh("rm -f /etc/default/useradd")
    r = run(tsb, ["-D", "-s", "/bin/bash", "-f", "3"])
    assert r.returncode == 0, r.stderr
    assert tsb.read("/etc/default/useradd") == "INACTIVE=3\nSHELL=/bin/bash\n"
    st = tsb.lstat("/etc/default/useradd")
    assert stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == 0


@pytest.mark.parametrize("args, status", [
    (["-D", "-f", "-5"], 3), (["-D", "-e", "soon"], 3), (["-D", "-g", "nosuch"], 6),
    (["-D", "-s", "sh"], 3), (["-D", "-b", "rel"], 3), (["-D", "-u", "5"], 2),
    (["-D", "name"], 2),
])
def test_defaults_refusals(tsb, args, status):
    old = tsb.read("/etc/default/useradd")
    assert run(tsb, args).returncode == status
    assert tsb.read("/etc/default/useradd") == old


# ---------------------------------------------------------------- home and skeleton

def test_hostile_skeleton(tsb):
    sb = tsb
    sb.sh("mkdir -p /srv/skel/sub && echo hi > /srv/skel/file && chmod 640 /srv/skel/file"
          " && echo deep > /srv/skel/sub/deep"
          " && ln -s /etc/shadow /srv/skel/link-to-shadow"
          " && ln -s /etc /srv/skel/sub/etc-link"
          " && mkfifo /srv/skel/fifo && mknod /srv/skel/null c 1 3")
    r = run(sb, ["-m", "-k", "/srv/skel", "sk"])
    assert r.returncode == 0, r.stderr
    assert "fifo" in r.stderr and "null" in r.stderr
    uid = sb.getpwnam("sk").uid
    home = "/home/sk"
    assert sorted(os.listdir(sb.root + home)) == ["file", "link-to-shadow", "sub"]
    st = sb.lstat(home + "/link-to-shadow")
    assert stat.S_ISLNK(st.st_mode) and st.st_uid == uid
    assert os.readlink(sb.root + home + "/link-to-shadow") == "/etc/shadow"
    st = sb.lstat(home + "/sub/etc-link")
    assert stat.S_ISLNK(st.st_mode) and st.st_uid == uid
    # what the links point to was not touched
    assert sb.lstat("/etc").st_uid == 0
    st = sb.lstat(home + "/file")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, uid, 0o640)
    assert sb.read(home + "/file") == "hi\n"
    assert sb.read(home + "/sub/deep") == "deep\n"
    assert sb.lstat(home + "/sub").st_uid == uid


def test_home_symlink_refused(tsb):
    sb = tsb
    sb.sh("ln -s /etc /home/evil")
    r = run(sb, ["-m", "evil"])
    assert r.returncode == 12
    assert "symbolic link" in r.stderr
    assert sb.lstat("/etc").st_uid == 0
    # the account exists (as with shadow-utils), the home is untouched
    assert entry(sb, "/etc/passwd", "evil") is not None
    assert stat.S_ISLNK(sb.lstat("/home/evil").st_mode)


def test_existing_home_kept(tsb):
    sb = tsb
    sb.sh("mkdir /home/old && touch /home/old/keep")
    r = run(sb, ["-m", "old"])
    assert r.returncode == 0
    assert "already exists" in r.stderr
    assert sb.lstat("/home/old").st_uid == 0
    assert os.listdir(sb.root + "/home/old") == ["keep"]


# ---------------------------------------------------------------- leftovers, classic

def test_leftover_tree_directory_is_replaced(tsb):
    """A directory without a passwd line (an interrupted useradd or userdel) must never be
    inherited by a new account of that name."""
    sb = tsb
    sb.sh("mkdir %s/ghost && printf 'OLDHASH:1:\\n' > %s/ghost/shadow" % (TREE, TREE))
    r = run(sb, ["-p", "NEWHASH", "ghost"])
    assert r.returncode == 0, r.stderr
    assert "left over" in r.stderr
    uid = sb.getpwnam("ghost").uid
    check_tree_dir(sb, "ghost", uid, "NEWHASH", "/bin/sh", "0:99999:7:-1:-1:\n")


def test_classic_system_without_tree(sb):
    """No tree: the hash goes into /etc/shadow, the shell into /etc/passwd."""
    r = run(sb, ["-p", "HASHX", "-e", "2030-01-02", "cl"])
    assert r.returncode == 0, r.stderr
    assert entry(sb, "/etc/passwd", "cl")[6] == "/bin/sh"
    assert entry(sb, "/etc/shadow", "cl") == ["cl", "HASHX", str(today()), "0", "99999", "7",
                                              "", str(days("2030-01-02")), ""]
    assert not sb.exists(TREE)


# ---------------------------------------------------------------- concurrency

def test_same_name_twice_at_once(tsb):
    sb = tsb
    script = ("for i in 1 2 3 4 5 6; do (%s twin; echo \"rc $?\") & done; wait" % USERADD)
    r = sb.sh(script, check=False)
    rcs = sorted(l for l in r.stdout.splitlines() if l.startswith("rc "))
    assert rcs == ["rc 0"] + ["rc 9"] * 5, r.stdout + r.stderr
    assert [l.split(":")[0] for l in lines(sb, "/etc/passwd")].count("twin") == 1
    assert [l.split(":")[0] for l in lines(sb, "/etc/group")].count("twin") == 1
    assert [l.split(":")[0] for l in lines(sb, "/etc/subuid")].count("twin") == 1
    uid = sb.getpwnam("twin").uid
    check_tree_dir(sb, "twin", uid, "!", "/bin/sh", "0:99999:7:-1:-1:\n")


def test_next_to_debians_useradd(tsb):
    sb = tsb
    n = 15
    script = ("for i in $(seq %d); do %s -N ours$i & %s -N deb$i & done; wait"
              % (n, USERADD, CLASSIC_USERADD))
    r = sb.sh(script, check=False, timeout=120)
    assert r.returncode == 0
    names = [l.split(":")[0] for l in lines(sb, "/etc/passwd")]
    for i in range(1, n + 1):
        assert names.count("ours%d" % i) == 1, r.stderr
        assert names.count("deb%d" % i) == 1, r.stderr
        assert sb.exists(TREE + "/ours%d/shadow" % i)
    uids = [l.split(":")[2] for l in lines(sb, "/etc/passwd")]
    assert len(uids) == len(set(uids))
    subs = [l.split(":")[1] for l in lines(sb, "/etc/subuid")]
    assert len(subs) == len(set(subs))


def test_private_group_does_not_inherit_a_stale_gshadow_line(tsb):
    """A gshadow line without a group (an interrupted tool, a hand edit): useradd -U kept
    it for the new private group, whose password and administrator (mallory, also a
    member) then passed to the new group.  Now useradd makes the group as groupadd does
    (the line replaced by a fresh one, with a warning), as shadow-utils' sgr_update
    replaces it."""
    sb = tsb
    sb.write("/etc/gshadow", sb.read("/etc/gshadow") + "staleg:$6$abc$def:mallory:mallory\n",
             mode=0o640, gid=sb.getgrnam("shadow")[1])
    r = run(sb, ["-U", "staleg"])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ("useradd: warning: replaced a stale /etc/gshadow entry for 'staleg' "
                        "(no such group in /etc/group)\n")
    assert entry(sb, "/etc/gshadow", "staleg") == ["staleg", "!", "", ""]
    assert [l.split(":")[0] for l in lines(sb, "/etc/gshadow")].count("staleg") == 1
    assert entry(sb, "/etc/group", "staleg")[1:] == ["x", str(sb.getpwnam("staleg").gid), ""]


def test_mail_spool(tsb):
    sb = tsb
    sb.write("/etc/default/useradd", sb.read("/etc/default/useradd") + "CREATE_MAIL_SPOOL=yes\n")
    sb.sh("ln -s /etc/passwd /var/mail/trap")
    assert run(sb, ["mailer"]).returncode == 0
    uid = sb.getpwnam("mailer").uid
    st = sb.lstat("/var/mail/mailer")
    assert stat.S_ISREG(st.st_mode) and st.st_size == 0
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == \
        (uid, sb.getgrnam("mail")[1], 0o660)
    # a planted symlink is not followed
    before = sb.read_bytes("/etc/passwd")
    r = run(sb, ["trap"])
    assert r.returncode == 0
    assert "mail spool" in r.stderr
    assert stat.S_ISLNK(sb.lstat("/var/mail/trap").st_mode)
    assert sb.lstat("/etc/passwd").st_uid == 0
    assert sb.read_bytes("/etc/passwd").startswith(before)


def test_mail_spool_without_its_directory(tsb):
    """CREATE_MAIL_SPOOL with no MAIL_DIR: said with the open's reason (the
    mail group's lookup after it once turned it into "Success"), the account
    made anyway."""
    sb = tsb
    sb.write("/etc/default/useradd", sb.read("/etc/default/useradd") + "CREATE_MAIL_SPOOL=yes\n")
    sb.set_login_defs("MAIL_DIR", "/var/nomail")
    r = run(sb, ["mailer"])
    assert r.returncode == 0, r.stderr
    assert r.stderr == "useradd: cannot create mail spool /var/nomail/mailer: " \
        "No such file or directory\n"
    assert sb.getpwnam("mailer") is not None and not sb.exists("/var/nomail")


def test_no_free_subordinate_range(tsb):
    sb = tsb
    sb.write("/etc/subuid", "big:100000:600000001\n")
    before = sb.read_bytes("/etc/passwd")
    r = run(sb, ["nosub"])
    theirs = sb.run([CLASSIC_USERADD, "debnosub"], check=False)
    assert (r.returncode, r.stderr) == (16, "useradd: Can't get unique subordinate UID range\n")
    assert theirs.returncode == 16
    assert sb.read_bytes("/etc/passwd") == before
    assert not sb.exists(TREE + "/nosub")



def test_missing_parents_are_not_made_below_a_users_directory(tsb):
    """useradd -m makes the missing directories above a new home.  It used to mkdir() and
    chmod() each one by path before checking that the path above was root's: with a
    home nested in alice's (-d /home/alice/x/bob), root made /home/alice/x, and alice,
    who may rename in her home, could swap it for a symlink between the mkdir and the
    chmod(0755), which followed it to any file of root's.  Now nothing is made below a
    directory that is not root's, and what is made is made and set through directory
    fds, following no link."""
    sb = tsb
    r = run(sb, ["-m", "-d", "/home/alice/x/bob", "bob"])
    assert r.returncode == 12, r.stderr
    assert "not root's" in r.stderr, r.stderr
    assert not sb.exists("/home/alice/x")


@pytest.mark.parametrize("below", ["", "/new"])
def test_home_through_a_users_link_in_tmp_refused(tsb, below):
    """The parent of a new home was checked as the kernel resolved it: alice's symlink in
    sticky /tmp to a directory of root's (/tmp/alice-homes -> /etc/cron.d) passed, and
    useradd -m -d /tmp/alice-homes/bob made bob's home (and any missing parent) in
    /etc/cron.d, owned by bob (the kernel refuses the link only with
    fs.protected_symlinks, which may be off).  As for groupadd --prefix, a link on the
    way must be root's."""
    sb = tsb
    sb.sh("mkdir -p /etc/cron.d; rm -f /tmp/alice-homes; ln -s /etc/cron.d /tmp/alice-homes; "
          "chown -h alice: /tmp/alice-homes")
    r = run(sb, ["-m", "-d", "/tmp/alice-homes%s/bob" % below, "bob"], check=False)
    assert r.returncode == 12, r.stderr
    assert "not root's" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert not sb.exists("/etc/cron.d/bob") and not sb.exists("/etc/cron.d/new")


def test_failed_commit_is_the_failed_files_exit_code(tsb):
    """/etc/passwd is a mount point: its exchange fails after subuid, subgid, gshadow and
    group were installed, and subuid cannot be put back either.  The message names both
    files; the exit code is /etc/passwd's (1), not /etc/subuid's (16), as it used to be
    when the file was found by searching the message for each path."""
    sb = tsb
    with grouptools.bind_mounted(sb.root + "/etc/passwd"):
        # its renames: carol's three tree files, the backups subuid-, subgid-, gshadow-,
        # group-; then, after passwd's failed exchange, subuid put back: the eighth
        res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                      "-e", "inject=renameat:error=EIO:when=8", USERADD, "carol"], check=False)
    assert "cannot write /etc/passwd: Device or resource busy; /etc/subuid cannot be put " \
        "back (Input/output error)" in res.stderr, res
    assert res.returncode == 1, res
    # the next tool finishes the change
    sb.run(["/usr/sbin/groupadd", "later"])
    assert sb.getpwnam("carol") is not None


@pytest.mark.parametrize("path", ["/etc/group", "/etc/passwd"])
@pytest.mark.parametrize("argv,input", [
    (["/usr/sbin/useradd", "carol"], None),
    (["/usr/sbin/usermod", "-c", "x", "alice"], None),
    (["/usr/sbin/newusers"], "dave:pw-1:5000:5000::/home/dave:/bin/sh\n"),
    (["/usr/sbin/chpasswd", "-c", "SHA512"], "alice:new-pw-1\n"),
], ids=["useradd", "usermod", "newusers", "chpasswd"])
def test_a_global_file_that_is_a_fifo_is_refused_not_waited_on(tsb, path, argv, input):
    """/etc/group (or /etc/passwd) is a FIFO.  The tools' own reading refuses it, but the
    group lookups through NSS (the tree's groups) went to glibc's files backend, whose
    open of a FIFO waits for a writer: useradd, usermod and newusers hung for good,
    holding the account locks.  Refused now, in one line, before the lookup."""
    sb = tsb
    tree = sb.read_bytes(TREE + "/alice/shadow")
    sb.sh("mv {p} {p}.real && mkfifo -m 644 {p}".format(p=path))
    res = sb.run(argv, input=input, check=False, timeout=30)
    assert res.returncode != 0, res
    assert "is not a regular file" in res.stderr, res
    assert len(res.stderr.splitlines()) <= 2, res
    assert sb.read_bytes(TREE + "/alice/shadow") == tree
    sb.sh("rm {p} && mv {p}.real {p}".format(p=path))
    assert "carol" not in sb.read("/etc/passwd") and "dave" not in sb.read("/etc/passwd")
