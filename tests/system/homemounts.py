"""A file system mounted on a home (or a spool) itself, for the tests of userdel, usermod
and the recovery: a FUSE file system its user mounted on it (users may, on what they own)
or a bind mount an administrator left there.  One rule for all: such a home is never
touched, said as "a file system is mounted at PATH".

Stand-ins: tmpfs, a bind mount of the path on itself (the same inode), and a real FUSE
mount whose daemon is gone: without allow_other it refuses root every stat and open
(EACCES), with it every request fails (ENOTCONN, the daemon dead)."""

import errno
import os

import pytest

HOME_MOUNTS = ["tmpfs", "bind", "fuse-EACCES", "fuse-ENOTCONN"]

FUSE_MOUNT = """import ctypes, os, stat, sys
path, uid, allow_other = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
fd = os.open("/dev/fuse", os.O_RDWR)
mode = 0o40000 if stat.S_ISDIR(os.lstat(path).st_mode) else 0o100000
opts = "fd=%d,rootmode=%o,user_id=%d,group_id=%d" % (fd, mode, uid, uid)
if allow_other:
    opts += ",allow_other"
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b"fuse", path.encode(), b"fuse", 0, opts.encode()) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
"""


def mount_on_home(sb, how, path, uid):
    """Mount a file system of kind how (HOME_MOUNTS) on path (a directory, or a regular
    file for a FUSE or bind mount), as uid's."""
    if how == "tmpfs":
        sb.sh("mount -t tmpfs -o mode=0750,uid=%d none %s" % (uid, path))
    elif how == "bind":
        sb.sh("mount --bind %s %s" % (path, path))
    else:
        if not os.path.exists("/dev/fuse"):
            pytest.skip("no FUSE on this machine")
        if not sb.exists("/dev/fuse"):
            sb.sh("mknod -m 0666 /dev/fuse c 10 229")
        sb.write("/tmp/fuse-mount.py", FUSE_MOUNT, mode=0o644)
        # the daemon's end closed at once: gone
        sb.run(["/usr/bin/python3", "/tmp/fuse-mount.py", path, str(uid),
                "1" if how == "fuse-ENOTCONN" else "0"])
        res = sb.run(["stat", path], check=False)
        assert res.returncode != 0 and \
            os.strerror(getattr(errno, how.split("-")[1])) in res.stderr, res
