"""The shell proxy and its setgid helper (DESIGN.md section 2), driven through Debian's real
util-linux su, as root and as a real user on a pseudo-terminal."""

import stat

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
HELPER = "/usr/libexec/hardened-shadow/shell-helper"
# Debian's util-linux su, copied from the host so the test keeps using it even when the
# build installs a su of its own.
SU = "/usr/local/bin/hs-test-debian-su"

# Prints the shell's own argv, one element a line ($$ is the shell running the command;
# the trailing `true` stops bash from exec'ing the last command in place of itself).
SHOW_ARGV = 'tr "\\0" "\\n" </proc/$$/cmdline; echo "SHELL=$SHELL"; true'


@pytest.fixture
def conv(sb):
    """alice (bash), bob (password, bash), carol (nologin), converted by pwconv, with the
    NSS module answering for shadow so pam_unix in su finds the hashes."""
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.add_classic_user("alice", password="alice-pw")
    sb.add_classic_user("bob", password="bob-pw")
    sb.add_classic_user("carol", password="carol-pw", shell="/usr/sbin/nologin")
    res = sb.run(["/usr/sbin/pwconv"])
    assert "converted" in res.stdout
    sb.set_nsswitch_shadow("hardened_shadow files")
    return sb


def shell_file(name):
    return "/etc/hardened-shadow/%s/shell" % name


def set_shell_file(sb, name, content, **kw):
    """Replace the user's shell file as chsh would (a new file, owned by the user)."""
    pw = sb.getpwnam(name)
    auth_gid = sb.getgrnam("hardened-shadow-auth")[1]
    sb.run(["rm", "-f", shell_file(name)])
    sb.write(shell_file(name), content, mode=kw.get("mode", 0o640), uid=pw.uid, gid=auth_gid)


def test_passwd_names_the_proxy_only_for_etc_shells_shells(conv):
    assert conv.getpwnam("alice").shell == PROXY
    assert conv.getpwnam("carol").shell == "/usr/sbin/nologin"
    assert conv.read(shell_file("alice")) == "/bin/bash\n"
    assert conv.read(shell_file("carol")) == "/usr/sbin/nologin\n"
    st = conv.lstat(HELPER)
    assert stat.S_IMODE(st.st_mode) == 0o2711 and st.st_uid == 0
    assert st.st_gid == conv.getgrnam("hardened-shadow")[1]


def test_login_shell_gets_dash_basename_and_arguments(conv):
    res = conv.run([SU, "-", "alice", "-c", SHOW_ARGV])
    lines = res.stdout.splitlines()
    assert lines[0] == "-bash"
    assert lines[1:3] == ["-c", SHOW_ARGV]
    # the real shell, not the proxy, is what $SHELL names for the session
    assert "SHELL=/bin/bash" in lines
    assert res.stderr == ""


def test_non_login_su_keeps_command_and_extra_arguments(conv):
    res = conv.run([SU, "alice", "-c", 'printf "[%s]" "$0" "$@"; echo; ' + SHOW_ARGV,
                    "zero", "a b", "c"])
    lines = res.stdout.splitlines()
    assert lines[0] == "[zero][a b][c]"
    assert lines[1] == "bash"          # non-login: basename, no dash
    assert lines[-4:-1] == ["zero", "a b", "c"]


def test_proxy_run_directly_by_the_user(conv):
    res = conv.run([PROXY, "-c", 'echo "$0:$(id -un)"'], user="alice")
    assert res.stdout == "bash:alice\n"


def test_real_user_su_to_another_with_password(conv):
    status, out = conv.pty_run([SU, "-", "bob", "-c", 'echo "I am $(id -un)"; ' + SHOW_ARGV],
                               [("Password:", "bob-pw\n")], user="alice")
    assert status == 0, out
    assert "I am bob" in out
    assert "\n-bash\n" in out


def test_wrong_password_does_not_reach_the_shell(conv):
    status, out = conv.pty_run([SU, "-", "bob", "-c", "echo REACHED"],
                               [("Password:", "nope\n")], user="alice")
    assert status != 0
    assert "REACHED" not in out


def test_chsh_style_change_takes_effect_at_next_su(conv):
    set_shell_file(conv, "alice", "/bin/dash\n")
    res = conv.run([SU, "-", "alice", "-c", SHOW_ARGV])
    assert res.stdout.splitlines()[0] == "-dash"
    # the 2012 format without a newline is accepted as well
    set_shell_file(conv, "alice", "/bin/bash")
    res = conv.run([SU, "-", "alice", "-c", SHOW_ARGV])
    assert res.stdout.splitlines()[0] == "-bash"


def assert_clear_failure(res, *needles):
    assert res.returncode != 0
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1, res.stderr
    for n in needles:
        assert n in err[0], res.stderr


