"""The reference implementation: Algorithm 1 of Snæbjarnarson et al. 2025 [1], in the order of
docs/method.md#mapping-an-answer-to-a-node, transcribed directly, scanning
every node's every name per answer. Slow by design: tests and the benchmarks compare the
indexed implementation against it."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from taxoforge.scores.mapping.answers import Answer
from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.mapping.keys import word_ngrams
from taxoforge.scores.mapping.vocabulary import is_non_naming

__all__ = ["map_prediction_reference"]


def map_prediction_reference(pred: str, nodes: list[int], node_names: list[list[str]], depth, parent,
                             sim, config: MappingConfig | None = None,
                             node_forms: list[list[str]] | None = None) -> tuple[int, str]:
    """``(node, stage)`` of one answer by a direct transcription of Alg. 1 (docs/method.md#mapping-an-answer-to-a-node).

    ``pred`` is normalised (:func:`taxoforge.text.normalise_text`); ``nodes`` are node
    indexes, ``node_names[i]`` the name keys of ``nodes[i]`` (as
    :class:`~taxoforge.scores.mapping.name_tables.NameTables` holds them) and ``node_forms[i]``
    the normal forms of its names (optional: where the answer's own form of a key names
    some of the nodes sharing the key, those win), ``depth``/``parent`` arrays over node
    indexes, ``sim(a, b)`` a similarity.

    Parameters
    ----------
    pred : str
        The answer, normalised (:func:`taxoforge.text.normalise_text`).
    nodes : list[int]
        Node indexes.
    node_names : list[list[str]]
        The name keys of each node.
    depth : object
        Depth of every node index.
    parent : object
        Parent of every node index.
    sim : object
        ``sim(a, b)``: a similarity of two strings.
    config : MappingConfig, optional
        The mapping configuration (default :class:`MappingConfig`).
    node_forms : list[list[str]], optional
        The normal forms of each node's names (where the answer's own form names some of
        the nodes sharing a key, those win).

    Returns
    -------
    tuple[int, str]
        ``(node, stage)`` of one answer by a direct transcription of Alg. 1
        (docs/method.md#mapping-an-answer-to-a-node).
    """
    cfg = config or MappingConfig()
    forms_of = dict(zip(nodes, node_forms)) if node_forms is not None else {}
    k = cfg.k
    parent = np.asarray(parent)
    ans = Answer.read(pred, cfg.base_forms)
    if not ans.words:
        return int(np.flatnonzero(parent < 0)[0]), "empty"
    q = ans.query
    names_of = dict(zip(nodes, node_names))
    size = defaultdict(int)
    for v in nodes:
        u = v
        while u >= 0:
            size[u] += 1
            u = int(parent[u])

    S = [(max((sim(q, nm) for nm in names), default=None), v) for v, names in zip(nodes, node_names)]
    S = [(s, v) for s, v in S if s is not None]  # nodes without names never rank
    S.sort(key=lambda x: (-x[0], x[1]))
    V = [v for _, v in S]
    sims = dict((v, s) for s, v in S)

    def anc(v):
        out = [v]
        while parent[v] >= 0:
            v = int(parent[v])
            out.append(v)
        return out

    def same_form(cand: list[int], surface: str) -> list[int]:
        """The nodes among ``cand`` having a name of the answer's own normal form, if any."""
        same = [v for v in cand if surface in forms_of.get(v, ())]
        return same or cand

    # 1. exact: a span that may count as the whole answer is a name
    if cfg.exact_stage:
        for i, j in ans.exact_spans():
            g = " ".join(ans.words[i:j])
            cand = [v for v in nodes if g in names_of[v]]
            if cand:
                cand = same_form(cand, " ".join(ans.surface[i:j]))
                return max(cand, key=lambda v: (depth[v], size[v], -v)), "exact"

    def naming(nm: str) -> bool:
        return not all(is_non_naming(w) for w in nm.split())

    def deepest(hits: set[int]) -> int:
        return max(hits, key=lambda v: (depth[v], sims[v], size[v], -v))

    def scan(hits: set[int]) -> int:  # the pseudocode: the deepest hit among the top-k first
        cand = None
        for v in V[:k]:
            if v in hits and (cand is None or len(anc(v)) > len(anc(cand))):
                cand = v
        return cand if cand is not None else deepest(hits)

    def choose(hits: set[int]) -> int:
        return deepest(hits) if cfg.contains_scope == "all" else scan(hits)

    # 2. contains: whole-word (or substring) matches, nested matches dropped
    matches = []
    for v in nodes:
        for nm in names_of[v]:
            if not naming(nm):
                continue
            if cfg.contains == "whole_word":
                w = nm.split()
                for i in range(len(ans.words) - len(w) + 1):
                    if (list(ans.words[i:i + len(w)]) == w and not all(ans.non_naming[i:i + len(w)])
                            and not (ans.counting[i] and len(w) > 1)):
                        matches.append((i, i + len(w), v))
            else:
                start = ans.key.find(nm)
                while start >= 0:
                    matches.append((start, start + len(nm), v))
                    start = ans.key.find(nm, start + 1)
    if cfg.drop_nested:
        matches = [(s, e, v) for s, e, v in matches
                   if not any(s2 <= s and e <= e2 and e2 - s2 > e - s for s2, e2, _ in matches)]
    if matches and cfg.contains == "whole_word" and forms_of:
        by_span: dict = defaultdict(list)
        for s, e, v in matches:
            by_span[(s, e)].append(v)
        matches = [(s, e, v) for (s, e), vs in by_span.items() for v in same_form(vs, " ".join(ans.surface[s:e]))]
    if matches:
        return choose({v for _, _, v in matches}), "contains"

    # 3. n-grams, n = 4, 3, 2
    for n in cfg.ngram_sizes:
        pg = {" ".join(ans.words[i:i + n]) for i in range(len(ans.words) - n + 1) if not all(ans.non_naming[i:i + n])}
        hits = {v for v in nodes if any(pg & {g for g in word_ngrams(nm.split(), n) if naming(g)} for nm in names_of[v])}
        if hits:
            return choose(hits), f"ngram{n}"

    # 4. vote, 5. top-1
    if not V:
        return int(np.flatnonzero(parent < 0)[0]), "top1"
    top = np.asarray([sims[v] for v in V[:k]])
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
