"""Posting lists and other integer relations of the name tables, as flat CSR arrays.

A relation between integers (name → nodes, word → names …) is stored as compressed sparse
rows: the values sorted by row and one pointer per row (:func:`csr_pointers`). Relations are
deduplicated and ordered by one ``np.sort`` of the pairs packed into ``int64``
(:func:`distinct_pairs`), far faster than a lexsort. Posting lists keyed by 64-bit hashes
(:mod:`taxoforge.scores.mapping.keys`) hold the sorted distinct hashes beside the CSR
arrays (:func:`occurrence_postings`, :func:`hashed_postings`) and are read by binary
search (:func:`hash_lookup`, :func:`postings_of`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["expand_csr", "distinct_pairs", "csr_pointers", "runs", "occurrence_postings",
           "hashed_postings", "hash_lookup", "postings_of", "sorted_hash_table"]


def expand_csr(ptr: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All entries of CSR ``rows``: (values, row position of each value).

    Parameters
    ----------
    ptr : numpy.ndarray
        CSR row pointers.
    flat : numpy.ndarray
        The CSR values.
    rows : numpy.ndarray
        The rows to expand.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        All entries of CSR ``rows``: (values, row position of each value).
    """
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(rows)), lens)
    offs = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    return flat[starts[owner] + offs], owner


def distinct_pairs(keys: np.ndarray, ids: np.ndarray, n_ids: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(key, id)`` pairs (non-negative integers, ``id < n_ids``), sorted by key
    then id: one ``np.sort`` of the pairs packed into int64 (far faster than a lexsort).

    Parameters
    ----------
    keys : numpy.ndarray
        Non-negative integer keys.
    ids : numpy.ndarray
        Non-negative integer ids, one per key.
    n_ids : int
        An upper bound of the ids.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        The distinct ``(key, id)`` pairs (non-negative integers, ``id < n_ids``), sorted
        by key then id: one ``np.sort`` of the pairs packed into int64 (far faster than
        a lexsort).
    """
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


def csr_pointers(sorted_keys: np.ndarray, n_keys: int) -> np.ndarray:
    """CSR row pointers of ``sorted_keys`` (integers in ``[0, n_keys)``).

    Parameters
    ----------
    sorted_keys : numpy.ndarray
        Row keys, sorted.
    n_keys : int
        The number of rows.

    Returns
    -------
    numpy.ndarray
        CSR row pointers of ``sorted_keys`` (integers in ``[0, n_keys)``).
    """
    return np.concatenate(([0], np.cumsum(np.bincount(sorted_keys, minlength=n_keys)))).astype(np.int64)


def runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, CSR row pointers) of a sorted array.

    Parameters
    ----------
    sorted_keys : numpy.ndarray
        A sorted array.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        (distinct values, CSR row pointers) of a sorted array.
    """
    if not len(sorted_keys):
        return sorted_keys[:0], np.zeros(1, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    return sorted_keys[starts], np.append(starts, len(sorted_keys)).astype(np.int64)


def occurrence_postings(hashes: np.ndarray, ids: np.ndarray, n_ids: int):
    """(sorted keys, ptr, ids) of an inverted index keyed by hash, from one hash per
    occurrence.

    Parameters
    ----------
    hashes : numpy.ndarray
        One hash per occurrence.
    ids : numpy.ndarray
        The name of each occurrence.
    n_ids : int
        The number of names.

    Returns
    -------
    object
        (sorted keys, ptr, ids) of an inverted index keyed by hash, from one hash per
        occurrence.
    """
    if not len(hashes):
        return np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.int32)
    order = np.argsort(hashes, kind="stable")
    hs = hashes[order]
    new = np.concatenate(([True], hs[1:] != hs[:-1]))
    rank = np.empty(len(hashes), np.int64)
    rank[order] = np.cumsum(new) - 1
    k, v = distinct_pairs(rank, ids, n_ids)
    used, ptr = runs(k)
    return hs[new][used], ptr, v.astype(np.int32)


def hashed_postings(hashes: np.ndarray, codes: np.ndarray, ids: np.ndarray, n_ids: int):
    """(sorted keys, ptr, ids) of an inverted index keyed by hash: ``hashes`` holds one hash
    per distinct string, ``codes`` the string of each occurrence, ``ids`` its name.

    Parameters
    ----------
    hashes : numpy.ndarray
        One hash per distinct string.
    codes : numpy.ndarray
        The string of each occurrence (an index into ``hashes``).
    ids : numpy.ndarray
        The name of each occurrence.
    n_ids : int
        The number of names.

    Returns
    -------
    object
        (sorted keys, ptr, ids) of an inverted index keyed by hash: ``hashes`` holds one
        hash per distinct string, ``codes`` the string of each occurrence, ``ids`` its
        name.
    """
    order = np.argsort(hashes, kind="stable")
    rank = np.empty(len(hashes), np.int64)
    rank[order] = np.arange(len(hashes))
    k, v = distinct_pairs(rank[codes], ids, n_ids)
    used, ptr = runs(k)
    return hashes[order][used], ptr, v.astype(np.int32)


def hash_lookup(post, key: int) -> np.ndarray:
    """The name ids of posting list ``key`` (a :func:`key_hash`; empty when absent).

    Parameters
    ----------
    post : object
        A posting table ``(sorted keys, ptr, ids)``.
    key : int
        A key hash.

    Returns
    -------
    numpy.ndarray
        The name ids of posting list ``key`` (a :func:`key_hash`; empty when absent).
    """
    keys, ptr, vals = post
    i = int(np.searchsorted(keys, np.uint64(key)))
    if i < len(keys) and keys[i] == key:
        return vals[ptr[i]:ptr[i + 1]]
    return vals[:0]


def postings_of(post, hashes: np.ndarray) -> np.ndarray:
    """The name ids of every posting list among ``hashes`` (concatenated, with repeats).

    Parameters
    ----------
    post : object
        A posting table ``(sorted keys, ptr, ids)``.
    hashes : numpy.ndarray
        Key hashes.

    Returns
    -------
    numpy.ndarray
        The name ids of every posting list among ``hashes`` (concatenated, with
        repeats).
    """
    keys, ptr, vals = post
    if not len(keys) or not len(hashes):
        return vals[:0].astype(np.int64)
    i = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
    rows = i[keys[i] == hashes]
    return expand_csr(ptr, vals, rows)[0].astype(np.int64)



def sorted_hash_table(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted hashes, the name of each): an exact-lookup table.

    Parameters
    ----------
    h : numpy.ndarray
        One hash per name.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        (sorted hashes, the name of each): an exact-lookup table.
    """
    order = np.argsort(h, kind="stable")
    return h[order], order.astype(np.int32)
