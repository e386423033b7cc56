"""A running desktop in the browser: a VNC server on the desktop's display (x11vnc, view-only), reached
from the host through the sandbox's forwarded-port socket, shown by noVNC in a page the harness serves on
the loopback with a per-desktop token (`server.py`); a person's keys, clicks and scrolls in that page
become pyautogui actions the harness carries out and records like an agent's (`human_input.py`, read off
the page's RFB stream by `rfb.py`). `desktop.py` starts the VNC server in a desktop and registers it."""
