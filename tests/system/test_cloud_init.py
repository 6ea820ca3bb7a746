"""cloud-init's user creation (`cloud-init single --name users_groups`, Debian's package,
a local NoCloud seed, offline) inside a converted root: it creates a group and users
through our groupadd, useradd, chpasswd and passwd -l.  Run twice (cloud-init skips
existing users and groups, and sets the hash and the lock again); /etc/passwd is the
same after the second run, the shells read back as given, the groups hold the users, and the
accounts log in or are refused as the user-data says (pamtester on a pty, our PAM
module).

`single` runs a module on the datasource and cloud-config that `cloud-init init` found
and cached, so `init` runs first (the NoCloud seed directory; no network is used, the
network configuration is disabled, and cloud-init runs in a UTS namespace of its own with
preserve_hostname, so it cannot rename the host).

cloud-init comes from tools/unpack-debs (apt-get download + dpkg-deb -x below the build
directory; nothing is installed on the host).  Skipped, with the reason, when the
packages cannot be fetched."""

import os

import pytest

import sandbox

PAMTESTER = "/usr/bin/pamtester"
DEBS = ["cloud-init", "python3-configobj", "python3-jsonpatch", "python3-jsonschema",
        "python3-netifaces", "python3-requests", "python3-serial", "python3-json-pointer",
        "python3-pyrsistent", "python3-urllib3", "python3-idna", "python3-certifi",
        "python3-chardet", "python3-charset-normalizer", "python3-jinja2",
        "python3-markupsafe"]
PW = {"alice": "alice-Cloud-1", "bob": "bob-Cloud-2"}
SEED = "/var/lib/cloud/seed/nocloud"

CLOUD_CFG = """\
datasource_list: [NoCloud]
system_info:
  distro: debian
  paths:
    cloud_dir: /var/lib/cloud/
    run_dir: /run/cloud-init/
cloud_init_modules: []
cloud_config_modules: [users-groups]
cloud_final_modules: []
network: {config: disabled}
preserve_hostname: true
"""

USER_DATA = """\
#cloud-config
groups:
  - devs
users:
  - name: alice
    shell: /bin/bash
    groups: devs
    lock_passwd: false
    hashed_passwd: "%(alice)s"
  - name: bob
    shell: /bin/dash
    groups: devs
    lock_passwd: true
    hashed_passwd: "%(bob)s"
"""


@pytest.fixture(scope="module")
def cloud_root(base):
    root, why = sandbox.unpack_debs(base, "cloud-init", DEBS)
    if root is None:
        pytest.skip("Debian's cloud-init cannot be fetched: %s" % why)
    return root


@pytest.fixture
def cloud(sb, cloud_root):
    sb.use_hardened_tree()
    sb.use_pam_module()
    sb.run(["mkdir", "-p", "/etc/cloud", SEED, "/var/log"])
    sb.write("/etc/cloud/cloud.cfg", CLOUD_CFG)
    sb.write(SEED + "/meta-data", "instance-id: iid-hs-test\n")
    sb.write(SEED + "/user-data",
             USER_DATA % {name: sandbox._crypt(pw) for name, pw in PW.items()})
    sb.cloud_root = cloud_root
    return sb


def cloud_init(sb, *args):
    root = sb.cloud_root
    env = {"LC_ALL": "C.UTF-8", "PYTHONPATH": root + "/usr/lib/python3/dist-packages"}
    # its own UTS namespace: cloud-init sets the hostname (preserve_hostname
    # should stop it; this makes sure the host's is never touched)
    res = sb.run(["/usr/bin/unshare", "--uts", "--", "/usr/bin/python3",
                  root + "/usr/bin/cloud-init"] + list(args), env=env,
                 check=False, timeout=300)
    log = sb.read("/var/log/cloud-init.log") if sb.exists("/var/log/cloud-init.log") else ""
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:] + log[-3000:]
    assert "Traceback" not in res.stderr + log, res.stderr + log[-4000:]
    return res


def authenticate(sb, user, password):
    return sb.pty_run([PAMTESTER, "login", user, "authenticate", "acct_mgmt"],
                      [("Password: ", password + "\n")])


def single(sb):
    return cloud_init(sb, "single", "--name", "users_groups", "--frequency", "always")


def test_users_groups_twice_then_logins(cloud):
    host_name = os.uname().nodename
    # `single` trusts the datasource `init` found and cached (the NoCloud seed), and
    # the cloud-config `init` extracted from its user-data
    cloud_init(cloud, "init")
    single(cloud)
    passwd = cloud.read_bytes("/etc/passwd")
    single(cloud)
    assert cloud.read_bytes("/etc/passwd") == passwd
    for name, shell in (("alice", "/bin/bash"), ("bob", "/bin/dash")):
        assert cloud.getpwnam(name).shell == shell
        assert cloud.read("/etc/hardened-shadow/%s/shell" % name) == shell + "\n"
    assert sorted(cloud.getgrnam("devs")[2]) == ["alice", "bob"]
    status, out = authenticate(cloud, "alice", PW["alice"])
    assert status == 0, out
    status, out = authenticate(cloud, "bob", PW["bob"])           # lock_passwd
    assert status != 0 and "Authentication failure" in out, out
    assert os.uname().nodename == host_name
