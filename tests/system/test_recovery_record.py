"""The record in /etc/.pwd.lock that spares each tool its listing of /etc.

Every tool that takes the global locks first finishes or removes what a killed tool left
(the journal, staged files, temporaries, dead FILE.PID files, reserved directories in the
tree).  Finding those takes a listing of /etc and of the tree, which cost groupadd about a
tenth of its run.  So the holder of .pwd.lock empties it when it takes it, and writes
"hardened-shadow: no interrupted update since boot ID" when it releases it with no journal
left; a tool that finds this boot's record skips the listings.  These tests kill a tool
between the two, fake a power loss (the record of another boot) and check that the next
tool then looks and cleans, and that it does not look after a clean run."""

import os
import re
import time

import pytest

import grouptools
from homemounts import HOME_MOUNTS, mount_on_home
import sandbox

GROUPADD = "/usr/sbin/groupadd"
PWD_LOCK = "/etc/.pwd.lock"
RECORD = "hardened-shadow: no interrupted update since boot %s\n"
# our temporaries in /etc: .BASE.XXXXXXXXXXXX, ..BASE.hs-txn.XXXXXXXXXXXX (older
# binaries), .BASE.hs-txn
LITTER = re.compile(r"^\.\.?(group|gshadow|passwd|shadow)(-|\.hs-txn)?(\.[A-Za-z0-9]{12})?$"
                    r"|^\.hardened-shadow\.txn$")


def boot_id(sb):
    return sb.read("/proc/sys/kernel/random/boot_id").strip()


def litter(sb):
    return sorted(f for f in sb.run(["ls", "-A", "/etc"]).stdout.split() if LITTER.match(f))


def listings(sb, argv):
    """argv under strace: how many getdents64 calls it made (its listings)."""
    res = sb.run(["strace", "-f", "-qq", "-e", "trace=getdents64", "-o", "/tmp/dents"] + argv)
    assert res.returncode == 0, res
    return len([l for l in sb.read("/tmp/dents").splitlines() if "getdents64(" in l])


def group_names(sb):
    return [l.split(":")[0] for l in sb.read("/etc/group").splitlines()]


def test_a_clean_run_records_it_and_the_next_one_lists_nothing(sb):
    sb.run([GROUPADD, "first"])
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)
    assert listings(sb, [GROUPADD, "second"]) == 0
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)
    assert "second" in group_names(sb)


def test_without_the_record_the_tool_lists_etc(sb):
    sb.write(PWD_LOCK, "", mode=0o600)
    assert listings(sb, [GROUPADD, "first"]) > 0
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


# Killed before its commit point, nothing installed: on entering the journal's link (the
# staged copies whole at their names) or the first write of a staged copy (gshadow's, made
# at its name and still empty: a staged file cut short must not count as committed).  Only
# a listing finds what is left.
# make group.lock and gshadow.lock.)
@pytest.mark.parametrize("kill_at,nth", [("linkat", 3), ("writev", 1)])
def test_a_killed_tool_leaves_no_record_and_the_next_one_cleans_up(sb, kill_at, nth):
    sb.run([GROUPADD, "first"])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=%s:signal=SIGKILL:when=%d" % (kill_at, nth), GROUPADD, "killed"],
                 check=False)
    assert res.returncode != 0, res
    assert sb.read(PWD_LOCK) == ""
    assert ".gshadow.hs-txn" in litter(sb), "the kill left nothing to clean up: the test " \
        "proves nothing"
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert listings(sb, [GROUPADD, "after"]) > 0
    assert litter(sb) == []
    assert "killed" not in group_names(sb) and "after" in group_names(sb)
    assert "killed" not in sb.read("/etc/gshadow")
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_the_record_of_another_boot_is_not_trusted(sb):
    """A power loss: the record of the boot before, and a staged file the crash left."""
    sb.run([GROUPADD, "first"])
    sb.write(PWD_LOCK, RECORD % "00000000-0000-0000-0000-000000000000", mode=0o600)
    sb.write("/etc/.group.hs-txn", sb.read("/etc/group") + "ghost:x:4242:\n", mode=0o644)
    res = sb.run([GROUPADD, "after"])
    assert "removed /etc/.group.hs-txn left by an interrupted update" in res.stderr
    assert litter(sb) == []
    assert "ghost" not in group_names(sb)
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_a_record_with_anything_more_is_not_trusted(sb):
    sb.write(PWD_LOCK, RECORD % boot_id(sb) + "x", mode=0o600)
    sb.write("/etc/.gshadow.hs-txn", "stale\n", mode=0o640)
    sb.run([GROUPADD, "after"])
    assert litter(sb) == []
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_shadow_utils_leaves_the_record_as_it_is(sb):
    """lckpwdf() opens .pwd.lock without truncating it: Debian's tools keep our record."""
    sb.run([GROUPADD, "first"])
    sb.run([sandbox.CLASSIC_TOOLS_DIR + "/groupadd", "theirs"])
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_a_reserved_directory_keeps_the_record_out_until_it_is_swept(sb):
    """useradd killed after building the new user's directory and before its journal
    leaves .new.USER.XXXXXXXXXXXX and the tree's mark.  A tool without the tree work
    (root's chfn, gpasswd) recovers /etc but cannot sweep the tree: it must not write the
    record, or every later useradd skips the sweep and the directory stays until a reboot."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)
    ghost = "/etc/hardened-shadow/.new.ghost.AbCdEf012345"
    # what the killed useradd left: an empty .pwd.lock, the directory, the mark
    sb.write(PWD_LOCK, "", mode=0o600)
    sb.run(["mkdir", "-m", "0700", ghost])
    sb.write("/etc/hardened-shadow/.reserved", "", mode=0o600)
    sb.run(["/usr/bin/chfn", "-f", "Bob", "bob"])
    assert sb.exists(ghost), "chfn swept the tree: the test proves nothing"
    sb.run(["/usr/sbin/useradd", "carol"])
    assert not sb.exists(ghost)
    assert not sb.exists("/etc/hardened-shadow/.reserved")
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_a_reserved_directory_is_swept_whatever_the_record_says(sb):
    """This boot's record next to the tree's mark (an /etc restored in the same boot, a
    tool from before the record killed meanwhile): the mark is looked up at locking, so
    the next tree tool still sweeps the reserved directory."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    ghost = "/etc/hardened-shadow/.new.ghost.AbCdEf012345"
    sb.run(["mkdir", "-m", "0700", ghost])
    sb.write("/etc/hardened-shadow/.reserved", "", mode=0o600)
    sb.write(PWD_LOCK, RECORD % boot_id(sb), mode=0o600)
    sb.run(["/usr/sbin/useradd", "carol"])
    assert not sb.exists(ghost)
    assert not sb.exists("/etc/hardened-shadow/.reserved")
    assert sb.read(PWD_LOCK) == RECORD % boot_id(sb)


