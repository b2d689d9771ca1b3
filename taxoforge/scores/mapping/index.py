"""The name tables of one taxonomy: every table a flat numpy array, built once and stored.

Every name is compared through its **key**: :func:`taxoforge.text.base_form_text` (the
normal form with every word in its noun base form, SPEC §3; ``base_forms=False`` keeps the
plain normal form). Predictions get the same key (:mod:`taxoforge.scores.mapping.answers`).

* ``names`` — the distinct keys in code-point order, stored as one UTF-8 buffer and its
  offsets (read as an Arrow string array, :meth:`NameTables.name` / :meth:`NameTables.take`);
  ``name_ptr``/``name_node`` (CSR: name → nodes) and ``node_ptr``/``node_name`` (CSR: node →
  names); ``name_non_naming`` marks keys made only of words that name nothing on their own
  (:mod:`taxoforge.scores.vocabulary`); ``name_len`` counts code points.
* Exact key lookup — the sorted 64-bit hashes of the keys (:func:`key_hash`, XXH3 of the
  UTF-8 bytes: the same in every process, unlike ``hash(str)``), each hit verified against
  the key itself.
* Posting lists (CSR keyed by sorted key hashes): word n-gram → names (the n-gram stage)
  and content word → names (the candidates of the prefilter); the hashes of every name's
  first word (a name can only start there).
* :class:`TrigramIndex` — character trigram → names, for the exact candidate bound of
  :mod:`taxoforge.scores.mapping.candidates`.

**Build** (:meth:`NameTables.build`, vectorised: polars for the string work, one Python
call per *distinct* name or word where a Python rule decides — a normal form outside
ASCII, a word's base form, whether a word names anything). **Store**
(:mod:`taxoforge.scores.mapping.store`): :meth:`NameTables.arrays` are written as ``.npy``
files and read back memory-mapped (:meth:`NameTables.from_arrays`): loading costs no
rebuild and only the pages a lookup touches are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.vocabulary import non_naming_flags
from taxoforge.text import base_form_text, base_forms_of, normalise_text, normalise_texts

__all__ = ["NameTables", "TrigramIndex", "expand_csr", "hash_lookup", "word_ngrams", "text_key", "key_hash",
           "key_hashes", "word_hash", "word_hashes", "extend_phrase", "PHRASE_SEED", "string_buffers", "string_array", "padded_trigrams"]


def text_key(text: str, base_forms: bool = True) -> str:
    """The key a name or an answer is compared by (module docstring)."""
    return base_form_text(text) if base_forms else normalise_text(text)


def word_ngrams(words: list[str], n: int) -> list[str]:
    """The word n-grams of ``words`` (none when there are fewer than ``n`` words)."""
    return [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]


_xxh3 = xxhash.xxh3_64_intdigest
_MASK = (1 << 64) - 1
PHRASE_SEED = 0x9E3779B97F4A7C15  # the hash of the empty phrase


def word_hash(word: str) -> int:
    """The 64-bit hash of one word: XXH3-64 of its UTF-8 bytes (the same in every process
    and on every machine, unlike ``hash(str)``, so stored tables stay valid)."""
    return _xxh3(word.encode("utf-8"))


def word_hashes(words: Sequence[str]) -> np.ndarray:
    """:func:`word_hash` of every word, as ``uint64``."""
    return np.fromiter((_xxh3(w.encode("utf-8")) for w in words), np.uint64, count=len(words))


def _mix(h: int) -> int:
    """SplitMix64's finaliser (a bijection of 64-bit integers)."""
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _MASK
    return h ^ (h >> 31)


def extend_phrase(h: int, word_h: int) -> int:
    """The hash of a phrase one word longer: ``mix(h XOR hash(word))``."""
    return _mix(h ^ word_h)


