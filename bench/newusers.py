#!/usr/bin/python3
"""`newusers FILE` adding 1,000 users to 10,000 existing ones: our newusers against
Debian's shadow-utils newusers, in a sandbox root (tests/sandbox), never on the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/newusers.py BUILDDIR

A fresh sandbox gets N generated users (HS_BENCH_EXISTING, default 10,000), each with a
private group, a shadow line and subordinate uid/gid ranges, as Debian's useradd would have
left them, written directly after the root's own lines (login.defs' SUB_UID_MAX and
SUB_GID_MAX raised for both tools so that 11,000 ranges fit).  The batch holds M new users
(HS_BENCH_NEW, default 1,000), each `NAME:PASSWORD:::GECOS:/home/NAME:/bin/bash`: a new uid,
a new private group, a home directory, subordinate ranges, a password.

Both hash with the same cheap method, so the comparison is about everything else:
- shadow-utils: Debian builds newusers with PAM, so it sets each password through the PAM
  service "newusers" (common-password), which is set to `pam_unix.so sha512 rounds=1000`
  for the run;
- ours: the same files generated again, converted with our /usr/sbin/pwconv (not timed),
  then `/usr/sbin/newusers -c SHA512 -s 1000 FILE`.

One `python3` driver inside the root times the call with the same fork+exec for both.
Afterwards every new user must have its passwd, group and gshadow line, its home and a
SHA-512 hash of 1,000 rounds where the tool keeps it (a tool that did less would be timed
for less).  Reported: seconds each and the ratio shadow-utils / ours.  Target: ours at
least 10x faster.  A missed target is reported; it fails the script only with
HS_BENCH_STRICT=1 (as bench/useradd.py)."""

import os
import sys
import time

from benchlib import start, write_accounts  # noqa: E402
import sandbox  # noqa: E402

EXISTING = int(os.environ.get("HS_BENCH_EXISTING", "10000"))
NEW = int(os.environ.get("HS_BENCH_NEW", "1000"))
TARGET_RATIO = 10.0
SHADOW_NEWUSERS = sandbox.CLASSIC_TOOLS_DIR + "/newusers"
OURS_NEWUSERS = "/usr/sbin/newusers"
BATCH = "/root/newusers-batch"

# Runs inside the root: time one call; prints its duration in seconds.
DRIVER = r"""
import subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True)
dt = time.perf_counter() - t
if r.returncode != 0:
    sys.exit("%s: exit %d: %s" % (" ".join(sys.argv[1:]), r.returncode,
                                  r.stderr.decode(errors="replace").strip()[:2000]))
print("%.4f" % dt)
"""


def generate(sb, cache, n):
    """The classic files: the root's own lines + n users with private groups and
    subordinate ranges; no new user's home exists."""
    write_accounts(sb, cache, n, subids=True)
    sb.run(["/bin/rm", "-rf", "/home"])
    sb.run(["/bin/mkdir", "-m", "0755", "/home"])


def write_batch(sb, prefix, m):
    sb.write(BATCH, "".join("%s%05d:Bench-pw-%d:::Bench user %d:/home/%s%05d:/bin/bash\n"
                            % (prefix, i, i, i, prefix, i) for i in range(m)), mode=0o600)


def roomy_subids(sb):
    """11,000 ranges of 65,536 do not fit below Debian's SUB_UID_MAX (600,100,000): both
    tools get the same larger limit."""
    keys = ("SUB_UID_MAX", "SUB_GID_MAX")
    defs = sb.read("/etc/login.defs")
    sb.write("/etc/login.defs", "".join(
        l for l in defs.splitlines(True) if l.split()[:1] not in [[k] for k in keys])
        + "".join("%s 1000000000\n" % k for k in keys), mode=0o644)


def use_cheap_pam(sb):
    """Debian's newusers sets passwords through PAM: the same method and cost as ours."""
    sb.write("/etc/pam.d/common-password",
             "password required pam_unix.so sha512 rounds=1000\n", mode=0o644)


def timed(sb, argv):
    res = sb.run(["/usr/bin/python3", "-c", DRIVER] + argv, timeout=3600, check=False)
    if res.returncode != 0:
        raise SystemExit("newusers.py: %s" % (res.stderr.strip() or res.stdout))
    return float(res.stdout.split()[0])


def check_added(sb, prefix, m, tree):
    passwd = "\n" + sb.read("/etc/passwd")
    group = "\n" + sb.read("/etc/group")
    gshadow = "\n" + sb.read("/etc/gshadow")
    shadow = {} if tree else {l.split(":")[0]: l.split(":")[1]
                              for l in sb.read("/etc/shadow").splitlines()}
    homes = set(sb.run(["/bin/ls", "/home"]).stdout.split())
    for i in (0, m // 2, m - 1):
        name = "%s%05d" % (prefix, i)
        for what, text in (("passwd", passwd), ("group", group), ("gshadow", gshadow)):
            if "\n%s:" % name not in text:
                raise SystemExit("newusers.py: %s: no %s entry" % (name, what))
        h = sb.read("/etc/hardened-shadow/%s/shadow" % name).split(":")[0] if tree \
            else shadow.get(name, "")
        if not h.startswith("$6$rounds=1000$"):
            raise SystemExit("newusers.py: %s: hash %r is not SHA-512 with 1000 rounds"
                             % (name, h[:20]))
        if name not in homes:
            raise SystemExit("newusers.py: %s: no home directory" % name)
    if len([l for l in passwd.splitlines() if l.startswith(prefix)]) != m:
        raise SystemExit("newusers.py: not all %d users were added" % m)


def main():
    build = start("newusers.py", ("src/admin/newusers",))

    t0 = time.monotonic()
    base = sandbox.Base(build)
    try:
        with sandbox.Sandbox(base, size="2g") as sb:
            cache = {}
            use_cheap_pam(sb)
            roomy_subids(sb)
            generate(sb, cache, EXISTING)
            write_batch(sb, "su", NEW)
            true_s = timed(sb, ["/bin/true"])
            shadow_s = timed(sb, [SHADOW_NEWUSERS, BATCH])
            check_added(sb, "su", NEW, tree=False)
            print("newusers.py: shadow-utils measured", file=sys.stderr, flush=True)
            generate(sb, cache, EXISTING)
            sb.run(["/usr/sbin/pwconv"], timeout=600)
            if sb.exists("/etc/shadow"):
                raise SystemExit("newusers.py: pwconv did not make the tree")
            write_batch(sb, "hs", NEW)
            ours_s = timed(sb, [OURS_NEWUSERS, "-c", "SHA512", "-s", "1000", BATCH])
            check_added(sb, "hs", NEW, tree=True)
    finally:
        base.close()

    ratio = shadow_s / ours_s
    print("newusers: %d new users (home, private group, subordinate ids, SHA-512 with "
          "1,000 rounds) added to %d existing" % (NEW, EXISTING))
    print("%18s %12s %14s %8s" % ("shadow-utils s", "ours s", "/bin/true s", "ratio"))
    print("%18.3f %12.3f %14.4f %7.1fx" % (shadow_s, ours_s, true_s, ratio))
    met = ratio >= TARGET_RATIO
    print("shadow-utils / ours = %.1fx (target >= %.0fx): %s" %
          (ratio, TARGET_RATIO, "TARGET MET" if met else "TARGET MISSED"))
    print("(both timed with the same fork+exec inside the root, not subtracted; "
          "total %.0f s)" % (time.monotonic() - t0))
    if not met:
        print("newusers.py: TARGET MISSED", file=sys.stderr)
        if os.environ.get("HS_BENCH_STRICT") == "1":
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
