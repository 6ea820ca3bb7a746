"""The real consumer: Debian's ansible-core, run inside a converted root
(`ansible-playbook -c local`), creates a group and users through our useradd, usermod and
groupadd, setting the shell, the groups, the password hash, the expiry, and locking and
unlocking the password.  Ansible's `user` module reads pw_shell (pwd), the hash and the
expiry (spwd, through our NSS module) and the groups (grp), and runs a tool only for what
differs, so a second run reports changed=0 only if what our tools wrote reads back as
asked.  Then the accounts log in, or are refused, as the playbook says (pamtester on a
pty, through our PAM module).

Ansible comes from tools/unpack-debs (apt-get download + dpkg-deb -x below the build
directory; nothing is installed on the host).  Skipped, with the reason, when the
packages cannot be fetched."""

import re

import pytest

import sandbox

PAMTESTER = "/usr/bin/pamtester"
SU = "/usr/local/bin/hs-test-debian-su"
PW = {"alice": "alice-Ansible-1", "bob": "bob-Ansible-2", "dave": "dave-Ansible-3"}
PLAY = "/root/site.yml"
# ansible-core and what it needs beyond the host's Python modules
DEBS = ["ansible-core", "python3-jinja2", "python3-markupsafe", "python3-resolvelib"]

PLAYBOOK = """\
- hosts: localhost
  gather_facts: false
  tasks:
    - name: the team's group
      group: {name: devs, gid: 5000}
    - name: alice, unlocked unless told
      user:
        name: alice
        shell: /bin/bash
        groups: [devs]
        password: "%(alice)s"
        password_lock: "{{ lock_alice | default(false) | bool }}"
        expires: 4102444800
    - name: bob, locked unless told
      user:
        name: bob
        shell: /bin/dash
        groups: [devs]
        password: "%(bob)s"
        password_lock: "{{ lock_bob | default(true) | bool }}"
    - name: dave, expired in 1971
      user:
        name: dave
        shell: /bin/bash
        password: "%(dave)s"
        expires: 31536000
"""


@pytest.fixture(scope="module")
def ansible_root(base):
    root, why = sandbox.unpack_debs(base, "ansible", DEBS)
    if root is None:
        pytest.skip("Debian's ansible-core cannot be fetched: %s" % why)
    return root


@pytest.fixture
def site(sb, ansible_root):
    """A converted root (login.defs as shipped), PAM on our module, the playbook."""
    with open("/usr/bin/su", "rb") as f:
        sb.write(SU, f.read(), mode=0o4755)
    sb.use_hardened_tree()
    sb.use_pam_module()
    hashes = {name: sandbox._crypt(pw) for name, pw in PW.items()}
    sb.write(PLAY, PLAYBOOK % hashes)
    sb.ansible_root = ansible_root
    return sb


def play(sb, *extra):
    """Run the playbook; return the recap's counters for localhost."""
    root = sb.ansible_root
    env = {
        "LC_ALL": "C.UTF-8", "HOME": "/root",
        "PYTHONPATH": root + "/usr/lib/python3/dist-packages",
        "ANSIBLE_LOCAL_TEMP": "/tmp/ansible-local",
        "ANSIBLE_REMOTE_TEMP": "/tmp/ansible-remote",
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
        "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
    }
    argv = ["/usr/bin/python3", root + "/usr/bin/ansible-playbook", "-c", "local",
            "-i", "localhost,", PLAY]
    for e in extra:
        argv += ["-e", e]
    res = sb.run(argv, env=env, check=False, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    m = re.search(r"^localhost\s*:\s*(.*)$", res.stdout, re.M)
    assert m, res.stdout
    return dict(kv.split("=") for kv in m.group(1).split()), res.stdout


def authenticate(sb, user, password):
    status, out = sb.pty_run([PAMTESTER, "login", user, "authenticate", "acct_mgmt"],
                             [("Password: ", password + "\n")])
    return status, out


def test_playbook_twice_then_logins(site):
    recap, out = play(site)
    assert recap["failed"] == "0" and int(recap["changed"]) > 0, out
    recap, out = play(site)
    assert recap["changed"] == "0", out

    # what our tools wrote, as Ansible asked
    for name, shell in (("alice", "/bin/bash"), ("bob", "/bin/dash"), ("dave", "/bin/bash")):
        assert site.getpwnam(name).shell == shell
        assert site.read("/etc/hardened-shadow/%s/shell" % name) == shell + "\n"
    groups = site.run(["id", "-nG", "alice"]).stdout.split()
    assert "devs" in groups
    assert site.getgrnam("devs")[1] == 5000

    status, out = authenticate(site, "alice", PW["alice"])
    assert status == 0, out
    status, out = authenticate(site, "bob", PW["bob"])            # locked
    assert status != 0 and "Authentication failure" in out, out
    status, out = authenticate(site, "dave", PW["dave"])          # expired
    assert status != 0 and "successfully authenticated" in out, out
    res = site.run([SU, "-", "alice", "-c", "echo $0"], check=False)
    assert res.returncode == 0 and res.stdout.strip().endswith("bash"), res.stderr

    # lock alice, unlock bob: one change each, then none
    recap, out = play(site, "lock_alice=true", "lock_bob=false")
    assert recap["changed"] == "2", out
    recap, out = play(site, "lock_alice=true", "lock_bob=false")
    assert recap["changed"] == "0", out
    status, out = authenticate(site, "alice", PW["alice"])
    assert status != 0 and "Authentication failure" in out, out
    status, out = authenticate(site, "bob", PW["bob"])
    assert status == 0, out
