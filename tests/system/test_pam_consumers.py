"""Real PAM consumers on pam_hardened_shadow.so: pamtester, Debian's util-linux
/bin/login on a pseudo-terminal as root, and Debian's /bin/su run by an unprivileged user -- each with the root's accounts converted to
/etc/hardened-shadow and every pam_unix.so line of /etc/pam.d/common-* pointed at our
module (sandbox.use_pam_module), so the services' own pam.d files ("login", "su") are
Debian's, untouched.

Every verdict is checked twice: what the consumer prints (its exit status and pam's
messages) and what our module logged to the root's /dev/log, so a stack that silently
fell back to pam_unix (or to pam_permit) fails the test.  Failed attempts cost the real
failure delays (pam_faildelay's 3 s in Debian's login service), which is most of the
run time."""

import ctypes
import re

import pytest

PAMTESTER = "/usr/bin/pamtester"
# Debian's util-linux login and su, copied from the host so the tests keep using them even
# if the build installs programs of the same name.  Their PAM service names ("login", "su")
# are fixed in the programs, not taken from argv[0].
LOGIN = "/usr/local/bin/hs-test-debian-login"
SU = "/usr/local/bin/hs-test-debian-su"
TREE = "/etc/hardened-shadow"
MODULE_TAG = "pam_hardened_shadow("

ALICE_PW = "Alice-first-pw-1"
BOB_PW = "Bob-first-pw-2"
# random-looking enough for Debian's pam_pwquality, which sits above our module in
# common-password (and refuses passwords that contain the user's name)
NEW_PW = "Tulip-7-harbour"

EXPIRED_ACCOUNT_MSG = "Your account has expired; please contact your system administrator."
FORCED_CHANGE_MSG = ("You are required to change your password immediately "
                     "(administrator enforced)")

# Typed after a successful login; the terminal echoes the command itself, so only the
# shell's output contains "who=alice" (the $(...) is not expanded in the echo).
WHOAMI = 'echo "who=$(id -un)"; exit\n'
SHELL_PROMPT = r"\$ $"

_libcrypt = ctypes.CDLL("libcrypt.so.1")
_libcrypt.crypt.restype = ctypes.c_char_p
_libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def verify(password, hash_):
    """libxcrypt's verdict: does password match hash_?"""
    if not hash_ or hash_[0] in "!*":
        return False
    out = _libcrypt.crypt(password.encode(), hash_.encode())
    return out is not None and out.decode() == hash_


def hash_of(sb, name):
    return sb.read("%s/%s/shadow" % (TREE, name)).split(":")[0]


def lstchg_of(sb, name):
    return sb.read("%s/%s/shadow" % (TREE, name)).split(":")[1]


def module_log(sb):
    """Our module's syslog lines since the last call (priority prefix removed)."""
    return [re.sub(r"^<\d+>", "", m) for m in sb.syslog(clear=True) if MODULE_TAG in m]


def pty(sb, argv, script, user=None, timeout=20):
    return sb.pty_run(argv, script, user=user, timeout=timeout)


@pytest.fixture
def mod(sb):
    """alice and bob converted to the per-user tree, the PAM stack on our module, Debian's
    login and su in place, and the root set up so the consumers can finish a run."""
    for path, prog in ((LOGIN, "/bin/login"), (SU, "/usr/bin/su")):
        with open(prog, "rb") as f:
            sb.write(path, f.read(), mode=0o4755 if path == SU else 0o755)
    sb.add_classic_user("alice", password=ALICE_PW)
    sb.add_classic_user("bob", password=BOB_PW)
    sb.use_hardened_tree()
    assert not sb.exists("/etc/shadow")
    sb.use_pam_module()
    for ptype in ("auth", "account", "password", "session"):
        text = sb.read("/etc/pam.d/common-" + ptype)
        assert "pam_hardened_shadow.so" in text and "pam_unix.so" not in text, text
    # Debian's pam_pwquality refuses every password when cracklib's dictionary is not
    # installed (cracklib-runtime); turn only its dictionary check off then, in the root.
    if not sb.exists("/var/cache/cracklib/cracklib_dict.pwd"):
        conf = "/etc/security/pwquality.conf"
        text = sb.read(conf) if sb.exists(conf) else ""
        sb.write(conf, text + "dictcheck = 0\n")
    # util-linux login re-prompts "login:" after a failure (5 tries by default); one try
    # makes it exit after the first "Login incorrect", so the test needs no kill.
    sb.write("/etc/login.defs", sb.read("/etc/login.defs") + "\nLOGIN_RETRIES 1\n")
    sb.syslog(clear=True)
    return sb


