"""The agent process's side of mm_agents/agent_process.py: run as a script by another Python (`python -I
agent_process_main.py ROOT_OF_THIS_HARNESS`), it imports the user's agent with a sys.path of its own and answers
the harness's calls on it, one JSON line per call. Standard library only, and nothing of this harness on its
path: the `mm_agents` and `desktop_env` it imports are the user's (OSWorld's).

The first line read says what to load: {"path": [...], "module": name, "file": path or null, "class": name}.
Then each line is {"op": "describe"}, {"op": "init", "kwargs": {...}} or {"op": "call", "method": name, "args":
[...], "kwargs": {...}}, answered by {"ok": value} or {"error": {"type", "module", "message", "traceback"}}.
Values are JSON, with bytes as {"$bytes": base64}, tuples as {"$tuple": [...]}, a logger as {"$logger": name}
and anything else JSON cannot say as its repr. Whatever the agent prints goes to stderr, which the harness
reads: the protocol has file descriptors of its own.
"""
from __future__ import annotations

import base64
import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

IMPORTLIB = Path(importlib.__file__).parent
OWN_PACKAGES = ("mm_agents", "desktop_env", "osworld_harness", "osworld_cli", "lib_run_single")


def encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, logging.Logger):
        return {"$logger": value.name}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return base64.b64decode(value["$bytes"])
        if set(value) == {"$tuple"}:
            return tuple(decode(v) for v in value["$tuple"])
        if set(value) == {"$logger"}:
            return agent_logger(value["$logger"])
        return {k: decode(v) for k, v in value.items()}
    return value


def agent_logger(name: str) -> logging.Logger:
    """A logger whose lines go to stderr, where the harness reads them into the task's log."""
    logger = logging.getLogger(name)
    if not any(getattr(h, "agent_process", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handler.agent_process = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    return logger


def forget_harness(harness_root: Path) -> None:
    """This harness off the path: its folder, and import hooks (an editable install's finder) that would find
    its packages there."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != harness_root]

    def finds_ours(finder: Any) -> bool:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None or finder is importlib.machinery.PathFinder:
            return False
        for name in OWN_PACKAGES:
            try:
                spec = find_spec(name, None)
            except Exception:  # a finder of someone else's that cannot answer: not ours to judge
                continue
            origin = getattr(spec, "origin", None) or next(iter(getattr(spec, "submodule_search_locations", None)
                                                               or []), None)
            if origin and harness_root in Path(origin).resolve().parents:
                return True
        return False

    sys.meta_path[:] = [f for f in sys.meta_path if not finds_ours(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in getattr(h, "__qualname__", "").lower()]
    sys.path_importer_cache.clear()


def load_class(what: dict[str, Any]) -> type:
    for entry in reversed(what["path"]):
        sys.path.insert(0, entry)
    if what["file"] is None:
        module = importlib.import_module(what["module"])
    else:
        spec = importlib.util.spec_from_file_location(what["module"], what["file"])
        if spec is None or spec.loader is None:
            raise ImportError(f"{what['file']} is not a Python source file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[what["module"]] = module
        spec.loader.exec_module(module)
    cls = getattr(module, what["class"], None)
    if not inspect.isclass(cls):
        classes = sorted(n for n, v in vars(module).items()
                         if inspect.isclass(v) and callable(getattr(v, "predict", None)))
        raise AttributeError(f"{what['module']} ({getattr(module, '__file__', None)}) has no class {what['class']!r}"
                             + (f"; agent classes there: {', '.join(classes)}" if classes else ""))
    return cls


def signature_of(function: Any) -> list[dict[str, Any]] | None:
    if function is None or function is object.__init__:
        return None
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    described = []
    for p in parameters:
        one: dict[str, Any] = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            one["default"] = encode(p.default)
        described.append(one)
    return described


def describe(cls: type) -> dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    return {"class": cls.__qualname__, "module": cls.__module__, "file": getattr(module, "__file__", None),
            "python": sys.executable, "version": sys.version.split()[0],
            "methods": {name: signature_of(getattr(cls, name, None))
                        for name in ("__init__", "reset", "predict") if callable(getattr(cls, name, None))}}


def error_of(e: BaseException) -> dict[str, Any]:
    """The exception as the harness records it, its traceback without this file's frames or the import
    machinery's: from the agent's own code on."""
    shown = traceback.TracebackException.from_exception(e)
    shown.stack = traceback.StackSummary.from_list(
        [f for f in shown.stack if f.filename != __file__ and not f.filename.startswith("<frozen importlib")
         and Path(f.filename).parent != IMPORTLIB])
    return {"type": type(e).__qualname__, "module": type(e).__module__, "message": str(e),
            "traceback": "".join(shown.format())}


def die_with_parent() -> None:
    """Ends this process when the harness's is gone, even in the middle of a model call."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(harness_root: Path) -> None:
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # the agent's print() to stderr: stdout is the protocol's
    sys.stdout = sys.stderr

    def answer(message: dict[str, Any]) -> None:
        try:
            line = json.dumps(message)
        except (TypeError, ValueError) as e:  # encode() leaves only JSON; a float('nan') key and the like
            line = json.dumps({"error": error_of(e)})
        answers.write(line + "\n")
        answers.flush()

    forget_harness(harness_root)
    first = requests.readline()
    if not first:
        return
    try:
        cls = load_class(json.loads(first))
    except BaseException as e:
        answer({"error": error_of(e)})
        return
    answer({"ok": None})
    agent: Any = None
    for line in requests:
        request = json.loads(line)
        try:
            if request["op"] == "describe":
                result: Any = describe(cls)
            elif request["op"] == "init":
                agent = cls(**decode(request["kwargs"]))
                result = None
            else:
                method = getattr(agent, request["method"])
                result = encode(method(*decode(request["args"]), **decode(request["kwargs"])))
        except BaseException as e:  # the harness records it as the agent's error, traceback and all
            answer({"error": error_of(e)})
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                return
            continue
        answer({"ok": result})


if __name__ == "__main__":
    die_with_parent()
    serve(Path(sys.argv[1]).resolve())
