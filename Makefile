# The two commands of the README: `make demo` and `make test`. Both set up everything
# themselves on a fresh machine that has only Python: Debian packages (WordNet 3.0,
# PostgreSQL) when missing and apt-get is usable, then a virtualenv in .venv.
VENV   ?= .venv
PYTHON ?= python3
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed
# The torch build the embeddings extra runs on, installed before it so pip does not pull the
# CUDA build: CPU by default (CI); `make TORCH=torch` for the CUDA build on a GPU machine.
TORCH  ?= torch==2.13.0+cpu

.PHONY: demo test dev bench system-deps clean

$(STAMP): pyproject.toml
	bash scripts/install-system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q '$(TORCH)'
	$(VENV)/bin/pip install -q -e '.[dagster,dev,s3,spark,embeddings]'
	touch $(STAMP)

system-deps:
	bash scripts/install-system-deps.sh

## Materialise the embedded default (WordNet, ImageNet, iNaturalist, example scores) offline.
demo: $(STAMP)
	$(PY) -m pipelines.demo

## Run the test suite.
test: $(STAMP)
	$(PY) -m pytest -q

## Open the lineage in the Dagster UI (http://127.0.0.1:3000).
dev: $(STAMP)
	DAGSTER_HOME=$${DAGSTER_HOME:-$(CURDIR)/.dagster_home} ; mkdir -p $$DAGSTER_HOME ; \
	DAGSTER_HOME=$$DAGSTER_HOME $(VENV)/bin/dagster dev -m pipelines.definitions -h 127.0.0.1 -p 3000

## Run the benchmarks (BENCH_SIZE=small|full).
bench: $(STAMP)
	$(PY) -m benchmarks.run --size $${BENCH_SIZE:-full}

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