# ---------------------------------------------------------------- pamtester


def pamtester(sb, user, *ops, script=()):
    return pty(sb, [PAMTESTER, "login", user] + list(ops), list(script))


def test_pamtester_authenticate(mod):
    status, out = pamtester(mod, "alice", "authenticate", script=[("Password: ", ALICE_PW + "\n")])
    assert status == 0, out
    assert "pamtester: successfully authenticated" in out
    assert ALICE_PW not in out                      # the prompt turned echo off
    assert module_log(mod) == []                    # pam_unix logs nothing on success either

    status, out = pamtester(mod, "alice", "authenticate", script=[("Password: ", BOB_PW + "\n")])
    assert status == 1, out
    assert "pamtester: Authentication failure" in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:auth): authentication failure;" in m
               and m.endswith("user=alice") for m in log), log

    status, out = pamtester(mod, "nosuch", "authenticate", script=[("Password: ", "whatever\n")])
    assert status == 1, out
    assert "pamtester: Authentication failure" in out   # the same words as a wrong password
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:auth): check pass; user unknown" in m
               for m in log), log

    # a locked account: the right password no longer opens it
    mod.run(["/usr/bin/passwd", "-l", "alice"])
    status, out = pamtester(mod, "alice", "authenticate", script=[("Password: ", ALICE_PW + "\n")])
    assert status == 1 and "pamtester: Authentication failure" in out, out


def test_pamtester_acct_mgmt(mod):
    status, out = pamtester(mod, "alice", "acct_mgmt")
    assert status == 0 and "pamtester: account management done." in out, out

    mod.run(["/usr/bin/chage", "-E", "2000-01-01", "alice"])
    status, out = pamtester(mod, "alice", "acct_mgmt")
    assert status == 1, out
    assert EXPIRED_ACCOUNT_MSG in out
    # Debian's common-account turns the module's PAM_ACCT_EXPIRED into pam_deny's failure
    # (default=ignore, then requisite pam_deny.so), exactly as with pam_unix
    assert "pamtester: Authentication failure" in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:account): account alice has expired" in m
               for m in log), log

    mod.run(["/usr/bin/chage", "-E", "-1", "alice"])
    mod.run(["/usr/bin/passwd", "-e", "alice"])
    status, out = pamtester(mod, "alice", "acct_mgmt")
    assert status == 1, out
    assert FORCED_CHANGE_MSG + "." in out
    # new_authtok_reqd=done: PAM_NEW_AUTHTOK_REQD reaches the application unchanged
    assert "pamtester: Authentication token is no longer valid; new one required" in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:account): expired password for user alice "
               "(root enforced)" in m for m in log), log

    # bob is untouched by all of this
    status, out = pamtester(mod, "bob", "acct_mgmt")
    assert status == 0, out


def test_pamtester_chauthtok_as_root(mod):
    before = hash_of(mod, "alice")
    # root, no forced change: no current password asked; pam_pwquality asks twice and
    # hands the new one to our module (use_authtok)
    status, out = pamtester(mod, "alice", "chauthtok",
                            script=[("New password: ", NEW_PW + "\n"),
                                    ("Retype new password: ", NEW_PW + "\n")])
    assert status == 0, out
    assert "pamtester: authentication token altered successfully." in out
    assert "Current password" not in out and NEW_PW not in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:chauthtok): password changed for alice" in m
               for m in log), log
    after = hash_of(mod, "alice")
    assert after != before and verify(NEW_PW, after) and not verify(ALICE_PW, after)

    status, out = pamtester(mod, "alice", "authenticate", script=[("Password: ", NEW_PW + "\n")])
    assert status == 0 and "successfully authenticated" in out, out
    status, out = pamtester(mod, "alice", "authenticate",
                            script=[("Password: ", ALICE_PW + "\n")])
    assert status == 1 and "pamtester: Authentication failure" in out, out

    # a mismatched retype changes nothing
    status, out = pamtester(mod, "alice", "chauthtok",
                            script=[("New password: ", "Maple-9-river\n"),
                                    ("Retype new password: ", "Maple-9-rivet\n"),
                                    ("New password: ", "\x04")])
    assert status != 0, out
    assert hash_of(mod, "alice") == after


