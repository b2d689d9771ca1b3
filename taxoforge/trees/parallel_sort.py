"""Sorts of non-negative ``int64`` keys on several threads: the large sorts of the tree builder
(ids → codes, unique edges) and of the Wikidata dump reader (nodes, edges, names).

Algorithm (:func:`sort_inplace`)
    On one or two threads: numpy's in-place sort (``ndarray.sort``, which on x86-64 with AVX2
    or AVX-512 is a vectorised quicksort, about four times faster than a radix sort compiled by
    numba on the same keys, and allocates nothing). On ``t`` threads, three or more (the split
    below costs about 60 % of the sort itself, so two threads would gain little and lose under
    load): one
    most-significant-digit pass splits the keys into ``t`` parts of about equal size by their
    top bits — each thread counts the top digits of its range of the input, the counts give
    every (part, range) pair its place, each thread copies its range there — and each thread
    then sorts one part in place with numpy (which releases the GIL while it sorts). The
    parts are ordered by their top bits, so the parts sorted one after the other are the keys
    sorted.

    The output is the sorted keys, whatever the number of threads (a sort has one result);
    :func:`sort_codes` and :func:`stable_argsort` sort ``key << b | index`` (unique keys, so
    their order is the stable one), and fall back to the one-thread :mod:`.graph_kernels`
    radix sorts when key and index do not fit 62 bits together. The thread count is
    :func:`.threads.threads_for` of the number of keys.

References
----------
Radix sorting: Knuth, *The Art of Computer Programming*, vol. 3, §5.2.5.
"""

from __future__ import annotations

import numpy as np

from taxoforge.trees import graph_kernels as kern
from taxoforge.trees.graph_kernels import compiled
from taxoforge.trees.threads import run, split, threads_for

__all__ = ["sort_inplace", "stable_argsort", "sort_codes", "sorted_unique_edges", "run_starts", "bit_length"]

_TOP_BITS = 10  # the parts are cut between top digits: 1,024 of them
#: The split costs three passes over the keys (count, scatter, copy back), about 60 % of numpy's
#: own sort of them: with two threads it would save a fifth of the time at best, and lose on a
#: busy machine; from three threads on it pays.
_MIN_THREADS = 3


# ------------------------------------------------------------------ kernels
@compiled
def _or_range(a, lo, hi):
    top = 0
    for i in range(lo, hi):
        top |= a[i]
    return top


@compiled
def _digit_counts(a, lo, hi, shift, counts):
    for i in range(lo, hi):
        counts[a[i] >> shift] += 1


@compiled
def _copy(src, dst, lo, hi):
    for i in range(lo, hi):
        dst[i] = src[i]


def _sort_part(tmp: np.ndarray, keys: np.ndarray, lo: int, hi: int) -> None:
    tmp[lo:hi].sort()  # numpy releases the GIL while it sorts
    _copy(tmp, keys, lo, hi)


@compiled
def _digit_scatter(a, lo, hi, shift, offsets, out):
    for i in range(lo, hi):
        d = a[i] >> shift
        out[offsets[d]] = a[i]
        offsets[d] += 1


@compiled
def _pack_index(keys, lo, hi, ib):
    for i in range(lo, hi):
        keys[i] = (keys[i] << ib) | i


@compiled
def _unpack_index(packed, lo, hi, ib):
    low = (1 << ib) - 1
    for i in range(lo, hi):
        packed[i] = packed[i] & low


@compiled
def _run_starts(packed, lo, hi, ib):
    """How many runs of equal keys (``packed >> ib``) start in ``[lo, hi)``."""
    c = 0
    for i in range(lo, hi):
        if i == 0 or (packed[i] >> ib) != (packed[i - 1] >> ib):
            c += 1
    return c


