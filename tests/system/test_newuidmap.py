"""newuidmap and newgidmap in a throwaway root, for real `unshare --user` children of real
unprivileged users: the ranges /etc/subuid and /etc/subgid grant (by name and by uid), the
caller's own id, setgroups (deny unless a range comes from /etc/subgid), a range outside
the grant, overlapping and overflowing ranges, someone else's process, a dead pid, fd:N,
a second write; and hostile callers (argc == 0, closed fds, RLIMIT_NOFILE of 3, a hostile
environment, 10,000-byte arguments, SIGKILL at random moments).

The kernel refuses CLONE_NEWUSER to a chrooted process, and sb.run enters the root with
chroot.  So the namespace child is started from outside: in a new mount namespace it
pivot_root()s into the sandbox's root (which is then its real root, not a chroot), becomes
the user with setpriv and runs the root's own `unshare --user`.  It is the same pid
namespace, so newuidmap (run inside the root as the same user) sees it in /proc."""

import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sandbox"))
import sandbox  # noqa: E402

NEWUIDMAP = "/usr/bin/newuidmap"
NEWGIDMAP = "/usr/bin/newgidmap"

# Runs in a new mount namespace (started by the test, outside any chroot) with $1 = the
# sandbox root: make that the real root, become the user, make the user namespace, then
# wait for a line on stdin and report what the namespace sees.
CHILD = r'''
set -e
cd "$1"
pivot_root . .
umount -l .
cd /
exec /usr/bin/setpriv --reuid="$2" --regid="$3" --init-groups -- \
    /usr/bin/unshare --user -- "$4" -c "$5"
'''
SH_INNER = "read go; id -u; id -g; cat /proc/self/setgroups"
# a second thread prints its thread id, and both wait for go()
THREADS_INNER = r"""
import os, sys, threading
go = threading.Event()
def wait():
    print(threading.get_native_id(), flush=True)
    go.wait()
t = threading.Thread(target=wait)
t.start()
sys.stdin.readline()
go.set()
t.join()
print(os.getuid(), os.getgid())
"""


class NsChild:
    """A process of user in a new user namespace, waiting for go()."""

    def __init__(self, sb, user, shell="/bin/sh", inner=SH_INNER):
        pw = sb.getpwnam(user)
        sb.enter_pid_namespace()
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", CHILD,
             "sh", sb.root, str(pw.uid), str(pw.gid), shell, inner],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, text=True)
        self.pid = self.proc.pid
        self.nspid = sb.ns_pid(self.pid)    # what newuidmap in the root is given
        # wait until it is in its own user namespace (unshare() done), else a map written
        # now would go to ours
        mine = os.readlink("/proc/self/ns/user")
        deadline = time.monotonic() + 10
        while True:
            try:
                if os.readlink("/proc/%d/ns/user" % self.pid) != mine:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("namespace child failed: %s" % self.proc.stderr.read())
            time.sleep(0.002)

    def read(self, name):
        with open("/proc/%d/%s" % (self.pid, name)) as f:
            return f.read()

    def maps(self):
        """uid_map and gid_map as lists of (inside, outside, count)."""
        return tuple([tuple(int(x) for x in l.split()) for l in self.read(n).splitlines()]
                     for n in ("uid_map", "gid_map"))

    def go(self):
        """Let it run: (uid, gid, setgroups) as seen inside."""
        out, err = self.proc.communicate("\n", timeout=10)
        assert self.proc.returncode == 0, err
        return out.split()

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.pid, signal.SIGKILL)
        self.proc.communicate()


@pytest.fixture(scope="module")
def msb(base):
    """alice: subuid/subgid 100000+65536 by name; carol: 300000+1000 by uid; bob: none;
    dave: 200000+65536 (next to alice's)."""
    with sandbox.Sandbox(base, size="256m") as sb:
        for name in ("alice", "bob", "carol", "dave"):
            sb.add_classic_user(name)
        carol = sb.getpwnam("carol").uid
        for f in ("/etc/subuid", "/etc/subgid"):
            sb.write(f, "alice:100000:65536\ndave:200000:65536\n%d:300000:1000\n"
                     "broken line\nalice:165536:10\n" % carol)
        yield sb


@pytest.fixture
def child(msb):
    made = []

    def make(user="alice", **kw):
        c = NsChild(msb, user, **kw)
        made.append(c)
        return c
    yield make
    for c in made:
        c.kill()


def run(sb, argv, user="alice", **kw):
    kw.setdefault("check", False)
    return sb.run(argv, user=user, **kw)


