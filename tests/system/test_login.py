"""login in a throwaway root, on real pseudo-terminals, through Debian's
/etc/pam.d/login with pam_hardened_shadow.so in common-*.

Covered: the right password (the shell started through the shell proxy as "-bash", the
environment, `who` during the session, the utmp and wtmp records, the terminal's owner
and mode during authentication, during the session and after it, the PAM session opened
and closed, the syslog line); a wrong password; an unknown name (never logged, it may be
a password); LOGIN_RETRIES; LOGIN_TIMEOUT; an expired password forcing a change; an
account whose expiry date has passed; -f refused for non-root callers and honoured for
root; the session's core limit (limits.conf's, else the caller's); vhangup() cutting off a
process that held the terminal before; and bad input
(argc == 0, no terminal, closed fds, RLIMIT_NOFILE of 3, a hostile environment, a
10,000-byte name, a name that looks like an option, SIGKILL at random moments)."""

import os
import random
import re
import signal
import socket
import time

import pytest

import sandbox
from ptyproc import Pty, processes_in

LOGIN = "/usr/bin/login"
TREE = "/etc/hardened-shadow"
PW = {"alice": "Alice-login-pw-1", "bob": "Bob-login-pw-2", "carol": "Carol-login-pw-3",
      "dave": "Dave-login-pw-4"}
NEW_PW = "Tulip-7-harbour"
SHELL_PROMPT = r"\$ $"
LOGIN_PROMPT = r"login: $"
FORCED_CHANGE_MSG = ("You are required to change your password immediately "
                     "(administrator enforced)")
EXPIRED_ACCOUNT_MSG = "Your account has expired; please contact your system administrator."

_crypt = None


@pytest.fixture(scope="module")
def sb(base):
    """alice and bob (bash behind the proxy), carol (password expired by root), dave
    (account expired), converted; PAM on our module; no failure delays (Debian's
    pam_faildelay line and our module's own 2 s), so failures cost no time."""
    with sandbox.Sandbox(base, size="1g") as s:
        for name in PW:
            s.add_classic_user(name, password=PW[name])
        # an account whose home directory does not exist
        s.add_classic_user("erin", password=PW["alice"], create_home=False,
                           home="/home/nonexistent-erin")
        s.set_login_defs("SHELL_PROXY", "yes")     # the proxy's paths
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        s.run(["/usr/bin/passwd", "-e", "carol"])
        s.run(["/usr/bin/chage", "-E", "2000-01-01", "dave"])
        pam_login = s.read("/etc/pam.d/login")
        assert "pam_faildelay.so  delay=3000000" in pam_login
        s.write("/etc/pam.d/login", pam_login.replace("delay=3000000", "delay=0"))
        if not s.exists("/var/cache/cracklib/cracklib_dict.pwd"):
            conf = "/etc/security/pwquality.conf"
            s.write(conf, (s.read(conf) if s.exists(conf) else "") + "dictcheck = 0\n")
        s.hs_defs = s.read("/etc/login.defs")
        assert s.lstat(LOGIN).st_mode & 0o7777 == 0o755
        yield s


def defs(sb, **kv):
    """The root's login.defs: Debian's, FAIL_DELAY 0, LOGIN_RETRIES 1, plus kv."""
    settings = {"FAIL_DELAY": 0, "LOGIN_RETRIES": 1, "LOG_OK_LOGINS": "yes"}
    settings.update(kv)
    sb.write("/etc/login.defs", sb.hs_defs + "\n" + "".join(
        "%s %s\n" % (k, v) for k, v in settings.items()))
    sb.syslog(clear=True)


def log(sb):
    return [re.sub(r"^<\d+>", "", m) for m in sb.syslog(clear=True)]


def wtmp(sb):
    """utmpdump's lines for /var/log/wtmp as (type, pid, id, user, line)."""
    out = sb.run(["/usr/bin/utmpdump", "/var/log/wtmp"]).stdout
    recs = []
    for l in out.splitlines():
        f = re.findall(r"\[([^\]]*)\]", l)
        if len(f) >= 5:
            recs.append((int(f[0]), int(f[1]), f[2].strip(), f[3].strip(), f[4].strip()))
    return recs


