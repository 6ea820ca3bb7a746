"""Is the account state inside a sandbox consistent?  A checker for system tests.

    import consistency
    report = consistency.check(sb)                       # a Report
    consistency.assert_consistent(sb)                    # nothing may be out of place
    consistency.assert_consistent(sb, allow=consistency.CRASH_LEFTOVERS)   # after a SIGKILL

It reads the root's files from the host side (no program runs inside the root), without
following symbolic links in the paths it checks, and sorts what it finds into

  problems   never acceptable: a file that does not parse, duplicate names, a per-user
             directory or file with the wrong owner, group, mode, type or link count
             (DESIGN section 2), a directory without a passwd line holding a usable hash,
             a proxy-shell user without a directory, a user both in the tree and in
             /etc/shadow, a lock held by a running process, a file of an unknown name in
             a user's directory or an unknown reserved name in the tree;
  leftovers  states that a SIGKILL (or a power cut) at the wrong instant may leave and that
             the design accepts, each with a kind (below).  After a normal, complete run
             there must be none.

Leftover kinds (the decision on what a crash may leave, docs/decisions.md "Interruption"):

  stale-lock        /etc/FILE.lock or /etc/FILE.PID (shadow-utils' lock protocol, DESIGN
                    section 4) whose process is gone.  Nothing can remove them when the
                    holder is killed; the next locker breaks a stale FILE.lock at once.
                    FILE.PID files are never removed by anyone (shadow-utils leaves them
                    too); they are harmless.
  temp-file         a ".NAME.XXXXXXXXXXXX" temporary of an atomic replace, in /etc, in a
                    user's directory or (a conversion marker's) at the top of the tree:
                    only a kill between linkat() and renameat() leaves one (lib/io/fileio.c).
                    pwconv removes those of the global files; nothing removes the others.
                    In /etc also "..hardened-shadow.txn.XXXXXXXXXXXX", the same window
                    while lib/txn replaces a journal that is there (txn-pending,
                    txn-stale): the journal is not written until the rename (a new one
                    is linked whole to its name), and "..BASE.hs-txn.XXXXXXXXXXXX" of
                    older binaries, which staged the same way (staged files are now
                    written at their name: txn-stale until a journal names them).
  reserved-dir      /etc/hardened-shadow/.new.USER.XXXXXXXXXXXX (a directory being built
                    by hs_userdir_build) or .del.USER.XXXXXXXXXXXX (one being removed):
                    reserved names are never served by the NSS module.  The tree's mark
                    /etc/hardened-shadow/.reserved is made before the first one and stays
                    while any may be left (a reserved directory without it is a problem:
                    nothing would sweep it).  The next root tool that takes the global
                    locks puts a committed journal's in place, removes the others, then
                    the mark (lib/tree/userdir_admin.c); the mark alone is this kind too.
  rename-pending    /etc/hardened-shadow/.usermod-l.NEW: an interrupted usermod -l; running
                    usermod again finishes it (before /etc/passwd was written: the same
                    command; after: any usermod on NEW -- test_interrupt.py shows that
                    the same command does not).
  convert-pending   a pwconv/pwunconv marker in the tree, or /etc/.hardened-shadow.XXXXXX:
                    the next pwconv or pwunconv finishes or rolls back.
  orphan-dir        a user directory without a passwd line whose hash is exactly "!"
                    (locked): the window of useradd between creating the directory and
                    writing /etc/passwd.  Nobody can log in with it; the next useradd of the
                    name removes it.  (A directory without a passwd line holding anything
                    else is a problem.)
  missing-dir       a passwd line with pw_passwd "x" (not the proxy shell) whose directory
                    is missing: the windows of userdel (directory first, /etc/passwd last)
                    and usermod -l.  The account fails closed (no shadow entry); running
                    usermod or userdel again finishes it.  A user whose shell is the proxy and who
                    has no directory is reported here too when the name is in `pending`
                    (the user the interrupted command was working on), else as a problem.
  taken-away        a user's directory owned by root:root (0700, or still 2710 between the
                    chown and the chmod) although the passwd uid is not 0: DESIGN section
                    3's "take it away first" of usermod -u/-l and userdel, interrupted; its
                    files may belong to the old or the new uid (usermod -u).  Only root can
                    enter it; a rerun hands it back (or removes it).  Also the whole tree
                    root:root 0700 (or 0710) while pwunconv removes it (with its marker
                    inside), reported as convert-pending.
  missing-group     a passwd line whose primary group is gone: userdel writes /etc/group
                    (without the private group) before /etc/passwd.  Running userdel again
                    finishes it.
  dangling-member   a group or gshadow member list naming a user /etc/passwd does not have:
                    seen through a pending transaction (txn-pending) until the next tool
                    finishes it, or left by a tool that writes one file at a time.
  dangling-subid    an /etc/subuid or /etc/subgid range of a name /etc/passwd does not have:
                    as dangling-member (usermod -l renames the ranges too).  Tolerated by
                    assert_consistent unless `strict_subids`.
  group-mismatch    /etc/group and /etc/gshadow name different groups or different members:
                    two files cannot change at the same instant; gshadow is written first,
                    so a kill between them leaves a gshadow line (or member) that
                    /etc/group does not have yet (or, when removing, no longer has).
  txn-pending       /etc/.hardened-shadow.txn, the journal of lib/txn (a transaction over
                    several global files), with the staged files /etc/.BASE.hs-txn it
                    names: the transaction is committed (the journal is its commit
                    point) but not yet installed, or installed in part.  The next tool
                    that opens an accountset under the locks finishes it, so check()
                    judges the files as that tool will see them: every BASE named by
                    the journal whose staged file is still there is read from the
                    staged file, unless the staged name holds the old file itself (the
                    journal's inode): exchanged out by the install, to become the
                    backup BASE-.  The journal must parse and each such BASE must still
                    be the file the journal names (device, inode, size, mtime, ctime):
                    else the recovery would drop the staged file, and the committed
                    change would be lost half-way -- a problem.  A journal whose
                    staged files are all installed (a kill before its unlink) is
                    txn-pending too.  Not garbage: a rerun must leave no journal.
                    Its work lines ("@tree-new", "@tree-del", "@home-new", "@home-del")
                    are finished by that tool too: a user directory it removes may
                    stay without a passwd line until then.
  txn-stale         /etc/.BASE.hs-txn without a journal: staged by a transaction that
                    was killed before its commit point, so the old state holds; the
                    next tool's recovery removes them.  Not garbage either.  Also a
                    journal written as prepared (useradd -m building the home): the
                    next tool undoes its work.
  shadow-file       /etc/shadow next to the tree on a system converted by pwconv, holding
                    users that have no directory: written by a tool that does not know the
                    tree (shadow-utils' useradd, systemd-sysusers); only reported, such
                    accounts are `foreign`.

`foreign` names accounts made by tools that do not know the tree (shadow-utils' useradd,
systemd-sysusers): they may lack a directory (they then cannot authenticate through the
NSS module, which fails closed) but must otherwise be consistent.
"""

