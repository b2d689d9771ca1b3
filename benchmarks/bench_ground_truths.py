"""Benchmark: resolving dataset labels to nodes (the label linker, docs/method.md#ground-truths).

``run(size)`` resolves seeded labels made from real iNaturalist taxa against the offline
iNaturalist tree (``small``/``full``: the whole 1.38 M-node tree; ``tiny``: a 1,500-species
cut of it): current names as written, lower case and with underscores (file-name style),
species moved to another genus of their family (genus transfers), trinomials of made-up
subspecies (partial: the species), made-up species of real genera (partial: the genus or a
transfer) and unknown genera.

Candidate: :func:`taxoforge.links.resolve.resolve_labels` on all labels at once (one batch,
as scoring calls it). Baseline: the same routine called once per label, as a per-row resolver
would, on a sample of the labels (throughput extrapolated). Agreement: every sampled label
resolves alone exactly as in the batch. Target: thousands of labels in seconds (≥ 1,000
labels/s on the full tree, tree loading excluded).

    python -m benchmarks.bench_ground_truths --size small
"""

from __future__ import annotations

import argparse
import json
import time
import numpy as np
import polars as pl

SIZES = {"tiny": {"species": 1_500, "labels": 300, "baseline_sample": 5},
         "small": {"species": None, "labels": 2_000, "baseline_sample": 8},
         "full": {"species": None, "labels": 10_000, "baseline_sample": 20}}
TARGET_PER_S = 1_000
MADE_UP = ["imaginarius", "fictus", "nonexistens", "inventus", "falsus", "ignotus"]


def make_labels(tables, n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` seeded labels (module docstring) from the tree's species."""
    rng = np.random.default_rng(seed)
    nodes = tables.nodes
    sp = nodes.filter(pl.col("rank") == "species").select("node_id", "parent_id", "label")
    sp = sp.filter(pl.col("label").str.count_matches(" ") == 1)
    genera = nodes.filter(pl.col("rank") == "genus").select(pl.col("node_id").alias("parent_id"),
                                                            pl.col("parent_id").alias("family"), pl.col("label").alias("genus"))
    sp = sp.join(genera, on="parent_id")
    by_family = genera.group_by("family").agg(pl.col("genus"))
    fam_genera = dict(by_family.iter_rows())
    pick = sp.sample(n, with_replacement=True, seed=seed).select("label", "family", "genus").rows()
    out = []
    for i, (name, family, genus) in enumerate(pick):
        g, e = name.split(" ", 1)
        kind = int(rng.integers(0, 10))
        if kind < 4:
            out.append(name)
        elif kind < 6:
            out.append(name.lower().replace(" ", "_") if kind == 4 else name.upper())
        elif kind == 6:  # moved to another genus of the family (or nowhere to go: unchanged)
            others = [x for x in fam_genera.get(family, []) if x != genus]
            out.append(f"{others[int(rng.integers(len(others)))]} {e}" if others else name)
        elif kind == 7:
            out.append(f"{name} {MADE_UP[int(rng.integers(len(MADE_UP)))]}")
        elif kind == 8:
            out.append(f"{g} {MADE_UP[int(rng.integers(len(MADE_UP)))]}")
        else:
            out.append(f"Nullagenus{i % 97} {e}")
    labels = pl.DataFrame({"label_text": out}).unique(maintain_order=True)
    return labels.select(pl.lit("bench").alias("dataset"), pl.col("label_text").alias("label_id"), "label_text")


def _tree(size: str, seed: int):
    if SIZES[size]["species"]:
        from benchmarks.bench_mapping import inat_sample_tree

        return inat_sample_tree(SIZES[size]["species"], seed=seed)
    from taxoforge.sources.inaturalist import inat_tree

    return inat_tree()


def run(size: str = "small", seed: int = 0) -> dict:
    from taxoforge.links.resolve import resolution_summary, resolve_labels

    cfg = SIZES[size]
    t = time.perf_counter()
    tree = _tree(size, seed)
    t_tree = time.perf_counter() - t
    labels = make_labels(tree, cfg["labels"], seed=seed)

    t = time.perf_counter()
    links = resolve_labels(labels, tree.names, tree.nodes)
    wall = time.perf_counter() - t

    sample = labels.head(cfg["baseline_sample"])
    t = time.perf_counter()
    alone = [resolve_labels(sample.slice(i, 1), tree.names, tree.nodes) for i in range(sample.height)]
    base_wall = time.perf_counter() - t
    cols = ["label_id", "status", "method", "node_id", "candidates", "detail"]
    batch = {r["label_id"]: r for r in links.select(cols).iter_rows(named=True)}
    agree = [a.select(cols).row(0, named=True) == batch[a["label_id"][0]] for a in alone]

    thr = labels.height / wall
    base_thr = sample.height / base_wall
    summary = resolution_summary(links)
    return {
        "benchmark": "ground_truths", "size": size, "taxonomy_nodes": tree.nodes.height, "names": tree.names.height,
        "tree_build_s": round(t_tree, 2), "labels": labels.height, "wall_s": round(wall, 3),
        "labels_per_s": round(thr, 1), "by_status": {k: summary[k] for k in ("linked", "ambiguous", "unmatched")},
        "partial": summary["partial"], "by_method": summary["by_method"],
        "example_details": {m: d for m, d in links.group_by("method", maintain_order=True).agg(pl.col("detail").first())
                            .with_columns(pl.col("method").fill_null("unmatched")).iter_rows()},
        "target_per_s": TARGET_PER_S, "meets_target": thr >= TARGET_PER_S,
        "baseline": {"labels": sample.height, "wall_s": round(base_wall, 3), "labels_per_s": round(base_thr, 2)},
        "speedup": round(thr / base_thr, 1),
        "agreement_with_baseline": float(np.mean(agree)) if agree else None,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2))
