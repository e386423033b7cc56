"""The error of a model call the desktop cannot perform: the wire adapters, the geometry and the
commands all raise it, and the agent hands its message back to the model."""
from __future__ import annotations


class ToolError(ValueError):
    """A model call the desktop cannot perform; the message is for the model, and costs it a step."""
