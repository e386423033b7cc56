"""One registry for every extension kind: names by kind, where each comes from, no silent replacement."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from types import SimpleNamespace

import openpyxl
import pytest

from desktop_env import extensions
from desktop_env.controllers.setup import SetupUnsupported, run_steps, step_names
from desktop_env.evaluators.metrics.table import compare_table
from desktop_env.evaluators.registry import get_getter, get_metric, replaced_getter
from desktop_env.providers import create_provider, provider_names
from mm_agents.loader import AgentLoadError, build_agent, load_agent_class
from osworld_harness.results.config import RunConfig, RunOptionError


def plugin_file(folder, stem: str, source: str) -> str:
    path = folder / f"{stem}.py"
    path.write_text(source)
    return str(path)


def test_two_plugin_files_registering_one_metric_is_an_error_naming_both(tmp_path):
    body = "from desktop_env.evaluators.registry import metric\n\n\n@metric('twice_registered')\n" \
           "def same_name(result, expected):\n    return 1.0\n"
    first = plugin_file(tmp_path, "dup_first", body)
    second = plugin_file(tmp_path, "dup_second", body)
    extensions.load_plugin(first)
    with pytest.raises(extensions.PluginError) as error:
        extensions.load_plugin(second)
    assert str(error.value) == (
        f"loading {second!r}: metric func 'twice_registered' is registered twice: "
        f"at osworld_plugin_dup_first:4 (--plugin {first}) and at osworld_plugin_dup_second:4 (--plugin {second})")
    assert get_metric("twice_registered").__module__ == "osworld_plugin_dup_first"  # the first one stays


def test_a_plugin_registering_a_built_in_name_is_an_error_naming_the_built_in(tmp_path):
    plugin = plugin_file(tmp_path, "steals_vm_file", "from desktop_env.evaluators.registry import getter\n"
                                                     "@getter('vm_file')\ndef mine(env, config):\n    return None\n")
    with pytest.raises(extensions.PluginError, match=r"getter type 'vm_file' is registered twice: at "
                                          r"desktop_env\.evaluators\.getters\.\w+:\d+ and at osworld_plugin_steals"):
        extensions.load_plugin(plugin)
    assert get_getter("vm_file").__module__.startswith("desktop_env.")


def test_loading_the_same_plugin_again_or_reloading_a_module_is_not_a_duplicate(tmp_path):
    plugin = plugin_file(tmp_path, "loaded_twice", "from desktop_env.evaluators.registry import metric\n"
                                                   "@metric('loaded_twice')\ndef m(result):\n    return 0.5\n")
    extensions.load_plugin(plugin)
    extensions.load_plugin(plugin)
    assert get_metric("loaded_twice")(None) == 0.5
    # A module of our own, not a built-in one: reloading a built-in would swap the functions
    # other tests in this worker imported.
    (tmp_path / "osworld_reloaded_metrics.py").write_text(
        "from desktop_env.evaluators.registry import metric\n"
        "@metric('reloaded_metric')\ndef reloaded_metric(result):\n    return 1.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("osworld_reloaded_metrics")
        importlib.reload(module)
        assert get_metric("reloaded_metric") is module.reloaded_metric
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("osworld_reloaded_metrics", None)


def test_a_plugin_file_registers_every_kind_and_each_is_found_by_name(tmp_path):
    plugin = plugin_file(tmp_path, "every_kind", """
from desktop_env.controllers.setup import setup_step
from desktop_env.evaluators.metrics.table import extensions
from desktop_env.providers import provider
from mm_agents.loader import agent


@setup_step("every_kind_marks")
def marks(ctx, label):
    ctx.env.marks.append(label)


@provider("every_kind_desktop")
def make(**options):
    return ("a provider with", options)


@agent("every-kind-agent")
class Agent:
    def __init__(self, model="m"):
        self.model = model

    def predict(self, instruction, obs):
        return "", ["DONE"]

    def reset(self, logger=None):
        pass


def a1_is_7(rule, books):
    return books.result.workbook.active["A1"].value == 7


