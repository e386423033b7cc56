"""Shared fixtures. `desktop` is a real sandboxed desktop driven over plain HTTP/TCP,
the way an OSWorld client drives its VM; one per test worker process. The `*_server` fixtures
are local stand-ins for the model APIs (tests/agents/wire_servers.py), which agent, script and
run tests talk to."""
from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from desktop_env.controllers.python import ACTION_PREFIX
from desktop_env.providers.local import LocalProvider
from tests.agents.wire_servers import (
    AnthropicWireServer,
    GeminiWireServer,
    OllamaWireServer,
    OpenAIResponsesServer,
    OpenAIWireServer,
    VLLMWireServer,
)

pytest_plugins = ["tests.slowest"]

# Tests send SIGINT (a terminal's Ctrl-C) to the commands they start. A suite started in the
# background by a shell without job control inherits SIGINT ignored, and an ignored signal stays
# ignored across exec: those commands would never see it. A handled one is reset to the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def desktop_available() -> bool:
    return all(shutil.which(tool) for tool in ("bwrap", "Xvfb", "gnome-shell", "/usr/bin/python3"))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "libreoffice" in item.fixturenames:  # each LibreOffice start takes seconds, 20 s and more under load
            item.add_marker(pytest.mark.slow)
    if desktop_available():
        return
    skip = pytest.mark.skip(reason="no local desktop here (bwrap, Xvfb, gnome-shell): "
                                   "run `make test`, which installs them")
    for item in items:
        if "desktop" in item.keywords:
            item.add_marker(skip)


class LibreOffice:
    """`soffice --headless --convert-to`: files saved by LibreOffice itself, as an agent's edit reaches
    the evaluator. One profile serves the whole test session: LibreOffice makes a profile on its
    first start into it, which the later starts skip; being the session's own, it leaves a
    LibreOffice already running on the machine unused and undisturbed."""

    def __init__(self, profile: Path):
        self.profile = profile

    def convert(self, sources: list[Path], target: str, outdir: Path) -> None:
        """Saves each source as `target` (an extension, or LibreOffice's `ext:filter:options`) into
        `outdir`, under its own name with the new extension."""
        outdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["soffice", f"-env:UserInstallation={self.profile.as_uri()}", "--headless",
                        "--convert-to", target, "--outdir", str(outdir), *map(str, sources)],
                       check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def libreoffice(tmp_path_factory) -> LibreOffice:
    """LibreOffice, for tests of files it saved; a test that asks for it is marked `slow`."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    return LibreOffice(tmp_path_factory.mktemp("libreoffice") / "profile")


class DesktopClient:
    """An OSWorld-style HTTP client of one desktop's env server, over TCP."""

    def __init__(self, provider, base_url: str):
        self.provider = provider
        self.base_url = base_url
        self.http = requests.Session()

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 120)
        return self.http.get(self.base_url + path, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 120)
        return self.http.post(self.base_url + path, **kwargs)

    def execute(self, code: str) -> dict:
        """Runs pyautogui/python code exactly as OSWorld's controller sends an action."""
        response = self.post("/execute", json={"command": ["python3", "-c", ACTION_PREFIX + code], "shell": False})
        response.raise_for_status()
        return response.json()

    def shell(self, script: str) -> dict:
        response = self.post("/run_bash_script", json={"script": script, "timeout": 60})
        response.raise_for_status()
        return response.json()

    def wait_for(self, predicate, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
        """Polls `predicate` until it returns a truthy value; fails the test after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(interval)
        pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="session")
def desktop():
    provider = LocalProvider()
    provider.start_emulator()
    host, port = provider.expose_server()
    client = DesktopClient(provider, f"http://{host}:{port}")
    yield client
    client.http.close()
    provider.stop_emulator()



@pytest.fixture
def openai_server() -> Iterator[OpenAIWireServer]:
    server = OpenAIWireServer()
    yield server
    server.close()


@pytest.fixture
def vllm_server() -> Iterator[VLLMWireServer]:
    server = VLLMWireServer()
    yield server
    server.close()


@pytest.fixture
def responses_server() -> Iterator[OpenAIResponsesServer]:
    server = OpenAIResponsesServer()
    yield server
    server.close()


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicWireServer]:
    server = AnthropicWireServer()
    yield server
    server.close()


@pytest.fixture
def gemini_server() -> Iterator[GeminiWireServer]:
    server = GeminiWireServer()
    yield server
    server.close()


@pytest.fixture
def ollama_server() -> Iterator[OllamaWireServer]:
    server = OllamaWireServer()
    yield server
    server.close()
