"""chage: every option, the -l format byte for byte against Debian's shadow-utils
chage, strict dates, the setgid self-service path as a real user, interactive mode on a
pseudo-terminal, concurrent writers, and hostile aging files."""

import concurrent.futures
import stat
import time

import pytest

import sandbox

CHAGE = "/usr/bin/chage"
DEBIAN_CHAGE = sandbox.CLASSIC_TOOLS_DIR + "/chage"
TREE = "/etc/hardened-shadow"

# Aging shapes set with Debian's chage on classic accounts, then converted by pwconv.
SHAPES = {
    "defaults": [],
    "dates": ["-d", "2024-12-25", "-m", "3", "-M", "40", "-W", "5", "-I", "9",
              "-E", "2030-01-01"],
    "unset": ["-d", "-1", "-m", "-1", "-M", "-1", "-W", "-1", "-I", "-1", "-E", "-1"],
    "zero": ["-d", "0", "-m", "0", "-M", "0", "-W", "0", "-I", "0", "-E", "0"],
    "leap": ["-d", "2000-02-29", "-M", "9999", "-I", "30", "-E", "2038-01-19"],
    "maxnever": ["-d", "2020-06-15", "-M", "10000", "-I", "3"],
    "day1": ["-d", "1", "-m", "1", "-M", "1", "-W", "1", "-I", "1", "-E", "1"],
    "numbers": ["-d", "19000", "-M", "99999", "-E", "20000"],
}


def path(user, name):
    return "%s/%s/%s" % (TREE, user, name)


def auth_gid(sb):
    return sb.getgrnam("hardened-shadow-auth")[1]


def list_out(sb, user, *extra, as_user=None):
    res = sb.run([CHAGE, "-l", *extra, user], user=as_user)
    return res.stdout


def assert_aging_file(sb, user, content):
    st = sb.lstat(path(user, "aging"))
    assert stat.S_ISREG(st.st_mode)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, auth_gid(sb), 0o644)
    assert st.st_nlink == 1
    assert sb.read(path(user, "aging")) == content


def no_temp_files(sb, user):
    res = sb.run(["ls", "-A", "%s/%s" % (TREE, user)])
    assert sorted(res.stdout.split()) == ["aging", "shadow", "shell"], res.stdout


def fails(res, status, *needles):
    assert res.returncode == status, (res.returncode, res.stdout, res.stderr)
    for n in needles:
        assert n in res.stderr, res.stderr


@pytest.fixture
def conv(sb):
    """alice and bob, classic accounts converted by pwconv."""
    sb.add_classic_user("alice", password="alice-pw")
    sb.add_classic_user("bob", password="bob-pw")
    sb.run(["/usr/sbin/pwconv"])
    return sb


# ---- the -l format against Debian's chage ----

def test_list_matches_debian_byte_for_byte(sb):
    expected = {}
    for name, args in SHAPES.items():
        sb.add_classic_user("u" + name, password="pw")
        if args:
            sb.run([DEBIAN_CHAGE, *args, "u" + name])
        expected[name] = (sb.run([DEBIAN_CHAGE, "-l", "u" + name]).stdout,
                          sb.run([DEBIAN_CHAGE, "-l", "-i", "u" + name]).stdout,
                          sb.run([DEBIAN_CHAGE, "--list", "--iso8601", "u" + name]).stdout)
    sb.run(["/usr/sbin/pwconv"])
    for name, (plain, iso, iso_long) in expected.items():
        assert list_out(sb, "u" + name) == plain, name
        assert list_out(sb, "u" + name, "-i") == iso, name
        assert sb.run([CHAGE, "--list", "--iso8601", "u" + name]).stdout == iso_long, name
    # the shapes really differ (the comparison is not of one output with itself)
    assert len({v[0] for v in expected.values()}) == len(SHAPES)
    assert "password must be changed" in expected["zero"][0]
    assert "Jan 02, 1970" in expected["day1"][0]
    assert "2000-02-29" in expected["leap"][1]

    # values written by our chage list the same as Debian's wrote them
    for name, args in SHAPES.items():
        if not args:
            continue
        sb.run([CHAGE, "-d", "5", "-m", "7", "-M", "7", "-W", "7", "-I", "7", "-E", "7",
                "u" + name])
        assert list_out(sb, "u" + name) != expected[name][0]
        # useradd's defaults for the fields a shape leaves alone, then the shape
        sb.run([CHAGE, "-m", "0", "-M", "99999", "-W", "7", "-I", "-1", "-E", "-1",
                "u" + name])
        sb.run([CHAGE, *args, "u" + name])
        assert list_out(sb, "u" + name) == expected[name][0], name
        assert list_out(sb, "u" + name, "-i") == expected[name][1], name


