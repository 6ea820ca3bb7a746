"""Stress: every writer of the account files at once, for a while, with and without kills.

The requirement (DESIGN sections 4 and 11): our tools, shadow-utils' tools, systemd-sysusers,
vipw and the users' own passwd and chsh run at the same moment and no update is lost, no
name or id is doubled, no tool waits for a lock it should not wait for, and a SIGKILL at
any moment leaves a state the next tool recovers.

How: a dozen shell loops run inside one root for STRESS_SECONDS each.  Every loop owns
its own names (users, groups, the member it adds to or drops from a shared group), so
the final state is computable from its own log: each command prints its exit status and
its start and end times.  Readers (getent through NSS, pwck -r, grpck -r, chage -l as the
user) run next to them.  In the second test a killer sends SIGKILL to a random one of our
tools every KILL_EVERY seconds; the killed command's effect is then unknown (either state
is accepted), every other one must be visible.

At the end:
  - every successful command's effect is in the files, unless a later one of the same
    loop undid it (lost updates: memberships in the shared group above all);
  - no name and no uid/gid twice; /etc/group and /etc/gshadow agree; consistency.py finds
    no problem and (without kills) no leftover at all; after kills, one recovery run of
    a tool that takes the global locks leaves nothing but harmless garbage;
  - pwck -r and grpck -r, run at the end, are clean;
  - the global files and the tree keep their owners and modes;
  - no command took longer than the lock timeout, and none failed on a lock without
    saying "timed out";
  - the self-service changes of the last successful passwd and chsh are what is stored.

Not in the workload: shadow-utils' own gpasswd -a/-d.  It reads the group before it takes
the locks and writes that copy back under them, so it loses a member that any tool (its
own twin too: two loops of Debian's gpasswd on one group lose members within seconds)
added meanwhile.  Debian's usermod -a -G re-reads under the lock and is in the workload.

Knobs: HS_STRESS_SECONDS (default 12), HS_STRESS_SEED (the killer's choices),
HS_STRESS_WORKERS=ua,gb,... (only those loops), HS_STRESS_DUMP=FILE (every loop's log).
"""

import os
import random
import re
import signal
import subprocess
import threading
import time

import pytest

import consistency
import test_passwd as tp
from test_lock_window import descendants

pytestmark = pytest.mark.usefixtures("shell_proxy_on")

STRESS_SECONDS = int(os.environ.get("HS_STRESS_SECONDS", "12"))
KILL_EVERY = 0.4
LOCK_TIMEOUT_S = 15.0
CLASSIC = "/usr/libexec/hs-test/shadow-utils"
SYSUSERS = "/usr/bin/systemd-sysusers"
SS_PASSWORDS = ["Tulip-stress-%d" % i for i in range(2)]
SHELLS = ["/bin/sh", "/bin/bash"]
# chpasswd -e: distinct fixed hashes, cheap to store, easy to recognise
CP_HASHES = ["$6$stress%02d$%s" % (i, chr(65 + i) * 86) for i in range(20)]
OUR_TOOLS = {"useradd", "usermod", "userdel", "groupadd", "groupmod", "gpasswd",
             "chpasswd", "newusers", "passwd", "chsh", "vipw"}

PRELUDE = r"""
set -u
end=$(( $(date +%s) + SECONDS_ ))
op() {
    # op TAG CMD...: run CMD, print "@ TAG rc start_ns end_ns", then its output indented
    tag=$1; shift
    s=$(date +%s%N)
    "$@" >/tmp/stress.$$ 2>&1 </tmp/stress-in.$$
    rc=$?
    e=$(date +%s%N)
    echo "@ $tag $rc $s $e"
    awk '{print "  | " $0}' /tmp/stress.$$
}
feed() { printf "$@" >/tmp/stress-in.$$; }
: >/tmp/stress-in.$$
"""

# vipw's editor: v1's comment becomes the loop's current value, written in place
VIPW_EDITOR = r"""#!/bin/sh
v=$(cat /tmp/stress-vipw-val)
t=$(sed "s/^v1:\([^:]*\):\([^:]*\):\([^:]*\):[^:]*:/v1:\1:\2:\3:$v:/" "$1")
printf '%s\n' "$t" >"$1"
"""


