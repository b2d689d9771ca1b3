"""Benchmark: hP/hR/hF over many (prediction, ground truth) pairs on a big tree.

``run(size)`` builds a seeded random tree (:func:`random_tree`: node ``i`` hangs under
``⌊i·U^0.3⌋``, depths up to ~60 like a deep taxonomy; ``small``: 100 k nodes, 1 M pairs; ``full``: 1 M nodes, 10 M pairs), draws random pairs and
times :func:`taxoforge.scores.measures.hierarchical.hierarchical_scores` (vectorised LCA depths through
:meth:`Taxonomy.lca_depth`). Baselines on a sample of the same pairs: the plain-Python
set-intersection formula (walk both root paths, intersect) and ``hiclass.metrics``
(macro precision/recall over root-to-node label paths, root included). All three must
agree; the result says so. Target: ≥ 10 M pairs/s.

    python -m benchmarks.bench_measures --size small
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import numpy as np

SIZES = {"small": {"nodes": 100_000, "pairs": 1_000_000, "sample": 2_000},
         "full": {"nodes": 1_000_000, "pairs": 10_000_000, "sample": 5_000}}
TARGET_PAIRS_PER_S = 10_000_000


def random_tree(n: int, seed: int = 0):
    """Nodes table of a seeded random rooted tree with ``n`` nodes (ids ``t:<k>``, shuffled)."""
    import polars as pl

    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.int64)
    parent = np.minimum(np.floor(i * rng.random(n) ** 0.3).astype(np.int64), i - 1)
    ids = np.array([f"t:{k}" for k in rng.permutation(n).tolist()], dtype=object)
    par = ids[np.maximum(parent, 0)].copy()
    par[0] = None
    return pl.DataFrame({"node_id": ids.tolist(), "parent_id": par.tolist()}, schema_overrides={"parent_id": pl.String})


def _python_formula(parent: np.ndarray, pr: np.ndarray, gt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    par = parent.tolist()

    def anc(v):
        out = set()
        while v >= 0:
            out.add(v)
            v = par[v]
        return out

    hp, hr = [], []
    for p, g in zip(pr.tolist(), gt.tolist()):
        a, b = anc(p), anc(g)
        inter = len(a & b)
        hp.append(inter / len(a))
        hr.append(inter / len(b))
    return np.array(hp), np.array(hr)


def _hiclass(parent: np.ndarray, ids: np.ndarray, pr: np.ndarray, gt: np.ndarray) -> tuple[float, float] | None:
    try:
        from hiclass import metrics
    except ImportError:  # pragma: no cover - dev extra
        return None
    par = parent.tolist()

    def path(v):
        out = []
        while v >= 0:
            out.append(ids[v])
            v = par[v]
        return out[::-1]

    paths_p = [path(v) for v in pr.tolist()]
    paths_g = [path(v) for v in gt.tolist()]
    width = max(max(map(len, paths_p)), max(map(len, paths_g)))
    yp = np.array([p + [""] * (width - len(p)) for p in paths_p], dtype=object)
    yt = np.array([g + [""] * (width - len(g)) for g in paths_g], dtype=object)
    return float(metrics.precision(yt, yp, average="macro")), float(metrics.recall(yt, yp, average="macro"))


def run(size: str = "small", seed: int = 0) -> dict:
    from taxoforge.scores.measures.hierarchical import aggregate_hierarchical, hierarchical_scores
    from taxoforge.trees.taxonomy import Taxonomy

    cfg = SIZES[size]
    t0 = time.perf_counter()
    tax = Taxonomy(random_tree(cfg["nodes"], seed=seed))
    tax.lca_depth(np.array([0]), np.array([0]))  # build the sparse table outside the timing
    t_build = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    n = len(tax.ids)
    pr = rng.integers(0, n, cfg["pairs"])
    gt = rng.integers(0, n, cfg["pairs"])

    # time: fastest of three untraced runs (the first pays the page faults of fresh arrays);
    # memory: one more run under tracemalloc, which slows allocation and is never timed
    walls = []
    for _ in range(3):
        t = time.perf_counter()
        m = hierarchical_scores(tax, pr, gt)
        agg = aggregate_hierarchical(m["hP"], m["hR"], m["hF"])
        walls.append(time.perf_counter() - t)
    wall = min(walls)
    tracemalloc.start()
    hierarchical_scores(tax, pr, gt)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    s = cfg["sample"]
    t = time.perf_counter()
    bp, br = _python_formula(tax.parent_idx, pr[:s], gt[:s])
    base_wall = time.perf_counter() - t
    agree_python = bool(np.allclose(bp, m["hP"][:s]) and np.allclose(br, m["hR"][:s]))
    t = time.perf_counter()
    hc = _hiclass(tax.parent_idx, tax.ids, pr[:s], gt[:s])
    hic_wall = time.perf_counter() - t
    agree_hiclass = None if hc is None else bool(np.isclose(hc[0], bp.mean()) and np.isclose(hc[1], br.mean()))
    thr = cfg["pairs"] / wall
    base_thr = s / base_wall
    return {
        "benchmark": "measures", "size": size, "tree_nodes": n, "max_depth": int(tax.depth_arr.max()),
        "pairs": cfg["pairs"], "tree_build_s": round(t_build, 3),
        "wall_s": round(wall, 4), "pairs_per_s": round(thr), "peak_mem_mb": round(peak / 2**20, 1),
        "target_pairs_per_s": TARGET_PAIRS_PER_S, "meets_target": thr >= TARGET_PAIRS_PER_S,
        "aggregate": {k: round(v, 6) for k, v in agg.items()},
        "baseline_python": {"pairs": s, "wall_s": round(base_wall, 4), "pairs_per_s": round(base_thr), "agrees": agree_python},
        "baseline_hiclass": None if hc is None else {"pairs": s, "wall_s": round(hic_wall, 4),
                                                    "pairs_per_s": round(s / hic_wall), "agrees": agree_hiclass},
        "speedup_vs_python": round(thr / base_thr, 1),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2))
