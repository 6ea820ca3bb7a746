#!/usr/bin/python3
"""`groupadd NAME` and `gpasswd -a USER GROUP` with 1,000 and 10,000 existing groups: ours
against Debian's shadow-utils, in a sandbox root (tests/sandbox), never on the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/groups.py BUILDDIR

For each size N a fresh sandbox gets N generated users, each with a private group of the
same name and id (written directly as /etc/passwd, /etc/shadow, /etc/group and
/etc/gshadow lines after the root's own; ids inside GID_MIN..GID_MAX, so groupadd scans
them when picking the next gid).  The group tools work on the global files only, so both
run on the same classic files, generated again from scratch before each tool's turn.

- groupadd: HS_BENCH_CALLS (default 20) distinct new groups, one at a time;
- gpasswd -a: HS_BENCH_CALLS calls, each adding a different generated user to a
  different generated group.

One `python3` driver inside the root times every call with the same fork+exec, so the
launch cost is the same for both; it is measured the same way with /bin/true and printed
separately, nothing subtracted.  Every call's effect is checked afterwards (a tool that did
less would be timed for less).  Printed next to each: the floor measured in the same root
by the same driver, bench-noop (a static no-op: the launch cost) and bench-floor (static:
reads /etc/group and /etc/gshadow, writes each to a temp, fsync, rename; bench/floor.c).
Everything is measured HS_BENCH_ROUNDS times (default 3), the files generated again each
round and the two suites' order swapped every other round, so that a burst of load on a
shared machine lands in one round, not on one suite.  Reported: per call the median over
the rounds of each round's median ms, the ratio shadow-utils / ours (the median of the
rounds' ratios, each round's printed below the table) and shadow-utils / floor (the best
ratio any tool could reach).  Target at 10,000: ours at least 10x faster for both; a
missed target is reported, and fails the script only with HS_BENCH_STRICT=1."""

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
TARGET_RATIO = 10.0
GROUP_FILES = ("/etc/group", "/etc/gshadow")
TOOLS = {
    "groupadd": ("/usr/sbin/groupadd", sandbox.CLASSIC_TOOLS_DIR + "/groupadd"),
    "gpasswd": ("/usr/bin/gpasswd", sandbox.CLASSIC_TOOLS_DIR + "/gpasswd"),
}

# Runs inside the root: argv CALLS times, with "{i}" in an argument replaced by the call
# number (formatted as written there), "{u}" and "{g}" by 2i+1 and 2i as six digits;
# per call one line "WALL_MS CPU_MS" (CPU: the child's user + system time, which a busy
# machine disturbs less than the wall clock).
DRIVER = r"""
import resource, subprocess, sys, time
calls, argv = int(sys.argv[1]), sys.argv[2:]
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for i in range(calls):
    args = [a.format(i=i, u="%06d" % (2 * i + 1), g="%06d" % (2 * i)) for a in argv]
    c = cpu()
    t = time.perf_counter()
    r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(args), r.returncode,
                                       r.stderr.decode(errors="replace").strip()))
    print("%.4f %.4f" % (dt * 1000, (cpu() - c) * 1000))
"""


def timed_calls(sb, argv):
    """(median wall ms, median CPU ms) of CALLS calls."""
    res = sb.run(["/usr/bin/python3", "-c", DRIVER, str(CALLS)] + argv, timeout=600)
    rows = [tuple(float(x) for x in l.split()) for l in res.stdout.splitlines()]
    if len(rows) != CALLS or any(len(r) != 2 for r in rows):
        raise SystemExit("groups.py: unexpected driver output:\n%s%s" % (res.stdout,
                                                                         res.stderr))
    return median(r[0] for r in rows), median(r[1] for r in rows)


def table(sb, path):
    return {l.split(":")[0]: l.split(":") for l in sb.read(path).splitlines()}


def check_groupadd(sb, prefix):
    group, gshadow = table(sb, "/etc/group"), table(sb, "/etc/gshadow")
    for i in range(CALLS):
        name = "%s%03d" % (prefix, i)
        if name not in group or name not in gshadow:
            raise SystemExit("groups.py: %s: no group/gshadow line after groupadd" % name)


def check_gpasswd(sb):
    group, gshadow = table(sb, "/etc/group"), table(sb, "/etc/gshadow")
    for i in range(CALLS):
        g, u = "bu%06d" % (2 * i), "bu%06d" % (2 * i + 1)
        for what, t in (("group", group), ("gshadow", gshadow)):
            if t[g][3].split(",") != [u]:
                raise SystemExit("groups.py: %s not a member of %s in %s after gpasswd -a"
                                 % (u, g, what))


