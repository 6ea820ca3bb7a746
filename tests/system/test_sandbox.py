"""Tests of the test harness itself (tests/sandbox/sandbox.py): the roots are isolated from
the host, hold the installed build with the modes of DESIGN.md section 5, and the helpers
(users, commands, pseudo-terminals, clean-up) do what the README says."""

import hashlib
import json
import os
import re
import stat
import subprocess
import time

import pytest

import sandbox


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---------------------------------------------------------------- isolation

def test_writes_inside_the_root_do_not_reach_the_host(sb):
    before = {p: sha256_of(p) for p in ("/etc/passwd", "/etc/group", "/etc/shadow")}
    sb.write("/etc/hs-sandbox-probe", "probe\n")
    sb.sh("echo 'intruder:x:0:0::/:/bin/sh' >> /etc/passwd; mkdir -p /etc/hardened-shadow;"
          " touch /etc/hardened-shadow/probe; rm -f /etc/shadow")
    sb.add_classic_user("probeuser", password="pw")
    assert sb.read("/etc/hs-sandbox-probe") == "probe\n"
    assert "intruder:x:0:0" in sb.read("/etc/passwd")
    assert not sb.exists("/etc/shadow")
    assert not os.path.exists("/etc/hs-sandbox-probe")
    assert not os.path.exists("/etc/hardened-shadow/probe")
    for path, digest in before.items():
        assert sha256_of(path) == digest, path


def test_each_sandbox_starts_fresh(base):
    with sandbox.Sandbox(base) as one:
        one.write("/etc/hs-one", "1")
        one.add_classic_user("onlyinone")
    with sandbox.Sandbox(base) as two:
        assert not two.exists("/etc/hs-one")
        assert two.getpwnam("onlyinone") is None


def test_symlinks_made_in_the_root_cannot_lead_writes_out(sb):
    # Outside a chroot this absolute link would name the host's /etc.
    sb.run(["ln", "-s", "/../../../../../../etc/hs-escape-probe", "/tmp/evil"])
    sb.write("/tmp/evil", "x\n")
    assert not os.path.exists("/etc/hs-escape-probe")
    assert sb.read("/etc/hs-escape-probe") == "x\n"


def test_root_has_private_dev_tmp_run_and_proc(sb):
    assert sb.run(["findmnt", "-rn", "-o", "TARGET,FSTYPE", "/dev/pts"]).stdout.split() == \
        ["/dev/pts", "devpts"]
    assert sb.run(["findmnt", "-rn", "-o", "FSTYPE", "/tmp"]).stdout == "tmpfs\n"
    assert sb.run(["findmnt", "-rn", "-o", "FSTYPE", "/run"]).stdout == "tmpfs\n"
    # the host's /tmp (where the sandbox mounts live) is not visible
    assert not sb.exists(sandbox._top())
    sb.write("/tmp/hs-only-inside", "x")
    assert not os.path.exists("/tmp/hs-only-inside")
    assert not sb.exists("/run/nscd/socket")
    assert sb.run(["cat", "/proc/self/status"]).returncode == 0
    sb.sh("echo hi > /dev/null; head -c 4 /dev/urandom | wc -c")


def test_build_tree_is_visible_at_its_host_path(sb, build_dir):
    assert sb.exists(os.path.join(build_dir, "meson-info", "meson-info.json"))
    # the live tree, not a copy that `meson install` left in the base layer
    logs = os.path.join(build_dir, "meson-logs")
    assert sb.run(["ls", "-A", logs]).stdout.split() == sorted(os.listdir(logs))


# ---------------------------------------------------------------- the installed build

# DESIGN.md section 5: path -> (mode, owner, group).  Programs not built yet are not checked
# here, but every one that is installed must match, and nothing else may be set-id.
EXPECTED_MODES = {
    "/usr/bin/passwd": (0o2711, "root", "hardened-shadow"),
    "/usr/bin/chsh": (0o2711, "root", "hardened-shadow"),
    "/usr/bin/chage": (0o2711, "root", "hardened-shadow"),
    "/usr/libexec/hardened-shadow/shell-helper": (0o2711, "root", "hardened-shadow"),
    "/usr/libexec/hardened-shadow/password-helper": (0o2711, "root", "hardened-shadow"),
    "/usr/bin/su": (0o4755, "root", "root"),
    "/usr/bin/newgrp": (0o4755, "root", "root"),
    "/usr/bin/sg": (0o4755, "root", "root"),
    "/usr/bin/newuidmap": (0o4755, "root", "root"),
    "/usr/bin/newgidmap": (0o4755, "root", "root"),
}


