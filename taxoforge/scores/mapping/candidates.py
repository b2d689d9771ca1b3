"""Candidate retrieval: the exact top-k most similar nodes of an answer.

A node's similarity is the best over its names; the top-k list is ordered by similarity
(descending), then node index. Only the stages that need it (the vote and top-1, and the
``topk_first`` scan of the pseudocode) ask for it, and it is always **exact** — the
prefilter only decides how much work finding it takes, never what it is:

1. **Word-sharing candidates** (``prefilter=True``): the names sharing a content word with
   the answer. When they reach at least ``k`` nodes, the ``k``-th best of them, ``t``, is a
   lower bound of the true ``k``-th best similarity, so only names scoring ``≥ t`` can
   belong to the true top-k (ties included: they are ordered by node index).
2. **Candidate bound** (string measure ``ratio``, normalised Indel similarity
   ``2·LCS / (a + b)``): a name of ``b`` code points can reach ``t`` against an answer of
   ``a`` only if ``2·min(a, b) / (a + b) ≥ t`` (length filter) and, counting the trigrams
   of both strings padded with one space each side, the trigram lists share at least
   ``5·LCS − 2·(a + b) ≥ (2.5·t − 2)·(a + b)`` trigrams: the padded LCS has ``LCS``
   trigrams, and each maximal gap of the alignment — at most ``a − LCS`` in the answer,
   ``b − LCS`` in the name — breaks at most two of them (q-gram count filter; the count
   used, a sum over shared distinct trigrams of their occurrences in the answer, bounds
   the shared count from above, so no name that could reach ``t`` is dropped). The bound
   excludes names sharing no trigram only when ``t > 0.8``; then the top-k is computed
   from the word-sharing candidates plus every name passing both filters.
3. **Full scan** otherwise (weak bound, fewer than ``k`` word-sharing nodes, measures
   without a bound, ``prefilter=False``): all pending answers against all names at once,
   at most ~16 M similarities in memory — rapidfuzz ``cdist`` in C++ on every core; an
   embedding measure searches its own best names instead, in float32 blocks on the CPU or
   on the GPU that holds its embeddings (:mod:`taxoforge.scores.mapping.embedding_search`).

**Top-1 when the vote is provably off** (:meth:`CandidateRetrieval.top1_without_vote`,
``ratio`` with the prefilter): the vote needs ``p0 − p1 < thr_top2``, and since the
softmax's normaliser is at most ``k·exp(T·s0)``, ``p0 − p1 ≥ (1 − exp(−T·(s0 − s1)))/k``;
so a top-2 gap of at least ``gap = −ln(1 − k·thr_top2)/T`` rules the vote out and the
top-1 alone decides. The best of a few candidates (names sharing a word, and the names
sharing the most trigrams) gives ``c0 ≤ s0``; every name that could reach
``u = c0 − gap`` is retrieved with the bound above (when ``u > 0.8``) and scored; when no
other node reaches ``s0 − gap`` among them (the rest score below ``u``), the best node is
the answer, exactly as the full algorithm would decide. Typos of a name ("qurcus alba")
take this path.

Both bounds pay off only where a full scan is expensive: on trees with fewer than
``bound_min_names`` names (default 100,000) the batched full scan in C++ is cheaper than
the per-answer candidate work, so it serves every top-k there — with the same result, as
every path is exact.

``stats`` counts answers served by the bound (``bounded``), by the top-1 shortcut
(``top1_bounded``) and by the full scan (``full_scans``).
"""

from __future__ import annotations

import numpy as np

from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.mapping.name_tables import NameTables
from taxoforge.scores.mapping.postings import expand_csr
from taxoforge.scores.mapping.similarity import Similarity

__all__ = ["lth_largest", "CandidateRetrieval", "INDEL_BOUND_MIN"]

# below this k-th best similarity the trigram count filter cannot exclude a name that
# shares no trigram with the answer (module docstring), so the bound is not used
INDEL_BOUND_MIN = 0.8


