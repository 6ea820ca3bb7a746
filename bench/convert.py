"""bench/convert.py BUILDDIR: time pwconv and pwunconv on 100,000 generated users in a
throwaway root.  Must run in a private mount namespace (bench/run does
`unshare --mount --propagation private --fork`), like the system tests."""

import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "sandbox"))
sys.path.insert(0, os.path.join(here, "..", "tests", "system"))

import sandbox  # noqa: E402
from test_convert import add_generated, parse_shadow  # noqa: E402

USERS = 100000


def timed(sb, argv):
    t0 = time.monotonic()
    sb.run(argv, timeout=3600)
    return time.monotonic() - t0


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HS_BUILD_DIR", "build")
    sandbox.require_private_mount_ns()
    base = sandbox.Base(build)
    try:
        with sandbox.Sandbox(base, size="4g") as sb:
            add_generated(sb, USERS)
            before = parse_shadow(sb.read("/etc/shadow"))
            conv = timed(sb, ["/usr/sbin/pwconv"])
            unconv = timed(sb, ["/usr/sbin/pwunconv"])
            if parse_shadow(sb.read("/etc/shadow")) != before:
                sys.exit("convert bench: the round trip changed /etc/shadow")
            # the classic tool for comparison: shadow-utils' pwconv re-syncing /etc/shadow
            classic = timed(sb, ["/usr/libexec/hs-test/shadow-utils/pwconv"])
            print("users:                      %d (tmpfs root)" % len(before))
            print("pwconv   (hardened-shadow): %.2f s" % conv)
            print("pwunconv (hardened-shadow): %.2f s" % unconv)
            print("pwconv   (shadow-utils, re-sync of /etc/shadow): %.2f s" % classic)
    finally:
        base.close()


if __name__ == "__main__":
    main()
