"""The WordNet and ImageNet assets materialise in-process, with their checks, through the
project's own Parquet IO manager (real files in a temp folder)."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

import assets.imagenet.assets as imagenet_assets
import assets.wordnet.assets as wordnet_assets
from pipelines.resources import default_resources
from taxoforge.sources.wordnet import WordNetUnavailable, ensure_wordnet
from taxoforge.trees.tables import TreeTables


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    data_dir = tmp_path_factory.mktemp("data")
    modules = [wordnet_assets, imagenet_assets]
    result = dg.materialize(
        [*dg.load_assets_from_modules(modules), *dg.load_asset_checks_from_modules(modules)],
        resources=default_resources(str(data_dir)),
        instance=dg.DagsterInstance.ephemeral(),
    )
    return result, data_dir


def test_all_assets_materialise_and_checks_pass(run):
    result, _ = run
    assert result.success
    keys = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert keys == {"wordnet_noun_graph", "wordnet_tree", "imagenet1k_labels", "imagenet1k_links", "imagenet1k_taxonomy"}
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {"tree_one_root": True, "tree_acyclic": True, "tree_no_orphans": True,
                      "tree_depths_consistent": True, "tree_top_ranks_under_root": True, "tree_link_coverage": True,
                      "every_imagenet_class_linked": True}
    assert len(result.get_asset_check_evaluations()) == 13  # six tree checks on each tree + the link check


def test_metadata_a_person_needs(run):
    result, _ = run
    md = {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}
    assert md["wordnet_tree"]["nodes"].value == 82_115
    assert md["wordnet_tree"]["max_depth"].value == 19
    hist = md["wordnet_tree"]["depth_histogram"].value  # a table with a schema: depth → nodes
    assert [c.name for c in hist.schema.columns] == ["depth", "nodes"] and hist.records[0].data == {"depth": 0, "nodes": 1}
    assert sum(r.data["nodes"] for r in hist.records) == md["wordnet_tree"]["nodes"].value
    assert md["imagenet1k_links"]["linked"].value == 1000
    assert md["imagenet1k_taxonomy"]["leaves"].value == 1000


def test_files_on_disk_are_the_tree_tables(run):
    _, data_dir = run
    tree = TreeTables.read(data_dir / "assets" / "imagenet1k_taxonomy")
    tax = tree.taxonomy()
    assert tax.root == "wn:n00001740"
    assert tree.links.height == 1000 and set(tree.links["status"]) == {"linked"}
    # every class is a leaf of the spanning subtree, and the names include the dataset's own labels
    leaves = set(tree.nodes.filter(pl.col("is_leaf"))["node_id"])
    assert set(tree.links["node_id"]) == leaves
    assert tree.names.filter(pl.col("kind") == "dataset_label").height == 1000
    assert tax.ancestors("wn:n02085620")[:3] == ["wn:n00001740", "wn:n00001930", "wn:n00002684"]
