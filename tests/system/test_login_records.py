"""The login records su and login append to logs others share: btmp (FTMP_FILE), wtmp.

- su and login both honour login.defs' FTMP_FILE for a refused try (su wrote a fixed
  /var/log/btmp);
- a caller who stops su anywhere in its failed-try record holds up no one: su runs with
  the caller's real uid, so the caller may stop it at any instant, and glibc's updwtmpx()
  held an fcntl lock on the whole of btmp while it wrote.  Every other writer (another
  user's login or su) then waited for that lock 10 s and dropped its record: the stopped
  su hid everyone else's failures.  The records are now appended in one write to an
  O_APPEND descriptor, with no lock held;
- nor does a stopped util-linux su (a glibc writer a user can stop) hold up our login and
  su any more, nor overwrite their records when it goes on at the end it took before: an
  empty record goes first while a writer holds the lock;
- a stopped utempter no longer hangs the end of a session for good when another PAM
  module reads utmp through glibc at pam_close_session: the parent of login, su and
  runuser blocked SIGALRM, glibc's timeout for its utmp lock (10 s now).

Every syscall su makes on the log is a stop point, found from a trace of the same su
(strace as root injects the SIGSTOP the caller could send at that instant)."""

import os
import re
import signal
import subprocess
import time

import pytest

import sandbox
from ptyproc import Pty
from test_lock_window import comm, descendants, resume, state_of

SU = "/usr/bin/su"
DEBIAN_SU = "/usr/local/bin/hs-test-debian-su"
LOGIN = "/usr/bin/login"
BTMP = "/var/log/btmp"
OTHER_BTMP = "/var/log/failed-logins"
PW = {"alice": "Alice-rec-pw-1", "bob": "Bob-rec-pw-2", "carol": "Carol-rec-pw-3"}
# glibc gives up on a held lock after 10 s; a record within this is not held up
PROMPT_S = 5.0
SYSCALL = re.compile(r"^(\d+)\s+([a-z0-9_]+)\((.*)")


@pytest.fixture(scope="module")
def sb(base):
    """alice, bob and carol, converted; PAM on our module without failure delays."""
    with sandbox.Sandbox(base, size="512m") as s:
        with open("/usr/bin/su", "rb") as f:      # the host's: util-linux's
            s.write(DEBIAN_SU, f.read(), mode=0o4755)
        for name in PW:
            s.add_classic_user(name, password=PW[name])
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        pam_login = s.read("/etc/pam.d/login")
        s.write("/etc/pam.d/login", pam_login.replace("delay=3000000", "delay=0"))
        s.hs_defs = s.read("/etc/login.defs") + "\nFAIL_DELAY 0\nLOGIN_RETRIES 1\n"
        s.write("/etc/login.defs", s.hs_defs)
        yield s


def fresh_log(sb, path):
    """An empty btmp as Debian ships it: root:utmp 0660."""
    sb.write(path, "", mode=0o660, gid=sb.getgrnam("utmp")[1])


def records(sb, path):
    """utmpdump's records of path as (type, user, line)."""
    out = sb.run(["/usr/bin/utmpdump", path], check=False).stdout
    recs = []
    for line in out.splitlines():
        f = [x.strip() for x in re.findall(r"\[([^\]]*)\]", line)]
        if len(f) >= 5:
            recs.append((int(f[0]), f[3], f[4]))
    return recs


def as_user(sb, name, argv):
    pw = sb.getpwnam(name)
    return ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
            "--init-groups", "--"] + argv


def refused_login(sb, name):
    """A wrong password for name at login on a terminal; seconds until "Login incorrect"."""
    with Pty(sb, [LOGIN, name]) as p:
        p.expect("Password: ")
        start = time.monotonic()
        p.send("not-the-password\n")
        p.expect("Login incorrect", timeout=30)
        took = time.monotonic() - start
        assert p.wait(timeout=30) == 1
    return took


def refused_su(sb, caller, target):
    """caller's su to target with a wrong password; seconds it took."""
    start = time.monotonic()
    res = sb.run([SU, "-c", "true", target], user=caller, input="not-the-password\n",
                 check=False, timeout=30)
    assert res.returncode == 1 and "Authentication failure" in res.stderr, res
    return time.monotonic() - start


# ---------------------------------------------------------------- FTMP_FILE


