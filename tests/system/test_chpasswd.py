"""chpasswd in a throwaway root: batches on the per-user tree with -e, -c METHOD -s ROUNDS
and the PAM path (service "chpasswd" on pam_hardened_shadow.so), all or nothing on any bad
line (with the line number in the message), hostile input (1 MiB line, NUL byte, closed
stdin) and refusal for non-root callers."""

import ctypes
import os
import re
import stat

import pytest

import grouptools
import sandbox
from grouptools import run, verify

CHPASSWD = "/usr/sbin/chpasswd"
TREE = "/etc/hardened-shadow"
USERS = ["alice", "bob", "carol"]

def shadow_line(sb, name):
    return sb.read("%s/%s/shadow" % (TREE, name))


def hash_of(sb, name):
    return shadow_line(sb, name).split(":")[0]


def snapshot(sb):
    return {n: shadow_line(sb, n) for n in USERS}


@pytest.fixture
def tree(sb):
    for name in USERS:
        sb.add_classic_user(name, password=name + "-old-1")
    sb.add_classic_user("nodir", password="nodir-old-1")
    sb.use_hardened_tree()
    # a user in /etc/passwd without a directory in the tree
    sb.run(["/bin/rm", "-rf", TREE + "/nodir"])
    return sb


def test_encrypted_batch(tree):
    hashes = {n: sandbox._crypt(n + "-new-1") for n in USERS}
    hashes["carol"] = "!" + hashes["carol"]      # a locked hash is stored as given
    res = run(tree, [CHPASSWD, "-e"],
              input="".join("%s:%s\n" % kv for kv in hashes.items()))
    assert res.returncode == 0, res
    today = os.popen("echo $(( $(date +%s) / 86400 ))").read().strip()
    for n in USERS:
        assert shadow_line(tree, n) == "%s:%s:\n" % (hashes[n], today)
        st = tree.lstat("%s/%s/shadow" % (TREE, n))
        assert st.st_uid == tree.getpwnam(n).uid and (st.st_mode & 0o7777) == 0o640
    assert verify("alice-new-1", hash_of(tree, "alice"))
    # -c NONE stores as given too, with the same checks
    h = sandbox._crypt("alice-new-2")
    assert run(tree, [CHPASSWD, "-c", "NONE"], input="alice:%s\n" % h).returncode == 0
    assert hash_of(tree, "alice") == h


@pytest.mark.parametrize("argv,prefix,cost", [
    (["-c", "SHA512", "-s", "6000"], "$6$rounds=6000$", None),
    (["--crypt-method", "sha512", "--sha-rounds", "12345"], "$6$rounds=12345$", None),
    (["-c", "YESCRYPT", "-s", "7"], "$y$", 7),
    (["-c", "YESCRYPT"], "$y$", None),
])
def test_hash_methods(tree, argv, prefix, cost):
    res = run(tree, [CHPASSWD] + argv,
              input="".join("%s:%s-new-1\n" % (n, n) for n in USERS))
    assert res.returncode == 0, res
    for n in USERS:
        h = hash_of(tree, n)
        assert h.startswith(prefix), h
        assert verify(n + "-new-1", h)
        assert not verify(n + "-old-1", h)
    if cost:
        # the cost parameters libxcrypt itself encodes for cost factor 7
        lib = ctypes.CDLL("libcrypt.so.1")
        lib.crypt_gensalt.restype = ctypes.c_char_p
        lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p,
                                      ctypes.c_int]
        params = lib.crypt_gensalt(b"$y$", 7, None, 0).decode().split("$")[2]
        assert hash_of(tree, "alice").split("$")[2] == params


def test_bad_line_in_the_middle_writes_nothing(tree):
    before = snapshot(tree)
    res = run(tree, [CHPASSWD, "-c", "SHA512"],
              input="alice:pw-a-1\nbob-no-colon\ncarol:pw-c-1\n")
    assert res.returncode == 1
    assert "chpasswd: line 2: missing new password\n" in res.stderr
    assert "chpasswd: error detected, changes ignored" in res.stderr
    assert snapshot(tree) == before