def test_a_journal_is_finished_whatever_the_record_says(sb):
    """A committed journal with this boot's record (an /etc copied back from a backup taken
    while a tool ran): the next tool still finishes the change, before it writes its own."""
    sb.run(["/usr/sbin/useradd", "bob"])
    # killed at its first exchange: the journal is written, nothing installed
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=1", GROUPADD, "killed"],
                 check=False)
    assert res.returncode != 0, res
    assert sb.exists("/etc/.hardened-shadow.txn"), "no journal: the test proves nothing"
    sb.write(PWD_LOCK, RECORD % boot_id(sb), mode=0o600)
    # chfn: no tree work, so no look for a journal before its own locking
    sb.run(["/usr/bin/chfn", "-f", "Bob", "bob"])
    assert "killed" in group_names(sb)
    assert "killed" in [l.split(":")[0] for l in sb.read("/etc/gshadow").splitlines()]
    assert litter(sb) == []


def test_every_tree_tool_leaves_the_record_after_a_clean_run(sb):
    """The tree's mark goes with the last reserved directory: a clean run of each tool that
    makes one still records it, so the next tool skips its listings."""
    sb.use_hardened_tree()
    steps = [
        ["/usr/sbin/useradd", "-m", "alice"],
        ["/usr/sbin/newusers"],
        ["/usr/sbin/usermod", "-l", "alicia", "alice"],
        ["/usr/sbin/usermod", "-u", "4321", "alicia"],
        ["/usr/sbin/userdel", "-r", "alicia"],
        ["/usr/sbin/pwunconv"],
        ["/usr/sbin/pwconv"],
    ]
    for argv in steps:
        inp = "bob:Secret-1234:5001:5001::/home/bob:/bin/sh\n" if "newusers" in argv[0] else None
        sb.run(argv, input=inp)
        assert sb.read(PWD_LOCK) == RECORD % boot_id(sb), argv
        assert not sb.exists("/etc/hardened-shadow/.reserved"), argv


def test_a_file_changed_since_drops_the_rest_of_the_change(sb):
    """useradd -m killed at its first install exchange, after its journal: nothing is
    installed yet.  Then shadow-utils' usermod, which knows no journal and breaks the killed
    tool's stale lock, changes a user, so /etc/passwd is newer than the journal.  The next
    tool must keep that and drop all of the killed change: not /etc/passwd alone while the
    private group goes into /etc/group and /etc/gshadow and the user's directory into the
    tree (a group with no user, a directory with no passwd line)."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    pwck_before = sb.run(["/usr/sbin/pwck", "-r"], check=False)
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=1",
                  "/usr/sbin/useradd", "-m", "killed"], check=False)
    assert res.returncode != 0, res
    assert sb.read("/etc/.hardened-shadow.txn").startswith("hardened-shadow transaction 1\n")
    assert sb.exists("/etc/.gshadow.hs-txn") and sb.exists("/etc/.passwd.hs-txn")
    sb.run(["/usr/libexec/hs-test/shadow-utils/usermod", "-c", "Foreign", "bob"])
    res = sb.run([GROUPADD, "after"])
    assert ("dropped an interrupted update of /etc/gshadow: /etc/passwd was changed since"
            in res.stderr), res
    assert "/etc/passwd: the file was changed since" in res.stderr, res
    assert "undid the unfinished creation of /etc/hardened-shadow/killed" in res.stderr, res
    assert "finished" not in res.stderr.replace("unfinished", ""), res
    passwd = sb.read("/etc/passwd")
    assert ":Foreign:" in passwd and "killed" not in passwd
    assert "killed" not in group_names(sb) and "after" in group_names(sb)
    assert "killed" not in [l.split(":")[0] for l in sb.read("/etc/gshadow").splitlines()]
    tree = sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert "killed" not in tree and ".reserved" not in tree
    assert not [f for f in tree if f.startswith(".new.")]
    assert not sb.exists("/home/killed")
    assert litter(sb) == []
    # pwck finds nothing it did not find before (homes that were never made)
    res = sb.run(["/usr/sbin/pwck", "-r"], check=False)
    assert (res.returncode, res.stdout, res.stderr) == (
        pwck_before.returncode, pwck_before.stdout, pwck_before.stderr), res


def test_a_recovery_killed_after_dropping_the_change_does_not_finish_it(sb):
    """userdel -r killed at its first install exchange, after its journal; shadow-utils'
    usermod then changes /etc/passwd.  The next tool drops the whole change (the user keeps
    the passwd line, the home and the tree directory stay) but is killed itself just before
    it removes the journal, every staged file gone already.  The tool after it must not take
    that journal for one whose files were all installed and finish its work: remove the
    home and the directory of a user whose passwd line is still in place."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=1",
                  "/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode != 0, res
    assert sb.exists("/etc/.passwd.hs-txn")
    sb.run(["/usr/libexec/hs-test/shadow-utils/usermod", "-c", "Foreign", "bob"])
    # its unlinks: the five staged files (subuid, subgid, gshadow, group, passwd), the journal
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=unlinkat:signal=SIGKILL:when=6",
                  GROUPADD, "first"], check=False)
    assert res.returncode != 0, res
    assert not sb.exists("/etc/.passwd.hs-txn") and sb.exists("/etc/.hardened-shadow.txn")
    sb.run([GROUPADD, "after"])
    assert "victim:" in sb.read("/etc/passwd")
    assert sb.exists("/home/victim")
    assert "victim" in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert litter(sb) == []


def test_a_file_changed_since_keeps_the_work_carried_from_a_finished_change(sb):
    """useradd -m alice killed after its files were all installed, before its directories
    were renamed into place: alice's passwd line is in.  chsh, which cannot do that work,
    carries it on in its own journal and is killed at its first install exchange; then
    shadow-utils' usermod changes /etc/passwd.  The next tool drops chsh's change, but the
    work it carried is alice's, whose change was finished: her directory in the tree and her
    home are put in place, not removed while her passwd line stays."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    # its exchanges: subuid, subgid, gshadow, group, passwd; then alice's directory
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/useradd", "-m", "alice"], check=False)
    assert res.returncode != 0, res
    assert "alice:" in sb.read("/etc/passwd")
    assert sb.exists("/etc/.hardened-shadow.txn"), res
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=1",
                  "/usr/bin/chsh", "-s", "/bin/bash", "bob"], check=False)
    assert res.returncode != 0, res
    assert sb.exists("/etc/.passwd.hs-txn")
    sb.run(["/usr/libexec/hs-test/shadow-utils/usermod", "-c", "Foreign", "bob"])
    res = sb.run([GROUPADD, "after"])
    assert "dropped an interrupted update of /etc/passwd" in res.stderr, res
    passwd = sb.read("/etc/passwd")
    assert ":Foreign:" in passwd and "alice:" in passwd
    assert "alice" in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert sb.exists("/home/alice")
    assert litter(sb) == []


def killed_useradd(sb, before=None):
    """useradd -m killed at its first install exchange, after its journal: the change is
    committed, nothing is installed yet, the staged files wait for the next tool.
    before(): run just before it."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    if before:
        before()
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=1",
                  "/usr/sbin/useradd", "-m", "killed"], check=False)
    assert res.returncode != 0, res
    assert sb.read("/etc/.hardened-shadow.txn").startswith("hardened-shadow transaction 1\n")
    assert sb.exists("/etc/.group.hs-txn") and sb.exists("/etc/.passwd.hs-txn")


