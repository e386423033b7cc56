"""`sudo` inside a real desktop, as OSWorld's task files use it, and what it must leave alone.

The desktop's root is its own (a user namespace of the desktop's host ids); what it changes
lives in overlays that a reset throws away, and the host's /etc and /usr never change.
Needs a root harness (only root can map the two ids); `test_hostile_agent` covers the
harness run by a normal user, whose desktop has no sudo.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.local.boot.userns import root_inside_unavailable
from desktop_env.providers.local.limits import DesktopLimits

pytestmark = [pytest.mark.desktop,
              pytest.mark.skipif(bool(root_inside_unavailable()), reason=f"no sudo here: {root_inside_unavailable()}")]

SUDO = "echo password | sudo -S"
# What root inside writes in the system; none of it may reach the host.
HOST_FILES = ("/etc/hosts", "/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow")
HOST_FOLDERS = ("/etc", "/usr/bin", "/usr/sbin", "/usr/local", "/usr/share/doc/sl", "/home", "/var/lib/dpkg")


def host_state() -> dict:
    """Every file's bytes for HOST_FILES, and every entry's metadata under HOST_FOLDERS."""
    state: dict[str, object] = {}
    for path in HOST_FILES:
        state[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest() if os.path.exists(path) else None
    for top in HOST_FOLDERS:
        for folder, dirs, files in os.walk(top):
            for name in dirs + files:
                path = os.path.join(folder, name)
                info = os.lstat(path)
                state[path] = (info.st_mode, info.st_uid, info.st_gid, info.st_size, info.st_mtime_ns)
    return state


@pytest.fixture(scope="module")
def provider():
    provider = LocalProvider(screen_size=(800, 600), limits=DesktopLimits(tmpfs_bytes=256 << 20))
    provider.start_emulator()
    yield provider
    provider.stop_emulator()


def shell(provider: LocalProvider, script: str) -> dict:
    return PythonController(provider.get_ip_address()).run_command(script, shell=True)


def test_sudo_runs_as_the_desktops_root_and_its_changes_vanish_at_reset(provider):
    before = host_state()
    assert shell(provider, f"{SUDO} whoami")["output"] == "root\n"

    made = shell(provider, f"{SUDO} mkdir ~/Desktop/x && stat -c '%U %a' ~/Desktop/x && "
                           "mv ~/Desktop/x ~/Desktop/renamed && echo renamed")
    assert made["output"].split("\n")[:2] == ["root 755", "renamed"], made

    changed = shell(provider, f"{SUDO} sh -c 'echo 10.9.8.7 osworld-probe >> /etc/hosts' && "
                              f"{SUDO} useradd -m -s /bin/bash charles && "
                              f"{SUDO} sh -c 'echo x > /usr/bin/osworld-probe; echo x > /usr/local/bin/probe' && "
                              f"grep osworld-probe /etc/hosts; {SUDO} grep -c '^charles:' /etc/passwd /etc/shadow; "
                              f"{SUDO} su - charles -c 'id -un; pwd'")
    assert changed["returncode"] == 0, changed
    assert changed["output"].split("\n")[:5] == ["10.9.8.7 osworld-probe", "/etc/passwd:1", "/etc/shadow:1",
                                                 "charles", "/home/charles"], changed

    provider.revert_to_snapshot()
    after_reset = shell(provider, "grep -c osworld-probe /etc/hosts; grep -c '^charles:' /etc/passwd; "
                                  "ls ~/Desktop/renamed /usr/bin/osworld-probe /usr/local/bin/probe /home/charles 2>&1 "
                                  "| grep -c 'No such file'")
    assert after_reset["output"].split() == ["0", "0", "4"], after_reset
    assert host_state() == before


def test_a_wrong_password_or_no_password_fails_as_sudo_does(provider):
    wrong = shell(provider, "printf 'wrong\\nwrong2\\nwrong3\\n' | sudo -S whoami; echo rc=$?")
    assert wrong["output"] == "rc=1\n"
    assert wrong["error"].count("Sorry, try again.") == 2 and "sudo: 3 incorrect password attempts" in wrong["error"]
    second_try = shell(provider, "printf 'wrong\\npassword\\n' | sudo -S whoami")
    assert second_try["output"] == "root\n" and "Sorry, try again." in second_try["error"]
    no_terminal = shell(provider, "sudo whoami < /dev/null; echo rc=$?")
    assert no_terminal["output"] == "rc=1\n"
    assert no_terminal["error"].startswith("sudo: a terminal is required to read the password; either use the -S "
                                           "option to read from standard input or configure an askpass helper")
    # in a terminal (GNOME Terminal's, here script's pty) sudo asks there, echo off
    typed = shell(provider, "printf 'password\\n' | script -qec 'sudo whoami' /dev/null")
    assert typed["output"].splitlines()[-2:] == ["[sudo] password for user: ", "root"], typed
    refused = shell(provider, "sudo -n true; echo rc=$?")
    assert refused["output"] == "rc=1\n" and "a password is required" in refused["error"]


def test_root_commands_get_the_callers_stdin_cwd_and_exit_status(provider):
    piped = shell(provider, "cd /tmp && printf 'password\\nline two\\n' | sudo -S sh -c 'cat; pwd; exit 7'; "
                            "echo rc=$?")
    assert piped["output"] == "line two\n/tmp\nrc=7\n"
    as_other = shell(provider, f"{SUDO} -u nobody id -un; {SUDO} /usr/bin/env | grep -c ^SUDO_USER=user; "
                               f"{SUDO} OSWORLD_VAR=set printenv OSWORLD_VAR")
    assert as_other["output"] == "nobody\n1\nset\n"
    missing = shell(provider, f"{SUDO} osworld-no-such-command; echo rc=$?")
    assert missing["output"] == "rc=1\n" and "osworld-no-such-command: command not found" in missing["error"]


def test_apt_get_fails_as_on_an_offline_vm(provider):
    result = shell(provider, f"{SUDO} apt-get install -y sl; echo rc=$?")
    assert result["output"].strip().endswith("rc=100"), result
    assert "Temporary failure resolving" in result["output"] + result["error"]
