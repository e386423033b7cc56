"""`osworld env bench`: how fast and how big one local desktop is.

Figures (median and p95 over repeated samples):
  reset_s        revert to a fresh, ready desktop as a run sees it: the warm spare, booted
                 while the previous task ran, takes over (each sample waits for the spare first,
                 as a task at least as long as a boot would)
  boot_s         one desktop's boot on its own (sandbox, GNOME Shell, /health ready): a reset
                 without a spare, or a task shorter than this
  screenshot_ms  a full-screen PNG from the server to the harness
  a11y_ms        the a11y tree with a LibreOffice Calc window open
  action_ms      a pyautogui click, sent as OSWorld's action command, round trip
  idle_rss_mb    resident memory of all processes of one idle desktop, once its start-up is
                 over (IDLE_AFTER_S after it took over: the desktop icons start Nautilus at
                 start, as on the VM, and Nautilus leaves after 10 s without a window)
  spare_rss_mb   the same of the warm spare waiting for the next reset (what the spare costs)
  calc_rss_mb    the desktop's with Calc open
  first_observation_s  from a setup's launch of an app (Chrome, GIMP, Calc; one each, on a fresh desktop)
                 to the desktop the agent is first shown: its window up, the screen still (the VM's
                 runner sleeps a fixed 60 s instead)
Memory is the resident set of the desktop's processes taken together: the physical
pages any of them has in memory, each page counted once (read from
/proc/<pid>/pagemap, which needs root). Summing each process's RSS would count the
GTK and X libraries that every process maps once per process; that sum and the sum
of PSS are reported beside it for comparison.
"""
from __future__ import annotations

import os
import statistics
import struct
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .controllers.python import PythonController
from .desktop_defaults import DEFAULT_SCREEN_SIZE
from .providers.local import LocalProvider
from .waiting import wait_until

# When a desktop is idle: after start-up's transient processes have left (see idle_rss_mb).
IDLE_AFTER_S = 15.0
# Apps a task's setup launches, each timed from its launch to the settled desktop (first_observation_s).
FIRST_OBSERVATION_APPS = {"chrome": ["google-chrome", "--remote-debugging-port=1337"], "gimp": ["gimp"],
                          "calc": ["libreoffice", "--calc", "--norestore"]}
FIRST_OBSERVATION_BOUND_S = 60.0
TARGETS = {"reset_s": 2.0, "screenshot_ms": 50.0, "a11y_ms": 1000.0, "action_ms": 10.0, "idle_rss_mb": 450.0}


@dataclass
class Figure:
    median: float
    p95: float
    samples: int
    unit: str
    extra: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, values: list[float], unit: str, **extra: float) -> Figure:
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
        return cls(round(statistics.median(ordered), 3), round(p95, 3), len(ordered), unit,
                   {k: round(v, 3) for k, v in extra.items()})


@dataclass
class BenchResult:
    figures: dict[str, Figure]
    screen_size: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        out = {name: asdict(fig) for name, fig in self.figures.items()}
        for name, fig in out.items():
            if name in TARGETS:
                fig["target"] = TARGETS[name]
                fig["meets_target"] = fig["median"] <= TARGETS[name]
        return {"screen_size": list(self.screen_size), "figures": out}


def _timed(fn: Callable[[], object], runs: int, scale: float = 1000.0) -> list[float]:
    values = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        values.append((time.perf_counter() - start) * scale)
    return values


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
_PRESENT = 1 << 63
_PFN_MASK = (1 << 55) - 1


