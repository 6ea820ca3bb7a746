"""newusers in a throwaway root: batches that create and update accounts on a tree system
and a classic one (uid/gid given as numbers, names or left empty; groups made per
newusers(8); homes; subordinate ids; the shell behind the proxy), every option, hostile
lines (injected ':' and newlines, overlong fields, bad numbers, duplicates, names already
taken) with the files byte-identical afterwards, a write failure in the middle of the
commit undone, and a batch running while useradd adds users."""

import re
import time

import pytest

import grouptools
import sandbox
from grouptools import verify

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

NEWUSERS = "/usr/sbin/newusers"
TREE = "/etc/hardened-shadow"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
FILES = ["/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid"]
CHEAP = ["-c", "SHA512", "-s", "1000"]
TODAY = int(time.time()) // 86400


def is_today(day):
    """A day the tool may have stamped: from the module's import to now (a run can
    cross midnight)."""
    return TODAY <= int(day) <= int(time.time()) // 86400

def run(sb, argv, **kw):
    return grouptools.run(sb, [NEWUSERS] + argv, **kw)


def state(sb):
    """Every account file, the tree's entries and /home's, for byte comparison."""
    out = {p: sb.read_bytes(p) for p in FILES + ["/etc/shadow"] if sb.exists(p)}
    for d in (TREE, "/home"):
        if sb.exists(d):
            out[d] = sorted(sb.run(["/bin/ls", "-A", d]).stdout.split())
    return out


def entry(sb, path, name):
    for line in sb.read(path).splitlines():
        if line.split(":")[0] == name:
            return line
    return None


def tree_file(sb, name, f):
    return sb.read("%s/%s/%s" % (TREE, name, f))


def make_tree(sb):
    sb.add_classic_user("alice", password="alice-old-1")
    sb.add_classic_user("bob", password="bob-old-1", shell="/usr/sbin/nologin")
    sb.use_hardened_tree()
    return sb


@pytest.fixture
def tree(sb):
    return make_tree(sb)


@pytest.fixture(scope="module")
def shared_tree(base):
    """One root for the tests that must change nothing (each checks that it did not)."""
    with sandbox.Sandbox(base, size="1g") as s:
        yield make_tree(s)


