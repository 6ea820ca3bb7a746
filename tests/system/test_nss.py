"""libnss_hardened_shadow.so.2 (DESIGN.md section 8) loaded by the real glibc in a throwaway
root: `getent shadow`, getspnam_r/getspent_r through glibc and straight into the module
(tests/clients/nss-client), hostile trees, non-root callers, threads, and the promise that
the module changes nothing in the host process.

The tree is built by hand here (not with pwconv) so these tests depend only on the module
and the layout of DESIGN.md section 2."""

import os
import re
import shlex

import pytest

TREE = "/etc/hardened-shadow"
ULONG_MINUS_ONE = str(2 ** 64 - 1)

HASH_A = "$y$j9T$abcdefghijklmnopqrstu.$Cf0vJ1W3pxbBXnEcPAaK6vL6H5v6GQ0sRNs6sKYo0a3"
HASH_B = "$6$saltsalt$Vxq2yDyx6gHrbHvZ0s9sE3Lbm8H8YfFqWm0ByJk1n0W1cLxu8f3U2p9Yq3cX3c9k6m3h2p"

INVALID_NAMES = ["..", "../x", "/etc/x", "-x", "", "a" * 33, "alice/../bob", ".x", ":x",
                 "x y", "al\nice", "."]


# ---------------------------------------------------------------- helpers

@pytest.fixture
def client(build_dir):
    path = os.path.join(build_dir, "tests", "clients", "nss-client")
    assert os.access(path, os.X_OK), "build %s first" % path
    return path


def auth_gid(sb):
    return sb.getgrnam("hardened-shadow-auth")[1]


def make_tree(sb):
    sb.sh("set -e; rm -rf %s; mkdir %s; chown root:hardened-shadow %s; chmod 0710 %s"
          % ((TREE,) * 4))


def add_entries(sb, entries):
    """entries: list of (name, uid, hash, lstchg, aging) written as DESIGN section 2 says;
    lstchg "" = unset; aging None = no aging file.  One shell run for all of them."""
    gid = auth_gid(sb)
    lines = ["set -e", "cd %s" % TREE]
    for name, uid, pw_hash, lstchg, aging in entries:
        q = shlex.quote("./" + name)      # names such as "-dash" are not options
        lines += [
            "mkdir %s" % q,
            "printf '%%s\\n' %s > %s/shadow" % (shlex.quote("%s:%s:" % (pw_hash, lstchg)), q),
            "printf '/bin/bash\\n' > %s/shell" % q,
            "chown %d:%d %s/shadow %s/shell" % (uid, gid, q, q),
            "chmod 0640 %s/shadow %s/shell" % (q, q),
        ]
        if aging is not None:
            lines += [
                "printf '%%s\\n' %s > %s/aging" % (shlex.quote(aging), q),
                "chown 0:%d %s/aging" % (gid, q),
                "chmod 0644 %s/aging" % q,
            ]
        lines += ["chown %d:%d %s" % (uid, gid, q), "chmod 02710 %s" % q]
    sb.sh("\n".join(lines))


def tree_user(sb, name, password=None, pw_hash=HASH_A, lstchg="19000",
              aging="-1:-1:-1:-1:-1:", **fields):
    """A classic account made by shadow-utils plus its entry in the tree."""
    pw = sb.add_classic_user(name, password=password, **fields)
    add_entries(sb, [(name, pw.uid, pw_hash, lstchg, aging)])
    return pw


def getent(sb, *keys, user=None):
    return sb.run(["getent", "shadow", "--"] + list(keys), user=user, check=False)


def direct(sb, client, name, buflen=None, user=None):
    """(status, errno, partial, entry-or-None) from one module getspnam_r call."""
    argv = [client, "direct", name] + ([str(buflen)] if buflen is not None else [])
    res = sb.run(argv, user=user)
    lines = res.stdout.splitlines()
    m = re.fullmatch(r"status=(\w+) errno=(\w+) partial=(\w+)", lines[0])
    assert m, res.stdout
    return m.group(1), m.group(2), m.group(3), (lines[1] if len(lines) > 1 else None)


