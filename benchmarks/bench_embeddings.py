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

SIZES = {"tiny": {"tree": "inat-sample", "answers": 200, "one_by_one": 50, "search_species": 2_000,
                  "search_answers": 200},
         "small": {"tree": "imagenet1k", "answers": 2_000, "one_by_one": 300, "search_species": 100_000,
                   "search_answers": 1_000},
         "full": {"tree": "imagenet1k", "answers": 10_000, "one_by_one": 500, "search_species": 400_000,
                  "search_answers": 2_000}}


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
    from taxoforge.scores.mapping.embedding_measures import SentenceTransformerSimilarity
    from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS

    config = MappingConfig(similarity="sentence-transformers:minilm")
    sim, load_s, _ = _timed(SentenceTransformerSimilarity, "minilm", device=device)
    sim.embed_names(names[:64], progress=False)  # warm-up (first-call allocations), untimed
    emb, w, c = _timed(sim.embed_names, names, progress=False)
    # baseline: the plain sentence-transformers loop (encode in batches of 256), same names, same model
    plain, w0, c0 = _timed(sim._st.encode, names, batch_size=256, convert_to_numpy=True, normalize_embeddings=True,
                           show_progress_bar=False)
    out: dict = {"device": sim.device, "model_id": sim.model_id, "model_load_s": round(load_s, 2),
                 "names_embedding": {"names": len(names), "dimensions": int(emb.shape[1]), "wall_s": round(w, 3),
                                     "cpu_s": round(c, 3), "names_per_s": _rate(len(names), w)},
                 "plain_sentence_transformers_loop": {"wall_s": round(w0, 3), "cpu_s": round(c0, 3),
                                                      "names_per_s": _rate(len(names), w0)},
                 "build_ratio_to_plain_loop": float(f"{w0 / w:.4g}") if w > 0 else None,
                 "min_cosine_to_plain_loop": float(np.sum(emb * np.asarray(plain, np.float32), axis=1).min())}
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


def measure_static(tax, answers: list[str], string_map, many_names: list[str]) -> dict:
    """The static model distilled from all-MiniLM-L6-v2 (``minilm-static``): names/s on the
    tree's names and on ``many_names`` (a large tree's: the rate that matters), index build,
    answers/s mapping ``answers`` and how often it picks the string measure's node."""
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.scores.mapping.embedding_measures import MINILM_STATIC, similarity_from_spec
    from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS

    sim, load_s, _ = _timed(similarity_from_spec, MINILM_STATIC)
    sim.embed_names(many_names[:1000])  # warm-up, untimed
    emb, w, c = _timed(sim.embed_names, many_names)
    out = {"model_id": sim.model_id, "source_model_id": sim.source_model_id, "dimensions": int(emb.shape[1]),
           "load_or_distil_s": round(load_s, 2),
           "names_embedding": {"names": len(many_names), "wall_s": round(w, 3), "cpu_s": round(c, 3),
                               "names_per_s": _rate(len(many_names), w)}}
    NAME_EMBEDDINGS.clear()
    config = MappingConfig(similarity=MINILM_STATIC)
    index, w_index, _ = _timed(TaxonomyIndex, tax, config, sim)
    sim.prepare([index.read(t).query for t in dict.fromkeys(answers)])  # as the run does; timed below with the map
    fresh = TaxonomyIndex(tax, config, similarity_from_spec(MINILM_STATIC))

    def prepared_map(texts):
        fresh.similarity.prepare([fresh.read(t).query for t in dict.fromkeys(texts)])
        return fresh.map(texts)

    res, w, c = _timed(prepared_map, answers)
    out["index_build_s"] = round(w_index, 3)
    out["mapping"] = {"answers": len(answers), "wall_s": round(w, 3), "cpu_s": round(c, 3),
                      "answers_per_s": _rate(len(answers), w),
                      "same_node_as_string_measure": round(float(np.mean(res.node_idx == string_map.node_idx)), 4)}
    return out


class WholeMatrixSearch:
    """Today's full scan of the embedding measure, as the baseline: no search of its own, so
    :meth:`~taxoforge.scores.mapping.candidates.CandidateRetrieval.top_k_full` takes the whole
    (queries × names) similarity matrix of each batch from ``batch_scores`` — the float32
    product widened to a float64 copy, as before the blocked search — then its L-th best per
    row and the names reaching it."""

    top_names = None

    def __init__(self, measure) -> None:
        self.measure = measure
        self.name = measure.name

    def batch_scores(self, queries):
        return (self.measure._queries(list(queries)) @ self.measure.embeddings.T).astype(np.float64)


