"""Demo steps for authentication and self-service, for tests/sandbox/demo.

AUTH_STEPS is a list of functions taking (sb, show): sb a sandbox.Sandbox, show the
demo's show(sb, argv, user=None) that prints a command and its output like a terminal.
Each step's docstring is its title.  The steps work on the demo's alice (password
"alice-pw-1") and bob; run them while alice and bob are in the per-user tree (after the
demo's pwconv, before its pwunconv).  A step that finds them missing creates and converts
them, so the list also runs on its own in a fresh sandbox."""

import os
import re
import shlex

ALICE_PW = "alice-pw-1"         # the demo's step_classic_users
BOB_PW = "bob-pw-2"
# alice's new password: random-looking enough for Debian's pam_pwquality (which also
# refuses a password that contains the user's name)
ALICE_NEW_PW = "Tulip-7-harbour"
EXPIRED_MSG = "Your account has expired; please contact your system administrator."

# real, effective and saved ids of every process in the session
PS_FORMAT = "pid,ppid,ruser,euser,suser,rgroup,egroup:16,sgroup:16,args"

# what the steps changed, per sandbox: alice's current password
_state = {}


def _say(text):
    print("(%s)" % text, flush=True)


def _ensure_users_in_tree(sb):
    """alice and bob in /etc/hardened-shadow, nsswitch.conf's shadow on our NSS module."""
    for name, pw in (("alice", ALICE_PW), ("bob", BOB_PW)):
        if sb.getpwnam(name) is None:
            sb.add_classic_user(name, password=pw)
    if not sb.exists("/etc/hardened-shadow/alice"):
        sb.set_login_defs("SHELL_PROXY", "yes")     # step_chsh: a self-service shell
        sb.use_hardened_tree()
    else:
        sb.set_nsswitch_shadow("hardened_shadow")
    _state.setdefault(id(sb), ALICE_PW)


def _ensure_pwquality_usable(sb):
    """Debian's pam_pwquality refuses every password when cracklib's dictionary is not
    installed (package cracklib-runtime); turn its dictionary check off in the root only
    then, and say so."""
    if sb.exists("/var/cache/cracklib/cracklib_dict.pwd"):
        return
    conf = "/etc/security/pwquality.conf"
    text = sb.read(conf) if sb.exists(conf) else ""
    if re.search(r"^\s*dictcheck\s*=\s*0", text, re.M):
        return
    sb.write(conf, text + "dictcheck = 0\n")
    _say("this machine has no cracklib dictionary, so pam_pwquality's dictionary check "
         "is off in the sandbox's /etc/security/pwquality.conf")


def _print_pty(prompt_user, argv, status, out):
    print("%s$ %s" % (prompt_user, " ".join(shlex.quote(a) for a in argv)))
    out = out.strip("\n")
    if out:
        print(out)
    if status != 0:
        print("(exit status %d)" % status)


def _su_alice(sb, password, expect_ok):
    """bob runs `su - alice -c ...` on a terminal and types password."""
    argv = ["su", "-", "alice", "-c", 'echo "logged in as $(id -un) via $0"']
    status, out = sb.pty_run(argv, [(r"Password: ", password + "\n")], user="bob")
    _print_pty("bob", argv, status, out)
    if expect_ok and status != 0:
        raise AssertionError("su - alice failed:\n" + out)
    if not expect_ok and status == 0:
        raise AssertionError("su - alice succeeded on an expired account:\n" + out)
    return status, out


def _module_log(sb):
    """What pam_hardened_shadow.so logged since the last call."""
    lines = [m for m in sb.syslog(clear=True) if "pam_hardened_shadow" in m]
    for m in lines:
        print("  syslog: " + re.sub(r"^<\d+>", "", m))


def step_pam_login(sb, show):
    """alice logs in through pam_hardened_shadow.so (our su, with the PAM stack switched over)"""
    _ensure_users_in_tree(sb)
    if "pam_hardened_shadow.so" not in sb.read("/etc/pam.d/common-auth"):
        sb.use_pam_module()
    _say("every pam_unix.so line of /etc/pam.d/common-* now names our module, same controls")
    show(sb, ["grep", "-H", "pam_hardened_shadow", "/etc/pam.d/common-auth",
              "/etc/pam.d/common-account", "/etc/pam.d/common-password",
              "/etc/pam.d/common-session"])
    show(sb, ["ls", "-l", "/usr/lib/x86_64-linux-gnu/security/pam_hardened_shadow.so"])
    sb.syslog(clear=True)
    _su_alice(sb, _state[id(sb)], expect_ok=True)
    _module_log(sb)


def _snapshot_processes(sb, name):
    """A pty_run script step that, when reached, records `ps` of the session of the
    process called name (the program is then blocked at its prompt), and matches at
    once.  Returns (step, result list)."""
    taken = []

    class SnapshotNow:
        pattern = "(ps snapshot of %s)" % name

        def search(self, text, pos):
            if not taken:
                pid = _find_in_root(sb, name)
                if pid is None:
                    taken.append("(no %s process found in the root)" % name)
                else:
                    r = sb.run(["ps", "-s", str(pid), "-o",
                                PS_FORMAT],
                               check=False)
                    taken.append(r.stdout + r.stderr)
            return _Match(pos)

    return (SnapshotNow(), None), taken