def test_create_every_field_form(tree):
    """uid and gid empty, numeric and by name; a group by name made on line 2 and reused
    on line 3; a shared uid by user name; an empty password stays locked."""
    batch = ("ann:pw-ann-1:::Ann A,1,2,3:/home/ann:/bin/bash\n"
             "ben:pw-ben-1:2345:devs:Ben:/srv/homes/ben:/usr/sbin/nologin\n"
             "cat:pw-cat-1:ann:devs::/home/cat:\n"
             "dan::5000:5001:::\n"
             "eve:pw-eve-1::alice:::/bin/sh\n")
    res = run(tree, CHEAP, input=batch)
    assert res.returncode == 0, res
    assert res.stdout == "" and res.stderr == ""
    ann = tree.getpwnam("ann")
    assert ann.uid >= 1000 and ann.gid == ann.uid
    assert entry(tree, "/etc/passwd", "ann") == \
        "ann:x:%d:%d:Ann A,1,2,3:/home/ann:%s" % (ann.uid, ann.uid, PROXY)
    assert entry(tree, "/etc/group", "ann") == "ann:x:%d:" % ann.uid
    assert entry(tree, "/etc/gshadow", "ann") == "ann:!::"
    assert tree_file(tree, "ann", "shell") == "/bin/bash\n"
    h, lstchg, _ = tree_file(tree, "ann", "shadow").split(":")
    assert h.startswith("$6$rounds=1000$") and verify("pw-ann-1", h) and is_today(lstchg)
    assert tree_file(tree, "ann", "aging") == "0:99999:7:-1:-1:\n"
    st = tree.lstat("%s/ann" % TREE)
    assert st.st_uid == ann.uid and (st.st_mode & 0o7777) == 0o2710
    st = tree.lstat("/home/ann")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (ann.uid, ann.uid, 0o755)
    # numeric uid, a new group by name with the uid as gid; an unlisted shell stays in
    # /etc/passwd (the user cannot change it)
    devs = tree.getgrnam("devs")
    assert devs[1] == 2345
    assert entry(tree, "/etc/passwd", "ben") == \
        "ben:x:2345:2345:Ben:/srv/homes/ben:/usr/sbin/nologin"
    assert tree.lstat("/srv/homes").st_uid == 0 and tree.lstat("/srv/homes/ben").st_uid == 2345
    # uid of ann (by name), the group devs of line 2, an empty shell (/bin/sh in the file)
    assert entry(tree, "/etc/passwd", "cat") == "cat:x:%d:2345::/home/cat:" % ann.uid
    assert tree_file(tree, "cat", "shell") == "/bin/sh\n"
    # a gid that does not exist: a group named after the user with it; no password: locked
    assert entry(tree, "/etc/passwd", "dan") == "dan:x:5000:5001:::"
    assert entry(tree, "/etc/group", "dan") == "dan:x:5001:"
    assert tree_file(tree, "dan", "shadow").startswith("!:")
    assert not tree.exists("/home/dan")
    # an existing group by name
    assert tree.getpwnam("eve").gid == tree.getgrnam("alice")[1]
    assert tree.getgrnam("eve") is None
    # subordinate ids, one range each, not overlapping
    subuid = tree.read("/etc/subuid").split()
    owners = [l.split(":")[0] for l in subuid]
    assert all(owners.count(n) == 1 for n in ["alice", "ann", "ben", "cat", "dan", "eve"])
    starts = sorted(int(l.split(":")[1]) for l in subuid)
    assert all(b - a >= 65536 for a, b in zip(starts, starts[1:]))
    # the NSS module serves the new hash
    res = tree.run(["/usr/bin/getent", "shadow", "ann"])
    assert res.stdout.split(":")[1] == h
    log = "".join(tree.syslog())
    assert "new user: name=ann" in log
    # each group made is logged under its own name: the user's, or the one named
    for group, gid in (("ann", ann.uid), ("devs", 2345), ("dan", 5001)):
        assert "new group: name=%s, GID=%d" % (group, gid) in log
    assert "new group: name=ben" not in log and "new group: name=cat" not in log
    assert "new group: name=eve" not in log


def test_update_existing_users(tree):
    """A password, GECOS, home and a listed shell replace alice's (root's new shell
    takes her out of the proxy, docs/decisions.md "chsh"); empty fields keep
    bob's; a uid/gid field naming what they have is fine; the tree's aging stays."""
    alice = tree.getpwnam("alice")
    aging = tree_file(tree, "alice", "aging")
    subuid = tree.read("/etc/subuid")
    bob_shadow = tree_file(tree, "bob", "shadow")
    res = run(tree, CHEAP, input="alice:alice-new-1:%d:alice:Alice L:/home/alice2:/bin/sh\n"
                                 "bob::bob::::\n" % alice.uid)
    assert res.returncode == 0, res
    assert entry(tree, "/etc/passwd", "alice") == \
        "alice:x:%d:%d:Alice L:/home/alice2:/bin/sh" % (alice.uid, alice.gid)
    assert verify("alice-new-1", tree_file(tree, "alice", "shadow").split(":")[0])
    assert tree_file(tree, "alice", "shell") == "/bin/sh\n"
    assert tree_file(tree, "alice", "aging") == aging
    assert tree.lstat("/home/alice2").st_uid == alice.uid
    assert tree_file(tree, "bob", "shadow") == bob_shadow
    # no new subordinate ids for updated users
    assert tree.read("/etc/subuid") == subuid
    # a line that changes nothing writes nothing
    before = state(tree)
    assert run(tree, CHEAP, input="bob::::::\n").returncode == 0
    assert state(tree) == before