import os
import re
import stat

TREE = "/etc/hardened-shadow"
PROXY = "/usr/libexec/hardened-shadow/shell-proxy"
GLOBAL_FILES = ("passwd", "shadow", "group", "gshadow", "subuid", "subgid")
FIELDS = {"passwd": 7, "shadow": 9, "group": 4, "gshadow": 4, "subuid": 3, "subgid": 3}
USERFILES = {"shadow": (None, 0o640), "shell": (None, 0o640), "aging": (0, 0o644)}
USERFILE_MAX = 4096

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\$?\Z")
NUM_RE = re.compile(r"(0|[1-9][0-9]*)\Z")
RND = r"[A-Za-z0-9]{12}"
ETC_TEMP_RE = re.compile(r"\.(passwd|shadow|group|gshadow|subuid|subgid|shells)-?\.%s\Z" % RND)
ETC_LOCK_RE = re.compile(r"(passwd|shadow|group|gshadow|subuid|subgid)\.(lock|[0-9]+)\Z")
CONVERT_TMP_RE = re.compile(r"\.hardened-shadow\.[A-Za-z0-9]{6}\Z")
USER_TEMP_RE = re.compile(r"\.(shadow|shell|aging)\.%s\Z" % RND)
RESERVED_MARK = ".reserved"     # HS_TREE_RESERVED_MARK, lib/tree/userdir.h
RESERVED_RE = re.compile(r"\.(new|del)\.(.+)\.%s\Z" % RND)
RENAME_RE = re.compile(r"\.usermod-l\.(.+)\Z")
MARKERS = (".pwconv-incomplete", ".pwunconv-incomplete")
# lib/etc/txn.h: the journal and the staged files of a transaction over the global files
TXN_JOURNAL = ".hardened-shadow.txn"
TXN_HEADER = b"hardened-shadow transaction 1\n"
TXN_PREPARED = b"hardened-shadow prepared 1\n"
# "@KIND UID GID MODE PDEV PINO SDEV SINO TMP PATH": a command's home and tree work
WORK_RE = re.compile(r"@(tree-new|tree-del|home-new|home-del)(?: [0-9]+){3}(?: [0-9]+){4} "
                     r"(\S+) (/.*)\Z")
