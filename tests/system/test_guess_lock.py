"""Nothing a user holds while guessing delays root, nor another user; guesses run one at a
time per caller.

The password helper and the PAM module's checks in processes the user drives (setgid
passwd, chsh, setuid su) serialize a caller's guesses with the caller's guess lock, an
flock on the caller's aging file (root's), held through the failure delay; a caller
without a directory of their own takes a byte of the target's shadow file instead.
Writers take the directory's lock, not that one: a user who stops their helper, passwd or
su in the middle of a failed guess delays only their own next guess; root's passwd -l,
chage -E 0 and usermod -L land at once, and another user's su of the same account, and
that account's own passwd, run at once."""

import os
import signal
import subprocess
import time

import pytest

import test_lock_window as tlw
import test_passwd as tp
from ptyproc import Pty

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

HELPER = "/usr/libexec/hardened-shadow/password-helper"


@pytest.fixture
def mod(sb):
    tp.make_users(sb)
    tp.convert(sb)
    tp.use_module(sb)
    return sb


def start_as(sb, user, argv, data):
    cmd, _ = sb._wrap(argv, user, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True)
    proc.stdin.write(data)
    proc.stdin.close()
    proc.stdin = None
    return proc


def holds_a_lock(pid):
    with open("/proc/locks") as f:
        return any(" %d " % pid in line and "FLOCK" in line for line in f)


