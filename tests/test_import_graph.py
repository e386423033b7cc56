"""The import graph: the project has no import cycle and no arrow from a lower layer up (LAYERS, below:
the CLI over the harness's face (its API) over its experiments over its execution over its results, over
the agents over the desktop side, whose env server stands apart), and each harness module imports alone,
reaching heavier or optional ones (such as Ray) only inside functions."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import osworld_harness

HARNESS = Path(osworld_harness.__file__).parent


def harness_modules() -> dict[str, Path]:
    """{"execution.run": its path, ...}: every module of the harness's subpackages."""
    return {".".join(path.relative_to(HARNESS).with_suffix("").parts): path
            for path in sorted(HARNESS.glob("*/*.py")) if path.stem != "__init__"}


def module_level_imports(name: str, path: Path) -> set[str]:
    """The harness modules `name` imports when it is imported (not those imported inside functions)."""
    subpackage = name.split(".")[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update(f"{subpackage}.{node.module}" if node.module else f"{subpackage}.{alias.name}"
                         for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("osworld_harness."):
            module = node.module.split(".", 1)[1]
            found.update(f"{module}.{alias.name}" if module.count(".") == 0 else module for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".", 1)[1] for a in node.names if a.name.startswith("osworld_harness."))
    return found


def test_no_harness_module_imports_itself_back():
    graph = {name: module_level_imports(name, path) for name, path in harness_modules().items()}
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
    assert "results.task_folder" in graph["execution.run"]  # the graph sees arrows between subpackages
    assert "execution.ray_backend" not in graph["execution.run"]  # Ray is reached only when asked for


def test_each_harness_module_imports_alone():
    names = [f"osworld_harness.{name}" for name in harness_modules()]
    # Each with no harness module loaded before it (other packages stay: they are not what is checked).
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n" \
             "    for loaded in [m for m in sys.modules if m.startswith('osworld_harness.')]:\n" \
             "        del sys.modules[loaded]\n" \
             "    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert importlib.import_module("osworld_harness.execution.scheduler").run_tasks


# -- the whole project: no cycle, no arrow up ---------------------------------------------------

PROJECT = HARNESS.parent
PACKAGES = ("osworld_cli", "osworld_harness", "mm_agents", "desktop_env", "scripts")
# Top to bottom: a module imports from its own layer and the layers below it, never from one above.
# A name is a module or a package (then every module under it), the longest name that fits decides.
LAYERS = (
    ("scripts",),
    ("osworld_cli", "lib_run_single"),
    ("osworld_harness",),  # the package's face: the API (docs/API.md) re-exported from the layers below
    ("osworld_harness.experiments",),
    ("osworld_harness.execution",),
    ("osworld_harness.results",),
    ("mm_agents", "desktop_env.gym_adapter"),
    ("desktop_env.desktop_env", "desktop_env.benchmark", "desktop_env.tasks"),
    ("desktop_env.providers", "desktop_env.perturb"),
    ("desktop_env.controllers", "desktop_env.evaluators"),
    ("desktop_env.resources", "desktop_env.waiting", "desktop_env.server"),
    ("desktop_env.safe_paths", "desktop_env.actions", "desktop_env.extensions", "desktop_env.user_modules"),
    ("desktop_env.errors", "desktop_env.a11y_namespaces", "desktop_env.desktop_defaults", "desktop_env"),
)


def project_modules() -> dict[str, Path]:
    found = {"lib_run_single": PROJECT / "lib_run_single.py"}
    for package in PACKAGES:
        for path in (PROJECT / package).rglob("*.py"):
            parts = path.relative_to(PROJECT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules `name` imports anywhere in it (in functions and under TYPE_CHECKING too):
    `from package import module` is an arrow to the module, not to the package."""
    def known(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(filter(None, (known(alias.name) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                module = f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else known(source)
                if module:
                    found.add(module)
    found.discard(name)
    return found


def project_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    fits = [(len(prefix), index) for index, names in enumerate(LAYERS) for prefix in names
            if module == prefix or module.startswith(prefix + ".")]
    assert fits, f"{module} is in no layer: add it to LAYERS"
    return max(fits)[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component: list[str] = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_project_imports_without_a_cycle():
    graph = project_graph()
    assert "desktop_env.errors" in graph["desktop_env.safe_paths"]  # the graph sees arrows inside the packages
    assert cycles(graph) == []


def test_no_module_imports_from_a_layer_above_its_own():
    graph = project_graph()
    upward = sorted(f"{module} -> {imported}" for module, imports in graph.items() for imported in imports
                    if layer_of(imported) < layer_of(module))
    assert upward == []


def test_the_checks_see_a_cycle_and_an_arrow_up():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("desktop_env.tasks.loader") > layer_of("osworld_harness.execution.episode") \
        > layer_of("osworld_cli.main")
    assert layer_of("osworld_harness.results.summary") > layer_of("osworld_harness.execution.run") \
        > layer_of("osworld_harness.experiments.verify")
    assert layer_of("desktop_env.safe_paths") > layer_of("desktop_env.tasks.paths")
