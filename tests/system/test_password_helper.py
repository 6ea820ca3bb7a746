"""The setgid password helper (DESIGN.md section 5, lib/auth/pwhelper.h) run by real users in the
sandbox, directly and through its C client library (tests/clients/pwhelper-client.c)."""

import os
import re
import stat
import threading
import time

import pytest

HELPER = "/usr/libexec/hardened-shadow/password-helper"
TREE = "/etc/hardened-shadow"
DELAY = 2  # HS_FAIL_DELAY_MS, in seconds
MAX = 512  # HS_PASSWORD_MAX


@pytest.fixture
def conv(sb):
    """alice and bob with passwords (alice with aging data), converted by pwconv."""
    sb.add_classic_user("alice", password="alice-pw", lastday=19000, mindays=1, maxdays=90,
                        warndays=7, inactive=14, expiredate=20500)
    sb.add_classic_user("bob", password="bob-pw")
    res = sb.run(["/usr/sbin/pwconv"])
    assert "converted" in res.stdout
    return sb


@pytest.fixture
def client(build_dir):
    path = os.path.join(build_dir, "tests", "clients", "pwhelper-client")
    assert os.access(path, os.X_OK), path
    return path


def helper(sb, *args, user="alice", input=None, **kw):
    return sb.run([HELPER] + list(args), user=user, input=input, check=False, **kw)


def timed(fn, *args, **kw):
    start = time.monotonic()
    res = fn(*args, **kw)
    return res, time.monotonic() - start


def failures_logged(sb):
    return [m for m in sb.syslog() if "password-helper[" in m and "authentication failure" in m]


