"""An example getter: how many lines a file on the desktop has (None when it is not there).

Load it with `--plugin docs/examples/getter/line_count.py` and name it in a task:
    "evaluator": {"func": "exact_match",
                  "result": {"type": "example_line_count", "path": "/home/user/shopping.txt"},
                  "expected": {"type": "rule", "rules": {"expected": 3}}}
"""
from __future__ import annotations

from typing import Any

from desktop_env.evaluators.registry import getter


@getter("example_line_count")
def line_count(env: Any, config: dict) -> int | None:
    # CHANGES WITH THE EVALUATION CONTEXT: getters will take (ctx, config) and read the file with
    # the context instead of reaching into env.controller (see docs/EXTENDING.md, "A getter").
    data = env.controller.get_file(config["path"])
    if data is None:
        return None
    return len(data.decode("utf-8", errors="replace").splitlines())