def search_part(n_species: int, n_answers: int, seed: int = 0) -> dict:
    """Answers/s of the embedding measure's full scan (the exact top-k nodes of every answer,
    ``CandidateRetrieval.top_k_full``): the float32 blocked search against today's whole-matrix
    path (:class:`WholeMatrixSearch`), the same answers and name embeddings, in this process;
    how many answers get the same top-k nodes, and the largest similarity difference.

    The names are those of an iNaturalist sample tree (``n_species`` species and every taxon
    above them) embedded by the static model distilled from all-MiniLM-L6-v2 (tens of
    thousands of names/s: a large tree in seconds; the search does not depend on the model).
    """
    from benchmarks.bench_mapping import inat_sample_tree
    from benchmarks.bench_mapping_fidelity import generated_answers
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.scores.mapping.embedding_measures import MINILM_STATIC, similarity_from_spec
    from taxoforge.scores.mapping.embedding_search import rounding_bound

    tables = inat_sample_tree(n_species, seed=seed)
    measure = similarity_from_spec(MINILM_STATIC)
    index = TaxonomyIndex(tables.taxonomy(), MappingConfig(prefilter=False, similarity=MINILM_STATIC), measure)
    queries = list(dict.fromkeys(index.read(t).query for t in generated_answers(tables, n_answers, seed)))
    measure.prepare(queries)  # the queries' embeddings are not what is timed
    retrieval = index.retrieval
    k = index.config.k
    new, w_new, c_new = _timed(retrieval.top_k_full, queries)
    retrieval.similarity = WholeMatrixSearch(measure)
    try:
        old, w_old, c_old = _timed(retrieval.top_k_full, queries)
    finally:
        retrieval.similarity = measure
    same = sum(bool(np.array_equal(a[0], b[0])) for a, b in zip(new, old))
    diff = max((float(np.abs(a[1] - b[1]).max()) for a, b in zip(new, old) if len(a[1]) and len(a[1]) == len(b[1])),
               default=0.0)
    return {"tree": f"inat-sample-{n_species}",
            "names": len(index.tables), "dimensions": int(measure.embeddings.shape[1]), "model": measure.name,
            "queries": len(queries), "k": k,
            "whole_matrix": {"wall_s": round(w_old, 3), "cpu_s": round(c_old, 3),
                             "answers_per_s": _rate(len(queries), w_old)},
            "blocked_float32": {"wall_s": round(w_new, 3), "cpu_s": round(c_new, 3),
                                "answers_per_s": _rate(len(queries), w_new)},
            "ratio": float(f"{w_old / w_new:.4g}") if w_new > 0 else None,
            "same_top_k_nodes": same, "max_similarity_difference": diff,
            "float32_rounding_bound": rounding_bound(int(measure.embeddings.shape[1])),
            "_names": list(index.names)}


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
    out["search"] = search_part(cfg["search_species"], cfg["search_answers"], seed)
    out["static"] = measure_static(tax, answers, string_map, out["search"].pop("_names"))
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
        pl = d.get("plain_sentence_transformers_loop")
        if pl:
            notes.append(f"- {side.upper()} names embedded (tokenised once, length buckets) "
                         f"{ne['names_per_s']:,.0f}/s vs the plain sentence-transformers loop "
                         f"{pl['names_per_s']:,.0f}/s, ×{d['build_ratio_to_plain_loop']}; "
                         f"cosine to its embeddings ≥ {d['min_cosine_to_plain_loop']:.6f}")
        if side == "cuda":
            notes.append(f"- CUDA ({d.get('gpu_name')}): largest |GPU − CPU| name-embedding difference "
                         f"{d['max_abs_difference_from_cpu_embeddings']:.2e}; same nodes as on the CPU "
                         f"{100 * d['same_nodes_as_cpu']:.2f} %")
    st = result.get("static")
    if st:
        m = st["mapping"]
        rows.append((f"minilm-static (distilled, {st['dimensions']} dimensions) on CPU",
                     f"{st['names_embedding']['names_per_s']:,.0f} ({st['names_embedding']['names']:,} names)",
                     f"{st['index_build_s']:.2f} s", "–", "–", f"{m['answers_per_s']:,.0f}",
                     f"{m['answers_per_s'] / s['answers_per_s']:.3f}", "–"))
    table = markdown_table(rows, columns=("measure", "names embedded /s (all names)", "index build (cold)",
                                          "index build (warm, same process)", "bind stored embeddings",
                                          f"answers/s ({s['answers']:,} answers)", "× string measure",
                                          "answers/s, one model call per answer"))
    if result.get("search"):
        x = result["search"]
        notes.append(f"- Full scan (exact top-{x['k']} nodes), {x['names']:,} names × {x['queries']:,} answers "
                     f"({x['model']}, {x['dimensions']} dimensions, CPU): float32 blocks "
                     f"{x['blocked_float32']['answers_per_s']:,.0f}/s vs the whole float64 matrix "
                     f"{x['whole_matrix']['answers_per_s']:,.0f}/s, ×{x['ratio']}; the same top-k nodes for "
                     f"{x['same_top_k_nodes']:,} of {x['queries']:,}")
    return head + "\n" + table + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--part", choices=("all", "search"), default="all",
                    help="search: only the full scan, blocked float32 against the whole matrix")
    a = ap.parse_args()
    if a.part == "search":
        c = SIZES[a.size]
        r = search_part(c["search_species"], c["search_answers"], a.seed)
        r.pop("_names")
        print(json.dumps(r, indent=2))
    else:
        print(json.dumps(run(a.size, a.seed), indent=2, default=str))
