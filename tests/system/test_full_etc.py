"""A full /etc during a password change through the PAM module: the user is told the file
system is full, in the message they see, not only libpam's "Authentication token
manipulation error"; the stored hash is unchanged and no temporary file is left."""


import os

import sandbox
import test_passwd as tp

CHPASSWD = "/usr/sbin/chpasswd"


def fill(sb):
    # fill the root's tmpfs; the locks need no new blocks, the new shadow file does
    sb.sh("dd if=/dev/zero of=/fill bs=64k 2>/dev/null; "
          "dd if=/dev/zero of=/fill2 bs=1k 2>/dev/null; "
          "dd if=/dev/zero of=/fill3 bs=1 2>/dev/null", check=False)


def fill_but_the_locks(sb):
    """Room for the locks and the journal, not for a new /etc/passwd of 600 KB."""
    sb.write("/etc/passwd", sb.read("/etc/passwd") + "".join(
        "pad%05d:x:%d:%d::/nonexistent:/usr/sbin/nologin\n" % (i, 30000 + i, 30000 + i)
        for i in range(12000)))
    sb.sh("dd if=/dev/zero of=/room bs=64k count=5 2>/dev/null")
    fill(sb)
    sb.run(["rm", "-f", "/room"])


def tree_state(sb, user):
    """Owner, group and mode of USER's directory in the tree and of its files."""
    top = "/etc/hardened-shadow/" + user
    names = sorted(os.listdir(sb.root + top))
    return [(n, st.st_uid, st.st_gid, st.st_mode)
            for n, st in [(".", sb.lstat(top))] + [(n, sb.lstat(top + "/" + n)) for n in names]]


def test_passwd_and_chpasswd_name_the_full_disk(base):
    with sandbox.Sandbox(base, size="48m") as sb:
        tp.make_users(sb)
        tp.convert(sb)
        tp.use_module(sb)
        before = tp.shadow_line(sb, "alice")
        fill(sb)

        res = tp.run(sb, [tp.PASSWD, "--stdin"], user="alice",
                     input="alice-old-1\nTulip-full-7\n")
        assert res.returncode == 10, res
        assert "/etc/hardened-shadow/alice/shadow: No space left on device" in res.stderr, res
        res = tp.run(sb, [tp.PASSWD, "--stdin", "alice"], input="Tulip-full-8\n")
        assert res.returncode == 10, res
        assert "No space left on device" in res.stderr, res
        res = tp.run(sb, [CHPASSWD], input="alice:Tulip-full-9\n")
        assert res.returncode == 1, res
        assert "No space left on device" in res.stderr, res

        assert tp.shadow_line(sb, "alice") == before
        assert tp.temp_files(sb, "alice") == []
        # with room again the same change goes through
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = tp.run(sb, [tp.PASSWD, "--stdin", "alice"], input="Tulip-full-8\n")
        assert res.returncode == 0, res
        assert tp.verify("Tulip-full-8", tp.hash_of(sb, "alice"))


def test_usermod_m_with_a_full_etc_leaves_the_home_where_passwd_says(base):
    """usermod -d NEW -m renames the home before the global files are written.  With /etc
    full their commit fails, and usermod used to exit leaving the home at NEW while
    /etc/passwd still names the old one: the user logged in to no home.  A commit that
    fails now puts the home back."""
    with sandbox.Sandbox(base, size="48m") as sb:
        sb.add_classic_user("alice", password="alice-pw-1")
        sb.use_hardened_tree()
        sb.sh("echo mine >/home/alice/f && chown alice /home/alice/f")
        fill(sb)
        res = sb.run(["/usr/sbin/usermod", "-d", "/home/alice2", "-m", "alice"], check=False)
        assert res.returncode != 0, res
        assert "No space left on device" in res.stderr, res
        assert sb.getpwnam("alice").home == "/home/alice"
        assert sb.read("/home/alice/f") == "mine\n"
        assert not sb.exists("/home/alice2")
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = sb.run(["/usr/sbin/usermod", "-d", "/home/alice2", "-m", "alice"], check=False)
        assert res.returncode == 0, res
        assert sb.getpwnam("alice").home == "/home/alice2"
        assert sb.read("/home/alice2/f") == "mine\n"


