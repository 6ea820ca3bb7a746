"""Fixtures for the system tests: `base` (the build installed once per session into a
tmpfs layer) and `sb` (a fresh Sandbox per test).  See tests/sandbox/README.md.

Run through tests/sandbox/run-system-tests BUILDDIR, which sets HS_BUILD_DIR and enters a
private mount namespace."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sandbox"))

import sandbox  # noqa: E402


@pytest.fixture(scope="session")
def build_dir():
    build = os.environ.get("HS_BUILD_DIR")
    if not build:
        pytest.fail("HS_BUILD_DIR is not set: run tests/sandbox/run-system-tests BUILDDIR")
    return os.path.realpath(build)


@pytest.fixture(scope="session")
def base(build_dir):
    try:
        sandbox.require_private_mount_ns()
    except sandbox.SandboxError as e:
        pytest.fail(str(e))
    b = sandbox.Base(build_dir)
    yield b
    b.close()


@pytest.fixture
def sb(base):
    with sandbox.Sandbox(base, size="1g") as s:
        yield s


@pytest.fixture
def shell_proxy_on(sb):
    """login.defs' SHELL_PROXY yes: a listed shell goes behind the shell proxy (the
    default, no, keeps the real shell in /etc/passwd; docs/decisions.md "chsh").  The
    tests of the proxy's paths use it: `pytestmark = pytest.mark.usefixtures(...)`."""
    sb.set_login_defs("SHELL_PROXY", "yes")


@pytest.fixture(scope="session")
def ldap_packages(build_dir):
    """Debian's slapd, ldap-utils and nslcd unpacked in BUILD/ldap (tools/ldap-packages):
    the directory tests skip, with the reason printed, only when they cannot be had."""
    import ldapserver
    try:
        return ldapserver.packages(build_dir)
    except ldapserver.PackagesMissing as e:
        print("SKIP: %s" % e)
        pytest.skip(str(e))
