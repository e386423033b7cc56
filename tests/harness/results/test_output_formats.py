"""One output vocabulary: `--format table|markdown|json|csv|tsv` on every command that prints a table, the old
flags (`--markdown`, `--json`, `--json FILE`) kept as deprecated aliases; and piped, a table is plain
tab-separated lines, neither padded to its widest row nor cut."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.providers.local.doctor import run_checks
from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_cli.output import FORMATS

from .test_task_scope import ran

ROOT = Path(__file__).resolve().parents[3]
IDS = [task_id for _, task_id in load_task_set(None).select()]
TABLE_COMMANDS = [["tasks", "list"], ["tasks", "coverage"], ["plugins"], ["summarize"], ["compare"], ["rescore"],
                  ["env", "prune"], ["env", "bench"], ["env", "doctor"]]


def invoke(*args: str) -> str:
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize("command", TABLE_COMMANDS, ids=" ".join)
def test_every_table_command_offers_the_same_formats(command):
    shown = " ".join(CliRunner().invoke(cli, [*command, "--help"], terminal_width=200).output.split())
    assert f"--format [{'|'.join(FORMATS)}]" in shown


@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_the_task_list_in_each_format_has_every_id(fmt):
    out = invoke("tasks", "list", "--format", fmt)
    if fmt == "json":
        ids = [t["id"] for t in json.loads(out)]
    elif fmt == "markdown":
        ids = [line.split(" | ")[1] for line in out.splitlines()[2:]]
    else:
        rows = list(csv.reader(io.StringIO(out), delimiter="," if fmt == "csv" else "\t"))
        ids = [row[1] for row in rows[1:]]
    assert ids == IDS


def test_summarize_and_compare_give_tsv(tmp_path):
    a, b = ran(tmp_path / "a", domains=["os"]), ran(tmp_path / "b", domains=["os"])
    summary = [line.split("\t") for line in invoke("summarize", "--format", "tsv", str(a)).splitlines()]
    as_csv = list(csv.reader(io.StringIO(invoke("summarize", "--format", "csv", str(a)))))
    assert summary == as_csv and summary[0][0] == "run"
    compared = invoke("compare", "--format", "csv", str(a), str(b)).splitlines()
    assert compared[0].startswith("group,") and any(line.startswith("Overall,") for line in compared)


def test_the_old_flags_still_work_and_say_they_are_deprecated(tmp_path):
    meta = str(ROOT / "evaluation_examples" / "test_all.json")
    assert invoke("tasks", "coverage", meta, "--markdown") == invoke("tasks", "coverage", meta, "--format", "markdown")
    out = tmp_path / "c.json"
    invoke("tasks", "coverage", meta, "--json", str(out))
    assert json.loads(out.read_text()) == json.loads(invoke("tasks", "coverage", meta, "--format", "json"))
    helped = " ".join(invoke("tasks", "coverage", "--help").split())
    assert "--markdown Deprecated: use --format markdown" in helped
    assert "Deprecated: use --format json > FILE" in helped
    assert "Deprecated: use --format json" in " ".join(invoke("env", "prune", "--help").split())


def test_a_piped_table_is_neither_padded_nor_cut():
    def piped(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "osworld_cli.main", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        return done.stdout.splitlines()

    listed = piped("tasks", "list")
    assert listed[1] == "domain\tid\tinstruction" and [line.split("\t")[1] for line in listed[2:]] == IDS
    assert all(line == line.rstrip() for line in listed)  # the title and every row as long as it is
    doctor = piped("env", "doctor")
    fixes = {line.split("\t")[0]: line.split("\t")[3] for line in doctor[1:]}
    assert fixes == {check.name: check.fix for check in run_checks()}
