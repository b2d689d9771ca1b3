"""Hierarchical metrics in scikit-learn's style, free of Dagster: one import, plain arrays in,
numbers out.

``y_true`` and ``y_pred`` hold node ids or node names (labels) of ``taxonomy`` — anything
:func:`~taxoforge.snapshots.load.load_ranked_tree` accepts: a tree or snapshot
folder, ``NAME@VERSION``, a :class:`~taxoforge.trees.tables.TreeTables`, a nodes
DataFrame, or a plain ``{child: parent}`` dict. ``node_ref`` says which: ``"auto"`` (a node
id if there is one, else a name), ``"id"`` or ``"name"``; a value that names no node or
several raises :class:`~taxoforge.trees.ranked_tree.UnresolvedLabels` listing them.

Definitions (SPEC §2; paper 000 §3; Kiritchenko et al. 2006). ``anc(v)`` is the root-to-``v``
path, both ends included; per sample ``i``, ``I_i = |anc(pred_i) ∩ anc(true_i)|``:

``average="samples"``  hP = mean of ``I_i / |anc(pred_i)|``, hR = mean of ``I_i / |anc(true_i)|``
                        (paper 000 eq. 2; hiclass's ``average="macro"``);
``average="micro"``    hP = ``Σ I_i / Σ |anc(pred_i)|``, hR = ``Σ I_i / Σ |anc(true_i)|``
                        (hiclass's ``average="micro"``);
``average="macro"``    hP and hR per ground-truth class (the samples mean over the samples of
                        that class), then the unweighted mean over classes — every class
                        counts the same, as scikit-learn's macro average;
``average=None``       the per-class hP, hR, F arrays, classes in ``labels`` order (default:
                        the sorted distinct ground-truth node ids).

In every averaged case the F-score is ``F_β`` of the averaged hP and hR (paper 000 eq. 3:
the harmonic mean of the means, not the mean of per-sample F), so
``average="samples"`` agrees with :func:`taxoforge.scores.measures.aggregate_hierarchical`
and the leaderboard on the same pairs.

**Hierarchical consistent accuracy** (HCA; ProTeCt, Wu et al. CVPR 2024, and the
hierarchical-VQA studies after it): the share of samples whose prediction is right at
*every* level of the ground truth's path. With per-level predictions (a 2-D ``y_pred``, one
column per level — e.g. a model's answers to rank probes) a sample counts when every
column equals the ground truth's ancestor at that level. With one predicted node per
sample, the prediction at level ``j`` is its ancestor at depth ``j``: the sample counts when
every level of the ground-truth path is matched, i.e. when the prediction is the ground
truth or below it (``hR = 1``); a correct but more generic answer does not count.

**Mean tree-cut accuracy** (MTA; ProTeCt): the mean over random tree cuts of the accuracy
of classifying among the cut's nodes (:mod:`taxoforge.evaluation.tree_cuts`).

>>> tree = {"animal": None, "dog": "animal", "cat": "animal", "husky": "dog", "beagle": "dog"}
>>> p, r, f = hierarchical_precision_recall_fscore(["husky", "beagle", "cat"], ["husky", "dog", "husky"], tree)
>>> round(p, 4), round(r, 4), round(f, 4)
(0.7778, 0.7222, 0.749)
>>> hierarchical_precision_recall_fscore(["husky", "beagle", "cat"], ["husky", "dog", "husky"], tree, average="micro")
(0.75, 0.75, 0.75)
>>> hierarchical_consistent_accuracy(["husky", "beagle", "cat"], ["husky", "dog", "cat"], tree)
0.6666666666666666
>>> hierarchical_consistent_accuracy(["husky", "beagle"], [["dog", "husky"], ["dog", "husky"]], tree)
0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taxoforge.snapshots.load import load_ranked_tree
from taxoforge.trees.ranked_tree import RankedTree

__all__ = ["hierarchical_precision_recall_fscore", "hierarchical_consistent_accuracy", "mean_tree_cut_accuracy",
           "pair_depths"]

_AVERAGES = ("samples", "micro", "macro", None)


def _fbeta(p, r, beta: float):
    p = np.asarray(p, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    b2 = beta * beta
    den = b2 * p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, (1 + b2) * p * r / np.where(den > 0, den, 1.0), 0.0)
    return out if out.ndim else float(out)


def _indexes(tree: RankedTree, values, node_ref: str, what: str) -> np.ndarray:
    vals = list(values)
    return tree.resolve_strict(vals, node_ref, what=what)


def pair_depths(y_true, y_pred, taxonomy, *, node_ref: str = "auto"):
    """``(tree, true_idx, pred_idx, depth_true, depth_pred, depth_lca)`` of the pairs."""
    tree = load_ranked_tree(taxonomy)
    t = _indexes(tree, y_true, node_ref, "y_true value")
    p = _indexes(tree, y_pred, node_ref, "y_pred value")
    if len(t) != len(p):
        raise ValueError(f"y_true has {len(t)} samples, y_pred {len(p)}; they must match")
    if not len(t):
        raise ValueError("no samples")
    return tree, t, p, tree.depth[t].astype(np.int64), tree.depth[p].astype(np.int64), tree.lca_depth(p, t)


def hierarchical_precision_recall_fscore(y_true, y_pred, taxonomy, *, average: str | None = "samples",
                                         beta: float = 1.0, labels: Sequence | None = None, node_ref: str = "auto",
                                         sample_weight=None):
    """Hierarchical precision, recall and F-beta of node predictions (module docstring).

    Parameters
    ----------
    y_true, y_pred : sequences of node ids or names, one per sample
    taxonomy : the tree (see the module docstring for the accepted forms)
    average : ``"samples"`` (default; paper 000), ``"micro"``, ``"macro"`` or ``None``
    beta : weight of recall in the F-score (1: the harmonic mean)
    labels : the classes reported with ``average=None`` and averaged by ``"macro"`` (node ids
        or names of ground-truth classes; default: every ground-truth class)
    node_ref : ``"auto"``, ``"id"`` or ``"name"``: how ``y_true``/``y_pred``/``labels`` name nodes
    sample_weight : optional weight per sample

    Returns
    -------
    precision, recall, fscore : floats, or arrays (one per class in ``labels`` order) when
        ``average`` is None

    Examples
    --------
    >>> tree = {"r": None, "a": "r", "a1": "a", "b": "r"}
    >>> hierarchical_precision_recall_fscore(["a1", "a1", "b"], ["a", "b", "b"], tree, average=None)
    (array([0.75, 1.  ]), array([0.5, 1. ]), array([0.6, 1. ]))
    >>> hierarchical_precision_recall_fscore(["a1", "a1", "b"], ["a", "b", "b"], tree, average="macro")
    (0.875, 0.75, 0.8076923076923077)
    """
    if average not in _AVERAGES:
        raise ValueError(f"average must be one of {_AVERAGES}, not {average!r}")
    if beta < 0:
        raise ValueError("beta must be non-negative")
    tree, t, p, d_true, d_pred, d_lca = pair_depths(y_true, y_pred, taxonomy, node_ref=node_ref)
    w = np.ones(len(t)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w.shape != t.shape:
        raise ValueError(f"sample_weight has shape {w.shape}, expected {t.shape}")
    inter = d_lca + 1.0
    hp, hr = inter / (d_pred + 1.0), inter / (d_true + 1.0)
    if average == "samples":
        P, R = np.average(hp, weights=w), np.average(hr, weights=w)
        return float(P), float(R), _fbeta(P, R, beta)
    if average == "micro":
        P = float((w * inter).sum() / (w * (d_pred + 1.0)).sum())
        R = float((w * inter).sum() / (w * (d_true + 1.0)).sum())
        return P, R, _fbeta(P, R, beta)
    classes = np.unique(t) if labels is None else _indexes(tree, labels, node_ref, "labels value")
    pos = {int(c): k for k, c in enumerate(classes.tolist())}
    k_of = np.array([pos.get(int(x), -1) for x in t.tolist()])
    keep = k_of >= 0
    wsum = np.bincount(k_of[keep], weights=w[keep], minlength=len(classes))
    with np.errstate(invalid="ignore", divide="ignore"):
        Pc = np.bincount(k_of[keep], weights=(w * hp)[keep], minlength=len(classes)) / wsum
        Rc = np.bincount(k_of[keep], weights=(w * hr)[keep], minlength=len(classes)) / wsum
    if average is None:
        return Pc, Rc, _fbeta(Pc, Rc, beta)
    present = wsum > 0
    if not present.any():
        raise ValueError("none of the labels occurs in y_true")
    P, R = float(Pc[present].mean()), float(Rc[present].mean())
    return P, R, _fbeta(P, R, beta)


def hierarchical_consistent_accuracy(y_true, y_pred, taxonomy, *, levels: Sequence | None = None,
                                     node_ref: str = "auto", sample_weight=None) -> float:
    """Share of samples predicted right at every level of the ground-truth path (HCA; module
    docstring).

    Parameters
    ----------
    y_true : node ids or names, one per sample
    y_pred : one node per sample, or one row per sample with one predicted node per level
        (``None`` or ``""`` where the model gave none: wrong where the ground truth has that level)
    levels : with a 2-D ``y_pred``, the level of each column: depths (ints) or rank names
        (default: depths ``1 … n_columns``, the level under the root first)

    Examples
    --------
    >>> tree = {"Life": None, "Esocidae": "Life", "Esox": "Esocidae", "Esox lucius": "Esox",
    ...         "Umbra": "Esocidae", "Umbra limi": "Umbra"}
    >>> hierarchical_consistent_accuracy(["Esox lucius", "Umbra limi"],
    ...     [["Esocidae", "Esox", "Esox lucius"], ["Esocidae", "Esox", "Umbra limi"]], tree)
    0.5
    """
    tree = load_ranked_tree(taxonomy)
    t = _indexes(tree, y_true, node_ref, "y_true value")
    preds = list(y_pred)
    if len(preds) != len(t):
        raise ValueError(f"y_true has {len(t)} samples, y_pred {len(preds)}; they must match")
    w = np.ones(len(t)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    two_d = len(preds) and not isinstance(preds[0], str) and isinstance(preds[0], Sequence)
    if not two_d:
        p = _indexes(tree, preds, node_ref, "y_pred value")
        ok = tree.lca_depth(p, t) == tree.depth[t]
        return float(np.average(ok, weights=w))
    width = {len(r) for r in preds}
    if len(width) != 1:
        raise ValueError(f"y_pred rows have different lengths {sorted(width)}; give one column per level")
    n_levels = width.pop()
    levels = list(range(1, n_levels + 1)) if levels is None else list(levels)
    if len(levels) != n_levels:
        raise ValueError(f"levels has {len(levels)} entries, y_pred {n_levels} columns")
    ok = np.ones(len(t), dtype=bool)
    for j, lev in enumerate(levels):
        truth = tree.ancestor_at_depth(t, int(lev)) if isinstance(lev, (int, np.integer)) else tree.ancestor_at_rank(t, str(lev))
        col = [r[j] for r in preds]
        given = np.array([c not in (None, "") for c in col])
        pidx = np.full(len(t), -1, dtype=np.int64)
        if given.any():
            res = tree.resolve([c for c, g in zip(col, given) if g], node_ref)
            pidx[given] = res["idx"].to_numpy()
        expected = truth >= 0
        ok &= ~expected | (pidx == truth)
    return float(np.average(ok, weights=w))


def mean_tree_cut_accuracy(y_true, y_pred, taxonomy, *, n_cuts: int = 25, dropout_rates=None, seed: int = 0,
                           node_ref: str = "auto", sample_weight=None, return_per_cut: bool = False):
    """Mean tree-cut accuracy (MTA; ProTeCt) of one predicted node per sample over ``n_cuts``
    seeded random cuts of the tree spanned by ``y_true``
    (:func:`~taxoforge.evaluation.tree_cuts.sample_tree_cuts`). With ``return_per_cut``
    also returns the per-cut accuracies and dropout rates.

    >>> tree = {"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b"}
    >>> mean_tree_cut_accuracy(["a1", "b1"], ["a1", "b1"], tree)
    1.0
    >>> mean_tree_cut_accuracy(["a1", "b1"], ["r", "r"], tree)   # the root picks no cut node
    0.0
    """
    from taxoforge.evaluation.tree_cuts import PROTECT_DROPOUT_RATES, sample_tree_cuts

    tree, t, p, _, _, d_lca = pair_depths(y_true, y_pred, taxonomy, node_ref=node_ref)
    cuts = sample_tree_cuts(tree, t, n_cuts=n_cuts, dropout_rates=dropout_rates or PROTECT_DROPOUT_RATES, seed=seed)
    acc = cuts.accuracy(d_lca, sample_weight)
    mta = float(acc.mean())
    return (mta, acc, cuts.dropout) if return_per_cut else mta
