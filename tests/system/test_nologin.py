"""nologin in a throwaway root: the default message byte for byte as Debian's, exit 1 and
the log line; /etc/nologin.txt (and what is not a regular file); the options a shell gets
(sshd's -c) ignored; SSH_ORIGINAL_COMMAND logged without control characters; a real `su -`
to an account whose shell it is; and hostile callers (argc == 0, closed fds,
RLIMIT_NOFILE of 3, 10,000-byte arguments, a FIFO as nologin.txt).

One sandbox for the module; the tests that change /etc/nologin.txt put it back."""

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sandbox"))
import sandbox  # noqa: E402

NOLOGIN = "/usr/sbin/nologin"
DEBIAN_NOLOGIN = "/usr/local/lib/hs-test-debian/nologin"
# Debian's util-linux su, copied from the host (the build may install a su of its own).
SU = "/usr/local/lib/hs-test-debian/su"
DEFAULT = "This account is currently not available.\n"


@pytest.fixture(scope="module")
def nsb(base):
    with sandbox.Sandbox(base, size="256m") as sb:
        sb.add_classic_user("svc", shell=NOLOGIN)
        sb.run(["mkdir", "-p", os.path.dirname(DEBIAN_NOLOGIN)])
        for src, dst, mode in (("/usr/sbin/nologin", DEBIAN_NOLOGIN, 0o755),
                               ("/usr/bin/su", SU, 0o4755)):
            with open(src, "rb") as f:
                sb.write(dst, f.read(), mode=mode)
        yield sb


@pytest.fixture
def nologin_txt(nsb):
    yield nsb
    nsb.run(["rm", "-rf", "/etc/nologin.txt"])


def run(sb, argv, user="svc", **kw):
    kw.setdefault("check", False)
    return sb.run(argv, user=user, **kw)


def test_installed_plain(nsb):
    st = nsb.lstat(NOLOGIN)
    assert st.st_uid == 0 and st.st_mode & 0o7777 == 0o755


@pytest.mark.parametrize("args", [[], ["-c", "ls -l /"], ["-i"], ["--norc", "--posix"],
                                  ["-x"], ["--bogus=1"], ["some", "args"], ["-c"]])
def test_default_message_like_debian(nsb, args):
    ours = run(nsb, [NOLOGIN] + args)
    theirs = run(nsb, [DEBIAN_NOLOGIN] + args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (1, DEFAULT, "")
    assert (theirs.returncode, theirs.stdout) == (1, DEFAULT)


def test_logs_the_attempt(nsb):
    nsb.syslog(clear=True)
    uid = nsb.getpwnam("svc").uid
    run(nsb, [NOLOGIN, "-c", "rsync --server"],
        env={"SSH_ORIGINAL_COMMAND": "rsync --server \x1b[2J\x07 " + "y" * 1000})
    log = nsb.syslog()
    assert len(log) == 1, log
    m = re.search(r"nologin\[\d+\]: Attempted login by svc \(UID: %d\) on UNKNOWN "
                  r"SSH_ORIGINAL_COMMAND=(.*)$" % uid, log[0])
    assert m, log
    assert m.group(1).startswith(r"rsync --server \x1b[2J\x07 yyy")
    assert "\x1b" not in log[0] and len(log[0]) < 400


def test_help_and_version(nsb):
    res = run(nsb, [NOLOGIN, "--help"])
    assert res.returncode == 0 and "Politely refuse a login." in res.stdout
    assert run(nsb, [NOLOGIN, "-h"]).stdout == res.stdout
    res = run(nsb, [NOLOGIN, "-V"])
    assert res.returncode == 0 and res.stdout.startswith("nologin (hardened-shadow) ")


def test_nologin_txt(nologin_txt):
    sb = nologin_txt
    sb.write("/etc/nologin.txt", "Maintenance until 14:00.\nNo newline at the end")
    res = run(sb, [NOLOGIN])
    assert (res.returncode, res.stdout) == (1, "Maintenance until 14:00.\nNo newline at the end")
    # a huge file is cut, not read forever
    sb.write("/etc/nologin.txt", "z" * (1 << 20))
    res = run(sb, [NOLOGIN])
    assert res.returncode == 1 and res.stdout == "z" * 65536


@pytest.mark.parametrize("kind", ["directory", "fifo", "unreadable", "dangling"])
def test_nologin_txt_not_usable(nologin_txt, kind):
    sb = nologin_txt
    if kind == "directory":
        sb.run(["mkdir", "/etc/nologin.txt"])
    elif kind == "fifo":
        sb.run(["mkfifo", "/etc/nologin.txt"])     # must not hang
    elif kind == "unreadable":
        sb.write("/etc/nologin.txt", "secret\n", mode=0o600)
    else:
        sb.run(["ln", "-s", "/nonexistent", "/etc/nologin.txt"])
    res = run(sb, [NOLOGIN], timeout=10)
    assert (res.returncode, res.stdout) == (1, DEFAULT)


def test_su_to_a_nologin_account(nsb):
    res = nsb.run([SU, "-", "svc"], check=False)
    assert res.returncode == 1
    assert res.stdout == DEFAULT
    res = nsb.run([SU, "svc", "-c", "id"], check=False)
    assert (res.returncode, res.stdout) == (1, DEFAULT)


def test_argc_zero(nsb):
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "argv = (ctypes.c_char_p * 1)(None); env = (ctypes.c_char_p * 1)(None); "
            "libc.execve(b'%s', argv, env); os._exit(99)" % NOLOGIN)
    res = run(nsb, ["/usr/bin/python3", "-c", code])
    assert res.returncode == 1


@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
def test_closed_standard_fds(nsb, closed):
    # with stdout closed the message must not land in the log socket or a file
    nsb.syslog(clear=True)
    res = run(nsb, ["/bin/sh", "-c", "%s %s; echo rc=$? >&2" % (NOLOGIN, closed)])
    assert "rc=1" in res.stderr
    log = nsb.syslog()
    assert len(log) == 1 and "Attempted login by svc" in log[0]
    assert "currently not available" not in log[0]


def test_tiny_rlimit_and_long_arguments(nsb):
    res = run(nsb, ["prlimit", "--nofile=3:3", NOLOGIN])
    assert res.returncode in (1, 127)       # 127: the loader itself had no fd
    res = run(nsb, [NOLOGIN, "-c", "x" * 10000, "y" * 10000])
    assert (res.returncode, res.stdout, res.stderr) == (1, DEFAULT, "")