def _mix_np(h: np.ndarray) -> np.ndarray:
    """:func:`_mix` over a ``uint64`` array (arithmetic modulo 2**64)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def key_hash(text: str) -> int:
    """The 64-bit hash a phrase (a name key, a word n-gram) is looked up by: the words'
    :func:`word_hash` chained from :data:`PHRASE_SEED` by :func:`extend_phrase`, so a
    phrase's hash extends word by word and the tables hash millions of phrases from the
    hashes of their words, vectorised."""
    h = PHRASE_SEED
    for w in text.split(" ") if text else ():
        h = _mix(h ^ _xxh3(w.encode("utf-8")))
    return h


def key_hashes(texts: Sequence[str]) -> np.ndarray:
    """:func:`key_hash` of every text, as ``uint64``."""
    return np.fromiter((key_hash(t) for t in texts), np.uint64, count=len(texts))


def _phrase_hashes(occ_hash: np.ndarray, starts: np.ndarray, lengths: np.ndarray | int) -> np.ndarray:
    """:func:`key_hash` of the phrases of ``lengths`` words starting at ``starts`` in a flat
    array of word hashes (vectorised over the phrases)."""
    lengths = np.broadcast_to(np.asarray(lengths, np.int64), starts.shape)
    h = np.full(len(starts), PHRASE_SEED, np.uint64)
    for k in range(int(lengths.max(initial=0))):
        live = np.flatnonzero(lengths > k)
        h[live] = _mix_np(h[live] ^ occ_hash[starts[live] + k])
    return h


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


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: faster than ``np.unique`` for integers here)."""
    if len(a) < 2:
        return np.sort(a)
    s = np.sort(a)
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def _distinct_pairs(keys: np.ndarray, ids: np.ndarray, n_ids: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(key, id)`` pairs (non-negative integers, ``id < n_ids``), sorted by key
    then id: one ``np.sort`` of the pairs packed into int64 (far faster than a lexsort)."""
    n_ids = max(1, int(n_ids))
    if len(keys) and int(keys.max()) >= (2**63 - 1) // n_ids:  # cannot pack: two-key sort
        o = np.lexsort((ids, keys))
        k, v = keys[o].astype(np.int64), ids[o].astype(np.int64)
        keep = np.concatenate(([True], (k[1:] != k[:-1]) | (v[1:] != v[:-1]))) if len(k) else k.astype(bool)
        return k[keep], v[keep]
    comp = np.sort(keys.astype(np.int64) * n_ids + ids.astype(np.int64))
    if len(comp):
        comp = comp[np.concatenate(([True], comp[1:] != comp[:-1]))]
    return comp // n_ids, comp % n_ids


def _ptr(sorted_keys: np.ndarray, n_keys: int) -> np.ndarray:
    """CSR row pointers of ``sorted_keys`` (integers in ``[0, n_keys)``)."""
    return np.concatenate(([0], np.cumsum(np.bincount(sorted_keys, minlength=n_keys)))).astype(np.int64)


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, CSR row pointers) of a sorted array."""
    if not len(sorted_keys):
        return sorted_keys[:0], np.zeros(1, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    return sorted_keys[starts], np.append(starts, len(sorted_keys)).astype(np.int64)


def _occurrence_postings(hashes: np.ndarray, ids: np.ndarray, n_ids: int):
    """(sorted keys, ptr, ids) of an inverted index keyed by hash, from one hash per
    occurrence."""
    if not len(hashes):
        return np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.int32)
    order = np.argsort(hashes, kind="stable")
    hs = hashes[order]
    new = np.concatenate(([True], hs[1:] != hs[:-1]))
    rank = np.empty(len(hashes), np.int64)
    rank[order] = np.cumsum(new) - 1
    k, v = _distinct_pairs(rank, ids, n_ids)
    used, ptr = _runs(k)
    return hs[new][used], ptr, v.astype(np.int32)


def _hashed_postings(hashes: np.ndarray, codes: np.ndarray, ids: np.ndarray, n_ids: int):
    """(sorted keys, ptr, ids) of an inverted index keyed by hash: ``hashes`` holds one hash
    per distinct string, ``codes`` the string of each occurrence, ``ids`` its name."""
    order = np.argsort(hashes, kind="stable")
    rank = np.empty(len(hashes), np.int64)
    rank[order] = np.arange(len(hashes))
    k, v = _distinct_pairs(rank[codes], ids, n_ids)
    used, ptr = _runs(k)
    return hashes[order][used], ptr, v.astype(np.int32)


def hash_lookup(post, key: int) -> np.ndarray:
    """The name ids of posting list ``key`` (a :func:`key_hash`; empty when absent)."""
    keys, ptr, vals = post
    i = int(np.searchsorted(keys, np.uint64(key)))
    if i < len(keys) and keys[i] == key:
        return vals[ptr[i]:ptr[i + 1]]
    return vals[:0]


def postings_of(post, hashes: np.ndarray) -> np.ndarray:
    """The name ids of every posting list among ``hashes`` (concatenated, with repeats)."""
    keys, ptr, vals = post
    if not len(keys) or not len(hashes):
        return vals[:0].astype(np.int64)
    i = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
    rows = i[keys[i] == hashes]
    return expand_csr(ptr, vals, rows)[0].astype(np.int64)


# ---------------------------------------------------------------------------- strings
def string_buffers(values) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, utf8)``: the int64 offsets (n + 1) and the uint8 UTF-8 bytes of a string
    column (a polars Series, a pyarrow array or a list of str)."""
    if isinstance(values, pl.Series):
        arr = values.cast(pl.String).to_arrow()
    elif isinstance(values, (pa.Array, pa.ChunkedArray)):
        arr = values
    else:
        arr = pa.array(list(values), pa.large_string())
    arr = arr.cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8)
    if arr.null_count:
        raise ValueError("string_buffers: null values")
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, np.int64, count=n + 1, offset=arr.offset * 8)
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return (offsets - offsets[0]).astype(np.int64), np.array(data[offsets[0]:offsets[-1]], np.uint8)


def string_array(offsets: np.ndarray, utf8: np.ndarray) -> pa.LargeStringArray:
    """The Arrow string array over ``(offsets, utf8)`` of :func:`string_buffers` (zero-copy:
    memory-mapped buffers stay on disk until read)."""
    n = len(offsets) - 1
    data = utf8 if len(utf8) else np.zeros(1, np.uint8)
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(np.ascontiguousarray(offsets, np.int64)),
                                            pa.py_buffer(np.ascontiguousarray(data)))


# ---------------------------------------------------------------------------- trigrams
def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def padded_trigrams(text: str) -> np.ndarray:
    """Codes of the code-point trigrams of ``" " + text + " "`` (one per position)."""
    c = _codepoints(f" {text} ")
    if len(c) < 3:
        return np.zeros(0, np.int64)
    return (c[:-2] << 42) | (c[1:-1] << 21) | c[2:]


def _codepoints_of(names: Sequence[str] | tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The code points of all ``names`` (a list, or ``(offsets, utf8)`` buffers) in one array."""
    if isinstance(names, tuple):
        utf8 = names[1]
        if not len(utf8) or int(utf8.max()) < 128:  # ASCII: the bytes are the code points
            return utf8.astype(np.int64)
        return _codepoints(bytes(utf8).decode("utf-8"))
    return _codepoints("".join(names))


