"""Demo step for pwck, for tests/sandbox/demo.

step_pwck(sb, show): sb a sandbox.Sandbox, show the demo's show(sb, argv, user=None, **kw)
that prints a command and its output like a terminal.  Run it while alice is in the
per-user tree (after the demo's pwconv, before its pwunconv); a sandbox without her gets
her created and converted, so the step also runs on its own."""

TREE = "/etc/hardened-shadow"
SHADOW = TREE + "/alice/shadow"


def _say(text):
    print("(%s)" % text, flush=True)


def step_pwck(sb, show):
    """pwck audits the per-user tree: a broken permission is reported with its path, what
    is wrong and what it should be, then repaired."""
    if sb.getpwnam("alice") is None:
        sb.add_classic_user("alice", password="alice-pw-1")
    if not sb.exists(TREE + "/alice"):
        sb.use_hardened_tree()
    show(sb, ["pwck", "-q", "-r"])
    _say("-q: errors only; -r: read-only.  Now root makes a mistake: alice's shadow "
         "becomes readable by everyone who can reach it")
    show(sb, ["chmod", "0644", SHADOW])
    show(sb, ["ls", "-l", SHADOW])
    _say("getspnam() through the NSS module opens the file by path and does not check its "
         "mode, for speed: pwck is where this is caught")
    res = show(sb, ["pwck", "-q", "-r"])
    if "%s: mode is 0644, should be 0640" % SHADOW not in res.stdout or res.returncode != 2:
        raise AssertionError("pwck -r did not report the mode of %s:\n%s" % (SHADOW,
                                                                              res.stdout))
    _say("without -r, pwck offers each repair; the answers come from stdin (here: y)")
    show(sb, ["pwck", "-q"], input="y\n" * 10)
    show(sb, ["ls", "-l", SHADOW])
    st = sb.lstat(SHADOW)
    if st.st_mode & 0o7777 != 0o640:
        raise AssertionError("pwck did not repair the mode of %s" % SHADOW)
    show(sb, ["pwck", "-q", "-r"])
