"""Nothing a user holds while guessing delays root, and guesses run one at a time.

The password helper and the PAM module's checks in processes the user drives (setgid
passwd, chsh) serialize a user's guesses with the guess lock, an flock on the user's
shadow file held through the failure delay.  Writers take the directory's lock, not that
one: a user who stops their helper or passwd in the middle of a failed guess delays only
their own next guess, and root's passwd -l, chage -E 0 and usermod -L land at once."""

import os
import subprocess
import time

import pytest

import test_passwd as tp

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