@pytest.mark.parametrize("line,message", [
    ("x:y", "invalid line (expected 7 fields"),
    ("carl:pw:::Carl:With:Colon:/home/c:/bin/sh", "invalid line"),
    ("../etc:pw:::::", "invalid user name '../etc'"),
    ("-x:pw:::::", "invalid user name"),
    ("a" * 33 + ":pw:::::", "invalid user name"),
    ("carl:" + "p" * 513 + ":::::", "the password is longer than 512 bytes"),
    ("carl:pw:::" + "g" * 1025 + "::", "invalid comment"),
    ("carl:pw:::bell\x07::", "invalid comment 'bell\\x07'"),
    ("carl:pw:-5::::", "invalid user ID '-5'"),
    ("carl:pw:+5::::", "invalid user ID '+5'"),
    ("carl:pw:0x10::::", "invalid user ID '0x10'"),
    ("carl:pw:007::::", "invalid user ID '007'"),
    ("carl:pw:4294967295::::", "invalid user ID '4294967295'"),
    ("carl:pw:99999999999999999999::::", "invalid user ID"),
    ("carl:pw::-1:::", "invalid group ID '-1'"),
    ("carl:pw::4294967295:::", "invalid group ID"),
    ("carl:pw::g/x:::", "invalid group ID 'g/x'"),
    ("carl:pw:ghost::::", "user 'ghost' does not exist"),
    ("carl:pw::::home/carl:", "invalid home directory 'home/carl'"),
    ("carl:pw::::/home/carl/:", "invalid home directory"),
    ("carl:pw::::/:", "invalid home directory"),
    ("carl:pw::::/home/../root/carl:", "invalid home directory '/home/../root/carl'"),
    ("carl:pw::::/home/./carl:", "invalid home directory '/home/./carl'"),
    ("carl:pw::::/home//carl:", "invalid home directory '/home//carl'"),
    ("carl:pw::::/home/carl/..:", "invalid home directory"),
    ("carl:pw:::::bin/sh", "invalid shell 'bin/sh'"),
    ("carl:pw:::::" + PROXY, "invalid shell"),
    ("carl:pw:::::/bin/a,b", "invalid shell"),
    ("ann:pw2:::::", "user 'ann' already appears on line 1"),
    ("users:pw:::::", "group 'users' already exists"),
    ("alice:pw:12345::::", "user 'alice' exists with UID"),
    ("alice:pw::root:::", "user 'alice' exists with GID"),
])
def test_bad_line_changes_nothing(shared_tree, line, message):
    tree = shared_tree
    before = state(tree)
    batch = "ann:pw-ann-1::::/home/ann:/bin/bash\n%s\nzed:pw-zed-1:::::\n" % line
    res = run(tree, CHEAP, input=batch.encode())
    err = res.stderr.decode()
    assert res.returncode == 1, res
    assert err.startswith("newusers: line 2: ") and message in err.splitlines()[0], err
    assert err.endswith("newusers: error detected, changes ignored\n"), err
    assert state(tree) == before


def test_stale_gshadow_line_refuses_the_new_group(tree):
    """A gshadow line without a group must not pass its password and administrators to
    a group newusers makes: the line is refused, as shadow-utils' newusers refuses it."""
    sb = tree
    sb.write("/etc/gshadow", sb.read("/etc/gshadow") + "carl:$6$abc$def:mallory:mallory\n",
             mode=0o640, gid=sb.getgrnam("shadow")[1])
    before = state(sb)
    res = run(sb, CHEAP, input=b"carl:pw-carl-1:::::\n")
    err = res.stderr.decode()
    assert res.returncode == 1, res
    assert err.startswith("newusers: line 1: group 'carl' is a shadow group, but does not "
                          "exist in /etc/group\n"), err
    assert state(sb) == before