def resident_pages(pid: int) -> set[int]:
    """Physical frame numbers of the pages `pid` has in memory (empty if pagemap is unreadable)."""
    frames: set[int] = set()
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for line in maps:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                if "[vsyscall]" in line:
                    continue
                pagemap.seek(start // PAGE_SIZE * 8)
                data = pagemap.read((end - start) // PAGE_SIZE * 8)
                for (entry,) in struct.iter_unpack("<Q", data):
                    if entry & _PRESENT and entry & _PFN_MASK:
                        frames.add(entry & _PFN_MASK)
    except OSError:
        pass
    return frames


def group_rss_mb(pids: list[int]) -> float | None:
    """Resident memory of the processes together, shared pages counted once; None without root."""
    frames: set[int] = set()
    for pid in pids:
        frames |= resident_pages(pid)
    return len(frames) * PAGE_SIZE / 2**20 if frames else None


def memory_mb(pids: list[int]) -> tuple[float, float]:
    """(sum of RSS, sum of PSS) in MiB over the given processes."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def wait_for_window(controller: PythonController, wm_class: str, timeout_s: float = 90.0) -> None:
    wait_until(lambda: controller.get_vm_window_size(wm_class) is not None, timeout_s, 0.2, f"a {wm_class} window")


def first_observation_wait(controller: PythonController, command: list[str]) -> float:
    """Seconds from a setup's launch of `command` to the desktop the agent is first shown (its window up, the
    screen still): the wait that stands here for the VM's fixed 60 s."""
    started = time.monotonic()
    controller.launch(command)
    report = controller.settle(FIRST_OBSERVATION_BOUND_S)
    if report is None or not report.get("settled"):
        raise RuntimeError(f"the desktop did not settle within {FIRST_OBSERVATION_BOUND_S:g} s after launching "
                           f"{command}: {report}")
    return time.monotonic() - started


def settle_memory(processes: Callable[[], list[int]], seconds: float = 3.0) -> Figure:
    """Memory of a desktop's processes once it is idle: the highest of a few readings over `seconds`."""
    readings = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # samples for the whole time: there is no condition to wait for
        pids = processes()
        rss_sum, pss_sum = memory_mb(pids)
        readings.append((group_rss_mb(pids) or pss_sum, rss_sum, pss_sum))
        time.sleep(0.5)
    group, rss_sum, pss_sum = max(readings)
    return Figure.of([group], "MiB", rss_sum_mb=rss_sum, pss_sum_mb=pss_sum)


def run_bench(screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE, resets: int = 5, screenshots: int = 30,
              actions: int = 30, a11y_dumps: int = 5, progress: Callable[[str], None] = lambda _: None) -> BenchResult:
    provider = LocalProvider(screen_size=screen_size, warm_spare=True)
    figures: dict[str, Figure] = {}

    def boot_seconds() -> float:
        seconds = provider.last_ready_s
        if seconds is None:  # set whenever a desktop became ready: after start_emulator and each reset
            raise RuntimeError("the local provider recorded no boot time for its desktop")
        return seconds

    try:
        progress("starting a desktop")
        provider.start_emulator()
        progress(f"measuring reset x{resets}")
        reset_times, boot_times = [], [boot_seconds()]
        for _ in range(resets):
            provider.wait_for_spare()
            reset_times += _timed(provider.revert_to_snapshot, 1, scale=1.0)
            boot_times.append(boot_seconds())
        took_over = time.monotonic()
        figures["reset_s"] = Figure.of(reset_times, "s")
        figures["boot_s"] = Figure.of(boot_times, "s")
        # the next spare boots after a reset: the desktop's own figures come on a quiet machine
        provider.wait_for_spare()
        controller = PythonController(provider.get_ip_address())
        controller.get_screenshot()  # the first capture sets up shared memory
        progress(f"measuring screenshot x{screenshots}")
        figures["screenshot_ms"] = Figure.of(_timed(controller.get_screenshot, screenshots), "ms")
        progress(f"measuring action x{actions}")
        figures["action_ms"] = Figure.of(
            _timed(lambda: controller.execute_python_command("pyautogui.click(960, 540)"), actions), "ms")
        progress("measuring idle memory")
        time.sleep(max(0.0, took_over + IDLE_AFTER_S - time.monotonic()))
        figures["idle_rss_mb"] = settle_memory(provider.process_ids)
        provider.wait_for_spare()
        figures["spare_rss_mb"] = settle_memory(provider.spare_process_ids)
        progress(f"measuring the first observation's wait for {', '.join(FIRST_OBSERVATION_APPS)}")
        waits: dict[str, float] = {}
        for name, command in FIRST_OBSERVATION_APPS.items():  # Calc last: the a11y figure reads its window
            provider.wait_for_spare()
            provider.revert_to_snapshot()
            controller.close()
            controller = PythonController(provider.get_ip_address())
            waits[name] = first_observation_wait(controller, command)
        figures["first_observation_s"] = Figure.of(list(waits.values()), "s", **waits)
        wait_for_window(controller, "libreoffice")
        controller.get_accessibility_tree()  # first dump warms the app's a11y objects
        progress(f"measuring a11y tree x{a11y_dumps}")
        figures["a11y_ms"] = Figure.of(_timed(controller.get_accessibility_tree, a11y_dumps), "ms")
        figures["calc_rss_mb"] = settle_memory(provider.process_ids)
        controller.close()
    finally:
        provider.stop_emulator()
    width, height = screen_size  # a list from JSON or the command line is stored as a tuple
    return BenchResult(figures, (width, height))


def machine_summary() -> str:
    return f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
