"""su from a user to root: what the root session inherits, compared with Debian's own
util-linux su run the same way in the same root (copied from the host)."""

import pytest

import sandbox

DEBIAN_SU = "/usr/local/bin/hs-test-debian-su"
OUR_SU = "/bin/su"
ROOT_PW = "Tulip-7-harbour-x"
# every limit of the root shell, as the kernel shows them, one LIMITn=... line each
PROBE = ('echo "PATH=$PATH"; echo "FSIZE=$(ulimit -f)"; '
         'awk \'{ print "LIMIT" NR "=" $0 }\' /proc/self/limits; env')
# a capped file size, a raised core size, and open files raised to the caller's hard limit
CALLER = ('ulimit -f 4096; ulimit -S -c 2048; ulimit -S -n "$(ulimit -H -n)"; exec "$0" "$@"')


@pytest.fixture(scope="module")
def sb(base):
    with sandbox.Sandbox(base, size="512m") as s:
        with open("/usr/bin/su", "rb") as f:
            s.write(DEBIAN_SU, f.read(), mode=0o4755)
        s.add_classic_user("bob", password="Bob-su-pw-2")
        s.use_hardened_tree()
        s.run(["/usr/sbin/chpasswd", "-e"], input="root:%s\n" % sandbox._crypt(ROOT_PW))
        s.use_pam_module(options_by_type={"auth": "nodelay"})
        yield s


def session_of(sb, su, args, env):
    res = sb.run(["/bin/sh", "-c", CALLER, su] + args + ["-c", PROBE], user="bob",
                 input=ROOT_PW + "\n", env=env, check=False)
    assert res.returncode == 0, res
    out = {}
    for line in res.stdout.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out.setdefault(k, v)
    return out


CALLER_ENV = {"PATH": "/home/bob/bin:/usr/bin:/bin", "CREDENTIALS_DIRECTORY": "/run/creds/x",
              "NOTIFY_SOCKET": "/run/systemd/notify", "INVOCATION_ID": "0123abcd",
              "HS_HARMLESS": "yes"}


@pytest.mark.parametrize("args", [["root"], ["-p", "root"], ["-", "root"]])
def test_root_session_matches_debian_su(sb, args):
    ours = session_of(sb, OUR_SU, args, CALLER_ENV)
    theirs = session_of(sb, DEBIAN_SU, args, CALLER_ENV)
    assert ours["PATH"] == theirs["PATH"], (ours["PATH"], theirs["PATH"])
    assert ours["FSIZE"] == theirs["FSIZE"], (ours["FSIZE"], theirs["FSIZE"])
    # RLIMIT_NOFILE (util-linux sets the soft limit to 1024), nice, rtprio ... all of
    # them, the core size included (our privileged parent zeroes only its soft limit, so
    # the session gets pam_limits' even where root lacks CAP_SYS_RESOURCE)
    limits = sorted(k for k in theirs if k.startswith("LIMIT"))
    assert any("core" in theirs[k] for k in limits)
    assert len(limits) > 10, theirs
    assert [ours.get(k) for k in limits] == [theirs[k] for k in limits]
    assert any("open files" in theirs[k] for k in limits)
    # a service's private state is not handed to the root session, even with -p
    for name in ("CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET", "INVOCATION_ID"):
        assert name not in ours, (name, ours)
