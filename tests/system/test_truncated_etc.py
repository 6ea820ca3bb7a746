"""An account file cut short or rewritten in place under a running tool by a program that
ignores our locks (an admin's `: > /etc/group`, an editor saving in place).

The tools map the global files: a mapped page past the file's new end raised SIGBUS when
it was touched, and the tool died with no message.  Now such a page reads as zeros, the
tool sees that its mapping was cut short, and its commit checks that the file is still the
one it mapped: the tool says in one line that the file changed meanwhile and writes
nothing, the file stays as the other program left it.

strace stops the tool (SIGSTOP) in a system call: the count of that system call is found by a trial run of the same tool with the
same kind of arguments."""

import os
import re
import subprocess
import time

import pytest

import consistency
import sandbox
from test_lock_window import descendants, resume, state_of

GROUPS = ["team%02d" % i for i in range(60)]

# tool, the file cut short, argv for the trial run, argv for the real one
CASES = {
    "groupadd": ("/etc/group", ["/usr/sbin/groupadd", "trial"],
                 ["/usr/sbin/groupadd", "newgrp1"]),
    "usermod": ("/etc/passwd", ["/usr/sbin/usermod", "-c", "trial", "alice"],
                ["/usr/sbin/usermod", "-c", "Alice Cut", "alice"]),
    "gpasswd": ("/etc/gshadow", ["/usr/bin/gpasswd", "-a", "alice", "team01"],
                ["/usr/bin/gpasswd", "-a", "bob", "team01"]),
}


@pytest.fixture
def sb(base):
    with sandbox.Sandbox(base, size="256m") as s:
        s.add_classic_user("alice", password="alice-pw-1")
        s.add_classic_user("bob", password="bob-pw-1")
        for g in GROUPS:
            s.run(["/usr/sbin/groupadd", g])
        for i in range(60):
            s.run(["/usr/sbin/useradd", "-M", "-c", "filler %d" % i, "fill%02d" % i])
        yield s


def nth_call(sb, argv, syscall, path):
    """In a trial run of argv: the number (strace's when=) of the last call of syscall
    given a descriptor of path (the load under the locks: usermod reads /etc/passwd once
    before them too), counted in the process that makes it."""
    sb.run(["strace", "-f", "-qq", "-y", "-o", "/tmp/trial", "-e", "trace=" + syscall] + argv)
    text = sb.read("/tmp/trial")
    sb.run(["rm", "-f", "/tmp/trial"])
    seen, found = {}, None
    for line in text.splitlines():
        pid, call = line.split(None, 1)
        if not call.startswith(syscall + "("):
            continue
        seen[pid] = seen.get(pid, 0) + 1
        if re.search(r"\d+<%s>[,)]" % re.escape(path), call):
            found = seen[pid]
    if found is None:
        raise AssertionError("no %s on %s in %r" % (syscall, path, text))
    return found


NUMBERS = {"close": "3", "mmap": "9", "fsync": "74"}      # x86-64


def held(pid, syscall):
    """Is pid held in its injected stop at syscall?  Under strace it stops in every system
    call it makes, for a moment: a stop that lasts is the injected one."""
    for _ in range(4):
        try:
            with open("/proc/%d/syscall" % pid) as f:
                number = f.read().split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False
        if state_of(pid) not in ("t", "T") or number != NUMBERS[syscall]:
            return False
        time.sleep(0.1)
    return True


def stopped_at(sb, argv, syscall, nth, env=None):
    """Start argv under strace, stopped (SIGSTOP) at the nth call of syscall; (the strace
    process, the tool's pid) once the tool is stopped there."""
    cmd, _ = sb._wrap(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                       "inject=%s:signal=SIGSTOP:when=%d" % (syscall, nth)] + argv, None, "/")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(env or {}, PATH="/usr/bin:/bin"),
                            start_new_session=True, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in descendants(proc.pid):
            if held(pid, syscall):
                return proc, pid
        if proc.poll() is not None:
            raise AssertionError("it ended first: %r" % (proc.communicate(),))
        time.sleep(0.02)
    raise AssertionError("the tool never stopped")


def cut_short(sb, path):
    """What `: > path` does: the same file, now empty."""
    with open(os.path.join(sb.root, path.lstrip("/")), "r+") as f:
        f.truncate(0)


def names(text):
    return [l.split(":", 1)[0] for l in text.splitlines()]


def check_change(sb, tool, before):
    """Every account of before is still there, and the tool's change is made."""
    after = {p: sb.read(p) for p in before}
    for p in before:
        assert set(names(before[p])) <= set(names(after[p])), (tool, p, after[p])
    if tool == "groupadd":
        assert sb.getgrnam("newgrp1") is not None
        assert "newgrp1" in names(after["/etc/gshadow"])
    elif tool == "usermod":
        assert sb.getpwnam("alice").gecos == "Alice Cut"
        assert after["/etc/shadow"] == before["/etc/shadow"]
    else:
        assert "bob" in sb.getgrnam("team01")[2]
    consistency.assert_consistent(sb)


CHANGED = "changed meanwhile, by a program that ignores the locks"
FILES = ("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow")


