# The README's two commands. Both install what they need first (idempotent).
PYTHON ?= python3
VENV ?= .venv
PYTEST_ARGS ?=

.PHONY: install test lint demo fidelity

install:
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh

# pytest exits 5 when it collects nothing; that is not a failure of the code.
test: install
	$(VENV)/bin/python -m pytest -n 2 $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 5 ] && rc=0; exit $$rc

# ruff and mypy as configured in pyproject.toml; both run, and either's findings fail the target.
lint: install
	rc=0; $(VENV)/bin/ruff check . || rc=1; $(VENV)/bin/mypy || rc=1; exit $$rc

demo: install
	$(VENV)/bin/osworld demo

# OSWorld's network-free task files with the no-op agent: `make fidelity OSWORLD=~/OSWorld`.
OSWORLD ?=
FIDELITY_OUT ?= results/fidelity
fidelity: install
	@test -n "$(OSWORLD)" || { echo "usage: make fidelity OSWORLD=/path/to/OSWorld"; exit 2; }
	$(VENV)/bin/python scripts/fidelity_suite.py --osworld "$(OSWORLD)" --num-envs 2 --out $(FIDELITY_OUT)
