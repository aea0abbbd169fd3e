# LOCAL — the two README commands are `make run` and `make test`.
# Both build .venv/ from requirements.lock first (bytecode compiled at install time,
# because PYTHONDONTWRITEBYTECODE=1 here would otherwise make every cold start pay for it).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Operator settings: the environment wins over these defaults.
LOCAL_STORE_URL ?= sqlite:///$(CURDIR)/.run/local.sqlite3
LOCAL_TENANT_ID ?= local-dev
export LOCAL_STORE_URL LOCAL_TENANT_ID

.PHONY: venv run test bench demo user-data ingest-events events-status requests clean

venv: $(STAMP)

# Setup output goes to stderr so that stdout stays machine-readable (headless run, user-data).
$(STAMP): requirements.lock requirements-dev.lock pyproject.toml
	@echo "setting up $(VENV) from requirements.lock" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(VENV)/bin/pip install --quiet --no-input -r requirements.lock -r requirements-dev.lock >&2
	@$(VENV)/bin/pip install --quiet --no-input --no-deps -e . >&2
	@# site-packages holds a few py2-only files (aenum/_py2.py) that never import; skip them.
	@$(PY) -m compileall -q -j 0 -x '/_py2\.py$$' $(VENV)/lib shared functions tools >/dev/null
	@touch $(STAMP)

run: $(STAMP)
	@$(PY) -m tools.devserver

test: $(STAMP)
	$(PY) -m compileall -q shared functions tools >/dev/null
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m tools.bench

# The seeds' four-case table (baseline, after_commit, before_write, lookup_unavailable) replayed
# through the real functions, each with its own temporary store: make demo [OUT=DIR]
OUT ?= out/demo
demo: $(STAMP)
	@$(PY) -m tools.demo --out "$(OUT)"

# What LOCAL stores about one user: one JSON document on stdout, logs on stderr.
# make user-data LINE_USER_ID=U<32 hex>   (LOCAL_STORE_URL / LOCAL_TENANT_ID: environment wins)
user-data: $(STAMP)
	@$(PY) -m tools.user_data --user-id "$(LINE_USER_ID)"

# Events from TDX's tourism activities (issue 15): one JSON document on stdout, logs on stderr.
# make ingest-events FILE=path.json   loads a file in TDX's own response format (no network);
# make ingest-events                  fetches live (TDX_CLIENT_ID / TDX_CLIENT_SECRET).
FILE ?=
ingest-events: $(STAMP)
	@$(PY) -m tools.events ingest $(if $(FILE),--file "$(FILE)")

events-status: $(STAMP)
	@$(PY) -m tools.events status

# The open handoff requests, one JSON line each, by state then age (logs on stderr).
requests: $(STAMP)
	@$(PY) -m tools.open_requests

clean:
	rm -rf $(VENV) .run
