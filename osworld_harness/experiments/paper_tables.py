"""The paper's tables as matrices of runs: build the cells, plan and price them, run or reuse
them, and render the tables.

A cell is one (model, observation type, setting) and one `osworld run` with its own RunConfig
and its own result folder, so settings never mix:

    <root>/main/<action_space>/<obs>/<model>/<domain>/<id>/                the main table
    <root>/screenshot_scale/<scale>/<action_space>/<obs>/<model>/...        e.g. screenshot_scale/0.4
    <root>/history/<n|all>/...                                              e.g. history/all
    <root>/perturb/<layout|clutter>/...

An analysis cell whose settings are those of the main table (scale 1.0, the main table's history
length, no perturbation) is the main table's run and reuses <root>/main, unless the runs
recorded there (args.json) were made with other settings; then it gets its own folder, e.g.
<root>/perturb/none. Every folder's recorded settings are checked before anything runs in it.

Tables count every selected task: a cell's success rate is over the tasks that finished with
a score; tasks that ended in an error are counted apart, never as failures; tasks with no
finished run are shown as missing, never as 0.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop_env.tasks import load_task_set
from mm_agents.llm import Usage, cost_usd
from mm_agents.observations import CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS
from mm_agents.prompts import observation_text, system_prompt
from osworld_harness.execution.plan import plan_tasks
from osworld_harness.execution.progress import RunProgress
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import OBSERVATION_TYPES, RUN_DEFAULTS, RunConfig
from osworld_harness.results.settings import SettingsMismatch, recorded_differences, setting_differences
from osworld_harness.results.summary import CATEGORIES, group_stats
from osworld_harness.results.task_folder import TaskRecord, TaskState, read_task

# The paper's row order and names.
OBSERVATION_ORDER = ("a11y_tree", "screenshot", "screenshot_a11y_tree", "som")
OBSERVATION_LABELS = {"a11y_tree": "A11y tree", "screenshot": "Screenshot",
                      "screenshot_a11y_tree": "Screenshot + A11y tree", "som": "Set-of-Mark"}
OVERALL = "Overall"
GROUPS = (*CATEGORIES, OVERALL)
MAIN_FOLDER = "main"
HISTORY_ALL = "all"
NO_PERTURBATION = "none"

@dataclass(frozen=True)
class Experiment:
    name: str                          # its folder under the root, and its tables' file name
    title: str
    setting_header: str | None = None  # the column naming each row's setting; None: the main table
    baseline: str | None = None        # the setting the others' drop is measured against


MAIN = Experiment(MAIN_FOLDER, "Main results: success rate by category")
SCREENSHOT_SCALE = Experiment("screenshot_scale", "Screenshot resolution", "Screenshot scale")
HISTORY = Experiment("history", "Trajectory history length", "History length")
PERTURBATION = Experiment("perturb", "UI perturbation", "Perturbation", baseline=NO_PERTURBATION)


@dataclass
class Cell:
    model: str
    observation_type: str
    setting: str | None                # None in the main table
    config: RunConfig
    reuses_main: bool = False          # an analysis cell whose run is the main table's

    @property
    def label(self) -> str:
        label = f"{self.model} / {OBSERVATION_LABELS[self.observation_type]}"
        return label if self.setting is None else f"{label} / {self.setting}"


# -- cells ----------------------------------------------------------------------------------
def ordered_observations(observation_types: list[str] | tuple[str, ...]) -> list[str]:
    unknown = [o for o in observation_types if o not in OBSERVATION_TYPES]
    if unknown:
        raise ValueError(f"observation type(s) {', '.join(unknown)} unknown; use {', '.join(OBSERVATION_ORDER)}")
    return [o for o in OBSERVATION_ORDER if o in observation_types]


def make_config(options: dict[str, Any], model: str, observation_type: str, result_dir: Path) -> RunConfig:
    """`options` are RunConfig's keyword arguments (the `osworld run` options) without the three given here."""
    return RunConfig(**{**options, "model": model, "observation_type": observation_type,
                        "result_dir": str(result_dir)})


