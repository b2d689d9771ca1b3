"""ProTeCt's random tree cuts: distinct, seeded, one cut node on every ground truth's path,
the dropout rates followed, and a count (and a warning from MTA) when a tree has fewer."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.evaluation.label_metrics import mean_tree_cut_accuracy
from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.cuts import FewerCutsWarning, sample_tree_cuts
from tests.taxoforge.evaluation.conftest import random_ranked_tree


def test_tree_cuts_are_distinct_seeded_and_cover_each_truth_once():
    tree = Taxonomy.of({"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b"})
    gt = tree.index_of(["a1", "a2", "b1", "b2"])
    cuts = sample_tree_cuts(tree, gt, n_cuts=25, seed=3)
    # three internal nodes below the root can be expanded or not: 4 distinct cuts exist
    assert len(cuts) == 4
    sigs = {tuple(sorted(tree.ids[m].tolist())) for m in cuts.cut_nodes}
    assert sigs == {("a", "b"), ("a1", "a2", "b"), ("a", "b1", "b2"), ("a1", "a2", "b1", "b2")}
    again = sample_tree_cuts(tree, gt, n_cuts=25, seed=3)
    assert np.array_equal(cuts.cut_depth, again.cut_depth)
    # MTA by hand: predicting the parent is right exactly in the cuts where the parent is a cut node
    with pytest.warns(FewerCutsWarning, match="only 4 distinct tree cuts of the 25"):
        mta, acc, _ = mean_tree_cut_accuracy(["a1", "b1"], ["a", "b"], tree, return_per_cut=True, seed=3)
    per_cut = {tuple(sorted(tree.ids[m].tolist())): a for m, a in zip(
        sample_tree_cuts(tree, tree.index_of(["a1", "b1"]), seed=3).cut_nodes, acc)}
    assert per_cut == {("a", "b"): 1.0, ("a1", "b"): 0.5, ("a", "b1"): 0.5, ("a1", "b1"): 0.0}
    assert mta == pytest.approx(0.5)


def test_tree_cuts_on_a_real_sized_tree_follow_the_dropout_rates():
    tables = random_ranked_tree(1, fanout=(2, 4))
    tree = Taxonomy.of(tables)
    leaves = np.flatnonzero(tree.is_leaf)
    cuts = sample_tree_cuts(tree, leaves, n_cuts=25, seed=0)
    assert len(cuts) == 25 and sorted(set(cuts.dropout.tolist())) == [0.1, 0.3, 0.5, 0.7, 0.9]
    mean_depth = {p: cuts.cut_depth[cuts.dropout == p].mean() for p in (0.1, 0.9)}
    assert mean_depth[0.1] > mean_depth[0.9]  # fewer dropped nodes: deeper, finer cuts
    assert pl.Series(cuts.cut_depth.ravel()).min() >= 1


def test_a_small_tree_reports_how_many_distinct_cuts_it_has():
    # 9 nodes: r → a, b; a → a1, a2; b → b1, b2; a1 → a1x; b1 → b1x
    tree = Taxonomy.of({"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b",
                          "a1x": "a1", "b1x": "b1"})
    gt = ["a1x", "a2", "b1x", "b2"]
    cuts = sample_tree_cuts(tree, tree.index_of(gt), n_cuts=25, seed=0)
    # a and b expanded or not, a1 only under an expanded a, b1 likewise: (1 + 2) * (1 + 2) = 9 cuts
    assert len(cuts) == 9 and cuts.requested == 25
    assert cuts.shortfall.startswith("only 9 distinct tree cuts of the 25")
    with pytest.warns(FewerCutsWarning, match="only 9 distinct"):
        _, acc, _ = mean_tree_cut_accuracy(gt, gt, tree, return_per_cut=True)
    assert len(acc) == 9
    enough = sample_tree_cuts(tree, tree.index_of(gt), n_cuts=9, seed=0)
    assert enough.shortfall is None
