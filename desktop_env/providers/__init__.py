"""Providers by name: `create_provider("local", ...)`.

A provider is registered (desktop_env.extensions, kind "provider") as a callable that takes the
provider options and returns a Provider: usually the class itself. A plugin adds one with
`@provider("name")` or an `osworld.providers` entry point.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import extensions
from ..errors import ProviderError
from .base import Provider

# The built-in ones; provider_names() adds those plugins register.
PROVIDER_NAMES = ("local", "remote", "docker", "vmware", "virtualbox")

ProviderFactory = Callable[..., Provider]

# Imported when first asked for: each pulls in its own machinery (bubblewrap, docker, vmrun...).
extensions.register("provider", "local", extensions.Lazy("desktop_env.providers.local:LocalProvider"))
extensions.register("provider", "docker", extensions.Lazy("desktop_env.providers.docker:DockerProvider"))
extensions.register("provider", "vmware", extensions.Lazy("desktop_env.providers.vmware:VMwareProvider"))
extensions.register("provider", "virtualbox", extensions.Lazy("desktop_env.providers.virtualbox:VirtualBoxProvider"))


def provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Registers a Provider class (or a function of the options that returns one) as `name`."""
    return extensions.decorator("provider", name)


@provider("remote")
def remote_provider(**options: Any) -> Provider:
    from .remote import RemoteProvider
    if not options.get("url"):
        raise ProviderError("provider 'remote' needs the env server's URL (path_to_vm or url)")
    return RemoteProvider(options["url"])


def provider_names() -> list[str]:
    """The built-in providers in their usual order (local first: the default), then plugins' by name."""
    registered = extensions.names("provider")
    return [name for name in PROVIDER_NAMES if name in registered] + \
        [name for name in registered if name not in PROVIDER_NAMES]


def create_provider(name: str, **options: Any) -> Provider:
    try:
        factory = extensions.get("provider", name)
    except extensions.UnknownName as e:
        raise ProviderError(f"{e}; known providers: {', '.join(provider_names())}") from None
    except extensions.ExtensionError as e:
        raise ProviderError(str(e)) from e
    return factory(**options)