# ---- each option ----

@pytest.mark.parametrize("args,aging", [
    (["-m", "3"], "3:99999:7:-1:-1:\n"),
    (["--mindays", "0"], "0:99999:7:-1:-1:\n"),
    (["-M", "40"], "0:40:7:-1:-1:\n"),
    (["--maxdays", "-1"], "0:-1:7:-1:-1:\n"),
    (["-W", "14"], "0:99999:14:-1:-1:\n"),
    (["--warndays", "-1"], "0:99999:-1:-1:-1:\n"),
    (["-I", "30"], "0:99999:7:30:-1:\n"),
    (["--inactive", "0"], "0:99999:7:0:-1:\n"),
    (["-E", "2030-01-01"], "0:99999:7:-1:21915:\n"),
    (["--expiredate", "2024-02-29"], "0:99999:7:-1:19782:\n"),
    (["-E", "0"], "0:99999:7:-1:0:\n"),
    (["-E", "20000"], "0:99999:7:-1:20000:\n"),
    # shadow-utils clears the field for an empty date, as for -1
    (["-E", "2030-01-01", "-E", ""], "0:99999:7:-1:-1:\n"),
    (["-m", "1", "-M", "2", "-W", "3", "-I", "4", "-E", "1970-01-06"], "1:2:3:4:5:\n"),
])
def test_each_option_writes_aging(conv, args, aging):
    shadow_before = conv.read(path("alice", "shadow"))
    conv.run([CHAGE, *args, "alice"])
    assert_aging_file(conv, "alice", aging)
    # the shadow file is not touched by the aging options
    assert conv.read(path("alice", "shadow")) == shadow_before
    no_temp_files(conv, "alice")
    # bob is untouched
    assert conv.read(path("bob", "aging")) == "0:99999:7:-1:-1:\n"


@pytest.mark.parametrize("arg,lstchg", [
    ("2024-12-25", "20082"), ("0", "0"), ("19000", "19000"), ("-1", ""), ("", ""),
    ("1970-01-01", "0"),
])
def test_lastday_writes_shadow_and_keeps_the_hash(conv, arg, lstchg):
    before = conv.read(path("alice", "shadow"))
    hash_ = before.split(":")[0]
    assert hash_.startswith("$y$")
    aging_before = conv.read(path("alice", "aging"))
    conv.run([CHAGE, "--lastday", arg, "alice"])
    assert conv.read(path("alice", "shadow")) == "%s:%s:\n" % (hash_, lstchg)
    st = conv.lstat(path("alice", "shadow"))
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == \
        (conv.getpwnam("alice").uid, auth_gid(conv), 0o640)
    assert conv.read(path("alice", "aging")) == aging_before
    no_temp_files(conv, "alice")


def test_lastday_zero_shows_must_change(conv):
    conv.run([CHAGE, "-d", "0", "alice"])
    out = list_out(conv, "alice")
    assert out.startswith("Last password change\t\t\t\t\t: password must be changed\n"
                          "Password expires\t\t\t\t\t: password must be changed\n")


