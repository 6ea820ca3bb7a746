"""NIS compat lines ("+", "-name", "+@netgroup", with or without the other fields) in
/etc/passwd, group, shadow and gshadow, on a root whose nsswitch.conf says `compat`:
every tool of ours keeps them byte for byte where they are, adds new entries before the
first of them (as shadow-utils does), refuses them as account names, and pwck/grpck do
not report them.  pwconv keeps /etc/shadow's in the tree and pwunconv puts them back.
Also the classic 8-field /etc/shadow line and the reserved ninth field."""

import os
import stat

import pytest

import sandbox

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

TREE = "/etc/hardened-shadow"
NIS_FILE = TREE + "/:nis-shadow"
SBIN = "/usr/sbin/"
NIS = {
    "/etc/passwd": ["+@sysadmins::::::", "-mallory", "+::::::/bin/false", "+"],
    "/etc/group": ["+@staffnet:::", "-games", "+:::"],
    "/etc/shadow": ["+@sysadmins::::::::", "-mallory", "+::::::::"],
    "/etc/gshadow": ["-games", "+:::"],
}


def nis_block(path):
    return "".join(l + "\n" for l in NIS[path])


def add_nis(sb):
    """passwd, group and shadow read through glibc's compat source, NIS lines appended
    to the four files (glibc has no libnss_nis here: the lines find nothing)."""
    conf = sb.read("/etc/nsswitch.conf").splitlines()
    conf = [l for l in conf if not l.split(":")[0].strip() in ("passwd", "group", "shadow")]
    conf += ["passwd: compat", "group: compat", "shadow: compat"]
    sb.write("/etc/nsswitch.conf", "\n".join(conf) + "\n")
    for path in NIS:
        if not sb.exists(path):
            continue
        st = sb.lstat(path)
        sb.write(path, sb.read(path) + nis_block(path), mode=stat.S_IMODE(st.st_mode),
                 gid=st.st_gid)


def assert_nis_kept(sb, paths=tuple(NIS)):
    """Each file still ends with its NIS lines, byte for byte, and holds no others."""
    for path in paths:
        if not sb.exists(path):
            continue
        text = sb.read(path)
        assert text.endswith(nis_block(path)), (path, text)
        assert sum(1 for l in text.splitlines() if l[:1] in "+-") == len(NIS[path]), path


def assert_checks_quiet(sb, tools=("pwck", "grpck")):
    """pwck -r and grpck -r report nothing but the sandbox's missing system homes."""
    for tool in tools:
        res = sb.run([SBIN + tool, "-r"], check=False)
        other = [l for l in (res.stdout + res.stderr).splitlines()
                 if not l.endswith("does not exist") and l != tool + ": no changes"]
        assert res.returncode in (0, 2) and not other, (tool, res.stdout, res.stderr)


def tree_names(sb):
    return sorted(os.listdir(sb.root + TREE))


def line_before_nis(sb, path):
    """The entry right before the first NIS line."""
    lines = sb.read(path).splitlines()
    return lines[lines.index(NIS[path][0]) - 1]


@pytest.fixture
def classic(sb):
    sb.add_classic_user("alice", password="alice-pw")
    sb.add_classic_user("bob", password="bob-pw")
    add_nis(sb)
    return sb


@pytest.fixture
def converted(classic):
    classic.run([SBIN + "pwconv"])
    classic.write("/etc/nsswitch.conf", classic.read("/etc/nsswitch.conf").replace(
        "shadow: compat", "shadow: hardened_shadow"))
    return classic


def test_pwconv_pwunconv_carry_the_lines(classic):
    sb = classic
    before = {p: sb.read(p) for p in NIS}
    sb.run([SBIN + "pwconv"])
    assert not sb.exists("/etc/shadow")
    assert_nis_kept(sb, ["/etc/passwd", "/etc/group", "/etc/gshadow"])
    # the lines name no account: no directory for "+", "-mallory" or "+@sysadmins"
    names = tree_names(sb)
    assert ":nis-shadow" in names
    assert not [n for n in names if n[:1] in "+-@"], names
    st = sb.lstat(NIS_FILE)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_nlink) == (0o600, 0, 0, 1)
    assert sb.read(NIS_FILE) == nis_block("/etc/shadow")
    # they are nobody's problem
    assert_checks_quiet(sb)
    sb.run([SBIN + "pwunconv"])
    assert not sb.exists(TREE)
    assert sb.read("/etc/passwd") == before["/etc/passwd"]
    assert sb.read("/etc/shadow") == before["/etc/shadow"]
    assert sb.read("/etc/group") == before["/etc/group"]


