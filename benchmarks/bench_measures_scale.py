"""Benchmark: hP/hR/hF at three numbers of pairs, every run in a fresh process.

Complements the scoring engineer's :mod:`benchmarks.bench_measures` (in-process timing with
``tracemalloc``) with what the issue also asks: peak resident memory of the candidate
and of each baseline measured the same way (:mod:`benchmarks.harness`), and the scaling
curve.

* Tree: :func:`benchmarks.generate.random_tree_nodes` (``full``: 1 M nodes).
* Pairs: uniform random (prediction, ground truth) node pairs, seeded
  (``full``: 1 M, 3 M and 10 M).
* Candidate: :func:`taxoforge.scores.measures.hierarchical.hierarchical_scores` (two gathers and one
  vectorised LCA-depth query per batch) plus :func:`aggregate_hierarchical`. Building
  the :class:`Taxonomy` (pre-order, sparse table) is measured separately.
* Baselines on a prefix of the same pairs: the paper's set-intersection formula in plain
  Python (:func:`benchmarks.baselines.python_hierarchical_scores`; its time for all pairs
  is **extrapolated** from the sample and labelled so) and ``hiclass.metrics``
  (macro precision/recall over label paths). All three must agree: per pair for the
  Python formula, on the means for hiclass.

Target: ≥ 10 M pairs/s.

    python -m benchmarks.bench_measures_scale --size small
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.harness import loglog_slope, measure

__all__ = ["run", "SIZES"]

SIZES = {
    "tiny": {"nodes": 10_000, "pairs": [10_000, 30_000, 100_000], "python_sample": 2_000, "hiclass_sample": 300},
    "small": {"nodes": 100_000, "pairs": [100_000, 300_000, 1_000_000], "python_sample": 20_000,
              "hiclass_sample": 2_000},
    "full": {"nodes": 1_000_000, "pairs": [1_000_000, 3_000_000, 10_000_000], "python_sample": 100_000,
             "hiclass_sample": 5_000},
}
TARGET_PAIRS_PER_S = 10_000_000
SEED = 0
TIMEOUT = 1200
REPEAT = 3  # fastest of three runs of the candidate (the baselines' samples run once)


def _setup_tree(nodes_path: str):
    import taxoforge.trees.taxonomy  # noqa: F401 - imports stay out of the timed part

    return pl.read_parquet(nodes_path)


def _build_taxonomy(nodes: pl.DataFrame) -> dict:
    from taxoforge.trees.taxonomy import Taxonomy

    t = Taxonomy(nodes)
    t.lca_depth(np.array([0]), np.array([0]))  # pre-order and sparse table
    return {"summary": {"nodes": len(t), "max_depth": int(t.depth_arr.max())}}


def _setup_pairs(nodes_path: str, pairs_path: str, n: int):
    from taxoforge.trees.taxonomy import Taxonomy

    import benchmarks.baselines  # noqa: F401 - imports stay out of the timed part
    import taxoforge.scores.measures.hierarchical  # noqa: F401

    t = Taxonomy(pl.read_parquet(nodes_path))
    t.lca_depth(np.array([0]), np.array([0]))
    pairs = np.load(pairs_path)
    return t, pairs[0, :n].copy(), pairs[1, :n].copy()


def _candidate(state) -> dict:
    from taxoforge.scores.measures.hierarchical import aggregate_hierarchical, hierarchical_scores

    t, pr, gt = state
    m = hierarchical_scores(t, pr, gt)
    agg = aggregate_hierarchical(m["hP"], m["hR"], m["hF"])
    return {"summary": agg, "check": (m["hP"][:200_000].copy(), m["hR"][:200_000].copy())}


def _python(state) -> dict:
    from benchmarks.baselines import python_hierarchical_scores

    t, pr, gt = state
    hp, hr = python_hierarchical_scores(t.parent_idx, pr, gt)
    return {"summary": {"hP": float(np.mean(hp)), "hR": float(np.mean(hr))}, "check": (np.array(hp), np.array(hr))}


def _hiclass(state) -> dict:
    from benchmarks.baselines import hiclass_hierarchical_scores

    t, pr, gt = state
    hp, hr = hiclass_hierarchical_scores(t.parent_idx, pr, gt)
    return {"summary": {"hP": hp, "hR": hr}, "check": (hp, hr)}


def _public(rec: dict, pairs: int, extrapolate_to: int | None = None) -> dict:
    out = {k: rec.get(k) for k in ("status", "wall_s", "cpu_s", "repeats", "wall_s_all", "peak_rss_bytes",
                                   "peak_delta_bytes", "peak_includes_setup", "error") if rec.get(k) is not None}
    out["pairs"] = pairs
    out["summary"] = rec.get("summary", {})
    if rec.get("status") == "ok" and rec.get("wall_s"):
        out["pairs_per_s"] = pairs / rec["wall_s"]
        out["ns_per_pair"] = rec["wall_s"] / pairs * 1e9
        out["cpu_ns_per_pair"] = rec["cpu_s"] / pairs * 1e9
        if extrapolate_to:
            out["extrapolated_wall_s"] = rec["wall_s"] / pairs * extrapolate_to
            out["extrapolated_to_pairs"] = extrapolate_to
            out["extrapolated"] = True
    return out


def run(size: str = "small") -> dict:
    """Run the hP/hR/hF scaling benchmark at ``size`` (``tiny``, ``small`` or ``full``)."""
    from benchmarks.generate import random_tree_nodes

    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    cfg = SIZES[size]
    n_max = cfg["pairs"][-1]
    out: dict = {"benchmark": "hierarchical_measures_scaling", "size": size, "tree_nodes": cfg["nodes"],
                 "target_pairs_per_s": TARGET_PAIRS_PER_S}
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-") as d:
        nodes_path = Path(d) / "tree.parquet"
        random_tree_nodes(cfg["nodes"], seed=SEED).write_parquet(nodes_path)
        rng = np.random.default_rng(SEED)
        pairs_path = Path(d) / "pairs.npy"
        np.save(pairs_path, rng.integers(0, cfg["nodes"], (2, n_max)))

        tb = measure(_setup_tree, _build_taxonomy, str(nodes_path), timeout=TIMEOUT)
        out["taxonomy_build"] = _public(tb, cfg["nodes"])
        runs = []
        for n in cfg["pairs"]:
            rec = measure(_setup_pairs, _candidate, str(nodes_path), str(pairs_path), n, timeout=TIMEOUT, repeat=REPEAT)
            runs.append((n, rec))
        head_n, head = runs[-1]
        py = measure(_setup_pairs, _python, str(nodes_path), str(pairs_path), cfg["python_sample"], timeout=TIMEOUT)
        hc = measure(_setup_pairs, _hiclass, str(nodes_path), str(pairs_path), cfg["hiclass_sample"], timeout=TIMEOUT)

    cand = _public(head, head_n)
    out["candidate"] = cand
    out["meets_target"] = bool(cand.get("pairs_per_s", 0) >= TARGET_PAIRS_PER_S)
    out["baseline_python"] = _public(py, cfg["python_sample"], extrapolate_to=head_n)
    out["baseline_python"]["name"] = "paper's set-intersection formula, plain Python (sample, extrapolated)"
    out["baseline_hiclass"] = _public(hc, cfg["hiclass_sample"], extrapolate_to=head_n)
    out["baseline_hiclass"]["name"] = "hiclass.metrics precision/recall, average='macro' (sample, extrapolated)"
    for key in ("baseline_python", "baseline_hiclass"):
        b = out[key]
        b["speedup_throughput"] = (cand["pairs_per_s"] / b["pairs_per_s"]) if "pairs_per_s" in b and "pairs_per_s" in cand else None
        b["memory_ratio"] = (b["peak_rss_bytes"] / cand["peak_rss_bytes"]) if b.get("peak_rss_bytes") and cand.get("peak_rss_bytes") else None

    # agreement: the candidate's first pairs are the baselines' pairs
    agree = {}
    if head.get("status") == "ok" and py.get("status") == "ok":
        chp, chr_ = head["check"]
        php, phr = py["check"]
        k = min(len(php), len(chp))
        agree["python_per_pair"] = bool(np.allclose(chp[:k], php[:k], rtol=0, atol=1e-12)
                                        and np.allclose(chr_[:k], phr[:k], rtol=0, atol=1e-12))
        if hc.get("status") == "ok":
            s = cfg["hiclass_sample"]
            hhp, hhr = hc["check"]
            agree["hiclass_means"] = bool(np.isclose(hhp, php[:s].mean(), rtol=0, atol=1e-12)
                                          and np.isclose(hhr, phr[:s].mean(), rtol=0, atol=1e-12)
                                          and np.isclose(hhp, chp[:s].mean(), rtol=0, atol=1e-12))
    out["agreement"] = agree
    out["agree"] = bool(agree) and all(agree.values()) and len(agree) == 2

    ok = [(n, r) for n, r in runs if r.get("status") == "ok"]
    out["scaling"] = {
        "what": "hierarchical_scores + aggregate on a fixed tree",
        "pairs": [n for n, _ in ok],
        "ns_per_pair": [r["wall_s"] / n * 1e9 for n, r in ok],
        "cpu_ns_per_pair": [r["cpu_s"] / n * 1e9 for n, r in ok],
        "loglog_slope_wall": loglog_slope([n for n, _ in ok], [r["wall_s"] for _, r in ok]),
        "loglog_slope_cpu": loglog_slope([n for n, _ in ok], [r["cpu_s"] for _, r in ok]),
        "runs": [_public(r, n) for n, r in runs],
    }
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2, default=str))
