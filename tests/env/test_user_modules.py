"""User code named by a .py path or a dotted name: evaluator plugins and agents share the importer."""
import pytest

from desktop_env.evaluators.registry import get_metric
from desktop_env.extensions import PluginError, load_plugin
from mm_agents.loader import AgentLoadError, load_agent_class


def test_a_plugin_file_registers_its_metric(tmp_path):
    plugin = tmp_path / "my_metrics.py"
    plugin.write_text("from desktop_env.evaluators.registry import metric\n"
                      "@metric('plugin_says_one')\ndef says_one(result, **options):\n    return 1.0\n")
    load_plugin(str(plugin))
    assert get_metric("plugin_says_one")(None) == 1.0


def test_missing_files_are_named():
    with pytest.raises(PluginError, match="plugin file not found: .*nope.py"):
        load_plugin("/nonexistent/nope.py")
    with pytest.raises(AgentLoadError, match="agent file not found: .*nope.py"):
        load_agent_class("/nonexistent/nope.py:Agent")


def test_an_agent_file_that_fails_to_import_is_an_agent_load_error(tmp_path):
    broken = tmp_path / "broken_agent.py"
    broken.write_text("raise RuntimeError('bad import')\n")
    with pytest.raises(AgentLoadError, match="importing .*broken_agent.py failed: RuntimeError: bad import"):
        load_agent_class(f"{broken}:Agent")
