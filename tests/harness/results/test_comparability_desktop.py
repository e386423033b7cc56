"""The comparability verdict names the desktop a run was made on: its provider and build (the system its
desktops booted from and the apps' versions, as args.json recorded them, or a VM's image) and, for the local
desktop, the VM replay parity measured for that system (desktop_parity.json); it warns when more desktops ran
at once than the machine has cores. The summary, the HTML report and the dry run all say it. The runs are real
runs of the built-in os tasks, each trial written by a runner in this process (ThreadBackend) instead of a
desktop; the Ubuntu 22.04 tree is a small folder laid out as its build leaves it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.debian_packages import DPKG_STATUS
from desktop_env.providers.local.build import ubuntu_userland
from desktop_env.providers.local.build.prepare import SYSTEM_VARIABLE
from osworld_cli.main import cli
from osworld_harness import RunConfig
from osworld_harness.execution.preview import preview_run
from osworld_harness.results.comparability import PARITY_FILE, desktop_info, load_warning, measured_parity
from osworld_harness.results.report import build_report

from .test_task_scope import ran, summary

PARITY = json.loads(PARITY_FILE.read_text())
TREE_PARITY = PARITY["local"]["systems"][ubuntu_userland.USERLAND_NAME]


@pytest.fixture(autouse=True)
def host_system(monkeypatch):
    """Desktops boot from the host's system, whatever the shell running the tests says."""
    monkeypatch.setenv(SYSTEM_VARIABLE, "host")


def newest_figure(entry: dict = PARITY["local"]) -> dict:
    return [m for m in entry["measurements"] if m["score_1_here"] is not None][-1]


def shown(*command: str) -> str:
    return " ".join(CliRunner().invoke(cli, list(command), terminal_width=200).output.split())


