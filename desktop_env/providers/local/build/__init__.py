"""What the local desktop builds once and every boot mounts: the env server's venv and code, the desktop's view and
fonts, the home template, the /etc view, and the VM's apps set aside (prepare.py has the one list)."""
