# The README's two commands. Both install what they need first (idempotent).
PYTHON ?= python3
VENV ?= .venv
PYTEST_ARGS ?=
# How many desktop tests run at once, each with its desktop (a few tests run two). 3 on 2 cores: the desktop tests
# are CPU-bound but wait too (reference solutions' pauses, kill windows, settling screens); on 2 workers both cores
# were busy 83% of `make test`, on 3 95%, and the tier took 1101 s instead of 1234 s (docs/MEASURED.md).
DESKTOP_WORKERS ?= 3

.PHONY: install test test-fast lint gates demo fidelity

install:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh

# The lint gates and the tests; all of them run, and any failure fails the target. The desktop tests run on
# DESKTOP_WORKERS workers and take the time (about 18 minutes on this 2-core machine, from a clean clone too;
# 22 and more in hours when the machine itself runs slower, docs/MEASURED.md); beside them, from the start, the gates and then the
# tests that start no desktop, on 2 workers of their own (these mostly wait: alone they took 98 s on 4 workers;
# beside the desktops they use what CPU the desktops leave idle). Their output is kept in
# results/no-desktop-tier.log and printed after the desktop tests'. worksteal: a worker that runs out of tests
# takes pending ones from another (with the default `load`, one worker sat idle for the last 25 minutes while
# the other ran the desktop tests queued to it). pytest exits 5 when it collects nothing; that is not a
# failure of the code.
test: install
	mkdir -p results; \
	( rc=0; $(MAKE) --no-print-directory gates || rc=1; \
	  PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -n 2 --dist worksteal -m "not desktop" --durations=25 \
	    --slowest-report=results/slowest-no-desktop.md $(PYTEST_ARGS); prc=$$?; [ $$prc -eq 5 ] && prc=0; \
	  [ $$prc -ne 0 ] && rc=$$prc; exit $$rc ) > results/no-desktop-tier.log 2>&1 & side=$$!; \
	trap 'pkill -TERM -P $$side; kill $$side 2>/dev/null' INT TERM; \
	rc=0; PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -n $(DESKTOP_WORKERS) --dist worksteal -m desktop --durations=25 \
	  --slowest-report=results/slowest.md $(PYTEST_ARGS); prc=$$?; [ $$prc -eq 5 ] && prc=0; \
	[ $$prc -ne 0 ] && rc=$$prc; \
	wait $$side; src=$$?; echo "===== the gates and the tests that start no desktop (results/no-desktop-tier.log) ====="; \
	cat results/no-desktop-tier.log; [ $$src -ne 0 ] && rc=$$src; exit $$rc

# The edit loop's tier: the tests that start no desktop (`desktop`) and cost no seconds each (`slow`: the tests
# of files LibreOffice saved, each module starting it, and the plugin tests that pip-install a package).
# `make test` runs these and all the rest. 4 workers on 2 cores: these tests mostly wait (on the servers, model API
# stand-ins and programs they start), and 4 took 125 s where 2 took 183 s, same tree, one after the other (docs/MEASURED.md).
# Each run keeps its slowest tests and files in results/ (tests/slowest.py); --durations only prints them.
# Byte code is written even where PYTHONDONTWRITEBYTECODE is set: without it each worker compiles the
# project and re-does pytest's assertion rewriting of every test module, about 8 s of CPU per worker per run.
test-fast: install
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -n 4 --dist worksteal -m "not desktop and not slow" --durations=10 \
	  --slowest-report=results/slowest-fast.md $(PYTEST_ARGS)

# ruff and mypy as configured in pyproject.toml; both run, and either's findings fail the target.
lint: install gates

gates:
	rc=0; $(VENV)/bin/ruff check . || rc=1; $(VENV)/bin/mypy || rc=1; exit $$rc

# The demo installs what its tasks need (no VS Code build tools, no test tools), runs, and says how long
# each took.
demo:
	@started=$$(date +%s); PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh --demo && $(VENV)/bin/osworld demo; \
	rc=$$?; echo "make demo took $$(( $$(date +%s) - started )) s in all"; exit $$rc

# OSWorld's network-free task files with the no-op agent: `make fidelity OSWORLD=~/OSWorld`.
OSWORLD ?=
FIDELITY_OUT ?= results/fidelity
fidelity: install
	@test -n "$(OSWORLD)" || { echo "usage: make fidelity OSWORLD=/path/to/OSWorld"; exit 2; }
	$(VENV)/bin/python scripts/fidelity_suite.py --osworld "$(OSWORLD)" --num-envs 2 --out $(FIDELITY_OUT)
