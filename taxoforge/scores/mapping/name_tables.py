"""The name tables of one taxonomy: every table a flat numpy array, built once and stored.

* ``names`` — the distinct name keys (:func:`~taxoforge.scores.mapping.keys.text_key`) in
  code-point order, stored as one UTF-8 buffer and its offsets
  (:mod:`~taxoforge.scores.mapping.strings`; :meth:`NameTables.name` / :meth:`NameTables.take`);
  ``name_ptr``/``name_node`` (CSR: name → nodes) and ``node_ptr``/``node_name`` (CSR: node →
  names); ``name_non_naming`` marks keys made only of words that name nothing on their own
  (:mod:`taxoforge.scores.mapping.vocabulary`); ``name_len`` counts code points.
* Exact key lookup — the sorted 64-bit hashes of the keys
  (:func:`~taxoforge.scores.mapping.keys.key_hash`), each hit verified against the key itself.
* Posting lists (:mod:`~taxoforge.scores.mapping.postings`, keyed by sorted hashes): word
  n-gram → names (the n-gram stage) and content word → names (the candidates of the
  prefilter); the hashes of every name's first word (a name can only start there).
* :class:`~taxoforge.scores.mapping.trigrams.TrigramIndex` — character trigram → names, for
  the exact candidate bound of :mod:`taxoforge.scores.mapping.candidates`.

**Build** (:meth:`NameTables.build`, vectorised: polars for the string work, one Python
call per *distinct* name or word where a Python rule decides — a normal form outside
ASCII, a word's base form, whether a word names anything). **Store**
(:mod:`taxoforge.scores.mapping.store`): :meth:`NameTables.arrays` are written as ``.npy``
files and read back memory-mapped (:meth:`NameTables.from_arrays`): loading costs no
rebuild and only the pages a lookup touches are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

import numpy as np
import polars as pl
import pyarrow as pa

from taxoforge.arrays import sorted_unique
from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.mapping.keys import key_hashes, phrase_hashes, word_hashes
from taxoforge.scores.mapping.postings import (csr_pointers, distinct_pairs, expand_csr, hashed_postings,
                                               occurrence_postings, postings_of, sorted_hash_table)
from taxoforge.scores.mapping.strings import string_array, string_buffers, take_strings
from taxoforge.scores.mapping.trigrams import TrigramIndex, trigram_postings
from taxoforge.scores.mapping.vocabulary import non_naming_flags
from taxoforge.text import base_forms_of, normalise_texts
from taxoforge.trees.threads import cpus, run

__all__ = ["NameTables", "label_series"]


def _encode(values) -> tuple[np.ndarray, pa.Array]:
    """(code of each value, distinct values): a dictionary encoding (Arrow's hash kernel)."""
    import pyarrow.compute as pc  # building an index only: a call that loads one never imports it (0.1 s)

    arr = values.to_arrow() if isinstance(values, pl.Series) else values
    enc = pc.dictionary_encode(arr.cast(pa.large_string()))
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.unify_dictionaries().combine_chunks() if enc.num_chunks > 1 else enc.chunk(0)
    return np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64), enc.dictionary


