"""The pre-order and sparse-table LCA of :mod:`taxoforge.trees.lca` against a plain walk up
the tree, on random trees, for the table route and the climbing route alike."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.trees.lca import LcaIndex, floor_log2_table, min_sparse_table, preorder, range_min


def random_tree(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    parent = np.full(n, -1, dtype=np.int64)
    parent[1:] = [rng.integers(0, i) for i in range(1, n)]  # a parent before its child: one root, no cycle
    depth = np.zeros(n, dtype=np.int32)
    for i in range(1, n):
        depth[i] = depth[parent[i]] + 1
    return parent, depth


def walk_lca(parent: np.ndarray, depth: np.ndarray, u: int, v: int) -> int:
    while depth[u] > depth[v]:
        u = parent[u]
    while depth[v] > depth[u]:
        v = parent[v]
    while u != v:
        u, v = parent[u], parent[v]
    return int(u)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lcas_and_ancestor_tests_agree_with_a_walk(seed):
    parent, depth = random_tree(600, seed)
    rng = np.random.default_rng(seed + 10)
    u, v = rng.integers(0, 600, 2000), rng.integers(0, 600, 2000)
    u[:50] = v[:50]  # pairs of one node
    want = np.array([walk_lca(parent, depth, a, b) for a, b in zip(u, v)])
    few = LcaIndex(parent, depth)
    assert np.array_equal(few.lca_depth(u[:2], v[:2]), depth[want[:2]])  # climbing, no table built
    assert "_depth_table" not in few.__dict__
    ix = LcaIndex(parent, depth)
    assert np.array_equal(ix.lca(u, v), want)
    assert np.array_equal(ix.lca_depth(u, v), depth[want])
    assert "_depth_table" in ix.__dict__
    assert np.array_equal(ix.is_ancestor(want, u), np.ones(len(u), bool))
    anc = np.array([walk_lca(parent, depth, a, b) == a for a, b in zip(v, u)])
    assert np.array_equal(ix.is_ancestor(v, u), anc)


def test_preorder_positions_and_sizes():
    parent, depth = random_tree(300, 5)
    pre, size = preorder(parent, depth)
    assert sorted(pre.tolist()) == list(range(300)) and pre[0] == 0 and size[0] == 300
    for child in range(1, 300):  # a child's interval lies inside its parent's
        p = parent[child]
        assert pre[p] < pre[child] and pre[child] + size[child] <= pre[p] + size[p]


def test_range_minimum_with_and_without_the_log_table():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 1000, 257)
    table = min_sparse_table(values)
    lo = rng.integers(0, 257, 500)
    hi = np.maximum(lo, rng.integers(0, 257, 500))
    want = np.array([values[a:b + 1].min() for a, b in zip(lo, hi)])
    assert np.array_equal(range_min(table, 257, lo, hi), want)
    assert np.array_equal(range_min(table, 257, lo, hi, floor_log2_table(257)), want)
