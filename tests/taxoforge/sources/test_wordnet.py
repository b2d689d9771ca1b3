"""WordNet 3.0 set-up and the noun graph → tree (depth = NLTK's max_depth)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from taxoforge.sources import wordnet as wnsrc
from taxoforge.sources import wordnet_data as wndata
from taxoforge.trees.build import build_tree


@pytest.fixture(scope="module")
def wn():
    try:
        return wndata.ensure_wordnet(allow_download=False)
    except wndata.WordNetUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def graph(wn):
    return wnsrc.noun_graph()


def test_noun_graph_has_every_synset_and_both_edge_kinds(graph):
    edges, names = graph
    assert names["node_id"].n_unique() == 82_115
    rel = dict(edges.group_by("relation").len().iter_rows())
    assert rel["hypernym"] > 70_000 and rel["instance_hypernym"] > 7_000
    dog = names.filter(pl.col("node_id") == "wn:n02084071")
    assert {"dog", "domestic dog", "Canis familiaris"} <= set(dog["name"])
    assert dog.filter(pl.col("kind") == "label")["name"].to_list() == ["dog"]


def test_tree_depth_equals_nltk_max_depth_for_every_noun_synset(wn, graph):
    edges, _ = graph
    built = build_tree(edges, source="wn", tie_seed=0)
    assert built.root_id == "wn:n00001740"  # entity.n.01
    assert built.stats["cycle_edges_removed"] == 0
    depth = dict(zip(built.nodes["node_id"].to_list(), built.nodes["depth"].to_list()))
    mismatches = [(s.name(), depth[wnsrc.wnid(s.offset())], s.max_depth())
                  for s in wn.all_synsets("n") if depth[wnsrc.wnid(s.offset())] != s.max_depth()]
    assert mismatches == []
    assert len(depth) == 82_115


def test_lexnames_from_man_page_and_builtin_agree(tmp_path):
    builtin = wndata.lexnames_text(man_pages=())
    lines = builtin.splitlines()
    assert len(lines) == 45 and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    if any(p.exists() for p in wndata.LEXNAMES_MAN_PAGES):
        assert wndata.lexnames_text() == builtin


def test_system_wordnet_is_copied_into_an_nltk_data_folder(tmp_path, monkeypatch):
    system = next((d for d in wndata.SYSTEM_WORDNET_DIRS if (d / "data.noun").exists()), None)
    if system is None:
        pytest.skip("no system WordNet (Debian wordnet-base) installed")
    target = wndata.build_nltk_wordnet(system, tmp_path / "nltk_data")
    assert (target / "lexnames").exists() and not (target / "data.noun").is_symlink()
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data"), *nltk.data.path])

    reader = WordNetCorpusReader(str(target), None)
    assert reader.get_version() == "3.0"
    assert reader.synset("dog.n.01").offset() == 2084071


def test_unavailable_wordnet_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(wndata, "_load_from_path", lambda: None)
    monkeypatch.setenv("TAXOFORGE_NLTK_DATA", str(tmp_path))
    with pytest.raises(wndata.WordNetUnavailable, match="apt-get install wordnet-base"):
        wndata.ensure_wordnet(allow_download=False, system_dirs=(Path(tmp_path / "none"),))
