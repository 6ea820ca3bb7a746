"""The per-user write lock (hs_userdir_lock) in a throwaway root: a user changing their own
password through pam_hardened_shadow.so (the setgid passwd, --stdin) races root's writes to
the same USER/shadow -- passwd -l, chage -d -- many times.  Without the lock one update can
be lost (root reads the old hash, the user writes a new one, root writes "!" + the old hash;
or the other way round).  With it, after every round the file must hold both updates in
some order: root's lock is always there, and a change the user was told succeeded is
always there.

Tests skip with "BLOCKED" while the module cannot change a password yet."""

import ctypes
import random
import re
import threading
import time

import pytest

import sandbox

PASSWD = "/usr/bin/passwd"
CHAGE = "/usr/bin/chage"
TREE = "/etc/hardened-shadow"

# Debian's stack without the optional quality module; use_pam_module swaps pam_unix.so
# for pam_hardened_shadow.so.
COMMON_PASSWORD = """\
password	[success=1 default=ignore]	pam_unix.so obscure yescrypt
password	requisite			pam_deny.so
password	required			pam_permit.so
"""

_libcrypt = ctypes.CDLL("libcrypt.so.1")
_libcrypt.crypt.restype = ctypes.c_char_p
_libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def verify(password, hash_):
    if not hash_ or hash_[0] in "!*":
        return False
    out = _libcrypt.crypt(password.encode(), hash_.encode())
    return out is not None and out.decode() == hash_


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def shadow_line(sb, name):
    line = sb.read("%s/%s/shadow" % (TREE, name))
    assert re.fullmatch(r"[^:\n]*:-?\d*:\n", line), line
    return line


@pytest.fixture
def mod(sb):
    sb.write("/etc/pam.d/common-password", COMMON_PASSWORD)
    sb.add_classic_user("alice", password_hash=sandbox._crypt("alice-old-1"))
    sb.use_hardened_tree()
    sb.use_pam_module()
    res = run(sb, [PASSWD, "--stdin"], user="alice", input="alice-old-1\nLock-race-start\n")
    if res.returncode != 0 or not verify("Lock-race-start", shadow_line(sb, "alice").split(":")[0]):
        pytest.skip("BLOCKED: pam_hardened_shadow.so does not change passwords yet: %s"
                    % (res.stdout + res.stderr).strip())
    return sb


