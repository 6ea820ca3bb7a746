#!/usr/bin/python3
"""32 users changing their own passwords at the same time, in a sandbox root
(tests/sandbox), never on the host's /etc.

    unshare --mount --propagation private --fork -- /usr/bin/python3 bench/passwd-concurrency.py BUILDDIR

Two contenders on the same 32 accounts (yescrypt passwords, Debian's PAM stack):
- shadow-utils' chpasswd (Debian's copy, /usr/libexec/hs-test/shadow-utils/chpasswd), run
  by root once per user and round, on the classic /etc/shadow (pam_unix through
  /etc/pam.d/chpasswd; every change rewrites the one shared file under its lock);
- our passwd --stdin, run by each user as themselves (setpriv in the root: no root in the
  process tree), old and new password on stdin, through pam_hardened_shadow.so on the
  per-user tree (our pwconv).
Each user's rounds are sequential; the users run concurrently.  Every contender first
does the same number of changes one at a time (the serial baseline), so the table shows
how the throughput scales with the machine's cores.  At the end each user's stored hash
must verify with the last password whose change reported success: a change that was
reported and then overwritten by another user's change is a lost update.

Targets (ours): 0 failed, 0 lost, and a parallel/serial speedup of at least 0.7 x
min(cores, 32).  HS_BENCH_ROUNDS sets the rounds per user (default 4).  A missed target
is reported; it fails the script only with HS_BENCH_STRICT=1 (as bench/lookup.py)."""

import ctypes
import os
import secrets
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sandbox"))

import sandbox  # noqa: E402

USERS = 32
ROUNDS = int(os.environ.get("HS_BENCH_ROUNDS", "4"))
CHPASSWD = sandbox.CLASSIC_TOOLS_DIR + "/chpasswd"
SCALING_SHARE = 0.7
SERIAL = 16         # changes in the serial baseline

_crypt = ctypes.CDLL("libcrypt.so.1")
_crypt.crypt.restype = ctypes.c_char_p
_crypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
_crypt_lock = threading.Lock()


def verifies(password, pw_hash):
    if not pw_hash or pw_hash[0] in "!*":
        return False
    with _crypt_lock:          # crypt() keeps its result in static storage
        out = _crypt.crypt(password.encode(), pw_hash.encode())
    return out is not None and out.decode() == pw_hash


def new_password():
    # random, so pam_pwquality (Debian's common-password) accepts every one
    return "Hs-" + secrets.token_urlsafe(12)


class Contender:
    """How one tool changes one user's password, and where the hash ends up."""

    def __init__(self, sb, name):
        self.sb = sb
        self.name = name
        self.current = {}       # user -> password the stored hash should verify with

    def change(self, user):
        """One change; returns True if the tool reported success."""
        new = new_password()
        res = self.run(user, self.current[user], new)
        if res.returncode == 0:
            self.current[user] = new
            return True
        self.errors.append("%s: exit %d: %s" % (user, res.returncode,
                                               (res.stderr or res.stdout).strip()))
        return False

    errors = None


class Chpasswd(Contender):
    def run(self, user, old, new):
        return self.sb.run([CHPASSWD], input="%s:%s\n" % (user, new), check=False,
                           timeout=120)

    def stored_hash(self, user):
        for line in self.sb.read("/etc/shadow").splitlines():
            f = line.split(":")
            if f[0] == user:
                return f[1]
        return None


class OurPasswd(Contender):
    def run(self, user, old, new):
        return self.sb.run(["passwd", "--stdin"], user=user, input="%s\n%s\n" % (old, new),
                           check=False, timeout=120)

    def stored_hash(self, user):
        try:
            return self.sb.read("/etc/hardened-shadow/%s/shadow" % user).split(":")[0]
        except OSError:
            return None


def drain_syslog(sb, stop):
    """Keep the root's /dev/log queue empty (a full one would block the tools' syslog())."""
    while not stop.wait(0.2):
        sb.syslog(clear=True)


def serial(c, users):
    """One change per user, one at a time.  Returns (seconds, changes, failed)."""
    t = time.monotonic()
    failed = sum(not c.change(u) for u in users)
    return time.monotonic() - t, len(users), failed


def parallel(c, users, rounds):
    """Every user at once, `rounds` changes each.  Returns (seconds, changes, failed)."""
    failed = [0]
    lock = threading.Lock()
    start = threading.Barrier(len(users) + 1)

    def worker(u):
        start.wait()
        for _ in range(rounds):
            if not c.change(u):
                with lock:
                    failed[0] += 1

    threads = [threading.Thread(target=worker, args=(u,)) for u in users]
    for th in threads:
        th.start()
    start.wait()
    t = time.monotonic()
    for th in threads:
        th.join()
    return time.monotonic() - t, len(users) * rounds, failed[0]