def test_installed_setgid_tree_group(conv):
    st = conv.lstat(HELPER)
    assert stat.S_ISREG(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o2711
    assert st.st_uid == 0
    assert st.st_gid == conv.getgrnam("hardened-shadow")[1]


def test_right_password(conv):
    res, took = timed(helper, conv, "verify", "alice", input="alice-pw")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""
    assert took < DELAY
    assert failures_logged(conv) == []


def test_wrong_password_is_delayed_and_logged(conv):
    res, took = timed(helper, conv, "verify", "alice", input="not-alice-pw")
    assert res.returncode == 1, res.stderr
    assert took >= DELAY
    logged = failures_logged(conv)
    assert len(logged) == 1
    assert "authentication failure for alice" in logged[0]
    # LOG_AUTHPRIV (10 << 3) | LOG_NOTICE (5)
    assert logged[0].startswith("<85>")
    assert not any("not-alice-pw" in m for m in conv.syslog())


def test_newline_is_part_of_the_password(conv):
    # the bytes up to EOF are the password: no line processing
    assert helper(conv, "verify", "alice", input="alice-pw\n").returncode == 1


def test_another_users_name_is_refused(conv):
    # bob's right password, asked for by alice
    res, took = timed(helper, conv, "verify", "bob", input="bob-pw")
    assert res.returncode == 2
    assert "bob" in res.stderr and "alice" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert took < DELAY
    assert helper(conv, "account", "bob").returncode == 2
    # a name that exists nowhere, and one that is no name at all
    assert helper(conv, "verify", "nosuchuser", input="x").returncode == 2
    assert helper(conv, "verify", "../bob", input="x").returncode == 2


def test_another_users_file_is_never_opened(conv):
    """Make bob's directory reachable for everyone and his shadow a FIFO that a root process
    is waiting to write into: the writer's open() only returns once someone opens the FIFO
    for reading.  The helper run by alice for bob must not be that someone."""
    conv.run(["chmod", "02711", TREE + "/bob"])
    conv.run(["rm", TREE + "/bob/shadow"])
    conv.run(["mkfifo", "-m", "0666", TREE + "/bob/shadow"])

    def watch(reader):
        out = {}

        def writer():
            out["res"] = conv.sh("timeout 4 sh -c 'echo x > %s/bob/shadow'; echo rc=$?" % TREE,
                                 timeout=20)
        t = threading.Thread(target=writer)
        t.start()
        time.sleep(0.5)
        reader()
        t.join()
        return out["res"].stdout.strip()

    # the detector works: a real reader lets the writer through
    assert watch(lambda: conv.sh("timeout 3 cat %s/bob/shadow" % TREE, check=False)) == "rc=0"
    # the helper never opens it: the writer times out
    results = []
    assert watch(lambda: results.append(
        helper(conv, "verify", "bob", input="bob-pw", timeout=10))) == "rc=124"
    assert results[0].returncode == 2


def test_root_is_refused(conv):
    res = helper(conv, "verify", "root", user=None, input="x")
    assert res.returncode == 2
    assert "root" in res.stderr


@pytest.mark.parametrize("argv", [
    [],
    ["verify"],
    ["verify", "alice", "alice-pw"],          # the password on the command line
    ["verify", "alice", "--", "alice-pw"],
    ["--stdin", "alice"],
    ["check", "alice"],
    ["account"],
    ["account", "alice", "extra"],
])
def test_usage_errors(conv, argv):
    res, took = timed(helper, conv, *argv, input="alice-pw")
    assert res.returncode == 2
    assert res.stderr.startswith("password-helper: ")
    assert took < DELAY


def test_password_in_environment_is_ignored(conv):
    # stdin is /dev/null: refused, whatever the environment holds
    res = conv.run([HELPER, "verify", "alice"], user="alice", check=False,
                   env={"PASSWORD": "alice-pw", "PAM_AUTHTOK": "alice-pw"})
    assert res.returncode == 2


def test_one_mebibyte_is_refused_without_hashing(conv):
    res, took = timed(helper, conv, "verify", "alice", input=b"a" * (1 << 20))
    assert res.returncode == 2
    assert b"longer than 512 bytes" in res.stderr
    # no hash, no failure delay, nothing logged as an attempt
    assert took < DELAY
    assert failures_logged(conv) == []


def test_length_limit_is_exact(conv):
    assert helper(conv, "verify", "alice", input=b"a" * MAX).returncode == 1
    assert helper(conv, "verify", "alice", input=b"a" * (MAX + 1)).returncode == 2


def test_nul_byte_is_refused(conv):
    # "alice-pw\0junk" would hash as "alice-pw"
    res = helper(conv, "verify", "alice", input=b"alice-pw\0junk")
    assert res.returncode == 2


def test_empty_input_is_a_failed_guess(conv):
    res, took = timed(helper, conv, "verify", "alice", input="")
    assert res.returncode == 1
    assert took >= DELAY


@pytest.mark.parametrize("redirect", ["<&-", "</dev/null"])
def test_closed_or_null_stdin_is_refused(conv, redirect):
    res = conv.sh("exec %s; %s verify alice" % (redirect, HELPER), user="alice", check=False)
    assert res.returncode == 2
    assert "standard input" in res.stderr


def test_terminal_stdin_is_refused(conv):
    status, out = conv.pty_run([HELPER, "verify", "alice"], [], user="alice", timeout=10)
    assert status == 2
    assert "standard input" in out


def test_regular_file_stdin(conv):
    conv.write("/tmp/pw", "alice-pw", mode=0o600, uid=conv.getpwnam("alice").uid)
    res = conv.sh("%s verify alice </tmp/pw" % HELPER, user="alice", check=False)
    assert res.returncode == 0


def test_concurrent_guesses_are_serialized(conv):
    script = ("for i in 1 2 3 4; do (printf guess-$i | %s verify alice; echo rc=$? >>/tmp/rc) & "
              "done; wait; cat /tmp/rc" % HELPER)
    res, took = timed(conv.sh, script, user="alice", timeout=60)
    assert res.stdout.split() == ["rc=1"] * 4
    assert took >= 4 * DELAY
    assert len(failures_logged(conv)) == 4


def test_right_password_waits_for_pending_guess(conv):
    # a guess in progress holds alice's lock through its delay
    script = ("(printf wrong | %s verify alice) & sleep 0.5; s=$(date +%%s%%N); "
              "printf alice-pw | %s verify alice; echo rc=$?; e=$(date +%%s%%N); "
              "echo ms=$(( (e - s) / 1000000 )); wait" % (HELPER, HELPER))
    res = conv.sh(script, user="alice")
    out = dict(line.split("=") for line in res.stdout.split())
    assert out["rc"] == "0"
    # queued behind the guess: the rest of its 2 s delay
    assert int(out["ms"]) >= (DELAY - 0.5) * 1000 - 100


def test_guesses_for_different_users_do_not_wait_for_each_other(conv):
    def guess(user, out):
        out[user] = timed(helper, conv, "verify", user, user=user, input="wrong")
    out = {}
    threads = [threading.Thread(target=guess, args=(u, out)) for u in ("alice", "bob")]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - start < 2 * DELAY
    assert out["alice"][0].returncode == 1 and out["bob"][0].returncode == 1


def plant(sb, name, command):
    """Replace alice's file NAME by what COMMAND makes, owned by alice: what she could do
    herself through a subverted setgid tool (she owns the directory, but cannot reach it
    without the tree group)."""
    path = "%s/alice/%s" % (TREE, name)
    sb.sh("rm -f %s && %s && chown -h alice:hardened-shadow-auth %s" % (path, command, path))


def replace_shadow_as_alice(sb, command):
    plant(sb, "shadow", command)


@pytest.mark.parametrize("plant,needle", [
    ("ln -s /etc/shadow %s/alice/shadow" % TREE, "symbolic link"),
    ("ln -s /etc/passwd %s/alice/shadow" % TREE, "symbolic link"),
    ("mkfifo %s/alice/shadow" % TREE, "not a regular file"),
    ("mkdir %s/alice/shadow" % TREE, ""),
    ("head -c 100000 /dev/zero | tr '\\0' a > %s/alice/shadow" % TREE, ""),
    ("printf 'x:y:z:\\n' > %s/alice/shadow" % TREE, ""),
])
def test_hostile_shadow_file(conv, plant, needle):
    replace_shadow_as_alice(conv, plant)
    for mode in ("verify", "account"):
        res, took = timed(helper, conv, mode, "alice", input="alice-pw", timeout=10)
        assert res.returncode == 3, (mode, res.stderr)
        assert res.stdout == ""
        err = res.stderr.strip().splitlines()
        assert len(err) == 1
        assert "%s/alice/shadow" % TREE in err[0]
        assert needle in err[0]
        assert took < DELAY


def test_hard_link_is_refused(conv):
    conv.sh("ln %s/alice/shadow %s/alice/.second" % (TREE, TREE))
    res = helper(conv, "verify", "alice", input="alice-pw")
    assert res.returncode == 3
    assert "link" in res.stderr


def test_directory_owned_by_someone_else(conv):
    # alice's name, but the directory is not hers: nothing is verified
    conv.run(["chown", "bob", TREE + "/alice"])
    res = helper(conv, "verify", "alice", input="alice-pw")
    assert res.returncode == 3


def test_locked_and_starred_hashes_never_match(conv):
    pw = conv.getpwnam("alice")
    auth = conv.getgrnam("hardened-shadow-auth")[1]
    path = TREE + "/alice/shadow"
    good = conv.read(path)
    for content in ("!" + good, "*:19000:\n", ":19000:\n"):
        conv.run(["rm", path])
        conv.write(path, content, mode=0o640, uid=pw.uid, gid=auth)
        assert helper(conv, "verify", "alice", input="alice-pw").returncode == 1, content
        assert helper(conv, "verify", "alice", input="").returncode == 1, content


@pytest.mark.parametrize("legacy", [
    # "alice-pw" under md5crypt and sha256crypt (openssl passwd -1 / -5 -salt abcdefgh),
    # which libxcrypt on Debian 12 calls legacy
    "$1$abcdefgh$/rjHnY0UaDSC5WvrpEXr21",
    "$5$abcdefgh$y1LX5AoVj6oOGWjt31QvF1KNeOX.Rfy3z0cxOYtASF4",
])
def test_legacy_hash_is_refused(conv, legacy):
    pw = conv.getpwnam("alice")
    auth = conv.getgrnam("hardened-shadow-auth")[1]
    path = TREE + "/alice/shadow"
    conv.run(["rm", path])
    conv.write(path, legacy + ":19000:\n", mode=0o640, uid=pw.uid, gid=auth)
    assert helper(conv, "verify", "alice", input="alice-pw").returncode == 1


def test_account_mode(conv):
    res = helper(conv, "account", "alice")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "19000:1:90:7:14:20500:\n"
    # bob: whatever useradd's defaults were, the answer is his two files
    res = helper(conv, "account", "bob", user="bob")
    assert res.returncode == 0, res.stderr
    lstchg = conv.read(TREE + "/bob/shadow").split(":")[1]
    assert re.fullmatch(r"[0-9]+", lstchg)
    assert res.stdout == lstchg + ":" + conv.read(TREE + "/bob/aging")


def test_account_mode_unset_lstchg(conv):
    pw = conv.getpwnam("alice")
    auth = conv.getgrnam("hardened-shadow-auth")[1]
    path = TREE + "/alice/shadow"
    hashed = conv.read(path).split(":")[0]
    conv.run(["rm", path])
    conv.write(path, hashed + "::\n", mode=0o640, uid=pw.uid, gid=auth)
    assert helper(conv, "account", "alice").stdout == "-1:1:90:7:14:20500:\n"


@pytest.mark.parametrize("breakage", ["rm", "replace", "symlink"])
def test_account_mode_fails_closed(conv, breakage):
    """alice owns her directory: whatever she does to aging reads as an expired account."""
    aging = TREE + "/alice/aging"
    if breakage == "rm":
        conv.run(["rm", aging])
    elif breakage == "replace":
        plant(conv, "aging", "printf -- '-1:-1:-1:-1:-1:\\n' > %s" % aging)
    else:
        plant(conv, "aging", "ln -s %s/bob/aging %s" % (TREE, aging))
    conv.syslog(clear=True)
    res = helper(conv, "account", "alice")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "19000:-1:-1:-1:-1:1:\n"
    assert any("account treated as expired" in m for m in conv.syslog())


def test_account_mode_out_of_descriptors_is_an_error(conv):
    """EMFILE opening aging says nothing of the file: the helper fails (3), it does not
    answer the fail-closed "expired" of a missing or hostile aging file, and the PAM module
    then returns an error, not PAM_ACCT_EXPIRED."""
    conv.syslog(clear=True)
    # strace runs the setgid helper as alice (-u keeps its setgid); shadow is the first
    # open below her directory, aging the second
    res = conv.run(["strace", "-f", "-qq", "-o", "/dev/null", "-u", "alice", "-e", "trace=openat",
                    "-P", TREE + "/alice", "-e", "inject=openat:error=EMFILE:when=2",
                    HELPER, "account", "alice"], check=False)
    assert (res.returncode, res.stdout) == (3, ""), res
    log = conv.syslog()
    assert any("cannot read %s/alice/aging: Too many open files" % TREE in m for m in log), log
    assert not any("treated as expired" in m for m in log), log
    # the same without the fault
    res = conv.run(["strace", "-f", "-qq", "-o", "/dev/null", "-u", "alice", HELPER, "account",
                    "alice"], check=False)
    assert (res.returncode, res.stdout) == (0, "19000:1:90:7:14:20500:\n"), res


def test_client_library(conv, client):
    def run(*args, user="alice"):
        return conv.run([client] + list(args), user=user).stdout

    assert run("verify", "alice", "alice-pw") == "verify=0\n"
    out, took = timed(run, "verify", "alice", "wrong")
    assert out == "verify=1\n" and took >= DELAY
    assert run("verify", "bob", "bob-pw") == "verify=2\n"
    assert run("verify", "alice", "x" * (MAX + 1)) == "verify=2\n"
    assert run("verify", "alice", "x" * MAX) == "verify=1\n"
    assert run("verify", "bad/name", "x") == "verify=2\n"
    assert run("account", "alice") == "account=0\n19000:1:90:7:14:20500:\n"
    assert run("account", "bob") == "account=2\n"
    # root is refused by the helper; the library reports it
    assert run("verify", "root", "x", user=None) == "verify=2\n"


def test_client_library_hostile_shadow(conv, client):
    replace_shadow_as_alice(conv, "mkfifo %s/alice/shadow" % TREE)
    res = conv.run([client, "verify", "alice", "alice-pw"], user="alice", timeout=10)
    assert res.stdout == "verify=3\n"
    res = conv.run([client, "account", "alice"], user="alice", timeout=10)
    assert res.stdout == "account=3\n"


def test_client_library_in_a_hostile_host(conv, client):
    res = conv.run([client, "hostile", "alice", "alice-pw"], user="alice")
    assert res.stdout == ("ignored=0 reaper=0 closed-stdin=0 sigchld-seen=0\n"
                          "state unchanged\n")
    res = conv.run([client, "hostile", "alice", "wrong"], user="alice", timeout=30)
    assert res.stdout.startswith("ignored=1 reaper=1 closed-stdin=1 sigchld-seen=0\n")
    # an early refusal (the helper exits before reading) with SIGPIPE at its default
    res = conv.run([client, "hostile", "bob", "bob-pw"], user="alice")
    assert res.returncode == 0
    assert res.stdout.startswith("ignored=2 reaper=2 closed-stdin=2 sigchld-seen=0\n")


def test_client_library_without_helper(conv, client):
    conv.run(["rm", HELPER])
    res = conv.run([client, "verify", "alice", "alice-pw"], user="alice")
    assert res.stdout == "verify=3\n"


ANSWERS_ACCEPTED = [
    "19000:1:90:7:14:20500:\n",
    "-1:-1:-1:-1:-1:-1:\n",
    "0:0:0:0:0:0:\n",
    "2147483647:2147483647:0:-1:2147483647:1:\n",
]
ANSWERS_REFUSED = [
    "",
    "\n",
    "19000:1:90:7:14:20500:",          # no newline
    "19000:1:90:7:14:20500:\n\n",
    "19000:1:90:7:14:20500:\r\n",
    "19000:1:90:7:14:20500:5\n",       # a FLAG
    "19000:1:90:7:14:20500\n",         # five fields
    "19000:1:90:7:14:20500::\n",       # seven
    "19000:1:90:7:14\n",
    "19000\n",
    ":1:90:7:14:20500:\n",             # an empty day
    "19000::90:7:14:20500:\n",
    "19000:1:90:7:14::\n",
    "019000:1:90:7:14:20500:\n",       # not canonical
    "+19000:1:90:7:14:20500:\n",
    "19000:1:90:7:14:+1:\n",
    "-2:1:90:7:14:20500:\n",
    "19000:1:-01:7:14:20500:\n",
    "2147483648:1:90:7:14:20500:\n",  # above HS_DAYS_MAX
    "19000:1:90:7:14:2147483648:\n",
    " 19000:1:90:7:14:20500:\n",
    "19000:1:90:7:14:\t20500:\n",
    "19000:1:90:7\x00:14:20500:\n",
    "1" * 140 + ":1:90:7:14:20500:\n",  # longer than an answer can be
]


def test_client_library_parses_only_an_account_answer(conv, client):
    """A stand-in helper's answers: the client takes LSTCHG and five aging days, each "-1" or a
    day number, each colon-terminated, and a newline; anything else is an error (3), never data."""
    conv.run(["rm", HELPER])
    conv.write(HELPER, "#!/bin/sh\nexec /bin/cat /tmp/answer\n", mode=0o755)
    for answer in ANSWERS_ACCEPTED + ANSWERS_REFUSED:
        conv.write("/tmp/answer", answer, mode=0o644)
        res = conv.run([client, "account", "alice"], user="alice")
        expected = "account=0\n" + answer if answer in ANSWERS_ACCEPTED else "account=3\n"
        assert res.stdout == expected, repr(answer)
