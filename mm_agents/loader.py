"""Finding and building agents: a registered name (built-in, an installed plugin's `osworld.agents`
entry point, or `@agent("name")` in a --plugin file) or `package.module:Class` / `path/file.py:Class`.
An agent of OSWorld's (its own mm_agents or desktop_env, or --agent-python) is found and built in a process
of its own (mm_agents/agent_process.py); every other runs here."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from desktop_env import extensions
from desktop_env.user_modules import import_user_module, is_file_spec

from .agent_process import AgentProcessError, AgentRaised, RemoteTraceback, foreign_agent, process_agent_class

A = TypeVar("A", bound=type)

BUILTIN_AGENTS = {
    "oracle": "mm_agents.oracle:OracleAgent",
    "noop": "mm_agents.noop:NoopAgent",
    "replay": "mm_agents.replay:ReplayAgent",
    "human": "mm_agents.human_agent:HumanAgent",
    "prompt": "mm_agents.prompt_agent:PromptAgent",
    "tool": "mm_agents.tool_agent:ToolAgent",
    "claude-computer-use": "mm_agents.computer_use.agents:ClaudeComputerUseAgent",
    "openai-computer-use": "mm_agents.computer_use.agents:OpenAIComputerUseAgent",
    "gemini-computer-use": "mm_agents.computer_use.agents:GeminiComputerUseAgent",
    "ui-tars": "mm_agents.computer_use.agents:UITarsAgent",
    "qwen-vl": "mm_agents.computer_use.agents:QwenVLAgent",
    "planner-grounder": "mm_agents.computer_use.agents:PlannerGrounderAgent",
}
for _name, _target in BUILTIN_AGENTS.items():  # imported when first asked for: they pull in model clients
    extensions.register("agent", _name, extensions.Lazy(_target))


def agent(name: str) -> Callable[[A], A]:
    """Registers an agent class as `name` (`osworld run --agent name`)."""
    return extensions.decorator("agent", name)


class AgentLoadError(Exception):
    """The agent spec cannot be turned into an agent; the message says which part and why."""

    @property
    def fatal_cause(self) -> dict[str, str]:
        """Every task of the run would fail to build it the same way (osworld_harness.execution.breaker)."""
        return {"kind": "agent", "signature": f"agent: {self}", "message": f"the agent cannot be built: {self}"}


def _import(module_spec: str):
    try:
        return import_user_module(module_spec, "osworld_user_agent", "agent")
    except FileNotFoundError as e:
        raise AgentLoadError(str(e)) from None
    except ImportError as e:
        raise AgentLoadError(f"cannot import agent module {module_spec!r}: {e}") from e
    except Exception as e:
        if not is_file_spec(module_spec):
            raise
        raise AgentLoadError(f"importing {Path(module_spec).resolve()} failed: {type(e).__name__}: {e}") from e


def registered_agent(name: str) -> type:
    try:
        return extensions.get("agent", name)
    except extensions.UnknownName as e:
        hint = f"; did you mean {', '.join(repr(c) for c in e.close)}?" if e.close else ""
        raise AgentLoadError(f"agent {name!r} is neither a registered agent ({', '.join(extensions.names('agent'))}) "
                             f"nor of the form package.module:Class or path/to/file.py:Class{hint}") from None
    except extensions.ExtensionError as e:  # an entry point, or a built-in whose model client is missing
        raise AgentLoadError(str(e)) from e


def agent_in_module(spec: str) -> type:
    module_spec, _, class_name = spec.rpartition(":")
    module = _import(module_spec)
    cls = getattr(module, class_name, None)
    if cls is None:
        agents = sorted(name for name, value in vars(module).items() if inspect.isclass(value)
                        and callable(getattr(value, "predict", None)) and callable(getattr(value, "reset", None)))
        hint = (f"; agent classes there: {', '.join(agents)}" if agents
                else "; it defines no class with predict() and reset()")
        raise AgentLoadError(f"{module_spec!r} has no attribute {class_name!r}{hint}")
    return cls


def agent_in_process(spec: str, agent_python: str | None) -> type | None:
    """The class standing for an agent of OSWorld's, described by its own process; None for one that runs here."""
    try:
        foreign = foreign_agent(spec, agent_python)
    except AgentProcessError as e:
        raise AgentLoadError(str(e)) from e
    if foreign is None:
        return None
    try:
        return process_agent_class(foreign)
    except AgentProcessError as e:
        raise AgentLoadError(str(e)) from e
    except AgentRaised as e:
        missing = (f"; that Python ({foreign.python}) lacks what the agent imports: install it there or give "
                   "--agent-python a Python that has it") if type(e).__name__ == "ModuleNotFoundError" else ""
        cause = e.__cause__.text if isinstance(e.__cause__, RemoteTraceback) else ""
        raise AgentLoadError(f"importing {spec} in a process of its own failed: {type(e).__name__}: {e}{missing}\n"
                             f"{cause}") from e


