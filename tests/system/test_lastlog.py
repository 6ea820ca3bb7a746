"""lastlog and faillog: records indexed by uid, which a uid of 4,000,000,000 would place
1.1 TB (lastlog) or 128 GB (faillog) into the file.

Nothing of ours grows either file further than shadow-utils would.  useradd resets the
records a deleted user left at a reused uid, as shadow-utils' useradd does (unless -l or
the uid is shared with -o), but only records the file already holds, and lastlog's only up
to LASTLOG_UID_MAX; usermod -u moves the records to the new uid (growing a file only to
place a record that holds something, lastlog's only up to LASTLOG_UID_MAX) and clears
the old ones unless another account keeps that uid; login's lastlog record is
pam_lastlog's (Debian's /etc/pam.d/login), which honours the same key.  Attacked: a
reused uid showing the deleted user's last login and failures to the new account, a
moved account losing its records or leaving them at its old uid, and huge uids through
useradd, usermod and a login."""

import os
import struct

import pytest

import sandbox
from ptyproc import Pty

LOGIN = "/usr/bin/login"
LASTLOG = "/var/log/lastlog"
FAILLOG = "/var/log/faillog"
LL_SIZE = 292               # struct lastlog: int32 time, line[32], host[256]
FL_SIZE = 32                # faillog(5): short, short, char[12], time_t, long (LP64)
LIMIT = 100000
HUGE = 4000000000
PW = "Tulip-7-harbour-ll"


@pytest.fixture(scope="module")
def sb(base):
    with sandbox.Sandbox(base, size="512m") as s:
        s.add_classic_user("alice", password=PW)
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nodelay"})
        pam_login = s.read("/etc/pam.d/login")
        assert "pam_lastlog.so" in pam_login
        s.write("/etc/pam.d/login", pam_login.replace("delay=3000000", "delay=0"))
        s.write("/etc/login.defs", s.read("/etc/login.defs") +
                "\nFAIL_DELAY 0\nLASTLOG_UID_MAX %d\n" % LIMIT)
        yield s


def host_path(sb, path):
    return os.path.join(sb.root, path.lstrip("/"))


def size(sb, path):
    return os.stat(host_path(sb, path)).st_size


def record(sb, path, recsize, uid):
    with open(host_path(sb, path), "rb") as f:
        f.seek(recsize * uid)
        return f.read(recsize)


def plant(sb, path, recsize, uid):
    """A deleted user's record at uid: nonzero, recognisable."""
    rec = (struct.pack("<i", 1234567890) + b"pts/9".ljust(32, b"\0") +
           b"old-host".ljust(256, b"\0"))[:recsize]
    with open(host_path(sb, path), "r+b") as f:
        f.seek(recsize * uid)
        f.write(rec)
    return rec


def useradd(sb, *args):
    sb.run(["/usr/sbin/useradd"] + list(args))


def test_useradd_resets_a_reused_uids_records(sb):
    for uid in (5000, 5001, 5002):
        ll = plant(sb, LASTLOG, LL_SIZE, uid)
        fl = plant(sb, FAILLOG, FL_SIZE, uid)
    sizes = size(sb, LASTLOG), size(sb, FAILLOG)
    useradd(sb, "-u", "5000", "newcomer")
    assert record(sb, LASTLOG, LL_SIZE, 5000) == bytes(LL_SIZE)
    assert record(sb, FAILLOG, FL_SIZE, 5000) == bytes(FL_SIZE)
    # -l: left alone, as shadow-utils' useradd
    useradd(sb, "-l", "-u", "5001", "nolog")
    assert record(sb, LASTLOG, LL_SIZE, 5001) == ll
    assert record(sb, FAILLOG, FL_SIZE, 5001) == fl
    # a uid another account still has (-o): its records are that account's
    useradd(sb, "-u", "5002", "first")
    plant(sb, LASTLOG, LL_SIZE, 5002)
    useradd(sb, "-o", "-u", "5002", "second")
    assert record(sb, LASTLOG, LL_SIZE, 5002) == ll
    assert (size(sb, LASTLOG), size(sb, FAILLOG)) == sizes


def test_huge_uids_never_grow_the_files(sb):
    sizes = size(sb, LASTLOG), size(sb, FAILLOG)
    assert sizes[0] < LL_SIZE * (LIMIT + 1)
    useradd(sb, "-u", str(HUGE), "huge")
    assert (size(sb, LASTLOG), size(sb, FAILLOG)) == sizes
    # above LASTLOG_UID_MAX a record is not touched even where the file holds one
    # (a sparse lastlog of 1.1 TB, as unlimited tools leave it); faillog has no limit
    ll = plant(sb, LASTLOG, LL_SIZE, HUGE + 1)
    plant(sb, FAILLOG, FL_SIZE, HUGE + 1)
    useradd(sb, "-u", str(HUGE + 1), "huger")
    assert record(sb, LASTLOG, LL_SIZE, HUGE + 1) == ll
    assert record(sb, FAILLOG, FL_SIZE, HUGE + 1) == bytes(FL_SIZE)
    for path in (LASTLOG, FAILLOG):
        os.truncate(host_path(sb, path), sizes[path == FAILLOG])


