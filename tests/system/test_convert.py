"""pwconv / pwunconv in a throwaway root: round trips on a large generated database, the
on-disk layout of DESIGN.md section 2, refusals (bad input, half-converted state, non-root,
full disk) that change nothing, --from-tcb, SIGKILL at random points, and Ctrl-C (or
SIGTERM, SIGHUP) during a run, which takes effect only once the run is complete."""

import os
import random
import re
import signal
import stat

import pytest

import sandbox

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
PWCONV = "/usr/sbin/pwconv"
PWUNCONV = "/usr/sbin/pwunconv"
TREE = "/etc/hardened-shadow"
DAY_FIELDS = ("lstchg", "min", "max", "warn", "inact", "expire")


# ---------------------------------------------------------------- helpers

def parse_shadow(text):
    """name -> (hash, lstchg, min, max, warn, inact, expire); "" and "-1" both mean unset
    (None).  The reserved flag field is not kept by the tree."""
    out = {}
    for line in text.splitlines():
        if not line:
            continue
        f = line.split(":")
        assert len(f) == 9, line
        days = tuple(None if v in ("", "-1") else int(v) for v in f[2:8])
        assert f[0] not in out
        out[f[0]] = (f[1],) + days
    return out


def parse_passwd(text):
    return {l.split(":")[0]: l.split(":") for l in text.splitlines() if l}


def etc_shells(sb):
    return [l for l in sb.read("/etc/shells").splitlines() if l and not l.startswith("#")]


def hp(sb, path):
    """Host path of a path inside the root."""
    return os.path.join(sb.root, path.lstrip("/"))


HASHES = [
    "$y$j9T$%s$Cf0vJ1W3pxbBXnEcPAaK6vL6H5v6GQ0sRNs6sKYo0a3",
    "$6$%s$Vxq2yDyx6gHrbHvZ0s9sE3Lbm8H8YfFqWm0ByJk1n0W1cLxu8f3U2p9Yq3cX3c9k6m3h2p1o0n9m8l7k6j5i4",
    "!$y$j9T$%s$lockedlockedlockedlockedlockedlockedlocked1",
    "!$6$%s$lockedsha512",
    "*", "!", "", "!!",
]
DAY_SHAPES = ["", "-1", "0", "1", "19000", "20000", "99999", "99999999"]


def generate_users(n, seed=1, first_uid=20000, no_shadow_every=0):
    """Lines for /etc/passwd and /etc/shadow with every field shape.  Every no_shadow_every-th
    user has no shadow line at all (0: none)."""
    rnd = random.Random(seed)
    shells = ["/bin/bash", "/bin/sh", "/usr/bin/dash", "/usr/sbin/nologin", "/bin/false",
              "/usr/bin/git-shell", "", "/usr/bin/tmux"]
    pw, sp = [], []
    for i in range(n):
        # every 7th name exercises the unusual (valid) characters
        name = "u%05d%s" % (i, ["_x", ".y", "-z", "$", "_"][i % 5] if i % 7 == 6 else "")
        shell = shells[i % len(shells)]
        pw.append("%s:x:%d:%d:User %d,,,:/home/%s:%s" % (name, first_uid + i, 100, i, name,
                                                         shell))
        if no_shadow_every and i % no_shadow_every == 0:
            continue
        h = HASHES[i % len(HASHES)]
        if "%s" in h:
            h = h % ("salt%06d" % i)
        # glibc's files backend refuses "-1" in LSTCHG (it reads it unsigned), so that
        # spelling appears only in the other day fields
        days = [rnd.choice(DAY_SHAPES[:1] + DAY_SHAPES[2:])] + \
            [rnd.choice(DAY_SHAPES) for _ in range(5)]
        sp.append("%s:%s:%s:" % (name, h, ":".join(days)))
    return pw, sp


def add_generated(sb, n, **kw):
    pw, sp = generate_users(n, **kw)
    sb.write("/etc/passwd", sb.read("/etc/passwd") + "\n".join(pw) + "\n")
    shadow_gid = sb.getgrnam("shadow")[1]
    sb.write("/etc/shadow", sb.read("/etc/shadow") + "\n".join(sp) + "\n", mode=0o640,
             gid=shadow_gid)
    return pw, sp


def snapshot(sb, paths=("/etc/passwd", "/etc/shadow", "/etc/shadow-", "/etc/group",
                        "/etc/gshadow", "/etc/shells")):
    return {p: (sb.read_bytes(p) if sb.exists(p) else None) for p in paths}


TEMP_RX = re.compile(r"^(\.hardened-shadow\..*|\..*\.[A-Za-z0-9]{6,}|.*\.lock|"
                     r"(passwd|shadow|group|gshadow)\.\d+)$")


def leftovers(sb):
    return sorted(n for n in os.listdir(hp(sb, "/etc"))
                  if TEMP_RX.match(n) and n != ".pwd.lock")


