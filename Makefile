# LOCAL — the two README commands are `make run` and `make test`.
# Both build .venv/ from requirements.lock first (bytecode compiled at install time,
# because PYTHONDONTWRITEBYTECODE=1 here would otherwise make every cold start pay for it).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Operator settings: the environment wins over these defaults.
LOCAL_RUN_DIR ?= $(CURDIR)/.run
LOCAL_STORE_URL ?= sqlite:///$(LOCAL_RUN_DIR)/local.sqlite3
LOCAL_TENANT_ID ?= local-dev
export LOCAL_STORE_URL LOCAL_TENANT_ID

.PHONY: venv run test test-fast lint bench demo user-data ingest-events events-status ingest-places places-status requests eval replies clean checkov-venv bundle lock tasks-emulator-venv tool-venvs test-collect richmenu richmenu-font

venv: $(STAMP)

# The installer: uv (pinned and hashed in requirements-uv.lock, installed by pip in .venv-uv/) runs
# `uv pip install` from the same locks as pip would, with the same hash checking, in a few seconds
# instead of pip's minute. It never resolves anew: every lock is the whole pinned closure.
# Files are hard-linked from uv's cache (its default on Linux; it copies where the cache is on another
# file system): 0.6 s for the runtime lock instead of 2.4 s of copying. Nothing writes into an
# installed package's files, so the cache and the venvs cannot change each other.
UV_VENV := .venv-uv
UV := $(UV_VENV)/bin/uv
UV_INSTALL := UV_PYTHON_DOWNLOADS=never $(UV) pip install --quiet --no-progress
export UV_NO_CONFIG := 1

# pip installs the uv wheel into a plain folder (no venv to set up); a Python without pip gets a venv.
$(UV): requirements-uv.lock
	@echo "setting up $(UV_VENV) from requirements-uv.lock" >&2
	@rm -rf $(UV_VENV)
	@$(PYTHON) -m pip install --quiet --no-input --root-user-action=ignore --no-deps --target $(UV_VENV) \
		--require-hashes -r requirements-uv.lock >&2 \
	|| { $(PYTHON) -m venv $(UV_VENV) && $(UV_VENV)/bin/pip install --quiet --no-input --require-hashes \
		-r requirements-uv.lock; } >&2
	@touch $@

# Setup output goes to stderr so that stdout stays machine-readable (headless run, user-data).
# Two steps: the locks' packages ($(LOCKS_STAMP)), then the project itself ($(STAMP)), so that
# `make test` can write pytest's rewrite cache (test-collect) while the project installs.
LOCKS_STAMP := $(VENV)/.locks-installed
$(LOCKS_STAMP): requirements.lock requirements-dev.lock $(UV)
	@echo "setting up $(VENV) from requirements.lock" >&2
	@UV_PYTHON_DOWNLOADS=never $(UV) venv --quiet --clear --seed --python $(PYTHON) $(VENV) >&2
	@# Two installs: the runtime lock is hashed (hash-checking mode), the dev lock is not.
	@$(UV_INSTALL) --python $(PY) --compile-bytecode --require-hashes -r requirements.lock >&2
	@$(UV_INSTALL) --python $(PY) --compile-bytecode -r requirements-dev.lock >&2
	@touch $@

$(STAMP): $(LOCKS_STAMP) pyproject.toml
	@$(UV_INSTALL) --python $(PY) --no-deps -e . >&2
	@$(PY) -m compileall -q -j 0 shared functions tools >/dev/null
	@touch $(STAMP)

run: $(STAMP)
	@$(PY) -m tools.devserver

