"""OSWorld's episode entry points, with their public signatures, for existing agent runners.

    run_single_example(agent, env, example, max_steps, instruction, args, example_result_dir, scores)

and one `run_single_example_<kind>` for each of OSWorld's agent families (cua, kimi, agi, openaicua,
gpt54, opencua, autoglm, mano, uipath, os_symphony, evocua, mobileagent_v3, vlaa_gui, human), each
running its agent as OSWorld's runner of that name calls it (osworld_harness/execution/osworld_agents.py says what each
does differently) through our episode: readiness polled instead of fixed sleeps, status.json and
errors recorded as for any run.

`args` is read for `sleep_after_execution`, `record` (default True), `wait_after_reset`,
`settle_timeout` and `task_dir` (where the task's relative files live); anything missing
takes the default. The score is appended to `scores` (as OSWorld does) only when the
episode finished without an error; otherwise the error is raised after everything,
status.json included, has been written.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from osworld_harness.execution import osworld_agents as kinds
from osworld_harness.execution.episode import EpisodeConfig, EpisodeOutcome, run_episode


class EpisodeError(RuntimeError):
    """The episode ended in an error (recorded in status.json of its result folder)."""

    def __init__(self, outcome: EpisodeOutcome):
        super().__init__(outcome.error.text() if outcome.error else "the episode ended in an error")
        self.outcome = outcome


def run_single_example(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                       example_result_dir: str, scores: list) -> EpisodeOutcome:
    config = EpisodeConfig(
        max_steps=max_steps,
        sleep_after_execution=float(getattr(args, "sleep_after_execution", 0.0) or 0.0),
        record=bool(getattr(args, "record", True)),
        wait_after_reset=float(getattr(args, "wait_after_reset", 0.0) or 0.0),
        settle_timeout=float(getattr(args, "settle_timeout", EpisodeConfig.settle_timeout)),
    )
    outcome = run_episode(agent, env, example, instruction, Path(example_result_dir), config,
                          task_dir_for_files=getattr(args, "task_dir", None))
    if outcome.status == "error":
        raise EpisodeError(outcome)
    scores.append(outcome.score)
    return outcome


def _run_kind(kind: type[kinds.KindAdapter], agent: Any, env: Any, example: dict, max_steps: int, instruction: str,
              args: Any, example_result_dir: str, scores: list, **options: Any) -> EpisodeOutcome:
    adapter = kind(agent, env, max_steps, args, example_result_dir, **options)
    return run_single_example(adapter, adapter.episode_env(), example, max_steps, instruction, args,
                              example_result_dir, scores)


def run_single_example_cua(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                              example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.StepIndexKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_kimi(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                               example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.ErrorActionKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_agi(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                              example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.SelfSteppingKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_openaicua(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                    example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.SelfSteppingKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_gpt54(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.SelfSteppingKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_opencua(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                  example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.ErrorActionKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_autoglm(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                  example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.FailIfUnfinishedKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_mano(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                               example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.ModifierClickKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_uipath(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                 example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.ArgsStepKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_os_symphony(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                      example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.LastStepKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_evocua(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                 example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.EvoCUAKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_mobileagent_v3(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                         example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.StepsItselfKind, agent, env, example, max_steps, instruction, args,
                     example_result_dir, scores)


def run_single_example_vlaa_gui(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                example_result_dir: str, scores: list, verifier_agent: Any = None) -> EpisodeOutcome:
    return _run_kind(kinds.VerifiedKind, agent, env, example, max_steps, instruction, args, example_result_dir,
                     scores, verifier=verifier_agent)


def run_single_example_human(env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                             example_result_dir: str, scores: list) -> EpisodeOutcome:
    return _run_kind(kinds.NoAgentKind, None, env, example, max_steps, instruction, args, example_result_dir, scores)


def run_single_example_cua_blackbox(env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                                    example_result_dir: str, scores: list) -> EpisodeOutcome:
    """OSWorld's black-box CUA runs an outside program through OSWorld's own bridge package
    (osworld_cua_bridge), which this harness does not have: refused, saying so."""
    raise NotImplementedError("run_single_example_cua_blackbox drives an outside CUA program through OSWorld's "
                              "osworld_cua_bridge package, which this harness does not include; run it with "
                              "OSWorld's own lib_run_single against `osworld env serve --vm-address auto`")
