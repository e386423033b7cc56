"""Where the local desktop starts, checked inside a real one: what OSWorld's tasks find on the VM."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.desktop


# The app menu launches an entry by its desktop id, as GIO does here.
LAUNCH_BY_ID = ("/usr/bin/python3 -c \"from gi.repository import Gio; "
                "Gio.DesktopAppInfo.new('chromium.desktop').launch([], None)\"")


@pytest.mark.parametrize("opener", ["xdg-open http://127.0.0.1:9/", LAUNCH_BY_ID])
def test_chromium_opened_from_a_link_or_the_menu_runs_as_the_google_chrome_shim_does(desktop, opener):
    desktop.shell("pkill chrome; sleep 1")
    desktop.shell(f"({opener} >/dev/null 2>&1 &)")
    try:
        command = desktop.wait_for(lambda: desktop.shell("pgrep -a -x chromium | head -1")["output"].strip(),
                                   timeout=60, what="Chromium to start")
        assert "--force-renderer-accessibility" in command and ".config/google-chrome" in command
        # The shim is Chromium's parent, so `pkill chrome` (OSWorld's tasks) closes it.
        assert desktop.shell("pgrep -x google-chrome")["output"].strip()
    finally:
        desktop.shell("pkill chrome; sleep 1")


def test_the_settings_upstream_tasks_read_have_their_schemas(desktop):
    output = desktop.shell("gsettings get org.gnome.settings-daemon.plugins.power idle-dim; "
                           "gsettings get org.gnome.shell favorite-apps; "
                           "gsettings get org.gnome.desktop.screensaver lock-enabled")["output"]
    idle_dim, favourites, lock = output.splitlines()
    assert (idle_dim, lock) == ("true", "false")
    assert favourites.startswith("[")