class _Match:
    def __init__(self, pos):
        self._pos = pos

    def end(self):
        return self._pos


def _find_in_root(sb, name):
    """pid of a process called name whose root directory is the sandbox's root."""
    root = os.path.realpath(sb.root)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                if f.read().strip() != name:
                    continue
            if os.readlink("/proc/%s/root" % pid) == root:
                return int(pid)
        except OSError:
            continue
    return None


def step_self_service_passwd(sb, show):
    """alice changes her own password with passwd: setgid, and no root anywhere"""
    _ensure_users_in_tree(sb)
    if "pam_hardened_shadow.so" not in sb.read("/etc/pam.d/common-password"):
        sb.use_pam_module()
    _ensure_pwquality_usable(sb)
    show(sb, ["ls", "-l", "/usr/bin/passwd"])
    _say("setgid hardened-shadow, not setuid root: it can reach alice's directory only "
         "because she owns it")
    show(sb, ["ls", "-li", "/etc/hardened-shadow/alice/"])
    before = sb.read("/etc/hardened-shadow/alice/shadow")
    old = _state[id(sb)]
    snap_step, snapshot = _snapshot_processes(sb, "passwd")
    argv = ["passwd"]
    status, out = sb.pty_run(argv, [
        (r"[Cc]urrent password: ", None),
        snap_step,                          # passwd is waiting at its prompt: ps now
        (r"", old + "\n"),
        (r"New password: ", ALICE_NEW_PW + "\n"),
        (r"Retype new password: ", ALICE_NEW_PW + "\n"),
    ], user="alice")
    _print_pty("alice", argv, status, out)
    print("(while passwd waited for the current password, its session looked like this:)")
    print("root# ps -s PID -o " + PS_FORMAT)
    print(snapshot[0].rstrip("\n") if snapshot else "(no snapshot)")
    if status != 0:
        raise AssertionError("passwd as alice failed:\n" + out)
    _state[id(sb)] = ALICE_NEW_PW
    show(sb, ["ls", "-li", "/etc/hardened-shadow/alice/"])
    after = sb.read("/etc/hardened-shadow/alice/shadow")
    print("(alice's shadow file, hash cut short: before %s..., after %s...)" %
          (before[:12], after[:12]))
    _say("one file of alice's was replaced (a new inode, same owner alice); no global "
         "file, no global lock, and no process with uid 0")
    _su_alice(sb, ALICE_NEW_PW, expect_ok=True)


def step_expired(sb, show):
    """root expires alice's account with chage; the login is refused with pam's message"""
    _ensure_users_in_tree(sb)
    if "pam_hardened_shadow.so" not in sb.read("/etc/pam.d/common-account"):
        sb.use_pam_module()
    show(sb, ["chage", "-E", "2000-01-01", "alice"])
    show(sb, ["chage", "-l", "alice"])
    show(sb, ["ls", "-l", "/etc/hardened-shadow/alice/aging"])
    show(sb, ["cat", "/etc/hardened-shadow/alice/aging"])
    sb.syslog(clear=True)
    status, out = _su_alice(sb, _state[id(sb)], expect_ok=False)
    _module_log(sb)
    if EXPIRED_MSG not in out:
        raise AssertionError("su did not show %r:\n%s" % (EXPIRED_MSG, out))
    _say("the password was right; the account check (pam_hardened_shadow.so account) "
         "refused it with pam_unix's message")
    show(sb, ["chage", "-E", "-1", "alice"])
    _say("expiry cleared again, for the steps that follow")


def step_chsh(sb, show):
    """alice changes her own login shell with chsh: one file of hers, /etc/passwd untouched"""
    _ensure_users_in_tree(sb)
    if "pam_hardened_shadow.so" not in sb.read("/etc/pam.d/common-auth"):
        sb.use_pam_module()
    show(sb, ["ls", "-l", "/usr/bin/chsh"])
    show(sb, ["grep", "^alice:", "/etc/passwd"])
    before = sb.run(["sha256sum", "/etc/passwd"]).stdout.split()[0]
    show(sb, ["cat", "/etc/hardened-shadow/alice/shell"])
    argv = ["chsh", "-s", "/bin/dash"]
    status, out = sb.pty_run(argv, [(r"Password: ", _state[id(sb)] + "\n")], user="alice")
    _print_pty("alice", argv, status, out)
    if status != 0:
        raise AssertionError("chsh failed:\n" + out)
    show(sb, ["ls", "-l", "/etc/hardened-shadow/alice/shell"])
    show(sb, ["cat", "/etc/hardened-shadow/alice/shell"])
    after = sb.run(["sha256sum", "/etc/passwd"]).stdout.split()[0]
    _say("/etc/passwd is byte for byte the same (sha256 %s...): it still names the proxy"
         % after[:12])
    if before != after:
        raise AssertionError("/etc/passwd changed")
    _su_alice(sb, _state[id(sb)], expect_ok=True)
    _say("the proxy started her new shell at the next login ($0 is -dash)")
    sb.run(["chsh", "-s", "/bin/bash", "alice"])


AUTH_STEPS = [step_pam_login, step_self_service_passwd, step_chsh, step_expired]
