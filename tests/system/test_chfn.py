"""chfn in a throwaway root: every option as root, the prompt on a pty, each forbidden
character and C1 controls refused with /etc/passwd unchanged byte for byte, overlong
fields, unknown user, the other lines kept byte for byte, the /etc/passwd- backup, owner
and mode, and a concurrent holder of /etc/passwd.lock.  Who may use it depends on the
build: the default build refuses every non-root caller; a -Dsetuid_chfn=true build
(chfn-setuid.c installed 4755 as chfn) lets a user change their own entry after PAM,
within CHFN_RESTRICT.  Every build makes that program too (src/admin/chfn-setuid-test), and
the setuid tests install it in place of the default one.  The default build's tests are
skipped in a setuid build."""

import os
import stat
import subprocess
import threading
import time

import pytest

from ptyproc import write_blocked

CHFN = "/usr/bin/chfn"
# shadow-utils' own usermod, copied into every root by the harness
USERMOD = "/usr/libexec/hs-test/shadow-utils/usermod"


@pytest.fixture
def users(sb):
    sb.add_classic_user("alice", password="alice-pw-1", comment="Alice Liddell,12,555-1,555-2")
    sb.add_classic_user("bob", password="bob-pw-1", comment="Bob")
    return sb


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def passwd_line(sb, name):
    return [l for l in sb.read("/etc/passwd").splitlines() if l.startswith(name + ":")][0]


def gecos(sb, name):
    return passwd_line(sb, name).split(":")[4]


def other_lines(sb, name):
    return [l for l in sb.read_bytes("/etc/passwd").split(b"\n")
            if not l.startswith(name.encode() + b":")]


# ---------------------------------------------------------------- root, options

@pytest.mark.parametrize("args,expected", [
    (["-f", "Alice P. Liddell"], "Alice P. Liddell,12,555-1,555-2"),
    (["--full-name", "A"], "A,12,555-1,555-2"),
    (["-r", "42b"], "Alice Liddell,42b,555-1,555-2"),
    (["--room", "7"], "Alice Liddell,7,555-1,555-2"),
    (["-w", "+1 555 0100"], "Alice Liddell,12,+1 555 0100,555-2"),
    (["--work-phone", "x"], "Alice Liddell,12,x,555-2"),
    (["-h", "999"], "Alice Liddell,12,555-1,999"),
    (["--home-phone", ""], "Alice Liddell,12,555-1"),          # trailing commas dropped
    (["-o", "pager=123,x"], "Alice Liddell,12,555-1,555-2,pager=123,x"),
    (["--other", "k=v"], "Alice Liddell,12,555-1,555-2,k=v"),
    (["-f", "Al", "-r", "1", "-w", "2", "-h", "3", "-o", "4"], "Al,1,2,3,4"),
    (["-f", "Jos\u00e9 \u00c5ngstr\u00f6m"], "Jos\u00e9 \u00c5ngstr\u00f6m,12,555-1,555-2"),
    (["-r", "", "-w", "", "-h", ""], "Alice Liddell"),
])
def test_root_options(users, args, expected):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    others = other_lines(sb, "alice")
    res = run(sb, [CHFN] + args + ["alice"])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res
    assert gecos(sb, "alice") == expected
    # every other line byte for byte, the rest of alice's line too
    assert other_lines(sb, "alice") == others
    old = [l for l in before.decode().splitlines() if l.startswith("alice:")][0].split(":")
    new = passwd_line(sb, "alice").split(":")
    assert old[:4] + old[5:] == new[:4] + new[5:]
    # shadow-utils' backup, owner and mode kept, no lock left behind
    assert sb.read_bytes("/etc/passwd-") == before
    st = sb.lstat("/etc/passwd")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o644)
    assert not sb.exists("/etc/passwd.lock")
    assert sb.getpwnam("alice").gecos == expected
    assert "changed user 'alice' information" in "\n".join(sb.syslog())


def test_mode_and_owner_kept(users):
    sb = users
    sb.run(["chmod", "0640", "/etc/passwd"])
    sb.run(["chgrp", "adm", "/etc/passwd"])
    adm = sb.getgrnam("adm")[1]
    res = run(sb, [CHFN, "-f", "Bob B", "bob"])
    assert res.returncode == 0, res
    st = sb.lstat("/etc/passwd")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, adm, 0o640)
    assert gecos(sb, "bob") == "Bob B"


