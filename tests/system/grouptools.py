"""Helpers shared by the system tests of the group tools (groupadd, groupmod, groupdel,
gpasswd, groupmems, chgpasswd) and of the password batches (chpasswd, newusers).

Those modules share one sandbox per module: its set-up ends with save(), and every test
starts from restore()."""

import contextlib
import ctypes
import os
import subprocess

import pytest

import sandbox

CLASSIC_GROUPADD = sandbox.CLASSIC_TOOLS_DIR + "/groupadd"

_libcrypt = ctypes.CDLL("libcrypt.so.1")
_libcrypt.crypt.restype = ctypes.c_char_p
_libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def verify(password, hash_):
    """Does password match hash_ (libxcrypt's verdict; a locked or empty hash never does)?"""
    if not hash_ or hash_[0] in "!*":
        return False
    out = _libcrypt.crypt(password.encode(), hash_.encode())
    return out is not None and out.decode() == hash_


def fixtures(set_up, files, tree=False):
    """A module's fixtures: msb, its one sandbox, made by set_up(sb) and then saved
    (save(sb, files)), and sb, that sandbox as every test starts with it (restore())."""
    @pytest.fixture(scope="module")
    def msb(base):
        with sandbox.Sandbox(base, size="256m") as sb:
            set_up(sb)
            save(sb, files)
            yield sb

    @pytest.fixture
    def sb(msb):
        """The module's sandbox with its account files as they were after set-up."""
        return restore(msb, tree)

    return msb, sb


@contextlib.contextmanager
def bind_mounted(path, read_only=False):
    """path (on the host) bind-mounted on itself for the with block: a rename over it
    fails; with read_only, so does every write below it, root's too."""
    sandbox._mount(path, path, flags=4096)                           # MS_BIND
    try:
        if read_only:
            sandbox._mount(None, path, flags=4096 | 32 | 1)          # MS_BIND|MS_REMOUNT|MS_RDONLY
        yield
    finally:
        subprocess.run(["umount", path], check=True)


def save(sb, files):
    """Remember the files' contents and modes as they are after the module's set-up."""
    sb._hs_saved = {p: (sb.read_bytes(p), sb.lstat(p)) for p in files}


def restore(msb, tree=False):
    """The module's sandbox with its saved files as they were after set-up, without the
    lock files and backups a test left (names the tools make; no process spawned), without
    an empty /etc/hardened-shadow when tree (tests make one to protect the tree's groups),
    and with an empty syslog."""
    for p, (data, st) in msb._hs_saved.items():
        msb.write(p, data, mode=st.st_mode & 0o7777, uid=st.st_uid, gid=st.st_gid)
    etc = msb.root + "/etc"
    for f in os.listdir(etc):
        full = os.path.join(etc, f)
        if f.endswith((".lock", "-")) and os.path.isfile(full) and not os.path.islink(full):
            os.unlink(full)
    if tree and os.path.isdir(etc + "/hardened-shadow"):
        os.rmdir(etc + "/hardened-shadow")
    msb.syslog(clear=True)
    return msb


def run(sb, argv, **kw):
    """sb.run, with a failing status left to the test to check."""
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def runner(default_prog):
    """run(sb, args, prog=default_prog, **kw): sb.run of prog with args, with a failing
    status left to the test to check."""
    def run_prog(sb, args, prog=default_prog, **kw):
        return run(sb, [prog] + args, **kw)
    return run_prog


def ours_and_debians(sb, run_prog, args, classic, snapshot_files):
    """Ours, then Debian's tool (classic) with the same args: ours has changed none of the
    files snapshot_files(sb) returns, and both exit alike.  Returns both results."""
    before = snapshot_files(sb)
    ours = run_prog(sb, args)
    assert snapshot_files(sb) == before
    theirs = run_prog(sb, args, prog=classic)
    assert ours.returncode == theirs.returncode
    return ours, theirs


def snapshot(sb, files):
    """The files' contents, to compare."""
    return {p: sb.read_bytes(p) for p in files}


def table(sb, path):
    """An account file as {name: its fields}."""
    return {l.split(":")[0]: l.split(":") for l in sb.read(path).splitlines()}


def check_consistent(sb, names):
    """Every named group has one line in /etc/group and one in /etc/gshadow, the same
    members in both, and 'x' as its /etc/group password."""
    group, gshadow = table(sb, "/etc/group"), table(sb, "/etc/gshadow")
    names_in_group = [l.split(":")[0] for l in sb.read("/etc/group").splitlines()]
    for n in names:
        assert n in group and n in gshadow, n
        assert group[n][1] == "x", group[n]
        assert group[n][3] == gshadow[n][3], (group[n], gshadow[n])
        assert names_in_group.count(n) == 1, n