def test_empty_id_range_changes_nothing(tree):
    """UID_MAX below UID_MIN: found under the locks, reported as a bad line's batch
    ends, and nothing is written."""
    sb = tree
    defs = [l for l in sb.read("/etc/login.defs").splitlines()
            if l.split()[:1] not in (["UID_MIN"], ["UID_MAX"])]
    sb.write("/etc/login.defs", "\n".join(defs + ["UID_MIN 5000", "UID_MAX 4000"]) + "\n")
    before = state(sb)
    res = run(sb, CHEAP, input=b"carl:pw-carl-1:::::\n")
    assert res.returncode == 1, res
    assert res.stderr.decode() == ("newusers: /etc/login.defs: the UID or GID range is empty\n"
                                   "newusers: error detected, changes ignored\n"), res
    assert state(sb) == before


def test_hostile_input(shared_tree):
    tree = shared_tree
    before = state(tree)
    cases = [
        # a newline injected into a field splits the line: both halves are refused
        (b"ann:pw:::Ann\nEvil:/root:/bin/sh\n", [1, 2]),
        (b"ann:pw:::" + b"A" * 20000 + b":/home/ann:\n", [1]),
        (b"ann:p\0w:::::\n", [1]),
        (b"\n", [1]),
        (b"ann:pw:::::\nbob:pw:::::\n\xff\xfe:pw:::::\n", [3]),
    ]
    for data, lines in cases:
        res = run(tree, CHEAP, input=data)
        assert res.returncode == 1, (data, res)
        got = [int(l.split(":")[1].split()[1]) for l in res.stderr.decode().splitlines()
               if l.startswith("newusers: line ")]
        assert got == lines, (data, res.stderr)
    # errors past the hundredth are counted, not printed
    res = run(tree, CHEAP, input="".join("bad%d\n" % i for i in range(150)))
    assert res.returncode == 1
    assert "newusers: 50 more errors not shown" in res.stderr
    assert state(tree) == before
    # empty input and a closed stdin do nothing and succeed
    for script in ("%s </dev/null", "exec <&- ; %s"):
        assert tree.run(["/bin/sh", "-c", script % NEWUSERS], check=False).returncode == 0
    assert state(tree) == before


def test_options(tree):
    # -r: system ids, no subordinate ranges, no aging
    assert run(tree, ["-r"] + CHEAP, input="sysd:pw-1::::/var/lib/sysd:\n").returncode == 0
    sysd = tree.getpwnam("sysd")
    assert 100 <= sysd.uid < 1000 and 100 <= sysd.gid < 1000
    assert entry(tree, "/etc/subuid", "sysd") is None
    assert tree_file(tree, "sysd", "aging") == "-1:-1:-1:-1:-1:\n"
    # -c/--crypt-method and -s/--sha-rounds; without -c, login.defs (SHA512 here)
    for i, (argv, prefix) in enumerate((
            (["--crypt-method", "YESCRYPT", "--sha-rounds", "5"], "$y$j9T$"),
            (["-c", "BCRYPT", "-s", "4"], "$2b$04$"),
            (["-c", "SHA256", "--allow-legacy"], "$5$"),
            ([], "$6$"))):
        name = "u%d" % i
        res = run(tree, argv, input="%s:pw-%s:::::\n" % (name, name))
        assert res.returncode == 0, (argv, res)
        h = tree_file(tree, name, "shadow").split(":")[0]
        assert h.startswith(prefix) and verify("pw-" + name, h), (argv, h)
    # -c NONE stores a given hash (checked like chpasswd -e)
    h = sandbox._crypt("given-1")
    assert run(tree, ["-c", "NONE"], input="given:%s:::::\n" % h).returncode == 0
    assert tree_file(tree, "given", "shadow").split(":")[0] == h
    # a FILE argument instead of standard input
    tree.write("/root/batch", "fromfile:pw-f-1:::::\n", mode=0o600)
    assert run(tree, CHEAP + ["/root/batch"]).returncode == 0
    assert tree.getpwnam("fromfile")
    before = state(tree)
    for argv, message in (
            (["-c", "MD5"], "crypt method MD5 is legacy"),
            (["-c", "SHA256"], "give --allow-legacy"),
            (["-c", "DES"], "crypt method DES is not supported"),
            (["-c", "FOO"], "unsupported crypt method: FOO"),
            (["-s", "1000"], "-s flag is only allowed with the -c flag"),
            (["-c", "SHA512", "-s", "x"], "invalid numeric argument 'x'"),
            (["-b"], "option --badname is not supported"),
            (["--badname"], "option --badname is not supported"),
            (["-R", "/x"], "option --root is not supported"),
            (["a", "b"], "Usage: newusers"),
            (["-Z"], "invalid option"),
            (["/nonexistent"], "cannot open /nonexistent"),
            (["-c", "NONE"], "line 1: user 'plain': not a hash")):
        res = run(tree, argv, input="plain:clear-text:::::\n")
        assert res.returncode == 1 and message in res.stderr, (argv, res)
    res = run(tree, ["-c", "NONE"], input="old:%s:::::\n" % sandbox._crypt("x", "$1$"))
    assert res.returncode == 1 and "legacy method" in res.stderr
    assert state(tree) == before
    res = run(tree, ["-h"])
    assert res.returncode == 0 and res.stdout.startswith("Usage: newusers [options]")
    res = run(tree, ["--version"])
    assert res.returncode == 0 and "hardened-shadow" in res.stdout
    res = run(tree, CHEAP, input="mallory:pw:::::\n", user="alice")
    assert res.returncode == 1 and res.stderr == "newusers: Permission denied.\n"
    assert state(tree) == before


