"""Fixtures for the docker / vmware / virtualbox providers, tested against fake CLIs.

`fake_cli` puts wrappers named docker, vmrun and VBoxManage first on PATH; each runs
the matching script in tests/providers/fake_bin/ with this interpreter, which logs
its argv to a JSON-lines file and answers like the real tool.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.providers.ports import PortAllocator

FAKE_BIN = Path(__file__).resolve().parent / "fake_bin"
TOOLS = ("docker", "vmrun", "VBoxManage")


class FakeCLI:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root = root
        self.bin = root / "bin"
        self.log = root / "calls.jsonl"
        self.state = root / "state"
        self.monkeypatch = monkeypatch
        self._rules: list[dict] = []

    def calls(self, tool: str | None = None) -> list[list[str]]:
        if not self.log.exists():
            return []
        entries = [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]
        return [e["argv"] for e in entries if tool is None or e["tool"] == tool]

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def clear(self) -> None:
        if self.log.exists():
            self.log.unlink()

    def fail(self, match: list[str], stderr: str = "", code: int = 1, stdout: str = "", times: int | None = None):
        rule = {"match": match, "stderr": stderr, "stdout": stdout, "code": code}
        if times is not None:
            rule["times"] = times
        self._rules.append(rule)
        self.monkeypatch.setenv("FAKE_CLI_FAIL", json.dumps(self._rules))

    def set(self, **env: str) -> None:
        for key, value in env.items():
            self.monkeypatch.setenv(key, str(value))

    def docker_state(self) -> dict:
        path = self.state / "docker.json"
        return json.loads(path.read_text())["containers"] if path.exists() else {}

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), capture_output=True, text=True, check=True)


@pytest.fixture
def fake_cli(tmp_path, monkeypatch):
    root = tmp_path / "fake_cli"
    cli = FakeCLI(root, monkeypatch)
    cli.bin.mkdir(parents=True)
    for tool in TOOLS:
        wrapper = cli.bin / tool
        wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_BIN / tool))} "
                           "\"$@\"\n")
        wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{cli.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CLI_LOG", str(cli.log))
    monkeypatch.setenv("FAKE_CLI_STATE", str(cli.state))
    for var in ("FAKE_CLI_FAIL", "FAKE_DOCKER_SERVER", "FAKE_DOCKER_SERVER_DELAY", "FAKE_DOCKER_FAIL_FIRST",
                "FAKE_VM_IP", "FAKE_VMRUN_IP_FAILS", "FAKE_SNAPSHOT_POWERED", "FAKE_VBOX_VMS", "FAKE_VBOX_IP_UNSET",
                "FAKE_VBOX_LOCKED_RESTORES", "FAKE_VMWARE_SNAPSHOTS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OSWORLD_CACHE", str(tmp_path / "cache"))
    yield cli
    # Kill the fake env servers of containers a failed test left behind.
    for container in cli.docker_state().values():
        if container.get("server_pid"):
            try:
                os.kill(container["server_pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass


def worker_port_range() -> tuple[int, int]:
    """A port range per xdist worker, so that workers with separate ledgers never collide."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    low = 21000 + 400 * (index % 20)
    return low, low + 399


@pytest.fixture
def allocator(tmp_path):
    return PortAllocator(tmp_path / "ports", port_range=worker_port_range())


@pytest.fixture
def providers(fake_cli):
    """Providers created by a test; stopped at teardown even when the test fails."""
    created = []
    yield created
    for provider in created:
        try:
            provider.stop_emulator()
        except Exception:  # noqa: BLE001
            pass


@pytest.fixture
def share(monkeypatch, tmp_path) -> Path:
    """The sandbox share (where one-time builds go) in a folder of this test's own."""
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path))
    return tmp_path
