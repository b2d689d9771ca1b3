"""The per-file scoring asset, run for real: a model-output file in a temp folder scored
against its ``imagenet1k_taxonomy`` input (a small tree stored by the project's Parquet IO
manager), an ephemeral Dagster instance, the project's resources."""

import json
import os
import time

import dagster as dg
import polars as pl
import pytest

from assets.common.io_manager import ParquetIOManager
from assets.common.resources import ScoringResource
from assets.scoring import model_output_files, model_output_scores, result_folder
from pipelines.definitions import build_definitions
from taxoforge.trees.tables import TreeTables

ROWS = [("life", None, "Life"), ("plantae", "life", "Plants"), ("animalia", "life", "Animals"),
        ("aves", "animalia", "Birds"), ("ramphastidae", "aves", "Toucans"),
        ("r_toco", "ramphastidae", "Toco Toucan"), ("formicidae", "animalia", "Ants")]
RECORDS = [
    {"id": "1", "model": "m1", "output": "A: Toco Toucan", "label": "r_toco"},
    {"id": "2", "model": "m1", "output": "a bird", "label": "r_toco"},
    {"id": "3", "model": "m2", "output": "I cannot tell", "label": "r_toco"},
    {"id": "4", "model": "m2", "output": "ants", "label": None},
]


def mini_tree() -> TreeTables:
    nodes = pl.DataFrame({"node_id": [r[0] for r in ROWS], "parent_id": [r[1] for r in ROWS],
                          "label": [r[2] for r in ROWS]}, schema_overrides={"parent_id": pl.String})
    return TreeTables("mini", nodes, pl.DataFrame({"node_id": [r[0] for r in ROWS], "name": [r[2] for r in ROWS]}))


@dg.asset(name="imagenet1k_taxonomy")
def mini_taxonomy() -> TreeTables:
    """Stands in for the ImageNet-1k taxonomy: the scoring asset's input."""
    return mini_tree()


@pytest.fixture()
def setup(tmp_path):
    outputs = tmp_path / "model_outputs"
    (outputs / "batch1").mkdir(parents=True)
    resources = {"io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")),
                 "scoring": ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"))}
    return outputs, resources


def _write(path, records, age=10):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    t = time.time() - age
    os.utime(path, (t, t))


def test_a_file_is_scored_against_the_taxonomy_input(setup):
    outputs, resources = setup
    instance = dg.DagsterInstance.ephemeral()
    assert dg.materialize([mini_taxonomy], instance=instance, resources=resources).success
    _write(outputs / "batch1" / "run_a.jsonl", RECORDS)
    instance.add_dynamic_partitions(model_output_files.name, ["batch1/run_a.jsonl"])

    result = dg.materialize([mini_taxonomy, model_output_scores], selection=[model_output_scores],
                            partition_key="batch1/run_a.jsonl", instance=instance, resources=resources,
                            run_config={"ops": {"model_output_scores": {"config": {"meteor": False}}}})
    assert result.success
    md = result.get_asset_materialization_events()[0].materialization.metadata
    assert md["rows"].value == 4 and md["scored"].value == 3 and md["bad_rows"].value == 1
    assert md["best_model"].value == "m1"
    assert "| m1 |" in md["leaderboard"].value and "missing ground truth" in md["leaderboard"].value
    folder = result_folder(resources["scoring"].scores_dir, "batch1/run_a.jsonl")
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
