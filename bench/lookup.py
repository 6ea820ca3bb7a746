#!/usr/bin/python3
"""getspnam() through glibc's `files` backend (/etc/shadow) and through
libnss_hardened_shadow.so.2 (/etc/hardened-shadow), at 100 .. 100,000 users, in one
throwaway root.  Never touches the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/lookup.py BUILDDIR

For each size N the root holds N generated accounts both as /etc/shadow lines (appended
after the root's own, so the last generated user is the worst case for a linear scan) and
as per-user directories.  bench-getspnam (BUILDDIR/bench) loops getspnam() for ~0.5 s for
the last user and for a missing user, once per backend.  Target: hardened_shadow at most
10 us per call at every size (reported, fatal only with HS_BENCH_STRICT=1).

The root is the host's "/" bound read-only, with a fresh tmpfs on /etc (a copy of the
host's /etc, then the generated accounts), /run and /tmp: path lookups cost what they cost
on a real machine.  The test sandbox's overlay of "/" would add about 1 us to every open()
for both backends and measure the harness instead.  Our NSS module is loaded by glibc
through nsswitch.conf, found with LD_LIBRARY_PATH=BUILDDIR/nss (the host has no installed
copy)."""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sandbox"))

import sandbox  # noqa: E402

SIZES = tuple(int(x) for x in os.environ.get("HS_BENCH_SIZES", "100,1000,10000,100000").split(","))
SECONDS = "1"
TARGET_US = 10.0
MISSING = "nosuchuser"
FIRST_UID = 200000
TREE_GID = 60990   # stand-ins for the two groups: only numbers matter here
AUTH_GID = 60991

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


def bench(root, prog, source, user):
    root.set_nsswitch_shadow(source)
    res = root.run([prog, user, SECONDS])
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
    if not os.access(prog, os.X_OK) or not os.path.exists(
            os.path.join(build, "nss", "libnss_hardened_shadow.so.2")):
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
    with BenchRoot(build) as root:
        have = 0
        for n in SIZES:
            t = time.monotonic()
            root.run(["/usr/bin/python3", "-c", GENERATOR, str(have), str(n),
                      str(AUTH_GID), str(FIRST_UID)])
            have = n
            gen_s = time.monotonic() - t
            last = "bu%06d" % (n - 1)
            for label, user in (("last", last), ("missing", MISSING)):
                files_us = bench(root, prog, "files", user)
                hs_us = bench(root, prog, "hardened_shadow", user)
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


class BenchRoot:
    """A root for measuring: host "/" read-only + tmpfs /etc, /run, /tmp.

    Only usable in a private mount namespace (sandbox.require_private_mount_ns); every
    mount lives under a mkdtemp directory and is gone with the namespace."""

    def __init__(self, build):
        self.build = build
        self.top = tempfile.mkdtemp(prefix="hs-bench-")
        self.root = os.path.join(self.top, "root")
        os.mkdir(self.root)
        mount = ["mount", "--make-private"]
        subprocess.run(["mount", "--bind", "/", self.root], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", self.root], check=True)
        subprocess.run(mount + [self.root], check=True)
        for d, size in (("etc", "3g"), ("run", "64m"), ("tmp", "64m")):
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "hs-bench",
                            os.path.join(self.root, d)], check=True)
        subprocess.run(["mount", "-t", "proc", "proc", os.path.join(self.root, "proc")],
                       check=True)
        # a checkout under /tmp would be hidden by the fresh /tmp above
        sandbox.show_at_host_path(self.root, (build,))
        etc = os.path.join(self.root, "etc")
        subprocess.run(["cp", "-a", "/etc/.", etc], check=True)
        # no host hashes in the copy: a shadow file with root's line only
        with open(os.path.join(etc, "shadow"), "w") as f:
            f.write("root:*:19000:0:99999:7:::\n")
        os.chmod(os.path.join(etc, "shadow"), 0o640)
        tree = os.path.join(etc, "hardened-shadow")
        os.mkdir(tree)
        os.chown(tree, 0, TREE_GID)
        os.chmod(tree, 0o710)

    def run(self, argv):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
               "LD_LIBRARY_PATH": os.path.join(self.build, "nss")}
        return subprocess.run(["chroot", self.root] + argv, env=env, check=True,
                              capture_output=True, text=True, timeout=600)

    def set_nsswitch_shadow(self, source):
        path = os.path.join(self.root, "etc", "nsswitch.conf")
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if not l.startswith("shadow:")]
        lines.append("shadow: " + source)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-R", self.root], check=False)
        os.rmdir(self.root)
        os.rmdir(self.top)
        return False


if __name__ == "__main__":
    sys.exit(main())