def main_cells(models: list[str], observation_types: list[str], root: str | Path,
               options: dict[str, Any]) -> list[Cell]:
    folder = Path(root) / MAIN_FOLDER
    return [Cell(model, obs, None, make_config(options, model, obs, folder))
            for model in dict.fromkeys(models) for obs in ordered_observations(observation_types)]


def analysis_cells(experiment: Experiment, settings: dict[str, dict[str, Any]], models: list[str],
                   observation_types: list[str], root: str | Path, options: dict[str, Any]) -> list[Cell]:
    """One cell per model, observation type and setting; `settings` maps each setting's name to
    the RunConfig fields it changes."""
    root = Path(root)
    cells = []
    for model in dict.fromkeys(models):
        for obs in ordered_observations(observation_types):
            main = make_config(options, model, obs, root / MAIN_FOLDER)
            for name, overrides in settings.items():
                config = replace(main, **overrides)
                if not setting_differences(main, config) and not recorded_differences(main):
                    cells.append(Cell(model, obs, name, config, reuses_main=True))
                else:
                    cells.append(Cell(model, obs, name,
                                      replace(config, result_dir=str(root / experiment.name / name))))
    return cells


def scale_settings(scales: list[float]) -> dict[str, dict[str, Any]]:
    return {str(float(scale)): {"screenshot_scale": float(scale)} for scale in scales}


def parse_history_length(value: str) -> str:
    """A history length as given on the command line: a count of past steps, or "all"."""
    text = str(value).strip().lower()
    if text == HISTORY_ALL:
        return text
    if text.isdigit():
        return str(int(text))
    raise ValueError(f"history length must be an integer >= 0 or {HISTORY_ALL!r}, got {value!r}")


def history_settings(lengths: list[str], max_steps: int) -> dict[str, dict[str, Any]]:
    """"all" keeps every past step: an episode makes at most max_steps predict calls, so a history of
    max_steps steps never drops one (the prompt agent keeps the last max_trajectory_length steps)."""
    settings = {}
    for value in lengths:
        name = parse_history_length(value)
        settings[name] = {"max_trajectory_length": max_steps if name == HISTORY_ALL else int(name)}
    return settings


def perturbation_settings(perturbations: list[str]) -> dict[str, dict[str, Any]]:
    """The unperturbed baseline first, then each perturbation."""
    names = [NO_PERTURBATION] + [p for p in perturbations if p != NO_PERTURBATION]
    return {name: {"perturb": None if name == NO_PERTURBATION else name} for name in dict.fromkeys(names)}


# -- settings recorded beside the runs ------------------------------------------------------
def check_settings(cell: Cell) -> None:
    differences = recorded_differences(cell.config)
    if differences:
        path = cell.config.layout.model_dir / "args.json"
        what = "; ".join(f"{name} recorded {old!r}, requested {new!r}" for name, old, new in differences)
        raise SettingsMismatch(f"{path}: the runs there were made with other settings ({what}); "
                               "use another --result-dir root or the recorded settings")


# -- plan and cost --------------------------------------------------------------------------
def image_tokens(width: int, height: int) -> int:
    """OpenAI's count for a high-detail image: fit in 2048x2048, shortest side down to 768, then
    85 + 170 per 512-pixel tile. Other providers count differently; this is an estimate."""
    scale = min(1.0, 2048 / max(width, height))
    fitted_width, fitted_height = width * scale, height * scale
    scale = min(1.0, 768 / min(fitted_width, fitted_height))
    tiled_width, tiled_height = fitted_width * scale, fitted_height * scale
    return 85 + 170 * math.ceil(tiled_width / 512) * math.ceil(tiled_height / 512)


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def agent_option(config: RunConfig, name: str) -> Any:
    """One of the options the agent may declare (RUN_DEFAULTS), as the run gives it: the agent's own, else the
    run's default; the run's default too where the agent's own is None (it leaves the figure to its model)."""
    value = getattr(config.resolved(), name)
    return RUN_DEFAULTS[name] if value is None else value


def model_screen_size(config: RunConfig) -> tuple[int, int]:
    """The screenshot's size as the model sees it (as the prompt agent resizes it)."""
    width, height = config.screen_size
    scale = agent_option(config, "screenshot_scale")
    return round(width * scale), round(height * scale)


