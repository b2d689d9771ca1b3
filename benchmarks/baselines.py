"""Baselines: straightforward implementations the candidates are measured against.

:func:`networkx_build_tree`
    Graph → tree as one would first write it with networkx (Snæbjarnarson et al. 2025 [1] §4.1, docs/method.md#trees):
    drop self loops; for every non-trivial strongly connected component remove the back
    edges of a depth-first search started at the members with a parent outside the
    component, then the rest, in sorted id order, children in sorted id order (the same
    deterministic rule as :func:`taxoforge.trees.build.build_tree`, so the results can
    be compared); hang several roots under ``<source>:root``; longest root path by
    dynamic programming in topological order; among the tight parents pick one with
    probability proportional to its number of longest paths, with the same
    ``(tie_seed, node)`` draw (:func:`taxoforge.trees.build.tie_draw`).
:func:`numpy_build_tree`
    The same steps as a plain vectorised numpy implementation: ids encoded by sorting
    the distinct ids (polars) and joining; duplicate edges and self loops dropped;
    strongly connected components by ``scipy.sparse.csgraph`` and the same DFS back-edge
    rule; topological order by Kahn frontiers, the longest-path relaxation with
    ``np.maximum.at`` over each frontier's out-edges, the numbers of longest paths
    (log-sum-exp) with ``np.maximum.at`` / ``np.add.at``, and the same seeded weighted tie
    draw.
:func:`python_hierarchical_scores`
    The paper's formula, literally: build ``anc(pr)`` and ``anc(gt)`` as Python sets and
    intersect them, one pair at a time.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import polars as pl

from taxoforge.trees.build import tie_draw

__all__ = ["networkx_build_tree", "numpy_build_tree", "python_hierarchical_scores", "ancestor_paths"]


def _back_edges(g: nx.DiGraph, comp: set) -> list[tuple]:
    entries = sorted(m for m in comp if any(p not in comp for p in g.predecessors(m)))
    order = entries + sorted(comp.difference(entries))
    state: dict = {}
    back = []
    for start in order:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(sorted(c for c in g.successors(start) if c in comp)))]
        while stack:
            node, it = stack[-1]
            for d in it:
                st = state.get(d)
                if st is None:
                    state[d] = 1
                    stack.append((d, iter(sorted(c for c in g.successors(d) if c in comp))))
                    break
                if st == 1:
                    back.append((node, d))
            else:
                state[node] = 2
                stack.pop()
    return back


def networkx_build_tree(edges: pl.DataFrame, *, source: str, tie_seed: int = 0) -> pl.DataFrame:
    """``node_id, parent_id, depth`` (sorted by node id) of the longest-path tree, networkx style."""
    g = nx.DiGraph()
    g.add_edges_from(zip(edges["parent"].to_list(), edges["child"].to_list()))  # parent → child
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    for comp in list(nx.strongly_connected_components(g)):
        if len(comp) > 1:
            g.remove_edges_from(_back_edges(g, comp))
    roots = sorted(v for v, d in g.in_degree() if d == 0)
    if len(roots) > 1:
        root = f"{source}:root"
        g.add_edges_from((root, r) for r in roots)
    depth: dict = {}
    logn: dict = {}
    parent: dict = {}
    for v in nx.topological_sort(g):
        preds = list(g.predecessors(v))
        if not preds:
            depth[v], logn[v], parent[v] = 0, 0.0, None
            continue
        d = max(depth[p] for p in preds)
        tight = sorted(p for p in preds if depth[p] == d)
        mx = max(logn[p] for p in tight)
        w = [math.exp(logn[p] - mx) for p in tight]
        depth[v] = d + 1
        logn[v] = mx + math.log(sum(w))
        if len(tight) == 1:
            parent[v] = tight[0]
        else:
            u = float(tie_draw(tie_seed, [v])[0])
            total, acc, chosen = sum(w), 0.0, tight[-1]
            for p, wi in zip(tight, w):
                acc += wi
                if acc > u * total:
                    chosen = p
                    break
            parent[v] = chosen
    nodes = sorted(depth)
    return pl.DataFrame({"node_id": nodes, "parent_id": [parent[v] for v in nodes],
                         "depth": [depth[v] for v in nodes]},
                        schema={"node_id": pl.String, "parent_id": pl.String, "depth": pl.Int32})


def _ranges(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r]:indptr[r+1]`` of every row ``r`` in ``rows``, concatenated."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lens = ends - starts
    if not lens.sum():
        return np.empty(0, dtype=np.int64)
    return np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())


def _numpy_back_edges(members: np.ndarray, entries: np.ndarray, indptr: np.ndarray, child: np.ndarray,
                      label: np.ndarray) -> list[tuple[int, int]]:
    """Back edges ``(parent, child)`` of the DFS inside one component (members and children in
    code order, members with a parent outside the component first)."""
    comp = label[members[0]]
    order = [int(m) for m in members if m in entries] + [int(m) for m in members if m not in entries]
    state: dict[int, int] = {}
    back = []

    def succ(v: int):
        return iter([int(c) for c in child[indptr[v]:indptr[v + 1]] if label[c] == comp])

    for start in order:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, succ(start))]
        while stack:
            node, it = stack[-1]
            for d in it:
                st = state.get(d)
                if st is None:
                    state[d] = 1
                    stack.append((d, succ(d)))
                    break
                if st == 1:
                    back.append((node, d))
            else:
                state[node] = 2
                stack.pop()
    return back


def numpy_build_tree(edges: pl.DataFrame, *, source: str, tie_seed: int = 0) -> pl.DataFrame:
    """``node_id, parent_id, depth`` (sorted by node id) of the longest-path tree, in plain
    vectorised numpy (module docstring)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    # encode: code = position in the sorted distinct ids
    ends = pl.concat([edges["child"], edges["parent"]]).alias("id")
    ids = ends.unique().sort()
    n = len(ids)
    codes = ends.to_frame().join(ids.to_frame().with_row_index("code"), on="id", how="left",
                                 maintain_order="left")["code"].to_numpy().astype(np.int64)
    m = edges.height
    key = np.unique(codes[m:] * n + codes[:m])  # (parent, child), duplicates dropped
    parent, child = key // n, key % n
    keep = parent != child
    parent, child = parent[keep], child[keep]

    # cycles: strongly connected components, back edges of a DFS inside each
    indptr = np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=n))))
    g = csr_matrix((np.ones(len(child), dtype=np.int8), child, indptr), shape=(n, n))
    ncomp, label = connected_components(g, directed=True, connection="strong")
    if ncomp < n:
        size = np.bincount(label, minlength=ncomp)
        on_cycle = size[label] > 1
        entries = set(np.unique(child[on_cycle[child] & (label[child] != label[parent])]).tolist())
        members = np.flatnonzero(on_cycle)
        members = members[np.argsort(label[members], kind="stable")]
        back = []
        for grp in np.split(members, np.flatnonzero(np.diff(label[members])) + 1):
            back += _numpy_back_edges(grp, entries, indptr, child, label)
        bk = np.array(sorted(p * n + c for p, c in back), dtype=np.int64)
        keep = ~np.isin(parent * n + child, bk)
        parent, child = parent[keep], child[keep]

    # roots: several get a synthetic parent (code n, after every id)
    has_parent = np.zeros(n, dtype=bool)
    has_parent[child] = True
    roots = np.flatnonzero(~has_parent)
    n_all = n
    if len(roots) > 1:
        ids = pl.concat([ids, pl.Series("id", [f"{source}:root"])])
        n_all = n + 1
        parent = np.concatenate([parent, np.full(len(roots), n)])
        child = np.concatenate([child, roots])
        roots = np.array([n])
    order = np.lexsort((child, parent))
    parent, child = parent[order], child[order]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=n_all))))

    # Kahn frontiers; longest-path relaxation over each frontier's out-edges
    indeg = np.bincount(child, minlength=n_all)
    depth = np.zeros(n_all, dtype=np.int64)
    frontier = roots
    levels = []
    while len(frontier):
        levels.append(frontier)
        pos = _ranges(indptr, frontier)
        ch = child[pos]
        np.maximum.at(depth, ch, depth[parent[pos]] + 1)
        np.subtract.at(indeg, ch, 1)
        frontier = np.unique(ch[indeg[ch] == 0])

    # numbers of longest paths (log-sum-exp over the tight parents), level by level
    tight = depth[parent] == depth[child] - 1
    tp_all, tc_all = parent[tight], child[tight]
    logn = np.full(n_all, -np.inf)
    logn[roots] = 0.0
    by_level = np.argsort(depth[tc_all], kind="stable")
    tp_all, tc_all = tp_all[by_level], tc_all[by_level]
    bounds = np.searchsorted(depth[tc_all], np.arange(1, len(levels) + 1))
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        tp, tc = tp_all[lo:hi], tc_all[lo:hi]
        lp = logn[tp]
        mx = np.full(n_all, -np.inf)
        np.maximum.at(mx, tc, lp)
        s = np.zeros(n_all)
        np.add.at(s, tc, np.exp(lp - mx[tc]))
        logn[tc] = mx[tc] + np.log(s[tc])

    # the parent: the only tight one, or a seeded draw weighted by numbers of longest paths
    tp, tc = parent[tight], child[tight]
    o = np.lexsort((tp, tc))
    tp, tc = tp[o], tc[o]
    chosen = np.full(n_all, -1, dtype=np.int64)
    count = np.bincount(tc, minlength=n_all)
    single = count[tc] == 1
    chosen[tc[single]] = tp[single]
    mp, mc = tp[~single], tc[~single]
    if len(mc):
        start = np.flatnonzero(np.concatenate(([True], mc[1:] != mc[:-1])))
        gid = np.cumsum(np.concatenate(([False], mc[1:] != mc[:-1])))
        w_log = logn[mp]
        gmax = np.full(len(start), -np.inf)
        np.maximum.at(gmax, gid, w_log)
        w = np.exp(w_log - gmax[gid])
        total = np.zeros(len(start))
        np.add.at(total, gid, w)
        acc = np.cumsum(w)
        acc -= np.concatenate(([0.0], acc[start[1:] - 1]))[gid]
        u = tie_draw(tie_seed, ids.gather(mc[start]).to_list())
        hit = acc > (u * total)[gid]
        last = np.append(start[1:], len(mc)) - 1
        first_hit = np.full(len(start), -1)
        hit_pos = np.flatnonzero(hit)
        g_hit, at = np.unique(gid[hit_pos], return_index=True)
        first_hit[g_hit] = hit_pos[at]
        first_hit[first_hit < 0] = last[first_hit < 0]
        chosen[mc[start]] = mp[first_hit]

    nodes = pl.DataFrame({"node_id": ids, "parent_id": ids.gather(np.maximum(chosen, 0)),
                          "depth": pl.Series(depth, dtype=pl.Int32)})
    return nodes.with_columns(pl.when(pl.Series(chosen) >= 0).then(pl.col("parent_id")).alias("parent_id")).sort(
        "node_id")