@pytest.fixture
def tree(sb):
    """alice (aging set), bob (no password, lstchg unset), carol (locked), dave ("*"), in
    the tree only (their /etc/shadow lines keep other hashes), shadow: hardened_shadow."""
    make_tree(sb)
    tree_user(sb, "alice", password="alice-classic", pw_hash=HASH_A, lstchg="19000",
              aging="1:90:7:14:20000:")
    tree_user(sb, "bob", pw_hash="", lstchg="")
    tree_user(sb, "carol", pw_hash="!" + HASH_B, lstchg="0")
    tree_user(sb, "dave", pw_hash="*", lstchg="18000")
    sb.set_nsswitch_shadow("hardened_shadow")
    return sb


# ---------------------------------------------------------------- lookups

def test_getent_returns_tree_entries_not_etc_shadow(tree):
    res = getent(tree, "alice")
    assert res.returncode == 0, res
    assert res.stdout == "alice:%s:19000:1:90:7:14:20000:\n" % HASH_A
    classic = [l for l in tree.read("/etc/shadow").splitlines() if l.startswith("alice:")]
    assert classic and HASH_A not in classic[0]
    assert getent(tree, "bob").stdout == "bob::::::::\n"
    assert getent(tree, "carol").stdout == "carol:!%s:0::::::\n" % HASH_B
    assert getent(tree, "dave").stdout == "dave:*:18000::::::\n"


def test_direct_fields_raw(tree, client):
    status, err, partial, entry = direct(tree, client, "alice")
    assert (status, err, partial) == ("SUCCESS", "0", "no")
    assert glibc(tree, client, "alice").startswith("ret=0 found=yes")
    assert entry == "alice:%s:19000:1:90:7:14:20000:%s" % (HASH_A, ULONG_MINUS_ONE)
    # empty hash stays "" (not NULL), unset lstchg is -1, sp_flag is (unsigned long)-1
    assert direct(tree, client, "bob")[3] == "bob::-1:-1:-1:-1:-1:-1:%s" % ULONG_MINUS_ONE


def glibc(sb, client, name, user=None):
    """getspnam_r's return value through glibc, and whether it found the entry."""
    return sb.run([client, "glibc", name], user=user).stdout.splitlines()[0]


def test_missing_user_is_notfound(tree, client):
    assert direct(tree, client, "nosuchuser")[:3] == ("NOTFOUND", "ENOENT", "no")
    assert glibc(tree, client, "nosuchuser") == "ret=0 found=no"
    res = getent(tree, "nosuchuser")
    assert res.returncode == 2 and res.stdout == ""


def test_missing_shadow_file_is_notfound(tree, client):
    tree.run(["rm", TREE + "/dave/shadow"])
    assert direct(tree, client, "dave")[:3] == ("NOTFOUND", "ENOENT", "no")


def syscalls_after_exec(strace_output):
    """strace's lines without the execve ones (they echo the argument)."""
    return "\n".join(l for l in strace_output.splitlines() if not l.startswith("execve("))


def test_invalid_names_never_touch_the_filesystem(tree, client):
    for name in INVALID_NAMES:
        assert direct(tree, client, name)[:3] == ("NOTFOUND", "ENOENT", "no"), name
        res = tree.run(["strace", "-f", "-qq", "-e", "trace=%file,openat", client, "direct",
                        name])
        assert "status=NOTFOUND errno=ENOENT" in res.stdout
        trace = syscalls_after_exec(res.stderr)
        assert "libnss_hardened_shadow.so.2" in trace      # the module was loaded ...
        assert TREE not in trace, (name, trace)            # ... and never looked
        assert "/etc/x" not in trace and "../x" not in trace, trace
    # through glibc too (getent cannot pass ""; the client did)
    for name in [n for n in INVALID_NAMES if n]:
        res = tree.run(["strace", "-f", "-qq", "-e", "trace=%file,openat",
                        "getent", "shadow", "--", name], check=False)
        assert res.returncode == 2 and res.stdout == "", name
        trace = syscalls_after_exec(res.stderr)
        assert TREE not in trace, (name, trace)
        # the module was loaded, so the absence above means something
        assert "libnss_hardened_shadow.so.2" in trace
    # positive control: a valid name does reach the tree
    res = tree.run(["strace", "-f", "-qq", "-e", "trace=%file,openat", client, "direct",
                    "alice"])
    assert TREE in res.stderr


