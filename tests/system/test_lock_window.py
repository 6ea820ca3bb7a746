"""Nothing a user holds in the writers' window delays root.

A user's own passwd and chsh hold the writers' lock on the user's directory from the
re-read to the rename.  A user who stops one there (their process: they may) used to make
root's passwd -l, chage -E 0 and usermod -L -e wait the whole 15 s lock timeout and fail.
Root's writers now wait HS_TAKE_OVER_MS, then take the directory over: a fresh copy is
exchanged for it and the old one is taken away, so the stopped process, resumed, can
write nothing at the user's path and fails; root's changes stand.

Every syscall kind of the window is a stop point, found from a trace of the same tool."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import grouptools
import sandbox
import test_passwd as tp
from ptyproc import Pty

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

FILES = {"shadow", "shell", "aging"}
ROOT_CHANGES = [["/usr/bin/passwd", "-l", "alice"], ["/usr/bin/chage", "-E", "0", "alice"],
                ["/usr/sbin/usermod", "-L", "-e", "1", "alice"]]
# HS_TAKE_OVER_MS is 1 s; the rest is a root tool's start-up in a loaded sandbox
ROOT_CHANGE_MAX_S = 4.0
TOOLS = {
    "passwd": ([tp.PASSWD, "--stdin"], "alice-old-1\nTulip-window-1\n"),
    "chsh": (["/usr/bin/chsh", "-s", "/bin/sh"], "alice-old-1\n"),
}
PASSWD_FAILED = ["passwd: Authentication token manipulation error",
                 "passwd: password unchanged"]
TEMP = re.compile(r"^\.(shadow|shell|aging)\.[A-Za-z0-9]{12}$")
SYSCALL = re.compile(r"^(\d+)\s+([a-z0-9_]+)\((.*)")


@pytest.fixture
def mod(sb):
    tp.make_users(sb)
    tp.convert(sb)
    tp.use_module(sb)
    return sb


def as_alice(sb, argv):
    pw = sb.getpwnam("alice")
    return ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
            "--init-groups", "--"] + argv


def window(sb, tool):
    """The main process's syscalls from taking the lock on alice's directory to the
    rename that publishes its change, as (name, ordinal of that name) stop points."""
    argv, data = TOOLS[tool]
    sb.run(["strace", "-f", "-qq", "-y", "-o", "/tmp/trace"] + as_alice(sb, argv),
           input=data, check=False)
    lines = [SYSCALL.match(l) for l in sb.read("/tmp/trace").splitlines()]
    lines = [m for m in lines if m]
    main = lines[0].group(1)
    calls = [(m.group(2), m.group(3)) for m in lines if m.group(1) == main]
    seen, points, inside = {}, [], False
    dirlock = "<%s/alice>, LOCK_EX|LOCK_NB) = 0" % tp.TREE
    for name, rest in calls:
        seen[name] = seen.get(name, 0) + 1
        if name == "flock" and dirlock in rest:
            inside = True
        if not inside:
            continue
        if name.startswith("rename"):
            break
        if name not in [p[0] for p in points]:
            points.append((name, seen[name]))
    assert inside and points, "\n".join(n + "(" + r for n, r in calls)
    # undo the traced change
    sb.run(["/usr/sbin/usermod", "-s", "/bin/bash", "--self-service-shell", "alice"],
           check=False)
    sb.run([tp.PASSWD, "--stdin", "alice"], input="alice-old-1\n")
    return points


def descendants(pid):
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except (FileNotFoundError, ProcessLookupError):   # it ended meanwhile
        return out
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids = [int(k) for k in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
        for k in kids:
            out += [k] + descendants(k)
    return out


def children(pid):
    """pid's child processes (none once it has gone)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def guard_of(pid):
    """The guess guard of su, sg or newgrp pid: its child in a session of its own, or
    None."""
    for c in children(pid):
        try:
            with open("/proc/%d/stat" % c) as f:
                if int(f.read().rsplit(")", 1)[1].split()[3]) == c:
                    return c
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
    return None


def state_of(pid):
    """pid's state letter ("T": stopped, "t": stopped by its tracer), or None once it
    has gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except (FileNotFoundError, ProcessLookupError):
        return None     # gone meanwhile (a short-lived helper of strace's)


def tracee_of(strace_pid, tool, timeout=20):
    """The tool's process below our strace (strace's own helper children aside)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(strace_pid):
            if comm(pid) == tool:
                return pid
        time.sleep(0.01)
    raise AssertionError("strace started no %s" % tool)


