"""Hostile callers of the command-line tools, the cases a sweep over every program found
wrong: control characters in a quoted argument (one line per message, whatever the
argument holds) and passwd's status line failing after its change is made."""

import pytest

TREE = "/etc/hardened-shadow"
STATE = ("cat /etc/passwd /etc/group /etc/gshadow; "
         "for f in %s/*/*; do echo \"== $f\"; cat \"$f\"; done" % TREE)


@pytest.fixture
def tsb(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.use_hardened_tree()
    return sb


def state(sb):
    return sb.sh(STATE).stdout


# Each quotes the hostile argument in its message: a newline there made a second line
# ("b'"), an ESC a terminal escape sequence.
QUOTING = [
    (["/usr/sbin/useradd", "-c", "a\nb", "carol"], 3),
    (["/usr/sbin/useradd", "-d", "/home/\x1b[2Jx", "carol"], 3),
    (["/usr/sbin/useradd", "--", "a\nb"], 3),
    (["/usr/sbin/usermod", "-s", "/bin/\nsh", "alice"], 3),
    (["/usr/sbin/usermod", "-G", "a\nb", "alice"], 6),
    (["/usr/sbin/usermod", "-c", "x", "--", "a\nb"], 6),
    (["/usr/sbin/userdel", "--", "a\nb"], 6),
    (["/usr/bin/chage", "-E", "a\nb", "alice"], 1),
    (["/usr/bin/chage", "-m", "1", "--", "a\nb"], 1),
    (["/usr/bin/passwd", "-n", "1", "--", "a\nb"], 1),
]


@pytest.mark.parametrize("argv,status", QUOTING, ids=lambda v: repr(v)[:40])
def test_a_control_character_in_an_argument_stays_on_the_message_line(tsb, argv, status):
    before = state(tsb)
    res = tsb.run(argv, check=False)
    assert res.returncode == status, res
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert "\x1b" not in res.stderr and ("\\x0a" in res.stderr or "\\x1b" in res.stderr)
    assert state(tsb) == before


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_passwd_says_the_change_was_made_when_its_status_line_fails(tsb, redirect):
    res = tsb.sh("/usr/bin/passwd -l alice %s" % redirect, check=False)
    assert res.returncode == 0, res
    assert res.stderr.startswith("passwd: cannot write to standard output: ")
    assert res.stderr.endswith(" (the change was made)\n")
    assert tsb.read(TREE + "/alice/shadow").startswith("!")


# A hard RLIMIT_FSIZE (ulimit -f sets the soft and the hard one) that the tool cannot
# lift: the write past it fails with EFBIG, reported in one line, nothing replaced;
# SIGXFSZ used to kill the tool without a word (exit 153).
FSIZE = [
    ("ulimit -f 1; exec", "usermod -c x alice", 1, "cannot write /etc/passwd: File too large"),
    ("ulimit -f 1; exec", "groupadd proj", 10, "cannot write /etc/gshadow: File too large"),
    # one byte: not even the two of the lock file's PID
    ("exec prlimit --fsize=1", "useradd carol", 1, "cannot lock /etc/passwd: File too large"),
]


@pytest.mark.parametrize("limit,cmd,status,message", FSIZE, ids=lambda v: str(v)[:20])
def test_a_hard_file_size_limit_is_an_error_not_a_kill(tsb, limit, cmd, status, message):
    before = state(tsb)
    res = tsb.sh("%s /usr/sbin/%s" % (limit, cmd), check=False)
    assert res.returncode == status, res
    assert res.stderr.splitlines() == [cmd.split()[0] + ": " + message], res.stderr
    assert state(tsb) == before


def test_su_hands_the_callers_sigxfsz_on_to_the_session(tsb):
    """su ignores SIGXFSZ for itself under such a limit; the session gets it back as
    the caller had it (default, so a shell there is killed past the limit as usual)."""
    script = "ulimit -f 1; exec /usr/bin/su -c 'grep SigIgn /proc/self/status' alice"
    res = tsb.sh(script, check=False)
    assert res.returncode == 0, res
    ignored = int(res.stdout.split()[1], 16)
    assert not ignored & (1 << (25 - 1)), res.stdout     # SIGXFSZ is signal 25


def test_who_the_caller_is_fails_with_its_cause(tsb):
    """Too few descriptors for the user lookup: shadow-utils' message, with the cause
    (it used to read as if the caller had no account)."""
    res = tsb.sh("exec prlimit --nofile=4 /usr/bin/passwd -S", user="alice", check=False)
    assert res.returncode != 0
    assert res.stderr.splitlines() == [
        "passwd: Cannot determine your user name. (Too many open files)"], res.stderr


def to_a_pipe_nobody_reads(sb, argv):
    """argv run with stdout a pipe whose reader is gone: (exit status, stderr lines)."""
    script = ("import os, subprocess, sys\n"
              "r, w = os.pipe()\n"
              "os.close(r)\n"
              "p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, text=True)\n"
              "print(p.returncode)\n"
              "print(p.stderr, end='')\n")
    res = sb.run(["/usr/bin/python3", "-c", script] + argv)
    status, *err = res.stdout.splitlines()
    return status, err


def test_passwd_to_a_pipe_nobody_reads_exits_0_after_its_change(tsb):
    """passwd -l with stdout a pipe whose reader is gone: SIGPIPE used to end it with
    141 after the lock was written; it warns and exits 0 as for a closed stdout."""
    status, err = to_a_pipe_nobody_reads(tsb, ["/usr/bin/passwd", "-l", "alice"])
    assert status == "0", err
    assert err == ["passwd: cannot write to standard output: Broken pipe "
                   "(the change was made)"], err
    assert tsb.read(TREE + "/alice/shadow").startswith("!")


def test_pwunconv_and_pwconv_to_a_pipe_nobody_reads_exit_0(tsb):
    """Their report went to a pipe nobody reads: SIGPIPE, held back with the other
    signals during the conversion, ended them with 141 once it was done."""
    status, err = to_a_pipe_nobody_reads(tsb, ["/usr/sbin/pwunconv"])
    assert status == "0", err
    assert not tsb.exists(TREE) and tsb.exists("/etc/shadow")
    status, err = to_a_pipe_nobody_reads(tsb, ["/usr/sbin/pwconv"])
    assert status == "0", err
    assert tsb.exists(TREE + "/alice/shadow") and not tsb.exists("/etc/shadow")


@pytest.mark.parametrize("given", ["$6$abc", "$6$", "$y$j9T$", "$2b$05$abc"])
def test_chpasswd_refuses_a_hash_cut_short(tsb, given):
    """chpasswd -e with a hash that is only its method's prefix, or cut short: it used
    to be written, and no password could ever match it (the account locked out without
    a word)."""
    before = state(tsb)
    res = tsb.run(["/usr/sbin/chpasswd", "-e"], input="alice:%s\n" % given, check=False)
    assert res.returncode == 1, res
    assert "line 1" in res.stderr and "cut short" in res.stderr, res.stderr
    assert state(tsb) == before
