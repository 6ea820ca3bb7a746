"""pwck in a throwaway root: every option and exit code; the classic /etc/passwd and
/etc/shadow checks side by side with Debian's pwck; and the audit of the per-user tree --
every kind of broken permission (owner, group, mode, type: symlink, FIFO, planted hard
link, link count 2, aging not root-owned, stray file, temporary leftovers, missing
directory, directory without a user), reported read-only with path / what / what it
should be, then repaired (or declined) without following anything planted."""

import fcntl
import os
import re
import stat
import subprocess
import threading
import time

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

PWCK = "/usr/sbin/pwck"
DEB_PWCK = "/usr/libexec/hs-test/shadow-utils/pwck"
T = "/etc/hardened-shadow"
NSS_NOTE = " (getspnam() through the NSS module does not check this)"


def pwck(sb, *args, answers=None, user=None):
    return sb.run([PWCK, *args], input=answers, check=False, user=user)


def snapshot(sb, top=T):
    """Every entry below top (never following links): type, mode, owner, links, bytes."""
    out = {}
    root = sb.root + top
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files + ["."]:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            data = None
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    data = f.read()
            elif stat.S_ISLNK(st.st_mode):
                data = os.readlink(p)
            out[os.path.normpath(p)[len(sb.root):]] = (st.st_mode, st.st_uid, st.st_gid,
                                                      st.st_nlink, data)
    return out


def add_users(sb, names, first_uid=2001):
    """Classic accounts written straight into the files (faster than useradd+chpasswd);
    each has a hash of its own, so a test can tell a kept hash from a replaced one."""
    script = ["set -e"]
    for i, n in enumerate(names):
        u = first_uid + i
        script.append(f"echo '{n}:x:{u}:{u}::/home/{n}:/bin/bash' >> /etc/passwd;"
                      f"echo '{n}:$6$salt{u}$hashof{n}:19000:0:99999:7:::' >> /etc/shadow;"
                      f"echo '{n}:x:{u}:' >> /etc/group; echo '{n}:!::' >> /etc/gshadow;"
                      f"mkdir -p /home/{n}; chown {u}:{u} /home/{n}")
    sb.run(["/bin/sh"], input="\n".join(script) + "\n")


@pytest.fixture
def tree(sb):
    """alice, bob, carol, dave and erin in the tree; pwck -q finds nothing."""
    add_users(sb, ["alice", "bob", "carol", "dave", "erin"])
    sb.use_hardened_tree()
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    return sb


def uid(sb, name):
    return sb.getpwnam(name).uid


def auth_gid(sb):
    return sb.getgrnam("hardened-shadow-auth")[1]


# ---------------------------------------------------------------- options

def test_options_usage_and_exit_codes(tree):
    sb = tree
    res = pwck(sb, "--help")
    assert res.returncode == 0 and res.stdout.startswith("Usage: pwck [options] [passwd [shadow]]")
    for opt in ("-q", "-r", "-s", "-R", "-b"):
        assert opt in res.stdout
    res = pwck(sb, "--version")
    assert res.returncode == 0 and "hardened-shadow" in res.stdout
    res = pwck(sb, "-x")
    assert res.returncode == 1 and "Usage:" in res.stderr
    res = pwck(sb, "-s", "-r")
    assert res.returncode == 1 and "pwck: -s and -r are incompatible" in res.stderr
    for args in (["-b"], ["--badname"], ["-R", "/mnt"]):
        res = pwck(sb, *args)
        assert res.returncode == 1 and "not supported" in res.stderr, args
    res = pwck(sb, "/etc/passwd", "/etc/shadow", "/etc/extra")
    assert res.returncode == 1 and "Usage:" in res.stderr
    # root only
    res = pwck(sb, "-r", user="alice")
    assert res.returncode == 3 and "Permission denied" in res.stderr
    # cannot open: exit 3, as Debian's
    res = pwck(sb, "-r", "/nonexistent")
    deb = sb.run([DEB_PWCK, "-r", "/nonexistent"], check=False)
    assert res.returncode == deb.returncode == 3
    assert "/nonexistent" in res.stderr
    # -q on a clean system, with the locks taken: silent, 0
    res = pwck(sb, "-q")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")


def test_cannot_lock_exits_4_and_changes_nothing(tree):
    sb = tree
    # a lock that cannot be taken (a directory where /etc/passwd.lock goes): no wait
    sb.sh("mkdir /etc/passwd.lock; chmod 0644 /etc/hardened-shadow/alice/shadow")
    before = snapshot(sb)
    res = pwck(sb, answers="y\n")
    assert res.returncode == 4
    assert res.stderr.startswith("pwck: cannot lock /etc/passwd")
    assert snapshot(sb) == before
    # -r takes no lock and still reports
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2 and "alice/shadow: mode is 0644" in res.stdout


def test_cannot_update_exits_5(tree):
    sb = tree
    sb.sh("echo 'bad line' >> /etc/passwd; mount --bind -o ro /etc/passwd /etc/passwd")
    res = pwck(sb, "-q", answers="y\n")
    assert res.returncode == 5, res.stdout + res.stderr
    assert "/etc/passwd" in res.stderr
    # the line was not deleted: nothing may say the files were updated
    assert "updated" not in res.stdout and "bad line" in sb.read("/etc/passwd")


# What root cannot read: an LSM that denies it (EACCES), a FUSE mount, EIO.  Root
# without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH is refused by the modes alone.
NO_DAC = ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search",
          "--inh-caps=-all", "--"]


def pwck_no_dac(sb, *args, answers=None, groups=None):
    pre = NO_DAC if groups is None else NO_DAC[:-1] + ["--groups=" + groups, "--"]
    return sb.run([*pre, PWCK, *args], input=answers, check=False)


def test_unreadable_tree_entry_exits_3_never_5(tree):
    """A tree entry that cannot be opened, listed or stat'ed is reported (cannot
    open / read / examine) and exits 3, as Debian's pwck does for an /etc/shadow it
    cannot open: nothing was to be updated, so never 5 (cannot update), with -r or
    without (answered no)."""
    sb = tree
    ag = auth_gid(sb)
    # Debian's pwck, root without the DAC capabilities, /etc/shadow mode 0: 3
    sb.sh("touch /etc/shadow; chmod 0 /etc/shadow")
    deb = sb.run([*NO_DAC, DEB_PWCK, "-r"], check=False)
    assert deb.returncode == 3 and "cannot open /etc/shadow" in deb.stderr, deb
    sb.sh("rm /etc/shadow")

    # every user's directory except alice's readable through the group
    sb.sh(f"cd {T} && for d in *; do [ -d \"$d\" ] && chmod g+r \"$d\"; done; "
          f"chmod 02700 alice")
    for args, answers in ((["-r"], None), ([], "n\n" * 50)):
        res = pwck_no_dac(sb, *args, answers=answers, groups=str(ag))
        assert f"{T}/alice: cannot open" not in res.stdout
        assert f"cannot open {T}/alice: Permission denied" in res.stdout, res
        assert "missing" not in res.stdout
        assert res.returncode == 3, (args, res)

    # alice's directory opened but not searchable: it cannot be listed
    sb.sh(f"chmod 02740 {T}/alice")
    res = pwck_no_dac(sb, "-r", groups=str(ag))
    assert f"cannot read {T}/alice: Permission denied" in res.stdout, res.stdout
    assert "missing" not in res.stdout and "create it" not in res.stdout
    assert res.returncode == 3, res

    # the tree itself not searchable: each user's directory cannot be examined
    sb.sh(f"chmod 02710 {T}/alice; chmod 0610 {T}")
    res = pwck_no_dac(sb, "-r", groups=str(ag))
    assert f"{T}: mode is 0610, should be 0710" in res.stdout
    assert f"cannot examine {T}/alice: Permission denied" in res.stdout, res
    assert res.returncode == 3, res



def test_home_that_cannot_be_examined_is_not_called_missing(tree):
    """A home root cannot reach (a FUSE mount without allow_root, a security module)
    is there: shadow-utils' warning and status (2), with the reason, not "does not
    exist"."""
    sb = tree
    sb.sh("mkdir -m 0700 /home/vault && mkdir /home/vault/alice && chown alice /home/vault"
          " && sed -i 's|:/home/alice:|:/home/vault/alice:|' /etc/passwd")
    res = pwck_no_dac(sb, "-r", "/etc/passwd")
    assert ("user 'alice': cannot examine directory '/home/vault/alice': Permission denied"
            in res.stdout), res
    assert "'/home/vault/alice' does not exist" not in res.stdout
    assert res.returncode == 2, res
    # one that is missing still says so
    sb.sh("rmdir /home/vault/alice; chmod 0755 /home/vault")
    res = pwck_no_dac(sb, "-r", "/etc/passwd")
    assert "user 'alice': directory '/home/vault/alice' does not exist" in res.stdout, res

# ---------------------------------------------------------------- classic checks

