"""Demo step for the group tools, for tests/sandbox/demo.

step_group_admin(sb, show): sb a sandbox.Sandbox, show the demo's show(sb, argv, user=None)
that prints a command and its output like a terminal.  It works on the demo's alice and bob
(making them if they are missing, so it also runs on its own in a fresh sandbox) and a new
group proj.

gpasswd is root's only in the default build (DESIGN section 5); a build with
-Dsetuid_gpasswd=true installs it setuid root so that a group administrator may manage the
members.  The step shows what the installed build does, and, when the build also made the
setuid variant for the tests (src/admin/gpasswd-setuid-test, built whenever tests are on), it
installs that variant 4755 in this throwaway root to show the administrator's side too."""

import os
import stat

GPASSWD = "/usr/bin/gpasswd"


def _say(text):
    print("(%s)" % text, flush=True)


def _ensure_users(sb):
    for name in ("alice", "bob"):
        if sb.getpwnam(name) is None:
            sb.add_classic_user(name, password=name + "-pw-1")


def _setuid_installed(sb):
    st = sb.lstat(GPASSWD)
    return st.st_uid == 0 and bool(st.st_mode & stat.S_ISUID)


def step_group_admin(sb, show):
    """Groups: root makes a group and names alice its administrator; alice adds bob with
    gpasswd -a; /etc/group and /etc/gshadow agree."""
    _ensure_users(sb)
    show(sb, ["groupadd", "proj"])
    show(sb, ["gpasswd", "-A", "alice", "proj"])
    show(sb, ["grep", "^proj:", "/etc/group", "/etc/gshadow"])
    show(sb, ["ls", "-l", GPASSWD])
    show(sb, ["gpasswd", "-a", "bob", "proj"], user="alice")
    if not _setuid_installed(sb):
        _say("this is the default build: gpasswd is root's only, so root adds bob")
        show(sb, ["gpasswd", "-a", "bob", "proj"])
        variant = os.path.join(sb.base.build_dir, "src", "admin", "gpasswd-setuid-test")
        if os.path.exists(variant):
            _say("with -Dsetuid_gpasswd=true gpasswd is installed setuid root; the build's "
                 "setuid variant, installed 4755 in this throwaway root, shows the "
                 "administrator's side")
            with open(variant, "rb") as f:
                sb.write(GPASSWD, f.read(), mode=0o4755)
            show(sb, ["ls", "-l", GPASSWD])
            show(sb, ["gpasswd", "-d", "bob", "proj"], user="alice")
            show(sb, ["gpasswd", "-a", "bob", "proj"], user="alice")
            _say("-A and -M stay root's, and bob, who is no administrator, is refused")
            show(sb, ["gpasswd", "-M", "alice", "proj"], user="alice")
            show(sb, ["gpasswd", "-r", "proj"], user="bob")
    show(sb, ["grep", "^proj:", "/etc/group", "/etc/gshadow"])
    show(sb, ["getent", "group", "proj"])
    show(sb, ["id", "bob"])
