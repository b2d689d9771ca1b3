"""Snæbjarnarson et al. 2025 [1] §5: does a measure see the taxonomy? Kendall-τ validation of any measure on
synthetic node pairs (Table 1), and agreement in node placement between mapping methods
(Fig. 4).

Synthetic pairs (§5, "Experimental Setup")
    A reference node ``v`` is a leaf; a candidate ``v'`` lies at a given distance from it
    (the length of the shortest undirected path), the distance drawn uniformly from
    ``1 … max_distance`` (7 in the paper) among the distances the leaf allows, and ``v'``
    drawn uniformly among the nodes at that distance. Two sets:

    ``hP`` set: any such pairs; the taxonomic score is hP(pred = ``v'``, truth = ``v``).
    ``hR`` set: ``v'`` is an ancestor of ``v`` (so hP = 1); the score is hR — the
    sensitivity to decreasing specificity.

    For each pair the measure scores the label of ``v'`` (the prediction) against the label
    of ``v`` (the reference); Kendall's τ (τ-b, ties handled) between the measure and the
    taxonomic score says how much taxonomy the measure sees. Pairs are drawn with BLAKE2b
    counters (the same pairs for the same seed on any machine).

Placement agreement (Fig. 4)
    For answers mapped by several methods (similarity measures with or without Alg. 1),
    the share of answers that two methods map to the same node, for every pair of methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import polars as pl

from taxoforge.evaluation.multiple_choice.draws import Candidates
from taxoforge.seeded import SeededStream
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["synthetic_pairs", "kendall_tau_validation", "placement_agreement"]


def _depth_candidates(tree: Taxonomy, d: int) -> Candidates:
    cache = tree.__dict__.setdefault("_depth_candidates", {})
    if d not in cache:
        cache[d] = Candidates(tree, tree.depth_arr == d)
    return cache[d]


def synthetic_pairs(tree, n_pairs: int = 100_000, *, max_distance: int = 7, ancestors_only: bool = False,
                    seed: int = 0) -> pl.DataFrame:
    """``n_pairs`` (reference leaf, candidate) pairs at uniform distances (module docstring):
    columns ``reference``, ``candidate`` (node ids), ``reference_label``, ``candidate_label``,
    ``distance``, ``hP``, ``hR``.

    Parameters
    ----------
    tree : object
        The tree.
    n_pairs : int, optional
        Pairs drawn.
    max_distance : int, optional
        Largest distance in the tree between a pair's nodes.
    ancestors_only : bool, optional
        Whether candidates are ancestors of the reference only (the hR set).
    seed : int, optional
        The seed of the random draws.

    Returns
    -------
    polars.DataFrame
        ``n_pairs`` (reference leaf, candidate) pairs at uniform distances (module
        docstring): columns ``reference``, ``candidate`` (node ids),
        ``reference_label``, ``candidate_label``, ``distance``, ``hP``, ``hR``.
    """
    tree = open_taxonomy(tree)
    leaves = np.flatnonzero(tree.is_leaf & (tree.depth_arr >= 1))
    if not len(leaves):
        raise ValueError(f"{tree.name} has no leaf below the root")
    depth = tree.depth_arr.astype(np.int64)
    ref, cand, dist = [], [], []
    for i in range(n_pairs):
        s = SeededStream(seed, f"pair|{int(ancestors_only)}|{i}")
        for _ in range(100):
            v = int(leaves[s.below(len(leaves))])
            if ancestors_only:
                top = min(max_distance, int(depth[v]))
                d = 1 + s.below(top)
                u = int(tree.ancestor_at_depth([v], int(depth[v]) - d)[0])
                ref.append(v), cand.append(u), dist.append(d)
                break
            d = 1 + s.below(max_distance)
            # nodes at distance d: k steps up to the ancestor a, then d-k steps down, not back
            # towards v; count every k's candidates, then draw one uniformly
            options = []
            below = v
            a = v
            for k in range(1, d + 1):
                if depth[a] == 0:
                    break
                below, a = a, int(tree.parent_idx[a])
                target = int(depth[a]) + (d - k)
                if d - k == 0:
                    options.append((1, None, a))
                    continue
                c = _depth_candidates(tree, target)
                rngs = c.ranges(a, below)
                cnt = sum(hi - lo for lo, hi in rngs)
                if cnt:
                    options.append((cnt, c, rngs))
            total = sum(o[0] for o in options)
            if not total:
                continue
            j = s.below(total)
            for cnt, c, rngs in options:
                if j < cnt:
                    if c is None:
                        u = rngs
                    else:
                        for lo, hi in rngs:
                            if j < hi - lo:
                                u = int(c.nodes[lo + j])
                                break
                            j -= hi - lo
                    break
                j -= cnt
            ref.append(v), cand.append(u), dist.append(d)
            break
    r, c = np.array(ref, dtype=np.int64), np.array(cand, dtype=np.int64)
    lca = tree.lca_depth(c, r)
    return pl.DataFrame({
        "reference": tree.ids[r].tolist(), "candidate": tree.ids[c].tolist(),
        "reference_label": tree.labels[r].tolist(), "candidate_label": tree.labels[c].tolist(),
        "distance": dist, "hP": (lca + 1.0) / (depth[c] + 1.0), "hR": (lca + 1.0) / (depth[r] + 1.0),
    }, schema_overrides={"distance": pl.Int64})


def kendall_tau_validation(tree, measures: Mapping[str, Callable], *, n_pairs: int = 100_000, max_distance: int = 7,
                           seed: int = 0) -> pl.DataFrame:
    """Snæbjarnarson et al. 2025 [1] Table 1 for ``measures`` (``name -> measure(predictions, references) -> array``):
    one row per measure with ``tau_hP``, ``p_hP`` (on the hP set) and ``tau_hR``, ``p_hR`` (on
    the ancestors-only hR set), and the number of pairs.

    Parameters
    ----------
    tree : object
        The tree.
    measures : Mapping[str, Callable]
        ``name -> measure(predictions, references) -> array``.
    n_pairs : int, optional
        Synthetic pairs drawn.
    max_distance : int, optional
        Largest distance in the tree between a pair's nodes.
    seed : int, optional
        The seed of the random draws.

    Returns
    -------
    polars.DataFrame
        Snæbjarnarson et al. 2025 [1] Table 1 for ``measures`` (``name ->
        measure(predictions, references) -> array``): one row per measure with
        ``tau_hP``, ``p_hP`` (on the hP set) and ``tau_hR``, ``p_hR`` (on the
        ancestors-only hR set), and the number of pairs.
    """
    from scipy.stats import kendalltau

    if not measures:
        raise ValueError("no measure to validate")
    sets = {"hP": synthetic_pairs(tree, n_pairs, max_distance=max_distance, seed=seed),
            "hR": synthetic_pairs(tree, n_pairs, max_distance=max_distance, ancestors_only=True, seed=seed)}
    rows = []
    for name, fn in measures.items():
        row = {"measure": name, "pairs": n_pairs}
        for target, pairs in sets.items():
            vals = np.asarray(fn(pairs["candidate_label"].to_list(), pairs["reference_label"].to_list()),
                              dtype=np.float64)
            if vals.shape != (pairs.height,):
                raise ValueError(f"measure {name!r} returned shape {vals.shape}; expected ({pairs.height},)")
            if np.all(vals == vals[0]):
                tau, p = float("nan"), float("nan")  # a constant measure has no rank correlation
            else:
                res = kendalltau(vals, pairs[target].to_numpy())
                tau, p = float(res.statistic), float(res.pvalue)
            row[f"tau_{target}"], row[f"p_{target}"] = tau, p
        rows.append(row)
    return pl.DataFrame(rows)


def placement_agreement(placements: pl.DataFrame, *, key: str = "id", method: str = "method",
                        node: str = "pred_node") -> pl.DataFrame:
    """Fig. 4: for every pair of methods, the share of answers (``key``) both placed that they
    placed on the same node. ``placements`` has one row per (answer, method). Returns a
    square table: a ``method`` column, then one column per method.

    >>> t = pl.DataFrame({"id": [1, 2, 1, 2], "method": ["a", "a", "b", "b"], "pred_node": ["x", "y", "x", "z"]})
    >>> placement_agreement(t).rows()
    [('a', 1.0, 0.5), ('b', 0.5, 1.0)]

    Parameters
    ----------
    placements : polars.DataFrame
        One row per (answer, method): the node each method placed the answer on.
    key : str, optional
        The answer id column.
    method : str, optional
        The method column.
    node : str, optional
        The node column.

    Returns
    -------
    polars.DataFrame
        Fig. 4: for every pair of methods, the share of answers (``key``) both placed
        that they placed on the same node.
    """
    for c in (key, method, node):
        if c not in placements.columns:
            raise ValueError(f"placement_agreement needs a {c!r} column; the table has {placements.columns}")
    dup = placements.select(key, method).is_duplicated()
    if dup.any():
        raise ValueError(f"answer {placements.filter(dup)[key][0]!r} is placed twice by one method")
    wide = placements.select(key, method, node).pivot(on=method, index=key, values=node)
    names = sorted(c for c in wide.columns if c != key)
    rows = []
    for a in names:
        row = {"method": a}
        for b in names:
            both = wide.filter(pl.col(a).is_not_null() & pl.col(b).is_not_null())
            row[b] = float((both[a] == both[b]).mean()) if both.height else float("nan")
        rows.append(row)
    return pl.DataFrame(rows)
