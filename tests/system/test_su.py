"""su and runuser in a throwaway root: real PAM (Debian's /etc/pam.d/su, su-l,
runuser, runuser-l with pam_hardened_shadow.so in common-*), real unprivileged callers,
real pseudo-terminals.

Covered: su - and su -c from an unprivileged user with a password, a wrong password, exit
status propagation (including 128+signal, 126, 127), SIGTERM to su reaching the child, the
PAM session closed after the child is killed, --pty against TIOCSTI injection (with a
positive control showing the injection works without it), the caller's LD_PRELOAD, IFS,
BASH_ENV not reaching the target, restricted shells, -g/-G, runuser's refusal of non-root
callers and its -u, the syslog and SULOG_FILE lines, and bad input (argc == 0, closed
standard fds, RLIMIT_NOFILE of 3, a hostile environment, a 10,000-byte name, SIGKILL at
random moments) leaving no privileged process behind."""

import ctypes
import os
import random
import re
import signal
import subprocess
import time

import pytest

import sandbox
from ptyproc import Pty, processes_in

SU = "/usr/bin/su"
RUNUSER = "/usr/sbin/runuser"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
SULOG = "/var/log/sulog"
PW = {"alice": "Alice-su-pw-1", "bob": "Bob-su-pw-2", "carol": "Carol-su-pw-3",
      "dave": "Dave-su-pw-4"}
NEW_PW = "Tulip-7-harbour"
MODULE_TAG = "pam_hardened_shadow("
# a line only the shell's output contains (the terminal echo shows the $((...)) unexpanded)
DONE = 'echo "DONE$((6*7))"'


@pytest.fixture(scope="module")
def sb(base):
    """alice and bob (bash, behind the proxy) and carol (nologin), converted; PAM on our
    module without its failure delay; su logs to SULOG_FILE."""
    with sandbox.Sandbox(base, size="1g") as s:
        for name in ("alice", "bob", "dave"):
            s.add_classic_user(name, password=PW[name])
        s.add_classic_user("carol", password=PW["carol"], shell="/usr/sbin/nologin")
        s.set_login_defs("SHELL_PROXY", "yes")     # the proxy's paths
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        s.run(["/usr/bin/passwd", "-e", "dave"])
        if not s.exists("/var/cache/cracklib/cracklib_dict.pwd"):
            conf = "/etc/security/pwquality.conf"
            s.write(conf, (s.read(conf) if s.exists(conf) else "") + "dictcheck = 0\n")
        s.write("/etc/login.defs", s.read("/etc/login.defs") +
                "\nFAIL_DELAY 0\nSULOG_FILE %s\n" % SULOG)
        st = s.lstat(SU)
        assert st.st_uid == 0 and st.st_mode & 0o7777 == 0o4755, oct(st.st_mode)
        assert s.lstat(RUNUSER).st_mode & 0o7777 == 0o755
        assert s.getpwnam("alice").shell == PROXY
        s.syslog(clear=True)
        yield s


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def su_as(sb, caller, args, password, **kw):
    """su ARGS run by caller with the password on standard input (no terminal)."""
    return run(sb, [SU] + args, user=caller, input=password + "\n", **kw)


def log(sb):
    return [re.sub(r"^<\d+>", "", m) for m in sb.syslog(clear=True)]


