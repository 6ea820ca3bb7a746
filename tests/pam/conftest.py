"""Fixtures for the PAM module tests: one sandbox root for the whole run (building roots is
the slow part), with users in every account state converted to /etc/hardened-shadow.
Run through tests/pam/run-pam-tests BUILDDIR (private mount namespace, host /etc guard)."""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sandbox"))

import sandbox  # noqa: E402



def _today_for_the_run(margin=120):
    """Today's day number, for users aged relative to it.  A run that would cross midnight
    UTC sees the module count from tomorrow ("expires in 4 days" instead of 5): started
    less than margin seconds before it (the run takes about 15 s, meson allows 300), it
    waits until the day has changed."""
    left = 86400 - time.time() % 86400
    if left < margin:
        time.sleep(left + 1)
    return int(time.time()) // 86400


TODAY = _today_for_the_run()
PASSWORD = "Corr3ct-horse"

# name -> add_classic_user fields (state before pwconv)
USERS = {
    "alice": {},
    "bob": {},
    "carol": {},
    "pwchange": {},
    "pwchange2": {},
    "pwq": {},
    "nsp": {},
    "firstpass": {},
    "racer": {},
    "emptyuser": {"password_hash": ""},
    "locked": {"password_hash": "!" + sandbox._crypt(PASSWORD)},
    "star": {"password_hash": "*"},
    "expired": {"expiredate": 1},
    "mustchange": {"lastday": 0},
    "aged": {"lastday": TODAY - 20, "maxdays": 10},
    "inactive": {"lastday": TODAY - 30, "maxdays": 10, "inactive": 5},
    "warned": {"lastday": TODAY - 5, "maxdays": 10, "warndays": 7},
    "warned1": {"lastday": TODAY - 9, "maxdays": 10, "warndays": 7},
    "young": {"lastday": TODAY, "mindays": 5},
    "noaging": {},
    "hostileaging": {},
    "legacy": {"password_hash": sandbox._crypt(PASSWORD, "$1$")},
    "weak": {"password_hash": sandbox._crypt(PASSWORD, "$6$")},
    "weakuser": {"password_hash": sandbox._crypt(PASSWORD, "$6$")},
    "symlinked": {},
}


@pytest.fixture(scope="session")
def build_dir():
    build = os.environ.get("HS_BUILD_DIR")
    if not build:
        pytest.fail("HS_BUILD_DIR is not set: run tests/pam/run-pam-tests BUILDDIR")
    return os.path.realpath(build)


@pytest.fixture(scope="session")
def root(build_dir):
    try:
        sandbox.require_private_mount_ns()
    except sandbox.SandboxError as e:
        pytest.fail(str(e))
    base = sandbox.Base(build_dir)
    sb = sandbox.Sandbox(base, size="512m")
    try:
        for name, fields in USERS.items():
            fields = dict(fields)
            if "password_hash" not in fields:
                fields["password"] = PASSWORD
            fields.setdefault("create_home", False)
            sb.add_classic_user(name, **fields)
        sb.use_hardened_tree()
        sb.run(["mkdir", "-p", "/etc/hs-pamtest"])
        yield sb
    finally:
        sb.close()
        base.close()