def worker_scripts(sysusers):
    """name -> shell loop.  Members m1..m6 and users ss1, ss2, cp1, cp2, v1 exist before."""
    w = {}
    # our useradd / usermod / userdel on names ua<i>, in the shared group
    w["ua"] = r"""
i=0
while [ $(date +%s) -lt $end ]; do
    i=$((i+1))
    if [ $((i % 4)) = 0 ]; then op "add ua$i" useradd -m -G shared ua$i
    else op "add ua$i" useradd -G shared ua$i; fi
    op "comment ua$i c$i" usermod -c c$i ua$i
    if [ $((i % 3)) = 0 ]; then op "del ua$((i-1))" userdel -r ua$((i-1)); fi
done
"""
    # our groupadd / gpasswd / groupmod on groups gb<i>
    w["gb"] = r"""
i=0
while [ $(date +%s) -lt $end ]; do
    i=$((i+1))
    op "gadd gb$i" groupadd gb$i
    op "gmem+ gb$i m1" gpasswd -a m1 gb$i
    op "gmem+ gb$i m2" gpasswd -a m2 gb$i
    if [ $((i % 2)) = 1 ]; then op "gmem- gb$i m1" gpasswd -d m1 gb$i; fi
    if [ $((i % 4)) = 0 ]; then op "gren gb$i gbr$i" groupmod -n gbr$i gb$i; fi
done
"""
    # the shared group: one member per loop, added and dropped, by several tools
    for k, (add, drop) in {
            1: ("gpasswd -a m1 shared", "gpasswd -d m1 shared"),
            2: ("gpasswd -a m2 shared", "gpasswd -d m2 shared"),
            3: ("usermod -a -G shared m3", "gpasswd -d m3 shared"),
            4: ("%s/usermod -a -G shared m4" % CLASSIC, "gpasswd -d m4 shared"),
    }.items():
        w["shared%d" % k] = r"""
while [ $(date +%%s) -lt $end ]; do
    op "smem+ m%d" %s
    op "smem- m%d" %s
    op "smem+ m%d" %s
done
""" % (k, add, k, drop, k, add)
    # chpasswd -e on cp1/cp2 and newusers batches nu<i>a, nu<i>b
    w["cp"] = r"""
i=0
while [ $(date +%%s) -lt $end ]; do
    i=$((i+1)); h=$((i %% %d))
    cphash=$(sed -n "$((h+1))p" /tmp/stress-hashes)
    feed 'cp1:%%s\ncp2:%%s\n' "$cphash" "$cphash"
    op "cphash $h" chpasswd -e
    if [ $((i %% 3)) = 0 ]; then
        batch='nu%%sa:Pw-nu-1:::nu a:/nonexistent:/bin/sh\n'
        batch="$batch"'nu%%sb:Pw-nu-2:::nu b:/nonexistent:/bin/sh\n'
        feed "$batch" $i $i
        op "newusers nu${i}a nu${i}b" newusers
        : >/tmp/stress-in.$$
    fi
done
""" % len(CP_HASHES)
    # shadow-utils' own tools on cl<i> / clg<i>
    w["classic"] = r"""
i=0
while [ $(date +%%s) -lt $end ]; do
    i=$((i+1))
    op "cadd cl$i" %s/useradd cl$i
    op "cgadd clg$i" %s/groupadd clg$i
    op "ccomment cl$i c$i" %s/usermod -c c$i cl$i
done
""" % (CLASSIC, CLASSIC, CLASSIC)
    if sysusers:
        w["sysusers"] = r"""
i=0
while [ $(date +%%s) -lt $end ]; do
    i=$((i+1))
    op "sysu sy$i syg$i" %s --inline "u sy$i - \"sys $i\"" "g syg$i -" "m m5 syg$i"
done
""" % SYSUSERS
    # vipw: the editor changes v1's comment (the loop's own line)
    w["vipw"] = r"""
i=0
while [ $(date +%s) -lt $end ]; do
    i=$((i+1))
    echo vipw$i >/tmp/stress-vipw-val
    op "vcomment v1 vipw$i" env EDITOR=/tmp/stress-ed.sh VISUAL=/tmp/stress-ed.sh vipw
done
"""
    # the users themselves
    w["ss1"] = r"""
old=Tulip-stress-1; t=sspw
other() { if [ $1 = Tulip-stress-0 ]; then echo Tulip-stress-1; else echo Tulip-stress-0; fi; }
while [ $(date +%s) -lt $end ]; do
    new=$(other $old)
    feed '%s\n%s\n' "$old" "$new"
    op "$t ss1 $new" setpriv --reuid=ss1 --regid=ss1 --init-groups -- passwd --stdin
    # after a kill the old password is either: try the other one next
    if [ $rc = 0 ]; then t=sspw; else t=sspwx; fi
    old=$new
done
"""
    w["ss2"] = r"""
i=0
while [ $(date +%s) -lt $end ]; do
    i=$((i+1)); if [ $((i % 2)) = 0 ]; then sh=/bin/sh; else sh=/bin/bash; fi
    feed 'ss2-pw-1\n'
    op "sssh ss2 $sh" setpriv --reuid=ss2 --regid=ss2 --init-groups -- chsh -s $sh
done
"""
    w["readers"] = r"""
while [ $(date +%s) -lt $end ]; do
    op "read getent-passwd" getent passwd
    op "read getent-group" getent group
    op "read getent-shadow" getent shadow
    op "read pwck" pwck -r
    op "read grpck" grpck -r
    op "read chage-l" setpriv --reuid=ss2 --regid=ss2 --init-groups -- chage -l ss2
done
"""
    return w


