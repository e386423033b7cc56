"""The human agent answers with what the person did in the view, and with their answer: Done is DONE,
Infeasible is FAIL, Give up ends the task without one."""
from __future__ import annotations

import socket
import threading

import pytest

from desktop_env.live_view.human_input import HumanInput
from desktop_env.live_view.rfb import KeyEvent
from desktop_env.live_view.server import LiveDesktop
from mm_agents.human_agent import HumanAgent, HumanAgentError
from mm_agents.loader import build_agent


def person_at(agent: HumanAgent) -> LiveDesktop:
    desktop = LiveDesktop("desktop-1", lambda: socket.socket())
    desktop.start_task("a-task", "Type a.", HumanInput())
    agent.reset()
    agent.attach_view(desktop)
    return desktop


def type_a(desktop: LiveDesktop) -> None:
    assert desktop.human is not None
    desktop.human.feed(KeyEvent(True, ord("a")))
    desktop.human.feed(KeyEvent(False, ord("a")))


def test_it_is_the_human_agent_by_name():
    assert isinstance(build_agent("human"), HumanAgent)


def test_a_pause_ends_a_step_with_what_was_done():
    agent = HumanAgent(idle_s=0.05)
    desktop = person_at(agent)
    type_a(desktop)
    response, actions = agent.predict("Type a.", {})
    assert actions == ["pyautogui.typewrite('a')"]
    assert response["input"][0]["code"] == actions[0] and "answer" not in response


@pytest.mark.parametrize("answer, last", [("done", ["DONE"]), ("infeasible", ["FAIL"]), ("give-up", [])])
def test_the_answer_ends_the_task_after_what_is_left(answer, last):
    agent = HumanAgent()
    desktop = person_at(agent)
    type_a(desktop)
    desktop.give_answer(answer)
    response, actions = agent.predict("Type a.", {})
    assert actions == ["pyautogui.typewrite('a')", *last]
    assert response["answer"] == answer
    assert agent.episode_over == (answer == "give-up")


def test_a_wait_left_behind_by_an_overrun_ends_with_its_task():
    agent = HumanAgent()
    desktop = person_at(agent)
    ended: list[BaseException] = []

    def wait() -> None:
        try:
            agent.predict("Type a.", {})
        except HumanAgentError as e:
            ended.append(e)

    waiting = threading.Thread(target=wait)
    waiting.start()
    desktop.end_task()
    waiting.join(5)
    assert not waiting.is_alive()
    assert "ended" in str(ended[0])


def test_without_the_view_it_says_so():
    agent = HumanAgent()
    agent.reset()
    with pytest.raises(HumanAgentError, match="live view"):
        agent.predict("Type a.", {})
