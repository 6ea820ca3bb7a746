"""Demo step for the front doors, for tests/sandbox/demo.

step_session(sb, show): erin logs in on a pseudo-terminal through our login and the PAM
module (the shell proxy starts her shell; login stays behind as root and waits), then
bob runs `su -` to become erin.  sb is a sandbox.Sandbox, show the demo's
show(sb, argv, user=None).  The step makes its own users (erin, and bob if missing), so
it runs at any point after the build is installed: with the per-user tree in place it
uses our useradd and chpasswd, otherwise it converts with pwconv first."""

import re
import shlex

ERIN_PW = "Erin-front-door-5"
BOB_PW = "bob-pw-2"             # the demo's step_classic_users
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _say(text):
    print("(%s)" % text, flush=True)


def _print_pty(prompt, argv, status, out):
    print("%s %s" % (prompt, " ".join(shlex.quote(a) for a in argv)))
    out = ANSI.sub("", out).strip("\n")
    if out:
        print(out)
    if status != 0:
        print("(exit status %d)" % status)


def _ensure_users(sb):
    if sb.getpwnam("bob") is None:
        sb.add_classic_user("bob", password=BOB_PW)
    if not sb.exists("/etc/hardened-shadow"):
        sb.add_classic_user("erin", password=ERIN_PW)
        sb.use_hardened_tree()
    elif sb.getpwnam("erin") is None:
        sb.run(["useradd", "-m", "-s", "/bin/bash", "erin"])
        sb.run(["chpasswd"], input="erin:%s\n" % ERIN_PW)
    sb.set_nsswitch_shadow("hardened_shadow")
    if "pam_hardened_shadow.so" not in sb.read("/etc/pam.d/common-auth"):
        sb.use_pam_module()


def step_session(sb, show):
    """erin logs in with our login on a terminal; bob becomes erin with our su -"""
    _ensure_users(sb)
    show(sb, ["ls", "-l", "/usr/bin/login", "/usr/bin/su", "/usr/sbin/runuser"])
    _say("login and runuser are run by root and stay plain 0755; su is setuid root")
    show(sb, ["grep", "^erin:", "/etc/passwd"])
    sb.syslog(clear=True)

    argv = ["login", "erin"]
    inside = ('echo "I am $(id -un), my shell is $0"; '
              'stat -c "my terminal: %n %U:%G %a" "$(tty)"; who; '
              'ps -o user,pid,ppid,args -p "$PPID,$$"; exit\n')
    status, out = sb.pty_run(argv, [(r"Password: ", ERIN_PW + "\n"),
                                    (r"\$ $", inside)])
    _print_pty("root#", argv, status, out)
    if status != 0 or "I am erin" not in out:
        raise AssertionError("login as erin failed:\n" + out)
    _say("the shell proxy started erin's real shell as a login shell (-bash); her parent is "
         "login, still root, which waited to close the PAM session")
    for m in sb.syslog(clear=True):
        m = re.sub(r"^<\d+>", "", m)
        if " login[" in m and ("session opened" in m or "session closed" in m or
                               "LOGIN" in m):
            print("  syslog: " + m)
    show(sb, ["utmpdump", "/var/log/wtmp"])
    _say("a login and a logout record for the terminal (pam_lastlog in Debian's "
         "/etc/pam.d/login writes a pair of its own)")

    argv = ["su", "-", "erin", "-c", 'echo "bob became $(id -un) in $(pwd), shell $0"']
    status, out = sb.pty_run(argv, [(r"Password: ", ERIN_PW + "\n")], user="bob")
    _print_pty("bob$", argv, status, out)
    if status != 0 or "bob became erin" not in out:
        raise AssertionError("su - erin failed:\n" + out)
    for m in sb.syslog(clear=True):
        m = re.sub(r"^<\d+>", "", m)
        if " su[" in m and ("(to erin)" in m or "session opened" in m or
                            "session closed" in m):
            print("  syslog: " + m)
    argv = ["su", "-", "erin", "-c", "true"]
    status, out = sb.pty_run(argv, [(r"Password: ", "not-erins-password\n")], user="bob")
    _print_pty("bob$", argv, status, out)
    for m in sb.syslog(clear=True):
        m = re.sub(r"^<\d+>", "", m)
        if "FAILED SU" in m:
            print("  syslog: " + m)
