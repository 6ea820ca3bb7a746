"""newgrp and sg check a group password one guess at a time per caller.

A non-member's sg or newgrp takes the caller's guess lock (the one the password helper and
the PAM module take: an flock on the aging file of the caller's own directory, or, for a
caller without one, a byte of /etc/gshadow numbered by their uid) before the hash and
keeps it through the failure delay, in a guard process the caller cannot signal.  Guesses
started in parallel run one after the other, a guess killed once its hash is done still
costs the delay, and a caller who stops their own sg delays only their own guesses, not
another user's sg of the same group.  Each test runs without the tree ("classic": the
gshadow byte) and with it ("tree": the aging flock)."""

import os
import signal
import subprocess
import time

import pytest

import sandbox
import test_lock_window as tlw
import test_passwd as tp
from ptyproc import Pty

SG = "/usr/bin/sg"
DEVS_PW = "devs-pw-7"
DELAY = 1.0          # HS_NEWGRP_FAIL_DELAY_MS
SLACK = 0.3


@pytest.fixture(params=["classic", "tree"])
def gs(sb, request):
    """alice, bob, carol: none a member of devs, which has a password."""
    for name in ("alice", "bob", "carol"):
        sb.add_classic_user(name)
    sb.run([sandbox.CLASSIC_TOOLS_DIR + "/groupadd", "-g", "2001", "-p",
            sandbox._crypt(DEVS_PW), "devs"])
    if request.param == "tree":
        tp.convert(sb)
        assert sb.exists("%s/alice/aging" % tp.TREE)
    sb.mode = request.param
    return sb