def test_change_is_logged(conv):
    conv.run([CHAGE, "-M", "5", "alice"])
    assert any("changed password expiry for alice" in m for m in conv.syslog())


# ---- bad input ----

@pytest.mark.parametrize("date", [
    "2025-01-32", "2025-02-30", "2023-02-29", "2025-13-01", "2025-00-10", "today",
    "garbage", " ", "2025-1-5", " 2025-01-05", "2025-01-05 ", "+5", "-2", "1969-12-31",
    "2025/01/05", "01/05/2025", "2025-01-05x", "99999999999999999999",
])
@pytest.mark.parametrize("opt", ["-d", "-E"])
def test_invalid_dates_are_refused(conv, opt, date):
    shadow_before = conv.read(path("alice", "shadow"))
    res = conv.run([CHAGE, opt, date, "alice"], check=False)
    fails(res, 1, "chage: invalid date '%s'" % date)
    assert res.stdout == ""
    assert_aging_file(conv, "alice", "0:99999:7:-1:-1:\n")
    assert conv.read(path("alice", "shadow")) == shadow_before


@pytest.mark.parametrize("value", ["abc", "-2", "5 ", "", "1e3", "0x10", "2147483648"])
def test_invalid_numbers_are_usage_errors(conv, value):
    res = conv.run([CHAGE, "-M", value, "alice"], check=False)
    fails(res, 2, "chage: invalid numeric argument '%s'" % value, "Usage: chage")
    assert_aging_file(conv, "alice", "0:99999:7:-1:-1:\n")


def test_command_syntax(conv):
    fails(conv.run([CHAGE, "-l", "-M", "5", "alice"], check=False), 2,
          'chage: do not include "l" with other flags')
    fails(conv.run([CHAGE], check=False), 2, "Usage: chage [options] LOGIN")
    fails(conv.run([CHAGE, "alice", "bob"], check=False), 2, "Usage:")
    fails(conv.run([CHAGE, "-x", "alice"], check=False), 2, "Usage:")
    fails(conv.run([CHAGE, "-R", "/srv/root", "-l", "alice"], check=False), 2,
          "--root is not supported")
    fails(conv.run([CHAGE, "--root=/srv/root", "-M", "5", "alice"], check=False), 2,
          "--root is not supported")
    res = conv.run([CHAGE, "--help"])
    assert res.stdout.startswith("Usage: chage [options] LOGIN\n") and res.stderr == ""
    assert "--iso8601" in res.stdout
    res = conv.run([CHAGE, "--version"])
    assert res.stdout.startswith("chage (hardened-shadow)")
    assert_aging_file(conv, "alice", "0:99999:7:-1:-1:\n")


def test_unknown_user_and_missing_tree(conv):
    fails(conv.run([CHAGE, "-l", "nosuch"], check=False), 1,
          "chage: user 'nosuch' does not exist in /etc/passwd")
    fails(conv.run([CHAGE, "-M", "3", "../bob"], check=False), 1)
    # a user in /etc/passwd with no directory: a clear error, nothing created
    conv.sh("echo 'carol:x:2345:2345::/nonexistent:/bin/sh' >> /etc/passwd")
    fails(conv.run([CHAGE, "-M", "3", "carol"], check=False), 1, TREE + "/carol")
    assert not conv.exists(TREE + "/carol")
    conv.run(["rm", "-rf", TREE])
    fails(conv.run([CHAGE, "-l", "alice"], check=False), 15, TREE)


# ---- privileges: the setgid path as real users ----

def test_installed_setgid_tree_group(conv):
    st = conv.lstat(CHAGE)
    assert stat.S_IMODE(st.st_mode) == 0o2711
    assert (st.st_uid, st.st_gid) == (0, conv.getgrnam("hardened-shadow")[1])


