"""chsh in a throwaway root: a real user changes their own shell through PAM on a pty and
the next `su -` starts it through the shell proxy, without /etc/passwd changing; the
user's refusals (unlisted, non-executable, relative, control characters, the proxy, another
user, a restricted account, a wrong password); root's three cases (a listed shell behind
the proxy, an unlisted one straight into /etc/passwd, and back); the prompt; options and
exit codes; a planted symlink."""

import os
import stat

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

CHSH = "/usr/bin/chsh"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
NOT_SELF_SERVICE = "You may not change the shell for '%s': root sets it (it is not self-service).\n"
TREE = "/etc/hardened-shadow"
# Debian's util-linux su, copied from the host (the build may install a su of its own).
SU = "/usr/local/bin/hs-test-debian-su"
PASSWORDS = {"alice": "alice-pw-1", "bob": "bob-pw-1", "carol": "carol-pw-1"}
# Prints the shell's own argv[0] ($$ is the shell running the command; the trailing `true`
# keeps bash from exec'ing the last command in place of itself).
SHOW_ARGV0 = 'tr "\\0" "\\n" </proc/$$/cmdline | head -n 1; true'
# A shell of our own, executable but not listed in /etc/shells.
UNLISTED = "/usr/local/bin/unlisted-sh"
# Listed in /etc/shells by the fixture, but unusable.
NOEXEC = "/usr/local/bin/noexec-sh"
A_DIRECTORY = "/usr/local/lib"


@pytest.fixture
def conv(sb):
    """alice, bob (bash), carol (nologin) converted by pwconv, PAM on our module."""
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.add_classic_user("alice", password=PASSWORDS["alice"])
    sb.add_classic_user("bob", password=PASSWORDS["bob"])
    sb.add_classic_user("carol", password=PASSWORDS["carol"], shell="/usr/sbin/nologin")
    sb.write(UNLISTED, "#!/bin/sh\nexec /bin/sh \"$@\"\n", mode=0o755)
    sb.write(NOEXEC, "#!/bin/sh\n", mode=0o644)
    sb.write("/etc/shells", sb.read("/etc/shells") + "%s\n%s\nbin/bash\n" % (NOEXEC, A_DIRECTORY))
    sb.use_hardened_tree()
    sb.use_pam_module()
    assert PROXY in sb.read("/etc/shells").splitlines()
    assert sb.getpwnam("alice").shell == PROXY
    assert sb.getpwnam("carol").shell == "/usr/sbin/nologin"
    return sb


def shell_file(sb, name):
    return sb.read("%s/%s/shell" % (TREE, name))


def passwd_line(sb, name):
    return [l for l in sb.read("/etc/passwd").splitlines() if l.startswith(name + ":")][0]


def run(sb, argv, **kw):
    kw.setdefault("check", False)
    return sb.run(argv, **kw)


def as_user(sb, user, args, password=None):
    """chsh ARGS as user, the password on standard input (PAM's conversation reads it
    there when there is no terminal)."""
    pw = PASSWORDS[user] if password is None else password
    return run(sb, [CHSH] + args, user=user, input=pw + "\n")


def login_argv0(sb, user):
    res = sb.run([SU, "-", user, "-c", SHOW_ARGV0])
    return res.stdout.splitlines()[0]


def ls_l(sb, path):
    return sb.run(["ls", "-l", path]).stdout.split()


# ---------------------------------------------------------------- the user

def test_user_changes_own_shell_on_a_pty(conv):
    sb = conv
    passwd_before = sb.read_bytes("/etc/passwd")
    assert login_argv0(sb, "alice") == "-bash"
    status, out = sb.pty_run([CHSH, "-s", "/bin/dash"],
                             [(r"Password: ", PASSWORDS["alice"] + "\n")], user="alice")
    assert status == 0, out
    assert PASSWORDS["alice"] not in out            # no echo
    assert "invalid" not in out and "Warning" not in out
    assert shell_file(sb, "alice") == "/bin/dash\n"
    # /etc/passwd untouched, byte for byte, and no lock or backup left behind
    assert sb.read_bytes("/etc/passwd") == passwd_before
    assert not sb.exists("/etc/passwd.lock")
    # the file is still alice's, in the auth group, 0640
    ls = ls_l(sb, "%s/alice/shell" % TREE)
    assert ls[0] == "-rw-r-----" and ls[2:4] == ["alice", "hardened-shadow-auth"], ls
    assert [f for f in os.listdir(os.path.join(sb.root, TREE.lstrip("/"), "alice"))
            if f.startswith(".")] == []
    # the next login runs it through the proxy
    assert login_argv0(sb, "alice") == "-dash"
    assert sb.getpwnam("alice").shell == PROXY
    assert "changed user 'alice' shell to '/bin/dash'" in "\n".join(sb.syslog())


