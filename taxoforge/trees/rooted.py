"""A nodes table checked to be one rooted tree, as integer arrays.

The first step of :class:`taxoforge.trees.taxonomy.Taxonomy`: :func:`rooted_arrays` sorts
the ``node_id`` column, gives every node an integer index (its position in the sorted ids),
finds every parent's index with one binary search, and computes the depths level by level
from the root. Whatever makes the table something other than one rooted tree is a
:class:`TreeError` naming a node: a missing column, a null or repeated id, a parent that is
not a node, no root or several, a node the root does not reach (a cycle), a ``depth`` column
that disagrees with the tree.

Examples
--------
>>> import polars as pl
>>> ids, parent_idx, root_idx, depth = rooted_arrays(
...     pl.DataFrame({"node_id": ["r", "a", "b", "a1"], "parent_id": [None, "r", "r", "a"]}))
>>> ids.tolist(), parent_idx.tolist(), root_idx, depth.tolist()
(['a', 'a1', 'b', 'r'], [3, 0, 3, -1], 3, [1, 2, 1, 0])
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.trees.lca import children_csr

__all__ = ["TreeError", "rooted_arrays", "depths_from_root"]


class TreeError(ValueError):
    """The nodes table is not one rooted tree."""


def rooted_arrays(nodes: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """The ids, parent indexes, root and depths of a nodes table, checked to be one rooted tree.

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id`` and ``parent_id`` (null for the root), in any order; a ``depth`` column
        without nulls is checked against the tree.

    Returns
    -------
    ids : numpy.ndarray
        The node ids, sorted (``object`` strings); a node's index is its position here.
    parent_idx : numpy.ndarray
        The index of every node's parent, -1 for the root (``int64``).
    root_idx : int
        The root's index.
    depth : numpy.ndarray
        The depth of every node, root = 0 (``int32``).

    Raises
    ------
    TreeError
        Naming the first node that breaks the tree, and how many do.
    """
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
    n = len(ids)
    if n == 0:
        raise TreeError("empty tree")
    id_array = ids.to_numpy().astype(object)
    parents = nodes["parent_id"]
    pos = np.minimum(ids.search_sorted(parents.fill_null("")).to_numpy().astype(np.int64), n - 1)
    found = (ids.gather(pos) == parents).fill_null(False).to_numpy()
    missing = np.flatnonzero(~found & parents.is_not_null().to_numpy())
    if len(missing):
        r = int(missing[0])
        raise TreeError(f"node {ids[r]!r} has parent {parents[r]!r}, which is not a node ({len(missing)} orphan(s))")
    parent_idx = np.where(found, pos, -1).astype(np.int64)
    roots = np.flatnonzero(parent_idx < 0)
    if len(roots) != 1:
        raise TreeError(f"expected exactly one root, found {len(roots)}: {id_array[roots[:5]].tolist()}")
    root_idx = int(roots[0])
    depth = depths_from_root(parent_idx, root_idx, id_array)
    if "depth" in nodes.columns and nodes["depth"].null_count() == 0:
        given = nodes["depth"].to_numpy()
        bad = np.flatnonzero(given != depth)
        if len(bad):
            raise TreeError(f"node {id_array[bad[0]]!r}: depth column says {given[bad[0]]}, tree says {depth[bad[0]]}")
    return id_array, parent_idx, root_idx, depth


def depths_from_root(parent_idx: np.ndarray, root_idx: int, ids: np.ndarray) -> np.ndarray:
    """The depth of every node, by one numpy pass per level down from the root.

    Parameters
    ----------
    parent_idx : numpy.ndarray
        The parent index of every node, -1 for the root.
    root_idx : int
        The root's index.
    ids : numpy.ndarray
        The node ids, to name a node in the error.

    Returns
    -------
    numpy.ndarray
        ``int32`` depths, root = 0.

    Raises
    ------
    TreeError
        When some node is not reachable from the root (it lies on a cycle, or below one).
    """
    n = len(parent_idx)
    depth = np.full(n, -1, dtype=np.int32)
    depth[root_idx] = 0
    kids_ptr, kids = children_csr(parent_idx)
    frontier = np.array([root_idx])
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
        raise TreeError(f"{n - seen} node(s) not reachable from the root (a cycle), e.g. {ids[bad[0]]!r}")
    return depth