def observation_tokens(config: RunConfig) -> int:
    """At most what one observation costs: the tree (or marks table) at its full token budget
    (the default budget when the agent is given none), the screenshot at the model's resolution,
    and the words around them."""
    kind = config.layout.observation_type
    tokens = _text_tokens(observation_text(kind, ""))
    if kind != "screenshot":
        tokens += config.agent_args.get("a11y_tree_max_tokens") or DEFAULT_MAX_TOKENS
    if kind != "a11y_tree":
        tokens += image_tokens(*model_screen_size(config))
    return tokens


@dataclass(frozen=True)
class CostEstimate:
    """A ceiling: every task takes all max_steps, each answer is max_tokens long, each tree fills its budget."""
    tasks: int
    steps: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None             # None: the model's price is unknown (mm_agents/llm/pricing.py)


def estimate_cost(config: RunConfig, instructions: list[str]) -> CostEstimate:
    """The prompt agent's prompts for one task per instruction: at step k, the system prompt, the
    last min(k-1, max_trajectory_length) steps' observations and answers, and the current observation."""
    per_observation = observation_tokens(config)
    max_tokens: int = agent_option(config, "max_tokens")
    history = [min(k, agent_option(config, "max_trajectory_length")) for k in range(config.max_steps)]
    input_tokens = 0
    for instruction in instructions:
        system = _text_tokens(system_prompt(agent_option(config, "action_space"), config.layout.observation_type,
                                            model_screen_size(config), config.client_password, instruction))
        input_tokens += sum(system + (past + 1) * per_observation + past * max_tokens for past in history)
    output_tokens = len(instructions) * config.max_steps * max_tokens
    return CostEstimate(tasks=len(instructions), steps=len(instructions) * config.max_steps,
                        input_tokens=input_tokens, output_tokens=output_tokens,
                        cost_usd=cost_usd(config.layout.model, Usage(input_tokens, output_tokens)))


@dataclass
class CellPlan:
    cell: Cell
    to_run: int
    done: int
    errored: int                       # kept as errors (re-run with retry_errors)
    estimate: CostEstimate             # of the tasks to run


def plan_cells(cells: list[Cell]) -> list[CellPlan]:
    """What each cell still has to run, and its cost; refuses a folder holding other settings' runs."""
    plans = []
    for cell in cells:
        check_settings(cell)
        plan = plan_tasks(cell.config)
        task_set = load_task_set(cell.config.tasks)
        instructions = [task_set.load(p.domain, p.task_id).instruction for p in plan.to_run]
        plans.append(CellPlan(cell, to_run=len(plan.to_run), done=sum(p.state is TaskState.DONE for p in plan.skipped),
                              errored=sum(p.state is TaskState.ERROR for p in plan.skipped) + len(plan.invalid),
                              estimate=estimate_cost(cell.config, instructions)))
    return plans


def _count(n: int) -> str:
    return f"{n:,}"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def render_plan(plans: list[CellPlan]) -> str:
    header = ("cell", "result folder", "to run", "done", "errors kept", "steps <=", "input tokens <=",
              "output tokens <=", "cost <=")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for plan in plans:
        folder = str(plan.cell.config.layout.model_dir) + (" (the main table's)" if plan.cell.reuses_main else "")
        e = plan.estimate
        lines.append("| " + " | ".join((plan.cell.label, folder, str(plan.to_run), str(plan.done), str(plan.errored),
                                        _count(e.steps), _count(e.input_tokens), _count(e.output_tokens),
                                        _usd(e.cost_usd))) + " |")
    costs = [p.estimate.cost_usd for p in plans if p.estimate.tasks]
    known = sum(c for c in costs if c is not None)
    unknown = sorted({p.cell.model for p in plans if p.estimate.tasks and p.estimate.cost_usd is None})
    total = _usd(known) + (f" + unknown for {', '.join(unknown)}" if unknown else "")
    lines += ["", f"{len(plans)} cell(s): {sum(p.to_run for p in plans)} task(s) to run, "
                  f"{sum(p.done for p in plans)} done, {sum(p.errored for p in plans)} errored (kept); "
                  f"{_count(sum(p.estimate.steps for p in plans))} model calls at most, cost at most {total}",
              "(ceiling: every task uses all its steps, every answer max_tokens, every tree its full budget)"]
    return "\n".join(lines)


