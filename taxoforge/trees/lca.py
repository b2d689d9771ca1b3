"""Lowest common ancestors of many node pairs at once, over integer parent arrays.

The step of :class:`taxoforge.trees.taxonomy.Taxonomy` that makes hP/hR fast at scale. Number
the nodes in depth-first pre-order (children in index order, :func:`preorder`); for two
different nodes ``u, v`` with ``pre(u) < pre(v)``, the lowest common ancestor is the parent of
the shallowest node among pre-order positions ``pre(u)+1 … pre(v)``. That is a range-minimum
query, answered in O(1) from a sparse table (:func:`min_sparse_table`, :func:`range_min`) —
the reduction of Bender and Farach-Colton 2000 [11] without the Euler tour. Everything is
built level by level with numpy, with no recursion; :func:`lca_depth_by_climbing` answers a
few pairs on a large tree without building the tables at all.

A subtree is an interval of pre-order positions, so "is ``a`` an ancestor of ``b``" is two
comparisons (:func:`is_ancestor`).

References
----------
Numbers of docs/references.md: [11] Bender and Farach-Colton 2000 (LCA by range-minimum
queries over a sparse table).

Examples
--------
>>> import numpy as np
>>> parent = np.array([-1, 0, 0, 1, 1])          # r; a, b under r; a1, a2 under a
>>> depth = np.array([0, 1, 1, 2, 2])
>>> pre, size = preorder(parent, depth)
>>> pre.tolist(), size.tolist()
([0, 1, 4, 2, 3], [5, 3, 1, 1, 1])
>>> is_ancestor(pre, size, np.array([1, 1]), np.array([3, 2])).tolist()
[True, False]
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

__all__ = [
    "LcaIndex",
    "children_csr",
    "preorder",
    "preorder_values",
    "min_sparse_table",
    "floor_log2_table",
    "range_min",
    "lca_depth_by_climbing",
    "is_ancestor",
]


def children_csr(parent_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The children of every node in compressed sparse row form, in index order.

    Parameters
    ----------
    parent_idx : numpy.ndarray
        The parent index of every node, -1 for the root.

    Returns
    -------
    ptr : numpy.ndarray
        ``n + 1`` offsets: the children of node ``i`` are ``kids[ptr[i]:ptr[i + 1]]``.
    kids : numpy.ndarray
        Child indexes, grouped by parent.
    """
    n = len(parent_idx)
    nonroot = np.flatnonzero(parent_idx >= 0)
    p = parent_idx[nonroot]
    order = np.lexsort((nonroot, p))  # children in index order
    kids = nonroot[order]
    ptr = np.concatenate(([0], np.cumsum(np.bincount(p, minlength=n))))
    return ptr, kids


