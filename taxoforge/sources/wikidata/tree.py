"""From a :class:`~taxoforge.sources.wikidata.graph.WikidataGraph` to the four tree tables.

Input
    The graph (P31 and P279 edges, names), an exclusion list, a tie seed, a cycle policy.

Output
    :class:`~taxoforge.trees.tables.TreeTables`: ``nodes`` (``label`` is the English label,
    the QID when there is none), ``names`` (``label``/``alias``), ``report`` (every edge the
    tree builder removed or chose between, plus ``unplaced_seed`` rows for seeds with no class
    and no superclass, and the edges a dump reader dropped, :attr:`WikidataGraph.dropped`),
    ``info`` (the graph's provenance and the builder's counts).

Algorithm
    1. Seeds with no edge at all are reported (``unplaced_seed``) and left out.
    2. :func:`taxoforge.trees.build.build_tree` on the P31 and P279 edges together: exclusion
       list, cycle removal, longest root path, seeded ties. Several roots get the synthetic
       root ``wd:root``.
    3. Labels, leaf flags and names of the nodes kept
       (:meth:`taxoforge.trees.tables.TreeTables.from_build`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import polars as pl

from taxoforge.sources.ranked import report_frame
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import TreeTables

__all__ = ["build_wikidata_tree", "SOURCE"]

SOURCE = "wd"


def build_wikidata_tree(
    graph: WikidataGraph,
    *,
    exclude: Mapping[str, str] | Iterable[str] = (),
    tie_seed: int = 0,
    cycle_policy: str = "dfs_back_edges",
    name: str = "wikidata",
) -> TreeTables:
    """Build the tree of ``graph`` (module docstring). ``exclude`` holds node ids (``wd:Q…``),
    e.g. :func:`~taxoforge.sources.wikidata.exclusions.exclusion_node_ids`.

    Parameters
    ----------
    graph : WikidataGraph
        The Wikidata graph.
    exclude : Mapping[str, str] or Iterable[str], optional
        Node ids (``wd:Q…``) removed with their edges first, e.g.
        :func:`~taxoforge.sources.wikidata.exclusions.exclusion_node_ids`.
    tie_seed : int, optional
        The seed of the tie draws.
    cycle_policy : str, optional
        How cycles are broken (:data:`taxoforge.trees.build.CYCLE_POLICIES`).
    name : str, optional
        The name.

    Returns
    -------
    TreeTables
        The tree, with names, report and provenance.
    """
    if graph.edges.height == 0:
        raise ValueError("the Wikidata graph has no edges: no seed has a class or superclass")
    excl = dict(exclude) if isinstance(exclude, Mapping) else {e: "" for e in exclude}
    in_edges = pl.concat([graph.edges["child"], graph.edges["parent"]]).unique().implode()
    seeds = pl.Series("node_id", graph.seed_node_ids, dtype=pl.String)
    unplaced = seeds.filter(~seeds.is_in(in_edges)).to_list()
    excl_ids = pl.Series(list(excl), dtype=pl.String)
    excluded_in_graph = sorted(excl_ids.filter(excl_ids.is_in(in_edges)).to_list())

    tb = build_tree(graph.edges.select("child", "parent"), source=SOURCE, tie_seed=tie_seed,
                    cycle_policy=cycle_policy, exclude=sorted(excl))
    gi = graph.info
    if gi.get("method") == "sparql":
        version = {k: gi.get(k) for k in ("method", "endpoint", "query_time_first", "query_time_last", "lang")}
    else:
        version = {k: gi.get(k) for k in ("method", "file", "file_bytes", "file_mtime", "lang")}
    kept = tb.nodes.select("node_id")
    info = {
        "source_versions": {"wikidata": version},
        "seed": tie_seed,
        "cycle_policy": cycle_policy,
        "wikidata": {
            **gi,
            "exclusion_list_size": len(excl),
            "excluded_in_graph": excluded_in_graph,
            "unplaced_seeds": len(unplaced),
            "seeds_in_tree": int(seeds.is_in(kept["node_id"].implode()).sum()),
        },
    }
    unplaced_report = report_frame("unplaced_seed", unplaced, None,
                                   "seed has no instance-of class and no superclass")
    report = pl.concat([unplaced_report, graph.dropped], how="diagonal_relaxed")  # the dump's dropped edges
    return TreeTables.from_build(name, tb, graph.names, report=report, info=info)