def test_pwunconv_puts_shadow_lines_where_passwd_has_its_first(classic):
    sb = classic
    # a NIS line between two accounts of /etc/passwd
    text = sb.read("/etc/passwd").replace("bob:", "-eve\nbob:", 1)
    sb.write("/etc/passwd", text)
    sb.run([SBIN + "pwconv"])
    assert sb.read("/etc/passwd").count("\n-eve\nbob:") == 1
    sb.run([SBIN + "pwunconv"])
    lines = sb.read("/etc/shadow").splitlines()
    i = lines.index(NIS["/etc/shadow"][0])
    assert lines[i - 1].startswith("alice:") and lines[i + 3].startswith("bob:"), lines


def test_pwunconv_refuses_a_tampered_nis_file(converted):
    sb = converted
    for text in ("alice:$6$x$y:1:::::::\n", "+::::::::"):
        sb.write(NIS_FILE, text, mode=0o600)
        res = sb.run([SBIN + "pwunconv"], check=False)
        assert res.returncode == 1 and ":nis-shadow" in res.stderr, res.stderr
        assert sb.exists(TREE) and not sb.exists("/etc/shadow")
    # pwck accepts it only as pwconv wrote it: root's, private
    sb.write(NIS_FILE, nis_block("/etc/shadow"), mode=0o644)
    res = sb.run([SBIN + "pwck", "-r"], check=False)
    assert res.returncode != 0 and ":nis-shadow" in res.stdout + res.stderr


def test_account_tools_keep_the_lines(converted):
    sb = converted
    original = {p: sb.read(p) for p in NIS if sb.exists(p)}
    sb.run([SBIN + "useradd", "-m", "-s", "/bin/sh", "carol"])
    assert line_before_nis(sb, "/etc/passwd").startswith("carol:")
    assert line_before_nis(sb, "/etc/group").startswith("carol:")
    assert line_before_nis(sb, "/etc/gshadow").startswith("carol:")
    assert "carol" in tree_names(sb)
    assert_nis_kept(sb)
    sb.run([SBIN + "usermod", "-c", "Carol", "-l", "carla", "carol"])
    sb.run(["/usr/bin/chfn", "-r", "42", "carla"])
    sb.run(["/usr/bin/chsh", "-s", "/bin/bash", "carla"])
    sb.run(["/usr/bin/chage", "-E", "", "carla"])
    sb.run([SBIN + "chpasswd", "-e"], input="carla:%s\n" % sandbox._crypt("Carla-pw"))
    sb.run([SBIN + "groupadd", "-g", "4242", "team"])
    assert line_before_nis(sb, "/etc/group").startswith("team:")
    sb.run([SBIN + "groupmod", "-n", "crew", "team"])
    sb.run(["/usr/bin/gpasswd", "-a", "alice", "crew"])
    sb.run([SBIN + "groupmems", "-g", "crew", "-a", "bob"])
    sb.run([SBIN + "chgpasswd", "-e"], input="crew:!\n")
    sb.run([SBIN + "newusers"], input="dave:Dave-pw-2024:4300:4300::/home/dave:/bin/sh\n")
    assert line_before_nis(sb, "/etc/passwd").startswith("dave:")
    assert_nis_kept(sb)
    assert_checks_quiet(sb)
    # vipw loads and installs a file with them
    sb.run([SBIN + "vipw"], env={"EDITOR": "sed -i s/^dave:x:4300:4300::/dave:x:4300:4300:D:/"})
    assert "dave:x:4300:4300:D:" in sb.read("/etc/passwd")
    assert_nis_kept(sb)
    sb.run([SBIN + "userdel", "-r", "carla"])
    sb.run([SBIN + "userdel", "-r", "dave"])
    sb.run([SBIN + "groupdel", "crew"])
    sb.run([SBIN + "groupdel", "carol"])            # usermod -l left the group's name
    assert not [n for n in tree_names(sb) if n[:1] in "+-@"]
    for path, text in original.items():
        assert sb.read(path) == text, path


