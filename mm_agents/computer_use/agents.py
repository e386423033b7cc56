"""The built-in native computer-use agents, by their --agent names (see mm_agents/loader.py)."""
from __future__ import annotations

from .agent import ComputerUseAgent
from .claude import ClaudeAdapter
from .gemini import GeminiComputerUseAdapter
from .openai_cua import OpenAIComputerUseAdapter
from .planner_grounder import PlannerGrounderAdapter
from .qwen import QwenAdapter
from .ui_tars import UITarsAdapter


class ClaudeComputerUseAgent(ComputerUseAgent):
    """Anthropic Messages with the computer tool (claude-computer-use)."""
    agent = "claude-computer-use"
    adapter = ClaudeAdapter


class OpenAIComputerUseAgent(ComputerUseAgent):
    """OpenAI Responses with computer_use_preview or computer (openai-computer-use)."""
    agent = "openai-computer-use"
    adapter = OpenAIComputerUseAdapter


class GeminiComputerUseAgent(ComputerUseAgent):
    """Gemini generate_content with the ComputerUse tool (gemini-computer-use)."""
    agent = "gemini-computer-use"
    adapter = GeminiComputerUseAdapter


class UITarsAgent(ComputerUseAgent):
    """UI-TARS's Thought/Action grammar on an OpenAI-compatible server (ui-tars)."""
    agent = "ui-tars"
    adapter = UITarsAdapter


class QwenVLAgent(ComputerUseAgent):
    """Qwen-VL's computer_use function in <tool_call> tags on an OpenAI-compatible server (qwen-vl)."""
    agent = "qwen-vl"
    adapter = QwenAdapter


class PlannerGrounderAgent(ComputerUseAgent):
    """A planner model names targets in words, a grounding model points at them (planner-grounder)."""
    agent = "planner-grounder"
    adapter = PlannerGrounderAdapter
