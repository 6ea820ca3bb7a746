"""Findings of a review of the session programs (login, su, runuser, newgrp/sg), each
compared with what Debian's util-linux su and shadow-utils' login and newgrp do:

- newgrp and sg hand the caller's SIGXFSZ action back to the shell, as su does: under a
  `ulimit -f` the privileged part ignores SIGXFSZ for itself (hs_privs_init), and an
  ignored signal survives execve, so every program in the new shell used to get EFBIG
  where the caller's would have been killed;
- pam_umask in the session stack decides the session's umask, for su (util-linux su
  leaves the umask to PAM) and for login (shadow-utils' login sets UMASK before PAM, so
  pam_umask has the last word); the child used to set its own afterwards;
- a refused su is written to btmp, as util-linux's su writes it;
- su(1) names the one difference found undocumented: only fds 0-2 reach the session."""

import re

import pytest

import sandbox
from ptyproc import Pty

DEBIAN_SU = "/usr/local/bin/hs-test-debian-su"
PW = {"alice": "Alice-rv-pw-1", "bob": "Bob-rv-pw-2"}
SHELL_PROMPT = r"\$ $"


@pytest.fixture(scope="module")
def sb(base):
    with sandbox.Sandbox(base, size="512m") as s:
        with open("/usr/bin/su", "rb") as f:
            s.write(DEBIAN_SU, f.read(), mode=0o4755)
        for name in PW:
            s.add_classic_user(name, password=PW[name])
        s.run(["/usr/sbin/groupadd", "-g", "2001", "devs"])
        s.run(["/usr/sbin/usermod", "-aG", "devs", "alice"])
        s.use_hardened_tree()
        s.use_pam_module(options_by_type={"auth": "nullok nodelay"})
        s.write("/etc/login.defs", s.read("/etc/login.defs") +
                "\nFAIL_DELAY 0\nLOGIN_RETRIES 1\n")
        pam_login = s.read("/etc/pam.d/login")
        s.write("/etc/pam.d/login", pam_login.replace("delay=3000000", "delay=0"))
        yield s


def sigign(text):
    return int(next(l for l in text.splitlines() if l.startswith("SigIgn:")).split()[1], 16)


@pytest.mark.parametrize("prog", ["/usr/bin/sg devs -c", "/usr/bin/newgrp devs <<<"])
def test_newgrp_hands_the_callers_sigxfsz_back(sb, prog):
    res = sb.run(["/bin/bash", "-c", "ulimit -f 1; exec %s 'grep SigIgn /proc/self/status'"
                  % prog], user="alice", check=False)
    assert res.returncode == 0, res
    assert not sigign(res.stdout) & (1 << (25 - 1)), res.stdout    # SIGXFSZ is 25


def _with_pam_umask(sb, service):
    text = sb.read("/etc/pam.d/" + service)
    sb.write("/etc/pam.d/" + service, text + "session optional pam_umask.so umask=0027\n")
    return text


@pytest.mark.parametrize("su", ["/usr/bin/su", DEBIAN_SU])
def test_su_session_umask_is_pam_umasks(sb, su):
    old = _with_pam_umask(sb, "su")
    try:
        res = sb.run(["/bin/sh", "-c", "umask 022; exec %s -c umask bob" % su], check=False)
    finally:
        sb.write("/etc/pam.d/su", old)
    assert res.returncode == 0, res
    assert res.stdout.strip() == "0027", res


def test_login_session_umask_is_pam_umasks(sb):
    old = _with_pam_umask(sb, "login")
    try:
        with Pty(sb, ["/usr/bin/login", "bob"]) as p:
            p.expect("Password: ")
            p.send(PW["bob"] + "\n")
            p.expect(SHELL_PROMPT)
            p.send('echo "UMASK=$(umask)"; exit\n')
            p.expect(r"UMASK=(\d+)")
            out = p.output
    finally:
        sb.write("/etc/pam.d/login", old)
    assert "UMASK=0027" in out, out


def _btmp(sb):
    """utmpdump's records of /var/log/btmp as (type, user, line, id)."""
    out = sb.run(["/usr/bin/utmpdump", "/var/log/btmp"], check=False).stdout
    recs = []
    for line in out.splitlines():
        f = [x.strip() for x in re.findall(r"\[([^\]]*)\]", line)]
        if len(f) >= 5:
            recs.append((int(f[0]), f[3], f[4], f[2]))
    return recs


@pytest.mark.parametrize("su", ["/usr/bin/su", DEBIAN_SU])
def test_refused_su_is_recorded_in_btmp(sb, su):
    """util-linux's su writes a refused su to btmp (lastb), as login does."""
    sb.write("/var/log/btmp", "", mode=0o660, gid=sb.getgrnam("utmp")[1])
    res = sb.run([su, "-c", "true", "bob"], user="alice", input="wrong-password\n",
                 check=False)
    assert res.returncode == 1, res
    assert _btmp(sb) == [(6, "bob", "", "")], sb.run(["/usr/bin/utmpdump",
                                                       "/var/log/btmp"]).stdout
    # on a terminal: its name, and its number as the id
    sb.write("/var/log/btmp", "", mode=0o660, gid=sb.getgrnam("utmp")[1])
    sb.pty_run([su, "-c", "true", "bob"], [("Password: ", "wrong-password\n")],
               user="alice")
    recs = _btmp(sb)
    assert len(recs) == 1 and recs[0][:2] == (6, "bob"), recs
    assert re.fullmatch(r"pts/\d+", recs[0][2]) and recs[0][2] == "pts/" + recs[0][3], recs


@pytest.mark.parametrize("su,passed", [("/usr/bin/su", False), (DEBIAN_SU, True)])
def test_only_the_standard_fds_reach_the_session(sb, su, passed):
    """A difference su(1) names: root's descriptor 3 (a file only root may read) does not reach
    the target's command, where util-linux's su hands it on."""
    sb.write("/root/secret", "SECRET-7\n", mode=0o600)
    res = sb.run(["/bin/bash", "-c", "exec 3</root/secret; exec %s -c 'cat <&3' bob" % su],
                 check=False)
    assert (res.returncode == 0) == passed, res
    assert ("SECRET-7" in res.stdout) == passed, res
