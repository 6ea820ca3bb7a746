"""SELinux labels, without an SELinux kernel: a preloaded shim (tests/selinux/shim.c)
reports SELinux enabled and enforcing, answers label lookups from the file contexts of
Debian's reference policy with our module (tools/selinux-policy), and logs every
setfscreatecon and every object created, with the creation context in force at that
moment.  Every object our tools made that is still there at the end must have been
created with the context the policy gives its final path; the programs that write only
below /etc/hardened-shadow (no libselinux, selabel.h) must have made only objects whose
label is the one they inherit from their directory.  With SELinux disabled (no shim) the
tools neither ask for labels nor read the policy."""

import os
import stat
import subprocess

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

SHIM_DIR = "/etc/hs-selinux-shim"
TREE = "/etc/hardened-shadow"
# linked with selabel-none.c: their files inherit the tree directory's label
INHERITING = {"passwd", "chsh", "chage", "password-helper", "shell-helper"}
OURS = INHERITING | {"useradd", "usermod", "userdel", "groupadd", "pwconv", "vipw"}
SKEL = {"/etc/skel/.bashrc": "# bash\n", "/etc/skel/.ssh/config": "Host *\n"}


def build_path(build_dir, *parts):
    return os.path.join(build_dir, *parts)


def file_contexts(build_dir):
    fc = build_path(build_dir, "packaging", "selinux", "file_contexts")
    if not os.path.exists(fc):
        # meson test builds it (test_selabel depends on it); a system run alone may not
        subprocess.run(["ninja", "-C", build_dir, "packaging/selinux/file_contexts"],
                       check=True, stdout=subprocess.DEVNULL)
    return fc


class Lookup:
    """Expected contexts, from the same file contexts (tests/selinux/fc-lookup.c)."""

    def __init__(self, build_dir, fc):
        self.exe = build_path(build_dir, "tests", "selinux", "fc-lookup")
        self.fc = fc
        self.cache = {}

    def __call__(self, path, kind):
        key = (path, kind)
        if key not in self.cache:
            out = subprocess.run([self.exe, self.fc, kind, path], check=True,
                                 capture_output=True, text=True).stdout
            self.cache[key] = out.strip()
        return self.cache[key]


def install_shim(sb, build_dir):
    shim = build_path(build_dir, "tests", "selinux", "libhs-selinux-shim.so")
    if not os.path.exists(shim):
        pytest.skip("built without libselinux (meson option selinux)")
    fc = file_contexts(build_dir)
    sb.run(["mkdir", "-p", SHIM_DIR])
    sb.write(SHIM_DIR + "/file_contexts", open(fc).read())
    sb.write(SHIM_DIR + "/file_contexts.subs_dist", open(fc + ".subs_dist").read())
    sb.write(SHIM_DIR + "/log", "", mode=0o666)
    os.chmod(os.path.join(sb.root, SHIM_DIR.lstrip("/"), "log"), 0o666)
    sb.write("/etc/ld.so.preload", shim + "\n")
    return fc


def remove_shim(sb):
    os.unlink(os.path.join(sb.root, "etc/ld.so.preload"))
    return sb.read(SHIM_DIR + "/log").splitlines()


def creations(log):
    """dev:ino -> (program, path at creation, context in force) of the last creation."""
    made = {}
    for line in log:
        words = line.split()
        if len(words) >= 6 and words[2] == "create":
            made[words[4]] = (words[0], words[3], words[5])
        elif len(words) >= 6 and words[2] == "tmpfile":
            made[words[4]] = (words[0], "(O_TMPFILE)", words[5])
    return made


