"""pam_hardened_shadow.so against inputs where pam_unix.so refuses: the application's
PAM_DISALLOW_NULL_AUTHTOK (sshd's PermitEmptyPasswords no) overriding nullok, and a
password stack that goes on to UPDATE after our PRELIM refused the change."""

import re
import time

import pytest

PAMTESTER = "/usr/bin/pamtester"
TREE = "/etc/hardened-shadow"
MODULE_TAG = "pam_hardened_shadow("
ALICE_PW = "Alice-first-pw-1"
NEW_PW = "Tulip-7-harbour"


def shadow_of(sb, name):
    return sb.read("%s/%s/shadow" % (TREE, name))


def module_log(sb):
    return [re.sub(r"^<\d+>", "", m) for m in sb.syslog(clear=True) if MODULE_TAG in m]


def pamtester(sb, service, user, *ops, script=()):
    return sb.pty_run([PAMTESTER, service, user] + list(ops), list(script), timeout=20)


@pytest.fixture
def tree(sb):
    sb.add_classic_user("alice", password=ALICE_PW)
    sb.use_hardened_tree()
    sb.syslog(clear=True)
    return sb


def test_disallow_null_authtok_overrides_nullok(tree):
    """sshd passes PAM_DISALLOW_NULL_AUTHTOK when PermitEmptyPasswords is no; pam_unix
    then ignores nullok (support.c, _set_ctrl), so an account without a password
    cannot log in over ssh.  Ours must refuse it too."""
    tree.write("/etc/pam.d/hs-review",
               "auth required pam_hardened_shadow.so nullok nodelay\n"
               "account required pam_permit.so\n")
    tree.run(["/usr/bin/passwd", "-d", "alice"])
    assert shadow_of(tree, "alice").split(":")[0] == ""

    # nullok alone: in without a prompt, as pam_unix
    status, out = pamtester(tree, "hs-review", "alice", "authenticate")
    assert status == 0 and "successfully authenticated" in out, out

    # the application disallows empty passwords: a prompt, and no way in
    status, out = pamtester(tree, "hs-review", "alice",
                            "authenticate(PAM_DISALLOW_NULL_AUTHTOK)",
                            script=[("Password: ", "\n")])
    assert status != 0, out
    assert "successfully authenticated" not in out


@pytest.mark.parametrize("why", ["wrong-old", "too-early"])
def test_update_after_refused_prelim_changes_nothing(tree, why):
    """libpam runs every module's UPDATE once the PRELIM stack as a whole passed, even
    one whose own PRELIM failed (an optional line, a [default=ignore] line that a later
    module makes up for).  pam_unix re-verifies the old password and the aging in
    UPDATE; ours must not write a hash whose change its own PRELIM refused."""
    tree.write("/etc/pam.d/hs-review",
               "password optional pam_hardened_shadow.so\n"
               "password required pam_permit.so\n")
    if why == "too-early":
        # the minimum age forbids a change today (PRELIM: "wait longer")
        today = time.strftime("%Y-%m-%d", time.gmtime())
        tree.run(["/usr/bin/chage", "-m", "7", "-d", today, "alice"])
        old_answer = ALICE_PW
    else:
        old_answer = "not-the-password"
    before = shadow_of(tree, "alice")
    tree.syslog(clear=True)
    # PAM_CHANGE_EXPIRED_AUTHTOK: root is asked for the current password like a user
    status, out = pamtester(tree, "hs-review", "alice",
                            "chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",
                            script=[("Current password: ", old_answer + "\n")])
    # pam_permit makes the stack succeed whatever our line says: the verdict is the file
    # (and UPDATE does not even ask for a new password it would not use)
    log = module_log(tree)
    assert shadow_of(tree, "alice") == before, (status, out, log)
    assert "New password" not in out, out
    assert any("user alice not authenticated: password not changed" in m for m in log), log


def test_update_after_passed_prelim_still_changes(tree):
    """The same stack with the right current password: the change goes through."""
    tree.write("/etc/pam.d/hs-review",
               "auth required pam_hardened_shadow.so\n"
               "password optional pam_hardened_shadow.so\n"
               "password required pam_permit.so\n")
    before = shadow_of(tree, "alice")
    status, out = pamtester(tree, "hs-review", "alice",
                            "chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)",
                            script=[("Current password: ", ALICE_PW + "\n"),
                                    ("New password: ", NEW_PW + "\n"),
                                    ("Retype new password: ", NEW_PW + "\n")])
    assert status == 0 and "altered successfully" in out, out
    assert shadow_of(tree, "alice") != before
    status, out = pamtester(tree, "hs-review", "alice", "authenticate",
                            script=[("Password: ", NEW_PW + "\n")])
    assert status == 0 and "successfully authenticated" in out, out