def test_user_prompt_keeps_or_changes_the_shell(conv):
    sb = conv
    status, out = sb.pty_run([CHSH], [(r"Password: ", PASSWORDS["alice"] + "\n"),
                                      (r"\tLogin Shell \[/bin/bash\]: ", "\n")], user="alice")
    assert status == 0, out
    assert "Changing the login shell for alice\n" in out
    assert "Enter the new value, or press ENTER for the default\n" in out
    assert shell_file(sb, "alice") == "/bin/bash\n"
    status, out = sb.pty_run([CHSH], [(r"Password: ", PASSWORDS["alice"] + "\n"),
                                      (r"Login Shell \[/bin/bash\]: ", "  /bin/dash \n")],
                             user="alice")
    assert status == 0, out
    assert shell_file(sb, "alice") == "/bin/dash\n"
    # blanks only: the empty field, which a user may not set
    status, out = sb.pty_run([CHSH], [(r"Password: ", PASSWORDS["alice"] + "\n"),
                                      (r"Login Shell \[/bin/dash\]: ", "   \n")], user="alice")
    assert status == 1 and "chsh:  is an invalid shell" in out, out
    assert shell_file(sb, "alice") == "/bin/dash\n"


def test_user_on_stdin(conv):
    res = as_user(conv, "alice", ["-s", "/usr/bin/bash"])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "Password: "), res
    assert shell_file(conv, "alice") == "/usr/bin/bash\n"
    # --shell and an explicit own name work the same
    res = as_user(conv, "alice", ["--shell", "/bin/sh", "alice"])
    assert res.returncode == 0, res
    assert shell_file(conv, "alice") == "/bin/sh\n"


@pytest.mark.parametrize("shell,message", [
    (UNLISTED, "chsh: %s is an invalid shell\n" % UNLISTED),
    (NOEXEC, "chsh: %s is an invalid shell\n" % NOEXEC),
    (A_DIRECTORY, "chsh: %s is an invalid shell\n" % A_DIRECTORY),
    ("bin/bash", "chsh: bin/bash is an invalid shell\n"),           # listed, but relative
    ("bash", "chsh: bash is an invalid shell\n"),
    ("/bin/nosuch-sh", "chsh: /bin/nosuch-sh is an invalid shell\n"),
    (PROXY, "chsh: %s is an invalid shell\n" % PROXY),              # listed by pwconv
    ("/bin/ba\x1bsh", "chsh: Invalid entry: /bin/ba\\x1bsh\n"),
    ("/bin/bash\n", "chsh: Invalid entry: /bin/bash\\x0a\n"),
    ("/bin/\x7fbash", "chsh: Invalid entry: /bin/\\x7fbash\n"),
    ("/bin/\u009bbash", "chsh: Invalid entry: /bin/\\xc2\\x9bbash\n"),   # a C1 control
    ("/bin/bash:x", "chsh: Invalid entry: /bin/bash:x\n"),
    ("/bin/bash,x", "chsh: Invalid entry: /bin/bash,x\n"),
    ("", "chsh:  is an invalid shell\n"),
])
def test_user_refused_shells(conv, shell, message):
    passwd_before = conv.read_bytes("/etc/passwd")
    res = as_user(conv, "alice", ["-s", shell])
    assert res.returncode == 1, res
    assert res.stderr.endswith(message), res
    assert shell_file(conv, "alice") == "/bin/bash\n"
    assert conv.read_bytes("/etc/passwd") == passwd_before


def test_user_may_not_change_another_users_shell(conv):
    # refused before any password is asked for
    res = run(conv, [CHSH, "-s", "/bin/dash", "bob"], user="alice", input="")
    assert (res.returncode, res.stderr) == (1, "You may not change the shell for 'bob'.\n")
    res = as_user(conv, "alice", ["-s", "/bin/dash", "bob"])
    assert res.returncode == 1
    res = run(conv, [CHSH, "-s", "/bin/dash", "root"], user="alice", input="")
    assert (res.returncode, res.stderr) == (1, "You may not change the shell for 'root'.\n")
    assert shell_file(conv, "bob") == "/bin/bash\n"
    assert passwd_line(conv, "root").endswith(":/bin/bash")


