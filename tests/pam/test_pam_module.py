"""pam_hardened_shadow.so through pam_wrapper + libpamtest: options x account states x
callers (root; the user itself through the password helper; the user in a setgid-like
process, as the setgid passwd runs it).  See tests/pam/conftest.py for the users."""

import itertools
import os
import re
import time

import pytest

from conftest import PASSWORD, TODAY

SERVICE_DIR = "/etc/hs-pamtest"
_names = itertools.count()


def service(root, build_dir, lines):
    """Write a service file; lines: list of "TYPE CONTROL OPTIONS" where MOD is our
    module from the build tree."""
    mod = os.path.join(build_dir, "pam", "pam_hardened_shadow.so")
    name = "t%d" % next(_names)
    text = "".join(line.replace("MOD", mod) + "\n" for line in lines)
    root.write(SERVICE_DIR + "/" + name, text)
    return name


def simple(root, build_dir, opts="", ptype=None):
    types = [ptype] if ptype else ["auth", "account", "password", "session"]
    return service(root, build_dir, ["%s required MOD %s" % (t, opts) for t in types])


def pamtest(root, build_dir, svc, user, steps, inputs=(), caller="root", check=True,
            sigchld=None, prefix=()):
    """Run build/tests/pam/pamtest.  caller: "root", "self" (the PAM user, as a plain
    process: the helper's case), "setgid" (the PAM user with egid hardened-shadow,
    as in the setgid passwd) or "setuid" (the PAM user's real uid with effective uid
    0, as in su: the guess guard's case).  sigchld: None, "reap" (a SIGCHLD handler
    of the application's reaps every child) or "ignore" (SIGCHLD ignored).  prefix: a
    command the application runs under (strace injecting a fault)."""
    argv = [os.path.join(build_dir, "tests", "pam", "pamtest"), svc, user]
    if caller == "setgid":
        pw = root.getpwnam(user)
        argv += ["-u", "%d:%d:%d" % (pw.uid, pw.gid, root.getgrnam("hardened-shadow")[1])]
    elif caller == "setuid":
        pw = root.getpwnam(user)
        argv += ["-s", "%d:%d" % (pw.uid, pw.gid)]
    if sigchld:
        argv += ["-c", sigchld]
    for i in inputs:
        argv += ["-i", i]
    argv += steps
    # through env(1) inside the root: in the environment of sb.run, pam_wrapper would
    # also load into chroot/setpriv, which run with the host's view of the files
    argv = list(prefix) + ["/usr/bin/env", "LD_PRELOAD=libpam_wrapper.so", "PAM_WRAPPER=1",
            "PAM_WRAPPER_USE_SYSLOG=1", "PAM_WRAPPER_SERVICE_DIR=" + SERVICE_DIR] + argv
    run_as = None
    if caller == "self":
        run_as = user
    res = root.run(argv, user=run_as, check=False, timeout=60)
    if check:
        assert res.returncode == 0, "pamtest %s %s %s:\n%s%s" % (
            user, " ".join(steps), caller, res.stdout, res.stderr)
    return res


def shadow_of(root, user):
    hash_, lstchg, rest = root.read("/etc/hardened-shadow/%s/shadow" % user).split(":")
    return hash_, lstchg


def log(root):
    return "\n".join(root.syslog(clear=True))


# ---------------------------------------------------------------- auth

@pytest.mark.parametrize("caller", ["root", "self", "setgid"])
def test_auth_right_password(root, build_dir, caller):
    svc = simple(root, build_dir, "nodelay")
    res = pamtest(root, build_dir, svc, "alice", ["auth=PAM_SUCCESS", "acct=PAM_SUCCESS"],
                  [PASSWORD], caller=caller)
    assert "error:" not in res.stdout


@pytest.mark.parametrize("caller", ["root", "self"])
def test_auth_wrong_password(root, build_dir, caller):
    svc = simple(root, build_dir, "nodelay")
    log(root)
    pamtest(root, build_dir, svc, "alice", ["auth=PAM_AUTH_ERR"], ["wrong"], caller=caller)
    if caller == "root":
        assert re.search(r"authentication failure; logname=\S* uid=0 euid=0 .* user=alice",
                         log(root))