@compiled
def _run_codes(packed, lo, hi, ib, c, codes, first):
    """``codes[index] = code`` and ``first[code] = index`` over ``[lo, hi)``, the codes from
    ``c`` (the runs started before ``lo``)."""
    low = (1 << ib) - 1
    c -= 1
    for i in range(lo, hi):
        r = packed[i] & low
        if i == 0 or (packed[i] >> ib) != (packed[i - 1] >> ib):
            c += 1
            first[c] = r
        codes[r] = c


@compiled
def _edge_keys(child, parent, n, keys, lo, hi):
    for i in range(lo, hi):
        keys[i] = parent[i] * n + child[i]


@compiled
def _distinct(keys, lo, hi):
    c = 0
    for i in range(lo, hi):
        if i == 0 or keys[i] != keys[i - 1]:
            c += 1
    return c


@compiled
def _starts(keys, lo, hi, out, w):
    for i in range(lo, hi):
        if i == 0 or keys[i] != keys[i - 1]:
            out[w] = i
            w += 1


@compiled
def _split_distinct(keys, lo, hi, n, w, out_c, out_p):
    for i in range(lo, hi):
        if i == 0 or keys[i] != keys[i - 1]:
            p = keys[i] // n
            out_p[w] = p
            out_c[w] = keys[i] - p * n
            w += 1


# ------------------------------------------------------------------ public sorts
def bit_length(x: int) -> int:
    """Bits of the non-negative ``x`` (0 for 0).

    Parameters
    ----------
    x : int
        A non-negative integer.

    Returns
    -------
    int
        ``int(x).bit_length()``.
    """
    return int(x).bit_length()


def _top(keys: np.ndarray, t: int) -> int:
    top = 0
    for part in run(_or_range, [(keys, lo, hi) for lo, hi in split(len(keys), t)]):
        top |= int(part)
    return top


