"""The granularity evaluation of Xu et al. 2024 [4]: score propagation to ancestors, per-level mAP, and the
two-level (tiered) benchmark (Xu et al., "Benchmarking Zero-Shot Recognition with
Vision-Language Models: Challenges on Granularity and Specificity", §4 and App. A).

Input
    ``scores``: one row per image, one column per class (``columns``: node ids or names) —
    a classifier's probabilities, or per-class image–text similarities. Leaf (fine) classes
    are required; ancestor (coarse) classes may have their own *raw* scores (the score of
    the ancestor's own prompt).

Propagation (§4.1, Fig. 2) over the evaluation tree (the classes and all their ancestors)
    ``max-child`` (eq. 2): ``S(y) = max over the children c of y of S_raw(c)``; a child
    without a raw score contributes its own propagated score (so a tree whose internal
    nodes have no raw scores still gets a value everywhere).
    ``max-leaf`` (eq. 3): ``S(y) = max over the leaf classes under y of their score``.

Evaluation (§4.1)
    Multi-label: an image is a positive of its ground truth and of every ancestor of it.
    Average precision per class (scikit-learn's step-wise definition: the precision at each
    distinct score threshold weighted by the recall gained there; classes with no positive
    image are left out), mean AP over the leaves, over the ancestors with raw scores, and
    over the ancestors with each propagation (:func:`granularity_table`, Table 2), and per
    depth level (:func:`per_level_map`, Fig. 3).

Tiered benchmark (App. A)
    :func:`tiered_classes` groups fine classes under coarse classes (explicit coarse nodes,
    e.g. tiered-ImageNet's 34 categories, or every fine class's ancestor at a depth or rank);
    :func:`tiered_accuracy` reports top-1 accuracy of the fine classes (``FG_direct``), of the
    coarse classes from their own prompts (``CG_direct``), from the predicted fine class's
    parent (``CG_FG-label``) and from any other coarse scores given (e.g. ``CG_FG-emb``, the
    mean of the children's prompt embeddings: :func:`coarse_prompt_embeddings`), with the
    differences to ``CG_direct``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from taxoforge.links.tree_labels import node_indexes
from taxoforge.snapshots.open import open_taxonomy

__all__ = ["EvaluationTree", "propagate_scores", "average_precision", "per_level_map", "granularity_table",
           "tiered_classes", "tiered_accuracy", "coarse_prompt_embeddings", "METHODS"]

METHODS = ("max-child", "max-leaf")


class EvaluationTree:
    """The classes of a score matrix and all their ancestors, as compact index arrays.

    Parameters
    ----------
    tree : object
        The taxonomy (a :class:`~taxoforge.trees.taxonomy.Taxonomy` or anything it
        accepts).
    columns : Sequence
        The classes of the score matrix, one per column.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.
    """

    def __init__(self, tree, columns: Sequence, node_ref: str = "auto") -> None:
        self.tree = open_taxonomy(tree)
        self.class_idx = node_indexes(self.tree, list(columns), node_ref=node_ref, what="score column", partial=False)
        if len(set(self.class_idx.tolist())) != len(self.class_idx):
            raise ValueError("two score columns name the same node")
        t = self.tree
        mark = np.zeros(len(t), dtype=bool)
        frontier = np.unique(self.class_idx)
        while len(frontier):
            frontier = frontier[~mark[frontier]]
            mark[frontier] = True
            frontier = t.parent_idx[frontier]
            frontier = np.unique(frontier[frontier >= 0])
        self.nodes = np.flatnonzero(mark)                       # tree indexes, ascending
        self.pos = {int(v): i for i, v in enumerate(self.nodes.tolist())}
        par = t.parent_idx[self.nodes]
        self.parent = np.array([self.pos.get(int(p), -1) for p in par.tolist()], dtype=np.int64)
        self.depth = t.depth_arr[self.nodes].astype(np.int64)
        has_child = np.zeros(len(self.nodes), dtype=bool)
        has_child[self.parent[self.parent >= 0]] = True
        self.is_leaf = ~has_child
        self.col_of = np.full(len(self.nodes), -1, dtype=np.int64)
        for c, v in enumerate(self.class_idx.tolist()):
            self.col_of[self.pos[v]] = c
        missing = self.is_leaf & (self.col_of < 0)
        if missing.any():  # pragma: no cover - a leaf of the evaluation tree is always a class
            raise ValueError("a leaf of the evaluation tree has no score column")

    @property
    def ids(self) -> np.ndarray:
        """The node id of every node of the evaluation tree.

        Returns
        -------
        numpy.ndarray
            Node ids, in the tree's index order.
        """
        return self.tree.ids[self.nodes]

    def levels_bottom_up(self):
        """The evaluation tree's nodes grouped by depth, deepest first.

        Returns
        -------
        list of numpy.ndarray
            One array of node positions per depth.
        """
        order = np.argsort(-self.depth, kind="stable")
        d = self.depth[order]
        return np.split(order, np.flatnonzero(np.diff(d)) + 1)


def propagate_scores(scores, columns: Sequence, tree, method: str = "max-leaf", *, node_ref: str = "auto"):
    """Scores of every node of the evaluation tree: ``(matrix, node_ids)`` with one column per
    node (leaves keep their raw score; module docstring for ``max-child`` and ``max-leaf``).

    >>> tree = {"r": None, "feline": "r", "lion": "feline", "cat": "feline", "big": "feline", "tiger": "big"}
    >>> s, ids = propagate_scores([[0.2, 0.5, 0.1, 0.9]], ["lion", "cat", "big", "tiger"], tree, "max-child")
    >>> v = dict(zip(ids, s[0].round(2).tolist()))
    >>> v["feline"], v["big"]       # feline: max of its children's raw scores; big's raw 0.1 counts
    (0.5, 0.9)
    >>> s, ids = propagate_scores([[0.2, 0.5, 0.1, 0.9]], ["lion", "cat", "big", "tiger"], tree, "max-leaf")
    >>> dict(zip(ids, s[0].round(2).tolist()))["feline"]
    0.9

    Parameters
    ----------
    scores : object
        ``(samples, classes)`` scores of the leaf classes.
    columns : Sequence
        The class of each column.
    tree : object
        The tree.
    method : str, optional
        ``"max-leaf"`` or ``"max-child"``.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.

    Returns
    -------
    object
        Scores of every node of the evaluation tree: ``(matrix, node_ids)`` with one
        column per node (leaves keep their raw score; module docstring for ``max-child``
        and ``max-leaf``).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    et = columns if isinstance(columns, EvaluationTree) else EvaluationTree(tree, columns, node_ref)
    raw = np.asarray(scores, dtype=np.float64)
    if raw.ndim != 2 or raw.shape[1] != len(et.class_idx):
        raise ValueError(f"scores has shape {raw.shape}; expected (images, {len(et.class_idx)}) for the columns given")
    n_img, n = raw.shape[0], len(et.nodes)
    out = np.full((n_img, n), -np.inf)
    has_raw = et.col_of >= 0
    out[:, et.is_leaf] = raw[:, et.col_of[et.is_leaf]]
    # the value a node passes up to its parent: its raw score (max-child, where it has one)
    # or its propagated score; levels are processed deepest first, so a node is final
    # before its parent reads it
    for lvl in et.levels_bottom_up():
        if method == "max-child":
            src = np.where(has_raw[lvl], et.col_of[lvl], -1)
            vals = np.where(src[None, :] >= 0, raw[:, np.maximum(src, 0)], out[:, lvl])
        else:
            vals = out[:, lvl]
        par = et.parent[lvl]
        keep = par >= 0
        if keep.any():
            _scatter_max(out, par[keep], vals[:, keep])
    return out, et.ids.tolist()


