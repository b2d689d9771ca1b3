"""Step 5 of the tree builder: depths, tight edges and path counts, at every thread count."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.trees import graph_kernels as kern
from taxoforge.trees import threads
from taxoforge.trees.longest_paths import index_ranges, longest_paths


def layered(seed, n=3000, m=9000):
    rng = np.random.default_rng(seed)
    c = rng.integers(1, n, m)
    p = (c * rng.random(m) ** 0.3).astype(np.int64)
    c, p = np.concatenate([c, np.arange(1, n)]), np.concatenate([p, np.zeros(n - 1, np.int64)])
    return kern.sorted_unique_edges(c, p, n), n


@pytest.mark.parametrize("seed", range(3))
def test_the_same_paths_at_every_thread_count(monkeypatch, seed):
    monkeypatch.setattr(threads, "cpus", lambda: 4)
    monkeypatch.setattr(threads, "GRAIN", 16)
    (c, p), n = layered(seed)
    got = [longest_paths(c, p, n, 0, t) for t in (1, 2, 4)]
    one = got[0]
    assert (np.diff(one.tight_ptr) >= 2).sum() > 100  # nodes with several longest paths
    tight, ptr, pos = kern.tight_in_edges(c, p, one.depth, n)  # the one-thread kernel
    assert (one.tight == tight).all() and (one.tight_ptr == ptr).all() and (one.tight_pos == pos).all()
    for other in got[1:]:
        for name in ("depth", "bounds", "tight", "tight_ptr", "tight_pos"):
            assert (getattr(other, name) == getattr(one, name)).all(), name
        assert np.array_equal(other.logn, one.logn)  # bit for bit


def test_path_counts_on_a_lattice():
    # 0 → {1, 2} → 3 → {4, 5} → 6: four longest paths to 6
    c = np.array([1, 2, 3, 3, 4, 5, 6, 6])
    p = np.array([0, 0, 1, 2, 3, 3, 4, 5])
    c, p = kern.sorted_unique_edges(c, p, 7)
    paths = longest_paths(c, p, 7, 0)
    assert paths.depth.tolist() == [0, 1, 1, 2, 3, 3, 4]
    assert np.allclose(np.exp(paths.logn), [1, 1, 1, 2, 2, 2, 4])


def test_index_ranges():
    ptr = np.array([0, 2, 2, 5])
    assert index_ranges(ptr, np.array([2, 0])).tolist() == [2, 3, 4, 0, 1]
    assert index_ranges(ptr, np.array([1])).tolist() == []
