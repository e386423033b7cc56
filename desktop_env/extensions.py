"""Everything the harness finds by name, in one registry: getters, metrics, setup steps,
providers, agents, model clients and compare_table's rule types.

A task file or a command line names a part as a string (`"func": "compare_table"`,
`--agent oracle`, `--provider local`); `get(kind, name)` turns it into the object. Parts come
from three places, and every registration remembers which and where (module:line):

- built-in: our own modules register theirs when imported (`KINDS[kind].builtins`);
- entry points: an installed distribution declares them in the group of the kind
  (`osworld.metrics`, `osworld.agents`, ...), so `pip install my-osworld-plugin` is enough.
  An entry point's value is either a module (`my_plugin.metrics`: importing it registers its
  parts with the usual decorators) or an object (`my_plugin.agent:MyAgent`: registered under
  the entry point's name, imported the first time it is asked for);
- `--plugin FILE_OR_MODULE`: imported by `evaluators.registry.load_plugin`, registering like a module
  entry point.

Built-ins and entry points of a kind are loaded the first time that kind is looked up. A name
registered twice from two places is a DuplicateName naming both: silently replacing a metric
would change scores without a word. Re-importing or reloading the same module is not a
duplicate (the same function, from the same file, registers again). Names that OSWorld has but
this harness cannot run (a live account, the web) are kept as `unsupported` with the reason.

Only the standard library is imported here: the registry sits below everything that uses it.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.metadata
import inspect
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import DesktopEnvError
from .user_modules import import_user_module

T = TypeVar("T")


@dataclass(frozen=True)
class Kind:
    name: str
    label: str  # how an error names one: "unknown metric func 'x'"
    group: str  # the entry point group installed distributions declare parts in
    builtins: tuple[str, ...]  # modules that register the built-in parts when imported


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("getter", "getter type", "osworld.getters", ("desktop_env.evaluators.getters",)),
    Kind("metric", "metric func", "osworld.metrics", ("desktop_env.evaluators.metrics",)),
    Kind("setup_step", "setup step type", "osworld.setup_steps", ("desktop_env.controllers.setup",)),
    Kind("provider", "provider", "osworld.providers", ("desktop_env.providers",)),
    Kind("agent", "agent", "osworld.agents", ("mm_agents.loader",)),
    Kind("model_client", "model client", "osworld.model_clients", ("mm_agents.llm",)),
    Kind("table_rule", "compare_table rule type", "osworld.table_rules", ("desktop_env.evaluators.metrics.table",)),
)}

# Registrations from these packages are the harness's own.
BUILTIN_PACKAGES = frozenset({"desktop_env", "mm_agents", "osworld_harness", "osworld_cli"})
BUILTIN = "built-in"


class ExtensionError(DesktopEnvError):
    """Something wrong with a registered part or the way it was registered."""


class UnknownName(ExtensionError, KeyError):
    """A name that nothing registered; the message lists close names."""

    def __init__(self, kind: str, name: str, known: list[str]):
        close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")
        self.kind = kind
        self.name = name
        self.close = close

    def __str__(self) -> str:
        return self.args[0]


class UnsupportedName(UnknownName):
    """A name from OSWorld's set that we know but cannot run here; `reason` says why."""

    def __init__(self, kind: str, name: str, reason: str):
        KeyError.__init__(self, f"{kind} {name!r} is not supported here: {reason}")
        self.kind = kind
        self.name = name
        self.close = []
        self.reason = reason


class DuplicateName(ExtensionError):
    """Two places register one name of one kind."""

    def __init__(self, kind: str, name: str, first: Entry, second: Entry):
        super().__init__(f"{KINDS[kind].label} {name!r} is registered twice: at {first.place} and at {second.place}")
        self.kind, self.name, self.first, self.second = kind, name, first, second


class EntryPointError(ExtensionError):
    """An installed distribution's entry point that cannot be loaded."""


class UnknownKind(ExtensionError, ValueError):
    def __init__(self, kind: str):
        super().__init__(f"unknown extension kind {kind!r}; kinds: {', '.join(KINDS)}")


@dataclass(frozen=True)
class Lazy:
    """A `module:attribute` imported the first time its name is looked up (agents and providers
    import heavy libraries; listing them must not)."""
    target: str
    entry_point: str = ""  # "group: name = value of dist", when it came from one

    def load(self) -> Any:
        module_name, _, attribute = self.target.partition(":")
        try:
            value = importlib.import_module(module_name)
            for part in filter(None, attribute.split(".")):
                value = getattr(value, part)
        except Exception as e:
            what = f"entry point {self.entry_point}" if self.entry_point else repr(self.target)
            raise EntryPointError(f"cannot load {what}: {type(e).__name__}: {e}") from e
        return value