def test_user_lists_own_values(conv):
    conv.run([CHAGE, "-m", "2", "-M", "60", "-W", "9", "-I", "4", "-E", "2031-05-06",
              "-d", "2025-03-01", "alice"])
    as_root = list_out(conv, "alice")
    assert "May 06, 2031" in as_root
    res = conv.run([CHAGE, "-l", "alice"], user="alice")
    assert res.stdout == as_root and res.stderr == ""
    assert conv.run([CHAGE, "-l", "-i", "alice"], user="alice").stdout == \
        list_out(conv, "alice", "-i")
    # without chage the user cannot reach their own directory at all
    res = conv.run(["cat", path("alice", "aging")], user="alice", check=False)
    assert res.returncode != 0


def test_user_cannot_list_others(conv):
    res = conv.run([CHAGE, "-l", "bob"], user="alice", check=False)
    fails(res, 1)
    assert res.stderr == "chage: Permission denied.\n"
    assert res.stdout == ""
    # a uid with no passwd entry at all
    res = conv.run([CHAGE, "-l", "alice"], user=23456, check=False)
    assert res.returncode == 1 and res.stdout == ""


@pytest.mark.parametrize("args", [
    ["-M", "5", "alice"], ["-E", "-1", "alice"], ["-d", "0", "alice"], ["alice"],
    ["-M", "5", "bob"], ["-I", "1", "bob"],
])
def test_user_cannot_change_anything(conv, args):
    before = {u: (conv.read(path(u, "aging")), conv.read(path(u, "shadow")))
              for u in ("alice", "bob")}
    res = conv.run([CHAGE, *args], user="alice", check=False, input="1\n1\n1\n1\n1\n1\n")
    assert res.returncode == 1
    assert res.stderr == "chage: Permission denied.\n"
    assert res.stdout == ""
    for u, (aging, shadow) in before.items():
        assert conv.read(path(u, "aging")) == aging
        assert conv.read(path(u, "shadow")) == shadow


def test_user_with_hostile_environment_still_only_lists(conv):
    res = conv.run([CHAGE, "-l", "alice"], user="alice",
                   env={"LD_PRELOAD": "/nonexistent.so", "TZ": "/etc/shadow",
                        "LANG": "../../../tmp/x"})
    assert res.stdout == list_out(conv, "alice")


# ---- interactive mode ----

def test_interactive_stdin_matches_debian(sb):
    answers = "4\n-1\n2024-02-29\n10\n\n2033-03-03\n"
    start = ["-m", "0", "-M", "40", "-W", "7", "-I", "6", "-E", "2030-01-01",
             "-d", "2025-01-01", "dora"]
    sb.add_classic_user("dora", password="pw")
    sb.run([DEBIAN_CHAGE, *start])
    debian = sb.run([DEBIAN_CHAGE, "dora"], input=answers)
    debian_list = sb.run([DEBIAN_CHAGE, "-l", "dora"]).stdout
    sb.run([DEBIAN_CHAGE, *start])
    sb.run(["/usr/sbin/pwconv"])
    ours = sb.run([CHAGE, "dora"], input=answers)
    assert ours.stdout == debian.stdout
    assert "\tLast Password Change (YYYY-MM-DD) [2025-01-01]: " in ours.stdout
    assert list_out(sb, "dora") == debian_list
    assert sb.read(path("dora", "aging")) == "4:-1:10:6:23072:\n"
    assert sb.read(path("dora", "shadow")).endswith(":19782:\n")


