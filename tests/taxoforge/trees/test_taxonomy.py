"""Taxonomy queries against networkx on random trees, and its refusal of non-trees."""

from __future__ import annotations

import networkx as nx
import numpy as np
import polars as pl
import pytest

from taxoforge.trees.taxonomy import Taxonomy, TreeError


def random_tree(n: int, seed: int) -> tuple[pl.DataFrame, nx.DiGraph]:
    rng = np.random.default_rng(seed)
    ids = [f"n{i:05d}" for i in range(n)]
    parents = [None] + [ids[int(rng.integers(0, i))] for i in range(1, n)]
    g = nx.DiGraph()
    g.add_node(ids[0])
    g.add_edges_from((p, c) for c, p in zip(ids, parents) if p is not None)
    order = rng.permutation(n)  # the table's row order must not matter
    df = pl.DataFrame({"node_id": [ids[i] for i in order], "parent_id": [parents[i] for i in order]},
                      schema={"node_id": pl.String, "parent_id": pl.String})
    return df, g


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (5, 2), (200, 3), (3000, 4)])
def test_lca_depth_ancestors_match_networkx(n, seed):
    df, g = random_tree(n, seed)
    tax = Taxonomy(df)
    root = tax.root
    rng = np.random.default_rng(seed)
    ids = tax.ids
    u = rng.integers(0, n, 400)
    v = rng.integers(0, n, 400)
    pairs = list(zip(ids[u], ids[v]))
    expected = dict(nx.tree_all_pairs_lowest_common_ancestor(g, root=root, pairs=pairs))
    got = ids[tax.lca_idx(u, v)]
    assert [expected[p] for p in pairs] == got.tolist()
    depth = nx.shortest_path_length(g, root)
    assert tax.lca_depth(u, v).tolist() == [depth[expected[p]] for p in pairs]
    for node in ids[:50]:
        assert tax.ancestors(node) == nx.shortest_path(g, root, node)
        assert tax.depth(node) == depth[node]
        assert sorted(tax.children(node)) == sorted(g.successors(node))
        leaves = sorted(d for d in nx.descendants(g, node) | {node} if g.out_degree(d) == 0)
        assert tax.leaf_descendants(node) == leaves
    d2 = sorted(k for k, d in depth.items() if d == 2)
    assert tax.nodes_at_depth(2) == d2


def test_hp_hr_identity_via_lca_depth():
    """|anc(a) ∩ anc(b)| = depth(lca) + 1 (docs/method.md#hierarchical-measures)."""
    df, _ = random_tree(500, 9)
    tax = Taxonomy(df)
    rng = np.random.default_rng(0)
    for a, b in rng.integers(0, 500, (100, 2)):
        inter = set(tax.ancestors(tax.ids[a])) & set(tax.ancestors(tax.ids[b]))
        assert len(inter) == tax.lca_depth(np.array([a]), np.array([b]))[0] + 1


def test_names_labels_and_subtree():
    nodes = pl.DataFrame({"node_id": ["r", "a", "b", "c"], "parent_id": [None, "r", "r", "a"],
                          "label": ["root", "A", "B", "C"]})
    names = pl.DataFrame({"node_id": ["a", "a", "c"], "name": ["A", "alpha", "C"], "kind": ["label", "alias", "label"],
                          "lang": ["en"] * 3})
    tax = Taxonomy(nodes, names)
    assert tax.label("a") == "A" and tax.names("a") == ["A", "alpha"] and tax.names("b") == []
    assert "c" in tax and "zz" not in tax
    sub = tax.subtree(["c"])
    assert sorted(sub["node_id"].to_list()) == ["a", "c", "r"]
    with pytest.raises(KeyError, match="zz"):
        tax.index_of(["a", "zz"])


@pytest.mark.parametrize(
    "node_ids,parent_ids,message",
    [
        (["a", "b"], [None, None], "exactly one root"),
        (["a", "b"], [None, "x"], "not a node"),
        (["a", "b", "c"], [None, "c", "b"], "not reachable"),
        (["a", "a"], [None, "a"], "more than once"),
    ],
)
def test_not_a_tree_is_refused_with_a_clear_error(node_ids, parent_ids, message):
    with pytest.raises(TreeError, match=message):
        Taxonomy(pl.DataFrame({"node_id": node_ids, "parent_id": parent_ids}, schema={"node_id": pl.String, "parent_id": pl.String}))


def test_wrong_depth_column_is_refused():
    with pytest.raises(TreeError, match="depth column"):
        Taxonomy(pl.DataFrame({"node_id": ["a", "b"], "parent_id": [None, "a"], "depth": [0, 2]}))