def test_classic_checks_match_debian(sb):
    """On a classic system (passwd + shadow), the messages are Debian's."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.sh("echo 'bad line' >> /etc/passwd;"
          "l=$(grep '^alice:' /etc/passwd); echo \"$l\" >> /etc/passwd;"
          "echo 'bob2:x:1500:1500::/nonexist:/bin/nosh' >> /etc/passwd;"
          "echo 'foo:x:1501:4242::/home/alice:/bin/sh' >> /etc/passwd;"
          "echo 'ghost:!:19000:0:99999:7:::' >> /etc/shadow")
    alice = [l for l in sb.read("/etc/passwd").splitlines() if l.startswith("alice:")][0]
    ours = pwck(sb, "-r")
    deb = sb.run([DEB_PWCK, "-r"], check=False)
    assert ours.returncode == deb.returncode == 2
    common = [
        "duplicate password entry",
        f"delete line '{alice}'? No",
        "delete line 'bad line'? No",
        "user 'bob2': directory '/nonexist' does not exist",
        "user 'bob2': program '/bin/nosh' does not exist",
        "no matching password file entry in /etc/shadow",
        "add user 'bob2' in /etc/shadow? No",
        "user 'foo': no group 4242",
        "add user 'foo' in /etc/shadow? No",
        "no matching password file entry in /etc/passwd",
        "delete line 'ghost:!:19000:0:99999:7:::'? No",
        "pwck: no changes",
    ]
    for line in common:
        assert line in deb.stdout.splitlines(), ("debian", line, deb.stdout)
        assert line in ours.stdout.splitlines(), ("ours", line, ours.stdout)
    # ours adds the line number and the reason
    assert any(l.startswith("invalid password file entry (line ") for l in
               ours.stdout.splitlines())
    # the later duplicate only (Debian asks about both)
    assert ours.stdout.count("duplicate password entry") == 1
    # -q: errors only, as Debian
    q = pwck(sb, "-q", "-r")
    assert "does not exist" not in q.stdout and "no group" not in q.stdout
    assert "delete line 'bad line'? No" in q.stdout


def test_classic_repairs(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.sh("echo 'bad line' >> /etc/passwd;"
          "l=$(grep '^alice:' /etc/passwd); echo \"$l\" >> /etc/passwd;"
          "echo 'newbie:x:1600:100::/:/bin/sh' >> /etc/passwd")
    before_alice = sb.read("/etc/shadow").splitlines()[-1]
    res = pwck(sb, "-q", answers="y\n" * 10)
    assert res.returncode == 2 and "pwck: the files have been updated" in res.stdout
    lines = sb.read("/etc/passwd").splitlines()
    assert "bad line" not in lines
    assert sum(l.startswith("alice:") for l in lines) == 1
    shadow = sb.read("/etc/shadow").splitlines()
    assert before_alice in shadow
    newbie = [l for l in shadow if l.startswith("newbie:")]
    assert len(newbie) == 1 and newbie[0].startswith("newbie:!:")
    assert "bad line" in sb.read("/etc/passwd-")       # backup of the old file
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, "")


def test_hostile_line_is_shown_escaped(tree):
    sb = tree
    sb.sh(r"printf 'evil\033]0;owned\007:x\n' >> /etc/passwd")
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "delete line 'evil\\x1b]0;owned\\x07:x'? No" in res.stdout


def test_file_arguments_check_the_copy_only(tree):
    sb = tree
    sb.sh("cp /etc/passwd /tmp/passwd; echo 'bad line' >> /tmp/passwd;"
          "chmod 0644 /etc/hardened-shadow/alice/shadow")
    res = pwck(sb, "-q", "-r", "/tmp/passwd")
    assert res.returncode == 2
    assert "delete line 'bad line'? No" in res.stdout
    assert T not in res.stdout           # the tree belongs to /etc/passwd only
    res = pwck(sb, "-q", "/tmp/passwd", answers="y\n")
    assert res.returncode == 2
    assert "bad line" not in sb.read("/tmp/passwd")
    assert sb.lstat(T + "/alice/shadow").st_mode & 0o777 == 0o644


def test_relative_file_arguments_are_repaired_in_place(tree):
    """`cd /tmp && pwck passwd` works on ./passwd as shadow-utils does: the repair is
    written there (it used to fail with "Invalid argument", exit 5)."""
    sb = tree
    sb.sh("cp /etc/passwd /tmp/passwd; echo 'bad line' >> /tmp/passwd")
    res = sb.run([PWCK, "-q", "passwd"], input="y\n", check=False, cwd="/tmp")
    assert res.returncode == 2, res
    assert "bad line" not in sb.read("/tmp/passwd")
    assert sb.read("/tmp/passwd") == sb.read("/etc/passwd")


def test_sort(sb):
    sb.add_classic_user("alice", password="alice-pw-1", uid=3000)
    sb.add_classic_user("bob", password="bob-pw-1", uid=2000)
    res = pwck(sb, "-s")
    assert (res.returncode, res.stdout) == (0, "")
    names = [l.split(":")[0] for l in sb.read("/etc/passwd").splitlines()]
    assert names.index("bob") < names.index("alice")
    uids = [int(l.split(":")[2]) for l in sb.read("/etc/passwd").splitlines()]
    assert uids == sorted(uids)
    snames = [l.split(":")[0] for l in sb.read("/etc/shadow").splitlines()]
    assert [n for n in snames if n in names] == [n for n in names if n in snames]
    # a line that is not an entry: exit 6, nothing written
    sb.sh("echo 'bad line' >> /etc/passwd")
    before = sb.read_bytes("/etc/passwd")
    res = pwck(sb, "-s")
    assert res.returncode == 6 and "cannot sort entries in /etc/passwd" in res.stderr
    assert sb.read_bytes("/etc/passwd") == before


# ---------------------------------------------------------------- the tree

def break_everything(sb):
    sb.sh(f"""set -e
    cd {T}
    chmod 0755 .                                # tree mode
    chmod 0644 alice/shadow                     # mode
    chgrp root alice/shell                      # group
    chown bob alice/aging                       # aging not root-owned
    rm bob/shadow; ln -s /etc/passwd bob/shadow # symlink
    rm bob/shell; mkfifo bob/shell              # FIFO
    ln carol/shadow carol/shadow.bak            # planted hard link (link count 2)
    echo junk > carol/notes                     # stray file
    touch carol/.shell.AbCdEfGhIjKl             # temporary leftover in a user dir
    rm -r dave                                  # missing directory
    chown root erin                             # directory owner
    echo garbage > erin/aging                   # invalid contents
    ln erin/shadow /root/erin-shadow-copy       # link count 2 from outside
    mkdir .new.zed.AbCdEfGhIjKl .del.yan.AbCdEfGhIjKl   # leftovers of useradd/userdel
    mkdir ghost; echo 'x:1:' > ghost/shadow; chown 4242 ghost   # directory without user
    """)


def test_every_breakage_reported_read_only(tree):
    sb = tree
    break_everything(sb)
    before = snapshot(sb)
    passwd_before = sb.read_bytes("/etc/passwd")
    a, b, e = uid(sb, "alice"), uid(sb, "bob"), uid(sb, "erin")
    ag = auth_gid(sb)
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2, res.stderr
    out = res.stdout.splitlines()
    expected = [
        f"{T}: mode is 0755, should be 0710{NSS_NOTE}",
        "set mode to 0710? No",
        f"{T}/alice/aging: owner is bob ({b}), should be root (0); the account counts as "
        "expired",
        "replace it with an aging file that keeps the account expired (set it with chage)? No",
        f"{T}/alice/shadow: mode is 0644, should be 0640{NSS_NOTE}",
        "set mode to 0640? No",
        f"{T}/alice/shell: group is root (0), should be hardened-shadow-auth ({ag})",
        f"set group to hardened-shadow-auth ({ag})? No",
        f"{T}/bob/shadow: is a symbolic link, should be a regular file",
        "replace it with a locked password (set a new one with passwd)? No",
        f"{T}/bob/shell: is a FIFO, should be a regular file",
        "replace it with the shell /bin/sh (change it with chsh)? No",
        f"{T}/carol/.shell.AbCdEfGhIjKl: left-over temporary regular file",
        f"{T}/carol/notes: stray regular file; only shadow, shell and aging belong in a "
        "user's directory",
        f"{T}/carol/shadow: link count is 2, should be 1",
        "replace it with a copy of itself (ends the other link)? No",
        f"{T}/carol/shadow.bak: stray regular file; only shadow, shell and aging belong in "
        "a user's directory",
        f"{T}/dave: missing; user 'dave' in /etc/passwd has no directory and cannot log in",
        "create it with a locked password and an expired aging? No",
        f"{T}/erin: owner is root (0), should be erin ({e}){NSS_NOTE}",
        f"set owner to erin ({e})? No",
        f"{T}/erin/aging: invalid contents (has an invalid format); the account counts as "
        "expired",
        f"{T}/erin/shadow: link count is 2, should be 1",
        f"{T}/.del.yan.AbCdEfGhIjKl: left-over temporary directory",
        f"{T}/.new.zed.AbCdEfGhIjKl: left-over temporary directory",
        f"{T}/ghost: directory without a user in /etc/passwd; its password would pass to "
        "the next account named ghost",
        "pwck: no changes",
    ]
    for line in expected:
        assert line in out, (line, res.stdout)
    # every problem line names a path in the tree or is a question / the summary
    assert all(l.startswith(T) or l.endswith("? No") or l.startswith("pwck: ")
               for l in out), res.stdout
    assert out.count("remove it? No") == 6
    # read-only: nothing changed, nothing followed
    assert snapshot(sb) == before
    assert sb.read_bytes("/etc/passwd") == passwd_before
    assert a != b


def test_every_breakage_repaired_without_following(tree):
    sb = tree
    break_everything(sb)
    hashes = {n: sb.read(f"{T}/{n}/shadow") for n in ("alice", "carol", "erin")}
    passwd_st = sb.lstat("/etc/passwd")
    passwd_before = sb.read_bytes("/etc/passwd")
    res = pwck(sb, "-q", answers="y\n" * 40)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1] == "pwck: the files have been updated"
    assert "set mode to 0640? Yes" in res.stdout        # answers echoed off a terminal
    # the symlink bob/shadow pointed at /etc/passwd: untouched
    st = sb.lstat("/etc/passwd")
    assert (st.st_mode, st.st_uid, st.st_gid) == (passwd_st.st_mode, passwd_st.st_uid,
                                                 passwd_st.st_gid)
    assert sb.read_bytes("/etc/passwd") == passwd_before
    ag = auth_gid(sb)

    def meta(path):
        st = sb.lstat(path)
        return (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_uid, st.st_gid,
                st.st_nlink)
    assert meta(T)[:4] == (stat.S_IFDIR, 0o710, 0, sb.getgrnam("hardened-shadow")[1])
    for name in ("alice", "bob", "carol", "dave", "erin"):
        u = uid(sb, name)
        assert meta(f"{T}/{name}")[:4] == (stat.S_IFDIR, 0o2710, u, ag), name
        assert sorted(os.listdir(sb.root + f"{T}/{name}")) == ["aging", "shadow", "shell"]
        assert meta(f"{T}/{name}/shadow") == (stat.S_IFREG, 0o640, u, ag, 1), name
        assert meta(f"{T}/{name}/shell") == (stat.S_IFREG, 0o640, u, ag, 1), name
        assert meta(f"{T}/{name}/aging") == (stat.S_IFREG, 0o644, 0, ag, 1), name
    # trusted contents kept, untrusted ones replaced fail-closed
    for name in ("alice", "carol", "erin"):
        assert sb.read(f"{T}/{name}/shadow") == hashes[name], name
    assert sb.read(f"{T}/bob/shadow") == "!::\n"
    assert sb.read(f"{T}/bob/shell") == "/bin/sh\n"
    assert sb.read(f"{T}/alice/aging") == "-1:-1:-1:-1:1:\n"
    assert sb.read(f"{T}/erin/aging") == "-1:-1:-1:-1:1:\n"
    assert sb.read(f"{T}/dave/shadow") == "!::\n"
    assert sb.read(f"{T}/dave/aging") == "-1:-1:-1:-1:1:\n"
    # the other name of erin's shadow still exists, but is no longer hers
    assert sb.read("/root/erin-shadow-copy") == hashes["erin"]
    assert os.lstat(sb.root + "/root/erin-shadow-copy").st_nlink == 1
    assert sorted(e for e in os.listdir(sb.root + T) if not sb.getpwnam(e)) == []
    # and now it is clean
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout
    assert [l for l in sb.syslog() if "pwck[" in l and "removed" in l]


def test_declined_and_eof_change_nothing(tree):
    """Nothing at all: the reserved directories planted without the tree's mark
    (lib/tree/userdir_admin.c) are not our tools' leftovers, so the recovery that
    every root tool runs under the global locks does not sweep them."""
    sb = tree
    break_everything(sb)
    before = snapshot(sb)
    for answers in ("n\n" * 40, ""):
        res = pwck(sb, "-q", answers=answers)
        assert res.returncode == 2
        assert res.stdout.splitlines()[-1] == "pwck: no changes"
        assert "? Yes" not in res.stdout
        assert snapshot(sb) == before


def test_nss_fast_path_gaps_are_reported(tree):
    """getspnam() through the NSS module does not check that shadow belongs to the
    directory's owner, nor the tree's mode (docs/decisions.md): pwck must."""
    sb = tree
    sb.set_nsswitch_shadow("hardened_shadow")
    a, b = uid(sb, "alice"), uid(sb, "bob")
    sb.sh(f"chown bob {T}/alice/shadow; chmod 0750 {T}")
    assert sb.run(["getent", "shadow", "alice"], check=False).returncode == 0
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    assert (f"{T}/alice/shadow: owner is bob ({b}), should be alice ({a}); its contents "
            f"cannot be trusted{NSS_NOTE}") in res.stdout.splitlines()
    assert f"{T}: mode is 0750, should be 0710{NSS_NOTE}" in res.stdout.splitlines()
    # the repair does not bless bob's file: alice's password is locked
    res = pwck(sb, "-q", answers="y\ny\n")
    assert res.returncode == 2
    assert sb.read(f"{T}/alice/shadow") == "!::\n"
    assert sb.lstat(f"{T}/alice/shadow").st_uid == a
    assert sb.lstat(T).st_mode & 0o7777 == 0o710


def test_hostile_user_directory_and_plain_mistakes(tree):
    sb = tree
    # alice's directory replaced by a symlink to /etc; bob's by a FIFO; a file with an
    # invalid name at the top; root's copy of carol's shadow (cp as root)
    sb.sh(f"cd {T}; mv alice /root/alice-dir; ln -s /etc alice; rm -r bob; mkfifo bob;"
          f"echo x > 'Not A User'; cp -p carol/shadow /tmp/s; rm carol/shadow;"
          f"cp /tmp/s carol/shadow; chmod 0640 carol/shadow; chgrp hardened-shadow-auth"
          f" carol/shadow")
    # a root file linked in as dave's shadow (what a user can do without
    # protected_hardlinks): neither chowned, chmodded nor copied
    sb.sh(f"rm {T}/dave/shadow; ln /etc/gshadow {T}/dave/shadow")
    gshadow_st = sb.lstat("/etc/gshadow")
    gshadow_before = sb.read_bytes("/etc/gshadow")
    res = pwck(sb, "-q", "-r")
    out = res.stdout.splitlines()
    assert f"{T}/alice: is a symbolic link, should be a directory" in out
    assert f"{T}/bob: is a FIFO, should be a directory" in out
    assert f"{T}/Not A User: stray regular file; not a valid user name" in out
    c = uid(sb, "carol")
    assert f"{T}/carol/shadow: owner is root (0), should be carol ({c}){NSS_NOTE}" in out
    d = uid(sb, "dave")
    assert (f"{T}/dave/shadow: owner is root (0), should be dave ({d}); its contents cannot "
            f"be trusted{NSS_NOTE}") in out
    assert f"{T}/dave/shadow: link count is 2, should be 1" in out
    hash_c = sb.read(f"{T}/carol/shadow")
    etc_before = sorted(os.listdir(sb.root + "/etc"))
    res = pwck(sb, "-q", answers="y\n" * 20)
    assert res.returncode == 2
    # the links went, their targets did not; new closed directories took their place
    assert sorted(os.listdir(sb.root + "/etc")) == etc_before
    for name in ("alice", "bob"):
        assert stat.S_ISDIR(sb.lstat(f"{T}/{name}").st_mode)
        assert sb.read(f"{T}/{name}/shadow") == "!::\n"
    assert not sb.exists(f"{T}/Not A User")
    st = sb.lstat("/etc/gshadow")
    assert (st.st_mode, st.st_uid, st.st_gid) == (gshadow_st.st_mode, gshadow_st.st_uid,
                                                 gshadow_st.st_gid)
    assert sb.read_bytes("/etc/gshadow") == gshadow_before and st.st_nlink == 1
    assert sb.read(f"{T}/dave/shadow") == "!::\n"
    # root's copy holds what root wrote: a chown keeps the password
    assert sb.read(f"{T}/carol/shadow") == hash_c
    assert sb.lstat(f"{T}/carol/shadow").st_uid == c
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_passwd_field_markers_and_interrupted_commands(tree):
    sb = tree
    sb.sh(f"sed -i 's/^bob:x:/bob:$6$salt$hash:/' /etc/passwd;"
          f"touch {T}/.pwconv-incomplete; mkdir {T}/.usermod-l.newname")
    res = pwck(sb, "-q", "-r")
    out = res.stdout.splitlines()
    assert ("user bob has an entry in /etc/hardened-shadow, but its password field in "
            "/etc/passwd is not set to 'x'") in out
    assert "set it to 'x'? No" in out
    assert f"{T}/.pwconv-incomplete: pwconv was interrupted; run pwconv again to finish it" \
        in out
    assert (f"{T}/.usermod-l.newname: left over by an interrupted usermod -l; run the same "
            "usermod -l again to finish it") in out
    res = pwck(sb, "-q", answers="y\n" * 5)
    assert res.returncode == 2
    assert sb.getpwnam("bob") and ":x:" in [l for l in sb.read("/etc/passwd").splitlines()
                                             if l.startswith("bob:")][0]
    # the markers are finished by their own commands, never removed by pwck
    assert sb.exists(f"{T}/.pwconv-incomplete") and sb.exists(f"{T}/.usermod-l.newname")


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_unreadable_group_file_stops_the_run(tree, kind):
    """Primary groups are looked up through getgrgid, which reads /etc/group: a FIFO there
    blocked pwck for ever, a directory made every user's group look missing.  Now: exit 3
    with the reason, and nothing checked or changed."""
    sb = tree
    before = snapshot(sb, "/etc")
    sb.sh("mv /etc/group /etc/group.real; "
          + ("mkfifo -m 644 /etc/group" if kind == "fifo" else "mkdir /etc/group"))
    for args, answers in ((["-r"], None), ([], "y\n" * 10)):
        res = sb.run([PWCK, *args], input=answers, check=False, timeout=20)
        assert res.returncode == 3, res
        assert res.stderr == "pwck: cannot read /etc/group: is not a regular file\n"
        assert res.stdout == ""
    sb.sh("rmdir /etc/group || rm /etc/group; mv /etc/group.real /etc/group")
    assert snapshot(sb, "/etc") == before


def test_warnings_only_without_q(tree):
    sb = tree
    # a shell file naming an unlisted program for a proxy user; a future change date
    sb.write(f"{T}/alice/shell", "/bin/nonexistent-shell\n", mode=0o640,
             uid=uid(sb, "alice"), gid=auth_gid(sb))
    sb.write(f"{T}/bob/shell", "/bin/true\n", mode=0o640, uid=uid(sb, "bob"),
             gid=auth_gid(sb))
    sb.write(f"{T}/carol/shadow", "!:99999999:\n", mode=0o640, uid=uid(sb, "carol"),
             gid=auth_gid(sb))
    res = pwck(sb, "-r")
    out = res.stdout.splitlines()
    assert "user 'alice': program '/bin/nonexistent-shell' does not exist" in out
    assert f"{T}/bob/shell: the shell '/bin/true' is not listed in /etc/shells" in out
    assert "user carol: last password change in the future" in out
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, "")


# ---------------------------------------------------------------- interrupted transactions

def _pending_transaction(sb, new_group_line):
    """What a tool killed after the commit point of lib/txn leaves: /etc/group staged with
    one more line and the journal naming the current /etc/group, not yet installed."""
    grp = sb.root + "/etc/group"
    with open(grp) as f:
        staged = f.read() + new_group_line + "\n"
    sb.write("/etc/.group.hs-txn", staged, mode=0o644)
    st = os.stat(grp)
    journal = ("hardened-shadow transaction 1\n"
               "group %d %d %d %d.%09d %d.%09d\n" % (
                   st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // 10**9,
                   st.st_mtime_ns % 10**9, st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9))
    sb.write("/etc/.hardened-shadow.txn", journal, mode=0o600)
    return staged


def test_pending_transaction_reported_read_only_and_finished_by_a_locking_run(tree):
    sb = tree
    staged = _pending_transaction(sb, "later:x:4242:")
    before = sb.read("/etc/group")
    # -r takes no lock: it cannot finish the transaction, so it reports it
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "/etc/.hardened-shadow.txn: an interrupted update" in res.stdout
    assert sb.read("/etc/group") == before
    # a run that locks finishes it before reading anything, and says so
    res = pwck(sb, "-q", answers="")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "finished an interrupted update of /etc/group" in res.stderr
    assert sb.read("/etc/group") == staged
    assert sb.read("/etc/group-") == before
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert not sb.exists("/etc/.group.hs-txn")
    assert any("finished an interrupted update" in l for l in sb.syslog())


def test_pending_transaction_yields_to_a_newer_change(tree):
    """/etc/group replaced after the crash by a tool that does not know the journal: its
    version stays, the staged one is dropped."""
    sb = tree
    _pending_transaction(sb, "later:x:4242:")
    newer = sb.read("/etc/group") + "sysusers:x:990:\n"
    sb.sh("cp /etc/group /etc/group.new && echo 'sysusers:x:990:' >> /etc/group.new && "
          "mv /etc/group.new /etc/group")
    res = pwck(sb, "-q", answers="")
    assert "dropped an interrupted update of /etc/group" in res.stderr, res.stderr
    assert sb.read("/etc/group") == newer
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert not sb.exists("/etc/.group.hs-txn")


# ---------------------------------------------------------------- progress

def test_progress_over_a_big_tree_only_on_a_terminal(sb):
    """Over a big tree, pwck on a terminal says how far it is ("\\rpwck: N/M users", a few
    times a second) and erases that line before each finding it prints; through pipes
    its output is exactly what it was (no progress, nothing on stderr)."""
    n = 6000
    names = ["big%05d" % i for i in range(n)]
    shadow_gid = sb.getgrnam("shadow")[1]
    sb.write("/etc/passwd", sb.read("/etc/passwd") + "".join(
        "%s:x:%d:100::/:/bin/sh\n" % (u, 30000 + i) for i, u in enumerate(names)))
    sb.write("/etc/shadow", sb.read("/etc/shadow") + "".join(
        "%s:!:19000:0:99999:7:::\n" % u for u in names), mode=0o640, gid=shadow_gid)
    sb.use_hardened_tree()
    # one finding near the end, printed after progress lines were shown
    last = names[-10]
    os.chmod(sb.root + "%s/%s/shadow" % (T, last), 0o644)
    finding = "%s/%s/shadow: mode is 0644, should be 0640%s" % (T, last, NSS_NOTE)

    piped = pwck(sb, "-q", "-r")
    assert piped.returncode == 2, piped.stderr
    assert piped.stderr == "" and "\r" not in piped.stdout and "\x1b" not in piped.stdout
    assert piped.stdout == finding + "\nset mode to 0640? No\npwck: no changes\n", piped.stdout

    status, out = sb.pty_run([PWCK, "-q", "-r"], [], timeout=300)
    assert status == 2, out
    shown = re.findall(r"\rpwck: (\d+)/(\d+) users", out)
    assert shown, out[:2000]
    assert all(int(done) <= int(total) for done, total in shown)
    # every progress line is erased before the finding, and after the last one
    assert re.search(r"\rpwck: \d+/\d+ users\r\x1b\[K" + re.escape(finding), out), out[-2000:]
    # with the progress taken out, the terminal saw what the pipe got
    assert re.sub(r"(\rpwck: \d+/\d+ users)+\r\x1b\[K", "", out) == piped.stdout


# ---------------------------------------------------------------- repairs that keep the entry

def _crlf(sb, path, only=None):
    """Give every line of path (or only the line starting with `only`) a CR before its
    newline, as a copy from Windows has."""
    pat = f"/^{only}/" if only else ""
    sb.sh(f"sed -i '{pat}s/$/\\r/' {path}")


@pytest.fixture
def classic(sb):
    sb.add_classic_user("alice", password="alice-pw-1")
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout
    return sb


def test_crlf_files_are_mended_never_deleted(classic):
    """A CRLF /etc/passwd and /etc/shadow (every line, root's included): each line is
    reported with its own message and the repair offered is to strip the CR -- never to
    delete the line."""
    sb = classic
    before = {p: sb.read_bytes(p) for p in ("/etc/passwd", "/etc/shadow")}
    n = {p: len(before[p].splitlines()) for p in before}
    for p in before:
        _crlf(sb, p)
    # Debian's reads the passwd lines (the shell is '/bin/bash\r'), but its shadow
    # parser refuses the CR after the last (numeric) field: it offers to delete every
    # shadow line, root's included
    deb = sb.run([DEB_PWCK, "-r"], check=False)
    assert "invalid password file entry" not in deb.stdout
    assert "invalid shadow password file entry" in deb.stdout
    assert "delete line 'root:" in deb.stdout
    res = pwck(sb, "-r")
    assert res.returncode == 2, res.stdout + res.stderr
    out = res.stdout.splitlines()
    for p in before:
        for i in range(1, n[p] + 1):
            assert f"{p}: line {i}: ends with a carriage return" in out, (p, i, res.stdout)
    assert out.count("strip it? No") == n["/etc/passwd"] + n["/etc/shadow"]
    assert "delete" not in res.stdout and "invalid" not in res.stdout
    # "n" to everything: nothing changes, nothing else is asked
    crlf = {p: sb.read_bytes(p) for p in before}
    res = pwck(sb, answers="n\n" * 100)
    assert res.returncode == 2 and "delete" not in res.stdout and "add user" not in res.stdout
    assert res.stdout.splitlines()[-1] == "pwck: no changes"
    assert {p: sb.read_bytes(p) for p in before} == crlf
    # "y" to everything: exactly the files as they were before the CRs
    res = pwck(sb, answers="y\n" * 100)
    assert res.returncode == 2 and "delete" not in res.stdout, res.stdout
    assert res.stdout.splitlines()[-1] == "pwck: the files have been updated"
    assert {p: sb.read_bytes(p) for p in before} == before
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_bad_line_deleted_then_its_name_mended_on_a_later_line(classic):
    """A bad line with alice's name, deleted, then alice's own line (CRLF) mended: the
    deleted line no longer holds the name (the name table built at load used to keep
    it, and the mend was refused with the deleted line's parse error)."""
    sb = classic
    alice = [l for l in sb.read("/etc/passwd").splitlines() if l.startswith("alice:")][0]
    sb.sh("sed -i 's/^alice:.*/alice:garbage\\n&/' /etc/passwd")
    _crlf(sb, "/etc/passwd", only="alice:x:")
    res = pwck(sb, "-q", answers="y\n" * 10)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "delete line 'alice:garbage'? Yes" in res.stdout, res.stdout
    assert "invalid entry" not in res.stdout + res.stderr, res.stdout + res.stderr
    lines = sb.read("/etc/passwd").splitlines()
    assert [l for l in lines if l.startswith("alice:")] == [alice], lines
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout + res.stderr


def test_crlf_on_roots_line_only(classic):
    sb = classic
    before = sb.read_bytes("/etc/passwd")
    _crlf(sb, "/etc/passwd", only="root:")
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    assert res.stdout == ("/etc/passwd: line 1: ends with a carriage return\n"
                          "strip it? No\npwck: no changes\n"), res.stdout
    res = pwck(sb, "-q", answers="y\n")
    assert res.returncode == 2 and sb.read_bytes("/etc/passwd") == before
    assert pwck(sb, "-q", "-r").returncode == 0


def test_crlf_one_line_declined_then_accepted(classic):
    sb = classic
    before = sb.read_bytes("/etc/passwd")
    _crlf(sb, "/etc/passwd", only="alice:")
    crlf = sb.read_bytes("/etc/passwd")
    res = pwck(sb, "-q", answers="n\n" + "y\n" * 10)
    assert res.returncode == 2 and "delete" not in res.stdout
    assert res.stdout.count("? ") == 1
    assert sb.read_bytes("/etc/passwd") == crlf
    res = pwck(sb, "-q", answers="y\n" + "n\n" * 10)
    assert res.returncode == 2 and sb.read_bytes("/etc/passwd") == before


def test_roots_line_is_never_offered_for_deletion(classic):
    """Root's line broken beyond a repair (and a duplicate root line, a uid-0 line that
    does not parse, root's orphaned shadow line): reported, the admin sent to vipw, and a
    "y" to every question leaves all of them in place."""
    sb = classic
    # a second root line: dead (getpwnam finds the first), yet kept
    sb.sh("echo 'root:x:0:0:second:/root:/bin/sh' >> /etc/passwd")
    n = len(sb.read_bytes("/etc/passwd").splitlines())
    res = pwck(sb, "-q", answers="y\n" * 20)
    assert res.returncode == 2
    assert res.stdout.splitlines()[:2] == [
        "duplicate password entry",
        f"/etc/passwd: line {n}: root's entry is not deleted; fix it by hand with vipw"]
    assert "delete line" not in res.stdout
    sb.sh("sed -i '$d' /etc/passwd")
    # root's line and a uid-0 line that do not parse
    sb.sh("sed -i 's/^root:x:0:0:/root:x:0:0:extra:/' /etc/passwd;"
          "echo 'toor:x:00 :0::/root:/bin/sh' >> /etc/passwd;"
          "echo 'bad line' >> /etc/passwd")
    before = sb.read_bytes("/etc/passwd")
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    out = res.stdout.splitlines()
    n = len(before.splitlines())
    assert "/etc/passwd: line 1: root's entry is not deleted; fix it by hand with vipw" in out
    assert (f"/etc/passwd: line {n - 1}: root's entry is not deleted; fix it by hand with "
            "vipw") in out
    assert [l for l in out if l.startswith("delete line")] == ["delete line 'bad line'? No"]
    res = pwck(sb, "-q", answers="y\n" * 20)
    assert res.returncode == 2
    assert sb.read_bytes("/etc/passwd") == before.replace(b"bad line\n", b"")
    # root's shadow line without a passwd line: kept as well
    sb.sh("sed -i '/^root:/d' /etc/passwd")
    shadow = sb.read_bytes("/etc/shadow")
    res = pwck(sb, "-q", answers="y\n" * 20)
    assert "/etc/shadow: line 1: root's entry is not deleted; fix it by hand with vipw -s" \
        in res.stdout.splitlines(), res.stdout
    assert sb.read_bytes("/etc/shadow") == shadow


def test_numbers_strtol_reads_are_mended(classic):
    """" 2002", "+2002" and "02002" are the number 2002 to glibc and to shadow-utils: the
    field is rewritten, the line kept.  A trailing blank makes both refuse the line: it
    stays invalid."""
    sb = classic
    sb.sh("echo 'bob:x: 2002:+02002::/:/bin/sh' >> /etc/passwd;"
          "echo 'bob:!:019000:0:99999:7:::' >> /etc/shadow;"
          "echo 'carl:x:2003 :2003::/:/bin/sh' >> /etc/passwd")
    res = pwck(sb, "-q", "-r")
    out = res.stdout.splitlines()
    n = len(sb.read_bytes("/etc/passwd").splitlines())
    assert f"/etc/passwd: line {n - 1}: the user ID ' 2002' is not a plain decimal number" \
        in out
    assert "write it as 2002? No" in out
    assert (f"/etc/passwd: line {n - 1}: the group ID '+02002' is not a plain decimal "
            "number") in out
    assert "write it as 19000? No" in out
    assert f"invalid password file entry (line {n}: has an invalid format)" in out
    res = pwck(sb, "-q", answers="y\n" * 10)
    assert res.returncode == 2
    lines = sb.read("/etc/passwd").splitlines()
    assert "bob:x:2002:2002::/:/bin/sh" in lines and not any("carl" in l for l in lines)
    assert "bob:!:19000:0:99999:7:::" in sb.read("/etc/shadow").splitlines()


def test_crlf_files_in_the_tree_are_mended(tree):
    sb = tree
    a = uid(sb, "alice")
    ag = auth_gid(sb)
    files = {f"{T}/alice/shadow": sb.read_bytes(f"{T}/alice/shadow"),
             f"{T}/alice/shell": sb.read_bytes(f"{T}/alice/shell"),
             f"{T}/alice/aging": sb.read_bytes(f"{T}/alice/aging")}
    for p in files:
        sb.sh(f"sed -i 's/$/\\r/' {p}")
    crlf = snapshot(sb)
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    out = res.stdout.splitlines()
    for p in files:
        assert f"{p}: line 1: ends with a carriage return" in out, res.stdout
    assert out.count("strip it? No") == 3
    assert "replace" not in res.stdout and "invalid" not in res.stdout
    res = pwck(sb, "-q", answers="n\n" * 10)
    assert snapshot(sb) == crlf
    res = pwck(sb, "-q", answers="y\n" * 10)
    assert res.returncode == 2 and "replace" not in res.stdout
    for p, data in files.items():
        assert sb.read_bytes(p) == data, p
    st = sb.lstat(f"{T}/alice/shadow")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (a, ag, 0o640)
    assert sb.lstat(f"{T}/alice/aging").st_uid == 0
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_files_in_the_tree_without_their_newline_are_mended(tree):
    """An administrator's printf, or an editor set to write no final newline: readers
    refuse the shadow and aging files without it (the user cannot log in), but the line
    is whole.  pwck names what is wrong and adds the newline, where it used to call the
    files invalid and offer a locked password and an expired aging in their place."""
    sb = tree
    files = {f"{T}/bob/shadow": sb.read_bytes(f"{T}/bob/shadow"),
             f"{T}/bob/aging": sb.read_bytes(f"{T}/bob/aging"),
             f"{T}/carol/shadow": sb.read_bytes(f"{T}/carol/shadow")}
    for p in files:
        sb.sh(f"printf '%s' \"$(cat {p})\" > {p}.new && cat {p}.new > {p} && rm {p}.new")
    # and both at once: a carriage return and no newline
    sb.sh(f"printf '%s\\r' \"$(cat {T}/carol/shadow)\" > /root/c && cat /root/c > {T}/carol/shadow")
    cut = snapshot(sb)
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    out = res.stdout.splitlines()
    for p in (f"{T}/bob/shadow", f"{T}/bob/aging"):
        assert f"{p}: line 1: has no newline at its end" in out, res.stdout
    assert f"{T}/carol/shadow: line 1: ends with a carriage return" in out, res.stdout
    assert out.count("add it? No") == 2 and out.count("strip it? No") == 1
    assert "replace" not in res.stdout and "invalid" not in res.stdout
    res = pwck(sb, "-q", answers="n\n" * 10)
    assert snapshot(sb) == cut
    res = pwck(sb, "-q", answers="y\n" * 10)
    assert res.returncode == 2 and "replace" not in res.stdout
    for p, data in files.items():
        assert sb.read_bytes(p) == data, p
    assert sb.lstat(f"{T}/bob/shadow").st_uid == uid(sb, "bob")
    assert sb.lstat(f"{T}/bob/aging").st_uid == 0
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout


def test_mended_file_changed_before_the_answer_is_kept(tree):
    """pwck read alice's shadow file (its line ending in a carriage return), asked
    "strip it?", and on the answer wrote what it had read, minus the CR.  A password
    change of alice's while the question waited (passwd replaces the file) was undone:
    her old hash came back.  A file replaced since it was read is not repaired, and
    that is said."""
    sb = tree
    p = f"{T}/alice/shadow"
    sb.sh(f"sed -i 's/$/\\r/' {p}")
    new = b"!new-hash:19500:\n"
    proc = sb.popen([PWCK, "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
    out = b""
    deadline = time.monotonic() + 30
    while b"strip it? " not in out and time.monotonic() < deadline:
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        out += chunk
    assert b"strip it? " in out, out
    # the user's own writer: a new file renamed over the old one
    sb.write(f"{T}/alice/.pw-new", new, mode=0o640, uid=uid(sb, "alice"), gid=auth_gid(sb))
    sb.sh(f"mv -T {T}/alice/.pw-new {p}")
    rest, err = proc.communicate(b"y\n" * 10, timeout=60)
    out += rest
    assert sb.read_bytes(p) == new, out.decode()
    assert b"changed while being checked" in out + err, (out + err).decode()



def test_replaced_file_changed_before_the_answer_is_kept(tree):
    """pwck found alice's shadow file invalid and asked "replace it with a locked
    password?".  While the question waited root's passwd gave alice a new password (a
    new file renamed over the old one); the "y" then locked that new password out.  A
    file replaced since it was judged is not replaced, and that is said."""
    sb = tree
    p = f"{T}/alice/shadow"
    sb.sh(f"echo garbage > {p}")
    new = b"$6$salt$newhash:19500:\n"
    proc = sb.popen([PWCK, "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
    out = b""
    deadline = time.monotonic() + 30
    while b"replace it with a locked password" not in out and time.monotonic() < deadline:
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        out += chunk
    assert b"replace it with a locked password" in out, out
    sb.write(f"{T}/alice/.pw-new", new, mode=0o640, uid=uid(sb, "alice"), gid=auth_gid(sb))
    sb.sh(f"mv -T {T}/alice/.pw-new {p}")
    rest, err = proc.communicate(b"y\n" * 10, timeout=60)
    out += rest
    assert proc.returncode == 5, (out + err).decode()
    assert sb.read_bytes(p) == new, out.decode()
    assert f"{p} changed while being checked".encode() in out + err, (out + err).decode()
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout) == (0, ""), res.stdout

# ---------------------------------------------------------------- next to a writer

def exchange_index(sb, argv):
    """Which renameat2() of argv puts the new /etc/passwd in place (lib/etc/txn.c
    exchanges it with its staged file after writing the journal); argv is run once."""
    sb.run(["/usr/bin/strace", "-f", "-o", "/tmp/renames", "-e", "trace=renameat2"] + argv)
    calls = [l for l in sb.read("/tmp/renames").splitlines() if "renameat2(" in l]
    return 1 + next(i for i, l in enumerate(calls)
                    if l.rstrip().endswith('"passwd", RENAME_EXCHANGE) = 0'))


@pytest.mark.parametrize("tool", ["pwck", "grpck"])
def test_read_only_check_is_not_fooled_by_a_running_writer(tree, tool):
    """-r next to a useradd -m that is between its commit point and its last rename
    (strace holds it there 2 s): the journal, the staged files and the directory built
    under a reserved name are that command's work in progress, not "an interrupted
    update" or "left-over temporary" entries.  -r waits for the writers' lock (as a
    reader: two -r runs do not wait for each other), then reports a clean state."""
    sb = tree
    n = exchange_index(sb, ["/usr/sbin/useradd", "-m", "probe"])
    sb.run(["/usr/sbin/userdel", "-r", "probe"])
    slow = sb.popen(["/usr/bin/strace", "-f", "-o", "/dev/null", "-e", "trace=renameat2",
                     "-e", "inject=renameat2:delay_enter=2000000:when=%d" % n,
                     "/usr/sbin/useradd", "-m", "slow"],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = os.path.join(sb.root, "etc/.hardened-shadow.txn")
    deadline = time.monotonic() + 20
    while not os.path.exists(journal):
        assert time.monotonic() < deadline and slow.poll() is None, slow.communicate()
        time.sleep(0.01)
    res = sb.run(["/usr/sbin/" + tool, "-q", "-r"], check=False)
    out, err = slow.communicate(timeout=30)
    assert slow.returncode == 0, (out, err)
    assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res


def test_temporary_of_a_writer_in_its_window_is_not_a_left_over(tree):
    """A temporary in a user's directory while a writer holds the directory's lock
    (here the test holds the flock, as passwd, chsh and root's writers do from before
    they create their temporary until after the rename) is that writer's work in
    progress: pwck -r does not call it a left-over, nor wait.  The same file with the
    lock free is one."""
    sb = tree
    temp = "%s/alice/.shadow.AbCdEfGh1234" % T
    sb.write(temp, "x:1:\n", mode=0o640, uid=uid(sb, "alice"), gid=auth_gid(sb))
    fd = os.open(os.path.join(sb.root, T.lstrip("/"), "alice"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        res = pwck(sb, "-q", "-r")
        assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res
        assert time.monotonic() - start < 5
    finally:
        os.close(fd)
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2 and "%s: left-over temporary regular file" % temp in res.stdout


# ------------------------------------------- another tool's /etc/shadow beside the tree

CLASSIC_USERADD = "/usr/libexec/hs-test/shadow-utils/useradd"


def foreign_shadow(sb):
    """What another tool leaves on a converted root: Debian's useradd writes /etc/shadow
    when there is one (as systemd-sysusers makes it), with a line for its account only;
    without one it puts the password in /etc/passwd's field."""
    sb.run([CLASSIC_USERADD, "-M", "-p", "$6$salt$inpasswd", "cl0"])
    sb.sh("install -m 0640 -g shadow /dev/null /etc/shadow")
    sb.run([CLASSIC_USERADD, "-M", "-p", "$6$salt$foreignhash", "cl1"])
    assert [l.split(":")[0] for l in sb.read("/etc/shadow").splitlines()] == ["cl1"]


def test_foreign_shadow_beside_the_tree(tree):
    """Debian's useradd (or systemd-sysusers) on a converted root puts its account in
    /etc/shadow or /etc/passwd.  The tree's users need no line there and the foreign
    accounts need no directory (docs/decisions.md): -r is clean, and a "y" to
    everything adds no "!" line (which, with "shadow: files hardened_shadow", would lock
    the tree's users out) and no locked directory (which would shadow the foreign
    hash with "shadow: hardened_shadow files")."""
    sb = tree
    foreign_shadow(sb)
    res = pwck(sb, "-q", "-r")
    assert (res.returncode, res.stdout, res.stderr) == (0, "", ""), res.stdout
    before = (snapshot(sb), sb.read_bytes("/etc/passwd"), sb.read_bytes("/etc/shadow"))
    res = pwck(sb, "-q", answers="y\n" * 40)
    assert (res.returncode, res.stdout) == (0, ""), res.stdout
    assert (snapshot(sb), sb.read_bytes("/etc/passwd"), sb.read_bytes("/etc/shadow")) \
        == before
    # a real problem is still one, reported once: dave has neither
    sb.sh(f"rm -r {T}/dave")
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    assert res.stdout.splitlines() == [
        f"{T}/dave: missing; user 'dave' in /etc/passwd has no directory and cannot "
        "log in",
        "create it with a locked password and an expired aging? No",
        "pwck: no changes"], res.stdout


def assert_only_reported(sb, expected):
    """pwck -q -r says expected (exit 2, nothing changed); then a "y" to everything is
    asked nothing and changes neither the tree nor /etc/shadow (if there is one)."""
    def state():
        return snapshot(sb), sb.exists("/etc/shadow") and sb.read_bytes("/etc/shadow")

    before = state()
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2
    assert res.stdout.splitlines() == expected + ["pwck: no changes"], res.stdout
    res = pwck(sb, "-q", answers="y\n" * 40)
    assert res.returncode == 2 and "? " not in res.stdout, res.stdout
    assert state() == before


def test_user_in_both_shadow_and_tree_is_reported(tree):
    """alice in the tree and in /etc/shadow: which hash getspnam() returns depends on
    nsswitch.conf's order.  Reported; pwck cannot know which one is meant, so it
    offers to remove neither."""
    sb = tree
    foreign_shadow(sb)
    sb.sh("echo 'alice:$6$salt$other:19000:0:99999:7:::' >> /etc/shadow")
    assert_only_reported(sb, [
        f"user alice has both a line in /etc/shadow and the directory {T}/alice; "
        "getspnam() returns the one nsswitch.conf names first: remove the other by hand"])


# ---------------------------------------------------------- root's own files in the tree

def test_roots_untrusted_files_are_never_replaced(tree):
    """Root's shadow owned by another user, root's aging with a second link: reported,
    with the file and the fault named, and the administrator sent to fix them by hand.
    A locked password or an expired aging would lock root out, so a "y" to everything
    leaves both as they are.  (Only root writes root's directory: an admin's mistake.)"""
    sb = tree
    a = uid(sb, "alice")
    sb.sh(f"chown alice {T}/root/shadow; ln {T}/root/aging /root/aging-copy")
    assert_only_reported(sb, [
        f"{T}/root/aging: link count is 2, should be 1; the account counts as expired",
        f"{T}/root/aging: root's file is not replaced; fix it by hand",
        f"{T}/root/shadow: owner is alice ({a}), should be root (0); its contents cannot "
        f"be trusted{NSS_NOTE}",
        f"{T}/root/shadow: root's file is not replaced; fix it by hand"])


def test_roots_directory_is_never_removed(tree):
    """Root's directory replaced by a symbolic link (to where it was moved): reported,
    never removed and recreated locked."""
    sb = tree
    sb.sh(f"mv {T}/root /root/tree-root; ln -s /root/tree-root {T}/root")
    assert_only_reported(sb, [
        f"{T}/root: is a symbolic link, should be a directory",
        f"{T}/root: root's directory is not removed; fix it by hand"])


def test_roots_missing_directory_is_made_without_an_expiry(tree):
    """Root with no directory in the tree: the one made for it has a locked password but
    no expiry.  An expired aging (what another user's gets) would also refuse root's key
    logins at PAM's account stage, one "y" too many away from locking root out."""
    sb = tree
    sb.sh(f"rm -r {T}/root")
    res = pwck(sb, "-q", "-r")
    assert "create it with a locked password? No" in res.stdout.splitlines(), res.stdout
    res = pwck(sb, "-q", answers="y\n" * 40)
    assert res.returncode == 2, res.stdout
    assert sb.read(f"{T}/root/shadow").split(":")[0] == "!"
    aging = sb.read(f"{T}/root/aging").rstrip("\n").split(":")
    assert aging[4] == "-1", aging          # expire: unset
    res = pwck(sb, "-q", "-r")
    assert f"{T}/root" not in res.stdout, res.stdout


# ------------------------------------------------------------ next to a loop of writers

RACE_SECONDS = 3

RACE_WRITER = r"""
end=$(( $(date +%s) + SECS ))
i=0
while [ $(date +%s) -lt $end ]; do
    i=$((i+1))
    useradd -m -G crew racer >/dev/null 2>&1 || echo "@ useradd $?"
    usermod -l racer2 racer >/dev/null 2>&1 || echo "@ usermod-l $?"
    usermod -l racer racer2 >/dev/null 2>&1 || echo "@ usermod-l-back $?"
    userdel -r racer >/dev/null 2>&1 || echo "@ userdel $?"
    printf 'nu:Pw-nu-1:::nu:/nonexistent:/bin/sh\n' | newusers >/dev/null 2>&1 ||
        echo "@ newusers $?"
    userdel nu >/dev/null 2>&1 || echo "@ userdel-nu $?"
done
echo "@ rounds $i"
"""

RACE_READER = r"""
end=$(( $(date +%s) + SECS ))
while [ $(date +%s) -lt $end ]; do
    pwck -r; echo "@ pwck $?"
    grpck -r; echo "@ grpck $?"
done
"""


def test_read_only_checks_next_to_a_useradd_userdel_loop(tree):
    """pwck -r and grpck -r in a loop next to a loop of our useradd -m -G,
    usermod -l (there and back), userdel -r and newusers.  Every state the
    writers leave between two commands is the state before them, which the
    readers judge alone first; so every other line a reader prints is a false
    alarm: a monitoring job would page someone for a directory it read before
    /etc/passwd was committed, a member of a group read before userdel removed
    it, a directory usermod -l had taken away, a home read before its rename.
    The real problems
    planted first (a directory without a user, a user without a directory, a
    member without a user) are reported by every run, writers or not."""
    sb = tree
    sb.run(["/usr/sbin/groupadd", "crew"])
    sb.sh(f"mkdir -m 2710 {T}/ghost; rm -r {T}/erin; gpasswd -a erin crew >/dev/null; "
          r"sed -i 's/^crew:x:\([0-9]*\):erin$/crew:x:\1:erin,phantom/' /etc/group")
    quiet = {}
    for tool in ("pwck", "grpck"):
        res = sb.run(["/usr/sbin/" + tool, "-r"], check=False)
        assert res.stderr == "", res
        quiet[tool] = (res.returncode, res.stdout)
    assert f"{T}/ghost: directory without a user" in quiet["pwck"][1]
    assert f"{T}/erin: missing; user 'erin'" in quiet["pwck"][1]
    assert "group crew: no user phantom" in quiet["grpck"][1]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    writer = sb.popen(["/bin/sh", "-c", RACE_WRITER.replace("SECS", str(RACE_SECONDS))],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    reader = sb.popen(["/bin/sh", "-c", RACE_READER.replace("SECS", str(RACE_SECONDS))],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    rout, _ = reader.communicate(timeout=RACE_SECONDS + 60)
    wout, _ = writer.communicate(timeout=RACE_SECONDS + 60)
    wlines = wout.splitlines()
    assert len(wlines) == 1 and wlines[0].startswith("@ rounds "), wout
    runs, alarms, out = 0, [], []
    for line in rout.splitlines():
        if not line.startswith("@ "):
            out.append(line)
            continue
        runs += 1
        tool, rc = line.split()[1:]
        if (int(rc), "".join(l + "\n" for l in out)) != quiet[tool]:
            alarms += ["%s -r exited %s: %s" % (tool, rc, l) for l in out
                       if l not in quiet[tool][1].splitlines()] or \
                      ["%s -r exited %s" % (tool, rc)]
        out = []
    print("writer %s, reader runs %d, false alarms %d" % (wlines[0], runs, len(alarms)))
    assert runs and not alarms, "\n".join(sorted(set(alarms)))
    for tool in ("pwck", "grpck"):
        res = sb.run(["/usr/sbin/" + tool, "-r"], check=False)
        assert (res.returncode, res.stdout, res.stderr) == quiet[tool] + ("",), res


def test_read_only_checks_next_to_a_writer_that_keeps_the_lock(tree):
    """A writer that keeps /etc/.pwd.lock (an editor left open in vipw, a pwck
    without -r on a big tree): -r waits for it a bounded time only, then reports what
    it finds (real problems are not hidden by a lock) and says on stderr that what a
    writer was changing may be misreported.  It never takes a lock that would make
    the writer wait."""
    sb = tree
    sb.sh(f"mkdir -m 2710 {T}/ghost")
    fd = os.open(os.path.join(sb.root, "etc/.pwd.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        res = pwck(sb, "-q", "-r")
        assert time.monotonic() - start < 12
        assert ("pwck: the writers' lock /etc/.pwd.lock stayed busy" in res.stderr
                and "run pwck -r again" in res.stderr), res
        assert res.returncode == 2, res
        assert f"{T}/ghost: directory without a user" in res.stdout, res
    finally:
        os.close(fd)
    res = pwck(sb, "-q", "-r")
    assert res.returncode == 2 and res.stderr == "", res


def test_read_only_checks_next_to_hard_links_of_the_account_files(tree):
    """Where fs.protected_hardlinks is 0 any user may hard-link /etc/passwd into a
    directory of theirs on the same file system (here the test links and unlinks it
    without end, as such a user would).  -r took a change of its link count or ctime
    for a writer's change: every confirmation failed, each report was checked again
    and again against files read again, and then left out as "changed at every look",
    with exit 0: a user hid every real problem from pwck -r (and made it read the files
    dozens of times per problem).  A writer replaces the files (a new inode) or changes
    their size and mtime; only those tell a change now, as in lib/etc/txn.c's
    recovery."""
    sb = tree
    sb.sh(f"mkdir -m 2710 {T}/ghost")
    src = os.path.join(sb.root, "etc/passwd")
    dst = os.path.join(sb.root, "home/alice/passwd-link")
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            os.link(src, dst)
            os.unlink(dst)

    os.link(src, dst)       # on the same file system
    os.unlink(dst)
    t = threading.Thread(target=churn)
    t.start()
    try:
        start = time.monotonic()
        res = pwck(sb, "-q", "-r")
        took = time.monotonic() - start
    finally:
        stop.set()
        t.join()
    assert f"{T}/ghost: directory without a user" in res.stdout, res
    assert (res.returncode, res.stderr) == (2, ""), res
    assert took < 12, took


# /etc/passwd replaced without end, each time under the writers' lock, held briefly
CHANGING_WRITER = r"""
import fcntl, os, sys
data = open("/etc/passwd", "rb").read()
lockfd = os.open("/etc/.pwd.lock", os.O_RDWR | os.O_CREAT, 0o600)
print("writing", flush=True)
while True:
    with open("/etc/passwd.hs-test", "wb") as f:
        f.write(data)
    fcntl.lockf(lockfd, fcntl.LOCK_EX)
    os.rename("/etc/passwd.hs-test", "/etc/passwd")
    fcntl.lockf(lockfd, fcntl.LOCK_UN)
"""


def test_read_only_checks_next_to_a_writer_that_changes_the_files_at_every_look(tree):
    """A writer that replaces /etc/passwd again and again, under the writers' lock but
    never holding it long (a setuid chfn run in a loop by a user, where the build makes
    chfn setuid; a provisioning loop): -r found the files changed at every look, read
    them again eight times per look, eight looks per report, and then left each real
    problem out as "changed at every look", exit 0.  Files that change at every look are
    a writer at work, as a lock that stays busy is: from then on the reports are said as
    found, with the warning on stderr, and the files are not read again."""
    sb = tree
    sb.sh(f"mkdir -m 2710 {T}/ghost")
    # a big /etc/group: each reading takes longer than the writer's round
    sb.sh("seq 100000 160000 | sed 's/.*/g&:x:&:/' >> /etc/group")
    writer = sb.popen(["/usr/bin/python3", "-c", CHANGING_WRITER],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "writing\n"
    try:
        res = pwck(sb, "-q", "-r")
    finally:
        writer.kill()
        writer.communicate(timeout=30)
    assert f"{T}/ghost: directory without a user" in res.stdout, res
    assert res.returncode == 2, res
    assert "changed at every look" not in res.stderr, res


# ---------------------------------------------------------------- exit status

# One finding each on a classic system (root, alice and bob, each with a home and a
# shadow line): a shell script run in /etc.
CLASSIC_STATUS_CASES = {
    "clean": ":",
    "duplicate-name": "echo 'alice:x:2009:2001::/home/alice:/bin/sh' >> passwd",
    "too-few-fields": "echo 'carol:x:2003:2001::/home/alice' >> passwd",
    "bad-line": "echo 'bad line' >> passwd",
    "no-shadow-entry": "echo 'carol:x:2003:2001::/home/alice:/bin/sh' >> passwd",
    "shadow-without-passwd": "echo 'ghost:!:19000:0:99999:7:::' >> shadow",
    "bad-uid": "echo 'carol:x:abc:2001::/home/alice:/bin/sh' >> passwd;"
               "echo 'carol:!:19000:0:99999:7:::' >> shadow",
    "shadow-duplicate": "echo 'alice:!:19000:0:99999:7:::' >> shadow",
    "shadow-bad-line": "echo 'bad shadow' >> shadow",
    "missing-home": "sed -i 's,:/home/bob:,:/nonexist/bob:,' passwd",
    "missing-shell": "sed -i 's,:/home/bob:/bin/sh$,:/home/bob:/bin/nosh,' passwd",
    "missing-group": "sed -i 's/^bob:x:2002:2002:/bob:x:2002:4242:/' passwd",
    "password-not-x": "sed -i 's/^bob:x:/bob:$6$s$h:/' passwd",
    "change-in-the-future": "sed -i 's/^bob:\\([^:]*\\):19000:/bob:\\1:99999:/' shadow",
}
# Debian's pwck: a warning (home, shell, group, a password field beside a shadow line,
# a change in the future) is a bad entry unless -q hides it; the others are always.
CLASSIC_WARNINGS = {"missing-home", "missing-shell", "missing-group", "password-not-x",
                    "change-in-the-future"}
STATUS_MODES = {"r": ["-r"], "q-r": ["-q", "-r"], "n": [], "q-n": ["-q"]}


def status_expected(case, args, warnings=CLASSIC_WARNINGS):
    if case == "clean" or (case in warnings and "-q" in args):
        return 0
    return 2


@pytest.fixture
def classic_pair(sb):
    """root, alice and bob only (the base's system accounts have homes that do not
    exist): both pwcks find nothing."""
    sb.sh("""set -e; cd /etc
    for f in passwd shadow group gshadow; do grep '^root:' $f > $f.new; cat $f.new > $f; rm $f.new; done
    for n in alice:2001 bob:2002; do u=${n%:*}; i=${n#*:}
        echo "$u:x:$i:$i::/home/$u:/bin/sh" >> passwd
        echo "$u:\\$6\\$salt\\$hashof$u:19000:0:99999:7:::" >> shadow
        echo "$u:x:$i:" >> group; echo "$u:!::" >> gshadow
        mkdir -p /home/$u; chown $i:$i /home/$u
    done""")
    for argv in ([PWCK, "-r"], [DEB_PWCK, "-r"]):
        res = sb.run(argv, check=False)
        assert (res.returncode, res.stdout) == (0, ""), res
    return sb


@pytest.mark.parametrize("mode", list(STATUS_MODES))
@pytest.mark.parametrize("case", list(CLASSIC_STATUS_CASES))
def test_classic_exit_status_matches_debian(classic_pair, case, mode):
    """The status Debian's pwck returns for one finding left in place by -r or by an
    answer "n" (with -q too), and ours the same."""
    sb = classic_pair
    sb.sh("cd /etc; " + CLASSIC_STATUS_CASES[case])
    args = STATUS_MODES[mode]
    answers = None if "-r" in args else "n\n" * 20
    before = (sb.read("/etc/passwd"), sb.read("/etc/shadow"))
    want = status_expected(case, args)
    deb = sb.run([DEB_PWCK, *args], input=answers, check=False)
    ours = pwck(sb, *args, answers=answers)
    assert deb.returncode == want, ("debian", deb)
    assert ours.returncode == want, ("ours", ours)
    assert (sb.read("/etc/passwd"), sb.read("/etc/shadow")) == before
    assert ("pwck: no changes" in ours.stdout) == (want == 2), ours.stdout


# One finding each in the tree (which Debian's pwck does not know), on the tree
# fixture: a shell script run in /etc/hardened-shadow.
TREE_STATUS_CASES = {
    "directory-without-user": "mkdir ghost; echo 'x:1:' > ghost/shadow; chown 4242 ghost",
    "file-without-user": "echo junk > ghost",
    "invalid-name": "echo junk > 'b@d'",
    "left-over-temporary": "mkdir .new.zed.AbCdEfGhIjKl",
    "interrupted-usermod-l": "mkdir .usermod-l.zed",
    "user-without-directory": "rm -r alice",
    "directory-mode": "chmod 0755 alice",
    "tree-mode": "chmod 0755 .",
    "stray-file": "echo junk > alice/notes",
    "missing-file": "rm alice/aging",
    "file-mode": "chmod 0644 alice/shadow",
    "invalid-contents": "echo garbage > alice/aging",
    "hard-link": "ln alice/shadow /root/alice-shadow",
    "password-not-x": "sed -i 's/^alice:x:/alice:$6$s$h:/' /etc/passwd",
    "shadow-line-too": "grep '^alice:' /etc/passwd | cut -d: -f1 | "
                       "sed 's/$/:!:19000:0:99999:7:::/' > /etc/shadow",
    "missing-shell": "echo /bin/nosh > alice/shell",
}
TREE_WARNINGS = {"missing-shell"}


@pytest.mark.parametrize("mode", list(STATUS_MODES))
@pytest.mark.parametrize("case", list(TREE_STATUS_CASES))
def test_tree_exit_status(tree, case, mode):
    """A finding in the tree left in place (-r, or an answer "n") is a bad entry by
    shadow-utils' rule: status 2, with -q too unless it is a warning."""
    sb = tree
    sb.sh(f"cd {T}; " + TREE_STATUS_CASES[case])
    args = STATUS_MODES[mode]
    answers = None if "-r" in args else "n\n" * 20
    before = snapshot(sb)
    res = pwck(sb, *args, answers=answers)
    assert res.returncode == status_expected(case, args, TREE_WARNINGS), res
    assert snapshot(sb) == before


def test_read_only_entry_changed_at_every_look_is_a_bad_entry(tree):
    """An entry with a problem at every look that changes between looks (a writer at
    work in it without end, as its owner's chsh in a loop) is left out of -r's report
    as unconfirmed: -r said so on stderr but exited 0, as if nothing were wrong.  (Once
    reported it is a bad entry too: either way the status is 2.)"""
    sb = tree
    # stray files, and a new one at a time: the directory never looks the same twice
    sb.sh(f"cd {T}/alice; for i in $(seq 3000); do : > stray$i; done")
    churn = sb.popen(["/bin/sh", "-c", f"cd {T}/alice; i=0; echo go; "
                      "while [ $i -lt 1000000 ]; do : > churn$i; i=$((i+1)); done"],
                     stdout=subprocess.PIPE, text=True)
    try:
        assert churn.stdout.readline() == "go\n"
        res = pwck(sb, "-q", "-r")
    finally:
        churn.kill()
        churn.communicate(timeout=30)
    assert ("1 entry changed at every look" in res.stderr
            or f"{T}/alice/stray1: stray" in res.stdout), res
    assert res.returncode == 2, res
