"""Which tree a node's height is measured on, fixed by the dataset alone.

The height of a node is the number of edges on the longest path from it down to a leaf
(:func:`node_heights`); mistake severity and hierarchical distance@k are heights of lowest
common ancestors (:mod:`taxoforge.scores.measures.mistakes`). Bertinetto et al. 2020 [6] measure
them on the dataset's class hierarchy, whose leaves are its classes; :func:`height_trees`
decides that hierarchy for every row of a samples table, by one of two rules
(docs/method.md#how-bad-the-mistakes-are):

``labels`` (default)  the tree spanned by the dataset's label set and its ancestors: the
                      labels given for it (``label_set``) with any ground truth of the group
                      the set lacks, else the ground truths of that **model × dataset**'s own
                      rows (every prompt of it). Another model's rows never enter: scoring a
                      model alone or beside others gives it the same heights.
``tree``              the whole taxonomy (fixed by its version alone).

Each height tree has an id (:func:`height_tree_id`): ``tree``, or ``labels:`` and the first
12 hex digits of the SHA-256 of its sorted class ids. Samples carry it (``height_tree``) and
``run.json`` lists them (``heights``), so ``taxoforge compare`` can refuse to compare
severities measured on different trees.

References
----------
Numbers of docs/references.md: [6] Bertinetto et al. 2020 (mistake severity, on the
dataset's class hierarchy).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["HEIGHTS", "HEIGHT_KEYS", "HeightTree", "node_heights", "lca_nodes", "height_tree_id", "height_trees",
           "height_record"]

#: Where heights are measured: the tree the label set spans (default), or the whole tree.
HEIGHTS = ("labels", "tree")
#: The rows that share a label set when none is given: one model's rows of one dataset.
HEIGHT_KEYS = ("model", "dataset")


def node_heights(tree, classes=None) -> np.ndarray:
    """The height of every node: edges on the longest path down to a leaf.

    Parameters
    ----------
    tree : taxoforge.trees.taxonomy.Taxonomy
        The tree.
    classes : array_like of int, optional
        Node indexes of the classes (ground truths): heights are measured on the tree they
        span (them and their ancestors), whose leaves are classes. None: on the whole tree.

    Returns
    -------
    numpy.ndarray of int64
        One height per node; -1 for nodes off the spanned tree.

    Examples
    --------
    >>> import polars as pl
    >>> from taxoforge.trees.taxonomy import Taxonomy
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1"], "parent_id": [None, "r", "r", "a"]}))
    >>> node_heights(t).tolist()                      # ids in order a, a1, b, r
    [1, 0, 0, 2]
    >>> node_heights(t, t.index_of(["a", "b"])).tolist()
    [0, -1, 0, 1]
    """
    tax = tree
    parent, depth = tax.parent_idx, tax.depth_arr.astype(np.int64)
    n = len(parent)
    deepest = np.full(n, -1, dtype=np.int64)  # deepest class (or leaf) depth at or below each node
    if classes is None:
        order = np.argsort(-depth, kind="stable")
        deepest[:] = depth
        d_sorted = depth[order]
        bounds = np.flatnonzero(np.diff(d_sorted)) + 1
        for level in np.split(order, bounds):  # deepest level first: children before parents
            p = parent[level]
            ok = p >= 0
            np.maximum.at(deepest, p[ok], deepest[level[ok]])
    else:
        cur = np.unique(np.asarray(classes, dtype=np.int64))
        val = depth[cur]
        while len(cur):
            np.maximum.at(deepest, cur, val)
            nxt = parent[cur]
            keep = nxt >= 0
            cur, val = nxt[keep], val[keep]
            if len(cur) > 1:  # many classes share ancestors: carry the largest value once per node
                order = np.lexsort((-val, cur))
                cur, val = cur[order], val[order]
                first = np.ones(len(cur), dtype=bool)
                first[1:] = cur[1:] != cur[:-1]
                cur, val = cur[first], val[first]
    return np.where(deepest >= 0, deepest - depth, -1)


def lca_nodes(tree, gt_idx, depth_lca) -> np.ndarray:
    """The LCA node of each pair, given its depth: the ground truth's ancestor at that depth.

    Climbs from the ground truths (steps of the pairs' size, no whole-tree index is built).

    Parameters
    ----------
    tree : taxoforge.trees.taxonomy.Taxonomy
    gt_idx : array_like of int
        Ground-truth node indexes.
    depth_lca : array_like of int
        The depth of each pair's LCA (:func:`taxoforge.scores.measures.hierarchical.hierarchical_scores`).

    Returns
    -------
    numpy.ndarray of int64
    """
    tax = tree
    cur = np.asarray(gt_idx, dtype=np.int64).copy()
    target = np.asarray(depth_lca, dtype=np.int64)
    d = tax.depth_arr[cur].astype(np.int64)
    while (m := d > target).any():
        cur[m] = tax.parent_idx[cur[m]]
        d[m] -= 1
    return cur


def height_tree_id(class_ids) -> str:
    """The id of the tree a set of classes spans: ``labels:`` and the first 12 hex digits of
    the SHA-256 of the sorted, distinct class ids (one a line).

    Parameters
    ----------
    class_ids : iterable of str
        The classes' node ids.

    Returns
    -------
    str

    Examples
    --------
    >>> height_tree_id(["b", "a", "a"]) == height_tree_id(["a", "b"])
    True
    >>> height_tree_id(["a", "b"])
    'labels:7e18f737311b'
    """
    text = "\n".join(sorted({str(c) for c in class_ids}))
    return "labels:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class HeightTree:
    """One tree heights are measured on.

    Attributes
    ----------
    tree_id : str
        ``tree`` or ``labels:<12 hex>`` (:func:`height_tree_id`).
    classes : int
        Its classes (0 for the whole tree).
    heights : numpy.ndarray
        The height of every node of the taxonomy on it (-1 off it).
    """

    tree_id: str
    classes: int
    heights: np.ndarray


def height_trees(samples: pl.DataFrame, tree, *, heights: str = "labels", label_set=None,
                 keys=HEIGHT_KEYS) -> tuple[np.ndarray, list[HeightTree]]:
    """The height tree of every row of ``samples`` (module docstring).

    Parameters
    ----------
    samples : polars.DataFrame
        ``gt_node``; ``gt_partial`` (partial ground truths are no classes, unless a group has
        nothing else) and the ``keys`` columns when present.
    tree : taxoforge.trees.taxonomy.Taxonomy
        The tree.
    heights : {"labels", "tree"}
        The rule (``ground_truths``, its former name, is ``labels``).
    label_set : sequence of str, optional
        Node ids of the dataset's label set, when given.
    keys : sequence of str
        The columns whose groups have their own label set when none is given.

    Returns
    -------
    (numpy.ndarray, list of HeightTree)
        Each row's index into the list, and the distinct trees (groups with the same classes
        share one).

    Raises
    ------
    ValueError
        For an unknown rule.
    """
    if heights == "ground_truths":
        heights = "labels"
    if heights not in HEIGHTS:
        raise ValueError(f"heights must be one of {HEIGHTS}, not {heights!r}")
    tax = tree
    n = samples.height
    if heights == "tree":
        return np.zeros(n, np.int64), [HeightTree("tree", 0, node_heights(tax))]
    g = tax.index_of(samples["gt_node"].cast(pl.String).to_list()) if n else np.zeros(0, np.int64)
    full = ~samples["gt_partial"].fill_null(False).to_numpy() if "gt_partial" in samples.columns else np.ones(n, bool)
    given = np.unique(tax.index_of([str(x) for x in label_set])) if label_set is not None and len(label_set) else \
        np.zeros(0, np.int64)
    present = [k for k in keys if k in samples.columns]
    if present and n:
        key = pl.concat_str([pl.col(k).cast(pl.String).fill_null("\x00") for k in present], separator="\x1f")
        group = samples.select(key.rank("dense") - 1).to_series().to_numpy().astype(np.int64)
    else:
        group = np.zeros(n, np.int64)
    row_tree = np.zeros(n, np.int64)
    trees: list[HeightTree] = []
    seen: dict[bytes, int] = {}
    for k in np.unique(group):
        rows = group == k
        own = g[rows & full] if (rows & full).any() else g[rows]
        classes = np.union1d(given, own) if label_set is not None else np.unique(own)
        sig = classes.tobytes()
        if sig not in seen:
            seen[sig] = len(trees)
            trees.append(HeightTree(height_tree_id(tax.ids_at(classes)), len(classes),
                                    node_heights(tax, classes)))
        row_tree[rows] = seen[sig]
    if not trees:
        trees.append(HeightTree(height_tree_id([]), 0, np.full(len(tax), -1, np.int64)))
    return row_tree, trees


def height_record(samples: pl.DataFrame, *, heights: str = "labels", label_set_given: bool = False,
                  keys=HEIGHT_KEYS) -> dict:
    """What ``run.json`` says of the heights (``heights``): the rule, where the label set came
    from, and each model × dataset's height tree with its number of classes.

    Parameters
    ----------
    samples : polars.DataFrame
        A samples table with ``height_tree`` (and ``height_classes``).
    heights : str
        The rule used.
    label_set_given : bool
        Whether the label set was given (``--label-set``).
    keys : sequence of str
        The group keys listed.

    Returns
    -------
    dict
    """
    rule = "labels" if heights == "ground_truths" else heights
    source = ("the whole taxonomy" if rule == "tree" else "the label set given (--label-set)" if label_set_given
              else "the ground truths of each model × dataset (its own rows only)")
    present = [k for k in keys if k in samples.columns]
    trees = []
    if samples.height and "height_tree" in samples.columns:
        cols = [*present, "height_tree", *(["height_classes"] if "height_classes" in samples.columns else [])]
        trees = samples.select(cols).unique(maintain_order=True).sort(present or "height_tree").to_dicts()
    return {"rule": rule, "classes_from": source, "trees": trees}
