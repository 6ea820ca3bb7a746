#!/usr/bin/python3
"""`useradd NAME`, then `usermod -c COMMENT NAME` and `userdel NAME` on the users just
added, with 1,000 and 10,000 existing users and groups: our tools against Debian's
shadow-utils, in a sandbox root (tests/sandbox), never on the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/useradd.py BUILDDIR

For each size N a fresh sandbox gets N generated users, each with a private group of the
same name and id, written directly as /etc/passwd, /etc/shadow, /etc/group and
/etc/gshadow lines after the root's own (ids inside UID_MIN..UID_MAX, so both tools scan
them when picking the next id).  login.defs has USERGROUPS_ENAB yes, so every call also
creates a private group.  No home directories (-M is the default without CREATE_HOME;
both tools run with the same login.defs).

- shadow-utils: /usr/libexec/hs-test/shadow-utils/useradd (Debian's copy) on the classic
  root;
- ours: the files are generated again from scratch, our /usr/sbin/pwconv moves the
  hashes into /etc/hardened-shadow (not timed), then /usr/sbin/useradd.

Each useradd adds HS_BENCH_CALLS (default 20) distinct users, one at a time; then the
same tool's usermod -c changes each of them, then its userdel deletes each of them (with
USERGROUPS_ENAB yes, the private group too).  One `python3` driver inside the root times
every call with the same fork+exec, so the launch cost is the same for both.  That cost is
measured the same way with /bin/true and printed separately; nothing is subtracted.
Printed next to each: the floor measured in the same root by the same driver,
bench-noop (a static no-op: the launch cost) and bench-floor (static: reads the global
files the tool changes, writes each to a temp, fsync, rename; bench/floor.c).
Everything is measured HS_BENCH_ROUNDS times (default 3), each round in a fresh root with
the two suites' order swapped every other round, so that a burst of load on a shared
machine lands in one round, not on one suite.  Reported: per call the median over the
rounds of each round's median ms, the ratio shadow-utils / ours (the median of the rounds'
ratios, each round's printed below the table), and shadow-utils / floor (the best ratio any
tool could reach).  Targets at 10,000 (Debian's shadow 4.13 takes about
24 ms and 329 ms for useradd here, the latter from a quadratic gshadow scan): useradd at
least 30x, usermod -c and userdel at least 10x.  A missed target is reported; it fails the
script only with HS_BENCH_STRICT=1 (as bench/lookup.py)."""

import os
import sys
import time

from benchlib import FLOOR_PROGRAMS, floor_argv, median, noop_argv, start, \
    write_accounts  # noqa: E402
import sandbox  # noqa: E402

SIZES = tuple(int(x) for x in os.environ.get("HS_BENCH_SIZES", "1000,10000").split(","))
CALLS = int(os.environ.get("HS_BENCH_CALLS", "20"))
ROUNDS = max(1, int(os.environ.get("HS_BENCH_ROUNDS", "3")))
TARGET_AT = 10000
TARGET_RATIO = {"useradd": 30.0, "usermod -c": 10.0, "userdel": 10.0}
# (label, shadow-utils argv, our argv, the global files ours changes): each call
# appends a user name
USER_FILES = ("/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid")
TOOLS = (
    ("useradd", [sandbox.CLASSIC_TOOLS_DIR + "/useradd"], ["/usr/sbin/useradd"], USER_FILES),
    ("usermod -c", [sandbox.CLASSIC_TOOLS_DIR + "/usermod", "-c", "bench"],
     ["/usr/sbin/usermod", "-c", "bench"], ("/etc/passwd",)),
    ("userdel", [sandbox.CLASSIC_TOOLS_DIR + "/userdel"], ["/usr/sbin/userdel"], USER_FILES),
)

# Runs inside the root: time `argv... NAME` for CALLS distinct names (prefix "-": argv
# alone, the floor programs); prints one duration in ms per line.  The same fork+exec for
# every tool.
DRIVER = r"""
import subprocess, sys, time
calls, prefix, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
for i in range(calls):
    name = "%s%03d" % (prefix, i)
    t = time.perf_counter()
    r = subprocess.run(argv + ([name] if prefix != "-" else []), stdin=subprocess.DEVNULL,
                       capture_output=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("%s %s: exit %d: %s" % (" ".join(argv), name, r.returncode,
                                         r.stderr.decode(errors="replace").strip()))
    print("%.4f" % (dt * 1000))
"""


def set_usergroups(sb):
    defs = sb.read("/etc/login.defs")
    sb.write("/etc/login.defs", "".join(
        l for l in defs.splitlines(True) if not l.split()[:1] == ["USERGROUPS_ENAB"])
        + "USERGROUPS_ENAB yes\n", mode=0o644)