def assert_unchanged(sb, before):
    after = snapshot(sb, tuple(before))
    for p in before:
        assert after[p] == before[p], "%s changed" % p
    assert not sb.exists(TREE)
    assert leftovers(sb) == []


def check_tree_layout(sb, names):
    """DESIGN.md section 2, exactly."""
    tree_gid = sb.getgrnam("hardened-shadow")[1]
    auth_gid = sb.getgrnam("hardened-shadow-auth")[1]
    passwd = parse_passwd(sb.read("/etc/passwd"))
    st = os.lstat(hp(sb, TREE))
    assert stat.S_ISDIR(st.st_mode)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, tree_gid, 0o710)
    entries = sorted(os.listdir(hp(sb, TREE)))
    assert entries == sorted(names)
    for name in names:
        uid = int(passwd[name][2])
        d = hp(sb, TREE + "/" + name)
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode), name
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, auth_gid, 0o2710), name
        assert sorted(os.listdir(d)) == ["aging", "shadow", "shell"], name
        for f, owner, mode in (("shadow", uid, 0o640), ("shell", uid, 0o640),
                               ("aging", 0, 0o644)):
            st = os.lstat(d + "/" + f)
            assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1, (name, f)
            assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (owner, auth_gid, mode), \
                (name, f)


def read_tree_entry(sb, name):
    d = hp(sb, TREE + "/" + name)
    with open(d + "/shadow") as f:
        h, lst, rest = f.read().split(":")
    assert rest == "\n"
    with open(d + "/aging") as f:
        aging = f.read()
    assert aging.endswith(":\n")
    a = aging[:-2].split(":")
    assert len(a) == 5 and "" not in a, aging
    with open(d + "/shell") as f:
        shell = f.read()
    days = (None if lst == "" else int(lst),) + tuple(None if v == "-1" else int(v) for v in a)
    return (h,) + days, shell


# ---------------------------------------------------------------- round trip

def test_round_trip_10000_users(sb):
    add_generated(sb, 10000)
    before = snapshot(sb)
    orig_shadow = parse_shadow(before["/etc/shadow"].decode())
    orig_passwd = parse_passwd(before["/etc/passwd"].decode())
    shells = etc_shells(sb)
    assert PROXY not in shells

    res = sb.run([PWCONV])
    assert res.stderr == ""
    assert "converted %d users" % len(orig_passwd) in res.stdout
    assert "shadow: hardened_shadow" in res.stdout
    assert "pam_hardened_shadow.so" in res.stdout

    # the classic hashes are gone, backup included; nothing temporary is left
    assert not sb.exists("/etc/shadow") and not sb.exists("/etc/shadow-")
    assert leftovers(sb) == []
    check_tree_layout(sb, list(orig_passwd))
    assert etc_shells(sb) == shells + [PROXY]

    passwd = parse_passwd(sb.read("/etc/passwd"))
    assert list(passwd) == list(orig_passwd)
    for name, f in passwd.items():
        o = orig_passwd[name]
        assert f[1] == "x"
        assert f[:6] == o[:6]
        # root keeps its real shell in /etc/passwd (it must be able to repair a tree)
        want_proxy = o[6] in shells and o[2] != "0"
        assert f[6] == (PROXY if want_proxy else o[6]), name
        rec, shell = read_tree_entry(sb, name)
        assert rec == orig_shadow[name], name
        assert shell == (o[6] if o[6] else "/bin/sh") + "\n", name
    # a sample of every shape made it (the generator is not silently uniform)
    kinds = {rec[0][:3] for rec in orig_shadow.values()}
    assert {"$y$", "$6$", "!$y", "!$6", "*", "!", "", "!!"} <= kinds

    res = sb.run([PWUNCONV])
    assert res.stderr == ""
    assert not sb.exists(TREE)
    assert leftovers(sb) == []
    assert sb.read_bytes("/etc/passwd") == before["/etc/passwd"]
    assert sb.read_bytes("/etc/shells") == before["/etc/shells"]
    restored = sb.read("/etc/shadow")
    assert parse_shadow(restored) == orig_shadow
    # unset fields are written empty, as shadow-utils does
    assert ":-1:" not in restored
    st = sb.lstat("/etc/shadow")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == \
        (0, sb.getgrnam("shadow")[1], 0o640)
    assert sb.getpwnam("root").shell == "/bin/bash"


def test_progress_only_on_a_terminal(sb):
    """On a terminal, pwconv and pwunconv say how far they are ("\\rpwconv: N/M users",
    a few times a second) and erase that line before their final message; through pipes
    (test_round_trip_10000_users, stderr == "") nothing of it appears.  Each open is
    slowed by strace, so that a run lasts long enough for a report on any machine."""
    add_generated(sb, 6000)
    slow = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=openat:delay_enter=50"]
    for prog, name in ((PWCONV, "pwconv"), (PWUNCONV, "pwunconv")):
        status, out = sb.pty_run(slow + [prog], [], timeout=300)
        assert status == 0, out
        shown = re.findall(r"\r%s: (\d+)/(\d+) users" % name, out)
        assert shown, out[:2000]
        assert all(int(done) <= int(total) for done, total in shown)
        # erased ("\r" + erase-line) before anything else is printed
        tail = out[out.rindex("\r%s: " % name):]
        assert re.fullmatch(r"\r%s: \d+/\d+ users\r\x1b\[K([^\r\x1b]*)" % name, tail), tail
    res = sb.run([PWCONV])
    assert res.stderr == "" and "\r" not in res.stdout


