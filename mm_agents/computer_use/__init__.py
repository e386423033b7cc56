"""Native computer-use agents: each vendor's own computer-use interface or text grammar, one wire
adapter each, behind one agent loop (agent.py) with one table of per-model settings (profiles.py)."""