def preorder(parent_idx: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depth-first pre-order positions and subtree sizes, children visited in index order.

    Two level-by-level passes: subtree sizes bottom-up, then positions top-down (a child's
    position is its parent's plus one plus the sizes of the siblings before it).

    Parameters
    ----------
    parent_idx : numpy.ndarray
        The parent index of every node, -1 for the root.
    depth : numpy.ndarray
        The depth of every node (root = 0).

    Returns
    -------
    pre : numpy.ndarray
        The pre-order position of every node (the root's is 0).
    size : numpy.ndarray
        The number of nodes in every node's subtree, itself included.
    """
    n = len(parent_idx)
    size = np.ones(n, dtype=np.int64)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
    for d in range(int(depth.max()), 0, -1):
        lvl = by_depth[bounds[d]:bounds[d + 1]]
        size += np.bincount(parent_idx[lvl], weights=size[lvl], minlength=n).astype(np.int64)
    pre = np.zeros(n, dtype=np.int64)
    for d in range(1, int(depth.max()) + 1):
        lvl = by_depth[bounds[d]:bounds[d + 1]]
        p = parent_idx[lvl]
        o = np.lexsort((lvl, p))
        lvl, p = lvl[o], p[o]
        cs = np.cumsum(size[lvl])
        first = np.concatenate(([True], p[1:] != p[:-1]))
        grp_start = np.maximum.accumulate(np.where(first, np.arange(len(lvl)), 0))
        before = cs - size[lvl] - (cs[grp_start] - size[lvl[grp_start]])
        pre[lvl] = pre[p] + 1 + before
    return pre, size


def preorder_values(pre: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (one per node) rearranged into pre-order.

    Parameters
    ----------
    pre : numpy.ndarray
        Pre-order positions (:func:`preorder`).
    values : numpy.ndarray
        One value per node, in index order.

    Returns
    -------
    numpy.ndarray
        ``out[pre[i]] == values[i]``.
    """
    order = np.empty(len(pre), dtype=np.int64)
    order[pre] = np.arange(len(pre))
    return values[order]


def min_sparse_table(row0: np.ndarray) -> np.ndarray:
    """Range-minimum sparse table of ``row0``, flattened row-major so one gather answers a batch.

    Parameters
    ----------
    row0 : numpy.ndarray
        The values; row ``j`` of the table holds the minimum over the window of length
        ``2**j`` starting at each position.

    Returns
    -------
    numpy.ndarray
        ``bit_length(n) * n`` values, row ``j`` at ``j * n``.
    """
    n = len(row0)
    levels = max(1, int(n).bit_length())
    table = np.empty((levels, n), dtype=row0.dtype)
    table[0] = row0
    for j in range(1, levels):
        half = 1 << (j - 1)
        table[j] = table[j - 1]
        np.minimum(table[j - 1][: n - half], table[j - 1][half:], out=table[j][: n - half])
    return table.ravel()


def floor_log2_table(n: int) -> np.ndarray:
    """``floor(log2(w))`` for every window width ``w`` in ``1 … n`` (index 0 unused).

    Parameters
    ----------
    n : int
        The largest width.

    Returns
    -------
    numpy.ndarray
        ``int8`` values, ``n + 1`` of them.
    """
    lg = np.zeros(n + 1, dtype=np.int8)
    for k in range(1, max(1, int(n).bit_length())):
        lg[1 << k:] = k
    return lg


def range_min(table: np.ndarray, n: int, lo: np.ndarray, hi: np.ndarray,
              floor_log2: np.ndarray | None = None) -> np.ndarray:
    """The minimum of each window ``lo[i] … hi[i]`` (inclusive), from a sparse table.

    Parameters
    ----------
    table : numpy.ndarray
        :func:`min_sparse_table` of ``n`` values.
    n : int
        The number of values.
    lo, hi : numpy.ndarray
        Window bounds, ``lo <= hi``.
    floor_log2 : numpy.ndarray, optional
        :func:`floor_log2_table` of ``n``; without it the logarithms are computed exactly
        from the floats' exponents.

    Returns
    -------
    numpy.ndarray
        One minimum per window, in the table's type.
    """
    if floor_log2 is None:
        k = (np.frexp((hi - lo + 1).astype(np.float64))[1] - 1).astype(np.int64)
    else:
        k = floor_log2[hi - lo + 1].astype(np.int64)
    base = k * n
    return np.minimum(table[base + lo], table[base + hi + 1 - (np.int64(1) << k)])


def lca_depth_by_climbing(parent_idx: np.ndarray, depth: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The depth of the lowest common ancestor of a few pairs, by climbing.

    The deeper node of each pair climbs to the other's depth, then both climb until they
    meet: steps of the pairs' size, no whole-tree pre-order and sparse table to build first
    (a scoring run's hundreds of pairs on a tree of millions).

    Parameters
    ----------
    parent_idx : numpy.ndarray
        The parent index of every node, -1 for the root.
    depth : numpy.ndarray
        The depth of every node.
    u, v : numpy.ndarray
        Node indexes of equal length (``int64``).

    Returns
    -------
    numpy.ndarray
        The depth of each pair's lowest common ancestor.
    """
    a, b = u.copy(), v.copy()
    da, db = depth[a].astype(np.int64), depth[b].astype(np.int64)
    while (m := da > db).any():
        a[m], da[m] = parent_idx[a[m]], da[m] - 1
    while (m := db > da).any():
        b[m], db[m] = parent_idx[b[m]], db[m] - 1
    while (m := a != b).any():
        a[m], b[m], da[m] = parent_idx[a[m]], parent_idx[b[m]], da[m] - 1
    return da


def is_ancestor(pre: np.ndarray, size: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether ``a[i]`` is an ancestor of, or equal to, ``b[i]``: ``b`` lies in ``a``'s interval.

    Parameters
    ----------
    pre, size : numpy.ndarray
        Pre-order positions and subtree sizes (:func:`preorder`).
    a, b : numpy.ndarray
        Node indexes of equal length.

    Returns
    -------
    numpy.ndarray
        Booleans.
    """
    return (pre[b] >= pre[a]) & (pre[b] < pre[a] + size[a])


class LcaIndex:
    """Lowest common ancestors and ancestor tests of index pairs over one tree.

    The pre-order and the sparse tables are built on first use and kept; a few pairs on a
    large tree are answered by climbing instead, before any table exists.

    Parameters
    ----------
    parent_idx : numpy.ndarray
        The parent index of every node, -1 for the root.
    depth : numpy.ndarray
        The depth of every node (root = 0).

    Examples
    --------
    >>> import numpy as np
    >>> ix = LcaIndex(np.array([-1, 0, 0, 1, 1]), np.array([0, 1, 1, 2, 2]))
    >>> ix.lca(np.array([3, 3]), np.array([4, 2])).tolist(), ix.lca_depth(np.array([3]), np.array([4])).tolist()
    ([1, 0], [1])
    """

    def __init__(self, parent_idx: np.ndarray, depth: np.ndarray) -> None:
        self.parent_idx = parent_idx
        self.depth = depth

    @cached_property
    def preorder(self) -> tuple[np.ndarray, np.ndarray]:
        """The pre-order position and the subtree size of every node (:func:`preorder`)."""
        return preorder(self.parent_idx, self.depth)

    @cached_property
    def _packed_table(self) -> np.ndarray:
        """Sparse table over pre-order positions of (depth, node) packed in one int64."""
        nodes = np.arange(len(self.parent_idx), dtype=np.int64)
        return min_sparse_table(preorder_values(self.preorder[0], (self.depth.astype(np.int64) << 32) | nodes))

    @cached_property
    def _depth_table(self) -> np.ndarray:
        """Sparse table of depths only, in the narrowest integer type that holds the deepest
        node: :meth:`lca_depth` needs no node ids, and a table of bytes keeps the random
        gathers in cache."""
        dmax = int(self.depth.max())
        dtype = np.uint8 if dmax < 2**8 else np.uint16 if dmax < 2**16 else np.int32
        return min_sparse_table(preorder_values(self.preorder[0], self.depth).astype(dtype))

    @cached_property
    def _floor_log2(self) -> np.ndarray:
        return floor_log2_table(len(self.parent_idx))

    def _windows(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, same): the pre-order window after the first of each pair up to the second;
        a pair of one node gets a dummy 1-wide window, flagged in ``same``."""
        pre = self.preorder[0]
        pu, pv = pre[u], pre[v]
        hi = np.maximum(pu, pv)
        lo = np.minimum(pu, pv)
        same = lo == hi
        lo += 1
        np.minimum(lo, hi, out=lo)
        return lo, hi, same

    def lca(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The lowest common ancestor of each index pair ``(u[i], v[i])``, in O(1) each.

        Parameters
        ----------
        u, v : array_like of int
            Node indexes of equal length.

        Returns
        -------
        numpy.ndarray
            The index of each pair's lowest common ancestor.
        """
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        lo, hi, _ = self._windows(u, v)
        packed = range_min(self._packed_table, len(self.parent_idx), lo, hi)
        return np.where(u == v, u, self.parent_idx[packed & 0xFFFFFFFF])

    def lca_depth(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The depth of the lowest common ancestor of each index pair.

        Reads a sparse table of depths only; a few pairs (fewer than 1/256 of the nodes)
        before that table exists are answered by :func:`lca_depth_by_climbing`.

        Parameters
        ----------
        u, v : array_like of int
            Node indexes of equal length.

        Returns
        -------
        numpy.ndarray
            The depth of each pair's lowest common ancestor (0: only the root is shared).
        """
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        n = len(self.parent_idx)
        if "_depth_table" not in self.__dict__ and u.size * 256 < n:
            return lca_depth_by_climbing(self.parent_idx, self.depth, u, v)
        lo, hi, same = self._windows(u, v)
        shallowest = range_min(self._depth_table, n, lo, hi, self._floor_log2).astype(np.int64)
        shallowest -= 1  # the LCA is the parent of the shallowest node in the window
        return np.where(same, self.depth[u], shallowest)

    def is_ancestor(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether ``a[i]`` is an ancestor of, or equal to, ``b[i]`` (:func:`is_ancestor`).

        Parameters
        ----------
        a, b : array_like of int
            Node indexes of equal length.

        Returns
        -------
        numpy.ndarray
            Booleans.
        """
        pre, size = self.preorder
        return is_ancestor(pre, size, np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
