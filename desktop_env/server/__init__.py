"""The env server: runs inside the desktop and speaks PROTOCOL.md (beside this file) over HTTP.

Only the standard library, Debian's python3-xlib / python3-pil / python3-pyatspi and
pyautogui (from the server's venv) may be imported here.
"""
