"""What one local desktop is made with: screen, network, password, forwarded ports, components, the warm
spare, limits and the public listener's token."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ...desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from ...server.session import DESKTOP_COMPONENTS
from .limits import DesktopLimits


@dataclass
class LocalDesktopConfig:
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    network: bool = False
    client_password: str = DEFAULT_PASSWORD
    # Chrome's debugging port, VLC's web interface, the live view's VNC server (desktop_env/live_view/desktop.py)
    forward_ports: tuple[int, ...] = (9222, 8080, 5900)
    desktop_components: tuple[str, ...] = DESKTOP_COMPONENTS
    start_timeout: float = 60.0
    # Boot the next desktop while a task runs on this one, so that a reset is a switch to a
    # ready desktop (GNOME Shell takes seconds to start). Costs one idle desktop's memory and
    # a boot's CPU. True: from the start, and again at each revert; "lazy": from the first revert
    # on, and only once the agent's first action was carried out (agent_started), so that a desktop
    # used for one task only (a one-task run, a test) never pays for a spare it would not use,
    # nor one whose task was set up and scored without an action, while a run's worker pays one
    # cold boot (its second task's) per run; the spare's boot then runs while the agent thinks,
    # never beside the task's setup, whose steps OSWorld times with fixed sleeps. DesktopEnv,
    # which resets once per task, asks for "lazy".
    warm_spare: bool | Literal["lazy"] = False
    limits: DesktopLimits = field(default_factory=DesktopLimits)
    # Required of every request on the public (TCP) listener when set; `expose_server`
    # refuses a non-loopback address without one.
    public_token: str | None = None