def test_users_without_shadow_entry(sb):
    pw, sp = add_generated(sb, 50, no_shadow_every=5)
    sb.write("/etc/passwd", sb.read("/etc/passwd") +
             "plain:$6$abc$def:30001:100::/home/plain:/bin/bash\n")
    sb.run([PWCONV])
    rec, _ = read_tree_entry(sb, "u00000")
    assert rec[0] == "!"            # "x" without a shadow entry: locked
    rec, _ = read_tree_entry(sb, "plain")
    assert rec[0] == "$6$abc$def"  # a hash still in /etc/passwd is kept
    assert sb.getpwnam("plain").shell == PROXY
    assert parse_passwd(sb.read("/etc/passwd"))["plain"][1] == "x"
    sb.run([PWUNCONV])
    restored = parse_shadow(sb.read("/etc/shadow"))
    assert restored["u00000"][0] == "!"
    assert restored["plain"][0] == "$6$abc$def"


def test_groups_are_created_when_missing(sb):
    for g in ("hardened-shadow", "hardened-shadow-auth"):
        sb.run(["/usr/libexec/hs-test/shadow-utils/groupdel", g])
    sb.add_classic_user("alice", password="pw")
    res = sb.run([PWCONV])
    assert "created group hardened-shadow " in res.stdout
    tree = sb.getgrnam("hardened-shadow")
    auth = sb.getgrnam("hardened-shadow-auth")
    assert tree and auth and tree[1] != auth[1] and tree[1] < 1000 and auth[1] < 1000
    assert re.search(r"^hardened-shadow:!::$", sb.read("/etc/gshadow"), re.M)
    check_tree_layout(sb, list(parse_passwd(sb.read("/etc/passwd"))))
    sb.run(["/usr/libexec/hs-test/shadow-utils/grpck", "-r"], check=True)


# ---------------------------------------------------------------- refusals

def refuse(sb, argv, *needles, user=None):
    res = sb.run(argv, check=False, user=user)
    assert res.returncode == 1, (res.stdout, res.stderr)
    for n in needles:
        assert n in res.stderr, res.stderr
    return res


@pytest.mark.parametrize("case", ["malformed", "bad_number", "dup_shadow", "dup_passwd",
                                  "not_in_passwd", "bad_passwd"])
def test_bad_input_changes_nothing(sb, case):
    add_generated(sb, 200)
    sp = sb.read("/etc/shadow")
    pw = sb.read("/etc/passwd")
    nsp = len(sp.splitlines())
    npw = len(pw.splitlines())
    if case == "malformed":
        sb.write("/etc/shadow", sp + "brokenline:$6$x\n", mode=0o640)
        needles = ["/etc/shadow:%d:" % (nsp + 1)]
    elif case == "bad_number":
        lines = sp.splitlines()
        lines[7] = lines[7].split(":")[0] + ":*:12x:0:99999:7:::"
        sb.write("/etc/shadow", "\n".join(lines) + "\n", mode=0o640)
        needles = ["/etc/shadow:8:"]
    elif case == "dup_shadow":
        sb.write("/etc/shadow", sp + sp.splitlines()[-1] + "\n", mode=0o640)
        needles = ["/etc/shadow:%d:" % (nsp + 1), "duplicate"]
    elif case == "dup_passwd":
        sb.write("/etc/passwd", pw + pw.splitlines()[-3] + "\n")
        needles = ["/etc/passwd:%d:" % (npw + 1), "duplicate"]
    elif case == "not_in_passwd":
        sb.write("/etc/shadow", sp + "ghost:*:19000:0:99999:7:::\n", mode=0o640)
        needles = ["/etc/shadow:%d:" % (nsp + 1), "ghost", "not in /etc/passwd"]
    else:
        sb.write("/etc/passwd", pw + "bad:x:notanumber:100::/:/bin/sh\n")
        needles = ["/etc/passwd:%d:" % (npw + 1)]
    before = snapshot(sb)
    refuse(sb, [PWCONV], *needles)
    assert_unchanged(sb, before)


