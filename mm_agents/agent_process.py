"""OSWorld's agents as they are, each in a process of its own (issue 42).

This harness's top-level `mm_agents` and `desktop_env` have the names of OSWorld's, so an agent of OSWorld's
cannot be imported beside them: its `from mm_agents.prompts import ...` would find ours. Such an agent runs in
another Python process whose path has the user's packages and none of ours (agent_process_main.py, run with
`python -I`), its constructor, reset() and predict() called across a pipe, one JSON line per call; the
screenshot crosses as base64 PNG bytes, the accessibility tree as text, tuples as tuples.

An agent is OSWorld's (`foreign_agent`) when it is given with --agent-python, or is a file in a folder that has
a `mm_agents/` or `desktop_env/` of its own (a checkout: that folder goes first on the path), or is
`mm_agents.X:Class` / `desktop_env.X:Class` naming a module that is not ours (found in a checkout on
PYTHONPATH). Its class is described by the process (its constructor's, reset's and predict's signatures) so the
checks before a run read it as they read a class of ours; an exception raised in it is raised here under its
own type's name with its traceback; a process that dies is an AgentProcessDied naming its exit status and the
last lines of its stderr, which is otherwise the task's log. The process ends with the agent (close(), or when
it is collected), and by itself when the harness's process is gone.
"""
from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .agent_process_main import decode, encode

HARNESS_ROOT = Path(__file__).resolve().parents[1]
MAIN = Path(__file__).with_name("agent_process_main.py")
OSWORLD_PACKAGES = ("mm_agents", "desktop_env")
STDERR_LINES = 30  # kept for the message of a process that died
log = logging.getLogger("osworld.agent_process")


class AgentProcessError(Exception):
    """The agent's process could not be started or asked; the message says which Python and why."""


class AgentProcessDied(AgentProcessError):
    """The agent's process ended while it was being asked something."""


class AgentRaised(Exception):
    """An exception raised in the agent's process, under its own type's name (a subclass made per type)."""


class RemoteTraceback(Exception):
    """The traceback of the exception in the agent's process: shown as the cause of the one raised here."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


@functools.cache
def raised_type(module: str, name: str) -> type[AgentRaised]:
    """A class named as the agent's exception type (ValueError, openai.APIError...), so its record reads alike."""
    return type(name, (AgentRaised,), {"__module__": module, "__qualname__": name})


@dataclass(frozen=True)
class ForeignAgent:
    """How to load an agent of OSWorld's in its own process: with `python`, `path` first on sys.path, then
    `module` (imported by name, or from `file`) and its `class_name`."""
    spec: str
    python: str
    path: tuple[str, ...]
    module: str
    file: str | None
    class_name: str
    cwd: str | None

    def load_message(self) -> dict[str, Any]:
        return {"path": list(self.path), "module": self.module, "file": self.file, "class": self.class_name}


def python_of(given: str) -> str:
    """--agent-python's interpreter: the file given, or a venv folder's bin/python."""
    path = Path(given).expanduser()
    if path.is_dir():
        path = path / "bin" / "python"
    if not path.is_file() or not os.access(path, os.X_OK):
        raise AgentProcessError(f"--agent-python {given}: {path} is not a Python interpreter (a venv's bin/python, "
                                "or the venv's folder)")
    return str(path.absolute())


def checkout_root(file: Path) -> Path | None:
    """The nearest folder above `file` with a `mm_agents` or `desktop_env` package of its own that is not ours."""
    for folder in file.parents:
        if folder == HARNESS_ROOT:
            return None
        if any((folder / name / "__init__.py").is_file() for name in OSWORLD_PACKAGES):
            return folder
    return None


def pythonpath_entries() -> list[str]:
    """PYTHONPATH's folders but this harness's (the agent process runs isolated, so they are passed on)."""
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    return [str(Path(e).resolve()) for e in entries if Path(e).resolve() != HARNESS_ROOT]


def module_in_checkout(module: str) -> str | None:
    """The PYTHONPATH folder (an OSWorld checkout) that has `module` (mm_agents.agent), if one has."""
    relative = Path(*module.split("."))
    for entry in pythonpath_entries():
        if (Path(entry) / relative).with_suffix(".py").is_file() or (Path(entry) / relative / "__init__.py").is_file():
            return entry
    return None


