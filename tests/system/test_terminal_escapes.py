"""No byte a user controls reaches the administrator's terminal as a control sequence.

A hostile unprivileged user plants text with C1 controls -- CSI as UTF-8 (C2 9B) and as a
raw byte (9B, CSI to the Linux console outside UTF-8 mode and to xterm with 8-bit
controls) -- beside C0 escapes, then root runs the tools that quote it.  Everything they
write must be well-formed UTF-8 without a control character other than newline and tab,
the hostile bytes shown as \\xNN, and the UTF-8 text around them (é, CJK, an emoji)
shown as it is when root's locale says the terminal takes UTF-8 (UTF8 below), every
byte >= 0x80 escaped when it does not.  The user's levers: their own directory in the tree (what a user who
subverted a setgid tool can write: DESIGN.md section 2 treats its contents as hostile),
the names of the files in their home, and their GECOS through the setuid chfn."""

import os
import stat

import pytest

TREE = "/etc/hardened-shadow"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
# Debian's util-linux su, copied from the host (the build may install a su of its own).
SU = "/usr/local/bin/hs-test-debian-su"
CHFN = "/usr/bin/chfn"

# readable text the user may legitimately have: é, 日本, 🎉
READABLE = "Jos\u00e9 \u65e5\u672c \U0001f389"
# C1 CSI in UTF-8 and raw, each starting a sequence a terminal would act on
C1 = b"\xc2\x9b31m" + b"\x9b2J"
C1_SHOWN = "\\xc2\\x9b31m\\x9b2J"
# C0: an OSC title change and a bare ESC sequence
C0 = b"\x1b]0;pwned\x07\x1b[2J"
C0_SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J"
# root's environment when its terminal takes UTF-8: READABLE is shown as it is
UTF8 = {"LANG": "C.UTF-8"}


def assert_terminal_safe(out):
    """out (bytes) is what the terminal would receive: it decodes as UTF-8 (a raw 0x9b or
    any other stray byte does not), and holds no C0 (but newline and tab), DEL or C1."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError("a raw byte reached the terminal: %s in %r" % (e, out)) from None
    bad = [c for c in text
           if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert not bad, (bad, text)
    return text


@pytest.fixture
def hostile(sb):
    """alice (the hostile user) and bob, converted to the tree, the shell proxy on."""
    sb.set_login_defs("SHELL_PROXY", "yes")
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    sb.use_hardened_tree()
    assert sb.getpwnam("alice").shell == PROXY
    return sb


def as_subverted_tool(sb, user, script, input=b""):
    """Run script as user with the tree group, as a setgid tool the user subverted
    runs: the user's own directory is then theirs to write."""
    pw = sb.getpwnam(user)
    tree_gid = sb.getgrnam("hardened-shadow")[1]
    return sb.run(["/usr/bin/setpriv", "--reuid=%d" % pw.uid, "--regid=%d" % pw.gid,
                   "--groups=%d" % tree_gid, "--", "/bin/sh", "-c", script], input=input)


def plant_shell_file(sb, content):
    as_subverted_tool(sb, "alice", "cat > %s/alice/shell" % TREE, input=content)


def plant_entry(sb, name):
    """A file named name (bytes) in alice's directory of the tree."""
    as_subverted_tool(sb, "alice", 'exec 3>"$(cat)"',
                      input=TREE.encode() + b"/alice/" + name)
    assert sb.exists(TREE + "/alice/" + os.fsdecode(name))


# ---------------------------------------------------------------- the user's shell file

def test_su_to_the_user_quotes_a_planted_shell_path_escaped(hostile):
    """root's `su - alice`: the shell proxy, started on root's terminal, names the shell
    path alice planted.  C0 in the path is refused without quoting it, so the attack is
    C1: it came through raw."""
    sb = hostile
    shell = b"/nonexistent/" + READABLE.encode() + C1
    plant_shell_file(sb, shell + b"\n")
    res = sb.run([SU, "-", "--whitelist-environment=LANG", "alice", "-c", "echo REACHED"],
                 input=b"", check=False, timeout=20, env=UTF8)
    assert res.returncode != 0 and b"REACHED" not in res.stdout
    err = assert_terminal_safe(res.stderr)
    assert err.count("\n") == 1, err
    assert "login shell /nonexistent/%s%s: No such file or directory" % (
        READABLE, C1_SHOWN) in err, err


