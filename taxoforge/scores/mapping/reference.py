"""The reference implementation: Alg. 1 transcribed directly (with SPEC §3's fixes),
scanning every node per prediction. Slow by design: tests and the benchmarks compare the
indexed implementation against it."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from taxoforge.scores.mapping.config import STOP_WORDS, MappingConfig
from taxoforge.scores.mapping.index import word_ngrams

__all__ = ["map_prediction_reference"]


def map_prediction_reference(pred: str, nodes: list[int], node_names: list[list[str]], depth, parent,
                             sim, config: MappingConfig | None = None) -> tuple[int, str]:
    """Direct transcription of Alg. 1 (with SPEC §3's fixes), scanning every node.

    ``nodes`` are node indexes, ``node_names[i]`` the normalised names of ``nodes[i]``,
    ``depth``/``parent`` arrays over node indexes, ``sim(a, b)`` a similarity. ``pred`` is
    normalised. Slow by design: the baseline of ``benchmarks/bench_mapping.py``."""
    cfg = config or MappingConfig()
    k = cfg.k
    if not pred:
        return int(np.flatnonzero(np.asarray(parent) < 0)[0]), "empty"
    S = [(max((sim(pred, nm) for nm in names), default=0.0), v) for v, names in zip(nodes, node_names)]
    S.sort(key=lambda x: (-x[0], x[1]))
    V = [v for _, v in S]
    sims = [s for s, _ in S]
    names_of = dict(zip(nodes, node_names))

    def anc(v):
        out = [v]
        while parent[v] >= 0:
            v = int(parent[v])
            out.append(v)
        return out

    def contained(name: str) -> bool:
        if name in STOP_WORDS:
            return False
        if cfg.contains == "substring":
            return name in pred
        return f" {name} " in f" {pred} "

    def scan(test):
        cand = None
        for i, v in enumerate(V):
            if test(v) and (cand is None or len(anc(v)) > len(anc(cand))):
                cand = v
            if cfg.contains_scope == "topk_first" and cand is not None and i == k - 1:
                return cand
        return cand

    cand = scan(lambda v: any(contained(nm) for nm in names_of[v]))
    if cand is not None:
        return cand, "contains"
    words = pred.split()
    for n in cfg.ngram_sizes:
        pg = {g for g in word_ngrams(words, n) if not all(w in STOP_WORDS for w in g.split())}
        cand = scan(lambda v: any(pg & set(word_ngrams(nm.split(), n)) for nm in names_of[v]))
        if cand is not None:
            return cand, f"ngram{n}"
    top = np.asarray(sims[:k])
    p = np.exp(cfg.temperature * (top - top.max()))
    p /= p.sum()
    if len(top) >= 2 and p[0] - p[1] < cfg.thr_top2 and p[0] - p[-1] < cfg.thr_topk:
        votes: dict[int, int] = defaultdict(int)
        first: dict[int, int] = {}
        for r, v in enumerate(V[:k]):
            for a in anc(v):
                votes[a] += 1
                first.setdefault(a, r)
        ok = [a for a, c in votes.items() if (c >= cfg.thr_vote if cfg.vote_rule == "at_least" else c > cfg.thr_vote)]
        if ok:
            return max(ok, key=lambda a: (depth[a], votes[a], -first[a])), "vote"
    return V[0], "top1"
