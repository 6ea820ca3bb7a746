"""hs-ldif export: the tree as LDIF, loaded into Debian's real slapd.

The export never shows the hashes by accident (a terminal, a file others may read, a file
that already exists or a planted symlink are refused), hostile GECOS fields come out as
well-formed LDIF (base64), and a throwaway slapd (tests/sandbox/ldapserver.py) takes the
LDIF with ldapadd: every exported user binds with their own password through the {CRYPT}
value (yescrypt, SHA-512 and bcrypt), not with a wrong one nor while locked, and the
shadow* attributes say what `chage -l` says.  The slapd tests are skipped, with the reason,
only when the packages cannot be fetched."""

import base64
import datetime
import re
import time

import pytest

import grouptools
import ldapserver
import sandbox

HS_LDIF = "/usr/sbin/hs-ldif"
BASE = ldapserver.BASE_DN
PASSWORDS = {"alice": "Kettle-Yew-81", "bob": "Marble-Shaft-62", "carol": "Osprey-Flint-43",
             "dave": "Lantern-Moss-24", "erin": "Quill-Harbor-15"}
TODAY = int(time.time()) // 86400


def parse_ldif(text):
    """A strict reader of what the export writes: [(dn, [(attr, value bytes)])]."""
    assert text.endswith("\n\n"), "every entry ends with a blank line"
    lines = []
    for raw in text.split("\n"):
        if raw.startswith(" "):
            assert lines and lines[-1], "a continuation of nothing"
            lines[-1] += raw[1:]
        else:
            lines.append(raw)
    entries, cur = [], None
    for line in lines:
        assert len(line) == 0 or ":" in line, line
        if not line:
            cur = None
            continue
        attr, _, rest = line.partition(":")
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", attr), attr
        if rest.startswith(":"):
            value = base64.b64decode(rest[1:].strip(), validate=True)
        else:
            assert rest == "" or rest.startswith(" "), line
            value = rest[1:].encode()
            assert all(0x20 <= c < 0x7f for c in value), line
            assert not value.startswith((b" ", b":", b"<")) and not value.endswith(b" ")
        if cur is None:
            assert attr == "dn", line
            cur = (value.decode(), [])
            entries.append(cur)
        else:
            cur[1].append((attr, value))
    return entries


def attrs(entries, dn):
    for d, a in entries:
        if d == dn:
            out = {}
            for k, v in a:
                out.setdefault(k, []).append(v)
            return out
    raise AssertionError("no entry %s in %s" % (dn, [d for d, _ in entries]))


def user_dn(name):
    return "uid=%s,ou=People,%s" % (name, BASE)


def make_users(sb):
    """alice (yescrypt, with every aging field), bob (SHA-512), carol (bcrypt), dave
    (locked), erin (a UTF-8 GECOS that starts with a space); a group of two."""
    sb.add_classic_user("alice", password=PASSWORDS["alice"], comment="Alice Liddell,1,2,3",
                        mindays=1, maxdays=90, warndays=7, inactive=5,
                        expiredate="2031-02-03")
    for name in ("bob", "carol", "dave"):
        sb.add_classic_user(name)
    sb.add_classic_user("erin", comment=" Érin Ñoño <x> ")
    sb.add_classic_user("svc", system=True, create_home=False)  # not in UID_MIN..UID_MAX
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/chpasswd", "-c", "SHA512", "-s", "5000"],
           input="bob:%s\n" % PASSWORDS["bob"])
    sb.run(["/usr/sbin/chpasswd", "-c", "BCRYPT", "-s", "5"],
           input="carol:%s\ndave:%s\n" % (PASSWORDS["carol"], PASSWORDS["dave"]))
    sb.run(["/usr/sbin/chpasswd", "-c", "YESCRYPT", "-s", "5"],
           input="erin:%s\n" % PASSWORDS["erin"])
    sb.run(["/usr/sbin/usermod", "-L", "dave"])
    sb.run(["/usr/sbin/groupadd", "-g", "3000", "team"])
    sb.run(["/usr/sbin/usermod", "-aG", "team", "alice"])
    sb.run(["/usr/sbin/usermod", "-aG", "team", "bob"])
    sb.run(["/usr/sbin/usermod", "-aG", "sudo", "alice"])
    return sb


