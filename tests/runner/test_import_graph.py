"""The runner's modules import each other without cycles (imports at module level; those inside a
function run later and are how a module reaches a heavier or optional one, such as Ray)."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import runner

RUNNER = Path(runner.__file__).parent


def module_level_imports(path: Path) -> set[str]:
    """The runner modules `path` imports when it is imported (not those imported inside functions)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add(node.module or "")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("runner."):
            found.add(node.module.split(".", 1)[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".", 1)[1] for a in node.names if a.name.startswith("runner."))
    return {name.split(".")[0] for name in found if name}


def test_no_runner_module_imports_itself_back():
    graph = {path.stem: module_level_imports(path) for path in RUNNER.glob("*.py") if path.stem != "__init__"}
    cycles = []

    def visit(module: str, trail: list[str]) -> None:
        for imported in sorted(graph.get(module, ())):
            if imported in trail:
                cycles.append(" -> ".join(trail[trail.index(imported):] + [imported]))
            else:
                visit(imported, trail + [imported])

    for module in graph:
        visit(module, [module])
    assert cycles == []
    assert "ray_backend" not in graph["run"]  # Ray is reached only when asked for


def test_each_runner_module_imports_alone():
    names = sorted(f"runner.{p.stem}" for p in RUNNER.glob("*.py") if p.stem != "__init__")
    # Each with no runner module loaded before it (other packages stay: they are not what is checked).
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n" \
             "    for loaded in [m for m in sys.modules if m.startswith('runner.')]:\n        del sys.modules[loaded]\n" \
             "    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert importlib.import_module("runner.scheduler").run_tasks
