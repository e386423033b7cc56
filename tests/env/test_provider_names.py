"""Generic modules never ask which provider they have: whatever depends on it is the provider's own
(Provider.from_options, check_options, prepare_for). Only desktop_env/providers/ may compare a provider's name
with one of theirs."""
from __future__ import annotations

import ast
from pathlib import Path

from desktop_env.providers import PROVIDER_NAMES

PROJECT = Path(__file__).resolve().parents[2]
PACKAGES = ("desktop_env", "osworld_harness", "mm_agents", "osworld_cli", "scripts")
PROVIDERS = PROJECT / "desktop_env" / "providers"


def names_in(node: ast.expr) -> set[str]:
    """The provider names a constant (or a tuple, list or set of them) spells."""
    if isinstance(node, ast.Constant) and node.value in PROVIDER_NAMES:
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(names_in(element) for element in node.elts))
    return set()


def about_a_provider(node: ast.expr) -> bool:
    return any(isinstance(part, ast.Name) and "provider" in part.id.lower()
               or isinstance(part, ast.Attribute) and "provider" in part.attr.lower() for part in ast.walk(node))


def provider_comparisons(source: str) -> list[int]:
    """The lines where a provider (a name or attribute called *provider*) is compared with a provider's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(names_in(side) for side in sides) and any(about_a_provider(side) for side in sides):
                found.append(node.lineno)
    return found


def test_no_module_outside_the_providers_compares_a_provider_with_a_name():
    found = [f"{path.relative_to(PROJECT)}:{line}"
             for package in PACKAGES for path in sorted((PROJECT / package).rglob("*.py"))
             if not path.is_relative_to(PROVIDERS) for line in provider_comparisons(path.read_text())]
    assert found == []


def test_the_check_sees_the_ways_a_provider_is_asked_for():
    source = ('if config.provider == "local":\n    pass\n'
              'if provider_name in ("remote", "docker"):\n    pass\n'
              'if "vmware" != self.provider_name:\n    pass\n'
              'if config.backend == "local":\n    pass\n')  # the backend is no provider
    assert provider_comparisons(source) == [1, 3, 5]
