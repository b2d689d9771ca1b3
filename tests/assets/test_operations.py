"""The operations domain: ops_smoke materialises, the rebuild jobs and schedules resolve
against the whole code location."""

import dagster as dg
import polars as pl

from assets.operations import defs as ops_defs
from pipelines.definitions import build_definitions
from pipelines.resources import default_resources


def test_ops_defs_export_no_resources():
    assert not ops_defs.resources


def test_ops_smoke_materialises(tmp_path):
    defs = dg.Definitions.merge(ops_defs, dg.Definitions(resources=default_resources(str(tmp_path))))
    result = defs.resolve_job_def("ops_smoke_job").execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success
    table = pl.read_parquet(tmp_path / "assets" / "ops_smoke" / "table.parquet")
    assert table.height == 1 and table["run_id"][0] == result.run_id
    (mat,) = result.asset_materializations_for_node("ops_smoke")
    assert mat.metadata["n_rows"].value == 1


def test_every_schedule_and_job_resolves_in_the_code_location():
    defs = build_definitions()
    repo = defs.get_repository_def()
    jobs = {j.name for j in repo.get_all_jobs()}
    assert {"ops_smoke_job", "wikidata_rebuild", "catalogue_of_life_rebuild", "wordnet_rebuild"} <= jobs
    for sched in repo.schedule_defs:
        assert sched.job_name in jobs, sched.name
    assert {s.name for s in repo.sensor_defs} >= {"run_failure_log"}
    # WordNet is never rescheduled; its rebuild job is there for a manual run.
    assert "wordnet_rebuild_schedule" not in {s.name for s in repo.schedule_defs}
    selected = {k.to_user_string() for k in repo.get_job("wordnet_rebuild").asset_layer.executable_asset_keys}
    assert "wordnet_tree" in selected