def ln_as(sb, user, path, link):
    """`ln path link` run by user, a real unprivileged uid.  Where fs.protected_hardlinks
    is 0 (the kernel's own default) any user may link any file; the host's sysctl is not
    ours to change, so where it is 1 the ln alone gets CAP_FOWNER, which is what passes
    the kernel's check (may_linkat) for a file the user does not own."""
    pw = sb.getpwnam(user)
    if not sb.exists(os.path.dirname(link)):
        sb.run(["/bin/mkdir", os.path.dirname(link)], user=user)
    caps = []
    if sb.read("/proc/sys/fs/protected_hardlinks").strip() != "0":
        caps = ["--inh-caps=+fowner", "--ambient-caps=+fowner"]
    sb.run(["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
            "--init-groups"] + caps + ["--", "/bin/ln", path, link])


def assert_killed_user_complete(sb):
    assert "killed:" in sb.read("/etc/passwd")
    assert "killed" in group_names(sb)
    assert "killed" in [l.split(":")[0] for l in sb.read("/etc/gshadow").splitlines()]
    assert "killed" in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert sb.exists("/home/killed")
    assert litter(sb) == []


LINKED = ["/etc/passwd", "/etc/group", "/etc/gshadow", "/etc/.group.hs-txn"]


@pytest.mark.parametrize("path", LINKED)
def test_a_users_link_after_a_crash_drops_nothing(sb, path):
    """A hard link changes the file's ctime, not the file.  Where fs.protected_hardlinks is
    0 a user may link /etc/passwd (or a staged file) into a directory of theirs between a
    killed tool and the next one: the recovery must still finish the committed change, not
    take the file for one a foreign tool rewrote and drop the change (the new user's
    group line, directory and home undone)."""
    sb.add_classic_user("alice", create_home=False)
    killed_useradd(sb)
    before = sb.lstat(path if "hs-txn" not in path else "/etc/group")
    ln_as(sb, "alice", path, "/var/tmp/alice/link")
    assert sb.lstat("/var/tmp/alice/link").st_nlink == 2
    res = sb.run([GROUPADD, "after"])
    assert "dropped" not in res.stderr and "undid" not in res.stderr, res
    assert "finished an interrupted update of /etc/passwd" in res.stderr, res
    assert_killed_user_complete(sb)
    assert "after" in group_names(sb)
    assert before.st_ino != sb.lstat("/etc/group").st_ino


def test_a_users_link_removed_after_a_crash_drops_nothing(sb):
    """The link made before the tool ran and removed after it was killed: the ctime moves
    again, the file is the same."""
    sb.add_classic_user("alice", create_home=False)
    killed_useradd(sb, lambda: ln_as(sb, "alice", "/etc/passwd", "/var/tmp/alice/link"))
    assert sb.lstat("/etc/passwd").st_nlink == 2
    sb.run(["/bin/rm", "/var/tmp/alice/link"], user="alice")
    res = sb.run([GROUPADD, "after"])
    assert "dropped" not in res.stderr and "undid" not in res.stderr, res
    assert_killed_user_complete(sb)


def test_a_write_in_place_after_a_crash_is_still_a_change(sb):
    """A foreign write into the file itself (same inode, same size: only the mtime tells)
    still drops the rest of the change."""
    killed_useradd(sb)
    passwd = sb.read("/etc/passwd")
    at = passwd.index("\nbob:") + 1
    before = sb.lstat("/etc/passwd")
    time.sleep(0.05)     # past the coarse clock's tick of the journal's record
    sb.sh("printf B | dd of=/etc/passwd bs=1 seek=%d conv=notrunc status=none" % at)
    after = sb.lstat("/etc/passwd")
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    res = sb.run([GROUPADD, "after"])
    assert "/etc/passwd: the file was changed since" in res.stderr, res
    assert "undid the unfinished creation of /etc/hardened-shadow/killed" in res.stderr, res
    assert "Bob:" in sb.read("/etc/passwd") and "killed" not in sb.read("/etc/passwd")
    assert "killed" not in group_names(sb)
    assert "killed" not in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert not sb.exists("/home/killed")
    assert litter(sb) == []


def test_a_rolled_back_change_killed_keeps_the_work_it_carried(sb):
    """useradd -m alice killed after her files were all installed, before her directories
    were renamed into place; chfn, which cannot do that work, carries it in its own journal,
    but /etc/passwd is a mount point (a rename over it fails), so chfn rolls its change back
    and is killed right after its own journal is gone, before the work it carried is written
    back.  That work is alice's, whose change is in place: the next tool must still put her
    directory in the tree and her home in place, not sweep the directory as a killed tool's
    leftover and leave the home under its reserved name for ever."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    # its exchanges: subuid, subgid, gshadow, group, passwd; then alice's directory
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/useradd", "-m", "alice"], check=False)
    assert res.returncode != 0, res
    assert "alice:" in sb.read("/etc/passwd")
    assert "@home-new" in sb.read("/etc/.hardened-shadow.txn")
    passwd = sb.read("/etc/passwd")
    with grouptools.bind_mounted(sb.root + "/etc/passwd"):
        # chfn writes a journal three times over the one there (each a link to a temporary
        # name, then a rename): the work alone (its recovery), its change, and after the
        # failed exchange the carried work again; killed at that one's link (its staged
        # passwd is written at its name, no link)
        res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                      "-e", "inject=linkat:signal=SIGKILL:when=3",
                      "/usr/bin/chfn", "-f", "Bob", "bob"], check=False)
    assert res.returncode == 128 + 9 or res.returncode == -9, res
    assert sb.read("/etc/passwd") == passwd
    res = sb.run([GROUPADD, "after"])
    assert "alice" in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split(), res
    assert sb.exists("/home/alice"), res
    assert sb.lstat("/home/alice").st_uid == sb.getpwnam("alice").uid
    assert not [f for f in sb.run(["ls", "-A", "/home"]).stdout.split()
                if f.startswith(".new.")]
    assert not sb.exists("/etc/hardened-shadow/.reserved")
    assert litter(sb) == []


def test_a_rolled_back_useradd_killed_leaves_no_home_behind(sb):
    """useradd -m carol with /etc/passwd a mount point: the exchange of passwd fails, the
    files installed before it are put back and the change is undone.  Killed while it
    removes the directories it built: the home under its reserved name beside /home/carol
    is named by the journal alone (no sweep looks for it), so the journal must still name
    it then, and the next tool removes it."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    before = {p: sb.read(p) for p in ("/etc/passwd", "/etc/group", "/etc/gshadow")}
    with grouptools.bind_mounted(sb.root + "/etc/passwd"):
        # its unlinks after the failed exchange: the staged passwd, (the journal,) then the
        # files of carol's directory in the tree; killed at the second of those
        res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                      "-e", "inject=unlinkat:signal=SIGKILL:when=3",
                      "/usr/sbin/useradd", "-m", "carol"], check=False)
    assert res.returncode == 128 + 9 or res.returncode == -9, res
    assert [f for f in sb.run(["ls", "-A", "/home"]).stdout.split() if f.startswith(".new.")]
    sb.run([GROUPADD, "after"])
    assert not [f for f in sb.run(["ls", "-A", "/home"]).stdout.split()
                if f.startswith(".new.") or f == "carol"]
    tree = sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
    assert "carol" not in tree and not [f for f in tree if f.startswith(".")]
    for path, text in before.items():
        assert "carol" not in sb.read(path), path
    assert litter(sb) == []


