"""Recording an evaluation's questions to the desktop, and answering them again offline.

`RecordingContext` wraps a live context: every call a getter makes (read_file, run_command,
accessibility_tree, http...) is passed on and kept with its arguments and answer. Bytes
(files, the wallpaper, HTTP bodies) are kept by content hash within a size bound; other
answers are JSON. `write()` puts them in a versioned manifest plus one file per blob.

`ReplayContext` answers from such a manifest: the same call (operation and arguments) gets
the recorded answer (the n-th identical call the n-th answer); a call that was not recorded
raises `NotRecorded` naming the getter and the call, which makes a rescore say "not
rescorable" instead of guessing. A service that was unreachable when recorded is
unreachable again (getters fall back as they did live). `endpoint()` (websocket clients such
as Chrome's DevTools protocol) and the env reached directly (old-style getters) are live only.

Nothing here knows getter names: whatever a getter asks through the context is recorded,
plugins' getters included.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .context import CommandResult, EvalContext, HttpAnswer, NotRecorded, ServiceUnavailable
from .scoring import metric_calls, run_getter

MANIFEST_VERSION = 2
MAX_BYTES = 50 * 1024 * 1024
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


# -- how each kind of answer is kept ---------------------------------------------------------------

class Blobs:
    """Bytes by content hash, within a total size bound; `load` raises NotRecorded for what was not kept."""

    def __init__(self, max_bytes: int = MAX_BYTES, folder: Path | None = None):
        self.max_bytes = max_bytes
        self.folder = folder
        self.kept: dict[str, bytes] = {}
        self.used = 0

    def store(self, data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        if digest in self.kept:
            return {"blob": digest, "size": len(data)}
        if self.used + len(data) > self.max_bytes:
            return {"too_large": len(data), "bound": self.max_bytes}
        self.kept[digest] = bytes(data)
        self.used += len(data)
        return {"blob": digest, "size": len(data)}

    def load(self, answer: dict, call: str) -> bytes:
        if "too_large" in answer:
            raise NotRecorded(f"the answer to {call} ({answer['too_large']} bytes) was over the bound on saved "
                              f"files ({answer.get('bound')} bytes) and was not kept")
        digest = answer["blob"]
        if not SHA256_HEX.fullmatch(str(digest)):  # a recording from elsewhere must not name other files
            raise NotRecorded(f"the recorded answer to {call} names {digest!r:.80}, which is not a saved answer's name")
        if digest not in self.kept:
            try:
                if self.folder is None:  # a recording being made: only what it kept in memory is there
                    raise FileNotFoundError(digest)
                self.kept[digest] = (self.folder / digest).read_bytes()
            except (OSError, TypeError):
                raise NotRecorded(f"the saved answer to {call} ({digest[:12]}...) is missing "
                                  "from the recording") from None
        return self.kept[digest]


@dataclass(frozen=True)
class Codec:
    """How one operation's answer becomes JSON (`encode`) and back (`decode`)."""
    encode: Callable[[Any, Blobs], dict]
    decode: Callable[[dict, Blobs, str, ReplayContext, dict], Any]


def _encode_bytes(value: bytes | None, blobs: Blobs) -> dict:
    return {"absent": True} if value is None else blobs.store(value)


def _decode_bytes(answer: dict, blobs: Blobs, call: str, ctx: ReplayContext, args: dict) -> bytes | None:
    return None if answer.get("absent") else blobs.load(answer, call)


def _decode_cached(answer: dict, blobs: Blobs, call: str, ctx: ReplayContext, args: dict) -> Path | None:
    """The cache file as it was, put back into the replay's cache folder."""
    data = _decode_bytes(answer, blobs, call, ctx, args)
    return None if data is None else ctx.save_to_cache(args["name"], data, args.get("field"))


def _encode_live_only(value: Any, blobs: Blobs) -> dict:
    return {"live_only": True}


def _decode_live_only(answer: dict, blobs: Blobs, call: str, ctx: ReplayContext, args: dict) -> Any:
    raise NotRecorded(f"{ctx.asking} talks to {args['service']} through endpoint(): that conversation (e.g. "
                      "Chrome's DevTools websocket) is live only and was not recorded")


VALUE = Codec(lambda value, blobs: {"value": value}, lambda answer, blobs, call, ctx, args: answer["value"])
BYTES = Codec(_encode_bytes, _decode_bytes)
COMMAND = Codec(lambda value, blobs: {"value": value.to_json()},
                lambda answer, blobs, call, ctx, args: CommandResult(**answer["value"]))
