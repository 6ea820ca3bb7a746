"""Interruption: every root tool killed at every step that changes something on disk.

The requirement: SIGINT or SIGKILL at any point leaves either the old or the new state.  A
half-created user must not be left without a hardened directory, and no directory may be
left without a passwd line.

How: for each row of ROWS (one command on a prepared root), the command runs once under
strace, which records every system call that can change a file (create, write, chown,
chmod, link, rename, unlink, mkdir, rmdir ...) -- the "steps".  Then, for each step, the
root is put back to the state before the command (files rewritten from a snapshot, not a
new sandbox) and the command runs again under strace fault injection, which delivers
SIGKILL on entering exactly that step (`-e inject=SYSCALL:signal=SIGKILL:when=N`, N
counted per system call).  After every kill:

  (a) every file of the account state (the global files and their backups, /etc/shells,
      the whole tree, the homes the row names) is either as before or as after the
      complete command -- never a third version -- except the crash leftovers the design
      accepts (consistency.py lists and explains them);
  (b) consistency.check passes with those leftovers allowed;
  (c) no lock is held: /etc/.pwd.lock is free, every FILE.lock is stale, the user's
      directory lock is free;
  (d) the row's recovery (normally: the same command again) succeeds without waiting for a
      lock, and leaves the global files and the tree exactly as the complete command does,
      with nothing but harmless garbage left (consistency.GARBAGE).

Homes and tree directories (Row.complete: useradd -m, userdel -r): their work goes with the
journal of the global files (lib/etc/txn.h), so after each kill, before (d), NEXT_TOOL (a
root tool that takes the global locks and changes nothing) must leave the complete old or
the complete new state -- the homes' contents, owners and modes and the tree directory
included, no reserved directory, journal or staged file left -- and (d) compares the homes
too.  Their kill points include one step of each system call in each area (the tree, /etc,
the home, the mail spool; fsync too: sample(every_kind=True)).

Transactions (lib/txn): a tool that commits the global files through a journal may be
killed after its commit point, with /etc/.hardened-shadow.txn and staged /etc/.BASE.hs-txn
files left: that is the new state, finished by the next tool.  (a) then compares the files
as that tool will see them (effective(): each staged file the journal names stands for its
BASE), consistency.py checks that the journal would finish as written (txn-pending), and
(d) demands that the recovery leaves no journal and no staged file.  Staged files without
a journal are the old state (txn-stale), removed by the next tool too.  A row whose trace
shows exactly one journal after its staged copies (a prepared one before them does not
count) and no global file replaced on its own (journaled()) must also
keep the global files all old or all new: one transaction, no partial write between them.

Rows whose tool has no recovery (one per-user file replaced: passwd, chage, chsh with a
listed shell) must instead leave exactly the old or exactly the new state.  A few steps per
row are also interrupted with SIGINT: the tools block signals around the commit (DESIGN
section 5), so a SIGINT must leave exactly the old or exactly the new state (only stale
locks may remain).

Bounded run time: the root keeps only a few of the host's accounts (trim_accounts), a row
with more than MAX_POINTS steps is sampled (the steps that rename, link, unlink or create
come first), and every run goes through a plain chroot (sb.run waits 50 ms per command for
syslog).  The injected run must reach its step: a trace that changes between runs fails
the test instead of silently testing less.

Known bugs: a failure at a kill point inside a Known range is counted, printed and not
failed, so the rest of the row keeps guarding against regressions; each Known has its own
strict-xfail test at the end of the file that shows it on one kill point (remove the Known
from the row and the xfail mark once it is fixed).

To add a tool: add a Row (setup, argv, how to recover, the names it works on).  Rows run
as separate tests, so pytest-xdist spreads them over the cores.  A row may run on a
terminal (script: gpasswd's password prompts), set the environment (vipw's EDITOR), trace
only the main process (follow=False: strace counts `when=N` per process, so a child such
as the editor or newusers' hashing threads would be hit at its own Nth call), normalise
salted group hashes (group_passwords), start from a state broken on purpose for pwck and
grpck to repair (broken, broken_kinds: accepted until the recovery) and be a session of
separate repairs (stepwise: a SIGINT may leave some done, none half-done).
"""

import ctypes
import errno
import fcntl
import functools
import os
import re
import select
import shutil
import stat
import struct
import subprocess
import termios
import time

import pytest

import consistency
import sandbox

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

STRACE = "/usr/bin/strace"
TREE = consistency.TREE
CLASSIC_GROUPADD = "/usr/libexec/hs-test/shadow-utils/groupadd"

# Every system call that can change what is on disk (fsync is left out: it changes
# nothing a reader can see).  Both the recording run and the injected runs trace the
# system call by name, so the N of `when=N` counts the same invocations.
TRACED = ("openat", "open", "creat", "write", "pwrite64", "writev", "fchown", "fchownat",
          "chown", "lchown", "fchmod", "fchmodat", "chmod", "linkat", "link", "renameat",
          "renameat2", "rename", "unlinkat", "unlink", "mkdirat", "mkdir", "rmdir",
          "symlinkat", "symlink", "ftruncate", "truncate")
FD_CALLS = {"write", "pwrite64", "writev", "fchown", "fchmod", "ftruncate", "fsync"}
OPEN_CALLS = {"openat", "open", "creat"}

MAX_POINTS = 28       # kill points per row (see sample())
SIGINT_POINTS = 3     # SIGINT points per row
RECOVERY_LIMIT = 5.0  # seconds: a recovery that waits this long is waiting for a lock

# The account state compared before/after: these names in /etc (and anything of the
# temporary names, lock files and conversion trees, which consistency.py classifies).
# (".." too: the temporaries of lib/txn's journal when it replaces one,
# "..hardened-shadow.txn.XXX")
ETC_NAMES = re.compile(r"\.{0,2}(passwd|shadow|group|gshadow|subuid|subgid|shells)(-)?(\..*)?\Z"
                       r"|\.{1,2}hardened-shadow\..*\Z|hardened-shadow\Z")
GLOBAL_PATHS = tuple("/etc/" + f for f in consistency.GLOBAL_FILES)
GSHADOW_PATHS = ("/etc/gshadow", "/etc/gshadow-", "/etc/.gshadow.hs-txn")
BACKUPS = {"/etc/%s-" % f for f in consistency.GLOBAL_FILES} | {"/etc/shells-"}

# A home built or removed under a reserved name beside it (useradd -m, userdel -r)
HOME_RESERVED_RE = re.compile(r"\.(new|del)\.")

HASH_A = "$6$saltsalt$" + "A" * 86
HASH_B = "$6$saltsalt$" + "B" * 86


# ---------------------------------------------------------------- snapshots

def _host(sb, path):
    return os.path.join(sb.root, path.lstrip("/"))