def test_pamtester_sessions_are_logged(mod):
    uid = mod.getpwnam("alice").uid
    status, out = pamtester(mod, "alice", "open_session", "close_session")
    assert status == 0, out
    assert "pamtester: successfully opened a session" in out
    assert "pamtester: session has successfully been closed." in out
    log = module_log(mod)
    opened = "pam_hardened_shadow(login:session): session opened for user alice(uid=%d) " \
             "by (uid=0)" % uid
    closed = "pam_hardened_shadow(login:session): session closed for user alice"
    opened_at = [i for i, m in enumerate(log) if opened in m]
    closed_at = [i for i, m in enumerate(log) if closed in m]
    assert len(opened_at) == 1 and len(closed_at) == 1 and opened_at < closed_at, log


# ---------------------------------------------------------------- Debian's login


def test_login_right_and_wrong_password(mod):
    status, out = pty(mod, [LOGIN, "alice"], [("Password: ", ALICE_PW + "\n"),
                                              (SHELL_PROMPT, WHOAMI)])
    assert status == 0, out
    assert "who=alice" in out
    assert ALICE_PW not in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:session): session opened for user alice" in m
               for m in log), log

    # util-linux login exits 0 after its last failed try (a getty respawns it anyway), so
    # the verdict is its message, the missing shell and the module's log
    status, out = pty(mod, [LOGIN, "alice"], [("Password: ", BOB_PW + "\n")])
    assert "Login incorrect" in out, out
    assert "who=" not in out and not re.search(SHELL_PROMPT, out, re.M)
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:auth): authentication failure;" in m
               and m.endswith("user=alice") for m in log), log
    assert not any("session opened" in m for m in log), log


def test_login_forces_change_of_expired_password(mod):
    mod.run(["/usr/bin/passwd", "-e", "alice"])
    assert lstchg_of(mod, "alice") == "0"
    status, out = pty(mod, [LOGIN, "alice"], [
        ("Password: ", ALICE_PW + "\n"),
        (re.escape(FORCED_CHANGE_MSG), None),
        # a forced change asks for the current password even though login runs as root
        ("Current password: ", ALICE_PW + "\n"),
        ("New password: ", NEW_PW + "\n"),
        ("Retype new password: ", NEW_PW + "\n"),
        (SHELL_PROMPT, WHOAMI)])
    assert status == 0, out
    assert "who=alice" in out
    h = hash_of(mod, "alice")
    assert verify(NEW_PW, h) and not verify(ALICE_PW, h)
    assert lstchg_of(mod, "alice") not in ("", "0")     # today's day, no more forced change
    log = module_log(mod)
    assert any("pam_hardened_shadow(login:chauthtok): password changed for alice" in m
               for m in log), log

    # the next login takes the new password and asks for nothing more
    status, out = pty(mod, [LOGIN, "alice"], [("Password: ", NEW_PW + "\n"),
                                              (SHELL_PROMPT, WHOAMI)])
    assert status == 0, out
    assert "who=alice" in out and "Current password" not in out


def test_login_forced_change_with_wrong_current_password(mod):
    mod.run(["/usr/bin/passwd", "-e", "alice"])
    before = mod.read("%s/alice/shadow" % TREE)
    status, out = pty(mod, [LOGIN, "alice"], [
        ("Password: ", ALICE_PW + "\n"),
        ("Current password: ", "not-the-password\n")])
    assert status != 0, out
    assert "who=" not in out and "New password" not in out
    assert mod.read("%s/alice/shadow" % TREE) == before


# ---------------------------------------------------------------- Debian's su


def su_as_bob(sb, password):
    return pty(sb, [SU, "alice", "-c", 'echo "who=$(id -un)"'],
               [("Password: ", password + "\n")], user="bob")


def test_su_from_unprivileged_user(mod):
    status, out = su_as_bob(mod, ALICE_PW)
    assert status == 0, out
    assert "who=alice" in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(su:session): session opened for user alice" in m
               for m in log), log

    status, out = su_as_bob(mod, BOB_PW)        # bob's own password is not alice's
    assert status == 1, out
    assert "su: Authentication failure" in out and "who=" not in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(su:auth): authentication failure;" in m
               and "ruser=bob" in m and m.endswith("user=alice") for m in log), log


def test_su_refuses_expired_account(mod):
    mod.run(["/usr/bin/chage", "-E", "2000-01-01", "alice"])
    status, out = su_as_bob(mod, ALICE_PW)      # the right password
    assert status == 1, out
    assert EXPIRED_ACCOUNT_MSG in out
    assert "su: Authentication failure" in out and "who=" not in out
    log = module_log(mod)
    assert any("pam_hardened_shadow(su:account): account alice has expired" in m
               for m in log), log
    # clearing the expiry opens it again
    mod.run(["/usr/bin/chage", "-E", "-1", "alice"])
    status, out = su_as_bob(mod, ALICE_PW)
    assert status == 0 and "who=alice" in out, out
