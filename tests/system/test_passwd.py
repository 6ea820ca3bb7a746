"""passwd in a throwaway root: shadow-utils' exact output (compared byte for byte with
Debian's own passwd on an identical classic database), root's flag operations on the
per-user tree, refusals for ordinary users, the PAM password change on a real pty as a
real unprivileged user, --stdin, and hostile conditions (1 MiB on stdin, closed stdin,
SIGKILL at random points, concurrent writers, a planted symlink).

Tests that need pam_hardened_shadow.so to change passwords skip with "BLOCKED" while the
module cannot do that yet (checked by a probe, so they run as soon as it can)."""

import ctypes
import os
import random
import re
import signal
import subprocess
import threading
import time

import pytest

import sandbox

PASSWD = "/usr/bin/passwd"
# Debian's shadow-utils passwd, copied from the host into the root (sandbox.py's
# CLASSIC_TOOLS does not include passwd); same basename, so the same message prefix.
CLASSIC_PASSWD = sandbox.CLASSIC_TOOLS_DIR + "/passwd"
SU = "/usr/local/bin/hs-test-debian-su"
TREE = "/etc/hardened-shadow"

# Fixed hashes, so two roots built from them hold byte-identical accounts.
_libcrypt = ctypes.CDLL("libcrypt.so.1")
_libcrypt.crypt.restype = ctypes.c_char_p
_libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def verify(password, hash_):
    """libxcrypt's verdict: does password match hash_?"""
    if not hash_ or hash_[0] in "!*":
        return False
    out = _libcrypt.crypt(password.encode(), hash_.encode())
    return out is not None and out.decode() == hash_


HASHES = {name: sandbox._crypt(pw) for name, pw in
          [("alice", "alice-old-1"), ("bob", "bob-old-1"), ("erin", "erin-old-1"),
           ("frank", "frank-old-1")]}

USERS = [
    # name, add_classic_user fields
    ("alice", dict(password_hash=HASHES["alice"])),
    ("bob", dict(password_hash=HASHES["bob"], mindays=1, maxdays=30, warndays=5,
                 inactive=3, lastday="2024-01-02")),
    ("carol", dict()),                                   # "!" only: no password yet
    ("dave", dict(password_hash="")),                    # no password needed
    ("erin", dict(password_hash="!" + HASHES["erin"])),  # locked
    ("frank", dict(password_hash=HASHES["frank"], lastday=0)),   # must change
    ("gina", dict(password_hash="*", lastday=-1)),       # no last change day
]


def install_classic_passwd(sb):
    if not sb.exists(CLASSIC_PASSWD):
        with open("/usr/bin/passwd", "rb") as f:   # the host's Debian passwd
            sb.write(CLASSIC_PASSWD, f.read(), mode=0o4755)


def install_su(sb):
    if not sb.exists(SU):
        with open("/usr/bin/su", "rb") as f:
            sb.write(SU, f.read(), mode=0o4755)


# Debian's stack without the optional quality module (the host may have
# libpam-pwquality installed; its checks are the PAM module tests' business).
COMMON_PASSWORD = """\
password	[success=1 default=ignore]	pam_unix.so obscure yescrypt
password	requisite			pam_deny.so
password	required			pam_permit.so
"""


def make_users(sb):
    sb.write("/etc/pam.d/common-password", COMMON_PASSWORD)
    for name, fields in USERS:
        sb.add_classic_user(name, **fields)


def convert(sb):
    if hasattr(sb, "use_hardened_tree"):
        sb.use_hardened_tree()
    else:
        sb.run(["/usr/sbin/pwconv"])
        sb.set_nsswitch_shadow("hardened_shadow")


def use_module(sb):
    if hasattr(sb, "use_pam_module"):
        sb.use_pam_module()
    else:
        for t in ("auth", "account", "password", "session"):
            p = "/etc/pam.d/common-" + t
            sb.write(p, sb.read(p).replace("pam_unix.so", "pam_hardened_shadow.so"))


def shadow_line(sb, name):
    return sb.read("%s/%s/shadow" % (TREE, name))


