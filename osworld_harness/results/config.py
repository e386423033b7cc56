"""The options of a run (RunConfig), checked as they are made: a mistake names the option as the
command line spells it (RunOptionError).

Some options are decided from what the run is about to do unless the user gives them (`resolved()`):
what the agent's constructor declares for each option it is built with (its defaults: the model and
observation type, which then also name the results folder, the action space, the sampling settings, the
history kept, the screenshot scale; the run's own defaults only for what it does not declare), the
network (on when a selected task needs a live website), and the agent's time budget (scaled with the
step budget, or lifted for OSWorld-Verified as the leaderboard runs it).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from desktop_env.desktop_defaults import DEFAULT_DESKTOP_LIMITS, DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from desktop_env.errors import ProviderError, ProviderOptionError
from desktop_env.extensions import PluginError, load_plugin
from desktop_env.providers import check_options, provider_class, provider_names
from desktop_env.providers.base import DesktopOptions
from mm_agents.loader import AgentLoadError, agent_name, declared_defaults

from .options import Affects, Bounds, default_of, described, flag_of, option, problem
from .task_folder import RunLayout

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
PERTURBATIONS = ("layout", "clutter")
BACKENDS = ("local", "ray")
DEFAULT_OBSERVATION = "screenshot_a11y_tree"  # for an agent that declares none: it gets everything
# The options the agent is built with that it may declare itself (model and observation type aside), with what
# the run gives an agent that declares none. What the desktop is (its screen size, its password) the agent is
# always told.
RUN_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "top_p": 0.9, "max_tokens": 1500, "max_trajectory_length": 3,
                                "screenshot_scale": 1.0, "action_space": "pyautogui"}
SECONDS_PER_STEP = 20.0   # the agent's time budget per step when none is given (15 steps: 300 s)
Group = TypeVar("Group", bound="DataclassInstance")  # one of RunConfig's groups of options


class RunOptionError(ValueError):
    """An option of the run that cannot work. `option` is how the command line spells it (`--max-steps`);
    the message says what was given and what would be right."""

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")
        self.option = option
        self.detail = message

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.option, self.detail)


class ResumeMismatch(RunOptionError):
    """The result folder holds results made with other settings; running into it would mix them."""

    def __init__(self, folder: Path, differences: list[tuple[str, Any, Any]]):
        what = "; ".join(f"{flag(name)} was {old!r}, now {new!r}" for name, old, new in differences)
        super().__init__(", ".join(flag(name) for name, _, _ in differences),
                         f"the results in {folder} were made with other options ({what}); resuming would mix "
                         "them: use the recorded options, another --result-dir, or --force to mix them")
        self.folder, self.differences = folder, differences

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.folder, self.differences)


@dataclass
class AgentOptions:
    """The agent and what it is given: who acts, what it sees and how, its plugins and its time."""

    agent: str = option("prompt", affects=Affects.SETTING, always=True,
        help='Registered agent (prompt, tool, oracle, noop, those plugins add: osworld plugins lists them) or '
             'package.module:Class or path/file.py:Class.')
    agent_args: dict[str, Any] = option(factory=dict, flag="--agent-arg", affects=Affects.SETTING,
                                        parse=lambda items: agent_args_of(items),
        help="KEY=VALUE passed to the agent's constructor (repeatable; values parsed as JSON when they can be).")
    # the Python OSWorld's agent code runs in, in a process of its own (mm_agents/agent_process.py)
    agent_python: str | None = option(None, affects=Affects.CONDITION, metavar="PYTHON",
        help="Run --agent (package.module:Class or path/file.py:Class) in a process of its own with this Python "
             "(a venv's bin/python, or the venv) whose mm_agents and desktop_env are OSWorld's (pip install "
             "desktop-env, or a checkout), none of this harness's on its path.")
    # None: the agent's declared default, else its name (resolved())
    model: str | None = option(None, affects=Affects.SETTING, always=True,
        help="Model name; also names the results folder. Default: the agent's own (gpt-4o for prompt), else the "
             "agent's name.")
    # None: the agent's declared default, else DEFAULT_OBSERVATION
    observation_type: str | None = option(None, flag="--obs", affects=Affects.SETTING, always=True,
                                          aliases=("--observation-type",), choices=OBSERVATION_TYPES,
        help='What the agent observes. Default: what the agent declares (screenshot for the computer-use agents,'
             ' screenshot_a11y_tree for prompt and for an agent that declares nothing).')
    # None, here and in GenerationOptions: what the agent declares, else RUN_DEFAULTS (resolved())
    action_space: str | None = option(None, affects=Affects.SETTING, always=True, choices=ACTION_SPACES,
        help="How the agent acts. Default: the agent's own, else pyautogui.")
    max_trajectory_length: int | None = option(None, affects=Affects.SETTING, bounds=Bounds(0, whole=True),
        help="Past steps the agent keeps in its prompt. Default: the agent's own, else 3.")
    screenshot_scale: float | None = option(None, affects=Affects.SETTING, bounds=Bounds(0, 1, open=True),
        help='Scale the screenshot by this factor before the model sees it (its coordinates are scaled back). '
             "Default: the agent's own, else 1.")
    # seconds of the agent's predict() per task; 0: no limit; None: SECONDS_PER_STEP a step, none with --osworld
    agent_time_budget: float | None = option(None, affects=Affects.CONDITION,
                                             bounds=Bounds(0, unit="of seconds", note="(0: no limit)"),
        help='Seconds the agent may spend in predict() per task (model calls included); then the task is an '
             'error. 0: no limit. Default: 20 s per step of --max-steps (300 s at 15); none with --osworld, as '
             "OSWorld's run.py has none.")
    plugins: list[str] = option(factory=list, flag="--plugin", affects=Affects.CONDITION,
        help='Module or .py file registering extra getters, metrics, setup steps, providers or agents '
             '(repeatable).')
    # options taken from the agent's own declaration
    agent_defaults: list[str] = option(factory=list, flag=None)

@dataclass
class GenerationOptions:
    """What the agent asks its model for (sampling), apart from the run's own options."""

    temperature: float | None = option(None, affects=Affects.SETTING, bounds=Bounds(0),
        help="Sampling temperature for the model. Default: the agent's own, else 1.0.")
    top_p: float | None = option(None, affects=Affects.SETTING, bounds=Bounds(0, 1, open=True),
        help="Nucleus sampling for the model. Default: the agent's own, else 0.9.")
    max_tokens: int | None = option(None, affects=Affects.SETTING, bounds=Bounds(1, whole=True),
        help="Maximum tokens per model answer. Default: the agent's own, else 1500.")