def test_root_own_entry_and_key_value_fields(users):
    sb = users
    # a subfield with '=' belongs to "other" (shadow-utils' parsing)
    sb.run([USERMOD, "-c", "Carl,k=v,5,6,7,extra", "bob"])
    res = run(sb, [CHFN, "-r", "9", "bob"])
    assert res.returncode == 0, res
    assert gecos(sb, "bob") == "Carl,9,6,7,k=v,extra"
    res = run(sb, [CHFN, "-f", "Charlie Root"])
    assert res.returncode == 0, res
    assert gecos(sb, "root").startswith("Charlie Root")


# ---------------------------------------------------------------- refused values

BAD_CHARS = [":", ",", "=", "\n", "\x01", "\x1b", "\t", "\x7f", "\u0085", "\u009b", "\u0080"]


@pytest.mark.parametrize("opt,what", [
    ("-f", "name"), ("-r", "room number"), ("-w", "work phone"), ("-h", "home phone"),
])
@pytest.mark.parametrize("bad", BAD_CHARS)
def test_forbidden_characters(users, opt, what, bad):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    backup = sb.read_bytes("/etc/passwd-")          # useradd's
    res = run(sb, [CHFN, opt, "a" + bad + "b", "alice"])
    assert res.returncode == 1, res
    assert res.stderr.startswith("chfn: invalid %s: 'a" % what), res
    assert sb.read_bytes("/etc/passwd") == before
    assert sb.read_bytes("/etc/passwd-") == backup
    assert not sb.exists("/etc/passwd.lock")


@pytest.mark.parametrize("bad", [":", "\n", "\x1b", "\x7f", "\u009b"])
def test_forbidden_characters_in_other(users, bad):
    before = users.read_bytes("/etc/passwd")
    res = run(users, [CHFN, "-o", "x" + bad, "alice"])
    assert res.returncode == 1 and res.stderr.startswith("chfn: invalid other information: ")
    assert users.read_bytes("/etc/passwd") == before


# each with how the refusal shows it: the C1 bytes escaped, a valid character around
# them (U+201B) as it is to a terminal that takes UTF-8
@pytest.mark.parametrize("raw,shown", [
    (b"\x80", "\\x80"), (b"\x85", "\\x85"), (b"\x9b", "\\x9b"), (b"\x9f", "\\x9f"),
    (b"\xc2\x9b", "\\xc2\\x9b"), (b"\xe2\x80\x9b\x9b", "\u201b\\x9b")])
def test_c1_bytes_refused(users, raw, shown):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    # str with surrogate escapes: subprocess passes the raw bytes in argv
    res = run(sb, [CHFN, "-f", os.fsdecode(b"Al" + raw + b"ice"), "alice"],
              env={"LANG": "C.UTF-8"})
    assert res.returncode == 1, res
    assert res.stderr == "chfn: invalid name: 'Al%sice'\n" % shown, res
    assert sb.read_bytes("/etc/passwd") == before


def test_latin1_and_utf8_accepted(users):
    sb = users
    res = run(sb, [CHFN, "-f", os.fsdecode(b"Ren\xe9 \xc3\x85"), "bob"])
    assert res.returncode == 0, res
    assert sb.read_bytes("/etc/passwd").count(b":Ren\xe9 \xc3\x85:") == 1


def test_overlong_fields(users):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    for opt, what in (("-f", "name"), ("-r", "room number"), ("-w", "work phone"),
                      ("-h", "home phone"), ("-o", "other information")):
        res = run(sb, [CHFN, opt, "x" * 81, "alice"])
        assert (res.returncode, res.stderr) == (
            1, "chfn: fields too long: the %s is longer than 80 bytes\n" % what), res
        assert sb.read_bytes("/etc/passwd") == before
    # 80 is fine
    res = run(sb, [CHFN, "-f", "y" * 80, "alice"])
    assert res.returncode == 0, res
    assert gecos(sb, "alice").startswith("y" * 80 + ",")


def test_overlong_total(users):
    sb = users
    # an existing long "other" (set by root by hand) plus new fields beyond 1024 bytes
    sb.run([USERMOD, "-c", "A,B,C,D," + ",".join(["o" * 79] * 12), "bob"])
    before = sb.read_bytes("/etc/passwd")
    res = run(sb, [CHFN, "-f", "f" * 80, "bob"])
    assert (res.returncode, res.stderr) == (
        1, "chfn: fields too long: the GECOS field would be longer than 1024 bytes\n"), res
    assert sb.read_bytes("/etc/passwd") == before