CLASSIC = "/usr/libexec/hs-test/shadow-utils/"


# where useradd -m alice is killed after its files were all installed (its exchanges:
# subuid, subgid, gshadow, group, passwd): at the rename of her directory in the tree, at
# the rename of her home, or when all is done but the journal's removal (its unlinks: the
# tree's mark, the journal)
KILLS = ["renameat2:when=6", "renameat2:when=7", "unlinkat:when=2"]


def killed_useradd_m_alice(sb, kill):
    """useradd -m alice killed at `kill` (KILLS): the journal still names all the work, some
    of it maybe done.  Returns alice's uid."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=%s:signal=SIGKILL" % kill,
                  "/usr/sbin/useradd", "-m", "alice"], check=False)
    assert res.returncode != 0, res
    assert "alice:" in sb.read("/etc/passwd")
    journal = sb.read("/etc/.hardened-shadow.txn")
    assert "@home-new" in journal and "@tree-new" in journal, journal
    assert sb.exists("/etc/hardened-shadow/alice") == (kill != KILLS[0])
    assert sb.exists("/home/alice") == (kill == KILLS[2])
    return sb.getpwnam("alice").uid


def reserved_left(sb):
    return ([f for f in sb.run(["ls", "-A", "/home"]).stdout.split() if f.startswith(".")] +
            [f for f in sb.run(["ls", "-A", "/etc/hardened-shadow"]).stdout.split()
             if f.startswith(".")])


@pytest.mark.parametrize("kill", KILLS[:2])
def test_the_work_of_a_user_deleted_since_goes_to_nobody_else(sb, kill):
    """useradd -m alice killed with her home (and maybe her directory in the tree) still to
    be put in place and handed to her uid.  Then shadow-utils, which knows no journal,
    deletes alice and adds mallory, who gets alice's uid.  The next tool must not finish
    the work: that would give /home/alice and the tree's alice to mallory's uid (a later
    useradd -m alice would find a home mallory owns and filled).  It undoes it and says
    so."""
    uid = killed_useradd_m_alice(sb, kill)
    sb.run([CLASSIC + "userdel", "alice"])
    sb.run([CLASSIC + "useradd", "mallory"])
    assert sb.getpwnam("mallory").uid == uid
    res = sb.run([GROUPADD, "after"])
    assert "finished creating" not in res.stderr, res
    assert ("undid the creation of /home/alice: /etc/passwd no longer names it for uid %d"
            % uid) in res.stderr, res
    assert ("undid the creation of /etc/hardened-shadow/alice: /etc/passwd no longer names "
            "it for uid %d" % uid) in res.stderr, res
    for path in ("/home/alice", "/etc/hardened-shadow/alice"):
        assert not sb.exists(path), path
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert litter(sb) == []
    # and alice, made again, gets a home of her own
    sb.run(["/usr/sbin/useradd", "-m", "alice"])
    alice = sb.getpwnam("alice")
    assert alice.uid != uid
    assert sb.lstat("/home/alice").st_uid == alice.uid
    assert sb.lstat("/etc/hardened-shadow/alice").st_uid == alice.uid


def test_a_home_handed_over_before_the_user_was_deleted_stays(sb):
    """The same, but useradd was killed only before it removed its journal: the home was
    alice's already (her files may be in it), so it stays, as shadow-utils' userdel
    without -r leaves a home, and as it would be had nothing been killed.  Her directory
    in the tree (no files of hers, her hash) goes, as our userdel removes it."""
    uid = killed_useradd_m_alice(sb, KILLS[2])
    sb.write("/home/alice/mine", "data\n")
    sb.run([CLASSIC + "userdel", "alice"])
    sb.run([CLASSIC + "useradd", "mallory"])
    res = sb.run([GROUPADD, "after"])
    assert "finished creating" not in res.stderr, res
    assert ("left /home/alice as it is: it was handed to uid %d before /etc/passwd stopped "
            "naming it" % uid) in res.stderr, res
    assert ("undid the creation of /etc/hardened-shadow/alice: /etc/passwd no longer names "
            "it for uid %d" % uid) in res.stderr, res
    assert sb.read("/home/alice/mine") == "data\n"
    assert not sb.exists("/etc/hardened-shadow/alice")
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")


@pytest.mark.parametrize("kill", KILLS)
def test_the_work_of_a_user_still_there_is_finished(sb, kill):
    """The same kill with nothing changed since: the next tool finishes the work."""
    uid = killed_useradd_m_alice(sb, kill)
    res = sb.run([GROUPADD, "after"])
    assert "finished creating /home/alice" in res.stderr, res
    assert "undid" not in res.stderr, res
    assert sb.lstat("/home/alice").st_uid == uid
    assert sb.lstat("/etc/hardened-shadow/alice").st_uid == uid
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_a_home_moved_since_is_not_handed_over(sb):
    """shadow-utils' usermod -d points alice's passwd line elsewhere before the work is
    finished: passwd no longer names /home/alice, so the home built for it is removed, not
    handed over; her directory in the tree (passwd still has alice with her uid) is put in
    place."""
    uid = killed_useradd_m_alice(sb, KILLS[0])
    sb.run([CLASSIC + "usermod", "-d", "/home/elsewhere", "alice"])
    res = sb.run([GROUPADD, "after"])
    assert "finished creating /etc/hardened-shadow/alice" in res.stderr, res
    assert ("undid the creation of /home/alice: /etc/passwd no longer names it for uid %d"
            % uid) in res.stderr, res
    assert not sb.exists("/home/alice")
    assert sb.lstat("/etc/hardened-shadow/alice").st_uid == uid
    assert reserved_left(sb) == []


def test_a_home_named_again_since_is_not_removed(sb):
    """userdel -r victim killed after its files were installed, before the home went; then
    shadow-utils' useradd makes victim again with that home (it exists: shadow-utils takes
    it as it is).  The next tool finishes the removal of the old directory in the tree (it
    holds the old account's hash) but leaves the home passwd names again."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    sb.write("/home/victim/keep", "data\n")
    # its exchanges: subuid, subgid, gshadow, group, passwd; then the tree's rename of
    # victim's directory to a reserved name
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode != 0, res
    assert "victim:" not in sb.read("/etc/passwd")
    assert "@home-del" in sb.read("/etc/.hardened-shadow.txn")
    sb.run([CLASSIC + "useradd", "-d", "/home/victim", "victim"])
    res = sb.run([GROUPADD, "after"])
    assert "finished removing /etc/hardened-shadow/victim" in res.stderr, res
    assert ("left /home/victim: /etc/passwd names it as a home again" in res.stderr), res
    assert sb.read("/home/victim/keep") == "data\n"
    assert not sb.exists("/etc/hardened-shadow/victim")
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_work_that_passwd_cannot_confirm_is_undone(sb):
    """alice's passwd line does not parse when the next tool recovers (a hand edit since):
    it does not confirm the account, so her directory and home are not handed to the uid
    but undone, and said."""
    uid = killed_useradd_m_alice(sb, KILLS[0])
    passwd = sb.read("/etc/passwd")
    line = [l for l in passwd.splitlines() if l.startswith("alice:")][0]
    sb.write("/etc/passwd", passwd.replace(line, line.replace(":%d:" % uid, ":x%d:" % uid)))
    res = sb.run([GROUPADD, "after"])
    assert "finished creating" not in res.stderr, res
    assert "undid the creation of /home/alice" in res.stderr, res
    assert "undid the creation of /etc/hardened-shadow/alice" in res.stderr, res
    for path in ("/home/alice", "/etc/hardened-shadow/alice"):
        assert not sb.exists(path), path
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_work_the_recovery_cannot_do_is_left_for_the_next_tool(sb):
    """useradd -m alice killed with her home still under its reserved name (root's 0700).
    The next tool's rename of it fails (ENOSPC): that piece must stay in the journal, said
    once with that cause (its confined recovery at its own locking must not retry it and
    add a "Permission denied"), while her directory in the tree, put in place by the same
    recovery, is not redone.  A later tool with everything working then gives alice her
    home; before, the journal went anyway and the home stayed under the reserved name,
    with no record of it."""
    uid = killed_useradd_m_alice(sb, KILLS[0])
    # the recovery's renames: alice's directory in the tree, then her home
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:error=ENOSPC:when=2",
                  GROUPADD, "after"], check=False)
    tmp = [f for f in reserved_left(sb) if f.startswith(".new.alice.")][0]
    # said once, with its real cause, by its early recovery (not yet confined): the one at
    # its own locking, confined away from /home, does not retry it and report Permission
    # denied as if that were the cause
    assert res.stderr.splitlines() == [
        "groupadd: finished creating /etc/hardened-shadow/alice; cannot finish creating "
        "/home/alice (built as /home/%s): No space left on device; what failed is left in "
        "/etc/.hardened-shadow.txn: once its cause is fixed, the next root account tool "
        "finishes it" % tmp], res
    assert not sb.exists("/home/alice")
    journal = sb.read("/etc/.hardened-shadow.txn")
    assert "@home-new" in journal and "@tree-new" not in journal, journal
    # pwck -r reports the work left, without the advice to finish an update of the
    # files, which are whole (pwck without -r would only retry the work)
    res = sb.run(["/usr/sbin/pwck", "-r"], check=False)
    assert "work on homes or the tree that an interrupted command left is pending" \
        in res.stdout, res
    assert "interrupted update of the account files" not in res.stdout, res
    res = sb.run([GROUPADD, "later"])
    assert "finished creating /home/alice" in res.stderr, res
    assert "/etc/hardened-shadow/alice" not in res.stderr, res
    assert sb.lstat("/home/alice").st_uid == uid
    assert sb.lstat("/etc/hardened-shadow/alice").st_uid == uid
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_pwck_keeps_a_reserved_directory_the_journal_still_names(sb):
    """The recovery could not put alice's directory in the tree in place (ENOSPC), so the
    journal keeps that work and the directory stays under its reserved name, holding her
    hash.  pwck (not -r), whose own recovery fails the same way, must not offer it for
    removal as a left-over: answered yes, it used to remove it, and the next tool could
    no longer give alice her directory."""
    uid = killed_useradd_m_alice(sb, KILLS[0])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:error=ENOSPC", GROUPADD, "after"],
                 check=False)
    assert "cannot finish creating /etc/hardened-shadow/alice" in res.stderr, res
    kept = [f for f in reserved_left(sb) if f.startswith(".new.alice")]
    assert kept, (reserved_left(sb), res)
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:error=ENOSPC", "/usr/sbin/pwck"],
                 input="y\n" * 20, check=False)
    assert "kept while /etc/.hardened-shadow.txn holds the work" in res.stdout, res
    assert [f for f in reserved_left(sb) if f.startswith(".new.alice")] == kept
    res = sb.run([GROUPADD, "later"])
    assert "finished creating /etc/hardened-shadow/alice" in res.stderr, res
    assert sb.lstat("/etc/hardened-shadow/alice").st_uid == uid


