"""Throwaway roots for system tests (DESIGN.md section 10, tests/sandbox/README.md).

Every root is an overlay whose lowest layer is the host's "/" and whose writes land in a
tmpfs, so nothing a test does inside it can reach the host's /etc.  All mounts are made in
the caller's mount namespace, which must be private (require_private_mount_ns): when the
process that made them exits, the kernel drops them with the namespace.

Layout on the host (one directory per process, removed at exit):

    $HS_SANDBOX_TMP or /tmp / hs-sbx-XXXXXX /
        base-N/         tmpfs: upper/ = the installed build (lower layer of every sandbox)
        sb-N/           tmpfs: upper/ work/ root/ (root = the overlay, chroot target)

Inside each root: a tmpfs /dev with the basic device nodes, a private devpts instance
(so ttyname() works for programs on our pseudo-terminals and nothing sees the host's
terminals), a fresh /proc, fresh tmpfs /tmp and /run, and a /dev/log socket that collects
syslog messages (Sandbox.syslog()).
"""

import atexit
import ctypes
import errno
import fcntl
import json
import os
import re
import select
import signal
import stat
import struct
import subprocess
import termios
import threading
import time
from collections import namedtuple

__all__ = ["Base", "Sandbox", "require_private_mount_ns", "CommandFailed",
           "CommandTimeout", "User", "SandboxError"]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                        ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
CLONE_NEWPID = 0x20000000

SYS_openat2 = 437          # same number on every architecture (generic table)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_IN_ROOT = 0x10

TIOCSPTLCK = 0x40045431
TIOCGPTPEER = 0x5441

# Debian's shadow-utils binaries, copied into every root before our own build is installed
# over /usr/sbin, so add_classic_user() keeps using the classic tools whatever we install.
CLASSIC_TOOLS_DIR = "/usr/libexec/hs-test/shadow-utils"
CLASSIC_TOOLS = ["useradd", "usermod", "userdel", "groupadd", "groupmod", "groupdel",
                 "chpasswd", "chage", "gpasswd", "newusers", "pwck", "grpck", "pwconv",
                 "pwunconv", "grpconv", "grpunconv", "groupmems", "chgpasswd"]

ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
USER_PATH = "/usr/local/bin:/usr/bin:/bin"

User = namedtuple("User", "name uid gid gecos home shell")


class SandboxError(Exception):
    pass


class CommandFailed(subprocess.CalledProcessError, AssertionError):
    """A command run with check=True exited non-zero; str() shows its output."""

    def __str__(self):
        return "command %r exited with %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            self.cmd, self.returncode, self.stdout, self.stderr)


class CommandTimeout(subprocess.TimeoutExpired, AssertionError):
    """A command (or a pty_run step) ran out of time; it was killed.  str() shows its output."""

    def __init__(self, cmd, timeout, output=None, stderr=None, waiting_for=None):
        super().__init__(cmd, timeout, output, stderr)
        self.waiting_for = waiting_for

    def __str__(self):
        msg = "command %r timed out after %s s and was killed" % (self.cmd, self.timeout)
        if self.waiting_for is not None:
            msg += " (waiting for %r)" % self.waiting_for
        return msg + "\n--- output ---\n%s\n--- stderr ---\n%s" % (self.output, self.stderr)


# ---------------------------------------------------------------- namespace and mounts

def require_private_mount_ns():
    """Refuse to go on unless we are in a mount namespace of our own with no shared mounts.

    A mount made in the host's namespace (or one propagating to it) would put the
    sandbox over the host, so this is checked before any mount."""
    if os.geteuid() != 0:
        raise SandboxError("the sandbox needs root")
    mine = os.readlink("/proc/self/ns/mnt")
    refuse = ("refusing to run in the host's mount namespace (%s); use "
              "tests/sandbox/run-system-tests or `unshare --mount "
              "--propagation private --fork`" % mine)
    try:
        if os.readlink("/proc/1/ns/mnt") == mine:
            raise SandboxError(refuse)
    except PermissionError:
        pass        # some container managers hide pid 1's namespaces even from root
    # Our own namespace must have been made below the caller: some ancestor (the shell
    # that ran unshare) must be in another one.  If every ancestor we can see shares
    # ours, we are (as far as we can tell) in the host's namespace.
    pid = os.getppid()
    while True:
        try:
            if os.readlink("/proc/%d/ns/mnt" % pid) != mine:
                break
            with open("/proc/%d/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (PermissionError, FileNotFoundError, ProcessLookupError):
            raise SandboxError(refuse) from None
        if pid <= 1 or ppid == 0:
            raise SandboxError(refuse)
        pid = ppid
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if any(opt.startswith("shared:") for opt in fields[6:sep]):
                raise SandboxError("mount %s propagates to another namespace (%s); use "
                                   "`unshare --propagation private`" %
                                   (_unescape(fields[4]), " ".join(fields[6:sep])))


def _mount(source, target, fstype=None, flags=0, data=None):
    enc = lambda s: s.encode() if isinstance(s, str) else s
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s on %s (%s, %s): %s" %
                      (source, target, fstype, data, os.strerror(e)))