def timed_calls(sb, prefix, argv):
    res = sb.run(["/usr/bin/python3", "-c", DRIVER, str(CALLS), prefix] + argv,
                 timeout=600)
    times = sorted(float(x) for x in res.stdout.split())
    if len(times) != CALLS:
        raise SystemExit("useradd.py: unexpected driver output:\n%s%s" %
                         (res.stdout, res.stderr))
    return times[len(times) // 2] if CALLS % 2 else \
        (times[CALLS // 2 - 1] + times[CALLS // 2]) / 2


def check_done(sb, label, prefix, tree):
    """After useradd every user has a passwd line, a private group (group and gshadow)
    and its hash where the tool keeps it; after usermod -c the new comment; after userdel
    none of it.  A tool that did less would be timed for less."""
    passwd = sb.read("/etc/passwd")
    group = sb.read("/etc/group")
    gshadow = sb.read("/etc/gshadow")
    shadow = "" if tree else sb.read("/etc/shadow")
    for i in range(CALLS):
        name = "%s%03d" % (prefix, i)
        gone = label == "userdel"
        for what, text in (("passwd", passwd), ("group", group), ("gshadow", gshadow)) + \
                (() if tree else (("shadow", shadow),)):
            if ("\n%s:" % name in "\n" + text) == gone:
                raise SystemExit("useradd.py: %s: %s entry %s after %s" %
                                 (name, what, "left" if gone else "missing", label))
        if label == "usermod -c" and not any(l.startswith(name + ":") and
                                             l.split(":")[4] == "bench"
                                             for l in passwd.splitlines()):
            raise SystemExit("useradd.py: %s: comment not set by usermod -c" % name)
        if tree and sb.exists("/etc/hardened-shadow/%s/shadow" % name) == gone:
            raise SystemExit("useradd.py: %s: tree directory %s after %s" %
                             (name, "left" if gone else "missing", label))


def measure_round(base, build, n, swapped):
    """One round in a fresh root: median ms of /bin/true, the no-op, and per tool the
    floor and each suite."""
    r = {"floor": {}, "shadow": {}, "ours": {}}
    with sandbox.Sandbox(base) as sb:
        cache = {}
        set_usergroups(sb)
        r["true"] = timed_calls(sb, "tr", ["/bin/true"])
        r["noop"] = timed_calls(sb, "-", noop_argv(build))
        for who in ("ours", "shadow") if swapped else ("shadow", "ours"):
            write_accounts(sb, cache, n)
            if who == "shadow":
                for label, argv, _, _ in TOOLS:
                    r["shadow"][label] = timed_calls(sb, "su", argv)
                    check_done(sb, label, "su", tree=False)
                continue
            # ours: the same accounts from scratch, converted with our pwconv
            sb.run(["/usr/sbin/pwconv"], timeout=600)
            if sb.exists("/etc/shadow") or not sb.exists(
                    "/etc/hardened-shadow/bu%06d/shadow" % (n - 1)):
                raise SystemExit("useradd.py: pwconv did not make the tree")
            for label, _, argv, files in TOOLS:
                # the floor on the files as this tool finds them
                r["floor"][label] = timed_calls(sb, "-", floor_argv(build, sb, files))
                r["ours"][label] = timed_calls(sb, "hs", argv)
                check_done(sb, label, "hs", tree=True)
    return r


def main():
    build = start("useradd.py", ("src/admin/useradd", "src/admin/usermod", "src/admin/userdel")
                  + FLOOR_PROGRAMS)

    t0 = time.monotonic()
    rows = []
    base = sandbox.Base(build)
    try:
        for n in SIZES:
            t = time.monotonic()
            per_round = [measure_round(base, build, n, swapped=rnd % 2 == 1)
                         for rnd in range(ROUNDS)]
            for label, _, _, _ in TOOLS:
                def med(key, label=label):
                    return median(r[key][label] if isinstance(r[key], dict) else r[key]
                                  for r in per_round)
                rows.append((n, label, med("true"), med("noop"), med("floor"), med("shadow"),
                             med("ours"), [r["shadow"][label] / r["ours"][label]
                                           for r in per_round]))
            print("useradd.py: N=%d measured in %.1f s" % (n, time.monotonic() - t),
                  file=sys.stderr, flush=True)
    finally:
        base.close()

    print("useradd NAME, usermod -c bench NAME, userdel NAME (USERGROUPS_ENAB yes), "
          "median of %d calls each, median of %d rounds" % (CALLS, ROUNDS))
    print("%6s %-10s %13s %8s %9s %8s %8s %7s %7s %8s" % (
        "users", "tool", "shadow-utils", "ours", "floor", "noop", "true", "ratio",
        "best", "ours/"))
    print("%6s %-10s %13s %8s %9s %8s %8s %7s %7s %8s" % (
        "", "", "ms", "ms", "ms", "ms", "ms", "", "", "floor"))
    missed = []
    for n, label, true_ms, noop_ms, floor_ms, shadow_ms, ours_ms, ratios in rows:
        print("%6d %-10s %13.2f %8.2f %9.2f %8.2f %8.2f %6.1fx %6.1fx %7.2fx" % (
            n, label, shadow_ms, ours_ms, floor_ms, noop_ms, true_ms, median(ratios),
            shadow_ms / floor_ms, ours_ms / floor_ms))
    for n, label, *_, ratios in rows:
        print("%6d %s: ratio per round: %s" % (n, label, " ".join("%.1fx" % x for x in ratios)))
    for n, label, *_, ratios in rows:
        if n == TARGET_AT:
            met = median(ratios) >= TARGET_RATIO[label]
            if not met:
                missed.append(label)
            print("at %d users: %s shadow-utils / ours = %.1fx (target >= %.0fx): %s" %
                  (n, label, median(ratios), TARGET_RATIO[label],
                   "TARGET MET" if met else "TARGET MISSED"))
    print("(ratio = shadow-utils / ours; best = shadow-utils / floor, the most any tool could "
          "reach; floor = bench-floor: static, reads the global files the tool changes and "
          "writes each back (temp, fsync, rename), launch included; noop = a static no-op; "
          "all timed with the same fork+exec inside the root, nothing subtracted; total "
          "%.0f s)" % (time.monotonic() - t0))
    if missed:
        print("useradd.py: TARGET MISSED at %d users: %s" % (TARGET_AT, ", ".join(missed)),
              file=sys.stderr)
        if os.environ.get("HS_BENCH_STRICT") == "1":
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