@pytest.fixture(scope="module")
def users(base):
    with sandbox.Sandbox(base, size="1g") as s:
        yield make_users(s)


def export(sb, *args, check=True):
    return sb.run([HS_LDIF, "export", "-b", BASE] + list(args), check=check)


def tree_hash(sb, name):
    return sb.read("/etc/hardened-shadow/%s/shadow" % name).split(":")[0]


# ---- the export itself ----

def test_export_entries(users):
    """Every selected user with the four classes, the hash as {CRYPT}, the aging fields,
    the real shell (not the proxy); the groups with their exported members only."""
    res = export(users, "--all")
    assert res.stderr == ""
    entries = parse_ldif(res.stdout)
    dns = [d for d, _ in entries]
    assert dns[:2] == ["ou=People," + BASE, "ou=Group," + BASE]
    for name in ("alice", "bob", "carol", "dave", "erin"):
        assert user_dn(name) in dns
    assert user_dn("svc") not in dns and user_dn("root") not in dns
    a = attrs(entries, user_dn("alice"))
    pw = users.getpwnam("alice")
    assert a["objectClass"] == [b"top", b"inetOrgPerson", b"posixAccount", b"shadowAccount"]
    assert a["uidNumber"] == [str(pw.uid).encode()]
    assert a["gidNumber"] == [str(pw.gid).encode()]
    assert a["homeDirectory"] == [b"/home/alice"]
    assert a["loginShell"] == [b"/bin/bash"]
    assert a["cn"] == [b"Alice Liddell"] and a["sn"] == [b"Liddell"]
    assert a["gecos"] == [b"Alice Liddell,1,2,3"]
    assert a["userPassword"] == [b"{CRYPT}" + tree_hash(users, "alice").encode()]
    assert a["userPassword"][0].startswith(b"{CRYPT}$y$")
    assert attrs(entries, user_dn("bob"))["userPassword"][0].startswith(b"{CRYPT}$6$")
    assert attrs(entries, user_dn("carol"))["userPassword"][0].startswith(b"{CRYPT}$2b$")
    assert attrs(entries, user_dn("dave"))["userPassword"][0].startswith(b"{CRYPT}!$2b$")
    assert a["shadowMin"] == [b"1"] and a["shadowMax"] == [b"90"]
    assert a["shadowWarning"] == [b"7"] and a["shadowInactive"] == [b"5"]
    expire = (datetime.date(2031, 2, 3) - datetime.date(1970, 1, 1)).days
    assert a["shadowExpire"] == [str(expire).encode()]
    assert abs(int(a["shadowLastChange"][0]) - TODAY) <= 1
    assert "shadowExpire" not in attrs(entries, user_dn("bob"))
    team = attrs(entries, "cn=team,ou=Group," + BASE)
    assert team["objectClass"] == [b"top", b"posixGroup"]
    assert team["gidNumber"] == [b"3000"] and team["memberUid"] == [b"alice", b"bob"]
    assert "cn=sudo,ou=Group," + BASE not in dns, "a system group is never exported"
    assert "cn=alice,ou=Group," + BASE in dns, "the primary group is"


def test_export_selection_and_rfc2307bis(users):
    """Named users only (a system one with --system-users), their groups with those
    members; --rfc2307bis adds groupOfNames with member DNs."""
    entries = parse_ldif(export(users, "--rfc2307bis", "--no-containers", "--system-users",
                                "bob", "svc").stdout)
    dns = [d for d, _ in entries]
    assert dns[0] == user_dn("bob") and user_dn("svc") in dns
    assert user_dn("alice") not in dns
    team = attrs(entries, "cn=team,ou=Group," + BASE)
    assert team["objectClass"] == [b"top", b"groupOfNames", b"posixGroup"]
    assert team["memberUid"] == [b"bob"]
    assert team["member"] == [user_dn("bob").encode()]
    bob_group = attrs(entries, "cn=bob,ou=Group," + BASE)
    assert bob_group["member"] == [b""]