@dataclass
class EpisodeOptions:
    """What one episode of a task is: its step budget, pauses, recording and perturbation."""

    max_steps: int = option(15, affects=Affects.SETTING, always=True, bounds=Bounds(1, whole=True),
        help='Agent predict calls per task.')
    sleep_after_execution: float = option(0.0, affects=Affects.CONDITION, bounds=Bounds(0),
        help='Seconds to wait after each action.')
    wait_after_reset: float = option(0.0, affects=Affects.CONDITION, bounds=Bounds(0),
        help='Extra seconds after reset (for slow VMs).')
    record: bool = option(True,
        help="Record each task's screen to recording.mp4.")
    watch: bool = option(False,
        help="Show each desktop live in the browser (view-only): its view URL is printed as its first task starts "
             "(docs/HUMANS.md).")
    # "layout" or "clutter", applied after setup (the paper's robustness analysis)
    perturb: str | None = option(None, affects=Affects.SETTING, choices=PERTURBATIONS,
        help="After setup, move and resize the task's windows (layout) or open unrelated windows (clutter).")
    perturb_seed: int = option(0, affects=Affects.SETTING,
        help='Seed of --perturb (combined with the task id).')

@dataclass
class TaskSelection:
    """Which tasks run, and how many times each."""

    # meta file; None = the built-in test_all.json
    tasks: str | None = option(None,
        help='Meta file {domain: [ids]} with examples/ beside it (default: built-in test_all.json).')
    osworld: str | None = option(None, metavar="CHECKOUT",
        help='OSWorld-Verified as the leaderboard runs it, from an OSWorld checkout (or its '
             'evaluation_examples/): its 361 tasks (test_nogdrive.json), the network on for the tasks that need '
             'it, their downloads fetched first, no agent time budget; args.json records it all and `summarize` '
             "says whether the score is comparable. Pick the leaderboard's --max-steps 15, 50 or 100.")
    domains: list[str] = option(factory=list, flag="--domain",
        help='Only this domain (repeatable; default all, as `all` is).')
    task_ids: list[str] = option(factory=list, flag="--task-id",
        help='Only this task (repeatable).')
    # the first N tasks of the selection (after --shard), into a folder of their own (RunLayout.variant)
    limit: int | None = option(None, bounds=Bounds(1, whole=True),
        help='A smoke run of the first N selected tasks, into a folder of its own (MODEL-limit-N) so it taints no '
             'full run; args.json marks it a smoke run and `summarize` says it is not comparable.')
    # (I, N): the I-th of N disjoint parts of the selection, round-robin over its sorted (domain, id) list
    shard: tuple[int, int] | None = option(None, metavar="I/N", parse=lambda text: shard_of(text),
        help='Run the I-th of N disjoint parts of the selected tasks (split by sorted domain and id, so each task '
             'is in one shard), into MODEL-shard-I-of-N; `osworld summarize` given the shards\' folders combines '
             'them into one score and says which are missing.')
    # runs of each task, each from a fresh reset (results.trial_dir)
    trials: int = option(1, affects=Affects.CONDITION, always=True, bounds=Bounds(1, whole=True),
        help="Run each task this many times, each from a fresh reset; trial 1 at the task's folder, trial k in "
             'its trials/<k>/. Summaries then give pass@k, pass^k and the tasks that flip.')