def start_sg(sb, user, password, strace=None):
    """user's `sg devs -c 'echo DONE'`, the password on standard input (no terminal).
    strace: an inject= expression; the Popen and the pid of sg."""
    argv = [SG, "devs", "-c", "echo DONE"]
    if strace:
        pw = sb.getpwnam(user)
        argv = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", strace, "/usr/bin/setpriv",
                "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid, "--init-groups", "--"] + argv
        user = None
    cmd, _ = sb._wrap(argv, user, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    proc.stdin.write(password + "\n")
    proc.stdin.close()
    proc.stdin = None
    return proc, (tlw.tracee_of(proc.pid, "sg") if strace else proc.pid)


def lock_inode(sb, user):
    """The inode of the file user's guess lock is on."""
    path = "%s/%s/aging" % (tp.TREE, user) if sb.mode == "tree" else "/etc/gshadow"
    return os.stat(os.path.join(sb.root, path.lstrip("/"))).st_ino


def lock_held(ino):
    """Is a flock or an open file description's record lock held on inode ino?"""
    with open("/proc/locks") as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[1] in ("FLOCK", "OFDLCK") and w[5].endswith(":%d" % ino):
                return True
    return False


def wait_until(cond, what, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(what)


def test_parallel_guesses_of_one_caller_run_one_after_the_other(gs):
    # each wrong guess holds bob's lock through its delay: three typed at once on three
    # terminals take three delays, not one
    ptys = [Pty(gs, [SG, "devs", "-c", "echo DONE"], user="bob") for _ in range(3)]
    try:
        for p in ptys:
            p.expect(r"Password: ")
        start = time.monotonic()
        for i, p in enumerate(ptys):
            p.send("wrong-guess-%d\n" % i)
        for p in ptys:
            p.expect(r"Invalid password\.", timeout=60)
            assert p.wait(timeout=30) == 1, p.output
        took = time.monotonic() - start
    finally:
        for p in ptys:
            p.close()
    assert took >= 3 * DELAY - SLACK, took


@pytest.mark.parametrize("how", ["SIGKILL", "terminal"])
def test_a_killed_guess_still_costs_the_delay(gs, how):
    # bob ends his wrong guess once it is checking: SIGKILL to its process group (as he
    # may), or ^C and a hang-up on its terminal.  The lock stays with the guard he cannot
    # signal until the delay is over, so his next guess, the right one, is answered no
    # sooner.
    ino = lock_inode(gs, "bob")
    term = None
    if how == "terminal":
        term = Pty(gs, [SG, "devs", "-c", "echo DONE"], user="bob")
        term.expect(r"Password: ")
        term.send("wrong-guess-1\n")
        pid = term.pid
    else:
        first, pid = start_sg(gs, "bob", "wrong-guess-1")
    wait_until(lambda: tlw.guard_of(pid) is not None and lock_held(ino),
               "sg never started its guard holding the lock")
    guard = tlw.guard_of(pid)
    if term:
        term.send("\x03")
        term.close()            # the hang-up (and SIGKILL, if sg is still there)
    else:
        os.killpg(pid, signal.SIGKILL)
        first.communicate(timeout=30)
    killed = time.monotonic()
    # out of bob's reach: every uid root (no signal of his), a session of its own (none
    # of his terminal's)
    with open("/proc/%d/status" % guard) as f:
        uids = [l.split()[1:] for l in f if l.startswith("Uid:")][0]
    assert uids == ["0"] * 4, uids
    second, _ = start_sg(gs, "bob", DEVS_PW)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0 and out == "DONE\n", (out, err)
    assert time.monotonic() - killed >= DELAY - SLACK


def test_a_guess_killed_through_its_cgroup_still_costs_the_delay(gs):
    # systemd delegates a cgroup to each user; cgroup.kill there SIGKILLs everything in
    # it, whatever its uids.  bob's wrong guess runs in his cgroup; once it is checking he
    # kills the cgroup.  The guard has left it for the root cgroup, so it keeps the lock
    # through the delay and his next guess is answered no sooner.
    ino = lock_inode(gs, "bob")
    with tlw.cgroup_of(gs, "bob") as name:
        procs = "/sys/fs/cgroup/%s/cgroup.procs" % name
        pw = gs.getpwnam("bob")
        argv = ["/bin/sh", "-c", 'echo 0 > %s && exec "$@"' % procs, "sh", "/usr/bin/setpriv",
                "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid, "--init-groups", "--",
                SG, "devs", "-c", "echo DONE"]
        cmd, _ = gs._wrap(argv, None, "/")
        first = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                                 start_new_session=True, text=True)
        first.stdin.write("wrong-guess-1\n")
        first.stdin.close()
        first.stdin = None
        # the shell and setpriv exec: the Popen's pid is sg's
        wait_until(lambda: tlw.guard_of(first.pid) is not None and lock_held(ino),
                   "sg never started its guard holding the lock")
        gs.run(["/bin/sh", "-c", "echo 1 > /sys/fs/cgroup/%s/cgroup.kill" % name],
               user="bob")
        killed = time.monotonic()
        first.communicate(timeout=30)
        second, _ = start_sg(gs, "bob", DEVS_PW)
        out, err = second.communicate(timeout=60)
    assert second.returncode == 0 and out == "DONE\n", (out, err)
    assert time.monotonic() - killed >= DELAY - SLACK


def test_stopped_sg_delays_only_its_callers_guesses(gs):
    # alice's sg, stopped (by strace, as root: precisely) with her lock held, right before
    # it starts its guard; carol's sg of the same group does not wait for it, alice's
    # own next guess does
    ino = lock_inode(gs, "alice")
    proc, pid = start_sg(gs, "alice", "wrong-guess-1",
                         strace="inject=socketpair:signal=SIGSTOP:when=1")
    second = None
    try:
        def stopped_holding():
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            return state in "tT" and lock_held(ino)
        wait_until(stopped_holding, "alice's sg never stopped holding her lock", timeout=30)

        start = time.monotonic()
        carol, _ = start_sg(gs, "carol", DEVS_PW)
        out, err = carol.communicate(timeout=60)
        assert carol.returncode == 0 and out == "DONE\n", (out, err)
        assert time.monotonic() - start < 3, time.monotonic() - start

        second, _ = start_sg(gs, "alice", DEVS_PW)
        with pytest.raises(subprocess.TimeoutExpired):
            second.communicate(timeout=3)
    finally:
        out, err = tlw.resume(proc, pid)
        if second is not None:
            out2, err2 = second.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert second.returncode == 0 and out2 == "DONE\n", (out2, err2)
