"""OSWorld's run.py option names, accepted by `osworld run` as they are, so a run.py command line works
with its options unchanged (docs/OSWORLD_OPTIONS.md has the table; a test checks it against ALIASES).

Each alias is rewritten to our option before click parses the command line: `--max_steps 50` is
`--max-steps 50`, `--screen_width 1280 --screen_height 720` is `--screen-size 1280x720`, and an option
that means nothing here (`--headless`: every desktop is) is dropped. `--domain all`, run.py's default,
is every domain (desktop_env.tasks.TaskSet.select).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from desktop_env.desktop_defaults import DEFAULT_SCREEN_SIZE


@dataclass(frozen=True)
class Alias:
    osworld: str            # run.py's spelling
    ours: str | None        # what it becomes; None: accepted and dropped
    flag: bool = False      # takes no value
    note: str = ""          # for the docs table


SCREEN = ("--screen_width", "--screen_height")
BASE_DIR = "--test_config_base_dir"

ALIASES: tuple[Alias, ...] = (
    Alias("--path_to_vm", "--path-to-vm"),
    Alias("--provider_name", "--provider", note="run.py's default is vmware; ours is local (remote, docker, vmware "
                                                 "and virtualbox drive OSWorld's own VMs)"),
    Alias("--headless", None, flag=True, note="dropped: every desktop here is headless"),
    Alias("--action_space", "--action-space"),
    Alias("--observation_type", "--obs", note="run.py's default is a11y_tree; ours is what the agent declares "
                                              "(screenshot_a11y_tree for the prompt agent)"),
    Alias("--screen_width", "--screen-size", note="with --screen_height, becomes --screen-size WxH (1920 and 1080 "
                                                  "when one is left out)"),
    Alias("--screen_height", "--screen-size", note="see --screen_width"),
    Alias("--sleep_after_execution", "--sleep-after-execution"),
    Alias("--max_steps", "--max-steps"),
    Alias("--max_trajectory_length", "--max-trajectory-length"),
    Alias(BASE_DIR, "--tasks", note="the folder with examples/: becomes --tasks DIR/test_all.json, or, beside "
                                    "--test_all_meta_path, must be the folder of that meta file"),
    Alias("--top_p", "--top-p"),
    Alias("--max_tokens", "--max-tokens"),
    Alias("--stop_token", None, note="dropped: run.py records it and passes it to no agent"),
    Alias("--test_all_meta_path", "--tasks"),
    Alias("--result_dir", "--result-dir"),
    Alias("--num_envs", "--num-envs", note="the run_multienv_*.py scripts' option"),
    Alias("--log_level", "--log-level", note="the run_multienv_*.py scripts' option"),
    Alias("--client_password", "--client-password", note="the run_multienv_*.py scripts' option"),
)
BY_NAME = {alias.osworld: alias for alias in ALIASES}


def _split(args: Sequence[str]) -> list[tuple[str, str | None]]:
    """(option or argument, its value when given as --opt=value)."""
    out: list[tuple[str, str | None]] = []
    for arg in args:
        name, sep, value = arg.partition("=")
        out.append((name, value) if sep and name.startswith("--") else (arg, None))
    return out


def translate(args: Sequence[str]) -> list[str]:
    """The command line with OSWorld's option names rewritten to ours (click.UsageError for a combination
    that cannot be rewritten)."""
    out: list[str] = []
    screen: dict[str, str] = {}
    base_dir: str | None = None
    items = _split(args)
    i = 0
    while i < len(items):
        name, inline = items[i]
        i += 1
        alias = BY_NAME.get(name)
        if name == "--":
            out += [arg for arg, _ in items[i - 1:]]
            break
        if alias is None:
            out.append(name if inline is None else f"{name}={inline}")
            continue
        value = inline
        if not alias.flag and value is None:
            if i >= len(items):
                raise click.UsageError(f"Option '{name}' requires an argument.")
            value = items[i][0]
            i += 1
        if name in SCREEN:
            screen[name] = str(value)
        elif name == BASE_DIR:
            base_dir = str(value)
        elif alias.ours is not None:
            out += [alias.ours, str(value)] if not alias.flag else [alias.ours]
    if screen:
        if any(arg == "--screen-size" or arg.startswith("--screen-size=") for arg in out):
            raise click.UsageError("give --screen-size or OSWorld's --screen_width/--screen_height, not both")
        width, height = (screen.get(name, str(default)) for name, default in zip(
            ("--screen_width", "--screen_height"), DEFAULT_SCREEN_SIZE, strict=True))
        out += ["--screen-size", f"{width}x{height}"]
    if base_dir is not None:
        out += _base_dir_tasks(base_dir, out)
    return out


def _base_dir_tasks(base_dir: str, out: list[str]) -> list[str]:
    """--test_config_base_dir as --tasks: run.py reads examples/ under it and the meta file from
    --test_all_meta_path; here the examples/ beside the meta file are read, so the two must agree."""
    tasks = next((out[j + 1] for j, arg in enumerate(out[:-1]) if arg == "--tasks"), None)
    tasks = tasks or next((arg.partition("=")[2] for arg in out if arg.startswith("--tasks=")), None)
    if tasks is None:
        return ["--tasks", str(Path(base_dir) / "test_all.json")]
    if (Path(tasks).parent / "examples").resolve() != (Path(base_dir) / "examples").resolve():
        raise click.UsageError(f"--test_config_base_dir {base_dir}: the task files are read from examples/ beside "
                               f"the meta file, {Path(tasks).parent / 'examples'}; give a meta file inside {base_dir}")
    return []


class AcceptsOSWorldOptions(click.Command):
    """A command that takes OSWorld's run.py option names too (translate)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, translate(args))


def docs_table() -> str:
    """The Markdown table of docs/OSWORLD_OPTIONS.md."""
    lines = ["| OSWorld's run.py | `osworld run` | note |", "|---|---|---|"]
    for alias in ALIASES:
        ours = f"`{alias.ours}`" if alias.ours else "(dropped)"
        lines.append(f"| `{alias.osworld}` | {ours} | {alias.note} |")
    return "\n".join(lines) + "\n"