@pytest.mark.parametrize("tool", sorted(CASES))
def test_cut_short_after_the_load(sb, tool):
    """Stopped right after it loaded the file (the close of the descriptor it read it
    through, before any parse), the file cut to nothing: no SIGBUS; the tool either makes
    its change on what it read, or fails in one line and writes nothing.  (The
    stop at close() is after the map, before any parse, in every build.)"""
    path, trial, argv = CASES[tool]
    nth = nth_call(sb, trial, "close", path)
    before = {p: sb.read(p) for p in FILES}
    proc, pid = stopped_at(sb, argv, "close", nth)
    try:
        cut_short(sb, path)
    finally:
        out, err = resume(proc, pid)
    assert 0 <= proc.returncode < 128, (proc.returncode, err)
    if proc.returncode == 0:
        assert err == "", err
        check_change(sb, tool, before)
    else:
        assert len(err.splitlines()) == 1 and err.startswith(os.path.basename(argv[0]) + ": "), err
        assert sb.read(path) == ""
        for p in FILES:
            if p != path:
                assert sb.read(p) == before[p], p


@pytest.mark.parametrize("tool", sorted(CASES))
def test_cut_short_after_its_size(sb, tool):
    """Stopped after it opened the file and took its size (its fstat), at its map, the
    file cut to nothing: what it would read is no longer the file it
    sized, so it says so in one line and writes nothing (the file stays as the other
    program left it)."""
    path, trial, argv = CASES[tool]
    nth = nth_call(sb, trial, "mmap", path)
    before = {p: sb.read(p) for p in FILES}
    proc, pid = stopped_at(sb, argv, "mmap", nth)
    try:
        cut_short(sb, path)
    finally:
        out, err = resume(proc, pid)
    assert 0 < proc.returncode < 128, (proc.returncode, err)
    prog = os.path.basename(argv[0])
    assert err == "%s: cannot read %s: %s\n" % (prog, path, CHANGED), err
    assert sb.read(path) == ""
    for p in FILES:
        if p != path:
            assert sb.read(p) == before[p], p


@pytest.mark.parametrize("tool", sorted(CASES))
def test_rewritten_in_place_after_the_load(sb, tool):
    """Stopped right after it loaded the file, the file rewritten in place (same inode) with
    a line more, as an editor that saves in place does: the lines the tool took where they
    were are no longer there, so it writes nothing and says so in one line; the file keeps
    the other program's content."""
    path, trial, argv = CASES[tool]
    nth = nth_call(sb, trial, "close", path)
    before = {p: sb.read(p) for p in FILES}
    edited = before[path] + "edited:x:4711:\n"
    proc, pid = stopped_at(sb, argv, "close", nth)
    try:
        with open(os.path.join(sb.root, path.lstrip("/")), "r+") as f:
            f.truncate(0)
            f.write(edited)
    finally:
        out, err = resume(proc, pid)
    assert 0 < proc.returncode < 128, (proc.returncode, err)
    prog = os.path.basename(argv[0])
    assert err == "%s: cannot write %s: %s\n" % (prog, path, CHANGED), err
    assert sb.read(path) == edited
    for p in FILES:
        if p != path:
            assert sb.read(p) == before[p], p


# A tool that writes lines it copied out of the file it loaded: pwck -s and grpck -s
# sort a copy of their lines, vipw and vigr install the edited copy of what they showed.
# Stopped when its first staged copy is written, before the check that follows it (the
# staged copy's fsync, its first: no other process of theirs, the editor's included, makes
# one), the file rewritten in place with a line more: what it writes is made from the old lines, so it writes nothing and says so in one
# line; the file keeps the other program's content.
REWRITES = {
    # tool: the file rewritten, the line added, an editor's sed script (vipw, vigr)
    "pwck": ("/etc/passwd", "edited:x:4711:4711::/nonexistent:/usr/sbin/nologin\n", None),
    "grpck": ("/etc/group", "edited:x:4711:\n", None),
    "vipw": ("/etc/passwd", "edited:x:4711:4711::/nonexistent:/usr/sbin/nologin\n",
             r"s/^alice:\([^:]*\):\([^:]*\):\([^:]*\):[^:]*:/alice:\1:\2:\3:Alice Edited:/"),
    "vigr": ("/etc/group", "edited:x:4711:\n", r"s/^\(team01:[^:]*:[^:]*:\).*/\1alice,bob/"),
}


@pytest.mark.parametrize("tool", sorted(REWRITES))
def test_rewritten_in_place_under_a_copy(sb, tool):
    from test_vipw import ACTION, ED, setup_editor

    path, line, script = REWRITES[tool]
    if script:
        argv, env = ["/usr/sbin/" + tool], {"EDITOR": ED}
        setup_editor(sb)
        sb.write(ACTION, "sed -i '%s' \"$1\"\n" % script)
    else:
        argv, env = ["/usr/sbin/" + tool, "-s"], None
    before = {p: sb.read(p) for p in FILES}
    edited = before[path] + line
    proc, pid = stopped_at(sb, argv, "fsync", 1, env=env)
    try:
        with open(os.path.join(sb.root, path.lstrip("/")), "r+") as f:
            f.truncate(0)
            f.write(edited)
    finally:
        out, err = resume(proc, pid)
    assert 0 < proc.returncode < 128, (proc.returncode, err)
    assert err == "%s: cannot write %s: %s\n" % (tool, path, CHANGED), err
    assert sb.read(path) == edited
    for p in FILES:
        if p != path:
            assert sb.read(p) == before[p], p