def test_export_hostile_gecos_is_base64(users):
    """A GECOS with UTF-8, a leading space and '<': base64, decoded exactly; the ASCII-only
    gecos attribute is left out rather than sent broken."""
    res = export(users, "--no-groups", "--no-containers", "erin")
    assert "cn:: " in res.stdout and "Érin" not in res.stdout
    e = attrs(parse_ldif(res.stdout), user_dn("erin"))
    assert e["cn"] == [" Érin Ñoño <x>".encode()]
    assert e["sn"] == ["<x>".encode()]
    assert "gecos" not in e


def test_export_refuses_unknown_user_and_bad_base(users):
    """Nothing is written when one name is unknown; a DN with a newline is refused."""
    res = export(users, "-o", "/tmp/partial.ldif", "alice", "nosuch", check=False)
    assert res.returncode == 1 and "user 'nosuch' does not exist" in res.stderr
    assert not users.exists("/tmp/partial.ldif")
    res = users.run([HS_LDIF, "export", "-b", "dc=x\ndn: cn=evil", "alice"], check=False)
    assert res.returncode == 2 and "invalid base DN" in res.stderr and res.stdout == ""


def test_export_refuses_root_and_system_users_by_name(users):
    """Naming root (or a system account) does not put its hash in the directory: refused,
    nothing written, unless --system-users says so."""
    for name, uid in (("root", 0), ("svc", users.getpwnam("svc").uid)):
        res = export(users, "-o", "/tmp/sys.ldif", "alice", name, check=False)
        assert res.returncode == 1, res
        assert "user '%s' (UID %d) is outside UID_MIN..UID_MAX" % (name, uid) in res.stderr
        assert not users.exists("/tmp/sys.ldif") and "CRYPT" not in res.stdout
    res = export(users, "--system-users", "--no-groups", "root")
    assert "uidNumber: 0\n" in res.stdout


def test_export_is_root_only(users):
    res = users.run([HS_LDIF, "export", "-b", BASE, "alice"], user="alice", check=False)
    assert res.returncode == 1 and "Permission denied" in res.stderr
    assert "$" not in res.stdout


# ---- the hashes never go where they should not ----

def test_export_refuses_a_terminal(users):
    """On a terminal the export prints no hash; --force overrides."""
    status, out = users.pty_run([HS_LDIF, "export", "-b", BASE, "alice"], [])
    assert status == 1 and "refusing to write password hashes to a terminal" in out
    assert "CRYPT" not in out and tree_hash(users, "alice") not in out
    status, out = users.pty_run([HS_LDIF, "export", "--force", "-b", BASE, "alice"], [])
    assert status == 0 and "{CRYPT}" + tree_hash(users, "alice") in out.replace("\n ", "")
    # -o from a terminal: the file gets the hashes, the terminal nothing
    status, out = users.pty_run([HS_LDIF, "export", "-b", BASE, "-o", "/tmp/tty.ldif",
                                 "alice"], [])
    assert status == 0 and out == "", out
    assert "{CRYPT}" in users.read("/tmp/tty.ldif")


def test_export_refuses_a_file_others_may_read(users):
    """`> file` under umask 022 makes a 0644 file: refused, nothing written into it."""
    res = users.sh("umask 022; %s export -b %s alice > /tmp/open.ldif" % (HS_LDIF, BASE),
                   check=False)
    assert res.returncode == 1 and "file others may read (mode 0644)" in res.stderr
    assert users.read("/tmp/open.ldif") == ""
    res = users.sh("umask 077; %s export -b %s alice > /tmp/closed.ldif" % (HS_LDIF, BASE))
    assert "{CRYPT}" in users.read("/tmp/closed.ldif")