def is_ours(module: str) -> bool:
    import importlib.util  # noqa: PLC0415  (only for mm_agents.X and desktop_env.X specs)

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    return origin is not None and HARNESS_ROOT in Path(origin).resolve().parents


def foreign_agent(spec: str, agent_python: str | None) -> ForeignAgent | None:
    """How `spec` runs in a process of its own, or None for an agent that runs here (one of ours, or a user's
    that does not bring its own mm_agents or desktop_env)."""
    if ":" not in spec:
        if agent_python:
            raise AgentProcessError(f"--agent-python runs an agent given as package.module:Class or "
                                    f"path/file.py:Class in another Python; {spec!r} is a registered agent of this "
                                    "harness, which runs in its own process")
        return None
    module_spec, _, class_name = spec.rpartition(":")
    if module_spec.endswith(".py") or "/" in module_spec:
        file = Path(module_spec).expanduser().resolve()
        root = checkout_root(file)
        if root is None and agent_python is None:
            return None
        if not file.is_file():
            raise AgentProcessError(f"agent file not found: {file}")
        python = python_of(agent_python) if agent_python else sys.executable
        if root is not None:
            relative = file.relative_to(root).with_suffix("")
            in_package = all((root / Path(*relative.parts[:i]) / "__init__.py").is_file()
                             for i in range(1, len(relative.parts)))
            module, by_file = (".".join(relative.parts), None) if in_package else (f"osworld_user_agent_{file.stem}",
                                                                                   str(file))
            return ForeignAgent(spec, python, tuple(dict.fromkeys([str(root), *pythonpath_entries()])), module,
                                by_file, class_name, str(root))
        return ForeignAgent(spec, python, tuple(dict.fromkeys([str(file.parent), *pythonpath_entries()])),
                            f"osworld_user_agent_{file.stem}", str(file), class_name, None)
    top = module_spec.split(".")[0]
    if agent_python:
        return ForeignAgent(spec, python_of(agent_python), tuple(pythonpath_entries()), module_spec, None,
                            class_name, None)
    if top not in OSWORLD_PACKAGES or is_ours(module_spec):
        return None
    checkout = module_in_checkout(module_spec)
    if checkout is None:
        raise AgentProcessError(
            f"{module_spec} is not a module of this harness (its agents are named in `osworld plugins`); an agent "
            f"of OSWorld's runs in a process of its own: give --agent-python with a Python that has OSWorld's "
            f"package (pip install desktop-env), or the agent's file in an OSWorld checkout "
            f"(path/to/OSWorld/{module_spec.replace('.', '/')}.py:{class_name}), or put the checkout on PYTHONPATH")
    return ForeignAgent(spec, sys.executable, tuple(dict.fromkeys([checkout, *pythonpath_entries()])), module_spec,
                        None, class_name, checkout)


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:  # a request left unsent in the buffer of a pipe that is gone
                pass


