"""The built-in native computer-use agents, by their --agent names (see mm_agents/loader.py)."""
from __future__ import annotations

from .agent import ComputerUseAgent
from .claude import ClaudeAdapter


class ClaudeComputerUseAgent(ComputerUseAgent):
    """Anthropic Messages with the computer tool (claude-computer-use)."""
    agent = "claude-computer-use"
    adapter = ClaudeAdapter
