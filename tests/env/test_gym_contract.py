"""Which class makes which promise: DesktopEnv is OSWorld's API only, OSWorldGymEnv is Gymnasium's; the
adapter's text space holds any string of its length, and its task set comes from the files OSWorld uses."""
from __future__ import annotations

import io
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from PIL import Image

from desktop_env.desktop_env import DesktopEnv
from desktop_env.gym_adapter import ENV_ID, AnyText, GymAdapterError, OSWorldGymEnv, load_tasks, screenshot_array

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tasks"


def test_desktop_env_does_not_claim_gymnasiums_contract_and_the_adapter_does():
    assert not issubclass(DesktopEnv, gymnasium.Env)
    assert issubclass(OSWorldGymEnv, gymnasium.Env)
    assert gymnasium.spec(ENV_ID).nondeterministic is True


def test_any_text_holds_any_script_within_its_length_and_samples_inside_itself():
    space = AnyText(12, seed=3)
    assert "<a name='Ünïcødé ✓'/>" not in space  # 21 characters
    assert "Ünïcødé ✓" in space and "" in space and "\n\t" in space
    assert None not in space and b"bytes" not in space
    assert all(space.sample() in space for _ in range(20))
    assert AnyText(5, min_length=1).sample() != ""


def test_a_meta_file_gives_its_tasks_and_a_task_file_gives_itself():
    from_meta = load_tasks(EXAMPLES / "test_example.json")
    from_file = load_tasks(EXAMPLES / "examples" / "os" / "example-append-line.json")
    assert [t.id for t in from_meta] == [t.id for t in from_file] == ["example-append-line"]
    with pytest.raises(GymAdapterError, match="Task objects"):
        load_tasks([{"id": "raw dicts go in reset's options, not the set"}])


def test_a_screenshot_of_another_size_than_declared_is_an_error_not_resized():
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(buffer, "PNG")
    array = screenshot_array(buffer.getvalue(), (4, 3))
    assert array.shape == (3, 4, 3) and array.dtype == np.uint8 and tuple(array[0, 0]) == (10, 20, 30)
    with pytest.raises(GymAdapterError, match="4x3.*declares 8x6"):
        screenshot_array(buffer.getvalue(), (8, 6))
