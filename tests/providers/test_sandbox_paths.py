"""The env server's copy of the in-sandbox paths agrees with the harness's table.

The server runs inside the desktop from a copy of its own package and cannot import the
harness's code, so it keeps desktop_env/server/sandbox_paths.py; a path changed on one side
only would mount a folder where the server no longer looks.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

from desktop_env.providers.local import sandbox_layout as harness
from desktop_env.server import code_command, sandbox_paths, sudo_client


def test_the_servers_table_agrees_with_the_harnesss():
    assert sandbox_paths.USER_UID == harness.SANDBOX_UID
    assert sandbox_paths.HOME == harness.SANDBOX_HOME
    assert sandbox_paths.RUNTIME_DIR == harness.SANDBOX_RUNTIME
    assert sandbox_paths.SUDO_UNAVAILABLE_NOTE == posixpath.join(harness.SANDBOX_RUNTIME, harness.UNAVAILABLE_NOTE)
    assert sandbox_paths.VSCODE_DIR == harness.SANDBOX_VSCODE
    assert sandbox_paths.CHROMIUM_DIR == harness.SANDBOX_CHROMIUM
    assert sandbox_paths.SETTINGS_DIR == harness.SANDBOX_SETTINGS
    assert sandbox_paths.THUNDERBIRD_DIR == harness.SANDBOX_THUNDERBIRD


def test_the_commands_that_run_alone_load_the_servers_table():
    assert str(code_command.VSCODE_DIR) == sandbox_paths.VSCODE_DIR
    assert sudo_client.UNAVAILABLE_NOTE == sandbox_paths.SUDO_UNAVAILABLE_NOTE


def test_the_google_chrome_shim_looks_for_chromium_120_where_the_harness_mounts_it():
    shim = (Path(sandbox_paths.__file__).parent / "shims" / "google-chrome").read_text()
    assert re.findall(r"^vm_chromium=(\S+)$", shim, re.MULTILINE) == [harness.SANDBOX_CHROMIUM]
