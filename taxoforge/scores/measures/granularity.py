"""Granularity of the answers: where on the truth's path, or off it, each answer lies.

Every answer with a full ground truth falls in exactly one class (``granularity``, one per
sample; :func:`granularity_counts` counts them per group, and the counts add up to the
leaderboard's ``n``):

================  ==========================================================================
class             the answer …
================  ==========================================================================
``exact``         is the ground-truth node
``too_generic``   is a proper ancestor of the truth ("a fish" for *Cottus bairdii*, "a dog"
                  for a beagle): right, but less specific than asked — ``hP = 1``
``too_specific``  is a proper descendant of the truth (a subspecies for a species)
``near_miss``     meets the truth at the truth's parent: a sibling of the truth or below one
                  (another species of the right genus)
``other_branch``  meets the truth higher up: a wrong answer on another branch of the tree
``abstained``     is an abstention (a refusal that names nothing; scored as the root)
``unmapped``      names no node: an empty answer, or "none of the above" where the truth is
                  one of the options (both scored as the root, neither an abstention)
================  ==========================================================================

Conti et al. 2025 [3] found over-generic answers the most common error of large multimodal
models classifying images in an open world; a single accuracy or hF hides them, and mistake
severity counts them as mistakes at the height of the answer. This table shows them apart.
Rows with a partial ground truth (only the genus or species above the label resolved) have no
class: the measures leave them out too.

Examples
--------
>>> import polars as pl
>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2", "a1x"],
...                            "parent_id": [None, "r", "r", "a", "a", "a1"]}))
>>> s = pl.DataFrame({"model": "m", "dataset": "d", "prompt": "p",
...                   "gt_node": ["a1", "a1", "a1", "a1", "a1", "a1"],
...                   "pred_node": ["a1", "a", "a1x", "a2", "b", "r"],
...                   "abstained": [False, False, False, False, False, True]})
>>> granularity(s, t).to_list()
['exact', 'too_generic', 'too_specific', 'near_miss', 'other_branch', 'abstained']
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.scores.measures.hierarchical import hierarchical_scores

__all__ = ["GRANULARITY", "UNMAPPED_STAGES", "granularity", "granularity_counts", "granularity_columns"]

#: The classes, in the order tables show them.
GRANULARITY = ("exact", "too_generic", "too_specific", "near_miss", "other_branch", "abstained", "unmapped")
#: Mapping stages that name no node (the answer is scored as the root without being an abstention).
UNMAPPED_STAGES = ("empty", "none_of_the_above")


def granularity_columns() -> list[str]:
    """The leaderboard's count columns, ``granularity_<class>`` in :data:`GRANULARITY` order.

    Returns
    -------
    list of str
    """
    return [f"granularity_{g}" for g in GRANULARITY]


def granularity(samples: pl.DataFrame, tree=None) -> pl.Series:
    """The granularity class of every sample (module docstring).

    Parameters
    ----------
    samples : polars.DataFrame
        ``gt_node`` and ``pred_node`` (or ``depth_gt``, ``depth_pred``, ``depth_lca`` and
        ``correct`` already computed); ``abstained``, ``map_stage`` and ``gt_partial`` when
        present.
    tree : taxoforge.trees.taxonomy.Taxonomy, optional
        The tree (needed only when the depth columns are missing).

    Returns
    -------
    polars.Series
        ``granularity`` (String): a class of :data:`GRANULARITY`, null for a row with a
        partial ground truth.
    """
    n = samples.height
    if all(c in samples.columns for c in ("depth_gt", "depth_pred", "depth_lca", "correct")):
        dg, dp, dl = (samples[c].to_numpy().astype(np.int64) for c in ("depth_gt", "depth_pred", "depth_lca"))
        correct = samples["correct"].to_numpy().astype(bool)
    else:
        if tree is None:
            raise ValueError("granularity needs the depth columns or the tree")
        tax = getattr(tree, "taxonomy", tree)
        h = hierarchical_scores(tax, tax.index_of(samples["pred_node"].cast(pl.String).to_list()),
                                tax.index_of(samples["gt_node"].cast(pl.String).to_list()))
        dg, dp, dl, correct = h["depth_gt"], h["depth_pred"], h["depth_lca"], np.asarray(h["correct"], bool)
    abstained = samples["abstained"].to_numpy().astype(bool) if "abstained" in samples.columns else np.zeros(n, bool)
    unmapped = (samples["map_stage"].cast(pl.String).is_in(UNMAPPED_STAGES).to_numpy() if "map_stage" in
                samples.columns else np.zeros(n, bool))
    out = np.select(
        [abstained, correct, unmapped, dl == dp, dl == dg, dl == dg - 1],
        ["abstained", "exact", "unmapped", "too_generic", "too_specific", "near_miss"], default="other_branch")
    s = pl.Series("granularity", out.tolist(), dtype=pl.String)
    if "gt_partial" in samples.columns:
        s = s.set(samples["gt_partial"].fill_null(False), None)
    return s


def granularity_counts(samples: pl.DataFrame, by=("model", "dataset", "prompt")) -> pl.DataFrame:
    """Per group of ``by``: how many answers fall in each class (:func:`granularity_columns`).

    Parameters
    ----------
    samples : polars.DataFrame
        With a ``granularity`` column (:func:`granularity`).
    by : sequence of str
        Group keys (those the table lacks are left out).

    Returns
    -------
    polars.DataFrame
        ``by`` and one Int64 count per class; rows with a null class (partial ground truths)
        are not counted.

    Examples
    --------
    >>> s = pl.DataFrame({"model": ["m", "m", "m"], "granularity": ["exact", "too_generic", None]})
    >>> granularity_counts(s, by=("model",)).select("granularity_exact", "granularity_too_generic").rows()
    [(1, 1)]
    """
    keys = [k for k in by if k in samples.columns]
    aggs = [(pl.col("granularity") == g).fill_null(False).sum().cast(pl.Int64).alias(f"granularity_{g}")
            for g in GRANULARITY]
    if not keys:
        return samples.select(aggs)
    return samples.group_by(keys, maintain_order=True).agg(aggs).sort(keys)
