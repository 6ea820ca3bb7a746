"""Every prompt gives the terminal back (echo on) on every way out, and reads its line to
the end, so nothing typed at a prompt reaches the parent shell.

Each case runs the tool in the foreground of a small shell on a real pseudo-terminal.  The
shell catches SIGINT and SIGQUIT (so the tool gets them by default, as under an
interactive shell) and, after the tool has ended, prints the terminal's echo state.  A
signal is typed (^C, ^\\) or sent by a helper process as soon as echo is off, that is
while the tool waits at its hidden prompt."""

import pytest

import test_passwd as tp

# the proxy's paths: login.defs' SHELL_PROXY yes (the default is no)
pytestmark = pytest.mark.usefixtures("shell_proxy_on")

STATE = r"ECHO-STATE:(\S+)"

SCRIPT = """
trap : INT QUIT
if [ -n "$KILL" ]; then
  ( n=0
    until stty -a </dev/tty | grep -q ' -echo '; do
      n=$((n+1)); [ $n -gt 500 ] && exit 1; sleep 0.02
    done
    sleep 0.2; pkill -"$KILL" -P $$ -x "$NAME" ) &
fi
"$@"
echo "status=$?"
wait
stty -a </dev/tty | grep -o ' -\\?echo ' | sed 's/^ /ECHO-STATE:/'
"""

# (tool, user running it, argv, its hidden prompt)
TOOLS = {
    "passwd-user": ("alice", [tp.PASSWD], "Current password: "),
    "passwd-root": (None, [tp.PASSWD, "alice"], "New password: "),
    "chsh": ("alice", ["/usr/bin/chsh", "-s", "/bin/sh"], "Password: "),
    "su": ("bob", ["/bin/su", "alice", "-c", "true"], "Password: "),
}

# how the prompt ends: (typed at the prompt, signal sent by the helper)
WAYS = {
    "SIGINT": ("\x03", None),
    "SIGQUIT": ("\x1c", None),
    "EOF": ("\x04", None),
    "wrong": ("no-such-password-1\n", None),
    "SIGHUP": (None, "HUP"),
    "SIGTERM": (None, "TERM"),
    "SIGALRM": (None, "ALRM"),
    "SIGUSR1": (None, "USR1"),
}


@pytest.fixture
def mod(sb):
    tp.install_su(sb)
    tp.make_users(sb)
    tp.convert(sb)
    tp.use_module(sb)
    return sb


def echo_after(sb, tool, way):
    user, argv, prompt = TOOLS[tool]
    typed, kill = WAYS[way]
    name = argv[0].rsplit("/", 1)[1]
    env = {"KILL": kill or "", "NAME": name}
    steps = [(prompt, typed)]
    if tool == "passwd-root" and way == "wrong":
        # a mismatch, three times over, and passwd gives up
        steps.append(("Retype new password: ", "a-mismatch-2\n"))
        for _ in range(2):
            steps += [(prompt, "a-mismatch-1\n"), ("Retype new password: ", "a-mismatch-2\n")]
    steps.append((STATE, None))
    status, out = sb.pty_run(["/bin/sh", "-c", SCRIPT, "sh"] + argv, steps, user=user,
                             env=env)
    assert status == 0, out
    assert "status=0" not in out, out
    return out.rsplit("ECHO-STATE:", 1)[1].split()[0], out


# every way out at one tool's prompt, the common ones at every tool's (the conversation
# is one function; this keeps the run short)
CASES = [("passwd-user", way) for way in sorted(WAYS)] + \
    [(tool, way) for tool in sorted(TOOLS) if tool != "passwd-user"
     for way in ("SIGINT", "SIGTERM", "EOF", "wrong")]


@pytest.mark.parametrize("tool,way", CASES)
def test_terminal_echo_is_restored(mod, tool, way):
    state, out = echo_after(mod, tool, way)
    assert state == "echo", out


def test_overlong_answer_does_not_reach_the_shell(mod):
    # one line longer than any answer: read to its end, nothing left for the next reader
    script = ('"$@"; echo "status=$?"; stty -icanon min 0 time 3 </dev/tty; '
              'echo "LEFT=$(head -c 8000 </dev/tty | wc -c)"; stty sane </dev/tty')
    status, out = mod.pty_run(["/bin/sh", "-c", script, "sh", "/usr/bin/chsh", "-s", "/bin/sh"],
                              [("Password: ", "x" * 2000 + "\n"), (r"LEFT=\d+", None)],
                              user="alice")
    assert "LEFT=0" in out, out
    assert "status=0" not in out, out
    assert "answer too long" in out, out
    assert mod.read("/etc/hardened-shadow/alice/shell") != "/bin/sh\n"
