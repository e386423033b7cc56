"""The view's page: the desktop by noVNC, and for a person's task its instruction over a bar of
Done / Infeasible / Give up. One script for every desktop (served at /live/view.js); the page names its
desktop, and learns the task from /view/<name>/state."""
from __future__ import annotations

import html

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>osworld: desktop {name}</title>
<style>
html, body {{ margin: 0; height: 100%; background: #222; color: #eee; font: 15px sans-serif; }}
body {{ display: flex; flex-direction: column; }}
#bar {{ display: flex; gap: 12px; align-items: center; padding: 8px 12px; background: #333; }}
#instruction {{ flex: 1; }}
#answers {{ display: none; gap: 8px; }}
#answers.human {{ display: flex; }}
button {{ font-size: 15px; padding: 6px 14px; }}
#screen {{ flex: 1; min-height: 0; }}
</style></head>
<body data-name="{name}">
<div id="bar"><span id="status">connecting</span><span id="instruction"></span>
<span id="answers"><button id="done">Done</button><button id="infeasible">Infeasible</button>
<button id="give-up">Give up</button></span><button id="full-screen">Full screen</button></div>
<div id="screen"></div>
<script type="module" src="/live/view.js"></script>
</body></html>
"""

VIEW_JS = """import RFB from '/novnc/core/rfb.js';

const base = '/view/' + document.body.dataset.name;
const screen = document.getElementById('screen');
const statusLine = document.getElementById('status');
let rfb = null;
let generation = -1;
let input = false;

function connect() {
  rfb = new RFB(screen, 'ws://' + location.host + base + '/rfb', {shared: true});
  rfb.viewOnly = !input;
  rfb.scaleViewport = true;
  rfb.addEventListener('connect', () => { statusLine.textContent = input ? 'your turn' : 'watching'; });
  rfb.addEventListener('disconnect', () => {
    rfb = null;
    statusLine.textContent = 'reconnecting';
    setTimeout(connect, 1000);
  });
}

async function poll() {
  try {
    const response = await fetch(base + '/state', {credentials: 'same-origin', cache: 'no-store'});
    if (response.ok) {
      const state = await response.json();
      document.getElementById('instruction').textContent = state.task_id ? state.instruction : 'waiting for a task';
      document.getElementById('answers').className = state.input && !state.answer ? 'human' : '';
      if (state.answer) statusLine.textContent = 'answered: ' + state.answer;
      input = state.input && !state.answer;
      if (rfb) rfb.viewOnly = !input;
      if (state.generation !== generation) {
        generation = state.generation;
        if (rfb) rfb.disconnect(); else connect();
      }
    }
  } finally {
    setTimeout(poll, 1000);
  }
}

for (const answer of ['done', 'infeasible', 'give-up']) {
  document.getElementById(answer).addEventListener('click', async () => {
    await fetch(base + '/answer', {method: 'POST', credentials: 'same-origin',
                                   headers: {'Content-Type': 'application/json'},
                                   body: JSON.stringify({answer})});
  });
}
// In full screen the browser lets a page have the keys it keeps otherwise (Ctrl+W, Ctrl+T, ...).
document.getElementById('full-screen').addEventListener('click', async () => {
  await document.documentElement.requestFullscreen();
  if (navigator.keyboard && navigator.keyboard.lock) await navigator.keyboard.lock();
});
poll();
"""


def page_html(name: str) -> str:
    return PAGE.format(name=html.escape(name, quote=True))
