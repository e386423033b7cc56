"""Which desktops the live view refuses, and why, before it starts anything in them."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_env.live_view.desktop import start_vnc
from desktop_env.live_view.server import LiveViewUnavailable
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.remote import RemoteProvider


def test_a_desktop_on_the_host_s_network_is_refused():
    env = SimpleNamespace(provider=LocalProvider(network=True), controller=None)
    with pytest.raises(LiveViewUnavailable, match="network namespace"):
        start_vnc(env)


def test_a_desktop_of_another_provider_is_refused():
    env = SimpleNamespace(provider=RemoteProvider("http://127.0.0.1:5000"), controller=None)
    with pytest.raises(LiveViewUnavailable, match="local provider, not RemoteProvider"):
        start_vnc(env)
