"""The tree beside a directory: local accounts in /etc/hardened-shadow, the others in
Debian's slapd, read through Debian's nslcd (libnss-ldapd, libpam-ldapd) inside the
sandbox root.

nsswitch.conf says `passwd: files ldap`, `group: files ldap`, `shadow: hardened_shadow
ldap`; the PAM stack (ldapserver.PAM_STACK) asks pam_hardened_shadow.so first and
pam_ldap.so after it.  keeper is local; alice and bob
were exported with hs-ldif, loaded into slapd and removed locally.  Each side
authenticates through its own source only, a local password change writes the tree and
nothing in the directory, and a directory user asking passwd gets the directory's own
message.  Skipped, with the reason, only when the packages cannot be fetched."""


import pytest

import ldapserver
import sandbox

HS_LDIF = "/usr/sbin/hs-ldif"
PAMTESTER = "/usr/bin/pamtester"
BASE = ldapserver.BASE_DN
KEEPER_PW = "Keeper-Pine-77"
ALICE_PW = "Kettle-Yew-81"
BOB_PW = "Marble-Shaft-62"
DORA_PW = "Wicker-Gale-39"
NEW_PW = "Tulip-7-harbour"
DIRECTORY_MSG = "Passwords of directory accounts are changed at https://id.example.org"
MODULE_TAG = "pam_hardened_shadow("

def user_dn(name):
    return "uid=%s,ou=People,%s" % (name, BASE)


def tree_hash(sb, name):
    return sb.read("/etc/hardened-shadow/%s/shadow" % name).split(":")[0]


@pytest.fixture(scope="module")
def site(base, ldap_packages):
    """keeper local; alice and bob moved to the directory; dora local, with an entry in
    the directory too, and her directory in the tree lost."""
    with sandbox.Sandbox(base, size="1g") as sb:
        sb.add_classic_user("keeper", password=KEEPER_PW, uid=1500)
        sb.add_classic_user("dora", password=DORA_PW, uid=1600)
        sb.add_classic_user("alice", password=ALICE_PW, maxdays=90)
        sb.add_classic_user("bob", password=BOB_PW)
        sb.use_hardened_tree()
        server = ldapserver.Slapd(sb, ldap_packages)
        server.add_base()
        server.add(sb.run([HS_LDIF, "export", "-b", BASE, "alice", "bob", "dora"]).stdout)
        sb.run(["/bin/rm", "-rf", "/etc/hardened-shadow/dora"])
        sb.run(["/usr/sbin/userdel", "alice"])
        sb.run(["/usr/sbin/userdel", "bob"])
        nslcd = ldapserver.start_nslcd(sb, ldap_packages, server, DIRECTORY_MSG)
        sb.server = server
        yield sb
        nslcd.terminate()
        nslcd.wait(timeout=10)
        nslcd.stderr.close()
        server.stop()


def pamtester(sb, user, password, *ops, as_user=None):
    return sb.pty_run([PAMTESTER, "login", user] + list(ops or ("authenticate",)),
                      [(r"[Pp]assword: ", password + "\n")], user=as_user, timeout=30)


def module_log(sb):
    return [m for m in sb.syslog(clear=True) if MODULE_TAG in m]


def test_nss_sees_both(site):
    """getent answers for the local account from files and for the directory's from
    nslcd; the directory users have no directory of the tree."""
    assert site.run(["/usr/bin/getent", "passwd", "keeper"]).stdout.startswith("keeper:x:1500:")
    alice = site.run(["/usr/bin/getent", "passwd", "alice"]).stdout
    assert alice.startswith("alice:x:") and alice.rstrip().endswith(":/bin/bash")
    assert "alice" not in site.read("/etc/passwd")
    assert not site.exists("/etc/hardened-shadow/alice")
    # only the module's debug line that alice is none of its business
    assert not [m for m in module_log(site) if int(m[1:m.index(">")]) % 8 != 7]


def test_local_user_through_the_tree(site):
    """keeper: our module says yes to the tree's password and no to anything else, and
    pam_ldap is never reached with keeper's name as a way in."""
    module_log(site)
    status, out = pamtester(site, "keeper", KEEPER_PW)
    assert status == 0, out
    assert "successfully authenticated" in out
    status, out = pamtester(site, "keeper", ALICE_PW)
    assert status != 0, out
    assert any("authentication failure" in m and "user=keeper" in m
               for m in module_log(site))


@pytest.mark.parametrize("name,password", [("alice", ALICE_PW), ("bob", BOB_PW)])
def test_directory_user_through_ldap(site, name, password):
    """alice and bob: not in /etc/passwd, so our module steps aside at once -- no error,
    no "authentication failure" line a log watcher would count against them, no dummy
    hash; pam_ldap binds to slapd with the exported {CRYPT} hash; a wrong password
    fails (and that failure is pam_ldap's to report)."""
    module_log(site)
    status, out = pamtester(site, name, password)
    assert status == 0, out
    status, out = pamtester(site, name, password + "x")
    assert status != 0, out
    status, out = site.pty_run([PAMTESTER, "login", name, "acct_mgmt"], [], timeout=30)
    assert status == 0, out
    assert module_log(site) == []


