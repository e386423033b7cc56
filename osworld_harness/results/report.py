"""`osworld report`: one static HTML file for one or more result folders.

The page opens from disk (no server, no CDN, no external script): the summary tables
of `osworld_harness.results.summary`, inline SVG charts (success rate by domain and by category, the
distributions of steps and of time per task), a task list with filters (plain inline
JS), and per task a collapsed step-by-step timeline: screenshot, the model's response,
the action, errors (traceback collapsed), the score with its evaluation's explanation (each
failed task's "why" is also in the task list) and the recording.

Big runs stay usable: screenshots and recordings are RELATIVE links to the files in
the results folder (computed from where the report is written; nothing is inlined),
images load lazily, timelines are `<details>` closed by default whose body stays in an
inert `<template>` until first opened (no layout, no image requests for closed tasks),
and every piece of text (responses may hold HTML) is escaped when the file is written.
Works on OSWorld's own result folders too (no status.json: score, steps, trajectory).
"""
from __future__ import annotations

import datetime as dt
import html
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from PIL import Image

from desktop_env.tasks.loader import BUILTIN_ROOT

from .comparability import run_comparability
from .compare import GROUP_COLUMNS, CompareError, compare_runs, group_rows, headline, won_and_lost
from .reproduce import reproduce_line
from .summary import (
    CATEGORIES,
    NO_EXPLANATION,
    GroupStats,
    RunResults,
    comparison_rows,
    explanation_of,
    interval_text,
    recorded_disagreements,
    run_heading,
    runs_under,
    summarize_run,
    table_rows,
    task_label,
)
from .task_folder import ErrorRecord, TaskRecord, TaskStatus, read_status, read_trajectory, write_text_atomic

MAX_TEXT = 20_000        # characters of one response / action / info shown; the rest stays in traj.jsonl
MAX_TRACEBACK = 50_000
OUTCOMES = ("ok", "partial", "fail", "error", "incomplete")
STEP_SHOT = re.compile(r"^step_(\d+)_(.*)\.png$")
LIVE_VIEW_URL = re.compile(r"http://(127\.0\.0\.1|localhost):\d{1,5}/view/[A-Za-z0-9-]+")  # desktop_env/live_view


class ReportError(ValueError):
    """Nothing to report (no task results under the given folders)."""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def rel_url(target: Path, base_dir: Path) -> str:
    """`target` as a relative URL from `base_dir` (each path part percent-encoded)."""
    rel = os.path.relpath(os.path.abspath(target), os.path.abspath(base_dir))
    return "/".join(quote(part, safe="") for part in rel.split(os.sep))


def outcome(record: TaskRecord) -> str:
    """ok = scored 1, partial = scored between 0 and 1, fail = scored 0; error and incomplete as recorded."""
    if record.status != "ok":
        return record.status
    score = record.score or 0.0
    if score >= 1.0 - 1e-9:
        return "ok"
    return "partial" if score > 0 else "fail"


# -- reading one task folder --------------------------------------------------------------------

@dataclass
class Step:
    entry: dict[str, Any]
    screenshot: Path | None


