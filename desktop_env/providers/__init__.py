"""Providers by name: `create_provider("local", ...)`.

A provider is registered (desktop_env.extensions, kind "provider") as a callable that takes the
provider options and returns a Provider: usually the class itself. A plugin adds one with
`@provider("name")` or an `osworld.providers` entry point.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import extensions
from ..errors import ProviderError
from .base import DesktopOptions, DesktopVersions, Provider

# The built-in ones; provider_names() adds those plugins register.
PROVIDER_NAMES = ("local", "remote", "docker", "vmware", "virtualbox")

ProviderFactory = Callable[..., Provider]

# Imported when first asked for: each pulls in its own machinery (bubblewrap, docker, vmrun...).
extensions.register("provider", "local", extensions.Lazy("desktop_env.providers.local:LocalProvider"))
extensions.register("provider", "remote", extensions.Lazy("desktop_env.providers.remote:RemoteProvider"))
extensions.register("provider", "docker", extensions.Lazy("desktop_env.providers.docker:DockerProvider"))
extensions.register("provider", "vmware", extensions.Lazy("desktop_env.providers.vmware:VMwareProvider"))
extensions.register("provider", "virtualbox", extensions.Lazy("desktop_env.providers.virtualbox:VirtualBoxProvider"))


def provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Registers a Provider class (or a function of the options that returns one) as `name`."""
    return extensions.decorator("provider", name)


def builds_its_desktop(name: str) -> bool:
    """Whether the provider of this name runs the desktop this harness builds here (the local one): its apps are
    the ones `tasks coverage` checks, and its closeness to OSWorld's VM is what the replay suite measures. A VM
    provider's desktop is its image's."""
    return name == "local"


def provider_names() -> list[str]:
    """The built-in providers in their usual order (local first: the default), then plugins' by name."""
    registered = extensions.names("provider")
    return [name for name in PROVIDER_NAMES if name in registered] + \
        [name for name in registered if name not in PROVIDER_NAMES]


def _factory(name: str) -> ProviderFactory:
    try:
        factory: ProviderFactory = extensions.get("provider", name)
        return factory
    except extensions.UnknownName as e:
        raise ProviderError(f"{e}; known providers: {', '.join(provider_names())}") from None
    except extensions.ExtensionError as e:
        raise ProviderError(str(e)) from e


def provider_class(name: str) -> type[Provider] | None:
    """The Provider class registered as `name`; None for a plugin's plain function that makes one (it has
    no options of its own to check and nothing to prepare)."""
    factory = _factory(name)
    return factory if isinstance(factory, type) and issubclass(factory, Provider) else None


def create_provider(name: str, desktop: DesktopOptions | None = None, **options: Any) -> Provider:
    """The provider `name` for the run's desktop options (the provider takes what it honours) and the
    caller's own keyword arguments for it; a plugin's function gets only the latter."""
    factory = _factory(name)
    if desktop is not None and isinstance(factory, type) and issubclass(factory, Provider):
        return factory.from_options(desktop, **options)
    return factory(**options)


def check_options(name: str, desktop: DesktopOptions) -> None:
    """Raises ProviderOptionError when provider `name` can make no desktop with these options."""
    cls = provider_class(name)
    if cls is not None:
        cls.check_options(desktop)


def prepare_for(name: str, tasks: Sequence[dict[str, Any]]) -> None:
    """What provider `name` builds before any desktop of a run with these task configs starts."""
    cls = provider_class(name)
    if cls is not None:
        cls.prepare_for(tasks)


def desktop_versions_for(name: str) -> DesktopVersions:
    """What provider `name`'s desktops run, as a run records it (nothing for a plugin's plain function)."""
    cls = provider_class(name)
    return cls.desktop_versions() if cls is not None else DesktopVersions()
