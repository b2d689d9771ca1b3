"""Kahn's peeling level by level, the large levels on several threads.

The tree builder peels a graph twice: once to find the nodes that may lie on a cycle (sources
removed repeatedly, then sinks: :func:`cycle_candidates`), once for the longest root path of
every node (:func:`kahn_depths`: a node's level, peeling from the root, is its depth). Both are
Kahn's algorithm [9] taken a level at a time: level 0 is given; level ``L + 1`` is every node
whose last remaining in-edge leaves level ``L``.

Which levels run on several threads
    A level's work is the out-edges of its nodes. A level with fewer than
    :func:`.threads.threads_for`'s grain of out-edges per thread runs on one thread, in one
    compiled call with the small levels around it (a Wikidata-shaped graph has a few wide
    levels holding most nodes, and a long tail of narrow ones: those cost no thread hand-over).
    A wide level is cut into one run of its nodes per thread, of about equal out-edge counts;
    each thread decrements the remaining in-edges of the targets with an atomic
    fetch-and-subtract, and the thread that takes a count to zero puts the target into the next
    level. The levels, and so every depth, are the same for any thread count; the order of the
    nodes inside a level may differ (nothing computed from it depends on it).

References
----------
Numbers of docs/references.md: [9] Kahn 1962 (topological sorting).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from taxoforge.trees.graph_kernels import compiled
from taxoforge.trees import threads as thread_settings
from taxoforge.trees.threads import run, threads_for

__all__ = ["peel", "level_ranges", "cycle_candidates", "kahn_depths"]


@intrinsic
def _fetch_sub_one(typingctx, arr, idx):
    """``arr[idx] -= 1`` as one atomic step; the value before it."""
    sig = arr.dtype(arr, types.intp)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        one = ir.Constant(context.get_value_type(aryty.dtype), 1)
        return builder.atomic_rmw("sub", ptr, one, "monotonic")

    return sig, codegen


@compiled
def _serial_levels(ptr, targets, remaining, order, bounds, nlev, wide):
    """Expand levels one after the other, from level ``nlev - 1``, until the next level to
    expand has at least ``wide`` out-edges (then it is left to :func:`_expand_range` on several
    threads) or is empty. Returns the number of levels whose nodes are in ``order``."""
    while True:
        a = bounds[nlev - 1]
        b = bounds[nlev]
        if a == b:
            return nlev
        if wide > 0:
            edges = 0
            for i in range(a, b):
                v = order[i]
                edges += ptr[v + 1] - ptr[v]
            if edges >= wide:
                return nlev
        tail = b
        for i in range(a, b):
            v = order[i]
            for e in range(ptr[v], ptr[v + 1]):
                c = targets[e]
                remaining[c] -= 1
                if remaining[c] == 0:
                    order[tail] = c
                    tail += 1
        nlev += 1
        bounds[nlev] = tail


@compiled
def _expand_range(ptr, targets, remaining, order, lo, hi, out, at):
    """The nodes of ``order[lo:hi]`` (part of a level) release their targets atomically; those
    taken to zero go to ``out[at:]``. Returns how many."""
    w = at
    for i in range(lo, hi):
        v = order[i]
        for e in range(ptr[v], ptr[v + 1]):
            c = targets[e]
            if _fetch_sub_one(remaining, c) == 1:
                out[w] = c
                w += 1
    return w - at


@compiled
def _edge_prefix(ptr, order, a, b, csum):
    s = 0
    for i in range(a, b):
        v = order[i]
        s += ptr[v + 1] - ptr[v]
        csum[i - a] = s


def peel(ptr: np.ndarray, targets: np.ndarray, remaining: np.ndarray, start: np.ndarray,
         threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Kahn's algorithm level by level (module docstring).

    Parameters
    ----------
    ptr, targets : numpy.ndarray
        The out-edges of node ``v`` are ``targets[ptr[v]:ptr[v + 1]]`` (``int64``).
    remaining : numpy.ndarray
        ``int64``, per node, the in-edges not yet released (decremented in place).
    start : numpy.ndarray
        Level 0 (``int64`` node codes).
    threads : int, optional
        The most threads a wide level uses (default: every core).

    Returns
    -------
    order : numpy.ndarray
        The nodes reached, level after level (``int64``).
    bounds : numpy.ndarray
        Level ``L`` is ``order[bounds[L]:bounds[L + 1]]``.
    """
    n = len(remaining)
    order = np.empty(n, dtype=np.int64)
    bounds = np.zeros(n + 2, dtype=np.int64)
    k = len(start)
    order[:k] = start
    bounds[1] = k
    nlev = 1
    most = threads_for(len(targets), threads)
    wide = 2 * thread_settings.GRAIN if most > 1 else 0
    out = None
    while True:
        nlev = int(_serial_levels(ptr, targets, remaining, order, bounds, nlev, wide))
        a, b = int(bounds[nlev - 1]), int(bounds[nlev])
        if a == b:
            break
        csum = np.empty(b - a, dtype=np.int64)  # out-edges of the level's nodes, running total
        _edge_prefix(ptr, order, a, b, csum)
        t = threads_for(int(csum[-1]), most)
        cuts = [a, *(a + int(np.searchsorted(csum, csum[-1] * j // t)) for j in range(1, t)), b]
        if out is None:
            out = np.empty(len(targets), dtype=np.int64)
        at = [0, *(int(csum[c - a - 1]) if c > a else 0 for c in cuts[1:-1])]
        got = run(_expand_range, [(ptr, targets, remaining, order, lo, hi, out, o)
                                  for lo, hi, o in zip(cuts[:-1], cuts[1:], at)])
        tail = b
        for o, g in zip(at, got):
            order[tail:tail + g] = out[o:o + g]
            tail += g
        nlev += 1
        bounds[nlev] = tail
    return order[:bounds[nlev]], bounds[:nlev + 1].copy()


def level_ranges(bounds: np.ndarray, lo: int, hi: int, threads: int | None = None) -> list[list[tuple[int, int]]]:
    """The positions ``lo:hi`` of a level-ordered array in steps that a per-node pass can run
    one after the other: each step a list of ranges that may run at once (one per thread for a
    wide level, one range for a run of narrow levels; a node's inputs lie in earlier levels).

    Parameters
    ----------
    bounds : numpy.ndarray
        Level ``L`` is ``[bounds[L], bounds[L + 1])``.
    lo, hi : int
        The positions to cover.
    threads : int, optional
        The most threads a wide level uses.

    Returns
    -------
    list of list of tuple of int
        The steps, in order.
    """
    steps: list[list[tuple[int, int]]] = []
    at = lo
    first = int(np.searchsorted(bounds, lo, side="right")) - 1
    for lvl in range(max(first, 0), len(bounds) - 1):
        a, b = max(int(bounds[lvl]), lo), min(int(bounds[lvl + 1]), hi)
        if a >= hi:
            break
        t = threads_for(b - a, threads)
        if t > 1:
            if at < a:
                steps.append([(at, a)])
            steps.append([(a + (b - a) * j // t, a + (b - a) * (j + 1) // t) for j in range(t)])
            at = b
    if at < hi:
        steps.append([(at, hi)])
    return steps


def _out_ptr(rows: np.ndarray, n: int) -> np.ndarray:
    """Row pointers of edges sorted by ``rows``: node ``v``'s edges are ``ptr[v]:ptr[v + 1]``."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return ptr


def cycle_candidates(child: np.ndarray, parent: np.ndarray, n: int, threads: int | None = None) -> np.ndarray:
    """Mask of the nodes left after removing, repeatedly, every node without a parent (sources)
    and then every node without a child (sinks): a node on a cycle is never removed, and every
    node left lies on a cycle or on a path between two cycles.

    Parameters
    ----------
    child, parent : numpy.ndarray
        The edges ``child → parent`` (``int64`` codes below ``n``), sorted by parent.
    n : int
        The number of nodes.
    threads : int, optional
        The most threads a wide level uses.

    Returns
    -------
    numpy.ndarray
        ``bool``, one per node.
    """
    remaining = np.bincount(child, minlength=n).astype(np.int64)
    peeled, _ = peel(_out_ptr(parent, n), child, remaining, np.flatnonzero(remaining == 0), threads)
    alive = np.ones(n, dtype=bool)
    alive[peeled] = False
    both = alive[child] & alive[parent]  # the edges left; sinks peeled over them, child to parent
    c, p = child[both], parent[both]
    by_child = np.argsort(c, kind="stable")
    out_left = np.bincount(p, minlength=n).astype(np.int64)
    peeled, _ = peel(_out_ptr(c, n), p[by_child], out_left, np.flatnonzero(alive & (out_left == 0)), threads)
    alive[peeled] = False
    return alive


def kahn_depths(child: np.ndarray, parent: np.ndarray, n: int, root: int,
                threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The longest root path of every node: its level when peeling from the root.

    Parameters
    ----------
    child, parent : numpy.ndarray
        The edges ``child → parent`` (``int64`` codes below ``n``) of an acyclic graph, sorted
        by parent.
    n : int
        The number of nodes.
    root : int
        The root's code.
    threads : int, optional
        The most threads a wide level uses.

    Returns
    -------
    depth : numpy.ndarray
        ``int32``, -1 where the root does not reach.
    order : numpy.ndarray
        The reached nodes, level after level (non-decreasing depth).
    bounds : numpy.ndarray
        Depth ``d`` is ``order[bounds[d]:bounds[d + 1]]``.
    """
    remaining = np.bincount(child, minlength=n).astype(np.int64)
    order, bounds = peel(_out_ptr(parent, n), child, remaining, np.array([root], dtype=np.int64), threads)
    depth = np.full(n, -1, dtype=np.int32)
    depth[order] = np.repeat(np.arange(len(bounds) - 1, dtype=np.int32), np.diff(bounds))
    return depth, order, bounds