def _scatter_max(out: np.ndarray, parents: np.ndarray, vals: np.ndarray) -> None:
    order = np.argsort(parents, kind="stable")
    p, v = parents[order], vals[:, order]
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
    red = np.maximum.reduceat(v, starts, axis=1)
    tgt = p[starts]
    out[:, tgt] = np.maximum(out[:, tgt], red)


def average_precision(y_true, scores) -> np.ndarray:
    """Average precision of every column (scikit-learn's ``average_precision_score``, ties
    grouped at distinct thresholds); NaN for a column without positives.

    >>> average_precision([[1], [0], [1], [0]], [[0.9], [0.8], [0.7], [0.1]]).round(4).tolist()
    [0.8333]

    Parameters
    ----------
    y_true : object
        ``(samples, classes)`` 0/1 labels.
    scores : object
        ``(samples, classes)`` scores.

    Returns
    -------
    numpy.ndarray
        Average precision of every column (scikit-learn's ``average_precision_score``,
        ties grouped at distinct thresholds); NaN for a column without positives.
    """
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim == 1:
        y, s = y[:, None], s[:, None]
    if y.shape != s.shape:
        raise ValueError(f"y_true has shape {y.shape}, scores {s.shape}")
    out = np.full(y.shape[1], np.nan)
    for j in range(y.shape[1]):
        pos = int(y[:, j].sum())
        if pos == 0:
            continue
        order = np.argsort(-s[:, j], kind="mergesort")
        ss, yy = s[order, j], y[order, j]
        last = np.r_[np.flatnonzero(np.diff(ss)), len(ss) - 1]
        tps = np.cumsum(yy)[last]
        precision = tps / (last + 1)
        recall = tps / pos
        out[j] = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    return out