def test_usermod_u_with_a_full_etc_hands_the_home_back(base):
    """usermod -u takes the home away (root:root 0700, marked) before the global files are
    written, so that a kill after them is finished by the next usermod.  A commit that
    fails (a full /etc) hands it back as it was, unmarked, its files untouched."""
    with sandbox.Sandbox(base, size="48m") as sb:
        sb.add_classic_user("alice", password="alice-pw-1")
        sb.use_hardened_tree()
        uid = sb.getpwnam("alice").uid
        sb.sh("echo mine >/home/alice/f && chown alice /home/alice/f && chmod 750 /home/alice")
        tree = tree_state(sb, "alice")
        fill(sb)
        res = sb.run(["/usr/sbin/usermod", "-u", "4242", "alice"], check=False)
        assert res.returncode != 0, res
        assert "No space left on device" in res.stderr, res
        assert sb.getpwnam("alice").uid == uid
        # the user's directory too: taken away, its files given 4242, then back
        assert tree_state(sb, "alice") == tree
        st = sb.lstat("/home/alice")
        assert (st.st_uid, st.st_mode & 0o7777) == (uid, 0o750)
        assert sb.lstat("/home/alice/f").st_uid == uid
        assert not [a for a in os.listxattr(sb.root + "/home/alice") if "hardened" in a]
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = sb.run(["/usr/sbin/usermod", "-u", "4242", "alice"], check=False)
        assert res.returncode == 0, res
        assert sb.lstat("/home/alice/f").st_uid == 4242


def test_usermod_l_with_a_full_etc_gives_the_directory_back(base):
    """usermod -l takes the user's directory away and puts it under a reserved name before
    the global files are written.  A commit that failed (a full /etc) left it there,
    root's: the user could not log in, and another usermod on the account (-L) found no
    directory and edited /etc/shadow instead.  It now goes back as it was."""
    with sandbox.Sandbox(base, size="48m") as sb:
        sb.add_classic_user("alice", password="alice-pw-1")
        sb.use_hardened_tree()
        tree = tree_state(sb, "alice")
        fill_but_the_locks(sb)
        res = sb.run(["/usr/sbin/usermod", "-l", "alice2", "alice"], check=False)
        assert res.returncode != 0, res
        assert "cannot write /etc/passwd" in res.stderr, res
        assert "No space left on device" in res.stderr, res
        assert sb.getpwnam("alice") is not None and sb.getpwnam("alice2") is None
        assert tree_state(sb, "alice") == tree
        assert not [n for n in os.listdir(sb.root + "/etc/hardened-shadow")
                    if n.startswith(".usermod-l.")]
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = sb.run(["/usr/sbin/usermod", "-l", "alice2", "alice"], check=False)
        assert res.returncode == 0, res
        assert sb.getpwnam("alice2") is not None
        assert sb.lstat("/etc/hardened-shadow/alice2").st_uid == sb.getpwnam("alice2").uid


def test_usermod_l_u_rerun_with_a_full_etc_gives_the_files_back(base):
    """A usermod -l killed after its directory went under the reserved name, then the same
    -l with -u, whose commit fails (a full /etc): its files go back to the old uid.  They
    kept the new one: the -l that finished it without -u handed alice2 a directory with
    another uid's shadow file (no login).  The directory goes back to alice's name too,
    handed to her, as /etc/passwd still names alice (it stayed reserved and root's: no
    login until the next -l)."""
    import test_usermod as tu
    with sandbox.Sandbox(base, size="48m") as sb:
        sb.add_classic_user("alice", password="alice-pw-1")
        sb.use_hardened_tree()
        uid = sb.getpwnam("alice").uid
        sb.sh("chown root:root {t}/alice && chmod 700 {t}/alice && "
              "mv {t}/alice {t}/.usermod-l.alice2".format(t=tu.TREE))
        fill_but_the_locks(sb)
        res = sb.run(["/usr/sbin/usermod", "-l", "alice2", "-u", "4242", "alice"], check=False)
        assert res.returncode != 0, res
        assert "No space left on device" in res.stderr, res
        assert sb.getpwnam("alice").uid == uid
        assert not sb.exists(tu.TREE + "/.usermod-l.alice2")
        st = sb.lstat(tu.TREE + "/alice")
        assert (st.st_uid, st.st_mode & 0o7777) == (uid, 0o2710)
        assert sb.lstat(tu.TREE + "/alice/shadow").st_uid == uid
        assert tu.verify(sb, "alice", "alice-pw-1").returncode == 0
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = sb.run(["/usr/sbin/usermod", "-l", "alice2", "alice"], check=False)
        assert res.returncode == 0, res
        assert sb.lstat(tu.TREE + "/alice2/shadow").st_uid == uid
        assert tu.verify(sb, "alice2", "alice-pw-1").returncode == 0

