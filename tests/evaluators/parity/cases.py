"""What a parity case is, and a folder to write a case's files into."""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    """One metric call: `args` are what the result (and expected) getters give, as OSWorld passes
    them (one argument when the task names no expected getter), `options` the task's options."""
    metric: str
    args: tuple[Any, ...]
    label: str
    options: dict[str, Any] = field(default_factory=dict)

    def call(self) -> dict[str, Any]:
        return {"metric": self.metric, "args": list(self.args), "options": self.options}


@dataclass(frozen=True)
class EvaluatorCase:
    """A whole evaluator block as OSWorld's DesktopEnv.evaluate scores it: getters are replaced by
    `values` (each getter config's "name" -> its value; the name "missing" is a missing file)."""
    evaluator: dict[str, Any]
    values: dict[str, Any]
    last_action: Any
    label: str
    metric: str = "(evaluator)"

    def call(self) -> dict[str, Any]:
        return {"evaluate": self.evaluator, "values": self.values, "last_action": self.last_action}


class Files:
    """Writes a case's files under one folder, each under a name of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._numbers = itertools.count()

    def path(self, suffix: str, stem: str = "f") -> str:
        return str(self.folder / f"{stem}{next(self._numbers)}{suffix}")

    def text(self, content: str, suffix: str = ".txt") -> str:
        path = self.path(suffix)
        Path(path).write_text(content, encoding="utf-8")
        return path

    def data(self, content: bytes, suffix: str) -> str:
        path = self.path(suffix)
        Path(path).write_bytes(content)
        return path

    def json(self, value: Any, suffix: str = ".json") -> str:
        return self.text(json.dumps(value, indent=2), suffix)


def libreoffice_convert(paths: list[str], target: str, outdir: Path) -> list[str]:
    """The files converted by LibreOffice itself (`soffice --headless --convert-to target`), in order, in
    `outdir`; an empty list when LibreOffice is not installed (those cases are then left out)."""
    soffice = shutil.which("soffice")
    if soffice is None or not paths:
        return []
    outdir.mkdir(parents=True, exist_ok=True)
    profile = outdir / "lo-profile"  # its own profile: another LibreOffice may be running
    subprocess.run([soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--convert-to", target,
                    "--outdir", str(outdir), *paths], check=True, capture_output=True, timeout=300)
    extension = target.split(":")[0]
    converted = [str(outdir / (Path(p).stem + "." + extension)) for p in paths]
    missing = [p for p in converted if not Path(p).is_file()]
    assert not missing, f"LibreOffice did not write {missing}"
    return converted
