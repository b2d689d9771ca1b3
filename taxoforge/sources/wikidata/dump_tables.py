"""The graph's tables from the kept edges and names (QID numbers): the last step of the dump route.

Input
    The graph's P279 and P31 edges (``int64`` QID numbers, :func:`.dump_graph.select_edges`),
    the seeds, and a way to fetch the names of a set of nodes — from :func:`.dump.read_dump`'s
    pass over the file, or from the tables of the Spark job (:func:`graph_from_tables`).

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph` in its normal form (edges sorted
    by child, parent, relation; names by node, name, kind, language; no repeats), with its
    ``dropped`` table (:class:`.dump_graph.DroppedEdges`; repeated statements added here).

Algorithm: three stages, one after the other, each on every core
    Every set operation is an integer sort on several threads
    (:mod:`taxoforge.trees.parallel_sort`: numpy's vectorised sort, one part per thread), and
    every pass over the edges or names runs in ranges on as many threads
    (:func:`taxoforge.trees.threads.threads_for`: none for less than a grain of rows).

    1. Nodes (:func:`node_codes`): each edge end gets an integer key that orders the ids
       ``wd:Q…`` as strings order (the digits left-aligned, then their number: ``Q10`` before
       ``Q2``); one sort of ``key << b | position`` gives every end its node's rank in id
       order, and the nodes; their ids are written once.
    2. Edges (:func:`edge_table`): one sort of ``(child rank · n + parent rank) · 2 +
       relation``; a run of equal keys is a statement repeated in the dump (kept once,
       reported); the ids gathered by polars, the columns side by side.
    3. Names (:func:`name_table`): one sort of ``(node rank, kind)``; the few ties (several
       aliases or languages of a node) sorted by name and language with polars.

    The tables are the same for any thread count. QIDs of 18 digits (beyond the keys' 63 bits)
    take a route of string tables that :class:`WikidataGraph` sorts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import polars as pl

from taxoforge.sources.wikidata.dump_graph import DETAIL, KINDS, EDGE_COLS, NAME_COLS, DroppedEdges, NodeIndex, \
    node_ids, seed_numbers, select_edges, sorted_unique
from taxoforge.sources.wikidata.extract import ROOT_QID
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import qid_number, validate_qid
from taxoforge.trees import parallel_sort
from taxoforge.trees.graph_kernels import compiled
from taxoforge.trees.threads import run, split, threads_for

__all__ = ["assemble", "node_codes", "edge_table", "name_table", "graph_from_tables"]


# ---------------------------------------------------------------- kernels (over ranges of rows)
@compiled
def _lex_keys(q, longest, out, lo, hi):
    """Keys ordering QID numbers as their ids ``wd:Q<n>`` order as strings: the digits
    left-aligned to ``longest`` digits, times ``longest + 1``, plus the number of digits."""
    pow10 = np.ones(longest + 1, dtype=np.int64)
    for k in range(1, longest + 1):
        pow10[k] = pow10[k - 1] * 10
    for i in range(lo, hi):
        d = 1
        while d < longest and q[i] >= pow10[d]:
            d += 1
        out[i] = q[i] * pow10[longest - d] * (longest + 1) + d


@compiled
def _edge_keys(codes, m279, m31, n, out, lo, hi):
    """``(child rank · n + parent rank) · 2 + relation`` of edges ``lo`` to ``hi`` (the P279 edges
    first, then the P31 edges), from the ranks of the ends laid out as ``c279, p279, c31, p31``."""
    for i in range(lo, hi):
        if i < m279:
            out[i] = (codes[i] * n + codes[m279 + i]) * 2
        else:
            j = i - m279
            out[i] = (codes[2 * m279 + j] * n + codes[2 * m279 + m31 + j]) * 2 + 1


@compiled
def _edge_parts(keys, starts, n, child, parent, relation, lo, hi):
    """Child rank, parent rank and relation (0 P279, 1 P31) of the distinct edge keys
    ``keys[starts[lo:hi]]``."""
    for j in range(lo, hi):
        k = keys[starts[j]]
        relation[j] = k & 1
        k >>= 1
        child[j] = k // n
        parent[j] = k - child[j] * n


def _in_ranges(kernel, n: int, threads: int | None, *args) -> None:
    """``kernel(*args, lo, hi)`` over ``range(n)`` cut into one range per thread."""
    run(kernel, [(*args, lo, hi) for lo, hi in split(n, threads_for(n, threads))])


# ---------------------------------------------------------------- the stages
def node_codes(ends: np.ndarray, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every edge end's node rank in the string order of the ids, and the nodes (stage 1).

    Parameters
    ----------
    ends : numpy.ndarray
        QID numbers (below ``10**17``), ``int64``.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    codes : numpy.ndarray
        The rank of each end's node.
    nodes : numpy.ndarray
        The distinct QID numbers in the string order of their ids ``wd:Q…``.
    """
    top = int(ends.max()) if len(ends) else 0
    keys = np.empty(len(ends), dtype=np.int64)
    _in_ranges(_lex_keys, len(ends), threads, ends, max(1, len(str(top))), keys)
    codes, first = parallel_sort.sort_codes(keys, threads)  # the keys are sorted in place
    return codes, ends[first]


