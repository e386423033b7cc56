"""OSWorld's own client code (its PythonController and SetupController, unchanged, imported from the
checkout named by OSWORLD_CHECKOUT) drives a real `osworld env serve --vm-address auto` desktop: every
controller call and every setup step type that needs no network, Chrome's tabs over 9222 and VLC over
8080. Skipped without a checkout; the client needs what its controllers import (requests, playwright,
requests-toolbelt, and for its URL helper lxml, openpyxl, formulas, tldextract, xmltodict)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve_cli import interrupt, osworld, wait_until_served

CHECKOUT = os.environ.get("OSWORLD_CHECKOUT")
DRIVER = Path(__file__).with_name("upstream_client_driver.py")

pytestmark = [pytest.mark.desktop,
              pytest.mark.skipif(not CHECKOUT or not Path(CHECKOUT, "desktop_env", "controllers", "setup.py").is_file(),
                                 reason="set OSWORLD_CHECKOUT to an OSWorld checkout to run OSWorld's own client")]


@pytest.fixture(scope="module")
def vm_address():
    proc = osworld("env", "serve", "--vm-address", "auto")
    output = wait_until_served(proc, timeout=120)
    yield re.search(r"as a VM: env server http://([\d.]+):5000", output).group(1)
    interrupt(proc, timeout=60)


def test_osworlds_own_controllers_get_the_answers_a_vm_gives(vm_address, tmp_path):
    env = {**os.environ, "PYTHONPATH": CHECKOUT, "OSWORLD_CHECKOUT": CHECKOUT}
    done = subprocess.run([sys.executable, str(DRIVER), vm_address, str(tmp_path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
        pytest.skip(f"OSWorld's client cannot be imported here: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    disagreed = {call: detail for call, (agreed, detail) in results.items() if not agreed}
    assert not disagreed, disagreed
    assert len(results) == 31
    assert {"setup chrome_open_tabs", "setup chrome_close_tabs", "VLC at 8080"} <= set(results)