def test_ftmp_file_is_honoured_by_su_and_login(sb):
    """login.defs' FTMP_FILE is where a refused su goes, as a refused login: one place for
    the administrator to name (su wrote /var/log/btmp whatever FTMP_FILE said)."""
    sb.write("/etc/login.defs", sb.hs_defs + "FTMP_FILE %s\n" % OTHER_BTMP)
    try:
        fresh_log(sb, BTMP)
        fresh_log(sb, OTHER_BTMP)
        refused_su(sb, "alice", "bob")
        refused_login(sb, "carol")
        assert records(sb, BTMP) == [], records(sb, BTMP)
        recs = records(sb, OTHER_BTMP)
        assert [r[:2] for r in recs] == [(6, "bob"), (6, "carol")], recs
        # no such file: no record, and nothing made (as for btmp itself)
        sb.run(["/bin/rm", "-f", OTHER_BTMP])
        refused_su(sb, "alice", "bob")
        refused_login(sb, "carol")
        assert not sb.exists(OTHER_BTMP)
        assert records(sb, BTMP) == [], records(sb, BTMP)
    finally:
        sb.write("/etc/login.defs", sb.hs_defs)


# ---------------------------------------------------------------- a stopped su


def stop_points(sb, su):
    """The syscalls alice's refused su makes on btmp, as (name, ordinal of that name)."""
    fresh_log(sb, BTMP)
    sb.run(["strace", "-f", "-qq", "-y", "-P", BTMP, "-o", "/tmp/trace"] +
           as_user(sb, "alice", [su, "-c", "true", "bob"]), input="not-bobs\n", check=False)
    seen, points = {}, []
    for m in filter(None, map(SYSCALL.match, sb.read("/tmp/trace").splitlines())):
        name = m.group(2)
        seen[name] = seen.get(name, 0) + 1
        points.append((name, seen[name]))
    assert any(p[0] == "write" for p in points), sb.read("/tmp/trace")
    assert records(sb, BTMP) == [(6, "bob", "")], records(sb, BTMP)
    return points


def stopped_su(sb, su, point):
    """alice's refused su, stopped by SIGSTOP at point (strace delivers it as she could:
    su has her real uid).  The strace process and su's pid."""
    name, nth = point
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-P", BTMP, "-e",
                       "inject=%s:signal=SIGSTOP:when=%d" % (name, nth)] +
                      as_user(sb, "alice", [su, "-c", "true", "bob"]), None, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    proc.stdin.write("not-bobs\n")
    proc.stdin.close()
    proc.stdin = None
    deadline = time.monotonic() + 30
    since = {}
    while time.monotonic() < deadline:
        # every syscall strace looks at is a short tracing stop too: stopped for good
        # is stopped for a while
        now = time.monotonic()
        for pid in descendants(proc.pid):
            if comm(pid) != os.path.basename(su)[:15] or state_of(pid) not in ("t", "T"):
                since.pop(pid, None)
            elif now - since.setdefault(pid, now) > 0.3:
                return proc, pid
        if proc.poll() is not None:
            raise AssertionError("su ended before %s: %r" % (point, proc.communicate()))
        time.sleep(0.01)
    raise AssertionError("su never stopped at %s" % (point,))


@pytest.mark.parametrize("su", [SU, DEBIAN_SU])
def test_stopped_su_holds_up_no_other_record(sb, su):
    """alice stops her refused su at each of its syscalls on btmp; meanwhile carol's refused
    login and bob's refused su are recorded at once, and alice's own record follows when
    she lets su go on.  util-linux's su, stopped inside updwtmpx() with btmp's lock held,
    no longer holds up our login and su either: they wait for no one's lock."""
    for point in stop_points(sb, su):
        fresh_log(sb, BTMP)
        proc, pid = stopped_su(sb, su, point)
        try:
            took_login = refused_login(sb, "carol")
            took_su = refused_su(sb, "bob", "carol")
            recs = records(sb, BTMP)
        finally:
            resume(proc, pid)
        assert took_login < PROMPT_S and took_su < PROMPT_S, (point, took_login, took_su)
        others = sorted(r[1] for r in recs if r[1] == "carol")
        assert others == ["carol", "carol"], (point, recs)
        # a stopped updwtmpx() writes at the end it took before it stopped: over the
        # empty record each of ours put first while its lock was held
        assert sorted(r[1] for r in records(sb, BTMP) if r[0] != 0) == \
            ["bob", "carol", "carol"], (point, records(sb, BTMP))


# ---------------------------------------------------------------- RLIMIT_FSIZE


SULOG = "/var/log/sulog"