def _entry(host_path):
    st = os.lstat(host_path)
    data = None
    if stat.S_ISREG(st.st_mode):
        with open(os.open(host_path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
            data = f.read()
    elif stat.S_ISLNK(st.st_mode):
        data = os.readlink(host_path)
    return (stat.S_IFMT(st.st_mode), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), data)


def _walk(sb, path, out):
    hp = _host(sb, path)
    try:
        e = _entry(hp)
    except FileNotFoundError:
        return
    out[path] = e
    if e[0] == stat.S_IFDIR:
        for name in os.listdir(hp):
            _walk(sb, path + "/" + name, out)


_libcrypt = ctypes.CDLL("libcrypt.so.1")
_libcrypt.crypt.restype = ctypes.c_char_p
_libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


@functools.lru_cache(maxsize=256)
def _verifies(password, hash_):
    out = _libcrypt.crypt(password.encode(), hash_)
    return out is not None and out == hash_


def snapshot(sb, homes=(), passwords=None, group_passwords=None):
    """path -> (type, uid, gid, mode, data) for the account state of the root.
    passwords: {user: [password, ...]}: a hash in the user's shadow file that one of them
    verifies is recorded as b"<password>" (each run salts anew); group_passwords the same
    for the groups' hashes in /etc/gshadow (its backup and its staged copy too)."""
    out = {}
    for name in os.listdir(_host(sb, "/etc")):
        if ETC_NAMES.match(name):
            _walk(sb, "/etc/" + name, out)
    for h in homes:
        _walk(sb, h, out)
        parent = os.path.dirname(h)
        if os.path.isdir(_host(sb, parent)):
            for name in os.listdir(_host(sb, parent)):
                if HOME_RESERVED_RE.match(name):
                    _walk(sb, parent + "/" + name, out)
    for user, candidates in (passwords or {}).items():
        path = "%s/%s/shadow" % (TREE, user)
        e = out.get(path)
        if e is None or e[4] is None:
            continue
        hash_, rest = e[4].split(b":", 1)
        for pw in candidates:
            if _verifies(pw, hash_):
                out[path] = e[:4] + (b"<%s>:" % pw.encode() + rest,)
    for path in GSHADOW_PATHS if group_passwords else ():
        e = out.get(path)
        if e is None or e[4] is None:
            continue
        lines = []
        for line in e[4].split(b"\n"):
            f = line.split(b":")
            for pw in group_passwords.get(f[0].decode("utf-8", "replace"), ()):
                if len(f) == 4 and _verifies(pw, f[1]):
                    f[1] = b"<%s>" % pw.encode()
                    break
            lines.append(b":".join(f))
        out[path] = e[:4] + (b"\n".join(lines),)
    return out


def effective(snap, old):
    """The state as the next tool sees it: with a lib/txn journal pending, each global
    file it names whose staged copy is still there is that copy (consistency.check checks
    that it would be installed: see txn-pending) -- unless the staged name holds the old
    file (as in `old`), which the install exchanged out of the way of the new one."""
    j = snap.get("/etc/" + consistency.TXN_JOURNAL)
    lines = j and j[4] is not None and consistency.parse_journal(j[4])
    if not lines:
        return snap
    out = dict(snap)
    for base, _ in lines:
        staged = snap.get("/etc/.%s.hs-txn" % base)
        if staged is not None and staged != old.get("/etc/" + base):
            out["/etc/" + base] = staged
    return out


def restore(sb, old, cur):
    """Make the root's account state `old` again, given its current state `cur`."""
    for path in sorted(set(cur) - set(old), reverse=True):
        hp = _host(sb, path)
        if cur[path][0] == stat.S_IFDIR:
            shutil.rmtree(hp, ignore_errors=True)
        elif os.path.lexists(hp):
            os.unlink(hp)
    for path in sorted(old):
        e = old[path]
        if cur.get(path) == e:
            continue
        hp = _host(sb, path)
        c = cur.get(path)
        if c is not None and c[0] != e[0]:
            if c[0] == stat.S_IFDIR:
                shutil.rmtree(hp)
            else:
                os.unlink(hp)
            c = None
        if e[0] == stat.S_IFDIR:
            if not os.path.lexists(hp):
                os.mkdir(hp, 0o700)
        elif e[0] == stat.S_IFREG:
            if c is not None and os.lstat(hp).st_nlink != 1:
                os.unlink(hp)
            fd = os.open(hp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, e[4])
            finally:
                os.close(fd)
        else:
            raise AssertionError("cannot restore %s (type %o)" % (path, e[0]))
        os.chown(hp, e[1], e[2], follow_symlinks=False)
        os.chmod(hp, e[3])


def _is_leftover_path(path):
    """A temporary, lock or reserved name (or below one): consistency.py judges those."""
    parts = path.split("/")
    if path.startswith("/etc/") and len(parts) >= 3:
        n = parts[2]
        if consistency.ETC_TEMP_RE.match(n) or consistency.ETC_LOCK_RE.match(n) or \
                consistency.CONVERT_TMP_RE.match(n) or consistency.TXN_TEMP_RE.match(n) or \
                consistency.TXN_STAGED_RE.match(n) or n == consistency.TXN_JOURNAL:
            return True
    if path.startswith(TREE + "/"):
        rest = path[len(TREE) + 1:].split("/")
        if rest[0].startswith((".", ":")):
            return True
        if len(rest) == 2 and consistency.USER_TEMP_RE.match(rest[1]):
            return True
    if not path.startswith("/etc/") and any(HOME_RESERVED_RE.match(c) for c in parts):
        return True
    return False


def _home_of(path, homes):
    for h in homes:
        if path == h or path.startswith(h + "/"):
            return h
    return None


def _not_handed_over(entry):
    """A home directory still being built (root's, or the user's but still 0700) or being
    removed (taken away from the user: root's): its contents are in between."""
    return entry is not None and entry[0] == stat.S_IFDIR and (entry[1] == 0 or
                                                                entry[3] == 0o700)


def _locked_version(c, n):
    """Is c the new version of a per-user shadow file, but with the locked hash "!" that
    useradd and newusers write before /etc/passwd (the real hash comes after it)?"""
    return c is not None and n is not None and c[:4] == n[:4] and c[4] is not None and \
        n[4] is not None and c[4].split(b":", 1) == [b"!", n[4].split(b":", 1)[1]]


def compare_old_or_new(old, new, cur, homes, taken_away_ok, locked_first=False,
                       atomic=False):
    """Paths whose current version is neither the old nor the new one (with a pending
    transaction: as the next tool will see it).  atomic: the command writes the global
    files in one lib/txn transaction, so they must be all old or all new."""
    bad = []
    cur = effective(cur, old)
    if atomic:
        at_old = [p for p in GLOBAL_PATHS if cur.get(p) == old.get(p)]
        at_new = [p for p in GLOBAL_PATHS if cur.get(p) == new.get(p)]
        if len(at_old) < len(GLOBAL_PATHS) and len(at_new) < len(GLOBAL_PATHS):
            bad.append("the global files are neither all old nor all new (one transaction):"
                       " old %s, new %s" % (sorted(set(at_old) - set(at_new)),
                                            sorted(set(at_new) - set(at_old))))
    for path in sorted(set(old) | set(new) | set(cur)):
        if _is_leftover_path(path):
            continue
        c, o, n = cur.get(path), old.get(path), new.get(path)
        if c == o or c == n:
            continue
        if locked_first and path.endswith("/shadow") and _locked_version(c, n):
            continue
        h = _home_of(path, homes)
        if h is not None and _not_handed_over(cur.get(h)):
            continue        # a home being built or removed, closed to everyone
        if taken_away_ok and c is not None and c[0] == stat.S_IFDIR and \
                c[1:3] == (0, 0) and c[3] in (0o700, 0o2710, 0o710) and \
                (path == TREE or path.startswith(TREE + "/") and path.count("/") == 3):
            continue        # a user's directory (or the tree) taken away (DESIGN section 3)
        bad.append("%s: %s (before: %s, after: %s)" % (path, _show(c), _show(o), _show(n)))
    return bad


def _show(e):
    if e is None:
        return "absent"
    kind = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "link"}.get(e[0], "?")
    data = "" if e[4] is None else " %r" % (e[4][:60],)
    return "%s %d:%d %o%s" % (kind, e[1], e[2], e[3], data)


def same_as(a, b, homes=(), skip_backups=True, locked_first=False):
    """Differences between two states outside leftovers, backups and the homes."""
    out = []
    for path in sorted(set(a) | set(b)):
        if _is_leftover_path(path) or (skip_backups and path in BACKUPS) or \
                _home_of(path, homes):
            continue
        if locked_first and path.endswith("/shadow") and \
                _locked_version(a.get(path), b.get(path)):
            continue
        if a.get(path) != b.get(path):
            out.append("%s: %s, expected %s" % (path, _show(a.get(path)), _show(b.get(path))))
    return out


# ---------------------------------------------------------------- strace

_LINE = re.compile(r"(\d+) +(\w+)\((.*)\) += (-?\d+|\?)")
_UNFINISHED = re.compile(r"(\d+) +(\w+)\((.*) <unfinished \.\.\.>$")
_RESUMED = re.compile(r"(\d+) +<\.\.\. (\w+) resumed>(.*)\) += (-?\d+|\?)")


def _changes_something(name, args, ret):
    if ret == "?" or int(ret) < 0:
        return False
    if name in OPEN_CALLS:
        return "O_CREAT" in args and "O_TMPFILE" not in args
    if name in FD_CALLS:
        # only on a file with a name: not an O_TMPFILE inode, a pipe, a socket, a device
        fm = re.match(r"\d+<([^>]*)>(\(deleted\))?", args)
        return bool(fm and not fm.group(2) and fm.group(1).startswith("/") and
                    not fm.group(1).startswith("/dev/"))
    return True


def record_steps(sb, row):
    """Run the row's command once under strace; its state-changing steps, each as
    (syscall, N, trace line) with N counting that syscall's invocations (all of them,
    as strace's `when=` does) in the main process."""
    trace = "/tmp/interrupt-trace"
    r = run_row(sb, row, ["-f", "-y", "-qq", "-o", trace, "-e",
                          "trace=" + ",".join(TRACED + row.trace_extra)])
    assert r.returncode == row.rc, "%s exited %s\n%s%s" % (row.argv, r.returncode, r.stdout,
                                                            r.stderr)
    main, counts, steps, unfinished = None, {}, [], {}
    for line in sb.read(trace).splitlines():
        m = _LINE.match(line)
        if m:
            pid, name, args, ret = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        elif _UNFINISHED.match(line):
            # another process's line interrupted this one: counted at entry
            m = _UNFINISHED.match(line)
            pid, name = int(m.group(1)), m.group(2)
            main = pid if main is None else main
            if pid == main:
                counts[name] = counts.get(name, 0) + 1
                unfinished[name] = (counts[name], line, m.group(3))
            continue
        elif _RESUMED.match(line):
            m = _RESUMED.match(line)
            pid, name = int(m.group(1)), m.group(2)
            if pid == main and name in unfinished:
                n, first, args = unfinished.pop(name)
                if _changes_something(name, args + m.group(3), m.group(4)):
                    steps.append((name, n, first + " ..." + m.group(3)))
            continue
        else:
            continue
        main = pid if main is None else main
        if pid != main:
            continue
        counts[name] = counts.get(name, 0) + 1
        if _changes_something(name, args, ret):
            steps.append((name, counts[name], line))
    return steps


_KEY = re.compile(r"\d+ +(rename|link|unlink|mkdir|rmdir|symlink)"
                  r"|\d+ +fch(own|mod)\(\d+<%s(/[^/>]+)?>," % re.escape(TREE))


def _spread(items, n):
    if len(items) <= n:
        return list(items)
    if n <= 1:
        return list(items[:n])
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


_LOCKFILE = re.compile(r"/etc/(?:passwd|shadow|group|gshadow|subuid|subgid)\.(\d+|lock)\b")


def _lock_signature(step):
    kinds = tuple("lock" if k == "lock" else "pid" for k in _LOCKFILE.findall(step[2]))
    return (step[0],) + kinds if kinds else None


_AREA = re.compile(r"<(/etc/hardened-shadow|/etc|/home|/var/mail)[/>]")


def _kinds_first(steps):
    """One step of each (system call, area): the first and the last, so that every kind
    of call is hit in every phase (the tree, /etc, the home, the mail spool)."""
    first, last = {}, {}
    for s in steps:
        m = _AREA.search(s[2])
        key = (s[0], m.group(1) if m else "")
        first.setdefault(key, s)
        last[key] = s
    return list(first.values()) + list(last.values())


