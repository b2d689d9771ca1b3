"""From a directed graph to a rooted tree by longest root paths (Snæbjarnarson et al. 2025 [1] §4.1;
docs/method.md#from-a-graph-to-a-tree).

Input
    An edge table ``(child, parent)`` of string node ids — e.g. Wikidata's subclass-of
    (P279) edges, WordNet hypernym edges — and optionally more node ids that have no edge.

Output
    A :class:`TreeBuild`: the ``nodes`` table (``node_id``, ``parent_id``, ``depth``),
    the ``report`` table naming every edge that was removed or chosen between, and
    counts of each kind in ``stats``.

Algorithm
    1. Encode ids as integers in sorted id order (so nothing depends on input order;
       :func:`taxoforge.trees.id_codes.encode_ids`); drop duplicate edges.
    2. Remove the nodes of the exclusion list (with all their edges) and self loops.
    3. Break cycles. Find the strongly connected components: peel sources and sinks
       first (:func:`.frontiers.cycle_candidates`: what is left lies on or between
       cycles), then ``scipy.sparse.csgraph`` on what is left. Policy ``"dfs_back_edges"``
       (default): inside every non-trivial component run a depth-first search from the
       top (parent → child), starting at the members that have a parent outside the
       component, in sorted id order, then at the rest; remove every back edge. Policy
       ``"drop_abstract"``: remove, from every non-trivial component, its most abstract
       member (the most direct subclasses, ties by id) with all its edges, and repeat
       until no cycle is left.
    4. Give every parentless node a synthetic parent ``<source>:root`` when there is more
       than one of them.
    5. Longest root path (:mod:`.longest_paths`): Kahn's topological sort level by level
       from the root, so a node's level is its depth (:func:`.frontiers.kahn_depths`). An
       edge is *tight* when it lies on a longest path. ``log n(v)``, the log of the number
       of longest root paths, is the log-sum-exp of ``log n`` over the tight parents, level
       by level; a node with one tight parent takes its parent's value as it is.
    6. Seeded ties: a node with several tight parents picks parent ``p`` with probability
       ``n(p) / Σ n``, using a uniform draw that depends only on ``(tie_seed, node id)``
       (BLAKE2b), so every longest path of a node is equally likely, the result is one
       tree, and changing one corner of the graph does not reshuffle the rest.
    7. Report: the ``nodes`` table in id order, the removed and chosen-between edges
       sorted by kind, child and parent (integer sorts on the codes: the codes are in id
       order), and their counts.

Where the time goes (2 M nodes, 2.33 M edges, Wikidata-shaped; ``benchmarks/bench_tree.py``)
    Steps 1, 3 and 5 are linear passes of compiled code (:mod:`.graph_kernels`); the float
    arithmetic of steps 5 and 6 is numpy's, on the nodes with several tight parents only,
    so the numbers (and the tie draws that depend on them) are bit for bit those of the
    vectorised formulation. What is left is the strings: reading the ids (step 1) and
    gathering them into the output tables (step 7).

References
----------
Numbers of docs/references.md: [5] Kiritchenko et al. 2006 (hierarchical measures on a tree);
[8] Suchanek et al., YAGO 4.5, SIGIR 2024 (deterministic cycle removal, every removed edge
reported); [9] Kahn 1962 (topological sorting).
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
from taxoforge.trees import graph_kernels as kern
from taxoforge.trees import parallel_sort
from taxoforge.trees.frontiers import cycle_candidates
from taxoforge.trees.id_codes import encode_ids
from taxoforge.trees.longest_paths import LongestPaths, index_ranges, longest_paths
from taxoforge.trees.tables import REPORT_SCHEMA
from taxoforge.trees.tie_draws import tie_draws

__all__ = ["TreeBuild", "build_tree", "CYCLE_POLICIES", "tie_draw"]

CYCLE_POLICIES = ("dfs_back_edges", "drop_abstract")


class CycleError(RuntimeError):
    """Raised if a cycle survives cycle removal (a bug, never expected)."""


@dataclass
class TreeBuild:
    """Result of :func:`build_tree`.

    Attributes
    ----------
    nodes : polars.DataFrame
        ``node_id``, ``parent_id`` (null for the root), ``depth``, ``n_longest_paths_log``
        (natural log of the number of longest root paths of the node in the acyclic graph).
    report : polars.DataFrame
        One row per decision (:data:`taxoforge.trees.tables.REPORT_KINDS`).
    stats : dict
        Counts by kind, and sizes.
    root_id : str
        The root's id.
    tie_seed, cycle_policy
        How it was built (they go into the tree's provenance, :meth:`TreeTables.from_build`).
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
    threads: int | None = None,
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
    child_col, parent_col : str
        Names of the two id columns of ``edges``.
    threads : int, optional
        The most threads a step may use (default: every core this process may run on). Each
        step that splits its work takes :func:`taxoforge.trees.threads.threads_for` of its
        size: never more threads than cores, and none for less than
        :data:`taxoforge.trees.threads.GRAIN` items, so a larger count never makes a build
        slower and a small graph runs on one thread. The tree is the same for every count.

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
    graph = _encode(edges, extra_nodes, child_col=child_col, parent_col=parent_col, decisions=decisions,
                    threads=threads)
    _exclude(graph, exclude, decisions)
    _break_cycles(graph, cycle_policy, decisions)
    root = _add_root(graph, f"{source}:root", decisions)
    paths = _longest_root_paths(graph, root, decisions)
    chosen_parent = _draw_ties(graph, paths, tie_seed, decisions)
    nodes = _nodes_table(graph, root, paths, chosen_parent)
    decisions.stats["nodes"] = nodes.height
    decisions.stats["edges_kept"] = nodes.height - 1
    return TreeBuild(nodes=nodes, report=decisions.report(graph), stats=decisions.stats,
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
    threads: int | None = None  # the most threads a step uses (build_tree's argument)

    @property
    def n_nodes(self) -> int:
        return len(self.ids)

    def keep_edges(self, keep: np.ndarray) -> None:
        """Keep only the edges where the boolean mask ``keep`` is true (order unchanged)."""
        self.child, self.parent = self.child[keep], self.parent[keep]

    def sort_rank(self, codes: np.ndarray) -> np.ndarray:
        """Position of each code in the id order of the output (a synthetic root moved to its
        sorted place among the real ids)."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.n_nodes == self.n_real:
            return codes
        at = _insertion_point(self.ids.head(self.n_real), self.ids[self.n_real])
        return np.where(codes == self.n_real, at, codes + (codes >= at))


@dataclass
class _Decisions:
    """What the steps removed or chose: the removed edges of each kind as code pairs, the
    tie rows, and counts."""

    stats: dict
    removed: dict[str, list[tuple[np.ndarray, np.ndarray, str]]] = field(default_factory=dict)
    ties: pl.DataFrame | None = None

    def edges(self, kind: str, graph: _Graph, mask_or_index: np.ndarray, detail: str) -> None:
        """Report the edges of ``graph`` selected by a boolean mask or an index array."""
        self.codes(kind, graph.child[mask_or_index], graph.parent[mask_or_index], detail)

    def codes(self, kind: str, child: np.ndarray, parent: np.ndarray, detail: str) -> None:
        """Report the edges ``child → parent`` (codes)."""
        self.removed.setdefault(kind, []).append((np.asarray(child, np.int64), np.asarray(parent, np.int64), detail))

    def report(self, graph: _Graph) -> pl.DataFrame:
        """The report table (:data:`REPORT_SCHEMA`), sorted by kind, child, parent: integer
        sorts of the codes (in id order), then the strings gathered once."""
        frames = []
        kinds = sorted(set(self.removed) | ({"tie"} if self.ties is not None else set()))
        for kind in kinds:
            if kind == "tie":
                frames.append(_conform_report(self.ties))
                continue
            parts = self.removed[kind]
            child = np.concatenate([c for c, _, _ in parts])
            parent = np.concatenate([p for _, p, _ in parts])
            detail = np.concatenate([np.full(len(c), i, dtype=np.int64) for i, (c, _, _) in enumerate(parts)])
            rc, rp = graph.sort_rank(child), graph.sort_rank(parent)
            order = np.lexsort((detail, rp, rc))
            texts = pl.Series([d for _, _, d in parts], dtype=pl.String)
            frames.append(_conform_report(pl.DataFrame({
                "kind": pl.repeat(kind, len(order), dtype=pl.String, eager=True),
                "child_id": _gather(graph.ids, child[order]),
                "parent_id": _gather(graph.ids, parent[order]),
                "detail": texts.gather(detail[order]),
            })))
        if not frames:
            return pl.DataFrame(schema=REPORT_SCHEMA)
        return pl.concat(frames)


# ------------------------------------------------------------------ the steps
def _encode(edges: pl.DataFrame, extra_nodes: Iterable[str], *, child_col: str, parent_col: str,
            decisions: _Decisions, threads: int | None = None) -> _Graph:
    """Step 1: integer codes in sorted id order, unique edges sorted by (parent, child)."""
    for c in (child_col, parent_col):
        if c not in edges.columns:
            raise ValueError(f"edge table has no column {c!r}; columns are {edges.columns}")
    e = edges.select(pl.col(child_col).cast(pl.String).alias("c"), pl.col(parent_col).cast(pl.String).alias("p"))
    if e["c"].null_count() or e["p"].null_count():
        nulls = e.with_row_index("row").filter(pl.col("c").is_null() | pl.col("p").is_null())
        raise ValueError(f"edge table has null ids in {nulls.height} row(s), first at row {nulls['row'][0]}")
    extra = pl.Series("id", list(extra_nodes), dtype=pl.String)
    ids, (child, parent, _) = encode_ids([e["c"], e["p"], extra], threads)
    n = len(ids)
    if n == 0:
        raise ValueError("empty graph: no edges and no nodes")
    child, parent = parallel_sort.sorted_unique_edges(child, parent, n, threads)
    decisions.stats["duplicate_edges"] = edges.height - len(child)
    return _Graph(ids=ids, child=child, parent=parent, alive=np.ones(n, dtype=bool), n_real=n, threads=threads)


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
    cycle)``, or ``None`` when the graph has no cycle. Only the nodes left by peeling sources
    and sinks (:func:`.graph_kernels.cycle_candidates`) go to ``scipy.sparse.csgraph``."""
    n = graph.n_nodes
    child, parent = graph.child, graph.parent
    members = np.flatnonzero(cycle_candidates(child, parent, n, graph.threads))
    if not len(members):
        return None
    local = np.full(n, -1, dtype=np.int64)
    local[members] = np.arange(len(members))
    inside = (local[child] >= 0) & (local[parent] >= 0)
    k = len(members)
    g = csr_matrix((np.ones(int(inside.sum()), dtype=np.int8), (local[parent[inside]], local[child[inside]])),
                   shape=(k, k))
    ncomp, sub_label = connected_components(g, directed=True, connection="strong")
    size = np.bincount(sub_label, minlength=ncomp)
    label = np.arange(n, dtype=np.int64) + ncomp  # every other node alone in its component
    label[members] = sub_label
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[members[size[sub_label] > 1]] = True
    n_big = int((size > 1).sum())
    return (label, in_cycle, n_big) if n_big else None


def _remove_dfs_back_edges(graph: _Graph, label: np.ndarray, in_cycle: np.ndarray, decisions: _Decisions) -> None:
    """Policy ``dfs_back_edges``: a DFS inside every component with a cycle, entered first at
    the members with a parent outside it; remove every back edge."""
    child, parent = graph.child, graph.parent
    entry = np.zeros(graph.n_nodes, dtype=bool)
    entry[child[in_cycle[child] & (label[child] != label[parent])]] = True
    out_ptr = np.concatenate(([0], np.cumsum(np.bincount(parent, minlength=graph.n_nodes))))
    members = np.flatnonzero(in_cycle)
    members = members[np.argsort(label[members], kind="stable")]  # by component, codes ascending
    state = np.zeros(graph.n_nodes, dtype=np.int8)
    back = []
    for grp in np.split(members, np.flatnonzero(np.diff(label[members])) + 1):
        start_order = np.concatenate([grp[entry[grp]], grp[~entry[grp]]])
        back.append(kern.dfs_back_edges(start_order, out_ptr, child, label, label[grp[0]], state))
    back_arr = np.sort(np.concatenate(back)) if back else np.empty(0, np.int64)
    decisions.edges("cycle_back_edge", graph, back_arr, "back edge of a DFS inside a strongly connected component")
    decisions.stats["cycle_edges_removed"] += len(back_arr)
    keep = np.ones(len(child), dtype=bool)
    keep[back_arr] = False
    graph.keep_edges(keep)


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
        graph.ids = pl.concat([graph.ids, pl.Series("id", [synthetic_root], dtype=pl.String)], rechunk=True)  # gathers from one chunk
        graph.alive = np.append(graph.alive, True)
        # the root's code is the largest, its children ascend: (parent, child) order holds
        graph.child = np.concatenate([graph.child, roots])
        graph.parent = np.concatenate([graph.parent, np.full(len(roots), root, dtype=np.int64)])
        decisions.codes("synthetic_root", roots, np.full(len(roots), root),
                        "parentless node placed under the synthetic root")
    else:
        root = int(roots[0])
    decisions.stats["roots_in_graph"] = int(len(roots))
    return root


def _longest_root_paths(graph: _Graph, root: int, decisions: _Decisions) -> LongestPaths:
    """Step 5: longest root path of every node and (log) number of them
    (:func:`.longest_paths.longest_paths`); the edges not on a longest path are reported."""
    paths = longest_paths(graph.child, graph.parent, graph.n_nodes, root, graph.threads)
    unreached = np.flatnonzero(graph.alive & (paths.depth < 0))
    if len(unreached):
        raise CycleError(f"{len(unreached)} node(s) unreachable after cycle removal, e.g. {graph.ids[int(unreached[0])]}")
    decisions.stats["max_depth"] = int(paths.depth.max())
    not_longest = ~paths.tight
    decisions.stats["not_longest"] = int(not_longest.sum())
    if not_longest.any():
        decisions.edges("not_longest", graph, not_longest, "parent is not on a longest root path")
    return paths


def _draw_ties(graph: _Graph, paths: LongestPaths, tie_seed: int, decisions: _Decisions) -> np.ndarray:
    """Step 6: the parent of every node (-1 for the root). A node with several tight parents
    draws one with probability proportional to its number of longest root paths."""
    ptr, pos = paths.tight_ptr, paths.tight_pos
    n_tight = np.diff(ptr)
    chosen_parent = np.full(graph.n_nodes, -1, dtype=np.int64)
    one = np.flatnonzero(n_tight == 1)
    chosen_parent[one] = graph.parent[pos[ptr[one]]]
    tie_nodes = np.flatnonzero(n_tight >= 2)  # ascending id order
    decisions.stats["ties"] = int(len(tie_nodes))
    if not len(tie_nodes):
        return chosen_parent
    gcount = n_tight[tie_nodes]
    tp = graph.parent[pos[index_ranges(ptr, tie_nodes)]]  # candidates of each node in id order
    gid = np.repeat(np.arange(len(tie_nodes)), gcount)
    ends = np.cumsum(gcount)
    w_log = paths.logn[tp]
    gmax = np.full(len(tie_nodes), -np.inf)
    np.maximum.at(gmax, gid, w_log)
    w = np.exp(w_log - gmax[gid])
    csum = np.cumsum(w)
    group_base = np.concatenate(([0.0], csum[ends[:-1] - 1]))
    within = csum - group_base[gid]
    totals = within[ends - 1]
    tie_ids = _gather(graph.ids, tie_nodes)
    u = tie_draws(tie_seed, tie_ids, graph.threads)  # seeded.tie_draw's numbers, compiled
    # chosen: first candidate whose cumulative share exceeds u (the last one if rounding says none)
    hit = np.flatnonzero(within > (u * totals)[gid])
    first = ends - 1
    if len(hit):
        g_hit = gid[hit]
        is_first = np.concatenate(([True], g_hit[1:] != g_hit[:-1]))
        first[g_hit[is_first]] = hit[is_first]
    chosen_parent[tie_nodes] = tp[first]
    offsets = np.concatenate(([0], ends)).astype(np.int64)
    decisions.ties = _tie_report(tie_ids, offsets, _gather(graph.ids, tp), w / totals[gid],
                                 _gather(graph.ids, tp[first]), tie_seed)
    return chosen_parent


def _tie_report(tie_ids: pl.Series, offsets: np.ndarray, candidates: pl.Series,
                weights: np.ndarray, chosen: pl.Series, tie_seed: int) -> pl.DataFrame:
    """One ``tie`` report row per tied node: its candidates (flattened, cut at ``offsets``),
    their weights, the chosen parent and the tie seed."""
    n = len(tie_ids)
    cand = _list_array(offsets, candidates.rechunk().to_arrow())
    wts = _list_array(offsets, _arrow_array(pa.float64(), np.ascontiguousarray(weights, dtype=np.float64)))
    return pl.DataFrame(
        {
            "kind": pl.repeat("tie", n, dtype=pl.String, eager=True),
            "child_id": tie_ids.alias("child_id"),
            "candidates": pl.from_arrow(cand),
            "weights": pl.from_arrow(wts),
            "chosen": chosen.alias("chosen"),
            "seed": pl.repeat(int(tie_seed), n, dtype=pl.Int64, eager=True),
            "detail": pl.repeat("parent drawn with probability proportional to its number of longest root paths",
                                n, dtype=pl.String, eager=True),
        }
    )


def _arrow_array(kind: pa.DataType, values: np.ndarray) -> pa.Array:
    """A numpy array as an Arrow array over the same memory (``pa.array`` would import pandas)."""
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def _list_array(offsets: np.ndarray, values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Arrow lists cut from ``values`` at ``offsets`` (``int64``, one more than the lists)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return pa.LargeListArray.from_arrays(_arrow_array(pa.int64(), offsets), values)


def _nodes_table(graph: _Graph, root: int, paths: LongestPaths, chosen_parent: np.ndarray) -> pl.DataFrame:
    """The ``nodes`` table of the tree, in id order (a synthetic root at its sorted place)."""
    keep_nodes = np.flatnonzero(graph.alive)
    par = chosen_parent[keep_nodes]
    ids = pl.lit(graph.ids)
    # the two columns of ids gathered side by side (polars evaluates a select's expressions in parallel)
    nodes = pl.DataFrame({"k": keep_nodes, "p": par}).select(
        ids.gather(pl.col("k")).alias("node_id"),
        pl.when(pl.col("p") >= 0).then(ids.gather(pl.col("p").clip(0))).alias("parent_id"),
        pl.Series("depth", paths.depth[keep_nodes], dtype=pl.Int32),
        pl.Series("n_longest_paths_log", paths.logn[keep_nodes], dtype=pl.Float64))
    if root == graph.n_real:  # the synthetic root sits after every real id: move it to its sorted place
        at = int(np.searchsorted(keep_nodes[:-1], _insertion_point(graph.ids.head(graph.n_real), graph.ids[root])))
        nodes = pl.concat([nodes.slice(0, at), nodes.slice(nodes.height - 1, 1), nodes.slice(at, nodes.height - 1 - at)])
    return nodes


# ------------------------------------------------------------------ array helpers
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


def _conform_report(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(
        [
            (pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c))
            for c, t in REPORT_SCHEMA.items()
        ]
    )
