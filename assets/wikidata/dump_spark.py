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
import tempfile
from pathlib import Path

import dagster as dg

from assets.common.resources import SparkSubmitResource
from assets.wikidata.assets import _info_table, wikidata_asset
from taxoforge.sources.wikidata.dump import dump_languages, graph_from_tables
from taxoforge.sources.wikidata.dump_spark import JOB_FILE, read_filter_dropped, read_filter_output
from taxoforge.sources.wikidata.extract import ROOT_QID, read_seed_qids
from taxoforge.sources.wikidata.ids import validate_qids

__all__ = ["WikidataDumpSparkConfig", "wikidata_dump_graph"]


class WikidataDumpSparkConfig(dg.Config):
    """The dump file(s) (any URL Spark reads: a path, ``hdfs://…``, ``s3a://…``), the seeds
    (QIDs, or a file with a ``qid`` column or one QID a line), the languages of the names,
    the root, and where the job writes its tables (a folder all Spark nodes can reach; by
    default a temporary folder, which suits local mode only)."""

    input_files: list[str]
    seed_qids: list[str] = []
    seed_qids_file: str | None = None
    lang: str = "en"
    root: str = ROOT_QID
    output_dir: str | None = None


@wikidata_asset(
    kinds={"spark", "parquet"},
    description=(
        "The Wikidata graph of `wikidata_graph`, filtered from the whole truthy N-Triples dump by a Spark job "
        "(P279 edges, P31 edges of the seeds, labels and aliases in the chosen languages) on local Spark or a "
        "cluster (resource `spark`). Tables `edges`, `names`, `seeds`, `info`."
    ),
)
def wikidata_dump_graph(context: dg.AssetExecutionContext, config: WikidataDumpSparkConfig,
                        spark: SparkSubmitResource,
                        pipes_subprocess_client: dg.PipesSubprocessClient) -> dg.Output[dict]:
    seeds = list(config.seed_qids) + (read_seed_qids(config.seed_qids_file) if config.seed_qids_file else [])
    seed_qids = validate_qids(seeds, where="seed_qids") if seeds else None
    langs = dump_languages(config.lang)
    out = Path(config.output_dir) if config.output_dir else Path(tempfile.mkdtemp(prefix="taxoforge-spark-"))
    out.mkdir(parents=True, exist_ok=True)
    args = [a for f in config.input_files for a in ("--input", f)] + ["--output", str(out), "--lang", ",".join(langs)]
    if seed_qids is not None:
        (out / "seed_qids.txt").write_text("\n".join(seed_qids) + "\n", encoding="utf-8")
        args += ["--seed-qids-file", str(out / "seed_qids.txt")]
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
    graph = graph_from_tables(edges, names, seed_qids=seed_qids, root=config.root, info=info,
                              non_items=read_filter_dropped(out))
    by_rel = dict(graph.edges.group_by("relation").len().iter_rows())
    md = {
        "method": "dump-spark",
        "master": spark.master,
        "seeds": dg.MetadataValue.int(len(graph.seed_node_ids)),
        "p31_edges": dg.MetadataValue.int(int(by_rel.get("P31", 0))),
        "p279_edges": dg.MetadataValue.int(int(by_rel.get("P279", 0))),
        "names": dg.MetadataValue.int(graph.names.height),
        "info": dg.MetadataValue.json(json.loads(json.dumps(graph.info, default=str))),
    }
    return dg.Output({**graph.tables(), "info": _info_table(graph.info)}, metadata=md)