def su_under_fsize(sb, limit, caller="alice", target="bob"):
    """caller's refused su to target with RLIMIT_FSIZE (soft and hard, as ulimit -f sets
    them) at limit bytes: the caller's own limit, which su inherits."""
    res = sb.run(["/usr/bin/prlimit", "--fsize=%d:%d" % (limit, limit), "--"] +
                 as_user(sb, caller, [SU, "-c", "true", target]),
                 input="not-the-password\n", check=False, timeout=30)
    assert res.returncode == 1 and "Authentication failure" in res.stderr, res


def test_callers_file_size_limit_cuts_no_record(sb):
    """alice sets her RLIMIT_FSIZE (soft and hard) a few bytes past the logs' size, which any
    user may stat, before a refused su: the record must go in whole or not at all.  A cut
    one (glibc's updwtmpx() truncated it away, one write(2) leaves it) shifts every record
    another writer appends after it (sshd's failures, which pad nothing) off the record
    size, so lastb misreads them all; a cut SULOG_FILE line swallows the next caller's.
    su lifts the limit for the write where it holds CAP_SYS_RESOURCE; where it does not
    (a container's bounding set), it writes nothing and says so in the log."""
    sb.write("/etc/login.defs", sb.hs_defs + "SULOG_FILE %s\n" % SULOG)
    try:
        fresh_log(sb, BTMP)
        sb.write(SULOG, "", mode=0o600)
        sb.syslog(clear=True)
        su_under_fsize(sb, 10)
        size = sb.lstat(BTMP).st_size
        assert size in (0, 384), size
        lines = sb.read(SULOG).splitlines(keepends=True)
        assert len(lines) == (size != 0), lines
        if size == 0:
            logged = sb.syslog()
            assert any("cannot append to %s: File too large" % BTMP in m for m in logged), \
                logged
        refused_su(sb, "bob", "carol")
        lines = sb.read(SULOG).splitlines(keepends=True)
        assert all(re.match(r"^SU \d\d/\d\d \d\d:\d\d - \?\?\? [a-z]+-[a-z]+\n$", l)
                   for l in lines), lines
        assert [l.split()[-1] for l in lines] == ["alice-bob"] * (size != 0) + ["bob-carol"]
        assert [r[1] for r in records(sb, BTMP)] == ["bob"] * (size != 0) + ["carol"], \
            records(sb, BTMP)
    finally:
        sb.write("/etc/login.defs", sb.hs_defs)


def test_sulog_line_after_a_cut_one_starts_a_line(sb):
    """A SULOG_FILE line cut short before (a crash, a full disk, su killed by its caller
    inside its write): the next su's line goes on a line of its own, not on the end of the
    cut one, where a reader of lines ("^SU ") would miss it."""
    sb.write("/etc/login.defs", sb.hs_defs + "SULOG_FILE %s\n" % SULOG)
    try:
        sb.write(SULOG, "SU 12/06 12:00 - ??? alice-b", mode=0o600)
        refused_su(sb, "bob", "carol")
        lines = sb.read(SULOG).split("\n")
        assert lines[0] == "SU 12/06 12:00 - ??? alice-b" and lines[2] == "", lines
        assert re.match(r"^SU \d\d/\d\d \d\d:\d\d - \?\?\? bob-carol$", lines[1]), lines
        # a whole line before: nothing added
        refused_su(sb, "bob", "alice")
        assert len(sb.read(SULOG).split("\n")) == 4, sb.read(SULOG)
    finally:
        sb.write("/etc/login.defs", sb.hs_defs)


# ---------------------------------------------------------------- utmp: a stopped utempter


UTEMPTER = "/usr/lib/x86_64-linux-gnu/utempter/utempter"
UTMP = "/run/utmp"      # _PATH_UTMP, /var/run/utmp
# bob's own terminal (a pty master he opened) on utempter's stdin, as a terminal emulator
# starts it: utempter (setgid utmp) adds his entry to utmp with glibc's pututline()
UTEMPTER_ADD = ("import fcntl, os, struct\n"
                "m = os.open('/dev/pts/ptmx', os.O_RDWR | os.O_NOCTTY)\n"
                "fcntl.ioctl(m, 0x40045431, struct.pack('i', 0))\n"
                "os.dup2(m, 0)\n"
                "os.execv(%r, [%r, 'add', 'evil.example'])\n" % (UTEMPTER, UTEMPTER))


