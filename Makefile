# The set-up commands of the README: `make run`, `make test` and `make bench`. Each creates
# the venv and installs the pinned requirements on first use (and again when they change).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
# axe-core for the browser tests' accessibility check (tests/web/test_accessibility.py).
AXE := tests/web/node_modules/axe-core/axe.min.js
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test lint typecheck unit bench clean

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

# `make run DISPATCH=pubsub`: the Pub/Sub dispatcher (docs/pubsub.md); make hands the variable
# to run_local's environment.
run: $(STAMP)
	$(BIN)/python -m emulator.run_local

test: lint typecheck unit
test-fast: $(STAMP) ; $(BIN)/pytest -m "not emulator"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy .

unit: $(STAMP) $(CHROMIUM) $(AXE)
	$(BIN)/pytest

# The pinned axe-core of tests/web/package-lock.json, installed again when the lock changes
# (npm from Debian's package when the machine has none).
$(AXE): tests/web/package.json tests/web/package-lock.json
	command -v npm >/dev/null || $(SUDO) apt-get install -y --no-install-recommends npm \
		|| ($(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends npm)
	cd tests/web && npm ci --no-audit --no-fund
	touch $@

# The composer page's browser tests (tests/web/) drive Debian's chromium; installed when
# missing. Playwright's own browser download is never used (it needs the internet).
$(CHROMIUM):
	$(SUDO) apt-get install -y --no-install-recommends chromium \
		|| ($(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium)

# Not part of `test`: minutes of load against the emulator (README "Benchmark"). Flags go
# through BENCH_ARGS, e.g. `make bench BENCH_ARGS=--quick`.
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis tests/web/node_modules
