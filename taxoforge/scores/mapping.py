"""Map free-text predictions onto taxonomy nodes: paper 000 Alg. 1 with SPEC §3's fixes.

Input: a normalised prediction (:func:`taxoforge.text.normalise_text`) and a
:class:`TaxonomyIndex` built once per taxonomy. Output: one node (the algorithm always
returns a node), the stage that decided and the similarity of the chosen node.

Algorithm (stages tried in order; ``k = 10``, ``thr_topk = 0.0015``, ``thr_top2 = 0.001``,
``thr_vote = 4``, softmax temperature 100 — all in :class:`MappingConfig`):

0. **Similarity.** A node's similarity is the best over its names (canonical, aliases,
   scientific and common names). The nodes are ranked by similarity (ties: node id order);
   ``V[:k]`` are the top-k nodes, ``S_k`` the softmax of ``temperature × similarity`` over them.
1. **Contains.** Nodes with a name occurring in the prediction as whole words (SPEC §3; the
   pseudocode's raw substring test, which makes "ant" match "plant", is
   ``contains="substring"``). If some hit is among the top-k, the deepest such hit wins;
   otherwise the deepest hit overall (``contains_scope="all"`` always takes the deepest hit
   overall). Ties go to the more similar node.
2. **n-grams**, for n = 4, 3, 2: nodes sharing a word n-gram with the prediction (a name
   with fewer than n words has none); the same deepest-hit rule.
3. **Voting** (fixed, SPEC §3), only when the top-k are near-tied
   (``S_k[0] - S_k[1] < thr_top2`` and ``S_k[0] - S_k[-1] < thr_topk``): every node on the
   root paths of the top-k gets one vote per top-k node below it (or equal); the deepest node
   with at least ``thr_vote`` votes wins (``vote_rule="more_than"`` is the pseudocode's
   ``> thr_vote``); ties go to more votes, then to the best-ranked candidate under it.
4. **Fallback**: the most similar node ``V[0]``.

Names that are English function words ("a", "it", "is" …, :data:`STOP_WORDS`) never count
as contained, and n-grams made only of function words are ignored.

Speed and memory (no per-prediction scan of every name in Python; about 300 bytes per node
besides the names themselves, so a 1.1 M-node tree fits in about 1.2 GiB): every table is a
numpy array — name → nodes and node → names as CSR, and three inverted indexes (word
n-gram → names, stemmed word → names, character trigram → names) as CSR keyed by sorted
64-bit string hashes (collisions on exact-name lookups are checked against the name;
``__reduce__`` rebuilds the index because ``hash(str)`` differs between processes). The
whole-word contains check looks every run of up to max-name-length words of the prediction
up among the names (equivalent to a whole-word search, since predictions and names are
normalised to single spaces); the raw-substring variant builds an Aho–Corasick automaton
on first use. Identical normalised predictions are mapped once. The top-k similarity list is found in one of three
ways, in this order:

1. **Exact-name shortcut** (exact): a prediction that *is* a name has that name's node(s)
   at similarity 1; if they are also the deepest contains-hits, Alg. 1 returns them
   whatever the rest of the top-k is, so the top-k is not computed.
2. **Token prefilter** (string measures; ``prefilter=True``): the top-k among the names
   sharing a stemmed content word with the prediction. When the contains or n-gram check
   has hits (they always share words) this list decides "is a hit among the top-k"; for
   the vote and top-1 stages it is used when at least ``k`` nodes share a word. The hits
   themselves are exact; only the top-k list can differ from a full scan, and only through
   names that share no word with the prediction.
   **Fuzzy candidates** (taxonomies with more than ``fuzzy_min_names`` = 100,000 names):
   when fewer than the needed nodes share a word, the ``fuzzy_candidates`` = 1,024 names
   sharing the most character trigrams with the prediction join the candidates (posting
   lists read rarest trigram first, at most ``FUZZY_BUDGET`` entries, so the cost does not
   grow with the taxonomy). This replaces the full scan for misspellings and for text that
   names no taxon. *Approximation*: on the iNat-derived benchmark trees every prediction
   naming a taxon (exact, contained, genus/family, misspelt) maps to the same node as the previous
   mapper (exact full scan as fallback); text naming no taxon ("the bird a 0") maps to the most similar name
   among the candidates, which is the full scan's choice for about half of such texts
   (both are arbitrary nodes). ``prefilter=False`` or ``fuzzy_candidates=0`` keeps the exact
   full scan.
3. **Batched full scan** (exact; the documented fallback when no node shares a word, or
   fewer than ``k`` do and the vote / top-1 stages decide; always with ``prefilter=False``
   or embedding measures): all pending
   predictions against all names at once, at most ~16 M similarities in memory — rapidfuzz
   ``cdist`` in C++ on every core, or one matrix product for embeddings — then, per prediction, the names at or above the
   ``4k``-th best score reduced to nodes (exact: every other node scores lower).

Nodes without any name never enter the top-k.

:func:`map_prediction_reference` is a direct transcription of Alg. 1 (with the same
fixes), scanning every node per prediction; tests and the benchmark compare against it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import ahocorasick
import numpy as np
import polars as pl

from taxoforge.scores.similarity import Similarity, similarity_from_spec
from taxoforge.text import normalise_text

__all__ = [
    "MappingConfig",
    "MappingResult",
    "TaxonomyIndex",
    "STOP_WORDS",
    "map_prediction_reference",
]

STOP_WORDS = frozenset(
    "a an the this that these those it its is are was were be been being am of in on at to for from by with "
    "and or nor but not no yes as if so than then there here which what who whom whose i me my we our you your "
    "he him his she her they them their do does did has have had can could may might will would should shall "
    "must very some any all each one also just only".split()
)


@dataclass(frozen=True)
class MappingConfig:
    """Parameters of Alg. 1 (SPEC §3) and of this implementation."""

    k: int = 10
    thr_topk: float = 0.0015
    thr_top2: float = 0.001
    thr_vote: int = 4
    vote_rule: str = "at_least"  # "at_least" (the paper's prose) | "more_than" (its pseudocode)
    temperature: float = 100.0  # softmax temperature (CLIP's logit scale)
    contains: str = "whole_word"  # "whole_word" | "substring" (the pseudocode's raw test)
    contains_scope: str = "topk_first"  # "topk_first" (the pseudocode) | "all"
    ngram_sizes: tuple[int, ...] = (4, 3, 2)
    similarity: str = "ratio"  # a rapidfuzz scorer name or "sentence-transformers:<local path>"
    prefilter: bool = True  # string measures: top-k over names sharing a stemmed word (see module doc)
    fuzzy_candidates: int = 1024  # prefilter: names taken from the character-trigram index (0: off, see module doc)
    fuzzy_min_names: int = 100_000  # ... only for taxonomies with more names than this (below: exact full scan)
    skip_name_kinds: tuple[str, ...] = ("synset",)  # name kinds that are identifiers, not names

    def __post_init__(self) -> None:
        if self.vote_rule not in ("at_least", "more_than"):
            raise ValueError(f"vote_rule must be 'at_least' or 'more_than', not {self.vote_rule!r}")
        if self.contains not in ("whole_word", "substring"):
            raise ValueError(f"contains must be 'whole_word' or 'substring', not {self.contains!r}")
        if self.contains_scope not in ("topk_first", "all"):
            raise ValueError(f"contains_scope must be 'topk_first' or 'all', not {self.contains_scope!r}")
        if self.k < 2:
            raise ValueError(f"k must be at least 2, not {self.k}")
        object.__setattr__(self, "ngram_sizes", tuple(int(n) for n in self.ngram_sizes))
        object.__setattr__(self, "skip_name_kinds", tuple(self.skip_name_kinds))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ngram_sizes"] = list(self.ngram_sizes)
        d["skip_name_kinds"] = list(self.skip_name_kinds)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def config_id(self) -> str:
        """Short content hash of the configuration."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]


