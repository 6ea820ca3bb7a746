"""The setgid helpers confine themselves with Landlock and seccomp before they read any
input (lib/base/confine.h).  tests/unit/test_confine.c shows the kernel refusing what a
confined helper tries; here the installed helpers are seen to be confined, and to work."""

import os
import re
import shutil
import subprocess
import time

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

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


# ---- the setid and root tools (hs_confine_paths) ----
#
# A tool is stopped by gdb at a function it calls once it has confined itself, and made
# to open paths, as a subverted tool would: gdb calls open() inside the tool's own
# process.  Paths outside the tool's rules must fail with EACCES from the kernel (root
# could otherwise write them: no check of ours is in the way of a call injected there),
# paths inside must open, and the tool, let go, must still do its job.

EACCES = 13
O_RDONLY, O_WRONLY_CREAT = 0, 0o101


def landlock_abi():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION), x86_64 and others
    return libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


needs_tools = pytest.mark.skipif(not shutil.which("gdb") or landlock_abi() < 1,
                                 reason="gdb is not installed or the kernel has no Landlock")


def probe(sb, argv, stop_at, opens, user=None, input=None):
    """Run argv under gdb inside the root, stopped once at stop_at; there, open each
    (path, flags) of opens in the tool's process.  Returns ([(result, errno)], the
    gdb run's output) and lets the tool finish."""
    cmd = ["gdb", "-nx", "-batch", "-ex", "set startup-with-shell off",
           "-ex", "set breakpoint pending on", "-ex", "tbreak " + stop_at, "-ex", "run"]
    for path, flags in opens:
        cmd += ["-ex", 'printf "PROBE %%d ", (int)open("%s", %d, 0600)' % (path, flags),
                "-ex", 'printf "%d\\n", *((int *(*)(void))__errno_location)()']
    cmd += ["-ex", "continue", "--args"] + argv
    res = sb.run(cmd, user=user, input=input, check=False, timeout=120)
    got = [tuple(int(v) for v in m.groups())
           for m in re.finditer(r"^PROBE (-?\d+) (\d+)$", res.stdout, re.M)]
    assert len(got) == len(opens), res.stdout + res.stderr
    return got, res


def refused(r):
    return r[0] == -1 and r[1] == EACCES


@needs_tools
def test_chsh_as_root_writes_only_etc(conv):
    got, res = probe(conv, ["/usr/bin/chsh", "-s", "/bin/sh", "alice"], "hs_shells_load",
                     [("/etc/passwd", O_RDONLY), ("/root/.confine-probe", O_WRONLY_CREAT),
                      ("/var/tmp/confine-probe", O_WRONLY_CREAT)])
    assert got[0][0] >= 0, res.stdout
    assert refused(got[1]) and refused(got[2]), (got, res.stdout)
    assert not conv.exists("/root/.confine-probe")
    assert "exited normally" in res.stdout, res.stdout + res.stderr


@needs_tools
def test_passwd_as_root_writes_only_the_users_directory(conv):
    got, res = probe(conv, ["/usr/bin/passwd", "-l", "alice"], "hs_userdir_open",
                     [("/etc/hardened-shadow/alice/confine-probe", O_WRONLY_CREAT),
                      ("/etc/passwd", O_RDONLY),
                      ("/etc/confine-probe", O_WRONLY_CREAT),
                      ("/root/.confine-probe", O_WRONLY_CREAT)])
    assert got[0][0] >= 0 and got[1][0] >= 0, (got, res.stdout)
    assert refused(got[2]) and refused(got[3]), (got, res.stdout)
    conv.run(["rm", "-f", "/etc/hardened-shadow/alice/confine-probe"])
    assert "exited normally" in res.stdout, res.stdout + res.stderr
    assert conv.run(["/usr/bin/passwd", "-S", "alice"]).stdout.split()[1] == "L"


@needs_tools
def test_useradd_writes_only_etc_the_home_parent_and_the_spool(sb):
    got, res = probe(sb, ["/usr/sbin/useradd", "-m", "carol"], "hs_accountset_open",
                     [("/etc/passwd", O_RDONLY), ("/home/confine-probe", O_WRONLY_CREAT),
                      ("/root/.confine-probe", O_WRONLY_CREAT),
                      ("/usr/bin/confine-probe", O_WRONLY_CREAT),
                      ("/var/tmp/confine-probe", O_WRONLY_CREAT)])
    assert got[0][0] >= 0 and got[1][0] >= 0, (got, res.stdout)
    assert all(refused(r) for r in got[2:]), (got, res.stdout)
    sb.run(["rm", "-f", "/home/confine-probe"])
    assert "exited normally" in res.stdout, res.stdout + res.stderr
    assert sb.getpwnam("carol") is not None
    assert sb.lstat("/home/carol").st_uid == sb.getpwnam("carol").uid


