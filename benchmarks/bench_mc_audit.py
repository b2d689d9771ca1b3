"""Benchmark: the audit of multiple-choice sets built from VLM4Bio's own species names.

``run(size)`` takes every species name of the VLM4Bio result files in
``../shared/data/vlm4bio`` (the targets and the options of its questions: fish, bird,
butterfly), resolves them against the offline iNaturalist tree (1.38 M taxa) and builds easy
and medium sets from them twice:

* candidate — the default distractor pool, the taxa of the labels given (VLM4Bio draws every
  option from the species of the same dataset);
* baseline — the whole tree as the pool (what ``build_questions`` did before it had a pool).

For each it reports the questions built and skipped, the rule violations and the distractors
outside the pool (``check_questions``: both must be 0), the share of easy distractors from
another kingdom and from another class than the answer, and the labels left unresolved next
to what scoring's resolver leaves (they must be no more).

Sizes: ``small`` and ``full`` are the same (the shared names are few); the tree is loaded
once, before the clock starts.

    python -m benchmarks.bench_mc_audit
"""

from __future__ import annotations

import argparse
import json
import time

SIZES = {"small": {}, "full": {}}
POOLS = {"candidate": "labels", "baseline": "tree"}
DIFFICULTIES = ("easy", "medium")


def _shares(tree, qs) -> dict:
    """The share of distractors from another kingdom / class than the answer."""
    import numpy as np

    other = {"kingdom": 0, "class": 0}
    n = 0
    for target, nodes in qs.questions.select("target-node", "option-nodes").iter_rows():
        a = tree.index_of([target])
        d = tree.index_of([x for x in nodes if x != target])
        for rank in other:
            other[rank] += int(np.sum(tree.ancestor_at_rank(d, rank) != tree.ancestor_at_rank(a, rank)[0]))
        n += len(d)
    return {f"other_{rank}_share": (k / n if n else None) for rank, k in other.items()}


def run(size: str = "small") -> dict:
    import polars as pl

    from benchmarks.shared_data import missing, shared_path
    from taxoforge.evaluation import multiple_choice as mc
    from taxoforge.links.resolve import resolve_labels
    from taxoforge.links.scientific_names import vlm4bio_labels
    from taxoforge.sources.inaturalist import inat_tree
    from taxoforge.trees.taxonomy import Taxonomy

    folder = shared_path("vlm4bio")
    if folder is None:
        return {"size": size, "status": "skipped", "error": missing("vlm4bio")}
    t = time.perf_counter()
    tables = inat_tree()
    tree = Taxonomy.of(tables)
    load_s = time.perf_counter() - t
    names = vlm4bio_labels(folder)
    out: dict = {"size": size, "tree_nodes": len(tree), "tree_load_seconds": load_s, "datasets": {}}
    for ds in sorted(names["dataset"].unique().to_list()):
        labels = names.filter(pl.col("dataset") == ds)
        scoring = resolve_labels(labels, tables)
        row: dict = {"labels": labels.height,
                     "scoring_unresolved": scoring.filter(pl.col("status") != "linked").height}
        for role, pool in POOLS.items():
            for d in DIFFICULTIES:
                t = time.perf_counter()
                try:
                    qs = mc.build_questions(tree, labels["label_text"], d, seed=0, pool=pool)
                except mc.TreeTooShallow as e:
                    row[f"{role}_{d}"] = {"pool": pool, "questions": 0, "error": str(e)[:200]}
                    continue
                seconds = time.perf_counter() - t
                problems = mc.check_questions(tree, qs, d)
                outside = problems.filter(pl.col("problem").str.starts_with("distractor(s) outside the pool")).height
                row[f"{role}_{d}"] = {
                    "pool": pool, "seconds": seconds, "questions": qs.questions.height, "skipped": qs.skipped.height,
                    "rule_violations": problems.height - outside, "outside_pool": outside,
                    "unresolved": qs.skipped.filter(pl.col("reason").str.starts_with("unresolved label")).height,
                    **_shares(tree, qs)}
        out["datasets"][ds] = row
    runs = [v for r in out["datasets"].values() for k, v in r.items() if k.startswith("candidate_") and "seconds" in v]
    out["zero_violations"] = all(v["rule_violations"] == 0 and v["outside_pool"] == 0 for v in runs)
    out["no_more_unresolved_than_scoring"] = all(
        v["unresolved"] <= r["scoring_unresolved"] for r in out["datasets"].values()
        for k, v in r.items() if k.startswith("candidate_") and "seconds" in v)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=list(SIZES), default="small")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.size), indent=2, default=str))


if __name__ == "__main__":
    main()
