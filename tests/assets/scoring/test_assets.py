"""The scoring assets, run for real: model-output files in a temp folder scored against a
small tree published as a snapshot in a temp store, an ephemeral Dagster instance, the
project's resources. The asset a file is scored by is the one downstream of the snapshot
its folder names; the asset shows the citation, the leaderboard and the figures; a file of
which no row scores fails the run."""

import base64
import json
import os
import time

import dagster as dg
import polars as pl
import pytest

from assets.common.resources import ScoringResource, SnapshotStoreResource
from assets.scoring.assets import (SCORED_TAXONOMIES, model_output_files, model_output_scores, partitions_for,
                                   result_folder, scores_asset)
from pipelines.definitions import build_definitions
from taxoforge.snapshots import SnapshotStore
from taxoforge.snapshots.bibliography import LOCAL_ONLY
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
#: VLM4Bio-style rows whose species no node of the mini tree names: nothing can be scored.
FOREIGN = [{"id": str(i), "model": "m", "output": "Setophaga petechia", "label": "Setophaga petechia"}
           for i in range(5)]
IMAGENET = scores_asset("imagenet1k")


def mini_tree() -> TreeTables:
    nodes = pl.DataFrame({"node_id": [r[0] for r in ROWS], "parent_id": [r[1] for r in ROWS],
                          "label": [r[2] for r in ROWS]}, schema_overrides={"parent_id": pl.String})
    return TreeTables("mini", nodes, pl.DataFrame({"node_id": [r[0] for r in ROWS], "name": [r[2] for r in ROWS]}))


@pytest.fixture()
def setup(tmp_path):
    outputs = tmp_path / "model_outputs"
    (outputs / "batch1").mkdir(parents=True)
    store = tmp_path / "store"
    published = SnapshotStore(store).publish(mini_tree(), name="imagenet1k", check=False)
    resources = {"scoring": ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores")),
                 "snapshot_store": SnapshotStoreResource(url=str(store))}
    return outputs, resources, published


