"""hardened-shadow-enable and -disable killed (SIGKILL, with every process of the run) at
each of their steps: before and after each rewrite of nsswitch.conf, inside and after
pwconv or pwunconv, and between the files pam-auth-update renames into /etc/pam.d.

What each kill must leave: a system on which every account still authenticates, and
one that running the same command again takes to exactly the state an uninterrupted run
leaves (nsswitch.conf, the common-* files and pam-auth-update's records, the tree or
/etc/shadow), with nothing of the killed run left behind.

The steps are reached by replacing, inside the root, the program the script runs there
(mv, pwconv, pwunconv, pam-auth-update) by a wrapper that kills the whole run before or
after the real program, or that runs the real program under strace, which kills it
instead of letting its K-th rename happen (the rename is not made), and then kills the
run.  The root is the usual sandbox with our build installed (meson install puts the
commands, the profile and the modules where the package does)."""

import os

import pytest

import sandbox

ALICE_PW = "Alice-enable-pw-1"
# a fixed salt, so that /etc/shadow after disable is the same bytes in every root
ALICE_HASH = ("$6$enablesalt$4E4va/g7XQESoLeMIksVahOWPFEdCPuEVzft5KuJse2/n5dYivi3.G1ESTwl"
              "0XIQ87cxbv2jLkbiYWKZO/9.p0")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
PAM_TYPES = ("auth", "account", "password", "session", "session-noninteractive")
STATE_FILES = (["/etc/nsswitch.conf", "/var/lib/hardened-shadow/nsswitch-shadow",
                "/etc/shadow"] + ["/etc/pam.d/common-" + t for t in PAM_TYPES] +
               ["/var/lib/pam/" + t for t in PAM_TYPES])
REAL = ".hs-real"
RENAMES = "rename,renameat,renameat2"

# The wrapper.  KILL_AT: before | after | a number K (the K-th rename of the real
# program is refused and the program killed; if it makes fewer, as after).  A wrapped mv
# counts only its moves onto nsswitch.conf and acts on the N-th (NTH).
WRAPPER = """#!/bin/sh
real=%(real)s
if [ %(is_mv)s = yes ]; then
	case "$*" in
	*/nsswitch.conf) ;;
	*) exec "$real" "$@" ;;
	esac
	n=$(( $(cat /run/hs-mv-count 2>/dev/null || echo 0) + 1 ))
	echo "$n" > /run/hs-mv-count
	[ "$n" = %(nth)d ] || exec "$real" "$@"
fi
case %(kill_at)s in
before) kill -KILL 0 ;;
after) "$real" "$@"; kill -KILL 0 ;;
*) strace -f -qq -o /dev/null -e trace=%(renames)s \\
	-e inject=%(renames)s:error=EINTR:signal=KILL:when=%(kill_at)s "$real" "$@"
   kill -KILL 0 ;;
esac
"""

PROGRAMS = {"mv": "/usr/bin/mv", "pwconv": "/usr/sbin/pwconv",
            "pwunconv": "/usr/sbin/pwunconv", "pam-auth-update": "/usr/sbin/pam-auth-update"}

# (program, kill_at, nth mv) for each direction, in the order the script reaches them
ENABLE_KILLS = ([("mv", "before", 1), ("mv", "after", 1)] +
                [("pwconv", k, 0) for k in ("1", "2", "3", "after")] +
                [("pam-auth-update", str(k), 0) for k in range(1, 11)] +
                [("pam-auth-update", "after", 0), ("mv", "after", 2)])
DISABLE_KILLS = ([("pam-auth-update", str(k), 0) for k in range(1, 11)] +
                 [("pam-auth-update", "after", 0), ("mv", "after", 1)] +
                 [("pwunconv", k, 0) for k in ("1", "2", "3", "after")] +
                 [("mv", "after", 2)])


def run(sb, argv, **kw):
    return sb.run(argv, env=ENV, timeout=120, **kw)


def prepare(base):
    """A root with alice, a classic account with a password."""
    sb = sandbox.Sandbox(base, size="512m")
    sb.add_classic_user("alice", password_hash=ALICE_HASH)
    return sb


def state(sb):
    """What an interrupted run and its second run must agree on with an uninterrupted
    one."""
    snap = {p: sb.read_bytes(p) if sb.exists(p) else None for p in STATE_FILES}
    snap["tree"] = sorted(os.listdir(sb.root + "/etc/hardened-shadow")) \
        if sb.exists("/etc/hardened-shadow") else None
    return snap


def litter(sb):
    """Files a killed run may leave that a finished one must not."""
    found = []
    for d in ("/etc", "/etc/pam.d", "/var/lib/pam", "/etc/hardened-shadow"):
        if not sb.exists(d):
            continue
        for name in os.listdir(sb.root + d):
            if (name.startswith("nsswitch.conf.") or name.endswith(".pam-new") or
                    name.endswith(".new") or name.startswith(".new.") or
                    name.startswith(".del.") or name.startswith("shadow.") or
                    name.startswith("passwd.") or name.startswith("+")):
                found.append(d + "/" + name)
    return found


def authenticates(sb, user, pw):
    status, out = sb.pty_run(["/usr/bin/pamtester", "login", user, "authenticate",
                              "acct_mgmt"], [("Password: ", pw + "\n")])
    return status == 0 and "successfully authenticated" in out, out


def wrap(sb, program, kill_at, nth):
    path = PROGRAMS[program]
    os.rename(sb.root + path, sb.root + path + REAL)
    sb.write(path, WRAPPER % {"real": path + REAL, "is_mv": "yes" if program == "mv" else "no",
                              "nth": nth, "kill_at": kill_at, "renames": RENAMES},
             mode=0o755)


def unwrap(sb, program):
    path = PROGRAMS[program]
    os.rename(sb.root + path + REAL, sb.root + path)


@pytest.fixture(scope="module")
def finished(base):
    """The state an uninterrupted enable leaves, and an uninterrupted disable after it."""
    with prepare(base) as sb:
        run(sb, ["hardened-shadow-enable"])
        enabled = state(sb)
        run(sb, ["hardened-shadow-disable"])
        disabled = state(sb)
    assert enabled["tree"] and enabled["/etc/shadow"] is None
    assert disabled["tree"] is None and disabled["/etc/shadow"]
    return {"hardened-shadow-enable": enabled, "hardened-shadow-disable": disabled}


def kill_and_rerun(base, finished, command, program, kill_at, nth):
    with prepare(base) as sb:
        if command == "hardened-shadow-disable":
            run(sb, ["hardened-shadow-enable"])
        wrap(sb, program, kill_at, nth)
        res = run(sb, [command], check=False)
        unwrap(sb, program)
        assert res.returncode == -9, ("the kill did not happen", res)
        ok, out = authenticates(sb, "alice", ALICE_PW)
        assert ok, ("alice cannot log in after the kill", out)
        res = run(sb, [command], check=False)
        assert res.returncode == 0, res
        got = state(sb)
        want = finished[command]
        assert got == want, [k for k in want if got[k] != want[k]]
        assert litter(sb) == []
        ok, out = authenticates(sb, "alice", ALICE_PW)
        assert ok, out


@pytest.mark.parametrize("program,kill_at,nth", ENABLE_KILLS)
def test_enable_killed(base, finished, program, kill_at, nth):
    kill_and_rerun(base, finished, "hardened-shadow-enable", program, kill_at, nth)


@pytest.mark.parametrize("program,kill_at,nth", DISABLE_KILLS)
def test_disable_killed(base, finished, program, kill_at, nth):
    kill_and_rerun(base, finished, "hardened-shadow-disable", program, kill_at, nth)
