"""The README's commands, run in this repository, print what it says they print; it stays about 200 lines;
every file the README and docs/ link to is there.

Each ```console block is a command (`$ ...`) and its output. A command on an OSWorld checkout (`~/OSWorld`)
runs on the one OSWORLD_CHECKOUT names (default /work/OSWorld) and is skipped without one (OSWorld's task
files are not in its PyPI package, which the reference venv of tests/osworld_reference.py has); its output is
compared with the checkout's path written as `~/OSWorld` again. Commands run in a fresh folder that sees
this repository's evaluation_examples/, so results or a cache left in the repository change nothing."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.osworld_reference import osworld_checkout

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CHECKOUT = osworld_checkout()


def console_blocks(text: str) -> list[tuple[str, str]]:
    """(command, expected output) of each ```console block."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        first, _, output = body.partition("\n")
        assert first.startswith("$ "), f"a console block starts with its command: {first!r}"
        blocks.append((first[2:], output))
    return blocks


BLOCKS = console_blocks(README.read_text())


def test_the_readme_shows_commands_with_their_output():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("command, expected", BLOCKS, ids=[command[:60] for command, _ in BLOCKS])
def test_each_readme_command_prints_what_the_readme_says(command, expected, tmp_path):
    if "~/OSWorld" in command:
        if not (CHECKOUT / "evaluation_examples").is_dir():
            pytest.skip(f"no OSWorld checkout at {CHECKOUT} (OSWORLD_CHECKOUT): its task files are not in its PyPI "
                        "package")
        command = command.replace("~/OSWorld", str(CHECKOUT))
    (tmp_path / "evaluation_examples").symlink_to(ROOT / "evaluation_examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "ANTHROPIC_API_KEY": "sk-ant-readme", "OPENAI_API_KEY": "sk-readme"}
    done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.replace(str(CHECKOUT.resolve()), "~/OSWorld")
    assert [line.rstrip() for line in printed.splitlines()] == [line.rstrip() for line in expected.splitlines()]


def test_the_readme_stays_short():
    assert len(README.read_text().splitlines()) <= 220


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_file_a_page_links_to_is_there(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    missing = [t for t in targets if t and not (page.parent / t).exists()]
    assert missing == []