def stopped_utempter(sb):
    """bob's utempter, stopped at its write to utmp: inside pututline(), glibc's lock on
    the whole of utmp held (strace delivers the SIGSTOP bob could send: it has his real
    uid).  The strace process and utempter's pid."""
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-P", UTMP, "-e",
                       "inject=write:signal=SIGSTOP:when=1"] +
                      as_user(sb, "bob", ["/usr/bin/python3", "-c", UTEMPTER_ADD]), None, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    deadline = time.monotonic() + 30
    since = {}
    while time.monotonic() < deadline:
        now = time.monotonic()
        for pid in descendants(proc.pid):
            if comm(pid) != "utempter" or state_of(pid) not in ("t", "T"):
                since.pop(pid, None)
            elif now - since.setdefault(pid, now) > 0.3:
                return proc, pid
        if proc.poll() is not None:
            raise AssertionError("utempter ended: %r" % (proc.communicate(),))
        time.sleep(0.01)
    raise AssertionError("utempter never stopped")


def utmp_records(sb):
    """utmpdump's records of utmp as (type, pid, id, user, line, host)."""
    out = sb.run(["/usr/bin/utmpdump", UTMP], check=False).stdout
    recs = []
    for line in out.splitlines():
        f = [x.strip() for x in re.findall(r"\[([^\]]*)\]", line)]
        if len(f) >= 6:
            recs.append((int(f[0]), int(f[1]), f[2], f[3], f[4], f[5]))
    return recs


@pytest.mark.skipif(not os.path.exists(UTEMPTER), reason="libutempter0 not installed")
def test_stopped_utempter_holds_up_no_utmp_entry(sb):
    """bob stops his utempter (setgid utmp, which any user's terminal emulator starts)
    inside pututline(), glibc's lock on utmp held.  carol's login on another terminal is
    not held up (glibc's getutxent() and pututline() waited 10 s each for that lock, then
    dropped the entry; the PAM module's getutxline() for the log's logname waited too):
    utmp holds her entry during her session, and her logout marks the same slot dead;
    alice's refused login is not held up either; bob's entry follows when he lets
    utempter go on."""
    sb.write(UTMP, "", mode=0o664, gid=sb.getgrnam("utmp")[1])
    proc, pid = stopped_utempter(sb)
    try:
        with Pty(sb, [LOGIN, "carol"]) as p:
            p.expect("Password: ")
            start = time.monotonic()
            p.send(PW["carol"] + "\n")
            p.send("echo DONE$((6*7))\n")
            p.expect("DONE42", timeout=60)
            took_login = time.monotonic() - start
            during = utmp_records(sb)     # who would wait for the lock too
            start = time.monotonic()
            p.send("exit\n")
            assert p.wait(timeout=60) == 0
            took_logout = time.monotonic() - start
        line = p.tty[len("/dev/"):]
        after = utmp_records(sb)
        took_refused = refused_login(sb, "alice")     # the log names the tty's user
    finally:
        resume(proc, pid)
    assert took_login < PROMPT_S and took_logout < PROMPT_S, (took_login, took_logout)
    assert took_refused < PROMPT_S, took_refused
    assert [r[0] for r in during if r[4] == line and r[3] == "carol"] == [7], during
    # one slot for the line, USER_PROCESS at login, DEAD_PROCESS at logout, in place
    mine = [r for r in after if r[4] == line]
    assert len(mine) == 1 and mine[0][0] == 8 and mine[0][1] == p.nspid, after
    final = utmp_records(sb)
    assert [r for r in final if r[4] == line] == mine, final
    assert any(r[0] == 7 and r[3] == "bob" and r[5] == "evil.example" for r in final), final
    assert not re.search(r"^carol\s", sb.run(["who"]).stdout, re.M)


# ---------------------------------------------------------------- utmp: a site's module at logout

# tests/clients/pam_utmp_reader.c: reads utmp with glibc's getutxent() at pam_close_session
UTMP_READER = ("tests", "clients", "pam_utmp_reader.so")
RUNUSER = "/usr/sbin/runuser"
# glibc gives up on the held lock after 10 s; a parent that blocks SIGALRM never does
GLIBC_GIVES_UP_S = 15.0


def end_session(sb, tool):
    """A session of alice's through tool, ended at once; seconds from the shell's exit (or
    the start, for su and runuser as root) until the tool itself is gone."""
    if tool == "login":
        with Pty(sb, [LOGIN, "alice"]) as p:
            p.expect("Password: ")
            p.send(PW["alice"] + "\n")
            p.send("echo DONE$((6*7))\n")
            p.expect("DONE42", timeout=60)
            start = time.monotonic()
            p.send("exit\n")
            assert p.wait(timeout=30) == 0, p.output
            return time.monotonic() - start
    start = time.monotonic()
    sb.run([SU if tool == "su" else RUNUSER, "alice", "-c", "true"], timeout=30)
    return time.monotonic() - start