def test_buffer_too_small_then_retry(tree, client):
    res = tree.run([client, "erange", "alice"])
    assert "module: alice:%s:19000:" % HASH_A in res.stdout
    assert "glibc: alice:%s:19000:" % HASH_A in res.stdout
    # exactly the needed size works, one byte less does not
    need = len("alice") + 1 + len(HASH_A) + 1
    assert direct(tree, client, "alice", need)[0] == "SUCCESS"
    assert direct(tree, client, "alice", need - 1)[:3] == ("TRYAGAIN", "ERANGE", "no")
    assert direct(tree, client, "bob", 0)[:3] == ("TRYAGAIN", "ERANGE", "no")


# ---------------------------------------------------------------- aging fails closed

@pytest.mark.parametrize("breakage", [
    "rm {d}/aging",
    "chown {uid} {d}/aging",                                     # not root-owned
    "rm {d}/aging; ln -s /etc/hardened-shadow/bob/aging {d}/aging",
    "rm {d}/aging; mkfifo -m 0644 {d}/aging",
    "ln {d}/aging /etc/hardened-shadow/.hardlink",                # link count 2
    "printf 'garbage\\n' > {d}/aging",
    "printf '1:2:3:4:\\n' > {d}/aging",
])
def test_aging_problems_expire_the_account(tree, client, breakage):
    uid = tree.getpwnam("alice").uid
    tree.sh(breakage.format(d=TREE + "/alice", uid=uid))
    status, _, _, entry = direct(tree, client, "alice")
    assert status == "SUCCESS"
    assert entry == "alice:%s:19000:-1:-1:-1:-1:1:%s" % (HASH_A, ULONG_MINUS_ONE)
    assert getent(tree, "alice").stdout == "alice:%s:19000:::::1:\n" % HASH_A


def test_out_of_descriptors_reading_aging_is_no_verdict(tree, client):
    """EMFILE while opening the aging file (another thread took the last descriptor) says
    nothing of that file: TRYAGAIN/EAGAIN as for the shadow file, never the fail-closed
    entry of a missing or hostile aging file (expired on day 1)."""
    def injected(argv, when, trace="openat2", path=None):
        cmd = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=" + trace]
        cmd += ["-P", path] if path else []
        cmd += ["-e", "inject=%s:error=EMFILE:when=%d" % (trace, when)]
        return tree.run(cmd + argv, check=False).stdout   # enum exits 1 on TRYAGAIN

    tryagain = "status=TRYAGAIN errno=EAGAIN partial=no\n"
    # the lookup's fast path opens shadow, then aging (openat2 both)
    assert injected([client, "direct", "alice"], 1) == tryagain
    assert injected([client, "direct", "alice"], 2) == tryagain
    assert injected([client, "glibc", "alice"], 2) == "ret=EAGAIN found=no\n"
    # enumeration opens them relative to alice's directory
    out = injected([client, "enum"], 2, "openat", TREE + "/alice").splitlines()
    assert out[-1] == "getspent_r: status=TRYAGAIN errno=EAGAIN", out
    assert not [l for l in out if l.startswith("alice:")], out
    # a third open is not the lookup's: the entry as ever
    assert injected([client, "direct", "alice"], 3).startswith("status=SUCCESS")


def test_openat2_refused_by_a_seccomp_filter(tree, client):
    """A process whose seccomp filter predates openat2 (an older container runtime, a
    service's SystemCallFilter=) gets EPERM, not ENOSYS, for it: the lookup falls back to
    open(2) as without openat2, rather than answering EACCES for every user."""
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat2",
              "-e", "inject=openat2:error=EPERM"]
    res = tree.run(inject + [client, "direct", "alice"])
    assert res.stdout == "status=SUCCESS errno=0 partial=no\n" \
        "alice:%s:19000:1:90:7:14:20000:%s\n" % (HASH_A, ULONG_MINUS_ONE)
    assert tree.run(inject + [client, "direct", "nosuchuser"]).stdout.startswith(
        "status=NOTFOUND errno=ENOENT")
    res = tree.run(inject + ["getent", "shadow", "bob"], check=False)
    assert (res.returncode, res.stdout) == (0, "bob::::::::\n")


# ---------------------------------------------------------------- hostile entries