def test_pwck_quotes_a_planted_shell_path_escaped_and_readable(hostile):
    sb = hostile
    plant_shell_file(sb, b"/nonexistent/" + READABLE.encode() + C1 + b"\n")
    res = sb.run(["/usr/sbin/pwck", "-r"], input=b"", check=False, env=UTF8)
    out = assert_terminal_safe(res.stdout)
    assert_terminal_safe(res.stderr)
    assert "program '/nonexistent/%s%s' does not exist" % (READABLE, C1_SHOWN) in out, out


# ---------------------------------------------------------------- names in the directory

HOSTILE_NAME = READABLE.encode() + C1 + C0 + b"\nforged line"
HOSTILE_NAME_SHOWN = READABLE + C1_SHOWN + C0_SHOWN + "\\x0aforged line"


def test_usermod_u_quotes_a_planted_entry_name_escaped(hostile):
    """usermod -u re-owns alice's files and leaves any other entry alone with a warning
    that names it: the name is alice's to choose, any byte but '/' and NUL."""
    sb = hostile
    plant_entry(sb, HOSTILE_NAME)
    res = sb.run(["/usr/sbin/usermod", "-u", "4321", "alice"], input=b"", check=False,
                 env=UTF8)
    assert res.returncode == 0, res
    err = assert_terminal_safe(res.stderr)
    assert err == "usermod: leaving unexpected entry %s/alice/%s alone\n" % (
        TREE, HOSTILE_NAME_SHOWN), err
    assert sb.getpwnam("alice").uid == 4321


def test_pwck_quotes_a_planted_entry_name_escaped_and_readable(hostile):
    sb = hostile
    plant_entry(sb, HOSTILE_NAME)
    res = sb.run(["/usr/sbin/pwck", "-r"], input=b"", check=False, env=UTF8)
    out = assert_terminal_safe(res.stdout)
    assert_terminal_safe(res.stderr)
    assert "%s/alice/%s: stray " % (TREE, HOSTILE_NAME_SHOWN) in out, out
    assert "forged line" not in out.replace(HOSTILE_NAME_SHOWN, "")


# ---------------------------------------------------------------- the user's home

def test_usermod_u_quotes_a_hard_link_in_the_home_escaped(hostile):
    """No subversion needed: alice names a second link to one of her files in her home
    as she likes; usermod -u leaves a file with more than one link alone, with a
    warning that names it on root's terminal."""
    sb = hostile
    sb.run(["/bin/sh", "-c", 'cd && : > plain && ln plain "$(cat)"'], user="alice",
           input=HOSTILE_NAME)
    res = sb.run(["/usr/sbin/usermod", "-u", "4321", "alice"], input=b"", check=False,
                 env=UTF8)
    assert res.returncode == 0, res
    err = assert_terminal_safe(res.stderr)
    home = sb.getpwnam("alice").home
    for shown in ("plain", HOSTILE_NAME_SHOWN):
        assert ("usermod: warning: not changing the owner of %s/%s: it has more than one "
                "link\n" % (home, shown)) in err, err
    assert err.count("\n") == 2, err


# ---------------------------------------------------------------- GECOS

@pytest.fixture
def suid_chfn(hostile, build_dir):
    """chfn as -Dsetuid_chfn=true installs it, every field alice's to change."""
    sb = hostile
    if not sb.lstat(CHFN).st_mode & stat.S_ISUID:
        with open(os.path.join(build_dir, "src", "admin", "chfn-setuid-test"), "rb") as f:
            sb.write(CHFN, f.read(), mode=0o4755)
    sb.set_login_defs("CHFN_RESTRICT", "frwh")
    return sb


