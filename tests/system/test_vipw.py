"""vipw and vigr in a throwaway root, with a scripted editor (a shell script given as EDITOR
that logs what it sees and then runs a per-test action on the copy): a valid edit of each
file installed with its FILE- backup; no change; an edit that does not parse refused
without a terminal and re-edited on a pty; the private copy (mode, others cannot read it,
removed afterwards); the editor killed by SIGKILL; SIGTERM, SIGINT and SIGHUP to vipw while
the editor runs; root's secrets kept out of the editor's environment; vipw -s -u USER on the
per-user tree (hash, shell, refusals, a planted symlink); a concurrent useradd waiting for
the lock; options and exit codes."""

import re
import stat

import pytest

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

VIPW = "/usr/sbin/vipw"
VIGR = "/usr/sbin/vigr"
TREE = "/etc/hardened-shadow"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
VT = "/var/tmp/vt"                 # the scripted editor's control and log directory
ED = "/usr/local/bin/hs-test-ed"   # the scripted editor
LOG = VT + "/log"
ACTION = VT + "/action"

# Logs its arguments, the copy's and its directory's modes, whether alice can read the
# copy, and its environment; then sources ACTION (so `$$` in an action is the editor).
EDITOR_SCRIPT = r"""#!/bin/sh
f="$1"
{
  echo "args=$#"
  echo "file=$f"
  stat -c 'mode=%a owner=%U' "$f"
  stat -c 'dirmode=%a dirowner=%U' "${f%/*}"
  if setpriv --reuid=alice --regid=alice --clear-groups cat "$f" >/dev/null 2>&1; then
    echo "alice-read=yes"
  else
    echo "alice-read=no"
  fi
  env | sed 's/^/env:/'
  echo "---text"
  cat "$f"
  echo "---end"
} >>%(log)s
[ -f %(action)s ] && . %(action)s
exit 0
""".replace("%(log)s", LOG).replace("%(action)s", ACTION)

# Sets alice's GECOS field in a passwd copy.
SET_GECOS = r"""sed -i 's/^alice:\([^:]*\):\([^:]*\):\([^:]*\):[^:]*:/alice:\1:\2:\3:Alice Edited:/' "$1"
"""


def setup_editor(sb):
    sb.run(["mkdir", "-p", VT])
    sb.write(ED, EDITOR_SCRIPT, mode=0o755)


@pytest.fixture
def classic(sb):
    """A classic system (passwd + shadow) with alice and bob."""
    sb.add_classic_user("alice", password="alice-pw-1")
    sb.add_classic_user("bob", password="bob-pw-1")
    setup_editor(sb)
    return sb


@pytest.fixture
def tree(classic):
    """The same, converted to the per-user tree."""
    classic.use_hardened_tree()
    assert not classic.exists("/etc/shadow")
    return classic


def action(sb, text):
    sb.write(ACTION, text)


def vipw(sb, args=(), prog=VIPW, env=None, **kw):
    e = {"EDITOR": ED}
    e.update(env or {})
    kw.setdefault("check", False)
    return sb.run([prog] + list(args), env=e, **kw)


def log_entries(sb):
    """One dict per editor run: the key=value lines, env (dict) and text."""
    if not sb.exists(LOG):
        return []
    runs = []
    for chunk in sb.read(LOG).split("args=")[1:]:
        head, _, rest = chunk.partition("---text\n")
        text, _, _ = rest.partition("---end\n")
        d = {"args": head.splitlines()[0], "env": {}, "text": text}
        for line in head.splitlines()[1:]:
            if line.startswith("env:"):
                k, _, v = line[4:].partition("=")
                d["env"][k] = v
            else:
                for part in line.split():
                    k, _, v = part.partition("=")
                    d[k] = v
        runs.append(d)
    return runs


def assert_clean(sb):
    """No copy, no private directory and no lock left behind."""
    left = sb.run(["sh", "-c", "ls -d /tmp/vipw.* /tmp/vigr.* 2>/dev/null; true"]).stdout.strip()
    assert left == "", left
    locks = sb.run(["sh", "-c", "ls /etc/*.lock 2>/dev/null; true"]).stdout.strip()
    assert locks == "", locks


def lines_of(sb, path, name):
    return [l for l in sb.read(path).splitlines() if l.startswith(name + ":")]


# ---------------------------------------------------------------- the global files