@dataclass
class DesktopRunOptions:
    """The desktops the run asks for: the provider's name, what any desktop is asked to be, and the
    provider's own options (those its Options class names: the local provider's `desktop_*` limits),
    which RunConfig.desktop() hands to the provider without looking inside."""

    provider: str = option("local", affects=Affects.CONDITION,
        help='Where desktops come from: local (sandbox on this machine), remote, docker, vmware, virtualbox, or '
             'one a plugin registers (osworld plugins lists them).')
    path_to_vm: str | None = option(None, affects=Affects.CONDITION,
        help='Provider-specific: remote: the env server URL; docker: the .qcow2 image; vmware: the .vmx file; '
             'virtualbox: the .vbox file, VM name or UUID.')
    screen_size: tuple[int, int] = option(DEFAULT_SCREEN_SIZE, affects=Affects.SETTING,
                                          parse=lambda text: screen_size_of(text), spell="{0[0]}x{0[1]}".format,
                                          check=lambda size: screen_size_problem(size),
        help='Screen size of the desktop, WIDTHxHEIGHT.')
    # None: on when a selected task needs a live website (resolved by the plan)
    network: bool | None = option(None, affects=Affects.CONDITION,
        help='Give the desktops network access. Default: on when a selected task needs a live website or an '
             'account (`osworld tasks coverage` lists them), else off.')
    client_password: str = option(DEFAULT_PASSWORD,
        help="The desktop user's password, as tasks and agents are told it.")
    # Limits of each local desktop, as the command line gives them (see DesktopLimits.from_options).
    desktop_memory: str = option(DEFAULT_DESKTOP_LIMITS["desktop_memory"],
        check=lambda value: limit_problem("memory", value),
        help='Memory limit of each local desktop (e.g. 2G, 512M, unlimited).')
    desktop_pids: str = option(DEFAULT_DESKTOP_LIMITS["desktop_pids"],
        check=lambda value: limit_problem("pids", value),
        help='Process/thread limit of each local desktop (or unlimited).')
    desktop_cpu_weight: str = option(DEFAULT_DESKTOP_LIMITS["desktop_cpu_weight"],
        check=lambda value: limit_problem("cpu_weight", value),
        help='CPU weight of each local desktop, 1..10000 (100 = a normal share).')
    desktop_tmpfs: str = option(DEFAULT_DESKTOP_LIMITS["desktop_tmpfs"],
        check=lambda value: limit_problem("tmpfs", value),
        help='Size cap of each in-memory folder of a local desktop (/tmp, /dev/shm, /run).')
    desktop_disk: str = option(DEFAULT_DESKTOP_LIMITS["desktop_disk"],
        check=lambda value: limit_problem("disk", value),
        help='Size cap of the home folder of a local desktop; it lives in memory, counted in --desktop-memory. '
             'Filling it is a limit hit, like an OOM kill.')

    def desktop(self) -> DesktopOptions:
        """What the run asks of its desktops; `own` is the provider's own options (its Options class), taken
        from the fields of this config that bear their names."""
        cls = provider_class(self.provider)
        own_type = cls.Options if cls is not None else None
        own = own_type(**{f.name: getattr(self, f.name) for f in dataclasses.fields(own_type)}) \
            if own_type is not None else None
        width, height = self.screen_size
        return DesktopOptions(screen_size=(width, height), network=bool(self.network),
                              client_password=self.client_password, path_to_vm=self.path_to_vm, own=own)