def test_gecos_the_user_sets_reads_as_it_is_and_c1_stays_out(suid_chfn):
    """alice sets her name through chfn: C1 is refused (and her own error shows it
    escaped); UTF-8 is kept, and root's chfn prompt shows it readable."""
    sb = suid_chfn
    for bad in (b"\xc2\x9b", b"\x9b"):
        res = sb.run([CHFN, "-f", os.fsdecode(b"Al" + bad + b"31mice")], user="alice",
                     input=b"alice-pw-1\n", check=False)
        assert res.returncode == 1, res
        err = assert_terminal_safe(res.stderr)
        assert "'Al%s31mice'" % "".join("\\x%02x" % c for c in bad) in err, err
    res = sb.run([CHFN, "-f", READABLE], user="alice", input=b"alice-pw-1\n",
                 check=False)
    assert res.returncode == 0, res
    # root looks at the entry: the prompt names the current value (end of input keeps it)
    res = sb.run([CHFN, "alice"], input=b"", check=False, env=UTF8)
    assert res.returncode == 0, res
    out = assert_terminal_safe(res.stdout)
    assert "\tFull Name [%s]: " % READABLE in out, out


# ---------------------------------------------------------------- the terminal's charset

# "Û" (U+00DB) is well-formed UTF-8, C3 9B, and so is much text whose continuation bytes
# fall in 0x80..0x9F ("À".."ß", many CJK characters): to a terminal in an 8-bit charset
# (the Linux console outside UTF-8 mode, xterm with a Latin-1 font) 0x9B is CSI.  Only a
# locale whose charset is UTF-8 says the terminal reads it as text; anything else ("C",
# no locale at all) gets every byte >= 0x80 escaped.
CSI_TEXT = "\u00db2J\u00c0"
CSI_TEXT_ESCAPED = "\\xc3\\x9b2J\\xc3\\x80"
BY_LOCALE = [({"LANG": "C"}, CSI_TEXT_ESCAPED), ({}, CSI_TEXT_ESCAPED),
             ({"LC_ALL": "C", "LANG": "C.UTF-8"}, CSI_TEXT_ESCAPED),
             ({"LANG": "C.UTF-8"}, CSI_TEXT)]


def assert_shown_for_locale(out, env):
    """out (bytes) holds no byte >= 0x80 unless env's locale is UTF-8."""
    if env.get("LC_ALL", env.get("LANG")) != "C.UTF-8":
        assert max(out, default=0) < 0x80, out
    return assert_terminal_safe(out)


@pytest.mark.parametrize("env,shown", BY_LOCALE)
def test_gecos_with_a_c1_continuation_byte_is_escaped_outside_utf8(suid_chfn, env, shown):
    """alice names herself "Û2JÀ" through chfn (well-formed UTF-8, so accepted); root's
    chfn prompt shows it raw only when root's locale is UTF-8."""
    sb = suid_chfn
    res = sb.run([CHFN, "-f", CSI_TEXT], user="alice", input=b"alice-pw-1\n", check=False)
    assert res.returncode == 0, res
    res = sb.run([CHFN, "alice"], input=b"", check=False, env=env)
    assert res.returncode == 0, res
    out = assert_shown_for_locale(res.stdout, env)
    assert "\tFull Name [%s]: " % shown in out, out


@pytest.mark.parametrize("env,shown", BY_LOCALE)
def test_pwck_quotes_a_planted_shell_with_c1_continuation_bytes(hostile, env, shown):
    sb = hostile
    plant_shell_file(sb, b"/nonexistent/" + CSI_TEXT.encode() + b"\n")
    res = sb.run(["/usr/sbin/pwck", "-r"], input=b"", check=False, env=env)
    out = assert_shown_for_locale(res.stdout, env)
    assert_shown_for_locale(res.stderr, env)
    assert "program '/nonexistent/%s' does not exist" % shown in out, out