def test_export_refuses_a_0600_file_of_another_user(users):
    """alice makes a 0600 file and hopes root sends the hashes into it with `>`: refused,
    as is a 0600 file of root's with a second name alice reaches; --force overrides."""
    alice = users.getpwnam("alice").uid
    users.write("/tmp/mine.ldif", "", mode=0o600, uid=alice)
    res = users.sh("%s export -b %s bob > /tmp/mine.ldif" % (HS_LDIF, BASE), check=False)
    assert res.returncode == 1 and "not ours alone (owner UID %d" % alice in res.stderr, res
    got = users.run(["/bin/cat", "/tmp/mine.ldif"], user="alice").stdout
    assert got == "" and "CRYPT" not in got
    users.run(["/bin/mkdir", "-m", "0700", "/tmp/alicedir"])
    users.run(["/bin/chown", "alice", "/tmp/alicedir"])
    users.write("/tmp/root.ldif", "", mode=0o600)
    users.run(["/bin/ln", "/tmp/root.ldif", "/tmp/alicedir/copy"])
    res = users.sh("%s export -b %s bob >> /tmp/root.ldif" % (HS_LDIF, BASE), check=False)
    assert res.returncode == 1 and "2 links" in res.stderr, res
    assert users.read("/tmp/root.ldif") == ""
    users.sh("%s export --force -b %s bob > /tmp/mine.ldif" % (HS_LDIF, BASE))
    assert "uid=bob" in users.read("/tmp/mine.ldif")


def test_export_output_file_is_0600_and_new(users):
    """-o creates the file 0600 whatever the umask; an existing file or a planted symlink
    is refused and left as it was."""
    users.sh("umask 000; %s export -b %s -o /tmp/out.ldif alice" % (HS_LDIF, BASE))
    st = users.lstat("/tmp/out.ldif")
    assert st.st_mode & 0o7777 == 0o600 and st.st_uid == 0
    assert "{CRYPT}" in users.read("/tmp/out.ldif")
    res = export(users, "-o", "/tmp/out.ldif", "bob", check=False)
    assert res.returncode == 1 and "cannot create /tmp/out.ldif: File exists" in res.stderr
    assert "uid=bob" not in users.read("/tmp/out.ldif")
    users.write("/tmp/target", "precious\n", mode=0o644, uid=users.getpwnam("alice").uid)
    users.run(["/bin/ln", "-s", "/tmp/target", "/tmp/link.ldif"], user="alice")
    res = export(users, "-o", "/tmp/link.ldif", "alice", check=False)
    assert res.returncode == 1 and "File exists" in res.stderr
    assert users.read("/tmp/target") == "precious\n"


# ---- a real directory server ----

@pytest.fixture(scope="module")
def directory(users, ldap_packages):
    """slapd in the users' root, loaded with the export of --all."""
    server = ldapserver.Slapd(users, ldap_packages)
    server.add_base()
    ldif = export(users, "--all").stdout
    res = server.add(ldif)
    assert res.stderr == ""
    yield server
    server.stop()


@pytest.mark.parametrize("name,prefix", [("alice", "$y$"), ("bob", "$6$"), ("carol", "$2b$"),
                                         ("erin", "$y$")])
def test_slapd_binds_through_crypt(directory, users, name, prefix):
    """Each user binds with their own password through the exported {CRYPT} value, as
    slapd's crypt(3) (libxcrypt) checks it; a wrong password and a neighbour's fail."""
    assert tree_hash(users, name).startswith(prefix)
    ok = directory.whoami(user_dn(name), PASSWORDS[name])
    assert ok.returncode == 0 and ok.stdout.strip() == "dn:" + user_dn(name)
    bad = directory.whoami(user_dn(name), PASSWORDS[name] + "x")
    assert bad.returncode == 49 and "Invalid credentials" in bad.stderr
    other = "bob" if name != "bob" else "alice"
    assert directory.whoami(user_dn(name), PASSWORDS[other]).returncode == 49


def test_slapd_locked_user_cannot_bind(directory):
    """dave's hash is locked in the tree ("!"): the directory refuses his password too."""
    res = directory.whoami(user_dn("dave"), PASSWORDS["dave"])
    assert res.returncode == 49


def test_slapd_hash_is_not_readable(directory, users):
    """The site's ACL as the LDIF expects it: a user reads their neighbours' accounts but
    not their hash (the server is only a target; the export's hashes are the point)."""
    out = directory.tool("ldapsearch", "-x", "-LLL", "-D", user_dn("bob"), "-w",
                         PASSWORDS["bob"], "-b", user_dn("alice")).stdout
    assert "uidNumber:" in out and "userPassword" not in out


