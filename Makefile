# The two commands of the README: `make demo` and `make test`. Both set up what they need on a
# fresh machine that has only Python: Debian packages when missing and apt-get is usable, then
# a virtualenv in .venv.
#   make demo  installs only what the demo runs: the library, Dagster, WordNet 3.0.
#   make test  adds the test-only parts: PostgreSQL, Chromium, docker-compose, a JRE and pigz
#              (Debian); the S3 server, Spark, the test tools and a CPU build of PyTorch (pip).
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
DEMO_STAMP = $(VENV)/.installed-demo
TEST_STAMP = $(VENV)/.installed-test
# The torch build the embeddings extra runs on, installed before it so pip does not pull the
# CUDA build: CPU by default (CI); `make TORCH=torch` for the CUDA build on a GPU machine.
TORCH  ?= torch==2.13.0+cpu

.PHONY: demo test dev bench system-deps clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(VENV)/bin/python
	bash scripts/install-system-deps.sh demo
	$(VENV)/bin/pip install -q -e '.[dagster]'
	touch $(DEMO_STAMP)

$(TEST_STAMP): pyproject.toml $(DEMO_STAMP)
	bash scripts/install-system-deps.sh test
	$(VENV)/bin/pip install -q '$(TORCH)'
	$(VENV)/bin/pip install -q -e '.[dagster,dev,s3,spark,embeddings]'
	touch $(TEST_STAMP)

system-deps:
	bash scripts/install-system-deps.sh test

## Materialise the embedded default (WordNet, ImageNet, iNaturalist, example scores) offline.
demo: $(DEMO_STAMP)
	$(PY) -m pipelines.demo

## Run the test suite.
test: $(TEST_STAMP)
	$(PY) -m pytest -q

## Open the lineage in the Dagster UI (http://127.0.0.1:3000).
dev: $(DEMO_STAMP)
	DAGSTER_HOME=$${DAGSTER_HOME:-$(CURDIR)/.dagster_home} ; mkdir -p $$DAGSTER_HOME ; \
	DAGSTER_HOME=$$DAGSTER_HOME $(VENV)/bin/dagster dev -m pipelines.definitions -h 127.0.0.1 -p 3000

## Run the benchmarks (BENCH_SIZE=small|full).
bench: $(TEST_STAMP)
	$(PY) -m benchmarks.run --size $${BENCH_SIZE:-full}

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