def load_agent_class(spec: str, agent_python: str | None = None) -> type:
    """The agent's class; `agent_python`: the Python of an agent of OSWorld's (--agent-python)."""
    target = spec
    in_process = agent_in_process(spec, agent_python)
    if in_process is not None:
        cls = in_process
    elif ":" in spec and spec not in extensions.KindView("agent"):
        cls = agent_in_module(spec)
    else:
        cls = registered_agent(spec)
        if not inspect.isclass(cls):
            raise AgentLoadError(f"agent {spec!r} is registered as {cls!r}, not a class")
        target = f"{cls.__module__}:{cls.__qualname__}"
    missing = [name for name in ("predict", "reset") if not callable(getattr(cls, name, None))]
    if missing:
        raise AgentLoadError(f"agent class {target} lacks {' and '.join(missing)}(): it must implement "
                             "predict(instruction, obs) -> (response, actions) and reset(logger=None)")
    return cls


def agent_name(spec: str) -> str:
    """What an agent is called when nothing else names it: a registered name as it is, a class by its name."""
    return spec.rpartition(":")[2] if ":" in spec and spec not in extensions.KindView("agent") else spec


def constructor_parameters(cls: type[Any]) -> dict[str, inspect.Parameter]:
    """The named parameters of the agent's constructor (none for a class without one)."""
    if cls.__init__ is object.__init__:
        return {}
    return {name: p for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)}


def takes_any_keyword(cls: type[Any]) -> bool:
    """Whether the constructor takes **kwargs (so any argument name may mean something to it)."""
    if cls.__init__ is object.__init__:
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(cls.__init__).parameters.values())


def declared_defaults(spec: str, agent_python: str | None = None) -> dict[str, Any]:
    """The defaults the agent's constructor declares, by name (`model`, `observation_type`...)."""
    return {name: p.default for name, p in constructor_parameters(load_agent_class(spec, agent_python)).items()
            if p.default is not inspect.Parameter.empty}


def accepts_argument(cls: type[Any], name: str) -> bool:
    """Whether the agent's constructor takes `name` (named, or through **kwargs)."""
    if cls.__init__ is object.__init__:  # no constructor of its own: it takes no arguments at all
        return False
    params = inspect.signature(cls.__init__).parameters
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def build_agent(spec: str, *, agent_python: str | None = None, **kwargs: Any) -> Any:
    """Instantiates the agent with the kwargs its constructor accepts (all of them if it takes **kwargs); one of
    OSWorld's in its process (`agent_python`, as for load_agent_class), which ends when the agent is closed."""
    cls = load_agent_class(spec, agent_python)
    kwargs = {k: v for k, v in kwargs.items() if accepts_argument(cls, k)}
    try:
        return cls(**kwargs)
    except Exception as e:
        raise AgentLoadError(f"constructing {spec} failed: {type(e).__name__}: {e}") from e