def sort_inplace(keys: np.ndarray, threads: int | None = None, bits: int | None = None) -> np.ndarray:
    """Sort non-negative ``int64`` keys in place (module docstring).

    Parameters
    ----------
    keys : numpy.ndarray
        ``int64``, contiguous, every value non-negative.
    threads : int, optional
        The most threads to use (:func:`.threads.threads_for`; default every core).
    bits : int, optional
        Every key is below ``2**bits`` (found from the keys when not given).

    Returns
    -------
    numpy.ndarray
        ``keys``, sorted.

    Examples
    --------
    >>> sort_inplace(np.array([5, 3, 5, 0], dtype=np.int64)).tolist()
    [0, 3, 5, 5]
    """
    n = len(keys)
    t = threads_for(n, threads)
    if t < _MIN_THREADS:
        keys.sort()
        return keys
    if bits is None:
        bits = bit_length(_top(keys, t))
    shift = max(0, bits - _TOP_BITS)
    ranges = split(n, t)
    counts = np.zeros((t, 1 << min(bits, _TOP_BITS)), dtype=np.int64)
    run(_digit_counts, [(keys, lo, hi, shift, counts[k]) for k, (lo, hi) in enumerate(ranges)])
    starts = np.zeros(counts.shape[1] + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=starts[1:])
    offsets = starts[:-1] + np.cumsum(counts, axis=0) - counts  # (range, digit) → its first slot
    tmp = np.empty_like(keys)
    run(_digit_scatter, [(keys, lo, hi, shift, offsets[k], tmp) for k, (lo, hi) in enumerate(ranges)])
    # t parts of whole digits, about n / t keys each
    cuts = starts[np.searchsorted(starts, [n * k // t for k in range(1, t)], side="left")]
    bounds = sorted({0, n, *(int(c) for c in cuts)})
    run(_sort_part, [(tmp, keys, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])])
    return keys


def stable_argsort(keys: np.ndarray, threads: int | None = None) -> np.ndarray:
    """The stable sorting order of non-negative ``int64`` keys (module docstring).

    Parameters
    ----------
    keys : numpy.ndarray
        ``int64``, non-negative; left unchanged.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    numpy.ndarray
        ``int64`` positions: ``keys[order]`` is sorted, equal keys in their input order.
    """
    n = len(keys)
    t = threads_for(n, threads)
    kb, ib = bit_length(_top(keys, t)), bit_length(n)
    if kb + ib > 62:
        return kern.stable_argsort(np.ascontiguousarray(keys, dtype=np.int64))
    packed = np.array(keys, dtype=np.int64)
    ranges = split(n, t)
    run(_pack_index, [(packed, lo, hi, ib) for lo, hi in ranges])
    sort_inplace(packed, t, kb + ib)
    run(_unpack_index, [(packed, lo, hi, ib) for lo, hi in ranges])
    return packed


def sort_codes(keys: np.ndarray, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(code of each key, index of one key of each code)``, codes numbering the distinct keys
    in ascending order, as :func:`.graph_kernels.sort_codes` gives them; ``keys`` is used as
    scratch (its values are lost) where key and index fit 62 bits together.

    Parameters
    ----------
    keys : numpy.ndarray
        ``int64``, non-negative, contiguous.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    codes : numpy.ndarray
        ``int64``, one per key.
    first : numpy.ndarray
        ``int64``, for each code the index of its first key.
    """
    n = len(keys)
    t = threads_for(n, threads)
    kb, ib = bit_length(_top(keys, t)), bit_length(n)
    if kb + ib > 62:
        return kern.sort_codes(keys)
    ranges = split(n, t)
    run(_pack_index, [(keys, lo, hi, ib) for lo, hi in ranges])
    sort_inplace(keys, t, kb + ib)
    runs = run(_run_starts, [(keys, lo, hi, ib) for lo, hi in ranges])
    before = np.concatenate(([0], np.cumsum(runs)))
    codes = np.empty(n, dtype=np.int64)
    first = np.empty(int(before[-1]), dtype=np.int64)
    run(_run_codes, [(keys, lo, hi, ib, int(c), codes, first) for (lo, hi), c in zip(ranges, before[:-1])])
    return codes, first


def sorted_unique_edges(child: np.ndarray, parent: np.ndarray, n: int,
                        threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``child → parent`` (codes below ``n``) sorted by ``(parent, child)``, repeats
    dropped, as :func:`.graph_kernels.sorted_unique_edges` gives them.

    Parameters
    ----------
    child, parent : numpy.ndarray
        ``int64`` codes below ``n``.
    n : int
        The number of nodes.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    child, parent : numpy.ndarray
        The distinct edges, sorted.
    """
    m = len(child)
    t = threads_for(m, threads)
    keys = np.empty(m, dtype=np.int64)
    ranges = split(m, t)
    run(_edge_keys, [(child, parent, n, keys, lo, hi) for lo, hi in ranges])
    sort_inplace(keys, t, bit_length(n * n))
    counts = run(_distinct, [(keys, lo, hi) for lo, hi in ranges])
    at = np.concatenate(([0], np.cumsum(counts)))
    out_c = np.empty(int(at[-1]), dtype=np.int64)
    out_p = np.empty(int(at[-1]), dtype=np.int64)
    run(_split_distinct, [(keys, lo, hi, n, int(w), out_c, out_p) for (lo, hi), w in zip(ranges, at[:-1])])
    return out_c, out_p


def run_starts(keys: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Where each run of equal keys starts in sorted ``keys``.

    Parameters
    ----------
    keys : numpy.ndarray
        Sorted ``int64`` keys.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    numpy.ndarray
        ``int64`` positions, ascending: ``keys[starts]`` are the distinct keys, and
        ``numpy.diff(starts, append=len(keys))`` how often each occurs.

    Examples
    --------
    >>> run_starts(np.array([1, 1, 4, 7, 7, 7], dtype=np.int64)).tolist()
    [0, 2, 3]
    """
    ranges = split(len(keys), threads_for(len(keys), threads))
    counts = run(_distinct, [(keys, lo, hi) for lo, hi in ranges])
    at = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    out = np.empty(int(at[-1]), dtype=np.int64)
    run(_starts, [(keys, lo, hi, out, int(w)) for (lo, hi), w in zip(ranges, at[:-1])])
    return out