def hash_of(sb, name):
    return shadow_line(sb, name).split(":")[0]


def aging_of(sb, name):
    return sb.read("%s/%s/aging" % (TREE, name))


def temp_files(sb, name):
    return [f for f in os.listdir(os.path.join(sb.root, TREE.lstrip("/"), name))
            if f.startswith(".")]


def subverted(sb, user, script, check=True):
    """Run a shell script as user with the hardened-shadow group added: what a user who
    subverted a setgid tool could do in their own directory."""
    pw = sb.getpwnam(user)
    tree_gid = sb.getgrnam("hardened-shadow")[1]
    return sb.run(["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                   "--groups=%d" % tree_gid, "--", "/bin/sh", "-c", script], check=check)


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


@pytest.fixture
def conv(sb):
    """USERS, converted to the tree; the PAM stack still pam_unix."""
    install_su(sb)
    make_users(sb)
    convert(sb)
    return sb


_module_state = {}


@pytest.fixture
def mod(conv):
    """conv with the PAM stack on pam_hardened_shadow.so; skips (BLOCKED) while the module
    cannot change a password yet."""
    use_module(conv)
    if "ok" not in _module_state:
        res = run(conv, [PASSWD, "--stdin", "alice"], input="probe-pw-1\n")
        _module_state["ok"] = res.returncode == 0 and verify("probe-pw-1", hash_of(conv, "alice"))
        _module_state["why"] = res.stdout + res.stderr
    if not _module_state["ok"]:
        pytest.skip("BLOCKED: pam_hardened_shadow.so does not change passwords yet: %s"
                    % _module_state["why"].strip())
    # back to the known password for the test
    res = run(conv, [PASSWD, "--stdin", "alice"], input="alice-old-1\n")
    assert res.returncode == 0, res
    return conv


# ---------------------------------------------------------------- shadow-utils' format

# (argv, user) pairs run on both roots; each compares rc, stdout and stderr (stderr only
# up to the usage text, which lists our extra options), then every user's -S line.
SCENARIO = [
    (["-S", "alice"], None), (["-S", "bob"], None), (["-S", "carol"], None),
    (["-S", "dave"], None), (["-S", "erin"], None), (["-S", "frank"], None),
    (["-S", "gina"], None), (["-S", "root"], None), (["--status", "daemon"], None),
    (["-S"], "alice"), (["-S", "bob"], "alice"), (["-S", "root"], "alice"),
    (["-l", "alice"], "alice"), (["-d", "alice"], "alice"), (["-n", "1", "alice"], "alice"),
    (["-a", "-S"], "alice"), (["-l"], "alice"), (["bob"], "alice"),
    (["-S", "nosuch"], None), (["-l", "nosuch"], None), (["-S", "alice"], 12345),
    (["-r", "nis", "alice"], None), (["-r", "files", "-S", "alice"], None),
    (["-S", "-k", "alice"], None), (["-l", "-S", "alice"], None), (["-l"], None),
    (["-a"], None), (["-a", "-S", "bob"], None), (["-S", "bob", "alice"], None),
    (["-x", "abc", "bob"], None), (["-x", "-2", "bob"], None), (["-Z"], None),
    (["--bogus"], None), (["-n"], None),
    (["-l", "alice"], None), (["-l", "alice"], None), (["-u", "alice"], None),
    (["-u", "alice"], None), (["--lock", "--unlock", "erin"], None),
    (["-u", "carol"], None), (["-l", "dave"], None), (["-u", "dave"], None),
    (["-u", "erin"], None), (["-d", "bob"], None), (["-e", "bob"], None),
    (["-n", "2", "-x", "40", "-w", "6", "-i", "7", "bob"], None),
    (["--mindays", "3", "--maxdays", "-1", "--warndays", "-1", "--inactive", "-1", "bob"],
     None),
    (["-q", "-n", "4", "bob"], None), (["-d", "-l", "frank"], None), (["-e", "gina"], None),
    (["-a", "-S"], None), (["--all", "--status"], None),
]


def cut_usage(err, exe):
    err = err.replace(exe + ":", "passwd:")      # getopt's messages name argv[0]
    i = err.find("Usage: ")
    return err if i < 0 else err[:i] + "Usage: ..."


def play(sb, exe):
    out = []
    for argv, user in SCENARIO:
        res = run(sb, [exe] + argv, user=user)
        out.append((argv, user, res.returncode, res.stdout, cut_usage(res.stderr, exe)))
        states = run(sb, [exe, "-S", "-a"])
        out.append(("state after", argv, states.stdout))
    return out


def test_output_matches_debian_passwd_byte_for_byte(sb, base):
    """Debian's passwd on a classic root, ours on a converted copy of the same accounts."""
    make_users(sb)
    install_classic_passwd(sb)
    classic = play(sb, CLASSIC_PASSWD)
    with sandbox.Sandbox(base, size="1g") as other:
        make_users(other)
        convert(other)
        ours = play(other, PASSWD)
    assert len(ours) == len(classic)
    for c, o in zip(classic, ours):
        assert o == c


def test_status_of_every_kind_of_account(conv):
    res = run(conv, [PASSWD, "-S", "-a"])
    assert res.returncode == 0, res
    lines = {l.split()[0]: l for l in res.stdout.splitlines()}
    assert re.fullmatch(r"alice P \d{4}-\d\d-\d\d 0 99999 7 -1", lines["alice"])
    assert lines["bob"] == "bob P 2024-01-02 1 30 5 3"
    assert lines["carol"].startswith("carol L ")
    assert lines["dave"].startswith("dave NP ")
    assert lines["erin"].startswith("erin L ")
    assert lines["frank"].startswith("frank P 1970-01-01 ")
    assert lines["gina"].startswith("gina L never ")
    assert res.stderr == ""
    # -A is the suite's spelling of -a
    assert run(conv, [PASSWD, "-A", "-S"]).stdout == res.stdout


# ---------------------------------------------------------------- root's operations

def test_lock_unlock_delete_expire_on_the_tree(conv):
    h = HASHES["alice"]
    assert run(conv, [PASSWD, "-l", "alice"]).stdout == "passwd: password changed.\n"
    assert hash_of(conv, "alice") == "!" + h
    run(conv, [PASSWD, "-l", "alice"])
    assert hash_of(conv, "alice") == "!" + h          # never "!!"
    run(conv, [PASSWD, "-u", "alice"])
    assert hash_of(conv, "alice") == h
    run(conv, [PASSWD, "-e", "alice"])
    assert shadow_line(conv, "alice") == h + ":0:\n"
    run(conv, [PASSWD, "-d", "alice"])
    assert shadow_line(conv, "alice") == ":0:\n"
    # the files keep the layout's owners and modes, and no temp file is left
    pw = conv.getpwnam("alice")
    auth = conv.getgrnam("hardened-shadow-auth")[1]
    st = conv.lstat("%s/alice/shadow" % TREE)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (pw.uid, auth, 0o640)
    assert temp_files(conv, "alice") == []


def test_unlock_refuses_an_empty_password_without_force(conv):
    before = shadow_line(conv, "carol")
    res = run(conv, [PASSWD, "-u", "carol"])
    assert res.returncode == 3
    assert res.stderr == ("passwd: unlocking the password would result in a passwordless "
                          "account.\nYou should set a password with usermod -p to unlock "
                          "the password of this account.\n")
    assert shadow_line(conv, "carol") == before
    res = run(conv, [PASSWD, "-u", "-f", "carol"])
    assert res.returncode == 0, res
    assert hash_of(conv, "carol") == ""
    assert run(conv, [PASSWD, "-S", "carol"]).stdout.startswith("carol NP ")
    # -f means nothing without -u
    assert run(conv, [PASSWD, "-f", "-l", "dave"]).returncode == 2


def test_aging_flags_write_the_root_owned_aging_file(conv):
    before = shadow_line(conv, "bob")
    res = run(conv, [PASSWD, "-n", "2", "-x", "40", "-w", "6", "-i", "7", "bob"])
    assert (res.returncode, res.stdout) == (0, "passwd: password changed.\n")
    assert aging_of(conv, "bob") == "2:40:6:7:-1:\n"
    assert shadow_line(conv, "bob") == before      # aging flags leave shadow alone
    res = run(conv, [PASSWD, "-q", "-x", "-1", "-i", "-1", "bob"])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert aging_of(conv, "bob") == "2:-1:6:-1:-1:\n"
    st = conv.lstat("%s/bob/aging" % TREE)
    auth = conv.getgrnam("hardened-shadow-auth")[1]
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, auth, 0o644)
    for bad in ("abc", "-2", "1e3", "+5", "07", "2147483648", ""):
        res = run(conv, [PASSWD, "-x", bad, "bob"])
        assert res.returncode == 6, bad
        assert res.stderr.startswith("passwd: invalid numeric argument '%s'\n" % bad)
    assert aging_of(conv, "bob") == "2:-1:6:-1:-1:\n"


def test_expire_makes_pam_force_a_change(conv):
    run(conv, [PASSWD, "-e", "alice"])
    assert shadow_line(conv, "alice").endswith(":0:\n")
    assert run(conv, [PASSWD, "-S", "alice"]).stdout.split()[2] == "1970-01-01"


def test_root_refuses_a_planted_symlink_to_etc_shadow(conv):
    decoy = "root:$y$j9T$decoy$decoydecoydecoydecoydecoydecoydecoydecoyd:19000:0:99999:7:::\n"
    conv.write("/etc/shadow", decoy, mode=0o640)
    pw = conv.getpwnam("alice")
    # alice (the directory's owner) replaces her shadow file by a symlink
    subverted(conv, "alice", "rm -f %s/alice/shadow && ln -s /etc/shadow %s/alice/shadow"
              % (TREE, TREE))
    for flags in (["-l"], ["-u"], ["-d"], ["-e"], ["-u", "-f"]):
        res = run(conv, [PASSWD] + flags + ["alice"])
        assert res.returncode == 3, res
        assert "cannot read /etc/hardened-shadow/alice/shadow" in res.stderr
    assert conv.read("/etc/shadow") == decoy
    assert os.path.islink(os.path.join(conv.root, TREE.lstrip("/"), "alice/shadow"))
    st = conv.lstat("/etc/shadow")
    assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o640)
    assert run(conv, [PASSWD, "-S", "alice"]).returncode == 3
    assert pw is not None


