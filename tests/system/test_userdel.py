"""userdel in a throwaway root: a plain delete (passwd, groups, gshadow, subordinate ids,
the tree directory; every other line byte for byte), -r (home and mail spool), hostile
homes (a symlink to /etc, symlinks to files outside, a FIFO, a device node), a tree
directory with planted symlinks, a user with a running process (exit 8, -f), the private
group kept for another user, supplementary and gshadow administrator lists, options and
exit codes."""

import os
import signal
import subprocess
import time

import pytest

from homemounts import HOME_MOUNTS, mount_on_home

USERDEL = "/usr/sbin/userdel"
TREE = "/etc/hardened-shadow"
CLASSIC_USERMOD = "/usr/libexec/hs-test/shadow-utils/usermod"
CLASSIC_GROUPADD = "/usr/libexec/hs-test/shadow-utils/groupadd"


def run(sb, args, **kw):
    kw.setdefault("check", False)
    return sb.run([USERDEL] + args, **kw)


def lines(sb, path):
    return sb.read(path).splitlines() if sb.exists(path) else []


def others(sb, path, name):
    """The lines of path that do not start with NAME: (raw bytes, exact)."""
    if not sb.exists(path):
        return []
    return [l for l in sb.read_bytes(path).split(b"\n")
            if not l.startswith(name.encode() + b":")]


def group_members(sb, group):
    for l in lines(sb, "/etc/group"):
        f = l.split(":")
        if f[0] == group:
            return [m for m in f[3].split(",") if m]
    return None


def gshadow_entry(sb, group):
    for l in lines(sb, "/etc/gshadow"):
        f = l.split(":")
        if f[0] == group:
            return ([a for a in f[2].split(",") if a], [m for m in f[3].split(",") if m])
    return None


def names(sb, path):
    return [l.split(":")[0] for l in lines(sb, path)]