def test_restricted_user_cannot_change_shell(conv):
    passwd_before = conv.read_bytes("/etc/passwd")
    for args in (["-s", "/bin/bash"], []):
        res = as_user(conv, "carol", args)
        assert (res.returncode, res.stderr) == (1, NOT_SELF_SERVICE % "carol")
    # writing the file behind root's back is pointless: the proxy is not in /etc/passwd
    assert conv.read_bytes("/etc/passwd") == passwd_before
    assert shell_file(conv, "carol") == "/usr/sbin/nologin\n"


def test_wrong_password_refused(conv):
    res = as_user(conv, "alice", ["-s", "/bin/dash"], password="not-the-password")
    assert res.returncode == 1
    assert res.stderr == "Password: chsh: PAM: Authentication failure\n", res
    assert shell_file(conv, "alice") == "/bin/bash\n"
    status, out = conv.pty_run([CHSH], [(r"Password: ", "wrong-again\n")], user="alice")
    assert status == 1 and "chsh: PAM: " in out and "Login Shell" not in out, out
    assert shell_file(conv, "alice") == "/bin/bash\n"
    # no input at all
    res = run(conv, [CHSH, "-s", "/bin/dash"], user="alice", input="")
    assert res.returncode == 1 and "chsh: PAM: " in res.stderr
    assert shell_file(conv, "alice") == "/bin/bash\n"


def test_identity_is_the_real_uid(conv):
    res = run(conv, [CHSH, "-s", "/bin/dash"], user="alice", input=PASSWORDS["alice"] + "\n",
              env={"USER": "bob", "LOGNAME": "bob"})
    assert res.returncode == 0, res
    assert shell_file(conv, "alice") == "/bin/dash\n"
    assert shell_file(conv, "bob") == "/bin/bash\n"
    res = run(conv, [CHSH, "-s", "/bin/dash"], user=12345, input="")
    assert (res.returncode, res.stderr) == (1, "chsh: Cannot determine your user name.\n")


def test_user_repairs_a_missing_shell_file(conv):
    conv.run(["rm", "-f", "%s/alice/shell" % TREE])
    status, out = conv.pty_run([CHSH], [(r"Password: ", PASSWORDS["alice"] + "\n"),
                                        (r"Login Shell \[\]: ", "/bin/dash\n")], user="alice")
    assert status == 0, out
    assert "cannot read /etc/hardened-shadow/alice/shell" in out
    assert shell_file(conv, "alice") == "/bin/dash\n"


# ---------------------------------------------------------------- root

def test_root_sets_listed_unlisted_and_back(conv):
    sb = conv
    passwd_before = sb.read("/etc/passwd")
    others = [l for l in passwd_before.splitlines() if not l.startswith("bob:")]
    auth_gid = sb.getgrnam("hardened-shadow-auth")[1]
    bob = sb.getpwnam("bob")

    # the shell bob runs already: nothing changes, he stays behind the proxy
    res = run(sb, [CHSH, "-s", "/bin/bash", "bob"])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res
    assert sb.read("/etc/passwd") == passwd_before

    # listed: root's choice, out of the proxy, in /etc/passwd and the file
    res = run(sb, [CHSH, "-s", "/bin/dash", "bob"])
    assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res
    assert shell_file(sb, "bob") == "/bin/dash\n"
    st = sb.lstat("%s/bob/shell" % TREE)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (bob.uid, auth_gid, 0o640)
    assert passwd_line(sb, "bob").endswith(":/bin/dash")
    res = as_user(sb, "bob", ["-s", "/bin/bash"])
    assert (res.returncode, res.stderr) == (1, NOT_SELF_SERVICE % "bob")
    passwd_dash = sb.read("/etc/passwd")

    # unlisted: a restriction, straight into /etc/passwd
    res = run(sb, [CHSH, "-s", "/usr/sbin/nologin", "bob"])
    assert res.returncode == 0, res
    assert res.stderr == "chsh: Warning: /usr/sbin/nologin is an invalid shell\n"
    assert passwd_line(sb, "bob") == "bob:x:%d:%d:%s:%s:/usr/sbin/nologin" % (
        bob.uid, bob.gid, bob.gecos, bob.home)
    assert [l for l in sb.read("/etc/passwd").splitlines() if not l.startswith("bob:")] \
        == others
    assert sb.read("/etc/passwd-") == passwd_dash             # shadow-utils' backup
    st = sb.lstat("/etc/passwd")
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o644)
    assert not sb.exists("/etc/passwd.lock")
    assert shell_file(sb, "bob") == "/bin/dash\n"              # left as it was
    # bob can no longer change it, and cannot log in
    res = as_user(sb, "bob", ["-s", "/bin/bash"])
    assert (res.returncode, res.stderr) == (1, NOT_SELF_SERVICE % "bob")
    assert passwd_line(sb, "bob").endswith(":/usr/sbin/nologin")
    res = run(sb, [SU, "-", "bob", "-c", "echo REACHED"])
    assert "REACHED" not in res.stdout

    # listed again: into /etc/passwd and the file; self-service comes back only
    # with usermod --self-service-shell
    res = run(sb, [CHSH, "-s", "/usr/bin/bash", "bob"])
    assert (res.returncode, res.stderr) == (0, ""), res
    assert passwd_line(sb, "bob").endswith(":/usr/bin/bash")
    assert shell_file(sb, "bob") == "/usr/bin/bash\n"
    assert login_argv0(sb, "bob") == "-bash"
    run(sb, ["/usr/sbin/usermod", "--self-service-shell", "bob"])
    assert sb.read("/etc/passwd") == passwd_before
    # and bob may change it himself again
    res = as_user(sb, "bob", ["-s", "/bin/dash"])
    assert res.returncode == 0, res
    assert login_argv0(sb, "bob") == "-dash"
    assert sb.read("/etc/passwd") == passwd_before


