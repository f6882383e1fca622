# The two commands the README opens with: `make serve` and `make test`.
# Each sets itself up on a fresh machine (virtualenv, dependencies, pinned agent CLIs).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8765

.PHONY: serve test lint typecheck unit realcli agents browser screenshots bench clean

# compileall: an editable install has no bytecode until an import writes it, which
# PYTHONDONTWRITEBYTECODE forbids; every corral process would compile its modules again.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q src
	@touch $(STAMP)

serve: $(STAMP)
	$(BIN)/corral serve --host $(HOST) --port $(PORT)

agents: $(STAMP)
	$(BIN)/corral agents install

# Debian's chromium for the browser tests (tests/browser), installed only when missing.
browser:
	bash scripts/setup_browser.sh

# Re-make the web app's screenshots in docs/images/ (the browser tests take them).
screenshots: $(STAMP) agents browser
	CORRAL_SCREENSHOTS=1 $(BIN)/python -m pytest tests/browser -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: $(STAMP)
	$(BIN)/mypy

# Test files run in parallel on WORKERS processes (pytest-xdist; a file's tests stay together, so
# a module's fixtures are set up once). WORKERS=0 runs everything in this process.
WORKERS ?= 2
XDIST = $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile)

unit: $(STAMP) browser
	$(BIN)/python scripts/run_pytest.py tests -m "not realcli" $(XDIST)

realcli: $(STAMP) agents browser
	$(BIN)/python scripts/run_pytest.py tests -m realcli $(XDIST)

test: $(STAMP) lint typecheck agents browser
	$(BIN)/python scripts/run_pytest.py tests $(XDIST)

# The benchmarks' own extras (orjson, py-spy) on top of the dev install.
$(VENV)/.bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $@

bench: $(VENV)/.bench
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