@pytest.fixture
def two(sb):
    """alice and bob converted to the tree; a project group with both as members and alice
    as gshadow administrator; subordinate ids for both."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.run([CLASSIC_GROUPADD, "-g", "5000", "proj"])
    sb.run([CLASSIC_USERMOD, "-a", "-G", "proj", "alice"])
    sb.run([CLASSIC_USERMOD, "-a", "-G", "proj", "bob"])
    # administrators and members in gshadow, as gpasswd -A / -M would write them
    sb.write("/etc/gshadow", "".join(
        "proj:!:alice,bob:alice,bob\n" if l.startswith("proj:") else l + "\n"
        for l in lines(sb, "/etc/gshadow")), mode=0o640,
        gid=sb.getgrnam("shadow")[1])
    sb.write("/etc/subuid", "alice:100000:65536\nbob:165536:65536\n")
    sb.write("/etc/subgid", "alice:100000:65536\nbob:165536:65536\n")
    sb.use_hardened_tree()
    assert sb.exists(TREE + "/alice/shadow")
    return sb


# ---------------------------------------------------------------- plain delete

def test_plain_delete_removes_every_trace_and_keeps_other_lines(two):
    sb = two
    files = ["/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid"]
    before = {p: others(sb, p, "alice") for p in files}
    res = run(sb, ["alice"])
    assert res.returncode == 0, res.stderr
    assert "alice" not in names(sb, "/etc/passwd")
    assert "bob" in names(sb, "/etc/passwd")
    # private group gone (USERGROUPS_ENAB yes in Debian's login.defs)
    assert "alice" not in names(sb, "/etc/group")
    assert "alice" not in names(sb, "/etc/gshadow")
    assert group_members(sb, "proj") == ["bob"]
    assert gshadow_entry(sb, "proj") == (["bob"], ["bob"])
    assert lines(sb, "/etc/subuid") == ["bob:165536:65536"]
    assert lines(sb, "/etc/subgid") == ["bob:165536:65536"]
    assert not sb.exists(TREE + "/alice")
    assert sb.exists(TREE + "/bob/shadow")
    # nothing left under a reserved name either
    assert not [e for e in os.listdir(sb.root + TREE) if e.startswith(".")]
    # every other line untouched, byte for byte (proj changed, so compare the rest)
    for p in files:
        after = others(sb, p, "alice")
        keep = lambda ls: [l for l in ls if not l.startswith(b"proj:")]
        assert keep(after) == keep(before[p]), p
    # backups written
    assert "alice" in names(sb, "/etc/passwd-")
    # the home stays without -r
    assert sb.exists("/home/alice")
    assert sb.getpwnam("alice") is None
    assert sb.run(["getent", "shadow", "bob"]).returncode == 0


def test_unknown_user_exits_6(two):
    before = two.read_bytes("/etc/passwd")
    res = run(two, ["nosuchuser"])
    assert res.returncode == 6
    assert "nosuchuser" in res.stderr and "does not exist" in res.stderr
    res = run(two, ["../etc"])
    assert res.returncode == 6
    assert two.read_bytes("/etc/passwd") == before


@pytest.mark.parametrize("path,status", [("/etc/subuid", 16), ("/etc/subgid", 18)])
def test_subordinate_id_file_failure_exits_as_shadow_utils(two, path, status):
    """A subordinate id file userdel cannot use (here: a user's file with another name,
    refused; root's may have other names) exits 16 or 18, as shadow-utils' userdel(8)
    and our useradd and usermod do, and nothing changes."""
    before = {f: two.read_bytes(f) for f in ("/etc/passwd", "/etc/group", path)}
    two.run(["chown", "nobody", path])
    two.run(["ln", path, "/root/extra-link"])
    try:
        res = run(two, ["alice"])
    finally:
        two.run(["rm", "/root/extra-link"])
    assert res.returncode == status, res.stderr
    assert path in res.stderr
    assert {f: two.read_bytes(f) for f in before} == before


@pytest.mark.parametrize("path,status", [("/etc/passwd", 1), ("/etc/group", 10),
                                         ("/etc/subuid", 16), ("/etc/subgid", 18)])
def test_lock_failure_exits_with_its_files_code(two, path, status):
    """A lock that cannot be taken (a symlink planted at FILE.lock, refused at once)
    exits with its file's code, as shadow-utils' open_files() does."""
    two.run(["ln", "-s", "/nonexistent", path + ".lock"])
    try:
        res = run(two, ["alice"])
    finally:
        two.run(["rm", path + ".lock"])
    assert res.returncode == status, res.stderr
    assert "cannot lock %s" % path in res.stderr
    assert two.getpwnam("alice")


def test_failure_of_no_one_file_exits_1(two):
    """A commit that fails on no one file (the journal's link, made to fail) exits 1,
    the password file's code, not the code of whichever file the commit writes first
    (/etc/subuid, 16, for a user with subordinate ids)."""
    # where the journal's link falls among the linkat calls of deleting bob
    two.run(["strace", "-f", "-qq", "-e", "trace=linkat", "-o", "/tmp/links", USERDEL,
             "bob"])
    calls = [l for l in two.read("/tmp/links").splitlines() if "linkat(" in l]
    nth = 1 + next(i for i, l in enumerate(calls) if '".hardened-shadow.txn",' in l)
    before = {f: two.read_bytes(f) for f in ("/etc/passwd", "/etc/group", "/etc/subuid")}
    res = two.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=linkat", "-e",
                   "inject=linkat:error=EIO:when=%d" % nth, USERDEL, "alice"], check=False)
    assert res.returncode == 1, res.stderr
    assert "/etc/.hardened-shadow.txn" in res.stderr
    assert {f: two.read_bytes(f) for f in before} == before


def test_usage_and_refused_options(two):
    sb = two
    assert run(sb, []).returncode == 2
    assert run(sb, ["alice", "bob"]).returncode == 2
    assert run(sb, ["--bogus", "alice"]).returncode == 2
    for opt in (["-R", "/mnt"], ["-P", "/mnt"], ["-Z"], ["--selinux-range"]):
        res = run(sb, opt + ["alice"])
        assert res.returncode == 2, opt
        assert "not supported" in res.stderr
    res = run(sb, ["-h"])
    assert res.returncode == 0 and "--remove" in res.stdout
    assert "alice" in names(sb, "/etc/passwd")


def test_non_root_is_refused(two):
    res = two.run([USERDEL, "alice"], user="bob", check=False)
    assert res.returncode == 1
    assert "alice" in names(two, "/etc/passwd")


# ---------------------------------------------------------------- groups

def test_private_group_kept_for_another_users_primary_group(sb):
    sb.add_classic_user("alice")
    sb.add_classic_user("carol", group="alice")
    sb.use_hardened_tree()
    gid = sb.getgrnam("alice")[1]
    res = run(sb, ["alice"])
    assert res.returncode == 0, res.stderr
    assert "primary group of another user" in res.stderr
    assert sb.getgrnam("alice")[1] == gid
    assert "alice" in names(sb, "/etc/gshadow")
    assert sb.getpwnam("carol").gid == gid
    assert sb.getpwnam("alice") is None
    # -f does not change that: carol would be left with a dangling gid
    sb.add_classic_user("dave", group="alice")
    res = run(sb, ["-f", "dave"])
    assert res.returncode == 0
    assert sb.getgrnam("alice") is not None


def test_private_group_with_other_members_is_kept(sb):
    sb.add_classic_user("alice")
    sb.add_classic_user("bob", groups=["alice"])
    sb.use_hardened_tree()
    res = run(sb, ["alice"])
    assert res.returncode == 0, res.stderr
    assert "has other members" in res.stderr
    assert group_members(sb, "alice") == ["bob"]


# ---------------------------------------------------------------- processes

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


def test_running_process_refused_with_8_then_forced(two):
    sb = two
    pid = start_sleep(sb, "alice")
    res = run(sb, ["alice"])
    assert res.returncode == 8, res.stderr
    assert "currently used by process %d" % pid in res.stderr
    assert "alice" in names(sb, "/etc/passwd")
    assert sb.exists(TREE + "/alice/shadow")
    res = run(sb, ["-f", "alice"])
    assert res.returncode == 0, res.stderr
    assert "alice" not in names(sb, "/etc/passwd")
    assert not sb.exists(TREE + "/alice")


# A process of the user that another root directory or mount namespace hides from a
# root-bound check: a chroot (python has what it needs loaded before it chroots) and a
# private mount namespace.  Same kernel uid, same files: the user is busy.
HIDDEN = {
    "chroot": ["/usr/bin/python3", "-c",
               "import os,sys,time; os.makedirs('/tmp/jail', exist_ok=True); "
               "os.chroot('/tmp/jail'); os.chdir('/'); u=int(sys.argv[1]); "
               "os.setgroups([]); os.setresgid(u,u,u); os.setresuid(u,u,u); "
               "print('ready', flush=True); time.sleep(600)"],
    "mount-namespace": ["/usr/bin/unshare", "--mount", "--propagation", "private", "--",
                        "/usr/bin/setpriv", "--reuid={uid}", "--regid={uid}",
                        "--clear-groups", "--", "/bin/sh", "-c",
                        "echo ready; exec sleep 600"],
}


def start_hidden(sb, how, user):
    uid = sb.getpwnam(user).uid
    argv = [a.format(uid=uid) for a in HIDDEN[how]] + ([str(uid)] if how == "chroot" else [])
    proc = sb.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


@pytest.mark.parametrize("how", sorted(HIDDEN))
@pytest.mark.parametrize("tool", ["userdel", "usermod -u"])
def test_process_under_another_root_or_mount_namespace_is_busy(two, how, tool):
    sb = two
    proc = start_hidden(sb, how, "alice")
    try:
        nspid = sb.ns_pid(proc.pid)
        argv = [USERDEL, "-r", "alice"] if tool == "userdel" else \
            ["/usr/sbin/usermod", "-u", "4242", "alice"]
        res = sb.run(argv, check=False)
        assert res.returncode == 8, res
        assert "alice is currently used by process %d\n" % nspid in res.stderr, res.stderr
        assert sb.getpwnam("alice").uid != 4242
        assert sb.exists(TREE + "/alice/shadow") and sb.exists("/home/alice")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_process_of_another_user_does_not_block(two):
    start_sleep(two, "bob")
    res = run(two, ["alice"])
    assert res.returncode == 0, res.stderr


# ---------------------------------------------------------------- -r

def test_remove_home_and_mail_spool(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    gid = sb.getpwnam("alice").gid
    sb.write("/var/mail/alice", "From x\n", mode=0o660, uid=uid, gid=gid)
    sb.write("/var/mail/bob", "From y\n", mode=0o660, uid=sb.getpwnam("bob").uid)
    sb.sh("mkdir -p /home/alice/a/b/c && echo hi >/home/alice/a/b/c/f", user="alice")
    res = run(sb, ["-r", "alice"])
    assert res.returncode == 0, res.stderr
    assert not sb.exists("/home/alice")
    assert not sb.exists("/var/mail/alice")
    assert sb.exists("/var/mail/bob")
    assert sb.exists("/home/bob")


VICTIM = "/var/lib/hs-victim"


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
def test_remove_leaves_a_planted_spool_target_alone(two, kind):
    """/var/mail/alice as whoever can write the mail directory leaves it: a hard link to a
    root file (root makes it: the host keeps fs.protected_hardlinks=1) is not alice's and
    is refused in one line naming it, as shadow-utils refuses a spool the user does not
    own; a symlink loses the link only.  The root file keeps its owner and content."""
    sb = two
    sb.write(VICTIM, "secret\n", mode=0o600)
    sb.sh("ln %s %s /var/mail/alice" % ("" if kind == "hardlink" else "-s", VICTIM))
    res = run(sb, ["-r", "alice"])
    assert sb.getpwnam("alice") is None
    st = sb.lstat(VICTIM)
    assert (st.st_uid, st.st_mode & 0o7777, st.st_nlink) == \
        (0, 0o600, 2 if kind == "hardlink" else 1)
    assert sb.read(VICTIM) == "secret\n"
    said = [l for l in res.stderr.splitlines() if "/var/mail/alice" in l]
    if kind == "hardlink":
        assert said == ["userdel: /var/mail/alice not owned by alice, not removing"], \
            res.stderr
    else:
        assert said == [] and not sb.exists("/var/mail/alice"), res.stderr


SWAPPER = """
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = b"/var/mail/alice", b"/var/mail/.decoy"
on = False
while True:
    if os.path.exists("/run/hs-swap") != on:
        on = not on
        os.write(1, b"on\\n" if on else b"off\\n")
    if on:
        libc.renameat2(-100, a, -100, b, 2)     # RENAME_EXCHANGE
    else:
        time.sleep(0.001)
"""

# after a run: the decoy directory back at .decoy, no spool
SETTLE = ("if [ -d /var/mail/alice ]; then rm -f /var/mail/.decoy && "
          "mv -T /var/mail/alice /var/mail/.decoy; fi; rm -f /var/mail/alice; "
          "cp /var/lib/passwd /var/lib/group /var/lib/gshadow /etc/")


def test_remove_spool_swapped_for_a_directory(two):
    """The name swapped between the commit's check and the removal: a member of group mail
    exchanges /var/mail/alice (alice's spool) with a root directory in the mail directory
    (an exchange in one directory needs no write access to the directory moved).  The
    removal went through the walker, which removed the whole tree under the name; now a
    name checked as a file is unlinked as a file (EISDIR for a directory)."""
    sb = two
    sb.sh("mkdir -m 755 /var/mail/.decoy && echo keep >/var/mail/.decoy/precious")
    sb.sh("cp /etc/passwd /etc/group /etc/gshadow /var/lib/")
    uid = sb.getpwnam("alice").uid
    swapper = sb.popen(["/usr/bin/python3", "-c", SWAPPER], stdout=-1)
    try:
        for i in range(150):
            sb.write("/var/mail/alice", "From x\n", mode=0o600, uid=uid)
            sb.write("/run/hs-swap", "")
            assert swapper.stdout.readline() == b"on\n"
            run(sb, ["-r", "alice"])
            sb.sh("rm /run/hs-swap")
            assert swapper.stdout.readline() == b"off\n"
            sb.sh(SETTLE)
            kept = sb.sh("test -f /var/mail/.decoy/precious", check=False).returncode == 0
            assert kept, "run %d removed the root directory" % i
    finally:
        os.killpg(swapper.pid, signal.SIGKILL)
        swapper.wait()


def test_home_symlink_to_etc_removes_the_link_only(sb):
    sb.add_classic_user("evil", home="/home/evil", create_home=False)
    sb.use_hardened_tree()
    sb.sh("ln -s /etc /home/evil")
    etc_before = sorted(os.listdir(sb.root + "/etc"))
    res = run(sb, ["-r", "evil"])
    assert res.returncode == 0, res.stderr
    assert not os.path.lexists(sb.root + "/home/evil")
    etc_after = sorted(os.listdir(sb.root + "/etc"))
    # passwd etc. rewritten (backups may appear), nothing removed
    assert set(etc_before) <= set(etc_after)
    assert sb.exists("/etc/login.defs") and sb.exists("/etc/hardened-shadow")
    assert "root" in names(sb, "/etc/passwd")


def test_home_with_symlinks_fifo_and_device(two):
    sb = two
    sb.write("/root/secret", "keep me\n", mode=0o600)
    sb.sh("mkdir -p /srv/shared")
    sb.write("/srv/shared/data", "keep me too\n")
    sb.sh("ln -s /root/secret /home/alice/link-file && "
          "ln -s /srv/shared /home/alice/link-dir && "
          "ln -s /etc/passwd /home/alice/link-passwd && "
          "mkfifo /home/alice/fifo", user="alice")
    sb.sh("mknod /home/alice/null c 1 3 && mkdir /home/alice/sub && "
          "ln -s / /home/alice/sub/root && chown -R alice: /home/alice/sub")
    res = run(sb, ["-r", "alice"], timeout=30)
    assert res.returncode == 0, res.stderr
    assert not sb.exists("/home/alice")
    assert sb.read("/root/secret") == "keep me\n"
    assert sb.read("/srv/shared/data") == "keep me too\n"
    assert "bob" in names(sb, "/etc/passwd")
    assert os.path.exists(sb.root + "/usr/bin/env")


def test_home_not_owned_by_user_is_kept_unless_forced(two):
    sb = two
    sb.sh("chown root: /home/alice")
    res = run(sb, ["-r", "alice"])
    assert res.returncode == 12
    assert "not owned by alice, not removing" in res.stderr
    # the account itself is gone, the home kept
    assert "alice" not in names(sb, "/etc/passwd")
    assert sb.exists("/home/alice/.bashrc") or sb.exists("/home/alice")
    sb.sh("chown root: /home/bob")
    res = run(sb, ["-r", "-f", "bob"])
    assert res.returncode == 0, res.stderr
    assert not sb.exists("/home/bob")


def test_home_of_root_directory_is_refused(sb):
    sb.add_classic_user("slash", home="/", create_home=False)
    sb.use_hardened_tree()
    res = run(sb, ["-r", "-f", "slash"])
    assert res.returncode == 12
    assert sb.exists("/etc/passwd") and os.path.exists(sb.root + "/usr/bin/env")
    assert "slash" not in names(sb, "/etc/passwd")


def test_shared_home_is_kept(two):
    sb = two
    sb.add_classic_user("twin", home="/home/alice", create_home=False)
    res = run(sb, ["-r", "alice"])
    assert res.returncode == 12
    assert "would remove home of user twin" in res.stderr
    assert sb.exists("/home/alice")


def test_home_on_another_mount_is_not_crossed(two):
    sb = two
    sb.sh("mkdir /home/alice/mnt && mount -t tmpfs none /home/alice/mnt && "
          "echo x >/home/alice/mnt/other-fs")
    try:
        res = run(sb, ["-r", "alice"])
        assert res.returncode == 12
        assert sb.read("/home/alice/mnt/other-fs") == "x\n"
    finally:
        sb.sh("umount /home/alice/mnt", check=False)


@pytest.mark.parametrize("how", HOME_MOUNTS)
def test_home_that_is_a_mount_point_is_left_untouched(two, how):
    """alice's home is itself a mount point (her FUSE file system, an administrator's bind
    mount).  shadow-utils empties it and then fails to remove it (EBUSY); we refuse it, as
    a mount inside, and must not touch it at all: it used to be taken away (root's 0700)
    and handed back, its mode and owner changed for a while for nothing.  A FUSE mount
    without allow_other or with its daemon dead refuses root the stat of it: that used to
    be said as "cannot remove /home/alice: Permission denied" (or "Transport endpoint is
    not connected"), hiding why; the recovery's rule and words hold here too."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("echo under >/home/alice/under")
    under = sb.lstat("/home/alice")
    mount_on_home(sb, how, "/home/alice", uid)
    try:
        before = None
        if not how.startswith("fuse"):
            sb.sh("echo x >/home/alice/kept")
            before = sb.lstat("/home/alice")
            if how == "bind":
                under = before      # the same directory
        res = run(sb, ["-r", "alice"])
        assert res.returncode == 12, res
        said = [l for l in res.stderr.splitlines() if "/home/alice" in l]
        assert said == ["userdel: not removing directory /home/alice: a file system is "
                        "mounted at /home/alice"], res
        assert "alice" not in names(sb, "/etc/passwd")
        if before:
            st = sb.lstat("/home/alice")
            assert (st.st_uid, st.st_gid, st.st_mode, st.st_ctime_ns) == \
                (before.st_uid, before.st_gid, before.st_mode, before.st_ctime_ns)
            assert sb.read("/home/alice/kept") == "x\n"
        assert not sb.exists("/etc/.hardened-shadow.txn")
    finally:
        sb.sh("umount /home/alice", check=False)
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_gid, st.st_mode, st.st_ctime_ns) == \
        (under.st_uid, under.st_gid, under.st_mode, under.st_ctime_ns)
    assert sb.read("/home/alice/under") == "under\n"


@pytest.mark.parametrize("how", [h for h in HOME_MOUNTS if h != "tmpfs"])
def test_mail_spool_that_is_a_mount_point_is_left_untouched(two, how):
    """alice mounted a FUSE file system on her mail spool (a regular file of hers: users
    may), or an administrator bind-mounted it.  The spool is left as it is and userdel
    says why once, as for a home; it used to say "cannot remove /var/mail/alice:
    Permission denied" (FUSE refusing root the stat) or "Invalid cross-device link".  As
    for any spool it does not remove, a warning only: the home went, exit 0 (shadow-utils
    exits 12 after "can't remove /var/mail/alice: Device or resource busy")."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.write("/var/mail/alice", "From x\n", mode=0o600, uid=uid)
    mount_on_home(sb, how, "/var/mail/alice", uid)
    try:
        res = run(sb, ["-r", "alice"])
        assert res.returncode == 0, res
        said = [l for l in res.stderr.splitlines() if "/var/mail/alice" in l]
        assert said == ["userdel: not removing /var/mail/alice: a file system is mounted at "
                        "/var/mail/alice"], res
        assert "alice" not in names(sb, "/etc/passwd")
        assert not sb.exists("/home/alice")
        assert not sb.exists("/etc/.hardened-shadow.txn")
    finally:
        sb.sh("umount /var/mail/alice", check=False)
    st = sb.lstat("/var/mail/alice")
    assert (st.st_uid, st.st_mode & 0o7777) == (uid, 0o600)
    assert sb.read("/var/mail/alice") == "From x\n"


def test_missing_home_is_a_warning(two):
    sb = two
    sb.sh("rm -rf /home/alice")
    res = run(sb, ["-r", "alice"])
    assert res.returncode == 0, res.stderr
    assert "home directory (/home/alice) not found" in res.stderr


# ---------------------------------------------------------------- the tree

def test_tree_directory_with_planted_symlinks(two):
    sb = two
    sb.write("/root/target", "keep\n")
    # the user cannot traverse the tree by hand (it is 0710 root:hardened-shadow); what a
    # subverted setgid tool could plant in their 02710 directory is planted here as root
    # and given to them
    sb.sh("cd /etc/hardened-shadow/alice && ln -s /etc/passwd evil && ln -s /etc etcdir && "
          "ln -s /root/target t && mkfifo pipe && mkdir sub && ln -s / sub/root && "
          "ln /root/target hard && chown -hR alice /etc/hardened-shadow/alice")
    passwd_before = others(sb, "/etc/passwd", "alice")
    res = run(sb, ["alice"], timeout=30)
    assert res.returncode == 0, res.stderr
    assert not sb.exists(TREE + "/alice")
    assert sb.read("/root/target") == "keep\n"
    assert others(sb, "/etc/passwd", "alice") == passwd_before
    assert sb.exists("/etc/group") and sb.exists("/etc/login.defs")
    assert not [e for e in os.listdir(sb.root + TREE) if e.startswith(".")]


def test_classic_user_without_tree_directory(sb):
    sb.add_classic_user("alice")
    sb.add_classic_user("bob")
    sb.use_hardened_tree()
    # a user added afterwards by shadow-utils has no directory and a shadow line
    sb.add_classic_user("late")
    assert not sb.exists(TREE + "/late")
    res = run(sb, ["late"])
    assert res.returncode == 0, res.stderr
    assert "late" not in names(sb, "/etc/passwd")
    assert "late" not in names(sb, "/etc/shadow")


def test_rerun_after_a_lost_directory_finishes(two):
    """The state an interruption after the tree step leaves: the account still in
    /etc/passwd, no directory.  userdel finishes the job."""
    sb = two
    sb.sh("rm -rf /etc/hardened-shadow/alice")
    res = run(sb, ["alice"])
    assert res.returncode == 0, res.stderr
    assert "alice" not in names(sb, "/etc/passwd")


def kill_at_the_tree_step(sb, args):
    """userdel ARGS killed after its commit, before the home's removal: the 6th renameat2
    is the tree directory's, the first step after the commit.  The journal it left."""
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=renameat2",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6", "--", USERDEL] + args,
                 check=False)
    assert res.returncode != 0, res
    assert "alice" not in names(sb, "/etc/passwd")
    assert sb.exists("/etc/.hardened-shadow.txn")
    return sb.read("/etc/.hardened-shadow.txn")


@pytest.mark.parametrize("spelt", ["/home/alice", "/home/alice/", "/home//alice"])
def test_killed_r_recovery_leaves_a_home_another_line_names_however_spelt(two, spelt):
    """userdel -r alice killed after its commit, before the home's removal; then bob's
    line is made to name her home (a tool that does not know the journal).  The recovery
    leaves a home a passwd line names (lib/etc/txnwork.c; docs/decisions.md).  It compared
    the line's field with the journal's path byte for byte, while userdel itself compares
    them normalised: bob's "/home/alice/" did not count, and the recovery removed the home
    bob's line names.  Every spelling of the path counts now."""
    sb = two
    sb.sh("touch /home/alice/keep")
    kill_at_the_tree_step(sb, ["-r", "alice"])
    sb.sh("sed -i 's|^\\(bob:[^:]*:[^:]*:[^:]*:[^:]*:\\)[^:]*|\\1%s|' /etc/passwd" % spelt)
    assert ":%s:" % spelt in sb.read("/etc/passwd")
    rec = sb.run(["/usr/sbin/usermod", "-c", "x", "bob"], check=False)
    assert rec.returncode == 0, rec.stderr
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert sb.exists("/home/alice/keep"), rec.stderr
    assert "/etc/passwd names it as a home again" in rec.stderr, rec.stderr


@pytest.mark.parametrize("shared", [True, False])
def test_killed_r_f_recovery_removes_what_r_f_removes(two, shared):
    """userdel -r -f alice while bob's line names her home too (-f removes a shared home,
    as shadow-utils' does), or while her home and her mail spool are bob's (-f removes
    files not owned by the user), killed after its commit, before the removals.  The
    journal did not record -f, and the recovery finished it as a plain -r: it left the
    shared home, said as a home passwd names again, where the run not interrupted removes
    it.  The journal now names a forced removal as such, and the recovery removes what
    userdel -r -f removes."""
    sb = two
    bob = sb.getpwnam("bob")
    sb.sh("touch /home/alice/keep /var/mail/alice")
    if shared:
        assert sb.run(["/usr/sbin/usermod", "-d", "/home/alice/", "bob"],
                      check=False).returncode == 0
    else:
        sb.sh("chown %d:%d /home/alice /var/mail/alice" % (bob.uid, bob.gid))
    journal = kill_at_the_tree_step(sb, ["-r", "-f", "alice"])
    assert "@home-del-f " in journal and "@home-del " not in journal, journal
    rec = sb.run(["/usr/sbin/usermod", "-c", "x", "bob"], check=False)
    assert rec.returncode == 0, rec.stderr
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert "names it as a home again" not in rec.stderr, rec.stderr
    assert not sb.exists("/home/alice"), rec.stderr
    assert not sb.exists("/var/mail/alice"), rec.stderr
    assert not sb.exists(TREE + "/alice")
    assert sb.getpwnam("bob").uid == bob.uid