def run_cells(cells: list[Cell], report_for: Callable[[int, Cell], Any]) -> None:
    """Runs each cell in turn (finished tasks are skipped); `report_for(index, cell)` gives a context
    manager that is run_benchmark's reporter, e.g. a RunProgress."""
    for index, cell in enumerate(cells):
        with report_for(index, cell) as report:
            run_benchmark(cell.config, report=report)


# -- results --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tally:
    """One table cell: the selected tasks of a group and what became of them."""
    tasks: int
    scored: int = 0
    successes: float = 0.0
    errors: int = 0

    @property
    def missing(self) -> int:
        return self.tasks - self.scored - self.errors

    @property
    def rate(self) -> float | None:
        return self.successes / self.scored if self.scored else None


@dataclass
class CellResult:
    cell: Cell
    records: dict[tuple[str, str], TaskRecord] = field(default_factory=dict)  # finished ones: ok or error
    groups: dict[str, Tally] = field(default_factory=dict)


def _group_of(domain: str) -> str | None:
    return next((name for name, members in CATEGORIES.items() if domain in members), None)


def collect(cell: Cell, selection: list[tuple[str, str]]) -> CellResult:
    """The cell's result for each selected (domain, task id), tallied per category and overall."""
    result = CellResult(cell)
    for domain, task_id in selection:
        task_dir = cell.config.layout.task_dir(domain, task_id)
        record = read_task(task_dir) if task_dir.is_dir() else None
        if record is not None and record.status in ("ok", "error"):
            result.records[(domain, task_id)] = record
    for group in GROUPS:
        members = [key for key in selection if group == OVERALL or _group_of(key[0]) == group]
        stats = group_stats(group, [result.records[key] for key in members if key in result.records])
        result.groups[group] = Tally(tasks=len(members), scored=stats.finished, successes=stats.successes,
                                     errors=stats.errors)
    return result


def selected_tasks(config: RunConfig) -> list[tuple[str, str]]:
    return load_task_set(config.tasks).select(config.domains or None, config.task_ids or None)


@dataclass(frozen=True)
class Drop:
    """Success rate lost against the baseline, over the tasks scored in both runs."""
    points: float | None               # percentage points; positive = worse than the baseline
    paired: int


def drop(baseline: CellResult, other: CellResult) -> Drop:
    paired = [key for key, record in other.records.items()
              if record.status == "ok" and key in baseline.records and baseline.records[key].status == "ok"]
    if not paired:
        return Drop(None, 0)
    before = sum(baseline.records[key].score or 0.0 for key in paired) / len(paired)
    after = sum(other.records[key].score or 0.0 for key in paired) / len(paired)
    return Drop(round(100 * (before - after), 4), len(paired))


def drops(experiment: Experiment, results: list[CellResult]) -> dict[int, Drop]:
    """Per result (by position), its drop against the same model and observation type's baseline."""
    if experiment.baseline is None:
        return {}
    baselines = {(r.cell.model, r.cell.observation_type): r for r in results if r.cell.setting == experiment.baseline}
    out = {}
    for index, result in enumerate(results):
        base = baselines.get((result.cell.model, result.cell.observation_type))
        if base is not None and result.cell.setting != experiment.baseline:
            out[index] = drop(base, result)
    return out


# -- tables ---------------------------------------------------------------------------------
def tally_text(tally: Tally) -> str:
    if not tally.tasks:
        return "n/a"
    text = ("-" if tally.rate is None else f"{100 * tally.rate:.1f}%") + f" ({tally.scored})"
    if tally.errors:
        text += f" · {tally.errors} err"
    if tally.missing:
        text += f" · {tally.missing} missing"
    return text


def drop_text(value: Drop | None) -> str:
    if value is None:
        return "baseline"
    return "n/a (0)" if value.points is None else f"{value.points:+.1f} pp ({value.paired})"