def test_interactive_on_a_pty(conv):
    conv.run([CHAGE, "-M", "40", "-E", "2030-01-01", "alice"])
    status, out = conv.pty_run([CHAGE, "alice"], [
        (r"Minimum Password Age \[0\]: ", "3\n"),
        (r"Maximum Password Age \[40\]: ", "\n"),
        (r"Last Password Change \(YYYY-MM-DD\) \[\d{4}-\d\d-\d\d\]: ", "2025-06-30\n"),
        (r"Password Expiration Warning \[7\]: ", " 12 \n"),
        (r"Password Inactive \[-1\]: ", "5\n"),
        (r"Account Expiration Date \(YYYY-MM-DD\) \[2030-01-01\]: ", "-1\n"),
    ])
    assert status == 0, out
    assert out.startswith("Changing the aging information for alice\n"
                          "Enter the new value, or press ENTER for the default\n\n")
    assert_aging_file(conv, "alice", "3:40:12:5:-1:\n")
    assert conv.read(path("alice", "shadow")).endswith(":20269:\n")


@pytest.mark.parametrize("answers", [
    "abc\n", "1\n2\ntoday\n", "1\n2\n2025-02-30\n", "1\n \n", "1\n2\n-1\n3\n4\n2025-01-32\n",
    # blanks for a date, unlike -d '', are refused, as by Debian's chage
    "1\n2\n \n", "1\n2\n-1\n3\n4\n  \n",
    "x" * 500 + "\n",
])
def test_interactive_invalid_answer_changes_nothing(conv, answers):
    before = (conv.read(path("alice", "aging")), conv.read(path("alice", "shadow")))
    res = conv.run([CHAGE, "alice"], input=answers, check=False)
    fails(res, 1, "error changing fields")
    assert (conv.read(path("alice", "aging")), conv.read(path("alice", "shadow"))) == before


def test_interactive_end_of_input_keeps_the_rest(conv):
    conv.run([CHAGE, "-E", "2030-01-01", "-d", "2025-01-01", "alice"])
    conv.run([CHAGE, "alice"], input="5\n")
    assert_aging_file(conv, "alice", "5:99999:7:-1:21915:\n")
    assert conv.read(path("alice", "shadow")).endswith(":20089:\n")
    conv.run([CHAGE, "alice"], input="")
    assert_aging_file(conv, "alice", "5:99999:7:-1:21915:\n")


# ---- concurrency ----

