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
    """
    pred_idx = np.asarray(pred_idx, dtype=np.int64)
    gt_idx = np.asarray(gt_idx, dtype=np.int64)
    if pred_idx.shape != gt_idx.shape:
        raise ValueError(f"pred_idx has shape {pred_idx.shape}, gt_idx {gt_idx.shape}; they must match")
    if len(pred_idx) == 0:
        z = np.zeros(0)
        return {"hP": z, "hR": z, "hF": z, "correct": z.astype(bool), "depth_pred": z.astype(np.int64),
                "depth_gt": z.astype(np.int64), "depth_lca": z.astype(np.int64)}
    d_lca = _lca_depth_chunked(taxonomy, pred_idx, gt_idx)
    d_pr = taxonomy.depth_arr[pred_idx].astype(np.int64)
    d_gt = taxonomy.depth_arr[gt_idx].astype(np.int64)
    inter = (d_lca + 1).astype(np.float64)
    hp = inter / (d_pr + 1)
    hr = inter / (d_gt + 1)
    return {"hP": hp, "hR": hr, "hF": harmonic_mean(hp, hr), "correct": pred_idx == gt_idx,
            "depth_pred": d_pr, "depth_gt": d_gt, "depth_lca": d_lca}


_CHUNK = 1 << 18


def _lca_depth_chunked(taxonomy, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``taxonomy.lca_depth`` over chunks of 2**18 pairs, run on a thread pool (numpy
    releases the GIL): temporaries stay in cache and every core is used."""
    n = len(u)
    if n <= 2 * _CHUNK:
        return np.asarray(taxonomy.lca_depth(u, v), dtype=np.int64)
    import os
    from concurrent.futures import ThreadPoolExecutor

    out = np.empty(n, dtype=np.int64)

    def work(start: int) -> None:
        out[start:start + _CHUNK] = taxonomy.lca_depth(u[start:start + _CHUNK], v[start:start + _CHUNK])

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        list(pool.map(work, range(0, n, _CHUNK)))
    return out


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