@pytest.mark.skipif(not os.path.exists(UTEMPTER), reason="libutempter0 not installed")
@pytest.mark.parametrize("tool", ["login", "su", "runuser"])
def test_stopped_utempter_does_not_hang_a_session_close(sb, build_dir, tool):
    """A site's session module that reads utmp through glibc when the session closes
    (pam_modutil_getlogin() -> getlogin(), getutxent()) waits for glibc's lock on utmp,
    which bob's stopped utempter holds, until glibc's alarm(10) ends the wait.  The parent
    of login, su and runuser kept every signal blocked while it closed the session: the
    SIGALRM stayed pending, and every logout hung for good.  It now ends after 10 s."""
    module = os.path.join(build_dir, *UTMP_READER)
    assert os.path.exists(module), "build %s first" % module
    service = "/etc/pam.d/" + tool
    stack = sb.read(service)
    sb.write(UTMP, "", mode=0o664, gid=sb.getgrnam("utmp")[1])
    sb.write(service, stack + "session optional %s\n" % module)
    proc, pid = stopped_utempter(sb)
    try:
        took = end_session(sb, tool)
    finally:
        resume(proc, pid)
        sb.write(service, stack)
    assert took < GLIBC_GIVES_UP_S, took


def signal_bits(status, field):
    return int(re.search(r"^%s:\s*([0-9a-f]+)$" % field, status, re.M).group(1), 16)


@pytest.mark.parametrize("tool", ["su", "runuser"])
@pytest.mark.parametrize("ignored", [False, True])
def test_session_gets_the_callers_sigalrm(sb, tool, ignored):
    """The parent ignores SIGALRM and leaves it unblocked for itself; the command of su and
    runuser still gets the caller's action and mask for it (nohup-like callers)."""
    trap = "trap '' ALRM; " if ignored else ""
    res = sb.run(["/bin/bash", "-c", "%sexec %s alice -c 'cat /proc/self/status'"
                  % (trap, SU if tool == "su" else RUNUSER)])
    bit = 1 << (signal.SIGALRM - 1)
    assert bool(signal_bits(res.stdout, "SigIgn") & bit) == ignored, res.stdout
    assert not signal_bits(res.stdout, "SigBlk") & bit, res.stdout


@pytest.mark.skipif(not os.path.exists(UTEMPTER), reason="libutempter0 not installed")
def test_sigalrm_flood_does_not_end_the_su_parent(sb, build_dir):
    """su's caller may signal su's parent (it keeps their real uid), and SIGALRM is no
    longer blocked there.  A flood of it through the whole session, the close's wait for
    glibc's utmp lock included (bob's stopped utempter holds it), must not end the parent
    before its session is closed: it is ignored but inside glibc's wait, which it only
    cuts short, as glibc's own alarm would.  (Sent by root here: the disposition is the
    parent's, whoever sends.)"""
    module = os.path.join(build_dir, *UTMP_READER)
    assert os.path.exists(module), "build %s first" % module
    service = "/etc/pam.d/su"
    stack = sb.read(service)
    sb.write(UTMP, "", mode=0o664, gid=sb.getgrnam("utmp")[1])
    sb.write(service, stack + "session optional %s\n" % module)
    utempter, upid = stopped_utempter(sb)
    try:
        cmd, _ = sb._wrap([SU, "alice", "-c", "sleep 1; echo DONE$((6*7))"], None, "/")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                                start_new_session=True, text=True)
        deadline = time.monotonic() + 30
        # from the session on (before it, su's SIGALRM is the caller's own business)
        while proc.poll() is None and not any(comm(p) == "sleep"
                                              for p in descendants(proc.pid)):
            assert time.monotonic() < deadline
            time.sleep(0.005)
        sent = 0
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                os.kill(proc.pid, signal.SIGALRM)
                sent += 1
            except ProcessLookupError:
                break
            time.sleep(0.02)
        out, err = proc.communicate(timeout=30)
    finally:
        resume(utempter, upid)
        sb.write(service, stack)
    assert sent > 10, sent
    assert proc.returncode == 0, (proc.returncode, out, err)
    assert "DONE42" in out, (out, err)