class AgentProcess:
    """One Python process holding one agent of OSWorld's, asked one thing at a time."""

    def __init__(self, agent: ForeignAgent):
        self.agent = agent
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.logger: logging.Logger = log
        self.lock = threading.Lock()
        try:
            self.process = subprocess.Popen(
                [agent.python, "-I", str(MAIN), str(HARNESS_ROOT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", cwd=agent.cwd,
                start_new_session=True)  # a Ctrl+C reaches the harness, which ends it
        except OSError as e:
            raise AgentProcessError(f"cannot start the agent's process with {agent.python}: {e}") from e
        self._finalizer = weakref.finalize(self, _stop, self.process)
        threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True,
                         name=f"agent-stderr-{self.process.pid}").start()
        self._ask(agent.load_message(), f"importing {agent.spec}")

    def _read_stderr(self, stream: IO[str]) -> None:
        for line in stream:
            line = line.rstrip("\n")
            self.stderr_tail.append(line)
            self.logger.info("agent: %s", line)

    def _ask(self, message: dict[str, Any], doing: str) -> Any:
        with self.lock:
            stdin, stdout = self.process.stdin, self.process.stdout
            assert stdin is not None and stdout is not None  # both piped
            try:
                stdin.write(json.dumps(message) + "\n")
                stdin.flush()
                line = stdout.readline()
            except (BrokenPipeError, ValueError, OSError):  # a closed pipe: the process is gone
                line = ""
            if not line:
                raise self._died(doing)
        answer = json.loads(line)
        if "error" in answer:
            raise remote_exception(answer["error"])
        return decode(answer["ok"])

    def _died(self, doing: str) -> AgentProcessDied:
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        how = ("did not answer and closed its output" if status is None else
               f"was killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}")
        tail = "\n".join(self.stderr_tail) or "(nothing)"
        return AgentProcessDied(f"the agent's process (pid {self.process.pid}, {self.agent.python}) {how} while "
                                f"{doing}; the last lines of its stderr:\n{tail}")

    def describe(self) -> dict[str, Any]:
        return self._ask({"op": "describe"}, f"describing {self.agent.spec}")

    def construct(self, kwargs: dict[str, Any]) -> None:
        self._ask({"op": "init", "kwargs": encode(kwargs)}, f"constructing {self.agent.spec}")

    def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self._ask({"op": "call", "method": method, "args": encode(list(args)), "kwargs": encode(kwargs)},
                         f"answering {method}()")

    def close(self) -> None:
        self._finalizer()


def remote_exception(error: dict[str, Any]) -> AgentRaised:
    """The agent process's exception as one raised here: its type's name and message, its traceback the cause."""
    module = "builtins" if error["module"] in ("builtins", "__main__") else error["module"]
    exception = raised_type(module, error["type"])(error["message"])
    exception.__cause__ = RemoteTraceback(error["traceback"])
    return exception


def signature_from(described: list[dict[str, Any]] | None) -> inspect.Signature:
    if described is None:
        return inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return inspect.Signature([inspect.Parameter(p["name"], inspect._ParameterKind[p["kind"]],
                                                default=decode(p["default"]) if "default" in p
                                                else inspect.Parameter.empty) for p in described])


class ProcessAgent:
    """An agent of OSWorld's seen from here: construct it, reset() and predict() it in its process. A logger
    passed to reset() is where its stderr (its own logging, its prints) goes."""

    foreign: ForeignAgent
    described: dict[str, Any]

    def __init__(self, **kwargs: Any):
        self.process = AgentProcess(self.foreign)
        try:
            self.process.construct(kwargs)
        except BaseException:
            self.process.close()
            raise

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        for value in (*args, *kwargs.values()):
            if isinstance(value, logging.Logger):
                self.process.logger = value
        return self.process.call("reset", args, kwargs)

    def predict(self, *args: Any, **kwargs: Any) -> Any:
        return self.process.call("predict", args, kwargs)

    def close(self) -> None:
        self.process.close()


def forwarding(name: str, signature: inspect.Signature) -> Any:
    """ProcessAgent's method `name`, with the signature of the agent's own (what the checks before a run read)."""
    method = getattr(ProcessAgent, name)

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        return method(self, *args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__signature__ = signature  # type: ignore[attr-defined]
    return forward


@functools.cache
def process_agent_class(agent: ForeignAgent) -> type[ProcessAgent]:
    """A class standing for the agent's own: its name, and its constructor's, reset's and predict's signatures
    as the agent's process describes them (the process that describes it ends here)."""
    process = AgentProcess(agent)
    try:
        described = process.describe()
    finally:
        process.close()
    methods = described["methods"]
    namespace: dict[str, Any] = {"foreign": agent, "described": described, "__module__": described["module"],
                                 "__qualname__": described["class"],
                                 "__doc__": f"{agent.spec}, in a process of its own ({described['python']}, "
                                            f"Python {described['version']}; {described['file']})"}
    for name in ("__init__", "reset", "predict"):
        if name == "__init__" or name in methods:
            namespace[name] = forwarding(name, signature_from(methods.get(name)))
    for name in ("reset", "predict"):
        if name not in methods:  # the checks say it lacks one
            namespace[name] = None
    return type(described["class"], (ProcessAgent,), namespace)