def test_homes_are_never_followed(tree):
    """An existing symlink or file at the home path is left alone (not followed, not
    chowned); a home below a directory a user controls is refused and undoes the batch."""
    tree.run(["/bin/ln", "-s", "/etc", "/home/evil"])
    assert run(tree, CHEAP, input="evil:pw-1::::/home/evil:\n").returncode == 0
    assert tree.lstat("/etc").st_uid == 0
    tree.run(["/bin/mkdir", "-m", "0755", "/srv/alice"])
    tree.run(["/bin/chown", "alice", "/srv/alice"])
    before = state(tree)
    res = run(tree, CHEAP, input="ok1:pw-1::::/home/ok1:\nbad:pw-2::::/srv/alice/bad:\n")
    assert res.returncode == 1
    assert "line 2: cannot create directory /srv/alice/bad: a directory above it " \
        "is not root's" in res.stderr
    assert "changes undone: nothing was changed" in res.stderr
    assert state(tree) == before and not tree.exists("/srv/alice/bad")


def test_shared_home_is_made_once(tree):
    """Lines that share a new home make it once (the first line's owner); the batch leaves
    no reserved directory or journal behind."""
    res = run(tree, CHEAP, input="sa:pw-1::::/srv/shared/home:\n"
                                 "sb:pw-2::::/srv/shared/home:\n")
    assert res.returncode == 0, res
    assert tree.lstat("/srv/shared/home").st_uid == tree.getpwnam("sa").uid
    assert tree.run(["/bin/ls", "-A", "/srv/shared"]).stdout.split() == ["home"]
    assert not tree.exists("/etc/.hardened-shadow.txn")
    assert not [e for e in tree.run(["/bin/ls", "-A", TREE]).stdout.split()
                if e.startswith(".")]


