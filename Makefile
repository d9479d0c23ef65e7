# Quick start: `make run` (the main job) and `make test`. Both build .venv from pyproject.toml on first use.
# `make run PORT=9000 HOST=0.0.0.0` serves on another port or address; `DATA=data2` keeps its journals in another
# data directory (a second server needs its own: one directory serves one server at a time; it holds seat tokens,
# and .gitignore keeps data*/ out of git); `ADMIN_TOKEN_FILE=admin.token` gives it the organiser's admin token
# (run and run-cluster: a tournament with humans on it, docs/cluster.md).
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8765
DATA ?= data
ADMIN_TOKEN_FILE ?=
ADMIN := $(if $(ADMIN_TOKEN_FILE),--admin-token-file $(ADMIN_TOKEN_FILE))
# A data directory inside this checkout that git would offer to commit is told (git check-ignore: 1 = not ignored).
CHECK_DATA = @git check-ignore -q "$(DATA)/" 2>/dev/null; test $$? -ne 1 || \
	echo "make: note: $(DATA)/ holds seat tokens and is not git-ignored: call it data-NAME (.gitignore has data*/)"
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The web client (clients/web): npm ci when node_modules is missing or the lockfile changed, a build when
# its sources changed (the stamp), served by the server from clients/web/dist at /.
WEB := clients/web
WEB_DEPS := $(WEB)/node_modules/.package-lock.json
WEB_STAMP := $(WEB)/.stamp-build
WEB_SRC := $(shell find $(WEB)/src -type f 2>/dev/null) $(WEB)/index.html $(WEB)/replay.html $(WEB)/vite.config.js \
	$(WEB)/tsconfig.json \
	$(WEB)/package.json
CHROMIUM := /usr/bin/chromium
REDIS_SERVER := /usr/bin/redis-server
REDIS_PORT ?= 6379
WORKERS ?= 2

.PHONY: run run-cluster test check faults bench clean web chromium redis screenshots wheel

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(WEB_DEPS): $(WEB)/package-lock.json $(WEB)/package.json
	@command -v npm >/dev/null || { echo "the web client needs Node 20+ and npm"; exit 1; }
	cd $(WEB) && npm ci --no-audit --no-fund
	touch $@

$(WEB_STAMP): $(WEB_SRC) $(WEB_DEPS)
	cd $(WEB) && npm run build
	touch $@

web: $(WEB_STAMP)

# The browser tests drive Debian's Chromium; make test (run as root, as in CI) installs it when missing.
chromium:
	@test -x $(CHROMIUM) || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# The cluster's tests (tests/cluster) start Debian's redis-server; make test installs it when missing.
redis:
	@test -x $(REDIS_SERVER) || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }

run: $(STAMP) $(WEB_STAMP)
	$(CHECK_DATA)
	$(BIN)/parsimonia serve --host $(HOST) --port $(PORT) --data $(DATA) $(ADMIN)

# A cluster on this machine (docs/cluster.md): a local redis-server that saves nothing, stopped with the
# cluster, and WORKERS workers on PORT (their own ports follow it).
run-cluster: $(STAMP) $(WEB_STAMP) redis
	$(CHECK_DATA)
	$(REDIS_SERVER) --port $(REDIS_PORT) --bind 127.0.0.1 --save '' --appendonly no --loglevel warning & \
	trap "kill $$! 2>/dev/null" EXIT; \
	$(BIN)/parsimonia serve --host $(HOST) --port $(PORT) --data $(DATA) --workers $(WORKERS) \
		--redis redis://127.0.0.1:$(REDIS_PORT)/0 $(ADMIN)

test: $(STAMP) $(WEB_STAMP) chromium redis
	cd $(WEB) && npm test
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=20

# The pure tier: the protocol, the rules, the core (sans-IO) and the checks of types and layers, no socket and
# no browser; make test runs everything.
check: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 tests/protocol tests/games tests/server/core tests/test_types.py tests/test_layout.py

# The whole fault campaign (docs/reliability.md); make test runs a slice of it. Then the coverage-guided
# fuzzer (atheris, the faults extra) over the codec and message parsing, ATHERIS_RUNS inputs.
ATHERIS_RUNS ?= 2000000
faults: $(STAMP)
	PARSIMONIA_FAULTS=full $(BIN)/python -m pytest tests/faults
	$(BIN)/python -m pip install --quiet -e '.[test,faults]'
	$(BIN)/python tests/faults/atheris_codec.py -runs=$(ATHERIS_RUNS) -seed=1

# Redraw docs/screenshots/*.png from the browser tests.
screenshots: $(STAMP) $(WEB_STAMP) chromium
	PARSIMONIA_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest tests/web/test_browser.py \
		tests/web/test_replay.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/parsimonia bench --quick

# The wheel, with the built page in it (setup.py refuses one without): pip install it anywhere, no Node needed.
wheel: $(STAMP) $(WEB_STAMP)
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation -w build/wheel .
	@ls build/wheel/parsimonia-*.whl

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis $(WEB)/node_modules $(WEB)/dist $(WEB_STAMP) bench/colyseus/node_modules