# ---------------------------------------------------------------- utmp: a stale entry of a reused pid

# struct utmp on Linux (x86_64, i386, arm64 alike): type, pid, line, id, user, host, exit,
# session, tv, addr_v6, unused
UTMP_REC = "<h2xi32s4s32s256shhiii4i20x"
# as root, before login starts with the same pid (getty's exec): an entry of a user's old
# utempter whose pid that was (it never ran "del": a killed terminal emulator), in a slot
# before getty's LOGIN_PROCESS entry for this terminal
PLANT_THEN_LOGIN = (
    "import os, struct, sys\n"
    "line = os.ttyname(0)[len('/dev/'):]\n"
    "def rec(t, id, user, l, host):\n"
    "    return struct.pack(%r, t, os.getpid(), l.encode(), id.encode(), user.encode(),\n"
    "                       host.encode(), 0, 0, 0, 1, 0, 0, 0, 0, 0)\n"
    "with open(%r, 'ab') as f:\n"
    "    f.write(rec(7, 's/99', 'bob', 'pts/99', 'evil.example'))\n"
    "    f.write(rec(6, 'GTY1', 'LOGIN', line, ''))\n"
    "os.execv(%r, [%r, 'carol'])\n" % (UTMP_REC, UTMP, LOGIN, LOGIN))


def test_stale_entry_of_a_reused_pid_is_not_logins_slot(sb):
    """bob's utempter entry for pts/99 outlived its process (his terminal emulator was
    killed); its pid is getty's now, and login's after getty's exec.  login takes the id of
    getty's entry for its own terminal, not of bob's stale entry for another line that
    happens to come first: in bob's slot carol's entry would be overwritten by the next
    writer of pts/99 (sshd, utempter: the same id), and getty's slot would say LOGIN."""
    sb.write(UTMP, "", mode=0o664, gid=sb.getgrnam("utmp")[1])
    with Pty(sb, ["/usr/bin/python3", "-c", PLANT_THEN_LOGIN]) as p:
        p.expect("Password: ")
        p.send(PW["carol"] + "\n")
        p.send("echo DONE$((6*7))\n")
        p.expect("DONE42", timeout=60)
        during = utmp_records(sb)
        p.send("exit\n")
        assert p.wait(timeout=60) == 0
    after = utmp_records(sb)
    line = p.tty[len("/dev/"):]
    assert during[0] == (7, p.nspid, "s/99", "bob", "pts/99", "evil.example"), during
    assert during[1][:5] == (7, p.nspid, "GTY1", "carol", line), during
    assert len(during) == 2, during
    assert after[0] == during[0] and after[1][:3] == (8, p.nspid, "GTY1"), after
    assert len(after) == 2, after


PLANT_THEN_SU = (
    "import os, struct\n"
    "line = os.ttyname(0)[len('/dev/'):]\n"
    "with open(%r, 'ab') as f:\n"
    "    f.write(struct.pack(%r, 7, os.getpid(), line.encode(), b'x9', b'ev\\x1b[2Jil',\n"
    "                        b'', 0, 0, 0, 1, 0, 0, 0, 0, 0))\n"
    "os.setgroups([])\n"
    "os.setresgid(%d, %d, %d)\n"
    "os.setresuid(%d, %d, %d)\n"
    "os.execv('/usr/bin/su', ['su', 'bob', '-c', 'true'])\n")


def test_failure_log_escapes_what_others_chose(sb):
    """The module's "authentication failure" line names the utmp entry's user of the
    terminal (what a member of group utmp, or any program writing utmp, put there) and
    the application's PAM items.  An escape sequence there must reach the log escaped,
    like every other message of the suite, not as raw bytes for whoever reads the log on
    a terminal."""
    sb.write(UTMP, "", mode=0o664, gid=sb.getgrnam("utmp")[1])
    alice = sb.getpwnam("alice")
    script = PLANT_THEN_SU % ((UTMP, UTMP_REC) + (alice.gid,) * 3 + (alice.uid,) * 3)
    sb.syslog(clear=True)
    with Pty(sb, ["/usr/bin/python3", "-c", script]) as p:
        p.expect("Password: ")
        p.send("wrong-guess-1\n")
        p.expect("Authentication failure", timeout=60)
        p.wait(timeout=60)
    failures = [l for l in sb.syslog() if "authentication failure; logname=" in l]
    assert failures, sb.syslog()
    assert all("\x1b" not in l for l in failures), failures
    assert any("logname=ev\\x1b[2Jil " in l for l in failures), failures