def ids(sb, user):
    pw = sb.getpwnam(user)
    return pw.uid, pw.gid


# ---------------------------------------------------------------- allowed

def test_installed_setuid_root(msb):
    for p in (NEWUIDMAP, NEWGIDMAP):
        st = msb.lstat(p)
        assert st.st_uid == 0 and st.st_mode & 0o7777 == 0o4755


def test_root_in_the_namespace_with_subordinate_ranges(msb, child):
    uid, gid = ids(msb, "alice")
    c = child()
    res = run(msb, [NEWUIDMAP, c.nspid, 0, uid, 1, 1, 100000, 65536])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    res = run(msb, [NEWGIDMAP, c.nspid, 0, gid, 1, 1, 100000, 65536])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert c.maps() == ([(0, uid, 1), (1, 100000, 65536)], [(0, gid, 1), (1, 100000, 65536)])
    # a range from /etc/subgid: setgroups stays allowed (containers need it)
    assert c.go() == ["0", "0", "allow"]


def test_own_gid_only_denies_setgroups(msb, child):
    uid, gid = ids(msb, "alice")
    c = child()
    assert run(msb, [NEWUIDMAP, c.nspid, 0, uid, 1]).returncode == 0
    res = run(msb, [NEWGIDMAP, c.nspid, 0, gid, 1])
    assert res.returncode == 0, res.stderr
    assert c.maps() == ([(0, uid, 1)], [(0, gid, 1)])
    assert c.go() == ["0", "0", "deny"]     # CVE-2018-7169


def test_grant_by_uid_and_spanning_adjacent_lines(msb, child):
    c = child("carol")
    assert run(msb, [NEWUIDMAP, c.nspid, 0, 300000, 1000], user="carol").returncode == 0
    c = child()
    # alice's two lines 100000+65536 and 165536+10 are adjacent: one range may span them
    res = run(msb, [NEWUIDMAP, c.nspid, 0, 100000, 65546])
    assert res.returncode == 0, res.stderr
    assert c.maps()[0] == [(0, 100000, 65546)]


def test_thread_id_target(msb, child):
    """A thread id names its thread's process, as in shadow-utils (pidfd_open refuses
    one)."""
    uid, gid = ids(msb, "alice")
    c = child(shell="/usr/bin/python3", inner=THREADS_INNER)
    tid = int(c.proc.stdout.readline())
    assert tid != c.nspid
    res = run(msb, [NEWUIDMAP, tid, 0, uid, 1])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    res = run(msb, [NEWGIDMAP, tid, 0, gid, 1])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert c.maps() == ([(0, uid, 1)], [(0, gid, 1)])
    assert c.go() == ["0", "0"]


def test_fd_target(msb, child):
    uid, _ = ids(msb, "alice")
    c = child()
    res = run(msb, ["/bin/sh", "-c", "exec 5</proc/%d && exec %s fd:5 0 %d 1"
                    % (c.nspid, NEWUIDMAP, uid)])
    assert res.returncode == 0, res.stderr
    assert c.maps()[0] == [(0, uid, 1)]
    # an fd that is not a /proc/PID directory
    res = run(msb, ["/bin/sh", "-c", "exec 5</etc/passwd && exec %s fd:5 0 %d 1"
                    % (NEWUIDMAP, uid)])
    assert res.returncode == 1 and "usage:" in res.stderr


# ---------------------------------------------------------------- refused