def mode_of(sb, tty):
    st = sb.lstat(tty)
    return st.st_uid, st.st_gid, st.st_mode & 0o7777


def login_as(sb, name, password):
    """login NAME, typing password; the Pty at the shell prompt."""
    p = Pty(sb, [LOGIN, name])
    p.expect("Password: ")
    p.send(password + "\n")
    p.expect(SHELL_PROMPT)
    return p


# ---------------------------------------------------------------- success


def test_login_right_password(sb):
    defs(sb)
    alice = sb.getpwnam("alice")
    tty_gid = sb.getgrnam("tty")[1]
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        # while login asks, the terminal is root's and nobody else's
        assert mode_of(sb, p.tty) == (0, tty_gid, 0o600)
        p.send(PW["alice"] + "\n")
        p.expect(SHELL_PROMPT)
        assert PW["alice"] not in p.output
        p.send('echo "ID=$(id -un) ARG0=$0 PWD=$(pwd) PARENT=$PPID"; who; '
               'env > /tmp/login-env; echo "DONE$((6*7))"\n')
        m = p.expect(r"ID=(\S+) ARG0=(\S+) PWD=(\S+) PARENT=(\d+)")
        p.expect("DONE42")
        during = mode_of(sb, p.tty)
        who = p.output
        p.send("exit 4\n")
        status = p.wait()
        after = mode_of(sb, p.tty)
    # the proxy started bash as a login shell, in alice's home
    assert m.group(1, 2, 3) == ("alice", "-bash", "/home/alice"), p.output
    # the shell's parent is login, still there (and root), waiting
    assert int(m.group(4)) == p.nspid
    assert status == 4
    # the terminal: alice's during the session (TTYGROUP tty, TTYPERM 0600), root's after
    assert during == (alice.uid, tty_gid, 0o600)
    assert after == (0, tty_gid, 0o600)
    line = p.tty[len("/dev/"):]
    assert re.search(r"^alice\s+%s\s" % re.escape(line), who, re.M), who
    env = dict(l.split("=", 1) for l in sb.read("/tmp/login-env").splitlines() if "=" in l)
    assert env["HOME"] == "/home/alice" and env["USER"] == "alice"
    assert env["LOGNAME"] == "alice" and env["MAIL"] == "/var/mail/alice"
    assert env["SHELL"] == "/bin/bash"          # the proxy replaced its own path
    assert env["TERM"] == "vt100"
    assert "/usr/games" in env["PATH"]          # Debian's ENV_PATH
    # utmp and wtmp: a login and a logout record of this process for this line
    recs = [r for r in wtmp(sb) if r[1] == p.nspid]
    assert any(r[0] == 7 and r[3] == "alice" and r[4] == line for r in recs), recs
    assert any(r[0] == 8 and r[4] == line for r in recs), recs
    assert not re.search(r"^alice\s", sb.run(["who"]).stdout, re.M)
    lines = log(sb)
    assert any(l.endswith("login[%d]: LOGIN ON %s BY alice" % (p.nspid, line)) for l in lines)
    opened = [i for i, l in enumerate(lines) if "pam_hardened_shadow(login:session): "
              "session opened for user alice" in l]
    closed = [i for i, l in enumerate(lines) if "pam_hardened_shadow(login:session): "
              "session closed for user alice" in l]
    assert len(opened) == 1 and len(closed) == 1 and opened < closed, lines