def wait_for_lock(pid, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holds_a_lock(pid):
            return
        time.sleep(0.02)
    raise AssertionError("process %d never took its lock" % pid)


ROOT_CHANGES = [["/usr/bin/passwd", "-l", "alice"], ["/usr/bin/chage", "-E", "0", "alice"],
                ["/usr/sbin/usermod", "-L", "-e", "1", "alice"]]


@pytest.mark.parametrize("tool", ["helper", "passwd", "chsh"])
def test_stopped_guess_does_not_block_root(mod, tool):
    if tool == "helper":
        argv, data = [HELPER, "verify", "alice"], b"wrong-guess-1"
    elif tool == "passwd":
        argv, data = [tp.PASSWD, "--stdin"], b"wrong-guess-1\nTulip-new-1\n"
    else:
        argv, data = ["/usr/bin/chsh", "-s", "/bin/sh"], b"wrong-guess-1\n"
    proc = start_as(mod, "alice", argv, data)
    try:
        wait_for_lock(proc.pid)
        os.killpg(proc.pid, 19)      # SIGSTOP, as the user may: it is their process
        for change in ROOT_CHANGES:
            res = mod.run(change, check=False, timeout=30)
            assert res.returncode == 0, (change, res)
            assert "timed out" not in res.stderr, res
        assert tp.shadow_line(mod, "alice").startswith("!")
    finally:
        os.killpg(proc.pid, 18)      # SIGCONT
        proc.wait(timeout=30)
    assert proc.returncode != 0
    # the resumed guess changed nothing of root's
    assert tp.shadow_line(mod, "alice").startswith("!")
    assert tp.aging_of(mod, "alice").split(":")[4] == "1"   # usermod -e 1 came last


def test_parallel_guesses_through_chsh_run_one_at_a_time(mod):
    # each wrong guess holds the guess lock for its failure delay (2 s): three started
    # together cannot all be answered in less than three delays
    start = time.monotonic()
    procs = [start_as(mod, "alice", ["/usr/bin/chsh", "-s", "/bin/sh"], b"wrong-%d\n" % i)
             for i in range(3)]
    for p in procs:
        p.wait(timeout=60)
        assert p.returncode != 0
    assert time.monotonic() - start >= 3 * 2 - 0.3


def test_locked_account_answers_su_no_sooner_than_a_wrong_password(mod):
    # su run by a user checks the target's hash itself (SRC_DIRECT, user-driven), where
    # the module, not pam_fail_delay, makes a failure wait (2 s).  A locked account ('!'
    # hash: nothing can match) must wait as long as a wrong password, or su would tell
    # any user which accounts are locked.  su's own FAIL_DELAY is off to see the module's.
    mod.write("/etc/login.defs", mod.read("/etc/login.defs") + "\nFAIL_DELAY 0\n")

    def su_wrong(target):
        start = time.monotonic()
        res = mod.run(["/usr/bin/su", target, "-c", "true"], user="bob",
                      input="wrong-guess-1\n", check=False, timeout=60)
        assert res.returncode == 1 and "Authentication failure" in res.stderr, res
        return time.monotonic() - start

    took = {"alice": su_wrong("alice")}            # a hash that could match
    mod.run(["/usr/bin/passwd", "-l", "alice"])
    assert tp.shadow_line(mod, "alice").startswith("!")
    took["alice locked"] = su_wrong("alice")
    took["erin (locked)"] = su_wrong("erin")
    took["gina (*)"] = su_wrong("gina")
    assert all(t >= 2 - 0.3 for t in took.values()), took


# ---- su: the lock is the caller's, not the target's ----
#
# su runs with its caller's real uid, so the caller may stop it while it holds its guess
# lock.  With one lock per target, bob's stopped `su alice` made every other su of
# alice (su root alike) and alice's own passwd wait 15 s and fail ("cannot lock ...
# timed out").

SU = "/usr/bin/su"
ALICE_PW = "alice-old-1"
# a line only the shell's output contains (the terminal echo shows $((...)) unexpanded)
DONE = 'echo "DONE$((6*7))"'


def traced_su(sb, caller, inject, argv):
    """The command for caller's `su ARGV` under strace (root) with inject= inject."""
    pw = sb.getpwnam(caller)
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=" + inject,
                       "/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                       "--init-groups", "--", SU] + argv, None, "/")
    return cmd


def stopped_in_failure_delay(sb, caller, target):
    """caller's `su target` with a wrong password, stopped by strace (root) at its first
    waitid: waiting for its guard through the module's failure delay, under the guess
    lock.  (strace process, su's pid)."""
    cmd = traced_su(sb, caller, "waitid:signal=SIGSTOP:when=1", [target, "-c", "true"])
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    proc.stdin.write("wrong-guess-1\n")
    proc.stdin.close()
    proc.stdin = None
    return proc, tlw.tracee_of(proc.pid, "su")


def holds_any_lock(pid, ino):
    """Does pid hold a flock, or does anyone hold a record lock of an open file
    description (/proc/locks shows no pid for those) on inode ino?"""
    with open("/proc/locks") as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[1] == "FLOCK" and w[4] == str(pid):
                return True
            if len(w) >= 6 and w[1] == "OFDLCK" and w[5].endswith(":%d" % ino):
                return True
    return False


def wait_stopped_holding(sb, proc, pid, target, timeout=30):
    """Until su pid is stopped holding a lock (its guess lock: stopped in the delay)."""
    ino = os.stat(os.path.join(sb.root, tp.TREE.lstrip("/"), target, "shadow")).st_ino
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            proc.wait(timeout=30)
            raise AssertionError("su ended first: %r" % (proc.communicate(),))
        if state in "tT" and holds_any_lock(pid, ino):
            return
        time.sleep(0.02)
    raise AssertionError("su %d never stopped holding a lock" % pid)


def su_on_pty(sb, caller, target, password):
    """caller's `su target` on a terminal, once the password is typed."""
    p = Pty(sb, [SU, target, "-c", DONE], user=caller)
    p.expect(r"Password: ?")
    p.send(password + "\n")
    return p


def still_waiting(p, seconds):
    """Has p shown no result within seconds (without killing it)?"""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        p._pump(deadline)
    return "DONE42" not in p.output[p.pos:] and p.proc.poll() is None


@pytest.mark.parametrize("caller", ["bob", "zed"])
def test_stopped_su_delays_only_its_callers_guesses(mod, caller):
    # zed has no directory in the tree (as a directory service's account): a lock per
    # caller on alice's shadow file
    mod.write("/etc/passwd", mod.read("/etc/passwd") + "zed:x:4242:4242::/:/bin/sh\n")
    proc, pid = stopped_in_failure_delay(mod, caller, "alice")
    second = None
    try:
        wait_stopped_holding(mod, proc, pid, "alice")

        # carol's su alice with alice's password: at once, not after 15 s and a failure
        start = time.monotonic()
        with su_on_pty(mod, "carol", "alice", ALICE_PW) as p:
            p.expect(r"DONE42", timeout=30)
            assert p.wait(timeout=30) == 0, p.output
        took = time.monotonic() - start
        assert took < 5, (took, p.output)

        # alice's own passwd: its current-password check (a wrong one: her shadow file
        # keeps its inode) is answered after its own failure delay, not after 15 s
        start = time.monotonic()
        res = mod.run([tp.PASSWD, "--stdin"], user="alice",
                      input="wrong-current-1\nTulip-alice-new-7\n", check=False, timeout=60)
        took = time.monotonic() - start
        assert res.returncode != 0, res
        assert 2 - 0.3 <= took < 5, (took, res)
        assert not any("cannot lock" in l for l in mod.syslog()), mod.syslog()
        # nor her screen locker's password helper (its deadline is 60 s)
        start = time.monotonic()
        res = mod.run([HELPER, "verify", "alice"], user="alice", input=ALICE_PW.encode(),
                      check=False, timeout=90)
        assert res.returncode == 0, res
        assert time.monotonic() - start < 5, res

        # the caller's own next guess (alice's password, right this time) waits for the
        # stopped one, and goes through once that one ends
        second = su_on_pty(mod, caller, "alice", ALICE_PW)
        assert still_waiting(second, 4), second.output
    finally:
        out, err = tlw.resume(proc, pid)
        if second is not None:
            try:
                second.expect(r"DONE42", timeout=30)
                assert second.wait(timeout=30) == 0, second.output
            finally:
                second.close()
    assert proc.returncode != 0, (out, err)


def syscall_of(pid):
    """The system call pid is in, as /proc/PID/syscall names it ("0": read, "230":
    clock_nanosleep, "running"), or None once it has gone."""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def past_its_hash(pid):
    """Has su pid checked the hash: is it sleeping out the failure delay (clock_nanosleep,
    230) or waiting for the guard that does (waitid, 247)?"""
    return syscall_of(pid) in ("230", "247")


def kill_as(sb, user, target):
    """user's `kill -KILL target` (a pid, or -pgid): did it go through?"""
    pw = sb.getpwnam(user)
    return subprocess.run(["setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                           "--clear-groups", "kill", "-KILL", "--", str(target)],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("caller", ["bob", "zed"])
def test_a_killed_su_guess_still_costs_the_delay(mod, caller):
    # su is setuid root but runs with its caller's real uid, so the caller may kill it
    # the moment its hash is checked: a right guess answers at once, so no answer yet is
    # a wrong one.  Killing it then used to free the guess lock at once, for one guess
    # per hash time instead of one per hash and 2 s.  The lock now stays with su's guard,
    # which the caller cannot signal, until the delay is over; the caller's next guess
    # (the right password) is answered no sooner.  zed has no directory: the lock is
    # his byte of alice's shadow file.
    mod.write("/etc/passwd", mod.read("/etc/passwd") + "zed:x:4242:4242::/:/bin/sh\n")
    first = start_as(mod, caller, [SU, "alice", "-c", "true"], b"wrong-guess-1\n")
    pid = first.pid
    deadline = time.monotonic() + 30
    while not past_its_hash(pid):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "su never reached its failure delay"
        time.sleep(0.005)
    guard = tlw.guard_of(pid)
    assert kill_as(mod, caller, -pid)       # su's process group, as its caller may
    killed = time.monotonic()
    first.communicate(timeout=30)
    assert first.returncode == -9
    # the guard (every uid root, a session of its own) is out of the caller's reach
    # refused for want of permission, not because the guard has already gone
    guard_kill_refused = guard is not None and not kill_as(mod, caller, guard) and \
        os.path.exists("/proc/%d" % guard)
    second = start_as(mod, caller, [SU, "alice", "-c", "echo DONE"],
                      (ALICE_PW + "\n").encode())
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0 and out == b"DONE\n", (out, err)
    assert time.monotonic() - killed >= 2 - 0.5
    assert guard_kill_refused


def guard_in(pid, proc, call):
    """su pid's guard once it waits for su's verdict (call "0", its read), or once su has
    given the verdict and waits for it (call "247", su's waitid): the guard has left the
    caller's reach and closed its fds before either."""
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "su's guard never got to system call " + call
        guard = tlw.guard_of(pid)
        if guard is not None and syscall_of(guard if call == "0" else pid) == call:
            return guard
        time.sleep(0.001)


def test_su_killed_during_its_hash_still_costs_the_delay(mod):
    # The caller stops su while it checks the hash (no verdict sent yet) and kills it:
    # the guard sees su's end of its socket close without a word and keeps the lock
    # through the whole delay from then on.
    # The stop must land inside the hash: on a loaded machine the hash may end first;
    # that staging is tried again (su let go, its delay waited out), up to five times.
    for attempt in range(5):
        first = start_as(mod, "bob", [SU, "alice", "-c", "true"], b"wrong-guess-1\n")
        pid = first.pid
        guard_in(pid, first, "0")
        os.kill(pid, signal.SIGSTOP)
        if syscall_of(pid) != "247" or attempt == 4:
            break
        os.kill(pid, signal.SIGCONT)
        first.communicate(timeout=30)
    assert syscall_of(pid) != "247", "su had its verdict before it was stopped"
    assert kill_as(mod, "bob", -pid)
    killed = time.monotonic()
    first.communicate(timeout=30)
    second = start_as(mod, "bob", [SU, "alice", "-c", "echo DONE"],
                      (ALICE_PW + "\n").encode())
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0 and out == b"DONE\n", (out, err)
    assert time.monotonic() - killed >= 2 - 0.05


def test_the_guard_is_not_the_callers_first_oom_victim(mod):
    # oom_score_adj survives su's exec: a caller who raised theirs to 1000 made the guard
    # the OOM killer's first victim, and a memory shortage of theirs the end of the delay.
    first = start_as(mod, "bob", ["/bin/sh", "-c", "echo 1000 >/proc/self/oom_score_adj &&"
                                  " exec %s alice -c true" % SU], b"wrong-guess-1\n")
    guard = guard_in(first.pid, first, "247")
    with open("/proc/%d/oom_score_adj" % guard) as f:
        adj = f.read().strip()
    first.communicate(timeout=30)
    assert adj == "0"


def test_the_guard_keeps_no_fd_of_the_caller_without_close_range(mod):
    # Where close_range fails (an old kernel, an application's seccomp filter; strace,
    # root, makes it fail here) the guard closes its fds one by one: it used to keep the
    # caller's stdin, stdout and stderr (a pipe's reader waiting for its end) and every
    # other fd of su through the delay.
    cmd = traced_su(mod, "bob", "close_range:error=ENOSYS", ["alice", "-c", "true"])
    first = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
    first.stdin.write(b"wrong-guess-1\n")
    first.stdin.close()
    first.stdin = None
    deadline = time.monotonic() + 30
    su = None
    while su is None:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        su = next((c for c in tlw.children(first.pid) if tlw.comm(c) == "su"), None)
        time.sleep(0.005)
    # strace's child (after its own short-lived probes) is setpriv, which became su
    guard = guard_in(su, first, "247")
    fds = sorted(os.readlink("/proc/%d/fd/%s" % (guard, fd))
                 for fd in os.listdir("/proc/%d/fd" % guard))
    first.communicate(timeout=30)
    # the guess lock and the guard's socket
    assert len(fds) == 2 and fds[0].endswith("/bob/aging"), fds


def test_su_checks_no_password_without_its_guard(mod):
    # Were the guard optional, a caller who made su's fork fail would be back to one
    # guess per hash time.  Without it su checks nothing: alice's right password, typed
    # by bob, is refused while the fork fails (strace, root, makes it fail).
    cmd = traced_su(mod, "bob", "clone,clone3,fork,vfork:error=EAGAIN:when=1",
                    ["alice", "-c", "echo DONE"])
    before = len(mod.syslog())
    res = subprocess.run(cmd, input=ALICE_PW + "\n", capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, timeout=60)
    log = mod.syslog()[before:]
    assert res.returncode != 0 and "DONE" not in res.stdout, res
    # refused by the module (no session was opened: the shell's own fork, also made to
    # fail, is not what stopped it)
    assert any("cannot start the failure delay" in l for l in log), log
    assert not any("session opened" in l for l in log), log
    # and with the fork working, the same password goes through
    res = start_as(mod, "bob", [SU, "alice", "-c", "echo DONE"], (ALICE_PW + "\n").encode())
    out, err = res.communicate(timeout=60)
    assert res.returncode == 0 and out == b"DONE\n", (out, err)


def test_a_new_password_gives_the_caller_no_second_lock(mod):
    # The caller's lock is on a file of theirs that their own tools never replace.  On
    # their shadow file it would not hold: frank checks his current password in passwd
    # (the lock is free then), waits at the new-password prompt, starts a guess at
    # alice, and then lets passwd write: a new shadow inode, a new lock, and his next
    # guess would run beside the first.
    with Pty(mod, [tp.PASSWD], user="frank") as pw:
        pw.expect(r"Current password: ")
        pw.send("frank-old-1\n")
        pw.expect(r"New password: ")
        proc, pid = stopped_in_failure_delay(mod, "frank", "alice")
        second = None
        try:
            wait_stopped_holding(mod, proc, pid, "alice")
            pw.send("Tulip-frank-new-7\n")
            pw.expect(r"Retype new password: ")
            pw.send("Tulip-frank-new-7\n")
            assert pw.wait(timeout=30) == 0, pw.output
            assert tp.verify("Tulip-frank-new-7", tp.hash_of(mod, "frank"))
            second = su_on_pty(mod, "frank", "alice", ALICE_PW)
            assert still_waiting(second, 4), second.output
        finally:
            out, err = tlw.resume(proc, pid)
            if second is not None:
                try:
                    second.expect(r"DONE42", timeout=30)
                    assert second.wait(timeout=30) == 0, second.output
                finally:
                    second.close()
