"""A plugin package adds a metric, an agent and a model client by being installed: no --plugin, no edit of the harness.

The package in osworld_example_plugin/ is pip-installed into a folder of its own, which the
`osworld` commands below get on their PYTHONPATH: importlib.metadata finds its entry points there,
as it would in a venv's site-packages.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.extensions import KINDS
from tests.agents.wire_servers import OpenAIWireServer, reply_text

HERE = Path(__file__).parent
PACKAGE = HERE / "osworld_example_plugin"
TASKS = HERE / "example_tasks"
DIST = "osworld-example-plugin 0.1.0"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The installed plugin: a folder holding its package and its .dist-info (entry_points.txt)."""
    root = tmp_path_factory.mktemp("plugin")
    source = root / "source"  # built from a copy: the build writes its build/ and egg-info beside the sources
    shutil.copytree(PACKAGE, source)
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True, capture_output=True)
    return target


def osworld(*args: str, site: Path | None = None, cwd: Path | None = None,
            extra_path: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="250")  # rich wraps at the terminal's width: keep each row on one line
    paths = [str(p) for p in (site, extra_path) if p is not None]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env["PYTHONPATH"]] if env.get("PYTHONPATH") else paths)
    return subprocess.run([sys.executable, "-m", "osworld_cli.main", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # pip-installs the plugin
def test_the_installed_metric_makes_the_task_valid_and_is_unknown_without_it(site):
    without = osworld("tasks", "validate", str(TASKS))
    assert without.returncode == 1
    assert "evaluator.func = 'example_note_matches': unknown metric" in without.stdout
    installed = osworld("tasks", "validate", str(TASKS), site=site)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "unknown metric" not in installed.stdout


@pytest.mark.slow  # pip-installs the plugin
def test_osworld_plugins_lists_what_the_distribution_adds(site):
    listed = osworld("plugins", "--external", site=site)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("\t")[0]: line for line in listed.stdout.splitlines()
            if line.count("\t") == 2 and not line.startswith("name\t")}
    assert set(rows) == {"example_note_matches", "example-note-writer", "example-service"}
    assert f"entry point of {DIST}" in rows["example_note_matches"]
    assert "osworld_example_plugin.metrics:10" in rows["example_note_matches"]
    assert "osworld_example_plugin.agent:NoteWriterAgent" in rows["example-note-writer"]
    assert "osworld_example_plugin.model_client:ExampleServiceClient" in rows["example-service"]
    assert osworld("plugins", "--external").stdout.count("none") == len(KINDS)  # not installed: nothing


@pytest.mark.slow  # pip-installs the plugin
def test_the_installed_model_client_answers_through_its_entry_point(site):
    server = OpenAIWireServer()
    server.script(reply_text("hello from the example service"))
    script = ("from mm_agents.llm import GenerationParams, Message, create_client\n"
              f"client = create_client('my-model', provider='example-service', base_url={server.base_url!r})\n"
              "print(type(client).__name__, client.complete([Message.text('user', 'hi')], GenerationParams()).text)\n")
    try:
        env = dict(os.environ, EXAMPLE_SERVICE_KEY="sk-example", PYTHONPATH=os.pathsep.join(
            filter(None, [str(site), os.environ.get("PYTHONPATH")])))
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ExampleServiceClient hello from the example service"
    assert server.requests[0].headers["authorization"] == "Bearer sk-example"
    assert server.requests[0].body["model"] == "my-model"


@pytest.mark.desktop
def test_the_plugin_agent_runs_a_task_the_plugin_metric_scores(site, tmp_path):
    ran = osworld("run", "--agent", "example-note-writer", "--model", "plugin", "--obs", "screenshot",
                  "--tasks", str(TASKS / "test_plugin.json"), "--result-dir", str(tmp_path / "results"),
                  "--cache-dir", str(tmp_path / "cache"), "--no-record", site=site, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    folder = tmp_path / "results" / "pyautogui" / "screenshot" / "plugin" / "plugin" / "plugin-writes-note"
    assert (folder / "result.txt").read_text().strip() == "1.0"
    status = json.loads((folder / "status.json").read_text())
    assert status["status"] == "ok" and status["steps"] == 2
    note = "written by the example plugin"
    assert status["evaluation"]["metrics"][0] == {
        "func": "example_note_matches", "score": 1.0, "skipped": False,
        "explanation": f"the note says '{note}'",
        "values": {"result": {"file": "note.txt", "bytes": len(note),
                              "sha256": hashlib.sha256(note.encode()).hexdigest()},
                   "expected": {"text": note}}}


def write_distribution(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    """An installed distribution as an installer leaves it: its modules and a .dist-info."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)


def test_an_entry_point_that_fails_to_import_is_an_error_naming_the_distribution(tmp_path):
    write_distribution(tmp_path, "broken-osworld-plugin", "[osworld.metrics]\nbroken = broken_metrics\n",
                       {"broken_metrics": "raise RuntimeError('missing licence key')\n"})
    validated = osworld("tasks", "validate", str(TASKS), site=tmp_path)
    assert validated.returncode == 2
    assert "Traceback" not in validated.stderr
    assert ("cannot load entry point osworld.metrics: broken = broken_metrics of broken-osworld-plugin 1.0: "
            "RuntimeError: missing licence key") in validated.stderr


def test_an_entry_point_object_that_is_missing_is_named_when_asked_for(tmp_path):
    write_distribution(tmp_path, "typo-osworld-plugin", "[osworld.agents]\ntypo = typo_agent:NoSuchAgent\n",
                       {"typo_agent": "class Agent:\n    pass\n"})
    ran = osworld("run", "--agent", "typo", "--tasks", str(TASKS / "test_plugin.json"),
                  "--result-dir", str(tmp_path / "results"), site=tmp_path, cwd=tmp_path)
    assert ran.returncode == 2
    assert ("--agent: cannot load entry point osworld.agents: typo = typo_agent:NoSuchAgent of typo-osworld-plugin "
            "1.0: AttributeError") in ran.stderr


def test_a_distribution_registering_a_built_in_name_is_an_error_naming_both_places(tmp_path):
    write_distribution(tmp_path, "clashing-osworld-plugin", "[osworld.metrics]\nclash = clashing_metrics\n",
                       {"clashing_metrics": "from desktop_env.evaluators.registry import metric\n\n\n"
                                            "@metric('exact_match')\ndef mine(result, expected):\n    return 1.0\n"})
    validated = osworld("tasks", "validate", str(TASKS), site=tmp_path)
    assert validated.returncode == 2
    message = validated.stderr
    assert "metric func 'exact_match' is registered twice: at desktop_env.evaluators.metrics.general:" in message
    assert "and at clashing_metrics:4 (entry point of clashing-osworld-plugin 1.0)" in message


def test_osworld_plugins_says_which_names_are_built_in_and_which_a_plugin_file_adds(tmp_path):
    plugin = tmp_path / "my_desktops.py"
    plugin.write_text("from desktop_env.providers import provider\n\n\n"
                      "@provider('my-cloud')\ndef my_cloud(**options):\n    raise NotImplementedError\n")
    listed = osworld("plugins", "--kind", "provider", "--plugin", str(plugin))
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines() if line.count("\t") == 2]
    assert ["local", "built-in", "desktop_env.providers.local:LocalProvider"] in rows
    assert ["remote", "built-in", "desktop_env.providers.remote:RemoteProvider"] in rows
    assert ["my-cloud", f"--plugin {plugin}", "osworld_plugin_my_desktops:4"] in rows
    assert "agent (osworld.agents)" not in listed.stdout