@dataclass
class Entry:
    kind: str
    name: str
    obj: Any
    where: str  # module:line of the registration (or the entry point's value)
    source: str  # "built-in", "distribution X (entry point ...)", "--plugin FILE", "module M"
    identity: tuple = field(repr=False, default=())

    @property
    def place(self) -> str:
        return self.where if self.source == BUILTIN else f"{self.where} ({self.source})"


@dataclass(frozen=True)
class Unsupported:
    kind: str
    name: str
    reason: str


_entries: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_unsupported: dict[str, dict[str, Unsupported]] = {kind: {} for kind in KINDS}
_builtins_loaded: set[str] = set()
_loaded: set[str] = set()
# Imports happen outside _lock (a module import holds Python's own lock for that module: holding ours
# too could deadlock two threads); what this thread is loading now stops it from going round in circles.
_lock = threading.Lock()
_this_thread = threading.local()


def _kind(kind: str) -> Kind:
    try:
        return KINDS[kind]
    except KeyError:
        raise UnknownKind(kind) from None


def _caller(depth: int) -> tuple[str, str, int]:
    """(module, file, line) of the frame `depth` levels above this function."""
    frame = sys._getframe(depth)
    return frame.f_globals.get("__name__", "?"), frame.f_code.co_filename, frame.f_lineno


def _origin(obj: Any, stacklevel: int) -> tuple[str, tuple]:
    """Where `obj` is registered from, and what makes a second registration the same one: a function
    or class defined in the same file under the same name (a re-import or reload), or the same target."""
    depth = stacklevel + 2  # above _origin and register
    if isinstance(obj, Lazy):  # where it will come from says more than the line that names it
        return obj.target, ("lazy", obj.target)
    code = getattr(obj, "__code__", None)
    if code is not None and hasattr(obj, "__qualname__"):
        return f"{obj.__module__}:{code.co_firstlineno}", (code.co_filename, obj.__qualname__)
    module, filename, line = _caller(depth)
    if inspect.isclass(obj):
        defined_in = getattr(sys.modules.get(obj.__module__), "__file__", None) or obj.__module__
        return f"{module}:{line}", (defined_in, obj.__qualname__)
    return f"{module}:{line}", (filename, line)


def _importing() -> list[str]:
    """What this thread is importing now for the registry: an entry point or a --plugin file."""
    return _this_thread.__dict__.setdefault("sources", [])


def _source(where: str) -> str:
    module = where.rpartition(":")[0]
    if module.split(".")[0] in BUILTIN_PACKAGES:
        return BUILTIN
    return _importing()[-1] if _importing() else f"module {module}"


def register(kind: str, name: str, obj: T, *, stacklevel: int = 1, where: str = "", source: str = "") -> T:
    """Registers `obj` as `kind` `name` and returns it. `stacklevel` is how many frames up the
    registration is written (1: the caller; a decorator's wrapper passes 2 or more)."""
    _kind(kind)
    if not isinstance(name, str) or not name:
        raise ExtensionError(f"a {KINDS[kind].label} name must be a non-empty string, got {name!r}")
    found_where, identity = _origin(obj, stacklevel)
    where = where or found_where
    entry = Entry(kind, name, obj, where, source or _source(where), identity)
    if entry.source != BUILTIN:  # so that a plugin taking a built-in name is the one told, not the built-in module
        _load_builtins(kind)  # (a built-in module never imports another kind's here: threads could deadlock)
    with _lock:
        previous = _entries[kind].get(name)
        if previous is not None and previous.identity != entry.identity and previous.obj is not obj:
            raise DuplicateName(kind, name, previous, entry)
        _entries[kind][name] = entry
    return obj


def decorator(kind: str, name: str) -> Callable[[T], T]:
    """`@decorator("metric", "my_metric")` registers the function or class it decorates."""
    _kind(kind)

    def register_it(obj: T) -> T:
        return register(kind, name, obj, stacklevel=2)
    return register_it


def unsupported(kind: str, name: str, reason: str) -> None:
    """Declares an OSWorld name this harness knows but cannot run, and why."""
    _kind(kind)
    _unsupported[kind][name] = Unsupported(kind, name, reason)


@contextlib.contextmanager
def replaced(kind: str, name: str, obj: Any) -> Iterator[Any]:
    """Puts `obj` in place of `name` for the duration of the block, then restores the original: an
    override on purpose (rescoring offline), unlike a second registration. Yields the original."""
    original = get(kind, name)
    with _lock:
        entry = _entries[kind][name]
        _entries[kind][name] = Entry(kind, name, obj, entry.where, entry.source, entry.identity)
    try:
        yield original
    finally:
        with _lock:
            _entries[kind][name] = entry


@contextlib.contextmanager
def loading_from(source: str) -> Iterator[None]:
    """Registrations made inside the block (by a module it imports) come from `source`."""
    _importing().append(source)
    try:
        yield
    finally:
        _importing().pop()