def test_root_lifts_a_restriction_set_by_pwconv(conv):
    # carol had nologin before the conversion: a listed shell lifts it, and she stays
    # outside the proxy (SHELL_PROXY is for new accounts)
    res = run(conv, [CHSH, "-s", "/bin/dash", "carol"])
    assert res.returncode == 0, res
    assert passwd_line(conv, "carol").endswith(":/bin/dash")
    assert shell_file(conv, "carol") == "/bin/dash\n"
    assert login_argv0(conv, "carol") == "-dash"


def test_root_warnings_for_unusable_shells(conv):
    res = run(conv, [CHSH, "-s", "/bin/nosuch-sh", "bob"])
    assert res.returncode == 0
    assert res.stderr == ("chsh: Warning: /bin/nosuch-sh is an invalid shell\n"
                          "chsh: Warning: /bin/nosuch-sh does not exist\n")
    assert passwd_line(conv, "bob").endswith(":/bin/nosuch-sh")
    # listed but not executable: in /etc/passwd and the file (it is listed), with a
    # warning
    res = run(conv, [CHSH, "-s", NOEXEC, "bob"])
    assert res.returncode == 0
    assert res.stderr == ("chsh: Warning: %s is an invalid shell\n"
                          "chsh: Warning: %s is not executable\n" % (NOEXEC, NOEXEC))
    assert passwd_line(conv, "bob").endswith(":" + NOEXEC)
    assert shell_file(conv, "bob") == NOEXEC + "\n"
    # an empty field: the default shell, a restriction
    res = run(conv, [CHSH, "-s", "", "bob"])
    assert (res.returncode, res.stderr) == (0, "")
    assert passwd_line(conv, "bob").endswith(":")


@pytest.mark.parametrize("shell,message", [
    ("bash", "chsh: bash is an invalid shell: not an absolute path\n"),
    (PROXY, "chsh: %s is an invalid shell: it is the shell proxy itself\n" % PROXY),
    ("/" + PROXY, "chsh: /%s is an invalid shell: it is the shell proxy itself\n" % PROXY),
    ("/bin/ba\x1bsh", "chsh: Invalid entry: /bin/ba\\x1bsh\n"),
    ("/bin/bash:0:0", "chsh: Invalid entry: /bin/bash:0:0\n"),
    ("/bin/bash\nevil::0:0::/:/bin/sh", "chsh: Invalid entry: /bin/bash\\x0aevil::0:0::/:/bin/sh\n"),
    ("/" + "a" * 5000, "chsh: the login shell is longer than 4096 bytes\n"),
])
def test_root_refused_shells(conv, shell, message):
    passwd_before = conv.read_bytes("/etc/passwd")
    res = run(conv, [CHSH, "-s", shell, "bob"])
    assert res.returncode == 1, res
    assert res.stderr == message
    assert conv.read_bytes("/etc/passwd") == passwd_before
    assert shell_file(conv, "bob") == "/bin/bash\n"


def test_root_own_shell_stays_in_passwd(conv):
    res = run(conv, [CHSH, "-s", "/bin/dash"])
    assert res.returncode == 0, res
    assert passwd_line(conv, "root").endswith(":/bin/dash")
    assert not conv.exists("%s/root/shell" % TREE) or shell_file(conv, "root") != "/bin/dash\n"


