"""A desktop booted from the Ubuntu 22.04 userland runs the VM's Thunderbird line, 115 (build/vm_thunderbird.py),
where the VM had it: `/usr/bin/thunderbird` says 115.12.0, and a task's own profile, bound to /usr/lib/thunderbird,
opens in a window of the class the tasks close it by.

Run when the userland and Thunderbird 115 are built (`OSWORLD_DESKTOP_SYSTEM=ubuntu-22.04 osworld env setup`); a
machine without them skips, saying so."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from desktop_env.providers.local.build.vm_thunderbird import installed_thunderbird
from tests.desktop.test_ubuntu_desktop import booted_tree_desktop, output_of

pytestmark = [pytest.mark.desktop, pytest.mark.skipif(
    installed_thunderbird() is None,
    reason="Thunderbird 115 is not built (OSWORLD_DESKTOP_SYSTEM=ubuntu-22.04 osworld env setup)")]

# The profile every Thunderbird task downloads (its compatibility.ini: LastVersion=115.10.1, the VM's).
PROFILE = Path("/work/shared/osworld_cache/3f49d2cc-f400-4e7d-90cc-9b18e401cc31/"
               "951cf1e8-ec72-5e19-9d5a-31be0fd4b3df_thunderbird-profile.tar.gz")
PROFILE_FOLDER = "/home/user/.thunderbird/t5q2a5hp.default-release"
WINDOW_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def desktop():
    with booted_tree_desktop() as controller:
        yield controller


def window_classes(wmctrl_lx: str) -> list[str]:
    return [line.split()[2] for line in wmctrl_lx.splitlines() if len(line.split()) > 2]


def test_usr_bin_thunderbird_is_115_12_0_through_ubuntus_launcher(desktop):
    assert output_of(desktop, "/usr/bin/thunderbird --version").strip() == "Thunderbird 115.12.0"
    assert output_of(desktop, "readlink /usr/bin/thunderbird").strip() == "../lib/thunderbird/thunderbird.sh"


@pytest.mark.skipif(not PROFILE.is_file(), reason=f"no cached task profile at {PROFILE}")
def test_a_tasks_profile_opens_in_a_mail_thunderbird_window(desktop):
    desktop.upload_file("/home/user/thunderbird-profile.tar.gz", PROFILE.read_bytes())
    output_of(desktop, "tar -xzf /home/user/thunderbird-profile.tar.gz -C /home/user/")
    before = output_of(desktop, "ls /home/user/.thunderbird").split()
    desktop.launch(["/usr/bin/thunderbird"])
    deadline = time.monotonic() + WINDOW_TIMEOUT_S
    # The class exactly, as the tasks' close_window (strict, by_class) matches it.
    while "Mail.thunderbird" not in window_classes(windows := output_of(desktop, "wmctrl -lx")):
        assert time.monotonic() < deadline, f"no Mail.thunderbird window in {WINDOW_TIMEOUT_S} s:\n{windows}"
        time.sleep(1)
    # The task's profile, picked by its [Install<hash of /usr/lib/thunderbird>] section, is the one in use: this
    # Thunderbird rewrote its compatibility.ini (the VM's said 115.10.1) and its lock (the tarball's names the
    # VM's process, 127.0.1.1:+2549), and made no new profile beside it.
    compatibility = output_of(desktop, f"cat {PROFILE_FOLDER}/compatibility.ini")
    assert "LastVersion=115.12.0_" in compatibility and "LastAppDir=/usr/lib/thunderbird\n" in compatibility
    assert output_of(desktop, f"readlink {PROFILE_FOLDER}/lock").strip() != "127.0.1.1:+2549"
    assert output_of(desktop, "ls /home/user/.thunderbird").split() == before