def test_pwck_keeps_only_reserved_directories_while_a_journal_is_left(sb):
    """A journal kept for work (alice's directory in the tree, ENOSPC) can only put a
    reserved directory (.new.USER.*) in place.  Other temporaries at the top of the tree
    (a file, a ':' name) are no journal's: pwck must still offer them for removal as
    left-overs, not keep them for as long as the journal stays."""
    killed_useradd_m_alice(sb, KILLS[0])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:error=ENOSPC", GROUPADD, "after"],
                 check=False)
    assert "cannot finish creating /etc/hardened-shadow/alice" in res.stderr, res
    kept = [f for f in reserved_left(sb) if f.startswith(".new.alice")]
    assert kept, (reserved_left(sb), res)
    sb.write("/etc/hardened-shadow/.stray", "x\n", mode=0o600)
    sb.write("/etc/hardened-shadow/:stray", "x\n", mode=0o600)
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:error=ENOSPC", "/usr/sbin/pwck"],
                 input="y\n" * 20, check=False)
    assert sb.exists("/etc/.hardened-shadow.txn"), res
    assert "/etc/hardened-shadow/.stray: left-over temporary regular file" in res.stdout, res
    assert "/etc/hardened-shadow/:stray: left-over temporary regular file" in res.stdout, res
    assert not sb.exists("/etc/hardened-shadow/.stray"), res
    assert not sb.exists("/etc/hardened-shadow/:stray"), res
    assert [f for f in reserved_left(sb) if f.startswith(".new.alice")] == kept


