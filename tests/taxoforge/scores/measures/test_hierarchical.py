"""hP / hR / hF, hand-computed on a small tree, and against the set formula."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.measures.hierarchical import aggregate_hierarchical, harmonic_mean, hierarchical_scores
from taxoforge.trees.taxonomy import Taxonomy

#   r ─ a ─ a1 ─ a1x
#   │    └─ a2
#   └─ b ─ b1
TREE = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "a1x", "a2", "b", "b1"],
                              "parent_id": [None, "r", "a", "a1", "a", "r", "b"]}))


def scores(pred, gt):
    return hierarchical_scores(TREE, TREE.index_of(pred), TREE.index_of(gt))


@pytest.mark.parametrize("pred,gt,hp,hr", [
    ("a1x", "a1x", 1, 1),            # exact
    ("a", "a1x", 1, 2 / 4),          # on the correct path, less specific: hP = 1
    ("r", "a1x", 1, 1 / 4),          # the root (an abstention): hP = 1, hR = 1/|anc(gt)|
    ("a2", "a1x", 2 / 3, 2 / 4),     # sibling branch: shares r, a
    ("b1", "a1x", 1 / 3, 1 / 4),     # other subtree: shares only r
    ("a1x", "a", 2 / 4, 1),          # more specific than the ground truth
])
def test_hand_computed_pairs(pred, gt, hp, hr):
    m = scores([pred], [gt])
    assert m["hP"][0] == pytest.approx(hp)
    assert m["hR"][0] == pytest.approx(hr)
    assert m["hF"][0] == pytest.approx(2 * hp * hr / (hp + hr))
    assert bool(m["correct"][0]) == (pred == gt)


def test_aggregate_hf_is_harmonic_mean_of_mean_hp_and_mean_hr():
    m = scores(["a1x", "a", "r", "a2", "b1"], ["a1x"] * 5)
    agg = aggregate_hierarchical(m["hP"], m["hR"])
    mean_hp = (1 + 1 + 1 + 2 / 3 + 1 / 3) / 5
    mean_hr = (1 + 0.5 + 0.25 + 0.5 + 0.25) / 5
    assert agg["hP"] == pytest.approx(mean_hp)
    assert agg["hR"] == pytest.approx(mean_hr)
    assert agg["hF"] == pytest.approx(2 * mean_hp * mean_hr / (mean_hp + mean_hr))
    # the mean of per-pair hF is a different number, reported beside it
    assert agg["hF_pairs"] == pytest.approx(np.mean(m["hF"]))
    assert agg["hF_pairs"] != pytest.approx(agg["hF"])


def test_harmonic_mean_zero_when_both_zero():
    assert harmonic_mean(0.0, 0.0) == 0.0
    assert harmonic_mean([0.0, 1.0], [0.0, 0.5]).tolist() == pytest.approx([0.0, 2 / 3])


def test_empty_and_shape_mismatch():
    assert len(hierarchical_scores(TREE, [], [])["hP"]) == 0
    with pytest.raises(ValueError, match="shape"):
        hierarchical_scores(TREE, [0, 1], [0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=60), st.data())
def test_matches_set_intersection_formula(parents, data):
    # random tree: node i+1 hangs under a node < i+1
    par = [None] + [str(p % (i + 1)) for i, p in enumerate(parents)]
    ids = [str(i) for i in range(len(par))]
    t = Taxonomy(pl.DataFrame({"node_id": ids, "parent_id": par}, schema_overrides={"parent_id": pl.String}))
    n = len(ids)
    pr = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=30))
    gt = data.draw(st.lists(st.integers(0, n - 1), min_size=len(pr), max_size=len(pr)))
    m = hierarchical_scores(t, t.index_of([str(x) for x in pr]), t.index_of([str(x) for x in gt]))
    for i, (p, g) in enumerate(zip(pr, gt)):
        ap, ag = set(t.ancestors(str(p))), set(t.ancestors(str(g)))
        assert m["hP"][i] == pytest.approx(len(ap & ag) / len(ap))
        assert m["hR"][i] == pytest.approx(len(ap & ag) / len(ag))