def test_full_disk_changes_nothing(base):
    with sandbox.Sandbox(base, size="64m") as sb:
        add_generated(sb, 3000)
        before = snapshot(sb)
        # fill the root's tmpfs, then give back a little so the locks can be taken and the
        # failure happens while the tree is being built
        sb.sh("dd if=/dev/zero of=/fill bs=1M 2>/dev/null; sync; "
              "dd if=/dev/zero of=/fill2 bs=4k count=64 2>/dev/null; "
              "dd if=/dev/zero of=/fill3 bs=4k count=64 2>/dev/null; rm -f /fill2",
              check=False)
        res = refuse(sb, [PWCONV], "No space left on device")
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert_unchanged(sb, before)
        # with room again, the same database converts
        sb.run(["rm", "-f", "/fill", "/fill3"])
        sb.run([PWCONV])
        assert not sb.exists("/etc/shadow")


def test_non_root_is_refused(sb):
    sb.add_classic_user("alice", password="pw")
    before = snapshot(sb)
    refuse(sb, [PWCONV], "permission denied", user="alice")
    refuse(sb, [PWUNCONV], "permission denied", user="alice")
    assert_unchanged(sb, before)


def test_usage_errors(sb):
    for prog in (PWCONV, PWUNCONV):
        res = sb.run([prog, "--bogus"], check=False)
        assert res.returncode == 2 and "Usage:" in res.stderr
        res = sb.run([prog, "extra"], check=False)
        assert res.returncode == 2
        res = sb.run([prog, "--help"])
        assert "Usage:" in res.stdout
        res = sb.run([prog, "-V"])
        assert "(hardened-shadow)" in res.stdout
        res = sb.run([prog, "-R", "/mnt"], check=False)
        assert res.returncode == 2 and "not supported" in res.stderr
        name = prog.rsplit("/", 1)[1]
        assert "run %s inside the root instead (chroot /mnt %s)" % (name, name) in res.stderr
    # one main serves both: each keeps its own help, and only pwconv takes --from-tcb
    assert sb.run([PWCONV, "--help"]).stdout == (
        "Usage: pwconv [options]\n\n"
        "Move the password hashes, aging data and login shells from /etc/shadow\n"
        "(or /etc/tcb) into /etc/hardened-shadow.\n\n"
        "Options:\n"
        "      --from-tcb                import /etc/tcb/USER/shadow instead of /etc/shadow\n"
        "  -h, --help                    display this help message and exit\n"
        "  -V, --version                 display the version and exit\n")
    assert sb.run([PWUNCONV, "--help"]).stdout == (
        "Usage: pwunconv [options]\n\n"
        "Move the password hashes, aging data and login shells from\n"
        "/etc/hardened-shadow back into /etc/shadow and /etc/passwd.\n\n"
        "Options:\n"
        "  -h, --help                    display this help message and exit\n"
        "  -V, --version                 display the version and exit\n")
    res = sb.run([PWUNCONV, "--from-tcb"], check=False)
    assert res.returncode == 2 and "Usage:" in res.stderr


def test_half_converted_is_refused_by_both(sb):
    sb.add_classic_user("alice", password="pw")
    saved = sb.read_bytes("/etc/shadow")
    sb.run([PWCONV])
    sb.write("/etc/shadow", saved, mode=0o640)
    before = snapshot(sb)
    tree_before = sorted(os.listdir(hp(sb, TREE)))
    refuse(sb, [PWCONV], "half converted")
    refuse(sb, [PWUNCONV], "half converted")
    assert snapshot(sb) == before
    assert sorted(os.listdir(hp(sb, TREE))) == tree_before


def test_accounts_sysusers_made_on_a_converted_system_are_carried_back(sb):
    """systemd-sysusers (a package's postinst) creates /etc/shadow next to the tree for
    its new accounts, which have no directory there.  pwunconv carries their lines over
    as they are; without that nothing could convert the system back (and
    hardened-shadow-disable, and with it the package's removal, stayed refused)."""
    if not sb.exists("/usr/bin/systemd-sysusers"):
        pytest.skip("systemd-sysusers is not installed")
    sb.add_classic_user("alice", password="pw")
    alice = parse_shadow(sb.read("/etc/shadow"))["alice"]
    sb.run([PWCONV])
    sb.write("/usr/lib/sysusers.d/hs-test-svc.conf", 'u hs-test-svc - "Svc" /nonexistent\n')
    sb.run(["/usr/bin/systemd-sysusers", "hs-test-svc.conf"])
    svc_line = [l for l in sb.read("/etc/shadow").splitlines() if l.startswith("hs-test-svc:")]
    assert len(svc_line) == 1 and svc_line[0].split(":")[1] == "!*", sb.read("/etc/shadow")
    assert not sb.exists(TREE + "/hs-test-svc")
    res = sb.run([PWUNCONV])
    assert not sb.exists(TREE)
    text = sb.read("/etc/shadow")
    assert svc_line[0] + "\n" in text, text
    assert parse_shadow(text)["alice"] == alice
    st = sb.lstat("/etc/shadow")
    assert stat.S_IMODE(st.st_mode) == 0o640, oct(st.st_mode)
    assert "hs-test-svc has no directory" not in res.stderr, res.stderr


