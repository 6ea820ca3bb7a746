"""chgpasswd in a throwaway root: login.defs' ENCRYPT_METHOD by default, -c with -s,
-e and -c NONE with their hash checks; legacy methods (-m, MD5, SHA256, legacy hashes
given with -e, login.defs' ENCRYPT_METHOD) only with --allow-legacy, as chpasswd and
newusers, and what newgrp then makes of such a password; all or nothing: every line is
checked (format, length, NUL, duplicates, groups that exist, empty passwords, clear text
under -e) before anything is written, each error names its line (the first 100, then a
count) and then nothing at all changes; a large batch hashed on every CPU, each group
with its own password; a group without a gshadow line; exit codes and messages next to
Debian's chgpasswd; non-root callers.

One sandbox per module; every test starts from the same account files."""

import warnings

import pytest

import grouptools
import sandbox

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

CHGPASSWD = "/usr/sbin/chgpasswd"
SG = "/usr/bin/sg"
CLASSIC = sandbox.CLASSIC_TOOLS_DIR + "/chgpasswd"
FILES = ("/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/login.defs")
H6 = "$6$saltsalt$" + "D" * 86


def set_up(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    for i, g in enumerate(("g1", "g2", "g3")):
        sb.run([grouptools.CLASSIC_GROUPADD, "-g", str(5000 + i), g])
    sb.run(["gpasswd", "-A", "alice", "-M", "alice", "g1"])


msb, sb = grouptools.fixtures(set_up, FILES)


def run(sb, args, input, prog=CHGPASSWD, **kw):
    return grouptools.run(sb, [prog] + args, input=input, **kw)


def gshadow(sb):
    return {l.split(":")[0]: l.split(":") for l in sb.read("/etc/gshadow").splitlines()}


def snapshot(sb):
    return grouptools.snapshot(sb, ("/etc/group", "/etc/gshadow"))


def test_default_method_from_login_defs(sb):
    r = run(sb, [], "g1:first-pw-1\ng2:second-pw-2\n")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    gs = gshadow(sb)
    for g, pw in (("g1", "first-pw-1"), ("g2", "second-pw-2")):
        assert gs[g][1].startswith("$6$") and crypt.crypt(pw, gs[g][1]) == gs[g][1]
    # the rest of the lines is untouched
    assert gs["g1"][2:] == ["alice", "alice"] and gs["g3"][1] == "!"
    assert "x" == sb.read("/etc/group").split("\ng1:")[1].split(":")[0]
    assert sb.read_bytes("/etc/group") == sb._hs_saved["/etc/group"][0]
    defs = sb.read("/etc/login.defs").replace("ENCRYPT_METHOD SHA512", "ENCRYPT_METHOD YESCRYPT")
    sb.write("/etc/login.defs", defs)
    assert run(sb, [], "g3:third-pw-3\n").returncode == 0
    h = gshadow(sb)["g3"][1]
    assert h.startswith("$y$") and crypt.crypt("third-pw-3", h) == h


@pytest.mark.parametrize("args,prefix,warn", [
    (["-c", "SHA512", "-s", "6000"], "$6$rounds=6000$", False),
    (["-c", "SHA256", "--allow-legacy"], "$5$", True),
    (["-c", "YESCRYPT", "-s", "7"], "$y$jBT$", False),
    (["-c", "BCRYPT", "-s", "5"], "$2b$05$", False),
    (["-m", "--allow-legacy"], "$1$", True),
])
def test_methods(sb, args, prefix, warn):
    r = run(sb, args, "g2:method-pw-5\n")
    assert r.returncode == 0, r.stderr
    h = gshadow(sb)["g2"][1]
    assert h.startswith(prefix) and crypt.crypt("method-pw-5", h) == h
    assert ("legacy" in r.stderr) == warn


def test_encrypted(sb):
    r = run(sb, ["-e"], "g1:%s\ng2:!\ng3:!%s\n" % (H6, H6))
    assert r.returncode == 0, r.stderr
    gs = gshadow(sb)
    assert (gs["g1"][1], gs["g2"][1], gs["g3"][1]) == (H6, "!", "!" + H6)
    assert run(sb, ["-c", "NONE"], "g1:*\n").returncode == 0
    assert gshadow(sb)["g1"][1] == "*"


def test_all_or_nothing(sb):
    before = snapshot(sb)
    lines = ("g1:fine-pw-1\n"
             "g2\n"                           # 2: no password
             "nosuch:pw\n"                    # 3
             "g1:again\n"                     # 4: duplicate
             ":pw\n"                          # 5: no group
             "a b:pw\n"                       # 6: invalid name
             "g3:\n"                          # 7: empty password
             "g2:" + "x" * 600 + "\n"         # 8: longer than 512
             "g3:" + "y" * 5000 + "\n"        # 9: line too long
             "g3:a\x00b\n"                    # 10: NUL
             "g2:last-fine\n")                # 11
    r = run(sb, [], lines)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "chgpasswd: line 2: missing new password",
        "chgpasswd: line 3: group 'nosuch' does not exist",
        "chgpasswd: line 4: group 'g1' already appears on line 1",
        "chgpasswd: line 5: missing group name",
        "chgpasswd: line 6: invalid group name 'a b'",
        "chgpasswd: line 7: group 'g3': empty password (use gpasswd -r to remove a group "
        "password)",
        "chgpasswd: line 8: group 'g2': the password is longer than 512 bytes",
        "chgpasswd: line 9: line too long",
        "chgpasswd: line 10: line contains a NUL byte",
        "chgpasswd: error detected, changes ignored",
    ]
    assert snapshot(sb) == before
    assert "fine-pw-1" not in r.stderr