def _write(path, records, age=10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    t = time.time() - age
    os.utime(path, (t, t))


def _materialize(asset, key, instance, resources, **config):
    instance.add_dynamic_partitions(asset.partitions_def.name, [key])
    return dg.materialize([asset], partition_key=key, instance=instance, resources=resources, raise_on_error=False,
                          run_config={"ops": {asset.key.path[-1]: {"config": {"meteor": False, "bootstrap": 200,
                                                                               **config}}}})


def _first_markdown_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the first Markdown table in ``text``, cells stripped."""
    lines = [ln for ln in text.splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    table = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        table.append([c.strip() for c in ln.strip().strip("|").split("|")])
    return table[0], table[2:]


def test_a_file_is_scored_against_the_snapshot_it_cites(setup):
    outputs, resources, published = setup
    instance = dg.DagsterInstance.ephemeral()
    _write(outputs / "batch1" / "run_a.jsonl", RECORDS)
    result = _materialize(IMAGENET, "batch1/run_a.jsonl", instance, resources)
    assert result.success
    md = result.get_asset_materialization_events()[0].materialization.metadata
    assert md["rows"].value == 4 and md["scored"].value == 3 and md["bad_rows"].value == 1
    assert md["best_model"].value == "m1"
    # the citation: a reference the store resolves, and the store
    assert md["taxonomy_ref"].value == published.ref
    assert md["taxonomy_store"].value == LOCAL_ONLY  # a local store without a public URL: said so, never its path
    assert md["citation"].value["published"] is True and md["snapshot_asset"].value == "imagenet1k_snapshot"
    assert md["taxonomy_rule"].value == "default"
    # first: the leaderboard as leaderboard.md has it — rank, intervals, significance — then the
    # best model and the figures; long JSON last
    keys = list(md)
    assert keys[:3] == ["leaderboard", "best_model", "best_hF"]
    json_at = [i for i, k in enumerate(keys) if isinstance(md[k], dg.JsonMetadataValue)]
    assert json_at and min(json_at) > max(i for i, k in enumerate(keys) if not isinstance(md[k], dg.JsonMetadataValue))
    board = md["leaderboard"].value  # a table with a schema, not Markdown behind a button
    folder = result_folder(resources["scoring"].scores_dir, "batch1/run_a.jsonl")
    header, rows = _first_markdown_table((folder / "leaderboard.md").read_text())
    columns = [c.name for c in board.schema.columns]
    assert sorted(columns) == sorted(header)
    assert columns[:6] == ["model", "dataset", "prompt", "rank", "hF", "vs best"]  # what the rank rests on, first
    assert [{h: r.data[h] for h in header} for r in board.records] == [dict(zip(header, row)) for row in rows]
    assert {"rank", "hF", "vs best"} <= set(header) and "m1" in {r.data["model"] for r in board.records}
    m1 = next(r.data for r in board.records if r.data["model"] == "m1")  # two answers: an interval
    assert "(" in m1["hF"] and "–" in m1["hF"] and m1["rank"] == "1" and m1["vs best"] == "best"
    described = {c.name: c.description for c in board.schema.columns}
    assert "200 resamples" in described["hF"] and "Holm" in described["vs best"]
    # every figure the run drew, at full size: the PNG file itself, inline
    figures = {k.removeprefix("figure "): md[k].value for k in keys if k.startswith("figure ")}
    assert {"hp_vs_hr", "model_ranks"} <= set(figures)
    for name, text in figures.items():
        png = base64.b64encode((folder / f"{name}.png").read_bytes()).decode("ascii")
        assert f"](data:image/png;base64,{png})" in text
    # 3 of 4 rows scored: below the default 95 %, the check fails with severity ERROR
    checks = result.get_asset_check_evaluations()
    assert [(c.check_name, c.passed, c.severity) for c in checks] == [
        ("scored_fraction", False, dg.AssetCheckSeverity.ERROR)]
    assert checks[0].metadata["scored_fraction"].value == pytest.approx(0.75)
    scores = pl.read_parquet(folder / "scores.parquet")
    assert scores.height == 3 and set(scores["taxonomy_version"]) == {published.ref}
    for name in ("hp_vs_hr.png", "hp_vs_hr.pdf", "hp_vs_hr.svg", "leaderboard.md", "leaderboard.tex",
                 "leaderboard.csv"):
        assert (folder / name).stat().st_size > 0, name
    assert json.loads((folder / "run.json").read_text())["citation"]["ref"] == published.ref


def test_the_check_passes_when_enough_rows_score(setup):
    outputs, resources, _ = setup
    _write(outputs / "batch1" / "good.jsonl", [r for r in RECORDS if r["label"]])
    result = _materialize(IMAGENET, "batch1/good.jsonl", dg.DagsterInstance.ephemeral(), resources)
    assert result.success
    assert [c.passed for c in result.get_asset_check_evaluations()] == [True]


def test_a_file_of_which_no_row_scores_fails_the_run(setup):
    outputs, resources, _ = setup
    _write(outputs / "vlm4bio.jsonl", FOREIGN)
    result = _materialize(IMAGENET, "vlm4bio.jsonl", dg.DagsterInstance.ephemeral(), resources)
    assert not result.success
    assert not result.get_asset_materialization_events()  # nothing green, no empty best_model
    failure = next(e for e in result.all_events if e.is_step_failure)
    message = failure.event_specific_data.error.message
    assert "no row was scored" in message and "unknown label 5" in message and "taxonomy.txt" in message


def test_a_taxonomy_the_store_lacks_fails_with_what_the_store_has(setup):
    outputs, resources, published = setup
    _write(outputs / "birds" / "x.jsonl", RECORDS)
    (outputs / "birds" / "taxonomy.txt").write_text("imagenet1k@0000000000\n")
    result = _materialize(IMAGENET, "birds/x.jsonl", dg.DagsterInstance.ephemeral(), resources)
    assert not result.success
    message = next(e for e in result.all_events if e.is_step_failure).event_specific_data.error.message
    assert "imagenet1k@0000000000" in message and published.version in message  # what the store has


def test_a_folder_outside_the_snapshot_assets_is_scored_by_the_generic_asset(setup, tmp_path):
    outputs, resources, _ = setup
    tree = tmp_path / "trees" / "mini"
    own = mini_tree()
    own = TreeTables("mini", pl.concat([own.nodes.select("node_id", "parent_id", "label"), pl.DataFrame({"node_id": ["camponotus"], "parent_id": ["formicidae"],
                                                                "label": ["Carpenter ants"]})]), own.names)
    own.write(tree)  # not the published content: cited by its content hash
    _write(outputs / "own" / "x.jsonl", RECORDS)
    (outputs / "own" / "taxonomy.txt").write_text("# a tree folder, relative to this file\n../../trees/mini\n")
    result = _materialize(model_output_scores, "own/x.jsonl", dg.DagsterInstance.ephemeral(), resources)
    assert result.success
    md = result.get_asset_materialization_events()[0].materialization.metadata
    assert md["taxonomy_ref"].value.startswith("sha256:") and md["taxonomy_rule"].value.startswith("sidecar")
    assert md["snapshot_asset"].value == "(none in this code location)"


def test_every_snapshot_asset_has_a_scoring_asset_downstream(tmp_path):
    # every taxonomy configured (the unconfigured ones have neither snapshot nor scores: test_automation)
    defs = build_definitions(str(tmp_path), environ={"TAXOFORGE_TAXONOMIES": ",".join(SCORED_TAXONOMIES)})
    specs = {s.key: s for s in defs.resolve_all_asset_specs()}
    snapshots = {k.path[-1].removesuffix("_snapshot") for k in specs if k.path[-1].endswith("_snapshot")}
    assert snapshots == set(SCORED_TAXONOMIES)
    for name in snapshots:
        spec = specs[dg.AssetKey(f"{name}_scores")]
        assert {d.asset_key for d in spec.deps} == {dg.AssetKey(f"{name}_snapshot")}
        assert spec.group_name == "scoring" and spec.owners and spec.description
        assert partitions_for(name).name == f"{name}_model_outputs"
        assert defs.resolve_job_def(f"score_{name}_outputs") is not None
    assert not specs[dg.AssetKey("model_output_scores")].deps
    assert partitions_for("sha256:" + "0" * 64) is model_output_files
    assert defs.resolve_sensor_def("model_outputs_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    assert dg.AssetKey("imagenet1k_taxonomy") not in {d.asset_key for d in specs[dg.AssetKey("imagenet1k_scores")].deps}


def test_later_runs_load_the_stored_mapping_index_the_first_run_built(setup):
    outputs, resources, published = setup
    instance = dg.DagsterInstance.ephemeral()
    _write(outputs / "batch1" / "a.jsonl", RECORDS)
    _write(outputs / "batch1" / "b.jsonl", RECORDS[:2])
    first = _materialize(IMAGENET, "batch1/a.jsonl", instance, resources)
    second = _materialize(IMAGENET, "batch1/b.jsonl", instance, resources)
    built, loaded = (r.get_asset_materialization_events()[0].materialization.metadata["mapping_index"].value
                     for r in (first, second))
    assert built["built"] is True and loaded["built"] is False and loaded["path"] == built["path"]
    # beside the snapshots of the store, never inside the frozen snapshot folder
    store = resources["snapshot_store"].url
    assert built["place"] == "snapshot store" and built["path"].startswith(os.path.join(store, ".taxoforge-index"))
    assert SnapshotStore(store).verify(published.ref).ok
    header = os.path.join(built["path"], "header.json")
    assert os.path.isfile(header)