# ---------------------------------------------------------------- prompt

def test_root_prompt_on_a_pty(users):
    sb = users
    status, out = sb.pty_run([CHFN, "alice"], [
        (r"Changing the user information for alice\n"
         r"Enter the new value, or press ENTER for the default\n"
         r"\tFull Name \[Alice Liddell\]: ", "  Alice L  \n"),
        (r"\tRoom Number \[12\]: ", "\n"),
        (r"\tWork Phone \[555-1\]: ", " \n"),
        (r"\tHome Phone \[555-2\]: ", "777\n"),
        (r"\tOther \[\]: ", "k=v\n"),
    ])
    assert status == 0, out
    assert "Password" not in out                      # pam_rootok
    assert gecos(sb, "alice") == "Alice L,12,,777,k=v"


def test_prompt_refuses_bad_input(users):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    status, out = sb.pty_run([CHFN, "alice"], [
        (r"Full Name \[Alice Liddell\]: ", "\n"),
        (r"Room Number \[12\]: ", "a,b\n"),
        (r"Work Phone \[555-1\]: ", "\n"),
        (r"Home Phone \[555-2\]: ", "\n"),
        (r"Other \[\]: ", "\n"),
    ])
    assert status == 1, out
    assert "chfn: invalid room number: 'a,b'" in out
    assert sb.read_bytes("/etc/passwd") == before


def test_prompt_on_stdin_end_of_input_keeps_values(users):
    sb = users
    res = run(sb, [CHFN, "alice"], input="Alicia\n")
    assert res.returncode == 0, res
    assert gecos(sb, "alice") == "Alicia,12,555-1,555-2"


def test_prompt_on_stdin_overlong_nul_or_empty_line(users):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    res = run(sb, [CHFN, "alice"], input="A" * 2000 + "\n")
    assert (res.returncode, res.stderr.splitlines()[-1]) == (
        1, "chfn: fields too long: the name is longer than 80 bytes"), res
    assert sb.read_bytes("/etc/passwd") == before
    # a NUL before the newline, an empty line: the value kept; blanks
    # around a value trimmed, blanks only empty it
    res = run(sb, [CHFN, "alice"], input="Ali\0ce\n\n \t13\t \n \n")
    assert res.returncode == 0, res
    assert gecos(sb, "alice") == "Alice Liddell,12,13"


# ---------------------------------------------------------------- who

def setuid_build(sb):
    return bool(sb.lstat(CHFN).st_mode & stat.S_ISUID)


@pytest.fixture
def default_build(users):
    if setuid_build(users):
        pytest.skip("chfn is installed setuid (-Dsetuid_chfn=true)")
    return users


@pytest.fixture
def suid(users, build_dir):
    """chfn as -Dsetuid_chfn=true installs it: the build's self-service program
    (src/admin/chfn-setuid-test) put in place 4755 root:root when this build's chfn is the
    root tool, so every build tests both."""
    if not setuid_build(users):
        with open(os.path.join(build_dir, "src", "admin", "chfn-setuid-test"), "rb") as f:
            users.write(CHFN, f.read(), mode=0o4755)
    st = users.lstat(CHFN)
    assert stat.S_IMODE(st.st_mode) == 0o4755 and st.st_uid == 0
    return users


def test_non_root_refused_in_default_build(default_build):
    sb = default_build
    before = sb.read_bytes("/etc/passwd")
    for args in (["-f", "Evil"], ["-f", "Evil", "alice"], ["-o", "x", "bob"], []):
        res = run(sb, [CHFN] + args, user="alice", input="alice-pw-1\n")
        assert (res.returncode, res.stdout, res.stderr) == (
            1, "", "chfn: Permission denied.\n"), (args, res)
    res = run(sb, [CHFN, "-f", "x"], user=12345, input="")
    assert (res.returncode, res.stderr) == (1, "chfn: Permission denied.\n")
    assert sb.read_bytes("/etc/passwd") == before


def test_installed_plain_not_setuid(default_build):
    st = default_build.lstat(CHFN)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o755)


def set_restrict(sb, value):
    lines = [l for l in sb.read("/etc/login.defs").splitlines()
             if not l.startswith("CHFN_RESTRICT")]
    if value is not None:
        lines.append("CHFN_RESTRICT %s" % value)
    sb.write("/etc/login.defs", "\n".join(lines) + "\n")


def as_alice(sb, args, password="alice-pw-1"):
    return run(sb, [CHFN] + args, user="alice", input=password + "\n")


