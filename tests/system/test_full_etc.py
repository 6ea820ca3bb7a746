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
        fill(sb)
        res = sb.run(["/usr/sbin/usermod", "-u", "4242", "alice"], check=False)
        assert res.returncode != 0, res
        assert "No space left on device" in res.stderr, res
        assert sb.getpwnam("alice").uid == uid
        st = sb.lstat("/home/alice")
        assert (st.st_uid, st.st_mode & 0o7777) == (uid, 0o750)
        assert sb.lstat("/home/alice/f").st_uid == uid
        assert not [a for a in os.listxattr(sb.root + "/home/alice") if "hardened" in a]
        sb.run(["rm", "-f", "/fill", "/fill2", "/fill3"])
        res = sb.run(["/usr/sbin/usermod", "-u", "4242", "alice"], check=False)
        assert res.returncode == 0, res
        assert sb.lstat("/home/alice/f").st_uid == 4242