def measure(c, users):
    c.errors = []
    ser = serial(c, users[:SERIAL])
    par = parallel(c, users, ROUNDS)
    lost = [u for u in users if not verifies(c.current[u], c.stored_hash(u))]
    return ser, par, lost


def main():
    if len(sys.argv) != 2:
        print("usage: passwd-concurrency.py BUILDDIR", file=sys.stderr)
        return 2
    build = os.path.realpath(sys.argv[1])
    try:
        sandbox.require_private_mount_ns()
    except sandbox.SandboxError as e:
        print("passwd-concurrency.py: %s" % e, file=sys.stderr)
        return 2
    cores = os.cpu_count() or 1
    t0 = time.monotonic()
    base = sandbox.Base(build)
    results = []
    try:
        with sandbox.Sandbox(base, size="1g") as sb:
            stop = threading.Event()
            drainer = threading.Thread(target=drain_syslog, args=(sb, stop), daemon=True)
            drainer.start()
            try:
                if not sb.exists("/var/cache/cracklib/cracklib_dict.pwd"):
                    # Debian's pam_pwquality refuses every password when cracklib's
                    # dictionary is not installed (cracklib-runtime); the passwords
                    # here are random, the dictionary would pass them anyway
                    conf = "/etc/security/pwquality.conf"
                    sb.write(conf, (sb.read(conf) if sb.exists(conf) else "") +
                             "dictcheck = 0\n")
                users = ["pwc%02d" % i for i in range(USERS)]
                first = {}
                for u in users:
                    first[u] = new_password()
                    sb.add_classic_user(u, password=first[u], create_home=False)

                classic = Chpasswd(sb, "chpasswd (shadow-utils, root)")
                classic.current = dict(first)
                results.append((classic,) + measure(classic, users))

                # the same accounts, converted: the tree and our PAM module
                sb.use_pam_module()
                sb.use_hardened_tree()
                ours = OurPasswd(sb, "passwd --stdin (ours, user)")
                ours.current = dict(classic.current)
                results.append((ours,) + measure(ours, users))
                if not sb.read("/etc/hardened-shadow/%s/shadow" % users[0]).startswith("$y$"):
                    print("passwd-concurrency.py: note: our passwd did not write a "
                          "yescrypt hash", file=sys.stderr)
            finally:
                stop.set()
                drainer.join()
    finally:
        base.close()

    print("%d users changing their own passwords, %d rounds each, all users at once; "
          "%d cores" % (USERS, ROUNDS, cores))
    print("%-30s %10s %12s %8s %7s %6s %6s" % ("tool", "serial /s", "parallel /s", "speedup",
                                                "changes", "failed", "lost"))
    failed_targets = []
    for c, ser, par, lost in results:
        ser_rate = ser[1] / ser[0]
        par_rate = par[1] / par[0]
        print("%-30s %10.1f %12.1f %7.2fx %7d %6d %6d" % (
            c.name, ser_rate, par_rate, par_rate / ser_rate, ser[1] + par[1],
            ser[2] + par[2], len(lost)))
        for line in c.errors[:5]:
            print("  %s" % line)
        if len(c.errors) > 5:
            print("  ... %d more failures" % (len(c.errors) - 5))
        if lost:
            print("  lost updates: %s" % " ".join(lost[:10]))
    c, ser, par, lost = results[-1]
    speedup = (par[1] / par[0]) / (ser[1] / ser[0])
    want = SCALING_SHARE * min(cores, USERS)
    checks = [("0 failed", ser[2] + par[2] == 0), ("0 lost", not lost)]
    if cores > 1:
        checks.append(("speedup >= %.1fx (%.1f x %d cores)" % (want, SCALING_SHARE,
                                                              min(cores, USERS)),
                       speedup >= want))
    for what, met in checks:
        print("ours: %s: %s" % (what, "TARGET MET" if met else "TARGET MISSED"))
        if not met:
            failed_targets.append(what)
    if cores == 1:
        print("ours: scaling not measurable on 1 core")
    print("(serial = %d changes one at a time; parallel = %d users x %d rounds at once; "
          "total %.0f s)" % (SERIAL, USERS, ROUNDS, time.monotonic() - t0))
    print("(a user's passwd --stdin verifies the old password and hashes the new one: two "
          "yescrypt runs per change; root's chpasswd hashes once)")
    for what in failed_targets:
        print("passwd-concurrency.py: TARGET MISSED: %s" % what, file=sys.stderr)
    if failed_targets and os.environ.get("HS_BENCH_STRICT") == "1":
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
