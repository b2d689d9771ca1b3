"""Compiled graph kernels behind :func:`taxoforge.trees.build.build_tree`.

Each kernel is one linear pass (or a few) over integer arrays, compiled by numba
(``nogil``, cached on disk next to this file, or in numba's user-wide cache where that
folder is read-only). They replace numpy code whose cost was not the arithmetic but the
sorting and the per-level round trips of a vectorised formulation: on a 2 M-node
Wikidata-shaped graph, ``np.unique`` over each level's out-edges, ``argsort`` of each
level's tight edges and the strongly connected components of the whole graph took most of
the time once the ids were integers.

* :func:`radix_argsort` — a stable least-significant-digit radix sort of non-negative
  ``int64`` keys (stable order of equal keys; the number of passes follows the largest key).
* :func:`run_codes` — the rank of each key among the distinct keys, from a sorted order;
  :func:`sort_codes` — the same from the keys, in half the memory where it can;
  :func:`sort_inplace`, :func:`stable_argsort` — a sort, an order.
* :func:`sorted_unique_edges` — edges sorted by ``(parent, child)`` without repeats.
* :func:`dfs_back_edges` — the back edges of the depth-first search that breaks the cycles
  of one strongly connected component (entry members first, children in code order).
* :func:`tight_in_edges` — per node, the positions of its in-edges on a longest path
  (ascending position = ascending parent code).
* :func:`copy_single_logn` — the number of longest paths of nodes with one tight parent
  (the parent's own: no arithmetic, so the result is exactly what a log-sum-exp of one
  term gives).

:func:`compiled` is the decorator of every kernel of the library (these, the id encoder's
the parallel sorts' and peelings', and the Wikidata dump scanner's):
``numba.njit(cache=True, nogil=True)``, and without the
disk cache where numba finds no folder to write it to (a read-only checkout and a
read-only home), instead of failing at import.

References
----------
Numbers of docs/references.md: [9] Kahn 1962 (topological sorting); [10] Tarjan 1972
(depth-first search, strongly connected components). Radix sorting: Knuth, *The Art of
Computer Programming*, vol. 3, §5.2.5.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["compiled", "radix_argsort", "run_codes", "sort_codes", "sort_inplace", "stable_argsort", "sorted_unique_edges", "dfs_back_edges",
           "tight_in_edges", "copy_single_logn"]

_MAX_DIGIT_BITS = 10


def compiled(fn=None, *, inline: bool = False):
    """Compile ``fn`` with numba, cached on disk where numba can write its cache.

    Parameters
    ----------
    fn : callable
        A function numba's ``nopython`` mode compiles.
    inline : bool
        Inline it into the compiled functions that call it (numba's ``inline="always"``):
        for the small steps of a per-line loop.

    Returns
    -------
    numba dispatcher
        ``numba.njit(cache=True, nogil=True)(fn)``, or ``numba.njit(nogil=True)(fn)`` where
        numba finds no folder for its cache (it raises ``RuntimeError: cannot cache
        function …`` then: a read-only checkout and a read-only home).
    """
    if fn is None:
        return lambda f: compiled(f, inline=inline)
    opts = {"inline": "always"} if inline else {}
    try:
        return njit(cache=True, nogil=True, **opts)(fn)
    except RuntimeError:
        return njit(nogil=True, **opts)(fn)


@compiled
def radix_argsort(keys):
    """``(order, sorted keys)`` of non-negative ``int64`` keys, stable.

    Least-significant digit first, digits of at most 10 bits (1,024 buckets: the scattered
    writes stay in cache; measured fastest of 6 to 16 bits on 9.8 M keys of 58 bits, 2.5×
    ``np.sort``), as many passes as the largest key needs.

    >>> import numpy as np
    >>> order, s = radix_argsort(np.array([5, 3, 5, 0], dtype=np.int64))
    >>> order.tolist(), s.tolist()
    ([3, 1, 0, 2], [0, 3, 5, 5])
    """
    n = keys.shape[0]
    top = 0
    for i in range(n):
        top |= keys[i]
    bits = 0
    while top >> bits:
        bits += 1
    passes = max(1, (bits + _MAX_DIGIT_BITS - 1) // _MAX_DIGIT_BITS)
    width = max(1, (bits + passes - 1) // passes)
    mask = (1 << width) - 1
    order = np.arange(n, dtype=np.int64)
    cur = keys.copy()
    if bits == 0:
        return order, cur
    tmp_o = np.empty(n, dtype=np.int64)
    tmp_k = np.empty(n, dtype=np.int64)
    counts = np.empty(mask + 2, dtype=np.int64)
    for p in range(passes):
        shift = p * width
        counts[:] = 0
        for i in range(n):
            counts[((cur[i] >> shift) & mask) + 1] += 1
        for d in range(mask + 1):
            counts[d + 1] += counts[d]
        for i in range(n):
            d = (cur[i] >> shift) & mask
            at = counts[d]
            counts[d] = at + 1
            tmp_k[at] = cur[i]
            tmp_o[at] = order[i]
        cur, tmp_k = tmp_k, cur
        order, tmp_o = tmp_o, order
    return order, cur


@compiled
def run_codes(order, sorted_keys):
    """``(code of each key, index of one key of each code)``: codes number the distinct keys
    in ascending order; ``order``/``sorted_keys`` as :func:`radix_argsort` returns them."""
    n = order.shape[0]
    codes = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    c = -1
    for i in range(n):
        if i == 0 or sorted_keys[i] != sorted_keys[i - 1]:
            c += 1
            first[c] = order[i]
        codes[order[i]] = c
    return codes, first[: c + 1]


@compiled
def _radix_sort_inplace(a, bits):
    """Sort the non-negative ``a`` (values below ``2**bits``) in place, least-significant digit first."""
    n = a.shape[0]
    passes = max(1, (bits + _MAX_DIGIT_BITS - 1) // _MAX_DIGIT_BITS)
    width = max(1, (bits + passes - 1) // passes)
    mask = (1 << width) - 1
    tmp = np.empty(n, dtype=np.int64)
    counts = np.empty(mask + 2, dtype=np.int64)
    src = a
    dst = tmp
    for p in range(passes):
        shift = p * width
        counts[:] = 0
        for i in range(n):
            counts[((src[i] >> shift) & mask) + 1] += 1
        for d in range(mask + 1):
            counts[d + 1] += counts[d]
        for i in range(n):
            d = (src[i] >> shift) & mask
            dst[counts[d]] = src[i]
            counts[d] += 1
        src, dst = dst, src
    if passes % 2 == 1:
        a[:] = src


@compiled
def _bit_length(x):
    b = 0
    while x >> b:
        b += 1
    return b


@compiled
def sort_inplace(keys):
    """Sort non-negative ``int64`` keys in place (radix, as :func:`radix_argsort`); returns them."""
    top = 0
    for i in range(keys.shape[0]):
        top |= keys[i]
    _radix_sort_inplace(keys, max(1, _bit_length(top)))
    return keys


@compiled
def stable_argsort(keys):
    """The stable sorting order of non-negative ``int64`` keys: one array of ``key << b | index``
    radix-sorted where key and index fit 62 bits together, else :func:`radix_argsort`."""
    n = keys.shape[0]
    top = 0
    for i in range(n):
        top |= keys[i]
    kb = _bit_length(top)
    ib = _bit_length(n)
    if kb + ib > 62:
        return radix_argsort(keys)[0]
    packed = np.empty(n, dtype=np.int64)
    for i in range(n):
        packed[i] = (keys[i] << ib) | i
    _radix_sort_inplace(packed, max(1, kb + ib))
    low = (1 << ib) - 1
    for i in range(n):
        packed[i] = packed[i] & low
    return packed


@compiled
def sort_codes(keys):
    """``(code of each key, index of one key of each code)`` as :func:`run_codes` gives them,
    in less memory where the key and its index fit one ``int64`` together: ``keys`` itself
    becomes ``key << b | index`` and is radix-sorted in place (its values are lost)."""
    n = keys.shape[0]
    top = 0
    for i in range(n):
        top |= keys[i]
    kb = _bit_length(top)
    ib = _bit_length(n)
    if kb + ib > 62:
        order, s = radix_argsort(keys)
        return run_codes(order, s)
    packed = keys
    for i in range(n):
        packed[i] = (keys[i] << ib) | i
    _radix_sort_inplace(packed, kb + ib)
    low = (1 << ib) - 1
    codes = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    c = -1
    prev = -1
    for i in range(n):
        k = packed[i] >> ib
        r = packed[i] & low
        if i == 0 or k != prev:
            c += 1
            first[c] = r
            prev = k
        codes[r] = c
    return codes, first[: c + 1].copy()


@compiled
def sorted_unique_edges(child, parent, n):
    """Edges ``child → parent`` (codes below ``n``) sorted by ``(parent, child)``, repeats
    dropped: one radix sort of ``parent * n + child``."""
    m = child.shape[0]
    key = np.empty(m, dtype=np.int64)
    for i in range(m):
        key[i] = parent[i] * n + child[i]
    _, key = radix_argsort(key)
    w = 0
    for k in range(m):
        if w == 0 or key[k] != key[w - 1]:
            key[w] = key[k]
            w += 1
    out_c = np.empty(w, dtype=np.int64)
    out_p = np.empty(w, dtype=np.int64)
    for k in range(w):
        out_p[k] = key[k] // n
        out_c[k] = key[k] - out_p[k] * n
    return out_c, out_p


@compiled
def dfs_back_edges(start_order, out_ptr, child, label, comp, state):
    """Positions of the back edges of a depth-first search over one component.

    ``start_order``: the members in the order the search starts from them; ``out_ptr`` /
    ``child``: the out-edges (parent → child) sorted by ``(parent, child)``; only edges to
    members (``label == comp``) are followed; ``state`` (0 new, 1 on the stack, 2 done) is
    shared across calls and must be 0 for the members."""
    back = []
    stack_v = np.empty(start_order.shape[0], dtype=np.int64)
    stack_e = np.empty(start_order.shape[0], dtype=np.int64)
    for s in start_order:
        if state[s] != 0:
            continue
        state[s] = 1
        top = 0
        stack_v[0] = s
        stack_e[0] = out_ptr[s]
        while top >= 0:
            v = stack_v[top]
            pushed = False
            e = stack_e[top]
            while e < out_ptr[v + 1]:
                d = child[e]
                e += 1
                if label[d] != comp:
                    continue
                if state[d] == 0:
                    stack_e[top] = e
                    state[d] = 1
                    top += 1
                    stack_v[top] = d
                    stack_e[top] = out_ptr[d]
                    pushed = True
                    break
                if state[d] == 1:
                    back.append(e - 1)
            if not pushed:
                state[v] = 2
                top -= 1
    return np.array(back, dtype=np.int64)


@compiled
def tight_in_edges(child, parent, depth, n):
    """``(tight, ptr, pos)``: the mask of edges on a longest path (``depth[child] ==
    depth[parent] + 1``), and per node ``v`` the positions ``pos[ptr[v]:ptr[v+1]]`` of its
    tight in-edges in ascending order."""
    m = child.shape[0]
    tight = np.zeros(m, dtype=np.bool_)
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        if depth[child[e]] == depth[parent[e]] + 1:
            tight[e] = True
            ptr[child[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:n].copy()
    pos = np.empty(ptr[n], dtype=np.int64)
    for e in range(m):
        if tight[e]:
            c = child[e]
            pos[fill[c]] = e
            fill[c] += 1
    return tight, ptr, pos


@compiled
def copy_single_logn(order, lo, hi, ptr, pos, parent, logn):
    """For the nodes ``order[lo:hi]`` with exactly one tight parent: ``logn[v] =
    logn[parent]`` (one longest path through it for each of the parent's)."""
    for i in range(lo, hi):
        v = order[i]
        if ptr[v + 1] - ptr[v] == 1:
            logn[v] = logn[parent[pos[ptr[v]]]]