def lay_out_userland(share: Path) -> Path:
    """The Ubuntu 22.04 tree as its build leaves it in the share, with a dpkg status of one app."""
    folder = ubuntu_userland.userland_dir()
    assert folder.parent == share
    root = folder / ubuntu_userland.ROOT
    for path, text in ((ubuntu_userland.OS_RELEASE, 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\n'),
                       (DPKG_STATUS, "Package: gnome-shell\nStatus: install ok installed\nVersion: 42.9-0ubuntu2.4\n")):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (folder / ubuntu_userland.LOCK).write_text("gnome-shell 42.9-0ubuntu2.4 amd64\n")
    return folder


def test_the_parity_quoted_is_the_newest_measured_and_one_being_measured_is_said_as_such():
    data = {"local": {"build": "b", "measurements": [
        {"what": "old", "measured": "1", "vm_successes": 18, "score_1_here": 14},
        {"what": "new", "measured": "2", "vm_successes": 18, "score_1_here": 17,
         "by_domain": {"os": {"vm_successes": 3, "score_1_here": 2}}},
        {"what": "75 of them", "measured": "3", "vm_successes": 75, "score_1_here": None}]}}
    latest, pending = measured_parity("local", data)
    assert (latest.what, latest.score_1_here, [p.what for p in pending]) == ("new", 17, ["75 of them"])
    info = desktop_info({"provider": "local"}, {"apps": {"gimp": "2.10"}}, data)
    assert info.label() == "local desktop (b; VM replay parity 17 of 18)"
    assert info.lines()[1:] == ["  apps: gimp 2.10", "  parity by domain: os 2 of 3"]
    assert "75 of them: being measured" in info.notes()[0]


def test_a_vm_is_named_by_its_provider_and_image_with_no_parity_note():
    info = desktop_info({"provider": "vmware", "path_to_vm": "/vms/Ubuntu.vmx"})
    assert info.label() == "vmware VM (/vms/Ubuntu.vmx)" and info.notes() == []


def test_more_desktops_than_cores_is_a_warning_quoting_the_parity_under_load():
    load = PARITY["local"]["under_load"]
    warning = load_warning(3, 2)
    assert warning and f"from {load['quiet']} to {load['score_1_here']} of {load['vm_successes']}" in warning
    assert load_warning(2, 2) is None and load_warning(4, None) is None


def test_summarize_names_the_local_desktop_its_apps_and_parity(tmp_path):
    folder = ran(tmp_path, domains=["os"], num_envs=(os.cpu_count() or 1) + 1)
    args = json.loads((folder / "args.json").read_text())
    assert args["versions"]["cpus"] == os.cpu_count()
    (run,) = summary(folder)[1]["runs"]
    figure = newest_figure()
    desktop = run["comparable"]["desktop"]
    assert desktop["provider"] == "local" and desktop["parity"]["score_1_here"] == figure["score_1_here"]
    assert desktop["label"] == (f"local desktop ({PARITY['local']['build']}; VM replay parity "
                                f"{figure['score_1_here']} of {figure['vm_successes']})")
    assert desktop["apps"] == args["versions"]["apps"]
    assert desktop["parity"]["by_domain"] == figure.get("by_domain", {})
    assert any("comparable only as far as its VM replay parity" in note for note in run["comparable"]["notes"])
    assert any("desktops at once on" in w for w in run["comparable"]["warnings"])
    out = shown("summarize", str(folder))
    assert f"desktop: {desktop['label']}" in out and "warning: " in out


def test_summarize_names_the_system_the_run_recorded_not_the_one_of_the_machine_summarizing(tmp_path, monkeypatch):
    folder = ran(tmp_path / "r", domains=["os"])
    assert json.loads((folder / "args.json").read_text())["versions"]["desktop_system"] == {"name": "host"}
    host = newest_figure()
    host_label = f"local desktop ({PARITY['local']['build']}; VM replay parity {host['score_1_here']} of"
    # This machine's desktops now boot from the Ubuntu 22.04 tree: the run was still made on the host's system.
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path / "share"))
    tree = lay_out_userland(tmp_path / "share")
    monkeypatch.setenv(SYSTEM_VARIABLE, ubuntu_userland.USERLAND_NAME)
    assert f"desktop: {host_label}" in shown("summarize", str(folder))
    # Run again here (nothing left to run), the folder's latest run records the tree, summarized from the host.
    ran(tmp_path / "r", domains=["os"])
    versions = json.loads((folder / "args.json").read_text())["versions"]
    assert versions["desktop_system"] == {"name": "ubuntu-22.04", "tree": tree.name,
                                          "root": str(tree / ubuntu_userland.ROOT)}
    assert versions["apps"]["gnome-shell"] == "42.9-0ubuntu2.4"
    monkeypatch.setenv(SYSTEM_VARIABLE, "host")
    out = shown("summarize", str(folder))
    figure = newest_figure(TREE_PARITY)
    assert (f"desktop: local desktop ({TREE_PARITY['build']} (userland {tree.name}); VM replay parity "
            f"{figure['score_1_here']} of {figure['vm_successes']})") in out
    assert "apps: gnome-shell 42.9-0ubuntu2.4" in out and host_label not in out


def test_the_html_report_shows_the_verdict_and_the_desktop(tmp_path):
    folder = ran(tmp_path / "r", domains=["os"])
    page = build_report([folder], tmp_path / "report.html").read_text()
    assert "comparable with OSWorld's leaderboard: no" in page
    assert "only some domains ran (--domain os)" in page
    assert f"VM replay parity {newest_figure()['score_1_here']} of" in page


def test_the_dry_run_names_the_desktop_and_warns_of_more_desktops_than_cores(tmp_path):
    done = CliRunner().invoke(cli, ["run", "--agent", "noop", "--model", "m", "--obs", "screenshot", "--dry-run",
                                    "--domain", "os", "--num-envs", str((os.cpu_count() or 1) + 1),
                                    "--result-dir", str(tmp_path / "r")], terminal_width=300)
    out = " ".join(done.output.split())
    assert done.exit_code == 0, out
    assert f"desktop: local desktop ({PARITY['local']['build']}; VM replay parity" in out
    assert f"desktops at once on {os.cpu_count()} core(s)" in out
    assert not Path(tmp_path / "r").exists()


def test_the_python_apis_preview_names_the_desktop_as_the_dry_run_does():
    lines = preview_run(RunConfig(agent="noop", task_ids=["os-organize-invoices"])).verdict.lines()
    assert lines[1].startswith("  desktop: local desktop (Debian 12 packages dressed as Ubuntu 22.04")  # host_system
    assert lines[2].startswith("    apps: ") and "gnome-shell" in lines[2]
