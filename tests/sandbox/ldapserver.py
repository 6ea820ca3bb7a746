"""A throwaway OpenLDAP server inside a sandbox root, for the directory tests
(tests/system/test_ldif.py) and the demo.

Debian's slapd and ldap-utils are not installed anywhere: tools/ldap-packages unpacks their
.debs below BUILD/ldap/root (their postinst would add users to the host's /etc/passwd and
start a daemon).  slapd runs from there as `nobody`, with its own slapd.conf, an mdb
database and a unix socket (ldapi://) in the root's /tmp, and the core, cosine, nis and
inetorgperson schemas of the package.  It dies with the sandbox (Sandbox.close kills what
is left) or with stop().  start_nslcd puts Debian's nslcd (libnss-ldapd, libpam-ldapd) into
the root beside it, with nsswitch.conf and a PAM stack (PAM_STACK) that ask our module
first and pam_ldap after it."""

import os
import re
import subprocess
import time
import urllib.parse

BASE_DN = "dc=example,dc=org"
ADMIN_DN = "cn=admin," + BASE_DN
ADMIN_PW = "directory-admin-pw"
HERE = os.path.dirname(os.path.abspath(__file__))
LIBDIR = "/lib/x86_64-linux-gnu"

# The root's common-* with libpam-ldapd beside our module.
PAM_STACK = {
    # ours decides for every account it has (a wrong password or an expired account
    # ends there: die); an account it does not know goes on to pam_ldap
    "auth": "auth\t[success=2 user_unknown=ignore default=die]\t"
            "pam_hardened_shadow.so\n"
            "auth\t[success=1 default=ignore]\tpam_ldap.so minimum_uid=1000 use_first_pass\n"
            "auth\trequisite\tpam_deny.so\n"
            "auth\trequired\tpam_permit.so\n",
    "account": "account\t[success=2 new_authtok_reqd=done user_unknown=ignore "
               "default=die]\tpam_hardened_shadow.so\n"
               "account\t[success=1 new_authtok_reqd=done default=ignore]\tpam_ldap.so "
               "minimum_uid=1000\n"
               "account\trequisite\tpam_deny.so\n"
               "account\trequired\tpam_permit.so\n",
    "password": "password\t[success=2 user_unknown=ignore default=die]\t"
                "pam_hardened_shadow.so yescrypt\n"
                "password\t[success=1 default=ignore]\tpam_ldap.so minimum_uid=1000 "
                "try_first_pass\n"
                "password\trequisite\tpam_deny.so\n"
                "password\trequired\tpam_permit.so\n",
    "session": "session\trequired\tpam_permit.so\n",
}


class PackagesMissing(Exception):
    """The .debs could not be had (no network, no apt cache): the caller skips."""


def packages(build_dir):
    """BUILD/ldap/root with slapd, ldap-utils and nslcd unpacked (tools/ldap-packages)."""
    out = os.path.join(build_dir, "ldap")
    tool = os.path.join(HERE, "..", "..", "tools", "ldap-packages")
    r = subprocess.run([tool, out], capture_output=True, text=True)
    if r.returncode != 0:
        raise PackagesMissing("Debian's slapd, ldap-utils and nslcd packages could not be "
                              "fetched (tools/ldap-packages: %s)" % r.stderr.strip())
    return r.stdout.strip()


