"""The sorts on several threads give what the one-thread kernels give, at every thread count."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.trees import graph_kernels as kern
from taxoforge.trees import parallel_sort as ps
from taxoforge.trees import threads


@pytest.fixture
def four_cores(monkeypatch):
    """As on a machine with four cores, and a thread for every 64 items."""
    monkeypatch.setattr(threads, "cpus", lambda: 4)
    monkeypatch.setattr(threads, "GRAIN", 64)


CASES = [(0, 1), (1, 1), (200, 7), (3000, 2**20), (5000, 2**58), (4000, 2**62), (2500, 1)]


@pytest.mark.parametrize("n,top", CASES)
@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_sorts_equal_the_one_thread_kernels(four_cores, n, top, t):
    keys = np.random.default_rng(n + t).integers(0, top, n, dtype=np.int64)
    keys[: n // 3] = keys[n // 3: 2 * (n // 3)]  # repeated keys
    assert (ps.sort_inplace(keys.copy(), t) == np.sort(keys)).all()
    assert (ps.stable_argsort(keys, t) == np.argsort(keys, kind="stable")).all()
    codes, first = ps.sort_codes(keys.copy(), t)
    want_codes, want_first = kern.sort_codes(keys.copy())
    assert (codes == want_codes).all() and (first == want_first).all()


@pytest.mark.parametrize("t", [1, 2, 4])
def test_sorted_unique_edges_equal_the_kernel(four_cores, t):
    rng = np.random.default_rng(t)
    child, parent = rng.integers(0, 300, 5000), rng.integers(0, 300, 5000)
    got = ps.sorted_unique_edges(child, parent, 300, t)
    want = kern.sorted_unique_edges(child, parent, 300)
    assert all((a == b).all() for a, b in zip(got, want))


def test_skewed_keys_all_in_one_part(four_cores):
    keys = np.full(10_000, 5, dtype=np.int64)
    keys[::7] = 2**40
    assert (ps.sort_inplace(keys.copy(), 4) == np.sort(keys)).all()