extensions.register("table_rule", "every_kind_a1_is_7", a1_is_7)
""")
    extensions.load_plugin(plugin)
    source = f"--plugin {plugin}"
    assert {(e.name, e.source) for kind in ("setup_step", "provider", "agent", "table_rule")
            for e in extensions.entries(kind) if e.source != extensions.BUILTIN} >= {
        ("every_kind_marks", source), ("every_kind_desktop", source), ("every-kind-agent", source),
        ("every_kind_a1_is_7", source)}

    env = SimpleNamespace(cache_dir=str(tmp_path), marks=[])
    run_steps(env, [{"type": "every_kind_marks", "parameters": {"label": "x"}}])
    assert env.marks == ["x"] and "every_kind_marks" in step_names()

    assert create_provider("every_kind_desktop", url="u") == ("a provider with", {"url": "u"})
    assert provider_names()[:2] == ["local", "remote"] and "every_kind_desktop" in provider_names()
    assert RunConfig(provider="every_kind_desktop").provider == "every_kind_desktop"

    assert build_agent("every-kind-agent", model="gpt", max_tokens=5).model == "gpt"

    book = openpyxl.Workbook()
    book.active["A1"] = 7
    book.save(tmp_path / "seven.xlsx")
    assert compare_table(str(tmp_path / "seven.xlsx"), rules=[{"type": "every_kind_a1_is_7"}]).score == 1.0


def test_unknown_names_suggest_close_ones_in_every_kind(tmp_path):
    with pytest.raises(SetupUnsupported, match="unknown type 'exectue'"):
        run_steps(SimpleNamespace(cache_dir=str(tmp_path)), [{"type": "exectue", "parameters": {}}])
    with pytest.raises(extensions.UnknownName, match="unknown setup step type 'exectue'; did you mean 'execute'"):
        extensions.get("setup_step", "exectue")
    with pytest.raises(Exception, match="unknown provider 'locl'; did you mean 'local'.*; known providers: local"):
        create_provider("locl")
    with pytest.raises(RunOptionError, match="--provider: must be one of local, remote"):
        RunConfig(provider="locl")
    with pytest.raises(AgentLoadError, match="agent 'orcle' is neither a registered agent .*did you mean 'oracle'"):
        load_agent_class("orcle")
    with pytest.raises(extensions.UnknownKind, match="unknown extension kind 'metrics'; kinds: getter, metric"):
        extensions.names("metrics")


def test_unsupported_names_say_why_and_are_not_unknown(tmp_path):
    with pytest.raises(extensions.UnsupportedName) as error:
        get_getter("googledrive_file")
    assert error.value.reason == "needs OSWorld's Google Drive account and credentials"
    with pytest.raises(SetupUnsupported, match=r"step 0 \(login\) needs a website account and the network: "
                                               "not supported offline"):
        run_steps(SimpleNamespace(cache_dir=str(tmp_path)), [{"type": "login", "parameters": {}}])
    assert "login" in {u.name for u in extensions.unsupported_entries("setup_step")}


def test_an_override_on_purpose_is_put_back_after_its_block():
    original = get_getter("rule")
    with replaced_getter("rule", lambda env, config: "offline") as previous:
        assert previous is original and get_getter("rule")(None, {}) == "offline"
    assert get_getter("rule") is original


def test_built_in_agents_and_providers_are_imported_only_when_asked_for():
    entries = {e.name: e for e in extensions.entries("agent")}
    assert entries["ui-tars"].where == "mm_agents.computer_use.agents:UITarsAgent"
    assert entries["ui-tars"].source == extensions.BUILTIN
    providers = {e.name: e for e in extensions.entries("provider")}
    if "desktop_env.providers.vmware" not in sys.modules:  # another test in this process may have made one
        assert isinstance(providers["vmware"].obj, extensions.Lazy)
    assert load_agent_class("noop").__name__ == "NoopAgent"
    assert not isinstance(entries["noop"].obj, extensions.Lazy)


def test_threads_looking_up_a_kind_at_once_each_see_all_of_it():
    """In a fresh process, where the first lookups import the built-in modules (which register
    more than one kind: importing compare_table's module registers metrics and table rules)."""
    code = """
import threading
from desktop_env import extensions
seen = []
threads = [threading.Thread(target=lambda kind=kind: seen.append((kind, len(extensions.names(kind)))))
           for kind in ("table_rule", "metric", "getter", "metric", "table_rule", "getter")]
for t in threads: t.start()
for t in threads: t.join()
print(sorted(set(seen)), sorted((kind, len(extensions.names(kind))) for kind in ("getter", "metric", "table_rule")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    seen_by_threads, afterwards = out.split("] [")
    assert ast.literal_eval(seen_by_threads + "]") == ast.literal_eval("[" + afterwards)
    assert dict(ast.literal_eval("[" + afterwards))["table_rule"] == 15