@pytest.mark.parametrize("lines,lineno,message", [
    ("alice:a1\nbob:b1\nghost:g1\n", 3, "user 'ghost' does not exist"),
    ("alice:a1\nnodir:n1\n", 2, "user 'nodir' has no directory /etc/hardened-shadow/nodir"),
    ("alice:a1\n:x1\n", 2, "missing user name"),
    ("alice:a1\nbob:b1\nalice:a2\n", 3, "user 'alice' already appears on line 1"),
    ("alice:a1\n../etc:x\n", 2, "invalid user name"),
    ("alice:a1\nbob:\n", 2, "user 'bob': empty password"),
    ("alice:a1\n\n", 2, "missing new password"),
    ("alice:a1\nbob:" + "x" * 513 + "\n", 2, "longer than 512 bytes"),
    ("alice:a1\nbob:b" + "x" * 5000 + "\ncarol:c1\n", 2, "line too long"),
    ("alice:a1\nbob:b\0b\n", 2, "NUL byte"),
])
def test_each_kind_of_bad_line(tree, lines, lineno, message):
    before = snapshot(tree)
    res = run(tree, [CHPASSWD, "-c", "SHA512", "-s", "1000"], input=lines.encode())
    assert res.returncode == 1, res
    err = res.stderr.decode()
    assert err.startswith("chpasswd: line %d: " % lineno) and message in err, err
    assert snapshot(tree) == before


@pytest.mark.parametrize("bad", [
    "clear-text-password",            # forgot to hash
    "$6$salt$bad:field",              # ':' would split the file
    "$6$abc\x01def",                  # control character
    "",                               # would remove the password
    "$9$unknown$method",
    "*LK*",
])
def test_encrypted_refuses_what_is_not_a_hash(tree, bad):
    before = snapshot(tree)
    good = sandbox._crypt("bob-new-1")
    res = run(tree, [CHPASSWD, "-e"], input="bob:%s\nalice:%s\n" % (good, bad))
    assert res.returncode == 1, res
    assert res.stderr.startswith("chpasswd: line 2: user 'alice': "), res.stderr
    assert snapshot(tree) == before


def test_one_mib_line_and_hostile_stdin(tree):
    before = snapshot(tree)
    res = run(tree, [CHPASSWD, "-c", "SHA512"], input=b"alice:" + b"A" * (1 << 20) + b"\n")
    assert res.returncode == 1
    assert res.stderr.decode().startswith("chpasswd: line 1: line too long\n")
    # a last line without newline still counts
    res = run(tree, [CHPASSWD, "-c", "SHA512"], input=b"bob:" + b"B" * (1 << 20))
    assert res.returncode == 1 and b"line 1: line too long" in res.stderr
    # closed or empty stdin: nothing to do, nothing written
    for script in ("exec <&- ; %s -c SHA512", "%s -c SHA512 </dev/null", "exec <&- ; %s"):
        res = run(tree, ["/bin/sh", "-c", script % CHPASSWD])
        assert res.returncode == 0, (script, res)
    assert snapshot(tree) == before


def test_non_root_refused(tree):
    before = snapshot(tree)
    res = run(tree, [CHPASSWD, "-c", "SHA512"], input="alice:x-new-1\n", user="alice")
    assert res.returncode == 1
    assert res.stderr == "chpasswd: Permission denied.\n"
    assert snapshot(tree) == before
    st = tree.lstat(CHPASSWD)
    assert (st.st_mode & 0o7777) == 0o755 and st.st_uid == 0


@pytest.mark.parametrize("argv,message", [
    (["-e", "-c", "SHA512"], "chpasswd: the -c, -e, and -m flags are exclusive\n"),
    (["-m", "-c", "SHA512"], "chpasswd: the -c, -e, and -m flags are exclusive\n"),
    (["-s", "5000"], "chpasswd: -s flag is only allowed with the -c flag\n"),
    (["-c", "SHA512", "-s", "abc"], "chpasswd: invalid numeric argument 'abc'\n"),
    (["-c", "SHA512", "-s", "-5"], "chpasswd: invalid numeric argument '-5'\n"),
    (["-c", "FOO"], "chpasswd: unsupported crypt method: FOO\n"),
    (["-c", "DES"], "chpasswd: crypt method DES is not supported"),
    (["-R", "/x"], "chpasswd: option --root is not supported"),
    (["-P", "/x"], "chpasswd: option --prefix is not supported"),
    (["-Z"], "invalid option"),
    (["extra"], "Usage: chpasswd"),
])
def test_usage_errors(tree, argv, message):
    before = snapshot(tree)
    res = run(tree, [CHPASSWD] + argv, input="alice:x-new-1\n")
    assert res.returncode == 2, res
    assert message in res.stderr
    assert snapshot(tree) == before


