"""A Gymnasium environment over a DesktopEnv and a set of tasks.

`DesktopEnv` keeps OSWorld's API (reset -> obs, a 4-tuple step, the score from
`evaluate()`), which OSWorld's runners and agents expect. Reinforcement-learning code
expects Gymnasium's instead, so this adapter translates, and declares what it gives:

    reset(seed=None, options={"task": ...}) -> (obs, info)
    step(action) -> (obs, reward, terminated, truncated, info)

An episode is one task. `reward` is 0 until the episode ends and then the task's score
from its evaluator; `terminated` is the agent's DONE or FAIL, `truncated` is `max_steps`
reached. An evaluator that cannot score (a getter that crashed, a desktop that lost a
process to its limits) raises out of `step`: an error is never turned into a reward of 0.
"""
from __future__ import annotations

import io
import json
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from PIL import Image

from .desktop_env import DesktopEnv, special_action
from .errors import DesktopEnvError
from .tasks.loader import Task, load_task, load_task_set

ENV_ID = "osworld/Desktop-v0"

# Bounds of the text parts: Gymnasium's Text spaces need a maximum length. An action is
# a few lines of code; a big accessibility tree (Chromium on a long page) is about 1 MB.
MAX_ACTION_CHARS = 10_000
MAX_INSTRUCTION_CHARS = 10_000
MAX_A11Y_TREE_CHARS = 4_000_000
MAX_TERMINAL_CHARS = 1_000_000


class GymAdapterError(DesktopEnvError):
    """The Gymnasium adapter was used against its contract; the message says how."""


