"""Wikidata identifier claims (P3151, P10585, P846, P685, P8814) over SPARQL, against a real SPARQL
engine on 127.0.0.1 serving a Wikidata-shaped Turtle fixture; checked against an independent
reading of the same file with rdflib, through faults and across an interruption."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest
import rdflib

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.identifiers import (IDENTIFIER_PROPERTIES, VALUE_PATTERNS, fetch_identifier_claims,
                                                    validate_claim_rows)
from taxoforge.sources.wikidata.queries import render
from taxoforge.sources.wikidata.sparql import SparqlClient
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

FIXTURE = Path(__file__).with_name("fixtures") / "taxon_identifiers.ttl"
P = rdflib.Namespace("http://www.wikidata.org/prop/")
PS = rdflib.Namespace("http://www.wikidata.org/prop/statement/")
WIKIBASE = rdflib.Namespace("http://wikiba.se/ontology#")
# the iNaturalist ids of the fixture's species, plus one no item carries (Latimeria chalumnae)
INAT_IDS = [81545, 99498, 264090, 96735, 93193, 100428, 55387, 64971, 5365, 3802, 104109, 42351, 26063, 114396,
            50591, 48715, 56090, 164985, 127431, 129485, 124118, 127432, 144071]


def expected_claims(seed_property: str, values) -> set[tuple]:
    """(qid, property, value, rank) of every statement of the five properties on the items with a
    statement of ``seed_property`` among ``values``, read with rdflib; malformed values left out."""
    import re

    g = rdflib.Graph().parse(FIXTURE, format="turtle")
    wanted = {str(v) for v in values}
    out = set()
    for item in set(g.subjects(P[seed_property], None)):
        if not any(str(g.value(st, PS[seed_property])) in wanted for st in g.objects(item, P[seed_property])):
            continue
        for prop in IDENTIFIER_PROPERTIES:
            for st in g.objects(item, P[prop]):
                value = str(g.value(st, PS[prop]))
                rank = str(g.value(st, WIKIBASE.rank)).rsplit("#", 1)[1].removesuffix("Rank").lower()
                if re.fullmatch(VALUE_PATTERNS[prop], value):
                    out.add((str(item).rsplit("/", 1)[1], prop, value, rank))
    return out


@pytest.fixture(scope="module")
def _ids_server():
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        yield srv


@pytest.fixture
def ids_endpoint(_ids_server) -> LoopbackSparql:
    _ids_server.reset()
    yield _ids_server
    _ids_server.reset()


def client(endpoint, **kw) -> SparqlClient:
    opts = dict(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=2.0, max_retries=4,
                backoff_base=0.005, backoff_max=0.02)
    return SparqlClient(**{**opts, **kw})


def claim_rows(res) -> set[tuple]:
    return set(res.claims.select("qid", "property", "value", "rank").iter_rows())


def test_claims_match_an_independent_reading_of_the_graph(ids_endpoint):
    res = fetch_identifier_claims(client(ids_endpoint), INAT_IDS, batch_size=7)
    assert claim_rows(res) == expected_claims("P3151", INAT_IDS)
    assert len(ids_endpoint.requests) == 4 and res.info["batches_queried"] == 4  # ceil(23 / 7)
    assert res.info["values_requested"] == 23 and res.info["values_found"] == 22  # Latimeria has no item
    assert set(res.claims["source"]) == set(IDENTIFIER_PROPERTIES.values())
    assert (res.claims["method"] == "sparql").all()


def test_what_the_statements_model_means(ids_endpoint):
    res = fetch_identifier_claims(client(ids_endpoint), INAT_IDS)
    c = res.claims
    # a deprecated statement is returned with its rank, not hidden and not taken as truthy
    assert c.filter((pl.col("value") == "42351") & (pl.col("rank") == "deprecated")).height == 1
    # a preferred value does not hide the normal-rank one beside it
    assert set(c.filter(pl.col("qid") == "Q990003017", pl.col("property") == "P10585")["rank"]) == {"preferred", "normal"}
    # two items claiming one iNaturalist id are both found
    assert c.filter(pl.col("property") == "P3151", pl.col("value") == "55387")["qid"].n_unique() == 2
    # a malformed value is dropped, counted and shown
    assert res.info["dropped"] == {"bad_value": 1} and "gbif:9100013" in res.info["dropped_examples"]["bad_value"][0]


def test_seeding_by_another_property(ids_endpoint):
    res = fetch_identifier_claims(client(ids_endpoint), ["542", "2057", "NOPE1"], seed_property="P10585")
    assert claim_rows(res) == expected_claims("P10585", ["542", "2057"])
    assert set(res.claims.filter(pl.col("property") == "P3151")["value"]) == {"127431", "127432"}


def test_bad_input_is_refused_before_any_request(ids_endpoint):
    with pytest.raises(ValueError, match=r"values\[1\]: '12 34' is not a inaturalist id"):
        fetch_identifier_claims(client(ids_endpoint), [1, "12 34"])
    with pytest.raises(ValueError, match="seed_property 'P31'"):
        fetch_identifier_claims(client(ids_endpoint), [1], seed_property="P31")
    with pytest.raises(ValueError, match="is not an identifier"):
        render("taxon_identifiers", identifiers=['1" } ; DROP ALL #'], seed_property="P3151")
    with pytest.raises(ValueError, match="is not a property id"):
        render("taxon_identifiers", identifiers=["1"], seed_property="P3151> ?x . #")
    assert ids_endpoint.requests == []


def test_faults_are_retried_and_an_interrupted_run_resumes(ids_endpoint, tmp_path):
    ids_endpoint.inject(("status", 429, {"Retry-After": "0"}), ("status", 503, {}))
    ck = BatchCheckpoint(tmp_path / "ck")
    first = fetch_identifier_claims(client(ids_endpoint), INAT_IDS, batch_size=10, checkpoint=ck)
    assert claim_rows(first) == expected_claims("P3151", INAT_IDS)
    n = len(ids_endpoint.requests)
    again = fetch_identifier_claims(client(ids_endpoint), INAT_IDS, batch_size=10, checkpoint=ck)
    assert len(ids_endpoint.requests) == n and again.info["batches_from_checkpoint"] == 3
    assert again.claims.equals(first.claims)


def test_validation_of_raw_rows():
    raw = [["1", "http://www.wikidata.org/entity/Q5", "P3151", "7", "http://wikiba.se/ontology#NormalRank"],
           ["1", "http://example.org/Q5", "P3151", "7", "http://wikiba.se/ontology#NormalRank"],
           ["1", "http://www.wikidata.org/entity/Q5", "P31", "Q1", "http://wikiba.se/ontology#NormalRank"],
           ["1", "http://www.wikidata.org/entity/Q5", "P8814", "2084071-n", "http://wikiba.se/ontology#NormalRank"],
           ["1", "http://www.wikidata.org/entity/Q5", "P685", "9606", "http://example.org/Odd"]]
    claims, dropped, _ = validate_claim_rows(raw)
    assert claims.rows() == [("Q5", "P3151", "inaturalist", "7", "normal", "sparql")]
    assert dropped == {"bad_value": 1, "item_not_a_qid": 1, "unknown_property": 1, "unknown_rank": 1}


# ---------------------------------------------------------------- the same claims read from a dump
def fixture_as_dump(tmp_path: Path) -> Path:
    """The fixture's triples as a gzipped N-Triples dump: its truthy ``wdt:`` triples are what
    the dump reader reads (the statement nodes beside them are lines it skips)."""
    import gzip

    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    out = tmp_path / "identifiers.nt.gz"
    with gzip.open(out, "wb") as f:
        store.dump(f, format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return out


def test_the_dump_route_reads_the_claims_the_sparql_route_reads(ids_endpoint, tmp_path):
    """On the same data, the dump reader's claims are the SPARQL route's as a truthy dump shows
    them, the crosswalks built from both are equal, and the Turtle route agrees; against the
    statements with their ranks, what a truthy dump cannot show is exactly the normal-rank
    value beside a preferred one (and the deprecated statements, which link nothing)."""
    from taxoforge.links.crosswalk import build_crosswalk
    from taxoforge.sources.wikidata.dump import read_dump
    from taxoforge.sources.wikidata.identifiers import truthy_claims

    sparql = fetch_identifier_claims(client(ids_endpoint), INAT_IDS)
    dump = read_dump(fixture_as_dump(tmp_path), identifier_seeds=INAT_IDS)
    turtle = read_dump(FIXTURE, identifier_seeds=INAT_IDS)
    truthy = truthy_claims(sparql.claims)
    assert (dump.identifiers["method"] == "dump").all() and (dump.identifiers["rank"] == "truthy").all()
    assert dump.identifiers.drop("method").equals(truthy.drop("method"))
    assert turtle.identifiers.equals(dump.identifiers)
    info = dump.info["identifiers"]
    assert (info["values_requested"], info["values_found"]) == (23, sparql.info["values_found"])
    assert info["dropped"] == sparql.info["dropped"] == {"bad_value": 1}  # Tridacna gigas's 'gbif:…'

    from_dump, from_sparql = build_crosswalk(dump.identifiers), build_crosswalk(truthy)
    assert from_dump.table.drop("via").equals(from_sparql.table.drop("via"))
    assert from_dump.conflicts.equals(from_sparql.conflicts)

    ranked = build_crosswalk(sparql.claims)
    key = ["id_a", "source_b", "id_b"]
    assert (set(ranked.table.select(key).rows()) - set(from_dump.table.select(key).rows())
            == {("Q990003017", "col", "Z3MQ")})  # Morus alba's normal-rank Catalogue of Life id
    changed = ranked.table.join(from_dump.table, on=key, suffix="_dump").filter(
        pl.col("confidence") != pl.col("confidence_dump"))
    assert changed.select(*key, "confidence", "confidence_dump").rows() == [("Q990003017", "col", "Z0GQ", 0.75, 1.0)]
    assert {"deprecated", "one_to_many"} <= set(ranked.conflicts["kind"]) and \
        not {"deprecated", "one_to_many"} & set(from_dump.conflicts["kind"])


def test_claims_of_the_kept_items_in_the_same_pass_as_edges_and_labels(ids_endpoint, tmp_path):
    """Without identifier seeds, the kept items are the graph's nodes and seeds: their labels and
    their claims come out of the one pass, and no other item's."""
    from taxoforge.sources.wikidata.dump import read_dump
    from taxoforge.sources.wikidata.identifiers import truthy_claims

    seeds = ["Q990003007", "Q990003017"]  # Esox lucius (one of two items with its id), Morus alba
    g = read_dump(fixture_as_dump(tmp_path), seed_qids=seeds, identifiers=True)
    assert set(g.names["name"]) == {"Esox lucius", "Morus alba"}
    sparql = fetch_identifier_claims(client(ids_endpoint), INAT_IDS).claims
    want = truthy_claims(sparql.filter(pl.col("qid").is_in(seeds)))
    assert g.identifiers.drop("method").equals(want.drop("method"))
    assert "identifiers" in g.tables() and read_dump(fixture_as_dump(tmp_path), seed_qids=seeds).identifiers is None