def _unescape(path):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


def _mounts_under(top):
    """Mount points at or below top, in the order they were mounted."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = _unescape(line.split()[4])
            if mp == top or mp.startswith(top + "/"):
                found.append(mp)
    return found


def _unmount_all(top):
    """Unmount everything at or below top, newest first; lazily if something is busy."""
    for _ in range(3):
        mounts = _mounts_under(top)
        if not mounts:
            return
        for mp in reversed(mounts):
            if _libc.umount2(mp.encode(), 0) != 0:
                e = ctypes.get_errno()
                if e in (errno.EINVAL, errno.ENOENT):
                    continue
                _libc.umount2(mp.encode(), MNT_DETACH)
    left = _mounts_under(top)
    if left:
        raise SandboxError("cannot unmount %s" % ", ".join(left))


def _kill_processes_in(root):
    """SIGKILL every process whose root directory is root (daemons a test left behind),
    so the mounts are not kept busy; waits up to 2 s for them to go."""
    deadline = time.monotonic() + 2
    while True:
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                r = os.readlink("/proc/%s/root" % pid)
            except OSError:
                continue
            if r == root or r.startswith(root + "/"):
                pids.append(int(pid))
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


_session_top = None
_layer_count = 0
_live = []      # Base and Sandbox objects not closed yet, closed at exit


def _top():
    """The per-process directory holding every mount this module makes."""
    global _session_top
    if _session_top is None:
        import tempfile
        parent = os.environ.get("HS_SANDBOX_TMP") or "/tmp"
        _session_top = tempfile.mkdtemp(prefix="hs-sbx-", dir=parent)
        atexit.register(_cleanup_at_exit)
        # SIGTERM would skip atexit; turn it into a normal exit.
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(SystemExit(143)))
    return _session_top


def _cleanup_at_exit():
    for obj in reversed(list(_live)):
        try:
            obj.close()
        except Exception as e:      # keep going: the rest must still be unmounted
            print("sandbox: cleanup of %r failed: %s" % (obj, e))
    if _session_top is None:
        return
    try:
        _unmount_all(_session_top)
        # Never rmtree: with a mount left below, that would delete host files.
        for name in os.listdir(_session_top):
            os.rmdir(os.path.join(_session_top, name))
        os.rmdir(_session_top)
    except OSError as e:
        print("sandbox: cannot remove %s: %s" % (_session_top, e))


def _new_layer_dir(name, size):
    """A fresh tmpfs at TOP/name with upper/ and work/ for an overlay and root/ for it."""
    global _layer_count
    _layer_count += 1
    d = os.path.join(_top(), "%s-%d" % (name, _layer_count))
    os.mkdir(d, 0o700)
    _mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "size=%s,mode=0755" % size)
    for sub in ("upper", "work", "root"):
        os.mkdir(os.path.join(d, sub), 0o755)
    return d


def _mount_overlay(lowers, layer_dir):
    root = os.path.join(layer_dir, "root")
    _mount("overlay", root, "overlay", 0, "lowerdir=%s,upperdir=%s,workdir=%s" % (
        ":".join(lowers), os.path.join(layer_dir, "upper"), os.path.join(layer_dir, "work")))
    return root


def _meson_dirs(build_dir):
    with open(os.path.join(build_dir, "meson-info", "meson-info.json")) as f:
        info = json.load(f)
    return info["directories"]["source"], info["directories"]["build"]


def _setup_root(root, extra_visible=(), read_only=True, proc=True):
    """The kernel file systems and scratch dirs of a root, all private to it."""
    dev = os.path.join(root, "dev")
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID, "size=1m,mode=0755")
    for name, major, minor in (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7),
                               ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0)):
        p = os.path.join(dev, name)
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.chmod(p, 0o666)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"),
                         ("ptmx", "pts/ptmx")):
        os.symlink(target, os.path.join(dev, name))
    os.mkdir(os.path.join(dev, "pts"), 0o755)
    os.mkdir(os.path.join(dev, "shm"), 0o1777)
    os.chmod(os.path.join(dev, "shm"), 0o1777)
    # A devpts of its own: the sandbox sees only its own terminals, and pty_run's
    # terminal appears at the /dev/pts/N that ttyname() reports.
    _mount("devpts", os.path.join(dev, "pts"), "devpts", MS_NOSUID | MS_NOEXEC,
           "newinstance,ptmxmode=0666,mode=0620,gid=5")
    _mount("tmpfs", os.path.join(dev, "shm"), "tmpfs", MS_NOSUID | MS_NODEV,
           "size=64m,mode=1777")
    if proc:
        _mount("proc", os.path.join(root, "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount("tmpfs", os.path.join(root, "tmp"), "tmpfs", MS_NOSUID | MS_NODEV,
           "size=256m,mode=1777")
    _mount("tmpfs", os.path.join(root, "run"), "tmpfs", MS_NOSUID | MS_NODEV,
           "size=64m,mode=0755")
    # What systemd-tmpfiles would make in /run on Debian (no nscd socket, no userdb).
    os.mkdir(os.path.join(root, "run/lock"), 0o1777)
    os.chmod(os.path.join(root, "run/lock"), 0o1777)
    utmp = os.path.join(root, "run/utmp")
    with open(utmp, "w"):
        pass
    os.chown(utmp, 0, 43)
    os.chmod(utmp, 0o664)
    show_at_host_path(root, extra_visible, read_only)


def unpack_debs(base, name, debs):
    """Debian packages' files, unpacked (tools/unpack-debs: apt-get download and
    dpkg-deb -x, no maintainer script) into BUILD/name/root: (that root, None), or
    (None, why) when they cannot be fetched."""
    out = os.path.join(base.build_dir, name)
    tool = os.path.join(base.source_dir, "tools", "unpack-debs")
    res = subprocess.run([tool, out] + list(debs), capture_output=True, text=True,
                         timeout=300)
    if res.returncode != 0:
        return None, res.stderr.strip()
    return os.path.join(out, "root"), None


def show_at_host_path(root, paths, read_only=True):
    """Makes each of paths visible inside root at its host path.

    It is, through the "/" layer, unless it lives on another file system or
    below a directory a root gets fresh (/tmp, /run, /dev, /proc): a checkout
    under /tmp is bind-mounted over the root's fresh /tmp.  Call it after
    those are mounted.  Also used by the benchmarks' own roots."""
    root_dev = os.stat("/").st_dev
    for path in paths:
        hidden = any(path == d or path.startswith(d + "/") for d in ("/tmp", "/run", "/dev",
                                                                    "/proc"))
        if os.stat(path).st_dev != root_dev or hidden:
            target = os.path.join(root, path.lstrip("/"))
            os.makedirs(target, exist_ok=True)
            _mount(path, target, None, MS_BIND | MS_REC)
            if read_only:
                _mount(path, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY)


