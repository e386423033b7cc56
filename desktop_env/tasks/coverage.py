"""What each task needs to run here: nothing from outside, files to download, the live web, or what
this harness cannot give it (and what, by name).

One task is in one category, the first that applies:
- "cannot run here": validation refuses it (an account, a live scripted website, an unknown name...) or
  it needs an app the local desktop lacks (desktop_env.providers.local.apps); each reason by name;
- "live web": it needs a live website or an online account while it is set up, done or scored (a
  web page opened in a setup step, a command that fetches, an address the instruction or the
  evaluator names besides the files it downloads): it can run only with `--network`;
- "downloads": it needs only files fetched by URL (desktop_env.tasks.remote_files), which
  `osworld tasks prefetch` puts in the cache; `prefetched` says whether the cache has them all;
- "offline": nothing from outside.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..cache_manifest import CacheManifest, ManifestError, manifest_key
from .loader import Task
from .remote_files import RemoteFile, remote_files, task_steps
from .validation import Problem, refusals, validate_task

CATEGORIES = ("offline", "downloads", "live web", "cannot run here")

# Setup step types that need a website by what they are (besides `download`, whose files are fetched once).
WEB_STEP_TYPES = {"googledrive": "needs a Google Drive account", "login": "logs in to a website",
                  "proxy": "sets up a web proxy"}
# A web address: any http(s) URL whose host is not this machine.
WEB_URL = re.compile(r"https?://(?!(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0)[:/\"'\s]|(?:localhost|127\.\d+\.\d+\.\d+)$)"
                     r"[^\s\"'\\]+")
# Commands in setup (or postconfig) steps that fetch from the network: package managers and downloaders.
NETWORK_COMMAND = re.compile(r"\b(?:apt(?:-get)?\s+(?:-\S+\s+)*(?:update|install)|pip3?\s+install|wget|curl"
                             r"|git\s+clone|snap\s+install)\b"
                             # VS Code's marketplace: an extension by id (a .vsix file is local), in a
                             # shell line or a JSON argument list
                             r"|--install-extension[\"',\s]+(?![^\"'\s]*\.vsix)[\w-]+\.[\w-]+")
# `code --list-extensions | grep publisher.name`, as a shell line or a JSON argument list.
EXTENSION_LOOKUP = re.compile(r"--list-extensions[\"',\s]+\|[\"',\s]+grep[\"',\s]+([\w-]+\.[\w-]+)")
# Setup steps whose URLs are data written into the desktop, never fetched.
URL_AS_DATA_STEPS = ("update_browse_history",)
# A setup command that runs VS Code (`code FILE`, `code --install-extension ...`).
CODE_COMMAND = re.compile(r"(?:^|[\s;&|\"'])code(?:\s|$)")
VSCODE_APPS = {"vscode", "vs_code", "vs code", "visual studio code"}


@dataclass
class TaskCoverage:
    domain: str
    task_id: str
    category: str                                        # one of CATEGORIES
    reasons: list[str] = field(default_factory=list)     # why it is in its category (for "offline": none)
    blockers: list[str] = field(default_factory=list)    # for "cannot run here": what it needs, by name
    files: list[RemoteFile] = field(default_factory=list)
    prefetched: bool | None = None                       # for files to download: are they all in the cache?


def _without_downloaded_files(evaluator: dict[str, Any]) -> dict[str, Any]:
    """The evaluator less its postconfig and the URLs of the files its getters download (those are
    files, not pages: remote_files lists them)."""
    def strip(spec: Any) -> Any:
        if isinstance(spec, list):
            return [strip(s) for s in spec]
        if isinstance(spec, dict) and spec.get("type") == "cloud_file":
            return {k: v for k, v in spec.items() if k != "path"}
        if isinstance(spec, dict) and spec.get("type") == "conference_city_in_order":
            return {k: v for k, v in spec.items() if k != "csv_path"}
        return spec
    return {k: strip(v) if k in ("result", "expected") else v for k, v in evaluator.items() if k != "postconfig"}


def web_reasons(task: Task) -> list[str]:
    """Why the task needs a live website (or an account) to be set up, done or scored; [] when it does not."""
    reasons = []
    for where, step in task_steps(task):
        kind = step.get("type")
        if kind in WEB_STEP_TYPES:
            reasons.append(f"{where} is a {kind!r} step, which {WEB_STEP_TYPES[kind]}")
        if kind == "download":
            continue
        parameters = json.dumps(step.get("parameters", {}))
        command = NETWORK_COMMAND.search(parameters)
        if command:
            reasons.append(f"{where} runs {command.group(0)!r}, which fetches from the network")
        url = WEB_URL.search(parameters)
        if url and kind not in URL_AS_DATA_STEPS and kind not in WEB_STEP_TYPES:
            reasons.append(f"{where} ({kind}) opens {url.group(0)}")
    url = WEB_URL.search(json.dumps(_without_downloaded_files(task.evaluator)))
    if url:
        reasons.append(f"the evaluator reads {url.group(0)}")
    url = WEB_URL.search(task.instruction)
    if url:
        reasons.append(f"the instruction names {url.group(0)}")
    extension = marketplace_extension(task)
    if extension:
        reasons.append(f"the evaluator checks that VS Code has the extension {extension}, which the setup does not "
                       "provide: an agent installs it from the marketplace")
    return reasons


def marketplace_extension(task: Task) -> str | None:
    """The extension id a task's evaluator looks for in `code --list-extensions` when no setup step brings its
    .vsix: the agent can only get it from VS Code's marketplace, online."""
    evaluator = json.dumps(_without_downloaded_files(task.evaluator))
    if "--list-extensions" not in evaluator or ".vsix" in json.dumps(task.config.get("config") or []):
        return None
    found = EXTENSION_LOOKUP.search(evaluator)
    return found.group(1) if found else None


