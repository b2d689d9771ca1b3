"""A tree over stored arrays: a :class:`~taxoforge.trees.taxonomy.Taxonomy` that reads only
what a query needs.

:class:`StoredTaxonomy` is made from the arrays of a tree already checked (parents, depths,
pre-order, stored once, e.g. memory-mapped by :mod:`taxoforge.snapshots.tree_cache`) and a
Series of its ids and labels, without checking or computing anything again. The per-node
Python objects a :class:`Taxonomy` holds — the object array of ids, the list of labels, the
names table — are made only when something asks for them; lookups by id and by index go
through the Series (binary search, gather). The functions :func:`ids_of`,
:func:`labels_of`, :func:`has_nodes` and :func:`subtree_size` answer those queries for any
tree, stored or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
import polars as pl

from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["StoredTaxonomy", "ids_of", "labels_of", "has_nodes", "subtree_size"]


class StoredTaxonomy(Taxonomy):
    """A tree over stored arrays (module docstring).

    Parameters
    ----------
    ids : polars.Series
        The sorted node ids (strings).
    parent_idx, depth : numpy.ndarray
        The parent index of every node (-1 at the root) and its depth (may be memory-mapped).
    labels : polars.Series, optional
        Every node's label, in id order.
    names : callable, optional
        Reads the names table when it is first needed.
    preorder : tuple of numpy.ndarray, optional
        The pre-order positions and subtree sizes, when stored.

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
    >>> u = StoredTaxonomy(pl.Series(t.ids.tolist()), t.parent_idx, t.depth_arr)
    >>> u.ancestors("a1"), u.root, u.has(["a1", "b"]).tolist(), len(u)
    (['r', 'a', 'a1'], 'r', [True, False], 3)
    """

    def __init__(self, ids: pl.Series, parent_idx: np.ndarray, depth: np.ndarray, *, labels: pl.Series | None = None,
                 names=None, preorder: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self._id_series = ids.cast(pl.String)
        self.parent_idx, self.depth_arr = parent_idx, depth
        self.root_idx = int(np.flatnonzero(parent_idx < 0)[0])
        self.root = str(self._id_series[self.root_idx])
        self._lookups = 0
        self.label_series = labels.cast(pl.String) if labels is not None else None
        self._names_reader = names
        if preorder is not None:
            self._lca.__dict__["preorder"] = preorder

    def __len__(self) -> int:
        """Number of nodes."""
        return len(self.parent_idx)

    @cached_property
    def ids(self) -> np.ndarray:
        """Node ids in sorted order (an object array, made on first use)."""
        return self._id_series.to_numpy().astype(object)

    @cached_property
    def _labels(self) -> list | None:
        return self.label_series.to_list() if self.label_series is not None else None

    @cached_property
    def _names(self) -> pl.DataFrame | None:
        return self._names_reader() if self._names_reader is not None else None

    def _series_ids(self) -> pl.Series | None:
        """The ids as a Series while :attr:`ids` is not made yet, else None."""
        return self._id_series if "ids" not in self.__dict__ else None

    def _index(self, node_id, missing_ok: bool = False):
        ids = self._series_ids()
        if ids is None or self._lookups > 10_000:
            return super()._index(node_id, missing_ok)
        self._lookups += 1
        i = int(ids.search_sorted(node_id)) if isinstance(node_id, str) else len(ids)
        i = i if i < len(ids) and ids[i] == node_id else None
        if i is None and not missing_ok:
            raise KeyError(f"unknown node id {node_id!r}")
        return i

    def index_of(self, node_ids: Iterable[str] | str) -> np.ndarray:
        """Integer indexes of node ids, by a binary search in the Series of ids.

        Parameters
        ----------
        node_ids : str, iterable of str or polars.Series
            One id or many.

        Returns
        -------
        numpy.ndarray
            ``int64`` indexes, as :meth:`Taxonomy.index_of` gives them (``KeyError`` naming
            the first unknown id).
        """
        if isinstance(node_ids, pl.Series):
            given, want = None, node_ids.cast(pl.String)
        else:
            given = [node_ids] if isinstance(node_ids, str) else list(node_ids)
            want = _as_ids(given)
        pos, found = _search(self._id_series, want)  # whether or not :attr:`ids` is made
        if not found.all():
            bad = np.flatnonzero(~found)
            first = given[bad[0]] if given is not None else want[int(bad[0])]
            raise KeyError(f"unknown node id {first!r} ({len(bad)} unknown)")
        return pos

    def has(self, node_ids) -> np.ndarray:
        """Per id: is it a node of the tree (vectorised ``in``)?

        Parameters
        ----------
        node_ids : iterable of str
            The ids (anything else is no node).

        Returns
        -------
        numpy.ndarray
            One boolean per id.
        """
        return _found(self._id_series, node_ids)


def _as_ids(node_ids) -> pl.Series:
    """The ids as a String Series, anything that is not a string as null (no node)."""
    return pl.Series([x if isinstance(x, str) else None for x in node_ids], dtype=pl.String)


def _search(ids: pl.Series, want: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Binary search of ``want`` in the sorted ``ids``: each one's position (meaningful
    where found) and whether it is there (nulls never are)."""
    if not len(want) or not len(ids):
        return np.zeros(len(want), np.int64), np.zeros(len(want), bool)
    pos = np.minimum(ids.search_sorted(want.fill_null("")).to_numpy().astype(np.int64), len(ids) - 1)
    return pos, (ids.gather(pos) == want).fill_null(False).to_numpy()


