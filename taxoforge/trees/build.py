"""From a directed graph to a rooted tree (Snæbjarnarson et al. 2025 [1] §4.1; docs/method.md#from-a-graph-to-a-tree).

Input
    An edge table ``(child, parent)`` of string node ids — e.g. Wikidata's subclass-of
    (P279) edges, WordNet hypernym edges — and optionally more node ids that have no edge.

Output
    A :class:`TreeBuild`: the ``nodes`` table (``node_id``, ``parent_id``, ``depth``),
    the ``report`` table naming every edge that was removed or chosen between, and
    counts of each kind in ``stats``.

Algorithm
    1. Encode ids as integers in sorted id order (so nothing depends on input order);
       drop duplicate edges.
    2. Remove the nodes of the exclusion list (with all their edges) and self loops.
    3. Break cycles. Find the strongly connected components (``scipy.sparse.csgraph``).
       Policy ``"dfs_back_edges"`` (default): inside every non-trivial component run a
       depth-first search from the top (parent → child), starting at the members that
       have a parent outside the component, in sorted id order, then at the rest; remove
       every back edge. Policy ``"drop_abstract"``: remove, from every non-trivial
       component, its most abstract member (the most direct subclasses, ties by id) with
       all its edges, and repeat until no cycle is left.
    4. Give every parentless node a synthetic parent ``<source>:root`` when there is more
       than one of them.
    5. Longest root path: a level-synchronous topological sort (Kahn's algorithm, one
       vectorised pass per level) gives each node the round in which its last parent was
       settled, which is the length of its longest path from the root. In the same pass
       ``log n(v)``, the log of the number of longest root paths, is accumulated over the
       *tight* parents (``depth(p) = depth(v) - 1``).
    6. Seeded ties: a node with several tight parents picks parent ``p`` with probability
       ``n(p) / Σ n``, using a uniform draw that depends only on ``(tie_seed, node id)``
       (BLAKE2b), so every longest path of a node is equally likely, the result is one
       tree, and changing one corner of the graph does not reshuffle the rest.
    7. Report: the ``nodes`` table in id order, the removed and chosen-between edges
       sorted by kind, child and parent, and their counts.

Every step is vectorised over edge arrays; the only Python loops are over cycle members
(step 3) and the tie draws (one hash per tied node).

References
    Kiritchenko et al., "Learning and evaluation in the presence of class hierarchies",
    2006; Suchanek et al., "YAGO 4.5", SIGIR 2024 (deterministic cycle removal).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from taxoforge.seeded import tie_draw
from taxoforge.trees.tables import REPORT_SCHEMA

__all__ = ["TreeBuild", "build_tree", "CYCLE_POLICIES", "tie_draw"]

CYCLE_POLICIES = ("dfs_back_edges", "drop_abstract")


class CycleError(RuntimeError):
    """Raised if a cycle survives cycle removal (a bug, never expected)."""


@dataclass
class TreeBuild:
    """Result of :func:`build_tree`.

    ``nodes``: ``node_id``, ``parent_id`` (null for the root), ``depth``, ``n_longest_paths_log``
    (natural log of the number of longest root paths of the node in the acyclic graph).
    ``report``: one row per decision, ``kind`` one of ``excluded_node``, ``self_loop``,
    ``cycle_back_edge``, ``abstract_on_cycle``, ``synthetic_root``, ``not_longest``, ``tie``.
    ``stats``: counts by kind, and sizes. ``tie_seed`` and ``cycle_policy``: how it was
    built (they go into the tree's provenance, :meth:`TreeTables.from_build`).
    """

    nodes: pl.DataFrame
    report: pl.DataFrame
    stats: dict = field(default_factory=dict)
    root_id: str = ""
    tie_seed: int = 0
    cycle_policy: str = "dfs_back_edges"


def build_tree(
    edges: pl.DataFrame,
    *,
    source: str,
    tie_seed: int = 0,
    cycle_policy: str = "dfs_back_edges",
    exclude: Iterable[str] = (),
    extra_nodes: Iterable[str] = (),
    child_col: str = "child",
    parent_col: str = "parent",
) -> TreeBuild:
    """Turn a child→parent edge table into one rooted tree by longest root paths.

    The steps of the module docstring, one function each: :func:`_encode` (1),
    :func:`_exclude` (2), :func:`_break_cycles` (3), :func:`_add_root` (4),
    :func:`_longest_root_paths` (5), :func:`_draw_ties` (6), then the nodes table and the
    report (:func:`_nodes_table`, :meth:`_Decisions.report`).

    Parameters
    ----------
    edges : polars.DataFrame
        One row per edge with string columns ``child`` and ``parent``.
    source : str
        Source prefix, used to name a synthetic root ``<source>:root``.
    tie_seed : int
        Seed of the tie draws (step 6); recorded in the ``seed`` column of ``tie`` report rows.
    cycle_policy : {"dfs_back_edges", "drop_abstract"}
        How cycles are broken (module docstring, step 3).
    exclude : iterable of str
        Node ids removed, with their edges, before anything else.
    extra_nodes : iterable of str
        Node ids that have no edges but belong to the graph (they hang under the root).

    Returns
    -------
    TreeBuild

    Raises
    ------
    ValueError
        On unknown ``cycle_policy``, missing columns, null ids, or an empty graph.

    Examples
    --------
    >>> e = pl.DataFrame({"child": ["b", "c", "c", "d"], "parent": ["a", "a", "b", "c"]})
    >>> t = build_tree(e, source="x")
    >>> t.nodes.select("node_id", "parent_id", "depth").rows()
    [('a', None, 0), ('b', 'a', 1), ('c', 'b', 2), ('d', 'c', 3)]
    >>> t.stats["not_longest"]
    1
    """
    if cycle_policy not in CYCLE_POLICIES:
        raise ValueError(f"unknown cycle_policy {cycle_policy!r}; expected one of {CYCLE_POLICIES}")
    decisions = _Decisions(stats={"input_edges": edges.height})
    graph = _encode(edges, extra_nodes, child_col=child_col, parent_col=parent_col, decisions=decisions)
    _exclude(graph, exclude, decisions)
    _break_cycles(graph, cycle_policy, decisions)
    root = _add_root(graph, f"{source}:root", decisions)
    paths = _longest_root_paths(graph, root, decisions)
    chosen_parent = _draw_ties(graph, paths, tie_seed, decisions)
    nodes = _nodes_table(graph, root, paths, chosen_parent)
    decisions.stats["nodes"] = nodes.height
    decisions.stats["edges_kept"] = nodes.height - 1
    return TreeBuild(nodes=nodes, report=decisions.report(), stats=decisions.stats,
                     root_id=str(graph.ids[int(root)]), tie_seed=int(tie_seed), cycle_policy=cycle_policy)


@dataclass
class _Graph:
    """The graph while it becomes a tree.

    Node codes are positions in ``ids`` (sorted ids; a synthetic root, once added, comes
    last). ``child[i] → parent[i]`` are the edges still in the graph, sorted by
    ``(parent, child)`` — every step keeps that order. ``alive`` marks the nodes still in
    the graph."""

    ids: pl.Series
    child: np.ndarray
    parent: np.ndarray
    alive: np.ndarray
    n_real: int  # codes below are real ids; a synthetic root, once added, has code n_real

    @property
    def n_nodes(self) -> int:
        return len(self.ids)

    def keep_edges(self, keep: np.ndarray) -> None:
        """Keep only the edges where the boolean mask ``keep`` is true (order unchanged)."""
        self.child, self.parent = self.child[keep], self.parent[keep]


@dataclass
class _Decisions:
    """What the steps removed or chose: report rows (one frame per decision, in step order)
    and counts."""

    stats: dict
    frames: list[pl.DataFrame] = field(default_factory=list)

    def edges(self, kind: str, graph: _Graph, mask_or_index: np.ndarray, detail: str) -> None:
        """Report the edges of ``graph`` selected by a boolean mask or an index array."""
        self.frames.append(_report_frame(kind, graph.child[mask_or_index], graph.parent[mask_or_index],
                                         graph.ids, detail))

    def report(self) -> pl.DataFrame:
        """The report table (:data:`REPORT_SCHEMA`), sorted by kind, child, parent."""
        if not self.frames:
            return pl.DataFrame(schema=REPORT_SCHEMA)
        report = pl.concat([_conform_report(r) for r in self.frames])
        return report.sort(["kind", "child_id", "parent_id"], nulls_last=True, maintain_order=True)


@dataclass
class _Paths:
    """Step 5's result, per node code: ``depth`` (longest root path, -1 if unreached), ``logn``
    (log of the number of longest root paths); per edge: ``tight`` (on a longest path)."""

    depth: np.ndarray
    logn: np.ndarray
    tight: np.ndarray


# ------------------------------------------------------------------ the steps
def _encode(edges: pl.DataFrame, extra_nodes: Iterable[str], *, child_col: str, parent_col: str,
            decisions: _Decisions) -> _Graph:
    """Step 1: integer codes in sorted id order, unique edges sorted by (parent, child)."""
    for c in (child_col, parent_col):
        if c not in edges.columns:
            raise ValueError(f"edge table has no column {c!r}; columns are {edges.columns}")
    e = edges.select(pl.col(child_col).cast(pl.String).alias("c"), pl.col(parent_col).cast(pl.String).alias("p"))
    nulls = e.with_row_index("row").filter(pl.col("c").is_null() | pl.col("p").is_null())
    if nulls.height:
        raise ValueError(f"edge table has null ids in {nulls.height} row(s), first at row {nulls['row'][0]}")

    extra = pl.Series("id", list(extra_nodes), dtype=pl.String)
    ends = pl.concat([e["c"], e["p"]]).alias("id")
    ids = pl.concat([ends, extra]).unique().sort().alias("id")  # code = position
    n = len(ids)
    if n == 0:
        raise ValueError("empty graph: no edges and no nodes")

    codes = pl.DataFrame({"id": ids, "code": np.arange(n, dtype=np.int64)})
    end_codes = ends.to_frame().join(codes, on="id", how="left", maintain_order="left")["code"].to_numpy()
    m = e.height
    # unique (parent, child) pairs sorted by parent then child, as one int64 key
    key = np.sort(end_codes[m:] * np.int64(n) + end_codes[:m])
    if len(key):
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    decisions.stats["duplicate_edges"] = edges.height - len(key)
    parent, child = np.divmod(key, np.int64(n))
    return _Graph(ids=ids, child=child, parent=parent, alive=np.ones(n, dtype=bool), n_real=n)


def _exclude(graph: _Graph, exclude: Iterable[str], decisions: _Decisions) -> None:
    """Step 2: remove the nodes of the exclusion list with all their edges, then self loops."""
    excl_codes = _codes_of(graph.ids, set(exclude))
    decisions.stats["excluded_nodes"] = int(len(excl_codes))
    if len(excl_codes):
        graph.alive[excl_codes] = False
        drop = ~graph.alive[graph.child] | ~graph.alive[graph.parent]
        decisions.edges("excluded_node", graph, drop, "edge touches an excluded node")
        graph.keep_edges(~drop)
    loops = graph.child == graph.parent
    decisions.stats["self_loops"] = int(loops.sum())
    if loops.any():
        decisions.edges("self_loop", graph, loops, "child is its own parent")
        graph.keep_edges(~loops)


def _break_cycles(graph: _Graph, cycle_policy: str, decisions: _Decisions) -> None:
    """Step 3: find the strongly connected components and break every cycle by ``cycle_policy``."""
    stats = decisions.stats
    stats["cycle_edges_removed"] = 0
    stats["abstract_nodes_dropped"] = 0
    stats["nontrivial_sccs"] = 0
    first_pass = True
    while True:
        components = _strong_components(graph)
        if components is None:
            break
        label, in_cycle, n_nontrivial = components
        if first_pass:
            stats["nontrivial_sccs"] = n_nontrivial
            stats["nodes_on_cycles"] = int(in_cycle.sum())
            first_pass = False
        if cycle_policy == "dfs_back_edges":
            # Removing every back edge of a DFS that explores all edges inside each
            # component leaves no cycle; step 5 would raise CycleError otherwise.
            _remove_dfs_back_edges(graph, label, in_cycle, decisions)
            break
        _drop_most_abstract(graph, label, in_cycle, decisions)


def _strong_components(graph: _Graph) -> tuple[np.ndarray, np.ndarray, int] | None:
    """``(component label of every node, node-on-a-cycle mask, number of components with a
    cycle)``, or ``None`` when the graph has no cycle."""
    n = graph.n_nodes
    child, parent = graph.child, graph.parent
    # edges are sorted by (parent, child), so the CSR arrays are direct
    g = csr_matrix((np.ones(len(child), dtype=np.int8), child,
                    np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=n))))), shape=(n, n))
    ncomp, label = connected_components(g, directed=True, connection="strong")
    if ncomp == n:
        return None
    big = np.bincount(label, minlength=ncomp) > 1
    return label, big[label], int(big.sum())


def _remove_dfs_back_edges(graph: _Graph, label: np.ndarray, in_cycle: np.ndarray, decisions: _Decisions) -> None:
    """Policy ``dfs_back_edges``: a DFS inside every component with a cycle, entered first at
    the members with a parent outside it; remove every back edge."""
    child, parent = graph.child, graph.parent
    intra = in_cycle[child] & (label[child] == label[parent])
    entries = set(np.unique(child[in_cycle[child] & ~intra]).tolist())
    intra_idx = np.flatnonzero(intra)
    comp_of_edge = label[child[intra_idx]]
    order = np.lexsort((child[intra_idx], parent[intra_idx], comp_of_edge))
    intra_idx = intra_idx[order]
    comp_of_edge = comp_of_edge[order]
    bounds = np.flatnonzero(np.diff(comp_of_edge)) + 1
    members_all = np.flatnonzero(in_cycle)
    members_by_comp = {}
    mlab = label[members_all]
    morder = np.argsort(mlab, kind="stable")
    for grp in np.split(members_all[morder], np.flatnonzero(np.diff(mlab[morder])) + 1):
        members_by_comp[int(label[grp[0]])] = grp
    back: list[int] = []
    for grp in np.split(intra_idx, bounds):
        comp = int(label[child[grp[0]]])
        back.extend(_dfs_back_edges(members_by_comp[comp], parent[grp], child[grp], grp, entries))
    back_arr = np.asarray(sorted(back), dtype=np.int64)
    decisions.edges("cycle_back_edge", graph, back_arr, "back edge of a DFS inside a strongly connected component")
    decisions.stats["cycle_edges_removed"] += len(back_arr)
    keep = np.ones(len(child), dtype=bool)
    keep[back_arr] = False
    graph.keep_edges(keep)


def _dfs_back_edges(members: np.ndarray, src: np.ndarray, dst: np.ndarray, eids: np.ndarray,
                    entries: set[int]) -> list[int]:
    """Back edges of a DFS over one component. ``src → dst`` is parent → child, edges sorted
    by (src, dst); ``eids`` are the global edge indices. Returns global edge indices."""
    adj: dict[int, list[tuple[int, int]]] = {}
    for s, d, e in zip(src.tolist(), dst.tolist(), eids.tolist()):
        adj.setdefault(s, []).append((d, e))
    order = sorted(m for m in members.tolist() if m in entries) + sorted(
        m for m in members.tolist() if m not in entries
    )
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    back: list[int] = []
    for start in order:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(adj.get(start, ())))]
        while stack:
            node, it = stack[-1]
            for d, e in it:
                st = state.get(d)
                if st is None:
                    state[d] = 1
                    stack.append((d, iter(adj.get(d, ()))))
                    break
                if st == 1:
                    back.append(e)
            else:
                state[node] = 2
                stack.pop()
    return back


def _drop_most_abstract(graph: _Graph, label: np.ndarray, in_cycle: np.ndarray, decisions: _Decisions) -> None:
    """Policy ``drop_abstract``, one round: remove the most abstract member of every component
    with a cycle (most direct subclasses, then smallest id) with all its edges."""
    n_children = np.bincount(graph.parent, minlength=graph.n_nodes)
    members = np.flatnonzero(in_cycle)
    # most children first, then smallest id
    order = np.lexsort((members, -n_children[members], label[members]))
    members = members[order]
    firsts = members[np.concatenate(([True], np.diff(label[members]) != 0))]
    graph.alive[firsts] = False
    drop = ~graph.alive[graph.child] | ~graph.alive[graph.parent]
    decisions.edges("abstract_on_cycle", graph, drop, "edge of the most abstract class on a cycle (removed)")
    decisions.stats["abstract_nodes_dropped"] += len(firsts)
    decisions.stats["cycle_edges_removed"] += int(drop.sum())
    graph.keep_edges(~drop)


def _add_root(graph: _Graph, synthetic_root: str, decisions: _Decisions) -> int:
    """Step 4: the code of the root; several parentless nodes get ``synthetic_root`` above them."""
    has_parent = np.zeros(graph.n_nodes, dtype=bool)
    has_parent[graph.child] = True
    roots = np.flatnonzero(graph.alive & ~has_parent)
    if len(roots) == 0:
        raise CycleError("no root left after cycle removal")
    if len(roots) > 1:
        if len(_codes_of(graph.ids, {synthetic_root})):
            raise ValueError(f"node id {synthetic_root!r} is reserved for the synthetic root")
        root = graph.n_nodes
        graph.ids = pl.concat([graph.ids, pl.Series("id", [synthetic_root], dtype=pl.String)])
        graph.alive = np.append(graph.alive, True)
        # the root's code is the largest, its children ascend: (parent, child) order holds
        graph.child = np.concatenate([graph.child, roots])
        graph.parent = np.concatenate([graph.parent, np.full(len(roots), root, dtype=np.int64)])
        decisions.frames.append(_report_frame("synthetic_root", roots, np.full(len(roots), root), graph.ids,
                                              "parentless node placed under the synthetic root"))
    else:
        root = int(roots[0])
    decisions.stats["roots_in_graph"] = int(len(roots))
    return root


def _longest_root_paths(graph: _Graph, root: int, decisions: _Decisions) -> _Paths:
    """Step 5: longest root path of every node and (log) number of them, level by level;
    the edges not on a longest path are reported."""
    child, parent = graph.child, graph.parent
    n_all = graph.n_nodes
    if len(child) > 1 and not np.all((parent[1:] > parent[:-1]) | ((parent[1:] == parent[:-1]) & (child[1:] > child[:-1]))):
        order = np.lexsort((child, parent))  # defensive; not expected
        graph.child, graph.parent = child[order], parent[order]
        child, parent = graph.child, graph.parent
    indptr = np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=n_all))))
    remaining = np.bincount(child, minlength=n_all).astype(np.int64)
    depth = np.full(n_all, -1, dtype=np.int32)
    logn = np.full(n_all, -np.inf)
    depth[root] = 0
    logn[root] = 0.0
    tight = np.zeros(len(child), dtype=bool)
    frontier = np.array([root], dtype=np.int64)
    level = 0
    # Every array operation below touches only the edges leaving the frontier, so the
    # whole pass costs O(E log E) however deep the graph is.
    while len(frontier):
        pos = _ranges(indptr, frontier)
        if len(pos) == 0:
            break
        ch = child[pos]
        touched, dec = np.unique(ch, return_counts=True)
        remaining[touched] -= dec
        ready = touched[remaining[touched] == 0]
        level += 1
        depth[ready] = level
        tpos = pos[depth[ch] == level]
        tight[tpos] = True
        if len(tpos):
            # log-sum-exp of logn over the tight parents of each ready node, summed in
            # edge order (a stable sort keeps the order within each node)
            tc = child[tpos]
            o = np.argsort(tc, kind="stable")
            tc, lp = tc[o], logn[parent[tpos[o]]]
            gstart = np.flatnonzero(np.concatenate(([True], tc[1:] != tc[:-1])))
            mx = np.maximum.reduceat(lp, gstart)
            ssum = np.add.reduceat(np.exp(lp - np.repeat(mx, np.diff(np.append(gstart, len(tc))))), gstart)
            logn[tc[gstart]] = mx + np.log(ssum)
        frontier = ready
    unreached = np.flatnonzero(graph.alive & (depth < 0))
    if len(unreached):
        raise CycleError(f"{len(unreached)} node(s) unreachable after cycle removal, e.g. {graph.ids[int(unreached[0])]}")
    decisions.stats["max_depth"] = int(depth.max())

    not_longest = ~tight
    decisions.stats["not_longest"] = int(not_longest.sum())
    if not_longest.any():
        decisions.edges("not_longest", graph, not_longest, "parent is not on a longest root path")
    return _Paths(depth=depth, logn=logn, tight=tight)


def _draw_ties(graph: _Graph, paths: _Paths, tie_seed: int, decisions: _Decisions) -> np.ndarray:
    """Step 6: the parent of every node (-1 for the root). A node with several tight parents
    draws one with probability proportional to its number of longest root paths."""
    n_all = graph.n_nodes
    tc, tp = graph.child[paths.tight], graph.parent[paths.tight]
    chosen_parent = np.full(n_all, -1, dtype=np.int64)
    # most nodes have one tight parent: settle them without sorting all tight edges
    one = np.bincount(tc, minlength=n_all)[tc] == 1
    chosen_parent[tc[one]] = tp[one]
    tc, tp = tc[~one], tp[~one]
    o = np.lexsort((tp, tc))
    tc, tp = tc[o], tp[o]
    starts = np.flatnonzero(np.concatenate(([True], tc[1:] != tc[:-1]))) if len(tc) else np.empty(0, np.int64)
    counts = np.diff(np.append(starts, len(tc)))
    single = counts == 1
    chosen_parent[tc[starts[single]]] = tp[starts[single]]
    tie_groups = np.flatnonzero(~single)
    decisions.stats["ties"] = int(len(tie_groups))
    if not len(tie_groups):
        return chosen_parent
    gstart, gcount = starts[tie_groups], counts[tie_groups]
    pos = _ranges(np.append(starts, len(tc)), tie_groups)
    gid = np.repeat(np.arange(len(tie_groups)), gcount)
    w_log = paths.logn[tp[pos]]
    gmax = np.full(len(tie_groups), -np.inf)
    np.maximum.at(gmax, gid, w_log)
    w = np.exp(w_log - gmax[gid])
    csum = np.cumsum(w)
    group_base = np.concatenate(([0.0], csum[np.cumsum(gcount)[:-1] - 1]))
    within = csum - group_base[gid]
    totals = within[np.cumsum(gcount) - 1]
    tie_nodes = tc[gstart]
    tie_ids = _gather(graph.ids, tie_nodes)
    u = tie_draw(tie_seed, tie_ids.to_list())
    # chosen: first candidate whose cumulative share exceeds u
    exceeds = within > (u * totals)[gid]
    first = np.full(len(tie_groups), -1, dtype=np.int64)
    hit = np.flatnonzero(exceeds)
    # first hit per group
    _, first_idx = np.unique(gid[hit], return_index=True)
    first[np.unique(gid[hit])] = hit[first_idx]
    first[first < 0] = (np.cumsum(gcount) - 1)[first < 0]  # guard against rounding
    chosen_parent[tie_nodes] = tp[pos[first]]
    offsets = np.concatenate(([0], np.cumsum(gcount))).astype(np.int32)
    decisions.frames.append(_tie_report(tie_ids, offsets, _gather(graph.ids, tp[pos]),
                                        w / totals[gid], _gather(graph.ids, tp[pos[first]]), tie_seed))
    return chosen_parent


def _tie_report(tie_ids: pl.Series, offsets: np.ndarray, candidates: pl.Series,
                weights: np.ndarray, chosen: pl.Series, tie_seed: int) -> pl.DataFrame:
    """One ``tie`` report row per tied node: its candidates (flattened, cut at ``offsets``),
    their weights, the chosen parent and the tie seed."""
    n = len(tie_ids)
    cand = pa.ListArray.from_arrays(pa.array(offsets), candidates.cast(pl.String).to_arrow().cast(pa.string()))
    wts = pa.ListArray.from_arrays(pa.array(offsets), pa.array(weights, type=pa.float64()))
    return pl.DataFrame(
        {
            "kind": pl.Series(["tie"] * n, dtype=pl.String),
            "child_id": tie_ids.alias("child_id"),
            "candidates": pl.from_arrow(cand),
            "weights": pl.from_arrow(wts),
            "chosen": chosen.alias("chosen"),
            "seed": pl.Series([int(tie_seed)] * n, dtype=pl.Int64),
            "detail": pl.Series(["parent drawn with probability proportional to its number of longest root paths"] * n,
                                dtype=pl.String),
        }
    )


def _nodes_table(graph: _Graph, root: int, paths: _Paths, chosen_parent: np.ndarray) -> pl.DataFrame:
    """The ``nodes`` table of the tree, in id order (a synthetic root at its sorted place)."""
    keep_nodes = np.flatnonzero(graph.alive)
    par = chosen_parent[keep_nodes]
    nodes = pl.DataFrame(
        {
            "node_id": _gather(graph.ids, keep_nodes).alias("node_id"),
            "parent_id": _gather(graph.ids, np.maximum(par, 0)).alias("parent_id"),
            "_has_parent": par >= 0,
            "depth": pl.Series(paths.depth[keep_nodes], dtype=pl.Int32),
            "n_longest_paths_log": pl.Series(paths.logn[keep_nodes], dtype=pl.Float64),
        }
    ).with_columns(pl.when(pl.col("_has_parent")).then(pl.col("parent_id")).alias("parent_id")).drop("_has_parent")
    if root == graph.n_real:  # the synthetic root sits after every real id: move it to its sorted place
        at = int(np.searchsorted(keep_nodes[:-1], _insertion_point(graph.ids.head(graph.n_real), graph.ids[root])))
        nodes = pl.concat([nodes.slice(0, at), nodes.slice(nodes.height - 1, 1), nodes.slice(at, nodes.height - 1 - at)])
    return nodes


# ------------------------------------------------------------------ array helpers
def _ranges(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r]:indptr[r+1]`` for every r in ``rows``, concatenated."""
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return offs + np.arange(total, dtype=np.int64)


def _gather(ids: pl.Series, idx: np.ndarray) -> pl.Series:
    """``ids[idx]`` as a string Series (no Python objects per element)."""
    return ids.gather(np.asarray(idx, dtype=np.int64))


def _insertion_point(ids: pl.Series, value: str) -> int:
    """Position of ``value`` in the sorted string Series ``ids`` (left side)."""
    return int(ids.search_sorted(value, side="left"))


def _codes_of(ids: pl.Series, values: set[str]) -> np.ndarray:
    """Codes (positions in the sorted ``ids``) of those ``values`` that are ids, ascending."""
    if not values:
        return np.empty(0, dtype=np.int64)
    want = pl.Series("id", sorted(values), dtype=pl.String)
    pos = ids.search_sorted(want, side="left").to_numpy().astype(np.int64)
    ok = pos < len(ids)
    ok[ok] = (ids.gather(pos[ok]) == want.filter(pl.Series(ok))).to_numpy()
    return np.unique(pos[ok])


# ------------------------------------------------------------------ report rows
def _conform_report(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(
        [
            (pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c))
            for c, t in REPORT_SCHEMA.items()
        ]
    )


def _report_frame(kind: str, child: np.ndarray, parent: np.ndarray | None, ids: pl.Series,
                  detail: str | None = None) -> pl.DataFrame:
    n = len(child)
    return pl.DataFrame(
        {
            "kind": pl.repeat(kind, n, dtype=pl.String, eager=True),
            "child_id": _gather(ids, child).alias("child_id"),
            "parent_id": (_gather(ids, parent) if parent is not None
                          else pl.repeat(None, n, dtype=pl.String, eager=True)).alias("parent_id"),
            "detail": pl.repeat(detail, n, dtype=pl.String, eager=True),
        }
    )
