# hami-sim: the README's commands. `make demo` starts everything; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
export PYTHONPATH := $(CURDIR)

.PHONY: install demo test test-fast test-sqlite lint bench browser-deps screenshots clean protos ca-config nginx-config

$(STAMP): requirements-engine.txt requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# The demo needs the runtime packages only (requirements.txt), not the test and lint tools.
RUNTIME_STAMP := $(VENV)/.runtime-installed
$(RUNTIME_STAMP): requirements-engine.txt requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing runtime packages (requirements.txt) into $(VENV) ..."
	$(PIP) install --progress-bar on --upgrade pip
	$(PIP) install --progress-bar on -r requirements.txt
	touch $(RUNTIME_STAMP)

## Start web, Celery worker and beat on SQLite + the embedded broker, with demo data.
demo: $(RUNTIME_STAMP)
	$(PY) -m hami_sim.server.demo

## The whole test suite: PostgreSQL (DATABASE_URL) when available, plus the API tests on SQLite.
test: $(STAMP)
	bash scripts/test.sh

## The quick lane: engine + API tests on SQLite; no browser, no servers or worker subprocesses.
test-fast: $(STAMP)
	DATABASE_URL="sqlite:///$(CURDIR)/var/test-fast.db" $(PY) -m pytest -m "(engine or api) and not slow and not browser" tests

## The API tests on SQLite alone (the second half of `make test`).
test-sqlite: $(STAMP)
	DATABASE_URL="sqlite:///$(CURDIR)/var/test-sqlite.db" $(PY) -m pytest -m api tests

## What the browser tests and `make screenshots` need: the Playwright package (pinned in
## requirements-dev.txt; it drives the machine's Chromium and downloads no browser) and Chromium itself.
CHROMIUM ?= /usr/bin/chromium
browser-deps: $(RUNTIME_STAMP)
	$(PIP) install -q "$$(grep -oE '^playwright==[^ ]+' requirements-dev.txt)"
	@test -x "$(CHROMIUM)" || { echo "no Chromium at $(CHROMIUM): apt-get install -y chromium (or CHROMIUM=/path/to/chromium)" >&2; exit 1; }

## Screenshots of a running demo: `DEMO_PORT=8001 make screenshots` writes them to var/screenshots/
## (ignored by git); SCREENSHOTS_DIR=docs/img replaces the README's own, when that is the point.
SCREENSHOTS_DIR ?= var/screenshots
screenshots: browser-deps
	CHROMIUM="$(CHROMIUM)" $(PY) scripts/screenshots.py --out "$(SCREENSHOTS_DIR)"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy hami_sim/engine
	$(VENV)/bin/lint-imports
	$(PY) scripts/limits.py
	bash scripts/engine_alone.sh

bench: $(STAMP)
	$(PY) bench/filter_bench.py
	$(PY) bench/estimate_bench.py
	$(PY) bench/expander_bench.py
	$(PY) bench/dra_bench.py
	$(PY) bench/upgrade_bench.py

## Regenerate the gRPC expander's Python modules from our own .proto files (committed).
PROTOS := simulations/grpcexpander/protos
protos: $(STAMP)
	$(PY) -m grpc_tools.protoc -I . --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)/k8s_core.proto $(PROTOS)/expander.proto
	rm -f $(PROTOS)/k8s_core_pb2_grpc.py

## Regenerate CA's --scheduler-config-file in deploy/cluster-autoscaler{,-extender}/ from the enabled
## vendors (HAMI settings; a test fails when the committed files are stale).
ca-config: $(RUNTIME_STAMP)
	$(PY) manage.py ca_config

## nginx's configuration of each listener (deploy/base/nginx/), written by hami_sim/server/nginx.py.
nginx-config: $(RUNTIME_STAMP)
	for listener in web extender; do \
	  PYTHONPATH=. $(PY) -m hami_sim.server.nginx $$listener > deploy/base/nginx/$$listener.conf; done

clean:
	rm -rf var tests/artifacts