def sample(steps, n, every_kind=False):
    """At most n steps.  Of the lock protocol (FILE.PID, FILE.lock for each file) only the
    first file's steps are kept, the others repeat them; then, if still more than n, the
    steps that change a name (or a user directory's owner or mode) first, the others
    spread over the rest, in their order.  every_kind: first one step of each system call
    in each area (_kinds_first), even beyond n."""
    seen, kept = set(), []
    for st in steps:
        sig = _lock_signature(st)
        if sig is not None:
            if sig in seen:
                continue
            seen.add(sig)
        kept.append(st)
    steps = kept
    if len(steps) <= n:
        return list(steps)
    chosen = set(map(id, _kinds_first(steps))) if every_kind else set()
    key = [s for s in steps if _KEY.match(s[2]) and id(s) not in chosen]
    # with every_kind, half of what is left for the names, half for the others
    chosen |= set(map(id, _spread(key, max(0, n - len(chosen)) // 2 if every_kind else n)))
    rest = [s for s in steps if id(s) not in chosen]
    chosen |= set(map(id, _spread(rest, max(0, n - len(chosen)))))
    return [s for s in steps if id(s) in chosen]


def run(sb, argv, input=None, user=None, env=None, timeout=60, script=None):
    """sb.run without its 50 ms wait for syslog messages (hundreds of runs per row), as
    root or, through setpriv, as user; with script, on a terminal (run_pty)."""
    sb.enter_pid_namespace()
    cmd = ["/usr/sbin/chroot", sb.root]
    e = {"HOME": "/root", "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
         "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    if user:
        pw = sb.getpwnam(user)
        cmd += ["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                "--init-groups", "--"]
        e.update(HOME=pw.home, USER=pw.name, LOGNAME=pw.name, PATH="/usr/bin:/bin")
    e.update(env or {})
    if script is not None:
        return run_pty(sb, cmd + argv, script, e, timeout)
    try:
        return subprocess.run(cmd + argv, input=input, capture_output=True, text=True,
                              env=e, timeout=timeout, start_new_session=True, cwd="/")
    except subprocess.TimeoutExpired as t:
        raise AssertionError("%s timed out after %s s" % (argv, timeout)) from t


def run_pty(sb, cmd, script, env, timeout):
    """Run cmd (a host argv) on a new terminal of the root, its controlling terminal, and
    play script: [(regex, text)]: wait for regex in the output after the previous match,
    then type text.  A program that exits (or is killed) first ends the script.  Returns
    a CompletedProcess with what the terminal showed as stdout."""
    master = os.open(_host(sb, "/dev/pts/ptmx"), os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        fcntl.ioctl(master, sandbox.TIOCSPTLCK, struct.pack("i", 0))
        slave = fcntl.ioctl(master, sandbox.TIOCGPTPEER, os.O_RDWR | os.O_NOCTTY)
        proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env,
                                start_new_session=True, close_fds=True, cwd="/",
                                preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        out, pos, steps = bytearray(), 0, list(script)
        deadline = time.monotonic() + timeout
        while True:
            text = out.decode("utf-8", "replace")
            while steps and re.search(steps[0][0], text[pos:]):
                pos += re.search(steps[0][0], text[pos:]).end()
                os.write(master, steps.pop(0)[1].encode())
            if time.monotonic() > deadline:
                os.killpg(proc.pid, 9)
                proc.wait()
                raise AssertionError("%s timed out after %s s:\n%s" % (cmd, timeout, text))
            if select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError as e:        # EIO: every slave fd is closed
                    if e.errno != errno.EIO:
                        raise
                    chunk = b""
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None and not steps:
                break
        return subprocess.CompletedProcess(cmd, proc.wait(), out.decode("utf-8", "replace"),
                                           "")
    finally:
        os.close(master)


def run_row(sb, row, strace_args, timeout=60):
    argv = [STRACE] + strace_args
    env = dict(row.env)
    if row.user:
        argv += ["-u", row.user]
        pw = sb.getpwnam(row.user)
        env.update(HOME=pw.home, USER=pw.name, LOGNAME=pw.name)
    return run(sb, argv + ["--"] + row.argv, input=row.input, env=env, timeout=timeout,
               script=row.script)


def inject(sb, row, step, sig):
    """Run the row with sig delivered on entering step.  strace counts `when=` per
    process: with -f a child (vipw's editor) would be hit at its own Nth call, so rows
    whose tool starts other programs trace the main process only (follow=False)."""
    name, n, _ = step
    follow = ["-f"] if row.follow else []
    return run_row(sb, row, follow + ["-o", "/dev/null", "-e", "trace=" + name,
                                      "-e", "inject=%s:signal=%s:when=%d" % (name, sig, n)])


def locks_free(sb, users):
    """/etc/.pwd.lock is not locked, and the users' directory locks are free."""
    out = []
    p = _host(sb, "/etc/.pwd.lock")
    if os.path.exists(p):
        fd = os.open(p, os.O_RDWR | os.O_NOFOLLOW)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            out.append("/etc/.pwd.lock is still locked")
        finally:
            os.close(fd)
    for u in users:
        p = _host(sb, TREE + "/" + u)
        if not os.path.isdir(p) or os.path.islink(p):
            continue
        fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            out.append("%s/%s is still flock()ed" % (TREE, u))
        finally:
            os.close(fd)
    return out


# ---------------------------------------------------------------- the rows

class Known:
    """A known bug: failures at the kill points from the step after one matching `after`
    (None: from the step matching `upto` itself) up to the step matching `upto` are the
    bug's, not new ones.  Each has its own strict-xfail test below that shows it."""

    def __init__(self, name, upto, after=None, sigint=False, whats=None):
        self.name, self.upto, self.after = name, re.compile(upto), after and re.compile(after)
        self.sigint = sigint          # a bug of the SIGINT points, not of the SIGKILL ones
        self.whats = whats            # the failures it explains (prefixes), None: all

    def points(self, steps):
        out, inside = set(), self.after is None
        for s in steps:
            if self.after is not None and inside is False and self.after.search(s[2]):
                inside = True
                continue
            if self.after is None:
                if self.upto.search(s[2]):
                    out.add(id(s))
                continue
            if inside:
                out.add(id(s))
                if self.upto.search(s[2]):
                    break
        return out


class Row:
    def __init__(self, id, argv, setup=None, user=None, input=None, homes=(), pending=(),
                 recover="rerun", recover_ok=(0,), taken_away=False, classic=False,
                 known=(), rc=0, passwords=None, locked_first=False, group_passwords=None,
                 script=None, env=None, follow=True, broken=(), broken_kinds=(),
                 stepwise=False, complete=False, trace_extra=(), max_points=MAX_POINTS,
                 recover_homes=False):
        self.id = id
        # The recovery (d) must leave the homes as the complete command does too (their
        # contents, owners and modes), not only the global files and the tree.
        self.recover_homes = recover_homes
        # After a kill, the next tool that takes the global locks (NEXT_TOOL, which changes
        # nothing itself) must leave the complete old or the complete new state: global
        # files, tree directory and homes (their contents, owners and modes), with no
        # reserved directory, journal or staged file left; the rerun then the new state,
        # homes included (useradd -m, userdel -r: their journaled home and tree work).
        self.complete = complete
        self.trace_extra = tuple(trace_extra)   # more system calls to kill at (fsync)
        self.max_points = max_points
        # A session of separate changes made one after the other as they are answered
        # (pwck's tree repairs): a SIGINT may leave some done and the others not, but
        # none half-done (each file is old or new, nothing but stale locks is left).
        self.stepwise = stepwise
        self.group_passwords = group_passwords  # {group: [password, ...]} (see snapshot)
        self.script = script          # [(regex, text)]: run on a terminal (run_pty)
        self.env = env or {}          # added to the environment of every run
        self.follow = follow          # inject into children too (see inject())
        # The old state is broken on purpose (the repairs of pwck and grpck): problems
        # (regexes) and leftover kinds that the old state has.  Accepted before and after
        # a kill (each file is also checked to be old or new), never after the recovery.
        self.broken = tuple(map(re.compile, broken))
        self.broken_kinds = frozenset(broken_kinds)
        self.locked_first = locked_first  # the tool writes "!" first, the hash after passwd
        #                                   (useradd -p, newusers): a kill in between leaves
        #                                   the account locked, and a rerun cannot unlock it
        self.passwords = passwords    # {user: [password, ...]} (see snapshot)
        self.argv = argv
        self.rc = rc                  # its exit status when not interrupted
        self.setup = setup            # function(sb) run after the common set-up
        self.user = user              # run as this user (strace -u: set-id bits work)
        self.input = input            # stdin text
        self.homes = homes            # home directories (and spools) that belong to the state
        self.pending = pending        # names whose directory may be missing after a kill
        self.recover = recover        # "rerun", None (no recovery needed: the state must
        #                               be exactly the old or the new one), or an argv
        self.recover_ok = recover_ok  # exit codes the recovery may end with
        self.taken_away = taken_away  # the command takes a user's directory away
        self.classic = classic        # set up without the tree (pwconv)
        self.known = known            # Known bugs


def with_home(sb):
    sb.sh("mkdir -p /home/alice/sub && echo data > /home/alice/file && "
          "echo deep > /home/alice/sub/deep && chown -R alice:alice /home/alice && "
          ": > /var/mail/alice && chown alice:mail /var/mail/alice && "
          "chmod 660 /var/mail/alice")


SKEL = "/srv/skel"


def with_skel(sb):
    """A skeleton of a few files, a subdirectory and a symlink, for useradd -m -k."""
    sb.sh("mkdir -p %s/sub/deeper && echo profile > %s/.profile && echo one > %s/a && "
          "printf 'two\\n' > %s/sub/b && echo three > %s/sub/deeper/c && "
          "chmod 600 %s/a && chmod 750 %s/sub && ln -s sub/b %s/link"
          % ((SKEL,) * 8))


def with_bob(sb):
    sb.run(["/usr/sbin/useradd", "bob"])


def with_member(sb):
    sb.run(["/usr/bin/gpasswd", "-a", "alice", "proj"])


def with_primary(sb):
    """bob's primary group is proj: groupmod -g moves him along."""
    sb.run(["/usr/sbin/useradd", "-g", "proj", "bob"])


def with_grp2(sb):
    sb.run(["/usr/sbin/groupadd", "-g", "5002", "grp2"])


GPASSWD_SCRIPT = [(r"New Password: ", "Group-pw-1\n"), (r"Re-enter new password: ",
                                                       "Group-pw-1\n")]
EDITOR = "/usr/local/bin/hs-interrupt-ed"
# vipw's editor: with -s (vipw -s -u alice) a new hash, aging and shell, else (vipw) a new
# GECOS for alice.  The same edit again leaves the copy as it is.
EDITOR_SCRIPT = """#!/bin/sh
if [ "$1" = -s ]; then
  sed -i 's|^alice:[^:]*:\\([^:]*\\):[^:]*:[^:]*:|alice:%s:\\1:1:60:|; s|^shell:.*|shell:/bin/sh|' "$2"
else
  sed -i 's/^alice:\\([^:]*\\):\\([^:]*\\):\\([^:]*\\):[^:]*:/alice:\\1:\\2:\\3:Alice Edited:/' "$1"
fi
""" % HASH_A


def with_editor(sb):
    sb.write(EDITOR, EDITOR_SCRIPT, mode=0o755)


# pwck repairs on a tree system: a shadow file of the wrong mode (fixed in place) and a
# user without a directory (made, locked); the problems the old state has on purpose:
PWCK_BROKEN = (r"/alice/shadow: \d+:\d+ 644, not",)


def with_tree_damage(sb):
    os.chmod(_host(sb, TREE + "/alice/shadow"), 0o644)
    sb.run(["/usr/sbin/groupadd", "-g", "1600", "carol"])
    with open(_host(sb, "/etc/passwd"), "a") as f:
        f.write("carol:x:1600:1600::/nonexistent:/bin/sh\n")


# grpck repairs: a later duplicate of a group line (deleted from /etc/group), and members
# in /etc/group that /etc/gshadow lacks (gshadow follows group).
GRPCK_BROKEN = (r"/etc/group:\d+: duplicate name 'proj'",)


def with_group_damage(sb):
    with open(_host(sb, "/etc/group"), "r+") as f:
        text = f.read().replace("\nproj:x:5000:\n", "\nproj:x:5000:alice\n")
        f.seek(0)
        f.write(text + "proj:x:5000:\n")


def with_pam(sb):
    # Debian's stack without the optional quality module, on our module
    sb.write("/etc/pam.d/common-password",
             "password\t[success=1 default=ignore]\tpam_unix.so obscure yescrypt\n"
             "password\trequisite\t\t\tpam_deny.so\npassword\trequired\t\t\tpam_permit.so\n")
    sb.use_pam_module()


def installs(base):
    """The step that puts the new /etc/BASE in place: lib/txn's exchange with the staged
    file (or, on a file system without it, the rename)."""
    return r'renameat2?\(\d+</etc>, "\.%s\.[\w-]+", \d+</etc>, "%s"(, RENAME_EXCHANGE)?\)' % (
        base, base)


# The kill points that once showed bugs, now fixed (the journaled transaction of the
# global files, lib/etc/txn.h; usermod's rerun and hand-back order; pwck's signal blocking);
# their tests at the end of the file pin the fixes down.
GROUP_BEFORE_PASSWD = Known(
    "useradd: after a kill between writing /etc/group and /etc/passwd, running the same "
    "useradd again fails ('group NAME exists', exit 9)",
    after=installs("group"),
    upto=installs("passwd"),
    whats=("recovery",))
RENAME_AFTER_PASSWD = Known(
    "usermod -l: after a kill once /etc/passwd has the new name, running the same usermod "
    "again fails ('user OLD does not exist', exit 6) and leaves the directory reserved or "
    "taken away",
    after=installs("passwd"), upto=r"$^",
    whats=("recovery",))
GROUPMOD_G_PASSWD = Known(
    "groupmod -g: after a kill between writing /etc/group (the new gid) and /etc/passwd "
    "(its primary members' gid), running the same groupmod again changes nothing: the "
    "members keep the old gid, a group that no longer exists",
    after=installs("group"),
    upto=installs("passwd"),
    whats=("recovery",))
NEWUSERS_GROUPS_FIRST = Known(
    "newusers: after a kill between writing /etc/gshadow and /etc/passwd, running the "
    "same newusers again fails (exit 1: 'group NAME is a shadow group, but does not exist "
    "in /etc/group', then 'group NAME already exists') and changes nothing",
    after=installs("gshadow"),
    upto=installs("passwd"),
    whats=("recovery",))
PWCK_SIGINT = Known(
    "pwck: tree repairs run with signals not blocked: a SIGINT while it makes a missing "
    "user directory kills it half-way, leaving /etc/hardened-shadow/.new.USER.XXXXXXXXXXXX "
    "and still no directory",
    after=r'mkdirat\(\d+</etc/hardened-shadow>, "\.new\.carol\.',
    upto=r'fchmod\(\d+</etc/hardened-shadow/carol>, 02710\)',
    sigint=True, whats=("an intermediate state",))
HAND_BACK = Known(
    "usermod: a kill between fchown(dir, uid, auth) and fchmod(dir, 02710) leaves the "
    "directory USER:auth 0700, and nothing repairs it",
    upto=r"fchmod\(\d+</etc/hardened-shadow/[^/>]+>, 02710\)")

ROWS = [
    Row("useradd", ["/usr/sbin/useradd", "bob"], pending=("bob",), recover_ok=(0, 9),),
    Row("useradd-m", ["/usr/sbin/useradd", "-m", "-k", SKEL, "bob"], setup=with_skel,
        homes=("/home/bob",), pending=("bob",), recover_ok=(0, 9), complete=True,
        trace_extra=("fsync",), max_points=44),
    Row("useradd-UG", ["/usr/sbin/useradd", "-U", "-G", "proj,users", "carol"],
        pending=("carol",), recover_ok=(0, 9)),
    Row("useradd-p", ["/usr/sbin/useradd", "-N", "-p", HASH_A, "dave"], pending=("dave",),
        recover_ok=(0, 9), locked_first=True),
    Row("usermod-l", ["/usr/sbin/usermod", "-l", "alice2", "alice"],
        pending=("alice", "alice2"), taken_away=True, recover_ok=(0, 6),
        known=()),
    Row("usermod-u", ["/usr/sbin/usermod", "-u", "2345", "alice"], setup=with_home,
        homes=("/home/alice", "/var/mail/alice"), taken_away=True, known=(),
        recover_homes=True),
    Row("usermod-d-m", ["/usr/sbin/usermod", "-d", "/home/alice2", "-m", "alice"],
        setup=with_home, homes=("/home/alice", "/home/alice2"), recover_homes=True),
    # alice's shell is /bin/bash (add_classic_user): a listed shell that changes it
    Row("usermod-s-listed", ["/usr/sbin/usermod", "-s", "/bin/sh", "alice"]),
    Row("usermod-s-restricted", ["/usr/sbin/usermod", "-s", "/usr/sbin/nologin", "alice"]),
    Row("usermod-aG", ["/usr/sbin/usermod", "-a", "-G", "proj", "alice"]),
    Row("usermod-L", ["/usr/sbin/usermod", "-L", "alice"]),
    Row("userdel-r", ["/usr/sbin/userdel", "-r", "alice"], setup=with_home,
        homes=("/home/alice", "/var/mail/alice"), pending=("alice",), taken_away=True,
        recover_ok=(0, 6), complete=True, trace_extra=("fsync",), max_points=44),
    Row("chpasswd-e", ["/usr/sbin/chpasswd", "-e"], setup=with_bob,
        input="alice:%s\nbob:%s\n" % (HASH_A, HASH_B)),
    Row("chpasswd-pam", ["/usr/sbin/chpasswd"], setup=lambda sb: (with_bob(sb), with_pam(sb)),
        input="alice:Batch-pw-1\nbob:Batch-pw-2\n",
        passwords={"alice": ["alice-pw-1", "Batch-pw-1"], "bob": ["Batch-pw-2"]}),
    Row("chpasswd-c", ["/usr/sbin/chpasswd", "-c", "SHA512", "-s", "1000"], setup=with_bob,
        input="alice:Batch-pw-1\nbob:Batch-pw-2\n",
        passwords={"alice": ["alice-pw-1", "Batch-pw-1"], "bob": ["Batch-pw-2"]}),
    Row("passwd-root-stdin", ["/usr/bin/passwd", "--stdin", "alice"], setup=with_pam,
        input="Root-set-pw-1\n", recover=None,
        passwords={"alice": ["alice-pw-1", "Root-set-pw-1"]}),
    Row("passwd-user-pam", ["/usr/bin/passwd", "--stdin"], setup=with_pam, user="alice",
        input="alice-pw-1\nSelf-set-pw-1\n", recover=None,
        passwords={"alice": ["alice-pw-1", "Self-set-pw-1"]}),
    Row("passwd-l", ["/usr/bin/passwd", "-l", "alice"], recover=None),
    Row("chage", ["/usr/bin/chage", "-M", "30", "-E", "2030-01-02", "alice"], recover=None),
    # root's new shell takes alice out of the proxy: /etc/passwd, then her shell file
    Row("chsh-listed", ["/usr/bin/chsh", "-s", "/bin/sh", "alice"]),
    Row("chsh-restricted", ["/usr/bin/chsh", "-s", "/usr/sbin/nologin", "alice"]),
    Row("chfn", ["/usr/bin/chfn", "-f", "Alice A", "-r", "42", "alice"]),
    Row("pwconv", ["/usr/sbin/pwconv"], classic=True, pending=("alice",)),
    Row("pwunconv", ["/usr/sbin/pwunconv"], pending=("alice",), taken_away=True),
    # The group tools, the batch tools, vipw and the repairs of pwck and grpck.
    Row("groupadd", ["/usr/sbin/groupadd", "grp1"], recover_ok=(0, 9)),
    Row("groupmod-n", ["/usr/sbin/groupmod", "-n", "proj2", "proj"], setup=with_member,
        recover_ok=(0, 6)),
    Row("groupmod-g", ["/usr/sbin/groupmod", "-g", "5001", "proj"], setup=with_primary,),
    Row("groupdel", ["/usr/sbin/groupdel", "proj"], setup=with_member, recover_ok=(0, 6)),
    Row("gpasswd-a", ["/usr/bin/gpasswd", "-a", "alice", "proj"]),
    Row("gpasswd-d", ["/usr/bin/gpasswd", "-d", "alice", "proj"], setup=with_member,
        recover_ok=(0, 3)),
    Row("gpasswd-AM", ["/usr/bin/gpasswd", "-A", "alice", "-M", "alice,bob", "proj"],
        setup=with_bob),
    Row("gpasswd-pw", ["/usr/bin/gpasswd", "proj"], script=GPASSWD_SCRIPT,
        group_passwords={"proj": ["Group-pw-1"]}),
    Row("groupmems-a", ["/usr/sbin/groupmems", "-g", "proj", "-a", "alice"],
        recover_ok=(0, 7)),
    Row("groupmems-d", ["/usr/sbin/groupmems", "-g", "proj", "-d", "alice"],
        setup=with_member, recover_ok=(0, 6)),
    Row("chgpasswd-e", ["/usr/sbin/chgpasswd", "-e"], setup=with_grp2,
        input="proj:%s\ngrp2:%s\n" % (HASH_A, HASH_B)),
    Row("chgpasswd-c", ["/usr/sbin/chgpasswd", "-c", "SHA512", "-s", "1000"],
        setup=with_grp2, input="proj:Group-pw-1\ngrp2:Group-pw-2\n",
        group_passwords={"proj": ["Group-pw-1"], "grp2": ["Group-pw-2"]}),
    Row("newusers", ["/usr/sbin/newusers", "-c", "SHA512", "-s", "1000"],
        input="".join("nu%d:Batch-nu%d:::NU %d:/home/nu%d:/bin/bash\n" % ((i,) * 4)
                      for i in (1, 2, 3)),
        pending=("nu1", "nu2", "nu3"), homes=("/home/nu1", "/home/nu2", "/home/nu3"),
        passwords={"nu%d" % i: ["Batch-nu%d" % i] for i in (1, 2, 3)}, locked_first=True,
        follow=False, complete=True, trace_extra=("fsync",), max_points=44),
    Row("vipw-s-u", ["/usr/sbin/vipw", "-s", "-u", "alice"], setup=with_editor,
        env={"EDITOR": EDITOR + " -s"}, follow=False),
    Row("vipw", ["/usr/sbin/vipw"], setup=with_editor, env={"EDITOR": EDITOR}, follow=False),
    Row("pwck", ["/usr/sbin/pwck", "-q"], setup=with_tree_damage, input="y\n" * 8, rc=2,
        recover_ok=(0, 2), pending=("carol",), broken=PWCK_BROKEN,
        broken_kinds=("missing-dir",), stepwise=True),
    Row("grpck", ["/usr/sbin/grpck"], setup=with_group_damage, input="y\n" * 8, rc=2,
        recover_ok=(0, 2), broken=GRPCK_BROKEN, broken_kinds=("group-mismatch",)),
]


def row_snapshot(sb, row):
    return snapshot(sb, row.homes, row.passwords, row.group_passwords)


KEEP_USERS = {"root", "daemon", "bin", "nobody"}


def trim_accounts(sb):
    """Keep only a few of the host's accounts: every kill point snapshots and checks the
    whole tree, and pwconv's run is as long as the user list."""
    def keep(path, field=0, members=None):
        if not sb.exists(path):
            return
        out = []
        for line in sb.read(path).splitlines():
            f = line.split(":")
            if members is None and f[field] not in KEEP_USERS:
                continue
            for i in members or ():
                f[i] = ",".join(m for m in f[i].split(",") if m in KEEP_USERS)
            out.append(":".join(f))
        st = sb.lstat(path)
        sb.write(path, "".join(l + "\n" for l in out), mode=stat.S_IMODE(st.st_mode),
                 uid=st.st_uid, gid=st.st_gid)
    keep("/etc/passwd")
    keep("/etc/shadow")
    keep("/etc/group", members=(3,))
    keep("/etc/gshadow", members=(2, 3))
    for f in ("/etc/passwd-", "/etc/shadow-", "/etc/group-", "/etc/gshadow-"):
        if sb.exists(f):
            os.unlink(_host(sb, f))


def prepare(sb, row):
    trim_accounts(sb)
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.run([CLASSIC_GROUPADD, "-g", "5000", "proj"])
    if not row.classic:
        sb.use_hardened_tree()
    if row.setup:
        row.setup(sb)


class Failures:
    """Everything that went wrong in one row, reported together at the end."""

    def __init__(self, row):
        self.row = row
        self.items = []
        self.known = {}
        self.step = None
        self.known_here = ()
        self.what_prefix = ""

    def at(self, step, known_points):
        self.step = step
        self.known_here = [k for k, pts in known_points if id(step) in pts]

    def add(self, what, details):
        ks = [k for k in self.known_here if k.whats is None or what.startswith(k.whats)]
        if ks:
            for k in ks:
                self.known[k.name] = self.known.get(k.name, 0) + 1
            return
        self.items.append("%s%s after a kill at\n    %s\n  %s" % (
            self.what_prefix, what, self.step[2], "\n  ".join(details)))

    def check(self, points):
        for name, n in self.known.items():
            print("%s: %d failures of the known bug: %s" % (self.row.id, n, name))
        if self.items:
            pytest.fail("%s: %d of %d kill points failed:\n%s" % (
                self.row.id, len(self.items), points, "\n".join(self.items[:6])))


def unexpected(row, rep, allow, old_state=True):
    """rep.unexpected(allow), with what the row's old state has on purpose (see
    Row.broken) when old_state."""
    if not old_state:
        return rep.unexpected(allow)
    return [b for b in rep.unexpected(set(allow) | row.broken_kinds)
            if not any(r.search(b) for r in row.broken)]


# A tool that takes the global locks (and so runs the recovery) and then changes nothing:
# the group exists (exit 9).
NEXT_TOOL = (["/usr/sbin/groupadd", "proj"], 9)
# What may stay once the recovery has run: no reserved directory, journal or staged file.
AFTER_RECOVERY = frozenset({"stale-lock", "temp-file", "dangling-subid"})


def check_next_tool(sb, row, old, new, fails):
    """Row.complete: run NEXT_TOOL, then the state must be the complete old or the complete
    new one, homes and tree directories included, nothing half-done left anywhere."""
    rr = run(sb, NEXT_TOOL[0])
    if rr.returncode != NEXT_TOOL[1]:
        fails.add("the next locking tool exited %s" % rr.returncode, [rr.stderr])
        return
    cur = row_snapshot(sb, row)
    to_old, to_new = same_as(cur, old), same_as(cur, new, locked_first=row.locked_first)
    if to_old and to_new:
        fails.add("the next locking tool left neither the complete old nor the complete "
                  "new state", ["vs old: " + x for x in to_old[:4]] +
                  ["vs new: " + x for x in to_new[:4]] + [rr.stderr])
    left = [p for p in cur if _is_leftover_path(p) and not p.startswith("/etc/") or
            p.startswith(TREE + "/.")]
    bad = consistency.check(sb).unexpected(AFTER_RECOVERY)
    if left or bad:
        fails.add("the next locking tool left work half-done", left[:6] + bad + [rr.stderr])


def check_kill(sb, row, old, new, fails, sigint=False, atomic=False):
    """The checks (a) to (d) of the module's docstring after one kill (with sigint: the
    state must be exactly the old or the new one).  atomic: the global files must be all
    old or all new (see journaled()).  Returns the last snapshot when it is still the
    root's state (restore() needs one), else None."""
    homes = row.homes
    cur = row_snapshot(sb, row)
    bad = compare_old_or_new(old, new, cur, homes, row.taken_away, row.locked_first, atomic)
    if bad:
        fails.add("neither the old nor the new state", bad)
    rep = consistency.check(sb, pending=row.pending)
    bad = unexpected(row, rep, consistency.CRASH_LEFTOVERS)
    if bad:
        fails.add("inconsistent", bad)
    bad = locks_free(sb, row.pending or ("alice",))
    if bad:
        fails.add("a lock is held", bad)
    if row.recover is None or sigint:
        at_old = not same_as(cur, old, homes, False)
        if row.stepwise and sigint:
            bad = unexpected(row, rep, {"stale-lock"})
            if bad:
                fails.add("an intermediate state", bad)
            return cur
        if not at_old and same_as(cur, new, homes, False):
            fails.add("a third state", same_as(cur, new, homes, False))
        bad = unexpected(row, rep, consistency.GARBAGE, at_old)
        if bad:
            fails.add("an intermediate state", bad)
        return cur
    if row.complete:
        check_next_tool(sb, row, old, new, fails)
    t0 = time.monotonic()
    argv = row.argv if row.recover == "rerun" else row.recover
    rr = run(sb, argv, input=row.input, user=row.user, env=row.env, script=row.script)
    took = time.monotonic() - t0
    if rr.returncode not in row.recover_ok or took > RECOVERY_LIMIT:
        fails.add("recovery %s exited %s after %.1f s" % (argv, rr.returncode, took),
                  [rr.stdout + rr.stderr, str(rep)])
        return None
    after = row_snapshot(sb, row)
    bad = same_as(after, new, () if row.complete or row.recover_homes else homes,
                  locked_first=row.locked_first)
    if bad:
        fails.add("recovery did not reach the new state", bad + [rr.stderr])
    bad = consistency.check(sb).unexpected(consistency.GARBAGE)
    if bad:
        fails.add("recovery left an inconsistent state", bad)
    return after


def start(sb, row):
    """Prepare the root; record the steps; the states before (as is, for restore, and
    normalised) and after."""
    prepare(sb, row)
    raw = snapshot(sb, row.homes)
    old = row_snapshot(sb, row)
    bad = unexpected(row, consistency.check(sb), consistency.TOLERATED)
    assert not bad, "before %s: inconsistent account state:\n  %s" % (row.id, "\n  ".join(bad))
    if row.broken or row.broken_kinds:
        assert consistency.check(sb).unexpected(consistency.TOLERATED), \
            "before %s: nothing is broken for the repair" % row.id
    steps = record_steps(sb, row)
    assert steps, "%s: no step recorded" % row.id
    new = row_snapshot(sb, row)
    consistency.assert_consistent(sb, context="after " + row.id)
    assert same_as(new, old, row.homes), "%s changed nothing" % row.id
    return raw, old, new, steps


def params(rows):
    return [pytest.param(r, id=r.id) for r in rows]


# (the journal is linked whole to its name, or renamed over one a recovery left)
_JOURNAL_STEP = re.compile(r'(rename\w*\(\d+</etc>, "\.\.hardened-shadow\.txn\.\w+"'
                           r'|linkat\(.*), \d+</etc>, "\.hardened-shadow\.txn"')
# A global file replaced or removed outside the transaction (pwconv removes /etc/shadow
# after its commit, on purpose: its marker covers that step).
_DIRECT_STEP = re.compile(r'rename\w*\(\d+</etc>, "\.(passwd|shadow|group|gshadow|subuid|subgid)'
                          r'\.\w{12}", \d+</etc>, "(passwd|shadow|group|gshadow|subuid|subgid)"'
                          r'|unlink\w*\(\d+</etc>, "(passwd|shadow|group|gshadow|subuid|subgid)"')


# A staged copy made at its fixed name (lib/txn): a journal written before the first
# one is a prepared journal (useradd -m, newusers), not a commit.
_STAGED_STEP = re.compile(r'open\w*\(\d+</etc>, "\.(passwd|shadow|group|gshadow|subuid|subgid'
                          r'|shells)\.hs-txn", [^)]*O_CREAT')


def journaled(steps):
    """Does the command write the global files in exactly one lib/txn transaction (one
    journal after the staged copies, no global file replaced on its own)?  Then they
    must change all at once."""
    commits, staged = 0, False
    for s in steps:
        staged = staged or bool(_STAGED_STEP.search(s[2]))
        commits += staged and bool(_JOURNAL_STEP.search(s[2]))
    return commits == 1 and not any(_DIRECT_STEP.search(s[2]) for s in steps)


@pytest.mark.parametrize("row", params(ROWS))
def test_interrupt_at_every_step(sb, row):
    """SIGKILL on entering every step (up to MAX_POINTS), then SIGINT on entering a few
    steps spread over the run: signals are blocked around the commit, so a SIGINT leaves
    exactly the old or the new state (stale locks aside)."""
    raw, old, new, steps = start(sb, row)
    points = sample(steps, row.max_points, every_kind=row.complete)
    atomic = journaled(steps)
    known = [(k, k.points(steps)) for k in row.known if not k.sigint]
    known_sigint = [(k, k.points(steps)) for k in row.known if k.sigint]
    fails = Failures(row)
    cur = new
    for step in points:
        restore(sb, raw, cur or snapshot(sb, row.homes))
        r = inject(sb, row, step, "SIGKILL")
        assert r.returncode == -9, "%s: not killed at %s (exit %s)\n%s" % (
            row.id, step[2], r.returncode, r.stderr)
        fails.at(step, known)
        cur = check_kill(sb, row, old, new, fails, atomic=atomic)
    for step in _spread(steps, SIGINT_POINTS):
        restore(sb, raw, cur or snapshot(sb, row.homes))
        r = inject(sb, row, step, "SIGINT")
        assert r.returncode in (-2, row.rc), "%s: exit %s after SIGINT at %s\n%s" % (
            row.id, r.returncode, step[2], r.stderr)
        fails.at(step, known_sigint)
        fails.what_prefix = "SIGINT: "
        cur = check_kill(sb, row, old, new, fails, sigint=True, atomic=atomic)
    print("%s: %d steps, %d kill points%s" % (row.id, len(steps), len(points),
                                              ", one transaction" if atomic else ""))
    fails.check(len(points) + SIGINT_POINTS)
    sb.syslog(clear=True)


# ---------------------------------------------------------------- the known bugs

def row(id):
    return next(r for r in ROWS if r.id == id)


def kill_at(sb, r, pattern, sig="SIGKILL"):
    """Prepare r, then run it again interrupted on entering the first step matching
    pattern."""
    raw, old, new, steps = start(sb, r)
    step = next((s for s in steps if re.search(pattern, s[2])), None)
    if step is None:
        raise LookupError("%s: no step matches %s (has the window moved?)" % (r.id, pattern))
    restore(sb, raw, snapshot(sb, r.homes))
    res = inject(sb, r, step, sig)
    assert res.returncode == -int(getattr(__import__("signal"), sig)), res
    return old, new


def test_useradd_killed_before_passwd_is_finished_by_a_rerun(sb):
    """src/admin/useradd.c commits /etc/subuid, /etc/subgid, /etc/gshadow, /etc/group (with the
    private group bob), then /etc/passwd.  SIGKILL on entering the renameat() of the new
    /etc/passwd: everything but the passwd line is in place (and the locked directory
    /etc/hardened-shadow/bob).  The same useradd again must finish the account; it exits
    9, 'group bob exists - if you want to add this user to that group, use -g.', and the
    name stays unusable until an administrator removes the group by hand."""
    r = row("useradd")
    old, new = kill_at(sb, r, GROUP_BEFORE_PASSWD.upto.pattern)
    res = run(sb, r.argv)
    # 9 ('user bob exists') is right when a lib/txn journal finished the account first
    assert res.returncode in (0, 9), res.stderr
    assert not same_as(row_snapshot(sb, r), new), res.stderr
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def test_usermod_l_killed_after_passwd_is_finished_by_a_rerun(sb):
    """src/admin/usermod.c renames the directory to .usermod-l.alice2, writes /etc/passwd (now
    alice2), then renames it to alice2 and hands it back.  SIGKILL on entering that last
    renameat2(): /etc/passwd has alice2 (shell: the proxy) and no directory alice2, so
    alice2 cannot log in.  Running the same `usermod -l alice2 alice` again exits 6 ('user
    'alice' does not exist') before recover_rename() is reached (it only runs when the
    name given is the new one and -l is absent), and leaves the directory reserved; the
    same after a kill on the final fchown(), which leaves alice2 root:root 0700."""
    r = row("usermod-l")
    kill_at(sb, r, r'renameat2\(\d+</etc/hardened-shadow>, "\.usermod-l\.alice2"'
                   r', \d+</etc/hardened-shadow>, "alice2"')
    run(sb, r.argv)
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)
    st = os.lstat(_host(sb, TREE + "/alice2"))
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (sb.getpwnam("alice2").uid, 0o2710)


def test_usermod_u_killed_between_chown_and_chmod_is_repaired_by_a_rerun(sb):
    """src/admin/usermod.c hands a directory back with fchown(dir, uid, auth) then
    fchmod(dir, 02710).  SIGKILL on entering the fchmod(): /etc/passwd has the new uid,
    the directory is alice:hardened-shadow-auth 0700 (no setgid bit, so files written by
    the user's own tools get the wrong group; the auth group cannot enter).  A rerun of
    `usermod -u 2345 alice` finds nothing to do (the uid is already 2345) and only hands
    back directories owned by root, so the mode stays 0700 for good.  (Setting the mode
    first, while still root's, then chown -- which keeps the setgid bit of a directory --
    closes the window.)"""
    r = row("usermod-u")
    kill_at(sb, r, HAND_BACK.upto.pattern)
    res = run(sb, r.argv)
    assert res.returncode == 0, res.stderr
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def steps_between(steps, after, upto):
    """The steps after the first one matching `after`, up to the first one matching
    `upto` (included)."""
    i = next(i for i, s in enumerate(steps) if re.search(after, s[2]))
    out = []
    for s in steps[i + 1:]:
        out.append(s)
        if re.search(upto, s[2]):
            return out
    raise LookupError("no step matches %s after %s" % (upto, after))


def home_owners(sb, home):
    """{path: (uid, gid, mode)} of home and everything below it."""
    out = {}
    for path, e in snapshot(sb, (home,)).items():
        if path == home or path.startswith(home + "/"):
            out[path] = e[1:4]
    return out


# the walk of usermod -u: the first file of the home given the new uid
HOME_WALK = r'fchownat\(\d+</home/alice/[^>]+>, "", 2345,'


@pytest.mark.parametrize("rerun", [["/usr/sbin/usermod", "-u", "2345", "alice"],
                                   ["/usr/sbin/usermod", "-g", "GID", "alice"]],
                         ids=["same", "other"])
def test_usermod_u_killed_after_passwd_before_the_walk_is_finished_by_a_rerun(sb, rerun):
    """src/admin/usermod.c wrote /etc/passwd (alice now 2345), handed the tree directory
    back and released the locks, and only then took the home away and marked it
    (trusted.hardened-shadow.home-taken) for the walk.  SIGKILL at any step in between:
    every file of /home/alice and the spool kept the old uid, free for the next useradd,
    which got alice's whole home, and nothing said so; the same `usermod -u 2345 alice`
    again found the uid already 2345 and did nothing.  Now the home is taken away and
    marked before the commit: the same usermod again (or any usermod that works on the
    home: -g here) finishes the walk."""
    r = row("usermod-u")
    raw, old, new, steps = start(sb, r)
    want = home_owners(sb, "/home/alice")
    assert want and all(v[0] == 2345 for v in want.values()), want
    points = steps_between(steps, installs("passwd"), HOME_WALK)
    cur = new
    bad = []
    for step in points:
        restore(sb, raw, cur)
        res = inject(sb, r, step, "SIGKILL")
        assert res.returncode == -9, (step[2], res.stderr)
        assert sb.getpwnam("alice").uid == 2345, step[2]
        rr = run(sb, [str(sb.getpwnam("alice").gid) if a == "GID" else a for a in rerun])
        assert rr.returncode == 0, (step[2], rr.stderr)
        got = home_owners(sb, "/home/alice")
        if got != want or sb.lstat("/var/mail/alice").st_uid != 2345:
            bad.append("%s: %s" % (step[2], sorted(set(got.items()) - set(want.items()))[:3]))
        consistency.assert_consistent(sb, allow=consistency.GARBAGE)
        cur = snapshot(sb, r.homes)
    assert not bad, "\n".join(bad)


def test_usermod_u_killed_before_passwd_is_handed_back_by_any_usermod(sb):
    """usermod -u now takes the home away and marks it before /etc/passwd is written.
    SIGKILL on entering the install of the new /etc/passwd: alice keeps her uid, her home
    is root's 0700 with the mark.  Any usermod that works on the home (here -g) hands it
    back as it was, her files untouched, the mark gone."""
    r = row("usermod-u")
    raw, old, new, steps = start(sb, r)
    restore(sb, raw, new)
    uid = sb.getpwnam("alice").uid
    want = home_owners(sb, "/home/alice")
    step = next(s for s in steps if re.search(installs("passwd"), s[2]))
    assert inject(sb, r, step, "SIGKILL").returncode == -9
    assert sb.getpwnam("alice").uid == uid
    st = sb.lstat("/home/alice")
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)
    # a usermod that does not work on the home leaves it alone (a dead NFS home must not
    # hang usermod -c); one that does (-g, even to the same group) hands it back
    rr = run(sb, ["/usr/sbin/usermod", "-c", "any change", "alice"])
    assert rr.returncode == 0, rr.stderr
    assert sb.lstat("/home/alice").st_uid == 0
    rr = run(sb, ["/usr/sbin/usermod", "-g", str(sb.getpwnam("alice").gid), "alice"])
    assert rr.returncode == 0, rr.stderr
    assert home_owners(sb, "/home/alice") == want, rr.stderr
    assert sb.lstat("/var/mail/alice").st_uid == uid
    assert not [a for a in os.listxattr(_host(sb, "/home/alice")) if "hardened" in a]
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def test_usermod_d_m_killed_between_rename_and_commit_is_finished_by_a_rerun(sb):
    """src/admin/usermod.c renames /home/alice to /home/alice2, then commits /etc/passwd.
    SIGKILL at the first step after the rename: the home is at /home/alice2 and
    /etc/passwd names /home/alice.  The same `usermod -d /home/alice2 -m alice` again
    said 'The previous home directory (/home/alice) does not exist; not moving it' (as
    if the home were lost) and only then wrote /etc/passwd.  It now sees the home already
    moved, says it finishes the move and names /home/alice2."""
    r = row("usermod-d-m")
    raw, old, new, steps = start(sb, r)
    i = next(i for i, s in enumerate(steps)
             if re.search(r'rename\w*\(\d+</home>, "alice", \d+</home>, "alice2"', s[2]))
    restore(sb, raw, new)
    res = inject(sb, r, steps[i + 1], "SIGKILL")
    assert res.returncode == -9, res.stderr
    assert sb.getpwnam("alice").home == "/home/alice"
    assert sb.exists("/home/alice2/sub/deep") and not sb.exists("/home/alice")
    rr = run(sb, r.argv)
    assert rr.returncode == 0, rr.stderr
    assert rr.stderr == ("usermod: finishing the interrupted move of the home directory "
                         "/home/alice to /home/alice2\n"), rr.stderr
    assert sb.getpwnam("alice").home == "/home/alice2"
    assert not same_as(row_snapshot(sb, r), new, ())
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def test_pwconv_interrupted_by_sigint_leaves_no_temporary_tree(sb):
    """(Was a known bug.)  src/convert/convert.c builds /etc/.hardened-shadow.XXXXXX (one directory
    per user, every hash); signals used to be blocked only from its rename into place on,
    so a SIGINT (Ctrl-C) on the first fchown() inside the temporary tree killed pwconv and
    left that root-only copy of every hash until the next run.  Now they wait from the
    build on: the conversion completes, then the SIGINT ends pwconv, and nothing of the
    temporary tree remains."""
    r = row("pwconv")
    old, new = kill_at(sb, r, r"fchown\(\d+</etc/\.hardened-shadow\.\w+/", "SIGINT")
    assert not [n for n in os.listdir(_host(sb, "/etc"))
                if consistency.CONVERT_TMP_RE.match(n)]
    assert not same_as(row_snapshot(sb, r), new)


def test_groupmod_g_killed_before_passwd_is_finished_by_a_rerun(sb):
    """src/admin/groupmod.c (lib/accountset) writes /etc/group with proj's new gid 5001, then
    /etc/passwd with bob's primary gid moved from 5000 to 5001.  SIGKILL on entering the
    renameat() of the new /etc/passwd: bob's gid is 5000, a group that no longer exists
    (his files' group is now a bare number to every tool).  The same `groupmod -g 5001
    proj` again sees proj at 5001 already, moves the users whose gid is 5001 (none) and
    exits 0: bob stays on 5000 for good.  (Fix: one lib/txn transaction over both files,
    or /etc/passwd first: then a kill leaves bob on 5001 and the rerun moves proj there.)"""
    r = row("groupmod-g")
    kill_at(sb, r, GROUPMOD_G_PASSWD.upto.pattern)
    res = run(sb, r.argv)
    assert res.returncode == 0, res.stderr
    assert sb.getpwnam("bob").gid == 5001
    consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def test_newusers_killed_before_passwd_is_finished_by_a_rerun(sb):
    """src/admin/newusers.c makes the homes and the tree directories (hash "!"), then writes
    /etc/subuid, /etc/subgid, /etc/gshadow, /etc/group (the private groups nu1..nu3) and
    /etc/passwd one after the other.  SIGKILL on entering the renameat() of the new
    /etc/group: gshadow has the groups, group does not; the same newusers again exits 1
    ('group 'nu1' is a shadow group, but does not exist in /etc/group').  SIGKILL on
    entering the renameat() of /etc/passwd: the groups exist; the rerun exits 1 ('group
    'nu1' already exists (name it in the group field ...)').  Either way nothing more
    happens: the names stay taken by orphan locked directories, private groups and
    subordinate ranges until an administrator removes them by hand.  (Fix: one lib/txn
    transaction over the global files; or let a rerun adopt what the same batch left:
    an empty group named after a user that has no passwd line but an orphan directory.)"""
    r = row("newusers")
    raw, old, new, steps = start(sb, r)
    for pattern in (installs("group"),
                    NEWUSERS_GROUPS_FIRST.upto.pattern):
        step = next((s for s in steps if re.search(pattern, s[2])), None)
        if step is None:
            raise LookupError("newusers: no step matches %s" % pattern)
        restore(sb, raw, snapshot(sb, r.homes))
        assert inject(sb, r, step, "SIGKILL").returncode == -9
        res = run(sb, r.argv, input=r.input)
        assert res.returncode == 0, res.stderr
        assert not same_as(row_snapshot(sb, r), new, r.homes, locked_first=True)
        consistency.assert_consistent(sb, allow=consistency.GARBAGE)


def test_pwck_interrupted_by_sigint_does_not_leave_half_a_repair(sb):
    """src/check/integrity.c (pwck without -r, answered y) makes a missing user directory through
    hs_userdir_create: .new.carol.XXXXXXXXXXXX, its three files, rename to carol, hand
    over.  pwck blocks signals only around the commit of the global files at the end
    (src/check/pwck.c), not around the tree repairs.  A SIGINT (the administrator's ^C) on
    entering the linkat() of carol's new shadow file kills pwck there: the reserved
    directory stays (garbage: the next pwck offers to remove it) and carol still has no
    directory.  (Fix: hs_privs_block_signals around each tree repair.)"""
    r = row("pwck")
    kill_at(sb, r, r'linkat\(\d+</etc/hardened-shadow/\.new\.carol\.', "SIGINT")
    left = [e for e in os.listdir(_host(sb, TREE)) if consistency.RESERVED_RE.match(e)]
    assert not left, left


# ---------------------------------------------------------------- the checker itself

def test_checker_sees_what_it_must(sb):
    """consistency.check on damage planted by hand: each is found, as a problem or as the
    right leftover kind, and a clean root has neither."""
    prepare(sb, row("useradd"))
    consistency.assert_consistent(sb, strict_subids=True)
    auth = sb.getgrnam("hardened-shadow-auth")[1]
    alice = sb.getpwnam("alice")

    def found(kind=None):
        rep = consistency.check(sb)
        return rep.problems if kind is None else [t for k, t in rep.leftovers if k == kind]

    def plant_dir(name, hash_, uid):
        d = _host(sb, TREE + "/" + name)
        os.mkdir(d)
        for f, owner, mode, text in (("shadow", uid, 0o640, hash_ + ":1:\n"),
                                     ("shell", uid, 0o640, "/bin/sh\n"),
                                     ("aging", 0, 0o644, "-1:-1:-1:-1:-1:\n")):
            with open(os.path.join(d, f), "w") as fh:
                fh.write(text)
            os.chown(os.path.join(d, f), owner, auth)
            os.chmod(os.path.join(d, f), mode)
        os.chown(d, uid, auth)
        os.chmod(d, 0o2710)

    plant_dir("ghost", "!", 4242)
    assert found("orphan-dir") and not found()
    plant_dir("ghost2", "$6$x$y", 4243)
    assert any("ghost2 has no passwd line and a usable hash" in p for p in found())
    shutil.rmtree(_host(sb, TREE + "/ghost2"))
    os.chmod(_host(sb, TREE + "/alice/shadow"), 0o644)
    assert any("alice/shadow" in p for p in found())
    os.chmod(_host(sb, TREE + "/alice/shadow"), 0o640)
    os.rename(_host(sb, TREE + "/alice"), _host(sb, TREE + "/.usermod-l.alice"))
    assert any("proxy but" in p for p in found())
    assert found("rename-pending")
    assert not consistency.check(sb, pending=("alice",)).problems
    os.rename(_host(sb, TREE + "/.usermod-l.alice"), _host(sb, TREE + "/alice"))
    os.chown(_host(sb, TREE + "/alice"), 0, 0)
    os.chmod(_host(sb, TREE + "/alice"), 0o700)
    assert found("taken-away") and not found()
    os.chown(_host(sb, TREE + "/alice"), alice.uid, auth)
    os.chmod(_host(sb, TREE + "/alice"), 0o2710)
    with open(_host(sb, TREE + "/alice/planted"), "w"):
        pass
    assert any("planted: unexpected entry" in p for p in found())
    os.unlink(_host(sb, TREE + "/alice/planted"))
    shutil.rmtree(_host(sb, TREE + "/ghost"))
    consistency.assert_consistent(sb, strict_subids=True)

    saved = {p: sb.read_bytes(p) for p in ("/etc/passwd", "/etc/group", "/etc/gshadow")}
    sb.write("/etc/gshadow", saved["/etc/gshadow"].decode() + "extra:!::\n", mode=0o640,
             gid=sb.getgrnam("shadow")[1])
    assert found("group-mismatch")
    sb.write("/etc/group", saved["/etc/group"].decode().replace(
        "proj:x:5000:", "proj:x:5000:nosuch"))
    assert found("dangling-member")
    sb.write("/etc/passwd", saved["/etc/passwd"].decode() + "alice:x:1:1::/:/bin/sh\n")
    assert any("duplicate name 'alice'" in p for p in found())
    sb.write("/etc/passwd", saved["/etc/passwd"].decode() + "broken:x:1\n")
    assert any("fields" in p for p in found())
    sb.write("/etc/passwd", saved["/etc/passwd"])
    sb.write("/etc/group", saved["/etc/group"])
    sb.write("/etc/gshadow", saved["/etc/gshadow"], mode=0o640, gid=sb.getgrnam("shadow")[1])

    holder = sb.popen(["sleep", "60"])        # a live process of the root's own
    sb.write("/etc/passwd.lock", "%d\0" % sb.ns_pid(holder.pid), mode=0o600)
    held = found()
    holder.kill()
    holder.wait()
    assert any("held by running process" in p for p in held)
    sb.write("/etc/passwd.lock", "999999999\0", mode=0o600)
    assert found("stale-lock") and not found()
    os.unlink(_host(sb, "/etc/passwd.lock"))
    consistency.assert_consistent(sb, strict_subids=True)


def _journal_line(sb, base):
    st = os.lstat(_host(sb, "/etc/" + base))
    stamps = ["%d.%09d" % divmod(ns, 10**9) for ns in (st.st_mtime_ns, st.st_ctime_ns)]
    return "%s %d %d %d %s %s\n" % (base, st.st_dev, st.st_ino, st.st_size, *stamps)


def test_checker_judges_transactions(sb):
    """lib/txn's leftovers planted by hand: staged files without a journal are the old
    state (txn-stale); a journal with its staged files is the new state, read from the
    staged files (txn-pending); a journal that the next tool could not finish as written
    is a problem."""
    prepare(sb, row("useradd"))
    etc = _host(sb, "/etc")

    def found(kind=None):
        rep = consistency.check(sb)
        return rep.problems if kind is None else [t for k, t in rep.leftovers if k == kind]

    def plant(name, text, mode=0o600):
        with open(os.path.join(etc, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(etc, name), mode)

    group, gshadow = sb.read("/etc/group"), sb.read("/etc/gshadow")
    # never committed: whatever the staged file holds is not read
    plant(".group.hs-txn", "not a group file\n")
    plant("..gshadow.hs-txn.AbCdEfGhIjKl", "")
    assert found("txn-stale") and found("temp-file") and not found()
    os.unlink(os.path.join(etc, "..gshadow.hs-txn.AbCdEfGhIjKl"))
    # committed: the next tool installs both; read as it will see them
    plant(".group.hs-txn", group + "newgrp:x:6000:alice\n", 0o644)
    plant(".gshadow.hs-txn", gshadow + "newgrp:!::alice\n", 0o640)
    journal = consistency.TXN_HEADER.decode() + _journal_line(sb, "gshadow") + \
        _journal_line(sb, "group")
    plant(consistency.TXN_JOURNAL, journal)
    assert found("txn-pending") and not found() and not found("group-mismatch")
    assert not found("txn-stale")
    # gshadow installed already (its staged file renamed over it): still pending
    os.rename(os.path.join(etc, ".gshadow.hs-txn"), os.path.join(etc, "gshadow"))
    assert found("txn-pending") and not found() and not found("group-mismatch")
    # a journal naming only group: the staged gshadow is not read
    plant(".gshadow.hs-txn", gshadow + "newgrp:!::alice\n", 0o640)
    sb.write("/etc/gshadow", gshadow, mode=0o640, gid=sb.getgrnam("shadow")[1])
    plant(consistency.TXN_JOURNAL, consistency.TXN_HEADER.decode() +
          _journal_line(sb, "group"))
    assert found("group-mismatch") and found("txn-stale") and not found()
    os.unlink(os.path.join(etc, ".gshadow.hs-txn"))
    # /etc/group replaced since: the next tool would drop the staged file
    sb.write("/etc/group", group)
    assert any("no longer the file" in p for p in found())
    # the staged file gone but the target never replaced: the change is lost
    plant(consistency.TXN_JOURNAL, consistency.TXN_HEADER.decode() +
          _journal_line(sb, "group"))
    os.unlink(os.path.join(etc, ".group.hs-txn"))
    assert any("change to it is lost" in p for p in found())
    # a journal that does not parse, or that is not root's 0600
    plant(consistency.TXN_JOURNAL, "hardened-shadow transaction 2\n")
    assert any("does not parse" in p for p in found())
    plant(consistency.TXN_JOURNAL, consistency.TXN_HEADER.decode(), 0o644)
    assert any("root-owned 0600" in p for p in found())
    os.unlink(os.path.join(etc, consistency.TXN_JOURNAL))
    consistency.assert_consistent(sb, strict_subids=True)


def test_state_comparison_sees_through_a_pending_transaction():
    """compare_old_or_new on hand-made snapshots: with a journal the staged files count,
    and atomic demands all the global files old or all new."""
    def f(data, mode=0o644):
        return (stat.S_IFREG, 0, 0, mode, data)
    old = {"/etc/passwd": f(b"p1\n"), "/etc/group": f(b"g1\n")}
    new = {"/etc/passwd": f(b"p2\n"), "/etc/group": f(b"g2\n")}
    mixed = {"/etc/passwd": f(b"p1\n"), "/etc/group": f(b"g2\n")}
    assert not compare_old_or_new(old, new, mixed, (), False)
    assert compare_old_or_new(old, new, mixed, (), False, atomic=True)
    assert not compare_old_or_new(old, new, old, (), False, atomic=True)
    journal = consistency.TXN_HEADER + b"passwd 1 2 3 4.000000000 5.000000000\n"
    pending = dict(mixed)
    pending["/etc/" + consistency.TXN_JOURNAL] = f(journal, 0o600)
    pending["/etc/.passwd.hs-txn"] = f(b"p2\n")
    assert not compare_old_or_new(old, new, pending, (), False, atomic=True)
    pending["/etc/.passwd.hs-txn"] = f(b"p3\n")
    assert compare_old_or_new(old, new, pending, (), False)
    stale = dict(old)
    stale["/etc/.passwd.hs-txn"] = f(b"p2\n")
    assert not compare_old_or_new(old, new, stale, (), False, atomic=True)


def test_chpasswd_pam_interrupted_by_sigint_changes_all_or_none(sb):
    """(Was a known bug.)  src/admin/chpasswd.c, PAM path: pam_chauthtok() per user.  Signals
    used to be blocked only on the direct path, so a SIGINT on entering the linkat() of
    bob's new shadow file (alice's already in place) left alice changed and bob not.  Now
    SIGINT, SIGTERM, SIGHUP and SIGQUIT wait until the batch is over on the PAM path too:
    all or none."""
    r = row("chpasswd-pam")
    old, new = kill_at(sb, r, r"linkat\(\d+</etc/hardened-shadow/bob/", "SIGINT")
    cur = row_snapshot(sb, r)
    assert not same_as(cur, old) or not same_as(cur, new), same_as(cur, new)


def test_useradd_m_killed_after_its_commit_point_is_finished_or_said(sb):
    """useradd -m killed on entering the rename of its built home into place (after the
    commit point): groupadd (any root tool that takes the locks) finishes it and says so.
    If something took the home's name meanwhile, it says that it cannot, removes the copy
    and leaves the other directory alone."""
    r = row("useradd-m")
    pattern = r'renameat2\(\d+</home>, "\.new\.bob\.\w+", \d+</home>, "bob"'
    old, new = kill_at(sb, r, pattern)
    res = run(sb, NEXT_TOOL[0])
    assert res.returncode == NEXT_TOOL[1], res.stderr
    assert "finished creating /home/bob" in res.stderr, res.stderr
    assert not same_as(row_snapshot(sb, r), new), same_as(row_snapshot(sb, r), new)
    # again, with /home/bob made by someone else before the recovery
    raw = snapshot(sb, r.homes)
    restore(sb, old, raw)
    steps = record_steps(sb, r)
    restore(sb, old, snapshot(sb, r.homes))
    step = next(s for s in steps if re.search(pattern, s[2]))
    assert inject(sb, r, step, "SIGKILL").returncode == -9
    os.mkdir(_host(sb, "/home/bob"), 0o755)
    res = run(sb, NEXT_TOOL[0])
    assert "cannot finish creating /home/bob: something else has that name now" in \
        res.stderr, res.stderr
    assert os.listdir(_host(sb, "/home/bob")) == []
    assert not [n for n in os.listdir(_host(sb, "/home")) if n.startswith(".new.")]
    assert sb.getpwnam("bob").home == "/home/bob"