def _by_parts(per_text: Callable[[pl.Series], pl.Series], texts: pl.Series) -> pl.Series:
    """``per_text(texts)`` for a function of each text alone, computed on one slice of the
    texts per core at once (polars' string kernels release the GIL) and put back together in
    order: the same Series."""
    part = -(-len(texts) // cpus())
    if len(texts) < 2 * _MIN_PART or part < _MIN_PART:
        return per_text(texts)
    return pl.concat(run(per_text, [(texts.slice(i, part),) for i in range(0, len(texts), part)]), rechunk=True)


#: the fewest texts worth a thread of their own
_MIN_PART = 50_000


def _node_indexes(taxonomy, node_ids: pl.Series) -> np.ndarray:
    """Index of each node id in ``taxonomy.ids`` (sorted), -1 for ids not in the tree."""
    ids = taxonomy.id_series
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


def label_series(taxonomy) -> pl.Series | None:
    """A tree's display labels in id order as a String Series — a stored tree's own Series, a
    tree made from tables its list — or None for a tree without labels.

    Parameters
    ----------
    taxonomy : Taxonomy or TreeOfTables
        The tree.

    Returns
    -------
    polars.Series or None
    """
    lab = getattr(taxonomy, "_label_series", None) if "_labels" not in vars(taxonomy) else None
    if lab is None:
        labels = getattr(taxonomy, "_labels", None)
        lab = pl.Series(labels, dtype=pl.String) if labels else None
    return lab.cast(pl.String) if lab is not None else None


def _named_rows(taxonomy, config: MappingConfig) -> tuple[pa.ChunkedArray, np.ndarray, int]:
    """(name, node index) of every name of every node (kinds in ``skip_name_kinds`` left
    out) and of every node's display label."""
    import pyarrow.compute as pc  # building an index only: a call that loads one never imports it (0.1 s)

    names = taxonomy.names_table
    if "kind" in names.columns and config.skip_name_kinds:
        names = names.filter(~pl.col("kind").is_in(list(config.skip_name_kinds)) | pl.col("kind").is_null())
    names = names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String)).drop_nulls()
    n_nodes = len(taxonomy)
    idx = _node_indexes(taxonomy, names["node_id"])
    keep = idx >= 0
    parts, where = [names["name"].filter(pl.Series(keep)).to_arrow()], [idx[keep]]
    lab = label_series(taxonomy)
    if lab is not None and len(lab):  # every node's display label is a name too (where it is not one already)
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

    Parameters
    ----------
    taxonomy : optional
        The taxonomy.
    config : MappingConfig, optional
        The mapping configuration.
    progress : Callable[[str], None], optional
        Whether to show a progress bar.
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
        """Tables over stored arrays (e.g. memory-mapped ``.npy`` files); no rebuild.

        Parameters
        ----------
        arrays : dict[str, numpy.ndarray]
            The stored arrays (:attr:`arrays`).
        meta : dict
            The stored sizes (:attr:`meta`).
        """
        t = cls()
        t._attach(arrays, meta)
        return t

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays that make the tables, by name (what a stored index writes).

        Returns
        -------
        dict
            Array name → numpy array.
        """
        return {k: getattr(self, k) for k in self.ARRAYS}

    def meta(self) -> dict:
        """The sizes stored beside the arrays: nodes, names and the longest name in words.

        Returns
        -------
        dict
            ``n_nodes``, ``n_names``, ``max_words``.
        """
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
        packed pairs.

        Parameters
        ----------
        taxonomy : object
            The taxonomy.
        config : MappingConfig
            The mapping configuration.
        progress : Callable[[str], None], optional
            Whether to show a progress bar.

        Returns
        -------
        object
            ``(arrays, meta)`` of the tables of ``taxonomy`` (module docstring).
        """
        step = progress or (lambda _stage: None)
        step("names")
        text, row_node, n_nodes = _named_rows(taxonomy, config)
        raw_code, raw = _encode(text)
        del text
        step("normal forms")
        norm = _by_parts(normalise_texts, pl.Series(raw))
        step("base forms")
        key = _by_parts(base_forms_of, norm) if config.base_forms else norm
        # per distinct raw name, both at once (Arrow's hash kernel releases the GIL)
        (key_code, key_dict), (norm_code, norm_dict) = run(_encode, [(key,), (norm,)])
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
        a: dict[str, np.ndarray] = {}
        a["key_offsets"], a["key_utf8"] = string_buffers(keys)
        a["name_len"] = keys.str.len_chars().to_numpy().astype(np.int64)
        del norm, key, key_dict, raw, order
        with ThreadPoolExecutor(1, thread_name_prefix="taxoforge-trigrams") as background:
            # the trigram postings need the keys only: built on a thread of their own meanwhile
            # (numpy's sorts, gathers and arithmetic release the GIL)
            trigrams = background.submit(trigram_postings, (a["key_offsets"], a["key_utf8"]), a["name_len"])
            max_words = NameTables._word_tables(a, keys, key_rank, key_code, raw_code, norm_code, norm_dict, row_node,
                                                n_nodes, config, step)
            step("trigrams")
            a["trigram_keys"], a["trigram_ptr"], a["trigram_names"] = trigrams.result()
        return a, {"n_nodes": n_nodes, "n_names": n_names, "max_words": max_words}

    @staticmethod
    def _word_tables(a: dict, keys: pl.Series, key_rank, key_code, raw_code, norm_code, norm_dict, row_node,
                     n_nodes: int, config: MappingConfig, step) -> int:
        """The tables of :meth:`build` other than the trigrams, into ``a``: name ↔ node CSR,
        surface forms, words, exact-key hashes and n-gram postings; the longest name in words."""
        n_names = len(keys)
        row_key = key_rank[key_code[raw_code]]
        keep = row_key >= 0
        name_of, node_of = distinct_pairs(row_key[keep], row_node[keep], n_nodes)
        a["name_ptr"], a["name_node"] = csr_pointers(name_of, n_names), node_of.astype(np.int32)
        node_of, name_of2 = distinct_pairs(node_of, name_of, n_names)
        a["node_ptr"], a["node_name"] = csr_pointers(node_of, n_nodes), name_of2.astype(np.int32)
        del name_of, node_of, name_of2
        # keys that base forms made shared by different normal forms ("brakes" and "brake"):
        # which nodes each normal form names, so that the form the answer uses wins
        raw_key, raw_norm = key_rank[key_code], norm_code
        kn_key, kn_norm = distinct_pairs(raw_key[raw_key >= 0], raw_norm[raw_key >= 0], len(norm_dict))
        shared = kn_key[np.concatenate(([False], kn_key[1:] == kn_key[:-1])) |
                        np.concatenate((kn_key[:-1] == kn_key[1:], [False]))] if len(kn_key) else kn_key
        shared = sorted_unique(shared)
        rows = np.flatnonzero(keep & np.isin(row_key, shared)) if len(shared) else np.zeros(0, np.int64)
        surf = pl.DataFrame({"j": row_key[rows], "norm": norm_code[raw_code[rows]], "idx": row_node[rows]}).unique()
        surf = surf.sort("j", "norm", "idx")
        groups = surf.group_by("j", "norm", maintain_order=True).agg(pl.col("idx"))
        a["surface_name"] = groups["j"].to_numpy().astype(np.int32)
        a["surface_offsets"], a["surface_utf8"] = string_buffers(norm_dict.gather(groups["norm"]))
        a["surface_ptr"] = np.concatenate(([0], np.cumsum(groups["idx"].list.len().to_numpy()))).astype(np.int64)
        a["surface_node_ids"] = surf["idx"].to_numpy().astype(np.int32)
        del raw_code, row_key, row_node, keep, key_code, norm_code, surf, groups, norm_dict

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
        a["key_hash_sorted"], a["key_hash_name"] = sorted_hash_table(phrase_hashes(occ_h, name_start, n_words))
        a["name_non_naming"] = np.bincount(name_of[~nn], minlength=n_names) == 0
        a["first_word_hashes"] = sorted_unique(occ_h[name_start])
        a["word_keys"], a["word_ptr"], a["word_ids"] = hashed_postings(word_h, word_code[~nn], name_of[~nn], n_names)
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
            g_hash.append(phrase_hashes(occ_h, at, n))
            g_name.append(name_of[at])
        a["ngram_keys"], a["ngram_ptr"], a["ngram_ids"] = occurrence_postings(
            np.concatenate(g_hash) if g_hash else np.zeros(0, np.uint64),
            np.concatenate(g_name) if g_name else np.zeros(0, np.int64), n_names)
        return max_words

    # ------------------------------------------------------------------ names
    def __len__(self) -> int:
        return len(self.key_offsets) - 1

    def name(self, j: int) -> str:
        """Name key ``j``.

        Parameters
        ----------
        j : int
            A name index.

        Returns
        -------
        str
            Name key ``j``.
        """
        o = self.key_offsets
        return bytes(self.key_utf8[o[j]:o[j + 1]]).decode("utf-8")

    def take(self, name_ids: np.ndarray) -> list[str]:
        """The name keys of ``name_ids``.

        Parameters
        ----------
        name_ids : numpy.ndarray
            Name indexes.

        Returns
        -------
        list[str]
            The name keys of ``name_ids``.
        """
        if len(name_ids) <= 8:
            return [self.name(int(j)) for j in name_ids]
        return take_strings(self._strings, name_ids)

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
        """Index of the name key ``key``, or None.

        Parameters
        ----------
        key : str
            A name key (:func:`taxoforge.scores.mapping.keys.text_key`).

        Returns
        -------
        int or None
            The key's index, or None when no name has it.
        """
        j = int(self.lookup_many([key])[0])
        return None if j < 0 else j

    def lookup_many(self, keys: Sequence[str]) -> np.ndarray:
        """Index of each name key in ``keys`` (-1 where there is none).

        Parameters
        ----------
        keys : Sequence[str]
            Name keys.

        Returns
        -------
        numpy.ndarray
            The index of each key, -1 where no name has it.
        """
        return self.lookup_hashed(key_hashes(keys), keys.__getitem__)

    def lookup_hashed(self, hashes: np.ndarray, key_of: Callable[[int], str]) -> np.ndarray:
        """Index of the name key with each :func:`key_hash` of ``hashes`` (-1 where there is
        none): one binary search for all, and on a hit the key (``key_of(position)``)
        compared with the stored name, so a hash collision never matches.

        Parameters
        ----------
        hashes : numpy.ndarray
            Key hashes (:func:`taxoforge.scores.mapping.keys.key_hash`).
        key_of : Callable[[int], str]
            ``key_of(position)``: the key text behind the hash at that position, to confirm
            a hit.

        Returns
        -------
        numpy.ndarray
            The index of each key, -1 where no name has it.
        """
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
        """Per word: is it the first word of some name?

        Parameters
        ----------
        words : Sequence[str]
            The words.

        Returns
        -------
        numpy.ndarray
            Per word: is it the first word of some name?
        """
        f = self.first_word_hashes
        if not len(words) or not len(f):
            return np.zeros(len(words), bool)
        h = word_hashes(words)
        i = np.minimum(np.searchsorted(f, h), len(f) - 1)
        return f[i] == h

    def nodes_of_name(self, j: int, surface: str | None = None) -> np.ndarray:
        """Node indexes having name ``j``; with ``surface`` (the normal form the text used),
        only those having a name of that very form, where some have and others not.

        Parameters
        ----------
        j : int
            A name index.
        surface : str, optional
            The normal form the text used, if any.

        Returns
        -------
        numpy.ndarray
            Node indexes having name ``j``; with ``surface`` (the normal form the text
            used), only those having a name of that very form, where some have and others
            not.
        """
        if surface is not None and len(self.surface_name):
            forms = self.surface_nodes.get(j)
            if forms is not None:
                got = forms.get(surface)
                if got is not None:
                    return got
        return self.name_node[self.name_ptr[j]:self.name_ptr[j + 1]]

    def names_of_node(self, v: int) -> np.ndarray:
        """Name indexes of node ``v``.

        Parameters
        ----------
        v : int
            A node index.

        Returns
        -------
        numpy.ndarray
            Name indexes of node ``v``.
        """
        return self.node_name[self.node_ptr[v]:self.node_ptr[v + 1]]

    def nodes_of_names(self, name_ids: np.ndarray) -> np.ndarray:
        """Node indexes of all ``name_ids`` (with repeats).

        Parameters
        ----------
        name_ids : numpy.ndarray
            Name indexes.

        Returns
        -------
        numpy.ndarray
            Node indexes of all ``name_ids`` (with repeats).
        """
        return expand_csr(self.name_ptr, self.name_node, name_ids)[0]

    def names_sharing_words(self, words) -> np.ndarray:
        """Name ids sharing at least one of ``words`` (keys' words).

        Parameters
        ----------
        words : object
            The words.

        Returns
        -------
        numpy.ndarray
            Name ids sharing at least one of ``words`` (keys' words).
        """
        words = sorted(set(words))
        return sorted_unique(postings_of(self.word_post, word_hashes(words)))

    def names_with_ngrams(self, grams) -> np.ndarray:
        """Name ids having at least one of the word n-grams ``grams``.

        Parameters
        ----------
        grams : object
            Word n-grams, as key strings.

        Returns
        -------
        numpy.ndarray
            Name ids having at least one of the word n-grams ``grams``.
        """
        grams = sorted(set(grams))
        return sorted_unique(postings_of(self.ngram_post, key_hashes(grams)))


