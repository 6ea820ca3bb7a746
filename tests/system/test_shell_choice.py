"""Who gets the shell proxy (docs/decisions.md "chsh"): by default (login.defs without
SHELL_PROXY) /etc/passwd holds the real shell, as configuration management expects, and
the user's `shell` file holds the same; `--self-service-shell` (useradd, usermod) or
SHELL_PROXY yes puts an account with a listed shell behind the proxy, and
`--no-self-service-shell` takes it out again.  A user outside the proxy cannot change
their shell (one line saying why); root can, and a different shell from root (usermod -s,
chsh, newusers) takes the account out of the proxy: root's choice, e.g. a restricted
shell that /etc/shells lists (rbash), must hold.  So does uid 0.  `usermod -s` with the shell the account
already has writes nothing: /etc/passwd, its backup and the shell file keep their inode
and mtime, and not even a lock file comes and goes in /etc."""

import pytest

PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
TREE = "/etc/hardened-shadow"
# Debian's util-linux su, copied from the host (the build may install a su of its own).
SU = "/usr/local/bin/hs-test-debian-su"
PW = "alice-pw-1"


@pytest.fixture
def tree(sb):
    """A converted root with login.defs as shipped (no SHELL_PROXY line), PAM on our
    module, and Debian's su for the logins."""
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.set_login_defs("SHELL_PROXY", None)
    sb.add_classic_user("carol", password=PW)
    sb.use_hardened_tree()
    sb.use_pam_module()
    return sb


def shell_file(sb, name):
    return sb.read("%s/%s/shell" % (TREE, name))


def usermod(sb, *args):
    return sb.run(["/usr/sbin/usermod"] + list(args), check=False)


def snapshot(sb, name):
    """What a write would change: inode and mtime of passwd, its backup and the shell
    file, the names in /etc (no lock or journal left) and its mtime (no lock file came
    and went)."""
    out = {}
    for path in ("/etc", "/etc/passwd", "/etc/passwd-", "%s/%s/shell" % (TREE, name)):
        if sb.exists(path):
            st = sb.lstat(path)
            out[path] = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    out["names in /etc"] = sorted(sb.run(["ls", "-A", "/etc"]).stdout.split())
    return out


def test_pwconv_keeps_real_shells_but_lists_the_proxy(tree):
    assert tree.getpwnam("carol").shell == "/bin/bash"
    assert shell_file(tree, "carol") == "/bin/bash\n"
    assert PROXY in tree.read("/etc/shells").splitlines()


def test_useradd_default_puts_the_real_shell_in_passwd(tree):
    tree.run(["/usr/sbin/useradd", "-m", "-s", "/bin/bash", "alice"])
    assert tree.getpwnam("alice").shell == "/bin/bash"
    assert tree.run(["getent", "passwd", "alice"]).stdout.rstrip().endswith(":/bin/bash")
    assert tree.run(["getent", "passwd", "alice"], user="carol").stdout.rstrip() \
        .endswith(":/bin/bash")
    assert shell_file(tree, "alice") == "/bin/bash\n"


def test_usermod_same_shell_writes_nothing(tree):
    tree.run(["/usr/sbin/useradd", "-m", "-s", "/bin/bash", "alice"])
    tree.run(["/usr/sbin/useradd", "-m", "-s", "/bin/bash", "--self-service-shell", "bob"])
    assert tree.getpwnam("bob").shell == PROXY
    for name in ("alice", "bob"):
        # a first change makes the backup, so the second one would replace it
        keep = ["--self-service-shell"] if name == "bob" else []
        assert usermod(tree, "-s", "/bin/dash", *keep, name).returncode == 0
        before = snapshot(tree, name)
        for args in (["-s", "/bin/dash"], ["-s", "/bin/dash", "-s", "/bin/dash"]):
            res = usermod(tree, *args, name)
            assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
            assert snapshot(tree, name) == before, (name, args)
        # an account outside the proxy stays outside, one behind it stays behind
        assert tree.getpwnam(name).shell == (PROXY if name == "bob" else "/bin/dash")
        assert shell_file(tree, name) == "/bin/dash\n"
    # the option that is already so changes nothing either
    before = snapshot(tree, "bob")
    assert usermod(tree, "--self-service-shell", "bob").returncode == 0
    assert snapshot(tree, "bob") == before
    before = snapshot(tree, "alice")
    assert usermod(tree, "--no-self-service-shell", "alice").returncode == 0
    assert snapshot(tree, "alice") == before