@dataclass
class ExecutionOptions:
    """How the tasks are run: how many desktops at once, on which backend, when to stop, what to fetch first."""

    num_envs: int = option(1, bounds=Bounds(1, whole=True),
        help='Desktops running tasks in parallel.')
    backend: str = option("local", choices=BACKENDS,
        help='local: worker processes on this machine; ray: Ray workers on a cluster (pip install osworld[ray]).')
    ray_address: str | None = option(None,
        help='Ray cluster to join (e.g. 10.0.0.5:6379); default RAY_ADDRESS or a running local cluster, else a '
             'new local one.')
    ray_cpus_per_env: float = option(1.0, bounds=Bounds(0),
        help='CPUs each desktop declares to Ray (fractions pack more desktops per core).')
    ray_memory_per_env: float = option(1.5, bounds=Bounds(0),
        help='GiB of memory each desktop declares to Ray.')
    ray_task_retries: int = option(1, bounds=Bounds(0, whole=True),
        help='Re-runs of a task whose Ray worker or node died under it.')
    stop_after_fatal: int = option(2, bounds=Bounds(0, whole=True, note="(0: never stop)"),
        help='Stop the run when this many tasks in a row fail with the same fatal model error (401/403/404, a '
             'server that does not answer) or an agent that cannot be built. 0: never.')
    prefetch: bool = option(True,
        help="Fetch the selected tasks' downloads missing from --cache-dir before the first desktop starts (else"
             " during each task's setup).")
    cache_dir: str = option("cache",
        help='Where task files are cached.')

@dataclass
class ResultOptions:
    """Where results go, what is done with results already there, how the run is scored and named."""

    result_dir: str = option("./results",
        help='Root of the results layout.')
    resume: bool = option(True,
        help='Skip tasks that already have a result (and, without --retry-errors, those with an error).')
    retry_errors: bool = option(False,
        help='Re-run tasks whose last run ended in an error.')
    force: bool = option(False,
        help='Run into a result folder whose results were made with other options (mixing them).')
    strict: bool = option(False,
        help="Refuse to run (exit status 2) when the score would not be comparable with OSWorld's leaderboard, "
             'naming why.')
    label: str | None = option(None,
        help='What summaries and reports call this run (recorded in args.json).')
    evaluator_fixes: bool = option(False, affects=Affects.SETTING,
        help="Score with our fixes of OSWorld's evaluator bugs (docs/EVALUATORS.md) instead of OSWorld's "
             "verdicts. The scores are then not comparable with OSWorld's published ones.")