def wait_stopped_with_lock(sb, proc, pid, timeout=30):
    """Until pid is stopped holding the flock on alice's directory (not only the guess
    lock on her shadow file)."""
    ino = os.stat(os.path.join(sb.root, tp.TREE.lstrip("/"), "alice")).st_ino
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            proc.wait(timeout=30)
            raise AssertionError("it ended first: %r" % ((proc.stdout.read(), proc.stderr.read()),))
        with open("/proc/locks") as f:
            locked = any(l.split()[1:5] == ["FLOCK", "ADVISORY", "WRITE", str(pid)] and
                         l.split()[5].endswith(":%d" % ino) for l in f)
        if state in "tT" and locked:
            return
        time.sleep(0.02)
    raise AssertionError("process %d never stopped holding its lock" % pid)


def tree_entries(sb):
    return sorted(e for e in os.listdir(os.path.join(sb.root, tp.TREE.lstrip("/")))
                  if e.startswith("."))


def stopped_in_window(sb, tool, point):
    argv, data = TOOLS[tool]
    name, nth = point
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                       "inject=%s:signal=SIGSTOP:when=%d" % (name, nth)] + as_alice(sb, argv),
                      None, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    proc.stdin.write(data)
    proc.stdin.close()
    proc.stdin = None
    return proc, tracee_of(proc.pid, tool)


def resume(proc, pid):
    """SIGCONT until it ends: under strace the injected SIGSTOP may still be on its way
    (signal-delivery-stop) when the first SIGCONT comes."""
    for _ in range(120):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        try:
            return proc.communicate(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue
    raise AssertionError("the resumed tool never ended")


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_stopped_writer_does_not_delay_root(mod, tool):
    points = window(mod, tool)
    old_hash = tp.hash_of(mod, "alice")
    old_shell = mod.read(tp.TREE + "/alice/shell")
    for point in points:
        mod.run(["/usr/sbin/usermod", "-U", "-e", "", "alice"], check=False)
        proc, pid = stopped_in_window(mod, tool, point)
        try:
            wait_stopped_with_lock(mod, proc, pid)
            for change in ROOT_CHANGES:
                start = time.monotonic()
                res = mod.run(change, check=False, timeout=30)
                took = time.monotonic() - start
                assert res.returncode == 0, (point, change, res)
                assert took < ROOT_CHANGE_MAX_S, (point, change, took)
        finally:
            out, err = resume(proc, pid)
        # the resumed tool fails in one line and changes nothing of root's
        # chsh's one line names the cause; passwd prints its two lines after a failed
        # PAM update, after the module's cause when the write itself failed
        assert proc.returncode != 0, (point, out, err)
        lines = err.replace("Password: ", "").strip().splitlines()
        if tool == "chsh":
            assert len(lines) == 1 and "taken over by root" in lines[0], (point, err)
        else:
            assert lines[-2:] == PASSWD_FAILED, (point, err)
            assert len(lines) == 2 or lines[:-2] == [
                "cannot write %s/alice/shadow: was taken over by root meanwhile" % tp.TREE]
        sh = tp.shadow_line(mod, "alice")
        assert sh.startswith("!") and sh.split(":")[0] == "!" + old_hash, (point, sh)
        assert tp.aging_of(mod, "alice").split(":")[4] == "1", point
        assert mod.read(tp.TREE + "/alice/shell") == old_shell, point
        st = os.lstat(os.path.join(mod.root, tp.TREE.lstrip("/"), "alice"))
        assert st.st_uid == mod.getpwnam("alice").uid and st.st_mode & 0o7777 == 0o2710
        assert set(os.listdir(os.path.join(mod.root, tp.TREE.lstrip("/"), "alice"))) == FILES
        assert tree_entries(mod) == [], point


def take_over_calls(sb):
    """The syscalls of root's passwd -l that change something during a take-over (from
    the mkdir of the copy on), as (name, ordinal) kill points.  Not flock: its lock
    polls, so its ordinals change from run to run."""
    proc, pid = stopped_in_window(sb, "chsh", ("flock", 2))
    try:
        wait_stopped_with_lock(sb, proc, pid)
        sb.run(["strace", "-f", "-qq", "-y", "-o", "/tmp/trace", "/usr/bin/passwd", "-l",
                "alice"])
    finally:
        resume(proc, pid)
    sb.run(["/usr/sbin/usermod", "-U", "alice"])
    lines = [SYSCALL.match(l) for l in sb.read("/tmp/trace").splitlines()]
    lines = [m for m in lines if m]
    main = lines[0].group(1)
    seen, points, inside = {}, [], False
    for m in lines:
        if m.group(1) != main:
            continue
        name = m.group(2)
        seen[name] = seen.get(name, 0) + 1
        inside = inside or (name == "mkdirat" and ".swap.alice" in m.group(3))
        if inside and name in ("mkdirat", "fchown", "fchmod", "linkat", "renameat",
                               "renameat2", "unlinkat", "fsync"):
            points.append((name, seen[name]))
    assert any(p[0] == "renameat2" for p in points), points
    # the file copies repeat one pattern: their first and last steps are enough
    repeated = ("linkat", "renameat", "fsync")
    return [p for p in points if p[0] not in repeated or p[1] in
            (min(q[1] for q in points if q[0] == p[0]), max(q[1] for q in points if q[0] == p[0]))]


def test_killed_take_over_leaves_a_whole_directory(mod):
    # root's passwd -l killed at each step of a take-over: the path holds alice's old
    # directory or the new one, whole and hers, and the next root writer (which takes
    # over again, or finds the directory free) finishes the job and sweeps the leftover
    points = take_over_calls(mod)
    old_hash = tp.hash_of(mod, "alice")
    udir = os.path.join(mod.root, tp.TREE.lstrip("/"), "alice")
    for point in points:
        proc, pid = stopped_in_window(mod, "chsh", ("flock", 2))
        try:
            wait_stopped_with_lock(mod, proc, pid)
            res = mod.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                           "inject=%s:signal=SIGKILL:when=%d" % point,
                           "/usr/bin/passwd", "-l", "alice"], check=False)
            assert res.returncode != 0, (point, res)
            st = os.lstat(udir)
            assert st.st_uid == mod.getpwnam("alice").uid, point
            # (frozen, not writable by alice, when killed between the freeze and the
            # exchange: the next root writer thaws it)
            assert st.st_mode & 0o7777 in (0o2710, 0o2510), point
            # at most the temporary of the killed write, as any killed writer leaves
            litter = {e for e in os.listdir(udir) if TEMP.match(e)}
            assert set(os.listdir(udir)) - litter == FILES and len(litter) <= 1, point
            assert tp.hash_of(mod, "alice") in (old_hash, "!" + old_hash), point
            assert mod.run(["/usr/bin/chage", "-l", "alice"], check=False).returncode == 0
            start = time.monotonic()
            mod.run(["/usr/sbin/usermod", "-L", "alice"])
            assert time.monotonic() - start < ROOT_CHANGE_MAX_S, point
        finally:
            resume(proc, pid)
        assert tp.hash_of(mod, "alice") == "!" + old_hash, point
        assert tree_entries(mod) == [], point
        assert set(os.listdir(udir)) == FILES, point
        assert os.lstat(udir).st_mode & 0o7777 == 0o2710, point
        mod.run(["/usr/sbin/usermod", "-U", "alice"])


