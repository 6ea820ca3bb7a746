"""Demo steps for groups and sessions, for tests/sandbox/demo.

Each step is a function taking (sb, show): sb a sandbox.Sandbox, show the demo's
show(sb, argv, user=None) that prints a command and its output like a terminal.  The
docstring is the step's title.  A step creates what it needs (users, groups) when it is
missing, so it also runs on its own in a fresh sandbox."""

import sandbox

CLASSIC = sandbox.CLASSIC_TOOLS_DIR


def _ensure_user(sb, name):
    if sb.getpwnam(name) is None:
        sb.add_classic_user(name)


def step_sg(sb, show):
    """sg: a member runs a command as another group, without a password."""
    for name in ("alice", "bob"):
        _ensure_user(sb, name)
    if sb.getgrnam("project") is None:
        # the group is made with Debian's tools (the suite's own groupadd has its own demo)
        sb.run([CLASSIC + "/groupadd", "project"])
        sb.run([CLASSIC + "/usermod", "-aG", "project", "alice"])
    show(sb, ["ls", "-l", "/usr/bin/newgrp", "/usr/bin/sg"])
    show(sb, ["getent", "group", "project"])
    show(sb, ["id"], user="alice")
    show(sb, ["sg", "project", "-c", "id; grep -E '^(Uid|Gid|CapEff)' /proc/self/status"],
         user="alice")
    print("(the command runs with alice's uid everywhere and the group 'project' as real,")
    print(" effective and saved gid; her other groups are kept and no capability is left)")
    show(sb, ["sg", "project", "-c", "id"], user="bob")
    print("(bob is not a member: he would need the group password, and has no terminal "
          "to type it on)")
    log = [l for l in sb.syslog() if " sg[" in l]
    if log:
        print("syslog:", log[-1].split(": ", 1)[-1])


GROUPS_SESSION_STEPS = [step_sg]
