"""`osworld report` on a real results tree (real PNGs, a real mp4), loaded in real headless Chromium."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests
import websocket
from click.testing import CliRunner
from PIL import Image

from osworld_cli.report_command import report_command
from osworld_harness.results.report import ReportError, build_report, rel_url

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update"]
HOSTILE = "<script>alert(1)</script></details></pre><img src=x onerror=alert(2)>"

needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
needs_ffmpeg = pytest.mark.skipif(not shutil.which("ffmpeg"), reason="ffmpeg is not installed")


# -- a real results tree ------------------------------------------------------------------------

def png(path: Path, color: tuple[int, int, int], size=(320, 200)) -> str:
    image = Image.new("RGB", size, color)
    for x in range(0, size[0], 20):  # some structure, so the screenshot is not a flat colour
        for y in range(size[1]):
            image.putpixel((x, y), (255, 255, 255))
    image.save(path)
    return path.name


def write_task(run_dir: Path, domain: str, task_id: str, *, score: float | None, status: str | None = "ok",
               steps: list[dict] | None = None, error: dict | None = None, seconds: int = 30,
               recording: bool = False) -> Path:
    folder = run_dir / domain / task_id
    folder.mkdir(parents=True)
    png(folder / "step_0_20260101@100000000000.png", (40, 90, 160))
    lines = []
    for n, step in enumerate(steps or [], start=1):
        stamp = f"20260101@1000{n:02d}000000"
        shot = png(folder / f"step_{n}_{stamp}.png", (30 * n % 255, 120, 60))
        lines.append(json.dumps({"step_num": n, "action_timestamp": stamp, "action": step.get("action", "DONE"),
                                 "response": step.get("response", ""), "reward": 0, "done": step.get("done", False),
                                 "info": step.get("info", {}), "screenshot_file": shot,
                                 "usage": {"input_tokens": 100, "output_tokens": 20}}))
    if lines:
        (folder / "traj.jsonl").write_text("\n".join(lines) + "\n")
    if score is not None:
        (folder / "result.txt").write_text(f"{score}\n")
    if status is not None:
        record = {"status": status, "steps": len(steps or []), "started": "2026-01-01T10:00:00+00:00",
                  "finished": f"2026-01-01T10:00:{seconds:02d}+00:00",
                  "durations": {"reset": 2.0, "agent": 5.0, "env": 3.0, "evaluate": 1.0},
                  "usage": {"input_tokens": 300, "output_tokens": 60, "cost_usd": 0.002}}
        if error:
            record["error"] = error
        (folder / "status.json").write_text(json.dumps(record))
    (folder / "runtime.log").write_text("2026-01-01 10:00:00 INFO reset done\n")
    if recording:
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=d=1:s=64x48",
                        "-pix_fmt", "yuv420p", "-y", str(folder / "recording.mp4")], check=True, timeout=60)
    return folder


def build_results(root: Path) -> Path:
    run_dir = root / "pyautogui" / "screenshot" / "gpt-4o"
    write_task(run_dir, "libreoffice_calc", "calc-sum", score=1.0, recording=True, steps=[
        {"response": "I will click the cell.", "action": "pyautogui.click(100, 200)"},
        {"response": "Typing the formula.", "action": "pyautogui.write('=SUM(A1:A3)')"},
        {"response": "Done.", "action": "DONE", "done": True}])
    write_task(run_dir, "libreoffice_calc", "calc-chart", score=0.0, seconds=50, steps=[
        {"response": f"My plan: {HOSTILE}", "action": {"action_type": "CLICK", "parameters": {"x": 1, "y": 2}},
         "info": {"action_error": "NameError: name 'pyautogu' is not defined"}},
        {"response": "giving up", "action": "FAIL", "done": True, "info": {"fail": True}}])
    (run_dir / "libreoffice_calc" / "calc-chart" / "rescore.json").write_text(json.dumps(
        {"old_score": 0.0, "new_score": 1.0, "changed": True, "rescorable": True,
         "rescored_at": "2026-02-01T00:00:00"}))
    write_task(run_dir, "os", "os-error", score=None, status="error", seconds=12, steps=[
        {"response": "opening a terminal", "action": "pyautogui.hotkey('ctrl', 'alt', 't')"}],
        error={"type": "ModelAPIError", "message": "HTTP 500 from the model API <b>bold?</b>",
               "traceback": "Traceback (most recent call last):\n  File \"agent.py\", line 1\nModelAPIError: HTTP 500"})
    write_task(run_dir, "libreoffice_writer", "writer-half", score=0.5, seconds=20, steps=[
        {"response": "formatting", "action": "pyautogui.hotkey('ctrl', 'b')"}])
    # OSWorld's own layout: no status.json, no usage, no recording.
    write_task(run_dir, "chrome", "osworld-style", score=1.0, status=None, steps=[
        {"response": "search", "action": "pyautogui.press('enter')"}])
    return run_dir


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    results = root / "results"
    build_results(results)
    output = build_report([results], root / "out" / "site" / "report.html")
    return results, output


# -- the HTML itself ----------------------------------------------------------------------------

def test_report_is_one_self_contained_file_with_relative_links(report):
    results, output = report
    text = output.read_text()
    assert output.stat().st_size < 200_000  # screenshots are links, never inlined
    assert "data:image" not in text and "base64" not in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<script src" not in text and "<link" not in text
    assert 'src="/' not in text and 'href="/' not in text and "file:" not in text  # links are relative
    shot = next((results / "pyautogui/screenshot/gpt-4o/libreoffice_calc/calc-sum").glob("step_1_*.png"))
    url = rel_url(shot, output.parent)
    assert url.startswith("../../results/pyautogui/screenshot/gpt-4o/libreoffice_calc/calc-sum/step_1_")
    assert "%40" in url  # the @ of the timestamp is percent-encoded
    assert f'loading="lazy" decoding="async" src="{url}"' in text
    video = "../../results/pyautogui/screenshot/gpt-4o/libreoffice_calc/calc-sum/recording.mp4"
    assert f'<video controls preload="none" src="{video}">' in text
    assert text.count('<details class="task"') == 5 and '<details class="task" open' not in text


def test_hostile_response_is_escaped_in_the_file(report):
    _, output = report
    text = output.read_text()
    assert "<script>alert(1)" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/details&gt;" in text
    assert "<img src=x" not in text
    assert text.count("<script>") == 1  # ours


def test_no_results_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError):
        build_report([tmp_path / "empty"], tmp_path / "r.html")


def test_cli_writes_the_report(tmp_path):
    build_results(tmp_path / "results")
    result = CliRunner().invoke(report_command, [str(tmp_path / "results"), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").is_file() and "r.html" in result.output
    result = CliRunner().invoke(report_command, [str(tmp_path), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 0  # any level of the layout
    (tmp_path / "nothing").mkdir()
    result = CliRunner().invoke(report_command, [str(tmp_path / "nothing"), "-o", str(tmp_path / "n.html")])
    assert result.exit_code != 0 and "no task results" in result.output


# -- in real headless Chromium ------------------------------------------------------------------

def chromium(args: list[str], profile: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@needs_chromium
def test_chromium_renders_tables_and_timelines_without_console_errors(report, tmp_path):
    _, output = report
    # the URL names a task: the page opens its timeline (rendered by the inline script from its template)
    done = chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", output.as_uri() + "#task-2"],
                    tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert 'data-ready="1"' in dom  # the inline script ran to its end
    opened = dom[dom.index('id="task-2"'):]
    opened = opened[:opened.index("</details>")]
    assert 'data-id="calc-sum"' in opened and 'open="" data-rendered="1"' in opened
    rendered = opened[opened.index("</template>"):]  # what the page shows, outside the inert template
    assert rendered.count('<li class="step') == 4 and "Typing the formula." in rendered
    assert 'loading="lazy"' in rendered and "<video controls" in rendered
    assert dom.count('data-rendered="1"') == 1  # the other timelines stay unrendered until opened
    assert "5 of 5 tasks shown" in dom
    assert '<table class="summary">' in dom and "<td>libreoffice_calc</td>" in dom and "<td>Office</td>" in dom
    # The leaderboard's score (the error as 0) and its interval first, the errors beside it, then without errors.
    assert "<td>Overall</td><td>5</td><td>5</td><td>50.0%</td><td>10.0%–90.0%</td><td>1</td><td>62.5%</td>" in dom
    assert dom.count('<svg class="chart"') == 4
    assert "score by domain (errors as 0, 95% CI)" in dom and "steps per task" in dom
    assert dom.count('<g class="whisker">') > 0  # each interval drawn over its bar
    assert 'id="task-table"' in dom and dom.count('<tr data-task="1"') == 5
    assert "Typing the formula." in dom and "=SUM(A1:A3)" in dom
    assert "ModelAPIError" in dom and "<summary>traceback</summary>" in dom
    assert "<dt>rescore</dt><dd>1.0 (was 0.0) at 2026-02-01T00:00:00</dd>" in dom
    assert '<td>0 <span class="rescored" title="rescored at 2026-02-01T00:00:00">→ 1</span></td>' in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<script>alert(1)" not in dom
    assert console_lines(done.stderr) == []


@needs_chromium
def test_chromium_screenshot_is_a_real_page(report, tmp_path):
    _, output = report
    shot = tmp_path / "page.png"
    done = chromium(["--hide-scrollbars", "--window-size=1280,1600", f"--screenshot={shot}", output.as_uri()],
                    tmp_path / "profile")
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1280, 1600)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50  # text, tables, bars: not a blank page
    assert max(count for count, _ in colours) < 0.95 * 1280 * 1600


class DevTools:
    """Just enough of the Chrome DevTools protocol: commands, and the events seen meanwhile."""

    def __init__(self, profile: Path):
        self.process = subprocess.Popen([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                         "--remote-debugging-port=0", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                pytest.fail("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        while True:
            pages = [t for t in requests.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
                     if t["type"] == "page"]
            if pages or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        pytest.fail(f"no {method} event")

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def close(self) -> None:
        if getattr(self, "ws", None):
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@needs_chromium
def test_filters_links_and_media_work_in_chromium(report, tmp_path):
    _, output = report
    tools = DevTools(tmp_path / "profile")
    try:
        for domain in ("Runtime", "Log", "Page"):
            tools.call(f"{domain}.enable")
        tools.call("Page.navigate", url=output.as_uri())
        tools.wait_event("Page.loadEventFired")
        assert tools.js("document.body.getAttribute('data-ready')") == "1"

        def choose(select_id: str, value: str) -> int:
            return tools.js(f"""(() => {{ const s = document.getElementById('{select_id}');
                s.value = {json.dumps(value)};
                s.dispatchEvent(new Event('change')); return document.querySelectorAll(
                '#task-table tr[data-task]:not([hidden])').length; }})()""")

        assert choose("f-outcome", "error") == 1
        assert tools.js("document.querySelector('#task-table tr[data-task]:not([hidden])').dataset.id") == "os-error"
        assert tools.js("document.querySelectorAll('details.task:not([hidden])').length") == 1
        assert choose("f-outcome", "fail") == 1
        assert choose("f-outcome", "") == 5
        assert choose("f-domain", "libreoffice_calc") == 2
        assert tools.js("document.getElementById('f-count').textContent") == "2 of 5 tasks shown"
        assert choose("f-domain", "") == 5
        # a task-list link opens that task's timeline
        tools.js("document.querySelector('#task-table a[href]').click()")
        time.sleep(0.3)
        assert tools.js("document.querySelectorAll('details.task[open]').length") == 1
        # every screenshot and the recording load from their relative links
        tools.js("document.getElementById('expand-shown').click()")
        loaded = tools.js("""(async () => {
            const images = Array.from(document.querySelectorAll('details.task img'));
            for (const img of images) { img.scrollIntoView(); await new Promise(r => setTimeout(r, 20)); }
            const deadline = Date.now() + 15000;
            while (Date.now() < deadline && !images.every(i => i.complete)) {
                await new Promise(r => setTimeout(r, 100));
            }
            return images.map(i => i.naturalWidth);
        })()""")
        assert len(loaded) == 5 + 8 and all(w == 320 for w in loaded), loaded  # 5 starts + 8 steps
        video = tools.js("""(async () => {
            const v = document.querySelector('video'); v.preload = 'metadata'; v.load();
            const deadline = Date.now() + 15000;
            while (Date.now() < deadline && v.readyState < 1 && !v.error) {
                await new Promise(r => setTimeout(r, 100));
            }
            return [v.videoWidth, v.videoHeight, v.error && v.error.code];
        })()""")
        assert video == [64, 48, None]
        # escaped, not executed: the hostile response is text on the page
        assert HOSTILE in tools.js("document.body.innerText")
        assert tools.js("document.querySelectorAll('script').length") == 1
        tools.js("document.getElementById('collapse-all').click()")
        assert tools.js("document.querySelectorAll('details.task[open]').length") == 0
        problems = [e for e in tools.events
                    if e.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown")
                    or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))]
        assert problems == []
    finally:
        tools.close()


@needs_chromium
def test_osworld_results_without_status_json(tmp_path):
    run_dir = tmp_path / "results" / "pyautogui" / "screenshot" / "claude"
    write_task(run_dir, "os", "a", score=1.0, status=None, steps=[{"response": "x", "action": "DONE"}])
    write_task(run_dir, "os", "b", score=0.0, status=None, steps=[{"response": "y", "action": "FAIL"}])
    output = build_report([tmp_path / "results"], tmp_path / "report.html")
    done = chromium(["--dump-dom", output.as_uri()], tmp_path / "profile")
    assert done.returncode == 0
    assert "<td>Overall</td><td>2</td><td>2</td><td>50.0%</td>" in done.stdout
    assert 'data-outcome="fail" data-id="b"' in done.stdout and "2 of 2 tasks shown" in done.stdout


@needs_chromium
def test_two_runs_are_compared_and_filtered_by_run(tmp_path):
    results = tmp_path / "results"
    for model, score in (("model-a", 1.0), ("model-b", 0.0)):
        write_task(results / "pyautogui" / "screenshot" / model, "os", "same-task", score=score,
                   steps=[{"response": model, "action": "DONE"}])
    output = build_report([results], tmp_path / "report.html")
    tools = DevTools(tmp_path / "profile")
    try:
        tools.call("Page.enable")
        tools.call("Page.navigate", url=output.as_uri())
        tools.wait_event("Page.loadEventFired")
        assert tools.js("document.querySelectorAll('section.run').length") == 2
        header = tools.js("Array.from(document.querySelectorAll('table.comparison th')).map(t => t.textContent)")
        assert header == ["group", "pyautogui/screenshot/model-a", "pyautogui/screenshot/model-b"]
        assert tools.js("document.querySelector('table.comparison tbody tr:last-child').innerText").split("\t") == [
            "Overall", "100.0% [20.7%–100.0%] (1)", "0.0% [0.0%–79.3%] (1)"]
        # Paired by task: one task tells the runs apart, which an exact McNemar test cannot call a difference.
        assert tools.js("document.querySelector('table.paired tbody tr:last-child').innerText").split("\t") == [
            "Overall", "1", "100.0%", "0.0%", "+100.0", "-12.2 to +100.0", "1", "no significant difference"]
        shown = tools.js("""(() => { const s = document.getElementById('f-run');
            s.value = 'pyautogui/screenshot/model-b'; s.dispatchEvent(new Event('change'));
            return Array.from(document.querySelectorAll('#task-table tr[data-task]:not([hidden]) td'))
                .map(td => td.textContent); })()""")
        assert shown[:5] == ["pyautogui/screenshot/model-b", "os", "same-task", "fail", "0"]
    finally:
        tools.close()