@dataclass
class MappingResult:
    node_idx: np.ndarray  # int64, one per prediction
    stage: np.ndarray  # object: contains | ngram4 | ngram3 | ngram2 | vote | top1 | empty
    score: np.ndarray  # similarity of the chosen node
    stats: dict = field(default_factory=dict)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def _ngrams(words: list[str], n: int) -> list[str]:
    return [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]


def _csr(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lens = np.fromiter((len(g) for g in groups), dtype=np.int64, count=len(groups))
    ptr = np.concatenate(([0], np.cumsum(lens)))
    flat = np.fromiter((x for g in groups for x in g), dtype=np.int64, count=int(ptr[-1]))
    return ptr, flat


def _expand(ptr: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All entries of CSR ``rows``: (values, row position of each value)."""
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(rows)), lens)
    offs = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    return flat[starts[owner] + offs], owner


def _hash_csr(keys: list[int], ids: list[int]):
    """(sorted unique keys, ptr, name ids) of an inverted index keyed by 64-bit string hashes."""
    k = np.asarray(keys, dtype=np.int64)
    v = np.asarray(ids, dtype=np.int32)
    o = np.argsort(k, kind="stable")
    k, v = k[o], v[o]
    first = np.concatenate(([True], k[1:] != k[:-1])) if len(k) else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    return k[starts], np.append(starts, len(k)).astype(np.int64), v


def _hash_lookup(post, key: int) -> np.ndarray:
    keys, ptr, vals = post
    i = int(np.searchsorted(keys, key))
    if i < len(keys) and keys[i] == key:
        return vals[ptr[i]:ptr[i + 1]]
    return vals[:0]


def _trigram_codes(b: np.ndarray) -> np.ndarray:
    b = b.astype(np.int64)
    return (b[:-2] << 16) | (b[1:-1] << 8) | b[2:]


def _trigram_csr(names: list[str]):
    """Distinct byte trigrams of each name (padded with a space each side) -> name ids, as
    (sorted unique trigram codes, ptr, name ids)."""
    if not names:
        return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32)
    parts, owners = [], []
    step = 200_000
    for start in range(0, len(names), step):  # bounded working memory
        chunk = names[start:start + step]
        enc = [f" {x} ".encode() for x in chunk]
        buf = np.frombuffer(b"\n".join(enc), dtype=np.uint8)
        lens = np.fromiter((len(e) for e in enc), dtype=np.int64, count=len(enc))
        owner = np.repeat(np.arange(start, start + len(chunk), dtype=np.int64), lens + 1)[:len(buf)]
        codes = _trigram_codes(buf)
        ok = owner[:-2] == owner[2:]  # the three bytes belong to one name (no separator)
        key = np.unique((codes[ok] << 24) | owner[:-2][ok])  # distinct (trigram, name)
        parts.append(key >> 24)
        owners.append((key & 0xFFFFFF).astype(np.int32))
    codes = np.concatenate(parts)
    ids = np.concatenate(owners)
    o = np.argsort(codes, kind="stable")
    codes, ids = codes[o], ids[o]
    first = np.concatenate(([True], codes[1:] != codes[:-1]))
    starts = np.flatnonzero(first)
    return codes[starts], np.append(starts, len(codes)).astype(np.int64), ids


class _NameLookup:
    def __init__(self, index: "TaxonomyIndex") -> None:
        self._index = index

    def get(self, s: str, default=None):
        j = self._index._name_index(s)
        return default if j is None else j

    def __getitem__(self, s: str) -> int:
        j = self._index._name_index(s)
        if j is None:
            raise KeyError(s)
        return j

    def __contains__(self, s: str) -> bool:
        return self._index._name_index(s) is not None

    def __len__(self) -> int:
        return len(self._index.names)


class TaxonomyIndex:
    """Everything Alg. 1 needs about one taxonomy, built once.

    ``TaxonomyIndex(taxonomy, config)`` reads ``taxonomy.names_table`` (``node_id``,
    ``name``) plus every node's label, normalises the names and builds the automaton and the
    inverted indexes. ``map(predictions)`` maps a batch of raw or normalised predictions.
    """

    def __init__(self, taxonomy, config: MappingConfig | None = None, similarity: Similarity | None = None) -> None:
        self.taxonomy = taxonomy
        self.config = config or MappingConfig()
        self.similarity = similarity or similarity_from_spec(self.config.similarity)
        cfg = self.config
        names = taxonomy.names_table
        if "kind" in names.columns and cfg.skip_name_kinds:
            names = names.filter(~pl.col("kind").is_in(list(cfg.skip_name_kinds)) | pl.col("kind").is_null())
        rows = names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String)).drop_nulls()
        labels = getattr(taxonomy, "_labels", None)
        ids = [str(x) for x in taxonomy.ids.tolist()]
        if labels:  # every node's display label is a name too
            rows = pl.concat([rows, pl.DataFrame({"node_id": ids, "name": [lab or "" for lab in labels]},
                                                 schema={"node_id": pl.String, "name": pl.String})])
        n_nodes = len(ids)
        rows = rows.join(pl.DataFrame({"node_id": ids, "idx": np.arange(n_nodes, dtype=np.int32)}),
                         on="node_id", how="left")
        self.n_unknown_name_rows = int(rows["idx"].null_count())
        rows = rows.drop_nulls("idx").select("name", "idx")
        raw = rows["name"].unique()
        norm = pl.DataFrame({"name": raw, "norm": [normalise_text(x) for x in raw.to_list()]},
                            schema={"name": pl.String, "norm": pl.String})
        pairs = (rows.join(norm, on="name").filter(pl.col("norm") != "").select("norm", "idx").unique()
                 .sort("norm", "idx"))  # code-point order of the names, as sorted() gives
        del rows, raw, norm
        code = pairs["norm"].rle_id().to_numpy().astype(np.int64)
        self.names: list[str] = pairs["norm"].unique(maintain_order=True).to_list()
        n_names = len(self.names)
        self.name_node = pairs["idx"].to_numpy().astype(np.int32)
        self.name_ptr = np.searchsorted(code, np.arange(n_names + 1)).astype(np.int64)
        del pairs
        # node -> names (for similarity of specific nodes)
        order = np.argsort(self.name_node, kind="stable")
        self.node_name = code[order].astype(np.int32)
        self.node_ptr = np.concatenate(([0], np.cumsum(np.bincount(self.name_node, minlength=n_nodes)))).astype(np.int64)
        del code, order
        self.depth = taxonomy.depth_arr.astype(np.int64)
        self.parent = taxonomy.parent_idx
        self.similarity.bind(self.names)
        # exact name lookup: sorted 64-bit hashes of the names (collisions checked on lookup)
        h = np.fromiter((hash(x) for x in self.names), dtype=np.int64, count=n_names)
        self._name_hash_order = np.argsort(h, kind="stable").astype(np.int32)
        self._name_hash = h[self._name_hash_order]
        self._hash_salt = hash("taxoforge.scores.mapping")
        self._name_len = np.fromiter((len(x) for x in self.names), dtype=np.int32, count=n_names)
        # whole-word contains: every run of up to max-words words of the prediction is looked
        # up among the names; the raw-substring variant uses an Aho–Corasick automaton (lazy)
        self._max_words = max((x.count(" ") + 1 for x in self.names), default=0)
        self._automaton = None
        # n-gram and stemmed-word inverted indexes (CSR keyed by string hash)
        ng_keys, ng_ids, w_keys, w_ids = [], [], [], []
        stop = STOP_WORDS
        for j, s in enumerate(self.names):
            words = s.split()
            for n in cfg.ngram_sizes:
                if len(words) >= n:
                    for g in {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}:
                        if not all(w in stop for w in g.split()):
                            ng_keys.append(hash(g))
                            ng_ids.append(j)
            for w in set(words):
                if w not in stop:
                    w_keys.append(hash(_stem(w)))
                    w_ids.append(j)
        self._ngram_post = _hash_csr(ng_keys, ng_ids)
        self._word_post = _hash_csr(w_keys, w_ids)
        del ng_keys, ng_ids, w_keys, w_ids
        # character trigrams (UTF-8 bytes) -> names, for the fuzzy candidates of the prefilter
        self._tri_post = (_trigram_csr(self.names) if cfg.fuzzy_candidates > 0 and n_names > cfg.fuzzy_min_names
                          else None)
        self.stats = {"names": n_names, "nodes": n_nodes, "exact_shortcut": 0, "prefiltered": 0, "full_scans": 0}

    @property
    def name_id(self) -> "_NameLookup":
        """``name_id.get(normalised_name)`` → name index or None (a dict-like view)."""
        return _NameLookup(self)

    def _name_index(self, s: str) -> int | None:
        h = hash(s)
        lo = int(np.searchsorted(self._name_hash, h))
        while lo < len(self._name_hash) and self._name_hash[lo] == h:
            j = int(self._name_hash_order[lo])
            if self.names[j] == s:
                return j
            lo += 1
        return None

    def __reduce__(self):
        # the lookup tables are keyed by str hashes, which differ between processes: rebuild
        return (TaxonomyIndex, (self.taxonomy, self.config, self.similarity))

    # ------------------------------------------------------------------ helpers
    def _node_scores(self, pred: str, name_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes reached by ``name_ids`` and each node's best similarity over those names,
        ordered by (similarity desc, node index asc)."""
        if len(name_ids) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        return self._nodes_from_name_scores(name_ids, self.similarity.scores(pred, name_ids))

    def _nodes_from_name_scores(self, name_ids: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nodes, owner = _expand(self.name_ptr, self.name_node, name_ids)
        s = sc[owner]
        o = np.lexsort((-s, nodes))  # by node, best score first
        nodes, s = nodes[o], s[o]
        first = np.concatenate(([True], nodes[1:] != nodes[:-1]))
        nodes, s = nodes[first], s[first]
        o = np.lexsort((nodes, -s))
        return nodes[o], s[o]

    def _top_k_prefiltered(self, pred: str, min_nodes: int, hits: np.ndarray):
        """Top-k over the names sharing a stemmed content word with ``pred``, the names of
        the ``hits`` nodes and, when those reach fewer than ``min_nodes`` nodes, the fuzzy
        candidates (:meth:`_fuzzy_candidates`); None when still fewer than ``min_nodes``."""
        if not (self.config.prefilter and self.similarity.supports_prefilter):
            return None
        posts = [p for w in {_stem(x) for x in pred.split() if x not in STOP_WORDS}
                 if len(p := _hash_lookup(self._word_post, hash(w)))]
        if len(hits):
            posts.append(_expand(self.node_ptr, self.node_name, np.unique(hits))[0])
        min_nodes = max(1, min_nodes)
        nodes = s = None
        if posts:
            cand = np.unique(np.concatenate(posts)) if len(posts) > 1 else posts[0]
            nodes, s = self._node_scores(pred, cand)
        if (nodes is None or len(nodes) < min_nodes) and self._tri_post is not None:
            fuzzy = self._fuzzy_candidates(pred)
            if len(fuzzy):
                cand = np.unique(np.concatenate(posts + [fuzzy]))
                nodes, s = self._node_scores(pred, cand)
        if nodes is None or len(nodes) < min_nodes:
            return None
        return nodes[: self.config.k], s[: self.config.k]

    # work bound of the fuzzy candidates: posting entries read per prediction
    FUZZY_BUDGET = 100_000

    def _fuzzy_candidates(self, pred: str) -> np.ndarray:
        """The ``fuzzy_candidates`` names sharing the most character trigrams with ``pred``
        (ties: lower name index). Posting lists are read rarest trigram first until
        ``FUZZY_BUDGET`` entries have been read, so the work is bounded whatever the size
        of the taxonomy; a trigram left unread counts for no name."""
        keys, ptr, vals = self._tri_post
        q = np.unique(_trigram_codes(np.frombuffer(f" {pred} ".encode(), dtype=np.uint8)))
        i = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        i = i[keys[i] == q] if len(keys) else i[:0]
        if not len(i):
            return np.zeros(0, np.int64)
        lens = ptr[i + 1] - ptr[i]
        o = np.argsort(lens, kind="stable")
        i, lens = i[o], lens[o]
        take = max(1, int(np.searchsorted(np.cumsum(lens), self.FUZZY_BUDGET, side="right")))
        got = np.concatenate([vals[ptr[x]:ptr[x + 1]] for x in i[:take].tolist()])
        ids, counts = np.unique(got, return_counts=True)
        c = self.config.fuzzy_candidates
        if len(ids) > c:
            o = np.lexsort((ids, -counts))[:c]
            ids = ids[o]
        return ids.astype(np.int64)

    def _top_k_full(self, preds: list[str], batch: int = 128) -> list[tuple[np.ndarray, np.ndarray]]:
        """Exact top-k nodes (similarity desc, node index asc) of every prediction, scoring
        all names in batches (rapidfuzz ``cdist`` on all cores / one matrix product)."""
        k = self.config.k
        out = []
        # at most ~16 M similarities (64 MB in float32) in memory at once
        batch = max(1, min(batch, 16_000_000 // max(1, len(self.names))))
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
                nodes, sc = self._nodes_from_name_scores(cand, row[cand])
                if len(nodes) < k and len(cand) < n_names:
                    nodes, sc = self._nodes_from_name_scores(np.arange(n_names, dtype=np.int64), row)
                out.append((nodes[:k], sc[:k]))
        return out

    def _pick_deepest(self, pred: str, hit_nodes: np.ndarray, top_nodes: np.ndarray, top_scores: np.ndarray):
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
            return v, self._node_similarity(pred, v)
        names, _ = _expand(self.node_ptr, self.node_name, deepest)
        nodes, s = self._node_scores(pred, np.unique(names))
        keep = np.isin(nodes, deepest)
        return int(nodes[keep][0]), float(s[keep][0])

    def _node_similarity(self, pred: str, v: int) -> float:
        names = self.node_name[self.node_ptr[v]:self.node_ptr[v + 1]]
        return float(self.similarity.scores(pred, names).max()) if len(names) else 0.0

    def _substring_automaton(self):
        if self._automaton is None:
            a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for j, s in enumerate(self.names):
                if s not in STOP_WORDS:
                    a.add_word(s, j)
            if len(a):
                a.make_automaton()
            self._automaton = a
        return self._automaton

    def _contains_hits(self, pred: str) -> np.ndarray:
        hits = []
        if self.config.contains == "whole_word":
            # pred and names are normalised (single spaces): a whole-word occurrence of a
            # name is a run of the prediction's words equal to it
            words = pred.split()
            m, mw = len(words), self._max_words
            for i in range(m):
                for j in range(i + 1, min(m, i + mw) + 1):
                    g = " ".join(words[i:j])
                    if g not in STOP_WORDS and (x := self._name_index(g)) is not None:
                        hits.append(x)
        else:
            a = self._substring_automaton()
            if len(a):
                hits = [j for _, j in a.iter(pred)]
        if not hits:
            return np.zeros(0, np.int64)
        return _expand(self.name_ptr, self.name_node, np.unique(np.asarray(hits, np.int64)))[0]

    def _ngram_hits(self, words: list[str], n: int) -> np.ndarray:
        found = [p for g in set(_ngrams(words, n)) if len(p := _hash_lookup(self._ngram_post, hash(g)))]
        if not found:
            return np.zeros(0, np.int64)
        return _expand(self.name_ptr, self.name_node, np.unique(np.concatenate(found)))[0]

    def _vote(self, top_nodes: np.ndarray, top_scores: np.ndarray):
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

    # ------------------------------------------------------------------ public
    def nodes_named(self, text: str) -> np.ndarray:
        """Indexes of the nodes having a name whose normal form equals that of ``text``."""
        j = self._name_index(normalise_text(text))
        if j is None:
            return np.zeros(0, np.int64)
        return self.name_node[self.name_ptr[j]:self.name_ptr[j + 1]]

    def _exact_shortcut(self, pred: str, hits: np.ndarray):
        """When ``pred`` is exactly a name, its node(s) are the most similar (1.0) and if they
        are also the deepest hits, Alg. 1 returns them whatever the rest of the top-k is."""
        j = self._name_index(pred)
        if j is None or not len(hits) or pred in STOP_WORDS:
            return None
        exact = self.name_node[self.name_ptr[j]:self.name_ptr[j + 1]]
        if len(exact) > self.config.k or self.depth[exact].max() < self.depth[hits].max():
            return None
        d = self.depth[exact]
        return int(exact[d == d.max()].min())

    def _hit_stage(self, pred: str, hits: np.ndarray):
        """(stage, hit nodes) of the contains and n-gram checks, or (None, empty)."""
        if len(hits):
            return "contains", hits
        words = pred.split()
        for n in self.config.ngram_sizes:
            ng = self._ngram_hits(words, n)
            if len(ng):
                return f"ngram{n}", ng
        return None, hits

    def _finish(self, pred: str, stage, hits: np.ndarray, top_nodes: np.ndarray, top_scores: np.ndarray):
        if stage is not None:
            v, s = self._pick_deepest(pred, hits, top_nodes, top_scores)
            return v, stage, s
        v = self._vote(top_nodes, top_scores)
        if v is not None:
            return int(v), "vote", self._node_similarity(pred, int(v))
        return int(top_nodes[0]), "top1", float(top_scores[0])

    def map_one(self, pred: str) -> tuple[int, str, float]:
        """Map one **normalised** prediction: ``(node index, stage, similarity)``."""
        r = self._map_unique([pred])
        return int(r[0][0]), str(r[1][0]), float(r[2][0])

    def _map_unique(self, preds: list[str], progress=None):
        n = len(preds)
        out_v = np.empty(n, np.int64)
        out_s = np.empty(n)
        out_stage = np.empty(n, dtype=object)
        pending: list[tuple[int, str | None, np.ndarray]] = []
        for i, p in enumerate(preds):
            if not p:
                out_v[i], out_stage[i], out_s[i] = self.taxonomy.root_idx, "empty", 0.0
                continue
            hits = self._contains_hits(p)
            v = self._exact_shortcut(p, hits)
            if v is not None:
                self.stats["exact_shortcut"] += 1
                out_v[i], out_stage[i], out_s[i] = v, "contains", 1.0
                continue
            stage, hits = self._hit_stage(p, hits)
            # the hits' own names are always candidates, so word-sharing names serve the
            # contains / n-gram stages; the vote / top-1 stages need k of them
            top = self._top_k_prefiltered(p, 1 if stage is not None else self.config.k, hits)
            if top is None:
                pending.append((i, stage, hits))
                continue
            self.stats["prefiltered"] += 1
            out_v[i], out_stage[i], out_s[i] = self._finish(p, stage, hits, *top)
        if progress is not None and n - len(pending):
            progress(n - len(pending))
        for start in range(0, len(pending), 1024):
            chunk = pending[start:start + 1024]
            tops = self._top_k_full([preds[i] for i, _, _ in chunk])
            self.stats["full_scans"] += len(chunk)
            for (i, stage, hits), top in zip(chunk, tops):
                out_v[i], out_stage[i], out_s[i] = self._finish(preds[i], stage, hits, *top)
            if progress is not None:
                progress(len(chunk))
        return out_v, out_stage, out_s

    def map(self, predictions, normalised: bool = False, progress=None) -> MappingResult:
        """Map a sequence of predictions (raw text unless ``normalised``). Identical normal
        forms are mapped once. ``progress`` is an optional callable ``progress(n_done)``."""
        preds = list(predictions) if normalised else [normalise_text(p) for p in predictions]
        uniq: dict[str, int] = {}
        inv = np.fromiter((uniq.setdefault(p, len(uniq)) for p in preds), dtype=np.int64, count=len(preds))
        out_v, out_stage, out_s = self._map_unique(list(uniq), progress=progress)
        stages, counts = np.unique(out_stage[inv], return_counts=True) if len(inv) else ([], [])
        stats = dict(self.stats, unique_predictions=len(uniq), stages=dict(zip([str(s) for s in stages], [int(c) for c in counts])))
        return MappingResult(node_idx=out_v[inv], stage=out_stage[inv], score=out_s[inv], stats=stats)


# ---------------------------------------------------------------------- reference
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
        pg = {g for g in _ngrams(words, n) if not all(w in STOP_WORDS for w in g.split())}
        cand = scan(lambda v: any(pg & set(_ngrams(nm.split(), n)) for nm in names_of[v]))
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
