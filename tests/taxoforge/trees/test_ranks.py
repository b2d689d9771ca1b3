"""The rank vocabulary and the table form of ancestor-at-rank (taxoforge.trees.ranks)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.ranks import GENUS_RANKS, INFRASPECIFIC_RANKS, SPECIES_RANKS, SPINE_RANKS, ancestor_at_rank

NODES = pl.DataFrame({
    "node_id": ["life", "k", "f", "g", "s", "ss", "lone"],
    "parent_id": [None, "life", "k", "f", "g", "s", None],
    "label": ["Life", "Animalia", "Esocidae", "Esox", "Esox americanus", "Esox americanus vermiculatus", "Lone"],
    "rank": [None, "kingdom", "family", "genus", "species", "subspecies", "species"],
})


def test_the_rank_vocabulary_is_disjoint_and_top_down():
    assert SPINE_RANKS == ("kingdom", "phylum", "class", "order", "family", "genus", "species")
    assert not set(INFRASPECIFIC_RANKS) & set(SPINE_RANKS)
    assert {"subspecies", "variety", "form", "infrahybrid", "forma", "natio"} <= set(INFRASPECIFIC_RANKS)
    assert set(SPECIES_RANKS) & set(SPINE_RANKS) == {"species"} and "genus" in GENUS_RANKS
    assert len(set(INFRASPECIFIC_RANKS)) == len(INFRASPECIFIC_RANKS)


def test_ancestor_at_rank_returns_id_and_label_and_null_where_none():
    got = ancestor_at_rank(NODES, ["ss", "g", "lone", "nowhere", "ss"], "genus")
    assert got.rows() == [("ss", "g", "Esox"), ("g", "g", "Esox"), ("lone", None, None), ("nowhere", None, None)]


def test_ancestor_at_rank_of_most_of_the_table_takes_the_whole_table_path():
    got = ancestor_at_rank(NODES, NODES["node_id"], "kingdom")
    assert dict(zip(got["node_id"], got["ancestor_id"])) == {
        "life": None, "k": "k", "f": "k", "g": "k", "s": "k", "ss": "k", "lone": None}


def test_a_parent_cycle_stops_after_max_steps_and_a_repeated_id_counts_once():
    cyc = pl.DataFrame({"node_id": ["a", "b", "a"], "parent_id": ["b", "a", None],
                        "rank": ["species", "species", "kingdom"]})
    got = ancestor_at_rank(cyc, ["a"], "genus", max_steps=50)
    assert got.rows() == [("a", None, None)]


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="parent_id"):
        ancestor_at_rank(NODES.drop("parent_id"), ["s"], "genus")


@pytest.mark.parametrize("rank", ["kingdom", "family", "genus", "species"])
def test_table_and_index_forms_agree(rank):
    """Taxonomy.ancestor_at_rank (index arrays) and the table form give the same nodes."""
    tree = Taxonomy(NODES.filter(pl.col("node_id") != "lone"))
    ids = tree.ids.tolist()
    idx = tree.ancestor_at_rank(np.arange(len(ids)), rank)
    by_index = {ids[i]: (ids[a] if a >= 0 else None) for i, a in enumerate(idx.tolist())}
    table = ancestor_at_rank(NODES, ids, rank)
    assert dict(zip(table["node_id"], table["ancestor_id"])) == by_index