def test_root_prompt(conv):
    status, out = conv.pty_run([CHSH, "bob"],
                               [(r"Changing the login shell for bob\n"
                                 r"Enter the new value, or press ENTER for the default\n"
                                 r"\tLogin Shell \[/bin/bash\]: ", "/bin/dash\n")])
    assert status == 0, out
    assert "Password" not in out                  # pam_rootok
    assert shell_file(conv, "bob") == "/bin/dash\n"
    # a restricted account shows its /etc/passwd shell
    status, out = conv.pty_run([CHSH, "carol"],
                               [(r"Login Shell \[/usr/sbin/nologin\]: ", "\n")])
    assert status == 0, out
    assert passwd_line(conv, "carol").endswith(":/usr/sbin/nologin")


def test_root_prompt_on_stdin_keeps_or_refuses(conv):
    passwd_before = conv.read_bytes("/etc/passwd")
    # an overlong line is refused, never cut
    res = run(conv, [CHSH, "bob"], input="/" + "a" * 5000 + "\n")
    assert res.returncode == 1, res
    assert res.stderr == "chsh: the login shell is longer than 4096 bytes\n"
    # end of input before a newline, a NUL before it, an empty first line:
    # the shell kept
    for data in ["/bin/dash", "/bin/dash\0x\n", "\n/bin/dash\n"]:
        res = run(conv, [CHSH, "bob"], input=data)
        assert (res.returncode, res.stderr) == (0, ""), (data, res)
    assert conv.read_bytes("/etc/passwd") == passwd_before
    assert shell_file(conv, "bob") == "/bin/bash\n"


def test_root_replaces_a_planted_symlink_without_following_it(conv):
    passwd_before = conv.read_bytes("/etc/passwd")
    bob = conv.getpwnam("bob")
    tree_gid = conv.getgrnam("hardened-shadow")[1]
    # what bob could do after subverting a setgid tool: his own directory is his
    conv.run(["/usr/bin/setpriv", "--reuid=%d" % bob.uid, "--regid=%d" % bob.gid,
              "--groups=%d" % tree_gid, "--", "/bin/sh", "-c",
              "cd %s/bob && rm -f shell && ln -s /etc/passwd shell" % TREE])
    # reading it for the prompt refuses the link
    status, out = conv.pty_run([CHSH, "bob"], [(r"Login Shell \[\]: ", "/bin/dash\n")])
    assert status == 0, out
    assert "cannot read /etc/hardened-shadow/bob/shell" in out
    # root's shell takes bob out of the proxy; nothing was written through the link
    assert conv.read_bytes("/etc/passwd") == passwd_before.replace(
        b"/home/bob:" + PROXY.encode(), b"/home/bob:/bin/dash")
    st = conv.lstat("%s/bob/shell" % TREE)
    assert stat.S_ISREG(st.st_mode) and st.st_uid == bob.uid
    assert shell_file(conv, "bob") == "/bin/dash\n"


# ---------------------------------------------------------------- options, install

def test_options_and_exit_codes(conv):
    res = run(conv, [CHSH, "--help"], user="alice")
    assert res.returncode == 0 and res.stdout.startswith("Usage: chsh [options] [LOGIN]\n")
    assert "  -s, --shell SHELL             new login shell for the user account\n" \
        in res.stdout
    res = run(conv, [CHSH, "-h"])
    assert res.returncode == 0 and res.stderr == ""
    res = run(conv, [CHSH, "--version"])
    assert res.returncode == 0 and res.stdout.startswith("chsh (hardened-shadow) ")
    res = run(conv, [CHSH, "-R", "/mnt", "-s", "/bin/dash", "bob"])
    assert res.returncode == 2 and "--root is not supported" in res.stderr
    res = run(conv, [CHSH, "-Z"])
    assert res.returncode == 2 and "Usage: chsh" in res.stderr
    res = run(conv, [CHSH, "-s"])
    assert res.returncode == 2
    res = run(conv, [CHSH, "-s", "/bin/dash", "bob", "alice"])
    assert res.returncode == 2
    res = run(conv, [CHSH, "-s", "/bin/dash", "nosuch"])
    assert (res.returncode, res.stderr) == (1, "chsh: user 'nosuch' does not exist\n")
    for bad in ("../etc", "a:b", "-", "x" * 40):
        res = run(conv, [CHSH, "-s", "/bin/dash", "--", bad])
        assert (res.returncode, res.stderr) == (
            1, "chsh: Provided user name is not a valid name\n"), bad
    assert shell_file(conv, "bob") == "/bin/bash\n"


def test_installed_setgid_not_setuid(conv):
    st = conv.lstat(CHSH)
    tree_gid = conv.getgrnam("hardened-shadow")[1]
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, tree_gid, 0o2711)