def chage_list_from_directory(entry):
    """What `chage -l -i` prints for these shadow* attributes (shadow-utils' format)."""
    def day(n):
        return "never" if n < 0 else str(datetime.date(1970, 1, 1) + datetime.timedelta(n))

    def get(attr):
        m = re.search(r"^%s: (\d+)$" % attr, entry, re.M)
        return int(m.group(1)) if m else -1
    last, mn, mx = get("shadowLastChange"), get("shadowMin"), get("shadowMax")
    warn, inact, expire = get("shadowWarning"), get("shadowInactive"), get("shadowExpire")
    never_max = mx < 0 or mx >= 10000 or last < 0
    return ("Last password change\t\t\t\t\t: %s\n" % day(last)
            + "Password expires\t\t\t\t\t: %s\n" % ("never" if never_max else day(last + mx))
            + "Password inactive\t\t\t\t\t: %s\n"
            % ("never" if never_max or inact < 0 else day(last + mx + inact))
            + "Account expires\t\t\t\t\t\t: %s\n" % day(expire)
            + "Minimum number of days between password change\t\t: %d\n" % mn
            + "Maximum number of days between password change\t\t: %d\n" % mx
            + "Number of days of warning before password expires\t: %d\n" % warn)


@pytest.mark.parametrize("name", ["alice", "bob"])
def test_slapd_aging_matches_chage(directory, users, name):
    """The directory's shadow* attributes, read back from slapd, say what chage -l says."""
    entry = directory.search("uid=%s" % name, "shadowLastChange", "shadowMin", "shadowMax",
                             "shadowWarning", "shadowInactive", "shadowExpire")
    assert "shadowLastChange:" in entry
    assert users.run(["/usr/bin/chage", "-l", "-i", name]).stdout == \
        chage_list_from_directory(entry)


def test_slapd_keeps_the_utf8_name(directory):
    """erin's base64 cn arrives as the same UTF-8 text."""
    out = directory.search("uid=erin", "cn")
    m = re.search(r"^cn:: (\S+)$", out, re.M)
    assert m and base64.b64decode(m.group(1)).decode() == " Érin Ñoño <x>"


# ---- import: the way back, through newusers ----

IMPORT_STATE = ["/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/subuid", "/etc/subgid"]


def files_state(sb):
    out = {p: sb.read_bytes(p) for p in IMPORT_STATE if sb.exists(p)}
    for d in ("/etc/hardened-shadow", "/home"):
        out[d] = sorted(sb.run(["/bin/ls", "-A", d]).stdout.split())
    return out


@pytest.fixture
def target(sb):
    """A fresh tree system with one local account of its own, keeper."""
    sb.add_classic_user("keeper", password="Keeper-Pine-77", uid=1500)
    sb.use_hardened_tree()
    return sb


def import_(sb, ldif, *args):
    sb.write("/tmp/in.ldif", ldif, mode=0o600)
    return sb.run([HS_LDIF, "import"] + list(args) + ["/tmp/in.ldif"], check=False)


def test_import_round_trip(users, target):
    """alice, bob and dave exported here and imported there: the same ids, GECOS, home,
    shell, hash (still locked for dave) and aging; alice's password works there."""
    ldif = export(users, "alice", "bob", "dave").stdout
    res = import_(target, ldif)
    assert res.returncode == 0, res
    for name in ("alice", "bob", "dave"):
        here, there = users.getpwnam(name), target.getpwnam(name)
        assert (there.uid, there.gid, there.home) == (here.uid, here.gid, here.home)
        assert tree_hash(target, name) == tree_hash(users, name)
        assert target.run(["/usr/bin/chage", "-l", name]).stdout == \
            users.run(["/usr/bin/chage", "-l", name]).stdout
        assert target.getgrnam(name)[1] == here.gid
        assert target.read("/etc/hardened-shadow/%s/shell" % name) == "/bin/bash\n"
    assert target.getpwnam("alice").gecos == "Alice Liddell,1,2,3"
    assert tree_hash(target, "dave").startswith("!")
    helper = "/usr/libexec/hardened-shadow/password-helper"
    ok = target.run([helper, "verify", "alice"], user="alice", input=PASSWORDS["alice"],
                    check=False)
    assert ok.returncode == 0, ok
    bad = target.run([helper, "verify", "alice"], user="alice", input="wrong", check=False)
    assert bad.returncode != 0