def test_nothing_to_do(sb):
    res = sb.run([PWUNCONV])
    assert "nothing to do" in res.stderr
    sb.run([PWCONV])
    before = snapshot(sb)
    res = sb.run([PWCONV])
    assert "nothing to do" in res.stderr
    assert snapshot(sb) == before


def test_interrupted_pwunconv_is_finished_not_guessed(sb):
    sb.add_classic_user("alice", password="pw")
    orig = parse_shadow(sb.read("/etc/shadow"))
    sb.run([PWCONV])
    # as if pwunconv had died after writing its marker and /etc/shadow
    sb.write(TREE + "/.pwunconv-incomplete", "shadow\n", mode=0o600)
    sb.write("/etc/shadow", "stale:x:1::::::\n", mode=0o640)
    refuse(sb, [PWCONV], "interrupted pwunconv")
    res = sb.run([PWUNCONV])
    assert "interrupted pwunconv" in res.stderr
    assert parse_shadow(sb.read("/etc/shadow")) == orig
    assert not sb.exists(TREE)


def test_proxy_in_passwd_without_tree_is_refused(sb):
    sb.add_classic_user("alice", password="pw", shell=PROXY)
    before = snapshot(sb)
    refuse(sb, [PWCONV], "alice", PROXY)
    assert_unchanged(sb, before)


def test_pwunconv_refuses_unreadable_or_foreign_entries(sb):
    sb.add_classic_user("alice", password="pw")
    sb.add_classic_user("bob", password="pw")
    sb.run([PWCONV])
    before = snapshot(sb)
    # a symlink planted by alice instead of her shadow file
    sb.run(["mv", TREE + "/alice/shadow", "/root/alice-shadow"])
    sb.run(["ln", "-s", "/etc/hardened-shadow/bob/shadow", TREE + "/alice/shadow"])
    refuse(sb, [PWUNCONV], TREE + "/alice/shadow", "symbolic link")
    assert snapshot(sb) == before
    sb.run(["rm", TREE + "/alice/shadow"])
    sb.run(["mv", "/root/alice-shadow", TREE + "/alice/shadow"])
    # a directory for a user who is not in /etc/passwd
    sb.run(["cp", "-a", TREE + "/bob", TREE + "/ghost"])
    refuse(sb, [PWUNCONV], TREE + "/ghost", "not in /etc/passwd")
    assert snapshot(sb) == before
    sb.run(["rm", "-rf", TREE + "/ghost"])
    sb.run([PWUNCONV])



def test_a_symlink_in_place_of_a_directory_is_named(sb):
    """/etc/hardened-shadow (or /etc/tcb/USER) that is a symlink, say to a directory a user
    made in /tmp: both tools refuse it without following it, and say it is a symlink (the
    open's ENOTDIR under O_NOFOLLOW used to come out as "is not a directory")."""
    sb.add_classic_user("alice", password="pw")
    sb.sh("mkdir -m 1777 /tmp/evil; ln -s /tmp/evil " + TREE)
    before = snapshot(sb)
    for tool in (PWCONV, PWUNCONV):
        res = refuse(sb, [tool], "cannot open " + TREE, "symbolic link")
        assert len(res.stderr.splitlines()) == 1, res.stderr
    assert snapshot(sb) == before and os.listdir(hp(sb, "/tmp/evil")) == []
    sb.run(["rm", TREE])
    make_tcb(sb, sb.read("/etc/shadow"))
    sb.run(["rm", "-f", "/etc/shadow", "/etc/shadow-"])
    sb.sh("mv /etc/tcb/alice /tmp/evil/alice; ln -s /tmp/evil/alice /etc/tcb/alice")
    before = snapshot(sb)
    refuse(sb, [PWCONV, "--from-tcb"], "cannot open /etc/tcb/alice", "symbolic link")
    assert_unchanged(sb, before)

# ---------------------------------------------------------------- tcb

def make_tcb(sb, shadow_text):
    """Openwall tcb layout: /etc/tcb root:shadow 0710, /etc/tcb/USER USER:auth 02710,
    /etc/tcb/USER/shadow USER:auth 0640 holding the user's full shadow line."""
    passwd = parse_passwd(sb.read("/etc/passwd"))
    shadow_gid = sb.getgrnam("shadow")[1]
    sb.run(["mkdir", "-m", "0710", "/etc/tcb"])
    os.chown(hp(sb, "/etc/tcb"), 0, shadow_gid)
    for line in shadow_text.splitlines():
        name = line.split(":")[0]
        uid = int(passwd[name][2])
        d = hp(sb, "/etc/tcb/" + name)
        os.mkdir(d)
        os.chown(d, uid, shadow_gid)
        os.chmod(d, 0o2710)
        sb.write("/etc/tcb/%s/shadow" % name, line + "\n", mode=0o640, uid=uid, gid=shadow_gid)