def test_auth_other_users_password_through_helper_refused(root, build_dir):
    # alice's process asking about bob: the helper refuses, whatever the password
    svc = simple(root, build_dir, "nodelay")
    res = root.run(["/usr/bin/env", "LD_PRELOAD=libpam_wrapper.so", "PAM_WRAPPER=1",
                    "PAM_WRAPPER_SERVICE_DIR=" + SERVICE_DIR,
                    os.path.join(build_dir, "tests", "pam", "pamtest"), svc, "bob",
                    "-i", PASSWORD, "auth=PAM_AUTH_ERR"], user="alice", check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_unknown_user(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    log(root)
    pamtest(root, build_dir, svc, "nosuchuser", ["auth=PAM_USER_UNKNOWN"], [PASSWORD])
    text = log(root)
    assert "check pass; user unknown" in text
    assert "nosuchuser" not in text
    svc = simple(root, build_dir, "nodelay audit")
    pamtest(root, build_dir, svc, "nosuchuser", ["auth=PAM_USER_UNKNOWN"], [PASSWORD])
    assert "check pass; user (nosuchuser) unknown" in log(root)
    # hostile names never reach a path
    for bad in ("../alice", "alice/..", "-alice", ".", ""):
        pamtest(root, build_dir, svc, bad or "x" * 40, ["auth=PAM_USER_UNKNOWN"], [PASSWORD])


def test_unknown_user_costs_a_hash(root, build_dir):
    """An unknown user spends the same crypt as a wrong password (coarse check: the
    bench measures it precisely).  alice's hash is yescrypt, so is the policy here."""
    svc = simple(root, build_dir, "nodelay yescrypt")

    def timed(user, n=5):
        t = time.monotonic()
        for _ in range(n):
            pamtest(root, build_dir, svc, user,
                    ["auth=PAM_USER_UNKNOWN" if user == "nosuchuser" else "auth=PAM_AUTH_ERR"],
                    ["wrong"])
        return time.monotonic() - t

    known, unknown = timed("alice"), timed("nosuchuser")
    assert unknown > 0.6 * known, (known, unknown)


def test_failure_delay(root, build_dir):
    svc = simple(root, build_dir, "")
    t = time.monotonic()
    pamtest(root, build_dir, svc, "alice", ["auth=PAM_AUTH_ERR"], ["wrong"])
    slow = time.monotonic() - t
    svc = simple(root, build_dir, "nodelay")
    t = time.monotonic()
    pamtest(root, build_dir, svc, "alice", ["auth=PAM_AUTH_ERR"], ["wrong"])
    fast = time.monotonic() - t
    assert slow >= 1.0, slow       # libpam randomises the 2 s delay by +-25 %
    assert fast < 1.0, fast


@pytest.mark.parametrize("sigchld", [None, "reap", "ignore"])
def test_setuid_application_that_reaps_its_children(root, build_dir, sigchld):
    # su's case, the guess guard's: an application that reaps every child (a SIGCHLD
    # handler waiting for any pid) or ignores SIGCHLD (the kernel reaps) may take the
    # guard's exit status; a wrong password still costs the whole delay and fails, the
    # right one still succeeds at once
    svc = simple(root, build_dir, "", "auth")
    t = time.monotonic()
    pamtest(root, build_dir, svc, "bob", ["auth=PAM_AUTH_ERR"], ["wrong"], caller="setuid",
            sigchld=sigchld)
    slow = time.monotonic() - t
    t = time.monotonic()
    pamtest(root, build_dir, svc, "bob", ["auth=PAM_SUCCESS"], [PASSWORD], caller="setuid",
            sigchld=sigchld)
    fast = time.monotonic() - t
    assert slow >= 2.0, slow       # HS_FAIL_DELAY_MS, not randomised: the guard's
    assert fast < slow - 1.0, (fast, slow)


def test_empty_password_needs_nullok(root, build_dir):
    svc = simple(root, build_dir, "nodelay nullok")
    # no input at all: with nullok an empty password logs in without a prompt
    pamtest(root, build_dir, svc, "emptyuser", ["auth=PAM_SUCCESS"])
    svc = simple(root, build_dir, "nodelay")
    pamtest(root, build_dir, svc, "emptyuser", ["auth=PAM_AUTH_ERR"], [""])
    pamtest(root, build_dir, svc, "emptyuser", ["auth=PAM_AUTH_ERR"], ["x"])


@pytest.mark.parametrize("user", ["locked", "star"])
def test_locked_refused(root, build_dir, user):
    svc = simple(root, build_dir, "nodelay nullok allow_legacy")
    for pw in (PASSWORD, "", "*", "!"):
        pamtest(root, build_dir, svc, user, ["auth=PAM_AUTH_ERR"], [pw])


def test_legacy_hash_needs_allow_legacy(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    log(root)
    pamtest(root, build_dir, svc, "legacy", ["auth=PAM_AUTH_ERR"], [PASSWORD])
    assert "legacy" in log(root)
    svc = simple(root, build_dir, "nodelay allow_legacy")
    pamtest(root, build_dir, svc, "legacy", ["auth=PAM_SUCCESS"], [PASSWORD])
    pamtest(root, build_dir, svc, "legacy", ["auth=PAM_AUTH_ERR"], ["wrong"])


def test_use_first_pass_and_try_first_pass(root, build_dir):
    # the first line prompts and stores PAM_AUTHTOK; the second must reuse it: the
    # second input ("decoy") would be its answer if it prompted again
    for opt in ("use_first_pass", "try_first_pass"):
        svc = service(root, build_dir, ["auth optional MOD nodelay",
                                        "auth required MOD nodelay " + opt])
        pamtest(root, build_dir, svc, "alice", ["auth=PAM_SUCCESS"], [PASSWORD, "decoy"])
        pamtest(root, build_dir, svc, "alice", ["auth=PAM_AUTH_ERR"], ["wrong", PASSWORD])
    # alone, try_first_pass prompts; use_first_pass has nothing to use
    svc = simple(root, build_dir, "nodelay try_first_pass", "auth")
    pamtest(root, build_dir, svc, "alice", ["auth=PAM_SUCCESS"], [PASSWORD])
    svc = simple(root, build_dir, "nodelay use_first_pass", "auth")
    res = pamtest(root, build_dir, svc, "alice", ["auth=PAM_SUCCESS"], [PASSWORD], check=False)
    assert res.returncode == 1, res.stdout


def test_unknown_option_logged_and_ignored(root, build_dir):
    svc = simple(root, build_dir, "nodelay bogus_option=1")
    log(root)
    pamtest(root, build_dir, svc, "alice", ["auth=PAM_SUCCESS"], [PASSWORD])
    assert "unrecognized option [bogus_option=1]" in log(root)


def test_symlinked_shadow_refused(root, build_dir):
    d = "/etc/hardened-shadow/symlinked"
    root.run(["ln", "-sf", "/etc/passwd", d + "/shadow.tmp"])
    root.run(["mv", "-fT", d + "/shadow.tmp", d + "/shadow"])
    svc = simple(root, build_dir, "nodelay")
    log(root)
    pamtest(root, build_dir, svc, "symlinked", ["auth=PAM_AUTHINFO_UNAVAIL"], [PASSWORD])
    assert "/etc/hardened-shadow/symlinked/shadow" in log(root)


# ---------------------------------------------------------------- rehash

def test_rehash(root, build_dir):
    before = shadow_of(root, "weak")
    assert before[0].startswith("$6$")
    svc = simple(root, build_dir, "nodelay")
    pamtest(root, build_dir, svc, "weak", ["auth=PAM_SUCCESS"], [PASSWORD])
    assert shadow_of(root, "weak") == before
    svc = simple(root, build_dir, "nodelay rehash yescrypt")
    log(root)
    pamtest(root, build_dir, svc, "weak", ["auth=PAM_SUCCESS"], [PASSWORD])
    after = shadow_of(root, "weak")
    assert after[0].startswith("$y$") and after[1] == before[1]
    assert "re-hashed" in log(root)
    st = root.lstat("/etc/hardened-shadow/weak/shadow")
    assert (st.st_mode & 0o7777) == 0o640
    assert st.st_gid == root.getgrnam("hardened-shadow-auth")[1]
    # a wrong password never rewrites, and the new hash works
    pamtest(root, build_dir, svc, "weak", ["auth=PAM_AUTH_ERR"], ["wrong"])
    pamtest(root, build_dir, svc, "weak", ["auth=PAM_SUCCESS"], [PASSWORD])
    assert shadow_of(root, "weak") == after
    assert sorted(os.listdir(root.root + "/etc/hardened-shadow/weak")) == \
        ["aging", "shadow", "shell"]


def test_rehash_skipped_through_helper(root, build_dir):
    before = shadow_of(root, "weakuser")
    svc = simple(root, build_dir, "nodelay rehash yescrypt")
    pamtest(root, build_dir, svc, "weakuser", ["auth=PAM_SUCCESS"], [PASSWORD], caller="self")
    assert shadow_of(root, "weakuser") == before


# ---------------------------------------------------------------- account

ACCOUNT_STATES = [
    ("alice", "PAM_SUCCESS", None),
    ("expired", "PAM_ACCT_EXPIRED",
     "error: Your account has expired; please contact your system administrator."),
    ("mustchange", "PAM_NEW_AUTHTOK_REQD",
     "error: You are required to change your password immediately (administrator enforced)."),
    ("aged", "PAM_NEW_AUTHTOK_REQD",
     "error: You are required to change your password immediately (password expired)."),
    ("inactive", "PAM_AUTHTOK_EXPIRED",
     "error: Your account has expired; please contact your system administrator."),
    ("warned", "PAM_SUCCESS", "info: Warning: your password will expire in 5 days."),
    ("warned1", "PAM_SUCCESS", "info: Warning: your password will expire in 1 day."),
    ("noaging", "PAM_ACCT_EXPIRED",
     "error: Your account has expired; please contact your system administrator."),
    ("hostileaging", "PAM_ACCT_EXPIRED",
     "error: Your account has expired; please contact your system administrator."),
    ("emptyuser", "PAM_SUCCESS", None),
    ("locked", "PAM_SUCCESS", None),
]


@pytest.fixture(scope="module")
def broken_aging(root):
    root.run(["rm", "-f", "/etc/hardened-shadow/noaging/aging"])
    uid = root.getpwnam("hostileaging").uid
    root.run(["chown", str(uid), "/etc/hardened-shadow/hostileaging/aging"])


@pytest.mark.parametrize("caller", ["root", "self"])
@pytest.mark.parametrize("user,code,message", ACCOUNT_STATES)
def test_account_states(root, build_dir, broken_aging, caller, user, code, message):
    svc = simple(root, build_dir, "", "account")
    log(root)
    res = pamtest(root, build_dir, svc, user, ["acct=" + code], caller=caller)
    lines = [l for l in res.stdout.splitlines() if l.startswith(("error:", "info:"))]
    assert lines == ([message] if message else []), res.stdout
    if user in ("noaging", "hostileaging") and caller == "root":
        assert "/etc/hardened-shadow/%s/aging" % user in log(root)


def test_account_out_of_descriptors_is_no_verdict(root, build_dir):
    """EMFILE opening the aging file (a threaded application at its descriptor limit) says
    nothing of that file: PAM_AUTHINFO_UNAVAIL, not the fail-closed "expired" of a missing
    or hostile one, which would send the user to their administrator."""
    svc = simple(root, build_dir, "", "account")
    log(root)
    # the module's second open below alice's directory: shadow, then aging
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat",
              "-P", "/etc/hardened-shadow/alice", "-e", "inject=openat:error=EMFILE:when=2"]
    res = pamtest(root, build_dir, svc, "alice", ["acct=PAM_AUTHINFO_UNAVAIL"], prefix=inject)
    assert "error:" not in res.stdout, res.stdout
    text = log(root)
    assert "cannot read /etc/hardened-shadow/alice/aging: Too many open files" in text, text
    assert "treated as expired" not in text and "has expired" not in text, text
    # the same under strace without the fault: the account is fine
    pamtest(root, build_dir, svc, "alice", ["acct=PAM_SUCCESS"], prefix=inject[:-2])


def test_account_unknown_user(root, build_dir):
    svc = simple(root, build_dir, "", "account")
    pamtest(root, build_dir, svc, "nosuchuser", ["acct=PAM_USER_UNKNOWN"])


def test_account_silent(root, build_dir):
    svc = service(root, build_dir, ["account required MOD"])
    # PAM_SILENT is not settable through libpamtest; check the message path instead
    res = pamtest(root, build_dir, svc, "expired", ["acct=PAM_ACCT_EXPIRED"])
    assert res.stdout.count("error:") == 1


# ---------------------------------------------------------------- password

def test_root_changes_password_without_old(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    old = shadow_of(root, "pwchange")
    log(root)
    pamtest(root, build_dir, svc, "pwchange", ["chauthtok=PAM_SUCCESS"], ["N3w-pass!", "N3w-pass!"])
    new = shadow_of(root, "pwchange")
    assert new[0] != old[0] and new[0].startswith("$6$")   # login.defs: SHA512
    assert new[1] == str(TODAY)
    assert "password changed for pwchange" in log(root)
    pamtest(root, build_dir, svc, "pwchange", ["auth=PAM_SUCCESS"], ["N3w-pass!"])
    pamtest(root, build_dir, svc, "pwchange", ["auth=PAM_AUTH_ERR"], [PASSWORD])
    st = root.lstat("/etc/hardened-shadow/pwchange/shadow")
    assert st.st_uid == root.getpwnam("pwchange").uid
    assert st.st_gid == root.getgrnam("hardened-shadow-auth")[1]
    assert (st.st_mode & 0o7777) == 0o640


def test_mismatch_and_empty_new_password(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    before = shadow_of(root, "carol")
    res = pamtest(root, build_dir, svc, "carol", ["chauthtok=PAM_AUTHTOK_ERR"],
                  ["aaaa-1234", "bbbb-1234"] * 3)
    assert "error: Sorry, passwords do not match." in res.stdout
    res = pamtest(root, build_dir, svc, "carol", ["chauthtok=PAM_AUTHTOK_ERR"], [""] * 6)
    assert "error: No password has been supplied." in res.stdout
    assert shadow_of(root, "carol") == before


def test_user_changes_own_password_setgid(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    res = pamtest(root, build_dir, svc, "pwchange2", ["chauthtok=PAM_AUTH_ERR"],
                  ["wrong", "N3w-pass!", "N3w-pass!"], caller="setgid")
    assert "info: Changing password for pwchange2." in res.stdout
    before = shadow_of(root, "pwchange2")
    res = pamtest(root, build_dir, svc, "pwchange2", ["chauthtok=PAM_AUTHTOK_ERR"],
                  [PASSWORD, PASSWORD, PASSWORD], caller="setgid")
    assert "error: The password has not been changed." in res.stdout
    assert shadow_of(root, "pwchange2") == before
    pamtest(root, build_dir, svc, "pwchange2", ["chauthtok=PAM_SUCCESS"],
            [PASSWORD, "N3w-pass!", "N3w-pass!"], caller="setgid")
    after = shadow_of(root, "pwchange2")
    assert after[0] != before[0] and after[1] == str(TODAY)
    st = root.lstat("/etc/hardened-shadow/pwchange2/shadow")
    assert st.st_gid == root.getgrnam("hardened-shadow-auth")[1]
    assert (st.st_mode & 0o7777) == 0o640
    pamtest(root, build_dir, svc, "pwchange2", ["auth=PAM_SUCCESS"], ["N3w-pass!"], caller="self")


def test_change_out_of_descriptors_is_no_verdict(root, build_dir):
    """The user's own change (setgid) reads aging after the current password: EMFILE there
    is an error, not "user shadow entry expired" (PAM_ACCT_EXPIRED)."""
    svc = simple(root, build_dir, "nodelay")
    before = shadow_of(root, "carol")
    log(root)
    # below carol's directory: shadow, aging for the guess lock, aging for the limits
    inject = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=openat",
              "-P", "/etc/hardened-shadow/carol", "-e", "inject=openat:error=EMFILE:when=3"]
    pamtest(root, build_dir, svc, "carol", ["chauthtok=PAM_AUTHINFO_UNAVAIL"],
            [PASSWORD, "N3w-pass!", "N3w-pass!"], caller="setgid", prefix=inject)
    text = log(root)
    assert "cannot read /etc/hardened-shadow/carol/aging: Too many open files" in text, text
    assert "expired" not in text, text
    assert shadow_of(root, "carol") == before


def test_min_age(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    res = pamtest(root, build_dir, svc, "young", ["chauthtok=PAM_AUTHTOK_ERR"],
                  [PASSWORD, "N3w-pass!", "N3w-pass!"], caller="setgid")
    assert "error: You must wait longer to change your password." in res.stdout
    # root is not bound by the minimum age
    pamtest(root, build_dir, svc, "young", ["chauthtok=PAM_SUCCESS"], ["N3w-pass!", "N3w-pass!"])


def test_plain_user_process_cannot_change(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    before = shadow_of(root, "bob")
    pamtest(root, build_dir, svc, "bob", ["chauthtok=PAM_AUTHTOK_ERR"],
            [PASSWORD, "N3w-pass!", "N3w-pass!"], caller="self")
    assert shadow_of(root, "bob") == before


def test_forced_change_at_login_asks_old_password(root, build_dir):
    svc = simple(root, build_dir, "nodelay")
    pamtest(root, build_dir, svc, "mustchange", ["chauthtok-expired=PAM_AUTH_ERR"],
            ["wrong", "N3w-pass!", "N3w-pass!"])
    pamtest(root, build_dir, svc, "mustchange",
            ["auth=PAM_SUCCESS", "acct=PAM_NEW_AUTHTOK_REQD", "chauthtok-expired=PAM_SUCCESS"],
            [PASSWORD, PASSWORD, "N3w-pass!", "N3w-pass!"])
    assert shadow_of(root, "mustchange")[1] == str(TODAY)
    pamtest(root, build_dir, svc, "mustchange", ["auth=PAM_SUCCESS", "acct=PAM_SUCCESS"],
            ["N3w-pass!"])


@pytest.mark.parametrize("opts,prefix", [
    ("sha512 rounds=6000", "$6$rounds=6000$"),
    ("prefix=$6$", "$6$"),
    ("blowfish rounds=5", "$2b$05$"),
    ("prefix=$2b$ rounds=6", "$2b$06$"),
    ("yescrypt", "$y$"),
    ("gost_yescrypt", "$gy$"),
    ("prefix=$gy$", "$gy$"),
    ("md5 allow_legacy", "$1$"),
    ("", "$6$"),          # Debian's login.defs: ENCRYPT_METHOD SHA512
])
def test_hash_method_options(root, build_dir, opts, prefix):
    svc = simple(root, build_dir, "nodelay " + opts, "password")
    pamtest(root, build_dir, svc, "racer", ["chauthtok=PAM_SUCCESS"], ["N3w-pass!", "N3w-pass!"])
    assert shadow_of(root, "racer")[0].startswith(prefix)
    svc = simple(root, build_dir, "nodelay allow_legacy", "auth")
    pamtest(root, build_dir, svc, "racer", ["auth=PAM_SUCCESS"], ["N3w-pass!"])


@pytest.mark.parametrize("opts", ["prefix=", "prefix=$0$", "prefix=xx", "md5", "rounds=abc",
                                  "sha256"])
def test_bad_method_is_configuration_error(root, build_dir, opts):
    before = shadow_of(root, "racer")
    svc = simple(root, build_dir, "nodelay " + opts, "password")
    log(root)
    pamtest(root, build_dir, svc, "racer", ["chauthtok=PAM_SERVICE_ERR"],
            ["N3w-pass!", "N3w-pass!"])
    assert shadow_of(root, "racer") == before
    assert "configuration error" in log(root)


def test_login_defs_method(root, build_dir):
    defs = root.read("/etc/login.defs")
    try:
        for method, prefix, code in (("SHA512", "$6$", "PAM_SUCCESS"),
                                     ("DES", None, "PAM_SERVICE_ERR"),
                                     ("BOGUS", None, "PAM_SERVICE_ERR")):
            root.write("/etc/login.defs", re.sub(r"(?m)^ENCRYPT_METHOD.*\n", "", defs) +
                       "ENCRYPT_METHOD %s\n" % method)
            before = shadow_of(root, "racer")
            svc = simple(root, build_dir, "nodelay", "password")
            pamtest(root, build_dir, svc, "racer", ["chauthtok=" + code],
                    ["N3w-pass!", "N3w-pass!"])
            if prefix:
                assert shadow_of(root, "racer")[0].startswith(prefix)
            else:
                assert shadow_of(root, "racer") == before
    finally:
        root.write("/etc/login.defs", defs)


def test_use_authtok_with_pwquality(root, build_dir):
    svc = service(root, build_dir, [
        "password requisite pam_pwquality.so retry=1 dictcheck=0",
        "password required MOD nodelay use_authtok",
    ])
    before = shadow_of(root, "pwq")
    # as the user (pam_pwquality only warns root)
    res = pamtest(root, build_dir, svc, "pwq", ["chauthtok=PAM_AUTHTOK_ERR"],
                  [PASSWORD, "abc", "abc"], caller="setgid")
    assert "BAD PASSWORD" in res.stdout
    assert shadow_of(root, "pwq") == before
    pamtest(root, build_dir, svc, "pwq", ["chauthtok=PAM_SUCCESS"],
            [PASSWORD, "Ql8#vintage-Oboe", "Ql8#vintage-Oboe"], caller="setgid")
    assert shadow_of(root, "pwq") != before
    svc = simple(root, build_dir, "nodelay", "auth")
    pamtest(root, build_dir, svc, "pwq", ["auth=PAM_SUCCESS"], ["Ql8#vintage-Oboe"])
    # use_authtok with nothing above: no prompt, an error
    svc = simple(root, build_dir, "nodelay use_authtok", "password")
    res = pamtest(root, build_dir, svc, "pwq", ["chauthtok=PAM_SUCCESS"],
                  ["x-Y-z-1234", "x-Y-z-1234"], check=False)
    assert res.returncode == 1


def test_not_set_pass(root, build_dir):
    svc = simple(root, build_dir, "nodelay not_set_pass")
    pamtest(root, build_dir, svc, "nsp", ["chauthtok=PAM_SUCCESS"],
            [PASSWORD, "N3w-pass!", "N3w-pass!"], caller="setgid")
    pamtest(root, build_dir, svc, "nsp", ["auth=PAM_SUCCESS"], ["N3w-pass!"])
    res = pamtest(root, build_dir, svc, "nsp", ["chauthtok=PAM_AUTHTOK_ERR"],
                  ["N3w-pass!", "a-1234-b", "c-1234-d"] + ["a-1234-b", "c-1234-d"] * 2,
                  caller="setgid")
    assert "error: Sorry, passwords do not match." in res.stdout


# ---------------------------------------------------------------- session

def test_session_logged(root, build_dir):
    svc = simple(root, build_dir, "", "session")
    log(root)
    pamtest(root, build_dir, svc, "alice", ["open=PAM_SUCCESS", "close=PAM_SUCCESS"])
    text = log(root)
    uid = root.getpwnam("alice").uid
    assert re.search(r"session opened for user alice\(uid=%d\) by \S*\(uid=0\)" % uid, text)
    assert "session closed for user alice" in text


# ---------------------------------------------------------------- Debian's stack

def test_debian_common_stack(root, build_dir):
    """Sandbox.use_pam_module: Debian's common-* files with our module in pam_unix's
    place (control fields, pam_pwquality and pam_deny/pam_permit kept) work as a whole."""
    root.use_pam_module({"auth": "nullok nodelay"})
    lines = []
    for ptype in ("auth", "account", "password", "session"):
        text = root.read("/etc/pam.d/common-" + ptype)
        assert not re.search(r"(?m)^[^#]*pam_unix", text)
        assert re.search(r"(?m)^%s\s+\[success=1 default=ignore\]\s+pam_hardened_shadow\.so"
                         % ptype, text) or ptype in ("account", "session")
        lines += [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")
                  and "pam_systemd" not in l and "pam_cap" not in l]
    assert "pam_hardened_shadow.so nullok nodelay" in root.read("/etc/pam.d/common-auth")
    svc = service(root, build_dir, [l.replace("pam_pwquality.so", "pam_pwquality.so dictcheck=0")
                                    for l in lines])
    pamtest(root, build_dir, svc, "bob", ["auth=PAM_SUCCESS", "acct=PAM_SUCCESS",
                                          "open=PAM_SUCCESS", "close=PAM_SUCCESS"], [PASSWORD])
    pamtest(root, build_dir, svc, "bob", ["auth=PAM_AUTH_ERR"], ["wrong"])
    # Debian's "default=ignore" then pam_deny: the message, and pam_deny's code
    res = pamtest(root, build_dir, svc, "expired", ["auth=PAM_SUCCESS", "acct=PAM_AUTH_ERR"],
                  [PASSWORD])
    assert "error: Your account has expired; please contact your system administrator." \
        in res.stdout
    pamtest(root, build_dir, svc, "bob", ["chauthtok=PAM_SUCCESS"],
            [PASSWORD, "Zq7-lantern-Vole", "Zq7-lantern-Vole"], caller="setgid")
    pamtest(root, build_dir, svc, "bob", ["auth=PAM_SUCCESS"], ["Zq7-lantern-Vole"],
            caller="self")
