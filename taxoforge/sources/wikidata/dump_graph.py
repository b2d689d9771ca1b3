"""From the kept edges and names (QID numbers) to the graph: the last step of the dump route.

Input
    P279 edges, P31 edges of the seeds (``int64`` QID numbers), the seeds, the root, and a
    way to fetch the names of a set of nodes — from :func:`.dump.read_dump`'s pass over the
    file, or from the tables of the Spark job (:func:`graph_from_tables`).

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph` in its normal form, and in its
    ``dropped`` table every edge read but not kept, with a reason (YAGO 4.5's practice [8]
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
    Every set operation is an integer sort (:func:`taxoforge.trees.graph_kernels.radix_argsort`):
    each node's rank in the string order of its id ``wd:Q…`` comes from an integer key (the
    digits left-aligned, then their number: ``Q10`` before ``Q2``), so the edge table is one
    sort of ``(child rank, parent rank, relation)`` and the names one sort of ``(node rank,
    kind)`` with the few ties (several aliases or languages of a node) sorted by name. The
    closure of the seeds is a breadth-first search over the compressed sparse graph
    (``scipy.sparse.csgraph``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from taxoforge.sources.ranked import report_frame
from taxoforge.sources.wikidata.extract import ROOT_QID
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import qid_number, validate_qid, validate_qids
from taxoforge.sources.wikidata.ntriples import MAX_QID_DIGITS
from taxoforge.trees.graph_kernels import compiled, sort_codes, sort_inplace, stable_argsort
from taxoforge.trees.tables import REPORT_SCHEMA

__all__ = ["DroppedEdges", "assemble", "graph_from_tables", "select_edges", "seed_numbers", "NodeIndex"]

KINDS = ("label", "alias")
EDGE_COLS = {"child": pl.String, "parent": pl.String, "relation": pl.String}
NAME_COLS = {"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}
_DETAIL = {
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


def _sorted_unique(x: np.ndarray) -> np.ndarray:
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


@compiled
def _runs(s):
    """Distinct values of the sorted ``s`` and how often each occurs."""
    n = s.shape[0]
    vals = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    w = 0
    for i in range(n):
        if w and s[i] == vals[w - 1]:
            counts[w - 1] += 1
        else:
            vals[w] = s[i]
            counts[w] = 1
            w += 1
    return vals[:w], counts[:w]


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
    ids = _sorted_unique(np.concatenate([child, parent, starts]))
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


def node_ids(q: np.ndarray) -> pl.Series:
    """Node ids of QID numbers.

    Parameters
    ----------
    q : numpy.ndarray
        QID numbers.

    Returns
    -------
    polars.Series
        ``wd:Q<n>`` strings.
    """
    return pl.select((pl.lit("wd:Q") + pl.Series(q, dtype=pl.Int64).cast(pl.String)).alias("id")).to_series()


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
        dropped.add("root_superclass", node_ids(c279[at_root]), node_ids(p279[at_root]), _DETAIL["root_superclass"])
        c279, p279 = c279[~at_root], p279[~at_root]
    if seed_nums is not None:
        with_class = NodeIndex(_sorted_unique(c31))
        classless = seed_nums[with_class.positions(seed_nums) < 0]
        starts = _sorted_unique(np.concatenate([p31, classless]))
        reach = _closure(c279, p279, starts) if len(starts) else np.empty(0, np.int64)
        keep = NodeIndex(reach).positions(c279) >= 0
        dropped.count("not_above_a_seed", int((~keep).sum()))
        c279, p279 = c279[keep], p279[keep]
        counts["seeds_without_class"] = int(len(classless))
    return c279, p279, c31, p31


# ---------------------------------------------------------------- the tables
@compiled
def _lex_keys(q, longest):
    """Keys ordering QID numbers as their ids ``wd:Q<n>`` order as strings: the digits
    left-aligned to ``longest`` digits, times ``longest + 1``, plus the number of digits."""
    pow10 = np.ones(longest + 1, dtype=np.int64)
    for k in range(1, longest + 1):
        pow10[k] = pow10[k - 1] * 10
    out = np.empty(q.shape[0], dtype=np.int64)
    for i in range(q.shape[0]):
        d = 1
        while d < longest and q[i] >= pow10[d]:
            d += 1
        out[i] = q[i] * pow10[longest - d] * (longest + 1) + d
    return out


@compiled
def _edge_keys(codes, m279, m31, n):
    """``(child rank · n + parent rank) · 2 + relation`` of every edge, from the ranks of the
    ends laid out as ``c279, p279, c31, p31``."""
    out = np.empty(m279 + m31, dtype=np.int64)
    for i in range(m279):
        out[i] = (codes[i] * n + codes[m279 + i]) * 2
    for i in range(m31):
        out[m279 + i] = (codes[2 * m279 + i] * n + codes[2 * m279 + m31 + i]) * 2 + 1
    return out


@compiled
def _edge_parts(keys, n):
    """Child rank, parent rank and relation (0 P279, 1 P31) of each edge key."""
    m = keys.shape[0]
    child = np.empty(m, dtype=np.int64)
    parent = np.empty(m, dtype=np.int64)
    relation = np.empty(m, dtype=np.int8)
    for i in range(m):
        k = keys[i]
        relation[i] = k & 1
        k >>= 1
        child[i] = k // n
        parent[i] = k - child[i] * n
    return child, parent, relation


def assemble(edges: dict[str, np.ndarray], seed_nums: np.ndarray | None,
             names_of: Callable[[NodeIndex], pl.DataFrame] | None, langs: tuple[str, ...], seed_node_ids: list[str],
             info: dict, dropped: DroppedEdges) -> WikidataGraph:
    """The graph's tables, sorted and without repeats (module docstring).

    Parameters
    ----------
    edges : dict
        ``c279, p279, c31, p31`` (QID numbers), taken out as they are used, so their memory
        goes early.
    seed_nums : numpy.ndarray, optional
        The seeds (nodes of the graph even without edges).
    names_of : callable, optional
        ``names_of(index)``: the names of the nodes in ``index`` (a :class:`NodeIndex`) as a
        table ``q``, ``kind`` (0 label, 1 alias), ``lang`` (index in ``langs``), ``name``;
        ``None`` for no names.
    langs : tuple of str
        The languages of the names.
    seed_node_ids : list of str
        The seeds' node ids.
    info : dict
        Provenance; gets ``dropped_edges`` (counts by reason).
    dropped : DroppedEdges
        The edges dropped so far; repeated statements are added.

    Returns
    -------
    WikidataGraph
        With its ``dropped`` table.
    """
    parts = [edges.pop(k) for k in ("c279", "p279", "c31", "p31")]
    sizes = [len(p) for p in parts]
    ends = np.concatenate(parts + ([seed_nums] if seed_nums is not None else []))
    del parts
    top = int(ends.max()) if len(ends) else 0
    if top >= 10**17:  # a QID of 18 digits: WikidataGraph sorts the strings
        return _assemble_strings(ends, sizes, seed_nums, names_of, langs, seed_node_ids, info, dropped)
    codes, first = sort_codes(_lex_keys(ends, max(1, len(str(top)))))  # the keys are sorted in place
    nodes = ends[first]  # QID numbers in the string order of their ids
    n = max(1, len(nodes))
    ids = node_ids(nodes)
    del ends, first

    def edge_table() -> pl.DataFrame:
        keys, times = _runs(sort_inplace(_edge_keys(codes, sizes[0], sizes[2], n)))  # "P279" sorts before "P31"
        again = times > 1
        if again.any():
            dropped.add("repeated_statement", ids.gather(keys[again] // (2 * n)), ids.gather(keys[again] // 2 % n),
                        _DETAIL["repeated_statement"])
            dropped.count("repeated_statement", int((times[again] - 2).sum()))
        child, parent, relation = _edge_parts(keys, n)
        del keys
        return pl.DataFrame({"child": ids.gather(child), "parent": ids.gather(parent),
                             "relation": pl.Series(["P279", "P31"]).gather(relation)})

    def name_table() -> pl.DataFrame:
        if names_of is None:
            return pl.DataFrame(schema=NAME_COLS)
        num_order = stable_argsort(nodes)
        index = NodeIndex(nodes[num_order], rank=num_order)
        del num_order
        names = names_of(index)
        rank = index.positions(names["q"].to_numpy())
        del index
        kind, lang, text = names["kind"].to_numpy(), names["lang"].to_numpy(), names["name"]
        del names  # every intermediate goes as soon as it is used: the names are the largest table
        by_string = sorted(langs)
        k0 = rank * 2 + (1 - kind.astype(np.int64))  # alias before label
        del rank, kind
        lang_pos = np.array([by_string.index(t) for t in langs], dtype=np.int8)[lang]
        del lang
        order, keep = _name_order(k0, text, lang_pos)
        k_sorted = k0[order]
        del k0
        text = text.gather(order)
        lang_pos = lang_pos[order]
        del order
        table = pl.DataFrame({"node_id": ids.gather(k_sorted // 2), "name": text,
                              "kind": pl.Series(["alias", "label"]).gather(k_sorted % 2),
                              "lang": pl.Series(by_string, dtype=pl.String).gather(lang_pos)})
        return table if keep.all() else table.filter(pl.Series(keep))

    # the two tables are independent: built side by side (the sorts release the GIL)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="taxoforge-names") as pool:
        names_future = pool.submit(name_table)
        edge_df = edge_table()
        names_df = names_future.result()
    info["dropped_edges"] = dict(sorted(dropped.counts.items()))
    graph = WikidataGraph.from_normalised(edges=edge_df, names=names_df, seed_node_ids=seed_node_ids, info=info)
    graph.dropped = dropped.table()
    return graph


def _name_order(k0: np.ndarray, name: pl.Series, lang: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row order sorted by ``(k0, name, lang)`` and the mask (in that order) of rows that are not
    repeats: one radix sort of ``k0``; only runs of equal ``k0`` (several aliases or languages
    of a node) are sorted by name and language, and only they can hold repeats."""
    order = stable_argsort(np.ascontiguousarray(k0, dtype=np.int64))
    k_sorted = k0[order]
    keep = np.ones(len(order), dtype=bool)
    if len(order) < 2:
        return order, keep
    same = k_sorted[1:] == k_sorted[:-1]
    tie = np.zeros(len(order), dtype=bool)
    tie[1:] |= same
    tie[:-1] |= same
    at = np.flatnonzero(tie)
    if len(at):  # runs of equal k0 are contiguous: sort each by (name, lang), put back in place
        sub = pl.DataFrame({"k0": k_sorted[at], "name": name.gather(order[at]), "l": lang[order[at]],
                            "i": order[at]}).sort("k0", "name", "l")
        order[at] = sub["i"].to_numpy()
        repeat = sub.select(pl.all_horizontal([pl.col(c).eq_missing(pl.col(c).shift(1)) for c in ("k0", "name", "l")])
                            .fill_null(False)).to_series().to_numpy()
        keep[at[repeat]] = False
    return order, keep