@dataclass
class TaskView:
    run: RunResults
    record: TaskRecord
    folder: Path
    status: TaskStatus | None
    steps: list[Step] = field(default_factory=list)
    bad_lines: int = 0
    initial_shot: Path | None = None
    recording: Path | None = None
    rescore: dict[str, Any] | None = None
    instruction: str | None = None

    @property
    def outcome(self) -> str:
        return outcome(self.record)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def examples_folders(run: RunResults, meta: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where the run's task files are: beside `meta` (report --tasks), beside the meta file our args.json
    records (the built-in suite when it records none), or OSWorld's `test_config_base_dir`."""
    folders = [Path(meta).parent / "examples"] if meta else []
    args = run.args or {}
    config = args.get("config")
    if isinstance(config, dict):
        tasks = config.get("tasks")
        meta_file = Path(tasks) if isinstance(tasks, str) and tasks else BUILTIN_ROOT / "test_all.json"
        folders.append(meta_file.parent / "examples")
    elif isinstance(args.get("test_config_base_dir"), str):
        folders.append(Path(args["test_config_base_dir"]) / "examples")
    return folders


def instruction_of(record: TaskRecord, status: TaskStatus | None, folders: Iterable[Path]) -> str | None:
    """The task's instruction: as status.json recorded it, else from its task file in `folders`."""
    if status is not None and status.instruction:
        return status.instruction
    for folder in folders:
        task = _read_json(folder / record.domain / f"{record.task_id}.json")
        if isinstance(task, dict) and isinstance(task.get("instruction"), str):
            return str(task["instruction"])
    return None


def read_task_view(run: RunResults, record: TaskRecord, folders: Iterable[Path] = ()) -> TaskView:
    folder = run.folder(record)
    view = TaskView(run, record, folder, read_status(folder))
    view.instruction = instruction_of(record, view.status, folders)
    shots: dict[int, list[Path]] = {}
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        names = []
    present = set(names)
    for name in names:
        match = STEP_SHOT.match(name)
        if match:
            shots.setdefault(int(match.group(1)), []).append(folder / name)
    if shots.get(0):
        view.initial_shot = shots[0][0]
    trajectory = read_trajectory(folder)
    view.bad_lines = trajectory.bad_lines
    for entry in trajectory.entries:
        shot = entry.get("screenshot_file")
        view.steps.append(Step(entry, folder / shot if isinstance(shot, str) and shot in present else None))
    if (folder / "recording.mp4").is_file():
        view.recording = folder / "recording.mp4"
    rescore = _read_json(folder / "rescore.json")
    view.rescore = rescore if isinstance(rescore, dict) else None
    return view


# -- SVG charts ---------------------------------------------------------------------------------

BAR_COLOR = "#3b7dd8"


def bar_chart(title: str, rows: list[GroupStats]) -> str:
    """Horizontal bars: the leaderboard's score (errors as 0) per group, its 95% interval as a whisker,
    with the figures beside each bar."""
    label_w, bar_w, text_w, row_h, top = 150, 250, 260, 24, 30
    width, height = label_w + bar_w + text_w, top + row_h * max(len(rows), 1) + 10
    parts = [f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>{esc(title)}</title>',
             f'<text x="0" y="18" class="chart-title">{esc(title)}</text>']
    if not rows:
        parts.append(f'<text x="0" y="{top + 16}" class="muted">no tasks</text>')
    for i, stats in enumerate(rows):
        y = top + i * row_h
        rate = stats.success_rate_errors_as_zero
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{esc(stats.name)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="{row_h - 8}" class="track"/>')
        if rate is not None:
            parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar_w * rate:.1f}" height="{row_h - 8}" '
                         f'fill="{BAR_COLOR}"><title>{esc(stats.name)}: {rate:.1%}</title></rect>')
        interval = stats.score.interval if stats.score else None
        if interval is not None:
            low, high, mid = label_w + bar_w * interval.low, label_w + bar_w * interval.high, y + row_h / 2
            parts.append(f'<g class="whisker"><title>95% CI {interval_text(stats.score)}</title>'
                         f'<line x1="{low:.1f}" y1="{mid:.1f}" x2="{high:.1f}" y2="{mid:.1f}"/>'
                         f'<line x1="{low:.1f}" y1="{y + 7}" x2="{low:.1f}" y2="{y + row_h - 7}"/>'
                         f'<line x1="{high:.1f}" y1="{y + 7}" x2="{high:.1f}" y2="{y + row_h - 7}"/></g>')
        text = "no finished task" if rate is None else f"{rate:.1%} [{interval_text(stats.score)}] ({stats.tasks})"
        if stats.errors:
            text += f", {stats.errors} error{'s' if stats.errors > 1 else ''}"
        parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + 16}">{esc(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `raw`."""
    power: float = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _bins(values: list[float], integer: bool) -> list[tuple[float, float, int]]:
    """(low, high, count) bins: one per integer for small integer ranges, else about 10 of a round width."""
    low, high = min(values), max(values)
    if integer and high - low <= 30:
        start, step = low, 1.0
    else:
        step = _nice_step((high - low) / 10) if high > low else 1.0
        if integer:
            step = max(1.0, math.ceil(step))
        start = math.floor(low / step) * step
    count = int((high - start) // step) + 1
    counts = [0] * count
    for v in values:
        counts[min(int((v - start) // step), count - 1)] += 1
    return [(start + i * step, start + (i + 1) * step, n) for i, n in enumerate(counts)]


def _fmt(value: float) -> str:
    return f"{int(value)}" if value == int(value) else f"{round(value, 3):g}"


def histogram(title: str, values: list[float], unit: str, integer: bool = False) -> str:
    width, height, left, bottom, top = 560, 220, 36, 40, 30
    plot_w, plot_h = width - left - 10, height - top - bottom
    parts = [f'<svg class="chart" role="img" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><title>{esc(title)}</title>',
             f'<text x="0" y="18" class="chart-title">{esc(title)}</text>']
    if not values:
        parts.append(f'<text x="{left}" y="{top + 30}" class="muted">no data</text></svg>')
        return "".join(parts)
    bins = _bins(values, integer)
    peak = max(c for _, _, c in bins) or 1
    slot = plot_w / len(bins)
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>')
    parts.append(f'<text x="{left - 6}" y="{top + 10}" text-anchor="end" class="muted">{peak}</text>')
    label_every = max(1, math.ceil(len(bins) / 10))
    for i, (lo, hi, count) in enumerate(bins):
        x = left + i * slot
        h = plot_h * count / peak
        span = _fmt(lo) if integer and hi - lo == 1 else f"{_fmt(lo)}–{_fmt(hi)}"
        if count:
            parts.append(f'<rect x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{max(slot - 2, 1):.1f}" '
                         f'height="{h:.1f}" fill="{BAR_COLOR}"><title>{esc(span)} {esc(unit)}: {count} '
                         f'task{"s" if count > 1 else ""}</title></rect>')
            parts.append(f'<text x="{x + slot / 2:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle" '
                         f'class="small">{count}</text>')
        if i % label_every == 0:
            parts.append(f'<text x="{x + slot / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
                         f'class="small">{esc(span)}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" class="muted">'
                 f'{esc(unit)} ({len(values)} tasks)</text></svg>')
    return "".join(parts)


# -- HTML pieces --------------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header,main{max-width:1400px;margin:0 auto;padding:12px 20px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:24px 0 8px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:#6b7480;fill:#6b7480}.small{font-size:11px}
table{border-collapse:collapse;background:#fff;margin:6px 0 14px}
th,td{border:1px solid #d8dde3;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#eef1f4}td:first-child,th:first-child{text-align:left}
tr.category td{background:#f3f6fb}tr.overall td{font-weight:bold;background:#e8eef8}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(590px,max-content));gap:12px}
svg.chart{background:#fff;border:1px solid #d8dde3;font-size:12px}
svg .chart-title{font-weight:bold;font-size:13px}svg .track{fill:#edf0f3}svg .axis{stroke:#9aa3ad}
svg .whisker line{stroke:#1d232b;stroke-width:1.5}
.paired{background:#fff;border:1px solid #d8dde3;padding:4px 14px 10px;margin:10px 0}ul.headline{padding-left:18px}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;background:#fff;border:1px solid #d8dde3;
 padding:8px 10px;position:sticky;top:0;z-index:2}
#task-table td,#task-table th{text-align:left}#task-table td.err{text-align:left;max-width:380px;overflow:hidden;
 text-overflow:ellipsis}#task-table td.why{max-width:520px;font-size:12px}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;color:#fff}
.o-ok{background:#2e8b57}.o-partial{background:#c98a14}.o-fail{background:#8a929b}.o-error{background:#d9534f}
.o-incomplete{background:#6f5bb5}
details.task{background:#fff;border:1px solid #d8dde3;margin:6px 0;scroll-margin-top:80px}
details.task>summary{cursor:pointer;padding:6px 10px;font-weight:600}
.task-body{padding:4px 14px 12px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.meta dt{color:#6b7480}dl.meta dd{margin:0}
.error{border-left:4px solid #d9534f;background:#fdf1f0;padding:6px 10px;margin:8px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f7;border:1px solid #e1e5ea;padding:6px 8px;
 margin:4px 0;max-height:420px;overflow:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
ol.timeline{list-style:none;padding:0;margin:8px 0}
ol.timeline>li{display:flex;gap:14px;border-top:1px solid #e6e9ed;padding:10px 0}
.shot{flex:0 0 360px}.shot img{width:360px;height:auto;border:1px solid #cfd5dc;background:#eee}
.step-body{flex:1;min-width:0}.step-body h4{margin:0 0 4px;font-size:13px}.step-body h5{margin:6px 0 0;
 font-size:12px;color:#6b7480}
.action-error{color:#b52b27}.rescored{color:#c98a14;font-weight:600}video{max-width:640px;width:100%;background:#000}
"""

JS = """
(function () {
  "use strict";
  var byId = function (id) { return document.getElementById(id); };
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-task]"));
  var rows = items.filter(function (el) { return el.tagName === "TR"; });
  var controls = ["f-run", "f-domain", "f-outcome", "f-text"].map(byId);
  function matches(el) {
    var run = byId("f-run").value, domain = byId("f-domain").value, out = byId("f-outcome").value;
    var text = byId("f-text").value.trim().toLowerCase();
    return (!run || el.getAttribute("data-run") === run) &&
      (!domain || el.getAttribute("data-domain") === domain) &&
      (!out || el.getAttribute("data-outcome") === out) &&
      (!text || el.getAttribute("data-id").toLowerCase().indexOf(text) >= 0);
  }
  function apply() {
    var shown = 0;
    items.forEach(function (el) {
      var ok = matches(el);
      el.hidden = !ok;
      if (ok && el.tagName === "TR") { shown += 1; }
    });
    byId("f-count").textContent = shown + " of " + rows.length + " tasks shown";
  }
  controls.forEach(function (el) {
    el.addEventListener(el.tagName === "INPUT" ? "input" : "change", apply);
  });
  function render(d) {
    if (d.getAttribute("data-rendered")) { return; }
    var template = d.querySelector("template");
    if (template) { d.appendChild(document.importNode(template.content, true)); }
    d.setAttribute("data-rendered", "1");
  }
  document.querySelectorAll("details.task").forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) { render(d); } });
  });
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? byId(id) : null;
    if (el && el.tagName === "DETAILS") { el.hidden = false; el.open = true; render(el); el.scrollIntoView(); }
  }
  byId("expand-shown").addEventListener("click", function () {
    document.querySelectorAll("details.task").forEach(function (d) {
      if (!d.hidden) { d.open = true; render(d); }
    });
  });
  byId("collapse-all").addEventListener("click", function () {
    document.querySelectorAll("details.task").forEach(function (d) { d.open = false; });
  });
  window.addEventListener("hashchange", openHash);
  apply();
  openHash();
  document.body.setAttribute("data-ready", "1");
})();
"""


def summary_table(rows: list[GroupStats]) -> str:
    header, body = table_rows(rows)
    out = ['<table class="summary"><thead><tr>', *(f"<th>{esc(c)}</th>" for c in header), "</tr></thead><tbody>"]
    for stats, cells in zip(rows, body, strict=True):
        cls = "overall" if stats.name == "Overall" else "category" if stats.name in CATEGORIES else "domain"
        out.append(f'<tr class="{cls}">' + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _table(header: Iterable[str], body: Iterable[list[str]], cls: str) -> str:
    out = [f'<table class="{cls}"><thead><tr>', *(f"<th>{esc(c)}</th>" for c in header), "</tr></thead><tbody>"]
    out += [f'<tr class="{"overall" if cells[0] == "Overall" else ""}">' + "".join(f"<td>{esc(c)}</td>" for c in cells)
            + "</tr>" for cells in body]
    out.append("</tbody></table>")
    return "".join(out)


def comparison_table(summaries: list[tuple[RunResults, list[GroupStats]]]) -> str:
    header, body = comparison_rows(summaries)
    return _table(header, body, "comparison")


def paired_section(a: RunResults, b: RunResults) -> str:
    """Run A (the report's first) against run B, paired by task over the tasks both finished."""
    try:
        result = compare_runs(a, b, common=True)
    except CompareError as e:
        return f'<div class="paired"><h3>{esc(a.label)} against {esc(b.label)}</h3><p class="muted">{esc(e)}</p></div>'
    lines = "".join(f"<li>{esc(line)}</li>" for line in headline(result))
    lists = "".join(f"<p><strong>{esc(title)}</strong>: {esc(', '.join(names) or 'none')}</p>"
                    for title, names in won_and_lost(result))
    return (f'<div class="paired"><h3>{esc(a.label)} (A) against {esc(b.label)} (B), paired by task</h3>'
            f'<ul class="headline">{lines}</ul>{_table(GROUP_COLUMNS, group_rows(result), "paired")}{lists}</div>')


def _shorten(text: str, limit: int, where: str = "traj.jsonl") -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters in {where})"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _pre(value: Any, cls: str = "", limit: int = MAX_TEXT) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<pre{attr}>{esc(_shorten(_as_text(value), limit))}</pre>"


class Links:
    """Relative URLs of one task folder's files from the report's folder, and its screenshots' size."""

    def __init__(self, folder: Path, base: Path):
        self.folder = folder
        self.base = base
        self.folder_url = rel_url(folder, base)
        self._size: tuple[int, int] | None = None
        self._size_read = False

    def url(self, path: Path) -> str:
        if path.parent == self.folder:
            return f"{self.folder_url}/{quote(path.name, safe='')}"
        return rel_url(path, self.base)

    def image_size(self, path: Path) -> tuple[int, int] | None:
        """The first screenshot's size (read from its header), assumed for the task's others: it only
        reserves room before an image loads; a loaded image keeps its own aspect ratio."""
        if not self._size_read:
            self._size_read = True
            try:
                with Image.open(path) as image:
                    self._size = image.size
            except Exception:
                self._size = None
        return self._size


def _img(path: Path, links: Links, alt: str) -> str:
    url = esc(links.url(path))
    size = links.image_size(path)
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    return f'<a href="{url}"><img loading="lazy" decoding="async" src="{url}"{dims} alt="{esc(alt)}"></a>'


def _error_block(error: ErrorRecord, title: str = "error") -> str:
    out = [f'<div class="error"><strong>{esc(title)}: {esc(error.type)}</strong>',
           f"<div>{esc(_shorten(error.message, MAX_TEXT, 'status.json'))}</div>"]
    if error.traceback:
        out.append(f"<details><summary>traceback</summary>{_pre(error.traceback, limit=MAX_TRACEBACK)}</details>")
    out.append("</div>")
    return "".join(out)


def _step_info(entry: dict[str, Any]) -> str:
    info = entry.get("info")
    out = []
    if isinstance(info, dict):
        for key in ("action_error", "invalid_action"):
            if info.get(key):
                title = esc(key.replace("_", " "))
                out.append(f'<h5 class="action-error">{title}</h5>{_pre(info[key], "action-error")}')
        if info.get("no_action"):
            out.append('<p class="action-error">the agent gave no valid action</p>')
        rest = {k: v for k, v in info.items() if k not in ("action_error", "invalid_action", "no_action")}
        if rest:
            out.append(f"<h5>info</h5>{_pre(rest)}")
    elif info not in (None, "", {}):
        out.append(f"<h5>info</h5>{_pre(info)}")
    return "".join(out)


def _usage_text(usage: Any) -> str:
    if not isinstance(usage, dict) or not usage:
        return ""
    return ", ".join(f"{k} {v}" for k, v in usage.items() if v is not None)


def timeline(view: TaskView, links: Links) -> str:
    out = ['<ol class="timeline">']
    if view.initial_shot:
        out.append(f'<li class="step step-0"><div class="shot">{_img(view.initial_shot, links, "screen after reset")}'
                   '</div><div class="step-body"><h4>start: the screen after reset</h4></div></li>')
    previous_step, previous_response = object(), object()
    for step in view.steps:
        entry = step.entry
        num = entry.get("step_num")
        head = [f"step {esc(num)}"]
        if entry.get("action_timestamp"):
            head.append(esc(entry["action_timestamp"]))
        if entry.get("reward") not in (None, 0, 0.0):
            head.append(f"reward {esc(entry['reward'])}")
        if entry.get("done"):
            head.append("done")
        usage = _usage_text(entry.get("usage"))
        if usage and num != previous_step:
            head.append(esc(usage))
        shot = _img(step.screenshot, links, f"screen after step {num}") if step.screenshot else \
            '<p class="muted">no screenshot</p>'
        body = [f"<h4>{' · '.join(head)}</h4>"]
        response = entry.get("response")
        if "response" in entry and not (num == previous_step and response == previous_response):
            body.append(f"<h5>response</h5>{_pre(response, 'response')}")
        elif "response" in entry:
            body.append('<p class="muted">(same response as above)</p>')
        body.append(f"<h5>action</h5>{_pre(entry.get('action'), 'action')}")
        body.append(_step_info(entry))
        out.append(f'<li class="step"><div class="shot">{shot}</div><div class="step-body">{"".join(body)}</div></li>')
        previous_step, previous_response = num, response
    if not view.steps and not view.initial_shot:
        out.append('<li class="muted">no trajectory recorded</li>')
    out.append("</ol>")
    if view.bad_lines:
        out.append(f'<p class="muted">{view.bad_lines} unreadable line(s) in traj.jsonl skipped</p>')
    return "".join(out)


def _fmt_seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _steps_text(steps: int | None) -> str:
    return "- steps" if steps is None else f"{steps} step{'' if steps == 1 else 's'}"


def trial_mark(record: TaskRecord) -> str:
    return f" #{record.trial}" if record.trial > 1 else ""


def _score_text(record: TaskRecord) -> str:
    return "-" if record.score is None else f"{record.score:g}"


def task_details(view: TaskView, anchor: str, base: Path) -> str:
    record, status = view.record, view.status or TaskStatus()
    attrs = (f'data-task="1" data-run="{esc(view.run.label)}" data-domain="{esc(record.domain)}" '
             f'data-outcome="{esc(view.outcome)}" data-id="{esc(record.task_id)}"')
    summary = (f'<span class="badge o-{esc(view.outcome)}">{esc(view.outcome)}</span> {esc(record.domain)}/'
               f'{esc(record.task_id)}{esc(trial_mark(record))} <span class="muted">score {esc(_score_text(record))} · '
               f'{esc(_steps_text(record.steps))} · {esc(_fmt_seconds(record.seconds))} s'
               f'{" · " + esc(view.run.label) if view.run.label else ""}</span>')
    meta = [("score", _score_text(record)), ("status", status.status if view.status else record.status),
            ("steps", "-" if record.steps is None else record.steps), ("time s", _fmt_seconds(record.seconds))]
    for key, value in (("started", status.started), ("finished", status.finished)):
        if value:
            meta.append((key, value))
    if status.durations:
        meta.append(("durations s", ", ".join(f"{k} {v}" for k, v in status.durations.items())))
    usage = _usage_text(status.usage)
    if usage:
        meta.append(("usage", usage))
    if view.rescore:
        rs = view.rescore
        text = (f"not rescorable: {rs.get('reason')}" if rs.get("rescorable") is False
                else f"error: {rs['error']}" if rs.get("error")
                else f"{rs.get('new_score')} (was {rs.get('old_score')})")
        meta.append(("rescore", f"{text} at {rs.get('rescored_at', '?')}"))
    instruction = (f'<p class="instruction"><strong>instruction:</strong> {esc(view.instruction)}</p>'
                   if view.instruction else '<p class="muted">instruction: not recorded, and no task file found '
                                            '(report --tasks META finds it)</p>')
    body = [instruction, '<dl class="meta">', *(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in meta)]
    links = Links(view.folder, base)
    anchors = [f'<a href="{esc(links.folder_url)}/">folder</a>']
    for name in ("traj.jsonl", "status.json", "result.txt", "runtime.log", "desktop.log", "rescore.json"):
        if (view.folder / name).is_file():
            anchors.append(f'<a href="{esc(links.url(view.folder / name))}">{esc(name)}</a>')
    live = status.live_view if view.status and status.status == "running" else None
    if live and LIVE_VIEW_URL.fullmatch(live):  # a link into the harness's live view, nothing else
        anchors.append(f'<a class="live" href="{esc(live)}">watch live</a>')
    body.append(f"<dt>files</dt><dd>{' · '.join(anchors)}</dd></dl>")
    if status.error:
        body.append(_error_block(status.error))
    previous = status.previous_errors
    if previous:
        inner = "".join(_error_block(p.error, f"earlier attempt ({p.finished or 'cut off'})") for p in previous)
        body.append(f"<details><summary>{len(previous)} earlier error(s)</summary>{inner}</details>")
    if view.recording:
        url = esc(links.url(view.recording))
        body.append(f'<h3>recording</h3><video controls preload="none" src="{url}"></video>'
                    f'<div><a href="{url}">recording.mp4</a></div>')
    body.append(_evaluation_block(status))
    body.append(f"<h3>timeline</h3>{timeline(view, links)}")
    final = ("no score: the task ended with an error" if record.status == "error" else
             "no score: the task did not finish" if record.status == "incomplete" else f"score: {_score_text(record)}")
    body.append(f"<p><strong>{esc(final)}</strong></p>")
    # The body stays inert in a <template> (no layout, no image requests) until the task is opened.
    return (f'<details class="task" id="{anchor}" {attrs}><summary>{summary}</summary>'
            f'<template><div class="task-body">{"".join(body)}</div></template></details>')


def _options(select_id: str, label: str, values: Iterable[str]) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return (f'<label>{esc(label)} <select id="{select_id}"><option value="">all</option>{opts}</select></label>')


def _rescore_note(view: TaskView) -> str:
    """" → new" beside the score when `osworld rescore` found a different one."""
    rs = view.rescore
    if view.record.rescored and rs and rs.get("changed"):
        old = rs.get("old_score")
        was = f"{old:g}" if isinstance(old, (int, float)) else str(old)
        return (f' <span class="rescored" title="rescored at {esc(rs.get("rescored_at"))}">'
                f'(rescored; was {esc(was)})</span>')
    if not rs or not rs.get("changed") or rs.get("new_score") is None or view.record.rescored:
        return ""
    new = rs["new_score"]
    text = f"{new:g}" if isinstance(new, (int, float)) else str(new)
    return f' <span class="rescored" title="rescored at {esc(rs.get("rescored_at"))}">→ {esc(text)}</span>'


def _why_text(view: TaskView) -> str:
    """Beside a task that scored below 1: its evaluation's explanation (or that none was recorded)."""
    if view.outcome not in ("fail", "partial"):
        return ""
    return explanation_of(view.status)


def _shorten_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _evaluation_block(status: TaskStatus) -> str:
    """The evaluation as status.json keeps it: the explanation, then each metric's score and why."""
    evaluation = status.evaluation
    if evaluation is None:
        return ""
    out = [f'<h3>evaluation</h3>{_pre(evaluation.explanation or NO_EXPLANATION, "explanation")}']
    parts = evaluation.parts
    if len(parts) > 1:
        items = "".join(f"<li><code>{esc(p.func)}</code>: "
                        + (esc("not run") if p.skipped else
                           f"{esc(p.score)} · {esc(p.explanation)}") + "</li>" for p in parts)
        out.append(f"<ul class=\"metrics\">{items}</ul>")
    return "".join(out)


def task_section(views: list[TaskView], base: Path) -> str:
    anchors = [f"task-{i}" for i in range(len(views))]
    filters = ('<div class="filters">'
               + _options("f-run", "run", dict.fromkeys(v.run.label for v in views))
               + _options("f-domain", "domain", sorted({v.record.domain for v in views}))
               + _options("f-outcome", "outcome", OUTCOMES)
               + '<label>task id <input id="f-text" type="search" placeholder="filter"></label>'
               + '<button type="button" id="expand-shown">expand shown</button>'
               + '<button type="button" id="collapse-all">collapse all</button>'
               + f'<span id="f-count" class="muted">{len(views)} tasks</span></div>')
    rows = []
    for view, anchor in zip(views, anchors, strict=True):
        r = view.record
        error = view.status.error if view.status else None
        error_text = error.text() if error else ""
        why = _why_text(view)
        rows.append(f'<tr data-task="1" data-run="{esc(view.run.label)}" data-domain="{esc(r.domain)}" '
                    f'data-outcome="{esc(view.outcome)}" data-id="{esc(r.task_id)}">'
                    f"<td>{esc(view.run.label)}</td><td>{esc(r.domain)}</td>"
                    f'<td class="task"><a href="#{anchor}" title="{esc(view.instruction or "")}">'
                    f'{esc(r.task_id)}{esc(trial_mark(r))}</a></td>'
                    f'<td><span class="badge o-{esc(view.outcome)}">{esc(view.outcome)}</span></td>'
                    f"<td>{esc(_score_text(r))}{_rescore_note(view)}</td>"
                    f"<td>{esc('-' if r.steps is None else r.steps)}</td>"
                    f"<td>{esc(_fmt_seconds(r.seconds))}</td>"
                    f'<td class="err" title="{esc(error_text[:500])}">{esc(error_text[:160])}</td>'
                    f'<td class="why" title="{esc(why[:1000])}">{esc(_shorten_line(why, 240))}</td></tr>')
    table = ('<table id="task-table"><thead><tr><th>run</th><th>domain</th><th>task</th><th>outcome</th>'
             '<th>score</th><th>steps</th><th>time s</th><th>error</th><th>why</th></tr></thead><tbody>'
             + "".join(rows) + "</tbody></table>")
    details = "".join(task_details(view, anchor, base) for view, anchor in zip(views, anchors, strict=True))
    return (f'<section id="tasks"><h2>tasks</h2>{filters}{table}'
            f'<h2>timelines</h2><p class="muted">Each task opens to its step-by-step timeline.</p>'
            '<noscript><p>The timelines need JavaScript to open.</p></noscript>'
            f'<div id="timelines">{details}</div></section>')


def run_section(run: RunResults, rows: list[GroupStats], index: int) -> str:
    domains = [s for s in rows if s.name not in CATEGORIES and s.name != "Overall"]
    categories = [s for s in rows if s.name in CATEGORIES or s.name == "Overall"]
    done = [r for r in run.records if r.status in ("ok", "error")]
    charts = [bar_chart("score by domain (errors as 0, 95% CI)", domains),
              bar_chart("score by category (errors as 0, 95% CI)", categories),
              histogram("steps per task", [float(r.steps) for r in done if r.steps is not None], "steps", integer=True),
              histogram("time per task", [r.seconds for r in done if r.seconds is not None], "seconds")]
    command = reproduce_line(run)
    reproduce = f'<p class="reproduce">reproduce with: <code>{esc(command)}</code></p>' if command else ""
    return (f'<section class="run" id="run-{index}"><h2>{esc(run.label)}</h2>'
            f'<p class="muted">{esc(run.path)}; {esc(run_heading(run, rows))}</p>{reproduce}'
            f'{verdict_block(run)}{summary_table(rows)}'
            f'{recorded_table(run)}<div class="charts">{"".join(charts)}</div></section>')


def verdict_block(run: RunResults) -> str:
    """Whether the run's score stands beside OSWorld's leaderboard, and on which desktop it was made."""
    verdict = run_comparability(run)
    mark = {True: "yes", False: "no", None: "not known"}[verdict.comparable]
    items = ([f'<li class="desktop">{esc(line.strip())}</li>' for line in verdict.desktop.lines()]
             if verdict.desktop else [])
    items += [f'<li class="reason">{esc(reason)}</li>' for reason in verdict.reasons]
    items += [f'<li class="warning">warning: {esc(warning)}</li>' for warning in verdict.warnings]
    items += [f'<li class="note">note: {esc(note)}</li>' for note in verdict.notes]
    return (f'<div class="verdict comparable-{mark.replace(" ", "-")}"><h3>comparable with OSWorld\'s leaderboard: '
            f'{mark}</h3><ul>{"".join(items)}</ul></div>')


def recorded_table(run: RunResults) -> str:
    """A replay's tasks that ended otherwise here than where their trajectories were recorded."""
    listed = recorded_disagreements(run)
    if not listed:
        return ""
    body = [[task_label(d.domain, d.task_id, d.trial), f"{d.recorded:g}", d.status if d.here is None else f"{d.here:g}"]
            for d in listed]
    return (f'<h3>{len(listed)} replayed task(s) ended otherwise than where they were recorded</h3>'
            + _table(["task", "score where recorded", "score here"], body, "recorded"))


def render(summaries: list[tuple[RunResults, list[GroupStats]]], views: list[TaskView], base: Path,
           sources: list[str], title: str) -> str:
    runs = "".join(run_section(run, rows, i) for i, (run, rows) in enumerate(summaries))
    paired = "".join(paired_section(summaries[0][0], run) for run, _ in summaries[1:])
    comparison = (f'<section id="comparison"><h2>comparison</h2>'
                  f'<h3>side by side (score with errors as 0 [95% CI] (tasks))</h3>{comparison_table(summaries)}'
                  f"{paired}</section>") if len(summaries) > 1 else ""
    generated = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{esc(title)}</h1><p class=\"muted\">generated {esc(generated)} from "
            f"{esc(', '.join(sources))}: {len(summaries)} run(s), {len(views)} task(s)</p></header>"
            f"<main>{runs}{comparison}{task_section(views, base)}</main><script>{JS}</script></body></html>\n")


def build_report(paths: Iterable[str | os.PathLike[str]], output: str | os.PathLike[str],
                 title: str = "osworld report", rescored: bool = False, labels: dict[str, str] | None = None,
                 tasks: str | os.PathLike[str] | None = None) -> Path:
    """Writes the HTML report of every run under `paths` to `output`; returns its path. `rescored`: the
    scores `osworld rescore` wrote, where it wrote one; `labels`: NAME by PATH; `tasks`: a meta file whose
    task files give the instructions of folders that did not record theirs."""
    sources = [str(p) for p in paths]
    try:
        runs = runs_under(sources, labels, rescored)
    except ValueError as e:
        raise ReportError(str(e)) from None
    if not runs:
        raise ReportError(f"no task results under {', '.join(sources) or '(no folder given)'}")
    output = Path(output)
    if output.is_dir():
        output = output / "report.html"
    base = output.parent if str(output.parent) else Path(".")
    summaries = [(run, summarize_run(run)) for run in runs]
    views = [read_task_view(run, record, examples_folders(run, tasks)) for run in runs
             for record in sorted(run.records, key=lambda r: (r.domain, r.task_id, r.trial))]
    write_text_atomic(output, render(summaries, views, base, sources, title))
    return output