@pytest.mark.parametrize("content,needle", [
    ("bash\n", shell_file("alice")),
    ("/nonexistent/shell\n", "No such file or directory"),
    ("/tmp\n", "not a regular file"),
    ("/etc/passwd\n", "Permission denied"),
    (PROXY + "\n", "shell proxy itself"),
    ("/bin/bash\n/bin/sh\n", shell_file("alice")),
    ("", shell_file("alice")),
])
def test_invalid_shell_file_is_a_clear_error(conv, content, needle):
    set_shell_file(conv, "alice", content)
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, needle)
    assert "REACHED" not in res.stdout


def test_missing_shell_file(conv):
    conv.run(["rm", shell_file("alice")])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"), "No such file")


def test_symlinked_shell_file(conv):
    conv.run(["rm", shell_file("alice")])
    conv.run(["ln", "-s", "/etc/hardened-shadow/bob/shell", shell_file("alice")])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"), "symbolic link")


def test_fifo_shell_file_does_not_hang(conv):
    conv.run(["rm", shell_file("alice")])
    conv.run(["mkfifo", "-m", "0640", shell_file("alice")])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"), "not a regular file")


def test_hard_linked_shell_file(conv):
    # alice links her shell file to another file she owns: link count 2 -> refused
    conv.run(["ln", shell_file("alice"), "/etc/hardened-shadow/alice/other"])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"), "link count")


def test_shell_file_owned_by_someone_else(conv):
    # readable, but not alice's: refused on the owner check, not by chance of permissions
    conv.run(["chown", "root", shell_file("alice")])
    conv.run(["chmod", "0644", shell_file("alice")])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"), "wrong owner")
    conv.run(["chown", "bob", shell_file("alice")])
    conv.run(["chmod", "0640", shell_file("alice")])
    res = conv.run([SU, "-", "alice", "-c", "echo REACHED"], check=False, timeout=20)
    assert_clear_failure(res, shell_file("alice"))


def test_directory_owned_by_someone_else(conv):
    conv.run(["chown", "bob", "/etc/hardened-shadow/alice"])
    res = conv.run([HELPER], user="alice", check=False, timeout=20)
    assert_clear_failure(res, "/etc/hardened-shadow/alice")
    # even when the directory is searchable, the owner check refuses it
    conv.run(["chmod", "0755", "/etc/hardened-shadow/alice"])
    res = conv.run([HELPER], user="alice", check=False, timeout=20)
    assert_clear_failure(res, "/etc/hardened-shadow/alice", "wrong owner")


def test_helper_reads_only_the_callers_file(conv):
    set_shell_file(conv, "bob", "/bin/dash\n")
    assert conv.run([HELPER], user="alice").stdout == "/bin/bash\n"
    assert conv.run([HELPER], user="bob").stdout == "/bin/dash\n"
    # no way to name another user: arguments are refused
    res = conv.run([HELPER, "bob"], user="alice", check=False)
    assert_clear_failure(res, "no arguments")
    # and the user still cannot read bob's directory by themselves
    res = conv.run(["cat", shell_file("bob")], user="alice", check=False)
    assert res.returncode != 0


def test_helper_environment_does_not_steer_it(conv):
    # a hostile environment is dropped by the helper (setgid, secure mode)
    res = conv.run([PROXY, "-c", "echo ok"], user="alice",
                   env={"LD_PRELOAD": "/nonexistent.so", "NSS_FILES_passwd": "/tmp/x"})
    assert res.stdout == "ok\n"


def test_helper_gets_an_empty_environment(conv):
    # Stand a recorder in for the helper: whatever the proxy passes reaches it.
    conv.write(HELPER, "#!/bin/sh\nenv > /tmp/helper-env\necho /bin/bash\n", mode=0o755)
    res = conv.run([PROXY, "-c", "echo ok"], user="alice",
                   env={"EDITOR": "/tmp/evil", "PAGER": "/tmp/evil", "INPUTRC": "/tmp/x",
                        "LC_ALL": "C.UTF-8", "LANGUAGE": "de", "TZ": "/tmp/tz",
                        "SHELL": "/tmp/evil", "TERM": "xterm"})
    assert res.stdout == "ok\n"
    seen = [line.split("=", 1)[0] for line in conv.read("/tmp/helper-env").splitlines()]
    # /bin/sh itself adds PWD (and dash nothing else) to an empty environment
    assert set(seen) <= {"PWD", "OLDPWD", "SHLVL", "_"}, seen


def test_user_without_directory(conv):
    conv.run(["rm", "-rf", "/etc/hardened-shadow/alice"])
    # (su itself now fails in PAM: no hash anywhere)
    res = conv.run([PROXY, "-c", "echo REACHED"], user="alice", check=False, timeout=20)
    assert_clear_failure(res, "/etc/hardened-shadow/alice", "No such file")


def test_nologin_user_is_not_proxied(conv):
    res = conv.run([SU, "-", "carol", "-c", "echo REACHED"], check=False, timeout=20)
    assert res.returncode != 0
    assert "REACHED" not in res.stdout
    assert "shell-helper" not in res.stderr
