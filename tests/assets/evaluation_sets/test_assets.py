"""Evaluation-set assets: built from the exact snapshot the upstream asset published,
partitioned by difficulty, seeded (same data version on a rebuild), lineage in the graph."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from assets.evaluation_sets.assets import SETS, multiple_choice_asset
from assets.snapshots.assets import snapshot_asset
from assets.common.io_manager import ParquetIOManager
from assets.common.resources import DataDirResource, SnapshotStoreResource
from tests.taxoforge.evaluation.conftest import toy_tables


@pytest.fixture
def env(tmp_path):

    @dg.asset(name="toy_tree")
    def toy_tree():
        return toy_tables()

    resources = {"io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")),
                 "snapshot_store": SnapshotStoreResource(url=str(tmp_path / "snapshots")),
                 "data_dir": DataDirResource(path=str(tmp_path / "data"))}
    instance = dg.DagsterInstance.ephemeral()
    return tmp_path, toy_tree, resources, instance


def test_questions_come_from_the_published_snapshot(env):
    tmp_path, toy_tree, resources, instance = env
    snap = snapshot_asset("toy", "toy_tree")
    mcq = multiple_choice_asset("toy", "toy")
    pub = dg.materialize([toy_tree, snap], resources=resources, instance=instance)
    ref = pub.asset_materializations_for_node("toy_snapshot")[0].metadata["snapshot"].value
    cfg = {"ops": {"toy_multiple_choice": {"config": {"questions": 12, "options": 3, "seed": 5}}}}
    r = dg.materialize([mcq], resources=resources, instance=instance, partition_key="medium", run_config=cfg)
    [m] = r.asset_materializations_for_node("toy_multiple_choice")
    assert m.metadata["snapshot"].value == ref and m.metadata["difficulty"].value == "medium"
    path = tmp_path / "data" / "evaluation_sets" / "toy_multiple_choice" / "medium.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(rows) == m.metadata["questions"].value == 12
    assert all(len(x["options"]) == 3 and x["distractor-lca"] == ["genus", "genus"] for x in rows)
    again = dg.materialize([mcq], resources=resources, instance=instance, partition_key="medium", run_config=cfg)
    [m2] = again.asset_materializations_for_node("toy_multiple_choice")
    assert m2.tags["dagster/data_version"] == m.tags["dagster/data_version"]
    shallow = dg.materialize([mcq], resources=resources, instance=instance, partition_key="hard", run_config=cfg,
                             raise_on_error=False)
    assert not shallow.success


def test_without_a_published_snapshot_it_says_so(env):
    _, _, resources, instance = env
    r = dg.materialize([multiple_choice_asset("toy", "toy")], resources=resources, instance=instance,
                       partition_key="easy", raise_on_error=False)
    assert not r.success
    failure = [e for e in r.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "has not been published yet" in str(failure.event_specific_data.error.message)


def test_lineage_in_the_definitions():
    from pipelines.definitions import build_definitions

    graph = build_definitions(environ={}).resolve_asset_graph()
    for name, (snap, _) in SETS.items():
        node = graph.get(dg.AssetKey(f"{name}_multiple_choice"))
        assert node.parent_keys == {dg.AssetKey(f"{snap}_snapshot")}
        assert node.partitions_def.get_partition_keys() == ["easy", "medium", "hard"]
