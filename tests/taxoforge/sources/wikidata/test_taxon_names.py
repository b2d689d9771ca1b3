"""Wikidata names of iNaturalist taxa (P3151 → P1843 / P1420+P225 / P225) over SPARQL, against a
real SPARQL engine on 127.0.0.1 serving a Wikidata-shaped Turtle fixture; checked against an
independent reading of the same file with rdflib; through faults and across an interruption."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest
import rdflib

from taxoforge.links.external_names import merge_names
from taxoforge.links.resolve import resolve_labels
from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.queries import render
from taxoforge.sources.wikidata.sparql import SparqlClient, SparqlError
from taxoforge.sources.wikidata.taxon_names import fetch_inat_taxon_names, inat_ids, validate_name_rows
from taxoforge.trees.tables import TreeTables, name_kind_counts
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

FIXTURE = Path(__file__).with_name("fixtures") / "inat_taxon_names.ttl"
# the iNaturalist ids of the fixture, plus ids no item carries
IDS = [49591, 1545613, 97764, 430581, 962637, 72486, 55387, 47144, 3, 48460]

WD = rdflib.Namespace("http://www.wikidata.org/entity/")
WDT = rdflib.Namespace("http://www.wikidata.org/prop/direct/")
P = rdflib.Namespace("http://www.wikidata.org/prop/")
PS = rdflib.Namespace("http://www.wikidata.org/prop/statement/")
WIKIBASE = rdflib.Namespace("http://wikiba.se/ontology#")


def expected_rows(ids, langs) -> set[tuple]:
    """What the query must return, read from the Turtle file with rdflib and plain Python:
    (node_id, name, kind, lang, qid, property)."""
    g = rdflib.Graph().parse(FIXTURE, format="turtle")

    def statements(item, prop):
        for st in g.objects(item, P[prop]):
            if g.value(st, WIKIBASE.rank) != WIKIBASE.DeprecatedRank:
                yield g.value(st, PS[prop])

    out = set()
    wanted = {str(i) for i in ids}
    for item in set(g.subjects(P.P3151, None)):
        qid = str(item).rsplit("/", 1)[1]
        for inat in statements(item, "P3151"):
            if str(inat) not in wanted:
                continue
            node = f"inat:{inat}"
            for v in statements(item, "P225"):
                out.add((node, str(v), "synonym", "la", qid, "P225"))
            for v in statements(item, "P1843"):
                tag = v.language.lower()
                if any(tag == lang or tag.startswith(lang + "-") for lang in langs):
                    out.add((node, str(v), "vernacular", tag, qid, "P1843"))
            for syn in statements(item, "P1420"):
                for v in g.objects(syn, WDT.P225):
                    out.add((node, str(v), "synonym", "la", qid, "P1420"))
    return out


@pytest.fixture(scope="module")
def _names_server():
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        yield srv


@pytest.fixture
def names_endpoint(_names_server) -> LoopbackSparql:
    _names_server.reset()
    yield _names_server
    _names_server.reset()


def make_client(endpoint, **kw) -> SparqlClient:
    opts = dict(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=2.0, max_retries=4,
                backoff_base=0.005, backoff_max=0.02)
    opts.update(kw)
    return SparqlClient(**opts)


def rows(result) -> set[tuple]:
    return set(result.names.iter_rows())


@pytest.mark.parametrize("langs", [["en"], ["en", "de"], ["de"], ["en-us"]])
def test_names_match_an_independent_reading_of_the_graph(names_endpoint, langs):
    res = fetch_inat_taxon_names(make_client(names_endpoint), IDS, langs=langs, batch_size=3)
    assert rows(res) == expected_rows(IDS, langs)
    assert len(names_endpoint.requests) == 4  # ceil(10 / 3) batches, one request each
    assert all("(tests@taxoforge.invalid)" in r["agent"] for r in names_endpoint.requests)
    assert res.info["ids_requested"] == len(IDS) and res.info["batches_queried"] == 4
    assert res.info["dropped"] == {}
    assert res.info["query_time_first"] and res.info["endpoint"] == names_endpoint.url


def test_what_the_statements_model_means(names_endpoint):
    res = fetch_inat_taxon_names(make_client(names_endpoint), IDS, langs=["en"])
    by = res.names.group_by("node_id").agg(pl.col("name")).rows()
    names = {n: set(v) for n, v in by}
    # a preferred common name does not hide the normal-rank ones; deprecated ones are left out
    assert {"bluegill", "bluegill sunfish", "bream"} <= names["inat:49591"] and "sun perch" not in names["inat:49591"]
    # an item whose iNaturalist id statement is deprecated lends no names
    assert "jackfish" not in names["inat:55387"] and "northern pike" in names["inat:55387"]
    # regional English tags are kept as they are, lower case
    assert ("inat:430581", "African fountain grass", "vernacular", "en-gb") in {r[:4] for r in rows(res)}
    # taxon synonyms come with the synonym item's P225; an item without P225 yields nothing
    syn = res.names.filter(pl.col("property") == "P1420").select("node_id", "name").rows()
    assert sorted(syn) == [("inat:1545613", "Notropis hudsonius"), ("inat:430581", "Pennisetum setaceum"),
                           ("inat:962637", "Eichhornia crassipes"), ("inat:97764", "Phoxinus eos")]
    # ids no item carries give nothing
    assert not res.names.filter(pl.col("node_id").is_in(["inat:3", "inat:48460"])).height
    assert res.names_table().columns == ["node_id", "name", "kind", "lang", "source"]
    assert res.names_table()["source"].str.starts_with("wikidata:Q").all()  # the item that gave each name


def test_faults_are_retried_with_the_same_result(names_endpoint):
    clean = fetch_inat_taxon_names(make_client(names_endpoint), IDS, batch_size=4)
    names_endpoint.reset()
    names_endpoint.inject(("status", 429, {"Retry-After": "0"}), ("status", 503, {}), ("truncate",),
                          ("truncate_unannounced",), ("server_timeout",))
    res = fetch_inat_taxon_names(make_client(names_endpoint, max_retries=6), IDS, batch_size=4)
    assert res.names.equals(clean.names)
    assert res.info["requests"]["retries"] == 5


def test_interrupted_run_resumes_from_the_checkpoint(names_endpoint, tmp_path):
    ck = tmp_path / "ck"
    whole = fetch_inat_taxon_names(make_client(names_endpoint), IDS, batch_size=2)
    names_endpoint.reset()
    # the third request fails for good (HTTP 400 is not retried): the run stops there
    names_endpoint.on_request = lambda n: names_endpoint.inject(("status", 400, {})) if n == 2 else None
    with pytest.raises(SparqlError, match="HTTP 400|QueryBadFormed|400"):
        fetch_inat_taxon_names(make_client(names_endpoint), IDS, batch_size=2, checkpoint=ck)
    assert BatchCheckpoint(ck).count() == 2
    names_endpoint.reset()
    resumed = fetch_inat_taxon_names(make_client(names_endpoint), IDS, batch_size=2, checkpoint=ck)
    assert len(names_endpoint.requests) == 3  # 5 batches, 2 already done
    assert resumed.info["batches_from_checkpoint"] == 2 and resumed.info["batches_queried"] == 3
    assert resumed.names.equals(whole.names)
    names_endpoint.reset()
    again = fetch_inat_taxon_names(make_client(names_endpoint), IDS, batch_size=2, checkpoint=ck)
    assert names_endpoint.requests == [] and again.names.equals(whole.names)
    # another language is another query: not served from the checkpoint
    fetch_inat_taxon_names(make_client(names_endpoint), IDS, langs=["de"], batch_size=2, checkpoint=ck)
    assert len(names_endpoint.requests) == 5


@pytest.mark.parametrize("kw, match", [
    ({"ids": [1, "2x"]}, r"ids\[1\]: '2x' is not an iNaturalist taxon id"),
    ({"ids": [1, -5]}, r"ids\[1\]"),
    ({"ids": ["007"]}, r"ids\[0\]"),
    ({"ids": ['1" } ?s ?p ?o . #']}, r"ids\[0\]"),
    ({"langs": ["en_GB"]}, r"langs\[0\]: 'en_GB' is not a BCP-47 language tag"),
    ({"langs": ['en") } #']}, "not a BCP-47 language tag"),
    ({"langs": "en"}, "not the string"),
    ({"langs": []}, "at least one language"),
    ({"batch_size": 0}, "batch_size"),
])
def test_inputs_are_validated_before_any_request(names_endpoint, kw, match):
    args = {"ids": [49591], "langs": ["en"], "batch_size": 10, **kw}
    ids = args.pop("ids")
    with pytest.raises(ValueError, match=match):
        fetch_inat_taxon_names(make_client(names_endpoint), ids, **args)
    assert names_endpoint.requests == []


def test_render_refuses_unchecked_values():
    q = render("inat_taxon_names", external_ids=[5, "49591", 5], langs=["en", "pt-br", "en"])
    assert 'VALUES ?inat { "5" "49591" }' in q and 'VALUES ?lang { "en" "pt-br" }' in q
    with pytest.raises(ValueError, match="external id"):
        render("inat_taxon_names", external_ids=["5 } #"], langs=["en"])
    with pytest.raises(ValueError, match="empty batch"):
        render("inat_taxon_names", external_ids=[], langs=["en"])
    with pytest.raises(ValueError, match="LANGS"):
        render("inat_taxon_names", external_ids=[5])


def test_rows_an_endpoint_should_not_send_are_dropped_and_counted():
    """The query filters server-side; the client checks again, since any endpoint (or cache) may
    answer (one row per drop reason, plus one good row)."""
    E = "http://www.wikidata.org/entity/"
    raw = [
        ["5", E + "Q1", "P1843", "good name", "en-GB"],
        ["6", E + "Q1", "P1843", "not asked for", "en"],
        ["5", "http://www.wikidata.org/entity/statement/Q1-x", "P1843", "x", "en"],
        ["5", E + "Q1", "P999", "x", None],
        ["5", E + "Q1", "P1843", "   ", "en"],
        ["5", E + "Q1", "P1843", "no tag", None],
        ["5", E + "Q1", "P1843", "bad tag", "en_GB"],
        ["5", E + "Q1", "P1843", "Kiefer", "de"],
        ["5", E + "Q1", "P225", "Pinus tagged", "la"],
    ]
    names, dropped, examples = validate_name_rows(raw, {"5"}, ["en"])
    assert names.rows() == [("inat:5", "good name", "vernacular", "en-gb", "Q1", "P1843")]
    assert dropped == {"bad_lang_tag": 2, "empty_name": 1, "id_not_requested": 1, "item_not_a_qid": 1,
                       "lang_not_requested": 1, "scientific_name_with_lang_tag": 1, "unknown_property": 1}
    assert examples["id_not_requested"] == [f"6 {E}Q1 P1843 'not asked for'@en"]


def test_inat_ids_of_a_tree():
    nodes = pl.DataFrame({"node_id": ["inat:48460", "inat:1", "inat:47126", "inat:20", "other:5"],
                          "parent_id": [None, "inat:48460", "inat:48460", "inat:1", "inat:48460"],
                          "rank": [None, "kingdom", "kingdom", "phylum", "kingdom"]})
    tree = TreeTables("t", nodes)
    assert inat_ids(tree) == [1, 20, 47126, 48460]
    assert inat_ids(tree, ranks=["kingdom"]) == [1, 47126]
    assert inat_ids(tree, under=["inat:1"]) == [1, 20]
    with pytest.raises(ValueError, match="not a node"):
        inat_ids(tree, under=["inat:999"])


@pytest.mark.slow
def test_renamed_species_link_by_their_wikidata_synonyms(names_endpoint):
    """On the real iNaturalist tree, the names VLM4Bio and iNat2021 use for renamed species find
    their current taxon once the Wikidata names are merged, and English common names are there."""
    from taxoforge.sources.inaturalist import inat_tree

    inat = inat_tree()
    genera = ["Lepomis", "Hudsonius", "Chrosomus", "Cenchrus", "Pontederia", "Alopochen", "Esox", "Canis"]
    under = inat.nodes.filter((pl.col("rank") == "genus") & pl.col("label").is_in(genera))["node_id"].to_list()
    ids = inat_ids(inat, ranks=["species"], under=under)
    assert len(ids) > 50
    res = fetch_inat_taxon_names(make_client(names_endpoint), ids, langs=["en"], batch_size=100)
    assert res.info["ids_with_names"] == 8
    merged = merge_names(inat, res.names_table(), source="wikidata", source_version={"endpoint": names_endpoint.url})
    labels = pl.DataFrame({"dataset": "t", "label_text": ["Notropis hudsonius", "Phoxinus eos", "Pennisetum setaceum",
                                                          "Eichhornia crassipes", "Canis lupus familiaris"]})
    labels = labels.with_columns(pl.col("label_text").alias("label_id"))
    want = {"Notropis hudsonius": "inat:1545613", "Phoxinus eos": "inat:97764", "Pennisetum setaceum": "inat:430581",
            "Eichhornia crassipes": "inat:962637", "Canis lupus familiaris": "inat:47144"}
    before = resolve_labels(labels, inat.names, inat.nodes, partial=False, epithet_variants=False, genus_transfer=False)
    assert before.filter(pl.col("status") == "linked").height == 0
    after = resolve_labels(labels, merged.names, merged.nodes, partial=False, epithet_variants=False, genus_transfer=False)
    assert dict(after.select("label_text", "node_id").iter_rows()) == want
    assert set(after["method"]) == {"synonym"}
    # Wikidata's own P225 equal to iNaturalist's name adds nothing; a different one is a synonym
    drops = merged.info["name_sources"]["wikidata"]["dropped"]
    assert drops["same_as_scientific_name"] == 6
    kinds = {r[0]: r for r in name_kind_counts(merged).iter_rows()}
    assert kinds["vernacular"][1] == res.names.filter(pl.col("kind") == "vernacular").height
    assert merged.names.filter((pl.col("node_id") == "inat:49591") & (pl.col("name") == "bluegill")).height == 1
