"""Benchmark: the embedding measure (all-MiniLM-L6-v2 from PyPI) against the string measure.

    python -m benchmarks.bench_embeddings --size small

On the ImageNet-1k tree (``tiny``: 40 iNaturalist species and their ancestors, seconds), in one process,
with the model loaded first (untimed, reported):

* **name embeddings** — every name of the tree embedded once (``embed_names``: the cost a
  tree pays once, then stored beside its index or kept in the process), names/s;
* **index build** — ``TaxonomyIndex`` with the string measure (baseline) and with the
  embedding measure: cold (names embedded), warm (the same names again in the same process:
  :data:`taxoforge.scores.mapping.sentence_models.NAME_EMBEDDINGS`) and from stored embeddings
  (``np.save`` then ``bind(names, np.load(..., mmap_mode="r"))``);
* **mapping** — the same generated answers
  (:func:`benchmarks.bench_mapping_fidelity.generated_answers`: perturbed names, answer
  templates, hedges, refusals) mapped with the string measure (baseline) and the embedding
  measure (a fresh query cache; the answers' queries embedded in batches first,
  ``Similarity.prepare``, timed with the mapping), answers/s and the ratio embedding /
  string; how often the two choose the same node. Beside it, the first answers mapped
  without ``prepare`` (one model call per answer), which must give the same nodes.

All of it on the CPU, and again on CUDA where ``torch.cuda.is_available()`` (else reported
as not measured, with the reason); on the GPU also the largest difference between its name
embeddings and the CPU's, and whether the mapping chose the same nodes (fp32 on both).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

SIZES = {"tiny": {"tree": "inat-sample", "answers": 200, "one_by_one": 50},
         "small": {"tree": "imagenet1k", "answers": 2_000, "one_by_one": 300},
         "full": {"tree": "imagenet1k", "answers": 10_000, "one_by_one": 500}}


def _tree(name: str, seed: int):
    if name == "imagenet1k":
        from benchmarks.trees import imagenet1k_tree

        return imagenet1k_tree()
    import polars as pl

    from benchmarks.bench_mapping import inat_sample_tree
    from taxoforge.trees.subtree import spanning_subtree

    sample = inat_sample_tree(200, seed=seed)  # then only 40 of its species and their ancestors
    species = sample.nodes.filter(pl.col("rank") == "species")["node_id"].sort().head(40).to_list()
    return spanning_subtree(sample, species, "inat-sample-40-species")


def _timed(fn, *args, **kwargs):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - w, time.process_time() - c


def _rate(n: int, wall: float) -> float:
    return round(n / wall, 1) if wall > 0 else None


def measure_device(tax, names: list[str], answers: list[str], device: str, string_map, cpu_embeddings=None,
                   one_by_one: int = 200) -> dict:
    """Name embeddings, index builds and mapping with the embedding measure on ``device``."""
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.scores.mapping.similarity import SentenceTransformerSimilarity
    from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS

    config = MappingConfig(similarity="sentence-transformers:minilm")
    sim, load_s, _ = _timed(SentenceTransformerSimilarity, "minilm", device=device)
    sim.embed_names(names[:64], progress=False)  # warm-up (first-call allocations), untimed
    emb, w, c = _timed(sim.embed_names, names, progress=False)
    out: dict = {"device": sim.device, "model_id": sim.model_id, "model_load_s": round(load_s, 2),
                 "names_embedding": {"names": len(names), "dimensions": int(emb.shape[1]), "wall_s": round(w, 3),
                                     "cpu_s": round(c, 3), "names_per_s": _rate(len(names), w)}}
    NAME_EMBEDDINGS.clear()
    cold, w_cold, _ = _timed(TaxonomyIndex, tax, config, SentenceTransformerSimilarity("minilm", device=device))
    _, w_warm, _ = _timed(TaxonomyIndex, tax, config, SentenceTransformerSimilarity("minilm", device=device))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "embeddings.npy"
        np.save(path, emb, allow_pickle=False)
        stored = SentenceTransformerSimilarity("minilm", device=device)
        _, w_bind, _ = _timed(stored.bind, names, np.load(path, mmap_mode="r"))
    out["index_build_s"] = {"cold_names_embedded": round(w_cold, 3), "warm_same_process": round(w_warm, 3),
                            "bind_stored_embeddings": round(w_bind, 4)}
    # mapping, the answers' queries embedded in batches first (Similarity.prepare), timed together
    fresh = TaxonomyIndex(tax, config, SentenceTransformerSimilarity("minilm", device=device))  # empty query cache

    def prepared_map(texts):
        fresh.similarity.prepare([fresh.read(t).query for t in dict.fromkeys(texts)])
        return fresh.map(texts)

    res, w, c = _timed(prepared_map, answers)
    out["mapping"] = {"answers": len(answers), "unique_answers": res.stats.get("unique_predictions"),
                      "wall_s": round(w, 3), "cpu_s": round(c, 3), "answers_per_s": _rate(len(answers), w),
                      "stages": {str(k): int(v) for k, v in zip(*np.unique(res.stage.astype(str), return_counts=True))},
                      "same_node_as_string_measure": round(float(np.mean(res.node_idx == string_map.node_idx)), 4)}
    # the same without prepare: one model call per answer (on the first answers only)
    sub = answers[:one_by_one]
    alone = TaxonomyIndex(tax, config, SentenceTransformerSimilarity("minilm", device=device))
    res1, w, c = _timed(alone.map, sub)
    out["mapping_one_query_per_call"] = {
        "answers": len(sub), "wall_s": round(w, 3), "cpu_s": round(c, 3), "answers_per_s": _rate(len(sub), w),
        "same_nodes_as_prepared": bool(np.array_equal(res1.node_idx, res.node_idx[:len(sub)]))}
    out["_nodes"] = res.node_idx
    out["_embeddings"] = emb
    if cpu_embeddings is not None:
        out["max_abs_difference_from_cpu_embeddings"] = float(np.abs(emb - cpu_embeddings).max())
    del cold
    return out


def run(size: str = "small", seed: int = 0) -> dict:
    from benchmarks.bench_mapping_fidelity import generated_answers
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.scores.mapping.sentence_models import ModelPackageMissing, minilm_folder, resolve_device

    cfg = SIZES[size]
    t0 = time.perf_counter()
    tables = _tree(cfg["tree"], seed)
    tax = tables.taxonomy()
    answers = generated_answers(tables, cfg["answers"], seed)
    out: dict = {"benchmark": "embeddings", "size": size, "seed": seed, "tree": cfg["tree"], "nodes": len(tax)}
    # baseline: the string measure, same tree, same answers
    string_index, w_index, _ = _timed(TaxonomyIndex, tax, MappingConfig())
    names = string_index.names
    string_map, w, c = _timed(string_index.map, answers)
    out["names"] = len(names)
    out["string"] = {"index_build_s": round(w_index, 3), "answers": len(answers), "wall_s": round(w, 3),
                     "cpu_s": round(c, 3), "answers_per_s": _rate(len(answers), w)}
    try:
        import torch

        folder = minilm_folder()
        resolve_device("cpu")
    except (ModelPackageMissing, ImportError, OSError) as e:
        out["status"] = "skipped"
        out["reason"] = f"{type(e).__name__}: {e}"
        out["elapsed_s"] = round(time.perf_counter() - t0, 1)
        return out
    out["status"] = "ok"
    out["model"] = {"folder": str(folder), "torch": torch.__version__, "threads": torch.get_num_threads()}
    cpu = measure_device(tax, names, answers, "cpu", string_map, one_by_one=cfg["one_by_one"])
    out["cpu"] = cpu
    if torch.cuda.is_available():
        gpu = measure_device(tax, names, answers, "cuda", string_map, cpu_embeddings=cpu["_embeddings"],
                             one_by_one=cfg["one_by_one"])
        gpu["same_nodes_as_cpu"] = round(float(np.mean(gpu["_nodes"] == cpu["_nodes"])), 4)
        gpu["gpu_name"] = torch.cuda.get_device_name(0)
        out["cuda"] = gpu
    else:
        out["cuda"] = {"status": "not measured",
                       "reason": f"no CUDA GPU (torch.cuda.is_available() is False; torch {torch.__version__})"}
    for side in ("cpu", "cuda"):
        out[side].pop("_nodes", None)
        out[side].pop("_embeddings", None)
        m = out[side].get("mapping")
        if m:
            m["ratio_to_string_measure"] = float(f"{m['answers_per_s'] / out['string']['answers_per_s']:.4g}")
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    return out


def markdown_section(result: dict) -> str:
    """The embedding measure's figures (for ``benchmarks/results/latest.md``)."""
    from taxoforge.markdown import markdown_table

    head = (f"## Embedding measure ({result['size']}): all-MiniLM-L6-v2 vs the string measure\n\n"
            f"{result['tree']} tree, {result['nodes']:,} nodes, {result['names']:,} names.\n")
    if result.get("status") != "ok":
        return head + f"\nSkipped: {result.get('reason')}\n"
    s = result["string"]
    rows = [("string (rapidfuzz ratio)", "–", f"{s['index_build_s']:.2f} s", "–", "–",
             f"{s['answers_per_s']:,.0f}", "1", "–")]
    notes = []
    for side in ("cpu", "cuda"):
        d = result.get(side) or {}
        if "names_embedding" not in d:
            notes.append(f"- {side.upper()}: {d.get('status', 'not measured')} — {d.get('reason', '')}")
            continue
        ne, ib, m = d["names_embedding"], d["index_build_s"], d["mapping"]
        one = d["mapping_one_query_per_call"]
        rows.append((f"all-MiniLM-L6-v2 on {side.upper()}", f"{ne['names_per_s']:,.0f} ({ne['wall_s']:.1f} s)",
                     f"{ib['cold_names_embedded']:.2f} s", f"{ib['warm_same_process']:.2f} s",
                     f"{ib['bind_stored_embeddings']:.4f} s", f"{m['answers_per_s']:,.0f}",
                     f"{m['ratio_to_string_measure']:.3f}", f"{one['answers_per_s']:,.0f}"))
        if side == "cuda":
            notes.append(f"- CUDA ({d.get('gpu_name')}): largest |GPU − CPU| name-embedding difference "
                         f"{d['max_abs_difference_from_cpu_embeddings']:.2e}; same nodes as on the CPU "
                         f"{100 * d['same_nodes_as_cpu']:.2f} %")
    table = markdown_table(rows, columns=("measure", "names embedded /s (all names)", "index build (cold)",
                                          "index build (warm, same process)", "bind stored embeddings",
                                          f"answers/s ({s['answers']:,} answers)", "× string measure",
                                          "answers/s, one model call per answer"))
    return head + "\n" + table + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(run(a.size, a.seed), indent=2, default=str))