def test_setuid_installed_mode(suid):
    st = suid.lstat(CHFN)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o4755)


def test_setuid_user_changes_own_entry(suid):
    sb = suid
    set_restrict(sb, "rwh")
    others = other_lines(sb, "alice")
    res = as_alice(sb, ["-r", "13", "-w", "w1", "-h", "h1"])
    assert (res.returncode, res.stderr) == (0, "Password: "), res
    assert gecos(sb, "alice") == "Alice Liddell,13,w1,h1"
    assert other_lines(sb, "alice") == others
    st = sb.lstat("/etc/passwd")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o644)
    # the full name and other information are not alice's to change under rwh
    before = sb.read_bytes("/etc/passwd")
    for args in (["-f", "Evil"], ["-o", "x=y"], ["-r", "1", "-f", "Evil"]):
        res = as_alice(sb, args)
        assert (res.returncode, res.stderr) == (1, "chfn: Permission denied.\n"), args
    # nor another user's entry, whatever the password
    res = as_alice(sb, ["-r", "1", "bob"])
    assert (res.returncode, res.stderr) == (
        1, "You may not change the user information for bob.\n"), res
    res = as_alice(sb, ["-r", "1"], password="wrong")
    assert res.returncode == 1 and "chfn: PAM: " in res.stderr, res
    assert sb.read_bytes("/etc/passwd") == before


@pytest.mark.parametrize("restrict,allowed", [
    (None, ""), ("no", ""), ("yes", "rwh"), ("f", "f"), ("frwh", "frwh"), ("wh", "wh"),
])
def test_setuid_chfn_restrict(suid, restrict, allowed):
    sb = suid
    set_restrict(sb, restrict)
    for letter in "frwh":
        before = sb.read_bytes("/etc/passwd")
        res = as_alice(sb, ["-" + letter, "v" + letter])
        if letter in allowed:
            assert res.returncode == 0, (letter, res)
            assert ",v%s" % letter in "," + gecos(sb, "alice"), letter
        else:
            assert (res.returncode, res.stderr) == (1, "chfn: Permission denied.\n"), letter
            assert sb.read_bytes("/etc/passwd") == before


def test_setuid_user_prompt(suid):
    sb = suid
    set_restrict(sb, "rwh")
    status, out = sb.pty_run([CHFN], [
        (r"Password: ", "alice-pw-1\n"),
        (r"Changing the user information for alice\n"
         r"Enter the new value, or press ENTER for the default\n"
         r"\tFull Name: Alice Liddell\n"
         r"\tRoom Number \[12\]: ", "99\n"),
        (r"\tWork Phone \[555-1\]: ", "\n"),
        (r"\tHome Phone \[555-2\]: ", "\n"),
    ], user="alice")
    assert status == 0, out
    assert "alice-pw-1" not in out and "Other" not in out
    assert gecos(sb, "alice") == "Alice Liddell,99,555-1,555-2"


def test_setuid_user_bad_value_refused_before_password(suid):
    sb = suid
    set_restrict(sb, "rwh")
    before = sb.read_bytes("/etc/passwd")
    res = run(sb, [CHFN, "-r", "1:0"], user="alice", input="")
    assert (res.returncode, res.stderr) == (1, "chfn: invalid room number: '1:0'\n"), res
    assert sb.read_bytes("/etc/passwd") == before


def test_unknown_and_invalid_users(users):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    res = run(sb, [CHFN, "-f", "x", "nosuch"])
    assert (res.returncode, res.stderr) == (1, "chfn: user 'nosuch' does not exist\n")
    for bad in ("../etc", "a:b", "-", "x" * 40):
        res = run(sb, [CHFN, "-f", "x", "--", bad])
        assert (res.returncode, res.stderr) == (
            1, "chfn: Provided user name is not a valid name\n"), bad
    assert sb.read_bytes("/etc/passwd") == before


def test_usage_and_exit_codes(users):
    sb = users
    res = run(sb, [CHFN, "--help"])
    assert res.returncode == 0 and res.stdout.startswith("Usage: chfn [options] [LOGIN]\n")
    assert "  -f, --full-name FULL_NAME     change user's full name\n" in res.stdout
    res = run(sb, [CHFN, "-u"])
    assert res.returncode == 0 and res.stderr == ""
    res = run(sb, [CHFN, "--version"])
    assert res.returncode == 0 and res.stdout.startswith("chfn (hardened-shadow) ")
    res = run(sb, [CHFN, "-R", "/mnt", "-f", "x", "bob"])
    assert res.returncode == 2 and "--root is not supported" in res.stderr
    for args in (["-Z"], ["-f"], ["-f", "x", "bob", "alice"]):
        res = run(sb, [CHFN] + args)
        assert res.returncode == 2 and "Usage: chfn" in res.stderr, args
    assert gecos(sb, "bob") == "Bob"