HOSTILE = {
    # name -> shell commands (run as root, {d} = the user's dir, {uid} = the user)
    "symlink": "rm {d}/shadow; ln -s /etc/shadow {d}/shadow",
    "fifo": "rm {d}/shadow; mkfifo -m 0640 {d}/shadow; chown {uid} {d}/shadow",
    "owner": "chown root {d}/shadow",      # only enumeration checks this; see below
    "hardlink": "ln {d}/shadow /etc/hardened-shadow/.hl-{n}",
    "huge": "head -c 100000 /dev/zero | tr '\\0' x > {d}/shadow",
    "garbled": "printf 'no-colon-here\\n' > {d}/shadow",
    "two-lines": "printf 'x:1:\\nroot::0:\\n' > {d}/shadow",
    "dir-symlink": "rm -rf {d}; ln -s /etc/hardened-shadow/alice {d}",
    "dir-file": "rm -rf {d}; touch {d}",
}


@pytest.fixture
def hostile(tree):
    """One user per kind of hostile entry, besides the four good ones."""
    for kind in HOSTILE:
        name = "h" + kind.replace("-", "")
        tree_user(tree, name, pw_hash=HASH_B)
    for kind, cmd in HOSTILE.items():
        name = "h" + kind.replace("-", "")
        uid = tree.getpwnam(name).uid
        tree.sh(cmd.format(d=TREE + "/" + name, uid=uid, n=name))
    return tree


@pytest.mark.parametrize("kind", sorted(set(HOSTILE) - {"owner"}))
def test_hostile_entry_gives_no_data(hostile, client, kind):
    name = "h" + kind.replace("-", "")
    status, err, partial, entry = direct(hostile, client, name)
    assert (status, err, partial, entry) == ("UNAVAIL", "EIO", "no", None)
    assert glibc(hostile, client, name) == "ret=EIO found=no"
    res = getent(hostile, name)
    assert res.returncode == 2 and res.stdout == ""


def test_enumeration_skips_what_it_cannot_read(hostile, client):
    gid = auth_gid(hostile)
    # reserved and invalid names: complete, valid-looking entries that must not show
    for bad in (".hidden", ":tmp", "x y", "-dash"):
        add_entries(hostile, [(bad, 0, HASH_A, "1", "-1:-1:-1:-1:-1:")])
    hostile.run(["rm", TREE + "/dave/shadow"])           # missing shadow file
    add_entries(hostile, [("zed", 4242, HASH_B, "5", None)])   # only in the tree, no aging
    res = getent(hostile)
    assert res.returncode == 0, res
    names = [l.split(":")[0] for l in res.stdout.splitlines()]
    assert sorted(names) == ["alice", "bob", "carol", "zed"]
    assert "zed:%s:5:::::1:" % HASH_B in res.stdout.splitlines()
    # readdir order, like glibc files' file order
    order = hostile.run(["ls", "-f", TREE]).stdout.split()
    assert names == [n for n in order if n in names]
    # the module's own enumeration agrees, with raw fields
    out = hostile.run([client, "enum"]).stdout.splitlines()
    assert [l.split(":")[0] for l in out] == names
    assert gid  # (the group exists: the entries above were really made)


def test_enumeration_retry_returns_the_same_entry(tree, client):
    full = tree.run([client, "enum"]).stdout.splitlines()
    assert len(full) == 4
    res = tree.run([client, "enum", "10"])
    lines = res.stdout.splitlines()
    assert lines[-1].startswith("retried=")
    # alice, carol and dave do not fit in 10 bytes; bob ("bob" + "") does
    assert int(lines[-1].split("=")[1]) >= 3
    assert lines[:-1] == full


def test_enumeration_restarts_after_setspent(tree, client):
    a = getent(tree).stdout
    b = getent(tree).stdout
    assert a == b and len(a.splitlines()) == 4


# ---------------------------------------------------------------- tree-level problems

def test_foreign_owned_shadow_lookup_vs_enumeration(hostile, client):
    """getspnam's fast path (one open per file, for the 10 us target) does not
    compare shadow's owner with the directory's: only root can put a file owned
    by someone else into a user's directory (docs/decisions.md), and pwck
    reports it.  Enumeration, which is not speed-critical, checks it and skips
    the entry."""
    status, err, partial, entry = direct(hostile, client, "howner")
    assert status == "SUCCESS"
    assert "howner" not in [l.split(":")[0] for l in getent(hostile).stdout.splitlines()]