@pytest.mark.parametrize("line,problem", [
    ("g1:clear-text", "not a hash libxcrypt recognises"),
    ("g1:", "empty password"),
    ("g1:$6$x:y", "':' or a control character"),
    ("g1:$6$" + "a" * 600, "longer than the 512 bytes"),
])
def test_encrypted_refusals(sb, line, problem):
    before = snapshot(sb)
    r = run(sb, ["-e"], "g2:%s\n%s\n" % (H6, line))
    assert r.returncode == 1
    assert r.stderr.startswith("chgpasswd: line 2: group 'g1': ")
    assert problem in r.stderr
    assert snapshot(sb) == before


def test_more_than_100_errors_are_counted(sb):
    """lib/batchio's reporting: the first 100 errors with their line, then a count."""
    before = snapshot(sb)
    r = run(sb, [], "".join("nosuch%d:pw\n" % i for i in range(105)) + "g1:fine-pw-1\n")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 102, r.stderr
    assert lines[0] == "chgpasswd: line 1: group 'nosuch0' does not exist"
    assert lines[99] == "chgpasswd: line 100: group 'nosuch99' does not exist"
    assert lines[100:] == ["chgpasswd: 5 more errors not shown",
                           "chgpasswd: error detected, changes ignored"]
    assert snapshot(sb) == before


def test_many_groups_each_get_their_own_password(sb):
    """60 groups hashed on every CPU (hs_parallel_for): each hash is its own line's
    password (no two threads mixed up), and the other groups are untouched."""
    names = ["bulk%02d" % i for i in range(60)]
    shadow_gid = sb.getgrnam("shadow")[1]
    sb.write("/etc/group", sb.read("/etc/group") +
             "".join("%s:x:%d:\n" % (n, 6000 + i) for i, n in enumerate(names)))
    sb.write("/etc/gshadow", sb.read("/etc/gshadow") +
             "".join("%s:!::\n" % n for n in names), mode=0o640, gid=shadow_gid)
    r = run(sb, ["-c", "SHA512", "-s", "1000"],
            "".join("%s:pw-of-%s\n" % (n, n) for n in names))
    assert (r.returncode, r.stderr) == (0, "")
    gs = gshadow(sb)
    for n in names:
        h = gs[n][1]
        assert h.startswith("$6$rounds=1000$") and crypt.crypt("pw-of-" + n, h) == h, n
    assert len({gs[n][1] for n in names}) == len(names)
    saved = sb._hs_saved["/etc/gshadow"][0].decode().splitlines()
    assert [":".join(gs[l.split(":")[0]]) for l in saved] == saved