def ancestor_paths(parent_idx: np.ndarray, nodes: np.ndarray) -> list[list[int]]:
    """Root-first ancestor paths (both ends included) of ``nodes``, as Python lists."""
    out = []
    for v in nodes.tolist():
        path = []
        while v >= 0:
            path.append(v)
            v = int(parent_idx[v])
        path.reverse()
        out.append(path)
    return out


def python_hierarchical_scores(parent_idx: np.ndarray, pred: np.ndarray, gt: np.ndarray) -> tuple[list, list]:
    """Per-pair hP and hR by the paper's set formula, in plain Python."""
    hp, hr = [], []
    for p, g in zip(pred.tolist(), gt.tolist()):
        a_pr, a_gt = set(), set()
        v = p
        while v >= 0:
            a_pr.add(v)
            v = int(parent_idx[v])
        v = g
        while v >= 0:
            a_gt.add(v)
            v = int(parent_idx[v])
        inter = len(a_pr & a_gt)
        hp.append(inter / len(a_pr))
        hr.append(inter / len(a_gt))
    return hp, hr


def hiclass_hierarchical_scores(parent_idx: np.ndarray, pred: np.ndarray, gt: np.ndarray) -> tuple[float, float]:
    """Mean hP and mean hR from ``hiclass.metrics`` (``average="macro"``: per sample, then
    averaged) over root-first label paths padded with ``""``, the root included."""
    from hiclass import metrics

    paths_p = ancestor_paths(parent_idx, pred)
    paths_g = ancestor_paths(parent_idx, gt)
    width = max(max(map(len, paths_p)), max(map(len, paths_g)))
    yp = np.array([[str(x) for x in p] + [""] * (width - len(p)) for p in paths_p], dtype=object)
    yt = np.array([[str(x) for x in g] + [""] * (width - len(g)) for g in paths_g], dtype=object)
    return float(metrics.precision(yt, yp, average="macro")), float(metrics.recall(yt, yp, average="macro"))