def final_objects(sb):
    """Every object at the places our tools create: host path -> path in the root."""
    out = {}
    tops = [TREE, "/home", "/var/mail"]
    for name in os.listdir(os.path.join(sb.root, "etc")):
        if name.split("-")[0].split(".")[0] in ("passwd", "group", "shadow", "gshadow",
                                                 "subuid", "subgid"):
            out["/etc/" + name] = None
    for top in tops:
        host = os.path.join(sb.root, top.lstrip("/"))
        if not os.path.lexists(host):
            continue
        out[top] = None
        for dirpath, dirs, files in os.walk(host):
            for n in dirs + files:
                p = os.path.join(dirpath, n)
                out["/" + os.path.relpath(p, sb.root)] = None
    return sorted(out)


def kind_of(st):
    return "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"


def check_labels(sb, log, lookup):
    """Each object still there that our tools made: the context it was created with."""
    made = creations(log)
    denied = [l for l in log if " fscreate-denied " in l]
    assert not denied, denied
    checked = {}
    for path in final_objects(sb):
        st = os.lstat(os.path.join(sb.root, path.lstrip("/")))
        rec = made.get("%d:%d" % (st.st_dev, st.st_ino))
        if not rec or rec[0] not in OURS:
            continue
        prog, _, con = rec
        want = lookup(path, kind_of(st))
        if con == "-":
            # no request: only where the directory's label is the right one anyway
            parent = lookup(os.path.dirname(path), "d")
            assert prog in INHERITING, (path, prog, "made without a context, want", want)
            assert want == parent, (path, prog, want, "but inherits", parent)
        else:
            assert con == want, (path, prog, "created as", con, "want", want)
        checked[path] = (prog, con if con != "-" else "inherited " + want)
    return checked


# without pam_pwquality (no cracklib dictionary in the root), as tests/system/test_passwd.py
COMMON_PASSWORD = """\
password	[success=1 default=ignore]	pam_unix.so obscure yescrypt
password	requisite			pam_deny.so
password	required			pam_permit.so
"""