def _assemble_strings(ends, sizes, seed_nums, names_of, langs, seed_node_ids, info, dropped) -> WikidataGraph:
    """:func:`assemble` for QIDs of 18 digits: tables of strings, sorted by WikidataGraph."""
    nodes = _sorted_unique(ends)
    a, b, c = sizes[0], 2 * sizes[0], 2 * sizes[0] + sizes[2]
    c279, p279, c31, p31 = ends[:a], ends[a:b], ends[b:c], ends[c:c + sizes[3]]
    edge_df = pl.DataFrame({"child": node_ids(np.concatenate([c31, c279])),
                            "parent": node_ids(np.concatenate([p31, p279])),
                            "relation": ["P31"] * len(c31) + ["P279"] * len(c279)}, schema=EDGE_COLS)
    names = names_of(NodeIndex(nodes)) if names_of is not None else None
    names_df = pl.DataFrame(schema=NAME_COLS) if names is None else names.select(
        node_ids(names["q"].to_numpy()).alias("node_id"), "name",
        pl.col("kind").replace_strict([0, 1], list(KINDS), return_dtype=pl.String),
        pl.col("lang").replace_strict(list(range(len(langs))), list(langs), return_dtype=pl.String))
    info["dropped_edges"] = dict(sorted(dropped.counts.items()))
    graph = WikidataGraph(edges=edge_df, names=names_df, seed_node_ids=seed_node_ids, info=info)
    graph.dropped = dropped.table()
    return graph


