"""pam_hardened_shadow.so against inputs where pam_unix.so refuses: the application's
PAM_DISALLOW_NULL_AUTHTOK (sshd's PermitEmptyPasswords no) overriding nullok."""

import re

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
