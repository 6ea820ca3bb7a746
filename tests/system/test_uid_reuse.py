"""A uid useradd picks by itself never still owns a deleted user's home or mail spool, so a
new account does not inherit the files the last one left (shadow-utils hands the uid out
again).  -u still gives any free uid."""


def uid_of(sb, name):
    return sb.getpwnam(name).uid


def test_new_account_does_not_inherit_a_deleted_users_files(sb):
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "-m", "alice"])
    old = uid_of(sb, "alice")
    sb.run(["/usr/sbin/userdel", "alice"])          # the home stays, owned by old
    assert sb.lstat("/home/alice").st_uid == old
    sb.run(["/usr/sbin/useradd", "-m", "bob"])
    assert uid_of(sb, "bob") == old + 1
    assert sb.lstat("/home/alice").st_uid == old

    # a mail spool left behind counts too
    sb.write("/var/mail/carol", "", uid=old + 2, gid=8, mode=0o660)
    sb.run(["/usr/sbin/useradd", "dave"])
    assert uid_of(sb, "dave") == old + 3

    # asked for, the uid is given: the administrator chose it
    sb.run(["/usr/sbin/useradd", "-u", str(old), "erin"])
    assert uid_of(sb, "erin") == old


def test_newusers_follows_the_same_rule(sb):
    """newusers' picks skip a uid that still owns a deleted user's home (in the parent of a
    line's home) or mail spool, as useradd's; a numeric uid field is given as asked."""
    sb.use_hardened_tree()
    sb.run(["/usr/sbin/useradd", "-m", "gina"])
    old = uid_of(sb, "gina")
    sb.run(["/usr/sbin/userdel", "gina"])           # /home/gina stays, owned by old
    newusers = ["/usr/sbin/newusers", "-c", "SHA512", "-s", "1000"]
    sb.run(newusers, input="hank:Tulip-pass-1:::Hank:/home/hank:/bin/sh\n")
    assert uid_of(sb, "hank") == old + 1
    assert sb.lstat("/home/gina").st_uid == old
    sb.write("/var/mail/ivy", "", uid=old + 2, gid=8, mode=0o660)
    sb.run(newusers, input="iris:Tulip-pass-2:::Iris:/srv/iris:/bin/sh\n"
                           "jack:Tulip-pass-3:%d::Jack:/home/jack:/bin/sh\n" % old)
    assert uid_of(sb, "iris") == old + 3
    assert uid_of(sb, "jack") == old
