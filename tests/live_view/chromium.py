"""Debian's Chromium, headless, driven over its DevTools protocol on a pipe (--remote-debugging-pipe:
NUL-ended JSON on fds 3 and 4), so a test clicks, types and takes screenshots as a person's browser would."""
from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Any

import numpy
from PIL import Image

CHROMIUM = shutil.which("chromium")


def _onto_3_and_4(read_end: int, write_end: int) -> None:
    """In the child: the pipe's ends as fds 3 and 4 (copied aside first, in case one of them is 3 or 4);
    pass_fds keeps those numbers open past the closing of the rest."""
    read_copy, write_copy = os.dup(read_end), os.dup(write_end)
    os.dup2(read_copy, 3)
    os.dup2(write_copy, 4)


class DevToolsError(RuntimeError):
    pass


class Chromium:
    def __init__(self, width: int = 1400, height: int = 900):
        assert CHROMIUM, "chromium is not installed"
        self.profile = tempfile.mkdtemp(prefix="osworld-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4: dup the pipe's ends onto those numbers in the child.
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "--no-first-run", "--disable-gpu", "about:blank"],
            pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: _onto_3_and_4(to_chrome_r, from_chrome_w))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self._in = os.fdopen(from_chrome_r, "rb", buffering=0)
        self._next_id = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._lock = threading.Condition()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.page("Page.enable")
        self.page("Runtime.enable")

    def _read(self) -> None:
        buffer = b""
        while chunk := self._in.read(65536):
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._lock:
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._lock.notify_all()

    def call(self, method: str, session: str | None = None, timeout: float = 30, **params: Any) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            number = self._next_id
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._lock:
            while number not in self._answers:
                if not self._lock.wait(deadline - time.monotonic()):
                    raise DevToolsError(f"{method}: no answer in {timeout} s")
            answer = self._answers.pop(number)
        if "error" in answer:
            raise DevToolsError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, session=self.session, **params)

    def navigate(self, url: str) -> None:
        self.page("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression: str, timeout: float = 30) -> Any:
        result = self.call("Runtime.evaluate", session=self.session, timeout=timeout, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise DevToolsError(f"still false after {timeout} s: {expression}")
            time.sleep(0.2)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.page("Page.captureScreenshot", format="png")["data"])

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type_text(self, text: str) -> None:
        """Each character as a key down and up, as a keyboard sends them."""
        for char in text:
            code = f"Key{char.upper()}" if char.isalpha() else ("Space" if char == " " else "")
            self.page("Input.dispatchKeyEvent", type="keyDown", key=char, text=char, code=code,
                      windowsVirtualKeyCode=ord(char.upper()))
            self.page("Input.dispatchKeyEvent", type="keyUp", key=char, code=code,
                      windowsVirtualKeyCode=ord(char.upper()))

    def key(self, key: str, code: str, key_code: int, modifiers: int = 0) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.page("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code,
                      modifiers=modifiers)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._out.close()
        shutil.rmtree(self.profile, ignore_errors=True)


CONTROL = 2  # CDP's modifier bit for Ctrl


def press_with_control(browser: Chromium, char: str) -> None:
    """Ctrl+`char` as a keyboard sends it: Control down, the key down and up with the modifier, Control up."""
    browser.page("Input.dispatchKeyEvent", type="rawKeyDown", key="Control", code="ControlLeft",
                 windowsVirtualKeyCode=17, modifiers=CONTROL)
    browser.key(char, f"Key{char.upper()}", ord(char.upper()), modifiers=CONTROL)
    browser.page("Input.dispatchKeyEvent", type="keyUp", key="Control", code="ControlLeft", windowsVirtualKeyCode=17)


def colour_share(png: bytes, colour: tuple[int, int, int], tolerance: int = 12) -> float:
    """Share of the screenshot's pixels within `tolerance` of `colour` in each channel."""
    pixels = numpy.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=numpy.int16)
    return float((numpy.abs(pixels - numpy.array(colour)) <= tolerance).all(axis=2).mean())