@needs_tools
@pytest.mark.parametrize("option", [["-c", "Carol"], ["-u", "4242"]])
def test_usermod_writes_the_home_and_spool_only_for_options_that_need_them(sb, option):
    """-u re-owns the home and the mail spool, so it may write there; -c changes one field
    of /etc/passwd, and the kernel refuses it everything else."""
    sb.run(["/usr/sbin/useradd", "-m", "carol"])
    probes = [("/etc/passwd", O_RDONLY), ("/home/carol/confine-probe", O_WRONLY_CREAT),
              ("/var/mail/confine-probe", O_WRONLY_CREAT),
              ("/root/.confine-probe", O_WRONLY_CREAT)]
    got, res = probe(sb, ["/usr/sbin/usermod"] + option + ["carol"], "hs_accountdb_replace",
                     probes)
    sb.run(["rm", "-f", "/home/carol/confine-probe", "/var/mail/confine-probe"])
    assert got[0][0] >= 0 and refused(got[3]), (got, res.stdout)
    if option[0] == "-u":
        assert got[1][0] >= 0 and got[2][0] >= 0, (got, res.stdout)
    else:
        assert refused(got[1]) and refused(got[2]), (got, res.stdout)
    assert "exited normally" in res.stdout, res.stdout + res.stderr


@needs_tools
def test_newusers_writes_only_etc_and_the_parents_of_its_new_homes(sb):
    """Confined once the batch is read: /etc, and the directories where its new homes (and
    their missing parents) are made; the mail spool and the rest of the file system are
    refused, and so is the parent of a home that is there already (read only)."""
    sb.use_hardened_tree()
    sb.run(["mkdir", "-p", "/srv/homes", "/srv/kept/old"])
    sb.write("/root/batch", "nu1:Batch-pw-1::::/home/nu1:/bin/sh\n"
                            "nu2:Batch-pw-2::::/srv/homes/deep/nu2:/bin/sh\n"
                            "nu3:Batch-pw-3::::/srv/kept/old:/bin/sh\n", mode=0o600)
    got, res = probe(sb, ["/usr/sbin/newusers", "-c", "SHA512", "-s", "1000", "/root/batch"],
                     "hs_accountset_open",
                     [("/etc/passwd", O_RDONLY), ("/home/confine-probe", O_WRONLY_CREAT),
                      ("/srv/homes/confine-probe", O_WRONLY_CREAT),
                      ("/srv/kept/confine-probe", O_WRONLY_CREAT),
                      ("/var/mail/confine-probe", O_WRONLY_CREAT),
                      ("/root/.confine-probe", O_WRONLY_CREAT),
                      ("/usr/bin/confine-probe", O_WRONLY_CREAT),
                      ("/var/tmp/confine-probe", O_WRONLY_CREAT)])
    assert all(r[0] >= 0 for r in got[:3]), (got, res.stdout)
    assert all(refused(r) for r in got[3:]), (got, res.stdout)
    sb.run(["rm", "-f", "/home/confine-probe", "/srv/homes/confine-probe"])
    assert "exited normally" in res.stdout, res.stdout + res.stderr
    for name, home in (("nu1", "/home/nu1"), ("nu2", "/srv/homes/deep/nu2")):
        assert sb.lstat(home).st_uid == sb.getpwnam(name).uid
    assert sb.lstat("/srv/kept/old").st_uid == 0