def test_passwd_edit_installed_with_backup(classic):
    sb = classic
    before = sb.read("/etc/passwd")
    st = sb.lstat("/etc/passwd")
    action(sb, SET_GECOS)
    res = vipw(sb)
    assert res.returncode == 0, res.stderr
    assert lines_of(sb, "/etc/passwd", "alice")[0].split(":")[4] == "Alice Edited"
    assert sb.read("/etc/passwd-") == before
    after = sb.lstat("/etc/passwd")
    assert (after.st_mode, after.st_uid, after.st_gid) == (st.st_mode, st.st_uid, st.st_gid)
    # like shadow-utils: a reminder about the companion file, which exists here
    assert res.stdout == ("You have modified /etc/passwd.\n"
                          "You may need to modify /etc/shadow for consistency.\n"
                          "Please use the command 'vipw -s' to do so.\n")
    assert any("file /etc/passwd edited" in m for m in sb.syslog())
    # the private copy: 0600 in a 0700 directory, both root's, alice cannot read it,
    # and everything is gone afterwards
    run = log_entries(sb)[0]
    assert run["args"] == "1"
    assert re.fullmatch(r"/tmp/vipw\.[A-Za-z0-9]{6}/passwd", run["file"])
    assert (run["mode"], run["owner"], run["dirmode"], run["dirowner"]) == \
        ("600", "root", "700", "root")
    assert run["alice-read"] == "no"
    assert run["text"] == before
    assert not sb.exists(run["file"].rsplit("/", 1)[0])
    assert_clean(sb)