def test_write_failure_undoes_everything(tree):
    """/etc/passwd is a mount point (rename over it fails): subuid, subgid, gshadow and
    group were already written when it fails; they are put back, the new tree
    directories and homes removed, an updated user's shadow restored."""
    before = state(tree)
    shadow_alice = tree_file(tree, "alice", "shadow")
    target = tree.root + "/etc/passwd"
    with grouptools.bind_mounted(target):
        res = run(tree, CHEAP, input="ann:pw-1::::/home/ann:/bin/bash\n"
                                     "alice:alice-new-2:::::\n"
                                     "ben:pw-2:::::\n")
    assert res.returncode == 1, res
    assert "cannot write /etc/passwd" in res.stderr
    assert res.stderr.endswith("newusers: error detected, changes undone: nothing was "
                               "changed\n"), res.stderr
    assert state(tree) == before
    assert tree_file(tree, "alice", "shadow") == shadow_alice
    assert "batch failed; every change undone" in "".join(tree.syslog())


def test_leftover_tree_directory_is_replaced(tree):
    """A directory in the tree without a passwd line (an interrupted useradd) is not
    inherited by the new user of that name."""
    tree.run(["/bin/cp", "-a", TREE + "/alice", TREE + "/ghost"])
    res = run(tree, CHEAP, input="ghost:pw-g-1:::::\n")
    assert res.returncode == 0, res
    assert "removing /etc/hardened-shadow/ghost, left over without a passwd line" in res.stderr
    assert verify("pw-g-1", tree_file(tree, "ghost", "shadow").split(":")[0])
    assert tree.lstat(TREE + "/ghost").st_uid == tree.getpwnam("ghost").uid


def test_existing_user_without_tree_directory(tree):
    tree.run(["/bin/rm", "-rf", TREE + "/bob"])
    before = state(tree)
    res = run(tree, CHEAP, input="bob:bob-new-1:::::\n")
    assert res.returncode == 1
    assert "line 1: user 'bob' has no directory /etc/hardened-shadow/bob" in res.stderr
    assert state(tree) == before
    # GECOS only: nothing in the tree to write, so it works
    assert run(tree, CHEAP, input="bob::::Bob B::\n").returncode == 0
    assert entry(tree, "/etc/passwd", "bob").split(":")[4] == "Bob B"


def test_classic_system(sb):
    """No tree: hashes go to /etc/shadow (aging from login.defs), updates replace the
    shadow line."""
    sb.add_classic_user("alice", password="alice-old-1")
    res = run(sb, CHEAP, input="ann:pw-ann-1::::/home/ann:/bin/bash\n"
                               "alice:alice-new-1:::::\n")
    assert res.returncode == 0, res
    assert not sb.exists(TREE)
    ann = sb.getpwnam("ann")
    assert entry(sb, "/etc/passwd", "ann") == \
        "ann:x:%d:%d::/home/ann:/bin/bash" % (ann.uid, ann.uid)
    f = entry(sb, "/etc/shadow", "ann").split(":")
    assert verify("pw-ann-1", f[1]) and is_today(f[2]) and \
        f[3:] == ["0", "99999", "7", "", "", ""]
    f = entry(sb, "/etc/shadow", "alice").split(":")
    assert verify("alice-new-1", f[1]) and is_today(f[2])
    # glibc reads what we wrote
    assert sb.run(["/usr/bin/getent", "shadow", "ann"]).stdout.startswith("ann:$6$")
    assert sb.run(["/usr/bin/getent", "group", "ann"]).stdout == "ann:x:%d:\n" % ann.uid