def test_classic_shadow_keeps_the_lines(classic):
    sb = classic
    original = sb.read("/etc/shadow")
    sb.run([SBIN + "useradd", "carol"])
    assert line_before_nis(sb, "/etc/shadow").startswith("carol:")
    assert_nis_kept(sb)
    assert_checks_quiet(sb)
    sb.run([SBIN + "userdel", "carol"])
    assert sb.read("/etc/shadow") == original


@pytest.mark.parametrize("name", ["+", "+evil", "-evil", "+@ng", "-@ng"])
def test_nis_names_are_no_account_names(converted, name):
    sb = converted
    before = {p: sb.read(p) for p in NIS if sb.exists(p)}
    for argv, inp in (([SBIN + "useradd", name], None),
                      ([SBIN + "groupadd", name], None),
                      ([SBIN + "usermod", "-l", name, "alice"], None),
                      ([SBIN + "groupmod", "-n", name, "alice"], None),
                      ([SBIN + "newusers"], "%s:pw:4400:4400::/home/x:/bin/sh\n" % name)):
        res = sb.run(argv, input=inp, check=False)
        assert res.returncode != 0, (argv, res.stdout)
        assert res.stderr.strip(), argv
    # and tools that look a name up find none of the NIS lines
    for argv in ([SBIN + "userdel", name], [SBIN + "groupdel", name],
                 ["/usr/bin/chage", "-l", name], ["/usr/bin/passwd", "-S", name]):
        assert sb.run(argv, check=False).returncode != 0, argv
    for path, text in before.items():
        assert sb.read(path) == text, path
    assert not [n for n in tree_names(sb) if n[:1] in "+-@"]


def test_eight_field_lines_and_the_reserved_field(sb):
    sb.add_classic_user("alice", password="alice-pw", maxdays=90)
    sb.add_classic_user("bob", password="bob-pw")
    lines = sb.read("/etc/shadow").splitlines()
    for i, l in enumerate(lines):
        if l.startswith("alice:"):
            lines[i] = l + "4711"                       # the reserved field set
            alice = lines[i]
        elif l.startswith("bob:"):
            lines[i] = l[:-1]                           # 8 fields
            assert lines[i].count(":") == 7
    sb.write("/etc/shadow", "\n".join(lines) + "\n", mode=0o640,
             gid=sb.getgrnam("shadow")[1])
    # pwck reads both without a word
    assert_checks_quiet(sb, ("pwck",))
    sb.run([SBIN + "pwconv"])
    assert sb.read(TREE + "/alice/aging").endswith(":4711\n")
    assert sb.read(TREE + "/bob/aging").endswith(":\n")
    # a rewrite of aging keeps it
    sb.run(["/usr/bin/chage", "-M", "90", "alice"])
    assert sb.read(TREE + "/alice/aging").endswith(":4711\n")
    sb.run([SBIN + "pwunconv"])
    out = {l.split(":")[0]: l for l in sb.read("/etc/shadow").splitlines()}
    assert out["alice"] == alice
    assert out["bob"].count(":") == 8 and out["bob"].endswith(":")


def test_sorting_keeps_the_lines_last(sb):
    # bob's uid is lower, but his entry comes later: something to sort
    sb.add_classic_user("alice", password="alice-pw", uid=3000)
    sb.add_classic_user("bob", password="bob-pw", uid=2000)
    add_nis(sb)
    for tool, files in (("pwck", ("/etc/passwd", "/etc/shadow")),
                        ("grpck", ("/etc/group", "/etc/gshadow"))):
        res = sb.run([SBIN + tool, "-s"], check=False)
        assert res.returncode == 0, (tool, res.stdout, res.stderr)
        assert_nis_kept(sb, files)
        names = [l.split(":")[0] for l in sb.read(files[0]).splitlines()]
        assert names.index("bob") < names.index("alice"), (tool, names)
