"""The parts of sudo inside a desktop that need no desktop: its id maps, its option parsing, root's environment."""
import pwd

import pytest

from desktop_env.providers.local.host_ids import IDS_PER_DESKTOP
from desktop_env.providers.local.userns import id_maps
from desktop_env.server.sudo_broker import SECURE_PATH, sudo_environment
from desktop_env.server.sudo_client import Usage, parse


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
