"""Every getter type and metric func that OSWorld's evaluators package exports is one a task
file may name here: registered, or declared unsupported (with its reason) where the local
desktop truly cannot do what it needs. The names are in osworld_evaluator_names.json."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_env.evaluators import registry

NAMES = json.loads((Path(__file__).parent / "osworld_evaluator_names.json").read_text())

# What may be unsupported, and why only these: they need what no local desktop has.
CANNOT_RUN_LOCALLY = {
    "googledrive_file": "a Google Drive account",
    "gotoRecreationPage_and_get_html_content": "a scripted session on the live recreation.gov site",
}


@pytest.mark.parametrize("name", NAMES["getters"])
def test_every_osworld_getter_is_known(name):
    assert name in registry.getter_names() or registry.UNSUPPORTED_GETTERS.get(name), name


@pytest.mark.parametrize("name", NAMES["metrics"])
def test_every_osworld_metric_is_known(name):
    assert name in registry.metric_names() or registry.UNSUPPORTED_METRICS.get(name), name


def test_only_what_the_local_desktop_cannot_do_is_unsupported():
    registry.load_builtins()
    unsupported = {**registry.UNSUPPORTED_GETTERS, **registry.UNSUPPORTED_METRICS}
    assert set(unsupported) <= set(CANNOT_RUN_LOCALLY)
    assert all(reason.strip() for reason in unsupported.values())


def test_no_name_is_both_registered_and_unsupported():
    assert not set(registry.getter_names()) & set(registry.UNSUPPORTED_GETTERS)
    assert not set(registry.metric_names()) & set(registry.UNSUPPORTED_METRICS)


def test_the_list_is_osworlds_whole_export():
    # A sanity check on the data file, so a truncated list cannot pass the tests above.
    assert len(NAMES["getters"]) == 56 and len(NAMES["metrics"]) == 139
    assert {"vm_file", "cloud_file", "rule", "replay"} <= set(NAMES["getters"])
    assert {"compare_table", "infeasible", "check_libre_locale", "compare_epub"} <= set(NAMES["metrics"])
