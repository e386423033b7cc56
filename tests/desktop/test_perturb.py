"""--perturb on real desktops: layout moves and resizes the task's windows, clutter opens
unrelated ones on top, both deterministic per (seed, task) and recorded by the harness.

Window geometry is read back with x11-utils (xwininfo, xprop), not with the code under test."""
from __future__ import annotations

import json
import re

import pytest

from desktop_env.desktop_env import DesktopEnv
from desktop_env.perturb import PerturbationError, apply_perturbation, clutter_apps, run_on_desktop
from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_harness.execution.episode import EpisodeConfig, run_episode
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig

pytestmark = pytest.mark.desktop

SCREEN = (1280, 720)
NOTES = "Remember: water the plants.\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    env = DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False,
                     cache_dir=str(tmp_path_factory.mktemp("cache")))
    yield env
    env.close()


@pytest.fixture(scope="module")
def notes_url(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("files") / "notes.txt"
    path.write_text(NOTES)
    return path.as_uri()


def task(task_id: str, notes_url: str, with_maximized_terminal: bool = False) -> dict:
    """The task's file open in gedit and, optionally, a maximized terminal beside it."""
    config = [{"type": "download", "parameters": {"files": [{"url": notes_url, "path": "/home/user/notes.txt"}]}},
              {"type": "open", "parameters": {"path": "/home/user/notes.txt"}}]
    if with_maximized_terminal:
        config += [{"type": "launch", "parameters": {"command": ["gnome-terminal", "--maximize"]}},
                   {"type": "execute", "parameters": {"command": "wmctrl -lx", "shell": True,
                                                      "until": {"stdout": "Gnome-terminal"}}}]
    return {"id": task_id, "instruction": "", "config": config}


def windows_on_screen(env: DesktopEnv) -> list[dict]:
    """The normal app windows, bottom to top: id, class, frame rectangle, map state, EWMH states."""
    script = r"""
for id in $(xprop -root _NET_CLIENT_LIST_STACKING | grep -o '0x[0-9a-f]*'); do
  echo "== $id"; xwininfo -id "$id"; xprop -id "$id" WM_CLASS _NET_WM_WINDOW_TYPE _NET_FRAME_EXTENTS _NET_WM_STATE
done"""
    reply = env.controller.run_bash_script(script, timeout=30)
    assert reply["returncode"] == 0, reply
    windows = []
    for block in reply["output"].split("== ")[1:]:
        def field(pattern: str, block: str = block) -> str:
            found = re.search(pattern, block, re.M)
            assert found is not None, f"no {pattern!r} in xprop's output: {block!r}"
            return found.group(1)
        # windows that draw their own title bar (GTK's header bars under GNOME Shell) have no frame
        extents = re.search(r"_NET_FRAME_EXTENTS\(CARDINAL\) = (.*)$", block, re.M)
        left, right, top, bottom = (int(v) for v in extents.group(1).split(",")) if extents else (0, 0, 0, 0)
        windows.append({"id": block.split()[0], "class": field(r'WM_CLASS\(STRING\) = "[^"]*", "([^"]*)"'),
                        "normal": "_NET_WM_WINDOW_TYPE_NORMAL" in field(r"_NET_WM_WINDOW_TYPE\(ATOM\) = (.*)$"),
                        "viewable": "IsViewable" in field(r"Map State: (\w+)"),
                        "states": field(r"_NET_WM_STATE\(ATOM\) =? ?(.*)$"),
                        "frame": {"x": int(field(r"Absolute upper-left X:\s+(-?\d+)")) - left,
                                  "y": int(field(r"Absolute upper-left Y:\s+(-?\d+)")) - top,
                                  "width": int(field(r"Width: (\d+)")) + left + right,
                                  "height": int(field(r"Height: (\d+)")) + top + bottom}})
    return [w for w in windows if w["normal"]]


def by_class(windows: list[dict]) -> dict[str, dict]:
    return {w["class"]: w for w in windows}


def file_state(env: DesktopEnv) -> str:
    """The task file's bytes and mtime, and every visible file in the home folder."""
    reply = env.controller.run_bash_script(
        "sha256sum ~/notes.txt; stat -c '%Y %s' ~/notes.txt; find ~ -path '*/.*' -prune -o -print | sort", timeout=30)
    assert reply["returncode"] == 0, reply
    return reply["output"]


def test_layout_moves_and_resizes_every_app_window_to_the_recorded_geometry(env, notes_url):
    env.reset(task("perturb-layout", notes_url, with_maximized_terminal=True))
    before = by_class(windows_on_screen(env))
    assert "_NET_WM_STATE_MAXIMIZED_HORZ" in before["Gnome-terminal"]["states"]

    record = apply_perturbation(env, "layout", 7, "perturb-layout")

    assert record["kind"] == "layout" and record["seed"] == 7 and record["rng_key"] == "7:perturb-layout"
    moved = by_class(record["windows"])
    assert set(moved) == {"Gedit", "Gnome-terminal"}  # not the desktop icons' window
    assert moved["Gnome-terminal"]["was_maximized"] and not moved["Gedit"]["was_maximized"]
    after = by_class(windows_on_screen(env))
    area = record["workarea"]
    for name, window in moved.items():
        assert window["before"] == before[name]["frame"]
        assert window["after"] == after[name]["frame"] != before[name]["frame"]
        assert "MAXIMIZED" not in after[name]["states"]
        frame = window["after"]
        assert frame["y"] >= area["y"]  # the title bar can still be grabbed
        assert frame["x"] >= area["x"] - frame["width"] // 4 and frame["x"] + frame["width"] * 3 // 4 <= area["width"]
        assert 0.4 * area["height"] - 20 <= frame["height"] <= 0.9 * area["height"]
    # gedit takes any size; the terminal rounds to whole character cells
    assert moved["Gedit"]["after"] == moved["Gedit"]["target"]
    assert all(abs(moved["Gnome-terminal"]["after"][k] - moved["Gnome-terminal"]["target"][k]) < 20
               for k in ("width", "height"))


def test_the_same_seed_gives_the_same_layout_on_a_fresh_desktop_and_another_seed_another(env, notes_url):
    records = []
    for seed in (7, 7, 8):
        env.reset(task("perturb-seed", notes_url))
        records.append(apply_perturbation(env, "layout", seed, "perturb-seed"))
    first, again, other = records
    assert again == first
    assert other["effective_seed"] != first["effective_seed"]
    assert other["windows"][0]["before"] == first["windows"][0]["before"]  # same window, same start
    assert other["windows"][0]["after"] != first["windows"][0]["after"]


def test_clutter_opens_unrelated_windows_on_top_and_leaves_the_task_alone(env, notes_url):
    env.reset(task("perturb-clutter", notes_url))
    files_before = file_state(env)
    before = windows_on_screen(env)

    record = apply_perturbation(env, "clutter", 1, "perturb-clutter")  # this seed draws three windows

    assert [w["class"] for w in record["task_windows"]] == ["Gedit"]
    # the apps the task does not show come first; its own app gets a window of its own
    assert [w["app"] for w in record["opened"]] == ["gnome-terminal", "nautilus", "gedit"]
    after = windows_on_screen(env)
    task_ids = {w["id"] for w in before}
    opened = [w for w in after if w["id"] not in task_ids]
    assert sorted((w["class"], sorted(w["frame"].items())) for w in opened) == \
        sorted((w["class"], sorted(w["after"].items())) for w in record["opened"])
    assert all(w["viewable"] for w in opened)
    assert [w["id"] for w in after[-len(opened):]] == [w["id"] for w in opened]  # all above the task's window
    assert {w["id"]: w["frame"] for w in after if w["id"] in task_ids} == {w["id"]: w["frame"] for w in before}
    assert file_state(env) == files_before
    assert env.controller.get_file("/home/user/notes.txt") == NOTES.encode()


def test_clutter_with_none_of_its_apps_names_what_it_looked_for():
    desktop = {"windows": [], "programs": {}}
    with pytest.raises(PerturbationError, match="gedit, nautilus, gnome-terminal, xterm"):
        clutter_apps(desktop)


def test_an_unknown_kind_is_refused_naming_it(env):
    with pytest.raises(ValueError, match="'shuffle'"):
        apply_perturbation(env, "shuffle", 0, "t")


def test_a_failure_on_the_desktop_raises_with_the_servers_output(env):
    missing_window = {"id": 0x7FFFFF, "target": {"x": 0, "y": 0, "width": 100, "height": 100}}
    with pytest.raises(PerturbationError, match=r"(?s)apply_layout failed on the desktop.*Xlib\.error\.Bad"):
        run_on_desktop(env, "apply_layout", {"moves": [missing_window], "timeout": 1})


class DesktopWithoutXlib:
    """Resets fine; its env server runs /execute code with a Python that lacks python-xlib."""

    def __init__(self):
        self.controller = self

    def reset(self, task_config, options=None):
        return {"screenshot": b"", "accessibility_tree": None, "terminal": None, "instruction": ""}

    def execute_python_command(self, code, timeout=None):
        return {"status": "success", "output": "", "returncode": 1,
                "error": "Traceback (most recent call last):\nModuleNotFoundError: No module named 'Xlib'"}


class AgentThatMustNotRun:
    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        raise AssertionError("the agent ran on a desktop that was not perturbed")


def test_a_failed_perturbation_is_recorded_as_an_error_not_a_score(tmp_path):
    outcome = run_episode(AgentThatMustNotRun(), DesktopWithoutXlib(), {"id": "t"}, "", tmp_path,
                          EpisodeConfig(perturb="clutter", record=False))
    assert outcome.status == "error" and outcome.score is None
    assert outcome.error.type == "PerturbationError" and "No module named 'Xlib'" in outcome.error.message
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "error"
    assert not (tmp_path / "result.txt").exists()


def test_run_benchmark_records_the_perturbation_before_the_agent_starts(tmp_path):
    root = tmp_path / "tasks"
    root.mkdir()
    for name in ("examples", "solutions", "files"):
        (root / name).symlink_to(BUILTIN_ROOT / name)
    (root / "test_os.json").write_text(json.dumps({"os": ["os-organize-invoices"]}))
    results = tmp_path / "results"
    summary = run_benchmark(RunConfig(agent="oracle", model="reference", observation_type="screenshot",
                                      tasks=str(root / "test_os.json"), result_dir=str(results),
                                      cache_dir=str(tmp_path / "cache"), perturb="layout", perturb_seed=3))

    assert summary.errors == 0
    folder = results / "pyautogui" / "screenshot" / "reference" / "os" / "os-organize-invoices"
    status = json.loads((folder / "status.json").read_text())
    record = json.loads((folder / "perturbation.json").read_text())
    assert status["status"] == "ok" and status["perturbation"] == record
    assert record["kind"] == "layout" and record["rng_key"] == "3:os-organize-invoices"
    assert record["windows"] == []  # the task's setup only puts files in place: no window to move
    assert (folder / "result.txt").read_text().strip() == "1.0"