def edge_table(codes: np.ndarray, sizes: list[int], ids: pl.Series, dropped: DroppedEdges,
               threads: int | None = None) -> pl.DataFrame:
    """The edge table, sorted, each statement once; repeats reported to ``dropped`` (stage 2).

    Parameters
    ----------
    codes : numpy.ndarray
        The node ranks of the ends, laid out as ``c279, p279, c31, p31``.
    sizes : list of int
        The lengths of those four parts.
    ids : polars.Series
        The node ids, by rank.
    dropped : DroppedEdges
        Gets the repeated statements.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    polars.DataFrame
        ``child``, ``parent``, ``relation``.
    """
    n = max(1, len(ids))
    m = sizes[0] + sizes[2]
    keys = np.empty(m, dtype=np.int64)
    _in_ranges(_edge_keys, m, threads, codes, sizes[0], sizes[2], n, keys)
    parallel_sort.sort_inplace(keys, threads)  # "P279" sorts before "P31": relation 0 before 1
    starts = parallel_sort.run_starts(keys, threads)
    times = np.diff(starts, append=m)
    again = np.flatnonzero(times > 1)
    if len(again):
        k = keys[starts[again]]
        dropped.add("repeated_statement", ids.gather(k // (2 * n)), ids.gather(k // 2 % n), DETAIL["repeated_statement"])
        dropped.count("repeated_statement", int((times[again] - 2).sum()))
    child = np.empty(len(starts), dtype=np.int64)
    parent = np.empty(len(starts), dtype=np.int64)
    relation = np.empty(len(starts), dtype=np.int8)
    _in_ranges(_edge_parts, len(starts), threads, keys, starts, n, child, parent, relation)
    del keys, starts
    rows = pl.DataFrame({"c": child, "p": parent, "r": relation})
    return rows.select(pl.lit(ids).gather(pl.col("c")).alias("child"), pl.lit(ids).gather(pl.col("p")).alias("parent"),
                       pl.lit(pl.Series(["P279", "P31"])).gather(pl.col("r")).alias("relation"))  # columns side by side


def name_table(names_of: Callable[[NodeIndex], pl.DataFrame], nodes: np.ndarray, ids: pl.Series,
               langs: tuple[str, ...], threads: int | None = None) -> pl.DataFrame:
    """The name table of the nodes, sorted, without repeats (stage 3).

    Parameters
    ----------
    names_of : callable
        ``names_of(index)``: the names of the nodes in ``index`` (a :class:`NodeIndex`) as a
        table ``q``, ``kind`` (0 label, 1 alias), ``lang`` (index in ``langs``), ``name``.
    nodes : numpy.ndarray
        The QID numbers of the nodes, by rank.
    ids : polars.Series
        Their ids, by rank.
    langs : tuple of str
        The languages of the names.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    polars.DataFrame
        ``node_id``, ``name``, ``kind``, ``lang``.
    """
    num_order = parallel_sort.stable_argsort(nodes, threads)
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
    order, keep = _name_order(k0, text, lang_pos, threads)
    rows = pl.DataFrame({"k": k0[order], "o": order, "l": lang_pos[order]})
    del k0, order, lang_pos
    table = rows.select(pl.lit(ids).gather(pl.col("k") // 2).alias("node_id"), pl.lit(text).gather(pl.col("o")).alias("name"),
                        pl.lit(pl.Series(["alias", "label"])).gather(pl.col("k") % 2).alias("kind"),
                        pl.lit(pl.Series(by_string, dtype=pl.String)).gather(pl.col("l")).alias("lang"))
    return table if keep.all() else table.filter(pl.Series(keep))


def _name_order(k0: np.ndarray, name: pl.Series, lang: np.ndarray, threads: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Row order sorted by ``(k0, name, lang)`` and the mask (in that order) of rows that are not
    repeats: one sort of ``k0``; only runs of equal ``k0`` (several aliases or languages of a
    node) are sorted by name and language, and only they can hold repeats."""
    order = parallel_sort.stable_argsort(np.ascontiguousarray(k0, dtype=np.int64), threads)
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


def assemble(edges: dict[str, np.ndarray], seed_nums: np.ndarray | None,
             names_of: Callable[[NodeIndex], pl.DataFrame] | None, langs: tuple[str, ...], seed_node_ids: list[str],
             info: dict, dropped: DroppedEdges, threads: int | None = None) -> WikidataGraph:
    """The graph's tables, sorted and without repeats (module docstring).

    Parameters
    ----------
    edges : dict
        ``c279, p279, c31, p31`` (QID numbers), taken out as they are used, so their memory
        goes early.
    seed_nums : numpy.ndarray, optional
        The seeds (nodes of the graph even without edges).
    names_of : callable, optional
        ``names_of(index)``: the names of the nodes in ``index`` (:func:`name_table`);
        ``None`` for no names.
    langs : tuple of str
        The languages of the names.
    seed_node_ids : list of str
        The seeds' node ids.
    info : dict
        Provenance; gets ``dropped_edges`` (counts by reason).
    dropped : DroppedEdges
        The edges dropped so far; repeated statements are added.
    threads : int, optional
        The most threads a stage uses (default: every core).

    Returns
    -------
    WikidataGraph
        With its ``dropped`` table.
    """
    parts = [edges.pop(k) for k in ("c279", "p279", "c31", "p31")]
    sizes = [len(p) for p in parts]
    ends = np.concatenate(parts + ([seed_nums] if seed_nums is not None else []))
    del parts
    if len(ends) and int(ends.max()) >= 10**17:  # a QID of 18 digits: WikidataGraph sorts the strings
        return _assemble_strings(ends, sizes, seed_nums, names_of, langs, seed_node_ids, info, dropped)
    codes, nodes = node_codes(ends, threads)
    del ends
    ids = node_ids(nodes, threads)
    edge_df = edge_table(codes, sizes, ids, dropped, threads)
    del codes
    names_df = pl.DataFrame(schema=NAME_COLS) if names_of is None else name_table(names_of, nodes, ids, langs, threads)
    info["dropped_edges"] = dict(sorted(dropped.counts.items()))
    graph = WikidataGraph.from_normalised(edges=edge_df, names=names_df, seed_node_ids=seed_node_ids, info=info)
    graph.dropped = dropped.table()
    return graph


def _assemble_strings(ends, sizes, seed_nums, names_of, langs, seed_node_ids, info, dropped) -> WikidataGraph:
    """:func:`assemble` for QIDs of 18 digits: tables of strings, sorted by WikidataGraph."""
    nodes = sorted_unique(ends)
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
