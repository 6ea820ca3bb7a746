"""newgrp and sg in a throwaway root, as real unprivileged users: a member switches without
a password (supplementary groups kept, the new group added, the switch logged); a
non-member with the right and the wrong group password on a real pty; groups without a
usable password; a member listed only in /etc/gshadow; login shells; the caller's limits
and environment in the new shell; messages side by side with Debian's newgrp; and hostile
callers (argc == 0, closed fds, RLIMIT_NOFILE of 3, a hostile environment, 10,000-byte
names, SIGKILL at random moments) that leave nothing privileged behind.

One sandbox for the module: the tests only read the account files."""

import ctypes  # noqa: F401  (used inside the root through python3 -c)
import os
import random
import re
import signal
import stat
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sandbox"))
import sandbox  # noqa: E402

NEWGRP = "/usr/bin/newgrp"
SG = "/usr/bin/sg"
# Debian's shadow-utils newgrp, copied from the host (ours replaces /usr/bin/newgrp).
DEBIAN_DIR = "/usr/local/lib/hs-test-debian"
DEBIAN_NEWGRP = DEBIAN_DIR + "/newgrp"
DEBIAN_SG = DEBIAN_DIR + "/sg"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR
DEVS_PW = "devs-pw-7"
DEVS_GID = 2001


def _set_gshadow(sb, group, password=None, members=None):
    """Change one /etc/gshadow line in place (owner and mode kept)."""
    st = sb.lstat("/etc/gshadow")
    lines = sb.read("/etc/gshadow").splitlines()
    for i, line in enumerate(lines):
        f = line.split(":")
        if f[0] == group:
            if password is not None:
                f[1] = password
            if members is not None:
                f[3] = ",".join(members)
            lines[i] = ":".join(f)
    sb.write("/etc/gshadow", "\n".join(lines) + "\n", mode=st.st_mode & 0o7777,
             uid=st.st_uid, gid=st.st_gid)


@pytest.fixture(scope="module")
def gsb(base):
    """alice (member of devs), bob (nobody's member), carol (member of gsonly through
    /etc/gshadow only); devs has a password, nopw is locked, emptypw has an empty one."""
    with sandbox.Sandbox(base, size="256m") as sb:
        for name in ("alice", "bob", "carol"):
            sb.add_classic_user(name)
        sb.run([CLASSIC + "/groupadd", "-g", str(DEVS_GID), "-p",
                sandbox._crypt(DEVS_PW), "devs"])
        sb.run([CLASSIC + "/groupadd", "-g", "2002", "nopw"])
        sb.run([CLASSIC + "/groupadd", "-g", "2003", "emptypw"])
        sb.run([CLASSIC + "/groupadd", "-g", "2004", "gsonly"])
        sb.run([CLASSIC + "/usermod", "-aG", "devs", "alice"])
        _set_gshadow(sb, "emptypw", password="")
        _set_gshadow(sb, "gsonly", members=["carol"])
        sb.run(["mkdir", "-p", DEBIAN_DIR])
        with open("/usr/bin/newgrp", "rb") as f:
            sb.write(DEBIAN_NEWGRP, f.read(), mode=0o4755)
        sb.run(["ln", "-s", "newgrp", DEBIAN_SG])
        yield sb


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def gid_of(sb, name):
    return sb.getgrnam(name)[1]


def ids(sb, user):
    pw = sb.getpwnam(user)
    return pw.uid, pw.gid


# ---------------------------------------------------------------- installation

def test_installed_setuid_root_and_sg_is_its_own_program(gsb):
    for path in (NEWGRP, SG):
        st = gsb.lstat(path)
        assert stat.S_ISREG(st.st_mode), path
        assert st.st_uid == 0 and st.st_mode & 0o7777 == 0o4755, path


# ---------------------------------------------------------------- members