# ------------------------------------------------- setuid chfn and gpasswd hold /etc/.pwd.lock

def install_setuid(sb, build_dir, name):
    """The -Dsetuid_* build's program, as that option installs it (every build makes it)."""
    with open(os.path.join(build_dir, "src", "admin", name + "-setuid-test"), "rb") as f:
        sb.write("/usr/bin/" + name, f.read(), mode=0o4755)


def holds_pwd_lock(sb):
    ino = os.stat(os.path.join(sb.root, "etc/.pwd.lock")).st_ino
    with open("/proc/locks") as f:
        return any(l.split()[5].endswith(":%d" % ino) for l in f
                   if len(l.split()) > 5 and l.split()[1] != "->")


def in_syscall(pid, numbers):
    """Is pid inside one of the system calls numbers (x86-64, as strings)?"""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] in numbers
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def in_rename(pid):
    """Is pid inside rename, renameat or renameat2?"""
    return in_syscall(pid, ("82", "264", "316"))


def held_in_its_lock(sb, tool, argv, data):
    """Start argv (which runs tool) held by strace in its locked section (a delay
    before its first rename), data on its stdin; (the strace process, tool's pid) once
    tool holds /etc/.pwd.lock."""
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                       "inject=rename,renameat,renameat2:delay_enter=3000000:when=1"] + argv,
                      None, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
                            start_new_session=True, text=True)
    proc.stdin.write(data)
    proc.stdin.close()
    proc.stdin = None
    pid = tracee_of(proc.pid, tool)
    deadline = time.monotonic() + 30
    while not (in_rename(pid) and holds_pwd_lock(sb)):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise AssertionError("never held the lock: %r" % (resume(proc, pid),))
        time.sleep(0.02)
    return proc, pid


