"""A worker process whose run died while the worker was still starting exits instead of booting a desktop
for nobody: the kernel's parent-death signal only covers a parent that dies after the worker asked for it."""
from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from pathlib import Path

from osworld_harness.execution.worker_pool import _die_with_parent

REPO = Path(__file__).resolve().parents[3]

# The "run": spawns a worker the way the process pool does, then dies (as by kill -9) before the worker's
# interpreter has even started.
RUN = """
import multiprocessing as mp, os, sys
from tests.harness.execution.test_worker_parent import worker_main
if __name__ == "__main__":
    worker = mp.get_context("spawn").Process(target=worker_main, args=(sys.argv[1], float(sys.argv[2])))
    worker.start()
    os._exit(0)
"""


def worker_main(folder: str, delay: float) -> None:
    Path(folder, "started").write_text("")
    time.sleep(delay)  # the run dies meanwhile
    _die_with_parent()
    Path(folder, "went on").write_text("")


def start_run(tmp_path: Path, delay: float) -> None:
    subprocess.run([sys.executable, "-c", RUN, str(tmp_path), str(delay)], cwd=REPO, check=True, timeout=60)


def wait_for(path: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.exists()


def test_a_worker_whose_run_died_while_it_started_exits_before_doing_anything(tmp_path):
    start_run(tmp_path, delay=1.0)
    assert wait_for(tmp_path / "started", 30)
    assert not wait_for(tmp_path / "went on", 5)


def test_a_worker_whose_run_is_alive_goes_on(tmp_path):
    """The same worker under a run that stays: _die_with_parent lets it through."""
    script = RUN.replace("os._exit(0)", "worker.join()")
    subprocess.run([sys.executable, "-c", script, str(tmp_path), "0"], cwd=REPO, check=True, timeout=60)
    assert (tmp_path / "started").exists() and (tmp_path / "went on").exists()


# A run whose worker is going (as under a task) when the run dies, the kernel's parent-death signal taken away.
RUN_THAT_DIES_LATER = """
import multiprocessing as mp, os, pathlib, sys, time
from tests.harness.execution.test_worker_parent import worker_without_the_kernels_signal
if __name__ == "__main__":
    mp.get_context("spawn").Process(target=worker_without_the_kernels_signal, args=(sys.argv[1],)).start()
    while not pathlib.Path(sys.argv[1], "went on").exists():
        time.sleep(0.05)
    os._exit(0)
"""


def worker_without_the_kernels_signal(folder: str) -> None:
    _die_with_parent()
    ctypes.CDLL("libc.so.6").prctl(1, 0)  # PR_SET_PDEATHSIG 0: as when that signal never came
    signal.signal(signal.SIGTERM, lambda *_: (Path(folder, "terminated").write_text(""), sys.exit(143)))
    Path(folder, "went on").write_text("")
    time.sleep(120)  # a task in progress, or the wait for the next


def test_a_worker_whose_run_dies_later_is_terminated_even_without_the_kernels_signal(tmp_path):
    subprocess.run([sys.executable, "-c", RUN_THAT_DIES_LATER, str(tmp_path)], cwd=REPO, check=True, timeout=60)
    assert wait_for(tmp_path / "terminated", 30)