@pytest.mark.parametrize("kind", ["hardlink", "fifo", "foreign"])
def test_root_refuses_other_planted_files(conv, kind):
    d = "%s/alice" % TREE
    if kind == "hardlink":
        subverted(conv, "alice", "cp %s/shadow %s/copy && rm -f %s/shadow && "
                  "ln %s/copy %s/shadow" % (d, d, d, d, d))
    elif kind == "fifo":
        subverted(conv, "alice", "rm -f %s/shadow && mkfifo %s/shadow" % (d, d))
    else:
        conv.run(["chown", "bob", d + "/shadow"])
    res = run(conv, [PASSWD, "-l", "alice"], timeout=20)
    assert res.returncode == 3, res
    assert "cannot read /etc/hardened-shadow/alice/shadow" in res.stderr


def test_aging_refused_when_aging_is_not_root_owned(conv):
    d = "%s/alice" % TREE
    conv.run(["chown", "alice", d + "/aging"])
    before = conv.read(d + "/aging")
    res = run(conv, [PASSWD, "-x", "10", "alice"])
    assert res.returncode == 3
    assert "cannot read /etc/hardened-shadow/alice/aging" in res.stderr
    assert conv.read(d + "/aging") == before


def test_missing_user_directory_and_tree(conv):
    conv.run(["rm", "-rf", "%s/dave" % TREE])
    res = run(conv, [PASSWD, "-l", "dave"])
    assert res.returncode == 4
    assert "cannot open /etc/hardened-shadow/dave" in res.stderr