def setup_root(sb):
    sb.write("/etc/pam.d/common-password", tp.COMMON_PASSWORD)
    for m in ("m1", "m2", "m3", "m4", "m5", "m6", "v1", "cp1", "cp2"):
        sb.add_classic_user(m, create_home=False)
    sb.add_classic_user("ss1", password="Tulip-stress-1")
    sb.add_classic_user("ss2", password="ss2-pw-1")
    sb.run([CLASSIC + "/groupadd", "shared"])
    sb.use_hardened_tree()
    sb.use_pam_module()
    sb.write("/tmp/stress-hashes", "".join(h + "\n" for h in CP_HASHES))
    sb.write("/tmp/stress-ed.sh", VIPW_EDITOR, mode=0o755)


def modes(sb):
    return sb.modes(["/etc/" + f for f in consistency.GLOBAL_FILES] + [consistency.TREE])


def killable(sb, pid):
    """One of our tools (not shadow-utils' copy, not a reader)?"""
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return False
    base = os.path.basename(exe)
    return base in OUR_TOOLS and "/hs-test/" not in exe


def killer(sb, procs, stop, kills):
    rnd = random.Random(os.environ.get("HS_STRESS_SEED", "1"))
    while not stop.wait(KILL_EVERY * rnd.uniform(0.5, 1.5)):
        cands = [p for w in procs for p in descendants(w.pid) if killable(sb, p)]
        if cands:
            victim = rnd.choice(cands)
            try:
                exe = os.readlink("/proc/%d/exe" % victim)
                os.kill(victim, signal.SIGKILL)
                kills.append(os.path.basename(exe))
            except OSError:
                pass


OP_RE = re.compile(r"@ (.*) (-?\d+) (\d+) (\d+)\Z")


def parse(out):
    """[(tag words, rc, seconds, output lines)]"""
    ops = []
    for line in out.splitlines():
        m = OP_RE.match(line)
        if m:
            ops.append((m.group(1).split(), int(m.group(2)),
                        (int(m.group(4)) - int(m.group(3))) / 1e9, []))
        elif line.startswith("  | ") and ops:
            ops[-1][3].append(line[4:])
    return ops


class Expect:
    """name -> set of possible values; a killed command adds its value to the set."""

    def __init__(self):
        self.v = {}

    def set(self, key, value, rc, default=None):
        cur = self.v.setdefault(key, {default})
        if rc == 0:
            self.v[key] = {value}
        elif rc == 137:
            cur.add(value)


