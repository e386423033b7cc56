"""The parts of sudo inside a desktop that need no desktop: its id maps, its option parsing, root's environment."""
import os
import pwd
import subprocess
from pathlib import Path

import pytest

from desktop_env.providers.local.boot.host_ids import IDS_PER_DESKTOP
from desktop_env.providers.local.boot.userns import id_maps
from desktop_env.providers.local.build.etc_view import ensure_etc_view
from desktop_env.server.sudo_broker import SECURE_PATH, sudo_environment
from desktop_env.server.sudo_client import Usage, parse

REPO = Path(__file__).resolve().parents[2]


def test_root_user_accounts_and_nobody_map_onto_the_desktops_own_block():
    maps = id_maps(2_000_000, IDS_PER_DESKTOP, 1_999_999)
    assert maps.uid_map.splitlines() == ["0 2000000 1", "1000 2000001 62", "65534 2000063 1"]
    assert maps.gid_map.splitlines() == ["0 2000000 1", "1000 1999999 1", "1001 2000002 61", "65534 2000063 1"]
    host_uids = [int(line.split()[1]) + k for line in maps.uid_map.splitlines() for k in range(int(line.split()[2]))]
    assert len(set(host_uids)) == IDS_PER_DESKTOP and min(host_uids) == 2_000_000


@pytest.mark.parametrize("args, flags, values, command", [
    (["-S", "whoami"], {"-S"}, {}, ["whoami"]),
    (["-Su", "charles", "id"], {"-S"}, {"user": "charles"}, ["id"]),
    (["-S", "-u", "nobody", "--", "-x"], {"-S"}, {"user": "nobody"}, ["-x"]),
    (["--stdin", "--user=root", "apt-get", "-y", "install", "sl"], {"-S"}, {"user": "root"},
     ["apt-get", "-y", "install", "sl"]),
    (["-S", "su", "-", "charles"], {"-S"}, {}, ["su", "-", "charles"]),
    (["-E", "-S", "-p", "", "pip", "install", "x"], {"-E", "-S"}, {"prompt": ""}, ["pip", "install", "x"]),
])
def test_sudo_options_are_read_as_sudo_reads_them(args, flags, values, command):
    assert parse(args) == (flags, values, command)


def test_an_unknown_long_option_is_a_usage_error():
    with pytest.raises(Usage, match="unrecognized option '--frobnicate'"):
        parse(["--frobnicate", "true"])


def test_root_gets_sudos_reset_environment_not_the_callers():
    caller = pwd.struct_passwd(("user", "x", 1000, 1000, "", "/home/user", "/bin/bash"))
    root = pwd.struct_passwd(("root", "x", 0, 0, "", "/root", "/bin/bash"))
    env = sudo_environment({"DISPLAY": ":0", "OPENAI_API_KEY": "sk-x", "PATH": "/evil", "LC_ALL": "C"},
                           root, caller, ["whoami"], preserve=False)
    assert env["DISPLAY"] == ":0" and env["LC_ALL"] == "C" and "OPENAI_API_KEY" not in env
    assert env["PATH"] == SECURE_PATH and env["HOME"] == "/root" and env["SUDO_USER"] == "user"


DOCTOR_AS_NOBODY = ("from desktop_env.providers.local.doctor import check_sudo; c = check_sudo(); "
                    "print(c.ok, c.required); print(c.detail); print(c.fix)")


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes another user to run the doctor as a normal user")
def test_doctor_says_why_a_normal_users_harness_has_no_sudo():
    if not all(os.stat(p).st_mode & 0o005 == 0o005 for p in [*REPO.parents, REPO] if p != Path("/")):
        pytest.skip(f"the checkout at {REPO} is not readable by other users")

    def become_nobody():
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)

    done = subprocess.run(["/usr/bin/python3", "-c", DOCTOR_AS_NOBODY], capture_output=True, text=True, timeout=60,
                          cwd="/", preexec_fn=become_nobody, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
                                                                  "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    ok, detail, fix = done.stdout.splitlines()
    assert ok == "False False"  # reported, not required
    assert detail.startswith("unavailable inside the desktop: the harness does not run as root")
    assert fix == "run the harness as root"


def test_the_etc_a_root_inside_starts_from_holds_no_host_account_or_secret():
    view = ensure_etc_view()
    accounts = {line.split(":")[0] for line in (view / "passwd").read_text().splitlines()}
    assert accounts == {"root", "user", "nobody"}
    assert "$" not in (view / "shadow").read_text()  # no password hash at all
    for secret in ("environment", "profile.d", "ssh", "sudoers", "apt/auth.conf", "apt/auth.conf.d", "ssl/private",
                   "subuid", "machine-id-", "gshadow-"):
        assert not (view / secret).exists(), secret
    assert (view / "pam.d" / "su").exists() and (view / "login.defs").exists()
    assert (view / "machine-id").read_text() == ""  # each desktop's own is bound there