def test_concurrent_with_useradd(tree):
    """A 300-user batch while our useradd and shadow-utils' useradd add users: everyone
    is there once, with a unique uid, and the files stay consistent."""
    batch = "".join("nu%03d:pw-%d:::::\n" % (i, i) for i in range(300))
    tree.write("/root/batch", batch, mode=0o600)
    script = (
        "%s -c SHA512 -s 1000 /root/batch & nu=$!\n"
        "for i in 0 1 2 3 4 5 6 7; do /usr/sbin/useradd ua$i || exit 10; "
        "%s/useradd su$i || exit 11; done\n"
        "wait $nu" % (NEWUSERS, sandbox.CLASSIC_TOOLS_DIR))
    res = tree.run(["/bin/sh", "-c", script], check=False, timeout=120)
    assert res.returncode == 0, res
    passwd = [l.split(":") for l in tree.read("/etc/passwd").splitlines()]
    names = [f[0] for f in passwd]
    want = ["nu%03d" % i for i in range(300)] + ["ua%d" % i for i in range(8)] + \
        ["su%d" % i for i in range(8)]
    assert all(names.count(n) == 1 for n in want)
    uids = [f[2] for f in passwd if f[0] in want]
    assert len(set(uids)) == len(uids)
    groups = [l.split(":")[0] for l in tree.read("/etc/group").splitlines()]
    assert all(groups.count(n) == 1 for n in want)
    assert tree.exists(TREE + "/nu299/shadow") and tree.exists(TREE + "/ua7/shadow")
    tree.run([sandbox.CLASSIC_TOOLS_DIR + "/grpck", "-r"])


def test_progress_only_on_a_terminal(tree):
    """On a terminal newusers says how many passwords it has hashed ("\\rnewusers: N/M
    passwords"; slow hashes make it appear; M counts only the lines with a password) and
    erases the line; through pipes the same kind of batch prints nothing at all."""
    argv = [NEWUSERS, "-c", "SHA512", "-s", "3000000"]
    tree.write("/root/batch", "".join("pg%d:pw-%d::::/home/pg%d:/bin/sh\n" % (i, i, i)
                                      for i in range(3)) + "pg3:::::/home/pg3:/bin/sh\n",
               mode=0o600)
    status, out = tree.pty_run(["/bin/sh", "-c", " ".join(argv) + " </root/batch"], [],
                               timeout=120)
    assert status == 0, out
    assert re.fullmatch(r"(\rnewusers: [123]/3 passwords)+\r\x1b\[K", out), out
    res = run(tree, argv[1:], input="".join("pp%d:pw-%d::::/home/pp%d:/bin/sh\n" % (i, i, i)
                                            for i in range(3)))
    assert res.returncode == 0 and res.stdout == "" and res.stderr == "", res


def test_create_only_and_aging(tree):
    """hs-ldif import's options: --aging's six day fields go into the new accounts'
    aging and shadow files; --create-only refuses an existing name or uid; --aging
    alone, or a bad day count, is refused with nothing written."""
    before = state(tree)
    res = run(tree, ["--aging"], input="x:::::::::::::\n")
    assert res.returncode == 1 and "--aging is only allowed with --create-only" in res.stderr
    res = run(tree, ["--create-only", "--aging"] + CHEAP,
              input="ann:pw-1:4001:::/home/ann:/bin/sh:19000:1:90:7:5:x\n")
    assert res.returncode == 1 and "line 1: invalid day count 'x'" in res.stderr
    res = run(tree, ["--create-only"] + CHEAP, input="ann:pw-1:::::\nalice:pw-2:::::\n")
    assert res.returncode == 1 and "line 2: user 'alice' already exists" in res.stderr
    uid = tree.getpwnam("alice").uid
    res = run(tree, ["--create-only"] + CHEAP, input="ann:pw-1:%d::::\n" % uid)
    assert res.returncode == 1 and "line 1: UID %d is already used" % uid in res.stderr
    assert state(tree) == before
    res = run(tree, ["--create-only", "--aging"] + CHEAP,
              input="ann:pw-1:4001:::/home/ann:/bin/sh:19000:1:90:7::20000\n"
                    "ben:pw-2:4002:::/home/ben:/bin/sh::::::\n")
    assert res.returncode == 0, res
    assert tree_file(tree, "ann", "shadow").split(":")[1] == "19000"
    assert tree_file(tree, "ann", "aging") == "1:90:7:-1:20000:\n"
    assert tree_file(tree, "ben", "shadow").split(":")[1] == ""
    assert tree_file(tree, "ben", "aging") == "-1:-1:-1:-1:-1:\n"
