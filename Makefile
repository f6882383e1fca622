# The two commands the README opens with: `make serve` and `make test`.
# Each sets itself up on a fresh machine (virtualenv, dependencies, pinned agent CLIs).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8765

.PHONY: serve test lint typecheck unit realcli agents bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

serve: $(STAMP)
	$(BIN)/corral serve --host $(HOST) --port $(PORT)

agents: $(STAMP)
	$(BIN)/corral agents install

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python scripts/run_pytest.py tests -m "not realcli"

realcli: $(STAMP) agents
	$(BIN)/python scripts/run_pytest.py tests -m realcli

test: $(STAMP) lint typecheck agents
	$(BIN)/python scripts/run_pytest.py tests

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
