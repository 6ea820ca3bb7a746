"""The demo's directory step: hs-ldif exports two users from the tree, Debian's slapd (run
in the sandbox from its unpacked .deb, tests/sandbox/ldapserver.py) takes the LDIF, and
one of them logs in through LDAP (nslcd and pam_ldap beside our module) once the local
account is gone.  The root's nsswitch.conf and PAM stack are put back afterwards."""

import ldapserver

PASSWORDS = {"dana": "Cobalt-Fern-58", "erik": "Saffron-Oar-26"}
TREE = "/etc/hardened-shadow"
MESSAGE = "Directory passwords are changed at https://id.example.org"


def _say(text):
    print("  (%s)" % text)


def step_directory(sb, show):
    """Moving to a directory: hs-ldif exports two users, Debian's slapd loads them, and one
    logs in through LDAP"""
    try:
        pkgroot = ldapserver.packages(sb.base.build_dir)
    except ldapserver.PackagesMissing as e:
        print("  (skipped: %s)" % e)
        return
    for name, pw in PASSWORDS.items():
        sb.run(["/usr/sbin/useradd", "-m", "-s", "/bin/bash", name])
        sb.run(["/usr/sbin/chpasswd", "-c", "YESCRYPT"], input="%s:%s\n" % (name, pw))
    if not sb.exists(TREE + "/dana"):
        sb.use_hardened_tree()
    _say("dana and erik are local accounts of the tree; export them")
    show(sb, ["hs-ldif", "export", "-b", ldapserver.BASE_DN, "-o", "/root/people.ldif",
              "dana", "erik"])
    show(sb, ["ls", "-l", "/root/people.ldif"])
    show(sb, ["grep", "-A16", "^dn: uid=dana", "/root/people.ldif"])
    _say("a terminal never sees the hashes by accident")
    print("root# hs-ldif export -b %s dana" % ldapserver.BASE_DN)
    status, out = sb.pty_run(["/usr/sbin/hs-ldif", "export", "-b", ldapserver.BASE_DN, "dana"],
                             [])
    print(out.strip() + "\n(exit status %d)" % status)

    server = ldapserver.Slapd(sb, pkgroot)
    saved = {p: sb.read(p) for p in ["/etc/nsswitch.conf"] +
             ["/etc/pam.d/common-" + t for t in ldapserver.PAM_STACK]}
    nslcd = None
    try:
        _say("Debian's slapd, as nobody, on %s, with a throwaway mdb database" % server.url)
        server.add_base()
        print("root# ldapadd -x -D %s -w ... -f /root/people.ldif" % ldapserver.ADMIN_DN)
        print(server.add(sb.read("/root/people.ldif")).stdout, end="")
        _say("dana binds with her own password, through the exported {CRYPT} yescrypt hash")
        res = server.whoami("uid=dana,ou=People," + ldapserver.BASE_DN, PASSWORDS["dana"])
        print("root# ldapwhoami -x -D uid=dana,ou=People,%s -w ...\n%s"
              % (ldapserver.BASE_DN, (res.stdout + res.stderr).strip()))
        res = server.whoami("uid=dana,ou=People," + ldapserver.BASE_DN, "not-her-password")
        print("root# ldapwhoami -x -D uid=dana,ou=People,%s -w not-her-password\n%s"
              % (ldapserver.BASE_DN, (res.stdout + res.stderr).strip()))

        _say("dana leaves the local files: from now on she exists only in the directory")
        show(sb, ["userdel", "dana"])
        nslcd = ldapserver.start_nslcd(sb, pkgroot, server, MESSAGE)
        show(sb, ["grep", "-E", "^(passwd|group|shadow):", "/etc/nsswitch.conf"])
        show(sb, ["cat", "/etc/pam.d/common-auth"])
        show(sb, ["getent", "passwd", "dana", "erik"])
        print("root# pamtester login dana authenticate")
        status, out = sb.pty_run(["/usr/bin/pamtester", "login", "dana", "authenticate"],
                                 [(r"[Pp]assword: ", PASSWORDS["dana"] + "\n")])
        print(out.strip() + ("" if status == 0 else "\n(exit status %d)" % status))
        _say("erik is still local: the tree answers for him, the directory is not asked")
        print("root# pamtester login erik authenticate")
        status, out = sb.pty_run(["/usr/bin/pamtester", "login", "erik", "authenticate"],
                                 [(r"[Pp]assword: ", PASSWORDS["erik"] + "\n")])
        print(out.strip() + ("" if status == 0 else "\n(exit status %d)" % status))
    finally:
        if nslcd is not None:
            nslcd.terminate()
            nslcd.wait(timeout=10)
            nslcd.stderr.close()
        server.stop()
        for path, text in saved.items():
            sb.write(path, text)