TXN_STAGED_RE = re.compile(r"\.(passwd|shadow|group|gshadow|subuid|subgid|shells)\.hs-txn\Z")
TXN_TEMP_RE = re.compile(r"\.(\.(passwd|shadow|group|gshadow|subuid|subgid|shells)\.hs-txn"
                         r"|\.hardened-shadow\.txn)\.%s\Z" % RND)
MARKER_TEMP_RE = re.compile(r"\.\.(pwconv|pwunconv)-incomplete\.%s\Z" % RND)

CRASH_LEFTOVERS = frozenset({
    "stale-lock", "temp-file", "reserved-dir", "rename-pending", "convert-pending",
    "orphan-dir", "missing-dir", "taken-away", "dangling-member", "group-mismatch",
    "missing-group", "dangling-subid", "txn-pending", "txn-stale"})
# What stays after the interrupted command was run again (or the next run of any tool):
# nothing removes these, and they are harmless (see the kinds above).
GARBAGE = frozenset({"stale-lock", "temp-file", "reserved-dir", "dangling-subid"})
# Not an inconsistency of ours (see dangling-subid).
TOLERATED = frozenset({"dangling-subid"})


class Report:
    def __init__(self):
        self.problems = []
        self.leftovers = []        # (kind, text)
        self.tree_work = {}        # user -> "tree-new"/"tree-del" of a committed journal

    def problem(self, text):
        self.problems.append(text)

    def leftover(self, kind, text):
        assert kind in CRASH_LEFTOVERS or kind == "shadow-file", kind
        self.leftovers.append((kind, text))

    def kinds(self):
        return {k for k, _ in self.leftovers}

    def unexpected(self, allow=()):
        """Problems, then leftovers of a kind not in allow, as lines."""
        return self.problems + ["%s: %s" % (k, t) for k, t in self.leftovers if k not in allow]

    def __str__(self):
        return "\n".join(self.problems + ["(%s) %s" % kt for kt in self.leftovers]) or "ok"


def _host(sb, path):
    return os.path.join(sb.root, path.lstrip("/"))


def _lstat(sb, path):
    try:
        return os.lstat(_host(sb, path))
    except FileNotFoundError:
        return None