def test_login_prompts_for_the_name_and_root_may_use_f(sb):
    defs(sb)
    with Pty(sb, [LOGIN, "-H"]) as p:
        p.expect(LOGIN_PROMPT)
        assert p.output == "login: "            # -H: no host name in the prompt
    with Pty(sb, [LOGIN]) as p:
        host = p.expect(r"(\S+) login: $").group(1)
        assert host == socket.gethostname()
        p.send("bob\n")
        p.expect("Password: ")
        p.send(PW["bob"] + "\n")
        p.expect(SHELL_PROMPT)
        p.send('echo "ID=$(id -un)"; exit\n')
        p.expect("ID=bob")
        assert p.wait() == 0
    # -f: root vouches for the user; no password is asked
    with Pty(sb, [LOGIN, "-f", "bob"]) as p:
        p.expect(SHELL_PROMPT)
        p.send('echo "ID=$(id -un)"; exit\n')
        p.expect("ID=bob")
        assert p.wait() == 0
    assert "Password" not in p.output
    # -h: the remote host goes to utmp/wtmp (no name lookup) and the log
    with Pty(sb, [LOGIN, "-h", "192.0.2.7", "-f", "bob"]) as p:
        p.expect(SHELL_PROMPT)
        p.send("exit\n")
        assert p.wait() == 0
    line = p.tty[len("/dev/"):]
    dump = sb.run(["/usr/bin/utmpdump", "/var/log/wtmp"]).stdout
    assert re.search(r"^\[7\] \[0*%d\] \[[^\]]*\] \[bob\s*\] \[%s\s*\] \[192\.0\.2\.7\s*\] "
                     r"\[192\.0\.2\.7\s*\]" % (p.nspid, re.escape(line)), dump, re.M), dump
    assert any(l.endswith("LOGIN ON %s BY bob FROM 192.0.2.7" % line) for l in log(sb))
    for bad in ("evil host", "a" * 300, "x\x1b[2J"):
        with Pty(sb, [LOGIN, "-h", bad, "-f", "bob"]) as p:
            assert p.wait() == 1 and "invalid host name" in p.output


def test_login_hushlogin_default_home_and_chsh(sb):
    motd = "comes with ABSOLUTELY NO WARRANTY"     # Debian's /etc/motd, via pam_motd
    defs(sb)
    with login_as(sb, "bob", PW["bob"]) as p:
        p.send('echo "ARG0=$0"; exit\n')
        p.expect("ARG0=-bash")
        assert p.wait() == 0
    assert motd in p.output
    # HUSHLOGIN_FILE .hushlogin (Debian's): the session is opened silently
    bob = sb.getpwnam("bob")
    sb.write("/home/bob/.hushlogin", "", uid=bob.uid, gid=bob.gid)
    # and root changes bob's shell behind the proxy: the next login starts it
    sb.run(["/usr/sbin/usermod", "-s", "/bin/dash", "--self-service-shell", "bob"])
    assert sb.getpwnam("bob").shell.endswith("/shell-proxy")
    with login_as(sb, "bob", PW["bob"]) as p:
        p.send('echo "ARG0=$0"; exit\n')
        p.expect("ARG0=-dash")
        assert p.wait() == 0
    assert motd not in p.output
    sb.run(["/usr/bin/chsh", "-s", "/bin/bash", "bob"])
    # DEFAULT_HOME: no home directory means "/" (yes) or no login (no)
    defs(sb, DEFAULT_HOME="yes")
    with login_as(sb, "erin", PW["alice"]) as p:
        p.send('echo "PWD=$(pwd)"; exit\n')
        p.expect(r"PWD=/\n")
        assert p.wait() == 0
    assert 'No directory /home/nonexistent-erin!\nLogging in with home = "/".' in p.output
    defs(sb, DEFAULT_HOME="no")
    with Pty(sb, [LOGIN, "erin"]) as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect("cannot change directory to /home/nonexistent-erin")
        assert p.wait() == 1
    lines = log(sb)
    assert any("session closed for user erin" in l for l in lines), lines


DEBIAN_LOGIN = "/usr/local/bin/hs-test-debian-login"


