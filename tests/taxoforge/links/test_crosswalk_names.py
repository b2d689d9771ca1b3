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
