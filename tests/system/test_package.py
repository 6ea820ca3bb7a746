"""The Debian package's life cycle (issue 12 section 1) in a throwaway root with the
real package tools: apt-get install, hardened-shadow-enable, login/su/passwd/useradd on
the pam-auth-update generated common-* files, Debian's passwd and login upgraded over
it, hardened-shadow-disable, purge, and the stock files back byte for byte.

The root is an overlay of the host's "/" without our build installed (Base(...,
install=False)): dpkg's database in it is the host's copy and every write goes to the
sandbox's tmpfs (checked below before dpkg runs).  The .deb is the one `make deb` left
in dist/ (or $HS_DEB); without one the test is skipped."""

import glob
import os
import subprocess

import pytest

import sandbox

ALICE_PW = "Alice-pkg-pw-1"
BOB_PW = "Bob-pkg-pw-2"
ALICE_NEW = "Tulip-new-pw-9"
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
# Debian's own packages, newer than the host's, as a security update would bring them
ARCHIVES = "/var/cache/apt/archives"
# what a dry run may not touch
CONFIG = ("/etc/nsswitch.conf", "/etc/pam.d/common-auth", "/etc/pam.d/common-account",
          "/etc/pam.d/common-password", "/etc/pam.d/common-session", "/etc/shadow",
          "/etc/passwd")


def the_deb(source_dir):
    if os.environ.get("HS_DEB"):
        return os.environ["HS_DEB"]
    debs = sorted(glob.glob(os.path.join(source_dir, "dist", "hardened-shadow_*.deb")))
    if not debs:
        pytest.skip("no package built: run `make deb` first (dist/hardened-shadow_*.deb)")
    return debs[-1]


@pytest.fixture(scope="module")
def stock_base(build_dir):
    b = sandbox.Base(build_dir, install=False)
    yield b
    b.close()


@pytest.fixture
def pkg(stock_base):
    with sandbox.Sandbox(stock_base, size="1g") as s:
        yield s


def run(sb, argv, **kw):
    return sb.run(argv, env=ENV, timeout=300, **kw)


def stock_files_intact(sb):
    res = run(sb, ["dpkg", "-V", "passwd", "login", "util-linux"], check=False)
    return res.returncode == 0 and res.stdout.strip() == "", res.stdout + res.stderr


def authenticates(sb, user, pw, service="login"):
    status, out = sb.pty_run(["/usr/bin/pamtester", service, user, "authenticate",
                              "acct_mgmt"], [("Password: ", pw + "\n")])
    return status == 0 and "successfully authenticated" in out, out


def install_the_deb(sb):
    """The built package, installed into the root with apt-get."""
    deb = the_deb(sb.base.source_dir)
    with open(deb, "rb") as f:
        sb.write("/root/" + os.path.basename(deb), f.read(), mode=0o644)
    run(sb, ["apt-get", "install", "-y", "/root/" + os.path.basename(deb)])


def install_sshd_pam_file(sb):
    """sshd's PAM stack, /etc/pam.d/sshd as Debian's openssh-server ships it, taken out of
    the package that tools/install-deps downloads into apt's cache (the host gets no
    sshd).  Only that file: pamtester needs no sshd binary to run the stack."""
    debs = sorted(glob.glob(ARCHIVES + "/openssh-server_*.deb"))
    assert debs, "no openssh-server .deb in %s: run tools/install-deps" % ARCHIVES
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", debs[-1]], check=True,
                         stdout=subprocess.PIPE).stdout
    conf = subprocess.run(["tar", "-xO", "./etc/pam.d/sshd"], input=tar, check=True,
                          stdout=subprocess.PIPE).stdout
    assert b"@include common-auth" in conf
    sb.write("/etc/pam.d/sshd", conf, mode=0o644)


def diverted_paths(source_dir):
    with open(os.path.join(source_dir, "debian", "diversions")) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def stock_modes(sb, paths):
    """Owner, group and mode of each of Debian's files (dpkg -V compares only their
    contents)."""
    return sb.modes(paths)


def setid_distrib(sb):
    """Debian's programs diverted to .distrib that still have a setuid or setgid bit."""
    out = []
    for p in ("/usr/bin/passwd", "/usr/bin/chsh", "/usr/bin/chfn", "/usr/bin/gpasswd",
              "/usr/bin/chage", "/usr/bin/newgrp", "/bin/su", "/usr/bin/newuidmap"):
        d = p + ".distrib"
        if sb.exists(d) and sb.lstat(d).st_mode & 0o6000:
            out.append(d)
    return out


