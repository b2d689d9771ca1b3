"""How bad the mistakes are: where a wrong answer meets the truth in the tree.

Over the **wrong answers** of each model × dataset × prompt — answered (not an abstention),
not the ground-truth node, with a full ground truth — this module reports:

``lca_depth``         the depth of the lowest common ancestor (LCA) of the answer and the
                      truth (root = 0): how far down the two agree;
``tree_distance``     the edges of the path answer → LCA → truth,
                      ``depth(pred) + depth(gt) − 2·depth(lca)``;
``mistake_severity``  the **height of the LCA**, the measure of Bertinetto et al. [1]_ after
                      the ILSVRC hierarchical cost [2]_ (see below).

**Height.** The height of a node is the number of edges on the longest path from it down to
a leaf [2]_. [1]_ measures it on the dataset's class hierarchy, whose leaves are exactly the
dataset's classes (iNaturalist-19 and tieredImageNet-H, every class a leaf). Here that
hierarchy is the tree spanned by the dataset's **label set** and its ancestors
(``heights="labels"``, the default), and the label set is fixed by the dataset alone — never
by what else a call scores (docs/method.md#how-bad-the-mistakes-are):

* the labels given for it (``label_set``: ``taxoforge score --label-set FILE``), with any
  ground truth of the group the file lacks;
* else the ground truths of that **model × dataset**'s own rows (all its prompts): another
  model's rows never enter, so scoring a model alone or beside others gives the same heights.

``heights="tree"`` measures heights on the whole taxonomy instead (every leaf of the tree
counts; fixed by the taxonomy's version alone). Every sample names the tree its heights came
from (``height_tree``: ``tree``, or ``labels:`` and the first 12 hex digits of the SHA-256 of
its sorted class ids), so two runs can tell whether their severities are comparable.

On the spanned tree ``height(v) = max over classes g below v of depth(g) − depth(v)``. When
every class is a leaf at one depth — [1]_'s setting — this is ``depth(gt) − depth(lca)``, the
number of levels one climbs from the truth to meet the answer. On trees whose leaves lie at
different depths (iNaturalist with subspecies beside species; WordNet), the height of the LCA
counts the longest way down from the meeting point, not the truth's own way, exactly as the
ILSVRC cost does. A correct answer has severity 0 (distance 0 in [1]_); an abstention has
none (it is counted in the abstention rate, not as a mistake). An over-generic answer (an
ancestor of the truth) is a mistake at the answer's own height; the granularity of the
answers (:mod:`taxoforge.scores.measures.granularity`) counts those apart.

**Hierarchical distance@k** ([1]_'s "average hierarchical distance of top-k"): for answers
that carry a ranked top-k (a classifier's top-6), the mean over samples of the mean LCA
height of the first k predictions (correct ones count 0), on the same heights. A ranked entry
that names no node (a refusal, an unreadable entry) is a miss at the tree's height — the
height of the root, as an answer scored as the root would be —, never dropped; a sample with
fewer than k entries averages those it has.

**Balanced accuracy** (scikit-learn's ``balanced_accuracy_score``): the unweighted mean over
ground-truth classes of the accuracy on that class. **Per-category accuracy**: accuracy,
hP, hR and hF per value of the file's ``category`` column (VLMEvalKit's ``*_acc.csv``).

References
----------
.. [1] Bertinetto, L., Mueller, R., Tertikas, K., Samangooei, S. and Lord, N. A. (2020).
   Making Better Mistakes: Leveraging Class Hierarchies with Deep Networks. CVPR 2020,
   12506–12515 (§4, "mistake severity" and "hierarchical distance of top-k").
.. [2] Deng, J., Berg, A. C., Li, K. and Fei-Fei, L. (2010). What does classifying more than
   10,000 image categories tell us? ECCV 2010 (the hierarchical cost of ILSVRC: the height of
   the LCA, leaves at height 0).

Examples
--------
>>> import polars as pl
>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2", "b1", "a1x"],
...                            "parent_id": [None, "r", "r", "a", "a", "b", "a1"]}))
>>> s = pl.DataFrame({"model": "m", "dataset": "d", "prompt": "p", "gt_node": ["a1", "a2", "b1"],
...                   "pred_node": ["a2", "b1", "b1"], "abstained": False})
>>> s = mistake_columns(s, t)
>>> s.select("tree_distance", "mistake_severity").rows()
[(2, 1.0), (4, 2.0), (0, 0.0)]
>>> mistake_summary(s).select("mistakes", "mistake_severity", "tree_distance_mean").rows()
[(2, 1.5, 3.0)]
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.scores.measures.granularity import granularity
from taxoforge.scores.measures.heights import (HEIGHT_KEYS, HEIGHTS, height_trees, lca_nodes, node_heights)

__all__ = ["node_heights", "lca_nodes", "mistake_columns", "mistake_summary", "distance_at_k", "ranked_distances",
           "map_ranked",
           "balanced_accuracy", "category_accuracy", "MISTAKE_COLUMNS", "MISTAKE_SUMMARY_COLUMNS", "HEIGHTS",
           "GROUP_KEYS"]

GROUP_KEYS = ("model", "dataset", "prompt")
#: The per-sample columns :func:`mistake_columns` adds (``ranked_heights`` too, for ranked answers).
MISTAKE_COLUMNS = ("tree_distance", "lca_height", "mistake_severity", "height_tree", "height_classes", "granularity")
#: The per-group columns of :func:`mistake_summary`, in order.
MISTAKE_SUMMARY_COLUMNS = ("mistakes", "lca_depth_mean", "lca_depth_median", "tree_distance_mean",
                           "tree_distance_median", "mistake_severity", "mistake_severity_median")


def _taxonomy(tree):
    return getattr(tree, "taxonomy", tree)


def _depths(samples: pl.DataFrame, tax) -> pl.DataFrame:
    if all(c in samples.columns for c in ("depth_gt", "depth_pred", "depth_lca", "correct")):
        return samples
    from taxoforge.scores.measures.hierarchical import hierarchical_scores

    g = tax.index_of(samples["gt_node"].cast(pl.String).to_list())
    p = tax.index_of(samples["pred_node"].cast(pl.String).to_list())
    h = hierarchical_scores(tax, p, g)
    new = {"depth_gt": h["depth_gt"], "depth_pred": h["depth_pred"], "depth_lca": h["depth_lca"],
           "correct": h["correct"]}
    return samples.with_columns(*[pl.Series(k, v) for k, v in new.items() if k not in samples.columns])


def mistake_columns(samples: pl.DataFrame, tree, *, heights: str = "labels", label_set=None,
                    height_keys=HEIGHT_KEYS) -> pl.DataFrame:
    """``samples`` with the per-sample columns of :data:`MISTAKE_COLUMNS`.

    Parameters
    ----------
    samples : polars.DataFrame
        A samples table (``gt_node``, ``pred_node``; the depth columns and ``correct`` are
        computed when missing; ``abstained``, ``map_stage``, ``gt_partial`` and
        ``ranked_nodes`` are used when present).
    tree : taxoforge.trees.taxonomy.Taxonomy
        The tree the nodes are on (or an object holding it as ``.taxonomy``).
    heights : {"labels", "tree"}
        Measure heights on the tree the label set spans or on the whole tree
        (:func:`~taxoforge.scores.measures.heights.height_trees`).
    label_set : sequence of str, optional
        Node ids of the dataset's label set, when given; else each ``height_keys`` group's
        own ground truths.
    height_keys : sequence of str
        The columns whose groups have their own label set (default model × dataset);
        ignored when absent.

    Returns
    -------
    polars.DataFrame
        With ``tree_distance`` (edges answer → LCA → truth), ``lca_height`` (height of the
        LCA), ``mistake_severity`` (0 for a correct answer, the LCA's height for a wrong
        one, null for an abstention), ``height_tree`` and ``height_classes`` (the tree the
        heights came from, :mod:`~taxoforge.scores.measures.heights`), ``granularity``
        (:mod:`~taxoforge.scores.measures.granularity`) and, with ``ranked_nodes``,
        ``ranked_heights`` (each ranked entry's LCA height: 0 when right, null where there
        is no entry).
    """
    tax = _taxonomy(tree)
    s = _depths(samples, tax)
    n = s.height
    if not n:
        return s.with_columns(pl.lit(None, dtype=pl.Int64).alias("tree_distance"),
                              pl.lit(None, dtype=pl.Int64).alias("lca_height"),
                              pl.lit(None, dtype=pl.Float64).alias("mistake_severity"),
                              pl.lit(None, dtype=pl.String).alias("height_tree"),
                              pl.lit(None, dtype=pl.Int64).alias("height_classes"),
                              pl.lit(None, dtype=pl.String).alias("granularity"))
    row_tree, trees = height_trees(s, tax, heights=heights, label_set=label_set, keys=height_keys)
    g = tax.index_of(s["gt_node"].cast(pl.String).to_list())
    d_lca = s["depth_lca"].to_numpy().astype(np.int64)
    lca = lca_nodes(tax, g, d_lca)
    height = np.full(n, -1, dtype=np.int64)
    for k, ht in enumerate(trees):
        rows = row_tree == k
        height[rows] = ht.heights[lca[rows]]
    dist = s["depth_pred"].to_numpy() + s["depth_gt"].to_numpy() - 2 * d_lca
    correct = s["correct"].to_numpy().astype(bool)
    abstained = s["abstained"].to_numpy().astype(bool) if "abstained" in s.columns else np.zeros(n, dtype=bool)
    sev = np.where(correct, 0.0, np.maximum(height, 0).astype(np.float64))
    out = s.with_columns(pl.Series("tree_distance", dist.astype(np.int64)),
                         pl.Series("lca_height", height),
                         pl.Series("mistake_severity", sev).set(pl.Series(abstained), None),
                         pl.Series("height_tree", [t.tree_id for t in trees], dtype=pl.String).gather(row_tree),
                         pl.Series("height_classes", [t.classes for t in trees], dtype=pl.Int64).gather(row_tree))
    out = out.with_columns(granularity(out))
    if "ranked_nodes" in s.columns:
        full = ~s["gt_partial"].fill_null(False).to_numpy() if "gt_partial" in s.columns else np.ones(n, bool)
        out = out.with_columns(_ranked_heights(s["ranked_nodes"], g, tax, row_tree, trees, full))
    return out


def _ranked_heights(ranked_nodes: pl.Series, g: np.ndarray, tax, row_tree: np.ndarray, trees,
                    full: np.ndarray) -> pl.Series:
    """``ranked_heights``: :func:`distance_at_k` of each row's ranked nodes on its height tree
    (null for a row with a partial ground truth, which has no class to measure against)."""
    lists = ranked_nodes.to_list()
    width = max((len(x) for x in lists if x is not None), default=0)
    ranked = np.full((len(lists), width), -1, dtype=np.int64)
    flat = [(i, j, v) for i, x in enumerate(lists) if x is not None for j, v in enumerate(x) if v is not None]
    if flat:
        ii, jj, vv = zip(*flat)
        ranked[np.array(ii), np.array(jj)] = tax.index_of(list(vv))
    dist = np.full(ranked.shape, np.nan)
    for k, ht in enumerate(trees):
        rows = row_tree == k
        if rows.any() and width:
            dist[rows] = distance_at_k(tax, g[rows], ranked[rows], ht.heights)
    out = [None if x is None or not full[i] else [None if np.isnan(v) else float(v) for v in dist[i, :len(x)]]
           for i, x in enumerate(lists)]
    return pl.Series("ranked_heights", out, dtype=pl.List(pl.Float64))


def _wrong(samples: pl.DataFrame) -> pl.Expr:
    """Rows that are mistakes: answered, not the ground-truth node, with a full ground truth."""
    e = ~pl.col("correct")
    if "abstained" in samples.columns:
        e = e & ~pl.col("abstained")
    if "gt_partial" in samples.columns:
        e = e & ~pl.col("gt_partial")
    return e


def mistake_summary(samples: pl.DataFrame, by=GROUP_KEYS) -> pl.DataFrame:
    """Per group of ``by``: the columns of :data:`MISTAKE_SUMMARY_COLUMNS` over its wrong answers.

    Parameters
    ----------
    samples : polars.DataFrame
        A samples table with :data:`MISTAKE_COLUMNS` (:func:`mistake_columns`), ``depth_lca``
        and ``correct``.
    by : sequence of str
        Group keys (those the table lacks are left out).

    Returns
    -------
    polars.DataFrame
        ``mistakes`` (their number), the mean and median LCA depth and tree distance, and
        ``mistake_severity`` (the mean height of the LCA: [1]_'s "average mistake
        severity") with its median. Null where a group made no mistake.
    """
    keys = [k for k in by if k in samples.columns]
    if "mistake_severity" not in samples.columns:
        raise ValueError("the samples table has no mistake_severity column: make it with mistake_columns(samples, tree)")
    w = _wrong(samples)
    aggs = [w.sum().cast(pl.Int64).alias("mistakes"),
            pl.col("depth_lca").filter(w).mean().alias("lca_depth_mean"),
            pl.col("depth_lca").filter(w).median().cast(pl.Float64).alias("lca_depth_median"),
            pl.col("tree_distance").filter(w).mean().alias("tree_distance_mean"),
            pl.col("tree_distance").filter(w).median().cast(pl.Float64).alias("tree_distance_median"),
            pl.col("mistake_severity").filter(w).mean().alias("mistake_severity"),
            pl.col("mistake_severity").filter(w).median().cast(pl.Float64).alias("mistake_severity_median")]
    if not keys:
        return samples.select(aggs)
    return samples.group_by(keys, maintain_order=True).agg(aggs).sort(keys)


def distance_at_k(tree, gt_idx, ranked_idx, heights: np.ndarray | None = None) -> np.ndarray:
    """The LCA height of every ranked prediction against its ground truth.

    Parameters
    ----------
    tree : taxoforge.trees.taxonomy.Taxonomy
    gt_idx : array_like of int, shape (n,)
        Ground-truth node indexes.
    ranked_idx : array_like of int, shape (n, k)
        The ranked predictions' node indexes, best first; -1 where a sample has fewer.
    heights : numpy.ndarray, optional
        Node heights (:func:`node_heights`; default: on the tree spanned by ``gt_idx``).

    Returns
    -------
    numpy.ndarray of float, shape (n, k)
        0 where the prediction is the ground truth, the height of their LCA otherwise, NaN
        where there is no prediction at that rank.

    Examples
    --------
    >>> import polars as pl
    >>> from taxoforge.trees.taxonomy import Taxonomy
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2", "b1"],
    ...                            "parent_id": [None, "r", "r", "a", "a", "b"]}))
    >>> distance_at_k(t, t.index_of(["a1"]), [t.index_of(["a1", "a2", "b1"])]).tolist()
    [[0.0, 1.0, 2.0]]
    """
    tax = _taxonomy(tree)
    g = np.asarray(gt_idx, dtype=np.int64)
    r = np.asarray(ranked_idx, dtype=np.int64)
    if r.ndim != 2 or r.shape[0] != len(g):
        raise ValueError(f"ranked_idx must have shape (n, k) with n = {len(g)}; got {r.shape}")
    if heights is None:
        heights = node_heights(tax, g)
    out = np.full(r.shape, np.nan)
    for j in range(r.shape[1]):
        have = r[:, j] >= 0
        if not have.any():
            continue
        p, t = r[have, j], g[have]
        lca = lca_nodes(tax, t, tax.lca_depth(p, t))
        out[have, j] = np.where(p == t, 0.0, heights[lca])
    return out


def ranked_distances(samples: pl.DataFrame, tree=None, *, column: str = "ranked_nodes", ks=None,
                     by=GROUP_KEYS, heights: str = "labels", label_set=None,
                     height_keys=HEIGHT_KEYS) -> pl.DataFrame:
    """Hierarchical distance@k per group: ``hdist@k`` for each k of ``ks`` (default 1 … the
    longest ranking), the mean over samples of the mean LCA height of their first k ranked
    predictions (correct ones count 0; an entry that names no node is the root, a miss at the
    tree's height; a sample with fewer than k entries averages those it has).

    Parameters
    ----------
    samples : polars.DataFrame
        A samples table with ``gt_node`` and ``column`` (a list of node ids, best first), or
        with ``ranked_heights`` already (:func:`mistake_columns`: then ``tree`` is not needed).
    tree : taxoforge.trees.taxonomy.Taxonomy, optional
    column : str
        The list column of ranked predictions.
    ks : sequence of int, optional
    by : sequence of str
    heights, label_set, height_keys
        As for :func:`mistake_columns` (used when ``ranked_heights`` is absent).

    Returns
    -------
    polars.DataFrame
        One row per group: ``n`` and the ``hdist@k`` columns.
    """
    keys = [k for k in by if k in samples.columns]
    s = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    if "ranked_heights" not in s.columns:
        if column not in s.columns or not s.height or tree is None:
            return pl.DataFrame(schema={k: pl.String for k in keys})
        s = mistake_columns(s.drop("ranked_heights", strict=False), tree, heights=heights, label_set=label_set,
                            height_keys=height_keys)
    lists = s["ranked_heights"].to_list()
    width = max((len(x) for x in lists if x is not None), default=0)
    if not width:
        return pl.DataFrame(schema={k: pl.String for k in keys})
    ks = list(range(1, width + 1)) if ks is None else [int(k) for k in ks if 1 <= int(k) <= width]
    dist = np.full((s.height, width), np.nan)
    for i, x in enumerate(lists):
        if x:
            dist[i, :len(x)] = [np.nan if v is None else v for v in x]
    cols = {f"hdist@{k}": _row_nanmean(dist[:, :k]) for k in ks}
    t = s.select(keys).with_columns(*[pl.Series(c, v) for c, v in cols.items()])
    aggs = [pl.len().alias("n"), *[pl.col(c).mean() for c in cols]]
    return t.group_by(keys, maintain_order=True).agg(aggs).sort(keys) if keys else t.select(aggs)


def map_ranked(lists, index, resolve, datasets) -> list[list[str | None] | None]:
    """Map every answer of ranked top-k lists to a node exactly as the run maps answers
    (:func:`taxoforge.scores.steps.map_answers`: templates stripped, refusals, the mapping
    index, renamed species resolved like labels), in one batch. An empty entry stays None (no
    prediction at that rank); an entry that names no node — a refusal, an unreadable text —
    is the root, so hierarchical distance@k counts it as a miss at the tree's height.

    Parameters
    ----------
    lists : sequence of sequence of str or None
        One ranked list per sample (``ranked_outputs``), best first.
    index : taxoforge.scores.mapping.TaxonomyIndex
        The run's mapping index.
    resolve : taxoforge.scores.steps.GroundTruthResolver
        The run's label resolver (for renamed species).
    datasets : sequence of str
        Each sample's dataset.

    Returns
    -------
    list
        One list of node ids per sample (None for a sample without a list).
    """
    from taxoforge.scores.mapping.parse import UnparseableAnswer, parse_answer
    from taxoforge.scores.steps import map_answers

    root = str(index.taxonomy.root)
    rows, where = [], []
    out: list = [None if lst is None else [None] * len(lst) for lst in lists]
    for i, (lst, ds) in enumerate(zip(lists, datasets)):
        for j, t in enumerate(lst or []):
            if t is None or not str(t).strip():
                continue
            try:
                parsed = parse_answer(str(t), None)
            except UnparseableAnswer:
                out[i][j] = root  # an entry, but no name in it: a miss at the tree's height
                continue
            rows.append({"parsed": parsed, "answer": parsed.answer, "dataset": ds, "question": None})
            where.append((i, j))
    if rows:
        mapped = map_answers(rows, index, resolve, False)
        ids = index.taxonomy.ids[mapped.pred_idx]  # a refusal is the root, as an abstaining answer is scored
        for (i, j), nid in zip(where, ids.tolist()):
            out[i][j] = str(nid)
    return out


def _row_nanmean(x: np.ndarray) -> np.ndarray:
    cnt = np.isfinite(x).sum(axis=1)
    tot = np.where(np.isfinite(x), x, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def balanced_accuracy(samples: pl.DataFrame, by=GROUP_KEYS) -> pl.DataFrame:
    """Per group: ``balanced_accuracy``, the unweighted mean over ground-truth classes
    (``gt_node``) of the accuracy on that class (scikit-learn's ``balanced_accuracy_score``),
    over rows with a full ground truth; ``classes`` says how many classes it averages.

    Parameters
    ----------
    samples : polars.DataFrame
        With ``gt_node`` and ``correct``.
    by : sequence of str

    Returns
    -------
    polars.DataFrame

    Examples
    --------
    >>> s = pl.DataFrame({"gt_node": ["a", "a", "a", "b"], "correct": [True, True, True, False]})
    >>> balanced_accuracy(s, by=()).rows()
    [(0.5, 2)]
    """
    keys = [k for k in by if k in samples.columns]
    s = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    per_class = s.group_by([*keys, "gt_node"], maintain_order=True).agg(  # in order: the same sums every run
        pl.col("correct").cast(pl.Float64).mean().alias("_acc"))
    aggs = [pl.col("_acc").mean().alias("balanced_accuracy"), pl.len().cast(pl.Int64).alias("classes")]
    if not keys:
        return per_class.select(aggs)
    return per_class.group_by(keys, maintain_order=True).agg(aggs).sort(keys)


def category_accuracy(samples: pl.DataFrame, by=GROUP_KEYS, column: str = "category") -> pl.DataFrame:
    """Per group and value of ``column`` (VLMEvalKit's ``category``): ``n``, ``accuracy``,
    ``hP``, ``hR``, ``hF`` (:func:`taxoforge.scores.measures.hierarchical.aggregate_hierarchical`),
    over rows with a full ground truth; the empty table when ``samples`` has no such column.

    Parameters
    ----------
    samples : polars.DataFrame
    by : sequence of str
    column : str

    Returns
    -------
    polars.DataFrame
    """
    from taxoforge.scores.measures.hierarchical import aggregate_hierarchical

    keys = [k for k in by if k in samples.columns]
    if column not in samples.columns:
        return pl.DataFrame()
    s = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    s = s.filter(pl.col(column).is_not_null())
    if not s.height:
        return pl.DataFrame()
    g = s.group_by([*keys, pl.col(column).cast(pl.String)], maintain_order=True).agg(
        pl.len().alias("n"), pl.col("correct").cast(pl.Float64).mean().alias("accuracy"),
        pl.col("hP").alias("_hp"), pl.col("hR").alias("_hr"))
    aggs = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy()) for hp, hr in zip(g["_hp"], g["_hr"])]
    return g.with_columns(*[pl.Series(m, [a[m] for a in aggs], dtype=pl.Float64) for m in ("hP", "hR", "hF")]).drop(
        "_hp", "_hr").sort([*keys, column])
