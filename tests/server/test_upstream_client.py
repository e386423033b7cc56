"""OSWorld's own client code (its PythonController and SetupController, unchanged, from the PyPI package
in the reference venv, tests/osworld_reference.py; OSWORLD_CHECKOUT names a checkout instead) drives a
real `osworld env serve --vm-address auto` desktop: every controller call and every setup step type that
needs no network, Chrome's tabs over 9222 and VLC over 8080. Without the venv it skips, and fails on CI."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.osworld_reference import Reference, reference
from tests.serve_cli import interrupt, osworld, wait_until_served

DRIVER = Path(__file__).with_name("upstream_client_driver.py")
# Calls whose client methods OSWorld added after the version in the reference venv (desktop-env 1.0.2, of
# October 2025): they run against a checkout (OSWORLD_CHECKOUT) only. Any other call missing fails the test.
NOT_IN_REFERENCE = {
    "get_vm_machine": "PythonController.get_vm_machine came after desktop-env 1.0.2",
    "get_cursor_position": "PythonController.get_cursor_position came after desktop-env 1.0.2",
    "execute_action MOVE_TO": "read back with PythonController.get_cursor_position",
}

pytestmark = pytest.mark.desktop


@pytest.fixture(scope="module")
def osworld_client() -> Reference:
    return reference()  # before the desktop boots: without the reference there is nothing to drive it with


@pytest.fixture(scope="module")
def vm_address(osworld_client):
    proc = osworld("env", "serve", "--vm-address", "auto")
    output = wait_until_served(proc, timeout=120)
    yield re.search(r"as a VM: env server http://([\d.]+):5000", output).group(1)
    interrupt(proc, timeout=60)


def test_osworlds_own_controllers_get_the_answers_a_vm_gives(osworld_client, vm_address, tmp_path):
    done = osworld_client.run([str(DRIVER), vm_address, str(tmp_path)], "OSWorld's client", cwd=tmp_path,
                              timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    absent = {call for call, (agreed, _) in results.items() if agreed is None}
    assert absent <= set(NOT_IN_REFERENCE), {call: results[call][1] for call in absent - set(NOT_IN_REFERENCE)}
    disagreed = {call: detail for call, (agreed, detail) in results.items() if agreed is False}
    assert not disagreed, disagreed
    assert len(results) == 31
    assert {"setup chrome_open_tabs", "setup chrome_close_tabs", "VLC at 8080"} <= set(results)
