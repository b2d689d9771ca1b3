"""The name tables of one taxonomy, built once: every table a numpy array.

* ``names`` — the distinct normalised names (code-point order); ``name_ptr``/``name_node``
  (CSR: name → nodes) and ``node_ptr``/``node_name`` (CSR: node → names).
* Exact name lookup — sorted 64-bit ``hash(str)`` of the names; collisions are checked
  against the name itself.
* Posting lists (CSR keyed by sorted 64-bit string hashes): word n-gram → names (the
  n-gram stage), stemmed content word → names (the token prefilter), and character
  trigram → names (the fuzzy candidates of very large trees).

About 300 bytes per node besides the names themselves, so a 1.1 M-node tree fits in about
1.2 GiB. ``hash(str)`` differs between processes, so an index is rebuilt when unpickled
(see :meth:`taxoforge.scores.mapping.TaxonomyIndex.__reduce__`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl

from taxoforge.scores.mapping.config import STOP_WORDS, MappingConfig
from taxoforge.text import normalise_text

__all__ = ["NameTables", "expand_csr", "hash_lookup", "trigram_codes", "stem", "word_ngrams"]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """NLTK's Porter stem of one word (cached)."""
    return _stemmer().stem(word)


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def word_ngrams(words: list[str], n: int) -> list[str]:
    """The word n-grams of ``words`` (none when there are fewer than ``n`` words)."""
    return [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]


def expand_csr(ptr: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def hash_lookup(post, key: int) -> np.ndarray:
    """The name ids of posting list ``key`` (empty when absent)."""
    keys, ptr, vals = post
    i = int(np.searchsorted(keys, key))
    if i < len(keys) and keys[i] == key:
        return vals[ptr[i]:ptr[i + 1]]
    return vals[:0]


def trigram_codes(b: np.ndarray) -> np.ndarray:
    """Codes of the byte trigrams of a uint8 array."""
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
        codes = trigram_codes(buf)
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


class NameTables:
    """The names of a taxonomy and the lookups Alg. 1 needs (module docstring).

    Reads ``taxonomy.names_table`` (``node_id``, ``name``, optional ``kind``; kinds in
    ``config.skip_name_kinds`` are identifiers, not names) plus every node's display label.
    """

    def __init__(self, taxonomy, config: MappingConfig) -> None:
        names = taxonomy.names_table
        if "kind" in names.columns and config.skip_name_kinds:
            names = names.filter(~pl.col("kind").is_in(list(config.skip_name_kinds)) | pl.col("kind").is_null())
        rows = names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String)).drop_nulls()
        labels = getattr(taxonomy, "_labels", None)
        ids = [str(x) for x in taxonomy.ids.tolist()]
        if labels:  # every node's display label is a name too
            rows = pl.concat([rows, pl.DataFrame({"node_id": ids, "name": [lab or "" for lab in labels]},
                                                 schema={"node_id": pl.String, "name": pl.String})])
        n_nodes = len(ids)
        rows = rows.join(pl.DataFrame({"node_id": ids, "idx": np.arange(n_nodes, dtype=np.int32)}),
                         on="node_id", how="inner").select("name", "idx")
        raw = rows["name"].unique()
        norm = pl.DataFrame({"name": raw, "norm": [normalise_text(x) for x in raw.to_list()]},
                            schema={"name": pl.String, "norm": pl.String})
        pairs = (rows.join(norm, on="name").filter(pl.col("norm") != "").select("norm", "idx").unique()
                 .sort("norm", "idx"))  # code-point order of the names, as sorted() gives
        del rows, raw, norm
        code = pairs["norm"].rle_id().to_numpy().astype(np.int64)
        self.names: list[str] = pairs["norm"].unique(maintain_order=True).to_list()
        n_names = len(self.names)
        self.n_nodes = n_nodes
        self.name_node = pairs["idx"].to_numpy().astype(np.int32)
        self.name_ptr = np.searchsorted(code, np.arange(n_names + 1)).astype(np.int64)
        del pairs
        # node -> names (for the similarity of specific nodes)
        order = np.argsort(self.name_node, kind="stable")
        self.node_name = code[order].astype(np.int32)
        self.node_ptr = np.concatenate(([0], np.cumsum(np.bincount(self.name_node, minlength=n_nodes)))).astype(np.int64)
        del code, order
        # exact name lookup: sorted 64-bit hashes of the names (collisions checked on lookup)
        h = np.fromiter((hash(x) for x in self.names), dtype=np.int64, count=n_names)
        self._name_hash_order = np.argsort(h, kind="stable").astype(np.int32)
        self._name_hash = h[self._name_hash_order]
        # whole-word contains: every run of up to max_words words of the prediction is looked up
        self.max_words = max((x.count(" ") + 1 for x in self.names), default=0)
        # n-gram and stemmed-word posting lists (CSR keyed by string hash)
        ng_keys, ng_ids, w_keys, w_ids = [], [], [], []
        for j, s in enumerate(self.names):
            words = s.split()
            for n in config.ngram_sizes:
                if len(words) >= n:
                    for g in set(word_ngrams(words, n)):
                        if not all(w in STOP_WORDS for w in g.split()):
                            ng_keys.append(hash(g))
                            ng_ids.append(j)
            for w in set(words):
                if w not in STOP_WORDS:
                    w_keys.append(hash(stem(w)))
                    w_ids.append(j)
        self.ngram_post = _hash_csr(ng_keys, ng_ids)
        self.word_post = _hash_csr(w_keys, w_ids)
        del ng_keys, ng_ids, w_keys, w_ids
        # character trigrams (UTF-8 bytes) -> names, for the fuzzy candidates of the prefilter
        self.trigram_post = (_trigram_csr(self.names) if config.fuzzy_candidates > 0
                             and n_names > config.fuzzy_min_names else None)

    def __len__(self) -> int:
        return len(self.names)

    def lookup(self, s: str) -> int | None:
        """Index of the normalised name ``s``, or None."""
        h = hash(s)
        lo = int(np.searchsorted(self._name_hash, h))
        while lo < len(self._name_hash) and self._name_hash[lo] == h:
            j = int(self._name_hash_order[lo])
            if self.names[j] == s:
                return j
            lo += 1
        return None

    def nodes_of_name(self, j: int) -> np.ndarray:
        """Node indexes having name ``j``."""
        return self.name_node[self.name_ptr[j]:self.name_ptr[j + 1]]

    def names_of_node(self, v: int) -> np.ndarray:
        """Name indexes of node ``v``."""
        return self.node_name[self.node_ptr[v]:self.node_ptr[v + 1]]

    def nodes_of_names(self, name_ids: np.ndarray) -> np.ndarray:
        """Node indexes of all ``name_ids`` (with repeats)."""
        return expand_csr(self.name_ptr, self.name_node, name_ids)[0]
