"""Kahn's peeling level by level, on one thread and on several: the same levels."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from taxoforge.trees import graph_kernels as kern
from taxoforge.trees import threads
from taxoforge.trees.frontiers import cycle_candidates, kahn_depths, level_ranges


@pytest.fixture
def four_cores(monkeypatch):
    """As on a machine with four cores, a thread for every 8 items: every level is wide."""
    monkeypatch.setattr(threads, "cpus", lambda: 4)
    monkeypatch.setattr(threads, "GRAIN", 8)


def random_graph(seed, n=80, m=160):
    rng = np.random.default_rng(seed)
    c, p = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = c != p
    return kern.sorted_unique_edges(c[keep], p[keep], n), n


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("t", [1, 4])
def test_cycle_candidates_keep_every_cycle_and_only_what_lies_between_cycles(four_cores, seed, t):
    (c, p), n = random_graph(seed)
    alive = cycle_candidates(c, p, n, t)
    g = csr_matrix((np.ones(len(c)), (p, c)), shape=(n, n))
    _, label = connected_components(g, directed=True, connection="strong")
    on_cycle = np.bincount(label)[label] > 1
    assert not (on_cycle & ~alive).any()
    dg = nx.DiGraph(zip(p.tolist(), c.tolist()))
    cyc = set(np.flatnonzero(on_cycle).tolist())
    for v in np.flatnonzero(alive & ~on_cycle).tolist():  # reached from a cycle and reaching one
        assert nx.ancestors(dg, v) & cyc and nx.descendants(dg, v) & cyc


def layered(seed, n=400, m=1500):
    rng = np.random.default_rng(seed)
    c = rng.integers(1, n, m)
    p = (c * rng.random(m)).astype(np.int64)  # parents before children: acyclic
    c, p = np.concatenate([c, np.arange(1, n)]), np.concatenate([p, np.zeros(n - 1, np.int64)])
    return kern.sorted_unique_edges(c, p, n), n


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("t", [1, 2, 4])
def test_kahn_depths_are_longest_paths(four_cores, seed, t):
    (c, p), n = layered(seed, n=60, m=150)
    depth, order, bounds = kahn_depths(c, p, n, 0, t)
    dg = nx.DiGraph(zip(p.tolist(), c.tolist()))
    for v in range(n):
        assert depth[v] == nx.dag_longest_path_length(dg.subgraph(nx.ancestors(dg, v) | {v}))
    assert (np.diff(depth[order]) >= 0).all() and sorted(order.tolist()) == list(range(n))
    assert (depth[order] == np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))).all()


@pytest.mark.parametrize("seed", range(4))
def test_the_levels_are_the_same_at_every_thread_count(four_cores, seed):
    (c, p), n = layered(seed)
    got = [kahn_depths(c, p, n, 0, t) for t in (1, 2, 3, 4)]
    for depth, order, bounds in got[1:]:
        assert (depth == got[0][0]).all() and (bounds == got[0][2]).all()
        for lvl in range(len(bounds) - 1):  # the same nodes in each level, in any order
            a, b = bounds[lvl], bounds[lvl + 1]
            assert sorted(order[a:b]) == sorted(got[0][1][a:b])


def test_level_ranges_split_wide_levels_and_join_narrow_ones(monkeypatch):
    monkeypatch.setattr(threads, "cpus", lambda: 2)
    monkeypatch.setattr(threads, "GRAIN", 10)
    bounds = np.array([0, 1, 3, 43, 45, 46])  # one wide level (40 nodes) among narrow ones
    steps = level_ranges(bounds, 0, 46)
    assert steps == [[(0, 3)], [(3, 23), (23, 43)], [(43, 46)]]
    assert level_ranges(bounds, 2, 44) == [[(2, 3)], [(3, 23), (23, 43)], [(43, 44)]]
    assert level_ranges(bounds, 0, 46, threads=1) == [[(0, 46)]]
