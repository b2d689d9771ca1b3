"""Candidate retrieval: the top-k most similar nodes of a prediction.

A node's similarity is the best over its names. The top-k list (similarity descending,
node index ascending) is found in one of two ways:

* **Token prefilter** (:meth:`CandidateRetrieval.top_k_prefiltered`; string measures with
  ``prefilter=True``): the top-k among the names sharing a stemmed content word with the
  prediction and the names of the contains / n-gram hits; on taxonomies with more than
  ``fuzzy_min_names`` names, when fewer than the needed nodes share a word, the
  ``fuzzy_candidates`` names sharing the most character trigrams join (posting lists read
  rarest trigram first, at most ``FUZZY_BUDGET`` entries). See the package docstring for
  what is exact and what is an approximation.
* **Batched full scan** (:meth:`CandidateRetrieval.top_k_full`; exact): all pending
  predictions against all names at once, at most ~16 M similarities in memory — rapidfuzz
  ``cdist`` in C++ on every core, or one matrix product for embeddings.
"""

from __future__ import annotations

import numpy as np

from taxoforge.scores.mapping.config import STOP_WORDS, MappingConfig
from taxoforge.scores.mapping.index import NameTables, expand_csr, hash_lookup, stem, trigram_codes
from taxoforge.scores.similarity import Similarity

__all__ = ["CandidateRetrieval", "FUZZY_BUDGET"]

# work bound of the fuzzy candidates: posting entries read per prediction
FUZZY_BUDGET = 100_000


class CandidateRetrieval:
    """Similarities of a prediction to nodes, and its top-k nodes."""

    def __init__(self, tables: NameTables, similarity: Similarity, config: MappingConfig) -> None:
        self.tables = tables
        self.similarity = similarity
        self.config = config

    def node_scores(self, pred: str, name_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes reached by ``name_ids`` and each node's best similarity over those names,
        ordered by (similarity desc, node index asc)."""
        if len(name_ids) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        return self.nodes_from_name_scores(name_ids, self.similarity.scores(pred, name_ids))

    def nodes_from_name_scores(self, name_ids: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = self.tables
        nodes, owner = expand_csr(t.name_ptr, t.name_node, name_ids)
        s = sc[owner]
        o = np.lexsort((-s, nodes))  # by node, best score first
        nodes, s = nodes[o], s[o]
        first = np.concatenate(([True], nodes[1:] != nodes[:-1]))
        nodes, s = nodes[first], s[first]
        o = np.lexsort((nodes, -s))
        return nodes[o], s[o]

    def node_similarity(self, pred: str, v: int) -> float:
        """Similarity of ``pred`` to node ``v`` (best over its names; 0 without names)."""
        names = self.tables.names_of_node(v)
        return float(self.similarity.scores(pred, names).max()) if len(names) else 0.0

    def top_k_prefiltered(self, pred: str, min_nodes: int, hits: np.ndarray):
        """Top-k over the names sharing a stemmed content word with ``pred``, the names of
        the ``hits`` nodes and, when those reach fewer than ``min_nodes`` nodes, the fuzzy
        candidates (:meth:`fuzzy_candidates`); None when still fewer than ``min_nodes``."""
        if not (self.config.prefilter and self.similarity.supports_prefilter):
            return None
        t = self.tables
        posts = [p for w in {stem(x) for x in pred.split() if x not in STOP_WORDS}
                 if len(p := hash_lookup(t.word_post, hash(w)))]
        if len(hits):
            posts.append(expand_csr(t.node_ptr, t.node_name, np.unique(hits))[0])
        min_nodes = max(1, min_nodes)
        nodes = s = None
        if posts:
            cand = np.unique(np.concatenate(posts)) if len(posts) > 1 else posts[0]
            nodes, s = self.node_scores(pred, cand)
        if (nodes is None or len(nodes) < min_nodes) and t.trigram_post is not None:
            fuzzy = self.fuzzy_candidates(pred)
            if len(fuzzy):
                cand = np.unique(np.concatenate(posts + [fuzzy]))
                nodes, s = self.node_scores(pred, cand)
        if nodes is None or len(nodes) < min_nodes:
            return None
        return nodes[: self.config.k], s[: self.config.k]

    def fuzzy_candidates(self, pred: str) -> np.ndarray:
        """The ``fuzzy_candidates`` names sharing the most character trigrams with ``pred``
        (ties: lower name index). Posting lists are read rarest trigram first until
        ``FUZZY_BUDGET`` entries have been read, so the work is bounded whatever the size
        of the taxonomy; a trigram left unread counts for no name."""
        keys, ptr, vals = self.tables.trigram_post
        q = np.unique(trigram_codes(np.frombuffer(f" {pred} ".encode(), dtype=np.uint8)))
        i = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        i = i[keys[i] == q] if len(keys) else i[:0]
        if not len(i):
            return np.zeros(0, np.int64)
        lens = ptr[i + 1] - ptr[i]
        o = np.argsort(lens, kind="stable")
        i, lens = i[o], lens[o]
        take = max(1, int(np.searchsorted(np.cumsum(lens), FUZZY_BUDGET, side="right")))
        got = np.concatenate([vals[ptr[x]:ptr[x + 1]] for x in i[:take].tolist()])
        ids, counts = np.unique(got, return_counts=True)
        c = self.config.fuzzy_candidates
        if len(ids) > c:
            o = np.lexsort((ids, -counts))[:c]
            ids = ids[o]
        return ids.astype(np.int64)

    def top_k_full(self, preds: list[str], batch: int = 128) -> list[tuple[np.ndarray, np.ndarray]]:
        """Exact top-k nodes (similarity desc, node index asc) of every prediction, scoring
        all names in batches (rapidfuzz ``cdist`` on all cores / one matrix product)."""
        k = self.config.k
        out = []
        # at most ~16 M similarities (64 MB in float32) in memory at once
        batch = max(1, min(batch, 16_000_000 // max(1, len(self.tables))))
        for i in range(0, len(preds), batch):
            S = self.similarity.batch_scores(preds[i:i + batch])
            if S.shape[1] == 0:
                out += [(np.zeros(0, np.int64), np.zeros(0))] * S.shape[0]
                continue
            n_names = S.shape[1]
            # exact top-k without a node-level matrix: every node outside the names scoring at
            # least the L-th best name scores below all of them, so when those names reach
            # k distinct nodes the top-k is among them (ties at the threshold included)
            L = min(n_names, 4 * k)
            thr = np.partition(S, n_names - L, axis=1)[:, n_names - L]
            for row, t in zip(S, thr):
                cand = np.flatnonzero(row >= t)
                nodes, sc = self.nodes_from_name_scores(cand, row[cand])
                if len(nodes) < k and len(cand) < n_names:
                    nodes, sc = self.nodes_from_name_scores(np.arange(n_names, dtype=np.int64), row)
                out.append((nodes[:k], sc[:k]))
        return out
