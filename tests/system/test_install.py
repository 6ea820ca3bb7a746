"""`make install DESTDIR=...` (meson install + packaging/post-install.sh): modes and groups
of DESIGN section 5 whether the destination is a root with its own /etc/group (the groups
are created there) or a bare staging directory (no setgid bit without the right group)."""

import os
import stat
import subprocess

HELPER = "/usr/libexec/hardened-shadow/shell-helper"


def install(sb, build_dir, dest):
    # meson install writes meson-logs/install-log.txt into the build tree, which the
    # sandbox shows read-only when it lives under /tmp (a CI clone): give it a
    # scratch tmpfs there, inside this root only.
    logs = sb.root + os.path.join(build_dir, "meson-logs")
    if not os.path.ismount(logs):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "hs-meson-logs", logs],
                       check=True)
    return sb.run(["meson", "install", "-C", build_dir, "--no-rebuild", "--destdir", dest],
                  env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=120)


def group_line(sb, path, name):
    for line in sb.read(path).splitlines():
        if line.split(":")[0] == name:
            return line
    return None


def test_install_into_a_root_creates_the_groups(sb, build_dir):
    sb.sh("set -e; mkdir -p /srv/newroot/etc; cd /etc; "
          "cp -p passwd group shadow gshadow login.defs /srv/newroot/etc/")
    before = sb.read("/etc/group")
    res = install(sb, build_dir, "/srv/newroot")
    assert res.returncode == 0
    tree = group_line(sb, "/srv/newroot/etc/group", "hardened-shadow")
    auth = group_line(sb, "/srv/newroot/etc/group", "hardened-shadow-auth")
    assert tree and auth
    assert group_line(sb, "/srv/newroot/etc/gshadow", "hardened-shadow")
    # the sandbox's own /etc was not the one changed
    assert sb.read("/etc/group") == before
    st = sb.lstat("/srv/newroot" + HELPER)
    assert stat.S_IMODE(st.st_mode) == 0o2711
    assert (st.st_uid, st.st_gid) == (0, int(tree.split(":")[2]))
    # a second install finds the groups and creates nothing
    install(sb, build_dir, "/srv/newroot")
    assert sb.read("/srv/newroot/etc/group").count("hardened-shadow:") == 1


def test_staging_install_never_leaves_a_setgid_root_binary(sb, build_dir):
    install(sb, build_dir, "/srv/stage")
    st = sb.lstat("/srv/stage" + HELPER)
    assert not st.st_mode & (stat.S_ISGID | stat.S_ISUID)
    assert stat.S_IMODE(st.st_mode) == 0o755
    for path in ("/usr/sbin/pwconv", "/usr/sbin/pwunconv",
                 "/usr/lib/x86_64-linux-gnu/libnss_hardened_shadow.so.2"):
        assert sb.exists("/srv/stage" + path), path
    assert not sb.exists("/srv/stage/etc")
