# Two set-up commands, both self-contained on a fresh machine with python3:
#   make demo   install into .venv, run the daemon (scripted models, no API key) and play the demo scenarios
#   make test   install into .venv (with the test extra, and Chromium for the
#               browser tests), type-check noemad/ and noemactl/ (mypy), and run the whole suite
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast typecheck docs bench units clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" ./scripts/demo.sh

# Two pytest workers per core (pytest-xdist, --dist worksteal from pyproject.toml): a test in the
# daemon tier spends much of its time waiting on a daemon or a noemactl process, so one per core
# leaves a core idle about a third of the time. Each test has its own home, engine or daemon, but
# cases that only read or are refused share one per module.
JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))

# The bytecode is compiled once before the suite: with PYTHONDONTWRITEBYTECODE set (as it may be
# in a CI environment) each noemad and noemactl the tests start would compile the sources anew.
test: $(STAMP)
	./scripts/ensure_chromium.sh
	$(VENV)/bin/python -m mypy
	$(VENV)/bin/python -m compileall -q noemad noemactl
	$(VENV)/bin/python -m pytest -q -n $(JOBS)

# mypy on noemad/ and noemactl/ with the pydantic plugin, at zero errors; which files and how strict
# each module is checked are in pyproject.toml's [tool.mypy].
typecheck: $(STAMP)
	$(VENV)/bin/python -m mypy

# The in-process tier alone, for the edit-test loop: each test that would start a real noemad or
# noemactl is skipped where it starts one (tests/conftest.py). Run `make test` before you commit.
test-fast: $(STAMP)
	$(VENV)/bin/python -m compileall -q noemad noemactl
	NOEMA_TESTS=fast $(VENV)/bin/python -m pytest -q -n $(JOBS)

docs: $(STAMP)
	$(VENV)/bin/python scripts/gendocs.py

bench: $(STAMP)
	$(VENV)/bin/python bench/timeline.py
	$(VENV)/bin/python bench/ingest.py
	$(VENV)/bin/python bench/cli_status.py
	$(VENV)/bin/python bench/retrieval.py
	$(VENV)/bin/python bench/cycle.py
	$(VENV)/bin/python bench/gate.py
	$(VENV)/bin/python bench/consolidation.py
	$(VENV)/bin/python bench/reflection.py
	$(VENV)/bin/python bench/guard.py
	$(VENV)/bin/python bench/governance.py
	$(VENV)/bin/python bench/judge.py
	$(VENV)/bin/python bench/growth.py
	$(VENV)/bin/python bench/dashboard.py
	$(VENV)/bin/python bench/rooms.py

# systemd units for this machine in build/systemd (contrib/systemd/noemad.service.in):
# ExecStart= is the noemad on PATH, or NOEMAD=/path/to/noemad.
units:
	$(PYTHON) scripts/render_units.py $(if $(NOEMAD),--noemad $(NOEMAD))

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .mypy_cache