def test_help_and_version(tree):
    res = run(tree, [CHPASSWD, "-h"])
    assert res.returncode == 0 and res.stdout.startswith("Usage: chpasswd [options]")
    res = run(tree, [CHPASSWD, "--version"])
    assert res.returncode == 0 and "hardened-shadow" in res.stdout


def test_planted_symlink_is_replaced_not_followed(tree):
    """alice replaces her shadow file with a symlink to /etc/passwd: the rename replaces
    the link, /etc/passwd is untouched."""
    passwd = tree.read("/etc/passwd")
    d = "%s/alice" % TREE
    # (as root: alice cannot reach the tree without the setgid tools, but she owns her
    # directory and could do the same through one of them)
    tree.run(["/bin/sh", "-c", "cd %s && rm shadow && ln -s /etc/passwd shadow && "
              "chown -h alice shadow" % d])
    res = run(tree, [CHPASSWD, "-c", "SHA512"], input="alice:alice-new-9\n")
    assert res.returncode == 0, res
    assert tree.read("/etc/passwd") == passwd
    assert verify("alice-new-9", hash_of(tree, "alice"))


# ---------------------------------------------------------------- the PAM path

@pytest.fixture
def pam(tree):
    tree.use_pwquality()
    tree.use_pam_module()
    # Debian's pam_pwquality refuses every password when cracklib's dictionary is not
    # installed; turn only its dictionary check off, in the root.
    if not tree.exists("/var/cache/cracklib/cracklib_dict.pwd"):
        conf = "/etc/security/pwquality.conf"
        text = tree.read(conf) if tree.exists(conf) else ""
        tree.write(conf, text + "dictcheck = 0\n")
    return tree


def test_pam_path_sets_every_password(pam):
    pws = {n: "Zq7%s-Long-Pw-91x" % n for n in USERS}
    res = run(pam, [CHPASSWD], input="".join("%s:%s\n" % kv for kv in pws.items()))
    if res.returncode != 0 and "Authentication token manipulation" in res.stderr:
        pytest.skip("BLOCKED: pam_hardened_shadow.so cannot change passwords: %s"
                    % res.stderr)
    assert res.returncode == 0, res
    for n, pw in pws.items():
        assert verify(pw, hash_of(pam, n)), n


def test_pam_path_validates_everything_first(pam):
    before = snapshot(pam)
    res = run(pam, [CHPASSWD], input="alice:Zq7-Long-Pw-91x\nghost:Zq7-Long-Pw-92x\n")
    assert res.returncode == 1
    assert "chpasswd: line 2: user 'ghost' does not exist\n" in res.stderr
    assert snapshot(pam) == before


def test_pam_refusal_names_the_line(pam):
    """pwquality refuses a too-short password for bob: alice is changed (PAM changes
    cannot be undone), chpasswd stops there, carol is not processed, bob is named with
    his line number and the exit status is 1.  (Root is only warned by pwquality unless
    enforce_for_root.)"""
    conf = "/etc/security/pwquality.conf"
    pam.write(conf, (pam.read(conf) if pam.exists(conf) else "") + "enforce_for_root\n")
    res = run(pam, [CHPASSWD],
              input="alice:Zq7a-Long-Pw-91x\nbob:ab\ncarol:Zq7c-Long-Pw-91x\n")
    assert res.returncode == 1, res
    assert "chpasswd: line 2: user 'bob':" in res.stderr
    assert "chpasswd: stopped at line 2: the passwords on the lines before it were " \
        "changed" in res.stderr
    assert "chpasswd: changed: line 1: user 'alice'\n" in res.stderr
    assert verify("Zq7a-Long-Pw-91x", hash_of(pam, "alice"))
    assert verify("bob-old-1", hash_of(pam, "bob"))
    assert verify("carol-old-1", hash_of(pam, "carol"))


def test_pam_prompts_told_apart_by_whole_words(pam):
    """A hidden prompt is refused as a request for the current password only when it
    says "current" or "old" as a word: a module's authtok_type=Bold asks "New Bold
    password: " and "Retype new Bold password: ", new-password prompts that chpasswd
    answers (it refused them, for the "old" in "Bold"); a prompt that names the current
    password as a word (authtok_type=current makes "New current password: ") is still
    refused, and nothing is changed."""
    pam.write("/etc/pam.d/chpasswd",
              "password required pam_hardened_shadow.so authtok_type=Bold\n")
    res = run(pam, [CHPASSWD], input="alice:Zq7a-Long-Pw-91x\nbob:Zq7b-Long-Pw-91x\n")
    assert res.returncode == 0, res
    assert verify("Zq7a-Long-Pw-91x", hash_of(pam, "alice"))
    assert verify("Zq7b-Long-Pw-91x", hash_of(pam, "bob"))
    pam.write("/etc/pam.d/chpasswd",
              "password required pam_hardened_shadow.so authtok_type=current\n")
    res = run(pam, [CHPASSWD], input="carol:Zq7c-Long-Pw-91x\n")
    assert res.returncode == 1, res
    assert "chpasswd: line 1: PAM asked for the current password of user 'carol'" \
        in res.stderr
    assert verify("carol-old-1", hash_of(pam, "carol"))