def session_core_limit(sb, login, name, caller_core):
    """(soft, hard) of `ulimit -c` in NAME's session started by the login program LOGIN,
    itself run under the caller's core limit caller_core ("SOFT:HARD" in bytes, prlimit's
    form)."""
    with Pty(sb, ["/usr/bin/prlimit", "--core=" + caller_core, login, name]) as p:
        p.expect("Password: ")
        p.send(PW[name] + "\n")
        p.expect(SHELL_PROMPT)
        p.send('echo "CORE=$(ulimit -Sc):$(ulimit -Hc)"; exit\n')
        m = p.expect(r"CORE=(\w+):(\w+)")
        assert p.wait() == 0
    return m.group(1), m.group(2)


def test_session_core_limit_is_pam_limits(sb):
    # login zeroes its own core limit (it holds the session's secrets); the session's is
    # what pam_limits makes of the caller's, as under Debian's login (the oracle, on the
    # same PAM stack): limits.conf's line wins over a caller's raised or lowered limit
    defs(sb)
    with open("/bin/login", "rb") as f:
        sb.write(DEBIAN_LOGIN, f.read(), mode=0o755)
    conf = "/etc/security/limits.conf"
    saved = sb.read(conf)
    try:
        sb.write(conf, saved + "alice soft core 2048\nalice hard core 4096\n")
        for caller in ("unlimited:unlimited", "0:unlimited", "1048576:8388608"):
            ours = session_core_limit(sb, LOGIN, "alice", caller)
            assert ours == ("2048", "4096"), caller
            assert ours == session_core_limit(sb, DEBIAN_LOGIN, "alice", caller), caller
            # no line for bob: Debian's pam_limits starts from pid 1's limits, and a
            # caller's lower hard limit stands, never login's own 0
            ours = session_core_limit(sb, LOGIN, "bob", caller)
            assert ours == session_core_limit(sb, DEBIAN_LOGIN, "bob", caller), caller
            if caller == "1048576:8388608":
                assert ours == ("1024", "8192")
    finally:
        sb.write(conf, saved)
        sb.run(["/bin/rm", "-f", DEBIAN_LOGIN])
    assert no_session_left(sb)


# ---------------------------------------------------------------- failures


def test_login_wrong_password_and_unknown_name(sb):
    defs(sb)
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        p.send("not-alices-password\n")
        p.expect("Login incorrect")
        status = p.wait()
    assert status == 1 and not re.search(SHELL_PROMPT, p.output, re.M)
    lines = log(sb)
    line = p.tty[len("/dev/"):]
    assert any(re.search(r"login\[\d+\]: TOO MANY LOGIN TRIES \(1\) ON %s FOR alice, "
                         r"Authentication failure$" % re.escape(line), l) for l in lines), lines
    assert not any("session opened" in l for l in lines)

    # a password typed as the name: never in the log, unless LOG_UNKFAIL_ENAB says so
    secret = "Hunter2-secret"
    with Pty(sb, [LOGIN]) as p:
        p.expect(LOGIN_PROMPT)
        p.send(secret + "\n")
        p.expect("Password: ")
        p.send("whatever\n")
        p.expect("Login incorrect")
        assert p.wait() == 1
    lines = log(sb)
    assert not any(secret in l for l in lines), lines
    assert any("FOR UNKNOWN, Authentication failure" in l for l in lines), lines
    defs(sb, LOG_UNKFAIL_ENAB="yes")
    with Pty(sb, [LOGIN, "nosuchuser"]) as p:
        p.expect("Password: ")
        p.send("whatever\n")
        assert p.wait() == 1
    assert any("FOR nosuchuser, Authentication failure" in l for l in log(sb))


def test_login_retries(sb):
    defs(sb, LOGIN_RETRIES=2)
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        p.send("wrong-1\n")
        p.expect("Login incorrect")
        # the next try asks for the name again
        p.expect(LOGIN_PROMPT)
        p.send("alice\n")
        p.expect("Password: ")
        p.send("wrong-2\n")
        status = p.wait()
    assert status == 1
    assert p.output.count("Login incorrect") == 2 and p.output.count("Password: ") == 2
    lines = log(sb)
    assert any("FAILED LOGIN 1 ON" in l and "FOR alice" in l for l in lines), lines
    assert any("TOO MANY LOGIN TRIES (2) ON" in l for l in lines), lines
    # and the right password on the second try opens the session
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        p.send("wrong-1\n")
        p.expect(LOGIN_PROMPT)
        p.send("alice\n")
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(SHELL_PROMPT)
        p.send("exit\n")
        assert p.wait() == 0