def run_stress(sb, kill):
    setup_root(sb)
    before = modes(sb)
    scripts = worker_scripts(os.path.exists(os.path.join(sb.root, SYSUSERS.lstrip("/"))))
    only = os.environ.get("HS_STRESS_WORKERS")
    if only:
        scripts = {k: v for k, v in scripts.items() if k in only.split(",")}
    prelude = PRELUDE.replace("SECONDS_", str(STRESS_SECONDS))
    procs = {}
    t0 = time.monotonic()
    for name, body in scripts.items():
        procs[name] = sb.popen(["/bin/sh", "-c", prelude + body], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    stop, kills = threading.Event(), []
    th = None
    if kill:
        th = threading.Thread(target=killer, args=(sb, list(procs.values()), stop, kills))
        th.start()
    outs = {}
    try:
        for name, p in procs.items():
            outs[name], _ = p.communicate(timeout=STRESS_SECONDS + 4 * LOCK_TIMEOUT_S + 30)
    finally:
        stop.set()
        if th:
            th.join()
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    took = time.monotonic() - t0
    dump = os.environ.get("HS_STRESS_DUMP")
    if dump:
        with open(dump, "w") as f:
            for name, out in outs.items():
                f.write("==== %s\n%s" % (name, out))
    logs = {name: parse(out) for name, out in outs.items()}
    return logs, kills, before, took


def judge(sb, logs, kills, before, kill):  # noqa: C901 (one flat list of checks)
    bad = []
    exp = Expect()
    reads_failed = []
    counts = {}
    for worker, ops in logs.items():
        last_kill = -10
        for n, (tag, rc, secs, text) in enumerate(ops):
            counts[worker] = counts.get(worker, 0) + 1
            if kill and "killed by signal 9" in " ".join(text):
                rc = 137        # the killer hit vipw's child before it ran the editor
            # shadow-utils tries a FILE.lock once and takes a killed tool's lock for a
            # live one while the killed process is a zombie (kill(pid, 0) succeeds): its
            # refusal counts as a kill of that command
            if rc == 137 or (kill and "already used by PID" in " ".join(text)):
                last_kill = n
            # a command soon after a killed one may fail for its sake (its user or group
            # was not made, a member not added, the old password changed or not)
            excused = n - last_kill <= 4 or tag[0] == "sspwx"
            if tag[0] == "sspwx":
                tag = ["sspw"] + tag[1:]
            joined = " / ".join(text)
            if secs > LOCK_TIMEOUT_S + 5:
                bad.append("%s: %s took %.1f s" % (worker, tag, secs))
            if rc not in (0, 137) and re.search(r"cannot lock|lock(ed)? by|\block\b", joined) \
                    and "timed out" not in joined and not excused:
                bad.append("%s: %s failed on a lock without 'timed out': %s"
                           % (worker, tag, joined))
            if rc not in (0, 137) and tag[0] != "read" and not excused:
                # every command of a loop is expected to succeed (unless its subject was
                # lost to a kill)
                bad.append("%s: %s exited %d: %s" % (worker, " ".join(tag), rc, joined))
            kind = tag[0]
            if kind in ("add", "cadd"):
                exp.set(("user", tag[1]), True, rc, False)
                if kind == "add":
                    exp.set(("shared", tag[1]), True, rc, False)
            elif kind == "del":
                exp.set(("user", tag[1]), False, rc, False)
                exp.set(("shared", tag[1]), False, rc, False)
            elif kind in ("comment", "ccomment", "vcomment"):
                exp.set(("gecos", tag[1]), tag[2], rc)
            elif kind in ("gadd", "cgadd"):
                exp.set(("group", tag[1]), True, rc, False)
            elif kind == "gren":
                exp.set(("group", tag[1]), False, rc, True)
                exp.set(("group", tag[2]), True, rc, False)
            elif kind in ("gmem+", "gmem-"):
                exp.set(("mem", tag[1], tag[2]), kind == "gmem+", rc, False)
            elif kind in ("smem+", "smem-"):
                exp.set(("shared", tag[1]), kind == "smem+", rc, False)
            elif kind == "cphash":
                for u in ("cp1", "cp2"):
                    exp.set(("hash", u), CP_HASHES[int(tag[1])], rc)
            elif kind == "newusers":
                for u in tag[1:]:
                    exp.set(("user", u), True, rc, False)
            elif kind == "sysu":
                exp.set(("user", tag[1]), True, rc, False)
                exp.set(("group", tag[2]), True, rc, False)
                exp.set(("mem", tag[2], "m5"), True, rc, False)
            elif kind == "sspw":
                exp.set(("sspw", tag[1]), tag[2], rc)
            elif kind == "sssh":
                exp.set(("sssh", tag[1]), tag[2], rc)
            elif kind == "read" and rc != 0:
                noise = [l for l in text if check_noise(l)]
                if tag[1] in ("pwck", "grpck") and noise:
                    # a reader runs while the writers work: it may see a window (a
                    # directory before its passwd line); reported, not failed
                    reads_failed.append("%s rc %d: %s" % (tag[1], rc, " / ".join(noise)[:300]))
                elif tag[1] not in ("pwck", "grpck"):
                    bad.append("reader %s failed: %d %s" % (tag[1], rc, joined[:300]))

    if kill:
        # recovery: one tool that takes the global locks finishes any journal; the
        # interrupted userdels and usermod -l's are finished by running them again
        sb.run(["/usr/sbin/usermod", "-c", "recovered", "m6"])
    passwd = [l.split(":") for l in sb.read("/etc/passwd").splitlines()]
    group = [l.split(":") for l in sb.read("/etc/group").splitlines()]
    gshadow = [l.split(":") for l in sb.read("/etc/gshadow").splitlines()]
    users = {f[0]: f for f in passwd}
    groups = {f[0]: f for f in group}
    for what, rows in (("passwd name", [f[0] for f in passwd]), ("uid", [f[2] for f in passwd]),
                       ("group name", [f[0] for f in group]), ("gid", [f[2] for f in group]),
                       ("gshadow name", [f[0] for f in gshadow])):
        dup = sorted({x for x in rows if rows.count(x) > 1})
        if dup:
            bad.append("duplicate %s: %s" % (what, dup))

    def members(g):
        return set(filter(None, groups[g][3].split(","))) if g in groups else set()

    for key, vals in exp.v.items():
        kind = key[0]
        if kind == "user":
            got = key[1] in users
        elif kind == "group":
            got = key[1] in groups
        elif kind == "shared":
            got = key[1] in members("shared")
        elif kind == "mem":
            # gb<i> may have become gbr<i> (the memberships go with it)
            g = next((g for g in (key[1], key[1].replace("gb", "gbr", 1)) if g in groups),
                     None)
            if g is None:
                continue
            got = key[2] in members(g)
        elif kind == "gecos":
            if key[1] not in users:
                continue
            got = users[key[1]][4]
        elif kind == "hash":
            got = tp.hash_of(sb, key[1])
        elif kind == "sspw":
            h = tp.hash_of(sb, key[1])
            got = next((p for p in SS_PASSWORDS if tp.verify(p, h)), h)
        elif kind == "sssh":
            got = sb.read("%s/%s/shell" % (consistency.TREE, key[1])).strip()
        if None in vals and kind in ("gecos", "hash", "sspw", "sssh"):
            continue    # never changed successfully: whatever it was
        if got not in vals:
            bad.append("lost update: %s is %r, expected one of %r" % (key, got, vals))

    foreign = [n for n in users if re.fullmatch(r"(cl|sy)\d+", n)]
    rep = consistency.check(sb, foreign=foreign)
    allow = set(consistency.GARBAGE) if kill else set()
    allow |= consistency.TOLERATED
    bad += ["consistency: " + x for x in rep.unexpected(allow)]
    for tool in ("pwck", "grpck"):
        r = sb.run(["/usr/sbin/" + tool, "-r"], check=False)
        noise = [l for l in (r.stdout + r.stderr).splitlines() if check_noise(l)]
        if r.returncode != 0 and noise:
            bad.append("%s -r at the end: %d %s" % (tool, r.returncode, " / ".join(noise)))
    after = modes(sb)
    for p, m in before.items():
        if after.get(p) != m:
            bad.append("%s: owner/mode %r became %r" % (p, m, after.get(p)))
    return bad, reads_failed, counts


def check_noise(line):
    """A line of pwck/grpck -r that is a real complaint: not about a missing home (no
    loop makes homes) and not a question.  The accounts of shadow-utils' useradd and
    sysusers (in /etc/shadow, no directory) and the tree's users (no /etc/shadow line)
    are no complaint either: pwck knows where each password lives."""
    if re.search(r"directory '[^']*' does not exist|\? No$|no changes$", line):
        return False
    return bool(line.strip())


def report(kill, logs, kills, took, bad, reads_failed, counts):
    print("stress (%s): %.1f s, commands per loop %s, kills %d %s" % (
        "kills" if kill else "no kills", took, counts, len(kills),
        sorted({k: kills.count(k) for k in kills}.items())))
    slow = sorted(((secs, w, " ".join(t)) for w, ops in logs.items()
                   for t, rc, secs, _ in ops), reverse=True)[:5]
    print("slowest:", slow)
    for r in reads_failed[:20]:
        print("reader:", r)
    for b in bad:
        print("BAD:", b)


def test_stress_no_kills(sb):
    logs, kills, before, took = run_stress(sb, kill=False)
    bad, reads_failed, counts = judge(sb, logs, kills, before, kill=False)
    report(False, logs, kills, took, bad, reads_failed, counts)
    assert not bad, "\n".join(bad)


def test_stress_with_kills(sb):
    logs, kills, before, took = run_stress(sb, kill=True)
    bad, reads_failed, counts = judge(sb, logs, kills, before, kill=True)
    report(True, logs, kills, took, bad, reads_failed, counts)
    assert kills, "the killer found nothing to kill"
    assert not bad, "\n".join(bad)