def measure_round(sb, cache, build, n, swapped):
    """One round: (wall ms, cpu ms) of the floor and of each tool of each suite."""
    r = {}
    order = (("ours", 0), ("shadow", 1))
    for who, idx in reversed(order) if swapped else order:
        write_accounts(sb, cache, n)
        if who == "ours":
            r["floor"] = timed_calls(sb, floor_argv(build, sb, GROUP_FILES))
        prefix = "hs" if who == "ours" else "su"
        r["groupadd", who] = timed_calls(sb, [TOOLS["groupadd"][idx], prefix + "{i:03d}"])
        check_groupadd(sb, prefix)
        write_accounts(sb, cache, n)
        # user 2i+1 into group 2i: a different pair every call
        r["gpasswd", who] = timed_calls(sb, [TOOLS["gpasswd"][idx], "-a", "bu{u}", "bu{g}"])
        check_gpasswd(sb)
    return r


def summarize(row, per_round):
    """Medians over the rounds into row; row[cmd, "ratios"]: each round's wall ratio."""
    def med2(key):
        return (median(r[key][0] for r in per_round), median(r[key][1] for r in per_round))
    row["floor"] = med2("floor")
    for cmd in ("groupadd", "gpasswd"):
        for who in ("ours", "shadow"):
            row[cmd, who] = med2((cmd, who))
        row[cmd, "ratios"] = [r[cmd, "shadow"][0] / r[cmd, "ours"][0] for r in per_round]


def main():
    build = start("groups.py", ("src/admin/groupadd", "src/admin/gpasswd") + FLOOR_PROGRAMS)
    if CALLS * 2 > min(SIZES) or CALLS > 1000:
        print("groups.py: HS_BENCH_CALLS must be at most half the smallest size and 1000",
              file=sys.stderr)
        return 2

    t0 = time.monotonic()
    rows = []
    base = sandbox.Base(build)
    try:
        for n in SIZES:
            t = time.monotonic()
            row = {"n": n}
            per_round = []
            with sandbox.Sandbox(base) as sb:
                cache = {}
                row["true"] = timed_calls(sb, ["/bin/true"])[0]
                row["noop"] = timed_calls(sb, noop_argv(build))[0]
                for rnd in range(ROUNDS):
                    per_round.append(measure_round(sb, cache, build, n, swapped=rnd % 2 == 1))
            summarize(row, per_round)
            rows.append(row)
            print("groups.py: N=%d measured in %.1f s" % (n, time.monotonic() - t),
                  file=sys.stderr, flush=True)
    finally:
        base.close()

    print("median of %d calls each, median of %d rounds; ratio = shadow-utils / ours (median "
          "of the rounds' ratios), best = shadow-utils / floor; wall = elapsed time, cpu = the "
          "call's user + system time" % (CALLS, ROUNDS))
    print("%7s %-22s %13s %8s %8s %7s %7s %7s %12s %8s %8s %7s" % (
        "groups", "command", "shadow-utils", "ours", "floor", "noop", "ratio", "best",
        "shadow-utils", "ours", "floor", "ratio"))
    print("%7s %-22s %13s %8s %8s %7s %7s %7s %12s %8s %8s %7s" % (
        "", "", "wall ms", "wall ms", "wall ms", "wall ms", "wall", "wall", "cpu ms",
        "cpu ms", "cpu ms", "cpu"))
    missed = []
    for row in rows:
        for cmd, label in (("groupadd", "groupadd NAME"), ("gpasswd", "gpasswd -a USER GROUP")):
            (sw, sc), (ow, oc), (fw, fc) = row[cmd, "shadow"], row[cmd, "ours"], row["floor"]
            print("%7d %-22s %13.2f %8.2f %8.2f %7.2f %6.1fx %6.1fx %12.2f %8.2f %8.2f %6.1fx"
                  % (row["n"], label, sw, ow, fw, row["noop"], median(row[cmd, "ratios"]),
                     sw / fw, sc, oc, fc, sc / max(oc, 0.001)))
    for row in rows:
        for cmd in ("groupadd", "gpasswd"):
            print("%7d %s: wall ratio per round: %s" % (
                row["n"], cmd, " ".join("%.1fx" % x for x in row[cmd, "ratios"])))
    for row in rows:
        if row["n"] != TARGET_AT:
            continue
        for cmd in ("groupadd", "gpasswd"):
            ratio = median(row[cmd, "ratios"])
            met = ratio >= TARGET_RATIO
            if not met:
                missed.append(cmd)
            print("at %d groups: %s shadow-utils / ours = %.1fx wall (target >= %.0fx): %s" %
                  (TARGET_AT, cmd, ratio, TARGET_RATIO, "TARGET MET" if met else "TARGET MISSED"))
    print("(floor = bench-floor: static, reads /etc/group and /etc/gshadow and writes each back "
          "(temp, fsync, rename), launch included; noop = a static no-op; all timed with the "
          "same fork+exec inside the root; /bin/true costs %.2f ms wall; nothing subtracted; "
          "total %.0f s)" % (rows[-1]["true"], time.monotonic() - t0))
    if missed:
        print("groups.py: TARGET MISSED at %d groups: %s" % (TARGET_AT, ", ".join(missed)),
              file=sys.stderr)
        if os.environ.get("HS_BENCH_STRICT") == "1":
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
