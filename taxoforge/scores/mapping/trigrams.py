"""The character-trigram index of the name keys: code-point trigram → names.

Each name is padded with a space on each side; a name of ``b`` code points then has ``b``
trigrams. The postings are built vectorised (the names' code points in one buffer, one
trigram per position, sorted packed with their name) and give the exact candidate bound of
:mod:`taxoforge.scores.mapping.candidates` (q-gram counting: a name within a similarity
threshold of the query shares at least so many trigrams with it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taxoforge.arrays import sorted_unique
from taxoforge.scores.mapping.postings import distinct_pairs, expand_csr, runs

__all__ = ["TrigramIndex", "padded_trigrams", "trigram_postings"]


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def padded_trigrams(text: str) -> np.ndarray:
    """Codes of the code-point trigrams of ``" " + text + " "`` (one per position).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    numpy.ndarray
        Codes of the code-point trigrams of ``" " + text + " "`` (one per position).
    """
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


def trigram_postings(names: Sequence[str] | tuple[np.ndarray, np.ndarray], lengths: np.ndarray):
    """(keys, ptr, names) of the distinct padded trigrams of every name, vectorised: the
    names' code points in one buffer, a space each side of each name, one trigram per
    position; the trigrams are sorted packed with their name, as ranks of the code points
    that occur (a trigram's code orders like its three code points).

    Parameters
    ----------
    names : Sequence[str] or tuple[numpy.ndarray, numpy.ndarray]
        The names, or ``(offsets, utf8)`` buffers of them.
    lengths : numpy.ndarray
        Each name's length in code points.

    Returns
    -------
    object
        (keys, ptr, names) of the distinct padded trigrams of every name, vectorised:
        the names' code points in one buffer, a space each side of each name, one
        trigram per position; the trigrams are sorted packed with their name, as ranks
        of the code points that occur (a trigram's code orders like its three code
        points).
    """
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
        k, v = distinct_pairs(tri, owner, n)
    else:  # an alphabet too large to pack with the names: sort the trigram codes themselves
        k, v = distinct_pairs(np.searchsorted(sorted_unique(tri), tri), owner, n)
        k = sorted_unique(tri)[k]
    del tri, owner
    used, ptr = runs(k)
    c3 = alphabet[used % r_len]
    c2 = alphabet[(used // r_len) % r_len]
    c1 = alphabet[used // (r_len * r_len)]
    keys = (c1.astype(np.int64) << 42) | (c2.astype(np.int64) << 21) | c3.astype(np.int64)
    return keys, ptr, v.astype(np.int32)


class TrigramIndex:
    """Distinct code-point trigrams of every name (padded with a space each side) → names,
    and every name's length in code points. A name of ``b`` code points has ``b``
    trigrams.

    Parameters
    ----------
    names : Sequence[str], optional
        The names to index.
    lengths : numpy.ndarray, optional
        Stored: each name's length in code points.
    keys : optional
        Stored: the distinct trigrams.
    ptr : optional
        Stored: CSR pointers of each trigram's names.
    name_ids : optional
        Stored: the names of each trigram.
    """

    def __init__(self, names: Sequence[str] | None = None, *, lengths: np.ndarray | None = None,
                 keys=None, ptr=None, name_ids=None) -> None:
        if keys is None:
            names = list(names or [])
            self.lengths = np.fromiter((len(x) for x in names), dtype=np.int64, count=len(names))
            self.keys, self.ptr, self.names = trigram_postings(names, self.lengths)
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
        when ``min_shared ≤ 0``.

        Parameters
        ----------
        query : str
            The answer's text.
        min_shared : float
            Least share of the query's trigram occurrences a name must share.

        Returns
        -------
        numpy.ndarray
            Every name that may share at least ``min_shared`` of the padded query's trigram
            occurrences: a superset, read from the rarest posting lists only (prefix filter
            — such a name shares a trigram with any set of the query's trigrams weighing
            more than the weight of all the query's indexed trigrams minus ``min_shared``).
        """
        rows, cnt, _ = self._postings(query)
        if min_shared <= 0:
            return np.arange(len(self.lengths), dtype=np.int64)
        need = int(cnt.sum()) - min_shared  # read postings until their weight exceeds this
        take = int(np.searchsorted(np.cumsum(cnt), need, side="right")) + 1
        if take > len(rows):  # the present trigrams cannot weigh that much: no name qualifies
            return np.zeros(0, np.int64)
        return sorted_unique(expand_csr(self.ptr, self.names, rows[:take])[0].astype(np.int64))

    def seeds(self, query: str, budget: int = 1000, n: int = 16) -> np.ndarray:
        """Up to ``n`` names sharing the most of the query's rarer trigrams (posting lists
        read rarest first, at most ``budget`` entries): good candidates, not a complete set.

        Parameters
        ----------
        query : str
            The answer's text.
        budget : int, optional
            Most posting-list entries read.
        n : int, optional
            Most names returned.

        Returns
        -------
        numpy.ndarray
            Up to ``n`` names sharing the most of the query's rarer trigrams (posting lists
            read rarest first, at most ``budget`` entries): good candidates, not a complete
            set.
        """
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