def test_tree_missing(tree, client):
    tree.run(["rm", "-rf", TREE])
    assert direct(tree, client, "alice")[:3] == ("UNAVAIL", "ENOENT", "no")
    assert getent(tree, "alice").returncode == 2
    # during a migration, "hardened_shadow files" falls through to /etc/shadow
    tree.set_nsswitch_shadow("hardened_shadow files")
    res = getent(tree, "alice")
    assert res.returncode == 0 and HASH_A not in res.stdout
    assert res.stdout.startswith("alice:$")


def test_enumeration_status_without_the_tree(tree, client):
    """setspent: a tree the caller may not list is UNAVAIL/EACCES, a missing one UNAVAIL/ENOENT
    (not NOTFOUND: the database itself is missing)."""
    res = tree.run([client, "enum"], user="alice", check=False)
    assert res.stdout == "setspent: status=UNAVAIL errno=EACCES\n"
    tree.run(["rm", "-rf", TREE])
    res = tree.run([client, "enum"], check=False)
    assert res.stdout == "setspent: status=UNAVAIL errno=ENOENT\n"


def test_tree_writable_by_group_is_refused_by_enumeration(tree, client):
    # Lookups trust the root-owned path components (only root can make the
    # tree group-writable; pwck audits it); enumeration opens the tree and
    # refuses a writable one.
    tree.run(["chmod", "0770", TREE])
    assert getent(tree).stdout == ""
    assert direct(tree, client, "alice")[0] == "SUCCESS"


# ---------------------------------------------------------------- non-root callers

def test_non_root_without_groups_gets_nothing(tree, client):
    for who in ("bob", "alice"):
        res = getent(tree, who, user="alice")
        assert res.returncode == 2 and res.stdout == "", res
        assert direct(tree, client, who, user="alice")[:3] == ("UNAVAIL", "EACCES", "no")
        assert glibc(tree, client, who, user="alice") == "ret=EACCES found=no"
    res = getent(tree, user="alice")
    assert res.stdout == ""


def test_member_of_tree_group_reaches_only_own_entry(tree, client):
    # what the setgid self-service tools hold: the kernel's owner check on the per-user
    # directory limits alice to her own entry
    tree.run(["/usr/libexec/hs-test/shadow-utils/usermod", "-aG", "hardened-shadow", "alice"])
    status, _, _, entry = direct(tree, client, "alice", user="alice")
    assert status == "SUCCESS" and entry.startswith("alice:%s:19000:1:90:" % HASH_A)
    assert direct(tree, client, "bob", user="alice")[:3] == ("UNAVAIL", "EACCES", "no")
    res = getent(tree, "bob", user="alice")
    assert res.returncode == 2 and res.stdout == ""
    # the group may traverse the tree (0710), not list it: no enumeration
    res = getent(tree, user="alice")
    assert res.stdout == ""


# ---------------------------------------------------------------- threads, process state

def test_sixteen_threads_thousand_lookups_each(sb, client):
    make_tree(sb)
    users = [("tu%02d" % i, 30000 + i, "$6$s%02d$%s" % (i, "h" * (20 + i)), str(19000 + i),
              "-1:%d:-1:-1:-1:" % i) for i in range(16)]
    add_entries(sb, users)
    sb.set_nsswitch_shadow("hardened_shadow")
    args = ["%s=%s" % (u[0], u[2]) for u in users]
    res = sb.run([client, "threads", "16", "1000"] + args, timeout=300)
    assert res.stdout.strip() == "ok 16000", res.stdout + res.stderr


@pytest.mark.parametrize("user", [None, "alice"])
def test_no_process_state_changes(tree, client, user):
    names = ["alice", "bob", "nosuchuser", "../x", "-x"]
    res = tree.run([client, "state"] + names, user=user, check=False)
    assert res.returncode == 0 and "state unchanged" in res.stdout, res.stdout + res.stderr
    if user is None:
        assert "glibc getspnam_r alice: found" in res.stdout
        assert "glibc getspent: 4 entries" in res.stdout
        assert "module getspent_r: 4 entries" in res.stdout


def test_no_syslog_even_for_hostile_entries(hostile, client):
    hostile.syslog(clear=True)
    hostile.run([client, "direct", "hsymlink"])
    hostile.run([client, "direct", "hfifo"])
    getent(hostile)
    assert hostile.syslog() == []