def _parse_passwd(text, key):
    for line in text.splitlines():
        f = line.split(":")
        if len(f) != 7:
            continue
        if (isinstance(key, int) and f[2].isdigit() and int(f[2]) == key) or f[0] == key:
            return User(f[0], int(f[2]), int(f[3]), f[4], f[5], f[6])
    return None


def _clean_env(user, extra=None, term=None):
    env = {
        "HOME": user.home if user else "/root",
        "USER": user.name if user else "root",
        "LOGNAME": user.name if user else "root",
        "SHELL": (user.shell if user else "/bin/bash") or "/bin/sh",
        "PATH": USER_PATH if user and user.uid != 0 else ROOT_PATH,
    }
    if term:
        env["TERM"] = term
    if extra:
        env.update(extra)
    return env


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


def _openat2_in_root(root_fd, path, flags, mode=0):
    """open(path) resolved as if root_fd were "/": symlinks a test made cannot lead out."""
    how = _OpenHow(flags | os.O_CLOEXEC, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
    rel = path.lstrip("/") or "."
    fd = _libc.syscall(ctypes.c_long(SYS_openat2), ctypes.c_int(root_fd),
                       ctypes.c_char_p(rel.encode()), ctypes.byref(how),
                       ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)
    return fd


def _crypt(password, prefix="$y$"):
    """A hash from libxcrypt (the same library our tools use)."""
    lib = ctypes.CDLL("libcrypt.so.1", use_errno=True)
    lib.crypt_gensalt.restype = ctypes.c_char_p
    lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p,
                                  ctypes.c_int]
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    setting = lib.crypt_gensalt(prefix.encode(), 0, None, 0)
    if not setting:
        raise SandboxError("crypt_gensalt(%s) failed" % prefix)
    h = lib.crypt(password.encode(), setting)
    if not h or h.startswith(b"*"):
        raise SandboxError("crypt failed for prefix %s" % prefix)
    return h.decode()


# ---------------------------------------------------------------- command running

# pid 1 of a sandbox's pid namespace: mounts that namespace's /proc on the root's /proc,
# says so, then sleeps; SIGCHLD ignored (sleep keeps that through exec), so the orphans
# it inherits are reaped at once (a zombie still shows its uid in /proc and would look
# like a running process).  A shell and sleep, not python: every test starts one, and
# python's start-up was most of a sandbox's.
_PIDNS_INIT = ('/bin/mount -t proc -o nosuid,nodev,noexec proc "$1" || exit 1; '
               'echo ready; exec /usr/bin/env --ignore-signal=CHLD /bin/sleep infinity')

_host_pidns = None      # an fd for this process's own pid namespace
# pid_for_children is a thread's own: _forking.pidns is the _PidNamespace this thread
# forks into, if any (tests run tools from threads too).
_forking = threading.local()