def test_import_collisions_change_nothing(users, target):
    """A name or a uid the system has already, a group whose gid means another group here:
    the whole batch is refused and every file stays byte for byte."""
    ldif = export(users, "--no-containers", "alice", "bob").stdout
    keeper = target.getpwnam("keeper")
    before = files_state(target)
    same_name = ldif + ("dn: uid=keeper,ou=People,%s\nobjectClass: posixAccount\n"
                        "objectClass: account\nuid: keeper\ncn: keeper\nuidNumber: 4200\n"
                        "gidNumber: %d\nhomeDirectory: /home/k\n\n" % (BASE, keeper.gid))
    res = import_(target, same_name)
    assert res.returncode == 1 and "user 'keeper' already exists" in res.stderr, res
    assert files_state(target) == before
    same_uid = ldif.replace("uidNumber: %d" % users.getpwnam("bob").uid,
                            "uidNumber: %d" % keeper.uid)
    res = import_(target, same_uid)
    assert res.returncode == 1 and "UID %d is already used" % keeper.uid in res.stderr, res
    assert files_state(target) == before
    target.run(["/usr/sbin/groupadd", "-g", str(users.getpwnam("alice").gid), "other"])
    before = files_state(target)
    res = import_(target, ldif)
    assert res.returncode == 1 and "is group 'other' here, not 'alice'" in res.stderr, res
    assert files_state(target) == before


def test_import_refuses_other_hashes_and_injections(target):
    """Only {CRYPT} hashes; a base64 value that would add a field or a line (':' or a
    newline) is refused before newusers sees anything."""
    before = files_state(target)
    entry = ("dn: uid=zed,ou=People,%s\nobjectClass: posixAccount\nobjectClass: account\n"
             "uid: zed\ncn: zed\nuidNumber: 4100\ngidNumber: 4100\nhomeDirectory: /home/zed\n"
             % BASE)
    res = import_(target, entry + "userPassword: {SSHA}c2FsdGVkaGFzaA==\n\n")
    assert res.returncode == 1 and "userPassword is not a {CRYPT} hash" in res.stderr
    evil = base64.b64encode(b"Zed\nmallory:x:0:0::/root:/bin/sh").decode()
    res = import_(target, entry + "gecos:: %s\n\n" % evil)
    assert res.returncode == 1 and "gecos holds a ':', a newline" in res.stderr, res
    evil = base64.b64encode(b"/home/zed:0").decode()
    res = import_(target, entry.replace("homeDirectory: /home/zed",
                                        "homeDirectory:: " + evil) + "\n")
    assert res.returncode == 1 and "homeDirectory holds a ':'" in res.stderr, res
    res = import_(target, entry + "changetype: add\n\n")
    assert res.returncode == 1 and "change records are not supported" in res.stderr
    assert files_state(target) == before
    assert target.getpwnam("mallory") is None


def account(name, uid, gid, home=None, extra=""):
    return ("dn: uid=%s,ou=People,%s\nobjectClass: posixAccount\nobjectClass: account\n"
            "uid: %s\ncn: %s\nuidNumber: %d\ngidNumber: %d\nhomeDirectory: %s\n%s\n"
            % (name, BASE, name, name, uid, gid, home or "/home/" + name, extra))


def test_import_refuses_system_primary_groups(target):
    """A gidNumber that is root's, shadow's or sudo's group here would make the imported
    account a member of it: refused, even when the LDIF has a posixGroup of the same name,
    unless --system-groups; a new group the import makes itself is fine."""
    before = files_state(target)
    sudo = target.getgrnam("sudo")[1]
    for gid, extra, local in ((0, "", "root"), (target.getgrnam("shadow")[1], "", "shadow"),
                              (sudo, "", "sudo")):
        res = import_(target, account("zed", 4100, gid, extra=extra))
        assert res.returncode == 1, res
        assert "GID %d is the system group '%s' here" % (gid, local) in res.stderr, res
    group = ("dn: cn=sudo,ou=Group,%s\nobjectClass: posixGroup\ncn: sudo\ngidNumber: %d\n\n"
             % (BASE, sudo))
    res = import_(target, group + account("zed", 4100, sudo))
    assert res.returncode == 1 and "system group 'sudo'" in res.stderr, res
    assert files_state(target) == before
    assert target.getpwnam("zed") is None
    res = import_(target, account("zed", 4100, 4100) + account("yan", 4101, 950))
    assert res.returncode == 0, res
    assert target.getgrnam("yan")[1] == 950
    res = import_(target, account("xia", 4102, sudo), "--system-groups")
    assert res.returncode == 0, res
    assert target.getpwnam("xia").gid == sudo


