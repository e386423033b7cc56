"""The remote provider reaches Chrome's DevTools (9222) at the desktop's own address, as OSWorld reaches
a VM's. A real `osworld env serve` is the remote: at its --port address only the env server answers,
at its --vm-address the ports a VM has answer too."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig
from tests.serve_cli import free_port, interrupt, osworld, wait_until_served

pytestmark = pytest.mark.desktop

OPEN_TABS = {"func": "is_expected_tabs", "result": {"type": "open_tabs_info"},
             "expected": {"type": "rule", "rules": {"type": "url", "urls": ["about:blank"]}}}
# The remote provider does not revert the desktop: a browser an earlier test started is closed first.
CHROME = [{"type": "execute", "parameters": {"command": ["pkill", "chrome"]}},
          {"type": "sleep", "parameters": {"seconds": 2}},
          {"type": "launch", "parameters": {"command": ["google-chrome", "--remote-debugging-port=9222",
                                                        "about:blank"]}},
          {"type": "sleep", "parameters": {"seconds": 4}}]


@pytest.fixture(scope="module")
def served():
    """(URL with only the env server, URL at the VM-like address) of one served desktop."""
    port = free_port()
    proc = osworld("env", "serve", "--port", str(port), "--vm-address", "auto")
    output = wait_until_served(proc, timeout=120)
    vm_url = re.search(r"as a VM: env server (http://[\d.]+:5000)", output).group(1)
    yield f"http://127.0.0.1:{port}", vm_url
    interrupt(proc, timeout=60)


def run_task(tmp_path: Path, url: str, name: str, config: list) -> dict:
    examples = tmp_path / name / "examples" / "chrome"
    examples.mkdir(parents=True)
    (examples / f"{name}.json").write_text(json.dumps({"id": name, "instruction": "Keep the blank tab open.",
                                                       "config": config, "evaluator": OPEN_TABS}))
    meta = tmp_path / name / "test_all.json"
    meta.write_text(json.dumps({"chrome": [name]}))
    results = tmp_path / name / "results"
    run_benchmark(RunConfig(agent="noop", model="noop", observation_type="screenshot", provider="remote",
                            path_to_vm=url, tasks=str(meta), result_dir=str(results), record=False))
    folder = results / "pyautogui" / "screenshot" / "noop" / "chrome" / name
    status = json.loads((folder / "status.json").read_text())
    status["result"] = (folder / "result.txt").read_text().strip() if (folder / "result.txt").exists() else None
    return status


def test_chrome_not_running_is_a_score_of_zero_as_on_a_vm(served, tmp_path):
    only_server, _ = served
    status = run_task(tmp_path, only_server, "no-chrome", [])
    assert (status["status"], status["result"]) == ("ok", "0.0"), status


def test_a_devtools_port_the_remote_does_not_expose_is_an_error_naming_the_endpoint(served, tmp_path):
    only_server, _ = served
    status = run_task(tmp_path, only_server, "unexposed", CHROME)
    assert status["status"] == "error" and status["result"] is None, status
    message = status["error"]["message"]
    assert "Chrome's DevTools at 127.0.0.1:9222 does not answer" in message and "--vm-address" in message


def test_at_the_vm_address_the_same_task_reads_chrome_and_scores(served, tmp_path):
    _, vm_url = served
    status = run_task(tmp_path, vm_url, "exposed", CHROME)
    assert (status["status"], status["result"]) == ("ok", "1.0"), status