@pytest.fixture
def users(sb):
    sb.write("/etc/pam.d/common-password", COMMON_PASSWORD)
    sb.add_classic_user("alice", password="alice-old-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    for path, text in SKEL.items():
        sb.run(["mkdir", "-p", os.path.dirname(path)])
        sb.write(path, text)
    sb.run(["ln", "-sfn", ".bashrc", "/etc/skel/.bash_link"])
    sb.run(["mkdir", "-p", "/var/mail"])
    old = sb.read("/etc/default/useradd") if sb.exists("/etc/default/useradd") else ""
    sb.write("/etc/default/useradd", old + "CREATE_MAIL_SPOOL=yes\n")
    return sb


def test_each_created_object_asked_for_its_final_label_first(users, build_dir):
    sb = users
    fc = install_shim(sb, build_dir)
    try:
        sb.run(["/usr/sbin/pwconv"])
        sb.set_nsswitch_shadow("hardened_shadow")
        sb.use_pam_module()
        sb.run(["/usr/sbin/groupadd", "-g", "5000", "proj"])
        sb.run(["/usr/sbin/useradd", "-m", "-G", "proj", "carol"])
        sb.run(["/usr/sbin/useradd", "-m", "dave"])
        sb.run(["/usr/sbin/usermod", "-m", "-d", "/home/dave2", "dave"])
        status, out = sb.pty_run(["/usr/bin/chsh", "-s", "/bin/sh"],
                                 [(r"Password: ", "bob-pw-1\n")], user="bob")
        assert status == 0, out
        status, out = sb.pty_run(["/usr/bin/passwd"],
                                 [(r"Current password: ", "alice-old-1\n"),
                                  (r"New password: ", "Tulip-new-pw-9\n"),
                                  (r"Retype new password: ", "Tulip-new-pw-9\n")],
                                 user="alice")
        assert status == 0, out
        sb.run(["/usr/sbin/userdel", "-r", "bob"])
    finally:
        log = remove_shim(sb)
    checked = check_labels(sb, log, Lookup(build_dir, fc))
    # the objects that matter were seen, with the policy's labels
    expect = {
        TREE: "shadow_t", TREE + "/carol": "shadow_t", TREE + "/carol/shadow": "shadow_t",
        TREE + "/alice/shadow": "shadow_t", "/etc/passwd": "etc_t",
        "/etc/passwd-": "etc_t", "/etc/group": "etc_t", "/etc/gshadow": "shadow_t",
        "/etc/gshadow-": "shadow_t", "/home/carol": "user_home_dir_t",
        "/home/carol/.bashrc": "user_home_t", "/home/carol/.bash_link": "user_home_t",
        "/home/carol/.ssh": "ssh_home_t", "/home/carol/.ssh/config": "ssh_home_t",
        "/home/dave2/.bashrc": "user_home_t", "/var/mail/carol": "mail_spool_t",
    }
    for path, typ in expect.items():
        assert path in checked, (path, "not made by our tools under the shim", sorted(checked))
        assert (":%s:" % typ) in checked[path][1], (path, checked[path])
    # alice's new shadow file: made by passwd without a request, inheriting shadow_t
    assert checked[TREE + "/alice/shadow"][0] == "passwd"
    # every request was undone after its object was made
    last = {}
    for line in log:
        w = line.split()
        if len(w) >= 4 and w[2] == "fscreate":
            last[w[1]] = w[3]
    assert all(v == "-" for v in last.values()), last


def test_vipw_labels_the_file_it_writes(users, build_dir):
    sb = users
    sb.run(["/usr/sbin/pwconv"])
    sb.write("/usr/local/bin/hs-test-edit",
             "#!/bin/sh\nsed -i 's/^alice:\\([^:]*\\):\\([^:]*\\):\\([^:]*\\):[^:]*:/"
             "alice:\\1:\\2:\\3:Alice V:/' \"$1\"\n", mode=0o755)
    fc = install_shim(sb, build_dir)
    try:
        sb.run(["/usr/sbin/vipw"], env={"EDITOR": "/usr/local/bin/hs-test-edit"})
    finally:
        log = remove_shim(sb)
    assert "Alice V" in sb.read("/etc/passwd")
    checked = check_labels(sb, log, Lookup(build_dir, fc))
    assert ":etc_t:" in checked["/etc/passwd"][1], checked


def test_confined_tools_may_still_set_creation_contexts(users, build_dir):
    """The confinement grants writing the thread's attr directory only while SELinux may
    be active (lib/base/confine.c): by the same signs selabel.h goes by, here the shim's
    is_selinux_enabled, so a confined tool still sets its creation contexts."""
    sb = users
    install_shim(sb, build_dir)
    try:
        sb.run(["/usr/sbin/groupadd", "-g", "5001", "labelled"])
        sb.run(["/usr/sbin/useradd", "-m", "frank"])
    finally:
        log = remove_shim(sb)
    assert not [l for l in log if " fscreate-denied " in l], log
    for prog in ("groupadd", "useradd"):
        asked = [l for l in log if l.split()[:1] == [prog] and l.split()[2:3] == ["fscreate"]]
        assert [l for l in asked if l.split()[3] != "-"], (prog, log)


def test_disabled_selinux_asks_for_nothing(users):
    """This kernel runs no SELinux: libselinux is not even loaded, no policy file is
    opened, no context is written, nothing is printed about it."""
    sb = users
    trace = "/tmp/selinux-off.trace"
    res = sb.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=%file,write",
                  "/usr/sbin/useradd", "-m", "erin"])
    assert res.stderr == "" and res.stdout == ""
    res = sb.run(["strace", "-f", "-qq", "-o", trace + "2", "-e", "trace=%file,write",
                  "/usr/sbin/pwconv"])
    assert res.stderr == ""
    text = sb.read(trace) + sb.read(trace + "2")
    assert "attr/fscreate" not in text
    assert "/etc/selinux/" not in text.replace('"/etc/selinux/config"', "")
    assert "file_contexts" not in text
    assert "libselinux.so" not in text and "libpcre2" not in text
