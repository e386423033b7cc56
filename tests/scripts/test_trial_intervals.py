"""scripts/trial_intervals.py: a run of --trials 3 read as runs of its first 1, 2 and 3 trials."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.harness.results.test_summary import trial

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "trial_intervals.py"


def test_each_k_reads_the_first_k_trials_of_every_task(tmp_path):
    outcomes = {"solid": [1.0, 1.0, 1.0], "never": [0.0, 0.0, 0.0], "flaky": [1.0, 0.0, 0.0], "late": [0.0, 0.0, 1.0]}
    for task_id, scores in outcomes.items():
        for k, score in enumerate(scores, start=1):
            trial(tmp_path, task_id, k, score)
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=120,
                          cwd=SCRIPT.parents[1])
    assert done.returncode == 0, done.stderr
    rows = [line.strip("| ").split(" | ") for line in done.stdout.splitlines()[2:]]
    assert [(r[1], r[2], r[3]) for r in rows] == [("1", "4", "50.0%"), ("2", "4", "37.5%"), ("3", "4", "41.7%")]
    # pass@k over 4 tasks: solid always; flaky from k=1; late only at k=3. pass^k: solid alone past k=1.
    assert [(r[6], r[7], r[8]) for r in rows] == [("-", "-", "-"), ("50.0%", "25.0%", "25.0%"),
                                                  ("75.0%", "25.0%", "50.0%")]
