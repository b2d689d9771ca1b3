"""A read-only view of one rooted tree with fast, vectorised queries.

Built once from the ``nodes`` table (``node_id``, ``parent_id``, ``depth``) and optionally
the ``names`` table. Every node gets an integer index (its position in ``ids``); the
vectorised methods take and return index arrays.

Lowest common ancestors use the pre-order trick: number the nodes in depth-first
pre-order (children in id order); for two different nodes ``u, v`` with
``pre(u) < pre(v)``, the LCA is the parent of the shallowest node among pre-order
positions ``pre(u)+1 … pre(v)`` — a range-minimum query answered in O(1) from a sparse
table (Bender & Farach-Colton, 2000; the arrays and tables are :mod:`taxoforge.trees.lca`).
Everything is built with level-by-level numpy passes, no recursion.

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

from taxoforge.trees.lca import LcaIndex, children_csr
from taxoforge.trees.rooted import TreeError, rooted_arrays

__all__ = ["Taxonomy", "TreeError"]


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
    taxoforge.trees.rooted.TreeError: expected exactly one root, found 2: ['r', 's']
    """

    def __init__(self, nodes: pl.DataFrame, names: pl.DataFrame | None = None) -> None:
        self.ids, self.parent_idx, self.root_idx, self.depth_arr = rooted_arrays(nodes)
        self.root: str = str(self.ids[self.root_idx])
        self._lookups = 0  # single-node lookups so far (the id → index dict is built after many)
        self._names = names
        if "label" in nodes.columns:
            labelled = nodes.select(pl.col("node_id").cast(pl.String), "label")
            self._labels = (labelled if labelled["node_id"].is_sorted() else labelled.sort("node_id"))["label"].to_list()
        else:
            self._labels = None

    # ---------------------------------------------------------------- construction
    @cached_property
    def _children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        return children_csr(self.parent_idx)

    @cached_property
    def _lca(self) -> LcaIndex:
        """Pre-order and sparse tables for the vectorised queries, built on first use."""
        return LcaIndex(self.parent_idx, self.depth_arr)

    @property
    def _preorder(self) -> tuple[np.ndarray, np.ndarray]:
        """(pre-order position of every node, subtree size of every node)."""
        return self._lca.preorder

    # ---------------------------------------------------------------- ids
    def __len__(self) -> int:
        """Number of nodes."""
        return len(self.ids)

    def __contains__(self, node_id: object) -> bool:
        """Whether ``node_id`` is a node of the tree."""
        return self._index(node_id, missing_ok=True) is not None

    @cached_property
    def _pos(self) -> dict:
        """id → index (built once many single-node lookups have been made)."""
        return dict(zip(self.ids.tolist(), range(len(self.ids))))

    def _index(self, node_id, missing_ok: bool = False):
        self._lookups += 1
        if self._lookups > 10_000 or "_pos" in self.__dict__:
            i = self._pos.get(node_id)
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
        """The path from the root to a node (``anc()`` of docs/method.md#trees), root first.

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
        leaf = np.ones(len(self.ids), dtype=bool)
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
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.subtree(["a1"]).rows()
        [('a', 'r', 1), ('a1', 'a', 2), ('r', None, 0)]
        """
        idx = self.index_of(list(keep))
        mark = np.zeros(len(self.ids), dtype=bool)
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
