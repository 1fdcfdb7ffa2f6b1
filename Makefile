# Two set-up commands, both self-contained on a fresh machine with python3:
#   make demo   install into .venv, run the daemon (scripted models, no API key) and play the demo scenarios
#   make test   install into .venv (with the test extra, and Chromium for the
#               browser tests), type-check noemad/ and noemactl/ (mypy), and run the whole suite
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast typecheck docs bench units clean

# The install goes through uv (from PyPI, into the venv): it fetches and unpacks the ~150 packages of
# the test extra (Synapse, moto, Playwright...) in parallel, about a third of pip's time and CPU on 2
# cores. Bytecode is compiled at install, as pip does, so no process the tests start compiles a
# dependency anew. Where uv cannot be installed, pip does the same install.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	if $(VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv; then \
		$(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python --compile-bytecode -e '.[test]'; \
	else \
		$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'; \
	fi
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

# Every bench at its quick default (each under a minute on 2 cores; run one with --full for the
# long version), then one table of every figure against its goal (bench/summary.py). The benches
# report through bench/_report.py into BENCH_REPORT; a bench that fails is named and the rest run.
BENCHES ?= timeline ingest cli_status retrieval cycle gate consolidation reflection guard governance judge growth dashboard metrics asof export replica rooms
BENCH_REPORT ?= build/bench.jsonl

bench: $(STAMP)
	@mkdir -p $(dir $(BENCH_REPORT)) && rm -f $(BENCH_REPORT)
	@failed=""; for b in $(BENCHES); do \
		echo "== bench/$$b.py"; \
		NOEMA_BENCH_REPORT=$(BENCH_REPORT) $(VENV)/bin/python bench/$$b.py || failed="$$failed $$b"; \
	done; \
	$(VENV)/bin/python bench/summary.py $(BENCH_REPORT); \
	if [ -n "$$failed" ]; then echo "benches that failed:$$failed"; exit 1; fi

# systemd units for this machine in build/systemd (contrib/systemd/noemad.service.in):
# ExecStart= is the noemad on PATH, or NOEMAD=/path/to/noemad.
units:
	$(PYTHON) scripts/render_units.py $(if $(NOEMAD),--noemad $(NOEMAD))

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .mypy_cache
