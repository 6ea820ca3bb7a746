"""Account expiry and password aging decided exactly as pam_unix decides them.

Every combination of LSTCHG, MAX, WARN, INACT and EXPIRE below, including unset (-1), 0 and
values up to 2^31-1, is written once as a classic /etc/shadow line.  pam_unix's account
management on that file is the oracle.  The same accounts are then converted into the tree
with our pwconv, and our module's answer, the days in its warning, the NSS module's values
and `chage -l` must equal pam_unix's, the file's and shadow-utils' chage's."""

import os
import re
import time

import pytest

import sandbox

BIG = 2147483647            # 2^31-1: the far future, as tools and admins write it
UID0 = 30000


def _days():
    return int(time.time() // 86400)


def matrix(today):
    lstchgs = ["", 0, today - 400, today - 40, today - 10, today - 1, today, today + 10]
    maxes = ["", 0, 7, 30, 99999, BIG]
    warns = ["", 7]
    inacts = ["", 0, 5, BIG]
    expires = ["", 0, today, today + 1, BIG]
    rows = []
    for lstchg in lstchgs:
        for mx in maxes:
            for warn in warns:
                for inact in inacts:
                    for expire in expires:
                        rows.append((lstchg, mx, warn, inact, expire))
    return rows


def acct(sb, client, service, users):
    out = {}
    # in slices: one process per few hundred accounts keeps argv short
    for i in range(0, len(users), 400):
        res = sb.run([client, service] + users[i:i + 400])
        assert res.returncode == 0, res
        for line in res.stdout.splitlines():
            m = re.match(r"^(\S+)(.*) => (\S+)$", line)
            assert m, line
            days = re.findall(r"expire in (\d+) day", m.group(2))
            out[m.group(1)] = (m.group(3), days)
    return out


@pytest.fixture
def client(build_dir):
    path = os.path.join(build_dir, "tests", "clients", "acct-check")
    assert os.access(path, os.X_OK), "build %s first" % path
    return path


def test_account_decisions_equal_pam_unix(sb, client):
    today = _days()
    rows = matrix(today)
    users = ["ag%04d" % i for i in range(len(rows))]
    hash_ = sandbox._crypt("Aging-oracle-1")
    pw = sb.read("/etc/passwd")
    sp = sb.read("/etc/shadow")
    shadow_lines = {}
    for i, (name, row) in enumerate(zip(users, rows)):
        lstchg, mx, warn, inact, expire = row
        pw += "%s:x:%d:%d::/nonexistent:/bin/sh\n" % (name, UID0 + i, UID0 + i)
        line = "%s:%s:%s::%s:%s:%s:%s:" % (name, hash_, lstchg, mx, warn, inact, expire)
        shadow_lines[name] = line
        sp += line + "\n"
    sb.write("/etc/passwd", pw)
    sb.write("/etc/shadow", sp, mode=0o640, gid=sb.getgrnam("shadow")[1])
    sb.set_nsswitch_shadow("files")
    sb.write("/etc/pam.d/oracle-unix", "account required pam_unix.so\n")
    sb.write("/etc/pam.d/oracle-hs", "account required pam_hardened_shadow.so\n")

    oracle = acct(sb, client, "oracle-unix", users)
    sample = users[::23]
    stock_chage = {u: sb.run([sandbox.CLASSIC_TOOLS_DIR + "/chage", "-l", u]).stdout
                   for u in sample}

    res = sb.run(["/usr/sbin/pwconv"])
    assert res.returncode == 0, res
    ours = acct(sb, client, "oracle-hs", users)
    if _days() != today:
        # the matrix is laid out around one day; both runs must see it
        pytest.skip("the day changed during the run (midnight UTC); run it again")
    diffs = [(u, rows[i], oracle[u], ours.get(u)) for i, u in enumerate(users)
             if oracle[u] != ours.get(u)]
    assert not diffs, "%d of %d differ from pam_unix, first: %s" % (len(diffs), len(users),
                                                                   diffs[:8])

    # the NSS module returns the fields the classic line held
    sb.set_nsswitch_shadow("hardened_shadow")
    got = {}
    for i in range(0, len(users), 400):
        res = sb.run(["getent", "shadow"] + users[i:i + 400], check=False)
        for line in res.stdout.splitlines():
            got[line.split(":")[0]] = line
    for u in users:
        want = shadow_lines[u].split(":")
        have = got.get(u, "").split(":")
        # empty and -1 are the same "unset" in struct spwd
        norm = [f if f != "-1" else "" for f in have[2:8]]
        assert have[:2] == want[:2] and norm == [f for f in want[2:8]], (u, want, have)

    # chage -l prints what shadow-utils' chage printed on the classic file
    for u in sample:
        res = sb.run(["/usr/bin/chage", "-l", u])
        assert res.returncode == 0, res
        assert res.stdout == stock_chage[u], (u, shadow_lines[u], stock_chage[u], res.stdout)
