"""Another name of a root-owned file in /etc denies nothing.

Where fs.protected_hardlinks is 0 (the kernel's own default; Debian sets 1) any user can
hard-link any file into a directory of theirs on the same file system.  Such a name
changes nothing the file in /etc holds: only root writes /etc, and a replace gives the
path a new inode of its own.  So a link count above 1 on a root-owned /etc file must not
stop root's tools (DESIGN §11), nor refuse a user's own tools.  A file of another owner
with more than one name is still refused (the unit tests of fileio and globalfile).

The host's sysctl is not ours to change: root makes the link a user could make there, in
/var/tmp (world-writable, on the root's file system)."""

import pytest

TREE = "/etc/hardened-shadow"
FILES = ["/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid",
         "/etc/login.defs", "/etc/shells"]


@pytest.fixture
def lsb(sb):
    sb.add_classic_user("alice", password="Alice-links-1")
    sb.set_login_defs("SHELL_PROXY", "yes")     # alice's shell is hers to change
    sb.use_hardened_tree()
    for path in ("/etc/subuid", "/etc/subgid"):
        if not sb.exists(path):
            sb.write(path, "alice:100000:65536\n")
    return sb


def link_elsewhere(sb, path):
    other = "/var/tmp/alice-" + path.rsplit("/", 1)[1]
    sb.run(["/bin/ln", path, other])
    assert sb.lstat(path).st_nlink == 2
    return other


@pytest.mark.parametrize("path", FILES)
def test_root_tools_go_through(lsb, path):
    other = link_elsewhere(lsb, path)
    before = lsb.read(other)
    for argv in (["/usr/sbin/useradd", "-m", "-s", "/bin/bash", "bob"],
                 ["/usr/sbin/usermod", "-c", "Bob B", "-v", "200000-200009", "bob"],
                 ["/usr/sbin/groupadd", "team"],
                 ["/usr/bin/gpasswd", "-a", "bob", "team"],
                 ["/usr/sbin/userdel", "-r", "bob"]):
        r = lsb.run(argv, check=False)
        assert r.returncode == 0 and "link count" not in r.stderr, (argv, r.stderr)
    assert lsb.getgrnam("team") == ("team", lsb.getgrnam("team")[1], [])
    # the other name still holds what it held: nothing was written through it
    assert lsb.read(other) == before
    if path not in ("/etc/login.defs", "/etc/shells"):
        assert lsb.lstat(path).st_nlink == 1    # replaced: a new inode of its own


def test_chsh_goes_through(lsb):
    """chsh (the user's own, not setuid root) reads /etc/shells."""
    link_elsewhere(lsb, "/etc/shells")
    r = lsb.run(["/usr/bin/chsh", "-s", "/bin/sh"], user="alice", input="Alice-links-1\n",
                check=False)
    assert r.returncode == 0, r.stderr
