"""The resource classes assets take: the data folder, the snapshot store, the Wikidata SPARQL
client and the scoring folders. Configured instances for the code location are made in
:func:`pipelines.resources.default_resources`; tests build their own."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import dagster as dg

from taxoforge.sources.wikidata.sparql import WDQS_ENDPOINT, SparqlClient

__all__ = ["DataDirResource", "SnapshotStoreResource", "WikidataSparqlResource", "ScoringResource"]


class DataDirResource(dg.ConfigurableResource):
    """The local data folder of the code location: asset files (through the IO manager),
    downloaded source files, checkpoints, scores and the run-failure log live under it."""

    path: str = "data"

    def folder(self, *parts: str) -> Path:
        """``<path>/<parts…>`` (not created)."""
        return Path(self.path).joinpath(*parts)

    @property
    def downloads(self) -> Path:
        """Where source files fetched over the network are cached (resumable, checksummed)."""
        return self.folder("downloads")


class SnapshotStoreResource(dg.ConfigurableResource):
    """Where snapshot assets publish: a local folder or any fsspec URL (see
    :mod:`taxoforge.snapshots.store`); empty: the library's default store
    (:func:`taxoforge.snapshots.store.default_store_url`). The code location configures it
    (``pipelines.resources.default_store``)."""

    url: str = ""
    min_link_coverage: float | None = None  # extra publishing gate, per dataset
    public_url: str = ""  # where users reach the store, for the pull commands of its index.html

    def store(self):
        from taxoforge.snapshots.store import SnapshotStore

        return SnapshotStore(self.url or None, public_url=self.public_url or None)


class WikidataSparqlResource(dg.ConfigurableResource):
    """The Wikidata Query Service client (:class:`taxoforge.sources.wikidata.sparql.SparqlClient`):
    endpoint, contact for the User-Agent (required by the public WDQS; default
    ``$TAXOFORGE_WIKIDATA_CONTACT``), politeness and retry settings, and the folder where
    finished query batches are checkpointed so an interrupted extraction resumes."""

    # the client's own defaults, so the two cannot drift apart
    endpoint: str = WDQS_ENDPOINT
    contact: str = ""
    timeout: float = SparqlClient.timeout
    max_retries: int = SparqlClient.max_retries
    backoff_base: float = SparqlClient.backoff_base
    backoff_max: float = SparqlClient.backoff_max
    min_interval: float = SparqlClient.min_interval
    checkpoint_dir: str = "data/checkpoints/wikidata"

    def refuse_offline(self, asset: str, endpoint: str | None = None) -> None:
        """Raise ``dg.Failure`` naming ``asset`` when ``$TAXOFORGE_OFFLINE`` is set and the endpoint
        (``endpoint`` or the resource's) is not on this machine (a loopback address)."""
        import urllib.parse

        url = endpoint or self.endpoint
        host = urllib.parse.urlparse(url).hostname or ""
        if os.environ.get("TAXOFORGE_OFFLINE") and host not in ("127.0.0.1", "localhost", "::1"):
            raise dg.Failure(f"{asset}: TAXOFORGE_OFFLINE is set, so {url} is not queried; "
                             "unset it to query Wikidata (this asset needs the network)")

    def client(self, *, endpoint: str | None = None, contact: str | None = None):
        """A client; ``endpoint``/``contact`` override the resource's (e.g. from asset config)."""
        return SparqlClient(endpoint=endpoint or self.endpoint, contact=contact or self.contact, timeout=self.timeout,
                            max_retries=self.max_retries, backoff_base=self.backoff_base,
                            backoff_max=self.backoff_max, min_interval=self.min_interval)


class ScoringResource(dg.ConfigurableResource):
    """Where the scoring sensor looks for new model-output files, what they are scored
    against, and where results go (:mod:`assets.scoring.assets`).

    ``taxonomy``: the taxonomy of files whose folder names none (no ``taxonomy.txt`` above
    them, no first-level folder named after a taxonomy; :mod:`assets.scoring.folders`):
    ``NAME[@VERSION]`` in the snapshot store, ``sha256:HEX`` or a tree or snapshot folder
    (empty: such files are not scored). ``min_scored_fraction``: the threshold of the
    scoring assets' ``scored_fraction`` check. ``index_dir``: where the mapping indexes
    are stored (empty: beside a tree folder, in the snapshot store of a snapshot, else
    ``$TAXOFORGE_CACHE_DIR/mapping-index``; :mod:`taxoforge.scores.mapping.store`) — built by
    the first run that needs one, loaded by every later run."""

    outputs_dir: str = "data/model_outputs"
    taxonomy: str = "imagenet1k"
    scores_dir: str = "data/scores"
    min_scored_fraction: float = 0.95
    index_dir: str = ""


class SparkSubmitResource(dg.ConfigurableResource):
    """Where Spark jobs run, as ``spark-submit`` arguments.

    ``master``: ``local[*]`` (every core of this machine; the default), or a cluster:
    ``spark://host:7077`` (standalone), ``yarn``, ``k8s://https://host:6443``. ``deploy_mode``:
    ``client`` (the driver runs here) or ``cluster``. ``conf``: ``--conf`` pairs
    (``spark.executor.memory``, ``spark.executor.instances``, ``spark.kubernetes.container.image``,
    …). ``python``: the Python of the driver and executors (``PYSPARK_PYTHON``; default: this
    interpreter in local mode, the cluster's own otherwise). ``spark_submit``: the command
    (default: the one installed with pyspark beside this interpreter, else ``spark-submit``
    on the PATH, else ``$SPARK_HOME/bin/spark-submit``)."""

    master: str = "local[*]"
    deploy_mode: str | None = None
    conf: dict[str, str] = {}
    python: str | None = None
    spark_submit: str | None = None
    extra_args: list[str] = []

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")

    def executable(self) -> str:
        if self.spark_submit:
            return self.spark_submit
        beside = Path(sys.executable).with_name("spark-submit")
        if beside.is_file():
            return str(beside)
        found = shutil.which("spark-submit")
        if found:
            return found
        home = os.environ.get("SPARK_HOME")
        if home and (Path(home) / "bin" / "spark-submit").is_file():
            return str(Path(home) / "bin" / "spark-submit")
        raise dg.Failure("spark-submit not found: install the 'spark' extra (pip install 'taxoforge[spark]'), "
                         "or set the spark resource's spark_submit, or SPARK_HOME")

    def command(self, script: str, args: list[str]) -> list[str]:
        cmd = [self.executable(), "--master", self.master]
        if self.deploy_mode:
            cmd += ["--deploy-mode", self.deploy_mode]
        conf = dict(self.conf)
        if self.is_local:
            conf.setdefault("spark.ui.enabled", "false")
            conf.setdefault("spark.driver.host", "127.0.0.1")
            conf.setdefault("spark.driver.bindAddress", "127.0.0.1")
        for k, v in sorted(conf.items()):
            cmd += ["--conf", f"{k}={v}"]
        return cmd + list(self.extra_args) + [script, *args]

    def env(self) -> dict[str, str]:
        python = self.python or (sys.executable if self.is_local else None)
        return {"PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python} if python else {}
