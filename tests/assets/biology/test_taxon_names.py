"""The taxon-name assets: Wikidata names of iNaturalist taxa fetched from a real SPARQL engine on
127.0.0.1 (Wikidata-shaped fixture), merged into the named iNaturalist tree and published as its
own snapshot, in memory; never part of the offline embedded default."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pyoxigraph as ox
import pytest

import assets.biology.taxon_names as tn
from assets.snapshots.assets import snapshot_assets
from pipelines.definitions import build_definitions
from assets.common.resources import SnapshotStoreResource, WikidataSparqlResource
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.trees.subtree import spanning_subtree
from taxoforge.trees.tables import TreeTables
from tests.conftest import shared_file
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

FIXTURE = Path(__file__).parents[2] / "taxoforge" / "sources" / "wikidata" / "fixtures" / "inat_taxon_names.ttl"
SPECIES = ["Lepomis macrochirus", "Hudsonius hudsonius", "Chrosomus eos", "Cenchrus setaceus", "Pontederia crassipes",
           "Alopochen aegyptiaca", "Esox lucius", "Canis familiaris", "Crepis bakeri", "Esox americanus"]
ASSETS = [tn.inaturalist_wikidata_names, tn.inaturalist_named_tree, *snapshot_assets(["inaturalist_named"])]


@pytest.fixture(scope="module")
def inat_subtree() -> TreeTables:
    """The real iNaturalist tree cut down to a few species and their ancestors."""
    from taxoforge.sources.inaturalist import inat_tree

    full = inat_tree()
    keep = full.nodes.filter(pl.col("label").is_in(SPECIES) & (pl.col("rank") == "species"))["node_id"]
    assert keep.len() == len(SPECIES)
    sub = spanning_subtree(full, keep.to_list(), "inaturalist", info={k: full.info.get(k) for k in ("package",
                                                                                                  "source_bytes")})
    return sub


@pytest.fixture(scope="module")
def endpoint():
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        yield srv


def stand_in(tree: TreeTables) -> dg.AssetsDefinition:
    """``inaturalist_tree`` for this test: the cut-down real tree (the full build is tested in
    tests/assets/test_biology.py)."""

    @dg.asset(name="inaturalist_tree", group_name="biology")
    def inaturalist_tree() -> TreeTables:
        return tree

    return inaturalist_tree


def run(tree, tmp_path, endpoint_url, run_config=None):
    resources = {
        "wikidata_sparql": WikidataSparqlResource(endpoint=endpoint_url, contact="tests@taxoforge.invalid", timeout=5,
                                                  backoff_base=0.01, checkpoint_dir=str(tmp_path / "ck")),
        "snapshot_store": SnapshotStoreResource(url=str(tmp_path / "snapshots")),
    }
    return dg.materialize_to_memory([stand_in(tree), *ASSETS, *tn.inaturalist_named_tree_checks],
                                    resources=resources, run_config=run_config or {})


def _md(result) -> dict:
    return {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}


def test_names_fetched_merged_and_published(inat_subtree, endpoint, tmp_path):
    endpoint.reset()
    cfg = {"ops": {"inaturalist_wikidata_names": {"config": {"batch_size": 4, "ranks": ["species"]}}}}
    result = run(inat_subtree, tmp_path, endpoint.url, cfg)
    assert result.success
    n_species = inat_subtree.nodes.filter(pl.col("rank") == "species").height
    assert len(endpoint.requests) == -(-n_species // 4)
    wd = result.output_for_node("inaturalist_wikidata_names")
    assert set(wd) == {"names", "info"} and wd["names"]["node_id"].n_unique() == 8
    tree = result.output_for_node("inaturalist_named_tree")
    assert tree.name == "inaturalist_named" and tree.nodes.equals(inat_subtree.nodes)
    syn = dict(tree.names.filter(pl.col("kind") == "synonym").select("name", "node_id").iter_rows())
    sci = dict(tree.names.filter(pl.col("kind") == "scientific").select("name", "node_id").iter_rows())
    assert syn["Notropis hudsonius"] == sci["Hudsonius hudsonius"]
    assert syn["Canis lupus familiaris"] == sci["Canis familiaris"]
    assert "Lepomis macrochirus" not in syn  # Wikidata's P225 equal to iNaturalist's adds nothing
    vern = tree.names.filter(pl.col("kind") == "vernacular")
    assert set(vern["lang"]) == {"en", "en-gb", "en-us"}
    md = _md(result)
    kinds = md["inaturalist_named_tree"]["name_kinds"].value
    assert "| scientific | la |" in kinds and "| vernacular | en |" in kinds and "| synonym | la |" in kinds
    assert md["inaturalist_named_tree"]["names_added"].value["wikidata"] == {"synonym": 6, "vernacular": 13}
    assert md["inaturalist_wikidata_names"]["taxa_with_names"].value == 8
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks and all(checks.values())

    snap = md["inaturalist_named_snapshot"]
    assert snap["status"].value == "published"
    store = SnapshotStore(str(tmp_path / "snapshots"))
    manifest = store.manifest("inaturalist_named", snap["version"].value)
    sv = manifest["source_versions"]
    assert sv["wikidata"]["endpoint"] == endpoint.url and sv["wikidata"]["query_time_last"]
    assert sv["wikidata"]["langs"] == ["en"] and "inaturalist" in sv

    # a rerun is served from the checkpoint folder, and the snapshot keeps its version
    endpoint.reset()
    again = run(inat_subtree, tmp_path, endpoint.url, cfg)
    assert again.success and endpoint.requests == []
    assert _md(again)["inaturalist_named_snapshot"]["version"].value == snap["version"].value


def test_coldp_names_carried_too(inat_subtree, endpoint, tmp_path):
    src = shared_file("coldp", "coldp_spec_example")
    cfg = {"ops": {"inaturalist_named_tree": {"config": {"coldp_sources": [str(src)]}}}}
    result = run(inat_subtree, tmp_path, endpoint.url, cfg)
    assert result.success
    tree = result.output_for_node("inaturalist_named_tree")
    node = tree.names.filter(pl.col("name") == "Crepis bakeri")["node_id"][0]
    assert ("Baker's hawksbeard", "vernacular", "en") in set(
        tree.names.filter(pl.col("node_id") == node).select("name", "kind", "lang").iter_rows())
    # the dataset is named by its archive's name (a local path is never published), each name with it
    assert f"coldp:{src.name}" in tree.info["name_sources"]
    assert f"coldp:{src.name}" in tree.info["source_versions"]
    carried = tree.names.filter((pl.col("node_id") == node) & (pl.col("name") == "Baker's hawksbeard"))
    assert carried["source"].to_list() == [f"coldp:{src.name}"]


def test_offline_refuses_the_public_endpoint(inat_subtree, tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_OFFLINE", "1")
    with pytest.raises(dg.Failure, match="TAXOFORGE_OFFLINE"):
        run(inat_subtree, tmp_path, "https://query.wikidata.org/sparql")


def test_not_part_of_the_embedded_default():
    defs = build_definitions(environ={"TAXOFORGE_TAXONOMIES": "inaturalist_named"})
    job = defs.resolve_job_def("embedded_default")
    selected = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    assert not selected & {"inaturalist_wikidata_names", "inaturalist_named_tree", "inaturalist_named_snapshot"}
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"inaturalist_wikidata_names", "inaturalist_named_tree", "inaturalist_named_snapshot"} <= keys
    graph = defs.resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get(dg.AssetKey("inaturalist_named_tree")).parent_keys} == {
        "inaturalist_tree", "inaturalist_wikidata_names"}
