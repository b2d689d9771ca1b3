"""English names of a tree's taxa from WordNet 3.0's noun synsets (the installed WordNet, never downloaded)."""

from __future__ import annotations

import polars as pl
import pytest

from taxoforge.sources.wordnet_data import WordNetUnavailable
from taxoforge.sources.wordnet_files import wordnet_nouns
from taxoforge.sources.wordnet_names import with_wordnet_names, wordnet_english_names
from taxoforge.trees.tables import TreeTables


@pytest.fixture(scope="module")
def wn():
    try:
        return wordnet_nouns()
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))


def _tree() -> TreeTables:
    rows = [("t:life", None, 0, "Life", None), ("t:an", "t:life", 1, "Animalia", "kingdom"),
            ("t:pl", "t:life", 1, "Plantae", "kingdom"),
            ("t:fel", "t:an", 2, "Felidae", "family"), ("t:pan", "t:fel", 3, "Panthera", "genus"),
            ("t:leo", "t:pan", 4, "Panthera leo", "species"), ("t:ana", "t:an", 2, "Anatidae", "family"),
            ("t:anas", "t:ana", 3, "Anas", "genus"), ("t:mal", "t:anas", 4, "Anas platyrhynchos", "species"),
            ("t:acer", "t:pl", 2, "Acer", "genus"),
            # a homonym: two genera named Morus (a plant, a bird) get no English name by that Latin name
            ("t:morus_pl", "t:pl", 2, "Morus", "genus"), ("t:morus_an", "t:an", 2, "Morus", "genus")]
    nodes = pl.DataFrame(rows, schema=["node_id", "parent_id", "depth", "label", "rank"], orient="row")
    names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"),
                         pl.lit("la").alias("lang"))
    return TreeTables("toy", nodes, names, info={"source_versions": {"toy": "1"}})


def test_binomials_and_genera_get_their_english_names_with_the_synset(wn):
    got = wordnet_english_names(_tree(), wn)
    assert set(got.columns) == {"node_id", "name", "kind", "lang", "source"}
    by = {(r["node_id"], r["name"]): r for r in got.iter_rows(named=True)}
    assert by[("t:mal", "mallard")]["source"] == "wordnet:mallard.n.01"
    assert by[("t:leo", "lion")]["source"] == "wordnet:lion.n.01"
    assert ("t:acer", "maple") in by  # a member of genus_Acer that is no taxon itself
    assert set(got["kind"]) == {"vernacular"} and set(got["lang"]) == {"en"}
    assert not got.filter(pl.col("node_id").str.starts_with("t:morus")).height  # ambiguous Latin name
    # an English name goes to one node only, and never a Latin one
    assert got.group_by(pl.col("name").str.to_lowercase()).agg(pl.col("node_id").n_unique())["node_id"].max() == 1
    assert "Panthera leo" not in got["name"].to_list()


def test_merged_into_the_names_with_source_and_version(wn):
    t = with_wordnet_names(_tree(), wn)
    added = t.names.filter(pl.col("source").is_not_null())
    assert added.height and added["source"].str.starts_with("wordnet:").all()
    assert t.names.filter(pl.col("kind") == "scientific")["source"].is_null().all()  # the tree's own names
    v = t.info["source_versions"]["wordnet"]
    assert v["wordnet"] == "3.0" and len(v["data.noun"]) == 64 and "folder" not in v  # no local path
    assert t.info["source_versions"]["toy"] == "1"


_TWO_MERONYMS = """
import json, polars as pl
from taxoforge.sources.wordnet_names import wordnet_english_names
from taxoforge.trees.tables import TreeTables
rows = [("t:life", None, 0, "Life", None), ("t:an", "t:life", 1, "Animalia", "kingdom"),
        ("t:bos", "t:an", 2, "Bos", "genus"), ("t:myr", "t:an", 2, "Myrmeleon", "genus")]
nodes = pl.DataFrame(rows, schema=["node_id", "parent_id", "depth", "label", "rank"], orient="row")
names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"), pl.lit("la").alias("lang"))
got = wordnet_english_names(TreeTables("toy", nodes, names, info={"source_versions": {"toy": "1"}}))
print(json.dumps(got.select("node_id", "name", "source").rows()))
"""


def test_a_name_given_by_two_members_of_a_genus_has_the_same_source_in_every_process(wn):
    # "ox" (ox.n.01, ox.n.02 under genus Bos) and "ant lion" (ant_lion.n.02, doodlebug.n.03 under
    # Myrmeleon): NLTK keeps a synset's member meronyms in a set, whose order follows the
    # process's string hashing; the first one read must not, or every build publishes another version
    import json
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    runs = [subprocess.run([sys.executable, "-c", _TWO_MERONYMS], capture_output=True, text=True, cwd=REPO, timeout=600,
                           env={**os.environ, "PYTHONHASHSEED": seed}) for seed in ("1", "2", "3")]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    got = [json.loads(r.stdout) for r in runs]
    assert got[0] == got[1] == got[2]
    by = {(n, name): src for n, name, src in got[0]}
    assert by[("t:bos", "ox")] == "wordnet:ox.n.02" and by[("t:myr", "ant lion")] == "wordnet:ant_lion.n.02"


def test_an_nltk_reader_is_refused_with_what_is_expected():
    with pytest.raises(TypeError, match=r"wordnet_english_names: expected WordNet's noun synsets .*got object"):
        wordnet_english_names(_tree(), object())