def test_login_timeout(sb):
    defs(sb, LOGIN_TIMEOUT=1)
    started = time.monotonic()
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        p.expect(r"Login timed out after 1 seconds\.")
        status = p.wait()
    assert status == 1
    assert time.monotonic() - started < 8
    # the terminal echoes again (the prompt had turned echo off)
    assert no_session_left(sb)


def test_login_forces_change_of_expired_password(sb):
    defs(sb)
    with Pty(sb, [LOGIN, "carol"]) as p:
        p.expect("Password: ")
        p.send(PW["carol"] + "\n")
        p.expect(re.escape(FORCED_CHANGE_MSG))
        p.expect("Current password: ")
        p.send(PW["carol"] + "\n")
        p.expect("New password: ")
        p.send(NEW_PW + "\n")
        p.expect("Retype new password: ")
        p.send(NEW_PW + "\n")
        p.expect(SHELL_PROMPT)
        p.send('echo "ID=$(id -un)"; exit\n')
        p.expect("ID=carol")
        assert p.wait() == 0
    lstchg = sb.read("%s/carol/shadow" % TREE).split(":")[1]
    assert lstchg not in ("", "0")
    assert any("password changed for carol" in l for l in log(sb))
    # the next login takes the new password and asks nothing more
    with login_as(sb, "carol", NEW_PW) as p:
        p.send("exit\n")
        assert p.wait() == 0
    assert "Current password" not in p.output


def test_login_refuses_expired_account(sb):
    defs(sb)
    with Pty(sb, [LOGIN, "dave"]) as p:
        p.expect("Password: ")
        p.send(PW["dave"] + "\n")
        p.expect(re.escape(EXPIRED_ACCOUNT_MSG))
        status = p.wait()
    assert status == 1 and not re.search(SHELL_PROMPT, p.output, re.M)
    lines = log(sb)
    assert any("FAILED LOGIN ON" in l and "FOR dave" in l for l in lines), lines
    assert not any("session opened" in l for l in lines)


def test_login_non_root_refused(sb):
    defs(sb)
    for args, msg in ((["-f", "alice"], "login: -f is for the superuser only"),
                      (["alice"], "login: Cannot possibly work without effective root")):
        with Pty(sb, [LOGIN] + args, user="bob") as p:
            status = p.wait()
        assert status == 1 and msg in p.output, p.output
        assert "Password" not in p.output


# ---------------------------------------------------------------- the terminal

SNOOP = r"""
import os, signal
signal.signal(signal.SIGHUP, signal.SIG_IGN)
out = os.open("/tmp/snooped", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(out, b"START\n")
while True:
    try:
        data = os.read(0, 100)
    except OSError as e:
        os.write(out, b"ERR %d\n" % e.errno)
        break
    if not data:
        os.write(out, b"EOF\n")
        break
    os.write(out, b"GOT " + data + b"\n")
"""


def test_vhangup_cuts_off_earlier_readers(sb):
    """A process left on the terminal (reading it, ignoring SIGHUP) before login starts
    must not see the password typed to login."""
    defs(sb)
    sb.write("/tmp/snoop.py", SNOOP)
    # (an asynchronous command's stdin is /dev/null unless redirected: open the tty)
    cmd = ('T=$(tty); /usr/bin/python3 /tmp/snoop.py <"$T" & '

           "while ! [ -s /tmp/snooped ]; do sleep 0.05; done; exec %s alice" % LOGIN)
    with Pty(sb, ["/bin/sh", "-c", cmd]) as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(SHELL_PROMPT)
        p.send('echo "ID=$(id -un)"; exit\n')
        p.expect("ID=alice")
        assert p.wait() == 0
    snooped = sb.read("/tmp/snooped")
    assert snooped.startswith("START\n")
    assert "GOT" not in snooped and PW["alice"] not in snooped, snooped
    assert "EOF" in snooped or "ERR 5" in snooped, snooped