def test_self_service_in_and_out(tree):
    tree.run(["/usr/sbin/useradd", "-m", "-s", "/bin/bash", "alice"])
    assert usermod(tree, "--self-service-shell", "alice").returncode == 0
    assert tree.getpwnam("alice").shell == PROXY
    assert shell_file(tree, "alice") == "/bin/bash\n"
    assert usermod(tree, "--no-self-service-shell", "-s", "/bin/dash", "alice").returncode == 0
    assert tree.getpwnam("alice").shell == "/bin/dash"
    assert shell_file(tree, "alice") == "/bin/dash\n"
    # a restricted shell cannot be self-service: refused, nothing changed
    passwd = tree.read_bytes("/etc/passwd")
    res = usermod(tree, "--self-service-shell", "-s", "/usr/sbin/nologin", "alice")
    assert res.returncode == 3
    assert res.stderr == ("usermod: shell '/usr/sbin/nologin' cannot be self-service: it "
                          "needs a shell listed in /etc/shells, a directory in %s and a "
                          "uid other than 0\n" % TREE)
    assert tree.read_bytes("/etc/passwd") == passwd
    res = tree.run(["/usr/sbin/useradd", "--self-service-shell", "-s", "/usr/sbin/nologin",
                    "dave"], check=False)
    assert res.returncode == 3 and "cannot be self-service" in res.stderr
    assert "dave:" not in tree.read("/etc/passwd")


def test_login_defs_shell_proxy_yes(tree):
    tree.set_login_defs("SHELL_PROXY", "yes")
    tree.run(["/usr/sbin/useradd", "-s", "/bin/bash", "alice"])
    tree.run(["/usr/sbin/useradd", "-s", "/bin/bash", "--no-self-service-shell", "bob"])
    assert tree.getpwnam("alice").shell == PROXY
    assert tree.getpwnam("bob").shell == "/bin/bash"
    # bob's listed shell in /etc/passwd was root's choice: a new one keeps him out
    assert usermod(tree, "-s", "/bin/dash", "bob").returncode == 0
    assert tree.getpwnam("bob").shell == "/bin/dash"
    # a restriction lifted stays root's: SHELL_PROXY is for new accounts only
    assert usermod(tree, "-s", "/usr/sbin/nologin", "bob").returncode == 0
    assert usermod(tree, "-s", "/bin/bash", "bob").returncode == 0
    assert tree.getpwnam("bob").shell == "/bin/bash"


def test_user_outside_the_proxy_may_not_chsh_but_root_may(tree):
    passwd = tree.read_bytes("/etc/passwd")
    res = tree.run(["/usr/bin/chsh", "-s", "/bin/dash"], user="carol", input="", check=False)
    assert (res.returncode, res.stderr) == (
        1, "You may not change the shell for 'carol': root sets it (it is not "
        "self-service).\n")
    assert tree.read_bytes("/etc/passwd") == passwd
    tree.run(["/usr/bin/chsh", "-s", "/bin/dash", "carol"])
    assert tree.getpwnam("carol").shell == "/bin/dash"          # still outside
    assert shell_file(tree, "carol") == "/bin/dash\n"
    # and the login runs it, without the proxy
    res = tree.run([SU, "-", "carol", "-c", "echo $0"], check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1].endswith("dash")


def test_pwunconv_round_trip_without_the_proxy(tree):
    tree.run(["/usr/sbin/useradd", "-s", "/bin/dash", "alice"])
    tree.run(["/usr/sbin/useradd", "-s", "/bin/bash", "--self-service-shell", "bob"])
    tree.run(["/usr/sbin/pwunconv"])
    assert not tree.exists(TREE)
    assert [tree.getpwnam(n).shell for n in ("alice", "bob", "carol")] == \
        ["/bin/dash", "/bin/bash", "/bin/bash"]
    assert PROXY not in tree.read("/etc/shells").splitlines()