def usermod(sb, *args):
    sb.run(["/usr/sbin/usermod"] + list(args))


def test_usermod_u_moves_the_records(sb):
    # the user's last login and failures follow the account to its new uid, as
    # shadow-utils' usermod moves them, and the old uid keeps nothing of them
    useradd(sb, "-u", "7000", "mover")
    ll = plant(sb, LASTLOG, LL_SIZE, 7000)
    fl = plant(sb, FAILLOG, FL_SIZE, 7000)
    usermod(sb, "-u", "7500", "mover")
    assert record(sb, LASTLOG, LL_SIZE, 7500) == ll
    assert record(sb, FAILLOG, FL_SIZE, 7500) == fl
    assert record(sb, LASTLOG, LL_SIZE, 7000) == bytes(LL_SIZE)
    assert record(sb, FAILLOG, FL_SIZE, 7000) == bytes(FL_SIZE)
    # the files grew only as far as the new record, as shadow-utils' would
    assert size(sb, LASTLOG) <= LL_SIZE * 7501 and size(sb, FAILLOG) <= FL_SIZE * 7501
    # nothing to move: a stale record at the new uid is reset, nothing grows
    stale = plant(sb, LASTLOG, LL_SIZE, 7400)
    assert stale != bytes(LL_SIZE)
    sizes = size(sb, LASTLOG), size(sb, FAILLOG)
    usermod(sb, "-u", "7400", "mover")                 # 7500's record moves down
    assert record(sb, LASTLOG, LL_SIZE, 7400) == ll
    useradd(sb, "-l", "-u", "7700", "quiet")           # no records at all
    usermod(sb, "-u", "7300", "quiet")
    assert record(sb, LASTLOG, LL_SIZE, 7300) == bytes(LL_SIZE)
    usermod(sb, "-u", "9000", "quiet")                 # beyond the files' ends
    assert (size(sb, LASTLOG), size(sb, FAILLOG)) == sizes


def test_usermod_u_honours_limits_and_shared_uids(sb):
    useradd(sb, "-u", "7800", "leaper")
    useradd(sb, "-u", "7900", "owner")
    useradd(sb, "-u", "7901", "joiner")
    plant(sb, LASTLOG, LL_SIZE, 7800)
    owners = plant(sb, LASTLOG, LL_SIZE, 7900)
    joiners = (struct.pack("<i", 1700000000) + b"tty3".ljust(32, b"\0") +
               b"joiner-host".ljust(256, b"\0"))
    with open(host_path(sb, LASTLOG), "r+b") as f:
        f.seek(LL_SIZE * 7901)
        f.write(joiners)
    sizes = size(sb, LASTLOG), size(sb, FAILLOG)
    # above LASTLOG_UID_MAX no lastlog record is written, even one to move
    usermod(sb, "-u", str(HUGE + 3), "leaper")
    assert record(sb, LASTLOG, LL_SIZE, 7800) == bytes(LL_SIZE)
    assert (size(sb, LASTLOG), size(sb, FAILLOG)) == sizes
    # -o onto another account's uid: that account's records stay its own
    usermod(sb, "-o", "-u", "7900", "joiner")
    assert record(sb, LASTLOG, LL_SIZE, 7900) == owners
    assert record(sb, LASTLOG, LL_SIZE, 7901) == bytes(LL_SIZE)
    # leaving a shared uid: the account still there keeps its record
    usermod(sb, "-u", "7902", "joiner")
    assert record(sb, LASTLOG, LL_SIZE, 7900) == owners
    assert record(sb, LASTLOG, LL_SIZE, 7902) == owners
    assert size(sb, LASTLOG) == max(sizes[0], LL_SIZE * 7903)
    assert size(sb, FAILLOG) == sizes[1]


def login(sb, name):
    with Pty(sb, [LOGIN, name]) as p:
        p.expect("Password: ")
        p.send(PW + "\n")
        p.expect(r"\$ $")
        p.send("exit\n")
        assert p.wait() == 0, p.output


@pytest.mark.parametrize("uid, recorded", [(HUGE + 2, False), (6000, True)])
def test_login_records_only_up_to_lastlog_uid_max(sb, uid, recorded):
    name = "u%d" % uid
    useradd(sb, "-u", str(uid), "-m", "-s", "/bin/bash", name)
    sb.run(["/usr/sbin/chpasswd"], input="%s:%s\n" % (name, PW))
    before = size(sb, LASTLOG)
    login(sb, name)
    if recorded:
        assert size(sb, LASTLOG) >= LL_SIZE * (uid + 1)
        assert struct.unpack("<i", record(sb, LASTLOG, LL_SIZE, uid)[:4])[0] > 0
    else:
        assert size(sb, LASTLOG) == before
