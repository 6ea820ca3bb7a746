"""The one walker (lib/io/walk.c) under the tools that use it, in a throwaway root: a bind
mount from the same file system inside a home (userdel -r refuses and deletes nothing;
usermod -u leaves the mounted files alone), a hard link to another user's file in a home
(never re-owned), and a hostile racer that keeps swapping names in a home between the
user's own file and hard links to root's and another user's files while root runs
usermod -u over and over: those files must never change owner or mode."""

import json

import pytest

USERDEL = "/usr/sbin/userdel"
USERMOD = "/usr/sbin/usermod"


@pytest.fixture
def two(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.add_classic_user("mallory", password="mallory-pw-1")
    sb.use_hardened_tree()
    return sb


def bind_mount(sb, src, dst):
    res = sb.sh("mount --bind %s %s" % (src, dst), check=False)
    if res.returncode != 0:
        pytest.skip("cannot bind-mount in the sandbox: %s" % res.stderr)


def same_fs_data(sb, owner_uid):
    """/srv/data: a directory and a file on the home's own file system, owned by the user,
    so that only the mount check keeps the tools out."""
    sb.sh("mkdir -p /srv/data/sub && echo keep >/srv/data/f && echo keep >/srv/data/sub/g && "
          "echo keep >/srv/file && chown -R %d /srv/data /srv/file" % owner_uid)


def test_userdel_r_refuses_a_bind_mount_inside_the_home(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    same_fs_data(sb, uid)
    sb.sh("mkdir /home/alice/data && echo mine >/home/alice/own && touch /home/alice/bf",
          user="alice")
    home_before = sb.lstat("/home/alice")
    assert sb.lstat("/srv/data").st_dev == home_before.st_dev
    bind_mount(sb, "/srv/data", "/home/alice/data")
    try:
        res = sb.run([USERDEL, "-r", "alice"], check=False)
        assert res.returncode == 12, res.stderr
        err = [l for l in res.stderr.splitlines() if "mounted" in l]
        assert err == ["userdel: not removing directory /home/alice: a file system is "
                       "mounted at /home/alice/data"], res.stderr
        # nothing below the mount and nothing of the home was deleted
        assert sb.read("/srv/data/f") == "keep\n"
        assert sb.read("/srv/data/sub/g") == "keep\n"
        assert sb.read("/home/alice/own") == "mine\n"
        assert sb.exists("/home/alice/bf")
        # handed back as it was
        after = sb.lstat("/home/alice")
        assert (after.st_uid, after.st_gid, after.st_mode) == \
            (home_before.st_uid, home_before.st_gid, home_before.st_mode)
        # the account itself is gone, as shadow-utils does when the home stays
        assert sb.getpwnam("alice") is None
    finally:
        sb.sh("umount /home/alice/data", check=False)
    # without the mount, the home can go
    assert sb.read("/srv/data/f") == "keep\n"


def test_userdel_r_refuses_a_bind_mounted_file_inside_the_home(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    same_fs_data(sb, uid)
    sb.sh("touch /home/alice/bf", user="alice")
    bind_mount(sb, "/srv/file", "/home/alice/bf")
    try:
        res = sb.run([USERDEL, "-r", "alice"], check=False)
        assert res.returncode == 12, res.stderr
        assert "mounted at /home/alice/bf" in res.stderr
        assert sb.read("/srv/file") == "keep\n"
        assert sb.exists("/home/alice/.bashrc") or sb.exists("/home/alice/bf")
    finally:
        sb.sh("umount /home/alice/bf", check=False)


def test_usermod_u_leaves_a_bind_mount_inside_the_home_alone(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    same_fs_data(sb, uid)
    sb.sh("mkdir /home/alice/data && echo mine >/home/alice/own && touch /home/alice/bf",
          user="alice")
    bind_mount(sb, "/srv/data", "/home/alice/data")
    bind_mount(sb, "/srv/file", "/home/alice/bf")
    try:
        res = sb.run([USERMOD, "-u", "4242", "alice"], check=False)
        assert res.returncode == 0, res.stderr
        warn = [l for l in res.stderr.splitlines() if "mount point" in l]
        assert sorted(warn) == [
            "usermod: warning: not changing the owner of files in /home/alice/bf: "
            "it is a mount point",
            "usermod: warning: not changing the owner of files in /home/alice/data: "
            "it is a mount point"], res.stderr
        for p in ("/srv/data", "/srv/data/f", "/srv/data/sub", "/srv/data/sub/g",
                  "/srv/file"):
            assert sb.lstat(p).st_uid == uid, p
        assert sb.lstat("/home/alice/own").st_uid == 4242
        assert sb.lstat("/home/alice").st_uid == 4242
    finally:
        sb.sh("umount /home/alice/data; umount /home/alice/bf", check=False)


def test_usermod_u_never_reowns_a_hard_link(two):
    sb = two
    uid = sb.getpwnam("alice").uid
    # alice's own file with a second name outside the home, and root's file linked in
    sb.sh("echo mine >/home/alice/own && echo twice >/home/alice/twice", user="alice")
    sb.sh("ln /home/alice/twice /srv/second-name")
    sb.write("/root-file", "root's\n", mode=0o640)
    sb.sh("ln /root-file /home/alice/rootlink")
    res = sb.run([USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 0, res.stderr
    warn = sorted(l for l in res.stderr.splitlines() if "more than one link" in l)
    assert warn == [
        "usermod: warning: not changing the owner of /home/alice/twice: it has more "
        "than one link"], res.stderr
    assert sb.lstat("/home/alice/own").st_uid == 4242
    assert sb.lstat("/home/alice/twice").st_uid == uid
    st = sb.lstat("/root-file")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o640)


# ---------------------------------------------------------------- the race

DRIVER = r'''
import ctypes, json, os, signal, subprocess, sys, time

cfg = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
SYS_renameat2, RENAME_EXCHANGE = 316, 2

def racer():
    """An unprivileged process of the user's: open the directory first (it keeps the fd
    when root takes the home away), optionally leave our root (the way a process in a
    container does), drop to the racer's uid, then swap names for ever."""
    fd = os.open(cfg["dir"], os.O_RDONLY | os.O_DIRECTORY)
    if cfg["chroot"]:
        os.chroot(cfg["chroot"])
        os.chdir("/")
    os.setgroups([])
    os.setgid(cfg["racer_gid"])
    os.setuid(cfg["racer_uid"])
    pairs = [(b"x", b"y"), (b"x", b"z"), (b"y", b"z")]
    while True:
        for a, b in pairs:
            libc.syscall(SYS_renameat2, fd, a, fd, b, RENAME_EXCHANGE)

victims = {p: os.lstat(p) for p in cfg["victims"]}
pid = os.fork()
if pid == 0:
    try:
        racer()
    finally:
        os._exit(1)
time.sleep(0.2)
deadline = time.monotonic() + cfg["seconds"]
rounds, codes, changed = 0, {}, []
uids = cfg["uids"]
try:
    while rounds < cfg["rounds"] and time.monotonic() < deadline and not changed:
        new = uids[(rounds + 1) % 2]
        r = subprocess.run([cfg["usermod"], "-u", str(new), cfg["user"]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        codes[r.returncode] = codes.get(r.returncode, 0) + 1
        if r.returncode == 8:
            break
        if r.returncode not in (0, 12):
            changed.append("usermod exit %d: %s" % (r.returncode, r.stderr))
        rounds += 1
        for p, st in victims.items():
            now = os.lstat(p)
            if (now.st_uid, now.st_gid, now.st_mode) != (st.st_uid, st.st_gid, st.st_mode):
                changed.append("%s: %d:%d %o -> %d:%d %o in round %d" % (
                    p, st.st_uid, st.st_gid, st.st_mode, now.st_uid, now.st_gid,
                    now.st_mode, rounds))
finally:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(json.dumps({"rounds": rounds, "codes": codes, "changed": changed}))
'''


@pytest.mark.parametrize("racer", ["owner-in-chroot", "other-user"])
def test_racer_swapping_names_cannot_make_usermod_u_reown_others_files(two, racer):
    """The review's attack: the name root stat()ed is swapped for a hard link to another
    user's (or root's) file before root chowns it.  The racer keeps an fd to a
    directory of the home (so taking the home away does not stop it) and swaps three
    names: the user's own file, a hard link to root's file, a hard link to bob's."""
    sb = two
    alice = sb.getpwnam("alice")
    bob = sb.getpwnam("bob")
    sb.sh("mkdir -m 0777 /home/alice/swap && echo mine >/home/alice/swap/x && "
          "chmod 0644 /home/alice/swap/x", user="alice")
    sb.write("/root-secret", "root's\n", mode=0o600)
    sb.sh("echo bob >/home/bob/bobs && chmod 0640 /home/bob/bobs", user="bob")
    # root links them in: no sysctl (protected_hardlinks) decides whether the test bites
    sb.sh("ln /root-secret /home/alice/swap/y && ln /home/bob/bobs /home/alice/swap/z && "
          "mkdir -p /var/racer-root")
    if racer == "owner-in-chroot":
        # the user's own uid, under another root directory: the busy check sees it
        # there too (test_userdel.py), so usermod must refuse every round
        ruid, rgid, chroot = alice.uid, alice.gid, "/var/racer-root"
        uids = [alice.uid, 4242]
    else:
        mallory = sb.getpwnam("mallory")
        ruid, rgid, chroot = mallory.uid, mallory.gid, None
        uids = [alice.uid, 4242]
    cfg = {"dir": "/home/alice/swap", "chroot": chroot, "racer_uid": ruid,
           "racer_gid": rgid, "victims": ["/root-secret", "/home/bob/bobs"],
           "seconds": 40, "rounds": 300, "uids": uids, "user": "alice",
           "usermod": USERMOD}
    sb.write("/root/race.py", DRIVER, mode=0o700)
    res = sb.run(["/usr/bin/python3", "/root/race.py", json.dumps(cfg)], timeout=90,
                 check=False)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["changed"] == [], out
    if racer == "owner-in-chroot":
        assert out["rounds"] == 0 and out["codes"].get("8"), out
    else:
        assert out["rounds"] >= 50, out
    for p, who in (("/root-secret", (0, 0, 0o600)), ("/home/bob/bobs",
                                                     (bob.uid, bob.gid, 0o640))):
        st = sb.lstat(p)
        assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == who, p


# ------------------------------------------------- an entry swapped during the walk

SWAP_DRIVER = r'''
import ctypes, json, os, subprocess, sys, time

cfg = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
SYS_renameat2, RENAME_EXCHANGE = 316, 2
pid = os.fork()
if pid == 0:
    # another user's process with an fd to a directory of the home writable to others:
    # taking the home away does not stop it renaming in there
    fd = os.open(cfg["dir"], os.O_RDONLY | os.O_DIRECTORY)
    os.setgroups([])
    os.setgid(cfg["racer_gid"])
    os.setuid(cfg["racer_uid"])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        st = os.lstat(cfg["home"])
        if st.st_uid == 0 and st.st_mode & 0o7777 == 0o700:
            break
        time.sleep(0.005)
    # the walker has checked "swapped" by now and waits (strace) before its open
    time.sleep(1)
    r = libc.syscall(SYS_renameat2, fd, b"swapped", fd, b"other", RENAME_EXCHANGE)
    os._exit(0 if r == 0 else 3)
# the walker's open of "swapped" held back 3 s: the racer swaps it meanwhile
r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-P", "swapped",
                    "-e", "trace=openat", "-e", "inject=openat:delay_enter=3000000:when=1"]
                   + cfg["argv"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   text=True)
_, status = os.waitpid(pid, 0)
print(json.dumps({"rc": r.returncode, "stderr": r.stderr, "racer": status}))
'''


@pytest.mark.parametrize("tool", ["userdel", "usermod"])
def test_an_entry_swapped_during_the_walk_hands_the_home_back(two, tool):
    """mallory keeps an fd to pub/, a directory of alice's home writable to others, and
    exchanges two directories there between the walker's check of one and its open (the
    walker refuses it: HS_WALK_SWAPPED, -ESTALE).  The home must not stay taken away
    (root's 0700, alice locked out of it): userdel -r hands it back to alice as it was,
    nothing removed, and names the entry; usermod -u walks the home again, which finds
    the swap over, re-owns everything and hands it to the new uid (exit 0).  userdel -r
    used to leave it root's 0700."""
    sb = two
    alice = sb.getpwnam("alice")
    mallory = sb.getpwnam("mallory")
    sb.sh("mkdir -m 0777 /home/alice/pub && echo mine >/home/alice/own", user="alice")
    sb.sh("mkdir /home/alice/pub/swapped /home/alice/pub/other", user="mallory")
    before = sb.lstat("/home/alice")
    argv = [USERDEL, "-r", "alice"] if tool == "userdel" else [USERMOD, "-u", "4242", "alice"]
    cfg = {"dir": "/home/alice/pub", "home": "/home/alice", "racer_uid": mallory.uid,
           "racer_gid": mallory.gid, "argv": argv}
    sb.write("/root/swap.py", SWAP_DRIVER, mode=0o700)
    res = sb.run(["/usr/bin/python3", "/root/swap.py", json.dumps(cfg)], timeout=60)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["racer"] == 0, out
    assert out["rc"] == (12 if tool == "userdel" else 0), out
    lines = [l for l in out["stderr"].splitlines() if "/home/alice" in l]
    st = sb.lstat("/home/alice")
    if tool == "userdel":
        assert lines == ["userdel: not removing directory /home/alice: an entry was "
                         "replaced during the walk at /home/alice/pub/swapped"], out
        assert (st.st_uid, st.st_gid, st.st_mode) == \
            (alice.uid, alice.gid, before.st_mode), st
        assert sb.read("/home/alice/own") == "mine\n"
        assert sb.getpwnam("alice") is None
    else:
        assert lines == [], out
        assert (st.st_uid, st.st_mode) == (4242, before.st_mode), st
        assert sb.lstat("/home/alice/own").st_uid == 4242
        assert sb.lstat("/home/alice/pub").st_uid == 4242
    assert not sb.exists("/etc/.hardened-shadow.txn")


# The walker's open of the directory "sub" of alice's home fails as a swap makes it fail
# (ELOOP: O_NOFOLLOW|O_DIRECTORY on what became a symlink), deterministically: on its
# first open only, or on every one (a process that keeps swapping there)
def swap_sub(times):
    return ["strace", "-f", "-qq", "-o", "/dev/null", "-P", "sub", "-e", "trace=openat",
            "-e", "inject=openat:error=ELOOP" + (":when=1" if times == 1 else "")]


def alice_with_a_file_below_sub(sb):
    alice = sb.getpwnam("alice")
    sb.sh("mkdir /home/alice/sub && echo secret >/home/alice/sub/secret && "
          "echo mine >/home/alice/own", user="alice")
    return alice, sb.lstat("/home/alice")


def home_taken_record(sb):
    res = sb.run(["/usr/bin/python3", "-c", "import os\ntry:\n print(os.getxattr("
                  "'/home/alice', 'trusted.hardened-shadow.home-taken').decode())\n"
                  "except OSError:\n print('none')"])
    return res.stdout.strip()


def test_usermod_u_walks_again_past_an_entry_swapped_once(two):
    """usermod -u 4242 alice meets sub/ replaced during its walk, once: the file of
    alice's below it must not keep her old uid, free from now on for the next useradd
    (whose account would own it).  A second pass re-owns it; nothing to say, exit 0.
    usermod used to skip sub/ with a warning, hand the home back and drop its record
    (exit 12): sub/secret kept the old uid, and a rerun did nothing."""
    sb = two
    alice, before = alice_with_a_file_below_sub(sb)
    res = sb.run(swap_sub(1) + [USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 0, res
    assert res.stderr == "", res
    for path in ("/home/alice", "/home/alice/sub", "/home/alice/sub/secret",
                 "/home/alice/own"):
        assert sb.lstat(path).st_uid == 4242, path
    assert sb.lstat("/home/alice").st_mode == before.st_mode
    assert home_taken_record(sb) == "none"


def test_usermod_u_keeps_the_home_taken_while_an_entry_stays_swapped(two):
    """sub/ is found replaced on every pass of usermod -u 4242 alice: the home stays
    root's 0700 with its record (the old uid's files out of reach of the next owner of
    that uid), said in one more line, exit 12; usermod -u 4242 alice again, the swapping
    over, re-owns sub/secret and hands the home to 4242 as it was.  usermod used to hand
    the home back with sub/secret still the old uid's, and a rerun did nothing."""
    sb = two
    alice, before = alice_with_a_file_below_sub(sb)
    res = sb.run(swap_sub(0) + [USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 12, res
    assert [l for l in res.stderr.splitlines() if "/home/alice" in l] == [
        "usermod: cannot change the owner of /home/alice/sub: it was replaced during "
        "the walk",
        "usermod: /home/alice stays root's: run usermod -u again on the account once "
        "whatever renames entries in it is stopped"], res
    st = sb.lstat("/home/alice")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o700), st
    assert home_taken_record(sb) != "none"
    assert sb.getpwnam("alice").uid == 4242
    assert sb.lstat("/home/alice/own").st_uid == 4242
    res = sb.run([USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 0, res
    for path in ("/home/alice", "/home/alice/sub", "/home/alice/sub/secret",
                 "/home/alice/own"):
        assert sb.lstat(path).st_uid == 4242, path
    st = sb.lstat("/home/alice")
    assert (st.st_gid, st.st_mode) == (before.st_gid, before.st_mode), st
    assert home_taken_record(sb) == "none"
    assert sb.read("/home/alice/sub/secret") == "secret\n"
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_usermod_u_says_what_a_later_pass_meets_first(two):
    """sub/ is found replaced on the first pass of usermod -u 4242 alice only, so the
    second pass is the first to see what is below it: a hard link there (left with the
    old uid, free from now on) and a nest too deep to walk (its files too) must be said
    as the first pass says them, the nest counted (exit 12).  The second pass used to
    say nothing at all: exit 0, no line, old-uid files left behind unsaid."""
    sb = two
    sb.getpwnam("alice")
    deep = "/".join(["d"] * 70)
    sb.sh("mkdir /home/alice/sub && echo x >/home/alice/sub/a && "
          "ln /home/alice/sub/a /home/alice/sub/b && mkdir -p /home/alice/sub/" + deep,
          user="alice")
    res = sb.run(swap_sub(1) + [USERMOD, "-u", "4242", "alice"], check=False)
    assert res.returncode == 12, res
    lines = res.stderr.splitlines()
    assert sorted(l for l in lines if "more than one link" in l) == [
        "usermod: warning: not changing the owner of /home/alice/sub/%s: it has more "
        "than one link" % n for n in ("a", "b")], res
    assert len([l for l in lines if l.endswith("nested too deeply")]) == 1, res
    assert lines[-1] == ("usermod: failed to change ownership of 1 entries in the home "
                         "directory /home/alice"), res


# ------------------------------------- a home whose parent's owner renames it meanwhile

PARENT_SWAP_DRIVER = r'''
import json, os, subprocess, sys, time

cfg = json.loads(sys.argv[1])
pid = os.fork()
if pid == 0:
    # the owner of the homes' parent: once alice's home is taken away, it goes aside and
    # bob's directory takes its name
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if os.lstat("/srv/c/alice").st_uid == 0:
            break
        time.sleep(0.005)
    time.sleep(1)
    os.rename("/srv/c/alice", "/srv/c/aside")
    os.rename("/srv/c/bob", "/srv/c/alice")
    os._exit(0)
# the journal's work takes the home away (fchown to root, then fchmod 0700: the seventh
# fchmod, after one for each of the six staged files; the journal, made at its mode,
# gets none); that fchmod is held back 3 s, and the racer swaps the names meanwhile.
# Landlock (which confines the removal to the home it opened) is made absent, as on a
# kernel without it
r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null",
                    "-e", "trace=fchmod,landlock_create_ruleset",
                    "-e", "inject=fchmod:delay_exit=3000000:when=7",
                    "-e", "inject=landlock_create_ruleset:error=ENOSYS",
                    cfg["userdel"], "-r", "alice"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
_, status = os.waitpid(pid, 0)
print(json.dumps({"rc": r.returncode, "stderr": r.stderr, "racer": status}))
'''


def test_userdel_r_removes_only_the_home_it_took_away(two):
    """alice's home is /srv/c/alice, in a directory of carol's (trusted for alice: not
    hers, not writable by others), where bob has a directory too.  Once userdel -r alice
    has opened and taken the home away, carol renames it aside and bob's directory to
    its name.  userdel must not remove bob's files: it walked the name again and, without
    Landlock, removed bob's whole directory (exit 0), alice's home left root's 0700."""
    sb = two
    sb.add_classic_user("carol", password="carol-pw-1")
    carol, bob, alice = sb.getpwnam("carol"), sb.getpwnam("bob"), sb.getpwnam("alice")
    sb.sh("mkdir -p /srv/c && chown carol: /srv/c && chmod 0755 /srv/c && "
          "mkdir /srv/c/alice && echo a >/srv/c/alice/own && chown -R alice: /srv/c/alice && "
          "mkdir /srv/c/bob && echo keep >/srv/c/bob/bobs && chown -R bob: /srv/c/bob && "
          "chmod 0755 /srv/c/bob && usermod -d /srv/c/alice alice")
    sb.write("/root/swap.py", PARENT_SWAP_DRIVER, mode=0o700)
    cfg = {"uid": carol.uid, "gid": carol.gid, "userdel": USERDEL}
    res = sb.run(["/usr/bin/python3", "/root/swap.py", json.dumps(cfg)], timeout=60,
                 check=False)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["racer"] == 0, out
    assert sb.read("/srv/c/alice/bobs") == "keep\n", out
    assert sb.lstat("/srv/c/alice").st_uid == bob.uid, out
    assert out["rc"] == 12, out
    assert "userdel: not removing directory /srv/c/alice: it was replaced by another " \
        "directory during the removal; left alone" in out["stderr"].splitlines(), out
    # and alice's home, moved aside, is hers again, not root's 0700
    st = sb.lstat("/srv/c/aside")
    assert (st.st_uid, st.st_mode & 0o7777) == (alice.uid, 0o755) and \
        sb.read("/srv/c/aside/own") == "a\n", (st, out)


# ------------------------------------------- a FUSE file system whose daemon never answers

STALLED_FUSE_DRIVER = r'''
import ctypes, json, os, subprocess, sys, time

cfg = json.loads(sys.argv[1])
# the user's FUSE file system, mounted with allow_other (fusermount lets users do so
# where fuse.conf says user_allow_other), whose daemon is alive and never answers: the
# kernel's first request to it (FUSE_INIT) stays unanswered, so every later one waits
fd = os.open("/dev/fuse", os.O_RDWR)
opts = "fd=%d,rootmode=40000,user_id=%d,group_id=%d,allow_other" % (fd, cfg["uid"],
                                                                    cfg["gid"])
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b"fuse", cfg["path"].encode(), b"fuse", 0, opts.encode()) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
proc = subprocess.Popen(cfg["argv"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                        text=True)
try:
    _, err = proc.communicate(timeout=cfg["seconds"])
    hung = False
except subprocess.TimeoutExpired:
    proc.kill()
    hung = True
# the daemon goes: its requests fail (ENOTCONN), the killed tool can finish dying
os.close(fd)
if hung:
    _, err = proc.communicate()
libc.umount2(cfg["path"].encode(), 2)
print(json.dumps({"hung": hung, "rc": proc.returncode, "stderr": err}))
'''


def stalled_fuse(sb, path, argv):
    """Run argv while the user's FUSE file system whose daemon never answers is mounted at
    path: what it said and whether it hung."""
    alice = sb.getpwnam("alice")
    if not __import__("os").path.exists("/dev/fuse"):
        pytest.skip("no FUSE on this machine")
    if not sb.exists("/dev/fuse"):
        sb.sh("mknod -m 0666 /dev/fuse c 10 229")
    cfg = {"path": path, "uid": alice.uid, "gid": alice.gid, "argv": argv, "seconds": 8}
    sb.write("/root/stalled.py", STALLED_FUSE_DRIVER, mode=0o700)
    res = sb.run(["/usr/bin/python3", "/root/stalled.py", json.dumps(cfg)], timeout=60)
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("tool", ["userdel", "usermod"])
def test_a_stalled_fuse_mount_inside_the_home_is_refused_without_waiting_for_it(two, tool):
    """alice mounts her own FUSE file system with allow_other on ~/mnt, and its daemon
    never answers.  The walker met it as a mount point only after asking its file system
    for the attributes of its root (a statx that syncs them): that request waited for the
    daemon for ever, and userdel -r or usermod -u hung, holding the lock of /etc/passwd
    (every account tool of the machine then timed out).  The mount is told from what
    the kernel has cached, as for a home that is a mount point, and refused unasked."""
    sb = two
    alice = sb.getpwnam("alice")
    sb.sh("mkdir /home/alice/mnt && echo mine >/home/alice/own", user="alice")
    argv = [USERDEL, "-r", "alice"] if tool == "userdel" else [USERMOD, "-u", "4242", "alice"]
    out = stalled_fuse(sb, "/home/alice/mnt", argv)
    assert not out["hung"], out
    said = [l for l in out["stderr"].splitlines() if "/home/alice" in l]
    if tool == "userdel":
        assert out["rc"] == 12, out
        assert said == ["userdel: not removing directory /home/alice: a file system is "
                        "mounted at /home/alice/mnt"], out
        assert sb.read("/home/alice/own") == "mine\n"
        assert sb.lstat("/home/alice").st_uid == alice.uid
    else:
        assert out["rc"] == 0, out
        assert said == ["usermod: warning: not changing the owner of files in "
                        "/home/alice/mnt: it is a mount point"], out
        assert sb.lstat("/home/alice/own").st_uid == 4242
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_userdel_r_leaves_a_stalled_fuse_mount_on_the_home_without_waiting_for_it(two):
    """The same FUSE file system mounted on alice's home itself: userdel -r looked at the
    home with lstat() (to confine itself to it) before it asked whether it is a mount
    point, and waited for the daemon for ever, holding the lock of /etc/passwd.  It says
    the home is a mount point, as for one whose daemon is dead, and leaves it."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("echo under >/home/alice/under", user="alice")
    out = stalled_fuse(sb, "/home/alice", [USERDEL, "-r", "alice"])
    assert not out["hung"], out
    assert out["rc"] == 12, out
    assert [l for l in out["stderr"].splitlines() if "/home/alice" in l] == [
        "userdel: not removing directory /home/alice: a file system is mounted at "
        "/home/alice"], out
    assert sb.getpwnam("alice") is None
    # the directory under the mount untouched
    assert sb.lstat("/home/alice").st_uid == uid
    assert sb.read("/home/alice/under") == "under\n"
    assert not sb.exists("/etc/.hardened-shadow.txn")



@pytest.mark.parametrize("opt", ["-u", "-g"])
def test_usermod_leaves_a_stalled_fuse_mount_on_the_home_without_waiting_for_it(two, opt):
    """alice's own FUSE file system (allow_other) mounted on her home itself, its daemon
    never answering: usermod -u (or -g) looked at the home with a synced stat before
    re-owning it and waited for the daemon for ever, holding the lock of /etc/passwd.  A
    file system its user mounted is that user's (its daemon answers a chown as it likes):
    not re-owned, not asked, and said; the change of id itself is made."""
    sb = two
    uid = sb.getpwnam("alice").uid
    sb.sh("echo under >/home/alice/under", user="alice")
    argv = [USERMOD, opt, "4242" if opt == "-u" else "0", "alice"]
    out = stalled_fuse(sb, "/home/alice", argv)
    assert not out["hung"], out
    assert out["rc"] == 12, out
    assert [l for l in out["stderr"].splitlines() if "/home/alice" in l] == [
        "usermod: not changing the owner of files in /home/alice: a file system "
        "its user mounted is there"], out
    if opt == "-u":
        assert sb.getpwnam("alice").uid == 4242
    else:
        assert sb.getpwnam("alice").gid == 0
    # the directory under the mount untouched
    assert sb.lstat("/home/alice").st_uid == uid
    assert sb.lstat("/home/alice/under").st_uid == uid
    assert not sb.exists("/etc/.hardened-shadow.txn")

@pytest.mark.parametrize("attr", ["i", "a"])
def test_userdel_r_removes_nothing_of_a_home_holding_an_immutable_entry(two, attr):
    """An administrator made a file deep in alice's home immutable (chattr +i; or its
    directory append-only, +a): root cannot unlink it.  userdel -r said "not removing
    directory /home/alice" and handed the home back, but had removed everything the walk
    met before that entry: the home half gone.  The check before the removal refuses it
    as it refuses a mount point inside, and nothing goes."""
    sb = two
    alice = sb.getpwnam("alice")
    sb.sh("mkdir -p /home/alice/a/b && echo x >/home/alice/a/b/f && echo y >/home/alice/z "
          "&& echo w >/home/alice/a/w", user="alice")
    target = "/home/alice/a/b/f" if attr == "i" else "/home/alice/a/b"
    res = sb.sh("chattr +%s %s" % (attr, target), check=False)
    if res.returncode != 0:
        pytest.skip("no chattr +%s on this file system: %s" % (attr, res.stderr))
    before = sb.lstat("/home/alice")
    try:
        res = sb.run([USERDEL, "-r", "alice"], check=False)
        assert res.returncode == 12, res
        assert [l for l in res.stderr.splitlines() if "/home/alice" in l] == [
            "userdel: not removing directory /home/alice: Operation not permitted at "
            "%s" % ("/home/alice/a/b/f" if attr == "i" else "/home/alice/a/b")], res
        for path, text in (("/home/alice/z", "y\n"), ("/home/alice/a/w", "w\n"),
                           ("/home/alice/a/b/f", "x\n")):
            assert sb.read(path) == text, path
        st = sb.lstat("/home/alice")
        assert (st.st_uid, st.st_gid, st.st_mode) == \
            (alice.uid, alice.gid, before.st_mode), st
        assert sb.getpwnam("alice") is None
        assert not sb.exists("/etc/.hardened-shadow.txn")
    finally:
        sb.sh("chattr -%s %s" % (attr, target), check=False)


MOVE_SWAP_DRIVER = r'''
import json, os, subprocess, sys, time

cfg = json.loads(sys.argv[1])
pid = os.fork()
if pid == 0:
    # the owner of the home's parent: while usermod is about to rename the home it
    # checked, it goes aside and a symlink to /etc takes its name
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    time.sleep(1)
    os.rename("/srv/c/alice", "/srv/c/aside")
    os.symlink("/etc", "/srv/c/alice")
    os._exit(0)
# the rename of the home (usermod's first renameat2) held back 3 s.  Landlock (which
# keeps the rename to the home it confined itself to) is made absent, as on a kernel
# without it
r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null",
                    "-e", "trace=renameat2,landlock_create_ruleset",
                    "-e", "inject=renameat2:delay_enter=3000000:when=1",
                    "-e", "inject=landlock_create_ruleset:error=ENOSYS",
                    cfg["usermod"], "-d", "/home/alice2", "-m", "alice"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
_, status = os.waitpid(pid, 0)
print(json.dumps({"rc": r.returncode, "stderr": r.stderr, "racer": status}))
'''


def test_usermod_m_moves_only_the_home_it_checked(two):
    """alice's home is /srv/c/alice, in a directory of carol's (trusted for alice: not
    hers, not writable by others).  Between usermod -d /home/alice2 -m's check that the
    home is a directory and its rename, carol puts a symlink to /etc in its place.  The
    rename goes by name: it moved carol's symlink into /home, where nobody but root may
    create anything, as alice's new home (exit 0), on a kernel without Landlock.  What
    was moved is checked to be what was looked at; it goes back, and usermod fails,
    changing nothing."""
    sb = two
    sb.add_classic_user("carol", password="carol-pw-1")
    carol = sb.getpwnam("carol")
    sb.sh("mkdir -p /srv/c && chown carol: /srv/c && chmod 0755 /srv/c && "
          "mkdir /srv/c/alice && echo a >/srv/c/alice/own && chown -R alice: /srv/c/alice && "
          "usermod -d /srv/c/alice alice")
    sb.write("/root/move.py", MOVE_SWAP_DRIVER, mode=0o700)
    cfg = {"uid": carol.uid, "gid": carol.gid, "usermod": USERMOD}
    res = sb.run(["/usr/bin/python3", "/root/move.py", json.dumps(cfg)], timeout=60,
                 check=False)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["racer"] == 0, out
    assert not sb.exists("/home/alice2"), out
    assert out["rc"] == 12, out
    assert out["stderr"].splitlines() == [
        "usermod: cannot move home directory /srv/c/alice: it was replaced during the "
        "move; left where it was"], out
    assert sb.getpwnam("alice").home == "/srv/c/alice"
    assert sb.sh("readlink /srv/c/alice").stdout == "/etc\n"
    assert sb.read("/srv/c/aside/own") == "a\n"
