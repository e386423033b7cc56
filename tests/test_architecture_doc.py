"""docs/ARCHITECTURE.md names every module of the installed packages, so it follows the code.

The packages are those setup.cfg installs ([options.packages.find] include), read from the tree, not
listed here. A module is named when either
- the Layout section's tree lists it under its folders (`osworld_harness/`, `results/` then, indented
  below them, `summary.py`; several names on one line are separated by commas; a package is its folder,
  `llm/`), or
- the page holds its shortest unique path anywhere: the fewest trailing parts of its path that no
  other module of those packages ends with (`summary.py`, but `tasks/loader.py` since `loader.py` is
  two modules; a package's `__init__.py` is its folder, `llm/`), or the dotted form of those parts
  (`tasks.loader`). A name inside a longer word does not count (`safe_paths.py` does not name
  `paths.py`); a longer path ending in it does.
"""
from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def installed_packages() -> list[str]:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    patterns = setup["options.packages.find"]["include"].split()
    return sorted({pattern.rstrip("*").rstrip(".") for pattern in patterns})


def module_parts() -> dict[Path, tuple[str, ...]]:
    """Each module's path parts from the repository's root; a package's __init__.py is its folder ("llm/")."""
    found = {}
    for package in installed_packages():
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            found[path] = (*parts[:-2], parts[-2] + "/") if parts[-1] == "__init__.py" else parts
    return found


def shortest_unique(parts: tuple[str, ...], others: list[tuple[str, ...]]) -> tuple[str, ...]:
    for length in range(1, len(parts) + 1):
        tail = parts[-length:]
        if not any(other[-length:] == tail for other in others):
            return tail
    return parts


def spellings(tail: tuple[str, ...]) -> list[str]:
    path = "/".join(tail)
    dotted = path.rstrip("/").removesuffix(".py").replace("/", ".")
    return [path, dotted] if "." in dotted else [path]


def is_named(spelling: str, text: str) -> bool:
    # Not part of a longer word or name (`xtasks/loader.py`, `loader.pyc`); a longer path ending in it is fine.
    return re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", text) is not None


def layout_tree(text: str) -> set[str]:
    """The paths the Layout section's tree lists: each name joined to the folders above it (a folder
    without its trailing slash)."""
    block = re.search(r"^## Layout\n.*?```\n(.*?)```", text, flags=re.S | re.M)
    assert block, "docs/ARCHITECTURE.md has a ## Layout section with its tree in a ``` block"
    listed: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, name/) of the folders the next line may be in
    for line in block.group(1).splitlines():
        indent = len(line) - len(line.lstrip())
        folders = [(depth, name) for depth, name in folders if depth < indent]
        names = [name.strip() for name in re.split(r"\s{2,}", line.strip())[0].split(",")]
        for name in filter(None, names):
            listed.add(("".join(folder for _, folder in folders) + name).rstrip("/"))
        if len(names) == 1 and re.fullmatch(r"[\w.-]+/", names[0]):
            folders.append((indent, names[0]))
    return listed


def unnamed_modules() -> list[str]:
    text = ARCHITECTURE.read_text()
    tree = layout_tree(text)
    modules = module_parts()
    missing = []
    for path, parts in modules.items():
        others = [other for other_path, other in modules.items() if other_path != path]
        tail = shortest_unique(parts, others)
        if "/".join(part.rstrip("/") for part in parts) in tree:
            continue
        if not any(is_named(spelling, text) for spelling in spellings(tail)):
            missing.append(f"{path.relative_to(ROOT)} (name it as {'/'.join(tail)!r})")
    return missing


def test_the_layout_tree_joins_names_to_their_folders():
    text = "## Layout\n\n```\ntop/\n  a.py, b.py  what they do,\n              wrapped\n  sub/\n    c.py\n  d.py\n```\n"
    assert {"top/a.py", "top/b.py", "top/sub", "top/sub/c.py", "top/d.py"} <= layout_tree(text)


def test_a_name_counts_alone_or_at_the_end_of_a_longer_path():
    assert is_named("tasks/loader.py", "`desktop_env/tasks/loader.py` reads task files")
    assert is_named("tasks.loader", "see desktop_env.tasks.loader.")
    assert not is_named("paths.py", "`safe_paths.py` keeps paths inside")
    assert not is_named("loader.py", "loader.pyc")


def test_a_shared_file_name_needs_its_folder():
    others = [("desktop_env", "tasks", "loader.py"), ("osworld_harness", "run.py")]
    assert shortest_unique(("mm_agents", "loader.py"), others) == ("mm_agents", "loader.py")
    assert shortest_unique(("mm_agents", "noop.py"), others) == ("noop.py",)


def test_the_packages_come_from_setup_cfg():
    packages = installed_packages()
    assert packages and all((ROOT / package / "__init__.py").is_file() for package in packages)


def test_architecture_names_every_module():
    missing = unnamed_modules()
    assert not missing, f"docs/ARCHITECTURE.md does not name {len(missing)} module(s):\n" + "\n".join(missing)