class CandidateRetrieval:
    """Similarities of an answer to nodes, and its exact top-k nodes.

    Parameters
    ----------
    tables : NameTables
        The name tables of the taxonomy.
    similarity : Similarity
        The bound similarity measure.
    config : MappingConfig
        The mapping configuration.
    bound_min_names : int, optional
        Fewest names for which the candidate bound is used (on smaller trees the full
        scan is cheaper and gives the same).
    """

    def __init__(self, tables: NameTables, similarity: Similarity, config: MappingConfig,
                 bound_min_names: int = 100_000) -> None:
        self.tables = tables
        self.similarity = similarity
        self.config = config
        self.bound_min_names = bound_min_names  # smaller trees: the full scan is cheaper (same result)
        self.stats = {"bounded": 0, "top1_bounded": 0, "full_scans": 0}

    # ------------------------------------------------------------------ node similarities
    def node_scores(self, query: str, name_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes reached by ``name_ids`` and each node's best similarity over those names,
        ordered by (similarity desc, node index asc).

        Parameters
        ----------
        query : str
            The answer's text.
        name_ids : numpy.ndarray
            The names to score.

        Returns
        -------
        tuple[numpy.ndarray, numpy.ndarray]
            Nodes reached by ``name_ids`` and each node's best similarity over those names,
            ordered by (similarity desc, node index asc).
        """
        if len(name_ids) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        return self.nodes_from_name_scores(name_ids, self.similarity.scores(query, name_ids))

    def nodes_from_name_scores(self, name_ids: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes reached by the scored names and each node's best similarity over them.

        Parameters
        ----------
        name_ids : numpy.ndarray
            Indexes of the scored names.
        sc : numpy.ndarray
            The similarity of each of those names.

        Returns
        -------
        nodes : numpy.ndarray
            Node indexes, by similarity (descending), then node index.
        scores : numpy.ndarray
            Each node's best similarity.
        """
        t = self.tables
        nodes, owner = expand_csr(t.name_ptr, t.name_node, name_ids)
        s = sc[owner]
        o = np.lexsort((-s, nodes))  # by node, best score first
        nodes, s = nodes[o], s[o]
        first = np.concatenate(([True], nodes[1:] != nodes[:-1]))
        nodes, s = nodes[first], s[first]
        o = np.lexsort((nodes, -s))
        return nodes[o], s[o]

    def node_similarity(self, query: str, v: int) -> float:
        """Similarity of ``query`` to node ``v`` (best over its names; 0 without names).

        Parameters
        ----------
        query : str
            The query text.
        v : int
            A node index.

        Returns
        -------
        float
            Similarity of ``query`` to node ``v`` (best over its names; 0 without names).
        """
        names = self.tables.names_of_node(v)
        return float(self.similarity.scores(query, names).max()) if len(names) else 0.0

    # ------------------------------------------------------------------ top-k
    def _bounds_apply(self, query: str) -> bool:
        return bool(query and self.config.prefilter and getattr(self.similarity, "bound", None) == "indel"
                    and len(self.tables) >= self.bound_min_names)

    def top_k(self, queries: list[tuple[str, list[str]]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Exact top-k ``(nodes, similarities)`` of every ``(query, content words)``. The
        top-k depends on the query alone (the words only steer how it is found), so each
        distinct query is computed once.

        Parameters
        ----------
        queries : list[tuple[str, list[str]]]
            ``(query, content words)`` of each answer.

        Returns
        -------
        list[tuple[numpy.ndarray, numpy.ndarray]]
            Exact top-k ``(nodes, similarities)`` of every ``(query, content words)``.
        """
        first: dict[str, int] = {}
        owner = [first.setdefault(q, i) for i, (q, _) in enumerate(queries)]
        uniq = [i for i, o in enumerate(owner) if o == i]
        tops = self._top_k_distinct([queries[i] for i in uniq])
        got = dict(zip(uniq, tops))
        return [got[o] for o in owner]

    def _top_k_distinct(self, queries: list[tuple[str, list[str]]]) -> list[tuple[np.ndarray, np.ndarray]]:
        out: list = [None] * len(queries)
        pending = []
        for i, (q, words) in enumerate(queries):
            top = self._top_k_bounded(q, words)
            if top is None:
                pending.append(i)
            else:
                out[i] = top
                self.stats["bounded"] += 1
        for start in range(0, len(pending), 1024):
            chunk = pending[start:start + 1024]
            for i, top in zip(chunk, self.top_k_full([queries[i][0] for i in chunk])):
                out[i] = top
            self.stats["full_scans"] += len(chunk)
        return out

    def _top_k_bounded(self, query: str, words: list[str]):
        """The top-k from the word-sharing candidates and the names passing the Indel
        bound, or None when the bound does not apply (module docstring)."""
        cfg = self.config
        if not self._bounds_apply(query):
            return None
        cand = self.tables.names_sharing_words(words)
        a = len(query)
        b = self.tables.name_len[cand]
        # only names within the length filter of INDEL_BOUND_MIN can lift the k-th best above it
        if int((2.0 * np.minimum(a, b) > INDEL_BOUND_MIN * (a + b)).sum()) < cfg.k:
            return None
        nodes, s = self.node_scores(query, cand)
        if len(nodes) < cfg.k or s[cfg.k - 1] <= INDEL_BOUND_MIN:
            return None
        extra = self._names_reaching(query, float(s[cfg.k - 1]))
        if len(extra):
            nodes, s = self.node_scores(query, np.union1d(cand, extra))
        return nodes[: cfg.k], s[: cfg.k]

    def _names_reaching(self, query: str, t: float) -> np.ndarray:
        """Every name that could score at least ``t > INDEL_BOUND_MIN`` against ``query``:
        a superset, by the length filter and the q-gram count filter (module docstring),
        the latter applied as a prefix filter on the rarest trigrams (a name must share
        ``(2.5·t − 2)·(a + b)`` trigram occurrences, at least the value at the shortest
        length ``b`` the length filter allows)."""
        tri = self.tables.trigrams
        a = len(query)
        b_min = a * t / (2.0 - t)
        ids = tri.names_sharing(query, (2.5 * t - 2.0) * (a + b_min) - 1e-9)
        b = tri.lengths[ids]
        return ids[2.0 * np.minimum(a, b) >= (t - 1e-9) * (a + b)]

    def top1_without_vote(self, query: str, words: list[str], gap: float):
        """``(node, similarity)`` of the most similar node when the top-2 gap provably rules
        the vote out (module docstring), else None.

        Parameters
        ----------
        query : str
            The answer's text.
        words : list[str]
            Its content words.
        gap : float
            The least gap between the top two similarities that rules the vote out.

        Returns
        -------
        object
            ``(node, similarity)`` of the most similar node when the top-2 gap provably
            rules the vote out (module docstring), else None.
        """
        if not self._bounds_apply(query):
            return None
        a = len(query)
        lo, hi = a * INDEL_BOUND_MIN / (2 - INDEL_BOUND_MIN), a * (2 - INDEL_BOUND_MIN) / INDEL_BOUND_MIN
        seeds = np.union1d(self.tables.names_sharing_words(words), self.tables.trigrams.seeds(query))
        b = self.tables.name_len[seeds]
        seeds = seeds[(b >= lo) & (b <= hi)]  # only these can score above INDEL_BOUND_MIN
        if not len(seeds):
            return None
        c0 = float(self.similarity.scores(query, seeds).max())
        u = c0 - gap
        if u <= INDEL_BOUND_MIN:
            return None
        nodes, s = self.node_scores(query, np.union1d(seeds, self._names_reaching(query, u)))
        if len(nodes) > 1 and s[0] - s[1] < gap:
            return None
        self.stats["top1_bounded"] += 1
        return int(nodes[0]), float(s[0])

    def top_k_full(self, queries: list[str], batch: int = 128) -> list[tuple[np.ndarray, np.ndarray]]:
        """Exact top-k nodes (similarity desc, node index asc) of every query, scoring all
        names in batches (rapidfuzz ``cdist`` on all cores; an embedding measure's own
        blocked search, :meth:`_top_k_searched`).

        Parameters
        ----------
        queries : list[str]
            The answers' texts.
        batch : int, optional
            Queries scored per batch.

        Returns
        -------
        list[tuple[numpy.ndarray, numpy.ndarray]]
            Exact top-k nodes (similarity desc, node index asc) of every query.
        """
        k = self.config.k
        if callable(getattr(self.similarity, "top_names", None)):
            return self._top_k_searched(queries)
        out = []
        # at most ~16 M similarities in memory at once
        batch = max(1, min(batch, 16_000_000 // max(1, len(self.tables))))
        for i in range(0, len(queries), batch):
            S = self.similarity.batch_scores(queries[i:i + batch])
            if S.shape[1] == 0:
                out += [(np.zeros(0, np.int64), np.zeros(0))] * S.shape[0]
                continue
            n_names = S.shape[1]
            # exact top-k without a node-level matrix: every node outside the names scoring at
            # least the L-th best name scores below all of them, so when those names reach
            # k distinct nodes the top-k is among them (ties at the threshold included)
            L = min(n_names, 4 * k)
            thr = lth_largest(S, L)
            for row, t in zip(S, thr):
                cand = np.flatnonzero(row >= t)
                nodes, sc = self.nodes_from_name_scores(cand, row[cand])
                if len(nodes) < k and len(cand) < n_names:
                    nodes, sc = self.nodes_from_name_scores(np.arange(n_names, dtype=np.int64), row)
                out.append((nodes[:k], sc[:k]))
        return out


    def _top_k_searched(self, queries: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`top_k_full` for a measure that searches its own best names
        (:meth:`~taxoforge.scores.mapping.similarity.EmbeddingSimilarity.top_names`: float32
        blocks on the CPU, or on the device holding the embeddings): the same argument —
        the names scoring at least the ``L``-th best hold the top-k nodes once they reach
        ``k`` distinct nodes — with ``L`` widened fourfold for the rare query whose best
        names belong to fewer than ``k`` nodes (up to every name)."""
        k = self.config.k
        n_names = len(self.tables)
        if n_names == 0:
            return [(np.zeros(0, np.int64), np.zeros(0)) for _ in queries]
        out: list = [None] * len(queries)
        todo, L = list(range(len(queries))), min(n_names, 4 * k)
        while todo:
            found = self.similarity.top_names([queries[i] for i in todo], L)
            short = []
            for i, (cand, sc) in zip(todo, found):
                nodes, s = self.nodes_from_name_scores(cand, sc)
                if len(nodes) < k and len(cand) < n_names:
                    short.append(i)
                else:
                    out[i] = (nodes[:k], s[:k])
            todo, L = short, min(n_names, 4 * L)
        return out


def lth_largest(S: np.ndarray, L: int) -> np.ndarray:
    """The ``L``-th largest value of every row of ``S`` (``np.partition(S, n - L,
    axis=1)[:, n - L]``), without partitioning whole rows of a large tree's names: the
    ``L``-th largest of a strided sample of a row is at most the row's, so the row's values
    at least that large hold the row's ``L`` largest, and only they are partitioned.

    Parameters
    ----------
    S : numpy.ndarray
        A matrix (one row per query, one column per name).
    L : int
        Which largest value (``1 ≤ L ≤ S.shape[1]``).

    Returns
    -------
    numpy.ndarray
        One value per row.

    Examples
    --------
    >>> S = np.random.default_rng(0).random((3, 100_000))
    >>> bool((lth_largest(S, 40) == np.partition(S, 100_000 - 40, axis=1)[:, 100_000 - 40]).all())
    True
    """
    n = S.shape[1]
    step = n // (16 * L) if L > 0 else 0
    if step < 4 or np.isnan(S).any():  # small rows (or NaN, which partition sorts last): partition them whole
        return np.partition(S, n - L, axis=1)[:, n - L]
    sample = S[:, ::step]
    m = sample.shape[1]
    floor = np.partition(sample, m - L, axis=1)[:, m - L]
    out = np.empty(S.shape[0], dtype=S.dtype)
    for i, (row, b) in enumerate(zip(S, floor)):
        cand = row[row >= b]
        out[i] = np.partition(cand, len(cand) - L)[len(cand) - L]
    return out
