"""Step 5 of :func:`taxoforge.trees.build.build_tree`: the longest root path of every node, the
edges on one, and the number of longest paths (docs/method.md#from-a-graph-to-a-tree).

* Depths: Kahn's peeling from the root, level by level (:func:`.frontiers.kahn_depths`; a
  node's level is its longest root path); the wide levels on several threads.
* Tight edges: an edge ``child → parent`` is *tight* when ``depth[child] == depth[parent] + 1``;
  each node's tight in-edges are listed in ascending position (= ascending parent code), found
  in ranges of the edges on several threads and grouped by one sort of ``child << b | position``
  (:func:`.parallel_sort.sort_inplace`).
* ``log n(v)``, the log of the number of longest root paths: the log-sum-exp of ``log n`` over
  the tight parents, level by level — numpy's arithmetic, over the nodes with several tight
  parents of one level at a time in code order, so the numbers (and the tie draws that depend
  on them) are bit for bit those of the vectorised formulation at every thread count; a node
  with one tight parent takes its parent's value as it is (compiled, in runs of narrow levels,
  and a wide level split over threads: a level's nodes depend on earlier levels only).

References
----------
Numbers of docs/references.md: [9] Kahn 1962 (topological sorting).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from taxoforge.trees import graph_kernels as kern
from taxoforge.trees.frontiers import kahn_depths, level_ranges
from taxoforge.trees.graph_kernels import compiled
from taxoforge.trees.parallel_sort import bit_length, sort_inplace
from taxoforge.trees.threads import run, split, threads_for

__all__ = ["LongestPaths", "longest_paths", "index_ranges"]


@dataclass
class LongestPaths:
    """The longest root paths of a graph's nodes, per node code.

    Attributes
    ----------
    depth : numpy.ndarray
        ``int32`` longest root path, -1 where the root does not reach.
    order, bounds : numpy.ndarray
        The reached nodes level by level: depth ``d`` is ``order[bounds[d]:bounds[d + 1]]``.
    tight : numpy.ndarray
        ``bool`` per edge: on a longest path.
    tight_ptr, tight_pos : numpy.ndarray
        The positions of node ``v``'s tight in-edges, ascending: ``tight_pos[tight_ptr[v]:tight_ptr[v + 1]]``.
    logn : numpy.ndarray
        ``float64`` log of the number of longest root paths (``-inf`` where unreached).
    """

    depth: np.ndarray
    order: np.ndarray
    bounds: np.ndarray
    tight: np.ndarray
    tight_ptr: np.ndarray
    tight_pos: np.ndarray
    logn: np.ndarray


def longest_paths(child: np.ndarray, parent: np.ndarray, n: int, root: int,
                  threads: int | None = None) -> LongestPaths:
    """Depths, tight edges and path counts of an acyclic graph (module docstring).

    Parameters
    ----------
    child, parent : numpy.ndarray
        The edges ``child → parent`` (``int64`` codes below ``n``), sorted by ``(parent, child)``.
    n : int
        The number of nodes.
    root : int
        The root's code.
    threads : int, optional
        The most threads a step uses (:func:`taxoforge.trees.threads.threads_for`).

    Returns
    -------
    LongestPaths
    """
    depth, order, bounds = kahn_depths(child, parent, n, root, threads)
    tight, ptr, pos = _tight_in_edges(child, parent, depth, n, threads)
    logn = np.full(n, -np.inf)
    logn[root] = 0.0
    if len(order):
        _count_longest_paths(order, bounds, depth, ptr, pos, parent, logn, threads)
    return LongestPaths(depth=depth, order=order, bounds=bounds, tight=tight, tight_ptr=ptr, tight_pos=pos,
                        logn=logn)


@compiled
def _mark_tight(child, parent, depth, lo, hi, tight):
    c = 0
    for e in range(lo, hi):
        t = depth[child[e]] == depth[parent[e]] + 1
        tight[e] = t
        if t:
            c += 1
    return c


@compiled
def _tight_keys(child, tight, lo, hi, b, keys, w):
    for e in range(lo, hi):
        if tight[e]:
            keys[w] = (child[e] << b) | e
            w += 1


def _tight_in_edges(child: np.ndarray, parent: np.ndarray, depth: np.ndarray, n: int,
                    threads: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(tight, ptr, pos)`` as :func:`.graph_kernels.tight_in_edges` gives them."""
    m = len(child)
    b = bit_length(m)
    if bit_length(n) + b > 62:
        return kern.tight_in_edges(child, parent, depth, n)
    ranges = split(m, threads_for(m, threads))
    tight = np.empty(m, dtype=np.bool_)
    counts = run(_mark_tight, [(child, parent, depth, lo, hi, tight) for lo, hi in ranges])
    at = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    keys = np.empty(int(at[-1]), dtype=np.int64)
    run(_tight_keys, [(child, tight, lo, hi, b, keys, int(w)) for (lo, hi), w in zip(ranges, at[:-1])])
    sort_inplace(keys, threads, bit_length(n) + b)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys >> b, minlength=n), out=ptr[1:])
    return tight, ptr, keys & ((1 << b) - 1)


def _copy_single(order, bounds, lo, hi, ptr, pos, parent, logn, threads) -> None:
    """:func:`.graph_kernels.copy_single_logn` over ``order[lo:hi]``, level after level (wide
    levels split over threads: :func:`.frontiers.level_ranges`)."""
    for step in level_ranges(bounds, lo, hi, threads):
        run(kern.copy_single_logn, [(order, a, b, ptr, pos, parent, logn) for a, b in step])


def _count_longest_paths(order: np.ndarray, bounds: np.ndarray, depth: np.ndarray, ptr: np.ndarray,
                         pos: np.ndarray, parent: np.ndarray, logn: np.ndarray, threads: int | None) -> None:
    """``logn`` of every node below the root (module docstring)."""
    n_tight = np.diff(ptr)
    multi = np.flatnonzero(n_tight >= 2)  # code order inside a level, whatever the level's order
    multi = multi[np.argsort(depth[multi], kind="stable")]
    if not len(multi):
        _copy_single(order, bounds, 0, len(order), ptr, pos, parent, logn, threads)
        return
    m_depth = depth[multi]
    cuts = np.flatnonzero(np.concatenate(([True], m_depth[1:] != m_depth[:-1], [True])))
    done = 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        start = int(bounds[int(m_depth[a])])
        _copy_single(order, bounds, done, start, ptr, pos, parent, logn, threads)
        done = start
        group = multi[a:b]
        counts = n_tight[group]
        lp = logn[parent[pos[index_ranges(ptr, group)]]]
        gstart = np.concatenate(([0], np.cumsum(counts)[:-1]))
        mx = np.maximum.reduceat(lp, gstart)
        ssum = np.add.reduceat(np.exp(lp - np.repeat(mx, counts)), gstart)
        logn[group] = mx + np.log(ssum)
    _copy_single(order, bounds, done, len(order), ptr, pos, parent, logn, threads)


def index_ranges(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r]:indptr[r+1]`` for every r in ``rows``, concatenated.

    Parameters
    ----------
    indptr : numpy.ndarray
        Row pointers.
    rows : numpy.ndarray
        The rows.

    Returns
    -------
    numpy.ndarray
        ``int64`` positions.
    """
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return offs + np.arange(total, dtype=np.int64)
