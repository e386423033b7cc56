"""The desktop's defaults (screen size, the user's password) are written once, in desktop_env/desktop_defaults.py:
no other module of the harness, the agents or the env server spells them out."""
from __future__ import annotations

import ast
from pathlib import Path

from desktop_env.desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from desktop_env.providers.local.build.server_code import server_files

PROJECT = Path(__file__).resolve().parents[2]
PACKAGES = ("desktop_env", "osworld_harness", "mm_agents", "osworld_cli")
HOME = PROJECT / "desktop_env" / "desktop_defaults.py"


def project_files() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((PROJECT / package).rglob("*.py")) if path != HOME]


def written_defaults(path: Path) -> list[str]:
    """Where `path` writes the default screen size as numbers, or the password as the default of an option
    (a parameter, a field or a click option)."""
    found = []
    where = path.relative_to(PROJECT) if path.is_relative_to(PROJECT) else path.name
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List) and [getattr(e, "value", None) for e in node.elts] == \
                list(DEFAULT_SCREEN_SIZE):
            found.append(f"{where}:{node.lineno}: the screen size")
        if isinstance(node, ast.Constant) and node.value == "{}x{}".format(*DEFAULT_SCREEN_SIZE):
            found.append(f"{where}:{node.lineno}: the screen size")
        defaults: list[ast.expr | None] = []
        if isinstance(node, ast.AnnAssign):
            defaults.append(node.value)
        if isinstance(node, ast.FunctionDef):
            defaults += node.args.defaults + node.args.kw_defaults
        if isinstance(node, ast.Call):
            defaults += [k.value for k in node.keywords if k.arg == "default"]
        found += [f"{where}:{value.lineno}: the password" for value in defaults
                  if isinstance(value, ast.Constant) and value.value == DEFAULT_PASSWORD]
    return sorted(found, key=lambda line: int(line.split(':')[1]))


def test_the_screen_size_and_the_password_are_written_in_one_module():
    assert [line for path in project_files() for line in written_defaults(path)] == []


def test_the_env_server_gets_the_defaults_module_with_its_own_code():
    assert Path("desktop_env/desktop_defaults.py") in server_files()


def test_the_check_finds_a_default_written_again(tmp_path):
    copy = tmp_path / "copy.py"
    copy.write_text('SIZE = (1920, 1080)\n\ndef f(client_password: str = "password"):\n    pass\n')
    assert [line.split(": ", 1)[1] for line in written_defaults(copy)] == \
        ["the screen size", "the password"]
