# One image for the three Dagster services of docker-compose.yml: the taxoforge code
# location (gRPC server, which also executes the runs), the webserver and the daemon.
# It runs as an unprivileged user whose uid/gid are fixed at build time (build args
# TAXOFORGE_UID / TAXOFORGE_GID, default 10001): build with your own `id -u`/`id -g` so the
# files the runs write into a mounted data/ folder belong to you. The entry point refuses to
# start as root (uid 0: `docker run --user 0`, `user: root` in compose) and sets the umask
# the files are written with (TAXOFORGE_UMASK, default 0022).
FROM python:3.11-slim-bookworm

ARG TAXOFORGE_UID=10001
ARG TAXOFORGE_GID=10001

# WordNet 3.0 (the embedded default taxonomy) from Debian, as on a developer machine.
RUN apt-get update \
 && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index \
 && rm -rf /var/lib/apt/lists/*

# The service user: never root (uid 0 is refused), a fixed uid/gid, a home for caches
# (~/.cache/taxoforge: NLTK's WordNet copy, the SPARQL client's endpoint locks).
RUN if [ "$TAXOFORGE_UID" = 0 ] || [ "$TAXOFORGE_GID" = 0 ]; then \
      echo "TAXOFORGE_UID/TAXOFORGE_GID must not be 0: the services do not run as root" >&2; exit 1; fi \
 && (getent group "$TAXOFORGE_GID" >/dev/null || groupadd --gid "$TAXOFORGE_GID" taxoforge) \
 && useradd --uid "$TAXOFORGE_UID" --gid "$TAXOFORGE_GID" --non-unique --create-home \
      --home-dir /home/taxoforge --shell /usr/sbin/nologin taxoforge

ENV HOME=/home/taxoforge \
    DAGSTER_HOME=/opt/dagster/dagster_home \
    TAXOFORGE_DATA_DIR=/opt/dagster/app/data \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /opt/dagster/app

# Dependencies first (cached while only the code changes): the demo's lock file is the library
# and its `dagster` extra, every version pinned and every hash checked.
COPY requirements/demo.lock requirements/demo.lock
RUN pip install --no-deps --require-hashes -r requirements/demo.lock

# The code, installed editable so `-m pipelines.definitions` and the run workers import it
# (taxoforge/sql is a link to sql/; setuptools comes from the lock, hence no build isolation).
COPY pyproject.toml README.md ./
COPY taxoforge taxoforge
COPY pipelines pipelines
COPY assets assets
COPY sql sql
RUN pip install --no-deps --no-build-isolation -e .

# The instance (PostgreSQL storage from DAGSTER_POSTGRES_* variables) and the workspace.
# The code and the instance file stay root-owned (read-only to the services); the folders
# the services write — $DAGSTER_HOME (compute logs in storage/, the dagster-storage volume)
# and data/ — belong to the user.
RUN mkdir -p "$DAGSTER_HOME/storage" "$TAXOFORGE_DATA_DIR"
COPY deploy/dagster.yaml ${DAGSTER_HOME}/dagster.yaml
COPY workspace.yaml ./workspace.yaml
COPY deploy/entrypoint.sh /usr/local/bin/taxoforge-entrypoint
RUN chmod 0755 /usr/local/bin/taxoforge-entrypoint \
 && chown "$TAXOFORGE_UID:$TAXOFORGE_GID" "$DAGSTER_HOME" "$DAGSTER_HOME/storage" "$TAXOFORGE_DATA_DIR"

USER ${TAXOFORGE_UID}:${TAXOFORGE_GID}

EXPOSE 3000 4000
ENTRYPOINT ["/usr/local/bin/taxoforge-entrypoint"]
# The default command serves the code location; docker-compose.yml sets the others.
CMD ["dagster", "api", "grpc", "-h", "0.0.0.0", "-p", "4000", "-m", "pipelines.definitions", "--location-name", "taxoforge"]