@needs_tools
def test_userdel_cannot_follow_a_symlink_planted_in_the_home(sb):
    sb.add_classic_user("bob", password="bob-pw")
    sb.run(["ln", "-s", "/root", "/home/bob/escape"], user="bob")
    sb.run(["ln", "-s", "/home/alice-elsewhere", "/home/bob/sideways"], user="bob")
    sb.run(["mkdir", "-p", "/home/alice-elsewhere"])
    got, res = probe(sb, ["/usr/sbin/userdel", "-r", "bob"],
                     "hs_accountset_commit",
                     [("/home/bob/inside", O_WRONLY_CREAT),
                      ("/home/bob/escape/.confine-probe", O_WRONLY_CREAT),
                      ("/home/bob/sideways/confine-probe", O_WRONLY_CREAT),
                      ("/home/confine-probe", O_WRONLY_CREAT)])
    # its own home is its job; a path that starts there and leaves through a symlink the
    # user planted is not, nor is the rest of /home
    assert got[0][0] >= 0, (got, res.stdout)
    assert all(refused(r) for r in got[1:]), (got, res.stdout)
    assert not sb.exists("/root/.confine-probe")
    assert not sb.exists("/home/alice-elsewhere/confine-probe")
    assert "exited normally" in res.stdout, res.stdout + res.stderr
    assert sb.getpwnam("bob") is None and not sb.exists("/home/bob")


@needs_tools
def test_hs_ldif_export_writes_only_the_directory_of_its_output(sb):
    """Confined before it reads an account: the directory -o names is writable, /etc and
    everything else is not (a flaw in reading the users' files cannot plant anything)."""
    sb.add_classic_user("alice", password="alice-pw")
    sb.use_hardened_tree()
    sb.run(["mkdir", "-p", "/root/export"])
    got, res = probe(sb, ["/usr/sbin/hs-ldif", "export", "-b", "dc=example,dc=org", "-o",
                          "/root/export/people.ldif", "alice"], "hs_userdir_open_tree",
                     [("/etc/passwd", O_RDONLY), ("/root/export/confine-probe", O_WRONLY_CREAT),
                      ("/etc/confine-probe", O_WRONLY_CREAT),
                      ("/root/confine-probe", O_WRONLY_CREAT),
                      ("/var/tmp/confine-probe", O_WRONLY_CREAT)])
    assert all(r[0] >= 0 for r in got[:2]), (got, res.stdout)
    assert all(refused(r) for r in got[2:]), (got, res.stdout)
    assert "exited normally" in res.stdout, res.stdout + res.stderr
    assert "uid=alice" in sb.read("/root/export/people.ldif")


# ---- the cache flush under the confinement ----
#
# With neither nscd nor sss_cache there, a confined tool can run nothing, so its base
# rules leave out the right to run the program loader (lib/base/confine.c).  Where one
# is there, the tool still runs it after a commit, loader and all, and confined: the
# stand-in below is an ordinary dynamically linked program.

FAKE_FLUSH = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = open("/root/.flush-probe", O_WRONLY | O_CREAT, 0600);
	int e = fd < 0 ? errno : 0;
	FILE *log = fopen("/var/lib/sss/flush.log", "a");

	if (!log)
		return 1;
	fprintf(log, "%s", NAME);
	for (int i = 1; i < argc; i++)
		fprintf(log, " %s", argv[i]);
	fprintf(log, " outside=%s\n", e ? strerror(e) : "written");
	return fclose(log) != 0;
}
"""


def install_fake_flush(sb, tmp_path, name):
    src = tmp_path / (name + ".c")
    src.write_text(FAKE_FLUSH)
    exe = os.path.join(sb.root, "usr/sbin", name)
    subprocess.run(["cc", "-o", exe, '-DNAME="%s"' % name, str(src)], check=True)
    os.chmod(exe, 0o755)


@pytest.mark.skipif(not shutil.which("cc") or landlock_abi() < 1,
                    reason="no C compiler or the kernel has no Landlock")
@pytest.mark.parametrize("helpers", [("nscd",), ("sss_cache",), ("nscd", "sss_cache")])
def test_confined_groupadd_still_runs_the_cache_flush(sb, tmp_path, helpers):
    sb.run(["mkdir", "-p", "/var/lib/sss"])
    for name in helpers:
        install_fake_flush(sb, tmp_path, name)
    sb.run(["/usr/sbin/groupadd", "flushers"])
    assert sb.getgrnam("flushers") is not None
    want = {"nscd": "nscd -i group outside=Permission denied",
            "sss_cache": "sss_cache -E outside=Permission denied"}
    # gshadow shares nscd's group cache: one flush per database, in commit order
    got = sb.read("/var/lib/sss/flush.log").splitlines()
    assert got and set(got) == {want[n] for n in helpers}, got
    assert not sb.exists("/root/.flush-probe")
