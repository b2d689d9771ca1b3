"""Snapshot assets: data version = content id, metadata, and the publishing gate."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

from assets.snapshots.assets import SNAPSHOTS, snapshot_asset
from assets.common.io_manager import ParquetIOManager
from assets.common.resources import SnapshotStoreResource
from taxoforge.snapshots.bibliography import LOCAL_ONLY
from taxoforge.snapshots import SnapshotStore, verify_folder
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import make_tree, move_edge, random_edges


def _upstream(tree: TreeTables):
    @dg.asset(name="wordnet_tree")
    def _tree() -> TreeTables:
        return tree

    return _tree


def _run(tmp_path, tree: TreeTables, raise_on_error: bool = True, latest: bool | None = None, public_url: str = ""):
    config = None if latest is None else {"ops": {"wordnet_snapshot": {"config": {"latest": latest}}}}
    return dg.materialize(
        [_upstream(tree), snapshot_asset("wordnet", "wordnet_tree")],
        resources={"io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")),
                   "snapshot_store": SnapshotStoreResource(url=str(tmp_path / "snapshots"), public_url=public_url)},
        raise_on_error=raise_on_error, run_config=config,
    )


def _materialization(result):
    mats = result.asset_materializations_for_node("wordnet_snapshot")
    assert len(mats) == 1
    return mats[0]


def test_definitions_have_snapshot_assets():
    from pipelines.definitions import build_definitions

    defs = build_definitions(environ={"TAXOFORGE_TAXONOMIES": ",".join(SNAPSHOTS)})
    graph = defs.resolve_asset_graph()
    for name, tree_key in SNAPSHOTS.items():
        node = graph.get(dg.AssetKey(f"{name}_snapshot"))
        assert node.parent_keys == {dg.AssetKey(tree_key)}
        assert node.group_name == "snapshots" and node.owners == ["team:snapshots"]
        assert node.description
    assert {"wordnet_tree", "imagenet1k_taxonomy"} <= {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert "snapshot_store" in defs.resources


def test_data_version_is_the_content_id_and_unchanged_rebuilds_keep_it(tmp_path):
    edges = random_edges(n=150, extra=60)
    first = _materialization(_run(tmp_path, make_tree(edges)))
    store = SnapshotStore(tmp_path / "snapshots")
    [entry] = store.versions("wordnet")
    assert first.tags["dagster/data_version"] == entry["version"]
    md = first.metadata
    assert md["version"].value == entry["version"] and md["status"].value == "published"
    assert md["store_url"].value == LOCAL_ONLY  # a local folder with no public URL: said so, never its path
    manifest = store.manifest("wordnet", entry["version"])
    assert md["checksums"].value == {f: v["sha256"] for f, v in manifest["files"].items()}
    assert md["changed"].value is True
    # the tree's info crossed the IO manager (its info.json) into the manifest
    assert (tmp_path / "data" / "assets" / "wordnet_tree" / "info.json").exists()
    assert manifest["seed"] == 0 and manifest["source_versions"]["toy"] == "1.0"
    assert manifest["cycle_policy"] == "dfs_back_edges" and manifest["info"]["build"]["nodes"] == 150
    assert verify_folder(store.local_dir("wordnet", entry["version"])).ok

    again = _materialization(_run(tmp_path, make_tree(edges)))  # a scheduled rebuild, nothing changed
    assert again.tags["dagster/data_version"] == entry["version"]
    assert again.metadata["status"].value == "unchanged" and again.metadata["changed"].value is False

    moved = _materialization(_run(tmp_path, make_tree(move_edge(edges, "t:149", "t:1")),
                                  public_url="https://taxa.example.org/snapshots"))
    assert moved.metadata["store_url"].value == "https://taxa.example.org/snapshots"
    assert moved.metadata["browser"].value == (f"https://taxa.example.org/snapshots/wordnet/"
                                               f"{moved.tags['dagster/data_version']}/browse/index.html")
    assert (tmp_path / "snapshots" / "wordnet" / moved.tags["dagster/data_version"] / "browse" / "index.html").is_file()
    assert "--store https://taxa.example.org/snapshots" in moved.metadata["cite_with"].value
    assert moved.tags["dagster/data_version"] != entry["version"]
    assert moved.metadata["changed"].value is True
    assert moved.metadata["previous_version"].value == entry["version"]
    diff = moved.metadata["diff_vs_previous"].value
    assert diff["moved"] == 1 and diff["added"] == diff["removed"] == diff["renamed"] == 0
    assert diff["from"] == entry["version"] and diff["examples"]["moved"][0]["node_id"] == "t:149"
    assert len(store.versions("wordnet")) == 2
    assert store.latest("wordnet") == moved.metadata["version"].value and moved.metadata["is_latest"].value
    assert (tmp_path / "snapshots" / "index.html").exists()


def test_a_test_build_published_with_latest_false_does_not_switch_the_name(tmp_path):
    edges = random_edges(n=150, extra=60)
    first = _materialization(_run(tmp_path, make_tree(edges)))
    test_build = _materialization(_run(tmp_path, make_tree(edges, seed=1), latest=False))
    store = SnapshotStore(tmp_path / "snapshots")
    assert test_build.metadata["status"].value == "published" and not test_build.metadata["is_latest"].value
    assert store.latest("wordnet") == first.metadata["version"].value
    assert store.manifest("wordnet", test_build.metadata["version"].value)["seed"] == 1


def test_failing_tree_checks_block_publishing(tmp_path):
    broken = TreeTables("x", pl.DataFrame({"node_id": ["r", "a", "b"], "parent_id": [None, "r", "gone"],
                                           "depth": [0, 1, 1]}))
    result = _run(tmp_path, broken, raise_on_error=False)
    assert not result.success
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failures and "no_orphans" in str(failures[0].event_specific_data.error)
    assert SnapshotStore(tmp_path / "snapshots").versions("wordnet") == []
    assert not (tmp_path / "snapshots" / "wordnet").exists()


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_only_the_embedded_taxonomies_are_snapshotted_by_the_demo(name):
    from assets.snapshots.assets import EMBEDDED_SNAPSHOTS, snapshot_assets

    [asset] = snapshot_assets([name])
    tagged = asset.tags_by_key[asset.key].get("taxoforge/embedded_default") == "true"
    assert tagged == (name in EMBEDDED_SNAPSHOTS)
    assert [dep.to_user_string() for dep in asset.dependency_keys] == [SNAPSHOTS[name]]
