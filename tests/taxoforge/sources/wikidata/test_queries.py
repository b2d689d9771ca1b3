"""The .rq files: loaded by name, rendered only with validated values, and run through
SPARQLWrapper over HTTP against a real SPARQL engine holding the real Wikidata data."""

from __future__ import annotations

import networkx as nx
import pytest

from taxoforge.sources.wikidata.ids import validate_qid, validate_qids
from taxoforge.sources.wikidata.queries import QUERY_PACKAGE, language_tag, load_query, query_dir, query_names, render
from taxoforge.sources.wikidata.sparql import SparqlClient


def qid(binding: dict, var: str) -> str:
    return binding[var]["value"].rsplit("/", 1)[1]


@pytest.fixture
def client(endpoint) -> SparqlClient:
    return SparqlClient(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=5, backoff_base=0.01,
                        min_interval=0)


def test_query_files_are_found():
    assert {"instance_of", "subclass_of", "labels"} <= set(query_names())
    assert query_dir().name == "wikidata" and query_dir().parent.name == "sql"
    assert "wdt:P279" in load_query("subclass_of")


def test_query_dir_env_override(tmp_path, monkeypatch):
    (tmp_path / "wikidata").mkdir()
    (tmp_path / "wikidata" / "labels.rq").write_text("SELECT * WHERE { VALUES ?item { {{ITEMS}} } }\n")
    monkeypatch.setenv("TAXOFORGE_SQL_DIR", str(tmp_path))
    assert query_dir() == tmp_path / "wikidata"
    assert render("labels", items=["Q1"]).strip() == "SELECT * WHERE { VALUES ?item { wd:Q1 } }"


def test_query_files_are_package_data_of_taxoforge_sql():
    from importlib.resources import files

    assert query_dir() == files(QUERY_PACKAGE) / "wikidata"
    assert load_query("labels") == (files(QUERY_PACKAGE) / "wikidata" / "labels.rq").read_text(encoding="utf-8")


def test_query_dir_env_override_without_the_folder_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_SQL_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="TAXOFORGE_SQL_DIR"):
        load_query("labels")


def test_unknown_query_names_the_known_ones():
    with pytest.raises(KeyError, match="instance_of"):
        load_query("no_such_query")
    with pytest.raises(ValueError):
        load_query("../../etc/passwd")


@pytest.mark.parametrize("bad", ["Q", "Q01", "q5", "P31", "Q5}", "Q5 } DELETE WHERE { ?s ?p ?o", 5, None,
                                 "wd:Q5>", "Q5 Q6", "Q\u0665"])
def test_nothing_unchecked_reaches_a_query(bad):
    with pytest.raises(ValueError, match="not a Wikidata QID|expected a Wikidata QID"):
        render("instance_of", items=["Q1", bad])


def test_lang_is_validated():
    assert 'LANG(?name) = "pt-br"' in render("labels", items=["Q1"], lang="pt-br")
    for bad in ['en") } #', "e", ""]:
        with pytest.raises(ValueError, match="language tag"):
            render("labels", items=["Q1"], lang=bad)


# BCP 47 (RFC 5646) tags, and the Wikidata codes that are tags too.
GOOD_TAGS = ["en", "EN", "en-GB", "en-gb", "zh-Hant", "zh-Hant-TW", "sr-Latn-RS", "sr-Cyrl", "es-419", "pt-BR",
             "de-CH-1901", "sl-rozaj-biske", "be-tarask", "zh-min-nan", "roa-tara", "simple", "mul",
             "en-US-x-twain", "x-whatever", "i-klingon", "en-GB-oed", "de-DE-u-co-phonebk"]
# Not tags — among them every way out of the string literal the tag is written into.
BAD_TAGS = ['en") } #', 'en"', "en'", "en\n", "en gb", "en_GB", "en-", "-en", "en--gb", "e", "",
            "en-GB;DROP", "toolongtag", "en-abcdefghi", "zh-\u0661\u0662\u0663", "\u0435n", "en-GB\u200b",
            "en-x", "en-a", "x", "en}", "en\\u0022", b"en", 5]


@pytest.mark.parametrize("tag", GOOD_TAGS)
def test_bcp47_tag_refused_attack_valid_tags_are_accepted(tag):
    """``en-GB``, ``zh-Hant``, ``sr-Latn-RS`` were refused; every BCP-47 form is taken, in
    lower case (tags are case-insensitive; WDQS stores them lower-cased)."""
    assert language_tag(tag) == tag.lower()
    assert f'LANG(?name) = "{tag.lower()}"' in render("labels", items=["Q1"], lang=tag)