# ---------------------------------------------------------------- ordinary users

ROOT_ONLY = [["-l"], ["-u"], ["-d"], ["-e"], ["-n", "1"], ["-x", "1"], ["-w", "1"],
             ["-i", "1"], ["-u", "-f"]]


@pytest.mark.parametrize("flags", ROOT_ONLY, ids=lambda f: " ".join(f))
def test_user_refused_root_only_flags(conv, flags):
    before = (shadow_line(conv, "alice"), aging_of(conv, "alice"))
    res = run(conv, [PASSWD] + flags + ["alice"], user="alice")
    assert (res.returncode, res.stdout, res.stderr) == (1, "", "passwd: Permission denied.\n")
    assert (shadow_line(conv, "alice"), aging_of(conv, "alice")) == before


def test_user_refused_all_and_other_users(conv):
    res = run(conv, [PASSWD, "-a", "-S"], user="alice")
    assert (res.returncode, res.stderr) == (1, "passwd: Permission denied.\n")
    for argv in (["-S", "bob"], ["bob"], ["--stdin", "bob"], ["-k", "bob"], ["-S", "root"]):
        res = run(conv, [PASSWD] + argv, user="alice", input="x\n")
        assert res.returncode == 1, argv
        who = argv[-1]
        assert res.stderr == ("passwd: You may not view or modify password information "
                              "for %s.\n" % who)
    assert run(conv, [PASSWD, "-S"], user="alice").stdout.startswith("alice P ")