Q = "<http://www.wikidata.org/entity/{}>"
WDT = "<http://www.wikidata.org/prop/direct/{}>"


def nt_line(s: str, p: str, o: str, tail: str = " .") -> str:
    return f"{Q.format(s)} {WDT.format(p)} {o}{tail}"


def test_identifier_lines_off_the_fast_path(tmp_path):
    """Lines the compiled scanner hands to the line grammar: a typed literal, a comment after the
    dot, an escape, an IRI or empty value (kept, then dropped by the format check and counted),
    a lexeme's claim, another property sharing a prefix; a malformed line is an error naming it
    only when its item is kept. The QIDs and values here are made up."""
    from taxoforge.sources.wikidata.dump import read_dump

    lines = [
        nt_line("Q1", "P279", Q.format("Q2")),
        nt_line("Q1", "P3151", '"101"'),
        nt_line("Q1", "P846", '"5"^^<http://www.w3.org/2001/XMLSchema#string>'),
        nt_line("Q2", "P685", '"9606"', " . # a comment"),
        nt_line("Q2", "P10585", '"A\\u0042C"'),
        nt_line("Q2", "P8814", "<http://example.org/x>"),
        nt_line("Q2", "P846", '""'),
        nt_line("Q2", "P31510", '"1"'),
        "<http://www.wikidata.org/entity/L5> " + WDT.format("P3151") + ' "7" .',
        nt_line("Q3", "P3151", '"103"'),
        nt_line("Q3", "P3151", '"103 .'),  # malformed, but Q3 is not kept
    ]
    path = tmp_path / "ids.nt"
    path.write_text("\n".join(lines) + "\n")
    g = read_dump(path, identifiers=True)
    assert g.identifiers.select("qid", "property", "value").rows() == [
        ("Q1", "P3151", "101"), ("Q1", "P846", "5"), ("Q2", "P10585", "ABC"), ("Q2", "P685", "9606")]
    assert g.info["identifiers"]["dropped"] == {"bad_value": 2}
    # Q3 is kept once it carries a seed value: now its malformed line is an error naming the line
    with pytest.raises(ValueError, match=r"ids\.nt:11: expected an N-Triples statement"):
        read_dump(path, identifier_seeds=[103])
