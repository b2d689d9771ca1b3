"""The Wikidata assets: loaded in the definitions, materialised in-process against a real SPARQL
endpoint on 127.0.0.1 and from the real dump-style Turtle file."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

from assets.wikidata import assets as wd_assets
from pipelines.definitions import build_definitions
from assets.common.io_manager import ParquetIOManager
from assets.common.resources import WikidataSparqlResource
from tests.conftest import shared_file
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql, build_store

ASSETS = [wd_assets.wikidata_graph, wd_assets.wikidata_tree, wd_assets.wikidata_labels, wd_assets.wikidata_links]
CHECKS = [*wd_assets.wikidata_tree_checks, wd_assets.wikidata_seeds_are_placed]
INSTANCES = {
    "Q12418": {"classes": ["Q3305213"], "label": "Mona Lisa", "aliases": ["La Gioconda"]},  # real: painting
    "Q990000001": {"classes": ["Q87167", "Q83790"], "label": "test manuscript textbook"},  # made up
    "Q990000002": {"classes": [], "label": "test item without class"},
}


def test_definitions_include_the_wikidata_group(tmp_path):
    defs = build_definitions(str(tmp_path))
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"wikidata_graph", "wikidata_tree", "wikidata_labels", "wikidata_links"} <= keys
    for a in ASSETS:
        spec = next(iter(a.specs))
        assert spec.group_name == "wikidata" and spec.description and spec.owners
    res = defs.resources
    assert isinstance(res["wikidata_sparql"], WikidataSparqlResource)
    assert str(tmp_path) in res["wikidata_sparql"].checkpoint_dir


@pytest.fixture(scope="module")
def endpoint(shared_data):
    with LoopbackSparql(build_store(shared_data / "wikidata", INSTANCES)) as srv:
        yield srv


def run(tmp_path, resources_extra: dict, run_config: dict):
    resources = {"io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")), **resources_extra}
    return dg.materialize(ASSETS + CHECKS, resources=resources, run_config=run_config)


def test_sparql_route_materialises(tmp_path, endpoint, shared_data):
    sparql = WikidataSparqlResource(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=5,
                                    backoff_base=0.01, min_interval=0, checkpoint_dir=str(tmp_path / "ck"))
    caltech = shared_data / "label_sets/lmms_owc_classnames/caltech101_metadata.csv"
    oven = shared_file("wikidata", "oven_bm25_candidate_qid_labels.tsv")
    cfg = {"ops": {
        "wikidata_graph": {"config": {"seed_qids": sorted(INSTANCES), "batch_size": 5, "label_batch_size": 5}},
        "wikidata_tree": {"config": {"tie_seed": 3}},
        "wikidata_labels": {"config": {"qid_label_sets": [str(oven)], "name_label_sets": [str(caltech)]}},
    }}
    result = run(tmp_path, {"wikidata_sparql": sparql}, cfg)
    assert result.success
    n_requests = len(endpoint.requests)
    assert n_requests > 5
    tree = result.output_for_node("wikidata_tree")
    nodes = tree.nodes
    parent = dict(zip(nodes["node_id"], nodes["parent_id"]))
    assert parent["wd:Q12418"] == "wd:Q3305213"
    assert parent["wd:Q990000001"] in {"wd:Q87167", "wd:Q83790"}
    assert "wd:Q990000002" not in parent
    assert tree.info["source_versions"]["wikidata"]["endpoint"] == endpoint.url
    assert tree.info["source_versions"]["wikidata"]["query_time_last"]
    assert tree.info["seed"] == 3
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"tree_one_root": True, "tree_acyclic": True, "tree_no_orphans": True,
                      "tree_depths_consistent": True, "tree_top_ranks_under_root": True, "tree_link_coverage": True,
                      "wikidata_seeds_are_placed": True}
    mat = {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}
    assert mat["wikidata_graph"]["p31_edges"].value == 3
    assert mat["wikidata_links"]["labels"].value == 6875 + 100
    links = result.output_for_node("wikidata_links")
    assert links.filter((pl.col("label_id") == "Q12418") & (pl.col("dataset") == "oven")).height == 0  # not an OVEN candidate
    assert links.filter(pl.col("method") == "external_id").height > 0
    # a rerun is served from the checkpoint folder: no request reaches the endpoint
    endpoint.reset()
    again = run(tmp_path, {"wikidata_sparql": sparql}, cfg)
    assert again.success and endpoint.requests == []
    assert again.output_for_node("wikidata_tree").nodes.equals(nodes)


def test_dump_route_materialises(tmp_path):
    ttl = shared_file("wikidata", "vandycite_art_object_classes_P279_superclasses.ttl")
    cfg = {"ops": {"wikidata_graph": {"config": {"input_file": str(ttl)}},
                   "wikidata_tree": {"config": {"exclude": ["Q838948"]}}}}
    # the SPARQL resource is unused on this route; it must not be contacted
    result = run(tmp_path, {"wikidata_sparql": WikidataSparqlResource(endpoint="http://127.0.0.1:9/none")}, cfg)
    assert result.success
    tree = result.output_for_node("wikidata_tree")
    assert "wd:Q838948" not in set(tree.nodes["node_id"])  # "work of art", excluded by config
    assert tree.info["source_versions"]["wikidata"]["file"].endswith(".ttl")
    assert tree.report.filter(pl.col("kind") == "excluded_node").height > 0
    assert result.output_for_node("wikidata_links").height == 0
    # the identifier claims of the kept items come out of the same pass (these art classes have none)
    graph = result.output_for_node("wikidata_graph")
    assert "identifiers" in graph and graph["identifiers"].height == 0


def test_endpoint_and_contact_from_asset_config(tmp_path, endpoint):
    """The asset config overrides the resource's endpoint and contact (User-Agent)."""
    endpoint.reset()
    cfg = {"ops": {"wikidata_graph": {"config": {"seed_qids": ["Q12418"], "endpoint": endpoint.url,
                                                  "contact": "asset-config@taxoforge.invalid", "resume": False}}}}
    res = dg.materialize([wd_assets.wikidata_graph], run_config=cfg, resources={
        "io_manager": ParquetIOManager(data_dir=str(tmp_path / "data")),
        "wikidata_sparql": WikidataSparqlResource(endpoint="http://127.0.0.1:9/unused", contact="resource@x.invalid"),
    })
    assert res.success and endpoint.requests
    assert all("(asset-config@taxoforge.invalid)" in r["agent"] for r in endpoint.requests)


def test_sparql_route_without_seeds_fails_clearly(tmp_path):
    with pytest.raises(dg.Failure, match="seed_qids"):
        run(tmp_path, {"wikidata_sparql": WikidataSparqlResource(endpoint="http://127.0.0.1:9/none")},
            {"ops": {}})
