# One image for the three Dagster services of docker-compose.yml: the taxoforge code
# location (gRPC server, which also executes the runs), the webserver and the daemon.
FROM python:3.11-slim-bookworm

# WordNet 3.0 (the embedded default taxonomy) from Debian, as on a developer machine.
RUN apt-get update \
 && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index \
 && rm -rf /var/lib/apt/lists/*

ENV DAGSTER_HOME=/opt/dagster/dagster_home \
    TAXOFORGE_DATA_DIR=/opt/dagster/app/data \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /opt/dagster/app

# Dependencies first (cached while only the code changes).
COPY pyproject.toml setup.py README.md ./
COPY taxoforge/__init__.py taxoforge/__init__.py
RUN pip install --upgrade pip \
 && pip install '.[dagster]' \
 && pip uninstall -y taxoforge

# The code, installed editable so `-m pipelines.definitions` and the run workers import it.
COPY taxoforge taxoforge
COPY pipelines pipelines
COPY assets assets
COPY sql sql
RUN pip install --no-deps -e .

# The instance (PostgreSQL storage from DAGSTER_POSTGRES_* variables) and the workspace.
RUN mkdir -p "$DAGSTER_HOME" "$TAXOFORGE_DATA_DIR"
COPY deploy/dagster.yaml ${DAGSTER_HOME}/dagster.yaml
COPY workspace.yaml ./workspace.yaml

EXPOSE 3000 4000
# The default command serves the code location; docker-compose.yml sets the others.
CMD ["dagster", "api", "grpc", "-h", "0.0.0.0", "-p", "4000", "-m", "pipelines.definitions", "--location-name", "taxoforge"]
