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

__all__ = ["networkx_build_tree", "python_hierarchical_scores", "ancestor_paths"]


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
