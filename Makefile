# The two commands of the README: `make demo` and `make test`. Both set up what they need on a
# fresh machine that has only Python: Debian packages when missing and apt-get is usable, then
# a virtualenv in .venv, installed from the lock files and from nothing else.
#   make demo  requirements/demo.lock (the library and Dagster) and WordNet 3.0 (Debian).
#   make test  requirements/test.lock (adds the test tools, the S3 server, Spark and a CPU build of
#              PyTorch) and PostgreSQL, Chromium, docker-compose, a JRE, pigz, npm and pdflatex (Debian).
#   make lock  re-resolves the lock files from pyproject.toml (after changing a requirement).
# The locks are hashed requirements files written by `uv pip compile --generate-hashes`; uv
# installs them (`uv pip sync`: exactly the pinned distributions, every hash checked, downloads
# and installs in parallel), then the project itself in editable mode with --no-deps and no build
# isolation (setuptools is pinned in the locks). Then it compiles the numba kernels once into their
# on-disk cache (python -m taxoforge.sources.kernels), so that no later call pays a compilation, and
# meanwhile builds METEOR's WordNet synonym table into $(VENV)/share/taxoforge (python -m
# taxoforge.scores.measures.meteor), so that no scoring call builds it: before `make test` and
# `make dev`; beside the demo for `make demo` (the demo's processes wait for the tree builder's
# kernels, under their lock, before they build a tree; the dump reader's, which the demo does not
# call, compile at the lowest priority, on what the demo leaves idle), `make` waiting for both.
# uv itself comes from requirements/tools.lock, installed by pip (the base Python's when it has
# one, else one put into .venv by ensurepip) into .venv/tools, outside the site-packages that uv
# syncs; .venv itself has no pip.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
TOOLS   = $(VENV)/tools
UV      = $(TOOLS)/bin/uv
LOCKS   = requirements
DEMO_STAMP = $(VENV)/.installed-demo
TEST_STAMP = $(VENV)/.installed-test
BUILT_STAMP = $(VENV)/.built-kernels-meteor
# uv reads no pip configuration: hand it pip's find-links (where a machine keeps wheels such as
# the CPU build of PyTorch that test.lock pins) when pip has some.
FIND_LINKS ?= $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null)
UV_SYNC = $(UV) pip sync --python $(PY) --require-hashes $(foreach d,$(FIND_LINKS),--find-links $(d))
UV_SELF = $(UV) pip install --python $(PY) --no-deps --no-build-isolation -e .
DEV_PORT ?= 3000
STEP    = @printf '[make %s] %s\n' "$$(date +%T)"

.PHONY: demo test dev bench lock system-deps clean

$(VENV)/bin/python:
	$(STEP) "venv: $(VENV)"
	$(PYTHON) -m venv --without-pip $(VENV)

