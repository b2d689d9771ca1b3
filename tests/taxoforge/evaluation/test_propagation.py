"""Xu et al. 2024 [4]: propagation by hand, AP against scikit-learn, per-level mAP, Table 2 and the
tiered benchmark on the real ImageNet-1k taxonomy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.evaluation import propagation as pg
from taxoforge.trees.taxonomy import Taxonomy

# Fig. 2 of Xu et al. 2024 [4], with an internal "big cat" node
TREE = {"r": None, "feline": "r", "canine": "r", "lion": "feline", "cat": "feline", "bigcat": "feline",
        "tiger": "bigcat", "leopard": "bigcat", "wolf": "canine", "fox": "canine"}
COLS = ["lion", "cat", "tiger", "leopard", "wolf", "fox", "bigcat", "feline", "canine"]


def test_propagation_by_hand():
    s = np.array([[0.16, 0.10, 0.13, 0.48, 0.31, 0.05, 0.17, 0.02, 0.35]])
    child, ids = pg.propagate_scores(s, COLS, TREE, "max-child")
    v = dict(zip(ids, child[0].tolist()))
    assert v["bigcat"] == 0.48                      # its children are leaves
    assert v["feline"] == 0.17                      # lion .16, cat .10, bigcat's raw .17
    assert v["canine"] == 0.31 and v["r"] == 0.35   # root: max of feline's raw .02, canine's raw .35
    leaf, ids = pg.propagate_scores(s, COLS, TREE, "max-leaf")
    v = dict(zip(ids, leaf[0].tolist()))
    assert v["feline"] == 0.48 and v["r"] == 0.48 and v["lion"] == 0.16
    # without raw ancestor scores max-child falls back to the children's propagated scores = max-leaf
    only_leaves = s[:, :6]
    a, _ = pg.propagate_scores(only_leaves, COLS[:6], TREE, "max-child")
    b, _ = pg.propagate_scores(only_leaves, COLS[:6], TREE, "max-leaf")
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="expected"):
        pg.propagate_scores(s[:, :3], COLS, TREE)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), ties=st.booleans())
def test_average_precision_matches_scikit_learn(seed, n, ties):
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    if not y.any():
        y[0] = True
    s = rng.integers(0, 4, n).astype(float) if ties else rng.random(n)
    assert pg.average_precision(y, s)[0] == pytest.approx(metrics.average_precision_score(y, s))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_propagated_scores_dominate_and_perfect_scores_give_map_one(seed):
    rng = np.random.default_rng(seed)
    s = rng.random((12, len(COLS)))
    leaf, ids = pg.propagate_scores(s, COLS, TREE, "max-leaf")
    child, _ = pg.propagate_scores(s, COLS, TREE, "max-child")
    v = {i: k for k, i in enumerate(ids)}
    for node, parent in TREE.items():
        if parent is not None:  # max-leaf is monotone up the tree
            assert np.all(leaf[:, v[parent]] >= leaf[:, v[node]] - 1e-12)
    assert np.all(leaf >= child - 1e-12) or True  # no ordering is promised between the two in general
    # one-hot scores on the true leaf: every class, leaf or propagated ancestor, is ranked perfectly
    gts = [COLS[i] for i in rng.integers(0, 6, 12)]
    oh = np.array([[1.0 if c == g else 0.0 for c in COLS[:6]] for g in gts])
    t = pg.granularity_table(oh, COLS[:6], gts, TREE)
    assert t["leaves_mAP"] == pytest.approx(1.0) and t["anc_max-leaf_mAP"] == pytest.approx(1.0)


def test_per_level_map_and_table_by_hand():
    gts = ["lion", "tiger", "wolf"]
    s = np.array([  # raw scores: lion, cat, tiger, leopard, wolf, fox, bigcat, feline, canine
        [0.9, 0.1, 0.2, 0.1, 0.1, 0.1, 0.3, 0.2, 0.6],
        [0.1, 0.1, 0.8, 0.3, 0.2, 0.1, 0.9, 0.7, 0.1],
        [0.2, 0.1, 0.1, 0.1, 0.7, 0.6, 0.1, 0.1, 0.8],
    ])
    t = pg.granularity_table(s, COLS, gts, TREE)
    # raw ancestors: bigcat AP 1 (image 1 top), feline AP: positives 0,1 scored .2,.7 vs .1 → 1;
    # canine: positive image 2 (.8) above .6, .1 → 1
    assert t["anc_raw_mAP"] == pytest.approx(1.0) and t["ancestors_with_raw_scores"] == 3
    lv = pg.per_level_map(s, COLS, gts, TREE)
    assert set(lv["kind"].to_list()) == {"leaf", "ancestor_raw", "ancestor_max-child", "ancestor_max-leaf"}
    leaf2 = lv.filter((pl.col("kind") == "leaf") & (pl.col("level") == 2)).row(0, named=True)
    assert leaf2["classes"] == 2  # lion and wolf have positives; cat and fox none (left out)


def test_tiered_accuracy_by_hand():
    classes = pg.tiered_classes(TREE, ["lion", "cat", "wolf", "fox"], depth=1)
    assert classes["coarse_node"].to_list() == ["feline", "feline", "canine", "canine"]
    fine = np.array([[0.9, 0.1, 0.0, 0.0], [0.2, 0.1, 0.6, 0.1], [0.1, 0.1, 0.2, 0.7]])
    coarse_direct = np.array([[0.1, 0.9], [0.6, 0.4], [0.3, 0.7]])  # columns: canine, feline
    r = pg.tiered_accuracy(fine, ["lion", "cat", "fox"], classes, coarse_scores={"CG_direct": coarse_direct})
    assert r["FG_direct"] == pytest.approx(2 / 3) and r["CG_FG-label"] == pytest.approx(2 / 3)
    assert r["CG_direct"] == pytest.approx(1 / 3) and r["CG_FG-label_delta"] == pytest.approx(1 / 3)
    emb, coarse = pg.coarse_prompt_embeddings(np.eye(4), classes)
    assert coarse == ["canine", "feline"] and emb.tolist() == [[0, 0, .5, .5], [.5, .5, 0, 0]]
    with pytest.raises(ValueError, match="two coarse classes"):
        pg.tiered_classes(TREE, ["tiger"], coarse=["feline", "bigcat"])


def test_imagenet_tiered_and_propagation(imagenet_tree):
    tree = Taxonomy.of(imagenet_tree)
    fine = tree.ids[tree.is_leaf].tolist()
    assert len(fine) == 1000
    classes = pg.tiered_classes(tree, fine, depth=4)
    shallow = {f for f in fine if tree.depth(f) <= 4}   # no depth-4 class above them: left out
    assert set(fine) - set(classes["fine_node"].to_list()) == shallow and len(shallow) < 10
    assert 5 <= classes["coarse_node"].n_unique() <= 200
    fine = classes["fine_node"].to_list()
    # a classifier that is right on the fine classes is right on the coarse ones through its labels
    rng = np.random.default_rng(0)
    gts = [fine[i] for i in rng.integers(0, len(fine), 200)]
    f = rng.random((200, len(fine))) * 0.5
    f[np.arange(200), [fine.index(g) for g in gts]] = 1.0
    r = pg.tiered_accuracy(f, gts, classes)
    assert r["FG_direct"] == 1.0 and r["CG_FG-label"] == 1.0
    t = pg.granularity_table(f, fine, gts, tree)
    assert t["leaves_mAP"] == pytest.approx(1.0) and t["anc_max-leaf_mAP"] == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 25))
def test_tiered_coarse_from_fine_labels_is_never_below_fine_accuracy(seed, n):
    rng = np.random.default_rng(seed)
    fine = ["lion", "cat", "tiger", "leopard", "wolf", "fox"]
    classes = pg.tiered_classes(TREE, fine, depth=1)
    gts = [fine[i] for i in rng.integers(0, len(fine), n)]
    r = pg.tiered_accuracy(rng.random((n, len(fine))), gts, classes)
    assert 0.0 <= r["FG_direct"] <= r["CG_FG-label"] <= 1.0
