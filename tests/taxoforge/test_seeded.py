"""Seeded draws are the same on every machine and after every refactoring: golden values
computed by the three implementations this module replaced (the tie draw of the tree builder,
the tree-cut keys and the multiple-choice stream), and the properties the callers rely on."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.seeded import SeededStream, hash64, splitmix64, tie_draw, unit_interval


def test_the_draws_are_those_of_before():
    assert tie_draw(0, ["wd:Q5", "inat:1"]).tolist() == [0.09229416773476296, 0.7055790269327934]
    assert tie_draw(7, ["wd:Q5"]).tolist() == [0.9605509807036615]
    assert hash64("wn:n02084071") == 12867388115059668314 and hash64("3|0.5|2") == 9136832354456299443
    assert splitmix64(np.array([1, 2**63], dtype=np.uint64)).tolist() == [10451216379200822465, 5196802822362493915]
    s = SeededStream(7, "easy|12|inat:1")
    assert [s.next64(), s.next64()] == [9278495353956969490, 17437376500648824069]
    assert SeededStream(7, "easy|12|inat:1").below(10) == 0


def test_a_draw_depends_on_its_own_key_only():
    ids = [f"wd:Q{i}" for i in range(200)]
    alone = [float(tie_draw(3, [i])[0]) for i in ids[:5]]
    assert tie_draw(3, ids)[:5].tolist() == alone == tie_draw(3, ids[:5][::-1])[::-1].tolist()
    assert tie_draw(4, ids[:5]).tolist() != alone
    u = tie_draw(3, ids)
    assert ((u >= 0) & (u < 1)).all() and len(set(u.tolist())) == 200
    assert tie_draw(0, []).shape == (0,)


def test_unit_interval_keeps_53_bits_and_never_reaches_one():
    assert unit_interval(np.array([0, 2**64 - 1], dtype=np.uint64)).tolist() == [0.0, 1 - 2.0**-53]


def test_below_is_uniform_and_refuses_an_empty_range():
    s = SeededStream(1, "k")
    counts = np.bincount([s.below(6) for _ in range(6000)], minlength=6)
    assert counts.min() > 850 and counts.max() < 1150
    with pytest.raises(ValueError, match="n must be positive"):
        s.below(0)