def config_snapshot(sb):
    return {p: sb.read_bytes(p) if sb.exists(p) else None for p in CONFIG}


def shadow_sources(sb):
    """The sources of nsswitch.conf's shadow: line."""
    for line in sb.read("/etc/nsswitch.conf").splitlines():
        if line.split()[:1] == ["shadow:"]:
            return line.split("#")[0].split()[1:]
    return []


def test_package_life_cycle(pkg, build_dir):
    sb = pkg
    deb = the_deb(pkg.base.source_dir)
    # dpkg's database must be the sandbox's copy: on the root's overlay, not a mount
    # of the host's
    root_dev = os.stat(sb.root).st_dev
    for d in ("/var/lib/dpkg", "/etc", "/usr/bin", "/var/cache/apt"):
        assert os.stat(sb.root + d).st_dev == root_dev, d
    # the host has pam_pwquality enabled but no cracklib dictionary: keep the module in
    # the stack, without the dictionary check (this root only)
    if sb.exists("/etc/security/pwquality.conf"):
        sb.write("/etc/security/pwquality.conf",
                 sb.read("/etc/security/pwquality.conf") + "\ndictcheck = 0\n")
    sb.add_classic_user("alice", password=ALICE_PW)
    sb.add_classic_user("bob", password=BOB_PW)
    # a NIS compat line with a hash of its own is no account: enable must not read it
    # back from the tree (and give up), pwconv and pwunconv carry it across
    nis_line = "+nisuser:$6$nissalt$nishash:::::::\n"
    sb.write("/etc/shadow", sb.read("/etc/shadow") + nis_line, mode=0o640,
             gid=sb.getgrnam("shadow")[1])
    stock_passwd = sb.read_bytes("/usr/bin/passwd")
    stock = stock_modes(sb, diverted_paths(pkg.base.source_dir))
    assert stock["/usr/bin/passwd"][0] & 0o7777 == 0o4755

    with open(deb, "rb") as f:
        sb.write("/root/" + os.path.basename(deb), f.read(), mode=0o644)
    res = run(sb, ["apt-get", "install", "-y",
                   "/root/" + os.path.basename(deb)], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    # installed over Debian's files, which moved aside
    assert sb.read_bytes("/usr/bin/passwd.distrib") == stock_passwd
    assert sb.read_bytes("/usr/bin/passwd") != stock_passwd
    diversions = run(sb, ["dpkg-divert", "--list", "hardened-shadow"]).stdout
    for path in ("/usr/bin/passwd", "/bin/login", "/bin/su", "/usr/share/man/man1/passwd.1.gz"):
        assert "diversion of %s to %s.distrib by hardened-shadow" % (path, path) in diversions
    # Debian's setuid programs are not left setuid under their new names: users could
    # still run the code the package takes out of the trusted base
    assert sb.exists("/usr/bin/chfn.distrib")
    assert setid_distrib(sb) == []
    tree_gid = sb.getgrnam("hardened-shadow")[1]
    st = sb.lstat("/usr/bin/passwd")
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o2711, 0, tree_gid)
    assert sb.lstat("/usr/bin/su").st_mode & 0o7777 == 0o4755
    # a user's own password change and chage -l reach the audit log: cap_audit_write,
    # permitted only, on those two and nothing else
    for path, caps in (("/usr/bin/passwd", "cap_audit_write=p"),
                       ("/usr/bin/chage", "cap_audit_write=p"), ("/usr/bin/chsh", "")):
        got = run(sb, ["getcap", path]).stdout.split()
        assert got == ([path, caps] if caps else []), got
    # installing converted nothing
    assert not sb.exists("/etc/hardened-shadow")
    assert "pam_unix.so" in sb.read("/etc/pam.d/common-auth")

    install_sshd_pam_file(sb)
    ok, out = authenticates(sb, "alice", ALICE_PW, service="sshd")
    assert ok, out
    sources = shadow_sources(sb)
    others = [x for x in sources if x != "files"]

    # the dry run says what would change and changes nothing
    before = config_snapshot(sb)
    res = run(sb, ["hardened-shadow-enable", "--dry-run"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "dry run, not done: /etc/shadow converted to /etc/hardened-shadow (pwconv: " in out
    assert "dry run, not done: /etc/pam.d/common-*: profile hardened-shadow enabled" in out
    assert '"shadow:         %s"' % " ".join(["hardened_shadow"] + others) in out, out
    assert "check: no account would become unable to log in" in out, out
    assert config_snapshot(sb) == before
    assert not sb.exists("/etc/hardened-shadow")
    assert not sb.exists("/var/lib/hardened-shadow/nsswitch-shadow")

    pwquality = "pam_pwquality.so" in sb.read("/etc/pam.d/common-password")
    res = run(sb, ["hardened-shadow-enable"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    # the other profiles stay
    assert ("pam_pwquality.so" in sb.read("/etc/pam.d/common-password")) == pwquality
    assert "pwconv" in res.stdout and "common-*" in res.stdout, res.stdout
    assert sb.exists("/etc/hardened-shadow/alice/shadow")
    assert not sb.exists("/etc/shadow")
    auth = sb.read("/etc/pam.d/common-auth")
    assert "pam_hardened_shadow.so" in auth and "pam_unix.so" not in auth, auth
    # the sources besides files (systemd, sss, ...) stay: their accounts still log in
    assert shadow_sources(sb) == ["hardened_shadow"] + others
    # a second run has nothing left to do
    res = run(sb, ["hardened-shadow-enable"])
    assert res.stdout == "", res.stdout

    # removal refused while converted
    res = run(sb, ["apt-get", "remove", "-y", "hardened-shadow"], check=False)
    assert res.returncode != 0
    assert "run hardened-shadow-disable first" in res.stdout + res.stderr

    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out
    ok, out = authenticates(sb, "alice", BOB_PW)
    assert not ok, out
    # a screen locker: the user checks their own password, through the helper
    status, out = sb.pty_run(["/usr/bin/pamtester", "login", "alice", "authenticate"],
                             [("Password: ", ALICE_PW + "\n")], user="alice")
    assert status == 0 and "successfully authenticated" in out, out
    # sshd's stack (its @include common-auth/-account) goes through our module now
    ok, out = authenticates(sb, "alice", ALICE_PW, service="sshd")
    assert ok, out
    ok, out = authenticates(sb, "alice", BOB_PW, service="sshd")
    assert not ok, out
    status, out = sb.pty_run(["/usr/bin/su", "-c", "id -un", "alice"],
                             [("Password: ", ALICE_PW + "\n")], user="bob")
    assert status == 0 and "alice" in out, out
    status, out = sb.pty_run(["/usr/bin/passwd"], [("Current password: ", ALICE_PW + "\n"),
                                                   ("New password: ", "Tulip-new-pw-9\n"),
                                                   ("Retype new password: ", "Tulip-new-pw-9\n")],
                             user="alice")
    assert status == 0, out
    ok, out = authenticates(sb, "alice", ALICE_NEW)
    assert ok, out
    run(sb, ["useradd", "-m", "carol"])
    assert sb.exists("/etc/hardened-shadow/carol")

    # Debian's updates of passwd and login, unpacked over ours: ours stay in place
    updates = sorted(glob.glob(ARCHIVES + "/passwd_*.deb") + glob.glob(ARCHIVES + "/login_*.deb"))
    if updates:
        ours = sb.read_bytes("/usr/bin/passwd")
        res = run(sb, ["dpkg", "-i"] + updates, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert sb.read_bytes("/usr/bin/passwd") == ours
        # the updates' files lost their bits too (our file trigger)
        assert setid_distrib(sb) == []
    # uidmap installed after us (rootless containers): its setuid newuidmap lands in
    # .distrib, loses its bit while diverted and gets it back after the purge
    uidmap = sorted(glob.glob(ARCHIVES + "/uidmap_*.deb") + glob.glob(ARCHIVES + "/libsubid4_*.deb"))
    if len(uidmap) == 2 and not sb.exists("/usr/bin/newuidmap.distrib"):
        res = run(sb, ["dpkg", "-i"] + uidmap, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert sb.exists("/usr/bin/newuidmap.distrib")
        assert setid_distrib(sb) == []
    else:
        uidmap = []
        ok, out = authenticates(sb, "alice", ALICE_NEW)
        assert ok, out

    before = config_snapshot(sb)
    res = run(sb, ["hardened-shadow-disable", "--dry-run"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "dry run, not done: /etc/hardened-shadow converted back to /etc/shadow" in res.stdout
    assert config_snapshot(sb) == before and sb.exists("/etc/hardened-shadow/alice")
    res = run(sb, ["hardened-shadow-disable"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not sb.exists("/etc/hardened-shadow")
    assert sb.read("/etc/shadow").endswith(nis_line)
    assert "pam_unix.so" in sb.read("/etc/pam.d/common-auth")
    assert shadow_sources(sb) == sources
    ok, out = authenticates(sb, "alice", ALICE_NEW, service="sshd")
    assert ok, out
    res = run(sb, ["apt-get", "purge", "-y", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr

    ok, out = stock_files_intact(sb)
    assert ok, out
    # with their modes: dpkg gave the updates of passwd, diverted to .distrib, the
    # statoverrides of our files of the same name (passwd setgid hardened-shadow, not
    # setuid root, would leave users unable to change their password)
    assert stock_modes(sb, stock) == stock
    if uidmap:
        st = sb.lstat("/usr/bin/newuidmap")
        assert (st.st_mode & 0o7777, st.st_uid) == (0o4755, 0)
    if not updates:
        assert sb.read_bytes("/usr/bin/passwd") == stock_passwd
    assert run(sb, ["dpkg-divert", "--list", "hardened-shadow"]).stdout == ""
    assert run(sb, ["dpkg-statoverride", "--list", "/usr/bin/passwd"], check=False).stdout == ""
    for user, pw in (("alice", ALICE_NEW), ("bob", BOB_PW)):
        ok, out = authenticates(sb, user, pw)
        assert ok, (user, out)


def test_package_keeps_the_administrators_statoverride(pkg):
    """An override the administrator made before installing wins over our modes, and
    survives the purge; ours are gone after it."""
    sb = pkg
    deb = the_deb(pkg.base.source_dir)
    run(sb, ["dpkg-statoverride", "--add", "root", "root", "0750", "/usr/bin/chage"])
    with open(deb, "rb") as f:
        sb.write("/root/" + os.path.basename(deb), f.read(), mode=0o644)
    res = run(sb, ["apt-get", "install", "-y", "/root/" + os.path.basename(deb)], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    st = sb.lstat("/usr/bin/chage")
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o750, 0, 0)
    assert run(sb, ["dpkg-statoverride", "--list", "/usr/bin/chage"]).stdout.split() == \
        ["root", "root", "750", "/usr/bin/chage"]
    assert sb.lstat("/usr/bin/passwd").st_mode & 0o7777 == 0o2711   # ours elsewhere
    # the administrator's chage gets no capability of ours either
    assert run(sb, ["getcap", "/usr/bin/chage"]).stdout == ""
    assert "cap_audit_write=p" in run(sb, ["getcap", "/usr/bin/passwd"]).stdout
    res = run(sb, ["apt-get", "purge", "-y", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert run(sb, ["dpkg-statoverride", "--list", "/usr/bin/chage"]).stdout.split() == \
        ["root", "root", "750", "/usr/bin/chage"]
    assert run(sb, ["dpkg-statoverride", "--list", "/usr/bin/passwd"],
               check=False).stdout == ""
    ok, out = stock_files_intact(sb)
    assert ok, out


def test_enable_stopped_half_way_leaves_a_working_system(pkg):
    """enable stopped at the PAM step (pam-auth-update failing stands in for an
    interruption there) leaves the tree in place and pam_unix in common-*: every account
    still authenticates (pam_unix through our NSS module), and a second run finishes."""
    sb = pkg
    sb.add_classic_user("alice", password=ALICE_PW)
    install_the_deb(sb)
    real = sb.read_bytes("/usr/sbin/pam-auth-update")
    sb.write("/usr/sbin/pam-auth-update", "#!/bin/sh\nexit 1\n", mode=0o755)
    res = run(sb, ["hardened-shadow-enable"], check=False)
    assert res.returncode != 0, res.stdout + res.stderr
    assert sb.exists("/etc/hardened-shadow/alice/shadow")
    assert "pam_unix.so" in sb.read("/etc/pam.d/common-auth")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out
    sb.write("/usr/sbin/pam-auth-update", real, mode=0o755)
    res = run(sb, ["hardened-shadow-enable"])
    assert "pwconv" not in res.stdout and "common-*" in res.stdout, res.stdout
    assert "pam_hardened_shadow.so" in sb.read("/etc/pam.d/common-auth")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out


def test_enable_refuses_what_would_lock_everyone_out(pkg):
    """With the PAM module gone, switching common-* to it would lock every account out:
    the dry run names the problem and fails, and enable stops before changing anything."""
    sb = pkg
    sb.add_classic_user("alice", password=ALICE_PW)
    install_the_deb(sb)
    module = run(sb, ["dpkg", "-L", "hardened-shadow"]).stdout.split()
    module = [p for p in module if p.endswith("/pam_hardened_shadow.so")][0]
    run(sb, ["mv", module, "/root/"])
    before = config_snapshot(sb)
    for argv in (["hardened-shadow-enable", "--dry-run"], ["hardened-shadow-enable"]):
        res = run(sb, argv, check=False)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "pam_hardened_shadow.so is not installed" in res.stderr, res.stderr
        assert "nothing changed" in res.stderr, res.stderr
        assert config_snapshot(sb) == before
        assert not sb.exists("/etc/hardened-shadow")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out
    res = run(sb, ["hardened-shadow-enable", "--bogus"], check=False)
    assert res.returncode == 1 and "unknown argument" in res.stderr, res.stderr


def test_package_removable_after_sysusers_made_an_account(pkg):
    """A package installed on the converted system makes a system user with
    systemd-sysusers, which writes it to a new /etc/shadow next to the tree.
    hardened-shadow-disable carries that account back and the package can be purged;
    a name in both the tree and /etc/shadow is still refused, changing nothing."""
    sb = pkg
    if not sb.exists("/usr/bin/systemd-sysusers"):
        pytest.skip("systemd-sysusers is not installed")
    sb.add_classic_user("alice", password=ALICE_PW)
    install_the_deb(sb)
    run(sb, ["hardened-shadow-enable"])
    sb.write("/usr/lib/sysusers.d/hs-test-svc.conf", 'u hs-test-svc - "Svc" /nonexistent\n')
    run(sb, ["systemd-sysusers", "hs-test-svc.conf"])
    assert sb.exists("/etc/shadow") and sb.exists("/etc/hardened-shadow/alice")
    # the ambiguous state: alice in both
    sysusers_shadow = sb.read_bytes("/etc/shadow")
    sb.write("/etc/shadow", sysusers_shadow + b"alice:$6$x$y:20000:0:99999:7:::\n", mode=0)
    before = config_snapshot(sb)
    res = run(sb, ["hardened-shadow-disable"], check=False)
    assert res.returncode == 1 and "hold alice" in res.stderr, res.stdout + res.stderr
    assert config_snapshot(sb) == before
    sb.write("/etc/shadow", sysusers_shadow, mode=0)
    res = run(sb, ["hardened-shadow-disable", "--dry-run"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    res = run(sb, ["hardened-shadow-disable"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not sb.exists("/etc/hardened-shadow")
    names = [l.split(":")[0] for l in sb.read("/etc/shadow").splitlines()]
    assert "hs-test-svc" in names and "alice" in names
    res = run(sb, ["apt-get", "purge", "-y", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out


def test_configure_stopped_after_an_override_leaves_none_behind(pkg):
    """postinst stopped right after adding a statoverride (a crash; here the tool fails
    once it has added /usr/bin/passwd's), then configured again: the override is known
    as ours, and the purge removes it.  Left behind, dpkg would give Debian's next
    passwd root:hardened-shadow 2711 in place of setuid root."""
    sb = pkg
    deb = the_deb(pkg.base.source_dir)
    with open(deb, "rb") as f:
        sb.write("/root/" + os.path.basename(deb), f.read(), mode=0o644)
    real = "/usr/bin/dpkg-statoverride"
    sb.run(["cp", "-p", real, "/root/dpkg-statoverride.real"])
    sb.write(real, "#!/bin/sh\n/root/dpkg-statoverride.real \"$@\" || exit\n"
             "case \"$*\" in *--add*/usr/bin/passwd) exit 1 ;; esac\n", mode=0o755)
    res = run(sb, ["dpkg", "-i", "/root/" + os.path.basename(deb)], check=False)
    assert res.returncode != 0, res.stdout + res.stderr
    sb.run(["cp", "-p", "/root/dpkg-statoverride.real", real])
    res = run(sb, ["dpkg", "--configure", "-a"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    st = sb.lstat("/usr/bin/passwd")
    assert (st.st_mode & 0o7777, st.st_uid) == (0o2711, 0)
    res = run(sb, ["dpkg", "--purge", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "keeping the administrator's" not in res.stdout + res.stderr
    assert run(sb, ["dpkg-statoverride", "--list", "/usr/bin/passwd"],
               check=False).stdout == ""


def test_disable_keeps_the_shadow_sources_it_did_not_add(pkg):
    """hardened-shadow-disable run again after a complete disable, or on a system never
    converted, has nothing to do: it kept the shadow: line's other sources (systemd) only
    while it had its saved copy of the line, and otherwise wrote "shadow: files".  The
    same for enable over a shadow: line the administrator pointed at hardened_shadow."""
    sb = pkg
    sb.add_classic_user("alice", password=ALICE_PW)
    sb.set_nsswitch_shadow("files systemd")
    install_the_deb(sb)
    before = config_snapshot(sb)
    res = run(sb, ["hardened-shadow-disable"])
    assert res.stdout == "", res.stdout
    assert config_snapshot(sb) == before
    run(sb, ["hardened-shadow-enable"])
    assert shadow_sources(sb) == ["hardened_shadow", "systemd"]
    run(sb, ["hardened-shadow-disable"])
    assert shadow_sources(sb) == ["files", "systemd"]
    before = config_snapshot(sb)
    res = run(sb, ["hardened-shadow-disable"])
    assert res.stdout == "", res.stdout
    assert config_snapshot(sb) == before
    # the administrator's own line naming us, without a saved copy of the original
    sb.set_nsswitch_shadow("hardened_shadow files systemd")
    run(sb, ["hardened-shadow-enable"])
    assert shadow_sources(sb) == ["hardened_shadow", "systemd"]
    run(sb, ["hardened-shadow-disable"])
    assert shadow_sources(sb) == ["files", "systemd"]
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out


def test_removal_refused_while_common_files_use_the_module(pkg):
    """The profile enabled by hand in pam-auth-update (its menu lists it), the system not
    converted: removal would leave common-* naming a module that is gone, and take away
    hardened-shadow-disable, which switches them back.  prerm refuses; after disable the
    package goes and pam_unix authenticates."""
    sb = pkg
    sb.add_classic_user("alice", password=ALICE_PW)
    install_the_deb(sb)
    run(sb, ["pam-auth-update", "--package", "--enable", "hardened-shadow", "--disable", "unix"])
    assert "pam_hardened_shadow.so" in sb.read("/etc/pam.d/common-auth")
    res = run(sb, ["apt-get", "remove", "-y", "hardened-shadow"], check=False)
    assert res.returncode != 0, res.stdout + res.stderr
    assert "run hardened-shadow-disable first" in res.stdout + res.stderr
    assert sb.exists("/usr/sbin/hardened-shadow-disable")
    run(sb, ["hardened-shadow-disable"])
    res = run(sb, ["apt-get", "purge", "-y", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "pam_unix.so" in sb.read("/etc/pam.d/common-auth")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out


def test_shadowconfig_runs_debians_tools(pkg):
    """passwd's shadowconfig runs pwconv and pwunconv by name, which are ours once the
    package is installed: `shadowconfig on` (by hand, or passwd's postinst on a fresh
    install of passwd) converted the system to the tree without switching NSS and PAM,
    and no account could log in.  It now runs with Debian's tools while the system is not
    converted, has nothing to do when it is, and `off` is refused then."""
    sb = pkg
    sb.add_classic_user("alice", password=ALICE_PW)
    install_the_deb(sb)
    res = run(sb, ["shadowconfig", "on"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Shadow passwords are now on" in res.stdout, res.stdout
    assert not sb.exists("/etc/hardened-shadow") and sb.exists("/etc/shadow")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out
    run(sb, ["hardened-shadow-enable"])
    before = config_snapshot(sb)
    res = run(sb, ["shadowconfig", "off"], check=False)
    assert res.returncode == 1 and "hardened-shadow-disable" in res.stderr, res.stderr
    res = run(sb, ["shadowconfig", "on"], check=False)
    assert res.returncode == 0 and "nothing to do" in res.stdout, res.stdout + res.stderr
    assert config_snapshot(sb) == before and sb.exists("/etc/hardened-shadow/alice")
    ok, out = authenticates(sb, "alice", ALICE_PW)
    assert ok, out
    run(sb, ["hardened-shadow-disable"])
    res = run(sb, ["apt-get", "purge", "-y", "hardened-shadow"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    ok, out = stock_files_intact(sb)
    assert ok, out