class Slapd:
    """slapd in sb, on ldapi://; `url`, `run_tool(...)`, `add(ldif)`, `whoami(dn, pw)`."""

    def __init__(self, sb, pkgroot, base_dn=BASE_DN):
        self.sb, self.pkg, self.base_dn = sb, pkgroot, base_dn
        self.dir = "/tmp/slapd"
        sock = self.dir + "/ldapi"
        self.url = "ldapi://" + urllib.parse.quote(sock, safe="")
        self.env = {"LD_LIBRARY_PATH": pkgroot + "/usr/lib/x86_64-linux-gnu",
                    "LDAPNOINIT": "1"}
        schema = pkgroot + "/etc/ldap/schema/"
        conf = "".join("include %s%s.schema\n" % (schema, s)
                       for s in ("core", "cosine", "nis", "inetorgperson"))
        conf += ("modulepath %s/usr/lib/ldap\nmoduleload back_mdb\n"
                 "pidfile %s/slapd.pid\n"
                 "database mdb\nmaxsize 67108864\nsuffix \"%s\"\nrootdn \"%s\"\n"
                 "rootpw %s\ndirectory %s/db\n"
                 # what a site gives its users: their own entry to bind with, the
                 # directory to read (nslcd), the hash to nobody but the server
                 "access to attrs=userPassword by anonymous auth by * none\n"
                 "access to * by * read\n"
                 % (pkgroot, self.dir, base_dn, ADMIN_DN, ADMIN_PW, self.dir))
        sb.run(["/bin/mkdir", "-p", self.dir + "/db"])
        sb.write(self.dir + "/slapd.conf", conf, mode=0o644)
        sb.run(["/bin/chown", "-R", "nobody:nogroup", self.dir])
        # -d 0: in the foreground (a child of the sandbox's reaper, killed with it)
        self.proc = sb.popen([pkgroot + "/usr/sbin/slapd", "-d", "0", "-f",
                              self.dir + "/slapd.conf", "-h", self.url, "-u", "nobody",
                              "-g", "nogroup"], env=self.env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while self.tool("ldapwhoami", "-x", check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("slapd did not start: %s" % self.proc.stderr.read())
            time.sleep(0.1)

    def tool(self, name, *args, input=None, check=True, user=None):
        """ldap-utils' NAME against this server."""
        return self.sb.run([self.pkg + "/usr/bin/" + name, "-H", self.url] + list(args),
                           input=input, check=check, env=self.env, user=user)

    def add(self, ldif, check=True):
        """ldapadd as the directory's administrator."""
        return self.tool("ldapadd", "-x", "-D", ADMIN_DN, "-w", ADMIN_PW, input=ldif,
                         check=check)

    def add_base(self):
        dc = self.base_dn.split(",")[0].split("=")[1]
        self.add("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: %s\ndc: %s\n"
                 % (self.base_dn, dc, dc))

    def whoami(self, dn, password, user=None):
        """ldapwhoami bound as dn with password: the CompletedProcess (0 = the bind worked)."""
        return self.tool("ldapwhoami", "-x", "-D", dn, "-w", password, check=False,
                         user=user)

    def search(self, *args):
        return self.tool("ldapsearch", "-x", "-LLL", "-o", "ldif-wrap=no", "-b",
                         self.base_dn, *args).stdout

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stderr.close()


def start_nslcd(sb, pkgroot, server, message):
    """nslcd and its two modules into the root, configured for server (password changes
    answered with message), started in the root (its socket in the root's /run); the
    root's nsswitch.conf and PAM stack pointed at it.  Returns the Popen."""
    for src, dst, mode in (("/usr/sbin/nslcd", "/usr/sbin/nslcd", 0o755),
                           (LIBDIR + "/libnss_ldap.so.2", LIBDIR + "/libnss_ldap.so.2", 0o644),
                           (LIBDIR + "/security/pam_ldap.so", LIBDIR + "/security/pam_ldap.so",
                            0o644)):
        with open(pkgroot + src, "rb") as f:
            sb.write(dst, f.read(), mode=mode)
    sb.write("/etc/nslcd.conf",
             "uid nobody\ngid nogroup\nuri %s\nbase %s\n"
             "pam_password_prohibit_message \"%s\"\n" % (server.url, server.base_dn, message),
             mode=0o640)
    sb.run(["/bin/mkdir", "-p", "/run/nslcd"])
    sb.run(["/bin/chown", "nobody:nogroup", "/run/nslcd"])
    proc = sb.popen(["/usr/sbin/nslcd", "-n"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not sb.exists("/run/nslcd/socket"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError("nslcd did not start: %s" % proc.stderr.read())
        time.sleep(0.1)
    text = sb.read("/etc/nsswitch.conf")
    for db, sources in (("passwd", "files ldap"), ("group", "files ldap"),
                        ("shadow", "hardened_shadow ldap")):
        text = re.sub(r"^%s:.*$" % db, "%s:         %s" % (db, sources), text, flags=re.M)
    sb.write("/etc/nsswitch.conf", text)
    for ptype, stack in PAM_STACK.items():
        sb.write("/etc/pam.d/common-" + ptype, stack)
    return proc
