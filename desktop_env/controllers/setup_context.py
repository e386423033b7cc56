"""What a setup step sees of the desktop and the task: a small, typed setup context.

Setup steps are `step(ctx: SetupContext, **parameters)`. The context holds what steps use:
the desktop's controller, the provider (for a port forwarded into the desktop), the screen
size and password that fill OSWorld's placeholders, the task's folders, and the lists where
steps leave their warnings and their waits for apps. `DesktopEnv.reset` builds it once per
task (`env.setup_context`); postconfig steps get the same one, so their warnings join the
setup's.

Steps written the old way, `step(env, **parameters)` reaching into `env.task_config` or an
attribute of their own, keep working for now: `ctx.env` is the env, and an attribute the
context does not have is looked up on the env (deprecated, with a warning).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from ..errors import ProviderError
from ..safe_paths import checked_cache_dir, task_file_of

if TYPE_CHECKING:
    from .python import PythonController


class ForwardsPorts(Protocol):
    """What setup steps ask of a provider (providers.base.Provider has it): a way into a port of the desktop."""

    def service_endpoint(self, port: int) -> tuple[str, int]: ...


@dataclass(frozen=True)
class SetupContext:
    """The desktop and the task's folders as a setup step sees them; see the module's docstring."""
    controller: PythonController
    provider: ForwardsPorts | None
    screen_size: tuple[int, int]
    client_password: str
    task_id: Any
    task_dir: str | None
    task_file: str | None
    cache_root: Path  # the task's cache folder as the env names it, checked by `cache_dir`
    cache_base: Path | None  # the cache every task's folder must be inside (None: not checked)
    # What went wrong in this task's steps without failing them (status.json's `setup_warnings`).
    warnings: list[dict] = field(default_factory=list)
    # How long each launch or open step waited for its app (status.json's `readiness.steps`).
    settle_waits: list[dict] = field(default_factory=list)
    env: Any = field(default=None, repr=False)  # for steps written the old way
    # "setup" (the task's `config`, before the agent acts) or "postconfig" (after it, before the getters).
    phase: str = "setup"

    @classmethod
    def of(cls, env: Any) -> SetupContext:
        """The context of an env-like object as it is now (its task, folders and controller); the
        warning and wait lists are the env's own (`env.setup_warnings`, `env.settle_waits`), made
        on it when it has none."""
        for name in ("setup_warnings", "settle_waits"):
            if getattr(env, name, None) is None:
                setattr(env, name, [])
        width, height = getattr(env, "screen_size", None) or DEFAULT_SCREEN_SIZE
        base = getattr(env, "cache_dir_base", None)
        # An env without a controller runs only steps that need none (a plugin's, in tests).
        return cls(controller=cast("PythonController", getattr(env, "controller", None)),
                   provider=getattr(env, "provider", None), screen_size=(width, height),
                   client_password=getattr(env, "client_password", None) or DEFAULT_PASSWORD,
                   task_id=(getattr(env, "task_config", None) or {}).get("id"),
                   task_dir=getattr(env, "task_dir", None), task_file=task_file_of(env),
                   cache_root=Path(env.cache_dir), cache_base=Path(base) if base is not None else None,
                   warnings=env.setup_warnings, settle_waits=env.settle_waits, env=env)

    @property
    def cache_dir(self) -> Path:
        """The task's cache folder, where steps put what they fetch; UnsafeTaskPath when the task's
        id made it leave the cache (an id such as '..')."""
        return checked_cache_dir(self.cache_root, self.cache_base, self.task_id, self.task_file)

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """A (host, port) on this machine that reaches TCP `port` inside the desktop."""
        if self.provider is None:
            raise ProviderError(f"no provider to reach port {port} of the desktop")
        return self.provider.service_endpoint(port)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the context does not have: the old way's `env.<anything>`.
        env = self.__dict__.get("env")
        if name.startswith("__") or env is None:
            raise AttributeError(name)
        warnings.warn(f"setup steps should use the setup context, not the env (ctx.{name}): use ctx.env.{name} "
                      f"if the step needs it", DeprecationWarning, stacklevel=2)
        return getattr(env, name)


def setup_context_for(target: Any) -> SetupContext:
    """The context of this task's steps: `target` itself when it is one, the one a DesktopEnv made
    for its current task, else one over an env-like object."""
    if isinstance(target, SetupContext):
        return target
    current = getattr(target, "setup_context", None)
    if isinstance(current, SetupContext):
        return current
    return SetupContext.of(target)