def test_newusers_follows_the_same_rule(tree):
    tree.run(["/usr/sbin/useradd", "-s", "/bin/bash", "--self-service-shell", "bob"])
    tree.run(["/usr/sbin/useradd", "-s", "/bin/bash", "--self-service-shell", "dave"])
    tree.run(["/usr/sbin/newusers", "-c", "SHA512", "-s", "1000"],
             input="alice:pw-Alice-1::::/home/alice:/bin/dash\n"
                   "bob::::::/bin/bash\ncarol::::::/bin/dash\ndave::::::/bin/rbash\n")
    # a new account outside the proxy; bob keeps his shell and stays behind it, carol
    # stays outside, and dave's new shell is root's: out of the proxy
    assert tree.getpwnam("alice").shell == "/bin/dash"
    assert tree.getpwnam("bob").shell == PROXY
    assert tree.getpwnam("carol").shell == "/bin/dash"
    assert tree.getpwnam("dave").shell == "/bin/rbash"
    for name, shell in (("alice", "/bin/dash"), ("bob", "/bin/bash"),
                        ("carol", "/bin/dash"), ("dave", "/bin/rbash")):
        assert shell_file(tree, name) == shell + "\n", name


def carol_chsh_refused(sb, shell):
    """carol tries to change her shell on her terminal: refused, before any password,
    and nothing changed."""
    passwd, mine = sb.read_bytes("/etc/passwd"), shell_file(sb, "carol")
    status, out = sb.pty_run(["/usr/bin/chsh", "-s", shell], [], user="carol", timeout=10)
    assert status == 1, out
    assert "You may not change the shell for 'carol': root sets it" in out
    assert (sb.read_bytes("/etc/passwd"), shell_file(sb, "carol")) == (passwd, mine)


def carol_chsh(sb, shell):
    status, out = sb.pty_run(["/usr/bin/chsh", "-s", shell], [(r"Password: ", PW + "\n")],
                             user="carol")
    assert status == 0, out
    assert shell_file(sb, "carol") == shell + "\n"


def test_usermod_restriction_with_a_listed_shell_holds(tree):
    """Debian's /etc/shells lists /bin/rbash: root's restriction to it takes carol out
    of the proxy, so she cannot change it back; self-service comes back only when root
    says so."""
    assert "/bin/rbash" in tree.read("/etc/shells").splitlines()
    assert usermod(tree, "--self-service-shell", "carol").returncode == 0
    assert usermod(tree, "-s", "/bin/rbash", "carol").returncode == 0
    assert tree.getpwnam("carol").shell == "/bin/rbash"
    assert shell_file(tree, "carol") == "/bin/rbash\n"
    carol_chsh_refused(tree, "/bin/bash")
    assert usermod(tree, "-s", "/bin/bash", "--self-service-shell", "carol").returncode == 0
    assert tree.getpwnam("carol").shell == PROXY
    carol_chsh(tree, "/bin/dash")


def test_root_chsh_restriction_holds(tree):
    assert usermod(tree, "--self-service-shell", "carol").returncode == 0
    # the shell she runs already: nothing written, still behind the proxy
    before = snapshot(tree, "carol")
    res = tree.run(["/usr/bin/chsh", "-s", "/bin/bash", "carol"], check=False)
    assert (res.returncode, res.stderr) == (0, "")
    assert snapshot(tree, "carol") == before
    assert tree.getpwnam("carol").shell == PROXY
    # another one is root's choice
    tree.run(["/usr/bin/chsh", "-s", "/bin/rbash", "carol"])
    assert tree.getpwnam("carol").shell == "/bin/rbash"
    assert shell_file(tree, "carol") == "/bin/rbash\n"
    carol_chsh_refused(tree, "/bin/bash")


def test_opt_out_survives_a_restriction_under_shell_proxy_yes(tree):
    tree.set_login_defs("SHELL_PROXY", "yes")
    assert usermod(tree, "--no-self-service-shell", "carol").returncode == 0
    assert usermod(tree, "-s", "/usr/sbin/nologin", "carol").returncode == 0
    assert usermod(tree, "-s", "/bin/rbash", "carol").returncode == 0
    assert tree.getpwnam("carol").shell == "/bin/rbash"
    carol_chsh_refused(tree, "/bin/bash")


def test_uid_0_leaves_the_proxy(tree):
    assert usermod(tree, "--self-service-shell", "carol").returncode == 0
    assert usermod(tree, "-u", "0", "-o", "carol").returncode == 0
    pw = tree.getpwnam("carol")
    assert (pw.uid, pw.shell) == (0, "/bin/bash")