HTTP = Codec(lambda value, blobs: {"status": value.status, **blobs.store(value.body)},
             lambda answer, blobs, call, ctx, args: HttpAnswer(answer["status"], blobs.load(answer, call)))
CACHED = Codec(lambda value, blobs: _encode_bytes(None if value is None else Path(value).read_bytes(), blobs),
               _decode_cached)
LIVE_ONLY = Codec(_encode_live_only, _decode_live_only)


def call_key(op: str, args: dict) -> str:
    """What makes two calls the same: the operation and its arguments (a field name for messages aside)."""
    asked = {k: v for k, v in args.items() if k != "field"}
    return json.dumps({"op": op, "args": asked}, sort_keys=True, default=str)


def describe_call(op: str, args: dict) -> str:
    shown = ", ".join(f"{k}={v!r:.120}" for k, v in args.items() if v is not None and k != "field")
    return f"{op}({shown})"


class CallLog(EvalContext):
    """The context's operations as named calls with JSON arguments; subclasses answer them (`_op`)."""

    def _op(self, op: str, args: dict, codec: Codec) -> Any:
        raise NotImplementedError

    def read_file(self, path: str) -> bytes | None:
        return self._op("read_file", {"path": path}, BYTES)

    def run_command(self, command: list[str] | str, shell: bool = False) -> CommandResult:
        return self._op("run_command", {"command": command, "shell": bool(shell)}, COMMAND)

    def run_python(self, code: str) -> CommandResult:
        return self._op("run_python", {"code": code}, COMMAND)

    def accessibility_tree(self) -> str:
        return self._op("accessibility_tree", {}, VALUE)

    def terminal_output(self) -> str | None:
        return self._op("terminal_output", {}, VALUE)

    def screen_size(self) -> dict:
        return self._op("screen_size", {}, VALUE)

    def window_size(self, app_class_name: str) -> dict | None:
        return self._op("window_size", {"app_class_name": app_class_name}, VALUE)

    def wallpaper(self) -> bytes | None:
        return self._op("wallpaper", {}, BYTES)

    def directory_tree(self, path: str) -> dict | None:
        return self._op("directory_tree", {"path": path}, VALUE)

    def desktop_path(self) -> str:
        return self._op("desktop_path", {}, VALUE)

    def http(self, service: str, path: str, method: str = "GET", auth: tuple[str, str] | None = None) -> HttpAnswer:
        return self._op("http", {"service": service, "path": path, "method": method,
                                 "auth": list(auth) if auth else None}, HTTP)

    def endpoint(self, service: str) -> str:
        return self._op("endpoint", {"service": service}, LIVE_ONLY)

    def cached_file(self, name: str, field: str | None = None) -> Path | None:
        return self._op("cached_file", {"name": name, "field": field}, CACHED)


def _inner_args(op: str, args: dict) -> dict:
    if op == "http" and args.get("auth"):
        return {**args, "auth": tuple(args["auth"])}
    return args