def test_identity_comes_from_the_real_uid_not_the_environment(conv):
    res = run(conv, [PASSWD, "-S"], user="alice", env={"USER": "bob", "LOGNAME": "bob"})
    assert res.stdout.startswith("alice ")
    res = run(conv, [PASSWD, "-S"], user=12345)
    assert (res.returncode, res.stderr) == (1, "passwd: Cannot determine your user name.\n")


def test_installed_setgid_not_setuid(conv):
    st = conv.lstat(PASSWD)
    tree_gid = conv.getgrnam("hardened-shadow")[1]
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, tree_gid, 0o2711)


def test_help_and_version(conv):
    res = run(conv, [PASSWD, "--help"], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: passwd [options] [LOGIN]\n")
    res = run(conv, [PASSWD, "--version"])
    assert res.returncode == 0 and res.stdout.startswith("passwd (hardened-shadow) ")
    assert run(conv, [PASSWD, "-R", "/mnt", "-S"]).returncode == 6


# ---------------------------------------------------------------- PAM, classic pam_unix

def test_stdin_and_pty_through_pam_unix_on_a_classic_root(sb):
    """Our PAM conversations against Debian's unchanged stack (pam_unix, /etc/shadow)."""
    make_users(sb)

    def classic_hash(name):
        return [l for l in sb.read("/etc/shadow").splitlines()
                if l.startswith(name + ":")][0].split(":")[1]

    res = run(sb, [PASSWD, "--stdin", "alice"], input="Stdin-new-pw-1\n")
    assert res.returncode == 0, res
    assert res.stderr == "passwd: password updated successfully\n"
    assert verify("Stdin-new-pw-1", classic_hash("alice"))
    # no trailing newline: still one line
    assert run(sb, [PASSWD, "-s", "alice"], input="Stdin-new-pw-2").returncode == 0
    assert verify("Stdin-new-pw-2", classic_hash("alice"))
    # -q: no message
    res = run(sb, [PASSWD, "-q", "--stdin", "alice"], input="Stdin-new-pw-3\n")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    status, out = sb.pty_run([PASSWD, "bob"], [("New password: ", "Pty-new-pw-1\n"),
                                              ("Retype new password: ", "Pty-new-pw-1\n")])
    assert status == 0, out
    assert "passwd: password updated successfully" in out
    assert "Pty-new-pw-1" not in out                 # no echo
    assert verify("Pty-new-pw-1", classic_hash("bob"))
    status, out = sb.pty_run([PASSWD, "bob"], [("New password: ", "Pty-new-pw-2\n"),
                                              ("Retype new password: ", "Pty-other-2\n")])
    assert status == 10
    assert "passwd: password unchanged" in out
    assert verify("Pty-new-pw-1", classic_hash("bob"))


def test_bad_stdin_is_refused_before_pam(sb):
    make_users(sb)
    before = sb.read("/etc/shadow")
    big = b"A" * (1 << 20) + b"\n"
    res = run(sb, [PASSWD, "--stdin", "alice"], input=big)
    assert res.returncode == 3
    assert res.stderr == b"passwd: the password on standard input is longer than 512 bytes\n"
    res = run(sb, [PASSWD, "--stdin", "alice"], input=b"A" * 513)
    assert res.returncode == 3
    res = run(sb, [PASSWD, "--stdin", "alice"], input=b"ab\0cd\n")
    assert res.returncode == 3 and b"NUL" in res.stderr
    for script in ("exec <&- ; %s --stdin alice", "%s --stdin alice </dev/null",
                   "exec <&- ; %s alice", "%s alice </dev/null"):
        res = run(sb, ["/bin/sh", "-c", script % PASSWD])
        assert res.returncode in (3, 10), (script, res)
        assert "password updated" not in res.stderr
    assert sb.read("/etc/shadow") == before
    # 512 bytes pass our reader (PAM's own limit, PAM_MAX_RESP_SIZE, then decides:
    # pam_unix takes at most 511), 511 bytes are a password like any other
    long_pw = "".join(chr(33 + (i * 7) % 90) for i in range(512))
    res = run(sb, [PASSWD, "--stdin", "alice"], input=long_pw + "\n")
    assert "longer than" not in res.stderr, res
    res = run(sb, [PASSWD, "--stdin", "alice"], input=long_pw[:511] + "\n")
    assert res.returncode == 0, res


def test_stdin_with_incompatible_flags(conv):
    assert run(conv, [PASSWD, "--stdin", "-S", "alice"]).returncode == 2
    assert run(conv, [PASSWD, "--stdin", "-l", "alice"]).returncode == 2


# ---------------------------------------------------------------- PAM, our module

def _watch_credentials(sb, found, stop):
    """Collect the Uid/Gid/CapEff lines of every passwd process inside sb."""
    root = os.path.realpath(sb.root)
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/root" % pid) != root:
                    continue
                with open("/proc/%s/status" % pid) as f:
                    st = dict(l.split(":\t", 1) for l in f.read().splitlines() if ":\t" in l)
            except OSError:
                continue
            if st.get("Name") in ("passwd", "password-helpe", "password-helper"):
                found[pid] = (st["Name"], st["Uid"].split(), st["Gid"].split(),
                              st["CapEff"].strip())
        time.sleep(0.005)


def test_user_changes_own_password_on_a_pty_without_root(mod):
    sb = mod
    pw = sb.getpwnam("alice")
    found, stop = {}, threading.Event()
    watcher = threading.Thread(target=_watch_credentials, args=(sb, found, stop))
    watcher.start()
    try:
        status, out = sb.pty_run([PASSWD], [(r"Current password: ", "alice-old-1\n"),
                                            (r"New password: ", "Tulip-new-pw-9\n"),
                                            (r"Retype new password: ", "Tulip-new-pw-9\n")],
                                 user="alice")
    finally:
        stop.set()
        watcher.join()
    assert status == 0, out
    assert "passwd: password updated successfully" in out
    assert verify("Tulip-new-pw-9", hash_of(sb, "alice"))
    # no root anywhere: every passwd (and helper) process ran with alice's uids and no
    # capabilities, but passwd's CAP_AUDIT_WRITE (its file capability, for libpam's
    # AUDIT_USER_CHAUTHTOK; test_audit_trail.py) during the PAM call
    assert found, "never saw the passwd process"
    for name, uids, gids, capeff in found.values():
        assert uids == [str(pw.uid)] * 4, (name, uids)
        allowed = 1 << 29 if name == "passwd" else 0
        assert int(capeff, 16) & ~allowed == 0, (name, capeff)
        assert gids[0] == str(pw.gid)
    # the file is still alice's, in the auth group, 0640 (ls -l)
    ls = sb.run(["ls", "-l", "%s/alice/shadow" % TREE]).stdout.split()
    assert ls[0] == "-rw-r-----" and ls[2:4] == ["alice", "hardened-shadow-auth"], ls
    assert temp_files(sb, "alice") == []
    # su from another user takes the new password and refuses the old one
    status, out = sb.pty_run([SU, "alice", "-c", "echo I-am-$(id -un)"],
                             [("Password:", "Tulip-new-pw-9\n")], user="bob")
    assert status == 0 and "I-am-alice" in out, out
    status, out = sb.pty_run([SU, "alice", "-c", "echo I-am-$(id -un)"],
                             [("Password:", "alice-old-1\n")], user="bob")
    assert status != 0 and "I-am-alice" not in out


def test_user_changes_own_password_with_stdin(mod):
    res = run(mod, [PASSWD, "--stdin"], user="alice", input="alice-old-1\nTulip-stdin-7\n")
    assert res.returncode == 0, res
    assert verify("Tulip-stdin-7", hash_of(mod, "alice"))
    # a wrong current password changes nothing
    res = run(mod, [PASSWD, "--stdin"], user="alice", input="wrong-one\nTulip-stdin-8\n")
    assert res.returncode == 10
    assert verify("Tulip-stdin-7", hash_of(mod, "alice"))
    # one line: there is a current password to prove, so nothing is changed
    res = run(mod, [PASSWD, "--stdin"], user="alice", input="Tulip-stdin-8\n")
    assert res.returncode == 10
    assert verify("Tulip-stdin-7", hash_of(mod, "alice"))


def test_wrong_current_password_three_times(mod):
    before = shadow_line(mod, "alice")
    for attempt in range(3):
        status, out = mod.pty_run([PASSWD], [(r"Current password: ", "wrong-%d\n" % attempt)],
                                  user="alice")
        assert status == 10, out
        assert "passwd: password unchanged" in out
        assert "New password" not in out
        assert shadow_line(mod, "alice") == before
    status, out = mod.pty_run([PASSWD], [(r"Current password: ", "alice-old-1\n"),
                                         (r"New password: ", "Tulip-after-3\n"),
                                         (r"Retype new password: ", "Tulip-after-3\n")],
                              user="alice")
    assert status == 0, out


def test_root_changes_password_and_keep_tokens(mod):
    status, out = mod.pty_run([PASSWD, "bob"], [("New password: ", "Maple-root-set-1\n"),
                                               ("Retype new password: ", "Maple-root-set-1\n")])
    assert status == 0, out
    assert verify("Maple-root-set-1", hash_of(mod, "bob"))
    res = run(mod, [PASSWD, "--stdin", "bob"], input="Maple-root-set-2\n")
    assert res.returncode == 0, res
    assert verify("Maple-root-set-2", hash_of(mod, "bob"))
    # -k: frank must change (lstchg 0), so he is asked for his current password
    res = run(mod, [PASSWD, "-k", "--stdin"], user="frank",
              input="frank-old-1\nCedar-new-pw-1\n")
    assert res.returncode == 0, res
    assert verify("Cedar-new-pw-1", hash_of(mod, "frank"))


def test_locked_user_cannot_change_password(mod):
    run(mod, [PASSWD, "-l", "alice"])
    before = shadow_line(mod, "alice")
    res = run(mod, [PASSWD, "--stdin"], user="alice", input="alice-old-1\nTulip-x-1\n")
    assert res.returncode == 10
    assert shadow_line(mod, "alice") == before


def _spawn(sb, argv, user, data=None):
    cmd, _ = sb._wrap(argv, user, "/")
    env = sandbox._clean_env(sb.getpwnam(user) if user else None)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    if data is not None:
        proc.stdin.write(data.encode())
    proc.stdin.close()
    return proc


def _kill_after(sb, proc, delay):
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    sb.syslog(clear=True)   # keep /dev/log's queue drained, or senders block


def assert_strays_are_rare_and_swept(stray, kills):
    """A write names its O_TMPFILE inode only for the two system calls between linkat and
    rename (lib/io/replace.c), so a kill there, and only there, leaves one temporary
    name, which the next holder of the user's lock removes (the callers check that with
    a last, whole run; a run killed before it took the lock leaves it in place, so the
    same name may be seen after several kills).  More names than that (a named temporary
    for the whole write, say) is a regression.  stray: (kill number, names) after each
    kill that left any."""
    names = {n for _, left in stray for n in left}
    assert len(names) <= max(2, kills // 20), stray
    # the lock's sweep runs before the write: never two names at once
    assert all(len(left) == 1 for _, left in stray), stray


def test_sigkill_at_random_points_never_tears_the_file(mod):
    sb = mod
    rnd = random.Random(3)
    passwords = ["alice-old-1"]
    # how long one whole change takes here, so the kills cover all of it
    t0 = time.monotonic()
    res = run(sb, [PASSWD, "--stdin"], user="alice", input="alice-old-1\nKill-test-start\n")
    span = time.monotonic() - t0
    assert res.returncode == 0, res
    passwords.append("Kill-test-start")
    outcomes = {"old": 0, "new": 0}
    stray = []
    for i in range(40):
        new = "Kill-test-%02d" % i
        proc = _spawn(sb, [PASSWD, "--stdin"], "alice", "%s\n%s\n" % (passwords[-1], new))
        _kill_after(sb, proc, rnd.uniform(0, span * 1.2))
        line = shadow_line(sb, "alice")
        assert re.fullmatch(r"[^:\n]+:\d+:\n", line), line
        h = line.split(":")[0]
        if verify(new, h):
            passwords.append(new)
            outcomes["new"] += 1
        else:
            assert verify(passwords[-1], h), (i, line)
            outcomes["old"] += 1
        stray += [(i, temp_files(sb, "alice"))] if temp_files(sb, "alice") else []
    # the kills landed both before and after the commit
    assert outcomes["old"] > 0 and outcomes["new"] > 0, outcomes
    assert_strays_are_rare_and_swept(stray, 40)
    res = run(sb, [PASSWD, "--stdin"], user="alice", input="%s\nAfter-kill-1\n" % passwords[-1])
    assert res.returncode == 0, res
    assert temp_files(sb, "alice") == []


def test_sigkill_during_root_lock_unlock(conv):
    """No PAM involved: root's direct writes, killed at random points."""
    sb = conv
    rnd = random.Random(5)
    h = HASHES["alice"]
    t0 = time.monotonic()
    run(sb, [PASSWD, "-l", "alice"])
    run(sb, [PASSWD, "-u", "alice"])
    span = (time.monotonic() - t0) / 2
    stray = []
    for i in range(60):
        proc = _spawn(sb, [PASSWD, "-l" if i % 2 == 0 else "-u", "alice"], None)
        _kill_after(sb, proc, rnd.uniform(0, span * 1.2))
        assert hash_of(sb, "alice") in (h, "!" + h), i
        assert shadow_line(sb, "alice").endswith(":\n")
        stray += [(i, temp_files(sb, "alice"))] if temp_files(sb, "alice") else []
    assert_strays_are_rare_and_swept(stray, 60)
    run(sb, [PASSWD, "-u", "alice"])
    assert temp_files(sb, "alice") == []


def test_concurrent_password_changes_and_aging_writes(mod):
    """alice changes her password again and again while root rewrites her aging (as chage
    does) and locks/unlocks bob: no write is lost, no file torn."""
    sb = mod
    errors = []

    def user_loop():
        cur = "alice-old-1"
        for i in range(8):
            new = "Conc-pw-%02d" % i
            res = run(sb, [PASSWD, "--stdin"], user="alice", input="%s\n%s\n" % (cur, new))
            if res.returncode != 0:
                errors.append(("passwd", i, res.stdout + res.stderr))
                return
            cur = new
        user_loop.final = cur

    def root_loop():
        for i in range(30):
            # -n stays 0: a minimum age would (rightly) stop alice's next change
            res = run(sb, [PASSWD, "-n", "0", "-x", str(100 + i), "-w", str(i),
                           "-i", str(i % 5), "alice"])
            if res.returncode != 0:
                errors.append(("aging", i, res.stderr))
                return

    threads = [threading.Thread(target=user_loop), threading.Thread(target=root_loop)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert verify(user_loop.final, hash_of(sb, "alice"))
    assert aging_of(sb, "alice") == "0:129:29:4:-1:\n"
    assert temp_files(sb, "alice") == []
