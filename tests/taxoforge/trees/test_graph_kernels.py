"""The compiled graph kernels against numpy, scipy and networkx on random inputs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from taxoforge.trees import graph_kernels as kern


@pytest.mark.parametrize("top", [1, 2, 4095, 4096, 10**6, 2**40, 2**62])
def test_radix_argsort_is_a_stable_sort(top):
    rng = np.random.default_rng(top % 1000)
    keys = rng.integers(0, top, 5_000, dtype=np.int64)
    order, s = kern.radix_argsort(keys)
    assert (order == np.argsort(keys, kind="stable")).all()
    assert (s == np.sort(keys)).all()
    codes, first = kern.run_codes(order, s)
    uniq, inverse = np.unique(keys, return_inverse=True)
    assert (codes == inverse).all() and (keys[first] == uniq).all()


def test_sorted_unique_edges():
    rng = np.random.default_rng(1)
    c, p = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    oc, op = kern.sorted_unique_edges(c, p, 50)
    want = sorted(set(zip(p.tolist(), c.tolist())))
    assert list(zip(op.tolist(), oc.tolist())) == want


def random_graph(seed, n=80, m=160):
    rng = np.random.default_rng(seed)
    c, p = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = c != p
    return kern.sorted_unique_edges(c[keep], p[keep], n), n


def test_dfs_back_edges_leave_no_cycle():
    (c, p), n = random_graph(7, n=30, m=120)
    out_ptr = np.concatenate(([0], np.cumsum(np.bincount(p, minlength=n))))
    label = np.zeros(n, dtype=np.int64)  # one component: every edge is followed
    back = kern.dfs_back_edges(np.arange(n), out_ptr, c, label, 0, np.zeros(n, np.int8))
    keep = np.ones(len(c), bool)
    keep[back] = False
    assert nx.is_directed_acyclic_graph(nx.DiGraph(zip(p[keep].tolist(), c[keep].tolist())))


def test_compiled_works_where_numba_has_nowhere_to_cache(monkeypatch):
    from numba.core import config

    def add_one(x):
        return x + 1

    monkeypatch.setattr(config, "CACHE_LOCATOR_CLASSES", "ZipCacheLocator")  # finds no folder for this file
    with pytest.raises(RuntimeError, match="cannot cache"):
        from numba import njit

        njit(cache=True)(add_one)
    assert kern.compiled(add_one)(1) == 2


@pytest.mark.parametrize("top", [1, 1000, 2**40, 2**61])
def test_sort_codes_equal_run_codes_packed_or_not(top):
    keys = np.random.default_rng(3).integers(0, top, 3000, dtype=np.int64)
    codes, first = kern.sort_codes(keys.copy())  # it sorts its argument in place
    want_codes, want_first = kern.run_codes(*kern.radix_argsort(keys))
    assert (codes == want_codes).all() and (keys[first] == keys[want_first]).all()
