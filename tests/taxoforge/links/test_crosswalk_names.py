"""Name links between trees and their agreement with identifier links: the Pterophoroidea world
catalogue (a real Catalogue of Life source dataset, ../shared/data) against the real iNaturalist tree,
and the identifier claims of the Wikidata-shaped fixture read through the loopback SPARQL engine."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest

from taxoforge.links.crosswalk import build_crosswalk
from taxoforge.links.crosswalk_names import NAME_CONFIDENCE, link_agreement, name_links
from taxoforge.sources.coldp import coldp_tree
from taxoforge.sources.wikidata.identifiers import fetch_identifier_claims
from taxoforge.sources.wikidata.sparql import SparqlClient
from tests.conftest import shared_file
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

FIXTURE = Path(__file__).resolve().parents[1] / "sources" / "wikidata" / "fixtures" / "taxon_identifiers.ttl"


@pytest.fixture(scope="module")
def col_and_inat():
    from taxoforge.sources.inaturalist import inat_tree

    col = coldp_tree(shared_file("coldp", "pterophoroidea_world_catalogue", "taxon.csv").parent, name="coldp")
    return col, inat_tree()


def test_name_links_of_the_catalogue_sample_in_the_inaturalist_tree(col_and_inat):
    col, inat = col_and_inat
    res = name_links(col, inat, "col", "inaturalist")
    rep = res.report
    print(f"\nPterophoroidea sample → iNaturalist tree: {rep['labels']} ranked taxa, {rep['linked']} linked "
          f"{rep['by_method']}, {rep['ambiguous']} ambiguous, {rep['unmatched']} unmatched, "
          f"{rep['rank_mismatch']} rank mismatches; e.g. {rep['examples']}")
    assert rep["labels"] == col.nodes.filter(pl.col("rank").is_not_null()).height
    assert rep["linked"] + rep["ambiguous"] + rep["unmatched"] + rep["rank_mismatch"] == rep["labels"]
    assert rep["linked"] > 1000  # most of the 1,604 species and 91 genera are in iNaturalist by name
    links = res.links
    assert set(links["method"].str.replace("name:", "")) <= set(NAME_CONFIDENCE)
    got = dict(zip(links["via"], links["id_b"]))
    assert got["Emmelina monodactyla"] == "127431" and got["Pterophoridae"]  # a species and a family
    # every link joins nodes of equal rank where both trees say one
    ranks = (links.join(col.nodes.select(pl.col("node_id").str.slice(4).alias("id_a"), pl.col("rank").alias("ra")),
                        on="id_a")
             .join(inat.nodes.select(pl.col("node_id").str.slice(5).alias("id_b"), pl.col("rank").alias("rb")), on="id_b"))
    assert (ranks.filter(pl.col("ra").is_not_null() & pl.col("rb").is_not_null())
            .select((pl.col("ra") == pl.col("rb")).all()).item())


def test_name_links_agree_with_identifier_links_and_disagreements_are_listed(col_and_inat):
    col, inat = col_and_inat
    names = name_links(col, inat, "col", "inaturalist")
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        client = SparqlClient(endpoint=srv.url, contact="tests@taxoforge.invalid", timeout=5.0)
        claims = fetch_identifier_claims(client, names.links["id_b"].to_list()).claims
    cw = build_crosswalk(claims, parts=[names.links], trees={"col": col.nodes["node_id"], "inaturalist": inat.nodes["node_id"]})
    table, summary = link_agreement(cw.table, "col", "inaturalist")
    print(f"\nname links vs identifier links (col → inaturalist): {summary}")
    print(table.select("id_a", "name", "name_id_b", "identifier_ids_b", "agree").rows())
    assert summary["both"] == 5 and summary["disagree"] == 1
    bad = table.filter(~pl.col("agree"))
    # the fixture's item for Platyptilia gonodactyla (iNaturalist 127432) carries the CoL id of P. thyellopa
    assert bad.select("name", "identifier_ids_b").rows() == [("Platyptilia thyellopa", ["127432"])]
    # every Catalogue of Life id the items carry is a node of the sample, every iNaturalist id one of the tree
    assert cw.conflicts.filter(pl.col("kind") == "not_in_tree").height == 0


def test_species_coverage_goes_through_the_hub_and_skips_the_trees_own_source():
    """A tree's species reach Wikidata through their name link to the hub tree; its own source is
    no target; an item and a CoL id together are counted apart from 'all'. Ids made up."""
    from taxoforge.links.crosswalk import combine
    from taxoforge.links.crosswalk_names import species_coverage

    def link(a, ia, b, ib, method):
        return {"source_a": a, "id_a": ia, "source_b": b, "id_b": ib, "method": method, "confidence": 1.0,
                "via": "", "detail": ""}

    cw = combine(pl.DataFrame([
        link("inat21", "1", "inaturalist", "10", "name:exact"), link("inat21", "2", "inaturalist", "20", "name:exact"),
        link("inat21", "3", "inaturalist", "30", "name:exact"),
        link("wikidata", "Q1", "inaturalist", "10", "wikidata:P3151"), link("wikidata", "Q1", "col", "A", "wikidata:P10585"),
        link("wikidata", "Q2", "inaturalist", "20", "wikidata:P3151"), link("wikidata", "Q2", "gbif", "7", "wikidata:P846"),
        link("col", "A", "inaturalist", "10", "name:exact"), link("wikidata", "Q3", "col", "B", "wikidata:P10585")]))
    cov = species_coverage(cw, ["inat21:1", "inat21:2", "inat21:3", "inat21:4", "wn:x"], "inat21",
                           targets=["wikidata", "col", "gbif"])
    assert cov["species"] == 4 and cov["hub"] == {"linked": 3, "share": 0.75}
    assert (cov["wikidata"]["linked"], cov["col"]["linked"], cov["gbif"]["linked"]) == (2, 1, 1)
    assert cov["wikidata_and_col"]["linked"] == 1 and cov["all"]["linked"] == 0
    own = species_coverage(cw, ["col:A", "col:B"], "col", targets=["wikidata", "col"])
    assert "col" not in own and "wikidata_and_col" not in own
    # A through its name link and its own item; B (no name link) through its own item
    assert own["hub"]["linked"] == 1 and own["wikidata"] == {"linked": 2, "share": 1.0}