def test_a_home_that_cannot_be_undone_keeps_its_journal(sb):
    """useradd -m alice fails before its commit point (/etc full: its first staged file),
    and the removal of the home it built under a reserved name fails too (the listing of
    it: EIO).  The prepared journal, the only record of that name, must stay for the next
    tool, which removes the home; it used to go anyway, leaving the home for good."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    # where: a run like it, traced (the same calls in the same order)
    sb.run(["strace", "-f", "-qq", "-o", "/tmp/trace", "-e", "trace=renameat,getdents64",
            "/usr/sbin/useradd", "-m", "carol"])
    trace = sb.read("/tmp/trace").splitlines()
    staged = [i for i, l in enumerate(trace) if ".subuid.hs-txn" in l][0]
    renames = len([l for l in trace[:staged + 1] if "renameat(" in l])
    listings = len([l for l in trace[:staged] if "getdents64" in l])
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat:error=ENOSPC:when=%d" % renames,
                  "-e", "inject=getdents64:error=EIO:when=%d+" % (listings + 1),
                  "/usr/sbin/useradd", "-m", "alice"], check=False)
    assert res.returncode != 0, res
    assert "alice:" not in sb.read("/etc/passwd")
    tmp = [f for f in reserved_left(sb) if f.startswith(".new.alice.")]
    assert tmp, reserved_left(sb)
    assert sb.exists("/etc/.hardened-shadow.txn"), res
    # a tool whose recovery cannot list that home either keeps the journal and says so
    # once, with the cause: its recovery at its own locking (confined away from /home)
    # does not add a "Permission denied" for the same home
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null", "-P", "/home/" + tmp[0],
                  "-e", "inject=getdents64:error=EIO", GROUPADD, "between"], check=False)
    assert res.stderr.splitlines() == [
        "groupadd: undid the unfinished creation of /etc/hardened-shadow/alice; cannot "
        "undo the unfinished creation of /home/alice (built as /home/%s): "
        "Input/output error; what failed is left in /etc/.hardened-shadow.txn: once its "
        "cause is fixed, the next root account tool finishes it" % tmp[0]], res
    assert sb.exists("/etc/.hardened-shadow.txn"), res
    assert sb.exists("/home/" + tmp[0]), res
    res = sb.run([GROUPADD, "after"])
    assert "undid the unfinished creation of /home/alice" in res.stderr, res
    assert reserved_left(sb) == []
    assert not sb.exists("/etc/.hardened-shadow.txn")


def journal_left_for_good(sb):
    """A journal a recovery keeps at every run: useradd -m alice killed, her home under
    its reserved name made a mount point (its rename: EBUSY, an error that may pass)."""
    killed_useradd_m_alice(sb, KILLS[0])
    home = [f for f in reserved_left(sb) if f.startswith(".new.alice.")
            and sb.exists("/home/" + f)][0]
    sb.sh("mount --bind /home/%s /home/%s" % (home, home))
    res = sb.run([GROUPADD, "after"])
    assert "the next root account tool finishes it" in res.stderr, res
    assert "@home-new" in sb.read("/etc/.hardened-shadow.txn")


def test_usermod_rolled_back_beside_a_kept_journal_moves_the_home_back(sb):
    """usermod -d -m carol whose install of /etc/passwd fails (a mount point: the change is
    rolled back, /etc/passwd names the old home), while a journal left for the next tool
    is carried.  The roll-back rewrites that journal, which usermod took for its commit
    having passed its point: it left the home moved to where /etc/passwd does not say."""
    journal_left_for_good(sb)
    sb.run(["/usr/sbin/useradd", "-m", "carol"])
    sb.sh("mount --bind /etc/passwd /etc/passwd")
    res = sb.run(["/usr/sbin/usermod", "-d", "/home/carol2", "-m", "carol"], check=False)
    assert res.returncode != 0, res
    assert sb.getpwnam("carol").home == "/home/carol", res
    assert sb.exists("/home/carol") and not sb.exists("/home/carol2"), res.stderr
    assert sb.lstat("/home/carol").st_uid == sb.getpwnam("carol").uid, res
    assert "@home-new" in sb.read("/etc/.hardened-shadow.txn")


def test_a_journal_that_cannot_be_read_at_the_commit_is_not_removed(sb):
    """useradd -m carol beside a journal left for the next tool (alice's home).  Her commit
    cannot read that journal to carry it (EIO): it fails, undoes carol's home, and must
    leave the journal, the only record of alice's home under its reserved name; it used
    to remove it (nothing carried, so nothing to keep)."""
    journal_left_for_good(sb)
    # where: a run like it, traced; its last open of the journal is its commit's
    sb.run(["strace", "-qq", "-o", "/tmp/trace", "-e", "trace=openat",
            "/usr/sbin/useradd", "-m", "dave"])
    opens = [l for l in sb.read("/tmp/trace").splitlines() if "openat(" in l]
    nth = max(i for i, l in enumerate(opens) if '".hardened-shadow.txn"' in l) + 1
    assert "@home-new" in sb.read("/etc/.hardened-shadow.txn")
    res = sb.run(["strace", "-qq", "-o", "/dev/null",
                  "-e", "inject=openat:error=EIO:when=%d" % nth,
                  "/usr/sbin/useradd", "-m", "carol"], check=False)
    assert res.returncode != 0, res
    assert "cannot read /etc/.hardened-shadow.txn: Input/output error" in res.stderr, res
    assert "carol:" not in sb.read("/etc/passwd")
    assert not [f for f in reserved_left(sb) if f.startswith(".new.carol.")], reserved_left(sb)
    journal = sb.read("/etc/.hardened-shadow.txn")
    assert "@home-new " in journal and journal.endswith(" /home/alice\n"), (journal, res)


def victim_with_a_refusing_entry(sb):
    """victim with a home holding fusemnt/ (as a FUSE mount of hers would be to root) and a
    file of hers.  Returns the argv prefix that makes every stat of fusemnt by the traced
    tool fail (strace -P: only calls naming it), and the home's owner and mode."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    sb.sh("mkdir /home/victim/fusemnt && echo mine >/home/victim/keep", user="victim")
    st = sb.lstat("/home/victim")
    return (lambda err: ["strace", "-f", "-qq", "-o", "/dev/null", "-P", "fusemnt",
                         "-e", "trace=statx", "-e", "inject=statx:error=%s" % err],
            (st.st_uid, st.st_gid, st.st_mode))


def assert_victim_home_handed_back(sb, before):
    st = sb.lstat("/home/victim")
    assert (st.st_uid, st.st_gid, st.st_mode) == before
    assert sb.read("/home/victim/keep") == "mine\n"
    assert sb.exists("/home/victim/fusemnt")


@pytest.mark.parametrize("err,text", [("EACCES", "Permission denied"),
                                      ("ENOTCONN", "Transport endpoint is not connected")])
def test_userdel_r_hands_back_a_home_an_entry_inside_refuses(sb, err, text):
    """userdel -r victim, not interrupted, whose home holds a FUSE mount root may not stat
    (no allow_other: EACCES; its daemon dead: ENOTCONN): like a mount inside, it deletes
    nothing of the home and hands it back as it was, and says where.  It used to leave the
    home root's 0700 with "error removing directory"."""
    inject, before = victim_with_a_refusing_entry(sb)
    res = sb.run(inject(err) + ["/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode == 12, res
    assert ("userdel: not removing directory /home/victim: %s at /home/victim/fusemnt"
            % text) in res.stderr.splitlines(), res
    assert sb.getpwnam("victim") is None
    assert_victim_home_handed_back(sb, before)
    assert not sb.exists("/etc/.hardened-shadow.txn")


@pytest.mark.parametrize("err,text", [("EACCES", "Permission denied"),
                                      ("ENOTCONN", "Transport endpoint is not connected")])
def test_a_home_an_entry_inside_refuses_is_not_left_for_the_next_tool(sb, err, text):
    """userdel -r victim killed after its commit, before her home went; her FUSE mount
    inside refuses root.  The recovery must end as the run not interrupted does (the home
    handed back, said, the journal gone), not keep the piece in the journal for every next
    tool to retry and report forever (and the tree never swept meanwhile)."""
    inject, before = victim_with_a_refusing_entry(sb)
    # its exchanges: subuid, subgid, gshadow, group, passwd; then the tree's rename of
    # victim's directory to a reserved name
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode != 0, res
    assert "@home-del" in sb.read("/etc/.hardened-shadow.txn")
    res = sb.run(inject(err) + [GROUPADD, "after"])
    assert ("not removing /home/victim: %s at /home/victim/fusemnt; it is left as it was"
            % text) in res.stderr, res
    assert "for the next root account tool" not in res.stderr, res
    assert "finishes it" not in res.stderr, res
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert not sb.exists("/etc/hardened-shadow/victim")
    assert_victim_home_handed_back(sb, before)
    assert reserved_left(sb) == []
    res = sb.run([GROUPADD, "later"])
    assert res.stderr == "", res


def test_work_left_for_an_admins_cause_says_what_to_fix(sb):
    """A piece that fails for a cause only the administrator can fix (the home under its
    reserved name made a mount point: EBUSY) names the directory that is in the way and
    says that fixing it lets the next tool finish, in the one line; once unmounted, the
    next tool does."""
    killed_useradd_m_alice(sb, KILLS[0])
    tmp = [f for f in reserved_left(sb) if f.startswith(".new.alice.")
           and sb.exists("/home/" + f)][0]
    sb.sh("mount --bind /home/%s /home/%s" % (tmp, tmp))
    try:
        res = sb.run([GROUPADD, "after"])
        # its early recovery, not yet confined, says it once; the one at its own
        # locking, confined away from /home, must not add "Permission denied"
        assert res.stderr.splitlines() == [
            "groupadd: finished creating /etc/hardened-shadow/alice; cannot finish creating "
            "/home/alice (built as /home/%s): Device or resource busy; what failed is left in "
            "/etc/.hardened-shadow.txn: once its cause is fixed, the next root account tool "
            "finishes it" % tmp], res
    finally:
        sb.sh("umount /home/%s" % tmp)
    res = sb.run([GROUPADD, "later"])
    assert "finished creating /home/alice" in res.stderr, res
    assert sb.lstat("/home/alice").st_uid == sb.getpwnam("alice").uid
    assert not sb.exists("/etc/.hardened-shadow.txn")


def killed_userdel_r_victim(sb):
    """userdel -r victim killed after its commit, before her home went (at the tree's
    rename of her directory): the journal names the removal of /home/victim.  Returns the
    home's owner and mode."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    sb.sh("echo mine >/home/victim/keep", user="victim")
    st = sb.lstat("/home/victim")
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode != 0, res
    assert "@home-del" in sb.read("/etc/.hardened-shadow.txn")
    return (st.st_uid, st.st_gid, st.st_mode)


@pytest.mark.parametrize("how", HOME_MOUNTS)
def test_a_home_that_is_a_mount_point_is_not_left_for_the_next_tool(sb, how):
    """userdel -r victim killed after its commit; her home is then a mount point.  A run
    not interrupted refuses such a home (the walk never crosses into another mount) and
    says so once; the recovery must too: the home left as it was (never root's 0700), the
    journal gone, the next tool silent.  It used to keep the piece (FUSE's EACCES,
    ENOTCONN: causes that may pass) for every root tool to retry and report forever, the
    tree never swept, and to say "replaced since" or "Invalid cross-device link" else."""
    before = killed_userdel_r_victim(sb)
    mount_on_home(sb, how, "/home/victim", before[0])
    mounted = None if how.startswith("fuse") else sb.lstat("/home/victim")
    try:
        res = sb.run([GROUPADD, "after"], check=False)
        assert res.returncode == 0, res
        assert res.stderr.splitlines() == [
            "groupadd: finished removing /etc/hardened-shadow/victim; not removing "
            "/home/victim: a file system is mounted at /home/victim; it is left as it "
            "was"], res
        assert not sb.exists("/etc/.hardened-shadow.txn")
        res = sb.run([GROUPADD, "later"])
        assert res.stderr == "", res
        assert not sb.exists("/etc/.hardened-shadow.txn")
        if mounted:
            # untouched: never taken away (root's 0700), not even for a moment
            st = sb.lstat("/home/victim")
            assert (st.st_uid, st.st_gid, st.st_mode, st.st_ctime_ns) == \
                (mounted.st_uid, mounted.st_gid, mounted.st_mode, mounted.st_ctime_ns)
    finally:
        sb.sh("umount /home/victim")
    st = sb.lstat("/home/victim")
    assert (st.st_uid, st.st_gid, st.st_mode) == before
    assert sb.read("/home/victim/keep") == "mine\n"
    assert reserved_left(sb) == []


@pytest.mark.parametrize("how", HOME_MOUNTS)
def test_a_home_to_undo_that_is_a_mount_point_is_not_left_for_the_next_tool(sb, how):
    """useradd -m alice killed only before it removed its journal, her home hers already;
    shadow-utils then deletes her, and a file system is mounted on her home.  The undo of
    the home must be final too (left as it is, said once), not a piece every root tool
    retries because FUSE refuses root the stat of it."""
    uid = killed_useradd_m_alice(sb, KILLS[2])
    sb.run([CLASSIC + "userdel", "alice"])
    mount_on_home(sb, how, "/home/alice", uid)
    try:
        res = sb.run([GROUPADD, "after"], check=False)
        assert res.returncode == 0, res
        assert ("not undoing the creation of /home/alice: a file system is mounted at "
                "/home/alice; it is left as it is") in res.stderr, res
        assert "finishes it" not in res.stderr, res
        assert not sb.exists("/etc/.hardened-shadow.txn")
        res = sb.run([GROUPADD, "later"])
        assert res.stderr == "", res
    finally:
        sb.sh("umount /home/alice")
    assert sb.lstat("/home/alice").st_uid == uid
    assert reserved_left(sb) == []


# An entry inside the home found replaced during the walk (HS_WALK_SWAPPED, -ESTALE): a
# process that kept an fd to a directory of the home (the user's own with userdel -f, or
# another user's in a directory of the home writable to others) can still rename in it
# once the home is taken away.  Stand-in for the swap, deterministic: the open of the
# directory "swapped" fails with ELOOP, as O_NOFOLLOW|O_DIRECTORY does when the name
# statx saw as a directory is a symlink by the open (test_walker.py races it for real)
SWAPPED_LINE = "an entry was replaced during the walk at /home/victim/swapped"


def victim_with_a_swapped_entry(sb):
    """victim with a home holding swapped/ and a file of hers.  Returns the argv prefix
    that makes the walker's open of swapped fail as a swap makes it, and the home's owner
    and mode."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    sb.sh("mkdir /home/victim/swapped && echo mine >/home/victim/keep", user="victim")
    st = sb.lstat("/home/victim")
    return (["strace", "-f", "-qq", "-o", "/dev/null", "-P", "swapped",
             "-e", "trace=openat", "-e", "inject=openat:error=ELOOP"],
            (st.st_uid, st.st_gid, st.st_mode))


def assert_swapped_home_handed_back(sb, before):
    st = sb.lstat("/home/victim")
    assert (st.st_uid, st.st_gid, st.st_mode) == before
    assert sb.read("/home/victim/keep") == "mine\n"
    assert sb.exists("/home/victim/swapped")


def test_userdel_r_hands_back_a_home_with_an_entry_swapped_during_the_walk(sb):
    """userdel -r victim, not interrupted, meets an entry replaced between its check and
    its open: like an entry that refuses root, it removes nothing, hands the home back as
    it was and names the entry in one line.  It used to leave the home root's 0700 (her
    files out of her reach until an administrator handed it back) with "error removing
    directory /home/victim: Stale file handle"."""
    inject, before = victim_with_a_swapped_entry(sb)
    res = sb.run(inject + ["/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode == 12, res
    assert [l for l in res.stderr.splitlines() if "/home/victim" in l] == [
        "userdel: not removing directory /home/victim: " + SWAPPED_LINE], res
    assert sb.getpwnam("victim") is None
    assert_swapped_home_handed_back(sb, before)
    assert not sb.exists("/etc/.hardened-shadow.txn")


def test_a_home_with_an_entry_swapped_is_handed_back_by_the_recovery(sb):
    """userdel -r victim killed after its commit; the recovery's walk of her home meets an
    entry swapped during it.  It ends as the run not interrupted does: the home handed
    back as it was, said once, the piece final (the journal gone, the next tool silent),
    not the home left root's 0700 behind "replaced since; left alone"."""
    inject, before = victim_with_a_swapped_entry(sb)
    res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                  "-e", "inject=renameat2:signal=SIGKILL:when=6",
                  "/usr/sbin/userdel", "-r", "victim"], check=False)
    assert res.returncode != 0, res
    assert "@home-del" in sb.read("/etc/.hardened-shadow.txn")
    res = sb.run(inject + [GROUPADD, "after"])
    assert res.stderr.splitlines() == [
        "groupadd: finished removing /etc/hardened-shadow/victim; not removing "
        "/home/victim: %s; it is left as it was" % SWAPPED_LINE], res
    assert not sb.exists("/etc/.hardened-shadow.txn")
    assert not sb.exists("/etc/hardened-shadow/victim")
    assert_swapped_home_handed_back(sb, before)
    assert reserved_left(sb) == []
    res = sb.run([GROUPADD, "later"])
    assert res.stderr == "", res


def test_a_recoverys_log_record_escapes_a_name_the_user_chose(sb):
    """userdel -r victim killed after its commit; a directory of hers inside her home, whose
    name holds ESC and CSI sequences, is a mount point.  The recovery's message names it,
    on the terminal and in root's log: escaped in both.  The log record used to carry it
    raw (a forged line, the terminal of whoever reads the log driven by the user)."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "bob"])
    sb.run(["/usr/sbin/useradd", "-m", "victim"])
    sb.sh("mkdir \"/home/victim/$(printf 'a\\033[2J\\033]0;x\\007b')\"", user="victim")
    sb.sh("d=$(echo /home/victim/a*b) && mount --bind \"$d\" \"$d\"")
    try:
        res = sb.run(["strace", "-f", "-qq", "-o", "/dev/null",
                      "-e", "inject=renameat2:signal=SIGKILL:when=6",
                      "/usr/sbin/userdel", "-r", "victim"], check=False)
        assert res.returncode != 0, res
        assert "@home-del" in sb.read("/etc/.hardened-shadow.txn")
        sb.syslog(clear=True)
        res = sb.run([GROUPADD, "after"], check=False)
        assert "not removing /home/victim: a file system is mounted at /home/victim/a" \
            "\\x1b[2J\\x1b]0;x\\x07b" in res.stderr, res
        logged = [m for m in sb.syslog() if "not removing /home/victim" in m]
        assert logged, sb.syslog()
        for m in logged:
            assert "\x1b" not in m and "\x07" not in m, logged
            assert "mounted at /home/victim/a\\x1b[2J" in m, logged
    finally:
        sb.sh("umount /home/victim/a*b", check=False)


def test_a_commit_failed_after_its_journal_leaves_nothing_to_install(sb):
    """An I/O error syncing /etc right after the journal is linked (groupadd's fifth fsync:
    the two staged copies, /etc, the journal's data, then /etc): groupadd says the change
    failed, so nothing may stay that a recovery would install after a power loss: neither
    the journal nor a staged copy, and their removal synced."""
    sb.run([GROUPADD, "first"])
    res = sb.run(["strace", "-f", "-qq", "-o", "/tmp/trace", "-e", "trace=fsync,unlinkat,linkat",
                  "-e", "inject=fsync:error=EIO:when=5", GROUPADD, "failed"], check=False)
    assert res.returncode != 0 and "Input/output error" in res.stderr, res
    trace = [l for l in sb.read("/tmp/trace").splitlines() if "resumed" not in l]
    linked = [i for i, l in enumerate(trace) if "linkat(" in l and ".hardened-shadow.txn" in l]
    assert linked, "the journal was never linked: the test proves nothing"
    assert litter(sb) == [], litter(sb)
    removed = [i for i, l in enumerate(trace) if "unlinkat(" in l and
               ".hardened-shadow.txn" in l and "= 0" in l]
    assert removed and any("fsync(" in l for l in trace[removed[-1] + 1:]), trace
    assert "failed" not in group_names(sb) and "failed" not in sb.read("/etc/gshadow")
    assert sb.run([GROUPADD, "after"]).returncode == 0
    assert "failed" not in group_names(sb)