def race(sb, user_argv, user_input, root_argv, offset, user="alice"):
    """Start the user's command and root's command about offset seconds apart (positive:
    root later).  Returns (user result, root result, {"user"/"root": monotonic end})."""
    out = {}
    ends = {}

    def go(key, delay, argv, **kw):
        time.sleep(delay)
        out[key] = run(sb, argv, timeout=40, **kw)
        ends[key] = time.monotonic()

    threads = [
        threading.Thread(target=go, args=("user", max(0.0, -offset), user_argv),
                         kwargs=dict(user=user, input=user_input)),
        threading.Thread(target=go, args=("root", max(0.0, offset), root_argv)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sb.syslog(clear=True)   # keep /dev/log's queue drained, or senders block
    return out["user"], out["root"], ends


def timed(sb, argv, **kw):
    t0 = time.monotonic()
    res = run(sb, argv, **kw)
    assert res.returncode == 0, res
    return time.monotonic() - t0


def test_user_change_racing_root_lock_loses_nothing(mod):
    sb = mod
    rnd = random.Random(11)
    cur = "Lock-race-start"
    # calibrate: the offsets cover root's lock landing before, during and after the
    # user's whole change (PRELIM verify, UPDATE hash, write)
    span_user = timed(sb, [PASSWD, "--stdin"], user="alice", input="%s\nLock-race-cal\n" % cur)
    cur = "Lock-race-cal"
    span_root = timed(sb, [PASSWD, "-l", "alice"])
    timed(sb, [PASSWD, "-u", "alice"])
    outcomes = {"changed": 0, "refused": 0}
    # at least 10 rounds, more while the time budget lasts (a loaded machine gets fewer)
    deadline = time.monotonic() + 8
    i = 0
    while i < 24 and (i < 10 or time.monotonic() < deadline):
        new = "Lock-race-%02d" % i
        # the first two rounds are the two orders for sure (a user's write that root's
        # take-over meets fails, so on a busy machine an offset inside the user's span
        # almost never lets it finish first); the rest land anywhere around it
        offset = (2 * span_user if i == 0 else -span_root if i == 1
                  else rnd.uniform(-span_root, 2 * span_user))
        ures, rres, _ = race(sb, [PASSWD, "--stdin"], "%s\n%s\n" % (cur, new),
                          [PASSWD, "-l", "alice"], offset)
        assert rres.returncode == 0, (i, rres)
        h = shadow_line(sb, "alice").split(":")[0]
        # root's lock is never lost, whatever came first
        assert h.startswith("!") and not h.startswith("!!"), (i, offset, h, ures)
        if ures.returncode == 0:
            # the user was told it worked: the new password is there (locked)
            assert verify(new, h[1:]), (i, offset, h, ures)
            cur = new
            outcomes["changed"] += 1
        else:
            # refused (account already locked, or locked under its feet): nothing of
            # the user's was written, the old password is still there
            assert ures.returncode == 10, (i, ures)
            assert verify(cur, h[1:]), (i, offset, h, ures)
            outcomes["refused"] += 1
        res = run(sb, [PASSWD, "-u", "alice"])
        assert res.returncode == 0, (i, res)
        assert verify(cur, shadow_line(sb, "alice").split(":")[0]), i
        i += 1
    # the offsets really covered both orders
    assert outcomes["changed"] > 0 and outcomes["refused"] > 0, outcomes


def test_user_change_racing_chage_lastday_loses_nothing(mod):
    """chage -d rewrites USER/shadow with a new LSTCHG: the user's new hash must survive
    it, and the file ends with either chage's day or today's (the change's)."""
    sb = mod
    rnd = random.Random(12)
    cur = "Lock-race-start"
    span_user = timed(sb, [PASSWD, "--stdin"], user="alice", input="%s\nChage-race-cal\n" % cur)
    cur = "Chage-race-cal"
    today = int(shadow_line(sb, "alice").split(":")[1])
    span_root = timed(sb, [CHAGE, "-d", "2020-01-01", "alice"])
    day_2020 = 18262
    for i in range(10):
        new = "Chage-race-%02d" % i
        offset = rnd.uniform(-span_root, span_user)
        ures, rres, _ = race(sb, [PASSWD, "--stdin"], "%s\n%s\n" % (cur, new),
                          [CHAGE, "-d", "2020-01-01", "alice"], offset)
        assert rres.returncode == 0, (i, rres)
        assert ures.returncode == 0, (i, offset, ures)
        h, lstchg = shadow_line(sb, "alice").split(":")[:2]
        assert verify(new, h), (i, offset, h)
        assert int(lstchg) in (today, day_2020), (i, lstchg)
        cur = new


def test_root_takes_over_a_held_lock(mod):
    """A lock held by something root's writers do not know (a process holding flock on
    alice's directory, as a user's stopped passwd would) makes root's passwd -l wait
    HS_TAKE_OVER_MS (1 s), never write under it, and then take the directory over: it
    ends before the holder lets go (test_lock_window.py attacks this with real tools)."""
    sb = mod
    before = shadow_line(sb, "alice")
    holder = "exec 9<%s/alice && flock -x 9 && sleep 4" % TREE
    hres, rres, ends = race(sb, ["/bin/sh", "-c", holder], None, [PASSWD, "-l", "alice"],
                            0.5, user=None)
    assert hres.returncode == 0, hres
    assert rres.returncode == 0, rres
    assert shadow_line(sb, "alice") == "!" + before
    # root did not wait for the holder (it started 0.5 s in, the hold is 4 s)
    assert ends["root"] < ends["user"], ends
    run(sb, [PASSWD, "-u", "alice"], check=True)