def test_local_name_never_falls_through(site):
    """dora is local (in /etc/passwd) but her tree directory is gone: our module fails
    her closed and logs it; the directory's entry of the same name, with a password
    that binds there, is never asked."""
    module_log(site)
    assert site.server.whoami("uid=dora,ou=People," + BASE, DORA_PW).returncode == 0
    status, out = pamtester(site, "dora", DORA_PW)
    assert status != 0, out
    log = module_log(site)
    assert any("user dora has no entry in /etc/hardened-shadow" in m for m in log), log


@pytest.mark.parametrize("blank", [" ", "\t"])
def test_local_name_behind_white_space_never_falls_through(site, blank):
    """glibc's files source skips white space before a name, so a hand-edited
    " dora:x:1600:..." line is still the local dora: our module must see her line in
    /etc/passwd as hers (a search for "\ndora:" would not), fail her closed, and never
    let the directory's dora in under her local uid."""
    before = site.read("/etc/passwd")
    assert "\ndora:" in before
    site.write("/etc/passwd", before.replace("\ndora:", "\n%sdora:" % blank), mode=0o644)
    try:
        assert site.run(["getent", "passwd", "dora"]).stdout.split(":")[2] == "1600"
        module_log(site)
        status, out = pamtester(site, "dora", DORA_PW)
        assert status != 0, out
        log = module_log(site)
        assert any("user dora has no entry in /etc/hardened-shadow" in m for m in log), log
    finally:
        site.write("/etc/passwd", before, mode=0o644)


def test_local_passwd_changes_the_tree_only(site):
    """keeper's passwd writes keeper's tree hash; the directory is untouched."""
    before = site.server.search("objectClass=posixAccount", "userPassword",
                                "shadowLastChange")
    admin = site.server.tool("ldapsearch", "-x", "-LLL", "-D", ldapserver.ADMIN_DN, "-w",
                             ldapserver.ADMIN_PW, "-b", BASE, "userPassword").stdout
    old = tree_hash(site, "keeper")
    status, out = site.pty_run(["/usr/bin/passwd"],
                               [(r"[Cc]urrent password: ", KEEPER_PW + "\n"),
                                (r"New password: ", NEW_PW + "\n"),
                                (r"Retype new password: ", NEW_PW + "\n")],
                               user="keeper", timeout=30)
    assert status == 0, out
    assert tree_hash(site, "keeper") != old
    assert site.server.search("objectClass=posixAccount", "userPassword",
                              "shadowLastChange") == before
    assert site.server.tool("ldapsearch", "-x", "-LLL", "-D", ldapserver.ADMIN_DN, "-w",
                            ldapserver.ADMIN_PW, "-b", BASE, "userPassword").stdout == admin
    status, out = pamtester(site, "keeper", NEW_PW)
    assert status == 0, out


def test_directory_user_gets_the_directorys_message(site):
    """alice runs passwd: our module has no account of hers and steps aside; pam_ldap
    answers with the message the site configured in nslcd, and nothing changes."""
    admin = site.server.tool("ldapsearch", "-x", "-LLL", "-D", ldapserver.ADMIN_DN, "-w",
                             ldapserver.ADMIN_PW, "-b", BASE, "userPassword").stdout
    uid = int(site.run(["/usr/bin/getent", "passwd", "alice"]).stdout.split(":")[2])
    module_log(site)
    status, out = site.pty_run(["/usr/bin/passwd"], [], user=uid, timeout=30)
    assert status != 0, out
    assert DIRECTORY_MSG in out
    assert site.server.tool("ldapsearch", "-x", "-LLL", "-D", ldapserver.ADMIN_DN, "-w",
                            ldapserver.ADMIN_PW, "-b", BASE, "userPassword").stdout == admin
    assert not site.exists("/etc/hardened-shadow/alice")
    # only the module's debug line that alice is none of its business
    assert not [m for m in module_log(site) if int(m[1:m.index(">")]) % 8 != 7]


def test_unprivileged_callers(site):
    """A screen locker runs as the user and cannot read the tree: for keeper our module
    asks the password helper; for alice (the directory's) it steps aside before any
    helper runs, and pam_ldap answers.  Neither leaves an error in the log."""
    keeper = site.getpwnam("keeper").uid
    alice = int(site.run(["/usr/bin/getent", "passwd", "alice"]).stdout.split(":")[2])
    site.syslog(clear=True)
    status, out = pamtester(site, "keeper", KEEPER_PW, as_user=keeper)
    if status != 0:     # test_local_passwd_changes_the_tree_only ran first
        status, out = pamtester(site, "keeper", NEW_PW, as_user=keeper)
    assert status == 0, out
    status, out = pamtester(site, "alice", ALICE_PW, as_user=alice)
    assert status == 0, out
    status, out = pamtester(site, "alice", ALICE_PW + "x", as_user=alice)
    assert status != 0, out
    log = site.syslog(clear=True)
    assert not [m for m in log if "alice" in m and ("pam_hardened_shadow" in m or
                                                    "password-helper" in m)], log
