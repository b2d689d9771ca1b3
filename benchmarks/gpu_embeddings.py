"""The embedding measure on a GPU, in one prepared call: build names/s and search answers/s
over a large tree's names, against the plain sentence-transformers loop in the same run.

Prepared here, run where a CUDA GPU is lent (one call, at most ``--budget-s``, default 450 s):

1. **here** — write the tree's names as one gzip file (a line per name; the iNaturalist tree
   has 1,390,004)::

       python -m benchmarks.gpu_embeddings --write-names build/gpu/inat_names.txt.gz

2. **on the GPU machine** — with the file carried beside the working tree::

       python -m benchmarks.gpu_embeddings --names build/gpu/inat_names.txt.gz --out "$OUT/gpu_embeddings.json"

What it measures, in this order, each step skipped (and said so) once the budget is spent:

* **build** — all-MiniLM-L6-v2 in float32: the plain loop (``SentenceTransformer.encode``,
  batches of 256; on the first ``--plain-names`` names, the rate is what compares), then the
  measure's own path (tokenised once, length buckets:
  :func:`taxoforge.scores.mapping.sentence_encoding.encode_texts`) on every name, then the
  same in half precision (``precision="fp16"``), with the smallest cosine between its rows and
  the float32 rows; the tokenisation's own seconds beside them;
* **search** — ``--answers`` answers (names in answer templates, seeded) embedded, then the
  exact top-40 names of each on the GPU
  (:func:`taxoforge.scores.mapping.embedding_search.top_names_torch`, the float32 embeddings
  on the device) and, for the first ``--cpu-answers``, on the CPU
  (:func:`~taxoforge.scores.mapping.embedding_search.top_names_cpu`): answers/s of each and
  whether every answer's set (hence its top-1) is the same.

With ``--device cpu`` and a few hundred names it runs here too (the tests do so): the same
code, no figure worth reporting.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

TEMPLATES = ("{}", "a photo of a {}", "I think this is {}.", "The answer is: {}", "{} on a branch")


def write_names(path: Path) -> int:
    """The iNaturalist tree's distinct names (:func:`benchmarks.trees.inat_full_tree`), one a
    line, gzip; returns how many."""
    from benchmarks.trees import inat_full_tree
    from taxoforge.files.atomic import write_bytes_atomic

    names = inat_full_tree().names["name"].unique(maintain_order=True).to_list()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, gzip.compress("\n".join(n.replace("\n", " ") for n in names).encode(), 6))
    return len(names)


def read_names(path: Path, limit: int | None = None) -> list[str]:
    names = gzip.decompress(path.read_bytes()).decode().split("\n")
    return names[:limit] if limit else names


def _timed(fn, *args, sync=None, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    if sync:
        sync()
    return out, time.perf_counter() - t


def run(names: list[str], *, device: str = "cuda", answers: int = 10_000, cpu_answers: int = 1_000,
        plain_names: int = 200_000, budget_s: float = 450.0, seed: int = 0) -> dict:
    """The figures of the module docstring, as a dict (``skipped`` lists what the budget cut)."""
    import torch

    from taxoforge.scores.mapping.embedding_measures import SentenceTransformerSimilarity
    from taxoforge.scores.mapping.embedding_search import DeviceEmbeddings, top_names_cpu, top_names_torch
    from taxoforge.scores.mapping.sentence_encoding import text_tokenizer, tokenise

    t0 = time.perf_counter()
    sync = torch.cuda.synchronize if device.startswith("cuda") else None
    out: dict = {"device": device, "torch": torch.__version__, "names": len(names), "skipped": []}
    if device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name(0)

    def left() -> float:
        return budget_s - (time.perf_counter() - t0)

    fp32 = SentenceTransformerSimilarity("minilm", device=device)
    fp32.embed_names(names[:2048], progress=False)  # warm-up: kernels, allocator
    st = fp32._st
    sub = names[:plain_names]
    plain, w = _timed(st.encode, sub, batch_size=256, convert_to_numpy=True, normalize_embeddings=True,
                      show_progress_bar=False, sync=sync)
    out["plain_loop_fp32"] = {"names": len(sub), "wall_s": round(w, 2), "names_per_s": round(len(sub) / w, 1)}
    _, w = _timed(tokenise, text_tokenizer(st), names)
    out["tokenise_all_names_s"] = round(w, 2)
    emb = None
    if left() > 60:
        emb, w = _timed(fp32.embed_names, names, progress=False, sync=sync)
        out["bucketed_fp32"] = {"names": len(names), "wall_s": round(w, 2), "names_per_s": round(len(names) / w, 1),
                                "ratio_to_plain_loop": round((len(names) / w) / out["plain_loop_fp32"]["names_per_s"], 2),
                                "min_cosine_to_plain_loop": float(np.sum(emb[:len(sub)] * plain, axis=1).min())}
    else:
        out["skipped"].append("bucketed_fp32")
    if emb is not None and left() > 60:
        fp16 = SentenceTransformerSimilarity("minilm", device=device, precision="fp16")
        fp16.embed_names(names[:2048], progress=False)
        half, w = _timed(fp16.embed_names, names, progress=False, sync=sync)
        out["bucketed_fp16"] = {"names": len(names), "wall_s": round(w, 2), "names_per_s": round(len(names) / w, 1),
                                "model_id": fp16.model_id,
                                "min_cosine_to_fp32": float(np.sum(half * emb, axis=1).min())}
        del half
    else:
        out["skipped"].append("bucketed_fp16")
    if emb is None or left() < 30:
        out["skipped"].append("search")
        out["elapsed_s"] = round(time.perf_counter() - t0, 1)
        return out
    rng = np.random.default_rng(seed)
    texts = [TEMPLATES[i % len(TEMPLATES)].format(names[j]) for i, j in enumerate(rng.integers(0, len(names), answers))]
    q = fp32.embed_names(texts, progress=False)
    on_device, w_up = _timed(DeviceEmbeddings, emb, device, sync=sync)
    L = 40
    top_names_torch(q[:64], on_device, L)  # warm-up
    dev, w = _timed(top_names_torch, q, on_device, L, sync=sync)
    out["search_device"] = {"answers": len(q), "L": L, "upload_s": round(w_up, 2), "wall_s": round(w, 3),
                            "answers_per_s": round(len(q) / w, 1)}
    if left() > 20:
        n_cpu = min(cpu_answers, len(q))
        cpu, w = _timed(top_names_cpu, q[:n_cpu], emb, L)
        same = sum(bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])) for a, b in zip(cpu, dev))
        top1 = sum(int(a[0][np.argmax(a[1])]) == int(b[0][np.argmax(b[1])]) for a, b in zip(cpu, dev) if len(a[0]))
        out["search_cpu"] = {"answers": n_cpu, "wall_s": round(w, 3), "answers_per_s": round(n_cpu / w, 1),
                             "threads": torch.get_num_threads(), "same_sets_as_device": same, "same_top1": top1}
    else:
        out["skipped"].append("search_cpu")
    out["elapsed_s"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-names", type=Path, help="write the iNaturalist tree's names here (gzip) and stop")
    ap.add_argument("--names", type=Path, help="the names file written by --write-names")
    ap.add_argument("--limit", type=int, default=None, help="only the first N names")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--cpu-answers", type=int, default=1_000)
    ap.add_argument("--plain-names", type=int, default=200_000)
    ap.add_argument("--budget-s", type=float, default=450.0)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.write_names:
        print(f"{write_names(a.write_names):,} names -> {a.write_names}")
        return 0
    if not a.names:
        ap.error("--names (or --write-names) is required")
    res = run(read_names(a.names, a.limit), device=a.device, answers=a.answers, cpu_answers=a.cpu_answers,
              plain_names=a.plain_names, budget_s=a.budget_s)
    text = json.dumps(res, indent=2)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
