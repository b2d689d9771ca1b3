"""The crosswalk: identifier links from Wikidata claims (confidence, conflicts, composition through
the item), its release table, and — end to end through the loopback SPARQL engine — the share of
iNat2021 species that reach a Wikidata item and a Catalogue of Life id."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest

from taxoforge.links.crosswalk import (CLAIM_CONFIDENCE, CROSSWALK_SCHEMA, build_crosswalk, claim_conflicts,
                                       conflict_shares, coverage, identifier_links, node_ids, translate)
from taxoforge.links.crosswalk_names import name_links
from taxoforge.sources.inat21 import inat21_tree
from taxoforge.sources.wikidata.identifiers import fetch_identifier_claims, validate_claim_rows
from taxoforge.sources.wikidata.sparql import SparqlClient
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

TESTS = Path(__file__).resolve().parents[1]
FIXTURE = TESTS / "sources" / "wikidata" / "fixtures" / "taxon_identifiers.ttl"
INAT21 = TESTS / "sources" / "fixtures" / "inat21_categories.json"
NORMAL = "http://wikiba.se/ontology#NormalRank"
PREFERRED = "http://wikiba.se/ontology#PreferredRank"
DEPRECATED = "http://wikiba.se/ontology#DeprecatedRank"


def claims(*rows) -> pl.DataFrame:
    """Claims from (qid, property, value, rank IRI) rows, through the same validation as the readers."""
    raw = [[None, f"http://www.wikidata.org/entity/{q}", p, v, r] for q, p, v, r in rows]
    return validate_claim_rows(raw)[0]


def test_confidence_follows_the_conflicts():
    c = claims(("Q1", "P3151", "10", NORMAL), ("Q1", "P10585", "AA", NORMAL),
               ("Q2", "P3151", "20", NORMAL), ("Q2", "P10585", "BB", PREFERRED), ("Q2", "P10585", "CC", NORMAL),
               ("Q3", "P3151", "30", NORMAL), ("Q4", "P3151", "30", NORMAL),
               ("Q5", "P3151", "50", DEPRECATED))
    links = identifier_links(c)
    conf = {(r["id_a"], r["id_b"]): r["confidence"] for r in links.iter_rows(named=True)}
    assert conf[("Q1", "10")] == conf[("Q1", "AA")] == CLAIM_CONFIDENCE["clean"]
    assert conf[("Q2", "BB")] == CLAIM_CONFIDENCE["preferred"] and conf[("Q2", "CC")] == CLAIM_CONFIDENCE["conflict"]
    assert conf[("Q3", "30")] == conf[("Q4", "30")] == CLAIM_CONFIDENCE["conflict"]
    assert ("Q5", "50") not in conf  # deprecated: no link
    assert dict(links.schema) == CROSSWALK_SCHEMA
    kinds = {(r["kind"], r["source"]): r["count"] for r in claim_conflicts(c).iter_rows(named=True)}
    assert kinds == {("deprecated", "inaturalist"): 1, ("many_to_one", "inaturalist"): 1, ("one_to_many", "col"): 1}
    # a value naming no node of the tree given for its source is a conflict too
    nit = claim_conflicts(c, {"inaturalist": ["inat:10", "inat:20"]})
    assert nit.filter(pl.col("kind") == "not_in_tree")["count"].to_list() == [1]  # 30 (50 is deprecated)
    shares = conflict_shares(c, claim_conflicts(c))
    assert shares["many_to_one"] == pytest.approx(1 / 6, abs=1e-6) and shares["deprecated"] == pytest.approx(1 / 8)


def test_translation_goes_through_the_item_and_keeps_the_best_path():
    c = claims(("Q1", "P3151", "10", NORMAL), ("Q1", "P10585", "AA", NORMAL),
               ("Q2", "P3151", "20", NORMAL), ("Q2", "P10585", "BB", PREFERRED), ("Q2", "P10585", "CC", NORMAL))
    t = translate(identifier_links(c), ["10", "20", "99"], "inaturalist", "col")
    assert t.select("id", "target_id", "confidence", "via").rows() == [
        ("10", "AA", 1.0, "wikidata:Q1"), ("20", "BB", 0.75, "wikidata:Q2"), ("20", "CC", 0.5, "wikidata:Q2")]
    back = translate(identifier_links(c), ["AA"], "col", "inaturalist")
    assert back["target_id"].to_list() == ["10"]
    assert node_ids(["10"], "inaturalist") == ["inat:10"]
    with pytest.raises(ValueError, match="gbif"):
        node_ids(["1"], "gbif")


def test_a_release_is_the_same_bytes_for_the_same_links(tmp_path):
    c = claims(("Q1", "P3151", "10", NORMAL), ("Q1", "P10585", "AA", NORMAL))
    extra = pl.DataFrame([("col", "AA", "inaturalist", "10", "name:exact", 0.95, "Esox lucius", "x")],
                         schema=CROSSWALK_SCHEMA, orient="row")
    a = build_crosswalk(c, parts=[extra], part_reports={"names": {"linked": 1}})
    b = build_crosswalk(c.reverse(), parts=[extra, extra])
    assert a.table.equals(b.table) and a.table.height == 3
    assert a.report["rows_by_method"] == {"name:exact": 1, "wikidata:P10585": 1, "wikidata:P3151": 1}
    assert a.report["parts"] == {"names": {"linked": 1}}


@pytest.fixture(scope="module")
def loopback_claims():
    """The fixture's claims of the iNat2021 species, read through the loopback SPARQL engine,
    seeded by the iNaturalist ids their names link to in the real iNaturalist tree."""
    from taxoforge.sources.inaturalist import inat_tree

    inat21 = inat21_tree(json.loads(INAT21.read_text())["categories"])
    inat = inat_tree()
    names = name_links(inat21, inat, "inat21", "inaturalist")
    species = inat21.nodes.filter(pl.col("rank") == "species")
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        client = SparqlClient(endpoint=srv.url, contact="tests@taxoforge.invalid", timeout=5.0)
        res = fetch_identifier_claims(client, names.links["id_b"].to_list())
    return species, names, res


def test_share_of_inat21_species_with_a_qid_and_a_catalogue_of_life_id(loopback_claims):
    species, names, res = loopback_claims
    cw = build_crosswalk(res.claims, parts=[names.links])
    ids = [n.split(":", 1)[1] for n in species["node_id"]]
    inat = translate(cw.table, ids, "inat21", "inaturalist", through=None)
    assert inat["id"].n_unique() == 18 == len(ids)  # every iNat2021 species of the fixture is in today's tree
    share = coverage(cw.table, inat["target_id"].to_list(), "inaturalist", ["wikidata", "col"])
    print(f"\niNat2021 species (fixture, 18) → iNaturalist → Wikidata item: {share['wikidata']}, "
          f"Catalogue of Life id: {share['col']}, both: {share['all']}")
    # Latimeria chalumnae has no item; Acipenser sturio and Anaxyrus californicus no Catalogue of Life id
    assert share["wikidata"]["linked"] == 17 and share["col"]["linked"] == 15 and share["all"]["linked"] == 15
    kinds = {r["kind"] for r in cw.conflicts.iter_rows(named=True)}
    assert kinds == {"deprecated", "many_to_one", "one_to_many"}
