"""Label linking against Wikidata labels and aliases: OVEN-style QID lists and name-only label sets."""

from __future__ import annotations

import json

import polars as pl
import pytest

from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.sources.wikidata.linking import (
    link_report,
    link_to_wikidata,
    read_name_label_set,
    read_qid_label_set,
)
from taxoforge.sources.wikidata.tree import build_wikidata_tree
from taxoforge.text import normalise_text


@pytest.fixture(scope="module")
def tree(store, tmp_path_factory):
    """The tree of everything the test endpoint serves (art objects, publication types, test items)."""
    import pyoxigraph as ox

    p = tmp_path_factory.mktemp("wd") / "all.nt"
    p.write_bytes(store.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph()))
    seeds = ["Q12418", "Q990000001", "Q990000101"]
    g = read_dump(p)  # all P279 edges
    g2 = read_dump(p, seed_qids=seeds)  # plus the seeds' P31 edges and names
    from taxoforge.sources.wikidata.graph import WikidataGraph

    both = WikidataGraph(edges=pl.concat([g.edges, g2.edges]), names=pl.concat([g.names, g2.names]), seed_node_ids=g2.seed_node_ids)
    return build_wikidata_tree(both, exclude={})


def test_oven_qid_list_reads(wikidata_dir):
    oven = read_qid_label_set(wikidata_dir / "oven_bm25_candidate_qid_labels.tsv")
    assert oven.height == 6875
    assert oven.columns == ["dataset", "label_id", "label_text", "external_id"]
    assert oven["label_id"].equals(oven["external_id"], check_names=False)
    assert oven.filter(pl.col("label_id") == "Q16")["label_text"].to_list() == ["Canada"]


