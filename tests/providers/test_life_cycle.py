"""Every provider has the same life cycle (prepare, create, prune); each does what it has of it."""
from __future__ import annotations

import os

import pytest

from desktop_env.providers import provider_class, provider_names
from desktop_env.providers.base import Built, Provider
from desktop_env.providers.leftovers import PruneResult
from desktop_env.providers.local import LocalProvider
from desktop_env.providers.local.boot.env_dir import runtime_root
from desktop_env.providers.remote import RemoteProvider

from .test_prune import dead_pid


@pytest.mark.parametrize("name", ["local", "remote", "docker", "vmware", "virtualbox"])
def test_each_built_in_provider_has_the_life_cycle(name):
    cls = provider_class(name)
    assert cls is not None and name in provider_names()
    assert all(callable(getattr(cls, step)) for step in ("prepare", "create", "prune"))


def test_a_provider_with_nothing_built_once_or_left_behind_says_so():
    assert RemoteProvider.prepare([]) == []
    assert RemoteProvider.prune() == PruneResult()


def test_a_failed_build_is_one_sentence_with_what_follows():
    built = Built("GNOME Settings 41", error="the archive is unreachable",
                  without="desktops will run the system's Settings", required=False)
    assert built.problem() == ("GNOME Settings 41 could not be installed; desktops will run the system's Settings: "
                               "the archive is unreachable")
    assert Built("server venv", path=None).problem() == ""


def test_a_run_hears_of_a_failed_build_on_stderr_and_goes_on(capsys):
    class Flaky(RemoteProvider):
        @classmethod
        def prepare(cls, tasks=None, extras=(), retry=False, progress=print) -> list[Built]:
            return [Built("VS Code", error="npm is not installed", without="its tasks will end as errors")]

    Flaky.prepare_for([{"id": "t"}])
    assert capsys.readouterr().err == "VS Code could not be installed; its tasks will end as errors: " \
                                      "npm is not installed\n"


def test_create_boots_through_start_emulator():
    started = []

    class Recorded(RemoteProvider):
        def start_emulator(self, path_to_vm, headless=True, os_type="Ubuntu") -> None:
            started.append((path_to_vm, headless, os_type))

    Recorded("http://127.0.0.1:1").create("disk.qcow2")
    assert started == [("disk.qcow2", True, "Ubuntu")]
    assert Provider.create is not LocalProvider.create  # the local desktop's start path is create() itself


def test_local_prune_removes_the_env_folders_of_dead_harnesses(tmp_path, monkeypatch):
    monkeypatch.setenv("OSWORLD_RUNTIME_DIR", str(tmp_path / "runtime"))
    root = runtime_root()
    for name, owner in (("env-dead", dead_pid()), ("env-alive", os.getpid())):
        (root / name).mkdir()
        (root / name / "owner.pid").write_text(str(owner))
    assert LocalProvider.prune(dry_run=True).env_dirs_removed == [str(root / "env-dead")]
    assert (root / "env-dead").is_dir()
    assert LocalProvider.prune().env_dirs_removed == [str(root / "env-dead")]
    assert not (root / "env-dead").exists() and (root / "env-alive").is_dir()
