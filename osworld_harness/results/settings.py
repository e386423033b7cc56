"""What makes two runs comparable, and what a result folder says its runs were made with (args.json).

A result folder (<root>/<action_space>/<obs>/<model>/) holds the results of runs made with one set of
settings: the options that change what a task's score means (those RunConfig declares as
Affects.SETTING, and the agent's own arguments other than where its model is served). Where and how fast
the runs went (desktops, paths, base_url, time budgets) is not a setting. args.json keeps every run's options:

    {"config": <the latest run's options>, "versions": ..., "written": ...,
     "runs": [{"config", "versions", "written", "forced"?}, ...]}

Older folders have only the top-level record (one run); OSWorld's own args.json has no "config"
and is not compared.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .config import RunConfig, options_affecting_results
from .options import Affects

SETTING_FIELDS = options_affecting_results(Affects.SETTING)

# Agent arguments that say where the model is served and how patiently, not what is measured.
TRANSPORT_ARGS = frozenset({"base_url", "api_key", "model_provider", "timeout", "max_retries", "grounder_base_url",
                            "grounder_api_key"})


class SettingsMismatch(ValueError):
    """A result folder holds runs made with other settings; running into it would mix them."""


def settings_of(config: Any) -> dict[str, Any]:
    """The settings of a RunConfig (as it will run: with what the agent declares, resolved()), or of a dict of
    its fields, as JSON values (tuples as lists)."""
    if not isinstance(config, dict):
        config = config.resolved()
    values = config if isinstance(config, dict) else {name: getattr(config, name) for name in SETTING_FIELDS}
    settings: dict[str, Any] = json.loads(json.dumps({name: values[name] for name in SETTING_FIELDS}))
    settings["agent_args"] = {k: v for k, v in sorted((settings["agent_args"] or {}).items())
                              if k not in TRANSPORT_ARGS}
    if settings["perturb"] is None:
        settings["perturb_seed"] = None  # a seed changes nothing without a perturbation
    return settings


def setting_differences(a: Any, b: Any) -> list[str]:
    first, second = settings_of(a), settings_of(b)
    return [name for name in SETTING_FIELDS if first[name] != second[name]]


def read_args(model_dir: Path) -> Any:
    """The folder's args.json as JSON (an object unless some other tool wrote it), or None when there is
    none; SettingsMismatch when it cannot be read."""
    path = model_dir / "args.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SettingsMismatch(f"{path}: cannot read the settings recorded with the runs there: {e}") from e


def recorded_differences(config: Any) -> list[tuple[str, Any, Any]]:
    """(field, recorded, requested) for each setting in which the latest run in the config's folder
    differs from it; none when nothing was recorded there, or by another harness."""
    recorded = read_args(config.layout.model_dir)
    if not isinstance(recorded, dict) or not isinstance(recorded.get("config"), dict):
        return []  # OSWorld's own args.json: its settings are not ours to compare
    defaults = settings_of(RunConfig())  # for a field an older version did not record
    recorded = settings_of({name: recorded["config"].get(name, defaults[name]) for name in SETTING_FIELDS})
    requested = settings_of(config)
    return [(name, recorded[name], requested[name]) for name in SETTING_FIELDS if recorded[name] != requested[name]]


def runs_recorded(model_dir: Path) -> list[dict[str, Any]]:
    """Every run args.json records, oldest first (an older args.json is one run)."""
    try:
        recorded = read_args(model_dir)
    except SettingsMismatch:
        return []
    if not isinstance(recorded, dict) or not isinstance(recorded.get("config"), dict):
        return []
    if isinstance(recorded.get("runs"), list):
        return list(recorded["runs"])
    return [{key: recorded[key] for key in ("config", "versions", "written") if key in recorded}]


def recorded_step_budgets(model_dir: Path) -> list[int]:
    """The step budgets (max_steps) the folder's runs were made with, in the order first used: ours from
    args.json's runs, OSWorld's from its own args.json; none when nothing says."""
    try:
        recorded = read_args(model_dir)
    except SettingsMismatch:
        return []
    if not isinstance(recorded, dict):
        return []
    configs = [run.get("config") for run in runs_recorded(model_dir)] if isinstance(recorded.get("config"), dict) \
        else [recorded]  # OSWorld's args.json is its options at the top level
    budgets = [c.get("max_steps") for c in configs if isinstance(c, dict)]
    return list(dict.fromkeys(b for b in budgets if isinstance(b, int) and not isinstance(b, bool)))