def _found(ids: pl.Series, node_ids) -> np.ndarray:
    return _search(ids, _as_ids(node_ids))[1]


def ids_of(tax: Taxonomy, idx) -> list[str]:
    """The ids of the nodes at some indexes.

    Parameters
    ----------
    tax : Taxonomy
        The tree.
    idx : array_like of int
        Node indexes.

    Returns
    -------
    list of str

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
    >>> ids_of(t, [1, 0])
    ['r', 'a']
    """
    idx = np.asarray(idx, dtype=np.int64)
    if isinstance(tax, StoredTaxonomy):
        return tax._id_series.gather(idx).to_list()
    return tax.ids[idx].tolist()


def labels_of(tax: Taxonomy, idx) -> list:
    """The labels of the nodes at some indexes.

    Parameters
    ----------
    tax : Taxonomy
        The tree.
    idx : array_like of int
        Node indexes.

    Returns
    -------
    list
        Labels (None where a node has none, or for every node of a tree without labels).

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"], "label": ["root", "ant"]}))
    >>> labels_of(t, [1, 0, 1])
    ['root', 'ant', 'root']
    """
    idx = np.asarray(idx, dtype=np.int64)
    if isinstance(tax, StoredTaxonomy) and "_labels" not in tax.__dict__:
        return tax.label_series.gather(idx).to_list() if tax.label_series is not None else [None] * len(idx)
    labels = tax._labels
    return [labels[i] for i in idx.tolist()] if labels else [None] * len(idx)


def has_nodes(tax: Taxonomy, node_ids) -> np.ndarray:
    """Per id: is it a node of the tree (vectorised ``in``)?

    Parameters
    ----------
    tax : Taxonomy
        The tree.
    node_ids : iterable of str
        The ids.

    Returns
    -------
    numpy.ndarray
        One boolean per id.

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
    >>> has_nodes(t, ["a", "zz", None]).tolist()
    [True, False, False]
    """
    if isinstance(tax, StoredTaxonomy):
        return tax.has(node_ids)
    return np.fromiter((isinstance(x, str) and x in tax for x in node_ids), bool)


def subtree_size(tax: Taxonomy) -> np.ndarray:
    """The number of nodes in each node's subtree, itself included.

    Parameters
    ----------
    tax : Taxonomy
        The tree.

    Returns
    -------
    numpy.ndarray
        One count per node: the stored pre-order's when the tree has one, else counted
        level by level, deepest first.

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
    >>> subtree_size(t).tolist()
    [2, 1, 3]
    """
    if "preorder" in tax._lca.__dict__:
        return np.asarray(tax._lca.preorder[1], np.int64)
    depth, parent = tax.depth_arr, tax.parent_idx
    n = len(parent)
    size = np.ones(n, dtype=np.int64)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
    for d in range(int(depth.max(initial=0)), 0, -1):
        lvl = by_depth[bounds[d]:bounds[d + 1]]
        size += np.bincount(parent[lvl], weights=size[lvl], minlength=n).astype(np.int64)
    return size