def test_pam_stack_failing_for_the_third_user(pam):
    """A PAM stack that refuses carol: alice and bob are changed and listed, carol and
    dave are not touched."""
    pam.run(["/usr/sbin/useradd", "dave"])
    pam.run([CHPASSWD, "-e"], input="dave:%s\n" % sandbox._crypt("dave-old-1"))
    pam.write("/etc/pam.d/chpasswd",
              "password requisite pam_succeed_if.so quiet user notin carol\n"
              "@include common-password\n")
    pws = {n: "Zq7%s-Long-Pw-91x" % n for n in USERS + ["dave"]}
    res = run(pam, [CHPASSWD], input="".join("%s:%s\n" % kv for kv in pws.items()))
    assert res.returncode == 1, res
    assert "chpasswd: line 3: user 'carol': " in res.stderr
    assert "chpasswd: stopped at line 3" in res.stderr
    assert "chpasswd: changed: line 1: user 'alice'\nchpasswd: changed: line 2: user " \
        "'bob'\n" in res.stderr
    assert verify(pws["alice"], hash_of(pam, "alice"))
    assert verify(pws["bob"], hash_of(pam, "bob"))
    assert verify("carol-old-1", hash_of(pam, "carol"))
    assert verify("dave-old-1", hash_of(pam, "dave"))


def test_pam_path_holds_back_interrupts_until_the_batch_is_over(pam):
    """A PAM module (pam_exec, after the password is written) sends chpasswd SIGINT and
    SIGTERM once alice is changed: both wait until bob is changed too, then SIGINT ends
    chpasswd.  Only SIGINT, SIGTERM, SIGHUP and SIGQUIT are held back: the helper the
    module runs (which inherits the mask) still gets SIGCHLD and SIGALRM."""
    hook = "/usr/local/sbin/hs-test-interrupt"
    pam.write(hook, "#!/bin/sh\n"
              "[ \"$PAM_USER\" = alice ] || exit 0\n"
              "grep '^SigBlk' /proc/$PPID/status > /tmp/sigblk\n"
              "grep '^SigBlk' /proc/self/status >> /tmp/sigblk\n"
              "kill -INT $PPID; kill -TERM $PPID\n", mode=0o755)
    pam.write("/etc/pam.d/chpasswd", "@include common-password\n"
              "password optional pam_exec.so quiet %s\n" % hook)
    pws = {n: "Zq7%s-Long-Pw-91x" % n for n in USERS}
    res = run(pam, [CHPASSWD], input="".join("%s:%s\n" % kv for kv in pws.items()))
    assert res.returncode == -2, res
    for n, pw in pws.items():
        assert verify(pw, hash_of(pam, n)), n
    masks = [int(l.split()[1], 16) for l in pam.read("/tmp/sigblk").splitlines()]
    held = sum(1 << (s - 1) for s in (1, 2, 3, 15))        # SIGHUP, SIGINT, SIGQUIT, SIGTERM
    assert masks[0] & held == held, masks
    assert masks[1] & (1 << (17 - 1) | 1 << (14 - 1)) == 0, masks  # SIGCHLD, SIGALRM


# ---------------------------------------------------------------- all or nothing


def test_write_failure_in_the_middle_is_undone(tree):
    """bob's directory is read-only (a read-only bind mount: root's writes fail there):
    alice, written before him, gets her previous shadow file back byte for byte; carol,
    after him, is never touched."""
    before = snapshot(tree)
    d = tree.root + TREE + "/bob"
    with grouptools.bind_mounted(d, read_only=True):
        res = run(tree, [CHPASSWD, "-c", "SHA512", "-s", "1000"],
                  input="alice:a-new-1\nbob:b-new-1\ncarol:c-new-1\n")
    assert res.returncode == 1, res
    assert "chpasswd: line 2: cannot write /etc/hardened-shadow/bob/shadow: " in res.stderr
    assert res.stderr.endswith("chpasswd: error detected at line 2, changes undone: no "
                               "password was changed\n"), res.stderr
    assert snapshot(tree) == before