def _positives(et: EvaluationTree, y_true, node_ref: str) -> np.ndarray:
    gt = node_indexes(et.tree, list(y_true), node_ref=node_ref, what="y_true value")
    gpos = np.array([et.pos.get(int(g), -1) for g in gt.tolist()])
    if (gpos < 0).any():
        bad = np.flatnonzero(gpos < 0)[0]
        raise ValueError(f"ground truth {et.tree.ids[gt[bad]]!r} (image {bad}) is not in the classes' tree")
    pos = np.zeros((len(gt), len(et.nodes)), dtype=bool)
    cur = gpos.copy()
    rows = np.arange(len(gt))
    while (cur >= 0).any():
        ok = cur >= 0
        pos[rows[ok], cur[ok]] = True
        cur[ok] = et.parent[cur[ok]]
    return pos


def per_level_map(scores, columns: Sequence, y_true, tree, *, node_ref: str = "auto") -> pl.DataFrame:
    """mAP per depth level and kind of score (Xu et al. 2024 [4] Fig. 3): ``kind`` = ``leaf`` (leaf
    classes, raw), ``ancestor_raw`` (ancestors with their own raw scores), ``ancestor_max-child``,
    ``ancestor_max-leaf``; columns ``kind``, ``level``, ``classes`` (with ≥ 1 positive), ``mAP``.
    The root (every image is its positive) is left out.

    Parameters
    ----------
    scores : object
        ``(samples, classes)`` scores.
    columns : Sequence
        The class of each column.
    y_true : object
        The ground truth of each sample.
    tree : object
        The tree.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.

    Returns
    -------
    polars.DataFrame
        MAP per depth level and kind of score (Xu et al. 2024 [4] Fig. 3): ``kind`` =
        ``leaf`` (leaf classes, raw), ``ancestor_raw`` (ancestors with their own raw
        scores), ``ancestor_max-child``, ``ancestor_max-leaf``; columns ``kind``,
        ``level``, ``classes`` (with ≥ 1 positive), ``mAP``.
    """
    et = EvaluationTree(tree, columns, node_ref)
    pos = _positives(et, y_true, node_ref)
    raw = np.asarray(scores, dtype=np.float64)
    rows = []
    leaf_ap = np.full(len(et.nodes), np.nan)
    leaf_ap[et.is_leaf] = average_precision(pos[:, et.is_leaf], raw[:, et.col_of[et.is_leaf]])
    kinds = {"leaf": leaf_ap}
    anc = ~et.is_leaf & (et.parent >= 0)
    raw_anc = anc & (et.col_of >= 0)
    ap = np.full(len(et.nodes), np.nan)
    if raw_anc.any():
        ap[raw_anc] = average_precision(pos[:, raw_anc], raw[:, et.col_of[raw_anc]])
        kinds["ancestor_raw"] = ap
    for m in METHODS:
        prop, _ = propagate_scores(raw, et, None, m)
        a = np.full(len(et.nodes), np.nan)
        a[anc] = average_precision(pos[:, anc], prop[:, anc])
        kinds[f"ancestor_{m}"] = a
    for kind, vals in kinds.items():
        for d in sorted(set(et.depth.tolist())):
            sel = (et.depth == d) & ~np.isnan(vals)
            if sel.any():
                rows.append({"kind": kind, "level": d, "classes": int(sel.sum()), "mAP": float(vals[sel].mean())})
    return pl.DataFrame(rows, schema={"kind": pl.String, "level": pl.Int64, "classes": pl.Int64, "mAP": pl.Float64})


