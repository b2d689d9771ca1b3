"""A read-only view of one rooted tree with fast, vectorised queries.

Built once from the ``nodes`` table (``node_id``, ``parent_id``, ``depth``) and optionally
the ``names`` table. Every node gets an integer index (its position in ``ids``); the
vectorised methods take and return index arrays.

Lowest common ancestors use the pre-order trick: number the nodes in depth-first
pre-order (children in id order); for two different nodes ``u, v`` with
``pre(u) < pre(v)``, the LCA is the parent of the shallowest node among pre-order
positions ``pre(u)+1 … pre(v)`` — a range-minimum query answered in O(1) from a sparse
table (Bender & Farach-Colton, 2000). Everything is built with level-by-level numpy
passes, no recursion.

>>> import polars as pl
>>> nodes = pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
...                       "parent_id": [None, "r", "r", "a", "a"]})
>>> t = Taxonomy(nodes)
>>> t.ancestors("a2")
['r', 'a', 'a2']
>>> t.lca("a1", "a2"), t.lca("a1", "b"), t.depth("a1")
('a', 'r', 2)
>>> t.leaf_descendants("r")
['a1', 'a2', 'b']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property

import numpy as np
import polars as pl

__all__ = ["Taxonomy", "TreeError"]


class TreeError(ValueError):
    """The nodes table is not one rooted tree."""


class Taxonomy:
    """One rooted tree over a ``nodes`` table, with fast queries (module docstring).

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id`` and ``parent_id`` (null for the root); ``depth`` is checked against the
        tree when present, ``label`` is kept for :meth:`label`.
    names : polars.DataFrame, optional
        The names table (``node_id``, ``name``, ``kind``, ``lang``) behind :meth:`names`.

    Attributes
    ----------
    ids : numpy.ndarray
        Node ids in sorted order; a node's index is its position here.
    parent_idx : numpy.ndarray
        Index of every node's parent, -1 for the root.
    depth_arr : numpy.ndarray
        Depth of every node (root = 0).
    root : str
        The root's id (``root_idx`` its index).

    Raises
    ------
    TreeError
        When the table is not one rooted tree: a missing column, a null or repeated id, a
        parent that is not a node, no root or several, a cycle, a wrong ``depth``.

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
    ...                            "parent_id": [None, "r", "r", "a", "a"]}))
    >>> len(t), t.root, "a1" in t, "zz" in t
    (5, 'r', True, False)
    >>> Taxonomy(pl.DataFrame({"node_id": ["r", "s"], "parent_id": [None, None]}))
    Traceback (most recent call last):
    ...
    taxoforge.trees.taxonomy.TreeError: expected exactly one root, found 2: ['r', 's']
    """

    def __init__(self, nodes: pl.DataFrame, names: pl.DataFrame | None = None) -> None:
        for c in ("node_id", "parent_id"):
            if c not in nodes.columns:
                raise TreeError(f"nodes table has no column {c!r}; columns are {nodes.columns}")
        nodes = nodes.with_columns(pl.col("node_id").cast(pl.String), pl.col("parent_id").cast(pl.String))
        if not nodes["node_id"].is_sorted():  # tables read from a tree folder are sorted already
            nodes = nodes.sort("node_id")
        ids = nodes["node_id"]
        if ids.null_count():
            raise TreeError("nodes table has a null node_id")
        same = (ids.slice(1) == ids.slice(0, len(ids) - 1)).fill_null(False) if len(ids) > 1 else pl.Series([False])
        if same.any():  # sorted: a repeated id sits next to itself
            raise TreeError(f"node_id {ids[int(same.arg_true()[0])]!r} occurs more than once")
        self.ids: np.ndarray = ids.to_numpy().astype(object)
        n = len(self.ids)
        if n == 0:
            raise TreeError("empty tree")
        self._lookups = 0  # single-node lookups so far (the id → index dict is built after many)
        parents = nodes["parent_id"]
        pos = np.minimum(ids.search_sorted(parents.fill_null("")).to_numpy().astype(np.int64), n - 1)
        found = (ids.gather(pos) == parents).fill_null(False).to_numpy()
        missing = np.flatnonzero(~found & parents.is_not_null().to_numpy())
        if len(missing):
            r = int(missing[0])
            raise TreeError(f"node {ids[r]!r} has parent {parents[r]!r}, which is not a node ({len(missing)} orphan(s))")
        self.parent_idx: np.ndarray = np.where(found, pos, -1).astype(np.int64)
        roots = np.flatnonzero(self.parent_idx < 0)
        if len(roots) != 1:
            raise TreeError(f"expected exactly one root, found {len(roots)}: {self.ids[roots[:5]].tolist()}")
        self.root_idx = int(roots[0])
        self.root: str = str(self.ids[self.root_idx])
        self.depth_arr: np.ndarray = self._compute_depths()
        if "depth" in nodes.columns and nodes["depth"].null_count() == 0:
            given = nodes["depth"].to_numpy()
            bad = np.flatnonzero(given != self.depth_arr)
            if len(bad):
                raise TreeError(f"node {self.ids[bad[0]]!r}: depth column says {given[bad[0]]}, tree says {self.depth_arr[bad[0]]}")
        self._names = names
        self._label_series = nodes["label"].cast(pl.String) if "label" in nodes.columns else None

    @classmethod
    def from_arrays(cls, ids: np.ndarray, parent_idx: np.ndarray, depth: np.ndarray, *,
                    labels: pl.Series | None = None, names=None, preorder: tuple[np.ndarray, np.ndarray] | None = None,
                    depth_table: np.ndarray | None = None) -> "Taxonomy":
        """A tree over the arrays of a tree already checked — e.g. stored from a
        :class:`Taxonomy` built from its tables — without checking or computing them again.

        Parameters
        ----------
        ids : numpy.ndarray or polars.Series
            Sorted node ids: an object array (:attr:`ids`), or a Series of strings from
            which :attr:`ids` is made only when something needs it.
        parent_idx, depth : numpy.ndarray
            :attr:`parent_idx` and :attr:`depth_arr` (may be memory-mapped).
        labels : polars.Series, optional
            Every node's label, in id order.
        names : polars.DataFrame or callable, optional
            The names table, or a function without arguments that reads it when it is first
            needed.
        preorder : tuple of numpy.ndarray, optional
            The pre-order positions and subtree sizes, when stored.
        depth_table : numpy.ndarray, optional
            The depth sparse table of :meth:`lca_depth`, when stored.

        Returns
        -------
        Taxonomy

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
        >>> u = Taxonomy.from_arrays(t.ids, t.parent_idx, t.depth_arr)
        >>> u.ancestors("a1"), u.root
        (['r', 'a', 'a1'], 'r')
        """
        t = cls.__new__(cls)
        if isinstance(ids, pl.Series):
            t._id_series = ids
        else:
            t.ids = ids
        t._lookups = 0
        t.parent_idx = parent_idx
        t.depth_arr = depth
        t.root_idx = int(np.flatnonzero(parent_idx < 0)[0])
        t.root = str(ids[t.root_idx])
        t._label_series = labels
        if callable(names):
            t._names_loader = names
        else:
            t._names = names
        if preorder is not None:
            t.__dict__["_preorder"] = preorder
        if depth_table is not None:
            t.__dict__["_depth_table"] = depth_table
        return t

    @cached_property
    def _names(self) -> pl.DataFrame | None:
        """The names table, read on first use when the tree was made with a reader of it."""
        return self._names_loader()

    @cached_property
    def _labels(self) -> list | None:
        """Every node's label as a list, made on first use (:meth:`labels_of` needs none)."""
        return self._label_series.to_list() if self._label_series is not None else None

    @property
    def label_series(self) -> pl.Series | None:
        """Every node's label in id order, as a polars Series (None without labels)."""
        return self._label_series

    def labels_of(self, idx) -> list:
        """The labels of the nodes at the indexes ``idx`` (``None`` where a node has none, or
        for every node when the tree has no labels).

        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"], "label": ["root", "ant"]}))
        >>> t.labels_of([1, 0, 1])
        ['root', 'ant', 'root']
        """
        idx = np.asarray(idx, dtype=np.int64)
        if self._label_series is None:
            return [None] * len(idx)
        return self._label_series.gather(idx).to_list()

    @property
    def subtree_size(self) -> np.ndarray:
        """Number of nodes in each node's subtree, itself included (one per node, in id order).

        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
        >>> t.subtree_size.tolist()
        [2, 1, 3]
        """
        return self._preorder[1] if "_preorder" in self.__dict__ else self._subtree_sizes

    @cached_property
    def _subtree_sizes(self) -> np.ndarray:
        """Subtree sizes, deepest level first (one ``bincount`` per level)."""
        n = len(self)
        depth = self.depth_arr
        size = np.ones(n, dtype=np.int64)
        by_depth = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
        for d in range(int(depth.max()), 0, -1):
            lvl = by_depth[bounds[d]:bounds[d + 1]]
            size += np.bincount(self.parent_idx[lvl], weights=size[lvl], minlength=n).astype(np.int64)
        return size

    # ---------------------------------------------------------------- construction
    def _compute_depths(self) -> np.ndarray:
        n = len(self)
        depth = np.full(n, -1, dtype=np.int32)
        depth[self.root_idx] = 0
        kids_ptr, kids = self._children_csr
        frontier = np.array([self.root_idx])
        d = 0
        seen = 1
        while len(frontier):
            starts, ends = kids_ptr[frontier], kids_ptr[frontier + 1]
            lens = ends - starts
            if lens.sum() == 0:
                break
            idx = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(lens.sum())
            frontier = kids[idx]
            d += 1
            depth[frontier] = d
            seen += len(frontier)
        if seen != n:
            bad = np.flatnonzero(depth < 0)
            raise TreeError(f"{n - seen} node(s) not reachable from the root (a cycle), e.g. {self.ids[bad[0]]!r}")
        return depth

    @cached_property
    def _children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self)
        nonroot = np.flatnonzero(self.parent_idx >= 0)
        p = self.parent_idx[nonroot]
        order = np.lexsort((nonroot, p))  # children in id order
        kids = nonroot[order]
        ptr = np.concatenate(([0], np.cumsum(np.bincount(p, minlength=n))))
        return ptr, kids

    @cached_property
    def _preorder(self) -> tuple[np.ndarray, np.ndarray]:
        """(pre-order position of every node, subtree size of every node)."""
        n = len(self)
        depth = self.depth_arr
        size = self._subtree_sizes
        by_depth = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
        pre = np.zeros(n, dtype=np.int64)
        for d in range(1, int(depth.max()) + 1):
            lvl = by_depth[bounds[d]:bounds[d + 1]]
            p = self.parent_idx[lvl]
            o = np.lexsort((lvl, p))
            lvl, p = lvl[o], p[o]
            cs = np.cumsum(size[lvl])
            first = np.concatenate(([True], p[1:] != p[:-1]))
            grp_start = np.maximum.accumulate(np.where(first, np.arange(len(lvl)), 0))
            before = cs - size[lvl] - (cs[grp_start] - size[lvl[grp_start]])
            pre[lvl] = pre[p] + 1 + before
        return pre, size

    def _preorder_values(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per node) rearranged into pre-order."""
        pre, _ = self._preorder
        order = np.empty(len(self), dtype=np.int64)
        order[pre] = np.arange(len(self))
        return values[order]

    @staticmethod
    def _min_sparse_table(row0: np.ndarray) -> np.ndarray:
        """Range-minimum sparse table of ``row0``: row ``j`` holds the minimum over the window
        of length ``2**j`` starting at each position, flattened row-major so one gather
        answers a batch of queries."""
        n = len(row0)
        levels = max(1, int(n).bit_length())
        table = np.empty((levels, n), dtype=row0.dtype)
        table[0] = row0
        for j in range(1, levels):
            half = 1 << (j - 1)
            table[j] = table[j - 1]
            np.minimum(table[j - 1][: n - half], table[j - 1][half:], out=table[j][: n - half])
        return table.ravel()

    @cached_property
    def _sparse_table(self) -> np.ndarray:
        """Sparse table over pre-order positions of (depth, node) packed in one int64."""
        nodes = np.arange(len(self), dtype=np.int64)
        return self._min_sparse_table(self._preorder_values((self.depth_arr.astype(np.int64) << 32) | nodes))

    @cached_property
    def _depth_table(self) -> np.ndarray:
        """Sparse table of depths only, in the narrowest integer type that holds the deepest
        node: :meth:`lca_depth` needs no node ids, and a table of bytes keeps the random
        gathers in cache."""
        dmax = int(self.depth_arr.max())
        dtype = np.uint8 if dmax < 2**8 else np.uint16 if dmax < 2**16 else np.int32
        return self._min_sparse_table(self._preorder_values(self.depth_arr).astype(dtype))

    @cached_property
    def _floor_log2(self) -> np.ndarray:
        """``floor(log2(w))`` for every window width ``w`` in ``1 … n`` (index 0 unused)."""
        n = len(self)
        lg = np.zeros(n + 1, dtype=np.int8)
        for k in range(1, max(1, int(n).bit_length())):
            lg[1 << k:] = k
        return lg

    # ---------------------------------------------------------------- ids
    def __len__(self) -> int:
        """Number of nodes."""
        return len(self.parent_idx)

    @cached_property
    def ids(self) -> np.ndarray:
        """Node ids in sorted order (object array); a tree made by :meth:`from_arrays` from a
        Series of ids makes it on first use (the vectorised lookups need none)."""
        return self._id_series.to_numpy().astype(object)

    def _lazy_ids(self) -> pl.Series | None:
        """The ids as a Series while :attr:`ids` is not made yet, else None."""
        return self.__dict__.get("_id_series") if "ids" not in self.__dict__ else None

    def has(self, node_ids) -> np.ndarray:
        """Per id: is it a node of the tree (vectorised :meth:`__contains__`)?

        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
        >>> t.has(["a", "zz", "r"]).tolist()
        [True, False, True]
        """
        want = pl.Series([x if isinstance(x, str) else None for x in node_ids], dtype=pl.String)
        if not len(want):
            return np.zeros(0, bool)
        ids = self._lazy_ids()
        if ids is None:
            ids = pl.Series(self.ids, dtype=pl.String)
        pos = np.minimum(ids.search_sorted(want.fill_null("")).to_numpy().astype(np.int64), len(ids) - 1)
        return (ids.gather(pos) == want).fill_null(False).to_numpy()

    def ids_of(self, idx) -> list[str]:
        """The ids of the nodes at the indexes ``idx``.

        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
        >>> t.ids_of([1, 0])
        ['r', 'a']
        """
        idx = np.asarray(idx, dtype=np.int64)
        lazy = self._lazy_ids()
        return lazy.gather(idx).to_list() if lazy is not None else self.ids[idx].tolist()

    def __contains__(self, node_id: object) -> bool:
        """Whether ``node_id`` is a node of the tree."""
        return self._index(node_id, missing_ok=True) is not None

    @cached_property
    def _pos(self) -> dict:
        """id → index (built once many single-node lookups have been made)."""
        return dict(zip(self.ids.tolist(), range(len(self.ids))))

    def _index(self, node_id, missing_ok: bool = False):
        self._lookups += 1
        lazy = self._lazy_ids()
        if self._lookups > 10_000 or "_pos" in self.__dict__:
            i = self._pos.get(node_id)
        elif lazy is not None:  # a binary search in the Series
            i = int(lazy.search_sorted(node_id)) if isinstance(node_id, str) else len(lazy)
            i = i if i < len(lazy) and lazy[i] == node_id else None
        else:  # a binary search: no dict of every id for a few lookups
            i = int(np.searchsorted(self.ids, node_id)) if isinstance(node_id, str) else len(self.ids)
            i = i if i < len(self.ids) and self.ids[i] == node_id else None
        if i is None and not missing_ok:
            raise KeyError(f"unknown node id {node_id!r}")
        return i

    def index_of(self, node_ids: Iterable[str] | str) -> np.ndarray:
        """Integer indexes of node ids, the input of the vectorised queries.

        Parameters
        ----------
        node_ids : str or iterable of str
            One id or many.

        Returns
        -------
        numpy.ndarray
            ``int64`` indexes into :attr:`ids`, one per id, in the order given.

        Raises
        ------
        KeyError
            Naming the first unknown id and how many are unknown.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.index_of(["b", "a1"]).tolist(), t.ids[t.index_of("r")].tolist()
        ([3, 1], ['r'])
        >>> t.index_of(["a", "zz"])
        Traceback (most recent call last):
        ...
        KeyError: "unknown node id 'zz' (1 unknown)"
        """
        if isinstance(node_ids, str):
            node_ids = [node_ids]
        arr = np.asarray(list(node_ids) if not isinstance(node_ids, np.ndarray) else node_ids, dtype=object)
        lazy = self._lazy_ids()
        if lazy is not None and len(arr):
            want = pl.Series(arr.tolist(), dtype=pl.String)
            pos = np.minimum(lazy.search_sorted(want).to_numpy().astype(np.int64), len(lazy) - 1)
            bad = ~(lazy.gather(pos) == want).fill_null(False).to_numpy()
            if bad.any():
                raise KeyError(f"unknown node id {arr[np.flatnonzero(bad)[0]]!r} ({int(bad.sum())} unknown)")
            return pos
        idx = np.searchsorted(self.ids, arr)
        idx = np.minimum(idx, len(self.ids) - 1)
        bad = self.ids[idx] != arr
        if bad.any():
            raise KeyError(f"unknown node id {arr[np.flatnonzero(bad)[0]]!r} ({int(bad.sum())} unknown)")
        return idx.astype(np.int64)

    # ---------------------------------------------------------------- single-node queries
    def parent(self, node_id: str) -> str | None:
        """The parent of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str or None
            The parent's id; ``None`` for the root.

        Raises
        ------
        KeyError
            If ``node_id`` is not a node.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.parent("a1"), t.parent("r")
        ('a', None)
        """
        p = self.parent_idx[self._index(node_id)]
        return None if p < 0 else str(self.ids[p])

    def children(self, node_id: str) -> list[str]:
        """The children of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            Child ids in id order (empty for a leaf).

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.children("r"), t.children("b")
        (['a', 'b'], [])
        """
        ptr, kids = self._children_csr
        i = self._index(node_id)
        return self.ids[kids[ptr[i]:ptr[i + 1]]].tolist()

    def depth(self, node_id: str) -> int:
        """The depth of a node: its number of ancestors (the root has depth 0).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        int

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.depth("r"), t.depth("a2")
        (0, 2)
        """
        return int(self.depth_arr[self._index(node_id)])

    def ancestors(self, node_id: str, include_self: bool = True) -> list[str]:
        """The path from the root to a node (``anc()`` of SPEC §1), root first.

        Parameters
        ----------
        node_id : str
        include_self : bool
            Whether the path ends at ``node_id`` itself (default) or at its parent.

        Returns
        -------
        list of str

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.ancestors("a2"), t.ancestors("a2", include_self=False), t.ancestors("r")
        (['r', 'a', 'a2'], ['r', 'a'], ['r'])
        """
        i = self._index(node_id)
        path = []
        while i >= 0:
            path.append(i)
            i = int(self.parent_idx[i])
        path.reverse()
        if not include_self:
            path.pop()
        return self.ids[path].tolist()

    def _subtree_mask(self, node_id: str) -> np.ndarray:
        """True for ``node_id`` and every node below it (a pre-order interval)."""
        pre, size = self._preorder
        i = self._index(node_id)
        return (pre >= pre[i]) & (pre < pre[i] + size[i])

    def descendants(self, node_id: str, include_self: bool = True) -> list[str]:
        """The nodes of the subtree under a node.

        Parameters
        ----------
        node_id : str
        include_self : bool
            Whether ``node_id`` itself is included (default).

        Returns
        -------
        list of str
            In id order.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.descendants("a"), t.descendants("a", include_self=False), t.descendants("b")
        (['a', 'a1', 'a2'], ['a1', 'a2'], ['b'])
        """
        mask = self._subtree_mask(node_id)
        if not include_self:
            mask[self._index(node_id)] = False
        return self.ids[mask].tolist()

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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.ids[t.is_leaf].tolist()
        ['a1', 'a2', 'b']
        """
        leaf = np.ones(len(self), dtype=bool)
        leaf[self.parent_idx[self.parent_idx >= 0]] = False
        return leaf

    def leaf_descendants(self, node_id: str) -> list[str]:
        """The leaves of the subtree under a node (the node itself if it is a leaf).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            In id order.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.leaf_descendants("r"), t.leaf_descendants("b")
        (['a1', 'a2', 'b'], ['b'])
        """
        return self.ids[self._subtree_mask(node_id) & self.is_leaf].tolist()

    def nodes_at_depth(self, depth: int) -> list[str]:
        """The nodes at one depth.

        Parameters
        ----------
        depth : int
            0 for the root.

        Returns
        -------
        list of str
            In id order; empty below the deepest leaf.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.nodes_at_depth(1), t.nodes_at_depth(2), t.nodes_at_depth(9)
        (['a', 'b'], ['a1', 'a2'], [])
        """
        return self.ids[self.depth_arr == depth].tolist()

    def lca(self, a: str, b: str) -> str:
        """The lowest common ancestor of two nodes (a node is its own ancestor).

        Parameters
        ----------
        a, b : str

        Returns
        -------
        str

        See Also
        --------
        lca_idx : the same for arrays of index pairs.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.lca("a1", "a2"), t.lca("a1", "b"), t.lca("a", "a2")
        ('a', 'r', 'a')
        """
        i = self.lca_idx(self.index_of([a]), self.index_of([b]))
        return str(self.ids[i[0]])

    def label(self, node_id: str) -> str | None:
        """The display label of a node, from the ``label`` column of the nodes table.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str or None
            ``None`` when the nodes table has no ``label`` column.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"],
        ...                            "label": ["root", "animal"]}))
        >>> t.label("a")
        'animal'
        """
        i = self._index(node_id)
        return self._labels[i] if self._labels is not None else None

    def names(self, node_id: str) -> list[str]:
        """Every name of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            The node's names in the names table, each once, in table order; without a names
            table, its label (if any).

        Examples
        --------
        >>> nodes = pl.DataFrame({"node_id": ["r", "d"], "parent_id": [None, "r"], "label": ["root", "dog"]})
        >>> names = pl.DataFrame({"node_id": ["d", "d", "d"], "name": ["dog", "domestic dog", "dog"],
        ...                       "kind": ["label", "lemma", "lemma"], "lang": ["en", "en", "en"]})
        >>> Taxonomy(nodes, names).names("d"), Taxonomy(nodes).names("d")
        (['dog', 'domestic dog'], ['dog'])
        """
        if self._names is None:
            lab = self.label(node_id)
            return [lab] if lab else []
        return self._names_by_node.get(node_id, [])

    @cached_property
    def _names_by_node(self) -> dict[str, list[str]]:
        g = self._names.group_by("node_id", maintain_order=True).agg(pl.col("name").unique(maintain_order=True))
        return dict(zip(g["node_id"].to_list(), g["name"].to_list()))

    @property
    def names_table(self) -> pl.DataFrame:
        """The names table: the one given, else one ``label`` name per labelled node.

        Returns
        -------
        polars.DataFrame
            ``node_id``, ``name``, ``kind``, ``lang``.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "d"], "parent_id": [None, "r"], "label": [None, "dog"]}))
        >>> t.names_table.rows()
        [('d', 'dog', 'label', None)]
        """
        if self._names is None:
            labels = self._labels or [None] * len(self.ids)
            return pl.DataFrame({"node_id": self.ids.tolist(), "name": labels, "kind": "label", "lang": None},
                                schema_overrides={"lang": pl.String}).drop_nulls("name")
        return self._names

    # ---------------------------------------------------------------- vectorised queries
    def _range_min(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Packed (depth<<32 | node) minimum over pre-order positions lo..hi inclusive."""
        flat = self._sparse_table
        n = len(self)
        k = (np.frexp((hi - lo + 1).astype(np.float64))[1] - 1).astype(np.int64)  # floor(log2), exact
        base = k * n
        return np.minimum(flat[base + lo], flat[base + hi + 1 - (np.int64(1) << k)])

    def _lca_packed(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        pre, _ = self._preorder
        pu, pv = pre[u], pre[v]
        hi = np.maximum(pu, pv)
        lo = np.minimum(np.minimum(pu, pv) + 1, hi)  # u == v: a dummy 1-wide range, masked below
        return u, v, self._range_min(lo, hi)

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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> lca = t.lca_idx(t.index_of(["a1", "a1", "b"]), t.index_of(["a2", "b", "b"]))
        >>> t.ids[lca].tolist()
        ['a', 'r', 'b']
        """
        u, v, packed = self._lca_packed(u, v)
        return np.where(u == v, u, self.parent_idx[packed & 0xFFFFFFFF])

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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.lca_depth(t.index_of(["a1", "a1", "a2"]), t.index_of(["a2", "b", "a2"])).tolist()
        [1, 0, 2]
        """
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        n = len(self)
        if "_depth_table" not in self.__dict__ and u.size * 256 < n:
            return self._lca_depth_by_climbing(u, v)
        pre, _ = self._preorder
        table = self._depth_table
        pu, pv = pre[u], pre[v]
        hi = np.maximum(pu, pv)
        lo = np.minimum(pu, pv)
        same = lo == hi
        lo += 1
        np.minimum(lo, hi, out=lo)  # u == v: a dummy 1-wide range, masked below
        k = self._floor_log2[hi - lo + 1].astype(np.int64)
        base = k * n
        shallowest = np.minimum(table[base + lo], table[base + hi + 1 - (np.int64(1) << k)]).astype(np.int64)
        shallowest -= 1  # the LCA is the parent of the shallowest node in the range
        return np.where(same, self.depth_arr[u], shallowest)

    def _lca_depth_by_climbing(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """:meth:`lca_depth` of a few pairs (a scoring run's hundreds, on a tree of millions):
        the deeper node climbs to the other's depth, then both climb until they meet — steps
        of the pairs' size, no whole-tree pre-order and sparse table to build first."""
        parent = self.parent_idx
        a, b = u.copy(), v.copy()
        da, db = self.depth_arr[a].astype(np.int64), self.depth_arr[b].astype(np.int64)
        while (m := da > db).any():
            a[m], da[m] = parent[a[m]], da[m] - 1
        while (m := db > da).any():
            b[m], db[m] = parent[b[m]], db[m] - 1
        while (m := a != b).any():
            a[m], b[m], da[m] = parent[a[m]], parent[b[m]], da[m] - 1
        return da

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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.is_ancestor_idx(t.index_of(["a", "a", "a1", "r"]), t.index_of(["a1", "b", "a1", "a2"])).tolist()
        [True, False, True, True]
        """
        pre, size = self._preorder
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        return (pre[b] >= pre[a]) & (pre[b] < pre[a] + size[a])

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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.subtree(["a1"]).rows()
        [('a', 'r', 1), ('a1', 'a', 2), ('r', None, 0)]
        """
        idx = self.index_of(list(keep))
        mark = np.zeros(len(self), dtype=bool)
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
