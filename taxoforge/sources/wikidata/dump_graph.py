"""Which of the kept edges (QID numbers) make the graph, and why the others do not: the step
before the tables (:mod:`.dump_tables`) on the dump route.

Input
    P279 edges, P31 edges of the seeds (``int64`` QID numbers), the seeds, the root — from
    :func:`.dump.read_dump`'s pass over the file, or from the tables of the Spark job
    (:func:`.dump_tables.graph_from_tables`).

Output
    The edges of the graph (:func:`select_edges`), and every edge read but not kept, with a
    reason, for the graph's ``dropped`` table (:class:`DroppedEdges`; YAGO 4.5's practice [8]
    in docs/references.md; the tree builder's report does the same for what it removes):

    * ``non_item_edge`` — a P279 (or a seed's P31) edge to or from something that is not an
      item: a blank node ("unknown value"), a lexeme, a property;
    * ``root_superclass`` — an edge from the root class (``Q35120``) up: the root is not
      expanded, as on the SPARQL route;
    * ``repeated_statement`` — the same edge stated again (kept once);
    * with seeds, the P279 edges on no path up from a seed's class are not part of the
      extraction (the SPARQL route never sees them): counted as ``not_above_a_seed`` in
      ``info["dropped_edges"]``, not listed.

    ``info["dropped_edges"]`` counts every reason.

Algorithm
    The closure of the seeds is a breadth-first search over the compressed sparse graph
    (``scipy.sparse.csgraph``); QID numbers are looked up in a dense table or by binary search
    (:class:`NodeIndex`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl
import pyarrow as pa
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from taxoforge.sources.ranked import report_frame
from taxoforge.sources.wikidata.ids import qid_number, validate_qids
from taxoforge.sources.wikidata.ntriples import MAX_QID_DIGITS
from taxoforge.trees.graph_kernels import compiled, sort_inplace
from taxoforge.trees.threads import run, split, threads_for
from taxoforge.trees.tables import REPORT_SCHEMA

__all__ = ["DroppedEdges", "select_edges", "seed_numbers", "NodeIndex", "node_ids", "sorted_unique", "KINDS",
           "EDGE_COLS", "NAME_COLS", "DETAIL"]

KINDS = ("label", "alias")
EDGE_COLS = {"child": pl.String, "parent": pl.String, "relation": pl.String}
NAME_COLS = {"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}
DETAIL = {
    "root_superclass": "a superclass of the root class: the root is not expanded upward",
    "repeated_statement": "the same edge stated again in the dump: kept once",
}


# ---------------------------------------------------------------- dropped edges
class DroppedEdges:
    """Edges read but not kept, by reason (module docstring): report rows and counts."""

    def __init__(self) -> None:
        self.frames: list[pl.DataFrame] = []
        self.counts: dict[str, int] = {}

    def add(self, kind: str, child: pl.Series | list, parent: pl.Series | list, detail: str | pl.Series) -> None:
        """Report dropped edges of one kind, one row each, and count them.

        Parameters
        ----------
        kind : str
            One of :data:`taxoforge.trees.tables.REPORT_KINDS`.
        child, parent : polars.Series or list
            The edges ``child → parent``: node ids, or terms as written (``_:b0``, ``wd:L5``).
        detail : str or polars.Series
            Why, one for all rows or one per row.
        """
        if not len(child):
            return
        frame = report_frame(kind, child, parent, detail)  # refuses a kind outside REPORT_KINDS
        self.frames.append(frame.select("kind", "child_id", "parent_id", "detail"))
        self.count(kind, frame.height)

    def count(self, kind: str, n: int) -> None:
        """Count dropped edges without listing them.

        Parameters
        ----------
        kind : str
            The reason.
        n : int
            How many.
        """
        if n:
            self.counts[kind] = self.counts.get(kind, 0) + int(n)

    def table(self) -> pl.DataFrame:
        """The rows reported so far.

        Returns
        -------
        polars.DataFrame
            ``kind``, ``child_id``, ``parent_id``, ``detail``, sorted by kind, child, parent.
        """
        cols = {c: REPORT_SCHEMA[c] for c in ("kind", "child_id", "parent_id", "detail")}
        if not self.frames:
            return pl.DataFrame(schema=cols)
        return pl.concat([f.select(list(cols)) for f in self.frames]).sort("kind", "child_id", "parent_id",
                                                                            maintain_order=True)


# ---------------------------------------------------------------- QID numbers
def seed_numbers(seed_qids: Iterable[str] | None) -> tuple[list[str] | None, np.ndarray | None]:
    """The seeds as validated QIDs and as QID numbers.

    Parameters
    ----------
    seed_qids : iterable of str, optional
        QIDs such as ``Q146``.

    Returns
    -------
    qids : list of str or None
        The validated QIDs (``None`` without seeds).
    numbers : numpy.ndarray or None
        Their numbers, ``int64``.

    Raises
    ------
    ValueError
        For a string that is not a QID, or one of more than 18 digits.
    """
    if seed_qids is None:
        return None, None
    seed_qids = validate_qids(seed_qids, where="seed_qids")
    for q in seed_qids:
        if len(q) - 1 > MAX_QID_DIGITS:
            raise ValueError(f"seed_qids: {q[:40]}… has more than {MAX_QID_DIGITS} digits; QIDs are read as 64-bit "
                             "integers (Wikidata's have at most 9 digits)")
    return seed_qids, np.array([qid_number(q) for q in seed_qids], dtype=np.int64)


def sorted_unique(x: np.ndarray) -> np.ndarray:
    """The distinct values of ``x``, ascending.

    Parameters
    ----------
    x : numpy.ndarray
        Non-negative integers.

    Returns
    -------
    numpy.ndarray
        ``int64``.
    """
    return _dedupe(sort_inplace(np.array(x, dtype=np.int64)))


@compiled
def _dedupe(s):
    n = s.shape[0]
    out = np.empty(n, dtype=np.int64)
    w = 0
    for i in range(n):
        if w == 0 or s[i] != out[w - 1]:
            out[w] = s[i]
            w += 1
    return out[:w]


class NodeIndex:
    """Positions of QID numbers in a sorted array of distinct ones, ``-1`` where absent.

    A dense table when the numbers are dense enough (one ``int32`` per number up to the
    largest), else binary search.

    Parameters
    ----------
    ids : numpy.ndarray
        Distinct QID numbers, ascending.
    rank : numpy.ndarray, optional
        Reported instead of the position: ``rank[position]`` (e.g. the rank of a node in the
        string order of the ids).
    """

    def __init__(self, ids: np.ndarray, rank: np.ndarray | None = None) -> None:
        self.ids = ids
        self.rank = rank
        top = int(ids[-1]) + 1 if len(ids) else 0
        self.table = None
        if top and top <= max(1 << 26, 16 * len(ids)):
            self.table = np.full(top, -1, dtype=np.int32 if len(ids) < 2**31 else np.int64)
            self.table[ids] = (np.arange(len(ids)) if rank is None else rank).astype(self.table.dtype)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """Look numbers up.

        Parameters
        ----------
        q : numpy.ndarray
            QID numbers.

        Returns
        -------
        numpy.ndarray
            The position (or rank) of each, ``-1`` where it is not an id of the index.
        """
        if not len(self.ids):
            return np.full(len(q), -1, dtype=np.int64)
        if self.table is not None:
            if not len(q) or (int(q.min()) >= 0 and int(q.max()) < len(self.table)):
                return self.table[q].astype(np.int64, copy=False)
            inside = (q >= 0) & (q < len(self.table))
            out = np.full(len(q), -1, dtype=np.int64)
            out[inside] = self.table[q[inside]]
            return out
        pos = np.searchsorted(self.ids, q)
        pos[pos == len(self.ids)] = 0
        found = self.ids[pos] == q
        if self.rank is not None:
            pos = self.rank[pos]
        return np.where(found, pos, -1)


def _closure(child: np.ndarray, parent: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """QID numbers reachable upward from ``starts`` over child→parent edges (starts included)."""
    ids = sorted_unique(np.concatenate([child, parent, starts]))
    index = NodeIndex(ids)
    n = len(ids)
    c, p, s = index.positions(child), index.positions(parent), index.positions(starts)
    # one virtual source (index n) pointing at every start
    rows = np.concatenate([c, np.full(len(s), n)])
    cols = np.concatenate([p, s])
    g = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    order = breadth_first_order(g, n, directed=True, return_predecessors=False)
    order = order[order < n]
    return ids[np.sort(order)]


@compiled
def _id_lengths(q, lo, hi, lens):
    for i in range(lo, hi):
        x = q[i]
        d = 1
        while x >= 10:
            x //= 10
            d += 1
        lens[i] = d + 4  # "wd:Q" and the digits


@compiled
def _write_ids(q, offsets, data, lo, hi):
    for i in range(lo, hi):
        s = offsets[i]
        data[s] = 119  # w
        data[s + 1] = 100  # d
        data[s + 2] = 58  # :
        data[s + 3] = 81  # Q
        x = q[i]
        for k in range(offsets[i + 1] - 1, s + 3, -1):
            data[k] = 48 + x % 10
            x //= 10


def node_ids(q: np.ndarray, threads: int | None = None) -> pl.Series:
    """Node ids of QID numbers, written straight into an Arrow string array (in ranges of the
    numbers on :func:`taxoforge.trees.threads.threads_for` threads).

    Parameters
    ----------
    q : numpy.ndarray
        Non-negative QID numbers.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    polars.Series
        ``wd:Q<n>`` strings, named ``id``.

    Examples
    --------
    >>> node_ids(np.array([5, 120])).to_list()
    ['wd:Q5', 'wd:Q120']
    """
    q = np.ascontiguousarray(q, dtype=np.int64)
    n = len(q)
    ranges = split(n, threads_for(n, threads))
    offsets = np.zeros(n + 1, dtype=np.int64)
    run(_id_lengths, [(q, lo, hi, offsets[1:]) for lo, hi in ranges])
    np.cumsum(offsets, out=offsets)
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    run(_write_ids, [(q, offsets, data, lo, hi) for lo, hi in ranges])
    strings = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    return pl.Series("id", strings, dtype=pl.String)


def select_edges(c279: np.ndarray, p279: np.ndarray, c31: np.ndarray, p31: np.ndarray, seed_nums: np.ndarray | None,
                 root_num: int, counts: dict, dropped: DroppedEdges):
    """The graph's P279 and P31 edges: the root's out-edges dropped; with seeds, the closure.

    Parameters
    ----------
    c279, p279 : numpy.ndarray
        P279 edges (child, parent QID numbers) read.
    c31, p31 : numpy.ndarray
        P31 edges of the seeds read.
    seed_nums : numpy.ndarray, optional
        The seeds; without them the whole subclass-of graph is kept.
    root_num : int
        The root class, whose own superclasses are dropped.
    counts : dict
        Gets ``seeds_without_class``.
    dropped : DroppedEdges
        Gets the dropped edges.

    Returns
    -------
    tuple of numpy.ndarray
        ``c279, p279, c31, p31`` kept.
    """
    at_root = c279 == root_num
    if at_root.any():
        dropped.add("root_superclass", node_ids(c279[at_root]), node_ids(p279[at_root]), DETAIL["root_superclass"])
        c279, p279 = c279[~at_root], p279[~at_root]
    if seed_nums is not None:
        with_class = NodeIndex(sorted_unique(c31))
        classless = seed_nums[with_class.positions(seed_nums) < 0]
        starts = sorted_unique(np.concatenate([p31, classless]))
        reach = _closure(c279, p279, starts) if len(starts) else np.empty(0, np.int64)
        keep = NodeIndex(reach).positions(c279) >= 0
        dropped.count("not_above_a_seed", int((~keep).sum()))
        c279, p279 = c279[keep], p279[keep]
        counts["seeds_without_class"] = int(len(classless))
    return c279, p279, c31, p31
