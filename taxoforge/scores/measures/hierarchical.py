"""Hierarchical precision, recall and F-score: the one computation every caller shares.

For a prediction ``pr`` and a ground truth ``gt`` on one rooted tree, with ``anc(v)`` the
root-to-``v`` path, both ends included::

    hP = |anc(pr) ∩ anc(gt)| / |anc(pr)|        hR = |anc(pr) ∩ anc(gt)| / |anc(gt)|

In a tree ``|anc(pr) ∩ anc(gt)| = depth(lca(pr, gt)) + 1`` and ``|anc(v)| = depth(v) + 1``,
so a whole batch of pairs costs two gathers and one vectorised LCA query
(:meth:`taxoforge.trees.taxonomy.Taxonomy.lca_depth`): Kiritchenko et al. 2006 [5],
Snæbjarnarson et al. 2025 [1] §3.

The module is laid out as scikit-learn's ``metrics`` are: one computation per step that
every public function shares, parameters checked in one declaration (:data:`PARAMETERS`).

=================================  ==========================================================
function                           what it computes
=================================  ==========================================================
:func:`hierarchical_scores`        per pair: hP, hR, hF, exactness and the three depths
                                   (the scoring run, the breakdowns, the metric functions)
:func:`average_scores`             the averages of per-pair hP and hR — ``samples``,
                                   ``micro``, ``macro`` or per class — and the F-score in
                                   either convention (``f_average``)
:func:`aggregate_hierarchical`     the leaderboard's four numbers: hP, hR, hF (the paper's
                                   convention) and hF_pairs (the other one)
:func:`f_beta`                     elementwise F-beta of precision and recall
=================================  ==========================================================

**Two conventions for the aggregate F-score** (``f_average``):

``"of_means"``  F of the averaged hP and hR — the harmonic mean of mean hP and mean hR for
                beta = 1. This is eq. 3 of Snæbjarnarson et al. 2025 [1], and
                what the leaderboard's ``hF`` is.
``"of_pairs"``  the (weighted) mean of the per-pair F-scores — hiclass's ``average="macro"``
                F (Miranda et al. 2023 [18]), the leaderboard's ``hF_pairs``.

The two differ whenever hP and hR vary between pairs; neither is wrong, but a table must say
which it shows.

References
----------
Numbers of docs/references.md: [1] Snæbjarnarson et al. 2025 (§3, eqs. 1–3); [5] Kiritchenko
et al. 2006 (hierarchical precision and recall over ancestor sets); [18] Miranda et al. 2023
(HiClass, the reference the averages are tested against).

Examples
--------
>>> import numpy as np, polars as pl
>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "b"], "parent_id": [None, "r", "a", "r"]}))
>>> m = hierarchical_scores(t, t.index_of(["a", "b", "r"]), t.index_of(["a1", "a1", "a1"]))
>>> m["hP"].tolist(), m["hR"].round(3).tolist()
([1.0, 0.5, 1.0], [0.667, 0.333, 0.333])
>>> {k: round(v, 4) for k, v in aggregate_hierarchical(m["hP"], m["hR"]).items()}
{'hP': 0.8333, 'hR': 0.4444, 'hF': 0.5797, 'hF_pairs': 0.5667}
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from taxoforge.params import Interval, Options, validate_params

__all__ = ["hierarchical_scores", "average_scores", "aggregate_hierarchical", "f_beta", "harmonic_mean",
           "AVERAGES", "F_AVERAGES", "PARAMETERS"]

#: How per-pair hP and hR are averaged (scikit-learn's vocabulary; ``None``: one value per class).
AVERAGES = ("samples", "micro", "macro", None)
#: How the aggregate F-score is made: F of the averaged hP and hR, or the mean of per-pair F.
F_AVERAGES = ("of_means", "of_pairs")

#: Every parameter of the public functions of this module and of
#: :mod:`taxoforge.evaluation.label_metrics`, and what it may be: checked by the one parameter
#: checker (:func:`taxoforge.params.validate_params`), as scikit-learn's ``validate_params`` does.
PARAMETERS = {
    "average": [Options(tuple(a for a in AVERAGES if a is not None)), None],
    "f_average": [Options(F_AVERAGES)],
    "beta": [Interval(Real, 0, None)],
    "node_ref": [Options(("auto", "id", "name"))],
    "n_cuts": [Interval(Integral, 1, None)],
}


def f_beta(p, r, beta: float = 1.0):
    """Elementwise F-beta of precision ``p`` and recall ``r``: ``(1 + β²)pr / (β²p + r)``,
    0 where both are 0.

    Parameters
    ----------
    p, r : float or array_like
        Precision and recall, broadcast together.
    beta : float
        Weight of recall (1: the harmonic mean).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar input, else an array.

    Examples
    --------
    >>> f_beta(0.5, 1.0), f_beta(0.0, 0.0), f_beta([1.0, 0.5], [0.5, 0.5]).tolist()
    (0.6666666666666666, 0.0, [0.6666666666666666, 0.5])
    """
    p = np.asarray(p, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    b2 = float(beta) * float(beta)
    den = b2 * p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, (1.0 + b2) * p * r / np.where(den > 0, den, 1.0), 0.0)
    return out if out.ndim else float(out)


def harmonic_mean(p, r):
    """Elementwise ``2pr / (p + r)``, 0 where both are 0: :func:`f_beta` with beta = 1.

    Parameters
    ----------
    p : object
        Precisions (hP).
    r : object
        Recalls (hR), as many as ``p``.

    Returns
    -------
    object
        Elementwise ``2pr / (p + r)``, 0 where both are 0: :func:`f_beta` with beta = 1.

    Examples
    --------
    >>> harmonic_mean(0.5, 1.0)
    0.6666666666666666
    """
    return f_beta(p, r, 1.0)


_CHUNK = 1 << 16


def hierarchical_scores(taxonomy, pred_idx, gt_idx) -> dict[str, np.ndarray]:
    """Per-pair ``hP``, ``hR``, ``hF``, ``correct`` (same node) and the depths involved.

    Parameters
    ----------
    taxonomy : taxoforge.trees.taxonomy.Taxonomy
        The tree (anything with ``depth_arr`` and a vectorised ``lca_depth``).
    pred_idx, gt_idx : array_like of int
        Node indexes (:meth:`Taxonomy.index_of`) of the predictions and the ground truths,
        of equal length.

    Returns
    -------
    dict of numpy.ndarray
        ``hP``, ``hR``, ``hF``, ``correct``, ``depth_pred``, ``depth_gt``, ``depth_lca``.

    Notes
    -----
    Large batches are processed in chunks of 2**16 pairs on a thread pool (numpy releases
    the GIL), so temporaries stay in cache and every core is used.
    """
    pred_idx = np.asarray(pred_idx, dtype=np.int64)
    gt_idx = np.asarray(gt_idx, dtype=np.int64)
    if pred_idx.shape != gt_idx.shape:
        raise ValueError(f"pred_idx has shape {pred_idx.shape}, gt_idx {gt_idx.shape}; they must match")
    n = len(pred_idx)
    out = {"hP": np.empty(n), "hR": np.empty(n), "hF": np.empty(n), "correct": np.empty(n, dtype=bool),
           "depth_pred": np.empty(n, np.int64), "depth_gt": np.empty(n, np.int64), "depth_lca": np.empty(n, np.int64)}
    if n == 0:
        return out
    depth = taxonomy.depth_arr

    def work(lo: int) -> None:
        hi = min(n, lo + _CHUNK)
        u, v = pred_idx[lo:hi], gt_idx[lo:hi]
        d_lca = out["depth_lca"][lo:hi]
        d_lca[:] = taxonomy.lca_depth(u, v)
        d_pr, d_gt = out["depth_pred"][lo:hi], out["depth_gt"][lo:hi]
        d_pr[:] = depth[u]
        d_gt[:] = depth[v]
        inter = d_lca + 1.0
        hp, hr, hf = out["hP"][lo:hi], out["hR"][lo:hi], out["hF"][lo:hi]
        np.divide(inter, d_pr + 1.0, out=hp)
        np.divide(inter, d_gt + 1.0, out=hr)
        # hP, hR > 0 always (the root is shared), so no zero division here
        np.multiply(hp, hr, out=hf)
        hf *= 2.0
        hf /= hp + hr
        np.equal(u, v, out=out["correct"][lo:hi])

    starts = range(0, n, _CHUNK)
    if n <= 2 * _CHUNK:
        for lo in starts:
            work(lo)
    else:
        import os
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            list(pool.map(work, starts))
    return out


def average_scores(hp, hr, *, average: str | None = "samples", f_average: str = "of_means", beta: float = 1.0,
                   sample_weight=None, depth_pred=None, depth_gt=None, classes=None, n_classes: int | None = None):
    """Average per-pair hP and hR and make the F-score (module docstring).

    Parameters
    ----------
    hp, hr : array_like
        Per-pair hierarchical precision and recall (:func:`hierarchical_scores`).
    average : {"samples", "micro", "macro", None}
        ``"samples"``: the (weighted) mean of the per-pair values (eq. 2 of
        Snæbjarnarson et al. 2025 [1]; hiclass's ``"macro"``). ``"micro"``:
        ``Σ|anc(pr) ∩ anc(gt)| / Σ|anc(pr)|`` and
        ``Σ|anc(pr) ∩ anc(gt)| / Σ|anc(gt)|`` (hiclass's ``"micro"``; needs ``depth_pred``
        and ``depth_gt``). ``"macro"``: the samples average within each class of
        ``classes``, then the unweighted mean over the classes present (scikit-learn's
        macro). ``None``: the per-class values.
    f_average : {"of_means", "of_pairs"}
        ``"of_means"``: F-beta of the averaged hP and hR. ``"of_pairs"``: the mean of the
        per-pair F-beta, averaged as hP and hR are (not defined for ``"micro"``).
    beta : float
        Weight of recall in the F-score.
    sample_weight : array_like, optional
        A weight per pair.
    depth_pred, depth_gt : array_like of int, optional
        The pairs' depths, for ``"micro"``.
    classes : array_like of int, optional
        For ``"macro"`` and ``None``: each pair's class position in ``0 … n_classes - 1``
        (-1: a pair of no reported class, left out).
    n_classes : int, optional
        The number of classes (default: ``max(classes) + 1``).

    Returns
    -------
    precision, recall, fscore : float, or numpy.ndarray (one per class) for ``average=None``
        NaN for no pairs (or a class without pairs).

    Raises
    ------
    ValueError
        A parameter outside :data:`PARAMETERS`; ``"of_pairs"`` with ``"micro"``; shapes
        that differ; ``"macro"`` with no class present.

    Examples
    --------
    >>> average_scores([1.0, 0.5], [0.5, 0.5])
    (0.75, 0.5, 0.6)
    >>> average_scores([1.0, 0.5], [0.5, 0.5], f_average="of_pairs")
    (0.75, 0.5, 0.5833333333333333)
    >>> average_scores([1.0, 0.5], [0.5, 0.5], average=None, classes=[0, 1])
    (array([1. , 0.5]), array([0.5, 0.5]), array([0.66666667, 0.5       ]))
    """
    validate_params("average_scores", {"average": average, "f_average": f_average, "beta": beta}, PARAMETERS)
    hp = np.asarray(hp, dtype=np.float64)
    hr = np.asarray(hr, dtype=np.float64)
    if hp.shape != hr.shape:
        raise ValueError(f"hp has shape {hp.shape}, hr {hr.shape}; they must match")
    w = np.ones(len(hp)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w.shape != hp.shape:
        raise ValueError(f"sample_weight has shape {w.shape}, expected {hp.shape}")
    if average == "micro":
        if f_average == "of_pairs":
            raise ValueError("f_average='of_pairs' is a mean of per-pair F-scores; average='micro' sums path "
                             "lengths instead and has none: use f_average='of_means'")
        if depth_pred is None or depth_gt is None:
            raise ValueError("average='micro' needs depth_pred and depth_gt (the path lengths it sums)")
        n_pred = np.asarray(depth_pred, dtype=np.float64) + 1.0
        n_gt = np.asarray(depth_gt, dtype=np.float64) + 1.0
        P, R = _weighted_mean(hp, w * n_pred), _weighted_mean(hr, w * n_gt)
        return P, R, f_beta(P, R, beta)
    hf = f_beta(hp, hr, beta) if f_average == "of_pairs" else None
    if average == "samples":
        P, R = _weighted_mean(hp, w), _weighted_mean(hr, w)
        return P, R, (_weighted_mean(hf, w) if hf is not None else f_beta(P, R, beta))
    if classes is None:
        raise ValueError(f"average={average!r} needs classes (each pair's class position)")
    k = np.asarray(classes, dtype=np.int64)
    if k.shape != hp.shape:
        raise ValueError(f"classes has shape {k.shape}, expected {hp.shape}")
    n_classes = int(k.max() + 1 if len(k) else 0) if n_classes is None else int(n_classes)
    keep = k >= 0
    wsum = np.bincount(k[keep], weights=w[keep], minlength=n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        Pc = np.bincount(k[keep], weights=(w * hp)[keep], minlength=n_classes) / wsum
        Rc = np.bincount(k[keep], weights=(w * hr)[keep], minlength=n_classes) / wsum
        Fc = (np.bincount(k[keep], weights=(w * hf)[keep], minlength=n_classes) / wsum if hf is not None
              else f_beta(Pc, Rc, beta))
    Fc = np.where(wsum > 0, Fc, np.nan)
    if average is None:
        return Pc, Rc, Fc
    present = wsum > 0
    if not present.any():
        raise ValueError("none of the classes occurs among the pairs")
    P, R = float(Pc[present].mean()), float(Rc[present].mean())
    return P, R, (float(Fc[present].mean()) if hf is not None else f_beta(P, R, beta))


def _weighted_mean(x: np.ndarray, w: np.ndarray) -> float:
    s = float(w.sum())
    return float((x * w).sum() / s) if s > 0 else float("nan")


def aggregate_hierarchical(hp, hr, hf=None) -> dict[str, float]:
    """The leaderboard's aggregate of per-pair scores, in both F conventions.

    Parameters
    ----------
    hp, hr : array_like
        Per-pair hierarchical precision and recall.
    hf : array_like, optional
        Per-pair hF, when the caller has it (else made from ``hp`` and ``hr``).

    Returns
    -------
    dict
        ``hP`` and ``hR`` (the means), ``hF`` (harmonic mean of those two means:
        ``f_average="of_means"``, eq. 3 of Snæbjarnarson et al. 2025 [1]) and
        ``hF_pairs`` (mean of the per-pair hF: ``f_average="of_pairs"``, hiclass's macro F). NaN for no pairs.

    Examples
    --------
    >>> aggregate_hierarchical([1.0, 0.5], [0.5, 0.5])
    {'hP': 0.75, 'hR': 0.5, 'hF': 0.6, 'hF_pairs': 0.5833333333333333}
    """
    hp = np.asarray(hp, dtype=np.float64)
    hr = np.asarray(hr, dtype=np.float64)
    if len(hp) == 0:
        return {"hP": float("nan"), "hR": float("nan"), "hF": float("nan"), "hF_pairs": float("nan")}
    P, R, F = average_scores(hp, hr)
    pairs = float(np.mean(hf)) if hf is not None else average_scores(hp, hr, f_average="of_pairs")[2]
    return {"hP": P, "hR": R, "hF": F, "hF_pairs": pairs}
