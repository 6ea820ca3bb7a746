"""Secrets in memory: a core dump (gcore, as root would take one of a running process)
of our programs after they have verified a password holds neither that password nor the
stored hash it was checked against.

Attacked: su's and login's parent process while the session runs (they live as long as
the session), chsh asking for the shell after it has verified the password, and passwd
waiting at the new-password prompt after it has verified the current one.  The hash is looked for whole and as its digest (the part after the last
'$'), so a copy that lost its method and salt still counts.  libpam's own copy of the
current password (the PAM_OLDAUTHTOK item, kept by libpam until pam_chauthtok returns) is
libpam's, not ours (docs/decisions.md): passwd's core may hold that one copy and no
other.  So is pam_systemd's: it caches the target's whole user record, the hash our NSS
module gives root included, as PAM data for the session; the su test runs Debian's stack
without it."""

import os
import subprocess

import pytest

import sandbox
from ptyproc import Pty

SU = "/usr/bin/su"
PASSWD = "/usr/bin/passwd"
LOGIN = "/usr/bin/login"
CHSH = "/usr/bin/chsh"
PW = {"alice": "Alice-core-pw-1", "bob": "Bob-core-pw-2"}
NEW_PW = "Tulip-7-harbour-core"


@pytest.fixture(scope="module")
def sb(base):
    with sandbox.Sandbox(base, size="512m") as s:
        for name in ("alice", "bob"):
            s.add_classic_user(name, password=PW[name])
        s.set_login_defs("SHELL_PROXY", "yes")     # chsh's self-service path
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nodelay"})
        s.write("/etc/login.defs", s.read("/etc/login.defs") + "\nFAIL_DELAY 0\n")
        if not s.exists("/var/cache/cracklib/cracklib_dict.pwd"):
            conf = "/etc/security/pwquality.conf"
            s.write(conf, (s.read(conf) if s.exists(conf) else "") + "dictcheck = 0\n")
        session = "/etc/pam.d/common-session"
        s.write(session, "".join(l + "\n" for l in s.read(session).splitlines()
                                 if "pam_systemd.so" not in l))
        yield s


def stored_hash(sb, name):
    return sb.read("/etc/hardened-shadow/%s/shadow" % name).split(":")[0]


def core_of(pid, tmp_path, control):
    """The memory of process pid as gcore writes it (every mapping gdb can read, not only
    those the process's coredump_filter names).  control is a string the process must
    hold: a core without it would prove nothing."""
    out = str(tmp_path / "core")
    res = subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid),
                          "-ex", "set use-coredump-filter off",
                          "-ex", "gcore " + out],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert os.path.exists(out), res.stdout + res.stderr
    with open(out, "rb") as f:
        data = f.read()
    os.unlink(out)
    assert control.encode() in data, (len(data), res.stderr)
    return data


def copies(core, secret):
    return core.count(secret.encode())


def assert_no_hash(core, hash_):
    digest = hash_.rsplit("$", 1)[1]
    assert len(digest) >= 20, hash_
    assert copies(core, hash_) == 0, "the stored hash is in the core"
    assert copies(core, digest) == 0, "the stored hash's digest is in the core"


def test_su_parent_keeps_no_hash_or_password(sb, tmp_path):
    hash_ = stored_hash(sb, "alice")
    with Pty(sb, [SU, "alice", "-c", "echo READY; exec sleep 60"], user="bob") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect("READY")
        # the session runs: su's parent waits for it, holding what it kept
        core = core_of(p.pid, tmp_path, control="echo READY; exec sleep 60")
        assert p.proc.poll() is None, p.output
    assert_no_hash(core, hash_)
    assert copies(core, PW["alice"]) == 0, "alice's password is in su's core"


def test_login_parent_keeps_no_hash_or_password(sb, tmp_path):
    hash_ = stored_hash(sb, "alice")
    with Pty(sb, [LOGIN, "alice"]) as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(r"\$ $")
        p.send("echo READY$((6*7)); exec sleep 60\n")
        p.expect("READY42")
        core = core_of(p.pid, tmp_path, control="alice")
        assert p.proc.poll() is None, p.output
    assert_no_hash(core, hash_)
    assert copies(core, PW["alice"]) == 0, "alice's password is in login's core"


def test_chsh_forgets_hash_and_password_once_verified(sb, tmp_path):
    hash_ = stored_hash(sb, "alice")
    with Pty(sb, [CHSH], user="alice") as p:
        p.expect("Password: ")
        p.send(PW["alice"] + "\n")
        p.expect(r"Login Shell \[[^]]*\]: ")
        core = core_of(p.pid, tmp_path, control="Login Shell")
        assert p.proc.poll() is None, p.output
        p.send("\n")
        assert p.wait() == 0, p.output
    assert_no_hash(core, hash_)
    assert copies(core, PW["alice"]) == 0, "alice's password is in chsh's core"


@pytest.fixture(params=["pwquality", "module"])
def new_password_prompt(request, sb):
    """Who asks for the new password: pam_pwquality above our module (Debian's stack:
    our UPDATE has not started yet), or our module itself (its UPDATE waits)."""
    path = "/etc/pam.d/common-password"
    debian = sb.read(path)
    if request.param == "module":
        lines = [l for l in debian.splitlines() if "pam_pwquality.so" not in l]
        sb.write(path, "".join(l.replace(" use_authtok", "") + "\n" for l in lines))
        assert "use_authtok" not in sb.read(path)
    yield request.param
    sb.write(path, debian)


def test_passwd_forgets_the_old_hash_once_verified(sb, tmp_path, new_password_prompt):
    hash_ = stored_hash(sb, "bob")
    with Pty(sb, [PASSWD], user="bob") as p:
        p.expect("Current password: ")
        p.send(PW["bob"] + "\n")
        p.expect("New password: ")
        core = core_of(p.pid, tmp_path, control="Changing password for bob.")
        assert p.proc.poll() is None, p.output
        # and the change still goes through (PRELIM's fingerprint matches)
        p.send(NEW_PW + "\n")
        p.expect("Retype new password: ")
        p.send(NEW_PW + "\n")
        assert p.wait() == 0, p.output
    assert "password updated successfully" in p.output
    sb.run(["/usr/sbin/chpasswd"], input="bob:%s\n" % PW["bob"])
    assert_no_hash(core, hash_)
    # at most libpam's PAM_OLDAUTHTOK item, which it needs for the update phase
    assert copies(core, PW["bob"]) <= 1, "copies of the old password: %d" % copies(
        core, PW["bob"])


def test_passwd_fingerprint_still_sees_roots_lock(sb, new_password_prompt):
    """What PRELIM keeps instead of the hash still tells a changed hash apart: root's
    passwd -l while the user types the new password wins, and the change is refused."""
    with Pty(sb, [PASSWD], user="bob") as p:
        p.expect("Current password: ")
        p.send(PW["bob"] + "\n")
        p.expect("New password: ")
        sb.run([PASSWD, "-l", "bob"])
        locked = stored_hash(sb, "bob")
        p.send(NEW_PW + "\n")
        p.expect("Retype new password: ")
        p.send(NEW_PW + "\n")
        assert p.wait() != 0, p.output
    assert "password unchanged" in p.output
    assert stored_hash(sb, "bob") == locked and locked.startswith("!")
    assert any("user password changed by another process" in m for m in sb.syslog(clear=True))
    sb.run([PASSWD, "-u", "bob"])
