"""A task's setup steps (`config`) and evaluator `postconfig`, run against a desktop.

Each step type is a plain function registered by name; `run_steps` runs a list of
`{"type": T, "parameters": {...}}` in order and raises SetupError naming the step
(index, type) and what went wrong, except where OSWorld's own controller logs a failure
and goes on: a step of a type it treats so (LOGGED_BY_OSWORLD) that ran but did not do
what it asked (StepNotDone: no window matched, a command's `until` never met) is recorded
in `ctx.warnings` with `"failed": true` and the next step runs, before the agent acts and
in postconfig alike, so that the score is the one OSWorld's runner gives.

A host path a step names (a download's cache name, an execute step's `stdout`/`stderr`
file, a `file://` URL or task-relative path) must stay in the task's cache folder or the
task's tree: otherwise the step raises
UnsafeTaskPath naming the task file, the field (`config[2].parameters.stdout`) and the
value, and writes nothing. Steps that wait (open, execute with `until`,
activate_window, the Chrome debugging port) poll with a bound; the only sleeping
is what a task asks for with `sleep`.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shlex
import sqlite3
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from .. import extensions
from ..errors import DesktopEnvError, ServerRequestError, UnsafeTaskPath
from ..resources import cache_name, fetch
from ..safe_paths import check_basename, join_under, resource_path, write_under
from ..waiting import WaitTimedOut, poll_until, wait_until
from .setup_context import SetupContext, setup_context_for

log = logging.getLogger("osworld.setup")

# A step: step(ctx: SetupContext, **parameters), the parameters as the task file gives them.
StepFn = Callable[..., None]

# OSWorld step types that need a network account; refused up front, never faked.
for _name, _reason in (("googledrive", "needs a Google Drive account and the network"),
                       ("login", "needs a website account and the network"),
                       ("proxy", "needs an external proxy service")):
    extensions.unsupported("setup_step", _name, _reason)
NEEDS_ACCOUNT = extensions.UnsupportedView("setup_step")

WAIT_FOR_WINDOW_S = 30.0
# In postconfig the agent has acted and its apps are up: a window not there by now is one the task's evaluator
# names wrongly (GIMP's window is titled after its image once one is open) or one behind a modal dialog, which
# OSWorld's controller, asking once, logs and passes. A short wait still covers a window a postconfig step opened.
WAIT_FOR_WINDOW_AFTER_AGENT_S = 5.0
# A launched app gets as long as OSWorld's runner waits after a reset before the agent's first look, before a
# step acts on it.
SETTLE_AFTER_STEP_S = 60.0
SETTLED_BEFORE_INPUT = ("launch", "open")
# Programs a setup command uses to act on windows (OSWorld's task files: pyautogui above all).
INPUT_TOOLS = ("pyautogui", "xdotool", "wmctrl")
WAIT_FOR_CHROME_S = 30.0
EXECUTE_UNTIL_S = 60.0

WINDOW_FOUND_HEADER = "X-OSWorld-Window-Found"  # set by our env server's window endpoints
WINDOW_ACTIVE_HEADER = "X-OSWorld-Window-Active"

# The profile the google-chrome shim runs Chromium on (and OSWorld's VM runs Chrome on).
CHROME_HISTORY = "/home/user/.config/google-chrome/Default/History"


class SetupError(DesktopEnvError):
    """A setup step failed; the message names the step index, its type and the reason."""


class SetupUnsupported(SetupError):
    """A step type this harness cannot run offline (or does not know)."""


class StepNotDone(SetupError):
    """A step ran against a working desktop but did not do what it asked: no window matched, the window did not
    take the focus, a command's `until` was never met. For the step types OSWorld's controller logs such a failure
    of (LOGGED_BY_OSWORLD) the steps go on; a program that is not there, a bad parameter or a desktop that stopped
    answering is never this: those are what the local desktop lacks or broke, errors whatever OSWorld does."""


# What a failure does in OSWorld's SetupController (desktop_env/controllers/setup.py of its desktop-env package),
# which runs the task's `config` and, in evaluate(), its postconfig: its launch, execute/command, activate_window,
# close_window and change_wallpaper steps log a request the env server refused and go on to the next step (and then
# to the agent, or to the getters); every other type raises, and the episode ends without a score. docs/TASKS.md
# has the table, step by step.
LOGGED_BY_OSWORLD = frozenset({"launch", "execute", "command", "activate_window", "close_window", "change_wallpaper"})


def setup_step(name: str) -> Callable[[StepFn], StepFn]:
    return extensions.decorator("setup_step", name)


def step_names() -> list[str]:
    return extensions.names("setup_step")


def fill_placeholders(value: Any, ctx: SetupContext) -> Any:
    """Replaces OSWorld's {CLIENT_PASSWORD}, {SCREEN_WIDTH}... in strings and lists of strings."""
    width, height = ctx.screen_size
    table = {"{CLIENT_PASSWORD}": ctx.client_password, "{SCREEN_WIDTH}": str(width),
             "{SCREEN_HEIGHT}": str(height), "{SCREEN_WIDTH_HALF}": str(width // 2),
             "{SCREEN_HEIGHT_HALF}": str(height // 2)}
    if isinstance(value, str):
        for key, replacement in table.items():
            value = value.replace(key, replacement)
        return value
    if isinstance(value, list):
        return [fill_placeholders(v, ctx) for v in value]
    return value


def drives_input(step: Any) -> bool:
    """A step that acts on an app's window: presses keys or clicks (OSWorld's `python -c "import pyautogui; ..."`,
    xdotool, wmctrl), or activates or closes a window."""
    if not isinstance(step, dict):
        return False
    if step.get("type") in ("activate_window", "close_window"):
        return True
    if step.get("type") not in ("execute", "command", "execute_with_verification"):
        return False
    command = (step.get("parameters") or {}).get("command")
    text = command if isinstance(command, str) else json.dumps(command)
    return any(tool in text for tool in INPUT_TOOLS)


def run_steps(env: object, steps: list[dict], phase: str = "setup") -> None:
    """Runs `steps` in order against a DesktopEnv (its `setup_context`), a SetupContext, or an env-like
    object (a context is made over it)."""
    if not steps:
        return
    ctx = dataclasses.replace(setup_context_for(env), phase=phase)  # the same warning and wait lists
    section = "evaluator.postconfig" if phase == "postconfig" else "config"
    _ = ctx.cache_dir  # checked: a task id such as ".." would put the cache outside the cache base
    launched: tuple[int, str, Any] | None = None  # the last launch or open the steps have not waited for yet
    for index, step in enumerate(steps):
        kind = step.get("type") if isinstance(step, dict) else None
        if launched is not None and drives_input(step):
            # On the VM the app was up by the time a step acted on it; a step that only writes files (a config
            # the app reads as it starts) ran before the app was up, as it does here.
            launch_index, launch_kind, what = launched
            try:
                settle_after_step(ctx, f"{section}[{launch_index}]", what, before=f"{section}[{index}]")
            except SetupError as e:
                raise SetupError(f"{phase} step {launch_index} ({launch_kind}): {e}") from e
            launched = None
        try:
            fn = extensions.get("setup_step", str(kind))  # a missing or non-string type names no step
        except extensions.UnsupportedName as e:
            raise SetupUnsupported(f"{phase} step {index} ({kind}) {e.reason}: not supported offline") from None
        except extensions.UnknownName:
            known = ', '.join(step_names())
            raise SetupUnsupported(f"{phase} step {index} has unknown type {kind!r}; known: {known}") from None
        parameters = step.get("parameters") or {}
        started = time.monotonic()
        warnings = ctx.warnings
        before = len(warnings)
        try:
            fn(ctx, **parameters)
            if kind in SETTLED_BEFORE_INPUT:
                launched = (index, str(kind), parameters.get("command", parameters.get("path")))
        except UnsafeTaskPath as e:  # names the field within the step; the task's field path goes before it
            raise e.locate(f"{section}[{index}].parameters", ctx.task_file) from None
        except StepNotDone as e:
            if kind not in LOGGED_BY_OSWORLD:
                raise SetupError(f"{phase} step {index} ({kind}): {e}") from e
            # OSWorld's controller logs this and goes on; the record keeps it (status.json's `warnings`)
            warnings.append({"message": str(e), "failed": True, "phase": phase})
        except SetupError as e:
            raise SetupError(f"{phase} step {index} ({kind}): {e}") from e
        except TypeError as e:
            raise SetupError(f"{phase} step {index} ({kind}) has bad parameters {sorted(parameters)}: {e}") from e
        except DesktopEnvError as e:
            raise SetupError(f"{phase} step {index} ({kind}) failed: {e}") from e
        for warning in warnings[before:]:
            warning.update(field=f"{section}[{index}]", type=kind)
            log.warning("%s step %d (%s): %s", phase, index, kind, warning["message"])
        log.info("%s step %d (%s) took %.2fs", phase, index, kind, time.monotonic() - started)


def settle_after_step(ctx: SetupContext, field: str, started: Any = None, before: str | None = None) -> None:
    """After a launch or open step, before the next step that acts on an app: it runs once the app's window is
    up and the desktop holds still, so that a fixed sleep a task file puts in it starts where it started on the
    VM. A desktop app that shows no window within the bound fails the launch; a desktop that never holds still
    is a warning."""
    settle = getattr(ctx.controller, "settle", None)
    report = settle(SETTLE_AFTER_STEP_S) if settle is not None else None
    if report is None:  # a server that cannot tell (OSWorld's own): the VM's timing holds
        return
    waiting = [str(what) for what in report.get("waiting_for") or []]
    what = started if isinstance(started, str) else shlex.join(str(word) for word in started or [])
    ctx.settle_waits.append({"field": field, "started": what[:200], **({"before": before} if before else {}),
                              "waited_s": report.get("waited_s"), "settled": bool(report.get("settled")),
                              **({"waiting_for": waiting} if waiting else {})})
    windowless = [what for what in waiting if what.startswith("a window of")]
    if windowless:
        raise SetupError(f"no window appeared within {SETTLE_AFTER_STEP_S:g} s: still waiting for "
                         f"{'; '.join(windowless)}")
    if waiting:
        ctx.warnings.append({"message": f"the desktop did not hold still within {SETTLE_AFTER_STEP_S:g} s "
                                               f"(waiting for {'; '.join(waiting)})"})


# A shell's (and exec's) way of saying the program is not there, or cannot run: the step did nothing.
NOT_FOUND, NOT_EXECUTABLE = 127, 126


def check_exit(ctx: SetupContext, command: Any, result: dict) -> None:
    """A command that could not start fails its step; any other non-zero exit is a warning."""
    code = result.get("returncode")
    if code == 0 or code is None:
        return
    stderr = (result.get("error") or "").strip()
    said = f": {stderr[-300:]}" if stderr else ""
    if code in (NOT_FOUND, NOT_EXECUTABLE):
        what = "command not found" if code == NOT_FOUND else "command cannot be executed"
        raise SetupError(f"{what} (exit {code}) running {command!r:.200}{said}")
    ctx.warnings.append({"message": f"{command!r:.200} exited with code {code}{said}", "returncode": code})


def _wait_in_step(condition: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.1) -> Any:
    """wait_until, its timeout failing the step."""
    try:
        return wait_until(condition, timeout_s, interval_s, what)
    except WaitTimedOut as e:
        raise SetupError(str(e)) from None


# -- files -------------------------------------------------------------------------------------
@setup_step("download")
def download(ctx: SetupContext, files: list[dict]) -> None:
    task_file, task_dir = ctx.task_file, ctx.task_dir
    targets = []
    for j, entry in enumerate(files):  # every name is checked before anything is fetched
        url, path = entry["url"], entry["path"]
        check_basename(path, f"files[{j}].path", task_file)
        name = cache_name(url, os.path.basename(path), f"files[{j}].path", task_file)
        targets.append(join_under(ctx.cache_dir, name, f"files[{j}].path", task_file))
    for j, (entry, target) in enumerate(zip(files, targets, strict=True)):
        cached = fetch(entry["url"], target, task_dir=task_dir, field=f"files[{j}].url", task_file=task_file,
                       cache_folder=ctx.cache_dir)
        ctx.controller.upload_file(entry["path"], cached.read_bytes())


@setup_step("upload_file")
def upload_file(ctx: SetupContext, files: list[dict]) -> None:
    """Host files named by a path relative to the task's folder (or a `file://` URL), inside the task's tree."""
    task_file, task_dir = ctx.task_file, ctx.task_dir
    for j, entry in enumerate(files):
        local = resource_path(entry["local_path"], task_dir, f"files[{j}].local_path", task_file)
        if local is None or not local.is_file():
            raise SetupError(f"local file to upload not found: {entry['local_path']!r}"
                             + (f" (at {local})" if local is not None else ""))
        ctx.controller.upload_file(entry["path"], local.read_bytes())


@setup_step("change_wallpaper")
def change_wallpaper(ctx: SetupContext, path: str) -> None:
    try:
        ctx.controller.request("POST", "/setup/change_wallpaper", json_body={"path": path})
    except ServerRequestError as e:  # the desktop answered: it could not set that picture
        raise StepNotDone(f"the wallpaper was not changed to {path!r}: {e.server_message}") from None


# -- programs ----------------------------------------------------------------------------------
@setup_step("launch")
def launch(ctx: SetupContext, command: list[str] | str, shell: bool = False) -> None:
    ctx.controller.launch(fill_placeholders(command, ctx), shell=shell)


@setup_step("open")
def open_file(ctx: SetupContext, path: str) -> None:
    ctx.controller.request("POST", "/setup/open_file", json_body={"path": path}, timeout=180)


def _until_met(result: dict, until: dict) -> bool:
    if "returncode" in until and result["returncode"] != until["returncode"]:
        return False
    if "stdout" in until and until["stdout"] not in result["output"]:
        return False
    if "stderr" in until and until["stderr"] not in result["error"]:
        return False
    return True


@setup_step("execute")
@setup_step("command")
def execute(ctx: SetupContext, command: list[str] | str, shell: bool = False, stdout: str = "", stderr: str = "",
            until: dict | None = None) -> None:
    command = fill_placeholders(command, ctx)
    for key, name in (("stdout", stdout), ("stderr", stderr)):
        if name:  # refused before the command runs
            join_under(ctx.cache_dir, name, key, ctx.task_file)

    def attempt() -> dict | None:
        result = ctx.controller.run_command(command, shell=shell)
        if result.get("returncode") in (NOT_FOUND, NOT_EXECUTABLE):
            check_exit(ctx, command, result)  # waiting longer will not make the program appear
        return result if not until or _until_met(result, until) else None

    result = poll_until(attempt, EXECUTE_UNTIL_S, 0.5)
    if result is None:  # OSWorld's controller asks again for as long as the server answers; here it is bounded
        raise StepNotDone(f"command {command!r:.200} did not meet {until} within {EXECUTE_UNTIL_S:g} s")
    if not (until and "returncode" in until):  # an exit code asked for is no warning
        check_exit(ctx, command, result)
    for key, name, text in (("stdout", stdout, result["output"]), ("stderr", stderr, result["error"])):
        if name:
            write_under(ctx.cache_dir, name, text.encode("utf-8"), key, ctx.task_file)


@setup_step("execute_with_verification")
def execute_with_verification(ctx: SetupContext, command: list[str] | str, shell: bool = False,
                              verification: dict | None = None, max_wait_time: float = 10,
                              check_interval: float = 1) -> None:
    body = {"command": fill_placeholders(command, ctx), "shell": shell, "verification": verification or {},
            "max_wait_time": max_wait_time, "check_interval": check_interval}
    try:
        ctx.controller.request("POST", "/setup/execute_with_verification", json_body=body, timeout=max_wait_time + 130)
    except ServerRequestError as e:
        raise SetupError(e.server_message) from None


@setup_step("sleep")
def sleep(ctx: SetupContext, seconds: float) -> None:
    time.sleep(float(seconds))


# -- windows -----------------------------------------------------------------------------------
def _window_request(ctx: SetupContext, path: str, window_name: str, strict: bool, by_class: bool,
                    must_be_active: bool = False) -> None:
    """Asks until a window matches (and, for an activation, has the focus): under load an app's window comes
    up later than on the VM, where OSWorld asks once. A window that never does is StepNotDone."""
    body = {"window_name": window_name, "strict": strict, "by_class": by_class}
    found = [False]

    def attempt() -> bool:
        try:
            response = ctx.controller.request("POST", path, json_body=body)
        except ServerRequestError as e:
            if e.status != 404:  # the server answered, and could not do it
                raise StepNotDone(f"{path} for {window_name!r}: {e.server_message}") from None
            return False
        # Our server says whether a window matched, and whether it has the focus after an activation;
        # OSWorld's answers 200 either way and says neither.
        found[0] = response.headers.get(WINDOW_FOUND_HEADER.lower(), "1") != "0"
        return found[0] and (not must_be_active or response.headers.get(WINDOW_ACTIVE_HEADER.lower(), "1") != "0")

    what = f"a window matching {window_name!r}"
    bound = WAIT_FOR_WINDOW_AFTER_AGENT_S if ctx.phase == "postconfig" else WAIT_FOR_WINDOW_S
    try:
        wait_until(attempt, bound, 0.25, what)
    except WaitTimedOut as e:
        if found[0]:  # there, but the keys a later step sends would go elsewhere
            raise StepNotDone(f"{what} was found but did not get the focus within {bound:g} s") from None
        raise StepNotDone(str(e)) from None


@setup_step("activate_window")
def activate_window(ctx: SetupContext, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    _window_request(ctx, "/setup/activate_window", window_name, strict, by_class, must_be_active=True)


@setup_step("close_window")
def close_window(ctx: SetupContext, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    _window_request(ctx, "/setup/close_window", window_name, strict, by_class)


# -- Chromium over its debugging port ------------------------------------------------------------
def chrome_devtools(ctx: SetupContext, path: str, method: str = "GET", timeout_s: float = WAIT_FOR_CHROME_S) -> Any:
    """Calls Chromium's DevTools HTTP endpoint inside the desktop, waiting for it to come up.

    Returns the parsed JSON answer, or True for a plain-text one (/json/close answers
    "Target is closing").
    """
    host, port = ctx.service_endpoint(9222)

    def call():
        try:
            request = urllib.request.Request(f"http://{host}:{port}{path}", method=method)
            with urllib.request.urlopen(request, timeout=5) as response:
                body = response.read()
        except OSError:
            return None
        try:
            return json.loads(body) or True
        except ValueError:
            return True

    return _wait_in_step(call, timeout_s, f"Chromium's debugging port (9222) to answer {path}", interval_s=0.25)


@setup_step("chrome_open_tabs")
def chrome_open_tabs(ctx: SetupContext, urls_to_open: list[str]) -> None:
    chrome_devtools(ctx, "/json/version")
    for url in urls_to_open:
        chrome_devtools(ctx, "/json/new?" + urllib.parse.quote(url, safe=":/?&=%#"), method="PUT")


@setup_step("chrome_close_tabs")
def chrome_close_tabs(ctx: SetupContext, urls_to_close: list[str]) -> None:
    tabs = chrome_devtools(ctx, "/json/list")
    for url in urls_to_close:
        for tab in tabs if isinstance(tabs, list) else []:
            if tab.get("type") == "page" and tab.get("url", "").rstrip("/") == url.rstrip("/"):
                chrome_devtools(ctx, f"/json/close/{tab['id']}")


CHROME_EPOCH_OFFSET_US = 11644473600 * 1_000_000  # Chrome counts microseconds from 1601-01-01
LINK_VISIT = 0x30000000  # a link followed, the start and end of its redirect chain (OSWorld's value)


@setup_step("update_browse_history")
def update_browse_history(ctx: SetupContext, history: list[dict]) -> None:
    """Makes Chrome's history exactly these visits (Chrome must not be running), as OSWorld
    does: it uploads an emptied History with them in it, whatever history there was before.

    The schema is the desktop's own Chromium's: taken from the profile's History, which a
    fresh profile does not have yet, so then Chromium is run once, headless, to make it.
    """
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "History"
        local.write_bytes(_chrome_history(ctx))
        try:
            with closing(sqlite3.connect(local)) as db:
                empty_history(db)
                add_visits(db, history, int(time.time() * 1_000_000) + CHROME_EPOCH_OFFSET_US)
                db.commit()
        except sqlite3.Error as e:
            raise SetupError(f"cannot write history into a copy of {CHROME_HISTORY}: {e}") from None
        ctx.controller.upload_file(CHROME_HISTORY, local.read_bytes())
    # An empty journal is never replayed: no old transaction can come back over the new file.
    ctx.controller.upload_file(CHROME_HISTORY + "-journal", b"")


def _chrome_history(ctx: SetupContext) -> bytes:
    data = ctx.controller.get_file(CHROME_HISTORY)
    if data is None:  # a profile Chromium never ran on: it makes History when it first starts
        made = ctx.controller.run_command(["google-chrome", "--headless=new", "--dump-dom", "about:blank"])
        data = ctx.controller.get_file(CHROME_HISTORY)
        if data is None:
            raise SetupError(f"{CHROME_HISTORY} is missing, and Chromium did not make it when started "
                             f"headless (exit {made['returncode']}): {made['error'][-500:]}")
    return data


def empty_history(db: sqlite3.Connection) -> None:
    """Deletes every row of a Chrome History database but its `meta` (schema version) rows."""
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if name != "meta" and not name.startswith("sqlite_stat")]
    for name in tables:
        db.execute(f'DELETE FROM "{name}"')


def add_visits(db: sqlite3.Connection, history: list[dict], now_us: int) -> None:
    """One URL and one link visit per entry ({url, title, visit_time_from_now_in_seconds})."""
    for item in history:
        visit_time = now_us - int(float(item.get("visit_time_from_now_in_seconds", 0)) * 1_000_000)
        cursor = db.execute("INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                            "VALUES (?, ?, 1, 0, ?, 0)", (item["url"], item.get("title", ""), visit_time))
        db.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                   "VALUES (?, ?, 0, ?, 0, 0)", (cursor.lastrowid, visit_time, LINK_VISIT))
