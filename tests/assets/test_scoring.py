"""The scoring sensor and the per-file scoring asset, run for real: files in a temp folder,
an ephemeral Dagster instance, the project's resources."""

import json
import os
import time

import dagster as dg
import polars as pl
import pytest

from assets.scoring import model_output_files, model_output_scores, model_outputs_sensor, result_folder
from pipelines.definitions import build_definitions
from assets.common.resources import ScoringResource
from taxoforge.trees.tables import TreeTables

ROWS = [("life", None, "Life"), ("plantae", "life", "Plants"), ("animalia", "life", "Animals"),
        ("aves", "animalia", "Birds"), ("ramphastidae", "aves", "Toucans"),
        ("r_toco", "ramphastidae", "Toco Toucan"), ("formicidae", "animalia", "Ants")]


@pytest.fixture()
def setup(tmp_path):
    nodes = pl.DataFrame({"node_id": [r[0] for r in ROWS], "parent_id": [r[1] for r in ROWS],
                          "label": [r[2] for r in ROWS]}, schema_overrides={"parent_id": pl.String})
    TreeTables("mini", nodes, pl.DataFrame({"node_id": [r[0] for r in ROWS], "name": [r[2] for r in ROWS]})).write(
        tmp_path / "tree")
    outputs = tmp_path / "model_outputs"
    (outputs / "batch1").mkdir(parents=True)
    res = ScoringResource(outputs_dir=str(outputs), taxonomy=str(tmp_path / "tree"), scores_dir=str(tmp_path / "scores"))
    return tmp_path, outputs, res


def _write(path, records, age=10):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    t = time.time() - age
    os.utime(path, (t, t))


def _tick(instance, res, cursor=None):
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"scoring": res})
    return model_outputs_sensor(ctx), ctx


def test_sensor_requests_one_run_per_new_file_then_scores_it(setup):
    tmp_path, outputs, res = setup
    instance = dg.DagsterInstance.ephemeral()
    out, _ = _tick(instance, res)
    assert isinstance(out, dg.SkipReason)

    _write(outputs / "batch1" / "run_a.jsonl", [
        {"id": "1", "model": "m1", "output": "A: Toco Toucan", "label": "r_toco"},
        {"id": "2", "model": "m1", "output": "a bird", "label": "r_toco"},
        {"id": "3", "model": "m2", "output": "I cannot tell", "label": "r_toco"},
        {"id": "4", "model": "m2", "output": "ants", "label": None},
    ])
    _write(outputs / "notes.txt", [{"ignored": True}])
    _write(outputs / "fresh.jsonl", [{"output": "x", "label": "life"}], age=0)  # still being written
    res1, ctx = _tick(instance, res)
    assert [r.partition_key for r in res1.run_requests] == ["batch1/run_a.jsonl"]
    assert res1.dynamic_partitions_requests[0].partition_keys == ["batch1/run_a.jsonl"]
    instance.add_dynamic_partitions(model_output_files.name, ["batch1/run_a.jsonl"])

    # the same file is not requested again; a changed file is
    res2, _ = _tick(instance, res, res1.cursor)
    assert isinstance(res2, dg.SkipReason) or not res2.run_requests
    _write(outputs / "batch1" / "run_a.jsonl", [{"id": "1", "model": "m1", "output": "Toucans", "label": "r_toco"}], age=5)
    res3, _ = _tick(instance, res, res1.cursor)
    assert [r.partition_key for r in res3.run_requests] == ["batch1/run_a.jsonl"]
    assert res3.run_requests[0].run_key != res1.run_requests[0].run_key
    assert not res3.dynamic_partitions_requests  # partition already known

    _write(outputs / "batch1" / "run_a.jsonl", [
        {"id": "1", "model": "m1", "output": "A: Toco Toucan", "label": "r_toco"},
        {"id": "2", "model": "m1", "output": "a bird", "label": "r_toco"},
        {"id": "3", "model": "m2", "output": "I cannot tell", "label": "r_toco"},
        {"id": "4", "model": "m2", "output": "ants", "label": None},
    ])
    result = dg.materialize([model_output_scores], partition_key="batch1/run_a.jsonl", instance=instance,
                            resources={"scoring": res}, run_config={"ops": {"model_output_scores": {"config": {"meteor": False}}}})
    assert result.success
    md = result.get_asset_materialization_events()[0].materialization.metadata
    assert md["rows"].value == 4 and md["scored"].value == 3 and md["bad_rows"].value == 1
    assert md["best_model"].value == "m1"
    assert "| m1 |" in md["leaderboard"].value and "missing ground truth" in md["leaderboard"].value
    folder = result_folder(res.scores_dir, "batch1/run_a.jsonl")
    scores = pl.read_parquet(folder / "scores.parquet")
    assert scores.height == 3 and set(scores["taxonomy_version"]) == {md["taxonomy_version"].value}
    assert (folder / "hp_vs_hr.png").exists() and (folder / "leaderboard.md").exists()


def test_code_location_has_the_scoring_pieces(tmp_path):
    defs = build_definitions(str(tmp_path))
    assert defs.resolve_job_def("score_model_outputs") is not None
    assert defs.resolve_sensor_def("model_outputs_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    spec = next(s for s in defs.resolve_all_asset_specs() if s.key == dg.AssetKey("model_output_scores"))
    assert spec.group_name == "scoring" and spec.owners and spec.description
    assert dg.AssetKey("imagenet1k_taxonomy") in {d.asset_key for d in spec.deps}
