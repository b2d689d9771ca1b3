"""A tree made from stored arrays (:meth:`Taxonomy.from_arrays`) answers as the tree made from
its nodes table does, without making the per-node Python objects."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.taxonomy import Taxonomy
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


@pytest.fixture(scope="module")
def pair():
    tables = make_tree(random_edges(n=400, extra=60))
    tax = Taxonomy.of(tables)
    stored = Taxonomy.from_arrays(pl.Series(tax.ids.tolist()), tax.parent_idx, tax.depth_arr,
                                  labels=pl.Series(tax._labels, dtype=pl.String), names=lambda: tables.names,
                                  preorder=tax._preorder)
    return tax, stored


def test_the_same_answers_as_the_taxonomy(pair):
    tax, stored = pair
    rng = np.random.default_rng(0)
    ids = [str(x) for x in rng.choice(tax.ids, 50)]
    assert stored.index_of(ids).tolist() == tax.index_of(ids).tolist()
    u, v = rng.integers(0, len(tax), 300), rng.integers(0, len(tax), 300)
    assert stored.lca_depth(u, v).tolist() == tax.lca_depth(u, v).tolist()
    assert stored.ids_of(u) == tax.ids_of(u) == tax.ids[u].tolist()
    assert stored.labels_of(u) == tax.labels_of(u)
    assert stored.has(ids + ["nope", None]).tolist() == tax.has(ids + ["nope", None]).tolist()
    assert stored.subtree_size().tolist() == tax.subtree_size().tolist() == tax._preorder[1].tolist()
    with pytest.raises(KeyError, match="unknown node id 'nope'"):
        stored.index_of(["nope"])
    assert "ids" not in stored.__dict__ and "_labels" not in stored.__dict__  # nothing per node made so far
    assert stored.ancestors(ids[0]) == tax.ancestors(ids[0]) and stored.root == tax.root and len(stored) == len(tax)
    assert stored.names(ids[0]) == tax.names(ids[0])  # the names table read when asked for
    assert stored.ids.tolist() == tax.ids.tolist()


def test_subtree_size_without_a_preorder_counts_level_by_level():
    tax = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"], "parent_id": [None, "r", "r", "a", "a"]}))
    assert tax.subtree_size().tolist() == [3, 1, 1, 1, 5]
    assert "preorder" not in tax._lca.__dict__


def test_index_of_takes_a_series_a_list_or_one_id_alike(pair):
    """A polars Series of ids (what the breakdowns pass: no Python list of 100k strings)
    gives what the list gives and what :meth:`Taxonomy.index_of` gives; unknown ids, nulls
    and non-strings are a ``KeyError`` naming the first of them and how many there are."""
    tax, stored = pair
    rng = np.random.default_rng(1)
    ids = [str(x) for x in rng.choice(tax.ids, 500)]  # repeats, any order
    want = tax.index_of(ids).tolist()
    assert stored.index_of(pl.Series(ids)).tolist() == want
    assert stored.index_of(pl.Series(ids, dtype=pl.Categorical)).tolist() == want
    assert stored.index_of(ids).tolist() == want == stored.index_of(tuple(ids)).tolist()
    assert stored.index_of(np.asarray(ids, dtype=object)).tolist() == want
    assert stored.index_of(ids[3]).tolist() == [want[3]]
    assert stored.index_of(pl.Series([], dtype=pl.String)).tolist() == stored.index_of([]).tolist() == []
    assert stored.index_of(pl.Series([], dtype=pl.String)).dtype == np.int64
    first, last = str(tax.ids[0]), str(tax.ids[-1])  # the ends of the binary search
    assert stored.index_of([last, first]).tolist() == [len(tax) - 1, 0]
    for bad, named, count in [([ids[0], "~after-every-id", ids[1]], "'~after-every-id'", 1),
                              (["", ids[0]], "''", 1),
                              ([ids[0], None, "nope"], "None", 2),
                              ([ids[0], 7], "7", 1)]:
        with pytest.raises(KeyError, match=f"unknown node id {named} \\({count} unknown\\)"):
            stored.index_of(bad)
        if not any(isinstance(x, int) for x in bad):
            with pytest.raises(KeyError, match=f"unknown node id {named} \\({count} unknown\\)"):
                stored.index_of(pl.Series(bad, dtype=pl.String))
        if all(isinstance(x, str) for x in bad):  # the in-memory tree says the same
            with pytest.raises(KeyError, match=f"unknown node id {named} \\({count} unknown\\)"):
                tax.index_of(bad)


def test_a_tree_of_arrays_alone_makes_its_nodes_table(pair):
    tax, stored = pair
    table = stored.nodes_table
    assert table["node_id"].to_list() == tax.ids.tolist() and table["label"].to_list() == tax.labels.tolist()
    assert table.schema["parent_id"] == pl.String and table["rank"].null_count() == len(tax)


def test_id_series_is_the_sorted_ids_as_strings_for_either_kind_of_tree():
    import polars as pl

    from taxoforge.trees.taxonomy import Taxonomy

    made = Taxonomy(pl.DataFrame({"node_id": ["r", "b", "a"], "parent_id": [None, "r", "r"]}))
    stored = Taxonomy.from_arrays(pl.Series(made.ids.tolist()), made.parent_idx, made.depth_arr)
    for t in (made, stored):
        assert t.id_series.dtype == pl.String and t.id_series.to_list() == made.ids.tolist() == ["a", "b", "r"]
    assert "ids" not in stored.__dict__  # the stored Series itself: no object array made for it


def test_ids_at_names_nodes_without_making_every_id_of_a_stored_tree():
    """``ids_at`` of a tree made from stored arrays reads its Series of ids: the object array
    of every id (:attr:`ids`) is not made, and the answer equals ``ids[indexes]``."""
    import numpy as np
    import polars as pl

    from taxoforge.trees.taxonomy import Taxonomy

    made = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"], "parent_id": [None, "r", "r", "a", "a"]}))
    stored = Taxonomy.from_arrays(pl.Series(made.ids.tolist()), made.parent_idx, made.depth_arr)
    idx = np.array([4, 0, 2])
    assert stored.ids_at(idx) == made.ids_at(idx) == made.ids[idx].tolist()
    assert "ids" not in stored.__dict__


def test_many_repeated_ids_searched_once_each_give_what_one_search_each_gives(pair):
    """A long list of ids that repeat (every model's rows name the same ground truths) is
    searched one distinct id at a time and joined back: the same positions, in order, with
    unknown ids, nulls and non-strings found nowhere."""
    tax, stored = pair
    rng = np.random.default_rng(2)
    ids = [str(x) for x in rng.choice(tax.ids, 40)]
    many = [ids[i] for i in rng.integers(0, len(ids), 20_000)]
    one_each = {x: int(stored.index_of([x])[0]) for x in ids}  # short lists: one binary search per id
    assert stored.index_of(many).tolist() == [one_each[x] for x in many] == tax.index_of(many).tolist()
    mixed = many[:10_000] + ["nope", None, 3] * 10
    assert stored.has(mixed).tolist() == [True] * 10_000 + [False] * 30
    with pytest.raises(KeyError, match=r"unknown node id 'nope' \(10 unknown\)"):
        stored.index_of(many[:10_000] + ["nope"] * 10)
