"""Benchmark: text → node mapping for 100,000 predictions on an iNat21-sized tree and on a
tree of about a million nodes, every run in a fresh process.

Complements the scoring engineer's :mod:`benchmarks.bench_mapping` (50,000 predictions on
the iNat21-sized tree, in-process) with the other half of the mapping benchmark:
100,000 predictions, a large tree (the real iNaturalist taxonomy restricted to a
random share of its families, every name a real scientific name; ~1.1 M nodes), and peak
resident memory of candidate and baseline measured the same way (:mod:`benchmarks.harness`).

* Trees: ``inat21`` — :func:`benchmarks.bench_mapping.inat_sample_tree` (10,000 species and
  everything above them, like iNat21); ``large`` — the taxa of a random share of
  iNaturalist's families (:func:`benchmarks.generate.subsample_inat_taxa`): 0.72 gives
  about 1.1 M taxa, the default at ``full`` (the index holds about 300 bytes per node:
  numpy CSR arrays keyed by string hashes, see :mod:`taxoforge.scores.mapping`);
  ``BENCH_MAPPING_LARGE_FRACTION=0.2`` gives the 280 k-node tree of earlier runs.
* Predictions: :func:`benchmarks.bench_mapping.make_predictions` (answer templates,
  higher ranks, misspellings, names inside sentences, no-match text), parsed and
  normalised as in a scoring run.
* Candidate: :class:`taxoforge.scores.mapping.TaxonomyIndex` ``.map`` (index built before
  the clock starts; its build time is reported separately).
* Baseline: :func:`taxoforge.scores.mapping.map_prediction_reference` (Alg. 1 scanning
  every node's names per prediction) on a sample of the same predictions; its time for
  all predictions is extrapolated and labelled so. Agreement: the candidate in exact mode
  (``prefilter=False``) and the default (exact prefilter) must choose the same node as the
  reference on every sampled prediction.

Target: ≥ 5,000 predictions/s on the iNat21-sized tree.

    python -m benchmarks.bench_mapping_scale --size small
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from benchmarks.harness import measure, ratio

__all__ = ["run", "SIZES"]

SIZES = {
    "tiny": {"cases": {"inat21": {"species": 300}}, "predictions": 2_000, "sample": 3},
    "small": {"cases": {"inat21": {"species": 2_000}, "large": {"family_fraction": 0.05}},
              "predictions": 20_000, "sample": 5},
    # 0.72 of the families is about 1.1 M taxa (the index needs ~300 bytes per node; the
    # whole process stays near 2 GiB); BENCH_MAPPING_LARGE_FRACTION=0.2 for the 280 k-node tree.
    # The large case maps 10,000 predictions: answers naming no taxon need an exact top-k,
    # which on 1.1 M names is a full scan (no approximate candidates: the prefilter is exact)
    "full": {"cases": {"inat21": {"species": 10_000},
                       "large": {"family_fraction": float(os.environ.get("BENCH_MAPPING_LARGE_FRACTION", 0.72)),
                                 "predictions": 10_000}},
             "predictions": 100_000, "sample": 5},
}
TARGET_PER_S = 5_000
SEED = 0
TIMEOUT = 3600


def _write_tree(case: dict, folder: Path) -> Path:
    from benchmarks.bench_mapping import inat_sample_tree

    if "species" in case:
        tables = inat_sample_tree(case["species"], seed=SEED)
    else:
        from benchmarks.generate import subsample_inat_taxa
        from taxoforge.sources.inaturalist import inat_tree, read_inat_taxa

        folder.mkdir(parents=True, exist_ok=True)
        p = folder / "taxa.parquet"
        subsample_inat_taxa(read_inat_taxa(), case["family_fraction"], seed=SEED).write_parquet(p)
        tables = inat_tree(p, name="inat-large")
    out = folder / "tree"
    tables.write(out)
    return out


def _predictions(tree_dir: str, n: int) -> list[str]:
    from benchmarks.bench_mapping import make_predictions, mapped_text
    from taxoforge.scores.mapping.answers import joined_normal_form
    from taxoforge.scores.mapping.parse import parse_answer
    from taxoforge.trees.tables import TreeTables

    tables = TreeTables.read(tree_dir)
    return [joined_normal_form(mapped_text(parse_answer(p))) for p in make_predictions(tables, n, seed=SEED)]


def _setup_index(tree_dir: str, n: int, prefilter: bool = True):
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.trees.tables import TreeTables

    tax = TreeTables.read(tree_dir).taxonomy()
    index = TaxonomyIndex(tax, MappingConfig(prefilter=prefilter))
    return index, _predictions(tree_dir, n)


def _setup_tables(tree_dir: str, n: int):
    from taxoforge.trees.tables import TreeTables
    import taxoforge.scores.mapping  # noqa: F401 - imports stay out of the timed part

    return TreeTables.read(tree_dir).taxonomy(), _predictions(tree_dir, n)


def _build_index(state) -> dict:
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex

    tax, preds = state
    index = TaxonomyIndex(tax, MappingConfig())
    return {"summary": {"nodes": len(tax), "names": int(index.stats["names"])}}


def _candidate(state) -> dict:
    index, preds = state
    res = index.map(preds, normalised=True)
    return {"summary": {"predictions": len(preds), "unique_predictions": res.stats.get("unique_predictions"),
                        "stages": res.stats.get("stages"), "full_scans": res.stats.get("full_scans"),
                        "bounded": res.stats.get("bounded")},
            "check": res.node_idx.tolist()}


def _baseline(state) -> dict:
    from taxoforge.scores.mapping import map_prediction_reference
    from taxoforge.scores.mapping.similarity import StringSimilarity

    from benchmarks.bench_mapping import reference_args

    index, preds = state
    nodes, names, forms = reference_args(index)
    sim = StringSimilarity("ratio")
    ref = [map_prediction_reference(p, nodes, names, index.depth, index.parent, sim.pair, index.config, forms)[0]
           for p in preds]
    return {"summary": {"predictions": len(preds)}, "check": [int(x) for x in ref]}


def _public(rec: dict, n: int, extrapolate_to: int | None = None) -> dict:
    out = {k: rec.get(k) for k in ("status", "wall_s", "cpu_s", "peak_rss_bytes", "peak_delta_bytes", "error")
           if rec.get(k) is not None}
    out["predictions"] = n
    out["summary"] = rec.get("summary", {})
    if rec.get("status") == "ok" and rec.get("wall_s"):
        out["predictions_per_s"] = n / rec["wall_s"]
        if extrapolate_to:
            out.update(extrapolated=True, extrapolated_to=extrapolate_to,
                       extrapolated_wall_s=rec["wall_s"] / n * extrapolate_to)
    return out


def run(size: str = "small") -> dict:
    """Run the mapping benchmark at ``size`` (``tiny``, ``small`` or ``full``)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    cfg = SIZES[size]
    s = cfg["sample"]
    cases = []
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-") as d:
        for name, case in cfg["cases"].items():
            n = case.get("predictions", cfg["predictions"])
            tree = _write_tree(case, Path(d) / name)
            build = measure(_setup_tables, _build_index, str(tree), 10, timeout=TIMEOUT)
            cand = measure(_setup_index, _candidate, str(tree), n, True, timeout=TIMEOUT)
            exact = measure(_setup_index, _candidate, str(tree), s, False, timeout=TIMEOUT)
            base = measure(_setup_index, _baseline, str(tree), s, True, timeout=TIMEOUT)
            c = _public(cand, n)
            b = _public(base, s, extrapolate_to=n)
            agree = {}
            if base.get("status") == "ok":
                if exact.get("status") == "ok":
                    agree["exact_mode_same_node"] = sum(x == y for x, y in zip(exact["check"], base["check"])) / s
                if cand.get("status") == "ok":
                    agree["prefilter_same_node"] = sum(x == y for x, y in zip(cand["check"][:s], base["check"])) / s
            cases.append({
                "case": name, "tree": case, "taxonomy_nodes": (build.get("summary") or {}).get("nodes"),
                "names": (build.get("summary") or {}).get("names"),
                "index_build": _public(build, 1), "predictions": n, "candidate": c, "baseline": b,
                "baseline_name": "map_prediction_reference: Alg. 1 scanning every node (sample, extrapolated)",
                "speedup_throughput": (c["predictions_per_s"] / b["predictions_per_s"])
                if "predictions_per_s" in c and "predictions_per_s" in b else None,
                "memory_ratio": ratio(base, cand, "peak_rss_bytes"),
                "agreement": agree,
                "meets_target": (c.get("predictions_per_s", 0) >= TARGET_PER_S) if name == "inat21" else None,
            })
    return {"benchmark": "text_to_node_mapping_scale", "size": size, "target_per_s": TARGET_PER_S, "cases": cases,
            "agree": all(cs["agreement"].get("exact_mode_same_node") == 1.0
                         and cs["agreement"].get("prefilter_same_node") == 1.0 for cs in cases)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2, default=str))