def granularity_table(scores, columns: Sequence, y_true, tree, *, node_ref: str = "auto") -> dict:
    """Xu et al. 2024 [4] Table 2 for one model: mAP of the leaves, of the ancestors with raw scores
    (``Anc_raw``, when given), and of the ancestors by max-child / max-leaf propagation with
    their Δ to ``Anc_raw``.

    Parameters
    ----------
    scores : object
        ``(samples, classes)`` scores of one model.
    columns : Sequence
        The class of each column.
    y_true : object
        The ground truth of each sample.
    tree : object
        The tree.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.

    Returns
    -------
    dict
        Xu et al. 2024 [4] Table 2 for one model: mAP of the leaves, of the ancestors
        with raw scores (``Anc_raw``, when given), and of the ancestors by max-child /
        max-leaf propagation with their Δ to ``Anc_raw``.
    """
    et = EvaluationTree(tree, columns, node_ref)
    pos = _positives(et, y_true, node_ref)
    raw = np.asarray(scores, dtype=np.float64)
    out = {"leaves_mAP": float(np.nanmean(average_precision(pos[:, et.is_leaf], raw[:, et.col_of[et.is_leaf]])))}
    anc = ~et.is_leaf & (et.parent >= 0)
    raw_anc = anc & (et.col_of >= 0)
    out["ancestors"] = int(anc.sum())
    out["ancestors_with_raw_scores"] = int(raw_anc.sum())
    base = None
    if raw_anc.any():
        base = float(np.nanmean(average_precision(pos[:, raw_anc], raw[:, et.col_of[raw_anc]])))
        out["anc_raw_mAP"] = base
    for m in METHODS:
        prop, _ = propagate_scores(raw, et, None, m)
        sel = raw_anc if raw_anc.any() else anc  # Δ on the same ancestors as Anc_raw
        v = float(np.nanmean(average_precision(pos[:, sel], prop[:, sel]))) if sel.any() else float("nan")
        out[f"anc_{m}_mAP"] = v
        if base is not None:
            out[f"anc_{m}_delta"] = v - base
    return out


# ---------------------------------------------------------------------------- tiered
def tiered_classes(tree, fine, *, coarse: Sequence | None = None, depth: int | None = None, rank: str | None = None,
                   node_ref: str = "auto") -> pl.DataFrame:
    """Two-level label set: every fine class with its coarse class (``fine_node``,
    ``fine_label``, ``coarse_node``, ``coarse_label``). Give the coarse classes as nodes
    (``coarse``: each fine class goes under the one among its ancestors; none → left out;
    two → error), or as every fine class's ancestor at a ``depth`` or ``rank``.

    >>> tree = {"r": None, "cat": "r", "dog": "r", "lion": "cat", "tabby": "cat", "husky": "dog"}
    >>> tiered_classes(tree, ["lion", "tabby", "husky"], depth=1)["coarse_node"].to_list()
    ['cat', 'cat', 'dog']

    Parameters
    ----------
    tree : object
        The tree.
    fine : object
        The fine classes.
    coarse : Sequence, optional
        Each fine class goes under the one among its ancestors.
    depth : int, optional
        The depth of the coarse classes, when given by depth.
    rank : str, optional
        A taxonomic rank.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.

    Returns
    -------
    polars.DataFrame
        Two-level label set: every fine class with its coarse class (``fine_node``,
        ``fine_label``, ``coarse_node``, ``coarse_label``).
    """
    if sum(x is not None for x in (coarse, depth, rank)) != 1:
        raise ValueError("give exactly one of coarse, depth and rank")
    t = open_taxonomy(tree)
    f = node_indexes(t, list(fine), node_ref=node_ref, what="fine class", partial=False)
    if depth is not None:
        c = t.ancestor_at_depth(f, depth)
        c = np.where(c == f, -1, c)
    elif rank is not None:
        c = t.ancestor_at_rank(f, rank)
        c = np.where(c == f, -1, c)
    else:
        cidx = node_indexes(t, list(coarse), node_ref=node_ref, what="coarse class", partial=False)
        c = np.full(len(f), -1, dtype=np.int64)
        for ci in cidx.tolist():
            under = t.is_ancestor_idx(np.full(len(f), ci), f) & (f != ci)
            clash = under & (c >= 0)
            if clash.any():
                i = int(np.flatnonzero(clash)[0])
                raise ValueError(f"fine class {t.ids[f[i]]!r} lies under two coarse classes: "
                                 f"{t.ids[c[i]]!r} and {t.ids[ci]!r}")
            c = np.where(under, ci, c)
    keep = c >= 0
    return pl.DataFrame({"fine_node": t.ids[f[keep]].tolist(), "fine_label": t.labels[f[keep]].tolist(),
                         "coarse_node": t.ids[c[keep]].tolist(), "coarse_label": t.labels[c[keep]].tolist()},
                        schema={k: pl.String for k in ("fine_node", "fine_label", "coarse_node", "coarse_label")})


