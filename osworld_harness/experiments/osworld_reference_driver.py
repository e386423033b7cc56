"""One task through OSWorld's own DesktopEnv, against a desktop this harness serves as a VM is reached.

Run by osworld_reference.py under the reference venv's Python (OSWorld's desktop-env package, never this
repository's desktop_env, which has the same name: its modules are imported by name at run time):

    python osworld_reference_driver.py OUTCOME.json < request.json

The request names the desktop's address (the env server at ADDRESS:5000, Chrome's DevTools at 9222, VLC
at 8080), the task, OSWorld's cache folder, the actions and the pause after each. The driver gives
OSWorld's DesktopEnv a provider of its own that points at that address, then runs what OSWorld's runner
runs: reset (its SetupController over the task's config), the actions (its `step`), and `evaluate()`
(postconfig, getters, metric). Where OSWorld's runner sleeps 60 s after the reset, the driver asks the
desktop to settle instead (the same bound). It prints what each setup and postconfig step did (what it
logged as an error, what it raised), what each getter gave (fingerprinted as this harness fingerprints
its own getters', by the same file, loaded by path), and the score.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import re
import sys
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

FINGERPRINT = Path(__file__).resolve().parents[2] / "desktop_env" / "evaluators" / "fingerprint.py"
STEP_METHOD = re.compile(r"^_([a-z_]+)_setup$")


def load_fingerprint() -> Callable[[Any], Any]:
    spec = importlib.util.spec_from_file_location("osworld_local_fingerprint", FINGERPRINT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fingerprint  # type: ignore[no-any-return]


def stand_in_for_missing(names: list[str]) -> None:
    """OSWorld's metrics package imports every metric module; a module the reference venv leaves out (easyocr:
    one image-text metric) is stood in for, and raises only if a metric actually calls it."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            stand_in = types.ModuleType(name)

            def missing(*args: Any, _name: str = name, **kwargs: Any) -> Any:
                raise ImportError(f"{_name} is not installed in the reference venv")

            def attribute(attr: str, _missing: Callable[..., Any] = missing) -> Callable[..., Any]:
                if attr.startswith("__"):  # a module's own dunders (__path__, __file__...) are absent, not callables:
                    raise AttributeError(attr)  # code that walks sys.modules (numba, via librosa) asks for them
                return _missing

            setattr(stand_in, "__getattr__", attribute)  # noqa: B010  (a module's own __getattr__, PEP 562)
            sys.modules[name] = stand_in


class ErrorLog(logging.Handler):
    """The errors OSWorld's setup controller logs (a failed step it goes on from)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not message.startswith("Traceback"):
            self.messages.append(message[:500])


def record_steps(setup_class: Any, errors: ErrorLog, steps: list[dict[str, Any]], phase: list[str]) -> None:
    """Wraps each `_<type>_setup` method of OSWorld's SetupController to record what it did."""
    for attribute in list(vars(setup_class)):
        match = STEP_METHOD.match(attribute)
        if not match:
            continue
        original = getattr(setup_class, attribute)

        def wrapped(self: Any, *args: Any, _original: Any = original, _type: str = match.group(1),
                    **kwargs: Any) -> Any:
            before = len(errors.messages)
            step: dict[str, Any] = {"phase": phase[0], "type": _type, "raised": None}
            steps.append(step)
            try:
                return _original(self, *args, **kwargs)
            except Exception as e:
                step["raised"] = f"{type(e).__name__}: {e}"[:500]
                raise
            finally:
                step["logged"] = errors.messages[before:]

        setattr(setup_class, attribute, wrapped)