def test_no_change_writes_nothing(classic):
    sb = classic
    st = sb.lstat("/etc/passwd")
    backup = sb.read("/etc/passwd-")
    # the editor rewrites the file with the same bytes (new mtime): contents count
    action(sb, 'cp "$1" "$1.tmp" && mv "$1.tmp" "$1"\n')
    res = vipw(sb)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "vipw: /etc/passwd is unchanged\n"
    after = sb.lstat("/etc/passwd")
    assert (after.st_ino, after.st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    assert sb.read("/etc/passwd-") == backup
    res = vipw(sb, ["-q"])
    assert (res.returncode, res.stdout) == (0, "")
    assert_clean(sb)


def test_invalid_edit_refused_without_terminal(classic):
    sb = classic
    before = sb.read("/etc/passwd")
    backup = sb.read("/etc/passwd-")
    shadow_before = sb.read("/etc/shadow")
    for bad in ["echo 'not a passwd line' >>\"$1\"\n",
                # a second alice
                "grep '^alice:' \"$1\" | sed 's/:1001:/:1005:/' >>\"$1\"\n",
                "printf 'carol:x:1002:1002::/home/carol:/bin/sh\\0\\n' >>\"$1\"\n",
                # an empty file would parse
                ": >\"$1\"\n"]:
        action(sb, bad)
        res = vipw(sb)
        assert res.returncode == 1, res
        assert re.search(r"^vipw: (/etc/passwd:\d+: |the edited copy is empty)", res.stderr,
                         re.M), res.stderr
        assert res.stdout == "vipw: /etc/passwd is unchanged\n"
        assert sb.read("/etc/passwd") == before
        assert sb.read("/etc/passwd-") == backup
        assert_clean(sb)
    action(sb, "echo 'alice:$y$broken:x:::::::' >>\"$1\"\n")
    res = vipw(sb, ["-s"])
    assert res.returncode == 1 and "/etc/shadow:" in res.stderr, res
    assert sb.read("/etc/shadow") == shadow_before


def test_reedit_on_a_pty(classic):
    sb = classic
    # first run of the editor breaks the file, the second one repairs it and edits
    action(sb, r"""n=$(cat %(vt)s/count 2>/dev/null || echo 0); echo $((n+1)) >%(vt)s/count
if [ "$n" = 0 ]; then echo 'broken line' >>"$1"; else sed -i '/^broken line$/d' "$1"; %(gecos)s fi
""" % {"vt": VT, "gecos": SET_GECOS.strip() + ";"})
    status, out = sb.pty_run(["env", "EDITOR=" + ED, VIPW],
                             [(r"Edit it again\? \[y/n\] ", "y\n")])
    assert status == 0, out
    assert re.search(r"vipw: /etc/passwd:\d+: invalid entry", out), out
    assert sb.read(VT + "/count").strip() == "2"
    assert lines_of(sb, "/etc/passwd", "alice")[0].split(":")[4] == "Alice Edited"
    assert "broken line" not in sb.read("/etc/passwd")
    assert_clean(sb)
    # answering no keeps the file; an unclear answer asks again
    before = sb.read("/etc/passwd")
    action(sb, "echo 'broken line' >>\"$1\"\n")
    status, out = sb.pty_run(["env", "EDITOR=" + ED, VIPW],
                             [(r"Edit it again\? \[y/n\] ", "maybe\n"),
                              (r"Edit it again\? \[y/n\] ", "n\n")])
    assert status == 1, out
    assert "vipw: /etc/passwd is unchanged" in out
    assert sb.read("/etc/passwd") == before
    assert_clean(sb)


def test_vigr_group_and_gshadow(classic):
    sb = classic
    action(sb, "sed -i 's/^bob:x:\\([0-9]*\\):$/bob:x:\\1:alice/' \"$1\"\n")
    before = sb.read("/etc/group")
    res = vipw(sb, prog=VIGR)
    assert res.returncode == 0, res.stderr
    assert sb.getgrnam("bob")[2] == ["alice"]
    assert sb.read("/etc/group-") == before
    assert "You have modified /etc/group." in res.stdout
    assert "Please use the command 'vigr -s' to do so." in res.stdout
    assert log_entries(sb)[-1]["file"].endswith("/group")
    assert_clean(sb)
    # vigr -s: /etc/gshadow, and the reminder the other way round
    action(sb, "sed -i 's/^bob:[^:]*:/bob:!:alice/' \"$1\"\n")
    before = sb.read("/etc/gshadow")
    st = sb.lstat("/etc/gshadow")
    res = vipw(sb, ["-s"], prog=VIGR)
    assert res.returncode == 0, res.stderr
    assert lines_of(sb, "/etc/gshadow", "bob")[0].startswith("bob:!:alice:")
    assert sb.read("/etc/gshadow-") == before
    assert sb.lstat("/etc/gshadow").st_mode == st.st_mode
    assert "Please use the command 'vigr' to do so." in res.stdout
    # vipw -g is vigr, vigr -p is vipw
    action(sb, "")
    assert vipw(sb, ["-g"]).stdout == "vipw: /etc/group is unchanged\n"
    assert vipw(sb, ["-p"], prog=VIGR).stdout == "vigr: /etc/passwd is unchanged\n"
    assert_clean(sb)


def test_vipw_s_classic_shadow(classic):
    sb = classic
    action(sb, "sed -i 's/^bob:\\([^:]*\\):[^:]*:/bob:\\1:0:/' \"$1\"\n")
    before = sb.read("/etc/shadow")
    st = sb.lstat("/etc/shadow")
    res = vipw(sb, ["-s"])
    assert res.returncode == 0, res.stderr
    assert lines_of(sb, "/etc/shadow", "bob")[0].split(":")[2] == "0"
    assert sb.read("/etc/shadow-") == before
    after = sb.lstat("/etc/shadow")
    assert (after.st_mode & 0o7777, after.st_gid) == (st.st_mode & 0o7777, st.st_gid)
    assert "You may need to modify /etc/passwd for consistency." in res.stdout
    run = log_entries(sb)[-1]
    assert run["file"].endswith("/shadow") and run["alice-read"] == "no"
    assert_clean(sb)


def test_tree_and_classic_systems_explained(classic):
    """-u on a classic system and plain -s on a tree system say where the entries are."""
    tree = classic
    res = vipw(tree, ["-u", "alice"])
    assert res.returncode == 1 and "edit it with vipw -s" in res.stderr, res
    tree.use_hardened_tree()
    res = vipw(tree, ["-s"])
    assert res.returncode == 1
    assert "/etc/shadow does not exist" in res.stderr and "vipw -s -u USER" in res.stderr
    assert log_entries(tree) == []      # no editor was started
    # after editing /etc/passwd on a tree system there is no shadow file to remind of
    action(tree, SET_GECOS)
    res = vipw(tree)
    assert (res.returncode, res.stdout) == (0, ""), res


# ---------------------------------------------------------------- the editor process

def test_editor_killed_by_sigkill(classic):
    sb = classic
    before = sb.read("/etc/passwd")
    action(sb, SET_GECOS + "kill -KILL $$\n")
    res = vipw(sb)
    assert res.returncode == 1
    assert "killed by signal 9" in res.stderr
    assert res.stdout == "vipw: /etc/passwd is unchanged\n"
    assert sb.read("/etc/passwd") == before
    assert_clean(sb)
    # the locks are free: useradd does not wait
    sb.run(["timeout", "5", "/usr/sbin/useradd", "carol"])
    # an editor that fails passes its status on (shadow-utils)
    action(sb, SET_GECOS + "exit 3\n")
    res = vipw(sb)
    assert res.returncode == 3 and "returned with status 3" in res.stderr, res
    assert "Alice Edited" not in sb.read("/etc/passwd")
    assert_clean(sb)


def test_suspended_editor_suspends_vipw(classic):
    """An editor that stops (^Z) stops vipw too, so the shell sees the job stopped; when
    vipw is continued, so is the editor, and the edit goes on."""
    sb = classic
    action(sb, SET_GECOS + "kill -STOP $$\ntouch %s/resumed\n" % VT)
    script = r"""
EDITOR=%(ed)s %(vipw)s >%(vt)s/vipw.out 2>&1 &
vp=$!
n=0
while [ "$(cut -d' ' -f3 /proc/$vp/stat)" != T ] && [ $n -lt 250 ]; do sleep 0.02; n=$((n+1)); done
echo "vipw state $(cut -d' ' -f3 /proc/$vp/stat)"
kill -CONT $vp
wait $vp; echo "rc=$?"
""" % {"vt": VT, "ed": ED, "vipw": VIPW}
    res = sb.sh(script, timeout=30)
    assert res.stdout.splitlines() == ["vipw state T", "rc=0"], res.stdout
    assert sb.exists(VT + "/resumed")
    assert lines_of(sb, "/etc/passwd", "alice")[0].split(":")[4] == "Alice Edited"
    assert_clean(sb)


def test_signals_to_vipw_while_editing(classic):
    """SIGTERM, SIGINT and SIGHUP to vipw: the editor goes, the copy goes, the locks are
    released, nothing is installed, and vipw dies by the signal.  An editor ignoring the
    signal is killed after the grace period."""
    sb = classic
    before = sb.read("/etc/passwd")
    # (the sleeps run in the background, where a script's children ignore SIGINT: vipw
    # has to take the editor's whole process group down)
    action(sb, SET_GECOS + "touch %(vt)s/editing\n[ -f %(vt)s/stubborn ] && trap '' INT TERM HUP\n"
           "sleep 30 & echo $! >>%(vt)s/sleeps; wait $!\n"
           "sleep 30 & echo $! >>%(vt)s/sleeps; wait $!\n" % {"vt": VT})
    script = r"""
for sig in TERM INT HUP; do
  rm -f %(vt)s/editing
  # (a script's background job starts with SIGINT ignored; vipw keeps an ignored signal
  # ignored, as nohup expects)
  env --default-signal=INT EDITOR=%(ed)s %(vipw)s >%(vt)s/out.$sig 2>&1 &
  pid=$!
  while [ ! -e %(vt)s/editing ]; do sleep 0.02; done
  start=$(date +%%s)
  kill -$sig $pid
  wait $pid
  echo "$sig rc=$? secs=$(( $(date +%%s) - start ))"
done
touch %(vt)s/stubborn
rm -f %(vt)s/editing
EDITOR=%(ed)s %(vipw)s >%(vt)s/out.stubborn 2>&1 &
pid=$!
while [ ! -e %(vt)s/editing ]; do sleep 0.02; done
kill -TERM $pid
wait $pid
echo "stubborn rc=$?"
# (a killed process may stay a zombie until its new parent reaps it)
alive() { s=$(cut -d' ' -f3 /proc/$1/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ]; }
for p in $(cat %(vt)s/sleeps); do
  n=0; while alive $p && [ $n -lt 20 ]; do sleep 0.05; n=$((n+1)); done
  alive $p && echo "alive $p $(cat /proc/$p/cmdline | tr '\0' ' ')"
done
true
""" % {"vt": VT, "ed": ED, "vipw": VIPW}
    res = sb.sh(script, timeout=40)
    got = dict(l.split(" ", 1) for l in res.stdout.splitlines() if " rc=" in l)
    for sig, num in (("TERM", 15), ("INT", 2), ("HUP", 1)):
        rc, secs = got[sig].split()
        assert rc == "rc=%d" % (128 + num), (sig, res.stdout)
        assert int(secs.split("=")[1]) <= 2, (sig, res.stdout)   # not the editor's 30 s
        assert "vipw: /etc/passwd is unchanged" in sb.read("%s/out.%s" % (VT, sig))
    assert got["stubborn"] == "rc=143", res.stdout
    assert "alive" not in res.stdout
    assert sb.read("/etc/passwd") == before
    assert_clean(sb)


def test_editor_environment_is_scrubbed(classic):
    sb = classic
    action(sb, "")
    secrets = {"MYSQL_PWD": "db-secret", "SSH_AUTH_SOCK": "/tmp/agent.sock",
               "AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-secret",
               "PGPASSWORD": "pg-secret"}
    keep = {"LANG": "C.UTF-8", "LC_MESSAGES": "C", "TERM": "xterm", "HOME": "/root",
            "PATH": "/var/tmp/vt/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    res = vipw(sb, env=dict(secrets, **keep))
    assert res.returncode == 0, res.stderr
    env = log_entries(sb)[-1]["env"]
    # also the sandbox's USER, LOGNAME and SHELL
    for k in list(secrets) + ["USER", "LOGNAME", "SHELL"]:
        assert k not in env, k
    for k, v in keep.items():
        assert env.get(k) == v, (k, env)
    assert env.get("EDITOR") == ED
    dumped = sb.read(LOG)
    assert "secret" not in dumped and "agent.sock" not in dumped
    # a relative PATH component is not passed on
    vipw(sb, env={"PATH": ".:/usr/bin:/bin"})
    assert log_entries(sb)[-1]["env"]["PATH"].split(":")[0] == "/usr/local/sbin"
    # VISUAL wins over EDITOR; without either, vi (found on the caller's PATH); an
    # editor command with words is split, one with shell syntax goes through sh -c
    sb.run(["mkdir", "-p", VT + "/bin"])
    sb.write(VT + "/bin/vi", "#!/bin/sh\necho vi-ran >>%s/vi.log\n" % VT, mode=0o755)
    sb.write(VT + "/bin/other", "#!/bin/sh\necho other-ran >>%s/vi.log\n" % VT, mode=0o755)
    path = {"PATH": VT + "/bin:/usr/bin:/bin"}
    sb.run([VIPW], env=dict(path, VISUAL=ED, EDITOR="other"))
    sb.run([VIPW], env=path)
    assert sb.read(VT + "/vi.log") == "vi-ran\n"
    n = len(log_entries(sb))
    sb.run([VIPW], env={"EDITOR": ED + " --some-flag"})
    assert log_entries(sb)[n]["args"] == "2"
    sb.run([VIPW], env={"EDITOR": "X='a b' " + ED})
    assert log_entries(sb)[n + 1]["env"].get("X") == "a b"
    assert_clean(sb)


def test_editor_command_is_shell_text_with_the_file_as_a_parameter(classic):
    """Like shadow-utils' vipw (which hands "EDITOR FILE" to system()), an editor command
    of several words is shell text: shell words such as exec work, and a command that
    is itself a shell (sh -c CMD) gets the file as the parameter after CMD's $0.  The
    file name is a positional parameter, never pasted into the text (so, as with
    system(), a command that ends in a comment does not get it: "$@" is commented out)."""
    sb = classic
    action(sb, SET_GECOS)
    res = vipw(sb, env={"EDITOR": "exec " + ED})
    assert res.returncode == 0, res.stderr
    run = log_entries(sb)[-1]
    assert run["args"] == "1" and re.match(r"^/tmp/vipw\.[^/]+/passwd$", run["file"]), run
    assert lines_of(sb, "/etc/passwd", "alice")[0].split(":")[4] == "Alice Edited"
    n = len(log_entries(sb))
    res = vipw(sb, env={"VISUAL": "command " + ED + " -u NONE"})
    assert res.returncode == 0, res.stderr
    assert log_entries(sb)[n]["args"] == "3"
    # sh -c 'ED "$0"': the file is the inner shell's $0, as with system()
    res = vipw(sb, env={"EDITOR": "sh -c '%s \"$0\"'" % ED})
    assert res.returncode == 0, res.stderr
    inner = log_entries(sb)[n + 1]
    assert inner["args"] == "1" and inner["file"].endswith("/passwd"), inner
    assert_clean(sb)


def test_concurrent_useradd_waits_for_the_lock(classic):
    sb = classic
    action(sb, SET_GECOS + "touch %s/editing\nwhile [ ! -e %s/go ]; do sleep 0.05; done\n"
           % (VT, VT))
    script = r"""
EDITOR=%(ed)s %(vipw)s >%(vt)s/vipw.out 2>&1 &
vp=$!
while [ ! -e %(vt)s/editing ]; do sleep 0.02; done
/usr/sbin/useradd dave >%(vt)s/ua.out 2>&1 &
up=$!
sleep 1
if kill -0 $up 2>/dev/null; then echo "useradd waiting"; fi
grep -c '^dave:' /etc/passwd
touch %(vt)s/go
wait $vp; echo "vipw rc=$?"
wait $up; echo "useradd rc=$?"
""" % {"vt": VT, "ed": ED, "vipw": VIPW}
    res = sb.sh(script, timeout=40, check=False)
    out = res.stdout.splitlines()
    assert out[:2] == ["useradd waiting", "0"], res.stdout + res.stderr
    assert "vipw rc=0" in out and "useradd rc=0" in out, res.stdout + sb.read(VT + "/ua.out")
    # both changes are there: neither lost the other's
    assert lines_of(sb, "/etc/passwd", "alice")[0].split(":")[4] == "Alice Edited"
    assert sb.getpwnam("dave") is not None


# ---------------------------------------------------------------- vipw -s -u USER

def test_user_entry_hash_and_shell(tree):
    sb = tree
    d = TREE + "/alice"
    aging_st = sb.lstat(d + "/aging")
    new_hash = "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o7ITLaaHw2DJ6XPSHKHNGcxhvu3pqoXp8"
    action(sb, "sed -i 's|^alice:[^:]*:|alice:%s:|; s|^shell:.*|shell:/bin/sh|' \"$1\"\n"
           % new_hash)
    res = vipw(sb, ["-s", "-u", "alice"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    run = log_entries(sb)[-1]
    assert re.fullmatch(r"/tmp/vipw\.[A-Za-z0-9]{6}/alice", run["file"])
    assert (run["mode"], run["dirmode"], run["alice-read"]) == ("600", "700", "no")
    shown = [l for l in run["text"].splitlines() if not l.startswith("#")]
    assert shown[0].startswith("alice:$y$") and shown[0].count(":") == 8
    assert shown[1] == "shell:/bin/bash"
    assert "this shell is in use" in run["text"]
    assert sb.read(d + "/shadow").split(":")[0] == new_hash
    assert sb.read(d + "/shell") == "/bin/sh\n"
    uid = sb.getpwnam("alice").uid
    for f, owner, mode in (("shadow", uid, 0o640), ("shell", uid, 0o640)):
        st = sb.lstat(d + "/" + f)
        assert (st.st_uid, st.st_mode & 0o7777) == (owner, mode), f
    # aging was not edited, so not rewritten
    st = sb.lstat(d + "/aging")
    assert (st.st_ino, st.st_mtime_ns) == (aging_st.st_ino, aging_st.st_mtime_ns)
    # NSS sees the new hash
    assert sb.run(["getent", "shadow", "alice"]).stdout.split(":")[1] == new_hash
    assert any("file %s edited" % d in m for m in sb.syslog())
    assert_clean(sb)
    # aging fields go to aging; unchanged text (or comments only) writes nothing
    action(sb, "sed -i 's|^\\(alice:[^:]*:[^:]*\\):[^:]*:[^:]*:[^:]*:[^:]*:[^:]*:|\\1:1:60:5:3:30000:|' \"$1\"\n")
    assert vipw(sb, ["-s", "-u", "alice"]).returncode == 0
    assert sb.read(d + "/aging") == "1:60:5:3:30000:\n"
    # the reserved ninth field lives in aging, and comes back in the editor
    action(sb, "sed -i 's/^\\(alice:.*\\):$/\\1:7/' \"$1\"\n")
    assert vipw(sb, ["-s", "-u", "alice"]).returncode == 0
    assert sb.read(d + "/aging") == "1:60:5:3:30000:7\n"
    action(sb, "true\n")
    assert vipw(sb, ["-s", "-u", "alice"]).returncode == 0
    assert log_entries(sb)[-1]["text"].count(":30000:7\n") == 1
    st = sb.lstat(d + "/shadow")
    action(sb, "echo '# only a comment' >>\"$1\"\n")
    res = vipw(sb, ["-u", "alice"])
    assert (res.returncode, res.stdout) == (0, "vipw: %s is unchanged\n" % d)
    assert sb.lstat(d + "/shadow").st_mtime_ns == st.st_mtime_ns


def test_user_entry_blank_lines(tree):
    """Lines of only spaces, tabs and CRs are skipped, before and after the entry; one
    more byte makes such a line content."""
    sb = tree
    d = TREE + "/alice"
    files = {f: sb.read(d + "/" + f) for f in ("shadow", "shell", "aging")}
    action(sb, r"""t=$(cat "$1")
{ printf ' \t\r\n\n'; printf '%s\n' "$t"; printf '\t\n \r\n'; } >"$1"
""")
    res = vipw(sb, ["-s", "-u", "alice"])
    assert (res.returncode, res.stdout) == (0, "vipw: %s is unchanged\n" % d), res
    action(sb, "printf ' \\t\\r.\\n' >>\"$1\"\n")
    res = vipw(sb, ["-s", "-u", "alice"])
    assert res.returncode == 1, res
    assert "only the shadow(5) line and the shell line" in res.stderr
    for f, text in files.items():
        assert sb.read(d + "/" + f) == text, f
    assert_clean(sb)


def test_user_entry_refusals(tree):
    sb = tree
    d = TREE + "/alice"
    files = {f: sb.read(d + "/" + f) for f in ("shadow", "shell", "aging")}
    for edit, msg in [
        ("sed -i 's/^alice:/bob:/' \"$1\"", "the name must stay alice"),
        ("sed -i 's|^shell:.*|shell:%s|' \"$1\"" % PROXY, "shell proxy"),
        ("sed -i 's|^shell:.*|shell:bin/sh|' \"$1\"", "invalid shell"),
        ("sed -i 's/^shell:/login-shell:/' \"$1\"", "expected shell:PATH"),
        ("echo 'shell:/bin/sh' >>\"$1\"", "only the shadow(5) line and the shell line"),
        ("sed -i '/^alice:/d' \"$1\"", "invalid shadow(5) line"),
        ("sed -i 's/^\\(alice:.*\\):$/\\1:x/' \"$1\"", "invalid shadow(5) line"),
        ("sed -i 's/^\\(alice:[^:]*\\):[^:]*:/\\1:yesterday:/' \"$1\"", "invalid shadow(5) line"),
    ]:
        action(sb, edit + "\n")
        res = vipw(sb, ["-s", "-u", "alice"])
        assert res.returncode == 1, (edit, res)
        assert msg in res.stderr, (edit, res.stderr)
        assert res.stdout == "vipw: %s is unchanged\n" % d
        for f, text in files.items():
            assert sb.read(d + "/" + f) == text, (edit, f)
        assert_clean(sb)
    for args, rc, msg in [(["-s", "-u", "nosuch"], 1, "user 'nosuch' does not exist"),
                          (["-s", "-u", "../alice"], 1, "invalid user name"),
                          (["-g", "-u", "alice"], 2, "group")]:
        res = vipw(sb, args)
        assert res.returncode == rc and msg in res.stderr, (args, res)


def test_user_entry_planted_symlink_not_followed(tree):
    sb = tree
    d = TREE + "/alice"
    sb.write("/etc/hs-target", "root's file\n", mode=0o600)
    # what alice could do after subverting a setgid tool: her own directory is hers
    alice = sb.getpwnam("alice")
    sb.run(["/usr/bin/setpriv", "--reuid=%d" % alice.uid, "--regid=%d" % alice.gid,
            "--groups=%d" % sb.getgrnam("hardened-shadow")[1], "--", "/bin/sh", "-c",
            "cd %s && rm -f shell && ln -s /etc/hs-target shell" % d])
    assert stat.S_ISLNK(sb.lstat(d + "/shell").st_mode)
    action(sb, "sed -i 's|^shell:.*|shell:/bin/sh|' \"$1\"\n")
    res = vipw(sb, ["-s", "-u", "alice"])
    assert res.returncode == 0, res.stderr
    assert "cannot read %s/shell: " % d in res.stderr and "symbolic link" in res.stderr
    text = log_entries(sb)[-1]["text"]
    assert "root's file" not in text
    assert "\nshell:\n" in text
    assert sb.read("/etc/hs-target") == "root's file\n"
    st = sb.lstat(d + "/shell")
    assert stat.S_ISREG(st.st_mode)
    assert (st.st_uid, st.st_mode & 0o7777, st.st_nlink) == (sb.getpwnam("alice").uid, 0o640, 1)
    assert sb.read(d + "/shell") == "/bin/sh\n"
    # a planted hard link to a root file in place of shadow: not shown, not written
    # through, and an edit that leaves it alone leaves it
    sb.run(["rm", "-f", d + "/shadow"])
    sb.run(["ln", "/etc/hs-target", d + "/shadow"])
    action(sb, "sed -i 's|^shell:.*|shell:/bin/bash|' \"$1\"\n")
    res = vipw(sb, ["-s", "-u", "alice"])
    assert res.returncode == 0, res.stderr
    assert "cannot read %s/shadow" % d in res.stderr
    assert "\nalice:!:" in log_entries(sb)[-1]["text"]
    assert sb.read("/etc/hs-target") == "root's file\n"
    assert sb.lstat(d + "/shadow").st_nlink == 2
    assert sb.read(d + "/shell") == "/bin/bash\n"
    assert_clean(sb)


def test_user_entry_lock_held_while_editing(tree):
    """chage for that user waits for the edit (the per-user lock), then goes on."""
    sb = tree
    action(sb, "touch %s/editing\nwhile [ ! -e %s/go ]; do sleep 0.05; done\n"
           "sed -i 's|^shell:.*|shell:/bin/sh|' \"$1\"\n" % (VT, VT))
    script = r"""
EDITOR=%(ed)s %(vipw)s -s -u alice >%(vt)s/vipw.out 2>&1 &
vp=$!
while [ ! -e %(vt)s/editing ]; do sleep 0.02; done
/usr/bin/chage -M 50 alice >%(vt)s/chage.out 2>&1 &
cp=$!
sleep 1
if kill -0 $cp 2>/dev/null; then echo "chage waiting"; fi
touch %(vt)s/go
wait $vp; echo "vipw rc=$?"
wait $cp; echo "chage rc=$?"
""" % {"vt": VT, "ed": ED, "vipw": VIPW}
    res = sb.sh(script, timeout=40, check=False)
    assert res.stdout.splitlines() == ["chage waiting", "vipw rc=0", "chage rc=0"], \
        res.stdout + sb.read(VT + "/chage.out")
    assert sb.read(TREE + "/alice/shell") == "/bin/sh\n"
    assert sb.read(TREE + "/alice/aging").split(":")[1] == "50"


# ---------------------------------------------------------------- options

def test_options_and_exit_codes(classic):
    sb = classic
    res = sb.run([VIPW, "--help"])
    assert res.stdout.startswith("Usage: vipw [options]")
    for opt in ("-g, --group", "-p, --passwd", "-q, --quiet", "-s, --shadow",
                "-R, --root", "-u, --user"):
        assert opt in res.stdout
    assert sb.run([VIGR, "-h"]).stdout.startswith("Usage: vigr [options]")
    # two binaries: the name a caller gives in argv[0] chooses nothing
    assert sb.run(["bash", "-c", "exec -a vigr %s -h" % VIPW]).stdout.startswith("Usage: vipw ")
    assert sb.run(["bash", "-c", "exec -a vipw %s -h" % VIGR]).stdout.startswith("Usage: vigr ")
    assert "hardened-shadow" in sb.run([VIPW, "--version"]).stdout
    for args in (["--bogus"], ["extra"], ["-u"]):
        res = vipw(sb, args)
        assert res.returncode == 2 and "Usage:" in res.stderr, (args, res)
    res = vipw(sb, ["-R", "/srv/other"])
    assert res.returncode == 2 and "not supported" in res.stderr
    res = vipw(sb, user="alice")
    assert res.returncode == 1 and "Permission denied" in res.stderr
    assert log_entries(sb) == []
    # vigr -s without /etc/gshadow
    sb.run(["mv", "/etc/gshadow", "/etc/gshadow.away"])
    res = vipw(sb, ["-s"], prog=VIGR)
    assert res.returncode == 1 and "cannot read /etc/gshadow" in res.stderr, res
    sb.run(["mv", "/etc/gshadow.away", "/etc/gshadow"])