# Four pytest-xdist workers, each taking whole files (a file's fixtures and processes stay together):
# much of a test's time is spent waiting (stand-in latencies, leases, other processes), so four
# workers keep two cores busy. Files go out in collection order, costliest first (tests/conftest.py),
# not xdist's default of most tests first. TEST_WORKERS=0 runs in one process.
# Before the workers start: the locks' packages in .venv first (uv installs that overlap wait on
# each other's cache locks), then side by side the project itself, the tool venvs that some tests
# use (else built on first use, one worker waiting on each), and a pass that writes pytest's cache
# of rewritten test modules (tests/**/__pycache__/*-pytest-*.pyc). pytest writes that cache only
# where bytecode may be written, and this machine sets PYTHONDONTWRITEBYTECODE=1: without it each
# worker re-parses and rewrites every test module's asserts. tools/rewrite_cache.py writes it
# with pytest's own rewriter without importing the suite or its conftest.py (2 s on two cores, where a
# --collect-only pass took 10 s); its errors, if any, show in the real run.
# The tests' temporary files (each test's SQLite file, logs, the emulators' data) go to tmpfs
# (/dev/shm) where the machine has a writable one, else to TMPDIR: the store commits with
# synchronous=FULL, and on this machine's disk the suite's fsyncs alone cost about 10 s of the run.
# They are real SQLite files all the same (a killed process loses nothing on tmpfs either); what
# the disk costs is measured by `make bench`, which runs on TMPDIR.
TEST_WORKERS ?= 4
TEST_TMPDIR ?= $(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm || echo "$${TMPDIR:-/tmp}")
test:
	@$(MAKE) --no-print-directory $(LOCKS_STAMP)
	@$(MAKE) --no-print-directory -j4 $(STAMP) tool-venvs test-collect
	TMPDIR=$(TEST_TMPDIR) $(PY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# The unit tests alone (tests/unit: one unit each, in process, no servers or processes started, the
# in-memory store unless SQLite is the subject): the inner loop, under 30 s on this 2-core machine.
# `make test` runs them too, with everything else. FAST_WORKERS=0 runs them in one process.
FAST_WORKERS ?= 2
test-fast:
	@$(MAKE) --no-print-directory $(LOCKS_STAMP)
	@$(MAKE) --no-print-directory -j2 $(STAMP) test-collect
	TMPDIR=$(TEST_TMPDIR) $(PY) -m pytest tests/unit $(if $(filter 0,$(FAST_WORKERS)),,-n $(FAST_WORKERS))

test-collect: $(LOCKS_STAMP)
	@$(PY) -m compileall -q -j 0 tests >/dev/null & \
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q --noconftest -p tools.rewrite_cache >/dev/null 2>&1; \
	wait; true

# ruff (lint and import order) over the repo, mypy over shared/, the import contracts of shared/
# (import-linter: layers, adapters, entry points; settings in pyproject.toml), then the complexity
# check: no function in COMPLEXITY_PATHS over radon cc 15 (tools/complexity.py; a path is a folder or a file).
COMPLEXITY_PATHS = shared/turn shared/agent shared/staff/relay.py shared/handoff/reconcile_notify.py \
	tools/devserver.py tools/bench.py tools/chat.py shared/places
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --cache-dir .run/import-linter
	$(PY) -m tools.complexity $(COMPLEXITY_PATHS)

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

# Places: one JSON document on stdout, logs on stderr (docs/data.md, Places from lists and TDX).
# make ingest-places FILE=list.csv            an operator's curated list (.csv or .json; data/places-template.csv)
# make ingest-places TDX_FILE=restaurants.json a file in TDX's Restaurant response format (no network)
# make ingest-places                          TDX's restaurants live (TDX_CLIENT_ID / TDX_CLIENT_SECRET)
TDX_FILE ?=
ingest-places: $(STAMP)
	@$(PY) -m tools.places ingest $(if $(FILE),--file "$(FILE)",$(if $(TDX_FILE),--tdx-file "$(TDX_FILE)",--tdx))

places-status: $(STAMP)
	@$(PY) -m tools.places status

# The open handoff requests, one JSON line each, by state then age (logs on stderr).
requests: $(STAMP)
	@$(PY) -m tools.open_requests

# One deployable directory per function: dist/<function>/ with main.py, the shared/ modules and
# data/ files it reaches, and a hashed requirements.txt of its own dependencies (tools/bundle.py).
bundle: $(STAMP)
	@$(PY) -m tools.bundle --out dist

# The rich menu (tools/richmenu.py, shared/replies/richmenu.py): draw the image, then create, upload and
# make it the default at LINE_API_BASE_URL / LINE_API_DATA_BASE_URL with LINE_CHANNEL_ACCESS_TOKEN, only
# when the same image and areas are not there already (docs/deploy.md, "The rich menu").
# RICHMENU_ARGS="image --out menu.png" only draws the image.
RICHMENU_ARGS ?=
richmenu: $(STAMP) richmenu-font
	@$(PY) -m tools.richmenu $(RICHMENU_ARGS)

# Debian's Noto Sans CJK (fonts-noto-cjk), installed by apt where missing and this is root (CI, Cloud
# Build's python image); otherwise a clear error naming the package.
RICHMENU_FONT := /usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc
richmenu-font:
	@test -f $(RICHMENU_FONT) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing fonts-noto-cjk (apt) for the rich menu" >&2; \
	    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fonts-noto-cjk >&2; \
	  fi; \
	  test -f $(RICHMENU_FONT) || { echo "richmenu: $(RICHMENU_FONT) is missing; install Debian's fonts-noto-cjk (sudo apt-get install fonts-noto-cjk)" >&2; exit 2; }; }

# Re-pin after editing requirements*.in (PyPI). The runtime lock carries hashes: bundles copy them.
PIP_COMPILE ?= pip-compile
lock:
	$(PIP_COMPILE) --generate-hashes --no-emit-index-url --no-emit-find-links --strip-extras --output-file=requirements.lock requirements.in
	$(PIP_COMPILE) --no-emit-index-url --no-emit-find-links --strip-extras --output-file=requirements-dev.lock requirements-dev.in
	$(PIP_COMPILE) --no-emit-index-url --no-emit-find-links --strip-extras --output-file=requirements-checkov.lock requirements-checkov.in
	$(PIP_COMPILE) --generate-hashes --no-emit-index-url --no-emit-find-links --strip-extras --output-file=requirements-tasks-emulator.lock requirements-tasks-emulator.in
	$(UV) pip compile --quiet --generate-hashes --universal --python-version 3.11 --output-file=requirements-uv.lock requirements-uv.in

# checkov (static checks of infra/) in its own tool venv from its own lock: its dependencies
# never enter the runtime or the dev lock. tests/deploy/test_infra.py builds it on first use.
# No --compile-bytecode here, unlike every other venv: checkov runs once per test run, and compiling
# its whole tree at install took 7 s of CPU, where compiling what that one run imports takes 2.4 s.
CHECKOV_VENV := .venv-checkov
checkov-venv: $(CHECKOV_VENV)/.installed

$(CHECKOV_VENV)/.installed: requirements-checkov.lock $(UV)
	@echo "setting up $(CHECKOV_VENV) from requirements-checkov.lock" >&2
	@$(PYTHON) -m venv --without-pip $(CHECKOV_VENV) >&2
	@$(UV_INSTALL) --python $(CHECKOV_VENV)/bin/python -r requirements-checkov.lock >&2
	@touch $@

# The Cloud Tasks emulator (gcloud-tasks-emulator from PyPI) for the tests, in its own tool venv:
# it pins protobuf<5, which the runtime lock does not allow (tests/contract/tasks_emulator.py).
# No --compile-bytecode: the tests start it without PYTHONDONTWRITEBYTECODE, so its first start
# caches the bytecode of just what it imports; compiling its whole tree here took 7 s of CPU.
TASKS_EMULATOR_VENV := .venv-tasks-emulator
tasks-emulator-venv: $(TASKS_EMULATOR_VENV)/.installed

$(TASKS_EMULATOR_VENV)/.installed: requirements-tasks-emulator.lock $(UV)
	@echo "setting up $(TASKS_EMULATOR_VENV) from requirements-tasks-emulator.lock" >&2
	@$(PYTHON) -m venv --without-pip $(TASKS_EMULATOR_VENV) >&2
	@# --no-deps: the lock is the whole closure; a resolver would otherwise re-resolve the
	@# google-api-core[grpc] extra against the emulator's protobuf<5 pin and refuse it.
	@$(UV_INSTALL) --python $(TASKS_EMULATOR_VENV)/bin/python --no-deps --require-hashes -r requirements-tasks-emulator.lock >&2
	@touch $@

tool-venvs: checkov-venv tasks-emulator-venv

# The cases tests/eval/cases/ through both readers (the offline router, and the model path fed each case's
# scripted call through the Gemini stand-in); writes docs/results/eval.md; exits 1 when a case fails.
# The real model only with a key and EVAL_ARGS="--readers live --approve-live".
eval: $(STAMP)
	@$(PY) -m tools.eval $(EVAL_ARGS)

# Three replies (a shop, an events and a forget answer) as a resident reads them, before (REPLIES_BEFORE,
# a commit) and after; writes docs/results/replies.md (tools/reply_samples.py).
REPLIES_BEFORE ?= 0f3912a
replies: $(STAMP)
	@$(PY) -m tools.reply_samples --before $(REPLIES_BEFORE)

# The chat page's flows (a search, a confirm card tapped twice, the staff group, a consent card, a location)
# in headless chromium against a make run of its own: one PNG each in out/screenshots/, and the README's
# three copied to docs/images/ (tools/chatpage/browser.py; needs apt's chromium, chromium-driver, fonts-noto-cjk).
.PHONY: screenshots
screenshots: $(STAMP)
	@$(PY) -m tools.chatpage.browser --out out/screenshots --docs docs/images

clean:
	rm -rf $(VENV) $(UV_VENV) $(CHECKOV_VENV) $(TASKS_EMULATOR_VENV) .run