@pytest.mark.parametrize("tag", BAD_TAGS)
def test_bcp47_tags_still_refuse_sparql_injection(tag):
    with pytest.raises(ValueError, match="BCP-47 language tag"):
        render("labels", items=["Q1"], lang=tag)


def test_regional_and_script_tags_select_their_labels_on_a_real_engine():
    """Against Oxigraph on loopback: ``en-GB`` returns the British label only, ``zh-Hant``
    the traditional-script one, however the tag is cased."""
    import pyoxigraph as ox

    from tests.taxoforge.sources.wikidata.loopback_sparql import RDFS_LABEL, WD, LoopbackSparql

    labels = {"en": "color", "en-GB": "colour", "zh-Hans": "颜色", "zh-Hant": "顏色", "sr-Latn-RS": "boja",
              "sr-Cyrl-RS": "боја"}
    store = ox.Store()
    store.extend(ox.Quad(ox.NamedNode(WD + "Q1075"), ox.NamedNode(RDFS_LABEL), ox.Literal(text, language=tag))
                 for tag, text in labels.items())
    with LoopbackSparql(store) as srv:
        c = SparqlClient(endpoint=srv.url, contact="tests@taxoforge.invalid", timeout=5, min_interval=0)
        for tag in ["en-GB", "EN-gb", "zh-Hant", "sr-Latn-RS", "en"]:
            rows = c.select(render("labels", items=["Q1075"], lang=tag))
            assert [r["name"]["value"] for r in rows] == [labels[next(k for k in labels if k.lower() == tag.lower())]]


def test_placeholders_must_be_filled():
    with pytest.raises(ValueError, match="LANG"):
        render("labels", items=["Q1"])
    with pytest.raises(ValueError, match="empty batch"):
        render("labels", items=[], lang="en")
    with pytest.raises(ValueError, match="no placeholder"):
        render("instance_of", items=["Q1"], lang="en")


def test_validate_ids():
    assert validate_qids(["Q10", "wd:Q2", "http://www.wikidata.org/entity/Q2"]) == ["Q2", "Q10"]
    with pytest.raises(ValueError, match=r"seeds\[1\]"):
        validate_qids(["Q1", "Q1x"], where="seeds")
    assert validate_qid("wd:Q42") == "Q42"


def test_subclass_of_rq_over_http(client, all_p279):
    classes = sorted(n for n in all_p279 if all_p279.out_degree(n))[:40]
    rows = client.select(render("subclass_of", items=classes), name="subclass_of")
    got = {(qid(r, "class"), qid(r, "super")) for r in rows}
    want = {(c, p) for c in classes for p in all_p279.successors(c)}
    assert got == want and len(got) > 40


def test_instance_of_rq_over_http(client, instances):
    rows = client.select(render("instance_of", items=list(instances)), name="instance_of")
    got = {(qid(r, "item"), qid(r, "class")) for r in rows}
    want = {(q, c) for q, spec in instances.items() for c in spec["classes"]}
    assert got == want


def test_labels_rq_over_http(client, wikidata_dir, instances):
    import polars as pl

    tsv = pl.read_csv(wikidata_dir / "vandycite_art_object_classes_P279_edges.tsv", separator="\t", quote_char=None)
    labels = dict(zip(tsv["child_qid"], tsv["child_label_en"]))
    some = sorted(labels)[:30]
    rows = client.select(render("labels", items=some + ["Q12418"], lang="en"), name="labels")
    got_labels = {(qid(r, "item"), r["name"]["value"]) for r in rows if r["kind"]["value"] == "label"}
    assert got_labels == {(q, labels[q]) for q in some} | {("Q12418", "Mona Lisa")}
    aliases = {r["name"]["value"] for r in rows if r["kind"]["value"] == "alias"}
    assert aliases == set(instances["Q12418"]["aliases"])
    assert all(r["name"].get("xml:lang") == "en" for r in rows)
    # another language: the data has English only
    assert client.select(render("labels", items=some, lang="de")) == []


def test_closure_walk_reaches_the_root(client, all_p279):
    """Level-by-level subclass_of.rq from painting reaches exactly its ancestors, Q35120 among them."""
    frontier, seen = {"Q3305213"}, set()
    while frontier:
        seen |= frontier
        rows = client.select(render("subclass_of", items=sorted(frontier)))
        frontier = {qid(r, "super") for r in rows} - seen
    assert seen - {"Q3305213"} == nx.descendants(all_p279, "Q3305213")
    assert "Q35120" in seen