def user_cannot_stop_while_locked(sb, user, tool, argv, data):
    """Run tool as user, held by strace in its locked section (a delay before its
    rename); the user tries to stop it as they may stop their own processes."""
    proc, pid = held_in_its_lock(sb, tool, as_user(sb, user, argv), data)
    tries = [sb.run(["/bin/kill", "-" + sig, str(sb.ns_pid(pid))], user=user, check=False)
             for sig in ("STOP", "TSTP", "TTOU")]
    out, err = resume(proc, pid)
    return tries, proc.returncode, err


def as_user(sb, user, argv):
    pw = sb.getpwnam(user)
    return ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
            "--init-groups", "--"] + argv


def check_unstoppable(sb, tries, rc, err):
    for t in tries:
        assert t.returncode != 0 and "Operation not permitted" in t.stderr, t
    assert rc == 0, err
    # the lock is free again: useradd (which takes it) goes through at once
    start = time.monotonic()
    sb.run(["/usr/sbin/useradd", "zed"])
    assert time.monotonic() - start < 10


def test_setuid_chfn_cannot_be_stopped_holding_pwd_lock(sb, build_dir):
    sb.add_classic_user("alice", password="alice-pw-1", comment="Alice")
    install_setuid(sb, build_dir, "chfn")
    tries, rc, err = user_cannot_stop_while_locked(
        sb, "alice", "chfn", ["/usr/bin/chfn", "-r", "13"], "alice-pw-1\n")
    check_unstoppable(sb, tries, rc, err)
    assert "Alice,13" in sb.read("/etc/passwd")


def test_setuid_gpasswd_cannot_be_stopped_holding_pwd_lock(sb, build_dir):
    for u in ("alice", "bob"):
        sb.add_classic_user(u, password=u + "-pw-1")
    sb.run(["/usr/sbin/groupadd", "proj"])
    install_setuid(sb, build_dir, "gpasswd")
    sb.run(["/usr/bin/gpasswd", "-A", "alice", "proj"])
    tries, rc, err = user_cannot_stop_while_locked(
        sb, "alice", "gpasswd", ["/usr/bin/gpasswd", "-a", "bob", "proj"], "")
    check_unstoppable(sb, tries, rc, err)
    assert "bob" in [l for l in sb.read("/etc/group").splitlines()
                     if l.startswith("proj:")][0]


