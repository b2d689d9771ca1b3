"""Snæbjarnarson et al. 2025 [1] §5: synthetic pairs at uniform distances, Kendall-τ validation, Fig. 4 agreement."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.evaluation import validation as va
from taxoforge.trees.taxonomy import Taxonomy
from tests.taxoforge.evaluation.conftest import random_ranked_tree


def _distance(tree, a, b):
    ia, ib = tree.index_of([a])[0], tree.index_of([b])[0]
    return int(tree.depth_arr[ia] + tree.depth_arr[ib] - 2 * tree.lca_depth([ia], [ib])[0])


def test_pairs_by_hand_on_the_toy_tree(toy):
    pairs = va.synthetic_pairs(toy, 300, seed=2)
    for r in pairs.iter_rows(named=True):
        assert _distance(toy, r["reference"], r["candidate"]) == r["distance"]
        assert toy.children(r["reference"]) == []          # references are leaves
    anc = va.synthetic_pairs(toy, 200, ancestors_only=True, seed=2)
    assert (anc["hP"] == 1.0).all()
    r = anc.filter(pl.col("reference") == "e_am_vermiculatus").row(0, named=True)
    # subspecies at depth 7: an ancestor at distance d has hR = (7 - d + 1) / 8
    assert r["hR"] == pytest.approx((7 - r["distance"] + 1) / 8)
    assert va.synthetic_pairs(toy, 50, seed=2).equals(va.synthetic_pairs(toy, 50, seed=2))


@settings(max_examples=15, deadline=None)
@given(tree_seed=st.integers(0, 3000), seed=st.integers(0, 2**31))
def test_pair_distances_are_exact_and_spread(tree_seed, seed):
    tree = Taxonomy.of(random_ranked_tree(tree_seed))
    if not (tree.is_leaf & (tree.depth_arr >= 1)).any():
        return
    pairs = va.synthetic_pairs(tree, 60, seed=seed)
    for r in pairs.iter_rows(named=True):
        assert _distance(tree, r["reference"], r["candidate"]) == r["distance"] <= 7
    assert ((pairs["hP"] > 0) & (pairs["hP"] <= 1)).all()


def test_kendall_tau_of_an_oracle_and_of_a_constant_and_of_exact_match(toy):
    # an oracle that looks the labels up in the tree and returns hP: τ_hP = 1
    lab = {str(l): str(i) for i, l in zip(toy.ids.tolist(), toy.labels.tolist())}

    def oracle_hp(preds, refs):
        p = toy.index_of([lab[x] for x in preds])
        r = toy.index_of([lab[x] for x in refs])
        return (toy.lca_depth(p, r) + 1.0) / (toy.depth_arr[p] + 1.0)

    t = va.kendall_tau_validation(toy, {"oracle": oracle_hp, "constant": lambda p, r: np.ones(len(p)),
                                        "exact": lambda p, r: np.array([float(a == b) for a, b in zip(p, r)])},
                                  n_pairs=400, seed=1)
    row = {r["measure"]: r for r in t.iter_rows(named=True)}
    assert row["oracle"]["tau_hP"] == pytest.approx(1.0) and row["oracle"]["p_hP"] < 1e-6
    assert np.isnan(row["constant"]["tau_hP"])
    assert np.isnan(row["exact"]["tau_hP"])   # a candidate is never its reference: exact match is constant 0


def test_placement_agreement_errors():
    t = pl.DataFrame({"id": [1, 1], "method": ["a", "a"], "pred_node": ["x", "y"]})
    with pytest.raises(ValueError, match="placed twice"):
        va.placement_agreement(t)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20), methods=st.integers(1, 4))
def test_placement_agreement_is_symmetric_with_a_unit_diagonal(seed, n, methods):
    rng = np.random.default_rng(seed)
    t = pl.DataFrame({"id": [i for _ in range(methods) for i in range(n)],
                      "method": [f"m{k}" for k in range(methods) for _ in range(n)],
                      "pred_node": [f"n{x}" for x in rng.integers(0, 3, n * methods)]})
    a = va.placement_agreement(t)
    m = a.drop("method").to_numpy()
    assert np.allclose(np.diag(m), 1.0) and np.allclose(m, m.T) and ((m >= 0) & (m <= 1)).all()