def needs_vscode(task: Task) -> str | None:
    """Why the task needs VS Code (its domain, its related apps, a setup command running `code`), else None."""
    if task.domain == "vs_code":
        return "its domain is vs_code"
    apps = {str(app).lower() for app in task.config.get("related_apps") or []}
    if apps & VSCODE_APPS:
        return "its related apps name VS Code"
    for where, step in task_steps(task):
        command = (step.get("parameters") or {}).get("command")
        text = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        if CODE_COMMAND.search(text):
            return f"{where} runs `code`"
    return None


# What an unsupported name needs, for the table (a name not here is shown as it is).
NEEDS = {"googledrive": "Google Drive", "googledrive_file": "Google Drive", "login": "a website login",
         "proxy": "a proxy service", "vscode_config": "VS Code", "VS Code": "VS Code",
         "gotoRecreationPage_and_get_html_content": "a live scripted website"}


def lacking_apps(task: Task, missing: dict[str, str]) -> dict[str, str]:
    """{app: why} for the apps the task needs that the desktop lacks (`missing`, from missing_apps())."""
    vscode = needs_vscode(task)
    if vscode and "VS Code" in missing:
        return {"VS Code": f"needs VS Code ({vscode}): {missing['VS Code']}"}
    return {}


def app_problems(task: Task, missing: dict[str, str]) -> list[Problem]:
    """The apps the task needs that the desktop lacks and cannot build, as the plan refuses a task: unsupported
    names of kind "app"."""
    return [Problem(task.path, "related_apps", "app", app, why) for app, why in lacking_apps(task, missing).items()]


def _blocker(problem: Problem) -> str:
    """What a refusal needs, by name: the thing an unsupported name needs, an unknown name as it is
    ("unknown metric x"), else the kind of problem ("unsafe path")."""
    if problem.unsupported:
        return NEEDS.get(problem.name, problem.name)
    if problem.about_names:
        return f"unknown {problem.kind} {problem.name}"
    return {"path": "unsafe path"}.get(problem.kind, problem.kind)


def files_in_cache(files: list[RemoteFile], cache_dir: str | os.PathLike[str]) -> bool:
    """Whether the cache holds every file as a prefetch recorded it (present, at its recorded size; a run
    checks the sha256 too)."""
    try:
        manifest = CacheManifest(cache_dir)
    except ManifestError:
        return False
    for file in files:
        entry = manifest.get(manifest_key(file.task_id, file.name))
        path = Path(cache_dir) / file.task_id / file.name
        if entry is None or entry.url != file.url or not path.is_file() or path.stat().st_size != entry.size:
            return False
    return True