def record_getters(getters: Any, fingerprint: Callable[[Any], Any], values: list[dict[str, Any]]) -> None:
    """Wraps each `get_<type>` function of OSWorld's getters package to record what it gave."""
    for attribute in list(vars(getters)):
        if not attribute.startswith("get_") or not callable(getattr(getters, attribute)):
            continue
        original = getattr(getters, attribute)

        def wrapped(env: Any, config: Any, _original: Any = original, _type: str = attribute[4:]) -> Any:
            entry: dict[str, Any] = {"type": _type}
            values.append(entry)
            try:
                value = _original(env, config)
            except Exception as e:
                entry["raised"] = f"{type(e).__name__}: {e}"[:500]
                raise
            entry["value"] = fingerprint(value)
            return value

        setattr(getters, attribute, wrapped)


class ServedDesktop:
    """OSWorld's Provider protocol over a desktop that is already up at `address` (one task a desktop)."""

    def __init__(self, address: str):
        self.address = address

    def start_emulator(self, path_to_vm: str, headless: bool, os_type: str) -> None:
        pass

    def get_ip_address(self, path_to_vm: str) -> str:
        return f"{self.address}:5000:9222:8006:8080"  # env server, Chrome, VNC (unused), VLC

    def save_state(self, path_to_vm: str, snapshot_name: str) -> None:
        raise NotImplementedError("a served desktop keeps no snapshots")

    def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
        raise RuntimeError("the reference run gives each task a fresh desktop; nothing reverts")

    def stop_emulator(self, path_to_vm: str, region: str | None = None) -> None:
        pass


class NoManager:
    def get_vm_path(self, *args: Any, **kwargs: Any) -> str:
        return "served"


def settle(address: str, timeout: float) -> None:
    requests = importlib.import_module("requests")
    try:
        response = requests.post(f"http://{address}:5000/setup/settle", json={"timeout": timeout},
                                 timeout=timeout + 30)
        if response.status_code == 200:
            return
    except requests.RequestException:
        pass
    time.sleep(timeout)  # a server that cannot settle: OSWorld's runner's own sleep


def main() -> None:
    request = json.load(sys.stdin)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    stand_in_for_missing(["easyocr"])
    fingerprint = load_fingerprint()
    desktop_env = importlib.import_module("desktop_env.desktop_env")  # OSWorld's, from the reference venv
    setup_module = importlib.import_module("desktop_env.controllers.setup")
    getters = importlib.import_module("desktop_env.evaluators.getters")
    errors = ErrorLog()
    logging.getLogger("desktopenv.setup").addHandler(errors)
    steps: list[dict[str, Any]] = []
    values: list[dict[str, Any]] = []
    phase = ["setup"]
    record_steps(setup_module.SetupController, errors, steps, phase)
    record_getters(getters, fingerprint, values)
    provider = ServedDesktop(request["address"])
    # OSWorld's DesktopEnv asks this factory for its provider by name; it gets the served desktop instead
    setattr(desktop_env, "create_vm_manager_and_provider", lambda *args, **kwargs: (NoManager(), provider))  # noqa: B010
    outcome: dict[str, Any] = {"steps": steps, "getters": values, "actions": 0, "score": None, "raised": None,
                               "where": None}
    try:
        env = desktop_env.DesktopEnv(provider_name="docker", path_to_vm="served", action_space="pyautogui",
                                     cache_dir=request["cache_dir"], screen_size=tuple(request["screen_size"]),
                                     headless=True, require_a11y_tree=False, client_password=request["password"])
        outcome["where"] = "reset"
        env.reset(task_config=request["task"])
        settle(request["address"], request.get("settle_timeout", 60))
        outcome["where"] = "actions"
        for action in request["actions"]:
            _, _, done, _ = env.step(action, request.get("pause", 0))
            outcome["actions"] += 1
            if done:
                break
        outcome["where"] = "evaluate"
        phase[0] = "postconfig"
        outcome["score"] = float(env.evaluate())
        outcome["where"] = None
    except Exception as e:  # OSWorld's runner records such a task as an error, without a score
        outcome["raised"] = f"{type(e).__name__}: {e}"[:1000]
        outcome["traceback"] = traceback.format_exc()[-3000:]
    Path(sys.argv[1]).write_text(json.dumps(outcome))  # not stdout: OSWorld's code prints there


if __name__ == "__main__":
    main()