def _read(sb, path, limit=None):
    """Contents of a regular file (not following a final symlink), or None if missing."""
    try:
        fd = os.open(_host(sb, path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
            if limit is not None and sum(map(len, chunks)) > limit:
                break
        return b"".join(chunks)
    finally:
        os.close(fd)


def _pid_alive(sb, pid):
    """Whether the root's programs see a process pid (the root's /proc: its pid
    namespace's, where the lock files' pids were written)."""
    return os.path.isdir(_host(sb, "/proc/%d" % pid))


def _group_ids(sb, path="/etc/group"):
    ids = {}
    data = _read(sb, path) or b""
    for line in data.decode("utf-8", "replace").splitlines():
        f = line.split(":")
        if len(f) == 4 and NUM_RE.match(f[2]):
            ids[f[0]] = int(f[2])
    return ids


def _parse(sb, name, rep, path=None):
    """The lines of /etc/NAME (or of path, its staged version) as field lists (None when
    the file is missing)."""
    path = path or "/etc/" + name
    st = _lstat(sb, path)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        rep.problem("%s is not a regular file with one link" % path)
        return []
    data = _read(sb, path)
    if data and not data.endswith(b"\n"):
        rep.problem("%s does not end with a newline" % path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        rep.problem("%s is not UTF-8" % path)
        text = data.decode("utf-8", "replace")
    out, seen = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split(":")
        where = "%s:%d" % (path, n)
        if len(f) != FIELDS[name]:
            rep.problem("%s: %d fields, not %d: %r" % (where, len(f), FIELDS[name], line))
            continue
        if not NAME_RE.match(f[0]) or len(f[0]) > 32:
            rep.problem("%s: invalid name %r" % (where, f[0]))
        if name in ("passwd", "group", "shadow", "gshadow"):
            if f[0] in seen:
                rep.problem("%s: duplicate name %r" % (where, f[0]))
            seen.add(f[0])
        nums = {"passwd": (2, 3), "group": (2,), "subuid": (1, 2), "subgid": (1, 2)}.get(name, ())
        for i in nums:
            if not NUM_RE.match(f[i]) or int(f[i]) > 4294967294:
                rep.problem("%s: bad number %r in field %d" % (where, f[i], i + 1))
        if name == "shadow":
            for i in range(2, 8):
                if f[i] and not NUM_RE.match(f[i]):
                    rep.problem("%s: bad day field %r" % (where, f[i]))
        if name in ("group", "gshadow"):
            lists = (3,) if name == "group" else (2, 3)
            for i in lists:
                for m in filter(None, f[i].split(",")):
                    if not NAME_RE.match(m):
                        rep.problem("%s: invalid member %r" % (where, m))
                if f[i].startswith(",") or f[i].endswith(",") or ",," in f[i]:
                    rep.problem("%s: empty member in %r" % (where, f[i]))
        out.append(f)
    return out


def parse_journal(data):
    """The file lines of a lib/txn journal as (base, identity) pairs, identity None for
    "BASE absent", else (dev, ino, size, mtime_ns, ctime_ns); None if it does not parse.
    A prepared journal (work begun, nothing committed) has none."""
    header = TXN_PREPARED if data.startswith(TXN_PREPARED) else TXN_HEADER
    if not data.startswith(header) or b"\0" in data or not data.endswith(b"\n"):
        return None
    out = []
    stamp = re.compile(r"(-?[0-9]+)\.([0-9]{9})\Z")
    for line in data[len(header):].decode("utf-8", "replace").split("\n")[:-1]:
        if line.startswith("@"):
            if not WORK_RE.match(line):
                return None
            continue
        if header == TXN_PREPARED:
            return None
        f = line.split(" ")
        if not f or f[0] not in GLOBAL_FILES + ("shells",):
            return None
        if f[1:] == ["absent"]:
            out.append((f[0], None))
            continue
        if len(f) != 6 or not all(NUM_RE.match(x) for x in f[1:4]):
            return None
        ts = [stamp.match(x) for x in f[4:6]]
        if not all(ts):
            return None
        out.append((f[0], (int(f[1]), int(f[2]), int(f[3])) +
                    tuple(int(t.group(1)) * 10**9 + int(t.group(2)) for t in ts)))
    return out


def journal_work(data):
    """The work lines of a lib/txn journal: (kind, tmp, path), tmp None for none."""
    out = []
    for line in data.decode("utf-8", "replace").split("\n"):
        m = WORK_RE.match(line)
        if m:
            out.append((m.group(1), None if m.group(2) == "-" else m.group(2), m.group(3)))
    return out


def _identity(st):
    if st is None:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _check_txn(sb, rep):
    """A lib/txn journal and its staged files (txn-pending, txn-stale).  Returns
    {name: path} of the global files as the next tool will see them once it has
    finished the transaction."""
    effective = {name: "/etc/" + name for name in GLOBAL_FILES}
    staged = {m.group(1) for m in map(TXN_STAGED_RE.match, os.listdir(_host(sb, "/etc")))
              if m}
    jpath = "/etc/" + TXN_JOURNAL
    jst = _lstat(sb, jpath)
    named = set()
    if jst is not None:
        if not stat.S_ISREG(jst.st_mode) or jst.st_nlink != 1 or jst.st_uid != 0 or \
                stat.S_IMODE(jst.st_mode) & 0o077:
            rep.problem("%s: not a regular root-owned 0600 file with one link" % jpath)
            return effective
        data = _read(sb, jpath, 1 << 16)
        lines = parse_journal(data)
        if lines is None:
            rep.problem("%s does not parse: the next tool would stop on it" % jpath)
            return effective
        if data.startswith(TXN_PREPARED):
            rep.leftover("txn-stale", "%s: prepared, never committed: the next tool "
                         "undoes its work" % jpath)
            for base in sorted(staged):
                rep.leftover("txn-stale", "/etc/.%s.hs-txn (never committed)" % base)
            return effective
        for kind, _, path in journal_work(data):
            if kind.startswith("tree-") and path.startswith(TREE + "/"):
                rep.tree_work[path[len(TREE) + 1:]] = kind
        pending = []
        for base, ident in lines:
            named.add(base)
            spath, target = "/etc/.%s.hs-txn" % base, "/etc/" + base
            sst, now = _lstat(sb, spath), _identity(_lstat(sb, target))
            if sst is None:
                if now == ident:
                    rep.problem("%s: %s is still the old file but %s is gone: the "
                                "committed change to it is lost" % (jpath, target, spath))
                continue
            if not stat.S_ISREG(sst.st_mode) or sst.st_nlink != 1:
                rep.problem("%s is not a regular file with one link" % spath)
            elif ident is not None and (sst.st_dev, sst.st_ino) == ident[:2]:
                # the old file, exchanged out of the way of the new one: installed,
                # the recovery makes it the backup
                continue
            elif now != ident:
                rep.problem("%s is no longer the file %s names: the next tool would drop "
                            "%s, losing part of a committed change" % (target, jpath, spath))
            else:
                pending.append(base)
                if base in effective:
                    effective[base] = spath
        rep.leftover("txn-pending", "%s: committed, %s to be installed by the next tool"
                     % (jpath, ", ".join(pending) or "nothing left"))
    for base in sorted(staged - named):
        rep.leftover("txn-stale", "/etc/.%s.hs-txn without a journal (never committed)"
                     % base)
    return effective


def _check_etc_leftovers(sb, rep):
    for name in sorted(os.listdir(_host(sb, "/etc"))):
        m = ETC_LOCK_RE.match(name)
        if m:
            if m.group(2) == "lock":
                raw = _read(sb, "/etc/" + name) or b""
                txt = raw.split(b"\0")[0].strip()
                pid = int(txt) if txt.isdigit() else 0
            else:
                pid = int(m.group(2))
            if pid and _pid_alive(sb, pid):
                rep.problem("/etc/%s is held by running process %d" % (name, pid))
            else:
                rep.leftover("stale-lock", "/etc/%s (pid %d gone)" % (name, pid))
        elif ETC_TEMP_RE.match(name) or TXN_TEMP_RE.match(name):
            rep.leftover("temp-file", "/etc/" + name)
        elif CONVERT_TMP_RE.match(name):
            rep.leftover("convert-pending", "/etc/" + name)


def _check_userdir(sb, name, uid, auth_gid, rep):
    """Owner, group, mode and files of TREE/name (DESIGN section 2).  uid None: no passwd
    line (then the directory's own owner is used).  Returns the shadow hash or None."""
    path = TREE + "/" + name
    st = _lstat(sb, path)
    if not stat.S_ISDIR(st.st_mode):
        rep.problem("%s is not a directory" % path)
        return None
    owner = st.st_uid if uid is None else uid
    if (st.st_uid, st.st_gid) == (0, 0) and stat.S_IMODE(st.st_mode) in (0o700, 0o2710) \
            and owner != 0:
        rep.leftover("taken-away", "%s is root:root %o (uid %d's)"
                     % (path, stat.S_IMODE(st.st_mode), owner))
        file_owner_ok = None        # the old or the new uid (usermod -u)
    else:
        if st.st_uid != owner:
            rep.problem("%s is owned by uid %d, not %d" % (path, st.st_uid, owner))
        if st.st_gid != auth_gid or stat.S_IMODE(st.st_mode) != 0o2710:
            rep.problem("%s: group %d mode %o, not hardened-shadow-auth 2710"
                        % (path, st.st_gid, stat.S_IMODE(st.st_mode)))
        file_owner_ok = (owner,)
    hash_ = None
    for entry in sorted(os.listdir(_host(sb, path))):
        fpath = path + "/" + entry
        if entry not in USERFILES:
            if USER_TEMP_RE.match(entry):
                rep.leftover("temp-file", fpath)
            else:
                rep.problem("%s: unexpected entry" % fpath)
            continue
    for f, (fowner, fmode) in USERFILES.items():
        fpath = path + "/" + f
        fst = _lstat(sb, fpath)
        if fst is None:
            rep.problem("%s is missing" % fpath)
            continue
        want_owner = (0,) if fowner == 0 else file_owner_ok
        if not stat.S_ISREG(fst.st_mode) or fst.st_nlink != 1:
            rep.problem("%s is not a regular file with one link" % fpath)
            continue
        if want_owner is None:
            want_owner = (fst.st_uid,) if fst.st_uid != 0 else (-1,)
        if fst.st_uid not in want_owner or fst.st_gid != auth_gid or \
                stat.S_IMODE(fst.st_mode) != fmode:
            rep.problem("%s: %d:%d %o, not %s:%d %o" % (fpath, fst.st_uid, fst.st_gid,
                        stat.S_IMODE(fst.st_mode), "/".join(map(str, want_owner)), auth_gid,
                        fmode))
        data = _read(sb, fpath, USERFILE_MAX)
        if len(data) > USERFILE_MAX:
            rep.problem("%s is larger than %d bytes" % (fpath, USERFILE_MAX))
            continue
        text = data.decode("utf-8", "replace")
        if f == "shadow":
            m = re.fullmatch(r"([^:\n]*):(0|[1-9][0-9]*)?:\n", text)
            if not m:
                rep.problem("%s does not parse: %r" % (fpath, text))
            else:
                hash_ = m.group(1)
        elif f == "shell":
            if not re.fullmatch(r"/[^\n]*\n?", text):
                rep.problem("%s does not parse: %r" % (fpath, text))
        else:
            if not re.fullmatch(r"(?:(?:-1|0|[1-9][0-9]*):){5}\n", text):
                rep.problem("%s does not parse: %r" % (fpath, text))
    return hash_


def check(sb, foreign=(), pending=()):
    """Check the root's account files and tree; returns a Report.  foreign: names of
    accounts made by tools that do not know the tree.  pending: names an interrupted
    command was working on (see missing-dir)."""
    rep = Report()
    effective = _check_txn(sb, rep)
    db = {name: _parse(sb, name, rep, effective[name]) for name in GLOBAL_FILES}
    if db["passwd"] is None or db["group"] is None:
        rep.problem("/etc/passwd or /etc/group is missing")
        return rep
    _check_etc_leftovers(sb, rep)
    users = {f[0]: f for f in db["passwd"]}
    groups = {f[0]: f for f in db["group"]}
    gids = {int(f[2]) for f in db["group"] if NUM_RE.match(f[2])}

    for f in db["passwd"]:
        if NUM_RE.match(f[3]) and int(f[3]) not in gids:
            rep.leftover("missing-group", "/etc/passwd: %s's primary group %s does not "
                         "exist" % (f[0], f[3]))
    for f in db["group"]:
        for m in filter(None, f[3].split(",")):
            if m not in users:
                rep.leftover("dangling-member", "/etc/group: %s lists %s" % (f[0], m))
    if db["gshadow"] is not None:
        gs = {f[0]: f for f in db["gshadow"]}
        if set(gs) != set(groups):
            rep.leftover("group-mismatch", "/etc/group and /etc/gshadow differ: only in "
                         "group %s, only in gshadow %s" % (sorted(set(groups) - set(gs)),
                                                           sorted(set(gs) - set(groups))))
        for g in set(gs) & set(groups):
            a = set(filter(None, groups[g][3].split(",")))
            b = set(filter(None, gs[g][3].split(",")))
            if a != b:
                rep.leftover("group-mismatch", "group %s: members %s in /etc/group, %s in "
                             "/etc/gshadow" % (g, sorted(a), sorted(b)))
            for m in filter(None, (gs[g][2] + "," + gs[g][3]).split(",")):
                if m not in users:
                    rep.leftover("dangling-member", "/etc/gshadow: %s lists %s" % (g, m))
    for sub in ("subuid", "subgid"):
        for f in db[sub] or ():
            if f[0] not in users and not NUM_RE.match(f[0]):
                rep.leftover("dangling-subid", "/etc/%s: %s" % (sub, f[0]))

    tree_st = _lstat(sb, TREE)
    if tree_st is None:
        if db["shadow"] is not None:
            for f in db["shadow"]:
                if f[0] not in users:
                    rep.problem("/etc/shadow: %s has no passwd line" % f[0])
        return rep

    # ---- the tree (DESIGN section 2)
    tree_gid = _group_ids(sb, effective["group"]).get("hardened-shadow")
    auth_gid = _group_ids(sb, effective["group"]).get("hardened-shadow-auth")
    if tree_gid is None or auth_gid is None:
        rep.problem("the groups hardened-shadow and hardened-shadow-auth must exist")
        return rep
    entries = sorted(os.listdir(_host(sb, TREE))) if stat.S_ISDIR(tree_st.st_mode) else []
    if stat.S_ISDIR(tree_st.st_mode) and (tree_st.st_uid, tree_st.st_gid) == (0, 0) and \
            stat.S_IMODE(tree_st.st_mode) in (0o700, 0o710) and MARKERS[1] in entries:
        rep.leftover("convert-pending", "%s taken away by pwunconv" % TREE)
    elif not stat.S_ISDIR(tree_st.st_mode) or tree_st.st_uid != 0 or \
            tree_st.st_gid != tree_gid or stat.S_IMODE(tree_st.st_mode) != 0o710:
        rep.problem("%s: not a root:hardened-shadow 0710 directory" % TREE)
        return rep
    dirs = set()
    pending_renames = set()
    for e in entries:
        if e.startswith((".", ":")):
            if RESERVED_RE.match(e) or e == RESERVED_MARK:
                rep.leftover("reserved-dir", TREE + "/" + e)
                if e != RESERVED_MARK and RESERVED_MARK not in entries:
                    rep.problem("%s/%s: a reserved directory without the tree's mark %s; "
                                "no tool would sweep it" % (TREE, e, RESERVED_MARK))
            elif RENAME_RE.match(e):
                rep.leftover("rename-pending", TREE + "/" + e)
                pending_renames.add(RENAME_RE.match(e).group(1))
            elif e in MARKERS:
                rep.leftover("convert-pending", TREE + "/" + e)
            elif MARKER_TEMP_RE.match(e):
                rep.leftover("temp-file", TREE + "/" + e)
            else:
                rep.problem("%s/%s: unknown reserved entry" % (TREE, e))
            continue
        if not NAME_RE.match(e):
            rep.problem("%s/%s: not a valid user name" % (TREE, e))
            continue
        dirs.add(e)
        pw = users.get(e)
        if pw is None and rep.tree_work.get(e) == "tree-del":
            # taken away or not yet: it goes, whatever it holds
            rep.leftover("txn-pending", "%s/%s: to be removed by the next tool (its "
                         "passwd line is gone)" % (TREE, e))
            continue
        uid = int(pw[2]) if pw and NUM_RE.match(pw[2]) else None
        hash_ = _check_userdir(sb, e, uid, auth_gid, rep)
        if pw is None:
            if hash_ == "!":
                rep.leftover("orphan-dir", "%s/%s has no passwd line (hash '!')" % (TREE, e))
            else:
                rep.problem("%s/%s has no passwd line and a usable hash %r"
                            % (TREE, e, hash_))
        elif pw[1] != "x":
            rep.problem("/etc/passwd: %s has a directory but pw_passwd %r, not 'x'"
                        % (e, pw[1]))

    shadow_names = {f[0] for f in db["shadow"] or ()}
    converting = any(e in MARKERS for e in entries)
    for name, f in users.items():
        if name in dirs:
            if name in shadow_names and not converting:
                rep.problem("%s is both in the tree and in /etc/shadow" % name)
            continue
        if name in foreign:
            continue
        if f[6] == PROXY and name not in pending and rep.tree_work.get(name) != "tree-new":
            rep.problem("%s's shell is the proxy but %s/%s is missing" % (name, TREE, name))
        elif f[1] == "x" or f[6] == PROXY:
            if name in shadow_names and f[6] != PROXY:
                rep.leftover("shadow-file", "%s is in /etc/shadow, not in the tree" % name)
            else:
                rep.leftover("missing-dir", "%s has no directory in %s%s" % (
                    name, TREE, " (rename pending)" if name in pending_renames else ""))
    for name in shadow_names - set(users):
        rep.problem("/etc/shadow: %s has no passwd line" % name)
    return rep


def assert_consistent(sb, allow=(), foreign=(), pending=(), context="", strict_subids=False):
    """Fail with the list of everything out of place that allow does not cover."""
    rep = check(sb, foreign=foreign, pending=pending)
    bad = rep.unexpected(set(allow) | (set() if strict_subids else TOLERATED))
    assert not bad, "%sinconsistent account state:\n  %s" % (
        context + ": " if context else "", "\n  ".join(bad))
    return rep
