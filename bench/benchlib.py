"""Pieces the account-tool benchmarks share (bench/useradd.py, groups.py, newusers.py):
the start-up checks, and a root with N generated classic accounts."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sandbox"))

import sandbox  # noqa: E402

FIRST_ID = 10000        # generated uids/gids: inside login.defs' UID_MIN..UID_MAX


def start(script, programs):
    """The build directory from argv, after checking that `programs` (paths below it) are
    built and that we run in a private mount namespace; exits with 2 otherwise."""
    if len(sys.argv) != 2:
        print("usage: %s BUILDDIR" % script, file=sys.stderr)
        sys.exit(2)
    build = os.path.realpath(sys.argv[1])
    for prog in programs:
        if not os.access(os.path.join(build, prog), os.X_OK):
            print("%s: %s/%s not built" % (script, build, prog), file=sys.stderr)
            sys.exit(2)
    try:
        sandbox.require_private_mount_ns()
    except sandbox.SandboxError as e:
        print("%s: %s" % (script, e), file=sys.stderr)
        sys.exit(2)
    return build


def base_lines(sb, cache, path):
    """The root's own lines of path (as the base root had them), read once."""
    if path not in cache:
        cache[path] = sb.read(path) if sb.exists(path) else ""
        if cache[path] and not cache[path].endswith("\n"):
            cache[path] += "\n"
    return cache[path]


def write_accounts(sb, cache, n, subids=False):
    """The classic files: the root's own lines + n users bu000000... with private groups
    (and, with subids, a subordinate range each in /etc/subuid and /etc/subgid)."""
    names = ["bu%06d" % i for i in range(n)]
    ids = range(FIRST_ID, FIRST_ID + n)
    passwd = "".join("%s:x:%d:%d::/home/%s:/bin/bash\n" % (u, i, i, u)
                     for u, i in zip(names, ids))
    shadow = "".join("%s:!:19000:0:99999:7:::\n" % u for u in names)
    group = "".join("%s:x:%d:\n" % (u, i) for u, i in zip(names, ids))
    gshadow = "".join("%s:!::\n" % u for u in names)
    shadow_gid = sb.getgrnam("shadow")[1]
    sb.write("/etc/passwd", base_lines(sb, cache, "/etc/passwd") + passwd, mode=0o644)
    sb.write("/etc/group", base_lines(sb, cache, "/etc/group") + group, mode=0o644)
    sb.write("/etc/shadow", base_lines(sb, cache, "/etc/shadow") + shadow, mode=0o640,
             gid=shadow_gid)
    sb.write("/etc/gshadow", base_lines(sb, cache, "/etc/gshadow") + gshadow, mode=0o640,
             gid=shadow_gid)
    if subids:
        subid = "".join("%s:%d:65536\n" % (u, 100000 + 65536 * k) for k, u in enumerate(names))
        for f in ("/etc/subuid", "/etc/subgid"):
            sb.write(f, base_lines(sb, cache, f) + subid, mode=0o644)


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


# The floor printed next to every account tool: bench-noop (a static no-op: the launch
# cost) and bench-floor FILE... (static: reads each file, writes it to a temp, fsync,
# rename, fsync the directory: the least I/O a tool changing those files must do,
# launch included).  Both are timed by the same driver as the tools.
FLOOR_PROGRAMS = ("bench/bench-noop", "bench/bench-floor")


def floor_argv(build, sb, files):
    """bench-floor's argv for those of files the root has (subuid/subgid are optional)."""
    return [os.path.join(build, "bench", "bench-floor")] + [f for f in files if sb.exists(f)]


def noop_argv(build):
    return [os.path.join(build, "bench", "bench-noop")]