LEGEND = ("Success rate in % over the tasks scored (their number in brackets); err: tasks that ended in an "
          "error, left out of the rate; missing: selected tasks without a finished run; n/a: no task of that "
          "category selected.")
DROP_LEGEND = ("Drop: the baseline's success rate minus this row's, in percentage points, over the tasks scored "
               "in both (their number in brackets).")


def _head(experiment: Experiment) -> list[str]:
    head = ["Model", "Observation"] + ([experiment.setting_header] if experiment.setting_header else [])
    head += list(GROUPS)
    if experiment.baseline is not None:
        head.append(f"Drop vs. {experiment.baseline}")
    return head


def to_markdown(experiment: Experiment, results: list[CellResult]) -> str:
    head = _head(experiment)
    lines = [f"## {experiment.title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    losses = drops(experiment, results)
    for index, result in enumerate(results):
        row = [result.cell.model, OBSERVATION_LABELS[result.cell.observation_type]]
        if experiment.setting_header:
            row.append(result.cell.setting or "")
        row += [tally_text(result.groups[group]) for group in GROUPS]
        if experiment.baseline is not None:
            row.append(drop_text(losses.get(index)))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", LEGEND] + ([DROP_LEGEND] if experiment.baseline is not None else [])
    return "\n".join(lines) + "\n"


def to_csv(experiment: Experiment, results: list[CellResult]) -> str:
    columns = ["model", "observation_type"] + (["setting"] if experiment.setting_header else [])
    for group in GROUPS:
        columns += [f"{group} rate %", f"{group} scored", f"{group} errors", f"{group} missing", f"{group} tasks"]
    if experiment.baseline is not None:
        columns += [f"drop vs {experiment.baseline} pp", "paired tasks"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    losses = drops(experiment, results)
    for index, result in enumerate(results):
        row: list[Any] = [result.cell.model, result.cell.observation_type]
        if experiment.setting_header:
            row.append(result.cell.setting)
        for group in GROUPS:
            tally = result.groups[group]
            row += ["" if tally.rate is None else round(100 * tally.rate, 4), tally.scored, tally.errors,
                    tally.missing, tally.tasks]
        if experiment.baseline is not None:
            loss = losses.get(index)
            row += ["" if loss is None or loss.points is None else loss.points, "" if loss is None else loss.paired]
        writer.writerow(row)
    return buffer.getvalue()


def write_tables(experiment: Experiment, results: list[CellResult], out_dir: str | Path) -> tuple[Path, Path, str]:
    """Writes <out_dir>/<experiment>.md and .csv; returns their paths and the markdown."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    markdown = to_markdown(experiment, results)
    md_path, csv_path = out / f"{experiment.name}.md", out / f"{experiment.name}.csv"
    md_path.write_text(markdown)
    csv_path.write_text(to_csv(experiment, results))
    return md_path, csv_path, markdown


# -- the whole job --------------------------------------------------------------------------
def reproduce(experiment: Experiment, cells: list[Cell], out_dir: str | Path, console: Any,
              dry_run: bool = False, table_only: bool = False) -> list[CellResult] | None:
    """Prints the plan, runs what is not done yet (unless dry_run or table_only), then writes the
    tables to out_dir and prints the markdown. `console` is a rich Console. None after a dry run."""
    def show(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    if not cells:
        raise ValueError("no cells to run: give at least one model, observation type and setting")
    if table_only:
        for cell in cells:
            check_settings(cell)
    else:
        show(render_plan(plan_cells(cells)))
        if dry_run:
            return None

        def report_for(index: int, cell: Cell) -> RunProgress:
            show(f"\n[{index + 1}/{len(cells)}] {cell.label} -> {cell.config.layout.model_dir}")
            return RunProgress(console)

        run_cells(cells, report_for)
    selection = selected_tasks(cells[0].config)
    results = [collect(cell, selection) for cell in cells]
    md_path, csv_path, markdown = write_tables(experiment, results, out_dir)
    show("\n" + markdown)
    show(f"written: {md_path} and {csv_path}")
    return results