@dataclass
# The groups are bases, their fields RunConfig's own: `RunConfig(model=...)`, `config.model` and args.json's flat
# record stay as they were; a dataclass takes the fields of its last base first, so AgentOptions' lead.
class RunConfig(ResultOptions, ExecutionOptions, DesktopRunOptions, TaskSelection, EpisodeOptions, GenerationOptions,
                AgentOptions):
    """The options of a run, in groups that each have one owner (the agent, its model's sampling, the episode,
    the task selection, the desktops, the execution, the results), each option described where it is declared
    (osworld_harness/results/options.py): whether it changes results, its flag and help, which `osworld run`, the
    settings and
    the reproducing command read. `group(cls)` is one group's values as its own typed object."""

    def __post_init__(self) -> None:
        def refuse(option: str, message: str) -> NoReturn:
            raise RunOptionError(option, message)

        if self.osworld is not None:
            from .suite import NotACheckout, official_meta  # noqa: PLC0415  (start-up: `osworld --help` loads this module)

            try:
                meta = str(official_meta(self.osworld))
            except NotACheckout as e:
                refuse("--osworld", str(e))
            if self.tasks is not None and Path(self.tasks).resolve() != Path(meta):
                refuse("--tasks", f"--osworld selects {meta}; give --tasks or --osworld, not both")
            self.osworld, self.tasks = str(Path(self.osworld).expanduser().resolve()), meta
        for name, info in described(RunConfig).items():  # each option's choices, range and own check
            found = problem(info, getattr(self, name), _DEFAULTS.get(name))
            if found:
                refuse(flag(name), found)
        if self.shard is not None:
            self.shard = shard_of(self.shard)

        if self.provider not in provider_names():  # built-in or a plugin's
            refuse("--provider", f"must be one of {', '.join(provider_names())}, got {self.provider!r}")
        try:
            check_options(self.provider, self.desktop())
        except ProviderOptionError as e:
            refuse(flag(e.option), str(e))
        except ProviderError as e:  # a plugin's provider that cannot be loaded
            refuse("--provider", str(e))

    @classmethod
    def of(cls, *groups: Any, **options: Any) -> RunConfig:
        """A RunConfig from whole groups (`GenerationOptions(temperature=0)`, ...) and single options."""
        return cls(**{name: value for g in groups for name, value in vars(g).items()}, **options)

    def group(self, of: type[Group]) -> Group:
        """The values of one group of options (GenerationOptions, DesktopRunOptions, ...) as its own object."""
        return of(**{f.name: getattr(self, f.name) for f in dataclasses.fields(of)})

    def resolved(self) -> RunConfig:
        """The config with each option the user left out (None) taken from the agent's own declaration, its
        constructor's default: those taken are listed in `agent_defaults` and not passed to it, so it runs as
        it declares. What it does not declare (or declares unusably) the run decides: the model is the agent's
        name and the observation DEFAULT_OBSERVATION (both listed too: the agent is not told them), the rest
        RUN_DEFAULTS (passed to it)."""
        missing = [name for name in ("model", "observation_type", *RUN_DEFAULTS)
                   if getattr(self, name) is None and name not in self.agent_defaults]
        if not missing:
            return self

        try:
            for plugin in self.plugins:  # a plugin's agent is found only once it is loaded
                load_plugin(plugin)
            declared = declared_defaults(self.agent, self.agent_python)
        except (AgentLoadError, PluginError) as e:
            raise RunOptionError("--agent" if isinstance(e, AgentLoadError) else "--plugin", str(e)) from e
        values: dict[str, Any] = {}
        taken = []
        for name in missing:
            usable = name in declared and (isinstance(declared[name], str) if name == "model"
                                           else declared[name] in OBSERVATION_TYPES if name == "observation_type"
                                           else _agent_option_problem(name, declared[name]) is None)
            if usable:
                values[name] = declared[name]
            else:
                values[name] = (agent_name(self.agent) if name == "model" else
                                DEFAULT_OBSERVATION if name == "observation_type" else RUN_DEFAULTS[name])
            if usable or name in ("model", "observation_type"):
                taken.append(name)
        return dataclasses.replace(self, **values, agent_defaults=list(dict.fromkeys(self.agent_defaults + taken)))

    @property
    def layout(self) -> RunLayout:
        config = self.resolved()
        # resolved() fills these three: a declared action space or observation is taken only when usable
        assert config.model is not None and config.observation_type is not None and config.action_space is not None
        return RunLayout(Path(config.result_dir), config.action_space, config.observation_type, config.model,
                         folder_variant(config.shard, config.limit))

    def time_budget(self) -> float:
        """The agent's seconds of predict() per task, 0 for no limit: as given, else SECONDS_PER_STEP a step,
        or none for OSWorld-Verified (the leaderboard's runs have none)."""
        if self.agent_time_budget is not None:
            return float(self.agent_time_budget)
        return 0.0 if self.osworld else SECONDS_PER_STEP * self.max_steps

    def agent_kwargs(self) -> dict[str, Any]:
        """What the agent is built with: the run's options it did not declare itself, and its --agent-arg."""
        config = self.resolved()
        options = {"model": config.model, "action_space": config.action_space,
                   "observation_type": config.observation_type, **vars(config.group(GenerationOptions)),
                   "max_trajectory_length": config.max_trajectory_length, "client_password": config.client_password,
                   "screen_size": tuple(config.screen_size), "screenshot_scale": config.screenshot_scale}
        return {**{k: v for k, v in options.items() if k not in config.agent_defaults}, **config.agent_args}


