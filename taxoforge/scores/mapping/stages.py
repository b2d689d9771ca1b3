"""The stages of Alg. 1 (SPEC §3): contains, n-grams, voting, top-1.

Each function takes the prediction (normalised) and what earlier steps found; the batch
driver (:mod:`taxoforge.scores.mapping.batch`) calls them in order.

* :meth:`Alg1Stages.contains_hits` — nodes with a name occurring in the prediction as
  whole words (every run of up to ``max_words`` words is looked up among the names), or as
  a raw substring (``contains="substring"``, an Aho–Corasick automaton built on first use).
* :meth:`Alg1Stages.exact_shortcut` — a prediction that *is* a name has that name's nodes
  at similarity 1; when they are also the deepest hits Alg. 1 returns them whatever the
  rest of the top-k is, so the top-k is not needed.
* :meth:`Alg1Stages.hit_stage` — the contains hits, else the first n-gram size with hits.
* :meth:`Alg1Stages.pick_deepest` — the deepest hit among the top-k (``topk_first``), else
  the deepest hit overall; ties to the more similar, then node order.
* :meth:`Alg1Stages.vote` — the fixed shared-ancestor vote when the top-k are near-tied.
"""

from __future__ import annotations

from collections import defaultdict

import ahocorasick
import numpy as np

from taxoforge.scores.mapping.candidates import CandidateRetrieval
from taxoforge.scores.mapping.config import STOP_WORDS, MappingConfig
from taxoforge.scores.mapping.index import NameTables, expand_csr, hash_lookup, word_ngrams

__all__ = ["Alg1Stages"]


class Alg1Stages:
    """The decisions of Alg. 1 over one taxonomy's name tables."""

    def __init__(self, tables: NameTables, retrieval: CandidateRetrieval, depth: np.ndarray,
                 parent: np.ndarray, config: MappingConfig) -> None:
        self.tables = tables
        self.retrieval = retrieval
        self.depth = depth
        self.parent = parent
        self.config = config
        self._automaton = None

    # ------------------------------------------------------------------ contains / n-grams
    def _substring_automaton(self):
        if self._automaton is None:
            a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for j, s in enumerate(self.tables.names):
                if s not in STOP_WORDS:
                    a.add_word(s, j)
            if len(a):
                a.make_automaton()
            self._automaton = a
        return self._automaton

    def contains_hits(self, pred: str) -> np.ndarray:
        """Node indexes (with repeats) of the names contained in ``pred``."""
        t = self.tables
        hits = []
        if self.config.contains == "whole_word":
            # pred and names are normalised (single spaces): a whole-word occurrence of a
            # name is a run of the prediction's words equal to it
            words = pred.split()
            m, mw = len(words), t.max_words
            for i in range(m):
                for j in range(i + 1, min(m, i + mw) + 1):
                    g = " ".join(words[i:j])
                    if g not in STOP_WORDS and (x := t.lookup(g)) is not None:
                        hits.append(x)
        else:
            a = self._substring_automaton()
            if len(a):
                hits = [j for _, j in a.iter(pred)]
        if not hits:
            return np.zeros(0, np.int64)
        return t.nodes_of_names(np.unique(np.asarray(hits, np.int64)))

    def ngram_hits(self, words: list[str], n: int) -> np.ndarray:
        """Node indexes of the names sharing a word n-gram with ``words``."""
        t = self.tables
        found = [p for g in set(word_ngrams(words, n)) if len(p := hash_lookup(t.ngram_post, hash(g)))]
        if not found:
            return np.zeros(0, np.int64)
        return t.nodes_of_names(np.unique(np.concatenate(found)))

    def exact_shortcut(self, pred: str, hits: np.ndarray):
        """When ``pred`` is exactly a name, its node(s) are the most similar (1.0) and if they
        are also the deepest hits, Alg. 1 returns them whatever the rest of the top-k is."""
        t = self.tables
        j = t.lookup(pred)
        if j is None or not len(hits) or pred in STOP_WORDS:
            return None
        exact = t.nodes_of_name(j)
        if len(exact) > self.config.k or self.depth[exact].max() < self.depth[hits].max():
            return None
        d = self.depth[exact]
        return int(exact[d == d.max()].min())

    def hit_stage(self, pred: str, hits: np.ndarray):
        """(stage, hit nodes) of the contains and n-gram checks, or (None, empty)."""
        if len(hits):
            return "contains", hits
        words = pred.split()
        for n in self.config.ngram_sizes:
            ng = self.ngram_hits(words, n)
            if len(ng):
                return f"ngram{n}", ng
        return None, hits

    # ------------------------------------------------------------------ deciding
    def pick_deepest(self, pred: str, hit_nodes: np.ndarray, top_nodes: np.ndarray, top_scores: np.ndarray):
        """The contains/n-gram rule: the deepest hit among the top-k if any (``topk_first``),
        else the deepest hit overall; ties to the more similar, then node order."""
        hit_nodes = np.unique(hit_nodes)
        if self.config.contains_scope == "topk_first":
            in_top = np.isin(top_nodes, hit_nodes)
            if in_top.any():
                cand = top_nodes[in_top]
                d = self.depth[cand]
                best = np.flatnonzero(d == d.max())[0]  # top_nodes is ordered by similarity
                return int(cand[best]), float(top_scores[in_top][best])
        d = self.depth[hit_nodes]
        deepest = hit_nodes[d == d.max()]
        if len(deepest) == 1:
            v = int(deepest[0])
            return v, self.retrieval.node_similarity(pred, v)
        t = self.tables
        names, _ = expand_csr(t.node_ptr, t.node_name, deepest)
        nodes, s = self.retrieval.node_scores(pred, np.unique(names))
        keep = np.isin(nodes, deepest)
        return int(nodes[keep][0]), float(s[keep][0])

    def vote(self, top_nodes: np.ndarray, top_scores: np.ndarray):
        """The shared-ancestor vote (SPEC §3) when the softmax of the top-k is near-tied;
        None when it does not fire."""
        cfg = self.config
        if len(top_nodes) < 2:
            return None
        z = cfg.temperature * (top_scores - top_scores.max())
        p = np.exp(z)
        p /= p.sum()
        if not (p[0] - p[1] < cfg.thr_top2 and p[0] - p[-1] < cfg.thr_topk):
            return None
        votes: dict[int, int] = defaultdict(int)
        first_rank: dict[int, int] = {}
        for rank, v in enumerate(top_nodes.tolist()):
            while v >= 0:
                votes[v] += 1
                first_rank.setdefault(v, rank)
                v = int(self.parent[v])
        ok = [v for v, c in votes.items() if (c >= cfg.thr_vote if cfg.vote_rule == "at_least" else c > cfg.thr_vote)]
        if not ok:
            return None
        return max(ok, key=lambda v: (self.depth[v], votes[v], -first_rank[v]))

    def finish(self, pred: str, stage, hits: np.ndarray, top_nodes: np.ndarray, top_scores: np.ndarray):
        """(node, stage, similarity) once the top-k is known: the hit rule, else the vote,
        else the most similar node."""
        if stage is not None:
            v, s = self.pick_deepest(pred, hits, top_nodes, top_scores)
            return v, stage, s
        v = self.vote(top_nodes, top_scores)
        if v is not None:
            return int(v), "vote", self.retrieval.node_similarity(pred, int(v))
        return int(top_nodes[0]), "top1", float(top_scores[0])
