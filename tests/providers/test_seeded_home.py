"""The home template seeded with a clean boot's start-up caches (build/seeded_home.py): built beside the
plain template, named by what made the caches, refused when it holds more than start-up caches, and
what each boot copies into its home once built."""
from __future__ import annotations

import pytest

from desktop_env.providers.local.build import prepare as prepare_module
from desktop_env.providers.local.build.seeded_home import (
    MAX_SEED_BYTES,
    ensure_seeded_home,
    installed_seeded_home,
    seeded_home_dir,
)


@pytest.fixture
def share(tmp_path, monkeypatch):
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path / "share"))
    (tmp_path / "share").mkdir()
    template = tmp_path / "share" / "home-template-v1-aaa"
    (template / "Documents").mkdir(parents=True)
    (template / ".bashrc").write_text("PS1='$ '\n")
    view = tmp_path / "share" / "desktop-view-bbb"
    view.mkdir()
    return template, view


def fill_like_a_boot(cache):
    (cache / "fontconfig").mkdir(parents=True)
    (cache / "fontconfig" / "0123-le64.cache-8").write_bytes(b"fc" * 100)
    (cache / "mesa_shader_cache" / "1a").mkdir(parents=True)
    (cache / "mesa_shader_cache" / "1a" / "shader").write_bytes(b"\x7fELF" * 10)


def test_the_seeded_template_is_the_plain_one_with_the_caches_and_every_desktop_can_read_it(share):
    template, view = share
    assert installed_seeded_home(template, view) is None
    seeded = ensure_seeded_home(template, view, fill_like_a_boot)
    assert seeded == installed_seeded_home(template, view) != template
    assert (seeded / ".bashrc").read_text() == "PS1='$ '\n" and (seeded / "Documents").is_dir()
    assert (seeded / ".cache" / "fontconfig" / "0123-le64.cache-8").read_bytes() == b"fc" * 100
    assert sorted(p.name for p in (seeded / ".cache").iterdir()) == ["fontconfig", "mesa_shader_cache"]
    # desktops run as other uids than the harness's
    assert all(p.stat().st_mode & 0o005 for p in [seeded, *seeded.rglob("*")] if p.is_dir())
    assert all(p.stat().st_mode & 0o004 for p in seeded.rglob("*") if p.is_file())
    # built once: a second call boots nothing
    assert ensure_seeded_home(template, view, lambda cache: pytest.fail("booted again")) == seeded


def test_a_new_template_or_view_gets_a_seed_of_its_own(share, tmp_path):
    template, view = share
    other_view = tmp_path / "share" / "desktop-view-ccc"
    other_template = tmp_path / "share" / "home-template-v2-ddd"
    names = {seeded_home_dir(t, v).name for t in (template, other_template) for v in (view, other_view)}
    assert len(names) == 4


def test_a_seed_holding_anything_but_start_up_caches_is_refused_and_nothing_is_left(share, tmp_path):
    template, view = share

    def planted(cache):
        fill_like_a_boot(cache)
        (cache / "chromium").mkdir()

    def too_big(cache):
        (cache / "mesa_shader_cache").mkdir(parents=True)
        (cache / "mesa_shader_cache" / "blob").write_bytes(b"\0" * (MAX_SEED_BYTES + 1))

    with pytest.raises(ValueError, match="only fontconfig, mesa_shader_cache belong in a seed, found chromium"):
        ensure_seeded_home(template, view, planted)
    with pytest.raises(ValueError, match="more than"):
        ensure_seeded_home(template, view, too_big)
    assert installed_seeded_home(template, view) is None
    assert sorted(p.name for p in (tmp_path / "share").iterdir()) == sorted([template.name, view.name])


def test_prepare_says_when_the_seed_could_not_be_made_and_boots_go_on_from_the_plain_template(share, monkeypatch):
    template, view = share

    def cannot_boot(cache):
        raise OSError("no bwrap here")

    built = prepare_module._start_up_caches(template, view, cannot_boot)
    assert (built.name, built.path, built.required) == ("start-up caches", None, False)
    assert built.problem() == ("start-up caches could not be installed; each boot compiles its shaders and "
                               "indexes its fonts anew (about a second of CPU): no bwrap here")
    monkeypatch.setattr(prepare_module, "every_desktop_mounts", lambda system=None: [
        prepare_module.Built(name, path) for name, path in
        (("server venv", template), ("server code", template), ("desktop view", view), ("home template", template))])
    assert prepare_module.desktop_parts().home_template == template
    seeded = ensure_seeded_home(template, view, fill_like_a_boot)
    assert prepare_module.desktop_parts().home_template == seeded
