"""Demo part 1, for tests/sandbox/demo: the Debian package's life cycle, the way an
administrator meets it.  Install the .deb -> check, then turn it on -> a user changes
their password -> turn it off -> purge, in a throwaway root whose dpkg database is a
copy of the host's (sandbox.Base(..., install=False), as tests/system/test_package.py).

PACKAGE_STEPS is a list of functions taking (sb, show) (show as in demo_auth_steps);
each docstring is the step's title.  The .deb is the one `make deb` left in dist/."""

import glob
import os

from demo_auth_steps import _ensure_pwquality_usable, _print_pty, _say

ALICE_PW = "alice-pw-1"
BOB_PW = "bob-pw-2"
ALICE_NEW_PW = "Tulip-7-harbour"      # good enough for Debian's pam_pwquality
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}


def find_deb(source_dir):
    """dist/hardened-shadow_*.deb of the checkout, or None."""
    debs = sorted(glob.glob(os.path.join(source_dir, "dist", "hardened-shadow_*.deb")))
    return debs[-1] if debs else None


def _sh(sb, show, script):
    """A shell pipeline, shown as typed."""
    return show(sb, ["sh", "-c", script], env=ENV)


def step_install(sb, show):
    """install the package: apt-get install ./hardened-shadow_*.deb"""
    deb = find_deb(sb.base.source_dir)
    name = os.path.basename(deb)
    with open(deb, "rb") as f:
        sb.write("/root/" + name, f.read(), mode=0o644)
    r = show(sb, ["apt-get", "install", "-y", "-q", "/root/" + name], env=ENV, timeout=300)
    if r.returncode != 0:
        raise AssertionError("apt-get install failed")
    _say("Debian's passwd, login, su ... moved aside with dpkg-divert --rename (dpkg warns "
         "about renaming files of essential packages; renamed, they come back byte for byte "
         "on purge); ours are in their place")
    _sh(sb, show, "dpkg-divert --list hardened-shadow | sort | head -4; "
                  "echo ...; dpkg-divert --list hardened-shadow | wc -l")
    show(sb, ["ls", "-l", "/usr/bin/passwd", "/usr/bin/passwd.distrib", "/usr/bin/su"])
    _say("installing converted nothing: no tree, pam_unix still in common-auth")
    show(sb, ["ls", "-d", "/etc/hardened-shadow"])
    show(sb, ["grep", "-c", "pam_unix.so", "/etc/pam.d/common-auth"])


def step_accounts(sb, show):
    """two classic accounts, made by Debian's own tools: /etc/passwd + /etc/shadow"""
    sb.add_classic_user("alice", password=ALICE_PW)
    sb.add_classic_user("bob", password=BOB_PW)
    _ensure_pwquality_usable(sb)
    show(sb, ["grep", "-E", "^(alice|bob):", "/etc/passwd", "/etc/shadow"])


def step_enable(sb, show):
    """turn it on: hardened-shadow-enable (first a dry run that changes nothing)"""
    show(sb, ["hardened-shadow-enable", "--dry-run"], env=ENV)
    r = show(sb, ["hardened-shadow-enable"], env=ENV, timeout=300)
    if r.returncode != 0:
        raise AssertionError("hardened-shadow-enable failed")
    _say("pwconv's \"next steps\" are the ones hardened-shadow-enable took after it: "
         "nsswitch.conf and the PAM profile")
    show(sb, ["grep", "^shadow:", "/etc/nsswitch.conf"])
    show(sb, ["grep", "-H", "pam_hardened_shadow", "/etc/pam.d/common-auth",
              "/etc/pam.d/common-password"])
    show(sb, ["ls", "-l", "/etc/shadow"])
    show(sb, ["ls", "-la", "/etc/hardened-shadow/alice"])


def step_user_changes_password(sb, show):
    """alice changes her own password: our passwd, setgid, not setuid root"""
    show(sb, ["ls", "-l", "/usr/bin/passwd"])
    show(sb, ["ls", "-l", "--time-style=+%T.%N", "/etc/hardened-shadow/alice/shadow"])
    argv = ["passwd"]
    status, out = sb.pty_run(argv, [(r"Current password: ", ALICE_PW + "\n"),
                                    (r"New password: ", ALICE_NEW_PW + "\n"),
                                    (r"Retype new password: ", ALICE_NEW_PW + "\n")],
                             user="alice")
    _print_pty("alice", argv, status, out)
    if status != 0:
        raise AssertionError("alice's passwd failed")
    _say("only alice's own file was rewritten")
    show(sb, ["ls", "-l", "--time-style=+%T.%N", "/etc/hardened-shadow/alice/shadow"])
    show(sb, ["cat", "/etc/hardened-shadow/alice/shadow"], user="bob")
    argv = ["su", "-", "alice", "-c", 'echo "logged in as $(id -un)"']
    status, out = sb.pty_run(argv, [(r"Password: ", ALICE_NEW_PW + "\n")], user="bob")
    _print_pty("bob", argv, status, out)
    if status != 0:
        raise AssertionError("su with alice's new password failed")


def step_disable(sb, show):
    """turn it off: hardened-shadow-disable"""
    r = show(sb, ["hardened-shadow-disable"], env=ENV, timeout=300)
    if r.returncode != 0:
        raise AssertionError("hardened-shadow-disable failed")
    show(sb, ["grep", "^shadow:", "/etc/nsswitch.conf"])
    show(sb, ["grep", "-c", "pam_unix.so", "/etc/pam.d/common-auth"])
    show(sb, ["ls", "-d", "/etc/hardened-shadow"])
    _say("alice's new password is back in /etc/shadow")
    show(sb, ["grep", "^alice:", "/etc/shadow"])


def step_purge(sb, show):
    """purge: apt-get purge hardened-shadow puts Debian's files back"""
    r = show(sb, ["apt-get", "purge", "-y", "-q", "hardened-shadow"], env=ENV, timeout=300)
    if r.returncode != 0:
        raise AssertionError("apt-get purge failed")
    _say("dpkg -V prints nothing: every file of passwd, login and util-linux is Debian's")
    show(sb, ["dpkg", "-V", "passwd", "login", "util-linux"], env=ENV)
    _sh(sb, show, "dpkg-divert --list hardened-shadow | wc -l")
    show(sb, ["ls", "-l", "/usr/bin/passwd"])
    argv = ["su", "-", "alice", "-c", 'echo "logged in as $(id -un), through pam_unix"']
    status, out = sb.pty_run(argv, [(r"Password: ", ALICE_NEW_PW + "\n")], user="bob")
    _print_pty("bob", argv, status, out)
    if status != 0:
        raise AssertionError("su after the purge failed")


PACKAGE_STEPS = [step_install, step_accounts, step_enable, step_user_changes_password,
                 step_disable, step_purge]