def _agent_option_problem(name: str, value: Any) -> str | None:
    """What is wrong with a value of one of the options an agent may declare (RUN_DEFAULTS); None when it can
    be used. None is right for all but the two the harness acts on itself: the agent's own choice (send none)."""
    acted_on = name in ("action_space", "screenshot_scale")
    return problem(described(RunConfig)[name], value, None if not acted_on else dataclasses.MISSING)


def agent_args_of(items: Any) -> dict[str, Any]:
    """--agent-arg's KEY=VALUE texts as the keyword arguments they give (values parsed as JSON when they can be:
    numbers, booleans, lists; anything else stays a string)."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, raw = str(item).partition("=")
        if not sep or not key:
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        try:
            parsed[key] = json.loads(raw)
        except ValueError:
            parsed[key] = raw
    return parsed


def screen_size_of(text: str) -> tuple[int, int]:
    """--screen-size's WIDTHxHEIGHT as (width, height)."""
    try:
        width, height = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        raise ValueError(f"expected WIDTHxHEIGHT such as 1920x1080, got {text!r}") from None
    return width, height


def screen_size_problem(size: Any) -> str | None:
    pair = list(size) if isinstance(size, (list, tuple)) else []
    if len(pair) == 2 and all(isinstance(n, int) and not isinstance(n, bool) for n in pair) \
            and pair[0] >= 320 and pair[1] >= 240 and not pair[0] % 2 and not pair[1] % 2:
        return None
    spelled = "{}x{}".format(*pair) if len(pair) == 2 else repr(size)
    return f"screen size must be even and at least 320x240, got {spelled!r}"


def limit_problem(limit: str, value: Any) -> str | None:
    """What the local provider says is wrong with one of its desktops' limits (DesktopLimits.from_options)."""
    from desktop_env.providers.local.limits import DesktopLimits  # noqa: PLC0415  (start-up: as the provider is)

    try:
        DesktopLimits.from_options(**{limit: value})
    except (ValueError, TypeError) as error:
        return str(error)
    return None


def shard_of(value: Any) -> tuple[int, int]:
    """--shard's value as (I, N): "I/N" as the command line gives it, or a pair; RunOptionError unless
    1 <= I <= N and N >= 2."""
    parts = value.split("/") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    try:
        index, count = (int(part) for part in parts) if len(parts) == 2 else (0, 0)
    except (TypeError, ValueError):
        index, count = 0, 0
    if count < 2 or not 1 <= index <= count:
        raise RunOptionError("--shard", f"must be I/N with N >= 2 parts and 1 <= I <= N (e.g. 2/4), got {value!r}")
    return index, count


def folder_variant(shard: Any, limit: int | None) -> str:
    """What a sharded or limited run's folder adds to the model's name: -shard-I-of-N, -limit-N (a smoke run's
    results never land in the folder of the full run, nor one shard's in another's)."""
    variant = ""
    if shard:
        variant += f"-shard-{shard[0]}-of-{shard[1]}"
    if limit:
        variant += f"-limit-{limit}"
    return variant


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(RunConfig)}  # MISSING for a factory's: never None


def flag(name: str) -> str:
    """How the command line spells RunConfig's field `name`."""
    return flag_of(described(RunConfig).get(name), name)


def options_affecting_results(*kinds: Affects) -> tuple[str, ...]:
    """RunConfig's fields that change results in one of these ways, in the order they are declared."""
    return tuple(name for name, info in described(RunConfig).items() if info.affects in kinds)


def run_default(name: str) -> Any:
    return default_of(RunConfig, name)
