"""Wikidata from its whole dump on Spark: the dump reader's filter as a Spark job.

``wikidata_dump_graph`` runs :mod:`taxoforge.sources.wikidata.dump_spark` with
``spark-submit`` through Dagster Pipes (``PipesSubprocessClient``: logs streamed, the
process ended if the run is cancelled) on local Spark (``local[*]``, the default) or on a
cluster — the ``spark`` resource (:class:`SparkSubmitResource`) says which. The job writes
Parquet edge and name tables; :func:`taxoforge.sources.wikidata.dump.graph_from_tables`
turns them into the same graph tables as ``wikidata_graph`` (``edges``, ``names``,
``seeds``, ``info``), which the tree step reads unchanged.

For a dump one machine reads in minutes, ``wikidata_graph`` with ``input_file`` (the
one-pass local reader) is simpler; this asset is for what outgrows one machine.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import dagster as dg

from assets.wikidata import GROUP, OWNERS, _info_table
from taxoforge.sources.wikidata.dump import dump_languages, graph_from_tables
from taxoforge.sources.wikidata.dump_spark import JOB_FILE, read_filter_output
from taxoforge.sources.wikidata.extract import ROOT_QID, read_seeds
from taxoforge.sources.wikidata.ids import validate_qids

__all__ = ["SparkSubmitResource", "WikidataDumpSparkConfig", "wikidata_dump_graph", "defs"]


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


class WikidataDumpSparkConfig(dg.Config):
    """The dump file(s) (any URL Spark reads: a path, ``hdfs://…``, ``s3a://…``), the seeds
    (QIDs, or a file with a ``qid`` column or one QID a line), the languages of the names,
    the root, and where the job writes its tables (a folder all Spark nodes can reach; by
    default a temporary folder, which suits local mode only)."""

    input_files: list[str]
    seeds: list[str] = []
    seeds_file: str | None = None
    lang: str = "en"
    root: str = ROOT_QID
    output_dir: str | None = None


@dg.asset(
    group_name=GROUP, owners=OWNERS, kinds={"spark", "parquet"}, code_version="1",
    description=(
        "The Wikidata graph of `wikidata_graph`, filtered from the whole truthy N-Triples dump by a Spark job "
        "(P279 edges, P31 edges of the seeds, labels and aliases in the chosen languages) on local Spark or a "
        "cluster (resource `spark`). Tables `edges`, `names`, `seeds`, `info`."
    ),
)
def wikidata_dump_graph(context: dg.AssetExecutionContext, config: WikidataDumpSparkConfig,
                        spark: SparkSubmitResource,
                        pipes_subprocess_client: dg.PipesSubprocessClient) -> dg.Output[dict]:
    seeds = list(config.seeds) + (read_seeds(config.seeds_file) if config.seeds_file else [])
    seed_qids = validate_qids(seeds, where="seeds") if seeds else None
    langs = dump_languages(config.lang)
    out = Path(config.output_dir) if config.output_dir else Path(tempfile.mkdtemp(prefix="taxoforge-spark-"))
    out.mkdir(parents=True, exist_ok=True)
    args = [a for f in config.input_files for a in ("--input", f)] + ["--output", str(out), "--lang", ",".join(langs)]
    if seed_qids is not None:
        (out / "seeds.txt").write_text("\n".join(seed_qids) + "\n", encoding="utf-8")
        args += ["--seeds-file", str(out / "seeds.txt")]
    (out / "error.txt").unlink(missing_ok=True)
    cmd = spark.command(JOB_FILE, args)
    context.log.info(f"running {' '.join(cmd)}")
    try:
        pipes_subprocess_client.run(context=context, command=cmd, env=spark.env()).get_results()
    except Exception as e:  # the job failed (DagsterPipesExecutionError, not exported by dagster)
        err = out / "error.txt"
        if not err.is_file():
            raise
        raise dg.Failure(description=err.read_text(encoding="utf-8").strip()) from e
    edges, names, counts = read_filter_output(out)
    info = {"method": "dump-spark", "files": list(config.input_files), "master": spark.master,
            "spark_counts": counts, "lang": ",".join(langs)}
    graph = graph_from_tables(edges, names, seeds=seed_qids, root=config.root, info=info)
    by_rel = dict(graph.edges.group_by("relation").len().iter_rows())
    md = {
        "method": "dump-spark",
        "master": spark.master,
        "seeds": dg.MetadataValue.int(len(graph.seeds)),
        "p31_edges": dg.MetadataValue.int(int(by_rel.get("P31", 0))),
        "p279_edges": dg.MetadataValue.int(int(by_rel.get("P279", 0))),
        "names": dg.MetadataValue.int(graph.names.height),
        "info": dg.MetadataValue.json(json.loads(json.dumps(graph.info, default=str))),
    }
    return dg.Output({**graph.tables(), "info": _info_table(graph.info)}, metadata=md)


defs = dg.Definitions(
    assets=[wikidata_dump_graph],
    resources={"spark": SparkSubmitResource(), "pipes_subprocess_client": dg.PipesSubprocessClient()},
)