def files_present(files: list[RemoteFile], cache_dir: str | os.PathLike[str]) -> bool:
    """Whether every file is at its cache name in `cache_dir` (`<cache>/<task id>/<name>`), as OSWorld's own runs
    leave their cache: a copy of such a cache has no prefetch manifest, and a run reads a file found there."""
    return all((Path(cache_dir) / file.task_id / file.name).is_file() for file in files)


def default_missing_apps() -> dict[str, str]:
    from ..providers.local.apps import missing_apps  # noqa: PLC0415  (loads the local provider only when a check needs it)
    return missing_apps()


def classify(task: Task, cache_dir: str | os.PathLike[str] | None = None,
             missing_apps: Callable[[], dict[str, str]] = default_missing_apps) -> TaskCoverage:
    """The task's category with its reasons (see the module's doc); with `cache_dir`, whether its
    files are prefetched there."""
    files, _ = remote_files(task)
    coverage = TaskCoverage(task.domain, task.id, "offline", files=files)
    if files and cache_dir is not None:
        coverage.prefetched = files_in_cache(files, cache_dir)
    refused = refusals(validate_task(task))
    lacking = lacking_apps(task, missing_apps())
    if refused or lacking:
        coverage.category = "cannot run here"
        coverage.blockers += list(lacking)
        coverage.reasons += list(lacking.values())
        for problem in refused:
            coverage.blockers.append(_blocker(problem))
            coverage.reasons.append(str(problem))
        coverage.blockers = list(dict.fromkeys(coverage.blockers))
        return coverage
    web = web_reasons(task)
    if web:
        coverage.category, coverage.reasons = "live web", web
    elif files:
        coverage.category = "downloads"
        coverage.reasons = [f"downloads {len(files)} file(s) from {', '.join(sorted({_host(f.url) for f in files}))}"]
    return coverage


def _host(url: str) -> str:
    return urlsplit(url).hostname or url


@dataclass
class DomainCoverage:
    tasks: int = 0
    offline: int = 0
    downloads: int = 0
    prefetched: int = 0                                          # of the downloads, those whose files are all cached
    live_web: int = 0
    cannot_run: int = 0
    blockers: dict[str, int] = field(default_factory=dict)       # name -> tasks it keeps from running here

    def add(self, task: TaskCoverage) -> None:
        self.tasks += 1
        if task.category == "offline":
            self.offline += 1
        elif task.category == "downloads":
            self.downloads += 1
            self.prefetched += bool(task.prefetched)
        elif task.category == "live web":
            self.live_web += 1
        else:
            self.cannot_run += 1
            for name in task.blockers:
                self.blockers[name] = self.blockers.get(name, 0) + 1


@dataclass
class CoverageReport:
    tasks: list[TaskCoverage]
    cache_dir: str | None = None

    def by_domain(self) -> dict[str, DomainCoverage]:
        domains: dict[str, DomainCoverage] = {}
        for task in self.tasks:
            domains.setdefault(task.domain, DomainCoverage()).add(task)
        return domains

    def total(self) -> DomainCoverage:
        total = DomainCoverage()
        for task in self.tasks:
            total.add(task)
        return total

    def to_json(self) -> dict[str, Any]:
        def counts(d: DomainCoverage) -> dict[str, Any]:
            return {"tasks": d.tasks, "offline": d.offline, "downloads": d.downloads, "prefetched": d.prefetched,
                    "live_web": d.live_web, "cannot_run_here": d.cannot_run,
                    "cannot_run_because": dict(sorted(d.blockers.items(), key=lambda kv: (-kv[1], kv[0])))}
        return {"format": 1, "cache_dir": self.cache_dir, "total": counts(self.total()),
                "domains": {name: counts(d) for name, d in self.by_domain().items()},
                "tasks": [{"domain": t.domain, "id": t.task_id, "category": t.category, "reasons": t.reasons,
                           "blockers": t.blockers, "files": [f.url for f in t.files], "prefetched": t.prefetched}
                          for t in self.tasks]}


def coverage(tasks: list[Task], cache_dir: str | os.PathLike[str] | None = None,
             missing_apps: Callable[[], dict[str, str]] = default_missing_apps) -> CoverageReport:
    """Each task classified (see classify), in the order given."""
    missing = missing_apps()
    return CoverageReport([classify(task, cache_dir, lambda: missing) for task in tasks],
                          str(cache_dir) if cache_dir is not None else None)
