"""The compiled tie draws equal taxoforge.seeded.tie_draw (hashlib's BLAKE2b) bit for bit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.seeded import tie_draw
from taxoforge.trees import threads
from taxoforge.trees.tie_draws import tie_draws


def _ids() -> list[str]:
    rng = np.random.default_rng(0)
    ids = [f"wd:Q{q}" for q in rng.integers(1, 10**9, 500)] + ["", "é", "n02084071", "col:ÅÄÖ 🦆"]
    # every length around the 128-byte blocks of BLAKE2b (the prefix is ~17 bytes)
    ids += ["x" * k for k in range(90, 260)] + ["y" * 1000]
    return ids


@pytest.mark.parametrize("seed", [0, 7, 2**40, -3])
def test_equal_to_hashlib_bit_for_bit(seed):
    ids = _ids()
    got = tie_draws(seed, pl.Series(ids, dtype=pl.String))
    want = tie_draw(seed, ids)
    assert got.dtype == np.float64 and np.array_equal(got, want)


def test_the_same_on_several_threads(monkeypatch):
    monkeypatch.setattr(threads, "cpus", lambda: 4)
    ids = pl.Series(_ids() * 20)
    assert np.array_equal(tie_draws(1, ids, threads=4), tie_draws(1, ids, threads=1))
    assert len(tie_draws(1, pl.Series([], dtype=pl.String))) == 0