# ---------------------------------------------------------------- bad input


def no_session_left(sb, timeout=3):
    deadline = time.monotonic() + timeout
    while processes_in(sb) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_in(sb) == []


def test_bad_input(sb):
    defs(sb)
    code = ("import ctypes; libc = ctypes.CDLL(None); "
            "argv = (ctypes.c_char_p * 1)(None); env = (ctypes.c_char_p * 1)(None); "
            "libc.execve(b'%s', argv, env)" % LOGIN)
    with Pty(sb, ["/usr/bin/python3", "-c", code]) as p:
        assert p.wait() == 1 and "called without argv[0]" in p.output, p.output
    # no terminal at all, or stdin closed
    r = sb.run([LOGIN, "alice"], check=False)
    assert r.returncode == 1 and "not a terminal" in r.stderr, r
    with Pty(sb, ["/bin/sh", "-c", "exec %s alice <&-" % LOGIN]) as p:
        assert p.wait() == 1 and "not a terminal" in p.output, p.output
    # stdout and stderr closed: still a terminal on stdin; login takes all three anew
    with Pty(sb, ["/bin/sh", "-c", "exec %s alice >&- 2>&-" % LOGIN]) as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(SHELL_PROMPT)
        p.send("exit\n")
        assert p.wait() == 0
    # RLIMIT_NOFILE of 3 and 4
    for n in (3, 4):
        with Pty(sb, ["/usr/bin/prlimit", "--nofile=%d:%d" % (n, n), LOGIN, "alice"]) as p:
            status = p.wait()
        assert status in (1, 127) and not re.search(SHELL_PROMPT, p.output, re.M), p.output
    # names: 10,000 bytes, an option look-alike, a control character
    for name in ("a" * 10000, "-froot", "ali\x1bce"):
        with Pty(sb, [LOGIN, "--", name]) as p:
            status = p.wait()
        assert status == 1 and "invalid user name" in p.output and len(p.output) < 300, \
            p.output
        assert "\x1b" not in p.output and "Password" not in p.output
    # a hostile environment does not reach the session, even with -p
    env = {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libm.so.6", "IFS": "x",
           "BASH_ENV": "/tmp/evil", "HS_JUNK": "j" * 100000, "LANG": "C.UTF-8",
           "TERM": "../../tmp/evil"}
    with Pty(sb, [LOGIN, "-p", "alice"], env=env) as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(SHELL_PROMPT)
        p.send("env > /tmp/login-env-p; exit\n")
        assert p.wait() == 0
    names = {l.split("=", 1)[0] for l in sb.read("/tmp/login-env-p").splitlines() if "=" in l}
    assert "LANG" in names                      # -p keeps the locale
    assert not names & {"LD_PRELOAD", "IFS", "BASH_ENV", "HS_JUNK"}, names
    assert "TERM=../../tmp/evil" not in sb.read("/tmp/login-env-p")
    assert no_session_left(sb)


def test_sigkill_at_random_moments(sb):
    defs(sb)
    rnd = random.Random(6)
    for i in range(6):
        p = Pty(sb, [LOGIN, "alice"])
        try:
            if i % 2:
                p.expect("Password: ")
                p.send(PW["alice"] + "\n")
            time.sleep(rnd.uniform(0, 0.3))
        finally:
            p.close()               # SIGKILL to the whole process group
    # login's shell runs in a session of its own and survives its parent; a real
    # hangup ends it.  Nothing of root's may be left.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        left = [x for x in processes_in(sb) if x[1] == 0]
        if not left:
            break
        time.sleep(0.05)
    assert left == []
    for pid, uid, cmd in processes_in(sb):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass                    # a user's shell that ended since it was listed