def test_from_tcb(sb):
    add_generated(sb, 300)
    shadow_text = sb.read("/etc/shadow")
    orig = parse_shadow(shadow_text)
    make_tcb(sb, shadow_text)
    sb.run(["rm", "/etc/shadow", "/etc/shadow-"], check=False)
    # /etc/shadow next to /etc/tcb is refused
    sb.write("/etc/shadow", shadow_text, mode=0o640)
    refuse(sb, [PWCONV, "--from-tcb"], "/etc/shadow", "--from-tcb")
    sb.run(["rm", "/etc/shadow"])
    res = sb.run([PWCONV, "--from-tcb"])
    assert "/etc/tcb is left in place" in res.stdout
    assert sb.exists("/etc/tcb/u00001/shadow")
    check_tree_layout(sb, list(parse_passwd(sb.read("/etc/passwd"))))
    for name in orig:
        assert read_tree_entry(sb, name)[0] == orig[name], name
    sb.run([PWUNCONV])
    assert parse_shadow(sb.read("/etc/shadow")) == orig


@pytest.mark.parametrize("attack", ["symlink", "wrong_name", "foreign_owner", "two_lines",
                                    "not_in_passwd", "nul", "fifo", "sparse"])
def test_from_tcb_hostile_entries(sb, attack):
    add_generated(sb, 20)
    shadow_text = sb.read("/etc/shadow")
    make_tcb(sb, shadow_text)
    sb.run(["rm", "-f", "/etc/shadow", "/etc/shadow-"])
    f = "/etc/tcb/u00003/shadow"
    if attack == "symlink":
        sb.run(["rm", f])
        sb.run(["ln", "-s", "/etc/tcb/u00004/shadow", f])
        needles = [f, "symbolic link"]
    elif attack == "wrong_name":
        sb.run(["cp", "/etc/tcb/u00004/shadow", f])
        needles = [f, "u00004"]
    elif attack == "foreign_owner":
        sb.run(["chown", str(20004), f])
        needles = [f, "wrong owner"]
    elif attack == "two_lines":
        sb.sh("cat /etc/tcb/u00004/shadow >> " + f)
        needles = [f, "more than one line"]
    elif attack == "nul":
        # a whole entry, then a NUL: the parser would stop there, unseen
        sb.sh("sed -i 's/$/\\x00junk/' " + f)
        needles = [f, "forbidden character"]
    elif attack == "fifo":
        sb.sh(f"rm {f}; mkfifo -m 640 {f}; chown 20003 {f}")
        needles = [f, "not a regular file"]
    elif attack == "sparse":
        sb.run(["truncate", "-s", "1G", f])
        needles = [f, "larger than allowed"]
    else:
        sb.run(["cp", "-a", "/etc/tcb/u00004", "/etc/tcb/ghost"])
        needles = ["/etc/tcb/ghost", "not in /etc/passwd"]
    before = snapshot(sb)
    refuse(sb, [PWCONV, "--from-tcb"], *needles)
    assert_unchanged(sb, before)


# ---------------------------------------------------------------- crashes

def check_working(sb, orig_shadow, orig_passwd):
    """The system after a crash: every account's hash is reachable through NSS (the
    `hardened_shadow files` migration setting), every proxy user's shell file exists,
    bob can still log in with su, and pwconv + pwunconv from here give back the original."""
    passwd = parse_passwd(sb.read("/etc/passwd"))
    assert list(passwd) == list(orig_passwd)
    tree = sb.exists(TREE)
    for name, f in passwd.items():
        if f[6] == PROXY:
            assert tree and os.path.exists(hp(sb, TREE + "/%s/shell" % name)), name
    res = sb.run(["getent", "shadow", "bob", "alice", "root"])
    got = parse_shadow(res.stdout)
    for name in ("bob", "alice", "root"):
        assert got[name][0] == orig_shadow[name][0]
    status, out = sb.pty_run([SU, "-", "bob", "-c", "echo I am $(id -un)"],
                             [("Password:", "bob-pw\n")], user="alice")
    assert status == 0 and "I am bob" in out, out
    res = sb.run([PWCONV], check=False)
    assert res.returncode == 0, res.stderr
    assert not sb.exists("/etc/shadow")
    sb.run([PWUNCONV])
    assert parse_shadow(sb.read("/etc/shadow")) == orig_shadow
    assert parse_passwd(sb.read("/etc/passwd")) == orig_passwd
    assert leftovers(sb) == [] and not sb.exists(TREE)


SU = "/usr/local/bin/hs-test-debian-su"


def crash_setup(sb, n=3000):
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.add_classic_user("alice", password="alice-pw")
    sb.add_classic_user("bob", password="bob-pw")
    add_generated(sb, n)
    sb.set_nsswitch_shadow("hardened_shadow files")
    return (parse_shadow(sb.read("/etc/shadow")), parse_passwd(sb.read("/etc/passwd")))