def _current_pidns():
    return getattr(_forking, "pidns", None)


def _setns_pid(fd):
    if _libc.setns(fd, CLONE_NEWPID) != 0:
        e = ctypes.get_errno()
        raise SandboxError("setns(CLONE_NEWPID): %s" % os.strerror(e))



def _start_thread_outside(*args, **kw):
    """threading's thread start, from this process's own pid namespace: the kernel
    refuses a thread whose creator's pid_for_children is another namespace."""
    ns = _current_pidns()
    if ns is None:
        return _start_new_thread(*args, **kw)
    _setns_pid(_host_pidns)
    try:
        return _start_new_thread(*args, **kw)
    finally:
        _setns_pid(ns.fd)


_start_new_thread = threading._start_new_thread
threading._start_new_thread = _start_thread_outside


def _execute_child_then_leave(self, *args, **kw):
    """subprocess's child start; the namespace entered for it is left right after, so
    a host tool that a test starts later (gdb -p, strace -p with a host pid) runs in
    this process's own namespace."""
    try:
        return _execute_child(self, *args, **kw)
    finally:
        ns = _current_pidns()
        if ns is not None:
            ns.leave()


_execute_child = subprocess.Popen._execute_child
subprocess.Popen._execute_child = _execute_child_then_leave


class _PidNamespace:
    """A pid namespace of the sandbox's own, with the root's /proc showing it: the
    programs under test see only the sandbox's processes (the busy check of userdel and
    usermod, pgrep), not those of the host or of parallel test workers, which use the
    same uid numbers.  Processes enter it by being forked while this process's
    pid_for_children points at it (enter, which _Runner._wrap calls); the kernel kills
    them all when its pid 1 dies (close).  A process of the host's namespace would find
    no /proc/self in the root."""

    def __init__(self, root):
        global _host_pidns
        if _host_pidns is None:
            _host_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.fd = None
        # setpriv's death signal, not a preexec_fn's prctl(): a preexec_fn makes
        # subprocess fork the whole test process, which cost each sandbox tens of ms
        self.proc = subprocess.Popen(
            ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--",
             "/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--",
             "/bin/sh", "-c", _PIDNS_INIT, "sandbox-init", os.path.join(root, "proc")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, close_fds=True)
        line = self.proc.stdout.readline()
        if line.strip() != b"ready":
            self.close()
            raise SandboxError("the sandbox's pid namespace did not start")
        self.fd = os.open("/proc/%d/ns/pid_for_children" % self.proc.pid,
                          os.O_RDONLY | os.O_CLOEXEC)

    def enter(self):
        """Processes this thread forks from now on start in the namespace."""
        _setns_pid(self.fd)
        _forking.pidns = self

    def leave(self):
        """Back to forking in this process's own namespace, if this one was entered."""
        if _current_pidns() is self:
            _setns_pid(_host_pidns)
            _forking.pidns = None

    def close(self):
        self.leave()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class _Runner:
    """run/sh/pty_run/write/read over a root directory (shared by Base and Sandbox)."""

    root = None
    _root_fd = None
    _log_sock = None
    _log_lock = threading.Lock()
    _log = []
    _pidns = None

    # -- processes

    def enter_pid_namespace(self):
        """The next process this thread starts with subprocess starts in the root's pid
        namespace (Sandbox; the host's for Base); later ones in ours again.  _wrap()
        calls it, so a command it returns must be the next one started; a test that
        starts a process in the root without _wrap (chroot ROOT ...) calls it first."""
        if self._pidns:
            self._pidns.enter()
        elif _current_pidns() is not None:
            _current_pidns().leave()

    def popen(self, argv, user=None, cwd="/", env=None, **kw):
        """subprocess.Popen of argv inside the root as user (see run), in its own session;
        kw goes to Popen (stdin, stdout, ...).  .pid is the host's pid: signal it from the
        host; ns_pid() gives the number the root's programs see."""
        cmd, pw = self._wrap(argv, user, cwd)
        kw.setdefault("start_new_session", True)
        kw.setdefault("close_fds", True)
        return subprocess.Popen(cmd, env=_clean_env(pw, env), cwd="/", **kw)

    def ns_pid(self, pid):
        """The pid that programs inside the root see for the host's pid (the same number
        without a pid namespace)."""
        if not self._pidns:
            return pid
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
        raise SandboxError("no NSpid line for pid %d" % pid)

    # -- files

    def write(self, path, text, mode=0o644, uid=0, gid=0):
        """Write a file inside the root (text or bytes), then set owner and mode.
        Symlinks are followed as the root would see them (never out of the root)."""
        data = text.encode() if isinstance(text, str) else text
        fd = _openat2_in_root(self._root_fd, path,
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)     # after chown, which clears set-id bits
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def read(self, path):
        return self.read_bytes(path).decode()

    def read_bytes(self, path):
        fd = _openat2_in_root(self._root_fd, path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def lstat(self, path):
        """os.lstat of a path inside the root (symlinks resolved inside the root)."""
        parent, name = os.path.split("/" + path.lstrip("/"))
        fd = _openat2_in_root(self._root_fd, parent, os.O_PATH | os.O_DIRECTORY)
        try:
            if not name:
                return os.stat(fd)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def modes(self, paths):
        """{path: (st_mode, st_uid, st_gid)} of those of paths that exist in the root."""
        out = {}
        for p in paths:
            if self.exists(p):
                st = self.lstat(p)
                out[p] = (st.st_mode, st.st_uid, st.st_gid)
        return out

    def exists(self, path):
        try:
            self.lstat(path)
            return True
        except FileNotFoundError:
            return False

    def getpwnam(self, name):
        """The root's /etc/passwd entry for a name or uid (a User), or None."""
        return _parse_passwd(self.read("/etc/passwd"), name)

    def getgrnam(self, name):
        """(name, gid, [members]) from the root's /etc/group, or None."""
        for line in self.read("/etc/group").splitlines():
            f = line.split(":")
            if len(f) == 4 and (f[0] == name or (isinstance(name, int) and f[2] == str(name))):
                return (f[0], int(f[2]), [m for m in f[3].split(",") if m])
        return None

    # -- commands

    def _wrap(self, argv, user, cwd):
        """The host argv that runs argv inside the root as user; and that user."""
        if isinstance(argv, str):
            raise TypeError("argv must be a list; use sh() for a shell command")
        self.enter_pid_namespace()
        cmd = ["/usr/sbin/chroot", self.root]
        if cwd and cwd != "/":
            cmd += ["/usr/bin/env", "--chdir=" + cwd]
        pw = None
        if user is not None and user != "root" and user != 0:
            pw = self.getpwnam(user)
            if pw is None:
                if not isinstance(user, int):
                    raise SandboxError("no user %r in the root's /etc/passwd" % user)
                cmd += ["/usr/bin/setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                        "--clear-groups", "--"]
                pw = User(str(user), user, user, "", "/", "/bin/sh")
            else:
                cmd += ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                        "--init-groups", "--"]
        return cmd + [str(a) for a in argv], pw

    def run(self, argv, user=None, input=None, check=True, env=None, timeout=60, cwd="/"):
        """Run argv inside the root.  user: None/"root" or a name/uid of the root's passwd.
        env: variables added to the clean environment (HOME USER LOGNAME PATH SHELL).
        input/stdout/stderr are text (bytes if input is bytes).  A command that outlives
        timeout is killed with its whole process group (CommandTimeout); check=True
        raises CommandFailed on a non-zero exit."""
        cmd, pw = self._wrap(argv, user, cwd)
        binary = isinstance(input, (bytes, bytearray))
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if input is not None else
                                subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_clean_env(pw, env),
                                start_new_session=True, text=not binary, cwd="/",
                                close_fds=True)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            exited = proc.poll()
            _killpg(proc)
            try:
                out, err = proc.communicate(timeout=1)
            except subprocess.TimeoutExpired as again:
                # Something that left the process group still holds the pipes open.
                out, err = again.output, again.stderr
                proc.stdout.close()
                proc.stderr.close()
                proc.wait()
            out, err = _as_text(out, binary), _as_text(err, binary)
            if exited is not None:
                err = (err or "") + ("\n[sandbox: the command exited with %s, but a process "
                                     "it started kept stdout/stderr open]" % exited)
            self._drain_log()
            raise CommandTimeout(list(argv), timeout, out, err) from None
        self._drain_log()
        res = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
        if check and proc.returncode != 0:
            raise CommandFailed(proc.returncode, list(argv), out, err)
        return res

    def sh(self, script, user=None, **kw):
        return self.run(["/bin/sh", "-c", script], user=user, **kw)

    def pty_run(self, argv, script, user=None, timeout=30, env=None, cwd="/"):
        """Run argv on a new pseudo-terminal of the root (its controlling terminal) and
        play script: a list of (regex, text) pairs -- wait until regex (str or compiled,
        searched in the output after the previous match) appears, then type text
        (None: type nothing).  Each step has `timeout` seconds; a step that does not
        match kills the program and raises CommandTimeout with the output so far.
        After the script, waits (timeout s) for the program to exit.
        Returns (exit_status, output): exit_status as subprocess's returncode (negative =
        killed by that signal), output with "\\r\\n" turned into "\\n" (what the
        terminal echoes, i.e. typed text too unless the program turned echo off)."""
        cmd, pw = self._wrap(argv, user, cwd)
        master = os.open(os.path.join(self.root, "dev/pts/ptmx"),
                         os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            fcntl.ioctl(master, TIOCSPTLCK, struct.pack("i", 0))
            slave = fcntl.ioctl(master, TIOCGPTPEER, os.O_RDWR | os.O_NOCTTY)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            if pw is not None:
                # The user's terminal is theirs, as after a real login.
                os.fchown(slave, pw.uid, 5)
                os.fchmod(slave, 0o620)

            def make_controlling_tty():
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)

            proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                                    env=_clean_env(pw, env, term="vt100"),
                                    start_new_session=True, preexec_fn=make_controlling_tty,
                                    close_fds=True, cwd="/")
            os.close(slave)
            buf = bytearray()
            eof = False

            def text():
                return buf.decode("utf-8", "replace").replace("\r\n", "\n")

            def pump(deadline):
                nonlocal eof
                wait = max(0.0, deadline - time.monotonic())
                if eof:
                    time.sleep(min(wait, 0.01))
                    return
                r, _, _ = select.select([master], [], [], min(wait, 0.2))
                if r:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError as e:    # EIO: every slave fd is closed
                        if e.errno != errno.EIO:
                            raise
                        chunk = b""
                    if chunk:
                        buf.extend(chunk)
                    else:
                        eof = True

            pos = 0
            for pattern, send in script:
                rx = re.compile(pattern) if isinstance(pattern, str) else pattern
                deadline = time.monotonic() + timeout
                while True:
                    m = rx.search(text(), pos)
                    if m:
                        pos = m.end()
                        break
                    if time.monotonic() > deadline or (eof and proc.poll() is not None):
                        _killpg(proc)
                        proc.wait()
                        self._drain_log()
                        raise CommandTimeout(list(argv), timeout, text(),
                                             "exit status %s" % proc.returncode,
                                             waiting_for=rx.pattern)
                    pump(deadline)
                if send:
                    os.write(master, send.encode() if isinstance(send, str) else send)
            deadline = time.monotonic() + timeout
            while not eof or proc.poll() is None:
                if time.monotonic() > deadline:
                    _killpg(proc)
                    proc.wait()
                    self._drain_log()
                    raise CommandTimeout(list(argv), timeout, text(),
                                         "did not exit after the script",
                                         waiting_for="exit")
                pump(deadline)
            status = proc.wait()
            self._drain_log()
            return status, text()
        finally:
            os.close(master)

    # -- syslog

    def _open_log(self):
        # A thread drains /dev/log continuously: an undrained datagram socket
        # fills after a few messages and then every program that logs blocks in
        # syslog(), which would hang tests that run many programs at once.
        import socket
        import threading
        path = os.path.join(self.root, "dev/log")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind(path)
        os.chmod(path, 0o666)
        s.settimeout(0.1)
        self._log_sock = s
        self._log = []
        self._log_lock = threading.Lock()
        # _drain_log's markers: how many were numbered, the highest the reader took
        self._log_changed = threading.Condition(self._log_lock)
        self._log_markers = 0
        self._log_marker_seen = 0
        self._log_stop = threading.Event()
        self._log_thread = threading.Thread(target=self._log_reader, name="sandbox-syslog",
                                            daemon=True)
        self._log_thread.start()

    def _log_reader(self):
        import socket
        sock, stop = self._log_sock, self._log_stop
        while not stop.is_set():
            try:
                msg = sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self._log_changed:
                if msg.startswith(_DRAIN_MARKER):
                    n = int(msg[len(_DRAIN_MARKER):])
                    self._log_marker_seen = max(self._log_marker_seen, n)
                    self._log_changed.notify_all()
                else:
                    self._log.append(msg.decode("utf-8", "replace"))

    def _stop_log(self):
        if self._log_sock is None:
            return
        self._log_stop.set()
        try:
            self._send_log_marker()     # wakes the reader now, not at its recv's time-out
        except OSError:
            pass                        # (a test removed /dev/log: the time-out ends it)
        self._log_thread.join(timeout=2)
        self._log_sock.close()
        self._log_sock = None

    def _send_log_marker(self):
        import socket
        with self._log_changed:
            self._log_markers += 1
            n = self._log_markers
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(_DRAIN_MARKER + b"%d" % n, os.path.join(self.root, "dev/log"))
        return n

    def _drain_log(self):
        """Until the reader thread has taken every message sent before this call (those
        of a command that has ended): a marker sent now queues behind them, as a
        datagram socket delivers in order.  Markers are numbered in the order they are
        sent for (threads run commands at once): the reader past one numbered n or
        higher is past every message sent before n was taken.  (A fixed sleep here cost
        every command 50 ms, and a loaded machine could outlast it.)"""
        if self._log_sock is None:
            return
        n = self._send_log_marker()
        with self._log_changed:
            if not self._log_changed.wait_for(lambda: self._log_marker_seen >= n,
                                              timeout=30):
                raise SandboxError("the syslog reader took no message for 30 s")

    def syslog(self, clear=False):
        """Messages programs in the root sent to /dev/log so far (raw "<PRI>..." lines)."""
        self._drain_log()
        with self._log_lock:
            msgs = list(self._log)
            if clear:
                self._log.clear()
        return msgs


