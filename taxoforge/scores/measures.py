"""Hierarchical precision, recall and F-score (SPEC §2; paper 000 §3; Kiritchenko et al. 2006).

For a prediction ``pr`` and a ground truth ``gt`` on one rooted tree, with ``anc(v)`` the
root-to-``v`` path, both ends included::

    hP = |anc(pr) ∩ anc(gt)| / |anc(pr)|        hR = |anc(pr) ∩ anc(gt)| / |anc(gt)|

In a tree ``|anc(pr) ∩ anc(gt)| = depth(lca(pr, gt)) + 1`` and ``|anc(v)| = depth(v) + 1``,
so a whole batch of pairs costs two gathers and one vectorised LCA query
(:meth:`taxoforge.trees.taxonomy.Taxonomy.lca_depth`).

Aggregates (SPEC §2): mean hP, mean hR, and **hF = harmonic mean of mean hP and mean hR**
(the paper's eq. 3); the mean of the per-pair hF is reported beside it as ``hF_pairs``.

>>> import numpy as np, polars as pl
>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "b"], "parent_id": [None, "r", "a", "r"]}))
>>> m = hierarchical_scores(t, t.index_of(["a", "b", "r"]), t.index_of(["a1", "a1", "a1"]))
>>> m["hP"].tolist(), m["hR"].round(3).tolist()
([1.0, 0.5, 1.0], [0.667, 0.333, 0.333])
"""

from __future__ import annotations

import numpy as np

__all__ = ["hierarchical_scores", "harmonic_mean", "aggregate_hierarchical"]


def harmonic_mean(p, r):
    """Elementwise ``2pr / (p + r)``, 0 where both are 0. Works on scalars and arrays."""
    p = np.asarray(p, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    s = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(s > 0, 2.0 * p * r / np.where(s > 0, s, 1.0), 0.0)
    return out if out.ndim else float(out)


def hierarchical_scores(taxonomy, pred_idx, gt_idx) -> dict[str, np.ndarray]:
    """Per-pair ``hP``, ``hR``, ``hF``, ``correct`` (same node) and the depths involved.

    ``pred_idx`` and ``gt_idx`` are integer node indexes of ``taxonomy`` (see
    :meth:`Taxonomy.index_of`), of equal length. Returns numpy arrays keyed ``hP``, ``hR``,
    ``hF``, ``correct``, ``depth_pred``, ``depth_gt``, ``depth_lca``.

    Large batches are processed in chunks of 2**16 pairs on a thread pool (numpy releases
    the GIL), so temporaries stay in cache and every core is used.
    """
    pred_idx = np.asarray(pred_idx, dtype=np.int64)
    gt_idx = np.asarray(gt_idx, dtype=np.int64)
    if pred_idx.shape != gt_idx.shape:
        raise ValueError(f"pred_idx has shape {pred_idx.shape}, gt_idx {gt_idx.shape}; they must match")
    if len(pred_idx) == 0:
        z = np.zeros(0)
        return {"hP": z, "hR": z, "hF": z, "correct": z.astype(bool), "depth_pred": z.astype(np.int64),
                "depth_gt": z.astype(np.int64), "depth_lca": z.astype(np.int64)}
    n = len(pred_idx)
    out = {"hP": np.empty(n), "hR": np.empty(n), "hF": np.empty(n), "correct": np.empty(n, dtype=bool),
           "depth_pred": np.empty(n, np.int64), "depth_gt": np.empty(n, np.int64), "depth_lca": np.empty(n, np.int64)}
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


_CHUNK = 1 << 16


def aggregate_hierarchical(hp, hr, hf=None) -> dict[str, float]:
    """Aggregate per-pair scores: mean ``hP``, mean ``hR``, ``hF`` = harmonic mean of those two
    means (paper 000 eq. 3), and ``hF_pairs`` = mean of the per-pair hF (computed from ``hp``
    and ``hr`` when ``hf`` is not given). Empty input gives NaN."""
    hp = np.asarray(hp, dtype=np.float64)
    hr = np.asarray(hr, dtype=np.float64)
    if len(hp) == 0:
        return {"hP": float("nan"), "hR": float("nan"), "hF": float("nan"), "hF_pairs": float("nan")}
    if hf is None:
        hf = harmonic_mean(hp, hr)
    mp, mr = float(hp.mean()), float(hr.mean())
    return {"hP": mp, "hR": mr, "hF": float(harmonic_mean(mp, mr)), "hF_pairs": float(np.mean(hf))}
