"""`osworld rescore`: re-run a finished task's evaluator on the result files saved when it ran.

Saving (at the end of an episode, after `env.evaluate()`): the result getters have
fetched the agent's files from the desktop into `env.cache_dir` under their `dest`
names. `save_rescore_inputs` copies the ones the task's evaluator names into
`<task_dir>/rescore/files/` (bounded in total size; larger ones are skipped and noted)
and writes `<task_dir>/rescore/manifest.json`: each file with its desktop path, size
and state, the evaluator config, and a fingerprint of each metric's code.

Rescoring (`rescore_task`), without a desktop: an offline env whose `cache_dir` is a
temporary copy of the saved files and whose controller serves those files by their
desktop path (and says "needs a live desktop" for anything else). Result getters of
file types (vm_file, cache_file, content_from_vm_file, gimp_config_file, vlc_config,
audio/background_image_in_slide, vlc_playing_info, vm_wallpaper) read the saved copies;
expected getters (cloud_file, rule, rule_relativeTime, time_diff_range) run as usual,
from the task's files and rules (relative dates are resolved against the day the task
was scored). Tasks whose evaluator needs the live desktop (vm_command_line, the
accessibility tree, Chrome's state...) are reported as not rescorable, with the reason.

The old score stays in result.txt; the new one goes to `<task_dir>/rescore.json`
({old_score, new_score, changed, rescored_at, osworld version, metric fingerprints}).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import inspect
import json
import logging
import os
import shutil
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator

from desktop_env.errors import DesktopEnvError

from .results import now_iso, read_status, read_task, read_trajectory, write_json_atomic
from .summary import find_runs

log = logging.getLogger("osworld.rescore")

MAX_BYTES = 50 * 1024 * 1024
RESCORE_DIR = "rescore"
FILES_DIR = "files"
MANIFEST = "manifest.json"
RESULT_FILE = "rescore.json"
MANIFEST_VERSION = 1

# Getters whose value is computed from the task file alone: they run as usual when rescoring.
OFFLINE_GETTERS = frozenset({"cloud_file", "rule", "rule_relativeTime", "time_diff_range"})
# Getters that read files from the desktop by path (through controller.get_file): served from the saved copies.
PATH_GETTERS = frozenset({"vm_file", "content_from_vm_file", "gimp_config_file", "vlc_config",
                          "audio_in_slide", "background_image_in_slide"})
# Getters that write what they got from the desktop to `dest` in the cache: the saved `dest` is served.
SAVED_OUTPUT_GETTERS = frozenset({"vlc_playing_info", "vm_wallpaper"})
# Getters that read a file already in the task's cache folder.
CACHE_GETTERS = frozenset({"cache_file"})
FILE_GETTERS = PATH_GETTERS | SAVED_OUTPUT_GETTERS | CACHE_GETTERS
RESCORABLE_GETTERS = OFFLINE_GETTERS | FILE_GETTERS

SERVED_STATES = ("saved", "absent")   # states a rescore can use: the file's bytes, or "it was not there"


class NeedsLiveDesktop(DesktopEnvError):
    """A getter asked the desktop for something that was not saved when the task was scored."""


class NotRescorable(Exception):
    """This task cannot be rescored from its saved files; the message says why."""


class RescoreError(Exception):
    """Rescoring ran but the evaluator failed (a metric crashed, a task file is missing...)."""


# -- which files an evaluator's getters read ------------------------------------------------------

@dataclass
class FileNeed:
    getter: str
    role: str                   # result | expected
    metric: str
    name: str                   # the file's name in the cache folder (a getter's `dest`)
    desktop_path: str | None    # where it is on the desktop (None for cache/saved-output getters)


def _home(desktop_path: str | None) -> PurePosixPath | None:
    return PurePosixPath(desktop_path).parent if desktop_path else None


def file_needs(getter_type: str, config: dict, role: str, metric_name: str,
               desktop_path: str | None) -> list[FileNeed]:
    """The files a file getter config reads (desktop paths need the desktop's Desktop folder for some)."""
    def need(name: str, path: str | None) -> FileNeed:
        return FileNeed(getter_type, role, metric_name, str(name), None if path is None else str(path))

    if getter_type == "vm_file":
        if config.get("multi"):
            return [need(d, p) for p, d in zip(config["path"], config["dest"])]
        return [need(config["dest"], config["path"])]
    if getter_type == "content_from_vm_file":
        return [need(os.path.basename(config["path"]), config["path"])]
    if getter_type in ("audio_in_slide", "background_image_in_slide"):
        return [need(PurePosixPath(config["ppt_file_path"]).name, config["ppt_file_path"])]
    if getter_type in ("gimp_config_file", "vlc_config"):
        from desktop_env.evaluators.getters.gimp import GIMP_CONFIG_DIR
        from desktop_env.evaluators.getters.vlc import VLCRC

        home = _home(desktop_path)
        relative = f"{GIMP_CONFIG_DIR}/{config['file_name']}" if getter_type == "gimp_config_file" else VLCRC
        return [need(config["dest"], None if home is None else home / relative)]
    if getter_type == "vm_wallpaper":
        return [need(config.get("dest", "wallpaper.png"), None)]
    if getter_type == "vlc_playing_info":
        return [need(config["dest"], None)]
    if getter_type == "cache_file":
        return [need(config["path"], None)]
    return []


def getter_configs(evaluator: dict) -> Iterator[tuple[str, str, dict]]:
    """(role, metric, getter config) for every getter the evaluator names."""
    from desktop_env.evaluators.scoring import metric_calls

    if evaluator.get("func") == "infeasible":
        return
    for call in metric_calls(evaluator):
        for role, config in (("result", call.result), ("expected", call.expected)):
            if isinstance(config, dict) and config.get("type"):
                yield role, call.func, config


def live_reason(evaluator: dict) -> str | None:
    """Why this evaluator cannot run without the desktop, or None."""
    from desktop_env.evaluators.registry import UnknownName, get_getter

    for role, metric_name, config in getter_configs(evaluator):
        kind = config["type"]
        if kind in RESCORABLE_GETTERS:
            continue
        try:
            builtin = get_getter(kind).__module__.startswith("desktop_env.")
        except UnknownName:
            return f"{role} getter {kind!r} of metric {metric_name!r} is unknown"
        if builtin:
            return f"{role} getter {kind!r} of metric {metric_name!r} needs a live desktop"
        return (f"{role} getter {kind!r} of metric {metric_name!r} is a plugin's: rescore cannot tell what it "
                "reads from the desktop")
    return None


def metric_fingerprints(evaluator: dict) -> dict[str, str | None]:
    """A short hash of each metric's source code: shows whether a metric changed between run and rescore."""
    from desktop_env.evaluators.registry import get_metric

    funcs = evaluator.get("func")
    out: dict[str, str | None] = {}
    for name in funcs if isinstance(funcs, list) else [funcs]:
        if not isinstance(name, str) or name in out:
            continue
        try:
            out[name] = hashlib.sha256(inspect.getsource(get_metric(name)).encode()).hexdigest()[:16]
        except Exception:  # unknown name, or no source (a builtin)
            out[name] = None
    return out


def osworld_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("osworld")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- saving at the end of an episode --------------------------------------------------------------

def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _started_at(task_dir: Path) -> float | None:
    status = read_status(task_dir) or {}
    try:
        return dt.datetime.fromisoformat(status["started"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return None


def save_rescore_inputs(env: Any, task_config: dict, task_dir: str | os.PathLike, max_bytes: int = MAX_BYTES,
                        since: float | None = None, fetch_missing: bool = True) -> dict:
    """Copies the result files the evaluator read from `env.cache_dir` to `<task_dir>/rescore/`; returns the manifest.

    Call it after `env.evaluate()`, with the desktop still up. A file counts as fetched by
    this evaluation when it was written after `since` (default: status.json's `started`),
    so files a previous run left in the shared cache are not taken for this run's. A file
    the evaluation did not fetch (absent on the desktop, or its metric was never reached
    under conj "and") is asked of the desktop directly when `fetch_missing`: its bytes, or
    "absent". At most `max_bytes` in total are saved; larger files are skipped and noted,
    and a task missing one is then not rescorable. Problems with single files are noted in
    the manifest, never raised; only a rescore folder that cannot be written raises.
    """
    task_dir = Path(task_dir)
    out_dir = task_dir / RESCORE_DIR
    files_dir = out_dir / FILES_DIR
    evaluator = dict(task_config.get("evaluator") or {})
    manifest: dict[str, Any] = {"version": MANIFEST_VERSION, "task_id": task_config.get("id"), "saved_at": now_iso(),
                                "max_bytes": max_bytes, "evaluator": evaluator, "desktop_path": None,
                                "metrics": metric_fingerprints(evaluator), "osworld": osworld_version(),
                                "files": [], "notes": []}
    if out_dir.exists():
        shutil.rmtree(out_dir)
    files_dir.mkdir(parents=True)
    since = _started_at(task_dir) if since is None else since
    cache = Path(getattr(env, "cache_dir", "") or ".")
    try:
        configs = list(getter_configs(evaluator))
    except Exception as e:
        configs = []
        manifest["notes"].append(f"the evaluator config cannot be read: {type(e).__name__}: {e}")
    if any(c["type"] in ("gimp_config_file", "vlc_config") for _, _, c in configs):
        try:
            manifest["desktop_path"] = env.controller.get_vm_desktop_path()
        except Exception as e:
            manifest["notes"].append(f"the desktop's home could not be asked: {type(e).__name__}: {e}")
    reason = live_reason(evaluator) if configs else None
    if reason:
        manifest["notes"].append(reason)
    used = 0
    entries: dict[str, dict] = {}
    for role, metric_name, config in configs:
        kind = config["type"]
        if kind not in FILE_GETTERS:
            continue
        try:
            needs = file_needs(kind, config, role, metric_name, manifest["desktop_path"])
        except (KeyError, TypeError) as e:
            manifest["notes"].append(f"{role} getter {kind!r}: config lacks {e}")
            continue
        for need in needs:
            entry = {**asdict(need), "state": None, "size": None}
            previous = entries.get(need.name)
            if previous is not None:
                if previous["desktop_path"] != need.desktop_path or previous["getter"] != need.getter:
                    previous["state"] = "conflict"
                    previous["note"] = "two getters write the same file name; the first one's content is lost"
                continue
            entries[need.name] = entry
            manifest["files"].append(entry)
            try:
                used += _save_one(env, kind, config, need, entry, cache, files_dir, since, fetch_missing,
                                  max_bytes - used)
            except Exception as e:  # a file that cannot be read or written: noted, the others still saved
                entry["state"], entry["note"] = "not_fetched", f"saving failed: {type(e).__name__}: {e}"
            if entry["state"] == "too_large":
                manifest["notes"].append(f"{need.name}: not saved, {entry['note']}")
    manifest["total_bytes"] = used
    write_json_atomic(out_dir / MANIFEST, manifest)
    return manifest


def _save_one(env: Any, kind: str, config: dict, need: FileNeed, entry: dict, cache: Path, files_dir: Path,
              since: float | None, fetch_missing: bool, budget: int) -> int:
    """Saves one file into files_dir (or notes why not) and returns the bytes it used."""
    if not _safe_name(need.name):
        entry["state"], entry["note"] = "unsafe_name", "the file name leaves the cache folder"
        return 0
    source = cache / need.name
    if source.is_file() and (kind in CACHE_GETTERS or since is None or source.stat().st_mtime >= since - 1):
        data_path: Path | None = source
        entry["fetched"] = "evaluation"
    elif kind in CACHE_GETTERS:
        entry["state"] = "absent"
        return 0
    elif fetch_missing:
        data_path = _fetch_now(env, kind, config, need, entry, files_dir)
        if entry["state"] is not None:
            return 0
    else:
        entry["state"], entry["note"] = "not_fetched", "not fetched by the evaluation"
        return 0
    if data_path is None:
        entry["state"] = "absent"
        return 0
    size = data_path.stat().st_size
    entry["size"] = size
    target = files_dir / need.name
    if size > budget:
        entry["state"] = "too_large"
        entry["note"] = f"{size} bytes, over what is left of the bound on saved files ({budget} bytes)"
        if data_path == target:
            data_path.unlink()
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    if data_path != target:
        shutil.copyfile(data_path, target)
    entry["state"] = "saved"
    return size


def _fetch_now(env: Any, kind: str, config: dict, need: FileNeed, entry: dict, files_dir: Path) -> Path | None:
    """A file the evaluation did not fetch, asked of the desktop now. Sets entry["state"] only on failure."""
    entry["fetched"] = "after evaluation"
    target = files_dir / need.name
    try:
        if need.desktop_path is not None:
            data = env.controller.get_file(need.desktop_path)
            if data is None:
                return None
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            return target
        if kind in SAVED_OUTPUT_GETTERS:  # the getter itself writes `dest` into the cache
            from desktop_env.evaluators.registry import get_getter

            value = get_getter(kind)(env, config)
            source = Path(env.cache_dir) / need.name
            return source if value is not None and source.is_file() else None
        entry["state"], entry["note"] = "not_fetched", "its desktop path is unknown"
    except Exception as e:
        entry["state"], entry["note"] = "not_fetched", f"asking the desktop failed: {type(e).__name__}: {e}"
    return None


# -- rescoring ------------------------------------------------------------------------------------

class OfflineController:
    """Serves the saved files by desktop path; anything else needs the live desktop."""

    def __init__(self, files: dict[str, dict], cache_dir: Path, desktop_path: str | None):
        self._files = files
        self._cache_dir = cache_dir
        self._desktop_path = desktop_path

    def get_file(self, path: str) -> bytes | None:
        entry = self._files.get(path)
        if entry is None:
            raise NeedsLiveDesktop(f"the evaluator asked the desktop for {path!r}, which was not saved when the task "
                                   "was scored")
        if entry["state"] == "absent":
            return None
        if entry["state"] != "saved":
            raise NeedsLiveDesktop(f"{path!r} was not saved when the task was scored ({entry['state']}"
                                   f"{': ' + entry['note'] if entry.get('note') else ''})")
        return (self._cache_dir / entry["name"]).read_bytes()

    def get_vm_desktop_path(self) -> str:
        if not self._desktop_path:
            raise NeedsLiveDesktop("the evaluator asked for the desktop's home, which was not recorded")
        return self._desktop_path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def live(*args: Any, **kwargs: Any):
            raise NeedsLiveDesktop(f"the evaluator asked the desktop to {name}(): that needs a live desktop")
        return live


class OfflineProvider:
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def live(*args: Any, **kwargs: Any):
            raise NeedsLiveDesktop(f"the evaluator asked the desktop's provider to {name}(): that needs a live desktop")
        return live


class OfflineEnv:
    """What getters see of a DesktopEnv when rescoring: cache_dir, task_dir, task_config, a controller."""

    def __init__(self, cache_dir: Path, task_dir: str | None, task_config: dict, manifest: dict,
                 scored_at: dt.datetime | None):
        self.cache_dir = str(cache_dir)
        self.task_dir = task_dir
        self.task_config = task_config
        self.manifest = manifest
        self.scored_at = scored_at
        files = {e["desktop_path"]: e for e in manifest.get("files", []) if e.get("desktop_path")}
        self.controller = OfflineController(files, cache_dir, manifest.get("desktop_path"))
        self.provider = OfflineProvider()

    def day_scored(self, rules: dict) -> dt.date:
        """The day the task was scored, in the rules' time zone (else the machine's)."""
        from zoneinfo import ZoneInfo

        when = self.scored_at or dt.datetime.now(dt.timezone.utc)
        zone = ZoneInfo(rules["timezone"]) if isinstance(rules, dict) and rules.get("timezone") else None
        return when.astimezone(zone).date()

    def saved_output(self, config: dict) -> str | None:
        path = Path(self.cache_dir) / config.get("dest", "wallpaper.png")
        return str(path) if path.is_file() else None


_SWAP_LOCK = threading.Lock()


@contextlib.contextmanager
def offline_getters() -> Iterator[None]:
    """For the duration of a rescore: getters that would ask the desktop for a saved output read it instead,
    and relative dates resolve against the day the task was scored."""
    from desktop_env.evaluators import registry

    with _SWAP_LOCK:
        originals = {name: registry.get_getter(name) for name in ("rule_relativeTime", *SAVED_OUTPUT_GETTERS)}
        relative = originals["rule_relativeTime"]

        def rule_relative_time(env: Any, config: dict) -> Any:
            if isinstance(env, OfflineEnv):
                return relative(env, config, today=env.day_scored(config.get("rules")))
            return relative(env, config)

        def saved_output(name: str):
            def read(env: Any, config: dict) -> Any:
                return env.saved_output(config) if isinstance(env, OfflineEnv) else originals[name](env, config)
            return read

        registry.getter("rule_relativeTime")(rule_relative_time)
        for name in SAVED_OUTPUT_GETTERS:
            registry.getter(name)(saved_output(name))
        try:
            yield
        finally:
            for name, fn in originals.items():
                registry.getter(name)(fn)


def read_manifest(task_dir: Path) -> dict | None:
    try:
        manifest = json.loads((task_dir / RESCORE_DIR / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def last_action(task_dir: Path) -> Any:
    """The last action of the trajectory (what DesktopEnv.evaluate looks at for FAIL), None if none."""
    return read_trajectory(task_dir).last_action


def _parse_time(value: Any) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except (TypeError, ValueError):
        return None


def check_saved_files(evaluator: dict, manifest: dict | None) -> None:
    """Raises NotRescorable when a file getter's file is not among the saved ones."""
    needs = []
    for role, metric_name, config in getter_configs(evaluator):
        if config["type"] in FILE_GETTERS:
            try:
                needs += file_needs(config["type"], config, role, metric_name,
                                    (manifest or {}).get("desktop_path"))
            except (KeyError, TypeError) as e:
                raise NotRescorable(f"{role} getter {config['type']!r} config lacks {e}") from None
    if not needs:
        return
    if manifest is None:
        raise NotRescorable(f"no saved result files ({RESCORE_DIR}/{MANIFEST}): the task was scored before saving "
                            "was added, or by another harness")
    saved = {e.get("name"): e for e in manifest.get("files", []) if isinstance(e, dict)}
    for need in needs:
        entry = saved.get(need.name)
        if entry is None or (need.desktop_path is not None and entry.get("desktop_path") != need.desktop_path):
            where = f" ({need.desktop_path})" if need.desktop_path else ""
            raise NotRescorable(f"{need.role} file {need.name!r}{where} of metric {need.metric!r} was not saved "
                                "when the task was scored")
        if entry.get("state") not in SERVED_STATES:
            note = f": {entry['note']}" if entry.get("note") else ""
            raise NotRescorable(f"{need.role} file {need.name!r} of metric {need.metric!r} was not saved "
                                f"({entry.get('state')}{note})")


def score_offline(task_dir: Path, task_config: dict, task_files_dir: str | os.PathLike | None = None) -> float:
    """The task's score from its saved files and trajectory; raises NotRescorable or RescoreError."""
    from desktop_env.desktop_env import special_action
    from desktop_env.evaluators.scoring import score_task

    evaluator = task_config.get("evaluator") or {}
    if not evaluator.get("func"):
        raise NotRescorable("the task config has no evaluator")
    last = special_action(last_action(task_dir))
    if evaluator.get("func") == "infeasible":
        return 1.0 if last == "FAIL" else 0.0
    if last == "FAIL":
        return 0.0  # the agent claimed a feasible task is infeasible (as DesktopEnv.evaluate)
    try:
        reason = live_reason(evaluator)
    except DesktopEnvError as e:
        raise RescoreError(str(e)) from None
    if reason:
        raise NotRescorable(reason)
    manifest = read_manifest(task_dir)
    check_saved_files(evaluator, manifest)
    manifest = manifest or {"files": []}
    status = read_status(task_dir) or {}
    scored_at = _parse_time(manifest.get("saved_at")) or _parse_time(status.get("finished"))
    with tempfile.TemporaryDirectory(prefix="osworld-rescore-") as tmp:
        cache = Path(tmp) / "cache"
        saved = task_dir / RESCORE_DIR / FILES_DIR
        if saved.is_dir():
            shutil.copytree(saved, cache)
        else:
            cache.mkdir()
        env = OfflineEnv(cache, str(task_files_dir) if task_files_dir else None, task_config, manifest, scored_at)
        try:
            with offline_getters():
                return float(score_task(env, evaluator))
        except NeedsLiveDesktop as e:
            raise NotRescorable(str(e)) from None
        except Exception as e:  # EvaluationError, a task file that cannot be found, an unknown metric...
            raise RescoreError(f"{type(e).__name__}: {e}") from None


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < 1e-9


def rescore_task(task_dir: str | os.PathLike, task_config: Any, task_files_dir: str | os.PathLike | None = None,
                 write: bool = True) -> tuple[float | None, float]:
    """Rescores one task folder; returns (old score or None when it errored, new score).

    `task_config` is the task's dict (or a loaded `Task`, whose folder then resolves the
    task's relative file paths; else pass `task_files_dir`). Writes rescore.json beside
    result.txt (never touching it) and raises NotRescorable / RescoreError when no new
    score can be computed (recorded in rescore.json too).
    """
    task_dir = Path(task_dir)
    if hasattr(task_config, "config") and hasattr(task_config, "task_dir"):
        task_files_dir = task_files_dir or task_config.task_dir
        task_config = task_config.config
    record = read_task(task_dir)
    old = record.score if record is not None and record.status == "ok" else None
    manifest = read_manifest(task_dir) or {}
    evaluator = task_config.get("evaluator") or {}
    result: dict[str, Any] = {
        "task_id": task_config.get("id", task_dir.name), "domain": task_dir.parent.name,
        "old_score": old, "old_status": record.status if record else "incomplete",
        "new_score": None, "changed": None, "rescorable": True, "rescored_at": now_iso(),
        "osworld": osworld_version(), "scored_with": manifest.get("osworld"), "saved_at": manifest.get("saved_at"),
        "metrics": {name: {"when_scored": (manifest.get("metrics") or {}).get(name), "now": digest}
                    for name, digest in metric_fingerprints(evaluator).items()},
        "evaluator_changed": (manifest["evaluator"] != evaluator) if "evaluator" in manifest else None,
    }
    try:
        new = score_offline(task_dir, task_config, task_files_dir)
    except NotRescorable as e:
        result.update(rescorable=False, reason=str(e))
        if write:
            write_json_atomic(task_dir / RESULT_FILE, result)
        raise
    except RescoreError as e:
        result.update(error=str(e))
        if write:
            write_json_atomic(task_dir / RESULT_FILE, result)
        raise
    result.update(new_score=new, changed=not _same(old, new))
    if write:
        write_json_atomic(task_dir / RESULT_FILE, result)
    return old, new


# -- many result folders ----------------------------------------------------------------------------

@dataclass
class RescoreRow:
    domain: str
    task_id: str
    task_dir: str
    old: float | None
    new: float | None
    rescorable: bool
    changed: bool = False
    note: str | None = None
    old_status: str = "ok"

    @property
    def old_text(self) -> str:
        return f"{self.old:g}" if self.old is not None else self.old_status

    @property
    def new_text(self) -> str:
        return f"{self.new:g}" if self.new is not None else "-"

    def to_dict(self) -> dict:
        return asdict(self)


def find_task(task_set: Any, domain: str, task_id: str) -> Any | None:
    """The task of a result folder: by domain and id in the meta file, else by id in any domain."""
    if task_id in task_set.index.get(domain, []):
        return task_set.load(domain, task_id)
    for other, ids in task_set.index.items():
        if task_id in ids:
            return task_set.load(other, task_id)
    return None


def rescore_results(paths: Iterable[str | os.PathLike], task_set: Any) -> list[RescoreRow]:
    """Rescores every finished task under `paths` (any level of the results layout), tasks from `task_set`."""
    rows = []
    for path in paths:
        for run in find_runs(path):
            for record in sorted(run.records, key=lambda r: (r.domain, r.task_id)):
                task_dir = run.path / record.domain / record.task_id
                row = RescoreRow(record.domain, record.task_id, str(task_dir), record.score, None, False,
                                 old_status=record.status)
                rows.append(row)
                if record.status == "incomplete":
                    row.note = "did not finish: nothing to rescore"
                    continue
                try:
                    task = find_task(task_set, record.domain, record.task_id)
                except Exception as e:  # a task file that cannot be read
                    row.note = f"task file: {e}"
                    continue
                if task is None:
                    row.note = f"not in {task_set.meta_path}"
                    continue
                try:
                    row.old, row.new = rescore_task(task_dir, task)
                    row.rescorable, row.changed = True, not _same(row.old, row.new)
                except NotRescorable as e:
                    row.note = f"not rescorable: {e}"
                except RescoreError as e:
                    row.note = f"error: {e}"
    return rows