def _trigram_postings(names: Sequence[str] | tuple[np.ndarray, np.ndarray], lengths: np.ndarray):
    """(keys, ptr, names) of the distinct padded trigrams of every name, vectorised: the
    names' code points in one buffer, a space each side of each name, one trigram per
    position; the trigrams are sorted packed with their name, as ranks of the code points
    that occur (a trigram's code orders like its three code points)."""
    n = len(lengths)
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32)
    cp = _codepoints_of(names)
    present = np.zeros(0x110000, bool)
    present[cp] = True
    present[32] = True  # the padding
    rank = np.cumsum(present, dtype=np.int64) - 1
    alphabet = np.flatnonzero(present)
    r_len = len(alphabet)
    cstart = np.cumsum(lengths) - lengths  # start of each name among the code points
    padded = np.full(total + 2 * n, rank[32], np.int64)
    at = np.arange(total) + np.repeat(2 * np.arange(n), lengths)  # padded position of each trigram's start
    padded[at + 1] = rank[cp]
    del cp, cstart
    tri = (padded[at] * r_len + padded[at + 1]) * r_len + padded[at + 2]  # name i has lengths[i] trigrams
    del padded, at
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
    if r_len ** 3 < (2**63 - 1) // max(1, n):
        k, v = _distinct_pairs(tri, owner, n)
    else:  # an alphabet too large to pack with the names: sort the trigram codes themselves
        k, v = _distinct_pairs(np.searchsorted(_sorted_unique(tri), tri), owner, n)
        k = _sorted_unique(tri)[k]
    del tri, owner
    used, ptr = _runs(k)
    c3 = alphabet[used % r_len]
    c2 = alphabet[(used // r_len) % r_len]
    c1 = alphabet[used // (r_len * r_len)]
    keys = (c1.astype(np.int64) << 42) | (c2.astype(np.int64) << 21) | c3.astype(np.int64)
    return keys, ptr, v.astype(np.int32)


class TrigramIndex:
    """Distinct code-point trigrams of every name (padded with a space each side) → names,
    and every name's length in code points. A name of ``b`` code points has ``b``
    trigrams."""

    def __init__(self, names: Sequence[str] | None = None, *, lengths: np.ndarray | None = None,
                 keys=None, ptr=None, name_ids=None) -> None:
        if keys is None:
            names = list(names or [])
            self.lengths = np.fromiter((len(x) for x in names), dtype=np.int64, count=len(names))
            self.keys, self.ptr, self.names = _trigram_postings(names, self.lengths)
        else:
            self.lengths, self.keys, self.ptr, self.names = lengths, keys, ptr, name_ids

    def _postings(self, query: str):
        """(distinct trigram rows present in the index, their occurrences in the padded
        query), rarest first, and the query's trigram count."""
        q = padded_trigrams(query)
        if not len(q) or not len(self.keys):
            return np.zeros(0, np.int64), np.zeros(0, np.int64), len(q)
        q = np.sort(q)
        first = np.concatenate(([True], q[1:] != q[:-1]))
        g = q[first]
        cnt = np.diff(np.append(np.flatnonzero(first), len(q)))
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
        return _sorted_unique(expand_csr(self.ptr, self.names, rows[:take])[0].astype(np.int64))

    def seeds(self, query: str, budget: int = 1000, n: int = 16) -> np.ndarray:
        """Up to ``n`` names sharing the most of the query's rarer trigrams (posting lists
        read rarest first, at most ``budget`` entries): good candidates, not a complete set."""
        rows, _, _ = self._postings(query)
        if not len(rows):
            return np.zeros(0, np.int64)
        lens = self.ptr[rows + 1] - self.ptr[rows]
        take = max(1, int(np.searchsorted(np.cumsum(lens), budget, side="right")))
        ids = np.sort(expand_csr(self.ptr, self.names, rows[:take])[0].astype(np.int64))
        if not len(ids):
            return ids
        first = np.concatenate(([True], ids[1:] != ids[:-1]))
        counts = np.diff(np.append(np.flatnonzero(first), len(ids)))
        ids = ids[first]
        if len(ids) > n:
            ids = ids[np.argpartition(-counts, n)[:n]]
        return ids


# ---------------------------------------------------------------------------- build
def _encode(values) -> tuple[np.ndarray, pa.Array]:
    """(code of each value, distinct values): a dictionary encoding (Arrow's hash kernel)."""
    arr = values.to_arrow() if isinstance(values, pl.Series) else values
    enc = pc.dictionary_encode(arr.cast(pa.large_string()))
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.unify_dictionaries().combine_chunks() if enc.num_chunks > 1 else enc.chunk(0)
    return np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64), enc.dictionary


def _node_indexes(taxonomy, node_ids: pl.Series) -> np.ndarray:
    """Index of each node id in ``taxonomy.ids`` (sorted), -1 for ids not in the tree."""
    ids = pl.Series(taxonomy.ids.tolist(), dtype=pl.String)
    node_ids = node_ids.cast(pl.String)
    if not len(node_ids) or not len(ids):
        return np.full(len(node_ids), -1, np.int64)
    if not ids.is_sorted():  # pragma: no cover - Taxonomy sorts its ids
        pos = pl.DataFrame({"node_id": node_ids}).join(
            pl.DataFrame({"node_id": ids, "i": np.arange(len(ids))}), on="node_id", how="left",
            maintain_order="left")["i"].fill_null(-1)
        return pos.to_numpy().astype(np.int64)
    pos = np.minimum(ids.search_sorted(node_ids).to_numpy().astype(np.int64), len(ids) - 1)
    found = (ids.gather(pos) == node_ids).fill_null(False).to_numpy()
    return np.where(found, pos, -1)


def _named_rows(taxonomy, config: MappingConfig) -> tuple[pa.ChunkedArray, np.ndarray, int]:
    """(name, node index) of every name of every node (kinds in ``skip_name_kinds`` left
    out) and of every node's display label."""
    names = taxonomy.names_table
    if "kind" in names.columns and config.skip_name_kinds:
        names = names.filter(~pl.col("kind").is_in(list(config.skip_name_kinds)) | pl.col("kind").is_null())
    names = names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String)).drop_nulls()
    n_nodes = len(taxonomy.ids)
    idx = _node_indexes(taxonomy, names["node_id"])
    keep = idx >= 0
    parts, where = [names["name"].filter(pl.Series(keep)).to_arrow()], [idx[keep]]
    labels = getattr(taxonomy, "_labels", None)
    if labels:  # every node's display label is a name too (where it is not one already)
        lab = pl.Series(labels, dtype=pl.String)
        has = lab.is_not_null().to_numpy()
        if len(where[0]):
            same = pc.fill_null(pc.equal(parts[0].cast(pa.large_string()),
                                         lab.gather(where[0]).to_arrow().cast(pa.large_string())), False)
            has[where[0][np.asarray(same.to_numpy(zero_copy_only=False), bool)]] = False
        parts.append(lab.filter(pl.Series(has)).to_arrow())
        where.append(np.flatnonzero(has))
    text = pa.chunked_array([p.cast(pa.large_string()) for p in parts], pa.large_string())
    return text, np.concatenate(where).astype(np.int64), n_nodes