# ---------------------------------------------------------------- locking

def hold_passwd_lock(sb):
    """A live process 'holds' /etc/passwd.lock the shadow-utils way (its PID and a NUL)."""
    holder = sb.popen(["sleep", "60"])
    holder.nspid = sb.ns_pid(holder.pid)
    sb.write("/etc/passwd.lock", "%d\0" % holder.nspid, mode=0o600)
    return holder


def test_waits_for_a_lock_holder(users):
    sb = users
    holder = hold_passwd_lock(sb)
    lock = os.path.join(sb.root, "etc/passwd.lock")
    release = threading.Timer(3, os.unlink, [lock])
    try:
        release.start()
        t0 = time.monotonic()
        res = run(sb, [CHFN, "-f", "Waited", "bob"])
        elapsed = time.monotonic() - t0
    finally:
        release.cancel()
        holder.kill()
        holder.wait()
    assert res.returncode == 0, res
    assert elapsed >= 2.5, elapsed
    assert gecos(sb, "bob") == "Waited"
    assert not sb.exists("/etc/passwd.lock")


def test_times_out_on_a_lock_holder(users):
    sb = users
    before = sb.read_bytes("/etc/passwd")
    holder = hold_passwd_lock(sb)
    try:
        t0 = time.monotonic()
        res = run(sb, [CHFN, "-f", "Never", "bob"], timeout=40)
        elapsed = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()
    assert (res.returncode, res.stderr) == (
        1, "chfn: cannot lock /etc/passwd: timed out after 15 s\n"), res
    assert 14 <= elapsed < 30, elapsed
    assert sb.read_bytes("/etc/passwd") == before
    # the holder's lock file is not ours to remove
    assert sb.read_bytes("/etc/passwd.lock") == b"%d\0" % holder.nspid


def drain(fd):
    """Everything read from fd until its end."""
    out = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return out
        out += chunk


def test_setuid_user_cannot_hold_the_locks_with_a_full_stderr(suid):
    # alice's chfn is unstoppable once authenticated, but its messages go to her
    # stderr: a pipe she filled herself once the password prompt was out of it.  Her
    # hard file size limit makes the rewrite of /etc/passwd fail, and the message
    # saying so used to wait on that pipe with /etc/passwd locked: every account tool
    # of root's (and systemd-sysusers) timed out, for as long as she liked.
    sb = suid
    set_restrict(sb, "rwh")
    before = sb.read_bytes("/etc/passwd")
    rfd, wfd = os.pipe()
    proc = sb.popen(["/bin/sh", "-c", "ulimit -f 1; exec %s -r 13" % CHFN], user="alice",
                    stdin=subprocess.PIPE, stderr=wfd, pass_fds=(wfd,))
    try:
        got = b""
        while not got.endswith(b"Password: "):
            got += os.read(rfd, 100)
        # a file description of its own: chfn's stderr stays blocking
        filler = os.open("/proc/self/fd/%d" % wfd, os.O_WRONLY | os.O_NONBLOCK)
        try:
            while True:
                os.write(filler, b"x" * 4096)
        except BlockingIOError:
            os.close(filler)
        proc.stdin.write(b"alice-pw-1\n")
        proc.stdin.close()
        deadline = time.monotonic() + 30
        while not write_blocked(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        assert not sb.exists("/etc/passwd.lock")
        res = run(sb, ["/usr/sbin/usermod", "-c", "Robert", "bob"], timeout=40)
        assert res.returncode == 0, res
    finally:
        os.close(wfd)
        drained = drain(rfd)
        os.close(rfd)
        proc.wait(timeout=30)
    assert proc.returncode == 1
    assert drained.lstrip(b"x") == b"chfn: cannot write /etc/passwd: File too large\n", drained[-200:]
    assert gecos(sb, "bob") == "Robert"
    assert [l for l in sb.read_bytes("/etc/passwd").split(b"\n") if l.startswith(b"alice:")] == \
        [l for l in before.split(b"\n") if l.startswith(b"alice:")]