def test_bad_qid_names_file_and_line(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("qid\tlabel\nQ1\tuniverse\nX7\tbad\n")
    with pytest.raises(ValueError, match=r"q\.tsv:3: 'X7' is not a Wikidata QID"):
        read_qid_label_set(p)


def test_oven_links_by_qid_then_by_name(tree):
    labels = pl.DataFrame(
        {
            "dataset": ["oven"] * 5,
            "label_id": ["Q12418", "Q3305213", "Q5", "Q838948", "Q424242"],
            "label_text": ["Mona Lisa", "Painting (art)", "human", "some other title", "painting"],
            "external_id": ["Q12418", "Q3305213", "Q5", "Q838948", "Q424242"],
        }
    )
    links = link_to_wikidata(labels, tree)
    got = {r["label_id"]: (r["status"], r["method"], r["node_id"]) for r in links.iter_rows(named=True)}
    assert got["Q12418"] == ("linked", "external_id", "wd:Q12418")
    assert got["Q3305213"] == ("linked", "external_id", "wd:Q3305213")
    assert got["Q838948"] == ("linked", "external_id", "wd:Q838948")
    assert got["Q5"] == ("unmatched", None, None)  # not in the tree, no name match
    assert got["Q424242"] == ("linked", "exact", "wd:Q3305213")  # unknown QID, name "painting" matches


def test_real_oven_list_against_the_tree(wikidata_dir, tree):
    oven = read_qid_label_set(wikidata_dir / "oven_bm25_candidate_qid_labels.tsv")
    links = link_to_wikidata(oven, tree)
    in_tree = set(tree.nodes["node_id"])
    by_id = links.filter(pl.col("method") == "external_id")
    assert set(by_id["node_id"]) == {f"wd:{q}" for q in oven["external_id"]} & in_tree
    rep = link_report(links)
    s = rep["summary"]
    assert s["labels"] == 6875 and s["linked"] + s["ambiguous"] + s["unmatched"] == 6875
    assert rep["unmatched"].height == s["unmatched"] and rep["ambiguous"].height == s["ambiguous"]


def _check_links(links: pl.DataFrame, names: pl.DataFrame) -> None:
    """Every outcome agrees with the names: linked rows name a node with a matching name,
    ambiguous rows have ≥ 2 matching candidates, unmatched rows match no name at all."""
    norm = names.with_columns(pl.col("name").map_elements(normalise_text, return_dtype=pl.String).alias("n"))
    by_norm: dict[str, set[str]] = {}
    for nid, n in norm.select("node_id", "n").iter_rows():
        by_norm.setdefault(n, set()).add(nid)
    for r in links.iter_rows(named=True):
        hits = by_norm.get(normalise_text(r["label_text"]), set())
        if r["status"] == "linked":
            assert r["node_id"] in hits
        elif r["status"] == "ambiguous":
            assert len(r["candidates"]) >= 2 and set(r["candidates"]) <= hits
        else:
            assert not hits, r


LABEL_SETS = [
    ("lmms_owc_classnames/food101_metadata.csv", None, 101),
    ("lmms_owc_classnames/sun397_metadata.csv", None, 397),
    ("lmms_owc_classnames/caltech101_metadata.csv", None, 100),
    ("lmms_owc_classnames/stanford_cars_metadata.csv", None, 196),
    ("lmms_owc_classnames/flowers102_metadata.csv", None, 102),
    ("foci_classnames/fgvc_aircraft_classes.tsv", None, 100),
    ("clip_benchmark/en_classnames.json", "flowers", 102),
]


@pytest.mark.parametrize("rel,key,n", LABEL_SETS)
def test_name_only_label_sets(shared_data, tree, rel, key, n):
    path = shared_data / "label_sets" / rel
    if not path.exists():
        pytest.skip(f"missing {path}")
    labels = read_name_label_set(path, key=key)
    assert labels.height == n and labels["external_id"].null_count() == n
    links = link_to_wikidata(labels, tree)
    assert links.height == n
    _check_links(links, tree.names)
    rep = link_report(links)
    assert rep["summary"]["unmatched"] == rep["unmatched"].height


@pytest.mark.parametrize("rel", ["lmms_owc_classnames/caltech101_metadata.csv",
                                 "foci_classnames/imagenet-rendition_classes.tsv"])
def test_object_classes_meet_art_object_classes(shared_data, tree, rel):
    """Object class names (Caltech101's 'ewer', 'menorah', ImageNet-R's 'vase' …) meet the real
    art-object classes: exactly the labels whose normal form is a node name are found."""
    labels = read_name_label_set(shared_data / "label_sets" / rel)
    links = link_to_wikidata(labels, tree)
    names = {normalise_text(n) for n in tree.names["name"]}
    want = {t for t in labels["label_text"] if normalise_text(t) in names}
    found = set(links.filter(pl.col("status") != "unmatched")["label_text"])
    assert found == want and len(want) >= 3
    assert set(links.filter(pl.col("status") == "linked")["method"]) <= {"exact", "normalised"}


def test_ambiguous_names_are_reported(tree):
    # two made-up items sharing an alias: linking that alias is ambiguous, with both candidates
    names = pl.concat([tree.names, pl.DataFrame({"node_id": ["wd:Q990000001", "wd:Q990000101"],
                                                  "name": ["shared alias"] * 2, "kind": ["alias"] * 2,
                                                  "lang": ["en"] * 2})], how="diagonal_relaxed")
    labels = pl.DataFrame({"dataset": ["d"], "label_id": ["0"], "label_text": ["Shared-Alias"]})
    links = link_to_wikidata(labels, names)
    r = links.row(0, named=True)
    assert r["status"] == "ambiguous" and r["candidates"] == ["wd:Q990000001", "wd:Q990000101"]
    assert link_report(links)["ambiguous"].height == 1
    # a label beats an alias of another item
    names2 = pl.concat([names, pl.DataFrame({"node_id": ["wd:Q12418"], "name": ["shared alias"],
                                             "kind": ["label"], "lang": ["en"]})], how="diagonal_relaxed")
    r2 = link_to_wikidata(labels, names2).row(0, named=True)
    assert r2["status"] == "linked" and r2["node_id"] == "wd:Q12418"


def test_reader_errors(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("idx,name\n0,a\n")
    with pytest.raises(ValueError, match="class_name"):
        read_name_label_set(p)
    j = tmp_path / "x.json"
    j.write_text(json.dumps({"a": ["x"]}))
    with pytest.raises(ValueError, match="key="):
        read_name_label_set(j)
    assert read_name_label_set(j, key="a")["label_text"].to_list() == ["x"]
