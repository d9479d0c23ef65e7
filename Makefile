# Quick start: `make run` (the main job) and `make test`. Both build .venv from pyproject.toml on first use.
# `make run PORT=9000 HOST=0.0.0.0` serves on another port or address.
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8765
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/parsimonia serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/parsimonia bench --quick

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
