"""Our tools next to systemd-sysusers (and shadow-utils' useradd) on a converted root.

The requirement: our tools run at the same time as shadow-utils' own useradd and
systemd-sysusers without losing an entry.  DESIGN section 4: all of them lock
/etc/.pwd.lock with fcntl.  systemd-sysusers (252) takes only that lock (a whole-file
POSIX write lock, F_SETLKW: it waits without limit), re-reads the files under it and
replaces them by rename; our tools hold the same lock as an OFD lock, which conflicts
with POSIX locks; shadow-utils takes it through lckpwdf() and then its FILE.lock files.

- the lock is honoured in both directions (a held lock stops sysusers and our useradd
  until it is released; a sysusers run waits for our useradd's commit);
- loops of sysusers, our useradd (system and normal accounts, memberships), usermod,
  groupadd (when ours is installed) and shadow-utils' useradd run at the same time and
  no entry is lost or duplicated, no id is handed out twice, and the account state is
  consistent (consistency.py, with the other tools' accounts as `foreign`: they have no
  directory in the tree).
"""

import fcntl
import os
import subprocess
import time

import pytest

import consistency

SYSUSERS = "/usr/bin/systemd-sysusers"
USERADD = "/usr/sbin/useradd"
USERMOD = "/usr/sbin/usermod"
GROUPADD = "/usr/sbin/groupadd"
CLASSIC_USERADD = "/usr/libexec/hs-test/shadow-utils/useradd"
CLASSIC_GROUPADD = "/usr/libexec/hs-test/shadow-utils/groupadd"
TREE = consistency.TREE

pytestmark = pytest.mark.skipif(not os.path.exists(SYSUSERS),
                                reason="systemd-sysusers is not installed")


