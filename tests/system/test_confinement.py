"""The setgid helpers confine themselves with Landlock and seccomp before they read any
input (lib/base/confine.h).  tests/unit/test_confine.c shows the kernel refusing what a
confined helper tries; here the installed helpers are seen to be confined, and to work."""

import os
import re
import shutil
import subprocess
import time

import pytest

PW_HELPER = "/usr/libexec/hardened-shadow/password-helper"
SHELL_HELPER = "/usr/libexec/hardened-shadow/shell-helper"


@pytest.fixture
def conv(sb):
    sb.add_classic_user("alice", password="alice-pw")
    res = sb.run(["/usr/sbin/pwconv"])
    assert "converted" in res.stdout
    return sb


def proc_status(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    except OSError:
        return {}


def test_password_helper_is_confined_while_it_waits_for_input(conv):
    conv.run(["mkfifo", "-m", "0666", "/tmp/pw-fifo"])
    # our end first (O_RDWR does not block on a FIFO), then the helper's
    writer = os.open(os.path.join(conv.root, "tmp/pw-fifo"), os.O_RDWR)
    cmd, _ = conv._wrap(["/bin/sh", "-c", "exec %s verify alice </tmp/pw-fifo" % PW_HELPER],
                        "alice", "/")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={})
    try:
        deadline = time.monotonic() + 10
        st = {}
        while time.monotonic() < deadline:
            st = proc_status(proc.pid)
            if st.get("Name", "").strip() == "password-helper" and \
                    st.get("State", "").startswith("S") and st.get("Seccomp", "").strip() == "2":
                break
            time.sleep(0.05)
        # waiting for the password, it is already confined: a filter, no new privileges
        assert st.get("Seccomp", "").strip() == "2", st
        assert st.get("NoNewPrivs", "").strip() == "1", st
        os.write(writer, b"alice-pw")
    finally:
        os.close(writer)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, (out, err)


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
@pytest.mark.parametrize("argv", [[SHELL_HELPER], [PW_HELPER, "account", "alice"]])
def test_helpers_restrict_themselves_before_reading(conv, argv, tmp_path):
    trace = str(tmp_path / "trace")
    cmd, _ = conv._wrap(argv, "alice", "/")
    res = subprocess.run(["strace", "-f", "-o", trace, "-e",
                          "trace=landlock_restrict_self,prctl,openat,read"] + cmd,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, env={},
                         timeout=30)
    assert res.returncode == 0, res
    with open(trace) as f:
        lines = f.read().splitlines()
    restrict = [i for i, l in enumerate(lines) if re.search(r"landlock_restrict_self\(.*= 0$", l)]
    seccomp = [i for i, l in enumerate(lines) if re.search(r"PR_SET_SECCOMP.*= 0$", l)]
    assert restrict and seccomp, "\n".join(lines[-30:])
    # the user's files are opened only after both are in place
    user_file = [i for i, l in enumerate(lines)
                 if re.search(r'openat\(\d+, "(shadow|shell|aging)"', l)]
    assert user_file and min(user_file) > max(restrict[0], seccomp[0]), "\n".join(lines)
