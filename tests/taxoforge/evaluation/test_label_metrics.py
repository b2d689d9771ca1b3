"""The scikit-learn-style metrics of labels: hand-computed values, agreement with hiclass on
root-to-node paths and with taxoforge.scores.measures.hierarchical (the leaderboard's aggregation),
both F conventions, HCA and MTA."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.evaluation.label_metrics import (hierarchical_consistent_accuracy,
                                                hierarchical_precision_recall_fscore, mean_tree_cut_accuracy)
from taxoforge.links.tree_labels import UnresolvedLabels, node_indexes
from taxoforge.trees.ranked_tree import RankedTree
from taxoforge.trees.cuts import FewerCutsWarning, sample_tree_cuts
from tests.taxoforge.evaluation.conftest import random_ranked_tree

TREE = {"animal": None, "dog": "animal", "cat": "animal", "husky": "dog", "beagle": "dog", "tabby": "cat"}


def test_hand_computed_averages():
    yt, yp = ["husky", "beagle", "cat", "tabby"], ["husky", "dog", "husky", "animal"]
    # per pair: I = 3,2,1,1; |anc(pred)| = 3,2,3,1; |anc(true)| = 3,3,2,3
    p, r, f = hierarchical_precision_recall_fscore(yt, yp, TREE)
    assert p == pytest.approx((1 + 1 + 1 / 3 + 1) / 4) and r == pytest.approx((1 + 2 / 3 + 1 / 2 + 1 / 3) / 4)
    assert f == pytest.approx(2 * p * r / (p + r))
    assert hierarchical_precision_recall_fscore(yt, yp, TREE, average="micro") == pytest.approx((7 / 9, 7 / 11, 0.7))
    # macro: classes husky (1,1), beagle (1, 2/3), cat (1/3, 1/2), tabby (1, 1/3)
    pm, rm, _ = hierarchical_precision_recall_fscore(yt, yp, TREE, average="macro")
    assert (pm, rm) == pytest.approx(((1 + 1 + 1 / 3 + 1) / 4, (1 + 2 / 3 + 1 / 2 + 1 / 3) / 4))
    pc, rc, fc = hierarchical_precision_recall_fscore(yt + ["husky"], yp + ["dog"], TREE, average=None,
                                                      labels=["husky", "cat"])
    assert pc.tolist() == pytest.approx([1.0, 1 / 3]) and rc.tolist() == pytest.approx([(1 + 2 / 3) / 2, 0.5])
    # F-beta weights recall
    _, _, f2 = hierarchical_precision_recall_fscore(yt, yp, TREE, beta=2.0)
    assert f2 == pytest.approx(5 * p * r / (4 * p + r))


def test_names_ids_and_errors(toy):
    assert hierarchical_precision_recall_fscore(["Esox lucius"], ["esox"], toy) == \
        hierarchical_precision_recall_fscore(["e_lucius"], ["Esox"], toy, node_ref="auto")
    with pytest.raises(UnresolvedLabels, match="Felis catus"):
        hierarchical_precision_recall_fscore(["Felis catus"], ["Esox"], toy)
    with pytest.raises(ValueError, match="must match"):
        hierarchical_precision_recall_fscore(["Esox"], ["Esox", "Esox"], toy)
    with pytest.raises(ValueError, match="average must be"):
        hierarchical_precision_recall_fscore(["Esox"], ["Esox"], toy, average="weighted")


def _paths(tree: RankedTree, idx) -> list[list[str]]:
    out = []
    for v in idx:
        out.append(tree.taxonomy.ancestors(str(tree.ids[v])))
    return out


@settings(max_examples=25, deadline=None)
@given(tree_seed=st.integers(0, 5000), pair_seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_agrees_with_hiclass_and_with_the_leaderboard_measures(tree_seed, pair_seed, n):
    hiclass = pytest.importorskip("hiclass.metrics")
    from taxoforge.scores.measures.hierarchical import aggregate_hierarchical, hierarchical_scores

    tables = random_ranked_tree(tree_seed)
    tree = RankedTree.of(tables)
    rng = np.random.default_rng(pair_seed)
    t = rng.integers(0, len(tree), n)
    p = rng.integers(0, len(tree), n)
    yt, yp = tree.ids[t].tolist(), tree.ids[p].tolist()
    P, R, F = hierarchical_precision_recall_fscore(yt, yp, tree)
    Pm, Rm, Fm = hierarchical_precision_recall_fscore(yt, yp, tree, average="micro")
    # hiclass on root-to-node paths (root included, padded with "")
    pt, pp = _paths(tree, t), _paths(tree, p)
    w = max(map(len, pt + pp))
    at = np.array([x + [""] * (w - len(x)) for x in pt], dtype=object)
    ap = np.array([x + [""] * (w - len(x)) for x in pp], dtype=object)
    assert P == pytest.approx(hiclass.precision(at, ap, average="macro"))
    assert R == pytest.approx(hiclass.recall(at, ap, average="macro"))
    assert Pm == pytest.approx(hiclass.precision(at, ap, average="micro"))
    assert Rm == pytest.approx(hiclass.recall(at, ap, average="micro"))
    assert Fm == pytest.approx(hiclass.f1(at, ap, average="micro"))
    # the other F convention is hiclass's macro F: the mean of the per-sample F
    assert hierarchical_precision_recall_fscore(yt, yp, tree, f_average="of_pairs")[2] == pytest.approx(
        hiclass.f1(at, ap, average="macro"))
    # the leaderboard's per-pair scores and aggregation (Snæbjarnarson et al. 2025 [1] eq. 3)
    h = hierarchical_scores(tree.taxonomy, p, t)
    agg = aggregate_hierarchical(h["hP"], h["hR"], h["hF"])
    assert (P, R, F) == pytest.approx((agg["hP"], agg["hR"], agg["hF"]))


@settings(max_examples=25, deadline=None)
@given(tree_seed=st.integers(0, 5000), pair_seed=st.integers(0, 2**32 - 1))
def test_properties_bounds_and_perfect_predictions(tree_seed, pair_seed):
    tree = RankedTree.of(random_ranked_tree(tree_seed))
    rng = np.random.default_rng(pair_seed)
    t = tree.ids[rng.integers(0, len(tree), 15)].tolist()
    p = tree.ids[rng.integers(0, len(tree), 15)].tolist()
    for avg in ("samples", "micro", "macro"):
        vals = hierarchical_precision_recall_fscore(t, p, tree, average=avg)
        assert all(0 < v <= 1 for v in vals)
        assert hierarchical_precision_recall_fscore(t, t, tree, average=avg) == pytest.approx((1.0, 1.0, 1.0))
    # predicting every ancestor of the truth keeps hP = 1
    anc = [tree.taxonomy.parent(x) or x for x in t]
    assert hierarchical_precision_recall_fscore(t, anc, tree)[0] == pytest.approx(1.0)
    # HCA ≤ accuracy-or-deeper, = 1 on perfect predictions, and equals hR == 1 for single nodes
    assert hierarchical_consistent_accuracy(t, t, tree) == 1.0
    hca = hierarchical_consistent_accuracy(t, p, tree)
    ti, pi = node_indexes(tree, t), node_indexes(tree, p)
    assert hca == pytest.approx(np.mean(tree.lca_depth(pi, ti) == tree.depth[ti]))
    assert mean_tree_cut_accuracy(t, t, tree, n_cuts=5) == 1.0
    assert 0.0 <= mean_tree_cut_accuracy(t, p, tree, n_cuts=5) <= 1.0


def test_hca_per_level_predictions_by_hand(toy):
    truth = ["Esox lucius", "Umbra limi", "Notropis hudsonius"]
    preds = [["Esocidae", "Esox", "Esox lucius"],          # all right
             ["Umbridae", "Dallia", "Umbra limi"],          # genus wrong
             ["Cyprinidae", "Notropis", "Notropis hudsonius"]]
    assert hierarchical_consistent_accuracy(truth, preds, toy, levels=["family", "genus", "species"]) == pytest.approx(2 / 3)
    preds[2][0] = None                                      # a missing answer is wrong
    assert hierarchical_consistent_accuracy(truth, preds, toy, levels=["family", "genus", "species"]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="levels has 2 entries"):
        hierarchical_consistent_accuracy(truth, preds, toy, levels=["family", "genus"])


def test_both_f_conventions_by_hand_and_their_limits():
    yt, yp = ["husky", "beagle", "cat", "tabby"], ["husky", "dog", "husky", "animal"]
    hp = np.array([1, 1, 1 / 3, 1])
    hr = np.array([1, 2 / 3, 1 / 2, 1 / 3])
    per_pair = 2 * hp * hr / (hp + hr)
    p, r, f = hierarchical_precision_recall_fscore(yt, yp, TREE, f_average="of_means")
    _, _, f_pairs = hierarchical_precision_recall_fscore(yt, yp, TREE, f_average="of_pairs")
    assert f == pytest.approx(2 * hp.mean() * hr.mean() / (hp.mean() + hr.mean()))
    assert f_pairs == pytest.approx(per_pair.mean()) and f_pairs != pytest.approx(f)
    # per class (macro): the mean of each class's per-sample F, then over classes
    _, _, fm = hierarchical_precision_recall_fscore(yt + ["husky"], yp + ["dog"], TREE, average="macro",
                                                    f_average="of_pairs")
    husky = np.mean([1.0, 2 * 1 * (2 / 3) / (1 + 2 / 3)])
    assert fm == pytest.approx(np.mean([husky, per_pair[1], per_pair[2], per_pair[3]]))
    with pytest.raises(ValueError, match="average='micro' sums path lengths"):
        hierarchical_precision_recall_fscore(yt, yp, TREE, average="micro", f_average="of_pairs")
    with pytest.raises(ValueError, match="f_average must be one of"):
        hierarchical_precision_recall_fscore(yt, yp, TREE, f_average="harmonic")
    with pytest.raises(ValueError, match="beta must be a number"):
        hierarchical_precision_recall_fscore(yt, yp, TREE, beta=float("nan"))
    with pytest.raises(ValueError, match="n_cuts must be an integer"):
        mean_tree_cut_accuracy(yt, yp, TREE, n_cuts=0)
