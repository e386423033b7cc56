"""A desktop booted from the Ubuntu 22.04 userland runs OSWorld's VM's own software: the versions each app
reports inside, the release the desktop says it is, and what of the host it still cannot see.

Run when the userland is built (`osworld env setup --ubuntu-userland`, which `make install` tries as root); a
machine without it skips, saying so."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.local.build.prepare import SYSTEM_VARIABLE
from desktop_env.providers.local.build.ubuntu_userland import USERLAND_NAME, installed_userland_system

pytestmark = pytest.mark.desktop

@contextlib.contextmanager
def booted_tree_desktop() -> Iterator[PythonController]:
    """A desktop booted from the userland, or the test skipped when it is not built."""
    if installed_userland_system() is None:
        pytest.skip("the Ubuntu 22.04 userland is not built (osworld env setup --ubuntu-userland, as root)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SYSTEM_VARIABLE, USERLAND_NAME)
        provider = LocalProvider(screen_size=(1280, 720))
        provider.start_emulator()
    try:
        yield PythonController(provider.get_ip_address())
    finally:
        provider.stop_emulator()


@pytest.fixture(scope="module")
def ubuntu_desktop():
    with booted_tree_desktop() as controller:
        yield controller


def output_of(controller: PythonController, command: str) -> str:
    result = controller.run_command(command, shell=True)
    assert result["returncode"] == 0, result
    return result["output"]


def test_the_desktop_runs_the_vms_releases_of_its_apps(ubuntu_desktop):
    assert output_of(ubuntu_desktop, "gnome-shell --version").startswith("GNOME Shell 42.")
    assert output_of(ubuntu_desktop, "soffice --version").startswith("LibreOffice 7.3.")
    assert output_of(ubuntu_desktop, "gimp --version").strip().endswith("version 2.10.30")
    assert output_of(ubuntu_desktop, "vlc --version 2>/dev/null | head -n 1").startswith("VLC version 3.0.16 ")


def test_the_desktop_is_ubuntu_22_04(ubuntu_desktop):
    release = dict(line.split("=", 1) for line in output_of(ubuntu_desktop, "cat /etc/os-release").splitlines()
                   if "=" in line)
    assert (release["ID"], release["VERSION_ID"].strip('"')) == ("ubuntu", "22.04")


def test_the_env_server_runs_on_the_trees_python(ubuntu_desktop):
    # The shell that runs this command is the env server's child: its parent's program is the server's Python.
    assert output_of(ubuntu_desktop, "readlink -f /proc/$PPID/exe").strip() == "/usr/bin/python3.10"


def test_the_shell_runs_ubuntus_own_extensions_and_of_ours_only_the_wired_connection(ubuntu_desktop):
    enabled = set(output_of(ubuntu_desktop, "gnome-extensions list --enabled").split())
    assert enabled >= {"ubuntu-dock@ubuntu.com", "ubuntu-appindicators@ubuntu.com", "ding@rastersoft.com"}
    # GNOME 42's menu is the shell's own here; only NetworkManager, which a sandbox cannot run, is stood in for.
    assert {uuid for uuid in enabled if uuid.endswith("@osworld")} == {"vm-wired-connection@osworld"}


def test_the_system_services_the_vms_menu_shows_run_on_the_desktops_system_bus(ubuntu_desktop):
    running = output_of(ubuntu_desktop, "pgrep -x upowerd; pgrep -x power-profiles-; pgrep -x gsd-power").split()
    assert len(running) == 3, running
    profile = output_of(ubuntu_desktop, "gdbus call --system --dest net.hadess.PowerProfiles --object-path "
                                        "/net/hadess/PowerProfiles --method org.freedesktop.DBus.Properties.Get "
                                        "net.hadess.PowerProfiles ActiveProfile")
    assert "balanced" in profile


def test_nothing_of_the_hosts_system_is_inside(ubuntu_desktop):
    # The host is Debian 12 with Python 3.11; inside, only the tree's Python 3.10 exists.
    assert output_of(ubuntu_desktop, "ls /usr/bin/python3.* | grep -v -- -config").split() == ["/usr/bin/python3.10"]
