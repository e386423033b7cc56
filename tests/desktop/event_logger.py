"""A small Tk app run inside the sandbox: a full-screen window that appends every
mouse and keyboard event it receives to a log file, one JSON object per line.
Tests drive it with real input and read the log back to see what arrived."""
import json
import sys
import tkinter as tk

log_path = sys.argv[1]
root = tk.Tk(className="eventlogger")
root.title("Event Logger")
root.attributes("-fullscreen", True)
text = tk.Text(root)  # a text widget so typed text is visible on screenshots too
text.pack(fill="both", expand=True)


def record(kind, event, **extra):
    with open(log_path, "a") as f:
        f.write(json.dumps({"kind": kind, "x": event.x_root, "y": event.y_root, **extra}) + "\n")


# X11 reports wheel clicks as buttons 4-7; Tk 8.6 turns the horizontal ones (6, 7)
# into Shift + 4/5, so the shift bit of the state tells the axis.
SCROLL_BUTTONS = {(4, 0): "up", (5, 0): "down", (4, 1): "left", (5, 1): "right"}


def press(event):
    if event.num in (4, 5):
        record("scroll", event, direction=SCROLL_BUTTONS[event.num, event.state & 1])
    else:
        record("down", event, button=event.num)


text.bind("<ButtonPress>", press)
text.bind("<ButtonRelease>", lambda e: e.num in (4, 5) or record("up", e, button=e.num))
text.bind("<Double-Button-1>", lambda e: record("double", e, button=1))
text.bind("<B1-Motion>", lambda e: record("drag", e))
text.bind("<KeyPress>", lambda e: record("keydown", e, keysym=e.keysym, char=e.char))
text.bind("<KeyRelease>", lambda e: record("keyup", e, keysym=e.keysym))


def ready():
    text.focus_force()
    with open(log_path, "a") as f:
        f.write(json.dumps({"kind": "ready"}) + "\n")


root.after(100, ready)
root.mainloop()