# setuid root only in a build with the matching option, plain 0755 otherwise
OPTIONAL_SETUID = {"/usr/bin/chfn", "/usr/bin/gpasswd"}


def installed_files(build_dir):
    with open(os.path.join(build_dir, "meson-info", "intro-installed.json")) as f:
        return sorted(set(json.load(f).values()))


def test_shell_helper_is_setgid_hardened_shadow_2711(sb):
    st = sb.lstat("/usr/libexec/hardened-shadow/shell-helper")
    assert stat.S_ISREG(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o2711
    assert st.st_uid == 0
    assert st.st_gid == sb.getgrnam("hardened-shadow")[1]


def test_installed_programs_have_the_modes_of_design_section_5(sb, build_dir):
    files = installed_files(build_dir)
    assert "/usr/libexec/hardened-shadow/shell-helper" in files
    checked = 0
    for path in files:
        st = sb.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            # an alias (none is installed today): the mode that counts is
            # the installed program's, checked under its own name; the link
            # must point at a file we installed in the same directory
            target = os.readlink(sb.root + path)
            assert "/" not in target, "%s -> %s leaves its directory" % (path, target)
            assert os.path.join(os.path.dirname(path), target) in files, \
                "%s -> %s: not an installed program" % (path, target)
            continue
        mode = stat.S_IMODE(st.st_mode)
        if path in EXPECTED_MODES:
            want_mode, want_user, want_group = EXPECTED_MODES[path]
            assert mode == want_mode, "%s: mode %o, want %o" % (path, mode, want_mode)
            assert st.st_uid == sb.getpwnam(want_user).uid, path
            assert st.st_gid == sb.getgrnam(want_group)[1], path
            checked += 1
        elif path in OPTIONAL_SETUID and mode & stat.S_ISUID:
            # a -Dsetuid_chfn / -Dsetuid_gpasswd build (DESIGN section 5)
            assert mode == 0o4755 and st.st_uid == 0 and st.st_gid == 0, \
                "%s: mode %o, want 4755 root:root" % (path, mode)
        else:
            assert not mode & (stat.S_ISUID | stat.S_ISGID), "%s is set-id (%o)" % (path, mode)
            assert not mode & stat.S_IWOTH, "%s is world-writable" % path
            assert st.st_uid == 0, "%s not owned by root" % path
    assert checked >= 1


def test_the_two_groups_exist_in_the_root(sb):
    for name in ("hardened-shadow", "hardened-shadow-auth"):
        entry = sb.getgrnam(name)
        assert entry is not None, name
        assert entry[1] < 1000, "%s should be a system group: gid %d" % (name, entry[1])
        assert entry[2] == [], "%s must have no members by default" % name
        assert re.search(r"^%s:" % re.escape(name), sb.read("/etc/gshadow"), re.M)
    assert sb.getgrnam("hardened-shadow")[1] != sb.getgrnam("hardened-shadow-auth")[1]


def test_nss_module_is_installed(sb):
    assert sb.exists("/usr/lib/x86_64-linux-gnu/libnss_hardened_shadow.so.2") or \
        any(p.endswith("libnss_hardened_shadow.so.2") and sb.exists(p)
            for p in installed_files(sb.base.build_dir))


# ---------------------------------------------------------------- users and commands

def test_classic_user_runs_as_itself(sb):
    alice = sb.add_classic_user("alice", password="correct horse")
    assert alice.uid >= 1000 and alice.home == "/home/alice" and alice.shell == "/bin/bash"
    out = sb.run(["id"], user="alice").stdout
    assert out.startswith("uid=%d(alice) gid=%d(alice)" % (alice.uid, alice.gid)), out
    env = sb.run(["env"], user="alice").stdout.splitlines()
    assert "HOME=/home/alice" in env and "USER=alice" in env and "LOGNAME=alice" in env
    # really unprivileged: the classic shadow file is out of reach
    r = sb.run(["cat", "/etc/shadow"], user="alice", check=False)
    assert r.returncode != 0 and "Permission denied" in r.stderr
    assert sb.run(["pwd"], user="alice", cwd="/home/alice").stdout == "/home/alice\n"
    line = [ln for ln in sb.read("/etc/shadow").splitlines() if ln.startswith("alice:")][0]
    assert line.split(":")[1].startswith("$y$")


def test_classic_user_fields(sb):
    sb.run([sandbox.CLASSIC_TOOLS_DIR + "/groupadd", "staff2"])
    bob = sb.add_classic_user("bob", uid=4242, shell="/bin/sh", comment="Bob B",
                              groups=["staff2"], maxdays=30, mindays=1, warndays=5,
                              password_hash="$6$salt$abc")
    assert (bob.uid, bob.gecos, bob.shell) == (4242, "Bob B", "/bin/sh")
    assert "bob" in sb.getgrnam("staff2")[2]
    fields = [ln for ln in sb.read("/etc/shadow").splitlines() if ln.startswith("bob:")][0]
    assert fields.split(":")[1] == "$6$salt$abc"
    assert fields.split(":")[3:6] == ["1", "30", "5"]
    with pytest.raises(TypeError):
        sb.add_classic_user("carol", colour="blue")


def test_failing_command_raises_with_its_output(sb):
    with pytest.raises(sandbox.CommandFailed) as ei:
        sb.sh("echo to-out; echo to-err >&2; exit 3")
    assert ei.value.returncode == 3
    assert "to-out" in str(ei.value) and "to-err" in str(ei.value)
    r = sb.sh("exit 4", check=False)
    assert r.returncode == 4


def test_timed_out_command_is_killed(sb):
    t0 = time.monotonic()
    with pytest.raises(sandbox.CommandTimeout) as ei:
        sb.sh("echo started; sleep 3071 & sleep 3072", timeout=1)
    assert time.monotonic() - t0 < 10
    assert "started" in str(ei.value)
    time.sleep(0.1)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            assert cmdline not in (b"sleep\x003071\x00", b"sleep\x003072\x00"), pid


def test_daemon_holding_the_output_pipe_times_out_with_a_hint(sb):
    t0 = time.monotonic()
    with pytest.raises(sandbox.CommandTimeout) as ei:
        sb.sh("echo before; setsid sleep 3073 &", timeout=1)
    assert time.monotonic() - t0 < 10
    assert "before" in ei.value.output
    assert "kept stdout/stderr open" in ei.value.stderr


def test_input_and_env(sb):
    assert sb.run(["cat"], input="line\n").stdout == "line\n"
    assert sb.sh("echo $HS_X", env={"HS_X": "y"}).stdout == "y\n"
    assert "HS_BUILD_DIR" not in sb.run(["env"]).stdout


# ---------------------------------------------------------------- pseudo-terminals

def test_pty_run_sh_reads_a_line(sb):
    status, out = sb.pty_run(["/bin/sh", "-c", "printf 'name? '; read x; echo got:$x; exit 7"],
                             [(r"name\? ", "zebra\n"), (r"got:zebra", None)])
    assert status == 7
    assert "got:zebra\n" in out


def test_pty_is_the_controlling_terminal_of_a_user(sb):
    sb.add_classic_user("dave")
    status, out = sb.pty_run(["/bin/sh", "-c", "tty; id -un; stat -c %U /dev/tty; "
                              "stty -echo; printf 'pw: '; read p; stty echo; echo; "
                              "echo len=${#p}"],
                             [("pw: ", "secret\n"), ("len=6", None)], user="dave")
    assert status == 0
    lines = out.splitlines()
    assert re.fullmatch(r"/dev/pts/\d+", lines[0]), out
    assert lines[1] == "dave"
    assert "secret" not in out      # echo off: the typed password is not shown


def test_pty_run_step_timeout_raises(sb):
    t0 = time.monotonic()
    with pytest.raises(sandbox.CommandTimeout) as ei:
        sb.pty_run(["/bin/sh", "-c", "echo hello; sleep 30"], [("never printed", None)],
                   timeout=1)
    assert time.monotonic() - t0 < 10
    assert "hello" in ei.value.output


def test_pty_run_fails_fast_when_the_program_exits_before_a_match(sb):
    t0 = time.monotonic()
    with pytest.raises(sandbox.CommandTimeout) as ei:
        sb.pty_run(["/bin/sh", "-c", "echo bye; exit 2"], [("never printed", None)],
                   timeout=20)
    assert time.monotonic() - t0 < 5
    assert "bye" in ei.value.output and "exit status 2" in ei.value.stderr


def test_syslog_is_collected(sb):
    sb.run(["logger", "-t", "hs-test", "marker-123"])
    assert any("marker-123" in m for m in sb.syslog())


# ---------------------------------------------------------------- host-guard

HOST_GUARD = os.path.join(os.path.dirname(sandbox.__file__), "host-guard")


def guard(*args):
    return subprocess.run([HOST_GUARD] + list(args), capture_output=True, text=True)


@pytest.mark.parametrize("change", ["content", "mode", "owner", "added", "removed",
                                    "symlink", "lock", "mtime"])
def test_host_guard_reports_every_kind_of_change(tmp_path, change):
    etc = tmp_path / "etc"
    (etc / "sub").mkdir(parents=True)
    (etc / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (etc / "sub" / "f").write_text("x")
    (etc / ".pwd.lock").write_text("")
    os.symlink("passwd", etc / "link")
    snap = str(tmp_path / "snap.json")
    assert guard("snapshot", snap, str(etc)).returncode == 0
    r = guard("verify", snap, str(etc))
    assert r.returncode == 0, r.stderr
    holder = None
    if change == "content":
        # same size, same mtime: only the digest tells
        mtime = os.stat(etc / "passwd").st_mtime_ns
        (etc / "passwd").write_text("root:x:0:0::/root:/bin/xx\n")
        os.utime(etc / "passwd", ns=(mtime, mtime))
    elif change == "mode":
        os.chmod(etc / "sub" / "f", 0o600)
    elif change == "owner":
        os.chown(etc / "sub" / "f", 12345, 12345)
    elif change == "added":
        (etc / "sub" / "new").write_text("")
    elif change == "removed":
        os.unlink(etc / "sub" / "f")
    elif change == "symlink":
        os.unlink(etc / "link")
        os.symlink("shadow", etc / "link")
    elif change == "mtime":
        os.utime(etc / "passwd", ns=(0, 0))
    elif change == "lock":
        # an fcntl lock, as lckpwdf(3) and our tools take it
        holder = subprocess.Popen(["/usr/bin/python3", "-c",
                                   "import fcntl,time; f=open(%r,'w'); fcntl.lockf(f, "
                                   "fcntl.LOCK_EX); time.sleep(30)" % str(etc / ".pwd.lock")])
        time.sleep(0.3)
    try:
        r = guard("verify", snap, str(etc))
    finally:
        if holder:
            holder.kill()
            holder.wait()
    assert r.returncode == 1, (change, r.stdout, r.stderr)
    assert "changed" in r.stderr or "added" in r.stderr or "removed" in r.stderr


# ---------------------------------------------------------------- clean-up

def mounts():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f]


def test_close_leaves_no_mounts_and_no_processes(base):
    s = sandbox.Sandbox(base)
    root, layer = s.root, s._layer
    assert any(m.startswith(layer) for m in mounts())
    s.sh("setsid sleep 1000 </dev/null >/dev/null 2>&1 &")
    s.close()
    assert not any(m == layer or m.startswith(layer + "/") for m in mounts())
    assert not os.path.exists(layer)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                assert not os.readlink("/proc/%s/root" % pid).startswith(root)
            except (FileNotFoundError, PermissionError):
                pass
    s.close()       # idempotent


def test_refuses_the_host_namespace_check_passes_here():
    sandbox.require_private_mount_ns()     # we run under unshare: must not raise
