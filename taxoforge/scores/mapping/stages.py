"""The decisions of Algorithm 1 of Snæbjarnarson et al. 2025 [1], in the order of
docs/method.md#mapping-an-answer-to-a-node: exact, contains, n-grams, vote, top-1.

Each method reads an :class:`~taxoforge.scores.mapping.answers.Answer`; the batch driver
(:mod:`taxoforge.scores.mapping.taxonomy_index`) calls them in order and fetches the top-k only
for answers that need it.

* :meth:`Alg1Stages.exact` — a span that may count as the whole answer (the core, with
  any framing words around it, widest first, then rightmost) is a name → that name's nodes.
* :meth:`Alg1Stages.contains` — names occurring in the answer as whole words (every run of
  up to ``max_words`` words is looked up), or as raw substrings (``contains="substring"``,
  an Aho–Corasick automaton built on first use). A match made only of non-naming words
  (:mod:`taxoforge.scores.mapping.vocabulary`) does not count; with ``drop_nested`` a match lying
  inside a longer match ("pig" in "guinea pig") is dropped.
* :meth:`Alg1Stages.ngram` — names sharing a word n-gram (not made only of non-naming words).
* :meth:`Alg1Stages.pick` — the rule among the hits: the deepest (``contains_scope="all"``,
  docs/method.md#mapping-an-answer-to-a-node), or the pseudocode's scan (``"topk_first"``: the deepest hit among the top-k,
  else the deepest overall).
* :meth:`Alg1Stages.vote` — the fixed shared-ancestor vote when the top-k are near-tied.

**Ties** (reported: :attr:`MappingResult.tied` counts the nodes tied under the rule):
first the **label set** when one is given (``prefer``: the nodes of the label set the
answers are about — the file's ground truths, or a label set the user names — and then the
ancestors of those nodes, over every other node; :func:`label_set_preference`); then, for
exact, the node whose ancestors' names share the most words with the answer's context (the
question, when given), then the deepest, then the one with the larger subtree (the sense
the taxonomy details more: *butterfly* the insect, not the swimming stroke, in WordNet),
then the smallest index; contains and n-grams — among the deepest, the label set, then the
more similar, then context, subtree and index as above.
"""

from __future__ import annotations

from collections import defaultdict

import ahocorasick
import numpy as np

from taxoforge.scores.mapping.answers import Answer
from taxoforge.scores.mapping.candidates import CandidateRetrieval
from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.mapping.keys import PHRASE_SEED, extend_phrase, word_hashes
from taxoforge.scores.mapping.name_tables import NameTables
from taxoforge.scores.mapping.vocabulary import is_non_naming

__all__ = ["Alg1Stages", "Decision", "label_set_preference"]

Decision = tuple[int, str, float, int]  # (node, stage, similarity, nodes tied)


def label_set_preference(nodes, parent: np.ndarray) -> np.ndarray:
    """How much a node tied with others is preferred, given a label set.

    Parameters
    ----------
    nodes : array_like of int
        The label set's node indexes.
    parent : numpy.ndarray
        Each node's parent index, -1 at the root.

    Returns
    -------
    numpy.ndarray
        Per node of the tree: 2 for ``nodes``, 1 for their ancestors, 0 for every other node.

    Examples
    --------
    >>> label_set_preference([2], np.array([-1, 0, 1, 0])).tolist()
    [1, 1, 2, 0]
    """
    pref = np.zeros(len(parent), np.int8)
    cur = np.unique(np.asarray(nodes, np.int64))
    cur = cur[(cur >= 0) & (cur < len(parent))]
    pref[cur] = 2
    cur = parent[cur]
    while len(cur := np.unique(cur[cur >= 0])):
        cur = cur[pref[cur] == 0]  # an ancestor already marked has its own ancestors marked
        pref[cur] = 1
        cur = parent[cur]
    return pref