def coarse_prompt_embeddings(fine_embeddings, classes: pl.DataFrame) -> tuple[np.ndarray, list[str]]:
    """App. A's ``CG_FG-emb``: each coarse class's prompt embedding is the mean of its fine
    classes' prompt embeddings (rows of ``fine_embeddings`` in ``classes`` order). Returns
    ``(embeddings, coarse_nodes)``.

    Parameters
    ----------
    fine_embeddings : object
        One prompt embedding per fine class, in ``classes`` order.
    classes : polars.DataFrame
        The two-level label set (:func:`tiered_classes`).

    Returns
    -------
    tuple[numpy.ndarray, list[str]]
        App.
    """
    e = np.asarray(fine_embeddings, dtype=np.float64)
    if e.shape[0] != classes.height:
        raise ValueError(f"{e.shape[0]} fine embeddings for {classes.height} fine classes")
    coarse = sorted(set(classes["coarse_node"].to_list()))
    pos = {c: i for i, c in enumerate(coarse)}
    k = np.array([pos[c] for c in classes["coarse_node"].to_list()])
    out = np.zeros((len(coarse), e.shape[1]))
    np.add.at(out, k, e)
    out /= np.bincount(k, minlength=len(coarse))[:, None]
    return out, coarse


def tiered_accuracy(fine_scores, y_true, classes: pl.DataFrame, *, coarse_scores: dict | None = None,
                    coarse_columns: Sequence | None = None, tree=None, node_ref: str = "auto") -> dict:
    """Top-1 accuracies of the two-level benchmark (module docstring).

    ``fine_scores``: images × fine classes, columns in ``classes`` order; ``y_true``: each
    image's fine class (node id or name); ``coarse_scores``: ``{name: images × coarse}``
    matrices (e.g. ``{"CG_direct": …, "CG_FG-emb": …}``), columns in ``coarse_columns``
    order (default: the sorted coarse node ids).

    Parameters
    ----------
    fine_scores : object
        Images × fine classes, columns in ``classes`` order.
    y_true : object
        The fine ground truth of each sample.
    classes : polars.DataFrame
        The two-level label set (:func:`tiered_classes`).
    coarse_scores : dict, optional
        Scores of the coarse classes by their own prompts, by name of the prompt set.
    coarse_columns : Sequence, optional
        The coarse class of each column of the coarse scores.
    tree : optional
        The tree.
    node_ref : str, optional
        How values name nodes: ``"auto"`` (node ids where they are, else labels),
        ``"id"`` or ``"label"``.

    Returns
    -------
    dict
        Top-1 accuracies of the two-level benchmark (module docstring).
    """
    fine_nodes = classes["fine_node"].to_list()
    coarse_of = dict(zip(fine_nodes, classes["coarse_node"].to_list()))
    fs = np.asarray(fine_scores, dtype=np.float64)
    if fs.shape[1] != len(fine_nodes):
        raise ValueError(f"fine_scores has {fs.shape[1]} columns for {len(fine_nodes)} fine classes")
    yt = list(y_true)
    if tree is not None:
        t = open_taxonomy(tree)
        yt = t.ids[node_indexes(t, yt, node_ref=node_ref, what="y_true value")].tolist()
    unknown = [y for y in yt if y not in coarse_of]
    if unknown:
        raise ValueError(f"{len(unknown)} ground truth(s) are not fine classes of the tiered set, e.g. {unknown[0]!r}")
    pred_fine = [fine_nodes[i] for i in fs.argmax(axis=1).tolist()]
    gt_coarse = [coarse_of[y] for y in yt]
    out = {"images": len(yt), "fine_classes": len(fine_nodes), "coarse_classes": len(set(coarse_of.values())),
           "FG_direct": float(np.mean([p == y for p, y in zip(pred_fine, yt)])),
           "CG_FG-label": float(np.mean([coarse_of[p] == c for p, c in zip(pred_fine, gt_coarse)]))}
    cols = list(coarse_columns) if coarse_columns is not None else sorted(set(coarse_of.values()))
    for name, m in (coarse_scores or {}).items():
        m = np.asarray(m, dtype=np.float64)
        if m.shape != (len(yt), len(cols)):
            raise ValueError(f"coarse scores {name!r} have shape {m.shape}; expected {(len(yt), len(cols))}")
        pred = [cols[i] for i in m.argmax(axis=1).tolist()]
        out[name] = float(np.mean([p == c for p, c in zip(pred, gt_coarse)]))
    if "CG_direct" in out:
        for k in [k for k in out if k.startswith("CG_") and k != "CG_direct"]:
            out[f"{k}_delta"] = out[k] - out["CG_direct"]
    return out
