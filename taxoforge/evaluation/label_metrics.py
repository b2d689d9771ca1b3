"""Hierarchical metrics of node *labels* in scikit-learn's style: one import, plain
sequences of node ids or names in, numbers out.

The per-pair computation and its averages live in one place,
:mod:`taxoforge.scores.measures.hierarchical` (the scoring run uses the same functions): this module
resolves labels to nodes and hands the pairs over.

``y_true`` and ``y_pred`` hold node ids or node names (labels) of ``taxonomy`` — anything
:func:`~taxoforge.snapshots.load.load_ranked_tree` accepts: a tree or snapshot
folder, ``NAME@VERSION``, a :class:`~taxoforge.trees.tables.TreeTables`, a nodes
DataFrame, or a plain ``{child: parent}`` dict. Values become nodes through the one label
resolver, as ground truths do in scoring (:func:`taxoforge.links.tree_labels.node_indexes`:
node id, id prefix, the tree's links table, exact and normalised name, synonym, epithet
variant, genus transfer, then a partial species or genus ground truth). ``node_ref`` says
which rules run: ``"auto"`` (all), ``"id"`` (node ids only) or ``"name"`` (names only); a
value that names no node or several raises
:class:`~taxoforge.links.tree_labels.UnresolvedLabels` listing them.

Definitions (Kiritchenko et al. 2006; Taxonomy-Aware Evaluation of VLMs §3). ``anc(v)`` is
the root-to-``v`` path, both ends included; per sample ``i``,
``I_i = |anc(pred_i) ∩ anc(true_i)|``:

``average="samples"``  hP = mean of ``I_i / |anc(pred_i)|``, hR = mean of ``I_i / |anc(true_i)|``
                        (Taxonomy-Aware Evaluation of VLMs eq. 2; hiclass's ``average="macro"``);
``average="micro"``    hP = ``Σ I_i / Σ |anc(pred_i)|``, hR = ``Σ I_i / Σ |anc(true_i)|``
                        (hiclass's ``average="micro"``);
``average="macro"``    hP and hR per ground-truth class (the samples mean over the samples of
                        that class), then the unweighted mean over classes — every class
                        counts the same, as scikit-learn's macro average;
``average=None``       the per-class hP, hR, F arrays, classes in ``labels`` order (default:
                        the sorted distinct ground-truth node ids).

**The F-score, two conventions** (``f_average``): ``"of_means"`` (default) is ``F_β`` of the
averaged hP and hR — the harmonic mean of the means, eq. 3 of the Taxonomy-Aware Evaluation
of VLMs, and the leaderboard's ``hF``; ``"of_pairs"`` is the mean of the per-sample ``F_β``
(per class first for ``"macro"``) — hiclass's macro F, the leaderboard's ``hF_pairs``. With
``average="samples"`` both agree with
:func:`taxoforge.scores.measures.hierarchical.aggregate_hierarchical` and the leaderboard on the same
pairs.

**Hierarchical consistent accuracy** (HCA; ProTeCt, Wu et al. CVPR 2024, and the
hierarchical-VQA studies after it): the share of samples whose prediction is right at
*every* level of the ground truth's path. With per-level predictions (a 2-D ``y_pred``, one
column per level — e.g. a model's answers to rank probes) a sample counts when every
column equals the ground truth's ancestor at that level. With one predicted node per
sample, the prediction at level ``j`` is its ancestor at depth ``j``: the sample counts when
every level of the ground-truth path is matched, i.e. when the prediction is the ground
truth or below it (``hR = 1``); a correct but more generic answer does not count.

**Mean tree-cut accuracy** (MTA; ProTeCt): the mean over random tree cuts of the accuracy
of classifying among the cut's nodes (:mod:`taxoforge.trees.cuts`). A small tree has few
distinct cuts: the function warns (:class:`~taxoforge.trees.cuts.FewerCutsWarning`) when it
found fewer than asked, and ``return_per_cut`` gives one accuracy per distinct cut.

>>> tree = {"animal": None, "dog": "animal", "cat": "animal", "husky": "dog", "beagle": "dog"}
>>> p, r, f = hierarchical_precision_recall_fscore(["husky", "beagle", "cat"], ["husky", "dog", "husky"], tree)
>>> round(p, 4), round(r, 4), round(f, 4)
(0.7778, 0.7222, 0.749)
>>> hierarchical_precision_recall_fscore(["husky", "beagle", "cat"], ["husky", "dog", "husky"], tree, average="micro")
(0.75, 0.75, 0.75)
>>> round(hierarchical_precision_recall_fscore(["husky", "beagle", "cat"], ["husky", "dog", "husky"], tree,
...                                            f_average="of_pairs")[2], 4)
0.7333
>>> hierarchical_consistent_accuracy(["husky", "beagle", "cat"], ["husky", "dog", "cat"], tree)
0.6666666666666666
>>> hierarchical_consistent_accuracy(["husky", "beagle"], [["dog", "husky"], ["dog", "husky"]], tree)
0.5
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from taxoforge.links.tree_labels import node_indexes, resolve_nodes
from taxoforge.scores.measures.hierarchical import average_scores, check_parameters, hierarchical_scores
from taxoforge.snapshots.load import load_ranked_tree
from taxoforge.trees.cuts import PROTECT_DROPOUT_RATES, FewerCutsWarning, sample_tree_cuts
from taxoforge.trees.ranked_tree import RankedTree

__all__ = ["hierarchical_precision_recall_fscore", "hierarchical_consistent_accuracy", "mean_tree_cut_accuracy",
           "pair_depths"]


def _indexes(tree: RankedTree, values, node_ref: str, what: str) -> np.ndarray:
    vals = list(values)
    return node_indexes(tree, vals, node_ref=node_ref, what=what)


def _pairs(y_true, y_pred, taxonomy, node_ref: str):
    """``(tree, true_idx, pred_idx, per-pair scores)``: the labels resolved, the pairs scored
    by :func:`taxoforge.scores.measures.hierarchical.hierarchical_scores`."""
    check_parameters(node_ref=node_ref)
    tree = load_ranked_tree(taxonomy)
    t = _indexes(tree, y_true, node_ref, "y_true value")
    p = _indexes(tree, y_pred, node_ref, "y_pred value")
    if len(t) != len(p):
        raise ValueError(f"y_true has {len(t)} samples, y_pred {len(p)}; they must match")
    if not len(t):
        raise ValueError("no samples")
    return tree, t, p, hierarchical_scores(tree.taxonomy, p, t)


def pair_depths(y_true, y_pred, taxonomy, *, node_ref: str = "auto"):
    """The resolved pairs and their depths.

    Parameters
    ----------
    y_true, y_pred : sequences of node ids or names, one per sample
    taxonomy : the tree (module docstring)
    node_ref : {"auto", "id", "name"}
        How the values name nodes.

    Returns
    -------
    tuple
        ``(tree, true_idx, pred_idx, depth_true, depth_pred, depth_lca)``.
    """
    tree, t, p, h = _pairs(y_true, y_pred, taxonomy, node_ref)
    return tree, t, p, h["depth_gt"], h["depth_pred"], h["depth_lca"]


def hierarchical_precision_recall_fscore(y_true, y_pred, taxonomy, *, average: str | None = "samples",
                                         beta: float = 1.0, labels: Sequence | None = None, node_ref: str = "auto",
                                         sample_weight=None, f_average: str = "of_means"):
    """Hierarchical precision, recall and F-beta of node predictions (module docstring).

    Parameters
    ----------
    y_true, y_pred : sequences of node ids or names, one per sample
    taxonomy : the tree (see the module docstring for the accepted forms)
    average : {"samples", "micro", "macro", None}
        ``"samples"`` (default; the Taxonomy-Aware Evaluation of VLMs), ``"micro"``,
        ``"macro"`` or ``None`` (per class).
    beta : float
        Weight of recall in the F-score (1: the harmonic mean).
    labels : sequence, optional
        The classes reported with ``average=None`` and averaged by ``"macro"`` (node ids
        or names of ground-truth classes; default: every ground-truth class).
    node_ref : {"auto", "id", "name"}
        How ``y_true``/``y_pred``/``labels`` name nodes.
    sample_weight : array_like, optional
        A weight per sample.
    f_average : {"of_means", "of_pairs"}
        ``"of_means"`` (default): F-beta of the averaged hP and hR (the paper's eq. 3, the
        leaderboard's ``hF``); ``"of_pairs"``: the mean of the per-sample F-beta (hiclass's
        macro F, the leaderboard's ``hF_pairs``); not defined with ``average="micro"``.

    Returns
    -------
    precision, recall, fscore : floats, or arrays (one per class in ``labels`` order) when
        ``average`` is None

    Raises
    ------
    ValueError
        A parameter out of range, samples of different lengths, no samples.
    taxoforge.links.tree_labels.UnresolvedLabels
        A value that names no node, or several.

    Examples
    --------
    >>> tree = {"r": None, "a": "r", "a1": "a", "b": "r"}
    >>> hierarchical_precision_recall_fscore(["a1", "a1", "b"], ["a", "b", "b"], tree, average=None)
    (array([0.75, 1.  ]), array([0.5, 1. ]), array([0.6, 1. ]))
    >>> hierarchical_precision_recall_fscore(["a1", "a1", "b"], ["a", "b", "b"], tree, average="macro")
    (0.875, 0.75, 0.8076923076923077)
    """
    check_parameters(average=average, beta=beta, f_average=f_average)
    tree, t, p, h = _pairs(y_true, y_pred, taxonomy, node_ref)
    common = {"average": average, "f_average": f_average, "beta": beta, "sample_weight": sample_weight}
    if average in ("samples", "micro"):
        return average_scores(h["hP"], h["hR"], depth_pred=h["depth_pred"], depth_gt=h["depth_gt"], **common)
    classes = np.unique(t) if labels is None else _indexes(tree, labels, node_ref, "labels value")
    pos = {int(c): k for k, c in enumerate(classes.tolist())}
    k_of = np.array([pos.get(int(x), -1) for x in t.tolist()], dtype=np.int64)
    if average == "macro" and not (k_of >= 0).any():
        raise ValueError("none of the labels occurs in y_true")
    return average_scores(h["hP"], h["hR"], classes=k_of, n_classes=len(classes), **common)


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
    taxonomy : object
        The taxonomy.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.
    sample_weight : optional
        A weight per sample (default: equal weights).

    Returns
    -------
    float
        Share of samples predicted right at every level of the ground-truth path (HCA;
        module docstring).

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
            res = resolve_nodes(tree, [c for c, g in zip(col, given) if g], node_ref=node_ref)
            pidx[given] = res["idx"].to_numpy()
        expected = truth >= 0
        ok &= ~expected | (pidx == truth)
    return float(np.average(ok, weights=w))


def mean_tree_cut_accuracy(y_true, y_pred, taxonomy, *, n_cuts: int = 25, dropout_rates=None, seed: int = 0,
                           node_ref: str = "auto", sample_weight=None, return_per_cut: bool = False):
    """Mean tree-cut accuracy (MTA; ProTeCt) of one predicted node per sample over ``n_cuts``
    seeded random cuts of the tree spanned by ``y_true``
    (:func:`~taxoforge.trees.cuts.sample_tree_cuts`).

    Parameters
    ----------
    y_true, y_pred : sequences of node ids or names, one per sample
    taxonomy : the tree (module docstring)
    n_cuts : int
        Distinct cuts asked for. A small tree has fewer: the mean is then over the distinct
        cuts there are, and a :class:`~taxoforge.trees.cuts.FewerCutsWarning` says how many.
    dropout_rates : sequence of float, optional
        ProTeCt's rates (default 0.1, 0.3, 0.5, 0.7, 0.9).
    seed : int
        Seed of the cuts.
    node_ref : {"auto", "id", "name"}
    sample_weight : array_like, optional
    return_per_cut : bool
        Also return the per-cut accuracies and dropout rates (their length is the number of
        distinct cuts used).

    Returns
    -------
    float, or (float, numpy.ndarray, numpy.ndarray) with ``return_per_cut``

    Examples
    --------
    >>> tree = {"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b"}
    >>> mean_tree_cut_accuracy(["a1", "b1"], ["a1", "b1"], tree, n_cuts=4)
    1.0
    >>> mean_tree_cut_accuracy(["a1", "b1"], ["r", "r"], tree, n_cuts=4)   # the root picks no cut node
    0.0
    """
    check_parameters(n_cuts=n_cuts)
    tree, t, _p, h = _pairs(y_true, y_pred, taxonomy, node_ref)
    cuts = sample_tree_cuts(tree, t, n_cuts=int(n_cuts), dropout_rates=dropout_rates or PROTECT_DROPOUT_RATES,
                            seed=seed)
    if cuts.shortfall:
        warnings.warn(f"mean_tree_cut_accuracy: {cuts.shortfall}; the mean is over those {len(cuts)}",
                      FewerCutsWarning, stacklevel=2)
    acc = cuts.accuracy(h["depth_lca"], sample_weight)
    mta = float(acc.mean())
    return (mta, acc, cuts.dropout) if return_per_cut else mta