def no_process_left(sb, timeout=3):
    """Nothing of ours still runs in the root (a short-lived child may need a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        left = processes_in(sb)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


# ---------------------------------------------------------------- authentication, sessions


def test_su_login_shell_on_a_terminal(sb):
    log(sb)
    with Pty(sb, [SU, "-", "alice"], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(r"\$ $")
        p.send('echo "ID=$(id -un) ARG0=$0 PWD=$(pwd) HOME=$HOME USER=$USER SHELL=$SHELL"; '
               + DONE + "\n")
        m = p.expect(r"ID=(\S+) ARG0=(\S+) PWD=(\S+) HOME=(\S+) USER=(\S+) SHELL=(\S+)")
        p.expect("DONE42")
        p.send("exit 3\n")
        status = p.wait()
    assert m.groups() == ("alice", "-bash", "/home/alice", "/home/alice", "alice",
                          "/bin/bash"), p.output
    assert PW["alice"] not in p.output
    assert status == 3
    lines = log(sb)
    tty = p.tty[len("/dev/"):]
    assert any(l.endswith("su[%d]: (to alice) bob on %s" % (p.nspid, tty))
               or re.search(r"su\[\d+\]: \(to alice\) bob on %s$" % re.escape(tty), l)
               for l in lines), lines
    opened = [i for i, l in enumerate(lines) if "pam_hardened_shadow(su-l:session): session "
              "opened for user alice" in l]
    closed = [i for i, l in enumerate(lines) if "pam_hardened_shadow(su-l:session): session "
              "closed for user alice" in l]
    assert len(opened) == 1 and len(closed) == 1 and opened < closed, lines
    assert re.search(r"^SU \d\d/\d\d \d\d:\d\d \+ %s bob-alice$" % re.escape(tty),
                     sb.read(SULOG), re.M), sb.read(SULOG)


def test_su_command_and_exit_status(sb):
    r = su_as(sb, "bob", ["alice", "-c", 'echo "who=$(id -un) groups=$(id -Gn)"; exit 7'],
              PW["alice"])
    assert r.returncode == 7, r
    assert "who=alice groups=alice" in r.stdout
    # the shell got the extra arguments ($0 is the first one after -c's command)
    r = su_as(sb, "bob", ["alice", "-c", 'echo "args=$0,$1"', "first", "second"], PW["alice"])
    assert r.returncode == 0 and "args=first,second" in r.stdout, r
    # a command killed by a signal: 128 + N and the signal's name, as util-linux
    r = su_as(sb, "bob", ["alice", "-c", "kill -TERM $$"], PW["alice"])
    assert r.returncode == 128 + signal.SIGTERM, r
    assert "Terminated" in r.stderr
    # 127: not found, 126: cannot execute (through -s, which root may give freely)
    r = run(sb, [RUNUSER, "-s", "/nonexistent/shell", "alice", "-c", "true"])
    assert r.returncode == 127 and "failed to execute /nonexistent/shell" in r.stderr, r
    r = run(sb, [RUNUSER, "-s", "/etc/passwd", "alice", "-c", "true"])
    assert r.returncode == 126, r


def test_su_wrong_password(sb):
    log(sb)
    before = sb.read(SULOG) if sb.exists(SULOG) else ""
    r = su_as(sb, "bob", ["alice", "-c", "echo who=$(id -un)"], PW["bob"])
    assert r.returncode == 1, r
    assert "su: Authentication failure" in r.stderr and "who=" not in r.stdout
    lines = log(sb)
    assert any(re.search(r"su\[\d+\]: FAILED SU \(to alice\) bob on none$", l)
               for l in lines), lines
    assert any("pam_hardened_shadow(su:auth): authentication failure;" in l for l in lines)
    assert not any("session opened" in l for l in lines), lines
    new = sb.read(SULOG)[len(before):]
    assert re.fullmatch(r"SU \d\d/\d\d \d\d:\d\d - \?\?\? bob-alice\n", new), new
    # an unknown target: refused before PAM, with util-linux's words
    r = su_as(sb, "bob", ["nosuch"], "x")
    assert r.returncode == 1 and "su: user nosuch does not exist" in r.stderr, r


@pytest.mark.parametrize("logdir", ["/var/log", "/var/tmp"])
def test_sulog_with_another_name(sb, logdir):
    """A second name of the su log, which any user can make where fs.protected_hardlinks
    is 0 (root makes it here), must not silence the log: /var/log is root's alone, so the
    name there is still root's file.  In a directory others write (/var/tmp) the name
    itself may be a user's link to some file of root's: such a log is not written."""
    path = logdir + "/sulog-links"
    defs = sb.read("/etc/login.defs")
    sb.write(path, "", mode=0o600)
    sb.run(["/bin/ln", path, "/var/tmp/bobs-name"])
    sb.write("/etc/login.defs", defs.replace("SULOG_FILE %s" % SULOG, "SULOG_FILE " + path))
    try:
        log(sb)
        r = su_as(sb, "bob", ["alice", "-c", "true"], PW["bob"])
        assert r.returncode == 1, r
        written = sb.read(path)
        if logdir == "/var/log":
            assert re.fullmatch(r"SU \d\d/\d\d \d\d:\d\d - \?\?\? bob-alice\n", written)
        else:
            assert written == ""
            assert any("is not a regular file of root's: not written" in l for l in log(sb))
    finally:
        sb.write("/etc/login.defs", defs)
        sb.run(["/bin/rm", "-f", path, "/var/tmp/bobs-name"])


def test_su_forces_change_of_expired_password(sb):
    with Pty(sb, [SU, "dave", "-c", 'echo "who=$(id -un)"'], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["dave"] + "\n")
        p.expect("You are required to change your password immediately")
        p.expect("Current password: ")
        p.send(PW["dave"] + "\n")
        p.expect("New password: ")
        p.send(NEW_PW + "\n")
        p.expect("Retype new password: ")
        p.send(NEW_PW + "\n")
        p.expect("who=dave")
        assert p.wait() == 0
    assert sb.read("/etc/hardened-shadow/dave/shadow").split(":")[1] not in ("", "0")
    r = su_as(sb, "bob", ["dave", "-c", "id -un"], NEW_PW)
    assert r.returncode == 0 and r.stdout.strip() == "dave", r


def test_sigterm_to_su_reaches_the_child(sb):
    log(sb)
    script = 'trap "echo got-TERM; exit 5" TERM; echo READY; while :; do sleep 0.1; done'
    with Pty(sb, [SU, "alice", "-c", script], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect("READY")
        p.signal(signal.SIGTERM)
        p.expect("got-TERM")
        status = p.wait()
    assert status == 5, p.output
    assert "Session terminated, killing shell..." in p.output
    lines = log(sb)
    assert any("pam_hardened_shadow(su:session): session closed for user alice" in l
               for l in lines), lines


def test_session_closed_after_child_is_killed(sb):
    log(sb)
    with Pty(sb, [SU, "alice", "-c", 'echo "CHILD=$$"; exec sleep 60'], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        child = int(p.expect(r"CHILD=(\d+)").group(1))
        # the child is alice's and su (root) is its parent
        status_text = sb.read("/proc/%d/status" % child)     # the root's /proc
        assert re.search(r"^Uid:\s+%d\s" % sb.getpwnam("alice").uid, status_text, re.M)
        assert re.search(r"^PPid:\s+%d$" % p.nspid, status_text, re.M)
        sb.run(["kill", "-KILL", str(child)])
        status = p.wait()
    assert status == 128 + signal.SIGKILL, p.output
    assert "Killed" in p.output
    lines = log(sb)
    assert any("pam_hardened_shadow(su:session): session closed for user alice" in l
               for l in lines), lines
    assert no_process_left(sb) == []


# ---------------------------------------------------------------- the terminal


INJECT = ("/usr/bin/python3 -c 'import fcntl, termios\n"
          "try:\n"
          "    [fcntl.ioctl(0, termios.TIOCSTI, bytes([c])) for c in b\"echo INJECTED\\n\"]\n"
          "    print(\"TIOCSTI=ok\")\n"
          "except OSError as e:\n"
          "    print(\"TIOCSTI=%s\" % e.strerror)\n'")


def inject_through_su(sb, su_args):
    """bob runs su ARGS with INJECT as alice, then reads a line from his own terminal:
    returns (what the injector said, the line bob's shell read)."""
    cmd = "%s %s; echo SU-DONE; read line; echo \"AFTER=[$line]\"" % (
        SU, " ".join(su_args))
    with Pty(sb, ["/bin/sh", "-c", cmd], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        said = p.expect(r"TIOCSTI=([^\r\n]*)").group(1)
        p.expect("SU-DONE")
        p.send("clean\n")
        after = p.expect(r"AFTER=\[([^\]]*)\]").group(1)
        p.wait()
    return said, after


def test_runuser_command_cannot_inject_into_roots_terminal(sb):
    # root runs a command as alice with runuser -u: the command has a session of its own
    # and no controlling terminal, so TIOCSTI into root's terminal is refused
    cmd = "%s -u alice -- %s; echo RU-DONE; read line; echo \"AFTER=[$line]\"" % (
        RUNUSER, INJECT)
    with Pty(sb, ["/bin/sh", "-c", cmd]) as p:
        said = p.expect(r"TIOCSTI=([^\r\n]*)").group(1)
        p.expect("RU-DONE")
        p.send("clean\n")
        after = p.expect(r"AFTER=\[([^\]]*)\]").group(1)
        p.wait()
    assert said != "ok" and after == "clean", (said, after)


def quoted(s):
    return "'" + s.replace("'", "'\\''") + "'"


def test_pty_blocks_tiocsti_injection(sb):
    with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
        legacy = f.read().strip() == "1"
    # Positive control: in the caller's session (--session-command) a command run as
    # alice pushes "echo INJECTED" into bob's terminal, and bob's shell reads it.
    said, after = inject_through_su(sb, ["--session-command", quoted(INJECT), "alice"])
    if legacy:
        assert said == "ok" and after == "echo INJECTED", (said, after)
    else:
        # this kernel refuses TIOCSTI to everyone without CAP_SYS_ADMIN
        # (dev.tty.legacy_tiocsti = 0): the attack is gone anyway; test the rest
        assert after == "clean"
    # --pty: the command's terminal is a new one; nothing reaches bob's
    said, after = inject_through_su(sb, ["--pty", "-c", quoted(INJECT), "alice"])
    assert after == "clean", (said, after)
    # plain -c: a new session without a controlling terminal refuses TIOCSTI too
    said, after = inject_through_su(sb, ["-c", quoted(INJECT), "alice"])
    assert said != "ok" and after == "clean", (said, after)


def test_password_typed_after_a_stop_at_the_prompt_stays_hidden(sb):
    """^Z at su's password prompt, then fg: the caller's shell gave the terminal its own
    settings back when the job stopped (echo on), and the password typed after fg used to
    be shown on the screen.  Echo goes off again, and the prompt is shown again."""
    with Pty(sb, ["/bin/bash", "--norc", "--noprofile", "-i"], user="bob",
             env={"PS1": "$ "}) as p:
        p.expect(r"\$ ")
        p.send("%s alice -c '%s'\n" % (SU, DONE))
        p.expect("Password: ")
        time.sleep(0.2)
        p.send("\x1a")
        p.expect(r"Stopped.*\n.*\$ ")
        p.send("fg\n")
        p.expect(r"fg\n.*\n")       # bash names the job it continues
        time.sleep(0.5)
        p.send(PW["alice"] + "\n")
        p.expect(r"DONE42.*\n.*\$ ")
        p.send("exit\n")
        p.wait()
        assert PW["alice"] not in p.output, p.output
        assert p.output.count("Password: ") == 2, p.output


def test_pty_relays_input_and_output(sb):
    with Pty(sb, [SU, "--pty", "alice", "-c",
                  'tty; read x; echo "got=$x"; stty -a | grep -o -- "-\\?echo " | head -1'],
             user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        inner = p.expect(r"(/dev/pts/\d+)").group(1)
        p.send("hello\n")
        p.expect("got=hello")
        status = p.wait()
    assert status == 0, p.output
    assert inner != p.tty                 # a terminal of its own
    # with input from a pipe, the new terminal does not echo it into the output
    r = su_as(sb, "bob", ["--pty", "alice", "-c", "read x; echo got=$x"], PW["alice"])
    assert r.returncode == 0 and "got=" in r.stdout, r


# ---------------------------------------------------------------- environment and shells


HOSTILE_ENV = {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libm.so.6",
               "LD_LIBRARY_PATH": "/tmp", "IFS": "x", "BASH_ENV": "/tmp/evil",
               "ENV": "/tmp/evil", "GCONV_PATH": "/tmp", "PYTHONPATH": "/tmp",
               "TERMINFO": "/tmp", "HS_HARMLESS": "kept"}


def names_in(env_output):
    return {l.split("=", 1)[0] for l in env_output.splitlines() if "=" in l}


def test_caller_environment_filtered(sb):
    # su (setuid) and runuser (root) without --login hand the caller's environment on,
    # but never what changes how a program starts
    r = su_as(sb, "bob", ["alice", "-c", "env"], PW["alice"], env=HOSTILE_ENV)
    assert r.returncode == 0, r
    names = names_in(r.stdout)
    assert "HS_HARMLESS" in names
    assert not names & {"LD_PRELOAD", "LD_LIBRARY_PATH", "IFS", "BASH_ENV", "ENV",
                        "GCONV_PATH", "PYTHONPATH", "TERMINFO"}, r.stdout
    assert "USER=alice" in r.stdout and "HOME=/home/alice" in r.stdout
    r = run(sb, [RUNUSER, "alice", "-c", "env"], env=HOSTILE_ENV)
    assert r.returncode == 0, r
    names = names_in(r.stdout)
    assert "HS_HARMLESS" in names and "LD_PRELOAD" not in names and "IFS" not in names
    # --login: nothing but TERM and the whitelist; -w cannot bring LD_PRELOAD back
    r = run(sb, [RUNUSER, "-l", "-w", "HS_HARMLESS,LD_PRELOAD", "alice", "-c", "env"],
            env=HOSTILE_ENV)
    names = names_in(r.stdout)
    assert "HS_HARMLESS" in names and "LD_PRELOAD" not in names, r.stdout
    assert {"HOME", "USER", "LOGNAME", "PATH", "SHELL"} <= names
    # -p keeps HOME and USER of the caller
    r = run(sb, [RUNUSER, "-p", "alice", "-c", 'echo "$USER $HOME"'])
    assert r.stdout.strip() == "root /root", r


def test_restricted_shell_and_groups(sb):
    # carol's shell (nologin) is not in /etc/shells: bob's -s is ignored
    r = su_as(sb, "bob", ["-s", "/bin/sh", "carol", "-c", "echo via-sh"], PW["carol"])
    assert "su: using restricted shell /usr/sbin/nologin" in r.stderr, r
    assert "via-sh" not in r.stdout and r.returncode == 1
    # root may
    r = run(sb, [RUNUSER, "-s", "/bin/sh", "carol", "-c", "echo via-sh"])
    assert r.returncode == 0 and "via-sh" in r.stdout, r
    # -g/-G: root only
    r = su_as(sb, "bob", ["-g", "users", "alice", "-c", "id -gn"], PW["alice"])
    assert r.returncode == 1 and "only root can specify alternative groups" in r.stderr, r
    r = run(sb, [RUNUSER, "-g", "users", "-G", "audio", "alice", "-c", "id -gn; id -Gn"])
    assert r.returncode == 0 and r.stdout.split() == ["users", "users", "audio"], r
    r = run(sb, [RUNUSER, "-G", "audio", "alice", "-c", "id -gn"])
    assert r.stdout.strip() == "audio", r


def test_runuser(sb):
    r = run(sb, [RUNUSER, "-u", "alice", "--", "id", "-un"])
    assert r.returncode == 0 and r.stdout.strip() == "alice", r
    r = run(sb, [RUNUSER, "-u", "alice", "--", "no-such-command"])
    assert r.returncode == 127, r
    r = run(sb, [RUNUSER, "-u", "alice", "-c", "true"])
    assert r.returncode == 1 and "mutually exclusive" in r.stderr, r
    r = run(sb, [RUNUSER, "-u", "alice"])
    assert r.returncode == 1 and "no command was specified" in r.stderr, r
    r = run(sb, [RUNUSER, "-u", "alice", "id"], user="bob")
    assert r.returncode == 1 and "runuser: may not be used by non-root users" in r.stderr, r
    r = run(sb, [RUNUSER, "--help"])
    assert r.returncode == 0 and "-u, --user" in r.stdout
    r = run(sb, [SU, "--bogus"])
    assert r.returncode == 1 and "Try 'su --help'" in r.stderr


# ---------------------------------------------------------------- bad input


_libc = ctypes.CDLL(None)


def exec_without_argv0(sb, path, user):
    """Run path inside the root with argc == 0 (argv = {NULL})."""
    code = ("import ctypes, os; libc = ctypes.CDLL(None); "
            "argv = (ctypes.c_char_p * 1)(None); "
            "env = (ctypes.c_char_p * 2)(b'PATH=/usr/bin:/bin', None); "
            "libc.execve(%r, argv, env); print('execve failed')" % path.encode())
    return run(sb, ["/usr/bin/python3", "-c", code], user=user)


def test_bad_input(sb):
    for prog, user in ((SU, "bob"), (RUNUSER, None)):
        r = exec_without_argv0(sb, prog, user)
        assert r.returncode == 1 and "called without argv[0]" in r.stderr, (prog, r)
    # closed standard fds: something harmless takes their place (glibc's /dev/null for a
    # setuid program, hs_privs_init's for runuser).  No stdin: no password.
    r = run(sb, ["/bin/sh", "-c", "exec %s alice -c true <&-" % SU], user="bob")
    assert r.returncode == 1 and "Authentication failure" in r.stderr, r
    r = run(sb, ["/bin/sh", "-c", "exec %s alice -c 'id -un >/tmp/ran' >&- 2>&-" % SU],
            user="bob", input=PW["alice"] + "\n")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r
    assert sb.read("/tmp/ran") == "alice\n"
    r = run(sb, ["/bin/sh", "-c", "exec %s alice -c 'echo out; echo err >&2' <&- >&- 2>&-"
                 % RUNUSER])
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r
    # RLIMIT_NOFILE of 3 (the dynamic loader refuses, 127), 4 and 5 (PAM cannot open its
    # files): a clean refusal each time, not a crash, and nothing run
    for n in (3, 4, 5):
        r = run(sb, ["/usr/bin/prlimit", "--nofile=%d:%d" % (n, n), SU, "alice", "-c",
                     "echo ran"], user="bob", input=PW["alice"] + "\n")
        assert r.returncode in (1, 127) and "ran" not in r.stdout, (n, r)
    # a 10,000-byte name
    r = su_as(sb, "bob", ["a" * 10000, "-c", "true"], "x")
    assert r.returncode == 1 and "does not exist" in r.stderr and len(r.stderr) < 200, r
    r = run(sb, [RUNUSER, "-u", "a" * 10000, "true"])
    assert r.returncode == 1 and "does not exist" in r.stderr, r
    # a hostile environment: huge, many, odd names, duplicates
    env = {"X%d" % i: "v" for i in range(3000)}
    env.update({"HUGE": "h" * 100000, "PATH": "/tmp:/usr/bin:/bin"})
    r = su_as(sb, "bob", ["alice", "-c", "echo ok; printenv HUGE | wc -c"], PW["alice"],
              env=env)
    assert r.returncode == 0 and r.stdout.split() == ["ok", "100001"], r
    code = ("import ctypes; libc = ctypes.CDLL(None); "
            "argv = (ctypes.c_char_p * 5)(b'su', b'alice', b'-c', b'env', None); "
            "env = (ctypes.c_char_p * 6)(b'NOEQUALS', b'=empty', b'A B=space', "
            "b'DUP=first', b'DUP=second', None); "
            "libc.execve(b'%s', argv, env)" % SU)
    r = run(sb, ["/usr/bin/python3", "-c", code], user="bob", input=PW["alice"] + "\n")
    assert r.returncode == 0, r
    assert "DUP=first" in r.stdout and "DUP=second" not in r.stdout
    assert "NOEQUALS" not in r.stdout and "A B" not in r.stdout and "=empty" not in r.stdout


def test_sigkill_at_random_moments(sb):
    rnd = random.Random(6)
    for i in range(8):
        cmd, _ = sb._wrap([SU, "alice", "-c", "sleep 0.2"], "bob", "/")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                env=sandbox._clean_env(sb.getpwnam("bob")))
        proc.stdin.write((PW["alice"] + "\n").encode())
        proc.stdin.flush()
        time.sleep(rnd.uniform(0, 0.15))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
    # what may survive su is alice's own short command, never a process of root's
    assert no_process_left(sb) == []
    # and nothing half-written in alice's directory of the tree
    assert sorted(os.listdir(sb.root + "/etc/hardened-shadow/alice")) == \
        ["aging", "shadow", "shell"]