def test_planted_fifo_is_replaced_and_undone_as_locked(tree):
    """carol's shadow file is a FIFO (never read, never blocks): it is replaced like any
    hostile file; when bob's write then fails, alice gets her file back and carol a
    locked hash -- a FIFO let nobody in, and neither does "!"."""
    before = snapshot(tree)
    path = "%s/carol/shadow" % TREE
    tree.run(["/bin/sh", "-c", "rm %s && mkfifo -m 0640 %s && chown carol %s" %
              (path, path, path)])
    d = tree.root + TREE + "/bob"
    with grouptools.bind_mounted(d, read_only=True):
        res = run(tree, [CHPASSWD, "-c", "SHA512", "-s", "1000"],
                  input="alice:a-new-1\ncarol:c-new-1\nbob:b-new-1\n", timeout=20)
    assert res.returncode == 1, res
    assert "changes undone" in res.stderr
    assert shadow_line(tree, "alice") == before["alice"]
    assert shadow_line(tree, "bob") == before["bob"]
    assert shadow_line(tree, "carol") == "!::\n"
    st = tree.lstat(path)
    assert stat.S_ISREG(st.st_mode) and st.st_uid == tree.getpwnam("carol").uid


# ---------------------------------------------------------------- legacy methods


def test_legacy_methods_need_the_opt_in(tree):
    """MD5 and SHA256 verify only where the PAM module has allow_legacy, so chpasswd
    writes them only with --allow-legacy (the module's rule, lib/auth/hash.h)."""
    before = snapshot(tree)
    md5 = sandbox._crypt("alice-new-5", "$1$")
    for argv, inp, message in (
            (["-c", "MD5"], "alice:x-1\n", "crypt method MD5 is legacy"),
            (["-m"], "alice:x-1\n", "give --allow-legacy to write them anyway"),
            (["-c", "SHA256", "-s", "5000"], "alice:x-1\n", "crypt method SHA256 is legacy"),
            (["-e"], "alice:%s\n" % md5, "line 1: user 'alice': the hash uses a legacy")):
        res = run(tree, [CHPASSWD] + argv, input=inp)
        assert res.returncode in (1, 2) and message in res.stderr, (argv, res)
    assert snapshot(tree) == before
    res = run(tree, [CHPASSWD, "-e", "--allow-legacy"], input="alice:%s\n" % md5)
    assert res.returncode == 0 and res.stderr == "", res
    assert hash_of(tree, "alice") == md5
    res = run(tree, [CHPASSWD, "-c", "MD5", "--allow-legacy"], input="bob:bob-new-5\n")
    assert res.returncode == 0, res
    assert hash_of(tree, "bob").startswith("$1$") and verify("bob-new-5", hash_of(tree, "bob"))


@pytest.mark.parametrize("options,ok", [("md5", False), ("md5 allow_legacy", True)])
def test_pam_module_follows_the_same_rule(tree, options, ok):
    """The PAM path agrees: the module writes md5 only with allow_legacy."""
    tree.use_pam_module({"password": options})
    res = run(tree, [CHPASSWD], input="alice:Zq7a-Long-Pw-91x\n")
    assert (res.returncode == 0) == ok, res
    h = hash_of(tree, "alice")
    assert h.startswith("$1$") == ok and verify("alice-old-1" if not ok else
                                                "Zq7a-Long-Pw-91x", h)


def test_progress_only_on_a_terminal(tree):
    """On a terminal chpasswd says how many passwords it has hashed ("\\rchpasswd: N/M
    passwords"; slow hashes make it appear) and erases the line; through pipes the same
    batch prints nothing at all."""
    argv = [CHPASSWD, "-c", "SHA512", "-s", "3000000"]
    batch = "".join("%s:%s-new-1\n" % (n, n) for n in USERS)
    tree.write("/root/batch", batch, mode=0o600)
    status, out = tree.pty_run(["/bin/sh", "-c", " ".join(argv) + " </root/batch"], [],
                               timeout=120)
    assert status == 0, out
    assert re.search(r"\rchpasswd: [123]/3 passwords", out), out
    assert re.fullmatch(r"(\rchpasswd: [123]/3 passwords)+\r\x1b\[K", out), out
    res = run(tree, argv, input=batch)
    assert res.returncode == 0 and res.stdout == "" and res.stderr == "", res
