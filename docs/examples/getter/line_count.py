"""An example getter: how many lines a file on the desktop has (None when it is not there).

Load it with `--plugin docs/examples/getter/line_count.py` and name it in a task:
    "evaluator": {"func": "exact_match",
                  "result": {"type": "example_line_count", "path": "/home/user/shopping.txt"},
                  "expected": {"type": "rule", "rules": {"expected": 3}}}
"""
from __future__ import annotations

from desktop_env.evaluators.context import EvalContext
from desktop_env.evaluators.registry import getter


@getter("example_line_count")
def line_count(ctx: EvalContext, config: dict) -> int | None:
    # Through the context, never the env: the call and its answer are recorded, so
    # `osworld rescore` can replay this getter offline.
    data = ctx.read_file(config["path"])
    if data is None:
        return None
    return len(data.decode("utf-8", errors="replace").splitlines())