class Alg1Stages:
    """The decisions of Alg. 1 over one taxonomy's name tables.

    Parameters
    ----------
    tables : NameTables
        The name tables of the taxonomy.
    retrieval : CandidateRetrieval
        The candidate retrieval over them.
    depth : numpy.ndarray
        Depth of every node.
    parent : numpy.ndarray
        Parent of every node.
    subtree_size : numpy.ndarray
        Nodes in each node's subtree (for ties).
    config : MappingConfig
        The mapping configuration.
    """

    def __init__(self, tables: NameTables, retrieval: CandidateRetrieval, depth: np.ndarray,
                 parent: np.ndarray, subtree_size: np.ndarray, config: MappingConfig) -> None:
        self.tables = tables
        self.retrieval = retrieval
        self.depth = depth
        self.parent = parent
        self.subtree_size = subtree_size
        self.config = config
        self._automaton = None
        self._ancestor_words: dict[int, frozenset[str]] = {}

    # ------------------------------------------------------------------ hits
    def exact(self, ans: Answer) -> np.ndarray | None:
        """Nodes named by the widest span that may count as the whole answer, or None.

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).

        Returns
        -------
        numpy.ndarray or None
            Nodes named by the widest span that may count as the whole answer, or None.
        """
        found = self.exact_span(ans)
        return None if found is None else found[0]

    def exact_span(self, ans: Answer):
        """(nodes, matched key) of the widest span that may count as the whole answer, or None.

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).

        Returns
        -------
        object
            (nodes, matched key) of the widest span that may count as the whole answer, or
            None.
        """
        t = self.tables
        spans = ans.exact_spans()
        # the widest span first (usually the hit), then all the others in one lookup
        for batch in (spans[:1], spans[1:]):
            keys = [" ".join(ans.words[i:j]) for i, j in batch]
            for (i, j), key, x in zip(batch, keys, t.lookup_many(keys).tolist()):
                if x >= 0:
                    return t.nodes_of_name(x, " ".join(ans.surface[i:j])).astype(np.int64), key
        return None

    def exact_span_many(self, answers) -> list:
        """:meth:`exact_span` of every answer, with the name lookups batched: the widest span
        of every answer in one lookup, then every other span of the answers not found yet in
        a second — the spans each answer would try, in its order, so every answer gets what
        :meth:`exact_span` gives it.

        Parameters
        ----------
        answers : sequence of Answer
            The answers (:class:`~taxoforge.scores.mapping.answers.Answer`).

        Returns
        -------
        list
            Per answer, (nodes, matched key) or None.
        """
        t = self.tables
        out: list = [None] * len(answers)
        spans = [a.exact_spans() if a.words else [] for a in answers]
        todo = [k for k, sp in enumerate(spans) if sp]
        for widest in (True, False):
            keys, owner, where = [], [], []
            for k in todo:
                words = answers[k].words
                for i, j in (spans[k][:1] if widest else spans[k][1:]):
                    keys.append(" ".join(words[i:j]))
                    owner.append(k)
                    where.append((i, j))
            found = t.lookup_many(keys).tolist() if keys else []
            for key, k, (i, j), x in zip(keys, owner, where, found):
                if x >= 0 and out[k] is None:  # an answer's first span with a name wins
                    out[k] = t.nodes_of_name(x, " ".join(answers[k].surface[i:j])).astype(np.int64), key
            todo = [k for k in todo if out[k] is None]
        return out

    def _substring_automaton(self):
        if self._automaton is None:
            a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for j, s in enumerate(self.tables.names):
                if not self.tables.name_non_naming[j]:
                    a.add_word(s, j)
            if len(a):
                a.make_automaton()
            self._automaton = a
        return self._automaton

    def contains(self, ans: Answer) -> np.ndarray:
        """Node indexes of the contained names (module docstring).

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).

        Returns
        -------
        numpy.ndarray
            Node indexes of the contained names (module docstring).
        """
        t = self.tables
        matches: list[tuple[int, int, int]] = []  # (start, end, name) in words or characters
        if self.config.contains == "whole_word":
            words, flags = ans.words, ans.non_naming
            m, mw = len(words), t.max_words
            wh = word_hashes(words).tolist()
            spans, hashes = [], []
            for i in np.flatnonzero(t.starts_a_name(words)).tolist():
                h = PHRASE_SEED
                for j in range(i + 1, min(m, i + mw) + 1):  # the hash of words[i:j], word by word
                    h = extend_phrase(h, wh[j - 1])
                    if not (all(flags[i:j]) or (ans.counting[i] and j > i + 1)):
                        spans.append((i, j))
                        hashes.append(h)
            found = t.lookup_hashed(np.array(hashes, np.uint64), lambda r: " ".join(words[spans[r][0]:spans[r][1]]))
            matches = [(i, j, x) for (i, j), x in zip(spans, found.tolist()) if x >= 0 and not t.name_non_naming[x]]
        else:
            a = self._substring_automaton()
            if len(a):
                matches = [(end - int(t.name_len[x]) + 1, end + 1, x) for end, x in a.iter(ans.key)]
        if not matches:
            return np.zeros(0, np.int64)
        if self.config.drop_nested:
            matches = [(s, e, x) for s, e, x in matches
                       if not any(s2 <= s and e <= e2 and e2 - s2 > e - s for s2, e2, _ in matches)]
        if self.config.contains == "whole_word" and len(t.surface_name):
            return np.unique(np.concatenate([t.nodes_of_name(x, " ".join(ans.surface[s:e])) for s, e, x in matches]))
        return t.nodes_of_names(np.unique(np.asarray([x for _, _, x in matches], np.int64)))

    def ngram(self, ans: Answer, n: int) -> np.ndarray:
        """Node indexes of the names sharing a word n-gram with the answer.

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).
        n : int
            The n-gram size.

        Returns
        -------
        numpy.ndarray
            Node indexes of the names sharing a word n-gram with the answer.
        """
        t = self.tables
        grams = {" ".join(ans.words[i:i + n]) for i in range(len(ans.words) - n + 1)
                 if not all(ans.non_naming[i:i + n])}
        found = t.names_with_ngrams(grams)
        if not len(found):
            return np.zeros(0, np.int64)
        return t.nodes_of_names(found)

    def hits(self, ans: Answer) -> tuple[str | None, np.ndarray]:
        """(stage, hit nodes) of the contains and n-gram checks, or (None, empty).

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).

        Returns
        -------
        tuple[str or None, numpy.ndarray]
            (stage, hit nodes) of the contains and n-gram checks, or (None, empty).
        """
        h = self.contains(ans)
        if len(h):
            return "contains", h
        for n in self.config.ngram_sizes:
            h = self.ngram(ans, n)
            if len(h):
                return f"ngram{n}", h
        return None, h

    # ------------------------------------------------------------------ ties
    def _ancestor_word_set(self, v: int) -> frozenset[str]:
        got = self._ancestor_words.get(v)
        if got is None:
            t = self.tables
            words = set()
            u = int(self.parent[v])
            while u >= 0:
                for j in t.names_of_node(u).tolist():
                    words.update(w for w in t.name(j).split() if not is_non_naming(w))
                u = int(self.parent[u])
            got = self._ancestor_words[v] = frozenset(words)
        return got

    def context_overlap(self, v: int, context: frozenset[str]) -> int:
        """How many of the ``context`` words occur in the names of ``v``'s ancestors.

        Parameters
        ----------
        v : int
            A node index.
        context : frozenset[str]
            Words of the question's context (the other options, the prompt), for ties.

        Returns
        -------
        int
            How many of the ``context`` words occur in the names of ``v``'s ancestors.
        """
        return len(context & self._ancestor_word_set(v)) if context else 0

    def decide_exact(self, ans: Answer, nodes: np.ndarray, context: frozenset[str] = frozenset(),
                     key: str | None = None, prefer: np.ndarray | None = None) -> Decision:
        """The exact stage's node among ``nodes`` (ties: module docstring). ``key``, the
        matched name, spares computing a similarity of 1 when it is the whole query.

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).
        nodes : numpy.ndarray
            The nodes the answer names.
        context : frozenset[str], optional
            Words of the question's context (the other options, the prompt), for ties.
        key : str, optional
            The matched name key, if known.
        prefer : numpy.ndarray, optional
            The label set's :func:`label_set_preference`, first of the tie rules.

        Returns
        -------
        Decision
            The exact stage's node among ``nodes`` (ties: module docstring).
        """
        nodes = np.unique(nodes)
        q = ans.query
        if len(nodes) == 1:
            v = int(nodes[0])
        else:
            v = int(max(nodes.tolist(), key=lambda u: (prefer[u] if prefer is not None else 0,
                                                       self.context_overlap(u, context), self.depth[u],
                                                       self.subtree_size[u], -u)))
        sim = 1.0 if key == q else self.retrieval.node_similarity(q, v)
        return v, "exact", sim, len(nodes)

    def pick(self, ans: Answer, stage: str, hits: np.ndarray, top=None,
             context: frozenset[str] = frozenset(), prefer: np.ndarray | None = None) -> Decision:
        """The deepest hit (or the pseudocode's top-k-first scan when ``top`` is given).

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).
        stage : str
            The stage that found the hits.
        hits : numpy.ndarray
            The hit nodes.
        top : optional
            The top-k ``(nodes, similarities)`` for the pseudocode's scan, if any.
        context : frozenset[str], optional
            Words of the question's context (the other options, the prompt), for ties.
        prefer : numpy.ndarray, optional
            The label set's :func:`label_set_preference`, first of the tie rules among the
            deepest hits.

        Returns
        -------
        Decision
            The deepest hit (or the pseudocode's top-k-first scan when ``top`` is given).
        """
        hits = np.unique(hits)
        q = ans.query
        if top is not None:
            top_nodes, top_scores = top
            in_top = np.isin(top_nodes, hits)
            if in_top.any():
                cand = top_nodes[in_top]
                d = self.depth[cand]
                best = np.flatnonzero(d == d.max())
                return int(cand[best[0]]), stage, float(top_scores[in_top][best[0]]), len(best)
        d = self.depth[hits]
        deepest = hits[d == d.max()]
        if len(deepest) == 1:
            v = int(deepest[0])
            return v, stage, self.retrieval.node_similarity(q, v), 1
        sims = {int(u): self.retrieval.node_similarity(q, int(u)) for u in deepest.tolist()}
        v = max(sims, key=lambda u: (prefer[u] if prefer is not None else 0, sims[u], self.context_overlap(u, context),
                                     self.subtree_size[u], -u))
        return v, stage, sims[v], len(deepest)

    # ------------------------------------------------------------------ vote / top-1
    def near_tie(self, top_scores: np.ndarray) -> bool:
        """The vote's test: softmax (temperature) of the top-k near-tied (docs/method.md#mapping-an-answer-to-a-node).

        Parameters
        ----------
        top_scores : numpy.ndarray
            The top-k similarities, descending.

        Returns
        -------
        bool
            The vote's test: softmax (temperature) of the top-k near-tied
            (docs/method.md#mapping-an-answer-to-a-node).
        """
        cfg = self.config
        if len(top_scores) < 2:
            return False
        p = np.exp(cfg.temperature * (top_scores - top_scores.max()))
        p /= p.sum()
        return bool(p[0] - p[1] < cfg.thr_top2 and p[0] - p[-1] < cfg.thr_topk)

    def vote_ruled_out_gap(self) -> float:
        """A top-2 similarity gap at least this large makes the near-tie test fail whatever
        the rest of the top-k (``p0 − p1 ≥ (1 − exp(−T·gap))/k ≥ thr_top2``); inf when
        no gap can (``k·thr_top2 ≥ 1``). A relative margin of 1e-6 covers rounding.

        Returns
        -------
        float
            A top-2 similarity gap at least this large makes the near-tie test fail whatever
            the rest of the top-k (``p0 − p1 ≥ (1 − exp(−T·gap))/k ≥ thr_top2``); inf when
            no gap can (``k·thr_top2 ≥ 1``).
        """
        cfg = self.config
        x = cfg.k * cfg.thr_top2 * (1 + 1e-6)
        if x >= 1:
            return float("inf")
        return -np.log1p(-x) / cfg.temperature * (1 + 1e-9) + 1e-12

    def vote(self, top_nodes: np.ndarray, top_scores: np.ndarray):
        """The shared-ancestor vote (docs/method.md#mapping-an-answer-to-a-node) when the top-k are near-tied: the deepest
        node with enough votes (ties: more votes, then the best-ranked candidate under
        it); None when it does not fire.

        Parameters
        ----------
        top_nodes : numpy.ndarray
            The top-k nodes.
        top_scores : numpy.ndarray
            Their similarities, descending.

        Returns
        -------
        object
            The shared-ancestor vote (docs/method.md#mapping-an-answer-to-a-node) when the
            top-k are near-tied: the deepest node with enough votes (ties: more votes, then
            the best-ranked candidate under it); None when it does not fire.
        """
        cfg = self.config
        if not self.near_tie(top_scores):
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

    def finish(self, ans: Answer, stage: str | None, hits: np.ndarray, top,
               context: frozenset[str] = frozenset()) -> Decision:
        """The decision once the top-k is known: the hit rule (pseudocode scan), else the
        vote, else the most similar node.

        Parameters
        ----------
        ans : Answer
            The answer, as the mapper reads it
            (:class:`~taxoforge.scores.mapping.answers.Answer`).
        stage : str or None
            The stage of the hits, if any.
        hits : numpy.ndarray
            The hit nodes of the contains and n-gram checks.
        top : object
            The top-k ``(nodes, similarities)``.
        context : frozenset[str], optional
            Words of the question's context (the other options, the prompt), for ties.

        Returns
        -------
        Decision
            The decision once the top-k is known: the hit rule (pseudocode scan), else the
            vote, else the most similar node.
        """
        top_nodes, top_scores = top
        if stage is not None:
            return self.pick(ans, stage, hits, top, context)
        if not len(top_nodes):
            return -1, "top1", 0.0, 0
        v = self.vote(top_nodes, top_scores)
        if v is not None:
            return int(v), "vote", self.retrieval.node_similarity(ans.query, int(v)), 1
        n_tied = int((top_scores == top_scores[0]).sum())
        return int(top_nodes[0]), "top1", float(top_scores[0]), n_tied