def test_legacy_methods_need_the_opt_in(sb):
    """lib/auth/hash.h's one rule, as chpasswd and newusers: MD5 and SHA256 (libxcrypt calls
    them legacy) are written only with --allow-legacy; DES never."""
    before = snapshot(sb)
    md5 = crypt.crypt("legacy-pw-1", "$1$saltsalt$")
    sha256 = crypt.crypt("legacy-pw-2", "$5$saltsalt$")
    for args, text, rc, message in (
            (["-m"], "g1:x-1\n", 2, "crypt method MD5 is legacy"),
            (["-c", "md5"], "g1:x-1\n", 2, "give --allow-legacy to write them anyway"),
            (["-c", "SHA256", "-s", "5000"], "g1:x-1\n", 2, "crypt method SHA256 is legacy"),
            (["-c", "DES", "--allow-legacy"], "g1:x-1\n", 2, "DES is not supported"),
            (["-e"], "g1:%s\n" % md5, 1,
             "chgpasswd: line 1: group 'g1': the hash uses a legacy method"),
            (["-c", "NONE"], "g2:%s\ng1:!%s\n" % (H6, sha256), 1,
             "chgpasswd: line 2: group 'g1': the hash uses a legacy method"),
            # a DES hash is not even recognised as one, opt-in or not
            (["-e", "--allow-legacy"], "g1:abJnggxhB/yWI\n", 1,
             "group 'g1': not a hash libxcrypt recognises")):
        r = run(sb, args, text)
        assert r.returncode == rc and message in r.stderr, (args, r)
        assert snapshot(sb) == before, args
    # login.defs' method is held to the same rule (a configuration error: exit 1)
    defs = sb.read("/etc/login.defs").replace("ENCRYPT_METHOD SHA512", "ENCRYPT_METHOD MD5")
    assert defs != sb.read("/etc/login.defs")
    sb.write("/etc/login.defs", defs)
    r = run(sb, [], "g1:x-1\n")
    assert r.returncode == 1 and "crypt method MD5 is legacy" in r.stderr, r
    assert snapshot(sb) == before
    # with the opt-in: written, and said that newgrp will not take them
    r = run(sb, ["--allow-legacy"], "g1:legacy-pw-3\n")
    assert r.returncode == 0 and "newgrp will not accept" in r.stderr, r
    h = gshadow(sb)["g1"][1]
    assert h.startswith("$1$") and crypt.crypt("legacy-pw-3", h) == h
    r = run(sb, ["-e", "--allow-legacy"], "g2:%s\ng3:!%s\n" % (md5, sha256))
    assert r.returncode == 0 and "newgrp will not accept" in r.stderr, r
    assert (gshadow(sb)["g2"][1], gshadow(sb)["g3"][1]) == (md5, "!" + sha256)


def test_newgrp_refuses_a_legacy_group_password(sb):
    """Why the opt-in: our sg verifies without allow_legacy, so a non-member typing the
    right password of an MD5 hash is refused, while the same password hashed with SHA512
    lets them in."""
    assert run(sb, ["-c", "MD5", "--allow-legacy"], "g2:group-pw-7\n").returncode == 0
    status, out = sb.pty_run([SG, "g2", "-c", "id -gn"], [(r"Password: ", "group-pw-7\n")],
                             user="alice")
    assert status == 1 and "Invalid password." in out, out
    assert run(sb, ["-c", "SHA512"], "g2:group-pw-7\n").returncode == 0
    status, out = sb.pty_run([SG, "g2", "-c", "id -gn"], [(r"Password: ", "group-pw-7\n")],
                             user="alice")
    assert status == 0 and out.endswith("g2\n"), out


def test_group_without_gshadow_line(sb):
    gs = "".join(l for l in sb.read("/etc/gshadow").splitlines(True) if not l.startswith("g3:"))
    sb.write("/etc/gshadow", gs, mode=0o640, gid=sb.getgrnam("shadow")[1])
    g = sb.read("/etc/group").replace("g3:x:", "g3:%s:" % H6)
    sb.write("/etc/group", g)
    assert run(sb, ["-e"], "g3:!\n").returncode == 0
    assert gshadow(sb)["g3"] == ["g3", "!", "", ""]
    assert "\ng3:x:5002:\n" in sb.read("/etc/group")


def test_usage_and_non_root(sb):
    before = snapshot(sb)
    for args in (["-s", "5"], ["-e", "-m"], ["-c", "SHA512", "-e"], ["-c", "FOO"],
                 ["-c", "SHA512", "-s", "x"], ["extra"], ["--bogus"]):
        r = run(sb, args, "g1:pw\n")
        assert r.returncode == 2 and "Usage: chgpasswd [options]\n" in r.stderr, args
    r = run(sb, ["-c", "DES"], "g1:pw\n")
    assert r.returncode == 2 and "DES is not supported" in r.stderr
    assert "--allow-legacy" in run(sb, ["--help"], "").stdout
    r = run(sb, ["-R", "/srv"], "")
    assert r.returncode == 2 and "not supported" in r.stderr
    r = run(sb, [], "g1:pw\n", user="alice")
    assert (r.returncode, r.stderr) == (1, "chgpasswd: Permission denied.\n")
    assert snapshot(sb) == before
    assert run(sb, ["--help"], "").stdout.startswith("Usage: chgpasswd [options]\n")


@pytest.mark.parametrize("text", ["nosuch:pw\n", "g1\n", "g1:pw\nnosuch:x\n"])
def test_messages_like_debian(sb, text):
    ours = run(sb, [], text)
    assert snapshot(sb) == {p: sb._hs_saved[p][0] for p in ("/etc/group", "/etc/gshadow")}
    theirs = run(sb, [], text, prog=CLASSIC)
    # Debian exits 1 too, and has changed nothing either (it checks before writing)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr == theirs.stderr
