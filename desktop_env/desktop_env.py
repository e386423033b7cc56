"""DesktopEnv: one desktop, observed and driven by an agent (OSWorld-compatible API).

Kept small on purpose: where the desktop comes from is the provider's business,
talking to it is the controller's, running a task's setup and scoring it are
pluggable steps (`setup_runner`, `evaluator`) so this class only sequences them.
"""
from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .actions import InvalidAction, to_pyautogui, validate_action
from .controllers.python import PythonController
from .controllers.setup import run_steps
from .controllers.setup_context import SetupContext
from .desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from .errors import ResourceLimitExceeded
from .evaluators.context import EvalContext, LiveContext
from .evaluators.outcome import Evaluation
from .evaluators.recording import RecordingContext
from .evaluators.scoring import evaluate_task
from .providers import create_provider
from .providers.base import DesktopOptions, Provider

log = logging.getLogger("osworld.env")

ACTION_SPACES = ("pyautogui", "computer_13")
SPECIAL_ACTIONS = ("WAIT", "FAIL", "DONE")
# OSWorld's runner sleeps this long after a reset before its first screenshot; here it is the bound of a
# wait that ends once the desktop shows what the setup started.
FIRST_OBSERVATION_WAIT_S = 60.0
# After an action the desktop gets its pause, or until it holds still for ACTION_HOLD_S, at most this long.
ACTION_SETTLE_S = 10.0
ACTION_HOLD_S = 0.3

SetupRunner = Callable[["DesktopEnv", list], None]
# An evaluator gives an Evaluation (score and why); a plain float is accepted from custom ones.
Evaluator = Callable[["DesktopEnv", dict], "Evaluation | float"]


def default_evaluator(env: DesktopEnv, evaluator: dict) -> Evaluation:
    run_steps(env, evaluator.get("postconfig") or [], phase="postconfig")
    return evaluate_task(env, evaluator, evaluator_fixes=getattr(env, "evaluator_fixes", False))


def special_action(action: Any) -> str | None:
    """'WAIT' / 'FAIL' / 'DONE' for special actions in either action space, else None."""
    if isinstance(action, str) and action.strip() in SPECIAL_ACTIONS:
        return action.strip()
    if isinstance(action, dict) and action.get("action_type") in SPECIAL_ACTIONS:
        return action["action_type"]
    return None


def decided_by_last_action(evaluator: dict, last_action: Any) -> Evaluation | None:
    """OSWorld's rules before any getter runs: an infeasible task scores 1 only when the agent's
    last action was FAIL, and FAIL on a feasible task scores 0. None: the evaluator decides."""
    last = special_action(last_action)
    if evaluator.get("func") == "infeasible":
        return (Evaluation(1.0, "the task is infeasible and the agent answered FAIL") if last == "FAIL" else
                Evaluation(0.0, f"the task is infeasible but the agent's last action was {last or 'none'!s}, not FAIL"))
    if last == "FAIL":
        return Evaluation(0.0, "the agent answered FAIL (infeasible) for a feasible task")
    return None


