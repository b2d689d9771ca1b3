"""spanning_subtree: the kept nodes and their ancestors, with leaf flags of the subtree."""

from __future__ import annotations

import polars as pl

from taxoforge.trees.build import build_tree
from taxoforge.trees.subtree import spanning_subtree
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy


def test_subtree_keeps_ancestors_and_flags_its_own_leaves():
    edges = pl.DataFrame({"child": ["a", "b", "a1", "a2", "b1"], "parent": ["r", "r", "a", "a", "b"]})
    tree = TreeTables.from_build("full", build_tree(edges, source="s"))
    sub = spanning_subtree(tree, ["a1", "b"], "sub")
    assert sorted(sub.nodes["node_id"]) == ["a", "a1", "b", "r"]
    leaves = set(sub.nodes.filter(pl.col("is_leaf"))["node_id"])
    assert leaves == {"a1", "b"}  # b has a child in the full tree, none in the subtree
    tax = Taxonomy(sub.nodes)
    assert leaves == set(tax.ids[tax.is_leaf].tolist())
    assert sub.info["parent_taxonomy"] == "full"


def test_subtree_keeps_the_provenance_of_the_tree_it_was_cut_from():
    edges = pl.DataFrame({"child": ["a", "b", "a1"], "parent": ["r", "r", "a"]})
    tree = TreeTables.from_build("full", build_tree(edges, source="s", tie_seed=7),
                                 info={"source_versions": {"wordnet": "3.0"}})
    tree.info["snapshot"] = "full@0123456789ab"
    sub = spanning_subtree(tree, ["a1"], "sub", info={"source_versions": {"wordnet": "3.0", "classes": "0.2"}})
    assert sub.info["seed"] == 7 and sub.info["cycle_policy"] == "dfs_back_edges"
    assert sub.info["source_versions"] == {"wordnet": "3.0", "classes": "0.2"}  # given info wins
    assert sub.info["parent_snapshot"] == "full@0123456789ab"
    assert "snapshot" not in sub.info
    assert spanning_subtree(tree, ["a1"], "sub").info["source_versions"] == {"wordnet": "3.0"}