def cgroup2_mount():
    """Where the host's cgroup v2 hierarchy is mounted (Debian's unified one, or the
    hybrid layout's /sys/fs/cgroup/unified), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            w = line.split()
            if w[w.index("-") + 1] == "cgroup2":
                return w[4]
    return None


@contextlib.contextmanager
def cgroup_of(sb, user):
    """A cgroup v2 of user's own, as systemd delegates one to a user (a desktop terminal's
    scope, systemd-run --user): its name; the hierarchy is mounted in the root at
    /sys/fs/cgroup, as on Debian.  user may freeze it and kill everything in it."""
    host = cgroup2_mount()
    if host is None:
        pytest.skip("no cgroup v2 hierarchy on this machine")
    inside = os.path.join(sb.root, "sys/fs/cgroup")
    name = "hs-test-freeze-%d" % os.getpid()
    path = os.path.join(host, name)
    try:
        os.makedirs(inside, exist_ok=True)
        sandbox._mount("cgroup2", inside, "cgroup2")
        os.mkdir(path)
    except OSError as e:
        pytest.skip("cannot make a cgroup for %s here: %s" % (user, e))
    try:
        for f in ("", "cgroup.procs", "cgroup.threads", "cgroup.freeze", "cgroup.kill"):
            if os.path.exists(os.path.join(path, f)):
                os.chown(os.path.join(path, f), sb.getpwnam(user).uid, -1)
        yield name
    finally:
        with open(os.path.join(path, "cgroup.freeze"), "w") as f:
            f.write("0")
        deadline = time.monotonic() + 30
        while True:
            try:
                os.rmdir(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


@pytest.fixture
def delegated_cgroup(sb):
    """alice, and a cgroup of hers (cgroup_of)."""
    sb.add_classic_user("alice", password="alice-pw-1")
    with cgroup_of(sb, "alice") as name:
        yield name


@pytest.mark.parametrize("tool", ["gpasswd", "chfn"])
def test_setuid_tool_cannot_be_frozen_holding_pwd_lock(sb, build_dir, delegated_cgroup, tool):
    """The cgroup freezer stops a process without a signal.  alice starts setuid gpasswd
    (or chfn, which confines itself before it locks) in her own cgroup and freezes that
    cgroup while the tool holds /etc/.pwd.lock (strace holds it 3 s in its rename): the
    tool has left her cgroup for the root one, so it goes on, and root's useradd, which
    waits for the lock, goes through at once (frozen, it would wait out its 15 s and
    fail)."""
    name = delegated_cgroup
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.run(["/usr/sbin/groupadd", "proj"])
    install_setuid(sb, build_dir, tool)
    sb.run(["/usr/bin/gpasswd", "-A", "alice", "proj"])
    argv, data = {"gpasswd": (["/usr/bin/gpasswd", "-a", "bob", "proj"], ""),
                  "chfn": (["/usr/bin/chfn", "-r", "13"], "alice-pw-1\n")}[tool]
    freeze = "/sys/fs/cgroup/%s/cgroup.freeze" % name
    # the traced shell puts itself in alice's cgroup, then becomes her tool
    proc, pid = held_in_its_lock(sb, tool, [
        "/bin/sh", "-c", 'echo 0 > /sys/fs/cgroup/%s/cgroup.procs && exec "$@"' % name,
        "sh"] + as_user(sb, "alice", argv), data)
    try:
        sb.run(["/bin/sh", "-c", "echo 1 > " + freeze], user="alice")
        start = time.monotonic()
        res = sb.run(["/usr/sbin/useradd", "zed"], check=False, timeout=30)
        took = time.monotonic() - start
    finally:
        sb.run(["/bin/sh", "-c", "echo 0 > " + freeze])
        out, err = resume(proc, pid)
    assert res.returncode == 0 and took < 10, (res.stderr, took)
    assert proc.returncode == 0, err
    if tool == "gpasswd":
        assert "bob" in [l for l in sb.read("/etc/group").splitlines()
                         if l.startswith("proj:")][0]
    else:
        assert ",13" in [l for l in sb.read("/etc/passwd").splitlines()
                         if l.startswith("alice:")][0]


def batch_lines(fmt):
    h = sandbox._crypt("Tulip-batch-1", "$6$")
    return "".join(fmt % (name, h) for name in ("alice", "bob"))


@pytest.mark.skipif(not shutil.which("gdb"), reason="gdb is not installed")
@pytest.mark.parametrize("tool", ["chpasswd", "newusers"])
def test_batch_holds_the_tree_lock_one_user_at_a_time(mod, tool):
    """chpasswd and newusers take each user's lock with the tree's shared one.  Both go once
    that user is written: a root tool that must take a directory over (it takes the tree
    exclusively) waits for one user, not for the rest of the batch.  Stopped as it locks
    its second user, the batch holds no lock on the tree (it used to hold it to its end)."""
    argv, fmt = {"chpasswd": (["/usr/sbin/chpasswd", "-e"], "%s:%s\n"),
                 "newusers": (["/usr/sbin/newusers", "-c", "NONE"], "%s:%s:::::\n")}[tool]
    tree = mod.lstat("/etc/hardened-shadow").st_ino
    cmd = ["gdb", "-nx", "-batch", "-ex", "set startup-with-shell off",
           "-ex", "set breakpoint pending on", "-ex", "break hs_userdir_lock_at",
           "-ex", "ignore 1 1", "-ex", "run", "-ex", "info proc",
           "-ex", "shell cat /proc/locks", "-ex", "delete", "-ex", "continue", "--args"] + argv
    res = mod.run(cmd, input=batch_lines(fmt), check=False, timeout=120)
    m = re.search(r"^process (\d+)$", res.stdout, re.M)
    assert m and "exited normally" in res.stdout, res.stdout + res.stderr
    lock = re.compile(r"\d+: FLOCK +ADVISORY +\w+ +%s +[0-9a-f]+:[0-9a-f]+:%d "
                      % (m.group(1), tree))
    held = [l for l in res.stdout.splitlines() if lock.match(l)]
    assert not held, res.stdout
    for name in ("alice", "bob"):
        hash_ = mod.read("/etc/hardened-shadow/%s/shadow" % name).split(":")[0]
        assert grouptools.verify("Tulip-batch-1", hash_), name


def test_setuid_gpasswd_held_in_its_lock_ignores_ctrl_z_and_stop(sb, build_dir):
    # alice runs setuid gpasswd as a job of her shell on her terminal and, while it
    # holds /etc/.pwd.lock, types ^Z there and sends SIGSTOP: it neither stops nor holds
    # the lock beyond its write, so root's useradd, which waits for that lock, goes
    # through at once.  strace holds gpasswd 3 s in the first link(2) of the lock
    # protocol, right after it took /etc/.pwd.lock and before it blocks signals for
    # its commit (a ^Z there would wait, pending, for the end of the commit).  strace
    # stays in a session of its own, so the terminal's ^Z reaches only alice's job; her
    # shell is its parent in her session, so the job is not an orphaned process group
    # (whose terminal stop signals the kernel discards).
    for u in ("alice", "bob"):
        sb.add_classic_user(u, password=u + "-pw-1")
    sb.run(["/usr/sbin/groupadd", "proj"])
    install_setuid(sb, build_dir, "gpasswd")
    sb.run(["/usr/bin/gpasswd", "-A", "alice", "proj"])
    argv = (["strace", "-f", "-qq", "-o", "/dev/null", "-e",
             "inject=link,linkat:delay_enter=3000000:when=1",
             "/usr/bin/setsid", "-c"] +
            as_user(sb, "alice", ["/bin/bash", "-c",
                                  "set -m; /usr/bin/gpasswd -a bob proj; echo rc=$?; read x"]))
    with Pty(sb, argv) as p:
        pid = tracee_of(p.pid, "gpasswd")
        deadline = time.monotonic() + 30
        while not (in_syscall(pid, ("86", "265")) and holds_pwd_lock(sb)):
            assert time.monotonic() < deadline and p.proc.poll() is None, p.output
            time.sleep(0.02)
        p.send(b"\x1a")
        stop = sb.run(["/bin/kill", "-STOP", str(sb.ns_pid(pid))], user="alice", check=False)
        assert stop.returncode != 0 and "Operation not permitted" in stop.stderr, stop
        start = time.monotonic()
        sb.run(["/usr/sbin/useradd", "zed"], timeout=30)
        assert time.monotonic() - start < 10
        # (her shell stays: its end would hang up a stopped job, which frees the lock)
        p.expect(r"rc=0\n", timeout=30)
        p.send("\n")
        assert p.wait(timeout=30) == 0, p.output
    assert "bob" in [l for l in sb.read("/etc/group").splitlines()
                     if l.startswith("proj:")][0]
    assert sb.getpwnam("zed")


def test_killed_take_over_leaves_no_false_success(mod):
    # root's passwd -l killed at each step of a take-over while alice's chsh is stopped
    # late in its window (past its lock's re-check, its new file about to be linked or
    # renamed in): resumed, chsh either fails or its change is in alice's directory
    # once the next root writer has run; it never reports a change that went into a
    # directory root detached.  The take-over makes the old directory unwritable by
    # its owner before it exchanges it, and that root writer undoes this when the
    # take-over stopped before the exchange.
    late = window(mod, "chsh")[-1]
    points = take_over_calls(mod)
    old_shell = mod.read(tp.TREE + "/alice/shell")
    udir = os.path.join(mod.root, tp.TREE.lstrip("/"), "alice")
    for point in points:
        proc, pid = stopped_in_window(mod, "chsh", late)
        try:
            wait_stopped_with_lock(mod, proc, pid)
            res = mod.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                           "inject=%s:signal=SIGKILL:when=%d" % point,
                           "/usr/bin/passwd", "-l", "alice"], check=False)
            assert res.returncode != 0, (point, res)
        finally:
            out, err = resume(proc, pid)
        mod.run(["/usr/sbin/usermod", "-L", "alice"])
        shell = mod.read(tp.TREE + "/alice/shell")
        assert proc.returncode != 0 or shell != old_shell, (point, err)
        if proc.returncode != 0:
            assert "taken over by root" in err, (point, err)
        st = os.lstat(udir)
        assert st.st_uid == mod.getpwnam("alice").uid and st.st_mode & 0o7777 == 0o2710, point
        assert set(os.listdir(udir)) == FILES and tree_entries(mod) == [], point
        mod.run(["/usr/sbin/usermod", "-U", "-s", "/bin/bash", "--self-service-shell",
                 "alice"])