def test_sigkill_at_random_points(sb):
    orig_shadow, orig_passwd = crash_setup(sb)
    import time
    t0 = time.monotonic()
    sb.run([PWCONV])
    duration = time.monotonic() - t0
    sb.run([PWUNCONV])
    rnd = random.Random(7)
    delays = sorted(rnd.uniform(0.02, duration * 1.1) for _ in range(10))
    for d in delays:
        try:
            sb.run([PWCONV], timeout=d)   # killed with SIGKILL when the timeout hits
        except sandbox.CommandTimeout:
            pass
        check_working(sb, orig_shadow, orig_passwd)


def strace_inject(sb, argv, syscall, nth, action="signal=SIGKILL"):
    """Run argv under strace, injecting `action` at the nth call of syscall."""
    return sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=" + syscall,
                   "-e", "inject=%s:%s:when=%d" % (syscall, action, nth)] + argv, check=False)


# pwconv's system calls, counted for N passwd entries: hs_userdir_create does one renameat2
# (the user's directory) and three linkat and renameat (its files, each linked to a
# temporary name, then renamed) per user, the marker one of each; then renameat2 N+1 is the
# tree into place; the transaction of /etc/shells and /etc/passwd stages both at their
# names, linkat 3N+2 is its journal (the commit point), renameat2 N+2 and N+3 the exchanges
# of /etc/shells and /etc/passwd, renameat 3N+2 and 3N+3 their backups; unlinkat 1, 2, 3
# remove /etc/shadow-, /etc/shadow, the marker.
PWCONV_COMMIT_POINTS = [("renameat2", lambda n: n + 1), ("linkat", lambda n: 3 * n + 2),
                        ("renameat2", lambda n: n + 2), ("renameat", lambda n: 3 * n + 2),
                        ("renameat2", lambda n: n + 3), ("renameat", lambda n: 3 * n + 3),
                        ("unlinkat", lambda n: 1), ("unlinkat", lambda n: 2),
                        ("unlinkat", lambda n: 3), ("renameat", lambda n: 100)]


@pytest.mark.parametrize("point", range(len(PWCONV_COMMIT_POINTS)))
def test_sigkill_injected_at_commit_steps(sb, point):
    """SIGKILL at each step of pwconv's commit: the half-done state works, and the next
    pwconv finishes or undoes it."""
    orig_shadow, orig_passwd = crash_setup(sb, n=300)
    syscall, nth = PWCONV_COMMIT_POINTS[point]
    res = strace_inject(sb, [PWCONV], syscall, nth(len(orig_passwd)))
    assert res.returncode != 0, res.stdout
    check_working(sb, orig_shadow, orig_passwd)


@pytest.mark.parametrize("syscall,nth", [("renameat", 1), ("linkat", 2), ("renameat2", 1),
                                         ("renameat", 2), ("renameat", 3), ("renameat", 4),
                                         ("renameat2", 4), ("unlinkat", 1), ("unlinkat", 50)])
def test_pwunconv_sigkill_injected(sb, syscall, nth):
    """pwunconv: renameat 1 and linkat 1 its marker; its transaction of /etc/shadow,
    /etc/passwd and /etc/shells stages them at their names, linkat 2 is its journal (the
    commit point), renameat2 1-3 the exchanges (the first fails: /etc/shadow is new, and
    renameat 2 puts it in place), renameat 3-4 the backups; renameat2 4 takes the tree
    away; unlinkat removes it."""
    orig_shadow, orig_passwd = crash_setup(sb, n=300)
    sb.run([PWCONV])
    res = strace_inject(sb, [PWUNCONV], syscall, nth)
    assert res.returncode != 0, res.stdout
    # hashes still reachable one way or the other
    res = sb.run(["getent", "shadow", "bob"])
    assert parse_shadow(res.stdout)["bob"][0] == orig_shadow["bob"][0]
    status, out = sb.pty_run([SU, "-", "bob", "-c", "echo I am $(id -un)"],
                             [("Password:", "bob-pw\n")], user="alice")
    assert status == 0 and "I am bob" in out, out
    res = sb.run([PWUNCONV], check=False)
    assert res.returncode == 0, res.stderr
    assert parse_shadow(sb.read("/etc/shadow")) == orig_shadow
    assert parse_passwd(sb.read("/etc/passwd")) == orig_passwd
    assert leftovers(sb) == [] and not sb.exists(TREE)


def interrupt_setup(sb):
    sb.add_classic_user("alice", password="alice-pw")
    sb.add_classic_user("bob", password="bob-pw")
    add_generated(sb, 40)
    sb.set_nsswitch_shadow("hardened_shadow files")
    return parse_shadow(sb.read("/etc/shadow")), parse_passwd(sb.read("/etc/passwd"))


# renameat2 1: the first user's directory inside /etc/.hardened-shadow.XXXXXX; renameat 7:
# a file of the third user's; renameat2 N+1: the tree into place.
@pytest.mark.parametrize("syscall,nth,sig", [("renameat2", lambda n: 1, "SIGINT"),
                                             ("renameat", lambda n: 7, "SIGTERM"),
                                             ("renameat2", lambda n: n + 1, "SIGHUP")])