class RecordingContext(CallLog):
    """A live context whose every call is kept with its answer (see the module's docstring)."""

    def __init__(self, inner: EvalContext, max_bytes: int = MAX_BYTES):
        self.inner = inner
        self.blobs = Blobs(max_bytes)
        self.calls: list[dict] = []
        self.notes: list[str] = []
        self.getters_run: set[str] = set()
        self.evaluated_at = inner.now()

    @property
    def task_config(self) -> dict:
        return self.inner.task_config

    @property
    def task_dir(self) -> str | None:
        return self.inner.task_dir

    @property
    def cache_dir(self) -> Path:
        return self.inner.cache_dir

    def now(self) -> dt.datetime:
        return self.evaluated_at

    def _op(self, op: str, args: dict, codec: Codec) -> Any:
        entry = {"op": op, "args": args, "asked_by": self.asking}
        try:
            value = getattr(self.inner, op)(**_inner_args(op, args))
        except ServiceUnavailable as e:  # getters fall back on this: the rescore must see it too
            self.calls.append({**entry, "answer": {"unavailable": str(e)}})
            raise
        answer = codec.encode(value, self.blobs)
        if "too_large" in answer:
            self.notes.append(f"{self.asking}: the answer to {describe_call(op, args)} ({answer['too_large']} "
                              "bytes) is over the bound on saved files; not kept")
        self.calls.append({**entry, "answer": answer})
        return value

    @contextlib.contextmanager
    def getter_scope(self, label: str, config: dict) -> Iterator[None]:
        self.getters_run.add(getter_key(config))
        with super().getter_scope(label, config):
            yield

    @property
    def env(self) -> Any:
        note = (f"{self.asking} reached the env directly (ctx.env/controller/provider): what it asked is not "
                "recorded, so this task cannot be rescored")
        if note not in self.notes:
            self.notes.append(note)
        return self.inner.env

    def manifest(self) -> dict:
        return {"version": MANIFEST_VERSION, "evaluated_at": self.evaluated_at.isoformat(),
                "max_bytes": self.blobs.max_bytes, "total_bytes": self.blobs.used,
                "calls": self.calls, "notes": list(self.notes)}

    def write_blobs(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for digest, data in self.blobs.kept.items():
            (folder / digest).write_bytes(data)


def getter_key(config: dict) -> str:
    return json.dumps(config, sort_keys=True, default=str)


class ReplayContext(CallLog):
    """Answers a recorded evaluation's calls again, offline; anything else raises NotRecorded."""

    def __init__(self, manifest: dict, blobs_dir: Path, cache_dir: Path, task_dir: str | None, task_config: dict):
        if manifest.get("version") != MANIFEST_VERSION:
            raise NotRecorded(f"the recording is version {manifest.get('version')!r}, made by an older osworld; "
                              f"this one reads version {MANIFEST_VERSION}: re-run the task to rescore it")
        self._task_config = task_config
        self._task_dir = task_dir
        self._cache_dir = Path(cache_dir)
        self.blobs = Blobs(folder=Path(blobs_dir))
        self.evaluated_at = dt.datetime.fromisoformat(manifest["evaluated_at"])
        self.answers: dict[str, list[dict]] = {}
        for call in manifest.get("calls", []):
            self.answers.setdefault(call_key(call["op"], call["args"]), []).append(call["answer"])
        self.asked: dict[str, int] = {}

    @property
    def task_config(self) -> dict:
        return self._task_config

    @property
    def task_dir(self) -> str | None:
        return self._task_dir

    @property
    def cache_dir(self) -> Path:
        return self._cache_dir

    def now(self) -> dt.datetime:
        return self.evaluated_at

    def _op(self, op: str, args: dict, codec: Codec) -> Any:
        key = call_key(op, args)
        call = describe_call(op, args)
        answers = self.answers.get(key)
        if not answers:
            raise NotRecorded(f"{self.asking} asked for {call}, which was not recorded")
        n = self.asked.get(key, 0)
        self.asked[key] = n + 1
        answer = answers[min(n, len(answers) - 1)]
        if "unavailable" in answer:
            raise ServiceUnavailable(answer["unavailable"])
        try:
            return codec.decode(answer, self.blobs, call, self, args)
        except NotRecorded as e:  # said once: a decoder that names the asker already is not prefixed again
            raise (e if str(e).startswith(str(self.asking)) else NotRecorded(f"{self.asking}: {e}")) from None

    @property
    def env(self) -> Any:
        raise NotRecorded(f"{self.asking} reaches the desktop through ctx.env/ctx.controller/ctx.provider (the old "
                          "getter(env, config) style), which a rescore cannot replay; rewrite it with the context's "
                          "methods (read_file, run_command, ...)")


def record_unreached_getters(ctx: RecordingContext, evaluator: dict) -> list[str]:
    """Runs, through the recording, the getters the evaluation never reached (an "and" that stopped at
    a 0), so that a rescore whose first metric now passes finds their answers. Their values are
    dropped; a getter that fails is noted, never raised. Returns the notes."""
    notes = []
    try:
        calls = metric_calls(evaluator) if evaluator.get("func") != "infeasible" else []
    except Exception as e:
        return [f"the evaluator cannot be read: {type(e).__name__}: {e}"]
    for call in calls:
        for role, config in (("result", call.result), ("expected", call.expected)):
            if not isinstance(config, dict) or getter_key(config) in ctx.getters_run:
                continue
            try:
                run_getter(ctx, config, role, call.func)
            except Exception as e:
                notes.append(f"{role} getter {config.get('type')!r} of metric {call.func!r}, run after the "
                             f"evaluation to record it, failed: {type(e).__name__}: {e}")
    ctx.notes.extend(notes)
    return notes