class NameTables:
    """The names of a taxonomy and the lookups Alg. 1 needs (module docstring).

    ``NameTables(taxonomy, config)`` builds them (:meth:`build`): it reads
    ``taxonomy.names_table`` (``node_id``, ``name``, optional ``kind``; kinds in
    ``config.skip_name_kinds`` are identifiers, not names) plus every node's display label.
    :meth:`from_arrays` rebuilds them from :meth:`arrays` and :meth:`meta` (the store).
    """

    #: the arrays that make up the tables (what the store writes)
    ARRAYS = ("key_offsets", "key_utf8", "name_ptr", "name_node", "node_ptr", "node_name", "name_len",
              "name_non_naming", "key_hash_sorted", "key_hash_name", "first_word_hashes",
              "word_keys", "word_ptr", "word_ids", "ngram_keys", "ngram_ptr", "ngram_ids",
              "surface_name", "surface_offsets", "surface_utf8", "surface_ptr", "surface_node_ids",
              "trigram_keys", "trigram_ptr", "trigram_names")

    def __init__(self, taxonomy=None, config: MappingConfig | None = None, *,
                 progress: Callable[[str], None] | None = None) -> None:
        if taxonomy is not None:
            arrays, meta = self.build(taxonomy, config or MappingConfig(), progress=progress)
            self._attach(arrays, meta)

    # ------------------------------------------------------------------ (de)serialisation
    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], meta: dict) -> "NameTables":
        """Tables over stored arrays (e.g. memory-mapped ``.npy`` files); no rebuild."""
        t = cls()
        t._attach(arrays, meta)
        return t

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in self.ARRAYS}

    def meta(self) -> dict:
        return {"n_nodes": self.n_nodes, "n_names": len(self), "max_words": self.max_words}

    def _attach(self, arrays: dict[str, np.ndarray], meta: dict) -> None:
        missing = [k for k in self.ARRAYS if k not in arrays]
        if missing:
            raise ValueError(f"name tables: missing arrays {missing}")
        for k in self.ARRAYS:
            setattr(self, k, arrays[k])
        self.n_nodes = int(meta["n_nodes"])
        self.max_words = int(meta["max_words"])
        self._strings = string_array(self.key_offsets, self.key_utf8)
        self.word_post = (self.word_keys, self.word_ptr, self.word_ids)
        self.ngram_post = (self.ngram_keys, self.ngram_ptr, self.ngram_ids)

    # ------------------------------------------------------------------ build
    @staticmethod
    def build(taxonomy, config: MappingConfig, progress: Callable[[str], None] | None = None):
        """``(arrays, meta)`` of the tables of ``taxonomy`` (module docstring). ``progress``
        is called with the name of each stage as it starts.

        Every string is encoded once (distinct raw names, normal forms, keys, words,
        n-grams) and the work per distinct string is done once; relations between strings
        and nodes are integer arrays, deduplicated and ordered by one ``np.sort`` of
        packed pairs."""
        step = progress or (lambda _stage: None)
        step("names")
        text, row_node, n_nodes = _named_rows(taxonomy, config)
        raw_code, raw = _encode(text)
        del text
        step("normal forms")
        norm = normalise_texts(pl.Series(raw))
        step("base forms")
        key = base_forms_of(norm) if config.base_forms else norm
        key_code, key_dict = _encode(key)  # per distinct raw name
        norm_code, norm_dict = _encode(norm)
        norm_dict = pl.Series(norm_dict)
        # keys in code-point order (UTF-8 byte order), the empty key left out
        key_dict = pl.Series(key_dict)
        order = key_dict.arg_sort().to_numpy()
        key_rank = np.empty(len(key_dict), np.int64)
        key_rank[order] = np.arange(len(key_dict))
        keys = key_dict.gather(order)
        if len(keys) and keys[0] == "":
            keys = keys[1:]
            key_rank -= 1
        n_names = len(keys)
        row_key = key_rank[key_code[raw_code]]
        keep = row_key >= 0
        a: dict[str, np.ndarray] = {}
        name_of, node_of = _distinct_pairs(row_key[keep], row_node[keep], n_nodes)
        a["name_ptr"], a["name_node"] = _ptr(name_of, n_names), node_of.astype(np.int32)
        node_of, name_of2 = _distinct_pairs(node_of, name_of, n_names)
        a["node_ptr"], a["node_name"] = _ptr(node_of, n_nodes), name_of2.astype(np.int32)
        del name_of, node_of, name_of2
        a["key_offsets"], a["key_utf8"] = string_buffers(keys)
        a["name_len"] = keys.str.len_chars().to_numpy().astype(np.int64)
        # keys that base forms made shared by different normal forms ("brakes" and "brake"):
        # which nodes each normal form names, so that the form the answer uses wins
        raw_key, raw_norm = key_rank[key_code], norm_code
        kn_key, kn_norm = _distinct_pairs(raw_key[raw_key >= 0], raw_norm[raw_key >= 0], len(norm_dict))
        shared = kn_key[np.concatenate(([False], kn_key[1:] == kn_key[:-1])) |
                        np.concatenate((kn_key[:-1] == kn_key[1:], [False]))] if len(kn_key) else kn_key
        shared = _sorted_unique(shared)
        rows = np.flatnonzero(keep & np.isin(row_key, shared)) if len(shared) else np.zeros(0, np.int64)
        surf = pl.DataFrame({"j": row_key[rows], "norm": norm_code[raw_code[rows]], "idx": row_node[rows]}).unique()
        surf = surf.sort("j", "norm", "idx")
        groups = surf.group_by("j", "norm", maintain_order=True).agg(pl.col("idx"))
        a["surface_name"] = groups["j"].to_numpy().astype(np.int32)
        a["surface_offsets"], a["surface_utf8"] = string_buffers(norm_dict.gather(groups["norm"]))
        a["surface_ptr"] = np.concatenate(([0], np.cumsum(groups["idx"].list.len().to_numpy()))).astype(np.int64)
        a["surface_node_ids"] = surf["idx"].to_numpy().astype(np.int32)
        del raw_code, row_key, row_node, keep, key_code, norm_code, surf, groups, norm, norm_dict, key, key_dict, raw

        step("postings")
        # every word of every key: its code, its name, its position
        words = keys.str.split(" ")
        n_words = words.list.len().to_numpy().astype(np.int64)
        word_code, word_dict = _encode(words.explode())
        del words
        name_start = np.cumsum(n_words) - n_words
        name_of = np.repeat(np.arange(n_names, dtype=np.int64), n_words)
        pos = np.arange(len(word_code)) - name_start[name_of]
        word_h = word_hashes(word_dict.to_pylist())
        nn = non_naming_flags(pl.Series(word_dict), base_forms=config.base_forms)[word_code]
        occ_h = word_h[word_code]
        a["key_hash_sorted"], a["key_hash_name"] = _sorted_hash_table(_phrase_hashes(occ_h, name_start, n_words))
        a["name_non_naming"] = np.bincount(name_of[~nn], minlength=n_names) == 0
        a["first_word_hashes"] = _sorted_unique(occ_h[name_start])
        a["word_keys"], a["word_ptr"], a["word_ids"] = _hashed_postings(word_h, word_code[~nn], name_of[~nn], n_names)
        max_words = int(n_words.max(initial=0))
        del word_code, word_dict, word_h
        step("n-grams")
        g_hash, g_name = [], []
        for n in config.ngram_sizes:
            if n > max_words:
                continue
            at = np.flatnonzero(pos + n <= n_words[name_of])  # n-grams inside their name
            all_nn = nn[at].copy()
            for k in range(1, n):
                all_nn &= nn[at + k]
            at = at[~all_nn]
            g_hash.append(_phrase_hashes(occ_h, at, n))
            g_name.append(name_of[at])
        a["ngram_keys"], a["ngram_ptr"], a["ngram_ids"] = _occurrence_postings(
            np.concatenate(g_hash) if g_hash else np.zeros(0, np.uint64),
            np.concatenate(g_name) if g_name else np.zeros(0, np.int64), n_names)
        del g_hash, g_name, name_of, pos, nn, occ_h
        step("trigrams")
        a["trigram_keys"], a["trigram_ptr"], a["trigram_names"] = _trigram_postings((a["key_offsets"], a["key_utf8"]),
                                                                                           a["name_len"])
        return a, {"n_nodes": n_nodes, "n_names": n_names, "max_words": max_words}

    # ------------------------------------------------------------------ names
    def __len__(self) -> int:
        return len(self.key_offsets) - 1

    def name(self, j: int) -> str:
        """Name key ``j``."""
        o = self.key_offsets
        return bytes(self.key_utf8[o[j]:o[j + 1]]).decode("utf-8")

    def take(self, name_ids: np.ndarray) -> list[str]:
        """The name keys of ``name_ids``."""
        if len(name_ids) <= 8:
            return [self.name(int(j)) for j in name_ids]
        return self._strings.take(np.asarray(name_ids, np.int64)).to_pylist()

    @cached_property
    def names(self) -> list[str]:
        """Every name key, as a list (materialised on first use)."""
        return self._strings.to_pylist()

    @property
    def strings(self) -> pa.LargeStringArray:
        """Every name key, as an Arrow string array over the stored buffers."""
        return self._strings

    @cached_property
    def first_words(self) -> frozenset[str]:
        """The first word of every name (a name can only start there)."""
        return frozenset(x.split(" ", 1)[0] for x in self.names)

    @cached_property
    def surface_nodes(self) -> dict[int, dict[str, np.ndarray]]:
        """Shared keys → {normal form → nodes having a name of that form}."""
        out: dict[int, dict[str, np.ndarray]] = {}
        forms = string_array(self.surface_offsets, self.surface_utf8).to_pylist()
        p = self.surface_ptr
        for i, (j, norm) in enumerate(zip(self.surface_name.tolist(), forms)):
            out.setdefault(int(j), {})[norm] = np.asarray(self.surface_node_ids[p[i]:p[i + 1]], np.int64)
        return out

    @cached_property
    def trigrams(self) -> TrigramIndex:
        """The character-trigram index."""
        return TrigramIndex(lengths=self.name_len, keys=self.trigram_keys, ptr=self.trigram_ptr,
                            name_ids=self.trigram_names)

    # ------------------------------------------------------------------ lookups
    def lookup(self, key: str) -> int | None:
        """Index of the name key ``key``, or None."""
        j = int(self.lookup_many([key])[0])
        return None if j < 0 else j

    def lookup_many(self, keys: Sequence[str]) -> np.ndarray:
        """Index of each name key in ``keys`` (-1 where there is none)."""
        return self.lookup_hashed(key_hashes(keys), keys.__getitem__)

    def lookup_hashed(self, hashes: np.ndarray, key_of: Callable[[int], str]) -> np.ndarray:
        """Index of the name key with each :func:`key_hash` of ``hashes`` (-1 where there is
        none): one binary search for all, and on a hit the key (``key_of(position)``)
        compared with the stored name, so a hash collision never matches."""
        out = np.full(len(hashes), -1, np.int64)
        hs = self.key_hash_sorted
        if not len(hashes) or not len(hs):
            return out
        h = np.asarray(hashes, np.uint64)
        i = np.searchsorted(hs, h)
        hit = np.flatnonzero((i < len(hs)) & (hs[np.minimum(i, len(hs) - 1)] == h))
        o, data = self.key_offsets, self.key_utf8
        for r in hit.tolist():
            want = key_of(r).encode("utf-8")
            k = int(i[r])
            while k < len(hs) and hs[k] == h[r]:  # equal hashes: compare the keys themselves
                j = int(self.key_hash_name[k])
                if o[j + 1] - o[j] == len(want) and bytes(data[o[j]:o[j + 1]]) == want:
                    out[r] = j
                    break
                k += 1
        return out

    def starts_a_name(self, words: Sequence[str]) -> np.ndarray:
        """Per word: is it the first word of some name?"""
        f = self.first_word_hashes
        if not len(words) or not len(f):
            return np.zeros(len(words), bool)
        h = word_hashes(words)
        i = np.minimum(np.searchsorted(f, h), len(f) - 1)
        return f[i] == h

    def nodes_of_name(self, j: int, surface: str | None = None) -> np.ndarray:
        """Node indexes having name ``j``; with ``surface`` (the normal form the text used),
        only those having a name of that very form, where some have and others not."""
        if surface is not None and len(self.surface_name):
            forms = self.surface_nodes.get(j)
            if forms is not None:
                got = forms.get(surface)
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
        words = sorted(set(words))
        return _sorted_unique(postings_of(self.word_post, word_hashes(words)))

    def names_with_ngrams(self, grams) -> np.ndarray:
        """Name ids having at least one of the word n-grams ``grams``."""
        grams = sorted(set(grams))
        return _sorted_unique(postings_of(self.ngram_post, key_hashes(grams)))


def _sorted_hash_table(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, the name of each): an exact-lookup table."""
    order = np.argsort(h, kind="stable")
    return h[order], order.astype(np.int32)