@pytest.mark.parametrize("prog,args,message", [
    # one past the grant
    (NEWUIDMAP, [0, 100000, 65547], "uid range [0-65547) -> [100000-165547) not allowed"),
    # dave's range
    (NEWUIDMAP, [0, 200000, 10], "uid range [0-10) -> [200000-200010) not allowed"),
    (NEWGIDMAP, [0, 200000, 10], "gid range [0-10) -> [200000-200010) not allowed"),
    # carol's (by uid), another user's own uid, root
    (NEWUIDMAP, [0, 300000, 1], "not allowed"),
    (NEWUIDMAP, [0, "BOB", 1], "not allowed"),
    (NEWUIDMAP, [0, 0, 1], "uid range [0-1) -> [0-1) not allowed"),
    # own id, but more than one
    (NEWUIDMAP, [0, "ALICE", 2], "not allowed"),
    (NEWUIDMAP, [0, 100000, 0], "uid range [0-0) -> [100000-100000) not allowed"),
    # overlap inside and outside the namespace
    (NEWUIDMAP, [0, 100000, 10, 5, 100020, 10],
     "uid range [5-15) -> [100020-100030) overlaps [0-10) -> [100000-100010)"),
    (NEWGIDMAP, [0, 100000, 10, 20, 100005, 10], "overlaps"),
    # overflow
    (NEWUIDMAP, [4294967290, 100000, 10], "subuid overflow detected."),
    (NEWUIDMAP, [0, 100000, 4294967295], "subuid overflow detected."),
    (NEWUIDMAP, [0, 100000, "99999999999999999999999"], "subuid overflow detected."),
    # not numbers, wrong counts: usage
    (NEWUIDMAP, [0, "0x186a0", 1], "usage: newuidmap <pid>"),
    (NEWUIDMAP, [0, "-1", 1], "usage: newuidmap <pid>"),
    (NEWUIDMAP, [0, 100000], "usage: newuidmap <pid>"),
    (NEWUIDMAP, [], "usage: newuidmap <pid>"),
])
def test_refused_ranges(msb, child, prog, args, message):
    uid, gid = ids(msb, "alice")
    bob, _ = ids(msb, "bob")
    args = [{"ALICE": uid, "BOB": bob}.get(a, a) for a in args]
    c = child()
    msb.syslog(clear=True)
    res = run(msb, [prog, c.nspid] + args)
    assert res.returncode == 1
    assert message in res.stderr, res.stderr
    assert res.stderr.startswith(os.path.basename(prog) + ": ") or \
        res.stderr.startswith("usage: ")
    # nothing written: both maps still empty and settable, setgroups untouched
    assert c.maps() == ([], [])
    assert c.read("setgroups") == "allow\n"
    if "not allowed" in message:
        assert "refused: alice" in "\n".join(msb.syslog())


def test_hard_link_to_subuid_elsewhere(msb, child):
    """Where fs.protected_hardlinks is 0 (the kernel's own default), any user may hard-link
    /etc/subuid and /etc/subgid into a directory of theirs on the same file system.  The
    second name changes nothing the file in /etc holds, so it must not cost every user
    their ranges.  The host's sysctl is not ours to change: root makes the links a user
    could make there."""
    uid, gid = ids(msb, "alice")
    links = ["/var/tmp/alice-subuid", "/var/tmp/alice-subgid"]
    msb.run(["/bin/ln", "/etc/subuid", links[0]])
    msb.run(["/bin/ln", "/etc/subgid", links[1]])
    try:
        c = child()
        res = run(msb, [NEWUIDMAP, c.nspid, 0, uid, 1, 1, 100000, 10])
        assert (res.returncode, res.stderr) == (0, "")
        res = run(msb, [NEWGIDMAP, c.nspid, 0, gid, 1, 1, 100000, 10])
        assert (res.returncode, res.stderr) == (0, "")
        assert c.maps() == ([(0, uid, 1), (1, 100000, 10)], [(0, gid, 1), (1, 100000, 10)])
        # still only alice's ranges
        c = child()
        res = run(msb, [NEWUIDMAP, c.nspid, 0, 200000, 10])
        assert res.returncode == 1 and "not allowed" in res.stderr
    finally:
        msb.run(["/bin/rm", "-f"] + links)


def test_someone_elses_process(msb, child):
    uid, _ = ids(msb, "alice")
    bobs = child("bob")
    res = run(msb, [NEWUIDMAP, bobs.nspid, 0, uid, 1])
    assert res.returncode == 1
    assert re.match(r"newuidmap: Target %d is owned by a different user: uid:%d pw_uid:%d "
                    r"st_uid:%d, " % (bobs.nspid, uid, uid, ids(msb, "bob")[0]), res.stderr)
    res = run(msb, [NEWGIDMAP, bobs.nspid, 0, ids(msb, "alice")[1], 1])
    assert res.returncode == 1 and "owned by a different user" in res.stderr
    assert bobs.maps() == ([], [])
    # a root process (pid 1 of the root's pid namespace)
    res = run(msb, [NEWUIDMAP, 1, 0, uid, 1])
    assert res.returncode == 1 and "owned by a different user" in res.stderr


def test_dead_and_invalid_pids(msb, child):
    uid, _ = ids(msb, "alice")
    c = child()
    c.kill()
    res = run(msb, [NEWUIDMAP, c.nspid, 0, uid, 1])
    assert res.returncode == 1
    assert "Could not open proc directory for target %d: No such process" % c.nspid \
        in res.stderr
    for bad in ("0", "-1", "01", "abc", "4294967296", "1" * 10000, "fd:", "fd:-1",
                "fd:99999"):
        res = run(msb, [NEWUIDMAP, bad, 0, uid, 1])
        assert res.returncode == 1 and "usage:" in res.stderr
        assert len(res.stderr) < 400


