"""An example agent: clicks the centre of the screen once, then says DONE.

Run it with `osworld run --agent docs/examples/agent/centre_click_agent.py:CentreClickAgent`.
"""
from __future__ import annotations

import io
import logging
from typing import Any

from PIL import Image


class CentreClickAgent:
    def __init__(self, action_space: str = "pyautogui", **kwargs: Any):
        # The harness passes the run's options (model, observation_type, ...) and every --agent-arg as keywords.
        if action_space != "pyautogui":
            raise ValueError(f"CentreClickAgent speaks pyautogui, not {action_space!r}")
        self.clicked = False
        self.logger = logging.getLogger(__name__)

    def reset(self, logger: logging.Logger | None = None) -> None:
        """Called before each task: forget the last one."""
        self.clicked = False
        self.logger = logger or self.logger

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        """(what the agent said, the actions to run this step)."""
        if self.clicked:
            return "I clicked already.", ["DONE"]
        width, height = Image.open(io.BytesIO(obs["screenshot"])).size
        self.clicked = True
        self.logger.info("clicking the centre of a %dx%d screen", width, height)
        return f"Clicking the centre of the {width}x{height} screen.", [f"pyautogui.click({width // 2}, {height // 2})"]