# ---------------------------------------------------------------- from the Spark job's tables
def _qid_number(column: str) -> pl.Expr:
    return pl.col(column).str.strip_prefix("wd:Q").cast(pl.Int64)


def graph_from_tables(edges: pl.DataFrame, names: pl.DataFrame, *, seed_qids: Iterable[str] | None = None,
                      root: str = ROOT_QID, info: dict | None = None,
                      non_items: pl.DataFrame | None = None) -> WikidataGraph:
    """The graph :func:`.dump.read_dump` gives, from the tables of the same filter run elsewhere.

    Parameters
    ----------
    edges : polars.DataFrame
        ``child``, ``parent``, ``relation``: every P279 edge between items and the P31 edges
        of the seeds (the Spark job of :mod:`.dump_spark` writes them).
    names : polars.DataFrame
        ``node_id``, ``name``, ``kind``, ``lang``: labels and aliases in the wanted languages
        of at least the graph's nodes and the seeds.
    seed_qids : iterable of str, optional
        The seeds (their closure is taken, as by the reader).
    root : str
        The root class, whose own superclasses are not followed.
    info : dict, optional
        Provenance to keep in the graph's ``info``.
    non_items : polars.DataFrame, optional
        ``child_id``, ``parent_id``, ``detail``: the edges to or from non-items the job saw
        (its ``dropped`` table), reported as ``non_item_edge``.

    Returns
    -------
    WikidataGraph
        Drops the root's out-edges, takes the seeds' closure and restricts the names exactly
        as the reader does; the same ``dropped`` table.
    """
    root_num = qid_number(validate_qid(root, where="root"))
    seed_qids, seed_nums = seed_numbers(seed_qids)
    dropped = DroppedEdges()
    if non_items is not None and non_items.height:
        dropped.add("non_item_edge", non_items["child_id"], non_items["parent_id"], non_items["detail"])
    e = edges.select(_qid_number("child").alias("c"), _qid_number("parent").alias("p"), "relation")
    e279 = e.filter(pl.col("relation") == "P279")
    e31 = e.filter(pl.col("relation") == "P31")
    if seed_nums is not None:
        e31 = e31.filter(pl.col("c").is_in(pl.Series(seed_nums)))
    else:
        e31 = e31.clear()
    counts = {"p279_edges_read": e279.height, "p31_edges_read": e31.height}
    c279, p279, c31, p31 = select_edges(e279["c"].to_numpy(), e279["p"].to_numpy(), e31["c"].to_numpy(),
                                        e31["p"].to_numpy(), seed_nums, root_num, counts, dropped)
    langs = tuple(sorted(names["lang"].unique().to_list())) or ("en",)

    def names_of(index: NodeIndex) -> pl.DataFrame:
        t = names.select(_qid_number("node_id").alias("q"),
                         pl.col("kind").replace_strict(list(KINDS), [0, 1], return_dtype=pl.Int8),
                         pl.col("lang").replace_strict(list(langs), list(range(len(langs))), return_dtype=pl.Int8),
                         "name")
        return t.filter(pl.Series(index.positions(t["q"].to_numpy()) >= 0))

    graph = assemble({"c279": c279, "p279": p279, "c31": c31, "p31": p31}, seed_nums, names_of, langs,
                     [f"wd:{q}" for q in seed_qids] if seed_qids is not None else [], dict(info or {}), dropped)
    graph.info.update(counts, root=f"wd:Q{root_num}", seeds=len(seed_qids) if seed_qids is not None else None,
                      edges=graph.edges.height, names=graph.names.height)
    return graph
