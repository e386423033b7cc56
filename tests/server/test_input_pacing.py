"""A press waits until the apps about to get it have handled what came before, and never while a key is held."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from desktop_env.server.input_pacing import (
    ALWAYS_BUSY_S,
    WAIT_BOUND_S,
    InputPacer,
    cpu_seconds,
    find_processes,
    processes_to_watch,
    running,
)
from tests.fake_clock import FakeClock


def pacer_with(busy_until: dict[int, float], clock: FakeClock) -> InputPacer:
    return InputPacer(lambda: set(busy_until), busy=lambda pid: clock.now < busy_until[pid], clock=clock,
                      sleep=clock.sleep)


def test_a_press_waits_until_the_app_has_run():
    clock = FakeClock()
    pacer = pacer_with({10: 0.3, 11: 0.0}, clock)
    waited = pacer.wait_until_idle()
    assert 0.3 <= waited < 0.35


def test_idle_apps_cost_nothing_but_two_looks():
    clock = FakeClock()
    assert pacer_with({10: 0.0}, clock).wait_until_idle() < 0.02


def test_no_wait_while_a_key_is_held():
    clock = FakeClock()
    pacer = pacer_with({10: 5.0}, clock)
    pacer.held.add("ctrl")
    assert pacer.wait_until_idle() == 0.0


def test_an_app_busy_for_good_is_waited_for_once_per_action():
    clock = FakeClock()
    pacer = pacer_with({10: 1e9}, clock)
    first = pacer.wait_until_idle()
    assert ALWAYS_BUSY_S <= first <= WAIT_BOUND_S
    assert pacer.wait_until_idle() < 0.02  # the same action: not again
    pacer.new_action()
    assert pacer.wait_until_idle() >= ALWAYS_BUSY_S


def test_running_tells_a_spinning_process_from_a_sleeping_one():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(60)"],
                               stdout=subprocess.PIPE)
    try:
        assert sleeper.stdout is not None and sleeper.stdout.readline() == b"asleep\n"  # done starting up
        assert any(running(spinner.pid) for _ in range(20))
        # just after its print the sleeper may still be on its way to sleep, or waiting for a busy CPU
        deadline = time.monotonic() + 10
        while running(sleeper.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not running(sleeper.pid)
        assert sleeper.pid in find_processes([os.path.basename(sys.executable).encode()[:15]])
    finally:
        for process in (spinner, sleeper):
            process.kill()
            process.wait()


def test_cpu_seconds_grow_while_a_process_spins_not_while_it_sleeps():
    # what tells an app starved by a busy machine (runnable, using next to no CPU) from one busy for good
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(60)"],
                               stdout=subprocess.PIPE)
    try:
        assert sleeper.stdout is not None and sleeper.stdout.readline() == b"asleep\n"
        spun, slept = cpu_seconds(spinner.pid), cpu_seconds(sleeper.pid)
        deadline = time.monotonic() + 30
        while cpu_seconds(spinner.pid) - spun < 0.2:  # counted in clock ticks, a hundredth of a second
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert cpu_seconds(sleeper.pid) - slept < 0.05
    finally:
        for process in (spinner, sleeper):
            process.kill()
            process.wait()
    assert cpu_seconds(spinner.pid) == 0.0  # gone


def test_settle_watches_processes_just_started_but_not_its_own_nor_old_ones():
    young = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        watched = {pid for pid, _ in processes_to_watch({os.getpid()})}
        assert young.pid in watched and os.getpid() not in watched
        assert 1 not in watched  # the first process of this machine started long ago
    finally:
        young.kill()
        young.wait()