def test_pwconv_interrupted_finishes_first(sb, syscall, nth, sig):
    """A signal while the temporary tree is built (a root-only copy of every hash) or put
    in place waits until the conversion is complete, its report printed and the locks
    released; then it ends pwconv.  Nothing temporary is left."""
    orig_shadow, orig_passwd = interrupt_setup(sb)
    res = strace_inject(sb, [PWCONV], syscall, nth(len(orig_passwd)), "signal=" + sig)
    assert res.returncode == -getattr(signal, sig), res
    assert "converted %d users" % len(orig_passwd) in res.stdout
    assert leftovers(sb) == [] and sb.exists(TREE) and not sb.exists("/etc/shadow")
    got = parse_shadow(sb.run(["getent", "shadow", "bob", "alice"]).stdout)
    assert {n: got[n][0] for n in got} == {n: orig_shadow[n][0] for n in ("bob", "alice")}
    assert sb.run([PWCONV], check=False).stderr.startswith("pwconv: nothing to do")


def test_pwunconv_interrupted_finishes_first(sb):
    """The same for pwunconv (SIGINT on writing its marker), and for its rollback of an
    interrupted pwconv (SIGINT on taking the tree away)."""
    orig_shadow, orig_passwd = interrupt_setup(sb)
    sb.run([PWCONV])
    res = strace_inject(sb, [PWUNCONV], "renameat", 1, "signal=SIGINT")
    assert res.returncode == -signal.SIGINT, res
    assert "wrote %d entries" % len(orig_passwd) in res.stdout
    assert parse_shadow(sb.read("/etc/shadow")) == orig_shadow
    assert parse_passwd(sb.read("/etc/passwd")) == orig_passwd
    assert leftovers(sb) == [] and not sb.exists(TREE)
    # pwconv killed on linking its journal (tree and marker in place, /etc/shells and
    # /etc/passwd staged, /etc/shadow kept): the next pwunconv rolls it back.  Its
    # linkats: four FILE.lock (passwd, shadow, group, gshadow), three files a user, the
    # marker, then the journal
    res = strace_inject(sb, [PWCONV], "linkat", 4 + 3 * len(orig_passwd) + 2)
    assert res.returncode == -signal.SIGKILL and sb.exists(TREE), res
    res = strace_inject(sb, [PWUNCONV], "renameat2", 1, "signal=SIGINT")
    assert res.returncode == -signal.SIGINT, res
    assert "rolled back an interrupted pwconv" in res.stderr
    assert parse_shadow(sb.read("/etc/shadow")) == orig_shadow
    assert parse_passwd(sb.read("/etc/passwd")) == orig_passwd
    # only the killed pwconv's stale group locks stay (pwunconv does not take those)
    assert [n for n in leftovers(sb) if not re.match(r"g(shadow|roup)\.(lock|\d+)$", n)] \
        == [] and not sb.exists(TREE), leftovers(sb)


@pytest.mark.parametrize("which", ["shells", "passwd"])
def test_commit_failure_is_rolled_back(sb, which):
    """An I/O error replacing /etc/shells or /etc/passwd after the tree is in place: pwconv
    takes the tree away again, restores /etc/shells, and says what failed."""
    sb.add_classic_user("alice", password="pw")
    before = snapshot(sb)
    n = len(parse_passwd(sb.read("/etc/passwd")))
    # renameat2: one per user's directory, the temporary tree's, then the exchange of
    # each staged file with its target (lib/etc/txn.c)
    nth = n + 2 if which == "shells" else n + 3
    res = strace_inject(sb, [PWCONV], "renameat2", nth, "error=EIO")
    assert res.returncode == 1, res.stderr
    assert "cannot write /etc/%s: Input/output error" % which in res.stderr
    assert_unchanged(sb, before)


@pytest.mark.parametrize("tool", [PWCONV, PWUNCONV])
def test_a_new_shadow_after_an_interrupted_pwconv_does_not_cost_the_tree(sb, tool):
    """pwconv killed after removing /etc/shadow, before its marker: another program then
    writes a new /etc/shadow (systemd-sysusers does, for its accounts).  The next run
    used to take that file for the one pwconv never removed and roll back, removing the
    tree with every hash it alone held.  It refuses, and the tree stays."""
    orig_shadow, _ = crash_setup(sb, n=20)
    sb.run([PWCONV])
    # what pwconv killed between its last two steps leaves: the tree with its marker,
    # /etc/shadow gone
    sb.write(TREE + "/.pwconv-incomplete", "shadow\n", mode=0o600)
    sb.write("/etc/shadow", "root:*:19000:0:99999:7:::\n", mode=0o640)
    res = sb.run([tool], check=False)
    assert res.returncode != 0, res
    assert "cannot roll back the interrupted pwconv" in res.stderr, res.stderr
    assert sb.exists(TREE + "/bob/shadow")
    got = parse_shadow(sb.run(["getent", "shadow", "bob"]).stdout)
    assert got["bob"][0] == orig_shadow["bob"][0]
