#!/usr/bin/python3
"""getspnam() through glibc's `files` backend (/etc/shadow) and through
libnss_hardened_shadow.so.2 (/etc/hardened-shadow), at 100 .. 100,000 users, in one
throwaway root (tests/sandbox).  Never touches the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/lookup.py BUILDDIR

For each size N the root holds N generated accounts both as /etc/shadow lines (appended
after the root's own, so the last generated user is the worst case for a linear scan) and
as per-user directories.  bench-getspnam (BUILDDIR/bench) loops getspnam() for ~0.5 s for
the last user and for a missing user, once per backend.  Target: hardened_shadow at most
10 us per call at every size (reported, fatal only with HS_BENCH_STRICT=1).

The root is an overlayfs over "/", which makes every open() dearer than on a plain
ext4/tmpfs /etc; both backends pay it."""

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sandbox"))

import sandbox  # noqa: E402

SIZES = tuple(int(x) for x in os.environ.get("HS_BENCH_SIZES", "100,1000,10000,100000").split(","))
SECONDS = "0.5"
TARGET_US = 10.0
MISSING = "nosuchuser"
FIRST_UID = 200000

# Runs inside the root: append users [start, end) to /etc/shadow and the tree.
GENERATOR = r"""
import os, sys
start, end, auth_gid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
first_uid = int(sys.argv[4])
salt = "abcdefghijklmnopqrstuv"
def name(i): return "bu%06d" % i
def hash_of(i): return "$y$j9T$%s$%043d" % (salt, i)
tree = os.open("/etc/hardened-shadow", os.O_RDONLY | os.O_DIRECTORY)
aging = b"-1:99999:7:-1:-1:\n"
shell = b"/bin/bash\n"
lines = []
for i in range(start, end):
    n, uid = name(i), first_uid + i
    h = hash_of(i)
    lines.append("%s:%s:19000:0:99999:7:::\n" % (n, h))
    os.mkdir(n, 0o700, dir_fd=tree)
    d = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=tree)
    for fname, data, owner, mode in (("shadow", ("%s:19000:\n" % h).encode(), uid, 0o640),
                                     ("shell", shell, uid, 0o640),
                                     ("aging", aging, 0, 0o644)):
        fd = os.open(fname, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=d)
        os.write(fd, data)
        os.fchown(fd, owner, auth_gid)
        os.fchmod(fd, mode)
        os.close(fd)
    os.fchown(d, uid, auth_gid)
    os.fchmod(d, 0o2710)
    os.close(d)
with open("/etc/shadow", "a") as f:
    f.writelines(lines)
"""


def bench(sb, prog, source, user):
    sb.set_nsswitch_shadow(source)
    res = sb.run([prog, user, SECONDS], timeout=120)
    # "NAME found|missing CALLS calls US us/call"
    f = res.stdout.split()
    expect_found = user != MISSING
    if (f[1] == "found") != expect_found:
        raise SystemExit("lookup.py: %s via %s: expected %s, got %s" %
                         (user, source, "found" if expect_found else "missing", f[1]))
    return float(f[4])


def main():
    if len(sys.argv) != 2:
        print("usage: lookup.py BUILDDIR", file=sys.stderr)
        return 2
    build = os.path.realpath(sys.argv[1])
    prog = os.path.join(build, "bench", "bench-getspnam")
    if not os.access(prog, os.X_OK):
        print("lookup.py: %s not built" % prog, file=sys.stderr)
        return 2
    try:
        sandbox.require_private_mount_ns()
    except sandbox.SandboxError as e:
        print("lookup.py: %s" % e, file=sys.stderr)
        return 2

    t0 = time.monotonic()
    rows = []
    over_target = []
    with _closing(sandbox.Base(build)) as base:
        with sandbox.Sandbox(base, size="4g") as sb:
            # Both databases on a plain tmpfs, as on a real machine's root file
            # system: the sandbox's overlay roughly doubles the cost of every
            # open() and would measure the test harness, not the lookups.
            sb.sh("set -e; mkdir -p /etc/hardened-shadow /run/bench; "
                  "cp -p /etc/shadow /run/bench/shadow")
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3g", "hs-bench-tree",
                            sb.root + "/etc/hardened-shadow"], check=True)
            subprocess.run(["mount", "--bind", sb.root + "/run/bench/shadow",
                            sb.root + "/etc/shadow"], check=True)
            sb.sh("set -e; chown root:hardened-shadow /etc/hardened-shadow; "
                  "chmod 0710 /etc/hardened-shadow")
            auth_gid = sb.getgrnam("hardened-shadow-auth")[1]
            have = 0
            for n in SIZES:
                t = time.monotonic()
                sb.run(["/usr/bin/python3", "-c", GENERATOR, str(have), str(n), str(auth_gid),
                        str(FIRST_UID)], timeout=600)
                have = n
                gen_s = time.monotonic() - t
                last = "bu%06d" % (n - 1)
                for label, user in (("last", last), ("missing", MISSING)):
                    files_us = bench(sb, prog, "files", user)
                    hs_us = bench(sb, prog, "hardened_shadow", user)
                    rows.append((n, label, files_us, hs_us))
                    if hs_us > TARGET_US:
                        over_target.append((n, label, hs_us))
                print("lookup.py: N=%d generated in %.1f s, measured" % (n, gen_s),
                      file=sys.stderr, flush=True)

    print("%8s  %-8s %16s %20s %8s" % ("users", "lookup", "files us/call",
                                       "hardened us/call", "ratio"))
    for n, label, f_us, h_us in rows:
        print("%8d  %-8s %16.2f %20.2f %7.1fx" % (n, label, f_us, h_us, f_us / h_us))
    print("(ratio = files / hardened_shadow; target: hardened_shadow <= %.0f us/call; "
          "total %.0f s)" % (TARGET_US, time.monotonic() - t0))
    for n, label, us in over_target:
        print("lookup.py: TARGET MISSED: N=%d %s lookup took %.2f us/call (> %.0f)" %
              (n, label, us, TARGET_US), file=sys.stderr)
    # A missed target is reported, not fatal, so `make bench` goes on to the other
    # benchmarks; HS_BENCH_STRICT=1 makes it fail (for CI on known hardware).
    if over_target and os.environ.get("HS_BENCH_STRICT") == "1":
        return 1
    return 0


class _closing:
    def __init__(self, thing):
        self.thing = thing

    def __enter__(self):
        return self.thing

    def __exit__(self, *exc):
        self.thing.close()
        return False


if __name__ == "__main__":
    sys.exit(main())
