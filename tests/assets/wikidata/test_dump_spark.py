"""The Spark asset of the Wikidata dump: spark-submit through Dagster Pipes on local Spark, the
same graph tables as the local reader; the resource's command for a cluster."""

from __future__ import annotations

import shutil

import dagster as dg
import polars as pl
import pytest

from assets.common.io_manager import ParquetIOManager
from assets.common.resources import SparkSubmitResource
from assets.wikidata.dump_spark import wikidata_dump_graph
from taxoforge.sources.wikidata.dump import read_dump

WD = "http://www.wikidata.org/entity/"
P279 = "<http://www.wikidata.org/prop/direct/P279>"


def test_resource_builds_local_and_cluster_commands():
    local = SparkSubmitResource()
    cmd = local.command("job.py", ["--input", "x.nt"])
    assert cmd[1:3] == ["--master", "local[*]"] and cmd[-3:] == ["job.py", "--input", "x.nt"]
    assert "spark.driver.bindAddress=127.0.0.1" in cmd and local.env()["PYSPARK_PYTHON"]
    cluster = SparkSubmitResource(master="k8s://https://k8s.example:6443", deploy_mode="cluster",
                                  spark_submit="/opt/spark/bin/spark-submit",
                                  conf={"spark.executor.instances": "8", "spark.executor.memory": "8g"})
    cmd = cluster.command("job.py", [])
    assert cmd[:5] == ["/opt/spark/bin/spark-submit", "--master", "k8s://https://k8s.example:6443", "--deploy-mode",
                       "cluster"]
    assert "spark.executor.instances=8" in cmd and not any("127.0.0.1" in c for c in cmd)
    assert cluster.env() == {}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime: Spark needs one (default-jre-headless)")
def test_spark_asset_materialises_the_local_readers_graph(tmp_path):
    pytest.importorskip("pyspark", reason="pyspark is not installed (the 'spark' extra)")
    from benchmarks.generate import wikidata_like_ntriples

    dump = tmp_path / "wd.nt"
    info = wikidata_like_ntriples(dump, 0.001, seed=2)
    seeds = info["seeds"][:10]
    resources = {"io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")),
                 "spark": SparkSubmitResource(master="local[2]"),
                 "pipes_subprocess_client": dg.PipesSubprocessClient()}
    cfg = {"ops": {"wikidata_dump_graph": {"config": {"input_files": [str(dump)], "seed_qids": seeds,
                                                      "output_dir": str(tmp_path / "spark")}}}}
    result = dg.materialize([wikidata_dump_graph], resources=resources, run_config=cfg)
    assert result.success
    tables = result.output_for_node("wikidata_dump_graph")
    want = read_dump(dump, seed_qids=seeds)
    assert tables["edges"].equals(want.edges) and tables["names"].equals(want.names)
    assert tables["seeds"]["node_id"].to_list() == want.seed_node_ids
    assert (tmp_path / "data" / "assets" / "wikidata_dump_graph" / "edges.parquet").is_file()

    bad = tmp_path / "bad.nt"
    bad.write_text(f"<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q3> {P279} \"Q1\" .\n", encoding="utf-8")
    cfg["ops"]["wikidata_dump_graph"]["config"]["input_files"] = [str(bad)]
    failed = dg.materialize([wikidata_dump_graph], resources=resources, run_config=cfg, raise_on_error=False)
    assert not failed.success
    failure = failed.get_step_failure_events()[0].event_specific_data.user_failure_data
    assert "bad.nt:2: expected an entity IRI as object of P279" in failure.description
    assert pl.read_parquet(tmp_path / "data" / "assets" / "wikidata_dump_graph" / "edges.parquet").height > 0