def test_import_homes_stay_below_the_home_base(target):
    """A home that reads as /home/... but climbs out with '..', or one in /etc, is refused
    and nothing is made there; --any-home allows another base, never a '..'."""
    before = files_state(target)
    res = import_(target, account("c5", 4106, 4106, home="/home/../root/c5home"))
    assert res.returncode == 1 and "invalid home directory '/home/../root/c5home'" in \
        res.stderr, res
    res = import_(target, account("c6", 4107, 4107, home="/etc/c6dir"))
    assert res.returncode == 1 and "home '/etc/c6dir' is not below /home" in res.stderr, res
    res = import_(target, account("c6", 4107, 4107, home="/home"))
    assert res.returncode == 1 and "is not below /home" in res.stderr, res
    res = import_(target, account("c6", 4107, 4107, home="/srv/../etc/c6dir"), "--any-home")
    assert res.returncode == 1 and "invalid home directory" in res.stderr, res
    for path in ("/root/c5home", "/etc/c6dir"):
        assert not target.exists(path)
    assert files_state(target) == before
    target.run(["/bin/mkdir", "-p", "/srv"])
    res = import_(target, account("c7", 4108, 4108, home="/srv/c7"), "--any-home")
    assert res.returncode == 0, res
    assert target.lstat("/srv/c7").st_uid == 4108


def test_import_reports_lost_and_bad_values(target):
    """A continuation after the blank line that ends an entry is an error, not an
    attribute dropped; a bad value is shown (not the DN) and a NUL byte is named."""
    before = files_state(target)
    ldif = account("c4", 4105, 4105)
    res = import_(target, ldif + " uidNumber: 0\n\n")
    lines = ldif.count("\n") + 1
    assert res.returncode == 1, res
    assert "line %d: continuation of an empty line" % lines in res.stderr, res
    evil = base64.b64encode(b"Zed:x").decode()
    res = import_(target, account("zed", 4100, 4100, extra="gecos:: %s\n" % evil))
    assert res.returncode == 1 and "control character: 'Zed:x'" in res.stderr, res
    nul = base64.b64encode(b"Zed\0x").decode()
    res = import_(target, account("zed", 4100, 4100, extra="gecos:: %s\n" % nul))
    assert res.returncode == 1 and "gecos holds a NUL byte" in res.stderr, res
    assert files_state(target) == before


def test_import_failure_halfway_leaves_nothing(users, target):
    """/etc/passwd cannot be replaced (a mount point): newusers has written group and
    gshadow and the new directories when it fails; all of it is undone."""
    before = files_state(target)
    ldif = export(users, "alice", "bob").stdout
    with grouptools.bind_mounted(target.root + "/etc/passwd"):
        res = import_(target, ldif)
    assert res.returncode == 1 and "cannot write /etc/passwd" in res.stderr, res
    assert "changes undone: nothing was changed" in res.stderr
    assert files_state(target) == before


def test_export_classic_system(sb):
    """Without the tree (before pwconv), the hash and the aging come from /etc/shadow."""
    sb.add_classic_user("alice", password=PASSWORDS["alice"], maxdays=90, warndays=7,
                        expiredate="2031-02-03")
    res = export(sb, "--no-groups", "--no-containers", "alice")
    a = attrs(parse_ldif(res.stdout), user_dn("alice"))
    line = [x for x in sb.read("/etc/shadow").splitlines() if x.startswith("alice:")][0]
    f = line.split(":")
    assert a["userPassword"] == [("{CRYPT}" + f[1]).encode()]
    assert a["shadowLastChange"] == [f[2].encode()] and a["shadowMax"] == [b"90"]
    assert a["shadowWarning"] == [b"7"] and a["shadowExpire"] == [f[7].encode()]
    assert "shadowInactive" not in a