@contextlib.contextmanager
def _once_per_thread(step: str, kind: str) -> Iterator[bool]:
    """Yields False when this thread is already inside `step` for `kind` (a module it is importing
    registers, which asks for the kind again), True otherwise."""
    busy = _this_thread.__dict__.setdefault("busy", set())
    if (step, kind) in busy:
        yield False
        return
    busy.add((step, kind))
    try:
        yield True
    finally:
        busy.discard((step, kind))


def _load_builtins(kind: str) -> None:
    if kind in _builtins_loaded:
        return
    with _once_per_thread("builtins", kind) as first:
        if first:  # import_module waits while another thread imports the same module
            for module in KINDS[kind].builtins:
                importlib.import_module(module)
            _builtins_loaded.add(kind)


def ensure_loaded(kind: str) -> None:
    """Imports the kind's built-in modules and loads its entry points, once."""
    info = _kind(kind)
    if kind in _loaded:
        return
    with _once_per_thread("entry points", kind) as first:
        if first:
            _load_builtins(kind)
            _load_entry_points(info)
            _loaded.add(kind)


def _load_entry_points(info: Kind) -> None:
    for entry_point in importlib.metadata.entry_points(group=info.group):
        dist = entry_point.dist
        origin = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        described = f"{info.group}: {entry_point.name} = {entry_point.value} of {origin}"
        source = f"entry point of {origin}"
        if entry_point.attr is None:  # a module whose import registers its parts
            try:
                with loading_from(source):
                    importlib.import_module(entry_point.module)
            except ExtensionError:
                raise
            except Exception as e:
                raise EntryPointError(f"cannot load entry point {described}: {type(e).__name__}: {e}") from e
        else:
            register(info.name, entry_point.name, Lazy(entry_point.value, described),
                     where=f"{entry_point.value}", source=source)


def _entry(kind: str, name: str) -> Entry:
    info = _kind(kind)
    ensure_loaded(kind)
    entry = _entries[kind].get(name)
    if entry is not None:
        return entry
    if name in _unsupported[kind]:
        raise UnsupportedName(info.label, name, _unsupported[kind][name].reason)
    raise UnknownName(info.label, name, sorted(_entries[kind]))


def get(kind: str, name: str) -> Any:
    """The object registered as `kind` `name` (imported now if it was registered lazily)."""
    entry = _entry(kind, name)
    if isinstance(entry.obj, Lazy):
        entry.obj = entry.obj.load()
    return entry.obj


def names(kind: str) -> list[str]:
    ensure_loaded(kind)
    return sorted(_entries[kind])


def entries(kind: str) -> list[Entry]:
    """Every registration of the kind, by name, with where it comes from."""
    ensure_loaded(kind)
    return [_entries[kind][name] for name in sorted(_entries[kind])]


def unsupported_entries(kind: str) -> list[Unsupported]:
    """Known but unsupported names that nothing registered."""
    ensure_loaded(kind)
    return [u for name, u in sorted(_unsupported[kind].items()) if name not in _entries[kind]]


class UnsupportedView(Mapping[str, str]):
    """name -> reason for the kind's unsupported names, as the registry has them now."""

    def __init__(self, kind: str):
        self.kind = _kind(kind).name

    def __getitem__(self, name: str) -> str:
        return _unsupported[self.kind][name].reason

    def __iter__(self) -> Iterator[str]:
        return iter(list(_unsupported[self.kind]))

    def __len__(self) -> int:
        return len(_unsupported[self.kind])


class KindView(Mapping[str, Any]):
    """name -> object for one kind, looked up in the registry at each use (built-ins and plugins)."""

    def __init__(self, kind: str):
        self.kind = _kind(kind).name

    def __getitem__(self, name: str) -> Any:
        try:
            return get(self.kind, name)
        except UnknownName:
            raise KeyError(name) from None

    def __contains__(self, name: object) -> bool:
        ensure_loaded(self.kind)
        return name in _entries[self.kind]

    def __iter__(self) -> Iterator[str]:
        return iter(names(self.kind))

    def __len__(self) -> int:
        return len(names(self.kind))


class PluginError(ExtensionError, ValueError):
    """A plugin module that cannot be imported; the message names it and why."""


def load_plugin(spec: str) -> None:
    """Imports a user module that registers parts (getters, metrics, setup steps, providers, agents):
    a dotted name or a .py path."""
    try:
        with loading_from(f"--plugin {spec}"):
            import_user_module(spec, "osworld_plugin", "plugin")
    except ExtensionError as e:  # it registers a name another place has
        raise PluginError(f"loading {spec!r}: {e}") from e
    except FileNotFoundError as e:
        raise PluginError(str(e)) from None
    except ImportError as e:
        raise PluginError(f"cannot import {spec!r}: {e}") from e
    except Exception as e:  # the plugin's own code failed while it was imported
        raise PluginError(f"importing {spec!r} failed: {type(e).__name__}: {e}") from e
