"""A program on a pseudo-terminal inside a sandbox, driven step by step, for the session
tests (test_login.py, test_su.py).

sandbox.pty_run runs a whole script and returns at the end; these tests also need the
program's pid (to signal it), the terminal's name (to look at its owner and mode while the
program waits at a prompt) and arbitrary checks between steps.  The terminal is set up
exactly as pty_run sets it up (80x24, TERM=vt100, a new session with the terminal as its
controlling tty, owned by `user` when given)."""

import errno
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time

import sandbox

TIOCSPTLCK = 0x40045431
TIOCGPTPEER = 0x5441
TIOCGPTN = 0x80045430


class Pty:
    def __init__(self, sb, argv, user=None, env=None):
        self.sb = sb
        self.argv = list(argv)
        cmd, pw = sb._wrap(argv, user, "/")
        self.master = os.open(os.path.join(sb.root, "dev/pts/ptmx"),
                              os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
        fcntl.ioctl(self.master, TIOCSPTLCK, struct.pack("i", 0))
        n = struct.unpack("I", fcntl.ioctl(self.master, TIOCGPTN, b"\0" * 4))[0]
        self.tty = "/dev/pts/%d" % n
        slave = fcntl.ioctl(self.master, TIOCGPTPEER, os.O_RDWR | os.O_NOCTTY)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        if pw is not None:
            os.fchown(slave, pw.uid, 5)
            os.fchmod(slave, 0o620)

        def make_controlling_tty():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                                     env=sandbox._clean_env(pw, env, term="vt100"),
                                     start_new_session=True, preexec_fn=make_controlling_tty,
                                     close_fds=True, cwd="/")
        os.close(slave)
        self.pid = self.proc.pid
        self.nspid = sb.ns_pid(self.pid)    # the pid the root's programs see
        self.buf = bytearray()
        self.pos = 0
        self.eof = False

    @property
    def output(self):
        return self.buf.decode("utf-8", "replace").replace("\r\n", "\n")

    def _pump(self, deadline):
        wait = max(0.0, deadline - time.monotonic())
        if self.eof:
            time.sleep(min(wait, 0.01))
            return
        r, _, _ = select.select([self.master], [], [], min(wait, 0.1))
        if not r:
            return
        try:
            chunk = os.read(self.master, 65536)
        except OSError as e:       # EIO: every slave fd is closed
            if e.errno != errno.EIO:
                raise
            chunk = b""
        if chunk:
            self.buf.extend(chunk)
        else:
            self.eof = True

    def _fail(self, what, timeout):
        self.kill()
        raise sandbox.CommandTimeout(self.argv, timeout, self.output,
                                     "exit status %s" % self.proc.returncode, waiting_for=what)

    def expect(self, pattern, timeout=15):
        """Wait for pattern (a regex) in the output after the last match; the match."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.output, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > deadline or (self.eof and self.proc.poll() is not None):
                self._fail(pattern, timeout)
            self._pump(deadline)

    def send(self, text):
        os.write(self.master, text.encode() if isinstance(text, str) else text)

    def wait(self, timeout=15):
        """Wait for the program to exit and its terminal output to end; its status."""
        deadline = time.monotonic() + timeout
        while not self.eof or self.proc.poll() is None:
            if time.monotonic() > deadline:
                self._fail("exit", timeout)
            self._pump(deadline)
        return self.proc.wait()

    def signal(self, sig):
        os.kill(self.pid, sig)

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            self.kill()
        if self.master is not None:
            os.close(self.master)
            self.master = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def processes_in(sb):
    """(pid, uid, command line) of every process running inside the sandbox's root."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            root = os.readlink("/proc/%s/root" % pid)
            if root != sb.root:
                continue
            with open("/proc/%s/status" % pid) as f:
                uid = [int(l.split()[2]) for l in f if l.startswith("Uid:")][0]   # effective
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except (OSError, IndexError):
            continue
        out.append((int(pid), uid, cmd))
    return out


def write_blocked(pid):
    """Is pid waiting in write(2) (/proc/PID/syscall "1")?"""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] == "1"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
