"""The vectorised queries of a :class:`~taxoforge.trees.taxonomy.Taxonomy`: node indexes in,
arrays out.

A part of :class:`~taxoforge.trees.taxonomy.Taxonomy` (a mixin, not a type of its own): every
method takes and returns integer node indexes (a node's position in ``ids``;
:meth:`~taxoforge.trees.taxonomy.Taxonomy.index_of` turns ids into them). Lowest common
ancestors use the pre-order trick: number the nodes in depth-first pre-order (children in
id order); for two different nodes ``u, v`` with ``pre(u) < pre(v)``, the LCA is the parent
of the shallowest node among pre-order positions ``pre(u)+1 … pre(v)`` — a range-minimum
query answered in O(1) from a sparse table (Bender & Farach-Colton, 2000; the arrays and
tables are :mod:`taxoforge.trees.lca`). Everything is built with level-by-level numpy
passes, no recursion.

>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"], "parent_id": [None, "r", "r", "a", "a"]}))
>>> t.ids[t.lca_idx(t.index_of(["a1", "a1"]), t.index_of(["a2", "b"]))].tolist()
['a', 'r']
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np
import polars as pl

from taxoforge.trees.lca import LcaIndex, children_csr

__all__ = ["IndexQueries"]


class IndexQueries:
    """The vectorised queries of a tree (module docstring); :class:`~taxoforge.trees.taxonomy.Taxonomy`
    holds them. They read ``ids``, ``parent_idx``, ``depth_arr`` and the labels of the tree."""

    @cached_property
    def _lca(self) -> LcaIndex:
        """Pre-order and sparse tables for the vectorised queries, built on first use."""
        return LcaIndex(self.parent_idx, self.depth_arr)

    @property
    def _preorder(self) -> tuple[np.ndarray, np.ndarray]:
        """(pre-order position of every node, subtree size of every node)."""
        return self._lca.preorder

    @cached_property
    def children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr, kids)``: the children of node ``i`` are ``kids[ptr[i]:ptr[i+1]]``, in id order."""
        return children_csr(self.parent_idx)

    def children_idx(self, i: int) -> np.ndarray:
        """The children of node ``i``, in id order.

        Parameters
        ----------
        i : int
            A node index.

        Returns
        -------
        numpy.ndarray
            Their indexes.
        """
        ptr, kids = self.children_csr
        return kids[ptr[i]:ptr[i + 1]]

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """Leaf flags: ``True`` for every node that is no node's parent.

        The array form of the ``is_leaf`` column
        (:func:`taxoforge.trees.tables.with_is_leaf`).

        Returns
        -------
        numpy.ndarray
            One boolean per node, aligned with :attr:`ids`.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.ids[t.is_leaf].tolist()
        ['a1', 'a2', 'b']
        """
        leaf = np.ones(len(self.parent_idx), dtype=bool)
        leaf[self.parent_idx[self.parent_idx >= 0]] = False
        return leaf

    def ids_of(self, idx) -> list[str]:
        """The ids of the nodes at some indexes.

        Parameters
        ----------
        idx : array_like of int
            Node indexes.

        Returns
        -------
        list of str

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
        >>> t.ids_of([1, 0])
        ['r', 'a']
        """
        idx = np.asarray(idx, dtype=np.int64)
        series = self._series_ids()
        return series.gather(idx).to_list() if series is not None else self.ids[idx].tolist()

    def labels_of(self, idx) -> list:
        """The labels of the nodes at some indexes.

        Parameters
        ----------
        idx : array_like of int
            Node indexes.

        Returns
        -------
        list
            Labels (None where a node has none, or for every node of a tree without labels).

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"], "label": ["root", "ant"]}))
        >>> t.labels_of([1, 0, 1])
        ['root', 'ant', 'root']
        """
        idx = np.asarray(idx, dtype=np.int64)
        if "_labels" not in self.__dict__ and self._label_series is not None:
            return self._label_series.gather(idx).to_list()
        labels = self._labels
        return [labels[i] for i in idx.tolist()] if labels else [None] * len(idx)

    def subtree_size(self) -> np.ndarray:
        """The number of nodes in each node's subtree, itself included.

        Returns
        -------
        numpy.ndarray
            One count per node: the stored pre-order's when the tree has one, else counted
            level by level, deepest first.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
        >>> t.subtree_size().tolist()
        [2, 1, 3]
        """
        if "preorder" in self._lca.__dict__:
            return np.asarray(self._lca.preorder[1], np.int64)
        depth, parent = self.depth_arr, self.parent_idx
        n = len(parent)
        size = np.ones(n, dtype=np.int64)
        by_depth = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
        for d in range(int(depth.max(initial=0)), 0, -1):
            lvl = by_depth[bounds[d]:bounds[d + 1]]
            size += np.bincount(parent[lvl], weights=size[lvl], minlength=n).astype(np.int64)
        return size

    def ancestor_at_depth(self, idx, depth) -> np.ndarray:
        """The ancestor (or self) of every node at a depth.

        Parameters
        ----------
        idx : array_like of int
            Node indexes.
        depth : int or array_like of int
            One depth, or one per node.

        Returns
        -------
        numpy.ndarray
            ``-1`` where the node is shallower than that.
        """
        cur = np.asarray(idx, dtype=np.int64).copy()
        target = np.broadcast_to(np.asarray(depth, dtype=np.int64), cur.shape)
        d = self.depth_arr[cur].astype(np.int64)
        out = np.where(d < target, -1, cur)
        move = d > target
        while move.any():
            out[move] = self.parent_idx[out[move]]
            d[move] -= 1
            move = d > target
        return out

    def lca_idx(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Lowest common ancestors of index pairs ``(u[i], v[i])``, in O(1) each.

        Parameters
        ----------
        u, v : numpy.ndarray
            Node indexes (:meth:`index_of`) of equal length.

        Returns
        -------
        numpy.ndarray
            Index of the lowest common ancestor of each pair.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> lca = t.lca_idx(t.index_of(["a1", "a1", "b"]), t.index_of(["a2", "b", "b"]))
        >>> t.ids[lca].tolist()
        ['a', 'r', 'b']
        """
        return self._lca.lca(u, v)

    def lca_depth(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Depth of the lowest common ancestor of index pairs: ``|anc(u) ∩ anc(v)| - 1``.

        Faster than ``depth_arr[lca_idx(u, v)]``: it reads a sparse table of depths only,
        in the narrowest integer type that holds them.

        Parameters
        ----------
        u, v : array_like of int
            Index pairs, as for :meth:`lca_idx`.

        Returns
        -------
        numpy.ndarray
            The depth of each pair's lowest common ancestor (0: only the root is shared).

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.lca_depth(t.index_of(["a1", "a1", "a2"]), t.index_of(["a2", "b", "a2"])).tolist()
        [1, 0, 2]
        """
        return self._lca.lca_depth(u, v)

    def is_ancestor_idx(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether ``a[i]`` is an ancestor of, or equal to, ``b[i]``, for index arrays.

        A pre-order interval test: ``b`` lies in the interval of ``a``'s subtree.

        Parameters
        ----------
        a : array_like of int
            Indexes of the candidate ancestors.
        b : array_like of int
            Indexes of the nodes to test, as many as ``a``.

        Returns
        -------
        numpy.ndarray
            ``True`` where ``a[i]`` is on the root path of ``b[i]``.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.is_ancestor_idx(t.index_of(["a", "a", "a1", "r"]), t.index_of(["a1", "b", "a1", "a2"])).tolist()
        [True, False, True, True]
        """
        return self._lca.is_ancestor(a, b)

    def subtree(self, keep: Sequence[str]) -> pl.DataFrame:
        """The nodes table of the smallest subtree holding ``keep`` and the root.

        Parameters
        ----------
        keep : sequence of str
            Node ids; with all their ancestors they make the subtree.

        Returns
        -------
        polars.DataFrame
            ``node_id``, ``parent_id``, ``depth`` (unchanged), in id order.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.subtree(["a1"]).rows()
        [('a', 'r', 1), ('a1', 'a', 2), ('r', None, 0)]
        """
        idx = self.index_of(list(keep))
        mark = np.zeros(len(self.parent_idx), dtype=bool)
        frontier = np.unique(idx)
        while len(frontier):
            frontier = frontier[~mark[frontier]]
            mark[frontier] = True
            frontier = self.parent_idx[frontier]
            frontier = np.unique(frontier[frontier >= 0])
        sel = np.flatnonzero(mark)
        par = self.parent_idx[sel]
        return pl.DataFrame(
            {
                "node_id": self.ids[sel].tolist(),
                "parent_id": [None if p < 0 else self.ids[p] for p in par.tolist()],
                "depth": self.depth_arr[sel],
            },
            schema_overrides={"parent_id": pl.String, "depth": pl.Int32},
        )