class DesktopEnv:
    """reset(task_config) -> obs; step(action, pause) -> (obs, reward, done, info); evaluate(); close().

    This is OSWorld's API, not Gymnasium's: `reset` returns the observation alone,
    `step` a 4-tuple whose reward is always 0 (the score comes from `evaluate()`),
    and `action_space` is the action space's name, as OSWorld's runners read them.
    So it does not claim to be a `gymnasium.Env`; `desktop_env.gym_adapter.OSWorldGymEnv`
    is the Gymnasium environment over it. Setup steps run through `setup_runner` (default:
    every OSWorld step type) and scoring through `evaluator` (default: postconfig, getters, metrics,
    with OSWorld's verdicts unless `evaluator_fixes`).
    Files a task names by relative path resolve against `task_dir`
    (`reset(task, options={"task_dir": ...})`); downloads and fetched result files go
    to `cache_dir/<task id>/`, where OSWorld keeps them too.
    """

    def __init__(self, provider_name: str = "local", region: str | None = None, path_to_vm: str | None = None,
                 snapshot_name: str = "init_state", action_space: str = "pyautogui", cache_dir: str = "cache",
                 screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE, headless: bool = True,
                 require_a11y_tree: bool = True, require_terminal: bool = False, os_type: str = "Ubuntu",
                 client_password: str = DEFAULT_PASSWORD, network: bool = False, provider: Provider | None = None,
                 record_evaluation: bool = True, evaluator_fixes: bool = False, setup_runner: SetupRunner = run_steps,
                 evaluator: Evaluator = default_evaluator,
                 **provider_options: Any):
        if action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        self.provider_name = provider_name
        self.path_to_vm = path_to_vm
        self.snapshot_name = snapshot_name
        self.action_space_name = action_space
        self.action_space = action_space  # OSWorld code reads the name from here
        self.cache_dir_base = cache_dir
        self.cache_dir = cache_dir
        self.task_dir: str | None = None
        width, height = screen_size  # a list (from JSON or the command line) is kept as a tuple
        self.screen_size = (width, height)
        self.headless = headless
        self.require_a11y_tree = require_a11y_tree
        self.require_terminal = require_terminal
        self.os_type = os_type
        self.client_password = client_password
        self.setup_runner = setup_runner
        self.evaluator = evaluator
        self.last_evaluation: Evaluation | None = None
        # Getters see this evaluation's context, not the env; recorded, it lets `osworld rescore` replay them.
        self.record_evaluation = record_evaluation
        # Metrics give OSWorld's verdicts unless asked for our fixes (evaluators/fixes.py).
        self.evaluator_fixes = evaluator_fixes
        self.evaluation_context: EvalContext | None = None
        if provider is None:  # the provider takes of these what it honours
            desktop = DesktopOptions(screen_size=self.screen_size, network=network, client_password=client_password,
                                     path_to_vm=path_to_vm)
            provider = create_provider(provider_name, desktop, **provider_options)
        self.provider = provider
        self.provider.start_emulator(path_to_vm, headless, os_type)
        self.controller = self._new_controller()
        self._fresh = True  # just started: a reset need not revert again
        self._can_settle = callable(getattr(self.controller, "settle", None))
        self.task_config: dict[str, Any] = {}
        self.instruction: str | None = None
        self.action_history: list[Any] = []
        self.setup_warnings: list[dict] = []  # setup and postconfig steps that went wrong without failing
        self.settle_waits: list[dict] = []  # launch and open steps' waits for their apps (controllers/setup.py)
        self.readiness: dict[str, Any] = {"steps": self.settle_waits}  # and the first observation's, for status.json
        self.setup_context: SetupContext | None = None  # what this task's setup and postconfig steps see
        self._step_no = 0

    # -- the Env API ----------------------------------------------------------------------------
    def reset(self, task_config: dict[str, Any] | None = None, seed: int | None = None,
              options: dict[str, Any] | None = None) -> dict[str, Any]:
        # `seed` is in OSWorld's signature and means nothing to it either: a desktop is not seeded.
        self.setup_warnings = []
        self.settle_waits = []
        self.readiness = {"steps": self.settle_waits}
        self.evaluation_context = None
        # whether a reset follows this one (a run's last task: none) is the caller's to say; the default is
        # that one does
        self.provider.expect_another_reset(bool((options or {}).get("another_reset_follows", True)))
        if not self._fresh or self._server_known_gone():  # a desktop whose first actions broke it
            self.provider.revert_to_snapshot(self.path_to_vm, self.snapshot_name)
            self.controller.close()  # its kept-alive connection was to the old server
            self.controller = self._new_controller()
        self._fresh = False
        self.task_config = dict(task_config or {})
        self.instruction = self.task_config.get("instruction")
        self.action_history = []
        self._step_no = 0
        if options and options.get("task_dir"):
            self.task_dir = str(options["task_dir"])
        self.cache_dir = str(Path(self.cache_dir_base) / str(self.task_config.get("id", "untitled")))
        Path(self.cache_dir).mkdir(parents=True, exist_ok=True)
        self.setup_context = SetupContext.of(self)
        steps = self.task_config.get("config") or []
        self.setup_runner(self, steps)
        if steps:  # a desktop that ran no setup is as /health found it: ready, the screen still
            self.readiness["first_observation"] = self.settle(FIRST_OBSERVATION_WAIT_S)
        return self.observe()

    def settle(self, timeout: float) -> dict[str, Any]:
        """Waits (bounded) until the apps the setup started are up and the screen holds still, where OSWorld's
        runner sleeps a fixed 60 s; says what it waited for (`supported` false: the env server cannot tell)."""
        settle = getattr(self.controller, "settle", None)
        report = settle(timeout) if settle is not None else None
        return {"supported": False} if report is None else {"supported": True, **report}

    def step(self, action: Any, pause: float = 2) -> tuple[dict[str, Any], float, bool, dict[str, Any]]:
        self._step_no += 1
        self.action_history.append(action)
        info: dict[str, Any] = {}
        done = False
        special = special_action(action)
        if special == "WAIT":
            time.sleep(pause)
        elif special == "FAIL":
            done, info["fail"] = True, True
        elif special == "DONE":
            done, info["done"] = True, True
        else:
            code = self._action_code(action, info)
            if code is not None:
                result = self.controller.execute_python_command(code)
                if result.get("returncode", 0) != 0:
                    info["action_error"] = (result.get("error") or "").strip()[-2000:]
            self._pause_after_action(pause, info)
        observation = self.observe()
        if self._step_no == 1:
            # the task's setup and the agent's first action are done: a provider that readies the next desktop
            # ahead starts now, while the agent thinks, not beside the setup's timed steps
            self.provider.agent_started()
        return observation, 0.0, done, info

    def _pause_after_action(self, pause: float, info: dict[str, Any]) -> None:
        """`pause` seconds, as OSWorld gives an action, or longer while the desktop is still answering it (bounded):
        on the VM an app shows what a click opened within the pause, and the next observation must show it here
        too when the machine is busy (a dialog that appears late also appears where the pointer is by then)."""
        started = time.monotonic()
        if self._can_settle:
            report = self.controller.settle(ACTION_SETTLE_S, hold=ACTION_HOLD_S)
            if report is None:
                self._can_settle = False  # a server without /setup/settle (OSWorld's own): the VM's timing holds
            elif not report.get("settled"):
                info["unsettled"] = report.get("waiting_for")
        time.sleep(max(0.0, pause - (time.monotonic() - started)))

    def evaluate(self) -> float:
        """OSWorld's contract: the score. Why it is that score is in `self.last_evaluation`."""
        return self.evaluate_explained().score

    def evaluate_explained(self) -> Evaluation:
        self.last_evaluation = None
        self.evaluation_context = self.new_evaluation_context()
        self.check_resource_limits()
        evaluator_config = self.task_config.get("evaluator") or {}
        evaluation = decided_by_last_action(evaluator_config, self.action_history[-1] if self.action_history else None)
        if evaluation is None:
            outcome = self.evaluator(self, evaluator_config)
            evaluation = outcome if isinstance(outcome, Evaluation) else Evaluation(
                float(outcome), f"the custom evaluator returned {float(outcome):g}")
        self.last_evaluation = evaluation
        return evaluation

    def new_evaluation_context(self) -> EvalContext:
        """What this evaluation's getters see of the desktop: a live context, recording every call
        and its answer when `record_evaluation` (kept in `evaluation_context` after the evaluation)."""
        live = LiveContext(self)
        return RecordingContext(live) if self.record_evaluation else live

    def resource_limit_hit(self) -> str:
        """One sentence naming the limits the desktop hit during this task (a refused fork, an OOM
        kill, a full home folder), or "" (also from providers without limits)."""
        limit_hit = getattr(self.provider, "resource_limit_hit", None)
        return limit_hit() if limit_hit is not None else ""

    def check_resource_limits(self) -> None:
        """Raises ResourceLimitExceeded when the desktop hit one of its limits during this task: its
        end state is not what the agent's actions alone made, so the evaluator does not run."""
        sentence = self.resource_limit_hit()
        if sentence:
            raise ResourceLimitExceeded(f"{sentence} during this task; its end state is not evaluated")

    def desktop_logs(self) -> dict[str, str]:
        """{name: last lines} of the desktop's own logs (GNOME Shell, the settings daemons, the
        buses), {} from a provider that keeps none: what a failed task saves to explain itself."""
        logs = getattr(self.provider, "desktop_logs", None)  # a caller's own provider may not have it
        return logs() if logs is not None else {}

    def render(self, mode: str = "rgb_array") -> bytes:
        """The screenshot as PNG bytes (OSWorld's; the Gymnasium adapter gives an array)."""
        return self.controller.get_screenshot()

    def close(self) -> None:
        self.controller.close()
        self.provider.stop_emulator(self.path_to_vm)

    def __enter__(self) -> DesktopEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- helpers ----------------------------------------------------------------------------------
    def _server_known_gone(self) -> bool:
        watch = getattr(self.controller, "watch", None)  # a caller may have put in a controller of its own
        return bool(watch is not None and watch.dead)

    def _new_controller(self) -> PythonController:
        """A client of the desktop's env server as it is now, which gives up on it in seconds once it is
        gone (its provider knows, or it answers nothing)."""
        return PythonController(self.provider.get_ip_address(self.path_to_vm),
                                gone=getattr(self.provider, "server_gone", None))

    def _action_code(self, action: Any, info: dict[str, Any]) -> str | None:
        """Python code for an action; None (with info['invalid_action']) when it is not valid here."""
        if self.action_space_name == "computer_13":
            if not isinstance(action, dict):
                info["invalid_action"] = (f"computer_13 expects an action dict, "
                                          f"got {type(action).__name__}: {action!r:.200}")
                return None
            try:
                return to_pyautogui(validate_action(action, self.screen_size))
            except InvalidAction as e:
                info["invalid_action"] = str(e)
                return None
        if not isinstance(action, str):
            info["invalid_action"] = f"pyautogui expects a code string, got {type(action).__name__}: {action!r:.200}"
            return None
        return action

    def observe(self) -> dict[str, Any]:
        """The observation `reset` and `step` return, taken now (after a wait, or a change not made by `step`)."""
        return {
            "screenshot": self.controller.get_screenshot(),
            "accessibility_tree": self.controller.get_accessibility_tree() if self.require_a11y_tree else None,
            "terminal": self.controller.get_terminal_output() if self.require_terminal else None,
            "instruction": self.instruction,
        }

    def _get_obs(self) -> dict[str, Any]:
        """OSWorld's name for `observe`, which its runners and agents call."""
        warnings.warn("DesktopEnv._get_obs() is deprecated: call DesktopEnv.observe()", DeprecationWarning,
                      stacklevel=2)
        return self.observe()