$(TOOLS)/bin/uv: $(LOCKS)/tools.lock | $(VENV)/bin/python
	$(STEP) "uv: $(LOCKS)/tools.lock into $(TOOLS)"
	if $(PYTHON) -m pip --version >/dev/null 2>&1; then pip=$(PYTHON); \
		else $(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip -q; pip=$(PY); fi; \
	$$pip -m pip install -q --disable-pip-version-check --no-deps --require-hashes --upgrade --target $(TOOLS) \
		-r $(LOCKS)/tools.lock

$(DEMO_STAMP): $(LOCKS)/demo.lock pyproject.toml | $(TOOLS)/bin/uv
	$(STEP) "apt: WordNet 3.0 when missing"
	bash scripts/install-system-deps.sh demo
	$(STEP) "pip: $(LOCKS)/demo.lock"
	$(UV_SYNC) -q $(LOCKS)/demo.lock
	$(UV_SELF) -q
	rm -f $(TEST_STAMP) $(BUILT_STAMP)
	touch $(DEMO_STAMP)
	$(STEP) "installed"

$(BUILT_STAMP): $(DEMO_STAMP)
	$(STEP) "numba: every compiled kernel, once, into its on-disk cache; METEOR's synonym table into $(VENV)/share, at once (no later call compiles or builds them)"
	$(PY) -m taxoforge.scores.measures.meteor & meteor=$$!; $(PY) -m taxoforge.sources.kernels; kernels=$$?; \
		wait $$meteor && test $$kernels = 0
	touch $(BUILT_STAMP)

$(TEST_STAMP): $(LOCKS)/test.lock pyproject.toml $(DEMO_STAMP)
	$(STEP) "apt: the test-only Debian packages when missing"
	bash scripts/install-system-deps.sh test
	$(STEP) "pip: $(LOCKS)/test.lock"
	$(UV_SYNC) -q $(LOCKS)/test.lock
	$(UV_SELF) -q
	touch $(TEST_STAMP)
	$(STEP) "installed"

system-deps:
	bash scripts/install-system-deps.sh test

## Materialise the embedded default (WordNet, ImageNet, iNaturalist, example scores) offline.
## Without $(BUILT_STAMP): the kernels and METEOR's table are built beside the demo (top of
## this file), their lines printed after the demo's. Priorities: the tree builder's kernels, which
## the demo's processes wait for, first; METEOR's table (nice 10), which only the example's scoring
## opens, some 20 s later; the dump reader's (nice 19) last.
BESIDE_DEMO = nice -n 10 $(PY) -m taxoforge.scores.measures.meteor & meteor=$$!; \
	nice -n 19 $(PY) -m taxoforge.sources.kernels dump & dump=$$!; \
	$(PY) -m taxoforge.sources.kernels trees; trees=$$?; \
	wait $$meteor && wait $$dump && test $$trees = 0
demo: $(DEMO_STAMP)
	$(STEP) "demo"
	if test -e $(BUILT_STAMP); then $(PY) -m pipelines.demo; else \
		( $(BESIDE_DEMO) ) >$(VENV)/.built-beside-demo.log 2>&1 & built=$$!; \
		$(PY) -m pipelines.demo; demo=$$?; \
		wait $$built && touch $(BUILT_STAMP); built=$$?; cat $(VENV)/.built-beside-demo.log; \
		test $$demo = 0 && test $$built = 0; fi
	$(STEP) "done"

## Run the test suite.
test: $(TEST_STAMP) $(BUILT_STAMP)
	$(PY) -m pytest -q

## Open the lineage in the Dagster UI (http://127.0.0.1:3000; another port: DEV_PORT=…). No -m:
## the code location is pyproject.toml's [tool.dagster], so the UI names it `taxoforge`, as the
## deployment does.
## Declarative automation runs (TAXOFORGE_AUTOMATION=running unless set otherwise): sources are
## observed daily and what follows them is rebuilt. `exec`: make's child is `dagster dev` itself,
## so a SIGTERM to make (which make passes on to its child) reaches it, and it stops the
## webserver, the daemon and the code server it started, as Ctrl-C does.
dev: $(DEMO_STAMP) $(BUILT_STAMP)
	DAGSTER_HOME=$${DAGSTER_HOME:-$(CURDIR)/.dagster_home} ; mkdir -p $$DAGSTER_HOME ; \
	DAGSTER_HOME=$$DAGSTER_HOME TAXOFORGE_AUTOMATION=$${TAXOFORGE_AUTOMATION:-running} \
		exec $(VENV)/bin/dagster dev -h 127.0.0.1 -p $(DEV_PORT)

## Run the benchmarks (BENCH_SIZE=small|full).
bench: $(TEST_STAMP) $(BUILT_STAMP)
	$(PY) -m benchmarks.run --size $${BENCH_SIZE:-full}

## Re-resolve the lock files from pyproject.toml (after changing a requirement there): uv's
## `uv pip compile --generate-hashes`, for this venv's Python, against the package index and
## pip's find-links (what `make` installs from). test.lock for every extra `make test` installs;
## demo.lock starts from test.lock's pins (uv keeps the pins already in its output file), so it
## is their subset; tools.lock pins uv. requirements/build.in mirrors [build-system] requires.
UV_COMPILE = $(UV) pip compile -q --generate-hashes --python $(PY) --custom-compile-command "make lock" \
	--no-emit-find-links $(foreach d,$(FIND_LINKS),--find-links $(d))
LOCK_PROJECT = $(UV_COMPILE) --constraint $(LOCKS)/lock-constraints.txt
lock: | $(TOOLS)/bin/uv
	$(STEP) "lock: $(LOCKS)/test.lock"
	$(LOCK_PROJECT) --extra dagster --extra dev --extra embeddings --extra s3 --extra spark \
		-o $(LOCKS)/test.lock pyproject.toml $(LOCKS)/build.in
	$(STEP) "lock: $(LOCKS)/demo.lock"
	cp $(LOCKS)/test.lock $(LOCKS)/demo.lock
	$(LOCK_PROJECT) --extra dagster -o $(LOCKS)/demo.lock pyproject.toml $(LOCKS)/build.in
	$(STEP) "lock: $(LOCKS)/tools.lock"
	$(UV_COMPILE) -o $(LOCKS)/tools.lock $(LOCKS)/tools.in

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