# what _drain_log sends to the root's /dev/log; the reader keeps it out of syslog()
_DRAIN_MARKER = b"\0hs-sandbox-drain-marker "


def _as_text(data, binary):
    if data is None or binary or isinstance(data, str):
        return data
    return data.decode("utf-8", "replace")


def _killpg(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- Base and Sandbox

class Base(_Runner):
    """The build installed once into a tmpfs layer (overlay of "/" -> chroot ->
    `meson install --no-rebuild`, which runs packaging/post-install.sh)."""

    def __init__(self, build_dir, skip_subprojects=True, size="2g", install=True):
        """install=False: the host's root as it is (plus the classic tools), for tests
        that install the Debian package themselves."""
        require_private_mount_ns()
        self._meson_install = install
        self.build_dir = os.path.realpath(build_dir)
        self.source_dir, _ = _meson_dirs(self.build_dir)
        self.source_dir = os.path.realpath(self.source_dir)
        self._closed = False
        self._layer = _new_layer_dir("base", size)
        _live.append(self)
        self.upper = os.path.join(self._layer, "upper")
        self.root = _mount_overlay(["/"], self._layer)
        self._root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _setup_root(self.root, (self.source_dir, self.build_dir), read_only=False)
            self._install(skip_subprojects)
        finally:
            os.close(self._root_fd)
            self._root_fd = None
            _unmount_all(self.root)
        self.root = None
        self._scrub_upper()
        # The layer is now a read-only lower layer for every sandbox.
        _mount("tmpfs", self._layer, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        self._sandboxes = 0

    def _install(self, skip_subprojects):
        dest = self.root + CLASSIC_TOOLS_DIR
        os.makedirs(dest, 0o755)
        for tool in CLASSIC_TOOLS:
            for d in ("/usr/sbin/", "/usr/bin/"):
                if os.path.exists(d + tool):
                    with open(d + tool, "rb") as f:
                        self.write(CLASSIC_TOOLS_DIR + "/" + tool, f.read(), mode=0o755)
                    break
        if not self._meson_install:
            return
        cmd = ["meson", "install", "-C", self.build_dir, "--no-rebuild"]
        if skip_subprojects:
            cmd.append("--skip-subprojects")
        res = self.run(cmd, check=False, timeout=300)
        self.install_log = res.stdout + res.stderr
        if res.returncode != 0:
            raise SandboxError("meson install into the base root failed (exit %d):\n%s" %
                               (res.returncode, self.install_log))
        group = self.read("/etc/group")
        for g in ("hardened-shadow", "hardened-shadow-auth"):
            if not re.search(r"^%s:" % re.escape(g), group, re.M):
                raise SandboxError("post-install did not create group %s:\n%s" %
                                   (g, self.install_log))

    def _scrub_upper(self):
        """Drop what `meson install` copied up from the build tree (its logs), so
        sandboxes see the live build tree of the host."""
        for path in (self.build_dir,):
            copied = os.path.join(self.upper, path.lstrip("/"))
            if os.path.lexists(copied):
                subprocess.run(["rm", "-rf", "--one-file-system", "--", copied], check=True)

    def close(self):
        if self._closed:
            return
        self._closed = True
        _unmount_all(self._layer)
        os.rmdir(self._layer)
        if self in _live:
            _live.remove(self)

    def __repr__(self):
        return "<sandbox.Base %s>" % self._layer


class Sandbox(_Runner):
    """A fresh writable root: overlay lower = base layer : "/", upper = tmpfs of `size`."""

    def __init__(self, base, size="1g"):
        require_private_mount_ns()
        if base._closed:
            raise SandboxError("the base is closed")
        self.base = base
        self._closed = False
        base._sandboxes += 1
        self._layer = _new_layer_dir("sb", size)
        _live.append(self)
        try:
            self.root = _mount_overlay([base.upper, "/"], self._layer)
            self._root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            _setup_root(self.root, (base.source_dir, base.build_dir), proc=False)
            self._pidns = _PidNamespace(self.root)
            self._open_log()
        except BaseException:
            self.close()
            raise

    def add_classic_user(self, name, password=None, uid=None, shell="/bin/bash", **fields):
        """A classic account (passwd + shadow) made by Debian's shadow-utils in the root.

        fields: comment, home, group (name or gid), groups (list), system (bool),
        create_home (default True), password_hash (instead of password), and aging
        fields set with chage: lastday, mindays, maxdays, warndays, inactive, expiredate.
        Returns the new User."""
        tools = CLASSIC_TOOLS_DIR
        cmd = [tools + "/useradd", "-s", shell]
        if fields.pop("create_home", True):
            cmd.append("-m")
        else:
            cmd.append("-M")
        if uid is not None:
            cmd += ["-u", str(uid)]
        opt = {"comment": "-c", "home": "-d", "group": "-g"}
        for key, flag in opt.items():
            if key in fields:
                cmd += [flag, str(fields.pop(key))]
        if "groups" in fields:
            cmd += ["-G", ",".join(fields.pop("groups"))]
        if fields.pop("system", False):
            cmd.append("-r")
        aging = {"lastday": "-d", "mindays": "-m", "maxdays": "-M", "warndays": "-W",
                 "inactive": "-I", "expiredate": "-E"}
        chage = []
        for key, flag in aging.items():
            if key in fields:
                chage += [flag, str(fields.pop(key))]
        pw_hash = fields.pop("password_hash", None)
        if fields:
            raise TypeError("add_classic_user: unknown fields %s" % ", ".join(fields))
        self.run(cmd + ["--", name])
        if password is not None and pw_hash is None:
            pw_hash = _crypt(password)
        if pw_hash is not None:
            # -e: store the hash as given, without PAM (whatever the root's PAM stack is)
            self.run([tools + "/chpasswd", "-e"], input="%s:%s\n" % (name, pw_hash))
        if chage:
            self.run([tools + "/chage"] + chage + ["--", name])
        return self.getpwnam(name)

    def set_login_defs(self, key, value):
        """Set KEY to VALUE in the root's /etc/login.defs (replacing its lines for KEY, or
        appending one); value None removes them."""
        path = "/etc/login.defs"
        lines = [l for l in self.read(path).splitlines()
                 if not re.match(r"[ \t]*%s([ \t]|$)" % re.escape(key), l)]
        if value is not None:
            lines.append("%s %s" % (key, value))
        self.write(path, "\n".join(lines) + "\n", mode=0o644)

    def set_nsswitch_shadow(self, sources):
        """Rewrite (or add) the shadow: line of the root's /etc/nsswitch.conf."""
        path = "/etc/nsswitch.conf"
        text = self.read(path) if self.exists(path) else ""
        line = "shadow:         %s" % sources
        new, n = re.subn(r"^[ \t]*shadow[ \t]*:.*$", line, text, flags=re.M)
        if n == 0:
            new = text + ("" if text.endswith("\n") or not text else "\n") + line + "\n"
        self.write(path, new, mode=0o644)

    def use_pwquality(self):
        """/etc/pam.d/common-password as Debian writes it with libpam-pwquality's profile
        on (pam_pwquality.so retry=3 before pam_unix), whatever the host's says: the
        host's PAM files are left as they were when the package was installed."""
        self.write("/etc/pam.d/common-password",
                   "password\trequisite\t\t\tpam_pwquality.so retry=3\n"
                   "password\t[success=1 default=ignore]\tpam_unix.so obscure use_authtok"
                   " try_first_pass yescrypt\n"
                   "password\trequisite\t\t\tpam_deny.so\n"
                   "password\trequired\t\t\tpam_permit.so\n", mode=0o644)

    def use_pam_module(self, options_by_type=None):
        """Point the root's /etc/pam.d/common-{auth,account,password,session} at
        pam_hardened_shadow.so instead of pam_unix.so, keeping Debian's control
        fields.  options_by_type maps a type ("auth", "account", "password",
        "session") to the option string for that line (replacing pam_unix's
        options); types not given keep the options the line had."""
        options_by_type = dict(options_by_type or {})
        unknown = set(options_by_type) - {"auth", "account", "password", "session"}
        if unknown:
            raise TypeError("use_pam_module: unknown types %s" % ", ".join(sorted(unknown)))
        for ptype in ("auth", "account", "password", "session"):
            path = "/etc/pam.d/common-" + ptype
            out, found = [], False
            for line in self.read(path).splitlines():
                m = re.match(r"^(\s*%s\s+(?:\[[^\]]*\]|\S+)\s+)pam_unix\.so\b(.*)$" % ptype,
                             line)
                if m:
                    found = True
                    opts = options_by_type.get(ptype, m.group(2).strip())
                    line = (m.group(1) + "pam_hardened_shadow.so " + opts).rstrip()
                out.append(line)
            if not found:
                raise SandboxError("%s has no pam_unix.so line" % path)
            self.write(path, "\n".join(out) + "\n", mode=0o644)

    def use_hardened_tree(self):
        """Convert the root's accounts to /etc/hardened-shadow (our pwconv) and
        point nsswitch.conf's shadow database at the NSS module."""
        self.run(["/usr/sbin/pwconv"])
        self.set_nsswitch_shadow("hardened_shadow")

    def close(self):
        if self._closed:
            return
        self._closed = True
        root = getattr(self, "root", None)
        if root:
            _kill_processes_in(root)
        if self._pidns:
            self._pidns.close()
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None
        self._stop_log()
        _unmount_all(self._layer)
        os.rmdir(self._layer)
        if self in _live:
            _live.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<sandbox.Sandbox %s>" % self._layer
