"""OSWorld's own PromptAgent, from the PyPI package desktop-env in a venv of the test's own
(tests/osworld_agent_venv.py), run by `osworld run --agent mm_agents.agent:PromptAgent --agent-python` on a built-in
os task on a real desktop: its code as it is, in a process of its own, posting to a local OpenAI-format server
(OPENAI_BASE_URL, which it reads itself) that answers with a pyautogui action, then DONE."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from tests.agents.wire_servers import OpenAIWireServer, reply_text
from tests.osworld_agent_venv import agent_venv_python

pytestmark = pytest.mark.desktop

TASK = "os-organize-invoices"
# What the agent is told to write: a fenced block of code for the pyautogui action space, which the desktop runs.
ACTION = """```python
import subprocess
pyautogui.moveTo(960, 540)
subprocess.run("mkdir -p ~/Documents/Invoices && mv ~/Downloads/*.pdf ~/Documents/Invoices/", shell=True, check=True)
```"""


def test_osworlds_own_prompt_agent_from_its_package_solves_a_built_in_task(tmp_path):
    python = agent_venv_python()
    server = OpenAIWireServer()
    server.script(reply_text(f"I will move the PDFs.\n{ACTION}"), reply_text("```DONE```"))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "osworld_cli.main", "run", "--agent", "mm_agents.agent:PromptAgent",
             "--agent-python", str(python), "--model", "gpt-4o", "--obs", "screenshot", "--action-space",
             "pyautogui", "--domain", "os", "--task-id", TASK, "--max-steps", "4",
             "--result-dir", str(tmp_path / "results")],
            env={**os.environ, "OPENAI_API_KEY": "test", "OPENAI_BASE_URL": server.base_url},
            capture_output=True, text=True, timeout=600)
    finally:
        server.close()
    folder = tmp_path / "results" / "pyautogui" / "screenshot" / "gpt-4o" / "os" / TASK
    log = (folder / "runtime.log").read_text() if (folder / "runtime.log").exists() else ""
    assert result.returncode == 0, result.stdout + result.stderr + log
    status = json.loads((folder / "status.json").read_text())
    assert status["status"] == "ok" and status["evaluation"]["score"] == 1.0, status
    assert (folder / "result.txt").read_text().strip() == "1.0"  # the PDFs moved: the action reached the desktop
    steps = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    assert [s["action"] for s in steps] == [ACTION.split("\n", 1)[1].rsplit("\n", 1)[0], "DONE"]
    assert steps[0]["response"].startswith("I will move the PDFs.")  # the agent's response, as it returned it
    # OSWorld's own request: its system prompt for screenshot in, code out, and the desktop's screenshot
    first = server.requests[0].body
    assert first["model"] == "gpt-4o" and "You are an agent which follow my instruction" in json.dumps(first)
    image = first["messages"][1]["content"][1]["image_url"]["url"]
    assert base64.b64decode(image.removeprefix("data:image/png;base64,"))[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Generating content with GPT model: gpt-4o" in log  # its own logging, in the task's log