def test_member_sg_switches_keeps_groups_and_logs(gsb):
    gsb.syslog(clear=True)
    before = run(gsb, ["id", "-G"], user="alice").stdout.split()
    res = run(gsb, [SG, "devs", "-c", "id -g; id -G; id -u; cat /proc/self/status"],
              user="alice")
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    uid, _ = ids(gsb, "alice")
    assert out[0] == str(DEVS_GID)
    assert sorted(out[1].split()) == sorted(set(before) | {str(DEVS_GID)})
    assert out[2] == str(uid)
    status = "\n".join(out[3:])
    # every id is the caller's / the group's: nothing of root is left
    assert re.search(r"^Uid:\s+%d\s+%d\s+%d\s+%d$" % ((uid,) * 4), status, re.M), status
    assert re.search(r"^Gid:\s+%d\s+%d\s+%d\s+%d$" % ((DEVS_GID,) * 4), status, re.M), status
    assert re.search(r"^CapEff:\s+0+$", status, re.M)
    log = "\n".join(gsb.syslog())
    assert re.search(r"sg\[\d+\]: user 'alice' \(login '[^']*' on [^)]*\) switched to "
                     r"group 'devs'", log), log


def test_member_newgrp_on_a_pty_and_exit_status(gsb):
    status, out = gsb.pty_run([NEWGRP, "devs"], [
        (r"\$ ", "id -gn; exit 7\n"),
    ], user="alice", env={"PS1": "$ "})
    assert status == 7
    assert re.search(r"[\r\n]devs\n", out), out    # (bash's bracketed-paste codes may precede)
    assert "Password" not in out