def test_second_write_is_refused_by_the_kernel(msb, child):
    uid, _ = ids(msb, "alice")
    c = child()
    assert run(msb, [NEWUIDMAP, c.nspid, 0, uid, 1]).returncode == 0
    res = run(msb, [NEWUIDMAP, c.nspid, 0, 100000, 1])
    assert res.returncode == 1
    assert res.stderr == "newuidmap: write to uid_map failed: Operation not permitted\n"
    assert c.maps()[0] == [(0, uid, 1)]


def test_many_ranges(msb, child):
    def ranges(n):
        args = []
        for i in range(n):
            args += [i, 100000 + i, 1]
        return args
    c = child()
    assert run(msb, [NEWUIDMAP, c.nspid] + ranges(250)).returncode == 0
    assert len(c.maps()[0]) == 250
    c = child()
    # the kernel's limits: the map in less than a page, at most 340 lines
    res = run(msb, [NEWUIDMAP, c.nspid] + ranges(340))
    assert res.returncode == 1 and "the map is too long" in res.stderr
    res = run(msb, [NEWUIDMAP, c.nspid] + ranges(341))
    assert res.returncode == 1 and "too many ranges" in res.stderr
    assert c.maps()[0] == []


def test_help_and_version(msb):
    res = run(msb, [NEWUIDMAP, "--help"])
    assert res.returncode == 0 and res.stdout.startswith("usage: newuidmap <pid> <uid>")
    res = run(msb, [NEWGIDMAP, "--version"])
    assert res.returncode == 0 and res.stdout.startswith("newgidmap (hardened-shadow) ")


# ---------------------------------------------------------------- hostile callers

def test_argc_zero(msb):
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "argv = (ctypes.c_char_p * 1)(None); env = (ctypes.c_char_p * 1)(None); "
            "libc.execve(%r.encode(), argv, env); os._exit(99)")
    for prog in (NEWUIDMAP, NEWGIDMAP):
        res = run(msb, ["/usr/bin/python3", "-c", code % prog])
        assert res.returncode == 1 and "argv[0]" in res.stderr


@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
def test_closed_standard_fds(msb, child, closed):
    uid, gid = ids(msb, "alice")
    c = child()
    res = run(msb, ["/bin/sh", "-c", "%s %d 0 %d 1 %s; echo rc=$?" % (NEWUIDMAP, c.nspid, uid,
                                                                        closed)])
    assert "rc=0" in res.stdout
    assert c.maps()[0] == [(0, uid, 1)]
    res = run(msb, ["/bin/sh", "-c", "%s %d 0 1 1 %s; echo rc=$?" % (NEWGIDMAP, c.nspid, closed)])
    assert "rc=1" in res.stdout
    assert c.maps()[1] == []


def test_rlimit_nofile_3(msb, child):
    uid, _ = ids(msb, "alice")
    c = child()
    res = run(msb, ["prlimit", "--nofile=3:3", NEWUIDMAP, c.nspid, 0, uid, 1])
    assert res.returncode != 0
    assert c.maps()[0] == []


def test_hostile_environment(msb, child):
    uid, _ = ids(msb, "alice")
    c = child()
    env = ["LD_PRELOAD=/nonexistent/evil.so", "LANG=../../tmp/x", "LC_ALL=/etc",
           "TZ=../../etc/shadow", "NLSPATH=/tmp/%N", "HUGE=" + "x" * 100000]
    # through env(1), so only our program sees them (not chroot and setpriv)
    res = run(msb, ["env"] + env + [NEWUIDMAP, c.nspid, 0, uid, 1])
    assert (res.returncode, res.stderr) == (0, "")
    assert c.maps()[0] == [(0, uid, 1)]


def test_sigkill_at_random_moments(msb, child):
    """A map is written in one write: killed at any moment, the map is either empty or
    complete, and no process of ours is left."""
    uid, _ = ids(msb, "alice")
    rnd = random.Random(7)
    for delay in [0, 0.0005, 0.001, 0.002] + [rnd.uniform(0, 0.01) for _ in range(4)]:
        c = child()
        cmd, _ = msb._wrap([NEWUIDMAP, c.nspid, 0, uid, 1, 1, 100000, 65536], "alice", "/")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        assert c.maps()[0] in ([], [(0, uid, 1), (1, 100000, 65536)])
        c.kill()
        # the killed group is gone
        try:
            os.killpg(p.pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive
