"""The name tables of one taxonomy, built once: every table a numpy array.

Every name is compared through its **key**: :func:`taxoforge.text.base_form_text` (the
normal form with every word in its noun base form, SPEC §3; ``base_forms=False`` keeps the
plain normal form). Predictions get the same key (:mod:`taxoforge.scores.mapping.answers`).

* ``names`` — the distinct keys (code-point order); ``name_ptr``/``name_node`` (CSR: name →
  nodes) and ``node_ptr``/``node_name`` (CSR: node → names); ``name_non_naming`` marks keys
  made only of words that name nothing on their own (:mod:`taxoforge.scores.vocabulary`).
* Exact key lookup — a dict from key to name index (the keys themselves are shared with
  ``names``, so it costs a hash-table slot per name).
* Posting lists (CSR keyed by sorted 64-bit string hashes): word n-gram → names (the
  n-gram stage) and content word → names (the candidates of the prefilter).
* :class:`TrigramIndex` — character trigram → names, built on first use by the exact
  candidate bound of :mod:`taxoforge.scores.mapping.candidates`.

About 300 bytes per node besides the names themselves. ``hash(str)`` differs between
processes, so an index is rebuilt when unpickled
(:meth:`taxoforge.scores.mapping.TaxonomyIndex.__reduce__`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.vocabulary import is_non_naming
from taxoforge.text import base_form, base_form_text, normalise_text

__all__ = ["NameTables", "TrigramIndex", "expand_csr", "hash_lookup", "word_ngrams", "text_key"]


def text_key(text: str, base_forms: bool = True) -> str:
    """The key a name or an answer is compared by (module docstring)."""
    return base_form_text(text) if base_forms else normalise_text(text)


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


def _csr_by_key(keys: np.ndarray, ids: np.ndarray):
    """(sorted unique keys, ptr, ids) of an inverted index."""
    o = np.argsort(keys, kind="stable")
    k, v = keys[o], ids[o]
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


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def padded_trigrams(text: str) -> np.ndarray:
    """Codes of the code-point trigrams of ``" " + text + " "`` (one per position)."""
    c = _codepoints(f" {text} ")
    if len(c) < 3:
        return np.zeros(0, np.int64)
    return (c[:-2] << 42) | (c[1:-1] << 21) | c[2:]


class TrigramIndex:
    """Distinct code-point trigrams of every name (padded with a space each side) → names,
    and every name's length in code points. A name of ``b`` code points has ``b``
    trigrams."""

    def __init__(self, names: list[str]) -> None:
        self.lengths = np.fromiter((len(x) for x in names), dtype=np.int64, count=len(names))
        codes, owners = [], []
        step = 100_000
        for start in range(0, len(names), step):  # bounded working memory
            chunk = names[start:start + step]
            c = [padded_trigrams(x) for x in chunk]
            own = np.repeat(np.arange(start, start + len(chunk), dtype=np.int64), [len(x) for x in c])
            cc = np.concatenate(c) if c else np.zeros(0, np.int64)
            o = np.lexsort((own, cc))
            cc, own = cc[o], own[o]
            keep = np.concatenate(([True], (cc[1:] != cc[:-1]) | (own[1:] != own[:-1]))) if len(cc) else cc.astype(bool)
            codes.append(cc[keep])
            owners.append(own[keep].astype(np.int32))
        k = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        v = np.concatenate(owners) if owners else np.zeros(0, np.int32)
        self.keys, self.ptr, self.names = _csr_by_key(k, v)

    def _postings(self, query: str):
        """(distinct trigram rows present in the index, their occurrences in the padded
        query), rarest first, and the query's trigram count."""
        q = padded_trigrams(query)
        if not len(q) or not len(self.keys):
            return np.zeros(0, np.int64), np.zeros(0, np.int64), len(q)
        g, cnt = np.unique(q, return_counts=True)
        i = np.minimum(np.searchsorted(self.keys, g), len(self.keys) - 1)
        hit = self.keys[i] == g
        i, cnt = i[hit], cnt[hit]
        o = np.argsort(self.ptr[i + 1] - self.ptr[i], kind="stable")
        return i[o], cnt[o], len(q)

    def names_sharing(self, query: str, min_shared: float) -> np.ndarray:
        """Every name that may share at least ``min_shared`` of the padded query's trigram
        occurrences: a superset, read from the rarest posting lists only (prefix filter —
        such a name shares a trigram with any set of the query's trigrams weighing more
        than the weight of all the query's indexed trigrams minus ``min_shared``). All names
        when ``min_shared ≤ 0``."""
        rows, cnt, _ = self._postings(query)
        if min_shared <= 0:
            return np.arange(len(self.lengths), dtype=np.int64)
        need = int(cnt.sum()) - min_shared  # read postings until their weight exceeds this
        take = int(np.searchsorted(np.cumsum(cnt), need, side="right")) + 1
        if take > len(rows):  # the present trigrams cannot weigh that much: no name qualifies
            return np.zeros(0, np.int64)
        return np.unique(expand_csr(self.ptr, self.names, rows[:take])[0]).astype(np.int64)

    def seeds(self, query: str, budget: int = 1000, n: int = 16) -> np.ndarray:
        """Up to ``n`` names sharing the most of the query's rarer trigrams (posting lists
        read rarest first, at most ``budget`` entries): good candidates, not a complete set."""
        rows, _, _ = self._postings(query)
        if not len(rows):
            return np.zeros(0, np.int64)
        lens = self.ptr[rows + 1] - self.ptr[rows]
        take = max(1, int(np.searchsorted(np.cumsum(lens), budget, side="right")))
        ids, counts = np.unique(expand_csr(self.ptr, self.names, rows[:take])[0], return_counts=True)
        if len(ids) > n:
            ids = ids[np.argpartition(-counts, n)[:n]]
        return ids.astype(np.int64)


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
        normal = [normalise_text(x) for x in raw.to_list()]
        forms = pl.DataFrame({"name": raw, "norm": normal,
                              "key": [" ".join(base_form(w) for w in x.split()) if config.base_forms else x
                                      for x in normal]},
                             schema={"name": pl.String, "norm": pl.String, "key": pl.String})
        named = rows.join(forms, on="name").filter(pl.col("key") != "")
        pairs = named.select("key", "idx").unique().sort("key", "idx")  # code-point order, as sorted() gives
        # keys that base forms made shared by different normal forms ("brakes" and "brake"):
        # which nodes each normal form names, so that the form the answer uses wins
        split = (named.select("key", "norm", "idx").unique()
                 .filter(pl.col("norm").n_unique().over("key") > 1)
                 .group_by("key", "norm").agg(pl.col("idx").sort()))
        del rows, raw, forms, named
        code = pairs["key"].rle_id().to_numpy().astype(np.int64)
        self.names: list[str] = pairs["key"].unique(maintain_order=True).to_list()
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
        self._key_index = {x: j for j, x in enumerate(self.names)}
        self.surface_nodes: dict[int, dict[str, np.ndarray]] = {}
        for key, norm, idx in split.iter_rows():
            self.surface_nodes.setdefault(self._key_index[key], {})[norm] = np.asarray(idx, np.int64)
        del split
        self.max_words = max((x.count(" ") + 1 for x in self.names), default=0)
        self.first_words = frozenset(x.split(" ", 1)[0] for x in self.names)  # a name can only start there
        self.name_len = np.fromiter((len(x) for x in self.names), dtype=np.int64, count=n_names)
        # names made only of words that name nothing on their own ("two", "image", "the one")
        self.name_non_naming = np.fromiter((all(is_non_naming(w) for w in x.split()) for x in self.names),
                                           dtype=bool, count=n_names)
        # n-gram and content-word posting lists (CSR keyed by string hash)
        ng_keys, ng_ids, w_keys, w_ids = [], [], [], []
        for j, s in enumerate(self.names):
            words = s.split()
            for n in config.ngram_sizes:
                if len(words) >= n:
                    for g in set(word_ngrams(words, n)):
                        if not all(is_non_naming(w) for w in g.split()):
                            ng_keys.append(hash(g))
                            ng_ids.append(j)
            for w in set(words):
                if not is_non_naming(w):
                    w_keys.append(hash(w))
                    w_ids.append(j)
        self.ngram_post = _csr_by_key(np.asarray(ng_keys, np.int64), np.asarray(ng_ids, np.int32))
        self.word_post = _csr_by_key(np.asarray(w_keys, np.int64), np.asarray(w_ids, np.int32))
        del ng_keys, ng_ids, w_keys, w_ids
        self._trigrams: TrigramIndex | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def trigrams(self) -> TrigramIndex:
        """The character-trigram index (built on first use)."""
        if self._trigrams is None:
            self._trigrams = TrigramIndex(self.names)
        return self._trigrams

    def lookup(self, key: str) -> int | None:
        """Index of the name key ``key``, or None."""
        return self._key_index.get(key)

    def nodes_of_name(self, j: int, surface: str | None = None) -> np.ndarray:
        """Node indexes having name ``j``; with ``surface`` (the normal form the text used),
        only those having a name of that very form, where some have and others not."""
        if surface is not None and j in self.surface_nodes:
            got = self.surface_nodes[j].get(surface)
            if got is not None:
                return got
        return self.name_node[self.name_ptr[j]:self.name_ptr[j + 1]]

    def names_of_node(self, v: int) -> np.ndarray:
        """Name indexes of node ``v``."""
        return self.node_name[self.node_ptr[v]:self.node_ptr[v + 1]]

    def nodes_of_names(self, name_ids: np.ndarray) -> np.ndarray:
        """Node indexes of all ``name_ids`` (with repeats)."""
        return expand_csr(self.name_ptr, self.name_node, name_ids)[0]

    def names_sharing_words(self, words) -> np.ndarray:
        """Name ids sharing at least one of ``words`` (keys' words)."""
        posts = [p for w in set(words) if len(p := hash_lookup(self.word_post, hash(w)))]
        if not posts:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(posts)).astype(np.int64)