def test_newgrp_without_group_is_the_login_group(gsb):
    res = run(gsb, [NEWGRP], user="alice", input="id -gn; echo \"$0\"\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["alice", "bash"]


def test_login_shell_dash(gsb):
    res = run(gsb, [NEWGRP, "-", "devs"], user="alice", cwd="/tmp",
              input='id -gn; pwd; echo "$0"; echo "${FOO-unset}"\n', env={"FOO": "x"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[:4] == ["devs", "/home/alice", "-bash", "unset"]


def test_member_through_gshadow_only(gsb):
    res = run(gsb, [SG, "gsonly", "-c", "id -gn"], user="carol")
    assert (res.returncode, res.stdout) == (0, "gsonly\n"), res.stderr


def test_hard_link_to_gshadow_elsewhere(gsb):
    """Where fs.protected_hardlinks is 0 (the kernel's own default), any user may hard-link
    /etc/gshadow into a directory of theirs on the same file system: a second name that
    changes nothing in /etc must not refuse sg to every member listed there.  Root makes
    the link a user could make there (the host's sysctl is not ours to change)."""
    gsb.run(["/bin/ln", "/etc/gshadow", "/var/tmp/alice-gshadow"])
    try:
        res = run(gsb, [SG, "gsonly", "-c", "id -gn"], user="carol")
        assert (res.returncode, res.stdout, res.stderr) == (0, "gsonly\n", "")
    finally:
        gsb.run(["/bin/rm", "-f", "/var/tmp/alice-gshadow"])


def test_primary_group_needs_no_password(gsb):
    res = run(gsb, [SG, "bob", "-c", "id -gn"], user="bob")
    assert (res.returncode, res.stdout) == (0, "bob\n"), res.stderr


def test_root_needs_no_password(gsb):
    res = run(gsb, [SG, "nopw", "-c", "id -gn; id -un"])
    assert (res.returncode, res.stdout) == (0, "nopw\nroot\n"), res.stderr


def test_sg_command_without_dash_c(gsb):
    res = run(gsb, [SG, "devs", "id -gn"], user="alice")
    assert (res.returncode, res.stdout) == (0, "devs\n")


# ---------------------------------------------------------------- non-members

def test_non_member_right_password_on_a_pty(gsb):
    gsb.syslog(clear=True)
    status, out = gsb.pty_run([SG, "devs", "-c", "id -gn; id -un"], [
        (r"Password: ", DEVS_PW + "\n"),
    ], user="bob")
    assert status == 0, out
    assert out.endswith("devs\nbob\n"), out
    assert DEVS_PW not in out     # echo was off
    assert "switched to group 'devs'" in "\n".join(gsb.syslog())


def test_non_member_wrong_password_on_a_pty(gsb):
    gsb.syslog(clear=True)
    t0 = time.monotonic()
    status, out = gsb.pty_run([SG, "devs", "-c", "id -gn"], [
        (r"Password: ", "not-the-password\n"),
    ], user="bob")
    assert status == 1
    assert "Invalid password." in out and "devs" not in out.replace("'devs'", "")
    assert time.monotonic() - t0 >= 1.0      # shadow-utils' delay
    log = "\n".join(gsb.syslog())
    assert "Invalid password for group 'devs' from 'bob'" in log
    assert "switched" not in log


@pytest.mark.parametrize("group,typed", [("nopw", ""), ("emptypw", ""), ("emptypw", "x")])
def test_group_without_password_refuses_non_members(gsb, group, typed):
    # the prompt still comes, so it does not tell that the group has no password
    status, out = gsb.pty_run([NEWGRP, group], [
        (r"Password: ", typed + "\n"),
    ], user="bob")
    assert status == 1 and "Invalid password." in out, out


def test_non_member_without_a_terminal_is_refused(gsb):
    res = run(gsb, [SG, "devs", "-c", "id -gn"], user="bob")
    assert res.returncode == 1
    assert "devs" not in res.stdout


def test_password_on_stdin_without_a_terminal(gsb):
    # like getpass(3): with no terminal the password comes from standard input
    res = run(gsb, [SG, "devs", "-c", "id -gn"], user="bob", input=DEVS_PW + "\n")
    assert (res.returncode, res.stdout) == (0, "devs\n"), res.stderr


def test_interrupted_prompt_restores_the_terminal(gsb):
    # the shell survives the ^C (trap), so stty shows the terminal sg left behind
    status, out = gsb.pty_run(["/bin/sh", "-c", "trap : INT; %s devs; echo rc=$?; stty -a" % SG],
                              [(r"Password: ", "\x03")], user="bob")
    assert "rc=1" in out
    tokens = out.split()
    assert "echo" in tokens and "-echo" not in tokens, out


# an alarm the caller set before the exec stays armed in sg; the other signals come from
# another process of the caller's (sg's real uid is the caller's)
ALARM_THEN_EXEC = "import os, signal, sys; signal.alarm(1); os.execv(sys.argv[1], sys.argv[1:])"


@pytest.mark.parametrize("sig", ["ALRM", "USR1", "PIPE", "XCPU", "RTMIN"])
def test_any_ending_signal_at_the_prompt_restores_the_terminal(gsb, sig):
    """The prompt used to catch only ^C, ^\\, ^Z, SIGTERM and SIGHUP: any other signal
    whose default action ends a process (su's and login's prompt catch them all) ended sg
    with the caller's terminal still not echoing what they type next."""
    if sig == "ALRM":
        call = "/usr/bin/python3 -c '%s' %s devs" % (ALARM_THEN_EXEC, SG)
    else:
        call = "(sleep 1; pkill -%s -x sg) & %s devs" % (sig, SG)
    status, out = gsb.pty_run(["/bin/sh", "-c", "%s; echo rc=$?; stty -a" % call], [],
                              user="bob")
    assert "Password: " in out and "rc=1" in out, out
    tokens = out.split()
    assert "echo" in tokens and "-echo" not in tokens, out


# ---------------------------------------------------------------- usage and messages

def _both(gsb, prog, args, user="alice", **kw):
    """(ours, Debian's) results for the same call."""
    ours = run(gsb, [{"newgrp": NEWGRP, "sg": SG}[prog]] + args, user=user, **kw)
    theirs = run(gsb, [{"newgrp": DEBIAN_NEWGRP, "sg": DEBIAN_SG}[prog]] + args, user=user,
                 **kw)
    return ours, theirs


@pytest.mark.parametrize("prog,args", [
    ("newgrp", ["-x"]),
    ("newgrp", ["--bogus"]),
    ("sg", []),
    ("sg", ["-x"]),
    ("newgrp", ["nosuchgroup"]),
    ("sg", ["nosuchgroup", "-c", "true"]),
])
def test_errors_like_debian(gsb, prog, args):
    ours, theirs = _both(gsb, prog, args)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr == theirs.stderr
    assert ours.stdout == theirs.stdout == ""


def test_wrong_password_like_debian(gsb):
    outs = []
    for sg in (SG, DEBIAN_SG):
        status, out = gsb.pty_run([sg, "devs", "-c", "true"], [(r"Password: ", "wrong\n")],
                                  user="bob")
        outs.append((status, out))
    assert outs[0] == outs[1]


def test_help_and_version(gsb):
    res = run(gsb, [NEWGRP, "--help"], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: newgrp [-] [group]\n")
    res = run(gsb, [SG, "--help"], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: sg group [[-c] command]\n")
    res = run(gsb, [SG, "--version"], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("sg (hardened-shadow) ")


@pytest.mark.parametrize("name", ["a" * 10000, "-devs", "de vs", "../devs", "d\x1b[2Jevs"])
def test_invalid_group_names(gsb, name):
    res = run(gsb, [SG, "--", name, "-c", "id -gn"] if name.startswith("-") else
              [SG, name, "-c", "id -gn"], user="alice")
    assert res.returncode == 1
    assert res.stdout == ""
    assert len(res.stderr) < 200 and "\x1b" not in res.stderr


def test_shell_not_found_and_not_executable(gsb):
    res = run(gsb, [NEWGRP, "devs"], user="alice", env={"SHELL": "/nonexistent/sh"})
    assert res.returncode == 127
    assert "Cannot execute /nonexistent/sh" in res.stderr
    res = run(gsb, [NEWGRP, "devs"], user="alice", env={"SHELL": "/etc/passwd"})
    assert res.returncode == 126


# ---------------------------------------------------------------- the new process

def test_callers_limits_and_umask_reach_the_shell(gsb):
    # the privileged part raises soft limits (and zeroes the core limit) for itself; the
    # shell gets the caller's own back
    show = "grep -E '^Max (file size|open files|core file size)' /proc/self/limits; umask"
    res = run(gsb, ["/bin/bash", "-c", "ulimit -S -n 100; ulimit -S -f 2048; ulimit -S -c 64; "
                    "umask 027; %s; exec %s devs -c \"%s\"" % (show, SG, show)], user="alice")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 8 and lines[:4] == lines[4:], lines
    assert lines[3] == "0027" and " 100 " in lines[2] and " 65536 " in lines[1], lines


def test_hostile_environment(gsb):
    env = {"LD_PRELOAD": "/nonexistent/evil.so", "LD_LIBRARY_PATH": "/tmp",
           "BASH_ENV": "/tmp/evil", "IFS": "x", "GCONV_PATH": "/tmp",
           "LANG": "../../../tmp/evil", "TZ": "/etc/shadow", "HUGE": "x" * 100000,
           "TERMINFO": "/tmp", "_RLD_ROOT": "/tmp", "PYTHONPATH": "/tmp",
           "NODE_OPTIONS": "--require=/tmp/x", "BASH_FUNC_x%%": "() { :; }",
           "FOO": "kept"}
    res = run(gsb, [SG, "devs", "-c", "env"], user="alice", env=env)
    assert res.returncode == 0, res.stderr
    names = {l.split("=", 1)[0] for l in res.stdout.splitlines()}
    # the list su and runuser filter with (lib/base/envname.c)
    assert not names & {"LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "IFS", "GCONV_PATH",
                        "TERMINFO", "_RLD_ROOT", "PYTHONPATH", "NODE_OPTIONS",
                        "BASH_FUNC_x%%"}, res.stdout
    assert "FOO=kept" in res.stdout.splitlines()
    assert "HOME=/home/alice" in res.stdout.splitlines()


# ---------------------------------------------------------------- hostile callers

def _exec_argc0(sb, path, user):
    """Run path with an empty argument list (the kernel then passes one empty argument)."""
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "argv = (ctypes.c_char_p * 1)(None); "
            "env = (ctypes.c_char_p * 2)(b'PATH=/usr/bin:/bin', None); "
            "libc.execve(%r.encode(), argv, env); os._exit(99)" % path)
    return sb.run(["/usr/bin/python3", "-c", code], user=user, check=False,
                  input="id -gn\n")


@pytest.mark.parametrize("path", [NEWGRP, SG])
def test_argc_zero(gsb, path):
    res = _exec_argc0(gsb, path, "alice")
    assert res.returncode == 1
    assert res.stdout == ""
    assert "argv[0]" in res.stderr


def test_argv0_chooses_nothing(gsb):
    # argv[0] is the caller's to choose: each binary keeps its own mode whatever it says
    res = run(gsb, ["/bin/bash", "-c", "exec -a sg %s --help" % NEWGRP], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: newgrp "), res
    res = run(gsb, ["/bin/bash", "-c", "exec -a newgrp %s --help" % SG], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: sg "), res
    res = run(gsb, ["/bin/bash", "-c", "exec -a newgrp %s devs -c 'id -gn'" % SG], user="alice")
    assert res.returncode == 0 and res.stdout == "devs\n", res


@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
def test_closed_standard_fds(gsb, closed):
    # with fd N closed the program must not write into a file that lands on it
    res = run(gsb, ["/bin/sh", "-c", "%s devs -c 'id -gn >/tmp/out.$$; echo $$ >/tmp/pid' %s;"
                    " echo rc=$?; cat /tmp/out.$(cat /tmp/pid)" % (SG, closed)], user="alice")
    assert "rc=0" in res.stdout and "devs" in res.stdout, res
    res = run(gsb, ["/bin/sh", "-c", "%s nosuchgroup %s; echo rc=$?" % (SG, closed)],
              user="alice")
    assert "rc=1" in res.stdout


@pytest.mark.parametrize("limit", [3, 4, 5])
def test_rlimit_nofile_tiny(gsb, limit):
    # 3: not even the dynamic loader can open libcrypt (exit 127, nothing of ours ran);
    # 4 and up: we close what we open, so it works; either way never half done
    res = run(gsb, ["prlimit", "--nofile=%d:%d" % (limit, limit), SG, "devs", "-c",
                    "id -gn; ulimit -n"], user="alice")
    if limit == 3:
        assert res.returncode in (1, 127) and res.stdout == "", res
    else:
        assert (res.returncode, res.stdout) == (0, "devs\n%d\n" % limit), res


def test_sigkill_at_random_moments_leaves_nothing_privileged(gsb):
    rnd = random.Random(6)
    for delay in [0, 0.0005, 0.001, 0.002, 0.004] + [rnd.uniform(0, 0.02) for _ in range(5)]:
        cmd, _ = gsb._wrap([SG, "devs", "-c", "exec sleep 30"], "alice", "/")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        # nothing of that session survives (no root process waits behind the shell)
        deadline = time.monotonic() + 2
        while _session_members(p.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _session_members(p.pid) == []
    # and the files it reads are untouched
    assert gsb.lstat("/etc/gshadow").st_nlink == 1
    assert not gsb.exists("/etc/gshadow.lock") and not gsb.exists("/etc/group.lock")


def _session_members(sid):
    """pids of live (not zombie) processes in session sid."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[0] = state, [3] = session
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(pid))
    return found