class AnyText(spaces.Text):
    """Any string of `min_length`..`max_length` characters, in any script.

    Gymnasium's Text space only contains strings over its declared charset, and a file
    name in an accessibility tree or text a model types may be any Unicode character.
    So membership checks the length only (and that the value is a string); `sample()`
    draws from printable ASCII, a subset of the space, which is what random agents and
    Gymnasium's checker need.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None):
        super().__init__(max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)


def load_tasks(source: str | Path | Task | Sequence[Task]) -> list[Task]:
    """The tasks an adapter draws from: Task objects, a meta file (all its tasks) or one task file."""
    if isinstance(source, Task):
        return [source]
    if isinstance(source, (str, Path)):
        path = Path(source)
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        if isinstance(data, dict) and "instruction" not in data:  # a meta file: {domain: [ids]}
            return list(load_task_set(path))
        return [load_task(path)]
    tasks = list(source)
    wrong = [t for t in tasks if not isinstance(t, Task)]
    if wrong:
        raise GymAdapterError(f"tasks must be Task objects, a meta file or a task file; got {wrong[0]!r:.120}")
    return tasks


class OSWorldGymEnv(gymnasium.Env):
    """One desktop, one task per episode, Gymnasium's API (see the module docstring).

    Observation (a Dict): "screenshot" the screen as uint8 HxWx3 RGB; "instruction" the task's
    instruction; "accessibility_tree" (with `require_a11y_tree`, longer trees are cut at
    MAX_A11Y_TREE_CHARS and `info["accessibility_tree_truncated"]` gives the full length) and "terminal"
    (with `require_terminal`; "" when there is none) as text.
    Action: a string in both action spaces. "pyautogui": Python code run on the desktop.
    "computer_13": one action as JSON, `{"action_type": "CLICK", "parameters": {...}}`.
    "WAIT", "DONE" and "FAIL" are accepted as they are in either. An action that is not valid
    costs a step and is reported in `info["invalid_action"]`, as in DesktopEnv.

    `reset(options={"task": t})` runs task `t` (a Task of the set, its id, or a task dict);
    without it, a task of the set is drawn with the env's seeded random generator.
    The adapter owns the desktop: `close()` stops it.
    """

    metadata = {"render_modes": ["rgb_array"]}
    observation_space: spaces.Dict

    def __init__(self, tasks: str | Path | Task | Sequence[Task], max_steps: int = 15, pause: float = 2.0,
                 render_mode: str | None = None, desktop: DesktopEnv | None = None, **desktop_options: Any):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise GymAdapterError(f"render_mode must be one of {self.metadata['render_modes']} or None, "
                                  f"got {render_mode!r}")
        if max_steps < 1:
            raise GymAdapterError(f"max_steps must be at least 1, got {max_steps!r}")
        self.tasks = load_tasks(tasks)
        if not self.tasks:
            raise GymAdapterError(f"no tasks in {tasks!r}")
        self.max_steps = max_steps
        self.pause = pause
        self.render_mode = render_mode
        self.desktop = desktop if desktop is not None else DesktopEnv(**desktop_options)
        self.task: Task | dict[str, Any] | None = None
        self._steps = 0
        self._episode_over = False
        self._closed = False
        width, height = self.desktop.screen_size
        observation = {
            "screenshot": spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8),
            "instruction": AnyText(MAX_INSTRUCTION_CHARS),
        }
        if self.desktop.require_a11y_tree:
            observation["accessibility_tree"] = AnyText(MAX_A11Y_TREE_CHARS)
        if self.desktop.require_terminal:
            observation["terminal"] = AnyText(MAX_TERMINAL_CHARS)
        self.observation_space = spaces.Dict(observation)
        self.action_space = AnyText(MAX_ACTION_CHARS, min_length=1)

    # -- Gymnasium's API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        options = dict(options or {})
        task = self._pick_task(options.get("task"))
        task_dir: str | None
        if isinstance(task, Task):
            config, task_dir = task.config, str(task.task_dir)
        else:
            config, task_dir = task, options.get("task_dir")
        self.task = task
        self._steps = 0
        self._episode_over = False
        obs = self.desktop.reset(config, options={"task_dir": task_dir} if task_dir else None)
        info: dict[str, Any] = {"task_id": config.get("id")}
        if self.desktop.setup_warnings:
            info["setup_warnings"] = [dict(w) for w in self.desktop.setup_warnings]
        return self._observation(obs, info), info

    def step(self, action: str) -> tuple[dict, float, bool, bool, dict]:
        if self.task is None or self._episode_over:
            raise GymAdapterError("step() called before reset() or after the episode ended; call reset() first")
        if not isinstance(action, str):
            raise GymAdapterError(f"an action is a string (see action_space), "
                                  f"got {type(action).__name__}: {action!r:.200}")
        self._steps += 1
        obs, _, done, desktop_info = self.desktop.step(self._desktop_action(action), pause=self.pause)
        info = dict(desktop_info)
        info.pop("done", None)
        info.pop("fail", None)
        terminated = bool(done)
        truncated = not terminated and self._steps >= self.max_steps
        reward = 0.0
        if terminated or truncated:
            self._episode_over = True
            evaluation = self.desktop.evaluate_explained()
            reward = float(evaluation.score)
            info["evaluation"] = evaluation.to_json()
        info["steps"] = self._steps
        return self._observation(obs, info), reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return screenshot_array(self.desktop.controller.get_screenshot(), self.desktop.screen_size)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.desktop.close()

    # -- helpers -----------------------------------------------------------------------------
    def _pick_task(self, chosen: Any) -> Task | dict[str, Any]:
        if chosen is None:
            return self.tasks[int(self.np_random.integers(len(self.tasks)))]
        if isinstance(chosen, (Task, dict)):
            return chosen
        if isinstance(chosen, str):
            for task in self.tasks:
                if task.id == chosen:
                    return task
            shown = ", ".join(t.id for t in self.tasks[:10]) + (", ..." if len(self.tasks) > 10 else "")
            raise GymAdapterError(f"options['task'] = {chosen!r} is not a task id of this env's set ({shown})")
        raise GymAdapterError(f"options['task'] must be a Task, a task id or a task dict, got {type(chosen).__name__}")

    def _desktop_action(self, action: str) -> Any:
        """What DesktopEnv.step takes: code as it is, or a computer_13 dict decoded from JSON."""
        if self.desktop.action_space_name != "computer_13" or special_action(action):
            return action
        try:
            return json.loads(action)
        except ValueError:
            return action  # DesktopEnv reports it as an invalid action, costing the step

    def _observation(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        observation: dict[str, Any] = {
            "screenshot": screenshot_array(obs["screenshot"], self.desktop.screen_size),
            "instruction": str(obs.get("instruction") or "")[:MAX_INSTRUCTION_CHARS],
        }
        if "accessibility_tree" in self.observation_space.spaces:
            tree = obs.get("accessibility_tree") or ""
            if len(tree) > MAX_A11Y_TREE_CHARS:
                info["accessibility_tree_truncated"] = len(tree)
                tree = tree[:MAX_A11Y_TREE_CHARS]
            observation["accessibility_tree"] = tree
        if "terminal" in self.observation_space.spaces:
            observation["terminal"] = str(obs.get("terminal") or "")[-MAX_TERMINAL_CHARS:]
        return observation


def screenshot_array(png: bytes, screen_size: tuple[int, int]) -> np.ndarray:
    """The PNG screenshot as uint8 HxWx3 RGB; a screenshot of another size is an error, not resized."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if image.size != tuple(screen_size):
        raise GymAdapterError(f"the desktop's screenshot is {image.size[0]}x{image.size[1]}, but the observation "
                              f"space declares {screen_size[0]}x{screen_size[1]} (screen_size)")
    return np.asarray(image, dtype=np.uint8).copy()


def register() -> None:
    """Registers ENV_ID with Gymnasium: `gymnasium.make("osworld/Desktop-v0", tasks=...)`.
    A desktop's screen and timing are not reproducible, so the spec says nondeterministic."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point=f"{__name__}:OSWorldGymEnv", nondeterministic=True,
                           disable_env_checker=False)


register()
