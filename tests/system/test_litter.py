"""A user cannot grow /etc by killing their own tools.

A self-service tool killed between placing its new file and renaming it over the old one
leaves a temporary `.shadow.XXXXXXXXXXXX` behind, on the O_TMPFILE path (between linkat and
renameat) and, for the whole write, on file systems without O_TMPFILE.  The next tool that
takes the user's lock sweeps them, so the directory never holds more than its three files
and the leftover of the one tool killed last."""

import os
import re

import pytest

import test_passwd as tp

FILES = {"shadow", "shell", "aging"}
TEMP = re.compile(r"^\.(shadow|shell|aging)\.[A-Za-z0-9]{12}$")


@pytest.fixture
def mod(sb):
    tp.make_users(sb)
    tp.convert(sb)
    tp.use_module(sb)
    return sb


def entries(sb):
    return set(sb.run(["ls", "-A", tp.TREE + "/alice"]).stdout.split())


def as_alice(sb):
    pw = sb.getpwnam("alice")
    return ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid, "--init-groups",
            "--", tp.PASSWD, "--stdin"]


def killed_passwd(sb, injections, password):
    """alice's passwd --stdin under strace, with these injections (SYSCALL:ACTION)."""
    argv = ["strace", "-f", "-qq", "-o", "/dev/null"]
    for inj in injections:
        argv += ["-e", "inject=" + inj]
    res = sb.run(argv + as_alice(sb), input="alice-old-1\n%s\n" % password, check=False)
    assert res.returncode != 0, res
    return res


def tmpfile_openat_index(sb):
    """Which openat of the passwd process makes the O_TMPFILE (strace counts per process)."""
    sb.run(["strace", "-f", "-qq", "-o", "/tmp/trace", "-e", "trace=openat"] + as_alice(sb),
           input="alice-old-1\nTulip-trace-1\n", check=False)
    lines = sb.read("/tmp/trace").splitlines()
    first = lines[0].split()[0]
    mine = [l for l in lines if l.split()[0] == first]
    idx = [i + 1 for i, l in enumerate(mine) if "O_TMPFILE" in l]
    assert idx, "\n".join(mine)
    sb.run([tp.PASSWD, "--stdin", "alice"], input="alice-old-1\n")
    return idx[0]


def test_killed_passwd_leaves_a_bounded_directory(mod):
    before = tp.shadow_line(mod, "alice")
    for i in range(25):
        killed_passwd(mod, ["renameat:signal=SIGKILL:when=1"], "Tulip-kill-%d" % i)
        got = entries(mod)
        litter = {e for e in got if TEMP.match(e)}
        # the one just killed may be left; every earlier one was swept
        assert got - litter == FILES and len(litter) <= 1, got
        assert tp.shadow_line(mod, "alice") == before
    assert litter, "the kill point left nothing: the test no longer reaches the window"
    res = tp.run(mod, [tp.PASSWD, "--stdin"], user="alice",
                 input="alice-old-1\nTulip-done-1\n")
    assert res.returncode == 0, res
    assert entries(mod) == FILES
    assert tp.verify("Tulip-done-1", tp.hash_of(mod, "alice"))


def test_killed_passwd_without_o_tmpfile(mod):
    # as on a file system without O_TMPFILE: a named temporary file for the whole write
    n = tmpfile_openat_index(mod)
    for i in range(3):
        killed_passwd(mod, ["openat:error=EOPNOTSUPP:when=%d" % n,
                            "renameat:signal=SIGKILL:when=1"], "Tulip-fb-%d" % i)
        got = entries(mod)
        litter = {e for e in got if TEMP.match(e)}
        assert got - litter == FILES and len(litter) == 1, got
    # a root tool that takes the same lock sweeps too
    mod.run(["/usr/bin/chage", "-W", "9", "alice"])
    assert entries(mod) == FILES


def dead_pid(sb):
    """A pid no process of the root has (its pid namespace's /proc)."""
    pid = 4000000
    while os.path.exists(os.path.join(sb.root, "proc/%d" % pid)):
        pid -= 1
    return pid


def test_lock_protocol_leftovers_are_swept(sb):
    # FILE.PID files of killed tools (ours or shadow-utils') are removed by the next tool
    # that takes the locks and lists /etc; one whose process is alive stays.  A tool of
    # ours killed under the locks leaves .pwd.lock empty, which makes the next one list
    # (test_recovery_record.py); shadow-utils' leftovers wait for that or for a reboot.
    sb.use_hardened_tree()
    holder = sb.popen(["sleep", "60"])
    dead, live = dead_pid(sb), sb.ns_pid(holder.pid)
    for f in ("passwd", "shadow", "group", "gshadow"):
        sb.write("/etc/%s.%d" % (f, dead), "%d\0" % dead, mode=0o600)
    sb.write("/etc/group.%d" % live, "%d\0" % live, mode=0o600)
    sb.write("/etc/.pwd.lock", "", mode=0o600)
    sb.run(["/usr/sbin/groupadd", "litter"])
    left = sorted(e for e in os.listdir(sb.root + "/etc") if re.match(r"^[a-z]+\.\d+$", e))
    holder.kill()
    holder.wait()
    assert left == ["group.%d" % live], left
