"""`osworld env setup`, `serve` and `doctor`, run as a user runs them."""
from __future__ import annotations

import json
import os
import re

import pytest
import requests

from desktop_env.providers.local.build.prepare import desktop_system
from tests.serve_cli import free_port, interrupt, osworld, wait_until_served

pytestmark = pytest.mark.desktop


def test_serve_forwards_the_server_over_tcp_and_ctrl_c_cleans_up():
    port = free_port()
    proc = osworld("env", "serve", "--port", str(port), "--screen-size", "1024x768", "--desktop-disk", "96M")
    try:
        output = wait_until_served(proc, timeout=60)
        assert f"http://127.0.0.1:{port}" in output
        sockets = re.search(r"env server: unix:(\S+)/server-\d+\.sock", output).group(1)
        assert requests.get(f"http://127.0.0.1:{port}/platform", timeout=10).text == "Linux"
        assert requests.post(f"http://127.0.0.1:{port}/screen_size", timeout=10).json() == \
            {"width": 1024, "height": 768}
        df = requests.post(f"http://127.0.0.1:{port}/execute", json={"command": "df -B1 --output=size ~ | tail -1",
                                                                     "shell": True}, timeout=30).json()
        assert df["output"].strip() == str(96 << 20)
    finally:
        rest = interrupt(proc, timeout=30)
    assert proc.returncode == 0, rest
    assert "desktop stopped" in rest
    assert not os.path.exists(sockets) and not os.path.exists(os.path.dirname(sockets))
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/platform", timeout=5)


def test_setup_prints_each_build_of_the_local_desktops_one_list_in_order():
    proc = osworld("env", "setup")
    output, _ = proc.communicate(timeout=1800)
    assert proc.returncode == 0, output
    names = [line.split(":")[0] for line in output.splitlines() if re.match(r"[\w -]+\d*: +/", line)]
    # Settings 41 is set aside for a desktop of the host's packages only (the userland has its own; a warning
    # when it cannot be), Thunderbird 115 for one of the userland only (whose own is 140).
    on_host = desktop_system().is_host
    aside = (["GNOME Settings 41"] if "GNOME Settings 41 could not be installed" not in output else []) if on_host \
        else ["Thunderbird 115"]
    assert names == ["server venv", "server code", "desktop view", "home template", "Chromium 120", *aside,
                     "start-up caches"]


def test_doctor_reports_every_check_and_passes_on_an_installed_machine():
    proc = osworld("env", "doctor")
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, output
    for check in ("debian packages", "sandbox", "home cap", "server python", "server venv"):
        assert check in output
    assert "--desktop-disk (default 2.0 GiB)" in output


@pytest.mark.parametrize("command", [("env", "serve"), ("run", "--agent", "noop")])
def test_a_home_cap_that_is_not_a_size_is_refused_by_name(command):
    proc = osworld(*command, "--desktop-disk", "unlimited")
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--desktop-disk" in output and "the home folder needs a size" in output, output


def test_bench_reports_every_figure_as_json():
    proc = osworld("env", "bench", "--json", "--resets", "1", "--samples", "3", "--screen-size", "1280x720")
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    report = json.loads(output)
    figures = report["figures"]
    assert set(figures) == {"reset_s", "boot_s", "screenshot_ms", "action_ms", "idle_rss_mb", "spare_rss_mb",
                            "a11y_ms", "calc_rss_mb", "first_observation_s"}
    for name, figure in figures.items():
        assert figure["median"] > 0 and figure["p95"] >= figure["median"], name
    assert figures["screenshot_ms"]["samples"] == 3 and figures["reset_s"]["samples"] == 1
    assert figures["calc_rss_mb"]["median"] > figures["idle_rss_mb"]["median"]  # Calc was really open
    waits = figures["first_observation_s"]
    assert waits["samples"] == 3 and set(waits["extra"]) == {"chrome", "gimp", "calc"}
    assert all(0 < seconds < 60 for seconds in waits["extra"].values())  # each app up within the VM's wait
    assert {"target", "meets_target"} <= set(figures["reset_s"])