@pytest.fixture
def tsb(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.run([CLASSIC_GROUPADD, "-g", "5000", "proj"])
    sb.use_hardened_tree()
    return sb


def names(sb, path):
    if not sb.exists(path):
        return []
    return [l.split(":")[0] for l in sb.read(path).splitlines()]


def entry(sb, path, name):
    for l in sb.read(path).splitlines():
        if l.split(":")[0] == name:
            return l.split(":")
    return None


def popen(sb, argv):
    sb.enter_pid_namespace()
    return subprocess.Popen(["/usr/sbin/chroot", sb.root] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"})


def still_running(proc, seconds):
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return True
    return False


def finish(proc, timeout=30):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, (proc.args, proc.returncode, out, err)
    return out, err


def ours(sb, tool):
    """Is the root's tool ours (shadow-utils' has no --version)?"""
    r = sb.run([tool, "--version"], check=False)
    return r.returncode == 0 and "hardened-shadow" in r.stdout


# ---------------------------------------------------------------- the lock itself

def test_a_held_pwd_lock_stops_sysusers_and_useradd(tsb):
    """A process holding /etc/.pwd.lock the way lckpwdf() and sysusers do (a POSIX write
    lock on the whole file) stops both until it lets go; then both finish and both
    entries are there."""
    sb = tsb
    fd = os.open(os.path.join(sb.root, "etc/.pwd.lock"), os.O_RDWR | os.O_NOFOLLOW)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        sysu = popen(sb, [SYSUSERS, "--inline", "u held-sys - \"held\""])
        ours_ = popen(sb, [USERADD, "held-ours"])
        assert still_running(sysu, 0.7) and still_running(ours_, 0.1)
        assert "held-sys" not in names(sb, "/etc/passwd")
        assert "held-ours" not in names(sb, "/etc/passwd")
    finally:
        os.close(fd)        # drops the lock
    finish(sysu)
    finish(ours_)
    got = names(sb, "/etc/passwd")
    assert got.count("held-sys") == 1 and got.count("held-ours") == 1
    consistency.assert_consistent(sb, foreign=("held-sys",))


def test_sysusers_waits_for_our_commit(tsb):
    """Our useradd, slowed down (strace delays its rename of /etc/passwd by 1 s) while it
    holds the lock: a sysusers started meanwhile finishes only after it, and keeps its
    entry (it re-read the files under the lock)."""
    sb = tsb
    slow = popen(sb, ["/usr/bin/strace", "-f", "-o", "/dev/null", "-e", "trace=renameat2",
                      "-e", "inject=renameat2:delay_enter=1000000:when=%d" % renames(sb),
                      USERADD, "slow-ours"])
    deadline = time.monotonic() + 10
    while not any(n.startswith("passwd.lock") for n in os.listdir(os.path.join(sb.root,
                                                                               "etc"))):
        assert time.monotonic() < deadline and slow.poll() is None, slow.communicate()
        time.sleep(0.01)
    sysu = popen(sb, [SYSUSERS, "--inline", "u after-sys - \"after\""])
    # ours holds the lock for at least another second
    assert still_running(sysu, 0.3), ("sysusers did not wait for the lock",
                                      sysu.communicate())
    finish(slow)
    finish(sysu)
    got = names(sb, "/etc/passwd")
    assert got.index("slow-ours") < got.index("after-sys")
    consistency.assert_consistent(sb, foreign=("after-sys",))


def renames(sb):
    """How many renameat2() calls our useradd makes up to the one that puts the new
    /etc/passwd in place (lib/etc/txn.c exchanges it with the staged file)."""
    r = sb.run(["/usr/bin/strace", "-f", "-o", "/tmp/renames", "-e", "trace=renameat2",
                USERADD, "probe-user"])
    n = [l for l in sb.read("/tmp/renames").splitlines() if "renameat2(" in l]
    idx = next(i for i, l in enumerate(n)
               if l.rstrip().endswith('"passwd", RENAME_EXCHANGE) = 0'))
    sb.run(["/usr/sbin/userdel", "probe-user"])
    assert r.returncode == 0
    return idx + 1


# ---------------------------------------------------------------- all at once

N = 12


def test_everything_at_once_loses_nothing(tsb):
    sb = tsb
    groupadd = ours(sb, GROUPADD)
    loops = {
        "sysusers": "for i in $(seq %d); do %s --inline \"u sysu$i - \\\"Sys $i\\\"\" "
                    "\"g sysg$i -\" \"m sysu$i sysg$i\" \"m alice sysg$i\"; echo \"rc $?\"; done"
                    % (N, SYSUSERS),
        "useradd": "for i in $(seq %d); do %s -G proj ours$i; echo \"rc $?\"; "
                   "%s -r oursys$i; echo \"rc $?\"; done" % (N, USERADD, USERADD),
        "usermod": "for i in $(seq %d); do %s -c \"round $i\" alice; echo \"rc $?\"; "
                   "%s -a -G sysg$i alice 2>/dev/null; echo \"ok\"; done"
                   % (N, USERMOD, USERMOD),
        "debian": "for i in $(seq %d); do %s deb$i; echo \"rc $?\"; done"
                  % (N, CLASSIC_USERADD),
    }
    if groupadd:
        loops["groupadd"] = "for i in $(seq %d); do %s grp$i; echo \"rc $?\"; done" % (
            N, GROUPADD)
    procs = {k: popen(sb, ["/bin/sh", "-c", v]) for k, v in loops.items()}
    outs = {}
    for k, p in procs.items():
        out, err = p.communicate(timeout=120)
        outs[k] = out
        rcs = [l for l in out.splitlines() if l.startswith("rc ")]
        assert rcs and set(rcs) == {"rc 0"}, (k, out, err)

    passwd = names(sb, "/etc/passwd")
    group = names(sb, "/etc/group")
    gshadow = names(sb, "/etc/gshadow")
    for i in range(1, N + 1):
        for n in ("sysu%d" % i, "ours%d" % i, "oursys%d" % i, "deb%d" % i):
            assert passwd.count(n) == 1, n
        for n in ("sysg%d" % i, "sysu%d" % i, "ours%d" % i, "oursys%d" % i, "deb%d" % i) + \
                (("grp%d" % i,) if groupadd else ()):
            assert group.count(n) == 1, n
            assert gshadow.count(n) == 1, n
        # our directories, and memberships nobody dropped
        assert sb.exists("%s/ours%d/shadow" % (TREE, i))
        assert sb.exists("%s/oursys%d/shadow" % (TREE, i))
        assert "sysu%d" % i in entry(sb, "/etc/group", "sysg%d" % i)[3].split(",")
    assert sorted(entry(sb, "/etc/group", "proj")[3].split(",")) == \
        sorted("ours%d" % i for i in range(1, N + 1))
    # alice: every sysusers 'm' line and every usermod -a -G that found its group
    alice_groups = [g for g in range(1, N + 1)
                    if "alice" in entry(sb, "/etc/group", "sysg%d" % g)[3].split(",")]
    assert len(alice_groups) == N
    assert entry(sb, "/etc/passwd", "alice")[4] == "round %d" % N
    # no id handed out twice
    uids = [l.split(":")[2] for l in sb.read("/etc/passwd").splitlines()]
    gids = [l.split(":")[2] for l in sb.read("/etc/group").splitlines()]
    assert len(uids) == len(set(uids))
    assert len(gids) == len(set(gids))
    for sub in ("/etc/subuid", "/etc/subgid"):
        starts = [l.split(":")[1] for l in sb.read(sub).splitlines()]
        assert len(starts) == len(set(starts))
    foreign = [n for n in passwd if n.startswith(("sysu", "deb"))]
    consistency.assert_consistent(sb, foreign=foreign)
    # nothing half-done was left behind by anyone
    etc = os.listdir(os.path.join(sb.root, "etc"))
    assert not [n for n in etc if n.startswith(".#")], etc    # FILE.lock: the checker above
