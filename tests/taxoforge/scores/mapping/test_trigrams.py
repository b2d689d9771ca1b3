"""The character-trigram index of the name keys."""

from __future__ import annotations

import numpy as np

from taxoforge.scores.mapping.trigrams import TrigramIndex, padded_trigrams


def test_trigram_index():
    names = ["aloe vera", "aloe ferox", "iris"]
    tri = TrigramIndex(names)
    assert tri.lengths.tolist() == [9, 10, 4]
    assert len(padded_trigrams("iris")) == 4  # " iris " has four trigrams
    got = tri.names_sharing("aloe verra", min_shared=5)
    assert 0 in got.tolist() and 2 not in got.tolist()
    assert tri.names_sharing("zzzz", min_shared=1).tolist() == []
    assert np.array_equal(tri.names_sharing("x", min_shared=0), np.arange(3))
