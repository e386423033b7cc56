"""Throughput of whole runs: tasks per hour, memory and CPU, for N desktops on a backend.

Each measurement is a real `run_benchmark` of the reference agent into a fresh results folder,
timed from the call to its return (so desktop boots, Ray start-up and teardown count, as they
do for a user). Memory is the machine's used memory (MemTotal - MemAvailable) sampled every
0.5 s, minus what was used just before the run: everything the run added, desktops, apps,
workers and Ray's own processes. CPU is the busy share of all cores over the run (/proc/stat).
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from osworld_harness.execution.run import RunConfig, run_benchmark

MIB = 1024 * 1024


@dataclass
class ThroughputResult:
    backend: str
    num_envs: int
    tasks: int
    ok: int
    errors: int
    success: float
    wall_s: float
    tasks_per_hour: float
    peak_extra_memory_mib: float      # over the machine's use before the run
    memory_per_env_mib: float
    cpu_busy_share: float             # 0..1 over all cores
    cores: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def used_memory_bytes() -> int:
    fields: dict[str, int] = {}
    with open("/proc/meminfo") as f:
        for line in f:
            name, value = line.split(":", 1)
            fields[name] = int(value.split()[0]) * 1024
    return fields["MemTotal"] - fields["MemAvailable"]


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies over all cores since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


class MemorySampler(threading.Thread):
    def __init__(self, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak = used_memory_bytes()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.peak = max(self.peak, used_memory_bytes())

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return max(self.peak, used_memory_bytes())


def measure(base: RunConfig, backend: str, num_envs: int, result_dir: Path) -> ThroughputResult:
    """One run of `base`'s tasks with `num_envs` desktops on `backend`, into `result_dir` (emptied first)."""
    cores = os.cpu_count() or 1
    shutil.rmtree(result_dir, ignore_errors=True)
    cpus_per_env = base.ray_cpus_per_env
    if backend == "ray" and base.ray_address is None:
        # A local Ray gets one CPU slot per core: fractions let N desktops share the cores.
        cpus_per_env = min(1.0, cores / num_envs)
    config = replace(base, backend=backend, num_envs=num_envs, resume=False, result_dir=str(result_dir),
                     ray_cpus_per_env=cpus_per_env)
    before = used_memory_bytes()
    busy0, total0 = cpu_times()
    sampler = MemorySampler()
    sampler.start()
    started = time.monotonic()
    try:
        summary = run_benchmark(config)
    finally:
        peak = sampler.stop()
    wall = time.monotonic() - started
    busy1, total1 = cpu_times()
    extra_mib = max(0, peak - before) / MIB
    return ThroughputResult(
        backend=backend, num_envs=num_envs, tasks=summary.ran, ok=summary.ok, errors=summary.errors,
        success=summary.score_sum, wall_s=round(wall, 1), tasks_per_hour=round(summary.ran / wall * 3600, 1),
        peak_extra_memory_mib=round(extra_mib), memory_per_env_mib=round(extra_mib / num_envs),
        cpu_busy_share=round((busy1 - busy0) / max(1, total1 - total0), 3), cores=cores)


def to_markdown(results: list[ThroughputResult]) -> str:
    baseline = {r.backend: r.tasks_per_hour for r in results if r.num_envs == 1}
    lines = ["| backend | envs | tasks | ok | errors | wall s | tasks/hour | speed-up vs 1 env | peak extra MiB | "
             "MiB per env | CPU busy |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        speedup = f"{r.tasks_per_hour / baseline[r.backend]:.2f}x" if baseline.get(r.backend) else "-"
        lines.append(f"| {r.backend} | {r.num_envs} | {r.tasks} | {r.ok} | {r.errors} | {r.wall_s:g} | "
                     f"{r.tasks_per_hour:g} | {speedup} | {r.peak_extra_memory_mib:g} | {r.memory_per_env_mib:g} | "
                     f"{r.cpu_busy_share:.0%} |")
    return "\n".join(lines) + "\n"