def run_concurrently(sb, commands):
    """Run the commands at once (16 at a time) while draining the root's /dev/log: the
    harness reads it only when asked, and a full socket queue would block every writer
    in syslog()."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        futures = [pool.submit(sb.run, argv, check=False, timeout=120) for argv in commands]
        while not all(f.done() for f in futures):
            sb.syslog(clear=True)
            time.sleep(0.01)
        results = [f.result() for f in futures]
    for res in results:
        assert res.returncode == 0 and res.stderr == "", (res.args, res.stderr)


def test_concurrent_writers_leave_one_whole_value(conv):
    values = list(range(100, 140))
    run_concurrently(conv, [[CHAGE, opt, str(v), "alice"] for v in values
                            for opt in ("-M", "-W")])
    fields = conv.read(path("alice", "aging")).split(":")
    assert len(fields) == 6 and fields[5] == "\n"
    # no writer ever saw a half-replaced file and wrote the fail-closed values
    assert fields[0] == "0" and fields[3:5] == ["-1", "-1"]
    assert int(fields[1]) in values + [99999]
    assert int(fields[2]) in values + [7]
    assert_aging_file(conv, "alice", ":".join(fields))
    no_temp_files(conv, "alice")
    # concurrent -d writers and listers: the hash survives, lstchg is one of them
    hash_ = conv.read(path("alice", "shadow")).split(":")[0]
    run_concurrently(conv, [[CHAGE, "-d", str(1000 + v), "alice"] for v in values] +
                     [[CHAGE, "-l", "alice"] for v in values])
    h, lstchg, rest = conv.read(path("alice", "shadow")).split(":")
    assert h == hash_ and rest == "\n" and int(lstchg) - 1000 in values
    no_temp_files(conv, "alice")


# ---- hostile aging files ----

EXPIRED_LIST = "Account expires\t\t\t\t\t\t: Jan 02, 1970\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "missing", "user-owned", "hardlink",
                                  "garbage"])
def test_untrusted_aging_is_shown_expired_and_root_rewrite_fixes_it(conv, kind):
    a = path("alice", "aging")
    conv.run(["cp", "/etc/passwd", "/root/passwd-copy"])
    if kind == "symlink":
        conv.run(["ln", "-sf", "/etc/passwd", a])
    elif kind == "fifo":
        conv.run(["rm", a])
        conv.run(["mkfifo", "-m", "0644", a])
    elif kind == "missing":
        conv.run(["rm", a])
    elif kind == "user-owned":
        conv.run(["chown", "alice", a])
    elif kind == "hardlink":
        conv.run(["ln", a, "/etc/hardened-shadow/alice/extra"])
    elif kind == "garbage":
        conv.sh("printf '0:99999:7:-1:-1:\\nx' > %s" % a)

    for who in (None, "alice"):
        res = conv.run([CHAGE, "-l", "alice"], user=who, timeout=20)
        assert EXPIRED_LIST in res.stdout
        assert "Maximum number of days between password change\t\t: -1\n" in res.stdout
        assert res.stderr.startswith("chage: cannot read %s: " % a), res.stderr
        assert "counts as expired" in res.stderr

    # root changes one value: a new root-owned file replaces whatever was there, never
    # followed; the unknown values stay fail-closed (expired on day 1)
    conv.run([CHAGE, "-M", "30", "alice"], timeout=20)
    assert_aging_file(conv, "alice", "-1:30:-1:-1:1:\n")
    assert conv.read("/etc/passwd") == conv.read("/root/passwd-copy")
    conv.run([CHAGE, "-E", "-1", "alice"])
    assert_aging_file(conv, "alice", "-1:30:-1:-1:-1:\n")
    res = conv.run([CHAGE, "-l", "alice"], user="alice")
    assert res.stderr == ""
    assert "Account expires\t\t\t\t\t\t: never\n" in res.stdout


def test_out_of_descriptors_reading_aging_writes_nothing(conv):
    """EMFILE opening aging says nothing of the file: chage dies as for shadow, and neither
    shows nor writes the fail-closed "expired on day 1" of an untrusted one."""
    a = path("alice", "aging")
    before = conv.read(a)
    # below alice's directory: the lock's sweep of ".", then aging
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat",
              "-P", TREE + "/alice", "-e", "inject=openat:error=EMFILE:when=2"]
    res = conv.run(inject + [CHAGE, "-M", "30", "alice"], check=False, timeout=20)
    fails(res, 1, "chage: cannot read %s: Too many open files\n" % a)
    assert "counts as expired" not in res.stderr
    assert conv.read(a) == before
    no_temp_files(conv, "alice")
    # the same without the fault
    conv.run(inject[:-2] + [CHAGE, "-M", "30", "alice"], timeout=20)
    assert conv.read(a).split(":")[1] == "30"


def test_symlinked_shadow_is_not_followed_by_lastday(conv):
    s = path("alice", "shadow")
    conv.run(["mv", s, "/root/alice-shadow"])
    conv.run(["ln", "-s", "/etc/passwd", s])
    before = conv.read("/etc/passwd")
    res = conv.run([CHAGE, "-d", "0", "alice"], check=False)
    fails(res, 1, s, "symbolic link")
    res = conv.run([CHAGE, "-l", "alice"], check=False)
    fails(res, 1, s, "symbolic link")
    assert conv.read("/etc/passwd") == before
    assert stat.S_ISLNK(conv.lstat(s).st_mode)


def test_directory_of_wrong_owner_is_refused(conv):
    conv.run(["chown", "bob", TREE + "/alice"])
    res = conv.run([CHAGE, "-M", "5", "alice"], check=False)
    fails(res, 1, TREE + "/alice")
    res = conv.run([CHAGE, "-l", "alice"], user="bob", check=False)
    assert res.stderr == "chage: Permission denied.\n"
